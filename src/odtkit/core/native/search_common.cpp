#include "search_common.hpp"

#include <limits>
#include <stdexcept>

namespace odtkit {
namespace {

class TreeEvaluator {
 public:
  TreeEvaluator(const Problem& p, const std::vector<int>& code, double Lambda, double min_leaf)
      : P_(p), code_(code), Lambda_(Lambda), min_leaf_(min_leaf),
        cw_(static_cast<std::size_t>(p.n_classes())) {}

  // Value of the subtree starting at pos_ on support s, `depth` splits still allowed.
  double subtree(const std::uint64_t* s, int depth) {
    if (pos_ >= code_.size()) throw std::invalid_argument("initial_tree is truncated");
    const int v = code_[pos_++];
    if (v < 0) {
      const int label = -v - 1;
      if (label >= P_.n_classes())
        throw std::invalid_argument("initial_tree has a leaf label out of range");
      P_.class_weights(s, cw_.data());
      double n = 0.0;
      for (double x : cw_) n += x;
      if (min_leaf_ > 0.0 && P_.support(s, cw_.data()) < min_leaf_) infeasible_ = true;
      return n - cw_[static_cast<std::size_t>(label)] + Lambda_;
    }
    if (static_cast<std::size_t>(v) >= P_.n_features())
      throw std::invalid_argument("initial_tree has a feature out of range");
    if (depth == 0) throw std::invalid_argument("initial_tree is deeper than max_depth");
    const std::size_t W = P_.n_words();
    std::vector<std::uint64_t> s0(W), s1(W);
    const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(v));
    words::and_not_into(s0.data(), s, x, W);
    words::and_into(s1.data(), s, x, W);
    const int child = depth < 0 ? depth : depth - 1;
    const double left = subtree(s0.data(), child);
    return left + subtree(s1.data(), child);
  }
  bool consumed() const { return pos_ == code_.size(); }
  bool infeasible() const { return infeasible_; }

 private:
  const Problem& P_;
  const std::vector<int>& code_;
  double Lambda_, min_leaf_;
  bool infeasible_ = false;
  std::size_t pos_ = 0;
  std::vector<double> cw_;
};

}  // namespace

double evaluate_tree(const Problem& problem, const std::vector<int>& code, double Lambda,
                     int max_depth, double min_leaf) {
  TreeEvaluator eval(problem, code, Lambda, min_leaf);
  const double value = eval.subtree(problem.all_points().data(), max_depth < 0 ? -1 : max_depth);
  if (!eval.consumed()) throw std::invalid_argument("initial_tree has trailing entries");
  return eval.infeasible() ? std::numeric_limits<double>::infinity() : value;
}

}  // namespace odtkit

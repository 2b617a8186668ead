#include "greedy.hpp"

namespace odtkit {
namespace {

class Greedy {
 public:
  Greedy(const Problem& p, double lam)
      : P_(p), K_(p.n_classes()), M_(static_cast<int>(p.n_features())), W_(p.n_words()),
        Lambda_(lam * p.total_weight()) {}

  // Appends the subtree on support s to out; returns its value in count units.
  double grow(const std::uint64_t* s, int depth, std::vector<int>& out) {
    std::vector<double> cw(K_), c1(K_), c0(K_);
    P_.class_weights(s, cw.data());
    const double n = sum(cw);
    const double leaf = misclassified(cw.data(), K_) + Lambda_;
    const int label = majority_class(cw.data(), K_);
    // Stop where no subtree can pay for its extra leaves: any subtree gains at most
    // mis - eq <= Lambda (spec §2.5). Without this an unlimited-depth greedy grows to purity
    // (~0.16 s on coupon-carryout at lam = 0.1) only to be pruned back.
    const double gain_cap = misclassified(cw.data(), K_) - P_.minority(s);
    if (depth == 0 || misclassified(cw.data(), K_) <= 1e-9 * n || gain_cap <= Lambda_ + 1e-9) {
      out.push_back(-(label + 1));
      return leaf;
    }
    const double parent = gini(cw.data(), n);
    int best = -1;
    double best_gain = -1.0;
    for (int j = 0; j < M_; ++j) {
      const double n1 = P_.split_class_weights(s, P_.feature_words(static_cast<std::size_t>(j)),
                                               cw.data(), c1.data(), c0.data());
      const double n0 = n - n1;
      if (n1 <= 0.0 || n0 <= 1e-12 * n) continue;
      const double gain = parent - (n0 * gini(c0.data(), n0) + n1 * gini(c1.data(), n1)) / n;
      if (gain > best_gain + 1e-15) {
        best_gain = gain;
        best = j;
      }
    }
    if (best < 0) {
      out.push_back(-(label + 1));
      return leaf;
    }
    std::vector<std::uint64_t> s0(W_), s1(W_);
    const std::uint64_t* xb = P_.feature_words(static_cast<std::size_t>(best));
    words::and_not_into(s0.data(), s, xb, W_);
    words::and_into(s1.data(), s, xb, W_);
    const std::size_t mark = out.size();
    out.push_back(best);
    const int child = depth < 0 ? depth : depth - 1;
    const double v = grow(s0.data(), child, out) + grow(s1.data(), child, out);
    if (v < leaf - 1e-9) return v;
    out.resize(mark);  // bottom-up pruning with the exact objective
    out.push_back(-(label + 1));
    return leaf;
  }

 private:
  static double sum(const std::vector<double>& v) {
    double t = 0.0;
    for (double x : v) t += x;
    return t;
  }
  double gini(const double* c, double n) const {
    if (n <= 0.0) return 0.0;
    double g = 1.0;
    for (int k = 0; k < K_; ++k) g -= (c[k] / n) * (c[k] / n);
    return g;
  }

  const Problem& P_;
  int K_, M_;
  std::size_t W_;
  double Lambda_;
};

}  // namespace

std::vector<int> greedy_tree(const Problem& problem, double lam, int max_depth, double* value) {
  std::vector<int> out;
  Greedy g(problem, lam);
  const double v = g.grow(problem.all_points().data(), max_depth, out);
  if (value) *value = v;
  return out;
}

}  // namespace odtkit

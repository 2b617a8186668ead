#include "greedy.hpp"

#include "search_types.hpp"

namespace odtkit {
namespace {

// Sum in numpy's order (pairwise_sum of an 8-way unrolled block, as numpy's add.reduce does over
// a contiguous axis). odtkit.greedy.greedy_tree is this function, and before it was the numpy
// implementation that bnb started from: summing the Gini terms in the same order keeps the
// float results, hence the near-tie decisions between features, bit for bit the same.
double numpy_sum(const double* a, std::size_t n) {
  if (n < 8) {
    double res = 0.0;
    for (std::size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    std::size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return numpy_sum(a, n2) + numpy_sum(a + n2, n - n2);
}

class Greedy {
 public:
  Greedy(const Problem& p, double lam, Budget* budget)
      : budget_(budget),
        P_(p), K_(p.n_classes()), M_(static_cast<int>(p.n_features())), W_(p.n_words()),
        Lambda_(lam * p.total_weight()), tau_(count_tolerance(p.total_weight())),
        squares_(static_cast<std::size_t>(K_)) {}

  // Appends the subtree on support s to out; returns its value in count units.
  double grow(const std::uint64_t* s, int depth, std::vector<int>& out) {
    std::vector<double> cw(K_), c1(K_), c0(K_);
    P_.class_weights(s, cw.data());
    const double n = numpy_sum(cw.data(), cw.size());
    const double mis = misclassified(cw.data(), K_);
    const double leaf = mis + Lambda_;
    const int label = majority_class(cw.data(), K_);
    // Stop where no subtree can pay for its extra leaves: any subtree gains at most
    // mis - eq <= Lambda (docs/formulations-search-and-pruning.md §2.5), so growing it would
    // only be pruned back below. Without this an unlimited-depth greedy grows to purity
    // (~0.16 s on coupon-carryout at lam = 0.1).
    if (depth == 0 || mis <= 0.0 || mis - P_.minority(s) <= Lambda_ + tau_ ||
        (budget_ && budget_->check_clock())) {
      out.push_back(-(label + 1));
      return leaf;
    }
    const double parent = gini(cw.data(), n);
    int best = -1;
    double best_gain = -1.0;
    for (int j = 0; j < M_; ++j) {
      const double n1 = P_.split_class_weights(s, P_.feature_words(static_cast<std::size_t>(j)),
                                               cw.data(), c1.data(), c0.data());
      const double n0 = numpy_sum(c0.data(), c0.size());
      if (!(n1 > 0.0 && n0 > 0.0)) continue;
      const double gain = parent - (n0 * gini(c0.data(), n0) + n1 * gini(c1.data(), n1)) / n;
      if (gain > best_gain) {  // ties -> smallest feature index
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
    if (v < leaf - tau_) return v;
    out.resize(mark);  // bottom-up pruning with the exact objective
    out.push_back(-(label + 1));
    return leaf;
  }

 private:
  // 1 - sum_k (c_k / n)^2, summed like numpy (see numpy_sum)
  double gini(const double* c, double n) {
    if (n <= 0.0) return 0.0;
    for (int k = 0; k < K_; ++k) squares_[k] = (c[k] / n) * (c[k] / n);
    return 1.0 - numpy_sum(squares_.data(), squares_.size());
  }

  Budget* budget_;
  const Problem& P_;
  int K_, M_;
  std::size_t W_;
  double Lambda_, tau_;
  std::vector<double> squares_;
};

}  // namespace

std::vector<int> greedy_tree(const Problem& problem, double lam, int max_depth, double* value,
                             Budget* budget) {
  std::vector<int> out;
  Greedy g(problem, lam, budget);
  const double v = g.grow(problem.all_points().data(), max_depth, out);
  if (value) *value = v;
  return out;
}

}  // namespace odtkit

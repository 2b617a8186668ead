#include "depth2.hpp"

#include <algorithm>

namespace odtkit {

Depth2Solver::Depth2Solver(const Problem& problem)
    : problem_(problem),
      M_(static_cast<int>(problem.n_features())),
      K_(problem.n_classes()),
      ones_(problem.n_points()),
      F_(static_cast<std::size_t>(M_) * M_ * K_, 0.0),
      total_(K_, 0.0),
      scratch_(4 * static_cast<std::size_t>(K_), 0.0) {
  for (int j = 0; j < M_; ++j) {
    const Bitset& f = problem.feature(static_cast<std::size_t>(j));
    for (std::size_t u = 0; u < problem.n_points(); ++u)
      if (f.get(u)) ones_[u].push_back(j);
  }
}

std::size_t Depth2Solver::bytes() const {
  std::size_t total = F_.capacity() * sizeof(double);
  for (const auto& v : ones_) total += v.capacity() * sizeof(int) + sizeof(v);
  return total;
}

double Depth2Solver::best_depth1(int i, int side, const double* ci, double Lambda, int* feature) {
  // cells of the branch x_i = side split further on j: a = (x_j = 1), b = (x_j = 0)
  double* a = scratch_.data() + 2 * K_;
  double* b = scratch_.data() + 3 * K_;
  double best = leaf(ci, Lambda);
  *feature = -1;
  for (int j = 0; j < M_; ++j) {
    if (j == i) continue;
    const int lo = std::min(i, j), hi = std::max(i, j);
    for (int k = 0; k < K_; ++k) {
      const double fij = F(k, lo, hi);
      const double fj = F(k, j, j);
      a[k] = side ? fij : fj - fij;  // x_i = side and x_j = 1
      b[k] = ci[k] - a[k];           // x_i = side and x_j = 0
    }
    const double v = leaf(a, Lambda) + leaf(b, Lambda);
    if (v < best - 1e-9) {
      best = v;
      *feature = j;
    }
  }
  return best;
}

Depth2Solver::Result Depth2Solver::solve(const std::uint64_t* s, const double* cw,
                                         double Lambda) {
  std::fill(F_.begin(), F_.end(), 0.0);
  const auto& pcw = problem_.point_class_weight();
  const std::size_t W = problem_.n_words();
  for (std::size_t w = 0; w < W; ++w) {
    std::uint64_t bits = s[w];
    while (bits) {
      const std::size_t u = (w << 6) + static_cast<std::size_t>(__builtin_ctzll(bits));
      bits &= bits - 1;
      const double* c = &pcw[u * K_];
      const auto& on = ones_[u];
      for (std::size_t x = 0; x < on.size(); ++x) {
        double* row = &F_[(static_cast<std::size_t>(on[x]) * M_) * K_];
        for (std::size_t y = x; y < on.size(); ++y) {
          double* cell = row + static_cast<std::size_t>(on[y]) * K_;
          for (int k = 0; k < K_; ++k) cell[k] += c[k];
        }
      }
    }
  }
  Result best{leaf(cw, Lambda), -1, -1, -1};
  double* c1 = scratch_.data();
  double* c0 = scratch_.data() + K_;
  for (int i = 0; i < M_; ++i) {
    double w1 = 0.0, w0 = 0.0;
    for (int k = 0; k < K_; ++k) {
      c1[k] = F(k, i, i);
      c0[k] = cw[k] - c1[k];
      w1 += c1[k];
      w0 += c0[k];
    }
    if (w1 <= 0.0 || w0 <= 0.0) continue;  // an empty side never beats the leaf
    if (2 * Lambda >= best.value - 1e-9) break;  // any split has >= 2 leaves
    int f0 = -1, f1 = -1;
    const double v0 = best_depth1(i, 0, c0, Lambda, &f0);
    if (v0 + Lambda >= best.value - 1e-9) continue;
    const double v1 = best_depth1(i, 1, c1, Lambda, &f1);
    if (v0 + v1 < best.value - 1e-9) best = Result{v0 + v1, i, f0, f1};
  }
  return best;
}

}  // namespace odtkit

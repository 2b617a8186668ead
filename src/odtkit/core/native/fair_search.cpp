// The fair DP's search (fair_dp.cpp): the solver's set-up, the root of each depth of the
// iterative deepening (depth 1, depth 2, and deeper with its two passes over the root splits)
// and the best fair pair of two root children's fronts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "fair_solver.hpp"

namespace odtkit {
namespace fair {

FairSolver::FairSolver(const Problem& P, const Coefficients& C, const FairSpec& spec,
                       const SearchConfig& config, const Switches& sw, Budget& budget)
    : P_(P),
      C_(C),
      budget_(budget),
      sw_(sw),
      K_(P.n_classes()),
      M_(static_cast<int>(P.n_features())),
      m_(C.m()),
      W_(P.n_words()),
      kp_(spec.positive_code),
      delta_(spec.delta + kFeasTol),
      Lambda_(config.lam * P.total_weight()),
      tau_(count_tolerance(P.total_weight())),
      zero_(zero_weight(P.total_weight())),
      S2_(1 + static_cast<std::size_t>(K_) + m_),
      S1_(S2_ + 2 * m_),
      zeros_(m_, 0.0) {
  scratch_key_.words.resize(W_);
  // the root's pair-table cache: a quarter of the memory limit, at most 256 MB
  const double cap = 256.0 * 1048576.0;
  const double memory_limit = budget.memory_limit_bytes();
  table_cache_cap_ =
      static_cast<std::size_t>(memory_limit > 0 ? std::min(cap, memory_limit / 4) : cap);
  // Pass 1 of the root needs the unconstrained depth-2 optimum of every child. The
  // depth-two solver's pair counts cost ~sum_u ones(u)^2 / 2 additions per child (less on
  // similar siblings); a pair table ~M^2/2 * W * (class + coefficient planes) popcount words,
  // but pass 2 reuses it. Measured on the STreeD sets, the solver wins up to about twice the
  // table's count (german-credit), tables win clearly on dense rows (communities: 7x).
  double pairs = 0.0;
  std::vector<int> ones(P.n_points(), 0);
  for (int f = 0; f < M_; ++f) {
    const Bitset& x = P.feature(static_cast<std::size_t>(f));
    for (std::size_t u = 0; u < P.n_points(); ++u) ones[u] += x.get(u);
  }
  for (int o : ones) pairs += 0.5 * o * o;
  const double table = 0.5 * M_ * M_ * static_cast<double>(W_) *
                       (static_cast<double>(P.n_class_planes()) + C.word_cost());
  // the depth-two solver's tables are allocated up front: as in the dp, at most half the limit
  pass1_depth2_ = pairs <= 2.0 * table &&
                  (!(memory_limit > 0) ||
                   static_cast<double>(Depth2Solver::upfront_bytes(P)) <= 0.5 * memory_limit);
  integral_costs_ = P.integral() && Lambda_ == std::floor(Lambda_) && Lambda_ < 1e12 &&
                    P.total_weight() < 1e12;
  if (pass1_depth2_) depth2_ = std::make_unique<Depth2Solver>(P);
}

double FairSolver::best_combo(const Front& A, const Front& B, double ub, std::size_t* ia,
                              std::size_t* ib) {
  double best = ub - tau_;
  bool found = false;
  if (A.empty() || B.empty()) return kInf;
  if (m_ == 1) {
    const std::size_t n = B.size();
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), 0u);
    std::sort(order_.begin(), order_.end(),
              [&](std::uint32_t a, std::uint32_t b) { return B.d[a] < B.d[b]; });
    sorted_d_.resize(n);
    for (std::size_t i = 0; i < n; ++i) sorted_d_[i] = B.d[order_[i]];
    // sparse table of argmin cost over order_
    std::size_t levels = 1;
    while ((std::size_t{1} << levels) <= n) ++levels;
    sparse_.resize(levels * n);
    for (std::size_t i = 0; i < n; ++i) sparse_[i] = order_[i];
    for (std::size_t l = 1; l < levels; ++l) {
      const std::size_t half = std::size_t{1} << (l - 1);
      for (std::size_t i = 0; i + (std::size_t{1} << l) <= n; ++i) {
        const std::uint32_t x = sparse_[(l - 1) * n + i], y = sparse_[(l - 1) * n + i + half];
        sparse_[l * n + i] = B.cost[y] < B.cost[x] ? y : x;
      }
    }
    combo_bytes_ = (order_.capacity() + sparse_.capacity()) * 4 + sorted_d_.capacity() * 8;
    const double bmin = B.min_cost();
    for (std::size_t a = 0; a < A.size(); ++a) {
      const double ca = A.cost[a];
      if (ca + bmin >= best) break;
      const double lo = -delta_ - A.d[a], hi = delta_ - A.d[a];
      const std::size_t i0 = static_cast<std::size_t>(
          std::lower_bound(sorted_d_.begin(), sorted_d_.end(), lo) - sorted_d_.begin());
      const std::size_t i1 = static_cast<std::size_t>(
          std::upper_bound(sorted_d_.begin(), sorted_d_.end(), hi) - sorted_d_.begin());
      if (i0 >= i1) continue;
      std::size_t l = 0;
      while ((std::size_t{1} << (l + 1)) <= i1 - i0) ++l;
      const std::uint32_t x = sparse_[l * n + i0];
      const std::uint32_t y = sparse_[l * n + i1 - (std::size_t{1} << l)];
      const std::uint32_t k = B.cost[y] < B.cost[x] ? y : x;
      const double c = ca + B.cost[k];
      if (c < best) {
        best = c;
        *ia = a;
        *ib = k;
        found = true;
      }
    }
    return found ? best : kInf;
  }
  std::vector<double> d(m_);
  std::vector<double> win(2 * m_);
  for (std::size_t j = 0; j < m_; ++j) {
    win[j] = -delta_;
    win[m_ + j] = delta_;
  }
  for (std::size_t a = 0; a < A.size(); ++a) {
    const double ca = A.cost[a];
    if (ca + B.min_cost() >= best) break;
    for (std::size_t k = 0; k < B.size(); ++k) {
      const double c = ca + B.cost[k];
      if (c >= best) break;
      for (std::size_t j = 0; j < m_; ++j) d[j] = A.d[a * m_ + j] + B.d[k * m_ + j];
      if (!inside(d.data(), win.data())) continue;
      best = c;
      *ia = a;
      *ib = k;
      found = true;
      break;
    }
  }
  return found ? best : kInf;
}

bool FairSolver::solve_depth1() {
  if (tick()) return false;
  Level& L = level(0);
  if (!build_table(P_.all_points().data(), L.table, false, L.tmp.data())) return false;
  window(L.table.total.data(), true, L.win.data());
  Front F;
  build_f1(L.table, -1, 0, L.win.data(), L, F);
  note_front(F);
  depth_bound = F.empty() ? incumbent : std::min(incumbent, F.min_cost());
  if (!F.empty() && F.min_cost() < target() - tau_) {
    std::vector<int> code;
    emit(P_.all_points().data(), 1, copy_entry(F, 0, m_), code);
    accept(F.min_cost(), std::move(code));
  }
  return true;
}

bool FairSolver::solve_depth2() {
  if (tick()) return false;
  Level& L = level(0);
  PairTable& T = root_t0_;
  if (!build_table(P_.all_points().data(), T, true, L.tmp.data())) return false;
  Front A, B;
  double bound = incumbent;
  for (int f = 0; f < M_; ++f) {
    const double* c1 = T.single_at(f);
    if (c1[0] <= zero_ || T.total[0] - c1[0] <= zero_) continue;
    ++root_splits;
    double* c0 = L.st0.data();
    cell1(T, f, 0, c0);
    window(c0, false, L.win0.data());
    window(c1, false, L.win1.data());
    build_f1(T, f, 0, L.win0.data(), L, A);
    build_f1(T, f, 1, L.win1.data(), L, B);
    note_front(A);
    note_front(B);
    std::size_t ia = 0, ib = 0;
    const double c = best_combo(A, B, target(), &ia, &ib);
    if (c < target() - tau_) {
      std::vector<int> code{f};
      const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(f));
      std::vector<std::uint64_t> s0(W_), s1(W_);
      words::and_not_into(s0.data(), P_.all_points().data(), x, W_);
      words::and_into(s1.data(), P_.all_points().data(), x, W_);
      emit(s0.data(), 1, copy_entry(A, ia, m_), code);
      emit(s1.data(), 1, copy_entry(B, ib, m_), code);
      accept(c, std::move(code));
    }
    if (tick()) return false;
  }
  depth_bound = std::min(bound, incumbent);
  return true;
}

bool FairSolver::solve_deep(int D) {
  const std::uint64_t* all = P_.all_points().data();
  Level& L0 = level(0);
  table_cache_.clear();
  table_cache_.resize(2 * static_cast<std::size_t>(M_));
  table_cache_bytes_ = 0;
  std::vector<std::uint64_t> s0(W_), s1(W_);
  std::vector<RootCand> cands;
  // pass 1: unconstrained bounds of every root split
  for (int f = 0; f < M_; ++f) {
    if (tick()) return false;
    const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(f));
    words::and_not_into(s0.data(), all, x, W_);
    words::and_into(s1.data(), all, x, W_);
    weights_of(s0.data(), L0.st0.data());
    weights_of(s1.data(), L0.st1.data());
    if (L0.st0[0] <= zero_ || L0.st1[0] <= zero_) continue;
    double b;
    if (D - 1 == 2 && pass1_depth2_) {
      // the unconstrained depth-2 optima of both sides (incremental pair counts)
      const Depth2Solver::Result r0 = depth2_->solve(s0.data(), L0.st0.data() + 1, Lambda_,
                                                     &budget_);
      if (!r0.exact) return false;  // the budget stopped it (time, Ctrl-C)
      const Depth2Solver::Result r1 = depth2_->solve(s1.data(), L0.st1.data() + 1, Lambda_,
                                                     &budget_);
      if (!r1.exact) return false;
      b = r0.value + r1.value;
    } else if (D - 1 == 2) {
      // the same from their pair tables, which are kept for pass 2 while they fit in the
      // cache (else rebuilt there)
      Level& L1 = level(1);
      double dsel;
      b = 0.0;
      for (int side = 0; side < 2; ++side) {
        PairTable& T = L1.table;
        if (!build_table(side ? s1.data() : s0.data(), T, true, L1.tmp.data())) return false;
        b += lag2(T, 0.0, &dsel, L1);
        if (table_cache_bytes_ + T.bytes() <= table_cache_cap_) {
          table_cache_bytes_ += T.bytes();
          table_cache_[2 * static_cast<std::size_t>(f) + side] =
              std::make_unique<PairTable>(std::move(T));
        }
      }
    } else {
      b = lower_bound(s0.data(), D - 1, L0.st0.data()) +
          lower_bound(s1.data(), D - 1, L0.st1.data());
      if (stopped()) return false;
    }
    cands.push_back({f, b});
  }
  std::sort(cands.begin(), cands.end(), [](const RootCand& a, const RootCand& b) {
    return a.bound < b.bound || (a.bound == b.bound && a.f < b.f);
  });
  std::vector<LagPoint> pts;
  Front A, B;
  for (std::size_t c = 0; c < cands.size(); ++c) {
    const RootCand cand = cands[c];
    // a valid bound at depth D if we stop now: the incumbent or an unexplored split
    const double next = c + 1 < cands.size() ? cands[c + 1].bound : kInf;
    depth_bound = std::min({incumbent, cand.bound, next});
    if (sw_.budget && cand.bound >= target() - tau_) {
      root_pruned_bound += static_cast<long long>(cands.size() - c);
      depth_bound = incumbent;
      return true;
    }
    if (tick()) return false;
    ++root_splits;
    const int f = cand.f;
    const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(f));
    words::and_not_into(s0.data(), all, x, W_);
    words::and_into(s1.data(), all, x, W_);
    const double ub = target();
    Cuts cuts0, cuts1;
    bool ok;
    if (D - 1 == 2) {
      Level& L1 = level(1);
      for (int side = 0; side < 2; ++side) {
        const auto& cached = table_cache_[2 * static_cast<std::size_t>(f) + side];
        PairTable& own = side ? root_t1_ : root_t0_;
        if (cached) {
          (side ? rt1_ : rt0_) = cached.get();
        } else {
          if (!build_table(side ? s1.data() : s0.data(), own, true, L1.tmp.data())) return false;
          (side ? rt1_ : rt0_) = &own;
        }
      }
      double bound;
      if (m_ == 1 && sw_.lagrangian && sw_.budget) {
        const bool pruned = lagrangian(ub, pts, &bound, L1);
        if (stopped()) return false;
        if (settle_root_split(pruned, bound, next, ub, pts, cands[c], cuts0)) continue;
      } else {
        double dsel;
        const double l1 = lag2(*rt1_, 0.0, &dsel, L1);
        cuts0.T[0] = sw_.budget ? ub - l1 : kInf;
      }
      ok = build_f2(*rt0_, cuts0, false, L1, A);
    } else if (D - 1 == 3 && m_ == 1 && sw_.lagrangian && sw_.budget &&
               deep_bytes() <= static_cast<double>(table_cache_cap_)) {
      deep_bytes_ = 0;
      const bool ready = prepare_deep(s0.data(), s1.data(), f);
      deep_mode_ = true;
      double bound;
      const bool pruned = ready && lagrangian(ub, pts, &bound, level(1));
      deep_mode_ = false;
      if (!ready || stopped()) return false;
      if (settle_root_split(pruned, bound, next, ub, pts, cands[c], cuts0)) continue;
      if (!build_deep_front(0, cuts0, A)) return false;
      if (A.empty()) continue;
      // (this branch runs with the budget switch on only)
      cuts1 = sibling_cuts(A, cuts0, ub);
      if (!build_deep_front(1, cuts1, B)) return false;
      std::size_t ia = 0, ib = 0;
      const double v = best_combo(A, B, target(), &ia, &ib);
      if (v < target() - tau_) {
        std::vector<int> code{f};
        emit_deep(0, copy_entry(A, ia, m_), code);
        emit_deep(1, copy_entry(B, ib, m_), code);
        accept(v, std::move(code));
      }
      continue;
    } else {
      weights_of(s1.data(), L0.st1.data());
      cuts0.T[0] = sw_.budget ? ub - lower_bound(s1.data(), D - 1, L0.st1.data()) : kInf;
      if (stopped()) return false;
      ok = build_generic(s0.data(), D - 1, cuts0, false, 1, A);
    }
    if (!ok) return false;
    if (A.empty()) continue;
    cuts1 = sibling_cuts(A, cuts0, ub);
    if (D - 1 == 2) {
      ok = build_f2(*rt1_, cuts1, false, level(1), B);
    } else {
      ok = build_generic(s1.data(), D - 1, cuts1, false, 1, B);
    }
    if (!ok) return false;
    std::size_t ia = 0, ib = 0;
    const double v = best_combo(A, B, target(), &ia, &ib);
    if (v < target() - tau_) {
      std::vector<int> code{f};
      emit(s0.data(), D - 1, copy_entry(A, ia, m_), code);
      emit(s1.data(), D - 1, copy_entry(B, ib, m_), code);
      accept(v, std::move(code));
    }
  }
  depth_bound = incumbent;
  return true;
}

}  // namespace fair
}  // namespace odtkit

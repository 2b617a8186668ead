// The fair DP's bounds (fair_dp.cpp): lower bounds of a sibling (memoised fronts, the
// unconstrained depth-2/3 optima), the Lagrangian values and cuts of a root split (one
// constrained pair), and the deep root children (remaining depth 3) they also serve.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "fair_solver.hpp"

namespace odtkit {
namespace fair {

double FairSolver::lower_bound(const std::uint64_t* s, int k, const double* st) {
  auto it = memo_.find(key(s, k));
  if (it != memo_.end()) {
    const Front& F = *it->second.front;
    return F.empty() ? it->second.budget - tau_ : F.min_cost();
  }
  if (k == 2 || k == 3) return unconstrained(s, k, st);
  const double leaf = std::min(neg_mis(st), pos_mis(st)) + Lambda_;
  if (k == 0) return leaf;
  return std::min(leaf, P_.minority(s) + 2 * Lambda_);
}

double FairSolver::unconstrained(const std::uint64_t* s, int k, const double* st) {
  auto it = opt_cache_.find(key(s, k));
  if (it != opt_cache_.end()) return it->second;
  double value;
  if (k == 2 && pass1_depth2_) {
    const Depth2Solver::Result r = depth2_->solve(s, st + 1, Lambda_, &budget_);
    // stopped part-way (time, Ctrl-C): the cheap bound below, not cached
    if (!r.exact)
      return std::min(std::min(neg_mis(st), pos_mis(st)) + Lambda_,
                      P_.minority(s) + 2 * Lambda_);
    value = r.value;
  } else if (k == 2) {
    // dense rows: a pair table is cheaper than the depth-two solver's pair counts
    if (!bound_level_) bound_level_ = new_level();  // callers' scratch stays untouched
    Level& L = *bound_level_;
    double dsel;
    if (!build_table(s, bound_table_, true, L.tmp.data(), true))
      return std::min(std::min(neg_mis(st), pos_mis(st)) + Lambda_,
                      P_.minority(s) + 2 * Lambda_);
    value = lag2(bound_table_, 0.0, &dsel, L);
  } else {
    value = std::min(neg_mis(st), pos_mis(st)) + Lambda_;
    std::vector<std::uint64_t> s0(W_), s1(W_);
    std::vector<double> st0(S1_), st1(S1_);
    for (int f = 0; f < M_ && value > 2 * Lambda_; ++f) {
      poll();
      if (stopped()) return std::min(value, P_.minority(s) + 2 * Lambda_);  // not cached
      const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(f));
      words::and_not_into(s0.data(), s, x, W_);
      words::and_into(s1.data(), s, x, W_);
      weights_of(s0.data(), st0.data());
      weights_of(s1.data(), st1.data());
      if (st0[0] <= zero_ || st1[0] <= zero_) continue;
      value = std::min(value, unconstrained(s0.data(), 2, st0.data()) +
                                  unconstrained(s1.data(), 2, st1.data()));
    }
  }
  opt_cache_.emplace(key(s, k), value);
  opt_cache_bytes_ += W_ * sizeof(std::uint64_t) + sizeof(MemoKey) + 48;
  return value;
}

double FairSolver::lag_depth1(const PairTable& T, int f, int a, double mu, double* dsel,
                              Level& L) const {
  if (K_ == 2 && m_ == 1) return lag_depth1_binary(T, f, a, mu, dsel);
  double* c = L.st.data();
  cell1(T, f, a, c);
  double best = lag_leaf(c, mu, dsel);
  double* s1 = L.sub.data();
  double* s0 = L.st1.data();
  for (int g = 0; g < M_; ++g) {
    if (!split_cell(T, f, a, g, c, s0, s1)) continue;
    double d0, d1;
    const double v = lag_leaf(s0, mu, &d0) + lag_leaf(s1, mu, &d1);
    if (v < best) {
      best = v;
      *dsel = d0 + d1;
    }
  }
  return best;
}

double FairSolver::lag_depth1_binary(const PairTable& T, int f, int a, double mu,
                                     double* dsel) const {
  const int p = 1 + kp_;  // offset of the positive class weight in a cell's statistics
  double cw, cp, cd;      // the cell's weight, positive weight and disparity
  const double* t = T.total.data();
  const double* sf = f < 0 ? t : T.single_at(f);
  if (f < 0 || a == 1) {
    cw = sf[0], cp = sf[p], cd = sf[3];
  } else {
    cw = t[0] - sf[0], cp = t[p] - sf[p], cd = t[3] - sf[3];
  }
  const double cq = cw - cp;
  auto leaf = [&](double pos_w, double other_w, double d, double* dd) {
    const double pos = other_w + mu * d, neg = pos_w;
    if (pos < neg) {
      *dd = d;
      return pos;
    }
    *dd = 0.0;
    return neg;
  };
  double best = leaf(cp, cq, cd, dsel) + Lambda_;
  for (int g = 0; g < M_; ++g) {
    if (g == f) continue;
    double w1, p1, d1;  // cell & x_g
    if (f < 0) {
      const double* x = T.single_at(g);
      w1 = x[0], p1 = x[p], d1 = x[3];
    } else {
      const double* x = T.pair_at(f, g);
      if (a == 1) {
        w1 = x[0], p1 = x[p], d1 = x[3];
      } else {
        const double* y = T.single_at(g);
        w1 = y[0] - x[0], p1 = y[p] - x[p], d1 = y[3] - x[3];
      }
    }
    const double w0 = cw - w1;
    if (w1 <= zero_ || w0 <= zero_) continue;
    const double p0 = cp - p1, d0 = cd - d1;
    double e0, e1;
    const double v = leaf(p0, w0 - p0, d0, &e0) + leaf(p1, w1 - p1, d1, &e1) + 2 * Lambda_;
    if (v < best) {
      best = v;
      *dsel = e0 + e1;
    }
  }
  return best;
}

double FairSolver::lag2(const PairTable& T, double mu, double* dsel, Level& L) {
  ++lagrangian_evals;
  double best = lag_depth1(T, -1, 0, mu, dsel, L);
  for (int f = 0; f < M_; ++f) {
    const double w1 = T.single_at(f)[0];
    if (w1 <= zero_ || T.total[0] - w1 <= zero_) continue;
    double d0, d1;
    const double v = lag_depth1(T, f, 0, mu, &d0, L) + lag_depth1(T, f, 1, mu, &d1, L);
    if (v < best) {
      best = v;
      *dsel = d0 + d1;
    }
  }
  return best;
}

Cuts FairSolver::best_cuts(std::vector<LagPoint>& pts, double ub) const {
  std::sort(pts.begin() + 1, pts.end(), [&](const LagPoint& a, const LagPoint& b) {
    return a.phi(delta_) > b.phi(delta_);
  });
  Cuts cuts;
  cuts.n = 0;
  for (std::size_t i = 0; i < pts.size() && cuts.n < kMaxCuts; ++i) {
    cuts.mu[cuts.n] = pts[i].mu;
    cuts.T[cuts.n] = ub - pts[i].L1 + std::abs(pts[i].mu) * delta_;
    ++cuts.n;
  }
  return cuts;
}

FairSolver::LagPoint FairSolver::lag_eval(double mu, Level& L) {
  poll();
  LagPoint p{mu, 0.0, 0.0, 0.0};
  double d0, d1;
  p.L0 = lag_child(0, mu, &d0, L);
  p.L1 = lag_child(1, mu, &d1, L);
  p.d = d0 + d1;
  return p;
}

double FairSolver::lag_child(int side, double mu, double* dsel, Level& L) {
  if (!deep_mode_) return lag2(side ? *rt1_ : *rt0_, mu, dsel, L);
  const DeepChild& C = deep_[side];
  double best = lag_leaf(C.stat.data(), mu, dsel);
  for (const DeepSplit& sp : C.splits) {
    double d0, d1;
    const double v = lag2(*sp.t0, mu, &d0, L) + lag2(*sp.t1, mu, &d1, L);
    if (v < best) {
      best = v;
      *dsel = d0 + d1;
    }
  }
  return best;
}

bool FairSolver::prepare_deep(const std::uint64_t* s0, const std::uint64_t* s1, int f) {
  Level& L = level(2);
  for (int side = 0; side < 2; ++side) {
    DeepChild& C = deep_[side];
    const std::uint64_t* s = side ? s1 : s0;
    C.words.assign(s, s + W_);
    C.stat.resize(S1_);
    stat1(s, C.stat.data());
    C.splits.clear();
    std::vector<std::uint64_t> c0(W_), c1(W_);
    for (int g = 0; g < M_; ++g) {
      if (g == f) continue;
      const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(g));
      words::and_not_into(c0.data(), s, x, W_);
      words::and_into(c1.data(), s, x, W_);
      weights_of(c0.data(), L.st0.data());
      weights_of(c1.data(), L.st1.data());
      if (L.st0[0] <= zero_ || L.st1[0] <= zero_) continue;
      DeepSplit sp;
      sp.g = g;
      sp.t0 = std::make_unique<PairTable>();
      sp.t1 = std::make_unique<PairTable>();
      if (!build_table(c0.data(), *sp.t0, true, L.tmp.data()) ||
          !build_table(c1.data(), *sp.t1, true, L.tmp.data()))
        return false;
      deep_bytes_ += sp.t0->bytes() + sp.t1->bytes();
      C.splits.push_back(std::move(sp));
    }
  }
  return true;
}

bool FairSolver::build_deep_front(int side, const Cuts& cuts, Front& out) {
  DeepChild& C = deep_[side];
  Level& L = level(1);
  Level& L2 = level(2);
  const double* st = C.stat.data();
  window(st, false, L.win.data());
  FrontBuilder& b = *L.builder;
  b.clear();
  if (K_ > 1 && cuts_ok(cuts, neg_mis(st) + Lambda_, zeros_.data()))
    b.add(neg_mis(st) + Lambda_, 1, leaf_info(false), zeros_.data(), nullptr);
  if (inside(dis(st), L.win.data()) && cuts_ok(cuts, pos_mis(st) + Lambda_, dis(st)))
    b.add(pos_mis(st) + Lambda_, 1, leaf_info(true), dis(st), nullptr);
  for (DeepSplit& sp : C.splits) {
    if (tick()) return false;
    // entries of the x_g = 0 child, given the cheapest possible x_g = 1 partner per cut
    Cuts ca, cb;
    ca.n = cb.n = cuts.n;
    for (int i = 0; i < cuts.n; ++i) {
      double dsel;
      ca.mu[i] = cb.mu[i] = cuts.mu[i];
      ca.T[i] = cuts.T[i] - lag2(*sp.t1, cuts.mu[i], &dsel, L2);
    }
    if (ca.T[0] <= tau_) continue;
    sp.a = std::make_unique<Front>();
    if (!build_f2(*sp.t0, ca, false, L2, *sp.a)) return false;
    if (sp.a->empty()) continue;
    for (int i = 0; i < cuts.n; ++i) cb.T[i] = cuts.T[i] - min_lagrangian(*sp.a, cuts.mu[i]);
    sp.b = std::make_unique<Front>();
    if (!build_f2(*sp.t1, cb, false, L2, *sp.b)) return false;
    deep_bytes_ += sp.a->bytes() + sp.b->bytes();
    merge(*sp.a, *sp.b, L.win.data(), cuts, kSplit, sp.g, b, L);
    if (stopped()) return false;
  }
  b.finish(out);
  note_front(out);
  return true;
}

void FairSolver::emit_deep(int side, const EntryCopy& e, std::vector<int>& out) {
  const DeepChild& C = deep_[side];
  if (kind_of(e.info) != kSplit) {
    emit(C.words.data(), 3, e, out);
    return;
  }
  const int g = static_cast<int>(e.info & 0xffffu);
  const DeepSplit* sp = nullptr;
  for (const DeepSplit& x : C.splits)
    if (x.g == g) sp = &x;
  if (!sp || !sp->a || !sp->b)
    throw std::logic_error("fair dp: a deep split lost its children (a bug)");
  std::vector<double> dr(m_);
  for (std::size_t j = 0; j < m_; ++j) dr[j] = e.d[j] - e.dl[j];
  const EntryCopy a = find_in(*sp->a, e.dl.data());
  const EntryCopy b = find_in(*sp->b, dr.data());
  if (std::abs(a.cost + b.cost - e.cost) > 16 * tau_)
    throw std::logic_error("fair dp: the children of a split do not add up (a bug)");
  std::vector<std::uint64_t> s0(W_), s1(W_);
  const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(g));
  words::and_not_into(s0.data(), C.words.data(), x, W_);
  words::and_into(s1.data(), C.words.data(), x, W_);
  out.push_back(g);
  emit(s0.data(), 2, a, out);
  emit(s1.data(), 2, b, out);
}

bool FairSolver::lagrangian(double ub, std::vector<LagPoint>& pts, double* bound, Level& L) {
  pts.clear();
  const LagPoint p0 = lag_eval(0.0, L);
  pts.push_back(p0);
  *bound = p0.phi(delta_);
  if (*bound >= ub - tau_) return true;
  if (std::abs(p0.d) <= delta_) return false;  // mu = 0 maximises phi
  const double sigma = p0.d > 0 ? 1.0 : -1.0;
  // along nu = sigma * mu >= 0: phi = min_T c_T + nu * s_T with s_T = sigma d_T - delta'
  auto slope = [&](const LagPoint& p) { return sigma * p.d - delta_; };
  auto intercept = [&](const LagPoint& p) { return p.phi(delta_) - std::abs(p.mu) * slope(p); };
  LagPoint lo = p0, hi = p0;
  double nu = (ub - *bound) / slope(p0);
  bool bracketed = false;
  for (int it = 0; it < 60; ++it) {
    const LagPoint p = lag_eval(sigma * nu, L);
    pts.push_back(p);
    *bound = std::max(*bound, p.phi(delta_));
    if (*bound >= ub - tau_) return true;
    if (stopped()) return false;
    if (slope(p) > 0) {
      lo = p;
      nu += (ub - p.phi(delta_)) / slope(p);
      continue;
    }
    hi = p;
    bracketed = true;
    break;
  }
  if (!bracketed) return false;
  for (int it = 0; it < 30; ++it) {
    const double sl = slope(lo), sh = slope(hi);
    if (!(sl - sh > 0)) break;
    const double x = (intercept(hi) - intercept(lo)) / (sl - sh);
    const double top = intercept(lo) + x * sl;
    if (top < *bound + tau_) break;  // the envelope's peak is reached
    const LagPoint p = lag_eval(sigma * x, L);
    pts.push_back(p);
    *bound = std::max(*bound, p.phi(delta_));
    if (*bound >= ub - tau_) return true;
    if (p.phi(delta_) >= top - tau_) break;
    if (slope(p) > 0) {
      lo = p;
    } else {
      hi = p;
    }
    if (stopped()) break;
  }
  return false;
}

}  // namespace fair
}  // namespace odtkit

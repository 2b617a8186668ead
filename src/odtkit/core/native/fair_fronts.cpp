// The fair DP's fronts (fair_dp.cpp): the disparity coefficients per point, the depth <= 1
// and depth-2 fronts of a pair table, the pairwise merge under the window and the cuts, the
// memoised recursion over the root feature, and the rebuilding of a tree from a front entry.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "fair_fronts.hpp"
#include "fair_solver.hpp"

namespace odtkit {
namespace fair {

// The largest alpha among min/k (k = 1..16) of which every coefficient of the given sign in
// column j is a whole multiple (to 1e-11 relative); 1 when the column has no such coefficient,
// 0 when no alpha fits.
double integer_scale(const double* coef, std::size_t n, std::size_t m, std::size_t j,
                     double sign) {
  double lowest = kInf;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = sign * coef[i * m + j];
    if (v > 0) lowest = std::min(lowest, v);
  }
  if (!std::isfinite(lowest)) return 1.0;
  for (int k = 1; k <= 16; ++k) {
    const double alpha = lowest / k;
    bool ok = true;
    for (std::size_t i = 0; i < n && ok; ++i) {
      const double v = sign * coef[i * m + j];
      if (v <= 0) continue;
      const double r = v / alpha;
      ok = r < 1073741824.0 && std::abs(r - std::round(r)) <= 1e-11 * std::max(1.0, r);
    }
    if (ok) return alpha;
  }
  return 0.0;
}

Coefficients::Coefficients(const Problem& P, const double* coef, std::size_t m) : m_(m) {
  const std::size_t U = P.n_points(), n = P.n_samples();
  const auto& sp = P.sample_point();
  const PopcountMode mode = P.popcount_mode();
  point_.assign(U * m, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j)
      point_[static_cast<std::size_t>(sp[i]) * m + j] += coef[i * m + j];
  cols_.resize(m);
  up_total_.assign(m, 0.0);
  down_total_.assign(m, 0.0);
  std::vector<double> a(U), b(U);
  for (std::size_t j = 0; j < m; ++j) {
    Column& c = cols_[j];
    const double alpha = integer_scale(coef, n, m, j, 1.0);
    const double beta = integer_scale(coef, n, m, j, -1.0);
    if (alpha > 0 && beta > 0) {
      std::fill(a.begin(), a.end(), 0.0);
      std::fill(b.begin(), b.end(), 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        const double v = coef[i * m + j];
        const std::size_t u = static_cast<std::size_t>(sp[i]);
        if (v > 0) a[u] += std::round(v / alpha);
        if (v < 0) b[u] += std::round(-v / beta);
      }
      c.pos = PointSum(a, U, mode);
      c.neg = PointSum(b, U, mode);
      c.integral = c.pos.uses_planes() && c.neg.uses_planes();
      c.alpha = alpha;
      c.beta = beta;
    }
    for (std::size_t u = 0; u < U; ++u) a[u] = point_[u * m + j];
    if (!c.integral) c.value = PointSum(a, U, mode);
    for (std::size_t u = 0; u < U; ++u) {
      const double v = point_[u * m + j];
      a[u] = v > 0 ? v : 0.0;
      b[u] = v < 0 ? v : 0.0;
      up_total_[j] += a[u];
      down_total_[j] += b[u];
    }
    c.up = PointSum(a, U, mode);
    c.down = PointSum(b, U, mode);
    integral_columns_ += c.integral ? 1 : 0;
  }
}

EntryCopy copy_entry(const Front& F, std::size_t i, std::size_t m) {
  EntryCopy e;
  e.cost = F.cost[i];
  e.leaves = F.leaves[i];
  e.info = F.info[i];
  e.d.assign(F.d.begin() + static_cast<std::ptrdiff_t>(i * m),
             F.d.begin() + static_cast<std::ptrdiff_t>((i + 1) * m));
  e.dl.assign(F.dl.begin() + static_cast<std::ptrdiff_t>(i * m),
              F.dl.begin() + static_cast<std::ptrdiff_t>((i + 1) * m));
  return e;
}

namespace {
void disparity_rec(const Problem& P, const Coefficients& C, int positive_code,
                   const std::uint64_t* s, const std::vector<int>& code, std::size_t& pos,
                   double* out, std::vector<double>& tmp) {
  const int v = code[pos++];
  if (v < 0) {
    if (-v - 1 == positive_code) {
      C.sum(s, nullptr, tmp.data());
      for (std::size_t j = 0; j < C.m(); ++j) out[j] += tmp[j];
    }
    return;
  }
  const std::size_t W = P.n_words();
  std::vector<std::uint64_t> s0(W), s1(W);
  words::and_not_into(s0.data(), s, P.feature_words(static_cast<std::size_t>(v)), W);
  words::and_into(s1.data(), s, P.feature_words(static_cast<std::size_t>(v)), W);
  disparity_rec(P, C, positive_code, s0.data(), code, pos, out, tmp);
  disparity_rec(P, C, positive_code, s1.data(), code, pos, out, tmp);
}
}  // namespace

void tree_disparity(const Problem& P, const Coefficients& C, int positive_code,
                    const std::vector<int>& code, double* out) {
  std::fill(out, out + C.m(), 0.0);
  std::size_t pos = 0;
  std::vector<double> tmp(C.m());
  disparity_rec(P, C, positive_code, P.all_points().data(), code, pos, out, tmp);
}

bool FairSolver::build_table(const std::uint64_t* s, PairTable& T, bool pairs, std::uint64_t* buf,
                             bool classes_only) {
  T.M = M_;
  T.S1 = S1_;
  T.S2 = S2_;
  T.total.resize(S1_);
  T.single.resize(static_cast<std::size_t>(M_) * S1_);
  if (pairs) T.pair.resize(static_cast<std::size_t>(M_) * M_ * S2_);
  if (classes_only) {
    std::fill(T.total.begin(), T.total.end(), 0.0);
    std::fill(T.single.begin(), T.single.end(), 0.0);
    if (pairs) std::fill(T.pair.begin(), T.pair.end(), 0.0);
  }
  auto fill = [&](const std::uint64_t* x, const std::uint64_t* mask, double* out, bool one) {
    if (!classes_only) {
      if (one) {
        stat1(x, out);
      } else {
        stat2(x, mask, out);
      }
      return;
    }
    class_stat(x, mask, out);
  };
  fill(s, nullptr, T.total.data(), true);
  for (int f = 0; f < M_; ++f) {
    words::and_into(buf, s, P_.feature_words(static_cast<std::size_t>(f)), W_);
    fill(buf, nullptr, &T.single[static_cast<std::size_t>(f) * S1_], true);
    if (!pairs) continue;
    for (int g = f + 1; g < M_; ++g)
      fill(buf, P_.feature_words(static_cast<std::size_t>(g)),
           &T.pair[(static_cast<std::size_t>(f) * M_ + g) * S2_], false);
    if ((f & 15) == 15) {
      poll();
      if (stopped()) return false;
    }
  }
  return true;
}

void FairSolver::build_f1(const PairTable& T, int f, int a, const double* win, Level& L,
                          Front& out) {
  double* c = L.st.data();
  cell1(T, f, a, c);
  FrontBuilder& b = *L.f1builder;
  b.clear();
  const double* dc = dis(c);
  const double negc = neg_mis(c), posc = pos_mis(c);
  if (std::isfinite(negc)) b.add(negc + Lambda_, 1, leaf_info(false), zeros_.data(), nullptr);
  if (inside(dc, win)) b.add(posc + Lambda_, 1, leaf_info(true), dc, nullptr);
  double* s1 = L.sub.data();
  double* s0 = L.st1.data();
  for (int g = 0; g < M_; ++g) {
    if (!split_cell(T, f, a, g, c, s0, s1)) continue;
    const double n0 = neg_mis(s0), p0 = pos_mis(s0), n1 = neg_mis(s1), p1 = pos_mis(s1);
    if (std::isfinite(n0) && inside(dis(s1), win))
      b.add(n0 + p1 + 2 * Lambda_, 2, stump_info(g, false, true), dis(s1), nullptr);
    if (std::isfinite(n1) && inside(dis(s0), win))
      b.add(p0 + n1 + 2 * Lambda_, 2, stump_info(g, true, false), dis(s0), nullptr);
    if (K_ > 2 && n0 + n1 + Lambda_ < negc - tau_)
      b.add(n0 + n1 + 2 * Lambda_, 2, stump_info(g, false, false), zeros_.data(), nullptr);
  }
  b.finish(out);
}

void FairSolver::merge(const Front& A, const Front& B, const double* win, const Cuts& cuts,
                       Kind kind, int f, FrontBuilder& b, Level& L) {
  if (A.empty() || B.empty()) return;
  const double T0 = cuts.T[0];
  if (A.min_cost() + B.min_cost() >= T0 - tau_) return;
  // Lagrangian prefilter: a survives only with the cheapest partner under every cut
  double minB[kMaxCuts], minA[kMaxCuts];
  for (int i = 0; i < cuts.n; ++i) {
    minB[i] = kInf;
    for (std::size_t k = 0; k < B.size(); ++k)
      minB[i] = std::min(minB[i], B.cost[k] + cuts.mu[i] * B.d[k * m_]);
    minA[i] = kInf;
  }
  L.ia.clear();
  for (std::size_t k = 0; k < A.size(); ++k) {
    bool ok = true;
    for (int i = 0; i < cuts.n && ok; ++i)
      ok = A.cost[k] + cuts.mu[i] * A.d[k * m_] + minB[i] < cuts.T[i] - tau_;
    if (!ok) continue;
    L.ia.push_back(static_cast<std::uint32_t>(k));
    for (int i = 0; i < cuts.n; ++i)
      minA[i] = std::min(minA[i], A.cost[k] + cuts.mu[i] * A.d[k * m_]);
  }
  if (L.ia.empty()) return;
  L.ib.clear();
  for (std::size_t k = 0; k < B.size(); ++k) {
    bool ok = true;
    for (int i = 0; i < cuts.n && ok; ++i)
      ok = B.cost[k] + cuts.mu[i] * B.d[k * m_] + minA[i] < cuts.T[i] - tau_;
    if (ok) L.ib.push_back(static_cast<std::uint32_t>(k));
  }
  if (L.ib.empty()) return;
  double* d = L.dd.data();
  const double bmin = B.cost[L.ib[0]];
  for (const std::uint32_t a : L.ia) {
    const double ca = A.cost[a];
    if (ca + bmin >= T0 - tau_) break;
    const double* da = &A.d[a * m_];
    for (const std::uint32_t k : L.ib) {
      const double c = ca + B.cost[k];
      if (c >= T0 - tau_) break;
      const double* db = &B.d[k * m_];
      for (std::size_t j = 0; j < m_; ++j) d[j] = da[j] + db[j];
      if (!inside(d, win) || !cuts_ok(cuts, c, d, 1)) continue;
      const std::uint64_t info =
          kind == kPattern ? pattern_info(f, A.info[a], B.info[k]) : split_info(f);
      b.add(c, A.leaves[a] + B.leaves[k], info, d, kind == kSplit ? da : nullptr);
    }
    combos += static_cast<long long>(L.ib.size());
    // poll by pairs tried, not by rows of A: a row may pair with thousands (a poll every
    // 256 rows let one merge grow its builder by 88 MB unseen). The builder is a level's,
    // which bytes() counts already.
    merge_pairs_ += L.ib.size();
    if (merge_pairs_ >= kPairsPerPoll) {
      merge_pairs_ = 0;
      poll();
      if (stopped()) return;
    }
  }
}

bool FairSolver::build_f2(const PairTable& T, const Cuts& cuts, bool root, Level& L, Front& out) {
  window(T.total.data(), root, L.win.data());
  FrontBuilder& b = *L.builder;
  b.clear();
  build_f1(T, -1, 0, L.win.data(), L, L.fa);
  for (std::size_t i = 0; i < L.fa.size(); ++i)
    if (cuts_ok(cuts, L.fa.cost[i], &L.fa.d[i * m_]))
      b.add(L.fa.cost[i], L.fa.leaves[i], L.fa.info[i], &L.fa.d[i * m_], nullptr);
  for (int f = 0; f < M_; ++f) {
    const double* c1 = T.single_at(f);
    const double w0 = T.total[0] - c1[0];
    if (c1[0] <= zero_ || w0 <= zero_) continue;
    double* c0 = L.st0.data();
    cell1(T, f, 0, c0);
    window(c0, false, L.win0.data());
    window(c1, false, L.win1.data());
    build_f1(T, f, 0, L.win0.data(), L, L.fa);
    build_f1(T, f, 1, L.win1.data(), L, L.fb);
    merge(L.fa, L.fb, L.win.data(), cuts, kPattern, f, b, L);
    if (stopped()) return false;
  }
  b.finish(out);
  note_front(out);
  return true;
}

std::shared_ptr<const Front> FairSolver::front(const std::uint64_t* s, int k, double budget,
                                               std::size_t lvl) {
  if (!sw_.budget) budget = kInf;
  auto it = memo_.find(key(s, k));
  if (it != memo_.end() && it->second.budget >= budget) {
    ++memo_hits;
    return it->second.front;
  }
  if (tick()) return nullptr;
  auto F = std::make_shared<Front>();
  Cuts cuts;
  cuts.T[0] = budget;
  bool ok;
  if (k == 2) {
    Level& L = level(lvl);
    ok = build_table(s, L.table, true, L.tmp.data()) && build_f2(L.table, cuts, false, L, *F);
  } else {
    ok = build_generic(s, k, cuts, false, lvl, *F);
  }
  if (!ok) return nullptr;
  MemoKey& kk = key(s, k);
  auto found = memo_.find(kk);
  if (found == memo_.end()) {
    memo_.emplace(kk, MemoSlot{F, budget});
    memo_bytes_ += W_ * sizeof(std::uint64_t) + sizeof(MemoKey) + sizeof(MemoSlot) + 32;
    ++memo_entries;
  } else {
    memo_bytes_ -= found->second.front->bytes();
    found->second = MemoSlot{F, budget};
  }
  memo_bytes_ += F->bytes();
  return F;
}

bool FairSolver::build_generic(const std::uint64_t* s, int k, const Cuts& cuts, bool root,
                               std::size_t lvl, Front& out) {
  Level& L = level(lvl);
  stat1(s, L.st.data());
  window(L.st.data(), root, L.win.data());
  L.cands.clear();
  for (int f = 0; f < M_; ++f) {
    const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(f));
    words::and_not_into(L.s0.data(), s, x, W_);
    words::and_into(L.s1.data(), s, x, W_);
    weights_of(L.s0.data(), L.st0.data());
    weights_of(L.s1.data(), L.st1.data());
    if (L.st0[0] <= zero_ || L.st1[0] <= zero_) continue;
    const double lb0 = lower_bound(L.s0.data(), k - 1, L.st0.data());
    const double lb1 = lower_bound(L.s1.data(), k - 1, L.st1.data());
    if (stopped()) return false;
    L.cands.push_back({f, lb0, lb1});
  }
  std::sort(L.cands.begin(), L.cands.end(), [](const Level::Cand& a, const Level::Cand& b) {
    return a.lb0 + a.lb1 < b.lb0 + b.lb1 || (a.lb0 + a.lb1 == b.lb0 + b.lb1 && a.f < b.f);
  });
  FrontBuilder& b = *L.builder;
  b.clear();
  const double* st = L.st.data();
  if (K_ > 1 && cuts_ok(cuts, neg_mis(st) + Lambda_, zeros_.data()))
    b.add(neg_mis(st) + Lambda_, 1, leaf_info(false), zeros_.data(), nullptr);
  if (inside(dis(st), L.win.data()) && cuts_ok(cuts, pos_mis(st) + Lambda_, dis(st)))
    b.add(pos_mis(st) + Lambda_, 1, leaf_info(true), dis(st), nullptr);
  const double T0 = cuts.T[0];
  for (std::size_t c = 0; c < L.cands.size(); ++c) {
    const Level::Cand cand = L.cands[c];
    if (sw_.budget && cand.lb0 + cand.lb1 >= T0 - tau_) break;
    const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(cand.f));
    words::and_not_into(L.s0.data(), s, x, W_);
    words::and_into(L.s1.data(), s, x, W_);
    auto A = front(L.s0.data(), k - 1, T0 - cand.lb1, lvl + 1);
    if (!A) return false;
    if (A->empty()) continue;
    auto B = front(L.s1.data(), k - 1, T0 - A->min_cost(), lvl + 1);
    if (!B) return false;
    merge(*A, *B, L.win.data(), cuts, kSplit, cand.f, b, L);
    if (stopped()) return false;
  }
  b.finish(out);
  note_front(out);
  return true;
}

void FairSolver::emit_leaf(const std::uint64_t* s, bool positive, std::vector<int>& out) const {
  if (positive) {
    out.push_back(-(kp_ + 1));
    return;
  }
  std::vector<double> cw(static_cast<std::size_t>(K_));
  P_.class_weights(s, cw.data());
  out.push_back(-(neg_label(cw.data()) + 1));
}

void FairSolver::emit_desc(const std::uint64_t* s, std::uint64_t desc,
                           std::vector<int>& out) const {
  if (!(desc & (std::uint64_t{1} << 20))) {
    emit_leaf(s, (desc >> 16) & 1u, out);
    return;
  }
  const int g = static_cast<int>(desc & 0xffffu);
  std::vector<std::uint64_t> s0(W_), s1(W_);
  words::and_not_into(s0.data(), s, P_.feature_words(static_cast<std::size_t>(g)), W_);
  words::and_into(s1.data(), s, P_.feature_words(static_cast<std::size_t>(g)), W_);
  out.push_back(g);
  emit_leaf(s0.data(), (desc >> 16) & 1u, out);
  emit_leaf(s1.data(), (desc >> 17) & 1u, out);
}

void FairSolver::emit(const std::uint64_t* s, int k, const EntryCopy& e, std::vector<int>& out) {
  switch (kind_of(e.info)) {
    case kLeaf:
    case kStump:
      emit_desc(s, e.info & kDescMask, out);
      return;
    case kPattern: {
      const int f = static_cast<int>((e.info >> 42) & 0xffffu);
      std::vector<std::uint64_t> s0(W_), s1(W_);
      words::and_not_into(s0.data(), s, P_.feature_words(static_cast<std::size_t>(f)), W_);
      words::and_into(s1.data(), s, P_.feature_words(static_cast<std::size_t>(f)), W_);
      out.push_back(f);
      emit_desc(s0.data(), (e.info >> 21) & kDescMask, out);
      emit_desc(s1.data(), e.info & kDescMask, out);
      return;
    }
    case kSplit: {
      const int f = static_cast<int>(e.info & 0xffffu);
      std::vector<std::uint64_t> s0(W_), s1(W_);
      words::and_not_into(s0.data(), s, P_.feature_words(static_cast<std::size_t>(f)), W_);
      words::and_into(s1.data(), s, P_.feature_words(static_cast<std::size_t>(f)), W_);
      std::vector<double> dr(m_);
      for (std::size_t j = 0; j < m_; ++j) dr[j] = e.d[j] - e.dl[j];
      const EntryCopy a = find_entry(s0.data(), k - 1, e.dl.data());
      const EntryCopy b = find_entry(s1.data(), k - 1, dr.data());
      if (std::abs(a.cost + b.cost - e.cost) > 16 * tau_)
        throw std::logic_error("fair dp: the children of a split do not add up (a bug)");
      out.push_back(f);
      emit(s0.data(), k - 1, a, out);
      emit(s1.data(), k - 1, b, out);
      return;
    }
  }
}

EntryCopy FairSolver::find_entry(const std::uint64_t* s, int k, const double* d) {
  auto it = memo_.find(key(s, k));
  if (it == memo_.end())
    throw std::logic_error("fair dp: a child front left the memo (a bug)");
  return find_in(*it->second.front, d);
}

EntryCopy FairSolver::find_in(const Front& F, const double* d) const {
  std::size_t best = F.size();
  for (std::size_t i = 0; i < F.size(); ++i) {
    double gap = 0.0;
    for (std::size_t j = 0; j < m_; ++j) gap = std::max(gap, std::abs(F.d[i * m_ + j] - d[j]));
    if (gap <= 4.0 / kKeyScale && (best == F.size() || F.cost[i] < F.cost[best])) best = i;
  }
  if (best == F.size())
    throw std::logic_error("fair dp: no child entry with the recorded disparity (a bug)");
  return copy_entry(F, best, m_);
}

}  // namespace fair
}  // namespace odtkit

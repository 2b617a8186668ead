// The fair DP's solver (fair_dp.cpp describes the algorithm): one object per search, holding
// the memo of fronts, the scratch levels and the root's tables. Its members are defined by
// concern: fair_fronts.cpp (building, merging and rebuilding fronts), fair_bounds.cpp (sibling
// bounds, the Lagrangian cuts, the deep root children), fair_search.cpp (the root and the
// iterative deepening). Memory and time are accounted on the search's one Budget.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "depth2.hpp"
#include "fair_dp.hpp"
#include "fair_fronts.hpp"
#include "search_types.hpp"

namespace odtkit {
namespace fair {

class FairSolver {
 public:
  FairSolver(const Problem& P, const Coefficients& C, const FairSpec& spec,
             const SearchConfig& config, const Switches& sw, Budget& budget);

  // Fair incumbent (count units) and its tree; improved() is called on each improvement.
  double incumbent = kInf;
  std::vector<int> incumbent_tree;

  // The pruning threshold: a tree is worth finding only if it costs < target() - tau. When
  // every cost is an integer (integral class weights and an integral Lambda, e.g. lam = 0 on
  // unweighted data), a better tree costs at most incumbent - 1, so the threshold drops by 1.
  double target() const { return integral_costs_ ? incumbent - 1.0 + 2.0 * tau_ : incumbent; }
  std::function<void()> improved;

  // Solves depth D (incumbent must hold a fair tree); false when stopped. On return,
  // `depth_bound` is a valid lower bound on the fair optimum at depth D when the iteration
  // reached its root loop (else -inf).
  bool solve_depth(int D) {
    depth_bound = -kInf;
    if (D <= 0) return true;
    if (D == 1) return solve_depth1();
    if (D == 2) return solve_depth2();
    return solve_deep(D);
  }
  double depth_bound = -kInf;

  bool stopped() const { return budget_.stopped(); }

  std::size_t bytes() const {
    std::size_t total = memo_bytes_ + root_t0_.bytes() + root_t1_.bytes() + C_.bytes() +
                        table_cache_bytes_ + (depth2_ ? depth2_->bytes() : 0) +
                        opt_cache_bytes_ + deep_bytes_ + bound_table_.bytes();
    for (const auto& L : levels_)
      total += L->builder->bytes() + L->f1builder->bytes() + L->table.bytes() + L->fa.bytes() +
               L->fb.bytes() + (L->s0.capacity() + L->s1.capacity() + L->tmp.capacity()) * 8;
    total += combo_bytes_;
    return total;
  }
  // What one more insertion may add at once: a front builder's vectors double when full.
  std::size_t growable_bytes() const {
    std::size_t total = 0;
    for (const auto& L : levels_) total += L->builder->bytes() + L->f1builder->bytes();
    return total;
  }

  // ------------------------------------------------------------------ statistics
  long long fronts_built = 0, memo_hits = 0, combos = 0, lagrangian_evals = 0;
  long long root_splits = 0, root_pruned_bound = 0, root_pruned_lagrangian = 0;
  std::size_t front_max = 0, memo_entries = 0;
  double front_total = 0.0;


 private:
  struct Level {
    std::vector<std::uint64_t> s0, s1, tmp;
    std::unique_ptr<FrontBuilder> builder, f1builder;
    PairTable table;
    Front fa, fb;
    std::vector<std::uint32_t> ia, ib;
    std::vector<double> st, st0, st1, sub, win, win0, win1, dd;
    struct Cand {
      int f;
      double lb0, lb1;
    };
    std::vector<Cand> cands;
  };

  Level& level(std::size_t i) {
    while (levels_.size() <= i) levels_.push_back(new_level());
    return *levels_[i];
  }
  std::unique_ptr<Level> new_level() const {
    auto L = std::make_unique<Level>();
    L->s0.resize(W_);
    L->s1.resize(W_);
    L->tmp.resize(W_);
    L->builder = std::make_unique<FrontBuilder>(m_, tau_);
    L->f1builder = std::make_unique<FrontBuilder>(m_, tau_);
    L->st.resize(S1_);
    L->st0.resize(S1_);
    L->st1.resize(S1_);
    L->sub.resize(S1_);
    L->win.resize(2 * m_);
    L->win0.resize(2 * m_);
    L->win1.resize(2 * m_);
    L->dd.resize(m_);
    return L;
  }

  // ----------------------------------------------------------------- cell statistics
  // out[0] = total weight of s (& mask), out[1..K] = its class weights.
  void class_stat(const std::uint64_t* s, const std::uint64_t* mask, double* out) const {
    if (mask) {
      P_.class_weights_and(s, mask, out + 1);
    } else {
      P_.class_weights(s, out + 1);
    }
    double w = 0.0;
    for (int k = 0; k < K_; ++k) w += out[1 + k];
    out[0] = w;
  }
  void stat2(const std::uint64_t* s, const std::uint64_t* mask, double* out) const {
    class_stat(s, mask, out);
    C_.sum(s, mask, out + 1 + K_);
  }
  void stat1(const std::uint64_t* s, double* out) const {
    stat2(s, nullptr, out);
    C_.parts(s, out + S2_, out + S2_ + m_);
  }
  const double* dis(const double* st) const { return st + 1 + K_; }

  double pos_mis(const double* st) const { return st[0] - st[1 + kp_]; }
  double neg_mis(const double* st) const {
    if (K_ == 1) return kInf;
    if (K_ == 2) return st[0] - st[1 + (1 - kp_)];
    double top = -kInf;
    for (int k = 0; k < K_; ++k)
      if (k != kp_) top = std::max(top, st[1 + k]);
    return st[0] - top;
  }
  int neg_label(const double* cw) const {
    int best = -1;
    for (int k = 0; k < K_; ++k)
      if (k != kp_ && (best < 0 || cw[k] > cw[best])) best = k;
    return best < 0 ? kp_ : best;
  }

  // window of a cell from its S1 statistics (the root: exactly [-delta', delta'])
  void window(const double* st, bool root, double* win) const {
    for (std::size_t j = 0; j < m_; ++j) {
      if (!sw_.window && !root) {
        win[j] = -kInf;
        win[m_ + j] = kInf;
        continue;
      }
      const double up_rest = root ? 0.0 : std::max(0.0, C_.up_total(j) - st[S2_ + j]);
      const double down_rest = root ? 0.0 : std::min(0.0, C_.down_total(j) - st[S2_ + m_ + j]);
      win[j] = -delta_ - up_rest;
      win[m_ + j] = delta_ - down_rest;
    }
  }
  bool inside(const double* d, const double* win) const {
    for (std::size_t j = 0; j < m_; ++j)
      if (d[j] < win[j] || d[j] > win[m_ + j]) return false;
    return true;
  }
  bool cuts_ok(const Cuts& cuts, double cost, const double* d, int from = 0) const {
    for (int i = from; i < cuts.n; ++i)
      if (cost + cuts.mu[i] * d[0] >= cuts.T[i] - tau_) return false;
    return true;
  }

  // Fronts and tables grow by amounts no one can know before they are built, so the memory
  // check is predictive: Budget stops while the structures plus what may come before the next
  // check still fit. ahead(b): the largest growth seen between two checks, or the builders
  // doubling (a check after the fact let the search overshoot its limit by a third).
  std::size_t ahead(std::size_t b) {
    if (b > last_bytes_) max_growth_ = std::max(max_growth_, b - last_bytes_);
    last_bytes_ = b;
    return std::max(max_growth_, growable_bytes());
  }
  // Clock, interrupt and (with a limit) memory, without counting a node: inside long loops.
  void poll() {
    if (budget_.check_clock() || !(budget_.memory_limit_bytes() > 0)) return;
    const std::size_t b = bytes();
    budget_.memory_ok(b, ahead(b));
  }
  // One expanded front or root split: Budget::tick with the memory in use and ahead.
  bool tick() {
    const std::size_t b = bytes();
    return budget_.tick(b, ahead(b));
  }

  // false when the search was stopped meanwhile (polled every few rows of the table).
  // classes_only: class weights alone (disparities left 0), enough for unconstrained values.
  bool build_table(const std::uint64_t* s, PairTable& T, bool pairs, std::uint64_t* buf,
                   bool classes_only = false);

  // S1 statistics of the cell x_f = a of a table (f < 0: the whole support)
  void cell1(const PairTable& T, int f, int a, double* out) const {
    if (f < 0) {
      std::copy_n(T.total.data(), S1_, out);
    } else if (a == 1) {
      std::copy_n(T.single_at(f), S1_, out);
    } else {
      const double* s = T.single_at(f);
      for (std::size_t i = 0; i < S1_; ++i) out[i] = T.total[i] - s[i];
    }
  }
  // S2 statistics of (cell x_f = a) & x_g (f < 0: support & x_g)
  void sub_cell(const PairTable& T, int f, int a, int g, double* out) const {
    if (f < 0) {
      std::copy_n(T.single_at(g), S2_, out);
    } else if (a == 1) {
      std::copy_n(T.pair_at(f, g), S2_, out);
    } else {
      const double* p = T.pair_at(f, g);
      const double* s = T.single_at(g);
      for (std::size_t i = 0; i < S2_; ++i) out[i] = s[i] - p[i];
    }
  }
  // S2 statistics of both sides of the split of cell (f, a) (S2 statistics c) on x_g:
  // s1 = cell & x_g, s0 = cell & ~x_g. False when g is f or a side is empty (no split).
  bool split_cell(const PairTable& T, int f, int a, int g, const double* c, double* s0,
                  double* s1) const {
    if (g == f) return false;
    sub_cell(T, f, a, g, s1);
    for (std::size_t i = 0; i < S2_; ++i) s0[i] = c[i] - s1[i];
    return !(s1[0] <= zero_ || s0[0] <= zero_);
  }
  // min over the entries of F of cost + mu * d (one pair): what the best partner of a sibling
  // entry adds under the cut of multiplier mu.
  double min_lagrangian(const Front& F, double mu) const {
    double lowest = kInf;
    for (std::size_t k = 0; k < F.size(); ++k)
      lowest = std::min(lowest, F.cost[k] + mu * F.d[k * m_]);
    return lowest;
  }
  // The cuts on the sibling of a root child whose front A is built under `cuts`: a sibling
  // entry is useful only if its cost + mu d < ub - min_A (cost + mu d) + |mu| delta'.
  Cuts sibling_cuts(const Front& A, const Cuts& cuts, double ub) const {
    Cuts out;
    out.n = cuts.n;
    for (int i = 0; i < cuts.n; ++i) {
      out.mu[i] = cuts.mu[i];
      out.T[i] = sw_.budget ? ub - min_lagrangian(A, cuts.mu[i]) + std::abs(cuts.mu[i]) * delta_
                            : kInf;
    }
    return out;
  }

  // Depth <= 1 front of the cell x_f = a of T (f < 0: the support), window-filtered.
  void build_f1(const PairTable& T, int f, int a, const double* win, Level& L, Front& out);

  // Pairwise sums of A and B into b, under the window and the cuts. kind: kPattern or kSplit.
  void merge(const Front& A, const Front& B, const double* win, const Cuts& cuts, Kind kind,
             int f, FrontBuilder& b, Level& L);

  // Depth-2 front of T's support under `cuts`.
  bool build_f2(const PairTable& T, const Cuts& cuts, bool root, Level& L, Front& out);

  void note_front(const Front& F) {
    ++fronts_built;
    front_max = std::max(front_max, F.size());
    front_total += static_cast<double>(F.size());
  }

  // --------------------------------------------------------------------- memo
  MemoKey& key(const std::uint64_t* s, int depth) {
    std::copy_n(s, W_, scratch_key_.words.begin());
    scratch_key_.depth = depth;
    return scratch_key_;
  }

  // [w, cw(K)] of s into st
  void weights_of(const std::uint64_t* s, double* st) const {
    P_.class_weights(s, st + 1);
    double w = 0.0;
    for (int k = 0; k < K_; ++k) w += st[1 + k];
    st[0] = w;
  }

  // Lower bound on every entry of front(s, k) (st: weights_of(s)): a memoised front's minimum,
  // else the unconstrained optimum for k = 2 or 3 (cached), else the best leaf or eq + 2 Lambda.
  double lower_bound(const std::uint64_t* s, int k, const double* st);

  // The unconstrained optimum of s at depth 2 (the depth-two solver) or 3 (its best root split
  // over depth-2 optima), cached by support: exact sibling bounds below the root's children.
  double unconstrained(const std::uint64_t* s, int k, const double* st);

  // front(s, k) with entries of cost < budget - tau (maybe more), memoised; null when stopped.
  std::shared_ptr<const Front> front(const std::uint64_t* s, int k, double budget,
                                     std::size_t lvl);

  // front(s, k) for k >= 3 by recursion over the root feature.
  bool build_generic(const std::uint64_t* s, int k, const Cuts& cuts, bool root,
                     std::size_t lvl, Front& out);
  // ---------------------------------------------------------------- Lagrangian
  // min over trees of depth <= 2 on T's support of cost + mu * d (one pair); *dsel: the d of
  // the minimiser. Splits with an empty side are skipped, as in the fronts.
  double lag_leaf(const double* st, double mu, double* dsel) const {
    const double pos = pos_mis(st) + Lambda_ + mu * st[1 + K_];
    const double neg = neg_mis(st) + Lambda_;
    if (pos < neg) {
      *dsel = st[1 + K_];
      return pos;
    }
    *dsel = 0.0;
    return neg;
  }
  double lag_depth1(const PairTable& T, int f, int a, double mu, double* dsel, Level& L) const;
  // lag_depth1 for two classes and one pair, straight from the table: with two classes the
  // negative leaf misclassifies the positive weight and vice versa.
  double lag_depth1_binary(const PairTable& T, int f, int a, double mu, double* dsel) const;

  double lag2(const PairTable& T, double mu, double* dsel, Level& L);

  struct LagPoint {
    double mu, L0, L1, d;  // d: disparity of the minimising pair of subtrees
    double phi(double delta) const { return L0 + L1 - std::abs(mu) * delta; }
  };
  // The cuts on side 0 of a root split: mu = 0 (pts[0]) and the multipliers whose dual value
  // is highest, each cutting entries c + mu d above ub - L1(mu) + |mu| delta.
  Cuts best_cuts(std::vector<LagPoint>& pts, double ub) const;
  LagPoint lag_eval(double mu, Level& L);

  // Lagrangian value of a child of the root split being processed: from its pair table
  // (remaining depth 2) or, in deep mode (depth 3), the best split over its children's tables.
  double lag_child(int side, double mu, double* dsel, Level& L);

  // ------------------------------------------------------------ deep root children
  // With remaining depth 3 below the root (max_depth 4), the root's children get the same
  // Lagrangian treatment as depth-2 children: their values come from the pair tables of all
  // their own children, and their fronts are merged from depth-2 fronts built under cuts
  // (transient, kept until the root split is done so that a split entry can be rebuilt).
  struct DeepSplit {
    int g;
    std::unique_ptr<PairTable> t0, t1;
    std::unique_ptr<Front> a, b;  // the depth-2 fronts merged into the child's front
  };
  struct DeepChild {
    std::vector<std::uint64_t> words;
    std::vector<double> stat;
    std::vector<DeepSplit> splits;
  };

  // Bytes of the tables of one deep root split (both children), to check against the cap.
  double deep_bytes() const {
    const double table = (static_cast<double>(M_) * M_ * S2_ + (M_ + 1.0) * S1_) * sizeof(double);
    return 4.0 * M_ * table;
  }

  // Build the deep children of the root split (s0, s1); false when stopped.
  bool prepare_deep(const std::uint64_t* s0, const std::uint64_t* s1, int f);

  // The front of deep root child `side` under `cuts`; false when stopped.
  bool build_deep_front(int side, const Cuts& cuts, Front& out);

  // Rebuild an entry of a deep root child's front (its split entries refer to the kept fronts).
  void emit_deep(int side, const EntryCopy& e, std::vector<int>& out);

  // Cutting-plane maximisation of phi(mu) = L0(mu) + L1(mu) - |mu| delta' (concave) for the
  // root split whose children have tables *rt0_ / *rt1_. Returns true when
  // max phi >= ub - tau (the split cannot beat the incumbent); the points kept for cuts are
  // in `pts` (the first is mu = 0), *bound the best phi found.
  bool lagrangian(double ub, std::vector<LagPoint>& pts, double* bound, Level& L);

  // ------------------------------------------------------------------- root
  // Best fair pair (a in A, b in B) with |d_a + d_b| <= delta' and cost < ub - tau; returns
  // the cost (inf if none) and the indices.
  double best_combo(const Front& A, const Front& B, double ub, std::size_t* ia,
                    std::size_t* ib);

  // A new fair incumbent: rebuild its tree now (the fronts it came from may change later).
  void accept(double cost, std::vector<int> code) {
    incumbent = cost;
    incumbent_tree = std::move(code);
    if (improved) improved();
  }

  bool solve_depth1();

  bool solve_depth2();

  struct RootCand {
    int f;
    double bound;
  };
  // After the Lagrangian of root split `cand` (its dual bound `bound`): true when it pruned the
  // split; else raises the split's bound (and depth_bound, `next` the following split's) and
  // sets the cuts of its side-0 front from the multipliers in `pts`.
  bool settle_root_split(bool pruned, double bound, double next, double ub,
                         std::vector<LagPoint>& pts, RootCand& cand, Cuts& cuts0) {
    if (pruned) {
      ++root_pruned_lagrangian;
      return true;
    }
    cand.bound = std::max(cand.bound, bound);
    depth_bound = std::min({incumbent, cand.bound, next});
    cuts0 = best_cuts(pts, ub);
    return false;
  }

  bool solve_deep(int D);

  // --------------------------------------------------------------- rebuilding
  void emit_leaf(const std::uint64_t* s, bool positive, std::vector<int>& out) const;
  void emit_desc(const std::uint64_t* s, std::uint64_t desc, std::vector<int>& out) const;
  void emit(const std::uint64_t* s, int k, const EntryCopy& e, std::vector<int>& out);
  // The memoised entry of front(s, k) whose disparity is d (the cheapest one if several).
  EntryCopy find_entry(const std::uint64_t* s, int k, const double* d);
  EntryCopy find_in(const Front& F, const double* d) const;


  const Problem& P_;
  const Coefficients& C_;
  Budget& budget_;
  Switches sw_;
  int K_, M_;
  std::size_t m_, W_;
  int kp_;
  double delta_, Lambda_, tau_, zero_;
  std::size_t S2_, S1_;
  std::vector<double> zeros_;
  std::unique_ptr<Depth2Solver> depth2_;  // unconstrained depth-2 optima
  bool pass1_depth2_ = false;              // root pass 1 uses it (cheaper than pair tables)
  bool integral_costs_ = false;            // every cost is an integer (see target())
  std::vector<std::unique_ptr<Level>> levels_;
  std::unordered_map<MemoKey, MemoSlot, MemoHash> memo_;
  std::unordered_map<MemoKey, double, MemoHash> opt_cache_;  // unconstrained optima (k = 2, 3)
  PairTable bound_table_;                                    // scratch of unconstrained()
  std::unique_ptr<Level> bound_level_;
  std::size_t opt_cache_bytes_ = 0;
  MemoKey scratch_key_;
  std::size_t memo_bytes_ = 0, combo_bytes_ = 0;
  static constexpr std::size_t kPairsPerPoll = 1 << 14;
  std::size_t merge_pairs_ = 0;  // pairs merged since the last poll
  PairTable root_t0_, root_t1_;
  DeepChild deep_[2];       // the root split's children in deep mode (remaining depth 3)
  bool deep_mode_ = false;  // lag_child reads deep_ instead of *rt0_ / *rt1_
  std::size_t deep_bytes_ = 0;
  const PairTable* rt0_ = &root_t0_;  // the tables of the root split being processed
  const PairTable* rt1_ = &root_t1_;
  // pair tables of the root's children, built in pass 1 and reused in pass 2 (2f + side)
  std::vector<std::unique_ptr<PairTable>> table_cache_;
  std::size_t table_cache_bytes_ = 0, table_cache_cap_ = 0;
  std::vector<std::uint32_t> order_, sparse_;
  std::vector<double> sorted_d_;
  std::size_t last_bytes_ = 0, max_growth_ = 0;  // ahead()'s record
};

}  // namespace fair
}  // namespace odtkit

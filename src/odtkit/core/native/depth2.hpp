// Exact solver for a sub-problem with remaining depth 2 (van der Linden et al. 2023 (STreeD),
// Demirovic et al. 2022 (MurTree); docs/formulations-search-and-pruning.md §3.9).
// One pass over the points of the support accumulates, for every class k and feature pair
// i <= j, the weight F_k(i, j) of points with x_i = x_j = 1; every depth-<=2 tree's leaf counts
// then follow by inclusion-exclusion, so all M^2 candidate trees cost O(M^2 K) after the pass
// instead of M^2 bitset intersections plus memo traffic in the generic DP.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "problem.hpp"

namespace odtkit {

class Budget;

class Depth2Solver {
 public:
  struct Result {
    double value;   // count units: misclassified weight + Lambda * leaves
    int root = -1;  // -1: the single leaf is optimal
    int left = -1;  // split feature of the x_root = 0 child, -1: leaf
    int right = -1; // split feature of the x_root = 1 child, -1: leaf
    // false: the Budget stopped the solve (time, Ctrl-C) before it had tried every root;
    // value/root/left/right are then the best tree seen so far (a leaf if the pair counts
    // were not complete), an upper bound only, and the caller keeps its own lower bound
    bool exact = true;
  };

  explicit Depth2Solver(const Problem& problem);
  // What the constructor allocates (the count matrices, the per-point feature lists): it is
  // M^2 K doubles per cached slot, so a search under a memory limit may have to do without.
  static std::size_t upfront_bytes(const Problem& problem);

  // s: support over points; cw: its per-class weights. Lambda = lam * total weight.
  // `budget` (optional) is polled (Budget::check_clock: clock, Ctrl-C) every ~kPollStride
  // units of work inside the pair-count pass and the root loop: one call costs
  // O(|s| * ones^2 + M^2 K), seconds on thousands of features (2,000 x 6,000 ran 58 s past a
  // 1 s limit before). A stopped solve returns exact = false.
  Result solve(const std::uint64_t* s, const double* cw, double Lambda, Budget* budget = nullptr);
  std::size_t bytes() const;
  // Minimum leaf support in support units (0: none): every leaf of a returned tree receives at
  // least this support weight; splits with a lighter side are not tried. The caller passes
  // supports whose single leaf reaches it. With separate support weights (Problem) each solve
  // also counts them per feature pair (support_counts), apart from the cached class counts.
  void set_min_leaf(double weight) {
    min_leaf_ = weight;
    apart_ = weight > 0.0 && problem_.separate_support();
  }
  // Read-only hook for the budgeted dp's depth-two fronts (budget_dp.cpp): the pair counts of
  // support s, F_k(i, j) at [(i * M + j) * K + k] for i <= j (F_k(i, i): the weight of class k
  // with x_i = 1), valid until the next call; null when `budget` stopped the count. Counts
  // only: the solver's own search (solve) is not run.
  const double* pair_counts(const std::uint64_t* s, Budget* budget);
  // Two classes whose every point weighs 0 or 1 in each (unit weights, no conflicting
  // duplicates) and at most kSmallPoints points: the pair counts as 16-bit integers, class k
  // of the pair i <= j at [(2 i + k) * small_stride() + j], the cells j >= M zero (whole
  // vectors of a row can be read past M). pair_counts16 returns null when a limit stopped the
  // count (or its buffers could not be had); valid until the next call.
  static constexpr std::size_t kSmallPoints = 16000;
  bool small_counts() const;
  std::size_t small_stride() const;
  const std::int16_t* pair_counts16(const std::uint64_t* s, Budget* budget);

 private:
  // best depth-<=1 tree on the cell x_i = side (side 0/1), given pairs accumulated in F_
  double best_depth1(int i, int side, const double* ci, double Lambda, int* feature);
  double leaf(const double* c, double Lambda) const { return misclassified(c, K_) + Lambda; }
  double& F(int k, int i, int j) {
    return F_[(static_cast<std::size_t>(i) * M_ + static_cast<std::size_t>(j)) * K_ + k];
  }
  // Separate support weights under a minimum leaf support: G_(i, j) (i <= j) is the support
  // weight of the points of s with x_i = x_j = 1, support_total_ that of s. One point-pair pass
  // per solve (no cache: the class counts' slots hold class weights only); false when the
  // budget stopped it.
  bool support_counts(const std::uint64_t* s);
  double G(int i, int j) const {
    const auto lo = static_cast<std::size_t>(std::min(i, j));
    return G_[lo * static_cast<std::size_t>(M_) + static_cast<std::size_t>(std::max(i, j))];
  }
  // add (sign = +1) or remove (-1) the points of `bits` to/from the pair counts in F; false
  // when the budget stopped it part-way (F is then partial)
  bool accumulate(const std::uint64_t* bits, double* F, double sign);
  // make F_ point at counts for support s, reusing the cached slot closest to s; false when
  // the budget stopped it (the slot is then dropped from the cache and F_ is null)
  bool load_counts(const std::uint64_t* s);
  // load_counts without the sibling shortcut: the nearest slot updated, or a fresh count
  bool fresh_counts(const std::uint64_t* s);
  bool disjoint(const std::uint64_t* a, const std::uint64_t* b) const;
  bool is_union(const std::uint64_t* u, const std::uint64_t* a, const std::uint64_t* b) const;
  static bool try_resize(std::vector<double>& F, std::size_t cells);
  // fresh counts of s into F by word-parallel AND + popcount on s's points compacted to
  // ceil(|s| / 64) words (see `planes_`); false when the budget stopped it
  // (F16: pair_counts16's 16-bit layout instead of F)
  bool compact_counts(const std::uint64_t* s, std::size_t n_s, double* F,
                      std::int16_t* F16 = nullptr);
  // estimated work of the point-pair pass over `n` points, and of compact_counts over n_s
  double pair_pass_cost(std::size_t n) const { return static_cast<double>(n) * mean_pairs_; }
  double compact_cost(std::size_t n_s) const;
  // count `work` units; every kPollStride units, true when the budget says stop
  bool poll(std::size_t work);
  // ~1 ms of pair-count updates or root-loop cells between clock reads: the read costs
  // ~25 ns, so polling is free, and a stop is seen within milliseconds
  static constexpr std::size_t kPollStride = std::size_t{1} << 20;

  // Counts are cached for a few recent supports: sibling sub-problems of a depth-3 node
  // (s & ~X_j for successive j) differ in few points, so updating the nearest cached count
  // matrix by the symmetric difference is much cheaper than a fresh pass (MurTree's
  // incremental frequency counting). Only with integer weights, where +/- is exact.
  struct Slot {
    std::vector<std::uint64_t> support;
    std::vector<double> F;
    long long last_use = -1;
  };

  const Problem& problem_;
  int M_, K_;
  std::size_t W_;
  double tau_;  // count_tolerance of the problem
  double min_leaf_ = 0.0;
  bool apart_ = false;  // the minimum leaf support reads separate support weights (G_)
  std::vector<double> G_;
  double support_total_ = 0.0;
  // features equal to 1, per point, one flat array (CSR): point u's are
  // ones_[ones_start_[u] .. ones_start_[u + 1]). Built by scanning the feature bitsets' set
  // bits (a vector per point filled bit by bit took 0.8 s on 20,000 x 3,000, before any
  // Budget check)
  std::vector<int> ones_;
  std::vector<std::size_t> ones_start_;
  struct OnesView {
    const int* first;
    std::size_t n;
    std::size_t size() const { return n; }
    int operator[](std::size_t i) const { return first[i]; }
  };
  OnesView ones(std::size_t u) const {
    return {ones_.data() + ones_start_[u], ones_start_[u + 1] - ones_start_[u]};
  }
  std::vector<int> single_class_;       // the only class with weight at a point, or -1
  // Compact counting (integer weights only): the per-class weights as bit-planes (plane p is
  // bit plane_bit_[p] of class plane_class_[p]), so F_k(i, j) = sum over k's planes of
  // 2^bit * popcount(f_i & f_j & plane) on the support's points renumbered 0 .. |s| - 1. Its
  // cost, M^2 / 2 * |s| / 64 * planes words, beats the point-pair pass (|s| * ones^2 / 2
  // scattered adds) on large supports: planted 10,000 x 30 at depth 5 spent 69 % of its time
  // in that pass. rows_: per point, R_ words holding its features (bits 0 .. M-1) and planes
  // (bits M ..), transposed 64 points at a time into the compacted bitsets. Off
  // (has_planes_ false) when the weights are not integral or need over 64 planes.
  bool has_planes_ = false;
  bool unit_planes_ = false;  // K planes, each bit 0 of one class (unit weights)
  std::size_t R_ = 0;
  std::vector<std::uint64_t> rows_;
  std::vector<int> plane_class_, plane_bit_;
  std::vector<double> plane_scale_;  // 2^plane_bit_
  std::vector<std::uint64_t> compact_feats_, compact_scratch_, compact_block_;
  std::vector<std::uint32_t> compact_row_;
  double mean_pairs_ = 0.0;  // mean over points of ones * (ones + 1) / 2
  double mean_ones_ = 0.0;   // mean over points of ones
  long long compact_calls_ = 0;
  std::vector<Slot> slots_;
  // Sibling shortcut (integer weights): the DP solves s & ~X_j, then s & X_j, for the features
  // j of a depth-3 node s. When two successive supports are disjoint, their counts' sum is
  // kept as the counts of their union (the parent); a later support that, with the one
  // before it, makes up the same parent gets the parent's counts less its sibling's, M^2 K
  // subtractions instead of a pass over its points.
  Slot parent_;
  bool parent_valid_ = false;
  // pair_counts16's two slots and the union of two siblings, in its 16-bit layout
  struct Slot16 {
    std::vector<std::uint64_t> support;
    std::vector<std::int16_t> F;
    long long last_use = -1;
  };
  Slot16 small_[2];
  Slot16 small_parent_;
  bool small_parent_valid_ = false;
  long long parent_hits_ = 0;
  double* F_ = nullptr;                 // M x M x K of the active slot, upper triangle i <= j
  std::vector<std::uint64_t> diff_;
  long long calls_ = 0;
  long long points_visited_ = 0;
  Budget* budget_ = nullptr;  // of the current solve() only
  std::size_t since_poll_ = 0;

 public:
  long long points_visited() const { return points_visited_; }
  long long compact_calls() const { return compact_calls_; }
  long long parent_hits() const { return parent_hits_; }
  long long calls() const { return calls_; }

 private:
  std::vector<double> total_;           // K
  std::vector<double> scratch_;         // 4 K
};

}  // namespace odtkit

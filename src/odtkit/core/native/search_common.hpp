// Pieces shared by the tree searches (dp, dp_queue, bnb) that need the Problem.
#pragma once

#include <limits>
#include <vector>

#include "problem.hpp"
#include "search_types.hpp"

namespace odtkit {

// Initial bounds of a sub-problem from its class weights alone
// (docs/formulations-search-and-pruning.md §2.5, §3.8, §9 correction 4), with the bound
// switches of the config:
//   leaf      cost of the support as one majority leaf: mis + Lambda;
//   terminal  provably a leaf: no depth left, pure, or (support) mis - eq <= Lambda;
//   lb        leaf when terminal, else min(leaf, eq + 2 Lambda) (lookahead; off: eq + Lambda).
// With a minimum leaf support (config.min_leaf_weight > 0, here in support units: a share of
// Problem::total_support(), the total weight without separate support weights) a support
// lighter than it is infeasible (leaf = lb = +inf, terminal) and one lighter than twice it
// admits no split (both sides would have to reach it): terminal, its leaf. Lower bounds of the
// unconstrained problem stay lower bounds of this smaller feasible set (none of them reads the
// support weights: they bound the objective over any set of trees).
struct LeafBound {
  double leaf, lb;
  bool terminal;
};

class InitialBound {
 public:
  InitialBound(const Problem& problem, const SearchConfig& config)
      : K_(problem.n_classes()),
        Lambda_(config.lam * problem.total_weight()),
        tau_(count_tolerance(problem.total_weight())),
        use_support_(config.bound_on("support")),
        lookahead_leaves_(config.bound_on("lookahead") ? 2.0 : 1.0),
        min_leaf_(min_leaf_units(problem, config)),
        support_tau_(count_tolerance(problem.total_support())) {}

  // cw: class weights of the support; eq: its equivalent-points minority (0 when that bound is
  // off); depth: remaining depth (0: none left, < 0: unlimited); support: its support weight
  // (Problem::support; read only under a minimum leaf support).
  LeafBound operator()(const double* cw, double eq, int depth, double support) const {
    const double mis = misclassified(cw, K_);
    const double leaf = mis + Lambda_;
    if (min_leaf_ > 0.0) {
      if (light(support)) return {kInfinity, kInfinity, true};
      // (support_tau_: rounding of the sides' sum)
      if (support + support_tau_ < 2 * min_leaf_) return {leaf, leaf, true};
    }
    if (depth == 0 || mis <= tau_ || (use_support_ && mis - eq <= Lambda_ + tau_))
      return {leaf, leaf, true};
    return {leaf, std::min(leaf, split_bound(eq)), false};
  }
  // Lower bound on any tree with at least one split (two leaves with lookahead, §3.8).
  double split_bound(double eq) const { return eq + lookahead_leaves_ * Lambda_; }
  // Whether a support of support weight n is below the minimum leaf support (never without
  // one): a split with such a side is not admitted.
  bool light(double n) const { return n < min_leaf_; }
  double min_leaf() const { return min_leaf_; }
  // The minimum leaf support in support units (0: none).
  static double min_leaf_units(const Problem& problem, const SearchConfig& config) {
    return config.min_leaf_weight * problem.total_support();
  }

 private:
  static constexpr double kInfinity = std::numeric_limits<double>::infinity();
  int K_;
  double Lambda_, tau_;
  bool use_support_;
  double lookahead_leaves_;
  double min_leaf_;  // support units; 0: none
  double support_tau_;
};

// Count-unit pruning threshold for an external upper bound (normalized, e.g. a MIP's objective):
// the slack lets a bound equal to the optimum, rounded by another solver, still admit the tree
// attaining it (dp and dp_queue). It must exceed the searches' own tie tolerance
// (count_tolerance, which grows with the total weight): a fixed 1e-7 was below it from 100
// samples up, so a bound equal to the optimum pruned the optimum and was reported invalid.
inline double user_bound_threshold(double upper_bound, double total_weight) {
  return upper_bound * total_weight * (1 + 1e-12) + 2 * count_tolerance(total_weight) + 1e-7;
}

// Objective in count units (misclassified weight + Lambda * leaves) of an encoded tree
// (search_types.hpp) over all points; a leaf's label is taken from the code, not recomputed.
// Validates the code: throws std::invalid_argument when it is truncated or has trailing
// entries, a label or feature out of range, or a path longer than max_depth (< 0: unlimited).
// min_leaf (support units, InitialBound::min_leaf_units; 0: none): +inf when a leaf receives
// less support weight (the tree is not feasible under the minimum leaf support, e.g. a greedy
// start).
double evaluate_tree(const Problem& problem, const std::vector<int>& code, double Lambda,
                     int max_depth = -1, double min_leaf = 0.0);

}  // namespace odtkit

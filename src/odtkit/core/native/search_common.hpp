// Pieces shared by the tree searches (dp, dp_queue, bnb) that need the Problem.
#pragma once

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
        lookahead_leaves_(config.bound_on("lookahead") ? 2.0 : 1.0) {}

  // cw: class weights of the support; eq: its equivalent-points minority (0 when that bound is
  // off); depth: remaining depth (0: none left, < 0: unlimited).
  LeafBound operator()(const double* cw, double eq, int depth) const {
    const double mis = misclassified(cw, K_);
    const double leaf = mis + Lambda_;
    if (depth == 0 || mis <= tau_ || (use_support_ && mis - eq <= Lambda_ + tau_))
      return {leaf, leaf, true};
    return {leaf, std::min(leaf, split_bound(eq)), false};
  }
  // Lower bound on any tree with at least one split (two leaves with lookahead, §3.8).
  double split_bound(double eq) const { return eq + lookahead_leaves_ * Lambda_; }

 private:
  int K_;
  double Lambda_, tau_;
  bool use_support_;
  double lookahead_leaves_;
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
double evaluate_tree(const Problem& problem, const std::vector<int>& code, double Lambda,
                     int max_depth = -1);

}  // namespace odtkit

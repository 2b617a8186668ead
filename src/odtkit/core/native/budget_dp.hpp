// Budgeted dynamic program over supports (odtkit.core.budget.search_budgeted): minimise
// misclassified/N + lam * leaves over the trees of depth <= max_depth whose splits' summed
// integer cost stays within a budget B, every leaf receiving at least a minimum weight, splits
// only on allowed features.
//
// MaxLeaves(k) is cost 1 per split and B = k - 1 (a binary tree has one leaf more than
// splits); FeatureBudget(costs, budget, per="split") is its costs scaled to integers. Python
// (odtkit.core.budget.budget_of) does that conversion and refuses what it cannot make exact.
//
// Algorithm. For every (support s, remaining depth d) the memo holds the Pareto front of
// (resource r, cost c) pairs: for every r, the cheapest tree on s of depth <= d using at most
// r, as entries sorted by r ascending with c strictly decreasing (an entry is kept only if it
// beats every cheaper-resource entry by more than the tie tolerance, so ties go to the smaller
// resource). front(s, d) = {leaf} U over allowed features j of
//     front(s & ~x_j, d-1) (+) front(s & x_j, d-1) shifted by cost[j],
// where (+) is the min-plus convolution (every pair, resource added, capped at B), followed
// by Pareto pruning. Only *effective* splits are tried (both sides with positive weight, each
// at least the minimum leaf weight), the only splits a returned tree has.
//
// Pruning, all sound for every resource level:
//   terminal   a support the depth, purity or support bound (search_common.hpp InitialBound)
//              proves to be a leaf has the front {leaf}: the leaf uses no resource and beats
//              every tree with a split;
//   leaf       a candidate no cheaper than the leaf is dominated by it (resource 0), so a split
//              whose children's lower bounds already reach the leaf's cost is not expanded;
//   weight     a support lighter than the minimum leaf weight has an empty front (every leaf
//              below it is lighter still); a side lighter than it is never split off.
//
// Anytime. Iterative deepening over depths 0..max_depth on one memo: each completed depth gives
// a feasible incumbent (the best entry of its root front, resource <= B). On a limit the answer
// is that incumbent with the bound min(incumbent, equivalent-points minority + Lambda), which
// holds for every tree. Partial fronts (a stop inside a sub-problem) are never memoised.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "problem.hpp"
#include "search_types.hpp"

namespace odtkit {

struct BudgetSpec {
  std::vector<long long> cost;  // per feature of the problem, >= 0
  std::vector<bool> allowed;    // per feature of the problem
  long long budget = 0;         // >= 0, in the units of `cost`
  // a leaf (and a split's side) needs at least this weight, in the Problem's weight units
  // (any tolerance already applied by the caller); 0: no minimum
  double min_leaf_weight = 0.0;
};

// Validates `spec` against the problem (std::invalid_argument) and `config` (a max_depth >= 0
// is required). No root feasible (the total weight below min_leaf_weight): an empty tree,
// objective and lower_bound +inf, status optimal. Runs without touching Python; `interrupted`
// (may be empty) is polled through Budget.
SearchOutput search_budget_dp(const Problem& problem, const BudgetSpec& spec,
                              const SearchConfig& config,
                              std::function<bool()> interrupted = {});

}  // namespace odtkit

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
// Truncated fronts. A front is requested for resources <= R and costs < U and memoised with
// both: it holds exactly the Pareto entries there, and says of the rest only that they cost
// >= U. A later request it does not cover (a larger R or U) recomputes it for both. R is capped
// at the sub-problem's useful resource (at most min(2^d, |s|) leaves, each split costing at most
// the dearest feature): a front requested up to that cap covers every resource.
//
// Steps, all exact (switches in config.bounds, all on by default):
//   presolve     the unconstrained dp (search_dp: same depth, minimum leaf weight and
//                features) runs first. Every budgeted tree is one of its trees, so its optimum
//                is a lower bound for every budget; when its tree meets the budget it is the
//                answer (the lower bound certifies it). Needs every feature of the problem
//                splittable within the budget (Python drops the others) and lam > 0 (at
//                lam = 0 the budget almost always binds and the dp is slow).
//   upper_bound  the dp's tree cut back to the budget (the best subtree-to-leaf pruning within
//                B, a small front over the tree's nodes) is the first incumbent U at the root;
//                the stated depth is then solved directly. Without the presolve, iterative
//                deepening over depths 0..max_depth on one memo gives the incumbents.
//   depth2       a depth-two front is built at once from one pass of pair counts over s
//                (Depth2Solver::pair_counts, as the dp's depth-two solver): per root feature
//                the depth-one fronts of its two cells, combined; only for requests that
//                afford two splits (one split: one scan of the features is cheaper).
//   uncut_shallow  fronts of remaining depth <= 3 are built for every cost (U = inf): cheap,
//                and asked for by many parents with different U, which recomputed them.
// Pruning inside the recursion, sound for every resource level:
//   terminal   a support the depth, purity or support bound (search_common.hpp InitialBound)
//              proves to be a leaf has the front {leaf}: the leaf uses no resource and beats
//              every tree with a split;
//   bound      a sub-problem whose lower bound reaches its U has an empty front; a split on j
//              is skipped when its sides' bounds (leaf/lookahead, raised by a memoised front
//              covering the resource) reach min(U, best entry within cost[j]) - tau, and its
//              sides are requested with U less the other side's bound (left) or less the best
//              left entry that a right tree could pair with (right);
//   resource   a side that can afford no split (resource left < the cheapest feature) is a
//              leaf, with no sub-problem;
//   weight     a support lighter than the minimum leaf weight has an empty front (every leaf
//              below it is lighter still); a side lighter than it is never split off.
//
// Anytime. The incumbent is the majority leaf, then the cut-back tree, then each completed
// depth's best root entry. On a limit the answer is that incumbent with the bound
// min(incumbent, max(equivalent-points minority + Lambda, the presolve's bound)), which holds
// for every tree. Partial fronts (a stop inside a sub-problem) are never memoised.
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

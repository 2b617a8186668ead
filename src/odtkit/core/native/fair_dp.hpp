// Fairness-constrained tree search (search_tree(..., fairness=...), issue 10 part 3):
// minimise misclassified/N + lam * leaves over trees of depth <= max_depth subject to
// |sum_i coef[i, j] * [yhat_i = positive]| <= delta for every constrained pair j.
//
// The coefficients are those of odtkit.fairness.FairnessGroups (n_samples x n_pairs): a linear
// functional per pair of groups, so every notion (sp, pe, eopp with one column; several
// attributes or values, eodds, csp with several) is the same problem here. A single leaf has
// disparity 0 for every pair, so a fair tree always exists.
//
// Algorithm: STreeD-style dynamic programming over Pareto fronts (van der Linden et al. 2023;
// docs/formulations-trees.md §5.4),
// with the leaf penalty lam, which STreeD lacks. A sub-problem (support, remaining depth) has a
// front of (cost, disparity vector) entries, one per distinct disparity vector (the cheapest
// tree reaching it); the front of a split is the pairwise sum of its children's fronts. Pruning
// (all sound, each switchable): a context-free feasibility window on the disparity, cost budgets
// from the incumbent and the siblings' lower bounds, Lagrangian cuts c + mu * d < T derived from
// the sibling's Lagrangian value (one protected pair), and the shortcut of an unconstrained
// optimum that is already fair. Iterative deepening over depths 1..max_depth gives fair
// incumbents early. See fair_dp.cpp for the details.
#pragma once

#include <cstddef>
#include <functional>

#include "problem.hpp"
#include "search_types.hpp"

namespace odtkit {

struct FairSpec {
  const double* coefficients = nullptr;  // n_samples x n_pairs, row-major (sample i, pair j)
  std::size_t n_pairs = 0;
  double delta = 0.0;      // in [0, 1]
  int positive_code = 0;   // the class whose prediction counts as positive
};

// Runs without touching Python; `interrupted` (may be empty) is polled through Budget.
// config.max_depth must be >= 0 (the fair search needs a depth limit); config.upper_bound is
// ignored. Throws std::invalid_argument on a malformed spec (shape, delta, positive code) and
// std::logic_error if the tree it rebuilds does not score what the search computed (a bug).
SearchOutput search_fair_dp(const Problem& problem, const FairSpec& spec,
                            const SearchConfig& config, std::function<bool()> interrupted = {});

}  // namespace odtkit

// Deterministic greedy tree (docs/formulations-search-and-pruning.md §3.2): grow by the
// largest Gini reduction (ties -> smallest feature index), then prune bottom-up with the exact
// per-leaf penalty. Used as the first incumbent of the native searches; O(nodes * M * K * W)
// bitset work, so it costs microseconds where the Python greedy costs tens of milliseconds.
#pragma once

#include <vector>

#include "problem.hpp"

namespace odtkit {

// Tree in the SearchOutput encoding (pre-order, j >= 0 split, -(k+1) leaf).
// max_depth < 0: unlimited. *value receives its objective in count units (mis + Lambda*leaves).
// `budget` (optional) is polled before each split scan (O(M W K)): once it stops (time,
// Ctrl-C), the nodes not yet grown stay leaves, so the tree and its value remain exact (an
// unlimited-depth greedy on 20,000 x 3,000 took ~2 s before the search could check its limit).
class Budget;
std::vector<int> greedy_tree(const Problem& problem, double lam, int max_depth, double* value,
                             Budget* budget = nullptr);

}  // namespace odtkit

// OSDT leaf-set branch and bound (method="bnb"; Hu, Rudin, Seltzer 2019):
// docs/formulations-search-and-pruning.md §3.3-3.5 with every bound of §2 and the §9
// corrections.
//
// A search state is a tree (its set of leaves) plus a non-empty mask of the leaves created in the
// latest expansion that all get split next; unselected newest leaves become fixed. Leaves are
// shared through a LeafCache (dense ids, each leaf's support, counts and dead features computed
// once), whole trees are deduplicated by a TreeCache keyed by the sorted leaf ids (leaf
// permutation bound), and a bound heap over the open states gives a valid global lower bound at
// any time (anytime behaviour, §3.5).
#pragma once

#include <functional>

#include "problem.hpp"
#include "search_types.hpp"

namespace odtkit {

// Bound names (config.bounds; missing = on): "equivalent_points", "lookahead", "leaf_count",
// "support", "incremental_accuracy", "leaf_accuracy", "permutation". Policies: "curiosity",
// "lower_bound", "objective", "bfs", "dfs". Throws std::invalid_argument on an unknown policy or
// a malformed config.initial_tree.
SearchOutput search_bnb(const Problem& problem, const SearchConfig& config,
                        std::function<bool()> interrupted = {});

}  // namespace odtkit

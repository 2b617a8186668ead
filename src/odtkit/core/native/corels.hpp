// CORELS: certifiably optimal rule lists over pre-mined antecedents (Angelino et al. 2018;
// docs/formulations-search-and-pruning.md §5).
//
// The objective is R(d) = mistakes/N + lambda * (number of rules); the default rule is free and
// every label is the empirical majority of the points it captures. The search is a best-first
// branch and bound over a prefix trie with the bounds of §5.3, a symmetry-aware map (§5.4) and
// garbage collection of the trie whenever the incumbent improves. Implemented from that document's
// mathematics only (the reference code is GPL).
//
// Same contract as the tree searches (search_types.hpp): the Problem's features are the
// antecedents (its points are CORELS's equivalence classes, §5.3 item 8) and its labels must be
// binary (n_classes = 2). Config: lam, time/node/memory limits, policy, symmetry and the bound
// switches "support" (Thm 10), "accurate_support" (Thm 11), "max_support" (Thm 21),
// "lookahead" (Lemma 2) and "equivalent_points" (Thm 20); max_depth, upper_bound and
// initial_tree are not used. Output: the rule list "if a0 then l0 elif a1 then l1 ... else d" as
// the one-sided tree it is, pre-order [a0, a1, ..., -(d+1), ..., -(l1+1), -(l0+1)];
// n_explored counts expanded prefixes; stats hold nodes_created, max_queue, gc_passes and
// equivalence_classes.
#pragma once

#include <functional>

#include "problem.hpp"
#include "search_types.hpp"

namespace odtkit {

// `interrupted` (may be empty) is polled through Budget. Throws std::invalid_argument for
// non-binary labels or zero total weight.
SearchOutput search_corels(const Problem& problem, const SearchConfig& config,
                           std::function<bool()> interrupted = {});

}  // namespace odtkit

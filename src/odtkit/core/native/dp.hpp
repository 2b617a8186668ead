// Dynamic-programming search for optimal sparse trees (method="dp"):
// minimise misclassified/N + lam * leaves over trees of depth <= max_depth (or unlimited).
// Algorithm: Lin et al. 2020 (GOSDT) as written up in docs/formulations-search-and-pruning.md §3.8
// (recursive, bound-passing variant) with the
// terminal tests of §2.5, equivalent-point / look-ahead lower bounds, a memo keyed by
// (support bitset over points, remaining depth), the depth-two solver of §3.9 and the
// similar-support lower bound of §2.9. See dp.cpp for the details.
#pragma once

#include <functional>

#include "problem.hpp"
#include "search_types.hpp"

namespace odtkit {

// Runs without touching Python; `interrupted` (may be empty) is polled through Budget.
// Throws std::invalid_argument for a malformed config.initial_tree.
SearchOutput search_dp(const Problem& problem, const SearchConfig& config,
                       std::function<bool()> interrupted = {});

// strategy="anytime": iterative deepening (incumbents) interleaved with bound-raising solves
// of the target depth on one memo, so the incumbent and the global bound are both good at
// every moment; certifies the same optimum as search_dp. Same contract as search_dp.
SearchOutput search_dp_anytime(const Problem& problem, const SearchConfig& config,
                               std::function<bool()> interrupted = {});

}  // namespace odtkit

// Queue-based dynamic programming over supports (method="dp", strategy="queue"): GOSDT
// Algorithm 1 (Lin et al. 2020) as corrected in docs/formulations-search-and-pruning.md §3.8 / §9
// (corrections 3-5).
// Sub-problems keyed by (support bitset over points, remaining depth) carry lower/upper bounds
// and their parents; a child's bound change is propagated to every parent through a priority
// queue, so the root's lower bound is a valid global bound at any moment and never decreases.
// It certifies the same optimum as the recursive search (dp.hpp), usually more slowly, but its
// best-first order raises the global bound steadily, which matters when a limit stops it.
#pragma once

#include <functional>

#include "problem.hpp"
#include "search_types.hpp"

namespace odtkit {

// Same contract as search_dp: runs without touching Python, `interrupted` (may be empty) is
// polled through Budget; throws std::invalid_argument for a malformed config.initial_tree.
SearchOutput search_dp_queue(const Problem& problem, const SearchConfig& config,
                             std::function<bool()> interrupted = {});

}  // namespace odtkit

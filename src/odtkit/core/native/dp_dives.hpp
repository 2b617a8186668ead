// strategy="anytime" (the default at unlimited depth under a limit): depth-limited dives for
// the incumbent, then the anytime DP (dp.hpp, search_dp_anytime) warm-started from the best
// dive. See dp_dives.cpp.
#pragma once

#include <functional>

#include "problem.hpp"
#include "search_types.hpp"

namespace odtkit {

// Same contract as search_dp_anytime (certifies the same optimum; [lower_bound, objective] is
// valid at every moment and at any stop).
SearchOutput search_dp_dives(const Problem& problem, const SearchConfig& config,
                             std::function<bool()> interrupted = {});

}  // namespace odtkit

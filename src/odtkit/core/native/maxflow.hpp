// Maximum flow / minimum cut of a closure network (Picard 1976;
// docs/formulations-search-and-pruning.md §7.11): IP3 without a budget row.
//
// The network has a source s, a sink t and n inner nodes. Node v has an arc s->v of capacity
// source_cap[v] and an arc v->t of capacity sink_cap[v] (either may be 0); every inner arc
// tails[j] -> heads[j] has infinite capacity. Capacities are int64 so the flow is exact: the
// caller scales and rounds (floor on the sink arcs, so the scaled-back flow stays feasible for
// the real capacities and its value is a valid lower bound; see odtkit.pruning._cut).
//
// Because every inner arc is infinite, the residual graph is stored compactly: one int64 flow
// per inner arc (its backward residual; the forward residual is always infinite) and the two
// residual terminal capacities per node. Algorithm: Dinic (BFS levels from s, blocking flow by
// path augmentation with current-arc pointers), chosen by measurement on pruning graphs
// (benchmarks/pruning.py). Any feasible flow is a lower bound and the nodes reachable from s in
// its residual graph are closed under the inner arcs, so a stopped run still returns a valid
// closure (an incumbent) and a valid bound.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "search_types.hpp"

namespace odtkit {

struct ClosureCutOutput {
  std::vector<std::uint8_t> source_side;  // 1: node on the source side (minimal min cut)
  std::int64_t flow = 0;                   // value of the flow found (== cut value if optimal)
  std::int64_t cut = 0;                    // capacity of the cut (source_side, rest)
  std::string status = "optimal";          // optimal, time_limit, interrupted, memory_limit
  long long phases = 0;                    // BFS phases
  long long augmentations = 0;
  double peak_memory_mb = 0.0;
  double seconds = 0.0;
};

// Throws std::invalid_argument on negative capacities, arc ends out of range, or capacities
// whose sums could overflow int64. `budget` carries the time limit and the interrupt check.
ClosureCutOutput closure_min_cut(std::int64_t n_nodes, const std::int64_t* source_cap,
                                 const std::int64_t* sink_cap, std::int64_t n_arcs,
                                 const std::int32_t* tails, const std::int32_t* heads,
                                 Budget& budget);

}  // namespace odtkit

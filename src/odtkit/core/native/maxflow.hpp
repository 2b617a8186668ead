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
// residual terminal capacities per node. Three algorithms, chosen by `MaxFlowAlgorithm`:
//
// * Dinic: BFS levels from s, blocking flow by path augmentation with current-arc pointers. Any
//   feasible flow is a lower bound and the nodes reachable from s in its residual graph are
//   closed under the inner arcs, so a stopped run still returns a valid closure (an incumbent)
//   and a valid bound.
// * Push-relabel (Goldberg-Tarjan), highest label first, with global relabelling (exact BFS
//   distances to t, HIPR's frequency rule) and the gap heuristic, phase 1 only: it stops at a
//   maximum *preflow* (no node with excess can reach t), which is enough for the min cut.
//   One pruning-specific step: a push into a label-1 node with sink capacity goes straight on to
//   t, and a label-1 node whose sink arc is saturated is lifted before anything is pushed into
//   it (its label is certainly stale), so the pair nodes are not flooded and drained again.
// * Boykov-Kolmogorov (2004): search trees from s and from t grow over residual arcs until they
//   touch, the path is augmented, saturated tree arcs orphan their subtrees, which are
//   re-adopted or freed. It augments a feasible flow, so the rest is as for Dinic.
// `kAuto` picks by network shape (choose_algorithm; measured in benchmarks/maxflow.py).
// All three start from a greedy feasible flow (greedy_start: each node's source capacity sent
// to t through its own sink arc or one arc into a node with sink capacity, from the node or
// from a node up its chain of first out-arcs, i.e. its ancestors in a pruning network). It is a
// flow, not a preflow, so everything below holds unchanged from it: the maximum flow value and
// the minimal source side do not depend on where the algorithm starts.
//
// The same minimal source side from a preflow. Let f be a preflow, e(v) >= 0 its excess. For
// any X containing s but not t, summing the conservation defects over X gives
//   c(X) >= f(X, ~X) - f(~X, X) = e(t) + sum_{v in ~X, v != t} e(v)   ... (*)
// with equality in the first step iff no residual arc leaves X. At the end of phase 1 let
// Y = {v : t is not reachable from v in the residual}: it holds s (every source arc is
// saturated), every node with excess, is closed under residual arcs, so (*) is an equality with
// no excess outside: c(Y) = e(t). As e(t) is the value of a feasible flow (below), e(t) is the
// maximum flow value and, by (*), X is a minimum cut iff X holds every excess node and no
// residual arc leaves X. The least such X is the set reachable in the residual from s and from
// the nodes with excess, which is what finish() returns; it is unique (the intersection of all
// minimum cuts), i.e. the set Dinic returns (reachable from s in a maximum flow's residual).
// So both algorithms give bit-identical sides, ties going to pruning alike.
//
// A stopped push-relabel run: the preflow decomposes into s-t paths, s-to-excess-node paths and
// cycles; the s-t paths alone are a feasible flow of value e(t) (= `flow`), a valid lower
// bound. The side returned (residual reach of s and of the excess nodes) is closed under the
// infinite inner arcs, hence a valid closure whose capacity is `cut`.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "search_types.hpp"

namespace odtkit {

// Highest-label push-relabel's bookkeeping (push_relabel.hpp, behind the closure network's and
// the pruning network's on tree slices): per label, a doubly linked list of the live nodes
// holding it (for the gap rule) and a stack of the active ones. Labels are kept by the caller;
// these lists only mirror them.
struct LabelBuckets {
  std::vector<std::int32_t> next_active, next, prev;  // per node
  std::vector<std::int32_t> active_head, label_head;  // per label
  std::int32_t max_active = 0, max_label = 0;

  void assign(std::size_t n_nodes, std::size_t n_labels) {
    next_active.assign(n_nodes, -1);
    next.assign(n_nodes, -1);
    prev.assign(n_nodes, -1);
    active_head.assign(n_labels, -1);
    label_head.assign(n_labels, -1);
    max_active = max_label = 0;
  }
  // every list empty (a global relabelling rebuilds them)
  void clear() {
    std::fill(active_head.begin(), active_head.end(), -1);
    std::fill(label_head.begin(), label_head.end(), -1);
    max_active = max_label = 0;
  }
  void insert(std::int32_t v, std::int32_t k) {
    prev[v] = -1;
    next[v] = label_head[k];
    if (next[v] >= 0) prev[next[v]] = v;
    label_head[k] = v;
    if (k > max_label) max_label = k;
  }
  void remove(std::int32_t v, std::int32_t k) {
    if (prev[v] >= 0)
      next[prev[v]] = next[v];
    else
      label_head[k] = next[v];
    if (next[v] >= 0) prev[next[v]] = prev[v];
  }
  void activate(std::int32_t v, std::int32_t k) {
    next_active[v] = active_head[k];
    active_head[k] = v;
    if (k > max_active) max_active = k;
  }
  // whether v is the only node at label k (then lifting it leaves a gap)
  bool alone(std::int32_t v, std::int32_t k) const { return label_head[k] == v && next[v] < 0; }
  // the active node of the highest label, taken off its stack; -1 when none is left
  std::int32_t pop_active() {
    for (; max_active >= 1; --max_active) {
      const std::int32_t v = active_head[max_active];
      if (v >= 0) {
        active_head[max_active] = next_active[v];
        return v;
      }
    }
    return -1;
  }
  // the gap rule: nothing is left at label k, so every node at or above it gets label `dead`
  void gap(std::int32_t k, std::vector<std::int32_t>& label, std::int32_t dead) {
    for (std::int32_t j = k; j <= max_label; ++j) {
      for (std::int32_t u = label_head[j]; u >= 0; u = next[u]) label[u] = dead;
      label_head[j] = -1;
    }
    max_label = k - 1;
  }
};

enum class MaxFlowAlgorithm { kAuto, kDinic, kPushRelabel, kBoykovKolmogorov };

struct ClosureCutOutput {
  std::vector<std::uint8_t> source_side;  // 1: node on the source side (minimal min cut)
  std::int64_t flow = 0;                   // value of the flow found (== cut value if optimal)
  std::int64_t cut = 0;                    // capacity of the cut (source_side, rest)
  std::string status = "optimal";          // optimal, time_limit, interrupted, memory_limit
  std::string algorithm;                   // the one that ran (kAuto resolved)
  long long phases = 0;         // Dinic: BFS phases; push-relabel: global relabellings
  long long augmentations = 0;  // Dinic: augmenting paths; push-relabel: pushes
  double peak_memory_mb = 0.0;
  double seconds = 0.0;
};

// Throws std::invalid_argument on negative capacities, arc ends out of range, or capacities
// whose sums could overflow int64. `budget` carries the time limit and the interrupt check.
// `greedy`: start from the greedy flow (ClosureNetwork::greedy_start; same answer, fewer
// augmentations). `release_arcs`, if given, is called once the network holds its own copy of
// the arcs, so a caller can free tails/heads before the flow's own arrays are allocated.
ClosureCutOutput closure_min_cut(std::int64_t n_nodes, const std::int64_t* source_cap,
                                 const std::int64_t* sink_cap, std::int64_t n_arcs,
                                 const std::int32_t* tails, const std::int32_t* heads,
                                 Budget& budget,
                                 MaxFlowAlgorithm algorithm = MaxFlowAlgorithm::kAuto,
                                 bool greedy = true,
                                 const std::function<void()>& release_arcs = {});

// What kAuto runs on this network: Boykov-Kolmogorov when the total sink capacity is below a
// fifth of the total source capacity, else Dinic (measured in benchmarks/maxflow.py).
MaxFlowAlgorithm choose_algorithm(std::int64_t n_nodes, const std::int64_t* source_cap,
                                  const std::int64_t* sink_cap);
const char* algorithm_name(MaxFlowAlgorithm algorithm);

}  // namespace odtkit

// IP3 (ensemble pruning with feature costs, no budget row) as one minimum cut, built natively
// from the compact extraction and made smaller, exactly, before the max-flow runs
// (docs/formulations-search-and-pruning.md §7.11; odtkit.pruning._cut has the proofs).
//
// A feature-use entry (example i, feature k, node u) exists iff u is a *first-use* node (it tests
// k and no ancestor does) and i passes through u, so a tree's entries are, per first-use node u,
// the slice by_leaf[leaf_start[u] : leaf_start[end[u]]] of its examples sorted by leaf. The
// closure network has one node per split h (source arc gain_h * scale), one per (feature,
// example) pair with a positive cost (sink arc ceil(lam T c_k w_i scale), clipped), infinite arcs
// child -> parent and u -> (feature[u], i). Capacities are computed exactly as the numpy
// builder computes them, so the minimal minimum cut is the same one.
//
// The reduction (`reduce`), the rules proven in odtkit.pruning._cut:
// * dead: a split whose subtree gains nothing (all gains 0) is in no minimal minimum closure;
// * forced: with P the pairs already paid by forced splits, a split h whose parent is forced (or
//   a root) is in every minimum closure when val(h) = gain_h - unpaid_h + sum over its children
//   of max(0, val(child)) > 0 (unpaid_h: the sink capacity of h's pairs outside P); its pairs
//   join P. Repeated until nothing changes.
// * restricted (rule 5, `restrict_levels`): the minimal minimum closure of the network cut down
//   to the splits of depth <= L (forced ones in, paid pairs free) is in every minimum closure
//   of the whole (the objective is supermodular on closed sets), so it is forced too, and the
//   forcing rule runs again; for L = 0, 1, ...
// * excluded (rule 6, after rule 3 and again after rule 5): a greedy feasible flow read from
//   the slices (no network built) with residual source R0 left over proves that a split whose
//   own and live ancestors' pairs keep more than R0 of residual sink capacity is in no minimum
//   closure; such splits leave the network and their source capacities enter the bound.
// The max-flow then runs on the splits neither forced, dead nor excluded and the pairs outside
// P only, and (`merge_pairs`) pairs with the same predecessors become one node of summed
// capacity.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search_types.hpp"

namespace odtkit {

// One tree in pre-order with its compact entries (arrays owned by the caller).
struct CompactTree {
  std::int32_t n_nodes = 0;
  const std::int32_t* left = nullptr;   // -1 at leaves
  const std::int32_t* right = nullptr;  // -1 at leaves
  const std::int32_t* feature = nullptr;
  const std::int32_t* end = nullptr;    // subtree of h = [h, end[h])
  const std::int64_t* error = nullptr;  // training errors e_h
  const std::uint8_t* first_use = nullptr;
  const std::int32_t* by_leaf = nullptr;      // (N,) examples sorted by leaf
  const std::int64_t* leaf_start = nullptr;   // (n_nodes + 1,)
};

struct CompactEnsemble {
  std::vector<CompactTree> trees;
  std::int64_t n_samples = 0;
  std::int64_t n_features = 0;
  const double* costs = nullptr;         // (K,) c_k >= 0
  const std::int64_t* weight = nullptr;  // (N,) examples each one stands for (0: merged away)
};

// One round of rule 5 (restricted problems, see restrict_rounds in ensemble_cut.cpp): the depth
// limit, the restricted network its max-flow saw, the splits its cut forced and those rule 3
// forced after it, and its wall seconds.
struct RestrictRound {
  std::int32_t level = 0;
  std::int64_t n_nodes = 0, n_arcs = 0, n_forced_cut = 0, n_forced_rule = 0;
  double seconds = 0.0;
};

struct EnsembleCutOutput {
  std::vector<std::uint8_t> kept;  // per global node (tree offset + pre-order id): kept split
  std::int64_t flow = 0;           // lower bound on the integer min cut (== cut when optimal)
  std::int64_t cut = 0;            // integer capacity of the returned cut
  std::int64_t total_gain = 0;     // sum of all gains (unscaled)
  std::int64_t lost_gain = 0;      // gains of the splits not kept (unscaled)
  double paid_cost = 0.0;          // sum of c_k w_i over the pairs the kept splits pay
  std::string status = "optimal";
  std::string algorithm;  // the final max-flow's (maxflow.hpp names), empty if none ran
  long long phases = 0, augmentations = 0, iterations = 0;
  std::int64_t n_splits = 0, n_forced = 0, n_dead = 0, n_paid = 0;
  std::int64_t n_excluded = 0;  // rule 6: splits a greedy flow shows are in no minimum closure
  std::int64_t n_nodes = 0, n_arcs = 0;  // the network the max-flow ran on
  std::int64_t n_nodes_unmerged = 0, n_arcs_unmerged = 0;  // before identical pairs merged
  double reduce_seconds = 0.0, flow_seconds = 0.0, seconds = 0.0, peak_memory_mb = 0.0;
  std::vector<RestrictRound> rounds;  // rule 5's rounds, in order
};

// Throws std::invalid_argument on inconsistent trees (bad child ids, features, slices) or
// capacities that could overflow. `scale`: the power of two of odtkit.pruning._cut.
// `restrict_levels` (with `reduce`): rounds of rule 5, for the depth limits 0 .. levels - 1
// (0: none). `slice_flow`: the final max-flow on arcs read from the tree slices instead of
// arc arrays (push-relabel, "push_relabel_slices", or on the reversed network from the pairs,
// "push_relabel_slices_reverse"; the same flow value and minimal side): -1 where
// final_algorithm would run push-relabel (deep trees), 0 never, 1 always (the direction picked
// after the greedy flow: reverse where it left less sink capacity unused than source capacity
// unrouted), 2 always and forward, 3 always and reverse.
// `nest_levels`, `nest_arcs`: rule 7 (the cut at lam / 3 first, its splits left out) where the
// network left holds nest_arcs slice entries or more, that many levels deep (0: never).
EnsembleCutOutput ensemble_min_cut(const CompactEnsemble& ensemble, double lam, double scale,
                                   bool reduce, bool merge_pairs, std::int32_t restrict_levels,
                                   Budget& budget, std::int32_t slice_flow = -1,
                                   std::int32_t nest_levels = 2,
                                   std::int64_t nest_arcs = std::int64_t{20} << 20);

// The lambda-independent network (dead splits dropped, and with `merge_pairs` identical pairs
// merged) for the exact cost-error path: split nodes first, then pair nodes.
struct EnsembleNetwork {
  std::vector<std::int64_t> split_node;  // global node id of each split node
  std::vector<std::int64_t> gain;        // its gain (unscaled)
  std::vector<double> pair_cost;         // per pair node: sum of c_k w_i of its pairs
  std::vector<std::int64_t> pair_first;  // per pair node: key k * N + i of its first pair
  std::vector<std::int32_t> tails, heads;
  std::int64_t n_dead = 0, n_nodes_unmerged = 0, n_arcs_unmerged = 0;
};
EnsembleNetwork ensemble_network(const CompactEnsemble& ensemble, bool merge_pairs);

// The network ensemble_min_cut hands the max-flow at `lam` (all reductions), for measuring max-
// flow algorithms on it (benchmarks/maxflow.py): nodes are the remaining splits, then the pair
// nodes; `constant` is the capacity the forced pairs add to every cut.
struct ReducedNetwork {
  std::vector<std::int64_t> source_cap, sink_cap;
  std::vector<std::int32_t> tails, heads;
  std::int64_t constant = 0, n_splits = 0, n_forced = 0, n_dead = 0;
};
ReducedNetwork ensemble_reduced_network(const CompactEnsemble& ensemble, double lam,
                                        double scale, bool merge_pairs,
                                        std::int32_t restrict_levels);

// Check one tree's arrays (child ids after their parent in pre-order, ends, features, slices);
// throws std::invalid_argument naming the tree.
void check_compact_tree(const CompactTree& tree, std::int64_t n_samples, std::int64_t n_features,
                        std::size_t index);

}  // namespace odtkit

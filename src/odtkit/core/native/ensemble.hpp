// Extraction of a fitted scikit-learn tree ensemble for the pruning (odtkit.pruning._extract;
// docs/formulations-search-and-pruning.md §7.1): every tree renumbered in pre-order, the
// training examples routed to their leaves, the class counts of every node, and the compact
// form of the feature-use entries.
//
// Compact entries. An entry (example i, feature k, node u) has u = the first node on i's path
// testing k, so u tests k itself: u has entries iff it is a *first-use* node (internal, no strict
// ancestor tests feature[u]), and they are {(i, feature[u], u) : i in S_u}. In pre-order the
// subtree of u is [u, end[u]), so with the examples sorted by leaf (a counting sort, stable in
// the example index) S_u is the one slice by_leaf[leaf_start[u] : leaf_start[end[u]]]. A tree's
// whole entry list is therefore implicit in 8 bytes per example (leaf_of, by_leaf) plus
// per-node arrays, instead of ~24 bytes per (example, feature on its path).
//
// Routing reproduces sklearn exactly (Tree._apply_dense): a missing value (NaN) goes to the
// child missing_go_to_left names, any other value left iff (double)X32[i, f] <= threshold
// (sklearn compares the float32 feature with the float64 threshold).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search_types.hpp"

namespace odtkit {

// One sklearn tree_, arrays as sklearn stores them (node ids of the sklearn numbering).
struct SkTree {
  const std::int64_t* children_left = nullptr;   // -1 at leaves
  const std::int64_t* children_right = nullptr;  // -1 at leaves
  const std::int64_t* feature = nullptr;         // GLOBAL column at internal nodes
  const double* threshold = nullptr;
  // tree_.missing_go_to_left (1: a NaN goes left); nullptr: every NaN goes right
  const std::uint8_t* missing_go_to_left = nullptr;
  std::int64_t n_nodes = 0;
};

// One tree in pre-order (every per-node array has n_nodes entries; -1 where undefined).
struct ExtractedTree {
  std::vector<std::int32_t> left, right, parent, depth, end, feature, sk_node;
  std::vector<double> threshold;    // NaN at leaves
  std::vector<std::uint8_t> missing_left;  // 1: a missing value goes left (0 at leaves)
  std::vector<double> counts;       // (n_nodes, n_classes) row-major: class counts of S_h
  std::vector<std::int32_t> leaf_of;     // (N,) leaf reached by each example
  std::vector<std::int32_t> by_leaf;     // (N,) examples sorted by (leaf_of, index)
  std::vector<std::int64_t> leaf_start;  // (n_nodes + 1,) #examples with leaf_of < v
  std::vector<std::uint8_t> first_use;   // 1: internal, no strict ancestor tests feature[u]
};

struct ExtractOutput {
  std::vector<ExtractedTree> trees;  // the trees done (all of them unless stopped)
  std::string status = "optimal";    // optimal, time_limit, interrupted, memory_limit
};

// Checks every tree first (child ids in range, both children or none, each node reached at
// most once: no cycle or shared child, internal features in [0, n_features)) and every label
// (in [0, n_classes)); throws std::invalid_argument naming the problem. Then extracts the trees
// in order, polling `budget` (clock, Ctrl-C) before each; a stop returns the trees done so far.
ExtractOutput extract_trees(const std::vector<SkTree>& trees, const float* X, std::int64_t n_rows,
                            std::int64_t n_features, const std::int32_t* y, std::int32_t n_classes,
                            Budget& budget);

// The feature-use entries of one extracted tree as explicit lists, sorted by (u, i) (k is
// feature[u]): for each example in index order, its leaf's first-use ancestors, bucketed by
// node (a counting sort, O(entries)). Throws std::invalid_argument unless parent[0] = -1,
// 0 <= parent[v] < v (pre-order) and every leaf_of is a node id.
void tree_entries(std::int64_t n_nodes, const std::int32_t* parent, const bool* first_use,
                  std::int64_t n_rows, const std::int32_t* leaf_of,
                  std::vector<std::int64_t>& example, std::vector<std::int64_t>& node);

}  // namespace odtkit

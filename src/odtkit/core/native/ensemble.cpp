// Extraction of a fitted tree ensemble (ensemble.hpp).
#include "ensemble.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace odtkit {
namespace {

constexpr std::int64_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();

[[noreturn]] void bad_tree(std::size_t t, const std::string& what) {
  throw std::invalid_argument("tree " + std::to_string(t) + ": " + what);
}

// Checks tree `t` and fills its pre-order structure (no routing yet). `uses` (n_features
// zeros, left zero again) counts, per feature, the nodes testing it on the current DFS path.
void structure(const SkTree& sk, std::size_t t, std::int64_t n_features,
               std::vector<std::int32_t>& uses, ExtractedTree& out) {
  const std::int64_t n = sk.n_nodes;
  if (n < 1) bad_tree(t, "has no nodes");
  if (n > kMaxInt32) bad_tree(t, "has more than 2**31 - 1 nodes");
  for (std::int64_t v = 0; v < n; ++v) {
    const std::int64_t l = sk.children_left[v], r = sk.children_right[v];
    if (l == -1 && r == -1) continue;
    if (l < 0 || l >= n || r < 0 || r >= n)
      bad_tree(t, "node " + std::to_string(v) + " has child ids out of range [0, " +
                      std::to_string(n) + ") (both children -1 at a leaf)");
    const std::int64_t f = sk.feature[v];
    if (f < 0 || f >= n_features)
      bad_tree(t, "node " + std::to_string(v) + " tests feature " + std::to_string(f) +
                      ", out of range [0, " + std::to_string(n_features) + ")");
  }
  const auto cap = static_cast<std::size_t>(n);
  for (auto* a : {&out.left, &out.right, &out.parent, &out.depth, &out.end, &out.feature,
                  &out.sk_node})
    a->reserve(cap);
  out.threshold.reserve(cap);
  out.missing_left.reserve(cap);
  out.first_use.reserve(cap);
  std::vector<std::uint8_t> seen(cap, 0);
  // explicit stack: enter frames (sk >= 0) and exit frames (sk = -1 - u, ends u's subtree)
  struct Frame {
    std::int64_t sk;
    std::int32_t parent;
    bool is_right;
  };
  std::vector<Frame> stack{{0, -1, false}};
  std::int32_t next = 0;
  while (!stack.empty()) {
    const Frame fr = stack.back();
    stack.pop_back();
    if (fr.sk < 0) {
      const auto u = static_cast<std::int32_t>(-1 - fr.sk);
      out.end[u] = next;
      --uses[out.feature[u]];
      continue;
    }
    const std::int64_t v = fr.sk;
    if (seen[v]) bad_tree(t, "node " + std::to_string(v) + " is reached twice (a cycle or a shared child)");
    seen[v] = 1;
    const std::int32_t u = next++;
    out.sk_node.push_back(static_cast<std::int32_t>(v));
    out.parent.push_back(fr.parent);
    out.depth.push_back(fr.parent < 0 ? 0 : out.depth[fr.parent] + 1);
    if (fr.is_right) out.right[fr.parent] = u;
    out.end.push_back(u + 1);
    const std::int64_t l = sk.children_left[v];
    if (l == -1) {
      out.left.push_back(-1);
      out.right.push_back(-1);
      out.feature.push_back(-1);
      out.threshold.push_back(std::numeric_limits<double>::quiet_NaN());
      out.missing_left.push_back(0);
      out.first_use.push_back(0);
      continue;
    }
    const auto f = static_cast<std::int32_t>(sk.feature[v]);
    out.left.push_back(u + 1);  // pre-order: the left child follows its parent
    out.right.push_back(-1);    // set when the right child is entered
    out.feature.push_back(f);
    out.threshold.push_back(sk.threshold[v]);
    out.missing_left.push_back(
        sk.missing_go_to_left != nullptr && sk.missing_go_to_left[v] != 0 ? 1 : 0);
    out.first_use.push_back(uses[f] == 0 ? 1 : 0);
    ++uses[f];
    stack.push_back({-1 - static_cast<std::int64_t>(u), -1, false});
    stack.push_back({sk.children_right[v], u, true});
    stack.push_back({l, u, false});
  }
}

// Routes every example through tree `out` (structure filled) and fills the rest.
void route(ExtractedTree& out, const float* X, std::int64_t n_rows, std::int64_t n_features,
           const std::int32_t* y, std::int32_t n_classes) {
  const auto nn = static_cast<std::int64_t>(out.left.size());
  // kLanes rows walk the tree together, one step each per sweep: the child is an index
  // computed from the comparison, with no branch on the data, and a lane whose row reached its
  // leaf takes the next row (a branch taken once per row). One row at a time, each step was a
  // mispredicted branch and a cache miss waiting on the one before; here the lanes' misses
  // overlap (scikit-learn's default forest, 100 full trees x 100 k rows: extract() 1.37 -> 0.68
  // CPU s; 32 lanes 0.71).
  struct Node {
    double threshold;
    std::int32_t feature;  // -1 at a leaf
    std::int32_t child[2];  // left, right
    std::int32_t missing_left;
  };
  std::vector<Node> nodes(static_cast<std::size_t>(nn));
  for (std::int64_t u = 0; u < nn; ++u)
    nodes[u] = {out.threshold[u], out.feature[u],
                {static_cast<std::int32_t>(u) + 1, out.right[u]},
                out.missing_left[u] != 0 ? 1 : 0};
  out.leaf_of.resize(static_cast<std::size_t>(n_rows));
  constexpr int kLanes = 16;
  std::int32_t v[kLanes];
  std::int64_t r[kLanes];  // the lane's row, -1 once no row is left for it
  std::int64_t next_row = 0;
  int busy = 0;
  for (int l = 0; l < kLanes; ++l) {
    v[l] = 0;
    r[l] = next_row < n_rows ? next_row++ : -1;
    busy += r[l] >= 0;
  }
  while (busy > 0) {
    for (int l = 0; l < kLanes; ++l) {
      if (r[l] < 0) continue;
      const Node& nd = nodes[v[l]];
      if (nd.feature < 0) {
        out.leaf_of[r[l]] = v[l];
        v[l] = 0;
        r[l] = next_row < n_rows ? next_row++ : -1;
        busy -= r[l] < 0;
        continue;
      }
      const float x = X[r[l] * n_features + nd.feature];
      // sklearn's order: NaN goes where missing_left says (x <= t is false for NaN)
      const bool right = !((static_cast<double>(x) <= nd.threshold) |
                           ((x != x) & (nd.missing_left != 0)));
      v[l] = nd.child[right];
    }
  }
  // class counts: at the leaves, then summed up (children follow parents in pre-order)
  std::vector<std::int64_t> cnt(static_cast<std::size_t>(nn * n_classes), 0);
  for (std::int64_t i = 0; i < n_rows; ++i) ++cnt[out.leaf_of[i] * n_classes + y[i]];
  for (std::int64_t h = nn - 1; h > 0; --h) {
    const std::int64_t p = out.parent[h];
    for (std::int32_t c = 0; c < n_classes; ++c) cnt[p * n_classes + c] += cnt[h * n_classes + c];
  }
  out.counts.assign(cnt.begin(), cnt.end());
  // counting sort by leaf, stable in the example index
  out.leaf_start.assign(static_cast<std::size_t>(nn + 1), 0);
  for (std::int64_t i = 0; i < n_rows; ++i) ++out.leaf_start[out.leaf_of[i] + 1];
  for (std::int64_t v = 0; v < nn; ++v) out.leaf_start[v + 1] += out.leaf_start[v];
  std::vector<std::int64_t> pos(out.leaf_start.begin(), out.leaf_start.end() - 1);
  out.by_leaf.resize(static_cast<std::size_t>(n_rows));
  for (std::int64_t i = 0; i < n_rows; ++i)
    out.by_leaf[pos[out.leaf_of[i]]++] = static_cast<std::int32_t>(i);
}

}  // namespace

ExtractOutput extract_trees(const std::vector<SkTree>& trees, const float* X, std::int64_t n_rows,
                            std::int64_t n_features, const std::int32_t* y, std::int32_t n_classes,
                            Budget& budget) {
  if (n_rows < 1) throw std::invalid_argument("X must have at least one row");
  if (n_rows > kMaxInt32) throw std::invalid_argument("X has more than 2**31 - 1 rows");
  if (n_features < 1) throw std::invalid_argument("X must have at least one column");
  if (n_classes < 1) throw std::invalid_argument("n_classes must be >= 1");
  for (std::int64_t i = 0; i < n_rows; ++i)
    if (y[i] < 0 || y[i] >= n_classes)
      throw std::invalid_argument("y[" + std::to_string(i) + "] = " + std::to_string(y[i]) +
                                  " is not a class code in [0, n_classes)");
  ExtractOutput out;
  out.trees.resize(trees.size());
  std::vector<std::int32_t> uses(static_cast<std::size_t>(n_features), 0);
  for (std::size_t t = 0; t < trees.size(); ++t) structure(trees[t], t, n_features, uses, out.trees[t]);
  std::size_t done = 0;
  catch_out_of_memory(budget, [&] {
    for (; done < trees.size(); ++done) {
      if (budget.check_clock()) break;
      route(out.trees[done], X, n_rows, n_features, y, n_classes);
    }
  });
  out.trees.resize(done);
  out.status = status_name(budget.status());
  return out;
}

void tree_entries(std::int64_t n_nodes, const std::int32_t* parent, const bool* first_use,
                  std::int64_t n_rows, const std::int32_t* leaf_of,
                  std::vector<std::int64_t>& example, std::vector<std::int64_t>& node) {
  if (n_nodes < 1 || parent[0] != -1) throw std::invalid_argument("parent[0] must be -1");
  for (std::int64_t v = 1; v < n_nodes; ++v)
    if (parent[v] < 0 || parent[v] >= v)
      throw std::invalid_argument("parent[" + std::to_string(v) + "] is not an earlier node");
  for (std::int64_t i = 0; i < n_rows; ++i)
    if (leaf_of[i] < 0 || leaf_of[i] >= n_nodes)
      throw std::invalid_argument("leaf_of[" + std::to_string(i) + "] is not a node id");
  // first-use ancestors-or-self of every node, descending (CSR); a node's are its parent's
  // plus itself, and parents come first in pre-order
  std::vector<std::int64_t> len(static_cast<std::size_t>(n_nodes), 0);
  std::vector<std::int64_t> ptr(static_cast<std::size_t>(n_nodes + 1), 0);
  for (std::int64_t v = 0; v < n_nodes; ++v) {
    len[v] = (v ? len[parent[v]] : 0) + (first_use[v] ? 1 : 0);
    ptr[v + 1] = ptr[v] + len[v];
  }
  std::vector<std::int32_t> chain(static_cast<std::size_t>(ptr[n_nodes]));
  for (std::int64_t v = 0; v < n_nodes; ++v) {
    std::int64_t at = ptr[v];
    if (first_use[v]) chain[at++] = static_cast<std::int32_t>(v);
    if (v) std::copy(chain.begin() + ptr[parent[v]], chain.begin() + ptr[parent[v] + 1],
                     chain.begin() + at);
  }
  // bucket sizes, then each example into its leaf's buckets in index order
  std::vector<std::int64_t> start(static_cast<std::size_t>(n_nodes + 1), 0);
  for (std::int64_t i = 0; i < n_rows; ++i)
    for (std::int64_t j = ptr[leaf_of[i]]; j < ptr[leaf_of[i] + 1]; ++j) ++start[chain[j] + 1];
  for (std::int64_t v = 0; v < n_nodes; ++v) start[v + 1] += start[v];
  const auto m = static_cast<std::size_t>(start[n_nodes]);
  example.resize(m);
  node.resize(m);
  for (std::int64_t v = 0; v < n_nodes; ++v)
    std::fill(node.begin() + start[v], node.begin() + start[v + 1], v);
  for (std::int64_t i = 0; i < n_rows; ++i)
    for (std::int64_t j = ptr[leaf_of[i]]; j < ptr[leaf_of[i] + 1]; ++j)
      example[start[chain[j]]++] = i;
}

}  // namespace odtkit

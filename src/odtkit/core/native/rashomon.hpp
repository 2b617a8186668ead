// The Rashomon set: every tree whose objective is at most a bound, counted and addressed
// exactly, without listing it (odtkit.rashomon; docs/rashomon.md).
//
// A sub-problem is (support over points, remaining depth), memoized as in the dp. For a budget
// b (count units: misclassified weight + Lambda * leaves) it keeps a histogram over the exact
// keys (misclassified weight, leaves) of all its trees of value <= b, each key with the number
// of trees having it, and the *blocks* that make that number up: a leaf label, or one split with
// one key of its left child and one of its right child (count = product of the two). Children
// are solved with the budget b minus a lower bound on (then the optimum of) their sibling, so
// only sub-problems that can still be part of a good tree are ever built.
//
// A histogram built for budget b lists every tree of value <= b, so its first key is the
// sub-problem's optimum when it is not empty, and when it is empty the optimum exceeds b. A
// later request with a larger budget rebuilds the node; its keys are sorted by (value, leaves,
// misclassified) and all keys of value <= b are unchanged by a larger budget, so they keep their
// positions and the blocks of the parents that point at them stay valid.
//
// The trees of one key are ordered by their blocks (leaves by label, then splits by feature,
// then the left key, then the right key, then left index major); index i of the whole set is
// decoded by walking the blocks (unrank), which needs only the counts: nothing is listed until
// asked for.
//
// Side constraints (odtkit.constraints, as the search carries them): a feature not allowed is
// never split on; a leaf lighter than the minimum leaf support is no tree (so a split is a
// member only through its children's members); with a split budget, every key also carries the
// summed cost of its splits (an integer) and a key above the budget is dropped at every node,
// so the counts are exact per cost and a parent adds its children's costs. Every pruning bound
// of the unconstrained problem stays valid (the constrained trees are a subset of its trees),
// and a split either side of which is lighter than the support is skipped in both the bounds
// and the listing (no tree through it meets the support).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "count.hpp"
#include "depth2.hpp"
#include "problem.hpp"
#include "search_types.hpp"

namespace odtkit {

// The constraints the set honours besides the depth (the minimum leaf support is
// config.min_leaf_weight, a share of the total weight as in the dp).
struct RashomonRules {
  std::vector<char> allowed;     // per feature: may it be split on (empty: every feature)
  std::vector<int> split_costs;  // per feature, >= 0: the cost of one split on it (empty: 0)
  int budget = -1;               // most summed split cost of a tree (-1: no budget)
};

class RashomonSet {
 public:
  struct Key {
    double misclassified = 0.0;  // count units (weight)
    int leaves = 0;
    double value = 0.0;          // misclassified + Lambda * leaves
    int cost = 0;                // summed split cost (0 without a budget)
  };

  // Builds the set {trees of depth <= config.max_depth (-1: unlimited) with value <= bound}
  // where `bound` is normalized (objective units); the library tolerance (count_tolerance) is
  // added. `majority_only`: leaves predict only a class of maximal weight of their rows.
  // config.time_limit / memory_limit_mb / node_limit and `interrupted` stop the build early:
  // then complete() is false and the set holds only trees that truly belong to it. `rules`:
  // the trees must also meet them (and config.min_leaf_weight), see the file's comment.
  // `count_only`: keep each sub-problem's histogram (keys and counts) but not its blocks, so
  // the set can be counted (count, keys, key_counts) but not listed: tree, trees, rank and
  // count_without throw std::logic_error. The blocks are most of the memory and time at a
  // large bound (one per pair of child keys), and a count needs none of them.
  RashomonSet(const Problem& problem, const SearchConfig& config, double bound,
              bool majority_only, std::function<bool()> interrupted = {},
              RashomonRules rules = {}, bool count_only = false);
  bool count_only() const { return count_only_; }

  // Two phases in one memo (odtkit.core.rashomon; docs/rashomon.md §4.1): a set prepared by
  // this constructor certifies the optimum itself (certify), then builds the set for the
  // bound its caller takes from it (build_to), so the build finds every sub-problem the
  // optimum's search solved instead of a separate dp searching them again. `rules` must be
  // empty for certify (the search certifies a constrained optimum).
  RashomonSet(const Problem& problem, const SearchConfig& config, bool majority_only,
              RashomonRules rules = {}, bool count_only = false);
  // Solves the root's optimum exactly, every child to the cap the build of the bound
  // (1 + epsilon) * incumbent (incumbent + epsilon with `absolute`) will ask for, and keeps
  // one optimal tree (optimal_code). False when a limit stopped it first (status says which;
  // the set is then neither certified nor built, and the caller certifies another way).
  bool certify(const Problem& problem, const SearchConfig& config, double epsilon,
               bool absolute, std::function<bool()> interrupted = {});
  bool certified() const { return certified_; }
  // an optimal tree (pre-order code, search_types.hpp) and its value (count units)
  const std::vector<int>& optimal_code() const { return optimal_code_; }
  double optimum() const { return root_ >= 0 ? nodes_[root_].upper : 0.0; }
  // the build, once: as the building constructor, for `bound` (normalized), limits anew
  void build_to(const Problem& problem, const SearchConfig& config, double bound,
                std::function<bool()> interrupted = {});

  bool complete() const { return complete_; }
  const std::string& status() const { return status_; }
  double total_weight() const { return total_weight_; }
  double penalty() const { return penalty_; }
  std::size_t n_subproblems() const { return nodes_.size(); }
  double seconds() const { return seconds_; }
  double peak_memory_mb() const { return peak_memory_mb_; }

  // A count-only build counts its root's trees without pairing their keys (count() is exact
  // at once); this pairs them, once, so that keys() and key_counts() can be read (they throw
  // std::logic_error before). Nothing to do for any other set. Runs after the build, outside
  // its limits: one table of the build's dense size (at most 64 MB) and the root's keys.
  void finish_root();
  // the root histogram: keys in set order and the number of trees of each
  const std::vector<Key>& keys() const;
  std::vector<Count> key_counts() const;
  Count count() const;
  // the trees that never split on `feature`
  Count count_without(int feature) const;
  // pre-order encoding (search_types.hpp) of the index-th tree, 0 <= index < count()
  std::vector<int> tree(const Count& index) const;
  // the key of the index-th tree (its position in the root histogram)
  std::size_t key_of(const Count& index) const;
  // trees start .. start + n - 1: encodings appended to `codes`, each one's length and key
  void trees(const Count& start, std::size_t n, std::vector<int>& codes,
             std::vector<int>& lengths, std::vector<int>& keys) const;
  // The index of the tree with pre-order encoding `code` in the set (the inverse of tree()),
  // or false when the set does not hold it. Walks the tree's own path through the memo: one
  // lookup per node of the tree, whatever the size of the set (a partial set's membership).
  bool rank(const std::vector<int>& code, Count& index) const;


 private:
  // One leaf, or one split with one key on each side: count 1, or the product of the
  // children's counts of those keys.
  struct Block {
    int option;          // -(k+1): a leaf of class k; s >= 0: split number s of the node
    std::uint32_t left;  // key positions in the children (splits only)
    std::uint32_t right;
  };
  struct Split {
    int feature;
    int left;   // node ids
    int right;
  };
  struct Node {
    std::vector<std::uint64_t> support;
    int depth = 0;
    // the optimum: lower <= OPT <= upper, equal when `exact` (set up by materialize)
    bool prepared = false, exact = false;
    double lower = 0.0, upper = 0.0;
    double budget = -1.0;  // the histogram holds every tree of value <= budget (< 0: unbuilt)
    bool complete = true;
    std::vector<Key> keys;
    std::vector<Count> counts;           // trees per key
    std::vector<std::uint32_t> first;    // blocks of key i: [first[i], first[i + 1])
    std::vector<Block> blocks;
    std::vector<Count> block_end;  // the trees of key i up to and including each block
    std::vector<Split> splits;
  };
  std::uint64_t hash(const std::uint64_t* support, int depth) const;
  int node_id(const std::uint64_t* support, int depth);
  int find_node(const std::uint64_t* support, int depth) const;
  int find_node(const std::uint64_t* support, int depth, std::uint64_t hash) const;
  // a new memo entry (the support is not in the memo at that depth), `hash` its hash
  int insert_node(const std::uint64_t* support, int depth, std::uint64_t hash);
  // A sub-problem's lower bound (exact: it is its optimum) from the memo, or from its best
  // leaf and the two-leaf equivalent-points bound when it has no entry yet (id -1).
  struct Peek {
    int id;
    double lower;
    bool exact;
    std::uint64_t hash;  // of (support, depth)
  };
  Peek peek(const std::uint64_t* support, int depth, const double* class_weight) const;
  // the bound of a sub-problem not in the memo (id -1): its best leaf, two leaves
  Peek initial(const std::uint64_t* support, int depth, const double* class_weight) const;
  // The sides of `support` split on `feature` and their class weights; false when one side is
  // empty (the split is not admissible), or the rules exclude the split (a feature not
  // allowed, a cost above the budget, a side lighter than the minimum leaf support).
  bool split_on(const std::uint64_t* support, std::size_t feature, const double* weight,
                double total, double* left_weight, double* right_weight, std::uint64_t* left,
                std::uint64_t* right) const;
  // the memo entry of a sub-problem, its bounds set up
  // (`known`: the support's peek, nothing inserted at its depth since: no second lookup)
  int materialize(const std::uint64_t* support, int depth, const double* class_weight,
                  const Peek* known = nullptr);
  void solve_optimum(int id, double cap);
  // the admissible splits of a support as (value of the one-split tree, feature), in
  // increasing order (the arrays are split_on's scratch)
  std::vector<std::pair<double, int>> order_splits(const std::uint64_t* support,
                                                   const double* weight, double total,
                                                   double* left_weight, double* right_weight,
                                                   std::uint64_t* left,
                                                   std::uint64_t* right) const;
  // certify's root: every split resolved up to the limit upper * per_unit + extra, `upper`
  // the incumbent at that time (the build's budget for it), in the one-split trees' order
  void solve_root(int id, double per_unit, double extra);
  // pre-order code of a tree of `value` (exact) on the support, appended to `out`
  void extract(const std::uint64_t* support, int depth, double value, std::vector<int>& out);
  // one phase (certify, build_to): the problem and a Budget of the config's limits set up
  template <class Phase>
  void run(const Problem& problem, const SearchConfig& config,
           std::function<bool()> interrupted, Phase&& phase);
  // The exact optimum of a depth-two node from the pair counts of its support
  // (Depth2Solver::pair_counts, one pass over its points) instead of a memo entry per
  // depth-one child: false when the counts are not available (a limit stopped them), and the
  // generic recursion runs instead. Only on integer weights without rules (see use_depth2_).
  bool solve_depth2(int id);
  // its search over the pair counts F of `support` (FixedK: the number of classes, 0: any)
  template <int FixedK>
  double depth2_optimum(const double* F, const std::uint64_t* support);
  void ensure(int id, double budget);
  void build(int id, double budget);
  void unrank(int id, std::size_t key, Count index, std::vector<int>& out) const;
  bool locate(int id, const std::vector<int>& code, std::size_t& pos, std::size_t& key,
              Count& index) const;
  const std::vector<Count>& counts_without(int id, int feature,
                                           std::vector<std::vector<Count>>& memo,
                                           std::vector<char>& done) const;
  std::size_t bytes_in_use() const;

  const Problem* problem_ = nullptr;  // only while building
  Budget* budget_ = nullptr;          // only while building
  std::size_t n_words_ = 0;
  int n_classes_ = 0;
  double total_weight_ = 0.0, penalty_ = 0.0, tolerance_ = 0.0, zero_weight_ = 0.0;
  // far below any real difference of two values, far above the rounding of their sums
  double slack_ = 0.0;
  bool majority_only_ = false;
  bool count_only_ = false;
  int depth_ = 0;  // the root's remaining depth
  bool built_ = false, certified_ = false;
  std::vector<int> optimal_code_;
  // Depth-two optima by pair counts (solve_depth2): integer weights, so every count is an
  // exact integer and the values equal the generic recursion's sums to the last bit; no
  // feature mask, split costs or minimum leaf support (the counts do not see them). Built at
  // its first use, freed with the build (it holds M^2 K doubles per cached slot).
  bool use_depth2_ = false;
  std::unique_ptr<Depth2Solver> depth2_;
  std::vector<double> pair_scratch_;  // depth2_optimum's per-feature bests (two classes)
  // two classes, integer weights of total <= 16,000 and an integral Lambda: depth2_optimum's
  // 16-bit kernel (depth2_two_classes_small) and its scratch
  bool small_integers_ = false;
  std::vector<std::int16_t> pair_small_;
  // Count-only builds on integer weights add each pair of child keys into a dense table over
  // (leaves, misclassified) instead of a hash map: one scratch table per depth (a build has at
  // most one frame per depth on the stack), kept zero between builds through the list of the
  // cells it touched.
  struct Scratch {
    std::vector<Count::u128> cells;
    std::vector<std::uint32_t> touched;
  };
  std::vector<Scratch> scratch_;
  // A node's keys grouped by leaf count (group l: start[l] .. start[l + 1]), each group in
  // increasing misclassified weight, with their counts: the dense table's fast path.
  struct Grouped {
    std::vector<std::uint32_t> start, wrong;
    std::vector<std::uint64_t> count;
    Count::u128 total = 0;
  };
  // false when a count or the total does not fit in 64 bits, or a key has `rows` leaves or
  // more (the checked pair loop serves those)
  static bool group_keys(const Node& node, std::size_t rows, Grouped& out);
  // the order of a node's keys (see the file's comment), given in order of discovery
  static std::vector<std::uint32_t> set_order(const std::vector<Key>& found, double slack);
  // the number of trees pairing a key of L with a key of R within the budget whose
  // per-leaf-count thresholds are `threshold` (the dense table's rows), without their keys
  Count count_pairs(const Node& L, const Node& R, const std::vector<long long>& threshold) const;
  // the root's count when its keys wait for finish_root, and what finish_root needs
  bool root_deferred_ = false;
  Count root_count_;
  std::size_t root_rows_ = 0, root_width_ = 0;
  std::vector<long long> root_threshold_;
  double root_budget_ = 0.0;
  std::size_t scratch_bytes_ = 0;
  void require_blocks(const char* what) const;
  double min_leaf_ = 0.0;  // count units (0: no minimum leaf support)
  RashomonRules rules_;
  std::deque<Node> nodes_;
  // open addressing over (hash, node id); -1 marks a free slot; at most half full
  std::vector<std::uint64_t> slot_hash_;
  std::vector<int> slot_id_;
  std::size_t block_bytes_ = 0;
  // the lists of the builds on the stack, not yet a node's arrays (build)
  std::size_t transient_bytes_ = 0;
  int root_ = -1;
  bool complete_ = true;
  std::string status_ = "optimal";
  double seconds_ = 0.0, peak_memory_mb_ = 0.0;
};

}  // namespace odtkit

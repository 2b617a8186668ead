// Queue-based DP over supports: GOSDT Algorithm 1 (Lin et al. 2020), corrected
// (docs/formulations-search-and-pruning.md §3.8, §9 corrections 3-5).
//
// Graph. A vertex is a sub-problem (support over points, remaining depth; depth -1 when
// unlimited) with its leaf cost, lb <= R* <= ub (count units) and, once expanded, the list of
// its valid splits (j, child0, child1) and reverse edges to its parents. Supports strictly
// shrink along edges, so the graph is a DAG.
// Bounds. A new vertex starts at ub = leaf, lb = min(leaf, eq + 2 Lambda) (§9 correction 4) and
// is solved at once by the terminal tests of §2.5 (depth 0, pure, mis - eq <= Lambda). The DP
// step takes the minimum over the leaf AND every split (§9 correction 3), so lb stays a valid
// lower bound on R* (all valid splits are always included) and ub is always realised by the
// tree that extract() reads back (argmin over splits of the children's ub).
// Queue. Entries are (class, priority, FIFO sequence): UPDATE (a child changed, re-aggregate)
// before EXPLORE; inside a class the larger support weight minus lb first. A vertex has at most
// one pending entry per class. Popping a vertex re-aggregates its bounds; if they changed, all
// its parents are queued for UPDATE; if it is still unsolved, the unsolved children of every
// split that can still beat its ub are queued for EXPLORE (expanding them on first pop).
// Deviation from the printed loop: an UPDATE pop that changes nothing stops there instead of
// re-queueing the children (they are still queued or at work below); on car-evaluation
// (lam = 0.01) this cuts pops 6x. Should the work items ever run out before the root is solved,
// the main loop re-explores from the root (stats["root_requeues"]; not observed so far).
// Anytime. [root.lb, root.ub] bounds the optimum at every moment; root.lb only rises, root.ub
// only falls. The greedy tree of §3.2 (or config.initial_tree) seeds ub by expanding the
// vertices on its path, which keeps extract() consistent with ub.
// An external upper_bound only tightens the root's relevance test and the stopping rule; if no
// tree reaches it the search drops it (stats["upper_bound_invalid"]) and continues.
#include "dp_queue.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "greedy.hpp"
#include "paged.hpp"
#include "search_common.hpp"

namespace odtkit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::uint32_t kNoNode = 0xffffffffu;

// Plain data in pages (paged.hpp): the memory limit sees every byte and teardown is O(pages).
struct Node {
  std::uint64_t hash;
  const std::uint64_t* support;  // W words in the word arena
  const double* cw;              // K class weights in the weight arena
  double leaf, lb, ub, weight;
  double eq;
  double support_weight;  // Problem::support
  int depth;
  std::uint32_t split_begin = 0, split_count = 0;
  std::uint32_t first_parent = kNoNode, last_parent = kNoNode;  // reverse edges, in order
  std::uint32_t n_parents = 0;
  bool expanded = false, queued_update = false, queued_explore = false;
};

// A reverse edge: `parent` has a split with this vertex as a child; `next` links the list.
struct ParentEdge {
  std::uint32_t parent, next;
};

struct Split {
  int feature;
  std::uint32_t a, b;  // child vertices (x_j = 0, x_j = 1)
};

struct QueueItem {
  int cls;  // 1 = UPDATE, 0 = EXPLORE
  double priority;
  std::uint64_t seq;
  std::uint32_t node;
};
struct QueueOrder {
  // std::priority_queue pops the largest: higher class, then larger priority, then older
  bool operator()(const QueueItem& x, const QueueItem& y) const {
    if (x.cls != y.cls) return x.cls < y.cls;
    if (x.priority != y.priority) return x.priority < y.priority;
    return x.seq > y.seq;
  }
};

inline int child_depth(int d) { return d < 0 ? d : d - 1; }

class QueueDP {
 public:
  QueueDP(const Problem& p, const SearchConfig& c)
      : P_(p),
        K_(p.n_classes()),
        M_(static_cast<int>(p.n_features())),
        W_(p.n_words()),
        tau_(count_tolerance(p.total_weight())),
        zero_(zero_weight(p.total_weight())),
        use_eq_(c.bound_on("equivalent_points")),
        initial_(p, c),
        slots_(1024, kNoNode),
        mask_(1023),
        s0_(W_),
        s1_(W_),
        c0_(static_cast<std::size_t>(K_)),
        c1_(static_cast<std::size_t>(K_)) {}

  // Vertex for (s, depth), created with its initial bounds on first use. `cw`, `eq` and `sup`
  // are the class weights, equivalent-point minority and support weight of s (computed by the
  // caller).
  std::uint32_t get(const std::uint64_t* s, int depth, const double* cw, double eq, double sup) {
    const std::uint64_t h =
        words::hash(s, W_, static_cast<std::uint64_t>(static_cast<std::int64_t>(depth) + 2));
    std::size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      const std::uint32_t v = slots_[i];
      if (v == kNoNode) break;
      const Node& n = nodes_[v];
      if (n.hash == h && n.depth == depth && std::equal(s, s + W_, n.support)) return v;
    }
    const std::uint32_t v = static_cast<std::uint32_t>(nodes_.size());
    Node n;
    n.hash = h;
    n.support = words_.copy(s, W_);
    n.cw = weights_.copy(cw, static_cast<std::size_t>(K_));
    n.depth = depth;
    double weight = 0.0;
    for (int k = 0; k < K_; ++k) weight += cw[k];
    n.weight = weight;
    n.eq = use_eq_ ? eq : 0.0;
    n.support_weight = sup;
    const LeafBound b = initial_(cw, n.eq, depth, sup);  // terminal: lb = leaf (§2.5)
    n.leaf = b.leaf;
    n.ub = b.leaf;
    n.lb = b.lb;
    nodes_.push_back(n);
    slots_[i] = v;
    if (nodes_.size() * 2 > slots_.size()) grow();
    return v;
  }

  std::uint32_t root() {
    std::vector<double> cw(static_cast<std::size_t>(K_));
    P_.class_weights(P_.all_points().data(), cw.data());
    const double eq = use_eq_ ? P_.minority(P_.all_points().data()) : 0.0;
    return get(P_.all_points().data(), max_depth_, cw.data(), eq,
               P_.support(P_.all_points().data(), cw.data()));
  }

  void set_max_depth(int d) { max_depth_ = d; }
  Node& node(std::uint32_t v) { return nodes_[v]; }
  bool solved(std::uint32_t v) const { return nodes_[v].ub - nodes_[v].lb <= tau_; }
  std::size_t n_nodes() const { return nodes_.size(); }
  // Every byte of the graph and the queue (pages and the slot array).
  std::size_t bytes() const {
    return words_.bytes() + weights_.bytes() + nodes_.bytes() + splits_.bytes() +
           edges_.bytes() + paged::vector_bytes(slots_) + queue_.bytes();
  }
  // What the next step may allocate, at most: expanding the popped vertex creates up to 2M
  // vertices, M splits and 2M reverse edges and queues its parents and up to 2M children (a
  // new page of each container and a slot-array rehash on top). Checked before the step, so
  // the search stops before it would cross the memory limit.
  std::size_t step_bytes_ahead() const {
    const std::size_t m = static_cast<std::size_t>(M_);
    std::size_t ahead = 2 * m * (W_ * sizeof(std::uint64_t) + K_ * sizeof(double)) +
                        2 * paged::kPageBytes + std::max(W_ * sizeof(std::uint64_t), K_ * sizeof(double));
    ahead += 2 * m * sizeof(Node) + m * sizeof(Split) + 2 * m * sizeof(ParentEdge) +
             (2 * m + max_parents_) * sizeof(QueueItem) + 4 * paged::kPageBytes;
    if ((nodes_.size() + 2 * m) * 2 > slots_.size()) ahead += 2 * paged::vector_bytes(slots_);
    return ahead;
  }

  // Create the split list of v (children via get()) and the reverse edges.
  void expand(std::uint32_t v) {
    if (nodes_[v].expanded) return;
    // pages never move: the support and class weights stay valid while children are created
    const std::uint64_t* s = nodes_[v].support;
    const double* cw = nodes_[v].cw;
    const double n = nodes_[v].weight, eq = nodes_[v].eq, sup = nodes_[v].support_weight;
    const int cd = child_depth(nodes_[v].depth);
    const std::uint32_t begin = static_cast<std::uint32_t>(splits_.size());
    if (nodes_[v].depth != 0) {
      for (int j = 0; j < M_; ++j) {
        const std::uint64_t* xj = P_.feature_words(static_cast<std::size_t>(j));
        const double n1 = P_.split_class_weights(s, xj, cw, c1_.data(), c0_.data());
        // a side without weight costs at least the parent's optimum (same as dp.cpp)
        if (n1 <= zero_ || n - n1 <= zero_) continue;
        // under a minimum leaf support both sides must reach it (same as dp.cpp)
        const double sup1 = P_.support_and(s, xj, n1);
        if (initial_.light(sup1) || initial_.light(sup - sup1)) continue;
        const double eq1 = use_eq_ ? P_.minority_and(s, xj) : 0.0;
        words::and_not_into(s0_.data(), s, xj, W_);
        words::and_into(s1_.data(), s, xj, W_);
        const std::uint32_t a =
            get(s0_.data(), cd, c0_.data(), std::max(0.0, eq - eq1), sup - sup1);
        const std::uint32_t b = get(s1_.data(), cd, c1_.data(), eq1, sup1);
        add_parent(a, v);
        add_parent(b, v);
        splits_.push_back(Split{j, a, b});
      }
    }
    // marked expanded only now: an expansion cut short by bad_alloc leaves an unexpanded vertex
    Node& nv = nodes_[v];
    nv.expanded = true;
    nv.split_begin = begin;
    nv.split_count = static_cast<std::uint32_t>(splits_.size()) - begin;
    if (nv.split_count == 0) nv.lb = nv.ub = nv.leaf;  // no valid split: a leaf
  }

  // The DP step of §3.8 (leaf included). Returns true when lb or ub changed.
  bool aggregate(std::uint32_t v) {
    Node& p = nodes_[v];
    if (!p.expanded) return false;
    double L = p.leaf, U = p.leaf;
    for (std::uint32_t k = p.split_begin; k < p.split_begin + p.split_count; ++k) {
      const Node& a = nodes_[splits_[k].a];
      const Node& b = nodes_[splits_[k].b];
      L = std::min(L, a.lb + b.lb);
      U = std::min(U, a.ub + b.ub);
    }
    const double new_ub = std::min(p.ub, U);
    const double new_lb = std::min(std::max(p.lb, L), new_ub);
    if (new_lb == p.lb && new_ub == p.ub) return false;
    p.lb = new_lb;
    p.ub = new_ub;
    return true;
  }

  void push(std::uint32_t v, int cls) {
    Node& n = nodes_[v];
    bool& flag = cls == 1 ? n.queued_update : n.queued_explore;
    if (flag) return;
    flag = true;
    queue_.push(QueueItem{cls, n.weight - n.lb, seq_++, v});
  }

  // One pop of Algorithm 1. `threshold` caps the root's relevance test (external upper bound).
  void step(std::uint32_t root, double threshold) {
    const QueueItem item = queue_.top();
    queue_.pop();
    const std::uint32_t v = item.node;
    (item.cls == 1 ? nodes_[v].queued_update : nodes_[v].queued_explore) = false;
    if (solved(v)) return;
    expand(v);
    if (aggregate(v)) {
      for (std::uint32_t e = nodes_[v].first_parent; e != kNoNode; e = edges_[e].next)
        push(edges_[e].parent, 1);
    } else if (item.cls == 1) {
      // an UPDATE that changed nothing: the children queued by the last EXPLORE of v are
      // still at work (re-queueing them is what made the textbook loop re-walk whole subtrees)
      return;
    }
    if (solved(v)) return;
    const Node& p = nodes_[v];
    const double cap = v == root ? std::min(p.ub, threshold) : p.ub;
    for (std::uint32_t k = p.split_begin; k < p.split_begin + p.split_count; ++k) {
      const Split sp = splits_[k];
      const double slb = nodes_[sp.a].lb + nodes_[sp.b].lb;
      if (slb < cap - tau_ && slb < nodes_[sp.a].ub + nodes_[sp.b].ub - tau_) {
        if (!solved(sp.a)) push(sp.a, 0);
        if (!solved(sp.b)) push(sp.b, 0);
      }
    }
  }

  bool queue_empty() const { return queue_.empty(); }

  // Seed ub along an encoded tree: expand its internal vertices and aggregate bottom-up.
  void seed(const std::vector<int>& tree, std::size_t& pos, std::uint32_t v) {
    if (pos >= tree.size()) throw std::invalid_argument("initial_tree is truncated");
    const int f = tree[pos++];
    if (f < 0) {
      if (-f - 1 >= K_) throw std::invalid_argument("initial_tree has a label out of range");
      return;
    }
    if (f >= M_) throw std::invalid_argument("initial_tree has a feature out of range");
    if (nodes_[v].depth == 0) throw std::invalid_argument("initial_tree exceeds max_depth");
    expand(v);
    const Node& p = nodes_[v];
    std::uint32_t a = kNoNode, b = kNoNode;
    for (std::uint32_t k = p.split_begin; k < p.split_begin + p.split_count; ++k) {
      if (splits_[k].feature == f) {
        a = splits_[k].a;
        b = splits_[k].b;
      }
    }
    if (a == kNoNode) {
      // a split with an empty side is not in the graph (never better): skip its subtrees
      skip(tree, pos);
      skip(tree, pos);
    } else {
      seed(tree, pos, a);
      seed(tree, pos, b);
    }
    aggregate(v);
  }

  // Tree realising ub(v) (or better): argmin over splits of the children's ub, ties ->
  // smallest feature, a leaf when nothing beats it (§3.8 EXTRACT, §9 correction 5).
  void extract(std::uint32_t v, std::vector<int>& out) const {
    const Node& p = nodes_[v];
    double best = kInf;
    const Split* chosen = nullptr;
    for (std::uint32_t k = p.split_begin; k < p.split_begin + p.split_count; ++k) {
      const double u = nodes_[splits_[k].a].ub + nodes_[splits_[k].b].ub;
      if (u < best) {
        best = u;
        chosen = &splits_[k];
      }
    }
    if (!p.expanded || chosen == nullptr || p.leaf <= best + tau_) {
      out.push_back(-(majority_class(p.cw, K_) + 1));
      return;
    }
    out.push_back(chosen->feature);
    extract(chosen->a, out);
    extract(chosen->b, out);
  }

 private:
  static void skip(const std::vector<int>& tree, std::size_t& pos) {
    if (pos >= tree.size()) throw std::invalid_argument("initial_tree is truncated");
    if (tree[pos++] >= 0) {
      skip(tree, pos);
      skip(tree, pos);
    }
  }
  void add_parent(std::uint32_t child, std::uint32_t parent) {
    const std::uint32_t e = static_cast<std::uint32_t>(edges_.size());
    edges_.push_back(ParentEdge{parent, kNoNode});
    Node& c = nodes_[child];
    if (c.last_parent == kNoNode)
      c.first_parent = e;
    else
      edges_[c.last_parent].next = e;
    c.last_parent = e;
    max_parents_ = std::max<std::size_t>(max_parents_, ++c.n_parents);
  }
  void grow() {
    slots_.assign(slots_.size() * 2, kNoNode);
    mask_ = slots_.size() - 1;
    for (std::uint32_t v = 0; v < nodes_.size(); ++v) {
      std::size_t i = nodes_[v].hash & mask_;
      while (slots_[i] != kNoNode) i = (i + 1) & mask_;
      slots_[i] = v;
    }
  }

  const Problem& P_;
  int K_, M_;
  std::size_t W_;
  double tau_, zero_;
  bool use_eq_;
  InitialBound initial_;
  int max_depth_ = -1;
  paged::Vector<Node> nodes_;
  paged::Arena<std::uint64_t> words_;
  paged::Arena<double> weights_;
  paged::Vector<Split> splits_;
  paged::Vector<ParentEdge> edges_;
  std::vector<std::uint32_t> slots_;
  std::size_t mask_;
  std::size_t max_parents_ = 0;
  paged::Heap<QueueItem, QueueOrder> queue_;
  std::uint64_t seq_ = 0;
  std::vector<std::uint64_t> s0_, s1_;
  std::vector<double> c0_, c1_;
};

}  // namespace

SearchOutput search_dp_queue(const Problem& problem, const SearchConfig& config,
                             std::function<bool()> interrupted) {
  SearchOutput out;
  out.progress = config.progress;
  Budget budget(config, std::move(interrupted));
  const double N = problem.total_weight();
  auto normalized = [N](double v) { return N > 0 ? v / N : 0.0; };
  const int depth = config.max_depth < 0 ? -1 : config.max_depth;
  const double tau = count_tolerance(N);

  QueueDP dp(problem, config);
  dp.set_max_depth(depth);
  const std::uint32_t root = dp.root();

  const double t0 = budget.elapsed();
  std::vector<int> warm = config.initial_tree;
  if (warm.empty()) {
    double v = 0.0;
    warm = greedy_tree(problem, config.lam, depth, &v, &budget);
  }
  std::size_t pos = 0;
  // out of memory while seeding, the graph still realises the root's ub (dp.extract)
  catch_out_of_memory(budget, [&] { dp.seed(warm, pos, root); });
  if (!budget.stopped() && pos != warm.size())
    throw std::invalid_argument("initial_tree has trailing entries");
  out.stats["greedy_seconds"] = budget.elapsed() - t0;

  double threshold = kInf;
  if (std::isfinite(config.upper_bound) && config.upper_bound * N < dp.node(root).ub) {
    // slack as in dp.cpp so that a tree attaining upper_bound exactly stays relevant
    threshold = user_bound_threshold(config.upper_bound, N);
  }
  out.stats["upper_bound_invalid"] = 0.0;

  auto root_lb = [&] { return dp.node(root).lb; };
  auto root_ub = [&] { return dp.node(root).ub; };
  out.record(budget.elapsed(), normalized(root_ub()), normalized(root_lb()));

  long long requeues = 0;
  // Unwinding from a step leaves the graph consistent: a vertex is linked only once complete,
  // one whose expansion was cut short stays unexpanded (extract() reads a leaf) and bounds
  // change only in aggregate(), which allocates nothing.
  catch_out_of_memory(budget, [&] {
    if (!budget.stopped() && !dp.solved(root)) dp.push(root, 0);
    while (!budget.stopped()) {
      const double target = std::min(root_ub(), threshold);
      if (root_lb() >= target - tau || dp.queue_empty()) {
        if (root_ub() - root_lb() <= tau) break;
        if (std::isfinite(threshold)) {
          // no tree reaches the external bound (or nothing below it remains): drop it
          threshold = kInf;
          out.stats["upper_bound_invalid"] = 1.0;
          dp.push(root, 0);
          continue;
        }
        // Every unsolved vertex's cheapest split has an unsolved child that it queues, but an
        // UPDATE that changed nothing queues nothing, so the work items can run out before the
        // root is solved; re-exploring from the root then resumes (counted in the stats).
        ++requeues;
        dp.push(root, 0);
      }
      if (budget.tick(dp.bytes(), dp.step_bytes_ahead())) break;
      const double lb_before = root_lb(), ub_before = root_ub();
      dp.step(root, threshold);
      if (root_lb() != lb_before || root_ub() != ub_before)
        out.record(budget.elapsed(), normalized(root_ub()), normalized(root_lb()));
    }
  });

  std::vector<int> tree;
  dp.extract(root, tree);
  // the extracted tree's value, recomputed from the data (<= root ub by construction)
  out.tree = tree;
  out.status = budget.status();
  out.n_explored = budget.nodes();
  out.peak_memory_mb = budget.peak_memory_mb();
  out.stats["graph_vertices"] = static_cast<double>(dp.n_nodes());
  out.stats["root_requeues"] = static_cast<double>(requeues);
  out.stats["n_points"] = static_cast<double>(problem.n_points());
  out.stats["n_words"] = static_cast<double>(problem.n_words());
  out.stats["search_seconds"] = budget.elapsed();
  out.stats["out_of_memory"] = budget.ran_out_of_memory() ? 1.0 : 0.0;
  const double value =
      evaluate_tree(problem, tree, config.lam * N, depth,
                    InitialBound::min_leaf_units(problem, config));
  out.objective = normalized(value);
  out.lower_bound = out.status == SearchStatus::optimal ? out.objective : normalized(std::min(root_lb(), value));
  out.record(budget.elapsed(), out.objective, out.lower_bound);
  return out;
}

}  // namespace odtkit

#include "maxflow.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <stdexcept>

#include "push_relabel.hpp"

namespace odtkit {
namespace {

constexpr std::int64_t kInfinite = std::numeric_limits<std::int64_t>::max();
// Sums of capacities stay below this, so no flow arithmetic can overflow.
constexpr std::int64_t kMaxTotal = std::int64_t{1} << 62;
// Longest walk up of the greedy start (full-depth trees on 10**5 rows are ~40-60 deep).
constexpr int kMaxWalk = 256;

// The residual network of a closure problem (see maxflow.hpp). Adjacency entries are CSR per
// node; entry e names its inner arc and its direction (0: the node is the tail, residual
// infinite; 1: the node is the head, residual = the arc's flow).
class ClosureNetwork : public PushRelabel<ClosureNetwork> {
  friend class PushRelabel<ClosureNetwork>;

 public:
  ClosureNetwork(std::int64_t n, const std::int64_t* source_cap, const std::int64_t* sink_cap,
                 std::int64_t m, const std::int32_t* tails, const std::int32_t* heads)
      : n_(n),
        src_(source_cap, source_cap + n),
        snk_(sink_cap, sink_cap + n),
        src0_(src_),
        snk0_(snk_) {
    std::int64_t total = 0;
    for (std::int64_t v = 0; v < n; ++v) {
      if (src_[v] < 0 || snk_[v] < 0) throw std::invalid_argument("capacities must be >= 0");
      // compare before adding: the sum itself must not overflow
      if (src_[v] > kMaxTotal || snk_[v] > kMaxTotal || src_[v] > kMaxTotal - total)
        throw std::invalid_argument("capacities too large: their sum must stay below 2**62");
      total += src_[v];
    }
    offset_.assign(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t a = tails[j], b = heads[j];
      if (a < 0 || a >= n || b < 0 || b >= n)
        throw std::invalid_argument("arc ends must lie in [0, n_nodes)");
      ++offset_[a + 1];
      ++offset_[b + 1];
    }
    for (std::int64_t v = 0; v < n; ++v) offset_[v + 1] += offset_[v];
    to_.resize(static_cast<std::size_t>(2 * m));
    code_.resize(static_cast<std::size_t>(2 * m));
    std::vector<std::int64_t> fill(offset_.begin(), offset_.end() - 1);
    for (std::int64_t j = 0; j < m; ++j) {
      // read each end once: the caller's arrays are not ours, so re-check before writing
      const std::int64_t a = tails[j], b = heads[j];
      if (a < 0 || a >= n || b < 0 || b >= n || fill[a] >= offset_[a + 1] ||
          fill[b] >= offset_[b + 1])
        throw std::invalid_argument("arc arrays changed while the network was built");
      to_[fill[a]] = static_cast<std::int32_t>(b);
      code_[fill[a]++] = static_cast<std::uint32_t>(2 * j);
      to_[fill[b]] = static_cast<std::int32_t>(a);
      code_[fill[b]++] = static_cast<std::uint32_t>(2 * j + 1);
    }
    m_ = m;
    label_.assign(static_cast<std::size_t>(n), -1);
    current_.assign(static_cast<std::size_t>(n), 0);
  }

  // A feasible starting flow, greedily: node v's source capacity goes to t through v's own
  // sink arc, then through the out-neighbours with residual sink capacity of v, of v's "up"
  // node (its first out-neighbour without a sink arc: the parent split in a pruning network),
  // of that node's up node, and so on. Nodes go by decreasing id (children after their parent
  // in the builder's pre-order, so bottom-up). Every push follows inner arcs (infinite) and
  // stays within the terminal capacities, so the flow is feasible and any algorithm can
  // continue from it; the maximum flow value and the minimal minimum cut (what finish()
  // returns: the residual reach of s in a maximum flow) do not depend on the start. Each
  // node's scan pointer skips the arcs into exhausted sink nodes (sink residuals only fall
  // here), so the scans cost O(arcs) overall plus O(depth) per node for the walks up.
  void greedy_start(Budget& budget, ClosureCutOutput& out) {
    std::vector<std::int64_t> ptr(offset_.begin(), offset_.end() - 1);
    std::vector<std::int32_t> up(static_cast<std::size_t>(n_), -1);
    std::vector<std::uint32_t> up_code(static_cast<std::size_t>(n_), 0);
    for (std::int64_t v = 0; v < n_; ++v)
      for (std::int64_t e = offset_[v]; e < offset_[v + 1]; ++e)
        if (!(code_[e] & 1U) && snk0_[to_[e]] == 0) {
          up[v] = to_[e];
          up_code[v] = code_[e];
          break;
        }
    std::vector<std::uint32_t> path;  // codes of the inner arcs from v to the current node
    for (std::int64_t v = n_ - 1; v >= 0; --v) {
      if ((v & 4095) == 0 && budget.check_clock()) return;
      if (src_[v] == 0) continue;
      const std::int64_t direct = std::min(src_[v], snk_[v]);
      src_[v] -= direct;
      snk_[v] -= direct;
      out.flow += direct;
      path.clear();
      std::int64_t u = v;
      // at most kMaxWalk nodes up: deeper chains (or cycles of up links, which a pruning
      // network has not) only leave more to the algorithm, and the walks stay O(n) in all
      for (int steps = 0; src_[v] > 0 && u >= 0 && steps < kMaxWalk; ++steps) {
        std::int64_t& e = ptr[u];
        for (; e < offset_[u + 1]; ++e) {
          if (code_[e] & 1U) continue;  // u is this arc's head
          const std::int32_t w = to_[e];
          if (snk_[w] == 0) continue;
          const std::int64_t amount = std::min(src_[v], snk_[w]);
          for (const std::uint32_t c : path) flow_[c >> 1] += amount;
          flow_[code_[e] >> 1] += amount;
          src_[v] -= amount;
          snk_[w] -= amount;
          out.flow += amount;
          ++out.augmentations;
          if (src_[v] == 0) break;  // w may have residual left: e stays
        }
        if (src_[v] == 0) break;
        path.push_back(up_code[u]);
        u = up[u];
      }
    }
  }

  // The per-arc flows, allocated once the caller may have freed its arc arrays.
  void allocate_flow() { flow_.assign(static_cast<std::size_t>(m_), 0); }

  static std::size_t bytes_needed(std::int64_t n, std::int64_t m, MaxFlowAlgorithm algorithm) {
    std::size_t bytes = static_cast<std::size_t>(n) *
                            (4 * sizeof(std::int64_t) + sizeof(std::int64_t) + sizeof(int) +
                             sizeof(std::int64_t) + sizeof(std::int32_t) + 1) +
                        static_cast<std::size_t>(m) *
                            (2 * (sizeof(std::int32_t) + sizeof(std::uint32_t)) +
                             sizeof(std::int64_t));
    // the greedy start: a scan pointer and an up link (node, code) per node
    bytes += static_cast<std::size_t>(n) * (sizeof(std::int64_t) + 2 * sizeof(std::int32_t));
    // push-relabel: excess, three list links per node, two list heads per label
    if (algorithm == MaxFlowAlgorithm::kPushRelabel)
      bytes += static_cast<std::size_t>(n) * (sizeof(std::int64_t) + 5 * sizeof(std::int32_t)) +
               2 * sizeof(std::int32_t) * 2;
    // Boykov-Kolmogorov: tree, active flag, parent, its arc, stamp, distance; the queues
    if (algorithm == MaxFlowAlgorithm::kBoykovKolmogorov)
      bytes += static_cast<std::size_t>(n) * (2 + 3 * sizeof(std::int32_t) +
                                              2 * sizeof(std::int32_t) + 2 * sizeof(std::int64_t));
    return bytes;
  }

  // Dinic until no augmenting path is left or the budget stops it.
  void run(Budget& budget, ClosureCutOutput& out) {
    std::vector<std::int32_t> queue;
    queue.reserve(static_cast<std::size_t>(n_));
    std::vector<std::int32_t> path_nodes;
    std::vector<std::int64_t> path_entries;
    while (!budget.check_clock()) {
      std::size_t n_roots = 0;
      const int dist = bfs(queue, n_roots);
      if (dist < 0) return;
      ++out.phases;
      for (std::int64_t v = 0; v < n_; ++v) current_[v] = offset_[v];
      for (std::size_t r = 0; r < n_roots; ++r) {
        const std::int32_t root = queue[r];  // the level-0 nodes come first in the queue
        while (src_[root] > 0 && label_[root] == 0) {
          if (!augment_from(root, dist, path_nodes, path_entries, out)) break;
          if ((++out.augmentations & 1023) == 0 && budget.check_clock()) return;
        }
      }
    }
  }

  // Push-relabel, highest label first, with global relabelling and the gap heuristic; phase 1
  // only (a maximum preflow: no node with excess can reach t), see maxflow.hpp. Labels of live
  // nodes lie in [1, n] (t has 0); dead() = n + 1 marks a node that cannot reach t.
  void run_push_relabel(Budget& budget, ClosureCutOutput& out) {
    excess_.assign(static_cast<std::size_t>(n_), 0);
    // saturate every source arc: the excess now sits on the nodes
    for (std::int64_t v = 0; v < n_; ++v) {
      excess_[v] = src_[v];
      src_[v] = 0;
    }
    // a global relabelling once the pushes and relabels since the last one cost about as much
    // (the HIPR rule; 0.5x and 4x this period were slower on benchmarks/maxflow.py graphs)
    run_phase1<false>(n_, 6LL * n_ + static_cast<long long>(offset_[n_] / 2), budget, out);
  }

  // Boykov-Kolmogorov: a search tree from s and one from t grow over residual arcs until they
  // touch; the path through the touching arc is augmented, the tree arcs it saturates orphan
  // their subtrees, and the orphans are re-adopted (a new parent in the same tree whose root is
  // still a terminal, the closest one by the distance marks) or freed. Every augmentation keeps
  // a feasible flow, so a stopped run is valid as for Dinic, and finish() sees an ordinary
  // maximum flow. Tree arcs are stored as (parent node, code of the arc seen from the child).
  void run_boykov_kolmogorov(Budget& budget, ClosureCutOutput& out) {
    tree_.assign(static_cast<std::size_t>(n_), kFree);
    active_.assign(static_cast<std::size_t>(n_), 0);
    parent_.assign(static_cast<std::size_t>(n_), kNone);
    parent_code_.assign(static_cast<std::size_t>(n_), 0);
    stamp_.assign(static_cast<std::size_t>(n_), 0);
    dist_.assign(static_cast<std::size_t>(n_), 0);
    scan_.assign(offset_.begin(), offset_.end() - 1);
    std::deque<std::int32_t> queue, orphans;
    for (std::int64_t v = 0; v < n_; ++v) {
      const std::int64_t both = std::min(src_[v], snk_[v]);  // s -> v -> t directly
      src_[v] -= both;
      snk_[v] -= both;
      out.flow += both;
      const std::uint8_t t = src_[v] > 0 ? kSource : snk_[v] > 0 ? kSink : kFree;
      if (t == kFree) continue;
      tree_[v] = t;
      parent_[v] = kTerminal;
      dist_[v] = 1;
      activate_bk(static_cast<std::int32_t>(v), queue);
    }
    std::int64_t time = 1;
    long long steps = 0;
    for (;;) {
      // grow until the trees touch: bridge = an arc from the s tree (from_s) into the t tree
      std::int32_t from_s = -1, into_t = -1;
      std::uint32_t bridge = 0;
      while (!queue.empty() && from_s < 0) {
        const std::int32_t p = queue.front();
        if (tree_[p] == kFree) {
          queue.pop_front();
          active_[p] = 0;
          continue;
        }
        const bool in_s = tree_[p] == kSource;
        // resume where p found its last bridge: whatever changed before that point since
        // re-activated p, which resets scan_ (activate_bk)
        for (std::int64_t& e = scan_[p]; e < offset_[p + 1]; ++e) {
          const std::uint32_t c = code_[e];
          // the arc away from the root of p's tree: p -> q in the s tree, q -> p in the t tree
          if ((in_s ? residual_of(c) : residual_of(c ^ 1U)) <= 0) continue;
          const std::int32_t q = to_[e];
          if (tree_[q] == kFree) {
            tree_[q] = tree_[p];
            parent_[q] = p;
            parent_code_[q] = c ^ 1U;
            stamp_[q] = stamp_[p];
            dist_[q] = dist_[p] + 1;
            activate_bk(q, queue);
          } else if (tree_[q] != tree_[p]) {
            from_s = in_s ? p : q;
            into_t = in_s ? q : p;
            bridge = in_s ? c : c ^ 1U;
            break;
          }
        }
        if (from_s < 0) {
          queue.pop_front();
          active_[p] = 0;
        }
        if ((++steps & 1023) == 0 && budget.check_clock()) return;
      }
      if (from_s < 0) return;  // the trees cannot touch: the flow is maximum
      // augment along s ~> from_s -> into_t ~> t
      std::int64_t amount = residual_of(bridge);
      std::int32_t x = from_s;
      for (; parent_[x] != kTerminal; x = parent_[x])
        amount = std::min(amount, residual_of(parent_code_[x] ^ 1U));
      amount = std::min(amount, src_[x]);
      for (x = into_t; parent_[x] != kTerminal; x = parent_[x])
        amount = std::min(amount, residual_of(parent_code_[x]));
      amount = std::min(amount, snk_[x]);
      push_code(bridge, amount);
      for (x = from_s;;) {
        const std::int32_t up = parent_[x];
        if (up == kTerminal) {
          if ((src_[x] -= amount) == 0) orphan(x, orphans);
          break;
        }
        push_code(parent_code_[x] ^ 1U, amount);
        if (residual_of(parent_code_[x] ^ 1U) == 0) orphan(x, orphans);
        x = up;
      }
      for (x = into_t;;) {
        const std::int32_t up = parent_[x];
        if (up == kTerminal) {
          if ((snk_[x] -= amount) == 0) orphan(x, orphans);
          break;
        }
        push_code(parent_code_[x], amount);
        if (residual_of(parent_code_[x]) == 0) orphan(x, orphans);
        x = up;
      }
      out.flow += amount;
      ++out.augmentations;
      ++time;
      while (!orphans.empty()) {
        const std::int32_t p = orphans.front();
        orphans.pop_front();
        adopt(p, time, queue, orphans);
      }
      if ((++steps & 1023) == 0 && budget.check_clock()) return;
    }
  }

  void finish(ClosureCutOutput& out) {
    // minimal source side: nodes reachable from s in the residual network
    std::vector<std::int32_t> queue;
    std::vector<std::uint8_t>& side = out.source_side;
    side.assign(static_cast<std::size_t>(n_), 0);
    // After push-relabel the roots are also the nodes holding excess (see maxflow.hpp).
    const bool preflow = !excess_.empty();
    for (std::int64_t v = 0; v < n_; ++v)
      if (src_[v] > 0 || (preflow && excess_[v] > 0)) {
        side[v] = 1;
        queue.push_back(static_cast<std::int32_t>(v));
      }
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const std::int32_t v = queue[head];
      for (std::int64_t e = offset_[v]; e < offset_[v + 1]; ++e) {
        const std::int32_t w = to_[e];
        if (!side[w] && residual(e) > 0) {
          side[w] = 1;
          queue.push_back(w);
        }
      }
    }
    std::int64_t cut = 0;
    for (std::int64_t v = 0; v < n_; ++v) {
      const std::int64_t c = side[v] ? snk0_[v] : src0_[v];
      cut = (c > kInfinite - cut) ? kInfinite : cut + c;
    }
    out.cut = cut;
  }

 private:
  std::int64_t residual(std::int64_t e) const {
    return (code_[e] & 1U) ? flow_[code_[e] >> 1] : kInfinite;
  }

  // Residual of the arc seen from the end owning code c (c ^ 1: the opposite direction).
  std::int64_t residual_of(std::uint32_t c) const { return (c & 1U) ? flow_[c >> 1] : kInfinite; }
  void push_code(std::uint32_t c, std::int64_t amount) {
    if (c & 1U)
      flow_[c >> 1] -= amount;
    else
      flow_[c >> 1] += amount;
  }
  void orphan(std::int32_t x, std::deque<std::int32_t>& orphans) {
    parent_[x] = kOrphan;
    orphans.push_back(x);
  }
  void activate_bk(std::int32_t q, std::deque<std::int32_t>& queue) {
    scan_[q] = offset_[q];
    if (!active_[q]) {
      active_[q] = 1;
      queue.push_back(q);
    }
  }

  // Give orphan p a parent in its tree whose chain still ends at the terminal, or free it.
  void adopt(std::int32_t p, std::int64_t time, std::deque<std::int32_t>& queue,
             std::deque<std::int32_t>& orphans) {
    const bool in_s = tree_[p] == kSource;
    std::int32_t best = -1, best_dist = std::numeric_limits<std::int32_t>::max();
    std::uint32_t best_code = 0;
    for (std::int64_t e = offset_[p]; e < offset_[p + 1]; ++e) {
      const std::int32_t q = to_[e];
      const std::uint32_t c = code_[e];
      // candidate tree arc: q -> p in the s tree, p -> q in the t tree
      if (tree_[q] != tree_[p] || (in_s ? residual_of(c ^ 1U) : residual_of(c)) <= 0) continue;
      std::int32_t steps = 0, y = q, d = 0;
      for (;; ++steps) {
        if (stamp_[y] == time) {
          d = dist_[y];
          break;
        }
        if (parent_[y] == kTerminal) {
          stamp_[y] = time;
          dist_[y] = d = 1;
          break;
        }
        if (parent_[y] < 0) {  // an orphan (or free): q's root is lost
          d = -1;
          break;
        }
        y = parent_[y];
      }
      if (d < 0) continue;
      d += steps;
      if (d < best_dist) {
        best = q;
        best_dist = d;
        best_code = c;
      }
      for (y = q; stamp_[y] != time; y = parent_[y]) {  // mark the chain for later walks
        stamp_[y] = time;
        dist_[y] = d--;
      }
    }
    if (best >= 0) {
      parent_[p] = best;
      parent_code_[p] = best_code;
      stamp_[p] = time;
      dist_[p] = best_dist + 1;
      return;
    }
    const std::uint8_t mine = tree_[p];
    tree_[p] = kFree;
    parent_[p] = kNone;
    for (std::int64_t e = offset_[p]; e < offset_[p + 1]; ++e) {
      const std::int32_t q = to_[e];
      if (tree_[q] != mine) continue;
      const std::uint32_t c = code_[e];
      // q may now grow into p: q -> p residual in the s tree, p -> q in the t tree
      if ((in_s ? residual_of(c ^ 1U) : residual_of(c)) > 0) activate_bk(q, queue);
      if (parent_[q] == p) orphan(q, orphans);
    }
  }

  // Residual capacity of the arc to->from of entry e (the reverse of residual(e)).
  std::int64_t reverse_residual(std::int64_t e) const {
    return (code_[e] & 1U) ? kInfinite : flow_[code_[e] >> 1];
  }

  // push_relabel.hpp's arc access: a node's CSR entries
  std::int64_t arc_begin(std::int32_t x) const { return offset_[x]; }
  std::int64_t arc_end(std::int32_t x) const { return offset_[x + 1]; }
  bool arc(std::int32_t, std::int64_t e, std::int32_t& w, std::int64_t& r,
           std::int64_t& back) const {
    w = to_[e];
    r = residual(e);
    back = reverse_residual(e);
    return true;
  }
  void push(std::int32_t, std::int64_t e, std::int32_t, std::int64_t amount) { push(e, amount); }
  std::int64_t sink_left(std::int32_t x) const { return snk_[x]; }
  void take_sink(std::int32_t x, std::int64_t amount) { snk_[x] -= amount; }
  // only the relabel scans count towards the relabelling period (the period was measured so,
  // benchmarks/maxflow.py)
  static constexpr bool kScanIsWork = false;

  // Exact distances to t in the residual network (reverse BFS); unreachable nodes are dead.
  template <bool Reverse>
  void global_relabel(ClosureCutOutput& out) {
    static_assert(!Reverse, "the closure network runs forward only");
    ++out.phases;
    std::fill(label_.begin(), label_.end(), dead_);
    buckets_.clear();
    std::vector<std::int32_t>& queue = buckets_.next_active;  // reused: rebuilt below
    std::size_t tail = 0;
    for (std::int64_t v = 0; v < n_; ++v)
      if (snk_[v] > 0) {
        label_[v] = 1;
        queue[tail++] = static_cast<std::int32_t>(v);
      }
    for (std::size_t head = 0; head < tail; ++head) {
      const std::int32_t w = queue[head];
      const int k = label_[w] + 1;
      for (std::int64_t e = offset_[w]; e < offset_[w + 1]; ++e) {
        const std::int32_t u = to_[e];
        if (label_[u] == dead_ && reverse_residual(e) > 0) {
          label_[u] = k;
          queue[tail++] = u;
        }
      }
    }
    for (std::int64_t v = 0; v < n_; ++v) {
      current_[v] = offset_[v];
      const std::int32_t k = label_[v];
      if (k == dead_) continue;
      label_insert(static_cast<std::int32_t>(v), k);
      if (excess_[v] > 0) activate(static_cast<std::int32_t>(v));
    }
  }

  void push(std::int64_t e, std::int64_t amount) {
    if (code_[e] & 1U)
      flow_[code_[e] >> 1] -= amount;
    else
      flow_[code_[e] >> 1] += amount;
  }

  // Levels from s (the nodes with residual source capacity are level 0); returns the level of
  // the nearest node with residual sink capacity (-1: t unreachable, the flow is maximum).
  int bfs(std::vector<std::int32_t>& queue, std::size_t& n_roots) {
    std::fill(label_.begin(), label_.end(), -1);
    queue.clear();
    for (std::int64_t v = 0; v < n_; ++v)
      if (src_[v] > 0) {
        label_[v] = 0;
        queue.push_back(static_cast<std::int32_t>(v));
      }
    n_roots = queue.size();
    int dist = std::numeric_limits<int>::max();
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const std::int32_t v = queue[head];
      if (label_[v] >= dist) break;  // BFS order: every later node is at least this deep
      if (snk_[v] > 0) {
        dist = label_[v];
        continue;
      }
      for (std::int64_t e = offset_[v]; e < offset_[v + 1]; ++e) {
        const std::int32_t w = to_[e];
        if (label_[w] < 0 && residual(e) > 0) {
          label_[w] = label_[v] + 1;
          queue.push_back(w);
        }
      }
    }
    return dist == std::numeric_limits<int>::max() ? -1 : dist;
  }

  // One augmenting path from `root` along level-increasing residual entries to a node at level
  // `dist` with sink capacity; false when `root` is exhausted for this phase.
  bool augment_from(std::int32_t root, int dist, std::vector<std::int32_t>& nodes,
                    std::vector<std::int64_t>& entries, ClosureCutOutput& out) {
    nodes.assign(1, root);
    entries.clear();
    for (;;) {
      const std::int32_t u = nodes.back();
      if (label_[u] == dist) {
        if (snk_[u] > 0) break;
        label_[u] = -1;  // a dead end for the rest of this phase
      } else {
        bool advanced = false;
        for (std::int64_t& e = current_[u]; e < offset_[u + 1]; ++e) {
          const std::int32_t w = to_[e];
          if (label_[w] == label_[u] + 1 && residual(e) > 0) {
            entries.push_back(e);
            nodes.push_back(w);
            advanced = true;
            break;
          }
        }
        if (advanced) continue;
        label_[u] = -1;
      }
      if (entries.empty()) return false;  // root is dead
      entries.pop_back();
      nodes.pop_back();
      ++current_[nodes.back()];
    }
    const std::int32_t last = nodes.back();
    std::int64_t amount = std::min(src_[root], snk_[last]);
    for (const std::int64_t e : entries) amount = std::min(amount, residual(e));
    for (const std::int64_t e : entries) push(e, amount);
    src_[root] -= amount;
    snk_[last] -= amount;
    out.flow += amount;
    return true;
  }

  std::int64_t n_, m_ = 0;
  std::vector<std::int64_t> src_, snk_;    // residual terminal capacities
  std::vector<std::int64_t> src0_, snk0_;  // the given ones
  std::vector<std::int64_t> offset_;
  std::vector<std::int32_t> to_;
  std::vector<std::uint32_t> code_;
  std::vector<std::int64_t> flow_;
  // label_ (Dinic's levels too) and current_ (Dinic's arc pointers too) are PushRelabel's;
  // excess_ stays empty unless push-relabel runs
  // Boykov-Kolmogorov only
  static constexpr std::uint8_t kFree = 0, kSource = 1, kSink = 2;
  static constexpr std::int32_t kNone = -1, kTerminal = -2, kOrphan = -3;
  std::vector<std::uint8_t> tree_, active_;
  std::vector<std::int32_t> parent_, dist_;
  std::vector<std::int64_t> stamp_;  // int64: one stamp per augmentation never wraps
  std::vector<std::uint32_t> parent_code_;
  std::vector<std::int64_t> scan_;  // where each node's growth scan resumes
};

}  // namespace

MaxFlowAlgorithm choose_algorithm(std::int64_t n_nodes, const std::int64_t* source_cap,
                                  const std::int64_t* sink_cap) {
  // Measured on forest networks (benchmarks/results/maxflow.md): when the sink side holds far
  // less capacity than the source side (small lam: most splits stay, the flow is limited by the
  // pairs), Boykov-Kolmogorov's trees find the short s-split-pair-t paths 2-5x faster than
  // Dinic's phases; from a ratio of ~0.5 up it is 1.5-3x slower, and Dinic is the fastest or
  // within noise of push-relabel. The switch sits between the measured 0.075 and 0.5.
  double source = 0.0, sink = 0.0;
  for (std::int64_t v = 0; v < n_nodes; ++v) {
    source += static_cast<double>(source_cap[v]);
    sink += static_cast<double>(sink_cap[v]);
  }
  // no sink capacity at all (lam = 0, the first cut of the exact path): the flow is 0 and one
  // BFS proves it, where Boykov-Kolmogorov would grow its trees over the whole network first
  if (sink == 0.0) return MaxFlowAlgorithm::kDinic;
  // Full-depth forests (scikit-learn's default, issue 42) do not settle it: on 30 full trees
  // on 30,000 rows Boykov-Kolmogorov took 0.12x, 0.29x and 0.31x Dinic's time at sink/source
  // 0.23, 0.45 and 0.90 (2.3x at 1.8), but on 100 full trees on 100,000 rows at 0.43 it was
  // still running after 1.5x Dinic's whole time. The switch stays where it was measured first.
  return sink < 0.2 * source ? MaxFlowAlgorithm::kBoykovKolmogorov : MaxFlowAlgorithm::kDinic;
}

const char* algorithm_name(MaxFlowAlgorithm algorithm) {
  switch (algorithm) {
    case MaxFlowAlgorithm::kDinic:
      return "dinic";
    case MaxFlowAlgorithm::kPushRelabel:
      return "push_relabel";
    case MaxFlowAlgorithm::kBoykovKolmogorov:
      return "boykov_kolmogorov";
    default:
      return "auto";
  }
}

ClosureCutOutput closure_min_cut(std::int64_t n_nodes, const std::int64_t* source_cap,
                                 const std::int64_t* sink_cap, std::int64_t n_arcs,
                                 const std::int32_t* tails, const std::int32_t* heads,
                                 Budget& budget, MaxFlowAlgorithm algorithm, bool greedy,
                                 const std::function<void()>& release_arcs) {
  if (n_nodes < 0 || n_arcs < 0) throw std::invalid_argument("sizes must be >= 0");
  if (n_nodes >= (std::int64_t{1} << 31) || n_arcs >= (std::int64_t{1} << 31))
    throw std::invalid_argument("at most 2**31 - 1 nodes and arcs");
  ClosureCutOutput out;
  if (algorithm == MaxFlowAlgorithm::kAuto)
    algorithm = choose_algorithm(n_nodes, source_cap, sink_cap);
  out.algorithm = algorithm_name(algorithm);
  // nothing to go on: the empty closure (prune every tree to its root) is the incumbent
  auto empty_closure = [&] {
    out.status = status_name(budget.status());
    out.flow = 0;
    out.cut = 0;
    out.source_side.assign(static_cast<std::size_t>(n_nodes), 0);
    for (std::int64_t v = 0; v < n_nodes; ++v) out.cut += source_cap[v];
    out.seconds = budget.elapsed();
    return out;
  };
  const std::size_t bytes = ClosureNetwork::bytes_needed(n_nodes, n_arcs, algorithm);
  if (!budget.memory_ok(0, bytes)) return empty_closure();
  // A bad_alloc while building stops as the memory limit does; one while augmenting leaves the
  // flow valid (a path is found before any flow moves), so the residual cut is still reported.
  std::unique_ptr<ClosureNetwork> network;
  catch_out_of_memory(budget, [&] {
    network = std::make_unique<ClosureNetwork>(n_nodes, source_cap, sink_cap, n_arcs, tails,
                                               heads);
    if (release_arcs) release_arcs();
    network->allocate_flow();
    budget.note_memory(bytes);
    if (greedy) network->greedy_start(budget, out);
    if (budget.stopped()) {
      // stopped during the start: the flow so far is feasible, finish() reads its cut
    } else if (algorithm == MaxFlowAlgorithm::kPushRelabel)
      network->run_push_relabel(budget, out);
    else if (algorithm == MaxFlowAlgorithm::kBoykovKolmogorov)
      network->run_boykov_kolmogorov(budget, out);
    else
      network->run(budget, out);
  });
  if (!network || !catch_out_of_memory(budget, [&] { network->finish(out); }))
    return empty_closure();
  out.status = status_name(budget.status());
  out.peak_memory_mb = budget.peak_memory_mb();
  out.seconds = budget.elapsed();
  return out;
}

}  // namespace odtkit

// CORELS branch and bound (docs/formulations-search-and-pruning.md §5.3-5.5), from that
// document's mathematics only.
//
// Samples with identical antecedent rows form equivalence classes (§5.3 item 8: the partition
// induced by the antecedents, coarser than raw features, hence the tightest equivalent-points
// bound): they are the Problem's points, its features being the antecedents. All bitsets are
// over those classes; a class carries its positive, total and minority mass. Masses of a bitset
// are summed with popcounts (popcount.hpp, in the Problem's mode) over binary "bit planes" of the
// per-class integer masses (exact, and independent of how many samples a class holds); sample
// weights that are not integers fall back to a loop over the set bits.
#include "corels.hpp"

#include "paged.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <queue>
#include <stdexcept>

namespace odtkit {
namespace {

using Words = std::vector<std::uint64_t>;

enum Quantity { kTotal = 0, kPositive = 1, kMinority = 2 };

struct Mass {
  double tot = 0.0;
  double pos = 0.0;
  double eq = 0.0;
};

// Total, positive and minority mass of the classes in (a AND b).
class MassCounter {
 public:
  MassCounter(const std::vector<double>& pos, const std::vector<double>& tot,
              const std::vector<double>& minority, PopcountMode mode)
      : n_words_((pos.size() + 63) / 64), mode_(mode), values_{tot, pos, minority} {
    integral_ = true;
    double max_mass = 0.0;
    for (std::size_t u = 0; u < tot.size(); ++u) {
      for (double v : {pos[u], tot[u], minority[u]}) {
        if (v != std::floor(v) || v < 0 || v > 9.0e15) integral_ = false;
      }
      max_mass = std::max(max_mass, tot[u]);
    }
    if (!integral_) return;
    n_planes_ = 1;
    while (static_cast<double>(std::uint64_t{1} << n_planes_) <= max_mass) ++n_planes_;
    planes_.assign(n_words_ * 3 * n_planes_, 0);
    for (std::size_t u = 0; u < tot.size(); ++u) {
      std::uint64_t* base = &planes_[(u >> 6) * 3 * n_planes_];
      for (int q = 0; q < 3; ++q) {
        const auto v = static_cast<std::uint64_t>(values_[q][u]);
        for (int b = 0; b < n_planes_; ++b)
          if ((v >> b) & 1u) base[q * n_planes_ + b] |= std::uint64_t{1} << (u & 63);
      }
    }
  }

  // Mass of quantity q over a AND b (b may be null: over a).
  double of(Quantity q, const std::uint64_t* a, const std::uint64_t* b) const {
    if (integral_)
      return static_cast<double>(kernels::interleaved_plane_sum(
          mode_, a, b, planes_.data(), n_words_, 3 * n_planes_, q * n_planes_, n_planes_));
    double m = 0.0;
    const std::vector<double>& v = values_[q];
    for (std::size_t k = 0; k < n_words_; ++k) {
      std::uint64_t c = b ? (a[k] & b[k]) : a[k];
      while (c) {
        m += v[k * 64 + static_cast<std::size_t>(__builtin_ctzll(c))];
        c &= c - 1;
      }
    }
    return m;
  }

  std::size_t bytes() const { return planes_.size() * 8 + 3 * values_[0].size() * 8; }

 private:
  std::size_t n_words_;
  PopcountMode mode_;
  bool integral_ = true;
  int n_planes_ = 0;
  Words planes_;
  std::vector<double> values_[3];
};

struct VecHash {
  std::size_t operator()(const Words& v) const {
    std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ v.size();
    for (std::uint64_t w : v) {
      h ^= w + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
      h *= 0xBF58476D1CE4E5B9ULL;
      h ^= h >> 31;
    }
    return static_cast<std::size_t>(h);
  }
};

struct Node {
  int parent = -1;
  int rule = -1;   // antecedent appended by this node (-1 for the root)
  int depth = 0;   // K, the prefix length
  std::uint32_t gen = 0;
  double b = 0.0;   // count units: prefix mistakes + Lambda*K
  double b0 = 0.0;  // equivalent-points mass of the uncaptured classes (0 when switched off)
  double obj = 0.0;
  double captured = 0.0;
  int label = 0;
  bool done = false;
  bool deleted = false;
  bool in_queue = false;
  std::vector<int> children;
  // Antecedents that passed the support tests when this node was expanded. Both tests are
  // monotone (an antecedent captures only fewer points deeper down: Props 13-14), so the
  // children of this node need to look at these antecedents only.
  Words live;
};

struct QEntry {
  double key;
  long long order;
  int node;
  std::uint32_t gen;
  bool operator<(const QEntry& o) const {  // std::priority_queue pops the largest: invert
    if (key != o.key) return key > o.key;
    return order > o.order;
  }
};

struct BEntry {
  double bound;
  int node;
  std::uint32_t gen;
  bool operator<(const BEntry& o) const { return bound > o.bound; }
};

struct MapValue {
  double bound;
  int node;
  std::uint32_t gen;
};

// Symmetry-aware map with keys in one arena and open addressing: millions of prefixes cost a
// few flat allocations (a node-based map of vector keys spent seconds just being torn down).
class SymmetryMap {
 public:
  // The value stored under key, or null.
  MapValue* find(const Words& key) {
    if (slots_.empty()) return nullptr;
    const std::uint64_t h = VecHash()(key);
    for (std::size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == 0) return nullptr;
      Entry& e = entries_[slots_[i] - 1];
      if (e.hash == h && e.len == key.size() &&
          std::equal(key.begin(), key.end(), arena_.begin() + static_cast<long>(e.offset)))
        return &e.value;
    }
  }
  // Insert a key known to be absent.
  void insert(const Words& key, const MapValue& value) {
    if ((entries_.size() + 1) * 2 > slots_.size()) grow();
    const std::uint64_t h = VecHash()(key);
    std::size_t i = h & (slots_.size() - 1);
    while (slots_[i] != 0) i = (i + 1) & (slots_.size() - 1);
    entries_.push_back({h, arena_.size(), key.size(), value});
    arena_.insert(arena_.end(), key.begin(), key.end());
    slots_[i] = entries_.size();
  }
  std::size_t size() const { return entries_.size(); }
  std::size_t bytes() const {
    return arena_.capacity() * 8 + entries_.capacity() * sizeof(Entry) + slots_.capacity() * 8;
  }
  // What one insert may allocate: the key arena's and the entry vector's growth (both
  // buffers at once) and a rehash of the slots.
  std::size_t insert_bytes() const {
    std::size_t b = 64;
    if (arena_.size() + 64 > arena_.capacity()) b += 8 * std::max<std::size_t>(64, arena_.capacity());
    if (entries_.size() == entries_.capacity())
      b += sizeof(Entry) * std::max<std::size_t>(1, entries_.capacity());
    if ((entries_.size() + 1) * 2 > slots_.size())
      b += 8 * std::max<std::size_t>(64, slots_.size() * 2);
    return b;
  }

 private:
  struct Entry {
    std::uint64_t hash;
    std::size_t offset, len;
    MapValue value;
  };
  void grow() {
    std::vector<std::size_t> next(std::max<std::size_t>(64, slots_.size() * 2), 0);
    for (std::size_t r = 0; r < entries_.size(); ++r) {
      std::size_t i = entries_[r].hash & (next.size() - 1);
      while (next[i] != 0) i = (i + 1) & (next.size() - 1);
      next[i] = r + 1;
    }
    slots_.swap(next);
  }
  Words arena_;
  std::vector<Entry> entries_;
  std::vector<std::size_t> slots_;  // 0: empty, else entry index + 1
};

class CorelsSearch {
 public:
  CorelsSearch(const Problem& problem, const SearchConfig& cfg,
               std::function<bool()> interrupted)
      : P_(problem),
        cfg_(cfg),
        budget_(cfg, std::move(interrupted)),
        support_(cfg.bound_on("support")),
        accurate_support_(cfg.bound_on("accurate_support")),
        max_support_(cfg.bound_on("max_support")),
        lookahead_(cfg.bound_on("lookahead")),
        equivalent_points_(cfg.bound_on("equivalent_points")) {
    out_.progress = cfg.progress;
  }

  SearchOutput run();

 private:
  // --- preprocessing -------------------------------------------------------------------
  void build_classes();

  void greedy_incumbent();

  // --- trie --------------------------------------------------------------------------------
  int new_node();
  void delete_subtree(int id);
  void detach(int id);
  void prune_up(int id);
  void garbage_collect();
  bool gc_visit(int id);
  double prune_key(const Node& n) const { return n.b + n.b0 + (lookahead_ ? Lambda_ : 0.0); }
  double report_bound(const Node& n) const { return n.b + n.b0 + Lambda_; }
  void push(int id);
  bool alive(int id, std::uint32_t gen) const {
    return id >= 0 && id < static_cast<int>(nodes_.size()) && !nodes_[id].deleted &&
           nodes_[id].gen == gen;
  }

  // --- bookkeeping -------------------------------------------------------------------------
  double queue_min_bound();
  void record_trace();
  std::size_t memory_bytes() const;
  std::size_t child_bytes() const;
  // antecedent r as a bitset over classes
  const std::uint64_t* rule(std::size_t r) const { return P_.feature_words(r); }

  const Problem& P_;
  const SearchConfig& cfg_;
  Budget budget_;
  const bool support_, accurate_support_, max_support_, lookahead_, equivalent_points_;

  std::size_t U_ = 0, W_ = 0, R_ = 0;
  double N_ = 0.0, Lambda_ = 0.0, tau_ = 0.0;
  Words valid_;
  std::unique_ptr<MassCounter> mass_;

  std::vector<Node> nodes_;
  std::vector<int> free_;
  long long live_ = 0;
  paged::Heap<QEntry> queue_;
  paged::Heap<BEntry> bheap_;
  SymmetryMap map_;
  std::size_t live_words_ = 0;
  std::size_t live_bytes_ = 0;  // approximate: never decreased when nodes are freed
  long long counter_ = 0;

  double Rc_ = 0.0;  // incumbent, count units
  std::vector<int> best_prefix_, best_labels_;
  int best_default_ = 0;
  long long n_created_ = 0, max_queue_ = 0, n_gc_ = 0;
  SearchOutput out_;
};

void CorelsSearch::build_classes() {
  R_ = P_.n_features();
  U_ = P_.n_points();
  W_ = P_.n_words();
  std::vector<double> pos(U_), tot(U_);
  const std::vector<double>& cw = P_.point_class_weight();
  for (std::size_t u = 0; u < U_; ++u) {
    pos[u] = cw[2 * u + 1];
    tot[u] = cw[2 * u] + cw[2 * u + 1];
  }
  mass_ = std::make_unique<MassCounter>(pos, tot, P_.point_minority(), P_.popcount_mode());
  valid_ = P_.all_points().words();
  N_ = P_.total_weight();
  Lambda_ = cfg_.lam * N_;
  tau_ = count_tolerance(N_);
  live_words_ = (R_ + 63) / 64;
}

int CorelsSearch::new_node() {
  int id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
    const std::uint32_t gen = nodes_[id].gen;
    nodes_[id] = Node();
    nodes_[id].gen = gen;
  } else {
    id = static_cast<int>(nodes_.size());
    nodes_.emplace_back();
  }
  ++live_;
  ++n_created_;
  return id;
}

// Remove id from its parent's child list.
void CorelsSearch::detach(int id) {
  const int p = nodes_[id].parent;
  if (p < 0) return;
  auto& ch = nodes_[p].children;
  auto it = std::find(ch.begin(), ch.end(), id);
  if (it != ch.end()) {
    *it = ch.back();
    ch.pop_back();
  }
}

// Delete a node and everything below it; queue, heap and map entries become stale through the
// generation counter, so no container has to be searched.
void CorelsSearch::delete_subtree(int id) {
  detach(id);
  std::vector<int> stack{id};
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    Node& nd = nodes_[v];
    for (int c : nd.children) stack.push_back(c);
    nd.children.clear();
    nd.children.shrink_to_fit();
    nd.live.clear();
    nd.live.shrink_to_fit();
    nd.deleted = true;
    nd.in_queue = false;
    ++nd.gen;
    free_.push_back(v);
    --live_;
  }
}

// A fully expanded node without children can never lead anywhere: remove it and every
// ancestor left childless by that.
void CorelsSearch::prune_up(int id) {
  while (id >= 0 && nodes_[id].done && nodes_[id].children.empty() && !nodes_[id].deleted) {
    const int parent = nodes_[id].parent;
    delete_subtree(id);
    id = parent;
  }
}

// Returns true if the node was deleted.
bool CorelsSearch::gc_visit(int id) {
  Node& nd = nodes_[id];
  if (nd.parent >= 0 && prune_key(nd) >= Rc_ - tau_) {
    delete_subtree(id);
    return true;
  }
  std::vector<int> children = nodes_[id].children;  // copy: deletions edit the list
  for (int c : children) gc_visit(c);
  Node& again = nodes_[id];
  if (again.parent >= 0 && again.done && again.children.empty()) {
    delete_subtree(id);
    return true;
  }
  return false;
}

void CorelsSearch::garbage_collect() {
  ++n_gc_;
  if (!nodes_.empty() && !nodes_[0].deleted) gc_visit(0);
}

void CorelsSearch::push(int id) {
  Node& nd = nodes_[id];
  double key = 0.0;
  long long order = counter_++;
  switch (cfg_.policy) {
    case Policy::curiosity:
      // b / supp with b free of the equivalent-points term (§5.4); 0 for the root
      key = nd.depth == 0 ? 0.0 : nd.b / std::max(nd.captured, 0.01);
      break;
    case Policy::lower_bound:
      key = nd.b + nd.b0;
      break;
    case Policy::objective:
      key = nd.obj;
      break;
    case Policy::bfs:
      key = nd.depth;
      break;
    case Policy::dfs:
      key = -static_cast<double>(nd.depth);
      order = -order;
      break;
  }
  nd.in_queue = true;
  queue_.push({key, order, id, nd.gen});
  bheap_.push({report_bound(nd), id, nd.gen});
  max_queue_ = std::max<long long>(max_queue_, static_cast<long long>(queue_.size()));
}

double CorelsSearch::queue_min_bound() {
  while (!bheap_.empty()) {
    const BEntry& e = bheap_.top();
    if (alive(e.node, e.gen) && nodes_[e.node].in_queue) return e.bound;
    bheap_.pop();
  }
  return std::numeric_limits<double>::infinity();
}

void CorelsSearch::record_trace() {
  const double incumbent = Rc_ / N_, bound = std::min(Rc_, queue_min_bound()) / N_;
  if (out_.changed(incumbent, bound)) out_.record(budget_.elapsed(), incumbent, bound);
}

std::size_t CorelsSearch::memory_bytes() const {
  const std::size_t node_bytes = sizeof(Node) + 2 * sizeof(int);
  return nodes_.capacity() * node_bytes + queue_.bytes() + bheap_.bytes() + map_.bytes() +
         R_ * W_ * 8 + mass_->bytes() + live_bytes_;
}

// What creating one more child may allocate: the node vector's growth (old and new buffers at
// once), a queue page each, a map entry and a rehash of its slots.
std::size_t CorelsSearch::child_bytes() const {
  const std::size_t node_bytes = sizeof(Node) + 2 * sizeof(int);
  std::size_t b = node_bytes + queue_.push_bytes() + bheap_.push_bytes() + map_.insert_bytes();
  if (free_.empty() && nodes_.size() == nodes_.capacity())
    b += std::max<std::size_t>(1, nodes_.capacity()) * node_bytes;  // 2x growth
  return b;
}

// Warm start: append, one rule at a time, the antecedent that lowers the objective most, while
// it does. A good early incumbent is what lets the bounds prune; the curiosity policy in
// particular can wander for a long time before it meets a good list on its own.
void CorelsSearch::greedy_incumbent() {
  Words notcapt = valid_;
  std::vector<char> used(R_, 0);
  std::vector<int> prefix, labels;
  double b = 0.0;
  double rest_tot = mass_->of(kTotal, notcapt.data(), nullptr);
  double rest_pos = mass_->of(kPositive, notcapt.data(), nullptr);
  double current = b + std::min(rest_pos, rest_tot - rest_pos);
  while (true) {
    int best_r = -1;
    double best_obj = current - tau_, best_b = 0.0, best_tot = 0.0, best_pos = 0.0;
    int best_label = 0;
    for (std::size_t r = 0; r < R_; ++r) {
      if (used[r]) continue;
      // with millions of antecedents one pass takes a while: the limit may pass meanwhile
      if ((r & 1023) == 1023 && budget_.check_clock()) return;
      const double tot = mass_->of(kTotal, rule(r), notcapt.data());
      if (tot <= 0.0) continue;
      const double pos = mass_->of(kPositive, rule(r), notcapt.data());
      const double nb = b + std::min(pos, tot - pos) + Lambda_;
      const double rt = rest_tot - tot, rp = rest_pos - pos;
      const double obj = nb + std::min(rp, rt - rp);
      if (obj < best_obj) {
        best_obj = obj;
        best_r = static_cast<int>(r);
        best_b = nb;
        best_tot = tot;
        best_pos = pos;
        best_label = pos > tot - pos ? 1 : 0;
      }
    }
    if (best_r < 0) break;
    used[best_r] = 1;
    prefix.push_back(best_r);
    labels.push_back(best_label);
    const std::uint64_t* a = rule(static_cast<std::size_t>(best_r));
    for (std::size_t k = 0; k < W_; ++k) notcapt[k] &= ~a[k];
    b = best_b;
    rest_tot -= best_tot;
    rest_pos -= best_pos;
    current = best_obj;
    if (current < Rc_ - tau_) {
      Rc_ = current;
      best_prefix_ = prefix;
      best_labels_ = labels;
      best_default_ = rest_pos > rest_tot - rest_pos ? 1 : 0;
    }
  }
}

SearchOutput CorelsSearch::run() {
  build_classes();

  // Root = the empty list: only the default rule.
  const double all_tot = mass_->of(kTotal, valid_.data(), nullptr);
  const double all_pos = mass_->of(kPositive, valid_.data(), nullptr);
  const int root = new_node();
  {
    Node& r = nodes_[root];
    r.b = 0.0;
    r.b0 = equivalent_points_ ? mass_->of(kMinority, valid_.data(), nullptr) : 0.0;
    r.obj = std::min(all_pos, all_tot - all_pos);
    r.captured = 0.0;
  }
  Rc_ = nodes_[root].obj;
  best_default_ = all_pos > all_tot - all_pos ? 1 : 0;
  greedy_incumbent();
  push(root);
  record_trace();

  Words notcapt(W_);
  std::vector<char> used(R_, 0);
  std::vector<int> path;
  bool stopped = false;
  std::uint64_t n_discarded = 0;
  while (!queue_.empty()) {
    const QEntry top = queue_.top();
    queue_.pop();
    if (!alive(top.node, top.gen) || !nodes_[top.node].in_queue) continue;
    const int id = top.node;
    nodes_[id].in_queue = false;
    if (prune_key(nodes_[id]) >= Rc_ - tau_) {  // the incumbent improved since the push
      nodes_[id].done = true;
      prune_up(id);
      record_trace();
      // millions of entries can be discarded in a row after the incumbent improves
      if ((++n_discarded & 63) == 0 && budget_.check_clock()) {
        stopped = true;
        break;
      }
      continue;
    }
    // n_explored counts expanded prefixes, so the budget ticks here, not for discarded entries
    // (and the clock is read at every one: an expansion can look at millions of antecedents)
    if (budget_.tick(memory_bytes(), child_bytes()) || budget_.check_clock()) {
      nodes_[id].in_queue = true;  // still open: its bound stays in the global lower bound
      stopped = true;
      break;
    }

    // A bad_alloc from here to the end of the expansion ends the search as the memory limit
    // does: the node goes back to the open set (its bound stays in the global lower bound)
    // and the children already queued keep theirs.
    bool improved = false;
    bool cut = false;  // a limit stopped this expansion part-way
    Words live;
    try {
      // Rebuild the prefix and its uncaptured set from the trie path (no stored bitsets).
      path.clear();
      for (int v = id; nodes_[v].parent >= 0; v = nodes_[v].parent) path.push_back(nodes_[v].rule);
      std::reverse(path.begin(), path.end());
      notcapt = valid_;
      for (int r : path) {
        used[r] = 1;
        const std::uint64_t* a = rule(static_cast<std::size_t>(r));
        for (std::size_t k = 0; k < W_; ++k) notcapt[k] &= ~a[k];
      }
      Mass rest_all;
      rest_all.tot = mass_->of(kTotal, notcapt.data(), nullptr);
      rest_all.pos = mass_->of(kPositive, notcapt.data(), nullptr);
      rest_all.eq = equivalent_points_ ? mass_->of(kMinority, notcapt.data(), nullptr) : 0.0;
      const double parent_b = nodes_[id].b;
      const int parent_depth = nodes_[id].depth;

      const int parent_id = nodes_[id].parent;
      // a copy: creating children below may reallocate nodes_
      const Words inherited_live = parent_id >= 0 ? nodes_[parent_id].live : Words();
      const Words* inherited = parent_id >= 0 ? &inherited_live : nullptr;
      live.assign(live_words_, 0);
      for (std::size_t r = 0; r < R_; ++r) {
        if (used[r]) continue;
        if (inherited && !((*inherited)[r >> 6] >> (r & 63) & 1u)) continue;
        if ((r & 1023) == 1023 && budget_.check_clock()) {
          cut = true;
          break;
        }
        Mass c;
        c.tot = mass_->of(kTotal, rule(r), notcapt.data());
        if (support_ && c.tot < Lambda_ - tau_) continue;  // Thm 10
        if (c.tot <= 0.0) continue;  // captures nothing: never useful, and keeps lists finite
        c.pos = mass_->of(kPositive, rule(r), notcapt.data());
        const double cor = std::max(c.pos, c.tot - c.pos);
        if (accurate_support_ && cor < Lambda_ - tau_) continue;  // Thm 11
        live[r >> 6] |= std::uint64_t{1} << (r & 63);
        const double b = parent_b + (c.tot - cor) + Lambda_;
        if (b >= Rc_ - tau_) continue;  // Thm 1: neither this list nor any extension improves
        const double rest_tot = rest_all.tot - c.tot;
        const double rest_pos = rest_all.pos - c.pos;
        const double obj = b + std::min(rest_pos, rest_tot - rest_pos);
        const int label = c.pos > c.tot - c.pos ? 1 : 0;
        if (obj < Rc_ - tau_) {
          // built aside and committed together, so a bad_alloc keeps the list and its value
          std::vector<int> prefix = path, labels;
          prefix.push_back(static_cast<int>(r));
          for (int v = id; nodes_[v].parent >= 0; v = nodes_[v].parent)
            labels.push_back(nodes_[v].label);
          std::reverse(labels.begin(), labels.end());
          labels.push_back(label);
          best_prefix_.swap(prefix);
          best_labels_.swap(labels);
          Rc_ = obj;
          best_default_ = rest_pos > rest_tot - rest_pos ? 1 : 0;
          improved = true;
        }
        if (max_support_ && rest_tot < Lambda_ - tau_) continue;  // Thm 21
        // Thm 20; the minority mass is summed only for the few children that get this far
        const double b0 =
            equivalent_points_
                ? rest_all.eq - mass_->of(kMinority, rule(r), notcapt.data())
                : 0.0;
        const double key_bound = b + b0 + (lookahead_ ? Lambda_ : 0.0);
        if (key_bound >= Rc_ - tau_) continue;  // Lemma 2 (+ Thm 20)

        // Symmetry-aware map (Cor 16 / Thm 15): keep only the best-bounded prefix per key.
        MapValue* seen = nullptr;
        Words key;
        const double beta = b + b0;
        if (cfg_.symmetry != Symmetry::none) {
          if (cfg_.symmetry == Symmetry::permutation_map) {
            key.reserve(path.size() + 1);
            for (int q : path) key.push_back(static_cast<std::uint64_t>(q));
            key.push_back(r);
            std::sort(key.begin(), key.end());
          } else {
            key.resize(W_);
            const std::uint64_t* a = rule(r);
            for (std::size_t k = 0; k < W_; ++k) key[k] = notcapt[k] & ~a[k];
          }
          seen = map_.find(key);
          if (seen) {
            if (beta >= seen->bound - tau_) continue;  // an equal-or-better twin exists
            if (alive(seen->node, seen->gen)) delete_subtree(seen->node);
          }
        }
        if (!budget_.memory_ok(memory_bytes(), child_bytes() + key.size() * 8)) {
          cut = true;
          break;
        }
        const int child = new_node();
        if (cfg_.symmetry != Symmetry::none) {
          const MapValue value{beta, child, nodes_[child].gen};
          if (seen)
            *seen = value;  // deleting the twin's subtree does not touch the map
          else
            map_.insert(key, value);
        }
        Node& nc = nodes_[child];
        nc.parent = id;
        nc.rule = static_cast<int>(r);
        nc.depth = parent_depth + 1;
        nc.b = b;
        nc.b0 = b0;
        nc.obj = obj;
        nc.captured = (N_ - rest_tot) / N_;
        nc.label = label;
        nodes_[id].children.push_back(child);
        push(child);
      }
    } catch (const std::bad_alloc&) {
      for (int r : path) used[r] = 0;
      nodes_[id].in_queue = true;
      budget_.out_of_memory();
      stopped = true;
      break;
    }
    for (int r : path) used[r] = 0;
    if (cut) {
      // the node stays open (its bound in the global lower bound); its children so far are
      // queued, each with a bound at least its own
      nodes_[id].in_queue = true;
      stopped = true;
      break;
    }
    if (!nodes_[id].children.empty()) {
      live_bytes_ += live.size() * 8;
      nodes_[id].live = std::move(live);
    }
    // Garbage collection may delete this very node (the incumbent moved under its bound).
    if (improved) garbage_collect();
    if (!nodes_[id].deleted) {
      nodes_[id].done = true;
      if (nodes_[id].children.empty()) prune_up(id);
    }
    record_trace();
  }

  budget_.note_memory(memory_bytes());
  const double lb = stopped ? std::min(Rc_, queue_min_bound()) : Rc_;
  out_.status = budget_.status();
  out_.objective = Rc_ / N_;
  out_.lower_bound = lb / N_;
  // the rule list as a one-sided tree: rule k's antecedent splits, its x = 1 side is the
  // leaf of its label, its x = 0 side holds the rest of the list
  out_.tree.assign(best_prefix_.begin(), best_prefix_.end());
  out_.tree.push_back(-(best_default_ + 1));
  for (auto it = best_labels_.rbegin(); it != best_labels_.rend(); ++it)
    out_.tree.push_back(-(*it + 1));
  out_.n_explored = budget_.nodes();
  out_.peak_memory_mb = budget_.peak_memory_mb();
  out_.stats["nodes_created"] = static_cast<double>(n_created_);
  out_.stats["max_queue"] = static_cast<double>(max_queue_);
  out_.stats["gc_passes"] = static_cast<double>(n_gc_);
  out_.stats["equivalence_classes"] = static_cast<double>(U_);
  out_.stats["out_of_memory"] = budget_.ran_out_of_memory() ? 1.0 : 0.0;
  out_.record(budget_.elapsed(), out_.objective, out_.lower_bound);
  return out_;
}

}  // namespace

SearchOutput search_corels(const Problem& problem, const SearchConfig& config,
                           std::function<bool()> interrupted) {
  config.validate();
  if (problem.n_classes() != 2)
    throw std::invalid_argument("search_corels needs binary labels (a Problem with n_classes = 2)");
  if (problem.n_samples() == 0 || !(problem.total_weight() > 0.0))
    throw std::invalid_argument("the problem has no sample weight");
  CorelsSearch search(problem, config, std::move(interrupted));
  return search.run();
}

}  // namespace odtkit

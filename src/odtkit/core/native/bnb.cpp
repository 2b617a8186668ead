// OSDT leaf-set branch and bound; see bnb.hpp and docs/formulations-search-and-pruning.md §2-3.
//
// Everything is in count units (weight; Lambda = lam * total weight). Bounds used (names as in
// config.bounds):
//   hierarchical + equivalent_points + lookahead: the state bound (§2.3, corrected)
//       NB(L, S) = sum_{L\S} mis + sum_S eq + Lambda (|L| + |S|)
//   leaf_count:            Lambda (|L| + |S|) >= N R^c  (§2.4, corrected form; cheap pre-check)
//   support:               a leaf is splittable only if mis - eq > Lambda (§2.5)
//   incremental_accuracy:  a split with mis(p) - mis(p0) - mis(p1) <= Lambda forces a further
//                          split of p0 or p1 (§2.6)
//   leaf_accuracy:         feature f is dead for leaf p if cor(p & x_f=v) <= Lambda (§2.7)
//   permutation:           TreeCache keyed by the sorted leaf ids (§2.8)
// Splits with an empty (zero-weight) side are never generated: they add a leaf and change no
// prediction, so they can only tie with fewer leaves (tie-safe, §0.5).
#include "bnb.hpp"

#include "greedy.hpp"
#include "paged.hpp"
#include "search_common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace odtkit {
namespace {

using Words = std::vector<std::uint64_t>;

// TreeCache (§2.8): set of sorted leaf-id vectors. Keys live in pages and the table is open
// addressing over key indices, so millions of trees cost a few flat allocations (inserting and
// tearing down a node-based set of vectors dominated the run time of large searches).
class TreeCache {
 public:
  // true if the key was not present (and is now)
  bool insert(const std::vector<int>& key) {
    if ((n_keys_ + 1) * 2 > slots_.size()) grow();
    const std::uint64_t h = hash(key.data(), key.size());
    std::size_t i = static_cast<std::size_t>(h) & (slots_.size() - 1);
    while (slots_[i] != 0) {
      const Ref& r = refs_[slots_[i] - 1];
      if (r.hash == h && r.len == key.size() && std::equal(key.begin(), key.end(), r.ids))
        return false;
      i = (i + 1) & (slots_.size() - 1);
    }
    refs_.push_back({h, arena_.copy(key.data(), key.size()), key.size()});
    slots_[i] = refs_.size();
    ++n_keys_;
    return true;
  }
  std::size_t size() const { return n_keys_; }
  std::size_t bytes() const {
    return arena_.bytes() + refs_.bytes() + paged::vector_bytes(slots_);
  }
  // What inserting a key of `len` ids may allocate (pages, and the rehash's new slot array).
  std::size_t insert_bytes(std::size_t len) const {
    std::size_t b = arena_.alloc_bytes(len) + refs_.push_bytes();
    if ((n_keys_ + 1) * 2 > slots_.size())
      b += std::max<std::size_t>(64, slots_.size() * 2) * sizeof(std::size_t);
    return b;
  }

 private:
  struct Ref {
    std::uint64_t hash;
    const int* ids;
    std::size_t len;
  };
  static std::uint64_t hash(const int* ids, std::size_t n) {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    for (std::size_t k = 0; k < n; ++k) {
      std::uint64_t x = static_cast<std::uint64_t>(ids[k]) + 0x9e3779b97f4a7c15ULL;
      x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
      x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
      h = (h ^ (x ^ (x >> 31))) * 0x100000001b3ULL;
    }
    return h ^ (h >> 32);
  }
  void grow() {
    std::vector<std::size_t> next(std::max<std::size_t>(64, slots_.size() * 2), 0);
    for (std::size_t r = 0; r < refs_.size(); ++r) {
      std::size_t i = static_cast<std::size_t>(refs_[r].hash) & (next.size() - 1);
      while (next[i] != 0) i = (i + 1) & (next.size() - 1);
      next[i] = r + 1;
    }
    slots_.swap(next);
  }

  paged::Arena<int> arena_;
  paged::Vector<Ref> refs_;
  std::vector<std::size_t> slots_;  // 0: empty, else index into refs_ + 1
  std::size_t n_keys_ = 0;
};

struct Split {
  int feature;
  int left;   // leaf id of p & x_f = 0
  int right;  // leaf id of p & x_f = 1
};

// One distinct leaf (a conjunction of literals), owned by the LeafCache. Plain data: its arrays
// live in the search's arenas (paged.hpp), so the memory limit sees them and teardown is
// O(pages), not a free per array.
struct Leaf {
  std::uint64_t hash = 0;          // of key
  std::uint64_t* key = nullptr;    // [features used | values of the used features], 2 FW words
  std::uint64_t* support = nullptr;  // W words
  double* cw = nullptr;            // per-class weight, K
  std::uint64_t* dead = nullptr;   // FW words: dead features (§2.7), inherited from the parent
                                   // it was first built from
  const Split* splits = nullptr;   // live splits, computed once
  std::uint32_t n_splits = 0;
  double n = 0.0, mis = 0.0, eq = 0.0, cor = 0.0;
  int label = 0;
  int depth = 0;
  bool splits_ready = false;
};

// An open (or free) state. Its ids live in the IntPool: n_leaves leaf ids (fixed leaves first,
// then the n_new newest) followed by n_new flags (newest leaf scheduled to split).
struct State {
  int* ids = nullptr;
  int n_leaves = 0, n_new = 0;
  double nb = 0.0;       // NB, the state bound
  double nlb = 0.0;      // N b(d_un)
  double supp_un = 0.0;  // weight captured by the fixed leaves
  int level = 0;
  std::uint32_t gen = 0;
  bool open = false;
};

struct QEntry {
  double key;
  long long order;
  int state;
  bool operator<(const QEntry& o) const {  // priority_queue pops the largest: invert
    if (key != o.key) return key > o.key;
    return order > o.order;
  }
};

struct BEntry {
  double bound;
  int state;
  std::uint32_t gen;
  bool operator<(const BEntry& o) const { return bound > o.bound; }
};

class BnbSearch {
 public:
  BnbSearch(const Problem& problem, const SearchConfig& config, std::function<bool()> interrupted,
            double upper_bound)
      : P_(problem),
        cfg_(config),
        budget_(config, std::move(interrupted)),
        policy_(config.policy),
        upper_bound_(upper_bound) {
    out_.progress = config.progress;
    M_ = P_.n_features();
    K_ = P_.n_classes();
    FW_ = (M_ + 63) / 64;
    key_scratch_.assign(2 * FW_, 0);
    W_ = P_.n_words();
    N_ = P_.total_weight();
    Lambda_ = cfg_.lam * N_;
    tau_ = count_tolerance(N_);
    zero_ = zero_weight(N_);
    use_eq_ = cfg_.bound_on("equivalent_points");
    use_lookahead_ = cfg_.bound_on("lookahead");
    use_leaf_count_ = cfg_.bound_on("leaf_count");
    use_support_ = cfg_.bound_on("support");
    use_incremental_ = cfg_.bound_on("incremental_accuracy");
    use_leaf_accuracy_ = cfg_.bound_on("leaf_accuracy") && cfg_.bound_on("accurate_support");
    use_permutation_ = cfg_.bound_on("permutation");
    max_depth_ = cfg_.max_depth < 0 ? std::numeric_limits<int>::max() : cfg_.max_depth;
  }

  SearchOutput run();

 private:
  // LeafCache -------------------------------------------------------------------------------
  int root_leaf();
  int child_leaf(int parent, int feature, int value, const double* cw_side);
  int find_leaf(const std::uint64_t* key, std::uint64_t h) const;
  void index_leaf(int id);
  // false (and memory_stop_) when the memory limit stopped it before it finished
  bool ensure_splits(int id);
  bool splittable(int id);
  double eq_term(int id) const { return use_eq_ ? leaves_[id].eq : 0.0; }

  // search ----------------------------------------------------------------------------------
  double threshold() const { return std::min(Rc_, ub_count_); }
  bool prunable(double bound) const { return bound >= threshold() - tau_; }
  void expand(int sid);
  void push_masks(const std::vector<int>& L2, std::size_t n_fixed, int level);
  // Push a state over `leaves` (its last n_new are the newest, `split` flags them); the caller
  // has checked room(state_bytes_ahead(...)).
  void push_state(State st, const std::vector<int>& leaves, const char* split);
  double open_min_bound();
  std::size_t memory_bytes() const;
  // Whether `ahead` more bytes (plus a new page of any container) stay within the memory limit;
  // if not, sets memory_stop_. Called before every allocation that grows the search.
  bool room(std::size_t ahead);
  std::size_t leaf_bytes_ahead() const;
  std::size_t state_bytes_ahead(std::size_t n_ids) const;
  bool heavy_work_should_stop();
  void record();
  void consider_incumbent(const std::vector<int>& L2);

  // trees -----------------------------------------------------------------------------------
  void build_tree(std::vector<int> ids, Words& consumed, std::vector<int>& out) const;

  const Problem& P_;
  const SearchConfig& cfg_;
  Budget budget_;
  Policy policy_;
  double upper_bound_;  // normalized, +inf: none

  std::size_t M_ = 0, FW_ = 0, W_ = 0;
  int K_ = 2;
  double N_ = 0.0, Lambda_ = 0.0, tau_ = 0.0, zero_ = 0.0, ub_count_ = 0.0;
  bool use_eq_, use_lookahead_, use_leaf_count_, use_support_, use_incremental_,
      use_leaf_accuracy_, use_permutation_;
  int max_depth_;

  paged::Vector<Leaf> leaves_;
  paged::Arena<std::uint64_t> leaf_words_;  // keys, supports, dead sets
  paged::Arena<double> leaf_weights_;       // class weights
  paged::Arena<Split> leaf_splits_;
  std::vector<Split> split_scratch_;
  std::vector<std::uint32_t> leaf_slots_;  // open addressing over leaf ids + 1 (0: empty)
  Words key_scratch_;
  TreeCache tree_cache_;

  paged::Vector<State> states_;
  paged::Vector<int> free_states_;
  paged::IntPool state_ids_pool_;
  paged::Heap<QEntry> queue_;
  paged::Heap<BEntry> bheap_;
  long long counter_ = 0;
  long long n_states_pushed_ = 0, n_trees_evaluated_ = 0, n_cache_hits_ = 0;

  double Rc_ = 0.0;
  std::vector<int> best_leaves_;  // empty: the incumbent is best_code_
  std::vector<int> best_code_;
  double partial_bound_ = std::numeric_limits<double>::infinity();  // state cut mid-expansion
  long long work_ = 0;        // trees + states generated, for in-expansion limit checks
  bool memory_stop_ = false;  // the memory limit hit inside an expansion
  SearchOutput out_;
};

// ---------------------------------------------------------------------------------------------
// LeafCache
// ---------------------------------------------------------------------------------------------

int BnbSearch::find_leaf(const std::uint64_t* key, std::uint64_t h) const {
  const std::size_t mask = leaf_slots_.size() - 1;
  for (std::size_t i = h & mask; leaf_slots_[i] != 0; i = (i + 1) & mask) {
    const Leaf& l = leaves_[leaf_slots_[i] - 1];
    if (l.hash == h && std::equal(key, key + 2 * FW_, l.key)) return static_cast<int>(leaf_slots_[i] - 1);
  }
  return -1;
}

// Add leaves_[id] to the index (growing the slot array at half load).
void BnbSearch::index_leaf(int id) {
  if ((leaves_.size() + 1) * 2 > leaf_slots_.size()) {
    leaf_slots_.assign(std::max<std::size_t>(64, leaf_slots_.size() * 2), 0);
    for (std::size_t k = 0; k < leaves_.size(); ++k) {
      if (static_cast<int>(k) == id) continue;
      std::size_t i = leaves_[k].hash & (leaf_slots_.size() - 1);
      while (leaf_slots_[i] != 0) i = (i + 1) & (leaf_slots_.size() - 1);
      leaf_slots_[i] = static_cast<std::uint32_t>(k + 1);
    }
  }
  std::size_t i = leaves_[id].hash & (leaf_slots_.size() - 1);
  while (leaf_slots_[i] != 0) i = (i + 1) & (leaf_slots_.size() - 1);
  leaf_slots_[i] = static_cast<std::uint32_t>(id + 1);
}

int BnbSearch::root_leaf() {
  Leaf leaf;
  leaf.key = leaf_words_.alloc(2 * FW_);
  std::fill(leaf.key, leaf.key + 2 * FW_, 0);
  leaf.hash = words::hash(leaf.key, 2 * FW_);
  leaf.support = leaf_words_.copy(P_.all_points().data(), W_);
  leaf.cw = leaf_weights_.alloc(static_cast<std::size_t>(K_));
  P_.class_weights(leaf.support, leaf.cw);
  leaf.dead = leaf_words_.alloc(FW_);
  std::fill(leaf.dead, leaf.dead + FW_, 0);
  for (int k = 0; k < K_; ++k) leaf.n += leaf.cw[k];
  leaf.mis = misclassified(leaf.cw, K_);
  leaf.cor = leaf.n - leaf.mis;
  leaf.label = majority_class(leaf.cw, K_);
  leaf.eq = P_.minority(leaf.support);
  leaves_.push_back(leaf);
  index_leaf(0);
  return 0;
}

// The leaf p & (x_feature = value); cw_side are its class weights (already computed).
int BnbSearch::child_leaf(int parent, int feature, int value, const double* cw_side) {
  std::copy(leaves_[parent].key, leaves_[parent].key + 2 * FW_, key_scratch_.begin());
  key_scratch_[static_cast<std::size_t>(feature) >> 6] |= std::uint64_t{1} << (feature & 63);
  if (value)
    key_scratch_[FW_ + (static_cast<std::size_t>(feature) >> 6)] |= std::uint64_t{1}
                                                                     << (feature & 63);
  const std::uint64_t h = words::hash(key_scratch_.data(), 2 * FW_);
  const int found = find_leaf(key_scratch_.data(), h);
  if (found >= 0) return found;
  const Leaf& p = leaves_[parent];
  Leaf leaf;
  leaf.hash = h;
  leaf.key = leaf_words_.copy(key_scratch_.data(), 2 * FW_);
  leaf.support = leaf_words_.alloc(W_);
  const std::uint64_t* f = P_.feature_words(static_cast<std::size_t>(feature));
  if (value)
    words::and_into(leaf.support, p.support, f, W_);
  else
    words::and_not_into(leaf.support, p.support, f, W_);
  leaf.cw = leaf_weights_.copy(cw_side, static_cast<std::size_t>(K_));
  for (int k = 0; k < K_; ++k) leaf.n += leaf.cw[k];
  leaf.mis = misclassified(leaf.cw, K_);
  leaf.cor = leaf.n - leaf.mis;
  leaf.label = majority_class(leaf.cw, K_);
  leaf.eq = P_.minority(leaf.support);
  leaf.depth = p.depth + 1;
  leaf.dead = leaf_words_.copy(p.dead, FW_);  // monotone: cor only shrinks below a leaf (§2.7)
  const int id = static_cast<int>(leaves_.size());
  leaves_.push_back(leaf);
  index_leaf(id);
  return id;
}

// Live splits of a leaf (features not used on its path, not dead, both sides non-empty).
bool BnbSearch::ensure_splits(int id) {
  if (leaves_[id].splits_ready) return true;
  std::vector<double> cw1(static_cast<std::size_t>(K_)), cw0(static_cast<std::size_t>(K_));
  split_scratch_.clear();
  Leaf& p = leaves_[id];  // pages never move: stays valid while children are added
  for (std::size_t f = 0; f < M_; ++f) {
    const std::uint64_t bit = std::uint64_t{1} << (f & 63);
    if ((p.key[f >> 6] & bit) || (p.dead[f >> 6] & bit)) continue;
    const double n1 = P_.split_class_weights(p.support, P_.feature_words(f), p.cw, cw1.data(),
                                             cw0.data());
    const double n0 = p.n - n1;
    if (n1 <= zero_ || n0 <= zero_) continue;  // empty side: never useful
    if (use_leaf_accuracy_) {
      const double cor1 = n1 - misclassified(cw1.data(), K_);
      const double cor0 = n0 - misclassified(cw0.data(), K_);
      if (cor0 <= Lambda_ + tau_ || cor1 <= Lambda_ + tau_) {
        p.dead[f >> 6] |= bit;  // permanent, shared by every tree holding this leaf
        continue;
      }
    }
    if (!room(2 * leaf_bytes_ahead())) return false;  // splits_ready stays false
    const int left = child_leaf(id, static_cast<int>(f), 0, cw0.data());
    const int right = child_leaf(id, static_cast<int>(f), 1, cw1.data());
    split_scratch_.push_back({static_cast<int>(f), left, right});
  }
  if (!split_scratch_.empty()) {
    if (!room(leaf_splits_.alloc_bytes(split_scratch_.size()))) return false;
    p.splits = leaf_splits_.copy(split_scratch_.data(), split_scratch_.size());
  }
  p.n_splits = static_cast<std::uint32_t>(split_scratch_.size());
  p.splits_ready = true;
  return true;
}

bool BnbSearch::splittable(int id) {
  const Leaf& p = leaves_[id];
  if (p.depth >= max_depth_) return false;
  if (p.mis <= zero_) return false;  // a pure leaf: any split only adds leaves
  if (use_support_ && !(p.mis - p.eq > Lambda_ + tau_)) return false;  // §2.5
  if (!ensure_splits(id)) return false;  // memory limit (the caller checks memory_stop_)
  return leaves_[id].n_splits > 0;
}

// ---------------------------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------------------------

double BnbSearch::open_min_bound() {
  while (!bheap_.empty()) {
    const BEntry& e = bheap_.top();
    const State& st = states_[static_cast<std::size_t>(e.state)];
    if (st.open && st.gen == e.gen) return e.bound;
    bheap_.pop();
  }
  return std::numeric_limits<double>::infinity();
}

// Every byte of the leaf cache, the tree cache, the states and the queues.
std::size_t BnbSearch::memory_bytes() const {
  return leaves_.bytes() + leaf_words_.bytes() + leaf_weights_.bytes() + leaf_splits_.bytes() +
         paged::vector_bytes(leaf_slots_) + tree_cache_.bytes() + states_.bytes() +
         free_states_.bytes() + state_ids_pool_.bytes() + queue_.bytes() + bheap_.bytes();
}

// One new leaf: its Leaf, key/support/dead words and class weights (each may open a page) and
// a rehash of the leaf index.
std::size_t BnbSearch::leaf_bytes_ahead() const {
  std::size_t b = sizeof(Leaf) + leaves_.push_bytes() +
                  (3 * FW_ + W_) * sizeof(std::uint64_t) + leaf_words_.alloc_bytes(W_) +
                  leaf_words_.alloc_bytes(2 * FW_) + K_ * sizeof(double) +
                  leaf_weights_.alloc_bytes(static_cast<std::size_t>(K_));
  if ((leaves_.size() + 2) * 2 > leaf_slots_.size())
    b += std::max<std::size_t>(64, leaf_slots_.size() * 2) * sizeof(std::uint32_t);
  return b;
}

// One pushed state with n_ids ids and flags.
std::size_t BnbSearch::state_bytes_ahead(std::size_t n_ids) const {
  return sizeof(State) + states_.push_bytes() + n_ids * sizeof(int) +
         state_ids_pool_.alloc_bytes(n_ids) + sizeof(QEntry) + queue_.push_bytes() +
         sizeof(BEntry) + bheap_.push_bytes();
}

bool BnbSearch::room(std::size_t ahead) {
  if (memory_stop_) return false;
  if (cfg_.memory_limit_mb <= 0) return true;
  if (!budget_.memory_ok(memory_bytes(), ahead)) {
    memory_stop_ = true;
    return false;
  }
  return true;
}

// One expansion can generate millions of trees and states, so limits are also checked inside
// it: memory before every allocation (room()), the clock and the interrupt every 64 units of
// work through the Budget.
bool BnbSearch::heavy_work_should_stop() {
  if (memory_stop_ || budget_.stopped()) return true;
  if ((++work_ & 63) != 0) return false;
  return budget_.check_clock();
}

void BnbSearch::record() {
  const double lb = std::min({threshold(), open_min_bound(), partial_bound_});
  const double incumbent = Rc_ / N_, bound = std::min(lb, Rc_) / N_;
  if (out_.changed(incumbent, bound)) out_.record(budget_.elapsed(), incumbent, bound);
}

void BnbSearch::push_state(State st, const std::vector<int>& leaves, const char* split) {
  st.n_leaves = static_cast<int>(leaves.size());
  st.ids = state_ids_pool_.alloc(leaves.size() + static_cast<std::size_t>(st.n_new));
  std::copy(leaves.begin(), leaves.end(), st.ids);
  for (int i = 0; i < st.n_new; ++i) st.ids[leaves.size() + static_cast<std::size_t>(i)] = split[i];
  double key = 0.0;
  long long order = counter_++;
  switch (policy_) {
    case Policy::curiosity:
      key = st.level == 0 ? 0.0 : st.nlb / std::max(st.supp_un, 0.01);
      break;
    case Policy::lower_bound:
      key = st.nlb;
      break;
    case Policy::objective: {
      double r = Lambda_ * static_cast<double>(leaves.size());
      for (int id : leaves) r += leaves_[id].mis;
      key = r;
      break;
    }
    case Policy::bfs:
      key = st.level;
      break;
    case Policy::dfs:
      key = -static_cast<double>(st.level);
      order = -order;
      break;
  }
  int sid;
  if (!free_states_.empty()) {
    sid = free_states_.back();
    free_states_.pop_back();
    st.gen = states_[static_cast<std::size_t>(sid)].gen;
  } else {
    sid = static_cast<int>(states_.size());
    states_.push_back(State());
    st.gen = 0;
  }
  st.open = true;
  states_[static_cast<std::size_t>(sid)] = st;
  queue_.push({key, order, sid});
  bheap_.push({st.nb, sid, st.gen});
  ++n_states_pushed_;
}

void BnbSearch::consider_incumbent(const std::vector<int>& L2) {
  ++n_trees_evaluated_;
  double r = Lambda_ * static_cast<double>(L2.size());
  for (int id : L2) r += leaves_[id].mis;
  if (r < Rc_ - tau_) {
    best_leaves_ = L2;  // the tree before its value: a bad_alloc here keeps the two in step
    Rc_ = r;
  }
}

// All admissible masks S2 over the newest leaves of L2 (positions n_fixed..end), by a DFS that
// prunes with the best completion (adding a leaf to S2 changes NB by eq - mis + Lambda).
void BnbSearch::push_masks(const std::vector<int>& L2, std::size_t n_fixed, int level) {
  const std::size_t n_new = L2.size() - n_fixed;
  double base = Lambda_ * static_cast<double>(L2.size());  // NB with S2 empty
  double supp_all = 0.0;
  for (int id : L2) {
    base += leaves_[id].mis;
    supp_all += leaves_[id].n;
  }
  std::vector<char> can(n_new, 0);
  std::vector<double> delta(n_new, 0.0);
  for (std::size_t i = 0; i < n_new; ++i) {
    const int id = L2[n_fixed + i];
    can[i] = splittable(id) ? 1 : 0;
    delta[i] = eq_term(id) - leaves_[id].mis + (use_lookahead_ ? Lambda_ : 0.0);
  }
  if (memory_stop_) return;  // a leaf's splits did not fit: the caller keeps the bound
  // newest leaves come in sibling pairs (2i, 2i+1); `must[i]`: at least one of the pair splits
  std::vector<char> must(n_new / 2, 0);
  if (use_incremental_) {
    for (std::size_t i = 0; i + 1 < n_new; i += 2) {
      const Leaf& a = leaves_[L2[n_fixed + i]];
      const Leaf& b = leaves_[L2[n_fixed + i + 1]];
      // the parent's mistakes = a.mis + b.mis + improvement; recompute from the class weights
      double parent_cw_mis = 0.0;
      {
        std::vector<double> cw(static_cast<std::size_t>(K_));
        for (int k = 0; k < K_; ++k) cw[k] = a.cw[k] + b.cw[k];
        parent_cw_mis = misclassified(cw.data(), K_);
      }
      if (parent_cw_mis - a.mis - b.mis <= Lambda_ + tau_) {
        if (!can[i] && !can[i + 1]) return;  // §2.6: no admissible successor at all
        must[i / 2] = 1;
      }
    }
  }
  // suffix sums of the best possible decrease, for the completion bound
  std::vector<double> best_rest(n_new + 1, 0.0);
  for (std::size_t i = n_new; i-- > 0;)
    best_rest[i] = best_rest[i + 1] + (can[i] ? std::min(0.0, delta[i]) : 0.0);

  std::vector<char> chosen(n_new, 0);
  const double leaf_count_cap = threshold() - tau_;
  // iterative DFS over positions: at each position decide include (if allowed) or exclude
  struct Frame {
    std::size_t pos;
    double nb;
    int count;
    int choice;  // 0: try include next, 1: try exclude next, 2: done
  };
  std::vector<Frame> stack;
  stack.push_back({0, base, 0, 0});
  while (!stack.empty()) {
    Frame& fr = stack.back();
    if (fr.pos == n_new) {
      const Frame leaf = fr;
      stack.pop_back();
      if (leaf.count == 0) continue;
      if (!room(state_bytes_ahead(L2.size() + n_new))) return;
      State st;
      st.n_new = static_cast<int>(n_new);
      st.nb = leaf.nb;
      st.level = level;
      double nlb = Lambda_ * static_cast<double>(L2.size());
      double supp_un = 0.0;
      for (std::size_t i = 0; i < L2.size(); ++i) {
        const bool in_s = i >= n_fixed && chosen[i - n_fixed];
        if (!in_s) {
          nlb += leaves_[L2[i]].mis;
          supp_un += leaves_[L2[i]].n;
        }
      }
      st.nlb = nlb;
      st.supp_un = supp_un;
      push_state(st, L2, chosen.data());
      if (heavy_work_should_stop()) return;
      continue;
    }
    if (fr.choice == 2) {
      stack.pop_back();
      continue;
    }
    const std::size_t i = fr.pos;
    const bool include = fr.choice == 0;
    fr.choice += 1;
    if (include && !can[i]) continue;
    // must-pair check when deciding the second leaf of a pair
    if (!include && (i % 2 == 1) && must[i / 2] && !chosen[i - 1]) continue;
    chosen[i] = include ? 1 : 0;
    const double nb = fr.nb + (include ? delta[i] : 0.0);
    const int count = fr.count + (include ? 1 : 0);
    // completion bound: the smallest NB reachable below this decision
    if (prunable(nb + best_rest[i + 1])) continue;
    if (use_leaf_count_ &&
        Lambda_ * static_cast<double>(L2.size() + static_cast<std::size_t>(count)) >=
            leaf_count_cap)
      continue;
    stack.push_back({i + 1, nb, count, 0});
  }
  (void)supp_all;
}

void BnbSearch::expand(int sid) {
  State& slot = states_[static_cast<std::size_t>(sid)];
  const State st = slot;
  // from here on a stop (memory, clock, bad_alloc) inside this expansion keeps st.nb as a bound
  partial_bound_ = st.nb;
  slot.open = false;
  ++slot.gen;
  free_states_.push_back(sid);
  const std::size_t n_old = static_cast<std::size_t>(st.n_leaves - st.n_new);
  std::vector<int> fixed(st.ids, st.ids + n_old);
  std::vector<int> to_split;
  for (int i = 0; i < st.n_new; ++i) {
    const int id = st.ids[n_old + static_cast<std::size_t>(i)];
    if (st.ids[static_cast<std::size_t>(st.n_leaves + i)])
      to_split.push_back(id);
    else
      fixed.push_back(id);
  }
  state_ids_pool_.free(st.ids, static_cast<std::size_t>(st.n_leaves + st.n_new));
  if (prunable(st.nb)) {  // the incumbent improved since the push
    partial_bound_ = std::numeric_limits<double>::infinity();
    return;
  }
  for (int id : to_split) {
    if (!ensure_splits(id)) return;         // memory limit
    if (leaves_[id].n_splits == 0) {  // cannot happen for a pushed mask; defensive
      partial_bound_ = std::numeric_limits<double>::infinity();
      return;
    }
  }
  // Product over the split choices of the leaves in S, pruned leaf by leaf: a child c of a
  // split contributes at least mis(c) + Lambda + min(0, eq(c) - mis(c) + Lambda) to the NB of
  // every state built on the tree (and mis(c) + Lambda >= that to the tree's own objective), with
  // the min only if c may be splittable (cheap optimistic test). Options of each leaf are sorted
  // by that contribution, so once partial + option + best of the remaining leaves reaches the
  // incumbent, the later options of that leaf are skipped too.
  const std::size_t S = to_split.size();
  const double la = use_lookahead_ ? Lambda_ : 0.0;
  auto contribution = [&](int id) {
    const Leaf& c = leaves_[id];
    double v = c.mis + Lambda_;
    const bool maybe_split = c.depth < max_depth_ && c.mis > zero_ &&
                             (!use_support_ || c.mis - c.eq > Lambda_ + tau_);
    if (maybe_split) v += std::min(0.0, (use_eq_ ? c.eq : 0.0) - c.mis + la);
    return v;
  };
  struct Option {
    double c;
    std::size_t split;
  };
  std::vector<std::vector<Option>> options(S);
  for (std::size_t k = 0; k < S; ++k) {
    const Leaf& leaf = leaves_[to_split[k]];
    const Split* splits = leaf.splits;
    options[k].reserve(leaf.n_splits);
    for (std::size_t i = 0; i < leaf.n_splits; ++i)
      options[k].push_back({contribution(splits[i].left) + contribution(splits[i].right), i});
    std::stable_sort(options[k].begin(), options[k].end(),
                     [](const Option& a, const Option& b) { return a.c < b.c; });
  }
  std::vector<double> best_rest(S + 1, 0.0);
  for (std::size_t k = S; k-- > 0;) best_rest[k] = best_rest[k + 1] + options[k][0].c;
  double base = 0.0;
  for (int id : fixed) base += leaves_[id].mis + Lambda_;

  std::vector<std::size_t> pos(S, 0);
  std::vector<double> partial(S + 1, base);
  std::vector<int> L2;
  std::vector<int> sorted_key;
  std::size_t k = 0;
  while (true) {
    if (k == S) {
      L2 = fixed;
      for (std::size_t j = 0; j < S; ++j) {
        const Split& sp = leaves_[to_split[j]].splits[options[j][pos[j]].split];
        L2.push_back(sp.left);
        L2.push_back(sp.right);
      }
      bool fresh = true;
      if (use_permutation_) {
        sorted_key = L2;
        std::sort(sorted_key.begin(), sorted_key.end());
        if (!room(tree_cache_.insert_bytes(sorted_key.size()))) return;
        fresh = tree_cache_.insert(sorted_key);
        if (!fresh) ++n_cache_hits_;
      }
      if (fresh) {
        consider_incumbent(L2);
        push_masks(L2, fixed.size(), st.level + 1);
        if (memory_stop_ || budget_.stopped()) return;  // partial_bound_ keeps this bound
      }
      if (heavy_work_should_stop()) return;
      // advance the last leaf
      k = S - 1;
      ++pos[k];
    }
    // find a viable option at level k (pos[k] onwards), or backtrack
    if (pos[k] < options[k].size() &&
        !prunable(partial[k] + options[k][pos[k]].c + best_rest[k + 1])) {
      partial[k + 1] = partial[k] + options[k][pos[k]].c;
      ++k;
      if (k < S) pos[k] = 0;
      continue;
    }
    // no (more) viable option here: sorted, so the rest fail too
    if (k == 0) break;
    --k;
    ++pos[k];
  }
  partial_bound_ = std::numeric_limits<double>::infinity();
}

// ---------------------------------------------------------------------------------------------
// Trees
// ---------------------------------------------------------------------------------------------

// Rebuild a binary tree from a leaf set: split on a feature every leaf uses (the smallest index
// not yet consumed on the path); such a feature exists for any leaf set grown by splits.
void BnbSearch::build_tree(std::vector<int> ids, Words& consumed, std::vector<int>& out) const {
  if (ids.size() == 1) {
    out.push_back(-(leaves_[ids[0]].label + 1));
    return;
  }
  Words common(FW_, ~std::uint64_t{0});
  for (int id : ids)
    for (std::size_t w = 0; w < FW_; ++w) common[w] &= leaves_[id].key[w];
  int feature = -1;
  for (std::size_t w = 0; w < FW_ && feature < 0; ++w) {
    const std::uint64_t free_bits = common[w] & ~consumed[w];
    if (free_bits) feature = static_cast<int>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(free_bits)));
  }
  if (feature < 0) throw std::logic_error("bnb: leaf set does not form a tree");
  std::vector<int> left, right;
  const std::size_t fw = static_cast<std::size_t>(feature) >> 6;
  const std::uint64_t bit = std::uint64_t{1} << (feature & 63);
  for (int id : ids) (leaves_[id].key[FW_ + fw] & bit ? right : left).push_back(id);
  out.push_back(feature);
  consumed[fw] |= bit;
  build_tree(std::move(left), consumed, out);
  build_tree(std::move(right), consumed, out);
  consumed[fw] &= ~bit;
}

SearchOutput BnbSearch::run() {
  ub_count_ = std::isfinite(upper_bound_) ? upper_bound_ * N_ + 2 * tau_
                                           : std::numeric_limits<double>::infinity();
  const int root = root_leaf();
  // incumbent: the best of the single leaf, the warm start and the greedy tree (§3.2)
  Rc_ = leaves_[root].mis + Lambda_;
  best_leaves_ = {root};
  auto offer = [&](std::vector<int> code, double v) {
    if (v < Rc_ - tau_) {
      Rc_ = v;
      best_leaves_.clear();
      best_code_ = std::move(code);
    }
  };
  if (!cfg_.initial_tree.empty())
    offer(cfg_.initial_tree, evaluate_tree(P_, cfg_.initial_tree, Lambda_, cfg_.max_depth));
  // every tree costs at least eq(root) + Lambda: the bound should a limit stop the root's setup
  partial_bound_ = eq_term(root) + Lambda_;
  // Out of memory, the search stops as at its memory limit: partial_bound_ keeps the bound of
  // a state cut mid-expansion (set before its children are generated), so the bound stays valid.
  const bool enough_memory = catch_out_of_memory(budget_, [&] {
    {
      const double t0 = budget_.elapsed();
      double v = 0.0;
      std::vector<int> greedy = greedy_tree(P_, cfg_.lam, cfg_.max_depth, &v, &budget_);
      out_.stats["greedy_seconds"] = budget_.elapsed() - t0;
      offer(std::move(greedy), v);
    }
    if (use_permutation_) {
      tree_cache_.insert(std::vector<int>{root});
    }
    if (splittable(root)) {
      State st;
      st.n_new = 1;
      st.nb = eq_term(root) + Lambda_ * (1.0 + (use_lookahead_ ? 1.0 : 0.0));
      st.nlb = Lambda_;
      st.supp_un = 0.0;
      st.level = 0;
      const char split[1] = {1};
      if (!prunable(st.nb) && room(state_bytes_ahead(2)))
        push_state(st, std::vector<int>{root}, split);
    }
    if (!memory_stop_) partial_bound_ = std::numeric_limits<double>::infinity();
    record();
    while (!queue_.empty() && !memory_stop_) {
      // expanding the state first returns its id to the free list (possibly a new page)
      if (budget_.tick(memory_bytes(), free_states_.push_bytes())) break;
      const QEntry top = queue_.top();
      queue_.pop();
      expand(top.state);
      record();
      if (budget_.stopped() || memory_stop_) break;
    }
  });
  if (!enough_memory) memory_stop_ = true;
  budget_.note_memory(memory_bytes());
  const bool finished = !budget_.stopped() && !memory_stop_;
  double lb = finished ? threshold() : std::min({threshold(), open_min_bound(), partial_bound_});
  lb = std::min(lb, Rc_);
  out_.status = memory_stop_ ? SearchStatus::memory_limit : budget_.status();
  out_.objective = Rc_ / N_;
  out_.lower_bound = lb / N_;
  if (!best_leaves_.empty()) {
    Words consumed(FW_, 0);
    out_.tree.clear();
    build_tree(best_leaves_, consumed, out_.tree);
  } else {
    out_.tree = best_code_;
  }
  out_.n_explored = budget_.nodes();
  out_.peak_memory_mb = budget_.peak_memory_mb();
  out_.stats["leaves_cached"] = static_cast<double>(leaves_.size());
  out_.stats["states_pushed"] = static_cast<double>(n_states_pushed_);
  out_.stats["trees_evaluated"] = static_cast<double>(n_trees_evaluated_);
  out_.stats["tree_cache_hits"] = static_cast<double>(n_cache_hits_);
  out_.stats["tree_cache_size"] = static_cast<double>(tree_cache_.size());
  out_.stats["points"] = static_cast<double>(P_.n_points());
  out_.stats["search_seconds"] = budget_.elapsed();
  out_.stats["out_of_memory"] = budget_.ran_out_of_memory() ? 1.0 : 0.0;
  out_.record(budget_.elapsed(), out_.objective, out_.lower_bound);
  return out_;
}

}  // namespace

SearchOutput search_bnb(const Problem& problem, const SearchConfig& config,
                        std::function<bool()> interrupted) {
  config.validate();
  if (problem.n_samples() == 0 || !(problem.total_weight() > 0.0))
    throw std::invalid_argument("the problem has no sample weight");
  BnbSearch search(problem, config, interrupted, config.upper_bound);
  SearchOutput out = search.run();
  // An upper bound that no tree attains (below the optimum) prunes everything: the search then
  // proves nothing about the optimum, so it reruns without it (same contract as the dp).
  if (std::isfinite(config.upper_bound) && out.status == SearchStatus::optimal &&
      out.objective > config.upper_bound + count_tolerance(problem.total_weight()) /
                                                problem.total_weight()) {
    BnbSearch again(problem, config, interrupted, std::numeric_limits<double>::infinity());
    out = again.run();
    out.stats["upper_bound_invalid"] = 1.0;
  }
  return out;
}

}  // namespace odtkit

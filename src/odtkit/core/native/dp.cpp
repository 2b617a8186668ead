// Recursive bound-passing DP over supports (docs/formulations-search-and-pruning.md §3.8
// "recursive variant", DL8.5/MurTree style).
//
// SOLVE(s, d, UB) returns either the exact optimum R*(s, d) (count units) or, when no tree on s
// costs less than UB, a lower bound >= UB. The memo keeps, per (support, remaining depth), the
// exact value with its best split, or the best lower bound proved so far, so a sub-problem
// reached from many parents is solved once and re-solved only with a larger budget.
// Bounds (each switchable for ablations, none changes the optimum):
//   equivalent_points  lb uses eq(s) (mistakes no tree can avoid) and the terminal test uses
//                      mis - eq (§2.2, §2.5);
//   lookahead          a tree better than a leaf has >= 2 leaves: lb = min(leaf, eq + 2 Lambda)
//                      (§3.8 initial bounds, §9 correction 4); off: eq + Lambda;
//   support            terminal test mis - eq <= Lambda -> leaf (incremental progress / leaf
//                      support, tie-safe, §2.5);
//   similar_support    OPT_i >= OPT_j - w(s & (X_i xor X_j)) prunes split i from a solved j
//                      (§2.9, lower bound only);
//   depth2             exact depth-two solver when the remaining depth is 2 (§3.9).
// Unlimited depth uses the same recursion with the depth component of the key fixed at -1.
// Anytime: the root tracks its best complete split; on a limit every frame returns a valid lower
// bound (min over its unresolved options), so the root's value is a global lower bound.
#include "dp.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "depth2.hpp"
#include "greedy.hpp"
#include "search_common.hpp"

namespace odtkit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Depth of the anytime driver's leaf completion (complete_leaves): the depth-two solver's
// depth; 3 found the same incumbents, more slowly, on planted 800x30, 3000x40 and 5000x24 sets.
constexpr int kLookahead = 2;

struct Entry {
  std::uint64_t hash;
  std::size_t offset;  // start of the support's words in the arena
  double lb;           // count units; equals the value when exact
  int depth;           // remaining depth (-1: unlimited)
  int feature;         // best split (exact entries), -1: leaf
  int f0, f1;          // depth-two solver children (-1 leaf), -2: generic entry
  bool exact;
};

// Open-addressing hash map (support words, depth) -> Entry. Supports live in fixed-size arena
// chunks (and entries in a deque) so that memory grows in small steps, which keeps a memory
// limit honoured closely, and a lookup with a scratch buffer never allocates. Entries are
// addressed by index.
class Memo {
 public:
  explicit Memo(std::size_t n_words)
      : W_(n_words), chunk_words_(std::max<std::size_t>(n_words * 256, 1 << 15)),
        slots_(1024, 0), mask_(1023) {}

  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  std::size_t find(const std::uint64_t* s, int depth, std::uint64_t h) const {
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const std::uint32_t slot = slots_[i];
      if (slot == 0) return kNone;
      const Entry& e = entries_[slot - 1];
      if (e.hash == h && e.depth == depth && std::equal(s, s + W_, words_of(e)))
        return slot - 1;
    }
  }
  std::size_t insert(const std::uint64_t* s, int depth, std::uint64_t h) {
    if ((entries_.size() + 1) * 2 > slots_.size()) grow();
    if (chunks_.empty() || used_ + W_ > chunk_words_) {
      chunks_.push_back(std::unique_ptr<std::uint64_t[]>(new std::uint64_t[chunk_words_]));
      used_ = 0;
    }
    const std::size_t offset = (chunks_.size() - 1) * chunk_words_ + used_;
    std::copy(s, s + W_, chunks_.back().get() + used_);
    used_ += W_;
    entries_.push_back(Entry{h, offset, 0.0, depth, -1, -2, -2, false});
    place(entries_.size() - 1);
    return entries_.size() - 1;
  }
  Entry& operator[](std::size_t i) { return entries_[i]; }
  const Entry& operator[](std::size_t i) const { return entries_[i]; }
  std::size_t size() const { return entries_.size(); }
  std::size_t bytes() const {
    return chunks_.size() * chunk_words_ * sizeof(std::uint64_t) +
           entries_.bytes() + slots_.capacity() * sizeof(std::uint32_t);
  }

 private:
  const std::uint64_t* words_of(const Entry& e) const {
    return chunks_[e.offset / chunk_words_].get() + e.offset % chunk_words_;
  }
  void place(std::size_t index) {
    std::size_t i = entries_[index].hash & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = static_cast<std::uint32_t>(index + 1);
  }
  void grow() {
    slots_.assign(slots_.size() * 2, 0);
    mask_ = slots_.size() - 1;
    for (std::size_t k = 0; k < entries_.size(); ++k) place(k);
  }

  std::size_t W_, chunk_words_;
  std::vector<std::unique_ptr<std::uint64_t[]>> chunks_;
  std::size_t used_ = 0;
  // entries in fixed blocks: O(1) indexing without the 2x copies of a growing vector
  struct Entries {
    static constexpr std::size_t kShift = 12, kBlock = std::size_t{1} << kShift;
    std::vector<std::unique_ptr<Entry[]>> blocks;
    std::size_t n = 0;
    std::size_t size() const { return n; }
    void push_back(const Entry& e) {
      if ((n >> kShift) == blocks.size()) blocks.push_back(std::unique_ptr<Entry[]>(new Entry[kBlock]));
      blocks[n >> kShift][n & (kBlock - 1)] = e;
      ++n;
    }
    Entry& operator[](std::size_t i) { return blocks[i >> kShift][i & (kBlock - 1)]; }
    const Entry& operator[](std::size_t i) const { return blocks[i >> kShift][i & (kBlock - 1)]; }
    std::size_t bytes() const { return blocks.size() * kBlock * sizeof(Entry); }
  } entries_;
  std::vector<std::uint32_t> slots_;
  std::size_t mask_;
};

struct Candidate {
  int feature;
  double lb0, lb1;  // initial lower bounds of the two children
  double order;     // heuristic: mistakes of the one-split tree
  double sup1;      // support weight of the x_j = 1 child (Problem::support_and)
};

struct Answer {
  double value;  // exact value, or a lower bound (>= UB unless the search stopped)
  bool exact;
};

inline int child_depth(int d) { return d < 0 ? d : d - 1; }

// The depth-two solver's count matrices are allocated up front (M^2 K doubles per slot): under
// a memory limit they may take at most half of it, else the generic recursion (exact too, the
// "depth2" switch never changes the optimum) solves depth-two sub-problems.
inline bool depth2_fits(const Problem& p, const SearchConfig& c) {
  return !(c.memory_limit_mb > 0) ||
         static_cast<double>(Depth2Solver::upfront_bytes(p)) <= 0.5 * c.memory_limit_mb * 1048576.0;
}

// The depth-two solver, or null when its tables cannot be allocated: it is an accelerator
// (the generic recursion solves the same sub-problems exactly), so the machine running short
// of memory switches it off instead of failing the search.
inline std::unique_ptr<Depth2Solver> depth2_or_null(const Problem& p) {
  try {
    return std::make_unique<Depth2Solver>(p);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

class DPSolver {
 public:
  DPSolver(const Problem& p, const SearchConfig& c, Budget& budget)
      : P_(p),
        budget_(budget),
        K_(p.n_classes()),
        M_(static_cast<int>(p.n_features())),
        W_(p.n_words()),
        Lambda_(c.lam * p.total_weight()),
        tau_(count_tolerance(p.total_weight())),
        zero_(zero_weight(p.total_weight())),
        use_eq_(c.bound_on("equivalent_points")),
        // the swap argument moves rows between leaves, which can make one too light for the
        // minimum leaf support: off under one
        use_similar_(c.bound_on("similar_support") && !(c.min_leaf_weight > 0.0)),
        use_depth2_(c.bound_on("depth2") && depth2_fits(p, c)),
        initial_(p, c),
        root_features_(c.root_features),
        memo_(p.n_words()),
        tmp_cw_(static_cast<std::size_t>(K_)),
        heavy_(static_cast<double>(K_) * static_cast<double>(W_) * kHeavyStride >= kHeavyWork) {}

  // Entry point for the root (s = all points).
  // relaxed: solve the depth-relaxed problem instead (see `frontier`); needs depth >= 0.
  Answer solve_root(int depth, double ub, int* best_feature, bool relaxed = false) {
    root_best_feature_ = -1;  // each call reports its own best complete root split
    root_depth2_partial_ = Depth2Solver::Result{kInf};
    relaxed_ = relaxed && depth >= 0;
    at_root_ = true;
    const std::uint64_t* s = P_.all_points().data();
    std::vector<double> cw(K_);
    P_.class_weights(s, cw.data());
    const double eq = use_eq_ ? P_.minority_total() : 0.0;
    return solve(s, depth, ub, 0, cw.data(), eq, P_.support(s, cw.data()), best_feature);
  }

  // SOLVE on any support (the anytime driver's leaf completion); not during another solve.
  Answer solve_support(const std::uint64_t* s, int depth, double ub) {
    relaxed_ = false;
    at_root_ = false;
    std::vector<double> cw(K_);
    P_.class_weights(s, cw.data());
    const double eq = use_eq_ ? P_.minority(s) : 0.0;
    const Answer a = solve(s, depth, ub, 0, cw.data(), eq, P_.support(s, cw.data()));
    root_best_feature_ = -1;  // level 0 here is not the root
    root_depth2_partial_ = Depth2Solver::Result{kInf};
    return a;
  }

  void extract(const std::uint64_t* s, int depth, std::vector<int>& out) {
    const std::uint64_t h = key_hash(s, depth);
    const std::size_t idx = memo_.find(s, depth, h);
    std::vector<std::uint64_t> s0(W_), s1(W_);
    if (idx == Memo::kNone || !memo_[idx].exact || memo_[idx].feature < 0) {
      out.push_back(leaf_code(s));
      return;
    }
    const Entry e = memo_[idx];
    out.push_back(e.feature);
    words::and_not_into(s0.data(), s, P_.feature_words(e.feature), W_);
    words::and_into(s1.data(), s, P_.feature_words(e.feature), W_);
    if (e.f0 == -2) {
      extract(s0.data(), child_depth(depth), out);
      extract(s1.data(), child_depth(depth), out);
      return;
    }
    emit_depth1(s0.data(), e.f0, out);
    emit_depth1(s1.data(), e.f1, out);
  }

  std::size_t bytes() const {
    return memo_.bytes() + (depth2_ ? depth2_->bytes() : 0) +
           levels_.size() * (2 * W_ * sizeof(std::uint64_t) + M_ * sizeof(Candidate));
  }
  // Best complete root split found so far (valid also after a stop), or false if none.
  bool extract_root_split(int depth, std::vector<int>& out) {
    const std::uint64_t* s = P_.all_points().data();
    std::vector<std::uint64_t> s0(W_), s1(W_);
    if (root_best_feature_ < 0 && root_depth2_partial_.root >= 0) {
      // a depth-two root solve stopped part-way: the best depth-two tree it had seen
      const Depth2Solver::Result& r = root_depth2_partial_;
      words::and_not_into(s0.data(), s, P_.feature_words(r.root), W_);
      words::and_into(s1.data(), s, P_.feature_words(r.root), W_);
      out.push_back(r.root);
      emit_depth1(s0.data(), r.left, out);
      emit_depth1(s1.data(), r.right, out);
      return true;
    }
    if (root_best_feature_ < 0) return false;
    words::and_not_into(s0.data(), s, P_.feature_words(root_best_feature_), W_);
    words::and_into(s1.data(), s, P_.feature_words(root_best_feature_), W_);
    out.push_back(root_best_feature_);
    extract(s0.data(), child_depth(depth), out);
    extract(s1.data(), child_depth(depth), out);
    return true;
  }
  std::size_t memo_size() const { return memo_.size(); }
  long long depth2_calls() const { return depth2_calls_; }
  // depth-two count passes done by compaction (Depth2Solver::compact_counts)
  long long depth2_compact_counts() const { return depth2_ ? depth2_->compact_calls() : 0; }
  // depth-two counts obtained as a parent's less a sibling's (Depth2Solver::load_counts)
  long long depth2_sibling_counts() const { return depth2_ ? depth2_->parent_hits() : 0; }
  long long similar_prunes() const { return similar_prunes_; }

 private:
  struct Level {
    std::vector<std::uint64_t> s0, s1, tmp;
    std::vector<Candidate> cands;
    std::vector<double> cw0, cw1;
  };

  std::uint64_t key_hash(const std::uint64_t* s, int depth) const {
    return words::hash(s, W_, static_cast<std::uint64_t>(static_cast<std::int64_t>(depth) + 2));
  }
  int leaf_code(const std::uint64_t* s) const {
    std::vector<double> cw(K_);
    P_.class_weights(s, cw.data());
    return -(majority_class(cw.data(), K_) + 1);
  }
  void emit_depth1(const std::uint64_t* s, int f, std::vector<int>& out) {
    if (f < 0) {
      out.push_back(leaf_code(s));
      return;
    }
    std::vector<std::uint64_t> a(W_), b(W_);
    words::and_not_into(a.data(), s, P_.feature_words(f), W_);
    words::and_into(b.data(), s, P_.feature_words(f), W_);
    out.push_back(f);
    out.push_back(leaf_code(a.data()));
    out.push_back(leaf_code(b.data()));
  }
  // Scratch of recursion level i, created on first use. Growing levels_ moves the Level
  // objects but not their heap buffers, so raw pointers into a level's vectors stay valid;
  // references to Level objects are never held across a recursive call.
  Level& level(std::size_t i) {
    while (levels_.size() <= i) {
      Level l;
      l.s0.resize(W_);
      l.s1.resize(W_);
      l.tmp.resize(W_);
      l.cands.reserve(M_);
      l.cw0.resize(static_cast<std::size_t>(M_) * K_);
      l.cw1.resize(static_cast<std::size_t>(M_) * K_);
      levels_.push_back(std::move(l));
    }
    return levels_[i];
  }

  // Initial bounds of a sub-problem; true when it is provably a leaf (the lower bound reaches
  // the leaf cost). In the relaxed problem the terminal tests are those of unlimited depth,
  // and a node at depth 0 is a frontier node (its lb bounds `frontier`).
  bool initial(const double* cw, double eq, int depth, double sup, double* leaf,
               double* lb) const {
    const LeafBound b = initial_(cw, eq, relaxed_ ? -1 : depth, sup);
    *leaf = b.leaf;
    *lb = b.lb;
    return b.terminal || b.lb >= b.leaf - tau_ || (relaxed_ && depth == 0);
  }

  // Depth-relaxed problem (the anytime driver's lower bound): trees of depth <= d whose nodes
  // at depth d cost a lower bound on their best unlimited subtree, i.e. the initial bound
  // min(leaf, eq + 2 Lambda) or a better bound proved for (s, unlimited) in the memo. Any
  // unlimited tree, cut at depth d, is such a tree and costs at least as much, so the relaxed
  // optimum is a lower bound on the unlimited optimum; it rises with d.
  double frontier(const std::uint64_t* s, const double* cw, double eq, double sup) const {
    double v = initial_(cw, eq, -1, sup).lb;
    const std::size_t idx = memo_.find(s, -1, key_hash(s, -1));
    if (idx != Memo::kNone) v = std::max(v, memo_[idx].lb);
    return v;
  }
  // Memo key of a remaining depth: relaxed sub-problems are another problem, keyed apart.
  int memo_key(int depth) const { return relaxed_ ? -2 - depth : depth; }

  // cw, eq, sup: class weights, equivalent-points minority and support weight of s
  Answer solve(const std::uint64_t* s, int depth, double ub, std::size_t lvl, const double* cw,
               double eq, double sup, int* best_feature_out = nullptr) {
    double leaf, lb;
    if (initial(cw, eq, depth, sup, &leaf, &lb))
      return {relaxed_ && depth == 0 ? std::max(lb, frontier(s, cw, eq, sup)) : leaf, true};
    const int key = memo_key(depth);
    const std::uint64_t h = key_hash(s, key);
    std::size_t idx = memo_.find(s, key, h);
    if (idx != Memo::kNone) {
      const Entry& e = memo_[idx];
      if (e.exact) {
        if (best_feature_out) *best_feature_out = e.feature;
        return {e.lb, true};
      }
      lb = std::max(lb, e.lb);
    }
    if (relaxed_) {
      // any lower bound on R*(s, unlimited) is as good as the relaxed value (both bound the
      // unlimited optimum from below): an exact one ends the relaxed sub-problem
      const std::size_t u = memo_.find(s, -1, key_hash(s, -1));
      if (u != Memo::kNone) {
        if (memo_[u].exact) return {memo_[u].lb, true};
        lb = std::max(lb, memo_[u].lb);
      }
    }
    if (lb >= ub - tau_) return {lb, false};
    if (budget_.tick(bytes())) return {lb, false};

    if (depth == 2 && use_depth2_ && !relaxed_ && !depth2_) {
      // built at its first use, after the Budget's first check: its tables take a second
      // on 20,000 x 3,000 (a search already out of time never builds them)
      depth2_ = depth2_or_null(P_);
      use_depth2_ = depth2_ != nullptr;
      if (depth2_) depth2_->set_min_leaf(initial_.min_leaf());
    }
    // the root under a feature mask: the depth-two solver tries every root feature, so the
    // generic loop below (children of depth one) solves it
    const bool masked = lvl == 0 && at_root_ && !root_features_.empty();
    if (depth == 2 && use_depth2_ && !relaxed_ && !masked) {
      ++depth2_calls_;
      // the solver polls the budget itself (one call is seconds on thousands of features)
      const Depth2Solver::Result r = depth2_->solve(s, cw, Lambda_, &budget_);
      if (!r.exact) {
        // stopped part-way: r is the best tree it saw (kept for the root), lb stays the bound
        if (lvl == 0 && r.root >= 0) root_depth2_partial_ = r;
        return {lb, false};
      }
      // its pass adds ~M^2/4 pair counts per point where a node costs ~M K W words: charge
      // (an eighth of) that ratio, so that the anytime driver's slices are about equal in time
      // (measured on tic-tac-toe and planted 3000 x 40 / 5000 x 24 sets)
      budget_.charge(static_cast<long long>(words::count(s, W_) * M_ / (8.0 * W_ * K_)));
      // a call can take milliseconds on thousands of features, so the clock is read after each
      // rather than every 16 ticks (30 x 2,000 ran 0.5 s past a 0.1 s limit); its answer is
      // exact either way
      budget_.check_clock();
      if (idx == Memo::kNone) idx = memo_.insert(s, key, h);
      Entry& e = memo_[idx];
      e.exact = true;
      e.lb = r.value;
      e.feature = r.root;
      e.f0 = r.left;
      e.f1 = r.right;
      if (best_feature_out) *best_feature_out = r.root;
      return {r.value, true};
    }

    const int cd = child_depth(depth);
    Level& L = level(lvl);
    L.cands.clear();
    double n = 0.0;
    for (int k = 0; k < K_; ++k) n += cw[k];
    for (int j = 0; j < M_; ++j) {
      // one feature's class counts cost ~K W words: with thousands of classes a node takes
      // seconds, so the clock is read every kHeavyStride features of a heavy node, not every
      // 16 nodes (8,631 classes x 364 features ran 27 s past a 6 s limit)
      if (heavy_ && j % kHeavyStride == kHeavyStride - 1 && budget_.check_clock())
        return {lb, false};
      if (masked && !root_features_[static_cast<std::size_t>(j)]) continue;
      const std::uint64_t* xj = P_.feature_words(static_cast<std::size_t>(j));
      double* c1 = &L.cw1[static_cast<std::size_t>(j) * K_];
      double* c0 = &L.cw0[static_cast<std::size_t>(j) * K_];
      const double n1 = P_.split_class_weights(s, xj, cw, c1, c0);
      // a side without weight makes the split cost more than the parent's optimum
      if (n1 <= zero_ || n - n1 <= zero_) continue;
      // under a minimum leaf support both sides must reach it (their leaves do); the sides'
      // support weights are their class weights' unless the Problem carries its own
      const double sup1 = P_.support_and(s, xj, n1);
      if (initial_.light(sup1) || initial_.light(sup - sup1)) continue;
      const double eq1 = use_eq_ ? P_.minority_and(s, xj) : 0.0;
      double leaf0, leaf1, lb0, lb1;
      initial(c0, std::max(0.0, eq - eq1), cd, sup - sup1, &leaf0, &lb0);
      initial(c1, eq1, cd, sup1, &leaf1, &lb1);
      L.cands.push_back(Candidate{j, lb0, lb1, leaf0 + leaf1, sup1});
    }
    // the level's buffers may be reallocated by deeper levels: keep indices, not references
    std::sort(L.cands.begin(), L.cands.end(), [](const Candidate& a, const Candidate& b) {
      return a.order < b.order || (a.order == b.order && a.feature < b.feature);
    });

    double best = leaf;
    int best_feature = -1;
    int ref_feature = -1;  // similar-support reference: the split with the largest known bound
    double ref_bound = -kInf;
    const std::size_t n_cands = L.cands.size();
    for (std::size_t c = 0; c < n_cands; ++c) {
      Level& Lc = levels_[lvl];
      const Candidate cand = Lc.cands[c];
      const double bound = std::min(ub, best);
      if (cand.lb0 + cand.lb1 >= bound - tau_) continue;
      const std::uint64_t* xj = P_.feature_words(static_cast<std::size_t>(cand.feature));
      // (not in the relaxed problem: memo bounds at its frontier break the swap argument)
      if (use_similar_ && !relaxed_ && ref_feature >= 0 && ref_bound >= bound - tau_) {
        // OPT_j >= OPT_ref - w(s & (X_j xor X_ref)): swap the root feature, keep the subtrees
        const std::uint64_t* xr = P_.feature_words(static_cast<std::size_t>(ref_feature));
        for (std::size_t w = 0; w < W_; ++w) Lc.tmp[w] = s[w] & (xj[w] ^ xr[w]);
        P_.class_weights(Lc.tmp.data(), tmp_cw_.data());
        double omega = 0.0;
        for (int k = 0; k < K_; ++k) omega += tmp_cw_[k];
        if (ref_bound - omega >= bound - tau_) {
          ++similar_prunes_;
          continue;
        }
      }
      words::and_not_into(Lc.s0.data(), s, xj, W_);
      words::and_into(Lc.s1.data(), s, xj, W_);
      const double* c0 = &Lc.cw0[static_cast<std::size_t>(cand.feature) * K_];
      const double* c1 = &Lc.cw1[static_cast<std::size_t>(cand.feature) * K_];
      const double eq1 = use_eq_ ? P_.minority_and(s, xj) : 0.0;
      const double eq0 = std::max(0.0, eq - eq1);
      // child buffers belong to this level; the children use level lvl + 1
      const Answer a0 =
          solve(levels_[lvl].s0.data(), cd, bound - cand.lb1, lvl + 1, c0, eq0, sup - cand.sup1);
      if (budget_.stopped())
        return stop(s, key, h, lb, best, ub, lvl, c, a0.value + cand.lb1);
      if (!a0.exact || a0.value + cand.lb1 >= bound - tau_) {
        note_reference(cand.feature, a0.exact ? a0.value + cand.lb1 : bound, &ref_feature,
                       &ref_bound);
        continue;
      }
      const Answer a1 =
          solve(levels_[lvl].s1.data(), cd, bound - a0.value, lvl + 1, c1, eq1, cand.sup1);
      if (budget_.stopped()) return stop(s, key, h, lb, best, ub, lvl, c, a0.value + a1.value);
      if (!a1.exact) {
        note_reference(cand.feature, bound, &ref_feature, &ref_bound);
        continue;
      }
      const double v = a0.value + a1.value;
      note_reference(cand.feature, v, &ref_feature, &ref_bound);
      if (v < best - tau_) {
        best = v;
        best_feature = cand.feature;
        if (lvl == 0 && !relaxed_) {
          root_best_feature_ = best_feature;
          if (on_root_improved) on_root_improved(best);
        }
      }
    }

    if (idx == Memo::kNone) idx = memo_.insert(s, key, h);
    Answer answer;
    if (best < ub - tau_) {
      Entry& e = memo_[idx];
      e.exact = true;
      e.lb = best;
      e.feature = best_feature;
      if (best_feature_out) *best_feature_out = best_feature;
      answer = {best, true};
    } else {
      Entry& e = memo_[idx];
      e.lb = std::max(e.lb, std::max(lb, std::min(ub, best)));
      answer = {e.lb, false};
    }
    if (relaxed_) share_bound(s, answer.value);
    return answer;
  }

  // A relaxed value bounds the unlimited optimum of the same support: hand it to the target
  // search (and to later relaxed frontiers) through the (s, unlimited) entry.
  void share_bound(const std::uint64_t* s, double bound) {
    const std::uint64_t h = key_hash(s, -1);
    std::size_t u = memo_.find(s, -1, h);
    if (u == Memo::kNone) u = memo_.insert(s, -1, h);
    Entry& e = memo_[u];
    if (!e.exact) e.lb = std::max(e.lb, bound);
  }

  static void note_reference(int feature, double bound, int* ref_feature, double* ref_bound) {
    if (bound > *ref_bound) {
      *ref_bound = bound;
      *ref_feature = feature;
    }
  }

  // The search was stopped while candidate `c` was open (its lower bound `current`): the
  // value of s is at least the minimum over the leaf/best, the open candidate and every later
  // candidate; earlier skipped candidates were >= min(ub, best) when skipped.
  Answer stop(const std::uint64_t* s, int key, std::uint64_t h, double lb, double best,
              double ub, std::size_t lvl, std::size_t c, double current) {
    double v = std::min({best, ub, current});
    const Level& L = levels_[lvl];
    for (std::size_t k = c + 1; k < L.cands.size(); ++k)
      v = std::min(v, L.cands[k].lb0 + L.cands[k].lb1);
    v = std::max(v, lb);
    std::size_t idx = memo_.find(s, key, h);
    if (idx == Memo::kNone) idx = memo_.insert(s, key, h);
    if (!memo_[idx].exact) memo_[idx].lb = std::max(memo_[idx].lb, v);
    return {v, false};
  }

 public:
  std::function<void(double)> on_root_improved;

 private:
  const Problem& P_;
  Budget& budget_;
  int K_, M_;
  // a node whose kHeavyStride features cost kHeavyWork words of class counting or more
  static constexpr int kHeavyStride = 16;
  static constexpr double kHeavyWork = 1 << 22;
  std::size_t W_;
  double Lambda_, tau_, zero_;
  bool use_eq_, use_similar_, use_depth2_;
  bool relaxed_ = false;  // the current solve_root is of the depth-relaxed problem
  InitialBound initial_;
  // config.root_features (empty: none). Only the root's support is every point (a split
  // with an empty side is skipped), so its memo entry is the only one the mask changes, and
  // every bound is a lower bound over all trees, so also over the masked ones.
  std::vector<bool> root_features_;
  bool at_root_ = false;  // the current solve started at the root (solve_root)
  Memo memo_;
  std::unique_ptr<Depth2Solver> depth2_;  // null: switched off, or over the memory limit
  std::vector<Level> levels_;
  std::vector<double> tmp_cw_;
  bool heavy_;  // read the clock inside a node's feature loop (see solve)
  long long depth2_calls_ = 0, similar_prunes_ = 0;
  int root_best_feature_ = -1;
  // a stopped depth-two solve at the root: the best tree it saw (root < 0: none)
  Depth2Solver::Result root_depth2_partial_{kInf};
};

// Lookahead completion of an incumbent (anytime driver): every leaf of `in` (pre-order from
// `pos`, support s, `room` levels left, < 0 unlimited) is replaced by the optimal subtree of
// depth <= k on its support when that beats the leaf, and the leaves of what was hung are
// completed again; written to `out`. Iterative deepening fixes the top levels exactly, this
// grows them below the deepening depth (planted deep trees are otherwise out of reach until
// the deepening gets there). The solves share the memo with the deepening (same keys). At a
// pause the remaining leaves stay leaves.
void complete_leaves(DPSolver& solver, const Problem& P, Budget& budget, double Lambda,
                     double tau, int k, const std::vector<int>& in, std::size_t& pos,
                     const std::uint64_t* s, int room, std::vector<int>& out) {
  const int v = in[pos++];
  const std::size_t W = P.n_words();
  if (v >= 0) {
    out.push_back(v);
    std::vector<std::uint64_t> s0(W), s1(W);
    words::and_not_into(s0.data(), s, P.feature_words(static_cast<std::size_t>(v)), W);
    words::and_into(s1.data(), s, P.feature_words(static_cast<std::size_t>(v)), W);
    const int child = room < 0 ? room : room - 1;
    complete_leaves(solver, P, budget, Lambda, tau, k, in, pos, s0.data(), child, out);
    complete_leaves(solver, P, budget, Lambda, tau, k, in, pos, s1.data(), child, out);
    return;
  }
  const int depth = room < 0 ? k : std::min(k, room);
  if (depth == 0 || budget.stopped()) {
    out.push_back(v);
    return;
  }
  std::vector<double> cw(static_cast<std::size_t>(P.n_classes()));
  P.class_weights(s, cw.data());
  double weight = 0.0;
  for (double x : cw) weight += x;
  const double leaf = weight - cw[static_cast<std::size_t>(-v - 1)] + Lambda;
  const Answer a = solver.solve_support(s, depth, leaf);
  if (budget.stopped() || !a.exact || !(a.value < leaf - tau)) {
    out.push_back(v);
    return;
  }
  std::vector<int> sub;
  solver.extract(s, depth, sub);
  std::size_t at = 0;
  complete_leaves(solver, P, budget, Lambda, tau, k, sub, at, s, room, out);
}

// First incumbent of both drivers (§3.2): the best of the single leaf, the warm-start tree
// and the greedy tree, in count units; its time goes to stats["greedy_seconds"].
struct Incumbent {
  std::vector<int> tree;
  double value;
};
Incumbent first_incumbent(const Problem& problem, const SearchConfig& config, int depth,
                          Budget& budget, SearchOutput& out) {
  const int K = problem.n_classes();
  const double Lambda = config.lam * problem.total_weight();
  std::vector<double> cw(K);
  problem.class_weights(problem.all_points().data(), cw.data());
  Incumbent best{{-(majority_class(cw.data(), K) + 1)}, misclassified(cw.data(), K) + Lambda};
  // a start that breaks the minimum leaf support is worth +inf (the single leaf is feasible:
  // Python refuses a root lighter than the support before the search)
  const double min_leaf = InitialBound::min_leaf_units(problem, config);
  // a start whose root splits on a feature outside config.root_features is no candidate
  if (!config.initial_tree.empty() &&
      (config.initial_tree[0] < 0 || config.root_allows(config.initial_tree[0]))) {
    const double v = evaluate_tree(problem, config.initial_tree, Lambda, depth, min_leaf);
    if (v < best.value) best = {config.initial_tree, v};
  }
  double v = kInf;
  const double t0 = budget.elapsed();
  std::vector<int> greedy = greedy_tree(problem, config.lam, depth, &v, &budget);
  if (min_leaf > 0.0) v = evaluate_tree(problem, greedy, Lambda, depth, min_leaf);
  if (!greedy.empty() && greedy[0] >= 0 && !config.root_allows(greedy[0])) v = kInf;
  out.stats["greedy_seconds"] = budget.elapsed() - t0;
  if (v < best.value - count_tolerance(problem.total_weight())) best = {std::move(greedy), v};
  return best;
}

// A-priori global bound: the leaf, or >= 2 leaves and the equivalent-point mistakes (§3.8).
double a_priori_bound(const Problem& problem, const SearchConfig& config, double incumbent) {
  return std::min(incumbent, InitialBound(problem, config)
                                 .split_bound(config.bound_on("equivalent_points")
                                                  ? problem.minority_total()
                                                  : 0.0));
}

void solver_stats(const DPSolver& solver, const Problem& problem, const SearchConfig& config,
                  const Budget& budget, SearchOutput& out) {
  out.stats["memo_entries"] = static_cast<double>(solver.memo_size());
  out.stats["depth2_calls"] = static_cast<double>(solver.depth2_calls());
  out.stats["depth2_compact_counts"] = static_cast<double>(solver.depth2_compact_counts());
  out.stats["depth2_sibling_counts"] = static_cast<double>(solver.depth2_sibling_counts());
  // 1: the depth-two solver's up-front matrices would have taken over half the memory limit
  out.stats["depth2_over_memory"] =
      config.bound_on("depth2") && !depth2_fits(problem, config) ? 1.0 : 0.0;
  out.stats["similar_support_prunes"] = static_cast<double>(solver.similar_prunes());
  out.stats["n_points"] = static_cast<double>(problem.n_points());
  out.stats["n_words"] = static_cast<double>(problem.n_words());
  out.stats["search_seconds"] = budget.elapsed();
  out.stats["out_of_memory"] = budget.ran_out_of_memory() ? 1.0 : 0.0;
}

}  // namespace

SearchOutput search_dp(const Problem& problem, const SearchConfig& config,
                       std::function<bool()> interrupted) {
  SearchOutput out(config);
  Budget budget(config, std::move(interrupted));
  DPSolver solver(problem, config, budget);
  const int depth = config.max_depth < 0 ? -1 : config.max_depth;
  Incumbent start = first_incumbent(problem, config, depth, budget, out);
  const double N = problem.total_weight();
  double incumbent = start.value;
  std::vector<int> incumbent_tree = std::move(start.tree);
  auto normalized = [N](double v) { return v / N; };
  const double root_lb = a_priori_bound(problem, config, incumbent);
  out.record(budget.elapsed(), normalized(incumbent), normalized(root_lb));
  solver.on_root_improved = [&](double v) {
    if (v < incumbent) out.record(budget.elapsed(), normalized(v), normalized(std::min(root_lb, v)));
  };

  // A user bound prunes with a little slack so that a bound equal to the optimum still lets
  // the search return the tree attaining it.
  const double tau = count_tolerance(N);
  double ub = incumbent + tau;
  const bool user_bound = std::isfinite(config.upper_bound) && config.upper_bound * N < incumbent;
  if (user_bound) ub = user_bound_threshold(config.upper_bound, N);
  int root_feature = -1;
  // out of memory, the a-priori bound is what is proved (memo bounds are not gathered)
  Answer root{root_lb, false};
  catch_out_of_memory(budget, [&] {
    root = solver.solve_root(depth, ub, &root_feature);
    if (user_bound && !root.exact && !budget.stopped()) {
      // nothing beats the user's bound, so it is below the optimum: fall back to the incumbent
      out.stats["upper_bound_invalid"] = 1.0;
      root = solver.solve_root(depth, incumbent + tau, &root_feature);
    }
  });

  double lower = root.value;
  out.tree = incumbent_tree;
  if (root.exact && root.value < incumbent) {
    std::vector<int> optimum;
    if (catch_out_of_memory(budget, [&] {
          solver.extract(problem.all_points().data(), depth, optimum);
        })) {
      incumbent = root.value;
      out.tree = std::move(optimum);
    }
    lower = root.value;
  } else {
    if (root.exact) lower = root.value;  // the incumbent is as good as the optimum
    if (!budget.stopped()) lower = incumbent;  // nothing strictly better exists
  }
  // a stopped search may still have completed root splits: extract the best one
  if (budget.stopped() && !root.exact) {
    catch_out_of_memory(budget, [&] {
      std::vector<int> partial;
      if (solver.extract_root_split(depth, partial)) {
        const double v = evaluate_tree(problem, partial, config.lam * N, depth,
                                       InitialBound::min_leaf_units(problem, config));
        if (v < incumbent) {
          incumbent = v;
          out.tree = std::move(partial);
        }
      }
    });
  }
  lower = std::min(std::max(lower, root_lb), incumbent);
  out.status = budget.status();
  out.objective = normalized(incumbent);
  out.lower_bound = out.status == SearchStatus::optimal ? out.objective : normalized(lower);
  out.n_explored = budget.nodes();
  budget.note_memory(solver.bytes());
  out.peak_memory_mb = budget.peak_memory_mb();
  out.record(budget.elapsed(), out.objective, out.lower_bound);
  solver_stats(solver, problem, config, budget, out);
  return out;
}

// Anytime driver (strategy="anytime"). Three searches share one DPSolver, hence one memo, and
// take turns in slices of work (tick counts) that double every round:
//  * deepening: the exact optimum at depth 1, 2, ... below the target depth (D = max_depth, or
//    unlimited), each pruned by the incumbent. A depth-d optimum is a tree of the target
//    problem, so it is an incumbent, never a lower bound (deeper trees may be better). Each
//    new incumbent's leaves are then completed by depth-two optima (complete_leaves);
//  * relaxed deepening (unlimited target only): the optimum of the depth-relaxed problem at
//    depth 1, 2, ... (DPSolver::frontier), each a lower bound on the unlimited optimum; one
//    that reaches the incumbent certifies it. Its frontier reads the bounds the third search
//    proved for unlimited sub-problems;
//  * the target search itself, SOLVE(root, D, incumbent), which certifies (as search_dp does,
//    but pruned by the deepening's incumbents).
// A slice ended by a pause leaves valid lower bounds in the memo (DPSolver::stop) and its root
// value is a valid global bound; the next slice resumes on the same memo. [lower, incumbent]
// is valid at every moment; lower only rises and the incumbent only falls (the trace).
SearchOutput search_dp_anytime(const Problem& problem, const SearchConfig& config,
                               std::function<bool()> interrupted) {
  SearchOutput out(config);
  Budget budget(config, std::move(interrupted));
  DPSolver solver(problem, config, budget);
  const double N = problem.total_weight();
  const int target = config.max_depth < 0 ? -1 : config.max_depth;
  const double tau = count_tolerance(N);
  const double Lambda = config.lam * N;
  const double min_leaf = InitialBound::min_leaf_units(problem, config);  // (0: none)
  auto normalized = [N](double v) { return v / N; };

  Incumbent best = first_incumbent(problem, config, target, budget, out);
  double lower = a_priori_bound(problem, config, best.value);
  out.record(budget.elapsed(), normalized(best.value), normalized(lower));
  auto improve = [&](double value, std::vector<int> tree) {
    if (!(value < best.value - tau)) return;
    best = {std::move(tree), value};
    lower = std::min(lower, value);
    out.record(budget.elapsed(), normalized(best.value), normalized(lower));
  };
  bool certified = false;
  auto raise = [&](double bound) {
    bound = std::min(bound, best.value);
    if (bound >= best.value - tau) certified = true;
    if (bound <= lower) return;
    lower = bound;
    out.record(budget.elapsed(), normalized(best.value), normalized(lower));
  };
  // After a paused or stopped SOLVE at `depth`: its best complete root split, if any, is a tree
  // (children exact in the memo) that may beat the incumbent.
  auto take_root_split = [&](int depth) {
    std::vector<int> partial;
    if (!solver.extract_root_split(depth, partial)) return;
    const double value = evaluate_tree(problem, partial, Lambda, target, min_leaf);
    improve(value, std::move(partial));
  };
  auto take_optimum = [&](int depth) {
    std::vector<int> tree;
    solver.extract(problem.all_points().data(), depth, tree);
    const double value = evaluate_tree(problem, tree, Lambda, target, min_leaf);
    improve(value, std::move(tree));
  };
  // lookahead completion of the incumbent's leaves (complete_leaves), once per
  // incumbent: a completed tree is a fixed point; a paused completion is redone next slice
  double completed = kInf;
  auto complete_incumbent = [&] {
    if (!(best.value < completed)) return;
    std::vector<int> grown;
    std::size_t pos = 0;
    complete_leaves(solver, problem, budget, Lambda, tau, kLookahead, best.tree, pos,
                    problem.all_points().data(), target, grown);
    const double value = evaluate_tree(problem, grown, Lambda, target, min_leaf);
    improve(value, std::move(grown));
    if (!budget.stopped()) completed = best.value;
  };

  // an external bound prunes the target search while trusted; proving R* above it drops it
  double cap = kInf;
  if (std::isfinite(config.upper_bound) && config.upper_bound * N < best.value)
    cap = user_bound_threshold(config.upper_bound, N);
  out.stats["upper_bound_invalid"] = 0.0;

  const int n_features = static_cast<int>(problem.n_features());
  // no path splits on more than n_features features: deeper rounds repeat the one at
  // n_features (and a pruned root costs no tick, so 2**31 of them ignored every limit)
  const int last_depth = target < 0 ? n_features : std::min(target - 1, n_features);
  const int last_relaxed = target < 0 ? n_features : 0;
  int depth = 1, relaxed_depth = 1;
  long long slice = 1024;
  long long work[3] = {0, 0, 0};  // ticks spent in deepening, relaxed deepening, target search
  double seconds[3] = {0.0, 0.0, 0.0};
  raise(lower);
  // Runs `phase` for one slice; false when a real limit stopped the search.
  auto in_slice = [&](int which, auto&& phase) {
    const long long before = budget.work();
    const double t0 = budget.elapsed();
    budget.pause_after(slice);
    phase();
    work[which] += budget.work() - before;
    seconds[which] += budget.elapsed() - t0;
    budget.resume();
    return !budget.stopped();
  };
  catch_out_of_memory(budget, [&] {
    while (!certified) {
      const bool go_on = in_slice(0, [&] {
        complete_incumbent();  // the greedy tree, or one the other searches found
        for (; depth <= last_depth && !budget.stopped(); ++depth) {
          int feature = -1;
          const Answer a = solver.solve_root(depth, best.value + tau, &feature);
          if (budget.stopped()) return take_root_split(depth);
          if (a.exact && a.value < best.value - tau) {
            take_optimum(depth);
            complete_incumbent();
          }
        }
      }) && in_slice(1, [&] {
        for (; !certified && relaxed_depth <= last_relaxed; ++relaxed_depth) {
          int feature = -1;
          const Answer a = solver.solve_root(relaxed_depth, best.value + tau, &feature, true);
          raise(a.value);  // a relaxed optimum, or (paused) a bound on it
          if (budget.stopped()) return;
          if (!a.exact) raise(best.value);  // the relaxed optimum reaches the incumbent
        }
      }) && (certified || in_slice(2, [&] {
        const bool capped = cap < best.value;
        int feature = -1;
        const Answer a = solver.solve_root(target, capped ? cap : best.value + tau, &feature);
        if (budget.stopped()) {
          raise(a.value);  // the minimum over the root's open options (DPSolver::stop)
          return take_root_split(target);
        }
        if (a.exact) {
          take_optimum(target);  // the optimum (or a root that is provably a leaf)
        } else if (capped) {
          raise(a.value);  // no tree reaches the external bound: drop it
          cap = kInf;
          out.stats["upper_bound_invalid"] = 1.0;
          return;
        }
        raise(best.value);
      }));
      if (!go_on) break;
      slice *= 2;
    }
  });
  // the other searches may have proved the optimum above the external bound before the target
  // search dropped it
  if (std::isfinite(cap) && lower > cap) out.stats["upper_bound_invalid"] = 1.0;

  out.tree = best.tree;
  out.status = budget.status();
  out.objective = normalized(best.value);
  out.lower_bound = out.status == SearchStatus::optimal ? out.objective : normalized(std::min(lower, best.value));
  out.n_explored = budget.nodes();
  budget.note_memory(solver.bytes());
  out.peak_memory_mb = budget.peak_memory_mb();
  out.record(budget.elapsed(), out.objective, out.lower_bound);
  out.stats["deepening_depth"] = static_cast<double>(depth - 1);
  out.stats["relaxed_depth"] = static_cast<double>(relaxed_depth - 1);
  out.stats["deepening_work"] = static_cast<double>(work[0]);
  out.stats["relaxed_work"] = static_cast<double>(work[1]);
  out.stats["target_work"] = static_cast<double>(work[2]);
  out.stats["deepening_seconds"] = seconds[0];
  out.stats["relaxed_seconds"] = seconds[1];
  out.stats["target_seconds"] = seconds[2];
  solver_stats(solver, problem, config, budget, out);
  return out;
}

}  // namespace odtkit

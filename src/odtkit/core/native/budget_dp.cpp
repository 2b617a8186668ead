// Budgeted DP over supports with Pareto fronts per (support, depth) (budget_dp.hpp).
#include "budget_dp.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bitset.hpp"
#include "depth2.hpp"
#include "dp.hpp"
#include "search_common.hpp"

namespace odtkit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr long long kAll = std::numeric_limits<long long>::max();
// Fronts of this remaining depth or less are built without the cost bound U (every cost):
// they are cheap (depth two from pair counts, depth three from memoised depth-two fronts) and
// many parents ask for them with different bounds; cut by each parent's U they were
// recomputed over and over (tic-tac-toe, depth 6, MaxLeaves(8): 13.8k recomputations, the
// budgeted part 1.4 s; uncut at depth <= 3: 4.8k, 0.95 s; car-evaluation and german-credit
// alike either way).
constexpr int kUncutDepth = 3;

// One Pareto entry: a tree of resource r and cost c (count units).
//   leaf   feature = -(k+1);
//   split  feature >= 0 with `direct` false: its children are the entries of the children's
//          memoised fronts that are best within resources `left` / `right`;
//          `direct` true: the children have depth <= 1 and are given by their split features
//          `left` / `right` (-1: a leaf), as the depth-one and depth-two solvers build them.
struct Entry {
  long long r;
  double c;
  int feature;
  bool direct;
  long long left, right;
};
using Front = std::vector<Entry>;

// A memoised front: every Pareto entry (resource ascending, cost strictly decreasing) of
// resource <= R and cost < U, exactly; nothing is known of the others but that they cost >= U
// (R = kAll: every resource; U = inf: every cost).
struct Node {
  Front front;
  long long R;
  double U;
};

// The least cost of an entry of `f` using at most `r`; +inf when none does (entries are sorted
// by resource with cost decreasing, so it is the last entry within r).
double best_within(const Front& f, long long r) {
  double best = kInf;
  for (const Entry& e : f) {
    if (e.r > r) break;
    best = e.c;
  }
  return best;
}

// Memo key: the support's words followed by the remaining depth.
struct KeyHash {
  std::size_t operator()(const std::vector<std::uint64_t>& k) const {
    return static_cast<std::size_t>(words::hash(k.data(), k.size()));
  }
};

long long saturating_mul(long long a, long long b) {
  if (a == 0 || b == 0) return 0;
  return a > kAll / b ? kAll : a * b;
}

class BudgetSolver {
 public:
  BudgetSolver(const Problem& P, const BudgetSpec& spec, const SearchConfig& config,
               Budget& budget)
      : P_(P),
        spec_(spec),
        budget_(budget),
        bound_(P, config),
        K_(P.n_classes()),
        W_(P.n_words()),
        B_(spec.budget),
        Lambda_(config.lam * P.total_weight()),
        tau_(count_tolerance(P.total_weight())),
        zero_(zero_weight(P.total_weight())),
        minw_(spec.min_leaf_weight),
        uncut_depth_(config.bound_on("uncut_shallow") ? kUncutDepth : -1),
        // the pair counts' tables are allocated up front: under a memory limit at most half
        // of it, else the generic recursion (exact too) solves depth-two fronts
        use_depth2_(config.bound_on("depth2") &&
                    (!(config.memory_limit_mb > 0) ||
                     static_cast<double>(Depth2Solver::upfront_bytes(P)) <=
                         0.5 * config.memory_limit_mb * 1048576.0)) {
    for (std::size_t j = 0; j < P.n_features(); ++j)
      if (spec.allowed[j] && spec.cost[j] <= B_) {
        uniform_ = uniform_ && (features_.empty() || spec.cost[j] == max_cost_);
        features_.push_back(static_cast<int>(j));
        max_cost_ = std::max(max_cost_, spec.cost[j]);
        min_cost_ = std::min(min_cost_, spec.cost[j]);
      }
    split_a_.resize(static_cast<std::size_t>(K_));
    split_b_.resize(static_cast<std::size_t>(K_));
  }

  // The front of (s, d), exact for resources <= R and costs < U (Node); nullptr when the
  // budget stopped the search (nothing is memoised then). A memoised front that covers the
  // request is returned as it is; one that does not is recomputed for both requests.
  const Node* solve(const std::uint64_t* s, int d, long long R, double U) {
    R = useful(s, d, R);
    if (d <= uncut_depth_) U = kInf;
    Node* old = find(s, d);
    if (old != nullptr) {
      if (covers(*old, R, U)) return old;
      R = std::max(R, old->R);
      U = std::max(U, old->U);
      ++recomputed_;
    }
    if (budget_.tick(bytes_, ahead())) return nullptr;

    std::vector<double> cw(static_cast<std::size_t>(K_));
    P_.class_weights(s, cw.data());
    double total = 0.0;
    for (double v : cw) total += v;
    Node node{{}, R, U};
    if (total < minw_) {
      // no leaf below it is heavy enough: no tree at all, at any resource and cost
      node.R = kAll;
      node.U = kInf;
    } else {
      const LeafBound lb = bound_(cw.data(), P_.minority(s), d, P_.support(s, cw.data()));
      const Entry leaf{0, lb.leaf, -(majority_class(cw.data(), K_) + 1), false, -1, -1};
      if (lb.terminal) {
        // the leaf is optimal: it beats every tree with a split and uses no resource
        node.front.push_back(leaf);
        node.R = kAll;
        node.U = kInf;
      } else if (lb.lb < U) {  // else every tree costs >= lb >= U: an empty front
        // (a request affording at most one split is cheaper by the generic path's one scan)
        if (d == 2 && (R == kAll || R >= 2 * min_cost_) && use_depth2_ && depth2_ready()) {
          // the whole front at once (every resource and cost) from the pair counts
          node.front.push_back(leaf);
          node.R = kAll;
          node.U = kInf;
          if (!depth2_front(s, cw, node.front)) return nullptr;
        } else {
          if (lb.leaf < U) node.front.push_back(leaf);
          if (!split_into(s, d, R, U, cw, node.front)) return nullptr;
        }
        const double keep = node.U;
        node.front.erase(std::remove_if(node.front.begin(), node.front.end(),
                                        [keep](const Entry& e) { return !(e.c < keep); }),
                         node.front.end());
      }
    }
    node.front.shrink_to_fit();  // candidates made it grow; the memo keeps only the Pareto entries
    max_front_ = std::max(max_front_, node.front.size());
    const std::size_t entry_bytes = node.front.capacity() * sizeof(Entry);
    if (old != nullptr) {
      bytes_ -= old->front.capacity() * sizeof(Entry);
      bytes_ += entry_bytes;
      *old = std::move(node);
      return old;
    }
    bytes_ += (W_ + 1) * sizeof(std::uint64_t) + entry_bytes + 112;
    ++n_fronts_;
    std::vector<std::uint64_t> key(s, s + W_);
    key.push_back(static_cast<std::uint64_t>(d));
    return &memo_.emplace(std::move(key), std::move(node)).first->second;
  }

  // Rebuild the pre-order code of entry `e` of front(s, d) (every front it reads is memoised).
  void rebuild(const std::uint64_t* s, int d, const Entry& e, std::vector<int>& code) {
    code.push_back(e.feature);
    if (e.feature < 0) return;
    std::vector<std::uint64_t> left(W_), right(W_);
    const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(e.feature));
    words::and_not_into(left.data(), s, x, W_);
    words::and_into(right.data(), s, x, W_);
    if (e.direct) {
      shallow(left.data(), static_cast<int>(e.left), code);
      shallow(right.data(), static_cast<int>(e.right), code);
      return;
    }
    rebuild(left.data(), d - 1, chosen(left.data(), d - 1, e.left), code);
    rebuild(right.data(), d - 1, chosen(right.data(), d - 1, e.right), code);
  }

  std::size_t bytes() const {
    return bytes_ + memo_.bucket_count() * sizeof(void*) + (depth2_ ? depth2_->bytes() : 0);
  }
  long long depth2_fronts() const { return depth2_fronts_; }
  long long depth2_sibling_counts() const { return depth2_ ? depth2_->parent_hits() : 0; }
  long long depth2_compact_counts() const { return depth2_ ? depth2_->compact_calls() : 0; }
  long long n_fronts() const { return n_fronts_; }
  long long recomputed() const { return recomputed_; }
  std::size_t max_front() const { return max_front_; }
  long long combinations() const { return combinations_; }

 private:
  static bool covers(const Node& n, long long R, double U) {
    return (n.R == kAll || (R != kAll && n.R >= R)) && n.U >= U;
  }

  // R capped at what a tree on s of depth <= d can use (kAll when that cap is reached): at
  // most min(2^d, |s|) leaves, each split costing at most max_cost_.
  long long useful(const std::uint64_t* s, int d, long long R) const {
    R = std::min(R, B_);
    const long long points = static_cast<long long>(words::count(s, W_));
    const long long leaves = d >= 62 ? points : std::min(points, 1LL << d);
    const long long cap = saturating_mul(std::max(0LL, leaves - 1), max_cost_);
    return R >= cap ? kAll : R;
  }

  Node* find(const std::uint64_t* s, int d) {
    key_.assign(s, s + W_);
    key_.push_back(static_cast<std::uint64_t>(d));
    auto it = memo_.find(key_);
    return it == memo_.end() ? nullptr : &it->second;
  }

  // The entry of memoised front(s, d) that is best within resource r (a rebuild's child).
  const Entry& chosen(const std::uint64_t* s, int d, long long r) {
    const Node* n = find(s, d);
    if (n == nullptr) throw std::logic_error("budget dp: a front to rebuild is not memoised");
    const Entry* best = nullptr;
    for (const Entry& e : n->front) {
      if (e.r > r) break;
      best = &e;
    }
    if (best == nullptr) throw std::logic_error("budget dp: a front to rebuild lacks an entry");
    return *best;
  }

  // A leaf (feature < 0) or a split on `feature` into two leaves, on support s.
  void shallow(const std::uint64_t* s, int feature, std::vector<int>& code) {
    std::vector<double> cw(static_cast<std::size_t>(K_));
    if (feature < 0) {
      P_.class_weights(s, cw.data());
      code.push_back(-(majority_class(cw.data(), K_) + 1));
      return;
    }
    code.push_back(feature);
    std::vector<std::uint64_t> side(W_);
    const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(feature));
    words::and_not_into(side.data(), s, x, W_);
    P_.class_weights(side.data(), cw.data());
    code.push_back(-(majority_class(cw.data(), K_) + 1));
    words::and_into(side.data(), s, x, W_);
    P_.class_weights(side.data(), cw.data());
    code.push_back(-(majority_class(cw.data(), K_) + 1));
  }

  // What one more sub-problem may allocate before the next check: its key, a front of up to
  // the budget's size, and the memo's next rehash.
  std::size_t ahead() const {
    const std::size_t entries =
        static_cast<std::size_t>(std::min<long long>(B_ + 1, 1 << 16)) * sizeof(Entry) * 3;
    const std::size_t rehash =
        memo_.size() + 1 > memo_.bucket_count() ? 2 * memo_.bucket_count() * sizeof(void*) : 0;
    return (W_ + 1) * sizeof(std::uint64_t) * 4 + entries + rehash;
  }

  // Adds every useful split's candidates to `front` (the leaf, when it costs < U) and prunes
  // it to its Pareto entries; false when the budget stopped the search.
  bool split_into(const std::uint64_t* s, int d, long long R, double U,
                  const std::vector<double>& cw, Front& front) {
    const std::size_t K = static_cast<std::size_t>(K_);
    double total = 0.0;
    for (double v : cw) total += v;
    // the effective splits admitted by the minimum leaf weight, fewest one-split mistakes
    // first (good candidates early make the dominance test below prune more)
    struct Option {
      int feature;
      double order;
    };
    std::vector<Option> options;
    std::vector<double> sides(features_.size() * 2 * K);
    for (std::size_t i = 0; i < features_.size(); ++i) {
      const int j = features_[i];
      if (spec_.cost[static_cast<std::size_t>(j)] > R) continue;
      double* cl = sides.data() + 2 * K * i;
      double* cr = cl + K;
      const double wr = P_.split_class_weights(s, P_.feature_words(static_cast<std::size_t>(j)),
                                               cw.data(), cr, cl);
      const double wl = total - wr;
      if (wr <= zero_ || wl <= zero_) continue;  // not an effective split
      if (wr < minw_ || wl < minw_) continue;
      options.push_back(Option{static_cast<int>(i),
                               misclassified(cl, K_) + misclassified(cr, K_)});
    }
    std::stable_sort(options.begin(), options.end(),
                     [](const Option& a, const Option& b) { return a.order < b.order; });
    std::vector<std::uint64_t> left(W_), right(W_);
    Front candidates;
    for (const Option& o : options) {
      const int j = features_[static_cast<std::size_t>(o.feature)];
      const double* cl = sides.data() + 2 * K * static_cast<std::size_t>(o.feature);
      const double* cr = cl + K;
      const long long cost = spec_.cost[static_cast<std::size_t>(j)];
      // a candidate of resource >= cost is kept only if it costs < U and beats by more than
      // tau every entry within its resource, all within `cost` among them
      const double T = std::min(U, best_within_both(front, candidates, cost) - tau_);
      const long long avail = R == kAll ? kAll : R - cost;
      if (d == 1 || avail < min_cost_) {
        // two leaves (no depth left below, or no split affordable there): no sub-problem to
        // memoise (rebuild() recomputes their labels)
        const double c = misclassified(cl, K_) + misclassified(cr, K_) + 2 * Lambda_;
        ++combinations_;
        if (c < T) candidates.push_back(Entry{cost, c, j, true, -1, -1});
        continue;
      }
      const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(j));
      words::and_not_into(left.data(), s, x, W_);
      words::and_into(right.data(), s, x, W_);
      // every tree splitting on j costs at least its sides' bounds within `avail`
      const double lb_l = side_bound(left.data(), cl, d - 1, avail);
      const double lb_r = side_bound(right.data(), cr, d - 1, avail);
      if (lb_l + lb_r >= T) continue;
      const Node* nl = solve(left.data(), d - 1, avail, T - lb_r + tau_);
      if (nl == nullptr) return false;
      const Front& fl = nl->front;
      const double best_l = best_within(fl, avail);
      if (!(best_l + lb_r < T)) continue;  // (+inf: no left tree within avail below its U)
      const long long avail_r = avail == kAll ? kAll : avail - fl.front().r;
      // a right tree is useful only if, with some left entry a, it beats U and every entry
      // within the pair's resource: below min(U, best within (r_a + cost) - tau) - c_a for
      // some a (the right tree's own resource only lowers that)
      double need_r = -kInf;
      for (const Entry& ea : fl) {
        if (ea.r > avail) break;
        const double t = std::min(U, best_within_both(front, candidates, ea.r + cost) - tau_);
        need_r = std::max(need_r, t - ea.c);
      }
      if (!(need_r > lb_r)) continue;
      const Node* nr = solve(right.data(), d - 1, avail_r, need_r + tau_);
      if (nr == nullptr) return false;
      const Front& fr = nr->front;
      for (const Entry& ea : fl) {
        if (ea.r > avail) break;  // sorted by resource
        for (const Entry& eb : fr) {
          const long long r = ea.r + eb.r + cost;
          if (r > R) break;
          const double c = ea.c + eb.c;
          ++combinations_;
          if (c < T) candidates.push_back(Entry{r, c, j, false, ea.r, eb.r});
        }
      }
      if (candidates.size() > 4 * (front.size() + 64)) prune(front, candidates);
      if (budget_.check_clock()) return false;
    }
    prune(front, candidates);
    return true;
  }

  // The depth-two solver's tables, built at the first depth-two front; false (and the switch
  // off) when the machine cannot allocate them.
  bool depth2_ready() {
    if (depth2_) return true;
    try {
      depth2_ = std::make_unique<Depth2Solver>(P_);
    } catch (const std::bad_alloc&) {
      use_depth2_ = false;
    }
    return use_depth2_;
  }

  // Adds to `front` (holding the leaf) every depth-<=2 tree's candidate on s and prunes it to
  // the complete Pareto front: one pass of pair counts F_k(i, j) over s (Depth2Solver), then
  // per root feature i the depth-one fronts of its two cells (the leaf, and per resource the
  // best split into two leaves, every cell's class weights by inclusion-exclusion), combined.
  // False when the budget stopped the count.
  bool depth2_front(const std::uint64_t* s, const std::vector<double>& cw, Front& front) {
    const double* F = depth2_->pair_counts(s, &budget_);
    if (F == nullptr) return false;
    ++depth2_fronts_;
    const std::size_t K = static_cast<std::size_t>(K_);
    const std::size_t M = P_.n_features();
    auto cell = [&](std::size_t i, std::size_t j) {  // F_.(i, j), either order
      return F + ((std::min(i, j) * M + std::max(i, j)) * K);
    };
    std::vector<double> c0(K), c1(K);
    Front left, right, candidates;
    // the depth-one front of the cell x_i = side (class weights ci, weight wi) into `out`:
    // the leaf, then per resource the best split into two leaves (one resource when every
    // feature costs the same: just the best split)
    // the depth-one fronts of both cells of root i (x_i = 0: class weights c0, weight w0, into
    // `left`; x_i = 1 into `right`) in one pass over the features j: the leaf, then per
    // resource the best split into two leaves (one resource when every feature costs the
    // same: just the best split)
    auto depth1 = [&](std::size_t i, double w0, double w1) {
      if (K == 2 && uniform_) {
        depth1_binary(F, M, i, c0.data(), c1.data(), w0, w1, left, right);
        return;
      }
      const double leaf[2] = {misclassified(c0.data(), K_) + Lambda_,
                              misclassified(c1.data(), K_) + Lambda_};
      const double w[2] = {w0, w1};
      const double* ci[2] = {c0.data(), c1.data()};
      Front* out[2] = {&left, &right};
      Entry best[2];
      for (int side = 0; side < 2; ++side) {
        out[side]->clear();
        out[side]->push_back(Entry{0, leaf[side], -1, true, -1, -1});
        best[side] = Entry{0, leaf[side], -1, true, -1, -1};  // a split beats it by > tau
      }
      const double* row = F + i * M * K;  // F_.(i, j) for j > i
      for (int jj : features_) {
        const std::size_t j = static_cast<std::size_t>(jj);
        if (j == i) continue;
        const double* fij = j > i ? row + j * K : F + (j * M + i) * K;
        const double* fj = F + (j * M + j) * K;
        for (int side = 0; side < 2; ++side) {
          // cells x_i = side and x_j = 1 (a), x_j = 0 (b)
          double c, wa;
          const double* cs = ci[side];
          if (K == 2) {
            const double a0 = side ? fij[0] : fj[0] - fij[0];
            const double a1 = side ? fij[1] : fj[1] - fij[1];
            wa = a0 + a1;
            c = std::min(a0, a1) + std::min(cs[0] - a0, cs[1] - a1) + 2 * Lambda_;
          } else {
            double* a = split_a_.data();
            double* b = split_b_.data();
            wa = 0.0;
            for (std::size_t k = 0; k < K; ++k) {
              a[k] = side ? fij[k] : fj[k] - fij[k];
              b[k] = cs[k] - a[k];
              wa += a[k];
            }
            c = misclassified(a, K_) + misclassified(b, K_) + 2 * Lambda_;
          }
          const double wb = w[side] - wa;
          if (wa <= zero_ || wb <= zero_ || wa < minw_ || wb < minw_) continue;
          if (uniform_) {
            if (c < best[side].c - tau_) best[side] = Entry{spec_.cost[j], c, jj, true, -1, -1};
          } else if (c < leaf[side] - tau_) {
            out[side]->push_back(Entry{spec_.cost[j], c, jj, true, -1, -1});
          }
        }
      }
      for (int side = 0; side < 2; ++side) {
        Front& o = *out[side];
        if (uniform_) {
          if (best[side].feature >= 0) o.push_back(best[side]);
        } else if (o.size() > 1) {
          scratch_.assign(o.begin() + 1, o.end());  // prune takes the candidates apart
          o.resize(1);
          prune(o, scratch_);
        }
      }
    };
    for (int ii : features_) {
      const std::size_t i = static_cast<std::size_t>(ii);
      const long long cost = spec_.cost[i];
      const double* fi = cell(i, i);
      double w1 = 0.0, w0 = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        c1[k] = fi[k];
        c0[k] = cw[k] - fi[k];
        w1 += c1[k];
        w0 += c0[k];
      }
      if (w1 <= zero_ || w0 <= zero_ || w1 < minw_ || w0 < minw_) continue;
      depth1(i, w0, w1);
      for (const Entry& ea : left)
        for (const Entry& eb : right) {
          const long long r = ea.r + eb.r + cost;
          if (r > B_) break;  // sorted by resource
          ++combinations_;
          candidates.push_back(Entry{r, ea.c + eb.c, ii, true, ea.feature, eb.feature});
        }
      if (candidates.size() > 4 * (front.size() + 64)) prune(front, candidates);
      if (budget_.check_clock()) return false;
    }
    prune(front, candidates);
    return true;
  }

  // depth2_front's depth-one fronts for two classes and one cost per split (MaxLeaves): the
  // leaf and the best split of each cell, in one tight pass over the features (the general
  // loop's per-cell bookkeeping cost more than the arithmetic).
  void depth1_binary(const double* F, std::size_t M, std::size_t i, const double* c0,
                     const double* c1, double w0, double w1, Front& left, Front& right) const {
    const double lam2 = 2 * Lambda_, tau = tau_, zero = zero_, minw = minw_;
    const double leaf0 = std::min(c0[0], c0[1]) + Lambda_;
    const double leaf1 = std::min(c1[0], c1[1]) + Lambda_;
    double best0 = leaf0, best1 = leaf1;
    int f0 = -1, f1 = -1;
    const double* row = F + i * M * 2;
    const int* feature = features_.data();
    const std::size_t n = features_.size();
    for (std::size_t t = 0; t < n; ++t) {
      const std::size_t j = static_cast<std::size_t>(feature[t]);
      if (j == i) continue;
      const double* fij = j > i ? row + j * 2 : F + (j * M + i) * 2;
      const double* fj = F + (j * M + j) * 2;
      // x_i = 1 and x_j = 1 (a), x_i = 0 and x_j = 1 (b); the x_j = 0 cells are the rest
      const double a0 = fij[0], a1 = fij[1];
      const double b0 = fj[0] - a0, b1 = fj[1] - a1;
      const double v1 = std::min(a0, a1) + std::min(c1[0] - a0, c1[1] - a1) + lam2;
      const double v0 = std::min(b0, b1) + std::min(c0[0] - b0, c0[1] - b1) + lam2;
      if (v1 < best1 - tau) {
        const double wa = a0 + a1, wb = w1 - wa;
        if (wa > zero && wb > zero && wa >= minw && wb >= minw) {
          best1 = v1;
          f1 = static_cast<int>(j);
        }
      }
      if (v0 < best0 - tau) {
        const double wa = b0 + b1, wb = w0 - wa;
        if (wa > zero && wb > zero && wa >= minw && wb >= minw) {
          best0 = v0;
          f0 = static_cast<int>(j);
        }
      }
    }
    const long long cost = max_cost_;  // every feature's
    left.assign(1, Entry{0, leaf0, -1, true, -1, -1});
    if (f0 >= 0) left.push_back(Entry{cost, best0, f0, true, -1, -1});
    right.assign(1, Entry{0, leaf1, -1, true, -1, -1});
    if (f1 >= 0) right.push_back(Entry{cost, best1, f1, true, -1, -1});
  }

  // The least cost of an entry of front U candidates using at most `r`.
  static double best_within_both(const Front& front, const Front& candidates, long long r) {
    double best = best_within(front, r);
    for (const Entry& e : candidates)
      if (e.r <= r && e.c < best) best = e.c;
    return best;
  }

  // A lower bound on every tree of depth <= d and resource <= avail on side s (class weights
  // cw): the leaf/lookahead bound, raised by a memoised front that covers avail (its best
  // entry within avail, or its U when it has none).
  double side_bound(const std::uint64_t* s, const double* cw, int d, long long avail) {
    const double lb = bound_(cw, P_.minority(s), d, P_.support(s, cw)).lb;
    const Node* n = find(s, d);
    if (n == nullptr || !covers(*n, useful(s, d, avail), -kInf)) return lb;
    const double best = best_within(n->front, avail);
    return std::max(lb, best < kInf ? best : n->U);
  }

  // front <- Pareto entries of front U candidates (resource ascending, cost strictly
  // decreasing by more than tau; ties keep the smaller resource, then the earlier entry).
  void prune(Front& front, Front& candidates) {
    if (candidates.empty()) return;
    front.insert(front.end(), candidates.begin(), candidates.end());
    candidates.clear();
    std::stable_sort(front.begin(), front.end(), [](const Entry& a, const Entry& b) {
      return a.r < b.r || (a.r == b.r && a.c < b.c);
    });
    std::size_t out = 0;
    double best = kInf;
    for (std::size_t i = 0; i < front.size(); ++i) {
      if (front[i].c < best - tau_) {
        best = front[i].c;
        front[out++] = front[i];
      }
    }
    front.resize(out);
  }

  const Problem& P_;
  const BudgetSpec& spec_;
  Budget& budget_;
  InitialBound bound_;
  int K_;
  std::size_t W_;
  long long B_;
  double Lambda_, tau_, zero_, minw_;
  int uncut_depth_;
  bool use_depth2_;
  long long max_cost_ = 0, min_cost_ = kAll;
  std::vector<int> features_;
  std::unique_ptr<Depth2Solver> depth2_;
  long long depth2_fronts_ = 0;
  bool uniform_ = true;  // every feature of features_ costs the same
  std::vector<double> split_a_, split_b_;
  Front scratch_;
  std::vector<std::uint64_t> key_;
  std::unordered_map<std::vector<std::uint64_t>, Node, KeyHash> memo_;
  std::size_t bytes_ = 0, max_front_ = 0;
  long long n_fronts_ = 0, recomputed_ = 0, combinations_ = 0;
};

// The dp's tree cut back to the budget: the Pareto front (resource, cost, code) of the trees
// obtained from the subtree at code[pos] on support s by turning any of its nodes into leaves
// (each labelled by its majority), resource = the summed cost of its effective splits.
struct Cut {
  long long r;
  double c;
  std::vector<int> code;
};

std::vector<Cut> cut_fronts(const Problem& P, const BudgetSpec& spec, const std::vector<int>& code,
                            std::size_t& pos, const std::uint64_t* s, double Lambda, double tau,
                            double zero) {
  const int K = P.n_classes();
  std::vector<double> cw(static_cast<std::size_t>(K));
  P.class_weights(s, cw.data());
  Cut leaf{0, misclassified(cw.data(), K) + Lambda, {-(majority_class(cw.data(), K) + 1)}};
  const int v = code.at(pos++);
  if (v < 0) return {leaf};
  const std::size_t W = P.n_words();
  std::vector<std::uint64_t> left(W), right(W);
  const std::uint64_t* x = P.feature_words(static_cast<std::size_t>(v));
  words::and_not_into(left.data(), s, x, W);
  words::and_into(right.data(), s, x, W);
  const std::vector<Cut> a = cut_fronts(P, spec, code, pos, left.data(), Lambda, tau, zero);
  const std::vector<Cut> b = cut_fronts(P, spec, code, pos, right.data(), Lambda, tau, zero);
  std::vector<double> side(static_cast<std::size_t>(K));
  P.class_weights(right.data(), side.data());
  double total = 0.0, wr = 0.0;
  for (int k = 0; k < K; ++k) {
    total += cw[static_cast<std::size_t>(k)];
    wr += side[static_cast<std::size_t>(k)];
  }
  const bool effective = wr > zero && total - wr > zero;
  const long long cost = effective ? spec.cost[static_cast<std::size_t>(v)] : 0;
  std::vector<Cut> all{leaf};
  for (const Cut& ea : a)
    for (const Cut& eb : b) {
      const long long r = ea.r + eb.r + cost;
      if (r > spec.budget) continue;
      Cut c{r, ea.c + eb.c, {v}};
      c.code.insert(c.code.end(), ea.code.begin(), ea.code.end());
      c.code.insert(c.code.end(), eb.code.begin(), eb.code.end());
      all.push_back(std::move(c));
    }
  std::stable_sort(all.begin(), all.end(), [](const Cut& p, const Cut& q) {
    return p.r < q.r || (p.r == q.r && p.c < q.c);
  });
  std::vector<Cut> front;
  double best = kInf;
  for (Cut& c : all)
    if (c.c < best - tau) {
      best = c.c;
      front.push_back(std::move(c));
    }
  return front;
}

void check_spec(const Problem& P, const BudgetSpec& spec, const SearchConfig& config) {
  if (config.max_depth < 0)
    throw std::invalid_argument("max_depth must be >= 0: the budgeted search needs a depth limit");
  if (spec.cost.size() != P.n_features())
    throw std::invalid_argument("split_costs must have one entry per feature of the problem");
  if (spec.allowed.size() != P.n_features())
    throw std::invalid_argument("allowed must have one entry per feature of the problem");
  for (long long c : spec.cost)
    if (c < 0) throw std::invalid_argument("split_costs must be >= 0");
  // resources add up to 2 * budget + cost before the cap is checked
  if (spec.budget < 0 || spec.budget > (1LL << 60))
    throw std::invalid_argument("budget must be in [0, 2**60]");
  if (!(spec.min_leaf_weight >= 0.0) || !std::isfinite(spec.min_leaf_weight))
    throw std::invalid_argument("min_leaf_weight must be a finite number >= 0");
  // its leaf checks (and the depth-two pair counts its fronts read) sum class weights
  if (spec.min_leaf_weight > 0.0 && P.separate_support())
    throw std::invalid_argument(
        "the budgeted search measures a minimum leaf support in the problem's weights: it takes "
        "no separate support weights");
}

}  // namespace

SearchOutput search_budget_dp(const Problem& problem, const BudgetSpec& spec,
                              const SearchConfig& config, std::function<bool()> interrupted) {
  check_spec(problem, spec, config);
  // One Budget for the whole call: its clock starts before the presolve, which runs under its
  // own budget and is then charged here (its nodes and memory; its time is this clock's).
  Budget budget(config, interrupted);
  const double N = problem.total_weight();
  const double Lambda = config.lam * N;
  const double tau = count_tolerance(N);
  const double zero = zero_weight(N);
  const int D = config.max_depth;
  SearchOutput out(config);
  auto normalized = [N](double v) { return N > 0 ? v / N : v; };
  const std::uint64_t* root = problem.all_points().data();

  double incumbent = kInf;
  std::vector<int> tree;
  // every tree has a leaf and misclassifies at least the equivalent-points minority
  double lower = problem.minority_total() + Lambda;
  {
    // the single majority leaf, when heavy enough, is the first incumbent (before any limit)
    std::vector<double> cw(static_cast<std::size_t>(problem.n_classes()));
    problem.class_weights(root, cw.data());
    double total = 0.0;
    for (double v : cw) total += v;
    if (total >= spec.min_leaf_weight) {
      tree = {-(majority_class(cw.data(), problem.n_classes()) + 1)};
      incumbent = misclassified(cw.data(), problem.n_classes()) + Lambda;
    }
  }
  out.stats["shortcut"] = 0.0;
  out.stats["presolve_seconds"] = 0.0;
  if (tree.empty()) {
    // the root is lighter than the minimum leaf weight: no tree is feasible
    out.status = SearchStatus::optimal;
    out.lower_bound = kInf;
    out.objective = kInf;
    out.stats["search_seconds"] = budget.elapsed();
    return out;
  }

  // 1. The unconstrained optimum (the dp, same depth, minimum leaf weight and features): every
  // budgeted tree is one of its trees, so its optimum is a lower bound; its tree cut back to the
  // budget is a feasible incumbent, and the answer when it meets the budget uncut. Only when
  // every feature of the problem may be split on within the budget (Python drops the others).
  // Not at lam = 0: the unconstrained optimum then spends nearly every leaf the depth allows,
  // so a stated budget almost always binds, and without a leaf penalty the dp is slower, often
  // slower than the budgeted search (measured: benchmarks/results/constraints_budget.md).
  bool usable = config.bound_on("presolve") && N > 0 && Lambda > 0;
  for (std::size_t j = 0; j < problem.n_features(); ++j)
    usable = usable && spec.allowed[j] && spec.cost[j] <= spec.budget;
  SearchStatus stopped = SearchStatus::optimal;
  if (usable) {
    SearchConfig free_config = config;
    free_config.bounds.clear();
    free_config.upper_bound = kInf;
    free_config.initial_tree.clear();
    // a hair below the budget's minimum weight: the dp then admits every leaf the budgeted
    // search admits (its optimum stays a lower bound); its tree is re-checked below
    free_config.min_leaf_weight = std::min(1.0, spec.min_leaf_weight / N * (1.0 - 1e-12));
    const SearchOutput free = search_dp(problem, free_config, interrupted);
    out.stats["presolve_seconds"] = budget.elapsed();
    out.stats["presolve_objective"] = free.objective;
    budget.note_memory(static_cast<std::size_t>(free.peak_memory_mb * 1048576.0));
    budget.add_nodes(free.n_explored);
    lower = std::max(lower, free.lower_bound * N);
    if (free.status != SearchStatus::optimal) {
      stopped = free.status;
    } else if (config.bound_on("upper_bound") && !free.tree.empty()) {
      std::size_t pos = 0;
      const std::vector<Cut> cuts =
          cut_fronts(problem, spec, free.tree, pos, root, Lambda, tau, zero);
      const Cut& best = cuts.back();  // within the budget, the least cost
      const double value = evaluate_tree(problem, best.code, Lambda, D, spec.min_leaf_weight);
      if (value < incumbent - tau) {
        tree = best.code;
        incumbent = value;
      }
    }
  }
  out.record(budget.elapsed(), normalized(incumbent), normalized(std::min(incumbent, lower)));

  // 2. The budgeted DP, pruned by the incumbent: iterative deepening over depths on one memo
  // (each completed depth may improve the incumbent), unless the presolve gave an incumbent
  // to prune with, when the stated depth alone is solved.
  BudgetSolver solver(problem, spec, config, budget);
  int completed = -1;
  const bool certified = incumbent <= lower + tau;
  if (certified) {
    completed = D;
    out.stats["shortcut"] = 1.0;
  } else if (stopped == SearchStatus::optimal) {
    const int first = usable ? D : 0;
    catch_out_of_memory(budget, [&] {
      for (int d = first; d <= D; ++d) {
        const Node* node = solver.solve(root, d, spec.budget, incumbent);
        if (node == nullptr) break;
        completed = d;
        const Front& front = node->front;
        std::size_t best = front.size();
        for (std::size_t e = 0; e < front.size(); ++e)
          if (best == front.size() || front[e].c < front[best].c - tau) best = e;
        if (best < front.size() && front[best].c < incumbent - tau) {
          std::vector<int> code;
          solver.rebuild(root, d, front[best], code);
          const double check = evaluate_tree(problem, code, Lambda, D);
          if (std::abs(check - front[best].c) > 16 * tau + 1e-9)
            throw std::logic_error(
                "budget dp: a rebuilt tree does not score what the search found (a bug)");
          tree = std::move(code);  // the tree before its value (a bad_alloc keeps them in step)
          incumbent = check;
        }
        out.record(budget.elapsed(), normalized(incumbent),
                   normalized(d == D ? incumbent : std::min(incumbent, lower)));
        if (incumbent <= lower + tau) {
          completed = D;  // the lower bound certifies it
          break;
        }
      }
    });
  }
  budget.note_memory(solver.bytes());
  const bool done = completed == D;
  if (stopped != SearchStatus::optimal)
    out.status = stopped;
  else
    out.status = done && !budget.ran_out_of_memory() ? SearchStatus::optimal : budget.status();
  if (out.status == SearchStatus::optimal && !done) out.status = SearchStatus::memory_limit;
  out.tree = tree;
  out.objective = normalized(incumbent);
  out.lower_bound = out.status == SearchStatus::optimal ? out.objective
                                                        : normalized(std::min(incumbent, lower));
  out.n_explored = budget.nodes();
  out.peak_memory_mb = budget.peak_memory_mb();
  out.stats["depths_completed"] = static_cast<double>(completed + 1);
  out.stats["fronts"] = static_cast<double>(solver.n_fronts());
  out.stats["fronts_recomputed"] = static_cast<double>(solver.recomputed());
  out.stats["front_max"] = static_cast<double>(solver.max_front());
  out.stats["combinations"] = static_cast<double>(solver.combinations());
  out.stats["depth2_fronts"] = static_cast<double>(solver.depth2_fronts());
  out.stats["depth2_sibling_counts"] = static_cast<double>(solver.depth2_sibling_counts());
  out.stats["depth2_compact_counts"] = static_cast<double>(solver.depth2_compact_counts());
  out.stats["out_of_memory"] = budget.ran_out_of_memory() ? 1.0 : 0.0;
  out.stats["search_seconds"] = budget.elapsed();
  return out;
}

}  // namespace odtkit

// Exact search over every threshold of numeric columns (issue 23).
//
// A sub-problem is a set of rows with a remaining depth. It keeps, per column, its rows sorted
// by that column's value (present rows by rank, then the missing ones), so that every threshold
// of a column is one position in a sweep: a depth-1 tree (stump) over all columns and
// thresholds costs O(columns x rows x classes), and splitting a sub-problem keeps the order
// (a stable partition), as in ConTree (Brita, van der Linden & Demirovic, AAAI 2025).
//
// Depth >= 2: the splits of one column with one side for its missing values form a *family*
// whose thresholds t_0 < t_1 < ... are searched by branch and bound over intervals
// (docs/formulations-search-and-pruning.md §3.10). With L(t), R(t) the optimal costs of the two
// children at the remaining depth,
//   * L is non-decreasing and R non-increasing in t (an optimal tree of a superset, applied to
//     a subset, costs no more there: same leaves, fewer rows), and
//   * L(t') - L(t) <= W(t, t'] for t < t' (the optimal tree of the smaller set misclassifies at
//     worst the rows added), likewise for R,
// so evaluated thresholds a < b bound every t between them:
//   L(t) >= max(L(a), L(b) - W(t, b]),   R(t) >= max(R(b), R(a) - W(a, t]).
// Intervals whose bound reaches the incumbent are dropped (or narrowed from their ends); the
// others wait in one best-first queue over all families of the sub-problem, whose top is a
// lower bound of the sub-problem at every moment (the anytime bound at the root). The first
// threshold tried in a family is its best stump split, then interval midpoints.
// Depth 2 evaluates a threshold by two stump sweeps of the children (exact, no recursion;
// with two classes one branch-free pass over each column serves both, prefix_extremes, or
// eight rows at a time on 16-bit lanes when the weights allow, packed_extremes);
// deeper, the children are sub-problems solved recursively and memoized on (row set, depth):
// both exactly up to depth kExactChildren (an evaluated threshold then has its exact cost, whose
// margin prunes its neighbours), deeper ones under the incumbent's budget. Lower bounds of a sub-problem: one leaf, or a split with the
// equivalent-points bound (rows equal in every column but of different classes) plus 2 Lambda;
// with lam > 0 also the leaf-count bounds (a tree of at most k + 1 leaves has depth <= k).
// The driver (search_numeric, at the end) takes the greedy tree and the depth-1 optimum before
// any limit can stop it, then certifies the shallower optima before the requested depth.
#include "numeric.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "search_common.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace odtkit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Children of at most this depth are solved exactly, not only under the parent's budget, and
// both of them, even when the first one already prunes the threshold: a budget-pruned child
// gives a bound just high enough for its own threshold (the trace of breast cancer depth 4,
// lam 0.005: every root threshold evaluated came out at the incumbent to 0.2), two exact ones
// the threshold's exact cost, whose margin over the incumbent prunes its neighbours too
// (§3.10), and final memo entries. CPU s at depth 4, 2 (the children of depth 2 only, the
// first one alone when it prunes) -> 3 with both: synthetic 400 x 10 lam 0 7.7 -> 2.2,
// lam 0.01 17.0 -> 2.2; star98 lam 0 24.9 -> 14.7, lam 0.03 31.0 -> 3.7; breast cancer lam 0
// 1.7 -> 1.3 (depth 3 in 4.8 s instead of 9.9 s when 2 replaced 1).
constexpr int kExactChildren = 3;
// A sub-problem of at least this many cells (rows x columns) reads the clock before each
// threshold it evaluates, not only every 16th node (Budget::tick): one evaluation there sweeps
// that many cells (about 0.1 ms), so a time limit holds within a few such sweeps, while the
// clock read (tens of ns) stays below 0.1 % of the work.
constexpr std::size_t kClockCells = std::size_t{1} << 16;
// A node keeps its columns' orders in 16 bits (Node::order16, up to columns^2 x rows entries
// once every family has been swept) only up to this many entries, 8 MB: breast cancer's root
// holds 30 x 30 x 576; a wider or longer node gathers its rows' sides at every sweep instead.
constexpr std::size_t kOrderEntries = std::size_t{1} << 22;
// The 16-bit sweep (packed_extremes) needs SSE2 lanes (the x86-64 baseline) to pay: its scalar
// form is slower than the 32-bit sweep (breast cancer depth 3, lam 0.005: 0.93 s against 0.75),
// so without them the search keeps the 32-bit one.
#if defined(__SSE2__)
constexpr bool kLanes16 = true;
#else
constexpr bool kLanes16 = false;
#endif

// One entry of a tree in pre-order: a split (column >= 0, rank, value = missing_le) is followed
// by its le subtree, then its gt subtree; a leaf has column -1 and its class in value.
struct Item {
  int column, rank, value;
};
using Code = std::vector<Item>;

Code leaf_code(int label) { return Code{Item{-1, 0, label}}; }

Code split_code(const NumericSplit& s, const Code& le, const Code& gt) {
  Code code;
  code.reserve(1 + le.size() + gt.size());
  code.push_back(Item{s.column, s.rank, s.missing_le});
  code.insert(code.end(), le.begin(), le.end());
  code.insert(code.end(), gt.begin(), gt.end());
  return code;
}

// The table in the form the search reads: ranks per column (column-major), -1 for missing.
struct Data {
  std::size_t n = 0, m = 0;
  int K = 1;
  std::vector<int> rank;       // rank[c * n + r]
  std::vector<int> distinct;   // D per column
  std::vector<char> missing;   // column has a missing cell
  std::vector<std::vector<int>> sorted;  // per column: present rows by rank, then missing rows
  std::vector<int> y;
  std::vector<double> w;
  std::vector<int> group;      // rows equal in every column share a group
  int n_groups = 0;
  double total = 0.0;

  explicit Data(const NumericTable& t) : n(t.n_rows), m(t.n_columns), K(t.n_classes) {
    y.assign(t.labels, t.labels + n);
    w.assign(t.weights, t.weights + n);
    for (double v : w) total += v;
    rank.assign(n * m, -1);
    distinct.assign(m, 0);
    missing.assign(m, 0);
    sorted.resize(m);
    std::vector<int> rows;
    for (std::size_t c = 0; c < m; ++c) {
      rows.clear();
      std::vector<int> absent;
      for (std::size_t r = 0; r < n; ++r) {
        if (std::isnan(t.values[r * m + c]))
          absent.push_back(static_cast<int>(r));
        else
          rows.push_back(static_cast<int>(r));
      }
      std::stable_sort(rows.begin(), rows.end(), [&](int a, int b) {
        return t.values[a * m + c] < t.values[b * m + c];
      });
      int d = -1;
      double previous = 0.0;
      for (int r : rows) {
        const double v = t.values[r * m + c];
        if (d < 0 || v != previous) ++d, previous = v;
        rank[c * n + r] = d;
      }
      distinct[c] = d + 1;
      missing[c] = absent.empty() ? 0 : 1;
      rows.insert(rows.end(), absent.begin(), absent.end());
      sorted[c] = rows;
    }
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    auto less = [&](int a, int b) {
      for (std::size_t c = 0; c < m; ++c) {
        const int x = rank[c * n + a], z = rank[c * n + b];
        if (x != z) return x < z;
      }
      return false;
    };
    std::sort(order.begin(), order.end(), less);
    group.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0 && less(order[i - 1], order[i])) ++n_groups;
      group[order[i]] = n_groups;
    }
    n_groups = n > 0 ? n_groups + 1 : 0;
  }
  int rank_of(std::size_t c, int r) const { return rank[c * n + r]; }
};

// One row in a column's order, with its rank in that column (-1: missing), class and weight
// side by side: a sweep then reads memory in order (on 50,000 rows the scattered reads of
// per-row arrays made a depth-2 search 2-3x slower).
// `signed_count`: two classes with whole weights below 2^31 in total only (else 0), the weight
// as an integer, negated for class 1: the two-class stump costs then sum integers, whose
// additions chain at one cycle a row against four for doubles (it fills the padding).
struct Cell {
  int row, rank, label, signed_count;
  double weight;
};

// A sub-problem: s rows; block c of `cells` (s entries) holds them sorted by column c, the
// `present[c]` present ones first.
struct Node {
  std::size_t s = 0;
  std::vector<Cell> cells;
  std::vector<int> present;
  // The two-class sweep's copy of the present rows in 16 bits (Solver::pack; two classes,
  // whole weights, total and rows below 2^15): per column, `stride16` entries
  // (s rounded up to 8), the row ids, the signed counts, their prefix sums, and -1 where a
  // threshold follows the row (the last row of a rank), else 0; padding adds 0 and ends
  // nothing. Built when a node first sweeps its thresholds, at most once.
  mutable std::vector<std::uint16_t> row16;
  mutable std::vector<std::int16_t> count16, sum16, end16;
  mutable std::size_t stride16 = 0;
  mutable bool complete16 = false;  // no missing cell in the node
  // order16[c]: for a column c without missing rows, each row's position in c's order, laid
  // out as row16 (padding 2^15 - 1): a threshold of c after p rows puts on the le side the
  // rows of position < p, so the sweep compares instead of gathering the rows' sides. Built
  // at c's first threshold swept here (that sweep's gather), reused by the next ones.
  mutable std::vector<std::vector<std::int16_t>> order16;
};

// The thresholds of one column inside a sub-problem: position p (present rows on the le side),
// the rank reported for it and the weight of those p rows.
struct Boundaries {
  std::vector<int> p, k;
  std::vector<double> weight;
};

// A family: one column with one side for its missing values (or the missing-vs-present split).
struct Family {
  int column = 0;
  int missing_le = 0;
  bool missing_split = false;
  const Boundaries* at = nullptr;
  int seed = 0;             // index of its best stump threshold, tried first
  double seed_cost = kInf;  // that stump's cost (queue tie-break)
  double absent_weight = 0.0, present_weight = 0.0;  // the node's rows missing / present in it
  // Bounds at the two virtual ends (docs §3.10): R before the first threshold (le side: the
  // missing rows or nothing) and L after the last one (gt side: the missing rows or nothing).
  double right_at_start = 0.0, left_at_end = 0.0;
  // lam > 0 only: per threshold, min(leaf, 2 Lambda) of each side, a bound on that side's
  // optimum at any depth (a leaf, or at least two leaves); valid at its own threshold only
  std::vector<double> capL, capR;
  std::vector<double> lbL, lbR;
  int size() const { return missing_split ? 1 : static_cast<int>(at->p.size()); }
};

// Thresholds lo..hi of a family, none evaluated; a < lo and b > hi are the nearest evaluated
// ones (-1 and the family's size: none), whose values bound the interval.
struct Interval {
  double bound, priority;
  int family, lo, hi, a, b;
  bool operator>(const Interval& o) const {
    return bound != o.bound ? bound > o.bound : priority > o.priority;
  }
};

struct Answer {
  double lb = 0.0, cost = kInf;
  Code tree;
};

struct MemoEntry {
  double lb = 0.0, cost = kInf;
  Code tree;
};

struct KeyHash {
  std::size_t operator()(const std::vector<std::uint64_t>& key) const {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (std::uint64_t v : key) {
      h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      h *= 0xbf58476d1ce4e5b9ULL;
    }
    return static_cast<std::size_t>(h ^ (h >> 31));
  }
};

class Solver {
 public:
  Solver(const Data& data, const SearchConfig& config, Budget& budget, SearchOutput& out)
      : D_(data), K_(data.K), Lambda_(config.lam * data.total),
        tau_(count_tolerance(data.total)), budget_(budget), out_(out),
        side_(data.n, 0), le_mask_(data.n, 0), le_mask16_(data.n, 0),
        group_weight_(static_cast<std::size_t>(data.n_groups) * data.K, 0.0),
        use_similarity_(config.bound_on("similarity")) {
    // whole weights (unit weights, repeated rows): the two-class sweep sums them as integers,
    // exactly the doubles' sums, as every partial sum is a whole number below 2^31
    whole_ = K_ == 2 && data.total < 2147483647.0;
    for (double v : data.w) whole_ = whole_ && v == std::floor(v);
    // every partial sum of a side's signed counts (and of a column's) is then below 2^15 in
    // magnitude, so the sweep's 16-bit lanes hold them exactly
    narrow_ = kLanes16 && whole_ && data.total < 32768.0 && data.n < 32768;
  }

  Node root() const {
    Node node;
    node.s = D_.n;
    node.cells.reserve(D_.n * D_.m);
    node.present.resize(D_.m);
    for (std::size_t c = 0; c < D_.m; ++c) {
      int present = 0;
      for (int r : D_.sorted[c]) {
        const int rank = D_.rank_of(c, r);
        const int count = whole_ ? static_cast<int>(D_.w[r]) : 0;
        node.cells.push_back(Cell{r, rank, D_.y[r], D_.y[r] == 0 ? count : -count, D_.w[r]});
        present += rank >= 0;
      }
      node.present[c] = present;
    }
    return node;
  }

  // The best tree of depth <= depth on `node` if one costs < ub: {its cost, the tree} with
  // lb = cost when the search completed. Otherwise lb >= min(ub, optimum) is a valid bound
  // and `tree` (cost `cost`) the best found. `root`: record incumbents and the bound.
  Answer solve(const Node& node, int depth, double ub, bool at_root = false) {
    std::vector<double> counts(K_, 0.0);
    for (std::size_t i = 0; i < node.s; ++i) counts[node.cells[i].label] += node.cells[i].weight;
    const int label = majority(counts.data());
    const double leaf = misclassified(counts.data()) + Lambda_;
    Answer answer{leaf, leaf, leaf_code(label)};
    if (depth == 0 || node.s <= 1) return answer;
    const double eq = equivalent_points(node);
    double lb = std::min(leaf, eq + 2 * Lambda_);
    if (leaf <= lb + tau_) return answer;  // provably a leaf
    if (budget_.tick(memo_bytes_) || (node.s * D_.m >= kClockCells && budget_.check_clock())) {
      answer.lb = lb;
      return answer;
    }
    std::vector<std::uint64_t> key;
    if (depth >= 2) {
      key = memo_key(node, depth);
      auto it = memo_.find(key);
      if (it != memo_.end()) {
        const MemoEntry& e = it->second;
        if (e.cost <= e.lb + tau_ || e.lb >= ub) return Answer{e.lb, e.cost, e.tree};
        lb = std::max(lb, e.lb);
        if (e.cost < answer.cost) answer.cost = e.cost, answer.tree = e.tree;
      }
    }
    if (lb >= ub) {
      answer.lb = lb;
      return answer;
    }
    // stumps: the best one is an incumbent, and each family's best threshold its first try
    std::vector<Boundaries> columns(D_.m);
    std::vector<Family> families;
    families.reserve(D_.m);
    for (std::size_t c = 0; c < D_.m; ++c)
      sweep_families(node, static_cast<int>(c), counts.data(), columns[c], families);
    double stumps = leaf;  // the optimum at depth 1
    for (const Family& f : families) {
      stumps = std::min(stumps, f.seed_cost);
      if (f.seed_cost < answer.cost - tau_) {
        answer.cost = f.seed_cost;
        answer.tree = stump_code(node, f, f.seed);
      }
    }
    // lam > 0, leaf counts (docs §3.10): a tree of at most k + 1 leaves has depth <= k, so a
    // tree of depth <= d costs at least min(OPT_k, eq + (k + 2) Lambda) for every k < d; here
    // k = 1 (the stumps just swept) and, below, k = d - 1 when a memo entry bounds OPT_{d-1}.
    // Every tree that splits costs at least min(stumps, eq + 3 Lambda) (`split_floor`).
    const double split_floor = Lambda_ > 0.0 ? std::min(stumps, eq + 3 * Lambda_) : eq;
    if (depth >= 2) lb = std::max(lb, std::min(leaf, split_floor));
    // a lower bound on the optimum at depth - 1, which bounds each child from below once the
    // weight it lacks of the node's rows is subtracted
    double shallower = depth == 2 ? stumps : lb;
    if (depth >= 3) {  // the optimum one level shallower, when a deepening pass solved it
      key.back() = static_cast<std::uint64_t>(depth - 1);
      auto it = memo_.find(key);
      if (it != memo_.end()) {
        shallower = std::max(shallower, it->second.lb);
        if (Lambda_ > 0.0) lb = std::max(lb, std::min(it->second.lb, eq + (depth + 1) * Lambda_));
      }
      key.back() = static_cast<std::uint64_t>(depth);
    }
    if (depth >= 2 && (answer.cost <= lb + tau_ || lb >= ub)) {  // settled by the bounds
      answer.lb = answer.cost <= lb + tau_ ? answer.cost : lb;
      store(std::move(key), answer);
      return answer;
    }
    shallower = std::max(shallower, depth == 2 ? 0.0 : lb);
    for (Family& f : families) {
      const bool le = f.missing_le != 0;
      f.right_at_start = le ? shallower - f.absent_weight : shallower;
      f.left_at_end = le ? shallower : shallower - f.absent_weight;
    }
    if (depth == 1 || families.empty()) {
      answer.lb = answer.cost;  // every stump was seen
      return answer;
    }
    if (at_root) record(answer.cost, std::min(lb, answer.cost));

    if (depth == 2 || Lambda_ > 0.0) pack(node);  // its thresholds sweep stumps (evaluate)
    std::priority_queue<Interval, std::vector<Interval>, std::greater<Interval>> queue;
    for (std::size_t f = 0; f < families.size(); ++f) {
      Family& fam = families[f];
      fam.lbL.assign(fam.size(), kInf);
      fam.lbR.assign(fam.size(), kInf);
      queue.push(Interval{split_floor, fam.seed_cost, static_cast<int>(f), 0,
                          fam.size() - 1, -1, fam.size()});
    }
    std::vector<char> started(families.size(), 0);
    const bool big = node.s * D_.m >= kClockCells;
    double threshold = std::min(answer.cost, ub);
    bool stopped = false;
    double open_bound = kInf;  // the bound of the interval being worked on when stopped
    while (!queue.empty()) {
      Interval top = queue.top();
      if (top.bound >= threshold) break;
      queue.pop();
      Family& fam = families[top.family];
      if (!narrow(fam, top, threshold)) continue;
      if (at_root) record(answer.cost, std::max(lb, std::min(answer.cost, top.bound)));
      int mid = (top.lo + top.hi) / 2;
      if (!started[top.family]) {
        started[top.family] = 1;
        mid = std::clamp(fam.seed, top.lo, top.hi);
      }
      if (budget_.tick(memo_bytes_) || (big && budget_.check_clock())) {
        stopped = true;
        open_bound = top.bound;
        break;
      }
      const double lowL = std::max(left_low(fam, mid, top.a, top.b), cap(fam.capL, mid));
      const double lowR = std::max(right_low(fam, mid, top.a, top.b), cap(fam.capR, mid));
      if (!evaluate(node, fam, mid, depth, threshold, lowL, lowR, answer)) {
        stopped = true;
        open_bound = top.bound;
        break;
      }
      if (at_root && answer.cost < threshold) record(answer.cost, std::min(lb, answer.cost));
      threshold = std::min(answer.cost, ub);
      for (Interval part : {Interval{0.0, top.priority, top.family, top.lo, mid - 1, top.a, mid},
                            Interval{0.0, top.priority, top.family, mid + 1, top.hi, mid, top.b}}) {
        if (part.lo > part.hi) continue;
        part.bound = interval_bound(fam, part);
        if (part.bound < threshold) queue.push(part);
      }
    }
    if (stopped) {
      answer.lb = std::max(lb, std::min(answer.cost, open_bound));
    } else if (answer.cost < ub) {
      answer.lb = answer.cost;
    } else {
      answer.lb = std::max(lb, ub);
    }
    if (depth >= 2) store(std::move(key), answer);
    return answer;
  }

  double Lambda() const { return Lambda_; }

  // The equivalent-points minority of `node` (§2.2): every tree misclassifies at least that.
  double equivalent(const Node& node) { return equivalent_points(node); }

  // The optimal tree of depth <= 1 on `node`, by one sweep per column, without consulting
  // the budget: the driver's certified floor before anything can stop it.
  // (The sweep of greedy(), scored by the objective; nothing stored per threshold.)
  Answer stump_optimum(const Node& node) {
    std::vector<double> counts(K_, 0.0);
    for (std::size_t i = 0; i < node.s; ++i) counts[node.cells[i].label] += node.cells[i].weight;
    const double leaf = misclassified(counts.data()) + Lambda_;
    Answer answer{leaf, leaf, leaf_code(majority(counts.data()))};
    double best = leaf - tau_;
    int best_column = -1, best_p = 0, best_k = 0, best_le = 0;
    std::vector<double> absent(K_), gt(K_), with(K_);
    for (std::size_t c = 0; c < D_.m; ++c) {
      const int col = static_cast<int>(c);
      const int n_absent = sweep(node, col, absent.data(), [&](int p, int k, double,
                                                                 const double* le) {
        for (int j = 0; j < K_; ++j) gt[j] = counts[j] - le[j];
        const double one = misclassified(le) + misclassified(gt.data()) + 2 * Lambda_;
        if (one < best) best = one, best_column = col, best_p = p, best_k = k, best_le = 0;
        if (n_absent_of(node, col) == 0) return;
        for (int j = 0; j < K_; ++j) with[j] = le[j] + absent[j], gt[j] = counts[j] - with[j];
        const double two = misclassified(with.data()) + misclassified(gt.data()) + 2 * Lambda_;
        if (two < best) best = two, best_column = col, best_p = p, best_k = k, best_le = 1;
      });
      if (n_absent > 0 && static_cast<std::size_t>(n_absent) < node.s) {
        for (int j = 0; j < K_; ++j) gt[j] = counts[j] - absent[j];
        const double one = misclassified(gt.data()) + misclassified(absent.data()) + 2 * Lambda_;
        if (one < best) best = one, best_column = col, best_p = node.present[c],
                        best_k = D_.distinct[c] - 1, best_le = 0;
      }
    }
    if (best_column >= 0) {
      std::vector<double> le(K_), right(K_);
      mark_position(node, best_column, best_p, best_le, le.data(), right.data());
      answer.cost = misclassified(le.data()) + misclassified(right.data()) + 2 * Lambda_;
      answer.tree = split_code(NumericSplit{best_column, best_k, best_le},
                               leaf_code(majority(le.data())), leaf_code(majority(right.data())));
    }
    answer.lb = answer.cost;
    return answer;
  }
  int n_absent_of(const Node& node, int c) const {
    return static_cast<int>(node.s) - node.present[c];
  }

  // The greedy tree of depth <= depth: the split of largest Gini gain (CART) at every node,
  // then bottom-up pruning by the objective, as greedy.cpp's over binary features (docs §3.2).
  // The first incumbent: a stopped search is never worse than it.
  Answer greedy(const Node& node, int depth) {
    std::vector<double> counts(K_, 0.0);
    for (std::size_t i = 0; i < node.s; ++i) counts[node.cells[i].label] += node.cells[i].weight;
    const double leaf = misclassified(counts.data()) + Lambda_;
    Answer answer{0.0, leaf, leaf_code(majority(counts.data()))};
    // not stopped by a limit: the driver's first incumbent, O(depth x columns x rows)
    if (depth == 0 || node.s <= 1 || misclassified(counts.data()) <= tau_ || D_.m == 0)
      return answer;
    auto impurity = [&](const double* c) {  // weight x Gini impurity of one side
      double w = 0.0, squares = 0.0;
      for (int k = 0; k < K_; ++k) w += c[k], squares += c[k] * c[k];
      return w > 0.0 ? w - squares / w : 0.0;
    };
    double best = impurity(counts.data()) - tau_;
    int best_column = -1, best_p = 0, best_k = 0, best_le = 0;
    std::vector<double> absent(K_), gt(K_), with(K_);
    for (std::size_t c = 0; c < D_.m; ++c) {
      const int col = static_cast<int>(c);
      const int n_absent = sweep(node, col, absent.data(), [&](int p, int k, double,
                                                                 const double* le) {
        for (int j = 0; j < K_; ++j) gt[j] = counts[j] - le[j];
        const double one = impurity(le) + impurity(gt.data());
        if (one < best) best = one, best_column = col, best_p = p, best_k = k, best_le = 0;
        for (int j = 0; j < K_; ++j) with[j] = le[j] + absent[j], gt[j] = counts[j] - with[j];
        const double two = impurity(with.data()) + impurity(gt.data());
        if (two < best) best = two, best_column = col, best_p = p, best_k = k, best_le = 1;
      });
      if (n_absent > 0 && static_cast<std::size_t>(n_absent) < node.s) {
        for (int j = 0; j < K_; ++j) gt[j] = counts[j] - absent[j];
        const double one = impurity(gt.data()) + impurity(absent.data());
        if (one < best) best = one, best_column = col, best_p = node.present[c],
                        best_k = D_.distinct[c] - 1, best_le = 0;
      }
    }
    if (best_column < 0) return answer;
    std::vector<double> le(K_), right(K_);
    const std::size_t n_le = mark_position(node, best_column, best_p, best_le, le.data(),
                                           right.data());
    Node left_node = child(node, 1, n_le), right_node = child(node, 2, node.s - n_le);
    const Answer left = greedy(left_node, depth - 1);
    const Answer gt_side = greedy(right_node, depth - 1);
    if (left.cost + gt_side.cost < leaf - tau_) {
      answer.cost = left.cost + gt_side.cost;
      answer.tree = split_code(NumericSplit{best_column, best_k, best_le}, left.tree, gt_side.tree);
    }
    return answer;
  }

 private:
  // the library's class-weight helpers (problem.hpp) at this table's class count
  int majority(const double* c) const { return majority_class(c, K_); }
  double misclassified(const double* c) const { return odtkit::misclassified(c, K_); }

  double equivalent_points(const Node& node) {
    double eq = 0.0;
    touched_.clear();
    for (std::size_t i = 0; i < node.s; ++i) {
      const Cell& cell = node.cells[i];
      const std::size_t g = static_cast<std::size_t>(D_.group[cell.row]);
      double* gw = &group_weight_[g * K_];
      bool fresh = true;
      for (int k = 0; k < K_; ++k) fresh = fresh && gw[k] == 0.0;
      if (fresh) touched_.push_back(static_cast<int>(g));
      gw[cell.label] += cell.weight;
    }
    for (int g : touched_) {
      double* gw = &group_weight_[static_cast<std::size_t>(g) * K_];
      eq += misclassified(gw);
      std::fill(gw, gw + K_, 0.0);
    }
    return eq;
  }

  // Sweep column c of `node`: calls at(p, k, weight_le, le_counts) at every threshold
  // (p present rows on the le side, k the rank reported for it), returns the missing rows'
  // class weights in `absent` (and their number in the return value).
  template <class At>
  int sweep(const Node& node, int c, double* absent, At&& at) const {
    const Cell* block = &node.cells[static_cast<std::size_t>(c) * node.s];
    const int present = node.present[c];
    std::fill(absent, absent + K_, 0.0);
    int n_absent = 0;
    for (std::size_t i = present; i < node.s; ++i) {
      absent[block[i].label] += block[i].weight;
      ++n_absent;
    }
    std::vector<double>& le = scratch_;
    le.assign(K_, 0.0);
    double weight = 0.0;
    int p = 0, previous = -1;
    for (int i = 0; i < present; ++i) {
      const Cell& cell = block[i];
      const int rk = cell.rank;
      if (p > 0 && rk != previous) at(p, previous + (rk - 1 - previous) / 2, weight, le.data());
      le[cell.label] += cell.weight;
      weight += cell.weight;
      ++p;
      previous = rk;
    }
    return n_absent;
  }

  // The families of column c at `node` with their stump costs (boundaries into `bounds`).
  void sweep_families(const Node& node, int c, const double* total, Boundaries& bounds,
                      std::vector<Family>& families) const {
    std::vector<double> absent(K_), gt(K_), with(K_);
    Family plain, sided;
    plain.column = sided.column = c;
    sided.missing_le = 1;
    plain.at = sided.at = &bounds;
    // one entry per threshold, at most one per present row: no regrowth (a depth-2 node sweeps
    // its families once, and breast cancer depth 4 has 120,000 of them)
    const std::size_t most = static_cast<std::size_t>(node.present[c]);
    bounds.p.reserve(most);
    bounds.k.reserve(most);
    bounds.weight.reserve(most);
    if (Lambda_ > 0.0) {
      plain.capL.reserve(most);
      plain.capR.reserve(most);
    }
    const int n_absent = sweep(node, c, absent.data(), [&](int p, int k, double weight,
                                                               const double* le) {
      bounds.p.push_back(p);
      bounds.k.push_back(k);
      bounds.weight.push_back(weight);
      const int index = static_cast<int>(bounds.p.size()) - 1;
      for (int j = 0; j < K_; ++j) gt[j] = total[j] - le[j];
      const double wrong_le = misclassified(le), wrong_gt = misclassified(gt.data());
      const double cost = wrong_le + wrong_gt + 2 * Lambda_;
      if (cost < plain.seed_cost) plain.seed_cost = cost, plain.seed = index;
      if (Lambda_ > 0.0) {
        plain.capL.push_back(std::min(wrong_le + Lambda_, 2 * Lambda_));
        plain.capR.push_back(std::min(wrong_gt + Lambda_, 2 * Lambda_));
      }
      if (D_.missing[c]) {
        for (int j = 0; j < K_; ++j) with[j] = le[j] + absent[j], gt[j] = total[j] - with[j];
        const double cost2 = misclassified(with.data()) + misclassified(gt.data()) + 2 * Lambda_;
        if (cost2 < sided.seed_cost) sided.seed_cost = cost2, sided.seed = index;
        if (Lambda_ > 0.0) {
          sided.capL.push_back(std::min(misclassified(with.data()) + Lambda_, 2 * Lambda_));
          sided.capR.push_back(std::min(misclassified(gt.data()) + Lambda_, 2 * Lambda_));
        }
      }
    });
    double absent_weight = 0.0, all = 0.0;
    for (int j = 0; j < K_; ++j) absent_weight += absent[j], all += total[j];
    plain.absent_weight = sided.absent_weight = absent_weight;
    plain.present_weight = sided.present_weight = all - absent_weight;
    if (!bounds.p.empty()) {
      families.push_back(std::move(plain));
      if (n_absent > 0) families.push_back(std::move(sided));
    }
    const int present = node.present[c];
    if (n_absent > 0 && present > 0) {
      Family split;
      split.column = c;
      split.missing_split = true;
      split.at = &bounds;
      for (int j = 0; j < K_; ++j) gt[j] = total[j] - absent[j];
      split.seed_cost = misclassified(gt.data()) + misclassified(absent.data()) + 2 * Lambda_;
      families.push_back(split);
    }
  }

  NumericSplit split_of(const Family& f, int t) const {
    if (f.missing_split) return NumericSplit{f.column, D_.distinct[f.column] - 1, 0};
    return NumericSplit{f.column, f.at->k[t], f.missing_le};
  }

  // Marks side_ of the node's rows for threshold t of f (1 = le, 2 = gt); class weights of
  // each side into le / gt, returns the le side's number of rows.
  std::size_t mark(const Node& node, const Family& f, int t, double* le, double* gt) {
    return mark_position(node, f.column, f.missing_split ? node.present[f.column] : f.at->p[t],
                         f.missing_le, le, gt);
  }
  // The same for the split of column c after its first p present rows (missing rows to le iff
  // missing_le).
  std::size_t mark_position(const Node& node, int c, int p, int missing_le, double* le,
                            double* gt) {
    const Cell* block = &node.cells[static_cast<std::size_t>(c) * node.s];
    const std::size_t present = static_cast<std::size_t>(node.present[c]);
    const std::size_t first = static_cast<std::size_t>(p);
    std::fill(le, le + K_, 0.0);
    std::fill(gt, gt + K_, 0.0);
    // three runs of the column's order: the first p present rows, the other present ones, the
    // missing ones; two classes sum each class in a register (products by 0 or 1, exact), as
    // a sum through counts[label] chained a store and a load per row
    auto run = [&](std::size_t from, std::size_t to, char which, double* counts) {
      const int mask = which == 1 ? -1 : 0;
      if (K_ == 2) {
        double c0 = 0.0, c1 = 0.0;
        for (std::size_t i = from; i < to; ++i) {
          const Cell& cell = block[i];
          side_[cell.row] = which;
          le_mask_[cell.row] = mask;
          le_mask16_[cell.row] = static_cast<std::int16_t>(mask);
          const double one = cell.weight * static_cast<double>(cell.label);
          c0 += cell.weight - one;
          c1 += one;
        }
        counts[0] += c0;
        counts[1] += c1;
      } else {
        for (std::size_t i = from; i < to; ++i) {
          const Cell& cell = block[i];
          side_[cell.row] = which;
          le_mask_[cell.row] = mask;
          le_mask16_[cell.row] = static_cast<std::int16_t>(mask);
          counts[cell.label] += cell.weight;
        }
      }
    };
    run(0, first, 1, le);
    run(first, present, 2, gt);
    if (missing_le)
      run(present, node.s, 1, le);
    else
      run(present, node.s, 2, gt);
    return first + (missing_le ? node.s - present : 0);
  }

  Code stump_code(const Node& node, const Family& f, int t) {
    std::vector<double> le(K_), gt(K_);
    mark(node, f, t, le.data(), gt.data());
    return split_code(split_of(f, t), leaf_code(majority(le.data())),
                      leaf_code(majority(gt.data())));
  }

  // The best trees of depth <= 1 of the two sides of the node's marked rows (side_ 1: le,
  // 2: gt; class weights `total[h]`, `size[h]` rows), in one pass over each column.
  // A threshold between two groups of equal values that are both of one and the same class is
  // not evaluated: along such a run the two leaves' misclassified weight is a concave function
  // of the weight moved (each leaf's is sum - max, concave in its class weights), so its
  // minimum over the run is at one of the run's ends, which are evaluated; this holds with the
  // missing rows on either side too. On continuous columns it skips most thresholds.
  // `only` (optional): side h looks at column only[h] alone (-1: none, the leaf), the column
  // stump_costs_of_two_classes found its cost in, to recover the split of a new incumbent
  // without sweeping every column again.
  void best_stumps(const Node& node, const double* const total[2], const std::size_t size[2],
                   double cost[2], NumericSplit split[2], const int* only = nullptr) {
    // the class count fixed at compile time for 2 and 3 classes: the loops over classes unroll
    // and the counts stay in registers (breast cancer depth 3: 4.4 s -> 3.9 s)
    if (K_ == 2)
      best_stumps_of<2>(node, total, size, cost, split, only);
    else if (K_ == 3)
      best_stumps_of<3>(node, total, size, cost, split, only);
    else
      best_stumps_of<0>(node, total, size, cost, split, only);
  }
  template <int kClasses>
  double misclassified_of(const double* c) const {
    return odtkit::misclassified(c, kClasses > 0 ? kClasses : K_);
  }
  template <int kClasses>
  void best_stumps_of(const Node& node, const double* const total[2], const std::size_t size[2],
                      double cost[2], NumericSplit split[2], const int* only) {
    const std::size_t K = kClasses > 0 ? kClasses : static_cast<std::size_t>(K_);
    std::vector<double>& buffer = stump_buffer_;
    buffer.assign(8 * K, 0.0);
    double* le[2] = {&buffer[0], &buffer[K]};
    double* absent[2] = {&buffer[2 * K], &buffer[3 * K]};
    double* held[2] = {&buffer[4 * K], &buffer[5 * K]};
    double* gt = &buffer[6 * K];
    double* with = &buffer[7 * K];
    for (int h = 0; h < 2; ++h) {
      cost[h] = misclassified_of<kClasses>(total[h]) + Lambda_;
      split[h] = NumericSplit{-1, 0, 0};
    }
    for (std::size_t c = 0; c < D_.m; ++c) {
      const int col = static_cast<int>(c);
      if (only && col != only[0] && col != only[1]) continue;
      const Cell* block = &node.cells[c * node.s];
      const int present = node.present[c];
      std::fill(buffer.begin(), buffer.begin() + 4 * K, 0.0);
      int n_absent[2] = {0, 0};
      for (std::size_t i = present; i < node.s; ++i) {
        const int h = side_[block[i].row] - 1;
        absent[h][block[i].label] += block[i].weight;
        ++n_absent[h];
      }
      auto consider = [&](int h, int k, const double* left) {
        if (only && only[h] != col) return;
        for (std::size_t j = 0; j < K; ++j) gt[j] = total[h][j] - left[j];
        const double one = misclassified_of<kClasses>(left) + misclassified_of<kClasses>(gt) + 2 * Lambda_;
        if (one < cost[h] - tau_) cost[h] = one, split[h] = NumericSplit{col, k, 0};
        if (n_absent[h] > 0) {
          for (std::size_t j = 0; j < K; ++j)
            with[j] = left[j] + absent[h][j], gt[j] = total[h][j] - with[j];
          const double two = misclassified_of<kClasses>(with) + misclassified_of<kClasses>(gt) + 2 * Lambda_;
          if (two < cost[h] - tau_) cost[h] = two, split[h] = NumericSplit{col, k, 1};
        }
      };
      int p[2] = {0, 0}, previous[2] = {-1, -1}, held_k[2] = {-1, -1};
      int group_class[2] = {-2, -2}, before_class[2] = {-2, -2};
      auto release = [&](int h) {
        if (held_k[h] >= 0 && !(before_class[h] >= 0 && before_class[h] == group_class[h]))
          consider(h, held_k[h], held[h]);
      };
      for (int i = 0; i < present; ++i) {
        const Cell& cell = block[i];
        const int h = side_[cell.row] - 1;
        const int rk = cell.rank;
        const int label = cell.label;
        if (p[h] > 0 && rk != previous[h]) {
          release(h);
          // a loop, not std::copy: its memmove call per threshold took 20 % of the time
          for (std::size_t j = 0; j < K; ++j) held[h][j] = le[h][j];
          held_k[h] = previous[h] + (rk - 1 - previous[h]) / 2;
          before_class[h] = group_class[h];
          group_class[h] = -2;
        }
        group_class[h] = group_class[h] == -2 || group_class[h] == label ? label : -1;
        le[h][label] += cell.weight;
        ++p[h];
        previous[h] = rk;
      }
      for (int h = 0; h < 2; ++h) {
        release(h);
        if (only && only[h] != col) continue;
        if (n_absent[h] > 0 && static_cast<std::size_t>(n_absent[h]) < size[h]) {
          for (std::size_t j = 0; j < K; ++j) gt[j] = total[h][j] - absent[h][j];
          const double one = misclassified_of<kClasses>(gt) + misclassified_of<kClasses>(absent[h]) + 2 * Lambda_;
          if (one < cost[h] - tau_) cost[h] = one, split[h] = NumericSplit{col, D_.distinct[c] - 1, 0};
        }
      }
    }
  }

  // The extremes over the thresholds of the prefix difference d = c0 - c1 of each side (side_
  // 1 and 2) of the present rows of a column block, the empty and full prefixes included.
  // Both sides in one pass: the extremes are taken at every change of rank in the node's
  // order, where each side's prefix is the side's rows of smaller rank: one of its thresholds,
  // a repeat, or its empty or full prefix, so the set of values is the one of each side's own
  // changes of rank. d0, d1 and the extremes stay in registers and the side selects by a
  // product, not a branch (the former loop, with per-side arrays indexed by the side and a
  // branch on the class, chained a store and a load per row and mispredicted a branch per
  // row). Acc = int sums Cell::signed_count (whole weights, total below 2^31, so every partial
  // sum fits; 32-bit, as the sign extensions to 64 bits cost a cycle a row), double sums the
  // weights.
  template <class Acc>
  static void prefix_extremes(const Cell* block, int present, const char* side, const int* mask,
                              double low[2], double high[2]) {
    Acc d0 = 0, d1 = 0, low0 = 0, high0 = 0, low1 = 0, high1 = 0;
    int previous = -1;
    for (int i = 0; i < present; ++i) {
      const Cell& cell = block[i];
      if (cell.rank != previous) {  // every side's prefix is one of its thresholds here
        low0 = std::min(low0, d0);
        high0 = std::max(high0, d0);
        low1 = std::min(low1, d1);
        high1 = std::max(high1, d1);
        previous = cell.rank;
      }
      if constexpr (std::is_integral_v<Acc>) {
        // +count for class 0, -count for class 1, kept by the le side's all-ones mask: an
        // and, not a product (the multiply and the byte's widening were a third of the loop)
        const Acc signed_weight = cell.signed_count;
        const Acc to_le = signed_weight & mask[cell.row];
        d0 += to_le;
        d1 += signed_weight - to_le;
      } else {
        // +weight for class 0, -weight for class 1
        const Acc signed_weight = cell.weight * static_cast<double>(1 - 2 * cell.label);
        // side 1 (le) -> 1, side 2 (gt) -> 0: a product, as a comparison here is compiled to
        // a branch that is mispredicted half of the time
        const Acc to_le = signed_weight * static_cast<Acc>(2 - side[cell.row]);
        d0 += to_le;
        d1 += signed_weight - to_le;  // exactly signed_weight or 0
      }
    }
    low[0] = static_cast<double>(std::min(low0, d0));
    low[1] = static_cast<double>(std::min(low1, d1));
    high[0] = static_cast<double>(std::max(high0, d0));
    high[1] = static_cast<double>(std::max(high1, d1));
  }

  // Node's 16-bit copy (see Node) when the table allows it: built once per node that sweeps
  // thresholds, where a depth-2 node then sweeps ~100 of them (breast cancer depth 4).
  void pack(const Node& node) const {
    if (!narrow_ || !node.row16.empty() || node.s == 0) return;
    const std::size_t stride = (node.s + 7) / 8 * 8;
    node.stride16 = stride;
    node.row16.assign(D_.m * stride, 0);
    node.count16.assign(D_.m * stride, 0);
    node.sum16.assign(D_.m * stride, 0);
    node.end16.assign(D_.m * stride, 0);
    node.complete16 = true;
    for (std::size_t c = 0; c < D_.m; ++c) {
      const Cell* block = &node.cells[c * node.s];
      const std::size_t present = static_cast<std::size_t>(node.present[c]);
      node.complete16 = node.complete16 && present == node.s;
      int sum = 0;
      for (std::size_t i = 0; i < present; ++i) {
        const std::size_t at = c * stride + i;
        sum += block[i].signed_count;
        node.row16[at] = static_cast<std::uint16_t>(block[i].row);
        node.count16[at] = static_cast<std::int16_t>(block[i].signed_count);
        node.sum16[at] = static_cast<std::int16_t>(sum);
        node.end16[at] = i + 1 == present || block[i + 1].rank != block[i].rank ? -1 : 0;
      }
    }
  }

  // prefix_extremes on Node's 16-bit copy of column c: the same extremes, exactly (integer
  // sums below 2^15 in magnitude). The masks of the column's rows are gathered first, then
  // eight rows at a time: the le side's prefix sums by three shifted additions and a carry,
  // the gt side's as the column's prefix sum less the le side's, and every prefix that
  // ends a rank (else 0, the empty prefix, which is always one) into lane-wise extremes.
  // Breast cancer depth 4, lam 0.005: 165 -> 95 CPU s, the same 13.7 million thresholds.
  // `order` (optional): order16 of the split column, whose first `first` rows are the le side.
  void packed_extremes(const Node& node, std::size_t c, double low[2], double high[2],
                       const std::int16_t* order, int first) const {
    const std::size_t base = c * node.stride16;
    const std::size_t present = static_cast<std::size_t>(node.present[c]);
    const std::size_t padded = (present + 7) / 8 * 8;
    const std::int16_t* counts = &node.count16[base];
    const std::int16_t* sums = &node.sum16[base];
    const std::int16_t* ends = &node.end16[base];
    std::vector<std::int16_t>& masks = lane_buffer_;
    if (order == nullptr) {
      if (masks.size() < padded) masks.resize(padded);
      const std::uint16_t* rows = &node.row16[base];
      const std::int16_t* le_mask = le_mask16_.data();
      for (std::size_t i = 0; i < padded; ++i) masks[i] = le_mask[rows[i]];
    }
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const __m128i bar = _mm_set1_epi16(static_cast<short>(first));
    __m128i carry = zero, low0 = zero, high0 = zero, low1 = zero, high1 = zero;
    for (std::size_t i = 0; i < padded; i += 8) {
      const __m128i* at = reinterpret_cast<const __m128i*>(counts + i);
      const __m128i mask =
          order != nullptr
              ? _mm_cmpgt_epi16(bar, _mm_loadu_si128(
                                         reinterpret_cast<const __m128i*>(order + base + i)))
              : _mm_loadu_si128(reinterpret_cast<const __m128i*>(masks.data() + i));
      __m128i d0 = _mm_and_si128(_mm_loadu_si128(at), mask);
      d0 = _mm_add_epi16(d0, _mm_slli_si128(d0, 2));
      d0 = _mm_add_epi16(d0, _mm_slli_si128(d0, 4));
      d0 = _mm_add_epi16(d0, _mm_slli_si128(d0, 8));
      d0 = _mm_add_epi16(d0, carry);
      const __m128i top = _mm_shufflehi_epi16(d0, 0xFF);
      carry = _mm_unpackhi_epi64(top, top);
      const __m128i end = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ends + i));
      const __m128i d1 =
          _mm_sub_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sums + i)), d0);
      const __m128i e0 = _mm_and_si128(d0, end), e1 = _mm_and_si128(d1, end);
      low0 = _mm_min_epi16(low0, e0);
      high0 = _mm_max_epi16(high0, e0);
      low1 = _mm_min_epi16(low1, e1);
      high1 = _mm_max_epi16(high1, e1);
    }
    alignas(16) std::int16_t lanes[4][8];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes[0]), low0);
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes[1]), high0);
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes[2]), low1);
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes[3]), high1);
    int extreme[4] = {0, 0, 0, 0};
    for (int j = 0; j < 8; ++j) {
      extreme[0] = std::min<int>(extreme[0], lanes[0][j]);
      extreme[1] = std::max<int>(extreme[1], lanes[1][j]);
      extreme[2] = std::min<int>(extreme[2], lanes[2][j]);
      extreme[3] = std::max<int>(extreme[3], lanes[3][j]);
    }
#else  // not reached (kLanes16), the same extremes a row at a time
    int extreme[4] = {0, 0, 0, 0};
    int d0 = 0;
    for (std::size_t i = 0; i < present; ++i) {
      const int mask = order != nullptr ? (order[base + i] < first ? -1 : 0) : masks[i];
      d0 += counts[i] & mask;
      if (ends[i] != 0) {
        const int d1 = sums[i] - d0;
        extreme[0] = std::min(extreme[0], d0);
        extreme[1] = std::max(extreme[1], d0);
        extreme[2] = std::min(extreme[2], d1);
        extreme[3] = std::max(extreme[3], d1);
      }
    }
#endif
    low[0] = extreme[0];
    high[0] = extreme[1];
    low[1] = extreme[2];
    high[1] = extreme[3];
  }

  // Node's order16 of column c (built on first use; c has no missing row in the node).
  const std::int16_t* order_of(const Node& node, int c) const {
    if (node.order16.empty()) node.order16.resize(D_.m);
    std::vector<std::int16_t>& order = node.order16[c];
    if (order.empty()) {
      std::vector<std::int16_t>& position = position16_;
      position.resize(D_.n);
      const Cell* block = &node.cells[static_cast<std::size_t>(c) * node.s];
      for (std::size_t i = 0; i < node.s; ++i)
        position[block[i].row] = static_cast<std::int16_t>(i);
      order.assign(D_.m * node.stride16, std::numeric_limits<std::int16_t>::max());
      for (std::size_t k = 0; k < D_.m; ++k) {
        const std::uint16_t* rows = &node.row16[k * node.stride16];
        std::int16_t* target = &order[k * node.stride16];
        const std::size_t present = static_cast<std::size_t>(node.present[k]);
        for (std::size_t i = 0; i < present; ++i) target[i] = position[rows[i]];
      }
    }
    return order.data();
  }

  // Two classes: the cost of the best tree of depth <= 1 of both marked sides, from the
  // extremes of the prefix difference d = c0 - c1 along each column (docs §3.10). A prefix
  // (c0, c1) of a side with class weights (C0, C1) leaves min(c0, c1) + min(C0 - c0, C1 - c1) =
  // min(C0, C1, C1 + d, C0 - d) misclassified, so the best threshold of a column costs
  // min(C1 + min d, C0 - max d) + 2 Lambda (C0 and C1 are never below the leaf); with the
  // missing rows on the le side every prefix gains their difference. Empty and full prefixes
  // are the leaf or the missing-vs-present split, so they need no exclusion. One add and one
  // comparison per row, against the general sweep's per-threshold class-weight arithmetic.
  // Both sides in one pass over each column (prefix_extremes).
  // `column[h]`: a column whose best threshold gives cost[h] (-1: the leaf).
  // `order`, `first`: the marked split as order16 of its column and its le side's row count,
  // when known (else nullptr): the packed sweep then compares instead of gathering.
  void stump_costs_of_two_classes(const Node& node, const double* const total[2], double cost[2],
                                  int column[2], const std::int16_t* order = nullptr,
                                  int first = 0) const {
    for (int h = 0; h < 2; ++h) {
      cost[h] = std::min(total[h][0], total[h][1]) + Lambda_;
      column[h] = -1;
    }
    const char* side = side_.data();
    // A side that costs at most 2 Lambda is at its optimum: every split costs 2 Lambda plus
    // its misclassified weight, so neither its leaf (misclassifying at most Lambda) nor a
    // split without error can be beaten, and no further column can replace it (a column
    // replaces only a strictly lower cost). Such a side leaves the sweep; with both, it ends.
    bool open[2];
    for (int h = 0; h < 2; ++h) open[h] = cost[h] > 2 * Lambda_;
    for (std::size_t c = 0; c < D_.m && (open[0] || open[1]); ++c) {
      const Cell* block = &node.cells[c * node.s];
      const int present = node.present[c];
      double absent[2] = {0.0, 0.0};
      bool any_absent[2] = {false, false};
      for (std::size_t i = present; i < node.s; ++i) {
        const int h = side[block[i].row] - 1;
        absent[h] += block[i].label == 0 ? block[i].weight : -block[i].weight;
        any_absent[h] = true;
      }
      double low[2], high[2];
      if (!node.row16.empty())
        packed_extremes(node, c, low, high, order, first);
      else if (whole_)
        prefix_extremes<int>(block, present, side, le_mask_.data(), low, high);
      else
        prefix_extremes<double>(block, present, side, le_mask_.data(), low, high);
      for (int h = 0; h < 2; ++h) {
        if (!open[h]) continue;
        const double C0 = total[h][0], C1 = total[h][1];
        double best = std::min(C1 + low[h], C0 - high[h]);
        if (any_absent[h])
          best = std::min(best, std::min(C1 + low[h] + absent[h], C0 - high[h] - absent[h]));
        if (best + 2 * Lambda_ < cost[h]) cost[h] = best + 2 * Lambda_, column[h] = static_cast<int>(c);
        open[h] = cost[h] > 2 * Lambda_;
      }
    }
  }

  // The tree of `split` (or a leaf when split.column < 0) on the rows with side_ == which.
  Code stump_tree(const Node& node, char which, const double* total, const NumericSplit& split) {
    if (split.column < 0) return leaf_code(majority(total));
    std::vector<double> le(K_, 0.0), right(K_, 0.0);
    const Cell* block = &node.cells[static_cast<std::size_t>(split.column) * node.s];
    for (std::size_t i = 0; i < node.s; ++i) {
      const Cell& cell = block[i];
      if (side_[cell.row] != which) continue;
      const bool to_le = cell.rank < 0 ? split.missing_le != 0 : cell.rank <= split.rank;
      (to_le ? le : right)[cell.label] += cell.weight;
    }
    return split_code(split, leaf_code(majority(le.data())), leaf_code(majority(right.data())));
  }

  // The child sub-problem of the rows with side_ == which.
  Node child(const Node& node, char which, std::size_t size) const {
    Node out;
    out.s = size;
    out.cells.resize(size * D_.m);
    out.present.assign(D_.m, 0);
    for (std::size_t c = 0; c < D_.m; ++c) {
      const Cell* block = &node.cells[c * node.s];
      Cell* target = &out.cells[c * size];
      std::size_t j = 0;
      int present = 0;
      for (std::size_t i = 0; i < node.s; ++i) {
        if (side_[block[i].row] != which) continue;
        target[j++] = block[i];
        present += static_cast<int>(i) < node.present[c];
      }
      out.present[c] = present;
    }
    return out;
  }

  // Lower bounds on L(t), R(t) for t between the evaluated thresholds a < t < b (a = -1 or
  // b = size: none).
  static double cap(const std::vector<double>& caps, int t) {
    return caps.empty() ? 0.0 : caps[t];
  }
  double left_low(const Family& f, int t, int a, int b) const {
    double low = Lambda_;
    if (a >= 0) low = std::max(low, f.lbL[a]);
    if (use_similarity_ && !f.missing_split) {
      if (b < f.size())
        low = std::max(low, f.lbL[b] - (f.at->weight[b] - f.at->weight[t]));
      else
        low = std::max(low, f.left_at_end - (f.present_weight - f.at->weight[t]));
    }
    return low;
  }
  double right_low(const Family& f, int t, int a, int b) const {
    double low = Lambda_;
    if (b < f.size()) low = std::max(low, f.lbR[b]);
    if (use_similarity_ && !f.missing_split) {
      if (a >= 0)
        low = std::max(low, f.lbR[a] - (f.at->weight[t] - f.at->weight[a]));
      else
        low = std::max(low, f.right_at_start - f.at->weight[t]);
    }
    return low;
  }
  // A bound for every t of the interval (the left term grows with t, the right one shrinks).
  double interval_bound(const Family& f, const Interval& iv) const {
    return left_low(f, iv.lo, iv.a, iv.b) + right_low(f, iv.hi, iv.a, iv.b);
  }
  // Drop the ends of `iv` whose own bound reaches `threshold`; false when nothing is left.
  bool narrow(const Family& f, Interval& iv, double threshold) const {
    const int a = iv.a, b = iv.b;
    auto bound_at = [&](int t) {
      return std::max(left_low(f, t, a, b), cap(f.capL, t)) +
             std::max(right_low(f, t, a, b), cap(f.capR, t));
    };
    while (iv.lo <= iv.hi && bound_at(iv.lo) >= threshold) ++iv.lo;
    while (iv.hi >= iv.lo && bound_at(iv.hi) >= threshold) --iv.hi;
    // the narrowed interval keeps its neighbours a and b: its bounds stay valid
    return iv.lo <= iv.hi;
  }

  // Threshold t of family f: both children at depth - 1, pruned by `threshold`; writes
  // f.lbL[t], f.lbR[t] and improves `best`. False when the budget stopped the search.
  bool evaluate(const Node& node, Family& f, int t, int depth, double threshold, double lowL,
                double lowR, Answer& best) {
    ++evaluated_;
    // the two sides' class weights on the stack up to 8 classes (no allocation per threshold;
    // not a member buffer: deeper evaluations recurse through solve)
    double small[16];
    std::vector<double> large;
    if (K_ > 8) large.resize(2 * static_cast<std::size_t>(K_));
    double* const le = K_ > 8 ? large.data() : small;
    double* const gt = le + K_;
    const NumericSplit split = split_of(f, t);
    // a split of a column without missing rows here: its le side is a prefix of its order
    const bool ordered = K_ == 2 && !node.row16.empty() && !f.missing_split &&
                         static_cast<std::size_t>(node.present[f.column]) == node.s &&
                         node.stride16 * D_.m * D_.m <= kOrderEntries;
    const int first = ordered ? f.at->p[t] : 0;
    auto order = [&]() { return ordered ? order_of(node, f.column) : nullptr; };
    // With that order and no missing cell in the node, the stump sweep reads no row's side:
    // the rows are marked only for a new incumbent's trees or the children, and the sides'
    // class weights come from the column's prefix sums (whole weights: c0 = (weight + d) / 2
    // exactly, d = c0 - c1).
    bool marked = !(ordered && node.complete16);
    std::size_t n_le = 0;
    if (marked) {
      n_le = mark(node, f, t, le, gt);
    } else {
      const std::size_t base = static_cast<std::size_t>(f.column) * node.stride16;
      const double d = node.sum16[base + first - 1], d_all = node.sum16[base + node.s - 1];
      const double weight = f.at->weight[t], all = f.present_weight;
      le[0] = (weight + d) / 2;
      le[1] = (weight - d) / 2;
      gt[0] = (all + d_all) / 2 - le[0];
      gt[1] = (all - d_all) / 2 - le[1];
      n_le = static_cast<std::size_t>(first);
    }
    auto ensure_marked = [&]() {
      if (!marked) mark(node, f, t, le, gt);
      marked = true;
    };
    if (depth == 2) {
      const double* totals[2] = {le, gt};
      const std::size_t sizes[2] = {n_le, node.s - n_le};
      double cost[2];
      NumericSplit stumps[2];
      if (K_ == 2) {  // the costs alone, fast; the splits only for a new incumbent
        int column[2];
        stump_costs_of_two_classes(node, totals, cost, column, order(), first);
        if (cost[0] + cost[1] < best.cost - tau_) {
          ensure_marked();
          best_stumps(node, totals, sizes, cost, stumps, column);
        }
      } else {
        best_stumps(node, totals, sizes, cost, stumps);
      }
      f.lbL[t] = cost[0];
      f.lbR[t] = cost[1];
      if (cost[0] + cost[1] < best.cost - tau_) {
        best.cost = cost[0] + cost[1];
        best.tree = split_code(split, stump_tree(node, 1, le, stumps[0]),
                               stump_tree(node, 2, gt, stumps[1]));
      }
      return true;
    }
    if (Lambda_ > 0.0) {
      // lam > 0: each child costs at least min(its best tree of depth <= 1, 3 Lambda) (any
      // other tree has three leaves or more), one stump pass against two recursive searches
      const double* totals[2] = {le, gt};
      const std::size_t sizes[2] = {n_le, node.s - n_le};
      double cost[2];
      NumericSplit unused[2];
      int column[2];
      if (K_ == 2)
        stump_costs_of_two_classes(node, totals, cost, column, order(), first);
      else
        best_stumps(node, totals, sizes, cost, unused);
      lowL = std::max(lowL, std::min(cost[0], 3 * Lambda_));
      lowR = std::max(lowR, std::min(cost[1], 3 * Lambda_));
      f.lbL[t] = lowL;
      f.lbR[t] = lowR;
      if (lowL + lowR >= threshold) return true;
    }
    // the right child's rows are needed after the left one's search changed side_
    ensure_marked();
    Node left_node = child(node, 1, n_le), right_node = child(node, 2, node.s - n_le);
    // exact children: both, for the exact cost of t (kExactChildren); deeper ones under the
    // budget, the second only if the first leaves room
    const bool exact = depth - 1 <= kExactChildren;
    Answer left = solve(left_node, depth - 1, exact ? kInf : threshold - lowR);
    f.lbL[t] = std::max(lowL, left.lb);
    f.lbR[t] = lowR;
    if (budget_.stopped()) return false;
    if (!exact && left.lb + lowR >= threshold) return true;
    Answer right = solve(right_node, depth - 1, exact ? kInf : threshold - left.lb);
    f.lbR[t] = std::max(lowR, right.lb);
    if (budget_.stopped()) return false;
    const double total = left.cost + right.cost;
    if (left.cost <= left.lb + tau_ && right.cost <= right.lb + tau_ && total < best.cost - tau_) {
      best.cost = total;
      best.tree = split_code(split, left.tree, right.tree);
    }
    return true;
  }

  std::vector<std::uint64_t> memo_key(const Node& node, int depth) const {
    std::vector<std::uint64_t> key((D_.n + 63) / 64 + 1, 0);
    for (std::size_t i = 0; i < node.s; ++i) {
      const int r = node.cells[i].row;
      key[r >> 6] |= 1ULL << (r & 63);
    }
    key.back() = static_cast<std::uint64_t>(depth);
    return key;
  }

  void store(std::vector<std::uint64_t> key, const Answer& answer) {
    auto [it, fresh] = memo_.try_emplace(std::move(key));
    MemoEntry& e = it->second;
    if (fresh) memo_bytes_ += it->first.size() * 8 + 96;
    memo_bytes_ += (answer.tree.size() - e.tree.size()) * sizeof(Item);
    e.lb = std::max(e.lb, answer.lb);
    if (answer.cost <= e.cost) e.cost = answer.cost, e.tree = answer.tree;
  }

  void record(double incumbent, double bound) {
    incumbent = std::min(incumbent, root_incumbent_);
    bound = std::min(std::max(bound, floor_), incumbent);
    if (out_.changed(incumbent / D_.total, bound / D_.total))
      out_.record(budget_.elapsed(), incumbent / D_.total, bound / D_.total);
  }

  const Data& D_;
  int K_;
  double Lambda_, tau_;
  Budget& budget_;
  SearchOutput& out_;
  std::vector<char> side_;
  std::vector<int> le_mask_;  // per row: -1 when side_ is 1 (le), else 0 (the two-class sweep keeps a count by an and)
  std::vector<std::int16_t> le_mask16_;  // the same in 16 bits, for the packed sweep
  mutable std::vector<std::int16_t> lane_buffer_;  // the packed sweep's masks of one column
  mutable std::vector<std::int16_t> position16_;  // order_of's row positions
  bool narrow_ = false;  // Node's 16-bit copy is used (two classes, whole weights, total < 2^15)
  std::vector<double> group_weight_;
  std::vector<int> touched_;
  mutable std::vector<double> scratch_;
  std::vector<double> stump_buffer_;
  bool use_similarity_;
  bool whole_ = false;  // two classes, whole weights: Cell::signed_count is set
  std::unordered_map<std::vector<std::uint64_t>, MemoEntry, KeyHash> memo_;
  std::size_t memo_bytes_ = 0;
  long long evaluated_ = 0;
  double root_incumbent_ = kInf;
  double floor_ = 0.0;  // the driver's bound on the root's optimum (count units)

 public:
  std::size_t memo_size() const { return memo_.size(); }
  // The driver's incumbent (count units): the root's trace rows report it when it is better.
  void set_incumbent(double cost) { root_incumbent_ = cost; }
  // The driver's bound on the root's optimum: the root's trace rows never report less.
  void set_floor(double bound) { floor_ = bound; }
  long long evaluated() const { return evaluated_; }
};

// One past the end of the subtree that starts at code[i]; throws on a truncated code.
std::size_t subtree_end(const Code& code, std::size_t i) {
  for (long need = 1; need > 0; ++i) {
    if (i >= code.size()) throw std::invalid_argument("initial tree is truncated");
    need += code[i].column >= 0 ? 1 : -1;
  }
  return i;
}

// Objective (count units) of a tree in the search's encoding over every row; throws
// std::invalid_argument on a malformed code (the start comes from Python).
double evaluate_code(const Data& data, const Code& code, double Lambda, int max_depth) {
  if (code.empty() || subtree_end(code, 0) != code.size())
    throw std::invalid_argument("initial tree is truncated or has trailing entries");
  std::vector<std::size_t> gt_start(code.size(), 0);
  int leaves = 0;
  std::vector<std::pair<std::size_t, int>> todo{{0, 0}};  // (index, depth)
  while (!todo.empty()) {
    auto [i, d] = todo.back();
    todo.pop_back();
    const Item& s = code[i];
    if (s.column < 0) {
      ++leaves;
      if (s.value < 0 || s.value >= data.K)
        throw std::invalid_argument("initial tree has a label out of range");
      continue;
    }
    if (max_depth >= 0 && d + 1 > max_depth)
      throw std::invalid_argument("initial tree is deeper than max_depth");
    if (static_cast<std::size_t>(s.column) >= data.m)
      throw std::invalid_argument("initial tree splits on a column out of range");
    const int D = data.distinct[s.column];
    const int top = data.missing[s.column] ? D - 1 : D - 2;
    if (s.rank < 0 || s.rank > top)
      throw std::invalid_argument("initial tree has a threshold rank out of range");
    gt_start[i] = subtree_end(code, i + 1);
    todo.push_back({i + 1, d + 1});
    todo.push_back({gt_start[i], d + 1});
  }
  double wrong = 0.0;
  for (std::size_t r = 0; r < data.n; ++r) {
    std::size_t i = 0;
    while (code[i].column >= 0) {
      const Item& s = code[i];
      const int rk = data.rank_of(s.column, static_cast<int>(r));
      const bool missing_split = data.missing[s.column] && s.rank == data.distinct[s.column] - 1;
      const bool to_le = rk < 0 ? (!missing_split && s.value != 0) : rk <= s.rank;
      i = to_le ? i + 1 : gt_start[i];
    }
    if (code[i].value != data.y[r]) wrong += data.w[r];
  }
  return wrong + Lambda * leaves;
}

}  // namespace

SearchOutput search_numeric(const NumericTable& table, const SearchConfig& config,
                            const std::vector<NumericSplit>& initial_splits,
                            std::vector<NumericSplit>& splits_out,
                            std::function<bool()> interrupted) {
  if (config.max_depth < 0)
    throw std::invalid_argument("the exact numeric search needs a max_depth >= 0");
  const Data data(table);
  Budget budget(config, std::move(interrupted));
  SearchOutput out;
  out.progress = config.progress;
  Solver solver(data, config, budget, out);
  const double Lambda = solver.Lambda();
  const double tau = count_tolerance(data.total);

  Code start;
  double start_cost = kInf;
  if (!config.initial_tree.empty()) {
    for (int v : config.initial_tree) {
      if (v >= 0) {
        if (static_cast<std::size_t>(v) >= initial_splits.size())
          throw std::invalid_argument("initial tree refers to a split it does not list");
        const NumericSplit& s = initial_splits[v];
        start.push_back(Item{s.column, s.rank, s.missing_le ? 1 : 0});
      } else {
        start.push_back(Item{-1, 0, -(v + 1)});
      }
    }
    start_cost = evaluate_code(data, start, Lambda, config.max_depth);
  }
  const double user = std::isfinite(config.upper_bound)
                          ? user_bound_threshold(config.upper_bound, data.total)
                          : kInf;

  // the incumbent: the start, else the majority leaf, improved by every completed depth
  Code incumbent = start;
  double incumbent_cost = start_cost;
  {
    std::vector<double> counts(data.K, 0.0);
    for (std::size_t r = 0; r < data.n; ++r) counts[data.y[r]] += data.w[r];
    const int label = static_cast<int>(std::max_element(counts.begin(), counts.end()) -
                                       counts.begin());
    const Code leaf = leaf_code(label);
    const double leaf_cost = evaluate_code(data, leaf, Lambda, -1);
    if (leaf_cost < incumbent_cost - tau) incumbent = leaf, incumbent_cost = leaf_cost;
  }
  double lower = 0.0;  // a bound on the optimum at the requested depth (count units)
  auto offer = [&](const Answer& answer) {
    if (!answer.tree.empty() && answer.cost < incumbent_cost - tau) {
      incumbent = answer.tree;
      incumbent_cost = answer.cost;
      solver.set_incumbent(incumbent_cost);
      out.record(budget.elapsed(), incumbent_cost / data.total,
                 std::min(lower, incumbent_cost) / data.total);
    }
  };
  solver.set_incumbent(incumbent_cost);
  out.record(budget.elapsed(), incumbent_cost / data.total, 0.0);
  const int depth = config.max_depth;
  int certified = 0;  // the deepest k whose optimum the incumbent is now no worse than
  catch_out_of_memory(budget, [&] {
    Node root = solver.root();
    if (data.m == 0) return;  // no split: the leaf is optimal
    // A tree of at most k + 1 leaves has depth <= k, and every tree misclassifies at least the
    // equivalent-points minority eq, so with OPT_k >= b_k: OPT_depth >= min(b_k, eq + (k+2) Lambda)
    // for every k < depth (docs §3.10, "Driver"); with lam = 0 that is eq alone.
    const double eq = solver.equivalent(root);
    auto raise = [&](int k, double b_k) {
      const double b = k >= depth ? b_k : std::min(b_k, eq + (k + 2) * Lambda);
      if (b <= lower) return;
      lower = b;
      solver.set_floor(lower);
      out.record(budget.elapsed(), incumbent_cost / data.total,
                 std::min(lower, incumbent_cost) / data.total);
    };
    {
      std::vector<double> counts(data.K, 0.0);
      for (std::size_t r = 0; r < data.n; ++r) counts[data.y[r]] += data.w[r];
      raise(0, misclassified(counts.data(), data.K) + Lambda);
    }
    // Before anything can stop the search (no limit is consulted; O(depth x columns x rows)):
    // the greedy tree and the depth-1 optimum, so a stopped search is never worse than either
    // and its bound never below the root's.
    offer(solver.greedy(root, depth));
    if (depth == 0) return;
    const Answer stumps = solver.stump_optimum(root);
    offer(stumps);
    raise(1, stumps.cost);
    certified = 1;
    if (depth == 1) return;  // the stump optimum is the answer
    // Then the shallower optima, each certified before the next starts and sharing the memo:
    // incumbents for the anytime answer and bounds through `raise`. With lam = 0 only depth 2
    // (milliseconds): deeper passes cost more than their incumbent and bounds save (breast
    // cancer, depth 4: 13.3 s with a depth-3 pass, 7.1 s without); with lam > 0 every one, so
    // a stopped search is never worse than the deepest one certified (breast cancer depth 4,
    // lam 0.005: 0.0514 at 120 s, then 0.0496), and the certified ones come sooner (digits
    // 3-vs-8 depth 4: 13.5 s -> 12.0 s). A pass cut short still offers its best tree and bound.
    const int deepest = config.lam > 0.0 ? depth : std::min(depth, 3);
    for (int d = 2; d < deepest && !budget.stopped(); ++d) {
      const Answer answer = solver.solve(root, d, kInf);
      offer(answer);
      raise(d, answer.lb);
      if (!budget.stopped()) certified = d;
    }
    if (budget.stopped()) return;
    Answer answer = solver.solve(root, depth, std::min(incumbent_cost, user), true);
    offer(answer);
    raise(depth, answer.lb);
    if (!budget.stopped() && user < incumbent_cost - tau && answer.lb >= user) {
      // no tree reaches the caller's bound, so it was not attained: search without it
      out.stats["upper_bound_invalid"] = 1.0;
      answer = solver.solve(root, depth, incumbent_cost, true);
      offer(answer);
      raise(depth, answer.lb);
    }
  });
  Answer best{std::min(lower, incumbent_cost), incumbent_cost, incumbent};
  if (budget.status() == SearchStatus::optimal) best.lb = best.cost;
  const double lower_final = best.lb;

  splits_out.clear();
  for (const Item& item : best.tree) {
    if (item.column < 0) {
      out.tree.push_back(-(item.value + 1));
    } else {
      out.tree.push_back(static_cast<int>(splits_out.size()));
      splits_out.push_back(NumericSplit{item.column, item.rank, item.value});
    }
  }
  out.objective = best.cost / data.total;
  out.lower_bound = lower_final / data.total;
  out.status = budget.status();
  out.n_explored = budget.nodes();
  out.peak_memory_mb = budget.peak_memory_mb();
  out.stats["memo_entries"] = static_cast<double>(solver.memo_size());
  out.stats["subproblems"] = static_cast<double>(budget.nodes());
  out.stats["thresholds_evaluated"] = static_cast<double>(solver.evaluated());
  out.stats["certified_depth"] =
      static_cast<double>(out.status == SearchStatus::optimal ? depth : certified);
  out.record(budget.elapsed(), out.objective, out.lower_bound);
  return out;
}

}  // namespace odtkit

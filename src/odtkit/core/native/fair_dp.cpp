// Fairness-constrained DP over Pareto fronts (fair_dp.hpp).
//
// Units. Costs are count units (misclassified weight + Lambda * leaves, Lambda = lam * N),
// compared with count_tolerance (tau). A disparity d is a vector of m rate differences, one per
// constrained pair; a tree is fair iff |d_j| <= delta + kFeasTol for all j (the oracle's rule).
//
// Points. Rows with identical features always share a leaf and disparity is linear, so each
// point (equivalence class of Problem) carries the SUM of its rows' coefficient vectors, c_u.
// A leaf predicting the positive class on support t adds C(t) = sum_{u in t} c_u to d; any
// other leaf adds nothing, so the only useful labels of a leaf are "positive" and "the best
// non-positive class". Per column, when every coefficient is a whole multiple of one number
// (always for unit weights: +1/|G| and -1/|G'|), C(t) comes from exact bit-plane popcounts of
// integer counts; otherwise from a plain sum over the points of t.
//
// Fronts. front(t, k) holds, for every distinct disparity vector d reachable by a tree of depth
// <= k on t, the cheapest such tree (ties: fewer leaves): entries (cost, leaves, d, how to
// rebuild). Equality of d is up to 2^-40 (keys are d rounded to that grid); sums are exact on
// the integer path. front(t, k) = leaves(t) U_f front(t & ~x_f, k-1) (+) front(t & x_f, k-1),
// where (+) adds costs and disparities pairwise.
//
// Pruning, all sound (an entry is dropped only if no completion of it is a fair tree that beats
// the incumbent by more than tau):
//   window       d_j of an entry on t must lie in [-delta' - P_j(rest), delta' - N_j(rest)], P and
//                N the positive and negative parts of the c_u outside t: the rest of the tree
//                can move d_j at most that far. Context-free, so memoised fronts stay valid.
//   budget       cost + lower bound of the sibling < incumbent. The sibling's bound is its
//                unconstrained optimum at remaining depth 2 or 3 (depth-two solver or pair
//                tables, cached by support), a memoised front's minimum, or min(leaf,
//                eq + 2 Lambda). Fronts computed under a budget are memoised with it and
//                recomputed only for a larger one. When every cost is an integer (integral class
//                weights, integral Lambda: lam = 0 on unweighted data), a better tree costs at
//                most incumbent - 1, and that is the threshold (target()).
//   lagrangian   (one constrained pair) for any mu, every tree on the sibling r has
//                cost >= L(r, mu) - mu d, L the minimum of cost + mu d over r's trees. With
//                |d_t + d_r| <= delta' this gives  cost_t + mu d_t < UB - L(r, mu) + |mu| delta'
//                for every useful entry of t: a few such cuts (mu chosen by a cutting-plane
//                search on the root split's concave dual function) prune most of a front, and a
//                root split whose dual bound reaches the incumbent is skipped entirely. L is
//                exact for root children of remaining depth 2 (their pair table) and 3 (the
//                pair tables of their own children; their fronts are then merged from depth-2
//                fronts built under the cuts, kept until the root split is done).
//   shortcut     the unconstrained optimum (search_dp) is computed first; if it is fair it is the
//                answer, and its lower bound is always a valid bound for the fair problem.
// Depth-2 fronts come from a pair table (class weights and disparities of every cell
// x_f = a, x_g = b of the support), not from recursion. The root first bounds every split by
// its children's unconstrained optima (pass 1: the depth-two solver's incremental counts on
// sparse rows, else pair tables kept for pass 2 under a memory cap), then treats the splits in
// increasing bound order (pass 2) and combines its two children's fronts by a range-minimum
// query over the child sorted by disparity instead of enumerating pairs. Iterative deepening
// over depths 1..max_depth gives fair incumbents early. Anytime: on a stop the answer is the
// best fair tree so far with the larger of the unconstrained lower bound and, when the last
// depth was being solved, min(incumbent, bounds of the root splits not yet done).
#include "fair_dp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "depth2.hpp"
#include "dp.hpp"
#include "search_common.hpp"

namespace odtkit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kFeasTol = 1e-9;              // fair iff |d_j| <= delta + kFeasTol
constexpr double kKeyScale = 1099511627776.0;  // 2^40: disparities closer than 2^-40 are equal
constexpr int kMaxFeatures = 65535;            // features are stored in 16 bits of an entry
constexpr int kMaxCuts = 4;

// ------------------------------------------------------------------------ entry encoding
// The top two bits of `info` are the kind.
//   leaf     bit 16: predicts the positive class (else the best other class of its support)
//   stump    bit 20 set, bits 0-15 feature g, bit 16 / 17: left (x_g = 0) / right positive
//   pattern  a depth-2 tree: bits 42-57 root feature f, bits 21-41 the left child's descriptor,
//            bits 0-20 the right child's, a descriptor being the low 21 bits of a leaf or stump
//   split    bits 0-15 feature f; the children are found in the memo by their disparities
//            (dl: the left child's d; the right one's is d - dl)
enum Kind : std::uint64_t { kLeaf = 0, kStump = 1, kPattern = 2, kSplit = 3 };
constexpr std::uint64_t kDescMask = (std::uint64_t{1} << 21) - 1;
inline Kind kind_of(std::uint64_t info) { return static_cast<Kind>(info >> 62); }
inline std::uint64_t leaf_info(bool positive) {
  return positive ? (std::uint64_t{1} << 16) : std::uint64_t{0};
}
inline std::uint64_t stump_info(int g, bool left_pos, bool right_pos) {
  return (std::uint64_t{kStump} << 62) | (std::uint64_t{1} << 20) |
         static_cast<std::uint64_t>(g) | (std::uint64_t{left_pos} << 16) |
         (std::uint64_t{right_pos} << 17);
}
inline std::uint64_t pattern_info(int f, std::uint64_t left, std::uint64_t right) {
  return (std::uint64_t{kPattern} << 62) | (static_cast<std::uint64_t>(f) << 42) |
         ((left & kDescMask) << 21) | (right & kDescMask);
}
inline std::uint64_t split_info(int f) {
  return (std::uint64_t{kSplit} << 62) | static_cast<std::uint64_t>(f);
}

inline std::uint64_t mix64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// ------------------------------------------------------------------------------- fronts
// Entries sorted by (cost, leaves). d and dl hold m values per entry.
struct Front {
  std::vector<double> cost;
  std::vector<std::uint32_t> leaves;
  std::vector<std::uint64_t> info;
  std::vector<double> d, dl;

  std::size_t size() const { return cost.size(); }
  bool empty() const { return cost.empty(); }
  double min_cost() const { return cost.empty() ? kInf : cost.front(); }
  std::size_t bytes() const {
    return sizeof(Front) + cost.capacity() * sizeof(double) +
           leaves.capacity() * sizeof(std::uint32_t) + info.capacity() * sizeof(std::uint64_t) +
           (d.capacity() + dl.capacity()) * sizeof(double);
  }
};

// Collects entries, keeping the cheapest per disparity key (open addressing with generation
// stamps, so clearing is O(1)), and emits them sorted by cost.
class FrontBuilder {
 public:
  FrontBuilder(std::size_t m, double tau) : m_(m), tau_(tau), q_(m), table_(64, 0), mask_(63) {}

  void clear() {
    if (++stamp_ == 0xffffffffu) {
      std::fill(table_.begin(), table_.end(), 0);
      stamp_ = 1;
    }
    n_ = 0;
    cost_.clear();
    leaves_.clear();
    info_.clear();
    d_.clear();
    dl_.clear();
    key_.clear();
  }
  std::size_t size() const { return n_; }

  // dl may be null (stored as zeros).
  void add(double cost, std::uint32_t leaves, std::uint64_t info, const double* d,
           const double* dl) {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (std::size_t j = 0; j < m_; ++j) {
      q_[j] = key_of(d[j]);
      h = mix64(h ^ static_cast<std::uint64_t>(q_[j]));
    }
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const std::uint64_t slot = table_[i];
      if ((slot >> 32) != stamp_) {
        table_[i] = (static_cast<std::uint64_t>(stamp_) << 32) | (n_ + 1);
        cost_.push_back(cost);
        leaves_.push_back(leaves);
        info_.push_back(info);
        d_.insert(d_.end(), d, d + m_);
        if (dl) {
          dl_.insert(dl_.end(), dl, dl + m_);
        } else {
          dl_.insert(dl_.end(), m_, 0.0);
        }
        key_.insert(key_.end(), q_.begin(), q_.end());
        ++n_;
        if (2 * n_ > table_.size()) grow();
        return;
      }
      const std::size_t idx = static_cast<std::size_t>(slot & 0xffffffffu) - 1;
      if (!same_key(idx)) continue;
      if (cost < cost_[idx] - tau_ || (cost <= cost_[idx] + tau_ && leaves < leaves_[idx])) {
        cost_[idx] = cost;
        leaves_[idx] = leaves;
        info_[idx] = info;
        std::copy(d, d + m_, d_.begin() + static_cast<std::ptrdiff_t>(idx * m_));
        if (dl) {
          std::copy(dl, dl + m_, dl_.begin() + static_cast<std::ptrdiff_t>(idx * m_));
        } else {
          std::fill_n(dl_.begin() + static_cast<std::ptrdiff_t>(idx * m_), m_, 0.0);
        }
      }
      return;
    }
  }

  void finish(Front& out) {
    order_.resize(n_);
    std::iota(order_.begin(), order_.end(), 0u);
    std::sort(order_.begin(), order_.end(), [this](std::uint32_t a, std::uint32_t b) {
      return cost_[a] < cost_[b] || (cost_[a] == cost_[b] && leaves_[a] < leaves_[b]);
    });
    out.cost.resize(n_);
    out.leaves.resize(n_);
    out.info.resize(n_);
    out.d.resize(n_ * m_);
    out.dl.resize(n_ * m_);
    for (std::size_t r = 0; r < n_; ++r) {
      const std::size_t i = order_[r];
      out.cost[r] = cost_[i];
      out.leaves[r] = leaves_[i];
      out.info[r] = info_[i];
      std::copy_n(&d_[i * m_], m_, &out.d[r * m_]);
      std::copy_n(&dl_[i * m_], m_, &out.dl[r * m_]);
    }
  }

  // d rounded to the 2^-40 grid (any fixed rounding rule would do: keys only need to agree)
  static std::int64_t key_of(double d) {
    const double x = d * kKeyScale;
    return static_cast<std::int64_t>(x >= 0 ? x + 0.5 : x - 0.5);
  }

  std::size_t bytes() const {
    return table_.capacity() * sizeof(std::uint64_t) +
           (cost_.capacity() + d_.capacity() + dl_.capacity()) * sizeof(double) +
           key_.capacity() * sizeof(std::int64_t) + info_.capacity() * sizeof(std::uint64_t) +
           (leaves_.capacity() + order_.capacity()) * sizeof(std::uint32_t);
  }

 private:
  void grow() {
    table_.assign(table_.size() * 2, 0);
    mask_ = table_.size() - 1;
    for (std::size_t idx = 0; idx < n_; ++idx) {
      std::uint64_t h = 0x9e3779b97f4a7c15ULL;
      for (std::size_t j = 0; j < m_; ++j)
        h = mix64(h ^ static_cast<std::uint64_t>(key_[idx * m_ + j]));
      std::size_t i = h & mask_;
      while ((table_[i] >> 32) == stamp_) i = (i + 1) & mask_;
      table_[i] = (static_cast<std::uint64_t>(stamp_) << 32) | (idx + 1);
    }
  }

  bool same_key(std::size_t idx) const {
    const std::int64_t* k = &key_[idx * m_];
    if (m_ == 1) return k[0] == q_[0];
    for (std::size_t j = 0; j < m_; ++j)
      if (k[j] != q_[j]) return false;
    return true;
  }

  std::size_t m_;
  double tau_;
  std::vector<std::int64_t> q_;
  std::vector<std::uint64_t> table_;
  std::size_t mask_;
  std::uint32_t stamp_ = 1;
  std::size_t n_ = 0;
  std::vector<double> cost_, d_, dl_;
  std::vector<std::uint32_t> leaves_, order_;
  std::vector<std::uint64_t> info_;
  std::vector<std::int64_t> key_;
};

// ------------------------------------------------------------------ disparity coefficients
// The largest alpha among min/k (k = 1..16) of which every coefficient of the given sign in
// column j is a whole multiple (to 1e-11 relative); 1 when the column has no such coefficient,
// 0 when no alpha fits.
double integer_scale(const double* coef, std::size_t n, std::size_t m, std::size_t j,
                     double sign) {
  double lowest = kInf;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = sign * coef[i * m + j];
    if (v > 0) lowest = std::min(lowest, v);
  }
  if (!std::isfinite(lowest)) return 1.0;
  for (int k = 1; k <= 16; ++k) {
    const double alpha = lowest / k;
    bool ok = true;
    for (std::size_t i = 0; i < n && ok; ++i) {
      const double v = sign * coef[i * m + j];
      if (v <= 0) continue;
      const double r = v / alpha;
      ok = r < 1073741824.0 && std::abs(r - std::round(r)) <= 1e-11 * std::max(1.0, r);
    }
    if (ok) return alpha;
  }
  return 0.0;
}

class Coefficients {
 public:
  Coefficients(const Problem& P, const double* coef, std::size_t m) : m_(m) {
    const std::size_t U = P.n_points(), n = P.n_samples();
    const auto& sp = P.sample_point();
    const PopcountMode mode = P.popcount_mode();
    point_.assign(U * m, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j)
        point_[static_cast<std::size_t>(sp[i]) * m + j] += coef[i * m + j];
    cols_.resize(m);
    up_total_.assign(m, 0.0);
    down_total_.assign(m, 0.0);
    std::vector<double> a(U), b(U);
    for (std::size_t j = 0; j < m; ++j) {
      Column& c = cols_[j];
      const double alpha = integer_scale(coef, n, m, j, 1.0);
      const double beta = integer_scale(coef, n, m, j, -1.0);
      if (alpha > 0 && beta > 0) {
        std::fill(a.begin(), a.end(), 0.0);
        std::fill(b.begin(), b.end(), 0.0);
        for (std::size_t i = 0; i < n; ++i) {
          const double v = coef[i * m + j];
          const std::size_t u = static_cast<std::size_t>(sp[i]);
          if (v > 0) a[u] += std::round(v / alpha);
          if (v < 0) b[u] += std::round(-v / beta);
        }
        c.pos = PointSum(a, U, mode);
        c.neg = PointSum(b, U, mode);
        c.integral = c.pos.uses_planes() && c.neg.uses_planes();
        c.alpha = alpha;
        c.beta = beta;
      }
      for (std::size_t u = 0; u < U; ++u) a[u] = point_[u * m + j];
      if (!c.integral) c.value = PointSum(a, U, mode);
      for (std::size_t u = 0; u < U; ++u) {
        const double v = point_[u * m + j];
        a[u] = v > 0 ? v : 0.0;
        b[u] = v < 0 ? v : 0.0;
        up_total_[j] += a[u];
        down_total_[j] += b[u];
      }
      c.up = PointSum(a, U, mode);
      c.down = PointSum(b, U, mode);
      integral_columns_ += c.integral ? 1 : 0;
    }
  }

  std::size_t m() const { return m_; }
  int integral_columns() const { return integral_columns_; }
  const std::vector<double>& point() const { return point_; }
  double up_total(std::size_t j) const { return up_total_[j]; }
  double down_total(std::size_t j) const { return down_total_[j]; }

  // C(s & mask) (mask may be null) into out[0..m)
  void sum(const std::uint64_t* s, const std::uint64_t* mask, double* out) const {
    for (std::size_t j = 0; j < m_; ++j) {
      const Column& c = cols_[j];
      if (c.integral) {
        const double p = mask ? c.pos.sum_and(s, mask) : c.pos.sum(s);
        const double q = mask ? c.neg.sum_and(s, mask) : c.neg.sum(s);
        out[j] = c.alpha * p - c.beta * q;
      } else {
        out[j] = mask ? c.value.sum_and(s, mask) : c.value.sum(s);
      }
    }
  }
  // positive and negative parts of the point coefficients over s
  void parts(const std::uint64_t* s, double* up, double* down) const {
    for (std::size_t j = 0; j < m_; ++j) {
      up[j] = cols_[j].up.sum(s);
      down[j] = cols_[j].down.sum(s);
    }
  }
  std::size_t bytes() const { return point_.capacity() * sizeof(double) * 6; }
  // popcounts per word of one C(s & mask) (a column on the double path visits every point: 64)
  double word_cost() const {
    double total = 0.0;
    for (const Column& c : cols_)
      total += c.integral ? static_cast<double>(c.pos.n_planes() + c.neg.n_planes()) : 64.0;
    return total;
  }

 private:
  struct Column {
    bool integral = false;
    double alpha = 1.0, beta = 1.0;
    PointSum pos, neg, value, up, down;
  };
  std::size_t m_;
  std::vector<double> point_;
  std::vector<Column> cols_;
  std::vector<double> up_total_, down_total_;
  int integral_columns_ = 0;
};

// ------------------------------------------------------------------------- pair tables
// Statistics of a cell: [w, cw(K), d(m)] (S2 values); the support itself and its single cells
// also carry [up(m), down(m)] (S1 values), the parts of the coefficients for the window.
struct PairTable {
  std::vector<double> total, single, pair;
  int M = 0;
  std::size_t S1 = 0, S2 = 0;
  const double* single_at(int g) const { return &single[static_cast<std::size_t>(g) * S1]; }
  const double* pair_at(int f, int g) const {
    const int lo = std::min(f, g), hi = std::max(f, g);
    return &pair[(static_cast<std::size_t>(lo) * M + hi) * S2];
  }
  std::size_t bytes() const {
    return (total.capacity() + single.capacity() + pair.capacity()) * sizeof(double);
  }
};

struct Cuts {
  int n = 1;
  double mu[kMaxCuts] = {0.0, 0.0, 0.0, 0.0};  // mu[0] = 0: the budget
  double T[kMaxCuts] = {kInf, kInf, kInf, kInf};
};

// A copy of one front entry (the root keeps its choice while fronts come and go).
struct EntryCopy {
  double cost = kInf;
  std::uint32_t leaves = 0;
  std::uint64_t info = 0;
  std::vector<double> d, dl;
};

EntryCopy copy_entry(const Front& F, std::size_t i, std::size_t m) {
  EntryCopy e;
  e.cost = F.cost[i];
  e.leaves = F.leaves[i];
  e.info = F.info[i];
  e.d.assign(F.d.begin() + static_cast<std::ptrdiff_t>(i * m),
             F.d.begin() + static_cast<std::ptrdiff_t>((i + 1) * m));
  e.dl.assign(F.dl.begin() + static_cast<std::ptrdiff_t>(i * m),
              F.dl.begin() + static_cast<std::ptrdiff_t>((i + 1) * m));
  return e;
}

struct MemoKey {
  std::vector<std::uint64_t> words;
  int depth = 0;
  bool operator==(const MemoKey& o) const { return depth == o.depth && words == o.words; }
};
struct MemoHash {
  std::size_t operator()(const MemoKey& k) const {
    return static_cast<std::size_t>(
        words::hash(k.words.data(), k.words.size(), static_cast<std::uint64_t>(k.depth)));
  }
};
struct MemoSlot {
  std::shared_ptr<const Front> front;
  double budget = 0.0;  // entries with cost < budget - tau are all there
};

struct Switches {
  bool window = true, budget = true, lagrangian = true, shortcut = true;
};

// ------------------------------------------------------------------------------ solver
class FairSolver {
 public:
  FairSolver(const Problem& P, const Coefficients& C, const FairSpec& spec,
             const SearchConfig& config, const Switches& sw, Budget& budget)
      : P_(P),
        C_(C),
        budget_(budget),
        sw_(sw),
        K_(P.n_classes()),
        M_(static_cast<int>(P.n_features())),
        m_(C.m()),
        W_(P.n_words()),
        kp_(spec.positive_code),
        delta_(spec.delta + kFeasTol),
        Lambda_(config.lam * P.total_weight()),
        tau_(count_tolerance(P.total_weight())),
        zero_(zero_weight(P.total_weight())),
        memory_limit_(config.memory_limit_mb > 0 ? config.memory_limit_mb * 1048576.0 : 0.0),
        S2_(1 + static_cast<std::size_t>(K_) + m_),
        S1_(S2_ + 2 * m_),
        zeros_(m_, 0.0) {
    scratch_key_.words.resize(W_);
    // the root's pair-table cache: a quarter of the memory limit, at most 256 MB
    const double cap = 256.0 * 1048576.0;
    table_cache_cap_ =
        static_cast<std::size_t>(memory_limit_ > 0 ? std::min(cap, memory_limit_ / 4) : cap);
    // Pass 1 of the root needs the unconstrained depth-2 optimum of every child. The
    // depth-two solver's pair counts cost ~sum_u ones(u)^2 / 2 additions per child (less on
    // similar siblings); a pair table ~M^2/2 * W * (class + coefficient planes) popcount words,
    // but pass 2 reuses it. Measured on the STreeD sets, the solver wins up to about twice the
    // table's count (german-credit), tables win clearly on dense rows (communities: 7x).
    double pairs = 0.0;
    std::vector<int> ones(P.n_points(), 0);
    for (int f = 0; f < M_; ++f) {
      const Bitset& x = P.feature(static_cast<std::size_t>(f));
      for (std::size_t u = 0; u < P.n_points(); ++u) ones[u] += x.get(u);
    }
    for (int o : ones) pairs += 0.5 * o * o;
    const double table = 0.5 * M_ * M_ * static_cast<double>(W_) *
                         (static_cast<double>(P.n_class_planes()) + C.word_cost());
    // the depth-two solver's tables are allocated up front: as in the dp, at most half the limit
    pass1_depth2_ = pairs <= 2.0 * table &&
                    (!(memory_limit_ > 0) ||
                     static_cast<double>(Depth2Solver::upfront_bytes(P)) <= 0.5 * memory_limit_);
    integral_costs_ = P.integral() && Lambda_ == std::floor(Lambda_) && Lambda_ < 1e12 &&
                      P.total_weight() < 1e12;
    if (pass1_depth2_) depth2_ = std::make_unique<Depth2Solver>(P);
  }

  // Fair incumbent (count units) and its tree; improved() is called on each improvement.
  double incumbent = kInf;
  std::vector<int> incumbent_tree;

  // The pruning threshold: a tree is worth finding only if it costs < target() - tau. When
  // every cost is an integer (integral class weights and an integral Lambda, e.g. lam = 0 on
  // unweighted data), a better tree costs at most incumbent - 1, so the threshold drops by 1.
  double target() const { return integral_costs_ ? incumbent - 1.0 + 2.0 * tau_ : incumbent; }
  std::function<void()> improved;

  // Solves depth D (incumbent must hold a fair tree); false when stopped. On return,
  // `depth_bound` is a valid lower bound on the fair optimum at depth D when the iteration
  // reached its root loop (else -inf).
  bool solve_depth(int D) {
    depth_bound = -kInf;
    if (D <= 0) return true;
    if (D == 1) return solve_depth1();
    if (D == 2) return solve_depth2();
    return solve_deep(D);
  }
  double depth_bound = -kInf;

  bool stopped() const { return budget_.stopped() || memory_stop_; }
  bool memory_stop() const { return memory_stop_; }

  std::size_t bytes() const {
    std::size_t total = memo_bytes_ + root_t0_.bytes() + root_t1_.bytes() + C_.bytes() +
                        table_cache_bytes_ + (depth2_ ? depth2_->bytes() : 0) +
                        opt_cache_bytes_ + deep_bytes_ + bound_table_.bytes();
    for (const auto& L : levels_)
      total += L->builder->bytes() + L->f1builder->bytes() + L->table.bytes() + L->fa.bytes() +
               L->fb.bytes() + (L->s0.capacity() + L->s1.capacity() + L->tmp.capacity()) * 8;
    total += combo_bytes_;
    return total;
  }
  // What one more insertion may add at once: a front builder's vectors double when full.
  std::size_t growable_bytes() const {
    std::size_t total = 0;
    for (const auto& L : levels_) total += L->builder->bytes() + L->f1builder->bytes();
    return total;
  }

  // ------------------------------------------------------------------ statistics
  long long fronts_built = 0, memo_hits = 0, combos = 0, lagrangian_evals = 0;
  long long root_splits = 0, root_pruned_bound = 0, root_pruned_lagrangian = 0;
  std::size_t front_max = 0, memo_entries = 0;
  double front_total = 0.0;

  // Disparity of an encoded tree (count units are from evaluate_tree).
  void tree_disparity(const std::vector<int>& code, double* out) const {
    std::fill(out, out + m_, 0.0);
    std::size_t pos = 0;
    std::vector<double> tmp(m_);
    disparity_rec(P_.all_points().data(), code, pos, out, tmp);
  }

 private:
  struct Level {
    std::vector<std::uint64_t> s0, s1, tmp;
    std::unique_ptr<FrontBuilder> builder, f1builder;
    PairTable table;
    Front fa, fb;
    std::vector<std::uint32_t> ia, ib;
    std::vector<double> st, st0, st1, sub, win, win0, win1, dd;
    struct Cand {
      int f;
      double lb0, lb1;
    };
    std::vector<Cand> cands;
  };

  Level& level(std::size_t i) {
    while (levels_.size() <= i) levels_.push_back(new_level());
    return *levels_[i];
  }
  std::unique_ptr<Level> new_level() const {
    auto L = std::make_unique<Level>();
    L->s0.resize(W_);
    L->s1.resize(W_);
    L->tmp.resize(W_);
    L->builder = std::make_unique<FrontBuilder>(m_, tau_);
    L->f1builder = std::make_unique<FrontBuilder>(m_, tau_);
    L->st.resize(S1_);
    L->st0.resize(S1_);
    L->st1.resize(S1_);
    L->sub.resize(S1_);
    L->win.resize(2 * m_);
    L->win0.resize(2 * m_);
    L->win1.resize(2 * m_);
    L->dd.resize(m_);
    return L;
  }

  // ----------------------------------------------------------------- cell statistics
  // out[0] = total weight of s (& mask), out[1..K] = its class weights.
  void class_stat(const std::uint64_t* s, const std::uint64_t* mask, double* out) const {
    if (mask) {
      P_.class_weights_and(s, mask, out + 1);
    } else {
      P_.class_weights(s, out + 1);
    }
    double w = 0.0;
    for (int k = 0; k < K_; ++k) w += out[1 + k];
    out[0] = w;
  }
  void stat2(const std::uint64_t* s, const std::uint64_t* mask, double* out) const {
    class_stat(s, mask, out);
    C_.sum(s, mask, out + 1 + K_);
  }
  void stat1(const std::uint64_t* s, double* out) const {
    stat2(s, nullptr, out);
    C_.parts(s, out + S2_, out + S2_ + m_);
  }
  const double* dis(const double* st) const { return st + 1 + K_; }

  double pos_mis(const double* st) const { return st[0] - st[1 + kp_]; }
  double neg_mis(const double* st) const {
    if (K_ == 1) return kInf;
    if (K_ == 2) return st[0] - st[1 + (1 - kp_)];
    double top = -kInf;
    for (int k = 0; k < K_; ++k)
      if (k != kp_) top = std::max(top, st[1 + k]);
    return st[0] - top;
  }
  int neg_label(const double* cw) const {
    int best = -1;
    for (int k = 0; k < K_; ++k)
      if (k != kp_ && (best < 0 || cw[k] > cw[best])) best = k;
    return best < 0 ? kp_ : best;
  }

  // window of a cell from its S1 statistics (the root: exactly [-delta', delta'])
  void window(const double* st, bool root, double* win) const {
    for (std::size_t j = 0; j < m_; ++j) {
      if (!sw_.window && !root) {
        win[j] = -kInf;
        win[m_ + j] = kInf;
        continue;
      }
      const double up_rest = root ? 0.0 : std::max(0.0, C_.up_total(j) - st[S2_ + j]);
      const double down_rest = root ? 0.0 : std::min(0.0, C_.down_total(j) - st[S2_ + m_ + j]);
      win[j] = -delta_ - up_rest;
      win[m_ + j] = delta_ - down_rest;
    }
  }
  bool inside(const double* d, const double* win) const {
    for (std::size_t j = 0; j < m_; ++j)
      if (d[j] < win[j] || d[j] > win[m_ + j]) return false;
    return true;
  }
  bool cuts_ok(const Cuts& cuts, double cost, const double* d, int from = 0) const {
    for (int i = from; i < cuts.n; ++i)
      if (cost + cuts.mu[i] * d[0] >= cuts.T[i] - tau_) return false;
    return true;
  }

  // Fronts and tables grow by amounts no one can know before they are built, so the memory
  // check is predictive: it stops while the structures plus what may come before the next
  // check still fit: the largest growth seen between two checks, or the builders doubling
  // (a check after the fact let the search overshoot its limit by a third).
  bool over_memory(std::size_t b) {
    if (b > last_bytes_) max_growth_ = std::max(max_growth_, b - last_bytes_);
    last_bytes_ = b;
    const std::size_t ahead = std::max(max_growth_, growable_bytes());
    return memory_limit_ > 0 && static_cast<double>(b + ahead) > memory_limit_;
  }
  void poll() {
    if (budget_.check_clock()) return;
    if (memory_limit_ > 0) {
      const std::size_t b = bytes();
      budget_.note_memory(b);
      if (over_memory(b)) memory_stop_ = true;
    }
  }
  bool tick() {
    const std::size_t b = bytes();
    if (over_memory(b)) memory_stop_ = true;
    if (budget_.tick(b)) return true;
    if (memory_stop_) return true;
    return false;
  }

  // false when the search was stopped meanwhile (polled every few rows of the table).
  // classes_only: class weights alone (disparities left 0), enough for unconstrained values.
  bool build_table(const std::uint64_t* s, PairTable& T, bool pairs, std::uint64_t* buf,
                   bool classes_only = false) {
    T.M = M_;
    T.S1 = S1_;
    T.S2 = S2_;
    T.total.resize(S1_);
    T.single.resize(static_cast<std::size_t>(M_) * S1_);
    if (pairs) T.pair.resize(static_cast<std::size_t>(M_) * M_ * S2_);
    if (classes_only) {
      std::fill(T.total.begin(), T.total.end(), 0.0);
      std::fill(T.single.begin(), T.single.end(), 0.0);
      if (pairs) std::fill(T.pair.begin(), T.pair.end(), 0.0);
    }
    auto fill = [&](const std::uint64_t* x, const std::uint64_t* mask, double* out, bool one) {
      if (!classes_only) {
        if (one) {
          stat1(x, out);
        } else {
          stat2(x, mask, out);
        }
        return;
      }
      class_stat(x, mask, out);
    };
    fill(s, nullptr, T.total.data(), true);
    for (int f = 0; f < M_; ++f) {
      words::and_into(buf, s, P_.feature_words(static_cast<std::size_t>(f)), W_);
      fill(buf, nullptr, &T.single[static_cast<std::size_t>(f) * S1_], true);
      if (!pairs) continue;
      for (int g = f + 1; g < M_; ++g)
        fill(buf, P_.feature_words(static_cast<std::size_t>(g)),
             &T.pair[(static_cast<std::size_t>(f) * M_ + g) * S2_], false);
      if ((f & 15) == 15) {
        poll();
        if (stopped()) return false;
      }
    }
    return true;
  }

  // S1 statistics of the cell x_f = a of a table (f < 0: the whole support)
  void cell1(const PairTable& T, int f, int a, double* out) const {
    if (f < 0) {
      std::copy_n(T.total.data(), S1_, out);
    } else if (a == 1) {
      std::copy_n(T.single_at(f), S1_, out);
    } else {
      const double* s = T.single_at(f);
      for (std::size_t i = 0; i < S1_; ++i) out[i] = T.total[i] - s[i];
    }
  }
  // S2 statistics of (cell x_f = a) & x_g (f < 0: support & x_g)
  void sub_cell(const PairTable& T, int f, int a, int g, double* out) const {
    if (f < 0) {
      std::copy_n(T.single_at(g), S2_, out);
    } else if (a == 1) {
      std::copy_n(T.pair_at(f, g), S2_, out);
    } else {
      const double* p = T.pair_at(f, g);
      const double* s = T.single_at(g);
      for (std::size_t i = 0; i < S2_; ++i) out[i] = s[i] - p[i];
    }
  }

  // Depth <= 1 front of the cell x_f = a of T (f < 0: the support), window-filtered.
  void build_f1(const PairTable& T, int f, int a, const double* win, Level& L, Front& out) {
    double* c = L.st.data();
    cell1(T, f, a, c);
    FrontBuilder& b = *L.f1builder;
    b.clear();
    const double* dc = dis(c);
    const double negc = neg_mis(c), posc = pos_mis(c);
    if (std::isfinite(negc)) b.add(negc + Lambda_, 1, leaf_info(false), zeros_.data(), nullptr);
    if (inside(dc, win)) b.add(posc + Lambda_, 1, leaf_info(true), dc, nullptr);
    double* s1 = L.sub.data();
    double* s0 = L.st1.data();
    for (int g = 0; g < M_; ++g) {
      if (g == f) continue;
      sub_cell(T, f, a, g, s1);
      for (std::size_t i = 0; i < S2_; ++i) s0[i] = c[i] - s1[i];
      if (s1[0] <= zero_ || s0[0] <= zero_) continue;
      const double n0 = neg_mis(s0), p0 = pos_mis(s0), n1 = neg_mis(s1), p1 = pos_mis(s1);
      if (std::isfinite(n0) && inside(dis(s1), win))
        b.add(n0 + p1 + 2 * Lambda_, 2, stump_info(g, false, true), dis(s1), nullptr);
      if (std::isfinite(n1) && inside(dis(s0), win))
        b.add(p0 + n1 + 2 * Lambda_, 2, stump_info(g, true, false), dis(s0), nullptr);
      if (K_ > 2 && n0 + n1 + Lambda_ < negc - tau_)
        b.add(n0 + n1 + 2 * Lambda_, 2, stump_info(g, false, false), zeros_.data(), nullptr);
    }
    b.finish(out);
  }

  // Pairwise sums of A and B into b, under the window and the cuts. kind: kPattern or kSplit.
  void merge(const Front& A, const Front& B, const double* win, const Cuts& cuts, Kind kind,
             int f, FrontBuilder& b, Level& L) {
    if (A.empty() || B.empty()) return;
    const double T0 = cuts.T[0];
    if (A.min_cost() + B.min_cost() >= T0 - tau_) return;
    // Lagrangian prefilter: a survives only with the cheapest partner under every cut
    double minB[kMaxCuts], minA[kMaxCuts];
    for (int i = 0; i < cuts.n; ++i) {
      minB[i] = kInf;
      for (std::size_t k = 0; k < B.size(); ++k)
        minB[i] = std::min(minB[i], B.cost[k] + cuts.mu[i] * B.d[k * m_]);
      minA[i] = kInf;
    }
    L.ia.clear();
    for (std::size_t k = 0; k < A.size(); ++k) {
      bool ok = true;
      for (int i = 0; i < cuts.n && ok; ++i)
        ok = A.cost[k] + cuts.mu[i] * A.d[k * m_] + minB[i] < cuts.T[i] - tau_;
      if (!ok) continue;
      L.ia.push_back(static_cast<std::uint32_t>(k));
      for (int i = 0; i < cuts.n; ++i)
        minA[i] = std::min(minA[i], A.cost[k] + cuts.mu[i] * A.d[k * m_]);
    }
    if (L.ia.empty()) return;
    L.ib.clear();
    for (std::size_t k = 0; k < B.size(); ++k) {
      bool ok = true;
      for (int i = 0; i < cuts.n && ok; ++i)
        ok = B.cost[k] + cuts.mu[i] * B.d[k * m_] + minA[i] < cuts.T[i] - tau_;
      if (ok) L.ib.push_back(static_cast<std::uint32_t>(k));
    }
    if (L.ib.empty()) return;
    double* d = L.dd.data();
    const double bmin = B.cost[L.ib[0]];
    for (const std::uint32_t a : L.ia) {
      const double ca = A.cost[a];
      if (ca + bmin >= T0 - tau_) break;
      const double* da = &A.d[a * m_];
      for (const std::uint32_t k : L.ib) {
        const double c = ca + B.cost[k];
        if (c >= T0 - tau_) break;
        const double* db = &B.d[k * m_];
        for (std::size_t j = 0; j < m_; ++j) d[j] = da[j] + db[j];
        if (!inside(d, win) || !cuts_ok(cuts, c, d, 1)) continue;
        const std::uint64_t info =
            kind == kPattern ? pattern_info(f, A.info[a], B.info[k]) : split_info(f);
        b.add(c, A.leaves[a] + B.leaves[k], info, d, kind == kSplit ? da : nullptr);
      }
      combos += static_cast<long long>(L.ib.size());
      // poll by pairs tried, not by rows of A: a row may pair with thousands (a poll every
      // 256 rows let one merge grow its builder by 88 MB unseen). The builder is a level's,
      // which bytes() counts already.
      merge_pairs_ += L.ib.size();
      if (merge_pairs_ >= kPairsPerPoll) {
        merge_pairs_ = 0;
        poll();
        if (stopped()) return;
      }
    }
  }

  // Depth-2 front of T's support under `cuts`.
  bool build_f2(const PairTable& T, const Cuts& cuts, bool root, Level& L, Front& out) {
    window(T.total.data(), root, L.win.data());
    FrontBuilder& b = *L.builder;
    b.clear();
    build_f1(T, -1, 0, L.win.data(), L, L.fa);
    for (std::size_t i = 0; i < L.fa.size(); ++i)
      if (cuts_ok(cuts, L.fa.cost[i], &L.fa.d[i * m_]))
        b.add(L.fa.cost[i], L.fa.leaves[i], L.fa.info[i], &L.fa.d[i * m_], nullptr);
    for (int f = 0; f < M_; ++f) {
      const double* c1 = T.single_at(f);
      const double w0 = T.total[0] - c1[0];
      if (c1[0] <= zero_ || w0 <= zero_) continue;
      double* c0 = L.st0.data();
      cell1(T, f, 0, c0);
      window(c0, false, L.win0.data());
      window(c1, false, L.win1.data());
      build_f1(T, f, 0, L.win0.data(), L, L.fa);
      build_f1(T, f, 1, L.win1.data(), L, L.fb);
      merge(L.fa, L.fb, L.win.data(), cuts, kPattern, f, b, L);
      if (stopped()) return false;
    }
    b.finish(out);
    note_front(out);
    return true;
  }

  void note_front(const Front& F) {
    ++fronts_built;
    front_max = std::max(front_max, F.size());
    front_total += static_cast<double>(F.size());
  }

  // --------------------------------------------------------------------- memo
  MemoKey& key(const std::uint64_t* s, int depth) {
    std::copy_n(s, W_, scratch_key_.words.begin());
    scratch_key_.depth = depth;
    return scratch_key_;
  }

  // [w, cw(K)] of s into st
  void weights_of(const std::uint64_t* s, double* st) const {
    P_.class_weights(s, st + 1);
    double w = 0.0;
    for (int k = 0; k < K_; ++k) w += st[1 + k];
    st[0] = w;
  }

  // Lower bound on every entry of front(s, k) (st: weights_of(s)): a memoised front's minimum,
  // else the unconstrained optimum for k = 2 or 3 (cached), else the best leaf or eq + 2 Lambda.
  double lower_bound(const std::uint64_t* s, int k, const double* st) {
    auto it = memo_.find(key(s, k));
    if (it != memo_.end()) {
      const Front& F = *it->second.front;
      return F.empty() ? it->second.budget - tau_ : F.min_cost();
    }
    if (k == 2 || k == 3) return unconstrained(s, k, st);
    const double leaf = std::min(neg_mis(st), pos_mis(st)) + Lambda_;
    if (k == 0) return leaf;
    return std::min(leaf, P_.minority(s) + 2 * Lambda_);
  }

  // The unconstrained optimum of s at depth 2 (the depth-two solver) or 3 (its best root split
  // over depth-2 optima), cached by support: exact sibling bounds below the root's children.
  double unconstrained(const std::uint64_t* s, int k, const double* st) {
    auto it = opt_cache_.find(key(s, k));
    if (it != opt_cache_.end()) return it->second;
    double value;
    if (k == 2 && pass1_depth2_) {
      const Depth2Solver::Result r = depth2_->solve(s, st + 1, Lambda_, &budget_);
      // stopped part-way (time, Ctrl-C): the cheap bound below, not cached
      if (!r.exact)
        return std::min(std::min(neg_mis(st), pos_mis(st)) + Lambda_,
                        P_.minority(s) + 2 * Lambda_);
      value = r.value;
    } else if (k == 2) {
      // dense rows: a pair table is cheaper than the depth-two solver's pair counts
      if (!bound_level_) bound_level_ = new_level();  // callers' scratch stays untouched
      Level& L = *bound_level_;
      double dsel;
      if (!build_table(s, bound_table_, true, L.tmp.data(), true))
        return std::min(std::min(neg_mis(st), pos_mis(st)) + Lambda_,
                        P_.minority(s) + 2 * Lambda_);
      value = lag2(bound_table_, 0.0, &dsel, L);
    } else {
      value = std::min(neg_mis(st), pos_mis(st)) + Lambda_;
      std::vector<std::uint64_t> s0(W_), s1(W_);
      std::vector<double> st0(S1_), st1(S1_);
      for (int f = 0; f < M_ && value > 2 * Lambda_; ++f) {
        poll();
        if (stopped()) return std::min(value, P_.minority(s) + 2 * Lambda_);  // not cached
        const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(f));
        words::and_not_into(s0.data(), s, x, W_);
        words::and_into(s1.data(), s, x, W_);
        weights_of(s0.data(), st0.data());
        weights_of(s1.data(), st1.data());
        if (st0[0] <= zero_ || st1[0] <= zero_) continue;
        value = std::min(value, unconstrained(s0.data(), 2, st0.data()) +
                                    unconstrained(s1.data(), 2, st1.data()));
      }
    }
    opt_cache_.emplace(key(s, k), value);
    opt_cache_bytes_ += W_ * sizeof(std::uint64_t) + sizeof(MemoKey) + 48;
    return value;
  }

  // front(s, k) with entries of cost < budget - tau (maybe more), memoised; null when stopped.
  std::shared_ptr<const Front> front(const std::uint64_t* s, int k, double budget,
                                     std::size_t lvl) {
    if (!sw_.budget) budget = kInf;
    auto it = memo_.find(key(s, k));
    if (it != memo_.end() && it->second.budget >= budget) {
      ++memo_hits;
      return it->second.front;
    }
    if (tick()) return nullptr;
    auto F = std::make_shared<Front>();
    Cuts cuts;
    cuts.T[0] = budget;
    bool ok;
    if (k == 2) {
      Level& L = level(lvl);
      ok = build_table(s, L.table, true, L.tmp.data()) && build_f2(L.table, cuts, false, L, *F);
    } else {
      ok = build_generic(s, k, cuts, false, lvl, *F);
    }
    if (!ok) return nullptr;
    MemoKey& kk = key(s, k);
    auto found = memo_.find(kk);
    if (found == memo_.end()) {
      memo_.emplace(kk, MemoSlot{F, budget});
      memo_bytes_ += W_ * sizeof(std::uint64_t) + sizeof(MemoKey) + sizeof(MemoSlot) + 32;
      ++memo_entries;
    } else {
      memo_bytes_ -= found->second.front->bytes();
      found->second = MemoSlot{F, budget};
    }
    memo_bytes_ += F->bytes();
    return F;
  }

  // front(s, k) for k >= 3 by recursion over the root feature.
  bool build_generic(const std::uint64_t* s, int k, const Cuts& cuts, bool root,
                     std::size_t lvl, Front& out) {
    Level& L = level(lvl);
    stat1(s, L.st.data());
    window(L.st.data(), root, L.win.data());
    L.cands.clear();
    for (int f = 0; f < M_; ++f) {
      const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(f));
      words::and_not_into(L.s0.data(), s, x, W_);
      words::and_into(L.s1.data(), s, x, W_);
      weights_of(L.s0.data(), L.st0.data());
      weights_of(L.s1.data(), L.st1.data());
      if (L.st0[0] <= zero_ || L.st1[0] <= zero_) continue;
      const double lb0 = lower_bound(L.s0.data(), k - 1, L.st0.data());
      const double lb1 = lower_bound(L.s1.data(), k - 1, L.st1.data());
      if (stopped()) return false;
      L.cands.push_back({f, lb0, lb1});
    }
    std::sort(L.cands.begin(), L.cands.end(), [](const Level::Cand& a, const Level::Cand& b) {
      return a.lb0 + a.lb1 < b.lb0 + b.lb1 || (a.lb0 + a.lb1 == b.lb0 + b.lb1 && a.f < b.f);
    });
    FrontBuilder& b = *L.builder;
    b.clear();
    const double* st = L.st.data();
    if (K_ > 1 && cuts_ok(cuts, neg_mis(st) + Lambda_, zeros_.data()))
      b.add(neg_mis(st) + Lambda_, 1, leaf_info(false), zeros_.data(), nullptr);
    if (inside(dis(st), L.win.data()) && cuts_ok(cuts, pos_mis(st) + Lambda_, dis(st)))
      b.add(pos_mis(st) + Lambda_, 1, leaf_info(true), dis(st), nullptr);
    const double T0 = cuts.T[0];
    for (std::size_t c = 0; c < L.cands.size(); ++c) {
      const Level::Cand cand = L.cands[c];
      if (sw_.budget && cand.lb0 + cand.lb1 >= T0 - tau_) break;
      const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(cand.f));
      words::and_not_into(L.s0.data(), s, x, W_);
      words::and_into(L.s1.data(), s, x, W_);
      auto A = front(L.s0.data(), k - 1, T0 - cand.lb1, lvl + 1);
      if (!A) return false;
      if (A->empty()) continue;
      auto B = front(L.s1.data(), k - 1, T0 - A->min_cost(), lvl + 1);
      if (!B) return false;
      merge(*A, *B, L.win.data(), cuts, kSplit, cand.f, b, L);
      if (stopped()) return false;
    }
    b.finish(out);
    note_front(out);
    return true;
  }
  // ---------------------------------------------------------------- Lagrangian
  // min over trees of depth <= 2 on T's support of cost + mu * d (one pair); *dsel: the d of
  // the minimiser. Splits with an empty side are skipped, as in the fronts.
  double lag_leaf(const double* st, double mu, double* dsel) const {
    const double pos = pos_mis(st) + Lambda_ + mu * st[1 + K_];
    const double neg = neg_mis(st) + Lambda_;
    if (pos < neg) {
      *dsel = st[1 + K_];
      return pos;
    }
    *dsel = 0.0;
    return neg;
  }
  double lag_depth1(const PairTable& T, int f, int a, double mu, double* dsel, Level& L) const {
    if (K_ == 2 && m_ == 1) return lag_depth1_binary(T, f, a, mu, dsel);
    double* c = L.st.data();
    cell1(T, f, a, c);
    double best = lag_leaf(c, mu, dsel);
    double* s1 = L.sub.data();
    double* s0 = L.st1.data();
    for (int g = 0; g < M_; ++g) {
      if (g == f) continue;
      sub_cell(T, f, a, g, s1);
      for (std::size_t i = 0; i < S2_; ++i) s0[i] = c[i] - s1[i];
      if (s1[0] <= zero_ || s0[0] <= zero_) continue;
      double d0, d1;
      const double v = lag_leaf(s0, mu, &d0) + lag_leaf(s1, mu, &d1);
      if (v < best) {
        best = v;
        *dsel = d0 + d1;
      }
    }
    return best;
  }
  // lag_depth1 for two classes and one pair, straight from the table: with two classes the
  // negative leaf misclassifies the positive weight and vice versa.
  double lag_depth1_binary(const PairTable& T, int f, int a, double mu, double* dsel) const {
    const int p = 1 + kp_;  // offset of the positive class weight in a cell's statistics
    double cw, cp, cd;      // the cell's weight, positive weight and disparity
    const double* t = T.total.data();
    const double* sf = f < 0 ? t : T.single_at(f);
    if (f < 0 || a == 1) {
      cw = sf[0], cp = sf[p], cd = sf[3];
    } else {
      cw = t[0] - sf[0], cp = t[p] - sf[p], cd = t[3] - sf[3];
    }
    const double cq = cw - cp;
    auto leaf = [&](double pos_w, double other_w, double d, double* dd) {
      const double pos = other_w + mu * d, neg = pos_w;
      if (pos < neg) {
        *dd = d;
        return pos;
      }
      *dd = 0.0;
      return neg;
    };
    double best = leaf(cp, cq, cd, dsel) + Lambda_;
    for (int g = 0; g < M_; ++g) {
      if (g == f) continue;
      double w1, p1, d1;  // cell & x_g
      if (f < 0) {
        const double* x = T.single_at(g);
        w1 = x[0], p1 = x[p], d1 = x[3];
      } else {
        const double* x = T.pair_at(f, g);
        if (a == 1) {
          w1 = x[0], p1 = x[p], d1 = x[3];
        } else {
          const double* y = T.single_at(g);
          w1 = y[0] - x[0], p1 = y[p] - x[p], d1 = y[3] - x[3];
        }
      }
      const double w0 = cw - w1;
      if (w1 <= zero_ || w0 <= zero_) continue;
      const double p0 = cp - p1, d0 = cd - d1;
      double e0, e1;
      const double v = leaf(p0, w0 - p0, d0, &e0) + leaf(p1, w1 - p1, d1, &e1) + 2 * Lambda_;
      if (v < best) {
        best = v;
        *dsel = e0 + e1;
      }
    }
    return best;
  }

  double lag2(const PairTable& T, double mu, double* dsel, Level& L) {
    ++lagrangian_evals;
    double best = lag_depth1(T, -1, 0, mu, dsel, L);
    for (int f = 0; f < M_; ++f) {
      const double w1 = T.single_at(f)[0];
      if (w1 <= zero_ || T.total[0] - w1 <= zero_) continue;
      double d0, d1;
      const double v = lag_depth1(T, f, 0, mu, &d0, L) + lag_depth1(T, f, 1, mu, &d1, L);
      if (v < best) {
        best = v;
        *dsel = d0 + d1;
      }
    }
    return best;
  }

  struct LagPoint {
    double mu, L0, L1, d;  // d: disparity of the minimising pair of subtrees
    double phi(double delta) const { return L0 + L1 - std::abs(mu) * delta; }
  };
  // The cuts on side 0 of a root split: mu = 0 (pts[0]) and the multipliers whose dual value
  // is highest, each cutting entries c + mu d above ub - L1(mu) + |mu| delta.
  Cuts best_cuts(std::vector<LagPoint>& pts, double ub) const {
    std::sort(pts.begin() + 1, pts.end(), [&](const LagPoint& a, const LagPoint& b) {
      return a.phi(delta_) > b.phi(delta_);
    });
    Cuts cuts;
    cuts.n = 0;
    for (std::size_t i = 0; i < pts.size() && cuts.n < kMaxCuts; ++i) {
      cuts.mu[cuts.n] = pts[i].mu;
      cuts.T[cuts.n] = ub - pts[i].L1 + std::abs(pts[i].mu) * delta_;
      ++cuts.n;
    }
    return cuts;
  }
  LagPoint lag_eval(double mu, Level& L) {
    poll();
    LagPoint p{mu, 0.0, 0.0, 0.0};
    double d0, d1;
    p.L0 = lag_child(0, mu, &d0, L);
    p.L1 = lag_child(1, mu, &d1, L);
    p.d = d0 + d1;
    return p;
  }

  // Lagrangian value of a child of the root split being processed: from its pair table
  // (remaining depth 2) or, in deep mode (depth 3), the best split over its children's tables.
  double lag_child(int side, double mu, double* dsel, Level& L) {
    if (!deep_mode_) return lag2(side ? *rt1_ : *rt0_, mu, dsel, L);
    const DeepChild& C = deep_[side];
    double best = lag_leaf(C.stat.data(), mu, dsel);
    for (const DeepSplit& sp : C.splits) {
      double d0, d1;
      const double v = lag2(*sp.t0, mu, &d0, L) + lag2(*sp.t1, mu, &d1, L);
      if (v < best) {
        best = v;
        *dsel = d0 + d1;
      }
    }
    return best;
  }

  // ------------------------------------------------------------ deep root children
  // With remaining depth 3 below the root (max_depth 4), the root's children get the same
  // Lagrangian treatment as depth-2 children: their values come from the pair tables of all
  // their own children, and their fronts are merged from depth-2 fronts built under cuts
  // (transient, kept until the root split is done so that a split entry can be rebuilt).
  struct DeepSplit {
    int g;
    std::unique_ptr<PairTable> t0, t1;
    std::unique_ptr<Front> a, b;  // the depth-2 fronts merged into the child's front
  };
  struct DeepChild {
    std::vector<std::uint64_t> words;
    std::vector<double> stat;
    std::vector<DeepSplit> splits;
  };

  // Bytes of the tables of one deep root split (both children), to check against the cap.
  double deep_bytes() const {
    const double table = (static_cast<double>(M_) * M_ * S2_ + (M_ + 1.0) * S1_) * sizeof(double);
    return 4.0 * M_ * table;
  }

  // Build the deep children of the root split (s0, s1); false when stopped.
  bool prepare_deep(const std::uint64_t* s0, const std::uint64_t* s1, int f) {
    Level& L = level(2);
    for (int side = 0; side < 2; ++side) {
      DeepChild& C = deep_[side];
      const std::uint64_t* s = side ? s1 : s0;
      C.words.assign(s, s + W_);
      C.stat.resize(S1_);
      stat1(s, C.stat.data());
      C.splits.clear();
      std::vector<std::uint64_t> c0(W_), c1(W_);
      for (int g = 0; g < M_; ++g) {
        if (g == f) continue;
        const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(g));
        words::and_not_into(c0.data(), s, x, W_);
        words::and_into(c1.data(), s, x, W_);
        weights_of(c0.data(), L.st0.data());
        weights_of(c1.data(), L.st1.data());
        if (L.st0[0] <= zero_ || L.st1[0] <= zero_) continue;
        DeepSplit sp;
        sp.g = g;
        sp.t0 = std::make_unique<PairTable>();
        sp.t1 = std::make_unique<PairTable>();
        if (!build_table(c0.data(), *sp.t0, true, L.tmp.data()) ||
            !build_table(c1.data(), *sp.t1, true, L.tmp.data()))
          return false;
        deep_bytes_ += sp.t0->bytes() + sp.t1->bytes();
        C.splits.push_back(std::move(sp));
      }
    }
    return true;
  }

  // The front of deep root child `side` under `cuts`; false when stopped.
  bool build_deep_front(int side, const Cuts& cuts, Front& out) {
    DeepChild& C = deep_[side];
    Level& L = level(1);
    Level& L2 = level(2);
    const double* st = C.stat.data();
    window(st, false, L.win.data());
    FrontBuilder& b = *L.builder;
    b.clear();
    if (K_ > 1 && cuts_ok(cuts, neg_mis(st) + Lambda_, zeros_.data()))
      b.add(neg_mis(st) + Lambda_, 1, leaf_info(false), zeros_.data(), nullptr);
    if (inside(dis(st), L.win.data()) && cuts_ok(cuts, pos_mis(st) + Lambda_, dis(st)))
      b.add(pos_mis(st) + Lambda_, 1, leaf_info(true), dis(st), nullptr);
    for (DeepSplit& sp : C.splits) {
      if (tick()) return false;
      // entries of the x_g = 0 child, given the cheapest possible x_g = 1 partner per cut
      Cuts ca, cb;
      ca.n = cb.n = cuts.n;
      for (int i = 0; i < cuts.n; ++i) {
        double dsel;
        ca.mu[i] = cb.mu[i] = cuts.mu[i];
        ca.T[i] = cuts.T[i] - lag2(*sp.t1, cuts.mu[i], &dsel, L2);
      }
      if (ca.T[0] <= tau_) continue;
      sp.a = std::make_unique<Front>();
      if (!build_f2(*sp.t0, ca, false, L2, *sp.a)) return false;
      if (sp.a->empty()) continue;
      for (int i = 0; i < cuts.n; ++i) {
        double lowest = kInf;
        for (std::size_t k = 0; k < sp.a->size(); ++k)
          lowest = std::min(lowest, sp.a->cost[k] + cuts.mu[i] * sp.a->d[k * m_]);
        cb.T[i] = cuts.T[i] - lowest;
      }
      sp.b = std::make_unique<Front>();
      if (!build_f2(*sp.t1, cb, false, L2, *sp.b)) return false;
      deep_bytes_ += sp.a->bytes() + sp.b->bytes();
      merge(*sp.a, *sp.b, L.win.data(), cuts, kSplit, sp.g, b, L);
      if (stopped()) return false;
    }
    b.finish(out);
    note_front(out);
    return true;
  }

  // Rebuild an entry of a deep root child's front (its split entries refer to the kept fronts).
  void emit_deep(int side, const EntryCopy& e, std::vector<int>& out) {
    const DeepChild& C = deep_[side];
    if (kind_of(e.info) != kSplit) {
      emit(C.words.data(), 3, e, out);
      return;
    }
    const int g = static_cast<int>(e.info & 0xffffu);
    const DeepSplit* sp = nullptr;
    for (const DeepSplit& x : C.splits)
      if (x.g == g) sp = &x;
    if (!sp || !sp->a || !sp->b)
      throw std::logic_error("fair dp: a deep split lost its children (a bug)");
    std::vector<double> dr(m_);
    for (std::size_t j = 0; j < m_; ++j) dr[j] = e.d[j] - e.dl[j];
    const EntryCopy a = find_in(*sp->a, e.dl.data());
    const EntryCopy b = find_in(*sp->b, dr.data());
    if (std::abs(a.cost + b.cost - e.cost) > 16 * tau_)
      throw std::logic_error("fair dp: the children of a split do not add up (a bug)");
    std::vector<std::uint64_t> s0(W_), s1(W_);
    const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(g));
    words::and_not_into(s0.data(), C.words.data(), x, W_);
    words::and_into(s1.data(), C.words.data(), x, W_);
    out.push_back(g);
    emit(s0.data(), 2, a, out);
    emit(s1.data(), 2, b, out);
  }

  // Cutting-plane maximisation of phi(mu) = L0(mu) + L1(mu) - |mu| delta' (concave) for the
  // root split whose children have tables *rt0_ / *rt1_. Returns true when
  // max phi >= ub - tau (the split cannot beat the incumbent); the points kept for cuts are
  // in `pts` (the first is mu = 0), *bound the best phi found.
  bool lagrangian(double ub, std::vector<LagPoint>& pts, double* bound, Level& L) {
    pts.clear();
    const LagPoint p0 = lag_eval(0.0, L);
    pts.push_back(p0);
    *bound = p0.phi(delta_);
    if (*bound >= ub - tau_) return true;
    if (std::abs(p0.d) <= delta_) return false;  // mu = 0 maximises phi
    const double sigma = p0.d > 0 ? 1.0 : -1.0;
    // along nu = sigma * mu >= 0: phi = min_T c_T + nu * s_T with s_T = sigma d_T - delta'
    auto slope = [&](const LagPoint& p) { return sigma * p.d - delta_; };
    auto intercept = [&](const LagPoint& p) { return p.phi(delta_) - std::abs(p.mu) * slope(p); };
    LagPoint lo = p0, hi = p0;
    double nu = (ub - *bound) / slope(p0);
    bool bracketed = false;
    for (int it = 0; it < 60; ++it) {
      const LagPoint p = lag_eval(sigma * nu, L);
      pts.push_back(p);
      *bound = std::max(*bound, p.phi(delta_));
      if (*bound >= ub - tau_) return true;
      if (stopped()) return false;
      if (slope(p) > 0) {
        lo = p;
        nu += (ub - p.phi(delta_)) / slope(p);
        continue;
      }
      hi = p;
      bracketed = true;
      break;
    }
    if (!bracketed) return false;
    for (int it = 0; it < 30; ++it) {
      const double sl = slope(lo), sh = slope(hi);
      if (!(sl - sh > 0)) break;
      const double x = (intercept(hi) - intercept(lo)) / (sl - sh);
      const double top = intercept(lo) + x * sl;
      if (top < *bound + tau_) break;  // the envelope's peak is reached
      const LagPoint p = lag_eval(sigma * x, L);
      pts.push_back(p);
      *bound = std::max(*bound, p.phi(delta_));
      if (*bound >= ub - tau_) return true;
      if (p.phi(delta_) >= top - tau_) break;
      if (slope(p) > 0) {
        lo = p;
      } else {
        hi = p;
      }
      if (stopped()) break;
    }
    return false;
  }

  // ------------------------------------------------------------------- root
  // Best fair pair (a in A, b in B) with |d_a + d_b| <= delta' and cost < ub - tau; returns
  // the cost (inf if none) and the indices.
  double best_combo(const Front& A, const Front& B, double ub, std::size_t* ia,
                    std::size_t* ib) {
    double best = ub - tau_;
    bool found = false;
    if (A.empty() || B.empty()) return kInf;
    if (m_ == 1) {
      const std::size_t n = B.size();
      order_.resize(n);
      std::iota(order_.begin(), order_.end(), 0u);
      std::sort(order_.begin(), order_.end(),
                [&](std::uint32_t a, std::uint32_t b) { return B.d[a] < B.d[b]; });
      sorted_d_.resize(n);
      for (std::size_t i = 0; i < n; ++i) sorted_d_[i] = B.d[order_[i]];
      // sparse table of argmin cost over order_
      std::size_t levels = 1;
      while ((std::size_t{1} << levels) <= n) ++levels;
      sparse_.resize(levels * n);
      for (std::size_t i = 0; i < n; ++i) sparse_[i] = order_[i];
      for (std::size_t l = 1; l < levels; ++l) {
        const std::size_t half = std::size_t{1} << (l - 1);
        for (std::size_t i = 0; i + (std::size_t{1} << l) <= n; ++i) {
          const std::uint32_t x = sparse_[(l - 1) * n + i], y = sparse_[(l - 1) * n + i + half];
          sparse_[l * n + i] = B.cost[y] < B.cost[x] ? y : x;
        }
      }
      combo_bytes_ = (order_.capacity() + sparse_.capacity()) * 4 + sorted_d_.capacity() * 8;
      const double bmin = B.min_cost();
      for (std::size_t a = 0; a < A.size(); ++a) {
        const double ca = A.cost[a];
        if (ca + bmin >= best) break;
        const double lo = -delta_ - A.d[a], hi = delta_ - A.d[a];
        const std::size_t i0 = static_cast<std::size_t>(
            std::lower_bound(sorted_d_.begin(), sorted_d_.end(), lo) - sorted_d_.begin());
        const std::size_t i1 = static_cast<std::size_t>(
            std::upper_bound(sorted_d_.begin(), sorted_d_.end(), hi) - sorted_d_.begin());
        if (i0 >= i1) continue;
        std::size_t l = 0;
        while ((std::size_t{1} << (l + 1)) <= i1 - i0) ++l;
        const std::uint32_t x = sparse_[l * n + i0];
        const std::uint32_t y = sparse_[l * n + i1 - (std::size_t{1} << l)];
        const std::uint32_t k = B.cost[y] < B.cost[x] ? y : x;
        const double c = ca + B.cost[k];
        if (c < best) {
          best = c;
          *ia = a;
          *ib = k;
          found = true;
        }
      }
      return found ? best : kInf;
    }
    std::vector<double> d(m_);
    std::vector<double> win(2 * m_);
    for (std::size_t j = 0; j < m_; ++j) {
      win[j] = -delta_;
      win[m_ + j] = delta_;
    }
    for (std::size_t a = 0; a < A.size(); ++a) {
      const double ca = A.cost[a];
      if (ca + B.min_cost() >= best) break;
      for (std::size_t k = 0; k < B.size(); ++k) {
        const double c = ca + B.cost[k];
        if (c >= best) break;
        for (std::size_t j = 0; j < m_; ++j) d[j] = A.d[a * m_ + j] + B.d[k * m_ + j];
        if (!inside(d.data(), win.data())) continue;
        best = c;
        *ia = a;
        *ib = k;
        found = true;
        break;
      }
    }
    return found ? best : kInf;
  }

  // A new fair incumbent: rebuild its tree now (the fronts it came from may change later).
  void accept(double cost, std::vector<int> code) {
    incumbent = cost;
    incumbent_tree = std::move(code);
    if (improved) improved();
  }

  bool solve_depth1() {
    if (tick()) return false;
    Level& L = level(0);
    if (!build_table(P_.all_points().data(), L.table, false, L.tmp.data())) return false;
    window(L.table.total.data(), true, L.win.data());
    Front F;
    build_f1(L.table, -1, 0, L.win.data(), L, F);
    note_front(F);
    depth_bound = F.empty() ? incumbent : std::min(incumbent, F.min_cost());
    if (!F.empty() && F.min_cost() < target() - tau_) {
      std::vector<int> code;
      emit(P_.all_points().data(), 1, copy_entry(F, 0, m_), code);
      accept(F.min_cost(), std::move(code));
    }
    return true;
  }

  bool solve_depth2() {
    if (tick()) return false;
    Level& L = level(0);
    PairTable& T = root_t0_;
    if (!build_table(P_.all_points().data(), T, true, L.tmp.data())) return false;
    Front A, B;
    double bound = incumbent;
    for (int f = 0; f < M_; ++f) {
      const double* c1 = T.single_at(f);
      if (c1[0] <= zero_ || T.total[0] - c1[0] <= zero_) continue;
      ++root_splits;
      double* c0 = L.st0.data();
      cell1(T, f, 0, c0);
      window(c0, false, L.win0.data());
      window(c1, false, L.win1.data());
      build_f1(T, f, 0, L.win0.data(), L, A);
      build_f1(T, f, 1, L.win1.data(), L, B);
      note_front(A);
      note_front(B);
      std::size_t ia = 0, ib = 0;
      const double c = best_combo(A, B, target(), &ia, &ib);
      if (c < target() - tau_) {
        std::vector<int> code{f};
        const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(f));
        std::vector<std::uint64_t> s0(W_), s1(W_);
        words::and_not_into(s0.data(), P_.all_points().data(), x, W_);
        words::and_into(s1.data(), P_.all_points().data(), x, W_);
        emit(s0.data(), 1, copy_entry(A, ia, m_), code);
        emit(s1.data(), 1, copy_entry(B, ib, m_), code);
        accept(c, std::move(code));
      }
      if (tick()) return false;
    }
    depth_bound = std::min(bound, incumbent);
    return true;
  }

  struct RootCand {
    int f;
    double bound;
  };

  bool solve_deep(int D) {
    const std::uint64_t* all = P_.all_points().data();
    Level& L0 = level(0);
    table_cache_.clear();
    table_cache_.resize(2 * static_cast<std::size_t>(M_));
    table_cache_bytes_ = 0;
    std::vector<std::uint64_t> s0(W_), s1(W_);
    std::vector<RootCand> cands;
    // pass 1: unconstrained bounds of every root split
    for (int f = 0; f < M_; ++f) {
      if (tick()) return false;
      const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(f));
      words::and_not_into(s0.data(), all, x, W_);
      words::and_into(s1.data(), all, x, W_);
      weights_of(s0.data(), L0.st0.data());
      weights_of(s1.data(), L0.st1.data());
      if (L0.st0[0] <= zero_ || L0.st1[0] <= zero_) continue;
      double b;
      if (D - 1 == 2 && pass1_depth2_) {
        // the unconstrained depth-2 optima of both sides (incremental pair counts)
        const Depth2Solver::Result r0 = depth2_->solve(s0.data(), L0.st0.data() + 1, Lambda_,
                                                       &budget_);
        if (!r0.exact) return false;  // the budget stopped it (time, Ctrl-C)
        const Depth2Solver::Result r1 = depth2_->solve(s1.data(), L0.st1.data() + 1, Lambda_,
                                                       &budget_);
        if (!r1.exact) return false;
        b = r0.value + r1.value;
      } else if (D - 1 == 2) {
        // the same from their pair tables, which are kept for pass 2 while they fit in the
        // cache (else rebuilt there)
        Level& L1 = level(1);
        double dsel;
        b = 0.0;
        for (int side = 0; side < 2; ++side) {
          PairTable& T = L1.table;
          if (!build_table(side ? s1.data() : s0.data(), T, true, L1.tmp.data())) return false;
          b += lag2(T, 0.0, &dsel, L1);
          if (table_cache_bytes_ + T.bytes() <= table_cache_cap_) {
            table_cache_bytes_ += T.bytes();
            table_cache_[2 * static_cast<std::size_t>(f) + side] =
                std::make_unique<PairTable>(std::move(T));
          }
        }
      } else {
        b = lower_bound(s0.data(), D - 1, L0.st0.data()) +
            lower_bound(s1.data(), D - 1, L0.st1.data());
        if (stopped()) return false;
      }
      cands.push_back({f, b});
    }
    std::sort(cands.begin(), cands.end(), [](const RootCand& a, const RootCand& b) {
      return a.bound < b.bound || (a.bound == b.bound && a.f < b.f);
    });
    std::vector<LagPoint> pts;
    Front A, B;
    for (std::size_t c = 0; c < cands.size(); ++c) {
      const RootCand cand = cands[c];
      // a valid bound at depth D if we stop now: the incumbent or an unexplored split
      const double next = c + 1 < cands.size() ? cands[c + 1].bound : kInf;
      depth_bound = std::min({incumbent, cand.bound, next});
      if (sw_.budget && cand.bound >= target() - tau_) {
        root_pruned_bound += static_cast<long long>(cands.size() - c);
        depth_bound = incumbent;
        return true;
      }
      if (tick()) return false;
      ++root_splits;
      const int f = cand.f;
      const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(f));
      words::and_not_into(s0.data(), all, x, W_);
      words::and_into(s1.data(), all, x, W_);
      const double ub = target();
      Cuts cuts0, cuts1;
      bool ok;
      if (D - 1 == 2) {
        Level& L1 = level(1);
        for (int side = 0; side < 2; ++side) {
          const auto& cached = table_cache_[2 * static_cast<std::size_t>(f) + side];
          PairTable& own = side ? root_t1_ : root_t0_;
          if (cached) {
            (side ? rt1_ : rt0_) = cached.get();
          } else {
            if (!build_table(side ? s1.data() : s0.data(), own, true, L1.tmp.data())) return false;
            (side ? rt1_ : rt0_) = &own;
          }
        }
        double bound;
        if (m_ == 1 && sw_.lagrangian && sw_.budget) {
          const bool pruned = lagrangian(ub, pts, &bound, L1);
          if (stopped()) return false;
          if (pruned) {
            ++root_pruned_lagrangian;
            continue;
          }
          cands[c].bound = std::max(cand.bound, bound);
          depth_bound = std::min({incumbent, cands[c].bound, next});
          cuts0 = best_cuts(pts, ub);
        } else {
          double dsel;
          const double l1 = lag2(*rt1_, 0.0, &dsel, L1);
          cuts0.T[0] = sw_.budget ? ub - l1 : kInf;
        }
        ok = build_f2(*rt0_, cuts0, false, L1, A);
      } else if (D - 1 == 3 && m_ == 1 && sw_.lagrangian && sw_.budget &&
                 deep_bytes() <= static_cast<double>(table_cache_cap_)) {
        deep_bytes_ = 0;
        const bool ready = prepare_deep(s0.data(), s1.data(), f);
        deep_mode_ = true;
        double bound;
        const bool pruned = ready && lagrangian(ub, pts, &bound, level(1));
        deep_mode_ = false;
        if (!ready || stopped()) return false;
        if (pruned) {
          ++root_pruned_lagrangian;
          continue;
        }
        cands[c].bound = std::max(cand.bound, bound);
        depth_bound = std::min({incumbent, cands[c].bound, next});
        cuts0 = best_cuts(pts, ub);
        if (!build_deep_front(0, cuts0, A)) return false;
        if (A.empty()) continue;
        for (int i = 0; i < cuts0.n; ++i) {
          double lowest = kInf;
          for (std::size_t k = 0; k < A.size(); ++k)
            lowest = std::min(lowest, A.cost[k] + cuts0.mu[i] * A.d[k * m_]);
          cuts1.mu[i] = cuts0.mu[i];
          cuts1.T[i] = ub - lowest + std::abs(cuts0.mu[i]) * delta_;
        }
        cuts1.n = cuts0.n;
        if (!build_deep_front(1, cuts1, B)) return false;
        std::size_t ia = 0, ib = 0;
        const double v = best_combo(A, B, target(), &ia, &ib);
        if (v < target() - tau_) {
          std::vector<int> code{f};
          emit_deep(0, copy_entry(A, ia, m_), code);
          emit_deep(1, copy_entry(B, ib, m_), code);
          accept(v, std::move(code));
        }
        continue;
      } else {
        weights_of(s1.data(), L0.st1.data());
        cuts0.T[0] = sw_.budget ? ub - lower_bound(s1.data(), D - 1, L0.st1.data()) : kInf;
        if (stopped()) return false;
        ok = build_generic(s0.data(), D - 1, cuts0, false, 1, A);
      }
      if (!ok) return false;
      if (A.empty()) continue;
      cuts1.n = cuts0.n;
      for (int i = 0; i < cuts0.n; ++i) {
        double lowest = kInf;
        for (std::size_t k = 0; k < A.size(); ++k)
          lowest = std::min(lowest, A.cost[k] + cuts0.mu[i] * A.d[k * m_]);
        cuts1.mu[i] = cuts0.mu[i];
        cuts1.T[i] = sw_.budget ? ub - lowest + std::abs(cuts0.mu[i]) * delta_ : kInf;
      }
      if (D - 1 == 2) {
        ok = build_f2(*rt1_, cuts1, false, level(1), B);
      } else {
        ok = build_generic(s1.data(), D - 1, cuts1, false, 1, B);
      }
      if (!ok) return false;
      std::size_t ia = 0, ib = 0;
      const double v = best_combo(A, B, target(), &ia, &ib);
      if (v < target() - tau_) {
        std::vector<int> code{f};
        emit(s0.data(), D - 1, copy_entry(A, ia, m_), code);
        emit(s1.data(), D - 1, copy_entry(B, ib, m_), code);
        accept(v, std::move(code));
      }
    }
    depth_bound = incumbent;
    return true;
  }

  // --------------------------------------------------------------- rebuilding
  void emit_leaf(const std::uint64_t* s, bool positive, std::vector<int>& out) const {
    if (positive) {
      out.push_back(-(kp_ + 1));
      return;
    }
    std::vector<double> cw(static_cast<std::size_t>(K_));
    P_.class_weights(s, cw.data());
    out.push_back(-(neg_label(cw.data()) + 1));
  }
  void emit_desc(const std::uint64_t* s, std::uint64_t desc, std::vector<int>& out) const {
    if (!(desc & (std::uint64_t{1} << 20))) {
      emit_leaf(s, (desc >> 16) & 1u, out);
      return;
    }
    const int g = static_cast<int>(desc & 0xffffu);
    std::vector<std::uint64_t> s0(W_), s1(W_);
    words::and_not_into(s0.data(), s, P_.feature_words(static_cast<std::size_t>(g)), W_);
    words::and_into(s1.data(), s, P_.feature_words(static_cast<std::size_t>(g)), W_);
    out.push_back(g);
    emit_leaf(s0.data(), (desc >> 16) & 1u, out);
    emit_leaf(s1.data(), (desc >> 17) & 1u, out);
  }
  void emit(const std::uint64_t* s, int k, const EntryCopy& e, std::vector<int>& out) {
    switch (kind_of(e.info)) {
      case kLeaf:
      case kStump:
        emit_desc(s, e.info & kDescMask, out);
        return;
      case kPattern: {
        const int f = static_cast<int>((e.info >> 42) & 0xffffu);
        std::vector<std::uint64_t> s0(W_), s1(W_);
        words::and_not_into(s0.data(), s, P_.feature_words(static_cast<std::size_t>(f)), W_);
        words::and_into(s1.data(), s, P_.feature_words(static_cast<std::size_t>(f)), W_);
        out.push_back(f);
        emit_desc(s0.data(), (e.info >> 21) & kDescMask, out);
        emit_desc(s1.data(), e.info & kDescMask, out);
        return;
      }
      case kSplit: {
        const int f = static_cast<int>(e.info & 0xffffu);
        std::vector<std::uint64_t> s0(W_), s1(W_);
        words::and_not_into(s0.data(), s, P_.feature_words(static_cast<std::size_t>(f)), W_);
        words::and_into(s1.data(), s, P_.feature_words(static_cast<std::size_t>(f)), W_);
        std::vector<double> dr(m_);
        for (std::size_t j = 0; j < m_; ++j) dr[j] = e.d[j] - e.dl[j];
        const EntryCopy a = find_entry(s0.data(), k - 1, e.dl.data());
        const EntryCopy b = find_entry(s1.data(), k - 1, dr.data());
        if (std::abs(a.cost + b.cost - e.cost) > 16 * tau_)
          throw std::logic_error("fair dp: the children of a split do not add up (a bug)");
        out.push_back(f);
        emit(s0.data(), k - 1, a, out);
        emit(s1.data(), k - 1, b, out);
        return;
      }
    }
  }
  // The memoised entry of front(s, k) whose disparity is d (the cheapest one if several).
  EntryCopy find_entry(const std::uint64_t* s, int k, const double* d) {
    auto it = memo_.find(key(s, k));
    if (it == memo_.end())
      throw std::logic_error("fair dp: a child front left the memo (a bug)");
    return find_in(*it->second.front, d);
  }
  EntryCopy find_in(const Front& F, const double* d) const {
    std::size_t best = F.size();
    for (std::size_t i = 0; i < F.size(); ++i) {
      double gap = 0.0;
      for (std::size_t j = 0; j < m_; ++j) gap = std::max(gap, std::abs(F.d[i * m_ + j] - d[j]));
      if (gap <= 4.0 / kKeyScale && (best == F.size() || F.cost[i] < F.cost[best])) best = i;
    }
    if (best == F.size())
      throw std::logic_error("fair dp: no child entry with the recorded disparity (a bug)");
    return copy_entry(F, best, m_);
  }

  void disparity_rec(const std::uint64_t* s, const std::vector<int>& code, std::size_t& pos,
                     double* out, std::vector<double>& tmp) const {
    const int v = code[pos++];
    if (v < 0) {
      if (-v - 1 == kp_) {
        C_.sum(s, nullptr, tmp.data());
        for (std::size_t j = 0; j < m_; ++j) out[j] += tmp[j];
      }
      return;
    }
    std::vector<std::uint64_t> s0(W_), s1(W_);
    words::and_not_into(s0.data(), s, P_.feature_words(static_cast<std::size_t>(v)), W_);
    words::and_into(s1.data(), s, P_.feature_words(static_cast<std::size_t>(v)), W_);
    disparity_rec(s0.data(), code, pos, out, tmp);
    disparity_rec(s1.data(), code, pos, out, tmp);
  }

  const Problem& P_;
  const Coefficients& C_;
  Budget& budget_;
  Switches sw_;
  int K_, M_;
  std::size_t m_, W_;
  int kp_;
  double delta_, Lambda_, tau_, zero_, memory_limit_;
  std::size_t S2_, S1_;
  std::vector<double> zeros_;
  std::unique_ptr<Depth2Solver> depth2_;  // unconstrained depth-2 optima
  bool pass1_depth2_ = false;              // root pass 1 uses it (cheaper than pair tables)
  bool integral_costs_ = false;            // every cost is an integer (see target())
  std::vector<std::unique_ptr<Level>> levels_;
  std::unordered_map<MemoKey, MemoSlot, MemoHash> memo_;
  std::unordered_map<MemoKey, double, MemoHash> opt_cache_;  // unconstrained optima (k = 2, 3)
  PairTable bound_table_;                                    // scratch of unconstrained()
  std::unique_ptr<Level> bound_level_;
  std::size_t opt_cache_bytes_ = 0;
  MemoKey scratch_key_;
  std::size_t memo_bytes_ = 0, combo_bytes_ = 0;
  static constexpr std::size_t kPairsPerPoll = 1 << 14;
  std::size_t merge_pairs_ = 0;  // pairs merged since the last poll
  PairTable root_t0_, root_t1_;
  DeepChild deep_[2];       // the root split's children in deep mode (remaining depth 3)
  bool deep_mode_ = false;  // lag_child reads deep_ instead of *rt0_ / *rt1_
  std::size_t deep_bytes_ = 0;
  const PairTable* rt0_ = &root_t0_;  // the tables of the root split being processed
  const PairTable* rt1_ = &root_t1_;
  // pair tables of the root's children, built in pass 1 and reused in pass 2 (2f + side)
  std::vector<std::unique_ptr<PairTable>> table_cache_;
  std::size_t table_cache_bytes_ = 0, table_cache_cap_ = 0;
  std::vector<std::uint32_t> order_, sparse_;
  std::vector<double> sorted_d_;
  bool memory_stop_ = false;
  std::size_t last_bytes_ = 0, max_growth_ = 0;  // over_memory's record
};

void check_spec(const Problem& P, const FairSpec& spec, const SearchConfig& config) {
  if (config.max_depth < 0)
    throw std::invalid_argument("max_depth must be >= 0: the fair search needs a depth limit");
  if (spec.n_pairs < 1) throw std::invalid_argument("coefficients must have at least one column");
  if (!(spec.delta >= 0.0 && spec.delta <= 1.0))
    throw std::invalid_argument("delta must be in [0, 1]");
  if (spec.positive_code < 0 || spec.positive_code >= P.n_classes())
    throw std::invalid_argument("positive_code must be a class code of the problem");
  if (P.n_features() > static_cast<std::size_t>(kMaxFeatures))
    throw std::invalid_argument("the fair search supports at most 65535 features");
  const std::size_t n = P.n_samples() * spec.n_pairs;
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(spec.coefficients[i]))
      throw std::invalid_argument("coefficients must be finite");
}

}  // namespace

SearchOutput search_fair_dp(const Problem& problem, const FairSpec& spec,
                            const SearchConfig& config, std::function<bool()> interrupted) {
  check_spec(problem, spec, config);
  const auto t0 = Budget::Clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(Budget::Clock::now() - t0).count();
  };
  const double N = problem.total_weight();
  const double tau = count_tolerance(N);
  const double Lambda = config.lam * N;
  const int D = config.max_depth;
  const std::size_t m = spec.n_pairs;
  Switches sw;
  sw.window = config.bound_on("window");
  sw.budget = config.bound_on("budget");
  sw.lagrangian = config.bound_on("lagrangian");
  sw.shortcut = config.bound_on("shortcut");

  SearchOutput out;
  out.progress = config.progress;
  auto normalized = [N](double v) { return v / N; };
  Coefficients coefs(problem, spec.coefficients, m);

  // 1. the unconstrained optimum: a lower bound always, the answer when it is fair
  SearchConfig free_config = config;
  free_config.upper_bound = std::numeric_limits<double>::infinity();
  const SearchOutput free = search_dp(problem, free_config, interrupted);
  const double presolve_seconds = elapsed();

  Budget dummy(SearchConfig{});
  FairSolver probe_only(problem, coefs, spec, config, sw, dummy);
  auto fair = [&](const std::vector<int>& code) {
    std::vector<double> d(m);
    probe_only.tree_disparity(code, d.data());
    for (double v : d)
      if (std::abs(v) > spec.delta + kFeasTol) return false;
    return true;
  };

  // the best single leaf is always fair
  std::vector<double> cw(static_cast<std::size_t>(problem.n_classes()));
  problem.class_weights(problem.all_points().data(), cw.data());
  double incumbent = misclassified(cw.data(), problem.n_classes()) + Lambda;
  std::vector<int> tree{-(majority_class(cw.data(), problem.n_classes()) + 1)};
  if (!config.initial_tree.empty() && fair(config.initial_tree)) {
    const double v = evaluate_tree(problem, config.initial_tree, Lambda, D);
    if (v < incumbent - tau) {
      incumbent = v;
      tree = config.initial_tree;
    }
  }
  const bool free_fair = fair(free.tree);
  const double free_value = free.objective * N;
  if (sw.shortcut && free_fair && free_value < incumbent - tau) {
    incumbent = evaluate_tree(problem, free.tree, Lambda, D);
    tree = free.tree;
  }
  double lower = free.lower_bound * N;  // valid for the fair problem too
  out.stats["presolve_objective"] = free.objective;
  out.stats["presolve_lower_bound"] = free.lower_bound;
  out.stats["presolve_fair"] = free_fair ? 1.0 : 0.0;
  out.stats["presolve_seconds"] = presolve_seconds;
  out.stats["n_pairs"] = static_cast<double>(m);
  out.stats["integral_coefficients"] = static_cast<double>(coefs.integral_columns());
  out.record(elapsed(), normalized(incumbent), normalized(std::min(lower, incumbent)));

  auto finish = [&](const std::string& status, double bound, long long nodes, double peak_mb) {
    out.tree = tree;
    out.status = status;
    out.objective = normalized(incumbent);
    bound = std::min(std::max(bound, lower), incumbent);
    out.lower_bound = status == "optimal" ? out.objective : normalized(bound);
    out.n_explored = free.n_explored + nodes;
    out.peak_memory_mb = std::max(free.peak_memory_mb, peak_mb);
    out.record(elapsed(), out.objective, out.lower_bound);
    out.stats["search_seconds"] = elapsed();
    return out;
  };

  out.stats["shortcut"] = 0.0;
  if (free.status != "optimal") return finish(free.status, lower, 0, 0.0);
  if (sw.shortcut && free_fair) {
    out.stats["shortcut"] = 1.0;
    return finish("optimal", incumbent, 0, 0.0);
  }
  if (incumbent <= lower + tau) return finish("optimal", incumbent, 0, 0.0);

  // 2. the fair search with what is left of the limits
  SearchConfig rest = config;
  if (config.time_limit > 0) {
    rest.time_limit = config.time_limit - presolve_seconds;
    if (rest.time_limit <= 0) return finish("time_limit", lower, 0, 0.0);
  }
  if (config.node_limit > 0) {
    rest.node_limit = config.node_limit - free.n_explored;
    if (rest.node_limit <= 0) return finish("node_limit", lower, 0, 0.0);
  }
  Budget budget(rest, std::move(interrupted));
  // Out of memory (a std::bad_alloc while building fronts or the solver) the search ends as at
  // its memory limit: `incumbent`/`tree` only change together (improved) and `bound` only
  // takes a completed depth's value, so both stay valid.
  std::unique_ptr<FairSolver> owned;
  int completed = 0;
  double bound = lower;
  catch_out_of_memory(budget, [&] {
    owned = std::make_unique<FairSolver>(problem, coefs, spec, config, sw, budget);
    FairSolver& solver = *owned;
    solver.incumbent = incumbent;
    solver.incumbent_tree = tree;
    solver.improved = [&] {
      const double v = evaluate_tree(problem, solver.incumbent_tree, Lambda, D);
      if (std::abs(v - solver.incumbent) > 16 * tau || !fair(solver.incumbent_tree))
        throw std::logic_error(
            "fair dp: a rebuilt tree does not score what the search found (a bug)");
      tree = solver.incumbent_tree;  // the tree before its value (a bad_alloc keeps them in step)
      incumbent = solver.incumbent;
      out.record(elapsed(), normalized(incumbent), normalized(std::min(lower, incumbent)));
    };
    for (int depth = 1; depth <= D; ++depth) {
      const bool done = solver.solve_depth(depth);
      if (!done || solver.stopped()) {
        if (depth == D && std::isfinite(solver.depth_bound))
          bound = std::max(bound, solver.depth_bound);
        break;
      }
      completed = depth;
    }
  });
  out.stats["out_of_memory"] = budget.ran_out_of_memory() ? 1.0 : 0.0;
  if (!owned) return finish("memory_limit", bound, budget.nodes(), budget.peak_memory_mb());
  FairSolver& solver = *owned;
  out.stats["depths_completed"] = static_cast<double>(completed);
  out.stats["fronts_built"] = static_cast<double>(solver.fronts_built);
  out.stats["front_max"] = static_cast<double>(solver.front_max);
  out.stats["front_mean"] =
      solver.fronts_built ? solver.front_total / static_cast<double>(solver.fronts_built) : 0.0;
  out.stats["memo_fronts"] = static_cast<double>(solver.memo_entries);
  out.stats["memo_hits"] = static_cast<double>(solver.memo_hits);
  out.stats["combinations"] = static_cast<double>(solver.combos);
  out.stats["lagrangian_evaluations"] = static_cast<double>(solver.lagrangian_evals);
  out.stats["root_splits"] = static_cast<double>(solver.root_splits);
  out.stats["root_pruned_bound"] = static_cast<double>(solver.root_pruned_bound);
  out.stats["root_pruned_lagrangian"] = static_cast<double>(solver.root_pruned_lagrangian);
  budget.note_memory(solver.bytes());
  std::string status = budget.status();
  if (solver.memory_stop()) status = "memory_limit";
  if (completed == D && !budget.ran_out_of_memory()) status = "optimal";
  return finish(status, bound, budget.nodes(), budget.peak_memory_mb());
}

}  // namespace odtkit

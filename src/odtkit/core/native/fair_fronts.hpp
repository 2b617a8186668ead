// Data of the fair DP (fair_dp.cpp describes the algorithm): the Pareto fronts and their
// builder, the disparity coefficients per point, the pair tables of a support's cells, the
// Lagrangian cuts and the memo's keys. Internal to the fair search (namespace odtkit::fair).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>

#include "problem.hpp"

namespace odtkit {
namespace fair {

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
class Coefficients {
 public:
  // Sums the rows' coefficients per point and picks, per column, the exact integer path
  // when every coefficient is a whole multiple of one number (integer_scale).
  Coefficients(const Problem& P, const double* coef, std::size_t m);

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

EntryCopy copy_entry(const Front& F, std::size_t i, std::size_t m);

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

// Disparity vector (count units) of an encoded tree (search_types.hpp) predicting
// `positive_code` as positive: the sum of C over its positive leaves' supports, into out[0..m).
void tree_disparity(const Problem& P, const Coefficients& C, int positive_code,
                    const std::vector<int>& code, double* out);

}  // namespace fair
}  // namespace odtkit

#include "problem.hpp"

#include <cmath>
#include <stdexcept>
#include <algorithm>
#include <string>

namespace odtkit {

namespace {
// Integer weights up to 2^40 keep every plane sum (<= 2^40 * U) exactly representable in a double.
constexpr double kMaxPlaneValue = 1099511627776.0;

// In place: bit j of a[i] becomes bit i of a[j] (a 64 x 64 bit matrix transposed by swapping
// ever smaller blocks; Warren, Hacker's Delight §7-3).
void transpose64(std::uint64_t a[64]) {
  std::uint64_t m = 0x00000000FFFFFFFFULL;
  for (int j = 32; j; j >>= 1, m ^= m << j) {
    for (int k = 0; k < 64; k = ((k | j) + 1) & ~j) {
      const std::uint64_t t = ((a[k] >> j) ^ a[k | j]) & m;
      a[k | j] ^= t;
      a[k] ^= t << j;
    }
  }
}
}  // namespace

PointSum::PointSum(const std::vector<double>& values, std::size_t n_points, PopcountMode mode)
    : n_words_(Bitset::word_count(n_points)), mode_(mode), values_(values) {
  use_planes_ = true;
  double top = 0.0;
  for (double v : values) {
    if (v != std::floor(v) || v < 0.0 || v >= kMaxPlaneValue) {
      use_planes_ = false;
      break;
    }
    top = std::max(top, v);
  }
  if (!use_planes_) return;
  const auto max_value = static_cast<std::uint64_t>(top);
  for (int b = 0; b < 64 && (max_value >> b) != 0; ++b) {
    Bitset plane(n_points);
    for (std::size_t u = 0; u < n_points; ++u)
      if ((static_cast<std::uint64_t>(values[u]) >> b) & 1u) plane.set(u);
    if (plane.any()) {
      planes_.insert(planes_.end(), plane.words().begin(), plane.words().end());
      plane_bit_.push_back(b);
    }
  }
}

double PointSum::sum(const std::uint64_t* s) const {
  if (use_planes_)
    return static_cast<double>(kernels::plane_sum(mode_, s, nullptr, planes_.data(),
                                                  plane_bit_.data(), plane_bit_.size(), n_words_));
  return sum_bits(s, nullptr);
}

double PointSum::sum_and(const std::uint64_t* s, const std::uint64_t* mask) const {
  if (use_planes_)
    return static_cast<double>(kernels::plane_sum(mode_, s, mask, planes_.data(),
                                                  plane_bit_.data(), plane_bit_.size(), n_words_));
  return sum_bits(s, mask);
}

// Fractional values: add them point by point, in point order.
double PointSum::sum_bits(const std::uint64_t* s, const std::uint64_t* mask) const {
  double total = 0.0;
  for (std::size_t k = 0; k < n_words_; ++k) {
    std::uint64_t w = mask ? s[k] & mask[k] : s[k];
    while (w) {
      total += values_[(k << 6) + static_cast<std::size_t>(__builtin_ctzll(w))];
      w &= w - 1;
    }
  }
  return total;
}

Problem::Problem(const bool* X, std::size_t n_samples, std::size_t n_features,
                 const std::int32_t* y, const double* weights, int n_classes,
                 PopcountMode popcount, const double* support)
    : n_samples_(n_samples), n_features_(n_features), n_classes_(n_classes), popcount_(popcount) {
  if (n_classes < 1) throw std::invalid_argument("n_classes must be >= 1");
  const auto K = static_cast<std::size_t>(n_classes);
  for (std::size_t i = 0; i < n_samples; ++i) {
    if (y[i] < 0 || y[i] >= n_classes)
      throw std::invalid_argument("label " + std::to_string(y[i]) + " of sample " +
                                  std::to_string(i) + " is outside [0, n_classes)");
    if (!std::isfinite(weights[i]) || weights[i] < 0.0)
      throw std::invalid_argument("sample weights must be finite and nonnegative");
    if (support && (!std::isfinite(support[i]) || support[i] < 0.0))
      throw std::invalid_argument("support weights must be finite and nonnegative");
  }

  // Collapse identical rows: rows packed into 64-bit words, hashed into an open-addressing
  // table of point ids; points are numbered by first appearance so preprocessing is
  // deterministic. (A std::string-keyed map cost ~3 ms on COMPAS, more than many searches.)
  const std::size_t row_words = std::max<std::size_t>(1, Bitset::word_count(n_features));
  std::vector<std::uint64_t> packed(n_samples * row_words, 0);
  for (std::size_t i = 0; i < n_samples; ++i) {
    const bool* row = X + i * n_features;
    std::uint64_t* dst = &packed[i * row_words];
    // branch-free: on random data the branch mispredicted every other cell
    for (std::size_t j = 0; j < n_features; ++j)
      dst[j >> 6] |= static_cast<std::uint64_t>(row[j]) << (j & 63);
  }
  std::size_t table_size = 16;
  while (table_size < 2 * n_samples + 2) table_size <<= 1;
  std::vector<std::int32_t> table(table_size, -1);
  sample_point_.resize(n_samples);
  std::vector<std::size_t> first_row;
  for (std::size_t i = 0; i < n_samples; ++i) {
    const std::uint64_t* key = &packed[i * row_words];
    std::size_t slot = words::hash(key, row_words) & (table_size - 1);
    while (true) {
      const std::int32_t u = table[slot];
      if (u < 0) {
        table[slot] = static_cast<std::int32_t>(first_row.size());
        sample_point_[i] = table[slot];
        first_row.push_back(i);
        break;
      }
      const std::uint64_t* other = &packed[first_row[static_cast<std::size_t>(u)] * row_words];
      if (std::equal(key, key + row_words, other)) {
        sample_point_[i] = u;
        break;
      }
      slot = (slot + 1) & (table_size - 1);
    }
  }
  n_points_ = first_row.size();
  n_words_ = Bitset::word_count(n_points_);

  point_class_weight_.assign(n_points_ * K, 0.0);
  for (std::size_t i = 0; i < n_samples; ++i) {
    point_class_weight_[static_cast<std::size_t>(sample_point_[i]) * K +
                        static_cast<std::size_t>(y[i])] += weights[i];
    total_weight_ += weights[i];
  }
  // every objective is divided by the total weight: none (0 rows or all weights 0) would make
  // it NaN, and a total that overflows would make every objective 0 or NaN
  if (!(total_weight_ > 0.0) || !std::isfinite(total_weight_))
    throw std::invalid_argument("sample weights must have a positive, finite sum");

  // the packed rows of 64 points at a time, transposed 64 x 64 bits: one word of 64 features'
  // bitsets each (bit by bit from X, each row wrote to every feature's bitset: 1.2 s on
  // 20,000 x 3,000 before any search could check its time limit)
  features_.assign(n_features, Bitset(n_points_));
  std::uint64_t block[64];
  for (std::size_t u0 = 0; u0 < n_points_; u0 += 64) {
    const std::size_t rows = std::min<std::size_t>(64, n_points_ - u0);
    for (std::size_t r = 0; r < row_words; ++r) {
      for (std::size_t t = 0; t < 64; ++t)
        block[t] = t < rows ? packed[first_row[u0 + t] * row_words + r] : 0;
      transpose64(block);
      const std::size_t last = std::min<std::size_t>(64, n_features - std::min(n_features, r * 64));
      for (std::size_t b = 0; b < last; ++b) features_[r * 64 + b].data()[u0 >> 6] = block[b];
    }
  }
  all_ = Bitset(n_points_, true);

  point_minority_.assign(n_points_, 0.0);
  for (std::size_t u = 0; u < n_points_; ++u) {
    const double* cw = &point_class_weight_[u * K];
    point_minority_[u] = misclassified(cw, n_classes_);
    minority_total_ += point_minority_[u];
  }

  class_present_.reserve(K);
  class_sum_.reserve(K);
  std::vector<double> column(n_points_);
  for (std::size_t k = 0; k < K; ++k) {
    Bitset present(n_points_);
    for (std::size_t u = 0; u < n_points_; ++u) {
      column[u] = point_class_weight_[u * K + k];
      if (column[u] > 0.0) present.set(u);
    }
    class_present_.push_back(std::move(present));
    class_sum_.emplace_back(column, n_points_, popcount_);
    integral_ = integral_ && class_sum_.back().uses_planes();
  }
  minority_sum_ = PointSum(point_minority_, n_points_, popcount_);

  total_support_ = total_weight_;
  if (support) {
    std::vector<double> point_support(n_points_, 0.0);
    double total = 0.0;
    for (std::size_t i = 0; i < n_samples; ++i) {
      point_support[static_cast<std::size_t>(sample_point_[i])] += support[i];
      total += support[i];
    }
    if (!(total > 0.0) || !std::isfinite(total))
      throw std::invalid_argument("support weights must have a positive, finite sum");
    separate_support_ = true;
    total_support_ = total;
    support_sum_ = PointSum(point_support, n_points_, popcount_);
  }
}

void Problem::class_weights(const std::uint64_t* s, double* out) const {
  for (int k = 0; k < n_classes_; ++k) out[k] = class_sum_[static_cast<std::size_t>(k)].sum(s);
}

void Problem::class_weights_and(const std::uint64_t* s, const std::uint64_t* mask,
                                double* out) const {
  for (int k = 0; k < n_classes_; ++k)
    out[k] = class_sum_[static_cast<std::size_t>(k)].sum_and(s, mask);
}

double Problem::split_class_weights(const std::uint64_t* s, const std::uint64_t* mask,
                                    const double* parent, double* right, double* left) const {
  class_weights_and(s, mask, right);
  double n_right = 0.0;
  for (int k = 0; k < n_classes_; ++k) {
    n_right += right[k];
    left[k] = parent[k] - right[k];
  }
  return n_right;
}

std::size_t Problem::n_class_planes() const {
  std::size_t total = 0;
  for (const auto& c : class_sum_) total += c.n_planes();
  return total;
}

}  // namespace odtkit

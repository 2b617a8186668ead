// Preprocessed search instance shared by every native search (dp, bnb, corels).
//
// Identical feature rows are collapsed into equivalence classes ("points"); every bitset in the
// searches ranges over points, not samples, so a support of U points costs ceil(U/64) words.
// Each point carries its per-class sample weight; the equivalent-points minority of a point is
// its total weight minus its largest class weight (every tree labels the whole point alike, so
// it misclassifies at least that much: OSDT Thm B.2;
// docs/formulations-search-and-pruning.md §2.2).
//
// Weighted sums over a support use *bit-planes* when every per-point weight is an integer below
// 2^40 (always true for unweighted data and for integer sample weights): plane b of a quantity
// holds the points whose integer value has bit b set, so
//     sum_{u in s} value(u) = sum_b 2^b * popcount(s & plane_b),
// which is exact, branch-free and word-parallel. Unweighted data without duplicate rows needs one
// plane per class (the class bitsets themselves); heavy duplication (e.g. COMPAS, a few hundred
// points for ~7000 rows) needs ~log2(max multiplicity) planes but then U, hence W, is tiny.
// Fractional weights fall back to iterating the set bits and adding doubles.
// The plane popcounts run in the Problem's PopcountMode (popcount.hpp), fixed at construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bitset.hpp"
#include "popcount.hpp"

namespace odtkit {

// A per-point nonnegative quantity whose sums over supports are computed fast (see above).
class PointSum {
 public:
  PointSum() = default;
  PointSum(const std::vector<double>& values, std::size_t n_points, PopcountMode mode);

  // sum over the points set in `s`
  double sum(const std::uint64_t* s) const;
  // sum over the points set in `s & mask`
  double sum_and(const std::uint64_t* s, const std::uint64_t* mask) const;
  bool uses_planes() const { return use_planes_; }
  std::size_t n_planes() const { return plane_bit_.size(); }
  const std::vector<double>& values() const { return values_; }

 private:
  double sum_bits(const std::uint64_t* s, const std::uint64_t* mask) const;

  std::size_t n_words_ = 0;
  bool use_planes_ = false;
  PopcountMode mode_ = PopcountMode::portable;
  std::vector<std::uint64_t> planes_;  // kept planes, n_words_ each; only planes with a bit set
  std::vector<int> plane_bit_;         // the power of two of each kept plane
  std::vector<double> values_;
};

// Support weights. A minimum leaf support (SearchConfig::min_leaf_weight) is measured in the
// rows' weights. Usually those are the objective's weights, and a support's weight is the sum
// of its class weights. A Problem may instead carry a separate per-row support weight (a cost
// objective searched on relabelled, reweighted rows keeps its leaf support in the original
// weights): summed per point like the class weights, read only by the minimum leaf support's
// checks (support(), support_and(), total_support()).
class Problem {
 public:
  // X: row-major n x p bools; y: n class codes in [0, K); w: n nonnegative finite weights;
  // support: null (the weights themselves) or n nonnegative finite support weights with a
  // positive sum. Throws std::invalid_argument on labels out of range or bad weights.
  Problem(const bool* X, std::size_t n_samples, std::size_t n_features, const std::int32_t* y,
          const double* weights, int n_classes,
          PopcountMode popcount = parse_popcount_mode("auto"), const double* support = nullptr);

  std::size_t n_samples() const { return n_samples_; }
  std::size_t n_points() const { return n_points_; }
  std::size_t n_features() const { return n_features_; }
  int n_classes() const { return n_classes_; }
  std::size_t n_words() const { return n_words_; }
  double total_weight() const { return total_weight_; }
  // sum over all points of the equivalent-points minority (a lower bound on any tree's mistakes)
  double minority_total() const { return minority_total_; }
  // true when all class weights are integers (bit-plane sums, exact integer arithmetic)
  bool integral() const { return integral_; }
  // the popcount kernels every search on this problem uses
  PopcountMode popcount_mode() const { return popcount_; }

  // points with x_j = 1 (the x_j = 0 side of a support s is s & ~feature(j))
  const Bitset& feature(std::size_t j) const { return features_[j]; }
  const std::uint64_t* feature_words(std::size_t j) const { return features_[j].data(); }
  const Bitset& all_points() const { return all_; }
  // points whose class weights are all zero except one (pure points) are not special-cased.
  const Bitset& point_has_class(int k) const { return class_present_[k]; }

  // per-point data, row-major (point u, class k) at u * K + k
  const std::vector<double>& point_class_weight() const { return point_class_weight_; }
  const std::vector<double>& point_minority() const { return point_minority_; }
  // sample index -> point index
  const std::vector<std::int32_t>& sample_point() const { return sample_point_; }

  // per-class weight over support s, written to out[0..K)
  void class_weights(const std::uint64_t* s, double* out) const;
  // per-class weight over s & mask
  void class_weights_and(const std::uint64_t* s, const std::uint64_t* mask, double* out) const;
  // split s by mask: class weights of s & mask into `right`, of s & ~mask into `left`
  // (`parent` = class weights of s); returns the total weight of the right side
  double split_class_weights(const std::uint64_t* s, const std::uint64_t* mask,
                             const double* parent, double* right, double* left) const;
  // equivalent-points minority mass over s / over s & mask
  double minority(const std::uint64_t* s) const { return minority_sum_.sum(s); }
  double minority_and(const std::uint64_t* s, const std::uint64_t* mask) const {
    return minority_sum_.sum_and(s, mask);
  }
  // bit-planes used by class sums (for kernel-efficiency reports)
  std::size_t n_class_planes() const;

  // Whether the rows carry support weights apart from the objective's (see above).
  bool separate_support() const { return separate_support_; }
  // Total support weight: total_weight() without separate support weights.
  double total_support() const { return total_support_; }
  // Support weight of s, whose class weights are cw (their sum without separate weights: no
  // extra pass over s in the common case).
  double support(const std::uint64_t* s, const double* cw) const {
    if (separate_support_) return support_sum_.sum(s);
    double n = 0.0;
    for (int k = 0; k < n_classes_; ++k) n += cw[k];
    return n;
  }
  // Support weight of s & mask, whose class weights sum to `weight`.
  double support_and(const std::uint64_t* s, const std::uint64_t* mask, double weight) const {
    return separate_support_ ? support_sum_.sum_and(s, mask) : weight;
  }
  // per-point support weights (empty without separate ones)
  const std::vector<double>& point_support() const { return support_sum_.values(); }

 private:
  std::size_t n_samples_ = 0, n_points_ = 0, n_features_ = 0, n_words_ = 0;
  int n_classes_ = 0;
  PopcountMode popcount_ = PopcountMode::portable;
  double total_weight_ = 0.0, minority_total_ = 0.0;
  bool integral_ = true;
  std::vector<Bitset> features_;
  std::vector<Bitset> class_present_;
  Bitset all_;
  std::vector<double> point_class_weight_;
  std::vector<double> point_minority_;
  std::vector<std::int32_t> sample_point_;
  std::vector<PointSum> class_sum_;
  PointSum minority_sum_;
  bool separate_support_ = false;
  double total_support_ = 0.0;
  PointSum support_sum_;  // per-point support weights (separate_support_ only)
};

// Helpers on a vector of K class weights (ties -> smallest class code, the library convention).
inline int majority_class(const double* cw, int K) {
  int best = 0;
  for (int k = 1; k < K; ++k)
    if (cw[k] > cw[best]) best = k;
  return best;
}
inline double misclassified(const double* cw, int K) {
  double total = 0.0, top = cw[0];
  for (int k = 0; k < K; ++k) {
    total += cw[k];
    if (cw[k] > top) top = cw[k];
  }
  return total - top;
}

}  // namespace odtkit

#include "rashomon.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace odtkit {

namespace {

// pairs of child keys tried between two checks of the limits inside one node's build
constexpr std::size_t kCheckStride = 4096;
// cells of one dense table of a count-only build (16 bytes each: 64 MB at most)
constexpr std::size_t kDenseCells = std::size_t{1} << 22;

// A block found while building a node, before its key has its final position.
struct Pending {
  std::uint32_t key;  // position in the node's keys in order of discovery
  int option;
  std::uint32_t left, right;
};

// (misclassified, leaves, cost): the identity of a key
using KeyId = std::tuple<double, int, int>;

struct KeyHash {
  std::size_t operator()(const KeyId& key) const {
    std::uint64_t bits;
    std::memcpy(&bits, &std::get<0>(key), sizeof bits);
    bits ^= static_cast<std::uint64_t>(std::get<1>(key)) * 0x9e3779b97f4a7c15ULL;
    bits ^= static_cast<std::uint64_t>(std::get<2>(key)) * 0xd6e8feb86659fd93ULL;
    bits *= 0xbf58476d1ce4e5b9ULL;
    return static_cast<std::size_t>(bits ^ (bits >> 29));
  }
};

// The optimum of a depth-two node of two classes (class weights w0, w1) from its pair counts F
// (Depth2Solver::pair_counts: M x M x 2, upper triangle i <= j). Each pair i < j gives the
// class weights of its four cells (x_i, x_j) at once, and with them a one-split tree on both
// cells of x_i (split on j) and on both cells of x_j (split on i): half the leaves of scoring
// every root's two sides apart, and branch-free. A leaf's value is total - top + Lambda as in
// the recursion: on integer weights (the only ones this runs on) min(c0, c1) + Lambda is that
// very number, every cell's weight is exact whatever the order it is derived in, and a sum of
// two values is the same number in either order, so the optimum equals the recursion's to the
// last bit. An empty side (weight <= zero) makes no split. The scratch arrays: M each.
double depth2_two_classes(const double* F, std::size_t M, double w0, double w1, double penalty,
                          double zero, double* __restrict best_zero, double* __restrict best_one,
                          double* __restrict diag0, double* __restrict diag1,
                          double* __restrict cell_one, double* __restrict cell_zero) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < M; ++j) {
    diag0[j] = F[(j * M + j) * 2];
    diag1[j] = F[(j * M + j) * 2 + 1];
    best_zero[j] = best_one[j] = kInf;
  }
  for (std::size_t i = 0; i + 1 < M; ++i) {
    const double e0 = diag0[i], e1 = diag1[i];  // x_i = 1
    const double z0 = w0 - e0, z1 = w1 - e1;    // x_i = 0
    const double* __restrict row = F + i * M * 2;
    // one simple loop over j > i (the compiler's vectors): an empty cell adds infinity to
    // the splits it is a side of (x + 0.0 is x, so the others keep their exact values)
    for (std::size_t j = i + 1; j < M; ++j) {
      const double a0 = row[2 * j], a1 = row[2 * j + 1];  // x_i = 1, x_j = 1
      const double b0 = e0 - a0, b1 = e1 - a1;            // x_i = 1, x_j = 0
      const double c0 = diag0[j] - a0, c1 = diag1[j] - a1;  // x_i = 0, x_j = 1
      const double d0 = z0 - c0, d1 = z1 - c1;            // x_i = 0, x_j = 0
      const double la = (a0 < a1 ? a0 : a1) + penalty, lb = (b0 < b1 ? b0 : b1) + penalty;
      const double lc = (c0 < c1 ? c0 : c1) + penalty, ld = (d0 < d1 ? d0 : d1) + penalty;
      const double pa = a0 + a1 > zero ? 0.0 : kInf, pb = b0 + b1 > zero ? 0.0 : kInf;
      const double pc = c0 + c1 > zero ? 0.0 : kInf, pd = d0 + d1 > zero ? 0.0 : kInf;
      cell_one[j] = (la + lb) + (pa + pb);   // x_i = 1 split on j
      cell_zero[j] = (lc + ld) + (pc + pd);  // x_i = 0 split on j
      const double j1 = (la + lc) + (pa + pc), j0 = (lb + ld) + (pb + pd);  // x_j split on i
      best_one[j] = j1 < best_one[j] ? j1 : best_one[j];
      best_zero[j] = j0 < best_zero[j] ? j0 : best_zero[j];
    }
    double one = best_one[i], none = best_zero[i];
    for (std::size_t j = i + 1; j < M; ++j) {
      one = cell_one[j] < one ? cell_one[j] : one;
      none = cell_zero[j] < none ? cell_zero[j] : none;
    }
    best_one[i] = one;
    best_zero[i] = none;
  }
  const double total = w0 + w1;
  double best = std::min(w0, w1) + penalty;  // the leaf
  for (std::size_t i = 0; i < M; ++i) {
    const double e0 = diag0[i], e1 = diag1[i], z0 = w0 - e0, z1 = w1 - e1;
    const double w_one = e0 + e1;
    // split_on's rule: a side this light is empty, and a split with an empty side is none
    if (w_one <= zero || total - w_one <= zero) continue;
    const double v0 = std::min(std::min(z0, z1) + penalty, best_zero[i]);
    const double v1 = std::min(std::min(e0, e1) + penalty, best_one[i]);
    best = std::min(best, v0 + v1);
  }
  return best;
}

// depth2_two_classes in 16-bit integers, for integer class weights of total <= kDepth2Small
// and an integral Lambda: every value of a depth-<=2 tree is then an integer below 2^53, each
// sum the recursion forms is exact, and comparing misclassified weights of trees with the same
// number of leaves decides what comparing their values does. So the pair loop keeps, for each
// cell x_i = side, only the least misclassified weight of a one-split tree on it (two leaves),
// eight features to a 128-bit vector (the double loop held two, and its running minima did
// not vectorize), and the values are formed once per root at the end: the same numbers, to
// the last bit, as the double kernel's and the recursion's. Splits with an empty side are not
// told apart here: such a "split" misclassifies what the leaf on its cell does, with one leaf
// more, so it is worth the leaf plus Lambda and never goes below the leaf, which every minimum
// below includes (the same holds for the cells past M that pad a row to whole vectors). Every
// weight and every sum of two cells is at most the total, so 16 bits hold them.
constexpr double kDepth2Small = 16000.0;
constexpr std::size_t kLanes = 8;  // int16 per 128-bit vector
// Its input: the pair counts in Depth2Solver::pair_counts16's layout, class k of the pair
// i <= j at [(2 i + k) * stride + j], each row with at least kLanes zero cells past M, so a
// row is swept in whole vectors (no scalar tail; a cell past M is empty, see above). Scratch:
// 2 * stride int16.
double depth2_two_classes_small(const std::int16_t* counts, std::size_t stride, std::size_t M,
                                double w0, double w1, double penalty, std::int16_t* scratch) {
  using i16 = std::int16_t;
  constexpr i16 kEmpty = 16383;  // above every sum: no one-split tree on the cell
  i16* __restrict best_zero = scratch;
  i16* __restrict best_one = scratch + stride;
  const auto diag0 = [&](std::size_t j) { return counts[2 * j * stride + j]; };
  const auto diag1 = [&](std::size_t j) { return counts[(2 * j + 1) * stride + j]; };
  for (std::size_t j = 0; j < stride; ++j) best_zero[j] = best_one[j] = kEmpty;
  const auto W0 = static_cast<i16>(w0), W1 = static_cast<i16>(w1);
  const auto low = [](i16 x, i16 y) { return x < y ? x : y; };
  // the diagonal of the pairs j > i, gathered once (a row reads it from i + 1 on)
  i16* __restrict all0 = scratch + 2 * stride;
  i16* __restrict all1 = scratch + 3 * stride;
  for (std::size_t j = 0; j < stride; ++j) {
    all0[j] = j < M ? diag0(j) : i16{0};
    all1[j] = j < M ? diag1(j) : i16{0};
  }
  for (std::size_t i = 0; i + 1 < M; ++i) {
    const i16 e0 = all0[i], e1 = all1[i];  // x_i = 1
    const auto z0 = static_cast<i16>(W0 - e0), z1 = static_cast<i16>(W1 - e1);
    const i16* __restrict row0 = counts + 2 * i * stride;
    const i16* __restrict row1 = counts + (2 * i + 1) * stride;
    i16 one_block[kLanes], none_block[kLanes];
    for (std::size_t t = 0; t < kLanes; ++t) one_block[t] = none_block[t] = kEmpty;
    for (std::size_t start = i + 1; start < M; start += kLanes) {
      for (std::size_t t = 0; t < kLanes; ++t) {
        const std::size_t j = start + t;
        const i16 a0 = row0[j], a1 = row1[j];  // x_i = 1, x_j = 1
        const auto b0 = static_cast<i16>(e0 - a0), b1 = static_cast<i16>(e1 - a1);
        const auto c0 = static_cast<i16>(all0[j] - a0), c1 = static_cast<i16>(all1[j] - a1);
        const auto d0 = static_cast<i16>(z0 - c0), d1 = static_cast<i16>(z1 - c1);
        const i16 ma = low(a0, a1), mb = low(b0, b1), mc = low(c0, c1), md = low(d0, d1);
        one_block[t] = low(one_block[t], static_cast<i16>(ma + mb));    // x_i = 1 split on j
        none_block[t] = low(none_block[t], static_cast<i16>(mc + md));  // x_i = 0 split on j
        best_one[j] = low(best_one[j], static_cast<i16>(ma + mc));      // x_j = 1 split on i
        best_zero[j] = low(best_zero[j], static_cast<i16>(mb + md));    // x_j = 0 split on i
      }
    }
    // the padding cells written above are reset: the next row's block may start there
    for (std::size_t j = M; j < stride; ++j) best_zero[j] = best_one[j] = kEmpty;
    i16 one = best_one[i], none = best_zero[i];
    for (std::size_t t = 0; t < kLanes; ++t) {
      one = low(one, one_block[t]);
      none = low(none, none_block[t]);
    }
    best_one[i] = one;
    best_zero[i] = none;
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double two = 2 * penalty;
  double best = std::min(w0, w1) + penalty;  // the leaf
  for (std::size_t i = 0; i < M; ++i) {
    const double e0 = all0[i], e1 = all1[i], z0 = w0 - e0, z1 = w1 - e1;
    if (e0 + e1 == 0.0 || z0 + z1 == 0.0) continue;  // an empty side: no split
    const double split0 = best_zero[i] < kEmpty ? best_zero[i] + two : kInf;
    const double split1 = best_one[i] < kEmpty ? best_one[i] + two : kInf;
    const double v0 = std::min(std::min(z0, z1) + penalty, split0);
    const double v1 = std::min(std::min(e0, e1) + penalty, split1);
    best = std::min(best, v0 + v1);
  }
  return best;
}

}  // namespace

std::uint64_t RashomonSet::hash(const std::uint64_t* support, int depth) const {
  // four independent lanes: a word costs a multiply in one lane, and the lanes' chains run
  // side by side (one chain over the 47 words of 3,000 rows was a tenth of the planted
  // table's certification); a collision costs only the comparison of the supports
  constexpr std::uint64_t kOdd = 0x9e3779b97f4a7c15ULL;
  std::uint64_t h[4] = {static_cast<std::uint64_t>(depth) + 1, 0x243f6a8885a308d3ULL,
                        0x13198a2e03707344ULL, 0xa4093822299f31d0ULL};
  std::size_t i = 0;
  for (; i + 4 <= n_words_; i += 4)
    for (int lane = 0; lane < 4; ++lane) h[lane] = (h[lane] ^ support[i + lane]) * kOdd;
  for (int lane = 0; i < n_words_; ++i, ++lane) h[lane] = (h[lane] ^ support[i]) * kOdd;
  std::uint64_t out = h[0] ^ (h[1] << 17 | h[1] >> 47) ^ (h[2] << 31 | h[2] >> 33) ^
                      (h[3] << 47 | h[3] >> 17);
  // splitmix64's finalizer: every bit of the lanes reaches the table's low bits
  out = (out ^ (out >> 30)) * 0xbf58476d1ce4e5b9ULL;
  out = (out ^ (out >> 27)) * 0x94d049bb133111ebULL;
  return out ^ (out >> 31);
}

RashomonSet::RashomonSet(const Problem& problem, const SearchConfig& config, double bound,
                         bool majority_only, std::function<bool()> interrupted,
                         RashomonRules rules, bool count_only)
    : RashomonSet(problem, config, majority_only, std::move(rules), count_only) {
  build_to(problem, config, bound, std::move(interrupted));
}

RashomonSet::RashomonSet(const Problem& problem, const SearchConfig& config, bool majority_only,
                         RashomonRules rules, bool count_only)
    : n_words_(problem.n_words()), count_only_(count_only), rules_(std::move(rules)),
      slot_hash_(64, 0), slot_id_(64, -1) {
  config.validate();
  const std::size_t p = problem.n_features();
  if (!rules_.allowed.empty() && rules_.allowed.size() != p)
    throw std::invalid_argument("allowed must have one entry per feature");
  if (!rules_.split_costs.empty() && rules_.split_costs.size() != p)
    throw std::invalid_argument("split_costs must have one entry per feature");
  for (int c : rules_.split_costs)
    if (c < 0) throw std::invalid_argument("split costs must be >= 0");
  if (rules_.budget < -1) throw std::invalid_argument("budget must be >= 0 (or -1: none)");
  n_classes_ = problem.n_classes();
  total_weight_ = problem.total_weight();
  penalty_ = config.lam * total_weight_;
  tolerance_ = count_tolerance(total_weight_);
  zero_weight_ = zero_weight(total_weight_);
  slack_ = 1e-3 * tolerance_;
  majority_only_ = majority_only;
  min_leaf_ = config.min_leaf_weight * total_weight_;  // the dp's rule (dp.cpp)
  const int n_features = static_cast<int>(problem.n_features());
  // a feature never repeats usefully on a path (its second use leaves a side empty), so
  // "unlimited" is the number of features
  depth_ = config.max_depth < 0 ? n_features : std::min(config.max_depth, n_features);
  if (count_only_) scratch_.resize(static_cast<std::size_t>(depth_) + 1);
  // the pair counts' tables may take at most half of a memory limit (as in the dp)
  use_depth2_ = problem.integral() && rules_.allowed.empty() && rules_.budget < 0 &&
                !(min_leaf_ > 0.0) && depth_ >= 2 &&
                (!(config.memory_limit_mb > 0) ||
                 static_cast<double>(Depth2Solver::upfront_bytes(problem)) <=
                     0.5 * config.memory_limit_mb * 1048576.0);
  // Lambda integral (lam = 0 included) and below 2^40: every value is an exact integer
  small_integers_ = use_depth2_ && n_classes_ == 2 && total_weight_ <= kDepth2Small &&
                    penalty_ == std::floor(penalty_) && penalty_ < 1099511627776.0;
}

template <class Phase>
void RashomonSet::run(const Problem& problem, const SearchConfig& config,
                      std::function<bool()> interrupted, Phase&& phase) {
  if (problem.n_words() != n_words_ || problem.total_weight() != total_weight_)
    throw std::invalid_argument("the set was prepared for another problem");
  Budget budget(config, std::move(interrupted));
  problem_ = &problem;
  budget_ = &budget;
  catch_out_of_memory(budget, phase);
  depth2_.reset();  // it refers to the problem, which only a phase may read
  complete_ = !budget.stopped();
  status_ = status_name(budget.status());
  seconds_ += budget.elapsed();
  peak_memory_mb_ = std::max(peak_memory_mb_, budget.peak_memory_mb());
  budget_ = nullptr;
  problem_ = nullptr;
}

void RashomonSet::build_to(const Problem& problem, const SearchConfig& config, double bound,
                           std::function<bool()> interrupted) {
  config.validate();
  if (!std::isfinite(bound) || bound < 0.0)
    throw std::invalid_argument("bound must be a finite number >= 0");
  if (built_) throw std::logic_error("RashomonSet: the set is built already");
  built_ = true;
  run(problem, config, std::move(interrupted), [&] {
    if (root_ < 0) root_ = node_id(problem.all_points().data(), depth_);
    ensure(root_, bound * total_weight_ + tolerance_);
  });
}

bool RashomonSet::certify(const Problem& problem, const SearchConfig& config, double epsilon,
                          bool absolute, std::function<bool()> interrupted) {
  config.validate();
  if (!std::isfinite(epsilon) || epsilon < 0.0)
    throw std::invalid_argument("epsilon must be a finite number >= 0");
  if (built_ || root_ >= 0) throw std::logic_error("RashomonSet: certify comes first, once");
  if (!rules_.allowed.empty() || rules_.budget >= 0 || min_leaf_ > 0.0)
    throw std::invalid_argument("certify takes no rules: the search certifies a constrained OPT");
  certified_ = false;
  run(problem, config, std::move(interrupted), [&] {
    const std::uint64_t* all = problem.all_points().data();
    std::vector<double> weight(static_cast<std::size_t>(n_classes_));
    problem.class_weights(all, weight.data());
    root_ = materialize(all, depth_, weight.data());
    // the budget a root incumbent `upper` would give the build (count units), a hair more
    const double per_unit = absolute ? 1.0 : 1.0 + epsilon;
    const double extra = (absolute ? epsilon * total_weight_ : 0.0) + tolerance_ + 4 * slack_;
    solve_root(root_, per_unit, extra);
    if (budget_->stopped() || !nodes_[root_].exact) return;
    optimal_code_.clear();
    extract(all, depth_, nodes_[root_].upper, optimal_code_);
    certified_ = !budget_->stopped();
  });
  return certified_;
}

int RashomonSet::find_node(const std::uint64_t* support, int depth) const {
  return find_node(support, depth, hash(support, depth));
}

int RashomonSet::find_node(const std::uint64_t* support, int depth, std::uint64_t h) const {
  const std::size_t mask = slot_id_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const int id = slot_id_[i];
    if (id < 0) return -1;
    if (slot_hash_[i] == h && nodes_[id].depth == depth &&
        std::equal(support, support + n_words_, nodes_[id].support.data()))
      return id;
  }
}

int RashomonSet::node_id(const std::uint64_t* support, int depth) {
  const std::uint64_t h = hash(support, depth);
  const int found = find_node(support, depth, h);
  return found >= 0 ? found : insert_node(support, depth, h);
}

int RashomonSet::insert_node(const std::uint64_t* support, int depth, std::uint64_t h) {
  if (2 * (nodes_.size() + 1) > slot_id_.size()) {
    // double the table; the stored hashes place every entry again without rehashing words
    std::vector<std::uint64_t> hashes(slot_hash_.size() * 2, 0);
    std::vector<int> ids(slot_id_.size() * 2, -1);
    const std::size_t mask = ids.size() - 1;
    for (std::size_t i = 0; i < slot_id_.size(); ++i) {
      if (slot_id_[i] < 0) continue;
      std::size_t j = slot_hash_[i] & mask;
      while (ids[j] >= 0) j = (j + 1) & mask;
      ids[j] = slot_id_[i];
      hashes[j] = slot_hash_[i];
    }
    slot_hash_.swap(hashes);
    slot_id_.swap(ids);
  }
  Node& node = nodes_.emplace_back();
  node.support.assign(support, support + n_words_);
  node.depth = depth;
  const int id = static_cast<int>(nodes_.size() - 1);
  const std::size_t mask = slot_id_.size() - 1;
  std::size_t i = h & mask;
  while (slot_id_[i] >= 0) i = (i + 1) & mask;
  slot_id_[i] = id;
  slot_hash_[i] = h;
  block_bytes_ += sizeof(Node) + n_words_ * 8;
  return id;
}

std::size_t RashomonSet::bytes_in_use() const {
  return block_bytes_ + transient_bytes_ + scratch_bytes_ + (depth2_ ? depth2_->bytes() : 0) +
         slot_id_.size() * (sizeof(int) + sizeof(std::uint64_t));
}

bool RashomonSet::split_on(const std::uint64_t* support, std::size_t feature,
                           const double* weight, double total, double* left_weight,
                           double* right_weight, std::uint64_t* left,
                           std::uint64_t* right) const {
  if (!rules_.allowed.empty() && !rules_.allowed[feature]) return false;
  if (rules_.budget >= 0 && !rules_.split_costs.empty() &&
      rules_.split_costs[feature] > rules_.budget)
    return false;
  const std::uint64_t* mask = problem_->feature_words(feature);
  const double right_total =
      problem_->split_class_weights(support, mask, weight, right_weight, left_weight);
  // the dp's rule: a side this light is empty, and a split with an empty side is no split
  if (right_total <= zero_weight_ || total - right_total <= zero_weight_) return false;
  // every leaf below a side gets at most the side's weight: a side below the support has no
  // tree (slack_: the leaf itself decides, on its own sum, in build)
  if (min_leaf_ > 0.0 &&
      (right_total < min_leaf_ - slack_ || total - right_total < min_leaf_ - slack_))
    return false;
  for (std::size_t w = 0; w < n_words_; ++w) {
    right[w] = support[w] & mask[w];
    left[w] = support[w] & ~mask[w];
  }
  return true;
}

RashomonSet::Peek RashomonSet::peek(const std::uint64_t* support, int depth,
                                    const double* class_weight) const {
  const std::uint64_t h = hash(support, depth);
  const int id = find_node(support, depth, h);
  if (id >= 0 && nodes_[id].prepared) {
    const Node& node = nodes_[id];
    return {id, node.lower, node.exact, h};
  }
  Peek out = initial(support, depth, class_weight);
  out.id = id;
  out.hash = h;
  return out;
}

RashomonSet::Peek RashomonSet::initial(const std::uint64_t* support, int depth,
                                       const double* class_weight) const {
  double total = 0.0, top = 0.0;
  for (int k = 0; k < n_classes_; ++k) {
    total += class_weight[k];
    top = std::max(top, class_weight[k]);
  }
  const double leaf = total - top + penalty_;  // the best leaf
  // any other tree has two leaves, each point misclassified at least by its equivalent-points
  // minority
  if (depth == 0) return {-1, leaf, true, 0};
  const double two_leaves = problem_->minority(support) + 2 * penalty_;
  if (two_leaves >= leaf - slack_) return {-1, leaf, true, 0};
  return {-1, two_leaves, false, 0};
}

int RashomonSet::materialize(const std::uint64_t* support, int depth,
                             const double* class_weight, const Peek* known) {
  // `known`: this support's peek, with nothing inserted at its depth since (so an absent
  // node is still absent): no second lookup
  int id;
  if (known == nullptr) {
    id = node_id(support, depth);
  } else if (known->id >= 0) {
    id = known->id;
  } else {
    id = insert_node(support, depth, known->hash);
  }
  Node& node = nodes_[id];
  if (!node.prepared) {
    const Peek first = known != nullptr && known->id < 0 ? *known
                                                         : initial(support, depth, class_weight);
    double total = 0.0, top = 0.0;
    for (int k = 0; k < n_classes_; ++k) {
      total += class_weight[k];
      top = std::max(top, class_weight[k]);
    }
    node.upper = total - top + penalty_;
    node.lower = first.exact ? node.upper : first.lower;
    node.exact = first.exact;
    node.prepared = true;
  }
  return id;
}

// Bounded optimum (the dp's recursion with bounds, docs/formulations-search-and-pruning.md
// §3.8): afterwards the node is exact, or its lower bound exceeds `cap`. The Rashomon build
// asks it for both children of a split before listing either, so each child is listed with the
// budget its sibling's optimum leaves, not a loose bound's.
void RashomonSet::solve_optimum(int id, double cap) {
  {
    const Node& node = nodes_[id];
    if (node.exact || node.lower > cap) return;
  }
  Budget& limits = *budget_;
  if (limits.tick(bytes_in_use(), (n_words_ * 8 + sizeof(Node)) * 4)) return;
  if (nodes_[id].depth == 2 && use_depth2_ && solve_depth2(id)) return;
  Node& node = nodes_[id];
  const std::uint64_t* support = node.support.data();
  const int K = n_classes_;
  std::vector<double> weight(K), right_weight(K), left_weight(K);
  problem_->class_weights(support, weight.data());
  double total = 0.0;
  for (double w : weight) total += w;
  std::vector<std::uint64_t> left(n_words_), right(n_words_);
  double upper = node.upper;
  double split_lower = std::numeric_limits<double>::infinity();
  // the splits in the order of their one-split trees (see order_splits)
  const std::vector<std::pair<double, int>> order =
      order_splits(support, weight.data(), total, left_weight.data(), right_weight.data(),
                   left.data(), right.data());
  for (const auto& [ignored, feature] : order) {
    if (limits.stopped()) break;
    const auto j = static_cast<std::size_t>(feature);
    split_on(support, j, weight.data(), total, left_weight.data(), right_weight.data(),
             left.data(), right.data());
    const Peek left_peek = peek(left.data(), node.depth - 1, left_weight.data());
    const Peek right_peek = peek(right.data(), node.depth - 1, right_weight.data());
    const double limit = std::min(upper, cap);
    double split = left_peek.lower + right_peek.lower;
    if (split >= upper - slack_) continue;  // cannot improve on the incumbent
    if (split > limit) {
      split_lower = std::min(split_lower, split);
      continue;
    }
    // a child is a memo entry only once it must be searched (most splits stop above)
    double left_best = left_peek.lower;
    if (!left_peek.exact) {
      const int left_id =
          materialize(left.data(), node.depth - 1, left_weight.data(), &left_peek);
      solve_optimum(left_id, limit - right_peek.lower);
      if (!nodes_[left_id].exact) {
        split_lower = std::min(split_lower, nodes_[left_id].lower + right_peek.lower);
        continue;
      }
      left_best = nodes_[left_id].upper;
    }
    double right_best = right_peek.lower;
    if (!right_peek.exact) {
      const int right_id =
          materialize(right.data(), node.depth - 1, right_weight.data(), &right_peek);
      solve_optimum(right_id, limit - left_best);
      if (!nodes_[right_id].exact) {
        split_lower = std::min(split_lower, left_best + nodes_[right_id].lower);
        continue;
      }
      right_best = nodes_[right_id].upper;
    }
    split = left_best + right_best;
    if (split < upper - slack_) upper = split;
  }
  // every split not solved has a lower bound above min(upper, cap) at the time it was skipped
  node.upper = upper;
  node.lower = std::max(node.lower, std::min(upper, split_lower));
  // sums of the same leaves in another order differ in the last bits: equal within slack_
  node.exact = node.lower >= node.upper - slack_;
  if (node.exact) node.lower = node.upper;
}

std::vector<std::pair<double, int>> RashomonSet::order_splits(
    const std::uint64_t* support, const double* weight, double total, double* left_weight,
    double* right_weight, std::uint64_t* left, std::uint64_t* right) const {
  // The dp's order: by the value of the one-split tree (two leaves), then by feature. The
  // first splits give a close incumbent early, and every later one is searched under it.
  const int K = n_classes_;
  const auto leaf_of = [&](const double* c) {
    double sum = 0.0, top = 0.0;
    for (int k = 0; k < K; ++k) {
      sum += c[k];
      top = std::max(top, c[k]);
    }
    return sum - top + penalty_;
  };
  std::vector<std::pair<double, int>> order;
  const std::size_t p = problem_->n_features();
  for (std::size_t j = 0; j < p; ++j)
    if (split_on(support, j, weight, total, left_weight, right_weight, left, right))
      order.emplace_back(leaf_of(left_weight) + leaf_of(right_weight), static_cast<int>(j));
  std::sort(order.begin(), order.end());
  return order;
}

void RashomonSet::solve_root(int id, double per_unit, double extra) {
  if (nodes_[id].exact) return;
  Budget& limits = *budget_;
  if (limits.tick(bytes_in_use(), (n_words_ * 8 + sizeof(Node)) * 4)) return;
  const std::uint64_t* support = nodes_[id].support.data();
  const int depth = nodes_[id].depth;
  const int K = n_classes_;
  std::vector<double> weight(K), right_weight(K), left_weight(K);
  problem_->class_weights(support, weight.data());
  double total = 0.0;
  for (double w : weight) total += w;
  std::vector<std::uint64_t> left(n_words_), right(n_words_);
  const std::vector<std::pair<double, int>> order =
      order_splits(support, weight.data(), total, left_weight.data(), right_weight.data(),
                   left.data(), right.data());
  double upper = nodes_[id].upper;
  double split_lower = std::numeric_limits<double>::infinity();
  for (const auto& [ignored, feature] : order) {
    split_on(support, static_cast<std::size_t>(feature), weight.data(), total,
             left_weight.data(), right_weight.data(), left.data(), right.data());
    const Peek left_peek = peek(left.data(), depth - 1, left_weight.data());
    const Peek right_peek = peek(right.data(), depth - 1, right_weight.data());
    // Unlike solve_optimum's, this limit is the build's budget for the incumbent, not the
    // incumbent: a split within it is resolved even when it cannot beat the incumbent, so
    // that the build finds each child solved to the cap it asks for (none is searched twice)
    const double limit = upper * per_unit + extra;
    if (left_peek.lower + right_peek.lower > limit) {
      split_lower = std::min(split_lower, left_peek.lower + right_peek.lower);
      continue;
    }
    double left_best = left_peek.lower;
    if (!left_peek.exact) {
      const int left_id = materialize(left.data(), depth - 1, left_weight.data(), &left_peek);
      solve_optimum(left_id, limit - right_peek.lower);
      if (limits.stopped()) return;
      if (!nodes_[left_id].exact) {
        split_lower = std::min(split_lower, nodes_[left_id].lower + right_peek.lower);
        continue;
      }
      left_best = nodes_[left_id].upper;
    }
    double right_best = right_peek.lower;
    if (!right_peek.exact) {
      const int right_id =
          materialize(right.data(), depth - 1, right_weight.data(), &right_peek);
      solve_optimum(right_id, limit - left_best);
      if (limits.stopped()) return;
      if (!nodes_[right_id].exact) {
        split_lower = std::min(split_lower, left_best + nodes_[right_id].lower);
        continue;
      }
      right_best = nodes_[right_id].upper;
    }
    if (left_best + right_best < upper - slack_) upper = left_best + right_best;
  }
  if (limits.stopped()) return;
  // every split not resolved has a lower bound above the limit at its time, which is at
  // least the final incumbent's
  Node& node = nodes_[id];
  node.upper = upper;
  node.lower = std::max(node.lower, std::min(upper, split_lower));
  node.exact = node.lower >= node.upper - slack_;
  if (node.exact) node.lower = node.upper;
}

void RashomonSet::extract(const std::uint64_t* support, int depth, double value,
                          std::vector<int>& out) {
  const int K = n_classes_;
  std::vector<double> weight(K), right_weight(K), left_weight(K);
  problem_->class_weights(support, weight.data());
  double total = 0.0, top = 0.0;
  for (double w : weight) {
    total += w;
    top = std::max(top, w);
  }
  if (depth == 0 || total - top + penalty_ <= value + slack_) {
    out.push_back(-(majority_class(weight.data(), K) + 1));
    return;
  }
  std::vector<std::uint64_t> left(n_words_), right(n_words_);
  const std::size_t p = problem_->n_features();
  // first the splits whose sides the memo knows exactly; then (a depth-two node solved from
  // its pair counts has no children in the memo) the sides are solved, under the value
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t j = 0; j < p; ++j) {
      if (!split_on(support, j, weight.data(), total, left_weight.data(), right_weight.data(),
                    left.data(), right.data()))
        continue;
      const Peek lp = peek(left.data(), depth - 1, left_weight.data());
      const Peek rp = peek(right.data(), depth - 1, right_weight.data());
      double lv = lp.lower, rv = rp.lower;
      if (lv + rv > value + slack_) continue;
      if (pass == 0 && !(lp.exact && rp.exact)) continue;
      if (pass == 1) {
        if (!lp.exact) {
          const int l = materialize(left.data(), depth - 1, left_weight.data());
          solve_optimum(l, value - rv + slack_);
          if (!nodes_[l].exact) continue;
          lv = nodes_[l].upper;
        }
        if (!rp.exact) {
          const int r = materialize(right.data(), depth - 1, right_weight.data());
          solve_optimum(r, value - lv + slack_);
          if (!nodes_[r].exact) continue;
          rv = nodes_[r].upper;
        }
        if (budget_->stopped()) return;
      }
      if (lv + rv > value + slack_) continue;
      out.push_back(static_cast<int>(j));
      extract(left.data(), depth - 1, lv, out);
      extract(right.data(), depth - 1, rv, out);
      return;
    }
  }
  if (budget_->stopped()) return;
  throw std::logic_error("RashomonSet: no tree attains the certified optimum");
}

std::vector<std::uint32_t> RashomonSet::set_order(const std::vector<Key>& found, double slack) {
  // set order: value, then fewer leaves, then misclassified, then cost
  std::vector<std::uint32_t> order(found.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    const Key& a = found[x];
    const Key& b = found[y];
    if (a.value != b.value) return a.value < b.value;
    if (a.leaves != b.leaves) return a.leaves < b.leaves;
    if (a.misclassified != b.misclassified) return a.misclassified < b.misclassified;
    return a.cost < b.cost;
  });
  // Values equal up to rounding (the same leaves summed in another order; e + Lambda k equal
  // in exact arithmetic) are one objective: within such a group, fewer leaves come first.
  for (std::size_t begin = 0; begin < order.size();) {
    std::size_t end = begin + 1;
    while (end < order.size() && found[order[end]].value - found[order[begin]].value <= slack)
      ++end;
    if (end - begin > 1)
      std::stable_sort(order.begin() + begin, order.begin() + end,
                       [&](std::uint32_t x, std::uint32_t y) {
                         const Key& a = found[x];
                         const Key& b = found[y];
                         if (a.leaves != b.leaves) return a.leaves < b.leaves;
                         if (a.misclassified != b.misclassified)
                           return a.misclassified < b.misclassified;
                         return a.cost < b.cost;
                       });
    begin = end;
  }
  return order;
}

Count RashomonSet::count_pairs(const Node& L, const Node& R,
                               const std::vector<long long>& threshold) const {
  // the right keys by leaf count, in misclassified order, with the running count of each
  // group: the pairs of a left key (e, l) with the right keys of l' leaves are the prefix of
  // misclassified <= threshold[l + l'] - e, the very pairs the dense table adds
  const std::size_t rows = threshold.size();
  std::vector<std::vector<std::uint32_t>> wrong(rows);
  std::vector<std::vector<Count>> running(rows);
  for (std::size_t c = 0; c < R.keys.size(); ++c) {
    const auto l = static_cast<std::size_t>(R.keys[c].leaves);
    if (l >= rows) continue;  // no pair within the budget (threshold covers every leaf count)
    wrong[l].push_back(static_cast<std::uint32_t>(R.keys[c].misclassified));
    running[l].push_back(running[l].empty() ? R.counts[c] : running[l].back() + R.counts[c]);
  }
  Count total;
  for (std::size_t a = 0; a < L.keys.size(); ++a) {
    const auto la = static_cast<std::size_t>(L.keys[a].leaves);
    const auto ea = static_cast<long long>(L.keys[a].misclassified);
    for (std::size_t lc = 0; lc < rows && la + lc < rows; ++lc) {
      const long long limit = threshold[la + lc] - ea;
      if (wrong[lc].empty() || limit < static_cast<long long>(wrong[lc].front())) continue;
      const auto end = std::upper_bound(wrong[lc].begin(), wrong[lc].end(),
                                        static_cast<std::uint32_t>(limit));
      total += L.counts[a] * running[lc][static_cast<std::size_t>(end - wrong[lc].begin()) - 1];
    }
  }
  return total;
}

void RashomonSet::finish_root() {
  if (!root_deferred_) return;
  Node& root = nodes_[root_];
  const std::size_t rows = root_rows_, width = root_width_;
  const double budget = root_budget_, slack = slack_;
  std::vector<Count::u128> cells(rows * width, 0);
  std::unordered_map<KeyId, Count, KeyHash> beyond;  // pairs past the u128 cells
  Count::u128 bound = 0;  // as in build: unchecked adds while every cell stays below it
  bool bounded = true;
  Grouped lg, rg;
  for (const Split& split : root.splits) {
    const Node& L = nodes_[split.left];
    const Node& R = nodes_[split.right];
    bool fast = bounded && group_keys(L, rows, lg) && group_keys(R, rows, rg);
    if (fast) {
      Count::u128 product, sum;
      fast = !__builtin_mul_overflow(lg.total, rg.total, &product) &&
             !__builtin_add_overflow(bound, product, &sum);
      if (fast) bound = sum;
    }
    if (!fast) bounded = false;
    for (std::size_t la = 0; fast && la + 1 < lg.start.size(); ++la) {
      for (std::uint32_t a = lg.start[la]; a < lg.start[la + 1]; ++a) {
        const long long ea = lg.wrong[a];
        const Count::u128 ca = lg.count[a];
        for (std::size_t lc = 0; lc + 1 < rg.start.size() && la + lc < rows; ++lc) {
          const long long limit = root_threshold_[la + lc] - ea;
          Count::u128* row = cells.data() + (la + lc) * width + ea;
          for (std::uint32_t c = rg.start[lc];
               c < rg.start[lc + 1] && static_cast<long long>(rg.wrong[c]) <= limit; ++c)
            row[rg.wrong[c]] += ca * rg.count[c];
        }
      }
    }
    for (std::size_t a = 0; !fast && a < L.keys.size(); ++a) {
      if (L.keys[a].value + R.keys.front().value > budget + slack) break;
      for (std::size_t c = 0; c < R.keys.size(); ++c) {
        if (L.keys[a].value + R.keys[c].value > budget + slack) break;
        const double wrong = L.keys[a].misclassified + R.keys[c].misclassified;
        const int leaves = L.keys[a].leaves + R.keys[c].leaves;
        if (wrong + penalty_ * leaves > budget) continue;  // build's membership test
        if (static_cast<std::size_t>(leaves) < rows && L.counts[a].fits_u128() &&
            R.counts[c].fits_u128()) {
          Count::u128 product, sum;
          Count::u128& slot =
              cells[static_cast<std::size_t>(leaves) * width + static_cast<std::size_t>(wrong)];
          if (!__builtin_mul_overflow(L.counts[a].as_u128(), R.counts[c].as_u128(), &product) &&
              !__builtin_add_overflow(slot, product, &sum)) {
            slot = sum;
            continue;
          }
        }
        beyond[KeyId(wrong, leaves, 0)] += L.counts[a] * R.counts[c];
      }
    }
  }
  // the leaves' keys (already the root's), then every pair's
  std::vector<Key> found = root.keys;
  std::vector<Count> found_counts = root.counts;
  std::unordered_map<KeyId, std::uint32_t, KeyHash> position;
  for (std::size_t k = 0; k < found.size(); ++k)
    position.emplace(KeyId(found[k].misclassified, found[k].leaves, found[k].cost),
                     static_cast<std::uint32_t>(k));
  const auto add = [&](double wrong, int leaves, const Count& count) {
    const auto [it, inserted] = position.try_emplace(
        KeyId(wrong, leaves, 0), static_cast<std::uint32_t>(found.size()));
    if (inserted) {
      found.push_back({wrong, leaves, wrong + penalty_ * leaves, 0});
      found_counts.emplace_back();
    }
    found_counts[it->second] += count;
  };
  for (std::size_t cell = 0; cell < cells.size(); ++cell)
    if (cells[cell] != 0)
      add(static_cast<double>(cell % width), static_cast<int>(cell / width),
          Count::from_u128(cells[cell]));
  for (const auto& [key, count] : beyond) add(std::get<0>(key), std::get<1>(key), count);
  const std::vector<std::uint32_t> order = set_order(found, slack_);
  std::vector<Key> keys(found.size());
  std::vector<Count> counts(found.size());
  Count total;
  for (std::size_t r = 0; r < order.size(); ++r) {
    keys[r] = found[order[r]];
    counts[r] = found_counts[order[r]];
    total += counts[r];
  }
  // the histogram's pairs are the count's: a difference is a bug, never an input
  if (!(total == root_count_))
    throw std::logic_error("RashomonSet: the root's histogram disagrees with its count");
  block_bytes_ += (keys.size() - root.keys.size()) * (sizeof(Key) + sizeof(Count));
  root.keys = std::move(keys);
  root.counts = std::move(counts);
  root.first.assign(root.keys.size() + 1, 0);
  root_deferred_ = false;
}

bool RashomonSet::group_keys(const Node& node, std::size_t rows, Grouped& out) {
  // keys are in value order, so within one leaf count in misclassified order: a stable
  // counting pass by leaves keeps that order
  out.start.assign(rows + 1, 0);
  out.total = 0;
  for (std::size_t k = 0; k < node.keys.size(); ++k) {
    const Count& c = node.counts[k];
    const Key& key = node.keys[k];
    if (!c.fits_u128() || c.as_u128() > std::numeric_limits<std::uint64_t>::max() ||
        key.leaves < 0 || static_cast<std::size_t>(key.leaves) >= rows ||
        __builtin_add_overflow(out.total, c.as_u128(), &out.total))
      return false;
    ++out.start[static_cast<std::size_t>(key.leaves) + 1];
  }
  if (out.total > std::numeric_limits<std::uint64_t>::max()) return false;
  for (std::size_t l = 0; l < rows; ++l) out.start[l + 1] += out.start[l];
  out.wrong.resize(node.keys.size());
  out.count.resize(node.keys.size());
  std::vector<std::uint32_t> next(out.start.begin(), out.start.end() - 1);
  for (std::size_t k = 0; k < node.keys.size(); ++k) {
    const std::uint32_t at = next[static_cast<std::size_t>(node.keys[k].leaves)]++;
    out.wrong[at] = static_cast<std::uint32_t>(node.keys[k].misclassified);
    out.count[at] = static_cast<std::uint64_t>(node.counts[k].as_u128());
  }
  // trailing empty leaf counts: no groups
  while (out.start.size() > 1 && out.start[out.start.size() - 2] == out.start.back())
    out.start.pop_back();
  return true;
}

bool RashomonSet::solve_depth2(int id) {
  if (!depth2_) {
    try {
      depth2_ = std::make_unique<Depth2Solver>(*problem_);
    } catch (const std::bad_alloc&) {
      use_depth2_ = false;  // an accelerator only: the generic recursion is exact too
      return false;
    }
  }
  Node& node = nodes_[id];
  const std::uint64_t* support = node.support.data();
  if (small_integers_ && depth2_->small_counts()) {
    // 0/1 class weights: the counts come as 16-bit integers, straight into the kernel
    const std::int16_t* counts = depth2_->pair_counts16(support, budget_);
    if (counts == nullptr) return false;  // a limit stopped the count
    const std::size_t stride = depth2_->small_stride();
    if (pair_small_.size() < 4 * stride) pair_small_.resize(4 * stride);
    double w[2];
    problem_->class_weights(support, w);
    const double best = depth2_two_classes_small(counts, stride, problem_->n_features(), w[0],
                                                 w[1], penalty_, pair_small_.data());
    node.upper = std::min(node.upper, best);
    node.lower = node.upper;
    node.exact = true;
    return true;
  }
  const double* F = depth2_->pair_counts(support, budget_);
  if (F == nullptr) return false;  // a limit stopped the count
  const double best = n_classes_ == 2 ? depth2_optimum<2>(F, support)
                                      : depth2_optimum<0>(F, support);
  node.upper = std::min(node.upper, best);
  node.lower = node.upper;
  node.exact = true;
  return true;
}

template <int FixedK>
double RashomonSet::depth2_optimum(const double* F, const std::uint64_t* support) {
  const int K = FixedK > 0 ? FixedK : n_classes_;
  const std::size_t M = problem_->n_features();
  const std::size_t KK = static_cast<std::size_t>(K);
  // F_k(i, j), i <= j: the weight of class k with x_i = x_j = 1 (depth2.hpp)
  const auto pair = [&](std::size_t i, std::size_t j) {
    return F + ((i < j ? i * M + j : j * M + i) * KK);
  };
  double weight[FixedK > 0 ? FixedK : 1];
  std::vector<double> dynamic(FixedK > 0 ? 0 : 5 * KK);
  double* w = FixedK > 0 ? weight : dynamic.data();
  double side_store[FixedK > 0 ? 4 * FixedK : 1];
  double* side = FixedK > 0 ? side_store : dynamic.data() + KK;
  double* zero = side + KK;
  double* a = zero + KK;
  problem_->class_weights(support, w);
  if constexpr (FixedK == 2) {
    if (small_integers_) {
      // the double counts (integer weights beyond 0/1) in the 16-bit layout first
      const std::size_t stride = depth2_->small_stride();
      pair_small_.assign(2 * M * stride + 4 * stride, 0);
      std::int16_t* counts = pair_small_.data() + 4 * stride;
      for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = i; j < M; ++j)
          for (std::size_t k = 0; k < 2; ++k)
            counts[(2 * i + k) * stride + j] = static_cast<std::int16_t>(F[(i * M + j) * 2 + k]);
      return depth2_two_classes_small(counts, stride, M, w[0], w[1], penalty_,
                                      pair_small_.data());
    }
    pair_scratch_.resize(6 * M);
    double* at = pair_scratch_.data();
    return depth2_two_classes(F, M, w[0], w[1], penalty_, zero_weight_, at, at + M, at + 2 * M,
                              at + 3 * M, at + 4 * M, at + 5 * M);
  }
  // a leaf's value as materialize computes it (total - top + Lambda): on integer weights the
  // same number to the last bit, so this optimum equals the generic recursion's
  const auto leaf = [&](const double* c, double& total) {
    double top = 0.0;
    total = 0.0;
    for (int k = 0; k < K; ++k) {
      total += c[k];
      top = std::max(top, c[k]);
    }
    return total - top + penalty_;
  };
  const double two = 2 * penalty_;  // a split has two leaves at least
  // the best depth-<=1 tree on the cell x_i = s of the support (class weights c)
  const auto depth1 = [&](std::size_t i, int s, const double* c) {
    double total_c = 0.0;
    double best = leaf(c, total_c);
    if (best <= two) return best;
    double* b = a + KK;
    for (std::size_t j = 0; j < M && best > two; ++j) {
      if (j == i) continue;  // one side empty: not a split
      const double* fij = pair(i, j);
      const double* fjj = pair(j, j);
      for (int k = 0; k < K; ++k) {
        a[k] = s == 1 ? fij[k] : fjj[k] - fij[k];  // x_j = 1
        b[k] = c[k] - a[k];
      }
      double wa = 0.0, wb = 0.0;
      const double value = leaf(a, wa) + leaf(b, wb);
      // split_on's rule: a side this light is empty, and a split with an empty side is none
      if (wa <= zero_weight_ || wb <= zero_weight_) continue;
      best = std::min(best, value);
    }
    return best;
  };
  double total = 0.0;
  double best = leaf(w, total);
  for (std::size_t i = 0; i < M && best > two; ++i) {
    const double* fii = pair(i, i);
    double w1 = 0.0;
    for (int k = 0; k < K; ++k) {
      side[k] = fii[k];
      zero[k] = w[k] - fii[k];
      w1 += fii[k];
    }
    if (w1 <= zero_weight_ || total - w1 <= zero_weight_) continue;
    // each side's value is at least min(its leaf, two leaves): a root that cannot beat the
    // best so far is not searched
    double t0 = 0.0, t1 = 0.0;
    const double low0 = std::min(leaf(zero, t0), two), low1 = std::min(leaf(side, t1), two);
    if (low0 + low1 >= best) continue;
    const double v0 = depth1(i, 0, zero);
    if (v0 + low1 >= best) continue;
    const double v1 = depth1(i, 1, side);
    best = std::min(best, v0 + v1);
  }
  return best;
}

void RashomonSet::ensure(int id, double budget) {
  const Node& node = nodes_[id];
  if (node.budget >= budget && node.complete) return;
  build(id, budget);
}

void RashomonSet::build(int id, double budget) {
  Node& node = nodes_[id];  // a reference into the deque stays valid while children are added
  const std::uint64_t* support = node.support.data();
  const int depth = node.depth;
  Budget& limits = *budget_;
  bool complete = !limits.tick(bytes_in_use(), (n_words_ * 8 + sizeof(Node)) * 4);

  const int K = n_classes_;
  std::vector<double> weight(K), right_weight(K), left_weight(K);
  problem_->class_weights(support, weight.data());
  double total = 0.0, top = 0.0;
  for (int k = 0; k < K; ++k) {
    total += weight[k];
    top = std::max(top, weight[k]);
  }
  // Blocks are found in their order within a key (leaves by label, splits by feature, left
  // key, right key), so placing them by key with a stable counting pass keeps that order and
  // only the distinct keys need sorting.
  std::vector<Key> found;
  std::vector<Count> found_counts;
  std::vector<Pending> pending;
  std::unordered_map<KeyId, std::uint32_t, KeyHash> key_position;
  // What this frame holds besides the memo (its lists of found keys and blocks), plus what
  // turning them into the node's arrays will allocate (a stopped build still does that): one
  // node at a large bound gathers millions of blocks, so the limits are checked here, inside
  // the pair loop, not only between nodes (transient_bytes_ sums the frames on the stack).
  std::size_t charged = 0;
  const auto recharge = [&]() -> std::size_t {
    const std::size_t now =
        pending.capacity() * sizeof(Pending) + found.capacity() * sizeof(Key) +
        found_counts.capacity() * sizeof(Count) +
        key_position.size() * (sizeof(KeyId) + 3 * sizeof(void*)) +
        key_position.bucket_count() * sizeof(void*) +
        pending.size() * (sizeof(Block) + sizeof(Count)) +
        found.size() * (sizeof(Key) + sizeof(Count) + 4 * sizeof(std::uint32_t));
    transient_bytes_ = transient_bytes_ - charged + now;
    charged = now;
    // the next doubling of the block list allocates its new array beside the old one
    return pending.size() + kCheckStride > pending.capacity()
               ? 2 * pending.capacity() * sizeof(Pending) + kCheckStride * sizeof(Pending)
               : kCheckStride * sizeof(Pending);
  };
  // true when a limit says stop (memory as above, the clock, Ctrl-C)
  const auto over = [&]() -> bool {
    const std::size_t ahead = recharge();
    return !limits.memory_ok(bytes_in_use(), ahead) || limits.check_clock();
  };
  const auto add = [&](double wrong, int leaves, int cost, double value, int option,
                       std::uint32_t left, std::uint32_t right, const Count& count) {
    const auto [it, inserted] = key_position.try_emplace(
        KeyId(wrong, leaves, cost), static_cast<std::uint32_t>(found.size()));
    if (inserted) {
      found.push_back({wrong, leaves, value, cost});
      found_counts.emplace_back();
    }
    found_counts[it->second] += count;
    if (!count_only_) pending.push_back({it->second, option, left, right});
  };
  const Count one(1);
  // a leaf below the minimum leaf support is no tree (the dp's rule, on the node's own sum)
  const bool leaf_allowed = !(min_leaf_ > 0.0 && total < min_leaf_);
  for (int k = 0; k < K && leaf_allowed; ++k) {
    const double wrong = total - weight[k];
    if (majority_only_ && wrong > total - top + tolerance_) continue;
    const double value = wrong + penalty_;
    if (value <= budget) add(wrong, 1, 0, value, -(k + 1), 0, 0, one);
  }

  std::vector<Split> splits;
  const double slack = slack_;
  std::size_t since_check = 0, after_stop = 0;
  // The dense table of a count-only build (see scratch_): integer weights, no split costs,
  // and a table of at most kDenseCells cells; a product or sum beyond 2^128 goes to `add`.
  std::size_t dense_width = 0;  // misclassified values 0 .. dense_width - 1
  Scratch* dense = nullptr;
  if (count_only_ && problem_->integral() && rules_.budget < 0 && depth > 0 &&
      budget + 1.0 < static_cast<double>(kDenseCells)) {
    const std::size_t width = static_cast<std::size_t>(std::floor(budget)) + 1;
    std::size_t max_leaves = depth < 30 ? (std::size_t{1} << depth) : kDenseCells;
    if (penalty_ > 0.0)
      max_leaves = std::min(max_leaves, static_cast<std::size_t>(budget / penalty_) + 1);
    // scratch_ has one table per depth from the start (a frame keeps a pointer into it)
    if ((max_leaves + 1) * width <= kDenseCells &&
        static_cast<std::size_t>(depth) < scratch_.size()) {
      dense = &scratch_[depth];
      if (dense->cells.size() < (max_leaves + 1) * width) {
        scratch_bytes_ -= dense->cells.size() * sizeof(Count::u128);
        dense->cells.assign((max_leaves + 1) * width, 0);
        dense->touched.clear();
        scratch_bytes_ += dense->cells.size() * sizeof(Count::u128);
      }
      dense_width = width;
    }
  }
  // The dense table's fast path (count_pairs): each side's keys grouped by leaves in
  // increasing misclassified weight, so for one left key the right keys of one leaf count
  // fall in one row of the table at increasing columns (the pair loop by value order jumps
  // across the whole table: at compas d4 eps 0.5 most of the build's time was that store's
  // cache misses). threshold[l]: the most misclassified weight a key of l leaves may have,
  // by the very test the pair loop makes (wrong + Lambda * l <= budget); -1: none.
  std::vector<long long> threshold;
  std::size_t dense_rows = 0;
  // an upper bound on every dense cell (the sum over splits of the sides' total counts'
  // products): the fast path adds without overflow checks only while it is below 2^128
  Count::u128 dense_bound = 0;
  bool dense_bounded = true;
  if (dense != nullptr) {
    dense_rows = dense->cells.size() / dense_width;
    threshold.assign(dense_rows, -1);
    for (std::size_t l = 0; l < dense_rows; ++l) {
      const auto fits = [&](long long w) {
        return static_cast<double>(w) + penalty_ * static_cast<int>(l) <= budget;
      };
      long long w = static_cast<long long>(std::floor(budget - penalty_ * static_cast<int>(l)));
      w = std::min<long long>(std::max<long long>(w, -1), static_cast<long long>(dense_width) - 1);
      while (w + 1 < static_cast<long long>(dense_width) && fits(w + 1)) ++w;
      while (w >= 0 && !fits(w)) --w;
      threshold[l] = w;
    }
  }
  Grouped left_groups, right_groups;
  // The root of a count-only build is counted without its histogram (count_pairs: a prefix
  // sum per left key and leaf count instead of a table cell per pair of keys, which at compas
  // d4 eps 0.5 was half of the build); finish_root pairs its keys when they are asked for.
  const bool defer = count_only_ && id == root_ && dense != nullptr && node.budget < 0.0;
  Count deferred_count;
  if (complete && depth > 0) {
    std::vector<std::uint64_t> left(n_words_), right(n_words_);
    const std::size_t p = problem_->n_features();
    for (std::size_t j = 0; j < p; ++j) {
      if (!split_on(support, j, weight.data(), total, left_weight.data(), right_weight.data(),
                    left.data(), right.data()))
        continue;
      const Peek left_peek = peek(left.data(), depth - 1, left_weight.data());
      const Peek right_peek = peek(right.data(), depth - 1, right_weight.data());
      if (left_peek.lower + right_peek.lower > budget) continue;
      const int left_id = materialize(left.data(), depth - 1, left_weight.data(), &left_peek);
      const int right_id =
          materialize(right.data(), depth - 1, right_weight.data(), &right_peek);
      if (over()) break;
      solve_optimum(left_id, budget - nodes_[right_id].lower);
      if (limits.stopped()) break;
      if (!nodes_[left_id].exact) continue;
      const double left_best = nodes_[left_id].upper;
      solve_optimum(right_id, budget - left_best);
      if (limits.stopped()) break;
      if (!nodes_[right_id].exact) continue;
      const double right_best_value = nodes_[right_id].upper;
      if (left_best + right_best_value > budget + slack) continue;
      // children keep a hair more than the parent needs (slack), so a key the parent lists
      // always finds every pair of child keys adding up to it, whatever the rounding of sums
      ensure(left_id, budget - right_best_value + slack);
      ensure(right_id, budget - left_best + slack);
      const Node& L = nodes_[left_id];
      const Node& R = nodes_[right_id];
      const int split_cost = rules_.split_costs.empty() ? 0 : rules_.split_costs[j];
      if (!L.keys.empty() && !R.keys.empty()) {
        const int split = static_cast<int>(splits.size());
        splits.push_back({static_cast<int>(j), left_id, right_id});
        const double right_best = R.keys.front().value;
        // Once a limit has stopped the build (here or in a child), this split still pairs up
        // to kCheckStride more keys: a few kilobytes and microseconds, so a stopped build
        // lists trees made of what its children found instead of nothing above them.
        bool spent = defer;
        if (defer) deferred_count += count_pairs(L, R, threshold);
        bool fast = !defer && dense != nullptr && dense_bounded &&
                    group_keys(L, dense_rows, left_groups) &&
                    group_keys(R, dense_rows, right_groups);
        if (fast) {
          Count::u128 product, sum;
          fast = !__builtin_mul_overflow(left_groups.total, right_groups.total, &product) &&
                 !__builtin_add_overflow(dense_bound, product, &sum);
          if (fast) dense_bound = sum;
        }
        if (!fast) dense_bounded = false;  // the checked pair loop from here on
        for (std::size_t la = 0; fast && la + 1 < left_groups.start.size() && !spent; ++la) {
          for (std::uint32_t a = left_groups.start[la]; a < left_groups.start[la + 1] && !spent;
               ++a) {
            const long long ea = left_groups.wrong[a];
            const Count::u128 ca = left_groups.count[a];
            for (std::size_t lc = 0; lc + 1 < right_groups.start.size(); ++lc) {
              const std::size_t leaves = la + lc;
              if (leaves >= dense_rows) break;
              const long long limit = threshold[leaves] - ea;
              const std::uint32_t first = right_groups.start[lc], end = right_groups.start[lc + 1];
              if (first == end || limit < static_cast<long long>(right_groups.wrong[first]))
                continue;
              Count::u128* row = dense->cells.data() + leaves * dense_width + ea;
              std::uint32_t c = first;
              for (; c < end && static_cast<long long>(right_groups.wrong[c]) <= limit; ++c) {
                Count::u128& slot = row[right_groups.wrong[c]];
                if (slot == 0)
                  dense->touched.push_back(static_cast<std::uint32_t>(&slot - dense->cells.data()));
                slot += ca * right_groups.count[c];
              }
              // the limits, about every kCheckStride pairs as in the loop below
              since_check += c - first;
              if (limits.stopped()) {
                after_stop += c - first;
                if (after_stop > kCheckStride) spent = true;
              } else if (since_check >= kCheckStride) {
                since_check = 0;
                if (over()) after_stop = 0;
              }
            }
          }
        }
        for (std::size_t a = 0; !fast && a < L.keys.size() && !spent; ++a) {
          if (L.keys[a].value + right_best > budget + slack) break;
          for (std::size_t c = 0; c < R.keys.size(); ++c) {
            if (L.keys[a].value + R.keys[c].value > budget + slack) break;
            if (limits.stopped()) {
              if (++after_stop > kCheckStride) {
                spent = true;
                break;
              }
            } else if (++since_check >= kCheckStride) {
              since_check = 0;
              if (over()) after_stop = 0;
            }
            const double wrong = L.keys[a].misclassified + R.keys[c].misclassified;
            const int leaves = L.keys[a].leaves + R.keys[c].leaves;
            // membership is decided on the key's own value, the same number for every pair
            // that makes it, so a key is either whole or absent
            const double value = wrong + penalty_ * leaves;
            if (value > budget) continue;
            // children hold only keys within the cost budget; their sum may still exceed it
            const int cost = split_cost + L.keys[a].cost + R.keys[c].cost;
            if (rules_.budget >= 0 && cost > rules_.budget) continue;
            if (dense != nullptr && L.counts[a].fits_u128() && R.counts[c].fits_u128()) {
              Count::u128 product, sum;
              const std::size_t cell =
                  static_cast<std::size_t>(leaves) * dense_width + static_cast<std::size_t>(wrong);
              Count::u128& slot = dense->cells[cell];
              if (!__builtin_mul_overflow(L.counts[a].as_u128(), R.counts[c].as_u128(),
                                          &product) &&
                  !__builtin_add_overflow(slot, product, &sum)) {
                if (slot == 0) dense->touched.push_back(static_cast<std::uint32_t>(cell));
                slot = sum;
                continue;
              }
            }
            add(wrong, leaves, cost, value, split, static_cast<std::uint32_t>(a),
                static_cast<std::uint32_t>(c), L.counts[a] * R.counts[c]);
          }
        }
      }
      if (limits.stopped()) break;
    }
    if (limits.stopped()) complete = false;
  }
  if (dense != nullptr) {
    // the dense cells join the keys (a key also in the hash map, through an overflow, adds up)
    for (std::uint32_t cell : dense->touched) {
      const int leaves = static_cast<int>(cell / dense_width);
      const double wrong = static_cast<double>(cell % dense_width);
      add(wrong, leaves, 0, wrong + penalty_ * leaves, 0, 0, 0,
          Count::from_u128(dense->cells[cell]));
      dense->cells[cell] = 0;
    }
    dense->touched.clear();
  }

  if (!complete && node.budget >= 0.0) {
    // A rebuild (a larger budget) stopped part-way may lack keys the node already had, and the
    // blocks of its parents point at those keys by position: the node keeps its earlier
    // histogram, every tree of which is still a member.
    transient_bytes_ -= std::min(transient_bytes_, charged);
    return;
  }
  if (defer) {
    // the keys so far are the leaves'; the pairs are counted, their keys wait (finish_root)
    for (const Count& c : found_counts) deferred_count += c;
    root_deferred_ = true;
    root_count_ = deferred_count;
    root_rows_ = dense_rows;
    root_width_ = dense_width;
    root_threshold_ = threshold;
    root_budget_ = budget;
  }
  const std::vector<std::uint32_t> order = set_order(found, slack_);
  std::vector<std::uint32_t> position(found.size());
  std::vector<Key> keys(found.size());
  std::vector<Count> counts(found.size());
  for (std::uint32_t r = 0; r < order.size(); ++r) {
    position[order[r]] = r;
    keys[r] = found[order[r]];
    counts[r] = std::move(found_counts[order[r]]);
  }
  std::vector<std::uint32_t> first(keys.size() + 1, 0);
  for (const Pending& b : pending) ++first[position[b.key] + 1];
  for (std::size_t k = 0; k < keys.size(); ++k) first[k + 1] += first[k];
  std::vector<std::uint32_t> next(first.begin(), first.end() - 1);
  std::vector<Block> blocks(pending.size());
  for (const Pending& b : pending) blocks[next[position[b.key]]++] = {b.option, b.left, b.right};
  // where each block's trees end within its key, so decoding finds a block by binary search
  std::vector<Count> block_end(blocks.size());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    Count end;
    for (std::uint32_t b = first[k]; b < first[k + 1]; ++b) {
      const Block& block = blocks[b];
      if (block.option < 0) {
        end += one;
      } else {
        const Split& split = splits[block.option];
        end += nodes_[split.left].counts[block.left] * nodes_[split.right].counts[block.right];
      }
      block_end[b] = end;
    }
  }

  const std::size_t old_bytes = node.keys.capacity() * sizeof(Key) +
                                node.counts.capacity() * sizeof(Count) +
                                node.blocks.capacity() * (sizeof(Block) + sizeof(Count)) +
                                node.first.capacity() * 4 + node.splits.capacity() * sizeof(Split);
  node.keys = std::move(keys);
  node.counts = std::move(counts);
  node.first = std::move(first);
  node.blocks = std::move(blocks);
  node.block_end = std::move(block_end);
  node.splits = std::move(splits);
  node.budget = budget;
  node.complete = complete;
  block_bytes_ += node.keys.capacity() * sizeof(Key) + node.counts.capacity() * sizeof(Count) +
                  node.blocks.capacity() * (sizeof(Block) + sizeof(Count)) +
                  node.first.capacity() * 4 + node.splits.capacity() * sizeof(Split);
  block_bytes_ -= std::min(block_bytes_, old_bytes);
  // the lists are the node's arrays now (counted in block_bytes_): not twice in the peak
  transient_bytes_ -= std::min(transient_bytes_, charged);
  limits.note_memory(bytes_in_use());
}

const std::vector<RashomonSet::Key>& RashomonSet::keys() const {
  static const std::vector<Key> none;
  if (root_deferred_) throw std::logic_error("RashomonSet: keys() before finish_root()");
  return root_ < 0 ? none : nodes_[root_].keys;
}

std::vector<Count> RashomonSet::key_counts() const {
  if (root_deferred_) throw std::logic_error("RashomonSet: key_counts() before finish_root()");
  return root_ < 0 ? std::vector<Count>() : nodes_[root_].counts;
}

Count RashomonSet::count() const {
  if (root_deferred_) return root_count_;
  Count total;
  if (root_ >= 0)
    for (const Count& c : nodes_[root_].counts) total += c;
  return total;
}

void RashomonSet::require_blocks(const char* what) const {
  if (count_only_)
    throw std::logic_error(std::string(what) +
                           " needs the trees: this set was built to count only");
}

std::size_t RashomonSet::key_of(const Count& index) const {
  require_blocks("addressing a tree");
  if (root_ < 0) throw std::out_of_range("index out of range: the set is empty");
  Count rest = index;
  const auto& counts = nodes_[root_].counts;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (rest < counts[k]) return k;
    rest -= counts[k];
  }
  throw std::out_of_range("index out of range");
}

std::vector<int> RashomonSet::tree(const Count& index) const {
  const std::size_t key = key_of(index);
  Count rest = index;
  const auto& counts = nodes_[root_].counts;
  for (std::size_t k = 0; k < key; ++k) rest -= counts[k];
  std::vector<int> out;
  unrank(root_, key, rest, out);
  return out;
}

void RashomonSet::unrank(int id, std::size_t key, Count index, std::vector<int>& out) const {
  const Node& node = nodes_[id];
  const auto begin = node.block_end.begin() + node.first[key];
  const auto end = node.block_end.begin() + node.first[key + 1];
  const auto found = std::upper_bound(begin, end, index);
  if (found == end) throw std::logic_error("RashomonSet: index beyond its key's blocks");
  if (found != begin) index -= *(found - 1);
  const Block& block = node.blocks[found - node.block_end.begin()];
  if (block.option < 0) {
    out.push_back(block.option);
    return;
  }
  const Split& split = node.splits[block.option];
  out.push_back(split.feature);
  Count left_index, right_index;
  Count::divmod(index, nodes_[split.right].counts[block.right], left_index, right_index);
  unrank(split.left, block.left, left_index, out);
  unrank(split.right, block.right, right_index, out);
}

void RashomonSet::trees(const Count& start, std::size_t n, std::vector<int>& codes,
                        std::vector<int>& lengths, std::vector<int>& keys) const {
  if (n == 0) return;
  std::size_t key = key_of(start);
  const auto& counts = nodes_[root_].counts;
  Count rest = start;
  for (std::size_t k = 0; k < key; ++k) rest -= counts[k];
  const Count one(1);
  for (std::size_t i = 0; i < n; ++i) {
    while (!(rest < counts[key])) {  // the key's trees are done: the next key's first
      rest = Count();
      if (++key >= counts.size()) throw std::out_of_range("index out of range");
    }
    const std::size_t before = codes.size();
    unrank(root_, key, rest, codes);
    lengths.push_back(static_cast<int>(codes.size() - before));
    keys.push_back(static_cast<int>(key));
    rest += one;
  }
}

bool RashomonSet::locate(int id, const std::vector<int>& code, std::size_t& pos,
                         std::size_t& key, Count& index) const {
  if (pos >= code.size()) return false;
  const Node& node = nodes_[id];
  const int v = code[pos++];
  // the block of the tree's top (a leaf label, or a split and one key per side), the key it
  // belongs to and the tree's index within that block
  std::size_t found_key = node.keys.size();
  std::uint32_t found_block = 0;
  Count within;
  if (v < 0) {
    for (std::size_t k = 0; k < node.keys.size() && found_key == node.keys.size(); ++k) {
      if (node.keys[k].leaves != 1) continue;
      for (std::uint32_t b = node.first[k]; b < node.first[k + 1]; ++b)
        if (node.blocks[b].option == v) {
          found_key = k;
          found_block = b;
          break;
        }
    }
  } else {
    int split = -1;
    for (std::size_t s = 0; s < node.splits.size(); ++s)
      if (node.splits[s].feature == v) split = static_cast<int>(s);
    if (split < 0) return false;
    const Split& sp = node.splits[split];
    std::size_t left_key = 0, right_key = 0;
    Count left_index, right_index;
    if (!locate(sp.left, code, pos, left_key, left_index)) return false;
    if (!locate(sp.right, code, pos, right_key, right_index)) return false;
    const Node& L = nodes_[sp.left];
    const Node& R = nodes_[sp.right];
    // the parent's key is the sum of the children's, added as build adds them
    const double wrong = L.keys[left_key].misclassified + R.keys[right_key].misclassified;
    const int leaves = L.keys[left_key].leaves + R.keys[right_key].leaves;
    for (std::size_t k = 0; k < node.keys.size() && found_key == node.keys.size(); ++k) {
      if (node.keys[k].leaves != leaves || node.keys[k].misclassified != wrong) continue;
      for (std::uint32_t b = node.first[k]; b < node.first[k + 1]; ++b) {
        const Block& block = node.blocks[b];
        if (block.option == split && block.left == left_key && block.right == right_key) {
          found_key = k;
          found_block = b;
          break;
        }
      }
    }
    if (found_key == node.keys.size()) return false;
    within = left_index * R.counts[right_key] + right_index;
  }
  if (found_key == node.keys.size()) return false;
  key = found_key;
  index = within;
  if (found_block > node.first[found_key]) index += node.block_end[found_block - 1];
  return true;
}

bool RashomonSet::rank(const std::vector<int>& code, Count& index) const {
  require_blocks("rank");
  if (root_ < 0) return false;
  std::size_t pos = 0, key = 0;
  Count within;
  if (!locate(root_, code, pos, key, within) || pos != code.size()) return false;
  index = within;
  const auto& counts = nodes_[root_].counts;
  for (std::size_t k = 0; k < key; ++k) index += counts[k];
  return true;
}

const std::vector<Count>& RashomonSet::counts_without(int id, int feature,
                                                      std::vector<std::vector<Count>>& memo,
                                                      std::vector<char>& done) const {
  if (done[id]) return memo[id];
  const Node& node = nodes_[id];
  std::vector<Count> out(node.keys.size());
  for (std::size_t k = 0; k < node.keys.size(); ++k) {
    for (std::uint32_t b = node.first[k]; b < node.first[k + 1]; ++b) {
      const Block& block = node.blocks[b];
      if (block.option < 0) {
        out[k] += Count(1);
        continue;
      }
      const Split& split = node.splits[block.option];
      if (split.feature == feature) continue;
      const Count& left = counts_without(split.left, feature, memo, done)[block.left];
      const Count& right = counts_without(split.right, feature, memo, done)[block.right];
      out[k] += left * right;
    }
  }
  memo[id] = std::move(out);
  done[id] = 1;
  return memo[id];
}

Count RashomonSet::count_without(int feature) const {
  require_blocks("count_without");
  Count total;
  if (root_ < 0) return total;
  std::vector<std::vector<Count>> memo(nodes_.size());
  std::vector<char> done(nodes_.size(), 0);
  for (const Count& c : counts_without(root_, feature, memo, done)) total += c;
  return total;
}

}  // namespace odtkit

#include "depth2.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "search_types.hpp"

namespace odtkit {

Depth2Solver::Depth2Solver(const Problem& problem)
    : problem_(problem),
      M_(static_cast<int>(problem.n_features())),
      K_(problem.n_classes()),
      W_(problem.n_words()),
      tau_(count_tolerance(problem.total_weight())),
      slots_(problem.integral() ? 3 : 1),
      diff_(problem.n_words()),
      total_(K_, 0.0),
      scratch_(4 * static_cast<std::size_t>(K_), 0.0) {
  // the first slot now (a failure here switches the solver off), the others when a second
  // support comes (a root of depth two needs one: 576 MB at 6,000 features and two classes)
  for (auto& slot : slots_) slot.support.assign(W_, 0);
  slots_[0].F.assign(static_cast<std::size_t>(M_) * M_ * K_, 0.0);
  single_class_.assign(problem.n_points(), -1);
  const auto& pcw = problem.point_class_weight();
  for (std::size_t u = 0; u < problem.n_points(); ++u) {
    int nonzero = 0, last = -1;
    for (int k = 0; k < K_; ++k)
      if (pcw[u * static_cast<std::size_t>(K_) + k] != 0.0) ++nonzero, last = k;
    if (nonzero == 1) single_class_[u] = last;
  }
  // count, then fill in feature order (each point's list comes out sorted); a word of 64
  // points at a time, so that the writes stay within those points' lists (feature by feature
  // over all points, each write was a TLB miss: 0.5 s on 20,000 x 3,000)
  const std::size_t U = problem.n_points();
  std::vector<const std::uint64_t*> features(static_cast<std::size_t>(M_));
  for (int j = 0; j < M_; ++j)
    features[static_cast<std::size_t>(j)] = problem.feature_words(static_cast<std::size_t>(j));
  ones_start_.assign(U + 1, 0);
  for (std::size_t w = 0; w < W_; ++w)
    for (int j = 0; j < M_; ++j)
      for (std::uint64_t b = features[static_cast<std::size_t>(j)][w]; b; b &= b - 1)
        ++ones_start_[(w << 6) + static_cast<std::size_t>(__builtin_ctzll(b)) + 1];
  for (std::size_t u = 0; u < U; ++u) ones_start_[u + 1] += ones_start_[u];
  ones_.resize(ones_start_[U]);
  std::vector<std::size_t> at(ones_start_.begin(), ones_start_.end() - 1);
  for (std::size_t w = 0; w < W_; ++w)
    for (int j = 0; j < M_; ++j)
      for (std::uint64_t b = features[static_cast<std::size_t>(j)][w]; b; b &= b - 1)
        ones_[at[(w << 6) + static_cast<std::size_t>(__builtin_ctzll(b))]++] = j;
  double pairs = 0.0;
  for (std::size_t u = 0; u < U; ++u) {
    const double on = static_cast<double>(ones_start_[u + 1] - ones_start_[u]);
    pairs += on * (on + 1) / 2;
  }
  mean_pairs_ = U ? pairs / static_cast<double>(U) : 0.0;
  mean_ones_ = U ? static_cast<double>(ones_.size()) / static_cast<double>(U) : 0.0;
  if (!problem.integral()) return;
  // the bit-planes of the per-class integer weights; plane ids in order of first use
  std::vector<int> plane_of(static_cast<std::size_t>(K_) * 64, -1);
  std::vector<std::uint64_t> planes(U, 0);  // per point, its planes as bits
  for (std::size_t u = 0; u < U; ++u) {
    for (int k = 0; k < K_; ++k) {
      const double v = pcw[u * static_cast<std::size_t>(K_) + k];
      if (!(v > 0.0)) continue;
      for (auto x = static_cast<std::uint64_t>(v); x; x &= x - 1) {
        const int bit = __builtin_ctzll(x);
        int& id = plane_of[static_cast<std::size_t>(k) * 64 + bit];
        if (id < 0) {
          if (plane_class_.size() == 64) return;  // too many planes: the point-pair pass only
          id = static_cast<int>(plane_class_.size());
          plane_class_.push_back(k);
          plane_bit_.push_back(bit);
          plane_scale_.push_back(std::ldexp(1.0, bit));
        }
        planes[u] |= std::uint64_t{1} << id;
      }
    }
  }
  // per point, its features then its planes as bits of R_ words (the rows that compact_counts
  // transposes 64 points at a time)
  const std::size_t B = static_cast<std::size_t>(M_) + plane_class_.size();
  R_ = (B + 63) / 64;
  try {
    rows_.assign(U * R_, 0);
    compact_feats_.resize(B * W_);
    compact_scratch_.resize(plane_class_.size() * W_);
    compact_row_.resize(static_cast<std::size_t>(M_) * plane_class_.size());
    compact_block_.resize(R_ * 64);
  } catch (const std::bad_alloc&) {
    // an accelerator: without room for it, the point-pair pass counts every support
    rows_ = {};
    compact_feats_ = {};
    compact_scratch_ = {};
    return;
  }
  for (std::size_t u = 0; u < U; ++u) {
    std::uint64_t* row = &rows_[u * R_];
    const OnesView on = ones(u);
    for (std::size_t x = 0; x < on.size(); ++x) {
      const auto j = static_cast<std::size_t>(on[x]);
      row[j >> 6] |= std::uint64_t{1} << (j & 63);
    }
    for (std::uint64_t q = planes[u]; q; q &= q - 1) {
      const std::size_t b = static_cast<std::size_t>(M_) + static_cast<std::size_t>(__builtin_ctzll(q));
      row[b >> 6] |= std::uint64_t{1} << (b & 63);
    }
  }
  has_planes_ = true;
  unit_planes_ = plane_class_.size() == static_cast<std::size_t>(K_) &&
                 std::all_of(plane_bit_.begin(), plane_bit_.end(), [](int b) { return b == 0; });
}

namespace {
// In place: bit i of a[j] becomes bit j of a[i] (64 x 64 bit matrix, recursive block swaps).
// Each stage swaps runs of j consecutive words with the run j further on, written as a plain
// loop over the run so that the compiler's vectors take two or more words at once (the pairs'
// walk k = ((k | j) + 1) & ~j did not vectorize: ~10 % of the planted table's Rashomon count).
inline void transpose64(std::uint64_t* __restrict a) {
  std::uint64_t m = 0x00000000FFFFFFFFULL;
  for (unsigned j = 32; j != 0; j >>= 1, m ^= (m << j)) {
    for (unsigned base = 0; base < 64; base += 2 * j) {
      std::uint64_t* __restrict lo = a + base;
      std::uint64_t* __restrict hi = a + base + j;
      for (unsigned k = 0; k < j; ++k) {
        const std::uint64_t t = ((lo[k] >> j) ^ hi[k]) & m;
        lo[k] ^= t << j;
        hi[k] ^= t;
      }
    }
  }
}
}  // namespace

double Depth2Solver::compact_cost(std::size_t n_s) const {
  if (!has_planes_) return std::numeric_limits<double>::infinity();
  const double words = static_cast<double>((n_s + 63) / 64);
  const double pairs = static_cast<double>(M_) * (M_ + 1) / 2;
  // one scattered bit set per (point, feature equal to 1) to build the compacted bitsets,
  // then ~1/4 of a scattered add per (pair, plane, word): AND + POPCNT + add, streaming
  return (words + 1) * static_cast<double>(R_) * 64 +
         0.25 * pairs * words * static_cast<double>(plane_class_.size()) +
         static_cast<double>(M_) * M_ * K_;
}

bool Depth2Solver::compact_counts(const std::uint64_t* s, std::size_t n_s, double* F,
                                  std::int16_t* F16) {
  const std::size_t M = static_cast<std::size_t>(M_), K = static_cast<std::size_t>(K_);
  const std::size_t P = plane_class_.size();
  const std::size_t CW = (n_s + 63) / 64;
  const std::size_t B = M + P;  // the buffers are sized in the constructor
  // the support's points renumbered t = 0 .. n_s - 1; 64 of them at a time, their rows are
  // transposed into word t / 64 of every feature's and plane's compacted bitset
  std::uint64_t* cf = compact_feats_.data();
  std::uint64_t* block = compact_block_.data();
  const std::size_t R = R_;
  auto flush = [&](std::size_t tw, std::size_t filled) {
    for (std::size_t r = 0; r < R; ++r) {
      std::uint64_t* a = block + r * 64;
      std::fill(a + filled, a + 64, 0);
      transpose64(a);
      const std::size_t last = std::min<std::size_t>(64, B - r * 64);
      for (std::size_t q = 0; q < last; ++q) cf[(r * 64 + q) * CW + tw] = a[q];
    }
  };
  std::size_t t = 0;
  for (std::size_t w = 0; w < W_; ++w) {
    for (std::uint64_t b = s[w]; b; b &= b - 1) {
      const std::size_t u = (w << 6) + static_cast<std::size_t>(__builtin_ctzll(b));
      const std::uint64_t* row = &rows_[u * R];
      for (std::size_t r = 0; r < R; ++r) block[r * 64 + (t & 63)] = row[r];
      if ((++t & 63) == 0) flush((t >> 6) - 1, 64);
    }
  }
  if (t & 63) flush(t >> 6, t & 63);
  const std::uint64_t* cp = cf + M * CW;
  points_visited_ += static_cast<long long>(n_s);
  if (poll(CW * R * 64)) return false;
  const PopcountMode mode = problem_.popcount_mode();
  bool identity = P == K;
  for (std::size_t p = 0; p < P && identity; ++p)
    identity = static_cast<std::size_t>(plane_class_[p]) == p;
  for (std::size_t i = 0; i < M; ++i) {
    kernels::pair_plane_row(mode, cf, M, i, cp, P, CW, compact_scratch_.data(),
                            compact_row_.data());
    const std::uint32_t* c = compact_row_.data();
    if (F16 != nullptr) {
      // 16-bit counts (pair_counts16): class k's row i on its own, j >= i
      const std::size_t stride = small_stride();
      for (std::size_t p = 0; p < P; ++p) {
        std::int16_t* out = F16 + (2 * i + static_cast<std::size_t>(plane_class_[p])) * stride;
        for (std::size_t j = i; j < M; ++j)
          out[j] = static_cast<std::int16_t>(c[(j - i) * P + p]);
      }
      if (poll((M - i) * CW * P / 4 + 1)) return false;
      continue;
    }
    double* row = F + i * M * K;
    if (unit_planes_ && identity) {
      // plane k is class k's: the row is the counts themselves (one loop, vectorized)
      for (std::size_t x = 0; x < (M - i) * K; ++x) row[i * K + x] = static_cast<double>(c[x]);
    } else if (unit_planes_) {
      // one plane per class, of weight 1: a cell is its plane counts
      for (std::size_t j = i; j < M; ++j, c += P)
        for (std::size_t p = 0; p < P; ++p)
          row[j * K + static_cast<std::size_t>(plane_class_[p])] = static_cast<double>(c[p]);
    } else {
      for (std::size_t j = i; j < M; ++j, c += P) {
        double* cell = row + j * K;
        for (std::size_t k = 0; k < K; ++k) cell[k] = 0.0;
        for (std::size_t p = 0; p < P; ++p)
          cell[plane_class_[p]] += static_cast<double>(c[p]) * plane_scale_[p];
      }
    }
    if (poll((M - i) * CW * P / 4 + 1)) return false;
  }
  ++compact_calls_;
  return true;
}

std::size_t Depth2Solver::upfront_bytes(const Problem& problem) {
  const std::size_t M = problem.n_features(), K = static_cast<std::size_t>(problem.n_classes());
  const std::size_t slots = problem.integral() ? 3 : 1;
  // ones_: at most M ints per point, plus its start
  return slots * (M * M * K * sizeof(double) + problem.n_words() * 8) +
         problem.n_points() * (sizeof(std::size_t) + M * sizeof(int) + sizeof(int)) +
         problem.n_words() * 8;
}

std::size_t Depth2Solver::bytes() const {
  std::size_t total = 0;
  for (const auto& slot : slots_)
    total += slot.F.capacity() * sizeof(double) + slot.support.capacity() * 8;
  total += (compact_feats_.capacity() + compact_block_.capacity() +
            compact_scratch_.capacity() + rows_.capacity()) * 8 +
           compact_row_.capacity() * sizeof(std::uint32_t);
  total += parent_.F.capacity() * sizeof(double) + parent_.support.capacity() * 8;
  total += ones_.capacity() * sizeof(int) + ones_start_.capacity() * sizeof(std::size_t);
  total += G_.capacity() * sizeof(double);
  for (const Slot16* slot : {&small_[0], &small_[1], &small_parent_})
    total += slot->F.capacity() * sizeof(std::int16_t) + slot->support.capacity() * 8;
  return total;
}

double Depth2Solver::best_depth1(int i, int side, const double* ci, double Lambda, int* feature) {
  double best = leaf(ci, Lambda);
  *feature = -1;
  if (K_ == 2) {
    // binary labels: a leaf's mistakes are min(count0, count1); no per-class loop
    const double* Fi = F_ + static_cast<std::size_t>(i) * M_ * 2;
    const double wi = ci[0] + ci[1];
    // the support weight of the cell x_i = side (its weight without separate support weights)
    const double si = !apart_ ? wi : side ? G(i, i) : support_total_ - G(i, i);
    for (int j = 0; j < M_; ++j) {
      if (j == i) continue;
      const double* fij = j > i ? Fi + static_cast<std::size_t>(j) * 2
                                : F_ + (static_cast<std::size_t>(j) * M_ + i) * 2;
      const double* fj = F_ + (static_cast<std::size_t>(j) * M_ + j) * 2;
      const double a0 = side ? fij[0] : fj[0] - fij[0];
      const double a1 = side ? fij[1] : fj[1] - fij[1];
      // (min_leaf_ = 0: never true, so the unconstrained loop only pays a predictable branch)
      if (min_leaf_ > 0.0) {
        const double sa = !apart_ ? a0 + a1 : side ? G(i, j) : G(j, j) - G(i, j);
        if (sa < min_leaf_ || si - sa < min_leaf_) continue;
      }
      const double v = std::min(a0, a1) + std::min(ci[0] - a0, ci[1] - a1) + 2 * Lambda;
      if (v < best - tau_) {
        best = v;
        *feature = j;
      }
    }
    return best;
  }
  // cells of the branch x_i = side split further on j: a = (x_j = 1), b = (x_j = 0)
  double* a = scratch_.data() + 2 * K_;
  double* b = scratch_.data() + 3 * K_;
  for (int j = 0; j < M_; ++j) {
    if (j == i) continue;
    const int lo = std::min(i, j), hi = std::max(i, j);
    for (int k = 0; k < K_; ++k) {
      const double fij = F(k, lo, hi);
      const double fj = F(k, j, j);
      a[k] = side ? fij : fj - fij;  // x_i = side and x_j = 1
      b[k] = ci[k] - a[k];           // x_i = side and x_j = 0
    }
    if (min_leaf_ > 0.0) {
      double wa = 0.0, wb = 0.0;
      if (apart_) {
        const double si = side ? G(i, i) : support_total_ - G(i, i);
        wa = side ? G(i, j) : G(j, j) - G(i, j);
        wb = si - wa;
      } else {
        for (int k = 0; k < K_; ++k) {
          wa += a[k];
          wb += b[k];
        }
      }
      if (wa < min_leaf_ || wb < min_leaf_) continue;
    }
    const double v = leaf(a, Lambda) + leaf(b, Lambda);
    if (v < best - tau_) {
      best = v;
      *feature = j;
    }
  }
  return best;
}

bool Depth2Solver::poll(std::size_t work) {
  if (!budget_) return false;
  since_poll_ += work;
  if (since_poll_ < kPollStride) return false;
  since_poll_ = 0;
  return budget_->check_clock();
}

bool Depth2Solver::accumulate(const std::uint64_t* bits, double* F, double sign) {
  const auto& pcw = problem_.point_class_weight();
  const std::size_t M = static_cast<std::size_t>(M_), K = static_cast<std::size_t>(K_);
  for (std::size_t w = 0; w < W_; ++w) {
    std::uint64_t b = bits[w];
    while (b) {
      const std::size_t u = (w << 6) + static_cast<std::size_t>(__builtin_ctzll(b));
      b &= b - 1;
      ++points_visited_;
      const double* c = &pcw[u * K];
      const OnesView on = ones(u);
      // a point costs on^2 / 2 updates: thousands of features make one pass take seconds
      if (poll(on.size() * on.size() / 2 + 1)) return false;
      if (single_class_[u] >= 0) {
        // the common case (no conflicting duplicates): one class cell per pair
        const std::size_t k = static_cast<std::size_t>(single_class_[u]);
        const double v = sign * c[k];
        for (std::size_t x = 0; x < on.size(); ++x) {
          double* row = F + static_cast<std::size_t>(on[x]) * M * K + k;
          for (std::size_t y = x; y < on.size(); ++y) row[static_cast<std::size_t>(on[y]) * K] += v;
        }
        continue;
      }
      for (std::size_t x = 0; x < on.size(); ++x) {
        double* row = F + static_cast<std::size_t>(on[x]) * M * K;
        for (std::size_t y = x; y < on.size(); ++y) {
          double* cell = row + static_cast<std::size_t>(on[y]) * K;
          for (std::size_t k = 0; k < K; ++k) cell[k] += sign * c[k];
        }
      }
    }
  }
  return true;
}

bool Depth2Solver::load_counts(const std::uint64_t* s) {
  ++calls_;
  // the previous support's slot: s and it may be the two children of one split
  Slot* last = nullptr;
  for (auto& slot : slots_)
    if (slot.last_use >= 0 && (!last || slot.last_use > last->last_use)) last = &slot;
  const bool siblings = slots_.size() > 1 && last && disjoint(s, last->support.data());
  if (siblings && parent_valid_ && is_union(parent_.support.data(), s, last->support.data())) {
    // s = parent \ last: its counts are the parent's less the sibling's (exact: integers)
    Slot* target = &slots_[0];
    for (auto& slot : slots_)
      if (&slot != last && (target == last || slot.last_use < target->last_use)) target = &slot;
    const std::size_t cells = static_cast<std::size_t>(M_) * M_ * K_;
    if (target->F.size() == cells || try_resize(target->F, cells)) {
      const double* a = parent_.F.data();
      const double* b = last->F.data();
      double* out = target->F.data();
      for (std::size_t c = 0; c < cells; ++c) out[c] = a[c] - b[c];
      std::copy(s, s + W_, target->support.begin());
      target->last_use = calls_;
      F_ = out;
      ++parent_hits_;
      return !poll(cells);
    }
  }
  const std::size_t n_slots = slots_.size();
  const bool counted = fresh_counts(s);
  if (counted && siblings && slots_.size() == n_slots && F_ != last->F.data()) {
    // keep the union of the two siblings: the next sibling pair of the same parent needs one
    // fresh count instead of two
    const std::size_t cells = static_cast<std::size_t>(M_) * M_ * K_;
    if (parent_.F.size() == cells || try_resize(parent_.F, cells)) {
      parent_.support.resize(W_);
      for (std::size_t w = 0; w < W_; ++w) parent_.support[w] = s[w] | last->support[w];
      const double* b = last->F.data();
      for (std::size_t c = 0; c < cells; ++c) parent_.F[c] = F_[c] + b[c];
      parent_valid_ = true;
    }
  }
  return counted;
}

bool Depth2Solver::disjoint(const std::uint64_t* a, const std::uint64_t* b) const {
  for (std::size_t w = 0; w < W_; ++w)
    if (a[w] & b[w]) return false;
  return true;
}

bool Depth2Solver::is_union(const std::uint64_t* u, const std::uint64_t* a,
                            const std::uint64_t* b) const {
  for (std::size_t w = 0; w < W_; ++w)
    if (u[w] != (a[w] | b[w])) return false;
  return true;
}

bool Depth2Solver::try_resize(std::vector<double>& F, std::size_t cells) {
  try {
    F.assign(cells, 0.0);
    return true;
  } catch (const std::bad_alloc&) {
    return false;  // an accelerator: go without
  }
}

bool Depth2Solver::fresh_counts(const std::uint64_t* s) {
  const PopcountMode mode = problem_.popcount_mode();
  const std::size_t fresh = kernels::count(mode, s, W_);
  Slot* best = nullptr;
  std::size_t best_diff = fresh;
  for (auto& slot : slots_) {
    if (slot.last_use < 0) continue;
    const std::size_t d = kernels::count_xor(mode, s, slot.support.data(), W_);
    if (d < best_diff) {
      best_diff = d;
      best = &slot;
    }
  }
  bool complete;
  // a fresh count by compaction when it costs less than the update of the nearest slot
  const double compact = compact_cost(fresh);
  if (compact < pair_pass_cost(best_diff)) best = nullptr;
  if (best) {
    for (std::size_t w = 0; w < W_; ++w) diff_[w] = s[w] & ~best->support[w];
    complete = accumulate(diff_.data(), best->F.data(), 1.0);
    for (std::size_t w = 0; w < W_ && complete; ++w) diff_[w] = best->support[w] & ~s[w];
    complete = complete && accumulate(diff_.data(), best->F.data(), -1.0);
  } else {
    auto least_recent = [this] {
      Slot* lru = &slots_[0];
      for (auto& slot : slots_)
        if (slot.last_use < lru->last_use) lru = &slot;
      return lru;
    };
    const std::size_t cells = static_cast<std::size_t>(M_) * M_ * K_;
    best = least_recent();
    while (best->F.size() != cells) {
      try {
        best->F.resize(cells);
      } catch (const std::bad_alloc&) {
        // a cache slot is an accelerator: do with the ones there are (slot 0 always is)
        slots_.erase(slots_.begin() + (best - slots_.data()));
        best = least_recent();
      }
    }
    if (compact < pair_pass_cost(fresh)) {
      complete = compact_counts(s, fresh, best->F.data());
    } else {
      std::fill(best->F.begin(), best->F.end(), 0.0);
      complete = accumulate(s, best->F.data(), 1.0);
    }
  }
  if (!complete) {
    best->last_use = -1;  // its counts are of no support: refilled from zero when next used
    F_ = nullptr;
    return false;
  }
  std::copy(s, s + W_, best->support.begin());
  best->last_use = calls_;
  F_ = best->F.data();
  return true;
}

bool Depth2Solver::support_counts(const std::uint64_t* s) {
  const std::size_t M = static_cast<std::size_t>(M_);
  if (G_.size() != M * M) G_.assign(M * M, 0.0);  // bad_alloc: the dp's own handling
  std::fill(G_.begin(), G_.end(), 0.0);
  const std::vector<double>& sup = problem_.point_support();
  double total = 0.0;
  for (std::size_t w = 0; w < W_; ++w) {
    for (std::uint64_t b = s[w]; b; b &= b - 1) {
      const std::size_t u = (w << 6) + static_cast<std::size_t>(__builtin_ctzll(b));
      const double v = sup[u];
      total += v;
      const OnesView on = ones(u);
      if (poll(on.size() * on.size() / 2 + 1)) return false;
      if (v == 0.0) continue;
      for (std::size_t x = 0; x < on.size(); ++x) {
        double* row = &G_[static_cast<std::size_t>(on[x]) * M];
        for (std::size_t y = x; y < on.size(); ++y) row[static_cast<std::size_t>(on[y])] += v;
      }
    }
  }
  support_total_ = total;
  return true;
}

bool Depth2Solver::small_counts() const {
  // unit planes: every class weight of a point is 0 or 1, so a count is at most the points
  return has_planes_ && unit_planes_ && K_ == 2 && problem_.n_points() <= kSmallPoints;
}

std::size_t Depth2Solver::small_stride() const {
  return (static_cast<std::size_t>(M_) + 7) / 8 * 8 + 8;
}

const std::int16_t* Depth2Solver::pair_counts16(const std::uint64_t* s, Budget* budget) {
  budget_ = budget;
  ++calls_;
  const std::size_t cells = 2 * static_cast<std::size_t>(M_) * small_stride();
  // load_counts' sibling shortcut on 16-bit counts: after two disjoint supports, their sum is
  // kept as their union's; a support that with the one before makes up that union is the
  // union's counts less the other's (exact: integers below 2^15, the cells past M stay zero)
  Slot16* last = small_[0].last_use > small_[1].last_use ? &small_[0] : &small_[1];
  Slot16* target = last == &small_[0] ? &small_[1] : &small_[0];
  const bool siblings = last->last_use >= 0 && disjoint(s, last->support.data());
  const std::int16_t* out = nullptr;
  try {
    if (target->F.size() != cells) target->F.assign(cells, 0);
    if (target->support.size() != W_) target->support.assign(W_, 0);
    if (siblings && small_parent_valid_ &&
        is_union(small_parent_.support.data(), s, last->support.data())) {
      const std::int16_t* a = small_parent_.F.data();
      const std::int16_t* b = last->F.data();
      std::int16_t* f = target->F.data();
      for (std::size_t c = 0; c < cells; ++c) f[c] = static_cast<std::int16_t>(a[c] - b[c]);
      ++parent_hits_;
      out = f;
    } else {
      const std::size_t n_s = kernels::count(problem_.popcount_mode(), s, W_);
      if (compact_counts(s, n_s, nullptr, target->F.data())) {
        out = target->F.data();
        if (siblings) {
          if (small_parent_.F.size() != cells) small_parent_.F.assign(cells, 0);
          small_parent_.support.resize(W_);
          for (std::size_t w = 0; w < W_; ++w) small_parent_.support[w] = s[w] | last->support[w];
          const std::int16_t* b = last->F.data();
          for (std::size_t c = 0; c < cells; ++c)
            small_parent_.F[c] = static_cast<std::int16_t>(out[c] + b[c]);
          small_parent_valid_ = true;
        }
      }
    }
  } catch (const std::bad_alloc&) {
    out = nullptr;  // the caller counts the other way
  }
  if (out == nullptr) {
    target->last_use = -1;  // its counts are of no support
    budget_ = nullptr;
    return nullptr;
  }
  std::copy(s, s + W_, target->support.begin());
  target->last_use = calls_;
  const bool stopped = poll(cells);
  budget_ = nullptr;
  return stopped ? nullptr : out;
}

const double* Depth2Solver::pair_counts(const std::uint64_t* s, Budget* budget) {
  budget_ = budget;
  const bool loaded = load_counts(s);
  budget_ = nullptr;
  return loaded ? F_ : nullptr;
}

Depth2Solver::Result Depth2Solver::solve(const std::uint64_t* s, const double* cw,
                                         double Lambda, Budget* budget) {
  budget_ = budget;
  Result best{leaf(cw, Lambda), -1, -1, -1};
  if (!load_counts(s) || (apart_ && !support_counts(s))) {
    best.exact = false;
    budget_ = nullptr;
    return best;
  }
  double* c1 = scratch_.data();
  double* c0 = scratch_.data() + K_;
  for (int i = 0; i < M_; ++i) {
    double w1 = 0.0, w0 = 0.0;
    for (int k = 0; k < K_; ++k) {
      c1[k] = F(k, i, i);
      c0[k] = cw[k] - c1[k];
      w1 += c1[k];
      w0 += c0[k];
    }
    if (w1 <= 0.0 || w0 <= 0.0) continue;  // an empty side never beats the leaf
    // a side below the minimum leaf support
    const double s1 = apart_ ? G(i, i) : w1, s0 = apart_ ? support_total_ - s1 : w0;
    if (s1 < min_leaf_ || s0 < min_leaf_) continue;
    if (2 * Lambda >= best.value - tau_) break;  // any split has >= 2 leaves
    // each root costs two depth-one scans of M K cells
    if (poll(2 * static_cast<std::size_t>(M_) * static_cast<std::size_t>(K_))) {
      best.exact = false;
      break;
    }
    int f0 = -1, f1 = -1;
    const double v0 = best_depth1(i, 0, c0, Lambda, &f0);
    if (v0 + Lambda >= best.value - tau_) continue;
    const double v1 = best_depth1(i, 1, c1, Lambda, &f1);
    if (v0 + v1 < best.value - tau_) best = Result{v0 + v1, i, f0, f1};
  }
  budget_ = nullptr;
  return best;
}

}  // namespace odtkit

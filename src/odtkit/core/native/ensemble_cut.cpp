#include "ensemble_cut.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "maxflow.hpp"
#include "push_relabel.hpp"

namespace odtkit {
namespace {

constexpr std::int64_t kCapacityCeiling = std::int64_t{1} << 62;

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  return (b > kCapacityCeiling - a) ? kCapacityCeiling : a + b;
}

// An allocator that leaves the new elements of resize() uninitialised, for arrays every element
// of which is written before it is read.
template <typename T>
struct NoInit : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = NoInit<U>;
  };
  NoInit() = default;
  template <typename U>
  NoInit(const NoInit<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Everything one call derives from the trees, with global node ids g = offset[t] + h.
class CutBuilder {
 public:
  CutBuilder(const CompactEnsemble& ens, double lam, double scale)
      : ens_(ens), N_(ens.n_samples), K_(ens.n_features) {
    const std::size_t T = ens.trees.size();
    offset_.assign(T + 1, 0);
    for (std::size_t t = 0; t < T; ++t) offset_[t + 1] = offset_[t] + ens.trees[t].n_nodes;
    const std::int64_t n = offset_[T];
    parent_.assign(static_cast<std::size_t>(n), -1);
    depth_.assign(static_cast<std::size_t>(n), 0);
    gain_.assign(static_cast<std::size_t>(n), 0);
    for (std::size_t t = 0; t < T; ++t) {
      const CompactTree& tr = ens.trees[t];
      for (std::int32_t h = 0; h < tr.n_nodes; ++h) {
        if (tr.left[h] < 0) continue;
        const std::int64_t g = offset_[t] + h;
        parent_[offset_[t] + tr.left[h]] = static_cast<std::int32_t>(h);
        parent_[offset_[t] + tr.right[h]] = static_cast<std::int32_t>(h);
        // pre-order: a parent's depth is set before its children's
        depth_[offset_[t] + tr.left[h]] = depth_[g] + 1;
        depth_[offset_[t] + tr.right[h]] = depth_[g] + 1;
        const std::int64_t gain = tr.error[h] - tr.error[tr.left[h]] - tr.error[tr.right[h]];
        if (gain < 0)
          throw std::invalid_argument("a split increases training error: the trees' error "
                                      "counts are inconsistent (tree " +
                                      std::to_string(t) + ")");
        gain_[g] = gain;
        ++n_splits_;
      }
    }
    // source capacities exactly as numpy: gain * int64(scale), and their float sum + 1 as the
    // clip of the sink capacities
    const double s = scale;
    if (!(s >= 1.0) || s > 4.6e18) throw std::invalid_argument("scale must be in [1, 2**62]");
    scale_ = static_cast<std::int64_t>(s);
    std::int64_t total = 0;
    for (std::int64_t g = 0; g < n; ++g) {
      if (gain_[g] > kCapacityCeiling / scale_)
        throw std::invalid_argument("scaled gains overflow: scale too large");
      total_gain_ += gain_[g];
      total = saturating_add(total, gain_[g] * scale_);
    }
    if (total >= kCapacityCeiling) throw std::invalid_argument("scaled gains overflow");
    total_src_ = total;
    limit_ = static_cast<double>(total) + 1.0;
    lam_T_ = lam * static_cast<double>(T);
    scale_f_ = s;
  }

  std::int64_t n_nodes() const { return offset_.back(); }
  std::int64_t n_splits() const { return n_splits_; }
  std::int64_t total_gain() const { return total_gain_; }
  std::int64_t src(std::int64_t g) const { return gain_[g] * scale_; }

  // Sink capacity of pair (k, i): ceil(min(lam T c_k w_i scale, limit)), as numpy computes it.
  std::int64_t cap(std::int32_t k, std::int32_t i) const {
    const double pair_cost = ens_.costs[k] * static_cast<double>(ens_.weight[i]);
    if (!(pair_cost > 0.0)) return 0;
    const double real = (lam_T_ * pair_cost) * scale_f_;
    return static_cast<std::int64_t>(std::ceil(std::min(real, limit_)));
  }
  // cap(k, i) for an unpaid pair, 0 for a paid one: read from the forcing state's capu, which
  // holds exactly that, where the caller has it (rule 5's rounds: one load instead of the byte
  // of `paid`, the example's weight and the rounding)
  std::int64_t unpaid_cap(const std::vector<std::uint8_t>& paid, const std::int64_t* capu,
                          std::int32_t k, std::int32_t i) const {
    const std::int64_t key = static_cast<std::int64_t>(k) * N_ + i;
    if (capu != nullptr) return capu[key];
    return paid[key] ? 0 : cap(k, i);
  }
  double pair_cost(std::int32_t k, std::int32_t i) const {
    return ens_.costs[k] * static_cast<double>(ens_.weight[i]);
  }

  // dead[g]: the subtree of split g gains nothing
  void mark_dead(std::vector<std::uint8_t>& dead) const {
    dead.assign(static_cast<std::size_t>(n_nodes()), 0);
    std::vector<std::int64_t> sub(static_cast<std::size_t>(n_nodes()), 0);
    for (std::size_t t = 0; t < ens_.trees.size(); ++t) {
      const CompactTree& tr = ens_.trees[t];
      const std::int64_t o = offset_[t];
      for (std::int32_t h = tr.n_nodes - 1; h >= 0; --h) {
        if (tr.left[h] < 0) continue;
        sub[o + h] = gain_[o + h] + sub[o + tr.left[h]] + sub[o + tr.right[h]];
        dead[o + h] = sub[o + h] == 0;
      }
    }
  }

  // What the forcing rule keeps between its calls (rule 5 calls it again after each round), so
  // that a call re-sums only the slices whose feature gained paid pairs since: `unpaid[g]` of a
  // first-use split g is the sink capacity of its pairs outside P, valid while
  // node_version[g] == feature_version[feature of g]; `capu` (K x N) is cap(k, i) for an unpaid
  // pair and 0 for a paid one, so a re-sum is a gather over the slice. Where K x N is large
  // (wide data: 8 bytes a pair against the byte of `paid`) capu stays empty and a re-sum reads
  // `paid` and computes cap() as it goes.
  struct ForceState {
    static constexpr std::int64_t kMaxCapuPairs = std::int64_t{1} << 25;  // 256 MB of capu
    std::vector<std::int64_t> val, unpaid, node_version, feature_version, capu;
    std::int64_t cap_max = 0;  // capu's largest entry when filled: no later entry exceeds it
    static std::size_t bytes(std::int64_t n, std::int64_t K, std::int64_t N) {
      // capu, and (rule 6, exclude) a scan position per node
      const std::int64_t pairs = K * N <= kMaxCapuPairs ? K * N : 0;
      return static_cast<std::size_t>(n) * (24 + (pairs ? 4 : 0)) +
             static_cast<std::size_t>(K) * 8 + static_cast<std::size_t>(pairs) * 8;
    }
  };
  void init_force_state(const std::vector<std::uint8_t>& paid, ForceState& st) const {
    const std::int64_t n = n_nodes();
    st.val.assign(static_cast<std::size_t>(n), 0);
    st.unpaid.assign(static_cast<std::size_t>(n), 0);
    st.node_version.assign(static_cast<std::size_t>(n), 0);
    st.feature_version.assign(static_cast<std::size_t>(K_), 1);
    st.capu.clear();
    if (K_ * N_ > ForceState::kMaxCapuPairs) return;
    st.capu.assign(static_cast<std::size_t>(K_ * N_), 0);
    fill_capu(paid, st.capu);
    // paid only grows, so no later capu (nor a residual of it) exceeds today's largest entry
    st.cap_max = st.capu.empty() ? 0 : *std::max_element(st.capu.begin(), st.capu.end());
  }

  // The forcing rule until nothing changes, from the splits already in `forced` (a parent-closed
  // set every minimum closure contains, their pairs in `paid`); adds to forced, paid (K x N) and
  // the constant part of the cut (the sink capacities of the paid pairs). False when the budget
  // stopped it (what is forced so far is still forced). The splits a tree's pass forces pay
  // their pairs at once, before the next tree's pass (P only grows, and the rule holds for any
  // P every minimum closure contains), so a pass sees every pair paid so far.
  bool force(const std::vector<std::uint8_t>& dead, std::vector<std::uint8_t>& forced,
             std::vector<std::uint8_t>& paid, ForceState& st, std::int64_t& constant,
             double& paid_cost, long long& iterations, Budget& budget) const {
    std::vector<std::int64_t>& val = st.val;
    std::vector<std::int64_t> newly;
    for (;;) {
      ++iterations;
      bool any = false;
      for (std::size_t t = 0; t < ens_.trees.size(); ++t) {
        if (budget.check_clock()) return false;  // what is forced is paid: stop here
        const CompactTree& tr = ens_.trees[t];
        const std::int64_t o = offset_[t];
        for (std::int32_t h = tr.n_nodes - 1; h >= 0; --h) {
          const std::int64_t g = o + h;
          if (tr.left[h] < 0 || forced[g] || dead[g]) {
            val[g] = 0;
            continue;
          }
          std::int64_t cost = 0;
          if (tr.first_use[h]) {
            const std::int32_t k = tr.feature[h];
            if (st.node_version[g] != st.feature_version[k]) {
              st.node_version[g] = st.feature_version[k];
              std::int64_t sum = 0;
              const std::int64_t row = static_cast<std::int64_t>(k) * N_;
              const std::int64_t begin = tr.leaf_start[h], stop = tr.leaf_start[tr.end[h]];
              if (!st.capu.empty()) {
                // the byte of `paid` first: at small lam most pairs are paid, and its row is
                // an eighth of capu's in the cache
                const std::uint8_t* is_paid = paid.data() + row;
                const std::int64_t* capu = st.capu.data() + row;
                if (st.cap_max <= kCapacityCeiling / std::max<std::int64_t>(1, stop - begin)) {
                  // no partial sum can reach the ceiling, so saturating_add would return a + b
                  // at every step: plain adds, without its compare chained through the sum
                  // (rule 5's rounds re-sum every first-use slice, ~100 M entries, after each)
                  for (std::int64_t j = begin; j < stop; ++j) {
                    const std::int32_t i = tr.by_leaf[j];
                    sum += is_paid[i] ? 0 : capu[i];
                  }
                } else {
                  for (std::int64_t j = begin; j < stop; ++j) {
                    const std::int32_t i = tr.by_leaf[j];
                    if (!is_paid[i]) sum = saturating_add(sum, capu[i]);
                  }
                }
              } else {
                for (std::int64_t j = begin; j < stop; ++j) {
                  const std::int32_t i = tr.by_leaf[j];
                  if (!paid[row + i]) sum = saturating_add(sum, cap(k, i));
                }
              }
              st.unpaid[g] = sum;
            }
            cost = st.unpaid[g];
          }
          // |val| <= 2**62: sources sum below 2**62 and cost is clipped there
          val[g] = src(g) - cost + std::max<std::int64_t>(0, val[o + tr.left[h]]) +
                   std::max<std::int64_t>(0, val[o + tr.right[h]]);
        }
        newly.clear();
        for (std::int32_t h = 0; h < tr.n_nodes; ++h) {
          const std::int64_t g = o + h;
          if (tr.left[h] < 0 || forced[g] || dead[g] || val[g] <= 0) continue;
          if (h != 0 && !forced[o + parent_[g]]) continue;
          forced[g] = 1;
          newly.push_back(g);
        }
        for (const std::int64_t g : newly) pay(g, paid, &st, constant, paid_cost);
        any = any || !newly.empty();
      }
      if (!any) return true;
    }
  }

  // Marks the pairs of split g paid (if it is a first-use node) and adds their capacities to
  // `constant` and their c_k w_i to `paid_cost` (and, with a forcing state, zeroes their capu
  // and moves their feature's version on); true if any pair was not paid yet.
  bool pay(std::int64_t g, std::vector<std::uint8_t>& paid, ForceState* st,
           std::int64_t& constant, double& paid_cost) const {
    const std::size_t t = tree_of(g);
    const CompactTree& tr = ens_.trees[t];
    const std::int32_t h = static_cast<std::int32_t>(g - offset_[t]);
    if (!tr.first_use[h]) return false;
    const std::int32_t k = tr.feature[h];
    const std::int64_t row = static_cast<std::int64_t>(k) * N_;
    bool any = false;
    for (std::int64_t j = tr.leaf_start[h]; j < tr.leaf_start[tr.end[h]]; ++j) {
      const std::int32_t i = tr.by_leaf[j];
      if (paid[row + i]) continue;
      paid[row + i] = 1;
      any = true;
      constant = saturating_add(constant, cap(k, i));
      paid_cost += pair_cost(k, i);
      if (st && !st->capu.empty()) st->capu[row + i] = 0;
    }
    if (any && st) ++st->feature_version[k];
    return any;
  }

  static constexpr int kExcludePasses = 16;

  // Rule 6 of odtkit.pruning._cut (exclusion by a feasible flow): marks in `excluded` the live
  // splits (neither dead, forced nor excluded yet) that are in no minimum closure of the network
  // on the live splits and the unpaid pairs, and returns how many it marked. A greedy feasible
  // flow on that network, read from the slices without building it: each live split, deepest
  // first, sends its source capacity into the pairs with sink capacity left of its own slice
  // and of its live ancestors' (per-node pointers skip the exhausted pairs, which stay
  // exhausted). With rsrc and rsnk its residual terminal capacities, R0 = sum of rsrc, and
  // S(h) = the rsnk of the pairs of h and of its live ancestors, every split h with S(h) > R0
  // is excluded. Descendants have S at least their parent's, so the excluded set is closed
  // under children. Needs capu (unpaid sink capacities); false without it.
  // The greedy flow runs on capu itself (its residual sink capacities), and capu is computed
  // again from `paid` afterwards; `st.val` (scratch between the forcing rule's passes) holds S.
  bool exclude(const std::vector<std::uint8_t>& dead, const std::vector<std::uint8_t>& forced,
               const std::vector<std::uint8_t>& paid, ForceState& st,
               std::vector<std::uint8_t>& excluded, std::int64_t& count, Budget& budget) const {
    count = 0;
    if (st.capu.empty()) return false;
    const std::int64_t n = n_nodes();
    if (excluded.size() != static_cast<std::size_t>(n))
      excluded.assign(static_cast<std::size_t>(n), 0);
    const auto live = [&](std::size_t t, std::int32_t h) {
      const std::int64_t g = offset_[t] + h;
      return ens_.trees[t].left[h] >= 0 && !dead[g] && !forced[g] && !excluded[g];
    };
    // A pass's greedy flow F leaves R0 = (live sources) - F and (residual sinks) = (unpaid
    // sinks) - F, and it excludes nothing where the second is <= R0: so where the unpaid sinks
    // hold no more than the live sources, no pass excludes anything, and its flow is not run
    // (the nested cut at 1e-2 on the default forest: sinks 0.43x the sources, two calls).
    {
      fill_capu(paid, st.capu);
      std::int64_t sink = 0, source = 0;
      for (const std::int64_t c : st.capu) sink = saturating_add(sink, c);
      for (std::size_t t = 0; t < ens_.trees.size(); ++t)
        for (std::int32_t h = 0; h < ens_.trees[t].n_nodes; ++h)
          if (live(t, h)) source = saturating_add(source, src(offset_[t] + h));
      if (sink <= source) return true;
    }
    std::vector<std::int32_t> ptr(static_cast<std::size_t>(n), 0);
    bool done = true;
    for (int pass = 0; pass < kExcludePasses; ++pass) {
      std::int64_t found = 0;
      done = exclude_pass(paid, st.capu, st.cap_max, live, ptr, st.val, excluded, found, budget);
      count += found;
      if (!done || found == 0) break;
    }
    fill_capu(paid, st.capu);
    return done;
  }

  // capu from `paid`: cap(k, i) for an unpaid pair, 0 for a paid one.
  void fill_capu(const std::vector<std::uint8_t>& paid, std::vector<std::int64_t>& capu) const {
    for (std::int64_t k = 0; k < K_; ++k)
      for (std::int64_t i = 0; i < N_; ++i)
        capu[k * N_ + i] =
            paid[k * N_ + i] ? 0 : cap(static_cast<std::int32_t>(k), static_cast<std::int32_t>(i));
  }

  // One greedy flow on the splits `live` admits and the exclusion it proves (see exclude()).
  // A flow on the network without the excluded splits is a feasible flow of the network the
  // max-flow will solve (they are in no minimum closure, so the minimal one is the same there),
  // which frees the sink capacity they used and lets the next pass exclude more.
  template <typename Live>
  bool exclude_pass(const std::vector<std::uint8_t>& paid, std::vector<std::int64_t>& rsnk,
                    std::int64_t cap_max, const Live& live, std::vector<std::int32_t>& ptr,
                    std::vector<std::int64_t>& reach, std::vector<std::uint8_t>& excluded,
                    std::int64_t& count, Budget& budget) const {
    fill_capu(paid, rsnk);
    std::int64_t r0 = 0;
    for (std::size_t t = 0; t < ens_.trees.size(); ++t) {
      if (budget.check_clock()) return false;
      const CompactTree& tr = ens_.trees[t];
      const std::int64_t o = offset_[t];
      for (std::int32_t h = 0; h < tr.n_nodes; ++h)
        ptr[o + h] = static_cast<std::int32_t>(tr.leaf_start[h]);  // < N < 2**31
      for (std::int32_t h = tr.n_nodes - 1; h >= 0; --h) {
        if (!live(t, h)) continue;
        std::int64_t amount = src(o + h);
        for (std::int32_t u = h; amount > 0 && u >= 0 && live(t, u);
             u = u == 0 ? -1 : parent_[o + u]) {
          if (!tr.first_use[u]) continue;
          std::int64_t* row = rsnk.data() + static_cast<std::int64_t>(tr.feature[u]) * N_;
          const std::int64_t stop = tr.leaf_start[tr.end[u]];
          for (std::int32_t& j = ptr[o + u]; j < stop; ++j) {
            std::int64_t& r = row[tr.by_leaf[j]];
            const std::int64_t push = std::min(amount, r);
            r -= push;
            amount -= push;
            if (amount == 0) break;  // r may have capacity left: j stays
          }
        }
        r0 = saturating_add(r0, amount);
      }
    }
    // S(h) <= all the residual sink capacity left: nothing to exclude if that is <= R0 (the
    // sinks hold less than the sources, as on the whole network at small lam)
    std::int64_t left = 0;
    for (const std::int64_t r : rsnk) left = saturating_add(left, r);
    if (left <= r0) return true;
    // A sum below R0 plus kChunk entries (each <= cap_max) stays below the ceiling: then the
    // slices are summed a chunk at a time in plain adds, stopping at the first chunk past R0.
    // A sum that stops later is still > R0 (the split is excluded either way), and one that
    // does not stop is the whole slice's: the same exclusions and the same reach below them.
    constexpr std::int64_t kChunk = 64;
    const bool plain = cap_max <= (kCapacityCeiling - r0) / kChunk;
    for (std::size_t t = 0; t < ens_.trees.size(); ++t) {
      if (budget.check_clock()) return false;
      const CompactTree& tr = ens_.trees[t];
      const std::int64_t o = offset_[t];
      for (std::int32_t h = 0; h < tr.n_nodes; ++h) {
        const std::int64_t g = o + h;
        if (!live(t, h)) continue;
        // an excluded parent excludes its children (S only grows downwards)
        if (h != 0 && excluded[o + parent_[g]]) {
          excluded[g] = 1;
          ++count;
          continue;
        }
        std::int64_t sum = (h != 0 && live(t, parent_[g])) ? reach[o + parent_[g]] : 0;
        if (tr.first_use[h]) {
          const std::int64_t* row = rsnk.data() + static_cast<std::int64_t>(tr.feature[h]) * N_;
          const std::int64_t stop = tr.leaf_start[tr.end[h]];
          std::int64_t j = tr.leaf_start[h];
          if (plain) {
            while (j < stop && sum <= r0) {
              for (const std::int64_t e = std::min(stop, j + kChunk); j < e; ++j)
                sum += row[tr.by_leaf[j]];
            }
          } else {
            for (; j < stop && sum <= r0; ++j) sum = saturating_add(sum, row[tr.by_leaf[j]]);
          }
        }
        reach[g] = sum;
        if (sum > r0) {
          excluded[g] = 1;
          ++count;
        }
      }
    }
    return true;
  }

  std::int32_t depth(std::int64_t g) const { return depth_[g]; }

  // The network on the splits neither forced nor dead and the pairs outside `paid`; `local`
  // (per global node) and `pair_key` map its nodes back.
  void build(const std::vector<std::uint8_t>& dead, const std::vector<std::uint8_t>& forced,
             const std::vector<std::uint8_t>& paid, std::vector<std::int32_t>& local,
             std::vector<std::int64_t>& split_of, std::vector<std::int64_t>& pair_key,
             std::vector<std::int64_t>& src, std::vector<std::int64_t>& snk,
             std::vector<std::int32_t>& tails, std::vector<std::int32_t>& heads,
             std::int64_t n_splits, std::int64_t n_entries,
             const std::int64_t* capu = nullptr) const {
    const std::int64_t n = n_nodes();
    local.assign(static_cast<std::size_t>(n), -1);
    // exact sizes (build_bytes counted them): no doubling growth and no copy on the way
    tails.reserve(static_cast<std::size_t>(n_splits + n_entries));
    heads.reserve(static_cast<std::size_t>(n_splits + n_entries));
    split_of.reserve(static_cast<std::size_t>(n_splits));
    // at most one node per split and per (feature, example): no doubling growth and copies
    const auto nodes = static_cast<std::size_t>(n_splits + std::min(n_entries, K_ * N_));
    src.reserve(nodes);
    snk.reserve(nodes);
    pair_key.reserve(nodes - static_cast<std::size_t>(n_splits));
    for (std::size_t t = 0; t < ens_.trees.size(); ++t) {
      const CompactTree& tr = ens_.trees[t];
      for (std::int32_t h = 0; h < tr.n_nodes; ++h) {
        const std::int64_t g = offset_[t] + h;
        if (tr.left[h] < 0 || forced[g] || dead[g]) continue;
        local[g] = static_cast<std::int32_t>(split_of.size());
        split_of.push_back(g);
        src.push_back(this->src(g));
        snk.push_back(0);
        if (h != 0 && local[offset_[t] + parent_[g]] >= 0) {
          tails.push_back(local[g]);
          heads.push_back(local[offset_[t] + parent_[g]]);
        }
      }
    }
    std::vector<std::int32_t> pair_id;  // K x N -> network node, allocated when needed
    for (std::size_t t = 0; t < ens_.trees.size(); ++t) {
      const CompactTree& tr = ens_.trees[t];
      for (std::int32_t h = 0; h < tr.n_nodes; ++h) {
        const std::int64_t g = offset_[t] + h;
        if (local[g] < 0 || !tr.first_use[h]) continue;
        if (pair_id.empty()) pair_id.assign(static_cast<std::size_t>(K_ * N_), -1);
        const std::int32_t k = tr.feature[h];
        const std::int64_t row = static_cast<std::int64_t>(k) * N_;
        for (std::int64_t j = tr.leaf_start[h]; j < tr.leaf_start[tr.end[h]]; ++j) {
          const std::int32_t i = tr.by_leaf[j];
          const std::int64_t c = unpaid_cap(paid, capu, k, i);
          if (c == 0) continue;  // paid, or a free pair: it constrains nothing
          std::int32_t& id = pair_id[row + i];
          if (id < 0) {
            if (src.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
              throw std::invalid_argument("the cut network has more than 2**31 - 1 nodes");
            id = static_cast<std::int32_t>(src.size());
            pair_key.push_back(row + i);
            src.push_back(0);
            snk.push_back(c);
          }
          tails.push_back(local[g]);
          heads.push_back(id);
        }
      }
    }
  }

  // upper bound on the bytes build() allocates; `entries` is exactly the number of pair arcs
  // it will make (the entries of candidate splits into unpaid pairs of positive capacity: at
  // small lam most entries lead into pairs the forced splits already pay, and counting those
  // too refused the 300-tree forest at lam = 1e-3 for a network it could build, issue 42)
  std::size_t build_bytes(const std::vector<std::uint8_t>& dead,
                          const std::vector<std::uint8_t>& forced,
                          const std::vector<std::uint8_t>& paid, std::int64_t& splits,
                          std::int64_t& entries, const std::int64_t* capu = nullptr) const {
    entries = 0;
    splits = 0;
    for (std::size_t t = 0; t < ens_.trees.size(); ++t) {
      const CompactTree& tr = ens_.trees[t];
      for (std::int32_t h = 0; h < tr.n_nodes; ++h) {
        const std::int64_t g = offset_[t] + h;
        if (tr.left[h] < 0 || forced[g] || dead[g]) continue;
        ++splits;
        if (!tr.first_use[h]) continue;
        const std::int32_t k = tr.feature[h];
        for (std::int64_t j = tr.leaf_start[h]; j < tr.leaf_start[tr.end[h]]; ++j)
          entries += unpaid_cap(paid, capu, k, tr.by_leaf[j]) != 0;
      }
    }
    const std::size_t nodes = static_cast<std::size_t>(splits + std::min(entries, K_ * N_));
    const std::size_t arcs = static_cast<std::size_t>(splits + entries);
    return static_cast<std::size_t>(n_nodes()) * 4 + (entries ? K_ * N_ * 4 : 0) +
           nodes * (8 + 8 + 8) + arcs * 8;
  }

  std::int64_t offset(std::size_t t) const { return offset_[t]; }
  std::int64_t gain(std::int64_t g) const { return gain_[g]; }
  bool is_split(std::int64_t g) const {
    const std::size_t t = tree_of(g);
    return ens_.trees[t].left[g - offset_[t]] >= 0;
  }
  // pre-order id of g's parent within its tree (-1 at a root)
  std::int32_t parent(std::int64_t g) const { return parent_[g]; }

 private:
  std::size_t tree_of(std::int64_t g) const {
    return static_cast<std::size_t>(
        std::upper_bound(offset_.begin(), offset_.end(), g) - offset_.begin() - 1);
  }

  const CompactEnsemble& ens_;
  std::int64_t N_, K_;
  std::vector<std::int64_t> offset_;
  std::vector<std::int32_t> parent_;  // pre-order id of the parent within the tree
  std::vector<std::int32_t> depth_;   // 0 at the roots
  std::vector<std::int64_t> gain_;
  std::int64_t n_splits_ = 0, total_gain_ = 0, total_src_ = 0, scale_ = 1;
  double limit_ = 1.0, lam_T_ = 0.0, scale_f_ = 1.0;
};

// The final max-flow on the network of reduce_and_build without building it (issue 42): the
// arcs split -> pair are read from the tree slices, as the reductions read them. A live
// first-use split h of feature k has one arc to each pair (k, i) of its slice that is in the
// network (unpaid, positive capacity); its flow sits at flow_[base_[v] + j] for slice position
// j, so a split's arcs need no stored heads. A pair keeps the list of its splits (one per tree
// at most), and a split's position in it is found back through pos_ (the position of example i
// in its tree's by_leaf). So an arc costs 12 bytes (its int64 flow and the pair's entry)
// against the 24 of the CSR network (two adjacency entries and a flow) and the 8 of the
// builder's tails/heads before it, and nothing is sorted or copied. On scikit-learn's default
// forest at lam = 3e-2 that is the whole 105 M-arc network (no reduction applies there).
//
// The algorithm is ClosureNetwork's push-relabel, the same code (push_relabel.hpp: highest
// label, global relabelling at the same period, the gap rule, phase 1 only, the pair-specific
// steps) from its greedy feasible flow, so the maximum preflow it stops at gives the same flow
// value and finish() the same minimal source side (the residual reach of the excess nodes:
// maxflow.hpp has the argument, which does not depend on how the arcs are stored). Nodes:
// splits 0..S-1 in the builder's order (trees in turn, pre-order within), pairs S..S+P-1.
class SliceFlow : public PushRelabel<SliceFlow> {
  friend class PushRelabel<SliceFlow>;

 public:
  // Counts what the network holds (for the memory check before anything is allocated).
  static void count(const CutBuilder& net, const CompactEnsemble& ens,
                    const std::vector<std::uint8_t>& gone, const std::vector<std::uint8_t>& forced,
                    std::int64_t& splits, std::int64_t& slots, std::int32_t& deepest) {
    splits = slots = 0;
    deepest = -1;
    for (std::size_t t = 0; t < ens.trees.size(); ++t) {
      const CompactTree& tr = ens.trees[t];
      for (std::int32_t h = 0; h < tr.n_nodes; ++h) {
        const std::int64_t g = net.offset(t) + h;
        if (tr.left[h] < 0 || forced[g] || gone[g]) continue;
        ++splits;
        deepest = std::max(deepest, net.depth(g));
        if (tr.first_use[h]) slots += tr.leaf_start[tr.end[h]] - tr.leaf_start[h];
      }
    }
  }
  static std::size_t bytes_needed(std::int64_t splits, std::int64_t slots, std::int64_t entries,
                                  std::int64_t T, std::int64_t K, std::int64_t N) {
    const std::int64_t pairs = std::min(entries, K * N);
    const std::int64_t nodes = splits + pairs;
    return static_cast<std::size_t>(slots * 8 + entries * 4 + T * N * 4 + K * N * 4 +
                                    splits * (8 + 4 * 5 + 8 * 4) + pairs * (8 * 4) +
                                    nodes * (5 * 4 + 2 * 8 + 1 + 4) + 2 * (nodes + 2) * 4);
  }

  SliceFlow(const CutBuilder& net, const CompactEnsemble& ens,
            const std::vector<std::uint8_t>& gone, const std::vector<std::uint8_t>& forced,
            const std::vector<std::uint8_t>& paid)
      : ens_(ens), N_(ens.n_samples), K_(ens.n_features) {
    const std::int64_t n_global = net.n_nodes();
    std::vector<std::int32_t> local(static_cast<std::size_t>(n_global), -1);
    std::int64_t slots = 0;
    for (std::size_t t = 0; t < ens.trees.size(); ++t) {
      const CompactTree& tr = ens.trees[t];
      for (std::int32_t h = 0; h < tr.n_nodes; ++h) {
        const std::int64_t g = net.offset(t) + h;
        if (tr.left[h] < 0 || forced[g] || gone[g]) continue;
        const std::int32_t v = static_cast<std::int32_t>(g_.size());
        local[g] = v;
        g_.push_back(g);
        tree_.push_back(static_cast<std::int32_t>(t));
        h_.push_back(h);
        // a live split's parent is live or forced (the dead and excluded sets are closed
        // under children); an arc into a forced split is satisfied and left out
        up_.push_back(h == 0 ? -1 : local[net.offset(t) + net.parent(g)]);
        kid_.push_back(-1);
        kid_.push_back(-1);
        if (up_.back() >= 0) {
          const std::int32_t u = up_.back();
          kid_[2 * static_cast<std::size_t>(u) + (h == tr.left[h_[u]] ? 0 : 1)] = v;
        }
        src0_.push_back(net.src(g));
        const std::int64_t b = tr.leaf_start[h];
        const std::int64_t e = tr.first_use[h] ? tr.leaf_start[tr.end[h]] : b;
        base_.push_back(slots - b);
        row_.push_back(static_cast<std::int64_t>(tr.feature[h]) * N_);
        slice_begin_.push_back(b);
        slice_end_.push_back(e);
        slots += e - b;
      }
    }
    std::vector<std::int32_t>().swap(local);
    S_ = static_cast<std::int64_t>(g_.size());
    if (S_ >= (std::int64_t{1} << 31) - 1) throw std::invalid_argument("too many splits");
    // pair ids in the order the builder numbers them, and each pair's splits (counted, then
    // filled: the lists come out by increasing split id). The count reads one record per
    // entry, the pair's id and count side by side, with the pairs out of the network (paid, or
    // free) marked in it beforehand: three random reads an entry before (the byte of `paid`,
    // the id, the count by id), the first pass's time on the default forest.
    struct Slot {
      std::int32_t id;  // -1: not seen yet, -2: not in the network
      std::int32_t n;   // its list's length (< 2**31: one entry per split)
    };
    std::vector<Slot> slot(static_cast<std::size_t>(K_ * N_));
    for (std::int64_t k = 0; k < K_; ++k)
      for (std::int64_t i = 0; i < N_; ++i) {
        const std::int64_t key = k * N_ + i;
        const bool out = paid[key] || net.cap(static_cast<std::int32_t>(k),
                                              static_cast<std::int32_t>(i)) == 0;
        slot[key] = {out ? -2 : -1, 0};  // a free pair constrains nothing
      }
    for (std::int64_t v = 0; v < S_; ++v) {
      const std::int32_t k = static_cast<std::int32_t>(row_[v] / N_);
      const std::int32_t* by_leaf = ens.trees[tree_[v]].by_leaf;
      for (std::int64_t j = slice_begin_[v]; j < slice_end_[v]; ++j) {
        const std::int32_t i = by_leaf[j];
        const std::int64_t key = row_[v] + i;
        Slot& sl = slot[key];
        if (sl.id == -2) continue;
        if (sl.id == -1) {
          if (S_ + static_cast<std::int64_t>(key_.size()) >= (std::int64_t{1} << 31) - 1)
            throw std::invalid_argument("the cut network has more than 2**31 - 1 nodes");
          sl.id = static_cast<std::int32_t>(key_.size());
          key_.push_back(key);
          snk0_.push_back(net.cap(k, i));
        }
        ++sl.n;
      }
    }
    P_ = static_cast<std::int64_t>(key_.size());
    rstart_.assign(static_cast<std::size_t>(P_) + 1, 0);
    pid_.resize(static_cast<std::size_t>(K_ * N_));
    for (std::int64_t key = 0; key < K_ * N_; ++key) {
      pid_[key] = std::max(slot[key].id, -1);
      if (slot[key].id >= 0) rstart_[slot[key].id + 1] = slot[key].n;
    }
    std::vector<Slot>().swap(slot);
    for (std::int64_t p = 0; p < P_; ++p) rstart_[p + 1] += rstart_[p];
    // neither is zeroed here: fill_pair_lists writes every list entry, and stashes its runs in
    // flow_[0, entries) and zeroes them after; the slots beyond are zeroed here (at 3e-2 on the
    // default forest the two fills wrote 0.9 GB that was then written again)
    rsplit_.resize(static_cast<std::size_t>(rstart_[P_]));
    flow_.resize(static_cast<std::size_t>(slots));
    std::fill(flow_.begin() + rstart_[P_], flow_.end(), 0);
    fill_pair_lists(ens);
    pos_.resize(static_cast<std::size_t>(ens.trees.size()) * static_cast<std::size_t>(N_));
    for (std::size_t t = 0; t < ens.trees.size(); ++t)
      for (std::int64_t j = 0; j < N_; ++j)
        pos_[t * static_cast<std::size_t>(N_) + ens.trees[t].by_leaf[j]] =
            static_cast<std::int32_t>(j);
    snk_ = snk0_;
    flow_up_.assign(static_cast<std::size_t>(S_), 0);
    n_ = S_ + P_;
    n_parent_arcs_ = 0;
    for (const std::int32_t u : up_) n_parent_arcs_ += u >= 0;
    std::int64_t total = 0;
    for (const std::int64_t c : src0_) total = saturating_add(total, c);
    if (total >= kCapacityCeiling) throw std::invalid_argument("capacities too large");
  }

  // Fills rsplit_ (each pair's splits by increasing id) in two passes through flow_, which
  // holds one int64 per slot (at least one per list entry) and is zeroed again after: the
  // entries (pair id, split id) are first dealt to at most kBuckets runs of consecutive pair
  // ids in split order, each run a sequential stream, then each run is spread into its own
  // part of rsplit_, which stays in cache. A direct spread from the splits (one cache miss an
  // entry over the whole list array) took 1.8 of the default forest's 2.6 s of construction
  // at lam = 3e-2 (76 M entries); the runs keep the split order, so the lists come out the same.
  void fill_pair_lists(const CompactEnsemble& ens) {
    constexpr std::int64_t kBuckets = 1024;
    int shift = 0;
    while ((P_ >> shift) >= kBuckets) ++shift;
    const std::int64_t n_buckets = (P_ >> shift) + 1;
    std::vector<std::int64_t> run(static_cast<std::size_t>(n_buckets) + 1);
    for (std::int64_t b = 0; b <= n_buckets; ++b)
      run[b] = rstart_[std::min(P_, b << shift)];
    std::int64_t* stash = flow_.data();
    {
      std::vector<std::int64_t> put(run.begin(), run.end() - 1);
      for (std::int64_t v = 0; v < S_; ++v) {
        const std::int32_t* by_leaf = ens.trees[tree_[v]].by_leaf;
        for (std::int64_t j = slice_begin_[v]; j < slice_end_[v]; ++j) {
          const std::int32_t id = pid_[row_[v] + by_leaf[j]];
          if (id >= 0) stash[put[id >> shift]++] = (static_cast<std::int64_t>(id) << 32) | v;
        }
      }
    }
    std::vector<std::int64_t> fill(rstart_.begin(), rstart_.end() - 1);
    for (std::int64_t e = 0; e < rstart_[P_]; ++e) {
      const std::int64_t id = stash[e] >> 32;
      rsplit_[fill[id]++] = static_cast<std::int32_t>(stash[e] & 0xffffffff);
      stash[e] = 0;
    }
  }

  std::int64_t n_splits() const { return S_; }
  std::int64_t n_pairs() const { return P_; }
  std::int64_t n_arcs() const { return n_parent_arcs_ + rstart_[P_]; }
  std::int64_t split_global(std::int64_t v) const { return g_[v]; }
  std::int64_t pair_key(std::int64_t p) const { return key_[p]; }
  std::int64_t total_source() const {
    std::int64_t s = 0;
    for (const std::int64_t c : src0_) s = saturating_add(s, c);
    return s;
  }
  std::int64_t total_sink() const {
    std::int64_t s = 0;
    for (const std::int64_t c : snk0_) s = saturating_add(s, c);
    return s;
  }

  // Greedy feasible flow (ClosureNetwork::greedy_start's, on the slices): each split, by
  // decreasing id (children after their parents, so bottom-up), sends its source capacity into
  // the pairs with sink capacity left of its own slice, then of its parent's, and so on up; the
  // parent arcs on the way carry it. What it cannot place becomes its excess.
  void greedy_start(Budget& budget, ClosureCutOutput& out) {
    excess_.assign(static_cast<std::size_t>(n_), 0);
    std::vector<std::int64_t> ptr(slice_begin_);
    std::vector<std::int32_t> path;
    for (std::int64_t v = S_ - 1; v >= 0; --v) {
      if ((v & 4095) == 0 && budget.check_clock()) {
        // the rest keeps its source capacity as excess: a preflow all the same
        for (std::int64_t x = v; x >= 0; --x) excess_[x] = src0_[x];
        return;
      }
      std::int64_t amount = src0_[v];
      path.clear();
      for (std::int32_t u = static_cast<std::int32_t>(v); amount > 0 && u >= 0; u = up_[u]) {
        const std::int32_t* by_leaf = ens_.trees[tree_[u]].by_leaf;
        std::int64_t moved = 0;
        for (std::int64_t& j = ptr[u]; j < slice_end_[u]; ++j) {
          const std::int32_t p = pid_[row_[u] + by_leaf[j]];
          if (p < 0 || snk_[p] == 0) continue;
          const std::int64_t push = std::min(amount, snk_[p]);
          snk_[p] -= push;
          flow_[base_[u] + j] += push;
          amount -= push;
          moved += push;
          ++out.augmentations;
          if (amount == 0) break;  // the pair may have capacity left: j stays
        }
        for (const std::int32_t x : path) flow_up_[x] += moved;
        out.flow += moved;
        path.push_back(u);
        if (path.size() > 256) break;  // deeper chains only leave more to the algorithm
      }
      excess_[v] = amount;
    }
  }

  void run(Budget& budget, ClosureCutOutput& out) { phase1<false>(budget, out); }

  // Phase 1 of push-relabel (push_relabel.hpp), forward or (Reverse) on the reversed network
  // (run_reverse), from the excess greedy_start left.
  template <bool Reverse>
  void phase1(Budget& budget, ClosureCutOutput& out) {
    // ClosureNetwork's HIPR period (m counts each arc once, as its offsets do); measured on
    // the default forest at lam = 3e-2, 0.4x and 3x this period took 1.0x and 1.8x the time
    run_phase1<Reverse>(n_, 6LL * n_ + static_cast<long long>(n_arcs()), budget, out);
  }

  // Push-relabel on the reversed network from the greedy flow (issue 42): what moves is the
  // sink capacity the greedy flow left unused, a pair's "want", from the pairs towards the
  // splits with source capacity left (their excess, label 1), and a split pulled beyond its
  // means holds a deficit (negative excess) that it pulls on from its children, or back from
  // the pairs and parent it sends to. On the default forest at lam = 3e-2 (after rule 7) the
  // greedy flow leaves 2.4 % of the sink capacity unused and 11.8 % of the source capacity
  // unrouted, and every pair is saturated in the end: the forward direction moved all that
  // source capacity around until it was proven dead (19 global relabellings, ~30 CPU s), this
  // one moves the 2.4 % (one relabelling, ~2 CPU s). Labels are exact residual distances from
  // s at each global relabelling; the same highest-label rule, gap rule, relabel period and
  // kept scan positions apply, as they would to the reversed network. Phase 1 stops when no
  // node with a want reaches one with excess; return_deficits() then makes it a flow (below)
  // and finish() reads the minimal source side as for the forward direction.
  void run_reverse(Budget& budget, ClosureCutOutput& out) {
    reversed_ = true;
    phase1<true>(budget, out);
    return_deficits();  // after a stop too: then it is a feasible flow, a valid bound
    // what the pairs receive (the sink capacities' total may exceed int64; the flow does not)
    out.flow = 0;
    for (std::int64_t p = 0; p < P_; ++p) out.flow += snk0_[p] - snk_[p];
  }

  // What the greedy flow left: the source capacity not routed and the sink capacity not used.
  std::int64_t excess_left() const {
    std::int64_t s = 0;
    for (std::int64_t v = 0; v < S_; ++v) s = saturating_add(s, excess_[v]);
    return s;
  }
  std::int64_t sink_left_total() const {
    std::int64_t s = 0;
    for (const std::int64_t c : snk_) s = saturating_add(s, c);
    return s;
  }

  // The deficits left (on the splits a stop or phase 1 left with one) go back along the flow
  // each such split sends, to its pairs first and then to its parent, children before their
  // parents: a split's outflow is at least its deficit (its excess is its source capacity plus
  // inflow minus outflow), so this ends with every split's excess >= 0, and every pair's inflow
  // at most its sink capacity: a feasible flow. After phase 1 no node with a deficit or want is
  // reached in the residual from s (the excess splits), so the flow only fell on arcs outside
  // that reach X, arcs into X carry none and those leaving it are saturated: the flow's value
  // is the capacity of X's cut, a maximum flow (maxflow.hpp's argument then gives the minimal
  // side from it). After a stop it is a feasible flow, a valid bound.
  void return_deficits() {
    for (std::int64_t v = S_ - 1; v >= 0; --v) {
      std::int64_t d = -excess_[v];
      if (d <= 0) continue;
      const std::int32_t* by_leaf = ens_.trees[tree_[v]].by_leaf;
      std::int64_t* f = flow_.data();
      const std::int64_t at = base_[v];  // added to the index: flow_ may be empty
      for (std::int64_t j = slice_begin_[v]; j < slice_end_[v] && d > 0; ++j) {
        if (f[at + j] <= 0) continue;
        const std::int64_t take = std::min(f[at + j], d);
        f[at + j] -= take;
        snk_[pid_[row_[v] + by_leaf[j]]] += take;
        d -= take;
      }
      if (d > 0) {
        flow_up_[v] -= d;
        excess_[up_[v]] -= d;
      }
      excess_[v] = 0;
    }
  }

  // The minimal source side: what the excess nodes reach in the residual network (every
  // source arc is saturated from the start; maxflow.hpp). side[v] for splits then pairs.
  void finish(ClosureCutOutput& out) {
    std::vector<std::uint8_t>& side = out.source_side;
    side.assign(static_cast<std::size_t>(n_), 0);
    if (!(reversed_ && finish_from_splits(side))) {
      std::fill(side.begin(), side.end(), 0);
      reach_by_search(side);
    }
    std::int64_t cut = 0;
    for (std::int64_t v = 0; v < S_; ++v)
      if (!side[v]) cut = saturating_add(cut, src0_[v]);
    for (std::int64_t p = 0; p < P_; ++p)
      if (side[S_ + p]) cut = saturating_add(cut, snk0_[p]);
    out.cut = cut;
  }

 private:
  // finish()'s reach without a search over every arc, for the reverse direction, whose side
  // is often the whole network (the default forest at lam = 3e-2: 76 M arcs, ~1.2 CPU s to
  // search, ~0.02 s here). The splits with excess and their ancestors (infinite parent arcs)
  // are reached; a pair is reached iff one of its splits is (only splits have arcs into it);
  // another split w is reached iff its parent is and sends it flow back (flow_up[w] > 0), or
  // it sends flow to a reached pair (a split reaching it may be found at its first such slot,
  // and none is read through its slice). Passes over the splits not reached apply that until
  // nothing changes: the least set of splits closed under those steps is the reach's splits,
  // and its pairs those of its splits' slices. False where a pair has excess (the forward
  // direction's phase 1 may leave some) or the passes read as many entries as one search
  // would; the caller then searches.
  bool finish_from_splits(std::vector<std::uint8_t>& side) {
    for (std::int64_t p = 0; p < P_; ++p)
      if (excess_[S_ + p] > 0) return false;
    std::vector<std::uint8_t> in(static_cast<std::size_t>(S_), 0);
    const auto take = [&](std::int32_t v) {  // v and its ancestors
      for (; v >= 0 && !in[v]; v = up_[v]) in[v] = 1;
    };
    for (std::int64_t v = 0; v < S_; ++v)
      if (excess_[v] > 0) take(static_cast<std::int32_t>(v));
    std::int64_t all_slots = 0;
    for (std::int64_t v = 0; v < S_; ++v) all_slots += slice_end_[v] - slice_begin_[v];
    // the search reads each arc about twice: past that the passes stop and it runs instead
    long long work = 0;
    const long long budget = all_slots + S_;
    const auto reached = [&](std::int32_t p) {  // pair p: one of its splits is in
      for (std::int64_t c = rstart_[p]; c < rstart_[p + 1]; ++c, ++work)
        if (in[rsplit_[c]]) return true;
      return false;
    };
    for (bool changed = true; changed;) {
      if (work > budget) return false;
      changed = false;
      for (std::int64_t v = S_ - 1; v >= 0; --v) {
        if (in[v]) continue;
        bool step = up_[v] >= 0 && in[up_[v]] && flow_up_[v] > 0;
        const std::int32_t* by_leaf = ens_.trees[tree_[v]].by_leaf;
        const std::int64_t* f = flow_.data();
        const std::int64_t at = base_[v];  // added to the index: flow_ may be empty
        for (std::int64_t j = slice_begin_[v]; j < slice_end_[v] && !step; ++j, ++work)
          if (f[at + j] > 0) step = reached(pid_[row_[v] + by_leaf[j]]);
        if (step) {
          take(static_cast<std::int32_t>(v));
          changed = true;
        }
      }
    }
    for (std::int64_t v = 0; v < S_; ++v) side[v] = in[v];
    std::fill(side.begin() + S_, side.end(), 1);
    for (std::int64_t v = 0; v < S_; ++v) {
      if (in[v]) continue;
      const std::int32_t* by_leaf = ens_.trees[tree_[v]].by_leaf;
      for (std::int64_t j = slice_begin_[v]; j < slice_end_[v]; ++j) {
        const std::int32_t p = pid_[row_[v] + by_leaf[j]];
        if (p >= 0) side[S_ + p] = reached(p);
      }
    }
    return true;
  }

  // finish()'s reach by a search over the residual arcs.
  void reach_by_search(std::vector<std::uint8_t>& side) {
    std::vector<std::int32_t> queue;
    for (std::int64_t v = 0; v < n_; ++v)
      if (excess_[v] > 0) {
        side[v] = 1;
        queue.push_back(static_cast<std::int32_t>(v));
      }
    const auto reach = [&](std::int32_t w) {
      if (side[w]) return;
      side[w] = 1;
      queue.push_back(w);
    };
    // the residual arcs as arc() reads them, with the flow of a pair's arc read only for a
    // split not yet reached: where the side is the whole network (the default forest at
    // lam = 3e-2) this read through pos_ was most of the scan
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const std::int32_t x = queue[head];
      if (x >= S_) {
        for (std::int64_t c = rstart_[x - S_]; c < rstart_[x - S_ + 1]; ++c) {
          const std::int32_t w = rsplit_[c];
          if (!side[w] && flow_[flow_index(w, x)] > 0) reach(w);
        }
        continue;
      }
      const std::int32_t* by_leaf = ens_.trees[tree_[x]].by_leaf;
      for (std::int64_t j = slice_begin_[x]; j < slice_end_[x]; ++j) {
        const std::int32_t p = pid_[row_[x] + by_leaf[j]];
        if (p >= 0) reach(static_cast<std::int32_t>(S_ + p));
      }
      if (up_[x] >= 0) reach(up_[x]);
      for (int k = 0; k < 2; ++k) {
        const std::int32_t c = kid_[2 * static_cast<std::size_t>(x) + k];
        if (c >= 0 && flow_up_[c] > 0) reach(c);
      }
    }
  }

  static constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max();

  // Arcs of node x are cursors c in [arc_begin(x), arc_end(x)). A split's: its slice positions
  // (to the pairs), then its parent, then its two children (the reverse of their parent arcs);
  // a pair's: its list entries (the reverse of its splits' arcs). The sink arcs are apart.
  std::int64_t arc_begin(std::int32_t x) const {
    return x < S_ ? slice_begin_[x] : rstart_[x - S_];
  }
  std::int64_t arc_end(std::int32_t x) const {
    return x < S_ ? slice_end_[x] + 3 : rstart_[x - S_ + 1];
  }
  // The arc at cursor c of x: false if there is none there (a pair outside the network, no
  // parent or child); else its other end w, residual r of x -> w and back of w -> x.
  bool arc(std::int32_t x, std::int64_t c, std::int32_t& w, std::int64_t& r,
           std::int64_t& back) const {
    if (x < S_) {
      const std::int64_t e = slice_end_[x];
      if (c < e) {
        const std::int32_t p = pid_[row_[x] + ens_.trees[tree_[x]].by_leaf[c]];
        if (p < 0) return false;
        w = static_cast<std::int32_t>(S_ + p);
        r = kInf;
        back = flow_[base_[x] + c];
        return true;
      }
      if (c == e) {
        w = up_[x];
        if (w < 0) return false;
        r = kInf;
        back = flow_up_[x];
        return true;
      }
      w = kid_[2 * static_cast<std::size_t>(x) + static_cast<std::size_t>(c - e - 1)];
      if (w < 0) return false;
      r = flow_up_[w];
      back = kInf;
      return true;
    }
    w = rsplit_[c];
    r = flow_[flow_index(w, x)];
    back = kInf;
    return true;
  }
  // flow_ slot of the arc from split v into pair node x
  std::int64_t flow_index(std::int32_t v, std::int32_t x) const {
    const std::int64_t i = key_[x - S_] % N_;
    return base_[v] + pos_[static_cast<std::size_t>(tree_[v]) * static_cast<std::size_t>(N_) +
                           static_cast<std::size_t>(i)];
  }
  // Moves `amount` along the arc at cursor c of x.
  void push(std::int32_t x, std::int64_t c, std::int32_t w, std::int64_t amount) {
    if (x >= S_) {
      flow_[flow_index(w, x)] -= amount;
      return;
    }
    const std::int64_t e = slice_end_[x];
    if (c < e)
      flow_[base_[x] + c] += amount;
    else if (c == e)
      flow_up_[x] += amount;
    else
      flow_up_[w] -= amount;
  }
  std::int64_t sink_left(std::int32_t x) const { return x >= S_ ? snk_[x - S_] : 0; }

  std::int64_t source_left(std::int32_t x) const {
    return x < S_ ? std::max<std::int64_t>(0, excess_[x]) : 0;
  }
  void take_sink(std::int32_t x, std::int64_t amount) { snk_[x - S_] -= amount; }
  // a discharge's scanned arcs count towards the relabelling period (the period was measured
  // so on the default forest)
  static constexpr bool kScanIsWork = true;

  // Exact residual distances to t (a reverse BFS from the pairs with sink capacity left,
  // label 1), or (Reverse) from s (a BFS from the splits with excess, label 1); the rest is
  // dead. Backwards, a pair reaches every split of its list (infinite arcs), a split the pairs
  // its arcs send flow to, its parent if it sends flow up, and its children. Forwards, a split
  // reaches every pair of its slice and its parent (infinite arcs) and a child that sends it
  // flow; a pair reaches a split that sends it flow.
  template <bool Reverse>
  void global_relabel(ClosureCutOutput& out) {
    ++out.phases;
    old_label_.swap(label_);
    label_.assign(static_cast<std::size_t>(n_), dead_);
    buckets_.clear();
    std::vector<std::int32_t>& queue = buckets_.next_active;  // reused: rebuilt below
    std::size_t tail = 0;
    for (std::int64_t v = Reverse ? 0 : S_; v < (Reverse ? S_ : n_); ++v)
      if (Reverse ? excess_[v] > 0 : snk_[v - S_] > 0) {
        label_[v] = 1;
        queue[tail++] = static_cast<std::int32_t>(v);
      }
    const auto reach = [&](std::int32_t u, std::int32_t k) {
      if (label_[u] != dead_) return;
      label_[u] = k;
      queue[tail++] = u;
    };
    // Level by level. A level's pairs reach the unlabelled splits that send to them (in the
    // reverse direction: with flow on the arc); where their lists are longer than the slices
    // of the splits still unlabelled, those splits look for a pair of the level in their own
    // slice instead (a bottom-up step, as in direction-optimising BFS). Either way a split
    // gets the next label exactly when it has such an arc, so the labels are the same; only
    // the order within a level differs, which no label depends on. On the default forest at
    // lam = 3e-2 the pairs' lists hold 76 M entries against the 120,000 splits' slices, most
    // of them labelled by the time the pairs are reached.
    for (std::size_t head = 0; head < tail;) {
      const std::size_t level_end = tail;
      const std::int32_t level = label_[queue[head]];
      std::int64_t down = 0;  // the list entries the level's pairs would read
      for (std::size_t q = head; q < level_end; ++q)
        if (queue[q] >= S_) down += rstart_[queue[q] - S_ + 1] - rstart_[queue[q] - S_];
      bool bottom_up = false;
      // Reversed only: there a slice entry is a sequential read (the flow, then the pair only
      // where it carries some) against a list entry's two random ones (pos_, then the flow).
      // Forward, a list entry is one random read and a slice entry two (the pair, its label),
      // and nothing measured showed the step paying there, so the forward BFS stays top-down.
      if (Reverse && down > S_) {  // the count below costs at most what it may save
        std::int64_t up = 0;
        for (std::int64_t w = 0; w < S_ && up < 4 * down; ++w)
          if (label_[w] == dead_) up += slice_end_[w] - slice_begin_[w];
        bottom_up = up < 4 * down;
      }
      for (; head < level_end; ++head) {
        const std::int32_t x = queue[head];
        const std::int32_t k = label_[x] + 1;
        if (x >= S_) {
          if (bottom_up) continue;
          for (std::int64_t c = rstart_[x - S_]; c < rstart_[x - S_ + 1]; ++c) {
            const std::int32_t w = rsplit_[c];
            // the flow is read (through pos_) only for a split not yet labelled
            if (!Reverse || (label_[w] == dead_ && flow_[flow_index(w, x)] > 0)) reach(w, k);
          }
          continue;
        }
        const std::int32_t* by_leaf = ens_.trees[tree_[x]].by_leaf;
        const std::int64_t* f = flow_.data();
        const std::int64_t at = base_[x];  // added to the index: flow_ may be empty
        for (std::int64_t j = slice_begin_[x]; j < slice_end_[x]; ++j) {
          // backwards, only the arcs carrying flow (a sequential read first)
          if (!Reverse && f[at + j] <= 0) continue;
          const std::int32_t p = pid_[row_[x] + by_leaf[j]];
          if (p >= 0) reach(static_cast<std::int32_t>(S_ + p), k);
        }
        if (up_[x] >= 0 && (Reverse || flow_up_[x] > 0)) reach(up_[x], k);
        for (int side = 0; side < 2; ++side) {
          const std::int32_t c = kid_[2 * static_cast<std::size_t>(x) + side];
          if (c >= 0 && (!Reverse || flow_up_[c] > 0)) reach(c, k);
        }
      }
      if (!bottom_up) continue;
      for (std::int32_t w = 0; w < S_; ++w) {
        if (label_[w] != dead_) continue;
        const std::int32_t* by_leaf = ens_.trees[tree_[w]].by_leaf;
        const std::int64_t* f = flow_.data();
        const std::int64_t at = base_[w];  // added to the index: flow_ may be empty
        for (std::int64_t j = slice_begin_[w]; j < slice_end_[w]; ++j) {
          if (Reverse && f[at + j] <= 0) continue;
          const std::int32_t p = pid_[row_[w] + by_leaf[j]];
          if (p >= 0 && label_[S_ + p] == level) {
            reach(w, level + 1);
            break;
          }
        }
      }
    }
    for (std::int64_t v = 0; v < n_; ++v) {
      const std::int32_t k = label_[v];
      // A valid labelling is a lower bound on the distances to t, so this one only raised
      // labels. An arc v skipped since its last relabel stays inadmissible while v's label
      // holds (the heads' labels only rise, and a push into v makes its reverse arc point
      // up), so v's scan resumes where it was, as after a push: on the default forest the
      // shallow splits' slices (up to 10**5 arcs) were read again from the start after
      // every global relabelling. The same holds on the reversed network.
      if (k != old_label_[v]) current_[v] = arc_begin(static_cast<std::int32_t>(v));
      if (k == dead_) continue;
      label_insert(static_cast<std::int32_t>(v), k);
      const std::int32_t x = static_cast<std::int32_t>(v);
      if (Reverse ? want(x) > 0 : excess_[v] > 0) activate(x);
    }
  }

  // A node's want in the reverse direction: a pair's unused sink capacity, a split's deficit.
  std::int64_t want(std::int32_t x) const {
    return x >= S_ ? snk_[x - S_] : std::max<std::int64_t>(0, -excess_[x]);
  }
  void add_want(std::int32_t x, std::int64_t amount) {
    if (x >= S_)
      snk_[x - S_] += amount;
    else
      excess_[x] -= amount;
  }

  const CompactEnsemble& ens_;
  std::int64_t N_, K_, S_ = 0, P_ = 0, n_ = 0, n_parent_arcs_ = 0;
  // per split
  std::vector<std::int64_t> g_, src0_, base_, row_, slice_begin_, slice_end_, flow_up_;
  std::vector<std::int32_t> tree_, h_, up_, kid_;
  // per pair
  std::vector<std::int32_t> pid_;  // K x N -> pair id (-1: not in the network)
  std::vector<std::int64_t> key_, snk0_, snk_, rstart_;
  std::vector<std::int32_t> pos_;
  // written in full before they are read (fill_pair_lists), so resize() leaves them as they are
  std::vector<std::int32_t, NoInit<std::int32_t>> rsplit_;
  std::vector<std::int64_t, NoInit<std::int64_t>> flow_;
  // the labels before the last global relabelling (its kept scan positions)
  std::vector<std::int32_t> old_label_;
  bool reversed_ = false;  // run_reverse ran: finish() tries finish_from_splits first
};

std::uint64_t mix(std::uint64_t x) {  // splitmix64: a well-spread value per node id
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Pair nodes (ids n_split_nodes ..) with the same set of predecessors are interchangeable: in
// every closure both are in or both out, so one node with the summed sink capacity has the same
// cut values (the example merge is the special case of identical paths in every tree). Groups
// come from two 64-bit sums of mixed predecessor ids and the predecessor count, and are verified
// arc by arc: a member joins its group's representative (the group's least pair id) only if
// every one of its predecessors has an arc to the representative too (the counts are equal,
// and a pair has at most one arc from a split, so the sets are equal). A member that fails
// stays a node of its own: merging less is rule 4 applied less, still exact. The check reads
// the arcs split by split (a split's arcs are consecutive: build() makes them so), marking the
// split's heads, instead of listing every pair's predecessors: that list was a random write
// per arc into an array of all arcs, half of the merge's time (rule 5's rounds on the default
// forest merge up to ~40 M arcs into ~2 M). On return, pair node q of the network stands for
// pair_key[member_start[q] .. member_start[q+1]).
void merge_identical_pairs(std::size_t n_split_nodes, std::vector<std::int64_t>& src,
                           std::vector<std::int64_t>& snk, std::vector<std::int32_t>& tails,
                           std::vector<std::int32_t>& heads, std::vector<std::int64_t>& pair_key,
                           std::vector<std::int64_t>& member_start, bool shrink = true) {
  const std::size_t S = n_split_nodes, P = src.size() - n_split_nodes, m = tails.size();
  struct Sig {
    std::uint64_t a, b;  // the two sums
    std::int64_t deg;    // predecessor count
  };
  std::vector<Sig> sig(P, Sig{0, 0, 0});
  for (std::size_t j = 0; j < m; ++j) {
    if (static_cast<std::size_t>(heads[j]) < S) continue;
    Sig& x = sig[static_cast<std::size_t>(heads[j]) - S];
    ++x.deg;
    x.a += mix(static_cast<std::uint64_t>(tails[j]));
    x.b += mix(static_cast<std::uint64_t>(tails[j]) + 0x5851f42d4c957f2dULL);
  }
  // groups by an open-addressing table of pair ids (the sums are well spread already): the
  // first pair of a group to arrive, its least id, is its representative
  std::vector<std::int32_t> rep(P);
  {
    std::size_t size = 2;
    while (size < 2 * P) size *= 2;
    const std::size_t mask = size - 1;
    std::vector<std::int32_t> table(size, -1);
    for (std::size_t p = 0; p < P; ++p) {
      const Sig& x = sig[p];
      std::size_t at =
          static_cast<std::size_t>(x.a ^ (x.b >> 17) ^ static_cast<std::uint64_t>(x.deg)) & mask;
      for (;; at = (at + 1) & mask) {
        const std::int32_t q = table[at];
        if (q < 0) {
          table[at] = static_cast<std::int32_t>(p);
          rep[p] = static_cast<std::int32_t>(p);
          break;
        }
        const Sig& y = sig[static_cast<std::size_t>(q)];
        if (y.a == x.a && y.b == x.b && y.deg == x.deg) {
          rep[p] = q;
          break;
        }
      }
    }
  }
  std::vector<std::int32_t> deg(P);
  for (std::size_t p = 0; p < P; ++p) deg[p] = static_cast<std::int32_t>(sig[p].deg);  // < 2**31
  std::vector<Sig>().swap(sig);
  {
    // matched[p]: predecessors of p with an arc to rep[p]; mark[q]: the last split seen with an
    // arc to q
    std::vector<std::int32_t> mark(P, -1), matched(P, 0);
    for (std::size_t j0 = 0; j0 < m;) {
      std::size_t j1 = j0;
      while (j1 < m && tails[j1] == tails[j0]) ++j1;
      for (std::size_t j = j0; j < j1; ++j)
        if (static_cast<std::size_t>(heads[j]) >= S) mark[heads[j] - S] = tails[j0];
      for (std::size_t j = j0; j < j1; ++j) {
        if (static_cast<std::size_t>(heads[j]) < S) continue;
        const std::size_t p = static_cast<std::size_t>(heads[j]) - S;
        matched[p] += rep[p] != static_cast<std::int32_t>(p) && mark[rep[p]] == tails[j0];
      }
      j0 = j1;
    }
    for (std::size_t p = 0; p < P; ++p)
      if (rep[p] != static_cast<std::int32_t>(p) && matched[p] != deg[p])
        rep[p] = static_cast<std::int32_t>(p);
  }
  // new ids in order of the representatives, members grouped by them
  std::vector<std::int32_t> new_id(P, -1);
  std::int32_t n_new = 0;
  for (std::size_t p = 0; p < P; ++p)
    if (rep[p] == static_cast<std::int32_t>(p)) new_id[p] = n_new++;
  member_start.assign(static_cast<std::size_t>(n_new) + 1, 0);
  for (std::size_t p = 0; p < P; ++p) ++member_start[new_id[rep[p]] + 1];
  for (std::int32_t q = 0; q < n_new; ++q) member_start[q + 1] += member_start[q];
  std::vector<std::int64_t> keys(P), sink(static_cast<std::size_t>(n_new), 0);
  {
    std::vector<std::int64_t> fill(member_start.begin(), member_start.end() - 1);
    for (std::size_t p = 0; p < P; ++p) {
      const std::int32_t q = new_id[rep[p]];
      keys[fill[q]++] = pair_key[p];
      sink[q] = saturating_add(sink[q], snk[S + p]);
    }
  }
  pair_key.swap(keys);
  src.resize(S + static_cast<std::size_t>(n_new));
  snk.resize(S + static_cast<std::size_t>(n_new));
  for (std::int32_t q = 0; q < n_new; ++q) {
    src[S + q] = 0;
    snk[S + q] = sink[q];
  }
  std::size_t kept = 0;
  for (std::size_t j = 0; j < m; ++j) {
    std::int32_t h = heads[j];
    if (static_cast<std::size_t>(h) >= S) {
      const std::size_t p = static_cast<std::size_t>(h) - S;
      if (rep[p] != static_cast<std::int32_t>(p)) continue;  // the representative's arcs do
      h = static_cast<std::int32_t>(S) + new_id[p];
    }
    tails[kept] = tails[j];
    heads[kept++] = h;
  }
  tails.resize(kept);
  heads.resize(kept);
  if (shrink) {
    tails.shrink_to_fit();
    heads.shrink_to_fit();
  }
}

}  // namespace

void check_compact_tree(const CompactTree& tr, std::int64_t N, std::int64_t K, std::size_t index) {
  const auto bad = [&](const std::string& what) {
    throw std::invalid_argument("tree " + std::to_string(index) + ": " + what);
  };
  const std::int32_t n = tr.n_nodes;
  if (n < 1) bad("has no nodes");
  if (tr.leaf_start[0] != 0 || tr.leaf_start[n] != N)
    bad("leaf_start must run from 0 to n_samples");
  for (std::int32_t h = 0; h < n; ++h) {
    if (tr.leaf_start[h + 1] < tr.leaf_start[h]) bad("leaf_start must be non-decreasing");
    if (tr.end[h] <= h || tr.end[h] > n) bad("end[h] must lie in (h, n_nodes]");
    const std::int32_t l = tr.left[h], r = tr.right[h];
    if ((l < 0) != (r < 0)) bad("a node has one child");
    if (l < 0) continue;
    // pre-order: left child right after h, right child right after the left subtree
    if (l != h + 1 || r <= l || r >= tr.end[h] || tr.end[l] != r || tr.end[r] != tr.end[h])
      bad("children are not in pre-order");
    if (tr.feature[h] < 0 || tr.feature[h] >= K) bad("a split's feature is out of range");
    if (tr.error[h] < 0) bad("negative training error");
  }
  for (std::int64_t j = 0; j < N; ++j)
    if (tr.by_leaf[j] < 0 || tr.by_leaf[j] >= N) bad("by_leaf holds an example out of range");
}

namespace {

void check_ensemble(const CompactEnsemble& ens) {
  if (ens.n_samples < 1 || ens.n_features < 1)
    throw std::invalid_argument("n_samples and n_features must be >= 1");
  if (ens.n_samples >= (std::int64_t{1} << 31))
    throw std::invalid_argument("at most 2**31 - 1 examples");
  for (std::int64_t k = 0; k < ens.n_features; ++k)
    if (!(ens.costs[k] >= 0.0) || !std::isfinite(ens.costs[k]))
      throw std::invalid_argument("costs must be finite and >= 0");
  for (std::int64_t i = 0; i < ens.n_samples; ++i)
    if (ens.weight[i] < 0) throw std::invalid_argument("weights must be >= 0");
  for (std::size_t t = 0; t < ens.trees.size(); ++t)
    check_compact_tree(ens.trees[t], ens.n_samples, ens.n_features, t);
}

// The network the max-flow runs on, with what maps it back (see reduce_and_build).
struct Reduced {
  std::vector<std::uint8_t> dead, forced, paid;
  std::int64_t constant = 0;  // sink capacity of the paid pairs: part of every minimum cut
  double paid_cost = 0.0;     // their sum of c_k w_i
  long long iterations = 0;
  bool complete = false;  // false: a limit stopped it (forced so far stays valid, no network)
  std::vector<std::int32_t> local;
  std::vector<std::int64_t> split_of, pair_key, member_start{0}, src, snk;
  std::vector<std::int32_t> tails, heads;
  std::int64_t n_nodes_unmerged = 0, n_arcs_unmerged = 0;
  std::size_t bytes = 0;  // what the reduction's arrays hold
  std::vector<RestrictRound> rounds;
  CutBuilder::ForceState state;  // the forcing rule's, kept between its calls
  std::vector<std::uint8_t> excluded;  // rule 6: in no minimum closure (empty: none)
  std::int64_t n_excluded = 0;
  std::int64_t excluded_src = 0;  // their source capacity: cut by every minimum closure
};

// Rule 6 (CutBuilder::exclude) on the current F and P, adding to red.excluded.
void exclude_round(const CutBuilder& net, Reduced& red, Budget& budget) {
  std::int64_t count = 0;
  // what a stopped call marked is proven too (each split is marked by a finished pass)
  net.exclude(red.dead, red.forced, red.paid, red.state, red.excluded, count, budget);
  red.n_excluded += count;
  red.excluded_src = 0;
  for (std::size_t g = 0; g < red.excluded.size(); ++g)
    if (red.excluded[g]) red.excluded_src = saturating_add(red.excluded_src, net.src(g));
}

// Rule 5 of odtkit.pruning._cut (restricted problems): for L = 0 .. levels - 1, the minimal
// minimum closure of the network restricted to the splits of depth <= L (the forced ones fixed
// in, the paid pairs free, every deeper split fixed out) is contained in every minimum closure
// of the whole network. So it is forced, its pairs are paid, and rule 3 runs again from there (deep
// splits whose pairs are now paid). Two rounds in a row whose cut forces nothing end the rounds
// (a depth limit with no live unforced split left is skipped and does not count; on
// scikit-learn's default forest at lam = 1e-2 the rounds at depth 5 and beyond force nothing
// while their networks grow: benchmarks/pruning_default_forests.py). So does a round that would
// not fit the memory limit, or a limit that stops a round's flow: what is forced so far stays
// forced.
void restrict_rounds(const CutBuilder& net, Reduced& red, std::int32_t levels, bool merge_pairs,
                     Budget& budget) {
  const std::int64_t n = net.n_nodes();
  std::int32_t max_depth = 0;
  for (std::int64_t g = 0; g < n; ++g) max_depth = std::max(max_depth, net.depth(g));
  std::vector<std::uint8_t> out_of(static_cast<std::size_t>(n), 0);
  std::int64_t n_forced = 0;
  for (std::int64_t g = 0; g < n; ++g) n_forced += red.forced[g];
  int idle = 0;  // rounds in a row whose cut forced nothing
  // The arc arrays live through the rounds (and through each round's flow), so a round builds
  // into the pages the one before touched instead of faulting fresh ones in: rule 5's rounds
  // at 1e-2 on the default forest build 1-10 M arcs each, and their builds took 0.86 -> 0.72 s.
  // What they hold beyond a round's own arcs counts as in use.
  std::vector<std::int32_t> tails, heads;
  for (std::int32_t L = 0; L < std::min(levels, max_depth) && idle < 2 && !budget.stopped();
       ++L) {
    const auto start = std::chrono::steady_clock::now();
    for (std::int64_t g = 0; g < n; ++g)
      out_of[g] = red.dead[g] || net.depth(g) > L || (!red.excluded.empty() && red.excluded[g]);
    std::int64_t splits = 0, entries = 0;
    const std::int64_t* capu = red.state.capu.empty() ? nullptr : red.state.capu.data();
    const std::size_t build =
        net.build_bytes(out_of, red.forced, red.paid, splits, entries, capu);
    if (splits == 0) continue;
    const double ahead = static_cast<double>(build) + 32.0 * static_cast<double>(splits + entries);
    const double held = 4.0 * static_cast<double>(tails.capacity() + heads.capacity());
    const double in_use = static_cast<double>(red.bytes) + static_cast<double>(n) +
                          std::max(0.0, held - 8.0 * static_cast<double>(splits + entries));
    if (budget.memory_limit_bytes() > 0 && in_use + ahead > budget.memory_limit_bytes()) break;
    budget.note_memory(static_cast<std::size_t>(in_use + ahead));
    RestrictRound round;
    round.level = L;
    std::vector<std::uint8_t> side;
    std::vector<std::int64_t> split_of;
    const bool ok = catch_out_of_memory(budget, [&] {
      std::vector<std::int32_t> local;
      std::vector<std::int64_t> pair_key, member_start, src, snk;
      tails.clear();
      heads.clear();
      net.build(out_of, red.forced, red.paid, local, split_of, pair_key, src, snk, tails, heads,
                splits, entries, capu);
      if (merge_pairs)
        merge_identical_pairs(split_of.size(), src, snk, tails, heads, pair_key, member_start,
                              false);
      round.n_nodes = static_cast<std::int64_t>(src.size());
      round.n_arcs = static_cast<std::int64_t>(tails.size());
      ClosureCutOutput cut = closure_min_cut(round.n_nodes, src.data(), snk.data(), round.n_arcs,
                                             tails.data(), heads.data(), budget,
                                             MaxFlowAlgorithm::kAuto, true);
      side = std::move(cut.source_side);
    });
    // a stopped flow's side is a closure but not the minimal maximiser: force nothing from it
    if (!ok || budget.stopped()) break;
    for (std::size_t v = 0; v < split_of.size(); ++v) {
      if (!side[v]) continue;
      red.forced[split_of[v]] = 1;
      net.pay(split_of[v], red.paid, &red.state, red.constant, red.paid_cost);
      ++round.n_forced_cut;
    }
    if (round.n_forced_cut > 0)
      net.force(red.dead, red.forced, red.paid, red.state, red.constant, red.paid_cost,
                red.iterations, budget);
    std::int64_t now = 0;
    for (std::int64_t g = 0; g < n; ++g) now += red.forced[g];
    round.n_forced_rule = now - n_forced - round.n_forced_cut;
    n_forced = now;
    idle = round.n_forced_cut > 0 ? 0 : idle + 1;
    round.seconds = seconds_since(start);
    red.rounds.push_back(round);
  }
}

// The max-flow for the final network. kAuto decides by the sink/source ratio; on networks of
// deep trees (scikit-learn's default forests grow to full depth, 30-50 levels: issue 42) where
// it picks Dinic, push-relabel runs instead: Dinic's phases follow the long chains of splits one
// BFS level at a time (25 phases of a BFS over the whole network on the 100-tree default forest
// at lam = 1e-2), where push-relabel's global relabellings take 2; measured 5.9 -> 2.0 CPU s
// there, and 79 -> 56 s on its whole network at 3e-2 (benchmarks/pruning_default_forests.py).
// The depth-10 and -12 forests of benchmarks/maxflow.py, where the two are within 0.65-1.3x of
// each other, stay with Dinic.
constexpr std::int32_t kDeepForest = 20;

MaxFlowAlgorithm final_algorithm(const CutBuilder& net, const std::vector<std::int64_t>& split_of,
                                 const std::vector<std::int64_t>& src,
                                 const std::vector<std::int64_t>& snk) {
  const std::int64_t n = static_cast<std::int64_t>(src.size());
  const MaxFlowAlgorithm picked = choose_algorithm(n, src.data(), snk.data());
  if (picked != MaxFlowAlgorithm::kDinic) return picked;
  bool any_sink = false;
  for (const std::int64_t c : snk) any_sink = any_sink || c > 0;
  if (!any_sink) return picked;  // the flow is 0: one BFS proves it
  std::int32_t deepest = 0;
  for (const std::int64_t g : split_of) deepest = std::max(deepest, net.depth(g));
  return deepest >= kDeepForest ? MaxFlowAlgorithm::kPushRelabel : picked;
}

enum class Reduction { kNone, kDead, kDeadAndForced };

// Rules 2-4 of odtkit.pruning._cut (rule 1 is the caller's weights), then the network.
// `flow_bytes_per_arc`: what the caller will add per arc once built (its budget is checked
// before building).
void build_explicit(const CutBuilder& net, Reduced& red, bool merge_pairs,
                    double flow_bytes_per_arc, Budget& budget);

Reduced reduce_and_build(const CutBuilder& net, std::int64_t n_features, std::int64_t n_samples,
                         Reduction reduction, bool merge_pairs, double flow_bytes_per_arc,
                         std::int32_t restrict_levels, Budget& budget,
                         bool build_network = true,
                         const std::function<bool(const Reduced&)>& skip_rounds = {}) {
  Reduced red;
  const std::int64_t n = net.n_nodes();
  const std::int64_t KN = n_samples * n_features;
  // dead, forced, paid (K x N), and the forcing rule's state while it runs
  const std::size_t state_bytes = reduction == Reduction::kDeadAndForced
                                      ? CutBuilder::ForceState::bytes(n, n_features, n_samples)
                                      : 0;
  red.bytes = static_cast<std::size_t>(n) * 2 + static_cast<std::size_t>(KN) + state_bytes;
  bool forcing_done = true;
  red.complete = budget.memory_ok(red.bytes) && catch_out_of_memory(budget, [&] {
    red.paid.assign(static_cast<std::size_t>(KN), 0);
    red.forced.assign(static_cast<std::size_t>(n), 0);
    if (reduction == Reduction::kNone)
      red.dead.assign(static_cast<std::size_t>(n), 0);
    else
      net.mark_dead(red.dead);
    if (reduction == Reduction::kDeadAndForced) {
      net.init_force_state(red.paid, red.state);
      forcing_done = net.force(red.dead, red.forced, red.paid, red.state, red.constant,
                               red.paid_cost, red.iterations, budget);
      if (forcing_done) exclude_round(net, red, budget);
      if (forcing_done && restrict_levels > 0 && !(skip_rounds && skip_rounds(red))) {
        restrict_rounds(net, red, restrict_levels, merge_pairs, budget);
        forcing_done = !budget.stopped();
        if (forcing_done && !red.rounds.empty()) exclude_round(net, red, budget);
      }
      forcing_done = forcing_done && !budget.stopped();
      red.state = CutBuilder::ForceState{};  // done with it: free it before the build
      red.bytes -= state_bytes;
    }
  });
  red.complete = red.complete && forcing_done;
  if (red.forced.size() != static_cast<std::size_t>(n))
    red.forced.assign(static_cast<std::size_t>(n), 0);
  if (red.dead.size() != static_cast<std::size_t>(n))
    red.dead.assign(static_cast<std::size_t>(n), 0);
  if (!red.complete || !build_network) return red;
  build_explicit(net, red, merge_pairs, flow_bytes_per_arc, budget);
  return red;
}

// The splits the network leaves out: dead, and (rule 6) excluded.
std::vector<std::uint8_t> gone_splits(const Reduced& red) {
  std::vector<std::uint8_t> gone = red.dead;
  for (std::size_t g = 0; g < red.excluded.size(); ++g) gone[g] |= red.excluded[g];
  return gone;
}

// The network of the splits neither forced nor gone and the unpaid pairs, as arc arrays.
void build_explicit(const CutBuilder& net, Reduced& red, bool merge_pairs,
                    double flow_bytes_per_arc, Budget& budget) {
  const std::vector<std::uint8_t> gone = gone_splits(red);
  std::int64_t entries = 0, splits = 0;
  const std::size_t build = net.build_bytes(gone, red.forced, red.paid, splits, entries);
  const std::size_t flow = static_cast<std::size_t>(
      flow_bytes_per_arc * static_cast<double>(entries + splits) + 64.0 * (entries > 0));
  red.complete = budget.memory_ok(red.bytes, build + flow) && catch_out_of_memory(budget, [&] {
    net.build(gone, red.forced, red.paid, red.local, red.split_of, red.pair_key, red.src,
              red.snk, red.tails, red.heads, splits, entries);
    budget.note_memory(red.bytes + build);
    red.n_nodes_unmerged = static_cast<std::int64_t>(red.src.size());
    red.n_arcs_unmerged = static_cast<std::int64_t>(red.tails.size());
    if (merge_pairs) {
      merge_identical_pairs(red.split_of.size(), red.src, red.snk, red.tails, red.heads,
                            red.pair_key, red.member_start);
    } else {
      red.member_start.resize(red.pair_key.size() + 1);
      for (std::size_t p = 0; p <= red.pair_key.size(); ++p)
        red.member_start[p] = static_cast<std::int64_t>(p);
    }
  });
}

// Rule 7 (nested lambdas; issue 42): the sink capacities only grow with lam (each is a
// rounded-up product with lam), so the minimal minimum closure at lam lies inside the one at
// any lam' < lam. (With f, f' the cut functions at lam, lam' on the closed sets, g = f - f' is a
// sum of non-negative increments over the pairs a set pays, so it only grows with the set. For
// the minimal minimisers A at lam' and B at lam: f'(A & B) <= f'(A) + f'(B) - f'(A | B) <= f'(B)
// by submodularity and f'(A) <= f'(A | B), and g(A & B) <= g(B), so f(A & B) <= f(B): A & B is a
// minimiser at lam and contains B, the least one. So B is inside A.) The splits outside A are then
// left out as rule 6 leaves its splits out: the minimiser over the closed sets inside a set that
// holds B is B again (every minimiser there is a global one, and B is in every global one), and
// their source arcs are cut by it. Where the network left at lam is large (nest_arcs slice
// entries or more), the cut at lam' = lam / 3, with every rule (and this one, nest_levels - 1
// deep), runs first; its answer is used only if it is certified optimal.
constexpr double kNestFactor = 3.0;

// The arcs the network at lam would hold (into unpaid pairs), counted up to `limit`.
std::int64_t arcs_left(const CutBuilder& net, const CompactEnsemble& ens, const Reduced& red,
                       std::int64_t limit) {
  const std::vector<std::uint8_t> gone = gone_splits(red);
  std::int64_t arcs = 0;
  for (std::size_t t = 0; t < ens.trees.size() && arcs < limit; ++t) {
    const CompactTree& tr = ens.trees[t];
    for (std::int32_t h = 0; h < tr.n_nodes; ++h) {
      const std::int64_t g = net.offset(t) + h;
      if (tr.left[h] < 0 || red.forced[g] || gone[g] || !tr.first_use[h]) continue;
      const std::uint8_t* paid =
          red.paid.data() + static_cast<std::int64_t>(tr.feature[h]) * ens.n_samples;
      for (std::int64_t j = tr.leaf_start[h]; j < tr.leaf_start[tr.end[h]]; ++j)
        arcs += !paid[tr.by_leaf[j]];
    }
  }
  return arcs;
}

// Whether rule 5 is left out where rule 7 runs: the cut at lam / 3 runs (nest_arcs arcs or
// more left) and the unpaid pairs' capacity (of every pair, an upper bound on the network's
// sink side) is at least the live splits' source capacity. Rule 5's restricted problems force
// the shallow splits whose own gains pay for their pairs; where the pairs cost more than all
// the gains together they force nothing, and on the default forest at lam = 3e-2 (sinks 1.3x
// the sources) its two idle rounds took ~2.4 CPU s before rule 7 found everything. At 1e-2
// (0.43x) its rounds are what decide the optimum, and they stay. Leaving a reduction out keeps
// the cut exact.
bool rounds_left_to_rule_7(const CutBuilder& net, const CompactEnsemble& ens, const Reduced& red,
                           std::int64_t nest_arcs) {
  const std::int64_t n = net.n_nodes();
  std::int64_t source = 0;
  for (std::int64_t g = 0; g < n; ++g)
    if (net.is_split(g) && !red.dead[g] && !red.forced[g] &&
        (red.excluded.empty() || !red.excluded[g]))
      source = saturating_add(source, net.src(g));
  std::int64_t sink = 0;
  for (std::int64_t k = 0; k < ens.n_features && sink < source; ++k)
    for (std::int64_t i = 0; i < ens.n_samples; ++i)
      if (!red.paid[k * ens.n_samples + i])
        sink = saturating_add(sink, net.cap(static_cast<std::int32_t>(k),
                                            static_cast<std::int32_t>(i)));
  if (source == 0 || sink < source) return false;
  const std::int64_t arcs = arcs_left(net, ens, red, nest_arcs);
  return arcs >= nest_arcs && arcs > 0;
}

void nest_round(const CutBuilder& net, const CompactEnsemble& ens, double lam, double scale,
                bool merge_pairs, std::int32_t restrict_levels, std::int32_t slice_flow,
                std::int32_t nest_levels, std::int64_t nest_arcs, Reduced& red, Budget& budget) {
  const std::int64_t arcs = arcs_left(net, ens, red, nest_arcs);
  if (arcs < nest_arcs || arcs == 0) return;
  EnsembleCutOutput lower = ensemble_min_cut(ens, lam / kNestFactor, scale, true, merge_pairs,
                                             restrict_levels, budget, slice_flow,
                                             nest_levels - 1, nest_arcs);
  if (budget.stopped() || lower.status != "optimal") return;
  const std::int64_t n = net.n_nodes();
  if (red.excluded.size() != static_cast<std::size_t>(n))
    red.excluded.assign(static_cast<std::size_t>(n), 0);
  for (std::int64_t g = 0; g < n; ++g) {
    if (red.dead[g] || red.forced[g] || red.excluded[g] || lower.kept[g] || !net.is_split(g))
      continue;
    red.excluded[g] = 1;
    ++red.n_excluded;
  }
  red.excluded_src = 0;
  for (std::int64_t g = 0; g < n; ++g)
    if (red.excluded[g]) red.excluded_src = saturating_add(red.excluded_src, net.src(g));
}

// The whole problem's flow and cut from the final network's `cut`, into `out`, and its source
// side into `side`: the reductions' constant and the excluded splits' source arcs (rule 6) are
// in every minimum cut, outside the network.
void take_cut(const Reduced& red, ClosureCutOutput& cut, EnsembleCutOutput& out,
              std::vector<std::uint8_t>& side) {
  out.algorithm = cut.algorithm;
  out.phases = cut.phases;
  out.augmentations = cut.augmentations;
  const std::int64_t fixed = saturating_add(red.constant, red.excluded_src);
  out.flow = saturating_add(fixed, cut.flow);
  out.cut = saturating_add(fixed, cut.cut);
  side = std::move(cut.source_side);
}

// The final max-flow by SliceFlow, into `side` (its splits, then its pairs) with `red`'s maps set
// to its nodes, and `out`'s network, flow and cut. False, with nothing run, where the network
// of arc arrays is the one to use (unless `always`): splits shallower than kDeepForest, where
// final_algorithm keeps Dinic, a sink side below a fifth of the source side, where it picks
// Boykov-Kolmogorov, no sink capacity (one BFS there), or no split left.
bool slice_cut(const CutBuilder& net, const CompactEnsemble& ens, Reduced& red, bool always,
               int direction, Budget& budget, EnsembleCutOutput& out,
               std::vector<std::uint8_t>& side) {
  const std::vector<std::uint8_t> gone = gone_splits(red);
  std::int64_t splits = 0, slots = 0;
  std::int32_t deepest = -1;
  SliceFlow::count(net, ens, gone, red.forced, splits, slots, deepest);
  if (splits == 0 || (!always && deepest < kDeepForest)) return false;
  const std::size_t bytes =
      SliceFlow::bytes_needed(splits, slots, slots, static_cast<std::int64_t>(ens.trees.size()),
                              ens.n_features, ens.n_samples);
  if (!budget.memory_ok(red.bytes, bytes)) {
    red.complete = false;
    return true;
  }
  std::unique_ptr<SliceFlow> flow;
  ClosureCutOutput cut;
  bool refused = false;
  const bool ok = catch_out_of_memory(budget, [&] {
    flow = std::make_unique<SliceFlow>(net, ens, gone, red.forced, red.paid);
    const std::int64_t sink = flow->total_sink();
    if (!always && (sink == 0 || static_cast<double>(sink) < 0.2 * flow->total_source())) {
      refused = true;
      return;
    }
    budget.note_memory(red.bytes + bytes);
    out.n_nodes = out.n_nodes_unmerged = flow->n_splits() + flow->n_pairs();
    out.n_arcs = out.n_arcs_unmerged = flow->n_arcs();
    flow->greedy_start(budget, cut);
    const bool reverse = direction == 2 || (direction == 0 && flow->sink_left_total() <
                                                                 flow->excess_left());
    cut.algorithm = reverse ? "push_relabel_slices_reverse" : "push_relabel_slices";
    if (!budget.stopped()) {
      if (reverse)
        flow->run_reverse(budget, cut);
      else
        flow->run(budget, cut);
    }
    flow->finish(cut);
  });
  if (refused) return false;
  if (!ok) {
    red.complete = false;
    return true;
  }
  take_cut(red, cut, out, side);
  red.split_of.resize(static_cast<std::size_t>(flow->n_splits()));
  for (std::int64_t v = 0; v < flow->n_splits(); ++v) red.split_of[v] = flow->split_global(v);
  red.pair_key.resize(static_cast<std::size_t>(flow->n_pairs()));
  red.member_start.resize(static_cast<std::size_t>(flow->n_pairs()) + 1);
  for (std::int64_t p = 0; p < flow->n_pairs(); ++p) {
    red.pair_key[p] = flow->pair_key(p);
    red.member_start[p] = p;
  }
  red.member_start[flow->n_pairs()] = flow->n_pairs();
  return true;
}

}  // namespace

EnsembleCutOutput ensemble_min_cut(const CompactEnsemble& ens, double lam, double scale,
                                   bool reduce, bool merge_pairs, std::int32_t restrict_levels,
                                   Budget& budget, std::int32_t slice_flow,
                                   std::int32_t nest_levels, std::int64_t nest_arcs) {
  const auto start = std::chrono::steady_clock::now();
  if (!(lam >= 0.0) || !std::isfinite(lam)) throw std::invalid_argument("lam must be >= 0");
  check_ensemble(ens);
  CutBuilder net(ens, lam, scale);
  EnsembleCutOutput out;
  const std::int64_t n = net.n_nodes();
  out.n_splits = net.n_splits();
  out.total_gain = net.total_gain();
  // the max-flow's graph: Dinic's 24 bytes per arc, Boykov-Kolmogorov's and push-relabel's a
  // little more; 32 covers them
  const auto skip_rounds = [&](const Reduced& r) {
    return nest_levels > 0 && lam > 0.0 && rounds_left_to_rule_7(net, ens, r, nest_arcs);
  };
  Reduced red = reduce_and_build(net, ens.n_features, ens.n_samples,
                                 reduce ? Reduction::kDeadAndForced : Reduction::kNone,
                                 merge_pairs, 32.0, restrict_levels, budget, false, skip_rounds);
  if (red.complete && reduce && nest_levels > 0 && lam > 0.0)
    nest_round(net, ens, lam, scale, merge_pairs, restrict_levels, slice_flow, nest_levels,
               nest_arcs, red, budget);
  out.iterations = red.iterations;
  out.rounds = red.rounds;
  out.n_excluded = red.n_excluded;
  for (std::int64_t g = 0; g < n; ++g) {
    out.n_forced += red.forced[g];
    out.n_dead += red.dead[g];
  }
  std::vector<std::uint8_t> side;
  bool sliced = false;
  if (red.complete && slice_flow != 0) {
    out.reduce_seconds = seconds_since(start);
    const auto flow_start = std::chrono::steady_clock::now();
    // 1: always, 2: always and forward, 3: always and reverse
    const int direction = slice_flow == 2 ? 1 : slice_flow == 3 ? 2 : 0;
    sliced = slice_cut(net, ens, red, slice_flow > 0, direction, budget, out, side);
    out.flow_seconds = seconds_since(flow_start);
  }
  if (red.complete && !sliced) build_explicit(net, red, merge_pairs, 32.0, budget);
  if (!sliced) {
    out.reduce_seconds = seconds_since(start);
    out.n_nodes_unmerged = red.n_nodes_unmerged;
    out.n_arcs_unmerged = red.n_arcs_unmerged;
  }
  const std::size_t n_split_nodes = red.split_of.size();
  const std::size_t n_pair_nodes = red.member_start.size() - 1;
  if (red.complete && !sliced) {
    out.n_nodes = static_cast<std::int64_t>(red.src.size());
    out.n_arcs = static_cast<std::int64_t>(red.tails.size());
    const auto flow_start = std::chrono::steady_clock::now();
    catch_out_of_memory(budget, [&] {
      // the max-flow keeps its own copy of the arcs: free ours before it allocates its flows
      const MaxFlowAlgorithm algorithm = final_algorithm(net, red.split_of, red.src, red.snk);
      const auto release = [&red] {
        std::vector<std::int32_t>().swap(red.tails);
        std::vector<std::int32_t>().swap(red.heads);
      };
      ClosureCutOutput cut = closure_min_cut(out.n_nodes, red.src.data(), red.snk.data(),
                                             out.n_arcs, red.tails.data(), red.heads.data(),
                                             budget, algorithm, true, release);
      take_cut(red, cut, out, side);
    });
    out.flow_seconds = seconds_since(flow_start);
  }
  if (side.size() != n_split_nodes + n_pair_nodes) {
    // stopped before a flow: the forced splits are a closure, and every minimum closure
    // contains them and their pairs, so `constant` is a valid bound
    side.assign(n_split_nodes + n_pair_nodes, 0);
    out.flow = red.constant;
    std::int64_t lost = 0;
    for (std::int64_t g = 0; g < n; ++g)
      if (!red.forced[g]) lost = saturating_add(lost, net.src(g));
    out.cut = saturating_add(red.constant, lost);
  }
  out.paid_cost = red.paid_cost;
  out.kept = std::move(red.forced);
  for (std::size_t v = 0; v < n_split_nodes; ++v)
    if (side[v]) out.kept[red.split_of[v]] = 1;
  for (std::size_t q = 0; q < n_pair_nodes; ++q) {
    if (!side[n_split_nodes + q]) continue;
    for (std::int64_t j = red.member_start[q]; j < red.member_start[q + 1]; ++j) {
      const std::int64_t key = red.pair_key[j];
      out.paid_cost += ens.costs[key / ens.n_samples] *
                       static_cast<double>(ens.weight[key % ens.n_samples]);
    }
  }
  for (std::int64_t g = 0; g < n; ++g)
    if (!out.kept[g]) out.lost_gain += net.gain(g);
  for (const std::uint8_t p : red.paid) out.n_paid += p;
  out.status = status_name(budget.status());
  out.peak_memory_mb = budget.peak_memory_mb();
  out.seconds = seconds_since(start);
  return out;
}

namespace {
// reduce_and_build without limits, for the entry points that return the network itself
Reduced reduce_unlimited(const CutBuilder& net, const CompactEnsemble& ens, Reduction reduction,
                         bool merge_pairs, std::int32_t restrict_levels = 0) {
  Budget budget{SearchConfig{}};
  return reduce_and_build(net, ens.n_features, ens.n_samples, reduction, merge_pairs, 0.0,
                          restrict_levels, budget);
}
}  // namespace

ReducedNetwork ensemble_reduced_network(const CompactEnsemble& ens, double lam, double scale,
                                        bool merge_pairs, std::int32_t restrict_levels) {
  if (!(lam >= 0.0) || !std::isfinite(lam)) throw std::invalid_argument("lam must be >= 0");
  check_ensemble(ens);
  CutBuilder net(ens, lam, scale);
  Reduced red =
      reduce_unlimited(net, ens, Reduction::kDeadAndForced, merge_pairs, restrict_levels);
  ReducedNetwork out;
  out.source_cap = std::move(red.src);
  out.sink_cap = std::move(red.snk);
  out.tails = std::move(red.tails);
  out.heads = std::move(red.heads);
  out.constant = saturating_add(red.constant, red.excluded_src);
  out.n_splits = static_cast<std::int64_t>(red.split_of.size());
  for (std::size_t g = 0; g < red.forced.size(); ++g) {
    out.n_forced += red.forced[g];
    out.n_dead += red.dead[g];
  }
  return out;
}

EnsembleNetwork ensemble_network(const CompactEnsemble& ens, bool merge_pairs) {
  check_ensemble(ens);
  // lam = 1, scale = 1: a pair gets a sink arc iff its cost is positive, which is all the
  // structure needs; the path sets its own capacities per lam
  CutBuilder net(ens, 1.0, 1.0);
  Reduced red = reduce_unlimited(net, ens, Reduction::kDead, merge_pairs);
  EnsembleNetwork out;
  out.split_node = std::move(red.split_of);
  out.tails = std::move(red.tails);
  out.heads = std::move(red.heads);
  out.n_nodes_unmerged = red.n_nodes_unmerged;
  out.n_arcs_unmerged = red.n_arcs_unmerged;
  for (const std::int64_t g : out.split_node) out.gain.push_back(net.gain(g));
  for (std::size_t q = 0; q + 1 < red.member_start.size(); ++q) {
    double cost = 0.0;
    for (std::int64_t j = red.member_start[q]; j < red.member_start[q + 1]; ++j)
      cost += ens.costs[red.pair_key[j] / ens.n_samples] *
              static_cast<double>(ens.weight[red.pair_key[j] % ens.n_samples]);
    out.pair_cost.push_back(cost);
    out.pair_first.push_back(red.pair_key[red.member_start[q]]);
  }
  for (const std::uint8_t d : red.dead) out.n_dead += d;
  return out;
}

}  // namespace odtkit

// The one highest-label push-relabel (phase 1 only) behind the closure network's
// (ClosureNetwork, maxflow.cpp) and the pruning network's on tree slices (SliceFlow,
// ensemble_cut.cpp, both directions): discharge with the "straight on to the terminal" step
// and the stale-label lift, relabel, the gap rule and the driver loop with its global
// relabelling period. The two networks store their arcs differently, so the algorithm is a
// CRTP base over an arc-access policy: the derived class says how a node's residual arcs are
// enumerated and pushed along, how its terminal capacities are read, and how a global
// relabelling is done (a CSR BFS, or the slices' level-by-level BFS with its bottom-up step).
// Templates rather than virtual calls: the discharge loop is the hot path (one arc read and one
// label compare an arc), and every hook must inline into it.
//
// The derived class Net provides (as members this base may call: make it a friend):
//   arc_begin(x), arc_end(x)      the cursors of x's arcs, [begin, end)
//   arc(x, c, w, r, back)         the arc at cursor c of x: false if none; else its other end w,
//                                 the residual r of x -> w and back of w -> x
//   push(x, c, w, amount)         move `amount` (signed) along x -> w at cursor c
//   sink_left(x), take_sink(x, a) x's residual sink capacity, and using `a` of it
//   global_relabel<Reverse>(out)  exact residual distances to t (from s if Reverse) into
//                                 label_, buckets_ rebuilt, current_ set, active nodes stacked
//   kScanIsWork                   whether the arcs a discharge scans count towards the global
//                                 relabelling period (as its relabel scan always does)
// and, to run Reverse (on the reversed network: a pair's unused sink capacity, its "want", is
// pulled from the nodes with excess, label 1, and a node pulled beyond its means holds a
// deficit): want(x), add_want(x, a) and source_left(x) (the excess x can give, 0 if none).
// The argument that phase 1's maximum preflow gives the maximum flow value and the minimal
// minimum cut is in maxflow.hpp; it depends only on the algorithm, not on the arcs' storage.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "maxflow.hpp"

namespace odtkit {

template <class Net>
class PushRelabel {
 protected:
  // per node: excess (negative: a deficit, reverse direction only), scan cursor, label
  std::vector<std::int64_t> excess_, current_;
  std::vector<std::int32_t> label_;
  LabelBuckets buckets_;  // label lists and active stacks
  std::int32_t dead_ = 0;

  // Phase 1 on n nodes, from the excess the caller put in excess_ (a preflow). A global
  // relabelling once the work (arcs scanned, relabels) since the last one exceeds `period`.
  template <bool Reverse>
  void run_phase1(std::int64_t n, long long period, Budget& budget, ClosureCutOutput& out) {
    Net& net = self();
    dead_ = static_cast<std::int32_t>(n) + 1;
    label_.assign(static_cast<std::size_t>(n), dead_);
    current_.resize(static_cast<std::size_t>(n));
    for (std::int64_t v = 0; v < n; ++v)
      current_[v] = net.arc_begin(static_cast<std::int32_t>(v));
    buckets_.assign(static_cast<std::size_t>(n), static_cast<std::size_t>(dead_) + 1);
    long long work = 0, discharges = 0;
    net.template global_relabel<Reverse>(out);
    for (std::int32_t v = buckets_.pop_active(); v >= 0; v = buckets_.pop_active()) {
      work += discharge<Reverse>(v, out);
      if ((++discharges & 1023) == 0 && budget.check_clock()) return;
      if (work > period) {
        work = 0;
        net.template global_relabel<Reverse>(out);
      }
    }
  }

  void label_insert(std::int32_t v, std::int32_t k) {
    label_[v] = k;
    buckets_.insert(v, k);
  }
  void label_remove(std::int32_t v) { buckets_.remove(v, label_[v]); }
  void activate(std::int32_t v) { buckets_.activate(v, label_[v]); }

 private:
  Net& self() { return static_cast<Net&>(*this); }
  const Net& self() const { return static_cast<const Net&>(*this); }

  // What a node holds to move (excess forward, want backwards), and its terminal arc's residual
  // (to t forward; from s backwards: the excess a node with some can give up).
  template <bool Reverse>
  std::int64_t have(std::int32_t x) const {
    if constexpr (Reverse)
      return self().want(x);
    else
      return excess_[x];
  }
  template <bool Reverse>
  void add_have(std::int32_t x, std::int64_t amount) {
    if constexpr (Reverse)
      self().add_want(x, amount);
    else
      excess_[x] += amount;
  }
  template <bool Reverse>
  std::int64_t terminal(std::int32_t x) const {
    if constexpr (Reverse)
      return self().source_left(x);
    else
      return self().sink_left(x);
  }
  template <bool Reverse>
  void take_terminal(std::int32_t x, std::int64_t amount) {
    if constexpr (Reverse)
      excess_[x] -= amount;
    else
      self().take_sink(x, amount);
  }

  // Push v's excess (Reverse: pull its want) over admissible arcs; relabel once if some is
  // left. Returns the work done, for the global relabelling period.
  template <bool Reverse>
  long long discharge(std::int32_t v, ClosureCutOutput& out) {
    Net& net = self();
    // Forward only: a node active in reverse has a want, hence no excess to give.
    if (!Reverse && terminal<Reverse>(v) > 0) {  // then label 1: the terminal arc is admissible
      const std::int64_t amount = std::min(have<Reverse>(v), terminal<Reverse>(v));
      take_terminal<Reverse>(v, amount);
      add_have<Reverse>(v, -amount);
      out.flow += amount;
      ++out.augmentations;
      if (have<Reverse>(v) == 0) return 1;
    }
    const std::int32_t k = label_[v];
    long long work = 1;
    for (std::int64_t& c = current_[v], end = net.arc_end(v); c < end;
         ++c, work += Net::kScanIsWork) {
      std::int32_t w;
      std::int64_t r, back;
      if (!net.arc(v, c, w, r, back) || label_[w] != k - 1 || (Reverse ? back : r) <= 0)
        continue;
      if (k == 2 && terminal<Reverse>(w) == 0 && have<Reverse>(w) == 0) {
        // w's label 1 is stale (its terminal arc is used up): lift it now instead of flooding
        // it with excess it would only hand back
        lift<Reverse>(w);
        if (label_[v] == dead_) return work;  // the lift found a gap below v
        continue;                             // w's label is now >= 2: not admissible
      }
      if (terminal<Reverse>(w) > 0 && have<Reverse>(w) == 0) {
        // w (label 1) passes straight on to the terminal: v -> w and w -> terminal as one step,
        // so w is not flooded and drained again (the splits -> pairs -> t shape of pruning)
        const std::int64_t amount =
            std::min(std::min(have<Reverse>(v), Reverse ? back : r), terminal<Reverse>(w));
        net.push(v, c, w, Reverse ? -amount : amount);
        take_terminal<Reverse>(w, amount);
        add_have<Reverse>(v, -amount);
        if constexpr (!Reverse) out.flow += amount;  // Reverse: counted once it is a flow
        ++out.augmentations;
        if (have<Reverse>(v) == 0) return work;
        // the arc stays admissible: the rest goes to w as a plain push (skipping w here would
        // let v relabel below an admissible arc and break the labels the gap test relies on)
        net.arc(v, c, w, r, back);
      }
      const std::int64_t amount = std::min(have<Reverse>(v), Reverse ? back : r);
      if (amount <= 0) continue;
      net.push(v, c, w, Reverse ? -amount : amount);
      if (have<Reverse>(w) == 0) activate(w);
      add_have<Reverse>(w, amount);
      add_have<Reverse>(v, -amount);
      ++out.augmentations;
      if (have<Reverse>(v) == 0) return work;
    }
    // a dead v keeps its excess (want): on the source side (outside the reach of s)
    return relabel<Reverse>(v, k, Net::kScanIsWork ? work : 0);
  }

  // The least label + 1 over w's residual arcs (dead_ if none), and the cursor of that arc:
  // the arcs out of w, or (Reverse) the arcs into w.
  template <bool Reverse>
  std::int32_t least_label(std::int32_t w, std::int64_t& at, long long& work) const {
    const Net& net = self();
    std::int32_t best = dead_;
    at = net.arc_begin(w);
    for (std::int64_t c = net.arc_begin(w), end = net.arc_end(w); c < end; ++c, ++work) {
      std::int32_t x;
      std::int64_t r, back;
      if (!net.arc(w, c, x, r, back) || (Reverse ? back : r) <= 0) continue;
      if (label_[x] + 1 < best) {
        best = label_[x] + 1;
        at = c;
      }
    }
    return best;
  }

  // Raise w (nothing to move, so in no active stack) above its stale label, or apply the gap
  // rule if w was the last node at its label.
  template <bool Reverse>
  void lift(std::int32_t w) {
    const std::int32_t k = label_[w];
    if (buckets_.alone(w, k)) {
      gap(k);
      return;
    }
    label_remove(w);
    std::int64_t at;
    long long work = 0;
    std::int32_t best = least_label<Reverse>(w, at, work);
    if (best <= k) best = k + 1;  // a stale label only ever rises
    if (best >= dead_) {
      label_[w] = dead_;
      return;
    }
    current_[w] = at;
    label_insert(w, best);
  }

  // The relabel that ends a discharge of v at label k: the gap rule if v is alone there, else
  // the least label over its residual arcs, or dead.
  template <bool Reverse>
  long long relabel(std::int32_t v, std::int32_t k, long long work) {
    if (buckets_.alone(v, k)) {
      gap(k);
      return Net::kScanIsWork ? work : 1;
    }
    label_remove(v);
    std::int64_t at;
    const std::int32_t best = least_label<Reverse>(v, at, work);
    if (best >= dead_) {
      label_[v] = dead_;
      return work + 12;
    }
    current_[v] = at;
    label_insert(v, best);
    activate(v);
    return work + 12;
  }

  // Nothing is left at label k, so nothing at or above k can reach the terminal any more
  // (every residual path to it passes through every label below its start): all of it is dead.
  void gap(std::int32_t k) { buckets_.gap(k, label_, dead_); }
};

}  // namespace odtkit

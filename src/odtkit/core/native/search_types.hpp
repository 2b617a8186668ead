// Contract shared by every native search (dp, bnb, corels): what Python passes in
// (SearchConfig), what comes back (SearchOutput), and the limit/interrupt bookkeeping (Budget).
//
// Conventions
// * Objectives, bounds and `upper_bound` are NORMALIZED: misclassified weight / total weight +
//   lam * leaves. Internally searches should work in count units (weight + Lambda*leaves with
//   Lambda = lam * total_weight) and divide at the end
//   (docs/formulations-search-and-pruning.md §0.3).
// * Trees are encoded pre-order: a value j >= 0 is a split on feature j followed by its left
//   (x_j = 0) subtree and then its right (x_j = 1) subtree; a value -(k+1) is a leaf predicting
//   class k. A single leaf predicting class 0 is {-1}.
// * Usage of Budget inside a search (GIL released by the binding):
//       Budget budget(config, interrupt_fn);        // interrupt_fn may be empty (C++ tests)
//       while (...) {
//         if (budget.tick(bytes_in_use)) break;     // once per expanded node/state
//         ...
//       }
//       out.status = budget.status();               // optimal if nothing stopped it
//   tick() counts the node, checks the node limit every call, the clock every 16 calls, the
//   memory every call and the interrupt callback at most every ~5 ms.
// * Memory: bytes_in_use counts every large container of the search (pages, hash-table slot
//   arrays, queues: what is allocated, not what is used), and bytes_ahead what the search may
//   allocate before its next check (a new page, a pending rehash, one node's children), so a
//   search stops *before* an allocation would cross memory_limit_mb. The large containers are
//   paged (paged.hpp): they grow in small steps without 2x copies and free in O(pages).
// * "No limit" is 0 for time_limit, node_limit and memory_limit_mb and +inf for upper_bound, in
//   every search.
// * Tolerance: count_tolerance(total weight) is the one rule for comparing counts (see below).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace odtkit {

// The one tolerance for comparing objectives, bounds and weights in count units
// (docs/formulations-search-and-pruning.md §0.4):
// two counts closer than this are equal, and a candidate must beat the incumbent by more than
// this to replace it. It is 1e-9 of the total weight, i.e. 1e-9 in the normalized objective
// that Python reports and checks (OBJECTIVE_TOLERANCE), whatever the scale of the sample
// weights. (A floor of 1e-9 count units made every tree tie when the weights summed to less
// than ~1e-9: 8 rows weighing 1e-12 each got a single leaf certified optimal at objective 0.5
// where a split scores 0.) Sums of integer weights are exact, so on unweighted data it only
// decides exact ties; with fractional weights it absorbs summation-order rounding.
inline double count_tolerance(double total_weight) { return 1e-9 * total_weight; }
// Weights at most this are zero up to the rounding of a difference of sums (n - n1): a split
// side this light is empty. On the same scale as count_tolerance, three orders of magnitude
// finer, so a side that could matter to a comparison is never dropped.
inline double zero_weight(double total_weight) { return 1e-3 * count_tolerance(total_weight); }

// Queue order of the best-first searches (bnb states, corels prefixes); dp ignores it.
enum class Policy { curiosity, lower_bound, objective, bfs, dfs };
// Symmetry-aware map of corels (docs/formulations-search-and-pruning.md §5.4): one prefix
// per antecedent set, per captured set, or no map. The tree searches ignore it.
enum class Symmetry { permutation_map, captured_map, none };
// Why a search stopped; crosses the binding as the enum odtkit._native.SearchStatus
// (Python maps it to odtkit.results.Status). The outputs that are still dicts (max flow, the
// ensemble cut) carry status_name().
enum class SearchStatus { optimal, time_limit, node_limit, memory_limit, interrupted };

// Name <-> enum; parse_* throw std::invalid_argument (ValueError in Python) on an unknown name.
Policy parse_policy(const std::string& name);
const char* policy_name(Policy policy);
Symmetry parse_symmetry(const std::string& name);
const char* symmetry_name(Symmetry symmetry);
const char* status_name(SearchStatus status);

// The latest incumbent and bound of a running search (normalized), for a progress display:
// SearchOutput::record writes it, the binding's interrupt check (GIL held, ~every 5 ms) reads
// it in the same thread. Owned by the binding; searches without one (C++ tests) skip it.
struct ProgressCell {
  double incumbent = std::numeric_limits<double>::infinity();
  double bound = 0.0;
};

struct SearchConfig {
  double lam = 0.0;
  int max_depth = -1;              // -1 = unlimited (corels: ignored)
  double time_limit = 0.0;         // seconds; 0: none
  long long node_limit = 0;        // expanded nodes/states/prefixes; 0: none
  double memory_limit_mb = 0.0;    // 0: none
  double upper_bound = std::numeric_limits<double>::infinity();  // normalized; +inf: none
  Policy policy = Policy::curiosity;
  Symmetry symmetry = Symmetry::permutation_map;
  std::map<std::string, bool> bounds;  // missing key = on
  std::vector<int> initial_tree;       // optional warm start (encoding above); empty: none
  // Minimum leaf support (dp strategies only), NORMALIZED like the objective: every leaf of a
  // returned tree receives at least min_leaf_weight * total weight; a split is admitted only
  // when both sides do, and a support lighter than that is infeasible. 0: none. Python passes
  // the threshold with odtkit.constraints' tolerance already subtracted.
  double min_leaf_weight = 0.0;
  // Features a split at the ROOT may test (search_dp only; one entry per feature of the
  // problem); deeper nodes may test every feature. Empty: every feature. The root is the only
  // node whose support is every point, so no memo entry, bound or depth-two table below it
  // depends on the mask (branch-and-price forbids root splits with it: core/pricing.py).
  std::vector<bool> root_features;
  std::shared_ptr<ProgressCell> progress;  // set by the binding only; not a Python field

  bool bound_on(const std::string& name) const {
    auto it = bounds.find(name);
    return it == bounds.end() || it->second;
  }
  // Range checks shared by every search (names and switches are checked by Python).
  void validate() const {
    if (!(lam >= 0.0) || !std::isfinite(lam))
      throw std::invalid_argument("lam must be a finite number >= 0");
    if (max_depth < -1) throw std::invalid_argument("max_depth must be >= 0 (or -1: unlimited)");
    if (!(time_limit >= 0.0)) throw std::invalid_argument("time_limit must be >= 0 (0: none)");
    if (node_limit < 0) throw std::invalid_argument("node_limit must be >= 0 (0: none)");
    if (!(memory_limit_mb >= 0.0))
      throw std::invalid_argument("memory_limit_mb must be >= 0 (0: none)");
    if (!(upper_bound >= 0.0)) throw std::invalid_argument("upper_bound must be >= 0 (inf: none)");
    if (!(min_leaf_weight >= 0.0 && min_leaf_weight <= 1.0))
      throw std::invalid_argument(
          "min_leaf_weight must be in [0, 1] (a share of the total weight; 0: none)");
  }
  // Whether a split on `feature` is admitted at the root.
  bool root_allows(int feature) const {
    return root_features.empty() ||
           (feature >= 0 && static_cast<std::size_t>(feature) < root_features.size() &&
            root_features[static_cast<std::size_t>(feature)]);
  }
};

struct SearchOutput {
  std::vector<int> tree;  // encoding above
  double objective = std::numeric_limits<double>::infinity();  // normalized
  double lower_bound = 0.0;                                    // normalized, always valid
  SearchStatus status = SearchStatus::optimal;
  long long n_explored = 0;
  double peak_memory_mb = 0.0;
  std::vector<double> trace_time, trace_incumbent, trace_bound;
  std::map<std::string, double> stats;
  // search_numeric only: the split table its tree's feature codes index (empty elsewhere)
  std::vector<int> split_column, split_rank, split_missing_le;
  std::shared_ptr<ProgressCell> progress;  // config.progress: mirrors the last trace row

  SearchOutput() = default;
  // The output of a search run with `config`: record() mirrors into its progress cell.
  explicit SearchOutput(const SearchConfig& config) : progress(config.progress) {}

  // Whether record() would append a row: the incumbent or the bound changed, or no row yet.
  // Lets a hot loop skip reading the clock when nothing changed.
  bool changed(double incumbent, double bound) const {
    return trace_time.empty() || trace_incumbent.back() != incumbent ||
           trace_bound.back() != bound;
  }
  // Append a trace row when the incumbent or the bound changed (or on the first call).
  void record(double time, double incumbent, double bound) {
    if (!changed(incumbent, bound)) return;
    trace_time.push_back(time);
    trace_incumbent.push_back(incumbent);
    trace_bound.push_back(bound);
    if (progress) {
      progress->incumbent = incumbent;
      progress->bound = bound;
    }
  }
};

class Budget {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Budget(const SearchConfig& config, std::function<bool()> interrupted = {})
      : time_limit_(config.time_limit),
        node_limit_(config.node_limit),
        memory_limit_bytes_(config.memory_limit_mb > 0 ? config.memory_limit_mb * 1048576.0 : 0.0),
        interrupted_(std::move(interrupted)),
        start_(Clock::now()),
        last_interrupt_check_(start_) {}

  // Count one expanded node; true when the search must stop (the status says why).
  // `bytes_in_use`: the search's data structures now; `bytes_ahead`: what they may allocate
  // before the next check (the search stops while bytes_in_use + bytes_ahead is within the
  // limit, i.e. before an allocation would cross it).
  bool tick(std::size_t bytes_in_use = 0, std::size_t bytes_ahead = 0) {
    if (stopped_) return true;
    if (node_limit_ > 0 && nodes_ >= node_limit_) return stop(SearchStatus::node_limit);
    ++nodes_;
    if (!memory_ok(bytes_in_use, bytes_ahead)) return true;
    if ((nodes_ & 15) == 0 && check_clock()) return true;
    return charge(1);
  }
  // Slices of work (the anytime dp alternates three searches over one memo): once `more`
  // further units of work are done (a tick is one unit; charge() adds the cost of heavier
  // steps), tick() returns true and stopped() holds, as for a limit, but status() is unchanged
  // and resume() continues. A real limit met meanwhile ends the pause for good.
  void pause_after(long long more) { pause_at_ = work_ + std::max(1LL, more); }
  // Add `units` of work without counting a node; true when that ends the current slice.
  bool charge(long long units) {
    work_ += units;
    if (pause_at_ > 0 && work_ >= pause_at_ && !stopped_) stopped_ = paused_ = true;
    return stopped_;
  }
  long long work() const { return work_; }
  bool paused() const { return paused_; }
  void resume() {
    if (paused_) stopped_ = paused_ = false;
    pause_at_ = 0;
  }
  // Memory check without counting a node: notes the peak and stops with "memory_limit" if
  // bytes_in_use + bytes_ahead exceeds the limit; false when stopped.
  bool memory_ok(std::size_t bytes_in_use, std::size_t bytes_ahead = 0) {
    if (stopped_) return false;
    note_memory(bytes_in_use);
    if (memory_limit_bytes_ > 0 &&
        static_cast<double>(bytes_in_use) + static_cast<double>(bytes_ahead) > memory_limit_bytes_) {
      stop(SearchStatus::memory_limit);
      return false;
    }
    return true;
  }
  double memory_limit_bytes() const { return memory_limit_bytes_; }
  // Time/interrupt check without counting a node (for long loops inside one node).
  bool check_clock() {
    if (stopped_) return true;
    const auto now = Clock::now();
    if (time_limit_ > 0 && seconds(now) >= time_limit_) return stop(SearchStatus::time_limit);
    if (interrupted_ && now - last_interrupt_check_ >= std::chrono::milliseconds(5)) {
      last_interrupt_check_ = now;
      if (interrupted_()) return stop(SearchStatus::interrupted);
    }
    return false;
  }
  // A std::bad_alloc caught inside a search: the machine had less memory than the limit
  // allowed (another process, `ulimit -v`, a container limit), so it ends the search exactly as
  // the memory limit does, with its incumbent and bound (catch_out_of_memory).
  void out_of_memory() {
    stop(SearchStatus::memory_limit);
    out_of_memory_ = true;
  }
  bool ran_out_of_memory() const { return out_of_memory_; }
  void note_memory(std::size_t bytes) {
    if (static_cast<double>(bytes) > peak_bytes_) peak_bytes_ = static_cast<double>(bytes);
  }

  // Nodes a sub-search explored under its own Budget before this one took over (the fair
  // search's unconstrained presolve): they count toward node_limit and nodes(); true when
  // that limit is already reached.
  bool add_nodes(long long n) {
    nodes_ += n;
    if (node_limit_ > 0 && nodes_ >= node_limit_) return stop(SearchStatus::node_limit);
    return stopped_;
  }

  bool stopped() const { return stopped_; }
  SearchStatus status() const { return status_; }
  long long nodes() const { return nodes_; }
  double elapsed() const { return seconds(Clock::now()); }
  double peak_memory_mb() const { return peak_bytes_ / 1048576.0; }

 private:
  bool stop(SearchStatus why) {
    stopped_ = true;
    paused_ = false;
    status_ = why;
    return true;
  }
  double seconds(Clock::time_point t) const {
    return std::chrono::duration<double>(t - start_).count();
  }

  double time_limit_;
  long long node_limit_;
  double memory_limit_bytes_;
  std::function<bool()> interrupted_;
  Clock::time_point start_, last_interrupt_check_;
  long long nodes_ = 0, work_ = 0, pause_at_ = 0;
  double peak_bytes_ = 0.0;
  bool stopped_ = false, paused_ = false, out_of_memory_ = false;
  SearchStatus status_ = SearchStatus::optimal;
};

// Runs `phase` (a search loop or a step of it); a std::bad_alloc raised inside ends the search
// through Budget::out_of_memory instead of escaping, so the caller reports its incumbent and
// bound as after any limit, never an exception that loses the tree (issue 13). Returns false
// when it caught one. The phase must keep its incumbent and bound valid at every allocation:
// commit a new incumbent's tree before its value, never leave a popped open node unaccounted.
template <class Phase>
bool catch_out_of_memory(Budget& budget, Phase&& phase) {
  try {
    phase();
    return true;
  } catch (const std::bad_alloc&) {
    budget.out_of_memory();
    return false;
  }
}

}  // namespace odtkit

// Incumbent dives ahead of the anytime DP (strategy="anytime", issue 27).
//
// Why. The anytime driver (dp.cpp, search_dp_anytime) shares its time between iterative
// deepening (incumbents), relaxed deepening and the target search (bounds), so its deepening
// gets about a quarter of the clock: on planted 800 x 30 (depth-6 truth) it stopped at depth 5
// while the depth-6 optimum, which STreeD's depth-first search reaches within the limit, takes
// the recursive DP ~10 s on its own. Any tree of bounded depth is a feasible tree of the
// unlimited problem, so the optimum at depth 2, 3, ... is an incumbent.
//
// What. Under a time or node limit and an unlimited depth, the anytime DP first runs alone on a
// small share of the limit (kProbeShare): what it certifies there (car-evaluation, tic-tac-toe
// at small lambda: seconds) is returned as before, without the dives' cost (which doubled those
// times), and its bound stays valid for the rest of the run. Otherwise a share (kDiveShare) of
// the limit goes to the recursive DP (search_dp) at depth 2, 3, ..., each warm-started from the best
// tree so far (which prunes it); a depth whose search stops part-way still hands back its best
// tree. The dives end when their share is spent, when deepening stopped paying (the depth-d
// optimum uses fewer than d levels), or at depth n_features. The anytime DP then runs on the
// rest of the limit from the best dive (it completes that tree's leaves by depth-two optima and
// raises the bound), and certifies the same optimum as before. Without any limit there is no
// share to split and the anytime DP runs alone.
// Bounds. A depth-limited search's bound bounds its depth-limited optimum, not the unlimited
// one, so the dives contribute incumbents only; the bound reported meanwhile is the a-priori
// one (a leaf, or >= 2 leaves and the equivalent-point mistakes), valid for any tree.
#include "dp_dives.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "dp.hpp"
#include "search_common.hpp"

namespace odtkit {
namespace {

// Share of the time (or node) limit for the anytime DP alone, before any dive: what certifies
// quickly stays as fast as without dives (the probe's work is lost to the later phases, at most
// this share, and its incumbent and bound carry over).
constexpr double kProbeShare = 0.1;
// Share of the time (or node) limit spent on dives at most: enough for the depth-6 optimum of
// planted 800 x 30 within a 60 s limit on a loaded machine, and leaves most of the clock to the
// bound.
constexpr double kDiveShare = 0.5;
// Share of the limit for polishing the best dive (Polisher) after the dives.
constexpr double kPolishShare = 0.1;

// Depth of an encoded tree (a leaf: 0).
int tree_depth(const std::vector<int>& code, std::size_t& pos) {
  if (pos >= code.size() || code[pos++] < 0) return 0;
  const int a = tree_depth(code, pos);
  const int b = tree_depth(code, pos);
  return 1 + std::max(a, b);
}

int tree_depth(const std::vector<int>& code) {
  std::size_t pos = 0;
  return tree_depth(code, pos);
}

// The sub-problem on the points of support s: one weighted row per (point, class) with weight,
// the same features (so a tree's feature codes mean the same in both). With separate support
// weights (Problem) a point's support rides on its first row (a row of weight 0 when it has no
// class weight), so every sub-support weighs the same in both; `support_total` receives the
// sub-problem's total support.
Problem restricted(const Problem& P, const std::uint64_t* s, double* support_total) {
  const std::size_t M = P.n_features();
  const int K = P.n_classes();
  const std::vector<double>& pcw = P.point_class_weight();
  const bool apart = P.separate_support();
  std::vector<char> X;  // not vector<bool>: the constructor reads a bool array
  std::vector<std::int32_t> y;
  std::vector<double> w, support;
  double total = 0.0;
  auto add_row = [&](std::size_t u, int k, double wk, double sk) {
    for (std::size_t j = 0; j < M; ++j)
      X.push_back(static_cast<char>((P.feature_words(j)[u / 64] >> (u % 64)) & 1u));
    y.push_back(k);
    w.push_back(wk);
    support.push_back(sk);
    total += sk;
  };
  for (std::size_t u = 0; u < P.n_points(); ++u) {
    if (!((s[u / 64] >> (u % 64)) & 1u)) continue;
    double sk = apart ? P.point_support()[u] : 0.0;
    for (int k = 0; k < K; ++k) {
      const double wk = pcw[u * static_cast<std::size_t>(K) + static_cast<std::size_t>(k)];
      if (!(wk > 0)) continue;
      add_row(u, k, wk, apart ? sk : wk);
      if (apart) sk = 0.0;
    }
    if (apart && sk > 0) add_row(u, 0, 0.0, sk);
  }
  *support_total = total;
  static_assert(sizeof(bool) == sizeof(char), "bool rows are read as bytes");
  return Problem(reinterpret_cast<const bool*>(X.data()), y.size(), M, y.data(), w.data(), K,
                 P.popcount_mode(), apart ? support.data() : nullptr);
}

// Local improvement of an incumbent: every top-most subtree of height <= `height` is replaced
// by the optimal tree of depth height + kPolishExtra on its rows (the recursive DP on the
// restricted problem, warm-started from the subtree, so never worse). Leaf completion by
// depth-two optima (dp.cpp) is the height-0 case; this reaches deeper, below the top of a dive.
// Passes at height 3 while they pay, then one at height 4 (bigger sub-problems: first spending
// the share at height 4 found nothing on planted 800 x 30 where height 3 gained 0.02-0.04).
constexpr int kPolishExtra = 2;
// Share of the memory limit a subtree's copy of its rows may take (else it is not polished).
constexpr double kPolishMemoryShare = 0.25;
constexpr int kPolishPasses = 4;

class Polisher {
 public:
  Polisher(const Problem& P, const SearchConfig& config, std::function<bool()> interrupted)
      : P_(P), config_(config), interrupted_(std::move(interrupted)),
        Lambda_(config.lam * P.total_weight()) {}

  // Rewrites the subtree of `in` at pos (support s) into out; `time_left` / `nodes_left`
  // return false once spent.
  void run(const std::vector<int>& in, std::size_t& pos, const std::uint64_t* s,
           std::vector<int>& out) {
    const std::size_t begin = pos;
    std::size_t probe = pos;
    const int h = tree_depth(in, probe);
    if (in[pos] < 0 || (h <= height_ && h > 0 && !spent())) {
      pos = probe;
      std::vector<int> sub(in.begin() + static_cast<std::ptrdiff_t>(begin),
                           in.begin() + static_cast<std::ptrdiff_t>(probe));
      if (h > 0) sub = solve(s, sub, h + kPolishExtra);
      out.insert(out.end(), sub.begin(), sub.end());
      return;
    }
    const int f = in[pos++];
    out.push_back(f);
    const std::size_t W = P_.n_words();
    std::vector<std::uint64_t> s0(W), s1(W);
    words::and_not_into(s0.data(), s, P_.feature_words(static_cast<std::size_t>(f)), W);
    words::and_into(s1.data(), s, P_.feature_words(static_cast<std::size_t>(f)), W);
    run(in, pos, s0.data(), out);
    run(in, pos, s1.data(), out);
  }
  void set_limits(double deadline_seconds, long long nodes) {
    deadline_ = deadline_seconds;
    nodes_left_ = nodes;
  }
  void set_height(int height) { height_ = height; }
  long long nodes() const { return nodes_; }
  bool interrupted() const { return interrupted_stop_; }

 private:
  bool spent() const {
    if (interrupted_stop_) return true;
    if (config_.node_limit > 0 && nodes_left_ - nodes_ <= 0) return true;
    return config_.time_limit > 0 && deadline_ - clock() <= 0;
  }
  double clock() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  std::vector<int> solve(const std::uint64_t* s, const std::vector<int>& subtree, int depth) {
    // the copy of the subtree's rows (a byte per cell, then its bitsets) is outside the
    // search's own memory accounting: keep it to a small share of the limit, and a failed
    // allocation keeps the subtree (polishing only ever improves an incumbent)
    const double rows = static_cast<double>(words::count(s, P_.n_words())) * P_.n_classes();
    const double copy_mb = rows * static_cast<double>(P_.n_features()) * 1.25 / 1048576.0;
    if (config_.memory_limit_mb > 0 && copy_mb > kPolishMemoryShare * config_.memory_limit_mb)
      return subtree;
    // a subtree of the incumbent has positive weight and support on its rows (the dp never
    // splits a side without weight, and its leaves reach the minimum leaf support)
    if (!(words::count(s, P_.n_words()) > 0)) return subtree;
    std::optional<Problem> made;
    double support = 0.0;
    try {
      made.emplace(restricted(P_, s, &support));
    } catch (const std::bad_alloc&) {
      return subtree;
    } catch (const std::invalid_argument&) {
      return subtree;  // rows without weight: nothing to polish
    }
    const Problem& sub_problem = *made;
    const double n = sub_problem.total_weight();
    if (!(n > 0) || !(support > 0)) return subtree;
    SearchConfig sub = config_;
    sub.progress = nullptr;
    sub.lam = Lambda_ / n;  // the same Lambda in count units
    // the same minimum leaf support in support units (<= the subtree's: its leaves reach it)
    sub.min_leaf_weight =
        std::min(1.0, InitialBound::min_leaf_units(P_, config_) / sub_problem.total_support());
    sub.max_depth = depth;
    sub.upper_bound = std::numeric_limits<double>::infinity();
    sub.initial_tree = subtree;
    sub.time_limit = config_.time_limit > 0 ? std::max(deadline_ - clock(), 1e-9) : 0.0;
    sub.node_limit = config_.node_limit > 0 ? std::max(1LL, nodes_left_ - nodes_) : 0;
    const SearchOutput r = search_dp(sub_problem, sub, interrupted_);
    nodes_ += r.n_explored;
    if (r.status == SearchStatus::interrupted) interrupted_stop_ = true;
    const double before = evaluate_tree(sub_problem, subtree, Lambda_, -1);
    const double after = evaluate_tree(sub_problem, r.tree, Lambda_, -1);
    return after < before - count_tolerance(n) ? r.tree : subtree;
  }

  const Problem& P_;
  const SearchConfig& config_;
  std::function<bool()> interrupted_;
  double Lambda_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double deadline_ = 0.0;
  long long nodes_left_ = 0, nodes_ = 0;
  int height_ = 3;
  bool interrupted_stop_ = false;
};

}  // namespace

SearchOutput search_dp_dives(const Problem& problem, const SearchConfig& config,
                             std::function<bool()> interrupted) {
  const bool limited = config.time_limit > 0 || config.node_limit > 0;
  const int n_features = static_cast<int>(problem.n_features());
  if (config.max_depth >= 0 || !limited || n_features < 2)
    return search_dp_anytime(problem, config, std::move(interrupted));

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const double N = problem.total_weight();
  const double Lambda = config.lam * N;
  const double tau = count_tolerance(N);

  SearchOutput out(config);
  // the first incumbent: a single leaf (the dives' warm starts improve on it)
  std::vector<double> cw(static_cast<std::size_t>(problem.n_classes()));
  problem.class_weights(problem.all_points().data(), cw.data());
  std::vector<int> best{-(majority_class(cw.data(), problem.n_classes()) + 1)};
  double best_value = misclassified(cw.data(), problem.n_classes()) + Lambda;
  if (!config.initial_tree.empty()) {
    // (throws on a bad tree)
    const double v = evaluate_tree(problem, config.initial_tree, Lambda, -1,
                                   InitialBound::min_leaf_units(problem, config));
    if (v < best_value) {
      best = config.initial_tree;
      best_value = v;
    }
  }
  const double eq = config.bound_on("equivalent_points") ? problem.minority_total() : 0.0;
  const double apriori = InitialBound(problem, config).split_bound(eq) / N;
  double probe_bound = 0.0;  // the probe's (valid) bound, normalized
  auto bound = [&] { return std::min(std::max(apriori, probe_bound), best_value / N); };
  out.record(elapsed(), best_value / N, bound());

  // (rounded down: the anytime DP keeps at least one node, so n_explored <= node_limit)
  auto nodes_of = [&](double share) {
    return static_cast<long long>(share * static_cast<double>(config.node_limit));
  };
  if (config.time_limit <= 0 && nodes_of(kDiveShare) < 1)
    return search_dp_anytime(problem, config, std::move(interrupted));
  long long nodes = 0;
  double peak_mb = 0.0;

  // the probe: the anytime DP alone on kProbeShare of the limit
  if (config.time_limit > 0 || nodes_of(kProbeShare) >= 1) {
    SearchConfig probe_config = config;
    probe_config.initial_tree = best;
    probe_config.time_limit = config.time_limit > 0 ? kProbeShare * config.time_limit : 0.0;
    probe_config.node_limit = config.node_limit > 0 ? std::max(1LL, nodes_of(kProbeShare)) : 0;
    SearchOutput probe = search_dp_anytime(problem, probe_config, interrupted);
    const bool own_limit = probe.status == SearchStatus::time_limit ||
                           probe.status == SearchStatus::node_limit;
    if (!own_limit || (config.node_limit > 0 && probe.n_explored >= config.node_limit)) {
      // certified (or interrupted, out of memory, ...): the answer, as without dives
      probe.stats["dive_depth"] = 0.0;
      probe.stats["probe_seconds"] = elapsed();
      return probe;
    }
    nodes += probe.n_explored;
    peak_mb = std::max(peak_mb, probe.peak_memory_mb);
    for (std::size_t i = 0; i < probe.trace_time.size(); ++i)
      out.record(probe.trace_time[i], std::min(probe.trace_incumbent[i], best_value / N),
                 probe.trace_bound[i]);
    const double v = evaluate_tree(problem, probe.tree, Lambda, -1);
    if (v < best_value - tau) {
      best = probe.tree;
      best_value = v;
    }
    probe_bound = probe.lower_bound;
    out.record(elapsed(), best_value / N, bound());
  }
  const double probe_seconds = elapsed();
  const double time_share =
      config.time_limit > 0 ? (kProbeShare + kDiveShare) * config.time_limit : 0.0;
  const long long node_share = nodes_of(kProbeShare + kDiveShare);
  int dive_depth = 0;
  SearchStatus stop = SearchStatus::optimal;  // a dive stopped by an interrupt ends everything
  for (int d = 2; d <= n_features; ++d) {
    const double time_left = time_share - elapsed();
    const long long nodes_left = node_share - nodes;
    if ((time_share > 0 && time_left <= 0) || (config.node_limit > 0 && nodes_left <= 0)) break;
    SearchConfig sub = config;
    sub.progress = nullptr;  // a depth-limited bound is not a bound of this problem
    sub.max_depth = d;
    sub.upper_bound = std::numeric_limits<double>::infinity();
    sub.time_limit = time_share > 0 ? time_left : 0.0;
    sub.node_limit = config.node_limit > 0 ? nodes_left : 0;
    sub.initial_tree = tree_depth(best) <= d ? best : std::vector<int>{};
    const SearchOutput dive = search_dp(problem, sub, interrupted);
    nodes += dive.n_explored;
    peak_mb = std::max(peak_mb, dive.peak_memory_mb);
    dive_depth = d;
    // recomputed from the data: the incumbent's value is never taken on trust
    const double v = evaluate_tree(problem, dive.tree, Lambda, -1);
    if (v < best_value - tau) {
      best = dive.tree;
      best_value = v;
      out.record(elapsed(), best_value / N, bound());
    }
    if (dive.status == SearchStatus::interrupted) {
      stop = dive.status;
      break;
    }
    // a limit (time, nodes, memory) ended this dive: the rest goes to the anytime DP
    if (dive.status != SearchStatus::optimal) break;
    // the depth-d optimum does not use depth d: deeper dives are unlikely to pay
    if (tree_depth(dive.tree) < d) break;
  }
  const double dive_seconds = elapsed() - probe_seconds;

  // polish the best dive below its top (kPolishShare of the limit at most)
  double polish_gain = 0.0;
  if (stop != SearchStatus::interrupted && tree_depth(best) > 3) {
    Polisher polisher(problem, config, interrupted);
    polisher.set_limits(kPolishShare * config.time_limit,
                        static_cast<long long>(kPolishShare * static_cast<double>(config.node_limit)));
    // a polished tree has new subtrees of small height (below the replaced ones): polish again
    // while that pays
    for (int pass = 0, height = 3; pass < kPolishPasses && !polisher.interrupted(); ++pass) {
      polisher.set_height(height);
      std::vector<int> polished;
      std::size_t pos = 0;
      polisher.run(best, pos, problem.all_points().data(), polished);
      const double v = evaluate_tree(problem, polished, Lambda, -1);
      if (!(v < best_value - tau)) {
        if (height == 4) break;
        height = 4;
        continue;
      }
      polish_gain += (best_value - v) / N;
      best = std::move(polished);
      best_value = v;
      out.record(elapsed(), best_value / N, bound());
    }
    nodes += polisher.nodes();
    if (polisher.interrupted()) stop = SearchStatus::interrupted;
  }
  const double polish_seconds = elapsed() - probe_seconds - dive_seconds;

  if (stop == SearchStatus::interrupted) {
    out.tree = best;
    out.objective = best_value / N;
    out.lower_bound = bound();
    out.status = stop;
    out.n_explored = nodes;
    out.peak_memory_mb = peak_mb;
    out.record(elapsed(), out.objective, out.lower_bound);
  } else {
    SearchConfig rest = config;
    rest.initial_tree = best;
    if (config.time_limit > 0) rest.time_limit = std::max(config.time_limit - elapsed(), 1e-9);
    if (config.node_limit > 0) rest.node_limit = config.node_limit - nodes;  // >= 1
    const double offset = elapsed();
    // its rows also reach the progress cell directly (valid incumbents and bounds)
    SearchOutput main = search_dp_anytime(problem, rest, std::move(interrupted));
    for (std::size_t i = 0; i < main.trace_time.size(); ++i)
      out.record(offset + main.trace_time[i], std::min(main.trace_incumbent[i], best_value / N),
                 std::max(main.trace_bound[i], std::min(probe_bound, main.trace_incumbent[i])));
    out.tree = std::move(main.tree);
    out.objective = main.objective;
    // both bounds are valid; the probe's can be the higher one when the rest is short
    out.lower_bound = std::max(main.lower_bound, std::min(probe_bound, main.objective));
    out.status = main.status;
    out.n_explored = nodes + main.n_explored;
    out.peak_memory_mb = std::max(peak_mb, main.peak_memory_mb);
    out.stats = std::move(main.stats);
    out.record(elapsed(), out.objective, out.lower_bound);
  }
  out.stats["dive_depth"] = static_cast<double>(dive_depth);
  out.stats["probe_seconds"] = probe_seconds;
  out.stats["dive_seconds"] = dive_seconds;
  out.stats["dive_nodes"] = static_cast<double>(nodes);
  out.stats["polish_seconds"] = polish_seconds;
  out.stats["polish_gain"] = polish_gain;
  out.stats["search_seconds"] = elapsed();
  return out;
}

}  // namespace odtkit

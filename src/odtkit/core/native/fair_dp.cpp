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
//
// Files: fair_fronts.{hpp,cpp} (fronts, coefficients, merging, rebuilding), fair_bounds.cpp
// (sibling bounds, Lagrangian cuts, deep root children), fair_search.cpp (the root and the
// iterative deepening), fair_solver.hpp (the solver they share); this file runs the presolve
// and the deepening under one Budget.
#include "fair_dp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dp.hpp"
#include "fair_fronts.hpp"
#include "fair_solver.hpp"
#include "search_common.hpp"

namespace odtkit {
namespace fair {
namespace {

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
}  // namespace fair

SearchOutput search_fair_dp(const Problem& problem, const FairSpec& spec,
                            const SearchConfig& config, std::function<bool()> interrupted) {
  using namespace fair;
  check_spec(problem, spec, config);
  // One Budget for the whole call: its clock starts before the presolve, which runs under its
  // own budget and is then charged here (its nodes; its time is this clock's), so the limits
  // hold for presolve and fair search together.
  Budget budget(config, interrupted);
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
  const SearchOutput free = search_dp(problem, free_config, std::move(interrupted));
  const double presolve_seconds = budget.elapsed();
  budget.note_memory(static_cast<std::size_t>(free.peak_memory_mb * 1048576.0));

  auto fair = [&](const std::vector<int>& code) {
    std::vector<double> d(m);
    tree_disparity(problem, coefs, spec.positive_code, code, d.data());
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
  out.record(budget.elapsed(), normalized(incumbent), normalized(std::min(lower, incumbent)));

  auto finish = [&](SearchStatus status, double bound) {
    out.tree = tree;
    out.status = status;
    out.objective = normalized(incumbent);
    bound = std::min(std::max(bound, lower), incumbent);
    out.lower_bound = status == SearchStatus::optimal ? out.objective : normalized(bound);
    out.n_explored = budget.nodes();
    out.peak_memory_mb = budget.peak_memory_mb();
    out.record(budget.elapsed(), out.objective, out.lower_bound);
    out.stats["search_seconds"] = budget.elapsed();
    return out;
  };

  out.stats["shortcut"] = 0.0;
  budget.add_nodes(free.n_explored);
  if (free.status != SearchStatus::optimal) return finish(free.status, lower);
  if (sw.shortcut && free_fair) {
    out.stats["shortcut"] = 1.0;
    return finish(SearchStatus::optimal, incumbent);
  }
  if (incumbent <= lower + tau) return finish(SearchStatus::optimal, incumbent);

  // 2. the fair search with what is left of the limits
  if (budget.stopped() || budget.check_clock()) return finish(budget.status(), lower);
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
      out.record(budget.elapsed(), normalized(incumbent), normalized(std::min(lower, incumbent)));
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
  if (!owned) return finish(SearchStatus::memory_limit, bound);
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
  SearchStatus status = budget.status();
  if (completed == D && !budget.ran_out_of_memory()) status = SearchStatus::optimal;
  return finish(status, bound);
}

}  // namespace odtkit

// Bindings of the search contract (search_types.hpp): the typed SearchConfig, the SearchStatus
// enum and the typed SearchOutput (read-only), and one function per search, all through
// run_guarded: copy the config, release the GIL, run, return the output.
// Python (odtkit.core.search / odtkit.core.rules) validates names and ranges first; the typed
// config still turns a misspelt keyword or attribute, or a wrong type, into a Python error.
#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "bindings.hpp"
#include "bnb.hpp"
#include "corels.hpp"
#include "dp.hpp"
#include "dp_dives.hpp"
#include "dp_queue.hpp"
#include "fair_dp.hpp"
#include "greedy.hpp"
#include "numeric.hpp"
#include "popcount.hpp"
#include "problem.hpp"
#include "search_types.hpp"

namespace nb = nanobind;

namespace odtkit {

// Interrupt callback for Budget: briefly re-acquires the GIL and runs Python's signal handlers.
// A pending KeyboardInterrupt is consumed and reported as status "interrupted" so that the
// caller still receives the best tree found.
std::function<bool()> python_interrupt_check(std::shared_ptr<ProgressCell> cell,
                                             nb::object report) {
  // The callable is copied and destroyed by the search with the GIL released, so it must not
  // own a Python reference directly (a refcount change without the GIL races with every other
  // thread; nanobind's debug build aborts on it). It shares one holder instead, whose last
  // owner takes the GIL to drop the reference.
  std::shared_ptr<nb::object> callback(new nb::object(std::move(report)), [](nb::object* p) {
    if (p->is_valid()) {
      nb::gil_scoped_acquire guard;
      delete p;
    } else {
      delete p;
    }
  });
  return [cell = std::move(cell), callback = std::move(callback)] {
    nb::gil_scoped_acquire guard;
    const nb::object& report = *callback;
    if (cell && report.is_valid() && !report.is_none()) {
      try {
        report(cell->incumbent, cell->bound);
      } catch (nb::python_error& e) {
        e.discard_as_unraisable("odtkit search progress");
      }
    }
    if (PyErr_CheckSignals() != 0) {
      PyErr_Clear();
      return true;
    }
    return false;
  };
}

namespace {

using SearchFunction = SearchOutput (*)(const Problem&, const SearchConfig&,
                                        std::function<bool()>);

// Copy and validate the config, release the GIL, run `search(config, interrupt)`, convert.
// `progress`: None, or a callable(incumbent, bound) called about every 5 ms with the search's
// latest trace values (GIL held).
// A search that does not implement the minimum leaf support refuses it rather than ignore it.
void refuse_min_leaf(const SearchConfig& config, const char* search) {
  if (config.min_leaf_weight > 0.0)
    throw std::invalid_argument(std::string("min_leaf_weight is not supported by ") + search +
                                " (only the dp searches take it)");
}

// Only search_dp takes a root feature mask; every other search refuses it rather than ignore it.
void refuse_root_features(const SearchConfig& config, const char* search) {
  if (!config.root_features.empty())
    throw std::invalid_argument(std::string("root_features is not supported by ") + search +
                                " (only search_dp takes it)");
}

template <typename Run>
SearchOutput run_guarded(const SearchConfig& config, nb::object progress, Run&& search) {
  // a copy: another Python thread could assign to `config` while the GIL is released
  SearchConfig local = config;
  local.validate();
  if (!progress.is_none()) local.progress = std::make_shared<ProgressCell>();
  auto interrupt = python_interrupt_check(local.progress, progress);
  SearchOutput out;
  {
    nb::gil_scoped_release release;
    out = search(local, std::move(interrupt));
  }
  out.progress.reset();  // the binding's cell: not part of the answer
  return out;
}

// Every search works in count units, Lambda = lam * total weight. A Lambda that overflows to
// inf made every objective inf, and dp queue never settled (an endless loop, time limit or not).
void check_penalty(const Problem& problem, double lam) {
  if (!std::isfinite(lam * problem.total_weight()))
    throw std::invalid_argument(
        "lam is too large for these sample weights: lam * total weight overflows (any lam >= 1 "
        "already makes a single leaf, or the empty rule list, optimal)");
}

template <SearchFunction Search>
SearchOutput run_search(const Problem& problem, const SearchConfig& config, nb::object progress) {
  check_penalty(problem, config.lam);
  // a run-time test: under the sanitizers' instrumentation a function's address is no
  // constant expression, so `if constexpr` on it does not compile there
  if (Search == search_bnb) refuse_min_leaf(config, "search_bnb");
  if (Search == search_corels) refuse_min_leaf(config, "search_corels");
  if (Search != search_dp) refuse_root_features(config, "this search");
  if (!config.root_features.empty() && config.root_features.size() != problem.n_features())
    throw std::invalid_argument("root_features must have one entry per feature of the problem");
  return run_guarded(config, std::move(progress),
                     [&problem](const SearchConfig& c, std::function<bool()> stop) {
                       return Search(problem, c, std::move(stop));
                     });
}

using CoefMatrix = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

// The fair search takes the disparity coefficients (FairnessGroups.coefficients) besides the
// problem; they are copied before the GIL is released.
SearchOutput run_fair_search(const Problem& problem, CoefMatrix coefficients, double delta,
                         int positive_code, const SearchConfig& config, nb::object progress) {
  if (coefficients.shape(0) != problem.n_samples())
    throw std::invalid_argument("coefficients must have one row per sample of the problem");
  check_penalty(problem, config.lam);
  refuse_min_leaf(config, "search_fair_dp");
  refuse_root_features(config, "search_fair_dp");
  std::vector<double> coef(coefficients.data(),
                           coefficients.data() + coefficients.shape(0) * coefficients.shape(1));
  FairSpec spec;
  spec.coefficients = coef.data();
  spec.n_pairs = coefficients.shape(1);
  spec.delta = delta;
  spec.positive_code = positive_code;
  return run_guarded(config, std::move(progress),
                     [&](const SearchConfig& c, std::function<bool()> stop) {
                       return search_fair_dp(problem, spec, c, std::move(stop));
                     });
}

using ValueMatrix = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using LabelVector = nb::ndarray<const int, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using WeightVector = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// The exact search over every threshold (numeric.hpp): the table is checked and copied before
// the GIL is released; the answer adds the split table its tree indexes.
SearchOutput run_numeric_search(ValueMatrix values, LabelVector labels, WeightVector weights,
                            int n_classes, const SearchConfig& config, nb::object progress,
                            std::vector<std::tuple<int, int, int>> initial_splits) {
  const std::size_t n = values.shape(0), m = values.shape(1);
  if (labels.shape(0) != n || weights.shape(0) != n)
    throw std::invalid_argument("values, labels and weights must have the same number of rows");
  if (n == 0) throw std::invalid_argument("values has no row");
  refuse_min_leaf(config, "search_numeric");
  refuse_root_features(config, "search_numeric");
  if (n_classes < 1) throw std::invalid_argument("n_classes must be >= 1");
  std::vector<double> table(values.data(), values.data() + n * m);
  for (double v : table)
    if (std::isinf(v)) throw std::invalid_argument("values must not be infinite");
  std::vector<int> y(labels.data(), labels.data() + n);
  for (int k : y)
    if (k < 0 || k >= n_classes) throw std::invalid_argument("a label is out of range");
  std::vector<double> w(weights.data(), weights.data() + n);
  double total = 0.0;
  for (double v : w) {
    if (!(v > 0.0) || !std::isfinite(v))
      throw std::invalid_argument("weights must be finite and > 0");
    total += v;
  }
  if (!std::isfinite(config.lam * total))
    throw std::invalid_argument("lam is too large for these sample weights");
  std::vector<NumericSplit> start;
  for (auto [c, k, le] : initial_splits) start.push_back(NumericSplit{c, k, le});
  NumericTable t;
  t.values = table.data();
  t.labels = y.data();
  t.weights = w.data();
  t.n_rows = n;
  t.n_columns = m;
  t.n_classes = n_classes;
  std::vector<NumericSplit> splits;
  SearchOutput out = run_guarded(config, std::move(progress),
                                 [&](const SearchConfig& c, std::function<bool()> stop) {
                                   return search_numeric(t, c, start, splits, std::move(stop));
                                 });
  for (const NumericSplit& s : splits) {
    out.split_column.push_back(s.column);
    out.split_rank.push_back(s.rank);
    out.split_missing_le.push_back(s.missing_le);
  }
  return out;
}

// SearchOutput(...) from Python: the answers Python makes itself (the certified leaf after a
// MemoryError or a Ctrl-C before the search, the exact search's guessed start).
void init_output(SearchOutput* self, std::vector<int> tree, double objective, double lower_bound,
                 SearchStatus status, long long n_explored, double peak_memory_mb,
                 std::vector<double> trace_time, std::vector<double> trace_incumbent,
                 std::vector<double> trace_bound, std::map<std::string, double> stats,
                 std::vector<int> split_column, std::vector<int> split_rank,
                 std::vector<int> split_missing_le) {
  if (trace_incumbent.size() != trace_time.size() || trace_bound.size() != trace_time.size())
    throw std::invalid_argument("trace_time, trace_incumbent and trace_bound differ in length");
  if (split_rank.size() != split_column.size() || split_missing_le.size() != split_column.size())
    throw std::invalid_argument("split_column, split_rank and split_missing_le differ in length");
  SearchOutput* o = new (self) SearchOutput();
  o->tree = std::move(tree);
  o->objective = objective;
  o->lower_bound = lower_bound;
  o->status = status;
  o->n_explored = n_explored;
  o->peak_memory_mb = peak_memory_mb;
  o->trace_time = std::move(trace_time);
  o->trace_incumbent = std::move(trace_incumbent);
  o->trace_bound = std::move(trace_bound);
  o->stats = std::move(stats);
  o->split_column = std::move(split_column);
  o->split_rank = std::move(split_rank);
  o->split_missing_le = std::move(split_missing_le);
}

// A copy with some fields changed (the output is read-only: Python maps the tree back to the
// dataset's features and adds statistics through this).
SearchOutput replace_output(const SearchOutput& o, std::optional<std::vector<int>> tree,
                            std::optional<double> objective, std::optional<double> lower_bound,
                            std::optional<SearchStatus> status,
                            std::optional<std::map<std::string, double>> stats) {
  SearchOutput r = o;
  if (tree) r.tree = std::move(*tree);
  if (objective) r.objective = *objective;
  if (lower_bound) r.lower_bound = *lower_bound;
  if (status) r.status = *status;
  if (stats) r.stats = std::move(*stats);
  return r;
}

void init_config(SearchConfig* self, double lam, int max_depth, double time_limit,
                 long long node_limit, double memory_limit_mb, double upper_bound,
                 const std::string& policy, const std::string& symmetry,
                 std::map<std::string, bool> bounds, std::vector<int> initial_tree,
                 double min_leaf_weight, std::vector<bool> root_features) {
  // parse into a local first: a bad name must not leave a half-built object behind
  SearchConfig c;
  c.lam = lam;
  c.max_depth = max_depth;
  c.time_limit = time_limit;
  c.node_limit = node_limit;
  c.memory_limit_mb = memory_limit_mb;
  c.upper_bound = upper_bound;
  c.policy = parse_policy(policy);
  c.symmetry = parse_symmetry(symmetry);
  c.bounds = std::move(bounds);
  c.initial_tree = std::move(initial_tree);
  c.min_leaf_weight = min_leaf_weight;
  c.root_features = std::move(root_features);
  new (self) SearchConfig(std::move(c));
}

// Times the split-loop kernel, popcount(s & x_j & plane) over n_words words for each of
// n_features features (one kernels::plane_sum call per feature, as Problem::class_weights_and
// makes per class), `repeats` times, on deterministic pseudo-random words. Modes: "dispatch"
// (what the searches use on this CPU), "portable" (forced software popcount) and "limit" (a
// plain hardware popcount over the same number of words: the machine's throughput bound).
// Returns (seconds, checksum); dispatch and portable must agree on the checksum.
std::pair<double, std::uint64_t> popcount_kernel_bench(std::size_t n_features,
                                                       std::size_t n_words, std::size_t repeats,
                                                       const std::string& mode) {
  if (n_features == 0 || n_words == 0 || repeats == 0)
    throw std::invalid_argument("n_features, n_words and repeats must be positive");
  if (mode != "dispatch" && mode != "portable" && mode != "limit")
    throw std::invalid_argument("mode must be 'dispatch', 'portable' or 'limit'");
  if (mode == "limit" && !cpu_has_hardware_popcount())
    throw std::invalid_argument("this CPU has no hardware popcount");
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  auto next = [&state] {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  std::vector<std::uint64_t> features(n_features * n_words), s(n_words), plane(n_words);
  for (auto& w : features) w = next();
  for (auto& w : s) w = next();
  for (auto& w : plane) w = next() | next();
  const int bit = 0;
  const PopcountMode kernel =
      mode == "portable" ? PopcountMode::portable : parse_popcount_mode("auto");
  std::uint64_t checksum = 0;
  nb::gil_scoped_release release;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t r = 0; r < repeats; ++r) {
    if (mode == "limit") {
      checksum += kernels::count(PopcountMode::hardware, features.data(), features.size());
    } else {
      for (std::size_t j = 0; j < n_features; ++j)
        checksum += kernels::plane_sum(kernel, s.data(), &features[j * n_words], plane.data(),
                                       &bit, 1, n_words);
    }
    // one word changes per repeat so the compiler cannot hoist the loop
    s[r % n_words] ^= checksum;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {seconds, checksum};
}

}  // namespace

void bind_searches(nb::module_& m) {
  nb::enum_<SearchStatus>(m, "SearchStatus",
                          "Why a native search stopped (odtkit.core._problem.native_status maps "
                          "it to odtkit.results.Status).")
      .value("optimal", SearchStatus::optimal)
      .value("time_limit", SearchStatus::time_limit)
      .value("node_limit", SearchStatus::node_limit)
      .value("memory_limit", SearchStatus::memory_limit)
      .value("interrupted", SearchStatus::interrupted);

  const SearchOutput empty;
  nb::class_<SearchOutput>(
      m, "SearchOutput",
      "The answer of a native search (search_types.hpp), read-only: tree (pre-order code), "
      "objective and lower_bound (normalized), status, n_explored, peak_memory_mb, the trace "
      "(trace_time, trace_incumbent, trace_bound), stats, and for search_numeric the split "
      "table its tree indexes (split_column, split_rank, split_missing_le; empty elsewhere).")
      .def("__init__", &init_output, nb::kw_only(), nb::arg("tree"), nb::arg("objective"),
           nb::arg("lower_bound"), nb::arg("status"), nb::arg("n_explored") = 0,
           nb::arg("peak_memory_mb") = 0.0, nb::arg("trace_time") = empty.trace_time,
           nb::arg("trace_incumbent") = empty.trace_incumbent,
           nb::arg("trace_bound") = empty.trace_bound, nb::arg("stats") = empty.stats,
           nb::arg("split_column") = empty.split_column,
           nb::arg("split_rank") = empty.split_rank,
           nb::arg("split_missing_le") = empty.split_missing_le)
      .def_ro("tree", &SearchOutput::tree)
      .def_ro("objective", &SearchOutput::objective)
      .def_ro("lower_bound", &SearchOutput::lower_bound)
      .def_ro("status", &SearchOutput::status)
      .def_ro("n_explored", &SearchOutput::n_explored)
      .def_ro("peak_memory_mb", &SearchOutput::peak_memory_mb)
      .def_ro("trace_time", &SearchOutput::trace_time)
      .def_ro("trace_incumbent", &SearchOutput::trace_incumbent)
      .def_ro("trace_bound", &SearchOutput::trace_bound)
      .def_ro("stats", &SearchOutput::stats)
      .def_ro("split_column", &SearchOutput::split_column)
      .def_ro("split_rank", &SearchOutput::split_rank)
      .def_ro("split_missing_le", &SearchOutput::split_missing_le)
      .def("replace", &replace_output, nb::kw_only(), nb::arg("tree") = nb::none(),
           nb::arg("objective") = nb::none(), nb::arg("lower_bound") = nb::none(),
           nb::arg("status") = nb::none(), nb::arg("stats") = nb::none(),
           "A copy with the given fields changed.");

  const SearchConfig defaults;
  nb::class_<SearchConfig>(
      m, "SearchConfig",
      "Typed configuration of every native search (search_types.hpp). Keyword-only; an unknown "
      "keyword or attribute raises TypeError/AttributeError, a wrong type TypeError, an unknown "
      "policy or symmetry name ValueError. No limit: 0 (time_limit, node_limit, "
      "memory_limit_mb), inf (upper_bound), -1 (max_depth). `bounds` is a dict of switches "
      "(missing = on), read and assigned as a whole.")
      .def("__init__", &init_config, nb::kw_only(), nb::arg("lam") = defaults.lam,
           nb::arg("max_depth") = defaults.max_depth, nb::arg("time_limit") = defaults.time_limit,
           nb::arg("node_limit") = defaults.node_limit,
           nb::arg("memory_limit_mb") = defaults.memory_limit_mb,
           nb::arg("upper_bound") = defaults.upper_bound,
           nb::arg("policy") = std::string(policy_name(defaults.policy)),
           nb::arg("symmetry") = std::string(symmetry_name(defaults.symmetry)),
           nb::arg("bounds") = defaults.bounds, nb::arg("initial_tree") = defaults.initial_tree,
           nb::arg("min_leaf_weight") = defaults.min_leaf_weight,
           nb::arg("root_features") = defaults.root_features)
      .def_rw("lam", &SearchConfig::lam)
      .def_rw("max_depth", &SearchConfig::max_depth)
      .def_rw("time_limit", &SearchConfig::time_limit)
      .def_rw("node_limit", &SearchConfig::node_limit)
      .def_rw("memory_limit_mb", &SearchConfig::memory_limit_mb)
      .def_rw("upper_bound", &SearchConfig::upper_bound)
      .def_prop_rw(
          "policy", [](const SearchConfig& c) { return std::string(policy_name(c.policy)); },
          [](SearchConfig& c, const std::string& name) { c.policy = parse_policy(name); })
      .def_prop_rw(
          "symmetry", [](const SearchConfig& c) { return std::string(symmetry_name(c.symmetry)); },
          [](SearchConfig& c, const std::string& name) { c.symmetry = parse_symmetry(name); })
      .def_rw("bounds", &SearchConfig::bounds)
      .def_rw("initial_tree", &SearchConfig::initial_tree)
      .def_rw("min_leaf_weight", &SearchConfig::min_leaf_weight)
      .def_rw("root_features", &SearchConfig::root_features)
      .def("validate", &SearchConfig::validate, "Raise ValueError on an out-of-range value.");

  m.def("search_dp", &run_search<search_dp>, nb::arg("problem"), nb::arg("config"),
        nb::arg("progress") = nb::none(),
        "Recursive DP over supports (search_tree(method='dp')); returns a SearchOutput.");
  m.def("search_dp_anytime", &run_search<search_dp_dives>, nb::arg("problem"),
        nb::arg("config"), nb::arg("progress") = nb::none(),
        "Anytime DP: iterative deepening and bound raising on one memo "
        "(search_tree(method='dp', strategy='anytime')).");
  m.def("search_dp_queue", &run_search<search_dp_queue>, nb::arg("problem"), nb::arg("config"),
        nb::arg("progress") = nb::none(),
        "Queue-based (GOSDT-style) DP (search_tree(method='dp', strategy='queue')).");
  m.def("search_fair_dp", &run_fair_search, nb::arg("problem"), nb::arg("coefficients").noconvert(),
        nb::arg("delta"), nb::arg("positive_code"), nb::arg("config"),
        nb::arg("progress") = nb::none(),
        "Fairness-constrained DP over Pareto fronts (search_tree(fairness=...)): coefficients "
        "float64 C-contiguous (n_samples, n_pairs), |coefficients.T @ positive| <= delta.");
  m.def("search_numeric", &run_numeric_search, nb::arg("values").noconvert(),
        nb::arg("labels").noconvert(), nb::arg("weights").noconvert(), nb::arg("n_classes"),
        nb::arg("config"), nb::arg("progress") = nb::none(),
        nb::arg("initial_splits") = std::vector<std::tuple<int, int, int>>(),
        "Exact search over every threshold of numeric columns (odtkit.core.search_numeric): "
        "values float64 C-contiguous (n, m) with NaN for missing, labels int32, weights "
        "float64; the tree's split codes index split_column / split_rank / split_missing_le.");
  m.def("search_bnb", &run_search<search_bnb>, nb::arg("problem"), nb::arg("config"),
        nb::arg("progress") = nb::none(),
        "OSDT leaf-set branch and bound (search_tree(method='bnb')).");
  m.def("search_corels", &run_search<search_corels>, nb::arg("problem"), nb::arg("config"),
        nb::arg("progress") = nb::none(),
        "CORELS over a Problem whose features are the antecedents (search_rule_list); the "
        "rule list comes back as a one-sided tree (corels.hpp).");
  m.def(
      "greedy_tree",
      [](const Problem& problem, double lam, int max_depth) {
        SearchConfig check;
        check.lam = lam;
        check.max_depth = max_depth;
        check.validate();
        check_penalty(problem, lam);
        return greedy_tree(problem, lam, max_depth, nullptr);
      },
      nb::arg("problem"), nb::arg("lam"), nb::arg("max_depth") = -1,
      "The greedy tree of docs/formulations-search-and-pruning.md §3.2 "
      "(odtkit.greedy.greedy_tree), encoded; max_depth -1: unlimited.");
  m.def("_popcount_kernel_bench", &popcount_kernel_bench, nb::arg("n_features"),
        nb::arg("n_words"), nb::arg("repeats"), nb::arg("mode"),
        "Debug: (seconds, checksum) of the split-loop popcount kernel; see "
        "benchmarks/popcount_kernel.py.");
  m.def("_cpu_has_hardware_popcount", &cpu_has_hardware_popcount,
        "Debug: whether the kernels can use a popcount instruction on this CPU.");
}

}  // namespace odtkit

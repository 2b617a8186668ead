// Thin binding of the CORELS search: odtkit.core.rules validates everything; this layer still
// rejects wrong shapes/dtypes (nanobind TypeError) and inconsistent lengths (ValueError).
#include <Python.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>

#include "bindings.hpp"
#include "corels.hpp"

namespace nb = nanobind;

namespace odtkit {
namespace {

using BoolMatrix = nb::ndarray<const bool, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using IntVector = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using FloatVector = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <typename T>
T get_or(const nb::dict& d, const char* key, T fallback) {
  if (!d.contains(key)) return fallback;
  nb::object v = d[key];
  if (v.is_none()) return fallback;
  return nb::cast<T>(v);
}

CorelsConfig parse_config(const nb::dict& d) {
  CorelsConfig c;
  c.lam = get_or<double>(d, "lam", 0.01);
  const std::string policy = get_or<std::string>(d, "policy", "curiosity");
  if (policy == "curiosity") c.policy = CorelsPolicy::curiosity;
  else if (policy == "lower_bound") c.policy = CorelsPolicy::lower_bound;
  else if (policy == "objective") c.policy = CorelsPolicy::objective;
  else if (policy == "bfs") c.policy = CorelsPolicy::bfs;
  else if (policy == "dfs") c.policy = CorelsPolicy::dfs;
  else throw nb::value_error(("unknown policy " + policy).c_str());
  const std::string sym = get_or<std::string>(d, "symmetry", "permutation_map");
  if (sym == "permutation_map") c.symmetry = CorelsSymmetry::permutation_map;
  else if (sym == "captured_map") c.symmetry = CorelsSymmetry::captured_map;
  else if (sym == "none") c.symmetry = CorelsSymmetry::none;
  else throw nb::value_error(("unknown symmetry map " + sym).c_str());
  c.support = get_or<bool>(d, "support", true);
  c.accurate_support = get_or<bool>(d, "accurate_support", true);
  c.max_support = get_or<bool>(d, "max_support", true);
  c.lookahead = get_or<bool>(d, "lookahead", true);
  c.equivalent_points = get_or<bool>(d, "equivalent_points", true);
  c.time_limit = get_or<double>(d, "time_limit", -1.0);
  c.node_limit = get_or<long long>(d, "node_limit", -1);
  const double mem_mb = get_or<double>(d, "memory_limit_mb", -1.0);
  c.memory_limit_bytes = mem_mb > 0 ? mem_mb * 1024.0 * 1024.0 : -1.0;
  return c;
}

nb::dict run_corels(BoolMatrix truth, IntVector labels, std::optional<FloatVector> weights,
                    nb::dict config) {
  const std::size_t n = truth.shape(0);
  if (labels.shape(0) != n) throw nb::value_error("labels must have one entry per sample");
  if (weights && weights->shape(0) != n)
    throw nb::value_error("weights must have one entry per sample");
  const std::int64_t* y = labels.data();
  for (std::size_t i = 0; i < n; ++i)
    if (y[i] != 0 && y[i] != 1) throw nb::value_error("labels must be 0 or 1");
  CorelsConfig cfg = parse_config(config);
  CorelsInput in;
  in.n_samples = n;
  in.n_rules = truth.shape(1);
  in.truth = truth.data();
  in.labels = y;
  in.weights = weights ? weights->data() : nullptr;

  // Polled without the GIL; it takes the GIL only to ask Python whether Ctrl-C arrived. The
  // KeyboardInterrupt is consumed: the caller gets the incumbent and status "interrupted".
  std::function<bool()> interrupted = []() {
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      PyErr_Clear();
      return true;
    }
    return false;
  };
  CorelsOutput out;
  {
    nb::gil_scoped_release release;
    out = search_corels(in, cfg, interrupted);
  }
  nb::dict r;
  r["prefix"] = out.prefix;
  r["labels"] = out.labels;
  r["default_label"] = out.default_label;
  r["objective"] = out.objective;
  r["lower_bound"] = out.lower_bound;
  r["status"] = out.status;
  r["n_explored"] = out.n_explored;
  r["peak_memory_mb"] = out.peak_memory_bytes / (1024.0 * 1024.0);
  std::vector<double> t, inc, bnd;
  for (const auto& p : out.trace) {
    t.push_back(p.time);
    inc.push_back(p.incumbent);
    bnd.push_back(p.bound);
  }
  r["trace_time"] = t;
  r["trace_incumbent"] = inc;
  r["trace_bound"] = bnd;
  nb::dict stats;
  stats["nodes_created"] = out.n_created;
  stats["max_queue"] = out.max_queue;
  stats["gc_passes"] = out.n_gc;
  stats["equivalence_classes"] = out.n_classes_eq;
  r["stats"] = stats;
  return r;
}

}  // namespace

void bind_corels(nb::module_& m) {
  m.def("search_corels", &run_corels, nb::arg("truth"), nb::arg("labels"),
        nb::arg("weights").none(), nb::arg("config"),
        "CORELS rule-list search over an (n_samples, n_rules) antecedent truth table.");
}

}  // namespace odtkit

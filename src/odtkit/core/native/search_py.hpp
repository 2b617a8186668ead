// Conversions between Python dicts and the search contract of search_types.hpp, shared by the
// bindings of every search (dp_bindings.cpp, the bnb/corels bindings):
//   SearchConfig cfg = config_from_dict(d);          // GIL held
//   SearchOutput out; { nb::gil_scoped_release r; Budget b(cfg, python_interrupt_check()); ... }
//   return output_to_dict(out);
// Unknown keys are ignored here: Python (odtkit.core.search) validates names and ranges.
#pragma once

#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <limits>

#include "search_types.hpp"

namespace odtkit {

inline SearchConfig config_from_dict(const nanobind::dict& d) {
  namespace nb = nanobind;
  SearchConfig c;
  auto has = [&](const char* k) { return d.contains(k) && !d[k].is_none(); };
  if (has("lam")) c.lam = nb::cast<double>(d["lam"]);
  if (has("max_depth")) c.max_depth = nb::cast<int>(d["max_depth"]);
  if (has("time_limit")) c.time_limit = nb::cast<double>(d["time_limit"]);
  if (has("node_limit")) c.node_limit = nb::cast<long long>(d["node_limit"]);
  if (has("memory_limit_mb")) c.memory_limit_mb = nb::cast<double>(d["memory_limit_mb"]);
  if (has("upper_bound")) c.upper_bound = nb::cast<double>(d["upper_bound"]);
  if (has("policy")) c.policy = nb::cast<std::string>(d["policy"]);
  if (has("bounds")) c.bounds = nb::cast<std::map<std::string, bool>>(d["bounds"]);
  if (has("initial_tree")) c.initial_tree = nb::cast<std::vector<int>>(d["initial_tree"]);
  if (!(c.lam >= 0.0)) throw std::invalid_argument("lam must be >= 0");
  return c;
}

inline nanobind::dict output_to_dict(const SearchOutput& o) {
  namespace nb = nanobind;
  nb::dict d;
  d["tree"] = nb::cast(o.tree);
  d["objective"] = o.objective;
  d["lower_bound"] = o.lower_bound;
  d["status"] = o.status;
  d["n_explored"] = o.n_explored;
  d["peak_memory_mb"] = o.peak_memory_mb;
  d["trace_time"] = nb::cast(o.trace_time);
  d["trace_incumbent"] = nb::cast(o.trace_incumbent);
  d["trace_bound"] = nb::cast(o.trace_bound);
  d["stats"] = nb::cast(o.stats);
  return d;
}

// Interrupt callback for Budget: briefly re-acquires the GIL and runs Python's signal handlers.
// A pending KeyboardInterrupt is consumed and reported as status "interrupted" so that the
// caller still receives the best tree found.
inline std::function<bool()> python_interrupt_check() {
  return [] {
    nanobind::gil_scoped_acquire guard;
    if (PyErr_CheckSignals() != 0) {
      PyErr_Clear();
      return true;
    }
    return false;
  };
}

}  // namespace odtkit

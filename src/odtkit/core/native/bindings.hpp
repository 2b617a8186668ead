// Each native feature registers its Python bindings through one function declared here,
// so module.cpp stays a list and every feature keeps its bindings next to its code.
#pragma once

#include <nanobind/nanobind.h>

#include <functional>
#include <memory>
#include <utility>

#include "search_types.hpp"

namespace odtkit {
void bind_bitset(nanobind::module_& m);
void bind_problem(nanobind::module_& m);
void bind_searches(nanobind::module_& m);
void bind_maxflow(nanobind::module_& m);
void bind_ensemble_cut(nanobind::module_& m);
void bind_rashomon(nanobind::module_& m);
void bind_ensemble(nanobind::module_& m);
void bind_budget(nanobind::module_& m);

struct ProgressCell;

// Budget's interrupt callback for code run with the GIL released: briefly re-acquires the GIL
// and runs Python's signal handlers; a pending KeyboardInterrupt is consumed and reported as
// true (the caller returns status "interrupted" with its best answer). With a `cell` and a
// Python callable `report`, it also calls report(incumbent, bound) with the cell's latest
// values (a live progress line); an exception from `report` is dropped, never the search.
std::function<bool()> python_interrupt_check(std::shared_ptr<ProgressCell> cell = {},
                                             nanobind::object report = {});

// work(budget) with the GIL released, under a Budget of these limits (0: none; a negative one
// is a ValueError before anything runs) that Ctrl-C interrupts; returns what work returns. The
// contract of every native function with limits that is not a search (max flow, the ensemble
// cut, the tree extraction).
template <class Work>
auto run_with_limits(double time_limit, double memory_limit_mb, Work&& work) {
  SearchConfig config;
  config.time_limit = time_limit;
  config.memory_limit_mb = memory_limit_mb;
  config.validate();
  nanobind::gil_scoped_release release;
  Budget budget(config, python_interrupt_check());
  return work(budget);
}

// The Python type of every dict of named results a binding returns: typed so that stubgen
// writes `dict[str, typing.Any]` in _native.pyi (a bare `dict` fails mypy --strict).
using NamedValues = nanobind::typed<nanobind::dict, nanobind::str, nanobind::any>;

// A dict from name/value pairs, in that order: as_dict("flow", out.flow, "cut", out.cut).
inline void fill_dict(nanobind::dict&) {}
template <class Value, class... Rest>
void fill_dict(nanobind::dict& d, const char* name, Value&& value, Rest&&... rest) {
  d[name] = nanobind::cast(std::forward<Value>(value));
  fill_dict(d, std::forward<Rest>(rest)...);
}
template <class... Pairs>
nanobind::dict as_dict(Pairs&&... pairs) {
  nanobind::dict d;
  fill_dict(d, std::forward<Pairs>(pairs)...);
  return d;
}
}  // namespace odtkit

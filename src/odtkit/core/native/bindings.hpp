// Each native feature registers its Python bindings through one function declared here,
// so module.cpp stays a list and every feature keeps its bindings next to its code.
#pragma once

#include <nanobind/nanobind.h>

#include <functional>
#include <memory>

namespace odtkit {
void bind_bitset(nanobind::module_& m);
void bind_problem(nanobind::module_& m);
void bind_searches(nanobind::module_& m);
void bind_maxflow(nanobind::module_& m);
void bind_ensemble_cut(nanobind::module_& m);
void bind_rashomon(nanobind::module_& m);
void bind_ensemble(nanobind::module_& m);

struct ProgressCell;

// Budget's interrupt callback for code run with the GIL released: briefly re-acquires the GIL
// and runs Python's signal handlers; a pending KeyboardInterrupt is consumed and reported as
// true (the caller returns status "interrupted" with its best answer). With a `cell` and a
// Python callable `report`, it also calls report(incumbent, bound) with the cell's latest
// values (a live progress line); an exception from `report` is dropped, never the search.
std::function<bool()> python_interrupt_check(std::shared_ptr<ProgressCell> cell = {},
                                             nanobind::object report = {});
}  // namespace odtkit

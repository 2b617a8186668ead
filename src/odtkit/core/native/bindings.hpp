// Each native feature registers its Python bindings through one function declared here,
// so module.cpp stays a list and every feature keeps its bindings next to its code.
#pragma once

#include <nanobind/nanobind.h>

namespace odtkit {
void bind_bitset(nanobind::module_& m);
void bind_problem(nanobind::module_& m);
void bind_searches(nanobind::module_& m);
}  // namespace odtkit

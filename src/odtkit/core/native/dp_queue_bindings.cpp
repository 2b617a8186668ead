// Binding of the queue-based DP (dp_queue.hpp); the Problem class itself is bound by
// dp_bindings.cpp. Python (odtkit.core.search) validates the config first.
#include "bindings.hpp"
#include "dp_queue.hpp"
#include "search_py.hpp"

namespace nb = nanobind;

namespace odtkit {
namespace {

nb::dict run_dp_queue(const Problem& problem, const nb::dict& config_dict) {
  const SearchConfig config = config_from_dict(config_dict);
  SearchOutput out;
  {
    nb::gil_scoped_release release;
    out = search_dp_queue(problem, config, python_interrupt_check());
  }
  return output_to_dict(out);
}

}  // namespace

void bind_dp_queue(nb::module_& m) {
  m.def("search_dp_queue", &run_dp_queue, nb::arg("problem"), nb::arg("config"),
        "Queue-based (GOSDT-style) DP search (odtkit.core.search_tree(method='dp', "
        "strategy='queue')); returns a dict like search_dp.");
}

}  // namespace odtkit

// Binding of the OSDT branch and bound: same contract as search_dp (search_py.hpp).
#include "bindings.hpp"
#include "bnb.hpp"
#include "problem.hpp"
#include "search_py.hpp"

namespace nb = nanobind;

namespace odtkit {
namespace {

nb::dict run_bnb(const Problem& problem, const nb::dict& config_dict) {
  const SearchConfig config = config_from_dict(config_dict);
  SearchOutput out;
  {
    nb::gil_scoped_release release;
    out = search_bnb(problem, config, python_interrupt_check());
  }
  return output_to_dict(out);
}

}  // namespace

void bind_bnb(nb::module_& m) {
  m.def("search_bnb", &run_bnb, nb::arg("problem"), nb::arg("config"),
        "OSDT leaf-set branch and bound (odtkit.core.search_tree(method='bnb')); returns a dict.");
}

}  // namespace odtkit

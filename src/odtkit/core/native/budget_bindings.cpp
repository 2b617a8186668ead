// Binding of the budgeted DP (budget_dp.hpp): the costs and the allowed mask are copied, the
// config validated, and the search runs with the GIL released under the same Ctrl-C check and
// progress cell as every search. Python (odtkit.core.budget) validates the arguments first
// and maps the tree back to the dataset's features.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "budget_dp.hpp"
#include "problem.hpp"
#include "search_types.hpp"

namespace nb = nanobind;

namespace odtkit {

namespace {

SearchOutput run_budget_search(const Problem& problem, std::vector<long long> split_costs,
                               std::vector<bool> allowed, long long budget,
                               double min_leaf_weight, const SearchConfig& config,
                               nb::object progress) {
  SearchConfig local = config;  // another Python thread could change `config` meanwhile
  local.validate();
  if (!std::isfinite(local.lam * problem.total_weight()))
    throw std::invalid_argument("lam is too large for these sample weights");
  if (!local.root_features.empty())
    throw std::invalid_argument("root_features is not supported here (only search_dp takes it)");
  BudgetSpec spec;
  spec.cost = std::move(split_costs);
  spec.allowed = std::move(allowed);
  spec.budget = budget;
  spec.min_leaf_weight = min_leaf_weight;
  if (!progress.is_none()) local.progress = std::make_shared<ProgressCell>();
  auto interrupt = python_interrupt_check(local.progress, std::move(progress));
  SearchOutput out;
  {
    nb::gil_scoped_release release;
    out = search_budget_dp(problem, spec, local, std::move(interrupt));
  }
  out.progress.reset();
  return out;
}

}  // namespace

void bind_budget(nb::module_& m) {
  m.def("search_budget_dp", &run_budget_search, nb::arg("problem"), nb::arg("split_costs"),
        nb::arg("allowed"), nb::arg("budget"), nb::arg("min_leaf_weight"), nb::arg("config"),
        nb::arg("progress") = nb::none(),
        "Budgeted DP (odtkit.core.budget.search_budgeted): the optimal tree of depth <= "
        "config.max_depth whose splits' summed integer cost (split_costs, one per feature of "
        "the problem) is <= budget, splitting only on allowed features, every leaf weighing "
        ">= min_leaf_weight (the problem's weight units). An empty tree: no tree is feasible.");
}

}  // namespace odtkit

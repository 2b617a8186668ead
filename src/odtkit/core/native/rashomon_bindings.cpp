// Binding of the Rashomon set (rashomon.hpp). Counts and indices cross as hexadecimal text,
// which Python turns into exact ints (odtkit.core.rashomon); the build runs with the GIL
// released and stops on Ctrl-C like every search.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "rashomon.hpp"

namespace nb = nanobind;

namespace odtkit {

namespace {

std::unique_ptr<RashomonSet> build_rashomon(const Problem& problem, const SearchConfig& config,
                                            double bound, bool majority_only,
                                            nb::object progress, const std::vector<int>& allowed,
                                            const std::vector<int>& split_costs, int budget,
                                            bool count_only) {
  SearchConfig local = config;
  local.validate();
  if (!std::isfinite(local.lam * problem.total_weight()))
    throw std::invalid_argument("lam is too large for these sample weights");
  if (!local.root_features.empty())
    throw std::invalid_argument("root_features is not supported here (only search_dp takes it)");
  if (local.min_leaf_weight > 0.0 && problem.separate_support())
    throw std::invalid_argument(
        "the Rashomon set measures a minimum leaf support in the problem's weights: it takes "
        "no separate support weights");
  RashomonRules rules;
  rules.allowed.assign(allowed.begin(), allowed.end());
  rules.split_costs = split_costs;
  rules.budget = budget;
  auto interrupt = python_interrupt_check({}, std::move(progress));
  nb::gil_scoped_release release;
  return std::make_unique<RashomonSet>(problem, local, bound, majority_only,
                                       std::move(interrupt), std::move(rules), count_only);
}

// A set prepared and certified in its own memo (RashomonSet::certify), not built yet.
std::unique_ptr<RashomonSet> certify_rashomon(const Problem& problem, const SearchConfig& config,
                                              double epsilon, bool absolute, bool majority_only,
                                              nb::object progress, bool count_only) {
  SearchConfig local = config;
  local.validate();
  if (!std::isfinite(local.lam * problem.total_weight()))
    throw std::invalid_argument("lam is too large for these sample weights");
  if (!local.root_features.empty() || local.min_leaf_weight > 0.0)
    throw std::invalid_argument("rashomon_certify takes no root_features or leaf support");
  auto interrupt = python_interrupt_check({}, std::move(progress));
  nb::gil_scoped_release release;
  auto set = std::make_unique<RashomonSet>(problem, local, majority_only, RashomonRules{},
                                           count_only);
  set->certify(problem, local, epsilon, absolute, std::move(interrupt));
  return set;
}

void build_certified(RashomonSet& set, const Problem& problem, const SearchConfig& config,
                     double bound, nb::object progress) {
  SearchConfig local = config;
  local.validate();
  if (!set.certified()) throw std::logic_error("build: the set is not certified");
  auto interrupt = python_interrupt_check({}, std::move(progress));
  nb::gil_scoped_release release;
  set.build_to(problem, local, bound, std::move(interrupt));
}

// (misclassified, leaves, value) of each key of the root, and its count in hex
std::tuple<std::vector<double>, std::vector<int>, std::vector<double>, std::vector<std::string>>
histogram(RashomonSet& set) {
  set.finish_root();  // a count-only root pairs its keys at the first ask
  std::vector<double> wrong, value;
  std::vector<int> leaves;
  std::vector<std::string> counts;
  for (const auto& key : set.keys()) {
    wrong.push_back(key.misclassified);
    leaves.push_back(key.leaves);
    value.push_back(key.value);
  }
  for (const Count& c : set.key_counts()) counts.push_back(c.to_hex());
  return {wrong, leaves, value, counts};
}

template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> to_numpy(std::vector<T>&& values) {
  auto* heap = new std::vector<T>(std::move(values));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(heap->data(), {heap->size()}, owner);
}

// Trees start .. start + n - 1 (hex start): one row each of pre-order codes padded on the
// right with `pad` (width: the longest of them), and each one's key position in the histogram.
std::tuple<nb::ndarray<nb::numpy, int, nb::ndim<2>>, nb::ndarray<nb::numpy, int, nb::ndim<1>>>
trees(const RashomonSet& set, const std::string& start, std::size_t n, int pad) {
  std::vector<int> codes, lengths, keys;
  const Count first = Count::from_hex(start);
  std::size_t width = 1;
  int* matrix = nullptr;
  {
    nb::gil_scoped_release release;
    set.trees(first, n, codes, lengths, keys);
    for (int length : lengths) width = std::max(width, static_cast<std::size_t>(length));
    matrix = new int[std::max<std::size_t>(n * width, 1)];
    std::size_t at = 0;
    for (std::size_t i = 0; i < n; ++i) {
      int* row = matrix + i * width;
      std::copy(codes.begin() + at, codes.begin() + at + lengths[i], row);
      std::fill(row + lengths[i], row + width, pad);
      at += lengths[i];
    }
  }
  nb::capsule owner(matrix, [](void* p) noexcept { delete[] static_cast<int*>(p); });
  return {nb::ndarray<nb::numpy, int, nb::ndim<2>>(matrix, {n, width}, owner),
          to_numpy(std::move(keys))};
}

}  // namespace

void bind_rashomon(nb::module_& m) {
  nb::class_<RashomonSet>(m, "RashomonSet",
                          "The native Rashomon set (rashomon.hpp): counts in hex text, trees "
                          "by index in set order. Built by rashomon_build, or by "
                          "rashomon_certify then rashomon_build_certified.")
      .def_prop_ro("complete", &RashomonSet::complete)
      .def_prop_ro("status", &RashomonSet::status)
      .def_prop_ro("n_subproblems", &RashomonSet::n_subproblems)
      .def_prop_ro("seconds", &RashomonSet::seconds)
      .def_prop_ro("peak_memory_mb", &RashomonSet::peak_memory_mb)
      .def_prop_ro("total_weight", &RashomonSet::total_weight)
      .def_prop_ro("count_only", &RashomonSet::count_only)
      .def_prop_ro("certified", &RashomonSet::certified)
      .def_prop_ro("optimal_code", &RashomonSet::optimal_code,
                   "Pre-order code of an optimal tree (a certified set; empty otherwise).")
      .def("count", [](const RashomonSet& s) { return s.count().to_hex(); })
      .def("count_without",
           [](const RashomonSet& s, int feature) { return s.count_without(feature).to_hex(); },
           nb::arg("feature"))
      .def("histogram", &histogram)
      .def(
          "tree", [](const RashomonSet& s, const std::string& index) {
            return s.tree(Count::from_hex(index));
          },
          nb::arg("index"))
      .def("trees", &trees, nb::arg("start"), nb::arg("n"), nb::arg("pad"))
      .def(
          "rank",
          [](const RashomonSet& s, const std::vector<int>& code) {
            Count index;
            return s.rank(code, index) ? index.to_hex() : std::string();
          },
          nb::arg("code"),
          "The hex index of the tree with this pre-order code in the set ('' when absent).");
  m.def("rashomon_build", &build_rashomon, nb::arg("problem"), nb::arg("config"),
        nb::arg("bound"), nb::arg("majority_only") = false, nb::arg("progress") = nb::none(),
        nb::arg("allowed") = std::vector<int>(), nb::arg("split_costs") = std::vector<int>(),
        nb::arg("budget") = -1, nb::arg("count_only") = false,
        "Build the Rashomon set {trees of depth <= config.max_depth: objective <= bound} "
        "(normalized bound; the 1e-9 tolerance is added). Limits in config stop it early "
        "(complete=False: a subset, every member genuine). Constraints: every leaf receives "
        ">= config.min_leaf_weight of the total weight; a feature whose `allowed` entry is 0 "
        "is never split on; the splits' summed `split_costs` (per feature, ints >= 0) stay "
        "<= `budget` (-1: no budget). Empty lists: no such constraint. count_only: keep the "
        "counts, not the trees (tree, trees, rank and count_without then raise).");
  m.def("rashomon_certify", &certify_rashomon, nb::arg("problem"), nb::arg("config"),
        nb::arg("epsilon"), nb::arg("absolute") = false, nb::arg("majority_only") = false,
        nb::arg("progress") = nb::none(), nb::arg("count_only") = false,
        "Prepare a Rashomon set and certify the optimum in its own memo, every sub-problem "
        "solved to what the build for (1 + epsilon) * OPT (OPT + epsilon with absolute) will "
        "ask (no side constraints). `certified` False: a limit stopped it (status says which); "
        "else `optimal_code` is an optimal tree and rashomon_build_certified builds the set.");
  m.def("rashomon_build_certified", &build_certified, nb::arg("set"), nb::arg("problem"),
        nb::arg("config"), nb::arg("bound"), nb::arg("progress") = nb::none(),
        "Build a set rashomon_certify certified, once, for `bound` (normalized; the 1e-9 "
        "tolerance is added) under the config's limits (as rashomon_build).");
  m.def(
      "_count_arithmetic",
      [](const std::string& a, const std::string& b) {
        const Count x = Count::from_hex(a), y = Count::from_hex(b);
        Count q, r;
        Count::divmod(x, y, q, r);
        Count difference = x;
        const bool ordered = !(x < y);
        if (ordered) difference -= y;
        return std::make_tuple((x + y).to_hex(), (x * y).to_hex(),
                               ordered ? difference.to_hex() : std::string("-"), q.to_hex(),
                               r.to_hex(), Count::compare(x, y));
      },
      nb::arg("a"), nb::arg("b"),
      "Debug: (a+b, a*b, a-b or '-', a//b, a%b, cmp) of two hex counts (tests of count.hpp).");
}

}  // namespace odtkit

// Binding of the preprocessed Problem shared by every search. Python (odtkit.core._problem)
// validates everything first; nanobind's ndarray constraints and the Problem constructor still
// reject wrong dtypes, shapes and labels.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <stdexcept>

#include "bindings.hpp"
#include "problem.hpp"

namespace nb = nanobind;

namespace odtkit {
namespace {

using BoolMatrix = nb::ndarray<const bool, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using IntVector = nb::ndarray<const std::int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using DoubleVector = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

Problem make_problem(BoolMatrix X, IntVector y, DoubleVector weights, int n_classes,
                     const std::string& popcount, std::optional<DoubleVector> support) {
  const std::size_t n = X.shape(0);
  if (y.shape(0) != n) throw std::invalid_argument("y must have one label per row of X");
  if (weights.shape(0) != n) throw std::invalid_argument("weights must have one entry per row");
  if (support && support->shape(0) != n)
    throw std::invalid_argument("support must have one entry per row");
  if (n_classes < 1) throw std::invalid_argument("n_classes must be >= 1");
  return Problem(X.data(), n, X.shape(1), y.data(), weights.data(), n_classes,
                 parse_popcount_mode(popcount), support ? support->data() : nullptr);
}

}  // namespace

void bind_problem(nb::module_& m) {
  nb::class_<Problem>(m, "Problem",
                      "Preprocessed search instance: identical rows collapsed into points, "
                      "per-feature bitsets over points, per-class weights, equivalent-point "
                      "minorities.")
      // noconvert: a float/int64/Fortran array is a caller bug, not something to cast silently
      .def(nb::new_(&make_problem), nb::arg("X").noconvert(), nb::arg("y").noconvert(),
           nb::arg("weights").noconvert(), nb::arg("n_classes"), nb::kw_only(),
           nb::arg("popcount") = "auto", nb::arg("support").noconvert() = nb::none(),
           "X: C-contiguous bool (n, p); y: int32 (n,) codes in [0, n_classes); weights: float64 "
           "(n,) nonnegative. popcount: 'auto' (hardware popcount when the CPU has it) or "
           "'portable' (the baseline build's software popcount; for benchmarks and tests). "
           "support: None (a leaf's support is its weight) or float64 (n,) nonnegative support "
           "weights with a positive sum, in which the dp searches measure a minimum leaf "
           "support (SearchConfig.min_leaf_weight is then a share of their total).")
      .def_prop_ro("popcount", [](const Problem& p) { return popcount_mode_name(p.popcount_mode()); },
                   "Popcount kernels of this problem's searches: 'hardware' or 'portable'.")
      .def_prop_ro("n_samples", &Problem::n_samples)
      .def_prop_ro("n_points", &Problem::n_points)
      .def_prop_ro("n_features", &Problem::n_features)
      .def_prop_ro("n_classes", &Problem::n_classes)
      .def_prop_ro("n_words", &Problem::n_words)
      .def_prop_ro("total_weight", &Problem::total_weight)
      .def_prop_ro("separate_support", &Problem::separate_support)
      .def_prop_ro("total_support", &Problem::total_support)
      .def_prop_ro("point_minority_total", &Problem::minority_total)
      .def_prop_ro("integral", &Problem::integral)
      .def_prop_ro("n_class_planes", &Problem::n_class_planes)
      .def_prop_ro("sample_point", [](const Problem& p) { return p.sample_point(); })
      .def_prop_ro("point_class_weight", [](const Problem& p) { return p.point_class_weight(); })
      .def("feature", [](const Problem& p, std::size_t j) {
             if (j >= p.n_features()) throw std::out_of_range("feature index out of range");
             return p.feature(j);
           }, nb::arg("j"), "Bitset over points of x_j = 1.");
}

}  // namespace odtkit

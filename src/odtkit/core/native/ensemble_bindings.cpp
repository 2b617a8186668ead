// Binding of the ensemble extraction (ensemble.hpp). Python (odtkit.pruning._extract) hands
// over sklearn's tree_ arrays as they are (features already mapped to global columns); the
// extraction runs with the GIL released and stops between trees on the time limit or Ctrl-C.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "ensemble.hpp"
#include "search_types.hpp"

namespace nb = nanobind;

namespace odtkit {
namespace {

using Int64Array = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Float64Array = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Int32Array = nb::ndarray<const std::int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using UInt8Array = nb::ndarray<const std::uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Float32Matrix = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

// A numpy array that owns `values` (moved to the heap, freed with the array).
template <class T, class Out = T>
nb::object to_numpy(std::vector<T>&& values, std::size_t rows, std::size_t cols = 0) {
  auto* heap = new std::vector<T>(std::move(values));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  auto* data = reinterpret_cast<Out*>(heap->data());
  if (cols == 0) return nb::cast(nb::ndarray<nb::numpy, Out, nb::ndim<1>>(data, {rows}, owner));
  return nb::cast(nb::ndarray<nb::numpy, Out, nb::ndim<2>>(data, {rows, cols}, owner));
}

// (per-tree dicts, status) and (example, node): typed so that stubgen writes the element types
// in _native.pyi (a bare `tuple` fails mypy --strict)
using ExtractedTrees = nb::typed<nb::tuple, nb::typed<nb::list, NamedValues>, nb::str>;
using Int64Vector = nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>>;
using TreeEntries = nb::typed<nb::tuple, Int64Vector, Int64Vector>;

ExtractedTrees run_extract_trees(std::vector<Int64Array> children_left,
                                 std::vector<Int64Array> children_right,
                                 std::vector<Int64Array> feature,
                                 std::vector<Float64Array> threshold, Float32Matrix X32,
                                 Int32Array y, std::int32_t n_classes, double time_limit,
                                 std::vector<UInt8Array> missing_go_to_left) {
  const std::size_t T = children_left.size();
  if (children_right.size() != T || feature.size() != T || threshold.size() != T)
    throw std::invalid_argument(
        "children_left, children_right, feature and threshold must have one array per tree");
  if (!missing_go_to_left.empty() && missing_go_to_left.size() != T)
    throw std::invalid_argument("missing_go_to_left must be empty or have one array per tree");
  std::vector<SkTree> trees(T);
  for (std::size_t t = 0; t < T; ++t) {
    const std::size_t n = children_left[t].shape(0);
    if (children_right[t].shape(0) != n || feature[t].shape(0) != n ||
        threshold[t].shape(0) != n)
      throw std::invalid_argument("tree " + std::to_string(t) +
                                  ": children_left, children_right, feature and threshold "
                                  "must have the same length");
    const std::uint8_t* nan_left = nullptr;
    if (!missing_go_to_left.empty()) {
      if (missing_go_to_left[t].shape(0) != n)
        throw std::invalid_argument("tree " + std::to_string(t) +
                                    ": missing_go_to_left must have one entry per node");
      nan_left = missing_go_to_left[t].data();
    }
    trees[t] = {children_left[t].data(), children_right[t].data(), feature[t].data(),
                threshold[t].data(), nan_left, static_cast<std::int64_t>(n)};
  }
  if (y.shape(0) != X32.shape(0))
    throw std::invalid_argument("y must have one class code per row of X32");
  const auto n_rows = static_cast<std::int64_t>(X32.shape(0));
  const auto n_features = static_cast<std::int64_t>(X32.shape(1));
  ExtractOutput out = run_with_limits(time_limit, 0.0, [&](Budget& budget) {
    return extract_trees(trees, X32.data(), n_rows, n_features, y.data(), n_classes, budget);
  });
  nb::list result;
  for (ExtractedTree& tr : out.trees) {
    const std::size_t nn = tr.left.size();
    nb::dict d;
    d["left"] = to_numpy(std::move(tr.left), nn);
    d["right"] = to_numpy(std::move(tr.right), nn);
    d["parent"] = to_numpy(std::move(tr.parent), nn);
    d["depth"] = to_numpy(std::move(tr.depth), nn);
    d["end"] = to_numpy(std::move(tr.end), nn);
    d["feature"] = to_numpy(std::move(tr.feature), nn);
    d["threshold"] = to_numpy(std::move(tr.threshold), nn);
    d["missing_left"] = to_numpy<std::uint8_t, bool>(std::move(tr.missing_left), nn);
    d["counts"] = to_numpy(std::move(tr.counts), nn, static_cast<std::size_t>(n_classes));
    d["sk_node"] = to_numpy(std::move(tr.sk_node), nn);
    d["leaf_of"] = to_numpy(std::move(tr.leaf_of), static_cast<std::size_t>(n_rows));
    d["by_leaf"] = to_numpy(std::move(tr.by_leaf), static_cast<std::size_t>(n_rows));
    d["leaf_start"] = to_numpy(std::move(tr.leaf_start), nn + 1);
    d["first_use"] = to_numpy<std::uint8_t, bool>(std::move(tr.first_use), nn);
    result.append(d);
  }
  return nb::make_tuple(result, out.status);
}

using BoolArray = nb::ndarray<const bool, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

TreeEntries run_tree_entries(Int32Array parent, BoolArray first_use, Int32Array leaf_of) {
  if (first_use.shape(0) != parent.shape(0))
    throw std::invalid_argument("parent and first_use must have one entry per node");
  std::vector<std::int64_t> example, node;
  {
    nb::gil_scoped_release release;
    tree_entries(static_cast<std::int64_t>(parent.shape(0)), parent.data(), first_use.data(),
                 static_cast<std::int64_t>(leaf_of.shape(0)), leaf_of.data(), example, node);
  }
  const std::size_t m = example.size();
  return nb::make_tuple(to_numpy(std::move(example), m), to_numpy(std::move(node), m));
}

}  // namespace

void bind_ensemble(nb::module_& m) {
  m.def("extract_trees", &run_extract_trees, nb::arg("children_left"),
        nb::arg("children_right"), nb::arg("feature"), nb::arg("threshold"),
        nb::arg("X32").noconvert(), nb::arg("y").noconvert(), nb::arg("n_classes"),
        nb::arg("time_limit") = 0.0,
        nb::arg("missing_go_to_left") = std::vector<UInt8Array>{},
        "Extract sklearn trees for the pruning (ensemble.hpp): lists (one per tree) of the "
        "tree_ arrays children_left, children_right, feature (int64, global columns) and "
        "threshold (float64); X32 float32 (N, K) and y int32 (N,) C-contiguous; "
        "missing_go_to_left (uint8, one array per tree, or none: every NaN goes right) says "
        "where a NaN goes, as sklearn routes it. Returns "
        "(list of per-tree dicts: left, right, parent, depth, end, feature, sk_node, leaf_of, "
        "by_leaf int32, threshold float64, counts float64 (n_nodes, n_classes), leaf_start "
        "int64 (n_nodes + 1,), first_use and missing_left bool; status). A stop (time_limit, "
        "interrupted, memory_limit) returns the trees done so far.");
  m.def("tree_entries", &run_tree_entries, nb::arg("parent").noconvert(),
        nb::arg("first_use").noconvert(), nb::arg("leaf_of").noconvert(),
        "The feature-use entries of one extracted tree: (example, node), int64, sorted by "
        "(node, example); node runs over the first-use ancestors of each example's leaf.");
}

}  // namespace odtkit

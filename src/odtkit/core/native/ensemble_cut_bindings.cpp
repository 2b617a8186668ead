// Binding of the native ensemble cut (ensemble_cut.hpp). Python (odtkit.pruning._cut) wraps the
// compact trees once in a CompactTrees object (lists of arrays, held alive by it); shapes are
// checked there and every index again in C++, so a bad input is a ValueError, never a crash.
// The GIL is released for the work.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "ensemble_cut.hpp"
#include "search_types.hpp"

namespace nb = nanobind;

namespace odtkit {
namespace {

template <typename T>
using Vec = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <typename T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> to_numpy(std::vector<T>&& values) {
  auto* data = new std::vector<T>(std::move(values));
  nb::capsule owner(data, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(data->data(), {data->size()}, owner);
}

// The compact trees of one EnsembleData, as the native functions read them: holding the
// arrays keeps them alive while the GIL is released.
class CompactTrees {
 public:
  CompactTrees(std::vector<Vec<std::int32_t>> left, std::vector<Vec<std::int32_t>> right,
               std::vector<Vec<std::int32_t>> feature, std::vector<Vec<std::int32_t>> end,
               std::vector<Vec<std::int64_t>> error, std::vector<Vec<std::uint8_t>> first_use,
               std::vector<Vec<std::int32_t>> by_leaf, std::vector<Vec<std::int64_t>> leaf_start,
               Vec<double> costs, Vec<std::int64_t> weight)
      : left_(std::move(left)),
        right_(std::move(right)),
        feature_(std::move(feature)),
        end_(std::move(end)),
        error_(std::move(error)),
        first_use_(std::move(first_use)),
        by_leaf_(std::move(by_leaf)),
        leaf_start_(std::move(leaf_start)),
        costs_(std::move(costs)),
        weight_(std::move(weight)) {
    const std::size_t T = left_.size();
    if (right_.size() != T || feature_.size() != T || end_.size() != T || error_.size() != T ||
        first_use_.size() != T || by_leaf_.size() != T || leaf_start_.size() != T)
      throw std::invalid_argument("every per-tree list must have one array per tree");
    ens_.n_samples = static_cast<std::int64_t>(weight_.shape(0));
    ens_.n_features = static_cast<std::int64_t>(costs_.shape(0));
    ens_.costs = costs_.data();
    ens_.weight = weight_.data();
    for (std::size_t t = 0; t < T; ++t) {
      const std::size_t n = left_[t].shape(0);
      if (right_[t].shape(0) != n || feature_[t].shape(0) != n || end_[t].shape(0) != n ||
          error_[t].shape(0) != n || first_use_[t].shape(0) != n ||
          leaf_start_[t].shape(0) != n + 1)
        throw std::invalid_argument("tree " + std::to_string(t) +
                                    ": node arrays differ in length (leaf_start has n_nodes + 1)");
      if (by_leaf_[t].shape(0) != weight_.shape(0))
        throw std::invalid_argument("tree " + std::to_string(t) +
                                    ": by_leaf must have one entry per example");
      if (n >= (std::size_t{1} << 31)) throw std::invalid_argument("a tree is too large");
      CompactTree tree;
      tree.n_nodes = static_cast<std::int32_t>(n);
      tree.left = left_[t].data();
      tree.right = right_[t].data();
      tree.feature = feature_[t].data();
      tree.end = end_[t].data();
      tree.error = error_[t].data();
      tree.first_use = first_use_[t].data();
      tree.by_leaf = by_leaf_[t].data();
      tree.leaf_start = leaf_start_[t].data();
      ens_.trees.push_back(tree);
    }
  }
  const CompactEnsemble& view() const { return ens_; }

 private:
  std::vector<Vec<std::int32_t>> left_, right_, feature_, end_;
  std::vector<Vec<std::int64_t>> error_;
  std::vector<Vec<std::uint8_t>> first_use_;
  std::vector<Vec<std::int32_t>> by_leaf_;
  std::vector<Vec<std::int64_t>> leaf_start_;
  Vec<double> costs_;
  Vec<std::int64_t> weight_;
  CompactEnsemble ens_;
};

NamedValues run_ensemble_min_cut(const CompactTrees& trees, double lam, double scale,
                                 bool reduce, bool merge_pairs, std::int32_t restrict_levels,
                                 double time_limit, double memory_limit_mb,
                                 std::int32_t slice_flow, std::int32_t nest_levels,
                                 std::int64_t nest_arcs) {
  EnsembleCutOutput out = run_with_limits(time_limit, memory_limit_mb, [&](Budget& budget) {
    return ensemble_min_cut(trees.view(), lam, scale, reduce, merge_pairs, restrict_levels,
                            budget, slice_flow, nest_levels, nest_arcs);
  });
  // rule 5's rounds as one int64 row each: level, nodes, arcs, forced by the cut, by rule 3
  std::vector<std::int64_t> rounds;
  std::vector<double> round_seconds;
  for (const RestrictRound& r : out.rounds) {
    rounds.insert(rounds.end(), {r.level, r.n_nodes, r.n_arcs, r.n_forced_cut, r.n_forced_rule});
    round_seconds.push_back(r.seconds);
  }
  return as_dict("kept", to_numpy(std::move(out.kept)), "flow", out.flow, "cut", out.cut,
                 "total_gain", out.total_gain, "lost_gain", out.lost_gain, "paid_cost",
                 out.paid_cost, "status", out.status, "algorithm", out.algorithm, "phases",
                 out.phases, "augmentations", out.augmentations, "iterations", out.iterations,
                 "n_splits", out.n_splits, "n_forced", out.n_forced, "n_dead", out.n_dead,
                 "n_excluded", out.n_excluded, "n_paid", out.n_paid, "n_nodes", out.n_nodes,
                 "n_arcs", out.n_arcs, "n_nodes_unmerged", out.n_nodes_unmerged,
                 "n_arcs_unmerged", out.n_arcs_unmerged, "reduce_seconds", out.reduce_seconds,
                 "flow_seconds", out.flow_seconds, "seconds", out.seconds, "peak_memory_mb",
                 out.peak_memory_mb, "rounds", to_numpy(std::move(rounds)), "round_seconds",
                 to_numpy(std::move(round_seconds)));
}

NamedValues run_ensemble_network(const CompactTrees& trees, bool merge_pairs) {
  EnsembleNetwork out;
  {
    nb::gil_scoped_release release;
    out = ensemble_network(trees.view(), merge_pairs);
  }
  return as_dict("split_node", to_numpy(std::move(out.split_node)), "gain",
                 to_numpy(std::move(out.gain)), "pair_cost", to_numpy(std::move(out.pair_cost)),
                 "pair_first", to_numpy(std::move(out.pair_first)), "tails",
                 to_numpy(std::move(out.tails)), "heads", to_numpy(std::move(out.heads)),
                 "n_dead", out.n_dead, "n_nodes_unmerged", out.n_nodes_unmerged,
                 "n_arcs_unmerged", out.n_arcs_unmerged);
}

NamedValues run_ensemble_reduced_network(const CompactTrees& trees, double lam, double scale,
                                         bool merge_pairs, std::int32_t restrict_levels) {
  ReducedNetwork out;
  {
    nb::gil_scoped_release release;
    out = ensemble_reduced_network(trees.view(), lam, scale, merge_pairs, restrict_levels);
  }
  return as_dict("source_cap", to_numpy(std::move(out.source_cap)), "sink_cap",
                 to_numpy(std::move(out.sink_cap)), "tails", to_numpy(std::move(out.tails)),
                 "heads", to_numpy(std::move(out.heads)), "constant", out.constant, "n_splits",
                 out.n_splits, "n_forced", out.n_forced, "n_dead", out.n_dead);
}

}  // namespace

void bind_ensemble_cut(nb::module_& m) {
  nb::class_<CompactTrees>(m, "CompactTrees",
                           "The compact trees of an EnsembleData for the native cut functions: "
                           "per-tree lists of int32 left/right/feature/end, int64 error, uint8 "
                           "first_use, int32 by_leaf (N,), int64 leaf_start (n_nodes + 1,); "
                           "float64 costs (K,), int64 weight (N,) (examples each one stands "
                           "for). Shapes are checked here, indices by each function.")
      .def(nb::init<std::vector<Vec<std::int32_t>>, std::vector<Vec<std::int32_t>>,
                    std::vector<Vec<std::int32_t>>, std::vector<Vec<std::int32_t>>,
                    std::vector<Vec<std::int64_t>>, std::vector<Vec<std::uint8_t>>,
                    std::vector<Vec<std::int32_t>>, std::vector<Vec<std::int64_t>>, Vec<double>,
                    Vec<std::int64_t>>(),
           nb::arg("left"), nb::arg("right"), nb::arg("feature"), nb::arg("end"),
           nb::arg("error"), nb::arg("first_use"), nb::arg("by_leaf"), nb::arg("leaf_start"),
           nb::arg("costs").noconvert(), nb::arg("weight").noconvert());
  m.def("ensemble_min_cut", &run_ensemble_min_cut, nb::arg("trees"), nb::arg("lam"),
        nb::arg("scale"), nb::arg("reduce") = true, nb::arg("merge_pairs") = true,
        nb::arg("restrict_levels") = 0, nb::arg("time_limit") = 0.0,
        nb::arg("memory_limit_mb") = 0.0, nb::arg("slice_flow") = -1,
        nb::arg("nest_levels") = 2, nb::arg("nest_arcs") = std::int64_t{20} << 20,
        "IP3 as one minimum cut of CompactTrees (ensemble_cut.hpp). reduce: force and drop "
        "splits first; merge_pairs: pairs with the same predecessors as one node; "
        "restrict_levels: rounds of rule 5 (restricted problems for depth limits 0 .. "
        "restrict_levels - 1; all exact). Returns a dict: kept (uint8 per global node), flow, "
        "cut (integer, scaled), total_gain, lost_gain, paid_cost, status, algorithm (the "
        "final max-flow's, '' if none ran), the network's n_nodes and n_arcs (and "
        "before merging), n_forced, n_dead, n_excluded, n_paid, iterations, phases, "
        "augmentations, times and peak_memory_mb; rounds (int64, one row of level, nodes, "
        "arcs, forced by the cut, forced by rule 3 after it per round of rule 5) and "
        "round_seconds. slice_flow: the final max-flow on arcs read from the tree slices "
        "(push_relabel_slices): -1 where it is the one to use (deep trees), 0 never, 1 always. "
        "nest_levels, nest_arcs: rule 7 (the cut at lam / 3 first, the splits outside its "
        "answer left out) where nest_arcs slice entries or more are left, that many levels "
        "deep (0: never).");
  m.def("ensemble_reduced_network", &run_ensemble_reduced_network, nb::arg("trees"),
        nb::arg("lam"), nb::arg("scale"), nb::arg("merge_pairs") = true,
        nb::arg("restrict_levels") = 0,
        "The network ensemble_min_cut gives its max-flow at lam (every exact reduction): "
        "int64 source_cap, sink_cap, int32 tails, heads, and constant (the capacity the forced "
        "pairs add to every cut), n_splits (split nodes come first), n_forced, n_dead.");
  m.def("ensemble_network", &run_ensemble_network, nb::arg("trees"),
        nb::arg("merge_pairs") = true,
        "The lambda-independent cut network of CompactTrees (ensemble_cut.hpp), dead splits "
        "dropped and identical pairs merged: split_node (global ids), gain, pair_cost, "
        "pair_first, int32 tails/heads (split nodes first, then pair nodes), n_dead and the "
        "sizes before merging.");
}

}  // namespace odtkit

// Binding of the closure min cut (maxflow.hpp). Python (odtkit.pruning._cut) builds and checks
// the int64 arrays; the arrays are read with the GIL released, and the network re-checks every
// index it writes through, so a bad or concurrently changed input is an error, not a crash.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <stdexcept>

#include "bindings.hpp"
#include "maxflow.hpp"
#include "search_types.hpp"

namespace nb = nanobind;

namespace odtkit {
namespace {

using Int64Array = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Int32Array = nb::ndarray<const std::int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

NamedValues run_closure_min_cut(Int64Array source_cap, Int64Array sink_cap, Int32Array tails,
                                Int32Array heads, double time_limit, double memory_limit_mb,
                                const std::string& algorithm, bool greedy) {
  MaxFlowAlgorithm which;
  if (algorithm == "auto")
    which = MaxFlowAlgorithm::kAuto;
  else if (algorithm == "dinic")
    which = MaxFlowAlgorithm::kDinic;
  else if (algorithm == "push_relabel")
    which = MaxFlowAlgorithm::kPushRelabel;
  else if (algorithm == "boykov_kolmogorov")
    which = MaxFlowAlgorithm::kBoykovKolmogorov;
  else
    throw std::invalid_argument(
        "algorithm must be 'auto', 'dinic', 'push_relabel' or 'boykov_kolmogorov', got '" +
                                algorithm + "'");
  if (source_cap.shape(0) != sink_cap.shape(0))
    throw std::invalid_argument("source_cap and sink_cap must have one entry per node");
  if (tails.shape(0) != heads.shape(0))
    throw std::invalid_argument("tails and heads must have one entry per arc");
  const auto n = static_cast<std::int64_t>(source_cap.shape(0));
  const auto m = static_cast<std::int64_t>(tails.shape(0));
  ClosureCutOutput out = run_with_limits(time_limit, memory_limit_mb, [&](Budget& budget) {
    return closure_min_cut(n, source_cap.data(), sink_cap.data(), m, tails.data(), heads.data(),
                           budget, which, greedy);
  });
  auto* side = new std::uint8_t[out.source_side.size() ? out.source_side.size() : 1];
  std::copy(out.source_side.begin(), out.source_side.end(), side);
  nb::capsule owner(side, [](void* p) noexcept { delete[] static_cast<std::uint8_t*>(p); });
  return as_dict("source_side",
                 nb::ndarray<nb::numpy, std::uint8_t, nb::ndim<1>>(side, {out.source_side.size()},
                                                                   owner),
                 "flow", out.flow, "cut", out.cut, "status", out.status, "algorithm",
                 out.algorithm, "phases", out.phases, "augmentations", out.augmentations,
                 "peak_memory_mb", out.peak_memory_mb, "seconds", out.seconds);
}

}  // namespace

void bind_maxflow(nb::module_& m) {
  m.def("closure_min_cut", &run_closure_min_cut, nb::arg("source_cap").noconvert(),
        nb::arg("sink_cap").noconvert(), nb::arg("tails").noconvert(),
        nb::arg("heads").noconvert(), nb::arg("time_limit") = 0.0,
        nb::arg("memory_limit_mb") = 0.0, nb::arg("algorithm") = "auto",
        nb::arg("greedy") = true,
        "Minimum s-t cut of a closure network (maxflow.hpp): int64 C-contiguous source_cap, "
        "sink_cap (n,), int32 tails, heads (m,) of the infinite inner arcs. Returns a dict: "
        "source_side (uint8, the minimal source side, the same whatever the algorithm), flow, "
        "cut (equal when status is 'optimal'), status, algorithm (the one that ran: 'auto' "
        "picks by network size), phases, augmentations, peak_memory_mb, seconds. algorithm: "
        "'auto', 'dinic', 'push_relabel' or 'boykov_kolmogorov'. greedy: start from the greedy "
        "flow (maxflow.hpp; the answer is the same, False for measuring).");
}

}  // namespace odtkit

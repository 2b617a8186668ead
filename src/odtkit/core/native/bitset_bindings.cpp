// Thin bindings: Python has validated shapes and dtypes; these still reject anything else
// with a TypeError from nanobind instead of reading foreign memory.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "bitset.hpp"

namespace nb = nanobind;

namespace odtkit {
namespace {

using BoolVector = nb::ndarray<const bool, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

Bitset from_bool_array(BoolVector values) {
  Bitset out(values.shape(0));
  const bool* v = values.data();
  for (std::size_t i = 0; i < values.shape(0); ++i)
    if (v[i]) out.set(i);
  return out;
}

nb::ndarray<nb::numpy, bool, nb::ndim<1>> to_bool_array(const Bitset& bits) {
  auto* buffer = new bool[bits.size()];
  for (std::size_t i = 0; i < bits.size(); ++i) buffer[i] = bits.get(i);
  nb::capsule owner(buffer, [](void* p) noexcept { delete[] static_cast<bool*>(p); });
  return nb::ndarray<nb::numpy, bool, nb::ndim<1>>(buffer, {bits.size()}, owner);
}

}  // namespace

void bind_bitset(nb::module_& m) {
  nb::class_<Bitset>(m, "Bitset",
                     "Fixed-length bitset stored as 64-bit words (zero tail), built from a 1-D "
                     "numpy bool array.")
      .def_static("from_numpy", &from_bool_array, nb::arg("values"))
      .def(nb::init<std::size_t, bool>(), nb::arg("n_bits"), nb::arg("value") = false)
      .def("to_numpy", &to_bool_array)
      .def("count", &Bitset::count, "Number of set bits (popcount over the words).")
      .def("count_and", &Bitset::count_and, nb::arg("other"),
           "popcount(self & other) without building the intersection.")
      .def("any", &Bitset::any)
      .def("and_not", &Bitset::and_not, nb::arg("other"), "self & ~other")
      .def("__and__", &Bitset::operator&)
      .def("__or__", &Bitset::operator|)
      .def("__xor__", &Bitset::operator^)
      .def("__invert__", [](const Bitset& b) { return ~b; })
      // an operator: a comparison with another type is NotImplemented (False), as object's
      // __eq__, which the stub's signature must match
      .def("__eq__", [](const Bitset& a, const Bitset& b) { return a == b; }, nb::is_operator(),
           nb::sig("def __eq__(self, other: object, /) -> bool"))
      .def("__len__", &Bitset::size)
      .def_prop_ro("n_words", &Bitset::n_words)
      .def("words", [](const Bitset& b) { return std::vector<std::uint64_t>(b.words()); })
      .def("__repr__", [](const Bitset& b) {
        return "Bitset(size=" + std::to_string(b.size()) + ", count=" + std::to_string(b.count()) +
               ")";
      });
}

}  // namespace odtkit

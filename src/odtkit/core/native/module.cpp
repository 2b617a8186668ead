#include "bindings.hpp"

NB_MODULE(_native, m) {
  m.doc() = "odtkit native core: 64-bit-word bitsets and the optimal-tree searches.";
  odtkit::bind_bitset(m);
  odtkit::bind_dp(m);
  odtkit::bind_dp_queue(m);
  odtkit::bind_corels(m);
  odtkit::bind_bnb(m);
}

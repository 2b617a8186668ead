#include "bindings.hpp"

NB_MODULE(_native, m) {
  m.doc() = "odtkit native core: 64-bit-word bitsets and the optimal-tree searches.";
  odtkit::bind_bitset(m);
  odtkit::bind_problem(m);
  odtkit::bind_searches(m);
  odtkit::bind_maxflow(m);
  odtkit::bind_ensemble_cut(m);
  odtkit::bind_rashomon(m);
  odtkit::bind_ensemble(m);
  odtkit::bind_budget(m);
}

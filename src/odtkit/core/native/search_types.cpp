#include "search_types.hpp"

namespace odtkit {

Policy parse_policy(const std::string& name) {
  if (name == "curiosity") return Policy::curiosity;
  if (name == "lower_bound") return Policy::lower_bound;
  if (name == "objective") return Policy::objective;
  if (name == "bfs") return Policy::bfs;
  if (name == "dfs") return Policy::dfs;
  throw std::invalid_argument("unknown policy '" + name +
                              "' (curiosity, lower_bound, objective, bfs, dfs)");
}

const char* policy_name(Policy policy) {
  switch (policy) {
    case Policy::curiosity: return "curiosity";
    case Policy::lower_bound: return "lower_bound";
    case Policy::objective: return "objective";
    case Policy::bfs: return "bfs";
    case Policy::dfs: return "dfs";
  }
  return "curiosity";
}

Symmetry parse_symmetry(const std::string& name) {
  if (name == "permutation_map") return Symmetry::permutation_map;
  if (name == "captured_map") return Symmetry::captured_map;
  if (name == "none") return Symmetry::none;
  throw std::invalid_argument("unknown symmetry map '" + name +
                              "' (permutation_map, captured_map, none)");
}

const char* symmetry_name(Symmetry symmetry) {
  switch (symmetry) {
    case Symmetry::permutation_map: return "permutation_map";
    case Symmetry::captured_map: return "captured_map";
    case Symmetry::none: return "none";
  }
  return "permutation_map";
}

const char* status_name(SearchStatus status) {
  switch (status) {
    case SearchStatus::optimal: return "optimal";
    case SearchStatus::time_limit: return "time_limit";
    case SearchStatus::node_limit: return "node_limit";
    case SearchStatus::memory_limit: return "memory_limit";
    case SearchStatus::interrupted: return "interrupted";
  }
  return "optimal";
}

}  // namespace odtkit

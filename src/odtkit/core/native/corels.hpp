// CORELS: certifiably optimal rule lists over pre-mined antecedents (search spec §5).
//
// The objective is R(d) = mistakes/N + lambda * (number of rules); the default rule is free and
// every label is the empirical majority of the points it captures. The search is a best-first
// branch and bound over a prefix trie with the bounds of §5.3, a symmetry-aware map (§5.4) and
// garbage collection of the trie whenever the incumbent improves. Implemented from the spec's
// mathematics only (the reference code is GPL).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace odtkit {

enum class CorelsPolicy { curiosity, lower_bound, objective, bfs, dfs };
enum class CorelsSymmetry { permutation_map, captured_map, none };

struct CorelsConfig {
  double lam = 0.01;
  CorelsPolicy policy = CorelsPolicy::curiosity;
  CorelsSymmetry symmetry = CorelsSymmetry::permutation_map;
  // Bound switches (§5.3); turning any of them off never changes the optimum, only the work.
  bool support = true;            // Thm 10: a rule must capture >= lambda in context
  bool accurate_support = true;   // Thm 11: a rule must classify >= lambda correctly in context
  bool max_support = true;        // Thm 21: the default rule must keep >= lambda
  bool lookahead = true;          // Lemma 2: queue a prefix only if b + b0 + lambda < R^c
  bool equivalent_points = true;  // Thm 20: b0 = minority mass of the uncaptured classes
  double time_limit = -1.0;       // seconds, <= 0: none
  long long node_limit = -1;      // expansions, <= 0: none
  double memory_limit_bytes = -1.0;
  double upper_bound = -1.0;  // externally known objective (normalised); < 0: none
};

// Rows are samples, columns antecedents (row-major, n_samples x n_rules).
struct CorelsInput {
  std::size_t n_samples = 0;
  std::size_t n_rules = 0;
  const bool* truth = nullptr;       // n_samples * n_rules
  const std::int64_t* labels = nullptr;  // 0/1
  const double* weights = nullptr;   // may be null (unit weights)
};

struct TracePoint {
  double time;
  double incumbent;
  double bound;
};

struct CorelsOutput {
  std::vector<int> prefix;        // antecedent ids in list order
  std::vector<int> labels;        // label of each rule
  int default_label = 0;
  double objective = 0.0;         // normalised
  double lower_bound = 0.0;       // normalised, valid at any stop
  std::string status = "optimal";
  long long n_explored = 0;       // prefixes expanded
  long long n_created = 0;        // trie nodes created
  long long max_queue = 0;
  long long n_gc = 0;             // garbage-collection passes
  double peak_memory_bytes = 0.0;
  std::size_t n_classes_eq = 0;   // equivalence classes (distinct antecedent rows)
  std::vector<TracePoint> trace;
};

// `interrupted` is polled every few milliseconds (it may take the GIL); returning true stops the
// search with status "interrupted".
CorelsOutput search_corels(const CorelsInput& input, const CorelsConfig& config,
                           const std::function<bool()>& interrupted);

}  // namespace odtkit

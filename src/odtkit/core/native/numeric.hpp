// Exact search over every threshold of numeric columns (search_numeric, issue 23):
// minimise misclassified weight / total weight + lam * leaves over trees of depth <= max_depth
// whose splits are (column, threshold between two consecutive distinct present values, side of
// the missing values), without binarizing. See numeric.cpp for the algorithm and
// docs/formulations-search-and-pruning.md §3.11 for the bounds.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "search_types.hpp"

namespace odtkit {

// A split of numeric column `column`. With v_0 < ... < v_{D-1} the distinct present values of
// the column over all rows: rank k <= D-2 sends x <= v_k to the "le" side and x > v_k to the
// "gt" side, a missing value to le iff missing_le; rank D-1 (columns with a missing cell only)
// sends every present value to le and the missing ones to gt.
struct NumericSplit {
  int column = 0;
  int rank = 0;
  int missing_le = 0;
};

// The table, checked by the binding: values row-major (n_rows x n_columns), NaN = missing, no
// infinity; labels in [0, n_classes); weights > 0 and finite.
struct NumericTable {
  const double* values = nullptr;
  const int* labels = nullptr;
  const double* weights = nullptr;
  std::size_t n_rows = 0, n_columns = 0;
  int n_classes = 1;
};

// `initial_splits` is the split table of config.initial_tree (codes j >= 0 index it; a split's
// first child is its le side). The answer's tree uses the same encoding over `splits_out`.
// Throws std::invalid_argument for a malformed start.
SearchOutput search_numeric(const NumericTable& table, const SearchConfig& config,
                            const std::vector<NumericSplit>& initial_splits,
                            std::vector<NumericSplit>& splits_out,
                            std::function<bool()> interrupted = {});

}  // namespace odtkit

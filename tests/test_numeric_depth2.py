"""Issue 41: the exact numeric search's depth-2 evaluation against the brute-force oracle.

At depth 2 (and for the depth-2 children of a depth-3 search) ``search_numeric`` scores a root
threshold by the best stumps of its two sides. With two classes the native code takes them
from the extremes of each column's prefix difference (class 0 minus class 1 weight), both
sides in one pass, summing whole weights as integers and other weights as doubles, and then
recovers the incumbent's splits from the one column that gave each side its cost
(docs/formulations-search-and-pruning.md §3.10). These tables are drawn to reach every branch
of that: many ties (a change of rank in the node is not one of each side's), missing cells on
either side of a split, unit, whole, fractional and huge whole weights (whose total leaves
the integer sums: the doubles' path), large whole weights whose total stays below 2**31 (the
integer sums run in 32 bits: every partial sum of such a table fits, none of a narrower
type), 2 and 3 classes (3 classes take the general sweep, the
reference), lam 0 and > 0, depth 2 and 3. ``odtkit.testing.brute_force_threshold_tree``
enumerates every tree of threshold splits and shares no code with the search.
"""

from __future__ import annotations

import numpy as np
import pytest
from _oracle_settings import oracle_settings
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from odtkit import Dataset, metrics
from odtkit.core import search_numeric
from odtkit.testing import brute_force_threshold_tree

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TOL = 1e-9
PROPERTY = oracle_settings(250)


@st.composite
def tables(draw: st.DrawFn, max_rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Rows on a few distinct values per column (ties), NaN cells, labels, weights."""
    n = draw(st.integers(3, max_rows))
    m = draw(st.integers(1, 3))
    n_classes = draw(st.sampled_from([2, 2, 3]))
    columns = []
    for _ in range(m):
        pool = draw(st.lists(st.integers(-3, 3), min_size=1, max_size=5, unique=True))
        values = np.array(draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)), float)
        if draw(st.booleans()):
            absent = draw(st.lists(st.booleans(), min_size=n, max_size=n))
            values[np.array(absent)] = np.nan
        columns.append(values)
    X = np.column_stack(columns)
    y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
    kind = draw(st.sampled_from(["unit", "whole", "fraction", "huge", "large"]))
    if kind == "unit":
        w = None
    elif kind == "whole":
        w = np.array(draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)), float)
    elif kind == "fraction":
        w = np.array(
            draw(st.lists(st.sampled_from([0.25, 0.7, 1.0, 1.5, 2.3]), min_size=n, max_size=n))
        )
    elif kind == "large":  # whole, total up to 48 * 2**25 < 2**31: 32-bit integer sums
        w = np.array(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)), float) * 2.0**25
    else:  # whole, but a total above 2**31: the sweep sums doubles
        w = np.array(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)), float) * 2.0**30
    return X, y, w


def _has_a_split(X: np.ndarray) -> bool:
    absent = np.isnan(X)
    return any(
        np.unique(X[~absent[:, c], c]).size > 1 or 0 < absent[:, c].sum() < len(X)
        for c in range(X.shape[1])
    )


def _check(X: np.ndarray, y: np.ndarray, w: np.ndarray | None, lam: float, depth: int) -> None:
    _, optimum = brute_force_threshold_tree(X, y, lam=lam, max_depth=depth, sample_weight=w)
    result = search_numeric(X, y, lam=lam, max_depth=depth, sample_weight=w)
    context = {"lam": lam, "depth": depth, "exact": result.objective, "oracle": optimum}
    assert result.status == "optimal", context
    assert result.objective == pytest.approx(optimum, abs=TOL), context
    assert result.lower_bound == pytest.approx(optimum, abs=TOL), context
    # the tree returned (its splits recovered from one column per side) scores its objective
    data = Dataset.from_arrays(result.binarizer.transform(X), y, sample_weight=w)
    assert metrics.objective(result.model, data, lam=lam) == pytest.approx(optimum, abs=TOL)


@PROPERTY
@given(table=tables(max_rows=16), lam=st.sampled_from([0.0, 0.0, 0.02, 0.1]))
def test_depth_two_matches_the_oracle(table, lam):
    X, y, w = table
    assume(_has_a_split(X))
    _check(X, y, w, lam, 2)


@settings(PROPERTY, max_examples=150)
@given(table=tables(max_rows=12), lam=st.sampled_from([0.0, 0.02, 0.1]))
def test_depth_three_matches_the_oracle(table, lam):
    """Depth 3: the depth-2 children of every evaluated threshold go through the same sweep."""
    X, y, w = table
    assume(_has_a_split(X))
    _check(X, y, w, lam, 3)


def test_depth_two_on_a_longer_table_with_ties_and_missing_cells():
    """40 rows: runs of one class between ties, where the sweep skips no change of rank."""
    rng = np.random.default_rng(41)
    X = rng.integers(0, 6, size=(40, 3)).astype(float)
    X[rng.random((40, 3)) < 0.15] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) + rng.integers(0, 3, 40) > 5).astype(int)
    for w in (None, rng.integers(1, 4, 40).astype(float), rng.uniform(0.1, 2.0, 40)):
        for lam in (0.0, 0.01):
            _check(X, y, w, lam, 2)

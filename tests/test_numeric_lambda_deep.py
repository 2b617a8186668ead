"""The exact numeric search at depth 3-4 with lam > 0 against the brute force (issue 41).

At depth >= 3 the search's children are sub-problems searched under a budget (the incumbent
less the sibling's bound); with lam > 0 their bounds mix the leaf-count bounds, the stump
caps and the similarity bounds between neighbouring thresholds, and a search that finds no
tree under its budget reports the smallest bound it set aside (docs §3.10), which its parent's
neighbouring thresholds then inherit. These tables are larger than the oracle suite's (up to
18 rows, 2-4 columns) so that the budgets bind and several thresholds share a family: the
answer must be the brute force's optimum (``odtkit.testing.brute_force_threshold_tree``), and
a search stopped by a node limit must keep its bound at or below it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _oracle_settings import oracle_settings
from hypothesis import assume, given
from hypothesis import strategies as st

from odtkit import Dataset, metrics
from odtkit.core import search_numeric
from odtkit.testing import brute_force_threshold_tree, random_numeric_table

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TOL = 1e-9
DEEP = oracle_settings(40)


def _table(seed: int, n_classes: int, weights: str | None, missing: float):
    """A table with ties, NaN cells, duplicate rows and weights, plus a near-continuous
    column (many thresholds in one family, so that intervals of thresholds get pruned)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 19))
    X, y, w = random_numeric_table(
        seed,
        n_rows=n,
        n_columns=int(rng.integers(2, 4)),
        n_classes=n_classes,
        missing=missing,
        weights=weights,
    )
    column = np.round(rng.normal(size=(n, 1)), 1)
    if missing > 0:
        column[rng.random(n) < missing / 2] = np.nan
    return np.hstack([column, X]), y, w


def _rescored(result, X, y, w, lam: float) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = Dataset.from_arrays(result.binarizer.transform(X), y, sample_weight=w)
    return metrics.objective(result.model, data, lam=lam)


@DEEP
@given(
    seed=st.integers(0, 2**32 - 1),
    n_classes=st.sampled_from([2, 3]),
    weights=st.sampled_from([None, "int", "float"]),
    lam=st.sampled_from([0.005, 0.02, 0.05]),
    depth=st.integers(3, 4),
    missing=st.sampled_from([0.0, 0.2]),
    nodes=st.one_of(st.none(), st.none(), st.integers(5, 200)),
)
def test_deep_search_with_lambda_matches_the_brute_force(
    seed, n_classes, weights, lam, depth, missing, nodes
):
    X, y, w = _table(seed, n_classes, weights, missing)
    assume(len(np.unique(y)) > 1)
    _, optimum = brute_force_threshold_tree(X, y, lam=lam, max_depth=depth, sample_weight=w)
    limit = {} if nodes is None else {"node_limit": nodes}
    result = search_numeric(X, y, lam=lam, max_depth=depth, sample_weight=w, **limit)
    context = {
        "status": result.status,
        "objective": result.objective,
        "bound": result.lower_bound,
        "oracle": optimum,
    }
    assert _rescored(result, X, y, w, lam) == pytest.approx(result.objective, abs=TOL), context
    assert result.lower_bound <= optimum + TOL, context
    assert not (result.trace["bound"] > optimum + TOL).any(), context
    assert optimum <= result.objective + TOL, context
    if nodes is None:
        assert result.status == "optimal", context
    if result.status == "optimal":
        assert result.objective == pytest.approx(optimum, abs=TOL), context

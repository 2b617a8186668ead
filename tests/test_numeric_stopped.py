"""Issue 41, item 3: a stopped exact search keeps the guarantee docs §3.10 ("Driver") states.

Before anything can stop it, ``search_numeric`` takes the greedy tree and the depth-1 optimum;
then it certifies the shallower optima (depth 2, ..., with lam > 0 up to max_depth - 1) before
the search at the requested depth. So a search stopped by any limit returns a tree never worse
than the greedy tree nor than the optimum of any depth up to ``stats["certified_depth"]``, and a
bound never below ``min(OPT_1, eq + 3 lam)`` (every tree is a leaf, a stump or has three leaves
or more), nor above the true optimum. The checks compare with unlimited runs and the brute
force ``odtkit.testing.brute_force_threshold_tree``; no test reads a clock.
"""

from __future__ import annotations

import numpy as np
import pytest
from _oracle_settings import oracle_settings
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer

from odtkit import Dataset, greedy_tree, metrics
from odtkit.core import search_numeric
from odtkit.datasets import Binarizer
from odtkit.testing import brute_force_threshold_tree, random_numeric_table

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TOL = 1e-9


def _greedy_objective(X: np.ndarray, y: np.ndarray, w: object, lam: float, depth: int) -> float:
    """The greedy tree's objective on the every-midpoint binarization (the native greedy tree
    is the same CART-then-prune tree over the same splits)."""
    data = Dataset.from_arrays(Binarizer().fit_transform(X), y, sample_weight=w)
    return metrics.objective(greedy_tree(data, lam=lam, max_depth=depth), data, lam=lam)


def _rescored(result: object, X: np.ndarray, y: np.ndarray, w: object, lam: float) -> float:
    data = Dataset.from_arrays(result.binarizer.transform(X), y, sample_weight=w)
    return metrics.objective(result.model, data, lam=lam)


@pytest.fixture(scope="module")
def cancer_optima() -> tuple[np.ndarray, np.ndarray, dict[int, float]]:
    """breast_cancer and its optima at lam 0.01, depths 1-3 (unlimited runs)."""
    X, y = load_breast_cancer(return_X_y=True)
    optima = {}
    for depth in (1, 2, 3):
        result = search_numeric(X, y, lam=0.01, max_depth=depth)
        assert result.status == "optimal"
        optima[depth] = result.objective
    return X, y, optima


@pytest.mark.parametrize(
    "limit",
    [{"time_limit": 1e-6}, {"node_limit": 1}, {"node_limit": 100}, {"node_limit": 3000}],
)
def test_stopped_search_is_no_worse_than_greedy_nor_the_certified_shallower_optima(
    cancer_optima, limit
):
    """The issue's case: breast_cancer, lam 0.01, depth 3, stopped at once or later. It
    returned the single leaf (0.382583, bound 0) when the limit had passed before the search
    began; now the greedy tree and the depth-1 optimum are taken first."""
    X, y, optima = cancer_optima
    lam, depth = 0.01, 3
    result = search_numeric(X, y, lam=lam, max_depth=depth, **limit)
    context = {"limit": limit, "objective": result.objective, "bound": result.lower_bound}
    assert result.status == next(iter(limit)), context
    certified = int(result.stats["certified_depth"])
    context["certified_depth"] = certified
    assert 1 <= certified < depth, context
    assert result.objective <= _greedy_objective(X, y, None, lam, depth) + TOL, context
    for k in range(1, certified + 1):
        assert result.objective <= optima[k] + TOL, context
    assert _rescored(result, X, y, None, lam) == pytest.approx(result.objective, abs=TOL)
    # a valid bound, and at least the root's: min(OPT_1, eq + 3 lam) >= min(OPT_1, 3 lam)
    assert result.lower_bound <= optima[depth] + TOL, context
    assert result.lower_bound >= min(optima[1], 3 * lam) - TOL, context
    if certified >= 2:  # trees of at most 3 leaves have depth <= 2
        assert result.lower_bound >= min(optima[2], 4 * lam) - TOL, context
    assert not (result.trace["bound"] > optima[depth] + TOL).any(), context


STOPPED = oracle_settings(60)


@STOPPED
@given(
    seed=st.integers(0, 2**32 - 1),
    n_classes=st.sampled_from([2, 3]),
    weights=st.sampled_from([None, "int", "float"]),
    lam=st.sampled_from([0.0, 0.01, 0.05, 0.1]),
    depth=st.integers(2, 3),
    missing=st.sampled_from([0.0, 0.25]),
    nodes=st.one_of(st.integers(1, 40), st.none()),
)
def test_stopped_or_not_the_answer_and_bound_hold_against_the_oracle(
    seed, n_classes, weights, lam, depth, missing, nodes
):
    """Random tables with ties, duplicate rows, NaN cells, weights and 3 classes, stopped by a
    node limit or not: the bound (with the leaf-count bounds of lam > 0) never exceeds the
    brute-force optimum, and the tree is never worse than the certified shallower optima."""
    X, y, w = random_numeric_table(seed, n_classes=n_classes, missing=missing, weights=weights)
    X[:, 0] = np.round(np.random.default_rng(seed).normal(size=len(X)), 1)
    assume(len(np.unique(y)) > 1)
    optima = {
        k: brute_force_threshold_tree(X, y, lam=lam, max_depth=k, sample_weight=w)[1]
        for k in range(1, depth + 1)
    }
    limit = {} if nodes is None else {"node_limit": nodes}
    result = search_numeric(X, y, lam=lam, max_depth=depth, sample_weight=w, **limit)
    context = {"objective": result.objective, "bound": result.lower_bound, "optima": optima}
    context["status"] = result.status
    assert _rescored(result, X, y, w, lam) == pytest.approx(result.objective, abs=TOL), context
    assert result.lower_bound <= optima[depth] + TOL, context
    assert optima[depth] <= result.objective + TOL, context
    assert not (result.trace["bound"] > optima[depth] + TOL).any(), context
    if result.status == "optimal":
        assert result.objective == pytest.approx(optima[depth], abs=TOL), context
        return
    assert result.status == "node_limit", context
    certified = int(result.stats["certified_depth"])
    assert certified >= 1, context
    for k in range(1, certified + 1):
        assert result.objective <= optima[k] + TOL, {**context, "certified": certified}
    assert result.objective <= _greedy_objective(X, y, w, lam, depth) + TOL, context
    assert result.lower_bound >= min(optima[1], 3 * lam) - TOL, context

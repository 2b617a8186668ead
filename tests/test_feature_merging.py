"""Features no row tells apart are merged before a tree search (issue 13).

``distinct_features`` keeps one column per group of equal or complementary columns and drops
constant ones; the searches run on those and map the tree back. The optimum, the bound and
the returned tree's score must not change, which the brute-force oracle checks on small
random instances padded with such columns.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit import Fairness, metrics
from odtkit.core.search import search_tree
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import distinct_features
from odtkit.testing import brute_force_tree, dataset_strategy


def _padded(data: Dataset, rng: np.random.Generator) -> tuple[Dataset, np.ndarray]:
    """``data`` with copies, complements and constant columns shuffled in; also the column
    each new column repeats (-1: constant)."""
    n, p = data.X.shape
    extra, source = [], []
    for _ in range(int(rng.integers(1, 5))):
        kind = rng.integers(0, 3)
        j = int(rng.integers(0, p))
        if kind == 0:
            extra.append(data.X[:, j])
            source.append(j)
        elif kind == 1:
            extra.append(~data.X[:, j])
            source.append(j)
        else:
            extra.append(np.full(n, bool(rng.integers(0, 2))))
            source.append(-1)
    X = np.column_stack([data.X, *extra])
    padded = Dataset(
        np.ascontiguousarray(X),
        data.y,
        data.classes,
        tuple(f"x{j}" for j in range(X.shape[1])),
        data.name,
        data.sample_weight,
    )
    return padded, np.array(source)


def test_distinct_features_keeps_one_column_per_group():
    X = np.array(
        [
            [0, 1, 0, 1, 1, 0],
            [1, 0, 1, 1, 0, 0],
            [0, 1, 0, 1, 1, 1],
        ],
        dtype=bool,
    )
    # column 1 is the complement of 0, 2 equals 0, 3 is constant, 4 equals 1, 5 is new
    assert distinct_features(X).tolist() == [0, 5]
    assert distinct_features(np.zeros((4, 3), dtype=bool)).tolist() == []
    assert distinct_features(np.zeros((0, 3), dtype=bool)).tolist() == []


@settings(max_examples=60, deadline=None)
@given(data=dataset_strategy(max_samples=24, max_features=4), seed=st.integers(0, 2**32 - 1))
def test_merged_columns_change_no_optimum(data: Dataset, seed: int):
    rng = np.random.default_rng(seed)
    padded, _ = _padded(data, rng)
    _, optimum = brute_force_tree(data, lam=0.02, max_depth=2)
    for method in ("dp", "bnb"):
        result = search_tree(padded, lam=0.02, max_depth=2, method=method)
        assert result.status == "optimal"
        assert result.objective == pytest.approx(optimum, abs=1e-9)
        assert metrics.objective(result.model, padded, lam=0.02) == pytest.approx(optimum)
        kept = set(distinct_features(padded.X).tolist())
        assert {f for f, *_ in _splits(result.model)} <= kept
        assert result.stats["features_merged"] == padded.n_features - len(kept)


def _splits(tree) -> list[tuple[int]]:
    if tree.is_leaf:
        return []
    return [(int(tree.feature),), *_splits(tree.left), *_splits(tree.right)]


def test_the_fair_search_merges_too():
    rng = np.random.default_rng(3)
    X = rng.random((200, 5)) < 0.5
    y = (X[:, 0] | X[:, 1]).astype(int)
    data = Dataset.from_arrays(np.column_stack([X, ~X[:, 1], X[:, 0]]), y)
    fairness = Fairness(notion="sp", protected=X[:, 4].astype(int), delta=0.05)
    plain = search_tree(Dataset.from_arrays(X, y), lam=0.01, max_depth=3, fairness=fairness)
    merged = search_tree(data, lam=0.01, max_depth=3, fairness=fairness)
    assert merged.stats["features_merged"] == 2
    assert merged.objective == pytest.approx(plain.objective, abs=1e-12)
    assert merged.lower_bound == pytest.approx(plain.lower_bound, abs=1e-12)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"method": "dp"},
        {"method": "bnb"},
        {"strategy": "queue"},
        {"strategy": "anytime", "time_limit": 5},
    ],
)
def test_only_constant_columns_leave_a_problem_without_features(kwargs):
    """Every column constant: the search runs on no feature at all (bnb crashed on that: its
    leaf keys have ceil(0 / 64) = 0 words and the arena returned a pointer into no page)."""
    y = np.array([0, 1, 1, 0, 1])
    data = Dataset.from_arrays(np.column_stack([np.zeros(5), np.ones(5)]).astype(bool), y)
    result = search_tree(data, lam=0.01, **kwargs)
    assert result.status == "optimal" and result.model.is_leaf
    assert result.stats["features_merged"] == 2
    assert result.objective == pytest.approx(2 / 5 + 0.01)

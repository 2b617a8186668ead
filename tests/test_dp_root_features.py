"""The native dp's root feature mask (``SearchConfig.root_features``): its optimum is the best
tree whose root splits on an allowed feature, or a leaf, every split effective (what pricing
forbids a root split with, in one call), against a brute force over every tree."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit import _native, metrics
from odtkit.constraints import effective_splits
from odtkit.core._problem import build_problem, decode_tree, encode_tree
from odtkit.datasets import Dataset
from odtkit.testing import enumerate_trees, random_dataset
from odtkit.tree import Tree


def masked_brute_force(
    data: Dataset, mask: np.ndarray, *, lam: float, max_depth: int, min_leaf: float = 0.0
) -> float:
    """The least objective over trees of depth <= max_depth, every split effective on the
    positive-weight rows, every leaf weighing >= min_leaf (a share of the total weight), whose
    root is a leaf or splits on a feature of ``mask``."""
    X = data.X[data.weights > 0]
    floor = min_leaf * data.total_weight - 1e-9
    best = math.inf
    # every structure (each leaf then predicts its heaviest class: the labels change neither
    # effectiveness nor support)
    for tree in enumerate_trees(data.n_features, max_depth, n_classes=1):
        if not tree.is_leaf and not mask[tree.as_split()[0]]:
            continue
        if len(effective_splits(tree, X)) != tree.n_leaves - 1:
            continue
        leaves = tree.apply(data.X)
        if min_leaf > 0:
            support = np.bincount(leaves, weights=data.weights, minlength=tree.n_leaves)
            if support.min() < floor:
                continue
        weights = np.zeros((tree.n_leaves, data.n_classes))
        np.add.at(weights, (leaves, data.y), data.weights)
        wrong = float((weights.sum(axis=1) - weights.max(axis=1)).sum())
        best = min(best, wrong / data.total_weight + lam * tree.n_leaves)
    return best


def search(data: Dataset, mask: np.ndarray | None, **config: object) -> tuple[Tree, float]:
    settings_ = _native.SearchConfig(**config)  # type: ignore[arg-type]
    if mask is not None:
        settings_.root_features = mask.tolist()
    raw = _native.search_dp(build_problem(data), settings_, None)
    assert _native.SearchStatus(raw.status) == _native.SearchStatus.optimal
    return decode_tree(list(raw.tree)), float(raw.objective)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**31 - 1),
    st.integers(1, 3),
    st.sampled_from([2, 3]),
    st.sampled_from([0.0, 0.01, 0.05]),
    st.booleans(),
)
def test_a_root_mask_gives_the_best_tree_with_an_allowed_root(
    seed: int, depth: int, n_classes: int, lam: float, support: bool
) -> None:
    rng = np.random.default_rng(seed)
    p = int(rng.integers(1, 4))
    data = random_dataset(
        seed,
        n_samples=int(rng.integers(5, 40)),
        n_features=p,
        n_classes=n_classes,
        weighted=bool(rng.integers(2)),
    )
    mask = rng.random(p) < 0.5
    min_leaf = float(rng.choice([0.1, 0.25])) if support else 0.0
    expected = masked_brute_force(data, mask, lam=lam, max_depth=depth, min_leaf=min_leaf)
    free, free_value = search(data, None, lam=lam, max_depth=depth, min_leaf_weight=min_leaf)
    # the unmasked optimum as a warm start: its root may be forbidden, so it is no incumbent
    tree, value = search(
        data,
        mask,
        lam=lam,
        max_depth=depth,
        min_leaf_weight=min_leaf,
        initial_tree=encode_tree(free),
    )
    assert value == pytest.approx(expected, abs=1e-9)
    assert metrics.objective(tree, data, lam=lam) == pytest.approx(value, abs=1e-9)
    assert tree.is_leaf or mask[tree.as_split()[0]]
    assert tree.depth <= depth
    assert value >= free_value - 1e-12


def test_every_feature_allowed_is_the_unmasked_search() -> None:
    data = random_dataset(3, n_samples=200, n_features=8, n_classes=3, weighted=True)
    free = search(data, None, lam=0.01, max_depth=3)
    assert search(data, np.ones(8, bool), lam=0.01, max_depth=3) == free
    # and a root allowed nothing is the best leaf
    tree, value = search(data, np.zeros(8, bool), lam=0.01, max_depth=3)
    assert tree.is_leaf
    assert value == pytest.approx(metrics.objective(tree, data, lam=0.01))


def test_only_search_dp_takes_a_root_mask() -> None:
    data = random_dataset(4, n_samples=30, n_features=3)
    problem = build_problem(data)
    config = _native.SearchConfig(max_depth=2, root_features=[True, False, True])
    for run in (_native.search_dp_anytime, _native.search_dp_queue, _native.search_bnb):
        with pytest.raises(ValueError, match="root_features"):
            run(problem, config, None)
    config.root_features = [True, False]
    with pytest.raises(ValueError, match="root_features must have one entry per feature"):
        _native.search_dp(problem, config, None)

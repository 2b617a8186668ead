"""The brute-force oracle, the worked examples, metrics and the greedy baseline."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit import Dataset, Fairness, datasets, greedy_tree, metrics
from odtkit.core import SearchOptions, search_tree
from odtkit.testing import (
    EXAMPLE_TREES_PROTECTED,
    LAMBDAS,
    brute_force_fair_tree,
    brute_force_tree,
    dataset_strategy,
    enumerate_trees,
    example_dataset_a,
    example_dataset_trees,
    random_dataset,
)
from odtkit.tree import Tree

# --- worked examples ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lam", "depth", "expected"),
    [
        (0.1, 1, 11 / 30),
        (0.1, 2, 11 / 30),
        (0.25, 1, 7 / 12),
        (0.25, 2, 7 / 12),
        (1 / 6 - 1e-9, 1, None),
    ],
)
def test_formulations_trees_section_7_2(lam, depth, expected):
    data = example_dataset_trees()
    tree, value = brute_force_tree(data, lam=lam, max_depth=depth)
    assert value == pytest.approx(metrics.objective(tree, data, lam=lam), abs=1e-12)
    if expected is not None:
        assert value == pytest.approx(expected, abs=1e-12)
    if lam == 0.1:
        assert tree == Tree.split(0, Tree.leaf(0), Tree.leaf(1))
    if lam == 0.25:
        assert tree == Tree.leaf(0)


def test_stump_beats_leaf_iff_lambda_below_one_sixth():
    data = example_dataset_trees()
    assert brute_force_tree(data, lam=1 / 6 - 1e-6, max_depth=1)[0].n_leaves == 2
    assert brute_force_tree(data, lam=1 / 6 + 1e-6, max_depth=1)[0].n_leaves == 1


# docs/formulations-search-and-pruning.md §6.3: dataset A, rows lambda, columns depth 1, 2, 3.
DATASET_A_TABLE = {
    0.01: (4 / 9 + 0.01, 1 / 9 + 0.04, 1 / 9 + 0.04),
    0.05: (0.494444, 0.311111, 0.311111),
    0.1: (0.544444, 0.511111, 0.511111),
    0.2: (0.644444, 0.644444, 0.644444),
}


@pytest.mark.parametrize("lam", sorted(DATASET_A_TABLE))
def test_search_spec_dataset_a(lam):
    data = example_dataset_a()
    for depth, expected in zip((1, 2, 3), DATASET_A_TABLE[lam], strict=True):
        tree, value = brute_force_tree(data, lam=lam, max_depth=depth)
        assert value == pytest.approx(expected, abs=1e-6)
        assert metrics.objective(tree, data, lam=lam) == pytest.approx(value, abs=1e-12)
    tree, _ = brute_force_tree(data, lam=0.01, max_depth=2)
    assert tree.n_leaves == 4 and tree.depth == 2


# --- the oracle against explicit enumeration ------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**31),
    st.integers(1, 3),
    st.integers(1, 2),
    st.sampled_from(LAMBDAS),
    st.sampled_from([2, 3]),
    st.booleans(),
)
def test_oracle_equals_explicit_enumeration(seed, n_features, depth, lam, n_classes, weighted):
    if n_classes == 3 and n_features == 3 and depth == 2:
        depth = 1  # keeps the labelled enumeration small (3^4 labellings x 28 structures)
    data = random_dataset(
        seed, n_samples=12, n_features=n_features, n_classes=n_classes, weighted=weighted
    )
    _, value = brute_force_tree(data, lam=lam, max_depth=depth)
    best = min(
        metrics.objective(t, data, lam=lam) for t in enumerate_trees(n_features, depth, n_classes)
    )
    assert value == pytest.approx(best, abs=1e-9)


def test_enumeration_count_matches_the_recurrence():
    # C(3, 2) = 28 structures for binary labels counts labellings too: check structures via K=1
    assert sum(1 for _ in enumerate_trees(3, 2, n_classes=1)) == 28
    assert sum(1 for _ in enumerate_trees(4, 3, n_classes=1)) == 3137


@settings(max_examples=60, deadline=None)
@given(
    dataset_strategy(max_samples=30, max_features=5), st.sampled_from(LAMBDAS), st.integers(0, 4)
)
def test_oracle_objective_is_metrics_and_at_most_greedy(data, lam, depth):
    tree, value = brute_force_tree(data, lam=lam, max_depth=depth)
    assert tree.depth <= depth
    assert metrics.objective(tree, data, lam=lam) == pytest.approx(value, abs=1e-9)
    greedy = greedy_tree(data, lam=lam, max_depth=depth)
    assert greedy.depth <= depth
    assert value <= metrics.objective(greedy, data, lam=lam) + 1e-9


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from(LAMBDAS), st.integers(1, 3))
def test_integer_weights_equal_duplicated_rows(seed, lam, depth):
    data = random_dataset(seed, n_samples=15, n_features=4, weighted=True)
    repeats = data.sample_weight.astype(int)
    duplicated = Dataset.from_arrays(np.repeat(data.X, repeats, axis=0), np.repeat(data.y, repeats))
    assert brute_force_tree(data, lam=lam, max_depth=depth)[1] == pytest.approx(
        brute_force_tree(duplicated, lam=lam, max_depth=depth)[1], abs=1e-12
    )


# --- greedy --------------------------------------------------------------------------------------


def test_greedy_is_deterministic_and_respects_depth():
    data = random_dataset(7, n_samples=40, n_features=6)
    assert greedy_tree(data, lam=0.01, max_depth=3) == greedy_tree(data, lam=0.01, max_depth=3)
    assert greedy_tree(data, lam=0.0, max_depth=2).depth <= 2
    majority = Tree.leaf(int(np.argmax(data.class_counts())))
    assert greedy_tree(data, lam=0.01, max_depth=0) == majority


def test_greedy_misses_the_xor_optimum_on_dataset_a():
    # Same §6.3: no depth-1 tree beats the leaf, so greedy's first split does not pay and it stops.
    data = example_dataset_a()
    greedy = greedy_tree(data, lam=0.01, max_depth=3)
    assert (
        metrics.objective(greedy, data, lam=0.01)
        >= brute_force_tree(data, lam=0.01, max_depth=3)[1]
    )


def _numpy_greedy_tree(dataset: Dataset, lam: float, max_depth: int | None = None) -> Tree:
    """The former numpy implementation of ``greedy_tree``: the reference for the native one."""
    limit = dataset.n_features if max_depth is None else min(max_depth, dataset.n_features)
    onehot = np.zeros((dataset.n_samples, dataset.n_classes))
    onehot[np.arange(dataset.n_samples), dataset.y] = dataset.weights
    X = dataset.X
    penalty = lam * dataset.total_weight
    tol = 1e-9 * max(1.0, dataset.total_weight)

    def gini(class_weights: np.ndarray) -> np.ndarray:
        total = class_weights.sum(axis=-1)
        safe = np.where(total > 0, total, 1.0)
        return 1.0 - ((class_weights / safe[..., None]) ** 2).sum(axis=-1)

    def grow(rows: np.ndarray, used: np.ndarray, depth: int) -> tuple[Tree, float]:
        counts = onehot[rows].sum(axis=0)
        label = int(np.argmax(counts))
        leaf_value = float(counts.sum() - counts[label]) + penalty
        leaf = Tree.leaf(label)
        if counts.sum() - counts[label] <= 0 or depth == limit:
            return leaf, leaf_value
        sub = X[rows]
        right_counts = sub.T.astype(float) @ onehot[rows]
        left_counts = counts[None, :] - right_counts
        n_right = right_counts.sum(axis=1)
        n_left = left_counts.sum(axis=1)
        valid = (~used) & (n_right > 0) & (n_left > 0)
        if not valid.any():
            return leaf, leaf_value
        weighted_child = (n_left * gini(left_counts) + n_right * gini(right_counts)) / counts.sum()
        feature = int(np.argmax(np.where(valid, gini(counts) - weighted_child, -np.inf)))
        goes_right = sub[:, feature]
        now_used = used.copy()
        now_used[feature] = True
        left_tree, left_value = grow(rows[~goes_right], now_used, depth + 1)
        right_tree, right_value = grow(rows[goes_right], now_used, depth + 1)
        if left_value + right_value < leaf_value - tol:
            return Tree.split(feature, left_tree, right_tree), left_value + right_value
        return leaf, leaf_value

    return grow(np.arange(dataset.n_samples), np.zeros(dataset.n_features, dtype=bool), 0)[0]


@pytest.mark.parametrize("name", ["tic-tac-toe", "car-evaluation", "balance-scale", "monk2"])
def test_native_greedy_is_the_numpy_greedy_and_the_bnb_start(name: str) -> None:
    data = datasets.load(name)
    for lam in (0.0, 0.001, 0.01, 0.05):
        for depth in (None, 1, 2, 3):
            expected = _numpy_greedy_tree(data, lam=lam, max_depth=depth)
            assert greedy_tree(data, lam=lam, max_depth=depth) == expected, (lam, depth)
    # bnb starts from this tree (natively since it stopped taking it from Python): its first
    # trace row is the greedy objective, or the leaf's when the greedy tree is the leaf
    for lam, depth in ((0.01, 2), (0.02, None)):
        value = metrics.objective(_numpy_greedy_tree(data, lam=lam, max_depth=depth), data, lam=lam)
        result = search_tree(
            data, lam=lam, max_depth=depth, method="bnb", options=SearchOptions(node_limit=1)
        )
        assert result.trace["incumbent"].iloc[0] == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_native_greedy_matches_numpy_on_random_integer_weights(seed: int) -> None:
    data = random_dataset(
        seed, n_samples=10 + 2 * seed, n_features=6, n_classes=2 + seed % 3, weighted=seed % 2 == 1
    )
    for lam in (0.0, 0.01, 0.05):
        for depth in (None, 2, 4):
            assert greedy_tree(data, lam=lam, max_depth=depth) == _numpy_greedy_tree(
                data, lam, depth
            )


def test_greedy_large_lambda_returns_a_leaf():
    data = random_dataset(3, n_samples=40, n_features=5)
    assert greedy_tree(data, lam=0.6).is_leaf


# --- metrics -------------------------------------------------------------------------------------


def test_objective_counts_every_leaf_even_empty_ones():
    data = example_dataset_trees()
    # x2 then x1 on an all-zero pattern: leaves that receive no row still cost lambda
    tree = Tree.split(0, Tree.leaf(0), Tree.split(0, Tree.leaf(0), Tree.leaf(1)))
    assert metrics.objective(tree, data, lam=0.1) == pytest.approx(1 / 6 + 3 * 0.1)
    assert metrics.objective_counts(tree, data, lam=0.1) == pytest.approx(1 + 3 * 0.1 * 6)
    assert metrics.accuracy(tree, data) == pytest.approx(5 / 6)


def test_weighted_objective_uses_total_weight():
    data = example_dataset_trees()
    weighted = Dataset.from_arrays(data.X, data.y, sample_weight=[1, 1, 1, 1, 1, 4])
    stump = Tree.split(0, Tree.leaf(0), Tree.leaf(1))
    assert metrics.misclassified(stump, weighted) == 4.0
    assert metrics.objective(stump, weighted, lam=0.0) == pytest.approx(4 / 9)


def test_fairness_gaps_of_formulations_trees_7_5():
    data = example_dataset_trees()
    stump = Tree.split(0, Tree.leaf(0), Tree.leaf(1))
    a = EXAMPLE_TREES_PROTECTED
    gaps = {"sp": 1 / 3, "pe": 1 / 2, "eopp": 0.0, "eodds": 1 / 2}
    for notion, gap in gaps.items():
        fairness = Fairness(notion, protected=a, delta=0.4)
        assert metrics.fairness_gap(stump, data, fairness) == pytest.approx(gap)
        assert metrics.fairness_gap(Tree.leaf(0), data, fairness) == 0.0
        assert metrics.fairness_gap(Tree.leaf(1), data, fairness) == 0.0
        assert metrics.is_fair(stump, data, fairness) == (gap <= 0.4)
    long_name = Fairness("statistical_parity", protected=a)
    assert metrics.fairness_gap(stump, data, long_name) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="notion"):
        Fairness("parity", protected=a)
    with pytest.raises(ValueError, match="protected"):
        metrics.fairness_gap(stump, data, Fairness("sp", protected=a[:3]))


def test_objective_rejects_bad_arguments():
    data = example_dataset_trees()
    with pytest.raises(ValueError, match="lam"):
        metrics.objective(Tree.leaf(0), data, lam=-0.1)
    with pytest.raises(TypeError, match="dataset"):
        metrics.objective(Tree.leaf(0), (data.X, data.y), lam=0.1)
    with pytest.raises(TypeError, match="Tree or RuleList"):
        metrics.objective(object(), data, lam=0.1)


def _xor_data(weight: float) -> Dataset:
    """8 rows, y = x0 xor x1 (a depth-2 tree is exact), every row weighing ``weight``."""
    X = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)], dtype=bool)
    y = (X[:, 0] ^ X[:, 1]).astype(np.int64)
    return Dataset(X, y, np.arange(2), ("a", "b", "c"), "xor", np.full(8, weight))


@pytest.mark.parametrize("weight", [1e-300, 1e-12, 1.0, 1e12])
def test_the_tree_oracles_do_not_tie_everything_when_weights_are_tiny(weight: float) -> None:
    """The oracles compared count units with a tolerance of at least 1e-9: with 8 rows of
    1e-12, every tree tied with the first one tried, and the fair oracle called a leaf with
    every row wrong optimal. The enumeration of every tree is the truth."""
    data = _xor_data(weight)
    truth = min(metrics.objective(t, data, lam=0.01) for t in enumerate_trees(3, 2, n_classes=2))
    assert brute_force_tree(data, lam=0.01, max_depth=2)[1] == pytest.approx(truth, abs=1e-9)
    assert truth == pytest.approx(0.04, abs=1e-9)  # four leaves, no mistake
    fair = Fairness(notion="sp", protected=np.arange(8) % 2, delta=1.0)
    assert brute_force_fair_tree(data, fair, lam=0.01, max_depth=2)[1] == pytest.approx(
        truth, abs=1e-9
    )
    leaf_wins = Dataset(
        data.X[:2], np.array([1, 1]), np.arange(2), data.feature_names, "", np.full(2, weight)
    )
    strict = Fairness(notion="sp", protected=np.array([0, 1]), delta=0.0, positive_class=1)
    assert brute_force_fair_tree(leaf_wins, strict, lam=0.0, max_depth=0)[1] == 0.0

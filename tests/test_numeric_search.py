"""Issue 23: the exact search over every threshold, checked against an independent brute force.

``odtkit.testing.brute_force_threshold_tree`` enumerates every tree of threshold splits on the
raw values (no Binarizer, no search code); ``search_numeric`` must certify the same optimum,
return a tree that re-scores to it through its own binarizer, and never be worse than the dp
on the every-midpoint binarization.

Why the exact search must *equal* (not only beat) the every-midpoint dp, NaN or not: the
Binarizer without a threshold cap encodes exactly the split space of docs NUMERIC-API §1. A
threshold column gets ``c<=t`` for every midpoint (missing to the gt side), ``c<=t or missing``
(missing to the le side) and ``c is missing`` (present | missing) when it has a NaN; a 0/1
column gets its three two-way splits; a constant column with NaN only ``c is missing``; a
categorical column one indicator per level plus ``c is missing``, which is what the exact search
passes natively. Each binary feature is one such split and each such split one feature, so the
two searches minimise the same objective over the same trees.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from _oracle_settings import oracle_settings
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from odtkit import Dataset, greedy_tree, metrics
from odtkit.core import search_numeric, search_tree
from odtkit.datasets import Binarizer
from odtkit.testing import (
    brute_force_threshold_tree,
    brute_force_tree,
    random_numeric_table,
    threshold_tree_leaves,
    threshold_tree_predict,
)

# an all-missing column, a depth that admits only a leaf: warnings the answer does not depend on
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TOL = 1e-9
LAMS = (0.0, 0.01, 0.05, 0.1, 0.3)
PROPERTY = oracle_settings(200)
nan = np.nan

#: The hand-checked table (see test_hand_checked_table): column 1's missing cell must go left.
HAND_X = np.array(
    [[1.0, 0.5], [2.0, nan], [2.0, 0.5], [3.5, 1.5], [nan, 1.5], [5.0, 0.5]],
)
HAND_Y = np.array([0, 0, 1, 1, 1, 0])
#: (lam, depth) -> optimum on HAND_X, HAND_Y.
HAND_OPTIMA = {
    (0.0, 1): 1 / 6,
    (0.0, 2): 1 / 6,
    (0.0, 3): 0.0,
    (0.05, 1): 1 / 6 + 2 * 0.05,
    (0.05, 3): 4 * 0.05,
    (0.1, 3): 1 / 6 + 2 * 0.1,
}


# --- helpers ------------------------------------------------------------------------------------


def _codes(y: object) -> np.ndarray:
    return np.unique(np.asarray(y), return_inverse=True)[1]


def _weights(w: np.ndarray | None, n: int) -> np.ndarray:
    return np.ones(n) if w is None else np.asarray(w, dtype=float)


def _oracle_rescore(tree: object, X: np.ndarray, y: object, w: object, lam: float) -> float:
    """The oracle tree's objective recomputed from its predictions (numpy, not the oracle)."""
    weights = _weights(w, len(X))
    wrong = threshold_tree_predict(tree, X) != _codes(y)
    return weights[wrong].sum() / weights.sum() + lam * threshold_tree_leaves(tree)


def _midpoint_dp(X: object, y: object, w: object, lam: float, depth: int, **binarizer) -> float:
    """The certified dp optimum on the every-midpoint binarization of ``X``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = Dataset.from_arrays(
            Binarizer(**binarizer).fit_transform(X), y, sample_weight=w, name="midpoints"
        )
        result = search_tree(data, lam=lam, max_depth=depth, method="dp")
    assert result.status == "optimal"
    return result.objective


def _rescored(result: object, X: object, y: object, w: object, lam: float) -> float:
    """A search_numeric Result's tree re-scored on the raw rows through its own binarizer."""
    data = Dataset.from_arrays(result.binarizer.transform(X), y, sample_weight=w)
    return metrics.objective(result.model, data, lam=lam)


def _has_a_split(X: np.ndarray) -> bool:
    """Some column has two distinct present values, or present and missing cells."""
    absent = np.isnan(X)
    return any(
        np.unique(X[~absent[:, c], c]).size > 1 or 0 < absent[:, c].sum() < len(X)
        for c in range(X.shape[1])
    )


def _one_hot(column: pd.Series) -> np.ndarray:
    """What the exact search passes for a categorical column: one 0/1 indicator per level
    (a missing cell 0 in each) plus an "is missing" indicator when a cell is missing."""
    absent = column.isna().to_numpy()
    levels = sorted({v for v in column[~absent]}, key=str)
    parts = [(column.to_numpy() == v) & ~absent for v in levels]
    if absent.any():
        parts.append(absent)
    return np.column_stack(parts).astype(float)


def _table(seed: int, n_classes: int, weights: str | None, missing: float):
    return random_numeric_table(seed, n_classes=n_classes, missing=missing, weights=weights)


# --- the oracle itself ----------------------------------------------------------------------------


def test_oracle_hand_checked_table():
    """6 rows, 2 columns, by hand (lam = 0):

    * no leaf or stump is perfect; the best stump is ``x1 <= 0.5`` with the missing cell of
      row 1 (a 0) on the le side: le = rows 0, 1, 2, 5 (labels 0 0 1 0), gt = rows 3, 4
      (1 1): one error. Sending the missing cell to the gt side costs two, and no split of
      ``x0`` (missing either way) or "present | missing" does better than two.
    * depth 2 cannot separate row 2 (x0 = 2, x1 = 0.5, label 1) from rows 0, 1 and 5 without
      giving up another row (rows 1 and 2 differ only in x1's missing cell, rows 0, 2, 5 only
      in x0): still one error.
    * depth 3: ``x0 <= 1`` (row 0 | rest), then ``x0 <= 3.5`` with missing left (row 5 |
      rest), then ``x1`` present | missing (rows 2, 3, 4 | row 1): no error, 4 leaves.
    """
    for (lam, depth), expected in HAND_OPTIMA.items():
        tree, value = brute_force_threshold_tree(HAND_X, HAND_Y, lam=lam, max_depth=depth)
        assert value == pytest.approx(expected, abs=1e-12), (lam, depth)
        assert _oracle_rescore(tree, HAND_X, HAND_Y, None, lam) == pytest.approx(value, abs=1e-12)
    tree, _ = brute_force_threshold_tree(HAND_X, HAND_Y, lam=0.0, max_depth=1)
    assert tree == (1, 0.5, True, 0, 1)
    # weight 3 on row 2: the stump x0 <= 1 now wins with rows 1 and 5 wrong (2 of 8)
    _, value = brute_force_threshold_tree(
        HAND_X, HAND_Y, lam=0.0, max_depth=1, sample_weight=[1, 1, 3, 1, 1, 1]
    )
    assert value == pytest.approx(2 / 8, abs=1e-12)


@PROPERTY
@given(
    seed=st.integers(0, 2**32 - 1),
    n_classes=st.sampled_from([2, 3]),
    weights=st.sampled_from([None, "int", "float"]),
    lam=st.sampled_from(LAMS),
    depth=st.integers(1, 3),
)
def test_oracle_matches_brute_force_on_every_midpoint(seed, n_classes, weights, lam, depth):
    """Two independent brute forces: over raw thresholds, and over the Binarizer's features
    (which encode both missing sides and present | missing, so they agree with NaN too); the
    oracle's tree re-scores to its objective."""
    X, y, w = _table(seed, n_classes, weights, missing=0.2)
    tree, value = brute_force_threshold_tree(X, y, lam=lam, max_depth=depth, sample_weight=w)
    assert _oracle_rescore(tree, X, y, w, lam) == pytest.approx(value, abs=TOL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = Dataset.from_arrays(Binarizer().fit_transform(X), y, sample_weight=w)
    _, reference = brute_force_tree(data, lam=lam, max_depth=depth)
    assert value == pytest.approx(reference, abs=TOL)


def test_oracle_integer_weights_are_duplicated_rows():
    for seed in range(30):
        X, y, w = random_numeric_table(seed, weights="int")
        repeat = w.astype(int)
        for lam, depth in ((0.0, 2), (0.05, 3)):
            _, weighted = brute_force_threshold_tree(
                X, y, lam=lam, max_depth=depth, sample_weight=w
            )
            _, copied = brute_force_threshold_tree(
                np.repeat(X, repeat, axis=0), np.repeat(y, repeat), lam=lam, max_depth=depth
            )
            assert weighted == pytest.approx(copied, abs=TOL)


def test_oracle_edge_cases():
    # one row, an all-missing column, a constant column: only the leaf
    tree, value = brute_force_threshold_tree([[nan, 1.0]], ["a"], lam=0.1, max_depth=3)
    assert (tree, value) == (0, pytest.approx(0.1))
    tree, value = brute_force_threshold_tree(
        [[nan, 2.0], [nan, 2.0], [nan, 2.0]], [0, 1, 1], lam=0.0, max_depth=2
    )
    assert (tree, value) == (1, pytest.approx(1 / 3))
    # a constant column with a missing cell splits present | missing only
    tree, value = brute_force_threshold_tree([[2.0], [nan], [2.0]], [0, 1, 0], lam=0, max_depth=1)
    assert (tree, value) == ((0, None, False, 0, 1), 0.0)
    # ties between classes go to the smallest code; depth 0 is the leaf
    assert brute_force_threshold_tree([[0.0], [1.0]], [1, 0], lam=0, max_depth=0) == (0, 0.5)
    with pytest.raises(ValueError, match="inf"):
        brute_force_threshold_tree([[np.inf]], [0], lam=0, max_depth=1)
    with pytest.raises(ValueError, match="max_depth"):
        brute_force_threshold_tree([[0.0]], [0], lam=0, max_depth=-1)


# --- search_numeric against the oracle ------------------------------------------------------------


def _check_exact(X, y, w, lam, depth, *, categorical=None, oracle_X=None, **kwargs):
    """search_numeric certifies the oracle's optimum, re-scores, equals the midpoint dp."""
    oracle_X = X if oracle_X is None else oracle_X
    _, optimum = brute_force_threshold_tree(oracle_X, y, lam=lam, max_depth=depth, sample_weight=w)
    result = search_numeric(
        X, y, lam=lam, max_depth=depth, sample_weight=w, categorical=categorical, **kwargs
    )
    context = {"lam": lam, "depth": depth, "exact": result.objective, "oracle": optimum}
    assert result.status == "optimal", context
    assert result.objective == pytest.approx(optimum, abs=TOL), context
    assert result.lower_bound == pytest.approx(optimum, abs=TOL), context
    assert _rescored(result, X, y, w, lam) == pytest.approx(optimum, abs=TOL), context
    # every bound the search reported was valid over all thresholds, every incumbent a tree
    assert not (result.trace["bound"] > optimum + TOL).any(), {**context, "trace": result.trace}
    assert not (result.trace["incumbent"] < optimum - TOL).any(), {**context, "trace": result.trace}
    assert result.method == "exact"
    assert result.stats["certificate"] == "all thresholds"
    dp = _midpoint_dp(X, y, w, lam, depth, categorical=categorical)
    assert optimum == pytest.approx(dp, abs=TOL), {**context, "midpoint dp": dp}
    return result


def test_exact_search_hand_checked_table():
    for (lam, depth), expected in HAND_OPTIMA.items():
        result = _check_exact(HAND_X, HAND_Y, None, lam, depth)
        assert result.objective == pytest.approx(expected, abs=1e-12)
    # the stump sends column 1's missing cell to the le side: the binarizer keeps that feature
    result = search_numeric(HAND_X, HAND_Y, lam=0.0, max_depth=1)
    assert result.model.predict(result.binarizer.transform(HAND_X)).tolist() == [0, 0, 0, 1, 1, 0]


@PROPERTY
@given(
    seed=st.integers(0, 2**32 - 1),
    n_classes=st.sampled_from([2, 3]),
    weights=st.sampled_from([None, "int", "float"]),
    lam=st.sampled_from(LAMS),
    depth=st.integers(1, 3),
    missing=st.sampled_from([0.0, 0.25]),
    frame=st.booleans(),
)
def test_exact_search_matches_the_oracle(seed, n_classes, weights, lam, depth, missing, frame):
    """Ties, duplicate rows, constant and 0/1 columns, NaN cells, weights, 2 and 3 classes."""
    X, y, w = _table(seed, n_classes, weights, missing)
    # a table with no split at all is test_exact_search_on_columns_without_a_split's (in a
    # child process: it crashed the interpreter once)
    assume(_has_a_split(X))
    data = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])]) if frame else X
    _check_exact(data, y, w, lam, depth, oracle_X=X)


def _categorical_case(seed: int, missing: bool) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """A numeric column with NaN next to a string column (with None cells if ``missing``),
    string labels; and the oracle's matrix (the string column as indicators)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 11))
    colour = pd.Series(rng.choice(["red", "green", "blue"], size=n), dtype=object)
    if missing:
        colour[rng.random(n) < 0.3] = None
    size = np.round(rng.normal(size=n), 1)
    size[rng.random(n) < 0.2] = nan
    y = rng.choice(["no", "yes"], size=n)
    frame = pd.DataFrame({"size": size, "colour": colour})
    return frame, y, np.column_stack([size, _one_hot(colour)])


CATEGORICAL = settings(max_examples=60, deadline=None, derandomize=True)
CATEGORICAL_ARGS = {
    "seed": st.integers(0, 2**32 - 1),
    "missing": st.booleans(),
    "lam": st.sampled_from(LAMS),
    "depth": st.integers(1, 3),
}


@CATEGORICAL
@given(**CATEGORICAL_ARGS)
def test_oracle_on_indicators_matches_the_midpoint_dp_on_categories(seed, missing, lam, depth):
    """The oracle's view of a categorical column (indicators) is the Binarizer's one-hot."""
    frame, y, oracle_X = _categorical_case(seed, missing)
    _, optimum = brute_force_threshold_tree(oracle_X, y, lam=lam, max_depth=depth)
    assert optimum == pytest.approx(_midpoint_dp(frame, y, None, lam, depth), abs=TOL)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(10, 40),
    n_classes=st.sampled_from([2, 3]),
    weights=st.sampled_from([None, "int", "float"]),
    lam=st.sampled_from(LAMS[:3]),
    depth=st.integers(2, 3),
)
def test_exact_search_matches_the_oracle_on_longer_tables(
    seed, n_rows, n_classes, weights, lam, depth
):
    """Up to 40 rows and 4 columns, one of them with many distinct values (the sweeps of the
    depth-two solver and the threshold intervals of the deeper search see long runs)."""
    X, y, w = random_numeric_table(
        seed, n_rows=n_rows, n_columns=1 + seed % 4, n_classes=n_classes, weights=weights
    )
    rng = np.random.default_rng(seed)
    X[:, 0] = np.round(rng.normal(size=n_rows), 1)
    X[rng.random(n_rows) < 0.1 * (seed % 3), 0] = nan
    _check_exact(X, y, w, lam, depth)


@CATEGORICAL
@given(**CATEGORICAL_ARGS)
def test_exact_search_categorical_column_matches_the_oracle(seed, missing, lam, depth):
    """A string column (one indicator per level, plus "is missing") next to a numeric one."""
    frame, y, oracle_X = _categorical_case(seed, missing)
    _check_exact(frame, y, None, lam, depth, oracle_X=oracle_X)


def test_exact_search_numeric_column_declared_categorical():
    X = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0], [1.0, 1.0], [nan, 0.0], [3.0, 1.0]])
    y = np.array([0, 1, 1, 0, 1, 0])
    frame = pd.DataFrame(X, columns=["k", "b"])
    oracle_X = np.column_stack([_one_hot(frame["k"]), X[:, 1]])
    for lam, depth in ((0.0, 1), (0.0, 2), (0.05, 2)):
        _check_exact(frame, y, None, lam, depth, categorical=["k"], oracle_X=oracle_X)


def test_exact_search_guess_start_gives_the_same_optimum():
    for seed in range(12):
        X, y, w = random_numeric_table(
            seed, n_classes=2 + seed % 2, weights=("int", None)[seed % 2]
        )
        for lam, depth in ((0.0, 2), (0.02, 3)):
            _check_exact(X, y, w, lam, depth, start="guess")


def test_search_tree_on_a_raw_table_runs_the_exact_search():
    frame = pd.DataFrame(HAND_X, columns=["a", "b"])
    for method in ("dp", "exact"):
        result = search_tree(frame, y=HAND_Y, lam=0.0, max_depth=3, method=method)
        assert result.method == "exact"
        assert result.objective == pytest.approx(0.0, abs=1e-12)


def _hard_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """24 rows, 3 columns, 3 classes, NaN cells, integer weights: depth 3 needs many nodes."""
    X, y, w = random_numeric_table(7, n_rows=24, n_columns=3, n_classes=3, weights="int")
    rng = np.random.default_rng(7)
    X[:, 0] = np.round(rng.normal(size=24), 1)  # a column with many distinct values
    X[rng.random(24) < 0.1, 0] = nan
    return X, y, w


@pytest.mark.parametrize("limit", [{"node_limit": 1}, {"time_limit": 1e-6}])
def test_exact_search_stopped_early_keeps_a_valid_answer(limit):
    X, y, w = _hard_table()
    lam, depth = 0.01, 3
    _, optimum = brute_force_threshold_tree(X, y, lam=lam, max_depth=depth, sample_weight=w)
    result = search_numeric(X, y, lam=lam, max_depth=depth, sample_weight=w, **limit)
    context = {"status": result.status, "objective": result.objective, "oracle": optimum}
    if "node_limit" in limit:
        assert result.status == "node_limit", context
    else:  # a tiny table may be solved before the first look at the clock
        assert result.status in ("time_limit", "optimal"), context
    assert result.model is not None
    assert _rescored(result, X, y, w, lam) == pytest.approx(result.objective, abs=TOL)
    assert result.lower_bound <= optimum + TOL, context
    assert optimum <= result.objective + TOL, context
    assert not (result.trace["bound"] > optimum + TOL).any(), {**context, "trace": result.trace}
    if result.status == "optimal":
        assert result.objective == pytest.approx(optimum, abs=TOL)


def test_exact_search_upper_bound_equal_to_the_optimum():
    X, y, w = _hard_table()
    for lam, depth in ((0.0, 2), (0.01, 3)):
        _, optimum = brute_force_threshold_tree(X, y, lam=lam, max_depth=depth, sample_weight=w)
        result = search_numeric(
            X, y, lam=lam, max_depth=depth, sample_weight=w, upper_bound=optimum
        )
        assert result.status == "optimal"
        assert result.objective == pytest.approx(optimum, abs=TOL)
        assert _rescored(result, X, y, w, lam) == pytest.approx(optimum, abs=TOL)


#: Tables whose columns give the exact search at most the present | missing split.
NO_THRESHOLD_TABLES = {
    "constant": [[0.7], [0.7], [0.7], [0.7]],  # no native column at all
    "all missing and constant": [[nan, 2.0]] * 4,  # no native column either
    "constant with a NaN": [[2.0], [nan], [2.0], [2.0]],  # only present | missing
}
NO_THRESHOLD_Y = [1, 0, 1, 1]
_NO_THRESHOLD_CHILD = """
import sys, warnings
import numpy as np
from odtkit.core import search_numeric
warnings.simplefilter("ignore")
nan = np.nan
for lam, depth in ((0.0, 2), (0.1, 1)):
    result = search_numeric(np.array({table}), {y}, lam=lam, max_depth=depth)
    print(lam, depth, result.status, repr(result.objective), repr(result.lower_bound))
"""


@pytest.mark.parametrize("name", sorted(NO_THRESHOLD_TABLES))
def test_exact_search_on_columns_without_a_split(name):
    """Found by the property test: a table whose columns give the native search no split
    (values of shape (n, 0)) crashed the interpreter (SIGSEGV) in the first native build. In a
    child process, so that a crash fails this test instead of ending the session."""
    table = NO_THRESHOLD_TABLES[name]
    code = _NO_THRESHOLD_CHILD.format(table=table, y=NO_THRESHOLD_Y)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    child = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert child.returncode == 0, f"search_numeric died ({child.returncode}): {child.stderr[-800:]}"
    answers = child.stdout.splitlines()
    assert len(answers) == 2, child.stdout
    for (lam, depth), line in zip(((0.0, 2), (0.1, 1)), answers, strict=True):
        _, optimum = brute_force_threshold_tree(table, NO_THRESHOLD_Y, lam=lam, max_depth=depth)
        _, _, status, objective, bound = line.split()
        assert status == "optimal", line
        assert float(objective) == pytest.approx(optimum, abs=TOL), line
        assert float(bound) == pytest.approx(optimum, abs=TOL), line


def test_exact_search_zero_weights_are_rows_that_do_not_count():
    """``sample_weight`` may hold zeros (as for search_tree): those rows change no objective,
    so the optimum is the oracle's (which keeps them) and the every-midpoint dp's."""
    X = np.array([[1.0], [2.0], [3.0]])
    _check_exact(X, [0, 1, 1], [1.0, 0.0, 1.0], 0.0, 1)
    for seed in range(10):
        X, y, w = random_numeric_table(seed, weights="int")
        w[np.random.default_rng(seed).random(len(w)) < 0.3] = 0.0
        w[0] = max(w[0], 1.0)
        _check_exact(X, y, w, 0.01 * (seed % 3), 1 + seed % 3)


def test_exact_search_stopped_at_once_is_never_worse_than_its_start():
    """NUMERIC-API §1: a stopped search returns its best tree, never worse than the start (the
    guessed-threshold dp tree) or, with ``start="greedy"``, than a greedy tree. search_tree's
    searches start from ``greedy_tree`` (tests/test_search_api.py holds them to it after one
    node); the same bar here, on the every-midpoint binarization."""
    for seed in range(20):
        X, y, w = random_numeric_table(seed, n_rows=24, n_classes=2 + seed % 2, weights="int")
        X[:, 0] = np.round(np.random.default_rng(seed).normal(size=24), 1)
        lam, depth = 0.01, 1 + seed % 3
        data = Dataset.from_arrays(Binarizer().fit_transform(X), y, sample_weight=w)
        greedy = metrics.objective(greedy_tree(data, lam=lam, max_depth=depth), data, lam=lam)
        result = search_numeric(X, y, lam=lam, max_depth=depth, sample_weight=w, node_limit=1)
        assert result.objective <= greedy + 1e-12, (seed, depth, result.objective, greedy)
        guessed = search_numeric(
            X, y, lam=lam, max_depth=depth, sample_weight=w, node_limit=1, start="guess"
        )
        start = guessed.stats["start_objective"]
        assert guessed.objective <= start + 1e-12, (seed, depth, guessed.objective, start)

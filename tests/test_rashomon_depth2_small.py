"""The Rashomon set's 16-bit depth-two kernel against the brute force and the dp.

With two classes, integer weights of total <= 16,000 and an integral ``Lambda = lam * W``
(``lam = 0`` included), core/native/rashomon.cpp scores a depth-two sub-problem's pair counts
in 16-bit integers (``depth2_two_classes_small``): misclassified weights of one-split trees,
eight features to a vector, the values formed once per root. Every value is then an exact
integer, so the optimum must be the recursion's to the last bit. Here the set's optimum and its
histogram key by key must equal :func:`odtkit.testing.brute_force_rashomon_histogram` (every tree
of the space counted, no bound, no pruning), and on tables too large for it the optimum must
equal the dp's (``search_tree(method="dp")``, its own depth-two solver) and the count-only
histogram the listable set's. The tables cover 1-20 features (a row of the kernel shorter than,
equal to and longer than its eight lanes), empty cells (duplicated and constant columns), unit
weights on distinct rows (the solver's 16-bit counts and their sibling shortcut) and integer
weights (double counts, converted), and penalties that are and are not integral (the latter
take the double kernel).
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from odtkit import testing
from odtkit.core.search import TrivialAnswerWarning, search_tree
from odtkit.datasets import Dataset
from odtkit.rashomon import rashomon


@st.composite
def _tables(draw, max_rows: int, max_features: int):
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(1, max_features))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.random((n, p)) < rng.uniform(0.15, 0.85)
    if p > 2 and draw(st.booleans()):  # equal columns: tied splits, empty pair cells
        X[:, -1] = X[:, 0]
    if p > 3 and draw(st.booleans()):  # a constant column: no split on it at all
        X[:, 1] = draw(st.booleans())
    y = X[:, 0].astype(int) if p == 1 else (X[:, 0] ^ X[:, -1]).astype(int)
    y = np.where(rng.random(n) < draw(st.sampled_from([0.0, 0.2, 0.45])), 1 - y, y)
    if draw(st.booleans()):
        return Dataset.from_arrays(X, y, sample_weight=rng.integers(1, 4, n).astype(float))
    # unit weights and distinct rows: every point weighs 0 or 1 in each class, so the counts
    # come as 16-bit integers from the solver (pair_counts16, its sibling shortcut included);
    # a duplicated row would weigh 2 and take the double counts
    _, first = np.unique(X, axis=0, return_index=True)
    keep = np.sort(first)
    assume(len(keep) >= 2)
    return Dataset.from_arrays(X[keep], y[keep])


def _lam(data: Dataset, units: int) -> float:
    """A lam whose Lambda = lam * W is the integer ``units`` in the native product (> 0), or a
    fraction of a unit (units < 0: the double kernel's path)."""
    W = float(data.total_weight)
    if units < 0:
        return 0.37 / W
    lam = units / W
    assume(lam * W == float(units))
    return lam


def _histogram(rs) -> dict[tuple[float, int], int]:
    hist = rs.objective_histogram()
    keys = zip(hist["misclassified"], hist["leaves"], hist["count"], strict=True)
    return {(round(float(e), 9), int(k)): int(c) for e, k, c in keys}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=_tables(max_rows=40, max_features=11),
    depth=st.integers(2, 3),
    units=st.sampled_from([0, 1, 2, 5, -1]),
    epsilon=st.sampled_from([0.0, 0.05, 0.3, 2.0]),
    count_only=st.booleans(),
)
def test_set_equals_the_unpruned_count(data, depth, units, epsilon, count_only):
    lam = _lam(data, units)
    rs = rashomon(data, lam=lam, max_depth=depth, epsilon=epsilon, count_only=count_only)
    reference = testing.brute_force_rashomon_histogram(data, max_depth=depth)
    W = float(data.total_weight)
    opt = min(e / W + lam * k for e, k in reference)
    assert rs.optimum == opt or abs(rs.optimum - opt) <= 1e-12
    bound = opt * (1.0 + epsilon)
    expected = {
        (round(e, 9), k): c for (e, k), c in reference.items() if e / W + lam * k <= bound + 1e-9
    }
    assert _histogram(rs) == expected
    assert rs.count() == sum(expected.values())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=_tables(max_rows=500, max_features=20),
    depth=st.integers(2, 4),
    units=st.sampled_from([0, 1, 3, -1]),
    epsilon=st.sampled_from([0.0, 0.02, 0.2]),
)
def test_optimum_equals_the_dp_and_count_only_the_listable_set(data, depth, units, epsilon):
    lam = _lam(data, units)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrivialAnswerWarning)  # a leaf is a fine optimum here
        found = search_tree(data, lam=lam, max_depth=depth, method="dp")
    assert found.status == "optimal"
    counted = rashomon(data, lam=lam, max_depth=depth, epsilon=epsilon, count_only=True)
    assert abs(counted.optimum - float(found.objective)) <= 1e-12
    if counted.count() <= 200_000:
        listed = rashomon(data, lam=lam, max_depth=depth, epsilon=epsilon)
        assert listed.optimum == counted.optimum
        assert _histogram(listed) == _histogram(counted)

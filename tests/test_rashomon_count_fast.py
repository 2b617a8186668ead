"""The count-only build's fast paths against the listable build and an unpruned count.

core/native/rashomon.cpp counts with a dense (leaves, misclassified) table filled one leaf
count at a time (u64 counts, unchecked u128 cells while a bound on every cell stays below
2^128, the checked loop otherwise) and takes depth-two optima from the dp's pair counts (integer
weights, no rules). Each histogram here must equal the listable build's, which pairs every key
through the checked path, and :func:`odtkit.testing.brute_force_rashomon_histogram`, which counts
every tree of the space with no bound and no pruning.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import testing
from odtkit.core.rashomon import RashomonProblem, build_rashomon
from odtkit.datasets import Dataset


def _rounded(pairs) -> dict[tuple[float, int], int]:
    """Keys to 9 decimals: fractional weights summed in another order differ in the last bits
    (the brute force adds a node's rows, the build its children's sums)."""
    out: dict[tuple[float, int], int] = {}
    for (e, k), c in pairs:
        key = (round(float(e), 9), int(k))
        out[key] = out.get(key, 0) + int(c)
    return out


def _histogram(core) -> dict[tuple[float, int], int]:
    hist = core.histogram()
    keys = zip(hist["misclassified"], hist["leaves"], hist["count"], strict=True)
    return _rounded(((e, k), c) for e, k, c in keys)


def _expected(data: Dataset, depth: int, leaves: str, lam: float, bound: float):
    reference = testing.brute_force_rashomon_histogram(data, max_depth=depth, leaves=leaves)
    W = data.total_weight
    within = {key: c for key, c in reference.items() if key[0] / W + lam * key[1] <= bound + 1e-9}
    return _rounded(within.items())


@st.composite
def _tables(draw):
    n = draw(st.integers(6, 50))
    p = draw(st.integers(2, 5))
    K = draw(st.integers(2, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.random((n, p)) < rng.uniform(0.2, 0.8)
    if draw(st.booleans()):  # duplicated columns: equal children, ties between splits
        X[:, -1] = X[:, 0]
    y = (X[:, 0] ^ X[:, 1]).astype(int) % K
    y = np.where(rng.random(n) < 0.25, rng.integers(0, K, n), y)
    # integer weights take the fast paths; fractional ones the checked loop and the recursion
    kind = draw(st.sampled_from(["unit", "integer", "fraction"]))
    weights = {
        "unit": None,
        "integer": rng.integers(1, 5, n).astype(float),
        "fraction": rng.integers(1, 5, n) / 4.0 + 0.1,
    }[kind]
    return Dataset.from_arrays(X, y, sample_weight=weights)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=_tables(),
    depth=st.integers(1, 4),
    lam=st.sampled_from([0.0, 0.005, 0.02, 0.1]),
    epsilon=st.sampled_from([0.0, 0.05, 0.5, 3.0]),
    leaves=st.sampled_from(["any", "majority"]),
)
def test_count_only_equals_the_listable_set_and_the_unpruned_count(
    data, depth, lam, epsilon, leaves
):
    problem = RashomonProblem(data, lam=lam, max_depth=depth, epsilon=epsilon, leaves=leaves)
    listed = build_rashomon(problem)
    counted = build_rashomon(problem, count_only=True)
    assert listed.complete and counted.complete
    assert counted.optimum == listed.optimum
    expected = _expected(data, depth, leaves, lam, listed.bound)
    assert _histogram(listed) == expected
    assert _histogram(counted) == expected
    assert counted.count() == listed.count() == sum(expected.values())


@pytest.mark.parametrize(
    ("n_features", "depth"),
    [
        (12, 4),  # past 2^64 trees: cells past 2^64 from u64 sides (the fast path)
        (7, 6),  # sides past 2^64, the root past 2^128: the checked loop and big counts
    ],
)
def test_counts_past_64_and_128_bits_are_exact(n_features, depth):
    rng = np.random.default_rng(n_features)
    X = rng.random((40, n_features)) < 0.5
    y = (X[:, 0] ^ X[:, 1]).astype(int)
    data = Dataset.from_arrays(X, y)
    # lam 0 and a bound above every tree: the whole space
    problem = RashomonProblem(data, lam=0.0, max_depth=depth, epsilon=1.0, absolute=True)
    counted = build_rashomon(problem, count_only=True)
    listed = build_rashomon(problem)
    expected = _expected(data, depth, "any", 0.0, counted.bound)
    assert sum(expected.values()) > 2**64
    assert _histogram(counted) == _histogram(listed) == expected

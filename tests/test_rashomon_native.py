"""The native Rashomon build (core/native/rashomon.cpp) against an unpruned count.

tests/test_rashomon.py checks the set tree by tree against an explicit enumeration on tiny
tables; here the counts are checked on tables too large to enumerate (up to 10^9 trees) against
:func:`odtkit.testing.brute_force_rashomon_histogram`, which counts every tree of the space
with no bound and no pruning. Every sub-problem the build skips, every budget it hands a child
and every rebuild with a larger budget is covered by these equalities.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import _native, datasets, metrics, rashomon, testing
from odtkit.constraints import MinLeafSupport
from odtkit.core.rashomon import RashomonProblem, build_rashomon
from odtkit.datasets import Dataset


def _set_histogram(
    reference: dict[tuple[float, int], int], total_weight: float, lam: float, bound: float
) -> dict[tuple[float, int], int]:
    return {
        key: count
        for key, count in reference.items()
        if key[0] / total_weight + lam * key[1] <= bound + 1e-9
    }


def _optimum(reference: dict[tuple[float, int], int], total_weight: float, lam: float) -> float:
    return min(e / total_weight + lam * k for e, k in reference)


@st.composite
def _tables(draw):
    n = draw(st.integers(8, 60))
    p = draw(st.integers(2, 6))
    K = draw(st.integers(2, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.random((n, p)) < rng.uniform(0.2, 0.8)
    # a planted signal with label noise gives sets with real structure, not only ties
    y = (X[:, 0] ^ X[:, 1]).astype(int) % K
    y = np.where(rng.random(n) < 0.2, rng.integers(0, K, n), y)
    weights = rng.integers(1, 4, n).astype(float) if draw(st.booleans()) else None
    return Dataset.from_arrays(X, y, sample_weight=weights)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=_tables(),
    depth=st.integers(1, 4),
    lam=st.sampled_from([0.0, 0.005, 0.01, 0.03, 0.1]),
    epsilon=st.sampled_from([0.0, 0.02, 0.1, 0.5]),
    leaves=st.sampled_from(["any", "majority"]),
)
def test_the_histogram_is_the_unpruned_count(data, depth, lam, epsilon, leaves):
    reference = testing.brute_force_rashomon_histogram(data, max_depth=depth, leaves=leaves)
    W = data.total_weight
    opt = _optimum(reference, W, lam)
    core = build_rashomon(
        RashomonProblem(data, lam=lam, max_depth=depth, epsilon=epsilon, leaves=leaves)
    )
    assert core.complete and core.optimum == pytest.approx(opt, abs=1e-9)
    expected = _set_histogram(reference, W, lam, core.bound)
    hist = core.histogram()
    keys = zip(hist["misclassified"], hist["leaves"], hist["count"], strict=True)
    got = {(float(e), int(k)): int(c) for e, k, c in keys}
    assert got == expected
    assert core.count() == sum(expected.values())
    # objective order (up to rounding) and the objectives' agreement with the keys
    objectives = hist["objective"].to_numpy(float)
    assert (np.diff(objectives) >= -1e-12).all()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_tables(), depth=st.integers(1, 3), epsilon=st.sampled_from([0.05, 0.3]))
def test_count_without_a_feature_is_the_count_where_it_cannot_split(data, depth, epsilon):
    lam = 0.01
    core = build_rashomon(RashomonProblem(data, lam=lam, max_depth=depth, epsilon=epsilon))
    for j in range(data.n_features):
        # a constant column is never admissible: the same space minus the trees that use j
        X = data.X.copy()
        X[:, j] = False
        masked = Dataset(X, data.y, data.classes, data.feature_names, data.name, data.weights)
        reference = testing.brute_force_rashomon_histogram(masked, max_depth=depth)
        expected = sum(_set_histogram(reference, data.total_weight, lam, core.bound).values())
        assert core.count_without(j) == expected


@pytest.mark.parametrize(("depth", "lam", "epsilon"), [(3, 0.01, 0.2), (4, 0.01, 0.05)])
def test_monk2_counts_equal_the_unpruned_count(depth, lam, epsilon):
    data = datasets.load("monk2")
    reference = testing.brute_force_rashomon_histogram(data, max_depth=depth)
    W = data.total_weight
    bound = _optimum(reference, W, lam) * (1 + epsilon)
    core = build_rashomon(RashomonProblem(data, lam=lam, max_depth=depth, epsilon=epsilon))
    assert core.count() == sum(_set_histogram(reference, W, lam, bound).values())


def test_listed_trees_score_their_keys_and_lie_within_the_bound():
    data = datasets.load("monk2")
    core = build_rashomon(RashomonProblem(data, lam=0.01, max_depth=5, epsilon=0.05))
    n = core.count()
    assert 1_000 < n < 100_000  # 22,050 on the bundled monk2
    rng = np.random.default_rng(0)
    for index in rng.choice(n, size=60, replace=False).tolist() + [0, n - 1]:
        tree = core.tree(index)
        assert tree.depth <= 5
        score = metrics.objective(tree, data, lam=0.01)
        assert score == pytest.approx(core.objectives(index, index + 1)[0], abs=1e-9)
        assert score <= core.bound + 1e-9
    assert core.tree(0) == core.tree(0) and metrics.objective(
        core.tree(0), data, lam=0.01
    ) == pytest.approx(core.optimum, abs=1e-9)
    codes = core.codes(n - 5, n)
    assert codes.shape[0] == 5


@pytest.mark.parametrize("limit", [{"time_limit": 1e-4}, {"memory_limit_mb": 1e-3}])
def test_a_limit_leaves_a_valid_partial_set(limit):
    data, _ = testing.planted_tree_dataset(5, 2_000, 30, 5, 0.15)
    core = build_rashomon(RashomonProblem(data, lam=0.001, max_depth=5, epsilon=0.2), **limit)
    if core.complete:  # a fast machine may finish first: nothing to check then
        return
    assert core.status in {"time_limit", "memory_limit"}
    n = core.count()
    for index in range(min(n, 50)):
        assert metrics.objective(core.tree(index), data, lam=0.001) <= core.bound + 1e-9


def test_out_of_range_indices_are_refused():
    data = datasets.load("monk1")
    core = build_rashomon(RashomonProblem(data, lam=0.02, max_depth=2, epsilon=0.0))
    with pytest.raises(IndexError):
        core.tree(core.count())
    with pytest.raises(IndexError):
        core.codes(0, core.count() + 1)
    with pytest.raises(IndexError):
        core.count_without(data.n_features)


@settings(max_examples=200, deadline=None)
@given(a=st.integers(0, 2**300), b=st.integers(1, 2**300))
def test_count_arithmetic_is_exact_beyond_128_bits(a, b):
    total, product, difference, quotient, remainder, order = _native._count_arithmetic(
        format(a, "x"), format(b, "x")
    )
    assert int(total, 16) == a + b and int(product, 16) == a * b
    assert difference == ("-" if a < b else format(a - b, "x"))
    assert (int(quotient, 16), int(remainder, 16)) == divmod(a, b)
    assert order == (a > b) - (a < b)


@pytest.mark.parametrize(
    ("constraints", "build"),
    [
        # OPT certified in the set's own memo, then its build
        (None, "rashomon_build_certified"),
        # a constraint: the search certifies OPT, then the build
        ([MinLeafSupport(weight=1)], "rashomon_build"),
    ],
)
def test_ctrl_c_during_the_build_returns_a_valid_partial_set(constraints, build):
    from conftest import sigint_inside

    from odtkit.core import rashomon as engine

    # OPT is certified in ~0.05 s, the build of ~10^26 trees would take far longer
    data, _ = testing.planted_tree_dataset(5, 800, 30, 5, 0.15)
    with sigint_inside(engine._native, build, after=0.05) as sent:
        core = build_rashomon(
            RashomonProblem(data, lam=0.001, max_depth=4, epsilon=1.0, constraints=constraints),
            time_limit=120,
        )
    assert sent.is_set()
    if core.complete:  # the build ended before the signal was polled: nothing to check
        return
    assert core.status == "interrupted"
    for index in range(min(core.count(), 50)):
        assert metrics.objective(core.tree(index), data, lam=0.001) <= core.bound + 1e-9


def test_the_engine_the_api_and_the_oracle_check_one_problem_one_way():
    # RashomonProblem is the one validation of (dataset, lam, max_depth, epsilon, absolute,
    # leaves): rashomon() and the oracle read it too (the oracle once let absolute="yes" by)
    data = datasets.load("monk1")
    bad = {"lam": 0.01, "max_depth": 2, "epsilon": 0.1, "absolute": "yes"}
    for call in (RashomonProblem, rashomon, testing.brute_force_rashomon_set):
        with pytest.raises(TypeError, match="absolute must be a bool"):
            call(data, **bad)
    with pytest.raises(TypeError, match="problem must be a RashomonProblem"):
        build_rashomon(data)
    problem = RashomonProblem(data, lam=0.01, max_depth=99)
    assert problem.max_depth == data.n_features and problem.leaves == "any"

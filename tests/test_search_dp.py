"""method="dp" against independent truths: the brute-force oracle, metrics.objective, the
worked example of docs/formulations-search-and-pruning.md §6.3, and its own ablations/limits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import metrics
from odtkit.core import SearchOptions, search_tree
from odtkit.core._problem import build_problem
from odtkit.datasets import Dataset
from odtkit.results import Status
from odtkit.testing import (
    EXAMPLE_A_OPTIMA,
    LAMBDAS,
    brute_force_tree,
    dataset_strategy,
    example_dataset_a,
    random_dataset,
)

DP_BOUNDS = ("equivalent_points", "lookahead", "support", "similar_support", "depth2")
DEPTHS = (1, 2, 3, None)


def oracle(dataset: Dataset, lam: float, max_depth: int | None) -> float:
    depth = dataset.n_features if max_depth is None else max_depth
    return brute_force_tree(dataset, lam=lam, max_depth=depth)[1]


def check_certified(result, dataset: Dataset, lam: float, max_depth: int | None) -> None:
    """The invariants every finished dp result satisfies, independent of the oracle."""
    assert result.status == "optimal"
    assert result.method == "dp"
    assert metrics.objective(result.tree, dataset, lam=lam) == pytest.approx(
        result.objective, abs=1e-9
    )
    assert result.lower_bound == pytest.approx(result.objective, abs=1e-12)
    if max_depth is not None:
        assert result.tree.depth <= max_depth
    assert list(result.trace.columns) == ["time", "incumbent", "bound"]
    assert (np.diff(result.trace["incumbent"]) <= 1e-12).all()


# --------------------------------------------------------------------------------------------
# preprocessing
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(25))
def test_problem_collapses_rows_and_counts_minorities(seed: int) -> None:
    d = random_dataset(seed, n_classes=2 + seed % 2, weighted=seed % 2 == 0)
    p = build_problem(d)
    rows, inverse = np.unique(d.X, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    assert p.n_points == len(rows)
    assert p.n_features == d.n_features and p.n_classes == d.n_classes
    assert p.total_weight == pytest.approx(d.total_weight)
    cw = np.zeros((len(rows), d.n_classes))
    np.add.at(cw, (inverse, d.y), d.weights)
    assert p.point_minority_total == pytest.approx((cw.sum(1) - cw.max(1)).sum())
    # the native point numbering is a relabelling of numpy's: same partition, same weights
    sample_point = np.asarray(p.sample_point)
    native_cw = np.asarray(p.point_class_weight).reshape(p.n_points, d.n_classes)
    for u in range(p.n_points):
        members = sample_point == u
        assert len(set(inverse[members])) == 1
        np.testing.assert_allclose(native_cw[u], cw[inverse[members][0]])
        first = np.flatnonzero(members)[0]
        for j in range(d.n_features):
            assert p.feature(j).to_numpy()[u] == d.X[first, j]
    assert p.integral  # integer weights use the exact bit-plane sums


def test_fractional_weights_use_the_double_path() -> None:
    d = random_dataset(3, weighted=True)
    d2 = Dataset(d.X, d.y, d.classes, d.feature_names, d.name, d.weights * 0.37)
    p = build_problem(d2)
    assert not p.integral
    for lam in (0.0, 0.02, 0.1):
        for depth in (2, None):
            r = search_tree(d2, lam=lam, max_depth=depth)
            assert r.objective == pytest.approx(oracle(d2, lam, depth), abs=1e-9)


# --------------------------------------------------------------------------------------------
# the worked example (§6.3)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lam", sorted(EXAMPLE_A_OPTIMA))
def test_example_dataset_a_table(lam: float) -> None:
    d = example_dataset_a()
    depth1, depth2 = EXAMPLE_A_OPTIMA[lam]
    assert search_tree(d, lam=lam, max_depth=1).objective == pytest.approx(depth1, abs=1e-6)
    for depth in (2, 3, None):
        r = search_tree(d, lam=lam, max_depth=depth)
        assert r.objective == pytest.approx(depth2, abs=1e-6)
        check_certified(r, d, lam, depth)
    if lam < 0.2:
        assert search_tree(d, lam=lam).tree.n_leaves == 4


# --------------------------------------------------------------------------------------------
# agreement with the oracle
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(120))
def test_seeded_instances_match_oracle(seed: int) -> None:
    K = 3 if seed % 4 == 3 else 2
    d = random_dataset(seed, n_classes=K, weighted=seed % 3 == 0)
    lam = LAMBDAS[seed % len(LAMBDAS)]
    for depth in DEPTHS:
        r = search_tree(d, lam=lam, max_depth=depth)
        assert r.objective == pytest.approx(oracle(d, lam, depth), abs=1e-9)
        check_certified(r, d, lam, depth)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dataset_strategy(max_samples=30, max_features=5),
    st.sampled_from(LAMBDAS),
    st.sampled_from(DEPTHS),
)
def test_binary_matches_oracle(d: Dataset, lam: float, depth: int | None) -> None:
    r = search_tree(d, lam=lam, max_depth=depth)
    assert r.objective == pytest.approx(oracle(d, lam, depth), abs=1e-9)
    check_certified(r, d, lam, depth)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dataset_strategy(max_samples=30, max_features=5, n_classes=3, weighted=True),
    st.sampled_from(LAMBDAS),
    st.sampled_from(DEPTHS),
)
def test_weighted_multiclass_matches_oracle(d: Dataset, lam: float, depth: int | None) -> None:
    r = search_tree(d, lam=lam, max_depth=depth)
    assert r.objective == pytest.approx(oracle(d, lam, depth), abs=1e-9)
    check_certified(r, d, lam, depth)


@pytest.mark.parametrize("seed", range(30))
def test_integer_weights_equal_duplicated_rows(seed: int) -> None:
    d = random_dataset(seed, weighted=True)
    reps = d.weights.astype(int)
    dup = Dataset(
        np.ascontiguousarray(np.repeat(d.X, reps, axis=0)),
        np.repeat(d.y, reps),
        d.classes,
        d.feature_names,
        "duplicated",
        None,
    )
    lam = LAMBDAS[seed % len(LAMBDAS)]
    for depth in (2, None):
        a = search_tree(d, lam=lam, max_depth=depth)
        b = search_tree(dup, lam=lam, max_depth=depth)
        assert a.objective == pytest.approx(b.objective, abs=1e-9)


# --------------------------------------------------------------------------------------------
# ablations and policies never change the optimum
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_bound_switches_do_not_change_optimum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = random_dataset(seed + 1000, n_classes=2 + seed % 2)
    lam = LAMBDAS[seed % len(LAMBDAS)]
    depth = DEPTHS[seed % len(DEPTHS)]
    reference = search_tree(d, lam=lam, max_depth=depth).objective
    switches = [{name: False} for name in DP_BOUNDS]
    switches.append({name: False for name in DP_BOUNDS})
    switches.append({name: bool(rng.random() < 0.5) for name in DP_BOUNDS})
    for bounds in switches:
        r = search_tree(d, lam=lam, max_depth=depth, options=SearchOptions(bounds=bounds))
        assert r.objective == pytest.approx(reference, abs=1e-9), bounds
        check_certified(r, d, lam, depth)
    for policy in ("lower_bound", "objective", "bfs", "dfs"):
        r = search_tree(d, lam=lam, max_depth=depth, options=SearchOptions(policy=policy))
        assert r.objective == pytest.approx(reference, abs=1e-9)


# --------------------------------------------------------------------------------------------
# upper bounds and limits
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_user_upper_bound(seed: int) -> None:
    d = random_dataset(seed + 2000)
    lam = LAMBDAS[seed % len(LAMBDAS)]
    best = oracle(d, lam, 3)
    for ub in (best, best + 0.05, 10.0, max(0.0, best - 0.05)):
        r = search_tree(d, lam=lam, max_depth=3, options=SearchOptions(upper_bound=ub))
        assert r.objective == pytest.approx(best, abs=1e-9)
        check_certified(r, d, lam, 3)


@pytest.mark.parametrize("seed", range(30))
def test_limits_return_a_valid_tree_and_bound(seed: int) -> None:
    d = random_dataset(seed + 3000, n_samples=40, n_features=6, n_classes=2 + seed % 2)
    lam = LAMBDAS[seed % len(LAMBDAS)]
    depth = DEPTHS[seed % len(DEPTHS)]
    best = oracle(d, lam, depth)
    for limits in ({"node_limit": 1}, {"node_limit": 3}, {"time_limit": 1e-6}):
        r = search_tree(d, lam=lam, max_depth=depth, **limits)
        assert r.status.stopped_early or r.status == Status.OPTIMAL
        assert r.lower_bound <= best + 1e-9 <= r.objective + 2e-9
        assert metrics.objective(r.tree, d, lam=lam) == pytest.approx(r.objective, abs=1e-9)
        if depth is not None:
            assert r.tree.depth <= depth
        if r.status == "optimal":
            assert r.objective == pytest.approx(best, abs=1e-9)
        else:
            assert r.n_explored <= limits.get("node_limit", 10**9)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2000))
def test_many_instances_match_oracle_slow(seed: int) -> None:
    K = 2 + seed % 2
    d = random_dataset(seed + 10_000, n_classes=K, weighted=seed % 5 == 0)
    lam = LAMBDAS[seed % len(LAMBDAS)]
    for depth in (1, 2, 3, 4, None):
        r = search_tree(d, lam=lam, max_depth=depth)
        assert r.objective == pytest.approx(oracle(d, lam, depth), abs=1e-9)
        check_certified(r, d, lam, depth)

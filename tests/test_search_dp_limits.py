"""The dp strategies built for limits, "queue" (GOSDT Algorithm 1,
docs/formulations-search-and-pruning.md §3.8) and "anytime"
(iterative deepening, depth-relaxed bounds and the recursive search on one memo), against
independent truths: the brute-force oracle, the recursive dp strategy, metrics.objective
(re-checked inside search_tree), and the anytime invariants of their lower bounds. Every test
but the last runs once per strategy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import metrics
from odtkit.core import SearchOptions, search_tree
from odtkit.datasets import Dataset, load
from odtkit.testing import LAMBDAS, brute_force_tree, dataset_strategy, random_dataset

DEPTHS = (1, 2, 3, None)


def oracle(dataset: Dataset, lam: float, max_depth: int | None) -> float:
    depth = dataset.n_features if max_depth is None else max_depth
    return brute_force_tree(dataset, lam=lam, max_depth=depth)[1]


def check_trace(result) -> None:
    """Anytime invariants: incumbent never rises, the global lower bound never falls."""
    assert list(result.trace.columns) == ["time", "incumbent", "bound"]
    assert len(result.trace) >= 1
    assert (np.diff(result.trace["incumbent"]) <= 1e-12).all()
    assert (np.diff(result.trace["bound"]) >= -1e-12).all()
    assert (result.trace["bound"] <= result.trace["incumbent"] + 1e-12).all()


def check_certified(result, dataset: Dataset, lam: float, max_depth: int | None) -> None:
    assert result.status == "optimal"
    assert result.method == "dp"
    assert metrics.objective(result.tree, dataset, lam=lam) == pytest.approx(
        result.objective, abs=1e-9
    )
    assert result.lower_bound == pytest.approx(result.objective, abs=1e-12)
    if max_depth is not None:
        assert result.tree.depth <= max_depth
    check_trace(result)


#: Every test below (but the last) runs once per strategy.
STRATEGY = pytest.mark.parametrize("strategy", ["queue", "anytime"])


def search(strategy: str, dataset: Dataset, lam: float, **kwargs):
    return search_tree(
        dataset, lam=lam, method="dp", **kwargs, options=SearchOptions(strategy=strategy)
    )


# --------------------------------------------------------------------------------------------
# optimum = oracle
# --------------------------------------------------------------------------------------------


@STRATEGY
@pytest.mark.parametrize("seed", range(40))
def test_matches_oracle_seeded(strategy: str, seed: int) -> None:
    d = random_dataset(seed, weighted=seed % 3 == 0, n_classes=3 if seed % 4 == 1 else 2)
    lam = LAMBDAS[seed % len(LAMBDAS)]
    max_depth = DEPTHS[seed % len(DEPTHS)]
    r = search(strategy, d, lam, max_depth=max_depth)
    check_certified(r, d, lam, max_depth)
    assert r.objective == pytest.approx(oracle(d, lam, max_depth), abs=1e-9)


@STRATEGY
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    d=dataset_strategy(max_samples=30, max_features=5),
    lam=st.sampled_from(LAMBDAS),
    max_depth=st.sampled_from(DEPTHS),
)
def test_matches_oracle_property(
    strategy: str, d: Dataset, lam: float, max_depth: int | None
) -> None:
    r = search(strategy, d, lam, max_depth=max_depth)
    check_certified(r, d, lam, max_depth)
    assert r.objective == pytest.approx(oracle(d, lam, max_depth), abs=1e-9)


@STRATEGY
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    d=dataset_strategy(max_samples=30, max_features=5, weighted=True),
    lam=st.sampled_from(LAMBDAS),
    max_depth=st.sampled_from(DEPTHS),
)
def test_matches_oracle_weighted(
    strategy: str, d: Dataset, lam: float, max_depth: int | None
) -> None:
    r = search(strategy, d, lam, max_depth=max_depth)
    check_certified(r, d, lam, max_depth)
    assert r.objective == pytest.approx(oracle(d, lam, max_depth), abs=1e-9)


@STRATEGY
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    d=dataset_strategy(max_samples=30, max_features=5, n_classes=3),
    lam=st.sampled_from(LAMBDAS),
    max_depth=st.sampled_from(DEPTHS),
)
def test_matches_oracle_three_classes(
    strategy: str, d: Dataset, lam: float, max_depth: int | None
) -> None:
    r = search(strategy, d, lam, max_depth=max_depth)
    check_certified(r, d, lam, max_depth)
    assert r.objective == pytest.approx(oracle(d, lam, max_depth), abs=1e-9)


@STRATEGY
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("off", ["equivalent_points", "lookahead", "support"])
def test_switching_a_bound_off_keeps_the_optimum(strategy: str, seed: int, off: str) -> None:
    d = random_dataset(1000 + seed)
    lam = LAMBDAS[(seed * 5) % len(LAMBDAS)]
    r = search(strategy, d, lam, bounds={off: False})
    check_certified(r, d, lam, None)
    assert r.objective == pytest.approx(oracle(d, lam, None), abs=1e-9)


@STRATEGY
@pytest.mark.parametrize("seed", range(10))
def test_external_upper_bound_valid_and_invalid(strategy: str, seed: int) -> None:
    d = random_dataset(2000 + seed, n_samples=30, n_features=5)
    lam = 0.01
    best = oracle(d, lam, None)
    exact = search(strategy, d, lam, upper_bound=best)
    check_certified(exact, d, lam, None)
    assert exact.objective == pytest.approx(best, abs=1e-9)
    # a bound no tree attains must not change the answer: the search drops it
    wrong = search(strategy, d, lam, upper_bound=max(best - 0.05, 0.0))
    check_certified(wrong, d, lam, None)
    assert wrong.objective == pytest.approx(best, abs=1e-9)


# --------------------------------------------------------------------------------------------
# agreement with the recursive strategy on bundled data
# --------------------------------------------------------------------------------------------


@STRATEGY
@pytest.mark.parametrize("name", ["monk1", "monk2", "monk3"])
@pytest.mark.parametrize("lam", [0.1, 0.025, 0.01])
@pytest.mark.parametrize("max_depth", [None, 3])
def test_equals_recursive_on_monks(
    strategy: str, name: str, lam: float, max_depth: int | None
) -> None:
    d = load(name)
    rec = search_tree(d, lam=lam, max_depth=max_depth, options=SearchOptions(strategy="recursive"))
    q = search(strategy, d, lam, max_depth=max_depth)
    check_certified(q, d, lam, max_depth)
    assert q.objective == pytest.approx(rec.objective, abs=1e-9)


# --------------------------------------------------------------------------------------------
# anytime: limits return a valid tree and a valid global bound
# --------------------------------------------------------------------------------------------


@STRATEGY
@pytest.mark.parametrize("node_limit", [1, 5, 50, 500])
def test_node_limit_gives_valid_tree_and_bound(strategy: str, node_limit: int) -> None:
    d = load("monk2")
    lam = 0.01
    truth = search_tree(d, lam=lam).objective
    r = search(strategy, d, lam, node_limit=node_limit)
    assert r.status == "node_limit"
    assert r.n_explored <= node_limit
    assert metrics.objective(r.tree, d, lam=lam) == pytest.approx(r.objective, abs=1e-9)
    assert r.lower_bound <= truth + 1e-12
    assert r.objective >= truth - 1e-12
    check_trace(r)


@STRATEGY
def test_node_limit_bound_rises_with_budget(strategy: str) -> None:
    # the root lower bound is monotone in the work done, so a larger budget never lowers it
    d = load("monk2")
    bounds = [search(strategy, d, 0.005, node_limit=n).lower_bound for n in (10, 1000, 20000)]
    assert bounds == sorted(bounds)


@STRATEGY
def test_tic_tac_toe_time_limit_bound_is_valid(strategy: str) -> None:
    d = load("tic-tac-toe")
    lam = 0.001
    r = search(strategy, d, lam, time_limit=0.5)
    assert r.status in ("time_limit", "optimal")
    assert metrics.objective(r.tree, d, lam=lam) == pytest.approx(r.objective, abs=1e-9)
    assert 0.0 < r.lower_bound <= r.objective
    check_trace(r)
    # the optimum 0.043 (spec benchmarks; certified by the recursive dp in the slow test below)
    assert r.lower_bound <= 0.0431


@STRATEGY
@pytest.mark.slow
def test_tic_tac_toe_bound_below_certified_optimum(strategy: str) -> None:
    d = load("tic-tac-toe")
    lam = 0.001
    truth = search_tree(d, lam=lam, time_limit=120)
    assert truth.status == "optimal"
    r = search(strategy, d, lam, time_limit=0.5)
    assert r.lower_bound <= truth.objective + 1e-12
    assert r.objective >= truth.objective - 1e-12


@STRATEGY
@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    d=dataset_strategy(max_samples=40, max_features=6, n_classes=2, weighted=True),
    lam=st.sampled_from(LAMBDAS),
    max_depth=st.sampled_from(DEPTHS),
)
def test_matches_oracle_slow(strategy: str, d: Dataset, lam: float, max_depth: int | None) -> None:
    r = search(strategy, d, lam, max_depth=max_depth)
    check_certified(r, d, lam, max_depth)
    assert r.objective == pytest.approx(oracle(d, lam, max_depth), abs=1e-9)


@STRATEGY
@pytest.mark.slow
@pytest.mark.parametrize("name", ["monk1", "monk2", "monk3", "car-evaluation"])
@pytest.mark.parametrize("lam", [0.01, 0.005])
@pytest.mark.parametrize("max_depth", [None, 4])
def test_equals_recursive_slow(strategy: str, name: str, lam: float, max_depth: int | None) -> None:
    d = load(name)
    rec = search_tree(d, lam=lam, max_depth=max_depth, options=SearchOptions(strategy="recursive"))
    q = search(strategy, d, lam, max_depth=max_depth, time_limit=120)
    check_certified(q, d, lam, max_depth)
    assert q.objective == pytest.approx(rec.objective, abs=1e-9)


def test_strategy_is_validated() -> None:
    d = random_dataset(0)
    with pytest.raises(ValueError, match="strategy"):
        search_tree(d, lam=0.01, options=SearchOptions(strategy="bfs"))
    with pytest.raises(ValueError, match="strategy"):
        search_tree(d, lam=0.01, method="bnb", options=SearchOptions(strategy="queue"))

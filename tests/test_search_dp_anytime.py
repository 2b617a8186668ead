"""strategy="anytime" where it differs from the other strategies: stopped anywhere, its tree and
bound still bracket the brute-force optimum (the depth-relaxed bounds and the paused slices are
valid); it is the default for an unlimited depth under a time limit; and on a planted instance
it beats the recursive search at the same amount of work. The oracle, certificate and
trace tests it shares with strategy="queue" are in test_search_dp_limits.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import metrics
from odtkit.core import SearchOptions, search_tree
from odtkit.datasets import Dataset
from odtkit.testing import LAMBDAS, brute_force_tree, dataset_strategy, planted_tree_dataset

DEPTHS = (1, 2, 3, None)


def oracle(dataset: Dataset, lam: float, max_depth: int | None) -> float:
    depth = dataset.n_features if max_depth is None else max_depth
    return brute_force_tree(dataset, lam=lam, max_depth=depth)[1]


def check_bracket(r, dataset: Dataset, lam: float, truth: float) -> None:
    """bound <= optimum <= incumbent, the incumbent re-evaluated, the trace monotone."""
    assert metrics.objective(r.tree, dataset, lam=lam) == pytest.approx(r.objective, abs=1e-9)
    assert r.lower_bound <= truth + 1e-12
    assert r.objective >= truth - 1e-12
    trace = r.trace
    assert (np.diff(trace["incumbent"]) <= 1e-12).all()
    assert (np.diff(trace["bound"]) >= -1e-12).all()
    assert (trace["bound"] <= truth + 1e-12).all()
    assert (trace["incumbent"] >= truth - 1e-12).all()
    assert trace["incumbent"].iloc[-1] == pytest.approx(r.objective, abs=1e-12)
    if r.status == "optimal":
        assert r.objective == pytest.approx(truth, abs=1e-9)
        assert r.lower_bound == pytest.approx(truth, abs=1e-12)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    d=dataset_strategy(max_samples=40, max_features=6),
    lam=st.sampled_from(LAMBDAS),
    max_depth=st.sampled_from(DEPTHS),
    node_limit=st.integers(1, 400),
)
def test_stopped_anywhere_the_answer_brackets_the_optimum(
    d: Dataset, lam: float, max_depth: int | None, node_limit: int
) -> None:
    # node limits stop it inside every phase (deepening, relaxed deepening, target search)
    r = search_tree(
        d,
        lam=lam,
        max_depth=max_depth,
        options=SearchOptions(strategy="anytime", node_limit=node_limit),
    )
    assert r.status in ("optimal", "node_limit")
    assert r.n_explored <= node_limit
    check_bracket(r, d, lam, oracle(d, lam, max_depth))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    d=dataset_strategy(max_samples=40, max_features=6, n_classes=3, weighted=True),
    lam=st.sampled_from(LAMBDAS),
    node_limit=st.integers(1, 400),
)
def test_stopped_anywhere_weighted_three_classes(d: Dataset, lam: float, node_limit: int) -> None:
    r = search_tree(d, lam=lam, options=SearchOptions(strategy="anytime", node_limit=node_limit))
    check_bracket(r, d, lam, oracle(d, lam, None))


@pytest.mark.parametrize("seed", range(6))
def test_relaxed_bound_alone_is_below_the_optimum(seed: int) -> None:
    # a planted depth-3 tree on 8 features: the relaxed deepening runs before the target
    # search each round, so small node limits stop while only it has raised the bound
    d, _ = planted_tree_dataset(seed, 150, 8, 3, 0.1)
    lam = 0.01
    truth = oracle(d, lam, None)
    for node_limit in (50, 200, 800, 3200):
        r = search_tree(
            d, lam=lam, options=SearchOptions(strategy="anytime", node_limit=node_limit)
        )
        check_bracket(r, d, lam, truth)


def test_default_strategy_is_anytime_only_for_unlimited_depth_under_a_time_limit() -> None:
    d, _ = planted_tree_dataset(0, 200, 8, 3, 0.05)
    anytime = search_tree(d, lam=0.01, time_limit=30)
    assert "relaxed_depth" in anytime.stats
    for kwargs in ({}, {"max_depth": 3, "time_limit": 30}, {"node_limit": 10**6}):
        assert "relaxed_depth" not in search_tree(d, lam=0.01, **kwargs).stats
    recursive = search_tree(d, lam=0.01, time_limit=30, options=SearchOptions(strategy="recursive"))
    assert anytime.status == recursive.status == "optimal"
    assert anytime.objective == pytest.approx(recursive.objective, abs=1e-9)


def test_upper_bound_invalid_is_reported() -> None:
    d, _ = planted_tree_dataset(3, 120, 6, 3, 0.1)
    lam = 0.01
    truth = oracle(d, lam, None)
    r = search_tree(d, lam=lam, options=SearchOptions(strategy="anytime", upper_bound=truth - 0.05))
    assert r.status == "optimal"
    assert r.objective == pytest.approx(truth, abs=1e-9)
    assert r.stats["upper_bound_invalid"] == 1.0


def test_beats_recursive_at_equal_work_on_a_planted_tree() -> None:
    # the issue-14 finding in small: a depth-5 planted tree with noise, stopped after the same
    # number of expanded sub-problems; anytime must hold a better tree and a better bound
    d, _ = planted_tree_dataset(1, 2000, 20, 5, 0.1)
    lam = 0.005
    limit = 60_000
    rec = search_tree(d, lam=lam, options=SearchOptions(strategy="recursive", node_limit=limit))
    any_ = search_tree(d, lam=lam, options=SearchOptions(strategy="anytime", node_limit=limit))
    assert rec.status == any_.status == "node_limit"
    assert any_.objective < rec.objective
    assert any_.lower_bound > 2 * rec.lower_bound
    # the depth-4 optimum is among the anytime incumbents (iterative deepening)
    depth4 = search_tree(d, lam=lam, max_depth=4)
    assert any_.objective <= depth4.objective + 1e-12

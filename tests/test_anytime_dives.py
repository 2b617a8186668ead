"""strategy="anytime" spends a share of its limit on depth-limited dives (the recursive DP at
depth 2, 3, ...) before the anytime DP (core/native/dp_dives.cpp, issue 27): any tree of bounded
depth is a tree of the unlimited problem, so the deepest dive that finishes within the share is a
floor for the incumbent, while the bound stays valid and a certified answer is the oracle's."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import metrics
from odtkit.core import SearchOptions, search_tree
from odtkit.testing import LAMBDAS, brute_force_tree, dataset_strategy, planted_tree_dataset

pytestmark = pytest.mark.filterwarnings("ignore::odtkit.core.search.TrivialAnswerWarning")


@pytest.mark.parametrize(
    ("spec", "lam", "node_limit", "depth"),
    [
        # planted depth-5 trees: the depth-5 optimum takes the recursive DP ~3,000 and ~9,000
        # expanded sub-problems; before the dives the anytime driver's deepening had only a
        # slice of the limit and stopped at 0.119 (optimum at depth 5: 0.092) and 0.301 (0.2275)
        ((1, 400, 14, 5, 0.05), 0.002, 10_000, 5),
        ((1, 2000, 20, 5, 0.1), 0.005, 40_000, 5),
    ],
)
def test_incumbent_under_a_node_limit_is_no_worse_than_a_depth_limited_optimum(
    spec: tuple, lam: float, node_limit: int, depth: int
) -> None:
    d, _ = planted_tree_dataset(*spec)
    bounded = search_tree(d, lam=lam, max_depth=depth, options=SearchOptions(strategy="recursive"))
    assert bounded.status == "optimal"
    r = search_tree(d, lam=lam, options=SearchOptions(strategy="anytime", node_limit=node_limit))
    assert r.status == "node_limit"
    assert r.n_explored <= node_limit
    assert r.objective <= bounded.objective + 1e-12
    assert metrics.objective(r.tree, d, lam=lam) == pytest.approx(r.objective, abs=1e-9)
    # the depth-two optimum and the greedy tree are floors too (the first dive)
    assert r.objective <= search_tree(d, lam=lam, max_depth=2).objective + 1e-12
    assert r.stats["dive_depth"] >= depth
    assert r.lower_bound <= bounded.objective


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    d=dataset_strategy(max_samples=40, max_features=6),
    lam=st.sampled_from(LAMBDAS),
)
def test_under_a_time_limit_it_certifies_the_oracle_optimum(d, lam: float) -> None:
    # a time limit that is never reached: the dives run (time-limited path) and the anytime DP
    # then certifies the brute-force optimum
    truth = brute_force_tree(d, lam=lam, max_depth=d.n_features)[1]
    r = search_tree(d, lam=lam, time_limit=600)
    assert r.status == "optimal"
    assert r.objective == pytest.approx(truth, abs=1e-9)
    assert r.lower_bound == pytest.approx(truth, abs=1e-9)
    assert metrics.objective(r.tree, d, lam=lam) == pytest.approx(truth, abs=1e-9)
    trace = r.trace
    assert (trace["bound"] <= truth + 1e-12).all()
    assert (trace["incumbent"] >= truth - 1e-12).all()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    d=dataset_strategy(max_samples=40, max_features=6),
    lam=st.sampled_from(LAMBDAS),
    node_limit=st.integers(3, 300),
)
def test_stopped_inside_the_dives_the_answer_brackets_the_optimum(
    d, lam: float, node_limit: int
) -> None:
    # a time limit far away plus a node limit: the dives take up to half of the nodes, so small
    # limits stop inside a dive or right after it
    truth = brute_force_tree(d, lam=lam, max_depth=d.n_features)[1]
    r = search_tree(d, lam=lam, time_limit=600, options=SearchOptions(node_limit=node_limit))
    assert r.status in ("optimal", "node_limit")
    assert r.n_explored <= node_limit
    assert r.lower_bound <= truth + 1e-12
    assert r.objective >= truth - 1e-12
    assert metrics.objective(r.tree, d, lam=lam) == pytest.approx(r.objective, abs=1e-9)
    trace = r.trace
    assert (trace["bound"] <= truth + 1e-12).all()
    assert (trace["incumbent"] >= truth - 1e-12).all()
    if r.status == "optimal":
        assert r.objective == pytest.approx(truth, abs=1e-9)


def test_dives_are_skipped_without_a_limit_and_under_a_depth_limit() -> None:
    d, _ = planted_tree_dataset(0, 200, 8, 3, 0.05)
    assert "dive_depth" in search_tree(d, lam=0.01, time_limit=30).stats
    for kwargs in ({}, {"max_depth": 3, "time_limit": 30}):
        assert (
            "dive_depth"
            not in search_tree(
                d, lam=0.01, **kwargs, options=SearchOptions(strategy="anytime")
            ).stats
        )

"""search_tree(constraints=...): the native dp under a minimum leaf support and forbidden
features against the brute-force constrained oracle (odtkit.testing), every dp strategy, limits,
infeasible statements, the one-line refusals of search_refusal, and the native
min_leaf_weight fuzzed (never a crash, never a silently ignored value)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from _constraint_oracle import agree_with_oracle
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit import Dataset, Fairness, _native, search_tree
from odtkit.constraints import (
    ClassRecall,
    FalsePositiveRate,
    FeatureBudget,
    ForbidFeatures,
    MaxLeaves,
    MinLeafSupport,
    Predict,
    RequireFeatures,
    resolve,
)
from odtkit.core import SearchOptions
from odtkit.core._problem import build_problem, decode_tree, encode_tree, search_config
from odtkit.core.search import search_refusal
from odtkit.testing import brute_force_constrained_tree, random_dataset

STRATEGIES = ("recursive", "queue", "anytime")
TOL = 1e-9


def instance(seed: int, n: int, p: int, n_classes: int, weights: str) -> Dataset:
    """A random instance; ``weights``: "none", "integer" (1..3) or "fraction" (0.1..2)."""
    data = random_dataset(seed, n, p, n_classes=n_classes, weighted=weights == "integer")
    if weights == "fraction":
        rng = np.random.default_rng(seed + 1)
        data = dataclasses.replace(data, sample_weight=rng.uniform(0.1, 2.0, size=n))
    return data


def min_leaf(data: Dataset, kind: str, level: float) -> MinLeafSupport:
    """A support of ``level`` x the total weight, as share= or as weight=; a weight level is
    snapped to a row's weight now and then, so leaves that meet it exactly occur."""
    if kind == "share":
        return MinLeafSupport(share=level)
    weight = level * data.total_weight
    if level < 0.5:
        weight = float(np.sort(data.weights)[: max(1, int(level * data.n_samples))].sum())
    return MinLeafSupport(weight=weight)


def check_against_oracle(data, constraints, *, lam, depth, strategy, method="dp"):
    def solve(data, constraints, *, lam, depth):
        options = SearchOptions(strategy=strategy)
        return search_tree(
            data, lam=lam, max_depth=depth, method=method, constraints=constraints, options=options
        )

    tree, optimum, result = agree_with_oracle(
        solve, data, constraints, lam=lam, depth=depth, tol=TOL
    )
    if tree is None:
        assert "min_leaf_support" in result.message
        return
    assert result.lower_bound == pytest.approx(optimum, abs=TOL)


# --------------------------------------------------------------------------------------------
# exactness against the oracle
# --------------------------------------------------------------------------------------------

instances = st.builds(
    lambda seed, n, k, w: (seed, n, k, w),
    st.integers(0, 2**32 - 1),
    st.integers(3, 14),
    st.sampled_from((2, 3)),
    st.sampled_from(("none", "integer", "fraction")),
)
lams = st.sampled_from((0.0, 0.0, 0.01, 0.04, 0.15))


LEVELS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.45, 0.5, 0.7, 1.0, 1.2)


@settings(max_examples=150, deadline=None)
@given(
    instances,
    st.integers(1, 2),
    lams,
    st.sampled_from(("share", "weight")),
    st.sampled_from(LEVELS),
    st.sampled_from(STRATEGIES),
)
def test_min_leaf_support_matches_oracle(inst, depth, lam, kind, level, strategy):
    seed, n, k, weights = inst
    data = instance(seed, n, 4, k, weights)
    level = min(level, 1.0) if kind == "share" else level
    check_against_oracle(
        data, [min_leaf(data, kind, level)], lam=lam, depth=depth, strategy=strategy
    )


@settings(max_examples=8, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(4, 12),
    st.sampled_from(("none", "integer", "fraction")),
    lams,
    st.sampled_from(("share", "weight")),
    st.sampled_from(LEVELS[1:8]),
    st.sampled_from(STRATEGIES),
)
def test_min_leaf_support_matches_oracle_at_depth_three(
    seed, n, weights, lam, kind, level, strategy
):
    # depth three puts the depth-two solver under the root (the oracle enumerates ~10^5 trees
    # per binary example here, ~10^6 with three classes: binary only)
    data = instance(seed, n, 3, 2, weights)
    check_against_oracle(data, [min_leaf(data, kind, level)], lam=lam, depth=3, strategy=strategy)


@settings(max_examples=80, deadline=None)
@given(
    instances,
    st.integers(1, 2),
    lams,
    st.sets(st.integers(0, 3), min_size=1, max_size=4),
    st.sampled_from((None, 0.1, 0.25)),
    st.sampled_from(STRATEGIES),
)
def test_forbidden_features_and_min_leaf_match_oracle(inst, depth, lam, banned, share, strategy):
    seed, n, k, weights = inst
    data = instance(seed, n, 4, k, weights)
    names = [data.feature_names[j] for j in sorted(banned)]
    constraints: list = [ForbidFeatures(names)]
    if share is not None:
        constraints.append(MinLeafSupport(share=share))
    check_against_oracle(data, constraints, lam=lam, depth=depth, strategy=strategy)


@settings(max_examples=20, deadline=None)
@given(instances, lams, st.integers(0, 3))
def test_forbidden_features_with_bnb_match_oracle(inst, lam, banned):
    seed, n, k, weights = inst
    data = instance(seed, n, 4, k, weights)
    constraints = [ForbidFeatures([data.feature_names[banned]])]
    check_against_oracle(data, constraints, lam=lam, depth=2, strategy=None, method="bnb")


@settings(max_examples=25, deadline=None)
@given(instances, lams, st.sampled_from((0.05, 0.15, 0.3)), st.sampled_from(STRATEGIES))
def test_unlimited_depth_matches_the_oracle_at_depth_p(inst, lam, share, strategy):
    # a feasible tree never tests a feature twice on a path (one side would be empty), so the
    # unlimited optimum is the depth-p one
    seed, n, k, weights = inst
    data = instance(seed, n, 2, k, weights)
    constraints = [MinLeafSupport(share=share)]
    _, optimum = brute_force_constrained_tree(data, constraints, lam=lam, max_depth=2)
    result = search_tree(
        data, lam=lam, constraints=constraints, options=SearchOptions(strategy=strategy)
    )
    assert result.status == "optimal"
    assert result.objective == pytest.approx(optimum, abs=TOL)
    assert not resolve(constraints, data).violations(result.model, data)


@settings(max_examples=40, deadline=None)
@given(
    instances,
    st.sampled_from((1, 2, None)),
    st.sampled_from((0.0, 0.01)),
    st.sampled_from((0.05, 0.2)),
    st.sampled_from(STRATEGIES),
    st.integers(1, 6),
)
def test_a_tiny_node_limit_keeps_a_feasible_incumbent_and_a_valid_bound(
    inst, depth, lam, share, strategy, nodes
):
    seed, n, k, weights = inst
    data = instance(seed, n, 3 if depth else 2, k, weights)
    constraints = [MinLeafSupport(share=share)]
    _, optimum = brute_force_constrained_tree(data, constraints, lam=lam, max_depth=depth or 2)
    result = search_tree(
        data,
        lam=lam,
        max_depth=depth,
        constraints=constraints,
        options=SearchOptions(strategy=strategy, node_limit=nodes),
    )
    assert result.status in ("optimal", "node_limit")
    assert not resolve(constraints, data).violations(result.model, data)
    assert result.objective >= optimum - TOL
    assert result.lower_bound <= optimum + TOL


def test_a_time_limit_at_unlimited_depth_keeps_a_feasible_tree():
    # the anytime strategy with dives and polishing (unlimited depth, a time limit)
    data = random_dataset(7, 400, 12, weighted=True)
    constraints = [MinLeafSupport(share=0.04)]
    result = search_tree(data, lam=0.001, time_limit=0.3, constraints=constraints)
    assert not resolve(constraints, data).violations(result.model, data)
    assert result.lower_bound <= result.objective + TOL


def test_depth_two_solver_and_generic_recursion_agree():
    # the depth-two solver honours the support as the generic recursion does
    for seed in range(6):
        data = random_dataset(seed, 120, 8, n_classes=2 + seed % 2, weighted=seed % 2 == 1)
        for share in (0.03, 0.12, 0.2):
            runs = [
                search_tree(
                    data,
                    lam=0.005,
                    max_depth=3,
                    constraints=[MinLeafSupport(share=share)],
                    options=SearchOptions(bounds={"depth2": on}),
                )
                for on in (True, False)
            ]
            assert runs[0].stats["depth2_calls"] > 0
            assert runs[1].stats["depth2_calls"] == 0
            assert runs[0].objective == pytest.approx(runs[1].objective, abs=TOL)


def test_the_support_changes_the_optimum_and_every_leaf_meets_it():
    data = random_dataset(3, 200, 10, weighted=True)
    free = search_tree(data, lam=0.0, max_depth=3)
    result = search_tree(data, lam=0.0, max_depth=3, constraints=[MinLeafSupport(share=0.15)])
    floor = 0.15 * data.total_weight
    leaves = resolve([MinLeafSupport(share=0.15)], data).leaf_weights(result.model, data)
    assert leaves.min() >= floor - 1e-9
    assert result.objective >= free.objective - TOL
    assert result.stats["constraints"] == "min-leaf-share=0.15"


# --------------------------------------------------------------------------------------------
# infeasible, ResolvedConstraints, fairness
# --------------------------------------------------------------------------------------------


def test_a_support_above_the_total_weight_is_infeasible():
    data = random_dataset(1, 12, 3, weighted=True)
    for c in (MinLeafSupport(weight=data.total_weight * 1.01), MinLeafSupport(weight=1e12)):
        result = search_tree(data, lam=0.01, max_depth=2, constraints=[c])
        assert result.status == "infeasible"
        assert result.model is None
        assert math.isinf(result.lower_bound)
        assert "min_leaf_support" in result.message


def test_the_whole_weight_admits_only_the_single_leaf():
    data = random_dataset(2, 12, 3, weighted=True)
    for c in (MinLeafSupport(share=1.0), MinLeafSupport(weight=data.total_weight)):
        for strategy in STRATEGIES:
            result = search_tree(
                data, lam=0.0, constraints=[c], options=SearchOptions(strategy=strategy)
            )
            assert result.status == "optimal"
            assert result.model.is_leaf


def test_a_resolved_statement_is_taken_as_it_is():
    data = random_dataset(4, 14, 4)
    resolved = resolve([MinLeafSupport(share=0.2), ForbidFeatures(["x1"])], data)
    a = search_tree(data, lam=0.01, max_depth=2, constraints=resolved)
    b = search_tree(data, lam=0.01, max_depth=2, constraints=list(resolved.constraints))
    assert a.objective == b.objective
    assert 1 not in encode_tree(a.model)


def test_one_fairness_in_constraints_is_the_fair_search():
    data = random_dataset(5, 30, 4)
    protected = np.arange(data.n_samples) % 2
    fairness = Fairness("sp", protected=protected, delta=0.1, positive_class=1)
    a = search_tree(data, lam=0.01, max_depth=2, constraints=[fairness])
    b = search_tree(data, lam=0.01, max_depth=2, fairness=fairness)
    assert a.objective == pytest.approx(b.objective, abs=TOL)
    assert a.stats["fairness_gap"] <= 0.1 + 1e-9


# --------------------------------------------------------------------------------------------
# refusals: one line naming the constraint
# --------------------------------------------------------------------------------------------


def refused(data):
    fairness = Fairness("sp", protected=np.arange(data.n_samples) % 2, delta=0.1)
    other = Fairness("sp", protected=np.arange(data.n_samples) % 3 == 0, delta=0.2)
    return [
        ([MaxLeaves(3)], "bnb", "max-leaves=3"),
        ([FeatureBudget(1, 2, per="split")], "bnb", "feature_budget"),
        # two budgets that are not multiples of one another: the budgeted dp has one resource
        ([MaxLeaves(3), FeatureBudget({"x0": 2}, 3)], "dp", "feature_budget"),
        ([FeatureBudget(1, 2, per="feature")], "dp", "feature_budget"),
        ([RequireFeatures(["x0"])], "dp", "require_features"),
        ([ClassRecall(1, at_least=0.5)], "dp", "class_recall"),
        ([FalsePositiveRate(1, at_most=0.5)], "dp", "false_positive_rate"),
        ([Predict([0], 1)], "dp", "predict"),
        ([MinLeafSupport(share=0.1)], "bnb", "min-leaf-share=0.1"),
        ([fairness, MinLeafSupport(share=0.1)], "dp", "fairness"),
        ([MinLeafSupport(share=0.1), fairness], "dp", "fairness"),
        ([fairness, other], "dp", "fairness"),
        ([fairness], "bnb", "fairness"),
    ]


def test_the_refusal_is_one_line_naming_the_constraint():
    data = random_dataset(6, 20, 3)
    for constraints, method, name in refused(data):
        message = search_refusal(resolve(constraints, data), method)
        assert message and "\n" not in message
        assert name in message
        assert "MIP" in message
        with pytest.raises(ValueError) as info:
            search_tree(data, lam=0.01, max_depth=2, method=method, constraints=constraints)
        assert str(info.value) == message


def test_what_the_search_takes_is_not_refused():
    data = random_dataset(6, 20, 3)
    fairness = Fairness("sp", protected=np.arange(data.n_samples) % 2, delta=0.1)
    for constraints, method in (
        ([], "dp"),
        ([MinLeafSupport(share=0.1)], "dp"),
        ([ForbidFeatures(["x0"])], "bnb"),
        ([ForbidFeatures(["x0"]), MinLeafSupport(weight=2)], "dp"),
        ([fairness], "dp"),
        ([MaxLeaves(3)], "dp"),
        ([FeatureBudget(1, 2, per="split"), MinLeafSupport(share=0.1)], "dp"),
        ([MaxLeaves(4), ForbidFeatures(["x0"])], "dp"),
    ):
        assert search_refusal(resolve(constraints, data), method) == ""


def test_constraints_on_a_raw_table_are_refused():
    data = random_dataset(6, 20, 3)
    with pytest.raises(TypeError, match="constraints"):
        search_tree(
            data.X.astype(float), y=data.y, lam=0.01, constraints=[MinLeafSupport(share=0.1)]
        )


# --------------------------------------------------------------------------------------------
# the native min_leaf_weight: fuzzed, never a crash, never ignored
# --------------------------------------------------------------------------------------------

NATIVE_DP = (_native.search_dp, _native.search_dp_queue, _native.search_dp_anytime)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, -0.1, 1.0 + 1e-9, 2.0])
def test_a_bad_native_min_leaf_weight_is_refused_naming_it(value):
    data = random_dataset(8, 20, 3)
    problem = build_problem(data)
    config = search_config(0.01, time_limit=None, node_limit=None, memory_limit_mb=None, bounds={})
    config.min_leaf_weight = value
    for search in NATIVE_DP:
        with pytest.raises(ValueError, match="min_leaf_weight"):
            search(problem, config)


@pytest.mark.parametrize("search", [_native.search_bnb, _native.search_corels])
def test_searches_without_the_support_refuse_it(search):
    data = random_dataset(8, 20, 3)
    problem = build_problem(data)
    config = search_config(0.01, time_limit=None, node_limit=None, memory_limit_mb=None, bounds={})
    config.min_leaf_weight = 0.1
    with pytest.raises(ValueError, match="min_leaf_weight"):
        search(problem, config)


def test_the_rashomon_set_honours_the_support():
    """The native Rashomon build takes the support (tests/test_rashomon_constraints.py checks
    the set against the oracle): every leaf of every tree it holds meets it."""
    data = random_dataset(8, 20, 3)
    problem = build_problem(data)
    config = search_config(0.01, time_limit=None, node_limit=None, memory_limit_mb=None, bounds={})
    config.min_leaf_weight = 0.2
    config.max_depth = 2
    native = _native.rashomon_build(problem, config, 1.0, False)
    n = int(native.count(), 16)
    assert n > 0
    floor = 0.2 * data.total_weight
    for i in range(n):
        tree = decode_tree(native.tree(format(i, "x")))
        support = np.bincount(tree.apply(data.X), weights=data.weights, minlength=tree.n_leaves)
        assert support.min() >= floor - 1e-9


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from((0.0, 5e-324, 1e-300, 1e-12, 0.01, 0.3, 0.5, 0.5000001, 0.99, 1.0)),
    st.sampled_from((-1, 0, 1, 2, 3)),
    st.sampled_from((0.0, 0.02, 1.0)),
)
def test_native_dp_never_crashes_and_honours_any_support(seed, share, depth, lam):
    data = random_dataset(seed, None, None, n_classes=2 + seed % 2, weighted=seed % 3 == 0)
    problem = build_problem(data)
    for search in NATIVE_DP:
        config = search_config(
            lam, time_limit=None, node_limit=None, memory_limit_mb=None, bounds={}, max_depth=depth
        )
        config.min_leaf_weight = share
        out = search(problem, config)
        assert math.isfinite(out.objective)
        assert out.lower_bound <= out.objective + TOL
        tree = decode_tree(out.tree)
        leaves = np.bincount(tree.apply(data.X), weights=data.weights, minlength=tree.n_leaves)
        assert leaves.min() >= share * data.total_weight * (1 - 1e-12) - 1e-300

"""The budgeted search (odtkit.core.budget): MaxLeaves and per-split FeatureBudget, with
MinLeafSupport and ForbidFeatures, against the brute-force constrained oracle; limits, Ctrl-C,
budget_of's conversions and refusals, and bad arguments."""

from __future__ import annotations

import math
import signal

import numpy as np
import pytest
from _constraint_oracle import agree_with_oracle
from conftest import sigint_at_first_poll
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit import _native, search_tree
from odtkit.constraints import (
    ClassRecall,
    FeatureBudget,
    ForbidFeatures,
    MaxLeaves,
    MinLeafSupport,
    RequireFeatures,
    resolve,
)
from odtkit.core.budget import budget_of, search_budgeted
from odtkit.datasets import Dataset
from odtkit.testing import brute_force_constrained_tree, random_dataset

LAMS = (0.0, 0.02, 0.07)


def solve(data: Dataset, constraints: list, *, lam: float, depth: int, **limits):
    """search_budgeted on what budget_of and the resolved constraints give."""
    resolved = resolve(constraints, data)
    converted = budget_of(resolved, max_depth=depth)
    assert not isinstance(converted, str), converted
    costs, budget = converted
    return search_budgeted(
        data,
        lam=lam,
        max_depth=depth,
        split_costs=costs,
        budget=budget,
        min_leaf_weight=resolved.min_leaf_weight,
        allowed=~resolved.forbidden,
        **limits,
    )


def check_against_oracle(data: Dataset, constraints: list, lam: float, depth: int) -> None:
    tree, optimum, result = agree_with_oracle(
        solve, data, constraints, lam=lam, depth=depth, tol=1e-9
    )
    if tree is not None:
        assert result.lower_bound == pytest.approx(optimum, abs=1e-9)


def instance(seed: int, n: int, p: int, classes: int, weighted: bool) -> Dataset:
    return random_dataset(seed, n, p, n_classes=classes, weighted=weighted)


common = settings(deadline=None, max_examples=50)


@common
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 14),
    p=st.integers(1, 4),
    k=st.integers(1, 5),
    depth=st.integers(1, 2),
    lam=st.sampled_from(LAMS),
    classes=st.integers(2, 3),
    weighted=st.booleans(),
)
def test_max_leaves_matches_the_oracle(seed, n, p, k, depth, lam, classes, weighted):
    data = instance(seed, n, p, classes, weighted)
    check_against_oracle(data, [MaxLeaves(k)], lam, depth)


@settings(deadline=None, max_examples=10)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 10),
    k=st.integers(1, 6),
    lam=st.sampled_from(LAMS),
    weighted=st.booleans(),
)
def test_max_leaves_at_depth_three_matches_the_oracle(seed, n, k, lam, weighted):
    data = instance(seed, n, 2, 2, weighted)
    check_against_oracle(data, [MaxLeaves(k)], lam, 3)


switch_settings = st.fixed_dictionaries(
    {
        "presolve": st.booleans(),
        "upper_bound": st.booleans(),
        "depth2": st.booleans(),
        "uncut_shallow": st.booleans(),
    }
)


@settings(deadline=None, max_examples=60)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 14),
    p=st.integers(1, 4),
    k=st.integers(1, 5),
    costs=st.one_of(st.none(), st.lists(st.integers(0, 3), min_size=4, max_size=4)),
    budget=st.integers(0, 5),
    share=st.sampled_from((0.0, 0.1, 0.3)),
    depth=st.integers(1, 2),
    lam=st.sampled_from(LAMS),
    classes=st.integers(2, 3),
    weighted=st.booleans(),
    bounds=switch_settings,
)
def test_every_switch_setting_matches_the_oracle(
    seed, n, p, k, costs, budget, share, depth, lam, classes, weighted, bounds
):
    """The presolve shortcut, the cut-back incumbent and the depth-two fronts, each on or off:
    the same optimum (with everything off, the plain budgeted DP with iterative deepening)."""
    data = instance(seed, n, p, classes, weighted)
    if costs is None:
        budgets: list = [MaxLeaves(k)]
    else:
        mapping = {name: c for name, c in zip(data.feature_names, costs, strict=False) if c}
        budgets = [FeatureBudget(mapping, budget) if mapping else MaxLeaves(k)]
    constraints = [*budgets, MinLeafSupport(share=share)]

    def solver(data, constraints, *, lam, depth):
        return solve(data, constraints, lam=lam, depth=depth, bounds=bounds)

    tree, optimum, result = agree_with_oracle(
        solver, data, constraints, lam=lam, depth=depth, tol=1e-9
    )
    if tree is not None:
        assert result.lower_bound == pytest.approx(optimum, abs=1e-9)


@settings(deadline=None, max_examples=15)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 10),
    k=st.integers(1, 6),
    lam=st.sampled_from(LAMS),
    weighted=st.booleans(),
    bounds=switch_settings,
)
def test_depth_three_with_every_switch_setting_matches_the_oracle(
    seed, n, k, lam, weighted, bounds
):
    """Depth three: the depth-two fronts below the root, the memoised fronts cut at the
    incumbent (uncut_shallow off) and recomputed for a looser request."""
    data = instance(seed, n, 2, 2, weighted)

    def solver(data, constraints, *, lam, depth):
        return solve(data, constraints, lam=lam, depth=depth, bounds=bounds)

    agree_with_oracle(solver, data, [MaxLeaves(k)], lam=lam, depth=3, tol=1e-9)


def test_the_shortcut_certifies_an_unconstrained_optimum_that_meets_the_budget():
    data = instance(4, 40, 4, 2, False)
    free = search_tree(data, lam=0.01, max_depth=3)
    k = free.model.n_leaves
    result = solve(data, [MaxLeaves(k)], lam=0.01, depth=3)
    assert result.stats["shortcut"] == 1.0
    assert result.objective == pytest.approx(free.objective, abs=1e-12)
    off = solve(data, [MaxLeaves(k)], lam=0.01, depth=3, bounds={"presolve": False})
    assert off.stats["shortcut"] == 0.0
    assert off.objective == pytest.approx(free.objective, abs=1e-9)


def test_no_presolve_at_lam_zero():
    # without a leaf penalty the unconstrained optimum spends every leaf: the budget binds
    data = instance(4, 40, 4, 2, False)
    result = solve(data, [MaxLeaves(3)], lam=0.0, depth=3)
    assert result.stats["presolve_seconds"] == 0.0
    assert result.stats["shortcut"] == 0.0
    assert result.model.n_leaves <= 3


def test_bad_switch_names_are_refused():
    data = instance(2, 10, 3, 2, False)
    with pytest.raises(ValueError, match="presolv"):
        search_budgeted(
            data, lam=0.01, max_depth=2, split_costs=1, budget=1, bounds={"presolv": False}
        )


@pytest.mark.slow
@settings(deadline=None, max_examples=8)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 10),
    k=st.integers(2, 6),
    share=st.sampled_from((0.0, 0.2)),
    lam=st.sampled_from(LAMS),
    weighted=st.booleans(),
)
def test_depth_three_on_three_features_matches_the_oracle(seed, n, k, share, lam, weighted):
    data = instance(seed, n, 3, 2, weighted)
    check_against_oracle(data, [MaxLeaves(k), MinLeafSupport(share=share)], lam, 3)


@common
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 14),
    p=st.integers(2, 4),
    costs=st.lists(st.integers(0, 3), min_size=4, max_size=4),
    budget=st.integers(0, 5),
    depth=st.integers(1, 2),
    lam=st.sampled_from(LAMS),
    weighted=st.booleans(),
)
def test_feature_budget_per_split_matches_the_oracle(
    seed, n, p, costs, budget, depth, lam, weighted
):
    data = instance(seed, n, p, 2, weighted)
    mapping = {name: c for name, c in zip(data.feature_names, costs, strict=False) if c}
    constraint = (
        FeatureBudget(mapping, budget) if mapping else FeatureBudget(1, budget, per="split")
    )
    check_against_oracle(data, [constraint], lam, depth)


@common
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 14),
    p=st.integers(2, 4),
    cost=st.sampled_from((0.5, 0.25, 1.5, 0.1, 2.0)),
    budget=st.sampled_from((0.0, 0.3, 0.5, 1.0, 1.5, 2.9999999999, 3.0)),
    lam=st.sampled_from(LAMS),
)
def test_fractional_costs_match_the_oracle(seed, n, p, cost, budget, lam):
    data = instance(seed, n, p, 2, False)
    check_against_oracle(data, [FeatureBudget(cost, budget)], lam, 2)


@common
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 14),
    p=st.integers(2, 4),
    k=st.integers(1, 5),
    share=st.sampled_from((0.0, 0.1, 0.2, 0.3, 0.5, 0.8)),
    forbid=st.integers(-1, 3),
    depth=st.integers(1, 2),
    lam=st.sampled_from(LAMS),
    classes=st.integers(2, 3),
    weighted=st.booleans(),
)
def test_combined_with_leaf_support_and_forbidden_features(
    seed, n, p, k, share, forbid, depth, lam, classes, weighted
):
    data = instance(seed, n, p, classes, weighted)
    constraints: list = [MaxLeaves(k), MinLeafSupport(share=share)]
    if 0 <= forbid < p:
        constraints.append(ForbidFeatures([data.feature_names[forbid]]))
    check_against_oracle(data, constraints, lam, depth)


@common
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 14),
    p=st.integers(2, 4),
    k=st.integers(1, 5),
    factor=st.integers(1, 3),
    lam=st.sampled_from(LAMS),
)
def test_two_proportional_budgets_combine_exactly(seed, n, p, k, factor, lam):
    data = instance(seed, n, p, 2, True)
    # the feature budget allows max(0, k - 2) splits: tighter than MaxLeaves(k)'s k - 1
    constraints = [MaxLeaves(k), FeatureBudget(factor, factor * max(0, k - 2) + factor - 1)]
    check_against_oracle(data, constraints, lam, 2)


def test_infeasible_minimum_support_is_a_verdict():
    data = instance(3, 10, 3, 2, False)
    constraints = [MaxLeaves(3), MinLeafSupport(weight=11)]
    assert brute_force_constrained_tree(data, constraints, lam=0.01, max_depth=2)[0] is None
    result = solve(data, constraints, lam=0.01, depth=2)
    assert result.status == "infeasible"
    assert result.model is None
    assert "minimum" in result.message or "min_leaf_weight" in result.message


def test_duplicate_and_complement_features_keep_the_cheapest():
    data = instance(11, 14, 2, 2, False)
    X = np.column_stack([data.X[:, 0], ~data.X[:, 0], data.X[:, 0], data.X[:, 1]])
    wide = Dataset(X, data.y, data.classes, ("a", "b", "c", "d"), "wide", data.sample_weight)
    # feature 0 too expensive, its complement 1 cheap, its duplicate 2 forbidden
    costs = np.array([5, 1, 1, 1])
    allowed = np.array([True, True, False, True])
    result = search_budgeted(
        wide, lam=0.0, max_depth=2, split_costs=costs, budget=2, allowed=allowed
    )
    narrow = search_budgeted(
        wide, lam=0.0, max_depth=2, split_costs=[1, 1, 1, 1], budget=2, allowed=allowed
    )
    assert result.objective == pytest.approx(narrow.objective)
    used = result.model.features_used()
    assert 0 not in used and 2 not in used


# --------------------------------------------------------------------------------------------
# limits


def big_instance() -> Dataset:
    rng = np.random.default_rng(7)
    X = rng.random((3000, 40)) < 0.5
    y = (X[:, 0] ^ X[:, 1] ^ (rng.random(3000) < 0.2)).astype(int)
    return Dataset.from_arrays(X, y)


def test_a_tiny_time_limit_returns_a_feasible_tree_and_a_valid_bound():
    data = big_instance()
    constraints = [MaxLeaves(5), MinLeafSupport(share=0.05)]
    # depth 5 needs ~1 s of search on an idle machine, a millisecond limit stops it on any
    # machine (at depth 4 a fast machine certified it within the old 0.05 s)
    result = solve(data, constraints, lam=0.001, depth=5, time_limit=0.001)
    assert result.status == "time_limit"
    assert result.model is not None
    assert resolve(constraints, data).violations(result.model, data) == []
    assert result.lower_bound <= result.objective
    # a valid bound: at most the constrained optimum, itself at least the unconstrained one
    free = search_tree(data, lam=0.001, max_depth=5)
    assert free.status == "optimal"
    assert result.lower_bound <= free.objective + 1e-9


def test_a_memory_limit_returns_a_feasible_tree():
    data = big_instance()
    result = solve(data, [MaxLeaves(6)], lam=0.001, depth=4, memory_limit_mb=0.5)
    assert result.status == "memory_limit"
    assert result.model is not None and result.model.n_leaves <= 6
    assert result.lower_bound <= result.objective


def test_ctrl_c_returns_the_incumbent():
    data = big_instance()
    before = signal.getsignal(signal.SIGINT)
    with sigint_at_first_poll(_native, "search_budget_dp", progress_at=6) as sent:
        result = solve(data, [MaxLeaves(8)], lam=0.0, depth=4, time_limit=30)
    assert signal.getsignal(signal.SIGINT) is before
    assert sent.is_set(), "the budgeted DP never polled for Ctrl-C"
    assert result.status == "interrupted"
    assert result.model is not None and result.model.n_leaves <= 8


# --------------------------------------------------------------------------------------------
# budget_of


def test_budget_of_max_leaves_and_redundancy():
    data = instance(1, 10, 3, 2, False)
    costs, budget = budget_of(resolve([MaxLeaves(3)], data))
    assert costs.tolist() == [1, 1, 1] and budget == 2
    # a depth-2 tree has at most 4 leaves: MaxLeaves(4) says nothing there
    costs, budget = budget_of(resolve([MaxLeaves(4)], data), max_depth=2)
    assert not costs.any() and budget == 0
    costs, budget = budget_of(resolve([], data))
    assert not costs.any() and budget == 0


def test_budget_of_scales_rational_costs():
    data = instance(1, 10, 3, 2, False)
    names = data.feature_names
    resolved = resolve([FeatureBudget({names[0]: 0.5, names[1]: 0.25}, 1.0)], data)
    costs, budget = budget_of(resolved)
    assert costs.tolist() == [2, 1, 0] and budget == 4
    # proportional budgets: the tighter one holds both
    costs, budget = budget_of(resolve([MaxLeaves(5), FeatureBudget(2.0, 4.0)], data))
    assert costs.tolist() == [1, 1, 1] and budget == 2


@pytest.mark.parametrize(
    "constraints, named",
    [
        ([ClassRecall(1, at_least=0.5)], "recall"),
        ([FeatureBudget(1, 2, per="feature")], "per=feature"),
        ([RequireFeatures(["x0"])], "require"),
        ([FeatureBudget(math.pi, 7.0)], "feature_budget"),
        ([MaxLeaves(3), FeatureBudget({"x0": 1, "x1": 2}, 3)], "not multiples"),
        ([FeatureBudget(1e300, 7.0)], "exceeds 2**60"),
    ],
)
def test_budget_of_refuses_with_one_line(constraints, named):
    data = instance(1, 10, 3, 2, False)
    answer = budget_of(resolve(constraints, data))
    assert isinstance(answer, str)
    assert "\n" not in answer and named in answer


# --------------------------------------------------------------------------------------------
# bad arguments


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"split_costs": [1, -1, 1]}, ValueError, "split_costs"),
        ({"split_costs": [1, math.nan, 1]}, ValueError, "split_costs"),
        ({"split_costs": [1, math.inf, 1]}, ValueError, "split_costs"),
        ({"split_costs": [1, 0.5, 1]}, ValueError, "split_costs"),
        ({"split_costs": [1, 1]}, ValueError, "split_costs"),
        ({"split_costs": "abc"}, TypeError, "split_costs"),
        ({"budget": -1}, ValueError, "budget"),
        ({"budget": math.nan}, ValueError, "budget"),
        ({"budget": math.inf}, ValueError, "budget"),
        ({"budget": 1.5}, ValueError, "budget"),
        ({"budget": True}, TypeError, "budget"),
        ({"min_leaf_weight": math.nan}, ValueError, "min_leaf_weight"),
        ({"min_leaf_weight": -2}, ValueError, "min_leaf_weight"),
        ({"min_leaf_weight": "1"}, TypeError, "min_leaf_weight"),
        ({"allowed": [1, 0, 1]}, TypeError, "allowed"),
        ({"allowed": np.ones(2, dtype=bool)}, ValueError, "allowed"),
        ({"max_depth": None}, (TypeError, ValueError), "max_depth"),
        ({"lam": -1.0}, ValueError, "lam"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs, error, name):
    data = instance(2, 10, 3, 2, False)
    arguments = {"lam": 0.01, "max_depth": 2, "split_costs": [1, 1, 1], "budget": 2}
    arguments.update(kwargs)
    with pytest.raises(error, match=name):
        search_budgeted(data, **arguments)


@settings(deadline=None, max_examples=30)
@given(
    costs=st.lists(
        st.one_of(st.integers(-3, 5), st.floats(allow_nan=True, allow_infinity=True)),
        min_size=3,
        max_size=3,
    ),
    budget=st.one_of(st.integers(-3, 10), st.floats(allow_nan=True, allow_infinity=True)),
)
def test_fuzzed_costs_and_budgets_never_crash(costs, budget):
    data = instance(5, 12, 3, 2, False)
    try:
        result = search_budgeted(data, lam=0.01, max_depth=2, split_costs=costs, budget=budget)
    except (TypeError, ValueError):
        return
    assert result.status == "optimal"
    assert result.model is not None

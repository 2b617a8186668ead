"""A cost objective beside a minimum leaf support in the native search (issue 40's pricing).

The search solves a cost on its reduction (relabelled, reweighted rows) while a leaf's support
stays measured in the dataset's own weights: the native Problem carries them as separate support
weights, which every minimum leaf check of every dp strategy reads. Checked against the
brute-force oracle (costs of every kind, weighted rows, rows of weight 0, ``weight=`` and
``share=``, depths 1-3, every strategy), on the native seam (validated input, no crash), and
for what stays refused beside a cost.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from _constraint_oracle import agree_with_oracle, constraint_dataset
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit import _native
from odtkit.constraints import (
    FeatureBudget,
    ForbidFeatures,
    MaxLeaves,
    MinLeafSupport,
    ResolvedConstraints,
    resolve,
)
from odtkit.core._binary import STRATEGIES, search_dataset
from odtkit.core._problem import build_search_problem, search_config
from odtkit.core.search import SearchOptions, search_refusal, search_tree
from odtkit.costs import BalancedError, CostMatrix, RowCosts, reduction
from odtkit.datasets import Dataset
from odtkit.fairness import Fairness
from odtkit.testing import brute_force_constrained_tree, random_dataset

TOL = 1e-6


def a_cost(data: Dataset, rng: np.random.Generator, kind: int) -> object:
    """A cost the search reduces: balanced error, a class-dependent matrix, per-row costs with
    one cheaper class per row (negative entries, weight-0 rows cost 0), any 2 x 2 matrix."""
    K = data.n_classes
    if kind == 0:
        return BalancedError()
    if kind == 1:
        off = rng.integers(1, 6, size=K).astype(float)
        matrix = np.repeat(off[:, None], K, axis=1)
        matrix[np.arange(K), np.arange(K)] = 0.0
        return CostMatrix(matrix)
    if kind == 2 or K != 2:
        n = data.n_samples
        top = rng.normal(size=n) * 3
        L = np.repeat(top[:, None], K, axis=1)
        L[np.arange(n), rng.integers(K, size=n)] -= rng.integers(0, 4, size=n) * rng.random(n)
        L[data.weights == 0] = 0.0
        return RowCosts(L)
    return CostMatrix(rng.integers(0, 6, size=(2, 2)))


def a_support(data: Dataset, rng: np.random.Generator) -> MinLeafSupport:
    """A minimum leaf support that binds on small data (sometimes beyond any tree but a leaf,
    sometimes beyond the total: infeasible)."""
    if rng.random() < 0.5:
        return MinLeafSupport(share=float(rng.choice([0.05, 0.15, 0.25, 0.4, 0.5])))
    total = data.total_weight
    return MinLeafSupport(weight=float(rng.choice([1.0, 0.2 * total, 0.35 * total, 1.1 * total])))


def searched(strategy: str, *, time_limit: float | None = None):
    def solve(data: Dataset, constraints: list, *, lam: float, depth: int | None):
        return search_tree(
            data,
            lam=lam,
            max_depth=depth,
            constraints=constraints,
            time_limit=time_limit,
            options=SearchOptions(strategy=strategy),
        )

    return solve


@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, 2**31 - 1),
    st.sampled_from([1, 2, 3]),
    st.sampled_from([0.0, 0.01, 0.05]),
    st.sampled_from(STRATEGIES),
    st.integers(0, 3),
)
def test_cost_beside_min_leaf_support_matches_the_oracle(seed, depth, lam, strategy, kind) -> None:
    rng = np.random.default_rng(seed)
    data = constraint_dataset(rng, 3 if depth < 3 else 2, n_samples=(5, 14))
    constraints = [a_cost(data, rng, kind), a_support(data, rng)]
    if rng.random() < 0.25:
        constraints.append(ForbidFeatures([data.feature_names[0]]))
    assert search_refusal(resolve(constraints, data)) == ""
    _, best, result = agree_with_oracle(searched(strategy), data, constraints, lam=lam, depth=depth)
    if result.model is not None:
        assert result.lower_bound == pytest.approx(best, abs=TOL)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(0, 3))
def test_unlimited_depth_under_a_limit_matches_the_oracle(seed, kind) -> None:
    """strategy "anytime" at an unlimited depth under a time limit (the dives' driver)."""
    rng = np.random.default_rng(seed)
    data = constraint_dataset(rng, 2, n_samples=(6, 14))
    constraints = [a_cost(data, rng, kind), a_support(data, rng)]
    # two features: no tree is deeper than 2, so the oracle at depth 2 is the unlimited one
    oracle = brute_force_constrained_tree(data, constraints, lam=0.01, max_depth=2)
    solve = searched("anytime", time_limit=60.0)

    def unlimited(data: Dataset, constraints: list, *, lam: float, depth: int):
        return solve(data, constraints, lam=lam, depth=None)

    agree_with_oracle(unlimited, data, constraints, lam=0.01, depth=2, oracle=oracle)


def test_dives_and_polishing_keep_the_support_in_the_original_weights() -> None:
    """Under a node limit the anytime driver dives and polishes subtrees on restricted Problems
    (dp_dives.cpp), which carry the rows' support weights: every tree it returns meets the
    support in the dataset's weights (re-checked by search_tree, a RuntimeError otherwise) and
    its value and bound bracket the certified optimum."""
    gains = []
    for seed in range(4):
        data = random_dataset(seed, 150, 9, weighted=True)
        constraints = [CostMatrix([[0, 1], [3, 0]]), MinLeafSupport(share=0.02)]
        optimum = search_tree(data, lam=0.001, max_depth=None, constraints=constraints)
        assert optimum.status == "optimal"
        for node_limit in (400, 2000):
            result = search_tree(
                data,
                lam=0.001,
                max_depth=None,
                constraints=constraints,
                options=SearchOptions(strategy="anytime", node_limit=node_limit),
            )
            assert resolve(constraints, data).violations(result.model, data) == []
            assert result.objective >= optimum.objective - TOL
            assert result.lower_bound <= optimum.objective + TOL
            gains.append(result.stats["polish_gain"])
    assert max(gains) > 0  # a polished subtree was searched on its restricted rows


def test_the_support_is_measured_in_the_original_weights() -> None:
    """A cost whose reduction reweights the rows admits exactly the leaves the dataset's own
    weights admit: a leaf the reduced weights would call heavy enough is refused, and one they
    would call too light is admitted."""
    X = np.array([[0], [0], [0], [1], [1], [1]], dtype=bool)
    y = np.array([0, 0, 1, 1, 1, 0])
    data = Dataset(X=X, y=y, classes=np.array([0, 1]), feature_names=("a",))
    # the x = 0 side costs 100x more than the x = 1 side: reduced, it holds ~99 % of the weight
    L = np.zeros((6, 2))
    L[np.arange(3), 1 - y[:3]] = 100.0
    L[np.arange(3, 6), 1 - y[3:]] = 1.0
    reduced = reduction(L)
    assert not isinstance(reduced, str)
    assert reduced.weights[3:].sum() < 0.02 * reduced.weights.sum()
    for share, splits in ((0.5, True), (0.51, False)):
        constraints = [RowCosts(L), MinLeafSupport(share=share)]
        result = search_tree(data, lam=0.0, max_depth=1, constraints=constraints)
        assert result.status == "optimal"
        assert (result.model.n_leaves == 2) == splits, share
        tree, best = brute_force_constrained_tree(data, constraints, lam=0.0, max_depth=1)
        assert result.objective == pytest.approx(best)


def test_the_budgeted_search_refuses_a_support_beside_a_cost_in_one_line() -> None:
    data = random_dataset(4, 12, 3)
    cost = BalancedError()
    for budget in (MaxLeaves(3), FeatureBudget(1, 2, per="split")):
        why = search_refusal(resolve([cost, MinLeafSupport(share=0.2), budget], data))
        assert why.startswith(f"min-leaf-share=0.2 beside {budget.describe()}")
        assert "\n" not in why and "MIP" in why
        with pytest.raises(ValueError, match="budgeted search"):
            search_tree(
                data, lam=0.01, max_depth=2, constraints=[cost, MinLeafSupport(share=0.2), budget]
            )
        # each one beside the cost alone is the search's
        assert search_refusal(resolve([cost, budget], data)) == ""
    assert search_refusal(resolve([cost, MinLeafSupport(share=0.2)], data)) == ""
    fair = Fairness("sp", protected=np.arange(12) % 2, delta=0.1, positive_class=1)
    assert "no cost objective" in search_refusal(resolve([cost, fair], data))


def test_an_infeasible_support_beside_a_cost_is_a_status() -> None:
    data = random_dataset(6, 10, 3, weighted=True)
    heavy = MinLeafSupport(weight=2 * data.total_weight)
    for cost in (BalancedError(), RowCosts(np.repeat(np.arange(10.0)[:, None], 2, axis=1))):
        result = search_tree(data, lam=0.01, max_depth=2, constraints=[cost, heavy])
        assert result.status == "infeasible"
        assert result.model is None
        assert "min_leaf_support" in result.message


def test_support_weights_equal_to_the_weights_change_nothing() -> None:
    data = random_dataset(7, 40, 5, weighted=True)
    plain = search_dataset(data, lam=0.01, max_depth=3, min_leaf_weight=0.1)
    same = search_dataset(
        data, lam=0.01, max_depth=3, min_leaf_weight=0.1, support_weights=data.weights.copy()
    )
    assert same.model == plain.model
    assert same.objective == plain.objective


@pytest.mark.parametrize(
    ("support", "error", "match"),
    [
        (np.ones(5), ValueError, "one weight per row"),
        (np.r_[np.ones(9), np.nan], ValueError, "finite"),
        (np.r_[np.ones(9), -1.0], ValueError, ">= 0"),
        (np.zeros(10), ValueError, "positive"),
        (np.r_[np.ones(9), np.inf], ValueError, "finite"),
        (np.array(["a"] * 10), TypeError, "numbers"),
    ],
)
def test_support_weights_are_checked_in_python(support, error, match) -> None:
    data = random_dataset(8, 10, 3)
    with pytest.raises(error, match=match):
        search_dataset(data, lam=0.01, max_depth=2, min_leaf_weight=0.1, support_weights=support)


def test_the_native_problem_checks_its_support_weights() -> None:
    """The binding rejects what Python would (never a crash) and reports what it holds."""
    data = random_dataset(9, 12, 3)
    X = np.ascontiguousarray(data.X)
    y = np.ascontiguousarray(data.y, dtype=np.int32)
    w = np.ascontiguousarray(data.weights, dtype=np.float64)
    plain = _native.Problem(X, y, w, data.n_classes)
    assert not plain.separate_support
    assert plain.total_support == plain.total_weight
    support = np.arange(12, dtype=np.float64)
    apart = _native.Problem(X, y, w, data.n_classes, support=support)
    assert apart.separate_support
    assert apart.total_support == pytest.approx(support.sum())
    for bad in (np.ones(11), np.r_[np.ones(11), np.nan], np.r_[np.ones(11), -1.0], np.zeros(12)):
        with pytest.raises(ValueError):
            _native.Problem(X, y, w, data.n_classes, support=bad)
    with pytest.raises(TypeError):
        _native.Problem(X, y, w, data.n_classes, support=np.ones(12, dtype=np.float32))


def test_searches_that_read_class_weights_refuse_separate_support_weights() -> None:
    """The budgeted dp and the Rashomon set measure a leaf's support in the class weights: given
    a Problem with separate support weights and a minimum leaf support they refuse it."""
    data = random_dataset(10, 12, 3)
    support = np.linspace(0.5, 2.0, 12)
    problem, kept = build_search_problem(data, support=support)
    config = search_config(
        0.01, time_limit=None, node_limit=None, memory_limit_mb=None, bounds={}, max_depth=2
    )
    with pytest.raises(ValueError, match="separate support"):
        _native.search_budget_dp(
            problem, [1] * int(kept.size), [True] * int(kept.size), 2, 1.0, config
        )
    config.min_leaf_weight = 0.1
    with pytest.raises(ValueError, match="separate support"):
        _native.rashomon_build(problem, config, 1.0)


def test_a_resolved_cost_and_support_are_taken_as_given() -> None:
    """ResolvedConstraints (resolved once, as branch-and-price's pricing reuses them) give the
    same answer as the list."""
    rng = np.random.default_rng(12)
    data = constraint_dataset(rng, 3, n_samples=(10, 11), weighted=True, zero_weight=1.0)
    constraints = [a_cost(data, rng, 2), MinLeafSupport(share=0.2)]
    resolved = resolve(constraints, data)
    assert isinstance(resolved, ResolvedConstraints)
    listed = search_tree(data, lam=0.01, max_depth=2, constraints=constraints)
    given_once = search_tree(data, lam=0.01, max_depth=2, constraints=resolved)
    assert given_once.objective == pytest.approx(listed.objective)
    _, best = brute_force_constrained_tree(data, constraints, lam=0.01, max_depth=2)
    assert listed.objective == pytest.approx(best)


def test_weight_zero_rows_carry_no_support() -> None:
    """A leaf reached only by rows of weight 0 violates any positive support, cost or not."""
    data = random_dataset(13, 10, 3, weighted=True)
    w = np.array(data.weights, dtype=float)
    w[:4] = 0.0
    data = dataclasses.replace(data, sample_weight=w)
    for strategy in STRATEGIES:
        agree_with_oracle(
            searched(strategy),
            data,
            [CostMatrix([[0, 1], [3, 0]]), MinLeafSupport(weight=1.0)],
            lam=0.0,
            depth=2,
        )


def test_the_depth_two_solver_reads_the_support_weights() -> None:
    """With separate support weights the depth-two solver counts them per feature pair: the
    optimum with it equals the generic recursion's (``depth2`` off) and the queue's (which
    never runs it), on data wide enough for its pair counts to matter."""
    binding = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        data = random_dataset(seed, 200, 10, n_classes=2 + seed % 2, weighted=True)
        cost = a_cost(data, rng, 2)
        constraints = [cost, MinLeafSupport(share=float(rng.choice([0.1, 0.2])))]
        for depth in (2, 3):
            runs = [
                search_tree(
                    data, lam=0.002, max_depth=depth, constraints=constraints, options=options
                )
                for options in (
                    SearchOptions(),
                    SearchOptions(bounds={"depth2": False}),
                    SearchOptions(strategy="queue"),
                )
            ]
            assert runs[0].stats["depth2_calls"] > 0
            values = [r.objective for r in runs]
            assert values == pytest.approx([values[0]] * 3, abs=TOL)
            free = search_tree(data, lam=0.002, max_depth=depth, constraints=[cost])
            binding += values[0] > free.objective + TOL
    assert binding >= 4  # the support changes the optimum in most of these

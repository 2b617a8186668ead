"""PathOCT and FlowOCT minimize a cost objective (odtkit.costs) exactly: the brute-force oracle
(testing.brute_force_constrained_tree) on tiny instances for CostMatrix (two classes, and a
general matrix over three, which no search takes), BalancedError and RowCosts with negative
entries, each alone and beside one random side constraint (weights, weight-0 rows, lam 0 and
> 0, depth 1-3); the solver's bound and the LP relaxation's are valid lower bounds on the cost
objective; the oracle's optimum is a feasible start of its value, a search's certified tree a
warm start the solver keeps; the named blocks stay in summary() and the LP file.
"""

from __future__ import annotations

import numpy as np
import pytest
from _constraint_oracle import assert_blocks_named, constraint_dataset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import metrics, search_tree, solve_formulation
from odtkit.constraints import ClassRecall, FeatureBudget, MaxLeaves, MinLeafSupport, resolve
from odtkit.costs import BalancedError, CostMatrix, RowCosts, reduction
from odtkit.formulations import FlowOCT, PathOCT
from odtkit.solvers import solve
from odtkit.testing import (
    CONSTRAINT_KINDS,
    brute_force_constrained_tree,
    random_constraint,
    random_dataset,
)

TOL = 1e-6
FORMULATIONS = [PathOCT(), FlowOCT()]
COST_KINDS = ("matrix", "balanced", "row_costs")
LAMS = st.sampled_from([0.0, 0.0, 0.02, 0.1])


def _settings(n: int) -> settings:
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )


def _random_cost(kind: str, data, rng: np.random.Generator):
    """A cost objective of ``kind`` on ``data``: a random non-negative integer matrix (K x K,
    so a general one over three classes), balanced error, or integer row costs in [-3, 3]
    (0 on the rows of weight 0, which RowCosts requires)."""
    K = data.n_classes
    if kind == "matrix":
        return CostMatrix(rng.integers(0, 5, size=(K, K)).astype(float))
    if kind == "balanced":
        return BalancedError()
    costs = rng.integers(-3, 4, size=(data.n_samples, K)).astype(float)
    costs[data.weights == 0] = 0.0
    return RowCosts(costs)


def _agrees(form, data, stated, *, lam: float, depth: int) -> None:
    """``form`` reaches the oracle's optimum of the cost objective (or says infeasible), its
    bound and its LP relaxation's are below it, and the oracle's tree is a feasible start of
    the model of (at most) its value."""
    resolved = resolve(stated, data)
    tree, best = brute_force_constrained_tree(data, resolved, lam=lam, max_depth=depth)
    result = solve_formulation(form, data, max_depth=depth, lam=lam, constraints=resolved)
    if tree is None:
        assert result.status == "infeasible", (result.status, result.message, stated)
        assert result.model is None
        return
    assert result.status == "optimal", (result.status, result.message, stated)
    assert result.objective == pytest.approx(best, abs=TOL), stated
    assert metrics.objective(result.model, data, lam=lam, costs=resolved) == pytest.approx(
        best, abs=TOL
    )
    assert metrics.constraint_violations(result.model, data, resolved) == []
    # the backend's own bound (before the pipeline caps it at the verified value) and the LP
    # relaxation's are valid lower bounds on the cost objective
    assert result.solution.lower_bound <= best + TOL
    assert result.lower_bound == pytest.approx(best, abs=TOL)
    model = form.build(data, max_depth=depth, lam=lam, constraints=resolved)
    assert model.meta.carries_costs
    lp = solve(model.relaxed()).objective
    assert lp <= best + TOL, stated
    if isinstance(form, PathOCT) and len(stated) == 1:
        assert lp == pytest.approx(best, abs=TOL)  # integral without side constraints
    x = form.start(model, tree)
    assert model.is_feasible(x), model.check(x)
    assert model.objective_value(x) <= best + TOL


def _instance(data_: st.DataObject, *, depth: int | None = None):
    rng = np.random.default_rng(data_.draw(st.integers(0, 2**32 - 1)))
    if depth == 3:
        d = constraint_dataset(rng, 3, n_samples=(4, 10), classes=(2,))
    else:
        d = constraint_dataset(rng, data_.draw(st.integers(1, 3)))
        depth = data_.draw(st.sampled_from([1, 2, 2]))
    cost = _random_cost(data_.draw(st.sampled_from(COST_KINDS)), d, rng)
    return d, cost, rng, depth


@pytest.mark.parametrize("form", FORMULATIONS, ids=lambda f: f.name)
@_settings(30)
@given(data=st.data())
def test_cost_alone_matches_the_oracle(form, data):
    d, cost, _, depth = _instance(data)
    _agrees(form, d, [cost], lam=data.draw(LAMS), depth=depth)


@pytest.mark.parametrize("form", FORMULATIONS, ids=lambda f: f.name)
@_settings(30)
@given(data=st.data())
def test_cost_with_a_side_constraint_matches_the_oracle(form, data):
    d, cost, rng, depth = _instance(data)
    side = random_constraint(data.draw(st.sampled_from(CONSTRAINT_KINDS)), d, rng)
    _agrees(form, d, [cost, side], lam=data.draw(LAMS), depth=depth)


@pytest.mark.parametrize("form", FORMULATIONS, ids=lambda f: f.name)
@_settings(2)
@given(data=st.data())
def test_cost_at_depth_3_matches_the_oracle(form, data):
    # the oracle enumerates every depth-3 tree on three features: seconds per example
    d, cost, rng, _ = _instance(data, depth=3)
    stated = [cost]
    if data.draw(st.booleans()):
        stated.append(random_constraint(data.draw(st.sampled_from(CONSTRAINT_KINDS)), d, rng))
    _agrees(form, d, stated, lam=data.draw(st.sampled_from([0.0, 0.02])), depth=3)


@pytest.mark.parametrize("form", FORMULATIONS, ids=lambda f: f.name)
def test_a_general_three_class_matrix_differs_from_misclassification(form):
    """A cost no search takes (two classes below the maximum on a row): the MIP's optimum is
    the oracle's, not the plain one's."""
    data = random_dataset(7, 12, 3, n_classes=3, weighted=True)
    cost = CostMatrix([[0.0, 1.0, 4.0], [1.0, 0.0, 4.0], [2.0, 1.0, 0.0]])
    assert isinstance(reduction(cost.losses(data)), str)
    _agrees(form, data, [cost], lam=0.01, depth=2)


@pytest.mark.parametrize("form", FORMULATIONS, ids=lambda f: f.name)
def test_the_plain_matrix_is_the_plain_objective(form):
    """CostMatrix(1 - I) is misclassification: the same optimum as the model without it,
    whose model is unchanged (FlowOCT keeps its single-sink form)."""
    data = random_dataset(3, 14, 3, n_classes=3, weighted=True)
    plain = solve_formulation(form, data, max_depth=2, lam=0.02)
    costed = solve_formulation(
        form, data, max_depth=2, lam=0.02, constraints=[CostMatrix(1.0 - np.eye(3))]
    )
    assert costed.objective == pytest.approx(plain.objective, abs=TOL)
    if isinstance(form, FlowOCT):
        assert plain.solution is not None
        assert form.build(data, max_depth=2, lam=0.02).meta.cells is None


@pytest.mark.parametrize("form", FORMULATIONS, ids=lambda f: f.name)
@pytest.mark.parametrize("cost", [BalancedError(), CostMatrix([[0.0, 1.0], [5.0, 0.0]])])
def test_a_search_certified_tree_is_a_kept_warm_start(form, cost):
    """The search takes every two-class cost (a weighted misclassification): its certified
    tree is a feasible start the solver keeps, and both agree on the optimum."""
    data = random_dataset(12, 20, 3, n_classes=2, weighted=True)
    stated = [cost]
    found = search_tree(data, lam=0.01, max_depth=2, constraints=stated)
    assert found.status == "optimal", found.message
    model = form.build(data, max_depth=2, lam=0.01, constraints=stated)
    x = form.start(model, found.model)
    assert model.is_feasible(x), model.check(x)
    assert model.objective_value(x) == pytest.approx(found.objective, abs=TOL)
    result = solve_formulation(
        form,
        data,
        max_depth=2,
        lam=0.01,
        constraints=stated,
        start=found.model,
        start_is_optimal=True,
    )
    assert result.status == "optimal", result.message
    assert result.stats["warm_start"] and "start_rejected" not in result.stats
    assert result.objective == pytest.approx(found.objective, abs=TOL)


@pytest.mark.parametrize("form", FORMULATIONS, ids=lambda f: f.name)
def test_blocks_are_named_beside_a_cost(form, tmp_path):
    data = random_dataset(5, 12, 3, 2, True)
    costs = np.linspace(-1.0, 2.0, data.n_samples * 2).reshape(-1, 2)
    costs[data.weights == 0] = 0.0
    stated = [
        RowCosts(costs),
        MaxLeaves(3),
        MinLeafSupport(share=0.1),
        FeatureBudget(1.0, 2.0, per="feature"),
        ClassRecall(1, at_least=0.3),
    ]
    model = form.build(data, max_depth=2, lam=0.01, constraints=stated)
    names = ["max_leaves", "min_leaf_support", "feature_budget", "class_recall"]
    assert_blocks_named(model, names, tmp_path / "model.lp")
    _agrees(form, data, stated, lam=0.01, depth=2)

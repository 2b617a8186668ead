"""Branch-and-price over whole trees (odtkit.branch_and_price, the "columns" method): the
brute-force oracle's optimum with and without side constraints (each kind it prices, random
combinations, costs, weights, weight-0 rows, infeasible combinations); the root LP bound equal to
PathOCT's LP relaxation; the dp's optimum without constraints and the fair dp's with one fairness
constraint; every backend; limits that keep the incumbent and a valid bound; the master a
notebook can inspect; refusals that name the constraint."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _constraint_oracle import agree_with_oracle, constraint_dataset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import Fairness, metrics, search_tree
from odtkit.branch_and_price import branch_and_price
from odtkit.constraints import (
    ClassRecall,
    FeatureBudget,
    MaxLeaves,
    MinLeafSupport,
    RequireFeatures,
    resolve,
)
from odtkit.costs import CostMatrix, RowCosts
from odtkit.formulations import PathOCT
from odtkit.formulations.columns import TreeColumns, columns_refusal
from odtkit.methods import METHODS
from odtkit.model import Model
from odtkit.solvers import available_backends, solve
from odtkit.testing import CONSTRAINT_KINDS, random_constraint, random_constraints, random_dataset
from odtkit.tree import Tree

TOL = 1e-6

#: The kinds whose pricing is exact (columns_refusal names the rest, tested below).
PRICED_KINDS = tuple(k for k in CONSTRAINT_KINDS if k != "require_features")


def _solve(data, constraints, *, lam, depth, **kw):
    return branch_and_price(data, lam=lam, max_depth=depth, constraints=constraints, **kw)


def _priceable(data, constraints) -> bool:
    resolved = resolve(constraints, data) if constraints else None
    return not columns_refusal(resolved)


@st.composite
def _instances(draw, n_kinds: tuple[int, int], depth: int = 2, kinds=PRICED_KINDS):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    classes = (2,) if depth == 3 else (2, 2, 3)
    data = constraint_dataset(rng, draw(st.integers(1, 3)), n_samples=(3, 13), classes=classes)
    constraints = random_constraints(data, rng, draw(st.integers(*n_kinds)), kinds)
    lam = draw(st.sampled_from([0.0, 0.0, 0.01, 0.05]))
    return data, constraints, lam, rng


def _agree(data, constraints, lam, depth):
    if not _priceable(data, constraints):
        with pytest.raises(ValueError, match="branch-and-price cannot take them"):
            _solve(data, constraints, lam=lam, depth=depth)
        return
    _, _, result = agree_with_oracle(_solve, data, constraints, lam=lam, depth=depth)
    if result.model is not None:
        assert result.lower_bound == pytest.approx(result.objective, abs=TOL)


@pytest.mark.parametrize("kind", PRICED_KINDS)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_instances((0, 0)))
def test_each_kind_alone_matches_the_oracle(kind, instance):
    data, _, lam, rng = instance
    _agree(data, [random_constraint(kind, data, rng)], lam, 2)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_instances((2, 3)))
def test_random_combinations_match_the_oracle(instance):
    data, constraints, lam, _ = instance
    _agree(data, constraints, lam, 2)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_instances((1, 3), depth=3))
def test_combinations_at_depth_3_match_the_oracle(instance):
    data, constraints, lam, _ = instance
    _agree(data, constraints, lam, 3)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_instances((0, 2), kinds=("class_recall", "max_leaves", "fairness")))
def test_cost_objectives_match_the_oracle(instance):
    data, constraints, lam, rng = instance
    K = data.n_classes
    if rng.random() < 0.5:
        matrix = rng.integers(0, 4, size=(K, K)).astype(float)
        np.fill_diagonal(matrix, 0.0)
        cost = CostMatrix(matrix)
    else:
        costs = rng.normal(size=(data.n_samples, K))
        costs[data.weights == 0] = 0.0
        cost = RowCosts(costs)
    _agree(data, [cost, *constraints], lam, 2)


def test_without_constraints_the_root_is_the_dp_optimum_and_needs_no_branching():
    data = random_dataset(3, 40, 4, 2, True)
    result = branch_and_price(data, lam=0.01, max_depth=3)
    dp = search_tree(data, lam=0.01, max_depth=3)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(dp.objective, abs=1e-12)
    assert result.stats["nodes"] == 1
    assert result.stats["root_bound"] == pytest.approx(dp.objective, abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_one_fairness_constraint_gives_the_fair_dp_optimum(seed):
    data = random_dataset(100 + seed, 30, 4, 2, seed % 2 == 0)
    rng = np.random.default_rng(seed)
    protected = rng.integers(0, 2, size=data.n_samples)
    fairness = Fairness("sp", protected=protected, delta=0.1, positive_class=1)
    fair = search_tree(data, lam=0.01, max_depth=2, fairness=fairness)
    result = branch_and_price(data, lam=0.01, max_depth=2, fairness=fairness)
    assert result.status == fair.status
    if fair.status == "optimal":
        assert result.objective == pytest.approx(fair.objective, abs=1e-9)
        assert metrics.is_fair(result.model, data, fairness)


@pytest.mark.parametrize("seed", range(8))
def test_the_root_bound_is_pathoct_s_lp_relaxation(seed):
    # the master over all trees is the convex hull of the trees cut by the side rows: PathOCT's
    # LP relaxation (equal where no feature-group row is stated: PathOCT relaxes its "group
    # tested" binaries further)
    rng = np.random.default_rng(seed)
    data = random_dataset(200 + seed, 14, 3, 2, True)
    # (no fairness: its fair dp optimum bounds the root from the start, which may then need no
    # LP at all; a fairness block is a prediction row like a recall)
    kinds = ("class_recall", "false_positive_rate", "max_leaves", "predict")
    constraints = random_constraints(data, rng, 2, kinds)
    model = PathOCT().build(data, max_depth=2, lam=0.02, constraints=constraints)
    lp = solve(model, relax=True)
    result = branch_and_price(data, lam=0.02, max_depth=2, constraints=constraints)
    if lp.status == "infeasible":
        assert result.status == "infeasible"
        return
    assert result.stats["root_bound"] == pytest.approx(lp.objective, abs=1e-7)


def test_limits_keep_the_incumbent_and_a_valid_bound():
    data = random_dataset(7, 60, 6, 2, True)
    constraints = [ClassRecall(1, at_least=0.9), MaxLeaves(4)]
    exact = branch_and_price(data, lam=0.0, max_depth=3, constraints=constraints)
    stopped = branch_and_price(data, lam=0.0, max_depth=3, constraints=constraints, node_limit=1)
    assert exact.status == "optimal"
    assert stopped.status in ("node_limit", "optimal")
    assert stopped.lower_bound <= exact.objective + TOL
    if stopped.model is not None:
        assert stopped.objective >= exact.objective - TOL
        assert metrics.constraint_violations(stopped.model, data, constraints) == []
    timed = branch_and_price(data, lam=0.0, max_depth=3, constraints=constraints, time_limit=1e-3)
    assert timed.status in ("time_limit", "optimal")
    assert timed.lower_bound <= exact.objective + TOL


@pytest.mark.parametrize("backend", [b for b in ("pyomo", "pulp") if b in available_backends()])
def test_every_backend_gives_the_same_optimum(backend):
    data = random_dataset(11, 20, 3, 2, True)
    constraints = [ClassRecall(0, at_least=0.8), MinLeafSupport(share=0.1)]
    highs = branch_and_price(data, lam=0.01, max_depth=2, constraints=constraints)
    other = branch_and_price(data, lam=0.01, max_depth=2, constraints=constraints, backend=backend)
    assert other.status == highs.status
    assert other.objective == pytest.approx(highs.objective, abs=1e-7)
    assert other.backend == backend


def test_the_master_is_a_model_to_inspect():
    data = random_dataset(5, 30, 4, 2, True)
    constraints = [ClassRecall(1, at_least=0.8), FeatureBudget(1, 2, per="split")]
    result = branch_and_price(data, lam=0.01, max_depth=2, constraints=constraints)
    master = result.stats["master"]
    assert isinstance(master, Model)
    assert "convexity" in master.constraints and "class_recall" in master.constraints
    assert master.vars["theta"].size == len(master.meta.columns)
    assert all(isinstance(c.tree, Tree) for c in master.meta.columns)
    assert result.stats["root_solution"].duals is not None
    assert result.solution is None
    assert list(result.trace.columns) == ["time", "incumbent", "bound"]
    bounds = result.trace["bound"].to_numpy()
    assert np.all(bounds <= result.objective + TOL)
    # the protocol: decode, start, evaluate agree with the columns
    form = TreeColumns()
    tree = master.meta.columns[0].tree
    x = form.start(master, tree)
    assert form.decode(master, x) == tree
    assert form.evaluate(master, tree, data) == pytest.approx(master.meta.columns[0].cost)


def test_refusals_name_the_constraint():
    data = random_dataset(1, 20, 3, 2, True)
    with pytest.raises(ValueError, match="require_features"):
        branch_and_price(data, lam=0.0, max_depth=2, constraints=[RequireFeatures("x0")])
    costly = FeatureBudget({data.feature_names[0]: 2.0}, 2, per="split")
    with pytest.raises(ValueError, match="depends on the feature"):
        branch_and_price(data, lam=0.0, max_depth=2, constraints=[costly])
    three = random_dataset(1, 20, 3, 3, True)
    with pytest.raises(ValueError, match="two classes"):
        branch_and_price(three, lam=0.0, max_depth=2, constraints=[ClassRecall(0, at_least=0.5)])


def test_bad_arguments_are_named():
    data = random_dataset(1, 10, 2, 2, False)
    with pytest.raises(ValueError, match="max_depth"):
        branch_and_price(data, lam=0.0, max_depth=0)
    with pytest.raises(ValueError, match="lam"):
        branch_and_price(data, lam=-1.0, max_depth=1)
    with pytest.raises(ValueError, match="time_limit"):
        branch_and_price(data, lam=0.0, max_depth=1, time_limit=0)
    with pytest.raises(TypeError, match="start"):
        branch_and_price(data, lam=0.0, max_depth=1, start="tree")


def test_infeasible_constraints_say_so():
    data = random_dataset(2, 12, 2, 2, False)
    result = branch_and_price(
        data,
        lam=0.0,
        max_depth=2,
        constraints=[
            MinLeafSupport(share=0.6),
            MaxLeaves(1),
            ClassRecall(0, at_least=1.0),
            ClassRecall(1, at_least=1.0),
        ],
    )
    assert result.status == "infeasible"
    assert result.model is None
    assert math.isinf(result.lower_bound)


def test_the_method_runs_through_solve_and_compare():
    from odtkit import compare

    data = random_dataset(9, 40, 4, 2, True)
    constraints = [ClassRecall(1, at_least=0.85)]
    method = METHODS["columns"]
    assert not method.is_search and not method.is_formulation
    result = method.solve(data, lam=0.01, max_depth=2, constraints=constraints)
    path = PathOCT()
    reference = method_solve_formulation(path, data, constraints)
    assert result.objective == pytest.approx(reference.objective, abs=TOL)
    comparison = compare(
        data, lam=0.01, max_depth=2, methods=["pathoct", "columns"], constraints=constraints
    )
    rows = {run.method: run for run in comparison.runs}
    assert rows["columns"].status == "optimal"
    assert rows["columns"].objective == pytest.approx(reference.objective, abs=TOL)
    assert comparison.agree


def method_solve_formulation(form, data, constraints):
    from odtkit import solve_formulation

    return solve_formulation(form, data, max_depth=2, lam=0.01, constraints=constraints)


def test_watch_sees_every_round_and_can_stop_the_run():
    data = random_dataset(21, 40, 4, 2, True)
    constraints = [ClassRecall(1, at_least=0.9)]
    rounds = []

    def watch(master, solution, bound):
        rounds.append((len(master.meta.columns), solution.duals.copy(), bound))

    full = branch_and_price(data, lam=0.01, max_depth=2, constraints=constraints, watch=watch)
    assert len(rounds) == full.stats["iterations"]
    assert rounds[0][2] <= full.objective + TOL  # the root's bound (a child's may exceed it)
    assert np.all(full.trace["bound"].to_numpy() <= full.objective + TOL)  # global bounds
    stopped = branch_and_price(
        data, lam=0.01, max_depth=2, constraints=constraints, watch=lambda *_: True
    )
    assert stopped.status == "interrupted"
    assert stopped.lower_bound <= full.objective + TOL
    with pytest.raises(TypeError, match="watch"):
        branch_and_price(data, lam=0.01, max_depth=2, watch=1)


def test_ctrl_c_inside_a_node_keeps_its_bound():
    # Ctrl-C raised in the loop's Python code (here from watch) must not drop the node being
    # solved: the bound stays the open nodes' least, never the incumbent's value
    data = random_dataset(21, 40, 4, 2, True)
    constraints = [ClassRecall(1, at_least=0.9)]
    exact = branch_and_price(data, lam=0.01, max_depth=2, constraints=constraints)

    def ctrl_c(*_):
        raise KeyboardInterrupt

    stopped = branch_and_price(data, lam=0.01, max_depth=2, constraints=constraints, watch=ctrl_c)
    assert stopped.status == "interrupted"
    assert stopped.lower_bound <= exact.objective + TOL
    assert stopped.lower_bound < stopped.objective or stopped.objective == exact.objective

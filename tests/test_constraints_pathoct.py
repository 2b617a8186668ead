"""PathOCT with side constraints (odtkit.constraints): the brute-force oracle's optimum for each
kind alone and for random combinations of two or three (weights, three classes, lam 0 ties,
infeasible combinations), every returned tree satisfying them as metrics measures; the named
blocks in the summary and the LP file; feature groups of raw columns; warm starts."""

from __future__ import annotations

import numpy as np
import pytest
from _constraint_oracle import assert_blocks_named, constraint_dataset, formulation_agrees
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import Dataset, Fairness, metrics, solve_formulation
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
from odtkit.formulations import PathOCT
from odtkit.testing import (
    CONSTRAINT_KINDS,
    brute_force_constrained_tree,
    random_constraint,
    random_constraints,
    random_dataset,
)
from odtkit.tree import Tree

TOL = 1e-6


@st.composite
def _instances(draw, n_kinds: tuple[int, int], depth: int = 2):
    """A tiny instance, ``n_kinds`` random constraints on it, a lam; and the rng for more."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if depth == 2:
        data = constraint_dataset(rng, draw(st.integers(1, 3)), n_samples=(3, 13))
    else:
        data = constraint_dataset(rng, 3, n_samples=(3, 13), classes=(2,))
    constraints = random_constraints(data, rng, draw(st.integers(*n_kinds)))
    lam = draw(st.sampled_from([0.0, 0.0, 0.01, 0.05]))
    return data, constraints, lam, rng


def _agree(data, constraints, lam, rng, depth):
    """PathOCT through the pipeline reaches the oracle's optimum (or says infeasible)."""
    formulation_agrees(PathOCT(), data, constraints, lam=lam, depth=depth)


@pytest.mark.parametrize("kind", CONSTRAINT_KINDS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_instances((0, 0)))
def test_each_kind_alone_matches_the_oracle(kind, instance):
    dataset, _, lam, rng = instance
    _agree(dataset, [random_constraint(kind, dataset, rng)], lam, rng, 2)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_instances((2, 3)))
def test_random_combinations_match_the_oracle(instance):
    _agree(*instance, 2)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_instances((1, 3), depth=3))
def test_combinations_at_depth_3_match_the_oracle(instance):
    # the oracle enumerates every depth-3 tree on three features: seconds per example
    _agree(*instance, 3)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_instances((1, 3), depth=3))
def test_many_combinations_at_depth_3_match_the_oracle(instance):
    _agree(*instance, 3)


def _credit_like():
    """Six rows, three binary features, the first two thresholds of one raw column "age"."""
    X = np.array([[0, 0, 1], [1, 0, 0], [1, 1, 1], [1, 1, 0], [0, 0, 0], [1, 0, 1]], dtype=bool)
    y = np.array([0, 1, 1, 0, 0, 1])
    return Dataset(X, y, np.array([0, 1]), ("age>30", "age>50", "income"))


@pytest.mark.parametrize(
    "constraints",
    [
        [FeatureBudget(1.0, 1.0, per="feature")],
        [FeatureBudget({"age": 2.0, "income": 1.0}, 2.0, per="feature")],
        [FeatureBudget({"age": 1.0}, 1.0, per="split")],
        [RequireFeatures(["age"]), MaxLeaves(2)],
        [ForbidFeatures(["age"])],
    ],
)
def test_raw_column_groups_match_the_oracle(constraints):
    """A raw column's binary features form one group (sources=): counted once per feature,
    forbidden or required together."""
    data = _credit_like()
    resolved = resolve(constraints, data, sources=["age", "age", "income"])
    for lam in (0.0, 0.02):
        tree, expected = brute_force_constrained_tree(data, resolved, lam=lam, max_depth=2)
        result = solve_formulation(PathOCT(), data, max_depth=2, lam=lam, constraints=resolved)
        assert result.status == "optimal", result.message
        assert result.objective == pytest.approx(expected, abs=TOL)
        assert metrics.constraint_violations(result.model, data, resolved) == []


def test_blocks_are_named_in_the_summary_and_the_lp_file(tmp_path):
    data = random_dataset(5, 12, 3, 2, True)
    protected = np.arange(data.n_samples) % 2
    constraints = [
        MaxLeaves(3),
        MinLeafSupport(share=0.1),
        FeatureBudget(1.0, 2.0, per="feature"),
        ForbidFeatures(["x2"]),
        RequireFeatures(["x0"]),
        ClassRecall(1, at_least=0.5),
        FalsePositiveRate(1, at_most=0.5),
        Predict([0], data.classes[0]),
        Fairness("sp", protected=protected, delta=0.5),
        Fairness("pe", protected=protected, delta=0.6),
        MaxLeaves(4),
    ]
    model = PathOCT().build(
        data,
        max_depth=2,
        lam=0.01,
        constraints=constraints,
        fairness=Fairness("eopp", protected=protected, delta=0.7),
    )
    names = [
        "max_leaves",
        "min_leaf_support",
        "feature_budget",
        "forbid_features",
        "require_features",
        "class_recall",
        "false_positive_rate",
        "predict",
        "fairness",
        "fairness_2",
        "max_leaves_2",
        "feature_budget_used_lo",
        "feature_budget_used_hi",
        "fairness_3",  # the fairness= argument: one more constraint (TreeFormulation.build)
    ]
    assert_blocks_named(model, names, tmp_path / "model.lp")
    result = solve_formulation(
        PathOCT(),
        data,
        max_depth=2,
        lam=0.01,
        constraints=constraints,
        fairness=Fairness("eopp", protected=protected, delta=0.7),
    )
    if result.model is not None:
        assert metrics.constraint_violations(result.model, data, resolve(constraints, data)) == []


def test_forbidden_and_light_cells_are_never_created():
    """Forbidden splits and splits with a child lighter than the minimum leaf weight are left
    out of the layout (fewer path variables), not only fixed to 0."""
    data = random_dataset(11, 12, 3, 2, False)
    plain = PathOCT().build(data, max_depth=2, lam=0.0).meta.layout.n_paths
    forbid = PathOCT().build(data, max_depth=2, lam=0.0, constraints=[ForbidFeatures(["x0"])])
    assert not np.any(forbid.meta.layout.action == 0)
    assert forbid.meta.layout.n_paths < plain
    share = PathOCT().build(data, max_depth=2, lam=0.0, constraints=[MinLeafSupport(share=0.3)])
    layout = share.meta.layout
    assert layout.n_paths < plain
    # every created cell below the root is the child of one split and weighs >= the floor
    weight = np.zeros(layout.node.size)
    rows = share.meta.rows
    floor = share.meta.constraints.min_leaf_weight
    for cell in range(1, layout.node.size):
        assert np.flatnonzero((layout.left == cell) | (layout.right == cell)).size == 1
    for action in np.flatnonzero(layout.action >= 0):
        parent_rows = _cell_rows(layout, int(layout.cell[action]), rows.X)
        right = parent_rows & rows.X[:, layout.action[action]]
        weight[layout.right[action]] = rows.weight[right].sum()
        weight[layout.left[action]] = rows.weight[parent_rows & ~right].sum()
    assert np.all(weight[1:] >= floor * (1 - 1e-9))
    # max_paths counts only the created actions: this limit refuses the plain model only
    limit = layout.n_paths
    PathOCT(max_paths=limit).build(
        data, max_depth=2, lam=0.0, constraints=[MinLeafSupport(share=0.3)]
    )
    with pytest.raises(ValueError, match="max_paths"):
        PathOCT(max_paths=limit).build(data, max_depth=2, lam=0.0)


def _cell_rows(layout, cell, X):
    """The rows of ``cell``: follow the splits from it up to the root."""
    rows = np.ones(X.shape[0], dtype=bool)
    while cell != 0:
        split = int(np.flatnonzero((layout.left == cell) | (layout.right == cell))[0])
        side = X[:, layout.action[split]]
        rows &= side if layout.right[split] == cell else ~side
        cell = int(layout.cell[split])
    return rows


def test_start_sets_the_group_indicators():
    """A feasible tree is a feasible start: the feature-group binaries are set from its
    splits, and a tree breaking a constraint is refused."""
    data = random_dataset(3, 12, 3, 2, False)
    constraints = [FeatureBudget(1.0, 1.0, per="feature"), MaxLeaves(3)]
    model = PathOCT().build(data, max_depth=2, lam=0.01, constraints=constraints)
    tree = Tree.split(1, Tree.leaf(0), Tree.leaf(1))
    if metrics.constraint_violations(tree, data, resolve(constraints, data)):
        pytest.skip("the split is not effective on this data")
    x = PathOCT().start(model, tree)
    used = model.values(x)["feature_budget_used"]
    assert used.tolist() == [0.0, 1.0, 0.0]
    assert model.is_feasible(x)
    two = Tree.split(0, Tree.leaf(0), Tree.split(1, Tree.leaf(0), Tree.leaf(1)))
    if metrics.constraint_violations(two, data, resolve(constraints, data)):
        with pytest.raises(ValueError, match="side constraint"):
            PathOCT().start(model, two)


def test_infeasible_minimum_support_is_status_infeasible():
    data = random_dataset(2, 8, 2, 2, False)
    result = solve_formulation(
        PathOCT(),
        data,
        max_depth=2,
        lam=0.0,
        constraints=[MinLeafSupport(share=0.6), RequireFeatures(["x0"])],
    )
    assert result.status == "infeasible"
    assert result.model is None

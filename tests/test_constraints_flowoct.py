"""FlowOCT carries every side constraint of odtkit.constraints exactly: the brute-force oracle
(testing.brute_force_constrained_tree) on tiny instances, each kind alone and random
combinations of two or three (weights, weight-0 rows, several classes, lam = 0 ties, infeasible
combinations), starts of oracle optima, and the named blocks in summary() and the LP file.
"""

from __future__ import annotations

import numpy as np
import pytest
from _constraint_oracle import (
    assert_blocks_named,
    assert_fairness_argument_is_one_more,
    constraint_dataset,
    formulation_agrees,
)
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
)
from odtkit.formulations import FlowOCT
from odtkit.testing import (
    CONSTRAINT_KINDS,
    brute_force_constrained_tree,
    random_constraint,
    random_constraints,
    random_dataset,
)
from odtkit.tree import Tree

TOL = 1e-6
LAMS = st.sampled_from([0.0, 0.0, 0.02, 0.1])


def _settings(n: int) -> settings:
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


def _check_kind_alone(kind: str, data: st.DataObject) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    d = constraint_dataset(rng, data.draw(st.integers(1, 3)))
    constraints = [random_constraint(kind, d, rng)]
    formulation_agrees(FlowOCT(), d, constraints, lam=data.draw(LAMS), depth=2)


def _check_combination(data: st.DataObject) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    d = constraint_dataset(rng, data.draw(st.integers(1, 3)))
    constraints = random_constraints(d, rng, data.draw(st.integers(2, 3)))
    formulation_agrees(FlowOCT(), d, constraints, lam=data.draw(LAMS), depth=2)


def _check_depth_three(data: st.DataObject) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    d = constraint_dataset(rng, 3, n_samples=(6, 11), classes=(2,), zero_weight=0.0)
    constraints = random_constraints(d, rng, data.draw(st.integers(1, 2)))
    formulation_agrees(
        FlowOCT(), d, constraints, lam=data.draw(st.sampled_from([0.0, 0.02])), depth=3
    )


@pytest.mark.parametrize("kind", CONSTRAINT_KINDS)
@_settings(25)
@given(data=st.data())
def test_each_kind_alone_matches_the_oracle(kind: str, data: st.DataObject) -> None:
    _check_kind_alone(kind, data)


@_settings(120)
@given(data=st.data())
def test_random_combinations_match_the_oracle(data: st.DataObject) -> None:
    _check_combination(data)


@_settings(2)
@given(data=st.data())
def test_depth_three_combinations_match_the_oracle(data: st.DataObject) -> None:
    _check_depth_three(data)


@pytest.mark.slow
@pytest.mark.parametrize("kind", CONSTRAINT_KINDS)
@_settings(150)
@given(data=st.data())
def test_each_kind_alone_matches_the_oracle_many(kind: str, data: st.DataObject) -> None:
    _check_kind_alone(kind, data)


@pytest.mark.slow
@_settings(1000)
@given(data=st.data())
def test_random_combinations_match_the_oracle_many(data: st.DataObject) -> None:
    _check_combination(data)


@pytest.mark.slow
@_settings(40)
@given(data=st.data())
def test_depth_three_combinations_match_the_oracle_many(data: st.DataObject) -> None:
    _check_depth_three(data)


def _xor_data() -> Dataset:
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 2, dtype=bool)
    y = (X[:, 0] ^ X[:, 1]).astype(np.int64)
    return Dataset(X, y, np.arange(2), ("a", "b"), "xor", None)


def test_infeasible_combination_has_status_infeasible_and_no_tree() -> None:
    d = _xor_data()
    # a split on b leaves 4 of the 8 rows on each side, fewer than 5: infeasible
    constraints = [MinLeafSupport(weight=5), RequireFeatures(["b"])]
    assert brute_force_constrained_tree(d, constraints, lam=0.0, max_depth=2)[0] is None
    result = solve_formulation(FlowOCT(), d, max_depth=2, lam=0.0, constraints=constraints)
    assert result.status == "infeasible"
    assert result.model is None


def test_required_split_is_kept_even_with_equal_leaves() -> None:
    # every row has label 0: the best tree is one leaf, but b must be tested effectively
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=bool)
    d = Dataset(X, np.zeros(4, dtype=np.int64), np.arange(2), ("a", "b"), "zeros", None)
    constraints = [RequireFeatures(["b"])]
    result = solve_formulation(FlowOCT(), d, max_depth=2, lam=0.1, constraints=constraints)
    assert result.status == "optimal"
    assert result.model == Tree.split(1, Tree.leaf(0), Tree.leaf(0))
    assert metrics.constraint_violations(result.model, d, constraints) == []


def test_blocks_are_named_in_summary_and_lp_file(tmp_path) -> None:
    d = random_dataset(5, 12, 3, n_classes=2, weighted=True)
    protected = np.arange(12) % 2
    constraints = [
        MaxLeaves(3),
        FeatureBudget(1.0, 2.0, per="feature"),
        FeatureBudget({"x0": 2.0}, 3.0),
        ForbidFeatures(["x2"]),
        RequireFeatures(["x1"]),
        ClassRecall(1, at_least=0.5),
        FalsePositiveRate(1, at_most=0.5),
        Predict([0], int(d.y[0])),
        Fairness("sp", protected=protected, delta=0.5),
        Fairness("eodds", protected=protected, delta=0.5),
        MinLeafSupport(share=0.1),
    ]
    model = FlowOCT().build(d, max_depth=2, lam=0.01, constraints=constraints)
    expected = {
        "max_leaves",
        "feature_budget",
        "feature_budget_2",
        "forbid_features",
        "require_features",
        "class_recall",
        "false_positive_rate",
        "predict",
        "fairness",
        "fairness_2",
        "min_leaf_support",
        "feature_budget_used_lo",
        "feature_budget_used_hi",
    }
    assert_blocks_named(model, expected, tmp_path / "flow.lp")


def test_fairness_argument_beside_fairness_constraints() -> None:
    d = random_dataset(11, 10, 3, n_classes=2)
    protected = np.arange(10) % 2
    inner = Fairness("sp", protected=protected, delta=0.3)
    outer = Fairness("eodds", protected=protected, delta=0.4)
    assert_fairness_argument_is_one_more(FlowOCT(), d, outer, inner)


def test_monotone_constraints_keep_the_single_sink_model() -> None:
    # leaves, split costs and forbidden features decoding can only lower: no routing needed
    d = random_dataset(2, 12, 3)
    constraints = [MaxLeaves(2), FeatureBudget(1.0, 1.0), ForbidFeatures(["x0"])]
    model = FlowOCT().build(d, max_depth=2, lam=0.0, constraints=constraints)
    assert model.meta.cells is None
    routed = FlowOCT().build(d, max_depth=2, lam=0.0, constraints=[MinLeafSupport(weight=2)])
    assert routed.meta.cells is not None
    assert "split_effective" in routed.constraints

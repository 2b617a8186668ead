"""rashomon(constraints=...): the Rashomon set of the trees that meet side constraints (issue 39).

The set is ``{T meeting every constraint : R(T) <= bound + 1e-9}`` with the bound from the
CONSTRAINED optimum. The oracle here is independent of the native build: every admissible tree
of the unconstrained space (``testing.brute_force_rashomon_set`` with an unbounded slack), kept
when ``ResolvedConstraints.violations`` finds nothing, its optimum checked against
``testing.brute_force_constrained_tree``; the count, the members, their order, membership,
``count_without`` and ``optimal_tree`` must match it exactly, for each constraint the set takes
and for combinations, with weights (zero weights too) and multi-class labels. The others are
refused in one line naming them.
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from odtkit import Fairness, _native, metrics, testing
from odtkit.cli import main
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
from odtkit.core._problem import build_problem, search_config
from odtkit.core.rashomon import rashomon_refusal
from odtkit.datasets import Dataset
from odtkit.rashomon import rashomon
from odtkit.tree import Tree

TOL = 1e-9


def oracle(data: Dataset, constraints, **problem) -> tuple[float, list[tuple[Tree, float]]]:
    """(OPT, [(tree, objective)]) of the constrained set by enumeration ((inf, []): no tree)."""
    every = testing.brute_force_rashomon_set(
        data,
        lam=problem["lam"],
        max_depth=problem["max_depth"],
        epsilon=1e6,
        absolute=True,
        leaves=problem["leaves"],
    )
    resolved = resolve(constraints, data)
    feasible = [(t, v) for t, v in every if not resolved.violations(t, data)]
    depth = data.n_features if problem["max_depth"] is None else problem["max_depth"]
    best, value = testing.brute_force_constrained_tree(
        data, constraints, lam=problem["lam"], max_depth=depth
    )
    if not feasible:
        assert best is None
        return float("inf"), []
    opt = min(v for _, v in feasible)
    assert opt == pytest.approx(value, abs=TOL)  # the two oracles agree on the optimum
    eps = problem["epsilon"]
    bound = opt + eps if problem["absolute"] else (1.0 + eps) * opt
    return opt, [(t, v) for t, v in feasible if v <= bound + TOL]


@st.composite
def constrained_problems(draw: st.DrawFn, wide: bool = False) -> tuple[Dataset, list, dict]:
    """Small random tables (weights of every kind, 2 or 3 classes) and constraints the set
    takes, alone or combined; ``wide``: 3 or 4 features (depth 3 with 3)."""
    p = draw(st.sampled_from([3, 4] if wide else [1, 2, 3, 3]))
    n = draw(st.sampled_from([2, 5, 8, 10, 12]))
    K = draw(st.sampled_from([2] if wide and p == 3 else [2, 2, 3]))  # 3^8 labellings: no
    base = testing.random_dataset(draw(st.integers(0, 2**32 - 1)), n, p, n_classes=K)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["none", "integer", "dyadic", "float", "zeros"]))
    weights = {
        "none": None,
        "integer": rng.integers(1, 4, size=n).astype(float),
        "dyadic": rng.choice([0.25, 0.5, 0.75, 1.5], size=n),
        "float": rng.random(n) + 0.01,
        "zeros": np.where(rng.random(n) < 0.3, 0.0, rng.integers(1, 3, size=n)).astype(float),
    }[kind]
    if weights is not None and not weights.sum() > 0:
        weights[0] = 1.0
    data = Dataset(base.X, base.y, base.classes, base.feature_names, "h", weights)
    names = list(data.feature_names)
    total = data.total_weight
    pool = {
        "forbid": lambda: ForbidFeatures(
            draw(st.lists(st.sampled_from(names), min_size=1, max_size=p, unique=True))
        ),
        "support": lambda: draw(
            st.sampled_from(
                [
                    MinLeafSupport(weight=total * draw(st.sampled_from([0.1, 0.25, 0.4, 0.5]))),
                    MinLeafSupport(share=draw(st.sampled_from([0.2, 1 / 3, 0.5, 1.0]))),
                    MinLeafSupport(weight=draw(st.sampled_from([1.0, 2.0, 3.0]))),
                    MinLeafSupport(weight=total * 1.01),  # no tree: an empty set
                ]
            )
        ),
        "leaves": lambda: MaxLeaves(draw(st.integers(1, 4))),
        "split_budget": lambda: draw(
            st.sampled_from(
                [
                    FeatureBudget(draw(st.sampled_from([1.0, 0.5, 2.0])), draw(st.integers(0, 3))),
                    FeatureBudget(
                        {
                            name: draw(st.sampled_from([0.0, 1.0, 2.0, 0.5]))
                            for name in draw(
                                st.lists(st.sampled_from(names), min_size=1, unique=True)
                            )
                        },
                        draw(st.sampled_from([0.0, 1.0, 2.0, 2.5, 3.0])),
                    ),
                ]
            )
        ),
    }
    kinds = draw(st.lists(st.sampled_from(sorted(pool)), min_size=1, max_size=3, unique=True))
    constraints = [pool[k]() for k in kinds]
    problem = {
        "lam": draw(st.sampled_from([0.0, 0.01, 1 / 12, 0.25])),
        "max_depth": draw(
            st.sampled_from([2, 3] if wide and p == 3 else [2] if wide else [1, 2, 2, 3, None])
            if p <= 2 or wide
            else st.sampled_from([1, 2, 2])
        ),
        "epsilon": draw(st.sampled_from([0.0, 0.05, 0.5, 2.0])),
        "absolute": draw(st.booleans()),
        "leaves": draw(st.sampled_from(["any", "any", "majority"])),
    }
    return data, constraints, problem


@settings(max_examples=150, deadline=None)
@given(constrained_problems())
def test_the_constrained_set_is_the_filtered_enumeration(drawn):
    check_against_the_enumeration(*drawn)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(constrained_problems(wide=True))
def test_the_constrained_set_is_the_filtered_enumeration_on_wider_spaces(drawn):
    check_against_the_enumeration(*drawn)


def check_against_the_enumeration(data: Dataset, constraints: list, problem: dict) -> None:
    resolved = resolve(constraints, data)
    refusal = rashomon_refusal(resolved)
    if refusal:  # two split budgets that are not multiples of one another (as the search)
        event("refused: two split budgets")
        with pytest.raises(ValueError, match="split budget"):
            rashomon(data, constraints=constraints, **problem)
        return
    event("+".join(sorted(c.kind for c in constraints)))
    rs = rashomon(data, constraints=constraints, **problem)
    opt, expected = oracle(data, constraints, **problem)
    assert rs.complete
    if not expected:
        event("infeasible")
        assert rs.status == "infeasible" and rs.count() == 0 and rs.optimal_tree is None
        assert rs.optimum == float("inf") and list(rs) == []
        return
    assert rs.status == "optimal"
    assert rs.optimum == pytest.approx(opt, abs=TOL)
    trees = list(rs)
    count = rs.count()
    assert count == len(trees) == len(expected)
    assert len(set(trees)) == count  # no tree twice
    assert set(trees) == {t for t, _ in expected}
    # objective order, each tree within the bound and meeting every constraint
    objectives = rs.core.objectives(0, count)
    rescored = np.array([metrics.objective(t, data, lam=rs.lam) for t in trees])
    np.testing.assert_allclose(objectives, rescored, rtol=0, atol=TOL)
    assert (np.diff(objectives) >= -1e-12).all()
    assert all(not resolved.violations(t, data) for t in trees)
    # the optimal tree: the search's, a member scoring OPT
    best = rs.optimal_tree
    assert best is not None and best in rs and not resolved.violations(best, data)
    assert metrics.objective(best, data, lam=rs.lam) == pytest.approx(opt, abs=TOL)
    assert objectives[0] == pytest.approx(opt, abs=TOL)
    # exact counts of the trees avoiding each feature, and the histogram
    for j in range(data.n_features):
        assert rs.core.count_without(j) == sum(j not in t.features_used() for t, _ in expected)
    hist = rs.objective_histogram()
    assert sum(hist["count"]) == count
    assert not hist.duplicated(["misclassified", "leaves"]).any()
    by_leaves = Counter()
    for leaves, c in zip(hist["leaves"], hist["count"], strict=True):
        by_leaves[int(leaves)] += c
    assert by_leaves == Counter(t.n_leaves for t, _ in expected)
    for i in {0, count // 2, count - 1}:
        assert rs[i] == trees[i]
    np.testing.assert_array_equal(rs.predictions(), [t.predict(data.X) for t in trees])


@settings(max_examples=25, deadline=None)
@given(constrained_problems())
def test_membership_is_the_constrained_definition(drawn):
    """A tree of the unconstrained set is a member exactly when it meets the constraints and
    the constrained bound (``in`` decides from the definition, no listing)."""
    data, constraints, problem = drawn
    resolved = resolve(constraints, data)
    if rashomon_refusal(resolved):
        return
    rs = rashomon(data, constraints=constraints, **problem)
    members = set(rs)
    wide = testing.brute_force_rashomon_set(
        data,
        lam=problem["lam"],
        max_depth=problem["max_depth"],
        epsilon=1e6,
        absolute=True,
        leaves=problem["leaves"],
    )
    for tree, _ in wide[:300]:
        assert (tree in rs) == (tree in members)


def _data(seed: int = 3, n: int = 14, p: int = 3, K: int = 2) -> Dataset:
    return testing.random_dataset(seed, n, p, n_classes=K)


def test_forbidden_features_are_never_split_on_and_indices_stay_the_datasets():
    data = _data(p=4)
    free = rashomon(data, lam=0.01, max_depth=2, epsilon=1.0)
    rs = rashomon(data, lam=0.01, max_depth=2, epsilon=1.0, constraints=[ForbidFeatures("x1")])
    assert rs.count() > 0 and all(1 not in t.features_used() for t in rs)
    assert any(3 in t.features_used() for t in rs)  # features after the forbidden one
    assert rs.core.count_without(1) == rs.count()
    assert rs.optimum >= free.optimum - TOL
    usage = rs.feature_usage()
    assert usage.loc["x1", "trees"] == 0


def test_raw_column_names_forbid_all_their_binary_features():
    data = _data(p=4)
    sources = ["a", "a", "b", "c"]
    rs = rashomon(
        data, lam=0.0, max_depth=2, epsilon=0.5, constraints=[ForbidFeatures("a")], sources=sources
    )
    assert rs.count() > 0
    assert all(not {0, 1} & t.features_used() for t in rs)


def test_a_minimum_leaf_support_above_the_total_weight_is_an_empty_infeasible_set():
    data = _data()
    rs = rashomon(data, lam=0.01, max_depth=2, constraints=[MinLeafSupport(weight=100.0)])
    assert rs.count() == 0 and not rs and rs.complete and rs.status == "infeasible"
    assert rs.optimal_tree is None and rs.optimum == float("inf")
    assert "min_leaf_support" in rs.stats["message"]
    assert Tree.leaf(0) not in rs
    assert rs.objective_histogram().empty
    assert list(rs.feature_usage()["trees"]) == [0] * data.n_features
    assert "0 trees" in repr(rs) and "infeasible" in repr(rs)


def test_the_whole_weight_as_support_leaves_only_the_single_leaves():
    data = _data(K=3)
    rs = rashomon(
        data, lam=0.0, max_depth=2, epsilon=1e6, absolute=True,
        constraints=[MinLeafSupport(share=1.0)],
    )  # fmt: skip
    assert sorted(t.as_leaf() for t in rs) == [0, 1, 2]


def test_no_constraint_is_the_unconstrained_set():
    data = _data()
    plain = rashomon(data, lam=0.01, max_depth=2, epsilon=0.5)
    for none in (None, []):
        rs = rashomon(data, lam=0.01, max_depth=2, epsilon=0.5, constraints=none)
        assert rs.constraints is None and list(rs) == list(plain)


def test_a_resolved_constraints_is_taken_as_it_is():
    data = _data()
    resolved = resolve([MaxLeaves(2)], data)
    rs = rashomon(data, lam=0.0, max_depth=2, epsilon=1.0, constraints=resolved)
    assert rs.constraints is resolved and all(t.n_leaves <= 2 for t in rs)
    with pytest.raises(ValueError, match="another dataset"):
        rashomon(_data(n=9), lam=0.0, max_depth=2, constraints=resolved)


def test_split_budgets_count_per_cost_used():
    """A budget the tree can reach at depth 3: the count per cost is exact (the oracle)."""
    data = _data(seed=11, n=12, p=3)
    costs = {"x0": 1.0, "x1": 2.0, "x2": 0.0}
    constraints = [FeatureBudget(costs, 2.0)]
    problem = {"lam": 0.0, "max_depth": 2, "epsilon": 3.0, "absolute": False, "leaves": "any"}
    rs = rashomon(data, constraints=constraints, **problem)
    _, expected = oracle(data, constraints, **problem)
    assert rs.count() == len(expected) and set(rs) == {t for t, _ in expected}
    hist = rs.objective_histogram()
    assert not hist.duplicated(["misclassified", "leaves"]).any()


@pytest.mark.parametrize(
    ("constraint", "kind"),
    [
        (RequireFeatures("x0"), "require_features"),
        (ClassRecall(1, 0.5), "class_recall"),
        (FalsePositiveRate(1, 0.5), "false_positive_rate"),
        (Predict([0, 1], 1), "predict"),
        (FeatureBudget(1.0, 2, per="feature"), "feature_budget"),
        (Fairness("sp", protected=np.arange(14) % 2, delta=0.2), "fairness"),
    ],
)
def test_what_the_set_cannot_take_is_refused_in_one_line(constraint, kind):
    data = _data()
    with pytest.raises(ValueError, match=kind) as info:
        rashomon(data, lam=0.01, max_depth=2, constraints=[MaxLeaves(3), constraint])
    message = str(info.value)
    assert "\n" not in message and "Rashomon set cannot take it" in message


def test_two_split_budgets_not_multiples_of_one_another_are_refused():
    data = _data()
    with pytest.raises(ValueError, match="split budget"):
        rashomon(
            data, lam=0.0, max_depth=2,
            constraints=[MaxLeaves(3), FeatureBudget({"x0": 2.0, "x1": 1.0}, 2.0)],
        )  # fmt: skip


def test_not_a_constraint_is_a_type_error():
    with pytest.raises(TypeError, match="not a constraint"):
        rashomon(_data(), lam=0.0, max_depth=1, constraints=["max-leaves=2"])


def test_the_native_build_checks_its_constraint_arguments():
    data = _data()
    problem = build_problem(data)
    config = search_config(0.0, time_limit=None, node_limit=None, memory_limit_mb=None, bounds={})
    config.max_depth = 2
    with pytest.raises(ValueError, match="allowed"):
        _native.rashomon_build(problem, config, 1.0, False, allowed=[1])
    with pytest.raises(ValueError, match="split_costs"):
        _native.rashomon_build(problem, config, 1.0, False, split_costs=[1, 1])
    with pytest.raises(ValueError, match="costs must be >= 0"):
        _native.rashomon_build(problem, config, 1.0, False, split_costs=[1, -1, 1], budget=2)
    with pytest.raises(ValueError, match="budget"):
        _native.rashomon_build(problem, config, 1.0, False, split_costs=[1, 1, 1], budget=-2)
    config.min_leaf_weight = 0.3
    rs = _native.rashomon_build(problem, config, 1.0, False, allowed=[1, 0, 1])
    assert int(rs.count(), 16) > 0 and rs.count_without(1) == rs.count()


def test_the_cli_takes_constraints(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, 40),
            "colour": rng.choice(["red", "blue"], 40),
        }
    )
    frame["y"] = ((frame["age"] > 40) ^ (frame["colour"] == "red")).astype(int)
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    argv = ["rashomon", str(path), "--label", "y", "--lam", "0.01", "--max-depth", "2"]
    code = main([*argv, "--epsilon", "0.5", "--constraint", "forbid=age", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and payload["count"] > 0
    assert "forbid=age" in payload["constraints"]
    for entry in payload["top"]:
        assert "age" not in entry["text"]
    code = main([*argv, "--constraint", "min-leaf-weight=1000"])
    out = capsys.readouterr().out
    assert code == 1 and "infeasible" in out and "min_leaf_support" in out
    code = main([*argv, "--constraint", "min-leaf-weight=1000", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 1 and payload["status"] == "infeasible" and payload["count"] == 0
    code = main([*argv, "--constraint", "require=age"])
    err = capsys.readouterr().err
    assert code == 2 and "require_features" in err and "Traceback" not in err


def test_the_estimators_set_carries_its_fitted_constraints():
    from odtkit import OptimalTreeClassifier

    data = _data(n=30)
    est = OptimalTreeClassifier(lam=0.01, max_depth=2, constraints=[ForbidFeatures("x0")])
    est.fit(data.X, data.y)
    rs = est.rashomon(epsilon=0.5)
    assert rs.count() > 0 and all(0 not in t.features_used() for t in rs)
    assert rs.constraints is not None and est.tree_ in rs
    # the search cannot certify it: a MIP fits (method "auto"), the set refuses it
    small = _data(n=10)
    est = OptimalTreeClassifier(
        lam=0.01, max_depth=1, method="auto", constraints=[RequireFeatures("x0")]
    )
    est.fit(small.X, small.y)
    with pytest.raises(ValueError, match="require_features"):
        est.rashomon()

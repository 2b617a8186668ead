"""Pricing for branch-and-price (odtkit.core.price): the least-value tree over the domain,
against an independent brute force over every tree of the domain on small random instances."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit.constraints import MinLeafSupport, effective_splits, resolve
from odtkit.core import PositionRule, Priced, price
from odtkit.costs import RowCosts
from odtkit.datasets import Dataset
from odtkit.results import Status
from odtkit.testing import enumerate_trees, random_dataset
from odtkit.tree import Tree

TOL = 1e-7

# -------------------------------------------------------------------------------------------
# the independent oracle: every tree structure, each leaf its cheapest class the rules allow


def node_at(tree: Tree, node: int) -> Tree | None:
    """The subtree at heap position ``node`` (walked from the root by the position's bits)."""
    path = []
    while node > 1:
        path.append(node & 1)
        node >>= 1
    here: Tree | None = tree
    for bit in reversed(path):
        if here is None or here.is_leaf:
            return None
        here = here.right if bit else here.left
    return here


def meets(tree: Tree, rule: PositionRule) -> bool:
    here = node_at(tree, rule.node)
    if rule.feature is not None:
        has = here is not None and not here.is_leaf and here.feature == rule.feature
    else:
        has = here is not None and here.is_leaf and here.label == rule.klass
    return has == rule.required


def value_of(tree: Tree, data: Dataset, costs: np.ndarray, leaf_cost: float, groups: Any) -> float:
    predicted = tree.predict(data.X)
    used = tree.features_used()
    group_part = sum(c for g, c in groups if used & {int(j) for j in g})
    return float(costs[np.arange(data.n_samples), predicted].sum()) + (
        leaf_cost * tree.n_leaves + group_part
    )


def in_domain(
    tree: Tree, data: Dataset, forbidden: np.ndarray, floor: float, rules: list[PositionRule]
) -> bool:
    positive = data.X[data.weights > 0]
    if len(effective_splits(tree, positive)) != tree.n_leaves - 1:
        return False
    if any(forbidden[j] for j in tree.features_used()):
        return False
    if floor > 0 and resolve([MinLeafSupport(weight=floor)], data).violations(tree, data):
        return False
    return all(meets(tree, rule) for rule in rules)


def labelled(structure: Tree, data: Dataset, costs: np.ndarray, rules: list[PositionRule]) -> Tree:
    """``structure`` with each leaf its cheapest class among those its position's rules allow
    (class 0 where none is allowed: such a tree then breaks a rule and is dropped)."""
    K = data.n_classes

    def walk(node: Tree, position: int, rows: np.ndarray) -> Tree:
        if node.is_leaf:
            ok = np.ones(K, dtype=bool)
            for rule in rules:
                if rule.node == position and rule.klass is not None:
                    if rule.required:
                        ok &= np.arange(K) == rule.klass
                    else:
                        ok[rule.klass] = False
            totals = np.where(ok, costs[rows].sum(axis=0), np.inf)
            return Tree.leaf(int(np.argmin(totals)))
        feature, left, right = node.as_split()
        goes = data.X[rows, feature]
        return Tree.split(
            feature,
            walk(left, 2 * position, rows[~goes]),
            walk(right, 2 * position + 1, rows[goes]),
        )

    return walk(structure, 1, np.arange(data.n_samples))


def brute_force(
    data: Dataset,
    *,
    max_depth: int,
    costs: np.ndarray,
    leaf_cost: float = 0.0,
    groups: Any = (),
    forbidden: np.ndarray | None = None,
    floor: float = 0.0,
    rules: list[PositionRule] | None = None,
) -> tuple[Tree | None, float]:
    forbidden = np.zeros(data.n_features, bool) if forbidden is None else forbidden
    rules = rules or []
    best: tuple[Tree | None, float] = (None, math.inf)
    for structure in enumerate_trees(data.n_features, max_depth, n_classes=1):
        tree = labelled(structure, data, costs, rules)
        if not in_domain(tree, data, forbidden, floor, rules):
            continue
        value = value_of(tree, data, costs, leaf_cost, groups)
        if value < best[1]:
            best = (tree, value)
    return best


def check_against_oracle(data: Dataset, answer: Priced, expected: float, **problem: Any) -> None:
    costs, leaf_cost = problem["costs"], problem.get("leaf_cost", 0.0)
    groups = problem.get("groups", ())
    scale = max(1.0, float(np.abs(costs).sum()) + leaf_cost * 2 ** problem["max_depth"])
    if math.isinf(expected):
        assert answer.status == Status.INFEASIBLE and answer.tree is None
        assert answer.value == math.inf and answer.lower_bound == math.inf
        return
    assert answer.status == Status.OPTIMAL
    assert answer.tree is not None
    assert answer.value == answer.lower_bound
    assert abs(answer.value - expected) <= TOL * scale
    measured = value_of(answer.tree, data, costs, leaf_cost, groups)
    assert abs(measured - answer.value) <= TOL * scale
    forbidden = problem.get("forbidden")
    forbidden = np.zeros(data.n_features, bool) if forbidden is None else forbidden
    assert in_domain(answer.tree, data, forbidden, problem.get("floor", 0.0), problem["rules"])
    assert answer.tree.depth <= problem["max_depth"]


# -------------------------------------------------------------------------------------------
# random instances


def instance(seed: int, depth: int, n_classes: int) -> Dataset:
    rng = np.random.default_rng(seed)
    p = int(rng.integers(1, 5 if depth <= 2 else 4))
    data = random_dataset(
        seed,
        n_samples=int(rng.integers(4, 31)),
        n_features=p,
        n_classes=n_classes,
        weighted=bool(rng.integers(2)),
    )
    if rng.random() < 0.3:  # some rows of weight 0 (they must cost 0)
        weights = data.weights.copy()
        weights[rng.random(data.n_samples) < 0.2] = 0.0
        if weights.sum() > 0:
            data = dataclasses.replace(data, sample_weight=weights)
    return data


def random_costs(data: Dataset, rng: np.random.Generator, *, plain: bool) -> np.ndarray:
    """Reducible costs of both signs: per row the maximum at every class but one (at most).
    ``plain``: the reduced weights are the dataset's scaled (``c w_i [k != y'_i]`` + a row
    constant), the costs a minimum leaf support is measured under today."""
    n, K = data.n_samples, data.n_classes
    w = data.weights
    if plain:
        base = rng.normal(size=n) * w
        labels = rng.integers(K, size=n)
        costs = base[:, None] + 1.5 * w[:, None] * (np.arange(K)[None, :] != labels[:, None])
    else:
        top = rng.normal(size=n) * 3
        costs = np.repeat(top[:, None], K, axis=1)
        drop = rng.exponential(size=n) * (rng.random(n) < 0.85)
        costs[np.arange(n), rng.integers(K, size=n)] -= drop
    costs[w == 0] = 0.0
    return costs


def random_rules(
    data: Dataset, depth: int, rng: np.random.Generator, count: int
) -> list[PositionRule]:
    rules = []
    for _ in range(count):
        level = int(rng.integers(0, depth + 1)) if rng.random() < 0.9 else depth + 1
        node = int(rng.integers(2**level, 2 ** (level + 1)))  # sometimes below the depth
        required = bool(rng.random() < 0.35)
        if rng.random() < 0.6:
            rules.append(
                PositionRule(node, feature=int(rng.integers(data.n_features)), required=required)
            )
        else:
            rules.append(
                PositionRule(node, klass=int(rng.integers(data.n_classes)), required=required)
            )
    return rules


@settings(max_examples=120, deadline=None)
@given(
    st.integers(0, 2**31 - 1),
    st.integers(1, 3),
    st.sampled_from([2, 2, 3]),
    st.booleans(),
    st.integers(0, 3),
)
def test_price_equals_the_brute_force(
    seed: int, depth: int, n_classes: int, groups_on: bool, n_rules: int
) -> None:
    rng = np.random.default_rng(seed)
    data = instance(seed, depth, n_classes)
    p = data.n_features
    plain = bool(rng.random() < 0.4)
    costs = random_costs(data, rng, plain=plain)
    leaf_cost = float(rng.choice([0.0, 0.0, 0.1, 0.5, 2.0]))
    forbidden = rng.random(p) < 0.25 if rng.random() < 0.4 else None
    floor = float(rng.choice([0.5, 2.0, 4.0])) if rng.random() < 0.5 else 0.0
    groups = []
    if groups_on:
        for _ in range(int(rng.integers(1, 3))):
            members = rng.choice(p, size=int(rng.integers(1, p + 1)), replace=False)
            groups.append((members, float(rng.choice([0.0, 0.5, 3.0]))))
    rules = random_rules(data, depth, rng, n_rules)
    answer = price(
        data,
        max_depth=depth,
        row_costs=costs,
        leaf_cost=leaf_cost,
        group_costs=groups,
        forbidden=forbidden,
        min_leaf_weight=floor,
        rules=rules,
    )
    problem = dict(
        max_depth=depth,
        costs=costs,
        leaf_cost=leaf_cost,
        groups=groups,
        forbidden=forbidden,
        floor=floor,
        rules=rules,
    )
    _, expected = brute_force(data, **problem)
    check_against_oracle(data, answer, expected, **problem)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 3), st.sampled_from([2, 3]))
def test_rules_two_levels_above_the_leaves_with_a_support(
    seed: int, depth: int, n_classes: int
) -> None:
    # the positions whose splits are all priced at once (pair sums), with a support
    rng = np.random.default_rng(seed)
    data = instance(seed, depth, n_classes)
    costs = random_costs(data, rng, plain=bool(rng.random() < 0.5))
    floor = float(rng.choice([0.0, 1.0, 2.0, 3.0]))
    level = depth - 2
    rules = []
    for _ in range(int(rng.integers(1, 3))):
        node = int(rng.integers(2**level, 2 ** (level + 1)))
        if rng.random() < 0.5:
            feature = int(rng.integers(data.n_features))
            rules.append(PositionRule(node, feature=feature, required=bool(rng.random() < 0.3)))
        else:
            below = int(rng.integers(2 * node, 4 * node + 4))  # a child or a grandchild
            klass = int(rng.integers(n_classes))
            rules.append(PositionRule(below, klass=klass, required=bool(rng.random() < 0.3)))
    leaf_cost = float(rng.choice([0.0, 0.2]))
    answer = price(
        data,
        max_depth=depth,
        row_costs=costs,
        leaf_cost=leaf_cost,
        min_leaf_weight=floor,
        rules=rules,
    )
    problem = dict(max_depth=depth, costs=costs, leaf_cost=leaf_cost, floor=floor, rules=rules)
    _, expected = brute_force(data, **problem)
    check_against_oracle(data, answer, expected, **problem)


# -------------------------------------------------------------------------------------------
# a position whose rules only forbid splits (and leaf classes), nothing ruled below it: one dp
# call with the native root mask


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**31 - 1),
    st.integers(2, 4),
    st.sampled_from([2, 3]),
    st.booleans(),
    st.booleans(),
)
def test_forbidden_splits_priced_with_the_root_mask(
    seed: int, depth: int, n_classes: int, groups_on: bool, leaf_rule: bool
) -> None:
    rng = np.random.default_rng(seed)
    data = instance(seed, depth, n_classes)
    p = data.n_features
    costs = random_costs(data, rng, plain=bool(rng.random() < 0.5))
    leaf_cost = float(rng.choice([0.0, 0.1, 0.5]))
    floor = float(rng.choice([0.5, 2.0])) if rng.random() < 0.4 else 0.0
    level = int(rng.integers(0, depth - 1))  # a position of height >= 2
    node = int(rng.integers(2**level, 2 ** (level + 1)))
    features = rng.choice(p, size=int(rng.integers(1, p + 1)), replace=False)
    rules = [PositionRule(node, feature=int(j), required=False) for j in features]
    if leaf_rule:
        rules.append(PositionRule(node, klass=int(rng.integers(n_classes)), required=False))
    if level > 0 and rng.random() < 0.5:  # a rule above it (on its path), none below
        rules.append(PositionRule(node >> 1, feature=int(rng.integers(p))))
    groups = []
    if groups_on:
        members = rng.choice(p, size=int(rng.integers(1, p + 1)), replace=False)
        groups.append((members, float(rng.choice([0.5, 3.0]))))
    answer = price(
        data,
        max_depth=depth,
        row_costs=costs,
        leaf_cost=leaf_cost,
        group_costs=groups,
        min_leaf_weight=floor,
        rules=rules,
    )
    problem = dict(
        max_depth=depth, costs=costs, leaf_cost=leaf_cost, groups=groups, floor=floor, rules=rules
    )
    _, expected = brute_force(data, **problem)
    check_against_oracle(data, answer, expected, **problem)


@pytest.mark.parametrize("klass", [None, 0, 1])
def test_a_forbidden_root_split_takes_one_masked_dp_call(
    klass: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from odtkit.core import pricing
    from odtkit.datasets import load

    data = load("german-credit")
    rng = np.random.default_rng(11)
    n = data.n_samples
    costs = np.c_[np.zeros(n), rng.normal(size=n) * data.weights]
    free = price(data, max_depth=3, row_costs=costs, leaf_cost=0.5)
    assert free.tree is not None and not free.tree.is_leaf
    rules = [PositionRule(1, feature=int(free.tree.as_split()[0]), required=False)]
    if klass is not None:
        rules.append(PositionRule(1, klass=klass, required=False))
    masked = price(data, max_depth=3, row_costs=costs, leaf_cost=0.5, rules=rules)
    assert masked.status == Status.OPTIMAL and masked.tree is not None
    assert masked.dp_calls <= 2  # the free optimum, then the masked one
    # the enumeration of the root's splits (the path before the mask) agrees
    monkeypatch.setattr(pricing._Pricer, "_masked", lambda *args: None)
    enumerated = price(data, max_depth=3, row_costs=costs, leaf_cost=0.5, rules=rules)
    assert enumerated.dp_calls > 10 * masked.dp_calls
    assert masked.value == pytest.approx(enumerated.value, rel=1e-9, abs=1e-7)
    assert value_of(masked.tree, data, costs, 0.5, ()) == pytest.approx(masked.value)
    # stopped by a time limit: the masked path's tree (if any) and bound stay valid
    monkeypatch.undo()
    for limit in (1e-6, 2e-3):
        stopped = price(
            data, max_depth=3, row_costs=costs, leaf_cost=0.5, rules=rules, time_limit=limit
        )
        if stopped.status == Status.OPTIMAL:
            assert stopped.value == pytest.approx(masked.value, rel=1e-9, abs=1e-7)
            continue
        assert stopped.status == Status.TIME_LIMIT
        assert stopped.lower_bound <= masked.value + 1e-7
        if stopped.tree is not None:
            assert stopped.lower_bound <= stopped.value
            assert stopped.value >= masked.value - 1e-7
            assert value_of(stopped.tree, data, costs, 0.5, ()) == pytest.approx(stopped.value)


# -------------------------------------------------------------------------------------------
# a minimum leaf support beside costs the reduced weights cannot measure: the search's call


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 3))
def test_support_beside_any_costs_matches_the_brute_force(seed: int, depth: int) -> None:
    # the reduced weights are not the dataset's: the native problem measures the support in
    # the dataset's own weights beside them
    rng = np.random.default_rng(seed)
    data = instance(seed, depth, 2)
    costs = random_costs(data, rng, plain=False)
    floor = float(rng.choice([0.5, 2.0, 4.0]))
    answer = price(data, max_depth=depth, row_costs=costs, min_leaf_weight=floor)
    problem = dict(max_depth=depth, costs=costs, floor=floor, rules=[])
    _, expected = brute_force(data, **problem)
    check_against_oracle(data, answer, expected, **problem)


# -------------------------------------------------------------------------------------------
# the dp's optimum on real tables, and the argument checks


@pytest.mark.parametrize(
    ("name", "depth"), [("german-credit", 2), ("german-credit", 3), ("balance-scale", 2)]
)
def test_price_equals_the_search_under_the_same_costs(name: str, depth: int) -> None:
    from odtkit.core import search_tree
    from odtkit.datasets import load

    data = load(name)
    rng = np.random.default_rng(7)
    n, K = data.n_samples, data.n_classes
    # reducible for any K: one cheap class per row, the others equal
    costs = np.repeat(rng.normal(size=n)[:, None], K, axis=1)
    costs[np.arange(n), rng.integers(K, size=n)] -= rng.exponential(size=n)
    leaf_cost = 0.75
    answer = price(data, max_depth=depth, row_costs=costs, leaf_cost=leaf_cost)
    W = data.total_weight
    searched = search_tree(data, lam=leaf_cost / W, max_depth=depth, constraints=[RowCosts(costs)])
    assert answer.status == Status.OPTIMAL
    assert answer.value == pytest.approx(searched.objective * W, rel=1e-9, abs=1e-7)
    assert value_of(answer.tree, data, costs, leaf_cost, ()) == pytest.approx(answer.value)


def test_costs_that_are_no_weighted_misclassification_are_refused() -> None:
    data = random_dataset(1, n_samples=10, n_features=2, n_classes=3)
    costs = np.tile([0.0, 1.0, 2.0], (10, 1))  # two classes below the maximum
    with pytest.raises(ValueError, match="row_costs: .*reducible to a weighted misclassif"):
        price(data, max_depth=2, row_costs=costs)


def test_arguments_are_checked_naming_them() -> None:
    data = random_dataset(2, n_samples=10, n_features=3)
    costs = np.zeros((10, 2))
    zero_weight = dataclasses.replace(data, sample_weight=np.r_[0.0, np.ones(9)])
    cases: list[tuple[dict[str, Any], str]] = [
        (dict(row_costs=np.zeros((9, 2))), "row_costs"),
        (dict(row_costs=np.full((10, 2), np.nan)), "row_costs"),
        (dict(leaf_cost=-1.0), "leaf_cost"),
        (dict(group_costs=[(np.array([0, 5]), 1.0)]), "group_costs"),
        (dict(group_costs=[(np.array([0]), -1.0)]), "group_costs"),
        (dict(forbidden=np.zeros(2, bool)), "forbidden"),
        (dict(min_leaf_weight=-1.0), "min_leaf_weight"),
        (dict(rules=[PositionRule(1, feature=3)]), "rules"),
        (dict(rules=[PositionRule(2, klass=2)]), "rules"),
        (dict(time_limit=0.0), "time_limit"),
        (dict(max_depth=-1), "max_depth"),
    ]
    for change, name in cases:
        arguments: dict[str, Any] = dict(max_depth=2, row_costs=costs) | change
        with pytest.raises((TypeError, ValueError), match=name):
            price(data, **arguments)
    costs[0, 1] = 1.0
    with pytest.raises(ValueError, match="row_costs: row 0 has sample weight 0"):
        price(zero_weight, max_depth=2, row_costs=costs)
    with pytest.raises(TypeError, match="exactly one"):
        PositionRule(1, feature=0, klass=0)
    with pytest.raises(ValueError, match="node"):
        PositionRule(0, feature=0)


def test_contradictory_rules_leave_no_tree() -> None:
    data = random_dataset(4, n_samples=30, n_features=3)
    costs = random_costs(data, np.random.default_rng(0), plain=False)
    contradictions = [
        [PositionRule(1, feature=0), PositionRule(1, feature=1)],
        [PositionRule(1, feature=0), PositionRule(1, feature=0, required=False)],
        [PositionRule(1, klass=0), PositionRule(2, klass=1)],  # a leaf with a node below it
        [PositionRule(8, klass=0)],  # below the depth limit
        [PositionRule(4, feature=1)],  # a split at the depth limit
    ]
    for rules in contradictions:
        answer = price(data, max_depth=2, row_costs=costs, rules=rules)
        assert answer.status == Status.INFEASIBLE and answer.tree is None
        assert answer.value == answer.lower_bound == math.inf


def test_a_time_limit_returns_a_valid_bound() -> None:
    from odtkit.datasets import load

    data = load("german-credit")
    rng = np.random.default_rng(3)
    n = data.n_samples
    costs = np.c_[np.zeros(n), rng.normal(size=n)]
    free = price(data, max_depth=3, row_costs=costs, leaf_cost=0.5)
    assert free.tree is not None and not free.tree.is_leaf
    # ruling out the free optimum's root split makes every other root split a sub-problem
    rules = [
        PositionRule(1, feature=int(free.tree.as_split()[0]), required=False),
        PositionRule(2, klass=0, required=False),
    ]
    exact = price(data, max_depth=3, row_costs=costs, leaf_cost=0.5, rules=rules)
    assert exact.status == Status.OPTIMAL and exact.value >= free.value - 1e-9
    stopped = price(data, max_depth=3, row_costs=costs, leaf_cost=0.5, rules=rules, time_limit=1e-4)
    assert stopped.status == Status.TIME_LIMIT
    assert stopped.lower_bound <= exact.value + 1e-9
    if stopped.tree is not None:
        assert stopped.value >= exact.value - 1e-9
        assert stopped.lower_bound <= stopped.value
        assert value_of(stopped.tree, data, costs, 0.5, ()) == pytest.approx(stopped.value)


def test_a_required_leaf_class_beyond_the_feature_count() -> None:
    # (a required leaf's class once indexed the feature mask: class 2 of a 2-feature table)
    data = random_dataset(5, n_samples=24, n_features=2, n_classes=3)
    costs = random_costs(data, np.random.default_rng(5), plain=False)
    rules = [PositionRule(2, klass=2)]
    answer = price(data, max_depth=2, row_costs=costs, rules=rules)
    problem = dict(max_depth=2, costs=costs, rules=rules)
    _, expected = brute_force(data, **problem)
    check_against_oracle(data, answer, expected, **problem)

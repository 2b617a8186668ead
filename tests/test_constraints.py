"""The constraint vocabulary itself (odtkit.constraints, docs/constraints.md): each value's
checks on construction (errors name the argument), resolution against a bundled dataset and a
binarized raw table (raw column names through ``sources``), the violations each kind finds on
hand-made trees (a satisfied and a broken case each), metrics.constraint_violations, the
brute-force oracle on fixed instances, and the CLI text syntax (parse)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from _constraint_oracle import constraint_dataset
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit import Dataset, metrics
from odtkit.constraints import (
    SYNTAX,
    ClassRecall,
    FalsePositiveRate,
    FeatureBudget,
    ForbidFeatures,
    MaxLeaves,
    MinLeafSupport,
    Predict,
    RequireFeatures,
    ResolvedConstraints,
    check_constraints,
    effective_splits,
    parse,
    resolve,
)
from odtkit.datasets import Binarizer, load
from odtkit.testing import (
    CONSTRAINT_KINDS,
    brute_force_constrained_tree,
    random_constraint,
    random_constraints,
)
from odtkit.tree import Tree

# --- a hand-made instance: y is f0, f1 and f2 are noise, every combination present once ------

X8 = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)], dtype=np.uint8)
DATA = Dataset.from_arrays(X8, X8[:, 0].astype(int), feature_names=["f0", "f1", "f2"])
L0, L1 = Tree.leaf(0), Tree.leaf(1)
STUMP = Tree.split(0, L0, L1)  # perfect: 2 leaves of weight 4
THREE = Tree.split(0, Tree.split(1, L0, L0), L1)  # 3 leaves (2, 2, 4), splits on f0 and f1
#: the inner split on f0 sits inside f0 = 0: its right side is empty, so it is no effective split
DEAD = Tree.split(0, Tree.split(0, L0, L1), L1)
REQUIRES_F2 = Tree.split(0, Tree.split(2, L0, L0), L1)  # equal leaves, but an effective split


# --- construction -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "error", "names"),
    [
        (lambda: MinLeafSupport(), TypeError, "weight= and share="),
        (lambda: MinLeafSupport(weight=1, share=0.1), TypeError, "weight= and share="),
        (lambda: MinLeafSupport(weight=-1), ValueError, "weight"),
        (lambda: MinLeafSupport(weight="a"), TypeError, "weight"),
        (lambda: MinLeafSupport(share=1.5), ValueError, "share"),
        (lambda: MinLeafSupport(share=float("nan")), ValueError, "share"),
        (lambda: MaxLeaves(0), ValueError, "k"),
        (lambda: MaxLeaves(2.5), TypeError, "k"),
        (lambda: MaxLeaves(True), TypeError, "k"),
        (lambda: FeatureBudget(1, -1), ValueError, "budget"),
        (lambda: FeatureBudget(1, math.inf), ValueError, "budget"),
        (lambda: FeatureBudget(math.inf, 2), ValueError, "costs"),
        (lambda: FeatureBudget({"a": math.inf}, 2), ValueError, "costs['a']"),
        (lambda: MinLeafSupport(weight=math.inf), ValueError, "weight"),
        (lambda: FeatureBudget(1, 2, per="leaf"), ValueError, "per"),
        (lambda: FeatureBudget({}, 2), ValueError, "costs"),
        (lambda: FeatureBudget({"a": -1}, 2), ValueError, "costs['a']"),
        (lambda: FeatureBudget({1: 1}, 2), TypeError, "costs"),
        (lambda: FeatureBudget("x", 2), TypeError, "costs"),
        (lambda: ForbidFeatures([]), ValueError, "features"),
        (lambda: ForbidFeatures(["a", "a"]), ValueError, "features"),
        (lambda: ForbidFeatures(3), TypeError, "features"),
        (lambda: RequireFeatures([""]), ValueError, "features"),
        (lambda: ClassRecall(1, at_least=1.5), ValueError, "at_least"),
        (lambda: ClassRecall([1], at_least=0.5), TypeError, "cls"),
        (lambda: ClassRecall(None, at_least=0.5), TypeError, "cls"),
        (lambda: FalsePositiveRate(1, at_most=-0.1), ValueError, "at_most"),
        (lambda: Predict([], 1), ValueError, "rows"),
        (lambda: Predict([-1], 1), ValueError, "rows"),
        (lambda: Predict([1.5], 1), ValueError, "rows"),
        (lambda: Predict([1, 1], 1), ValueError, "rows"),
        (lambda: Predict([0], {1}), TypeError, "cls"),
    ],
)
def test_a_bad_argument_is_refused_naming_it(make, error, names):
    with pytest.raises(error, match=None) as info:
        make()
    assert names in str(info.value)


def test_constraints_are_frozen_values():
    c = MaxLeaves(3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.k = 4  # type: ignore[misc]
    assert MaxLeaves(3) == c and hash(MaxLeaves(3)) == hash(c)
    assert FeatureBudget({"b": 1, "a": 2}, 3) == FeatureBudget({"a": 2, "b": 1}, 3)


def test_check_constraints_names_what_is_not_a_constraint():
    assert check_constraints(None) == ()
    assert check_constraints(MaxLeaves(2)) == (MaxLeaves(2),)
    with pytest.raises(TypeError, match="constraints must be a list"):
        check_constraints("max-leaves=3")
    with pytest.raises(TypeError, match="3 is not a constraint"):
        check_constraints([MaxLeaves(2), 3])


# --- resolution -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("constraint", "names"),
    [
        (ForbidFeatures(["zz"]), "features: 'zz'"),
        (FeatureBudget({"zz": 1}, 1), "costs: 'zz'"),
        (ClassRecall(7, at_least=0.5), "cls=7"),
        (Predict([100], 1), "rows: position 100"),
    ],
)
def test_resolving_names_what_the_data_lacks(constraint, names):
    with pytest.raises(ValueError) as info:
        resolve([constraint], DATA)
    assert names in str(info.value)


def test_resolve_against_a_bundled_dataset():
    data = load("monk1")
    first = data.feature_names[0]
    resolved = resolve([ForbidFeatures([first]), MaxLeaves(4), MinLeafSupport(share=0.1)], data)
    assert isinstance(resolved, ResolvedConstraints)
    assert resolved.forbidden.sum() == 1 and resolved.forbidden[0]
    assert [b.name for b in resolved.blocks] == ["forbid_features", "max_leaves"]
    assert resolved.min_leaf_weight == pytest.approx(0.1 * data.total_weight)
    assert resolved.kinds == ("forbid_features", "max_leaves", "min_leaf_support")
    assert resolve(resolved, data) is resolved  # resolved once, kept as it is
    with pytest.raises(ValueError, match="another dataset"):
        resolve(resolved, DATA)
    # two of a kind: numbered blocks
    twice = resolve([MaxLeaves(4), MaxLeaves(6)], data)
    assert [b.name for b in twice.blocks] == ["max_leaves", "max_leaves_2"]


def _table():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, 60),
            "color": rng.choice(["red", "green", "blue"], 60),
        }
    )
    y = ((frame["age"] > 40) ^ (frame["color"] == "red")).astype(int).to_numpy()
    binarizer = Binarizer().fit(frame, y)
    Xb = binarizer.transform(frame)
    names = [str(n) for n in binarizer.get_feature_names_out()]
    data = Dataset.from_arrays(Xb, y, feature_names=names)
    sources = [spec.source for spec in binarizer.get_feature_specs()]
    return data, sources


def test_raw_column_names_stand_for_all_their_binary_features():
    data, sources = _table()
    age = np.array([s == "age" for s in sources])
    assert age.sum() >= 2 and (~age).sum() >= 2  # several thresholds, several categories
    resolved = resolve([ForbidFeatures(["age"])], data, sources=sources)
    assert (resolved.forbidden == age).all()
    # without sources "age" names no binary feature
    with pytest.raises(ValueError, match="'age' is neither"):
        resolve([ForbidFeatures(["age"])], data)
    # one binary feature by its own name
    one = data.feature_names[int(np.flatnonzero(age)[0])]
    assert resolve([ForbidFeatures([one])], data, sources=sources).forbidden.sum() == 1
    # a per-feature budget pays a column once, however many of its thresholds a tree tests
    j, k = np.flatnonzero(age)[:2]
    two_ages = Tree.split(int(j), Tree.split(int(k), L0, L1), L1)
    per_feature = resolve([FeatureBudget({"age": 1}, 1, per="feature")], data, sources=sources)
    per_split = resolve([FeatureBudget({"age": 1}, 1, per="split")], data, sources=sources)
    splits = len(effective_splits(two_ages, data.X))
    assert splits >= 1
    assert per_feature.blocks[0].values(two_ages, data)[0] == 1.0
    assert per_split.blocks[0].values(two_ages, data)[0] == splits
    assert not per_feature.violations(two_ages, data)
    assert bool(per_split.violations(two_ages, data)) == (splits > 1)


def test_a_class_given_as_text_matches_the_label_of_that_text():
    # the CLI's syntax keeps a class as text: "1" is the class 1 of integer labels
    resolved = resolve([ClassRecall("1", at_least=1.0)], DATA)
    assert not resolved.violations(STUMP, DATA)
    assert resolved.violations(L0, DATA)


# --- violations on hand-made trees: one satisfied, one broken case per kind ------------------


@pytest.mark.parametrize(
    ("constraint", "satisfied", "broken"),
    [
        (MinLeafSupport(weight=4), STUMP, THREE),
        (MinLeafSupport(share=0.5), STUMP, THREE),
        (MaxLeaves(2), STUMP, THREE),
        (FeatureBudget(1, 1, per="split"), STUMP, THREE),
        (FeatureBudget(1, 1, per="split"), DEAD, THREE),  # DEAD's inner split is not effective
        (FeatureBudget({"f0": 1, "f1": 5}, 2, per="feature"), STUMP, THREE),
        (ForbidFeatures(["f1"]), STUMP, THREE),
        (RequireFeatures(["f2"]), REQUIRES_F2, STUMP),
        (ClassRecall(1, at_least=1.0), STUMP, L0),
        (FalsePositiveRate(1, at_most=0.0), STUMP, L1),
        (Predict([0, 5], 1), Tree.leaf(1), STUMP),
    ],
)
def test_each_kind_on_a_satisfied_and_a_broken_tree(constraint, satisfied, broken):
    resolved = resolve([constraint], DATA)
    assert resolved.violations(satisfied, DATA) == []
    assert resolved.satisfied_by(satisfied, DATA)
    lines = resolved.violations(broken, DATA)
    assert len(lines) >= 1
    assert lines[0].startswith(constraint.kind)  # the line names the constraint's block
    # metrics is the same truth
    assert metrics.constraint_violations(broken, DATA, [constraint]) == lines
    assert metrics.constraint_violations(satisfied, DATA, resolved) == []


def test_the_leaf_support_counts_a_leaf_no_row_reaches():
    # a split on f0 under f0 = 1 leaves its left leaf empty: weight 0 < any positive support
    empty = Tree.split(0, L0, Tree.split(0, L0, L1))
    assert resolve([MinLeafSupport(weight=1)], DATA).violations(empty, DATA)


def test_weighted_rates():
    weights = np.array([1, 1, 1, 1, 3, 1, 1, 1], dtype=float)
    data = Dataset.from_arrays(X8, X8[:, 0].astype(int), sample_weight=weights)
    # predict 1 only where f1 = 0: class-1 rows 4, 5 (weight 3 + 1) of 6
    tree = Tree.split(1, Tree.split(0, L0, L1), L0)
    recall = resolve([ClassRecall(1, at_least=4 / 6)], data).blocks[0].values(tree, data)
    assert recall[0] == pytest.approx(4 / 6)
    assert not resolve([ClassRecall(1, at_least=4 / 6)], data).violations(tree, data)
    assert resolve([ClassRecall(1, at_least=0.7)], data).violations(tree, data)


# --- the oracle on fixed instances ------------------------------------------------------------


def test_the_oracle_on_fixed_instances():
    tree, value = brute_force_constrained_tree(DATA, [], lam=0.01, max_depth=2)
    assert value == pytest.approx(0.02) and tree.n_leaves == 2
    # without f0 nothing predicts y: the leaf
    tree, value = brute_force_constrained_tree(
        DATA, [ForbidFeatures(["f0"])], lam=0.01, max_depth=2
    )
    assert value == pytest.approx(0.51) and tree.n_leaves == 1
    tree, value = brute_force_constrained_tree(DATA, [MaxLeaves(1)], lam=0.01, max_depth=2)
    assert value == pytest.approx(0.51)
    # f2 required: the cheapest is a split on f2 under a perfect f0 split
    tree, value = brute_force_constrained_tree(
        DATA, [RequireFeatures(["f2"])], lam=0.01, max_depth=2
    )
    assert value == pytest.approx(0.03)
    assert not resolve([RequireFeatures(["f2"])], DATA).violations(tree, DATA)


@pytest.mark.parametrize(
    ("constraints", "why"),
    [
        ([MinLeafSupport(weight=9)], "exceeds the total weight"),
        ([RequireFeatures(["f1", "f2"]), MaxLeaves(2)], "fewer than the 2 required"),
        ([RequireFeatures(["f1"]), ForbidFeatures(["f1"])], "also forbidden"),
        ([Predict([0], 0), Predict([0], 1)], "predicted both"),
    ],
)
def test_infeasible_combinations(constraints, why):
    tree, value = brute_force_constrained_tree(DATA, constraints, lam=0.01, max_depth=2)
    assert tree is None and value == float("inf")
    assert why in resolve(constraints, DATA).obvious_infeasibility()


# --- the text syntax ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("min-leaf-share=0.05", MinLeafSupport(share=0.05)),
        ("min-leaf-weight=10", MinLeafSupport(weight=10)),
        ("max-leaves=8", MaxLeaves(8)),
        ("MAX-LEAVES = 8 ", MaxLeaves(8)),
        ("max-features=3", FeatureBudget(1, 3, per="feature")),
        ("max-splits=5", FeatureBudget(1, 5, per="split")),
        ("feature-budget=4:age=2,income=1", FeatureBudget({"age": 2, "income": 1}, 4, "feature")),
        ("feature-budget=4:0.5", FeatureBudget(0.5, 4, per="feature")),
        ("split-budget=3:age<=40.5=2", FeatureBudget({"age<=40.5": 2}, 3, per="split")),
        ("split-budget=3:1", FeatureBudget(1, 3, per="split")),
        ("forbid=age,sex", ForbidFeatures(["age", "sex"])),
        ("forbid= age , sex", ForbidFeatures(["age", "sex"])),
        ("require=income", RequireFeatures(["income"])),
        ("recall:yes>=0.8", ClassRecall("yes", at_least=0.8)),
        ("recall: 1 >= 0.8", ClassRecall("1", at_least=0.8)),
        ("fpr:yes<=0.1", FalsePositiveRate("yes", at_most=0.1)),
        ("predict:0,5,7=yes", Predict([0, 5, 7], "yes")),
    ],
)
def test_parse(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize(
    "constraint",
    [
        MinLeafSupport(share=0.05),
        MinLeafSupport(weight=3),
        MaxLeaves(8),
        ForbidFeatures(["age", "sex"]),
        RequireFeatures(["income"]),
    ],
)
def test_describe_is_the_text_form(constraint):
    assert parse(constraint.describe()) == constraint


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("maxleaves=3", "unknown key 'maxleaves'"),
        ("max-leaves", "expected KEY=VALUE"),
        ("max-leaves=0", "k must be >= 1"),
        ("max-leaves=2.5", "K must be an integer, got '2.5'"),
        ("min-leaf-share=2", "share must be [0, 1]"),
        ("min-leaf-weight=much", "W must be a number, got 'much'"),
        ("forbid=a,,b", "comma-separated list of NAME"),
        ("forbid=a,a", "lists a feature twice"),
        ("recall:yes=0.8", "expected recall:CLASS>=R"),
        ("recall:yes>=", "expected recall:CLASS>=R"),
        ("fpr:yes>=0.1", "expected fpr:CLASS<=R"),
        ("predict:a=1", "ROW must be an integer, got 'a'"),
        ("predict:1,2", "expected predict:ROW,...=CLASS"),
        ("feature-budget=4", "expected feature-budget=B:NAME=C"),
        ("feature-budget=4:age=x", "the cost of 'age' must be a number, got 'x'"),
        ("split-budget=4:age=1,age=2", "'age' is given two costs"),
    ],
)
def test_parse_errors_name_the_bad_part(text, part):
    with pytest.raises(ValueError) as info:
        parse(text)
    message = str(info.value)
    assert message.startswith(f"constraint {text!r}: ")
    assert part in message


def test_parse_takes_text_only_and_documents_its_syntax_once():
    with pytest.raises(TypeError, match="must be a string"):
        parse(3)  # type: ignore[arg-type]
    doc = parse.__doc__ or ""
    for line in SYNTAX.splitlines():
        assert line.strip() in doc


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 4))
def test_random_constraints_always_resolve(seed, n):
    """odtkit.testing.random_constraint: every kind, on data with weight-0 rows and classes
    without weight, gives a constraint (or a combination) that resolves; a bad kind is named."""
    rng = np.random.default_rng(seed)
    data = constraint_dataset(rng, int(rng.integers(1, 4)), n_samples=(1, 13), zero_weight=0.5)
    for kind in CONSTRAINT_KINDS:
        resolve([random_constraint(kind, data, rng)], data)
    resolve(random_constraints(data, rng, n), data)
    with pytest.raises(ValueError, match="kind must be one of"):
        random_constraint("max_depth", data, rng)

"""The one statement of fairness: validation, group resolution, the gap metric and the oracle."""

from __future__ import annotations

import numpy as np
import pytest

from odtkit import Dataset, Fairness, metrics
from odtkit.testing import (
    EXAMPLE_TREES_FAIR_OPTIMA,
    EXAMPLE_TREES_PROTECTED,
    brute_force_fair_tree,
    brute_force_tree,
    example_dataset_trees,
    random_dataset,
)
from odtkit.tree import Tree


@pytest.mark.parametrize(("notion", "delta"), sorted(EXAMPLE_TREES_FAIR_OPTIMA))
def test_oracle_reproduces_section_7_5(notion, delta):
    data = example_dataset_trees()
    fairness = Fairness(notion, protected=EXAMPLE_TREES_PROTECTED, delta=delta)
    for lam, expected in zip((0.1, 0.0), EXAMPLE_TREES_FAIR_OPTIMA[notion, delta], strict=True):
        tree, value = brute_force_fair_tree(data, fairness, lam=lam, max_depth=1)
        assert value == pytest.approx(expected)
        assert metrics.objective(tree, data, lam=lam) == pytest.approx(value)
        assert metrics.is_fair(tree, data, fairness)


def test_delta_one_is_the_unconstrained_optimum():
    for seed in range(6):
        data = random_dataset(seed, n_samples=10, n_features=3)
        a = np.random.default_rng(seed).integers(0, 2, size=10)
        a[:2] = [0, 1]
        for notion in ("sp", "pe"):
            fairness = Fairness(notion, protected=a, delta=1.0)
            _, fair = brute_force_fair_tree(data, fairness, lam=0.02, max_depth=2)
            _, free = brute_force_tree(data, lam=0.02, max_depth=2)
            assert fair == pytest.approx(free)


def test_groups_of_a_three_valued_attribute_and_several_columns():
    data = example_dataset_trees()
    a = np.array(["u", "v", "w", "u", "v", "w"])
    groups = Fairness("sp", protected=a, delta=0.1).groups(data)
    assert [p.name for p in groups.pairs] == [
        "protected: u vs v",
        "protected: u vs w",
        "protected: v vs w",
    ]
    # a constant predictor is fair for every pair: each coefficient column sums to 0
    assert np.allclose(groups.coefficients.sum(axis=0), 0.0)
    two = np.column_stack([EXAMPLE_TREES_PROTECTED, [0, 0, 1, 1, 2, 2]])
    groups = Fairness("sp", protected=two).groups(data)
    assert groups.n_pairs == 1 + 3
    by_name = Fairness("sp", protected="x2").groups(data)
    assert by_name.pairs[0].name == "x2: 0 vs 1"


def test_csp_strata_and_eodds_needs_all_four_sets():
    data = example_dataset_trees()
    legit = np.array([0, 0, 0, 1, 1, 1])
    groups = Fairness("csp", protected=EXAMPLE_TREES_PROTECTED, legit=legit).groups(data)
    assert groups.n_pairs == 2
    groups = Fairness("eodds", protected=EXAMPLE_TREES_PROTECTED).groups(data)
    assert groups.n_pairs == 2
    # group a=2 has no positive row: its TPR comparisons are undefined and left out, its FPR
    # comparisons are kept (issue 22: dropping both let a certified tree give it any FPR)
    a3 = np.array([0, 1, 2, 1, 0, 2])
    a3_groups = Fairness("eodds", protected=a3).groups(data)
    with_2 = [p.name for p in a3_groups.pairs if "2" in p.name.split("|")[0]]
    assert with_2 == ["protected: 0 vs 2 | y!=+", "protected: 1 vs 2 | y!=+"]
    assert a3_groups.undefined == ("protected: 0 vs 2 | y=+", "protected: 1 vs 2 | y=+")


def _three_groups_one_without_positives():
    """Issue 22's case: groups 0 and 1 have positives and negatives, group 2 only negatives;
    the stump on x0 is right on groups 0 and 1 and gives group 2 a false positive rate of 0.5."""
    a = np.array([0] * 4 + [1] * 4 + [2] * 4)
    x0 = [1, 1, 0, 0] * 3
    x1 = [1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1]
    y = [1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0]
    data = Dataset.from_arrays(np.c_[x0, x1], y, feature_names=["x0", "x1"], name="issue22")
    return data, Fairness("eodds", protected=a, delta=0.0, positive_class=1), a


def _false_positive_rates(tree, data, a):
    predicted = tree.predict(data.X) == 1
    return [float(predicted[(a == g) & (data.y == 0)].mean()) for g in range(3)]


def test_eodds_keeps_the_defined_fpr_comparison_of_a_group_without_positives():
    """Before: the pairs with group 2 were dropped whole, every solver certified the stump
    (FPR 0 / 0 / 0.5 at δ = 0) and fairness_gap said 0."""
    from odtkit import search_tree
    from odtkit.formulations import FlowOCT, PathOCT
    from odtkit.pipeline import solve_formulation

    data, fairness, a = _three_groups_one_without_positives()
    stump = Tree.split(0, Tree.leaf(0), Tree.leaf(1))
    assert _false_positive_rates(stump, data, a) == [0.0, 0.0, 0.5]
    assert metrics.fairness_gap(stump, data, fairness) == pytest.approx(0.5)
    assert not metrics.is_fair(stump, data, fairness)

    lam = 0.01
    oracle_tree, oracle_value = brute_force_fair_tree(data, fairness, lam=lam, max_depth=2)
    dp = search_tree(data, lam=lam, max_depth=2, fairness=fairness)
    assert dp.status == "optimal"
    assert dp.objective == pytest.approx(oracle_value, abs=1e-9)
    answers = [oracle_tree, dp.model]
    for formulation in (FlowOCT(), PathOCT()):
        mip = solve_formulation(
            formulation, data, backend="highs", lam=lam, max_depth=2, fairness=fairness
        )
        assert mip.status == "optimal", mip.message
        assert mip.objective == pytest.approx(oracle_value, abs=1e-6)
        answers.append(mip.model)
    for tree in answers:
        assert metrics.fairness_gap(tree, data, fairness) <= 1e-9
        rates = _false_positive_rates(tree, data, a)
        assert max(rates) - min(rates) <= 1e-9, rates


@pytest.mark.parametrize("notion", ["sp", "pe", "eopp", "eodds"])
def test_every_defined_comparison_is_kept_and_only_those(notion):
    """Group 2 has no positive row, group 3 no negative one: a comparison is left out exactly
    when one of its sides is empty, for every notion."""
    a = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    y = np.array([1, 0, 1, 0, 0, 0, 1, 1])
    data = Dataset.from_arrays(np.eye(8, 3, dtype=bool), y)
    groups = Fairness(notion, protected=a, positive_class=1).groups(data)
    by_notion = {"sp": [""], "pe": [" | y!=+"], "eopp": [" | y=+"]}
    suffixes = by_notion.get(notion, [" | y!=+", " | y=+"])
    rows = {" | y!=+": y == 0, " | y=+": y == 1, "": np.ones(8, dtype=bool)}
    expected, left_out = [], []
    for i in range(4):
        for j in range(i + 1, 4):
            for suffix in suffixes:
                name = f"protected: {i} vs {j}{suffix}"
                defined = (rows[suffix] & (a == i)).any() and (rows[suffix] & (a == j)).any()
                (expected if defined else left_out).append(name)
    assert [p.name for p in groups.pairs] == expected
    assert list(groups.undefined) == left_out


def test_weighted_rates():
    data = example_dataset_trees()
    weighted = Dataset.from_arrays(data.X, data.y, sample_weight=[1, 1, 1, 1, 1, 4])
    stump = Tree.split(0, Tree.leaf(0), Tree.leaf(1))
    fairness = Fairness("sp", protected=EXAMPLE_TREES_PROTECTED)
    # a=0: rows 1,3,5 (weights 1,1,1), positive 5 -> 1/3; a=1: rows 2,4,6 (1,1,4), positive 4,6
    assert metrics.fairness_gap(stump, weighted, fairness) == pytest.approx(5 / 6 - 1 / 3)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"notion": "parity", "protected": [0, 1]}, ValueError, "notion"),
        ({"notion": 3, "protected": [0, 1]}, TypeError, "notion"),
        ({"notion": "sp", "protected": [0, 1], "delta": 1.5}, ValueError, "delta"),
        ({"notion": "sp", "protected": [0, 1], "delta": -0.1}, ValueError, "delta"),
        ({"notion": "sp", "protected": [0, 1], "delta": "0.1"}, TypeError, "delta"),
        ({"notion": "sp", "protected": [0, 1], "delta": float("nan")}, ValueError, "delta"),
        ({"notion": "csp", "protected": [0, 1]}, ValueError, "legit"),
        ({"notion": "sp", "protected": [0, 1], "legit": [0, 1]}, ValueError, "legit"),
        ({"notion": "sp", "protected": []}, ValueError, "protected"),
        ({"notion": "sp", "protected": [0.0, np.nan]}, ValueError, "protected"),
        ({"notion": "sp", "protected": None}, ValueError, "protected"),
    ],
)
def test_invalid_statements(kwargs, error, match):
    with pytest.raises(error, match=match):
        Fairness(**kwargs)


def test_invalid_against_a_dataset():
    data = example_dataset_trees()
    with pytest.raises(ValueError, match="single value"):
        Fairness("sp", protected=np.zeros(6)).groups(data)
    with pytest.raises(ValueError, match="positive_class"):
        Fairness("sp", protected=EXAMPLE_TREES_PROTECTED, positive_class=7).groups(data)
    with pytest.raises(ValueError, match="rows"):
        Fairness("sp", protected=[0, 1, 0]).groups(data)
    with pytest.raises(ValueError, match="not a feature"):
        Fairness("sp", protected="sex").groups(data)
    # every positive row is in group 0: equal opportunity has nothing to compare
    with pytest.raises(ValueError, match="no pair"):
        Fairness("eopp", protected=[0, 1, 1, 0, 0, 1]).groups(data)
    only_negatives = Dataset.from_arrays(data.X, [0, 0, 0, 0, 0, 2])
    with pytest.raises(ValueError, match="positive_class"):
        Fairness("sp", protected=EXAMPLE_TREES_PROTECTED).groups(only_negatives)
    with pytest.raises(TypeError, match="fairness"):
        metrics.fairness_gap(Tree.leaf(0), data, "sp")

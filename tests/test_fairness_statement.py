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
    # group a=2 has no positive row: its eodds pairs are dropped entirely
    a3 = np.array([0, 1, 2, 1, 0, 2])
    a3_groups = Fairness("eodds", protected=a3).groups(data)
    assert all("2" not in p.name.split("|")[0] for p in a3_groups.pairs)


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

"""Regularized FlowOCT: worked examples (§7), oracle agreement, starts, (F-id), odtlearn mapping.

Sections are those of docs/formulations-trees.md.
"""

from __future__ import annotations

import numpy as np
import pytest

from odtkit import metrics
from odtkit.formulations import FlowOCT
from odtkit.greedy import greedy_tree
from odtkit.solvers import solve
from odtkit.testing import brute_force_tree, example_dataset_trees, random_dataset
from odtkit.tree import Tree

TOL = 1e-6


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize(
    "lam,value,tree",
    [
        (0.1, 11 / 30, Tree.split(0, Tree.leaf(0), Tree.leaf(1))),
        (0.25, 7 / 12, Tree.leaf(0)),
    ],
)
def test_worked_examples(depth, lam, value, tree):
    ds = example_dataset_trees()
    form = FlowOCT()
    model = form.build(ds, max_depth=depth, lam=lam)
    res = solve(model)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(value, abs=TOL)
    assert res.lower_bound == pytest.approx(value, abs=TOL)
    decoded = form.decode(model, res)
    assert decoded == tree
    assert metrics.objective(decoded, ds, lam=lam) == pytest.approx(value, abs=TOL)


def test_solution_of_7_2_is_the_start_of_the_stump():
    """The FlowOCT solution printed in §7.2 (D = 1) is exactly the start built from the stump."""
    ds = example_dataset_trees()
    form = FlowOCT(aggregate=False)
    model = form.build(ds, max_depth=1, lam=0.1)
    x = form.start(model, Tree.split(0, Tree.leaf(0), Tree.leaf(1)))
    assert model.check(x).empty
    assert model.objective_value(x) == pytest.approx(11 / 30)
    v = model.values(x)
    np.testing.assert_array_equal(v["b"], [[1, 0]])
    np.testing.assert_array_equal(v["p"], [0, 1, 1])
    np.testing.assert_array_equal(v["w"], [[0, 0], [1, 0], [0, 1]])
    np.testing.assert_array_equal(v["z"][:, 0], [1, 1, 1, 1, 1, 0])
    np.testing.assert_array_equal(v["z"][:, 1], [1, 1, 1, 0, 0, 0])
    np.testing.assert_array_equal(v["zeta"][:, 2], [0, 0, 0, 1, 1, 0])


def test_odtlearn_lambda_mapping_of_7_2():
    """(F-map): lambda_o = n lam / (1 + n lam); OPT = 1 + lam - V_o / ((1 - lambda_o) n)."""
    ds = example_dataset_trees()
    n, lam = ds.n_samples, 0.1
    lam_o = n * lam / (1 + n * lam)
    assert lam_o == pytest.approx(0.375)
    correct, branch_nodes = 5, 1  # the optimal stump
    v_o = (1 - lam_o) * correct - lam_o * branch_nodes
    assert 1 + lam - v_o / ((1 - lam_o) * n) == pytest.approx(11 / 30)


def _instances(n: int, offset: int = 0, max_samples: int = 16):
    """Small random instances (MIPs on uniform random labels are hard: keep CI cases tiny)."""
    for seed in range(offset, offset + n):
        rng = np.random.default_rng(seed)
        depth = 1 + seed % 3
        n_samples = int(rng.integers(4, max_samples + 1)) if depth < 3 else int(rng.integers(4, 8))
        ds = random_dataset(
            seed,
            n_samples=n_samples,
            n_features=int(rng.integers(1, 5)),
            n_classes=2 + (seed % 4 == 2),
            weighted=seed % 5 == 3,
        )
        yield seed, ds, depth, (0.0, 0.005, 0.01, 0.03, 0.05, 0.1, 0.2)[seed % 7]


SEPARATION = (None, 0, 1, 2, 99)  # off, identical-x pairs only, ..., every differing pair


def _check(ds, depth, lam, separation_distance=2):
    opt = brute_force_tree(ds, lam=lam, max_depth=depth)[1]
    form = FlowOCT(separation_distance=separation_distance, max_separation_cuts=10_000)
    model = form.build(ds, max_depth=depth, lam=lam)
    res = solve(model)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(opt, abs=TOL)
    assert res.lower_bound <= opt + TOL
    tree = form.decode(model, res)
    assert metrics.objective(tree, ds, lam=lam) == pytest.approx(opt, abs=TOL)
    assert tree.depth <= depth
    # (F-id): prediction nodes = 1 + branching nodes, at the optimum
    assert res.values["p"].sum() == pytest.approx(1 + res.values["b"].sum(), abs=1e-6)
    # start from the greedy tree: value R(T) exactly, feasible, accepted
    greedy = greedy_tree(ds, lam=lam, max_depth=depth)
    start = form.start(model, greedy)
    assert model.check(start).empty
    assert model.objective_value(start) == pytest.approx(
        metrics.objective(greedy, ds, lam=lam), abs=1e-9
    )
    warm = solve(model, start=start, node_limit=1)
    assert warm.has_solution and warm.objective <= model.objective_value(start) + TOL


@pytest.mark.parametrize("seed,ds,depth,lam", list(_instances(14)))
def test_flowoct_equals_oracle(seed, ds, depth, lam):
    _check(ds, depth, lam, SEPARATION[seed % len(SEPARATION)])


@pytest.mark.slow
@pytest.mark.parametrize("seed,ds,depth,lam", list(_instances(60, offset=1000, max_samples=30)))
def test_flowoct_equals_oracle_slow(seed, ds, depth, lam):
    _check(ds, depth, lam, SEPARATION[seed % len(SEPARATION)])


def test_start_value_counts_empty_leaves_and_constant_features():
    """FlowOCT's start value is R(T) of the tree as given (empty leaves count, §6.3)."""
    X = np.array([[0, 1], [0, 1], [1, 1], [1, 1]], dtype=bool)  # feature 1 is constant
    ds = type(example_dataset_trees()).from_arrays(X, [0, 0, 1, 1])
    form = FlowOCT()
    model = form.build(ds, max_depth=2, lam=0.1)
    tree = Tree.split(0, Tree.split(1, Tree.leaf(1), Tree.leaf(0)), Tree.leaf(1))  # leaf 4 is empty
    x = form.start(model, tree)
    assert model.check(x).empty
    assert (
        model.objective_value(x)
        == pytest.approx(metrics.objective(tree, ds, lam=0.1))
        == pytest.approx(0.3)
    )
    res = solve(model, start=x)
    assert res.objective == pytest.approx(0.2)  # the stump x0: (0, 1)


def test_binary_w_gives_the_same_optimum():
    ds = random_dataset(5, n_samples=30, n_features=4)
    values = [
        solve(FlowOCT(binary_w=bw).build(ds, max_depth=2, lam=0.01)).objective
        for bw in (False, True)
    ]
    assert values[0] == pytest.approx(values[1], abs=TOL)


def test_model_size_matches_the_spec():
    ds = random_dataset(9, n_samples=30, n_features=4)
    m = len(np.unique(np.column_stack([ds.X, ds.y]), axis=0))
    D, p, K = 2, ds.n_features, ds.n_classes
    model = FlowOCT(separation_distance=None).build(ds, max_depth=D, lam=0.01)
    n_branch, n_nodes = 2**D - 1, 2 ** (D + 1) - 1
    assert model.n_vars == n_branch * p + n_nodes * (1 + K) + 2 * m * n_nodes
    assert model.n_constraints == 2 * n_nodes + m * (2 * n_nodes + 2 * n_branch)
    arcs = (
        model.A[model.constraints["arc_left"].slice].nnz
        + model.A[model.constraints["arc_right"].slice].nnz
    )
    assert arcs == 2 * m * n_branch + m * n_branch * p
    assert model.offset == 1.0


def test_start_rejects_bad_trees():
    ds = random_dataset(2, n_samples=20, n_features=3)
    form = FlowOCT()
    model = form.build(ds, max_depth=1, lam=0.01)
    with pytest.raises(ValueError, match="depth"):
        form.start(model, Tree.split(0, Tree.split(1, Tree.leaf(0), Tree.leaf(1)), Tree.leaf(0)))
    with pytest.raises(ValueError, match="feature"):
        form.start(model, Tree.split(7, Tree.leaf(0), Tree.leaf(1)))
    with pytest.raises(ValueError, match="class"):
        form.start(model, Tree.leaf(5))
    with pytest.raises(TypeError, match="Tree"):
        form.start(model, "not a tree")


def test_separation_pairs_match_a_loop():
    from odtkit.formulations._common import row_data, separation_pairs

    ds = random_dataset(11, n_samples=60, n_features=6, n_classes=3)
    rows = row_data(ds)
    for h in (0, 1, 2, 6):
        first, second, differ = separation_pairs(rows, h)
        expected = {
            (i, j)
            for i in range(rows.n_rows)
            for j in range(i + 1, rows.n_rows)
            if rows.y[i] != rows.y[j] and np.count_nonzero(rows.X[i] != rows.X[j]) <= h
        }
        assert set(zip(first.tolist(), second.tolist(), strict=True)) == expected
        np.testing.assert_array_equal(differ, rows.X[first] != rows.X[second])
        distance = differ.sum(axis=1)
        assert np.all(np.diff(distance) >= 0)  # closest first
    capped = separation_pairs(rows, 6, max_pairs=5)
    assert capped[0].size == 5 and capped[2].sum(axis=1).max() <= 1


def test_separation_cuts_hold_for_every_tree_and_raise_the_lp_bound():
    from odtkit.testing import enumerate_trees

    ds = random_dataset(4, n_samples=40, n_features=3)
    with_cuts = FlowOCT(separation_distance=3, max_separation_cuts=10_000)
    model = with_cuts.build(ds, max_depth=2, lam=0.01)
    assert model.constraints["separation"].size > 0
    for tree in enumerate_trees(ds.n_features, 2, ds.n_classes):
        assert model.check(with_cuts.start(model, tree)).empty
    plain = FlowOCT(separation_distance=None).build(ds, max_depth=2, lam=0.01)
    lp_plain = solve(plain.relaxed()).objective
    lp_cuts = solve(model.relaxed()).objective
    assert lp_cuts > lp_plain + 1e-3
    assert solve(model).objective == pytest.approx(solve(plain).objective, abs=TOL)


def test_separation_cuts_on_monk1_close_most_of_the_root_gap():
    from odtkit.datasets import load

    ds = load("monk1")
    models = {h: FlowOCT(separation_distance=h).build(ds, max_depth=2, lam=0.01) for h in (None, 2)}
    lp = {h: solve(model.relaxed()).objective for h, model in models.items()}
    assert lp[None] == pytest.approx(0.0582, abs=1e-3)
    assert lp[2] > 0.13  # the optimum is 0.2174


@pytest.mark.parametrize("kw", [{"separation_distance": -1}, {"max_separation_cuts": 1.5}])
def test_separation_arguments_are_checked(kw):
    with pytest.raises((ValueError, TypeError), match=next(iter(kw))):
        FlowOCT(**kw)


def test_separation_pair_search_is_bounded_on_many_rows():
    # issue 16: the O(m^2 p) pair search made FlowOCT builds take 7 s at 30,000 rows and 90 s
    # at 100,000; beyond max_rows only the heaviest rows are searched (the cuts stay valid)
    from odtkit import Dataset
    from odtkit.formulations._common import row_data, separation_pairs

    rng = np.random.default_rng(3)
    X = rng.random((300, 6)) < 0.5
    y = rng.integers(0, 2, size=300)
    data = Dataset.from_arrays(X, y, sample_weight=rng.integers(1, 5, size=300))
    rows = row_data(data)
    heaviest = set(np.argsort(-rows.weight, kind="stable")[:40].tolist())
    first, second, differ = separation_pairs(rows, 2, max_rows=40)
    assert len(first) > 0
    assert set(first) | set(second) <= heaviest
    assert (rows.y[first] != rows.y[second]).all()
    assert np.array_equal(differ, rows.X[first] != rows.X[second])
    assert (differ.sum(axis=1) <= 2).all()
    full_first, full_second, _ = separation_pairs(rows, 2)
    within = [(a, b) for a, b in zip(full_first, full_second, strict=True) if {a, b} <= heaviest]
    assert sorted(zip(first, second, strict=True)) == sorted(within)

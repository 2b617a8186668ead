"""Fairness-constrained FlowOCT, RBinOCT and PathOCT: §7.5, the brute-force oracle on every
backend, warm starts, δ = 1, and the pipeline's re-measurement of the decoded tree (§5);
PathOCT's integral LP relaxation. Sections are those of docs/formulations-trees.md.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import needs_cbc

from odtkit import Dataset, Fairness, metrics, solve_formulation
from odtkit.formulations import BinOCT, FlowOCT, PathOCT, RBinOCT
from odtkit.formulations.fairness import merge_groups
from odtkit.pipeline import verify_solution
from odtkit.solvers import Solution, solve
from odtkit.testing import (
    EXAMPLE_TREES_FAIR_OPTIMA,
    EXAMPLE_TREES_PROTECTED,
    brute_force_fair_tree,
    brute_force_tree,
    enumerate_trees,
    example_dataset_trees,
    random_dataset,
)
from odtkit.tree import Tree

TOL = 1e-6
FORMULATIONS = [
    pytest.param(FlowOCT, id="flowoct"),
    pytest.param(RBinOCT, id="rbinoct"),
    pytest.param(PathOCT, id="pathoct"),
]


def _backend_param(name: str, solver: str | None = None):
    # highspy, pyomo and pulp are dependencies: only CBC, an optional solver, may be absent
    marks = [needs_cbc] if solver == "cbc" else []
    return pytest.param(
        (name, solver), id=name if solver is None else f"{name}-{solver}", marks=marks
    )


BACKENDS = [
    _backend_param("highs"),
    _backend_param("pyomo"),
    _backend_param("pulp"),
    _backend_param("pulp", "cbc"),
]


def _check(result, data, fairness, lam, expected):
    assert result.status == "optimal", result.message
    assert result.objective == pytest.approx(expected, abs=TOL)
    assert result.lower_bound == pytest.approx(expected, abs=TOL)
    assert metrics.objective(result.model, data, lam=lam) == pytest.approx(expected, abs=TOL)
    assert metrics.is_fair(result.model, data, fairness)


# --- §7.5 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", FORMULATIONS)
@pytest.mark.parametrize(("notion", "delta"), sorted(EXAMPLE_TREES_FAIR_OPTIMA))
def test_section_7_5(form, notion, delta):
    data = example_dataset_trees()
    fairness = Fairness(notion, protected=EXAMPLE_TREES_PROTECTED, delta=delta)
    for lam, expected in zip((0.1, 0.0), EXAMPLE_TREES_FAIR_OPTIMA[notion, delta], strict=True):
        result = solve_formulation(form(), data, max_depth=1, lam=lam, fairness=fairness)
        _check(result, data, fairness, lam, expected)


def test_section_7_5_start_of_the_optimal_stump_is_the_multi_sink_point():
    """The stump x1: (0, 1) at SP δ = 0.4: every row is routed, one sink per class (§5.1)."""
    data = example_dataset_trees()
    fairness = Fairness("sp", protected=EXAMPLE_TREES_PROTECTED, delta=0.4)
    form = FlowOCT(aggregate=False)
    model = form.build(data, max_depth=1, lam=0.1, fairness=fairness)
    x = form.start(model, Tree.split(0, Tree.leaf(0), Tree.leaf(1)))
    assert model.check(x).empty
    assert model.objective_value(x) == pytest.approx(11 / 30)
    v = model.values(x)
    np.testing.assert_array_equal(v["z"][:, 0], np.ones(6))  # (M9) every row enters
    np.testing.assert_array_equal(v["zeta"][:, 1, 0], [1, 1, 1, 0, 0, 0])  # left leaf, class 0
    np.testing.assert_array_equal(v["zeta"][:, 2, 1], [0, 0, 0, 1, 1, 1])  # right leaf, class 1
    # the stump's disparity 1/3 is within 0.4, not within 0.2: its start is refused there
    strict = form.build(data, max_depth=1, lam=0.1, fairness=fairness.replace(delta=0.2))
    with pytest.raises(ValueError, match="not 0.2-fair"):
        form.start(strict, Tree.split(0, Tree.leaf(0), Tree.leaf(1)))


# --- the oracle on random instances, every backend ----------------------------------------------

NOTIONS = ("sp", "pe", "eopp", "eodds", "csp")
DELTAS = (0.0, 0.1234, 0.3456, 1.0)


def _fair_instances(n: int, offset: int = 0, max_features: int = 3):
    """Small random instances: n <= 12, p <= max_features, depth 1-2, binary or 3-valued
    protected attribute, every notion, lam = 0 and > 0, δ = 0, 1 and two unattainable values."""
    for seed in range(offset, offset + 4 * n):
        rng = np.random.default_rng(seed)
        n_samples = int(rng.integers(5, 13))
        n_features = int(rng.integers(1, max_features + 1))
        n_classes = 2 + (seed % 6 == 5)  # positive class 1 against two others
        data = random_dataset(
            seed,
            n_samples=n_samples,
            n_features=n_features,
            n_classes=n_classes,
            weighted=seed % 7 == 3,
        )
        levels = 2 + (seed % 3 == 2)
        protected = rng.integers(0, levels, size=n_samples)
        protected[:levels] = np.arange(levels)
        if seed % 4 == 1:  # a second protected column: its pairs are constrained too
            protected = np.column_stack([protected, rng.permutation(protected)])
        notion = NOTIONS[seed % len(NOTIONS)]
        legit = rng.integers(0, 2, size=n_samples) if notion == "csp" else None
        fairness = Fairness(notion, protected=protected, delta=DELTAS[(seed // 5) % 4], legit=legit)
        try:
            fairness.groups(data)
        except ValueError:  # no pair with rows on both sides for this notion
            continue
        yield seed, data, fairness, 1 + seed % 2, (0.0, 0.02, 0.05)[seed % 3]
        n -= 1
        if n == 0:
            return


def _agree_with_oracle(form, backend, instances):
    backend, solver = backend
    options = {} if solver is None else {"solver": solver}
    for seed, data, fairness, depth, lam in instances:
        tree, expected = brute_force_fair_tree(data, fairness, lam=lam, max_depth=depth)
        result = solve_formulation(
            form(),
            data,
            backend=backend,
            max_depth=depth,
            lam=lam,
            fairness=fairness,
            solve_options=options,
        )
        assert result.status == "optimal", (seed, result.message)
        assert result.backend == backend
        assert result.objective == pytest.approx(expected, abs=TOL), seed
        assert metrics.is_fair(result.model, data, fairness), seed


@pytest.mark.parametrize("form", FORMULATIONS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_oracle_agreement(form, backend):
    n = 25 if backend[0] == "highs" else 6
    _agree_with_oracle(form, backend, _fair_instances(n))


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMULATIONS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_oracle_agreement_many(form, backend):
    n = 300 if backend[0] == "highs" else 60
    _agree_with_oracle(form, backend, _fair_instances(n, offset=1000, max_features=4))


@pytest.mark.parametrize("form", FORMULATIONS)
def test_start_of_the_oracle_tree_is_feasible_with_its_value(form):
    """Every fair tree's start satisfies every row (fairness block and separation cuts included)
    and its value is R(tree) (FlowOCT) or R(prune_empty(tree)) (RBinOCT; both = the optimum)."""
    for seed, data, fairness, depth, lam in _fair_instances(15, offset=500):
        tree, expected = brute_force_fair_tree(data, fairness, lam=lam, max_depth=depth)
        model = form().build(data, max_depth=depth, lam=lam, fairness=fairness)
        x = form().start(model, tree)
        assert model.check(x).empty, seed
        assert model.objective_value(x) == pytest.approx(expected, abs=TOL), seed


@pytest.mark.parametrize("form", FORMULATIONS)
@pytest.mark.parametrize("lam", [0.0, 0.02])
def test_every_tree_is_a_feasible_start(form, lam):
    """All 302 trees of depth <= 2 on 3 features (δ = 1: all fair): each start satisfies every
    row, the separation cuts with every row routed and (at lam = 0) the symmetry rows included,
    and its value is R(tree) up to the pruning / completion the formulation documents."""
    data = random_dataset(11, n_samples=12, n_features=3)
    protected = np.r_[0, 1, np.random.default_rng(1).integers(0, 3, size=10)]
    fairness = Fairness("eodds", protected=protected, delta=1.0)
    model = form().build(data, max_depth=2, lam=lam, fairness=fairness)
    if form is FlowOCT:
        assert model.constraints["separation"].size > 0
    for tree in enumerate_trees(3, 2):
        x = form().start(model, tree)
        assert model.check(x).empty, tree
        value = model.objective_value(x)
        assert value <= metrics.objective(tree, data, lam=lam) + TOL, tree
        pruned = tree.canonical(data.X)
        assert value >= metrics.objective(pruned, data, lam=lam) - TOL, tree


# --- warm starts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("form", FORMULATIONS)
def test_warm_start_from_the_oracle_tree(form):
    for seed, data, fairness, depth, lam in _fair_instances(4, offset=200):
        tree, expected = brute_force_fair_tree(data, fairness, lam=lam, max_depth=depth)
        result = solve_formulation(
            form(), data, max_depth=depth, lam=lam, fairness=fairness, start=tree
        )
        assert result.stats["warm_start"], seed
        assert "start_rejected" not in result.stats, seed
        _check(result, data, fairness, lam, expected)


@pytest.mark.parametrize("form", FORMULATIONS)
def test_an_unfair_start_is_refused(form):
    data = example_dataset_trees()
    fairness = Fairness("sp", protected=EXAMPLE_TREES_PROTECTED, delta=0.2)
    stump = Tree.split(0, Tree.leaf(0), Tree.leaf(1))  # disparity 1/3
    with pytest.raises(ValueError, match=r"not 0\.2-fair .*disparity is 0\.333333"):
        solve_formulation(form(), data, max_depth=1, lam=0.1, fairness=fairness, start=stump)


# --- δ = 1, aggregation, re-verification ---------------------------------------------------------


@pytest.mark.parametrize("form", FORMULATIONS)
def test_delta_one_is_the_unconstrained_optimum(form):
    for seed in range(6):
        data = random_dataset(seed, n_samples=12, n_features=3)
        protected = np.random.default_rng(seed).integers(0, 2, size=12)
        protected[:2] = [0, 1]
        lam = 0.02 * (seed % 3)
        free = solve_formulation(form(), data, max_depth=2, lam=lam)
        fairness = Fairness(("sp", "pe")[seed % 2], protected=protected, delta=1.0)
        fair = solve_formulation(form(), data, max_depth=2, lam=lam, fairness=fairness)
        assert free.status == fair.status == "optimal"
        assert fair.objective == pytest.approx(free.objective, abs=TOL)
        assert fair.objective == pytest.approx(brute_force_tree(data, lam=lam, max_depth=2)[1])


@pytest.mark.parametrize("form", FORMULATIONS)
def test_a_decoded_tree_that_breaks_the_block_is_an_error(form):
    """verify_solution re-measures fairness: a forged 'optimal' unfair answer is status error."""
    data = example_dataset_trees()
    fairness = Fairness("sp", protected=EXAMPLE_TREES_PROTECTED, delta=0.2)
    model = form().build(data, max_depth=1, lam=0.1, fairness=fairness)
    # the same layout at delta = 1 takes the unfair stump (disparity 1/3) as a start
    loose = form().build(data, max_depth=1, lam=0.1, fairness=fairness.replace(delta=1.0))
    x = form().start(loose, Tree.split(0, Tree.leaf(0), Tree.leaf(1)))
    assert not model.is_feasible(x)
    forged = Solution(
        status="optimal",
        has_solution=True,
        objective=11 / 30,
        lower_bound=11 / 30,
        x=x,
        values=model.values(x),
    )
    result = verify_solution(form(), model, forged, data)
    assert result.status == "error"
    assert "not 0.2-fair" in result.message and "side constraint" in result.message
    assert result.lower_bound == -np.inf
    # the honest answer passes
    honest = verify_solution(form(), model, solve(model), data)
    assert honest.status == "optimal" and honest.message == ""


@pytest.mark.parametrize("form", FORMULATIONS)
def test_merged_rows_sum_their_coefficients(form):
    """Duplicated rows from different groups merge into one model row; the optimum is unchanged."""
    base = random_dataset(7, n_samples=8, n_features=2)
    X = np.concatenate([base.X, base.X])
    y = np.concatenate([base.y, base.y])
    protected = np.r_[np.zeros(8, int), np.ones(8, int)]
    protected[[0, 9]] = [1, 0]
    data = Dataset.from_arrays(X, y)
    fairness = Fairness("sp", protected=protected, delta=0.1234)
    merged = form().build(data, max_depth=2, lam=0.0, fairness=fairness)
    split = form(aggregate=False).build(data, max_depth=2, lam=0.0, fairness=fairness)
    assert merged.meta.rows.n_rows < split.meta.rows.n_rows
    if form is not PathOCT:  # PathOCT's size depends on the tree's cells, not on the rows
        assert merged.n_vars < split.n_vars
    values = [solve(model).objective for model in (merged, split)]
    expected = brute_force_fair_tree(data, fairness, lam=0.0, max_depth=2)[1]
    assert values == pytest.approx([expected, expected], abs=TOL)


def test_merge_groups_and_sides():
    data = example_dataset_trees()
    protected = np.array(["u", "v", "w", "u", "v", "w"])
    groups = Fairness("sp", protected=protected, delta=0.1).groups(data)
    fair = merge_groups(groups, np.array([0, 0, 1, 1, 2, 2]), 3)
    assert fair.coefficients.shape == (3, 3)
    np.testing.assert_allclose(
        fair.coefficients, groups.coefficients[[0, 2, 4]] + groups.coefficients[[1, 3, 5]]
    )
    S, first, second = fair.sides()
    assert S.shape[1] == 3  # three groups, each shared by two of the three pairs
    np.testing.assert_allclose(S[:, first] - S[:, second], fair.coefficients)


def test_merge_groups_refuses_to_drop_a_row_with_a_coefficient():
    data = example_dataset_trees()
    groups = Fairness("sp", protected=EXAMPLE_TREES_PROTECTED).groups(data)
    with pytest.raises(ValueError, match="non-zero fairness coefficient"):
        merge_groups(groups, np.array([0, 0, 1, 1, 2, -1]), 3)


def test_bad_fairness_argument():
    data = example_dataset_trees()
    with pytest.raises(TypeError, match="fairness must be an odtkit.Fairness"):
        FlowOCT().build(data, max_depth=1, lam=0.0, fairness="sp")


def test_binoct_bound_stays_valid_under_fairness():
    """BinOCT's error bound bounds the fair OPT (a fair tree completed to depth D is fair)."""
    for seed, data, fairness, depth, lam in _fair_instances(4, offset=300):
        _, expected = brute_force_fair_tree(data, fairness, lam=lam, max_depth=depth)
        result = solve_formulation(BinOCT(), data, max_depth=depth, lam=lam, fairness=fairness)
        assert result.lower_bound <= expected + TOL, seed
        assert result.objective >= expected - TOL, seed
        assert metrics.is_fair(result.model, data, fairness), seed


def test_weight_zero_rows_are_left_out():
    data = random_dataset(3, n_samples=10, n_features=2)
    weights = np.ones(10)
    weights[[1, 4]] = 0.0
    data = dataclasses.replace(data, sample_weight=weights)
    protected = np.r_[0, 1, np.random.default_rng(0).integers(0, 2, size=8)]
    fairness = Fairness("sp", protected=protected, delta=0.1234)
    _, expected = brute_force_fair_tree(data, fairness, lam=0.02, max_depth=2)
    for form in (FlowOCT(), RBinOCT(), PathOCT()):
        result = solve_formulation(form, data, max_depth=2, lam=0.02, fairness=fairness)
        _check(result, data, fairness, 0.02, expected)


# --- PathOCT ------------------------------------------------------------------------------------


def test_pathoct_lp_relaxation_is_integral_without_fairness():
    """Module docstring of paths.py: the polytope is the convex hull of its trees."""
    for seed in range(25):
        rng = np.random.default_rng(seed)
        data = random_dataset(
            seed,
            n_samples=int(rng.integers(3, 30)),
            n_features=int(rng.integers(1, 6)),
            n_classes=2 + (seed % 6 == 5),
            weighted=seed % 5 == 3,
        )
        depth, lam = 1 + seed % 3, (0.0, 0.02, 0.05, 0.1)[seed % 4]
        model = PathOCT().build(data, max_depth=depth, lam=lam)
        expected = brute_force_tree(data, lam=lam, max_depth=depth)[1]
        assert solve(model, relax=True).objective == pytest.approx(expected, abs=1e-7), seed
        assert solve(model).objective == pytest.approx(expected, abs=TOL), seed


def test_pathoct_refuses_a_model_above_max_paths():
    data = random_dataset(0, n_samples=30, n_features=6)
    with pytest.raises(ValueError, match="max_paths=100"):
        PathOCT(max_paths=100).build(data, max_depth=3, lam=0.01)


@pytest.mark.parametrize("form", FORMULATIONS)
@pytest.mark.parametrize("lam", [0.0, 0.1])
def test_start_of_a_tree_with_an_empty_side(form, lam):
    """A repeated test (an empty side) is pruned by PathOCT's and RBinOCT's starts and, at
    lam = 0, replaced by a fresh feature in the fair FlowOCT's (Z2)."""
    data = example_dataset_trees()
    fairness = Fairness("sp", protected=EXAMPLE_TREES_PROTECTED, delta=0.4)
    model = form().build(data, max_depth=2, lam=lam, fairness=fairness)
    # root x1, then x1 again on the left: the left node's right side is empty
    tree = Tree.split(0, Tree.split(0, Tree.leaf(0), Tree.leaf(1)), Tree.leaf(1))
    x = form().start(model, tree)
    assert model.check(x).empty
    stump = 1 / 6 + 2 * lam  # x1: (0, 1); FlowOCT at lam > 0 counts the empty leaf too
    expected = stump + lam if form is FlowOCT else stump
    assert model.objective_value(x) == pytest.approx(expected)

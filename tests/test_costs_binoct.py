"""Cost objectives (odtkit.costs) in RBinOCT and BinOCT: a cost matrix (two classes, and three
with a general matrix the search cannot take), the balanced error and row costs with negative
entries, alone and beside a random side constraint, reach the brute-force oracle's optimum with
a valid lower bound (weights, weight-0 rows, lam 0 and > 0, depth 1-3); the oracle's optimum is
a feasible start of the right value, a search answer is an accepted warm start, the plain cost
matrix builds the plain model, and every block keeps its name in ``summary()`` and the LP file.
"""

from __future__ import annotations

import numpy as np
import pytest
from _constraint_oracle import assert_blocks_named, constraint_dataset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import metrics, solve_formulation
from odtkit.constraints import (
    ClassRecall,
    FeatureBudget,
    ForbidFeatures,
    MaxLeaves,
    MinLeafSupport,
    Predict,
    RequireFeatures,
    resolve,
)
from odtkit.core import search_tree
from odtkit.costs import BalancedError, CostMatrix, RowCosts
from odtkit.formulations import BinOCT, RBinOCT
from odtkit.formulations._common import prune_empty
from odtkit.testing import (
    CONSTRAINT_KINDS,
    brute_force_constrained_tree,
    random_constraint,
    random_dataset,
)

TOL = 1e-6
COSTS = ("matrix", "balanced", "rows")
#: Kinds a model without null splits carries (a completion to depth D keeps them).
PREDICTION_KINDS = ("require_features", "class_recall", "false_positive_rate", "predict")
SETTINGS = {"deadline": None, "derandomize": True, "suppress_health_check": [HealthCheck.too_slow]}


def random_cost(kind: str, data, rng: np.random.Generator):
    """A cost of ``kind``: a random matrix (entries 0..3 in halves, diagonal included: a
    general one, no weighted misclassification when K = 3), the balanced error, or integer
    row costs in -3..3 (0 on the rows of weight 0, as RowCosts requires)."""
    K = data.n_classes
    if kind == "matrix":
        return CostMatrix(rng.choice([0.0, 0.5, 1.0, 2.0, 3.0], size=(K, K)))
    if kind == "balanced":
        return BalancedError()
    costs = rng.integers(-3, 4, size=(data.n_samples, K)).astype(float)
    costs[data.weights == 0] = 0.0
    return RowCosts(costs)


def _data(rng: np.random.Generator, n_features: int, classes=(2, 2, 3)):
    return constraint_dataset(rng, n_features, n_samples=(5, 12), classes=classes)


def check(form, data, stated, *, lam: float, depth: int, exact: bool = True, start=True):
    """Solve ``stated`` (a cost first) with ``form`` and compare with the oracle: the same
    optimum (``exact``; else no better), a returned tree that satisfies every constraint, a
    lower bound at most the optimum (equal to it when ``exact``); the oracle's tree is a
    feasible start of the model whose value is the model's objective of that tree, and (with
    ``start``) it is handed to the solver."""
    tree, best = brute_force_constrained_tree(data, stated, lam=lam, max_depth=depth)
    warm = tree if start and tree is not None else None
    result = solve_formulation(form, data, max_depth=depth, lam=lam, constraints=stated, start=warm)
    if tree is None:
        assert result.status == "infeasible", (result.status, result.message, stated)
        assert result.model is None
        return result
    resolved = resolve(stated, data)
    model = result.stats["model_ir"]
    assert model.meta.carries_costs
    # the start: feasible, and its objective is what the model's objective says of the tree
    x = form.start(model, tree)
    assert model.is_feasible(x), model.check(x)
    rows = model.meta.rows
    if form.regularized and form.null_split:
        expected = metrics.objective(prune_empty(tree, rows.X), data, lam=lam, costs=resolved)
    elif not form.regularized:  # BinOCT's objective: the cost in model units
        expected = metrics.cost(tree, data, resolved) * rows.total_weight / data.total_weight
    else:  # a completion without null splits may occupy more leaves: value not pinned
        expected = None
    if expected is not None:
        assert model.objective_value(x) == pytest.approx(expected, abs=TOL), stated
    if warm is not None:
        # the pipeline may still drop it: HiGHS 1.16 misprices some starts in its presolved
        # space (pipeline.solve_model), plain models under MaxLeaves too
        assert result.stats["warm_start"]
    # the answer
    if exact:
        assert result.status == "optimal", (result.status, result.message, stated)
        assert result.objective == pytest.approx(best, abs=TOL), stated
    else:
        assert result.status in ("optimal", "feasible"), result.message
        assert result.objective >= best - TOL
    value = metrics.objective(result.model, data, lam=lam, costs=resolved)
    assert value == pytest.approx(result.objective, abs=TOL)
    assert metrics.constraint_violations(result.model, data, resolved) == []
    assert result.model.depth <= depth
    # the bound, as the formulation reports it before the pipeline clips it to the objective
    bound = form.lower_bound(model, result.solution)
    assert bound <= best + TOL, stated
    if exact:
        assert bound == pytest.approx(best, abs=TOL), stated
    return result


@settings(max_examples=30, **SETTINGS)
@given(
    seed=st.integers(0, 2**32 - 1),
    cost=st.sampled_from(COSTS),
    lam=st.sampled_from([0.0, 0.0, 0.03, 0.1]),
    depth=st.sampled_from([1, 2, 2]),
)
def test_rbinoct_cost_alone_matches_the_oracle(seed, cost, lam, depth):
    rng = np.random.default_rng(seed)
    data = _data(rng, int(rng.integers(2, 4)))
    check(RBinOCT(), data, [random_cost(cost, data, rng)], lam=lam, depth=depth)


@settings(max_examples=60, **SETTINGS)
@given(
    seed=st.integers(0, 2**32 - 1),
    cost=st.sampled_from(COSTS),
    kind=st.sampled_from(CONSTRAINT_KINDS),
    lam=st.sampled_from([0.0, 0.0, 0.03, 0.1]),
)
def test_rbinoct_cost_and_a_constraint_match_the_oracle(seed, cost, kind, lam):
    rng = np.random.default_rng(seed)
    data = _data(rng, int(rng.integers(2, 4)))
    stated = [random_cost(cost, data, rng), random_constraint(kind, data, rng)]
    check(RBinOCT(), data, stated, lam=lam, depth=2)


def test_three_classes_general_matrix_is_carried():
    """A 3 x 3 matrix whose off-diagonal entries differ within a row is no weighted
    misclassification (the search refuses it): the MIP is its only solver."""
    data = random_dataset(21, 11, 3, n_classes=3, weighted=True)
    cost = CostMatrix([[0.0, 1.0, 4.0], [2.0, 0.0, 1.0], [0.5, 3.0, 0.0]])
    # rows whose costs take three values: (BF) bounds what each leaf forgoes
    assert (
        "cost_floor" in RBinOCT().build(data, max_depth=2, lam=0.0, constraints=[cost]).constraints
    )
    for lam in (0.0, 0.05):
        check(RBinOCT(), data, [cost], lam=lam, depth=2)
        check(RBinOCT(), data, [cost, MaxLeaves(3)], lam=lam, depth=2)


def test_depth_3_on_tiny_data():
    """Two classes (the oracle enumerates some 10^5 trees of depth 3 on three features)."""
    rng = np.random.default_rng(3)
    for cost in COSTS:
        data = random_dataset(int(rng.integers(2**31)), 7, 3, weighted=True)
        check(RBinOCT(), data, [random_cost(cost, data, rng)], lam=0.04, depth=3)
    data = random_dataset(5, 7, 3, weighted=True)
    stated = [RowCosts(np.random.default_rng(5).integers(-2, 3, size=(7, 2))), MaxLeaves(3)]
    check(RBinOCT(), data, stated, lam=0.0, depth=3)


@pytest.mark.slow
@pytest.mark.parametrize("cost", COSTS)
def test_depth_3_three_classes(cost):
    """Three classes at depth 3: the oracle takes half a minute, RBinOCT up to a minute."""
    rng = np.random.default_rng(3 + COSTS.index(cost))
    data = random_dataset(int(rng.integers(2**31)), 7, 3, n_classes=3, weighted=True)
    check(RBinOCT(), data, [random_cost(cost, data, rng)], lam=0.04, depth=3)


# --- BinOCT -------------------------------------------------------------------------------------


@settings(max_examples=14, **SETTINGS)
@given(
    seed=st.integers(0, 2**32 - 1),
    cost=st.sampled_from(COSTS),
    kind=st.sampled_from((None, *CONSTRAINT_KINDS)),
)
def test_binoct_with_null_splits_matches_the_oracle_at_lam_0(seed, cost, kind):
    rng = np.random.default_rng(seed)
    data = _data(rng, int(rng.integers(2, 4)))
    stated = [random_cost(cost, data, rng)]
    if kind is not None:
        stated.append(random_constraint(kind, data, rng))
    # BinOCT minimizes the cost: its optimum is the oracle's at lam = 0
    check(BinOCT(null_split=True), data, stated, lam=0.0, depth=2)


@settings(max_examples=14, **SETTINGS)
@given(
    seed=st.integers(0, 2**32 - 1),
    cost=st.sampled_from(COSTS),
    kind=st.sampled_from((None, *PREDICTION_KINDS)),
    lam=st.sampled_from([0.0, 0.05]),
)
def test_binoct_without_null_splits_carries_the_cost(seed, cost, kind, lam):
    """The completion to depth D keeps every prediction, hence the cost: BinOCT is exact at
    lam = 0 and its bound valid at any lam; RBinOCT(null_split=False) returns a feasible tree
    no better than the optimum (it is not EXACT)."""
    rng = np.random.default_rng(seed)
    data = _data(rng, int(rng.integers(2, 4)))
    stated = [random_cost(cost, data, rng)]
    if kind is not None:
        stated.append(random_constraint(kind, data, rng))
    check(BinOCT(), data, stated, lam=lam, depth=2, exact=lam == 0.0)
    check(RBinOCT(null_split=False), data, stated, lam=lam, depth=2, exact=False)


def test_binoct_rounds_an_integral_bound_only():
    """With integer costs BinOCT's bound on the lost gain is rounded up; with fractional ones
    (the balanced error) it is not, and it still bounds the optimum."""
    data = random_dataset(8, 11, 3, weighted=True)
    for cost in (CostMatrix([[0, 2], [3, 0]]), BalancedError()):
        check(BinOCT(), data, [cost], lam=0.0, depth=1)
        check(BinOCT(), data, [cost, Predict([0], int(data.y[0]))], lam=0.0, depth=2)


# --- starts and the model -----------------------------------------------------------------------


@pytest.mark.parametrize("form", [RBinOCT(), BinOCT(null_split=True)], ids=["rbinoct", "binoct"])
def test_search_answer_is_an_accepted_warm_start(form):
    """The search certifies a two-class cost (a weighted misclassification): its tree is a
    warm start the MIP keeps, and both agree on the optimum."""
    data = random_dataset(13, 12, 3, weighted=True)
    stated = [CostMatrix([[0.0, 1.0], [4.0, 0.0]]), ForbidFeatures(["x1"])]
    lam = 0.02 if form.regularized else 0.0
    found = search_tree(data, lam=lam, max_depth=2, constraints=stated)
    assert found.status == "optimal", found.message
    result = check(form, data, stated, lam=lam, depth=2, start=False)
    warm = solve_formulation(
        form, data, max_depth=2, lam=lam, constraints=stated, start=found.model
    )
    assert warm.stats["warm_start"] and "start_rejected" not in warm.stats
    assert warm.status == "optimal", warm.message
    assert warm.objective == pytest.approx(found.objective, abs=TOL)
    assert warm.objective == pytest.approx(result.objective, abs=TOL)


@pytest.mark.parametrize("weighted", [False, True])
def test_plain_cost_matrix_builds_the_plain_model(weighted):
    """1 - I is the plain objective: (BC) is (BB5) row for row, no offset; only ``e``'s upper
    bound (U_k, the class weight, in place of W) differs."""
    data = random_dataset(4, 12, 3, n_classes=3, weighted=weighted)
    plain = RBinOCT().build(data, max_depth=2, lam=0.01, constraints=[MaxLeaves(3)])
    stated = [CostMatrix(1.0 - np.eye(3)), MaxLeaves(3)]
    costed = RBinOCT().build(data, max_depth=2, lam=0.01, constraints=stated)
    assert (plain.A != costed.A).nnz == 0
    np.testing.assert_array_equal(plain.c, costed.c)
    assert costed.offset == 0.0
    assert "cost_floor" not in costed.constraints  # no row's costs take three values
    assert costed.meta.carries_costs


def test_blocks_show_in_summary_and_lp_file(tmp_path):
    data = random_dataset(5, 12, 3, n_classes=3, weighted=True)
    rng = np.random.default_rng(0)
    stated = [
        RowCosts(rng.integers(-2, 3, size=(12, 3))),
        MaxLeaves(3),
        FeatureBudget({"x0": 1.0, "x2": 2.0}, 2.0, per="feature"),
        RequireFeatures(["x0"]),
        ClassRecall(1, at_least=0.5),
        MinLeafSupport(share=0.1),
    ]
    names = "max_leaves feature_budget require_features class_recall min_leaf_support".split()
    for form in (RBinOCT(), BinOCT(null_split=True)):
        model = form.build(data, max_depth=2, lam=0.01, constraints=stated)
        assert model.offset != 0.0  # the constant of (BC) is the model's, so in the LP file
        assert_blocks_named(model, ["leaf_error", *names], tmp_path / f"{form.name}.lp")

"""Cost objectives (odtkit.costs): the values, the one truth, the search's reduction against the
brute-force oracle, and the doors (estimator ``cost_matrix=``, CLI ``--costs``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from _constraint_oracle import agree_with_oracle, constraint_dataset
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import balanced_accuracy_score

from odtkit import OptimalTreeClassifier, metrics
from odtkit.constraints import FeatureBudget, ForbidFeatures, MaxLeaves, MinLeafSupport, resolve
from odtkit.core.search import search_refusal, search_tree
from odtkit.costs import BalancedError, CostMatrix, RowCosts, parse, reduction
from odtkit.datasets import Dataset
from odtkit.fairness import Fairness
from odtkit.testing import brute_force_constrained_tree, enumerate_trees, random_dataset

TOL = 1e-6


def reducible_cost(data: Dataset, rng: np.random.Generator) -> object:
    """A cost the search takes: any two-class cost, or a class-dependent one."""
    K = data.n_classes
    kind = int(rng.integers(4 if K == 2 else 3))
    if kind == 0:
        return BalancedError()
    if kind == 1:  # a wrong prediction's cost depends on the true class only
        off = rng.integers(1, 6, size=K).astype(float)
        matrix = np.repeat(off[:, None], K, axis=1)
        matrix[np.arange(K), np.arange(K)] = rng.integers(0, 2, size=K) * (off > 1)
        return CostMatrix(matrix)
    if kind == 2:  # per-row costs with one cheaper class per row, negative values allowed
        n = data.n_samples
        top = rng.normal(size=n)
        L = np.repeat(top[:, None], K, axis=1)
        L[np.arange(n), rng.integers(K, size=n)] -= rng.integers(0, 4, size=n)
        L[data.weights == 0] = 0.0
        return RowCosts(L)
    return CostMatrix(rng.integers(0, 6, size=(2, 2)))  # any two-class matrix


# ------------------------------------------------------------------------------------------
# the values


def test_values_are_checked_naming_the_argument() -> None:
    with pytest.raises(ValueError, match="square"):
        CostMatrix([[0, 1, 2], [1, 0, 1]])
    with pytest.raises(ValueError, match=">= 0"):
        CostMatrix([[0, -1], [1, 0]])
    with pytest.raises(ValueError, match="finite"):
        CostMatrix([[0, np.nan], [1, 0]])
    with pytest.raises(TypeError, match="matrix"):
        CostMatrix([["a", "b"], ["c", "d"]])
    with pytest.raises(ValueError, match="costs"):
        RowCosts([1.0, 2.0])
    with pytest.raises(ValueError, match="at most one cost"):
        resolve([BalancedError(), CostMatrix([[0, 1], [1, 0]])], random_dataset(0, 6, 2))


def test_losses_are_checked_against_the_dataset() -> None:
    data = random_dataset(1, 8, 2, n_classes=3)
    with pytest.raises(ValueError, match="3 classes.*3 x 3"):
        resolve([CostMatrix([[0, 1], [1, 0]])], data)
    with pytest.raises(ValueError, match="shape"):
        resolve([RowCosts(np.zeros((7, 3)))], data)
    w = np.ones(8)
    w[2] = 0.0
    weighted = dataclasses.replace(data, sample_weight=w)
    L = np.zeros((8, 3))
    L[2, 1] = 1.0
    with pytest.raises(ValueError, match="row 2 has sample weight 0"):
        resolve([RowCosts(L)], weighted)


def test_parse_reads_the_cli_syntax() -> None:
    assert isinstance(parse(" balanced "), BalancedError)
    m = parse("0,1;5,0")
    assert isinstance(m, CostMatrix)
    np.testing.assert_array_equal(m.matrix, [[0, 1], [5, 0]])
    assert m.describe() == "cost-matrix=0,1;5,0"
    for bad in ("0,1;5", "a,b;c,d", "0,1;1,0;2,2", "0,-1;1,0"):
        with pytest.raises(ValueError, match="costs"):
            parse(bad)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([2, 3, 4]), st.booleans())
def test_the_truths_of_the_named_costs(seed: int, K: int, weighted: bool) -> None:
    """The complement of the identity is misclassification; balanced error is one minus
    scikit-learn's balanced accuracy with the sample weights."""
    data = random_dataset(seed, 15, 3, n_classes=K, weighted=weighted)
    rng = np.random.default_rng(seed)
    trees = list(enumerate_trees(3, 2, K))
    for tree in (trees[int(i)] for i in rng.integers(len(trees), size=5)):
        plain = CostMatrix(1 - np.eye(K))
        assert metrics.cost(tree, data, plain) == pytest.approx(metrics.misclassified(tree, data))
        pred = tree.predict(data.X)
        w = data.weights
        if (np.bincount(data.y, weights=w, minlength=K) > 0).sum() < 2:
            continue
        expected = 1 - balanced_accuracy_score(data.y, pred, sample_weight=w)
        assert metrics.cost(tree, data, BalancedError()) / data.total_weight == pytest.approx(
            expected
        )


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_reduction_is_the_cost_up_to_a_constant(seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = constraint_dataset(rng, 3)
    cost = reducible_cost(data, rng)
    L = resolve([cost], data).losses
    reduced = reduction(L)
    assert not isinstance(reduced, str)
    assert (reduced.weights >= 0).all()
    plain = dataclasses.replace(data, y=reduced.y, sample_weight=reduced.weights)
    for tree in list(enumerate_trees(3, 2, data.n_classes))[:: 7 + seed % 5]:
        wrong = reduced.weights[tree.predict(data.X) != plain.y].sum()
        assert metrics.cost(tree, data, cost) == pytest.approx(reduced.constant + wrong)


def test_a_general_three_class_matrix_is_no_reduction() -> None:
    data = random_dataset(3, 9, 2, n_classes=3)
    cost = CostMatrix([[0, 1, 4], [2, 0, 1], [1, 3, 0]])
    assert isinstance(reduction(resolve([cost], data).losses), str)
    why = search_refusal(resolve([cost], data))
    assert why.startswith("cost-matrix=0,1,4;2,0,1;1,3,0 (cost_matrix)")
    assert "MIP" in why
    with pytest.raises(ValueError, match="cost_matrix"):
        search_tree(data, lam=0.01, max_depth=2, constraints=[cost])


# ------------------------------------------------------------------------------------------
# the search against the oracle


def searched(method: str):
    def solve(data: Dataset, constraints: list, *, lam: float, depth: int):
        return search_tree(data, lam=lam, max_depth=depth, method=method, constraints=constraints)

    return solve


@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 2**31 - 1),
    st.sampled_from([1, 2, 2, 3]),
    st.sampled_from([0.0, 0.0, 0.01, 0.05, 0.2]),
    st.sampled_from(["dp", "dp", "bnb"]),
    st.sampled_from([None, "forbid", "max_leaves", "split_budget"]),
)
def test_search_under_costs_matches_oracle(seed, depth, lam, method, side) -> None:
    rng = np.random.default_rng(seed)
    p = 3 if depth < 3 else 2
    data = constraint_dataset(rng, p)
    constraints: list = [reducible_cost(data, rng)]
    if side == "forbid":
        constraints.append(ForbidFeatures([data.feature_names[int(rng.integers(p))]]))
    elif side is not None and method == "dp":
        constraints.append(
            MaxLeaves(int(rng.integers(1, 4)))
            if side == "max_leaves"
            else FeatureBudget(1, int(rng.integers(0, 3)), per="split")
        )
    _, best, result = agree_with_oracle(searched(method), data, constraints, lam=lam, depth=depth)
    assert result.lower_bound == pytest.approx(best, abs=TOL)
    trace = result.trace
    if len(trace):  # the trace speaks in the cost objective's units too
        assert trace["bound"].max() <= best + TOL


def test_rows_that_cost_the_same_whatever_is_predicted_give_a_leaf() -> None:
    data = random_dataset(5, 10, 3)
    L = np.repeat(np.arange(10.0)[:, None], 2, axis=1)
    result = search_tree(data, lam=0.01, max_depth=3, constraints=[RowCosts(L)])
    assert result.status == "optimal"
    assert result.model.n_leaves == 1
    assert result.objective == pytest.approx(45.0 / data.total_weight + 0.01)


def test_the_search_names_what_it_cannot_take_beside_costs() -> None:
    data = random_dataset(4, 12, 3)
    cost = BalancedError()
    # a minimum leaf support is taken (tests/test_costs_support.py), beside a budget it is not
    assert search_refusal(resolve([cost, MinLeafSupport(share=0.2)], data)) == ""
    why = search_refusal(resolve([cost, MinLeafSupport(share=0.2), MaxLeaves(3)], data))
    assert why.startswith("min-leaf-share=0.2 beside max-leaves=3 (min_leaf_support)")
    fair = Fairness("sp", protected=np.arange(12) % 2, delta=0.1, positive_class=1)
    assert "no cost objective" in search_refusal(resolve([cost, fair], data))


def test_a_large_cost_scale_is_the_same_problem() -> None:
    """Scaling every cost scales the objective; the optimal tree stays optimal."""
    data = random_dataset(11, 14, 3, weighted=True)
    one = search_tree(data, lam=0.0, max_depth=2, constraints=[CostMatrix([[0, 1], [3, 0]])])
    big = search_tree(data, lam=0.0, max_depth=2, constraints=[CostMatrix([[0, 1e6], [3e6, 0]])])
    assert big.objective == pytest.approx(1e6 * one.objective, rel=1e-9)


# ------------------------------------------------------------------------------------------
# the doors


@pytest.fixture(scope="module")
def cancer():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return X, y


def test_estimator_balanced_minimizes_one_minus_balanced_accuracy(cancer) -> None:
    X, y = cancer
    est = OptimalTreeClassifier(lam=0.0, max_depth=2, cost_matrix="balanced").fit(X, y)
    assert est.certified_
    assert est.objective_ == pytest.approx(1 - balanced_accuracy_score(y, est.predict(X)))
    plain = OptimalTreeClassifier(lam=0.0, max_depth=2).fit(X, y)
    assert balanced_accuracy_score(y, est.predict(X)) >= balanced_accuracy_score(
        y, plain.predict(X)
    )


def test_estimator_cost_matrix_weighs_the_errors(cancer) -> None:
    X, y = cancer
    est = OptimalTreeClassifier(lam=0.0, max_depth=2, cost_matrix=[[0, 1], [5, 0]]).fit(X, y)
    pred = est.predict(X)
    cost = ((pred == 1) & (y == 0)).sum() + 5 * ((pred == 0) & (y == 1)).sum()
    assert est.objective_ == pytest.approx(cost / len(y))
    assert est.lower_bound_ == pytest.approx(est.objective_)


def test_estimator_refuses_a_bad_cost_matrix_naming_it(cancer) -> None:
    X, y = cancer
    with pytest.raises(ValueError, match="cost_matrix"):
        OptimalTreeClassifier(cost_matrix="uniform").fit(X, y)
    with pytest.raises(ValueError, match="cost_matrix: matrix must hold costs >= 0"):
        OptimalTreeClassifier(cost_matrix=[[0, -1], [1, 0]]).fit(X, y)
    with pytest.raises(ValueError, match="2 classes"):
        OptimalTreeClassifier(cost_matrix=np.ones((3, 3))).fit(X, y)


def test_cli_costs(tmp_path, capsys) -> None:
    from odtkit.cli import main

    rng = np.random.default_rng(0)
    n = 80
    table = tmp_path / "t.csv"
    a, b = rng.random(n), rng.random(n)
    label = np.where(a + 0.3 * rng.random(n) > 0.8, "yes", "no")
    table.write_text(
        "a,b,label\n" + "\n".join(f"{x},{z},{c}" for x, z, c in zip(a, b, label, strict=True))
    )
    code = main(["fit", str(table), "--label", "label", "--max-depth", "2", "--costs", "balanced"])
    out = capsys.readouterr().out
    assert code == 0
    assert "balanced-error" in out
    assert "status optimal" in out
    code = main(["fit", str(table), "--label", "label", "--max-depth", "2", "--costs", "0,1"])
    assert code != 0
    assert "--costs" in capsys.readouterr().err


def test_a_general_three_class_matrix_goes_to_a_mip_through_auto() -> None:
    """The search cannot take it, so method='auto' hands it to PathOCT, which certifies the
    oracle's optimum."""
    import pandas as pd

    data = next(
        d
        for d in (random_dataset(s, 14, 3, n_classes=3) for s in range(21, 99))
        if np.unique(d.y).size == 3
    )
    matrix = [[0, 1, 4], [2, 0, 1], [1, 3, 0]]
    X = pd.DataFrame(data.X.astype(int), columns=list(data.feature_names))
    est = OptimalTreeClassifier(lam=0.01, max_depth=2, method="auto", cost_matrix=matrix)
    est.fit(X, data.y)
    assert est.certified_
    assert est.result_.method == "pathoct"
    assert "the search sat out" in est.result_.message
    _, best = brute_force_constrained_tree(data, [CostMatrix(matrix)], lam=0.01, max_depth=2)
    assert est.objective_ == pytest.approx(best, abs=TOL)

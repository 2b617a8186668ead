"""Fairness through the faces users touch: compare, FairTreeClassifier and the CLI.

Every answer is checked against the brute-force oracle over δ-fair trees and re-measured with
``metrics.fairness_gap``; the solvers themselves are tested in test_search_fair.py and
test_fair_mip.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from odtkit import Dataset, Fairness, FairTreeClassifier, compare, metrics
from odtkit.cli import main
from odtkit.fairness import split_protected
from odtkit.testing import (
    EXAMPLE_TREES_PROTECTED,
    brute_force_fair_tree,
    example_dataset_trees,
    random_dataset,
)


def _fair_instance(seed: int) -> tuple[Dataset, np.ndarray]:
    data = random_dataset(seed, n_samples=12, n_features=3)
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, size=12)
    a[:2] = [0, 1]
    return data, a


@pytest.mark.parametrize("seed", range(3))
def test_compare_agrees_with_the_oracle(seed):
    data, a = _fair_instance(seed)
    fairness = Fairness("sp", protected=a, delta=0.1234)
    methods = ("dp", "rbinoct", "flowoct", "pathoct")
    comparison = compare(data, lam=0.02, max_depth=2, fairness=fairness, methods=methods)
    table = comparison.to_frame()
    _, expected = brute_force_fair_tree(data, fairness, lam=0.02, max_depth=2)
    assert list(table["method"]) == list(methods)
    assert (table["status"] == "optimal").all(), table[["method", "status", "message"]]
    assert np.allclose(table["objective"], expected, atol=1e-6)
    assert (table["fairness_gap"] <= 0.1234 + 1e-6).all()
    assert table["agrees"].tolist() == [True] * 4
    assert comparison.certified_optimum == pytest.approx(expected)
    assert comparison.fairness is fairness


def test_compare_worked_example_7_5():
    data = example_dataset_trees()
    fairness = Fairness("sp", protected=EXAMPLE_TREES_PROTECTED, delta=0.2)
    table = compare(data, lam=0.1, max_depth=1, fairness=fairness).to_frame()
    assert np.allclose(table["objective"], 13 / 30)  # the leaf: the stump is too unfair
    free = compare(data, lam=0.1, max_depth=1).to_frame()
    assert np.allclose(free["objective"], 11 / 30)
    assert "fairness_gap" not in free.columns


def test_compare_without_a_search_starts_from_a_fair_tree():
    data, a = _fair_instance(5)
    fairness = Fairness("sp", protected=a, delta=0.0)
    comparison = compare(data, lam=0.01, max_depth=2, methods=("flowoct",), fairness=fairness)
    assert comparison.warm_start_source in ("greedy_tree", "single_leaf")
    assert metrics.is_fair(comparison.trees[0], data, fairness)


def test_compare_refuses_a_method_that_cannot_be_fair():
    data, a = _fair_instance(0)
    fairness = Fairness("sp", protected=a)
    with pytest.raises(ValueError, match="bnb"):
        compare(data, lam=0.01, max_depth=2, methods=("bnb",), fairness=fairness)
    with pytest.raises(ValueError, match="binoct"):
        compare(data, lam=0.01, max_depth=2, methods=("dp", "binoct"), fairness=fairness)
    with pytest.raises(TypeError, match="fairness"):
        compare(data, lam=0.01, max_depth=2, fairness="sp")
    with pytest.raises(ValueError, match="rows"):
        compare(data, lam=0.01, max_depth=2, fairness=Fairness("sp", protected=[0, 1]))


def test_fair_tree_classifier_matches_the_oracle_and_reports_its_gap():
    data, a = _fair_instance(2)
    fairness = Fairness("eopp", protected=a, delta=0.05)
    _, expected = brute_force_fair_tree(data, fairness, lam=0.0, max_depth=2)
    for method in ("dp", "flowoct"):
        clf = FairTreeClassifier(notion="eopp", delta=0.05, max_depth=2, method=method)
        clf.fit(data.X, data.y, sensitive=a)
        assert clf.result_.objective == pytest.approx(expected)
        assert clf.fairness_gap_ <= 0.05 + 1e-6
        assert clf.fairness_gap(data.X, data.y, a) == pytest.approx(clf.fairness_gap_)
        assert 1 - clf.score(data.X, data.y) == pytest.approx(expected)


def test_fair_tree_classifier_is_a_scikit_learn_estimator():
    from sklearn.base import clone

    clf = FairTreeClassifier(notion="pe", delta=0.1, max_depth=2)
    assert clone(clf).get_params()["notion"] == "pe"
    data, a = _fair_instance(1)
    with pytest.raises(ValueError, match="sensitive"):
        clf.fit(data.X, data.y)
    with pytest.raises(ValueError, match="method"):
        FairTreeClassifier(method="bnb").fit(data.X, data.y, sensitive=a)
    with pytest.raises(TypeError, match="max_depth"):
        FairTreeClassifier(max_depth=None).fit(data.X, data.y, sensitive=a)
    with pytest.raises(ValueError, match="delta"):
        FairTreeClassifier(delta=2.0).fit(data.X, data.y, sensitive=a)


def test_cli_compare_with_fairness_on_a_csv(tmp_path, capsys):
    data, a = _fair_instance(3)
    frame = pd.DataFrame(data.X.astype(int), columns=list(data.feature_names))
    frame.insert(0, "group", np.where(a == 1, "B", "A"))
    frame["outcome"] = data.y
    path = tmp_path / "fair.csv"
    frame.to_csv(path, index=False)
    argv = [
        "compare",
        "--dataset",
        str(path),
        "--label",
        "outcome",
        "--fairness",
        "sp",
        "--protected",
        "group",
        "--delta",
        "0.1234",
        "--max-depth",
        "2",
        "--lam",
        "0.02",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "fairness: sp disparity <= 0.1234" in out
    assert "fairness_gap" in out
    _, expected = brute_force_fair_tree(
        data, Fairness("sp", protected=a, delta=0.1234), lam=0.02, max_depth=2
    )
    assert f"certified optimum {expected:.6f}" in out


def test_cli_fairness_errors_name_the_option(tmp_path, capsys):
    for argv, message in (
        (["--dataset", "monk1", "--fairness", "sp"], "--protected"),
        (["--dataset", "monk1", "--protected", "a1_1"], "--fairness"),
        (["--dataset", "monk1", "--fairness", "sp", "--protected", "sex"], "not"),
        (["--dataset", str(tmp_path / "missing.csv")], "no such file"),
    ):
        assert main(["compare", *argv]) == 2, argv
        assert message in capsys.readouterr().err, argv


def test_split_protected_keeps_the_attribute_out_of_the_splits():
    data = example_dataset_trees()
    rest, values = split_protected(data, "x2")
    assert rest.feature_names == ("x1",)
    assert values.tolist() == data.X[:, 1].astype(int).tolist()
    both, matrix = split_protected(data, ["x1", "x2"])
    assert both.n_features == 0 and matrix.shape == (6, 2)
    with pytest.raises(ValueError, match="columns"):
        split_protected(data, "sex")

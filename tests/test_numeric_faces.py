"""The faces of the exact search over every threshold (issue 23): the estimator's
``thresholds=``, ``certificate_``, the CLI's ``--thresholds all`` / ``--methods exact`` and
``compare``'s race of the exact search against the binarized methods on one raw table.

Every optimum is checked against independent truth: the objective re-computed from the
estimator's own predictions on raw rows, and the brute-force oracle over every midpoint.
"""

from __future__ import annotations

import io
import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from odtkit import compare, export_text, metrics
from odtkit.cli import main
from odtkit.constraints import MaxLeaves
from odtkit.datasets import Binarizer, Dataset
from odtkit.estimators import FairTreeClassifier, OptimalTreeClassifier, OptimalTreeClassifierCV
from odtkit.methods import METHODS, RAW_METHODS, SEARCH_METHODS
from odtkit.testing import brute_force_tree, example_dataset_trees

LAM = 0.01


def _table(seed: int = 0, n: int = 70) -> tuple[pd.DataFrame, np.ndarray]:
    """Two numeric columns with many distinct values (one with blank cells), a categorical one;
    the label is an XOR of thresholds the boosted guess does not line up with exactly."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "a": rng.normal(size=n).round(2),
            "b": rng.integers(0, 25, n).astype(float),
            "c": rng.choice(["red", "green"], n),
        }
    )
    y = np.where((frame["a"] > 0.3) ^ (frame["b"] > 12), "yes", "no")
    flip = rng.random(n) < 0.1
    y[flip] = np.where(y[flip] == "yes", "no", "yes")
    frame.loc[[i for i in (3, 17, 40) if i < n], "a"] = np.nan
    return frame, y


def _objective_of_predictions(clf: OptimalTreeClassifier, X: pd.DataFrame, y: np.ndarray) -> float:
    """The objective measured from the fitted estimator's predictions on the raw rows."""
    return float(np.mean(clf.predict(X) != y)) + clf.lam * clf.get_n_leaves()


def _every_midpoint(X: pd.DataFrame, y: np.ndarray) -> Dataset:
    binarizer = Binarizer().fit(X)
    names = list(binarizer.get_feature_names_out())
    return Dataset.from_arrays(binarizer.transform(X), y, feature_names=names)


# -- the estimator ---------------------------------------------------------------------------


def test_all_thresholds_is_certified_over_every_threshold_and_beats_the_guess():
    X, y = _table()
    guessed = OptimalTreeClassifier(lam=LAM, max_depth=2, thresholds="guess").fit(X, y)
    exact = OptimalTreeClassifier(lam=LAM, max_depth=2, thresholds="all").fit(X, y)
    assert exact.certified_ and exact.status_ == "optimal"
    assert exact.certificate_ == "all thresholds"
    assert guessed.certificate_ == "guessed thresholds"
    assert exact.objective_ <= guessed.objective_ + 1e-9
    # the same optimum as dp over every midpoint (the slow way to certify over all thresholds)
    midpoints = OptimalTreeClassifier(lam=LAM, max_depth=2, guess_thresholds=None).fit(X, y)
    assert midpoints.certificate_ == "all thresholds"
    assert exact.objective_ == pytest.approx(midpoints.objective_, abs=1e-9)
    # independent truth: the objective of the estimator's own predictions on raw rows (blank
    # cells included), and of its tree re-scored through its binarizer
    assert _objective_of_predictions(exact, X, y) == pytest.approx(exact.objective_, abs=1e-9)
    rows = Dataset.from_arrays(exact.binarizer_.transform(X), y)
    assert metrics.objective(exact.tree_, rows, lam=LAM) == pytest.approx(exact.objective_)
    assert exact.lower_bound_ == pytest.approx(exact.objective_)


def test_all_thresholds_predicts_raw_rows_with_blanks_and_prints_real_thresholds():
    X, y = _table(1)
    clf = OptimalTreeClassifier(lam=LAM, max_depth=2, thresholds="all").fit(X, y)
    new = X.iloc[:12].copy()
    new.loc[new.index[:4], ["a", "b"]] = np.nan  # blanks in every numeric column
    predicted = clf.predict(new)
    assert predicted.shape == (12,) and set(predicted) <= set(clf.classes_)
    proba = clf.predict_proba(new)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert clf.apply(new).shape == (12,) and clf.decision_path(new).shape[0] == 12
    assert clf.feature_importances_.shape == (3,)
    text = export_text(clf)
    tests = re.findall(r"\b([ab]) (?:<=|>) (-?\d+(?:\.\d+)?)", text)
    assert tests, text
    for column, value in tests:
        # a real threshold: the midpoint of two consecutive distinct values of that column
        distinct = np.unique(X[column].dropna().to_numpy())
        assert np.isclose((distinct[:-1] + distinct[1:]) / 2, float(value)).any(), (column, value)


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(4, 14),
    lam=st.sampled_from([0.0, 0.05]),
)
def test_all_thresholds_equals_the_brute_force_over_every_midpoint(seed, n, lam):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {"a": rng.integers(0, 4, n).astype(float), "b": rng.integers(0, 3, n).astype(float)}
    )
    X.loc[rng.random(n) < 0.2, "a"] = np.nan
    y = rng.integers(0, 2, n)
    if np.unique(y).size < 2:
        y[0] = 1 - y[1]
    clf = OptimalTreeClassifier(lam=lam, max_depth=2, thresholds="all").fit(X, y)
    _, optimum = brute_force_tree(_every_midpoint(X, y), lam=lam, max_depth=2)
    assert clf.certified_ and clf.certificate_ == "all thresholds"
    assert clf.objective_ == pytest.approx(optimum, abs=1e-9)
    assert _objective_of_predictions(clf, X, y) == pytest.approx(optimum, abs=1e-9)


def test_threshold_choices_and_their_certificates():
    X, y = _table(2)
    capped = OptimalTreeClassifier(lam=LAM, max_depth=2, thresholds=2).fit(X, y)
    assert capped.certificate_ == "binarization"
    assert len(capped.binarizer_.thresholds_["a"]) <= 2
    assert capped.binarizer_.guess_thresholds is None
    # the deprecated max_thresholds / guess_thresholds still decide, with a FutureWarning
    old = OptimalTreeClassifier(lam=LAM, max_depth=2, max_thresholds=2, guess_thresholds=None)
    with pytest.warns(FutureWarning, match="use thresholds=2"):
        assert old.fit(X, y).tree_ == capped.tree_
    # the default: the exact search wherever it runs (dp at a limited depth), else the guess
    default = OptimalTreeClassifier(lam=LAM, max_depth=2).fit(X, y)
    every = OptimalTreeClassifier(lam=LAM, max_depth=2, thresholds="all").fit(X, y)
    assert default.certificate_ == every.certificate_ == "all thresholds"
    assert default.objective_ == pytest.approx(every.objective_, abs=1e-12)
    guess = OptimalTreeClassifier(lam=LAM, max_depth=2, thresholds="guess").fit(X, y)
    assert guess.certificate_ == "guessed thresholds"
    assert default.objective_ <= guess.objective_ + 1e-12
    for elsewhere in (
        {"max_depth": None},  # unlimited: the exact search is depth-limited
        {"max_depth": 2, "method": "bnb"},
        {"max_depth": 2, "constraints": [MaxLeaves(3)]},
    ):
        auto = OptimalTreeClassifier(lam=LAM, **elsewhere).fit(X, y)
        stated = OptimalTreeClassifier(lam=LAM, thresholds="guess", **elsewhere).fit(X, y)
        assert auto.certificate_ == stated.certificate_ == "guessed thresholds", elsewhere
        assert auto.tree_ == stated.tree_, elsewhere
    # 0/1 input is its own every threshold
    binary = (X[["b"]].to_numpy() > 12).astype(int)
    clf = OptimalTreeClassifier(lam=LAM, max_depth=1, thresholds="all").fit(binary, y)
    assert clf.binarizer_ is None and clf.certificate_ == "all thresholds"
    # unlimited depth: every midpoint binarized and searched by dp (same certificate)
    small_X, small_y = X.iloc[:14], y[:14]
    deep = OptimalTreeClassifier(lam=0.05, max_depth=None, thresholds="all").fit(small_X, small_y)
    assert deep.certificate_ == "all thresholds" and deep.binarizer_.guess_thresholds is None


def test_rows_of_weight_zero_are_left_out_even_a_class_of_their_own():
    X, y = _table(9, 40)
    y = y.astype(object)
    weights = np.ones(len(y))
    weights[:5] = 0.0
    y[:2] = "maybe"  # a class seen only on rows of weight 0
    clf = OptimalTreeClassifier(lam=LAM, max_depth=2, thresholds="all")
    clf.fit(X, y, sample_weight=weights)
    assert list(clf.classes_) == ["maybe", "no", "yes"]
    kept = OptimalTreeClassifier(lam=LAM, max_depth=2, thresholds="all").fit(X[5:], y[5:])
    assert clf.objective_ == pytest.approx(kept.objective_)
    assert np.array_equal(clf.predict(X), kept.predict(X))


def test_a_limit_in_the_exact_search_is_a_status_a_warning_and_no_certificate(monkeypatch):
    import odtkit.core
    from odtkit import LimitReachedWarning

    real = odtkit.core.search_numeric

    def stopped(*args, **kwargs):  # the search as a time limit leaves it: best tree, low bound
        result = real(*args, **kwargs)
        return result.replace(status="time_limit", lower_bound=result.objective / 2)

    monkeypatch.setattr(odtkit.core, "search_numeric", stopped)
    X, y = _table(10, 40)
    clf = OptimalTreeClassifier(lam=LAM, max_depth=2, thresholds="all")
    with pytest.warns(LimitReachedWarning, match="time limit"):
        clf.fit(X, y)
    assert clf.status_ == "time_limit" and not clf.certified_ and clf.certificate_ is None
    assert clf.lower_bound_ < clf.objective_
    assert _objective_of_predictions(clf, X, y) == pytest.approx(clf.objective_)


# scikit-learn's own checks, on the exact search (sample-weight equivalence included)
@parametrize_with_checks([OptimalTreeClassifier(max_depth=2, thresholds="all")])
def test_sklearn_checks_with_every_threshold(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    ("estimator", "message"),
    [
        (OptimalTreeClassifier(thresholds="some"), "thresholds.*must be"),
        (OptimalTreeClassifier(thresholds=0), "thresholds.*must be"),
        (OptimalTreeClassifier(thresholds=True), "thresholds.*must be"),
        (OptimalTreeClassifier(thresholds=2.5), "thresholds.*must be"),
        (OptimalTreeClassifier(thresholds="all", method="rbinoct"), "thresholds='all'.*rbinoct"),
        (OptimalTreeClassifier(thresholds="all", method="bnb"), "thresholds='all'.*bnb"),
        (OptimalTreeClassifier(thresholds=5, max_thresholds=3), "max_thresholds"),
        (OptimalTreeClassifier(thresholds="all", guess_thresholds=10), "guess_thresholds"),
        (OptimalTreeClassifier(method="exact"), "method.*must be"),
        (OptimalTreeClassifierCV(thresholds="all"), "thresholds='all'"),
        (FairTreeClassifier(thresholds="all"), "thresholds='all'"),
    ],
)
def test_bad_thresholds_are_refused_naming_the_argument(estimator, message):
    X, y = _table(3, 30)
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, y, sensitive=X["c"]) if isinstance(
            estimator, FairTreeClassifier
        ) else estimator.fit(X, y)


def test_cv_and_fair_take_the_binarized_choices():
    X, y = _table(4, 50)
    cv = OptimalTreeClassifierCV(max_depth=2, cv=2, thresholds=3).fit(X, y)
    assert all(len(t) <= 3 for t in cv.binarizer_.thresholds_.values())
    assert cv.certificate_ in ("binarization", None)
    fair = FairTreeClassifier(max_depth=2, delta=0.2, positive_class="yes", thresholds="guess")
    fair.fit(X[["a", "b"]], y, sensitive=X["c"])
    assert fair.certificate_ == "guessed thresholds"


# -- the method vocabulary -------------------------------------------------------------------


def test_exact_is_a_raw_table_method():
    assert RAW_METHODS == ("exact",) and "exact" not in SEARCH_METHODS
    exact = METHODS["exact"]
    assert exact.raw and exact.certificate == "all thresholds"
    assert METHODS["dp"].certificate == "binarization"
    with pytest.raises(ValueError, match="raw table"):
        exact.search(example_dataset_trees(), lam=0.1, max_depth=2)


# -- compare ---------------------------------------------------------------------------------


def test_compare_races_the_exact_search_against_the_binarized_methods():
    X, y = _table(5, 40)
    comparison = compare(
        X, y=y, lam=LAM, max_depth=2, methods=["exact", "dp", "rbinoct"], time_limit=60
    )
    table = comparison.to_frame()
    assert table["method"].tolist() == ["exact", "dp", "rbinoct"]
    # the binarized methods are certified over the guessed thresholds (compare's default policy,
    # the certificate the estimators and `odtkit fit` give the same binarization)
    guessed = "guessed thresholds"
    assert table["certificate"].tolist() == ["all thresholds", guessed, guessed]
    exact, dp = table.iloc[0], table.iloc[1]
    assert exact["status"] == "optimal" and dp["status"] == "optimal"
    # the exact optimum is over more trees: never worse than a certified binarized one
    certified = table[(table["certificate"] == guessed) & (table["status"] == "optimal")]
    assert (exact["objective"] <= certified["objective"] + 1e-9).all()
    assert bool(exact["agrees"]) and bool(dp["agrees"])
    optima = comparison.certified_optima
    assert optima["all thresholds"] == pytest.approx(exact["objective"])
    assert optima[guessed] == pytest.approx(dp["objective"])
    # every row's tree, read through its own binarizer, scores its objective on the raw rows
    for run in comparison:
        tree, reader, objective = run.tree, run.reader, run.objective
        rows = Dataset.from_arrays(reader.transform(X), y)
        assert metrics.objective(tree, rows, lam=LAM) == pytest.approx(objective)


def test_compare_with_every_midpoint_starts_the_mip_from_the_exact_tree():
    X, y = _table(6, 30)
    comparison = compare(
        X, y=y, lam=0.05, max_depth=1, methods=["exact", "rbinoct"], thresholds="all"
    )
    table = comparison.to_frame()
    assert comparison.warm_start_source == "exact"
    assert table["warm_start"].tolist() == [False, True]
    # every midpoint is every threshold: one problem, one certificate, the same optimum
    assert table["certificate"].tolist() == ["all thresholds", "all thresholds"]
    assert table["agrees"].iloc[0] == True  # noqa: E712 (an object column: True, False, None)
    if table["status"].iloc[1] == "optimal":  # a MIP on a loaded machine may stop at its limit
        assert table["agrees"].iloc[1] == True  # noqa: E712


def test_compare_refuses_what_it_cannot_run():
    X, y = _table(7, 20)
    data = example_dataset_trees()
    with pytest.raises(ValueError, match="raw table"):
        compare(data, lam=0.1, max_depth=2, methods=["exact"])
    with pytest.raises(ValueError, match="thresholds"):
        compare(data, lam=0.1, max_depth=2, methods=["dp"], thresholds="all")
    with pytest.raises(ValueError, match="y is given"):
        compare(data, y=data.y, lam=0.1, max_depth=2, methods=["dp"])
    with pytest.raises(ValueError, match="thresholds must be"):
        compare(X, y=y, lam=0.1, max_depth=2, methods=["dp"], thresholds="most")


# -- the command line ------------------------------------------------------------------------


@pytest.fixture
def numeric_csv(tmp_path):
    X, y = _table(8, 60)
    frame = X.assign(outcome=y)
    path = tmp_path / "numbers.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_cli_fit_with_thresholds_all_runs_the_exact_search(numeric_csv, tmp_path, capsys):
    path, frame = numeric_csv
    model = tmp_path / "tree.json"
    argv = ["fit", str(path), "--max-depth", "2", "--thresholds", "all", "--out", str(model)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "method exact" in captured.out and "status optimal over all thresholds" in captured.out
    assert re.search(r"\b[ab] (<=|>) -?\d", captured.out)  # real thresholds of the raw columns
    assert "exact search over every threshold" in captured.err
    saved = json.loads(model.read_text())
    assert saved["certificate"] == "all thresholds" and saved["method"] == "exact"
    # predict reads the saved binarization: its accuracy on the training rows is the one the
    # objective implies (errors = objective - lam * leaves)
    assert main(["predict", str(model), str(path)]) == 0
    captured = capsys.readouterr()
    predicted = pd.read_csv(io.StringIO(captured.out))["prediction"].astype(str)
    accuracy = float(np.mean(predicted.to_numpy() == frame["outcome"].to_numpy()))
    expected = 1.0 - (saved["objective"] - LAM * saved["n_leaves"])
    assert accuracy == pytest.approx(expected, abs=1e-9)
    # the same search as the estimator's thresholds="all"
    clf = OptimalTreeClassifier(lam=LAM, max_depth=2, thresholds="all")
    clf.fit(frame.drop(columns="outcome"), frame["outcome"])
    assert saved["objective"] == pytest.approx(clf.objective_)


def test_cli_fit_json_says_the_certificate(numeric_csv, capsys):
    path, _ = numeric_csv
    for extra, certificate in (
        (["--thresholds", "all"], "all thresholds"),
        (["--method", "exact"], "all thresholds"),
        ([], "all thresholds"),  # fit's default is the estimators': "auto"
        (["--thresholds", "auto"], "all thresholds"),
        (["--thresholds", "auto", "--method", "bnb"], "guessed thresholds"),
        (["--thresholds", "auto", "--constraint", "max-leaves=3"], "guessed thresholds"),
        (["--thresholds", "guess"], "guessed thresholds"),
        (["--thresholds", "3"], "binarization"),
    ):
        assert main(["fit", str(path), "--max-depth", "2", "--json", *extra]) == 0
        payload = json.loads(capsys.readouterr().out)
        assert payload["certificate"] == certificate, extra
    assert main(["fit", str(path), "--method", "exact", "--max-depth", "none"]) == 2
    assert "--max-depth" in capsys.readouterr().err
    assert main(["fit", "monk1", "--method", "exact"]) == 2
    assert "CSV" in capsys.readouterr().err


def test_cli_compare_with_thresholds_all_and_the_race(numeric_csv, capsys):
    path, _ = numeric_csv
    argv = ["compare", "--dataset", str(path), "--max-depth", "2", "--json"]
    assert main([*argv, "--thresholds", "all", "--methods", "dp"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in payload["rows"]] == ["exact"]
    assert payload["certificate"] == "all thresholds"
    assert payload["rows"][0]["certificate"] == "all thresholds"
    all_optimum = payload["certified_optimum"]

    assert main([*argv, "--methods", "exact,dp"]) == 0
    payload = json.loads(capsys.readouterr().out)
    rows = {r["method"]: r for r in payload["rows"]}
    assert rows["exact"]["certificate"] == "all thresholds"
    assert rows["dp"]["certificate"] == "guessed thresholds"
    assert rows["exact"]["objective"] == pytest.approx(all_optimum)
    assert rows["exact"]["objective"] <= rows["dp"]["objective"] + 1e-9
    assert payload["binarization"]["thresholds"] == "guess"
    assert not math.isnan(payload["certified_optima"]["guessed thresholds"])

    assert main([*argv[:-1], "--methods", "exact,dp"]) == 0  # the table, read in one line
    assert "certified optima: over all thresholds" in capsys.readouterr().out

    assert main(["compare", "--dataset", "monk1", "--methods", "exact"]) == 2
    assert "CSV" in capsys.readouterr().err


def test_cli_exact_search_takes_a_huge_depth_and_fairness_keeps_the_fair_dp(numeric_csv, capsys):
    path, _ = numeric_csv
    huge = "99999999999999999999"  # clamped (n - 1 splits at most matter), never sent native
    argv = ["fit", str(path), "--thresholds", "all", "--max-depth", huge, "--lam", "0.05"]
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["certificate"] == "all thresholds"
    fair = ["--fairness", "sp", "--protected", "c", "--positive-class", "yes", "--delta", "0.5"]
    argv = ["compare", "--dataset", str(path), "--max-depth", "1", "--thresholds", "all"]
    assert main([*argv, "--methods", "dp", "--json", *fair]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in payload["rows"]] == ["dp"]  # every midpoint, fair
    assert main([*argv, "--methods", "exact", *fair]) == 2
    assert "fairness" in capsys.readouterr().err

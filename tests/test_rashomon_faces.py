"""The Rashomon set's faces (issue 24, item 3): ``OptimalTreeClassifier.rashomon`` after a fit
and ``odtkit rashomon DATA``, checked against a brute-force enumeration of the set
(``testing.enumerate_trees``, admissible splits, every tree re-scored by ``metrics``)."""

from __future__ import annotations

import importlib
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

import odtkit
from odtkit import metrics
from odtkit.cli import main
from odtkit.datasets import Dataset, binarize_frame
from odtkit.methods import GUESS_ROUNDS
from odtkit.testing import enumerate_trees, random_dataset
from odtkit.tree import Tree


def _admissible(tree: Tree, data: Dataset, rows: np.ndarray) -> bool:
    """Every split sends training weight > 1e-12 W to both sides (RASHOMON-API.md)."""
    if tree.is_leaf:
        return True
    x = data.X[:, tree.feature]
    left, right = rows & ~x, rows & x
    floor = 1e-12 * data.total_weight
    if data.weights[left].sum() <= floor or data.weights[right].sum() <= floor:
        return False
    return _admissible(tree.left, data, left) and _admissible(tree.right, data, right)


def brute_force_set(
    data: Dataset, *, lam: float, max_depth: int, epsilon: float, absolute: bool = False
) -> list[Tree]:
    """Every admissible tree (any leaf labels) within the bound, by enumeration."""
    everything = [
        (metrics.objective(t, data, lam=lam), t)
        for t in enumerate_trees(data.n_features, max_depth, data.n_classes)
        if _admissible(t, data, np.ones(data.n_samples, dtype=bool))
    ]
    optimum = min(r for r, _ in everything)
    bound = optimum + epsilon if absolute else (1 + epsilon) * optimum
    return [t for r, t in everything if r <= bound + 1e-9]


def _as_set(trees) -> set[str]:
    return {json.dumps(t.to_dict(), sort_keys=True) for t in trees}


@pytest.fixture
def table(tmp_path):
    """A small user table: a numeric column, a categorical one, labels as strings."""
    rng = np.random.default_rng(3)
    n = 60
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "colour": rng.choice(["red", "green", "blue"], n),
        }
    )
    positive = (frame.age > 45) & (frame.colour != "red")
    frame["y"] = np.where(positive ^ (rng.random(n) < 0.1), "yes", "no")
    path = tmp_path / "small.csv"
    frame.to_csv(path, index=False)
    return frame, path


# -- the estimator -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_estimator_set_on_binary_input_is_the_brute_force_set(seed):
    data = random_dataset(seed, n_samples=30, n_features=3)
    est = odtkit.OptimalTreeClassifier(lam=0.03, max_depth=2).fit(data.X, data.y)
    rset = est.rashomon(epsilon=0.3)
    truth = brute_force_set(data, lam=0.03, max_depth=2, epsilon=0.3)
    assert rset.count() == len(truth)
    assert _as_set(rset) == _as_set(truth)
    assert rset.complete
    assert rset.optimum == pytest.approx(est.objective_, abs=1e-9)
    assert est.tree_ in list(rset)  # the certified fitted tree is a member
    # binary input: the members read the rows as they are
    codes = rset.predictions(data.X)
    assert codes.shape == (rset.count(), data.n_samples)
    i = list(rset).index(est.tree_)
    assert np.array_equal(est.classes_[codes[i]], est.predict(data.X))


def test_estimator_set_on_a_raw_table_is_over_the_fitted_binarization(table):
    frame, _ = table
    X, y = frame[["age", "colour"]], frame["y"]
    est = odtkit.OptimalTreeClassifier(lam=0.02, max_depth=2, thresholds="guess").fit(X, y)
    assert est.binarizer_ is not None  # guessed thresholds, not every midpoint
    rset = est.rashomon(epsilon=0.5, absolute=False)
    data = Dataset.from_arrays(
        est.binarizer_.transform(X), y.to_numpy(), feature_names=est.feature_names_
    )
    truth = brute_force_set(data, lam=0.02, max_depth=2, epsilon=0.5)
    assert _as_set(rset) == _as_set(truth)
    for tree in rset:  # every member within the stated bound, re-scored on the fitted rows
        assert metrics.objective(tree, data, lam=0.02) <= rset.bound + 1e-9
    # raw rows: predict through the fitted Binarizer, labels through classes_ (the docstring)
    fresh = X.iloc[::3]
    labels = est.classes_[rset.predictions(est.binarizer_.transform(fresh))]
    member = list(rset).index(est.tree_)
    assert np.array_equal(labels[member], est.predict(fresh))
    assert set(np.unique(labels)) <= set(est.classes_)


def test_estimator_absolute_and_the_fitted_lambda(table):
    frame, _ = table
    X, y = frame[["age", "colour"]], frame["y"]
    est = odtkit.OptimalTreeClassifier(lam=0.02, max_depth=2, thresholds="guess").fit(X, y)
    est.set_params(lam=0.5)  # after fit: the set is still the fitted problem's
    rset = est.rashomon(epsilon=0.01, absolute=True)
    assert rset.lam == pytest.approx(0.02)
    assert rset.bound == pytest.approx(rset.optimum + 0.01)
    assert rset.optimum == pytest.approx(est.objective_, abs=1e-9)


def test_estimator_refuses_before_fit_and_after_the_exact_search_without_the_table(table):
    with pytest.raises(NotFittedError):
        odtkit.OptimalTreeClassifier().rashomon()
    frame, _ = table
    for thresholds in ("all", "auto"):  # "auto", the default, runs the exact search here
        est = odtkit.OptimalTreeClassifier(lam=0.02, max_depth=2, thresholds=thresholds)
        est.fit(frame[["age", "colour"]], frame["y"])
        assert est.certificate_ == "all thresholds"
        with pytest.raises(ValueError, match="thresholds='all'.*only the thresholds.*X=X"):
            est.rashomon()
        with pytest.raises(ValueError, match="not the table"):
            est.rashomon(X=frame[["age", "colour"]].iloc[:30])
        moved = frame[["age", "colour"]].assign(age=frame.age + 0.25)
        with pytest.raises(ValueError, match="not the table"):
            est.rashomon(X=moved)
    guessed = odtkit.OptimalTreeClassifier(lam=0.02, max_depth=2, thresholds="guess")
    guessed.fit(frame[["age", "colour"]], frame["y"])
    with pytest.raises(ValueError, match="X is read only after a fit by the exact search"):
        guessed.rashomon(X=frame[["age", "colour"]])


@pytest.mark.parametrize("thresholds", ["all", "auto"])
@pytest.mark.parametrize("seed", [0, 1])
def test_after_the_exact_search_the_set_over_the_policy_and_the_tree_is_the_brute_force_set(
    thresholds, seed
):
    # few distinct ages, so that every tree over every midpoint can be enumerated
    rng = np.random.default_rng(seed)
    n = 40
    X = pd.DataFrame(
        {"age": rng.choice([20, 30, 40, 50, 60, 70], n), "colour": rng.choice(["r", "g"], n)}
    )
    y = np.where((X.age > 35) ^ (rng.random(n) < 0.2), "yes", "no")
    est = odtkit.OptimalTreeClassifier(lam=0.02, max_depth=2, thresholds=thresholds).fit(X, y)
    assert est.certificate_ == "all thresholds"
    rset = est.rashomon(epsilon=0.3, X=X)
    # OPT is the exact optimum: the fitted tree lies in the set's space
    assert rset.optimum == pytest.approx(est.result_.objective, abs=1e-12)
    names = set(rset.binarizer.get_feature_names_out())
    assert set(est.binarizer_.get_feature_names_out()) <= names
    if thresholds == "all":  # the policy's thresholds are every midpoint: the exact set
        assert names == set(odtkit.datasets.Binarizer().fit(X).get_feature_names_out())
    else:
        guess = odtkit.datasets.Binarizer(guess_thresholds=GUESS_ROUNDS).fit(X, y)
        assert set(guess.get_feature_names_out()) <= names
    assert np.array_equal(rset.binarizer.transform(X), rset.dataset.X)
    truth = brute_force_set(rset.dataset, lam=0.02, max_depth=2, epsilon=0.3)
    assert _as_set(rset) == _as_set(truth)
    assert rset.predictions(rset.binarizer.transform(X)).shape == (rset.count(), n)


def test_estimator_refuses_bad_arguments():
    data = random_dataset(0, n_samples=20, n_features=3)
    est = odtkit.OptimalTreeClassifier(lam=0.01, max_depth=2).fit(data.X, data.y)
    with pytest.raises(ValueError, match="time_limit"):
        est.rashomon(time_limit=-1)
    with pytest.raises(TypeError, match="absolute"):
        est.rashomon(absolute="yes")
    with pytest.raises(ValueError, match="epsilon"):
        est.rashomon(epsilon=-0.1)


def test_cv_and_fair_estimators_say_why_they_have_no_set():
    data = random_dataset(0, n_samples=40, n_features=3)
    cv = odtkit.OptimalTreeClassifierCV(max_depth=2, cv=2).fit(data.X, data.y)
    with pytest.raises(NotImplementedError, match="cross-validation"):
        cv.rashomon()
    fair = odtkit.FairTreeClassifier(max_depth=2, delta=0.5)
    fair.fit(data.X, data.y, sensitive=data.X[:, 0])
    with pytest.raises(NotImplementedError, match="fairness constraint"):
        fair.rashomon(epsilon=0.1)


class _Stopped:
    """A set a limit stopped: what the builder returns when ``complete`` is False."""

    complete = False
    status = "time_limit"
    bound = 0.25
    optimum = lower_bound = 0.2

    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def count(self):
        return 7


def test_estimator_time_limit_is_its_own_and_a_partial_set_warns(monkeypatch):
    module = importlib.import_module("odtkit.rashomon")  # odtkit.rashomon is the function

    calls = []

    def stopped(data, **kwargs):
        calls.append(kwargs)
        return _Stopped(**kwargs)

    data = random_dataset(0, n_samples=20, n_features=3)
    est = odtkit.OptimalTreeClassifier(lam=0.01, max_depth=2, time_limit=12).fit(data.X, data.y)
    monkeypatch.setattr(module, "rashomon", stopped)
    with pytest.warns(odtkit.LimitReachedWarning, match="time_limit=12 s.*7 genuine members"):
        est.rashomon()
    assert calls[-1]["time_limit"] == 12 and calls[-1]["lam"] == 0.01
    with pytest.warns(odtkit.LimitReachedWarning):
        est.rashomon(time_limit=math.inf)
    assert calls[-1]["time_limit"] is None  # math.inf: no limit


# -- the command line ------------------------------------------------------------------------


def _run(capsys, *argv):
    code = main(["rashomon", *map(str, argv)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_cli_json_is_the_brute_force_set_over_fits_binarization(table, capsys):
    frame, path = table
    code, out, _ = _run(
        capsys, path, "--label", "y", "--lam", "0.02", "--max-depth", "2", "--epsilon", "0.5",
        "--top", "2", "--json",
    )  # fmt: skip
    assert code == 0
    payload = json.loads(out)
    # binarized as `odtkit fit` does: guessed thresholds, never every midpoint by default
    data, binarizer = binarize_frame(frame, "y", guess_thresholds=GUESS_ROUNDS)
    assert payload["binarization"]["thresholds"] == "guess"
    assert payload["feature_names"] == list(data.feature_names)
    truth = brute_force_set(data, lam=0.02, max_depth=2, epsilon=0.5)
    assert payload["count"] == len(truth) and payload["complete"] is True
    assert payload["status"] == "optimal"
    assert sum(row["count"] for row in payload["histogram"]) == len(truth)
    best = min(metrics.objective(t, data, lam=0.02) for t in truth)
    assert payload["optimum"] == pytest.approx(best, abs=1e-9)
    assert payload["bound"] == pytest.approx(1.5 * best)
    assert [t["index"] for t in payload["top"]] == [0, 1]
    for entry in payload["top"]:
        tree = Tree.from_dict(entry["tree"])
        assert _as_set([tree]) <= _as_set(truth)
        assert entry["objective"] == pytest.approx(metrics.objective(tree, data, lam=0.02))
        assert "age" in entry["text"] or "colour" in entry["text"]
    assert payload["top"][0]["objective"] == pytest.approx(best, abs=1e-9)
    assert len(payload["feature_usage"]) == data.n_features


def test_cli_text_reads_like_the_answer(table, capsys):
    _, path = table
    code, out, err = _run(
        capsys, path, "--label", "y", "--lam", "0.02", "--max-depth", "2", "--epsilon", "0.01",
        "--absolute",
    )  # fmt: skip
    assert code == 0
    assert "binarized with --thresholds guess" in err
    assert "certified" in out and "optimum + 0.01" in out
    assert "trees within the bound (the complete set)" in out
    assert "objective histogram" in out and "feature usage" in out
    assert "#0: objective" in out and "class: " in out  # the best tree, as export_text prints
    assert ("age <= " in out or "age > " in out) and "build: complete" in out


def test_cli_out_writes_the_payload_and_keeps_an_existing_file(table, tmp_path, capsys):
    _, path = table
    target = tmp_path / "set.json"
    args = [path, "--label", "y", "--max-depth", "1", "--lam", "0.02", "--out", target]
    code, _, err = _run(capsys, *args)
    assert code == 0 and "wrote" in err
    assert json.loads(target.read_text())["count"] >= 1
    code, _, err = _run(capsys, *args)
    assert code == 2 and "--force" in err


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--epsilon", "-0.1"], "--epsilon must be a finite number >= 0"),
        (["--epsilon", "nan"], "--epsilon must be a finite number >= 0"),
        (["--top", "-1"], "--top must be >= 0"),
        (["--lam", "-1"], "--lam"),
        (["--time-limit", "0"], "--time-limit"),
        (["--label", "nope"], "--label 'nope' is not a column"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(table, capsys, extra, says):
    _, path = table
    code, out, err = _run(capsys, path, "--label", "y", *extra)
    assert code == 2
    assert err.strip().startswith("odtkit rashomon: error:") and says in err
    assert len(err.strip().splitlines()) == 1


def test_cli_usage_errors_and_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["rashomon", "x.csv", "--leaves", "some"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err
    code, _, err = _run(capsys, "missing.csv")
    assert code == 2 and "no such file" in err
    with pytest.raises(SystemExit) as exc:
        main(["rashomon", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in ("--epsilon", "--absolute", "--leaves", "--top", "--lam", "--max-depth"):
        assert option in text
    for option in ("--time-limit", "--json", "--out", "--thresholds"):
        assert option in text


def test_cli_partial_set_prints_it_and_exits_3(table, capsys, monkeypatch):
    module = importlib.import_module("odtkit.rashomon")  # odtkit.rashomon is the function

    real = module.rashomon

    def stopped(data, **kwargs):
        rset = real(data, **kwargs)

        class Partial:
            def __getattr__(self, name):
                return getattr(rset, name)

            def __getitem__(self, index):
                return rset[index]

            complete = False
            status = "time_limit"

        return Partial()

    monkeypatch.setattr(module, "rashomon", stopped)
    _, path = table
    code, out, _ = _run(capsys, path, "--label", "y", "--max-depth", "1", "--lam", "0.02")
    assert code == 3
    assert "NOT the complete set" in out and "build: INCOMPLETE (time_limit)" in out


def test_the_bundled_dataset_works_too(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code, out, _ = _run(
            capsys, "monk1", "--lam", "0.05", "--max-depth", "2", "--epsilon", "0", "--json"
        )
    payload = json.loads(out)
    assert code == 0 and payload["count"] >= 1 and payload["complete"]
    assert payload["bound"] == pytest.approx(payload["optimum"])


def test_cli_partial_set_with_no_tree_yet_says_so(table, capsys, monkeypatch):
    module = importlib.import_module("odtkit.rashomon")

    class Empty(_Stopped):
        stats: dict = {}
        lower_bound = 0.1  # the optimum (0.2) not certified either

        def count(self):
            return 0

        def objective_histogram(self):
            return pd.DataFrame(columns=["misclassified", "leaves", "objective", "count"])

        def feature_usage(self):
            return pd.DataFrame({"trees": [], "share": []}).rename_axis("feature")

        def __getitem__(self, index):
            return []

    monkeypatch.setattr(module, "rashomon", lambda data, **kwargs: Empty(**kwargs))
    _, path = table
    code, out, _ = _run(capsys, path, "--label", "y", "--max-depth", "1", "--lam", "0.02")
    assert code == 3
    assert "0 trees within the bound found before the build stopped" in out
    assert "no tree listed" in out and "not certified" in out


@pytest.mark.parametrize("leaves", ["any", "majority"])
def test_estimator_set_keeps_the_fitted_weights_and_the_leaf_rule(leaves):
    from odtkit.testing import brute_force_rashomon_set

    data = random_dataset(4, n_samples=18, n_features=3, weighted=True)
    est = odtkit.OptimalTreeClassifier(lam=0.02, max_depth=2)
    est.fit(data.X, data.y, sample_weight=data.weights)
    rset = est.rashomon(epsilon=0.4, leaves=leaves)
    truth = brute_force_rashomon_set(data, lam=0.02, max_depth=2, epsilon=0.4, leaves=leaves)
    assert _as_set(rset) == _as_set(tree for tree, _ in truth)
    assert rset.leaves == leaves

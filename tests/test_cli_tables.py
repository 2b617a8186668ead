"""The CLI on a user's table (issue 22): the estimator's binarization by default, how the table
was binarized, one-line refusals of what is not a usable table, one-line warnings."""

from __future__ import annotations

import json
import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from odtkit import metrics
from odtkit.cli import build_parser, main
from odtkit.datasets import Binarizer, binarize_frame
from odtkit.methods import DEFAULT_MAX_DEPTH, DEFAULT_TIME_LIMIT, GUESS_ROUNDS


@pytest.fixture
def table(tmp_path):
    """Numeric, continuous, 0/1 and categorical columns, labels as strings."""
    rng = np.random.default_rng(3)
    n = 160
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "income": rng.normal(50, 15, n).round(2),
            "smoker": rng.integers(0, 2, n),
            "colour": rng.choice(["red", "green", "blue"], n),
        }
    )
    positive = (frame.age > 45) & (frame.colour != "red")
    frame["y"] = np.where(positive ^ (rng.random(n) < 0.05), "yes", "no")
    path = tmp_path / "mine.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- item 4: the estimator's defaults ---------------------------------------------------------


def test_fit_binarizes_the_table_as_the_estimator_does(table, capsys):
    from odtkit.estimators import OptimalTreeClassifier

    path, frame = table
    code, out, _ = _run(["fit", path, "--json"], capsys)
    payload = json.loads(out)
    assert code == 0 and payload["status"] == "optimal"
    assert payload["max_depth"] == DEFAULT_MAX_DEPTH
    assert payload["binarization"]["thresholds"] == "guess"
    X, y = frame.drop(columns="y"), frame["y"]
    estimator = OptimalTreeClassifier(max_depth=DEFAULT_MAX_DEPTH, lam=0.01).fit(X, y)
    assert payload["feature_names"] == list(estimator.binarizer_.get_feature_names_out())
    assert payload["objective"] == pytest.approx(estimator.result_.objective)


def test_breast_cancer_certifies_with_the_default_limits(tmp_path, capsys):
    # every midpoint gave 15,310 features here and the fit stopped at its limit (exit 3)
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    frame = bunch.frame.drop(columns="target")
    frame["diagnosis"] = np.asarray(bunch.target_names)[bunch.target]
    path = tmp_path / "breast_cancer.csv"
    frame.to_csv(path, index=False)
    code, out, err = _run(["fit", path, "--label", "diagnosis"], capsys)
    assert code == 0 and "status optimal" in out
    summary = [line for line in err.splitlines() if line.startswith("binarized")]
    assert len(summary) == 1 and "30 numeric columns" in summary[0]
    n_features = int(out.split(" binary features")[0].rsplit(" ", 1)[1])
    assert n_features < 100


def test_the_summary_goes_to_stderr_in_text_and_into_the_payload_in_json(table, capsys):
    path, _ = table
    code, out, err = _run(["fit", path, "--max-depth", "2"], capsys)
    assert code == 0
    assert "binarized with --thresholds guess" in err and "binarized" not in out
    assert "1 categorical column into 3 features (colour 3)" in err
    assert "1 0/1 column into 1 feature (smoker 1)" in err
    code, out, err = _run(["fit", path, "--max-depth", "2", "--json"], capsys)
    payload = json.loads(out)  # stdout is only the JSON
    assert "binarized" not in err
    columns = {c["name"]: c for c in payload["binarization"]["columns"]}
    assert columns["colour"]["kind"] == "category"
    assert columns["colour"]["categories"] == ["blue", "green", "red"]
    assert sum(c["n_features"] for c in columns.values()) == len(payload["feature_names"])
    code, out, err = _run(["compare", "--dataset", path, "--methods", "dp", "--json"], capsys)
    assert code == 0 and json.loads(out)["binarization"]["thresholds"] == "guess"
    code, out, err = _run(["compare", "--dataset", path, "--methods", "dp"], capsys)
    assert code == 0 and "binarized with --thresholds guess" in err


@pytest.mark.parametrize(
    ("option", "binarizer"),
    [
        (["--thresholds", "all"], Binarizer()),
        (["--thresholds", "2"], Binarizer(max_thresholds=2)),
        (["--thresholds", "guess"], Binarizer(guess_thresholds=GUESS_ROUNDS)),
    ],
)
def test_thresholds_option(table, capsys, option, binarizer):
    path, frame = table
    code, out, _ = _run(["fit", path, "--max-depth", "1", "--json", *option], capsys)
    assert code == 0
    binarizer.fit(frame.drop(columns="y"), frame["y"])
    names = json.loads(out)["feature_names"]
    if option[1] == "all":  # the exact search: only the every-midpoint features its tree tests
        assert set(names) <= set(binarizer.get_feature_names_out())
        assert json.loads(out)["binarization"]["exact_search"]
    else:
        assert names == list(binarizer.get_feature_names_out())


def test_max_thresholds_still_works_with_a_deprecation_line(table, capsys):
    path, _ = table
    code, out, err = _run(["fit", path, "--max-depth", "1", "--max-thresholds", "2"], capsys)
    _, reference, _ = _run(["fit", path, "--max-depth", "1", "--thresholds", "2"], capsys)
    untimed = re.compile(r"time [0-9.]+ s")  # the run times differ, nothing else may
    assert code == 0 and untimed.sub("", out) == untimed.sub("", reference)
    assert "odtkit: warning: --max-thresholds is deprecated; use --thresholds 2" in err
    code, _, err = _run(["fit", path, "--thresholds", "all", "--max-thresholds", "2"], capsys)
    assert code == 2 and "give only one" in err


def test_fit_and_compare_share_the_default_depth_and_time_limit():
    parser, _ = build_parser()
    fit = parser.parse_args(["fit", "monk1"])
    compare = parser.parse_args(["compare"])
    assert fit.max_depth == compare.max_depth == DEFAULT_MAX_DEPTH
    assert fit.time_limit == DEFAULT_TIME_LIMIT


def test_columns_and_drop_choose_the_features(table, capsys):
    path, _ = table
    code, out, _ = _run(["fit", path, "--columns", "age,colour", "--json"], capsys)
    sources = {c["name"] for c in json.loads(out)["binarization"]["columns"]}
    assert code == 0 and sources == {"age", "colour"}
    code, out, _ = _run(["fit", path, "--drop", "colour,income", "--json"], capsys)
    sources = {c["name"] for c in json.loads(out)["binarization"]["columns"]}
    assert code == 0 and sources == {"age", "smoker"}


# -- item 5: one line, exit 2, naming the argument --------------------------------------------


def _files(tmp_path, frame):
    (tmp_path / "notes.txt").write_text(
        "These are my notes about the data.\nNothing tabular here.\n"
    )
    frame.to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "model.pkl").write_bytes(pickle.dumps({"a": 1}))
    frame.assign(y="same").to_csv(tmp_path / "one_class.csv", index=False)
    blanks = frame.copy()
    blanks.loc[[1, 3], "y"] = np.nan
    blanks.to_csv(tmp_path / "blank_labels.csv", index=False)
    frame.assign(y=np.where(frame.y == "yes", "good", "bad")).to_csv(
        tmp_path / "words.csv", index=False
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fit", "monk1", "--method", "rbinoct", "--backend", "gurobi"], "--backend 'gurobi'"),
        (["fit", "data.csv", "--out", "/nonexistent/dir/t.json"], "--out '/nonexistent/dir"),
        (["prune", "notes.txt", "data.csv", "--lam", "0.1"], "FOREST: notes.txt is a text"),
        (["prune", "data.csv", "data.csv", "--lam", "0.1"], "FOREST: data.csv is a text"),
        (["prune", "data.csv", "model.pkl", "--lam", "0.1"], "look swapped"),
        (
            ["compare", "--dataset", "words.csv", "--fairness", "sp", "--protected", "colour"],
            "--positive-class '1' is not a class",
        ),
        (["fit", "notes.txt"], "DATA: notes.txt is not a table"),
        (["fit", "blank_labels.csv"], "label column 'y' has 2 blank cells (lines 3, 5)"),
        (["fit", "model.pkl"], "DATA: model.pkl is not a text table (a pickle?)"),
        (["fit", "nosuchfile.csv"], "DATA 'nosuchfile.csv': no such file"),
        (["fit", "data.csv", "--drop", "nope"], "--drop names nope"),
        (["fit", "data.csv", "--label", "nope"], "--label 'nope' is not a column"),
        (["fit", "data.csv", "--columns", "age", "--drop", "income"], "--columns or --drop"),
        (["fit", "monk1", "--drop", "f0"], "bundled dataset"),
        (["fit", "data.csv", "--thresholds", "some"], "--thresholds"),
    ],
)
def test_every_mistake_is_one_line_and_exit_two(
    tmp_path, table, monkeypatch, capsys, argv, message
):
    _files(tmp_path, table[1])
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own checks
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_out_is_checked_before_the_data_is_even_read(table, monkeypatch, capsys):
    import odtkit.cli

    def no_loading(*args, **kwargs):
        raise AssertionError("the data was loaded before --out was checked")

    monkeypatch.setattr(odtkit.cli, "_load", no_loading)
    code = main(["fit", str(table[0]), "--out", "/nonexistent/dir/t.json"])
    assert code == 2 and "does not exist" in capsys.readouterr().err


def test_blank_feature_cells_reach_the_binarizer(table, tmp_path, monkeypatch, capsys):
    # missing feature values are the Binarizer's to handle: the CLI neither refuses them nor
    # routes the table around the Binarizer
    import odtkit.datasets

    path, frame = table
    frame = frame.copy()
    frame.loc[[0, 5, 9], "income"] = np.nan
    frame.loc[[2], "colour"] = np.nan
    frame.to_csv(path, index=False)
    seen = []

    def spy(frame, label, **kwargs):
        seen.append(int(frame.drop(columns=label).isna().sum().sum()))
        return binarize_frame(frame, label, **kwargs)

    monkeypatch.setattr(odtkit.datasets, "binarize_frame", spy)
    code = main(["fit", str(path), "--max-depth", "2"])
    err = capsys.readouterr().err
    assert seen == [4]
    if code == 2:  # a Binarizer without missing-value support refuses in one line
        assert "income" in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1
    else:
        assert code == 0


# -- item 7: warnings a person can read -------------------------------------------------------


def test_a_warning_is_one_line_without_the_source_echo(capsys):
    before = warnings.showwarning
    code = main(["fit", "monk1", "--lam", "0.9", "--max-depth", "2"])
    err = capsys.readouterr().err
    assert code == 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("odtkit: warning: "), err
    assert ".py:" not in err and "search_tree(" not in err
    assert warnings.showwarning is before


def test_repeated_warnings_print_once(monkeypatch, capsys):
    import odtkit.cli

    def twice(args):
        for _ in range(3):
            warnings.warn("the same thing\n  again", UserWarning, stacklevel=1)
        warnings.warn("another thing", RuntimeWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(odtkit.cli, "_datasets", twice)
    assert main(["datasets"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "odtkit: warning: the same thing again",
        "odtkit: warning: another thing",
    ]


def test_the_objective_of_a_fit_is_the_metric_of_its_tree(table, capsys):
    # the tree of the payload, on the table binarized the same way, scores the objective
    from odtkit.tree import Tree

    path, frame = table
    code, out, _ = _run(["fit", path, "--json"], capsys)
    payload = json.loads(out)
    data, _ = binarize_frame(frame, "y", guess_thresholds=GUESS_ROUNDS)
    tree = Tree.from_dict(payload["tree"])
    assert metrics.objective(tree, data, lam=0.01) == pytest.approx(payload["objective"])

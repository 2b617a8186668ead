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
from odtkit.tree import Tree


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
    X, y = frame.drop(columns="y"), frame["y"]
    for extra, policy in (([], "auto"), (["--thresholds", "guess"], "guess")):
        code, out, _ = _run(["fit", path, "--json", *extra], capsys)
        payload = json.loads(out)
        assert code == 0 and payload["status"] == "optimal"
        assert payload["max_depth"] == DEFAULT_MAX_DEPTH
        assert payload["binarization"]["thresholds"] == policy
        estimator = OptimalTreeClassifier(max_depth=DEFAULT_MAX_DEPTH, lam=0.01, thresholds=policy)
        estimator.fit(X, y)
        assert payload["certificate"] == estimator.certificate_
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
    code, out, err = _run(["fit", path, "--max-depth", "2", "--thresholds", "guess"], capsys)
    assert code == 0
    assert "binarized with --thresholds guess" in err and "binarized" not in out
    assert "1 categorical column into 3 features (colour 3)" in err
    assert "1 0/1 column into 1 feature (smoker 1)" in err
    code, out, err = _run(
        ["fit", path, "--max-depth", "2", "--thresholds", "guess", "--json"], capsys
    )
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
    import odtkit.cli._tables

    def no_loading(*args, **kwargs):
        raise AssertionError("the data was loaded before --out was checked")

    monkeypatch.setattr(odtkit.cli._tables, "_load", no_loading)
    code = main(["fit", str(table[0]), "--out", "/nonexistent/dir/t.json"])
    assert code == 2 and "does not exist" in capsys.readouterr().err


def test_blank_feature_cells_reach_the_binarizer(table, tmp_path, monkeypatch, capsys):
    # missing feature values are the Binarizer's to handle: the CLI neither refuses them nor
    # routes the table around the Binarizer (the one front door, odtkit.Task.from_table)
    from odtkit.task import Task

    path, frame = table
    frame = frame.copy()
    frame.loc[[0, 5, 9], "income"] = np.nan
    frame.loc[[2], "colour"] = np.nan
    frame.to_csv(path, index=False)
    seen = []

    real = Task.from_table.__func__

    def spy(cls, X, y, **kwargs):
        seen.append(int(X.isna().sum().sum()))
        return real(cls, X, y, **kwargs)

    monkeypatch.setattr(Task, "from_table", classmethod(spy))
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
    import odtkit.cli._datasets

    def twice(args):
        for _ in range(3):
            warnings.warn("the same thing\n  again", UserWarning, stacklevel=1)
        warnings.warn("another thing", RuntimeWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(odtkit.cli._datasets, "run", twice)
    assert main(["datasets"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "odtkit: warning: the same thing again",
        "odtkit: warning: another thing",
    ]


def test_the_objective_of_a_fit_is_the_metric_of_its_tree(table, capsys):
    # the tree of the payload, on the table binarized the same way, scores the objective
    from odtkit.tree import Tree

    path, frame = table
    code, out, _ = _run(["fit", path, "--thresholds", "guess", "--json"], capsys)
    payload = json.loads(out)
    data, _ = binarize_frame(frame, "y", guess_thresholds=GUESS_ROUNDS)
    tree = Tree.from_dict(payload["tree"])
    assert metrics.objective(tree, data, lam=0.01) == pytest.approx(payload["objective"])


# -- issue 37: outside tables as TSV, number-like text, the reading stored for predict -----------


def _outside_tables():
    """Real tables bundled with scikit-learn, each with a text column whose cells hold spaces
    (the label of iris: 'Iris setosa'), a blank cell and a text cell padded with spaces."""
    from sklearn.datasets import load_iris, load_wine

    iris = load_iris(as_frame=True)
    frame = iris.frame.drop(columns="target")
    frame["species"] = ["Iris " + iris.target_names[t] for t in iris.target]
    frame["size class"] = np.where(frame["petal length (cm)"] > 4, "very large", "rather small")
    frame.loc[3, "size class"] = None
    yield "iris", frame, "species"
    wine = load_wine(as_frame=True)
    frame = wine.frame.drop(columns="target")
    frame["cultivar"] = [f"cultivar {t}" for t in wine.target]
    frame["hue word"] = np.where(frame["hue"] > 1, "bright red", "deep  purple")
    frame.loc[5, "hue word"] = "bright red "  # surrounding spaces: one note, then stripped
    yield "wine", frame, "cultivar"


@pytest.mark.parametrize("index", [0, 1])
def test_outside_tables_saved_as_tsv_fit_as_their_csv(tmp_path, capsys, index):
    name, frame, label = list(_outside_tables())[index]
    csv_path, tsv_path = tmp_path / f"{name}.csv", tmp_path / f"{name}.tsv"
    frame.to_csv(csv_path, index=False)
    frame.to_csv(tsv_path, index=False, sep="\t")
    payloads = []
    for path in (csv_path, tsv_path):
        argv = ["fit", path, "--label", label, "--thresholds", "guess", "--json"]
        code, out, err = _run(argv, capsys)
        assert code in (0, 3) and "Traceback" not in err
        payloads.append(json.loads(out))
    by_csv, by_tsv = payloads
    for key in ("objective", "feature_names", "tree", "classes", "binarization"):
        assert by_tsv[key] == by_csv[key], key
    assert by_tsv["reading"]["sep"] == "\t" and by_csv["reading"]["sep"] == ","
    # the fitted table is the CSV as pandas reads it (text stripped): the same objective
    clean = frame.copy()
    clean[clean.columns[-1]] = clean[clean.columns[-1]].str.strip()
    data, _ = binarize_frame(clean, label, guess_thresholds=GUESS_ROUNDS)
    assert list(data.feature_names) == by_tsv["feature_names"]
    tree = Tree.from_dict(by_tsv["tree"])
    assert by_tsv["objective"] == pytest.approx(metrics.objective(tree, data, lam=0.01))
    assert len(data.classes) == len(by_tsv["classes"]) == 3


def test_a_tab_separated_file_with_spaces_and_blank_cells_keeps_its_columns(tmp_path, capsys):
    # issue 37 item 1: 'age' became the index and the blank cells surfaced as blank labels
    rows = ["age\tcolour\ty"] + [
        f"{20 + i}\t{['dark red', 'light blue', ''][i % 3]}\t{'yes' if i % 2 else 'no'}"
        for i in range(30)
    ]
    path = tmp_path / "people.tsv"
    path.write_text("\n".join(rows) + "\n")
    code, out, err = _run(["fit", path, "--json"], capsys)
    payload = json.loads(out)
    assert code == 0 and payload["label"] == "y" and payload["classes"] == ["no", "yes"]
    columns = {c["name"]: c for c in payload["binarization"]["columns"]}
    assert set(columns) == {"age", "colour"}
    assert columns["colour"]["categories"] == ["dark red", "light blue"]
    assert columns["colour"]["blank_cells"] is True


NUMBER_TEXT = (
    'income,score,rating,joined,y\n"1,200",3.5,?,2020-01-05,no\n"2,300",2.5,4,2020-02-05,yes\n'
    '"12,000",1.5,5,2021-01-01,yes\n"999",1,6,2022-03-03,no\n"1,000",0,7,2022-03-04,no\n'
    '"5,500",2,8,2022-05-04,yes\n'
)


def test_number_like_text_is_named_per_column_with_the_option_that_parses_it(tmp_path, capsys):
    path = tmp_path / "money.csv"
    path.write_text(NUMBER_TEXT)
    code, _, err = _run(["fit", path, "--max-depth", "1"], capsys)
    assert code == 0
    notes = [line for line in err.splitlines() if line.startswith("odtkit: warning:")]
    assert len(notes) == 3
    assert "column 'income'" in notes[1] and "--thousands ," in notes[1]
    assert "column 'rating'" in notes[2] and "--na-values ?" in notes[2]
    assert "column 'joined' looks like dates" in notes[0] and "--dates as-numbers" in notes[0]
    summary = next(line for line in err.splitlines() if line.startswith("binarized"))
    assert "3 categorical columns" in summary


def test_predict_reads_new_rows_as_the_tree_was_fitted(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "money.csv").write_text(NUMBER_TEXT)
    options = ["--thousands", ",", "--na-values", "?", "--dates", "as-numbers"]
    argv = ["fit", "money.csv", "--max-depth", "2", "--lam", "0", "--out", "t.json", "--json"]
    code, out, err = _run([*argv, *options], capsys)
    payload = json.loads(out)
    assert code == 0 and payload["train_accuracy"] == 1.0
    assert payload["reading"] == {
        "sep": ",",
        "na_values": ["?"],
        "decimal": ".",
        "thousands": ",",
        "dates": "as-numbers",
        "date_units": {"joined": "days"},
    }
    summary = payload["binarization"]["summary"]
    assert "4 numeric columns" in summary
    assert "column 'joined' read as days since 1970-01-01 (--dates as-numbers)" in err
    # predict, given no option, reads the rows as fit did: the same (perfect) predictions
    code, out, err = _run(["predict", "t.json", "money.csv"], capsys)
    assert code == 0 and "accuracy 1.0000 on the 6 rows" in err
    assert out.splitlines()[1:] == ["no", "yes", "yes", "no", "no", "yes"]
    # a tree file of an older odtkit has no reading: loaded, read with the defaults
    older = json.loads((tmp_path / "t.json").read_text())
    del older["reading"]
    (tmp_path / "old.json").write_text(json.dumps(older))
    (tmp_path / "plain.csv").write_text("income,score,rating,joined,y\n1200,3.5,5,18266,no\n")
    code, out, err = _run(["predict", "old.json", "plain.csv"], capsys)
    assert code == 0 and out.splitlines()[0] == "prediction"

"""Hostile input to the command line (issue 28): one line naming the argument and exit 2, or a
result re-verified by :mod:`odtkit.metrics`; never a traceback, never code run from a file.

Each case is a plain data row ``(argv, exit code, what stderr says)`` over the files
:func:`files` writes; the inputs are built here, in the test's own folder.
"""

from __future__ import annotations

import json
import pickle
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from odtkit import datasets, metrics
from odtkit.cli import main
from odtkit.tree import Tree

MARKER = "MARKER"


class _Payload:
    """Unpickling this runs ``touch MARKER``: a forest file must never do that."""

    def __reduce__(self):
        import os

        return (os.system, (f"touch {MARKER}",))


@pytest.fixture
def files(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 5, 40),
            "b": rng.normal(size=40).round(2),
            "y": rng.integers(0, 2, 40),
        }
    )
    frame.to_csv(tmp_path / "data.csv", index=False)
    frame.to_csv(tmp_path / "headerless.csv", index=False, header=False)
    frame.iloc[:1].to_csv(tmp_path / "one_row.csv", index=False)
    frame[["y"]].to_csv(tmp_path / "label_only.csv", index=False)
    frame.assign(a=1, b=2.5).to_csv(tmp_path / "constant.csv", index=False)
    (tmp_path / "notes.txt").write_text("These are my notes.\nNothing tabular here.\n")
    # issue 37: lines longer than the header, names given twice, an unnamed column
    (tmp_path / "long.csv").write_text("a,b,y\n1,2,0\n3,4,1\n5,dark,red,0\n")
    (tmp_path / "dup.csv").write_text("a,y,y\n1,0,0\n2,1,1\n3,0,0\n")
    (tmp_path / "unnamed.csv").write_text("a,,y\n1,2,0\n3,4,1\n5,6,0\n")
    fair = frame.assign(h=np.arange(40) % 2, one=1)[["a", "b", "h", "one", "y"]]
    fair.to_csv(tmp_path / "fair.csv", index=False)
    (tmp_path / "empty.skops").write_bytes(b"")
    (tmp_path / "evil.pkl").write_bytes(pickle.dumps(_Payload()))
    (tmp_path / "evil0.pkl").write_bytes(pickle.dumps(_Payload(), protocol=0))
    (tmp_path / "outdir").mkdir()
    sio = pytest.importorskip("skops.io", reason="skops: the optional extra odtkit[skops] (in dev)")
    from sklearn.ensemble import RandomForestClassifier

    forest = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0)
    forest.fit(frame[["a", "b"]], frame.y)
    raw = sio.dumps(forest)
    (tmp_path / "forest.skops").write_bytes(raw)
    (tmp_path / "truncated.skops").write_bytes(raw[: len(raw) // 2])
    (tmp_path / "truncated.pkl").write_bytes(pickle.dumps(forest)[:200])
    (tmp_path / "other.skops").write_bytes(sio.dumps({"model": forest, "hook": pickle.loads}))
    (tmp_path / "dict.skops").write_bytes(sio.dumps({"a": 1}))
    monkeypatch.chdir(tmp_path)
    assert main(["fit", "data.csv", "--max-depth", "1", "--out", "tree.json"]) == 0
    return tmp_path


PRUNE = ["--lam", "0.01"]
FAIR = ["compare", "--dataset", "fair.csv", "--methods", "dp", "--fairness"]
HUGE = ["99999999999999999999", str(2**31), str(2**63)]

#: (argv, exit code, a fragment of stderr); exit 2 rows print exactly one line
CASES = [
    # item 2: no code from a forest file; empty, truncated and text forests
    (["prune", "evil.pkl", "data.csv", *PRUNE], 2, "FOREST: evil.pkl is a pickle"),
    (["prune", "evil0.pkl", "data.csv", *PRUNE], 2, "FOREST: evil0.pkl is a text file"),
    (["prune", "forest.skops", "data.csv", "--trust-pickle", *PRUNE], 0, ""),
    (["prune", "empty.skops", "data.csv", *PRUNE], 2, "FOREST: empty.skops is empty"),
    (["prune", "truncated.skops", "data.csv", *PRUNE], 2, "FOREST: truncated.skops is not"),
    (["prune", "truncated.pkl", "data.csv", *PRUNE], 2, "FOREST: truncated.pkl is a pickle"),
    (
        ["prune", "truncated.pkl", "data.csv", "--trust-pickle", *PRUNE],
        2,
        "FOREST: truncated.pkl cannot be unpickled",
    ),
    (["prune", "notes.txt", "data.csv", *PRUNE], 2, "FOREST: notes.txt is a text file"),
    (["prune", "data.csv", "data.csv", *PRUNE], 2, "FOREST: data.csv is a text file"),
    (["prune", "other.skops", "data.csv", *PRUNE], 2, "FOREST: other.skops holds types"),
    (["prune", "dict.skops", "data.csv", *PRUNE], 2, "FOREST: dict.skops: ensemble must be"),
    # item 3 (issue item 5): a first row of numbers is data, not a header
    (["fit", "headerless.csv"], 2, "pass --no-header"),
    (["compare", "--dataset", "headerless.csv"], 2, "pass --no-header"),
    (["predict", "tree.json", "headerless.csv"], 2, "pass --no-header"),
    (["prune", "forest.skops", "headerless.csv", *PRUNE], 2, "pass --no-header"),
    (["fit", "monk1", "--no-header"], 2, "--no-header are for a CSV file"),
    (["fit", "headerless.csv", "--no-header", "--label", "y"], 2, "--label 'y' is not a col"),
    # item 4: tracebacks where one line is due
    *[
        # the binarized table's clamp (the exact search, fit's default, clamps by its rows)
        (
            ["fit", "data.csv", "--max-depth", d, "--thresholds", "guess", "--json"],
            0,
            f"--max-depth {d} is more",
        )
        for d in HUGE
    ],
    *[
        (
            [
                "compare",
                "--dataset",
                "data.csv",
                "--max-depth",
                d,
                "--methods",
                "dp",
                "--json",
            ],
            0,
            "--max-depth",
        )
        for d in HUGE
    ],
    (["fit", "data.csv", "--max-depth", "1e400"], 2, "--max-depth"),
    (["compare", "--dataset", "data.csv", "--methods", ","], 2, "--methods ',' has an empty"),
    (["compare", "--dataset", "data.csv", "--methods", ""], 2, "--methods '' has an empty"),
    (["compare", "--dataset", "data.csv", "--methods", "dp,,flowoct"], 2, "--methods 'dp,,"),
    (["compare", "--dataset", "data.csv", "--backends", ","], 2, "--backends ',' has an empty"),
    (
        ["compare", "--dataset", "data.csv", "--fairness", "sp", "--protected", "a"]
        + ["--positive-class", "7"],
        2,
        "--positive-class '7' is not a class of the label (classes: 0, 1)",
    ),
    (
        ["compare", "--dataset", "monk1", "--fairness", "sp", "--protected", "a1_1"]
        + ["--positive-class", "yes"],
        2,
        "--positive-class 'yes' is not a class of the label (classes: 0, 1)",
    ),
    (["fit", "one_row.csv"], 2, "DATA: one_row.csv is not a table (1 row(s)"),
    (["compare", "--dataset", "one_row.csv"], 2, "--dataset: one_row.csv is not a table (1 r"),
    (["fit", "label_only.csv"], 2, "DATA: label_only.csv is not a table (1 column(s)"),
    (["compare", "--dataset", "label_only.csv"], 2, "--dataset: label_only.csv is not a table"),
    (["fit", "data.csv", "--drop", "a,b"], 2, "DATA: data.csv has no feature column left"),
    (["compare", "--dataset", "constant.csv"], 2, "--dataset: constant has 0 binary features"),
    (["compare", "--dataset", "constant.csv", "--methods", "dp", "--json"], 0, ""),
    (["fit", "constant.csv", "--method", "flowoct", "--json"], 0, ""),
    (["fit", "data.csv", "--out", "nodir/t.json"], 2, "--out 'nodir/t.json': directory 'nodir"),
    (["fit", "data.csv", "--out", "outdir"], 2, "--out 'outdir' is a directory"),
    (["prune", "forest.skops", "data.csv", *PRUNE, "--out", "nodir/p"], 2, "directory 'nodir'"),
    (["prune", "forest.skops", "data.csv", *PRUNE, "--out", "outdir"], 2, "is a directory"),
    (["predict", "tree.json", "data.csv", "--out", "outdir"], 2, "is a directory"),
    (["fit", "data.csv", "--out", ""], 2, "--out '': give a file name"),
    # issue 37 item 1: a line longer than the header is named, never a shifted table; item 4:
    # a name given twice in the header is refused; by every command that reads a table
    *[
        (argv, 2, message)
        for data, message in (
            ("long.csv", "long.csv: 1 line with more fields than the 3 of the first line (line 4"),
            ("dup.csv", "dup.csv: the header row names a column twice: 'y' (columns 2, 3)"),
        )
        for argv in (
            ["fit", data],
            ["compare", "--dataset", data],
            ["rashomon", data],
            ["predict", "tree.json", data],
            ["prune", "forest.skops", data, *PRUNE],
        )
    ],
    # item 5: an empty --label, an unnamed one
    (["fit", "data.csv", "--label", ""], 2, "--label '': give the label column's name"),
    (["fit", "data.csv", "--label", " "], 2, "--label ' ': give the label column's name"),
    (["compare", "--dataset", "data.csv", "--label", ""], 2, "--label '': give the label"),
    (["rashomon", "data.csv", "--label", ""], 2, "--label '': give the label"),
    (["prune", "forest.skops", "data.csv", "--label", "", *PRUNE], 2, "--label '': give"),
    (["fit", "unnamed.csv", "--label", "Unnamed: 1"], 2, "has no name in the header row"),
    # item 6: the reading options, checked
    (["fit", "data.csv", "--decimal", "ab"], 2, "--decimal must be one punctuation character"),
    (["fit", "data.csv", "--thousands", "7"], 2, "--thousands must be one punctuation char"),
    (["fit", "data.csv", "--decimal", ",", "--thousands", ","], 2, "--thousands and --decimal"),
    (["predict", "tree.json", "data.csv", "--decimal", "xy"], 2, "--decimal must be one"),
    (["fit", "data.csv", "--dates", "epoch"], 2, "--dates: invalid choice: 'epoch'"),
    # item 7: fairness options, one line each
    *[
        (FAIR + options, 2, message)
        for options, message in (
            (["sp", "--protected", "one"], "--protected attribute 'one' has a single value"),
            (["csp", "--legit", "h", "--protected", "h"], "--legit 'h' is also --protected"),
            (["sp", "--protected", "y"], "--protected 'y' is the label column of fair.csv"),
            (["csp", "--protected", "h", "--legit", "y"], "--legit 'y' is the label column"),
            (["sp", "--protected", "h,h"], "--protected names h twice"),
            (["csp", "--protected", "h", "--legit", "a,b"], "--legit 'a,b': give one column"),
        )
    ],
]


@pytest.mark.parametrize(("argv", "code", "message"), CASES)
def test_hostile_input(files, capsys, argv, code, message):
    capsys.readouterr()
    try:
        got = main(argv)
    except SystemExit as exc:  # argparse's own checks
        got = exc.code
    captured = capsys.readouterr()
    err = captured.err
    assert not (files / MARKER).exists(), "a forest file ran code"
    assert got == code, err
    assert message in err and "Traceback" not in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err
    elif "--json" in argv:
        # a result: the printed objective is the metric of the printed tree
        payload = json.loads(captured.out)
        if "rows" in payload:
            best = Tree.from_dict(payload["best_tree"])
            objective = min(r["objective"] for r in payload["rows"])
        else:
            best, objective = Tree.from_dict(payload["tree"]), payload["objective"]
        data = pd.read_csv(argv[argv.index("--dataset") + 1] if "rows" in payload else argv[1])
        n_features = len(payload["feature_names"])
        assert best.depth <= n_features and payload["max_depth"] in (max(n_features, 1), 3)
        assert objective == pytest.approx(_objective(best, payload, data))
        if message:
            assert len(err.strip().splitlines()) == 1, err  # the one warning line


def _objective(tree: Tree, payload: dict, frame: pd.DataFrame) -> float:
    """The objective of ``tree`` by :mod:`odtkit.metrics`, on the table binarized as the
    command did (the binary features' names and classes are in the payload)."""
    from odtkit.datasets import binarize_frame
    from odtkit.methods import GUESS_ROUNDS

    dataset, _ = binarize_frame(frame, "y", guess_thresholds=GUESS_ROUNDS)
    assert list(dataset.feature_names) == list(payload["feature_names"])
    return metrics.objective(tree, dataset, lam=0.01)


def test_a_crafted_pickle_is_not_loaded_and_runs_nothing(files, capsys):
    assert main(["prune", "evil.pkl", "data.csv", *PRUNE]) == 2
    err = capsys.readouterr().err
    assert "--trust-pickle" in err and "skops" in err
    assert not (files / MARKER).exists()


def test_no_header_keeps_every_row_and_names_columns_by_position(files, capsys):
    argv = ["fit", "headerless.csv", "--no-header", "--thresholds", "guess", "--json"]
    assert main([*argv, "--out", "t0.json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["label"] == "2"  # the last column, by its 0-based position
    frame = pd.read_csv(files / "headerless.csv", header=None)
    frame.columns = ["0", "1", "2"]
    data, _ = datasets.binarize_frame(frame, "2", guess_thresholds=40)
    assert data.n_samples == 40  # the first row is data, not a header
    tree = Tree.from_dict(payload["tree"])
    assert payload["objective"] == pytest.approx(metrics.objective(tree, data, lam=0.01))
    assert main([*argv, "--label", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["objective"] == payload["objective"]
    # predict reads a headerless table the same way, and the label column is found by position
    assert main(["predict", "t0.json", "headerless.csv", "--no-header"]) == 0
    captured = capsys.readouterr()
    accuracy = metrics.accuracy(tree, data)
    assert f"accuracy {accuracy:.4f} on the 40 rows" in captured.err
    argv = ["compare", "--dataset", "headerless.csv", "--no-header", "--methods", "dp,pathoct"]
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["certified_optimum"] == pytest.approx(
        payload["objective"]
    )


def test_blank_labels_of_a_headerless_file_are_named_by_their_line(files, capsys):
    frame = pd.read_csv(files / "data.csv").astype({"y": "float"})
    frame.loc[[0, 3], "y"] = np.nan  # lines 1 and 4: no header row above them
    frame.to_csv(files / "blank_headerless.csv", index=False, header=False)
    assert main(["fit", "blank_headerless.csv", "--no-header"]) == 2
    assert "2 blank cells (lines 1, 4)" in capsys.readouterr().err


def test_a_header_of_positions_is_a_header(files, capsys):
    # what pandas writes for an unnamed array: 0,1,2 names the columns, it is no data row
    frame = pd.read_csv(files / "data.csv")
    frame.columns = ["0", "1", "2"]
    frame.to_csv(files / "positions.csv", index=False)
    assert main(["fit", "positions.csv", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["label"] == "2"


def test_help_says_a_pickle_runs_code(capsys):
    with pytest.raises(SystemExit):
        main(["prune", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--trust-pickle" in text and "skops" in text and "RUNS ANY CODE" in text


#: the values each column option takes in the fuzz below (None: not given)
FUZZ = {
    "--protected": [None, "h", "one", "y", "h,a", "nope"],
    "--legit": [None, "h", "a", "y"],
    "--label": [None, "h", "y", ""],
    "--columns": [None, "a", "h"],
    "--drop": [None, "h", "a"],
}


def test_column_options_in_every_combination_end_in_an_answer_or_one_line(files, capsys):
    """Issue 37 item 7: every combination of --protected/--legit/--label/--columns/--drop over
    a small table ends in an answer (exit 0 or 3) or one line naming an option (exit 2)."""
    import itertools

    base = ["compare", "--dataset", "fair.csv", "--methods", "dp", "--max-depth", "1"]
    base += ["--thresholds", "2"]
    seen = Counter()
    for values in itertools.product(*FUZZ.values()):
        argv = list(base)
        for option, value in zip(FUZZ, values, strict=True):
            if value is not None:
                argv += [option, value]
        if values[0] is not None:
            argv += ["--fairness", "sp" if values[1] is None else "csp"]
        code = main(argv)
        err = capsys.readouterr().err
        assert code in (0, 2, 3) and "Traceback" not in err, (argv, err)
        if code == 2:
            lines = [line for line in err.splitlines() if "warning" not in line]
            assert len(lines) == 1 and lines[0].startswith("odtkit compare: error: "), argv
            assert "--" in lines[0], lines  # it names an option
        seen[code] += 1
    assert seen[0] and seen[2]  # both outcomes are exercised

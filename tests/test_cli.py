"""The console script: ``odtkit datasets``, ``fit``, ``compare`` and ``prune`` as a user runs them.

Exit codes (module docstring of ``odtkit.cli``): 0 optimal, 1 no answer, 2 bad input, 3 a limit
stopped the work, 130 interrupted.
"""

from __future__ import annotations

import json
import pickle
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from odtkit import datasets, metrics
from odtkit.cli import main
from odtkit.methods import GUESS_ROUNDS
from odtkit.tree import Tree


@pytest.fixture
def user_csv(tmp_path):
    """A user's table: a numeric, a continuous and a categorical column, labels as strings."""
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "income": rng.normal(50, 15, n).round(1),
            "colour": rng.choice(["red", "green", "blue"], n),
        }
    )
    positive = (frame.age > 40) & (frame.colour != "red")
    frame["outcome"] = np.where(positive ^ (rng.random(n) < 0.08), "yes", "no")
    path = tmp_path / "mine.csv"
    frame.to_csv(path, index=False)
    return path


def test_datasets_command_lists_every_bundled_set(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for name in ("monk1", "monk2", "monk3", "tic-tac-toe", "car-evaluation", "balance-scale"):
        assert name in out
    assert "0:62 / 1:62" in out  # monk1 class balance


def test_unknown_command_exits_with_usage(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2


def test_version_and_help_show_defaults(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and "odtkit 0." in capsys.readouterr().out
    for command, default in (("fit", "(default: 3)"), ("compare", "(default: 10.0)")):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert default in capsys.readouterr().out


def test_fit_on_a_users_csv_prints_a_certified_tree_and_writes_it(user_csv, tmp_path, capsys):
    out_file = tmp_path / "tree.json"
    code = main(
        # the guessed thresholds: the saved tree re-measured on load_file's guess below
        ["fit", str(user_csv), "--label", "outcome", "--max-depth", "2", "--thresholds", "guess"]
        + ["--out", str(out_file)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "status optimal" in out and "colour" in out and "age" in out
    assert "age <= " in out or "age > " in out  # tests on the raw columns, via the Binarizer
    saved = json.loads(out_file.read_text())
    tree = Tree.from_dict(saved["tree"])
    assert saved["classes"] == ["no", "yes"] and saved["status"] == "optimal"
    assert saved["objective"] == pytest.approx(saved["lower_bound"])
    # the saved tree is the answer: re-measured on the binarized data it scores the objective
    data = datasets.load_file(
        user_csv, label="outcome", binarize=True, guess_thresholds=GUESS_ROUNDS
    )
    assert list(data.feature_names) == saved["feature_names"]
    assert metrics.objective(tree, data, lam=0.01) == pytest.approx(saved["objective"])


def test_fit_json_and_exit_code_three_at_a_limit(user_csv, capsys):
    code = main(
        [
            "fit",
            str(user_csv),
            "--max-depth",
            "none",
            "--lam",
            "0.0005",
            "--time-limit",
            "0.3",
            "--thresholds",
            "all",  # every midpoint: a problem the limit stops
            "--json",
        ]
    )
    payload = json.loads(capsys.readouterr().out)
    assert code == 3 and payload["status"] == "time_limit"
    assert payload["lower_bound"] <= payload["objective"] and payload["tree"] is not None


def test_fit_with_a_mip_method(capsys):
    assert main(["fit", "monk1", "--method", "rbinoct", "--max-depth", "1"]) == 0
    assert "status optimal" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compare", "--max-depth", "0"], "--max-depth must be >= 1"),
        (["compare", "--lam", "-1"], "--lam must be"),
        (["compare", "--backends", "gurobi"], "unknown backend"),
        (["compare", "--time-limit", "-3"], "--time-limit must be > 0"),
        (["compare", "--dataset", "nosuch"], "pass a CSV path"),
        (["fit", "nosuch.csv"], "DATA 'nosuch.csv': no such file"),
        (["fit", "monk1", "--method", "nope"], "--method must be one of"),
        (["fit", "monk1", "--method", "rbinoct", "--max-depth", "none"], "--max-depth"),
        (["prune", "nofile.pkl", "nofile.csv", "--lam", "0.1"], "no such file"),
    ],
)
def test_bad_input_is_one_line_naming_the_argument_and_exit_code_two(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_compare_on_a_csv_with_json(user_csv, capsys):
    code = main(
        [
            "compare",
            "--dataset",
            str(user_csv),
            "--label",
            "outcome",
            "--max-depth",
            "2",
            "--methods",
            "dp,pathoct",
            "--json",
        ]
    )
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {row["method"] for row in payload["rows"]} == {"dp", "pathoct"}
    assert all(
        row["objective"] == pytest.approx(payload["certified_optimum"]) for row in payload["rows"]
    )
    import odtkit

    # the command must leave the package's compare a function (test_bad_input calls it)
    assert callable(odtkit.compare), type(odtkit.compare)


def _reachable_leaves(forest) -> int:
    """Leaves reachable from the roots of a (pruned) scikit-learn forest's trees."""
    total = 0
    for estimator in forest.estimators_:
        left, right = estimator.tree_.children_left, estimator.tree_.children_right
        stack = [0]
        while stack:
            node = stack.pop()
            if left[node] < 0:
                total += 1
            else:
                stack += [left[node], right[node]]
    return total


@pytest.mark.parametrize("fmt", ["skops", "pickle"])
def test_prune_a_forest(tmp_path, capsys, fmt):
    # a skops file by default; a pickle only with --trust-pickle (it runs code when loaded).
    # --out writes the pruned scikit-learn forest in the format FOREST was read in
    from sklearn.ensemble import RandomForestClassifier

    sio = pytest.importorskip("skops.io", reason="skops: the optional extra odtkit[skops] (in dev)")
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(120, 4)), columns=["a", "b", "c", "d"])
    y = (X.a + X.b > 0).astype(int)
    forest = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    forest_file = tmp_path / f"forest.{fmt}"
    forest_file.write_bytes(sio.dumps(forest) if fmt == "skops" else pickle.dumps(forest))
    X.assign(label=y).to_csv(tmp_path / "train.csv", index=False)
    argv = [
        "prune",
        str(forest_file),
        str(tmp_path / "train.csv"),
        "--lam",
        "0.01",
        "--costs",
        "a=3,b=0.5",
        "--out",
        str(tmp_path / "pruned.out"),
        *(["--trust-pickle"] if fmt == "pickle" else []),
    ]
    assert main([*argv, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    raw = (tmp_path / "pruned.out").read_bytes()
    if fmt == "skops":
        pruned = sio.loads(raw, trusted=sio.get_untrusted_types(data=raw))
    else:
        pruned = pickle.loads(raw)
    assert type(pruned) is RandomForestClassifier
    assert payload["out"] == {"file": argv[8], "written": True, "reason": None}
    assert payload["n_trees"] == 5 and payload["n_leaves"] == _reachable_leaves(pruned)
    assert payload["train_accuracy"] == pytest.approx(pruned.score(X, y))
    assert main(["prune", argv[1], argv[2]]) == 2  # neither --lam nor --budget
    assert "exactly one of --lam and --budget" in capsys.readouterr().err


def _odtkit_command() -> list[str]:
    exe = shutil.which("odtkit")
    return [exe] if exe else [sys.executable, "-m", "odtkit.cli"]


def test_console_script_is_installed():
    out = subprocess.run(
        [*_odtkit_command(), "datasets"], capture_output=True, text=True, check=True
    ).stdout
    assert "tic-tac-toe" in out


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
def test_ctrl_c_prints_the_best_tree_so_far_and_exits_130(user_csv):
    cmd = [
        *_odtkit_command(),
        "fit",
        str(user_csv),
        "--label",
        "outcome",
        "--lam",
        "0.0002",
        "--max-depth",
        "none",
        "--time-limit",
        "120",
        "--thresholds",
        "all",  # every midpoint: a search still running when Ctrl-C comes
    ]
    # SIGINT as from a terminal, even where the suite runs as a background job (SIGINT ignored)
    child = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(6.0)  # start-up and binarization take ~2-4 s; either way the answer is 130
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    if "status interrupted" in out:  # the search had started: its best tree is printed
        assert "class: " in out
    else:  # interrupted while loading: one line says so
        assert "interrupted" in err


def test_compare_reads_its_table_in_one_line(capsys):
    assert (
        main(["compare", "--dataset", "monk3", "--max-depth", "1", "--methods", "dp,pathoct"]) == 0
    )
    reading = [line for line in capsys.readouterr().out.splitlines() if line.startswith("reading:")]
    assert len(reading) == 1
    assert "dp certified" in reading[0] and "pathoct certified" in reading[0]
    assert reading[0].endswith("every tree has the certified value.")


def test_a_closed_pipe_is_not_a_traceback():
    # `odtkit compare | head` closes stdout early
    cmd = [
        *_odtkit_command(),
        "compare",
        "--dataset",
        "monk3",
        "--max-depth",
        "1",
        "--methods",
        "dp",
    ]
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child.stdout.readline()
    child.stdout.close()
    err = child.stderr.read()
    assert child.wait(timeout=60) == 0, err
    assert "Traceback" not in err

"""The live progress line: after a delay, incumbent, bound and gap; silent off a terminal."""

from __future__ import annotations

import io
import time

import pytest
from conftest import hard_knapsack

from odtkit import _progress
from odtkit._progress import Progress, describe, progress_enabled
from odtkit.core import SearchOptions
from odtkit.solvers import solve


def test_describe_reads_like_a_sentence():
    assert describe("flowoct", 3.21, 0.25, 0.2) == (
        "flowoct: 3.2 s, incumbent 0.25, bound 0.2, gap 20.0%"
    )
    assert describe("m", 0.5, float("inf"), float("-inf")) == "m: 0.5 s, no incumbent"


def test_off_by_default_when_the_stream_is_not_a_terminal():
    stream = io.StringIO()
    assert not progress_enabled(None, stream)
    assert progress_enabled(True, stream) and not progress_enabled(False, stream)
    with Progress("quiet", stream=stream, delay=0.0, interval=0.01) as bar:
        bar.update(1.0, 0.5)
        time.sleep(0.05)
    assert stream.getvalue() == ""


def test_nothing_before_the_delay_then_a_redrawn_line_erased_at_the_end():
    stream = io.StringIO()
    with Progress("run", True, stream=stream, delay=10.0) as bar:
        bar.update(1.0, 0.5)
        time.sleep(0.05)
    assert stream.getvalue() == ""  # a run shorter than the delay leaves no trace
    stream = io.StringIO()
    bar = Progress("run", True, stream=stream, delay=0.0, interval=0.01)
    bar.update(1.0, 0.5)
    # wait for two redraws (a loaded machine may not schedule the drawing thread for a while);
    # the minute is a safety net, not a measurement
    give_up = time.monotonic() + 60.0
    while stream.getvalue().count("run: ") < 2 and time.monotonic() < give_up:
        time.sleep(0.01)
    bar.close()
    text = stream.getvalue()
    assert "run: " in text and "incumbent 1, bound 0.5, gap 50.0%" in text
    assert text.count("run: ") >= 2  # redrawn while it runs
    assert text.endswith("\r")  # erased: leave=False


def test_a_mip_solve_shows_the_line_when_asked(monkeypatch, capsys):
    monkeypatch.setattr(_progress, "DELAY", 0.05)
    monkeypatch.setattr(_progress, "INTERVAL", 0.05)
    sol = solve(hard_knapsack(), time_limit=1.0, progress=True)
    assert sol.status in ("time_limit", "optimal")
    err = capsys.readouterr().err
    assert "mknap: " in err and "bound" in err
    solve(hard_knapsack(), time_limit=0.5)  # default: stderr is not a terminal here
    assert "mknap: " not in capsys.readouterr().err


@pytest.mark.parametrize("backend", ["pyomo", "pulp"])
def test_every_highs_backend_reports_progress(backend, monkeypatch, capsys):
    monkeypatch.setattr(_progress, "DELAY", 0.05)
    monkeypatch.setattr(_progress, "INTERVAL", 0.05)
    solve(hard_knapsack(), backend=backend, time_limit=1.0, progress=True)
    assert "mknap: " in capsys.readouterr().err


def test_native_searches_report_their_incumbent_and_bound(monkeypatch, capsys):
    # the search's trace values reach the line through the binding's 5 ms interrupt check
    from odtkit import Fairness
    from odtkit.core import search_rule_list, search_tree
    from odtkit.testing import planted_tree_dataset

    monkeypatch.setattr(_progress, "DELAY", 0.05)
    monkeypatch.setattr(_progress, "INTERVAL", 0.05)
    data = planted_tree_dataset(1, 3000, 40, 5, 0.05)[0]
    result = search_tree(data, lam=0.002, time_limit=1.0, options=SearchOptions(progress=True))
    err = capsys.readouterr().err
    assert "search (dp, anytime): " in err and "incumbent" in err and "bound" in err
    assert result.lower_bound <= result.objective
    search_tree(data, lam=0.002, time_limit=0.5)  # default: stderr is not a terminal here
    assert "search (" not in capsys.readouterr().err
    search_tree(data, lam=0.002, method="bnb", time_limit=0.5, options=SearchOptions(progress=True))
    assert "search (bnb" in capsys.readouterr().err
    fairness = Fairness("sp", protected=data.X[:, 2].astype(int), delta=0.001)
    search_tree(
        data,
        lam=0.0,
        max_depth=4,
        fairness=fairness,
        time_limit=0.5,
        options=SearchOptions(progress=True),
    )
    assert "fair search" in capsys.readouterr().err
    search_rule_list(data, lam=0.001, time_limit=0.5, progress=True)
    assert "rule list search" in capsys.readouterr().err


def test_paths_report_their_progress(monkeypatch):
    # what the line would show is recorded through show(); whether the thread got to draw it
    # before a fast path ended is timing, so the test reads show()'s calls
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    from odtkit import datasets
    from odtkit.core import regularization_path
    from odtkit.pruning import cost_error_path

    shown: list[tuple[str, str]] = []
    original = Progress.show
    monkeypatch.setattr(
        Progress,
        "show",
        lambda self, text: (shown.append((self.label, text)), original(self, text)),
    )
    path = regularization_path(datasets.load("monk2"), max_depth=4, progress=True)
    assert path.certified
    assert any(label == "regularization path" and "solves" in t for label, t in shown)
    X, y = load_breast_cancer(return_X_y=True)
    forest = RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0).fit(X, y)
    cost_error_path(forest, X, y, progress=True)
    assert any(label == "cost-error path" and "cuts" in t for label, t in shown)

"""odtkit.sweep: one tidy table, the same locally, on a process pool and on a Dask cluster;
failed and timed-out tasks are rows, never a lost sweep."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import StratifiedKFold

import odtkit
from odtkit import datasets, metrics
from odtkit.core import regularization_path, search_tree
from odtkit.sweeping import SWEEP_COLUMNS, sweep

GRID = {"lams": (0.01, 0.03), "depths": (2, 3), "folds": 3}
NOT_TIME = [c for c in SWEEP_COLUMNS if c != "time"]


@pytest.fixture(scope="module")
def serial() -> pd.DataFrame:
    return sweep(["monk1", "monk3"], **GRID, n_jobs=1, progress=False)


def test_table_shape_and_rows_recomputed(serial: pd.DataFrame):
    assert odtkit.sweep is sweep
    assert list(serial.columns) == list(SWEEP_COLUMNS)
    assert len(serial) == 2 * 3 * 2 * 2  # datasets x folds x depths x lams
    assert (serial["status"] == "optimal").all() and (serial["objective"] == serial["bound"]).all()
    # every row is what a direct solve on the same fold gives
    data = datasets.load("monk3")
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(data.X, data.y))
    for row in serial[serial["dataset"] == "monk3"].itertuples():
        train, test = (data.subset(idx) for idx in splits[row.fold])
        direct = search_tree(train, lam=row.lam, max_depth=row.depth)
        assert row.objective == pytest.approx(direct.objective, abs=1e-12)
        assert row.leaves == direct.model.n_leaves
        assert row.train_accuracy == pytest.approx(metrics.accuracy(direct.model, train))
        assert row.test_accuracy == pytest.approx(metrics.accuracy(direct.model, test))


def test_process_pool_gives_the_same_table(serial: pd.DataFrame):
    streamed: list[dict] = []
    pooled = sweep(["monk1", "monk3"], **GRID, n_jobs=2, progress=True, on_rows=streamed.extend)
    pd.testing.assert_frame_equal(pooled[NOT_TIME], serial[NOT_TIME])
    assert len(streamed) == len(serial)


def test_dask_local_cluster_gives_the_same_table(serial: pd.DataFrame):
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed: the optional extra odtkit[dask] (in dev)"
    )
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        on_dask = sweep(["monk1", "monk3"], **GRID, client=client, progress=False)
    pd.testing.assert_frame_equal(on_dask[NOT_TIME], serial[NOT_TIME])


def _one_slow_task(**where) -> pd.DataFrame:
    # tic-tac-toe at unlimited depth and this λ takes the dp seconds; monk1 milliseconds
    return sweep(
        ["monk1", "tic-tac-toe"],
        lams=(0.0002,),
        depths=(None,),
        folds=None,
        time_limit=None,
        task_timeout=1.0,
        progress=False,
        **where,
    )


def test_dask_timeout_is_a_row():
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed: the optional extra odtkit[dask] (in dev)"
    )
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        table = _one_slow_task(client=client)
    by_name = table.set_index("dataset")
    assert by_name.loc["monk1", "status"] == "optimal"
    assert by_name.loc["tic-tac-toe", "status"] == "time_limit"
    assert "task_timeout" in by_name.loc["tic-tac-toe", "message"]


def test_pool_timeout_is_a_row():
    # the pool's workers are ended at the grid's deadline; the finished task keeps its row
    table = _one_slow_task(n_jobs=2)
    by_name = table.set_index("dataset")
    assert by_name.loc["tic-tac-toe", "status"] == "time_limit"
    assert "task_timeout" in by_name.loc["tic-tac-toe", "message"]
    assert by_name.loc["monk1", "status"] in {"optimal", "time_limit"}  # a slow spawn: both


def test_failed_task_is_a_row():
    # a MIP over a complete tree needs a depth: that task fails, the dp task of the grid does not
    table = sweep(
        "monk1",
        lams=(0.05,),
        depths=(None,),
        folds=None,
        methods=("dp", "rbinoct"),
        n_jobs=1,
        progress=False,
    )
    by_method = table.set_index("method")
    assert by_method.loc["dp", "status"] == "optimal"
    assert by_method.loc["rbinoct", "status"] == "error"
    assert "depth" in by_method.loc["rbinoct", "message"]
    assert math.isnan(by_method.loc["rbinoct", "objective"])


def test_path_rows_are_the_path(serial: pd.DataFrame):
    data = datasets.load("monk2")
    table = sweep({"m2": data}, lams="path", depths=3, folds=None, n_jobs=1, progress=False)
    path = regularization_path(data, max_depth=3)
    assert list(table["lam"]) == pytest.approx([s.lam_lo for s in path.segments])
    assert list(table["lam_hi"]) == [s.lam_hi for s in path.segments]
    assert list(table["leaves"]) == [s.n_leaves for s in path.segments]
    assert (table["dataset"] == "m2").all() and (table["status"] == "optimal").all()
    assert np.isnan(table["test_accuracy"]).all()
    assert table["train_accuracy"].is_monotonic_decreasing


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"lams": "all"}, ValueError, "lams"),
        ({"lams": "path", "methods": ("bnb",)}, ValueError, "methods"),
        ({"folds": 1}, ValueError, "folds"),
        ({"n_jobs": 0}, ValueError, "n_jobs"),
        ({"lams": (-1.0,)}, ValueError, "lams"),
        ({"depths": (-2,)}, ValueError, "depths"),
        ({"methods": ("nope",)}, ValueError, "method"),
        ({"time_limit": 0}, ValueError, "time_limit"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        sweep("monk1", **{"n_jobs": 1, "progress": False, **kwargs})


def test_bad_datasets():
    with pytest.raises(TypeError, match="datasets"):
        sweep(3, n_jobs=1)
    with pytest.raises(ValueError, match="empty"):
        sweep([], n_jobs=1)
    with pytest.raises(ValueError, match="distinct"):
        sweep(["monk1", "monk1"], n_jobs=1)


def test_grid_search_distributes_through_joblibs_dask_backend():
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed: the optional extra odtkit[dask] (in dev)"
    )
    import joblib
    from sklearn.model_selection import GridSearchCV

    from odtkit.estimators import OptimalTreeClassifier

    data = datasets.load("monk3")
    grid = {"lam": [0.005, 0.02, 0.05], "max_depth": [2, 3]}
    local = GridSearchCV(OptimalTreeClassifier(), grid, cv=3).fit(data.X, data.y)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
        joblib.parallel_backend("dask"),
    ):
        on_dask = GridSearchCV(OptimalTreeClassifier(), grid, cv=3, n_jobs=-1).fit(data.X, data.y)
    assert on_dask.best_params_ == local.best_params_
    np.testing.assert_array_equal(
        on_dask.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"]
    )


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_keeps_the_finished_rows(n_jobs: int):
    calls = []

    def interrupt_after_first(rows: list[dict]) -> None:
        calls.append(rows)
        raise KeyboardInterrupt  # what Ctrl-C raises in the main loop

    table = sweep(
        ["monk1", "monk3"], **GRID, n_jobs=n_jobs, progress=False, on_rows=interrupt_after_first
    )
    assert len(calls) == 1 and len(table) == 24
    done = table[table["status"] == "optimal"]
    assert len(done) == 1 and (table["status"] == "interrupted").sum() == 23
    assert done.iloc[0]["objective"] == calls[0][0]["objective"]


def test_a_sweep_leaves_odtkit_compare_callable():
    # sweeping once imported the odtkit.compare submodule, which bound odtkit.compare to the
    # module before the package's lazy compare function was looked up
    import subprocess
    import sys

    code = (
        "import odtkit, odtkit.sweeping\n"
        "odtkit.sweeping._named_datasets('monk1')\n"
        "assert callable(odtkit.compare), type(odtkit.compare)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def _run_script(tmp_path, body: str):
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "my_sweep.py"
    script.write_text(body)
    env = dict(os.environ)
    src = str(Path(odtkit.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


SWEEP_CALL = (
    "odtkit.sweep('monk1', lams=[0.05, 0.9], depths=[1, 2], folds=None, n_jobs=2, progress=False)"
)


def test_a_script_calling_sweep_unguarded_gets_one_clear_error(tmp_path):
    """Issue 22: a plain script calling sweep at its top level made every spawned worker print
    multiprocessing's bootstrapping traceback and the sweep return error rows."""
    done = _run_script(tmp_path, f"import odtkit\n\ntable = {SWEEP_CALL}\nprint('finished')\n")
    assert done.returncode != 0
    assert "finished" not in done.stdout
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: odtkit.sweep with n_jobs > 1 starts worker processes")
    assert 'if __name__ == "__main__":' in last
    assert done.stderr.count("Traceback") == 1, done.stderr
    assert done.stderr.count("starts worker processes") == 1, done.stderr
    assert "bootstrapping" not in done.stderr


def test_the_guarded_script_runs_and_names_its_warnings(tmp_path):
    """The guard of the error message works; the workers' TrivialAnswerWarnings (lam=0.9) come
    back once each, at the script's sweep line, naming the task."""
    body = (
        "import odtkit\n\n"
        "if __name__ == '__main__':\n"
        f"    table = {SWEEP_CALL}\n"
        "    print(table['status'].tolist())\n"
    )
    done = _run_script(tmp_path, body)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(["optimal"] * 4)
    warned = [line for line in done.stderr.splitlines() if "TrivialAnswerWarning" in line]
    # depths 1 and 2 at lam=0.9 raise the same text: one warning, counting the second task
    (line,) = warned
    assert line.startswith(f"{tmp_path / 'my_sweep.py'}:4: TrivialAnswerWarning: ")
    assert "sweep task dataset 'monk1', fold 0, depth 1, lam=0.9, method dp (and 1 more" in line


def test_ctrl_c_inside_the_pools_lock_release_ends_the_sweep_as_a_ctrl_c(monkeypatch):
    # CPython's Condition.wait, interrupted while it releases its lock, raises
    # RuntimeError("release unlocked lock") during the KeyboardInterrupt (met at load 4): the
    # sweep must treat it as the Ctrl-C it is, keeping what finished
    import odtkit.sweeping as sweeping

    real = sweeping.futures_wait
    calls = []

    def interrupted_on_the_second_wait(*args, **kwargs):
        calls.append(1)
        if len(calls) < 2:
            return real(*args, **kwargs)
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("release unlocked lock")  # noqa: B904 - CPython's shape

    monkeypatch.setattr(sweeping, "futures_wait", interrupted_on_the_second_wait)
    table = sweep("monk1", lams=(0.05, 0.02, 0.01), depths=(1, 2), folds=None, n_jobs=2)
    assert len(calls) == 2
    assert len(table) == 6
    statuses = set(table["status"])
    assert "interrupted" in statuses
    assert "optimal" in statuses  # the first wait's finished task is kept

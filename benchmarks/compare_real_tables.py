"""``odtkit compare`` at its defaults on real outside tables (issue 37 item 12).

Every table runs in a fresh child process, ``odtkit compare --dataset TABLE.csv --json`` with
nothing else given (depth 3, lambda 0.01, 10 s per run, the default methods sized to the
table), exactly as a new user would type it. Per table: the command's wall clock and exit
code; per method: its wall seconds (build, solve, decode and verification: what its limit
covers), status, verified objective, bound (and, without one, why), and whether it stayed
within its limit plus :data:`SLACK_SHARE` of it and :data:`SLACK_SECONDS`. The methods the
default list left out are listed with why. ``--forced`` runs every MIP of the CLI's list by
name instead (``--methods dp,pathoct,flowoct,rbinoct``): each then must hold its limit.

The tables (each skipped with a ``[skip]`` line when absent): sklearn's bundled breast_cancer,
wine and iris; palmerpenguins and a few statsmodels datasets if installed; the outside tables
of ``../shared/data`` (see its README: GOSDT's, OSDT's and CORELS' copies of COMPAS, Broward,
the Netherlands recidivism sets, the coupon sets, car evaluation, tic-tac-toe ...). Each is
written to a temporary comma-separated file with its label last, the CLI's default label.

The target (issue 37): each compare at defaults within about 30 s of wall clock, no method
past its limit by more than a few percent and about a second. The seconds are this
machine's at the load printed beside them (2 shared cores).

Usage: ``python benchmarks/compare_real_tables.py [--forced] [--tables NAME ...]
[--out-dir DIR]``; writes ``compare_real_tables.{json,md}`` (``--forced``:
``compare_real_tables_forced``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import _harness as harness
import pandas as pd

#: The CLI's default time limit per run (``odtkit compare --time-limit``).
LIMIT = 10.0
#: A method is within its limit when its wall seconds are at most
#: ``LIMIT * (1 + SLACK_SHARE) + SLACK_SECONDS``.
SLACK_SHARE = 0.05
SLACK_SECONDS = 1.0
#: The target of a whole compare at defaults, seconds of wall clock.
TARGET = 30.0
#: A child past this many seconds is killed (its row says so).
TIMEOUT = 600.0
FORCED = "dp,pathoct,flowoct,rbinoct"

#: Shared tables: (path under shared/data, separator).
SHARED = (
    ("gosdt/broward_general_2y.csv", ","),
    ("gosdt/compas.csv", ","),
    ("gosdt/gosdt2020/compas-2016.csv", ","),
    ("gosdt/gosdt2020/bar-7.csv", ","),
    ("gosdt/coupon_carryout.csv", ","),
    ("gosdt/spiral.csv", ","),
    ("gosdt/netherlands/netherlands_general.csv", ","),
    ("gosdt/netherlands/netherlands_sexual.csv", ","),
    ("gosdt/netherlands/netherlands_violence.csv", ","),
    ("corels/compas_train.csv", ","),
    ("osdt/car-evaluation.csv", ";"),
    ("osdt/balance-scale.csv", ";"),
    ("osdt/tic-tac-toe.csv", ";"),
)
#: statsmodels datasets with a class label (their ``endog``), tried when it is installed.
STATSMODELS = ("spector", "anes96", "fair")


def _sklearn_tables() -> Iterator[tuple[str, pd.DataFrame]]:
    from sklearn import datasets

    for name in ("breast_cancer", "wine", "iris"):
        bunch = getattr(datasets, f"load_{name}")(as_frame=True)
        frame = bunch.data.copy()
        frame["target"] = bunch.target.to_numpy()
        yield f"sklearn/{name}", frame


def _penguins() -> Iterator[tuple[str, pd.DataFrame]]:
    try:
        from palmerpenguins import load_penguins
    except ImportError:
        print("[skip] palmerpenguins: not installed", file=sys.stderr)
        return
    frame = load_penguins()
    label = frame.pop("species")
    frame["species"] = label
    yield "palmerpenguins", frame


def _statsmodels() -> Iterator[tuple[str, pd.DataFrame]]:
    try:
        import statsmodels.api as sm
    except ImportError:
        print("[skip] statsmodels datasets: statsmodels not installed", file=sys.stderr)
        return
    for name in STATSMODELS:
        try:
            data = getattr(sm.datasets, name).load_pandas()
        except (AttributeError, OSError, ValueError) as exc:
            print(f"[skip] statsmodels {name}: {exc}", file=sys.stderr)
            continue
        frame = data.exog.copy()
        frame[data.endog_name] = data.endog.to_numpy()
        yield f"statsmodels/{name}", frame


def _shared() -> Iterator[tuple[str, pd.DataFrame]]:
    for relative, sep in SHARED:
        path = harness.shared_file(relative)
        if path is not None:
            yield relative, pd.read_csv(path, sep=sep)


SOURCES: tuple[Callable[[], Iterator[tuple[str, pd.DataFrame]]], ...] = (
    _sklearn_tables,
    _penguins,
    _statsmodels,
    _shared,
)


def _within(wall: float | None) -> bool | None:
    if wall is None or math.isnan(wall):
        return None
    return wall <= LIMIT * (1 + SLACK_SHARE) + SLACK_SECONDS


def run_table(name: str, frame: pd.DataFrame, folder: Path, forced: bool) -> dict[str, Any]:
    """One ``odtkit compare`` in a fresh interpreter; its rows, judged against the limit."""
    csv = folder / (name.replace("/", "__") + ".csv")
    frame.to_csv(csv, index=False)
    cmd = [sys.executable, "-m", "odtkit.cli", "compare", "--dataset", str(csv), "--json"]
    if forced:
        cmd += ["--methods", FORCED]
    load = os.getloadavg()[0]
    began = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"table": name, "wall": TIMEOUT, "exit": None, "error": "timed out"}
    wall = time.perf_counter() - began
    row: dict[str, Any] = {
        "table": name,
        "rows": int(frame.shape[0]),
        "columns": int(frame.shape[1]),
        "wall": wall,
        "exit": done.returncode,
        "load": load,
    }
    try:
        payload = json.loads(done.stdout)
    except json.JSONDecodeError:
        row["error"] = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return row
    row["features"] = len(payload.get("feature_names", []))
    row["left_out"] = payload.get("left_out", {})
    row["methods"] = [
        {
            "method": r["method"],
            "status": r["status"],
            "objective": r["objective"],
            "bound": r["bound"],
            "wall": r.get("wall"),
            "build_time": r.get("build_time"),
            "within_limit": _within(r.get("wall")),
            "message": r.get("message", ""),
        }
        for r in payload["rows"]
    ]
    return row


def _markdown(rows: list[dict[str, Any]], forced: bool) -> str:
    how = f"--methods {FORCED}" if forced else "defaults"
    lines = [
        f"# odtkit compare at {how} on real tables",
        "",
        f"Run {harness.timestamp()}, {harness.machine_info('cpus')['cpus']} cpus; "
        f"{LIMIT:g} s per run; a method is within its limit at <= "
        f"{LIMIT * (1 + SLACK_SHARE) + SLACK_SECONDS:g} s; target per compare {TARGET:g} s.",
        "",
    ]
    table = []
    for r in rows:
        methods = r.get("methods", [])
        said = "; ".join(
            f"{m['method']} {m['status']} {harness.fmt(m['wall'])} s"
            + ("" if m["within_limit"] is not False else " OVER")
            for m in methods
        )
        table.append(
            [
                r["table"],
                f"{r.get('rows', '')}x{r.get('features', '')}",
                harness.fmt(r["wall"]),
                r.get("exit"),
                said or r.get("error", ""),
                ", ".join(r.get("left_out", {})) or "–",
                harness.fmt(r.get("load")),
            ]
        )
    lines += harness.md_table(
        ["table", "rows x features", "wall s", "exit", "methods", "left out", "load"], table
    )
    walls = [r["wall"] for r in rows]
    over = [
        f"{r['table']}:{m['method']}"
        for r in rows
        for m in r.get("methods", [])
        if m["within_limit"] is False
    ]
    lines += [
        "",
        f"{sum(w <= TARGET for w in walls)} of {len(walls)} compares within {TARGET:g} s "
        f"(longest {max(walls, default=math.nan):.1f} s); methods over their limit: "
        f"{', '.join(over) or 'none'}.",
        "",
    ]
    notes = [
        f"* {r['table']}: {m['method']}: {m['message']}"
        for r in rows
        for m in r.get("methods", [])
        if m["message"]
    ]
    if notes:
        lines += ["Messages:", "", *notes, ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--forced", action="store_true", help=f"--methods {FORCED}")
    parser.add_argument("--tables", nargs="*", help="only the tables whose name contains one")
    harness.add_out_dir(parser)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for source in SOURCES:
            for name, frame in source():
                if args.tables and not any(t in name for t in args.tables):
                    continue
                row = run_table(name, frame, Path(tmp), args.forced)
                print(json.dumps(row), flush=True)
                rows.append(row)
    name = "compare_real_tables" + ("_forced" if args.forced else "")
    payload = {
        "machine": harness.machine_info(),
        "timestamp": harness.timestamp(),
        "limit": LIMIT,
        "forced": args.forced,
        "rows": rows,
    }
    out = harness.write_results(
        name, payload, _markdown(rows, args.forced), out_dir=args.out_dir, json_default=str
    )
    print(f"wrote {out}.json and {out}.md")


if __name__ == "__main__":
    main()

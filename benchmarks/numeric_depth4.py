"""The exact numeric search at depth 4 and stopped searches (issue 41, items 1-3): before ->
after, with ConTree side by side, in one run.

Settings (every run a fresh child process; CPU time of the search call after a warm-up call,
so imports are not counted, except in the stopped-search rows, which time the first call of
a process as a user meets it):

* ``star98`` (statsmodels, 303 x 20; label ``NABOVE > NBELOW``, the other 20 columns), depth 4,
  lam 0: ConTree certifies it; the issue's reference case;
* ``breast_cancer`` depth 4 at lam 0.005 (the issue's target: certified within 120 s) and lam 0;
* ``synthetic400``: ``make_classification(n_samples=400, n_features=10, random_state=0)``,
  depth 4, lam 0 and lam 0.01;
* ``star98`` depth 4 at lam 0.03 (lam > 0 rows: ConTree has no lam, so no ConTree column);
* stopped: breast_cancer, lam 0.01, depths 3 and 4, ``time_limit`` 0.02, 0.05 and 0.1 s (the
  issue's item 3), objective, bound and wall time of the first call in a fresh process.

"before" is an odtkit checkout without this change (``--before-python``: its venv's
interpreter; skipped when not given), "after" this one, ConTree ``--contree-python`` (pycontree
and statsmodels; star98 is exported through it). Writes
benchmarks/results/numeric_depth4.{json,md}.

Usage: ``python benchmarks/numeric_depth4.py --contree-python /tmp/contree-venv/bin/python
[--before-python PATH] [--limit 120] [--out-dir DIR]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _harness as harness
from numeric_doors import build_table

NAME = "numeric_depth4"
#: (dataset, depth, lam) of the certification rows
SETTINGS = (
    ("star98", 4, 0.0),
    ("breast_cancer", 4, 0.005),
    ("breast_cancer", 4, 0.0),
    ("synthetic400", 4, 0.0),
    ("synthetic400", 4, 0.01),
    ("star98", 4, 0.03),
)
STOPPED_LIMITS = (0.02, 0.05, 0.1)


# ------------------------------------------------------------------------------ child side
def _data(name: str, star98_csv: str) -> tuple[Any, Any]:
    import numpy as np

    if name == "star98":
        import pandas as pd

        frame = pd.read_csv(star98_csv)
        return frame.drop(columns="above"), frame["above"].to_numpy()
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        return load_breast_cancer(return_X_y=True)
    if name == "synthetic400":
        from sklearn.datasets import make_classification

        X, y = make_classification(n_samples=400, n_features=10, random_state=0)
        return X, np.asarray(y)
    raise ValueError(name)


def ours(name: str, depth: int, lam: float, limit: float, star98_csv: str) -> dict[str, Any]:
    """Child side: ``search_numeric`` (start greedy) once after a warm-up call."""
    from odtkit.core import search_numeric

    X, y = _data(name, star98_csv)
    search_numeric(X[:20] if not hasattr(X, "iloc") else X.iloc[:20], y[:20], lam=0.0, max_depth=1)
    began = time.process_time()
    result = search_numeric(X, y, lam=lam, max_depth=depth, time_limit=limit)
    return {
        "cpu": time.process_time() - began,
        "status": result.status,
        "objective": float(result.objective),
        "bound": float(result.lower_bound),
        "errors": int(round((result.objective - lam * result.model.n_leaves) * len(y)))
        if hasattr(result.model, "n_leaves")
        else None,
        "thresholds": result.stats.get("thresholds_evaluated"),
        "peak_mb": harness.peak_rss_mb(),
    }


def stopped(depth: int, limit: float) -> dict[str, Any]:
    """Child side: the first search of a fresh process (imports included), as issue 41 item 3."""
    began = time.perf_counter()
    from sklearn.datasets import load_breast_cancer

    from odtkit.core import search_numeric

    X, y = load_breast_cancer(return_X_y=True)
    result = search_numeric(X, y, lam=0.01, max_depth=depth, time_limit=limit)
    return {
        "wall": time.perf_counter() - began,
        "status": result.status,
        "objective": float(result.objective),
        "bound": float(result.lower_bound),
        "certified_depth": result.stats.get("certified_depth"),
    }


def contree(name: str, depth: int, limit: float, star98_csv: str) -> dict[str, Any]:
    """Child side (pycontree's venv): ConTree's fit, CPU time and training errors."""
    import numpy as np
    import pandas as pd
    from pycontree import ConTree

    X, y = _data(name, star98_csv)
    X = pd.DataFrame(np.asarray(X, dtype=float))
    began = time.process_time()
    model = ConTree(max_depth=depth, time_limit=int(limit))
    model.fit(X, y)
    cpu = time.process_time() - began
    return {
        "cpu": cpu,
        "errors": int(np.count_nonzero(model.predict(X) != np.asarray(y))),
        "certified": bool(model.is_within_time_limit())
        if hasattr(model, "is_within_time_limit")
        else None,
        "peak_mb": harness.peak_rss_mb(),
    }


# ----------------------------------------------------------------------------- parent side
def _try(target: str, *args: Any, python: str | None, timeout: float) -> dict[str, Any] | None:
    try:
        return harness.call_in_child(target, *args, timeout=timeout, python=python)
    except harness.ChildError as error:
        print(f"[failed] {target} {args}: {error}", file=sys.stderr)
        return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--contree-python", default=os.environ.get("ODTKIT_CONTREE_PYTHON"))
    parser.add_argument("--before-python", default=None)
    parser.add_argument("--limit", type=float, default=120.0)
    parser.add_argument(
        "--report-only", action="store_true", help="rewrite the .md from the saved .json"
    )
    harness.add_out_dir(parser)
    args = parser.parse_args(argv)
    if args.report_only:
        harness.rewrite_report(NAME, args.out_dir, render)
        return
    if not args.contree_python:
        parser.error("--contree-python is needed (pycontree and statsmodels)")
    sides = {"after": sys.executable}
    if args.before_python:
        sides = {"before": args.before_python, **sides}
    folder = Path(tempfile.mkdtemp(prefix="numeric_depth4_"))
    # star98 as numeric_doors builds it (in ConTree's interpreter when statsmodels is not here)
    built = build_table("star98", str(folder), args.contree_python)
    if "skipped" in built:
        parser.error(f"star98 could not be built: {built['skipped']}")
    csv = str(folder / "star98.csv")
    rows: list[dict[str, Any]] = []
    for name, depth, lam in SETTINGS:
        row: dict[str, Any] = {"dataset": name, "depth": depth, "lam": lam}
        for side, python in sides.items():
            row[side] = _try(
                "numeric_depth4:ours",
                name,
                depth,
                lam,
                args.limit,
                csv,
                python=python,
                timeout=args.limit * 3 + 120,
            )
        if lam == 0.0:
            row["contree"] = _try(
                "numeric_depth4:contree",
                name,
                depth,
                args.limit,
                csv,
                python=args.contree_python,
                timeout=args.limit * 3 + 120,
            )
        rows.append(row)
        print(row, flush=True)
    stops: list[dict[str, Any]] = []
    for depth in (3, 4):
        for limit in STOPPED_LIMITS:
            row = {"depth": depth, "limit": limit}
            for side, python in sides.items():
                row[side] = _try("numeric_depth4:stopped", depth, limit, python=python, timeout=120)
            stops.append(row)
            print(row, flush=True)
    payload = {
        "machine": harness.machine_info(),
        "when": harness.timestamp(),
        "limit": args.limit,
        "rows": rows,
        "stopped": stops,
    }
    harness.write_results(NAME, payload, render(payload), out_dir=args.out_dir)


def render(payload: dict[str, Any]) -> str:
    fmt = harness.fmt
    lines = [
        "# The exact numeric search at depth 4, and stopped searches (issue 41)",
        "",
        f"{payload['when']}; time limit {payload['limit']:g} s (wall); CPU seconds of one fit "
        "in a fresh process after a warm-up call; `search_numeric(start='greedy')`. "
        "Written by `benchmarks/numeric_depth4.py`.",
        "",
        "A row at its time limit ran for the limit in wall time on a shared machine (2 cores, "
        "load 5-10): its CPU seconds are the share it got, so before and after compare by the "
        "bound and objective they reached, not by CPU. Rows that certify compare by CPU.",
        "",
    ]
    header = ["dataset", "depth", "lam"]
    sides = [s for s in ("before", "after") if any(s in r for r in payload["rows"])]
    for side in sides:
        header += [f"{side} CPU s", f"{side} status", f"{side} objective", f"{side} bound"]
    header += ["ConTree CPU s", "ConTree errors", "after / ConTree"]
    table = []
    for r in payload["rows"]:
        cells: list[Any] = [r["dataset"], r["depth"], r["lam"]]
        for side in sides:
            o = r.get(side) or {}
            cells += [
                fmt(o.get("cpu")),
                o.get("status", "–"),
                fmt(o.get("objective"), 6),
                fmt(o.get("bound"), 6),
            ]
        c = r.get("contree") or {}
        a = r.get("after") or {}
        certified = a.get("status") == "optimal"
        ratio = a["cpu"] / c["cpu"] if certified and c.get("cpu") and a.get("cpu") else None
        cells += [fmt(c.get("cpu")), fmt(c.get("errors")), fmt(ratio)]
        table.append(cells)
    lines += harness.md_table(header, table)
    lines += [
        "",
        "## Stopped searches: breast_cancer, lam 0.01, first call of a fresh process",
        "",
        "Depth-1 optimum 0.097329, depth-2 optimum 0.077452, depth-3 optimum 0.073392. "
        "Wall seconds include the imports of the first call (the lead's part moves them out "
        "of the timed fit).",
        "",
    ]
    header = ["depth", "time_limit"]
    for side in sides:
        header += [f"{side} objective", f"{side} bound", f"{side} wall s"]
    header += ["after certified_depth"]
    table = []
    for r in payload["stopped"]:
        cells = [r["depth"], r["limit"]]
        for side in sides:
            o = r.get(side) or {}
            cells += [fmt(o.get("objective"), 6), fmt(o.get("bound"), 6), fmt(o.get("wall"))]
        cells.append(fmt((r.get("after") or {}).get("certified_depth")))
        table.append(cells)
    lines += harness.md_table(header, table)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

"""Rashomon sets at large epsilon (issue 42): odtkit before/after vs PRAXIS and TreeFARMS.

The settings of the issue's table (compas-binary, lam 0.005, count only: depth 4 at epsilon
0.05 / 0.2 / 0.5, depth 5 at 0.2; a planted 3,000 x 40 table at depth 5, epsilon 0.01), each
tool in a fresh child process of its own interpreter (odtkit "after" = this checkout's venv,
"before" = ``--before-python``, PRAXIS / TreeFARMS in their venvs), CPU seconds of the build
(``time.process_time`` in the child), wall seconds, peak RSS (``ru_maxrss``) and the RSS before
the build. What the peers compute differs from ours (benchmarks/rashomon.py: PRAXIS rounds
lam * n and bounds by a heuristic tree, TreeFARMS lists majority leaves only): the counts are
reported side by side, not compared as sets here.

Then, for odtkit only: memory-limit adherence (``memory_limit_mb`` 20 / 60 / 200 on compas d4
eps 0.2: the RSS growth over the RSS before the build against the limit; the target is
``limit * 1.1 + 50 MB``), partial sets (time limits: the count found, whether the optimum is
the first tree, the upper bound) and the iteration rates (codes per second through
``core.codes``, ``Tree`` objects per second through ``iter``) on the complete set of compas d4
eps 0.05 (880,126 trees).

Writes benchmarks/results/rashomon_large_eps.{json,md}.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import _harness as harness
from rashomon import stdout_to

NAME = "rashomon_large_eps"
LAM = 0.005
#: (dataset, depth, epsilon) of the issue's table
SETTINGS = (
    ("compas-binary", 4, 0.05),
    ("compas-binary", 4, 0.2),
    ("compas-binary", 4, 0.5),
    ("compas-binary", 5, 0.2),
    ("planted", 5, 0.01),
)
PLANTED = {"seed": 0, "n_samples": 3_000, "n_features": 40, "depth": 5, "noise": 0.2}
MEMORY_LIMITS = (20.0, 60.0, 200.0)
#: the count table's columns: odtkit before (main: listable, and count only), after listable
#: (``rashomon()``), after count only (``rashomon(count_only=True)``), the peers
TABLE_TOOLS = ("before", "before_count", "after_list", "after", "praxis", "treefarms")
#: address-space cap of a peer child
PEER_MEMORY_MB = 6144
PEERS = {"praxis": "/tmp/praxis-venv/bin/python", "treefarms": "/tmp/treefarms-venv/bin/python"}


# ------------------------------------------------------------------------------ child side
def _rss() -> float:
    return harness.peak_rss_mb()


def _measured(cpu: float, wall: float, before: float, count: int) -> dict[str, Any]:
    """The columns every tool's row shares: CPU and wall seconds since ``cpu`` / ``wall``,
    RSS before and at peak, and the count (exact as text, and as a float for ratios)."""
    return {
        "cpu": time.process_time() - cpu,
        "wall": time.perf_counter() - wall,
        "rss_before_mb": before,
        "peak_rss_mb": _rss(),
        "count": str(count),
        "count_float": float(count),
    }


def _current_rss_mb() -> float:
    """The resident set now (not the peak), from /proc."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import os

    return pages * os.sysconf("SC_PAGE_SIZE") / 1048576.0


def write_npz(name: str, path: str) -> dict[str, Any]:
    import numpy as np

    if name == "planted":
        from odtkit.testing import planted_tree_dataset

        d, _ = planted_tree_dataset(**PLANTED)
    else:
        d = harness.load_dataset(name)
    np.savez(path, X=np.asarray(d.X, dtype=np.uint8), y=np.asarray(d.y, dtype=np.int64))
    return {"n": int(d.X.shape[0]), "p": int(d.X.shape[1])}


def ours(
    npz: str,
    depth: int,
    eps: float,
    time_limit: float,
    memory_limit_mb: float | None,
    iterate: bool,
    count_only: bool = False,
) -> dict[str, Any]:
    """Child side (any odtkit): build + count, then (``iterate``) the iteration rates.
    ``count_only``: ``rashomon(count_only=True)`` (the counts, not the trees)."""
    import numpy as np

    from odtkit import metrics
    from odtkit.datasets import Dataset
    from odtkit.rashomon import rashomon

    data = np.load(npz)
    dataset = Dataset.from_arrays(data["X"].astype(bool), data["y"])
    before = _current_rss_mb()
    cpu, wall = time.process_time(), time.perf_counter()
    rs = rashomon(
        dataset,
        lam=LAM,
        max_depth=depth,
        epsilon=eps,
        time_limit=time_limit,
        memory_limit_mb=memory_limit_mb,
        **({"count_only": True} if count_only else {}),
    )
    count = rs.count()
    row: dict[str, Any] = {
        **_measured(cpu, wall, before, count),
        "complete": bool(rs.complete),
        "status": rs.status,
        "certified": bool(rs.stats.get("certified", rs.status == "optimal")),
        "optimum": rs.optimum,
        "accounted_peak_mb": float(rs.stats.get("peak_memory_mb", math.nan)),
    }
    upper = getattr(rs, "count_upper_bound", None)
    row["count_upper_bound"] = float(upper()) if callable(upper) else None
    if count and not count_only:
        first = metrics.objective(rs[0], dataset, lam=LAM)
        row["first_objective"] = first
        row["optimum_first"] = abs(first - rs.optimum) <= 1e-9
    if iterate and rs.complete and count:
        # rates per CPU second (the machine is shared: wall time would measure the load)
        n = min(count, 1_000_000)
        t0 = time.process_time()
        for start in range(0, n, 65536):
            rs.core.codes(start, min(n, start + 65536))
        row["codes_per_s"] = n / (time.process_time() - t0)
        m = min(count, 200_000)
        t0 = time.process_time()
        for i, _ in enumerate(rs):
            if i + 1 >= m:
                break
        row["trees_per_s"] = m / (time.process_time() - t0)
    return row


def _cap_address_space() -> None:
    """A peer child may not take the machine down (TreeFARMS reached 10 GB on hard settings)."""
    import resource

    limit = PEER_MEMORY_MB * 1048576
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def praxis(npz: str, depth: int, eps: float) -> dict[str, Any]:
    """Child side in PRAXIS' venv: fit (its trie) and count."""
    import os

    _cap_address_space()

    import numpy as np
    from praxis import PRAXIS

    data = np.load(npz)
    X = np.ascontiguousarray(data["X"], dtype=np.uint8)
    y = data["y"].astype(np.int64)
    before = _current_rss_mb()
    cpu, wall = time.process_time(), time.perf_counter()
    model = PRAXIS()
    # it prints to the C stdout: fd 1 to /dev/null while it runs (our rows go on stdout)
    with stdout_to(os.devnull):
        model.fit(X, y, lambda_reg=LAM, depth_budget=depth, rashomon_mult=eps)
        count = int(model.count_trees())
    return {
        **_measured(cpu, wall, before, count),
        "version": harness.dist_version("tree-praxis"),
    }


def treefarms(npz: str, depth: int, eps: float, time_limit: float) -> dict[str, Any]:
    """Child side in TreeFARMS' venv (majority leaves only, trivial extensions kept)."""
    import os

    import numpy as np
    import pandas as pd
    from treefarms import TREEFARMS

    _cap_address_space()
    data = np.load(npz)
    X, y = data["X"], data["y"]
    frame = pd.DataFrame(X.astype(np.int64), columns=[f"f{j}" for j in range(X.shape[1])])
    labels = pd.Series(y.astype(np.int64), name="y")
    config = {
        "regularization": LAM,
        "rashomon_bound_multiplier": eps,
        "depth_budget": depth + 1,
        "rashomon_ignore_trivial_extensions": False,
        "time_limit": int(math.ceil(time_limit)),
    }
    before = _current_rss_mb()
    cpu, wall = time.process_time(), time.perf_counter()
    model = TREEFARMS(config)
    with stdout_to(os.devnull):
        model.fit(frame, labels)
    return {
        **_measured(cpu, wall, before, int(model.get_tree_count())),
        "complete": not model.timeout,
        "version": harness.dist_version("treefarms"),
    }


# ----------------------------------------------------------------------------- parent side
def _call(target: str, *args: Any, python: str, timeout: float) -> dict[str, Any]:
    try:
        return harness.call_in_child(f"{NAME}:{target}", *args, timeout=timeout, python=python)
    except harness.ChildError as exc:
        child = exc.child
        return {
            "failed": "timeout" if child.timed_out else f"exit {child.returncode}",
            "reason": child.reason()[-300:],
        }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-python", default=None, help="odtkit before the change")
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--tools", default="after,before,praxis,treefarms")
    parser.add_argument("--settings", default=None, help="indices into SETTINGS, e.g. 0,1")
    parser.add_argument("--skip-extra", action="store_true", help="no memory/partial/iteration")
    parser.add_argument(
        "--merge", action="store_true", help="update the tools' cells of the existing results"
    )
    harness.add_out_dir(parser)
    args = parser.parse_args(argv)
    tools = args.tools.split(",")
    pythons = {
        "after": sys.executable,
        "after_list": sys.executable,
        "before": args.before_python,
        "before_count": args.before_python,
        **PEERS,
    }
    if args.settings is None:
        chosen = list(SETTINGS)
    elif args.settings == "none":  # only the extra tables
        chosen = []
    else:
        chosen = [SETTINGS[int(i)] for i in args.settings.split(",")]
    folder = Path(harness.RESULTS if args.out_dir is None else args.out_dir)
    tmp = Path("/tmp") / f"{NAME}-data"
    tmp.mkdir(exist_ok=True)
    payload: dict[str, Any] = {
        "when": harness.timestamp(),
        "machine": harness.machine_info(),
        "lam": LAM,
        "time_limit": args.time_limit,
        "rows": [],
        "memory": [],
        "partial": [],
        "iteration": [],
    }
    old = harness.read_results(NAME, folder) if args.merge else None
    if old:
        old["when"] = f"{old['when']}, updated {payload['when']}"
        old["machine"] = payload["machine"]
        if not args.skip_extra:  # the tools' extra tables are measured again
            for table in ("memory", "partial", "iteration"):
                old[table] = [r for r in old[table] if r.get("tool") not in tools]
        payload = old
    timeout = args.time_limit + 60
    for name, depth, eps in chosen:
        npz = str(tmp / f"{name}.npz")
        shape = harness.call_in_child(f"{NAME}:write_npz", name, npz, timeout=300)
        row: dict[str, Any] = {"dataset": name, "depth": depth, "epsilon": eps, **shape}
        same = [
            r
            for r in payload["rows"]
            if (r["dataset"], r["depth"], r["epsilon"]) == (name, depth, eps)
        ]
        if same:
            row = same[0]
        else:
            payload["rows"].append(row)
        for tool in tools:
            python = pythons.get(tool)
            if not python or not Path(python).exists():
                row[tool] = {"failed": "not installed"}
                continue
            if tool in ("after", "after_list", "before", "before_count"):
                row[tool] = _call(
                    "ours",
                    npz,
                    depth,
                    eps,
                    args.time_limit,
                    None,
                    False,
                    # after, before_count: count only; after_list, before: the listable set
                    tool in ("after", "before_count"),
                    python=python,
                    timeout=timeout,
                )
            elif tool == "praxis":
                row[tool] = _call("praxis", npz, depth, eps, python=python, timeout=timeout)
            else:
                row[tool] = _call(
                    "treefarms",
                    npz,
                    depth,
                    eps,
                    args.time_limit,
                    python=python,
                    timeout=timeout,
                )
            print(name, depth, eps, tool, _brief(row[tool]), flush=True)
            _write(payload, folder)
    if not args.skip_extra:
        npz = str(tmp / "compas-binary.npz")
        harness.call_in_child(f"{NAME}:write_npz", "compas-binary", npz, timeout=300)
        for tool in ("before", "after"):
            python = pythons.get(tool)
            if tool not in tools or not python:
                continue
            for limit in MEMORY_LIMITS:
                r = _call(
                    "ours",
                    npz,
                    4,
                    0.2,
                    args.time_limit,
                    limit,
                    False,
                    python=python,
                    timeout=timeout,
                )
                r.update(tool=tool, limit_mb=limit)
                payload["memory"].append(r)
                print("memory", tool, limit, _brief(r), flush=True)
            for limit in (0.3, 1.0, 3.0):
                r = _call("ours", npz, 5, 0.2, limit, None, False, python=python, timeout=timeout)
                r.update(tool=tool, time_limit=limit)
                payload["partial"].append(r)
                print("partial", tool, limit, _brief(r), flush=True)
            r = _call(
                "ours", npz, 4, 0.05, args.time_limit, None, True, python=python, timeout=timeout
            )
            r.update(tool=tool)
            payload["iteration"].append(r)
            print("iteration", tool, _brief(r), flush=True)
            _write(payload, folder)
    _write(payload, folder)


def _brief(r: dict[str, Any]) -> str:
    if "failed" in r:
        return f"FAILED {r['failed']}"
    keys = ("cpu", "peak_rss_mb", "count", "status", "codes_per_s", "trees_per_s")
    return " ".join(f"{k}={r[k]}" for k in keys if k in r)


def _cell(r: dict[str, Any] | None, key: str, digits: int = 3) -> str:
    if not r or "failed" in r:
        return (r or {}).get("failed", "–")
    return harness.fmt(r.get(key), digits)


def _count(r: dict[str, Any] | None) -> str:
    if not r or "failed" in r:
        return "–"
    text = f"{float(r['count_float']):.4g}"
    if r.get("complete") is False:
        text += f" (partial: {r.get('status')})"
    return text


def _sci(v: float | None) -> str:
    return "–" if v is None else f"{v:.3g}"


def _ratio(a: dict[str, Any] | None, b: dict[str, Any] | None, key: str) -> str:
    if not a or not b or "failed" in a or "failed" in b or not b.get(key):
        return "–"
    return f"{a[key] / b[key]:.2f}"


def render(payload: dict[str, Any]) -> str:
    lines = [
        "# Rashomon sets at large epsilon (issue 42)",
        "",
        f"{payload['when']}; lam {payload['lam']}; 2 shared cores, load "
        f"{payload['machine']['load_average']}; each run a fresh child process. CPU = the "
        "build's CPU seconds in the child; RSS = its peak resident set (whole process). "
        "Ratios: ours / peer (below 1: we are faster / smaller). `before`: main before this "
        "change (the listable set); `before_count`: main, `rashomon(count_only=True)`; "
        "`after_list`: `rashomon()` after it (listable); `after`: "
        "`rashomon(count_only=True)`. The memory, partial and iteration tables use the "
        "listable set. Written by `benchmarks/rashomon_large_eps.py`.",
        "",
        "## Count (build + count)",
        "",
    ]
    header = ["setting"]
    for tool in TABLE_TOOLS:
        header += [f"{tool} count", f"{tool} CPU s", f"{tool} RSS MB"]
    header += ["after/before_count CPU", "after/PRAXIS CPU", "after/PRAXIS RSS"]
    rows = []
    for row in payload["rows"]:
        cells = [f"{row['dataset']} d{row['depth']} eps {row['epsilon']}"]
        for tool in TABLE_TOOLS:
            r = row.get(tool)
            cells += [_count(r), _cell(r, "cpu"), _cell(r, "peak_rss_mb", 4)]
        cells += [
            _ratio(row.get("after"), row.get("before_count"), "cpu"),
            _ratio(row.get("after"), row.get("praxis"), "cpu"),
            _ratio(row.get("after"), row.get("praxis"), "peak_rss_mb"),
        ]
        rows.append(cells)
    lines += harness.md_table(header, rows)
    lose = [
        f"{row['dataset']} d{row['depth']} eps {row['epsilon']} "
        f"({_ratio(row.get('after'), row.get('praxis'), 'cpu')}x PRAXIS' CPU)"
        for row in payload["rows"]
        if _ratio(row.get("after"), row.get("praxis"), "cpu") not in ("–",)
        and float(_ratio(row.get("after"), row.get("praxis"), "cpu")) > 1.0
    ]
    lines += [
        "",
        "Counts differ from PRAXIS' by design (it rounds lam * n and bounds by a heuristic "
        "tree; benchmarks/rashomon.py compares the sets tree by tree). Where the count-only "
        "build loses on CPU: " + ("; ".join(lose) if lose else "nowhere") + ".",
    ]
    for note in payload.get("notes", []):
        lines += ["", f"* {note}"]
    if payload["memory"]:
        lines += [
            "",
            "## memory_limit_mb (compas d4 eps 0.2)",
            "",
            "Growth = peak RSS - RSS before the build; the target is growth <= 1.1 x limit + 50.",
            "",
        ]
        mrows = []
        for r in payload["memory"]:
            growth = None if "failed" in r else r["peak_rss_mb"] - r["rss_before_mb"]
            ok = None if growth is None else growth <= 1.1 * r["limit_mb"] + 50
            mrows.append(
                [
                    r["tool"],
                    harness.fmt(r["limit_mb"]),
                    harness.fmt(growth, 4),
                    "yes" if ok else ("no" if ok is not None else "–"),
                    _count(r),
                    _cell(r, "cpu"),
                    str(r.get("optimum_first", "–")),
                ]
            )
        lines += harness.md_table(
            ["odtkit", "limit MB", "RSS growth MB", "held", "count", "CPU s", "optimum is tree 0"],
            mrows,
        )
    if payload["partial"]:
        lines += ["", "## Partial sets (compas d5 eps 0.2, time limits)", ""]
        prow = [
            [
                r["tool"],
                harness.fmt(r["time_limit"]),
                _count(r),
                _sci(r.get("count_upper_bound")),
                str(r.get("optimum_first", "–")),
                _cell(r, "cpu"),
            ]
            for r in payload["partial"]
        ]
        lines += harness.md_table(
            ["odtkit", "time_limit s", "count found", "upper bound", "optimum is tree 0", "CPU s"],
            prow,
        )
    if payload["iteration"]:
        lines += ["", "## Iteration (compas d4 eps 0.05, the complete set)", ""]
        irow = [
            [r["tool"], _count(r), _cell(r, "codes_per_s"), _cell(r, "trees_per_s")]
            for r in payload["iteration"]
        ]
        lines += harness.md_table(
            ["odtkit", "trees", "codes / s (first 1 M)", "Tree objects / s (first 200 k)"],
            irow,
        )
    return "\n".join(lines) + "\n"


def _write(payload: dict[str, Any], folder: Path) -> None:
    harness.write_results(NAME, payload, render(payload), out_dir=folder)


if __name__ == "__main__":
    main()

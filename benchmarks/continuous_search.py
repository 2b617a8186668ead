"""odtkit's exact search over every threshold against ConTree, side by side (issue 23).

ConTree (``pip install pycontree``; Briţa, van der Linden & Demirović, AAAI 2025) searches
depth-limited trees directly on continuous columns and certifies them over every threshold. It
runs in its own interpreter (``--contree-python``, default ``$ODTKIT_CONTREE_PYTHON``, else this
one), e.g. ``python3 -m venv /tmp/venv-contree && /tmp/venv-contree/bin/pip install pycontree
numpy scikit-learn pandas``. odtkit's side is ``odtkit.core.search_numeric`` (the exact search of
issue 23); on a checkout without it the script falls back to the guessed-threshold dp (a
certificate over the guessed binarization only) and says so in the report.

Every setting (tool, dataset, depth, lam) runs in a fresh child process, so its peak RSS
(``ru_maxrss``) is its own; the child repeats the fit up to ``--reps`` times (median time; a run
that hit its limit or took more than 20 s is not repeated). Training errors are recomputed from
each tool's own predictions on the raw rows (``np.count_nonzero(pred != y)``), and our objective
is re-scored as ``errors / n + lam * leaves`` against the one the search reports. ConTree has no
per-leaf penalty in the units we use, so lam = 0 is the side-by-side and the lams > 0 are ours
alone. ConTree reports no lower bound: "certified" is its ``is_within_time_limit()``.

Datasets (all offline, built in the parent and handed to the children as ``.npz``):

* ``breast_cancer``, ``wine``: scikit-learn's bundled ``load_breast_cancer``, ``load_wine``;
* ``digits38``: ``load_digits`` restricted to the digits 3 and 8 (label 1 = digit 8), each
  8x8 image pooled to 4x4 by summing its non-overlapping 2x2 pixel blocks: column ``p{i}{j}``
  (i, j in 0..3) is the sum of pixels (2i, 2j), (2i, 2j+1), (2i+1, 2j), (2i+1, 2j+1), 0..64;
* ``synthetic``: ``make_classification(n_samples=2000, n_features=10, random_state=0)``
  (scikit-learn's other defaults: 2 informative, 2 redundant features, 2 classes);
  ``synthetic:SEED`` (e.g. ``--datasets synthetic:42``) takes ``random_state=SEED`` instead;
* ``anes96``: statsmodels' bundled 1996 American National Election Study, label ``vote``, the
  nine columns other than ``logpopul`` (a monotone copy of ``popul``: the same splits);
* ``fair``: statsmodels' bundled affairs survey (Fair 1978), label ``affairs > 0``, its eight
  other columns.

Writes benchmarks/results/continuous_search.json and continuous_search.md (rewritten after every
row, so an interrupted run leaves what it measured).

Usage: ``PYTHONPATH=src python benchmarks/continuous_search.py [--quick] [--time-limit S]
[--datasets A,B] [--depths 2,3] [--lams 0,0.005] [--reps N] [--tools contree,ours]
[--start greedy|guess] [--contree-python PATH] [--out-dir DIR] [--name STEM] [--report-only]``

``--quick``: a 20 s limit, depths 2 and 3, lams 0 and 0.02, one repetition (flags given
explicitly win). ``continuous_search_synthetic42.{json,md}`` is the harder synthetic table,
``--datasets synthetic:42 --depths 3,4 --lams 0 --reps 1 --name continuous_search_synthetic42``.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _harness as harness
import numpy as np

NAME = "continuous_search"  #: this module, and the default name of its results
DATASETS = ("breast_cancer", "wine", "digits38", "synthetic", "anes96", "fair")
DEPTHS = (2, 3, 4)
LAMS = (0.0, 0.005, 0.02)
TIME_LIMIT = 120.0
QUICK = {"time_limit": 20.0, "depths": (2, 3), "lams": (0.0, 0.02), "reps": 1}
#: |our objective - errors/n - lam*leaves| above this is a re-scoring mismatch
TOLERANCE = 1e-9
#: a setting whose peak RSS exceeds this misses the issue's memory target
MEMORY_TARGET_MB = 1024.0


# ------------------------------------------------------------------------------------ data
def load(name: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(X float64 (n, m), y int32 codes 0..K-1, column names)`` of dataset ``name``."""
    from sklearn import datasets as skd

    if name == "breast_cancer":
        b = skd.load_breast_cancer()
        X, y, cols = b.data, b.target, list(b.feature_names)
    elif name == "wine":
        b = skd.load_wine()
        X, y, cols = b.data, b.target, list(b.feature_names)
    elif name == "digits38":
        X, y = pooled_digits38()
        cols = [f"p{i}{j}" for i in range(4) for j in range(4)]
    elif name == "synthetic" or name.startswith("synthetic:"):
        seed = int(name.partition(":")[2] or 0)
        X, y = skd.make_classification(n_samples=2000, n_features=10, random_state=seed)
        cols = [f"x{j}" for j in range(10)]
    elif name == "anes96":
        import statsmodels.api as sm

        frame = sm.datasets.anes96.load_pandas().data
        y = frame["vote"].to_numpy()
        frame = frame.drop(columns=["vote", "logpopul"])
        X, cols = frame.to_numpy(), [str(c) for c in frame.columns]
    elif name == "fair":
        import statsmodels.api as sm

        frame = sm.datasets.fair.load_pandas().data
        y = (frame["affairs"].to_numpy() > 0).astype(int)
        frame = frame.drop(columns=["affairs"])
        X, cols = frame.to_numpy(), [str(c) for c in frame.columns]
    else:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    _, codes = np.unique(np.asarray(y), return_inverse=True)
    return np.ascontiguousarray(X, dtype=np.float64), codes.astype(np.int32), cols


def pooled_digits38() -> tuple[np.ndarray, np.ndarray]:
    """Digits 3 and 8 of ``load_digits``, 8x8 images summed over 2x2 blocks to 16 columns
    (row-major over the 4x4 blocks); label 1 for an 8."""
    from sklearn.datasets import load_digits

    d = load_digits()
    keep = np.isin(d.target, (3, 8))
    images = d.images[keep]  # (n, 8, 8): [row, column]
    pooled = images.reshape(-1, 4, 2, 4, 2).sum(axis=(2, 4)).reshape(-1, 16)
    return pooled, (d.target[keep] == 8).astype(int)


def write_npz(name: str, folder: Path) -> Path:
    X, y, cols = load(name)
    path = folder / f"{name.replace(':', '-')}.npz"
    np.savez(path, X=X, y=y, columns=np.array(cols))
    return path


# ------------------------------------------------------------------------ child: ConTree
def contree_child(npz: str, depth: int, limit: float, reps: int) -> dict[str, Any]:
    """Child side, in ConTree's interpreter (numpy + pycontree only): fit, predict, count."""
    import warnings

    from pycontree import ConTree

    data = np.load(npz)
    X, y = data["X"], data["y"]
    base_rss = harness.peak_rss_mb()

    def once() -> dict[str, Any]:
        model = ConTree(max_depth=depth, time_limit=limit)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Fitting exceeds time limit." is read below
            model.fit(X, y)
        elapsed = time.perf_counter() - start
        pred = np.asarray(model.predict(X))
        return {
            "time": elapsed,
            # pycontree reports no bound; within the time limit its search is exact (max_gap 0)
            "certified": bool(model._config.is_within_time_limit()),
            "errors": int(np.count_nonzero(pred != y)),
            "leaves": int(model.get_num_leaf_nodes()),
            "tree_depth": int(model.get_depth()),
        }

    runs = harness.repeat(
        once, reps, again=lambda r: r["certified"] and r["time"] <= harness.LONG_RUN
    )
    out = dict(runs[len(runs) // 2])
    out["time"] = statistics.median(r["time"] for r in runs)
    out["times"] = [r["time"] for r in runs]
    import pycontree

    out["version"] = getattr(pycontree, "__version__", None) or harness.dist_version("pycontree")
    out["peak_rss_mb"] = harness.peak_rss_mb()
    out["rss_before_fit_mb"] = base_rss
    return out


# --------------------------------------------------------------------------- child: odtkit
def ours_child(
    npz: str, lam: float, depth: int, limit: float, reps: int, start: str
) -> dict[str, Any]:
    """Child side, in odtkit's interpreter: the exact search (or the guessed-threshold dp
    where ``search_numeric`` does not exist yet), predictions on the raw rows, re-scoring."""
    import pandas as pd

    data = np.load(npz)
    X = pd.DataFrame(data["X"], columns=[str(c) for c in data["columns"]])
    y = data["y"]
    try:
        from odtkit import _native
        from odtkit.core import search_numeric

        if not hasattr(_native, "search_numeric"):  # the Python face without its native search
            search_numeric = None
    except ImportError:
        search_numeric = None
    import odtkit.datasets  # noqa: F401  (loaded before the baseline, as the search needs it)

    base_rss = harness.peak_rss_mb()

    def once() -> dict[str, Any]:
        t0 = time.perf_counter()
        if search_numeric is not None:
            r = search_numeric(X, y, lam=lam, max_depth=depth, time_limit=limit, start=start)
            elapsed = time.perf_counter() - t0
            pred = r.model.predict(r.binarizer.transform(X))
            mode = "exact"
        else:
            r, binarizer = _guessed_dp(X, y, lam, depth, limit)
            elapsed = time.perf_counter() - t0
            pred = r.model.predict(binarizer.transform(X))
            mode = "guess-dp"
        # class codes of the Result are positions in sorted(unique(y)) = y's own codes here
        errors = int(np.count_nonzero(np.asarray(pred) != y))
        leaves = int(r.model.n_leaves)
        rescored = errors / len(y) + lam * leaves
        stats = r.stats or {}
        return {
            "mode": mode,
            "time": elapsed,
            "status": str(r.status),
            "certified": mode == "exact" and r.status == "optimal",
            "errors": errors,
            "leaves": leaves,
            "objective": rescored,
            "reported_objective": float(r.objective),
            "rescore_ok": abs(rescored - float(r.objective)) <= TOLERANCE,
            "lower_bound": float(r.lower_bound),
            "n_explored": r.n_explored,
            "search_memory_mb": r.peak_memory_mb,
            "certificate": stats.get("certificate", "binarization"),
            "stats": {
                k: stats[k]
                for k in ("thresholds_evaluated", "subproblems", "memo_entries")
                if k in stats
            },
        }

    runs = harness.repeat(
        once, reps, again=lambda r: r["status"] == "optimal" and r["time"] <= harness.LONG_RUN
    )
    out = dict(runs[len(runs) // 2])
    out["time"] = statistics.median(r["time"] for r in runs)
    out["times"] = [r["time"] for r in runs]
    out["peak_rss_mb"] = harness.peak_rss_mb()
    out["rss_before_fit_mb"] = base_rss
    return out


def _guessed_dp(X: Any, y: np.ndarray, lam: float, depth: int, limit: float) -> tuple[Any, Any]:
    """Today's default: thresholds guessed by boosting, then the dp over that binarization
    (binarization charged to the limit)."""
    from odtkit.core import search_tree
    from odtkit.datasets import Binarizer, Dataset
    from odtkit.methods import GUESS_ROUNDS

    t0 = time.perf_counter()
    binarizer = Binarizer(guess_thresholds=GUESS_ROUNDS).fit(X, y)
    d = Dataset.from_arrays(
        binarizer.transform(X), y, feature_names=list(binarizer.get_feature_names_out())
    )
    left = max(limit - (time.perf_counter() - t0), 0.01)
    return search_tree(d, lam=lam, max_depth=depth, method="dp", time_limit=left), binarizer


# ---------------------------------------------------------------------------------- parent
def contree_python(flag: str | None) -> str:
    return flag or os.environ.get("ODTKIT_CONTREE_PYTHON") or sys.executable


def run_setting(
    tool: str, npz: Path, depth: int, lam: float, args: argparse.Namespace
) -> dict[str, Any]:
    """One setting in its own child; a failed child becomes a row that says why."""
    timeout = args.time_limit + args.reps * harness.LONG_RUN + 180
    try:
        if tool == "contree":
            return harness.call_in_child(
                f"{NAME}:contree_child",
                str(npz),
                depth,
                args.time_limit,
                args.reps,
                timeout=timeout,
                python=contree_python(args.contree_python),
            )
        return harness.call_in_child(
            f"{NAME}:ours_child",
            str(npz),
            lam,
            depth,
            args.time_limit,
            args.reps,
            args.start,
            timeout=timeout,
        )
    except harness.ChildError as exc:
        return {"error": str(exc)[-300:], "timed_out": exc.child.timed_out}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 s, depths 2-3, lams 0, 0.02")
    parser.add_argument("--time-limit", type=float, default=None, help="seconds (default 120)")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--depths", default=None, help="comma-separated (default 2,3,4)")
    parser.add_argument("--lams", default=None, help="comma-separated (default 0,0.005,0.02)")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 3)")
    parser.add_argument("--tools", default="contree,ours", help="contree and/or ours")
    parser.add_argument("--start", default="greedy", choices=("greedy", "guess"))
    parser.add_argument("--contree-python", default=None, help="ConTree's interpreter")
    parser.add_argument("--report-only", action="store_true", help="rebuild the .md only")
    parser.add_argument("--name", default=NAME, help=f"results file stem (default {NAME})")
    harness.add_out_dir(parser)
    args = parser.parse_args(argv)
    if args.report_only:
        harness.rewrite_report(args.name, args.out_dir, render)
        return
    quick = QUICK if args.quick else {}
    if args.time_limit is None:
        args.time_limit = quick.get("time_limit", TIME_LIMIT)
    if args.reps is None:
        args.reps = quick.get("reps", 3)
    depths = _ints(args.depths) if args.depths else list(quick.get("depths", DEPTHS))
    lams = _floats(args.lams) if args.lams else list(quick.get("lams", LAMS))
    names = [s for s in args.datasets.split(",") if s]
    tools = [s for s in args.tools.split(",") if s]
    payload: dict[str, Any] = {
        "started": harness.timestamp(),
        "machine": harness.machine_info(),
        "time_limit": args.time_limit,
        "reps": args.reps,
        "start": args.start,
        "quick": args.quick,
        "contree_python": contree_python(args.contree_python) if "contree" in tools else None,
        "datasets": {},
        "rows": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            try:
                npz = write_npz(name, Path(tmp))
            except ImportError as error:  # anes96, fair without statsmodels
                print(f"skipped {name}: {error}", flush=True)
                payload.setdefault("skipped", {})[name] = str(error)
                continue
            X, y, _ = load(name)
            payload["datasets"][name] = {
                "n": int(X.shape[0]),
                "m": int(X.shape[1]),
                "classes": int(y.max()) + 1,
                "distinct_values": int(sum(np.unique(X[:, j]).size for j in range(X.shape[1]))),
            }
            for depth in depths:
                for tool in tools:
                    for lam in lams if tool == "ours" else [0.0]:
                        t0 = time.perf_counter()
                        row = run_setting(tool, npz, depth, lam, args)
                        row.update(tool=tool, dataset=name, depth=depth, lam=lam)
                        row["wall"] = time.perf_counter() - t0
                        payload["rows"].append(row)
                        print(_progress(row), flush=True)
                        payload["finished"] = harness.timestamp()
                        payload["load_average_end"] = os.getloadavg()
                        harness.write_results(
                            args.name, payload, render(payload), out_dir=args.out_dir
                        )
    print(f"wrote {args.out_dir / args.name}.json and .md")


def _ints(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s]


def _floats(text: str) -> list[float]:
    return [float(s) for s in text.split(",") if s]


def _progress(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"{r['tool']:8s} {r['dataset']:14s} d={r['depth']} lam={r['lam']}: {r['error']}"
    cert = "certified" if r.get("certified") else r.get("status", "not certified")
    return (
        f"{r['tool']:8s} {r['dataset']:14s} d={r['depth']} lam={r['lam']}: "
        f"{r['time']:.3f} s {cert}, {r['errors']} errors, {r['leaves']} leaves, "
        f"{r['peak_rss_mb']:.0f} MB"
    )


# ---------------------------------------------------------------------------------- report
def _cert(r: dict[str, Any] | None) -> str:
    if r is None:
        return "–"
    if "error" in r:
        return "failed"
    if r.get("certified"):
        return "yes"
    if r.get("mode") == "guess-dp" and r.get("status") == "optimal":
        return "guessed thresholds only"
    return str(r.get("status", "no"))


def _bound_errors(r: dict[str, Any], n: int) -> int | str | None:
    """Our lower bound at lam = 0 as a count of errors (rounded up: errors are integers);
    the guessed-threshold dp's bound holds over its binarization only, not over all trees."""
    if "lower_bound" not in r:
        return None
    if r.get("mode") == "guess-dp":
        return "n/a (guess)"
    return int(math.ceil(r["lower_bound"] * n - 1e-6))


def _ok(r: dict[str, Any] | None) -> bool:
    return r is not None and "error" not in r


def side_by_side(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The lam = 0 settings with both tools' rows: ratio ours/ConTree and the hard flag."""
    rows = payload["rows"]
    keyed = {(r["tool"], r["dataset"], r["depth"], r["lam"]): r for r in rows}
    out = []
    for (tool, name, depth, _lam), c in keyed.items():
        if tool != "contree":
            continue
        o = keyed.get(("ours", name, depth, 0.0))
        pair = {"dataset": name, "depth": depth, "contree": c, "ours": o}
        if _ok(c) and _ok(o):
            pair["ratio"] = o["time"] / c["time"] if c["time"] > 0 else math.nan
            pair["hard"] = not c["certified"] and not o["certified"]
        out.append(pair)
    return out


def render(payload: dict[str, Any]) -> str:
    info = payload["datasets"]

    def _base(tool: str) -> str:
        v = [
            r["rss_before_fit_mb"]
            for r in payload["rows"]
            if r["tool"] == tool and "rss_before_fit_mb" in r
        ]
        return f"{min(v):.0f}-{max(v):.0f}" if v else "–"

    machine = payload["machine"]
    modes = {r.get("mode") for r in payload["rows"] if r["tool"] == "ours" and _ok(r)}
    versions = {r.get("version") for r in payload["rows"] if r["tool"] == "contree" and _ok(r)}
    limit = payload["time_limit"]
    lines = [
        "# Exact search over every threshold: odtkit against ConTree (issue 23)",
        "",
        f"Run {payload['started']} to {payload.get('finished', '?')}; "
        f"{machine['cpus']} cpus ({machine['processor'] or machine['machine']}), Python "
        f"{machine['python']}, load average at start {_load(machine['load_average'])}, at end "
        f"{_load(payload.get('load_average_end'))} (a shared machine: other jobs ran too).",
        f"Time limit {limit:g} s per fit; up to {payload['reps']} repetitions (median; a run "
        "at its limit or above 20 s is not repeated); one child process per setting (peak RSS "
        f"its own). pycontree {', '.join(sorted(str(v) for v in versions)) or '–'}; odtkit "
        f"mode: {', '.join(sorted(str(m) for m in modes)) or '–'} (start={payload['start']}).",
        "Errors are recomputed from each tool's own training predictions; our objective is "
        "re-scored as errors/n + lam * leaves. ConTree reports no bound: certified = it "
        "finished within its limit.",
        f"Peak RSS includes the interpreter and its imports: before the first fit ConTree's "
        f"children held {_base('contree')} MB, ours {_base('ours')} MB.",
        "",
    ]
    if "guess-dp" in modes:
        lines += [
            "**odtkit ran the guessed-threshold dp** (`search_numeric` was not available): its "
            "rows are certified over the guessed binarization only, never over all thresholds, "
            "so `certified` is no for them and the ratios are not the issue's comparison.",
            "",
        ]
    lines += ["## Datasets", ""]
    lines += harness.md_table(
        ["dataset", "rows", "columns", "classes", "distinct values (sum over columns)"],
        [[k, v["n"], v["m"], v["classes"], v["distinct_values"]] for k, v in info.items()],
    )
    pairs = side_by_side(payload)
    lines += ["", "## lam = 0: side by side", ""]
    table = []
    for p in pairs:
        c, o = p["contree"], p["ours"]
        n = info[p["dataset"]]["n"]
        table.append(
            [
                p["dataset"],
                p["depth"],
                harness.fmt(c.get("time")) if _ok(c) else c.get("error", "–")[:60],
                _cert(c),
                c.get("errors", "–"),
                harness.fmt(c.get("peak_rss_mb"), 4),
                harness.fmt(o.get("time")) if _ok(o) else (o or {}).get("error", "–")[:60],
                _cert(o),
                o.get("errors", "–") if _ok(o) else "–",
                _bound_errors(o, n) if _ok(o) else "–",
                harness.fmt(o.get("peak_rss_mb"), 4) if _ok(o) else "–",
                harness.fmt(p.get("ratio")),
                "hard" if p.get("hard") else "",
            ]
        )
    lines += harness.md_table(
        [
            "dataset",
            "depth",
            "ConTree s",
            "certified",
            "errors",
            "RSS MB",
            "ours s",
            "certified",
            "errors",
            "bound (errors)",
            "RSS MB",
            "ours/ConTree",
            "",
        ],
        table,
    )
    lines += ["", *summary_lines(payload, pairs)]
    ours_pos = [r for r in payload["rows"] if r["tool"] == "ours" and r["lam"] > 0]
    if ours_pos:
        lines += ["", "## lam > 0: ours alone", ""]
        lines += harness.md_table(
            [
                "dataset",
                "depth",
                "lam",
                "s",
                "status",
                "objective",
                "lower bound",
                "errors",
                "leaves",
                "RSS MB",
                "re-scored",
            ],
            [
                [
                    r["dataset"],
                    r["depth"],
                    r["lam"],
                    harness.fmt(r.get("time")),
                    r.get("status", r.get("error", "–")[:60]),
                    harness.fmt(r.get("objective"), 5),
                    harness.fmt(r.get("lower_bound"), 5),
                    r.get("errors", "–"),
                    r.get("leaves", "–"),
                    harness.fmt(r.get("peak_rss_mb"), 4),
                    ("ok" if r.get("rescore_ok") else "MISMATCH") if _ok(r) else "–",
                ]
                for r in ours_pos
            ],
        )
    mism = [r for r in payload["rows"] if r["tool"] == "ours" and _ok(r) and not r["rescore_ok"]]
    if mism:
        lines += [
            "",
            f"**{len(mism)} re-scoring mismatches** (reported objective != errors/n "
            "+ lam * leaves):",
            "",
        ]
        lines += [
            f"* {r['dataset']} depth {r['depth']} lam {r['lam']}: reported "
            f"{r['reported_objective']!r}, re-scored {r['objective']!r}"
            for r in mism
        ]
    return "\n".join(lines) + "\n"


def summary_lines(payload: dict[str, Any], pairs: list[dict[str, Any]]) -> list[str]:
    """Ratios (geometric means), the hard cases, and the issue's targets."""
    both = [p for p in pairs if "ratio" in p]
    if not both:
        return ["No setting has both tools' rows yet."]
    s = harness.ratio_summary(
        [p["ratio"] for p in both],
        peer_times=[p["contree"]["time"] for p in both],
        hard=[p["hard"] for p in both],
    )
    floor = [p for p in both if p["contree"]["time"] >= harness.PEER_FLOOR and not p["hard"]]
    low = [p for p in both if p["contree"]["time"] < harness.PEER_FLOOR and not p["hard"]]
    g_floor = harness.geomean(p["ratio"] for p in floor)
    g_low = harness.geomean(p["ratio"] for p in low)
    one_sided = [p for p in both if p["contree"]["certified"] != p["ours"]["certified"]]
    lines = [
        "Time ratio ours/ConTree (geometric means; a ratio < 1 means ours is faster):",
        "",
        f"* ConTree >= {harness.PEER_FLOOR * 1000:.0f} ms, not hard: {harness.fmt(g_floor)} "
        f"over {len(floor)} settings (the issue's target: <= 1.0, stretch <= 0.5);",
        f"* ConTree < {harness.PEER_FLOOR * 1000:.0f} ms (start-up and timer noise dominate): "
        f"{harness.fmt(g_low)} over {len(low)};",
        f"* hard (neither certified within {payload['time_limit']:g} s): "
        f"{harness.fmt(s.geomean_hard)} over {s.n_hard} (both at the limit, so about 1 by "
        "construction; compare incumbents and bounds below);",
        f"* all: {harness.fmt(s.geomean)} over {s.n}, worst {harness.fmt(s.worst)}.",
    ]
    if one_sided:
        lines += [
            "",
            "Settings certified by one tool only (the other's time is its limit, so the ratio "
            "is a bound): "
            + "; ".join(f"{p['dataset']} d{p['depth']} ({_who(p)})" for p in one_sided)
            + ".",
        ]
    hard = [p for p in both if p["hard"]]
    if hard:
        lines += ["", "Hard cases (incumbent and bound at the limit):", ""]
        lines += harness.md_table(
            ["dataset", "depth", "ConTree errors", "ours errors", "ours bound (errors)"],
            [
                [
                    p["dataset"],
                    p["depth"],
                    p["contree"]["errors"],
                    p["ours"]["errors"],
                    _bound_errors(p["ours"], payload["datasets"][p["dataset"]]["n"]),
                ]
                for p in hard
            ],
        )
    cert_c = [p for p in both if p["contree"]["certified"]]
    same = [
        p
        for p in cert_c
        if p["ours"]["certified"] and p["ours"]["errors"] == p["contree"]["errors"]
    ]
    disagree = [
        p
        for p in both
        if p["contree"]["certified"]
        and p["ours"]["certified"]
        and p["ours"]["errors"] != p["contree"]["errors"]
    ]
    rss = [r["peak_rss_mb"] for r in payload["rows"] if r["tool"] == "ours" and _ok(r)]
    lines += [
        "",
        "Targets of the issue:",
        "",
        f"* ConTree certifies {len(cert_c)} of {len(both)} lam = 0 settings; ours certifies "
        f"{len(same)} of those with the same training errors"
        + (
            f" (**{len(disagree)} certified disagreements**: "
            + ", ".join(f"{p['dataset']} d{p['depth']}" for p in disagree)
            + ")"
            if disagree
            else ""
        )
        + ";",
        f"* hard cases where ours is no worse than ConTree with a non-zero bound: "
        f"{sum(_no_worse_with_bound(p) for p in hard)} of {len(hard)};",
        f"* our peak RSS: at most {harness.fmt(max(rss, default=math.nan), 4)} MB over "
        f"{len(rss)} settings (target <= {MEMORY_TARGET_MB:.0f} MB).",
    ]
    return lines


def _who(p: dict[str, Any]) -> str:
    return "ConTree" if p["contree"]["certified"] else "ours"


def _no_worse_with_bound(p: dict[str, Any]) -> bool:
    o = p["ours"]
    return o["errors"] <= p["contree"]["errors"] and o["mode"] == "exact" and o["lower_bound"] > 0


def _load(values: Any) -> str:
    return "–" if not values else "/".join(f"{v:.2f}" for v in values)


if __name__ == "__main__":
    main()

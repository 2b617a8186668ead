"""dp against STreeD on planted tables of 5,000-50,000 rows (issue 27, part 1).

A fixed grid of ``odtkit.testing.planted_tree_dataset`` sets (20-60 features, label noise
5-15 %, class imbalance up to 90/10, two and three classes) at search depths 4, 5 and 6 and
lambda 0.005 / 0.002. Every run is a fresh interpreter (``_harness.call_in_child``) that builds
the set, then times one fit (``_peers.run_once``: our ``search_tree(method="dp")`` with the
default strategy, i.e. ``recursive`` at a fixed depth, or pystreed's cost-complex-accuracy
STreeD with ``cost_complexity=lambda``); the tools alternate within each repetition so that
both see the same machine load. ``--before-src`` adds the code before the change (an older
``src`` folder with its native module built in place) as a third tool, ``dp_before``.

Objectives are recomputed from the returned trees (``odtkit.metrics.objective``) and must agree
to 1e-9 between runs that certified optimality. Reported: per-setting median times, the ratio
ours / STreeD (< 1: we are faster), its geometric mean where STreeD needs >= 50 ms apart from
the rest, and the load average before and after the run. Writes
``results/search_large.{json,md}``::

    python benchmarks/search_large.py --before-src /tmp/dpspeed-old/src     # ~15 min
    python benchmarks/search_large.py --quick --out-dir /tmp/sl              # ~3 min smoke
    python benchmarks/search_large.py --report-only                          # .md from .json
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as harness  # noqa: E402

NAME = "search_large"
TOLERANCE = 1e-9
#: a run repeated only while every tool's first time of the setting stays below this (s)
REPEAT_BELOW = 5.0

# (seed, rows, features, planted depth, noise, classes, class weights, search depth, lambda)
GRID: list[tuple[int, int, int, int, float, int, list[float] | None, int, float]] = [
    (1, 5_000, 20, 4, 0.05, 2, None, 4, 0.005),
    (1, 5_000, 20, 4, 0.05, 2, None, 4, 0.002),
    (2, 20_000, 20, 5, 0.10, 2, None, 4, 0.005),
    (3, 50_000, 20, 5, 0.10, 2, None, 4, 0.002),
    (4, 30_000, 30, 4, 0.10, 3, [0.6, 0.3, 0.1], 4, 0.002),
    (5, 5_000, 60, 4, 0.15, 2, [0.7, 0.3], 4, 0.002),
    (6, 5_000, 20, 5, 0.10, 2, None, 5, 0.005),
    (6, 5_000, 20, 5, 0.10, 2, None, 5, 0.002),
    (7, 5_000, 24, 5, 0.10, 2, [0.9, 0.1], 5, 0.005),
    (8, 10_000, 20, 5, 0.15, 3, None, 5, 0.005),
    (9, 20_000, 20, 5, 0.05, 2, [0.8, 0.2], 5, 0.005),
    (10, 5_000, 20, 6, 0.10, 2, None, 6, 0.005),
    (11, 5_000, 16, 6, 0.10, 3, None, 6, 0.005),
    (12, 5_000, 16, 6, 0.05, 2, [0.9, 0.1], 6, 0.002),
]
#: the --quick subset: one setting per depth
QUICK = [0, 6, 12]


def spec_of(entry: tuple) -> dict[str, Any]:
    seed, n, p, planted, noise, k, weights, depth, lam = entry
    return dict(
        seed=seed,
        n=n,
        p=p,
        planted=planted,
        noise=noise,
        n_classes=k,
        class_weights=weights,
        depth=depth,
        lam=lam,
    )


def label(spec: dict[str, Any]) -> str:
    extra = f" k{spec['n_classes']}" if spec["n_classes"] != 2 else ""
    if spec["class_weights"]:
        extra += " w" + "/".join(f"{w:g}" for w in spec["class_weights"])
    return (
        f"{spec['n']}x{spec['p']} d{spec['planted']} noise {spec['noise']:g}{extra}, "
        f"depth {spec['depth']}, λ {spec['lam']:g}"
    )


# ----------------------------------------------------------------------------- child side
def child(npz: str, spec: dict[str, Any], tool: str, limit: float) -> dict[str, Any]:
    """One fit of ``tool`` ("dp" or "streed") on the planted set saved in ``npz``.

    The parent builds the set (this checkout's ``planted_tree_dataset``): a ``dp_before`` child
    runs older code, whose generator may lack the options."""
    import _peers
    import numpy as np

    from odtkit.datasets import Dataset

    data = np.load(npz)
    X, y = data["X"], data["y"]
    names = tuple(f"x{j}" for j in range(X.shape[1]))
    d = Dataset(X, y, np.arange(spec["n_classes"]), names, label(spec))
    row = _peers.run_once(tool, d, spec["lam"], spec["depth"], limit)
    row["peak_rss_mb"] = harness.peak_rss_mb()
    return row


def build(spec: dict[str, Any], folder: Path) -> str:
    """The planted set of ``spec`` saved as ``.npz`` in ``folder``; its path."""
    import numpy as np

    from odtkit.testing import planted_tree_dataset

    d, _ = planted_tree_dataset(
        spec["seed"],
        spec["n"],
        spec["p"],
        spec["planted"],
        spec["noise"],
        n_classes=spec["n_classes"],
        class_weights=spec["class_weights"],
    )
    path = folder / f"planted-{spec['seed']}-{spec['n']}x{spec['p']}.npz"
    np.savez(path, X=np.asarray(d.X), y=np.asarray(d.y))
    return str(path)


# ---------------------------------------------------------------------------- parent side
def run_one(
    npz: str, spec: dict[str, Any], tool: str, limit: float, before: str | None
) -> dict[str, Any]:
    src = before if tool == "dp_before" else None
    name = "streed" if tool == "streed" else "dp"
    try:
        return harness.call_in_child(
            f"{NAME}:child", npz, spec, name, limit, timeout=limit * 2 + 120, src=src
        )
    except harness.ChildError as exc:
        status = "timeout" if exc.child.timed_out else "error"
        return {"status": status, "optimal": False, "time": math.nan, "error": str(exc)[-300:]}


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    tools = ["dp", "streed"] + (["dp_before"] if args.before_src else [])
    entries = [GRID[i] for i in QUICK] if args.quick else GRID
    rows: list[dict[str, Any]] = []
    folder = Path(tempfile.mkdtemp(prefix="search_large-"))
    for entry in entries:
        spec = spec_of(entry)
        npz = build(spec, folder)
        runs: dict[str, list[dict[str, Any]]] = {t: [] for t in tools}
        for rep in range(args.reps):
            if rep > 0 and not all(
                r[0].get("optimal") and r[0]["time"] < REPEAT_BELOW for r in runs.values()
            ):
                break
            # alternate the order between repetitions as well
            for tool in tools if rep % 2 == 0 else tools[::-1]:
                run = run_one(npz, spec, tool, args.time_limit, args.before_src)
                runs[tool].append(run)
                print(
                    f"{label(spec)} {tool:9s} rep {rep}: {run.get('status')} "
                    f"t={run.get('time', math.nan):.3f} obj={run.get('objective', math.nan):.9f}",
                    flush=True,
                )
        for tool, got in runs.items():
            times = [r["time"] for r in got if r.get("optimal")]
            first = got[0]
            rows.append(
                {
                    **spec,
                    "tool": tool,
                    "status": first.get("status"),
                    "optimal": all(r.get("optimal") for r in got),
                    "time": statistics.median(times) if len(times) == len(got) else math.nan,
                    "times": [r.get("time") for r in got],
                    "objective": first.get("objective"),
                    "n_leaves": first.get("n_leaves"),
                    "n_explored": first.get("n_explored"),
                    "peak_rss_mb": first.get("peak_rss_mb"),
                }
            )
        save(rows, args, final=False)
    shutil.rmtree(folder, ignore_errors=True)
    return rows


def save(rows: list[dict[str, Any]], args: argparse.Namespace, *, final: bool) -> None:
    meta = {
        **harness.machine_info("python", "machine", "cpus"),
        "time_limit": args.time_limit,
        "reps": args.reps,
        "quick": args.quick,
        "before_src": args.before_src,
        "command": args.command,
        "load_average_start": args.load_start,
        "load_average_end": list(os.getloadavg()) if final else None,
        "pystreed": harness.dist_version("pystreed"),
        "written": harness.timestamp(),
    }
    payload = {"meta": meta, "runs": rows}
    markdown = report(rows, meta) if final else None
    harness.write_results(NAME, payload, markdown, out_dir=args.out_dir)


# --------------------------------------------------------------------------------- report
def report(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    def key(r: dict[str, Any]) -> tuple:
        return tuple(r[k] for k in ("seed", "n", "p", "depth", "lam"))

    by: dict[tuple, dict[str, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(key(r), {})[r["tool"]] = r
    has_before = any("dp_before" in tools for tools in by.values())
    load0, load1 = meta.get("load_average_start"), meta.get("load_average_end")
    lines = ["# dp vs STreeD on planted tables of 5,000-50,000 rows (issue 27)", ""]
    lines.append(f"Command: `{meta.get('command')}`")
    lines.append("")
    lines.append(
        f"Written {meta.get('written')}; {meta.get('cpus')} cores shared with other jobs, load "
        f"average {fmt_load(load0)} at the start, {fmt_load(load1)} at the end; pystreed "
        f"{meta.get('pystreed')}; time limit {meta.get('time_limit')} s per run; each run a "
        f"fresh interpreter, the tools alternating; median of up to {meta.get('reps')} "
        f"repetitions while every tool's first run of the setting took < {REPEAT_BELOW:g} s"
        f"{'; QUICK grid' if meta.get('quick') else ''}. Times in seconds: ours is "
        "`search_tree(method='dp')` (default strategy, `recursive` at a fixed depth; "
        "preprocessing and the greedy start included), STreeD's is `fit`. Objectives are "
        "recomputed from the trees with `odtkit.metrics.objective`. Ratio = ours / STreeD "
        "(< 1: we are faster; the target is <= 0.25)."
        + (" `dp before` is the code before this change (today's main)." if has_before else "")
    )
    lines.append("")
    header = ["setting", "dp", "STreeD", "dp / STreeD"]
    if has_before:
        header += ["dp before", "before / STreeD"]
    header += ["objectives"]
    table = []
    ratios: dict[str, list[tuple[float, float]]] = {"dp": [], "dp_before": []}
    mismatches = []
    for tools in by.values():
        spec = next(iter(tools.values()))
        st = tools.get("streed", {})
        t_st = st.get("time", math.nan) if st.get("optimal") else math.nan
        cells = [label(spec)]
        ours = tools.get("dp", {})
        for name in ("dp", "dp_before") if has_before else ("dp",):
            r = tools.get(name, {})
            t = r.get("time", math.nan) if r.get("optimal") else math.nan
            ratio = t / t_st if t_st > 0 else math.nan
            ratios[name].append((ratio, t_st))
            if name == "dp":
                cells += [fmt_time(r), fmt_time(st), harness.fmt(ratio)]
            else:
                cells += [fmt_time(r), harness.fmt(ratio)]
        certified = [r for r in tools.values() if r.get("optimal")]
        objs = [r["objective"] for r in certified]
        same = not objs or max(objs) - min(objs) <= TOLERANCE
        if not same:
            mismatches.append(label(spec))
        cells.append(f"equal ({ours.get('objective', math.nan):.6f})" if same else "**MISMATCH**")
        table.append(cells)
    lines += harness.md_table(header, table)
    lines.append("")
    if mismatches:
        lines.insert(2, f"**Objective mismatch** in: {', '.join(mismatches)}\n")
    lines.append("## Summary (geometric means of dp / STreeD)")
    lines.append("")
    summary = []
    for name in ("dp", "dp_before") if has_before else ("dp",):
        pairs = ratios[name]
        s = harness.ratio_summary(
            [r for r, _ in pairs],
            peer_times=[t for _, t in pairs],
            hard=[not (t >= harness.PEER_FLOOR) for _, t in pairs],
        )
        summary.append(
            [
                "dp (this code)" if name == "dp" else "dp before (main)",
                f"{harness.fmt(s.geomean_floor)} (n={s.n_floor})",
                f"{harness.fmt(s.geomean_hard)} (n={s.n_hard})",
                f"{harness.fmt(s.geomean)} (n={s.n})",
                harness.fmt(s.worst),
            ]
        )
    lines += harness.md_table(
        ["code", "STreeD >= 50 ms", "STreeD < 50 ms", "all", "worst"], summary
    )
    lines.append("")
    if has_before:
        speed = [a / b for (a, _), (b, _) in zip(ratios["dp"], ratios["dp_before"], strict=True)]
        lines.append(
            f"This code / the code before: geometric mean {harness.fmt(harness.geomean(speed))} "
            f"(best {harness.fmt(min(speed, default=math.nan))}, worst "
            f"{harness.fmt(max(speed, default=math.nan))}) over {len(speed)} settings."
        )
        lines.append("")
    return "\n".join(lines) + "\n"


def fmt_time(r: dict[str, Any]) -> str:
    if not r:
        return "–"
    if not r.get("optimal"):
        return f"no proof ({r.get('status')})"
    times = ", ".join(f"{t:.3f}" for t in r.get("times", []) if t is not None)
    return f"{r['time']:.3f}" + (f" ({times})" if len(r.get("times", [])) > 1 else "")


def fmt_load(load: Any) -> str:
    return "–" if not load else " / ".join(f"{v:.2f}" for v in load)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one setting per depth (~3 min)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument(
        "--before-src", default=None, help="src folder of the code before (adds dp_before)"
    )
    parser.add_argument("--report-only", action="store_true")
    harness.add_out_dir(parser)
    args = parser.parse_args(argv)
    args.command = "python benchmarks/search_large.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    args.load_start = list(os.getloadavg())
    if args.report_only:
        harness.rewrite_report(NAME, args.out_dir, lambda data: report(data["runs"], data["meta"]))
        return
    rows = measure(args)
    save(rows, args, final=True)
    print((args.out_dir / f"{NAME}.md").read_text())


if __name__ == "__main__":
    main()

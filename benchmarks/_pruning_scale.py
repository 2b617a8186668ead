"""Part ``scale`` of benchmarks/pruning.py: ``prune`` at real forest sizes, before and after.

Issue 25: ``prune(forest, X, y, lam=1e-3)`` end to end (extraction included, the forest fit
not) on random forests up to 100 trees x depth 10 x 100,000 rows, each case twice in fresh
processes -- the code *before* (an odtkit source folder given by ``--before-src``, its native
module built in place) and the code here -- so both run on the same machine at the same time.
Each row: the time split (extraction, network, flow), the network the max-flow saw, the peak
RSS and a hash of the pruning (equal answers, leaf for leaf). The current code also reports the
reductions over a λ grid and the exact cost–error path.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import time
from pathlib import Path

import _harness as harness
import numpy as np

#: (dataset, N, T, depth, K, path: also the exact path)
CASES = [
    ("synthetic", 10_000, 40, 8, 30, True),
    ("synthetic", 10_000, 100, 12, 20, True),
    ("synthetic", 20_000, 100, 10, 20, True),
    ("adult", 45_222, 200, 12, 18, False),
    ("synthetic", 100_000, 100, 10, 20, True),
]
QUICK = [("synthetic", 10_000, 40, 8, 30, True), ("synthetic", 20_000, 100, 10, 20, False)]
#: λ of the reduction grid (the current code only: the code before has no reductions)
GRID = (1e-4, 1e-3, 1e-2, 1e-1)


def forest_data(name, N, K):
    """(X, y) of a forest case: the adult set from ../shared/data, or make_classification(N, K);
    None when the data is absent."""
    if name == "adult":
        p = harness.shared_file("pystreed/fairness/adult-binarized.csv")
        if p is None:
            return None
        raw = np.loadtxt(p)
        return raw[:N, 1:], raw[:N, 0].astype(int)
    from sklearn.datasets import make_classification

    return make_classification(N, K, n_informative=min(K, 10), random_state=1)


def _forest(X, y, T, depth, cache):
    """The forest, fitted once per case and pickled in ``cache`` (the fit is not measured)."""
    from sklearn.ensemble import RandomForestClassifier

    path = None
    if cache:
        path = Path(cache) / f"rf-{X.shape[0]}x{X.shape[1]}-T{T}-d{depth}.pkl"
        if path.exists():
            return pickle.loads(path.read_bytes())
    rf = RandomForestClassifier(T, max_depth=depth, random_state=1, n_jobs=1).fit(X, y)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(rf))
    return rf


def scale_case(name, N, T, depth, K, lam, grid, with_path, cache):
    """Child side: one case with whichever odtkit this process imports."""
    import odtkit
    from odtkit.pruning import cost_error_path, extract, prune

    data = forest_data(name, N, K)
    if data is None:
        return {"dataset": name, "skipped": "data absent"}
    X, y = data
    rf = _forest(X, y, T, depth, cache)
    rss0 = harness.peak_rss_mb()
    t = time.perf_counter()
    res = prune(rf, X, y, lam=lam)
    total = time.perf_counter() - t
    st = res.stats
    leaves = np.concatenate([np.asarray(z, dtype=bool) for z in res.model.leaves])
    row = {
        "dataset": name,
        "N": int(X.shape[0]),
        "T": T,
        "depth": depth,
        "K": int(X.shape[1]),
        "lam": lam,
        "code": os.path.dirname(odtkit.__file__),
        "status": res.status.value,
        "objective": res.objective,
        "gap": res.objective - res.lower_bound,
        "leaves_sha1": hashlib.sha1(np.packbits(leaves).tobytes()).hexdigest(),
        "end_to_end": total,
        "extract_time": st.get("extract_time"),
        "build_time": st.get("build_time"),
        "reduce_time": st.get("reduce_time"),
        "flow_time": st.get("flow_time"),
        "n_nodes": st.get("n_nodes"),
        "n_arcs": st.get("n_arcs"),
        "n_arcs_unmerged": st.get("n_arcs_unmerged"),
        "n_forced": st.get("n_forced"),
        "n_dead": st.get("n_dead"),
        "rss_before_mb": rss0,
        "rss_peak_mb": harness.peak_rss_mb(),
        "load": os.getloadavg()[0],
    }
    if grid or with_path:
        d = extract(rf, X, y)
        row["n_entries"] = d.n_entries
        for g in grid:
            t = time.perf_counter()
            r = prune(d, lam=g)
            row[f"grid_{g:g}"] = {
                "time": time.perf_counter() - t,
                "flow_time": r.stats.get("flow_time"),
                "reduce_time": r.stats.get("reduce_time"),
                "n_nodes": r.stats.get("n_nodes"),
                "n_arcs": r.stats.get("n_arcs"),
                "n_arcs_unmerged": r.stats.get("n_arcs_unmerged"),
                "n_forced": r.stats.get("n_forced"),
                "status": r.status.value,
                "objective": r.objective,
            }
        if with_path:
            t = time.perf_counter()
            path = cost_error_path(d)
            row.update(
                path_time=time.perf_counter() - t,
                path_vertices=len(path),
                path_cuts=path.n_cuts,
                path_arcs=path.stats.get("n_arcs"),
                path_status=path.status.value,
                rss_after_path_mb=harness.peak_rss_mb(),
            )
    return row


def part_scale(args):
    """Parent side: every case before (``--before-src``) and after, one fresh process each."""
    rows = []
    cases = QUICK if args.quick else CASES
    for name, N, T, depth, K, with_path in cases:
        versions = [("after", None)]
        if args.before_src:
            versions.insert(0, ("before", args.before_src))
        for version, src in versions:
            current = version == "after"
            try:
                row = harness.call_in_child(
                    "_pruning_scale:scale_case",
                    name,
                    N,
                    T,
                    depth,
                    K,
                    args.cut_lam,
                    list(GRID) if current else [],
                    with_path and (current or N <= 20_000),
                    args.forest_cache,
                    timeout=args.cut_case_timeout,
                    src=src,
                )
            except harness.ChildError as exc:
                row = {"dataset": name, "N": N, "T": T, "depth": depth, "error": str(exc)}
            row["version"] = version
            rows.append(row)
            print({k: v for k, v in row.items() if not k.startswith("grid_")}, flush=True)
    return rows


def _fmt(x, digits=3):
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return ""
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    return f"{x:.{digits}g}"


def scale_section(rows):
    """Markdown for the ``scale`` part."""
    if not rows:
        return []
    key = ("dataset", "N", "T", "depth")
    by_case = {}
    for r in rows:
        if "error" in r or "skipped" in r:
            continue
        by_case.setdefault(tuple(r[k] for k in key), {})[r["version"]] = r
    lam = next((r["lam"] for r in rows if "lam" in r), None)
    out = [
        f"## Pruning at forest sizes, before and after (`prune(forest, X, y, lam={lam:g})`)",
        "",
        "Each case runs twice, each time in a fresh process: `before` is the code before "
        "issue 25 (given by `--before-src`), `after` is this code. Times are in seconds and "
        "cover extraction, network and flow; the forest fit is not timed. `network` is what "
        "the max-flow ran on: nodes and arcs. `rss` is the process's peak resident set, and "
        "it includes X and the forest. `same` means the two prunings are equal leaf for leaf "
        "(a hash of the leaf masks) and the objectives agree to 1e-9.",
        "",
        "| dataset | N | T | depth | version | end to end | extract | network | flow | "
        "nodes | arcs | rss MB | objective | speed-up | same | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case, v in by_case.items():
        before, after = v.get("before"), v.get("after")
        for name in ("before", "after"):
            r = v.get(name)
            if r is None:
                continue
            network = (r.get("build_time") or 0.0) + (r.get("reduce_time") or 0.0)
            speed = same = ""
            if name == "after" and before is not None:
                speed = f"{before['end_to_end'] / r['end_to_end']:.1f}x"
                same = (
                    "yes"
                    if before["leaves_sha1"] == r["leaves_sha1"]
                    and abs(before["objective"] - r["objective"]) <= 1e-9
                    else "**no**"
                )
            out.append(
                "| "
                + " | ".join(
                    [
                        case[0],
                        _fmt(case[1]),
                        _fmt(case[2]),
                        _fmt(case[3]),
                        name,
                        _fmt(r["end_to_end"]),
                        _fmt(r.get("extract_time")),
                        _fmt(network),
                        _fmt(r.get("flow_time")),
                        _fmt(r.get("n_nodes")),
                        _fmt(r.get("n_arcs")),
                        _fmt(r["rss_peak_mb"], 4),
                        f"{r['objective']:.10g}",
                        speed,
                        same,
                        f"{r['load']:.1f}",
                    ]
                )
                + " |"
            )
        del after
    out += [
        "",
        "The reductions over λ (after only). Each cell shows the arcs the max-flow ran on, then "
        "the seconds of that `prune` on the extracted data. The first column gives the arcs of "
        "the uncompressed network at that λ (the `before` network, in arcs).",
        "",
        "| dataset | N | T | depth | uncompressed arcs | "
        + " | ".join(f"λ={g:g}" for g in GRID)
        + " |",
        "|---|---|---|---|---|" + "---|" * len(GRID),
    ]
    for case, v in by_case.items():
        r = v.get("after")
        if r is None or f"grid_{GRID[0]:g}" not in r:
            continue
        before = v.get("before")
        cells = []
        for g in GRID:
            c = r[f"grid_{g:g}"]
            cells.append(f"{_fmt(c['n_arcs'])} arcs, {_fmt(c['time'])} s")
        out.append(
            f"| {case[0]} | {_fmt(case[1])} | {_fmt(case[2])} | {_fmt(case[3])} | "
            f"{_fmt(before.get('n_arcs')) if before else ''} | " + " | ".join(cells) + " |"
        )
    paths = [(c, v) for c, v in by_case.items() if "path_time" in v.get("after", {})]
    if paths:
        out += [
            "",
            "The exact cost–error path (`cost_error_path` on the extracted data):",
            "",
            "| dataset | N | T | depth | version | time | cuts | vertices | arcs | rss MB |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for case, v in paths:
            for name in ("before", "after"):
                r = v.get(name)
                if r is None or "path_time" not in r:
                    continue
                out.append(
                    f"| {case[0]} | {_fmt(case[1])} | {_fmt(case[2])} | {_fmt(case[3])} | "
                    f"{name} | {_fmt(r['path_time'])} | {_fmt(r['path_cuts'])} | "
                    f"{_fmt(r['path_vertices'])} | {_fmt(r.get('path_arcs'))} | "
                    f"{_fmt(r['rss_after_path_mb'], 4)} |"
                )
    notes = []
    for case, v in by_case.items():
        before, after = v.get("before"), v.get("after")
        if before is None or after is None:
            continue
        target = {(100_000, 100, 10): "≥ 8x and ≤ 2 GB", (10_000, 40, 8): "≥ 3x"}.get(case[1:])
        if target:
            notes.append(
                f"* {case[2]} trees of depth {case[3]} on {case[1]:,} rows: "
                f"{before['end_to_end']:.3g} s -> {after['end_to_end']:.3g} s "
                f"({before['end_to_end'] / after['end_to_end']:.1f}x), peak RSS "
                f"{before['rss_peak_mb']:.0f} -> {after['rss_peak_mb']:.0f} MB (target {target})."
            )
    big = [
        v["after"] for v in by_case.values() if "after" in v and f"grid_{GRID[-1]:g}" in v["after"]
    ]
    if big:
        r = max(big, key=lambda r: r["N"] * r["T"])
        c = r[f"grid_{GRID[-2]:g}"]
        notes.append(
            f"* Where the reductions do not bite (λ >= {GRID[-2]:g} on these forests: no split "
            "pays for its pairs alone) the max-flow still sees the whole network less the dead "
            f"splits and merged pairs: {_fmt(c['n_arcs'])} arcs and {c['time']:.3g} s at "
            f"{r['N']:,} rows; with the exact path that process peaked at "
            f"{r.get('rss_after_path_mb', 0):.0f} MB."
        )
    out += [""] + notes
    errors = [r for r in rows if "error" in r]
    for r in errors:
        out.append(
            f"\n* {r['version']} {r['dataset']} N={r['N']} T={r['T']} depth {r['depth']}: "
            f"failed ({r['error'][:200]})"
        )
    return out + [""]

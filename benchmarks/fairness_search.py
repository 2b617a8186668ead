"""Our native fair DP (search_tree(fairness=...)) against STreeD's group-fairness trees.

The STreeD fairness benchmark sets (``shared/data/pystreed/fairness/NAME-binarized.csv``:
space-separated, no header, column 0 the label, column 1 the binary sensitive attribute, which
is kept out of X and never split on), depths 2 and 3, δ in {0.01, 0.05}, statistical parity
("group-fairness") and equal opportunity ("equality-of-opportunity"), lam = 0 (STreeD optimises
accuracy only). Side by side in one run:

* ours: ``search_tree(Dataset(X, y), lam=0, max_depth=D, fairness=Fairness(notion, a, δ))``;
* STreeD: ``STreeDGroupFairnessClassifier(optimization_task=..., sensitive_feature=0,
  discrimination_limit=δ, max_depth=D)`` fit on the columns (a, X...).

Every tree's accuracy and disparity are re-measured here with odtkit (STreeD's from its own
predictions on its input, through the same ``Fairness`` groups), never copied from a tool. Each
(tool, dataset) runs in its own child process; a setting is repeated up to ``--reps`` times
(median time; a run over 20 s or not certified is not repeated). Time = the whole fit (ours:
group resolution, preprocessing, the unconstrained presolve and the fair search; STreeD: its
fit), data loading excluded.

Writes benchmarks/results/fairness_search.json and .md. Skips cleanly (``[skip]`` on stderr)
when the data directory is absent, and runs ours alone when pystreed is not installed.

Examples::

    python benchmarks/fairness_search.py                        # the full grid (~10 min)
    python benchmarks/fairness_search.py --datasets ricci student-mat --out-dir /tmp/fs
    python benchmarks/fairness_search.py --report-only          # rebuild the .md from the .json
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import _harness as harness
import numpy as np

NAME = "fairness_search"
DATASETS = ["ricci", "student-mat", "student-por", "german-credit", "communities", "adult"]
NOTIONS = {"sp": "group-fairness", "eopp": "equality-of-opportunity"}
DELTAS = [0.01, 0.05]
DEPTHS = [2, 3]
TIME_LIMIT = 300.0
#: STreeD's published-run anchors quoted in the issue (seconds, depth 3).
ANCHORS = {
    ("german-credit", "sp", 0.01, 3): 22.8,
    ("german-credit", "sp", 0.05, 3): 30.8,
    ("communities", "sp", 0.01, 3): 12.4,
}


def data_file(name: str) -> Path | None:
    return harness.shared_file(f"pystreed/fairness/{name}-binarized.csv")


def load(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(a, X, y) of a fairness set, or None when absent."""
    path = data_file(name)
    if path is None:
        return None
    table = np.loadtxt(path, dtype=np.int64)
    return table[:, 1], table[:, 2:].astype(bool), table[:, 0]


def have_streed() -> bool:
    try:
        import pystreed  # noqa: F401
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------------------ child side
def run_once(tool: str, a, X, y, notion: str, delta: float, depth: int, limit: float) -> dict:
    from odtkit import Dataset, Fairness, search_tree

    data = Dataset.from_arrays(X, y)
    fairness = Fairness(notion, protected=a, delta=delta, positive_class=1)
    groups = fairness.groups(data)
    if tool == "ours":
        r = search_tree(data, lam=0.0, max_depth=depth, fairness=fairness, time_limit=limit)
        predicted = r.model.predict(data.X)
        out = {
            "time": r.time,
            "optimal": r.status == "optimal",
            "status": str(r.status),
            "lower_bound": r.lower_bound,
            "n_leaves": r.model.n_leaves,
            "presolve_fair": bool(r.stats.get("presolve_fair")),
            "front_max": r.stats.get("front_max"),
            "fronts_built": r.stats.get("fronts_built"),
            "root_pruned_lagrangian": r.stats.get("root_pruned_lagrangian"),
            "search_memory_mb": r.peak_memory_mb,
        }
    elif tool == "streed":
        from pystreed import STreeDGroupFairnessClassifier

        model = STreeDGroupFairnessClassifier(
            optimization_task=NOTIONS[notion],
            sensitive_feature=0,
            discrimination_limit=delta,
            max_depth=depth,
            time_limit=limit,
        )
        Xa = np.column_stack([a, X.astype(np.int64)])
        t0 = time.perf_counter()
        model.fit(Xa, y)
        elapsed = time.perf_counter() - t0
        predicted = np.asarray(model.predict(Xa))
        # label values -> our class codes (Dataset.from_arrays sorts the labels)
        predicted = np.searchsorted(np.asarray(data.classes), predicted)
        optimal = bool(model.fit_result.is_optimal())
        out = {
            "time": elapsed,
            "optimal": optimal,
            "status": "optimal" if optimal else "time_limit",
        }
    else:
        raise ValueError(f"unknown tool {tool!r}")
    positive = predicted == groups.positive_code
    out["accuracy"] = float(np.mean(predicted == data.y))
    out["gap"] = groups.gap(positive)
    out["fair"] = out["gap"] <= delta + 1e-6
    return out


def child_main(tool: str, name: str, settings: str, limit: float, reps: int) -> None:
    loaded = load(name)
    if loaded is None:
        raise SystemExit(f"dataset {name!r} is not available")
    a, X, y = loaded
    for item in settings.split(","):
        notion, delta_s, depth_s = item.split(":")
        delta, depth = float(delta_s), int(depth_s)
        runs = harness.repeat(
            lambda n=notion, d=delta, D=depth: run_once(tool, a, X, y, n, d, D, limit),
            reps,
            again=lambda r: r["optimal"] and r["time"] <= harness.LONG_RUN,
        )
        out = dict(runs[len(runs) // 2])
        out.update(tool=tool, dataset=name, notion=notion, delta=delta, depth=depth)
        out["time"] = statistics.median(r["time"] for r in runs)
        out["times"] = [r["time"] for r in runs]
        out["reps"] = len(runs)
        out["peak_rss_mb"] = harness.peak_rss_mb()
        out["n_samples"], out["n_features"] = X.shape
        harness.emit(out)


# ----------------------------------------------------------------------------- parent side
def key(row: dict[str, Any]) -> tuple:
    return (row["tool"], row["dataset"], row["notion"], row["delta"], row["depth"])


def settings_of(args: argparse.Namespace) -> list[tuple[str, float, int]]:
    return [(n, d, D) for D in args.depths for n in args.notions for d in args.deltas]


def run_tool(tool: str, name: str, todo: list[tuple[str, float, int]], args) -> list[dict]:
    spec = ",".join(f"{n}:{d!r}:{D}" for n, d, D in todo)
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        tool,
        name,
        spec,
        repr(args.time_limit),
        str(args.reps),
    ]

    def progress(row: dict[str, Any]) -> None:
        print(
            f"{tool:6s} {name:14s} {row['notion']:4s} δ={row['delta']:<5} D={row['depth']}: "
            f"{row['status']:10s} t={row['time']:.4f} acc={row['accuracy']:.4f} "
            f"gap={row['gap']:.5f}",
            flush=True,
        )

    # every setting may use its time limit; the first repetition of a fast one is cheap
    budget = (args.time_limit + 30) * len(todo) + 120
    child = harness.run_child(cmd, timeout=budget, on_row=progress)
    rows = list(child.rows)
    got = {key(r) for r in rows}
    for n, d, D in todo:
        if (tool, name, n, d, D) not in got:
            rows.append(
                {
                    "tool": tool,
                    "dataset": name,
                    "notion": n,
                    "delta": d,
                    "depth": D,
                    "status": "error",
                    "optimal": False,
                    "error": child.reason() if not child.timed_out else "killed at the timeout",
                }
            )
    return rows


def run_grid(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    tools = ["ours"] + (["streed"] if have_streed() else [])
    if "streed" not in tools:
        print("[skip] streed: `pip install pystreed` to include it", file=sys.stderr)
    for name in args.datasets:
        if data_file(name) is None:
            continue
        for tool in tools:
            rows += run_tool(tool, name, settings_of(args), args)
            save(rows, args)
    return rows


def save(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    meta = {
        **harness.machine_info("python", "machine", "processor", "cpus"),
        "time_limit": args.time_limit,
        "reps": args.reps,
        "written": harness.timestamp(),
    }
    harness.write_results(NAME, {"meta": meta, "runs": rows}, out_dir=args.out_dir)


def report(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    by = {key(r): r for r in rows}
    settings = sorted(
        {k[1:] for k in by},
        key=lambda s: (DATASETS.index(s[0]) if s[0] in DATASETS else 99, s[3], s[1], s[2]),
    )
    lines = ["# Fair trees: native fair DP vs STreeD", ""]
    lines.append(
        f"Generated by `python benchmarks/fairness_search.py` ({meta.get('written', '')}; "
        f"{meta.get('processor') or meta.get('machine')}, {meta.get('cpus')} cores shared with "
        f"other jobs; limit {meta.get('time_limit')} s per run, median of up to "
        f"{meta.get('reps')} repetitions). lam = 0, so both optimise accuracy under "
        "|P(ŷ=1|a=0) - P(ŷ=1|a=1)| <= δ (sp) or the same over the rows with y = 1 (eopp). "
        "Accuracy and gap are re-measured with odtkit for both tools. Time: whole fit in "
        "seconds. Ratio = ours / STreeD (< 1: we are faster). ✓ = certified optimal."
    )
    lines.append("")
    header = [
        "dataset",
        "n×p",
        "notion",
        "δ",
        "D",
        "ours s",
        "ours acc",
        "ours gap",
        "STreeD s",
        "STreeD acc",
        "STreeD gap",
        "ratio",
        "note",
    ]
    table, ratios, peer_times, mismatches, shortcut = [], [], [], [], []
    for s in settings:
        ours, peer = by.get(("ours", *s)), by.get(("streed", *s))
        note = []

        def cell_time(r):
            if r is None:
                return "–"
            if r.get("status") == "error":
                return "error"
            mark = " ✓" if r.get("optimal") else f" ({r.get('status')})"
            return f"{r['time']:.4g}{mark}"

        ratio = math.nan
        if ours and peer and ours.get("optimal") and peer.get("optimal"):
            ratio = ours["time"] / peer["time"]
            ratios.append(ratio)
            peer_times.append(peer["time"])
            shortcut.append(bool(ours.get("presolve_fair")))
            if abs(ours["accuracy"] - peer["accuracy"]) > 1e-9:
                what = "higher" if ours["accuracy"] > peer["accuracy"] else "LOWER"
                note.append(f"ours {what} accuracy")
                if what == "LOWER":
                    mismatches.append(s)
        if ours and ours.get("presolve_fair"):
            note.append("unconstrained optimum fair")
        for r, who in ((ours, "ours"), (peer, "STreeD")):
            if r and "gap" in r and not r.get("fair"):
                note.append(f"{who} UNFAIR")
                mismatches.append(s)
        anchor = ANCHORS.get(s)
        if anchor:
            note.append(f"STreeD anchor {anchor} s")
        nxp = f"{ours['n_samples']}×{ours['n_features']}" if ours and "n_samples" in ours else ""
        table.append(
            [
                s[0],
                nxp,
                s[1],
                s[2],
                s[3],
                cell_time(ours),
                harness.fmt(ours.get("accuracy"), 4) if ours else "–",
                harness.fmt(ours.get("gap"), 3) if ours else "–",
                cell_time(peer),
                harness.fmt(peer.get("accuracy"), 4) if peer else "–",
                harness.fmt(peer.get("gap"), 3) if peer else "–",
                harness.fmt(ratio, 3),
                "; ".join(note),
            ]
        )
    lines += harness.md_table(header, table)
    lines.append("")
    certified_peer = [s for s in settings if by.get(("streed", *s), {}).get("optimal")]
    certified_both = [s for s in certified_peer if by.get(("ours", *s), {}).get("optimal")]
    summary = harness.ratio_summary(
        ratios, peer_times=peer_times, hard=[t >= harness.PEER_FLOOR for t in peer_times]
    )
    lines.append("## Summary")
    lines.append("")
    lines.append(
        f"* Settings STreeD certifies: {len(certified_peer)}; we certify "
        f"{len(certified_both)} of them; we certify "
        f"{sum(bool(by.get(('ours', *s), {}).get('optimal')) for s in settings)} of "
        f"{len(settings)} settings in all."
    )
    lines.append(
        f"* Speed ratio ours / STreeD (geometric mean): where STreeD needs ≥ "
        f"{harness.PEER_FLOOR * 1000:.0f} ms: **{harness.fmt(summary.geomean_hard, 3)}** over "
        f"{summary.n_hard} settings (i.e. {harness.fmt(1 / summary.geomean_hard, 3)}× faster); "
        f"the rest: {harness.fmt(summary.geomean_rest, 3)} over {summary.n_rest}; all: "
        f"{harness.fmt(summary.geomean, 3)}; worst single ratio {harness.fmt(summary.worst, 3)}."
    )
    # where the unconstrained optimum is already fair we stop after one unconstrained search
    # and STreeD does not: the ratio over the other settings measures the fair search itself
    searched = harness.ratio_summary(
        [r for r, cut in zip(ratios, shortcut, strict=True) if not cut],
        peer_times=[t for t, cut in zip(peer_times, shortcut, strict=True) if not cut],
        hard=[
            t >= harness.PEER_FLOOR for t, cut in zip(peer_times, shortcut, strict=True) if not cut
        ],
    )
    lines.append(
        f"* The same, only where the unconstrained optimum is NOT fair (our fair search ran): "
        f"≥ 50 ms: **{harness.fmt(searched.geomean_hard, 3)}** over {searched.n_hard} settings "
        f"({harness.fmt(1 / searched.geomean_hard, 3)}× faster); the rest: "
        f"{harness.fmt(searched.geomean_rest, 3)} over {searched.n_rest}."
    )
    target = summary.n_hard > 0 and summary.geomean_hard <= 0.5
    met = target and not mismatches and certified_both == certified_peer
    lines.append(
        "* Target (certify every setting STreeD certifies with the same accuracy, ≥ 2× faster "
        f"in geomean where STreeD needs ≥ 50 ms): "
        f"{'**met**' if met else '**not met**'}."
    )
    if mismatches:
        lines.append(f"* ATTENTION, accuracy or fairness mismatches: {sorted(set(mismatches))}")
    lines.append(
        "* Where our accuracy is higher, STreeD's front dominance test tolerates 1e-4 in the "
        "group sums (GroupFairnessSol::gf_epsilon), so it may drop the entry that leads to the "
        "optimum; ours keeps every distinct disparity (to 2^-40)."
    )
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--notions", nargs="+", default=list(NOTIONS), choices=list(NOTIONS))
    parser.add_argument("--deltas", nargs="+", type=float, default=DELTAS)
    parser.add_argument("--depths", nargs="+", type=int, default=DEPTHS)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT)
    parser.add_argument("--report-only", action="store_true")
    harness.add_out_dir(parser)
    args = parser.parse_args()
    if args.report_only:
        previous = harness.read_results(NAME, args.out_dir)
        if previous is None:
            raise SystemExit(f"no {NAME}.json in {args.out_dir}")
        rows, meta = previous["runs"], previous["meta"]
    else:
        if harness.shared_file("pystreed/fairness") is None:
            return
        rows = run_grid(args)
        meta = harness.read_results(NAME, args.out_dir)["meta"]
    text = report(rows, meta)
    harness.write_results(NAME, None, text, out_dir=args.out_dir)
    print(text)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        tool, name, spec, limit, reps = sys.argv[2:7]
        child_main(tool, name, spec, float(limit), int(reps))
    else:
        main()

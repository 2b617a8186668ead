"""The budgeted search (MaxLeaves, FeatureBudget per split) against the unconstrained dp, and
STreeD's ``max_num_nodes`` beside it.

For each (table, depth D) of the grid: the unconstrained dp ``search_tree(data, lam,
max_depth=D)``, then ``search_tree(..., constraints=[c])`` for c in MaxLeaves(k), k in
{4, 8, 16} (binding or not: the unconstrained optimum's leaf count is in the table), and one
FeatureBudget per split (split costs 1, 2, 3 by feature index mod 3, budget 6). Time is the
median of up to ``--reps`` runs of the whole call (a run over 20 s or not certified is not
repeated); each objective is re-measured by odtkit. The constrained optimum is never below the
unconstrained one, and equals it when the unconstrained tree meets the constraint (the
budgeted dp then returns it at once: ``shortcut``).

STreeD (pystreed from PyPI, benchmark only, in its own interpreter: ``--streed-python``,
default ``$ODTKIT_STREED_PYTHON`` or /tmp/streed-venv-dp/bin/python; skipped when absent) runs
the same tables with ``max_num_nodes = k - 1`` (its nodes are splits) and without it; its trees
are decoded, checked against its predictions, and re-measured by odtkit, so the two optima are
compared on one objective. Its times are its ``fit`` alone (no process start-up).

Writes benchmarks/results/constraints_budget.json and .md.

Examples::

    python benchmarks/constraints_budget.py                       # the grid (~10 min)
    python benchmarks/constraints_budget.py --cases monk2:4 --out-dir /tmp/cb
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import _harness as harness
import numpy as np

from odtkit import metrics, search_tree
from odtkit.constraints import FeatureBudget, MaxLeaves
from odtkit.core._problem import decode_tree
from odtkit.results import Result

NAME = "constraints_budget"
CASES = [
    "monk2:4",
    "monk2:5",
    "tic-tac-toe:4",
    "tic-tac-toe:5",
    "tic-tac-toe:6",
    "car-evaluation:4",
    "car-evaluation:5",
    "car-evaluation:6",
    "compas-binary:4",
    "compas-binary:5",
    "german-credit:4",
]
#: The cases of the lam = 0 comparison with STreeD (the dp without a leaf penalty is slower).
STREED_CASES = [
    "monk2:4",
    "tic-tac-toe:4",
    "tic-tac-toe:5",
    "car-evaluation:4",
    "car-evaluation:5",
    "compas-binary:4",
    "german-credit:3",
]
LEAVES = [4, 8, 16]
LAM = 0.001
TIME_LIMIT = 120.0
#: The dp's time from which a case counts as non-trivial in the summary.
FLOOR = 0.05
STREED_PYTHON = "/tmp/streed-venv-dp/bin/python"


def timed(run: Any, reps: int) -> tuple[float, Result]:
    def once() -> tuple[float, Result]:
        start = time.perf_counter()
        result = run()
        return time.perf_counter() - start, result

    runs = harness.repeat(
        once, reps, again=lambda r: r[1].status == "optimal" and r[0] < harness.LONG_RUN
    )
    return statistics.median(t for t, _ in runs), runs[-1][1]


def feature_budget(data: Any) -> FeatureBudget:
    """Split costs 1, 2, 3 by feature index mod 3, budget 6."""
    costs = {name: 1 + j % 3 for j, name in enumerate(data.feature_names)}
    return FeatureBudget(costs, 6)


def streed_runs(
    data: Any, depth: int, lam: float, python: str | None, limit: float
) -> dict[Any, Any]:
    """STreeD's runs by max_num_nodes (None: unconstrained), re-measured; {} when absent."""
    if python is None or not np.all(data.weights == 1):
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "table.npz"
        np.savez(path, X=data.X, y=data.y)
        nodes = [None, *(k - 1 for k in LEAVES)]
        try:
            answer = harness.call_in_child(
                "_streed_budget:fit",
                str(path),
                lam,
                depth,
                nodes,
                limit,
                timeout=limit * len(nodes) + 120,
                python=python,
            )
        except harness.ChildError as exc:
            print(f"[skip] streed on {data.name} D={depth}: {exc}", flush=True)
            return {}
    runs = {}
    for run in answer["runs"]:
        tree = decode_tree(run["tree"])
        assert np.array_equal(tree.predict(data.X), np.asarray(run["predicted"])), "streed decode"
        runs[run["nodes"]] = {
            "seconds": run["seconds"],
            "optimal": run["optimal"],
            "objective": metrics.objective(tree, data, lam=lam),
            "leaves": tree.n_leaves,
        }
    return runs


def run_case(
    data: Any, name: str, depth: int, lam: float, args: argparse.Namespace, *, streed: bool
) -> list[dict[str, Any]]:
    """The rows of one (table, depth, lam): every setting against the unconstrained dp, and
    (``streed``) the MaxLeaves settings against STreeD's max_num_nodes."""
    # a first call pays the process's one-off costs (lazy imports, the memory probe)
    search_tree(data, lam=lam, max_depth=1, constraints=[MaxLeaves(2)])
    free_time, free = timed(
        lambda: search_tree(data, lam=lam, max_depth=depth, time_limit=args.time_limit),
        args.reps,
    )
    peer = streed_runs(data, depth, lam, args.streed_python, args.time_limit) if streed else {}
    settings: list[tuple[str, Any, int | None]] = [
        (f"MaxLeaves({k})", MaxLeaves(k), k - 1) for k in LEAVES
    ]
    if not streed:
        settings.append(("FeatureBudget(1-3, 6)", feature_budget(data), None))
    rows = []
    for label, constraint, nodes in settings:
        seconds, result = timed(
            lambda c=constraint: search_tree(
                data, lam=lam, max_depth=depth, constraints=[c], time_limit=args.time_limit
            ),
            args.reps,
        )
        row: dict[str, Any] = {
            "dataset": name,
            "n": data.n_samples,
            "p": data.n_features,
            "depth": depth,
            "lam": lam,
            "constraint": label,
            "free_seconds": free_time,
            "free_status": str(free.status),
            "free_objective": free.objective,
            "free_leaves": free.model.n_leaves,
            "seconds": seconds,
            "status": str(result.status),
            "objective": result.objective,
            "leaves": result.model.n_leaves,
            # "shortcut": the presolve's unconstrained optimum met the constraint; "depth": no
            # tree of this depth can break it (the plain dp ran); "": the budgeted dp searched
            "how": (
                "depth"
                if "shortcut" not in result.stats
                else "shortcut"
                if result.stats["shortcut"]
                else ""
            ),
            "binds": result.objective > free.objective + 1e-12,
            "ratio": seconds / free_time,
            # the native searches alone (the last run's), without the Python around them
            "free_native_seconds": free.stats.get("search_seconds", math.nan),
            "native_seconds": result.stats.get("search_seconds", math.nan),
        }
        row["native_ratio"] = row["native_seconds"] / row["free_native_seconds"]
        if nodes is not None and nodes in peer and None in peer:
            s, s_free = peer[nodes], peer[None]
            row.update(
                streed_seconds=s["seconds"],
                streed_optimal=s["optimal"],
                streed_objective=s["objective"],
                streed_leaves=s["leaves"],
                streed_free_seconds=s_free["seconds"],
                streed_ratio=s["seconds"] / s_free["seconds"],
                same_optimum=abs(s["objective"] - result.objective) <= 1e-9,
            )
        print(row, flush=True)
        rows.append(row)
    return rows


def run_grid(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for case in dict.fromkeys(args.cases + args.streed_cases):
        name, depth_text = case.split(":")
        depth = int(depth_text)
        data = harness.load_dataset(name)
        if data is None:
            continue
        if case in args.cases:
            rows += run_case(data, name, depth, LAM, args, streed=False)
        if case in args.streed_cases and args.streed_python:
            rows += run_case(data, name, depth, 0.0, args, streed=True)
    return rows


def _objective(r: dict[str, Any], prefix: str = "") -> str:
    text = f"{r[prefix + 'objective']:.4f} ({r[prefix + 'leaves']})"
    status = r.get(prefix + "status", "optimal")
    return text if status == "optimal" else f"{text} {status}"


def report(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        "# Split budgets in the budgeted dp vs the unconstrained dp, and STreeD's max_num_nodes",
        "",
        f"{meta['timestamp']}; {meta['machine']}; time = median of up to {meta['reps']} runs "
        "of the whole call `search_tree(..., constraints=[c])` (seconds); ratio = constrained "
        "/ unconstrained time of the same solver.",
        "Generated by `python benchmarks/constraints_budget.py`.",
        "",
        f"## lam = {LAM}: the budgeted dp against the unconstrained dp",
        "",
        "how: `shortcut` the unconstrained optimum met the constraint (the presolve certified "
        "it), `depth` no tree of this depth can break it (the plain dp ran), empty: the "
        "budgeted dp searched. native ratio: the same ratio of the native searches' own times "
        "(`stats['search_seconds']`).",
        "",
    ]
    main = [r for r in rows if r["lam"] == LAM]
    header = ["dataset", "n x p", "D", "constraint", "dp s", "dp obj (leaves)", "budget s"]
    header += ["ratio", "native ratio", "budget obj (leaves)", "how"]
    lines += harness.md_table(
        header,
        [
            [
                r["dataset"],
                f"{r['n']} x {r['p']}",
                r["depth"],
                r["constraint"],
                harness.fmt(r["free_seconds"]),
                _objective(r, "free_"),
                harness.fmt(r["seconds"]),
                harness.fmt(r["ratio"]),
                harness.fmt(r["native_ratio"]),
                _objective(r),
                r["how"],
            ]
            for r in main
        ],
    )
    if main:
        hard = [r for r in main if r["free_seconds"] >= FLOOR]
        easy = [r for r in main if r["free_seconds"] < FLOOR]
        binding = [r for r in main if r["binds"]]
        within = sum(r["ratio"] <= 1.5 for r in main)
        lines += [
            "",
            f"Geometric mean ratio {harness.geomean(r['ratio'] for r in hard):.3g} over the "
            f"{len(hard)} settings whose unconstrained dp needs >= {FLOOR * 1000:.0f} ms "
            f"(worst {max((r['ratio'] for r in hard), default=float('nan')):.3g}), "
            f"{harness.geomean(r['ratio'] for r in easy):.3g} over the other {len(easy)}; "
            f"{within} of {len(main)} settings within 1.5x. Where the constraint binds (its "
            f"optimum above the unconstrained one, {len(binding)} settings): "
            f"{harness.geomean(r['ratio'] for r in binding):.3g}, worst "
            f"{max((r['ratio'] for r in binding), default=float('nan')):.3g}. The native "
            "searches alone (`stats['search_seconds']`, without the Python that resolves and "
            "re-checks the constraints, a few ms per call): "
            f"{harness.geomean(r['native_ratio'] for r in hard):.3g} and "
            f"{harness.geomean(r['native_ratio'] for r in easy):.3g}; where it does not bind "
            f"{harness.geomean(r['ratio'] for r in main if not r['binds']):.3g}.",
        ]
    peer = [r for r in rows if r["lam"] == 0.0]
    if peer:
        lines += [
            "",
            "## lam = 0: MaxLeaves(k) against STreeD's max_num_nodes = k - 1",
            "",
            f"pystreed {meta.get('streed_version') or ''} refuses `max_num_nodes` with a "
            "non-zero cost complexity, so this part is at lam = 0 (accuracy; STreeD's task "
            '"accuracy"). STreeD time: its `fit` alone; its trees are decoded, checked against '
            "its predictions and re-measured by odtkit. The budgeted dp skips its presolve at "
            "lam = 0 (there the budget almost always binds and the dp is slow).",
            "",
        ]
        header = ["dataset", "n x p", "D", "constraint", "dp s", "budget s", "ratio"]
        header += ["budget obj (leaves)", "STreeD free s", "STreeD s", "STreeD ratio"]
        header += ["STreeD obj (leaves)", "same optimum", "budget / STreeD"]
        table = []
        for r in peer:
            has = "streed_seconds" in r
            table.append(
                [
                    r["dataset"],
                    f"{r['n']} x {r['p']}",
                    r["depth"],
                    r["constraint"],
                    harness.fmt(r["free_seconds"]),
                    harness.fmt(r["seconds"]),
                    harness.fmt(r["ratio"]),
                    _objective(r),
                    harness.fmt(r["streed_free_seconds"]) if has else "–",
                    harness.fmt(r["streed_seconds"]) if has else "–",
                    harness.fmt(r["streed_ratio"]) if has else "–",
                    _objective(r, "streed_") if has else "–",
                    ("yes" if r["same_optimum"] else "NO") if has else "–",
                    harness.fmt(r["seconds"] / r["streed_seconds"]) if has else "–",
                ]
            )
        lines += harness.md_table(header, table)
        with_streed = [r for r in peer if "streed_seconds" in r]
        if with_streed:
            agree = sum(r["same_optimum"] for r in with_streed)
            lines += [
                "",
                f"The same optimum in {agree} of {len(with_streed)} settings. Constrained / "
                "unconstrained time, geometric mean: ours "
                f"{harness.geomean(r['ratio'] for r in with_streed):.3g}, STreeD's "
                f"{harness.geomean(r['streed_ratio'] for r in with_streed):.3g}. Our "
                "constrained time / STreeD's, geometric mean "
                f"{harness.geomean(r['seconds'] / r['streed_seconds'] for r in with_streed):.3g}.",
            ]
    return "\n".join(lines) + "\n"


def streed_python(arg: str | None) -> str | None:
    candidate = arg or os.environ.get("ODTKIT_STREED_PYTHON") or STREED_PYTHON
    if not Path(candidate).exists():
        print(f"[skip] streed: no interpreter at {candidate}", flush=True)
        return None
    return candidate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=CASES, help="dataset:depth pairs")
    parser.add_argument(
        "--streed-cases", nargs="*", default=STREED_CASES, help="dataset:depth pairs at lam=0"
    )
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT)
    parser.add_argument("--streed-python", default=None)
    harness.add_out_dir(parser)
    args = parser.parse_args()
    args.streed_python = streed_python(args.streed_python)
    rows = run_grid(args)
    meta = {
        "timestamp": harness.timestamp(),
        "machine": ", ".join(f"{k}={v}" for k, v in harness.machine_info().items()),
        "reps": args.reps,
        "lam": LAM,
        "streed_version": "1.4.0" if args.streed_python else None,
    }
    text = report(rows, meta)
    harness.write_results(NAME, {"meta": meta, "runs": rows}, text, out_dir=args.out_dir)
    print(text)


if __name__ == "__main__":
    main()

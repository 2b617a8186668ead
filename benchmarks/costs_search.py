"""The search under a cost objective (issue 39, item 4), side by side with STreeD's
cost-sensitive tasks.

For each bundled table of the search benchmark, depth and cost:

* ``cost-matrix``: a two-class matrix ``[[0, 1], [5, 0]]`` (a missed positive costs 5), or on a
  multi-class table a class-dependent one (a wrong prediction for class ``c`` costs ``c + 1``);
* ``row-costs``: example-dependent costs (every row's wrong predictions cost an integer 1..10
  drawn from a fixed seed, its right one 0),

``search_tree(d, lam=0, max_depth=D, constraints=[cost])`` (odtkit's dp on the reduction of
odtkit.costs) against pystreed's ``STreeDInstanceCostSensitiveClassifier`` given the same
per-row-per-class costs (pystreed is a benchmark-only extra: ``pip install pystreed``), and
against odtkit's own unconstrained dp on the same table and depth (what the cost adds). Both
trees are re-measured by ``odtkit.metrics.cost``; they must agree to 1e-9 when both certify.
STreeD's instance-cost task has no per-leaf penalty, so lam = 0.

Every time is the median of up to ``--reps`` runs in this process (a run over 5 s is not
repeated). Writes benchmarks/results/costs_search.{json,md}.

    python benchmarks/costs_search.py              # the grid (~minutes)
    python benchmarks/costs_search.py --quick      # monk1 and tic-tac-toe, depth 2 and 3
    python benchmarks/costs_search.py --report-only
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import _harness as harness
import numpy as np

DATASETS = list(harness.SEARCH_TABLES)
DEPTHS = [2, 3, 4]
NAME = "costs_search"
TOLERANCE = 1e-9


def costs_for(kind: str, d: Any) -> Any:
    from odtkit.costs import CostMatrix, RowCosts

    K = d.n_classes
    if kind == "cost-matrix":
        if K == 2:
            return CostMatrix([[0, 1], [5, 0]])
        matrix = np.repeat(np.arange(1.0, K + 1)[:, None], K, axis=1)
        matrix[np.arange(K), np.arange(K)] = 0.0
        return CostMatrix(matrix)
    rng = np.random.default_rng(0)
    wrong = rng.integers(1, 11, size=d.n_samples).astype(float)
    L = np.repeat(wrong[:, None], K, axis=1)
    L[np.arange(d.n_samples), d.y] = 0.0
    return RowCosts(L)


def run_dp(d: Any, depth: int, cost: Any, limit: float, reps: int) -> dict:
    from odtkit import metrics
    from odtkit.core import search_tree

    constraints = None if cost is None else [cost]
    seconds, r = harness.median_time(
        lambda: search_tree(d, lam=0.0, max_depth=depth, time_limit=limit, constraints=constraints),
        reps,
    )
    return {
        "time": seconds,
        "objective": r.objective,
        "cost": None if cost is None else metrics.cost(r.model, d, cost),
        "optimal": r.status == "optimal",
        "n_leaves": r.model.n_leaves,
    }


def run_streed(d: Any, depth: int, cost: Any, limit: float, reps: int) -> dict:
    from _peers import streed_tree
    from pystreed import STreeDInstanceCostSensitiveClassifier

    from odtkit import metrics

    X = d.X.astype(np.int64)
    losses = cost.losses(d)

    def fit() -> Any:
        model = STreeDInstanceCostSensitiveClassifier(max_depth=depth, time_limit=limit)
        model.fit(X, losses)
        return model

    seconds, model = harness.median_time(fit, reps)
    tree = streed_tree(model.get_tree())
    assert np.array_equal(tree.predict(d.X), np.asarray(model.predict(X))), "streed decode"
    return {
        "time": seconds,
        "cost": metrics.cost(tree, d, cost),
        "optimal": bool(model.fit_result.is_optimal()),
        "n_leaves": tree.n_leaves,
    }


def run_grid(args: argparse.Namespace) -> list[dict[str, Any]]:
    try:
        import pystreed  # noqa: F401

        have_streed = True
    except ImportError:
        print("[skip] streed: `pip install pystreed` to include it", file=sys.stderr)
        have_streed = False
    rows: list[dict[str, Any]] = []
    for name in args.datasets:
        d = harness.load_dataset(name)
        if d is None:
            continue
        for depth in args.depths:
            base = run_dp(d, depth, None, args.time_limit, args.reps)
            for kind in ("cost-matrix", "row-costs"):
                cost = costs_for(kind, d)
                ours = run_dp(d, depth, cost, args.time_limit, args.reps)
                row: dict[str, Any] = {
                    "dataset": name,
                    "n": d.n_samples,
                    "p": d.n_features,
                    "K": d.n_classes,
                    "depth": depth,
                    "cost": kind,
                    "base": base,
                    "ours": ours,
                    "over_plain": ours["time"] / base["time"],
                }
                if have_streed:
                    peer = run_streed(d, depth, cost, args.time_limit, args.reps)
                    both = ours["optimal"] and peer["optimal"]
                    agree = abs(ours["cost"] - peer["cost"]) <= TOLERANCE * max(1.0, peer["cost"])
                    row |= {
                        "streed": peer,
                        "agree": agree if both else None,
                        "ratio": ours["time"] / peer["time"],
                    }
                rows.append(row)
            print(f"{name} depth={depth} done", file=sys.stderr, flush=True)
    return rows


def report(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    fmt = harness.fmt
    lines = [
        "# The search under a cost objective (issue 39)",
        "",
        f"Generated by `python benchmarks/costs_search.py` on {meta['timestamp']}; time limit "
        f"{meta['time_limit']} s, median of up to {meta['reps']} runs; pystreed "
        f"{meta.get('pystreed')}; {meta.get('machine', '')}.",
        "",
        "lam = 0 (STreeD's instance-cost task has no per-leaf penalty). `cost-matrix`: "
        "[[0, 1], [5, 0]] on two classes, a wrong prediction for class c costs c + 1 on more; "
        "`row-costs`: every row's wrong predictions cost an integer 1..10 (seed 0). Costs are "
        "re-measured from both trees by odtkit.metrics.cost. `x plain`: our time under the cost "
        "over our unconstrained dp's on the same table and depth; `ratio`: ours / STreeD.",
        "",
    ]
    table = []
    for r in rows:
        peer = r.get("streed")
        table.append(
            [
                r["dataset"],
                f"{r['n']}x{r['p']}, K={r['K']}",
                r["depth"],
                r["cost"],
                fmt(r["ours"]["time"]),
                fmt(r["over_plain"], 2),
                fmt(peer["time"]) if peer else "-",
                fmt(r["ratio"], 3) if peer else "-",
                fmt(r["ours"]["cost"], 6),
                fmt(peer["cost"], 6) if peer else "-",
                {True: "yes", False: "NO", None: "n/a"}[r.get("agree")],
            ]
        )
    lines += harness.md_table(
        [
            "dataset",
            "size",
            "depth",
            "cost",
            "ours s",
            "x plain",
            "streed s",
            "ratio",
            "ours cost",
            "streed cost",
            "same optimum",
        ],
        table,
    )
    over = [r["over_plain"] for r in rows]
    slow_over = [r["over_plain"] for r in rows if r["base"]["time"] >= 0.05]
    lines += [
        "",
        f"Our time under a cost over the unconstrained dp: geometric mean "
        f"{fmt(harness.geomean(over), 3)} over {len(over)} settings"
        + (
            f"; {fmt(harness.geomean(slow_over), 3)} over the {len(slow_over)} where the "
            "unconstrained dp needs >= 50 ms."
            if slow_over
            else " (the unconstrained dp needs < 50 ms everywhere)."
        ),
    ]
    paired = [r for r in rows if "streed" in r]
    if paired:
        ratios = [r["ratio"] for r in paired]
        slow = [r["ratio"] for r in paired if r["streed"]["time"] >= 0.05]
        wrong = [r for r in paired if r["agree"] is False]
        lines += [
            "",
            f"Same optimum on {sum(r['agree'] is True for r in paired)} of {len(paired)} "
            f"settings ({len(wrong)} disagreements). Time ours / STreeD: geometric mean "
            f"{fmt(harness.geomean(ratios), 3)} over all {len(ratios)}; "
            + (
                f"{fmt(harness.geomean(slow), 3)} over the {len(slow)} where STreeD needs >= 50 ms "
                f"(max {fmt(max(slow), 3)})."
                if slow
                else "STreeD needs < 50 ms everywhere."
            ),
        ]
        for r in wrong:
            lines += [
                "",
                f"Disagreement: {r['dataset']} depth {r['depth']} {r['cost']}: ours "
                f"{r['ours']['cost']:.10g}, STreeD {r['streed']['cost']:.10g}, both certified.",
            ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--datasets", nargs="*", default=DATASETS)
    harness.add_out_dir(parser)
    args = parser.parse_args()
    args.depths = DEPTHS
    if args.quick:
        args.datasets, args.depths = ["monk1", "tic-tac-toe"], [2, 3]
    if args.report_only:
        harness.rewrite_report(
            NAME, args.out_dir, lambda payload: report(payload["runs"], payload["meta"])
        )
        return
    rows = run_grid(args)
    meta = {
        "timestamp": harness.timestamp(),
        "time_limit": args.time_limit,
        "reps": args.reps,
        "machine": str(harness.machine_info()),
        "pystreed": harness.dist_version("pystreed"),
    }
    path = harness.write_results(
        NAME, {"meta": meta, "runs": rows}, report(rows, meta), out_dir=args.out_dir
    )
    print(path.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()

"""Fair MIPs beside the fair DP and ODTlearn's fair FlowOCT: who certifies what, how fast.

The STreeD fairness sets (``shared/data/pystreed/fairness/NAME-binarized.csv``; column 1, the
sensitive attribute, is kept out of X), lam = 0 (accuracy only), statistical parity and equal
opportunity, δ in {0.01, 0.05}, depth 2 by default. Side by side in one run, per setting:

* ``dp``: the native fair DP, ``search_tree(..., fairness=)``;
* ``flowoct`` / ``pathoct`` / ``rbinoct`` (``--mips``): the fair MIP on HiGHS (1 thread),
  warm-started from the DP's certified tree through ``solve_formulation(start=,
  start_is_optimal=True)`` — what ``odtkit.compare`` does;
* ``odtlearn``: ODTlearn's ``FairSPOCT`` / ``FairEOppOCT`` (CBC, 1 thread) in its own venv
  (``$ODTKIT_ODTLEARN_PYTHON``, see ``_peers.odtlearn_python``), cold as ODTlearn runs.

Every tree's accuracy and disparity are re-measured with odtkit. STreeD's side of the same
settings is ``benchmarks/fairness_search.py``.

Examples::

    python benchmarks/fairness.py                              # default grid, 300 s limits
    python benchmarks/fairness.py --time-limit 120 --odtlearn-limit 60
    python benchmarks/fairness.py --report-only
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import _harness as harness
import numpy as np
from _peers import ODTLEARN_FAIR_CLASSES, run_odtlearn_fair
from fairness_search import load

NAME = "fairness"
DATASETS = ["ricci", "student-mat", "german-credit"]
NOTIONS = ["sp", "eopp"]
DELTAS = [0.01, 0.05]
DEPTHS = [2]
MIPS = ["flowoct", "pathoct"]
TIME_LIMIT = 300.0


def measure(tree_or_pred: Any, data: Any, groups: Any) -> dict[str, float]:
    predicted = tree_or_pred.predict(data.X) if hasattr(tree_or_pred, "predict") else tree_or_pred
    return {
        "accuracy": float(np.mean(predicted == data.y)),
        "gap": groups.gap(predicted == groups.positive_code),
    }


def run_setting(name: str, notion: str, delta: float, depth: int, args: Any) -> list[dict]:
    from odtkit import Dataset, Fairness, search_tree, solve_formulation
    from odtkit.methods import METHODS

    a, X, y = load(name)
    data = Dataset.from_arrays(X, y, name=name)
    fairness = Fairness(notion, protected=a, delta=delta)
    groups = fairness.groups(data)
    base = {"dataset": name, "notion": notion, "delta": delta, "depth": depth}
    base.update(n_samples=data.n_samples, n_features=data.n_features)
    rows = []
    dp = search_tree(data, lam=0.0, max_depth=depth, fairness=fairness, time_limit=args.time_limit)
    rows.append(
        {
            **base,
            "tool": "dp",
            "status": str(dp.status),
            "time": dp.time,
            "objective": dp.objective,
            "bound": dp.lower_bound,
            **measure(dp.model, data, groups),
        }
    )
    harness.emit(rows[-1])
    for mip in args.mips:
        result = solve_formulation(
            METHODS[mip].formulation(),
            data,
            backend="highs",
            start=dp.model,
            start_is_optimal=dp.status == "optimal",
            time_limit=args.time_limit,
            solve_options={"threads": 1},
            lam=0.0,
            max_depth=depth,
            fairness=fairness,
        )
        model = result.stats.get("model_ir")
        rows.append(
            {
                **base,
                "tool": mip,
                "status": str(result.status),
                "time": result.time,
                "build_time": result.stats.get("build_time"),
                "objective": result.objective,
                "bound": result.lower_bound,
                "size": None if model is None else list(model.A.shape) + [int(model.A.nnz)],
                **(measure(result.model, data, groups) if result.model is not None else {}),
            }
        )
        harness.emit(rows[-1])
    if not args.no_odtlearn and notion in ODTLEARN_FAIR_CLASSES:
        out = run_odtlearn_fair(data, a, notion, depth, delta, args.odtlearn_limit)
        row = {**base, "tool": "odtlearn", "limit": args.odtlearn_limit}
        if out.get("available") and "predictions" in out:
            pred = out.pop("predictions")
            row.update(
                status=out["status"].lower(),
                time=out["time"],
                objective=float(np.mean(pred != data.y)),
                # CBC's bound on the correct count, in error-fraction units
                bound=1.0 - out["correct_bound"] / data.n_samples,
                **measure(pred, data, groups),
            )
        else:
            row.update(status=out.get("status", "unavailable"), reason=out.get("reason", ""))
        rows.append(row)
        harness.emit(row)
    return rows


def report(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    tools = [
        t
        for t in ("dp", "flowoct", "pathoct", "rbinoct", "odtlearn")
        if any(r["tool"] == t for r in rows)
    ]
    settings = sorted(
        {(r["dataset"], r["notion"], r["delta"], r["depth"]) for r in rows},
        key=lambda s: (DATASETS.index(s[0]) if s[0] in DATASETS else 99, s[3], s[1], s[2]),
    )
    by = {(r["tool"], r["dataset"], r["notion"], r["delta"], r["depth"]): r for r in rows}
    lines = [
        "# Fair trees: fair MIPs (HiGHS, warm from the fair DP) vs the DP vs ODTlearn (CBC)",
        "",
        f"Generated by `python benchmarks/fairness.py` ({meta['written']}; {meta['cpus']} cores "
        f"shared with other jobs; MIP limit {meta['time_limit']} s, ODTlearn limit "
        f"{meta['odtlearn_limit']} s, 1 thread each). lam = 0: objective = error fraction, "
        "bound = a lower bound on it; acc and gap re-measured with odtkit. ✓ = certified "
        "optimal. ODTlearn runs cold (as it does); our MIPs start from the DP's tree.",
        "",
    ]
    header = ["dataset", "notion", "δ", "D"]
    for t in tools:
        header += [f"{t} s", f"{t} acc", f"{t} bound acc"]
    table = []
    for s in settings:
        cells = [s[0], s[1], s[2], s[3]]
        for t in tools:
            r = by.get((t, *s))
            if r is None or "time" not in r:
                cells += ["–", "–", "–"]
                continue
            mark = " ✓" if r["status"] == "optimal" else f" ({r['status']})"
            cells.append(f"{r['time']:.3g}{mark}")
            cells.append(harness.fmt(r.get("accuracy"), 4))
            bound = r.get("bound")
            ok = bound is not None and math.isfinite(bound)
            cells.append(harness.fmt(1 - bound, 4) if ok else "–")
        table.append(cells)
    lines += harness.md_table(header, table)
    lines += ["", "## Summary", ""]
    for t in tools:
        mine = [by.get((t, *s)) for s in settings]
        done = [r for r in mine if r and r.get("status") == "optimal"]
        unfair = [r for r in mine if r and r.get("gap", 0) > r["delta"] + 1e-6]
        lines.append(
            f"* {t}: certifies {len(done)} of {len(settings)} settings"
            + (f"; **{len(unfair)} trees above δ**" if unfair else "")
            + "."
        )
    for t in tools:
        if t == "dp":
            continue
        worse = [
            s
            for s in settings
            if (r := by.get((t, *s)))
            and "accuracy" in r
            and r["accuracy"] < by[("dp", *s)]["accuracy"] - 1e-9
        ]
        if worse:
            lines.append(
                f"* {t} returned a less accurate tree than the DP's certified optimum on "
                f"{len(worse)} setting(s): {worse}."
            )
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--notions", nargs="+", default=NOTIONS)
    parser.add_argument("--deltas", nargs="+", type=float, default=DELTAS)
    parser.add_argument("--depths", nargs="+", type=int, default=DEPTHS)
    parser.add_argument("--mips", nargs="+", default=MIPS)
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT)
    parser.add_argument("--odtlearn-limit", type=float, default=TIME_LIMIT)
    parser.add_argument("--no-odtlearn", action="store_true")
    parser.add_argument("--report-only", action="store_true")
    harness.add_out_dir(parser)
    args = parser.parse_args()
    if args.report_only:
        harness.rewrite_report(
            NAME, args.out_dir, lambda saved: report(saved["runs"], saved["meta"])
        )
        return
    names = [n for n in args.datasets if load(n) is not None]
    if not names:
        print("[skip] no fairness data under shared/data/pystreed/fairness", file=sys.stderr)
        return
    meta = {
        **harness.machine_info("python", "machine", "processor", "cpus"),
        "time_limit": args.time_limit,
        "odtlearn_limit": args.odtlearn_limit,
        "written": harness.timestamp(),
    }
    rows: list[dict[str, Any]] = []
    for depth in args.depths:
        for name in names:
            for notion in args.notions:
                for delta in args.deltas:
                    rows += run_setting(name, notion, delta, depth, args)
                    # saved after every setting: a long run can be reported while it goes on
                    payload = {"meta": meta, "runs": rows}
                    harness.write_results(
                        NAME,
                        payload,
                        report(rows, meta),
                        out_dir=args.out_dir,
                        json_default=float,
                    )
    print(Path(args.out_dir) / f"{NAME}.md")


if __name__ == "__main__":
    main()

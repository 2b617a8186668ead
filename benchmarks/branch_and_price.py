"""Branch-and-price ("columns") beside the MIPs, the dp and the peers, under side constraints
(issue 40): who certifies what, how fast, and is every answer right.

Per setting (table, depth, constraint set), side by side in one run:

* ours on HiGHS through ``Method.solve`` (cold, no start; the model build is charged to the
  limit): FlowOCT, RBinOCT, PathOCT and ``"columns"`` when ``"columns" in
  odtkit.methods.METHODS`` (else it is left out and the report says so). A MIP whose
  estimated model is larger than HiGHS sets up within the limit is never built, one larger than
  it answers in the limit is left out unless ``--all-mips`` (``Method.too_big``, the rule of
  ``odtkit.compare``); "columns" is never left out;
* the dp (``Method.solve(method "dp")``) as the truth where it takes the constraints
  (``search_refusal``: none, one fairness alone, a minimum leaf support, split budgets);
* the peers, each in a child process with a hard timeout: ODTlearn's FlowOCT and BendersOCT
  (no constraint) and FairSPOCT (the fairness set), CBC, 1 thread, in their own venv
  (``_peers.odtlearn_python``); STreeD (``_peers.streed_python``) where its problem is ours:
  no constraint and the minimum leaf support (cost-complex accuracy), one demographic-parity
  constraint (its group-fairness task, λ = 0).

Every answer is checked: each tree is re-measured with ``odtkit.metrics.objective`` and the
constraints' ``violations`` (the peers' from their training predictions and leaf counts, or
their tree); certified answers must agree ("same optimum"), none may beat a certified optimum
and no bound may exceed it.

Tables: german-credit (``Gender=Male`` is the protected attribute, kept out of the features),
compas-binary (``sex:Female`` likewise), car-evaluation, tic-tac-toe (no protected attribute:
no fairness set), and planted tables of 10,000 and 100,000 rows (``planted_tree_dataset``: a
depth-3 tree on 20 binary features, 10 % label noise, seed 40; the protected attribute is the
planted root's feature with a quarter of it flipped, seeded). Constraint sets (:data:`SETS`)
are calibrated on the unconstrained dp optimum of each (table, depth) so that each constraint
binds (that optimum violates it; the report says when one cannot) and stays feasible (a single
leaf meets every one of them).

Usage::

    python benchmarks/branch_and_price.py                # the full grid, 300 s per run
    python benchmarks/branch_and_price.py --quick        # 30 s, depths 2-3, <= 15 min here
    python benchmarks/branch_and_price.py --quick --name branch_and_price_peers_preview
    python benchmarks/branch_and_price.py --report-only
    python benchmarks/branch_and_price.py --plan-only    # the planned runs and a time bound

ODTlearn needs ``ODTKIT_ODTLEARN_PYTHON=/tmp/odtlearn-venv/bin/python`` (see
``_peers.odtlearn_python``); without it ODTlearn's rows say why they did not run.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _harness as harness
import numpy as np
from _harness import fmt
from _peers import run_odtlearn, run_odtlearn_benders, run_odtlearn_fair, run_streed_child

NAME = "branch_and_price"
#: In increasing rows x features (the order the grid runs in, so that a skip rule can look back).
TABLES = (
    "tic-tac-toe",
    "car-evaluation",
    "german-credit",
    "compas-binary",
    "planted-10000",
    "planted-100000",
)
QUICK_TABLES = TABLES[:5]
DEPTHS = (2, 3, 4)
QUICK_DEPTHS = (2, 3)
#: The constraint sets (names -> what they state; parameters calibrated per table and depth).
SETS = {
    "none": "no side constraint",
    "fair": "statistical parity <= δ (λ = 0: the peers' problem)",
    "minleaf": "MinLeafSupport(share=0.05, or above the optimum's smallest leaf)",
    "recall": "ClassRecall(the class the optimum recalls worst, midway to 1)",
    "fair+recall": "statistical parity <= δ and ClassRecall",
    "leaves+minleaf+budget": "MaxLeaves + MinLeafSupport(share=0.05) + FeatureBudget(per='split')",
}
QUICK_SETS = ("none", "fair", "fair+recall", "leaves+minleaf+budget")
OURS = ("flowoct", "rbinoct", "pathoct", "columns")
LAM = 0.005
MIN_SHARE = 0.05
PLANTED_SEED = 40
TOL = 1e-6
#: HiGHS overruns a limit by its last node or LP; the model's translation is not polled.
OUR_GRACE = 5.0


# ------------------------------------------------------------------------------------ tables
@dataclass
class Table:
    name: str
    data: Any  # odtkit Dataset, the protected column (if any) removed
    protected: np.ndarray | None = None
    protected_name: str = ""


def load_table(name: str) -> Table | None:
    """A benchmark table; None (``[skip]`` on stderr) when its data is absent."""
    from odtkit import Dataset

    if name.startswith("planted-"):
        from odtkit.testing import planted_tree_dataset

        n = int(name.split("-")[1])
        data, planted = planted_tree_dataset(PLANTED_SEED, n, 20, 3, 0.1)
        rng = np.random.default_rng(PLANTED_SEED)
        root = int(planted.as_split()[0])
        a = data.X[:, root].astype(np.int64) ^ (rng.random(n) < 0.25)
        data = Dataset.from_arrays(
            data.X, data.y, feature_names=list(data.feature_names), name=name
        )
        return Table(name, data, a.astype(np.int64), f"x{root} with 25 % flipped")
    data = harness.load_dataset(name)
    if data is None:
        return None
    protected = {"german-credit": "Gender=Male", "compas-binary": "sex:Female"}.get(name)
    if protected is None:
        return Table(name, data)
    names = list(data.feature_names)
    j = names.index(protected)
    keep = [k for k in range(len(names)) if k != j]
    reduced = Dataset.from_arrays(
        data.X[:, keep], data.y, feature_names=[names[k] for k in keep], name=name
    )
    return Table(name, reduced, data.X[:, j].astype(np.int64), protected)


# ---------------------------------------------------------------------- constraint sets
@dataclass
class Setting:
    table: str
    depth: int
    cset: str
    lam: float
    constraints: list[Any] = field(default_factory=list)
    described: list[str] = field(default_factory=list)
    binds: list[bool] = field(default_factory=list)
    note: str = ""


def _optimum(table: Table, depth: int, lam: float, limit: float) -> Any:
    from odtkit.methods import METHODS

    return METHODS["dp"].solve(table.data, lam=lam, max_depth=depth, time_limit=limit).model


def _fairness(table: Table, tree: Any) -> tuple[Any, float]:
    """A statistical-parity constraint at half the disparity of ``tree`` (at least 0.005)."""
    from odtkit import Fairness

    data = table.data
    positive = data.classes[-1]
    probe = Fairness("sp", protected=table.protected, delta=1.0, positive_class=positive)
    groups = probe.groups(data)
    gap = groups.gap(tree.predict(data.X) == groups.positive_code)
    delta = max(0.005, math.floor(gap / 2 * 1000) / 1000)
    fair = Fairness("sp", protected=table.protected, delta=delta, positive_class=positive)
    return fair, gap


def _recall(table: Table, tree: Any) -> Any:
    """ClassRecall of the class ``tree`` recalls worst, midway from its recall to 1."""
    from odtkit.constraints import ClassRecall

    data = table.data
    pred = tree.predict(data.X)
    recalls = [float(np.mean(pred[data.y == k] == k)) for k in range(data.n_classes)]
    k = int(np.argmin(recalls))
    at_least = math.floor((recalls[k] + (1 - recalls[k]) / 2) * 100) / 100
    if at_least <= recalls[k]:
        at_least = min(1.0, recalls[k] + 0.01)
    return ClassRecall(data.classes[k], at_least)


def _binding_share(table: Table, tree: Any) -> float:
    """:data:`MIN_SHARE`, or when the smallest leaf of ``tree`` already receives that much,
    the next hundredth above that leaf's share (a single leaf still meets it)."""
    data = table.data
    support = np.bincount(tree.apply(data.X), weights=data.weights, minlength=tree.n_leaves)
    smallest = float(support.min()) / data.total_weight
    if smallest < MIN_SHARE:
        return MIN_SHARE
    return min(1.0, math.floor(smallest * 100 + 1) / 100)


def make_setting(table: Table, depth: int, cset: str, limit: float, lam: float) -> Setting:
    """The constraint set ``cset`` on ``table`` at ``depth``, calibrated on the unconstrained
    dp optimum (at the set's λ) so that each constraint binds; ``binds[i]``: that optimum
    violates constraint ``i``."""
    from odtkit.constraints import FeatureBudget, MaxLeaves, MinLeafSupport, resolve

    set_lam = 0.0 if cset == "fair" else lam
    s = Setting(table.name, depth, cset, set_lam)
    if cset == "none":
        return s
    if "fair" in cset and table.protected is None:
        s.note = "no protected attribute"
        return s
    opt = _optimum(table, depth, set_lam, limit)
    data = table.data
    if cset == "fair":
        fair, gap = _fairness(table, opt)
        s.constraints = [fair]
        s.note = f"optimum's disparity {gap:.4f}"
    elif cset == "minleaf":
        s.constraints = [MinLeafSupport(share=_binding_share(table, opt))]
    elif cset == "recall":
        s.constraints = [_recall(table, opt)]
    elif cset == "fair+recall":
        fair, gap = _fairness(table, opt)
        s.constraints = [fair, _recall(table, opt)]
        s.note = f"optimum's disparity {gap:.4f}"
    elif cset == "leaves+minleaf+budget":
        names = list(data.feature_names)
        used = sorted(opt.features_used())
        splits = opt.n_internal
        budget = max(1, splits // 2)
        costs = {names[j]: 1.0 for j in used} if used else 1.0
        s.constraints = [
            MaxLeaves(max(2, opt.n_leaves - 1)),
            MinLeafSupport(share=_binding_share(table, opt)),
            FeatureBudget(costs, budget, per="split"),
        ]
    else:
        raise ValueError(f"unknown constraint set {cset!r}")
    for c in s.constraints:
        s.described.append(resolve([c], data).describe())
        s.binds.append(bool(resolve([c], data).violations(opt, data)))
    return s


# ------------------------------------------------------------------------------------- runs
def checked(tree: Any, table: Table, s: Setting, resolved: Any) -> dict[str, Any]:
    """A returned tree re-measured: objective (our units), leaves, violated constraints."""
    from odtkit import metrics

    if tree is None:
        return {"objective": math.nan, "violations": []}
    return {
        "objective": metrics.objective(tree, table.data, lam=s.lam),
        "n_leaves": tree.n_leaves,
        "violations": resolved.violations(tree, table.data) if resolved else [],
    }


def run_ours(method: str, table: Table, s: Setting, resolved: Any, limit: float) -> dict:
    from odtkit.methods import METHODS

    m = METHODS[method]
    t0 = time.perf_counter()
    try:
        r = m.solve(
            table.data,
            lam=s.lam,
            max_depth=s.depth,
            backend="highs",
            time_limit=limit,
            constraints=s.constraints or None,
        )
    except Exception as exc:  # a method's refusal or failure is a row, not a crashed run
        return {"status": "error", "message": f"{type(exc).__name__}: {exc}"[:300]}
    wall = time.perf_counter() - t0
    row = {
        "status": str(r.status),
        "time": r.time,
        "wall": wall,
        "reported": r.objective,
        "bound": r.lower_bound,
        "build_time": r.stats.get("build_time"),
        "message": r.message[:200],
    }
    row.update(checked(r.model, table, s, resolved))
    if r.model is not None:
        row["tree"] = r.model.to_dict()
    return row


def run_peer(peer: str, table: Table, s: Setting, resolved: Any, limit: float, hard: float) -> dict:
    """One peer in its child process, its answer re-measured in our objective."""
    from odtkit.tree import Tree

    data = table.data
    if peer in ("odtlearn-flowoct", "odtlearn-benders"):
        run = run_odtlearn if peer == "odtlearn-flowoct" else run_odtlearn_benders
        out = run(data, s.depth, s.lam, limit, timeout=hard, predictions=True)
    elif peer == "odtlearn-fairoct":
        fair = s.constraints[0]
        out = run_odtlearn_fair(
            data, table.protected, "sp", s.depth, fair.delta, limit, timeout=hard
        )
    else:  # streed
        kw: dict[str, Any] = {}
        if s.cset == "fair":
            kw = {"protected": table.protected, "delta": s.constraints[0].delta}
        elif s.cset == "minleaf":
            kw = {"min_leaf": math.ceil(resolved.min_leaf_weight - 1e-9)}
        out = run_streed_child(data, s.depth, s.lam, limit, timeout=hard, **kw)
    row: dict[str, Any] = {
        k: v for k, v in out.items() if k not in ("predictions", "tree", "available")
    }
    if not out.get("available", False):
        row["status"] = "unavailable"
        return row
    status = str(out.get("status", "?")).lower()
    row["status"] = status
    if peer == "odtlearn-fairoct" and "correct_bound" in out:
        # CBC's bound on the correct count, in error-fraction units (λ = 0)
        row["bound"] = 1.0 - out["correct_bound"] / data.n_samples
    if "predictions" not in out:  # killed, or stopped without a tree
        row["objective"] = math.nan
        return row
    pred = np.asarray(out["predictions"])
    errors = float(np.sum(data.weights * (pred != data.y)))
    tree = Tree.from_dict(out["tree"]) if out.get("tree") else None
    if tree is not None:
        assert np.array_equal(tree.predict(data.X), pred), f"{peer}: tree decode"
        row.update(checked(tree, table, s, resolved))
        row["tree"] = out["tree"]
    else:
        leaves = out.get("leaves")
        row["n_leaves"] = leaves
        if leaves is None and s.lam > 0:
            row["objective"] = math.nan
        else:
            row["objective"] = errors / data.total_weight + s.lam * (leaves or 0)
        violations = []
        for g in resolved.fairness if resolved else ():
            gap = g.gap(pred == g.positive_code)
            if gap > g.delta + 1e-6:
                violations.append(f"fairness: disparity {gap:.4f} > {g.delta:g}")
        row["violations"] = violations
    row["certified"] = status == "optimal"
    return row


def peers_for(s: Setting, table: Table) -> list[str]:
    if s.cset == "none":
        return ["odtlearn-flowoct", "odtlearn-benders", "streed"]
    if s.cset == "fair" and s.constraints:
        return ["odtlearn-fairoct", "streed"]
    if s.cset == "minleaf":
        return ["streed"]
    return []


def ours_available(include: tuple[str, ...]) -> list[str]:
    from odtkit.methods import METHODS

    return [m for m in include if m in METHODS]


def sits_out(method: str, resolved: Any) -> str:
    """Why branch-and-price cannot price the constraints (as compare's row says), "" else."""
    if method != "columns":
        return ""
    from odtkit.formulations.columns import columns_refusal

    why = columns_refusal(resolved)
    return f"sits out (as compare does): {why}" if why else ""


def left_out(method: str, table: Table, depth: int, limit: float, all_mips: bool) -> str:
    """Why ``method`` is not built on ``table`` at ``depth`` ("" when it runs)."""
    from odtkit.methods import METHODS

    m = METHODS[method]
    why = m.too_big(table.data, depth, limit, setup=True)
    if why:
        return f"not built: {why}"
    if not all_mips:
        why = m.too_big(table.data, depth, limit)
        if why:
            return f"left out (as compare does; --all-mips runs it): {why}"
    return ""


def judge(record: dict) -> None:
    """Agreement of the setting's answers: certified objectives equal, nothing feasible beats a
    certified optimum, no bound above it, every returned tree feasible."""
    runs = {**record["ours"], **record["peers"]}
    if record.get("dp"):
        runs = {"dp": record["dp"], **runs}
    certified = {
        k: r["objective"]
        for k, r in runs.items()
        if r.get("status") == "optimal" and not math.isnan(r.get("objective", math.nan))
    }
    problems = []
    for k, r in runs.items():
        if r.get("violations"):
            problems.append(f"{k} returned a tree breaking {r['violations'][0]}")
    if certified:
        best = min(certified.values())
        for k, v in certified.items():
            if v > best + TOL:
                problems.append(
                    f"{k} certified {v:.6f} but {min(certified, key=certified.get)} "
                    f"certified {best:.6f}"
                )
        for k, r in runs.items():
            obj = r.get("objective", math.nan)
            if not r.get("violations") and obj < best - TOL:
                problems.append(f"{k}'s feasible tree {obj:.6f} beats the certified {best:.6f}")
            bound = r.get("bound")
            if bound is not None and bound > best + TOL:
                problems.append(f"{k}'s bound {bound:.6f} exceeds the certified {best:.6f}")
    record["certified_optimum"] = min(certified.values()) if certified else None
    record["n_certified"] = len(certified)
    record["problems"] = problems


# ------------------------------------------------------------------------------ planning
def plan(args: argparse.Namespace) -> list[tuple[str, int, str]]:
    return [
        (t, d, c)
        for t in args.tables
        for d in args.depths
        for c in args.sets
        if not ("fair" in c and t in ("car-evaluation", "tic-tac-toe"))
    ]


def peer_timeout(limit: float) -> float:
    """A peer's hard timeout: its limit plus a quarter (at least 15 s) for its start-up and
    model build, which its limit does not cover."""
    return limit + max(15.0, 0.25 * limit)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 s, 5 tables, depths 2-3")
    parser.add_argument("--limit", type=float, default=None, help="seconds per run (300; 30)")
    parser.add_argument("--tables", nargs="+", default=None, choices=TABLES)
    parser.add_argument("--depths", nargs="+", type=int, default=None)
    parser.add_argument("--sets", nargs="+", default=None, choices=list(SETS))
    parser.add_argument("--lam", type=float, default=LAM, help="λ of every set but 'fair'")
    parser.add_argument("--ours", nargs="+", default=list(OURS), choices=OURS)
    parser.add_argument("--all-mips", action="store_true", help="run MIPs compare leaves out")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--name", default=NAME, help="results file stem")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument(
        "--plan-only", action="store_true", help="print the planned runs and time bound, stop"
    )
    harness.add_out_dir(parser)
    args = parser.parse_args(argv)
    if args.report_only:
        harness.rewrite_report(args.name, args.out_dir, report)
        return 0
    limit = args.limit if args.limit is not None else (30.0 if args.quick else 300.0)
    args.tables = args.tables or list(QUICK_TABLES if args.quick else TABLES)
    args.depths = args.depths or list(QUICK_DEPTHS if args.quick else DEPTHS)
    args.sets = args.sets or list(QUICK_SETS if args.quick else SETS)
    from odtkit.constraints import resolve
    from odtkit.methods import search_refusal

    ours = ours_available(tuple(args.ours))
    missing = [m for m in args.ours if m not in ours]
    grid = plan(args)

    tables: dict[str, Table] = {}
    for name in args.tables:
        t = load_table(name)
        if t is not None:
            tables[name] = t
    grid = [g for g in grid if g[0] in tables]
    grid.sort(key=lambda g: (tables[g[0]].data.X.size, g[1], args.sets.index(g[2])))
    # the planned runs and an upper bound on the wall time, before anything runs
    n_ours = n_peers = n_dp = 0
    bound = 0.0
    hard = peer_timeout(limit)
    for t, d, c in grid:
        n_dp += 1 + (c != "none")  # calibration + truth
        bound += limit * (1 + (c != "none"))
        for m in ours:
            if not left_out(m, tables[t], d, limit, args.all_mips):
                n_ours += 1
                bound += limit + OUR_GRACE
        if not args.no_peers:
            k = {"none": 3, "fair": 2, "minleaf": 1}.get(c, 0)
            n_peers += k
            bound += k * hard
    print(
        f"planned: {len(grid)} settings; {n_ours} runs of ours ({', '.join(ours)}), {n_peers} "
        f"peer runs (hard timeout {hard:g} s each), {n_dp} dp runs; limit {limit:g} s; wall "
        f"time at most {bound / 60:.1f} min (every run at its limit; fewer run: a method that "
        "does not certify a set at depth d sits out d+1, ODTlearn larger tables too)",
        flush=True,
    )
    if args.plan_only:
        return 0
    meta = {
        **harness.machine_info("python", "platform", "cpus", "load_average"),
        "written": harness.timestamp(),
        "limit": limit,
        "peer_timeout": hard,
        "lam": args.lam,
        "ours": ours,
        "ours_missing": missing,
        "all_mips": args.all_mips,
        "peers": not args.no_peers,
        "tables": {
            n: {
                "n": t.data.n_samples,
                "p": t.data.n_features,
                "protected": t.protected_name,
            }
            for n, t in tables.items()
        },
        "planned_settings": len(grid),
        "planned_wall_bound_s": bound,
        "quick": args.quick,
        "argv": list(sys.argv[1:] if argv is None else argv),
    }
    records: list[dict] = []
    failed: set[tuple[str, str, str]] = set()  # (who, table, set) not certified at a depth
    # ODTlearn's models grow with rows x features: one it could not certify on a table sits
    # out the tables at least as large at that depth and deeper, for that set
    failed_odtlearn: dict[tuple[str, str], list[tuple[int, int]]] = {}
    start = time.time()
    for t, d, c in grid:
        table = tables[t]
        s = make_setting(table, d, c, limit, args.lam)
        rec: dict[str, Any] = {
            "table": t,
            "n": table.data.n_samples,
            "p": table.data.n_features,
            "depth": d,
            "set": c,
            "lam": s.lam,
            "constraints": s.described,
            "binds": s.binds,
            "note": s.note,
            "ours": {},
            "peers": {},
            "skipped": {},
        }
        resolved = resolve(s.constraints, table.data) if s.constraints else None
        why = search_refusal(resolved, "dp") if resolved else ""
        if why:
            rec["dp"] = None
            rec["dp_refusal"] = why
        else:
            dp = run_ours("dp", table, s, resolved, limit)
            rec["dp"] = dp
        for m in ours:
            reason = left_out(m, table, d, limit, args.all_mips) or sits_out(m, resolved)
            if not reason and (m, t, c) in failed:
                reason = "skipped: not certified at a smaller depth"
            if reason:
                rec["skipped"][m] = reason
                continue
            rec["ours"][m] = r = run_ours(m, table, s, resolved, limit)
            if r["status"] != "optimal":
                failed.add((m, t, c))
        if not args.no_peers:
            for peer in peers_for(s, table):
                size = table.data.X.size
                if (peer, t, c) in failed:
                    rec["skipped"][peer] = "skipped: not certified at a smaller depth"
                    continue
                if any(size >= z and d >= d0 for z, d0 in failed_odtlearn.get((peer, c), [])):
                    rec["skipped"][peer] = (
                        "skipped: not certified on a smaller table (rows × features) at this "
                        "depth or less"
                    )
                    continue
                rec["peers"][peer] = r = run_peer(peer, table, s, resolved, limit, hard)
                if r.get("status") != "optimal":
                    failed.add((peer, t, c))
                    if peer.startswith("odtlearn"):
                        failed_odtlearn.setdefault((peer, c), []).append((size, d))
        judge(rec)
        records.append(rec)
        payload = {"meta": {**meta, "elapsed_s": time.time() - start}, "records": records}
        harness.write_results(
            args.name, payload, report(payload), out_dir=args.out_dir, json_default=str
        )
        done = " ".join(
            f"{k} {r.get('status')} {fmt(r.get('time'))}s"
            for k, r in {**rec["ours"], **rec["peers"]}.items()
        )
        print(f"[{time.time() - start:6.0f}s] {t} D={d} {c}: {done}", flush=True)
    print(f"wrote {Path(args.out_dir) / args.name}.md")
    return 0


# ------------------------------------------------------------------------------------ report
LABELS = {
    "dp": "dp (truth)",
    "flowoct": "FlowOCT (HiGHS)",
    "rbinoct": "RBinOCT (HiGHS)",
    "pathoct": "PathOCT (HiGHS)",
    "columns": "columns (HiGHS)",
    "odtlearn-flowoct": "ODTlearn FlowOCT (CBC)",
    "odtlearn-benders": "ODTlearn BendersOCT (CBC)",
    "odtlearn-fairoct": "ODTlearn FairSPOCT (CBC)",
    "streed": "STreeD",
}


def _gap(r: dict) -> float:
    obj, bound = r.get("objective", math.nan), r.get("bound")
    if bound is None or math.isnan(obj) or not math.isfinite(bound):
        return math.nan
    return max(0.0, obj - bound)


def _row(who: str, r: dict) -> list[str]:
    status = r.get("status", "?")
    if r.get("killed_after"):
        status = f"killed at {r['killed_after']:g} s"
    cert = "yes" if status == "optimal" else "no"
    if r.get("violations"):
        cert += " (**infeasible tree**)"
    return [
        LABELS.get(who, who),
        fmt(r.get("time")),
        status,
        fmt(r.get("objective"), 6),
        fmt(r.get("bound"), 6),
        fmt(_gap(r), 3),
        cert,
    ]


def _ratios(records: list[dict], peer: str, where: str) -> list[str]:
    pairs = []
    for rec in records:
        col = rec["ours"].get("columns")
        other = rec[where].get(peer)
        if col and other and col.get("status") == "optimal" and other.get("status") == "optimal":
            pairs.append((col["time"] / max(other["time"], 1e-9), other["time"]))
    if not pairs:
        return [f"* columns vs {LABELS[peer]}: no setting where both certify."]
    s = harness.ratio_summary([r for r, _ in pairs], peer_times=[t for _, t in pairs])
    return [
        f"* columns vs {LABELS[peer]}: columns time / {LABELS[peer]} time = {fmt(s.geomean)} "
        f"(geometric mean over {s.n} settings both certify), {fmt(s.geomean_floor)} over the "
        f"{s.n_floor} where the peer needs >= {harness.PEER_FLOOR:g} s; worst (slowest "
        f"relative to the peer) {fmt(s.worst)}."
    ]


def report(payload: dict) -> str:
    meta, records = payload["meta"], payload["records"]
    limit = meta["limit"]
    lines = [
        "# Branch-and-price (columns) vs the MIPs, the dp and the peers under side constraints",
        "",
        f"`python benchmarks/branch_and_price.py {' '.join(meta.get('argv', []))}`".replace(
            " `", "`"
        )
        + " "
        f"({meta['written']}; {meta['cpus']} cores shared with other jobs; load average at the "
        f"start {', '.join(f'{x:.1f}' for x in meta['load_average'])}"
        + (f"; the run took {meta['elapsed_s'] / 60:.1f} min" if "elapsed_s" in meta else "")
        + f"). Limit {limit:g} s per "
        f"run; peers in child processes killed after {meta['peer_timeout']:g} s. Ours cold on "
        "HiGHS through `Method.solve` (build charged to the limit); ODTlearn on CBC, 1 thread, "
        "its own venv; STreeD in its own venv. λ = "
        f"{meta['lam']:g} (0 for the fairness-only set: the peers' problem). Objectives in OSDT "
        "units, every tree re-measured by `odtkit.metrics.objective` and the constraints' "
        "`violations` (peers' from their training predictions and leaf counts or their tree).",
        "",
    ]
    if meta.get("ours_missing"):
        lines += [
            f"**Not in this run:** {', '.join(meta['ours_missing'])} (not in "
            "`odtkit.methods.METHODS` here).",
            "",
        ]
    lines += [
        "Tables: "
        + "; ".join(
            f"{n} ({t['n']:,} × {t['p']}"
            + (f", protected {t['protected']})" if t["protected"] else ")")
            for n, t in meta["tables"].items()
        )
        + ".",
        "",
    ]
    lines += ["## Summary", ""]
    bad = [(r, p) for r in records for p in r["problems"]]
    n_truth = sum(1 for r in records if r.get("dp") and r["dp"].get("status") == "optimal")
    lines.append(
        f"* {len(records)} settings; the dp certified {n_truth} (the truth where it takes the "
        f"constraints); settings with at least two certified answers: "
        f"{sum(r['n_certified'] >= 2 for r in records)}, all of them the same optimum"
        + ("." if not bad else f" **except {len(bad)} problem(s) below**.")
    )
    for r, p in bad:
        lines.append(f"  * **{r['table']} D={r['depth']} {r['set']}: {p}**")
    who = sorted({k for r in records for k in (*r["ours"], *r["peers"])}, key=list(LABELS).index)
    for k in who:
        ran = [r for r in records if k in r["ours"] or k in r["peers"]]
        cert = [r for r in ran if {**r["ours"], **r["peers"]}[k].get("status") == "optimal"]
        lines.append(f"* {LABELS[k]}: certified {len(cert)} of the {len(ran)} settings it ran.")
    unbound = [r for r in records if r["binds"] and not all(r["binds"])]
    if unbound:
        lines.append(
            "* Constraints that do not bind (the unconstrained optimum meets them): "
            + "; ".join(
                f"{r['table']} D={r['depth']} {r['set']}: "
                + ", ".join(c for c, b in zip(r["constraints"], r["binds"], strict=True) if not b)
                for r in unbound
            )
        )
    lines += ["", "## What the issue targets", ""]
    if "columns" in meta["ours"]:
        lines += (
            _ratios(records, "flowoct", "ours")
            + _ratios(records, "pathoct", "ours")
            + _ratios(records, "odtlearn-benders", "peers")
        )
        d4 = [r for r in records if r["depth"] == 4]
        c4 = [r for r in d4 if r["ours"].get("columns", {}).get("status") == "optimal"]
        lines.append(
            f"* Depth 4: columns certified {len(c4)} of {len(d4)} settings within {limit:g} s."
        )
        hard = [
            r
            for r in records
            if "columns" in r["ours"] and r["ours"]["columns"]["status"] != "optimal"
        ]
        if hard:
            lines += ["", "Hard cases (columns not certified at the limit):", ""]
            rows = []
            for r in hard:
                col = r["ours"]["columns"]
                others = ", ".join(
                    f"{k} {v.get('status')}"
                    for k, v in {**r["ours"], **r["peers"]}.items()
                    if k != "columns"
                )
                rows.append(
                    [
                        r["table"],
                        r["depth"],
                        r["set"],
                        fmt(col.get("objective"), 6),
                        fmt(col.get("bound"), 6),
                        fmt(_gap(col)),
                        others or "–",
                    ]
                )
            lines += harness.md_table(
                ["table", "D", "set", "incumbent", "bound", "gap", "beside it"], rows
            )
    else:
        lines.append(
            "* columns did not run: the ratios columns/FlowOCT and columns/BendersOCT, the "
            "depth-4 count and the hard cases appear when it is registered."
        )
    lines += ["", "## Settings", ""]
    for r in records:
        head = f"### {r['table']} D={r['depth']} {r['set']} (λ = {r['lam']:g})"
        lines += [head, ""]
        if r["constraints"]:
            binds = ", ".join(
                f"{c}{'' if b else ' (does not bind)'}"
                for c, b in zip(r["constraints"], r["binds"], strict=True)
            )
            lines.append(f"Constraints: {binds}." + (f" {r['note']}." if r["note"] else ""))
        if r.get("dp_refusal"):
            lines.append(f"dp sits out: {r['dp_refusal']}.")
        opt = r.get("certified_optimum")
        lines.append(f"Certified optimum: {fmt(opt, 6) if opt is not None else 'none'}.")
        lines.append("")
        rows = []
        if r.get("dp"):
            rows.append(_row("dp", r["dp"]))
        rows += [_row(k, v) for k, v in r["ours"].items()]
        rows += [_row(k, v) for k, v in r["peers"].items()]
        rows += [
            [LABELS.get(k, k), "–", why, "–", "–", "–", "–"] for k, why in r["skipped"].items()
        ]
        lines += harness.md_table(
            ["method", "time s", "status", "objective", "bound", "gap", "certified"], rows
        )
        lines.append("")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())

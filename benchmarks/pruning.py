"""Benchmark: optimal ensemble pruning with feature costs (odtkit.pruning).

Writes benchmarks/results/pruning.json and pruning.md. Seven parts:

1. **scaling** — extract / build / IP3-LP / column generation / IP3-MIP time as N and T grow
   (COMPAS raw numeric from ../shared/data/gosdt, resampled to N rows with replacement; digits).
2. **formulations** — IP3 as an LP (simplex) vs the weak IP1 as a MIP vs IP3 as a MIP on
   growing instances: time, objective agreement, speed-up of IP3-LP over IP1-MIP.
3. **table1** — the shape of NWS Table 1: test feature cost at matched test error for ensemble
   pruning vs individual pruning vs no pruning, over repeated train/test splits (breast cancer
   with unit costs; pystreed cost-sensitive diabetes with its real feature test costs).
4. **target** — 40 trees x 10 000 examples, end to end.
5. **colgen** — column generation (incremental HiGHS master, merged pairs) vs the compact LP
   as T x N grows, up to 100 trees x 20 000 examples, with the per-entry master as an
   ablation: where (if anywhere) column generation crosses over.
6. **cut** — IP3 as one minimum cut (native Dinic, ``method="cut"``) vs the compact LP, column
   generation and IP1-MIP side by side (each capped by ``--cut-lp-limit``), scipy's Dinic on
   the same network, and the exact cost–error path against one cut; 10–200 trees, depth
   4–12, 1 000–200 000 rows (make_classification, and the adult set from
   ../shared/data/pystreed/fairness when present); every case in a fresh child process so its
   peak RSS is its own.

7. **scale** — ``prune(forest, X, y, lam)`` end to end at forest sizes up to 100 trees x depth
   10 x 100,000 rows, before (``--before-src``: the code before a change) and after in one run,
   with the time split, the network the flow saw, peak RSS, equal prunings, the reductions over
   a λ grid and the exact path (benchmarks/_pruning_scale.py).

Usage: ``python benchmarks/pruning.py [--quick] [--time-limit 60] [--parts scaling,...]``;
``--parts colgen --keep`` reruns only column generation and keeps the other parts' results;
``--out-dir /tmp/pruning`` writes (and keeps from) another directory, e.g. for a smoke run.
Data from ../shared/data (or ``$ODTKIT_SHARED_DATA``) is optional: parts needing it fall back
to scikit-learn's datasets or skip that source when it is absent.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import _harness as harness
import numpy as np
import pandas as pd
from _pruning_scale import forest_data, part_scale, scale_section
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

from odtkit.pruning import IP3, column_generation, extract, individual_prune, prune
from odtkit.pruning._ensemble import PrunedEnsemble, unpruned

NAME = "pruning"


# ------------------------------------------------------------------------------- data
def load_compas():
    """COMPAS raw numeric (gosdt/compas.csv): X, y, no costs; None when absent."""
    p = harness.shared_file("gosdt/compas.csv")
    if p is None:
        return None
    df = pd.read_csv(p)
    return df.iloc[:, :-1].to_numpy(float), df.iloc[:, -1].to_numpy(int), None


def load_costsensitive(name="diabetes", level="middle"):
    base = harness.shared_file(f"pystreed/cost-sensitive/{name}")
    if base is None:
        return None
    tr = np.loadtxt(base / f"{name}-train-1.csv")
    te = np.loadtxt(base / f"{name}-test-1.csv")
    data = np.vstack([tr, te])
    X, y = data[:, 1:], data[:, 0].astype(int)
    lines = (base / f"{name}-{level}-costs.csv").read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Attribute-name")) + 1
    costs = np.zeros(X.shape[1])
    for ln in lines[start:]:
        parts = ln.split()
        if len(parts) < 6:
            continue
        # every binary column of an attribute carries the attribute's test cost (IP3 has no
        # notion of attribute groups, so two columns of one attribute are paid twice)
        costs[int(parts[4]) : int(parts[5]) + 1] = float(parts[1])
    return X, y, costs


def compas_and_digits():
    """The (name, X, y) sources of the scaling and colgen parts: COMPAS when present, digits."""
    compas = load_compas()
    sources = [] if compas is None else [("compas", compas[0], compas[1])]
    Xd, yd = load_digits(return_X_y=True)
    return [*sources, ("digits", Xd.astype(float), yd)]


def compas_or(name, loader):
    """COMPAS as (name, X, y), or scikit-learn's ``loader`` under ``name`` when it is absent."""
    compas = load_compas()
    if compas is None:
        return (name, *loader(return_X_y=True))
    return ("compas", compas[0], compas[1])


def resample(X, y, n, seed):
    rng = np.random.default_rng(seed)
    idx = rng.choice(X.shape[0], size=n, replace=n > X.shape[0])
    return X[idx], y[idx]


def forest(X, y, T, depth, seed=0):
    return RandomForestClassifier(T, max_depth=depth, random_state=seed, n_jobs=1).fit(X, y)


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _run(d, lam, method, tl, formulation=None):
    res, t = timed(lambda: prune(d, lam=lam, method=method, time_limit=tl, formulation=formulation))
    if res.model is None:  # time limit without a solution
        return {"status": "no_solution", "time": tl, "objective": np.nan, "error": res.message}
    solver_objective = res.solution.objective if res.solution is not None else np.nan
    row = {
        "status": res.status.value,
        "time": t,
        "objective": res.objective,
        "solver_objective": solver_objective,
        "max_fractionality": res.stats.get("max_fractionality", 0.0),
    }
    if method == "colgen":
        # after a fractional column generation the compact LP answered; its run is in stats
        colgen = res.stats["colgen"].stats if "colgen" in res.stats else res.stats
        row["iterations"] = colgen.get("iterations")
        row["columns"] = colgen.get("n_columns")
        row["lower_bound"] = res.lower_bound
    if "fallback" in res.stats:
        row["fallback"] = res.stats["fallback"]
    return row


# ------------------------------------------------------------------------------- parts
CUT_CASES = [
    # (data, N, T, depth, K, solvers besides the cut; "path": the exact path too)
    ("synthetic", 1_000, 10, 4, 20, ("path", "lp", "colgen", "ip1", "scipy")),
    ("synthetic", 1_000, 50, 8, 20, ("path", "lp", "colgen", "scipy")),
    ("synthetic", 10_000, 40, 8, 30, ("path", "lp", "colgen", "scipy")),
    ("synthetic", 10_000, 100, 12, 20, ("path", "lp", "scipy")),
    ("synthetic", 200_000, 10, 4, 20, ("path", "lp", "scipy")),
    ("adult", 45_222, 50, 8, 18, ("path", "lp", "scipy")),
    ("adult", 45_222, 200, 12, 18, ("path",)),
    ("synthetic", 100_000, 100, 10, 20, ()),
]
CUT_QUICK = [
    ("synthetic", 1_000, 10, 4, 20, ("path", "lp", "colgen", "ip1", "scipy")),
    ("synthetic", 10_000, 40, 8, 30, ("path", "lp", "scipy")),
    ("adult", 45_222, 20, 6, 18, ("path", "lp", "scipy")),
]


def _scipy_cut_seconds(net, lam):
    """scipy's Dinic on the same network, capacities scaled into int32 (timing only: the
    rounding to 31 bits makes its value approximate). Returns (seconds, relative value gap)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    n = net.n_nodes
    T = net.data.n_trees
    gain = np.zeros(n)
    gain[: net.n_splits] = net.gain
    pay = np.zeros(n)
    pay[net.n_splits :] = lam * T * net.pair_cost
    total = gain.sum()
    scale = 2.0**30 / max(total, 1.0)
    big = int(total * scale) + 1
    rows = np.concatenate([np.full(n, n), np.arange(n), net.tails])
    cols = np.concatenate([np.arange(n), np.full(n, n + 1), net.heads])
    caps = np.concatenate(
        [np.round(gain * scale), np.minimum(np.round(pay * scale), big), np.full(net.n_arcs, big)]
    ).astype(np.int32)
    keep = caps > 0
    g = csr_matrix((caps[keep], (rows[keep], cols[keep])), shape=(n + 2, n + 2))
    g.sum_duplicates()
    t = time.perf_counter()
    flow = maximum_flow(g, n, n + 1, method="dinic").flow_value
    return time.perf_counter() - t, flow / scale


def cut_case(name, N, T, depth, K, solvers, lam, limit):
    """Child side of the cut part: one forest, the cut and the other solvers on it."""
    from odtkit.pruning import cost_error_path
    from odtkit.pruning._cut import closure_network, cut_prune

    data = forest_data(name, N, K)
    if data is None:
        return {"dataset": name, "skipped": "data absent"}
    X, y = data
    rf, t_fit = timed(lambda: forest(X, y, T, depth, seed=1))
    d, t_ex = timed(lambda: extract(rf, X, y))
    rss_extract = harness.peak_rss_mb()
    # the cut as prune runs it: the native network, reduced exactly before the flow
    cut, t_cut = timed(lambda: cut_prune(d, lam=lam))
    # the uncompressed numpy network: scipy's input (it builds the entry lists, so only then)
    net, t_net = timed(lambda: closure_network(d)) if "scipy" in solvers else (None, np.nan)
    row = {
        "dataset": name,
        "N": int(X.shape[0]),
        "T": T,
        "depth": depth,
        "K": int(X.shape[1]),
        "lam": lam,
        "n_entries": d.n_entries,
        "cut_nodes": cut.stats["n_nodes"],
        "cut_arcs": cut.stats["n_arcs"],
        "uncompressed_arcs": net.n_arcs if net is not None else None,
        "fit_time": t_fit,
        "extract_time": t_ex,
        "uncompressed_network_time": t_net,
        "cut_time": t_cut,
        "flow_time": cut.stats["flow_time"],
        "end_to_end": t_ex + t_cut,
        "cut_status": cut.status.value,
        "cut_objective": cut.objective,
        "cut_gap": cut.objective - cut.lower_bound,
        "cut_phases": cut.stats["phases"],
        "cut_native_mb": cut.peak_memory_mb,
        "rss_after_extract_mb": rss_extract,
        "rss_after_cut_mb": harness.peak_rss_mb(),
        "load": os.getloadavg()[0],
    }
    if "scipy" in solvers:
        t_sp, value = _scipy_cut_seconds(net, lam)
        row["scipy_dinic_time"] = t_sp
        ours = cut.stats["cut_objective"] * N * T - (net.base_errors - float(net.gain.sum()))
        row["scipy_rel_diff"] = abs(value - ours) / max(ours, 1e-12)
    if "path" in solvers:
        path, t_path = timed(lambda: cost_error_path(d))
        row.update(
            path_time=t_path,
            path_vertices=len(path),
            path_cuts=path.n_cuts,
            path_over_cut=t_path / t_cut,
            rss_after_path_mb=harness.peak_rss_mb(),
        )
    for method in ("lp", "colgen", "ip1"):
        if method not in solvers:
            continue
        res, t = timed(lambda m=method: prune(d, lam=lam, method=m, time_limit=limit))
        row[f"{method}_time"] = t
        row[f"{method}_status"] = res.status.value
        row[f"{method}_objective"] = res.objective if res.model is not None else None
        row[f"{method}_minus_cut"] = (
            res.objective - cut.objective if res.model is not None else None
        )
        row[f"rss_after_{method}_mb"] = harness.peak_rss_mb()
    return row


def part_cut(args):
    rows = []
    cases = CUT_QUICK if args.quick else CUT_CASES
    for name, N, T, depth, K, solvers in cases:
        try:
            row = harness.call_in_child(
                "pruning:cut_case",
                name,
                N,
                T,
                depth,
                K,
                list(solvers),
                args.cut_lam,
                args.cut_lp_limit,
                timeout=args.cut_case_timeout,
            )
        except harness.ChildError as exc:
            row = {"dataset": name, "N": N, "T": T, "depth": depth, "error": str(exc)}
        rows.append(row)
        print(row, flush=True)
    return rows


def part_scaling(args):
    rows = []
    sources = compas_and_digits()
    Ns = [1000, 2000, 4000] if args.quick else [1000, 2000, 5000, 10000, 20000]
    Ts = [10, 20] if args.quick else [10, 20, 40, 100]
    depth = 5
    lam = 0.01
    for name, X0, y0 in sources:
        for N in Ns:
            for T in Ts:
                if name == "digits" and args.quick and (N > 1000 or T > 10):
                    continue
                X, y = resample(X0, y0, N, seed=N + T)
                rf = forest(X, y, T, depth)
                d, t_ex = timed(lambda X=X, y=y, rf=rf: extract(rf, X, y))
                m, t_b = timed(lambda d=d: IP3(aggregate=True, merge=True).build(d, lam=lam))
                base = {
                    "dataset": name,
                    "N": N,
                    "T": T,
                    "depth": depth,
                    "lam": lam,
                    "extract_time": t_ex,
                    "build_time": t_b,
                    "n_entries": d.n_entries,
                    "n_pairs": d.n_pairs,
                    "rows": m.n_constraints,
                    "nonzeros": m.n_nonzeros,
                }
                for method in ("lp", "colgen", "mip"):
                    r = _run(d, lam, method, args.time_limit)
                    rows.append({**base, "method": method, **r})
                    print(rows[-1], flush=True)
    return rows


def part_formulations(args):
    rows = []
    name, X0, y0 = compas_or("breast_cancer", load_breast_cancer)
    grid = (
        [(50, 3), (100, 3), (100, 5), (300, 5), (1000, 10)]
        if args.quick
        else [
            (50, 3),
            (100, 3),
            (100, 5),
            (200, 5),
            (500, 5),
            (1000, 5),
            (1000, 10),
            (2000, 10),
            (5000, 10),
        ]
    )
    depth, lam = 4, 0.01
    for N, T in grid:
        X, y = resample(X0, y0, N, seed=N * 7 + T)
        rf = forest(X, y, T, depth)
        d = extract(rf, X, y)
        for method in ("lp", "mip", "ip1"):
            r = _run(d, lam, method, args.time_limit)
            rows.append(
                {
                    "dataset": name,
                    "N": N,
                    "T": T,
                    "depth": depth,
                    "lam": lam,
                    "method": {"lp": "IP3-LP", "mip": "IP3-MIP", "ip1": "IP1-MIP"}[method],
                    "n_entries": d.n_entries,
                    **r,
                }
            )
            print(rows[-1], flush=True)
        # the printed (full) IP3 too, to show what the aggregation buys
        r = _run(d, lam, "lp", args.time_limit, formulation="full")
        rows.append(
            {
                "dataset": name,
                "N": N,
                "T": T,
                "depth": depth,
                "lam": lam,
                "method": "IP3-LP(full)",
                "n_entries": d.n_entries,
                **r,
            }
        )
        print(rows[-1], flush=True)
    return rows


def part_table1(args):
    rows = []
    sources = []
    Xb, yb = load_breast_cancer(return_X_y=True)
    sources.append(("breast_cancer", Xb, yb, None))
    cs = load_costsensitive("diabetes")
    if cs is not None:
        sources.append(("diabetes_costs", *cs))
    splits = 3 if args.quick else 10
    lams = [0.0, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1]
    T, depth = 20, 6
    for name, X, y, costs in sources:
        for s in range(splits):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=s, stratify=y)
            rf = forest(Xtr, ytr, T, depth, seed=s)
            d = extract(rf, Xtr, ytr, costs)
            none = PrunedEnsemble(d, unpruned(d), lam=0.0)
            ev = none.evaluate(Xte, yte)
            rows.append(
                {
                    "dataset": name,
                    "split": s,
                    "method": "none",
                    "lam": 0.0,
                    **{f"test_{k}": v for k, v in ev.items()},
                }
            )
            for lam in lams:
                for method in ("ensemble", "individual"):
                    res = (
                        prune(d, lam=lam) if method == "ensemble" else individual_prune(d, lam=lam)
                    )
                    pe = res.model  # the ensemble objective, also for individual pruning
                    ev = pe.evaluate(Xte, yte)
                    rows.append(
                        {
                            "dataset": name,
                            "split": s,
                            "method": method,
                            "lam": lam,
                            "train_objective": pe.objective,
                            **{f"test_{k}": v for k, v in ev.items()},
                        }
                    )
            print(name, s, "done", flush=True)
    return rows


def table1_summary(rows):
    """Cost at matched test error: for targets err_none + {0.5%, 2%} (soft vote), the smallest
    mean test cost among λ whose mean test error over splits is within target."""
    df = pd.DataFrame(rows)
    out = []
    for name, g in df.groupby("dataset"):
        mean = g.groupby(["method", "lam"])[["test_error_soft", "test_feature_cost"]].mean()
        none = mean.loc["none"].iloc[0]
        for label, slack in (("low", 0.005), ("high", 0.02)):
            target = none.test_error_soft + slack
            rec = {
                "dataset": name,
                "level": label,
                "target_error": target,
                "none_cost": none.test_feature_cost,
            }
            for m in ("ensemble", "individual"):
                sub = mean.loc[m]
                ok = sub[sub.test_error_soft <= target + 1e-12]
                rec[f"{m}_cost"] = float(ok.test_feature_cost.min()) if len(ok) else np.nan
                rec[f"{m}_cost_pct"] = 100 * rec[f"{m}_cost"] / none.test_feature_cost
            out.append(rec)
    return out


def part_target(args):
    name, X0, y0 = compas_or("digits", load_digits)
    rows = []
    for depth in (4,) if args.quick else (4, 6):
        X, y = resample(X0, y0, 10000, seed=1)
        rf = forest(X, y, 40, depth)
        for method in ("lp", "colgen"):
            t0 = time.perf_counter()
            d = extract(rf, X, y)
            t_ex = time.perf_counter() - t0
            r = _run(d, 0.01, method, args.target_time_limit)
            rows.append(
                {
                    "dataset": name,
                    "N": 10000,
                    "T": 40,
                    "depth": depth,
                    "method": method,
                    "extract_time": t_ex,
                    "end_to_end": time.perf_counter() - t0,
                    "n_entries": d.n_entries,
                    **r,
                }
            )
            print(rows[-1], flush=True)
    return rows


def _best_of(fn, repeats):
    """Minimum wall time over ``repeats`` runs (the machine is shared: the minimum is the least
    disturbed measurement); returns the last output and that time."""
    best, out = np.inf, None
    for _ in range(repeats):
        out, t = timed(fn)
        best = min(best, t)
    return out, best


def part_colgen(args):
    rows = []
    sources = compas_and_digits()
    if args.quick:
        grid = {
            "compas": [(N, T) for N in (1000, 2000, 4000) for T in (10, 20)] + [(10000, 40)],
            "digits": [(1000, 10), (2000, 20)],
        }
    else:
        grid = {
            "compas": [(N, T) for N in (1000, 5000, 20000) for T in (10, 40, 100)] + [(10000, 40)],
            "digits": [(N, T) for N in (1000, 5000) for T in (10, 40, 100)],
        }
    if args.colgen_sizes:  # e.g. "compas:20000x100,digits:5000x40"
        grid = {}
        for item in args.colgen_sizes.split(","):
            name, size = item.split(":")
            N, T = (int(v) for v in size.lower().split("x"))
            grid.setdefault(name, []).append((N, T))
    depth, lam = 5, 0.01
    for name, X0, y0 in sources:
        for N, T in grid.get(name, []):
            X, y = resample(X0, y0, N, seed=N + T)
            rf = forest(X, y, T, depth)
            d = extract(rf, X, y)
            base = {
                "dataset": name,
                "N": N,
                "T": T,
                "depth": depth,
                "lam": lam,
                "n_entries": d.n_entries,
                "n_pairs": d.n_pairs,
                "command": " ".join(sys.argv[1:]),
                "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            }

            # LP and colgen runs under 5 s are repeated and the fastest kept
            def run_lp(d=d):
                return prune(d, lam=lam, method="lp", time_limit=args.time_limit)

            lp, t_lp = _best_of(run_lp, 1)
            if t_lp < 5:
                lp, t_lp = _best_of(run_lp, 3)
            rows.append(
                {
                    **base,
                    "method": "lp",
                    "status": lp.status.value,
                    "time": t_lp,
                    "objective": lp.objective,
                    "solver_objective": lp.solution.objective,
                    "rows": lp.stats["model_ir"].n_constraints,
                }
            )
            print(rows[-1], flush=True)
            variants = [("colgen", True, True), ("colgen(rebuilt master)", False, True)]
            if d.n_entries <= (200_000 if args.quick else 1_000_000):
                variants.append(("colgen(per-entry rows)", True, False))
            for label, inc, merge in variants:

                def go(d=d, inc=inc, merge=merge):
                    return column_generation(
                        d, lam=lam, time_limit=args.time_limit, incremental=inc, merge=merge
                    )

                cg, t = _best_of(go, 1)
                if t < 5:
                    cg, t = _best_of(go, 3)
                obj = cg.objective  # nan when no integral combination was found
                st = cg.stats
                rows.append(
                    {
                        **base,
                        "method": label,
                        "status": cg.status.value,
                        "time": t,
                        "objective": obj,
                        "solver_objective": st["lp_value"],
                        "lower_bound": cg.lower_bound,
                        "iterations": st["iterations"],
                        "columns": st["n_columns"],
                        "rows": st["master_rows"],
                        "master_time": st["master_time"],
                        "pricing_time": st["pricing_time"],
                        "simplex_iterations": st["simplex_iterations"],
                        "obj_diff_vs_lp": abs(obj - lp.objective),
                    }
                )
                print(rows[-1], flush=True)
    return rows


# ------------------------------------------------------------------------------- report
def _md_table(df: pd.DataFrame, cols: list[str]) -> str:
    """The columns ``cols`` of ``df`` that it has; floats to 4 significant digits, NaN empty."""
    cols = [c for c in cols if c in df.columns]
    rows = (
        [harness.fmt(r[c], 4, missing="", fixed_from=math.inf) for c in cols]
        for _, r in df[cols].iterrows()
    )
    return "\n".join(harness.md_table(cols, rows))


def _cut_section(df: pd.DataFrame) -> list[str]:
    if "cut_time" not in df.columns:
        return []
    df = df[df["cut_time"].notna()].copy()
    for m in ("lp", "colgen", "ip1"):
        col = f"{m}_time"
        if col in df.columns:
            df[f"{m}/cut"] = df[col] / df["cut_time"]
    if "scipy_dinic_time" in df.columns:  # algorithm against algorithm: max-flow times only
        df["scipy_dinic/flow"] = df["scipy_dinic_time"] / df["flow_time"]
    out = [
        f"## IP3 as one minimum cut (method='cut', λ = {df['lam'].iloc[0]:g}, unit costs)",
        "",
        "One fresh process per row. `cut_time`: network build and reduction + native max-flow "
        "+ re-scoring (`flow_time` the max-flow alone); `cut_arcs`: the arcs the max-flow ran "
        "on (after the exact reductions, since issue 25); `end_to_end` = extract + cut (not "
        "the forest fit); `rss_*`: the process's peak resident set after that step (it includes "
        "the data and the forest). `X/cut`: time ratio; an LP/colgen/IP1 run is capped by "
        "`--cut-lp-limit` (status `time_limit` then, and its ratio is a lower bound). "
        "`path_over_cut`: the whole exact cost–error path against one cut. `scipy_dinic/flow`: "
        "scipy's generic Dinic on the same network (int32 capacities, so its value is only "
        "approximate: `scipy_rel_diff`) against our native max-flow alone. "
        "`load`: 1-minute load average when the case started (2 cores, shared).",
        "",
        _md_table(
            df,
            [
                "dataset",
                "N",
                "T",
                "depth",
                "n_entries",
                "cut_arcs",
                "extract_time",
                "cut_time",
                "flow_time",
                "end_to_end",
                "rss_after_cut_mb",
                "lp_status",
                "lp/cut",
                "colgen/cut",
                "ip1/cut",
                "scipy_dinic/flow",
                "path_vertices",
                "path_over_cut",
                "load",
            ],
        ),
        "",
        _md_table(
            df,
            [
                "dataset",
                "N",
                "T",
                "depth",
                "cut_objective",
                "cut_gap",
                "lp_minus_cut",
                "colgen_status",
                "colgen_minus_cut",
                "ip1_minus_cut",
                "scipy_rel_diff",
                "lp_time",
                "colgen_time",
                "ip1_time",
                "path_time",
            ],
        ),
        "",
    ]
    notes = []
    if "lp_time" in df.columns:
        slow = df[df["lp_time"] >= 1.0]
        if len(slow):
            worst = slow.loc[slow["lp/cut"].idxmin()]
            notes.append(
                f"* Where the LP takes >= 1 s ({len(slow)} cases) the cut is "
                f"{slow['lp/cut'].min():.1f}-{slow['lp/cut'].max():.0f}x faster (a capped LP "
                f"counts at its cap); the least: {worst['dataset']} N={worst['N']:.0f} "
                f"T={worst['T']:.0f} depth {worst['depth']:.0f} (target 20x)."
            )
    if "path_over_cut" in df.columns and df["path_over_cut"].notna().any():
        notes.append(
            f"* The exact path costs {df['path_over_cut'].min():.1f}-"
            f"{df['path_over_cut'].max():.1f}x one cut (target < 10x)."
        )
    big = df[(df["N"] == 100_000) & (df["T"] == 100) & (df["depth"] == 10)]
    for _, r in big.iterrows():
        notes.append(
            f"* 100 trees of depth 10 on 100 000 rows: {r['end_to_end']:.0f} s end to end "
            f"(extract {r['extract_time']:.0f} s, cut {r['cut_time']:.0f} s) and "
            f"{r['rss_after_cut_mb'] / 1024:.1f} GB peak RSS at load {r['load']:.1f} on 2 "
            "cores"
            + (
                ": **the < 30 s / < 4 GB target is missed** (76 M feature-use entries: the "
                "extraction alone holds 4.4 GB; the native network needs 24 B per arc). This "
                "row predates issue 25; the part `scale` above has the current code on it."
                if "uncompressed_arcs" not in r
                else "."
            )
        )
    return out + notes + ([""] if notes else [])


def write(results, args):
    meta = {
        "quick": args.quick,
        "time_limit": args.time_limit,
        **harness.machine_info("python", "machine", "cpus"),
        "date": harness.timestamp(utc=False),
        "command": " ".join(sys.argv[1:]),
    }
    if args.report_only and getattr(args, "last_meta", None):
        meta = args.last_meta  # nothing was run: the header still describes the last run
    elif getattr(args, "previous_meta", None):
        meta["kept_parts_from"] = args.previous_meta
    md = [
        "# Ensemble pruning benchmark (odtkit.pruning)",
        "",
        f"Command: `python benchmarks/pruning.py {meta.get('command', '')}` — "
        f"{meta['date']}, {meta['cpus']} cores (shared with other jobs), "
        f"per-run time limit {meta['time_limit']}s.",
        "",
    ]
    prev = meta.get("kept_parts_from")
    if prev:
        md += [
            f"Parts not rerun by this command are kept from the run of {prev.get('date')} "
            f"(quick={prev.get('quick')}, time limit {prev.get('time_limit')}s).",
            "",
        ]
    if "scaling" in results:
        df = pd.DataFrame(results["scaling"])
        md += [
            "## Scaling (RF depth 5, λ = 0.01; compact IP3 = aggregated + merged pairs)",
            "",
            "`rows`/`nonzeros`: the compact model actually solved by `lp`/`mip`; "
            "column generation's master has one link row per (tree, feature, example) "
            "entry (`n_entries`).",
            "",
            _md_table(
                df,
                [
                    "dataset",
                    "N",
                    "T",
                    "n_entries",
                    "rows",
                    "nonzeros",
                    "extract_time",
                    "build_time",
                    "method",
                    "status",
                    "time",
                    "objective",
                    "iterations",
                ],
            ),
            "",
        ]
        piv = df.pivot_table(index=["dataset", "N", "T"], columns="method", values="time")
        if {"lp", "colgen"} <= set(piv.columns):
            piv["colgen/lp"] = piv["colgen"] / piv["lp"]
            md += [
                "Column generation vs full LP (time ratio < 1: colgen faster):",
                "",
                _md_table(
                    piv.reset_index(), ["dataset", "N", "T", "lp", "colgen", "mip", "colgen/lp"]
                ),
                "",
            ]
    if "formulations" in results:
        df = pd.DataFrame(results["formulations"])
        md += [
            "## IP3 as an LP vs IP1 as a MIP vs IP3 as a MIP (RF depth 4, λ = 0.01)",
            "",
            _md_table(
                df,
                [
                    "dataset",
                    "N",
                    "T",
                    "n_entries",
                    "method",
                    "status",
                    "time",
                    "objective",
                    "max_fractionality",
                ],
            ),
            "",
        ]
        piv = df.pivot_table(index=["N", "T"], columns="method", values="time")
        st = df.pivot_table(index=["N", "T"], columns="method", values="status", aggfunc="first")
        ob = df.pivot_table(index=["N", "T"], columns="method", values="objective")
        if {"IP3-LP", "IP1-MIP"} <= set(piv.columns):
            piv["IP1-MIP/IP3-LP"] = piv["IP1-MIP"] / piv["IP3-LP"]
            piv["IP1 status"] = st["IP1-MIP"]
            piv["|obj diff|"] = (ob["IP1-MIP"] - ob["IP3-LP"]).abs()
            md += [
                "Speed-up of IP3-LP over IP1-MIP (IP1 status `time_limit` = lower bound on "
                "the speed-up):",
                "",
                _md_table(
                    piv.reset_index(),
                    [
                        "N",
                        "T",
                        "IP3-LP",
                        "IP3-MIP",
                        "IP1-MIP",
                        "IP1-MIP/IP3-LP",
                        "IP1 status",
                        "|obj diff|",
                    ],
                ),
                "",
            ]
    if "table1" in results:
        summ = pd.DataFrame(table1_summary(results["table1"]))
        results["table1_summary"] = summ.to_dict("records")
        md += [
            "## Table-1 shape: test feature cost at matched test error (RF T=20, depth 6)",
            "",
            "Targets: unpruned soft-vote test error + 0.5% (low) / + 2% (high), averaged "
            "over splits; cost = smallest mean test cost among the λ grid meeting the target.",
            "",
            _md_table(
                summ,
                [
                    "dataset",
                    "level",
                    "target_error",
                    "none_cost",
                    "ensemble_cost",
                    "ensemble_cost_pct",
                    "individual_cost",
                    "individual_cost_pct",
                ],
            ),
            "",
        ]
    if "target" in results:
        df = pd.DataFrame(results["target"])
        md += [
            "## Target: 40 trees x 10 000 examples, end to end (extract + build + solve)",
            "",
            _md_table(
                df,
                [
                    "dataset",
                    "depth",
                    "n_entries",
                    "method",
                    "status",
                    "extract_time",
                    "time",
                    "end_to_end",
                    "objective",
                ],
            ),
            "",
        ]
    if "scale" in results:
        md += scale_section(results["scale"])
    if "cut" in results:
        md += _cut_section(pd.DataFrame(results["cut"]))
    if "colgen" in results:
        df = pd.DataFrame(results["colgen"])
        md += [
            "## Column generation vs the compact LP (RF depth 5, λ = 0.01)",
            "",
            "`colgen`: restricted master kept in one warm-started "
            "`odtkit.solvers.IncrementalLP` (HiGHS `addCols` + primal simplex from the last "
            "basis), merged (feature, example) pairs, every tree that prices out adds its "
            "column each iteration. Ablations: `colgen(rebuilt master)` rebuilds the merged "
            "master and solves it cold through `odtkit.solvers.solve` every iteration; "
            "`colgen(per-entry rows)` is incremental with one link row per (tree, feature, "
            "example) entry (the spec's LP4). Times "
            "are the minimum of 3 runs when under 5 s. `rows`: link+leaf+feature rows of "
            "the compact LP, link rows of the master.",
            "",
            _md_table(
                df,
                [
                    "dataset",
                    "N",
                    "T",
                    "n_entries",
                    "method",
                    "status",
                    "time",
                    "rows",
                    "iterations",
                    "columns",
                    "simplex_iterations",
                    "master_time",
                    "pricing_time",
                    "objective",
                    "obj_diff_vs_lp",
                ],
            ),
            "",
        ]
        if "command" in df.columns:
            runs = df.groupby("command")["date"].min()
            md += [
                "Runs: "
                + "; ".join(f"`python benchmarks/pruning.py {c}` ({d})" for c, d in runs.items()),
                "",
            ]
        piv = df.pivot_table(index=["dataset", "N", "T"], columns="method", values="time")
        piv["T x N"] = [t * n for (_, n, t) in piv.index]
        if {"lp", "colgen"} <= set(piv.columns):
            piv["colgen/lp"] = piv["colgen"] / piv["lp"]
            cols = ["dataset", "N", "T", "T x N", "lp", "colgen", "colgen/lp"]
            for label, short in (
                ("colgen(rebuilt master)", "rebuilt/lp"),
                ("colgen(per-entry rows)", "per-entry/lp"),
            ):
                if label in piv.columns:
                    piv[short] = piv[label] / piv["lp"]
                    cols.append(short)
            if "scaling" in results:
                old = pd.DataFrame(results["scaling"])
                old = old[old.method == "colgen"].set_index(["dataset", "N", "T"])["time"]
                piv["before (rebuilt master)"] = old.reindex(piv.index).to_numpy()
                cols.append("before (rebuilt master)")
            md += [
                "Time ratio (< 1: column generation faster). `before`: the scaling part's "
                "column generation run before this change (master rebuilt and cold-solved "
                "every iteration, per-entry rows; runs at 35-60 s hit the 60 s limit).",
                "",
                _md_table(piv.reset_index().sort_values(["dataset", "T x N"]), cols),
                "",
            ]
            limited = df[df.status != "optimal"]
            if len(limited):
                md += [
                    "Stopped by the time limit (their ratios are lower bounds): "
                    + ", ".join(
                        f"{r.method} on {r.dataset} {r.N}x{r.T}" for r in limited.itertuples()
                    )
                    + ".",
                    "",
                ]
            ratio = piv["colgen/lp"].dropna()
            faster = ratio[ratio < 1]
            md += [
                f"colgen/lp ranges from {ratio.min():.2f} to {ratio.max():.2f} over "
                f"{len(ratio)} instances; "
                + (
                    f"column generation is faster on {len(faster)} of them "
                    f"({', '.join(f'{a} {b}x{c}' for a, b, c in faster.index)})."
                    if len(faster)
                    else "no crossover: the full LP is faster on every tested instance. The merged "
                    "master carries essentially all of the compact LP's link rows (compare "
                    "`rows`), so each warm re-solve works on an LP about as large as the "
                    "compact one, which HiGHS (with presolve) solves in one go; the master "
                    "time, not pricing, dominates."
                ),
                "",
            ]
    md += [
        "## Notes",
        "",
        "* Every objective above is recomputed from the returned pruning "
        "(`PrunedEnsemble.objective`); LP, MIP, full/compact and column generation agree "
        "to 1e-9 wherever they finish (`|obj diff|` > 0 only for IP1-MIP stopped by the "
        "time limit). `max_fractionality` of every IP3 LP vertex was 0.",
        "* COMPAS has 7 integer features and many duplicate rows, and N > 6907 is resampled "
        "with replacement: the compact model's pair merging profits from this. Digits (64 "
        "features) is the less favourable case.",
        "* The `scaling` and `target` tables' column generation rows predate the incremental "
        "master (rebuilt and cold-solved every iteration, per-entry link rows); the "
        "`colgen` part is the current implementation. Runs stopped by a limit return the "
        "best integral combination of generated columns plus the Lagrangian lower bound.",
        "* Table 1 uses the soft vote (sklearn's rule); hard-vote errors are in the JSON.",
        "",
    ]
    harness.write_results(
        NAME,
        {"meta": meta, **results},
        "\n".join(md) + "\n",
        out_dir=args.out_dir,
        json_default=float,
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small grid (minutes)")
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per solver run")
    ap.add_argument(
        "--target-time-limit",
        type=float,
        default=300.0,
        help="seconds for the 40 x 10 000 target runs",
    )
    ap.add_argument("--parts", default="formulations,table1,scaling,target,cut")
    ap.add_argument("--cut-lam", type=float, default=1e-3, help="λ of the cut part")
    ap.add_argument(
        "--cut-lp-limit",
        type=float,
        default=60.0,
        help="cut part: time limit of each LP / colgen / IP1 run",
    )
    ap.add_argument(
        "--cut-case-timeout", type=float, default=900.0, help="cut part: seconds per case"
    )
    ap.add_argument(
        "--before-src",
        default=None,
        help="scale part: an odtkit src folder (native module built in place) of the code "
        "before a change, run side by side with this code",
    )
    ap.add_argument(
        "--forest-cache",
        default=None,
        help="scale part: folder to pickle the fitted forests in (fitted once, not timed)",
    )
    ap.add_argument(
        "--keep",
        action="store_true",
        help="keep the other parts' results from an existing pruning.json",
    )
    ap.add_argument(
        "--colgen-sizes",
        default="",
        help="colgen part only: DATASET:NxT,... instead of the grid; rows are "
        "merged into the kept colgen results (with --keep)",
    )
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="rewrite pruning.md from pruning.json without running anything",
    )
    harness.add_out_dir(ap)
    args = ap.parse_args(argv)
    results = {}
    old = harness.read_results(NAME, args.out_dir) if args.keep or args.report_only else None
    if old is not None:
        args.last_meta = old.get("meta")
        prev = old.get("meta", {})
        args.previous_meta = prev.get("kept_parts_from", prev)
        results = {
            k: v
            for k, v in old.items()
            if k in ("scaling", "formulations", "table1", "target", "colgen", "cut", "scale")
        }
    if args.report_only:
        write(results, args)
        return
    for part in args.parts.split(","):
        previous = results.get(part)
        results[part] = {
            "scaling": part_scaling,
            "formulations": part_formulations,
            "table1": part_table1,
            "target": part_target,
            "colgen": part_colgen,
            "cut": part_cut,
            "scale": part_scale,
        }[part](args)
        if part == "colgen" and args.colgen_sizes and previous:
            done = {(r["dataset"], r["N"], r["T"]) for r in results[part]}
            results[part] = [
                r for r in previous if (r["dataset"], r["N"], r["T"]) not in done
            ] + results[part]
        write(results, args)


if __name__ == "__main__":
    main()

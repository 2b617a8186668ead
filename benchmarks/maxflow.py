"""Benchmark: the closure max-flow algorithms (issue 25 item 3) on real pruning networks.

Writes benchmarks/results/maxflow.json and maxflow.md. For each forest
(``RandomForestClassifier`` on ``make_classification`` with ``n_informative=10``) the cut network
of :func:`odtkit.pruning._cut.closure_network` is dumped once (cached as ``.npz`` under
``--cache``, default /tmp/p25) with its capacities at every λ, together with the *reduced*
network per λ that the library's cut actually hands its max-flow
(:func:`odtkit.pruning._cut.reduced_network`: dead splits dropped, splits forced and their
pairs paid, identical examples and pairs merged). Every algorithm of
``_native.closure_min_cut`` then solves every network (minimum of two runs when a run is short);
the table gives seconds, the ratio to Dinic, and checks that all flow values and minimal source
sides are identical (and that reduced flow + paid capacity = full flow).

Usage: ``PYTHONPATH=src python benchmarks/maxflow.py [--quick] [--cache /tmp/p25]
[--algorithms dinic,push_relabel]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

from odtkit import _native
from odtkit.pruning import extract
from odtkit.pruning._cut import closure_network, reduced_network

RESULTS = Path(__file__).resolve().parent / "results"
LAMS = (1e-4, 1e-3, 1e-2, 1e-1)
#: (trees, depth, rows, features)
FORESTS = (
    (40, 8, 10_000, 20),
    (100, 12, 10_000, 30),
    (100, 10, 20_000, 25),
    (100, 10, 100_000, 20),
)
QUICK = ((10, 6, 2_000, 20),)


def _name(T: int, D: int, N: int, K: int) -> str:
    return f"rf{T}_d{D}_n{N}_k{K}"


def dump(T: int, D: int, N: int, K: int, cache: Path) -> Path:
    """Fit, extract and write the full and reduced networks of one forest (cached)."""
    path = cache / f"{_name(T, D, N, K)}.npz"
    if path.exists():
        return path
    t0 = time.perf_counter()
    X, y = make_classification(N, K, n_informative=10, random_state=1)
    rf = RandomForestClassifier(T, max_depth=D, random_state=1, n_jobs=1).fit(X, y)
    data = extract(rf, X, y)
    del rf, X, y
    net = closure_network(data)
    arrays = {"tails": net.tails, "heads": net.heads}
    for i, lam in enumerate(LAMS):
        src, snk = net.capacities(lam)
        arrays[f"src{i}"], arrays[f"snk{i}"] = src, snk
        red = reduced_network(data, lam)  # what cut_prune's max-flow sees at lam
        arrays[f"rsrc{i}"], arrays[f"rsnk{i}"] = red["source_cap"], red["sink_cap"]
        arrays[f"rtails{i}"], arrays[f"rheads{i}"] = red["tails"], red["heads"]
        arrays[f"rpaid{i}"] = np.asarray(red["constant"])
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    print(
        f"dumped {path.name}: {net.n_nodes} nodes, {net.n_arcs} arcs, "
        f"{time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    return path


def _time(args: tuple, algorithm: str) -> tuple[float, dict]:
    """Seconds of one solve (minimum of two when the first is short) and its output."""
    best, out = math.inf, None
    for _ in range(2):
        gc.collect()
        t0 = time.perf_counter()
        out = _native.closure_min_cut(*args, algorithm=algorithm)
        best = min(best, time.perf_counter() - t0)
        if best > 5.0:
            break
    return best, out


def auto_pick(source_cap: np.ndarray, sink_cap: np.ndarray) -> str:
    """What ``algorithm="auto"`` runs (the rule of choose_algorithm in maxflow.cpp; the
    tests check the two agree)."""
    sink, source = float(sink_cap.sum(dtype=float)), float(source_cap.sum(dtype=float))
    if sink == 0.0:
        return "dinic"
    return "boykov_kolmogorov" if sink < 0.2 * source else "dinic"


def run(forests, algorithms, cache: Path) -> list[dict]:
    rows = []
    for forest in forests:
        path = dump(*forest, cache)
        with np.load(path) as z:
            for i, lam in enumerate(LAMS):
                full_flow = None
                for variant in ("full", "reduced"):
                    if variant == "full":
                        args = (z[f"src{i}"], z[f"snk{i}"], z["tails"], z["heads"])
                    else:
                        args = (z[f"rsrc{i}"], z[f"rsnk{i}"], z[f"rtails{i}"], z[f"rheads{i}"])
                    row = {
                        "forest": _name(*forest),
                        "lam": lam,
                        "network": variant,
                        "n_nodes": int(args[0].shape[0]),
                        "n_arcs": int(args[2].shape[0]),
                        "seconds": {},
                    }
                    row["auto_picks"] = auto_pick(args[0], args[1])
                    ref = None
                    for algorithm in algorithms:
                        seconds, out = _time(args, algorithm)
                        row["seconds"][algorithm] = seconds
                        if ref is None:
                            ref = out
                            row["flow"] = int(out["flow"])
                            row["same_flow_and_side"] = True
                        elif out["flow"] != ref["flow"] or not np.array_equal(
                            out["source_side"], ref["source_side"]
                        ):
                            row["same_flow_and_side"] = False
                        row.setdefault("status", {})[algorithm] = out["status"]
                        del out
                    del ref
                    if variant == "full":
                        full_flow = row["flow"]
                    else:
                        row["reduced_plus_paid_equals_full"] = (
                            row["flow"] + int(z[f"rpaid{i}"]) == full_flow
                        )
                    del args
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    return rows


def write(rows: list[dict], algorithms: list[str], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = {"machine": f"{os.cpu_count()} cores", "lams": LAMS, "algorithms": algorithms}
    (out_dir / "maxflow.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    head = "| forest | λ | network | nodes | arcs | " + " | ".join(f"{a} s" for a in algorithms)
    head += " | " + " | ".join(f"{a}/dinic" for a in algorithms if a != "dinic")
    head += " | auto picks | auto/dinic | same flow & side |"
    lines = [
        "# Closure max-flow algorithms on pruning networks (benchmarks/maxflow.py)",
        "",
        "Seconds of `_native.closure_min_cut` (minimum of two runs below 5 s) on the cut "
        "networks of random forests (make_classification, n_informative=10), full and after "
        "the exact reductions the library's cut applies before its max-flow "
        "(`odtkit.pruning._cut.reduced_network`). Ratio < 1: faster than Dinic. "
        "`auto` runs what `choose_algorithm` picks (Boykov–Kolmogorov when the sink capacity "
        "is below a fifth of the source capacity, else Dinic); its time is that algorithm's.",
        "",
        head,
        "|" + "---|" * (head.count("|") - 1),
    ]
    for r in rows:
        s = r["seconds"]
        cells = [
            r["forest"],
            f"{r['lam']:g}",
            r["network"],
            str(r["n_nodes"]),
            str(r["n_arcs"]),
            *(f"{s[a]:.3f}" for a in algorithms),
            *(
                f"{s[a] / s['dinic']:.2f}" if s["dinic"] > 0 else "-"
                for a in algorithms
                if a != "dinic"
            ),
            r["auto_picks"],
            f"{s[r['auto_picks']] / s['dinic']:.2f}" if s["dinic"] > 0 else "-",
            "yes" if r["same_flow_and_side"] else "**NO**",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    red = [r for r in rows if r["network"] == "reduced"]
    ok = all(r.get("reduced_plus_paid_equals_full", True) for r in red)
    lines += ["", f"Reduced flow + paid capacity = full flow on every reduced network: {ok}."]
    (out_dir / "maxflow.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small forest, a smoke run")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/p25"))
    parser.add_argument("--algorithms", default="dinic,push_relabel,boykov_kolmogorov")
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args()
    algorithms = args.algorithms.split(",")
    if algorithms[0] != "dinic":
        parser.error("--algorithms must start with dinic (the reference)")
    rows = run(QUICK if args.quick else FORESTS, algorithms, args.cache)
    write(rows, algorithms, args.out_dir)


if __name__ == "__main__":
    main()

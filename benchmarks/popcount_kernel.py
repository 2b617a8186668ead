"""Benchmark: the popcount kernels before (portable) and after (run-time dispatch).

Writes benchmarks/results/popcount_kernel.json and popcount_kernel.md. Two parts:

1. **kernel** — the split-loop kernel ``popcount(s & x_j & plane)`` over ``n_words`` 64-bit
   words for each of ``n_features`` features, one kernel call per feature as the searches make
   it (``_native._popcount_kernel_bench``), in ns per (feature x word): ``portable`` (the
   baseline x86-64 build's software popcount, what every search ran before), ``dispatch``
   (what the searches use now on this CPU) and ``limit`` (a plain hardware popcount loop over
   the same number of words: the machine's throughput bound).
2. **end_to_end** — native search time (Problem build + search, the Python result wrapping
   left out) with the problem's kernels forced portable vs dispatched: the depth-two solver
   (``max_depth=2``) on tic-tac-toe, car-evaluation, balance-scale and monk2, plus two deeper
   searches whose time is spent in the split loops.

Each figure is the minimum over ``--runs`` runs, the two modes interleaved, so that load from
other processes on a shared machine inflates both alike.

Usage: ``python benchmarks/popcount_kernel.py [--runs 5] [--quick]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from odtkit import _native, datasets
from odtkit.core import search_tree
from odtkit.core._problem import build_problem

OUT = Path(__file__).resolve().parent / "results"
KERNEL_SHAPES = [(64, 4), (64, 16), (64, 64), (16, 256)]
DEPTH2 = ["tic-tac-toe", "car-evaluation", "balance-scale", "monk2"]
DEEPER = [("balance-scale", 0.001, None), ("car-evaluation", 0.005, 4)]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_flags() -> list[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    flags = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return sorted({f for f in flags.split() if f in ("popcnt", "avx2", "avx512_vpopcntdq")})


def kernel_part(runs: int, quick: bool) -> list[dict]:
    rows = []
    budget = 2e7 if quick else 1e8  # feature x word visits per timing
    for n_features, n_words in KERNEL_SHAPES:
        repeats = max(1, int(budget / (n_features * n_words)))
        best = {"portable": float("inf"), "dispatch": float("inf"), "limit": float("inf")}
        checks = {}
        for _ in range(runs):
            for mode in best:
                seconds, check = _native._popcount_kernel_bench(n_features, n_words, repeats, mode)
                best[mode] = min(best[mode], seconds)
                checks[mode] = check
        assert checks["portable"] == checks["dispatch"], "kernel modes disagree"
        per = {m: best[m] * 1e9 / (repeats * n_features * n_words) for m in best}
        rows.append(
            {
                "n_features": n_features,
                "n_words": n_words,
                "ns_portable": per["portable"],
                "ns_dispatch": per["dispatch"],
                "ns_limit": per["limit"],
                "speedup": per["portable"] / per["dispatch"],
                "dispatch_over_limit": per["dispatch"] / per["limit"],
            }
        )
        print(rows[-1], flush=True)
    return rows


def native_time(
    data, lam: float, depth: int | None, mode: str
) -> tuple[float, _native.SearchOutput]:
    start = time.perf_counter()
    problem = build_problem(data, popcount=mode)
    config = _native.SearchConfig(lam=lam, max_depth=-1 if depth is None else depth)
    raw = _native.search_dp(problem, config)
    return time.perf_counter() - start, raw


def end_to_end_part(runs: int, quick: bool) -> list[dict]:
    cases = [(name, 0.01, 2) for name in DEPTH2] + ([] if quick else DEEPER)
    rows = []
    for name, lam, depth in cases:
        data = datasets.load(name)
        best = {"portable": float("inf"), "auto": float("inf")}
        outs = {}
        for _ in range(runs):
            for mode in best:
                seconds, raw = native_time(data, lam, depth, mode)
                best[mode] = min(best[mode], seconds)
                outs[mode] = raw
        assert outs["portable"].tree == outs["auto"].tree, name
        assert outs["portable"].objective == outs["auto"].objective, name
        public = min(_timed(search_tree, data, lam, max_depth=depth) for _ in range(runs))
        rows.append(
            {
                "dataset": name,
                "lam": lam,
                "max_depth": depth,
                "n_points": int(outs["auto"].stats["n_points"]),
                "n_words": int(outs["auto"].stats["n_words"]),
                "seconds_portable": best["portable"],
                "seconds_dispatch": best["auto"],
                "speedup": best["portable"] / best["auto"],
                "search_tree_seconds": public,
                "objective": outs["auto"].objective,
            }
        )
        print(rows[-1], flush=True)
    return rows


def _timed(f, *args, **kwargs) -> float:
    start = time.perf_counter()
    f(*args, **kwargs)
    return time.perf_counter() - start


def write(meta: dict, kernel: list[dict], e2e: list[dict]) -> None:
    OUT.mkdir(exist_ok=True)
    payload = {"meta": meta, "kernel": kernel, "end_to_end": e2e}
    (OUT / "popcount_kernel.json").write_text(json.dumps(payload, indent=1))
    lines = [
        "# Popcount kernels: portable vs run-time dispatch",
        "",
        f"CPU: {meta['cpu']} ({meta['machine']}), flags {', '.join(meta['cpu_flags'])}; "
        f"{meta['cores']} cores shared with other processes (load average "
        f"{meta['load_average']} at the start); min over {meta['runs']} interleaved runs.",
        f"Problems use `{meta['dispatch_mode']}` kernels by default on this machine.",
        "",
        "## Split-loop kernel, ns per (feature x 64-bit word)",
        "",
        "| features | words | portable (before) | dispatch (after) | plain popcnt loop (limit) "
        "| speed-up | dispatch / limit |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in kernel:
        lines.append(
            f"| {r['n_features']} | {r['n_words']} | {r['ns_portable']:.3f} | "
            f"{r['ns_dispatch']:.3f} | {r['ns_limit']:.3f} | {r['speedup']:.2f}x | "
            f"{r['dispatch_over_limit']:.2f}x |"
        )
    lines += [
        "",
        "## End to end (Problem build + native dp search), milliseconds",
        "",
        "| dataset | lam | max_depth | points | words | portable | dispatch | speed-up "
        "| search_tree |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in e2e:
        depth = "none" if r["max_depth"] is None else r["max_depth"]
        lines.append(
            f"| {r['dataset']} | {r['lam']} | {depth} | {r['n_points']} | {r['n_words']} | "
            f"{1e3 * r['seconds_portable']:.3f} | {1e3 * r['seconds_dispatch']:.3f} | "
            f"{r['speedup']:.2f}x | {1e3 * r['search_tree_seconds']:.3f} |"
        )
    lines += ["", meta["notes"], ""]
    (OUT / "popcount_kernel.md").write_text("\n".join(lines))


NOTES = (
    "The depth-two solver itself counts pair frequencies by walking set bits (no popcount), "
    "so at max_depth=2 only the greedy start, the root's class sums and the solver's "
    "cache-distance counts use the kernels, and the end-to-end gain there is small; searches "
    "that branch deeper spend their time in the split loops' plane popcounts and gain most. "
    "`search_tree` adds the Python side (validation, tree decoding, the objective re-check, "
    "the trace DataFrame). With 4-word supports the call per feature and class costs about as "
    "much as its popcounts, so the kernel stays ~2x above the plain loop there; from 16 words "
    "on it is within 1.1-1.3x. AVX2/AVX-512 popcounts are not used: supports span a few to a "
    "few dozen words, where a vector popcount does not pay for its setup."
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    meta = {
        "cpu": cpu_model(),
        "machine": platform.machine(),
        "cpu_flags": cpu_flags(),
        "cores": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
        "runs": args.runs,
        "dispatch_mode": build_problem(datasets.load("monk2")).popcount,
        "date": time.strftime("%Y-%m-%d"),
        "notes": NOTES,
    }
    kernel = kernel_part(args.runs, args.quick)
    e2e = end_to_end_part(args.runs, args.quick)
    write(meta, kernel, e2e)


if __name__ == "__main__":
    main()

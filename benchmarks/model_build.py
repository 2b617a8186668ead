"""Benchmark: building the tree MIPs on 10^4 .. 10^6 rows (issue 15, part 5).

Writes benchmarks/results/model_build.json and model_build.md. Each build runs in a fresh
child process (so its peak RSS is its own): random binary data, ``n`` rows x ``p`` features,
labels ``x0 xor x3`` with 10 % noise, depth 2, lam = 0.01, aggregation on (the default).

Two shapes per ``n``:

* ``p = 20``: up to 2^21 distinct (x, y) rows, so nearly every row is distinct up to 10^5 and
  ~70 % at 10^6 — the model itself grows with ``n``;
* ``p = 10``: at most 2^11 distinct rows whatever ``n`` is — the build must cost the
  aggregation (linear in ``n``, a fraction of a second) plus a model of a few thousand rows.

Reported per build: distinct rows, variables, nonzeros, seconds (aggregation included), peak
RSS, and microseconds per distinct row (flat across ``n`` means linear in distinct rows).

Usage: ``python benchmarks/model_build.py [--quick] [--out-dir DIR]``
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from _harness import (
    ChildError,
    add_out_dir,
    call_in_child,
    fmt,
    machine_info,
    md_table,
    peak_rss_mb,
    timestamp,
    write_results,
)

FORMULATIONS = ("FlowOCT", "RBinOCT", "BinOCT", "PathOCT")
ROWS = (10_000, 100_000, 1_000_000)
FEATURES = (20, 10)
DEPTH = 2
TIMEOUT = 600.0


def build_once(n: int, p: int, formulation: str, depth: int, seed: int = 0) -> dict[str, Any]:
    """Child side: build one model and report its size, time and the process's peak RSS."""
    import numpy as np

    from odtkit import formulations
    from odtkit.datasets import Dataset
    from odtkit.formulations._common import row_data

    rng = np.random.default_rng(seed)
    X = rng.random((n, p)) < 0.5
    y = (X[:, 0] ^ X[:, 3] ^ (rng.random(n) < 0.1)).astype(np.int64)
    data = Dataset.from_arrays(X, y)
    start = time.perf_counter()
    distinct = row_data(data).n_rows
    aggregate_s = time.perf_counter() - start
    start = time.perf_counter()
    model = getattr(formulations, formulation)().build(data, max_depth=depth, lam=0.01)
    seconds = time.perf_counter() - start
    return {
        "n": n,
        "p": p,
        "formulation": formulation,
        "depth": depth,
        "distinct_rows": int(distinct),
        "n_vars": int(model.n_vars),
        "n_constraints": int(model.n_constraints),
        "nnz": int(model.n_nonzeros),
        "aggregate_s": aggregate_s,
        "build_s": seconds,
        "peak_rss_mb": peak_rss_mb(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^4 and 10^5 rows only")
    add_out_dir(parser)
    args = parser.parse_args(argv)
    rows_list = ROWS[:2] if args.quick else ROWS
    results: list[dict[str, Any]] = []
    for n in rows_list:
        for p in FEATURES:
            for name in FORMULATIONS:
                try:
                    row = call_in_child(
                        "model_build:build_once", n, p, name, DEPTH, timeout=TIMEOUT
                    )
                except ChildError as exc:
                    row = {
                        "n": n,
                        "p": p,
                        "formulation": name,
                        "depth": DEPTH,
                        "error": str(exc)[-300:],
                    }
                results.append(row)
                print(row, flush=True)

    lines = [
        "# Building the tree MIPs on 10^4 .. 10^6 rows",
        "",
        f"{timestamp()}; {machine_info('python', 'machine', 'cpus', 'load_average')}.",
        f"Random binary data, depth {DEPTH}, lam 0.01, aggregation on; each build in a fresh "
        "process. `s` includes the aggregation into distinct rows; `µs/distinct` is the build "
        "time per distinct row.",
        "",
    ]
    table = []
    for r in results:
        if "error" in r:
            table.append([r["formulation"], r["n"], r["p"], "–", "–", "–", "error", "–", "–"])
            continue
        table.append(
            [
                r["formulation"],
                r["n"],
                r["p"],
                r["distinct_rows"],
                r["n_vars"],
                r["nnz"],
                fmt(r["build_s"]),
                fmt(1e6 * r["build_s"] / max(r["distinct_rows"], 1)),
                fmt(r["peak_rss_mb"], 4),
            ]
        )
    lines += md_table(
        [
            "formulation",
            "rows",
            "features",
            "distinct",
            "variables",
            "nonzeros",
            "s",
            "µs/distinct",
            "peak RSS MB",
        ],
        table,
    )
    write_results(
        "model_build",
        {"timestamp": timestamp(), "machine": machine_info(), "results": results},
        "\n".join(lines) + "\n",
        out_dir=args.out_dir,
    )


if __name__ == "__main__":
    main()

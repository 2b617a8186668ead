"""Benchmark: ``OptimalTreeClassifier()`` with its defaults on continuous tables (issue 13).

Writes benchmarks/results/continuous_defaults.json and continuous_defaults.md. Per dataset and
lam, in a fresh child process (its peak RSS is its own): one fit on all rows with the defaults
(threshold guessing with 40 depth-1 boosting rounds; unlimited depth, as the results were
measured before the default became depth 3, issue 22), then 5-fold
cross-validated accuracy against scikit-learn's CART (``DecisionTreeClassifier``) given the same
number of leaves (``max_leaf_nodes``) on each fold. ``guess_thresholds=None`` (every midpoint)
is the "before": it is run with a 20 s limit per fit on breast cancer and wine only, since with
its defaults it did not finish in 20 min on breast cancer.

Usage: ``python benchmarks/continuous_defaults.py [--out-dir DIR]``
"""

from __future__ import annotations

import argparse
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

DATASETS = ("breast_cancer", "wine", "synthetic_5000x20")
LAMS = (0.01, 0.002)
BEFORE_LIMIT = 20.0
#: Where the every-threshold run is measured too (on the synthetic set it binarizes to ~100,000
#: features: minutes per fit and gigabytes before the search starts).
BEFORE_ON = ("breast_cancer", "wine")


def _load(name: str) -> tuple[Any, Any]:
    from sklearn import datasets

    if name == "breast_cancer":
        return datasets.load_breast_cancer(return_X_y=True)
    if name == "wine":
        return datasets.load_wine(return_X_y=True)
    return datasets.make_classification(
        n_samples=5000, n_features=20, n_informative=8, random_state=1
    )


def run(name: str, lam: float, guess: int | None, time_limit: float | None) -> dict[str, Any]:
    """Child side: the default fit (time, status, leaves, features, RSS) and 5-fold CV."""
    import time

    import numpy as np
    from sklearn.model_selection import StratifiedKFold
    from sklearn.tree import DecisionTreeClassifier

    from odtkit import OptimalTreeClassifier
    from odtkit.datasets import Thresholds

    X, y = _load(name)
    # every midpoint at unlimited depth: dp over them (the exact search is depth-limited)
    thresholds = "all" if guess is None else Thresholds("guess", rounds=guess)
    est = OptimalTreeClassifier(
        lam=lam, max_depth=None, thresholds=thresholds, time_limit=time_limit
    )
    start = time.perf_counter()
    est.fit(X, y)
    fit_s = time.perf_counter() - start
    ours, cart = [], []
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        fold = OptimalTreeClassifier(
            lam=lam, max_depth=None, thresholds=thresholds, time_limit=time_limit
        )
        fold.fit(X[train], y[train])
        ours.append(fold.score(X[test], y[test]))
        leaves = max(fold.tree_.n_leaves, 2)
        tree = DecisionTreeClassifier(max_leaf_nodes=leaves, random_state=0)
        cart.append(tree.fit(X[train], y[train]).score(X[test], y[test]))
    return {
        "dataset": name,
        "lam": lam,
        "guess_thresholds": guess,
        "fit_s": fit_s,
        "status": str(est.result_.status),
        "n_leaves": est.tree_.n_leaves,
        "n_features": len(est.feature_names_),
        "cv_accuracy": float(np.mean(ours)),
        "cart_same_leaves": float(np.mean(cart)),
        "peak_rss_mb": peak_rss_mb(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_out_dir(parser)
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for name in DATASETS:
        for lam in LAMS:
            runs = [(40, None)] + ([(None, BEFORE_LIMIT)] if name in BEFORE_ON else [])
            for guess, limit in runs:
                try:
                    row = call_in_child(
                        "continuous_defaults:run", name, lam, guess, limit, timeout=1200
                    )
                except ChildError as exc:
                    row = {
                        "dataset": name,
                        "lam": lam,
                        "guess_thresholds": guess,
                        "error": str(exc)[-200:],
                    }
                rows.append(row)
                print(row, flush=True)
    write(rows, args.out_dir)


def write(rows: list[dict[str, Any]], out_dir: Any, note: str = "") -> None:
    """The JSON and Markdown results of ``rows`` (``note``: a line under the header)."""
    lines = [
        "# OptimalTreeClassifier() on continuous tables: threshold guessing vs every threshold",
        "",
        f"{timestamp()}; {machine_info('python', 'cpus', 'load_average')}.",
        "`guess 40` is the default; `every` keeps every midpoint and runs with a "
        f"{BEFORE_LIMIT:.0f} s limit per fit (7 fits per row). CV: 5 folds; CART gets the same "
        "number of leaves as our tree on each fold.",
        "",
    ] + ([note, ""] if note else [])
    table = [
        [
            r["dataset"],
            r["lam"],
            "every" if r["guess_thresholds"] is None else f"guess {r['guess_thresholds']}",
            r.get("n_features", "–"),
            fmt(r.get("fit_s")),
            r.get("status", r.get("error", "–")),
            r.get("n_leaves", "–"),
            fmt(r.get("cv_accuracy"), 4),
            fmt(r.get("cart_same_leaves"), 4),
            fmt(r.get("peak_rss_mb"), 4),
        ]
        for r in rows
    ]
    lines += md_table(
        [
            "dataset",
            "lam",
            "thresholds",
            "features",
            "fit s",
            "status",
            "leaves",
            "CV accuracy",
            "CART same leaves",
            "peak RSS MB",
        ],
        table,
    )
    write_results(
        "continuous_defaults",
        {"timestamp": timestamp(), "machine": machine_info(), "results": rows},
        "\n".join(lines) + "\n",
        out_dir=out_dir,
    )


if __name__ == "__main__":
    main()

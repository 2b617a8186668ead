"""Child-process runner for benchmarks/search_vs_peers.py: one (tool, dataset) per process, so
that the peak RSS (``ru_maxrss`` of this process) belongs to that tool alone.

Usage: ``python benchmarks/_peers.py TOOL DATASET LAMS DEPTHS TIME_LIMIT REPS`` with TOOL in
dp, bnb, gosdt, streed, LAMS comma-separated (decreasing), DEPTHS comma-separated integers or
``inf``. Prints one JSON object per setting on stdout as soon as it finishes. (One process per
setting would be cleaner, but importing the scientific stack costs ~10-20 s of wall time per
process on the shared benchmark machine.)

Every objective is recomputed here from the returned model with ``odtkit.metrics.objective``
(training predictions + leaf count), never copied from the tool: gosdt reports float32 bounds
and pystreed optimises the per-branch form (objective - lam).
"""

from __future__ import annotations

import json
import resource
import statistics
import sys
import time
from typing import Any

import numpy as np

from odtkit import datasets, metrics
from odtkit.tree import Tree


def load(name: str) -> datasets.Dataset:
    return datasets.load(name) if name in datasets.names() else datasets.load_shared(name)


def gosdt_tree(node: Any) -> Tree:
    """gosdt's Node has the x_j = 1 ("true") branch on the LEFT; odtkit puts x_j = 0 left."""
    if hasattr(node, "prediction"):
        return Tree.leaf(int(node.prediction))
    return Tree.split(int(node.feature), gosdt_tree(node.right_child), gosdt_tree(node.left_child))


def streed_tree(node: Any) -> Tree:
    """pystreed's get_tree() node: a leaf (label) or feature/left_child/right_child with
    x_j = 0 on the left. The orientation is checked against ``predict`` by the caller."""
    if node.is_leaf_node():
        return Tree.leaf(int(node.label))
    return Tree.split(
        int(node.feature), streed_tree(node.left_child), streed_tree(node.right_child)
    )


def run_once(tool: str, d: datasets.Dataset, lam: float, depth: int | None, limit: float) -> dict:
    X = d.X
    if tool in ("dp", "bnb"):
        from odtkit.core import search_tree

        r = search_tree(d, lam, max_depth=depth, method=tool, time_limit=limit)
        return {
            "time": r.time,
            "objective": r.objective,
            "lower_bound": r.lower_bound,
            "optimal": r.status == "optimal",
            "status": r.status,
            "n_explored": r.n_explored,
            "search_memory_mb": r.peak_memory_mb,
            "search_seconds": r.stats.get("search_seconds", r.time),
            "n_words": r.stats.get("n_words"),
            "n_leaves": r.tree.n_leaves,
        }
    if tool == "gosdt":
        from gosdt import GOSDTClassifier

        model = GOSDTClassifier(
            regularization=lam,
            allow_small_reg=True,
            depth_budget=depth,
            time_limit=int(np.ceil(limit)),
            verbose=False,
        )
        t0 = time.perf_counter()
        model.fit(X.astype(np.int64), d.y)
        elapsed = time.perf_counter() - t0
        tree = gosdt_tree(model.trees_[0].tree)
        # decode check: our reading of the tree predicts what gosdt predicts
        assert np.array_equal(tree.predict(X), model.trees_[0].predict(X)), "gosdt decode"
        res = model.result_
        return {
            "time": elapsed,
            "objective": metrics.objective(tree, d, lam),
            "lower_bound": float(res.lowerbound),
            "optimal": "CONVERGED" in str(res.status),
            "status": str(res.status),
            "n_explored": int(res.graph_size),
            "n_leaves": tree.n_leaves,
        }
    if tool == "streed":
        from pystreed import STreeDClassifier

        model = STreeDClassifier(
            optimization_task="cost-complex-accuracy",
            cost_complexity=lam,
            max_depth=depth,
            time_limit=limit,
        )
        t0 = time.perf_counter()
        model.fit(X.astype(np.int64), d.y)
        elapsed = time.perf_counter() - t0
        tree = streed_tree(model.get_tree())
        predicted = np.asarray(model.predict(X.astype(np.int64)))
        assert np.array_equal(tree.predict(X), predicted), "streed decode"
        return {
            "time": elapsed,
            "objective": metrics.objective(tree, d, lam),
            "optimal": bool(model.fit_result.is_optimal()),
            "status": "optimal" if model.fit_result.is_optimal() else "time_limit",
            "n_explored": None,
            "n_leaves": tree.n_leaves,
        }
    raise ValueError(f"unknown tool {tool!r}")


def main(argv: list[str]) -> None:
    tool, name, lams_s, depths_s, limit_s, reps_s = argv
    d = load(name)
    limit = float(limit_s)
    for depth_s in depths_s.split(","):
        depth = None if depth_s == "inf" else int(depth_s)
        for lam_s in lams_s.split(","):  # decreasing lambda: increasingly hard
            lam = float(lam_s)
            runs = []
            for _ in range(int(reps_s)):
                runs.append(run_once(tool, d, lam, depth, limit))
                # a run that hit the limit or took long is not repeated (as in the anchors)
                if not runs[-1]["optimal"] or runs[-1]["time"] > 20:
                    break
            out = dict(runs[len(runs) // 2])
            out.update(tool=tool, dataset=name, lam=lam, depth=depth)
            out["time"] = statistics.median(r["time"] for r in runs)
            out["times"] = [r["time"] for r in runs]
            out["reps"] = len(runs)
            # ru_maxrss is this process's peak so far: the settings of one child run from easy
            # to hard, so it is (an upper bound on) this setting's own peak
            out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
            out["n_samples"] = d.n_samples
            out["n_features"] = d.n_features
            print(json.dumps(out), flush=True)
            if not out["optimal"]:
                break  # smaller lambdas at this depth are harder: skip them


if __name__ == "__main__":
    main(sys.argv[1:])

"""The peers' adapters and the child-process runner of benchmarks/search_vs_peers.py: one
(tool, dataset) per process, so that the peak RSS (``ru_maxrss`` of this process) belongs to that
tool alone.

Usage: ``python benchmarks/_peers.py TOOL DATASET LAMS DEPTHS TIME_LIMIT REPS`` with TOOL in
dp, bnb, gosdt, streed, LAMS comma-separated (decreasing), DEPTHS comma-separated integers or
``inf``. Prints one JSON object per setting on stdout as soon as it finishes. (One process per
setting would be cleaner, but importing the scientific stack costs ~10-20 s of wall time per
process on the shared benchmark machine.)

Every objective is recomputed here from the returned model with ``odtkit.metrics.objective``
(training predictions + leaf count), never copied from the tool: gosdt reports float32 bounds
and pystreed optimises the per-branch form (objective - lam).

ODTlearn's FlowOCT (:func:`run_odtlearn`, for benchmarks/mip_vs_search.py) runs in its own venv
(:func:`odtlearn_python`), which has no odtkit: odtkit is imported inside the functions that use
it, never at module level.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import _harness as harness
import numpy as np

if TYPE_CHECKING:
    from odtkit.datasets import Dataset
    from odtkit.tree import Tree


def gosdt_tree(node: Any) -> Tree:
    """gosdt's Node has the x_j = 1 ("true") branch on the LEFT; odtkit puts x_j = 0 left."""
    from odtkit.tree import Tree

    if hasattr(node, "prediction"):
        return Tree.leaf(int(node.prediction))
    return Tree.split(int(node.feature), gosdt_tree(node.right_child), gosdt_tree(node.left_child))


def streed_tree(node: Any) -> Tree:
    """pystreed's get_tree() node: a leaf (label) or feature/left_child/right_child with
    x_j = 0 on the left. The orientation is checked against ``predict`` by the caller."""
    from odtkit.tree import Tree

    if node.is_leaf_node():
        return Tree.leaf(int(node.label))
    return Tree.split(
        int(node.feature), streed_tree(node.left_child), streed_tree(node.right_child)
    )


def run_once(tool: str, d: Dataset, lam: float, depth: int | None, limit: float) -> dict:
    from odtkit import metrics

    X = d.X
    if tool in ("dp", "bnb"):
        from odtkit.core import search_tree

        r = search_tree(d, lam=lam, max_depth=depth, method=tool, time_limit=limit)
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
            "objective": metrics.objective(tree, d, lam=lam),
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
            "objective": metrics.objective(tree, d, lam=lam),
            "optimal": bool(model.fit_result.is_optimal()),
            "status": "optimal" if model.fit_result.is_optimal() else "time_limit",
            "n_explored": None,
            "n_leaves": tree.n_leaves,
        }
    raise ValueError(f"unknown tool {tool!r}")


# ---------------------------------------------------------------------- ODTlearn (FlowOCT, CBC)
def odtlearn_python() -> str:
    """The interpreter that runs ODTlearn: ``$ODTKIT_ODTLEARN_PYTHON`` or this one.

    ODTlearn's CBC comes from python-mip 1.15, which crashes with cffi 2 (SIGSEGV inside CBC on
    this machine); a separate venv keeps its pins away from ours::

        python -m venv /tmp/odtlearn-venv
        /tmp/odtlearn-venv/bin/pip install odtlearn==1.1.0 mip==1.15.0 "cffi<1.16"
        export ODTKIT_ODTLEARN_PYTHON=/tmp/odtlearn-venv/bin/python
    """
    return os.environ.get("ODTKIT_ODTLEARN_PYTHON", sys.executable)


def _odtlearn_child(target: str, *args: Any, limit: float) -> dict:
    """``target(*args, limit)`` in ODTlearn's interpreter; ``{"failed": row}`` when the child
    timed out or died (the row says which)."""
    try:
        return harness.call_in_child(
            target, *args, limit, python=odtlearn_python(), timeout=limit * 3 + 120
        )
    except harness.ChildError as exc:
        if exc.child.timed_out:
            return {"failed": {"available": True, "status": "timeout", "time": math.nan}}
        reason = exc.child.reason()
        return {
            "failed": {
                "available": False,
                "reason": f"child exited with {exc.child.returncode}: {reason[:160]}",
            }
        }


def run_odtlearn(ds: Any, depth: int, lam: float, limit: float) -> dict:
    """ODTlearn's FlowOCT (CBC, 1 thread) on ``ds`` in a child process, objective in OSDT units.

    The child gets the binary matrix through an ``.npz`` file, so it needs only numpy, pandas
    and odtlearn. The tree's objective is recomputed from its training predictions and its leaf
    count; the CBC bound is mapped to OSDT units with (F-map) of docs/formulations-trees.md §4.5.
    """
    n = ds.n_samples
    lam_o = n * lam / (1 + n * lam)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "odtlearn_input.npz"
        np.savez(data, X=ds.X.astype(np.int64), y=np.asarray(ds.y))
        out = _odtlearn_child("_peers:odtlearn_flowoct", str(data), depth, lam_o, limit=limit)
        if "failed" in out:
            return out["failed"]
    out["objective"] = out["errors"] / n + lam * out["leaves"]
    out["bound"] = 1 + lam - out.pop("objective_bound") / ((1 - lam_o) * n)
    return {"available": True, **out}


def odtlearn_flowoct(npz: str, depth: int, lam_o: float, limit: float) -> dict:
    """Child side of :func:`run_odtlearn`, in ODTlearn's interpreter: fit, errors, leaves."""
    import pandas as pd
    from odtlearn.flow_oct import FlowOCT

    data = np.load(npz)
    X = pd.DataFrame(data["X"], columns=[f"f{j}" for j in range(data["X"].shape[1])])
    y = data["y"]
    clf = FlowOCT(
        solver="cbc", depth=depth, _lambda=lam_o, time_limit=limit, num_threads=1, verbose=False
    )
    t = time.perf_counter()
    clf.fit(X, y)
    fit = time.perf_counter() - t
    pred = clf.predict(X)
    p = clf.p_value
    leaves = sum(1 for v in (p.values() if hasattr(p, "values") else np.ravel(p)) if v > 0.5)
    model = clf._solver.model
    return {
        "time": fit,
        "errors": int(np.count_nonzero(pred != y)),
        "leaves": leaves,
        "status": str(model.status).split(".")[-1],
        "objective_bound": float(model.objective_bound),
    }


ODTLEARN_FAIR_CLASSES = {"sp": "FairSPOCT", "eopp": "FairEOppOCT", "pe": "FairPEOCT"}


def run_odtlearn_fair(
    ds: Any, protected: Any, notion: str, depth: int, delta: float, limit: float
) -> dict:
    """ODTlearn's fair multi-sink FlowOCT (``FairSPOCT``/``FairEOppOCT``; CBC, 1 thread, λ = 0)
    on ``ds`` with the protected attribute kept out of the features, in a child process.

    Returns the fit time, the training predictions (re-measured by the caller with odtkit's
    metrics), CBC's status and its accuracy bound (the objective is the correct count).
    """
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "odtlearn_fair_input.npz"
        np.savez(data, X=ds.X.astype(np.int64), y=np.asarray(ds.y), a=np.asarray(protected))
        out = _odtlearn_child("_peers:odtlearn_fair", str(data), notion, depth, delta, limit=limit)
        if "failed" in out:
            return out["failed"]
    out["predictions"] = np.asarray(out["predictions"])
    return {"available": True, **out}


def odtlearn_fair(npz: str, notion: str, depth: int, delta: float, limit: float) -> dict:
    """Child side of :func:`run_odtlearn_fair`, in ODTlearn's interpreter."""
    import odtlearn.fair_oct as fair_oct

    data = np.load(npz)
    X, y, a = data["X"], data["y"], data["a"]
    cls = getattr(fair_oct, ODTLEARN_FAIR_CLASSES[notion])
    clf = cls(
        solver="cbc",
        positive_class=1,
        depth=depth,
        time_limit=int(limit),
        _lambda=0.0,
        fairness_bound=delta,
        num_threads=1,
        verbose=False,
    )
    t = time.perf_counter()
    clf.fit(X, y, protect_feat=a.reshape(-1, 1), legit_factor=np.zeros(len(y), dtype=int))
    fit = time.perf_counter() - t
    model = clf._solver.model
    return {
        "time": fit,
        "predictions": [int(v) for v in clf.predict(X)],
        "status": str(model.status).split(".")[-1],
        "correct_bound": float(model.objective_bound),
    }


def main(argv: list[str]) -> None:
    tool, name, lams_s, depths_s, limit_s, reps_s = argv
    d = harness.load_dataset(name)
    if d is None:
        raise SystemExit(f"dataset {name!r} is not available")
    limit = float(limit_s)
    for depth_s in depths_s.split(","):
        depth = None if depth_s == "inf" else int(depth_s)
        for lam_s in lams_s.split(","):  # decreasing lambda: increasingly hard
            lam = float(lam_s)
            # a run that hit the limit or took long is not repeated (as in the anchors)
            runs = harness.repeat(
                lambda lam=lam, depth=depth: run_once(tool, d, lam, depth, limit),
                int(reps_s),
                again=lambda r: r["optimal"] and r["time"] <= harness.LONG_RUN,
            )
            out = dict(runs[len(runs) // 2])
            out.update(tool=tool, dataset=name, lam=lam, depth=depth)
            out["time"] = statistics.median(r["time"] for r in runs)
            out["times"] = [r["time"] for r in runs]
            out["reps"] = len(runs)
            # ru_maxrss is this process's peak so far: the settings of one child run from easy
            # to hard, so it is (an upper bound on) this setting's own peak
            out["peak_rss_mb"] = harness.peak_rss_mb()
            out["n_samples"] = d.n_samples
            out["n_features"] = d.n_features
            harness.emit(out)
            if not out["optimal"]:
                break  # smaller lambdas at this depth are harder: skip them


if __name__ == "__main__":
    main(sys.argv[1:])

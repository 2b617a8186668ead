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

ODTlearn's FlowOCT (:func:`run_odtlearn`, for benchmarks/mip_vs_search.py), BendersOCT
(:func:`run_odtlearn_benders`) and fair FlowOCT (:func:`run_odtlearn_fair`) run in its own venv
(:func:`odtlearn_python`), which has no odtkit: odtkit is imported inside the functions that use
it, never at module level. STreeD can run the same way in a venv of its own
(:func:`run_streed_child`, :func:`streed_python`; for benchmarks/branch_and_price.py), returning
its tree for the caller to re-measure.
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


def _odtlearn_child(target: str, *args: Any, limit: float, timeout: float | None = None) -> dict:
    """``target(*args, limit)`` in ODTlearn's interpreter, killed after ``timeout`` seconds
    (default ``3 * limit + 120``: CBC overruns its limit and the model build is not charged to
    it); ``{"failed": row}`` when the child timed out or died (the row says which)."""
    hard = limit * 3 + 120 if timeout is None else timeout
    try:
        return harness.call_in_child(target, *args, limit, python=odtlearn_python(), timeout=hard)
    except harness.ChildError as exc:
        if exc.child.timed_out:
            return {
                "failed": {
                    "available": True,
                    "status": "timeout",
                    "time": math.nan,
                    "killed_after": hard,
                }
            }
        reason = exc.child.reason()
        return {
            "failed": {
                "available": False,
                "reason": f"child exited with {exc.child.returncode}: {reason[:160]}",
            }
        }


def run_odtlearn(
    ds: Any,
    depth: int,
    lam: float,
    limit: float,
    *,
    timeout: float | None = None,
    predictions: bool = False,
    _target: str = "_peers:odtlearn_flowoct",
) -> dict:
    """ODTlearn's FlowOCT (CBC, 1 thread) on ``ds`` in a child process, objective in OSDT units.

    The child gets the binary matrix through an ``.npz`` file, so it needs only numpy, pandas
    and odtlearn. The tree's objective is recomputed from its training predictions and its leaf
    count; the CBC bound is mapped to OSDT units with (F-map) of docs/formulations-trees.md §4.5.
    ``timeout``: the child's hard timeout (see :func:`_odtlearn_child`); ``predictions``: keep
    the training predictions (a list) in the answer, for the caller to re-measure.
    """
    n = ds.n_samples
    lam_o = n * lam / (1 + n * lam)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "odtlearn_input.npz"
        np.savez(data, X=ds.X.astype(np.int64), y=np.asarray(ds.y))
        out = _odtlearn_child(_target, str(data), depth, lam_o, limit=limit, timeout=timeout)
        if "failed" in out:
            return out["failed"]
    if not predictions:
        out.pop("predictions", None)
    out["objective"] = (
        math.nan if out["errors"] is None else out["errors"] / n + lam * out["leaves"]
    )
    out["bound"] = 1 + lam - out.pop("objective_bound") / ((1 - lam_o) * n)
    return {"available": True, **out}


def run_odtlearn_benders(
    ds: Any,
    depth: int,
    lam: float,
    limit: float,
    *,
    timeout: float | None = None,
    predictions: bool = False,
) -> dict:
    """ODTlearn's BendersOCT (CBC, 1 thread; FlowOCT's single-sink problem with one Benders
    cut per row, added lazily) in a child process: as :func:`run_odtlearn`, the same
    objective (``(1 - λ_f)·Σ w_i g_i − λ_f·Σ b``) and so the same λ mapping
    ``λ_f = nλ/(1 + nλ)`` and bound map.

    CBC does not stop BendersOCT at its time limit here (a 200-row depth-2 table ran past 60 s
    of a 20 s limit after finding its optimum in 0.7 s): the hard ``timeout`` is what ends it.
    """
    return run_odtlearn(
        ds,
        depth,
        lam,
        limit,
        timeout=timeout,
        predictions=predictions,
        _target="_peers:odtlearn_benders",
    )


def _odtlearn_single_sink(cls_name: str, npz: str, depth: int, lam_o: float, limit: float) -> dict:
    import odtlearn.flow_oct as flow_oct
    import pandas as pd

    data = np.load(npz)
    X = pd.DataFrame(data["X"], columns=[f"f{j}" for j in range(data["X"].shape[1])])
    y = data["y"]
    clf = getattr(flow_oct, cls_name)(
        solver="cbc",
        depth=depth,
        _lambda=lam_o,
        time_limit=int(math.ceil(limit)),
        num_threads=1,
        verbose=False,
    )
    t = time.perf_counter()
    clf.fit(X, y)
    fit = time.perf_counter() - t
    model = clf._solver.model
    out = {
        "time": fit,
        "status": str(model.status).split(".")[-1],
        "objective_bound": float(model.objective_bound),
    }
    p = clf.p_value
    values = list(p.values() if hasattr(p, "values") else np.ravel(p))
    if any(v is None for v in values):  # stopped without an incumbent: nothing to predict
        return {**out, "errors": None, "leaves": None}
    pred = np.asarray(clf.predict(X))
    return {
        **out,
        "errors": int(np.count_nonzero(pred != y)),
        "leaves": sum(1 for v in values if v > 0.5),
        "predictions": [int(v) for v in pred],
    }


def odtlearn_flowoct(npz: str, depth: int, lam_o: float, limit: float) -> dict:
    """Child side of :func:`run_odtlearn`, in ODTlearn's interpreter: fit, errors, leaves."""
    return _odtlearn_single_sink("FlowOCT", npz, depth, lam_o, limit)


def odtlearn_benders(npz: str, depth: int, lam_o: float, limit: float) -> dict:
    """Child side of :func:`run_odtlearn_benders`, in ODTlearn's interpreter."""
    return _odtlearn_single_sink("BendersOCT", npz, depth, lam_o, limit)


ODTLEARN_FAIR_CLASSES = {"sp": "FairSPOCT", "eopp": "FairEOppOCT", "pe": "FairPEOCT"}


def run_odtlearn_fair(
    ds: Any,
    protected: Any,
    notion: str,
    depth: int,
    delta: float,
    limit: float,
    *,
    timeout: float | None = None,
) -> dict:
    """ODTlearn's fair multi-sink FlowOCT (``FairSPOCT``/``FairEOppOCT``; CBC, 1 thread, λ = 0)
    on ``ds`` with the protected attribute kept out of the features, in a child process.

    Returns the fit time, the training predictions (re-measured by the caller with odtkit's
    metrics), CBC's status and its accuracy bound (the objective is the correct count).
    """
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "odtlearn_fair_input.npz"
        np.savez(data, X=ds.X.astype(np.int64), y=np.asarray(ds.y), a=np.asarray(protected))
        out = _odtlearn_child(
            "_peers:odtlearn_fair", str(data), notion, depth, delta, limit=limit, timeout=timeout
        )
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


# ------------------------------------------------------------- STreeD in an interpreter of its own
#: A venv with pystreed (and without odtkit on its path, or with another checkout's): the
#: child below imports neither odtkit nor this checkout's native module.
STREED_VENV_PYTHON = "/tmp/streed-venv-dp/bin/python"


def streed_python() -> str | None:
    """The interpreter that runs STreeD: ``$ODTKIT_STREED_PYTHON``, this one when it has
    pystreed, else :data:`STREED_VENV_PYTHON` when it exists; None when there is none."""
    if os.environ.get("ODTKIT_STREED_PYTHON"):
        return os.environ["ODTKIT_STREED_PYTHON"]
    from importlib.util import find_spec

    if find_spec("pystreed") is not None:
        return sys.executable
    return STREED_VENV_PYTHON if Path(STREED_VENV_PYTHON).exists() else None


def run_streed_child(
    ds: Any,
    depth: int,
    lam: float,
    limit: float,
    *,
    min_leaf: int = 1,
    protected: Any = None,
    delta: float | None = None,
    timeout: float | None = None,
) -> dict:
    """STreeD on ``ds`` in a child process (:func:`streed_python`), killed after ``timeout``
    seconds (default ``limit + 60``).

    Without ``protected``: ``STreeDClassifier(optimization_task="cost-complex-accuracy",
    cost_complexity=lam, min_leaf_node_size=min_leaf)``, the OSDT objective up to the constant
    λ (BENCHMARK-ANCHORS.md). With ``protected`` (0/1 per row) and ``delta``: the
    demographic-parity task ``STreeDGroupFairnessClassifier(discrimination_limit=delta)``,
    accuracy only (λ must be 0), the attribute given as column 0 and never split on. Returns
    the fit time, ``optimal``, the training predictions and the tree as a
    :meth:`odtkit.tree.Tree.to_dict` dict over ``ds``'s features (``tree`` None when it splits
    on the protected column), for the caller to re-measure; ``{"available": False, ...}`` when
    there is no STreeD here.
    """
    python = streed_python()
    if python is None:
        return {"available": False, "reason": "no pystreed (set $ODTKIT_STREED_PYTHON)"}
    if protected is not None and lam != 0:
        raise ValueError("STreeD's group-fairness task has no leaf penalty: lam must be 0")
    hard = limit + 60 if timeout is None else timeout
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "streed_input.npz"
        extra = {} if protected is None else {"a": np.asarray(protected, dtype=np.int64)}
        np.savez(data, X=ds.X.astype(np.int64), y=np.asarray(ds.y), **extra)
        try:
            out = harness.call_in_child(
                "_peers:streed_fit",
                str(data),
                depth,
                lam,
                min_leaf,
                delta,
                limit,
                python=python,
                timeout=hard,
            )
        except harness.ChildError as exc:
            if exc.child.timed_out:
                return {"available": True, "status": "timeout", "killed_after": hard}
            reason = exc.child.reason()
            return {
                "available": False,
                "reason": f"child exited with {exc.child.returncode}: {reason[:160]}",
            }
    return {"available": True, **out}


def _streed_dict(node: Any, shift: int) -> dict | None:
    """pystreed's tree as a Tree.to_dict dict (x_j = 0 on the left, as :func:`streed_tree`),
    features moved down by ``shift``; None if it splits on a column below ``shift``."""
    if node.is_leaf_node():
        return {"label": int(node.label)}
    feature = int(node.feature) - shift
    left, right = _streed_dict(node.left_child, shift), _streed_dict(node.right_child, shift)
    if feature < 0 or left is None or right is None:
        return None
    return {"feature": feature, "left": left, "right": right}


def streed_fit(
    npz: str, depth: int, lam: float, min_leaf: int, delta: float | None, limit: float
) -> dict:
    """Child side of :func:`run_streed_child` (numpy and pystreed only)."""
    data = np.load(npz)
    X, y = data["X"], data["y"]
    if "a" in data:
        from pystreed import STreeDGroupFairnessClassifier

        X = np.column_stack([data["a"], X])
        model: Any = STreeDGroupFairnessClassifier(
            optimization_task="group-fairness",
            sensitive_feature=0,
            discrimination_limit=delta,
            max_depth=depth,
            min_leaf_node_size=min_leaf,
            time_limit=limit,
        )
        shift = 1
    else:
        from pystreed import STreeDClassifier

        model = STreeDClassifier(
            optimization_task="cost-complex-accuracy",
            cost_complexity=lam,
            max_depth=depth,
            min_leaf_node_size=min_leaf,
            time_limit=limit,
        )
        shift = 0
    t0 = time.perf_counter()
    model.fit(X, y)
    elapsed = time.perf_counter() - t0
    optimal = bool(model.fit_result.is_optimal())
    return {
        "time": elapsed,
        "optimal": optimal,
        "status": "optimal" if optimal else "time_limit",
        "predictions": [int(v) for v in np.asarray(model.predict(X))],
        "tree": _streed_dict(model.get_tree(), shift),
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

"""STreeD's ``max_num_nodes`` for benchmarks/constraints_budget.py, run in a child interpreter
that has pystreed (``harness.call_in_child("_streed_budget:fit", ...)``); it needs numpy and
pystreed only, not odtkit (the parent decodes the trees and re-measures every objective)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np


def encode(node: Any) -> list[int]:
    """pystreed's get_tree() node in odtkit's pre-order code: ``j >= 0`` a split (x_j = 0
    first), ``-(label + 1)`` a leaf."""
    if node.is_leaf_node():
        return [-(int(node.label) + 1)]
    return [int(node.feature), *encode(node.left_child), *encode(node.right_child)]


def fit(path: str, lam: float, depth: int, nodes: list[int | None], limit: float) -> dict:
    """STreeD on the table in ``path`` (``X``, ``y``), once per entry of ``nodes``
    (``max_num_nodes``; None: unconstrained): accuracy at ``lam = 0``, else cost-complex
    accuracy with ``cost_complexity=lam`` (pystreed refuses max_num_nodes with a non-zero
    cost complexity, so the constrained runs need ``lam = 0``)."""
    from pystreed import STreeDClassifier

    data = np.load(path)
    X, y = data["X"].astype(np.int64), data["y"].astype(np.int64)
    runs = []
    for n in nodes:
        model = STreeDClassifier(
            optimization_task="accuracy" if lam == 0 else "cost-complex-accuracy",
            cost_complexity=lam,
            max_depth=depth,
            max_num_nodes=n,
            time_limit=limit,
        )
        start = time.perf_counter()
        model.fit(X, y)
        elapsed = time.perf_counter() - start
        runs.append(
            {
                "nodes": n,
                "seconds": elapsed,
                "optimal": bool(model.fit_result.is_optimal()),
                "tree": encode(model.get_tree()),
                "predicted": np.asarray(model.predict(X)).astype(int).tolist(),
            }
        )
    return {"runs": runs}

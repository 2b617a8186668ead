"""Construction of the native preprocessed ``Problem`` and of the typed ``SearchConfig``.

The native searches (dp, bnb, corels) all start from ``odtkit._native.Problem``: identical
feature rows collapsed into equivalence classes with per-class weights, per-feature bitsets over
those classes and the equivalent-point minorities (docs/formulations-search-and-pruning.md §3.1).
Inputs are checked by :mod:`odtkit._validation`; this module is the only place that turns a
:class:`~odtkit.datasets.Dataset` (or, for CORELS, an antecedent truth table) into a Problem,
so the dtype/contiguity rules of the binding live here, and the only place that builds the typed
``_native.SearchConfig`` every search takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from odtkit import _native
from odtkit._limits import default_memory_limit_mb
from odtkit._validation import (
    check_node_limit,
    check_positive_number,
    scale_weights,
)
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset, distinct_features
from odtkit.results import Status
from odtkit.tree import Tree

#: Queue policies of the native searches (one ``Policy`` enum in C++, these names).
POLICIES: tuple[str, ...] = ("curiosity", "lower_bound", "objective", "bfs", "dfs")


def build_problem(dataset: Dataset, popcount: str = "auto") -> Any:
    """The native preprocessed instance of ``dataset`` (``odtkit._native.Problem``).

    ``popcount="portable"`` forces the software popcount kernels (benchmarks and tests); the
    default uses the CPU's popcount instruction when it has one.
    """
    dataset = check_dataset(dataset)
    return problem_from_arrays(
        dataset.X, dataset.y, dataset.weights, int(dataset.n_classes), popcount=popcount
    )


def build_search_problem(
    dataset: Dataset, *, support: np.ndarray | None = None
) -> tuple[Any, np.ndarray]:
    """The native Problem over the features a tree search must consider, and their indices.

    Constant columns and duplicates or complements of an earlier column are left out
    (:func:`~odtkit.datasets.distinct_features`): no optimum or bound changes, and the
    searches' split loops and the depth-two solver's feature-pair tables shrink. Trees come
    back in the problem's numbering; :func:`restore_features` maps them to the dataset's.
    ``support``: separate per-row support weights (see :func:`problem_from_arrays`).
    """
    dataset = check_dataset(dataset)
    kept = distinct_features(dataset.X)
    X = dataset.X if kept.size == dataset.n_features else dataset.X[:, kept]
    problem = problem_from_arrays(
        X, dataset.y, dataset.weights, int(dataset.n_classes), support=support
    )
    return problem, kept


def restore_features(code: list[int], kept: np.ndarray) -> list[int]:
    """A tree encoding over :func:`build_search_problem`'s features, in the dataset's numbering."""
    return [int(kept[v]) if v >= 0 else int(v) for v in code]


def problem_from_arrays(
    X: Any,
    y: Any,
    weights: Any,
    n_classes: int,
    popcount: str = "auto",
    *,
    support: Any = None,
) -> Any:
    """``_native.Problem`` from a bool matrix (rows = samples), class codes and weights.

    ``support``: per-row weights in which the dp measures a leaf's support (its minimum leaf
    support, ``SearchConfig.min_leaf_weight``, is then a share of their total), when they are
    not ``weights``; None: ``weights`` themselves (no separate vector).
    """
    X = np.ascontiguousarray(X, dtype=bool)
    y = np.ascontiguousarray(y, dtype=np.int32)
    w = np.ascontiguousarray(weights, dtype=np.float64)
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError("dataset.y holds class codes outside 0..n_classes-1")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("dataset sample weights must be finite and >= 0")
    # the native searches report normalized values only (objective and bounds divided by the
    # total weight), so an exact power-of-two scale changes no answer and keeps their
    # tolerances, which grow with the total weight, away from underflow and overflow
    w = scale_weights(w)
    if support is None:
        return _native.Problem(X, y, w, n_classes, popcount=popcount)
    s = np.ascontiguousarray(support, dtype=np.float64)
    if s.shape != w.shape or not np.all(np.isfinite(s)) or np.any(s < 0) or not s.sum() > 0:
        raise ValueError("support weights must be finite, >= 0, one per row, with a positive sum")
    # a share of their own total, so scaled on their own
    return _native.Problem(X, y, w, n_classes, popcount=popcount, support=scale_weights(s))


def native_status(status: _native.SearchStatus) -> Status:
    """The user-facing :class:`~odtkit.results.Status` of a native search's status (the one
    place the native enum is mapped; its member names are the Status values)."""
    return Status(status.name)


def leaf_answer(
    y: Any,
    weights: Any,
    n_classes: int,
    lam: float,
    *,
    leaf_cost: float | None = None,
    status: _native.SearchStatus = _native.SearchStatus.memory_limit,
) -> _native.SearchOutput:
    """A native search's answer for the majority leaf, status ``memory_limit`` (or
    ``status``: ``interrupted`` for a Ctrl-C during the preparation).

    What a search returns when even its preprocessing could not get memory (a MemoryError
    from the native code), or was interrupted: the single leaf is a model of every problem, and
    ``min(lam, its objective)`` a valid lower bound (any other tree or list pays ``lam`` at
    least once), so the caller still gets an answer with a certificate. ``leaf_cost``: what
    the leaf itself pays, ``lam`` for a tree (the default), 0 for a rule list's default rule.
    """
    leaf_cost = lam if leaf_cost is None else leaf_cost
    y = np.asarray(y, dtype=np.int64)
    w = np.asarray(weights, dtype=np.float64)
    class_weight = np.bincount(y, weights=w, minlength=n_classes)
    total = float(class_weight.sum())
    label = int(np.argmax(class_weight)) if total > 0 else 0
    objective = (total - float(class_weight[label])) / total if total > 0 else 0.0
    objective += leaf_cost
    return _native.SearchOutput(
        tree=[-(label + 1)],
        objective=objective,
        lower_bound=min(lam, objective),
        status=status,
        trace_time=[0.0],
        trace_incumbent=[objective],
        trace_bound=[min(lam, objective)],
        stats={"out_of_memory": float(status == _native.SearchStatus.memory_limit)},
    )


def search_config(
    lam: float,
    *,
    time_limit: Any,
    node_limit: Any,
    memory_limit_mb: Any,
    bounds: Mapping[str, bool],
    **options: Any,
) -> Any:
    """The typed ``_native.SearchConfig``: limits validated and mapped to "none" = 0.

    ``lam`` and ``bounds`` must already be validated; ``options`` are further config fields
    (``max_depth``, ``upper_bound``, ``policy``, ``symmetry``); a misspelt one raises TypeError.
    ``memory_limit_mb=None`` means :func:`default_memory_limit_mb`.
    """
    time_limit = check_positive_number(time_limit, "time_limit")
    memory_limit_mb = check_positive_number(memory_limit_mb, "memory_limit_mb")
    if memory_limit_mb is None:
        memory_limit_mb = default_memory_limit_mb()
    return _native.SearchConfig(
        lam=lam,
        time_limit=time_limit or 0.0,
        node_limit=check_node_limit(node_limit) or 0,
        memory_limit_mb=memory_limit_mb or 0.0,
        bounds=dict(bounds),
        **options,
    )


def encode_tree(tree: Tree) -> list[int]:
    """Pre-order integer encoding of the native contract: ``j >= 0`` split, ``-(k+1)`` leaf."""
    out: list[int] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if node.is_leaf:
            out.append(-(int(node.as_leaf()) + 1))  # a numpy integer label too
        else:
            feature, left, right = node.as_split()
            out.append(int(feature))
            stack.append(right)
            stack.append(left)
    return out


def decode_tree(code: list[int]) -> Tree:
    """Inverse of :func:`encode_tree`; raises ValueError on a malformed encoding."""
    pos = 0

    def build() -> Tree:
        nonlocal pos
        if pos >= len(code):
            raise ValueError("truncated tree encoding")
        v = int(code[pos])
        pos += 1
        if v < 0:
            return Tree.leaf(-v - 1)
        left = build()
        right = build()
        return Tree.split(v, left, right)

    tree = build()
    if pos != len(code):
        raise ValueError("tree encoding has trailing entries")
    return tree

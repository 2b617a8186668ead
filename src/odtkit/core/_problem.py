"""Construction of the native preprocessed ``Problem`` and of the typed ``SearchConfig``.

The native searches (dp, bnb, corels) all start from ``odtkit.core._native.Problem``: identical
feature rows collapsed into equivalence classes with per-class weights, per-feature bitsets over
those classes and the equivalent-point minorities (docs/formulations-search-and-pruning.md §3.1).
Inputs are checked by :mod:`odtkit._validation`; this module is the only place that turns a
:class:`~odtkit.datasets.Dataset` (or, for CORELS, an antecedent truth table) into a Problem,
so the dtype/contiguity rules of the binding live here, and the only place that builds the typed
``_native.SearchConfig`` every search takes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from odtkit._validation import check_dataset, check_node_limit, check_positive_number
from odtkit.core import _native
from odtkit.datasets import Dataset
from odtkit.tree import Tree

#: Queue policies of the native searches (one ``Policy`` enum in C++, these names).
POLICIES = ("curiosity", "lower_bound", "objective", "bfs", "dfs")


def build_problem(dataset: Dataset, popcount: str = "auto") -> Any:
    """The native preprocessed instance of ``dataset`` (``odtkit.core._native.Problem``).

    ``popcount="portable"`` forces the software popcount kernels (benchmarks and tests); the
    default uses the CPU's popcount instruction when it has one.
    """
    dataset = check_dataset(dataset)
    return problem_from_arrays(
        dataset.X, dataset.y, dataset.weights, int(dataset.n_classes), popcount=popcount
    )


def problem_from_arrays(
    X: Any, y: Any, weights: Any, n_classes: int, popcount: str = "auto"
) -> Any:
    """``_native.Problem`` from a bool matrix (rows = samples), class codes and weights."""
    X = np.ascontiguousarray(X, dtype=bool)
    y = np.ascontiguousarray(y, dtype=np.int32)
    w = np.ascontiguousarray(weights, dtype=np.float64)
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError("dataset.y holds class codes outside 0..n_classes-1")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("dataset sample weights must be finite and >= 0")
    return _native.Problem(X, y, w, n_classes, popcount=popcount)


#: Share of the memory available when a search starts that it may use by default.
DEFAULT_MEMORY_SHARE = 0.75


def available_memory_mb() -> float | None:
    """Memory the machine can give this process now (MemAvailable), in MB; None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) / 1024.0
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2.0**20
    except (ValueError, OSError, AttributeError):
        return None


def default_memory_limit_mb() -> float | None:
    """The memory budget of a search given none: ``$ODTKIT_MEMORY_LIMIT_MB`` if set, else
    :data:`DEFAULT_MEMORY_SHARE` of the memory available when it starts.

    Searches count every byte of their own structures against it and stop with status
    ``memory_limit`` (best tree and bound kept) before crossing it; without a default, a search
    on an innocent-looking table could grow until the kernel killed the process (issue 13).
    """
    override = os.environ.get("ODTKIT_MEMORY_LIMIT_MB")
    if override:
        return check_positive_number(float(override), "ODTKIT_MEMORY_LIMIT_MB")
    available = available_memory_mb()
    return None if available is None else max(DEFAULT_MEMORY_SHARE * available, 64.0)


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
            out.append(-(int(node.label) + 1))
        else:
            out.append(int(node.feature))
            stack.append(node.right)
            stack.append(node.left)
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

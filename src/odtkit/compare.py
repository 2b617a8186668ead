"""Run the search core and the MIP formulations on one problem, re-verify every tree, tabulate.

:func:`compare` is the library's main job: one problem (data, λ, depth), several solvers, one
table. The search core runs first; its tree warm-starts every MIP. Every returned tree is
re-evaluated with :func:`odtkit.metrics.objective` (the single truth) and the table says whether
each method's verified objective agrees with the best certified optimum.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from odtkit import metrics
from odtkit._validation import check_depth, check_lambda, check_positive_number
from odtkit.datasets import Dataset
from odtkit.tree import Tree

#: Methods :func:`compare` knows; "search" is the native core.
METHODS = ("search", "rbinoct", "rbinoct_original", "flowoct", "binoct")
COLUMNS = (
    "method",
    "backend",
    "status",
    "objective",
    "bound",
    "gap",
    "time",
    "n_leaves",
    "agrees",
    "reported",
    "warm_start",
    "build_time",
)
TOLERANCE = 1e-6


def _dataset(dataset: Any) -> Dataset:
    if isinstance(dataset, Dataset):
        return dataset
    if isinstance(dataset, str):
        from odtkit import datasets

        if dataset in datasets.names() or dataset == "car":
            return datasets.load(dataset)
        return datasets.load_shared(dataset)
    raise TypeError(f"dataset must be a Dataset or a dataset name, got {type(dataset).__name__}")


def _search(
    dataset: Dataset, lam: float, depth: int, time_limit: float | None
) -> tuple[dict[str, Any], Tree, str]:
    """Run the native search core (built with the package, so never silently replaced)."""
    from odtkit.core import search_tree

    res = search_tree(dataset, lam, max_depth=depth, time_limit=time_limit)
    row = {
        "method": "search",
        "backend": f"native/{res.method}",
        "status": res.status,
        "reported": float(res.objective),
        "bound": float(res.lower_bound),
        "time": float(res.time),
    }
    return row, res.tree, "search_tree"


def _formulation(method: str) -> Any:
    from odtkit.formulations import BinOCT, FlowOCT, RBinOCT

    if method == "rbinoct":
        return RBinOCT()
    if method == "rbinoct_original":
        return RBinOCT(null_split=False)
    if method == "flowoct":
        return FlowOCT()
    if method == "binoct":
        return BinOCT()
    raise ValueError(f"unknown method {method!r}")


def compare(
    dataset: Dataset | str,
    lam: float,
    depth: int,
    methods: Sequence[str] = ("search", "rbinoct", "flowoct"),
    backends: Sequence[str] = ("highs",),
    time_limit: float | None = 60.0,
    warm_start: bool = True,
    **solve_options: Any,
) -> pd.DataFrame:
    """Solve one problem with the search core and MIP formulations; verify and tabulate.

    Parameters
    ----------
    dataset : Dataset or str
        A Dataset, a bundled dataset name (``"monk1"``) or a shared one (``"compas-binary"``).
    lam : float
        Penalty per leaf (OSDT units).
    depth : int
        Maximum depth D >= 1 (every method solves ``min R(T)`` over trees of depth <= D, except
        ``"rbinoct_original"``, which may be worse, and ``"binoct"``, which minimises errors).
    methods : sequence of str
        Any of :data:`METHODS`.
    backends : sequence of str
        Solver backends for the MIPs (``"highs"``, ``"pyomo"``, ``"pulp"``).
    time_limit : float, optional
        Seconds per run (search and each MIP solve).
    warm_start : bool
        Start every MIP from the search tree (from the greedy tree if the search is not among the
        methods). Backends without the ``"mip_start"`` capability run cold; the ``warm_start``
        column says which runs were warm. When the search certified its tree optimal, RBinOCT
        and FlowOCT also run with ``heuristics=False`` (unless ``solve_options`` says
        otherwise): their start is already optimal, so the solver spends its effort on the
        proof alone.
    **solve_options
        Passed to :func:`odtkit.solvers.solve` (e.g. ``threads=1``).

    Returns
    -------
    DataFrame
        Columns ``method, backend, status, objective, bound, gap, time, n_leaves, agrees`` plus
        ``reported`` (the solver's own objective), ``warm_start`` and ``build_time``.
        ``objective`` is ``metrics.objective`` of the returned (decoded) tree; ``bound`` a lower
        bound on the optimum in the same units; ``agrees`` is True when the verified objective
        equals the best certified optimum within 1e-6 (NaN if nothing was certified) and the
        solver's own value is consistent with its tree. ``df.attrs`` holds ``trees`` (by row),
        ``best_tree``, ``best_row``, ``warm_start_source`` and the problem.
    """
    from odtkit.solvers import backend_capabilities, solve

    dataset = _dataset(dataset)
    lam = check_lambda(lam)
    depth = check_depth(depth, "depth", allow_none=False)
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    time_limit = check_positive_number(time_limit, "time_limit")
    methods = tuple(methods)
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise ValueError(f"methods must be a non-empty subset of {METHODS}, got {methods}")
    backends = tuple(backends)
    for b in backends:
        backend_capabilities(b)  # raises ValueError naming the registered backends

    rows: list[dict[str, Any]] = []
    trees: list[Tree | None] = []
    start_tree: Tree | None = None
    source = "none"
    start_is_optimal = False
    if "search" in methods:
        row, tree, source = _search(dataset, lam, depth, time_limit)
        start_is_optimal = row["status"] == "optimal"
        row.update(warm_start=False, build_time=0.0)
        rows.append(row)
        trees.append(tree)
        start_tree = tree
    elif warm_start:
        from odtkit.greedy import greedy_tree

        start_tree, source = greedy_tree(dataset, lam, max_depth=depth), "greedy_tree"

    for method in methods:
        if method == "search":
            continue
        form = _formulation(method)
        t0 = time.perf_counter()
        try:
            model = form.build(dataset, max_depth=depth, lam=lam)
        except ValueError as exc:  # e.g. original BinOCT on all-constant features
            rows.append({"method": method, "backend": "-", "status": f"error: {exc}", "time": 0.0})
            trees.append(None)
            continue
        build_time = time.perf_counter() - t0
        start = form.start(model, start_tree) if (warm_start and start_tree is not None) else None
        for backend in backends:
            caps = backend_capabilities(backend)
            use_start = start is not None and "mip_start" in caps
            options = dict(solve_options)
            if (
                use_start
                and start_is_optimal
                and method in ("rbinoct", "flowoct")
                and "heuristics_off" in caps
            ):
                # the start is a certified optimum of this very problem: only the proof is left
                options.setdefault("heuristics", False)
            res = solve(
                model,
                backend=backend,
                time_limit=time_limit,
                start=start if use_start else None,
                **options,
            )
            row = {
                "method": method,
                "backend": res.solver or backend,
                "status": res.status,
                "reported": res.objective,
                "bound": res.bound,
                "time": res.time,
                "warm_start": use_start,
                "build_time": build_time,
            }
            if method == "binoct" and np.isfinite(res.bound):
                # errors >= ceil(bound) on every tree of depth <= D, and every tree has a leaf
                row["bound"] = math.ceil(res.bound - TOLERANCE) / dataset.total_weight + lam
            tree = form.decode(model, res) if res.has_solution else None
            rows.append(row)
            trees.append(tree)

    for row, tree in zip(rows, trees, strict=True):
        if tree is not None:
            row["objective"] = metrics.objective(tree, dataset, lam)
            row["n_leaves"] = tree.n_leaves
        else:
            row["objective"] = math.nan
            row["n_leaves"] = 0

    # Bounds valid for OPT(D, lam): search, RBinOCT with null split, FlowOCT, and BinOCT's
    # converted error bound. Original RBinOCT's bound is a bound on its own (larger) optimum.
    valid_bound = {"search", "rbinoct", "flowoct", "binoct"}
    exact = {"search", "rbinoct", "flowoct"}
    verified = [r["objective"] for r in rows if not math.isnan(r["objective"])]
    best_value = min(verified) if verified else math.nan
    best_bound = max(
        (r.get("bound", -math.inf) for r in rows if r["method"] in valid_bound), default=-math.inf
    )
    optimal = [
        r["objective"]
        for r in rows
        if r["method"] in exact and r["status"] == "optimal" and not math.isnan(r["objective"])
    ]
    if optimal:
        certified = min(optimal)
    elif verified and best_value <= best_bound + TOLERANCE:
        certified = best_value
    else:
        certified = math.nan
    for row in rows:
        objective, reported = row["objective"], row.get("reported", math.nan)
        bound = row.get("bound", -math.inf)
        row["bound"] = bound
        gap = objective - bound if not math.isnan(objective) else math.nan
        row["gap"] = 0.0 if abs(gap) <= 1e-12 else gap  # round-off of an exact certificate
        if math.isnan(objective):
            row["agrees"] = False
            continue
        consistent = True
        if row["method"] == "search":
            consistent = abs(objective - reported) <= TOLERANCE
        elif row["method"] in ("flowoct", "rbinoct", "rbinoct_original"):
            # decoding (canonical form) never makes a tree worse than the solver's value
            consistent = objective <= reported + TOLERANCE
        if row["method"] in valid_bound and bound > best_value + TOLERANCE:
            consistent = False  # a lower bound above a verified tree's value would be a bug
        if math.isnan(certified):
            row["agrees"] = None if consistent else False
        else:
            row["agrees"] = consistent and abs(objective - certified) <= TOLERANCE

    table = pd.DataFrame(rows).reindex(columns=list(COLUMNS))
    table["agrees"] = table["agrees"].astype(object)
    best_idx = int(np.nanargmin(table["objective"].to_numpy(dtype=float))) if verified else None
    table.attrs.update(
        dataset=dataset.name,
        lam=lam,
        depth=depth,
        trees=trees,
        best_row=best_idx,
        best_tree=trees[best_idx] if best_idx is not None else None,
        certified_optimum=certified,
        warm_start_source=source,
        feature_names=list(dataset.feature_names),
        class_names=list(dataset.classes),
    )
    return table

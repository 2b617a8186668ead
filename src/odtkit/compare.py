"""Run the search core and the MIP formulations on one problem, re-verify every tree, tabulate.

:func:`compare` is the library's main job: one problem (data, λ, depth), several methods, one
table. The search core runs first; its tree warm-starts every MIP. Every returned tree is
re-evaluated with :func:`odtkit.metrics.objective` (the single truth) and the table says whether
each method's verified objective agrees with the best certified optimum.

On a raw table (``compare(X, y=labels, ...)``) it also races the exact search over every
threshold (``"exact"``) against the methods on a binarization of the same rows; the
``certificate`` column says over what each row's answer is certified.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from odtkit import metrics
from odtkit._limits import stop_on_interrupt
from odtkit._validation import (
    check_dataset,
    check_depth,
    check_lambda,
    check_names,
    check_positive_number,
)
from odtkit.datasets import Dataset
from odtkit.datasets._bundled import resolve
from odtkit.fairness import Fairness, FairnessGroups
from odtkit.formulations import EXACT, VALID_BOUND
from odtkit.methods import METHODS, check_fair, get_method
from odtkit.pipeline import solve_formulation
from odtkit.results import Result, Status
from odtkit.tree import Tree

if TYPE_CHECKING:  # the Binarizer imports scikit-learn: only a raw table pays for it
    from odtkit.datasets import Binarizer

__all__ = ["COLUMNS", "TOLERANCE", "compare"]

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
    "certificate",
    "reported",
    "warm_start",
    "build_time",
    "message",
)
TOLERANCE = 1e-6


def _dataset(dataset: Any) -> Dataset:
    """A Dataset, or the bundled / shared dataset of that name (``datasets.resolve``)."""
    return check_dataset(resolve(dataset))


def _raw_table(X: Any, y: Any, thresholds: Any) -> tuple[Dataset, Binarizer, str | int]:
    """The binarization of a raw table ``X`` (labels ``y``) for the methods that need one, as
    ``thresholds`` says (``"guess"``, ``"all"``: every midpoint, or at most N per column)."""
    from odtkit.datasets import Binarizer
    from odtkit.methods import GUESS_ROUNDS

    if thresholds is None:
        thresholds = "guess"
    number = isinstance(thresholds, (int, np.integer)) and not isinstance(thresholds, bool)
    if not (thresholds in ("guess", "all") if isinstance(thresholds, str) else number):
        raise ValueError(
            f"thresholds must be 'guess', 'all' or a positive integer, got {thresholds!r}"
        )
    if number and thresholds < 1:
        raise ValueError(f"thresholds must be a positive integer, got {thresholds!r}")
    options: dict[str, int | None] = {"max_thresholds": None, "guess_thresholds": None}
    if thresholds == "guess":
        options["guess_thresholds"] = GUESS_ROUNDS
    elif thresholds != "all":
        options["max_thresholds"] = int(thresholds)
    binarizer = Binarizer(**options).fit(X, y)
    names = [str(n) for n in binarizer.get_feature_names_out()]
    data = Dataset.from_arrays(binarizer.transform(X), y, feature_names=names)
    return check_dataset(data, "dataset"), binarizer, thresholds


def _empty_row(method: str, backend: str, status: Status, message: str) -> dict[str, Any]:
    """A table row without an answer (a run that failed before solving, or was not run)."""
    return {
        "method": method,
        "backend": backend,
        "status": status,
        "objective": math.nan,
        "bound": -math.inf,
        "time": 0.0,
        "n_leaves": 0,
        "warm_start": False,
        "message": message,
    }


def _row(method: str, result: Result, *, warm_start: bool = False) -> dict[str, Any]:
    """A table row of a model-level result (verified objective, valid bound, solver's value)."""
    solution = result.solution
    return {
        "method": method,
        "backend": result.backend if solution is None else (solution.solver or result.backend),
        "status": result.status,
        "objective": result.objective,
        "bound": result.lower_bound,
        "time": result.stats.get("solve_time", result.time),
        "n_leaves": result.model.n_leaves if result.model is not None else 0,
        "reported": result.objective if solution is None else solution.objective,
        "warm_start": warm_start,
        "build_time": result.stats.get("build_time", 0.0),
        "message": result.message,
    }


def compare(
    dataset: Dataset | str,
    *,
    lam: float,
    max_depth: int,
    methods: str | Sequence[str] = ("dp", "rbinoct", "flowoct"),
    backends: str | Sequence[str] = ("highs",),
    time_limit: float | None = 60.0,
    warm_start: bool = True,
    fairness: Fairness | None = None,
    memory_limit_mb: float | None = None,
    y: Any = None,
    thresholds: str | int | None = None,
    **solve_options: Any,
) -> pd.DataFrame:
    """Solve one problem with the search core and MIP formulations; verify and tabulate.

    Parameters
    ----------
    dataset : Dataset, str, DataFrame or array
        A Dataset, a bundled dataset name (``"monk1"``) or a shared one (``"compas-binary"``);
        or, with ``y``, a raw table (numeric and categorical columns, missing cells).
    lam : float
        Penalty per leaf (OSDT units).
    max_depth : int
        Maximum depth D >= 1 (every method solves ``min R(T)`` over trees of depth <= D, except
        ``"rbinoct_original"``, which may be worse, and ``"binoct"``, which minimises errors).
        A depth above the number of features p is the same problem as depth p and is clamped
        to it (``odtkit._validation.check_depth``).
    methods : str or sequence of str
        Names of :data:`odtkit.methods.METHODS` (one name, ``"dp,flowoct"`` or a sequence;
        repeated names run once): search methods (``"dp"``, ``"bnb"``) run once,
        MIP methods once per backend. ``"exact"`` (the search over every threshold of the raw
        numeric columns, :func:`odtkit.core.search_numeric` started from the
        guessed-threshold tree) needs a raw table and ``y``.
    backends : str or sequence of str
        Solver backends for the MIPs (``"highs"``, ``"pyomo"``, ``"pulp"``), given like
        ``methods``.
    time_limit : float, optional
        Seconds per run (search and each MIP solve).
    warm_start : bool
        Start every MIP from the first search method's tree (from the greedy tree if no search
        method is requested; from the ``"exact"`` tree when it is better and every threshold
        it tests is in the binarization, e.g. ``thresholds="all"``). Backends without the
        ``"mip_start"`` capability run cold; the ``warm_start`` column says which runs were
        warm. When the search certified its tree optimal, the formulations declaring
        ``EXACT`` also run with ``heuristics=False`` (unless ``solve_options`` says
        otherwise): their start is already optimal, so the solver spends its effort on the
        proof alone.
    fairness : Fairness, optional
        Solve the fairness-constrained problem instead: the lowest objective over trees of
        depth <= D whose disparity (``fairness.notion`` between the groups of
        ``fairness.protected``) is at most ``fairness.delta``. Only methods that can honour it
        are accepted (``"dp"``, ``"rbinoct"``, ``"flowoct"``). Every tree is re-measured with
        :func:`odtkit.metrics.fairness_gap` (column ``fairness_gap``); a tree above δ is an
        error row and never agrees. The MIPs start from the search's tree (always δ-fair), or
        from the greedy tree if it is δ-fair, else from the best single leaf (always fair).
    memory_limit_mb : float, optional
        Memory budget of each search run (None: the searches' default, 75 % of what the
        process can still get). HiGHS has no memory limit; the MIPs are bounded by time.
    y : array-like, optional
        The labels of a raw table ``dataset``: ``"exact"`` runs on the raw columns, every other
        method on their binarization by :class:`odtkit.datasets.Binarizer` as ``thresholds``
        says. The binarized trees are trees over thresholds of the same rows, scored with the
        same λ, so every objective in the table is directly comparable; an ``"exact"`` row
        that is certified is therefore <= every binarized row's objective (its bound is checked
        against every tree in the table; a violation makes its ``agrees`` False). The
        ``"exact"`` row's ``time`` includes its start (the guessed-threshold dp); the
        binarized rows' exclude the shared binarization (``attrs["binarize_time"]``).
    thresholds : {"guess", "all"}, int or None, default=None
        The binarization of a raw table for the non-exact methods: ``"guess"`` (the default,
        the estimators' guessed thresholds), ``"all"`` (every midpoint: the optimum over all
        thresholds too, but as a binary problem; thousands of features on continuous
        columns) or at most N thresholds per column. Only with ``y``.
    **solve_options
        Passed to :func:`odtkit.solvers.solve` (e.g. ``threads=1``).

    Returns
    -------
    DataFrame
        Columns ``method, backend, status, objective, bound, gap, time, n_leaves, agrees`` plus
        ``reported`` (the solver's own objective), ``warm_start``, ``build_time`` and
        ``message`` (and ``fairness_gap`` with ``fairness``). ``objective`` is
        ``metrics.objective`` of the returned (decoded) tree;
        ``bound`` a lower bound on the optimum in the same units (``-inf`` for a method whose
        bound is not valid for the stated problem); ``time`` the solver's seconds (the search's
        whole call). ``agrees`` is True when the verified objective equals the best certified
        optimum within 1e-6 (None if nothing was certified) and the row's certificate is
        consistent. ``certificate`` says over what a row's bound and an ``optimal`` status
        hold: ``"all thresholds"`` (``"exact"``, and every method on a raw table binarized with
        ``thresholds="all"``: every midpoint is the same problem) or ``"binarization"`` (the
        binary features the other methods were given); ``agrees`` compares a row with the
        certified optimum of its own certificate. A method that fails to build its model
        (e.g. ``"rbinoct_original"`` when every feature is constant) gives a row with status
        ``error`` and the reason in ``message``, as does a solver whose certificate fails
        verification. ``df.attrs`` holds
        ``trees`` (by row), ``best_tree``, ``best_row``, ``warm_start_source``, the problem,
        ``certified_optima`` (per certificate; ``certified_optimum`` is the best row's) and,
        for a raw table, ``binarizer`` (the binarization) and ``row_binarizers`` (by row, the
        Binarizer that reads the row's tree from raw rows: the exact search's own, restricted
        to the thresholds its tree uses, or the shared one).
    """
    from odtkit.solvers import backend_capabilities

    lam = check_lambda(lam)
    methods = check_names(methods, "methods")
    chosen = [get_method(m, what="methods entry") for m in methods]
    raw_X: Any = None
    binarizer: Binarizer | None = None
    binarize_time = 0.0
    if y is not None:
        if isinstance(dataset, (Dataset, str)):
            raise ValueError(
                "y is given, so dataset must be the raw table (a DataFrame or 2-D array) of "
                f"those labels, not a {type(dataset).__name__}"
            )
        raw_X = dataset
        began = time.perf_counter()
        dataset, binarizer, thresholds = _raw_table(raw_X, y, thresholds)
        binarize_time = time.perf_counter() - began
    else:
        if thresholds is not None:
            raise ValueError("thresholds binarizes a raw table: pass it with y (the labels)")
        raw = [m.name for m in chosen if m.raw]
        if raw:
            raise ValueError(
                f"methods entry {raw[0]!r} searches every threshold of a raw table: pass "
                "compare(X, y=labels, ...) with the table's numeric columns"
            )
        dataset = _dataset(dataset)
    raw_depth = check_depth(max_depth, "max_depth", allow_none=False, minimum=1)
    max_depth = check_depth(
        max_depth, "max_depth", allow_none=False, minimum=1, n_features=dataset.n_features
    )
    time_limit = check_positive_number(time_limit, "time_limit")
    groups = _fairness_groups(fairness, dataset)
    for method in chosen:
        check_fair(method, fairness)
    fair_kw: dict[str, Any] = {} if fairness is None else {"fairness": fairness}
    backends = check_names(backends, "backends")
    for b in backends:
        backend_capabilities(b)  # raises ValueError naming the registered backends

    def certificate_of(method: Any) -> str:
        # every midpoint of a raw table is every threshold: the same problem as "exact"
        every = raw_X is not None and thresholds == "all"
        return "all thresholds" if every else method.certificate

    rows: list[dict[str, Any]] = []
    trees: list[Tree | None] = []
    properties: list[frozenset[str]] = []
    readers: list[Binarizer | None] = []  # what reads each row's tree from raw rows
    start_tree: Tree | None = None
    source = "none"
    start_is_optimal = False
    start_value = math.inf
    exact_start: tuple[Tree, float, bool] | None = None
    # Ctrl-C ends the run it interrupts (status interrupted, best answer kept) and the table:
    # the runs after it are rows with status not_run
    interrupted = False

    def skip(name: str, backend: str, status: Status = Status.NOT_RUN) -> None:
        message = (
            "not run: interrupted (Ctrl-C)"
            if status == Status.NOT_RUN
            else "interrupted (Ctrl-C) outside the solver: no answer kept"
        )
        rows.append(_empty_row(name, backend, status, message))
        rows[-1]["certificate"] = certificate_of(METHODS[name])
        trees.append(None)
        properties.append(frozenset())
        readers.append(binarizer)

    for method in chosen:
        if not method.is_search:
            continue
        if interrupted:
            skip(method.name, "native")
            continue
        result = None
        with stop_on_interrupt() as ctrl_c:  # Ctrl-C outside the native search
            if method.raw:
                result = method.search_raw(
                    raw_X,
                    y,
                    lam=lam,
                    max_depth=raw_depth,
                    time_limit=time_limit,
                    memory_limit_mb=memory_limit_mb,
                )
            else:
                result = method.search(
                    dataset,
                    lam=lam,
                    max_depth=max_depth,
                    time_limit=time_limit,
                    memory_limit_mb=memory_limit_mb,
                    **fair_kw,
                )
        if result is None:
            interrupted = True
            skip(method.name, "native", Status.INTERRUPTED)
            continue
        interrupted = ctrl_c.interrupted or result.status == Status.INTERRUPTED
        rows.append({**_row(method.name, result), "certificate": certificate_of(method)})
        trees.append(result.model)
        properties.append(method.properties)
        readers.append(getattr(result, "binarizer", None) if method.raw else binarizer)
        if method.raw:
            # a MIP start only if every threshold its tree tests is in the binarized table
            moved = _into(result.model, readers[-1], binarizer, dataset, lam, result.objective)
            if moved is not None and exact_start is None:
                exact_start = (moved, result.objective, result.status == Status.OPTIMAL)
        elif start_tree is None:
            start_tree, source = result.model, "search_tree"
            start_is_optimal = result.status == Status.OPTIMAL
            start_value = result.objective
    if exact_start is not None and exact_start[1] < start_value - TOLERANCE:
        # optimal over every threshold and in the binarization: optimal there too
        start_tree, start_value, start_is_optimal = exact_start
        source = "exact"
    if start_tree is None and warm_start:
        from odtkit.greedy import greedy_tree

        start_tree = greedy_tree(dataset, lam=lam, max_depth=max_depth)
        source = "greedy_tree"
        if groups is not None and not metrics.is_fair(start_tree, dataset, groups):
            start_tree, source = _best_leaf(dataset), "single_leaf"

    for method in chosen:
        if method.is_search:
            continue
        formulation = method.formulation()
        for backend in backends:
            if interrupted:
                skip(method.name, backend)
                continue
            result = None
            try:
                with stop_on_interrupt() as ctrl_c:  # Ctrl-C outside the build and the solve
                    result = solve_formulation(
                        formulation,
                        dataset,
                        backend=backend,
                        start=start_tree if warm_start else None,
                        start_is_optimal=start_is_optimal,
                        time_limit=time_limit,
                        solve_options=solve_options,
                        lam=lam,
                        max_depth=max_depth,
                        **fair_kw,
                    )
            except ValueError as exc:  # e.g. original BinOCT on all-constant features
                rows.append(_empty_row(method.name, backend, Status.ERROR, str(exc)))
                rows[-1]["certificate"] = certificate_of(method)
                trees.append(None)
                properties.append(frozenset())
                readers.append(binarizer)
                continue
            if result is None:
                interrupted = True
                skip(method.name, backend, Status.INTERRUPTED)
                continue
            interrupted = ctrl_c.interrupted or result.status == Status.INTERRUPTED
            if warm_start and start_tree is not None and result.model is None:
                result = _keep_start(result, start_tree, dataset, lam)
            row = _row(method.name, result, warm_start=result.stats["warm_start"])
            rows.append({**row, "certificate": certificate_of(method)})
            trees.append(result.model)
            properties.append(formulation.properties)
            readers.append(binarizer)

    if groups is not None:
        _check_fairness_of_rows(rows, trees, dataset, groups)
    # a tree above δ is no answer to the stated problem: it neither sets nor meets the optimum
    feasible = [not math.isnan(r["objective"]) and not r.pop("_unfair", False) for r in rows]
    # Two problems may share the table: OPT over all thresholds (the exact search) <= OPT over
    # the binarization (every binarized tree is a threshold tree on the same rows and λ). A
    # row's certificate is judged within its problem; an all-thresholds bound must also stay
    # below every tree of the table.
    certified_by: dict[str, float] = {}
    best_by: dict[str, float] = {}
    for kind in dict.fromkeys(r["certificate"] for r in rows):
        mine = [r["certificate"] == kind for r in rows]
        comparable = [m or kind == "all thresholds" for m in mine]
        verified = [
            r["objective"] for r, ok, c in zip(rows, feasible, comparable, strict=True) if ok and c
        ]
        best_by[kind] = min(verified) if verified else math.nan
        # a row's bound is valid for its problem by its method's declared properties; a
        # failed certificate was already dropped to -inf by verify_solution
        best_bound = max(
            (
                r["bound"]
                for r, p, m in zip(rows, properties, mine, strict=True)
                if m and VALID_BOUND in p
            ),
            default=-math.inf,
        )
        optimal = [
            r["objective"]
            for r, p, m in zip(rows, properties, mine, strict=True)
            if m and EXACT in p and r["status"] == Status.OPTIMAL and not math.isnan(r["objective"])
        ]
        own = [r["objective"] for r, ok, m in zip(rows, feasible, mine, strict=True) if ok and m]
        if optimal:
            certified_by[kind] = min(optimal)
        elif own and min(own) <= best_bound + TOLERANCE:
            certified_by[kind] = min(own)
        else:
            certified_by[kind] = math.nan
    for row, ok in zip(rows, feasible, strict=True):
        objective, bound = row["objective"], row["bound"]
        gap = objective - bound if not math.isnan(objective) else math.nan
        row["gap"] = 0.0 if abs(gap) <= 1e-12 else gap  # round-off of an exact certificate
        if not ok:
            row["agrees"] = False
            continue
        # verify_solution flags a solver whose value or bound contradicts its own tree; a bound
        # above another method's verified tree would be a bug too
        kind = row["certificate"]
        consistent = row["status"] != Status.ERROR and bound <= best_by[kind] + TOLERANCE
        certified = certified_by[kind]
        if math.isnan(certified):
            row["agrees"] = None if consistent else False
        else:
            row["agrees"] = consistent and abs(objective - certified) <= TOLERANCE

    columns = list(COLUMNS)
    if groups is not None:
        columns.insert(columns.index("n_leaves") + 1, "fairness_gap")
    table = pd.DataFrame(rows).reindex(columns=columns)
    table["agrees"] = table["agrees"].astype(object)
    table["message"] = table["message"].fillna("")
    values = np.where(feasible, table["objective"].to_numpy(dtype=float), np.inf)
    best_idx = int(np.argmin(values)) if any(feasible) else None
    best_kind = rows[best_idx]["certificate"] if best_idx is not None else None
    table.attrs.update(
        dataset=dataset.name,
        lam=lam,
        depth=max_depth,
        trees=trees,
        best_row=best_idx,
        best_tree=trees[best_idx] if best_idx is not None else None,
        certified_optimum=certified_by.get(best_kind, math.nan),
        certified_optima=certified_by,
        binarizer=binarizer,
        row_binarizers=readers,
        thresholds=thresholds if raw_X is not None else None,
        binarize_time=binarize_time,
        warm_start_source=source,
        feature_names=list(dataset.feature_names),
        class_names=list(dataset.classes),
        fairness=fairness,
    )
    return table


def _into(
    tree: Tree | None,
    reader: Any,
    binarizer: Any,
    dataset: Dataset,
    lam: float,
    objective: float,
) -> Tree | None:
    """``tree`` (over ``reader``'s features) re-indexed over ``binarizer``'s, when every test it
    makes is one of them (same column, kind, threshold and missing-value routing); else None.

    Checked by re-scoring: the moved tree must score ``objective`` on ``dataset``."""
    if tree is None or reader is None or binarizer is None:
        return None

    def key(spec: Any) -> tuple[Any, ...]:
        return (spec.source, spec.kind, spec.value, spec.missing)

    index = {key(spec): j for j, spec in enumerate(binarizer.get_feature_specs())}
    specs = reader.get_feature_specs()

    def walk(node: Tree) -> Tree | None:
        if node.is_leaf:
            return node
        j = index.get(key(specs[node.feature]))
        left = walk(node.left) if j is not None else None
        right = walk(node.right) if left is not None else None
        return None if right is None else Tree.split(j, left, right)

    moved = walk(tree)
    if moved is None:
        return None
    score = metrics.objective(moved, dataset, lam=lam)
    return moved if abs(score - objective) <= TOLERANCE else None


def _keep_start(result: Result, start: Tree, dataset: Dataset, lam: float) -> Result:
    """A MIP stopped before its solver ran (the build used up the time limit) still holds its
    warm start: the row reports that tree, verified, with the status the run ended in and no
    bound of its own (``-inf``, valid), as a solver stopped at once would have."""
    why = result.stats.get("stopped_before_solve")
    if not why or result.status != Status.TIME_LIMIT:
        return result
    return result.replace(
        model=start,
        objective=metrics.objective(start, dataset, lam=lam),
        stats={**result.stats, "warm_start": True},
        message=f"{why}: nothing was solved, the row reports its warm start",
    )


def _fairness_groups(fairness: Any, dataset: Dataset) -> FairnessGroups | None:
    """``fairness`` resolved against ``dataset`` once (its errors name the argument)."""
    if fairness is None:
        return None
    if not isinstance(fairness, Fairness):
        raise TypeError(f"fairness must be an odtkit.Fairness, got {type(fairness).__name__}")
    return fairness.groups(dataset)


def _best_leaf(dataset: Dataset) -> Tree:
    """The single leaf of least error: always δ-fair, a start for any fair MIP."""
    from odtkit.tree import majority_label

    counts = np.bincount(dataset.y, weights=dataset.weights, minlength=dataset.n_classes)
    return Tree.leaf(majority_label(counts))


def _check_fairness_of_rows(
    rows: list[dict[str, Any]], trees: list[Tree | None], dataset: Dataset, groups: FairnessGroups
) -> None:
    """Re-measure every returned tree's disparity; a tree above δ becomes an error row."""
    from odtkit.fairness import FAIRNESS_TOLERANCE

    for row, tree in zip(rows, trees, strict=True):
        if tree is None:
            row["fairness_gap"] = math.nan
            continue
        gap = metrics.fairness_gap(tree, dataset, groups)
        row["fairness_gap"] = gap
        if gap > groups.delta + FAIRNESS_TOLERANCE:
            row["status"] = Status.ERROR
            row["bound"] = -math.inf
            row["_unfair"] = True
            row["message"] = (
                f"its tree has disparity {gap:.6g} > delta={groups.delta:g}: not a feasible answer"
            ) + (f"; {row['message']}" if row.get("message") else "")

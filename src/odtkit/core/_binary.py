"""The search on a binarized :class:`~odtkit.datasets.Dataset`, and the answer helpers every
native tree search shares.

:func:`odtkit.core.search_tree` is the public face: on a Dataset it runs :func:`search_dataset`
here, on a raw table it hands over to :func:`odtkit.core.search_numeric`. The exact search in
turn needs what sits here: the guarded run of a native search, the re-verification of its
answer (:func:`verified_result`) and, for its guessed-threshold start, the dp on a Dataset. So
this module sits below both ``search.py`` and ``numeric.py`` and each imports it at module
level; it imports neither (issue 26: the two used to import each other inside functions).

``method="dp"`` is dynamic programming over sub-problems keyed by their support bitset (Lin et
al. 2020 (GOSDT); van der Linden et al. 2023 (STreeD); docs/formulations-search-and-pruning.md
§3.8-3.9), with the depth-two solver under a depth limit; ``method="bnb"`` is OSDT's leaf-set
branch-and-bound (Hu et al. 2019; §3.3-3.4); with ``fairness=`` the dp runs the native fair DP
over Pareto fronts (``core/native/fair_dp.cpp``; docs/formulations-trees.md §5).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from odtkit import _native, metrics
from odtkit._progress import Progress
from odtkit._validation import check_depth, check_lambda, check_switches
from odtkit._warnings import warn as _warn
from odtkit.core._problem import (
    POLICIES,
    build_search_problem,
    decode_tree,
    leaf_answer,
    native_status,
    restore_features,
    search_config,
)
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset, unique_rows
from odtkit.fairness import Fairness, resolve_fairness
from odtkit.results import TRACE_COLUMNS, Result, Status

__all__ = [
    "BOUNDS",
    "FAIR_BOUNDS",
    "OBJECTIVE_TOLERANCE",
    "SEARCH_ALGORITHMS",
    "STRATEGIES",
    "TrivialAnswerWarning",
    "charge_elapsed",
    "check_upper_bound",
    "guarded_answer",
    "informative_lam_range",
    "native_outcome",
    "search_dataset",
    "trivial_answer_message",
    "verified_result",
]

#: The native core's tree searches (``method=`` of :func:`odtkit.core.search_tree`): the search
#: entries of :data:`odtkit.methods.METHODS` that run on a binarized Dataset
#: (``tests/test_registry.py`` keeps the two equal; this module sits below the registry and
#: cannot import it).
SEARCH_ALGORITHMS = ("dp", "bnb")
#: Search orders of ``method="dp"``: depth-first bound passing, GOSDT-style best-first queue, or
#: the anytime driver (iterative deepening, depth-relaxed bounds and the recursive search on one
#: memo). ``strategy=None`` picks "anytime" for an unlimited depth under a time limit.
STRATEGIES = ("recursive", "queue", "anytime")
#: Switchable bounds (all on by default). Turning one off never changes the optimum.
BOUNDS = {
    "dp": ("equivalent_points", "lookahead", "support", "similar_support", "depth2"),
    "bnb": (
        "equivalent_points",
        "lookahead",
        "support",
        "incremental_accuracy",
        "leaf_accuracy",
        "accurate_support",
        "permutation",
        "leaf_count",
    ),
}
#: Switchable pruning of the fair search (``fairness=``); turning one off never changes the optimum.
FAIR_BOUNDS = ("window", "budget", "lagrangian", "shortcut")
#: Objectives returned by the native code must match ``metrics.objective`` this closely.
OBJECTIVE_TOLERANCE = 1e-9


def check_upper_bound(upper_bound: Any) -> float:
    """``upper_bound`` as the native searches take it: a number >= 0, ``inf`` for None."""
    if upper_bound is None:
        return math.inf
    if isinstance(upper_bound, bool) or not isinstance(upper_bound, Real):
        raise TypeError(f"upper_bound must be a number, got {type(upper_bound).__name__}")
    value = float(upper_bound)
    if math.isnan(value) or value < 0:
        raise ValueError(f"upper_bound must be >= 0, got {upper_bound!r}")
    return value


def search_dataset(
    dataset: Dataset,
    *,
    lam: float,
    max_depth: int | None = None,
    method: str = "dp",
    time_limit: float | None = None,
    node_limit: int | None = None,
    memory_limit_mb: float | None = None,
    bounds: Mapping[str, bool] | None = None,
    policy: str = "curiosity",
    upper_bound: float | None = None,
    strategy: str | None = None,
    fairness: Fairness | None = None,
    progress: bool | None = None,
    min_leaf_weight: float = 0.0,
    support_weights: np.ndarray | None = None,
) -> Result:
    """:func:`odtkit.core.search_tree` on a :class:`~odtkit.datasets.Dataset` (its parameters,
    returns and errors; the raw-table arguments are not taken here).

    ``min_leaf_weight``: the minimum leaf support as a share of the total weight (tolerance
    already subtracted, in [0, 1]), for ``method="dp"`` without ``fairness`` only; 0: none.
    :func:`odtkit.core.search_tree` resolves it from ``constraints``.

    ``support_weights``: per-row weights (finite, >= 0, positive sum) in which a leaf's support
    is measured when they differ from the objective's ``dataset.weights`` (a cost objective
    searched on its reduced rows); ``min_leaf_weight`` is then a share of their total. None:
    the dataset's own weights."""
    began = time.perf_counter()
    dataset = check_dataset(dataset)
    support = _check_support_weights(support_weights, dataset)
    lam = check_lambda(lam)
    max_depth = check_depth(max_depth, n_features=dataset.n_features)
    if not isinstance(method, str) or method not in SEARCH_ALGORITHMS:
        raise ValueError(f"method must be one of {SEARCH_ALGORITHMS}, got {method!r}")
    if not isinstance(policy, str) or policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if strategy is None:
        anytime = method == "dp" and max_depth is None and time_limit is not None
        strategy = "anytime" if anytime and fairness is None else "recursive"
    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES} or None, got {strategy!r}")
    if method != "dp" and strategy != "recursive":
        raise ValueError(f"strategy={strategy!r} applies only to method='dp', not {method!r}")
    if min_leaf_weight and (method != "dp" or fairness is not None):
        # search_tree refuses these combinations first (search_refusal); a guard for callers
        raise ValueError("a minimum leaf support is taken by method='dp' without fairness only")
    if not min_leaf_weight:
        support = None  # only a minimum leaf support reads them
    if fairness is not None:
        return _search_fair(
            dataset,
            fairness,
            lam=lam,
            max_depth=max_depth,
            method=method,
            strategy=strategy,
            time_limit=time_limit,
            node_limit=node_limit,
            memory_limit_mb=memory_limit_mb,
            bounds=bounds,
            upper_bound=upper_bound,
            start=began,
            progress=progress,
        )
    config = search_config(
        lam,
        time_limit=time_limit,
        node_limit=node_limit,
        memory_limit_mb=memory_limit_mb,
        bounds=check_switches(bounds, BOUNDS[method]),
        max_depth=-1 if max_depth is None else max_depth,
        upper_bound=check_upper_bound(upper_bound),
        policy=policy,
        min_leaf_weight=float(min_leaf_weight),
    )
    # every search starts from the greedy tree of docs/formulations-search-and-pruning.md §3.2,
    # computed natively (microseconds)
    if method == "dp" and strategy == "queue":
        native = _native.search_dp_queue
    elif method == "dp" and strategy == "anytime":
        native = _native.search_dp_anytime
    elif method == "dp":
        native = _native.search_dp
    else:
        native = _native.search_bnb
    with Progress(f"search ({method}, {strategy})", progress) as bar:
        report = bar.update if bar.active else None
        raw = _native_answer(
            dataset,
            lam,
            lambda problem: native(problem, charge_elapsed(config, began), report),
            support=support,
        )
    result = verified_result(raw, dataset, lam=lam, max_depth=max_depth, method=method, start=began)
    # (a minimum leaf support, like fairness, may itself be what makes a single leaf optimal)
    _warn_if_trivial(result, dataset, lam, max_depth, constrained=min_leaf_weight > 0)
    return result


def _check_support_weights(support: Any, dataset: Dataset) -> np.ndarray | None:
    """``support`` as the native Problem takes it (float64, one finite weight >= 0 per row,
    positive finite sum), or None when there are none or they are the dataset's own weights
    (the common case: no separate vector, the search unchanged)."""
    if support is None:
        return None
    values = np.asarray(support)
    if values.dtype == bool or not np.issubdtype(values.dtype, np.number):
        raise TypeError(f"support_weights must be numbers, got dtype {values.dtype}")
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.shape != (dataset.n_samples,):
        raise ValueError(
            f"support_weights must hold one weight per row ({dataset.n_samples}), got shape "
            f"{values.shape}"
        )
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError("support_weights must be finite and >= 0")
    total = float(values.sum())
    if not (0 < total < math.inf):
        raise ValueError(f"support_weights must have a positive, finite sum, got {total!r}")
    if np.array_equal(values, dataset.weights):
        return None
    return values


def _search_fair(
    dataset: Dataset,
    fairness: Any,
    *,
    lam: float,
    max_depth: int | None,
    method: str,
    strategy: str,
    time_limit: Any,
    node_limit: Any,
    memory_limit_mb: Any,
    bounds: Any,
    upper_bound: Any,
    start: float,
    progress: bool | None,
) -> Result:
    """``search_tree(..., fairness=...)``: the native fair DP, its answer re-verified."""
    groups = resolve_fairness(fairness, dataset)
    if method != "dp":
        raise ValueError(f"fairness requires method='dp', got method={method!r}")
    if strategy != "recursive":
        raise ValueError(f"fairness requires strategy='recursive', got strategy={strategy!r}")
    if max_depth is None:
        raise ValueError("fairness requires an integer max_depth (the fair DP needs a depth limit)")
    if upper_bound is not None:
        raise ValueError("upper_bound is not supported with fairness")
    config = search_config(
        lam,
        time_limit=time_limit,
        node_limit=node_limit,
        memory_limit_mb=memory_limit_mb,
        bounds=check_switches(bounds, FAIR_BOUNDS),
        max_depth=max_depth,
    )
    coefficients = np.ascontiguousarray(groups.coefficients, dtype=np.float64)
    with Progress("fair search (dp)", progress) as bar:
        report = bar.update if bar.active else None
        raw = _native_answer(
            dataset,
            lam,
            lambda problem: _native.search_fair_dp(
                problem,
                coefficients,
                groups.delta,
                groups.positive_code,
                charge_elapsed(config, start),
                report,
            ),
        )
    result = verified_result(raw, dataset, lam=lam, max_depth=max_depth, method="dp", start=start)
    gap = metrics.fairness_gap(result.model, dataset, groups)
    if not metrics.is_fair(result.model, dataset, groups):
        raise RuntimeError(
            f"the fair search returned a tree with disparity {gap!r} > delta={groups.delta!r} "
            "(odtkit.metrics.fairness_gap): this is a bug"
        )
    _warn_if_trivial(result, dataset, lam, max_depth, constrained=True)
    return dataclasses.replace(
        result, stats={**result.stats, "fairness_gap": gap}, time=time.perf_counter() - start
    )


def charge_elapsed(config: Any, start: float) -> Any:
    """``config`` with the time limit less what the call spent before the search (validation,
    the distinct features, the Problem: seconds on 20,000 x 3,000); a positive one (0 is
    "no limit" natively) once it has passed."""
    if config.time_limit > 0:
        config.time_limit = max(config.time_limit - (time.perf_counter() - start), 1e-9)
    return config


def _native_answer(
    dataset: Dataset,
    lam: float,
    run: Callable[[Any], _native.SearchOutput],
    support: np.ndarray | None = None,
) -> _native.SearchOutput:
    """``run(problem)`` on the problem over the features some row tells apart, its tree mapped
    back to the dataset's features (under :func:`_guarded_answer`); ``support``: the Problem's
    separate support weights (checked by :func:`_check_support_weights`), None: none.
    """

    def search(prepared: tuple[Any, np.ndarray]) -> _native.SearchOutput:
        problem, kept = prepared
        raw = run(problem)
        return raw.replace(
            tree=restore_features(raw.tree, kept),
            stats={**raw.stats, "features_merged": dataset.n_features - kept.size},
        )

    return guarded_answer(
        lambda: build_search_problem(dataset, support=support),
        search,
        dataset.y,
        dataset.weights,
        int(dataset.n_classes),
        lam,
    )


def guarded_answer(
    prepare: Callable[[], Any],
    run: Callable[[Any], _native.SearchOutput],
    y: np.ndarray,
    weights: np.ndarray,
    n_classes: int,
    lam: float,
) -> _native.SearchOutput:
    """``run(prepare())``: a native search on its prepared input, never an exception for a
    Ctrl-C or a failed allocation.

    The searches turn a failed allocation into status ``memory_limit`` with their incumbent; a
    MemoryError here is the preprocessing (or the answer's conversion) failing before there is
    one: the certified majority leaf of ``y`` and ``weights`` then (a constant prediction, fair
    under any notion). The searches report a Ctrl-C as status ``interrupted``; one during the
    preprocessing (seconds on 20,000 x 3,000: the distinct features, the Problem's bitsets) is
    the same status with that leaf and its bound, never a ``KeyboardInterrupt``.
    """
    try:
        try:
            prepared = prepare()
        except KeyboardInterrupt:
            return leaf_answer(y, weights, n_classes, lam, status=_native.SearchStatus.interrupted)
        return run(prepared)
    except MemoryError:
        return leaf_answer(y, weights, n_classes, lam)


class TrivialAnswerWarning(UserWarning):
    """The optimum is a single leaf for a reason the user likely did not intend."""


def informative_lam_range(dataset: Dataset) -> tuple[float, float]:
    """Where ``lam`` stops mattering: ``(best_stump, ceiling)`` in objective units.

    Below ``best_stump`` (the best one-split tree's error reduction, normalized) that tree
    beats the single leaf; at or above ``ceiling`` (the leaf's error less the equivalent-points
    minority: no tree reduces the error more, and a tree with splits pays ``lam`` for one leaf
    more at least) the single leaf is optimal at every depth. The same holds for rule lists (a
    one-literal rule is a stump; each rule pays ``lam``). O(n p) with numpy.
    """
    w = dataset.weights
    total = float(w.sum())
    if total <= 0:
        return 0.0, 0.0
    n_classes = int(dataset.n_classes)
    class_weight = np.bincount(dataset.y, weights=w, minlength=n_classes)
    onehot = np.zeros((dataset.n_samples, n_classes))
    onehot[np.arange(dataset.n_samples), dataset.y] = w
    # class weights on the x_j = 1 side, in row blocks of ~16 M cells (X as floats would cost
    # 8 bytes a cell: 8 GB on a million rows of a thousand features)
    ones = np.zeros((dataset.n_features, n_classes))
    step = max(1, 2**24 // max(1, dataset.n_features))
    for lo in range(0, dataset.n_samples, step):
        ones += dataset.X[lo : lo + step].T.astype(np.float64) @ onehot[lo : lo + step]
    zeros = class_weight - ones
    stump_errors = (ones.sum(1) - ones.max(1, initial=0.0)) + (
        zeros.sum(1) - zeros.max(1, initial=0.0)
    )
    leaf_error = total - float(class_weight.max())
    best_stump = (leaf_error - float(stump_errors.min(initial=leaf_error))) / total
    _, group = unique_rows(dataset.X)
    grouped = np.zeros((int(group.max(initial=-1)) + 1, n_classes))
    np.add.at(grouped, group, onehot)
    minority = float((grouped.sum(1) - grouped.max(1, initial=0.0)).sum())
    return max(best_stump, 0.0), max((leaf_error - minority) / total, 0.0)


def trivial_answer_message(
    dataset: Dataset, lam: float, *, what: str = "tree with splits"
) -> str | None:
    """Why a certified single-leaf answer is trivial, with the informative range of ``lam``.

    One class: every model predicts it. Otherwise ``lam`` is at or above the largest value at
    which some model with splits beats the leaf (:func:`informative_lam_range` brackets it).
    None when ``lam`` is 0 and splits could pay: then a depth limit keeps the leaf optimal, not
    ``lam``. ``what`` names the models with splits in the message.
    """
    class_weight = dataset.class_counts()
    present = np.flatnonzero(class_weight > 0)
    if present.size <= 1:
        label = dataset.classes[present[0]] if present.size else dataset.classes[0]
        return (
            f"y holds a single class ({label}): every model predicts it, so the answer is "
            "trivially the one leaf"
        )
    best_stump, ceiling = informative_lam_range(dataset)
    if ceiling > 0 and lam <= 0:
        return None  # a depth limit, not lam, keeps the splits out: nothing to say about lam
    if ceiling <= 0:
        return (
            f"no feature tells apart rows of different classes better than the single leaf, so "
            f"it is optimal for every lam: no {what} reduces the training error"
        )
    # best_stump == 0 when no single split reduces the error (xor-like data): then only a
    # deeper model can win, and "a stump wins below lam=0" would contradict the range above
    one_split = (
        f"the best model with one split (a stump, a one-literal rule) wins below "
        f"lam={best_stump:.4g}"
        if best_stump > 0
        else "no model with one split beats the leaf at any lam, so only a deeper one can"
    )
    return (
        f"lam={lam:g} makes the single leaf (a constant prediction) optimal. Informative values "
        f"lie below lam={ceiling:.4g}: no {what} can win at or above it (the leaf's error less "
        f"the equivalent-points minority); {one_split}"
    )


def _warn_if_trivial(
    result: Result,
    dataset: Dataset,
    lam: float,
    max_depth: int | None,
    *,
    constrained: bool = False,
) -> None:
    """TrivialAnswerWarning when a certified answer is a single leaf (see the message).

    ``max_depth=0`` admits nothing else, which is said instead. Under a fairness constraint
    (or a minimum leaf support: ``constrained``) only a single class is reported: the constraint
    itself may be what makes the leaf optimal.
    """
    if result.status != "optimal" or not result.model.is_leaf:
        return
    several_classes = np.count_nonzero(dataset.class_counts() > 0) > 1
    if max_depth == 0 and several_classes:
        _warn(
            "max_depth=0 admits only the single leaf (a constant prediction)", TrivialAnswerWarning
        )
        return
    if constrained and several_classes:
        return
    message = trivial_answer_message(dataset, lam)
    if message is not None:
        _warn(message, TrivialAnswerWarning)


def native_outcome(
    raw: _native.SearchOutput, objective: float
) -> tuple[Status, float, pd.DataFrame]:
    """A native answer's status, its lower bound and its trace frame, given the re-evaluated
    ``objective`` of its answer: the bound is the objective when the status is optimal and never
    above it otherwise (the native bound may sit a rounding above a re-evaluated objective)."""
    status = native_status(raw.status)
    lower_bound = objective if status == Status.OPTIMAL else min(raw.lower_bound, objective)
    # one float block, not a dict of lists: DataFrame-from-dict costs ~5 ms, more than many searches
    trace = pd.DataFrame(
        np.column_stack([raw.trace_time, raw.trace_incumbent, raw.trace_bound]),
        columns=list(TRACE_COLUMNS),
        dtype=float,
    )
    return status, lower_bound, trace


def verified_result(
    raw: _native.SearchOutput,
    dataset: Dataset,
    *,
    lam: float,
    max_depth: int | None,
    method: str,
    start: float,
) -> Result:
    """Decode a native search's answer, re-evaluate it with :mod:`odtkit.metrics` and wrap it."""
    tree = decode_tree(raw.tree)
    if max_depth is not None and tree.depth > max_depth:
        raise RuntimeError(f"{method} returned a tree of depth {tree.depth} > max_depth")
    objective = metrics.objective(tree, dataset, lam=lam)
    if abs(objective - raw.objective) > OBJECTIVE_TOLERANCE:
        raise RuntimeError(
            f"{method} reported objective {raw.objective!r} but the returned tree scores "
            f"{objective!r} (odtkit.metrics.objective): this is a bug"
        )
    if raw.lower_bound > objective + OBJECTIVE_TOLERANCE:
        raise RuntimeError(
            f"{method} reported lower bound {raw.lower_bound!r} above the objective "
            f"{objective!r} of its own tree: this is a bug"
        )
    status, lower_bound, trace = native_outcome(raw, objective)
    return Result(
        model=tree,
        objective=objective,
        lower_bound=lower_bound,
        status=status,
        time=time.perf_counter() - start,
        method=method,
        n_explored=raw.n_explored,
        peak_memory_mb=raw.peak_memory_mb,
        trace=trace,
        stats=raw.stats,
    )

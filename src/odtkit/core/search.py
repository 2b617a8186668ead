"""``search_tree``: certifiably optimal sparse decision trees by native search.

Minimises ``misclassified_weight / total_weight + lam * n_leaves`` (optionally under a depth
limit) with

* ``method="dp"``: dynamic programming over sub-problems keyed by their support bitset
  (Lin et al. 2020 (GOSDT); van der Linden et al. 2023 (STreeD);
  docs/formulations-search-and-pruning.md §3.8-3.9), with the depth-two solver under a depth limit;
* ``method="bnb"``: OSDT's leaf-set branch-and-bound (Hu et al. 2019;
  docs/formulations-search-and-pruning.md §3.3-3.4).

Both are anytime: a time, node or memory limit, or Ctrl-C, stops the search and returns the best
tree found so far (never worse than the greedy start) with a valid lower bound.

With ``fairness=`` (an :class:`odtkit.Fairness`) ``method="dp"`` minimises the same objective over
the δ-fair trees only (docs/formulations-trees.md §5), by the native fair DP over Pareto fronts
(``core/native/fair_dp.cpp``).

With ``constraints=`` (:mod:`odtkit.constraints`) the search takes what stays decomposable: a
minimum leaf support (natively, in every strategy of ``method="dp"``), forbidden features (left
out before the search) and one fairness constraint alone (the fair DP). Anything else is
refused by :func:`search_refusal`, in one line naming the constraint: a MIP formulation carries
it.

This module is the public face: the search on a Dataset lives in :mod:`odtkit.core._binary`,
below both this module and :mod:`odtkit.core.numeric` (whose guessed-threshold start runs it), so
``search_tree`` on a raw table imports ``search_numeric`` at module level without a cycle.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from odtkit import metrics
from odtkit._warnings import warn
from odtkit.constraints import (
    CONSTRAINT_TOLERANCE,
    FeatureBudget,
    ForbidFeatures,
    MaxLeaves,
    MinLeafSupport,
    ResolvedConstraints,
    check_constraints,
    resolve,
)

# the names below are this module's public vocabulary, as before the search on a Dataset moved
# to _binary (callers and tests read them here)
from odtkit.core._binary import (
    BOUNDS,
    FAIR_BOUNDS,
    OBJECTIVE_TOLERANCE,
    SEARCH_ALGORITHMS,
    STRATEGIES,
    TrivialAnswerWarning,
    informative_lam_range,
    search_dataset,
    trivial_answer_message,
)
from odtkit.core._problem import POLICIES, decode_tree, encode_tree, restore_features
from odtkit.core.budget import budget_of, search_budgeted
from odtkit.core.numeric import search_numeric
from odtkit.costs import reduction
from odtkit.datasets import Dataset
from odtkit.fairness import Fairness
from odtkit.results import Result, Status
from odtkit.tree import Tree

__all__ = [
    "BOUNDS",
    "FAIR_BOUNDS",
    "OBJECTIVE_TOLERANCE",
    "POLICIES",
    "SEARCH_ALGORITHMS",
    "STRATEGIES",
    "SearchOptions",
    "TrivialAnswerWarning",
    "informative_lam_range",
    "search_refusal",
    "search_tree",
    "trivial_answer_message",
]


@dataclass(frozen=True)
class SearchOptions:
    """How :func:`search_tree` searches: the settings that tune or instrument a search of a
    Dataset but never change the problem it solves.

    The problem and the limits every entry point shares (``lam``, ``max_depth``, ``method``,
    ``time_limit``, ``memory_limit_mb``, ``fairness``) stay plain keywords of
    :func:`search_tree`; these are the search's own. Values are checked when the search runs
    (the message names the field).

    Attributes
    ----------
    node_limit : int, optional
        Stop after expanding this many sub-problems (dp) or states (bnb), with status
        ``node_limit``.
    bounds : mapping of str to bool, optional
        Switch individual bounds off for ablations (all on by default); names in ``BOUNDS``
        (``FAIR_BOUNDS`` with ``fairness``).
    policy : str
        Queue policy of ``bnb`` (one of ``POLICIES``); ``dp`` ignores it.
    strategy : {"recursive", "queue", "anytime"}, optional
        Search order of ``method="dp"`` (see :func:`search_tree`).
    upper_bound : float, optional
        Objective of a known tree (e.g. from a MIP) used to prune.
    progress : bool, optional
        A live line on stderr once the search has run for 2 s; None: when stderr is a terminal.
    """

    node_limit: int | None = None
    bounds: Mapping[str, bool] | None = None
    policy: str = "curiosity"
    strategy: str | None = None
    upper_bound: float | None = None
    progress: bool | None = None


#: search_tree's keywords that moved into SearchOptions (issue 38), deprecated until 0.3.0
_MOVED = ("node_limit", "bounds", "policy", "strategy", "upper_bound", "progress")
#: search_tree's keywords of a raw table, which search_numeric takes (deprecated until 0.3.0)
_RAW_TABLE = ("y", "sample_weight", "categorical", "start")


def search_tree(
    dataset: Dataset | Any,
    *,
    lam: float,
    max_depth: int | None = None,
    method: str = "dp",
    time_limit: float | None = None,
    memory_limit_mb: float | None = None,
    fairness: Fairness | None = None,
    options: SearchOptions | None = None,
    constraints: Any = None,
    node_limit: int | None = None,
    bounds: Mapping[str, bool] | None = None,
    policy: str | None = None,
    upper_bound: float | None = None,
    strategy: str | None = None,
    progress: bool | None = None,
    y: Any = None,
    sample_weight: Any = None,
    categorical: list[str] | None = None,
    start: str | None = None,
) -> Result:
    """Find a tree minimising ``misclassified/n + lam * leaves`` and certify its optimality.

    Parameters
    ----------
    dataset : Dataset
        Binary features, class codes (multi-class allowed) and optional sample weights; the
        certificate holds over its features. A raw table (numeric, categorical, missing cells)
        is :func:`odtkit.core.search_numeric`'s (the exact search over every threshold):
        ``search_tree(X, y=y, ...)`` still runs it, with a FutureWarning, until 0.3.0.
    lam : float
        Penalty per leaf, ``>= 0``.
    max_depth : int, optional
        Maximum number of splits on a root-to-leaf path (``None``: unlimited).
    method : {"dp", "bnb"}
        Dynamic programming over supports or OSDT branch-and-bound.
    time_limit, memory_limit_mb : float, optional
        Stop after this many seconds / when the search's own data exceed this many MB. With
        no ``memory_limit_mb`` the search may use 75 % of the memory available when it starts
        (``$ODTKIT_MEMORY_LIMIT_MB`` overrides): at its limit it returns its best tree and a
        valid bound with status ``memory_limit`` instead of growing until the process dies.
    options : SearchOptions, optional
        The search's own settings (default ``SearchOptions()``); their meaning:

        ``node_limit``: stop after expanding this many sub-problems (dp) or states (bnb).

        ``bounds``: switch individual bounds off for ablations (all on by default); names in
        ``BOUNDS``.

        ``policy``: queue policy of ``bnb`` (one of ``POLICIES``). ``dp`` accepts any of them
        and ignores it: it always recurses into the split with the fewest one-split mistakes
        first.

        ``upper_bound``: objective of a known tree (e.g. from a MIP) used to prune. If no tree
        attains it, the search falls back to its own incumbent (``stats["upper_bound_invalid"]``).

        ``progress``: a live line on stderr (elapsed, incumbent, bound, gap) once the search has
        run for 2 s; None (default): shown when stderr is a terminal.

        ``strategy`` ({"recursive", "queue", "anytime"}, optional): search order of ``method="dp"``
        (``bnb`` accepts only ``None`` or ``"recursive"``). ``None`` (the default) is ``"anytime"``
        when ``max_depth=None`` and a ``time_limit`` is given, else ``"recursive"``. ``"recursive"``
        (DL8.5/MurTree-style bound passing) is the fastest way to a certificate, but being
        depth-first it improves its incumbent late and its global lower bound stays weak until the
        end. ``"anytime"`` makes both good at every moment. At unlimited depth under a time or node
        limit it first runs the three searches below alone on a tenth of that limit (what they
        certify there is the answer), then spends up to half of the limit on dives (the optimum at
        depth 2, 3, ... by the recursive search, each warm-started from the last, is a tree of the
        unlimited problem: an incumbent; the bound meanwhile is the first tenth's) and up to a tenth
        on polishing the best (every subtree of height h <= 3 replaced by the optimum of depth h + 2
        on its rows). Then three searches share the recursive search's memo, warm-started from that
        tree, and take turns in slices of work that double each round: iterative deepening (the
        optimum at depth 1, 2, ... is an incumbent), depth-relaxed deepening (the best tree of depth
        d whose nodes at depth d cost only a lower bound on their best subtree bounds the optimum
        from below, and certifies it when it reaches the incumbent) and the recursive search of the
        stated problem, pruned by the incumbent. It certifies the same optimum, on easy problems up
        to ~3x more slowly than ``"recursive"``, on hard ones far sooner, and with a limit returns a
        much better tree and bound (``benchmarks/results/anytime_search.md``). ``"queue"`` (GOSDT
        Algorithm 1: dependency graph, bound propagation to parents, best-first priority queue)
        certifies the same optimum, usually more slowly, with a global lower bound that rises
        steadily. The queue ignores the ``similar_support`` and ``depth2`` switches and uses
        ``upper_bound`` only at the root.
    fairness : Fairness, optional
        Only δ-fair trees are admitted (see :class:`odtkit.Fairness`: the notion, the protected
        attribute(s), ``delta`` and the positive class). Needs ``method="dp"``,
        ``options.strategy="recursive"`` and an integer ``max_depth``; ``upper_bound`` is not
        supported. ``fairness.groups(dataset)`` is resolved once and the search bounds the linear
        disparities of those pairs, so every notion (sp, pe, eopp, eodds, csp) and any number of
        protected columns or values is supported, with multi-class labels (a leaf may predict any
        class; only the positive one counts) and sample weights (rates and the objective are both
        weighted). The search is a DP over Pareto fronts of (cost, disparity vector): a sub-problem
        keeps the cheapest tree for every distinct disparity vector it can reach, so fronts grow
        with the number of distinct vectors, roughly multiplicatively in the number of constrained
        pairs (german-credit, depth 3: largest front ~2 thousand entries for binary sp, ~40 thousand
        for eodds, two pairs). The fast case is one pair (binary sp, pe, eopp), where Lagrangian
        cuts prune the fronts at the root's children (up to ``max_depth=4``); several pairs are
        exact too but slower and hungrier. It first solves the unconstrained problem: when that
        optimum is fair it is returned at once, and its lower bound is always valid.
        ``options.bounds`` then takes the switches in ``FAIR_BOUNDS`` (``window``, ``budget``,
        ``lagrangian``, ``shortcut``).
    constraints : list of odtkit.constraints values, or ResolvedConstraints, optional
        Side constraints the returned tree satisfies exactly (resolve them once with
        :func:`odtkit.constraints.resolve` to reuse them). The search takes
        :class:`~odtkit.constraints.MinLeafSupport` (``method="dp"``, every strategy: every
        leaf receives at least that much training weight, so a split is admitted only when
        both sides do), :class:`~odtkit.constraints.ForbidFeatures` (the features are left out
        of the search) and one :class:`odtkit.Fairness` alone (as ``fairness=``). A cost
        objective of :mod:`odtkit.costs` stated in the same list is taken when it is a weighted
        misclassification, also beside a minimum leaf support (measured in the dataset's own
        weights). Anything else raises ValueError naming the constraint
        (:func:`search_refusal`; a MIP formulation carries it). When no tree can meet them the
        result has status ``infeasible``, no model and ``message`` naming the constraint.
        Every returned tree is re-checked with
        :meth:`~odtkit.constraints.ResolvedConstraints.violations`.
    node_limit, bounds, policy, upper_bound, strategy, progress : deprecated
        The old spelling of the ``options`` fields of the same names: the same search, with a
        FutureWarning; removed in odtkit 0.3.0. Give them in ``options`` instead.
    y, sample_weight, categorical, start : deprecated
        The old spelling of :func:`odtkit.core.search_numeric` on a raw ``dataset``
        (``search_tree(X, y=y, ...)`` is ``search_numeric(X, y, ...)``): the same search, with a
        FutureWarning; removed in odtkit 0.3.0.

    Returns
    -------
    Result
        ``model`` (a :class:`~odtkit.tree.Tree`), ``objective``, ``lower_bound``, ``status``,
        ``time``, ``n_explored``, ``peak_memory_mb``, ``trace`` and ``stats``. With
        ``fairness``, ``stats["fairness_gap"]`` is the returned tree's largest disparity
        (:func:`odtkit.metrics.fairness_gap`) and ``stats`` holds the front sizes
        (``front_max``, ``front_mean``, ``fronts_built``) and the pruning counters.

    Raises
    ------
    TypeError, ValueError
        On an invalid argument (the message names it).
    RuntimeError
        If the native objective disagrees with :func:`odtkit.metrics.objective`, or a fair
        search returns a tree that :func:`odtkit.metrics.is_fair` rejects, or any returned tree
        breaks a stated constraint (a bug).
    """
    options = _options(
        options,
        node_limit=node_limit,
        bounds=bounds,
        policy=policy,
        upper_bound=upper_bound,
        strategy=strategy,
        progress=progress,
    )
    # the problem, the limits and the options both searches take (a raw table's and a Dataset's)
    shared: dict[str, Any] = {
        "lam": lam,
        "max_depth": max_depth,
        "time_limit": time_limit,
        "node_limit": options.node_limit,
        "memory_limit_mb": memory_limit_mb,
        "upper_bound": options.upper_bound,
        "progress": options.progress,
    }
    raw_table = {"y": y, "sample_weight": sample_weight, "categorical": categorical, "start": start}
    if not isinstance(dataset, Dataset) and y is not None:
        warn(
            "search_tree(X, y=y, ...) on a raw table is deprecated and will be removed in odtkit "
            "0.3.0: use odtkit.core.search_numeric(X, y, ...) (the same search; sample_weight, "
            "categorical and start are its keywords)",
            FutureWarning,
        )
        _check_raw_table_call(
            method,
            {
                "bounds": options.bounds is not None,
                "policy": options.policy != "curiosity",
                "strategy": options.strategy is not None,
                "fairness": fairness is not None,
                "constraints": constraints is not None,
            },
        )
        return search_numeric(
            dataset,
            y,
            sample_weight=sample_weight,
            categorical=categorical,
            start="greedy" if start is None else start,
            **shared,
        )
    if not isinstance(dataset, Dataset) and isinstance(dataset, (pd.DataFrame, np.ndarray, list)):
        raise TypeError(
            f"dataset must be an odtkit Dataset, got a {type(dataset).__name__} without y: the "
            "exact search over every threshold of a raw table is "
            "odtkit.core.search_numeric(X, y, lam=..., max_depth=...)"
        )
    given = [name for name, value in raw_table.items() if value is not None]
    if given:
        raise TypeError(
            f"{', '.join(given)} apply only to a raw table (DataFrame or array) as the first "
            "argument; a Dataset carries its own labels and weights"
        )
    if constraints is not None:
        return _search_constrained(
            dataset,
            constraints,
            fairness,
            method=method,
            bounds=options.bounds,
            policy=options.policy,
            strategy=options.strategy,
            **shared,
        )
    return search_dataset(
        dataset,
        method=method,
        bounds=options.bounds,
        policy=options.policy,
        strategy=options.strategy,
        fairness=fairness,
        **shared,
    )


def _options(options: SearchOptions | None, **old: Any) -> SearchOptions:
    """``options`` with the deprecated keywords of the same names folded in (each given one
    warns, naming its new spelling); TypeError when a field is given both ways."""
    if options is None:
        options = SearchOptions()
    elif not isinstance(options, SearchOptions):
        raise TypeError(
            f"options must be an odtkit.core.SearchOptions, got {type(options).__name__}"
        )
    given = {name: value for name, value in old.items() if value is not None}
    if not given:
        return options
    default = SearchOptions()
    both = [name for name in given if getattr(options, name) != getattr(default, name)]
    if both:
        raise TypeError(
            f"{', '.join(both)} given both as keyword and in options: give it in "
            "options=SearchOptions(...) only"
        )
    spelled = ", ".join(f"{name}={value!r}" for name, value in given.items())
    warn(
        f"search_tree's keyword(s) {', '.join(given)} are deprecated and will be removed in "
        f"odtkit 0.3.0: use search_tree(..., options=SearchOptions({spelled})) (the same "
        "search; from odtkit.core import SearchOptions)",
        FutureWarning,
    )
    return dataclasses.replace(options, **given)


def _check_raw_table_call(method: Any, refused: Mapping[str, bool]) -> None:
    """Refuse what ``search_tree(X, y=y, ...)`` on a raw table cannot run: a method other than
    the exact search (:func:`odtkit.core.search_numeric`), or an option of the Dataset search."""
    if not isinstance(method, str) or method not in ("dp", "exact"):
        raise ValueError(
            f"method must be 'dp' or 'exact' for a raw table (the exact search over every "
            f"threshold), got {method!r}; binarize it into a Dataset for other methods"
        )
    given = [name for name, value in refused.items() if value]
    if given:
        raise TypeError(
            f"{', '.join(given)} do(es) not apply to the exact search over every threshold "
            "(search_tree on a raw table); binarize it into a Dataset to use them"
        )


def search_refusal(resolved: ResolvedConstraints, method: str = "dp") -> str:
    """Why :func:`search_tree` cannot certify ``resolved`` with ``method`` ("" when it can).

    The one place that decides which constraints the native search takes: a minimum leaf
    support (``method="dp"``), forbidden features (any method), split budgets
    (:class:`~odtkit.constraints.MaxLeaves`, :class:`~odtkit.constraints.FeatureBudget` with
    ``per="split"``: the budgeted dp of :mod:`odtkit.core.budget`, ``method="dp"``, one
    resource as :func:`~odtkit.core.budget.budget_of` combines them) and exactly one
    :class:`odtkit.Fairness` with nothing else (``method="dp"``). A cost objective
    (:mod:`odtkit.costs`) is taken when it is a weighted misclassification
    (:func:`odtkit.costs.reduction`), beside forbidden features, split budgets or a minimum leaf
    support (measured natively in the dataset's own weights while the objective reads the
    reduced rows' weights), but not beside a fairness constraint, nor beside a minimum leaf
    support and a split budget together (the budgeted dp measures a leaf's support in the
    objective's weights). The answer is one line naming the first constraint the search cannot
    take; every MIP formulation carries it.
    """
    constraints = resolved.side_constraints
    fair = [c for c in constraints if isinstance(c, Fairness)]
    mip = "a MIP carries it (method='auto' picks branch-and-price, PathOCT or FlowOCT)"
    cost = resolved.cost
    if cost is not None:
        assert resolved.losses is not None  # resolve() sets the losses of a stated cost
        reduced = reduction(resolved.losses)
        what = f"{cost.describe()} ({cost.kind})"
        if isinstance(reduced, str):
            return (
                f"{what}: the search takes costs that are a weighted misclassification, but "
                f"{reduced}; {mip}"
            )
        # a minimum leaf support is measured in the dataset's own weights beside the reduced
        # rows' (the native support weights); a fairness constraint is not
        fair_beside = [c for c in constraints if isinstance(c, Fairness)]
        if fair_beside:
            return (
                f"{_describe(fair_beside[0])}: the search takes it with no cost objective (here "
                f"{cost.describe()}); {mip}"
            )
        support = [c for c in constraints if isinstance(c, MinLeafSupport)]
        budgets = [
            c
            for c in constraints
            if isinstance(c, MaxLeaves) or (isinstance(c, FeatureBudget) and c.per == "split")
        ]
        if support and budgets:
            return (
                f"{_describe(support[0])} beside {_describe(budgets[0])} (min_leaf_support): the "
                f"budgeted search takes a minimum leaf support with no cost objective (here "
                f"{cost.describe()}); {mip}"
            )
    for c in constraints:
        kind = "fairness" if isinstance(c, Fairness) else str(c.kind)
        what = _describe(c)
        if isinstance(c, ForbidFeatures):
            continue
        if isinstance(c, MaxLeaves) or (isinstance(c, FeatureBudget) and c.per == "split"):
            if method != "dp":
                return (
                    f"{what} ({kind}): the search takes it with method='dp' only, not "
                    f"method={method!r}; {mip}"
                )
            # the budget reads the side constraints (a cost objective is searched on its
            # reduction, _search_costed)
            budget = budget_of(dataclasses.replace(resolved, constraints=constraints, losses=None))
            if isinstance(budget, str):
                return f"{budget}; {mip}"
            continue
        if isinstance(c, MinLeafSupport):
            if method != "dp":
                return (
                    f"{what} ({kind}): the search takes it with method='dp' only, not "
                    f"method={method!r}; {mip}"
                )
            continue
        if isinstance(c, Fairness):
            if len(fair) > 1:
                return f"{what} (fairness): the search takes one fairness constraint only; {mip}"
            others = [o for o in constraints if not isinstance(o, Fairness)]
            if others:
                return (
                    f"{what} (fairness): the fair search takes no other constraint (here "
                    f"{_describe(others[0])}); {mip}"
                )
            if method != "dp":
                return f"{what} (fairness): the search takes it with method='dp' only; {mip}"
            continue
        return f"{what} ({kind}): the search cannot certify it; {mip}"
    return ""


def _describe(c: Any) -> str:
    """One constraint in a message, as :meth:`ResolvedConstraints.describe` words it."""
    if isinstance(c, Fairness):
        return f"fairness({c.notion}, delta={c.delta:g})"
    return str(c.describe())


def _search_constrained(
    dataset: Dataset,
    constraints: Any,
    fairness: Fairness | None,
    *,
    method: str,
    lam: float,
    max_depth: int | None,
    support: np.ndarray | None = None,
    **rest: Any,
) -> Result:
    """``search_tree(..., constraints=...)`` on a Dataset: refuse what the search cannot
    certify, leave forbidden features out, pass the minimum leaf support natively (or one
    fairness to the fair DP), and re-check the returned tree against every constraint.

    ``support``: the rows' weights a leaf's support is measured in when they are not the
    objective's (``dataset.weights``), as :func:`_search_costed` passes the original weights
    beside the reduced rows; a minimum leaf support stated by ``weight=`` is then in their
    units (``share=`` would read the reduced total: the caller states it by weight)."""
    began = time.perf_counter()
    if fairness is not None:
        if isinstance(constraints, ResolvedConstraints):
            raise TypeError(
                "give fairness either as fairness= or inside constraints, not beside a "
                "ResolvedConstraints"
            )
        constraints = [*check_constraints(constraints), fairness]
    resolved = resolve(constraints, dataset)
    refusal = search_refusal(resolved, method)
    if refusal:
        raise ValueError(refusal)
    if resolved.losses is not None:
        return _search_costed(
            dataset, resolved, method=method, lam=lam, max_depth=max_depth, **rest
        )
    floor = resolved.min_leaf_weight
    # the search admits exactly the leaves ResolvedConstraints.violations accepts
    admitted = floor - CONSTRAINT_TOLERANCE * max(1.0, floor) if floor > 0 else 0.0
    total = dataset.total_weight if support is None else float(support.sum())
    if admitted > total:
        return _no_leaf_meets(floor, total, method, began)
    # the tree is re-checked where the leaves' support is measured (the caller re-checks it
    # against the stated problem)
    checked = dataset if support is None else dataclasses.replace(dataset, sample_weight=support)
    if any(isinstance(c, (MaxLeaves, FeatureBudget)) for c in resolved.constraints):
        # search_refusal refuses a budget beside a support measured in other weights
        assert support is None or floor <= 0
        budget = budget_of(resolved, max_depth=max_depth)
        assert not isinstance(budget, str)  # search_refusal accepted it
        costs, bound = budget
        if costs.any():  # else no tree of this depth can exceed the budget
            result = search_budgeted(
                dataset,
                lam=lam,
                max_depth=dataset.n_features if max_depth is None else max_depth,
                split_costs=costs,
                budget=bound,
                min_leaf_weight=floor,
                allowed=~resolved.forbidden,
                time_limit=rest.get("time_limit"),
                memory_limit_mb=rest.get("memory_limit_mb"),
            )
            return _rechecked(result, resolved, dataset, began)
    keep = np.flatnonzero(~resolved.forbidden)
    searched = dataset
    if keep.size < dataset.n_features:
        searched = dataclasses.replace(
            dataset,
            X=dataset.X[:, keep],
            feature_names=tuple(dataset.feature_names[j] for j in keep),
        )
    fair = [c for c in resolved.constraints if isinstance(c, Fairness)]
    result = search_dataset(
        searched,
        method=method,
        lam=lam,
        max_depth=max_depth,
        fairness=fair[0] if fair else None,
        min_leaf_weight=min(1.0, max(0.0, admitted / total)),
        support_weights=support if floor > 0 else None,
        **rest,
    )
    tree = result.model
    if keep.size < dataset.n_features:
        tree = decode_tree(restore_features(encode_tree(tree), keep))
    return _rechecked(dataclasses.replace(result, model=tree), resolved, checked, began)


def _no_leaf_meets(floor: float, total: float, method: str, began: float) -> Result:
    """The answer when a minimum leaf support ``floor`` exceeds the ``total`` weight."""
    return Result(
        model=None,
        objective=float("nan"),
        lower_bound=float("inf"),
        status=Status.INFEASIBLE,
        time=time.perf_counter() - began,
        method=method,
        message=(
            f"min_leaf_support: {floor:g} exceeds the total weight {total:g}, so no leaf can "
            "meet it"
        ),
    )


def _search_costed(
    dataset: Dataset,
    resolved: ResolvedConstraints,
    *,
    method: str,
    lam: float,
    max_depth: int | None,
    **rest: Any,
) -> Result:
    """A cost objective as the plain weighted problem it equals (:func:`odtkit.costs.reduction`,
    which :func:`search_refusal` has accepted): the search runs on relabelled, reweighted rows
    with ``lam`` rescaled to their total weight, and its objective and bound map back by the
    same affine map, ``R = (W' R' + constant) / W``; the tree is re-measured by
    :func:`odtkit.metrics.objective` with the costs.

    A minimum leaf support stays in the dataset's own weights: the search measures a leaf's
    support in them (its support weights) while its objective reads the reduced rows', so the
    reweighting changes no leaf's admissibility."""
    began = time.perf_counter()
    assert resolved.losses is not None  # the caller routes a stated cost here
    reduced = reduction(resolved.losses)
    assert not isinstance(reduced, str)  # search_refusal accepted it
    W, W_reduced = dataset.total_weight, float(reduced.weights.sum())
    sides = [c for c in resolved.side_constraints if not isinstance(c, MinLeafSupport)]
    floor = resolved.min_leaf_weight
    if floor > 0:
        # stated by weight in the original units (a share would read the reduced total)
        sides.append(MinLeafSupport(weight=floor))
        if floor - CONSTRAINT_TOLERANCE * max(1.0, floor) > W:
            return _no_leaf_meets(floor, W, method, began)
    if W_reduced <= 1e-12 * max(1.0, abs(reduced.constant)):
        # every row costs the same whatever it is predicted: a single leaf is optimal (it
        # meets every constraint search_refusal lets through: budgets, forbidden features,
        # a minimum leaf support the total weight reaches)
        tree = Tree.leaf(0)
        value = reduced.constant / W + lam
        return Result(
            model=tree,
            objective=value,
            lower_bound=value,
            status=Status.OPTIMAL,
            time=time.perf_counter() - began,
            method=method,
        )
    plain = dataclasses.replace(dataset, y=reduced.y, sample_weight=reduced.weights)
    scale = W_reduced / W
    if rest.get("upper_bound") is not None:
        rest["upper_bound"] = (rest["upper_bound"] * W - reduced.constant) / W_reduced
    with warnings.catch_warnings():
        # its advice on lam would speak of the rescaled lam, which the caller never gave
        warnings.simplefilter("ignore", TrivialAnswerWarning)
        result = _search_constrained(
            plain,
            sides,
            None,
            method=method,
            lam=lam / scale,
            max_depth=max_depth,
            support=dataset.weights if floor > 0 else None,
            **rest,
        )

    # the affine map back to the cost objective (infinite and missing values stay so)
    offset = reduced.constant / W
    trace = result.trace.copy()
    values = list(trace.columns[1:])  # time first, then values in objective units
    trace[values] = trace[values] * scale + offset
    result = dataclasses.replace(
        result,
        objective=result.objective * scale + offset,
        lower_bound=result.lower_bound * scale + offset,
        trace=trace,
    )
    if result.model is not None:
        measured = metrics.objective(result.model, dataset, lam=lam, costs=resolved)
        if abs(measured - result.objective) > 1e-7 * max(1.0, abs(measured)):
            raise RuntimeError(
                f"the search's objective {result.objective!r} under costs differs from "
                f"odtkit.metrics.objective {measured!r}: this is a bug"
            )
        result = dataclasses.replace(result, objective=measured)
    return _rechecked(result, resolved, dataset, began)


def _rechecked(
    result: Result, resolved: ResolvedConstraints, dataset: Dataset, began: float
) -> Result:
    """``result`` after re-checking its tree against every constraint (a broken one is a bug)."""
    if result.model is None:
        return dataclasses.replace(result, time=time.perf_counter() - began)
    broken = resolved.violations(result.model, dataset)
    if broken:
        raise RuntimeError(
            f"the search returned a tree that breaks {broken[0]} "
            "(odtkit.constraints.ResolvedConstraints.violations): this is a bug"
        )
    stats = {**result.stats, "constraints": resolved.describe()}
    return dataclasses.replace(result, stats=stats, time=time.perf_counter() - began)

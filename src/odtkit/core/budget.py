"""The budgeted search: optimal trees under a split budget, exactly, by the native budgeted DP.

:func:`search_budgeted` minimises ``misclassified/total + lam * leaves`` over the trees of depth
``<= max_depth`` whose splits' summed integer cost stays within a budget, every leaf receiving
at least a minimum weight and only allowed features tested (``core/native/budget_dp.cpp``: a
Pareto front of (resource, objective) per support and depth, children combined by min-plus
convolution). :func:`budget_of` turns resolved :mod:`odtkit.constraints` into that budget:
:class:`~odtkit.constraints.MaxLeaves` is cost 1 per split within ``k - 1``, a
:class:`~odtkit.constraints.FeatureBudget` with ``per="split"`` its costs scaled to integers,
or a one-line refusal naming the constraint the search cannot carry exactly.

Splits, leaves and weights are measured as :meth:`odtkit.constraints.ResolvedConstraints.
violations` measures them (effective splits only, the same tolerance), so a tree this search
returns satisfies the constraints it was given by that one truth.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from fractions import Fraction
from numbers import Integral, Real
from typing import Any

import numpy as np

from odtkit import _native
from odtkit._validation import check_depth, check_lambda, check_switches, weight_exponent
from odtkit.constraints import (
    CONSTRAINT_TOLERANCE,
    FeatureBudget,
    ForbidFeatures,
    MaxLeaves,
    MinLeafSupport,
    ResolvedConstraints,
)
from odtkit.core._binary import charge_elapsed, guarded_answer, verified_result
from odtkit.core._problem import (
    problem_from_arrays,
    restore_features,
    search_config,
)
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset
from odtkit.results import Result, Status

__all__ = ["BUDGET_BOUNDS", "MAX_DENOMINATOR", "budget_of", "search_budgeted"]

#: The parts of :func:`search_budgeted` that ``bounds=`` can switch off (ablations).
BUDGET_BOUNDS = ("presolve", "upper_bound", "depth2", "uncut_shallow")

#: The largest common denominator :func:`budget_of` scales fractional costs by (costs such as
#: 0.5 or 0.1 are exact rationals of a small denominator; others are refused).
MAX_DENOMINATOR = 10**6

#: Budgets above this are refused (the native resources are 64-bit integers).
_MAX_BUDGET = 2**60


def _integer_vector(values: Any, name: str, n: int) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of non-negative integers, got {values!r}")
    arr = arr.astype(np.float64).ravel() if arr.ndim else np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(f"{name} must have one entry per feature ({n}), got {arr.size}")
    if np.isnan(arr).any() or np.isinf(arr).any():
        raise ValueError(f"{name} must be finite, got {values!r}")
    if (arr < 0).any():
        raise ValueError(f"{name} must be >= 0, got {arr[arr < 0][0]!r}")
    if (arr != np.floor(arr)).any() or (arr > _MAX_BUDGET).any():
        raise ValueError(
            f"{name} must be integers <= 2**60 (scale rational costs, or use budget_of), got "
            f"{arr[(arr != np.floor(arr)) | (arr > _MAX_BUDGET)][0]!r}"
        )
    return arr.astype(np.int64)


def _budget_value(budget: object) -> int:
    if isinstance(budget, bool) or not isinstance(budget, Real):
        raise TypeError(f"budget must be a non-negative integer, got {type(budget).__name__}")
    value = float(budget)
    # an infinite budget is refused, not read as 'no budget': floor(inf) raises OverflowError
    if not math.isfinite(value) or value < 0 or value != math.floor(value) or value > _MAX_BUDGET:
        raise ValueError(f"budget must be an integer in [0, 2**60], got {budget!r}")
    return int(budget) if isinstance(budget, Integral) else int(value)


def _allowed_mask(allowed: Any, n: int) -> np.ndarray:
    if allowed is None:
        return np.ones(n, dtype=bool)
    arr = np.asarray(allowed)
    if arr.dtype != bool:
        raise TypeError(f"allowed must be a bool mask over the features, got dtype {arr.dtype}")
    if arr.shape != (n,):
        raise ValueError(f"allowed must have one entry per feature ({n}), got shape {arr.shape}")
    return arr


def _search_features(X: np.ndarray, allowed: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """The features the search must consider, ascending: allowed, not constant, and of each set
    of duplicate or complementary columns the cheapest (then the first). A duplicate or a
    complement splits every support alike (the complement with its sides swapped), so keeping
    the cheapest changes no optimum."""
    candidates: np.ndarray = np.flatnonzero(allowed)
    if X.shape[0] == 0 or candidates.size == 0:
        return candidates
    cols = X[:, candidates]
    # complements alike: flip every column whose first row is 1
    canon = cols ^ cols[0]
    varies = canon.any(axis=0)
    candidates, canon = candidates[varies], canon[:, varies]
    if candidates.size == 0:
        return candidates
    # one group per distinct column (a dict of the packed columns' bytes: np.unique over
    # rows of a structured view took milliseconds on a few thousand rows)
    packed = np.packbits(canon, axis=0).T
    seen: dict[bytes, int] = {}
    group = np.array([seen.setdefault(col.tobytes(), len(seen)) for col in packed])
    order = np.lexsort((candidates, costs[candidates], group))
    first = np.ones(order.size, dtype=bool)
    first[1:] = group[order][1:] != group[order][:-1]
    kept: np.ndarray = np.sort(candidates[order[first]])
    return kept


def search_budgeted(
    dataset: Dataset,
    *,
    lam: float,
    max_depth: int,
    split_costs: Any,
    budget: int,
    min_leaf_weight: float = 0.0,
    allowed: Any = None,
    time_limit: float | None = None,
    memory_limit_mb: float | None = None,
    bounds: Mapping[str, bool] | None = None,
) -> Result:
    """The optimal tree of depth ``<= max_depth`` whose splits cost at most ``budget`` in total.

    Parameters
    ----------
    dataset : Dataset
    lam : float
        Penalty per leaf (the objective is ``misclassified/total + lam * leaves``).
    max_depth : int
        Depth limit (required).
    split_costs : int or array of int, shape (n_features,)
        What one split on each binary feature costs (non-negative integers; one number: every
        feature alike). Only *effective* splits count, both of whose sides receive training
        weight: the only splits a returned tree has.
    budget : int
        The total cost allowed (``>= 0``). ``split_costs=1, budget=k - 1`` is "at most ``k``
        leaves".
    min_leaf_weight : float, default 0
        Every leaf receives at least this much training weight (as
        :class:`~odtkit.constraints.MinLeafSupport` measures it, within
        :data:`~odtkit.constraints.CONSTRAINT_TOLERANCE`).
    allowed : bool array, shape (n_features,), optional
        The features a split may test (default: all).
    time_limit, memory_limit_mb : float, optional
        Limits (``memory_limit_mb=None``: the library's default); a limit, or Ctrl-C, returns
        the best tree found with a valid lower bound and the limit as status.
    bounds : mapping of str to bool, optional
        Switch parts of the search off for ablations (all on by default; none changes the
        optimum), names in :data:`BUDGET_BOUNDS`: ``presolve`` (with ``lam > 0``, the
        unconstrained dp first: its optimum is a lower bound, and its tree is the answer when
        it meets the budget),
        ``upper_bound`` (that tree cut back to the budget is the first incumbent, which prunes
        the budgeted DP), ``depth2`` (each depth-two front at once from one pass of pair
        counts), ``uncut_shallow`` (fronts of remaining depth <= 3 built for every cost, not
        cut at the incumbent: built once for all parents).

    Returns
    -------
    Result
        ``method="dp"``, the tree in the dataset's feature numbering. Status ``infeasible``
        (model None) when no tree meets ``min_leaf_weight`` (the total weight is below it).
    """
    began = time.perf_counter()
    dataset = check_dataset(dataset)
    lam = check_lambda(lam)
    max_depth = check_depth(max_depth, allow_none=False)
    p = dataset.n_features
    costs = _integer_vector(split_costs, "split_costs", p)
    bound = _budget_value(budget)
    if isinstance(min_leaf_weight, bool) or not isinstance(min_leaf_weight, Real):
        raise TypeError(f"min_leaf_weight must be a number, got {type(min_leaf_weight).__name__}")
    floor = float(min_leaf_weight)
    if math.isnan(floor) or math.isinf(floor) or floor < 0:
        raise ValueError(f"min_leaf_weight must be a finite number >= 0, got {min_leaf_weight!r}")
    # a feature costing more than the whole budget is never split on
    mask = _allowed_mask(allowed, p) & (costs <= bound)
    config = search_config(
        lam, time_limit=time_limit, node_limit=None, memory_limit_mb=memory_limit_mb,
        bounds=check_switches(bounds, BUDGET_BOUNDS), max_depth=max_depth,
    )  # fmt: skip
    # the leaf-weight rule of ResolvedConstraints.violations: within the constraint tolerance
    threshold = max(0.0, floor - CONSTRAINT_TOLERANCE * max(1.0, floor)) if floor > 0 else 0.0
    if threshold > dataset.total_weight:
        return _infeasible(began, f"min_leaf_weight {floor:g} exceeds the total weight")

    rows = dataset.weights > 0
    X, y, w = dataset.X[rows], dataset.y[rows], dataset.weights[rows]

    def prepare() -> tuple[Any, np.ndarray]:
        kept = _search_features(X, mask, costs)
        return problem_from_arrays(X[:, kept], y, w, int(dataset.n_classes)), kept

    def run(prepared: tuple[Any, np.ndarray]) -> _native.SearchOutput:
        problem, kept = prepared
        raw = _native.search_budget_dp(
            problem,
            [int(c) for c in costs[kept]],
            [True] * int(kept.size),
            bound,
            float(np.ldexp(threshold, -weight_exponent(w))),  # the Problem's weight units
            charge_elapsed(config, began),
        )
        return raw.replace(
            tree=restore_features(raw.tree, kept),
            stats={**raw.stats, "features_searched": float(kept.size)},
        )

    # a MemoryError or Ctrl-C while preparing: the majority leaf, which meets the minimum
    # weight here (the total weight does) and uses no budget
    raw = guarded_answer(prepare, run, y, w, int(dataset.n_classes), lam)
    if not raw.tree:
        return _infeasible(began, "no tree gives every leaf the minimum weight")
    result = verified_result(raw, dataset, lam=lam, max_depth=max_depth, method="dp", start=began)
    _check_answer(result.model, dataset, costs, bound, threshold, mask, max_depth)
    return result


def _infeasible(began: float, why: str) -> Result:
    return Result(
        model=None,
        objective=math.nan,
        lower_bound=math.inf,
        status=Status.INFEASIBLE,
        time=time.perf_counter() - began,
        method="dp",
        message=f"infeasible: {why}",
    )


def _check_answer(
    tree: Any,
    dataset: Dataset,
    costs: np.ndarray,
    budget: int,
    threshold: float,
    allowed: np.ndarray,
    max_depth: int,
) -> None:
    """Re-measure the returned tree (effective splits, leaf weights, depth); a breach is a bug."""
    from odtkit.constraints import effective_splits

    splits = effective_splits(tree, dataset.X[dataset.weights > 0])
    problems = []
    if tree.depth > max_depth:
        problems.append(f"depth {tree.depth} > max_depth {max_depth}")
    if int(costs[splits].sum()) > budget:
        problems.append(f"split cost {int(costs[splits].sum())} > budget {budget}")
    if splits and not allowed[splits].all():
        problems.append("a split on a feature that is not allowed")
    if threshold > 0:
        leaf = tree.apply(dataset.X)
        support = np.bincount(leaf, weights=dataset.weights, minlength=tree.n_leaves)
        if support.min() < threshold * (1 - 1e-12):
            problems.append(f"a leaf weighs {support.min():.10g} < {threshold:.10g}")
    if problems:
        raise RuntimeError(f"the budgeted search returned a tree with {problems[0]}: this is a bug")


# ------------------------------------------------------------------------------------------
# constraints -> budget


def _rational(value: float) -> Fraction | None:
    q = Fraction(value).limit_denominator(MAX_DENOMINATOR)
    return q if float(q) == value else None


def budget_of(
    resolved: ResolvedConstraints, *, max_depth: int | None = None
) -> tuple[np.ndarray, int] | str:
    """The split budget of ``resolved`` as :func:`search_budgeted` takes it, or a refusal.

    :class:`~odtkit.constraints.MaxLeaves` ``(k)`` is cost 1 per split within ``k - 1``;
    :class:`~odtkit.constraints.FeatureBudget` with ``per="split"`` is its costs (per binary
    feature) and budget scaled by their common denominator (at most :data:`MAX_DENOMINATOR`;
    the bound within :data:`~odtkit.constraints.CONSTRAINT_TOLERANCE`, as the constraint is
    checked). :class:`~odtkit.constraints.MinLeafSupport` and
    :class:`~odtkit.constraints.ForbidFeatures` are carried by the search's other arguments
    (``min_leaf_weight=resolved.min_leaf_weight``, ``allowed=~resolved.forbidden``), so they
    are accepted here. A budget that no tree of depth ``max_depth`` can exceed is dropped; two
    budgets are combined only when one is a multiple of the other (then the tighter one holds
    both); otherwise, and for any other constraint, the answer is one line naming it.

    Returns
    -------
    (split_costs, budget) : int64 array of shape (n_features,) and int
        ``(zeros, 0)`` when no budget is stated.
    str
        Why the budgeted search cannot carry ``resolved`` exactly.
    """
    if not isinstance(resolved, ResolvedConstraints):
        raise TypeError(f"resolved must be a ResolvedConstraints, got {type(resolved).__name__}")
    depth = None if max_depth is None else check_depth(max_depth, allow_none=False)
    allowed = ~resolved.forbidden
    budgets: list[tuple[str, np.ndarray, int]] = []
    blocks = {id(b.constraint): b for b in resolved.blocks}
    for c in resolved.constraints:
        if isinstance(c, (MinLeafSupport, ForbidFeatures)):
            continue
        if not isinstance(c, (MaxLeaves, FeatureBudget)) or (
            isinstance(c, FeatureBudget) and c.per != "split"
        ):
            describe = c.describe() if hasattr(c, "describe") else repr(c)
            return f"{describe}: the budgeted search carries only split budgets exactly"
        block = blocks[id(c)]
        converted = _block_budget(block, allowed)
        if isinstance(converted, str):
            return converted
        costs, bound = converted
        if depth is not None and (2**depth - 1) * int(costs[allowed].max(initial=0)) <= bound:
            continue  # no tree of this depth can exceed it
        if not costs[allowed].any():
            continue
        budgets.append((block.name, costs, bound))
    n = resolved.n_features
    if not budgets:
        return np.zeros(n, dtype=np.int64), 0
    # one resource: the tightest of budgets that are multiples of one cost vector
    base = None
    tightest = 0
    for name, costs, bound in budgets:
        g = math.gcd(*(int(v) for v in costs[allowed]))
        unit = np.where(allowed, costs // g, 0)
        if base is None:
            base, tightest = unit, bound // g
        elif np.array_equal(unit, base):
            tightest = min(tightest, bound // g)
        else:
            return (
                f"{name}: the budgeted search carries one split budget, and "
                f"{', '.join(b[0] for b in budgets)} are not multiples of one another"
            )
    assert base is not None
    return base.astype(np.int64), int(tightest)


def _block_budget(block: Any, allowed: np.ndarray) -> tuple[np.ndarray, int] | str:
    """Integer costs (per feature, 0 where not allowed) and budget of one split-budget row."""
    per_leaf = float(block.per_leaf[0])
    upper = float(block.upper[0])
    # a * leaves + c . splits <= U with leaves = splits + 1: (a + c_j) per split within U - a
    cost = per_leaf + block.per_split[0]
    fractions: list[Fraction] = []
    for value in np.unique(cost[allowed]):
        q = _rational(float(value))
        if q is None:
            return (
                f"{block.name}: cost {float(value)!r} is not a rational of denominator <= "
                f"{MAX_DENOMINATOR}, so the budgeted search cannot count it exactly"
            )
        fractions.append(q)
    scale = math.lcm(1, *(q.denominator for q in fractions))
    if scale > MAX_DENOMINATOR:
        return f"{block.name}: the costs' common denominator {scale} exceeds {MAX_DENOMINATOR}"
    if max(fractions, default=Fraction(0)) * scale > _MAX_BUDGET:
        return f"{block.name}: a cost scaled to integers exceeds 2**60"
    lookup = {float(v): q for v, q in zip(np.unique(cost[allowed]), fractions, strict=True)}
    costs = np.zeros(cost.size, dtype=np.int64)
    for j in np.flatnonzero(allowed):
        costs[j] = int(lookup[float(cost[j])] * scale)
    # the row holds when its value is within the tolerance ResolvedConstraints.violations uses
    limit = upper + CONSTRAINT_TOLERANCE * max(1.0, abs(upper))
    bound = math.floor((Fraction(limit) - Fraction(per_leaf)) * scale)
    if bound < 0:
        return f"{block.name}: even a single leaf breaks it"
    return costs, min(bound, _MAX_BUDGET)

"""The engine of :func:`odtkit.rashomon`: the exact Rashomon set, built natively.

``build_rashomon`` certifies the optimum OPT (in the set's own memo; with side constraints, or
``node_limit``, or a certification a limit stopped, with the native dp over the same space),
then builds, in ``core/native/rashomon.cpp``, the memo of sub-problems that can still be part
of a tree within the bound, each with the exact number of its trees per (misclassified weight,
leaves) key. That is enough to count the set, address its i-th tree in objective order, and
count the trees that avoid a feature, all without listing it (docs/rashomon.md).

Counts and indices cross the binding as hexadecimal text and come back as Python ints, so
they are exact at any size.

Side constraints (:mod:`odtkit.constraints`) restrict the set to the trees that meet them, with
OPT the constrained optimum the search certifies: :func:`rashomon_refusal` is the one rule for
which ones the set takes (a minimum leaf support, forbidden features, a split budget).
"""

from __future__ import annotations

import bisect
import dataclasses
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from odtkit import _native
from odtkit._validation import (
    check_depth,
    check_lambda,
    check_nonnegative_number,
    check_positive_number,
)
from odtkit.constraints import (
    CONSTRAINT_TOLERANCE,
    FeatureBudget,
    ForbidFeatures,
    MaxLeaves,
    MinLeafSupport,
    ResolvedConstraints,
    resolve,
)
from odtkit.core._problem import build_problem, decode_tree, encode_tree, search_config
from odtkit.core.budget import budget_of
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset
from odtkit.fairness import Fairness
from odtkit.tree import Tree

__all__ = [
    "LEAF_RULES",
    "PAD",
    "RashomonCore",
    "RashomonProblem",
    "build_rashomon",
    "count_upper_bound",
    "rashomon_refusal",
]

#: The leaf labels a tree of the set may use: any class, or only a majority class of the leaf.
LEAF_RULES = ("any", "majority")
#: The padding of :meth:`RashomonCore.codes` rows.
PAD = int(np.iinfo(np.int32).min)
#: Trees decoded per native call when listing many.
_BATCH = 4096


@dataclasses.dataclass(frozen=True)
class RashomonProblem:
    """One validated Rashomon-set problem (docs/rashomon.md §1): the trees of depth <=
    ``max_depth`` whose objective ``misclassified/W + lam * leaves`` is within ``epsilon`` of
    the optimum (relative, or additive with ``absolute``), each leaf predicting any class or
    (``leaves="majority"``) only a majority class of its rows. ``constraints`` (with
    ``sources``, as :func:`odtkit.constraints.resolve` takes them) restrict the trees to those
    meeting every one, OPT then being the constrained optimum; after checking, the field holds
    the :class:`~odtkit.constraints.ResolvedConstraints` (None when none is stated) and a
    constraint the set cannot take is refused (:func:`rashomon_refusal`).

    :func:`odtkit.rashomon`, :func:`build_rashomon` and the brute-force oracle
    (:func:`odtkit.testing.brute_force_rashomon_set`) read their problem from it, so it is
    checked one way; a ``max_depth`` above the number of features is clamped to it (the same
    space, see :func:`odtkit._validation.check_depth`).
    """

    dataset: Dataset
    _: dataclasses.KW_ONLY
    lam: float
    max_depth: int | None = None
    epsilon: float = 0.05
    absolute: bool = False
    leaves: str = "any"
    constraints: Any = None
    sources: Sequence[str] | None = None

    def __post_init__(self) -> None:
        dataset = check_dataset(self.dataset)
        if not isinstance(self.absolute, (bool, np.bool_)):
            raise TypeError(f"absolute must be a bool, got {type(self.absolute).__name__}")
        if not isinstance(self.leaves, str):
            raise TypeError(f"leaves must be 'any' or 'majority', got {type(self.leaves).__name__}")
        if self.leaves not in LEAF_RULES:
            raise ValueError(f"leaves must be 'any' or 'majority', got {self.leaves!r}")
        checked = {
            "dataset": dataset,
            "lam": check_lambda(self.lam),
            "max_depth": check_depth(self.max_depth, n_features=dataset.n_features),
            "epsilon": check_nonnegative_number(self.epsilon, "epsilon"),
            "absolute": bool(self.absolute),
        }
        resolved = (
            None
            if self.constraints is None
            else resolve(self.constraints, dataset, sources=self.sources)
        )
        if resolved is not None:
            refusal = rashomon_refusal(resolved)
            if refusal:
                raise ValueError(refusal)
        checked["constraints"] = resolved if resolved else None
        for name, value in checked.items():
            object.__setattr__(self, name, value)


def rashomon_refusal(resolved: ResolvedConstraints) -> str:
    """Why the Rashomon set cannot take ``resolved`` exactly ("" when it can).

    The set takes :class:`~odtkit.constraints.MinLeafSupport` (every leaf, natively),
    :class:`~odtkit.constraints.ForbidFeatures` (the features are never split on) and the split
    budgets :class:`~odtkit.constraints.MaxLeaves` and
    :class:`~odtkit.constraints.FeatureBudget` with ``per="split"`` (counted per cost used,
    one resource as :func:`~odtkit.core.budget.budget_of` combines them, as the search that
    certifies OPT does). Anything else (fairness, required features, rates, predictions,
    a per-feature budget) is refused in one line naming it, never ignored.
    """
    taken = "it takes min_leaf_support, forbid_features, max_leaves and feature_budget "
    taken += "with per='split'"
    for c in resolved.constraints:
        if isinstance(c, (MinLeafSupport, ForbidFeatures, MaxLeaves)):
            continue
        if isinstance(c, FeatureBudget) and c.per == "split":
            continue
        if isinstance(c, Fairness):
            what, kind = f"fairness({c.notion}, delta={c.delta:g})", "fairness"
        else:
            what, kind = str(c.describe()), str(c.kind)
        return f"{what} ({kind}): the Rashomon set cannot take it; {taken}"
    # without the depth, as search_refusal asks: the search certifying OPT must take it too
    budget = budget_of(resolved)
    if isinstance(budget, str):
        return f"{budget} (the Rashomon set counts one split budget, as the search does)"
    return ""


@dataclasses.dataclass(eq=False)
class RashomonCore:
    """The native Rashomon set of one dataset and bound; see :func:`build_rashomon`.

    Its public attributes and methods are all :class:`odtkit.rashomon.RashomonSet` reads: any
    object that has them can stand in for it (the tests' doubles over the brute-force oracle).
    """

    dataset: Dataset
    lam: float
    max_depth: int | None
    epsilon: float
    absolute: bool
    leaves: str
    optimum: float
    optimal_tree: Tree | None
    lower_bound: float
    bound: float
    complete: bool
    status: str
    stats: dict[str, Any]
    _native_set: Any = dataclasses.field(repr=False)
    #: Each key's objective and the running count at its end, in set order; None until first
    #: needed when the count came without them (a complete count-only set: the native root
    #: pairs its keys only when asked, see :meth:`_keys`).
    _key_objective: np.ndarray | None = dataclasses.field(repr=False)
    _key_ends: list[int] | None = dataclasses.field(repr=False)
    #: The side constraints every tree of the set meets (None: none).
    constraints: ResolvedConstraints | None = None
    #: An upper bound on the number of trees of the full set (the count itself when the set is
    #: complete; see :func:`count_upper_bound` for a partial one).
    count_upper_bound: int | None = None
    #: Pre-order codes of trees a partial native build had not reached but that are known
    #: members (the optimal tree): they come first, before the native trees.
    _extra: list[list[int]] = dataclasses.field(default_factory=list, repr=False)
    #: Built to count only (``build_rashomon(count_only=True)``): the counts and the histogram
    #: are there, the trees are not.
    count_only: bool = False
    #: The count when the key table waits (``_key_ends`` None).
    _count: int = 0

    def _keys(self) -> tuple[np.ndarray, list[int]]:
        """The key table (objective and running count of each key), read from the native
        histogram at the first need when the build counted without it."""
        if self._key_objective is None or self._key_ends is None:
            wrong, n_leaves, _, hex_counts = self._native_set.histogram()
            self._key_objective = _objectives(wrong, n_leaves, self._native_set, self.lam)
            self._key_ends = _running([int(c, 16) for c in hex_counts])
            _check_first_key(self.complete, self._key_objective, self.optimum)
            if (self._key_ends[-1] if self._key_ends else 0) != self._count:
                raise RuntimeError(
                    "internal error: the Rashomon set's histogram disagrees with its count; "
                    "please report this"
                )
        return self._key_objective, self._key_ends

    def _need_trees(self, what: str) -> None:
        if self.count_only:
            raise ValueError(
                f"{what} needs the set's trees, but it was built with count_only=True (counts "
                "and the histogram only): build it again without count_only to list trees"
            )

    def count(self) -> int:
        """The exact number of trees in the set (a Python int of any size)."""
        if self._key_ends is None:
            return self._count
        return self._key_ends[-1] if self._key_ends else 0

    def index_of(self, code: Sequence[int]) -> int | None:
        """The index of the tree with pre-order ``code`` in the set, None when it holds no
        such tree; found by walking the tree's own path through the native memo (never by
        listing the set)."""
        self._need_trees("membership of a partial set")
        code = [int(v) for v in code]
        for i, extra in enumerate(self._extra):
            if extra == code:
                return i
        found = self._native_set.rank(code) if hasattr(self._native_set, "rank") else ""
        return None if not found else int(found, 16) + len(self._extra)

    def histogram(self) -> pd.DataFrame:
        """One row per exact (misclassified weight, leaves) key, in objective order."""
        key_objective, _ = self._keys()
        wrong, leaves, _, counts = self._native_set.histogram()
        scale = self.dataset.total_weight / self._native_set.total_weight
        # under a split budget the native keys also tell the cost used: the keys of one
        # (misclassified, leaves) are adjacent (the same value) and are summed here
        rows: list[list[Any]] = []
        native_objective = key_objective[len(self._extra) :]
        for w, n, objective, c in zip(wrong, leaves, native_objective, counts, strict=True):
            if rows and rows[-1][0] == w and rows[-1][1] == n:
                rows[-1][3] += int(c, 16)
            else:
                rows.append([w, n, objective, int(c, 16)])
        for code in self._extra:  # a known member the partial build had not reached
            w, n = _key_of(code, self.dataset)
            w = w / scale
            same = [r for r in rows if r[1] == n and abs(r[0] - w) <= 1e-9 * max(1.0, abs(w))]
            if same:
                same[0][3] += 1
            else:
                # first, as its tree is (its objective is OPT, the least of the set)
                rows.insert(0, [w, n, w / self._native_set.total_weight + self.lam * n, 1])
        return pd.DataFrame(
            {
                "misclassified": np.array([r[0] for r in rows], dtype=np.float64) * scale,
                "leaves": np.array([r[1] for r in rows], dtype=np.int64),
                "objective": np.array([r[2] for r in rows], dtype=np.float64),
                "count": pd.Series([r[3] for r in rows], dtype=object),
            }
        )

    def _check_range(self, start: int, stop: int) -> tuple[int, int]:
        total = self.count()
        start, stop = int(start), int(stop)
        if not 0 <= start <= stop <= total:
            raise IndexError(f"tree range [{start}, {stop}) is outside the set of {total} trees")
        return start, stop

    def codes(self, start: int, stop: int) -> np.ndarray:
        """Pre-order codes of trees ``start .. stop - 1``, one row each, padded with :data:`PAD`."""
        self._need_trees("reading trees")
        start, stop = self._check_range(start, stop)
        n_extra = len(self._extra)
        batches = [
            np.asarray(self._extra[i], dtype=np.int32)[None, :]
            for i in range(start, min(stop, n_extra))
        ]
        start, stop = max(start, n_extra) - n_extra, max(stop, n_extra) - n_extra
        batches += [
            self._native_set.trees(format(first, "x"), min(_BATCH, stop - first), PAD)[0]
            for first in range(start, stop, _BATCH)
        ]
        stop = start + sum(b.shape[0] for b in batches)
        width = max((b.shape[1] for b in batches), default=1)
        out = np.full((stop - start, width), PAD, dtype=np.int32)
        row = 0
        for batch in batches:
            out[row : row + batch.shape[0], : batch.shape[1]] = batch
            row += batch.shape[0]
        return out

    def objectives(self, start: int, stop: int) -> np.ndarray:
        """The objectives of trees ``start .. stop - 1`` (from their keys; no tree is listed)."""
        start, stop = self._check_range(start, stop)
        key_objective, key_ends = self._keys()
        # the key of tree i is the first key whose cumulative count exceeds i
        first = bisect.bisect_right(key_ends, start)
        out = np.empty(stop - start, dtype=np.float64)
        position, key = start, first
        while position < stop:
            end = min(stop, key_ends[key])
            out[position - start : end - start] = key_objective[key]
            position, key = end, key + 1
        return out

    def tree(self, index: int) -> Tree:
        """The ``index``-th tree in objective order."""
        code = self.codes(int(index), int(index) + 1)[0]
        return decode_tree(code[code != PAD].tolist())

    def count_without(self, feature: int) -> int:
        """The number of trees in the set that never split on ``feature``."""
        feature = int(feature)
        if not 0 <= feature < self.dataset.n_features:
            raise IndexError(f"feature must be in 0..{self.dataset.n_features - 1}, got {feature}")
        self._need_trees("count_without")
        extra = sum(1 for code in self._extra if feature not in code)
        return int(self._native_set.count_without(feature), 16) + extra


def _key_of(code: Sequence[int], dataset: Dataset) -> tuple[float, int]:
    """(misclassified weight, leaves) of the tree with pre-order ``code`` on ``dataset``."""
    tree = decode_tree(list(code))
    wrong = tree.predict(dataset.X) != dataset.y
    return float(dataset.weights[wrong].sum()), int(tree.n_leaves)


def count_upper_bound(problem: RashomonProblem, bound: float) -> int:
    """An upper bound on the number of trees with objective ``<= bound`` (+ 1e-9) in the
    problem's space, without building anything: the number of labelled trees of depth
    ``<= max_depth`` with at most ``L`` leaves, every split on a feature its path has not used
    (a repeat leaves a side empty: not admissible), where ``L`` is the least of ``bound / lam``
    (every leaf costs ``lam``), ``2 ** max_depth`` and the number of distinct rows of positive
    weight (every leaf of an admissible tree holds one). Constraints and the data only remove
    trees, so it over-counts; it is what a partial set reports as the most it can miss.
    """
    data = problem.dataset
    K = data.n_classes
    p = data.n_features
    if problem.constraints is not None and problem.constraints.forbidden.any():
        p -= int(problem.constraints.forbidden.sum())
    depth = p if problem.max_depth is None else min(problem.max_depth, p)
    positive = data.X[data.weights > 0]
    limit = int(np.unique(positive, axis=0).shape[0]) if positive.size else 1
    if problem.lam > 0:
        limit = min(limit, int(np.floor((bound + 1e-9) / problem.lam + 1e-9)))
    if depth < 63:
        limit = min(limit, 1 << depth)
    limit = max(limit, 1)
    if limit <= 128:
        # trees[l]: trees of the remaining depth with exactly l leaves; a level `r` above the
        # bottom offers the features its path has not used (p - (depth - r))
        trees = [0, K] + [0] * (limit - 1)
        for r in range(1, depth + 1):
            choices = max(p - (depth - r), 0)
            nxt = [0, K] + [0] * (limit - 1)
            for n in range(2, limit + 1):
                nxt[n] = choices * sum(trees[a] * trees[n - a] for a in range(1, n))
            trees = nxt
        return sum(trees)
    # Catalan(l - 1) <= 4 ** (l - 1) shapes, p ** (l - 1) feature choices, K ** l labels
    return sum((4 * p) ** (n - 1) * K**n for n in range(1, limit + 1))


def build_rashomon(
    problem: RashomonProblem,
    *,
    time_limit: float | None = None,
    memory_limit_mb: float | None = None,
    progress: bool | None = None,
    node_limit: int | None = None,
    count_only: bool = False,
) -> RashomonCore:
    """Certify OPT, then build every tree with objective <= the bound.

    The set is ``{T : R(T) <= bound + 1e-9}`` over trees of depth <= ``max_depth`` whose splits
    all send weight to both sides, ``bound = (1 + epsilon) * OPT`` (``OPT + epsilon`` with
    ``absolute``). ``time_limit`` and ``memory_limit_mb`` cover both steps; a limit or Ctrl-C
    leaves ``complete`` False and a set whose every member is genuine. Without a certified
    OPT the bound is taken from the best tree found, so it may be larger than the stated one.
    ``node_limit`` stops the build (not the dp) after that many sub-problem steps: a
    deterministic stopping point, for tests.

    Without side constraints, ``node_limit`` or ``progress``, OPT is certified in the build's
    own memo (``rashomon_certify``: every sub-problem solved to the cap the build will ask for,
    an optimal tree read from the memo and scored by :func:`odtkit.metrics.objective`), and
    the build runs in that memo (docs/rashomon.md §4.1). If a limit or Ctrl-C stops that
    certification, the dp certifies OPT (or gives its incumbent) with the time left, and the
    set is built as with constraints. ``count_only`` keeps the counts (``count``,
    ``histogram``) and not the trees: at a large epsilon most of the build's memory and time
    is the trees' blocks (docs/rashomon.md §4); reading a tree, membership of a partial set and
    ``count_without`` then raise ValueError. A stopped count-only build adds the optimal tree
    only when no key of its histogram has the tree's (misclassified, leaves): with the key
    there it cannot tell whether the tree is among that key's trees.

    A stopped set holds every tree its build reached plus the optimal tree (certified, or the
    incumbent the bound came from) when the build had not reached it, first; ``count()`` is the
    exact number of those and ``count_upper_bound`` bounds the full set's size from above.

    With ``problem.constraints`` the set holds only the trees meeting them and OPT is the
    constrained optimum, certified by :func:`~odtkit.core.search.search_tree` with the same
    constraints. Constraints no tree meets give an empty, complete set with status
    ``"infeasible"``, ``optimum`` and ``bound`` infinite and the reason in ``stats["message"]``.
    """
    from odtkit.core.search import SearchOptions, TrivialAnswerWarning, search_tree

    if not isinstance(problem, RashomonProblem):
        raise TypeError(f"problem must be a RashomonProblem, got {type(problem).__name__}")
    dataset, lam, max_depth = problem.dataset, problem.lam, problem.max_depth
    epsilon, absolute, leaves = problem.epsilon, problem.absolute, problem.leaves
    resolved = problem.constraints
    time_limit = check_positive_number(time_limit, "time_limit")
    memory_limit_mb = check_positive_number(memory_limit_mb, "memory_limit_mb")

    started = time.perf_counter()
    native_problem = build_problem(dataset)
    max_depth_code = -1 if max_depth is None else max_depth
    optimum: Any = None
    native_set: Any = None
    interrupted = False
    if resolved is None and node_limit is None and not progress:
        # OPT certified in the build's own memo, every sub-problem solved to what the build
        # will ask (docs/rashomon.md §4.1): no separate dp search solving them all again
        native_set = _native.rashomon_certify(
            native_problem,
            search_config(
                lam,
                time_limit=time_limit,
                node_limit=None,
                memory_limit_mb=memory_limit_mb,
                bounds={},
                max_depth=max_depth_code,
            ),
            float(epsilon),
            bool(absolute),
            leaves == "majority",
            count_only=bool(count_only),
        )
        if native_set.certified:
            optimum = _certified(native_set, dataset, lam)
        else:
            # a limit stopped it: the dp's anytime search gives the incumbent and the bound
            interrupted = native_set.status == "interrupted"
            native_set = None
    if optimum is None:
        spent = time.perf_counter() - started
        with warnings.catch_warnings():
            # the set says more about a trivial optimum than the warning does
            warnings.simplefilter("ignore", TrivialAnswerWarning)
            optimum = search_tree(
                dataset,
                lam=lam,
                max_depth=max_depth,
                method="dp",
                # after a Ctrl-C (or a limit) in the certification, what time is left
                time_limit=1e-3
                if interrupted
                else (None if time_limit is None else max(time_limit - spent, 1e-3)),
                memory_limit_mb=memory_limit_mb,
                options=SearchOptions(progress=progress),
                constraints=resolved,
            )
    dp_seconds = time.perf_counter() - started
    if optimum.status == "infeasible":
        return _infeasible(problem, optimum.message, time.perf_counter() - started)
    certified = optimum.status == "optimal"
    opt = float(optimum.objective)
    bound = opt + epsilon if absolute else opt * (1.0 + epsilon)
    status_of_search = "interrupted" if interrupted else str(optimum.status)

    remaining = None if time_limit is None else max(time_limit - dp_seconds, 1e-3)
    config = search_config(
        lam,
        time_limit=remaining,
        # after a Ctrl-C the user wants the answer now: list only what one step finds
        node_limit=1 if status_of_search == "interrupted" else node_limit,
        memory_limit_mb=memory_limit_mb,
        bounds={},
        max_depth=max_depth_code,
    )
    if native_set is not None:
        _native.rashomon_build_certified(native_set, native_problem, config, bound)
    else:
        rules = _native_rules(resolved, max_depth)
        config.min_leaf_weight = rules.pop("min_leaf_weight")
        native_set = _native.rashomon_build(
            native_problem,
            config,
            bound,
            leaves == "majority",
            **rules,
            count_only=bool(count_only),
        )
    complete = bool(native_set.complete) and certified
    status = status_of_search if not certified else str(native_set.status)
    extra: list[list[int]] = []
    key_objective: np.ndarray | None = None
    ends: list[int] | None = None
    if count_only and complete:
        # the count needs no histogram (the native root counts its pairs without their keys):
        # the key table is read at its first use (RashomonCore._keys)
        found = int(native_set.count(), 16)
    else:
        wrong, n_leaves, _, hex_counts = native_set.histogram()
        counts = [int(c, 16) for c in hex_counts]
        key_objective = _objectives(wrong, n_leaves, native_set, lam)
        # A partial build lists what it reached: the optimal tree (a member: its objective is
        # OPT, certified or the incumbent the bound came from) joins it when the build had not
        # reached it, so a stopped set never lacks the one tree the search already knows.
        if not native_set.complete and optimum.model is not None:
            code = encode_tree(optimum.model)
            if count_only:
                # no blocks to look the tree up in: it was surely not reached when no key of
                # the histogram has its (misclassified, leaves); otherwise it is not added (it
                # may be counted already)
                w, n = _key_of(code, dataset)
                w *= native_set.total_weight / dataset.total_weight
                reached = any(
                    ell == n and abs(m - w) <= 1e-9 * max(1.0, abs(w))
                    for m, ell in zip(wrong, n_leaves, strict=True)
                )
            else:
                reached = bool(native_set.rank(code))
            if not reached and optimum.objective <= bound + 1e-9:
                extra.append(code)
        if extra:
            w, n = _key_of(extra[0], dataset)
            key_objective = np.concatenate([[w / dataset.total_weight + lam * n], key_objective])
            counts = [1, *counts]
        ends = _running(counts)
        found = ends[-1] if ends else 0
        _check_first_key(complete, key_objective, opt)
    upper = found if native_set.complete else max(found, count_upper_bound(problem, bound))
    return RashomonCore(
        dataset=dataset,
        lam=lam,
        max_depth=max_depth,
        epsilon=epsilon,
        absolute=absolute,
        leaves=leaves,
        optimum=opt,
        optimal_tree=optimum.model,
        lower_bound=float(optimum.lower_bound),
        bound=bound,
        complete=complete,
        status=status,
        stats={
            "subproblems": int(native_set.n_subproblems),
            "seconds": time.perf_counter() - started,
            "dp_seconds": dp_seconds,
            "build_seconds": float(native_set.seconds),
            "peak_memory_mb": max(float(native_set.peak_memory_mb), optimum.peak_memory_mb),
            "certified": certified,
            "count_upper_bound": upper,
        },
        _native_set=native_set,
        _key_objective=key_objective,
        _key_ends=ends,
        constraints=resolved,
        count_upper_bound=upper,
        _extra=extra,
        count_only=bool(count_only),
        _count=found,
    )


@dataclasses.dataclass(frozen=True)
class _Certified:
    """What :func:`build_rashomon` reads of an optimum certified by the set itself (the
    fields of a search result it reads otherwise)."""

    model: Tree
    objective: float
    lower_bound: float
    peak_memory_mb: float
    status: str = "optimal"


def _certified(native_set: Any, dataset: Dataset, lam: float) -> _Certified:
    """The optimum of a set that certified it (``rashomon_certify``): its optimal tree, scored
    by :func:`odtkit.metrics.objective` as the search's result is."""
    from odtkit import metrics

    tree = decode_tree(list(native_set.optimal_code))
    objective = float(metrics.objective(tree, dataset, lam=lam))
    return _Certified(
        model=tree,
        objective=objective,
        lower_bound=objective,
        peak_memory_mb=float(native_set.peak_memory_mb),
    )


def _objectives(
    wrong: Sequence[float], n_leaves: Sequence[int], native_set: Any, lam: float
) -> np.ndarray:
    """The objective of each native key (misclassified in the native set's weight)."""
    total = float(native_set.total_weight)
    return np.asarray(wrong, dtype=np.float64) / total + lam * np.asarray(
        n_leaves, dtype=np.float64
    )


def _running(counts: Sequence[int]) -> list[int]:
    """The running count at the end of each key."""
    ends: list[int] = []
    total = 0
    for c in counts:
        total += c
        ends.append(total)
    return ends


def _check_first_key(complete: bool, key_objective: np.ndarray, opt: float) -> None:
    if complete and key_objective.size and abs(key_objective[0] - opt) > 1e-9:
        raise RuntimeError(
            f"internal error: the Rashomon set's best tree scores {key_objective[0]!r} but the "
            f"dp certified {opt!r}; please report this"
        )


def _native_rules(resolved: ResolvedConstraints | None, max_depth: int | None) -> dict[str, Any]:
    """The native build's constraint arguments: ``min_leaf_weight`` (a share of the total, as
    the search admits a leaf: :meth:`ResolvedConstraints.violations` within its tolerance),
    ``allowed`` (1 per feature that may be split on), ``split_costs`` and ``budget`` (the one
    integer split budget of :func:`~odtkit.core.budget.budget_of`; -1: none)."""
    if resolved is None:
        return {"min_leaf_weight": 0.0, "allowed": [], "split_costs": [], "budget": -1}
    floor = resolved.min_leaf_weight
    admitted = floor - CONSTRAINT_TOLERANCE * max(1.0, floor) if floor > 0 else 0.0
    share = min(1.0, max(0.0, admitted / resolved.total_weight))
    allowed = (~resolved.forbidden).astype(int).tolist() if resolved.forbidden.any() else []
    budget = budget_of(resolved, max_depth=max_depth)
    assert not isinstance(budget, str)  # rashomon_refusal accepted it
    costs, bound = budget
    if not costs.any():  # no budget, or one no tree of this depth can exceed
        return {"min_leaf_weight": share, "allowed": allowed, "split_costs": [], "budget": -1}
    return {
        "min_leaf_weight": share,
        "allowed": allowed,
        "split_costs": costs.astype(int).tolist(),
        "budget": int(bound),
    }


class _NoTrees:
    """The native set's reading of an empty set (constraints no tree meets)."""

    complete = True
    status = "infeasible"
    n_subproblems = 0
    seconds = 0.0
    peak_memory_mb = 0.0

    def __init__(self, total_weight: float) -> None:
        self.total_weight = total_weight

    def histogram(self) -> tuple[list[float], list[int], list[float], list[str]]:
        return [], [], [], []

    def count_without(self, feature: int) -> str:
        return "0"

    def rank(self, code: list[int]) -> str:
        return ""


def _infeasible(problem: RashomonProblem, message: str, seconds: float) -> RashomonCore:
    """The empty set of constraints no tree meets (the search's infeasible answer)."""
    inf = float("inf")
    return RashomonCore(
        dataset=problem.dataset,
        lam=problem.lam,
        max_depth=problem.max_depth,
        epsilon=problem.epsilon,
        absolute=problem.absolute,
        leaves=problem.leaves,
        optimum=inf,
        optimal_tree=None,
        lower_bound=inf,
        bound=inf,
        complete=True,
        status="infeasible",
        stats={
            "subproblems": 0,
            "seconds": seconds,
            "dp_seconds": seconds,
            "build_seconds": 0.0,
            "peak_memory_mb": 0.0,
            "certified": True,
            "message": message,
        },
        _native_set=_NoTrees(problem.dataset.total_weight),
        _key_objective=np.empty(0),
        _key_ends=[],
        constraints=problem.constraints,
        count_upper_bound=0,
    )

"""``regularization_path``: every optimal tree over a whole range of the leaf penalty λ.

OPT(λ) = min_T (misclassified(T)/n + λ·leaves(T)) is the lower envelope of one line per tree
(intercept: its loss, slope: its leaf count), so it is piecewise linear and concave in λ, with
finitely many breakpoints. The path is found exactly by an Eisner–Severance search over λ on
the native dp (``search_tree(method="dp")``), with two savings:

* **candidate lines.** Every tree the dp returns brings the cheapest of its prunings for each
  leaf count (collapsing internal nodes keeps the depth limit), so the envelope of the known
  trees is usually the true path before it is proven; each solve then *confirms* a breakpoint of
  that envelope instead of discovering lines one by one;
* **warm starts.** A solve at a breakpoint λ* gets the envelope's value there as its
  ``upper_bound``: trees attaining it are known. The dp's bounds are already
  tight there, so this saves little (tic-tac-toe, depth 5: ~4 % fewer sub-problems).

The invariant: an interval [λa, λb] whose endpoints are certified (the dp proved the optimum
there). The envelope E of the known lines is an upper bound on OPT; if OPT = E at every
breakpoint of E inside the interval, concavity gives OPT = E on the whole interval (OPT lies
above every chord and E is linear between its breakpoints). A solve at an envelope breakpoint
either confirms it or returns a strictly better tree (a new line, certified at λ*); both split
the interval at λ*. Above λ = loss(single leaf) the single leaf is optimal (any split costs
≥ 2λ), so no solve is needed there.

On a time limit or Ctrl-C the intervals not yet proven are returned as the envelope of the
known trees, flagged ``certified=False``, with the chord between their certified endpoints as a
valid lower bound (OPT is concave).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from odtkit import _native, metrics
from odtkit._limits import stop_on_interrupt
from odtkit._progress import Progress
from odtkit._validation import (
    check_depth,
    check_lambda,
    check_positive_number,
    weight_exponent,
)
from odtkit.core._problem import build_problem, decode_tree, native_status, search_config
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset, unique_rows
from odtkit.results import Status
from odtkit.tree import Tree, majority_label

__all__ = ["PathSegment", "RegularizationPath", "regularization_path"]

#: Columns of :meth:`RegularizationPath.to_frame`.
PATH_COLUMNS = (
    "lam_lo",
    "lam_hi",
    "n_leaves",
    "misclassified",
    "loss",
    "accuracy",
    "certified",
    "lower_bound_gap",
)


@dataclass(frozen=True)
class PathSegment:
    """One piece of the path: ``tree`` is optimal for every λ in [``lam_lo``, ``lam_hi``].

    Attributes
    ----------
    lam_lo, lam_hi : float
        The λ interval (``lam_hi = inf`` for the last piece, the single leaf).
    tree : Tree
        An optimal tree on the interval (one of them when several tie).
    n_leaves : int
    misclassified : float
        Weighted training mistakes of ``tree`` (re-evaluated by :mod:`odtkit.metrics`).
    loss : float
        ``misclassified / total weight``; the objective at λ is ``loss + λ * n_leaves``.
    certified : bool
        False when a limit stopped the search before ``tree`` was proven optimal here: it is
        then the best known tree, and ``lower_bound_gap`` bounds how far from optimal it may be.
    lower_bound_gap : float
        Largest ``objective - lower bound`` over the interval (0 when certified).
    """

    lam_lo: float
    lam_hi: float
    tree: Tree
    n_leaves: int
    misclassified: float
    loss: float
    certified: bool
    lower_bound_gap: float = 0.0

    def objective(self, lam: float) -> float:
        """``loss + lam * n_leaves``."""
        return self.loss + lam * self.n_leaves


@dataclass(frozen=True, eq=False)
class RegularizationPath:
    """The optimal trees of ``misclassified/n + λ·leaves`` for every λ >= ``lam_min``.

    Attributes
    ----------
    segments : tuple of PathSegment
        In increasing λ (so decreasing leaf count), contiguous, covering [``lam_min``, ∞).
    lam_min : float
    max_depth : int or None
    status : Status
        ``OPTIMAL`` when every segment is certified, else the limit that stopped the search.
    time : float
        Wall-clock seconds of the whole call.
    n_solves : int
        Native dp solves made (the lam_min solve, then one per confirmed breakpoint or new line).
    solves : DataFrame
        One row per solve: ``lam``, ``outcome`` (``"start"``, ``"confirmed"``, ``"new_line"``
        or the limit status), ``status``, ``time``, ``upper_bound`` (the warm start, nan if
        none), ``n_explored``.
    """

    segments: tuple[PathSegment, ...]
    lam_min: float
    max_depth: int | None
    status: Status
    time: float
    n_solves: int
    solves: pd.DataFrame = field(repr=False)

    @property
    def breakpoints(self) -> np.ndarray:
        """The λ values where the optimal tree changes (the segments' inner boundaries)."""
        return np.array([s.lam_lo for s in self.segments[1:]], dtype=float)

    @property
    def trees(self) -> list[Tree]:
        """The segments' trees, from the largest (at ``lam_min``) to the single leaf."""
        return [s.tree for s in self.segments]

    @property
    def certified(self) -> bool:
        return all(s.certified for s in self.segments)

    @property
    def uncertified(self) -> list[tuple[float, float]]:
        """λ intervals where the returned tree is the best known but not proven optimal."""
        out: list[tuple[float, float]] = []
        for s in self.segments:
            if s.certified:
                continue
            if out and out[-1][1] == s.lam_lo:
                out[-1] = (out[-1][0], s.lam_hi)
            else:
                out.append((s.lam_lo, s.lam_hi))
        return out

    def segment_at(self, lam: float) -> PathSegment:
        """The segment whose interval holds ``lam`` (at a breakpoint: the one on its right)."""
        lam = check_lambda(lam)
        if lam < self.lam_min:
            raise ValueError(f"lam must be >= lam_min={self.lam_min!r}, got {lam!r}")
        lows = np.array([s.lam_lo for s in self.segments])
        return self.segments[int(np.searchsorted(lows, lam, side="right")) - 1]

    def tree_at(self, lam: float) -> Tree:
        """An optimal tree at ``lam`` (the best known one where uncertified)."""
        return self.segment_at(lam).tree

    def objective_at(self, lam: float) -> float:
        """OPT(``lam``) (an upper bound where uncertified)."""
        return self.segment_at(lam).objective(lam)

    def to_frame(self) -> pd.DataFrame:
        """One row per segment, columns :data:`PATH_COLUMNS` (plus the tree in ``tree``)."""
        rows = [
            {
                "lam_lo": s.lam_lo,
                "lam_hi": s.lam_hi,
                "n_leaves": s.n_leaves,
                "misclassified": s.misclassified,
                "loss": s.loss,
                "accuracy": 1.0 - s.loss,
                "certified": s.certified,
                "lower_bound_gap": s.lower_bound_gap,
                "tree": s.tree,
            }
            for s in self.segments
        ]
        return pd.DataFrame(rows, columns=[*PATH_COLUMNS, "tree"])

    def __repr__(self) -> str:
        return (
            f"RegularizationPath(status={self.status.value!r}, segments={len(self.segments)}, "
            f"lam_min={self.lam_min!r}, max_depth={self.max_depth!r}, n_solves={self.n_solves}, "
            f"time={self.time:.3f}s)"
        )


# ---------------------------------------------------------------------------------------------
# lines: a tree's (leaves, mistakes), in count units (value at λ: mistakes + λ·N·leaves)
# ---------------------------------------------------------------------------------------------


#: A subtree of :func:`_prunings` before it becomes a Tree: ``(label,)`` or
#: ``(feature, left, right)``.
_Shape = tuple[int] | tuple[int, "_Shape", "_Shape"]


@dataclass(frozen=True)
class _Line:
    leaves: int
    mistakes: float
    tree: Tree | _Shape  # a nested tuple of _prunings until kept (see _as_tree)

    def value(self, lam_n: float) -> float:
        """Count-unit objective at ``lam_n = λ·N``."""
        return self.mistakes + lam_n * self.leaves


def _crossing(a: _Line, b: _Line) -> float:
    """λ·N where ``a`` (more leaves) and ``b`` (fewer) cost the same."""
    return (b.mistakes - a.mistakes) / (a.leaves - b.leaves)


def _prunings(tree: Tree, X: np.ndarray, class_weights: np.ndarray) -> dict[int, _Line]:
    """The fewest-mistake pruning of ``tree`` for each leaf count (collapsing internal nodes).

    Post-order over the tree with the rows of each node: a node's front is its own majority leaf
    plus every sum of one pruning of each child (its Minkowski sum), keeping the best per count.
    """

    # subtrees are nested tuples ((feature, left, right) or (label,)) until a line is kept:
    # building and validating a Tree per combination would cost more than the counting
    def front(node: Tree, rows: np.ndarray) -> dict[int, tuple[float, _Shape]]:
        counts = class_weights[rows].sum(axis=0)
        label = majority_label(counts)
        own: dict[int, tuple[float, _Shape]] = {1: (float(counts.sum() - counts[label]), (label,))}
        if node.is_leaf:
            # the dp may label a leaf differently when classes tie; keep its own label then
            leaf_label = node.as_leaf()
            mistakes = float(counts.sum() - counts[leaf_label])
            if mistakes <= own[1][0]:
                own[1] = (mistakes, (leaf_label,))
            return own
        feature, node_left, node_right = node.as_split()
        goes_right = X[rows, feature]
        left = front(node_left, rows[~goes_right])
        right = front(node_right, rows[goes_right])
        for nl, (ml, tl) in left.items():
            for nr, (mr, tr) in right.items():
                k, m = nl + nr, ml + mr
                if k not in own or m < own[k][0]:
                    own[k] = (m, (feature, tl, tr))
        return own

    rows = np.arange(X.shape[0])
    return {k: _Line(k, m, t) for k, (m, t) in front(tree, rows).items()}


def _as_tree(shape: Tree | _Shape) -> Tree:
    """A :class:`Tree` from a nested tuple of :func:`_prunings` (a Tree is returned as is)."""
    if isinstance(shape, Tree):
        return shape
    if len(shape) == 1:
        return Tree.leaf(shape[0])
    return Tree.split(shape[0], _as_tree(shape[1]), _as_tree(shape[2]))


def _envelope(lines: list[_Line], lo: float, hi: float, tol: float) -> list[tuple[float, _Line]]:
    """Lower envelope of ``lines`` on [lo, hi] (λ·N units) as (start, line) pieces.

    Lines are scanned by decreasing leaf count (increasing slope reversed: the envelope of
    a concave minimum uses lines of decreasing slope as λ grows). Ties within ``tol`` keep the
    line with fewer leaves, so a line that is optimal at a single point is dropped.
    """
    best: dict[int, _Line] = {}
    for line in lines:
        if line.leaves not in best or line.mistakes < best[line.leaves].mistakes - tol:
            best[line.leaves] = line
    # at lo: the cheapest line, fewest leaves among ties
    start = min(best.values(), key=lambda ln: (ln.value(lo), ln.leaves))
    start_value = start.value(lo)
    for ln in best.values():
        if ln.value(lo) <= start_value + tol and ln.leaves < start.leaves:
            start = ln
    pieces = [(lo, start)]
    current, at = start, lo
    while True:
        # the next line to take over: the earliest crossing beyond `at` among lines with fewer
        # leaves; on equal crossings the one with the fewest leaves (the others touch the
        # envelope at one point only)
        nxt, nxt_at = None, math.inf
        for ln in best.values():
            if ln.leaves >= current.leaves:
                continue
            x = max(_crossing(current, ln), at)
            # crossings equal up to rounding (distinct ones differ by >= 1/leaves^2 in counts)
            tie = nxt is not None and abs(x - nxt_at) <= 1e-12 * max(1.0, abs(x))
            if nxt is None or (x < nxt_at and not tie) or (tie and ln.leaves < nxt.leaves):
                nxt, nxt_at = ln, min(x, nxt_at)
        # a crossing exactly at hi is kept: the envelope's last piece must be the line that is
        # optimal just beyond hi
        if nxt is None or nxt_at > hi:
            return pieces
        if nxt_at <= pieces[-1][0] * (1 + 1e-12) + 1e-12:
            pieces[-1] = (pieces[-1][0], nxt)
        else:
            pieces.append((nxt_at, nxt))
        current, at = nxt, nxt_at


# ---------------------------------------------------------------------------------------------


class _PathSearch:
    """State of one path computation: the problem, the known lines, the solve log."""

    def __init__(
        self,
        dataset: Dataset,
        max_depth: int | None,
        time_limit: float | None,
        memory_limit_mb: float | None,
        start: float,
    ) -> None:
        self.data = dataset
        self.max_depth = max_depth
        self.deadline = math.inf if time_limit is None else start + time_limit
        self.memory_limit_mb = memory_limit_mb
        self.problem = build_problem(dataset)
        # the path's lines are in count units of the scaled weights (as the native search's,
        # see scale_weights): on weights of 1e-300 the tolerance below was 1e-9 absolute, far
        # above every count, and the whole path came out as the single leaf
        self.shift = weight_exponent(dataset.weights)
        weights = np.ldexp(dataset.weights, -self.shift)
        self.N = float(weights.sum())
        self.tol = 1e-9 * max(1.0, self.N)  # the native count_tolerance
        # the prunings are scored on the distinct rows with their class weights (compas-binary:
        # 6907 rows, a few hundred distinct), which makes them cheap next to a solve
        X = np.ascontiguousarray(dataset.X, dtype=bool)
        first, inverse = unique_rows(X)
        self.X = X[first]
        self.class_weights = np.zeros((len(first), dataset.n_classes))
        np.add.at(self.class_weights, (inverse, dataset.y), weights)
        self.best: dict[int, _Line] = {}  # the fewest-mistake known tree per leaf count
        self.seen: set[Tree] = set()
        self.log: list[dict[str, Any]] = []
        self.stop_status: Status | None = None

    def mistakes(self, tree: Tree) -> float:
        """Weighted training mistakes of ``tree`` (on the distinct rows)."""
        wrong = tree.predict(self.X)[:, None] != np.arange(self.class_weights.shape[1])
        return float((self.class_weights * wrong).sum())

    def add_tree(self, tree: Tree) -> _Line:
        """Add ``tree`` and its prunings as known lines; return the tree's own line."""
        if tree not in self.seen:
            self.seen.add(tree)
            for line in _prunings(tree, self.X, self.class_weights).values():
                if line.leaves not in self.best or line.mistakes < self.best[line.leaves].mistakes:
                    self.best[line.leaves] = line
        return _Line(tree.n_leaves, self.mistakes(tree), tree)

    def solve(self, lam_n: float, upper: float | None) -> tuple[Status, _Line | None, float]:
        """The dp at λ = ``lam_n / N``: (status, its tree's line, lower bound in count units)."""
        remaining = self.deadline - time.perf_counter()
        if remaining <= 0:
            self.stop_status = Status.TIME_LIMIT
            return Status.TIME_LIMIT, None, -math.inf
        lam = lam_n / self.N
        config = search_config(
            lam,
            time_limit=None if math.isinf(remaining) else max(remaining, 1e-3),
            node_limit=None,
            memory_limit_mb=self.memory_limit_mb,
            bounds={},
            max_depth=-1 if self.max_depth is None else self.max_depth,
            upper_bound=math.inf if upper is None else upper / self.N,
        )
        t0 = time.perf_counter()
        raw = _native.search_dp(self.problem, config)
        elapsed = time.perf_counter() - t0
        status = native_status(raw.status)
        tree = decode_tree(raw.tree)
        if self.max_depth is not None and tree.depth > self.max_depth:
            raise RuntimeError(f"dp returned a tree of depth {tree.depth} > max_depth")
        line = self.add_tree(tree)
        # the native objective must agree with the re-evaluated tree (as search_tree checks)
        if abs(line.value(lam_n) - raw.objective * self.N) > 1e-9 * max(1.0, self.N):
            raise RuntimeError(
                f"dp reported objective {raw.objective!r} at lam={lam!r} but its tree scores "
                f"{line.value(lam_n) / self.N!r} (odtkit.metrics): this is a bug"
            )
        bound = line.value(lam_n) if status == Status.OPTIMAL else raw.lower_bound * self.N
        self.log.append(
            {
                "lam": lam,
                "outcome": "",
                "status": status.value,
                "time": elapsed,
                "upper_bound": math.nan if upper is None else upper / self.N,
                "n_explored": raw.n_explored,
            }
        )
        if status != Status.OPTIMAL:
            self.stop_status = status
        return status, line, bound


def regularization_path(
    dataset: Dataset,
    *,
    max_depth: int | None,
    lam_min: float = 0.0,
    time_limit: float | None = None,
    memory_limit_mb: float | None = None,
    progress: bool | None = None,
) -> RegularizationPath:
    """Every breakpoint of OPT(λ) on [``lam_min``, ∞) with a certified optimal tree per piece.

    OPT(λ) = min over trees T of depth <= ``max_depth`` of ``misclassified(T)/n + λ·leaves(T)``
    (the objective of :func:`~odtkit.core.search_tree`). It is piecewise linear and concave; the
    pieces are found by an Eisner–Severance search over λ with the native dp (see the module
    docstring): about one dp solve per breakpoint when the prunings of the trees found so far
    already contain the path, two when they do not.

    Parameters
    ----------
    dataset : Dataset
        Binary features, class codes (multi-class allowed), optional sample weights.
    max_depth : int or None
        Maximum splits on a path (``None``: unlimited, usually much slower at small λ).
    lam_min : float, default 0.0
        Left end of the path. The solve at ``lam_min`` (the largest tree) is usually the most
        expensive one; λ = 0 asks for the fewest leaves among the most accurate trees.
    time_limit : float, optional
        Seconds for the whole path. On expiry (or Ctrl-C) the pieces not yet proven are the
        envelope of the best trees known, with ``certified=False`` and a valid
        ``lower_bound_gap`` (from concavity: OPT lies above the chord of two certified points).
    memory_limit_mb : float, optional
        Per solve, as in :func:`~odtkit.core.search_tree`.

    progress : bool, optional
        A live line on stderr (solves so far, intervals left) once the path has taken 2 s;
        None (default): shown when stderr is a terminal.

    Returns
    -------
    RegularizationPath
        ``segments`` (λ interval, tree, leaves, mistakes, loss, certified), ``breakpoints``,
        ``tree_at(lam)``, ``to_frame()``, ``status``, ``n_solves`` and the ``solves`` log.
    """
    start = time.perf_counter()
    dataset = check_dataset(dataset)
    max_depth = check_depth(max_depth, n_features=dataset.n_features)
    lam_min = check_lambda(lam_min, "lam_min")
    time_limit = check_positive_number(time_limit, "time_limit")
    memory_limit_mb = check_positive_number(memory_limit_mb, "memory_limit_mb")
    search = _PathSearch(dataset, max_depth, time_limit, memory_limit_mb, start)
    N, tol = search.N, search.tol

    # the single leaf: optimal once λ·N >= its mistakes (any split costs >= 2λ·N)
    leaf = search.add_tree(Tree.leaf(majority_label(search.class_weights.sum(axis=0))))
    lo = lam_min * N
    top = max(lo, leaf.mistakes)
    certified: list[tuple[float, float]] = []  # proven λ·N intervals
    pending: list[tuple[float, float, float, float]] = []  # (lo, hi, OPT(lo), OPT(hi)) bounds
    confirmed_points: list[float] = []
    unproven: list[tuple[float, float, float, float]] = []

    def check(interval: tuple[float, float, float, float]) -> None:
        """Certify ``interval`` (no candidate line inside), or solve at an inner envelope
        breakpoint and queue the halves; unproven once a solve stops short."""
        a_lo, a_hi, v_lo, v_hi = interval
        pieces = _envelope(list(search.best.values()), a_lo, a_hi, tol)
        inner = [x for x, _ in pieces[1:] if a_lo < x < a_hi]
        if not inner:
            certified.append((a_lo, a_hi))
            return
        if search.stop_status is not None:
            unproven.append(interval)
            return
        x = inner[len(inner) // 2]
        env_value = min(ln.value(x) for _, ln in pieces)
        # the envelope's value is attained by a known tree: a valid upper bound for the dp
        status, line, bound = search.solve(x, env_value)
        if line is None or status != Status.OPTIMAL:
            unproven.append(interval)
            return
        improved = line.value(x) < env_value - tol
        search.log[-1]["outcome"] = "new_line" if improved else "confirmed"
        if not improved:
            confirmed_points.append(x)
        value = min(env_value, line.value(x))
        pending.append((x, a_hi, value, v_hi))
        pending.append((a_lo, x, v_lo, value))

    # Ctrl-C in the Python between the solves ends the path like one inside a solve: what is
    # not proven by then is reported as such
    current: tuple[float, float, float, float] | None = None
    bar = Progress("regularization path", progress)  # a live line: many solves at depth 5
    try:
        with stop_on_interrupt() as ctrl_c:
            if top > lo:
                current = (lo, top, -math.inf, leaf.value(top))
                status, first, bound = search.solve(lo, None)
                if search.log:
                    search.log[-1]["outcome"] = "start"
                if first is None or status != Status.OPTIMAL:
                    unproven.append(
                        (lo, top, bound if first is not None else -math.inf, current[3])
                    )
                    current = None
                    return _finish(search, lam_min, certified, unproven, [], start, top)
                pending.append((lo, top, bound, leaf.value(top)))
                current = None
            while pending:
                bar.show(
                    f"{len(search.log)} solves, {len(search.best)} candidate trees, "
                    f"{len(pending)} intervals to check"
                )
                current = pending.pop()
                check(current)
                current = None
    finally:
        bar.close()
    if ctrl_c.interrupted:
        search.stop_status = Status.INTERRUPTED
        unproven.extend(([current] if current is not None else []) + pending)
    return _finish(search, lam_min, certified, unproven, confirmed_points, start, top)


def _finish(
    search: _PathSearch,
    lam_min: float,
    certified: list[tuple[float, float]],
    unproven: list[tuple[float, float, float, float]],
    confirmed_points: list[float],
    start: float,
    top: float,
) -> RegularizationPath:
    """Assemble the segments: the envelope of the known lines, flagged where unproven."""
    N, tol = search.N, search.tol
    lo = lam_min * N
    pieces = _envelope(list(search.best.values()), lo, max(top, lo), tol)
    # unproven intervals: the chord between their endpoints' lower bounds is a valid lower bound
    gaps: list[tuple[float, float, float, float]] = sorted(unproven)
    segments: list[PathSegment] = []
    for i, (x, line) in enumerate(pieces):
        x_end = pieces[i + 1][0] if i + 1 < len(pieces) else math.inf
        worst = 0.0
        is_certified = True
        for g_lo, g_hi, v_lo, v_hi in gaps:
            if g_hi <= x or g_lo >= x_end:
                continue
            is_certified = False
            if not (math.isfinite(v_lo) and math.isfinite(v_hi)):
                worst = math.inf
                continue
            # the envelope minus the chord is largest at an end of the overlap
            for y in (max(x, g_lo), min(x_end, g_hi)):
                chord = v_lo + (v_hi - v_lo) * (y - g_lo) / (g_hi - g_lo)
                worst = max(worst, (line.value(y) - chord) / N)
        # every reported number is re-evaluated by metrics, the one truth
        tree = _as_tree(line.tree)
        truth = metrics.misclassified(tree, search.data)
        scaled_truth = float(np.ldexp(truth, -search.shift))
        if abs(scaled_truth - line.mistakes) > tol:
            raise RuntimeError(
                f"the path scored a tree at {line.mistakes!r} mistakes but odtkit.metrics counts "
                f"{scaled_truth!r} (in the path's weight units): this is a bug"
            )
        segments.append(
            PathSegment(
                lam_lo=x / N,
                lam_hi=x_end / N,
                tree=tree,
                n_leaves=line.leaves,
                misclassified=truth,
                loss=scaled_truth / N,
                certified=is_certified,
                lower_bound_gap=worst,
            )
        )
    segments[0] = _replace_lo(segments[0], lam_min)
    status = (
        Status.OPTIMAL
        if all(s.certified for s in segments)
        else (search.stop_status or Status.TIME_LIMIT)
    )
    solves = pd.DataFrame(
        search.log, columns=["lam", "outcome", "status", "time", "upper_bound", "n_explored"]
    )
    return RegularizationPath(
        segments=tuple(segments),
        lam_min=lam_min,
        max_depth=search.max_depth,
        status=status,
        time=time.perf_counter() - start,
        n_solves=len(search.log),
        solves=solves,
    )


def _replace_lo(segment: PathSegment, lam_lo: float) -> PathSegment:
    return replace(segment, lam_lo=lam_lo)

r"""Pricing for column generation over whole trees: the tree of least value, by the native dp.

Branch-and-price over trees (issue 40) prices with one exact optimisation over trees each round;
turning the master's duals into the terms below is the caller's. :func:`price` finds

.. math::

    \min_{T \in \mathcal{D}} \; v(T), \qquad
    v(T) \;=\; \sum_i C_{i, T(x_i)} \;+\; c_\ell \, |\mathrm{leaves}(T)|
    \;+\; \sum_{(g, c_g)} c_g \, [T \text{ tests a feature of } g]

with :math:`C` any per-row-per-class costs (absolute units, either sign; a row of weight 0
costs 0), :math:`c_\ell \ge 0` per leaf and :math:`c_g \ge 0` a set-up cost that group
:math:`g` (a set of binary features) pays once if the tree tests any of its features.

**The domain** :math:`\mathcal{D}`: trees of depth ``<= max_depth`` over the dataset's binary
features less ``forbidden``, every split *effective* (both sides receive positive training
weight, as :func:`odtkit.constraints.effective_splits` counts), every leaf receiving at least
``min_leaf_weight`` of the dataset's weight (as :class:`~odtkit.constraints.MinLeafSupport`
measures it) and every :class:`PositionRule` met. Leaf labels are free. Any tree's
``canonical(X, merge=False)`` is in the domain and never worse (a split with an empty side is
replaced by its other side: the same predictions on the weighted rows, fewer leaves), so the
effective-split restriction loses no optimum; equal sibling leaves are kept (a rule may require
their split).

**How.** A cost whose rows are below their maximum at one class at most is a weighted
misclassification (:func:`odtkit.costs.reduction`): label :math:`y'_i = \arg\min_k C_{ik}`,
weight :math:`w'_i = \max_k C_{ik} - \min_k C_{ik}`, plus the constant :math:`\sum_i \min_k
C_{ik}`. On rows :math:`R` the native dp minimises ``misclassified'/W'(R) + lam * leaves``, so
``lam = c_l / W'(R)`` and its value times :math:`W'(R)` plus the constant is :math:`v`; its
bound maps back the same way. The dp skips a split with a side of no weight :math:`w'`; such a
side holds only rows indifferent to the label, so dropping it (keeping the other side) never
costs more, and the dp's optimum is the domain's.

*Rules* (the branching decisions of branch-and-price, on heap positions) are enumerated in
Python only where they bite: at a position with no rule at or below it one dp call solves the
rows reaching it with the remaining depth (closed forms for a leaf and a stump); at a ruled
position every allowed action (the required one, or each leaf class and each effective split
not forbidden there) is tried, and its children are solved the same way. The minimum over the
actions of their children's values is exact, and the minimum of their children's bounds a valid
bound, because the actions partition the trees at that position.
A position whose rules only forbid splits (and maybe leaf classes), with no rule below it, takes
one dp call instead, its root restricted to the splits not forbidden (the native
``SearchConfig.root_features``; deeper nodes split on every feature): the dp's optimum over every
leaf and those splits is the position's unless it is a leaf of a forbidden class, and only then
are the splits enumerated.

*Group costs* are not decomposable over nodes, so a best-first branch-and-bound over groups
solves them exactly: pricing with the costs of the undecided groups dropped is a relaxation (a
valid bound); when its tree tests undecided groups :math:`g_1, \dots, g_t` (costliest first) the
node's trees split into "tests none of :math:`g_1`" (features of :math:`g_1` forbidden), "tests
:math:`g_1`, not :math:`g_2`", ..., "tests all": each part pays its tested groups as a constant,
so each part's relaxation is again a valid bound, and the last part is closed by the tree found.
The search stops when the best open bound reaches the incumbent's value.

Under a time limit the answer is the best tree found (maybe none) and the smallest bound of what
remains open; a sub-problem never reached is bounded by :math:`\sum_i \min_k C_{ik} + c_\ell`.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, NamedTuple

import numpy as np

from odtkit import _native
from odtkit._limits import default_memory_limit_mb
from odtkit._validation import check_depth, check_lambda, check_positive_number
from odtkit.constraints import CONSTRAINT_TOLERANCE, effective_splits
from odtkit.core._problem import decode_tree, native_status, problem_from_arrays
from odtkit.costs import reduction
from odtkit.datasets import Dataset
from odtkit.results import Status
from odtkit.tree import Tree

__all__ = ["PositionRule", "Priced", "price"]

#: relative tolerance of "the bound reaches the incumbent" (values are sums of costs)
_CLOSE = 1e-9


@dataclass(frozen=True)
class PositionRule:
    """A branching decision on heap positions (root 1; children of ``u``: ``2u`` left, where
    ``x_j = 0``, and ``2u + 1`` right).

    Exactly one of ``feature`` ("``node`` splits on this binary feature") and ``klass``
    ("``node`` is a leaf predicting this class code") is given. ``required=True``: every tree
    of the domain has exactly this action at ``node`` (so the node exists: its ancestors are
    splits routing to it); ``False``: no tree has it.
    """

    node: int
    feature: int | None = None
    klass: int | None = None
    required: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.node, bool) or not isinstance(self.node, Integral) or self.node < 1:
            raise ValueError(f"node must be a heap position >= 1 (root 1), got {self.node!r}")
        if (self.feature is None) == (self.klass is None):
            raise TypeError("a PositionRule takes exactly one of feature= and klass=")
        for name in ("feature", "klass"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, Integral) or value < 0
            ):
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if not isinstance(self.required, bool):
            raise TypeError(f"required must be a bool, got {type(self.required).__name__}")
        object.__setattr__(self, "node", int(self.node))


@dataclass(frozen=True)
class Priced:
    """The answer of :func:`price`.

    Attributes
    ----------
    tree : Tree or None
        The best tree found; None when no tree meets the rules and limits (or none was found
        within the time limit).
    value : float
        Its exact value (``inf`` when ``tree`` is None), measured on the tree itself.
    lower_bound : float
        A valid lower bound on the least value over every tree of the domain (``inf``: the
        domain is empty); equal to ``value`` when ``status`` is optimal.
    status : Status
        ``optimal``, ``infeasible`` (no tree in the domain), or the limit that stopped it
        (``time_limit``, ``memory_limit``, ``interrupted``).
    dp_calls : int
        Native dp calls made (closed-form leaves and stumps not counted).
    time : float
        Seconds spent.
    """

    tree: Tree | None
    value: float
    lower_bound: float
    status: Status
    dp_calls: int = 0
    time: float = 0.0


class _Sub(NamedTuple):
    """A sub-problem's answer: its best tree and base value (row and leaf costs), a valid
    bound (``inf``: no tree) and the status of a limit that stopped part of it (None: exact)."""

    tree: Tree | None
    value: float
    bound: float
    stopped: Status | None


_INFEASIBLE = _Sub(None, math.inf, math.inf, None)


@dataclass
class _Rules:
    """Position rules prepared for the recursion."""

    required: dict[int, tuple[str, int]]
    forbidden_splits: dict[int, set[int]]
    forbidden_leaves: dict[int, set[int]]
    needs_split: set[int]  # strict ancestors of a required node
    ruled: set[int]  # every node with a rule at or below it


def _prepare_rules(rules: Sequence[PositionRule], max_depth: int) -> _Rules | None:
    """The rules by node, or None when they contradict (no tree meets them)."""
    prepared = _Rules({}, {}, {}, set(), set())
    for rule in rules:
        depth = rule.node.bit_length() - 1
        action = ("split", rule.feature) if rule.feature is not None else ("leaf", rule.klass)
        assert action[1] is not None  # PositionRule checks exactly one is given
        kind, value = action[0], int(action[1])
        if rule.required:
            if depth > max_depth or (kind == "split" and depth == max_depth):
                return None  # the node cannot exist, or cannot split, at this depth
            if prepared.required.setdefault(rule.node, (kind, value)) != (kind, value):
                return None  # two different actions required at one node
            node = rule.node >> 1
            while node:
                prepared.needs_split.add(node)
                node >>= 1
        else:
            if depth > max_depth or (kind == "split" and depth == max_depth):
                continue  # forbids what no tree of this depth does
            table = prepared.forbidden_splits if kind == "split" else prepared.forbidden_leaves
            table.setdefault(rule.node, set()).add(value)
        node = rule.node
        while node:
            prepared.ruled.add(node)
            node >>= 1
    for node, (kind, value) in prepared.required.items():
        table = prepared.forbidden_splits if kind == "split" else prepared.forbidden_leaves
        if value in table.get(node, ()):
            return None  # required and forbidden
        if kind == "leaf" and node in prepared.needs_split:
            return None  # a leaf with a required node below it
    return prepared


class _Pricer:
    """One :func:`price` call's data and the recursion over positions (rows: indices of the
    positive-weight rows, which are all the domain's effectiveness and supports read)."""

    def __init__(
        self,
        dataset: Dataset,
        costs: np.ndarray,
        *,
        leaf_cost: float,
        max_depth: int,
        min_leaf_weight: float,
        rules: _Rules,
        deadline: float,
    ) -> None:
        keep = np.flatnonzero(dataset.weights > 0)
        self.X = np.ascontiguousarray(dataset.X[keep])
        self.C = np.ascontiguousarray(costs[keep])
        self.w = dataset.weights[keep]
        self.y = dataset.y[keep]
        self.K = int(dataset.n_classes)
        self.names = dataset.feature_names
        self.classes = dataset.classes
        reduced = reduction(self.C)
        if isinstance(reduced, str):
            raise ValueError(
                f"row_costs: {reduced}; pricing takes costs reducible to a weighted "
                "misclassification"
            )
        self.y_reduced = reduced.y
        self.w_reduced = reduced.weights
        self.low = self.C.min(axis=1) if self.C.size else np.zeros(keep.size)
        self.leaf_cost = leaf_cost
        self.max_depth = max_depth
        self.min_leaf = min_leaf_weight
        # the support the search admits, as ResolvedConstraints.violations accepts a leaf
        self.admitted = (
            min_leaf_weight - CONSTRAINT_TOLERANCE * max(1.0, min_leaf_weight)
            if min_leaf_weight > 0
            else 0.0
        )
        self.scale = self._support_scale()
        self.rules = rules
        self.deadline = deadline
        self.memory_mb = default_memory_limit_mb() or 0.0
        self.dp_calls = 0

    def _support_scale(self) -> float | None:
        """``c`` when the reduced weights are ``c`` times the dataset's (then the native
        support on the reduced rows is the dataset's, scaled), else None; 1 without support."""
        if self.min_leaf <= 0:
            return 1.0
        ratio = self.w_reduced / self.w
        c = float(ratio.max(initial=0.0))
        if c == 0:
            return 1.0  # every row indifferent: no dp call is made (a leaf is optimal)
        if np.allclose(ratio, c, rtol=1e-12, atol=0.0):
            return c
        return None

    # ---------------------------------------------------------------------------------------
    def solve(self, allowed: np.ndarray) -> _Sub:
        """The root: the best tree over the features ``allowed``."""
        return self._solve(1, np.arange(self.w.size), self.max_depth, allowed)

    def _solve(self, node: int, rows: np.ndarray, depth: int, allowed: np.ndarray) -> _Sub:
        relaxed, exact = self._relax(node, rows, depth, allowed)
        return relaxed if exact else self._ruled(node, rows, depth, allowed, relaxed)

    def _relax(
        self, node: int, rows: np.ndarray, depth: int, allowed: np.ndarray
    ) -> tuple[_Sub, bool]:
        """The free optimum at ``node`` (the rules ignored) and whether it is the position's
        exact answer: no rule at or below it, or its tree happens to meet them (often, in
        branch-and-price). Else it still bounds the position: the rules only restrict."""
        if self.admitted > 0 and float(self.w[rows].sum()) < self.admitted:
            return _INFEASIBLE, True  # every tree here has a leaf lighter than the support
        relaxed = self._free(rows, depth, allowed)
        if node not in self.rules.ruled or relaxed.bound == math.inf:
            return relaxed, True
        if relaxed.stopped is not None or relaxed.tree is None:
            return relaxed, False
        return relaxed, self._meets_rules(relaxed.tree, node)

    def _free(self, rows: np.ndarray, depth: int, allowed: np.ndarray) -> _Sub:
        """The best tree of height ``depth`` on ``rows``, ignoring the rules."""
        if depth == 0:
            return self._leaf(rows, None)
        if depth == 1:
            leaf = self._leaf(rows, None)
            values, left, right = self._stumps(rows, allowed)
            j = int(np.argmin(values)) if values.size else 0
            if values.size and values[j] < leaf.value:
                tree = Tree.split(j, Tree.leaf(int(left[j])), Tree.leaf(int(right[j])))
                return _Sub(tree, float(values[j]), float(values[j]), None)
            return leaf
        return self._dp(rows, depth, allowed)

    def _leaf(self, rows: np.ndarray, classes: np.ndarray | None) -> _Sub:
        """The best leaf on ``rows`` among ``classes`` (None: any)."""
        totals = self.C[rows].sum(axis=0) if rows.size else np.zeros(self.K)
        if classes is not None:
            totals = np.where(classes, totals, math.inf)
        k = int(np.argmin(totals))
        value = float(totals[k]) + self.leaf_cost
        if not math.isfinite(value):
            return _INFEASIBLE
        return _Sub(Tree.leaf(k), value, value, None)

    def _stumps(
        self,
        rows: np.ndarray,
        features: np.ndarray,
        classes: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per feature, the best one-split tree's value on ``rows`` (``inf`` where the split is
        not allowed, not effective, or leaves a side below the support) and its leaf labels;
        ``classes``: the classes the left and the right leaf may take (None: any)."""
        Xr = self.X[rows]
        Cr = self.C[rows]
        ones = Xr.T.astype(np.float64) @ Cr  # (p, K): class costs of the x_j = 1 side
        zeros = Cr.sum(axis=0) - ones
        if classes is not None:
            zeros = np.where(classes[0], zeros, math.inf)
            ones = np.where(classes[1], ones, math.inf)
        values = ones.min(axis=1) + zeros.min(axis=1) + 2 * self.leaf_cost
        count = Xr.sum(axis=0)
        ok = features & (count > 0) & (count < rows.size)
        if self.admitted > 0:
            w1 = self.w[rows] @ Xr
            w0 = float(self.w[rows].sum()) - w1
            ok &= (w1 >= self.admitted) & (w0 >= self.admitted)
        values = np.where(ok, values, math.inf)
        return values, zeros.argmin(axis=1), ones.argmin(axis=1)

    def _depth2(
        self, node: int, rows: np.ndarray, features: np.ndarray, allowed: np.ndarray
    ) -> np.ndarray:
        """Per split feature in ``features`` at ``node`` (height 2), the best tree on ``rows``
        splitting on it, each child a leaf or a stump as the rules at and below the children
        allow (``inf`` where no such tree is in the domain): every split at once, from the pair
        sums ``P[k, j, l]`` (class ``k``'s costs of the rows with ``x_j = x_l = 1``), one matrix
        product; the class axis first, so that minima over classes run over whole slabs."""
        K, lc, floor = self.K, self.leaf_cost, self.admitted
        roots = np.flatnonzero(features)
        Xr = self.X[rows].astype(np.float64)
        Cr, wr = self.C[rows], self.w[rows]
        p, f = Xr.shape[1], roots.size
        columns = [Xr * Cr[:, k, None] for k in range(K)] + [Xr, Xr * wr[:, None]]
        sums = (Xr[:, roots].T @ np.hstack(columns)).reshape(f, K + 2, p).transpose(1, 0, 2)
        pair, count11, weight11 = sums[:K], sums[K], sums[K + 1]
        one = Cr.T @ Xr  # (K, p): class costs of the x_l = 1 rows
        total = Cr.sum(axis=0)
        count1, weight1 = Xr.sum(axis=0), wr @ Xr
        m, w = float(rows.size), float(wr.sum())

        def child(
            position: int,
            side: np.ndarray,
            split: np.ndarray,
            n_side: np.ndarray,
            n_split: np.ndarray,
            w_side: np.ndarray,
            w_split: np.ndarray,
        ) -> np.ndarray:
            # side (K, f): the child's class costs per root feature; split (K, f, p): the
            # costs of its x_l = 1 part
            leaf_classes, split_features, left_classes, right_classes = self._height1(
                position, allowed
            )
            rest = side[:, :, None] - split
            stump = _class_min(split, right_classes) + _class_min(rest, left_classes) + 2 * lc
            ok = split_features[None, :] & (n_split > 0) & (n_split < n_side[:, None])
            if floor > 0:
                ok &= (w_split >= floor) & (w_side[:, None] - w_split >= floor)
            best = np.where(ok, stump, math.inf).min(axis=1, initial=math.inf)
            value: np.ndarray = np.minimum(_class_min(side, leaf_classes) + lc, best)
            return value

        right = child(
            2 * node + 1, one[:, roots], pair, count1[roots], count11, weight1[roots], weight11
        )
        # the x_j = 0 side: its x_l = 1 part is (x_l = 1) less (x_j = x_l = 1)
        left = child(
            2 * node,
            total[:, None] - one[:, roots],
            one[:, None, :] - pair,
            m - count1[roots],
            count1[None, :] - count11,
            w - weight1[roots],
            weight1[None, :] - weight11,
        )
        ok = (count1[roots] > 0) & (count1[roots] < m)
        if floor > 0:
            ok &= (weight1[roots] >= floor) & (w - weight1[roots] >= floor)
        values = np.full(p, math.inf)
        values[roots] = np.where(ok, left + right, math.inf)
        return values

    def _height1(
        self, node: int, allowed: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """What the rules leave a position of height 1: the classes of a leaf there (none when
        it must split), the features of a split there and the classes of its two leaves."""
        rules = self.rules
        leaf = self._classes(node)
        if node in rules.needs_split:
            leaf[:] = False
        features = allowed.copy()
        features[list(rules.forbidden_splits.get(node, ()))] = False
        required = rules.required.get(node)
        if required is not None:
            features[:] = False
            if required[0] == "split":  # (a required leaf leaves no split)
                features[required[1]] = allowed[required[1]]
        return leaf, features, self._classes(2 * node), self._classes(2 * node + 1)

    def _classes(self, node: int) -> np.ndarray:
        """The classes a leaf at ``node`` may predict under the rules."""
        classes = np.ones(self.K, dtype=bool)
        classes[list(self.rules.forbidden_leaves.get(node, ()))] = False
        required = self.rules.required.get(node)
        if required is not None:
            classes[:] = False
            if required[0] == "leaf":
                classes[required[1]] = True
        return classes

    def _ruled(
        self, node: int, rows: np.ndarray, depth: int, allowed: np.ndarray, relaxed: _Sub
    ) -> _Sub:
        """A position with a rule at or below it (``relaxed``: its free optimum, which breaks
        one): every allowed action, each child solved."""
        rules = self.rules
        required = rules.required.get(node)
        best, bound, stopped = _INFEASIBLE, math.inf, None
        if node not in rules.needs_split:
            best = self._leaf(rows, self._classes(node))
            bound = best.value
        if depth == 0 or (required is not None and required[0] == "leaf"):
            return best
        features = allowed.copy()
        features[list(rules.forbidden_splits.get(node, ()))] = False
        if (
            required is None
            and depth >= 2
            and node in rules.forbidden_splits
            and not {2 * node, 2 * node + 1} & rules.ruled
            and not (relaxed.tree is not None and relaxed.tree.is_leaf)
        ):
            # only forbidden splits (and leaf classes) here, nothing ruled below: one dp call
            # whose root may split on the allowed features only (deeper nodes on all). (A free
            # optimum that is a leaf of a forbidden class is the masked optimum too: no use.)
            masked = self._masked(rows, depth, allowed, features, best)
            if masked is not None:
                return masked
        if required is not None:
            only = required[1]
            features[:] = False
            features[only] = allowed[only]
        left_node, right_node = 2 * node, 2 * node + 1
        if depth == 1:
            # two leaves below (neither can be required to split at the depth limit): every
            # split at once, each leaf among the classes its rules allow
            values, left, right = self._stumps(
                rows, features, (self._classes(left_node), self._classes(right_node))
            )
            j = int(np.argmin(values)) if values.size else 0
            if values.size and values[j] < best.value:
                tree = Tree.split(j, Tree.leaf(int(left[j])), Tree.leaf(int(right[j])))
                best = _Sub(tree, float(values[j]), float(values[j]), None)
            return best
        Xr = self.X[rows]
        count = Xr.sum(axis=0)
        features &= (count > 0) & (count < rows.size)
        if depth == 2 and features.any():
            # children of height 1: every split at once; the best one is rebuilt below
            values = self._depth2(node, rows, features, allowed)
            best_split = int(np.argmin(values))
            features[:] = False
            features[best_split] = math.isfinite(values[best_split])
        # first every split's children relaxed (a bound, exact where the rules do not bite),
        # then the splits in the order of their bounds, until a bound reaches the incumbent
        candidates = []
        for j in np.flatnonzero(features).tolist():
            if time.perf_counter() >= self.deadline:
                # what was not tried is bounded by any tree's least value here
                bound = min(bound, float(self.low[rows].sum()) + self.leaf_cost)
                stopped = Status.TIME_LIMIT
                break
            goes_right = Xr[:, j]
            sides = (rows[~goes_right], rows[goes_right])
            left_sub, left_exact = self._relax(left_node, sides[0], depth - 1, allowed)
            if left_sub.bound == math.inf:
                continue  # no tree on the left: no tree with this split
            right_sub, right_exact = self._relax(right_node, sides[1], depth - 1, allowed)
            if right_sub.bound == math.inf:
                continue
            lower = left_sub.bound + right_sub.bound
            if left_exact and right_exact:
                stopped = stopped or left_sub.stopped or right_sub.stopped
                bound = min(bound, lower)
                best = _better(best, j, left_sub, right_sub)
            else:
                candidates.append((lower, j, sides, left_sub, left_exact, right_sub, right_exact))
        candidates.sort(key=lambda c: (c[0], c[1]))
        for lower, j, sides, left_sub, left_exact, right_sub, right_exact in candidates:
            if lower >= best.value - _CLOSE * max(1.0, abs(best.value)):
                break  # in bound order: no split left can beat the incumbent
            if stopped is not None or time.perf_counter() >= self.deadline:
                bound = min(bound, lower)  # the least bound of what is left
                stopped = stopped or Status.TIME_LIMIT
                break
            if not left_exact:
                left_sub = self._ruled(left_node, sides[0], depth - 1, allowed, left_sub)
                if left_sub.bound == math.inf:
                    continue
            if not right_exact:
                right_sub = self._ruled(right_node, sides[1], depth - 1, allowed, right_sub)
            bound = min(bound, left_sub.bound + right_sub.bound)
            stopped = stopped or left_sub.stopped or right_sub.stopped
            best = _better(best, j, left_sub, right_sub)
        if stopped is None:
            return best
        return _Sub(best.tree, best.value, min(best.value, max(bound, relaxed.bound)), stopped)

    def _masked(
        self, rows: np.ndarray, depth: int, allowed: np.ndarray, root: np.ndarray, leaf: _Sub
    ) -> _Sub | None:
        """A position whose rules only forbid splits (those outside ``root``) and leaf classes
        (``leaf``: its best allowed leaf), with no rule below it: one dp call with the root
        mask. The dp's optimum is over every leaf and the allowed splits, so a split it returns
        is the position's optimum, and so is the best allowed leaf when it is worth no more
        than the dp's answer; a better leaf of a forbidden class says only that no allowed
        split beats it: None (the caller enumerates the splits)."""
        found = self._dp(rows, depth, allowed, root)
        split = found.tree is not None and not found.tree.is_leaf
        if found.stopped is not None:
            # the dp's bound (over every leaf and the allowed splits) covers the domain; its
            # split, or else the allowed leaf, is the best tree of the domain found
            best = found if split and not leaf.value < found.value else leaf
            bound = min(best.value, found.bound)
            return _Sub(best.tree, best.value, bound, found.stopped)
        if split:
            return leaf if leaf.value < found.value else found
        close = _CLOSE * max(1.0, abs(found.value))
        return leaf if leaf.value <= found.value + close else None

    def _meets_rules(self, tree: Tree, node: int) -> bool:
        """Whether ``tree``, placed at position ``node``, meets every rule at or below it."""
        actions: dict[int, tuple[str, int]] = {}
        stack = [(tree, node)]
        while stack:
            here, position = stack.pop()
            if here.is_leaf:
                actions[position] = ("leaf", here.as_leaf())
            else:
                feature, left, right = here.as_split()
                actions[position] = ("split", feature)
                stack += [(left, 2 * position), (right, 2 * position + 1)]
        rules, top = self.rules, node.bit_length()
        for position, action in rules.required.items():
            below = position.bit_length() >= top and position >> (position.bit_length() - top)
            if below == node and actions.get(position) != action:
                return False
        for kind, table in (("split", rules.forbidden_splits), ("leaf", rules.forbidden_leaves)):
            for position, values in table.items():
                done = actions.get(position)
                if done is not None and done[0] == kind and done[1] in values:
                    return False
        return True

    def _dp(
        self, rows: np.ndarray, depth: int, allowed: np.ndarray, root: np.ndarray | None = None
    ) -> _Sub:
        """An unruled position of height ``depth >= 2``: one native dp call on its rows (its
        root splitting only on the features ``root`` when given, a subset of ``allowed``)."""
        weights = self.w_reduced[rows]
        total = float(weights.sum())
        if total <= 0:  # every row costs the same whatever it is predicted
            return self._leaf(rows, None)
        left = self.deadline - time.perf_counter()
        if left <= 0:
            return _Sub(
                None, math.inf, float(self.low[rows].sum()) + self.leaf_cost, Status.TIME_LIMIT
            )
        columns = np.flatnonzero(allowed)
        self.dp_calls += 1
        if self.scale is None:
            # the reduced weights do not measure a leaf's support: the native problem carries
            # the dataset's own weights beside them, and the support is a share of theirs
            support = self.w[rows]
            problem = problem_from_arrays(
                self.X[np.ix_(rows, columns)],
                self.y_reduced[rows],
                weights,
                self.K,
                support=support,
            )
            share = min(1.0, self.admitted / float(support.sum()))
        else:
            problem = problem_from_arrays(
                self.X[np.ix_(rows, columns)], self.y_reduced[rows], weights, self.K
            )
            share = min(1.0, self.scale * self.admitted / total) if self.admitted > 0 else 0.0
        config = _native.SearchConfig(
            lam=self.leaf_cost / total,
            max_depth=depth,
            time_limit=left if math.isfinite(left) else 0.0,
            memory_limit_mb=self.memory_mb,
            min_leaf_weight=share,
        )
        if root is not None:
            config.root_features = _root_features(root[columns], columns.size)
        raw = _native.search_dp(problem, config, None)
        tree = decode_tree([int(columns[v]) if v >= 0 else int(v) for v in raw.tree])
        constant = float(self.low[rows].sum())
        value = raw.objective * total + constant
        status = native_status(raw.status)
        if status == Status.OPTIMAL:
            return _Sub(tree, value, value, None)
        return _Sub(tree, value, min(value, raw.lower_bound * total + constant), status)


def _root_features(mask: np.ndarray, n_features: int) -> list[bool]:
    """``mask`` as the native ``SearchConfig.root_features``: a bool per feature."""
    if mask.dtype != bool or mask.shape != (n_features,):
        raise ValueError(
            f"root_features must be a bool array of shape ({n_features},), got dtype "
            f"{mask.dtype} shape {mask.shape}"
        )
    out: list[bool] = mask.tolist()
    return out


def _better(best: _Sub, feature: int, left: _Sub, right: _Sub) -> _Sub:
    """The better of ``best`` and the split on ``feature`` over ``left`` and ``right``."""
    value = left.value + right.value
    if left.tree is None or right.tree is None or not value < best.value:
        return best
    return _Sub(Tree.split(feature, left.tree, right.tree), value, value, None)


def _class_min(costs: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """The least of ``costs`` (classes on the first axis) over the ``classes`` allowed
    (``inf`` when none is)."""
    allowed = np.flatnonzero(classes)
    if allowed.size == 0:
        return np.full(costs.shape[1:], math.inf)
    out: np.ndarray = costs[allowed[0]].copy()
    for k in allowed[1:]:
        np.minimum(out, costs[k], out=out)
    return out


def _renumbered(tree: Tree, columns: np.ndarray) -> Tree:
    """``tree`` over the sub-table's columns, in the dataset's feature numbering."""
    if tree.is_leaf:
        return tree
    feature, left, right = tree.as_split()
    return Tree.split(
        int(columns[feature]), _renumbered(left, columns), _renumbered(right, columns)
    )


# -------------------------------------------------------------------------------------------
# the public call


def price(
    dataset: Dataset,
    *,
    max_depth: int,
    row_costs: np.ndarray,
    leaf_cost: float = 0.0,
    group_costs: Sequence[tuple[np.ndarray, float]] = (),
    forbidden: np.ndarray | None = None,
    min_leaf_weight: float = 0.0,
    rules: Sequence[PositionRule] = (),
    time_limit: float | None = None,
) -> Priced:
    """The tree of least value over the domain (module docstring), exactly.

    Parameters
    ----------
    dataset : Dataset
        Binary features, class codes and weights: the weights decide which splits are effective
        and what a leaf's support is; the costs are all in ``row_costs``.
    max_depth : int
        Most splits on a root-to-leaf path (``>= 0``).
    row_costs : ndarray, shape (n_samples, n_classes)
        ``row_costs[i, k]``: what predicting class ``k`` for row ``i`` adds (absolute units,
        already weighted, any sign); a row of weight 0 must cost 0. Each row's costs are below
        their maximum at one class at most (every 2-class cost): a weighted misclassification.
    leaf_cost : float
        Added per leaf, ``>= 0``.
    group_costs : sequence of (int array, float)
        Each a group of binary feature indices and its cost ``>= 0``, paid once when the tree
        tests any feature of the group.
    forbidden : bool array, shape (n_features,), optional
        Features no split may test.
    min_leaf_weight : float
        Every leaf receives at least this much of the dataset's weight (0: no constraint).
    rules : sequence of PositionRule
        Branching decisions every tree meets; contradictory ones make the domain empty.
    time_limit : float, optional
        Seconds; on reaching it the answer is the best tree so far (maybe none) and a valid
        lower bound.

    Returns
    -------
    Priced
        With no time limit ``status`` is ``optimal`` (``value == lower_bound``, the least value)
        or ``infeasible`` (no tree in the domain: ``tree`` None, both ``inf``).

    Raises
    ------
    TypeError, ValueError
        On an invalid argument (named), a cost that is not a weighted misclassification
        (``row_costs``), or a ``min_leaf_weight`` beside costs the search does not take.
    RuntimeError
        If the returned tree's measured value differs from the search's or it leaves the domain
        (a bug).
    """
    began = time.perf_counter()
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be an odtkit Dataset, got {type(dataset).__name__}")
    p, K = dataset.n_features, int(dataset.n_classes)
    depth = check_depth(max_depth, allow_none=False, n_features=p)
    costs = _check_costs(row_costs, dataset)
    leaf_cost = check_lambda(leaf_cost, "leaf_cost")
    groups = _check_groups(group_costs, p)
    allowed = ~_check_forbidden(forbidden, p)
    floor = _number(min_leaf_weight, "min_leaf_weight")
    limit = check_positive_number(time_limit, "time_limit")
    checked = _check_rules(rules, p, K)
    deadline = math.inf if limit is None else began + limit
    prepared = _prepare_rules(checked, depth)
    if prepared is None:
        return Priced(None, math.inf, math.inf, Status.INFEASIBLE, 0, time.perf_counter() - began)
    pricer = _Pricer(
        dataset,
        costs,
        leaf_cost=leaf_cost,
        max_depth=depth,
        min_leaf_weight=floor,
        rules=prepared,
        deadline=deadline,
    )
    tree, value, bound, stopped = _group_search(pricer, allowed, groups)
    spent = time.perf_counter() - began
    if tree is None:
        status = stopped or Status.INFEASIBLE
        return Priced(None, math.inf, bound, status, pricer.dp_calls, spent)
    measured = _measured(tree, dataset, costs, leaf_cost, groups)
    if abs(measured - value) > 1e-7 * max(1.0, abs(measured), float(np.abs(costs).sum())):
        raise RuntimeError(
            f"pricing computed value {value!r} but its tree measures {measured!r}: this is a bug"
        )
    _check_domain(tree, dataset, allowed, floor, depth, checked)
    if stopped is None:
        return Priced(tree, measured, measured, Status.OPTIMAL, pricer.dp_calls, spent)
    return Priced(tree, measured, min(bound, measured), stopped, pricer.dp_calls, spent)


def _group_search(
    pricer: _Pricer, allowed: np.ndarray, groups: list[tuple[np.ndarray, float]]
) -> tuple[Tree | None, float, float, Status | None]:
    """Best-first branch-and-bound over the groups of positive cost (module docstring):
    ``(tree, its value, lower bound, stopping status or None)``."""
    costly = [(g, c) for g, c in groups if c > 0 and g.size]
    best: tuple[Tree | None, float] = (None, math.inf)
    # open nodes: (bound, order, forbidden groups, paid groups)
    heap: list[tuple[float, int, frozenset[int], frozenset[int]]] = [
        (-math.inf, 0, frozenset(), frozenset())
    ]
    made = 1
    stopped: Status | None = None
    open_bound = math.inf  # bounds of nodes a limit left unresolved
    while heap:
        node_bound, order, banned, paid = heap[0]
        if node_bound >= best[1] - _CLOSE * max(1.0, abs(best[1])):
            break  # best-first: nothing open can beat the incumbent
        # (the root always runs: under a passed deadline it still bounds every tree)
        if order > 0 and time.perf_counter() >= pricer.deadline:
            stopped = stopped or Status.TIME_LIMIT
            break
        heapq.heappop(heap)
        features = allowed.copy()
        for g in banned:
            features[costly[g][0]] = False
        sub = pricer.solve(features)
        fixed = sum(costly[g][1] for g in paid)
        relaxed = max(node_bound, sub.bound + fixed)
        if sub.tree is not None:
            used = sub.tree.features_used()
            tested = [
                g for g, (members, _) in enumerate(costly) if used.intersection(members.tolist())
            ]
            value = sub.value + sum(costly[g][1] for g in tested)
            if value < best[1]:
                best = (sub.tree, value)
        if sub.stopped is not None:
            stopped = stopped or sub.stopped
            open_bound = min(open_bound, relaxed)
            break
        if sub.tree is None:
            continue  # no tree in this part
        undecided = sorted(
            (g for g in tested if g not in paid), key=lambda g: costly[g][1], reverse=True
        )
        # the node's trees: "tests none of g_1", "tests g_1, not g_2", ...; "tests all of them"
        # is closed by sub.tree (its value is at most that part's relaxation)
        for i, g in enumerate(undecided):
            prefix = frozenset(undecided[:i])
            extra = sum(costly[h][1] for h in prefix)
            heapq.heappush(heap, (relaxed + extra, made, banned | {g}, paid | prefix))
            made += 1
    remaining = min((entry[0] for entry in heap), default=math.inf)
    bound = min(best[1], remaining, open_bound)
    if stopped is None and heap:
        # stopped by the incumbent: whatever is open cannot beat it
        bound = best[1]
    return best[0], best[1], bound, stopped


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    out = float(value)
    if not math.isfinite(out) or out < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return out


def _check_costs(row_costs: Any, dataset: Dataset) -> np.ndarray:
    """``row_costs`` as a float (n, K) matrix: finite, 0 on rows of weight 0."""
    try:
        costs = np.asarray(row_costs, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("row_costs must be a matrix of numbers") from None
    shape = (dataset.n_samples, int(dataset.n_classes))
    if costs.shape != shape:
        raise ValueError(
            f"row_costs must have one row per sample and one column per class, shape {shape}, "
            f"got {costs.shape}"
        )
    if not np.isfinite(costs).all():
        raise ValueError("row_costs must hold finite numbers")
    idle = dataset.weights == 0
    if idle.any() and np.abs(costs[idle]).max() > 0:
        row = int(np.flatnonzero(idle & (np.abs(costs).max(axis=1) > 0))[0])
        raise ValueError(
            f"row_costs: row {row} has sample weight 0 but a nonzero cost (no tree states its "
            "prediction: give it cost 0)"
        )
    return costs


def _check_groups(group_costs: Any, n_features: int) -> list[tuple[np.ndarray, float]]:
    out = []
    for item in group_costs:
        try:
            members, cost = item
        except (TypeError, ValueError):
            raise TypeError(
                f"group_costs must hold (feature indices, cost) pairs, got {item!r}"
            ) from None
        indices = np.asarray(members)
        if indices.size and (
            indices.ndim != 1
            or indices.dtype.kind not in "iu"
            or indices.min() < 0
            or indices.max() >= n_features
        ):
            raise ValueError(
                f"group_costs: a group must be a 1-d array of feature indices in "
                f"0..{n_features - 1}, got {members!r}"
            )
        out.append((np.unique(indices.astype(np.int64)), _number(cost, "group_costs' cost")))
    return out


def _check_forbidden(forbidden: Any, n_features: int) -> np.ndarray:
    if forbidden is None:
        return np.zeros(n_features, dtype=bool)
    mask = np.asarray(forbidden)
    if mask.dtype != bool or mask.shape != (n_features,):
        raise ValueError(
            f"forbidden must be a bool array of shape ({n_features},), got dtype {mask.dtype} "
            f"shape {mask.shape}"
        )
    return mask


def _check_rules(rules: Any, n_features: int, n_classes: int) -> list[PositionRule]:
    out = list(rules)
    for rule in out:
        if not isinstance(rule, PositionRule):
            raise TypeError(f"rules must hold PositionRule values, got {rule!r}")
        if rule.feature is not None and rule.feature >= n_features:
            raise ValueError(f"rules: {rule!r} names feature {rule.feature} of {n_features}")
        if rule.klass is not None and rule.klass >= n_classes:
            raise ValueError(f"rules: {rule!r} names class {rule.klass} of {n_classes}")
    return out


def _measured(
    tree: Tree,
    dataset: Dataset,
    costs: np.ndarray,
    leaf_cost: float,
    groups: list[tuple[np.ndarray, float]],
) -> float:
    """The value of ``tree``, measured on the tree itself (module docstring)."""
    predicted = tree.predict(dataset.X)
    value = float(costs[np.arange(dataset.n_samples), predicted].sum())
    value += leaf_cost * tree.n_leaves
    used = tree.features_used()
    value += sum(c for g, c in groups if used.intersection(g.tolist()))
    return value


def _check_domain(
    tree: Tree,
    dataset: Dataset,
    allowed: np.ndarray,
    floor: float,
    depth: int,
    rules: Sequence[PositionRule],
) -> None:
    """RuntimeError when ``tree`` leaves the domain (a bug)."""
    X = dataset.X[dataset.weights > 0]
    splits = tree.n_leaves - 1
    broken = ""
    if tree.depth > depth:
        broken = f"depth {tree.depth} > max_depth {depth}"
    elif any(not allowed[j] for j in tree.features_used()):
        broken = "a forbidden feature"
    elif len(effective_splits(tree, X)) != splits:
        broken = "a split with a side of no weight"
    elif floor > 0:
        support = np.bincount(
            tree.apply(dataset.X), weights=dataset.weights, minlength=tree.n_leaves
        ).min()
        if support < floor - CONSTRAINT_TOLERANCE * max(1.0, floor):
            broken = f"a leaf of weight {support:g} < min_leaf_weight {floor:g}"
    elif not all(_meets(tree, rule) for rule in rules):
        broken = "a broken PositionRule"
    if broken:
        raise RuntimeError(f"pricing returned a tree with {broken}: this is a bug")


def _at(tree: Tree, node: int) -> Tree | None:
    """The subtree at heap position ``node`` (None when the tree has no such node)."""
    here: Tree | None = tree
    for bit in bin(node)[3:]:  # the path below the root, most significant first
        if here is None or here.is_leaf:
            return None
        here = here.right if bit == "1" else here.left
    return here


def _meets(tree: Tree, rule: PositionRule) -> bool:
    """Whether ``tree`` meets ``rule``."""
    here = _at(tree, rule.node)
    has = here is not None and (
        here.feature == rule.feature if rule.feature is not None else here.label == rule.klass
    )
    return has == rule.required

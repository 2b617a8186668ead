"""The Rashomon set: every tree within ``epsilon`` of the optimum (docs/rashomon.md §1).

:func:`rashomon` validates the problem and asks the native core
(:func:`odtkit.core.rashomon.build_rashomon`) for the set, kept compactly in the search's own
memo; :class:`RashomonSet` is the reading of it people ask for: its exact size, its trees in
objective order, uniform samples, the predictions of many trees at once, how the good trees
disagree, which features they use and rely on, a histogram, a table, plots and a plain summary.

:class:`RashomonSet` only reads the core through what :class:`RashomonCore` declares (count,
histogram, tree, codes, objectives, count_without and its attributes), so any object with
those can back it (the tests use a list of trees from the brute-force oracle).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator, Sequence
from fractions import Fraction
from numbers import Integral
from typing import Any, overload

import numpy as np
import pandas as pd

from odtkit._validation import (
    as_binary_matrix,
    check_positive_number,
)
from odtkit.core.rashomon import PAD, RashomonCore, RashomonProblem, build_rashomon
from odtkit.core.search import OBJECTIVE_TOLERANCE
from odtkit.datasets import Dataset
from odtkit.tree import Tree

__all__ = [
    "MAX_PREDICTION_CELLS",
    "PAD",
    "RashomonCore",
    "RashomonSet",
    "predict_codes",
    "rashomon",
]

#: ``trees=None`` is refused when (trees x rows) exceeds this: ask for a sample (``trees=k``).
MAX_PREDICTION_CELLS = 2_000_000


#: Trees decoded / evaluated per batch, and cells (trees x rows) per vectorized evaluation.
_BATCH_TREES = 4096
_BATCH_CELLS = 1 << 20


def rashomon(
    dataset: Dataset,
    *,
    lam: float,
    max_depth: int | None = None,
    epsilon: float = 0.05,
    absolute: bool = False,
    leaves: str = "any",
    constraints: Any = None,
    sources: Sequence[str] | None = None,
    time_limit: float | None = None,
    memory_limit_mb: float | None = None,
    progress: bool | None = None,
    count_only: bool = False,
) -> RashomonSet:
    """Every tree whose objective is within ``epsilon`` of the optimum: the Rashomon set.

    The set is exactly ``{T : R(T) <= bound + 1e-9}`` over the trees of depth <= ``max_depth``
    whose every split is admissible (both sides receive training weight ``> 1e-12 W``), with
    ``R(T) = misclassified(T)/W + lam * leaves(T)`` and ``bound = (1 + epsilon) * OPT``
    (``OPT + epsilon`` with ``absolute=True``), OPT certified by the native search over the
    same space (docs/rashomon.md §1). The set is built from the search's memo and never
    materialised: :meth:`RashomonSet.count` is exact without enumerating.

    With ``constraints`` the set is ``{T meeting every constraint : R(T) <= bound + 1e-9}``
    and OPT is the constrained optimum, certified by the search with the same constraints
    (docs/rashomon.md §6): "every good tree that respects the constraints".

    Parameters
    ----------
    dataset : Dataset
        Binary features, class codes, optional sample weights.
    lam : float
        Penalty per leaf, ``>= 0``.
    max_depth : int, optional
        Most splits on a root-to-leaf path (``None``: unlimited; above the number of features
        it is the same space).
    epsilon : float
        Relative slack (``bound = (1 + epsilon) * OPT``), or with ``absolute`` the additive
        one (``bound = OPT + epsilon``); finite, ``>= 0``.
    absolute : bool
        Read ``epsilon`` as an additive slack on the objective.
    leaves : {"any", "majority"}
        ``"any"``: a leaf may predict any class; ``"majority"``: only a class of maximal
        weight among its training rows (every tied class is allowed).
    constraints : list of constraints, optional
        Side constraints of :mod:`odtkit.constraints` (or a ``ResolvedConstraints`` of this
        dataset), met as :meth:`~odtkit.constraints.ResolvedConstraints.violations` measures
        them: :class:`~odtkit.constraints.MinLeafSupport`,
        :class:`~odtkit.constraints.ForbidFeatures`, :class:`~odtkit.constraints.MaxLeaves`
        and :class:`~odtkit.constraints.FeatureBudget` with ``per="split"`` (one split budget,
        as the search combines them). Any other is refused with a ValueError naming it.
        Constraints no tree meets give an empty set with ``status == "infeasible"``.
    sources : sequence of str, optional
        The raw column of each binary feature, so a constraint can name a column
        (:func:`odtkit.constraints.resolve`).
    time_limit, memory_limit_mb : float, optional
        Stop the build after this many seconds / above this much memory: the set returned is
        then a valid partial set (every member within the bound, its exact count known) with
        ``complete=False`` and ``status`` saying which limit stopped it. Ctrl-C does the same.
    progress : bool, optional
        A live line on stderr once the build runs for 2 s; None: when stderr is a terminal.
    count_only : bool
        Keep the counts (:meth:`RashomonSet.count`, :meth:`RashomonSet.objective_histogram`)
        and not the trees, in a fraction of the memory and time at a large ``epsilon``; any
        read of the trees (indexing, iteration, samples, predictions, ``feature_usage``) then
        raises ValueError. A stopped count-only set counts the trees its build reached, plus
        the optimal tree when no key of its histogram could hold it.

    Returns
    -------
    RashomonSet
    """
    problem = RashomonProblem(
        dataset,
        lam=lam,
        max_depth=max_depth,
        epsilon=epsilon,
        absolute=absolute,
        leaves=leaves,
        constraints=constraints,
        sources=sources,
    )
    time_limit = check_positive_number(time_limit, "time_limit")
    memory_limit_mb = check_positive_number(memory_limit_mb, "memory_limit_mb")
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be a bool or None, got {type(progress).__name__}")
    if not isinstance(count_only, (bool, np.bool_)):
        raise TypeError(f"count_only must be a bool, got {type(count_only).__name__}")
    core = build_rashomon(
        problem,
        time_limit=time_limit,
        memory_limit_mb=memory_limit_mb,
        progress=None if progress is None else bool(progress),
        count_only=bool(count_only),
    )
    return RashomonSet(core)


def _rng(seed: object) -> random.Random:
    """A Python generator (its ``randrange`` draws uniformly below any big integer)."""
    if seed is None:
        return random.Random()
    if isinstance(seed, np.random.Generator):
        return random.Random(int(seed.integers(2**63)))
    if isinstance(seed, random.Random):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, Integral):
        raise TypeError(
            f"seed must be None, an int or a numpy Generator, got {type(seed).__name__}"
        )
    return random.Random(int(seed))


def _subtree_ends(codes: np.ndarray) -> np.ndarray:
    """``end[t, i]``: the position just after the subtree that starts at ``codes[t, i]``.

    One right-to-left sweep over the columns, vectorized over the trees: a leaf (or the
    padding) ends at ``i + 1``; a split's left subtree starts at ``i + 1``, its right one where
    the left one ends, and the split ends where its right subtree does. Column ``L`` is a
    sentinel so a malformed code cannot index past the matrix.
    """
    n_trees, width = codes.shape
    end = np.full((n_trees, width + 1), width, dtype=np.int64)
    rows = np.arange(n_trees)
    for i in range(width - 1, -1, -1):
        right_start = end[:, i + 1]
        end[:, i] = np.where(codes[:, i] >= 0, end[rows, right_start], i + 1)
    return end


def predict_codes(codes: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Class codes (n_trees, n_rows) of the trees of a padded pre-order code matrix on ``X``.

    All trees and the distinct rows descend together one level per step (at most depth + 1
    steps), each step a handful of whole-array operations: no Python loop over trees or rows.
    """
    codes = np.asarray(codes, dtype=np.int64)
    n_trees, width = codes.shape
    if n_trees == 0 or X.shape[0] == 0:
        return np.empty((n_trees, X.shape[0]), dtype=np.int64)
    # binary rows repeat (at most 2**p distinct): evaluate each distinct row once
    X, inverse = np.unique(X, axis=0, return_inverse=True)
    n_rows = X.shape[0]
    out = np.empty((n_trees, n_rows), dtype=np.int64)
    end = _subtree_ends(codes)
    step = max(1, _BATCH_CELLS // n_rows)
    row_index = np.arange(n_rows)[None, :]
    for lo in range(0, n_trees, step):
        block, ends = codes[lo : lo + step], end[lo : lo + step]
        tree_index = np.arange(block.shape[0])[:, None]
        pos = np.zeros((block.shape[0], n_rows), dtype=np.int64)
        while True:
            node = block[tree_index, pos]
            split = node >= 0
            if not split.any():
                break
            goes_right = X[row_index, np.where(split, node, 0)]
            left = np.minimum(pos + 1, width)
            child = np.where(goes_right, ends[tree_index, left], left)
            pos = np.where(split, child, pos)
        out[lo : lo + step] = -node - 1
    return out[:, inverse.ravel()]


_LEAF_CACHE: dict[int, Tree] = {}


def _decode(code: np.ndarray) -> Tree:
    """The tree of one padded pre-order code row (the inverse of ``encode_tree``).

    Built right to left on a stack (a split pops its left, then its right subtree), with one
    shared immutable leaf per class: iteration over large sets decodes ~3x faster than the
    recursive ``decode_tree``.
    """
    stack: list[Tree] = []
    for v in reversed(code[code != PAD].tolist()):
        if v < 0:
            leaf = _LEAF_CACHE.get(v)
            if leaf is None:
                leaf = _LEAF_CACHE.setdefault(v, Tree.leaf(-v - 1))
            stack.append(leaf)
        else:
            if len(stack) < 2:
                raise ValueError(f"malformed tree code {code.tolist()}")
            left = stack.pop()
            stack.append(Tree(feature=v, left=left, right=stack.pop()))
    if len(stack) != 1:
        raise ValueError(f"malformed tree code {code.tolist()}")
    return stack[0]


def _stack_codes(parts: list[np.ndarray]) -> np.ndarray:
    """Stack code matrices of different widths (padding each to the widest)."""
    if not parts:
        return np.full((0, 1), PAD, dtype=np.int32)
    width = max(part.shape[1] for part in parts)
    out = np.full((sum(part.shape[0] for part in parts), width), PAD, dtype=np.int32)
    row = 0
    for part in parts:
        out[row : row + part.shape[0], : part.shape[1]] = part
        row += part.shape[0]
    return out


class RashomonSet(Sequence[Tree]):
    """The Rashomon set of a problem, read from a compact core (see :func:`rashomon`).

    Every summary is defined in docs/rashomon.md §3.

    A read-only sequence of :class:`~odtkit.tree.Tree` in objective order: by objective
    ascending, ties by fewer leaves, then a fixed canonical order. Index ``i`` addresses the
    ``i``-th tree; :meth:`count` is exact (a Python int, possibly far above ``2**64``) and
    never enumerates. ``len()`` works up to ``sys.maxsize`` trees.

    Attributes
    ----------
    optimum, optimal_tree, lower_bound, bound, complete, status, stats, lam, max_depth, epsilon,
    absolute, leaves, dataset, constraints, binarizer
        As in the core: OPT (certified when ``status == "optimal"``; infinite when
        ``status == "infeasible"``: no tree meets the constraints), a tree achieving it, a
        valid lower bound on OPT, the bound the set uses (before the 1e-9 tolerance), whether
        the set is exactly the definition (False: a limit or Ctrl-C stopped the build and the
        set is a valid partial one), the problem's parameters, the build statistics and the
        side constraints every tree meets (None: none). ``binarizer``: the Binarizer whose
        features the trees index, when an estimator built the set from a raw table over
        features of its own (``rashomon(X=)`` after the exact search); else None.
    """

    def __init__(self, core: RashomonCore) -> None:
        for name in ("count", "histogram", "tree", "codes", "objectives", "count_without"):
            if not callable(getattr(core, name, None)):
                raise TypeError(f"core must have a {name}() method (as RashomonCore has)")
        self._core = core
        #: The Binarizer whose features the trees index, when the set was built from a raw
        #: table over features of its own (``OptimalTreeClassifier.rashomon(X=...)`` after a
        #: fit by the exact search); None otherwise.
        self.binarizer: Any = None

    # the core's attributes -------------------------------------------------------------------
    @property
    def core(self) -> RashomonCore:
        return self._core

    dataset = property(lambda self: self._core.dataset, doc="The training data.")
    lam = property(lambda self: float(self._core.lam), doc="Penalty per leaf.")
    max_depth = property(lambda self: self._core.max_depth, doc="Depth limit (None: none).")
    epsilon = property(lambda self: float(self._core.epsilon), doc="The slack.")
    absolute = property(lambda self: bool(self._core.absolute), doc="Additive slack?")
    leaves = property(lambda self: str(self._core.leaves), doc='"any" or "majority".')
    optimum = property(lambda self: float(self._core.optimum), doc="OPT (normalized).")
    optimal_tree = property(
        lambda self: self._core.optimal_tree, doc="A tree achieving OPT (None: none found)."
    )
    lower_bound = property(lambda self: float(self._core.lower_bound), doc="Bound on OPT.")
    bound = property(lambda self: float(self._core.bound), doc="The set's objective bound.")
    complete = property(lambda self: bool(self._core.complete), doc="Exactly the definition?")
    status = property(lambda self: str(self._core.status), doc="How the build ended.")
    stats = property(lambda self: dict(self._core.stats), doc="Build statistics.")
    constraints = property(
        lambda self: getattr(self._core, "constraints", None),
        doc="The side constraints every tree meets (a ResolvedConstraints; None: none).",
    )

    # size and access ---------------------------------------------------------------------------
    def count(self) -> int:  # type: ignore[override]  # Sequence.count(value) is meaningless here
        """The exact number of trees in the set (a Python int; no enumeration)."""
        return int(self._core.count())

    def __len__(self) -> int:
        n = self.count()
        if n > sys.maxsize:
            raise OverflowError(
                f"the Rashomon set holds {n} trees, more than len() can return; use count()"
            )
        return n

    def __bool__(self) -> bool:
        return self.count() > 0

    def _index(self, index: object, count: int) -> int:
        if isinstance(index, bool) or not isinstance(index, Integral):
            raise TypeError(f"index must be an integer or a slice, got {type(index).__name__}")
        i = int(index)
        if i < 0:
            i += count
        if not 0 <= i < count:
            raise IndexError(f"index {int(index)} out of range for a set of {count} trees")
        return i

    @overload
    def __getitem__(self, index: int) -> Tree: ...
    @overload
    def __getitem__(self, index: slice) -> list[Tree]: ...
    def __getitem__(self, index: int | slice) -> Tree | list[Tree]:
        count = self.count()
        if isinstance(index, slice):
            start, stop, step = index.indices(count)
            if step == 1:
                return list(self._iter_range(start, stop))
            return [self._core.tree(i) for i in range(start, stop, step)]
        return self._core.tree(self._index(index, count))

    def _iter_range(self, start: int, stop: int) -> Iterator[Tree]:
        for lo in range(start, stop, _BATCH_TREES):
            for code in self._core.codes(lo, min(stop, lo + _BATCH_TREES)):
                yield _decode(code)

    def __iter__(self) -> Iterator[Tree]:
        """The trees in objective order, decoded from the core's codes in batches."""
        return self._iter_range(0, self.count())

    def __contains__(self, tree: object) -> bool:
        """Whether ``tree`` is in the set, decided by re-scoring it: its depth, splits, leaves
        and side constraints as the set has them and its objective within the bound. A partial
        set (``complete`` False) holds only the trees its build reached, so it also asks the
        core whether the tree was found (one walk down the tree's own path through the memo):
        never a scan of the set."""
        if not isinstance(tree, Tree) or not self._in_space(tree):
            return False
        from odtkit import metrics

        if metrics.objective(tree, self.dataset, lam=self.lam) > self.bound + OBJECTIVE_TOLERANCE:
            return False
        if self.complete:
            return True
        return self._found(tree) is not None

    def _found(self, tree: Tree) -> int | None:
        """The index of ``tree`` among the core's trees (None: not there), by the core's
        ``index_of`` when it has one, else (a test double over a list) by scanning."""
        index_of = getattr(self._core, "index_of", None)
        if callable(index_of):
            found: int | None = index_of(_encode(tree))
            return found
        return next((i for i, member in enumerate(self) if member == tree), None)

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        """The position of tree ``value`` in the set's order (ValueError when it is not a
        member), found without listing the set."""
        i = self._found(value) if isinstance(value, Tree) and value in self else None
        if i is None:
            raise ValueError("the tree is not in the Rashomon set")
        count = self.count()
        lo = max(start + count, 0) if start < 0 else start
        hi = count if stop is None else (max(stop + count, 0) if stop < 0 else stop)
        if not lo <= i < hi:
            raise ValueError("the tree is not in the Rashomon set within the range asked")
        return i

    def count_upper_bound(self) -> int:
        """An upper bound on the size of the full set: :meth:`count` for a complete set; for a
        partial one a bound that no build is needed for
        (:func:`odtkit.core.rashomon.count_upper_bound`), never below :meth:`count`."""
        if self.complete:
            return self.count()
        upper = getattr(self._core, "count_upper_bound", None)
        return self.count() if upper is None else max(int(upper), self.count())

    def _in_space(self, tree: Tree) -> bool:
        """Depth, admissible splits, (``leaves="majority"``) majority leaves and the side
        constraints."""
        data = self.dataset
        if tree.features_used() and max(tree.features_used()) >= data.n_features:
            return False
        if self.max_depth is not None and tree.depth > self.max_depth:
            return False
        floor = 1e-12 * data.total_weight
        class_weights = np.zeros((data.n_samples, data.n_classes))
        class_weights[np.arange(data.n_samples), data.y] = data.weights

        def walk(node: Tree, rows: np.ndarray) -> bool:
            if node.is_leaf:
                label = node.as_leaf()
                if label >= data.n_classes:
                    return False
                if self.leaves == "majority":
                    w = class_weights[rows].sum(axis=0)
                    return bool(w[label] >= w.max() - floor)
                return True
            feature, left_node, right_node = node.as_split()
            right = rows & data.X[:, feature]
            left = rows & ~data.X[:, feature]
            if data.weights[left].sum() <= floor or data.weights[right].sum() <= floor:
                return False
            return walk(left_node, left) and walk(right_node, right)

        if not walk(tree, np.ones(data.n_samples, dtype=bool)):
            return False
        constraints = self.constraints
        return constraints is None or not constraints.violations(tree, data)

    def __repr__(self) -> str:
        kind = f"OPT + {self.epsilon:g}" if self.absolute else f"(1 + {self.epsilon:g}) OPT"
        state = "" if self.complete else f", partial ({self.status})"
        if self.status == "infeasible":
            state = ", infeasible: no tree meets the constraints"
        return (
            f"RashomonSet({self.count()} trees with R <= {kind} = {self.bound:.6g}, "
            f"OPT = {self.optimum:.6g}, lam = {self.lam:g}, max_depth = {self.max_depth}{state})"
        )

    # sampling ------------------------------------------------------------------------------
    def _sample_indices(self, k: object, seed: object, replace: bool) -> list[int]:
        if isinstance(k, bool) or not isinstance(k, Integral):
            raise TypeError(f"k must be a non-negative integer, got {type(k).__name__}")
        k = int(k)
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        count = self.count()
        rng = _rng(seed)
        if k and count == 0:
            raise ValueError("cannot sample from an empty Rashomon set")
        if replace:
            return [rng.randrange(count) for _ in range(k)]
        if k > count:
            raise ValueError(
                f"k = {k} exceeds the {count} trees of the set (sample with replace=True)"
            )
        if count <= sys.maxsize:
            return rng.sample(range(count), k)
        # a set this large: k distinct draws by rejection (a repeat has probability < k/2**63)
        chosen: dict[int, None] = {}
        while len(chosen) < k:
            chosen.setdefault(rng.randrange(count))
        return list(chosen)

    def sample(self, k: int, seed: Any = None, *, replace: bool = False) -> list[Tree]:
        """``k`` trees drawn uniformly from the set.

        Parameters
        ----------
        k : int
            How many trees (``<= count()`` without replacement).
        seed : int, numpy Generator or None
            Reproducible draws from an int.
        replace : bool
            Draw with replacement (the default draws ``k`` distinct trees).

        Returns
        -------
        list of Tree
            In the order drawn. Each index is drawn uniformly in ``range(count())`` with
            Python integers, so the draw is uniform even above ``2**64`` trees.
        """
        return [self._core.tree(i) for i in self._sample_indices(k, seed, replace)]

    # summaries -------------------------------------------------------------------------------
    def objective_histogram(self) -> pd.DataFrame:
        """One row per exact (misclassified weight, leaves) pair of the set, in objective order.

        Columns ``misclassified`` (weight), ``leaves``, ``objective`` and ``count`` (Python
        ints, object dtype); the counts sum to :meth:`count`.
        """
        return self._core.histogram().copy()

    def _resolve_trees(
        self, trees: object, seed: object, n_rows: int, what: str
    ) -> tuple[list[int], np.ndarray]:
        """The indices asked for and their padded code matrix."""
        count = self.count()
        if trees is None:
            if count * max(n_rows, 1) > MAX_PREDICTION_CELLS:
                raise ValueError(
                    f"{what} of all {count} trees on {n_rows} rows would need "
                    f"{count * n_rows} cells, above {MAX_PREDICTION_CELLS}: pass trees=k for "
                    "a uniform sample of k trees, or a sequence of tree indices"
                )
            indices = list(range(count))
            return indices, self._range_codes(0, count)
        if isinstance(trees, Integral) and not isinstance(trees, bool):
            k = int(trees)
            if k < 0:
                raise ValueError(f"trees must be >= 0, got {k}")
            if k >= count:
                return list(range(count)), self._range_codes(0, count)
            indices = sorted(self._sample_indices(k, seed, replace=False))
        elif isinstance(trees, (Sequence, np.ndarray)) and not isinstance(trees, (str, bytes)):
            indices = [self._index(i, count) for i in trees]
        else:
            raise TypeError(
                "trees must be None (all), an int (a uniform sample of that many) or a "
                f"sequence of tree indices, got {type(trees).__name__}"
            )
        parts = [self._core.codes(i, i + 1) for i in indices]
        return indices, _stack_codes(parts)

    def _range_codes(self, start: int, stop: int) -> np.ndarray:
        parts = [
            np.asarray(self._core.codes(lo, min(stop, lo + _BATCH_TREES)))
            for lo in range(start, stop, _BATCH_TREES)
        ]
        return _stack_codes(parts)

    def _rows(self, X: object) -> np.ndarray:
        if X is None:
            X_train: np.ndarray = self.dataset.X
            return X_train
        Xb = as_binary_matrix(X, "X")
        if Xb.shape[1] != self.dataset.n_features:
            raise ValueError(
                f"X has {Xb.shape[1]} features but the set's data has {self.dataset.n_features}"
            )
        return Xb

    def predictions(self, X: Any = None, *, trees: Any = None, seed: Any = None) -> np.ndarray:
        """Class codes predicted by many trees of the set at once.

        Parameters
        ----------
        X : binary array-like (n_rows, p), optional
            Rows to predict (default: the training rows).
        trees : None, int or sequence of int
            ``None``: every tree, in objective order (refused above
            ``MAX_PREDICTION_CELLS`` trees x rows); an int ``k``: a uniform sample of ``k``
            distinct trees (all of them when ``k >= count()``), in objective order; a sequence:
            those indices, in that order.
        seed : int, numpy Generator or None
            For ``trees=k``.

        Returns
        -------
        ndarray of int64, shape (n_trees, n_rows)
            Row ``t`` equals ``tree.predict(X)`` of the ``t``-th tree asked for.
        """
        Xb = self._rows(X)
        _, codes = self._resolve_trees(trees, seed, Xb.shape[0], "predictions")
        return predict_codes(codes, Xb)

    def _class_names(self) -> list[str]:
        return [str(c) for c in np.asarray(self.dataset.classes).tolist()]

    def disagreement(self, X: Any = None, *, trees: Any = None, seed: Any = None) -> pd.DataFrame:
        """How the good trees disagree, row by row.

        Parameters
        ----------
        X, trees, seed
            As in :meth:`predictions`.

        Returns
        -------
        DataFrame, one row per row of ``X``
            ``count_<class>``: trees predicting each class; ``majority``: the class most trees
            predict (ties: the smallest code), as a class value; ``disagreement``: the share
            of trees that do not predict it (0: all agree); ``optimal``: the optimal tree's
            prediction; ``optimal_share``: the share of trees agreeing with it;
            ``optimal_contested``: True when at least half the trees predict another class.
        """
        Xb = self._rows(X)
        predictions = self.predictions(Xb, trees=trees, seed=seed)
        n_trees = predictions.shape[0]
        K = self.dataset.n_classes
        counts = np.stack([(predictions == k).sum(axis=0) for k in range(K)], axis=1)
        names = self._class_names()
        classes = np.asarray(self.dataset.classes)
        frame = pd.DataFrame(counts, columns=[f"count_{name}" for name in names])
        majority = counts.argmax(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            frame["majority"] = classes[majority]
            frame["disagreement"] = 1.0 - counts.max(axis=1) / n_trees
            if self.optimal_tree is None:  # a build stopped before it found any tree
                frame["optimal"] = None
                frame["optimal_share"] = np.nan
                frame["optimal_contested"] = False
                return frame
            optimal = self.optimal_tree.predict(Xb)
            agree = counts[np.arange(Xb.shape[0]), optimal]
            frame["optimal"] = classes[optimal]
            frame["optimal_share"] = agree / n_trees
        frame["optimal_contested"] = 2 * (n_trees - agree) >= n_trees if n_trees else False
        return frame

    def feature_usage(self) -> pd.DataFrame:
        """Exact share of the set's trees that split on each feature (from ``count_without``).

        Returns
        -------
        DataFrame indexed by feature name
            ``trees``: how many trees use the feature (Python int); ``share``: that count over
            :meth:`count` (an exact fraction, as a float; NaN for an empty set);
            ``in_optimal``: whether the optimal tree uses it.
        """
        count = self.count()
        used = set() if self.optimal_tree is None else self.optimal_tree.features_used()
        names = list(self.dataset.feature_names)
        trees = [count - int(self._core.count_without(j)) for j in range(len(names))]
        share = [float(Fraction(t, count)) if count else float("nan") for t in trees]
        return pd.DataFrame(
            {
                "trees": pd.Series(trees, index=names, dtype=object),
                "share": pd.Series(share, index=names, dtype=float),
                "in_optimal": pd.Series([j in used for j in range(len(names))], index=names),
            }
        ).rename_axis("feature")

    def variable_importance(self, *, trees: Any = None, seed: Any = None) -> pd.DataFrame:
        """Model-class reliance on each feature across the set (or a sample of it).

        For a tree ``T`` and a binary feature ``j`` the reliance is the increase of the
        training loss (weighted misclassified share, no leaf penalty) when column ``j`` is
        replaced by its complement (``x_j -> 1 - x_j``, every row): for a binary feature this
        is the deterministic counterpart of permuting the column, and it is 0 exactly for a
        tree that never splits on ``j``. It can be negative (the flipped tree fits better).

        Parameters
        ----------
        trees, seed
            As in :meth:`predictions` (default: every tree, refused above the same cap).

        Returns
        -------
        DataFrame indexed by feature name
            ``min``, ``mean``, ``max``: of the reliance over the trees; ``share_positive``:
            share of the trees whose reliance is ``> 1e-12`` (they need the feature);
            ``optimal``: the optimal tree's reliance.
        """
        data = self.dataset
        _, codes = self._resolve_trees(trees, seed, data.n_samples, "variable_importance")
        X, y, w = data.X, data.y, data.weights
        total = data.total_weight

        def losses(codes: np.ndarray, Xj: np.ndarray) -> np.ndarray:
            loss: np.ndarray = (predict_codes(codes, Xj) != y[None, :]) @ w / total
            return loss

        base = losses(codes, X)
        opt_trees = [] if self.optimal_tree is None else [_encode(self.optimal_tree)]
        opt_code = _stack_codes([np.asarray(code, dtype=np.int32)[None, :] for code in opt_trees])
        opt_base = losses(opt_code, X)
        rows: dict[str, list[float]] = {k: [] for k in ("min", "mean", "max", "share_positive")}
        optimal = []
        n_trees = codes.shape[0]
        for j in range(data.n_features):
            flipped = X.copy()
            flipped[:, j] = ~flipped[:, j]
            reliance = np.zeros(n_trees)
            uses = (codes == j).any(axis=1)
            if uses.any():
                reliance[uses] = losses(codes[uses], flipped) - base[uses]
            opt_reliance = losses(opt_code, flipped) - opt_base
            optimal.append(float(opt_reliance[0]) if opt_reliance.size else float("nan"))
            if n_trees:
                rows["min"].append(float(reliance.min()))
                rows["mean"].append(float(reliance.mean()))
                rows["max"].append(float(reliance.max()))
                rows["share_positive"].append(float((reliance > 1e-12).mean()))
            else:
                for key in rows:
                    rows[key].append(float("nan"))
        frame = pd.DataFrame(rows, index=list(data.feature_names))
        frame["optimal"] = optimal
        return frame.rename_axis("feature")

    def to_frame(self, *, limit: int | None = 1000) -> pd.DataFrame:
        """One row per tree, in objective order (the first ``limit``; None: all).

        Columns ``index``, ``objective``, ``misclassified`` (weight), ``leaves``, ``depth``,
        ``features`` (names of the features used) and ``rules`` (the tree as text, feature
        and class names of the data).
        """
        count = self.count()
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, Integral) or limit < 0:
                raise ValueError(f"limit must be an integer >= 0 or None, got {limit!r}")
            count = min(count, int(limit))
        data = self.dataset
        codes = self._range_codes(0, count)
        objectives = np.concatenate(
            [
                np.asarray(self._core.objectives(lo, min(count, lo + _BATCH_TREES)), dtype=float)
                for lo in range(0, count, _BATCH_TREES)
            ]
            or [np.zeros(0)]
        )
        wrong = predict_codes(codes, data.X) != data.y[None, :]
        trees = [_decode(code) for code in codes]
        names, classes = list(data.feature_names), list(np.asarray(data.classes).tolist())
        return pd.DataFrame(
            {
                "index": np.arange(count, dtype=np.int64),
                "objective": objectives,
                "misclassified": wrong @ data.weights,
                "leaves": [t.n_leaves for t in trees],
                "depth": [t.depth for t in trees],
                "features": [tuple(names[j] for j in sorted(t.features_used())) for t in trees],
                "rules": [t.to_text(names, classes) for t in trees],
            }
        )

    def plot(self, kind: str = "objective", ax: Any = None) -> Any:
        """A bar chart of the set: ``"objective"`` (trees per objective value, with OPT and
        the bound marked) or ``"features"`` (share of trees using each feature).

        Returns the matplotlib Axes (a new figure's when ``ax`` is None).
        """
        from odtkit.plot import _axes

        if kind not in ("objective", "features"):
            raise ValueError(f"kind must be 'objective' or 'features', got {kind!r}")
        ax = _axes(ax)
        if kind == "objective":
            hist = self.objective_histogram()
            # keys whose objectives differ only by rounding (0.75/4 + 4/12 and 1.75/4 + 1/12)
            # share a bar
            objective = hist["objective"].astype(float).round(12)
            per_value = hist["count"].groupby(objective, sort=True).sum()
            values = per_value.index.to_numpy(dtype=float)
            heights = np.array([float(c) for c in per_value.to_numpy()])
            spread = max(self.bound - self.optimum, 1e-3)
            gap = np.diff(values).min() if values.size > 1 else spread
            width = 0.8 * max(gap, spread / 200)
            ax.bar(values, heights, width=width, color="tab:blue", label="trees")
            ax.axvline(self.optimum, color="tab:green", linestyle="--", label="OPT")
            ax.axvline(self.bound, color="tab:red", linestyle=":", label="bound")
            if heights.size and heights.max() > 100 * max(heights.min(), 1):
                ax.set_yscale("log")
            ax.set_xlabel("objective R(T)")
            ax.set_ylabel("trees")
            ax.set_title(f"Rashomon set: {self.count()} trees")
            ax.legend()
        else:
            usage = self.feature_usage()
            ax.barh(usage.index.astype(str), usage["share"].to_numpy(), color="tab:blue")
            ax.set_xlim(0, 1)
            ax.invert_yaxis()
            ax.set_xlabel("share of the set's trees that split on the feature")
            ax.set_title(f"feature usage over {self.count()} trees")
        return ax

    def summary(self, *, trees: int = 1000, seed: Any = 0) -> str:
        """A short plain-text reading of the set.

        The count, bound and status are exact; the row-level disagreement is measured on the
        whole set when it has at most ``trees`` trees, else on a uniform sample of that many.
        """
        count = self.count()
        kind = f"OPT + {self.epsilon:g}" if self.absolute else f"(1 + {self.epsilon:g}) x OPT"
        lines = [
            f"Rashomon set: {count} trees with objective <= {kind} = {self.bound:.6g} "
            f"(OPT = {self.optimum:.6g}, lam = {self.lam:g}, max_depth = {self.max_depth}, "
            f"leaves = {self.leaves})."
        ]
        if not self.complete:
            lines.append(
                f"PARTIAL: the build stopped ({self.status}); every listed tree is within the "
                "bound but the set may miss some (the full set has at most "
                f"{_approx(self.count_upper_bound())} trees)."
            )
        if count == 0:
            return "\n".join(lines)
        hist = self.objective_histogram()
        leaves = hist["leaves"].astype(int)
        at_opt = sum(
            int(c)
            for c, o in zip(hist["count"], hist["objective"], strict=True)
            if o <= self.optimum + OBJECTIVE_TOLERANCE
        )
        lines.append(
            f"{at_opt} of them are optimal; leaves range from {leaves.min()} to {leaves.max()}."
        )
        usage = self.feature_usage()
        every = [str(f) for f in usage.index[usage["share"] >= 1.0]]
        some = usage[(usage["share"] > 0) & (usage["share"] < 1.0)]
        lines.append(
            "Every good tree splits on: "
            + (", ".join(every) if every else "no single feature")
            + f"; {len(some)} more feature(s) are used by some of them"
            + (
                f" (most: {some['share'].idxmax()}, {some['share'].max():.0%})."
                if len(some)
                else "."
            )
        )
        k = None if count <= trees else trees
        table = self.disagreement(trees=k, seed=seed)
        n_rows = len(table)
        split = int((table["disagreement"] > 0).sum())
        contested = int(table["optimal_contested"].sum())
        on = "the set" if k is None else f"a uniform sample of {k} trees"
        lines.append(
            f"On {split} of {n_rows} training rows the good trees do not all agree ({on}); "
            f"on {contested} of them at least half predict another class than the optimal tree."
        )
        return "\n".join(lines)


def _approx(n: int) -> str:
    """A count in three significant digits (a float cannot hold every count)."""
    return f"{n:.3g}" if n < 10**300 else f"~1e{len(str(n)) - 1}"


def _encode(tree: Tree) -> list[int]:
    from odtkit.core._problem import encode_tree

    return encode_tree(tree)

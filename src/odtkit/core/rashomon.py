"""The engine of :func:`odtkit.rashomon`: the exact Rashomon set, built natively.

``build_rashomon`` certifies the optimum OPT with the native dp (the same tree space), then
builds, in ``core/native/rashomon.cpp``, the memo of sub-problems that can still be part of a
tree within the bound, each with the exact number of its trees per (misclassified weight,
leaves) key. That is enough to count the set, address its i-th tree in objective order, and
count the trees that avoid a feature, all without listing it (docs/rashomon.md).

Counts and indices cross the binding as hexadecimal text and come back as Python ints, so
they are exact at any size.
"""

from __future__ import annotations

import bisect
import dataclasses
import time
import warnings
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
from odtkit.core._problem import build_problem, decode_tree, search_config
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset
from odtkit.tree import Tree

__all__ = ["LEAF_RULES", "PAD", "RashomonCore", "RashomonProblem", "build_rashomon"]

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
    (``leaves="majority"``) only a majority class of its rows.

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
        for name, value in checked.items():
            object.__setattr__(self, name, value)


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
    _key_objective: np.ndarray = dataclasses.field(repr=False)
    _key_ends: list[int] = dataclasses.field(repr=False)

    def count(self) -> int:
        """The exact number of trees in the set (a Python int of any size)."""
        return self._key_ends[-1] if self._key_ends else 0

    def histogram(self) -> pd.DataFrame:
        """One row per exact (misclassified weight, leaves) key, in objective order."""
        wrong, leaves, _, counts = self._native_set.histogram()
        scale = self.dataset.total_weight / self._native_set.total_weight
        return pd.DataFrame(
            {
                "misclassified": np.asarray(wrong, dtype=np.float64) * scale,
                "leaves": np.asarray(leaves, dtype=np.int64),
                "objective": self._key_objective,
                "count": pd.Series([int(c, 16) for c in counts], dtype=object),
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
        start, stop = self._check_range(start, stop)
        batches = [
            self._native_set.trees(format(first, "x"), min(_BATCH, stop - first), PAD)[0]
            for first in range(start, stop, _BATCH)
        ]
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
        # the key of tree i is the first key whose cumulative count exceeds i
        first = bisect.bisect_right(self._key_ends, start)
        out = np.empty(stop - start, dtype=np.float64)
        position, key = start, first
        while position < stop:
            end = min(stop, self._key_ends[key])
            out[position - start : end - start] = self._key_objective[key]
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
        return int(self._native_set.count_without(feature), 16)


def build_rashomon(
    problem: RashomonProblem,
    *,
    time_limit: float | None = None,
    memory_limit_mb: float | None = None,
    progress: bool | None = None,
) -> RashomonCore:
    """Certify OPT with the dp, then build every tree with objective <= the bound.

    The set is ``{T : R(T) <= bound + 1e-9}`` over trees of depth <= ``max_depth`` whose splits
    all send weight to both sides, ``bound = (1 + epsilon) * OPT`` (``OPT + epsilon`` with
    ``absolute``). ``time_limit`` and ``memory_limit_mb`` cover both steps; a limit or Ctrl-C
    leaves ``complete`` False and a set whose every member is genuine. Without a certified
    OPT the bound is taken from the best tree found, so it may be larger than the stated one.
    """
    from odtkit.core.search import SearchOptions, TrivialAnswerWarning, search_tree

    if not isinstance(problem, RashomonProblem):
        raise TypeError(f"problem must be a RashomonProblem, got {type(problem).__name__}")
    dataset, lam, max_depth = problem.dataset, problem.lam, problem.max_depth
    epsilon, absolute, leaves = problem.epsilon, problem.absolute, problem.leaves
    time_limit = check_positive_number(time_limit, "time_limit")
    memory_limit_mb = check_positive_number(memory_limit_mb, "memory_limit_mb")

    started = time.perf_counter()
    with warnings.catch_warnings():
        # the set says more about a trivial optimum than the warning does
        warnings.simplefilter("ignore", TrivialAnswerWarning)
        optimum = search_tree(
            dataset,
            lam=lam,
            max_depth=max_depth,
            method="dp",
            time_limit=time_limit,
            memory_limit_mb=memory_limit_mb,
            options=SearchOptions(progress=progress),
        )
    dp_seconds = time.perf_counter() - started
    certified = optimum.status == "optimal"
    opt = float(optimum.objective)
    bound = opt + epsilon if absolute else opt * (1.0 + epsilon)

    remaining = None if time_limit is None else max(time_limit - dp_seconds, 1e-3)
    config = search_config(
        lam,
        time_limit=remaining,
        # after a Ctrl-C the user wants the answer now: list only what one step finds
        node_limit=1 if optimum.status == "interrupted" else None,
        memory_limit_mb=memory_limit_mb,
        bounds={},
        max_depth=-1 if max_depth is None else max_depth,
    )
    native_problem = build_problem(dataset)
    native_set = _native.rashomon_build(native_problem, config, bound, leaves == "majority")
    wrong, n_leaves, _, hex_counts = native_set.histogram()
    counts = [int(c, 16) for c in hex_counts]
    key_objective = np.asarray(
        wrong, dtype=np.float64
    ) / native_set.total_weight + lam * np.asarray(n_leaves, dtype=np.float64)
    ends: list[int] = []
    running = 0
    for c in counts:
        running += c
        ends.append(running)
    complete = bool(native_set.complete) and certified
    status = str(optimum.status) if not certified else str(native_set.status)
    if complete and key_objective.size and abs(key_objective[0] - opt) > 1e-9:
        raise RuntimeError(
            f"internal error: the Rashomon set's best tree scores {key_objective[0]!r} but the "
            f"dp certified {opt!r}; please report this"
        )
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
        },
        _native_set=native_set,
        _key_objective=key_objective,
        _key_ends=ends,
    )

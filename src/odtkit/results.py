"""The one vocabulary of outcomes: :class:`Status`, the convergence trace and :class:`Result`.

Every solver of the library — the native searches, a MIP through any backend, ensemble pruning —
answers with a :class:`Result`: the model it found (a :class:`~odtkit.tree.Tree`, a
:class:`~odtkit.rulelist.RuleList` or a pruned ensemble), that model's objective as re-evaluated
by :mod:`odtkit.metrics`, a valid lower bound, why it stopped (:class:`Status`), the time and a
trace of incumbent and bound over time. A backend's vector-level output (a column vector, duals,
the solver log) is a :class:`odtkit.solvers.Solution`, which a ``Result`` carries in
``solution`` when a mathematical program produced it.

This module imports nothing else from the package, so every layer can use it.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "Certificate",
    "Result",
    "Status",
    "TRACE_COLUMNS",
    "empty_trace",
    "make_trace",
    "relative_gap",
]


class Certificate(StrEnum):
    """Over what a certified (``optimal``) tree is proven optimal. A ``StrEnum``:
    ``Certificate.ALL_THRESHOLDS == "all thresholds"`` holds, so the strings of the estimators'
    ``certificate_``, :func:`odtkit.compare`'s column and the CLI's JSON compare as before.

    ``BINARIZATION``: over the binary features the solver was given (at most N thresholds per
    column, or a pre-binarized :class:`~odtkit.datasets.Dataset` given directly: what it was
    binarized from is unknown). ``GUESSED_THRESHOLDS``: over the thresholds threshold guessing
    kept. ``ALL_THRESHOLDS``: over every threshold of the numeric columns (the exact search,
    every midpoint binarized, or a table whose feature columns are all 0/1 used as they are:
    every threshold of a 0/1 column is its one split). The one rule that picks it is
    :meth:`odtkit.datasets.Thresholds.certificate`.
    """

    BINARIZATION = "binarization"
    GUESSED_THRESHOLDS = "guessed thresholds"
    ALL_THRESHOLDS = "all thresholds"


class Status(StrEnum):
    """Why a solver stopped. A ``StrEnum``: ``Status.OPTIMAL == "optimal"`` holds.

    ``OPTIMAL`` means the returned model is proven optimal (its bound equals its objective);
    ``FEASIBLE`` means the method finished but cannot close the gap for the stated problem (a
    formulation whose optimum is not the stated problem's, a solver's gap tolerance, the λ
    search's convex hull): the model is feasible and the bound valid, ``message`` says why;
    every ``*_LIMIT`` and ``INTERRUPTED`` mean the solver stopped early and the result holds the
    best model found so far with a valid bound; ``INFEASIBLE`` / ``UNBOUNDED`` are verdicts on
    the model; ``ERROR`` means the solver failed (``Result.message`` says how); ``NOT_RUN`` marks
    the rows of a table (``compare``) that an interrupt kept from running.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    TIME_LIMIT = "time_limit"
    NODE_LIMIT = "node_limit"
    ITERATION_LIMIT = "iteration_limit"
    OBJECTIVE_LIMIT = "objective_limit"
    MEMORY_LIMIT = "memory_limit"
    INTERRUPTED = "interrupted"
    ERROR = "error"
    NOT_RUN = "not_run"

    @property
    def stopped_early(self) -> bool:
        """A limit or an interrupt ended the solve (the answer is the best found so far)."""
        return self in _EARLY

    @classmethod
    def parse(cls, value: object) -> Status:
        """``value`` as a Status; ValueError naming the known statuses otherwise."""
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value))
        except ValueError:
            raise ValueError(
                f"status must be one of {[s.value for s in cls]}, got {value!r}"
            ) from None


_EARLY = frozenset(
    {
        Status.TIME_LIMIT,
        Status.NODE_LIMIT,
        Status.ITERATION_LIMIT,
        Status.OBJECTIVE_LIMIT,
        Status.MEMORY_LIMIT,
        Status.INTERRUPTED,
    }
)

#: Column names of every convergence trace (search core, MIP backends and pruning alike).
TRACE_COLUMNS = ("time", "incumbent", "bound")


def empty_trace() -> pd.DataFrame:
    """A trace with no rows (columns exactly :data:`TRACE_COLUMNS`, float)."""
    return pd.DataFrame(np.zeros((0, 3)), columns=list(TRACE_COLUMNS))


def make_trace(rows: Any = None) -> pd.DataFrame:
    """A trace DataFrame from (time, incumbent, bound) rows or an (n, 3) array."""
    if rows is None or len(rows) == 0:
        return empty_trace()
    arr = np.asarray(rows, dtype=float).reshape(-1, 3)
    return pd.DataFrame(arr, columns=list(TRACE_COLUMNS))


def relative_gap(gap: float, objective: float) -> float:
    """``gap / |objective|``, HiGHS's definition: 0 when the gap is 0, ``inf`` when the objective is
    0 and the gap is not; a nan or infinite ``gap`` (no incumbent, no bound) is returned as is.

    The one implementation behind :attr:`Result.relative_gap` and
    :attr:`odtkit.solvers.Solution.relative_gap` (each computes its own absolute ``gap``).
    """
    if math.isnan(gap) or math.isinf(gap) or gap == 0.0:
        return gap
    return gap / abs(objective) if objective != 0 else math.inf


def _check_trace(trace: pd.DataFrame) -> None:
    if tuple(trace.columns) != TRACE_COLUMNS:
        raise ValueError(f"trace columns must be {TRACE_COLUMNS}, got {tuple(trace.columns)}")


@dataclass(frozen=True, eq=False)
class Result:
    """The answer of any solver: a model, its certificate and how it was obtained.

    Attributes
    ----------
    model : Tree, RuleList, PrunedEnsemble or None
        The best model found; ``None`` only when there is none (e.g. an infeasible program, or a
        MIP stopped before its first incumbent).
    objective : float
        The model's objective re-evaluated by :mod:`odtkit.metrics` (``nan`` without a model).
    lower_bound : float
        A valid lower bound on the optimum, in the same units (``-inf`` if none is known,
        ``inf`` for a proven infeasible program). Equals ``objective`` when optimal.
    status : Status
        Why the solver stopped.
    time : float
        Wall-clock seconds of the whole call (preprocessing and model building included).
    method : str
        What solved it: ``"dp"``, ``"bnb"``, ``"corels"``, a formulation name (``"rbinoct"``,
        ``"flowoct"``, ``"ip3"`` ...).
    backend : str
        ``"native"`` for the search core, else the solver backend (``"highs"``, ``"pyomo"``,
        ``"pulp"``).
    trace : DataFrame
        Columns exactly :data:`TRACE_COLUMNS`: a row whenever the incumbent or the bound changed.
    n_explored : int
        Sub-problems, states or prefixes expanded (search) or branch-and-bound nodes (MIP).
    peak_memory_mb : float
        The search's own peak memory estimate (0 when unknown).
    stats : dict
        Method-specific counters and timings.
    solution : Solution or None
        The backend's vector-level output when a mathematical program was solved.
    message : str
        Why the status is what it is, when that needs words (errors, numerics).
    binarizer : Binarizer or None
        The fitted :class:`~odtkit.datasets.Binarizer` whose ``transform`` gives the features
        ``model`` indexes, when the solver read a raw table itself (the exact search over every
        threshold, :func:`odtkit.core.search_numeric`: restricted to the thresholds the tree
        uses), so ``model.predict(binarizer.transform(X))`` predicts raw rows; None when the
        solver was given binary features.
    certificate : Certificate or None
        Over what ``model`` is proven optimal, set by :func:`odtkit.solve` (which knows the
        task's thresholds); None unless ``status`` is ``optimal``, and None from the layer
        below (a search or a formulation alone does not know what its features stand for).
    """

    model: Any
    objective: float
    lower_bound: float
    status: Status
    time: float
    method: str
    backend: str = "native"
    trace: pd.DataFrame = field(default_factory=empty_trace)
    n_explored: int = 0
    peak_memory_mb: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)
    solution: Any = None
    message: str = ""
    binarizer: Any = None
    certificate: Certificate | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status.parse(self.status))
        if self.certificate is not None:
            object.__setattr__(self, "certificate", Certificate(self.certificate))
        _check_trace(self.trace)

    @property
    def tree(self) -> Any:
        """The returned model (the name reads better for tree solvers)."""
        return self.model

    @property
    def bound(self) -> float:
        """Deprecated spelling of :attr:`lower_bound` (FutureWarning; removed in 0.3.0).

        ``lower_bound`` is the one name of the proven bound, on a :class:`Result` and on a
        backend's :class:`~odtkit.solvers.Solution` alike.
        """
        warnings.warn(
            "Result.bound is deprecated and will be removed in odtkit 0.3.0: use "
            "Result.lower_bound (the same value)",
            FutureWarning,
            stacklevel=2,
        )
        return self.lower_bound

    @property
    def has_model(self) -> bool:
        return self.model is not None

    @property
    def gap(self) -> float:
        """Absolute gap ``objective - lower_bound`` (0 when optimal, nan without a model)."""
        if self.model is None or math.isnan(self.objective):
            return math.nan
        if self.lower_bound == -math.inf:
            return math.inf
        return max(0.0, self.objective - self.lower_bound)

    @property
    def relative_gap(self) -> float:
        """``gap / |objective|`` (0 if the gap is 0, inf when the objective is 0 and it is not;
        :func:`relative_gap`)."""
        return relative_gap(self.gap, self.objective)

    @property
    def is_optimal(self) -> bool:
        return self.status == Status.OPTIMAL

    def raise_if_not_optimal(self) -> Result:
        """Return ``self`` if proven optimal, else raise RuntimeError describing the outcome."""
        if not self.is_optimal or self.model is None:
            raise RuntimeError(
                f"{self.method} ({self.backend}) stopped with status {self.status.value!r} "
                f"(objective {self.objective:.6g}, lower bound {self.lower_bound:.6g})"
                + (f": {self.message}" if self.message else "")
            )
        return self

    def replace(self, **changes: Any) -> Result:
        """A copy with some fields changed (the result itself is immutable)."""
        return replace(self, **changes)

    def summary(self) -> dict[str, Any]:
        """One row for tables."""
        return {
            "method": self.method,
            "backend": self.backend,
            "status": self.status.value,
            "objective": self.objective,
            "bound": self.lower_bound,
            "gap": self.gap,
            "time": self.time,
            "n_explored": self.n_explored,
            "peak_memory_mb": self.peak_memory_mb,
            "n_leaves": getattr(self.model, "n_leaves", None),
        }

    def __repr__(self) -> str:
        return (
            f"Result(method={self.method!r}, backend={self.backend!r}, "
            f"status={self.status.value!r}, objective={self.objective:.10g}, "
            f"lower_bound={self.lower_bound:.10g}, time={self.time:.3f}s, "
            f"model={_model_summary(self.model)})"
        )


def _model_summary(model: Any) -> str:
    """A model in a few words: its size, never its contents (a repr must stay one line)."""
    from odtkit.tree import Tree

    if isinstance(model, Tree):
        return f"Tree(depth={model.depth}, n_leaves={model.n_leaves})"
    text = repr(model)
    return text if len(text) <= 80 and "\n" not in text else type(model).__name__

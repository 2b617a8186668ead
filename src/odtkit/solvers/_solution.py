"""Solution: the vector-level output of every backend (highspy, Pyomo, PuLP).

``status`` says *why* the solver stopped; ``has_solution`` says whether an incumbent exists. The
two are independent: a time limit may come with or without a solution, and limits are statuses,
never exceptions. A formulation's ``decode`` turns a Solution into a model; the model-level
answer (model, verified objective, bound) is an :class:`odtkit.results.Result`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from odtkit.results import TRACE_COLUMNS, Status, empty_trace, make_trace, relative_gap


@dataclass(frozen=True, eq=False)
class Solution:
    """Outcome of ``odtkit.solvers.solve``: same fields whatever the backend.

    Attributes
    ----------
    status : Status
        Why it stopped (a str enum: ``status == "optimal"`` works).
    has_solution : bool
        Whether ``x`` holds a feasible incumbent (independent of ``status``).
    objective : float
        Incumbent objective including the model's offset; ``nan`` without a solution.
    lower_bound : float
        Best proven lower bound including the offset; ``-inf`` if none, ``inf`` when the model was
        proven infeasible. The same name as :attr:`odtkit.results.Result.lower_bound`; the old
        spelling ``bound`` (attribute and constructor keyword) still works with a FutureWarning
        until odtkit 0.3.0.
    time : float
        Wall-clock seconds spent in the solver call (transfer excluded, see ``timings``).
    nodes : int
        Branch-and-bound nodes (0 for LPs or when the backend cannot tell).
    solver : str
        e.g. ``"highs"``, ``"pyomo/appsi_highs"``, ``"pulp/HiGHS_CMD"``.
    solver_version : str
    backend : str
        Registry name of the backend (``"highs"``, ``"pyomo"``, ``"pulp"``).
    x : ndarray or None
        Full column vector of the incumbent.
    values : dict
        ``x`` split by variable group (``Model.values``); empty without a solution.
    duals : ndarray or None
        Row duals of an LP (backends with the ``"duals"`` capability), solver sign convention
        documented by the backend (HiGHS: ``c - A.T @ duals = reduced_costs``).
    reduced_costs : ndarray or None
        Column duals of an LP, when available.
    trace : DataFrame
        Columns exactly ``("time", "incumbent", "bound")``; empty if the backend has no trace.
    log : str
        Solver log text (may be empty).
    timings : dict
        Seconds per phase, e.g. ``{"transfer": ..., "solve": ...}``.
    stats : dict
        Backend-specific extras (e.g. whether a MIP start was accepted).
    """

    status: Status
    has_solution: bool
    objective: float = float("nan")
    lower_bound: float = float("-inf")
    time: float = 0.0
    nodes: int = 0
    solver: str = ""
    solver_version: str = ""
    backend: str = ""
    x: np.ndarray | None = None
    values: dict[str, np.ndarray] = field(default_factory=dict)
    duals: np.ndarray | None = None
    reduced_costs: np.ndarray | None = None
    trace: pd.DataFrame = field(default_factory=empty_trace)
    log: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status.parse(self.status))
        if tuple(self.trace.columns) != TRACE_COLUMNS:
            raise ValueError(
                f"trace columns must be {TRACE_COLUMNS}, got {tuple(self.trace.columns)}"
            )
        if self.has_solution and self.x is None:
            raise ValueError("has_solution=True needs the solution vector x")

    @classmethod
    def unsolved(
        cls,
        model: Any,
        status: Status | str,
        *,
        backend: str,
        start: np.ndarray | None = None,
        time: float = 0.0,
        message: str = "",
    ) -> Solution:
        """The answer when the solver never ran to a result (a limit or Ctrl-C during the build
        or the translation): the start as incumbent if one was given and it is feasible, no
        bound, ``stats["stopped_before_solve"]`` saying why."""
        x = None
        if start is not None:
            vec = np.asarray(start, dtype=float)
            if model.check(vec).empty:
                x = vec
        has = x is not None
        objective = float(model.objective_value(x)) if has else float("nan")
        return cls(
            status=Status.parse(status),
            has_solution=has,
            objective=objective,
            time=time,
            backend=backend,
            x=x,
            values=model.values(x) if has else {},
            trace=make_trace([(time, objective, float("-inf"))] if has else None),
            stats={"stopped_before_solve": message},
        )

    @property
    def bound(self) -> float:
        """Deprecated spelling of :attr:`lower_bound` (FutureWarning; removed in 0.3.0)."""
        warnings.warn(_BOUND_DEPRECATED, FutureWarning, stacklevel=2)
        return self.lower_bound

    @property
    def gap(self) -> float:
        """Absolute gap ``objective - lower_bound`` (nan without a solution, inf without a
        bound)."""
        if not self.has_solution:
            return float("nan")
        if self.lower_bound == -np.inf:
            return float("inf")
        return max(0.0, float(self.objective - self.lower_bound))

    @property
    def relative_gap(self) -> float:
        """HiGHS's definition ``|objective - lower_bound| / |objective|`` (0 if both are 0;
        :func:`odtkit.results.relative_gap`)."""
        return relative_gap(self.gap, self.objective)

    @property
    def is_optimal(self) -> bool:
        return self.status == "optimal"

    def raise_if_not_optimal(self) -> Solution:
        """Return ``self`` if proven optimal, else raise RuntimeError describing the outcome."""
        if self.status != "optimal" or not self.has_solution:
            raise RuntimeError(
                f"{self.solver or self.backend} stopped with status {self.status.value!r} "
                f"(has_solution={self.has_solution}, objective={self.objective:.6g}, "
                f"bound={self.lower_bound:.6g})"
            )
        return self

    def summary(self) -> dict[str, Any]:
        """One row for tables."""
        return {
            "backend": self.backend,
            "solver": self.solver,
            "status": self.status.value,
            "has_solution": self.has_solution,
            "objective": self.objective,
            "bound": self.lower_bound,
            "gap": self.gap,
            "time": self.time,
            "nodes": self.nodes,
        }

    def __repr__(self) -> str:
        return (
            f"Solution(status={self.status.value!r}, has_solution={self.has_solution}, "
            f"objective={self.objective:.10g}, lower_bound={self.lower_bound:.10g}, "
            f"time={self.time:.3f}s, nodes={self.nodes}, solver={self.solver!r})"
        )


_BOUND_DEPRECATED = (
    "Solution.bound is deprecated and will be removed in odtkit 0.3.0: use Solution.lower_bound "
    "(the same value; the name Result uses)"
)


def _accepting_old_bound(init: Callable[..., None]) -> Callable[..., None]:
    """``Solution(bound=...)`` (a third-party backend's constructor call) as
    ``Solution(lower_bound=...)`` with a FutureWarning, until the old keyword goes in 0.3.0."""

    @functools.wraps(init)
    def __init__(self: Solution, *args: Any, **kwargs: Any) -> None:
        if "bound" in kwargs:
            if "lower_bound" in kwargs:
                raise TypeError("give lower_bound only (bound is its deprecated spelling)")
            warnings.warn(_BOUND_DEPRECATED, FutureWarning, stacklevel=2)
            kwargs["lower_bound"] = kwargs.pop("bound")
        init(self, *args, **kwargs)

    return __init__


Solution.__init__ = _accepting_old_bound(Solution.__init__)  # type: ignore[method-assign]

"""What every backend shares, whatever runs the solver: the outcome rules and the solve skeleton.

* :class:`SolvePath` -- one way a backend solves, as cvxpy's reduction chain does it:
  ``translate`` (the IR model into the modelling layer's object), ``run`` (the solver on it)
  and ``read`` (its outcome back into a :class:`~odtkit.solvers.Solution`). Each backend's
  ``solve`` picks a path; the paths of a backend share their ``translate``.
* :func:`conclude` -- the final rules in one place (status, :func:`final_bound`, the trace of
  :func:`final_trace`) giving a :class:`Readout`; HiGHS's readout
  (:func:`odtkit.solvers._highs_driver.read`) ends in it, and the solvers whose outcome is
  parsed from a log or files (PuLP's command-line solvers, Pyomo's classic plugins) call it with
  :func:`idle_values`, :func:`feasible_or_none`, :data:`NO_SOLUTION`,
  :func:`infeasible_or_unbounded` and :func:`emit_log`.
* :func:`used_columns` and :func:`row_lists` -- what the per-row translations (PuLP, Pyomo) read
  from the IR.

Nothing here talks to a particular solver: what talks to a ``highspy.Highs`` object lives in
:mod:`odtkit.solvers._highs_driver`.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
import pandas as pd

from odtkit.model import Model
from odtkit.results import Status, make_trace
from odtkit.solvers._solution import Solution

if TYPE_CHECKING:
    from odtkit.solvers._registry import SolveOptions

__all__ = [
    "BOUND_TOLERANCE",
    "NO_SOLUTION",
    "Readout",
    "SolvePath",
    "columns_bounded",
    "conclude",
    "emit_log",
    "feasible_or_none",
    "final_bound",
    "final_trace",
    "idle_values",
    "importable",
    "infeasible_or_unbounded",
    "paused_gc",
    "row_lists",
    "timings",
    "used_columns",
]

Native = TypeVar("Native")
Raw = TypeVar("Raw")


class SolvePath(ABC, Generic[Native, Raw]):
    """One way of solving a :class:`~odtkit.model.Model`: translate, run, read.

    ``translate`` builds what the solver interface takes (a PuLP problem, a Pyomo model, a
    configured ``highspy.Highs``) and applies the start; ``run`` runs the solver under the
    options' limits and returns what it left (a status, a log, the interface's loader);
    ``read`` turns that into the :class:`~odtkit.solvers.Solution` by :func:`conclude`'s rules.
    """

    @abstractmethod
    def translate(self, model: Model[object], options: SolveOptions) -> Native:
        """The solver interface's model of ``model`` (time spent charged to the deadline)."""

    @abstractmethod
    def run(self, native: Native, model: Model[object], options: SolveOptions) -> Raw:
        """Run the solver on ``native``; what it left, for :meth:`read`."""

    @abstractmethod
    def read(self, raw: Raw, model: Model[object], options: SolveOptions) -> Solution:
        """The :class:`~odtkit.solvers.Solution` of the run."""

    def solve(self, model: Model[object], options: SolveOptions) -> Solution:
        """translate -> run -> read."""
        return self.read(self.run(self.translate(model, options), model, options), model, options)


def importable(*modules: str) -> bool:
    """Whether every one of ``modules`` imports here (a backend's ``available``)."""
    try:
        for module in modules:
            importlib.import_module(module)
    except ImportError:  # pragma: no cover - the backends' packages are hard dependencies
        return False
    return True


def timings(build: float, transfer: float, solve: float, read_start: float) -> dict[str, float]:
    """``Solution.timings`` of a run whose read started at ``read_start`` (perf_counter)."""
    return {
        "build": build,
        "transfer": transfer,
        "solve": solve,
        "read": time.perf_counter() - read_start,
    }


# --- translation -------------------------------------------------------------------------------


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: building hundreds of thousands of small PuLP or Pyomo
    objects otherwise triggers repeated full-heap scans (measured 4-6x slower for Pyomo)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def used_columns(model: Model[object]) -> np.ndarray:
    """bool per column: it appears in a row or in the objective. The modelling layers pass only
    those to a solver; the others get :func:`idle_values` when the solution is read back."""
    used = np.zeros(model.n_vars, dtype=bool)
    used[model.A.indices] = True
    used[model.c != 0] = True
    return used


def row_lists(model: Model[object]) -> tuple[list[float], list[int], list[int]]:
    """The CSR constraint matrix as Python lists ``(data, indices, indptr)``: the per-row loops
    of PuLP and Pyomo slice them (native floats and ints, no numpy scalars per term)."""
    A = model.A
    return A.data.tolist(), A.indices.tolist(), A.indptr.tolist()


# --- outcome -----------------------------------------------------------------------------------

#: A bound may exceed the incumbent objective by this much (relative to ``max(1, |obj|)``).
BOUND_TOLERANCE = 1e-9


def columns_bounded(model: Model[object]) -> bool:
    """Whether every column of ``model`` has finite bounds."""
    return bool(np.isfinite(model.col_lower).all() and np.isfinite(model.col_upper).all())


def infeasible_or_unbounded(model: Model[object]) -> Status:
    """Status for a solver's "infeasible or unbounded" verdict on ``model``.

    With every column bounded the model cannot be unbounded, so the solver proved infeasibility.
    """
    return Status.INFEASIBLE if columns_bounded(model) else Status.INFEASIBLE_OR_UNBOUNDED


def final_bound(
    status: Status | str,
    *,
    is_mip: bool,
    has_solution: bool,
    objective: float,
    raw_bound: float | None = None,
) -> tuple[float, str | None]:
    """The one rule for ``Solution.lower_bound``; returns ``(bound, note)``.

    * infeasible: ``+inf``; an error proves nothing: ``-inf``;
    * a MIP: the solver's dual bound ``raw_bound`` when finite (offset included);
    * optimal with a solution and no finite bound (always for an LP): the objective;
    * otherwise ``-inf``.

    A bound never exceeds the incumbent objective by more than
    ``BOUND_TOLERANCE * max(1, |objective|)``. If the solver reports one that does, it is replaced
    by the objective when the status is optimal, and otherwise by ``-inf`` with ``note`` saying
    what was dropped (``Solution.stats["bound_note"]``).
    """
    if status == Status.INFEASIBLE:
        return float("inf"), None
    if status == Status.ERROR:
        return float("-inf"), None
    bound = float("-inf")
    if is_mip and raw_bound is not None and np.isfinite(raw_bound):
        bound = float(raw_bound)
    if status == Status.OPTIMAL and has_solution and not np.isfinite(bound):
        bound = objective
    if has_solution and bound > objective + BOUND_TOLERANCE * max(1.0, abs(objective)):
        if status == Status.OPTIMAL:
            return objective, None
        return float("-inf"), (
            f"the solver reported the bound {bound!r} above the incumbent objective "
            f"{objective!r}; no bound is reported"
        )
    return bound, None


def final_trace(
    rows: list[tuple[float, float, float]] | None,
    time: float,
    objective: float,
    bound: float,
    has_solution: bool,
    enabled: bool = True,
) -> pd.DataFrame:
    """The trace of a run: ``rows`` recorded during it, then the final (time, incumbent, bound).

    The final row is added when there is anything to say (a solution, a finite bound or earlier
    rows); ``enabled=False`` (``trace=False``) gives an empty trace.
    """
    if not enabled:
        return make_trace(None)
    out = list(rows or ())
    if out or has_solution or np.isfinite(bound):
        out.append((time, objective if has_solution else np.inf, bound))
    return make_trace(out)


def idle_values(model: Model[object]) -> np.ndarray:
    """Values for columns a modelling layer never passed to the solver (in no row and without
    cost): 0 clipped into their bounds."""
    return np.clip(np.zeros(model.n_vars), model.col_lower, model.col_upper)


#: Statuses under which a point a solver hands back is not a solution, whatever it holds.
NO_SOLUTION = frozenset(
    {Status.INFEASIBLE, Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED, Status.ERROR}
)


def feasible_or_none(
    model: Model[object], values: np.ndarray, tol: float = 1e-6
) -> np.ndarray | None:
    """``values`` if it is a feasible point of ``model``, else None.

    Modelling layers hand back values for aborted and infeasible runs alike; for a solver whose
    outcome is read from its log or files, a point counts as a solution only after this check.
    The tolerance grows with the largest coefficient: values read back from a solution file
    carry its printed precision, and a row with coefficients of ~1000 (RBinOCT's big-M) turns
    a 1e-9 rounding of each value into a 1e-6 violation of the row.
    """
    scale = float(abs(model.A).max()) if model.A.nnz else 1.0
    if np.isfinite(values).all() and model.is_feasible(values, tol=tol * max(1.0, scale)):
        return values
    return None


def emit_log(text: str, options: SolveOptions) -> None:
    """Echo a finished run's log (``verbose``) and forward it line by line (``log_callback``):
    the log path of solvers whose log is read after the run, not through a callback."""
    if options.verbose:
        sys.stdout.write(text)
    if options.log_callback is not None:
        for line in text.splitlines(keepends=True):
            options.log_callback(line)


@dataclass
class Readout:
    """The outcome of one HiGHS run as :func:`read` found it (values in HiGHS's column order).

    ``objective`` and ``bound`` include the session's offset; ``trace`` ends with the final row
    (see :func:`final_trace`); ``stats`` holds ``model_status``, ``highs_run_time`` and, where
    they apply, ``start_used`` and ``bound_note``.
    """

    status: Status
    has_solution: bool
    objective: float
    bound: float
    x: np.ndarray | None
    duals: np.ndarray | None
    reduced_costs: np.ndarray | None
    nodes: int
    trace: pd.DataFrame
    log: str
    version: str
    stats: dict[str, Any] = field(default_factory=dict)

    def solution(
        self,
        model: Model[object],
        *,
        backend: str,
        solver: str,
        time: float,
        timings: dict[str, float],
        x: np.ndarray | None = None,
        duals: np.ndarray | None = None,
        reduced_costs: np.ndarray | None = None,
        stats: Mapping[str, Any] | None = None,
        n_model_columns: int | None = None,
    ) -> Solution:
        """The :class:`Solution` of this run; ``x`` / ``duals`` / ``reduced_costs`` default to the
        readout's own (pass them mapped back when the solver's order is not the model's)."""
        x = self.x if x is None else x
        n0 = model.n_vars if n_model_columns is None else n_model_columns
        return Solution(
            status=self.status,
            has_solution=self.has_solution,
            objective=self.objective,
            lower_bound=self.bound,
            time=time,
            nodes=self.nodes,
            solver=solver,
            solver_version=self.version,
            backend=backend,
            x=x if self.has_solution else None,
            values=model.values(x[:n0]) if self.has_solution and x is not None else {},
            duals=self.duals if duals is None else duals,
            reduced_costs=self.reduced_costs if reduced_costs is None else reduced_costs,
            trace=self.trace,
            log=self.log,
            timings=timings,
            stats={**self.stats, **(stats or {})},
        )


def conclude(
    model: Model[object],
    status: Status | str,
    x: np.ndarray | None,
    objective: float,
    *,
    time: float,
    version: str,
    raw_bound: float | None = None,
    nodes: int = 0,
    log: str = "",
    trace_rows: list[tuple[float, float, float]] | None = None,
    trace_enabled: bool = True,
    duals: np.ndarray | None = None,
    reduced_costs: np.ndarray | None = None,
    stats: Mapping[str, Any] | None = None,
) -> Readout:
    """The outcome of a run from what the solver said: the final rules in one place.

    :func:`read` uses it for a HiGHS run; solvers whose outcome is parsed from a log or files
    (PuLP's command-line solvers, Pyomo's classic plugins) call it directly. ``x`` is the
    solution (None without one), ``objective`` its objective (offset included) and
    ``raw_bound`` the solver's dual bound, if it reported one; the bound is
    :func:`final_bound`'s (its note goes to ``stats["bound_note"]``) and the trace
    :func:`final_trace`'s, ending at ``time``.
    """
    status = Status.parse(status)
    has_solution = x is not None
    objective = float(objective) if has_solution else float("nan")
    out_stats = dict(stats or {})
    if status == Status.OPTIMAL and not has_solution:
        # "optimal" promises a point; a solver whose point fails the model's own check has
        # failed, whatever it printed
        status = Status.ERROR
        out_stats["error"] = "the solver reported optimal but its point is not feasible"
    bound, note = final_bound(
        status,
        is_mip=model.is_mip,
        has_solution=has_solution,
        objective=objective,
        raw_bound=raw_bound,
    )
    if note is not None:
        out_stats["bound_note"] = note
    return Readout(
        status,
        has_solution,
        objective,
        bound,
        x,
        duals,
        reduced_costs,
        max(int(nodes), 0),
        final_trace(trace_rows, time, objective, bound, has_solution, trace_enabled),
        log,
        version,
        out_stats,
    )

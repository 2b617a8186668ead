"""The ``"highs"`` backend: highspy directly, arrays in one call.

* The CSR matrix, bounds, costs, integrality and the objective offset go to HiGHS in one
  ``passModel`` call (row-wise format, no per-variable Python objects).
* Defaults: ``mip_rel_gap = mip_abs_gap = 0`` (prove optimality exactly), ``output_flag`` on but
  ``log_to_console`` off: the log is collected through HiGHS's logging callback into
  ``Solution.log`` and printed only when ``verbose=True`` (pass ``output_flag=False`` to switch
  HiGHS's logging off entirely; ``Solution.log`` is then empty).
* MIP start: the full vector goes through ``setSolution`` (HiGHS checks it; an infeasible start
  is not an error). ``stats["start_used"]`` reports whether HiGHS's first incumbent came from it.
* Trace: HiGHS's ``kCallbackMipImprovingSolution`` (new incumbent) and ``kCallbackMipLogging``
  (periodic progress line) callbacks record (time, incumbent, bound), offset included.
* Interrupts: the simplex / IPM / MIP interrupt callbacks poll ``should_stop`` and a flag set by
  a temporary SIGINT handler (Ctrl-C, main thread only); the solve then stops with status
  ``"interrupted"`` and whatever incumbent and bound exist.
* LP duals: ``Solution.duals`` are HiGHS's row duals, convention ``c - A.T @ duals = reduced_costs``
  (for a minimisation a binding ``<=`` row has a dual ``<= 0``, a binding ``>=`` row ``>= 0``).
* Incremental LPs: :class:`IncrementalLP` keeps one ``Highs`` object alive across solves
  (``addCols`` + warm-started re-solve, same dual convention), for column generation. It lives
  beside the stateless backend because the :func:`odtkit.solvers.solve` contract is one call
  per model; the registry's capability set has no ``"incremental"`` entry (yet).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from typing import Any

import numpy as np

from odtkit.model import Model
from odtkit.results import make_trace
from odtkit.solvers._registry import CAPABILITIES, Backend, SolveOptions, register_backend
from odtkit.solvers._solution import Solution

_FEASIBLE = 2  # HiGHS kSolutionStatusFeasible


def _status(model_status: Any, model: Model) -> str:
    import highspy

    S = highspy.HighsModelStatus
    mapping = {
        S.kOptimal: "optimal",
        S.kInfeasible: "infeasible",
        S.kUnbounded: "unbounded",
        S.kTimeLimit: "time_limit",
        S.kSolutionLimit: "node_limit",
        S.kIterationLimit: "iteration_limit",
        S.kInterrupt: "interrupted",
        S.kObjectiveBound: "objective_limit",
        S.kObjectiveTarget: "objective_limit",
    }
    if hasattr(S, "kHighsInterrupt"):
        mapping[S.kHighsInterrupt] = "interrupted"
    if model_status == S.kUnboundedOrInfeasible:
        return infeasible_or_unbounded(model)
    return mapping.get(model_status, "error")


def infeasible_or_unbounded(model: Model) -> str:
    """Status for a solver's "infeasible or unbounded" verdict on ``model``.

    With every column bounded the model cannot be unbounded, so the solver proved infeasibility.
    """
    bounded = np.isfinite(model.col_lower).all() and np.isfinite(model.col_upper).all()
    return "infeasible" if bounded else "infeasible_or_unbounded"


def read_solution(
    h: Any, info: Any, want_duals: bool
) -> tuple[np.ndarray | None, float, np.ndarray | None, np.ndarray | None]:
    """``(x, objective, row duals, reduced costs)`` of a finished run; ``x`` is None (objective
    NaN) without a feasible primal, the duals are None unless wanted and dual feasible."""
    if int(info.primal_solution_status) != _FEASIBLE:
        return None, float("nan"), None, None
    solution = h.getSolution()
    x = np.asarray(solution.col_value, dtype=float)
    duals = reduced = None
    if want_duals and int(info.dual_solution_status) == _FEASIBLE:
        duals = np.asarray(solution.row_dual, dtype=float)
        reduced = np.asarray(solution.col_dual, dtype=float)
    return x, float(info.objective_function_value), duals, reduced


def pass_model(h: Any, model: Model, integrality: np.ndarray) -> Any:
    """Hand ``model`` to the Highs object ``h`` in one ``passModel`` call (row-wise CSR arrays)."""
    A = model.A
    return h.passModel(
        model.n_vars,
        model.n_constraints,
        int(A.nnz),
        2,  # MatrixFormat::kRowwise: pass the CSR arrays as they are
        1,  # ObjSense::kMinimize
        float(model.offset),
        np.ascontiguousarray(model.c, dtype=np.float64),
        np.ascontiguousarray(model.col_lower, dtype=np.float64),
        np.ascontiguousarray(model.col_upper, dtype=np.float64),
        np.ascontiguousarray(model.row_lower, dtype=np.float64),
        np.ascontiguousarray(model.row_upper, dtype=np.float64),
        np.ascontiguousarray(A.indptr, dtype=np.int32),
        np.ascontiguousarray(A.indices, dtype=np.int32),
        np.ascontiguousarray(A.data, dtype=np.float64),
        integrality,
    )


#: HiGHS options that switch every primal heuristic off (``solve(..., heuristics=False)``): the
#: sub-MIP heuristics RINS and RENS, feasibility jump, the root reduced-cost heuristic and the
#: node heuristics' effort. With a start the search core certified optimal they can only waste
#: time; on FlowOCT (monk1-3, D=2) they were over half of the solve.
NO_HEURISTICS: dict[str, Any] = {
    "mip_heuristic_effort": 0.0,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
    "mip_heuristic_run_feasibility_jump": False,
}


class HighsBackend(Backend):
    """highspy, in-process. Capabilities: all of them."""

    name = "highs"
    capabilities = CAPABILITIES

    @classmethod
    def available(cls) -> bool:
        try:
            import highspy  # noqa: F401
        except ImportError:  # pragma: no cover - highspy is a hard dependency
            return False
        return True

    @classmethod
    def version(cls) -> str:
        import highspy

        return str(highspy.Highs().version())

    def solve(self, model: Model, options: SolveOptions) -> Solution:
        import highspy

        t0 = time.perf_counter()
        h = highspy.Highs()
        log: list[str] = []

        def on_log(e: Any) -> None:
            log.append(e.message)
            if options.verbose:
                sys.stdout.write(e.message)
            if options.log_callback is not None:
                options.log_callback(e.message)

        self._set(h, "output_flag", True)
        self._set(h, "log_to_console", False)
        h.cbLogging += on_log
        self._set(h, "mip_rel_gap", options.mip_gap)
        self._set(h, "mip_abs_gap", 0.0 if options.mip_gap == 0.0 else 1e-6)
        if options.time_limit is not None:
            self._set(h, "time_limit", options.time_limit)
        if options.threads is not None:
            self._set(h, "threads", options.threads)
        if options.seed is not None:
            self._set(h, "random_seed", options.seed)
        if options.node_limit is not None:
            self._set(h, "mip_max_nodes", options.node_limit)
        is_mip = model.is_mip
        if options.lp_method is not None and not is_mip:
            self._set(h, "solver", options.lp_method)
        if not options.heuristics:
            for key, value in NO_HEURISTICS.items():
                self._set(h, key, value)
        for key, value in options.extra.items():
            self._set(h, key, value)

        status = pass_model(h, model, model.integrality.astype(np.int32))
        if status == highspy.HighsStatus.kError:
            raise ValueError(f"HiGHS rejected model {model.name!r} (passModel returned an error)")

        stats: dict[str, Any] = {}
        if options.start is not None and is_mip:
            sol = highspy.HighsSolution()
            sol.col_value = options.start.tolist()
            sol.value_valid = True
            h.setSolution(sol)
            stats["start_objective"] = model.objective_value(options.start)

        trace_rows: list[tuple[float, float, float]] = []
        want_trace = is_mip and options.trace is not False
        if want_trace:

            def on_improving(e: Any) -> None:
                d = e.data_out
                trace_rows.append((d.running_time, d.objective_function_value, d.mip_dual_bound))

            def on_mip_log(e: Any) -> None:
                d = e.data_out
                row = (d.running_time, d.mip_primal_bound, d.mip_dual_bound)
                if not trace_rows or trace_rows[-1][1:] != row[1:]:
                    trace_rows.append(row)

            h.cbMipImprovingSolution += on_improving
            h.cbMipLogging += on_mip_log

        stop_flag = threading.Event()
        should_stop = options.should_stop

        def on_interrupt(e: Any) -> None:
            if stop_flag.is_set() or (should_stop is not None and should_stop()):
                stop_flag.set()
                e.interrupt()

        h.cbSimplexInterrupt += on_interrupt
        h.cbIpmInterrupt += on_interrupt
        h.cbMipInterrupt += on_interrupt

        previous_handler = None
        if threading.current_thread() is threading.main_thread():
            previous_handler = signal.signal(signal.SIGINT, lambda signum, frame: stop_flag.set())
        t_transfer = time.perf_counter() - t0
        t1 = time.perf_counter()
        try:
            h.run()
        finally:
            if previous_handler is not None:
                signal.signal(signal.SIGINT, previous_handler)
        t_solve = time.perf_counter() - t1

        info = h.getInfo()
        model_status = h.getModelStatus()
        status_str = _status(model_status, model)
        if stop_flag.is_set() and status_str not in ("optimal", "infeasible"):
            status_str = "interrupted"
        x, objective, duals, reduced = read_solution(
            h, info, want_duals=not is_mip and options.duals is not False
        )
        has_solution = x is not None
        bound = float("-inf")
        if is_mip:
            mip_bound = float(info.mip_dual_bound)
            if np.isfinite(mip_bound):
                bound = mip_bound
            if status_str == "optimal" and has_solution and not np.isfinite(mip_bound):
                bound = objective
        elif status_str == "optimal" and has_solution:
            bound = objective  # LP strong duality
        if status_str == "infeasible":
            bound = float("inf")
        if options.start is not None and is_mip:
            stats["start_used"] = (
                bool(
                    trace_rows
                    and abs(trace_rows[0][1] - stats["start_objective"])
                    <= 1e-6 * max(1.0, abs(objective))
                )
                if want_trace
                else None
            )
        if want_trace:
            trace_rows.append((float(h.getRunTime()), objective if has_solution else np.inf, bound))
        stats["model_status"] = h.modelStatusToString(model_status)
        stats["highs_run_time"] = float(h.getRunTime())
        return Solution(
            status=status_str,
            has_solution=has_solution,
            objective=objective,
            bound=bound,
            time=t_solve,
            nodes=int(info.mip_node_count) if is_mip and info.mip_node_count >= 0 else 0,
            solver="highs",
            solver_version=str(h.version()),
            backend="highs",
            x=x,
            values=model.values(x) if x is not None else {},
            duals=duals,
            reduced_costs=reduced,
            trace=make_trace(trace_rows),
            log="".join(log),
            timings={"transfer": t_transfer, "solve": t_solve},
            stats=stats,
        )

    @staticmethod
    def _set(h: Any, key: str, value: Any) -> None:
        import highspy

        if isinstance(value, (np.integer,)):
            value = int(value)
        elif isinstance(value, np.floating):
            value = float(value)
        if h.setOptionValue(key, value) == highspy.HighsStatus.kError:
            raise ValueError(
                f"HiGHS rejected option {key}={value!r} (unknown name or invalid value)"
            )


register_backend("highs", HighsBackend)


class IncrementalLP:
    """A HiGHS LP kept alive between solves, for column generation.

    :func:`odtkit.solvers.solve` builds and solves every model from scratch; a column-generation
    master that gains a few columns per iteration then pays a full transfer and a cold simplex
    each time. Here the ``highspy.Highs`` object persists: :meth:`add_columns` appends columns
    with one vectorized ``addCols`` call and HiGHS keeps the previous optimal basis (new columns
    enter nonbasic at a bound), so the next :meth:`solve` is a primal simplex warm start that
    usually needs a handful of iterations.

    Parameters
    ----------
    model : Model
        The initial LP. A MIP is replaced by its relaxation (``model.relaxed()``).
    lp_method : {"simplex", "ipm"}
        HiGHS ``solver`` option; simplex (the default) is what makes warm starts possible and
        gives vertex solutions.
    verbose : bool
        Print HiGHS's log.
    **options
        Further HiGHS options (e.g. ``dual_feasibility_tolerance=1e-10``); unknown names raise
        ValueError.

    Notes
    -----
    Column ``j`` of :meth:`solve`'s ``x`` / ``reduced_costs`` is column ``j`` of ``model`` for
    ``j < model.n_vars``; added columns follow in the order they were added. ``Solution.values``
    holds the groups of the initial model only. ``Solution.duals`` has the convention of the
    ``"highs"`` backend: ``c - A.T @ duals = reduced_costs`` (a binding ``<=`` row of a
    minimisation has a dual ``<= 0``). ``Solution.stats["iterations"]`` is the simplex iteration
    count of that solve alone.
    """

    def __init__(
        self, model: Model, *, lp_method: str = "simplex", verbose: bool = False, **options: Any
    ) -> None:
        import highspy

        if not isinstance(model, Model):
            raise TypeError(f"model must be an odtkit.model.Model, got {type(model).__name__}")
        if lp_method not in ("simplex", "ipm"):
            raise ValueError(f"lp_method must be 'simplex' or 'ipm', got {lp_method!r}")
        if model.is_mip:
            model = model.relaxed()
        self._model = model
        self._bounded = bool(
            np.isfinite(model.col_lower).all() and np.isfinite(model.col_upper).all()
        )
        self._log: list[str] = []
        self._verbose = bool(verbose)
        h = highspy.Highs()
        HighsBackend._set(h, "output_flag", True)
        HighsBackend._set(h, "log_to_console", False)
        h.cbLogging += self._on_log
        HighsBackend._set(h, "solver", lp_method)
        for key, value in options.items():
            HighsBackend._set(h, key, value)
        status = pass_model(h, model, np.zeros(model.n_vars, dtype=np.int32))
        if status == highspy.HighsStatus.kError:
            raise ValueError(f"HiGHS rejected model {model.name!r} (passModel returned an error)")
        self._h = h
        self._n_cols = model.n_vars

    def _on_log(self, e: Any) -> None:
        self._log.append(e.message)
        if self._verbose:
            sys.stdout.write(e.message)

    @property
    def n_vars(self) -> int:
        """Current number of columns (initial plus added)."""
        return self._n_cols

    @property
    def n_constraints(self) -> int:
        return self._model.n_constraints

    @property
    def highs(self) -> Any:
        """The underlying ``highspy.Highs`` object (for inspection; do not change its model)."""
        return self._h

    def add_columns(
        self,
        costs: Any,
        lower: Any,
        upper: Any,
        csc_starts: Any,
        csc_index: Any,
        csc_values: Any,
    ) -> np.ndarray:
        """Append columns given in compressed sparse column form.

        Parameters
        ----------
        costs, lower, upper : array_like, shape (m,)
            Objective coefficients and bounds of the ``m`` new columns (``lower`` finite or
            ``-inf``, ``upper >= lower``).
        csc_starts : array_like of int, shape (m,) or (m + 1,)
            Start of each column in ``csc_index`` / ``csc_values`` (a trailing ``nnz`` entry, as
            in ``scipy.sparse.csc_matrix.indptr``, is accepted).
        csc_index : array_like of int, shape (nnz,)
            Row indices, ``0 <= row < n_constraints``.
        csc_values : array_like of float, shape (nnz,)

        Returns
        -------
        numpy.ndarray
            Indices of the new columns.
        """
        import highspy

        c = np.ascontiguousarray(costs, dtype=np.float64).ravel()
        lo = np.ascontiguousarray(lower, dtype=np.float64).ravel()
        up = np.ascontiguousarray(upper, dtype=np.float64).ravel()
        m = c.shape[0]
        starts = np.asarray(csc_starts, dtype=np.int64).ravel()
        idx = np.ascontiguousarray(csc_index, dtype=np.int32).ravel()
        val = np.ascontiguousarray(csc_values, dtype=np.float64).ravel()
        nnz = idx.shape[0]
        if lo.shape[0] != m or up.shape[0] != m:
            raise ValueError(
                f"costs, lower and upper must have the same length, got {m}, {lo.shape[0]}, "
                f"{up.shape[0]}"
            )
        if starts.shape[0] == m + 1:
            if starts[-1] != nnz:
                raise ValueError(f"csc_starts[-1] must equal len(csc_index)={nnz}")
            starts = starts[:-1]
        if starts.shape[0] != m:
            raise ValueError(f"csc_starts must have length {m} or {m + 1}, got {starts.shape[0]}")
        if val.shape[0] != nnz:
            raise ValueError(
                f"csc_index and csc_values must have the same length, got {nnz} and {val.shape[0]}"
            )
        if m and (starts[0] != 0 or np.any(np.diff(starts) < 0) or starts[-1] > nnz):
            raise ValueError("csc_starts must start at 0 and be non-decreasing within csc_index")
        if nnz and (idx.min() < 0 or idx.max() >= self.n_constraints):
            raise ValueError(f"csc_index rows must lie in [0, {self.n_constraints})")
        if np.any(np.isnan(c)) or np.any(np.isnan(lo)) or np.any(np.isnan(up)):
            raise ValueError("costs and bounds must not be NaN")
        if np.any(lo > up):
            raise ValueError("lower must be <= upper for every new column")
        if m == 0:
            return np.zeros(0, dtype=np.int64)
        status = self._h.addCols(
            m, c, lo, up, nnz, np.ascontiguousarray(starts, dtype=np.int32), idx, val
        )
        if status == highspy.HighsStatus.kError:
            raise ValueError("HiGHS rejected the new columns (addCols returned an error)")
        self._bounded = self._bounded and bool(np.isfinite(lo).all() and np.isfinite(up).all())
        new = np.arange(self._n_cols, self._n_cols + m, dtype=np.int64)
        self._n_cols += m
        return new

    def solve(self, time_limit: float | None = None) -> Solution:
        """Re-optimise from the current basis.

        Parameters
        ----------
        time_limit : float, optional
            Seconds for this solve (status ``"time_limit"`` when reached).

        Returns
        -------
        Solution
            ``backend="highs"``, ``x`` over all current columns, ``duals`` / ``reduced_costs``
            when HiGHS reports a feasible dual, ``stats["iterations"]`` (simplex iterations of
            this solve) and ``stats["model_status"]``.
        """
        import highspy

        h = self._h
        if time_limit is not None:
            if isinstance(time_limit, bool) or not time_limit > 0:
                raise ValueError(
                    f"time_limit must be a positive number of seconds, got {time_limit!r}"
                )
            # HiGHS compares its time_limit with a run clock that accumulates over the life of
            # the Highs object, so the budget of this solve is added to the time already used
            HighsBackend._set(h, "time_limit", float(h.getRunTime()) + float(time_limit))
        else:
            HighsBackend._set(h, "time_limit", float("inf"))
        n_log = len(self._log)
        t1 = time.perf_counter()
        h.run()
        t_solve = time.perf_counter() - t1
        info = h.getInfo()
        model_status = h.getModelStatus()
        if model_status == highspy.HighsModelStatus.kUnboundedOrInfeasible:
            status_str = "infeasible" if self._bounded else "infeasible_or_unbounded"
        else:
            status_str = _status(model_status, self._model)
        x, objective, duals, reduced = read_solution(h, info, want_duals=True)
        has_solution = x is not None
        bound = objective if has_solution and status_str == "optimal" else float("-inf")
        if status_str == "infeasible":
            bound = float("inf")
        n0 = self._model.n_vars
        return Solution(
            status=status_str,
            has_solution=has_solution,
            objective=objective,
            bound=bound,
            time=t_solve,
            solver="highs",
            solver_version=str(h.version()),
            backend="highs",
            x=x,
            values=self._model.values(x[:n0]) if x is not None else {},
            duals=duals,
            reduced_costs=reduced,
            log="".join(self._log[n_log:]),
            timings={"solve": t_solve},
            stats={
                "iterations": int(info.simplex_iteration_count),
                "model_status": h.modelStatusToString(model_status),
                "n_vars": self._n_cols,
            },
        )

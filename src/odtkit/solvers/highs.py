"""The ``"highs"`` backend: highspy directly, arrays in one call.

Translate, run, read: :func:`pass_model` hands the arrays over, and everything else done to the
``highspy.Highs`` object -- options, callbacks, status, solution and bound -- is the HiGHS driver
(:mod:`odtkit.solvers._highs_driver`), shared with PuLP's and Pyomo's HiGHS interfaces.

* The CSR matrix, bounds, costs, integrality and the objective offset go to HiGHS in one
  ``passModel`` call (row-wise format, no per-variable Python objects).
* Defaults: ``mip_rel_gap = mip_abs_gap = 0`` (prove optimality exactly), ``output_flag`` on but
  ``log_to_console`` off: the log is collected through HiGHS's logging callback into
  ``Solution.log`` and printed only when ``verbose=True`` (pass ``output_flag=False`` to switch
  HiGHS's logging off entirely; ``Solution.log`` is then empty).
* MIP start: the full vector goes through ``setSolution`` (HiGHS checks it; an infeasible start
  is not an error). ``stats["start_used"]`` reports whether HiGHS's first incumbent came from it.
* Trace: HiGHS's ``kCallbackMipImprovingSolution`` (new incumbent) and ``kCallbackMipLogging``
  (periodic progress line) callbacks record (time, incumbent, bound), offset included; the trace
  ends with the final row (for an LP it is that row alone; ``trace=False``: empty).
* ``threads``: HiGHS sizes one task scheduler per thread at its first run; when a later run asks
  for another count the driver resets it first (otherwise HiGHS refuses to run: status
  ``"error"``).
* Interrupts: the simplex / IPM / MIP interrupt callbacks poll ``should_stop`` and a flag set by
  a temporary SIGINT handler (Ctrl-C, main thread only); the solve then stops with status
  ``"interrupted"`` and whatever incumbent and bound exist.
* LP duals: ``Solution.duals`` are HiGHS's row duals, convention ``c - A.T @ duals = reduced_costs``
  (for a minimisation a binding ``<=`` row has a dual ``<= 0``, a binding ``>=`` row ``>= 0``).
* Incremental LPs: :class:`IncrementalLP` keeps one ``Highs`` object alive across solves
  (``addCols`` + warm-started re-solve, same dual convention), for column generation. It lives
  beside the stateless backend because the :func:`odtkit.solvers.solve` contract is one call
  per model; the registry's capability set has no ``"incremental"`` entry (yet).
* Fork: HiGHS is not fork-safe. Its task scheduler keeps worker threads that a forked child
  does not inherit, so a child forked after a HiGHS run in its parent (a ``"fork"``
  multiprocessing pool) deadlocked in its first run. The driver notices the fork
  (``os.register_at_fork``) and drops the inherited scheduler before the child's first run
  (``resetThreadScheduler(False)``: non-blocking, it never waits for the missing workers);
  where highspy cannot, the run raises a RuntimeError naming the cause and the fix: start
  worker processes with ``"spawn"`` or ``"forkserver"``. Those are safe in any case and the
  better choice (``odtkit.sweep`` uses ``"spawn"``; Python 3.14 makes ``"forkserver"`` the
  default on Linux).
* :func:`new_highs`: a ``highspy.Highs`` object for your own use (e.g. reading back a file from
  ``Model.to_mps``) without the copyright banner HiGHS prints when a process creates its first.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from odtkit.model import Model
from odtkit.solvers import _highs_driver as driver
from odtkit.solvers._common import columns_bounded, infeasible_or_unbounded
from odtkit.solvers._highs_driver import NO_HEURISTICS, new_highs, read_solution
from odtkit.solvers._registry import CAPABILITIES, Backend, SolveOptions, register_backend
from odtkit.solvers._solution import Solution

__all__ = [
    "NO_HEURISTICS",
    "HighsBackend",
    "IncrementalLP",
    "infeasible_or_unbounded",
    "new_highs",
    "pass_model",
    "read_solution",
]


def pass_model(h: Any, model: Model[object], integrality: np.ndarray) -> Any:
    """Hand ``model`` to the Highs object ``h`` in one ``passModel`` call (row-wise CSR arrays).

    Raises ValueError when HiGHS rejects the model.
    """
    import highspy

    A = model.A
    status = h.passModel(
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
    if status == highspy.HighsStatus.kError:
        raise ValueError(f"HiGHS rejected model {model.name!r} (passModel returned an error)")
    return status


class HighsBackend(Backend):
    """highspy, in-process. Capabilities: all of them."""

    name = "highs"
    default_solver = "highs"
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

        return str(driver.new_highs().version())

    def solve(self, model: Model[object], options: SolveOptions) -> Solution:

        t0 = time.perf_counter()
        is_mip = model.is_mip
        h = driver.new_highs()
        driver.apply_options(h, driver.highs_options(options, is_mip))
        start = options.start if is_mip else None
        start_objective = None if start is None else model.objective_value(start)
        with driver.attach(
            h, options, is_mip=is_mip, start_objective=start_objective, label=model.name
        ) as session:
            pass_model(h, model, model.integrality.astype(np.int32))
            if start is not None:
                driver.set_start(h, start)
            t_transfer = time.perf_counter() - t0
            t1 = time.perf_counter()
            h.run()
            t_solve = time.perf_counter() - t1
        out = driver.read(h, model, session, want_duals=not is_mip and options.duals is not False)
        stats = {} if start_objective is None else {"start_objective": start_objective}
        return out.solution(
            model,
            backend="highs",
            solver="highs",
            time=t_solve,
            timings={"transfer": t_transfer, "solve": t_solve},
            stats=stats,
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
        self,
        model: Model[object],
        *,
        lp_method: str = "simplex",
        verbose: bool = False,
        **options: Any,
    ) -> None:

        if not isinstance(model, Model):
            raise TypeError(f"model must be an odtkit.model.Model, got {type(model).__name__}")
        if lp_method not in ("simplex", "ipm"):
            raise ValueError(f"lp_method must be 'simplex' or 'ipm', got {lp_method!r}")
        if model.is_mip:
            model = model.relaxed()
        self._model = model
        self._bounded = columns_bounded(model)
        h = driver.new_highs()
        applied = driver.apply_options(
            h, {"output_flag": True, "log_to_console": False, "solver": lp_method, **options}
        )
        # what every solve's callbacks need: the log goes to Solution.log (and stdout if verbose)
        self._options = SolveOptions(verbose=bool(verbose), threads=applied.get("threads"))
        pass_model(h, model, np.zeros(model.n_vars, dtype=np.int32))
        self._h = h
        self._n_cols = model.n_vars

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
        h = self._h
        if time_limit is not None:
            if isinstance(time_limit, bool) or not time_limit > 0:
                raise ValueError(
                    f"time_limit must be a positive number of seconds, got {time_limit!r}"
                )
            # HiGHS compares its time_limit with a run clock that accumulates over the life of
            # the Highs object, so the budget of this solve is added to the time already used
            limit = float(h.getRunTime()) + float(time_limit)
        else:
            limit = float("inf")
        driver.apply_options(h, {"time_limit": limit})
        with driver.attach(h, self._options, is_mip=False) as session:
            t1 = time.perf_counter()
            h.run()
            t_solve = time.perf_counter() - t1
        out = driver.read(h, self._model, session, want_duals=True, bounded=self._bounded)
        return out.solution(
            self._model,
            backend="highs",
            solver="highs",
            time=t_solve,
            timings={"solve": t_solve},
            n_model_columns=self._model.n_vars,
            stats={
                "iterations": int(h.getInfo().simplex_iteration_count),
                "n_vars": self._n_cols,
            },
        )

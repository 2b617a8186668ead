"""Talking to one ``highspy.Highs`` instance: options, callbacks, status, solution and bound.

Every in-process HiGHS run of the library ends in a ``highspy.Highs`` object: the ``"highs"``
backend creates it, :class:`~odtkit.solvers.IncrementalLP` keeps one alive, PuLP's ``HiGHS``
interface and Pyomo's ``appsi_highs`` / ``highs`` interfaces create their own. This module owns
what is done to such an object, so the rules exist once:

* :func:`highs_options` maps :class:`~odtkit.solvers.SolveOptions` to HiGHS option names and
  :func:`apply_options` is the one validating setter (:func:`check_options` runs it on a
  throwaway object, for interfaces that take a dict and set it themselves);
* :func:`attach` installs the callbacks of one run -- the log, the (time, incumbent, bound)
  trace, the interrupt polling -- and a temporary SIGINT handler, as a context manager that
  always restores them; the :class:`Session` it yields holds what they collected. HiGHS polls
  the interrupt callbacks only in its node loop, so a thread (:func:`odtkit._limits.sigint_watch`)
  also sets its time limit to 0 when Ctrl-C arrives: the root cut loop and sub-MIPs stop within
  milliseconds. Still not interruptible: an LP solved inside the MIP (FlowOCT's root LP, tens of
  seconds on tic-tac-toe at depth 3) and the MIP presolve, which also overshoot a time limit;
* :func:`read` maps HiGHS's model status to :class:`~odtkit.results.Status` (:func:`status_of`),
  reads the solution and hands it to :func:`conclude`: the one bound rule :func:`final_bound` and
  the final trace row :func:`final_trace`, giving a :class:`Readout` that makes the
  :class:`~odtkit.solvers.Solution`. Those outcome rules are backend-neutral and live in
  :mod:`odtkit.solvers._common`, which the backends that parse a solver's log or files (PuLP's
  command-line solvers, Pyomo's classic plugins) use without this module.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from odtkit._limits import sigint_handler, sigint_watch
from odtkit._progress import Progress
from odtkit.model import Model
from odtkit.results import Status
from odtkit.solvers._common import Readout, columns_bounded, conclude

if TYPE_CHECKING:
    from odtkit.solvers._registry import SolveOptions

__all__ = [
    "NO_HEURISTICS",
    "Session",
    "apply_options",
    "attach",
    "check_options",
    "highs_options",
    "read",
    "read_solution",
    "objective_offset",
    "ready_scheduler",
    "set_start",
    "status_of",
]

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

_FEASIBLE = 2  # HiGHS kSolutionStatusFeasible

# HighsModelStatus member name -> Status; looked up by name so that members missing from an
# older highspy simply never match. kUnboundedOrInfeasible needs the model (see status_of);
# every status not listed (kNotset, the load/model/presolve/solve/postsolve errors, kModelEmpty,
# kUnknown) is an error: nothing was proven.
_STATUS_BY_NAME: dict[str, Status] = {
    "kOptimal": Status.OPTIMAL,
    "kInfeasible": Status.INFEASIBLE,
    "kUnbounded": Status.UNBOUNDED,
    "kObjectiveBound": Status.OBJECTIVE_LIMIT,
    "kObjectiveTarget": Status.OBJECTIVE_LIMIT,
    "kTimeLimit": Status.TIME_LIMIT,
    "kIterationLimit": Status.ITERATION_LIMIT,
    # HiGHS reports mip_max_nodes (and the leaf / improving-solution limits) this way
    "kSolutionLimit": Status.NODE_LIMIT,
    "kInterrupt": Status.INTERRUPTED,
    "kHighsInterrupt": Status.INTERRUPTED,
    "kMemoryLimit": Status.MEMORY_LIMIT,
}


# --- options -------------------------------------------------------------------------------


def highs_options(
    options: SolveOptions, is_mip: bool, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """HiGHS option values for ``options`` (applied in this order, ``extra`` last).

    Parameters
    ----------
    options : SolveOptions
    is_mip : bool
        ``lp_method`` only applies to LPs (HiGHS's ``solver`` option would turn a MIP's
        branch-and-bound off).
    extra : mapping, optional
        HiGHS options given by name; defaults to ``options.extra`` (a backend passes the rest
        when it took some of its own keywords out, e.g. PuLP's ``path``).

    Returns
    -------
    dict
        The log is on but goes to the logging callback of :func:`attach`, not to the console;
        ``mip_rel_gap = mip_abs_gap = 0`` prove optimality exactly unless ``mip_gap`` is set.
    """
    opts: dict[str, Any] = {
        "output_flag": True,
        "log_to_console": False,
        "mip_rel_gap": options.mip_gap,
        "mip_abs_gap": 0.0 if options.mip_gap == 0.0 else 1e-6,
    }
    if options.time_limit is not None:
        opts["time_limit"] = options.time_left()  # the translation so far is charged
    if options.threads is not None:
        opts["threads"] = options.threads
    if options.seed is not None:
        opts["random_seed"] = options.seed
    if options.node_limit is not None:
        opts["mip_max_nodes"] = options.node_limit
    if options.lp_method is not None and not is_mip:
        opts["solver"] = options.lp_method
    if not options.heuristics:
        opts.update(NO_HEURISTICS)
    opts.update(options.extra if extra is None else extra)
    return opts


def _native(value: Any) -> Any:
    # highspy's setOptionValue dispatches on Python types and rejects numpy scalars
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def apply_options(h: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """Set every option on the Highs object ``h``; the one validating setter.

    Returns the options as set (numpy scalars converted to Python numbers). Raises ValueError
    naming the first option HiGHS rejects (unknown name or invalid value).
    """
    import highspy

    applied: dict[str, Any] = {}
    for key, value in options.items():
        value = _native(value)
        if h.setOptionValue(key, value) == highspy.HighsStatus.kError:
            raise ValueError(
                f"HiGHS rejected option {key}={value!r} (unknown name or invalid value)"
            )
        applied[key] = value
    return applied


@functools.cache
def silence_banner() -> None:
    """Create the process's first Highs object with the C-level stdout sent to /dev/null.

    HiGHS prints a two-line copyright banner when the first Highs object of a process is
    created, whatever its options (they can only be set afterwards): users saw it above every
    table. Later objects print nothing unless their own log is switched on (``verbose``).
    """
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def new_highs() -> Any:
    """A fresh ``highspy.Highs`` object, without the banner.

    Public as ``odtkit.solvers.highs.new_highs``: code that talks to highspy itself (reading
    back an LP/MPS file the library wrote, say) gets no copyright banner on stdout either.
    Its options are HiGHS's defaults (set ``output_flag`` False for a silent run).
    """
    import highspy

    silence_banner()
    return highspy.Highs()


def check_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`apply_options` on a throwaway Highs object: for interfaces that take the options
    as a dict and set them unchecked (Pyomo's ``highs``). Returns the converted dict."""
    probe = new_highs()
    probe.setOptionValue("output_flag", False)
    return apply_options(probe, options)


_scheduler = threading.local()
_UNSET = object()

# --- fork --------------------------------------------------------------------------------------
# HiGHS's task scheduler keeps worker threads, and a forked child inherits the scheduler's state
# without its threads: the child's next run waits for workers that do not exist (a ``fork``
# multiprocessing pool after one solve in the parent deadlocked until its 300 s timeout). The
# child learns of the fork from os.register_at_fork and drops the inherited scheduler before its
# first run (non-blocking: a blocking reset would wait for those same workers); HiGHS then builds
# a new one. A highspy without a reset refuses the run instead of hanging.

#: HiGHS ran in this process (so its scheduler has worker threads)
_used = False
#: this process was forked after HiGHS ran in its parent, and has not renewed the scheduler
_forked_after_use = False

FORK_MESSAGE = (
    "HiGHS ran in the parent of this forked process, and its worker threads do not survive "
    "fork(): a run here would deadlock, and this highspy cannot reset its task scheduler. Start "
    "worker processes with the 'spawn' or 'forkserver' start method "
    "(multiprocessing.get_context('spawn'), ProcessPoolExecutor(mp_context=...))"
)


def _after_fork_in_child() -> None:
    global _forked_after_use
    _forked_after_use = _forked_after_use or _used


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _renew_after_fork() -> None:
    """Drop the scheduler a forked child inherited (see above); RuntimeError if impossible."""
    global _forked_after_use
    import highspy

    reset = getattr(highspy.Highs, "resetThreadScheduler", None) or getattr(
        highspy.Highs, "resetGlobalScheduler", None
    )
    if reset is None:  # pragma: no cover - highspy before 1.6
        raise RuntimeError(FORK_MESSAGE)
    try:
        reset(False)  # non-blocking: never wait for the parent's workers
    except Exception as exc:  # pragma: no cover - depends on the HiGHS build
        raise RuntimeError(FORK_MESSAGE) from exc
    with contextlib.suppress(AttributeError):
        del _scheduler.threads
    _forked_after_use = False


def ready_scheduler(threads: int | None) -> None:
    """Make the next HiGHS run in this thread accept the thread count ``threads``.

    HiGHS keeps one task scheduler per thread, sized by the first run in that thread; a later
    run with another explicit ``threads`` fails before it starts (status ``error``, "the
    scheduler has already been initialized"). When the requested count differs from the last one
    requested here, this thread's scheduler is shut down and the next run builds a new one.
    In a process forked after HiGHS ran in its parent, the inherited scheduler is dropped first
    (its worker threads did not survive the fork); RuntimeError if this highspy cannot.
    """
    import highspy

    global _used
    if _forked_after_use:
        _renew_after_fork()
    _used = True
    last = getattr(_scheduler, "threads", _UNSET)
    if last is _UNSET and threads is None:
        _scheduler.threads = None  # any scheduler already running serves a default run
        return
    if last != threads:
        reset = getattr(highspy.Highs, "resetThreadScheduler", None)
        if reset is None:  # pragma: no cover - highspy before per-thread schedulers
            reset = highspy.Highs.resetGlobalScheduler
        reset(True)
    _scheduler.threads = threads


# --- callbacks -----------------------------------------------------------------------------


class Session:
    """What the callbacks of one HiGHS run collected (created by :func:`attach`).

    Attributes
    ----------
    log : list of str
        Log messages in order.
    rows : list of (time, incumbent, bound)
        The trace so far, objective offset included.
    tracing : bool
        Whether the trace callbacks are installed (a MIP and ``trace`` not False).
    trace_enabled : bool
        ``options.trace is not False``: whether the Solution gets a trace at all.
    offset : float
        Objective constant HiGHS does not know (PuLP drops it), added to every value read.
    start_objective : float or None
        Objective of the MIP start handed to HiGHS, if any.
    """

    def __init__(
        self,
        options: SolveOptions,
        is_mip: bool,
        offset: float = 0.0,
        start_objective: float | None = None,
        label: str = "MIP",
    ) -> None:
        self.log: list[str] = []
        self.rows: list[tuple[float, float, float]] = []
        self.trace_enabled = options.trace is not False
        self.tracing = is_mip and self.trace_enabled
        self.offset = float(offset)
        self.start_objective = start_objective
        self._verbose = options.verbose
        self._log_callback = options.log_callback
        self._should_stop = options.should_stop
        self._stop = threading.Event()
        self.progress = Progress(label, options.progress if is_mip else False)

    @property
    def interrupted(self) -> bool:
        """Whether ``should_stop`` or Ctrl-C asked the run to stop."""
        return self._stop.is_set()

    def request_stop(self, *_: Any) -> None:
        """Ask the run to stop at HiGHS's next interrupt check (also the SIGINT handler)."""
        self._stop.set()

    def on_log(self, e: Any) -> None:
        self.log.append(e.message)
        if self._verbose:
            sys.stdout.write(e.message)
        if self._log_callback is not None:
            self._log_callback(e.message)

    def on_improving(self, e: Any) -> None:
        d, fix = e.data_out, self.offset
        self.rows.append((d.running_time, d.objective_function_value + fix, d.mip_dual_bound + fix))

    def on_mip_log(self, e: Any) -> None:
        d, fix = e.data_out, self.offset
        row = (d.running_time, d.mip_primal_bound + fix, d.mip_dual_bound + fix)
        # the periodic log line repeats itself between changes; keep the changes only
        if not self.rows or self.rows[-1][1:] != row[1:]:
            self.rows.append(row)

    def on_interrupt(self, e: Any) -> None:
        if self.progress.active and hasattr(e.data_out, "mip_dual_bound"):
            d, fix = e.data_out, self.offset
            self.progress.update(d.mip_primal_bound + fix, d.mip_dual_bound + fix)
        if self._stop.is_set() or (self._should_stop is not None and self._should_stop()):
            self._stop.set()
            e.interrupt()


@contextlib.contextmanager
def attach(
    h: Any,
    options: SolveOptions,
    *,
    is_mip: bool,
    offset: float = 0.0,
    start_objective: float | None = None,
    label: str = "MIP",
) -> Iterator[Session]:
    """Install the callbacks of one run on ``h`` for the duration of the ``with`` block.

    * logging: every line is collected, echoed when ``options.verbose`` and forwarded to
      ``options.log_callback`` (HiGHS's own console output is off, see :func:`highs_options`);
    * for a MIP with ``options.trace`` not False, HiGHS's improving-solution and MIP-logging
      callbacks record (time, incumbent, bound), ``offset`` added;
    * the simplex / IPM / MIP interrupt callbacks poll ``options.should_stop`` and the flag that a
      temporary SIGINT handler (Ctrl-C; main thread only, restored on exit) sets; the MIP's
      also feeds the live line of ``options.progress`` (:class:`odtkit._progress.Progress`,
      labelled ``label``).

    Run HiGHS inside the block; :func:`read` the outcome with the yielded :class:`Session`. The
    thread scheduler is readied for ``options.threads`` (:func:`ready_scheduler`).
    """
    session = Session(options, is_mip, offset, start_objective, label)
    ready_scheduler(options.threads)
    in_main = threading.current_thread() is threading.main_thread()
    hooks: list[tuple[Any, Any]] = [(h.cbLogging, session.on_log)]
    if session.tracing:
        hooks += [
            (h.cbMipImprovingSolution, session.on_improving),
            (h.cbMipLogging, session.on_mip_log),
        ]
    # outside the main thread no SIGINT handler can be installed: poll only for should_stop
    if in_main or options.should_stop is not None or session.progress.active:
        hooks += [
            (h.cbSimplexInterrupt, session.on_interrupt),
            (h.cbIpmInterrupt, session.on_interrupt),
            (h.cbMipInterrupt, session.on_interrupt),
        ]
    for event, hook in hooks:
        event.subscribe(hook)

    def stop_now() -> None:
        # HiGHS polls the interrupt callbacks only in its node loop and LP iterations of its
        # own; its root cut loop and sub-MIPs check just the time limit (RBinOCT on
        # tic-tac-toe at depth 3: 8 s after Ctrl-C). A zero time limit stops them within ms;
        # the status then reads interrupted (status_of). An LP solve inside the MIP keeps the
        # limit it started with: FlowOCT's root LP still runs to its end.
        session.request_stop()
        h.setOptionValue("time_limit", 0.0)

    try:
        with sigint_handler(session.request_stop), sigint_watch(stop_now):
            yield session
    finally:
        session.progress.close()
        for event, hook in hooks:
            event.unsubscribe(hook)


def set_start(h: Any, start: np.ndarray) -> None:
    """Hand a full column vector (in ``h``'s column order) to HiGHS as MIP start; HiGHS checks
    it, and an infeasible start is not an error."""
    import highspy

    sol = highspy.HighsSolution()
    sol.col_value = start.tolist()
    sol.value_valid = True
    h.setSolution(sol)


def objective_offset(h: Any) -> float:
    """The objective constant the Highs object ``h`` holds."""
    getter = getattr(h, "getObjectiveOffset", None)
    if getter is None:  # pragma: no cover - highspy before getObjectiveOffset
        return float(h.getLp().offset_)
    return float(getter()[1])


# --- outcome -------------------------------------------------------------------------------


def status_of(model_status: Any, *, bounded: bool, interrupted: bool = False) -> Status:
    """:class:`Status` for HiGHS's ``HighsModelStatus``.

    Parameters
    ----------
    model_status : highspy.HighsModelStatus
    bounded : bool
        Every column has finite bounds: then "unbounded or infeasible" means infeasible.
    interrupted : bool
        ``should_stop`` or Ctrl-C asked the run to stop: the status is ``interrupted`` unless
        HiGHS proved optimality or infeasibility before it stopped.
    """
    name = getattr(model_status, "name", str(model_status))
    if name == "kUnboundedOrInfeasible":
        status = Status.INFEASIBLE if bounded else Status.INFEASIBLE_OR_UNBOUNDED
    else:
        status = _STATUS_BY_NAME.get(name, Status.ERROR)
    if interrupted and status not in (Status.OPTIMAL, Status.INFEASIBLE):
        return Status.INTERRUPTED
    return status


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


def read(
    h: Any,
    model: Model[object],
    session: Session | None = None,
    *,
    want_duals: bool,
    bounded: bool | None = None,
) -> Readout:
    """Status, solution, bound, node count, trace and log of the finished run on ``h``.

    Parameters
    ----------
    h : highspy.Highs
    model : Model
        What was solved (``is_mip`` decides how the bound is read).
    session : Session, optional
        The :func:`attach` session of the run (interrupt flag, trace, log, offset); ``None`` for
        a run whose callbacks this module did not install.
    want_duals : bool
        Read row duals and reduced costs (when HiGHS has a feasible dual).
    bounded : bool, optional
        Whether every column is bounded; defaults to :func:`columns_bounded` of ``model``.
    """
    info = h.getInfo()
    model_status = h.getModelStatus()
    status = status_of(
        model_status,
        bounded=columns_bounded(model) if bounded is None else bounded,
        interrupted=session is not None and session.interrupted,
    )
    x, objective, duals, reduced = read_solution(h, info, want_duals)
    offset = session.offset if session is not None else 0.0
    # an invalid info (the run never started) holds defaults, not a bound or a node count
    valid = bool(info.valid) and model.is_mip
    run_time = float(h.getRunTime())
    stats: dict[str, Any] = {
        "model_status": h.modelStatusToString(model_status),
        "highs_run_time": run_time,
    }
    if session is not None and session.start_objective is not None:
        # HiGHS's first incumbent is the start when it accepted it (known from the trace only)
        stats["start_used"] = (
            bool(
                session.rows
                and abs(session.rows[0][1] - session.start_objective)
                <= 1e-6 * max(1.0, abs(session.start_objective))
            )
            if session.tracing
            else None
        )
    return conclude(
        model,
        status,
        x,
        objective + offset,
        time=run_time,
        version=str(h.version()),
        raw_bound=float(info.mip_dual_bound) + offset if valid else None,
        nodes=int(info.mip_node_count) if valid else 0,
        log="".join(session.log) if session is not None else "",
        trace_rows=session.rows if session is not None and session.tracing else None,
        trace_enabled=session is None or session.trace_enabled,
        duals=duals,
        reduced_costs=reduced,
        stats=stats,
    )

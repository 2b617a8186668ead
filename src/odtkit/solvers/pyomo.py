"""The ``"pyomo"`` backend: Model IR -> Pyomo ``ConcreteModel`` -> a Pyomo solver.

The Pyomo model mirrors the IR: one indexed ``Var`` per variable group (same name; indexed by
position ``0..n-1`` for 1-d groups and by index tuples ``(i, j, ...)`` otherwise), one indexed
``Constraint`` per constraint block (same name, indexed by the block's local row number), and an
``Objective`` named ``objective`` whose constant is the IR offset. Every row is built as one
``LinearExpression`` straight from a CSR row slice (no operator overloading, no per-term ``+=``).
:func:`to_pyomo` exposes the translation on its own (e.g. to write the model with Pyomo's
writers or to inspect it).

Solvers (``solver=`` option of :func:`odtkit.solvers.solve`)
-------------------------------------------------------------
``"appsi_highs"`` (default)
    ``pyomo.contrib.appsi.solvers.Highs``: persistent highspy interface, the one Pyomo HiGHS
    interface with MIP starts (``warmstart``). Pyomo transfers the model (``set_instance``);
    after that, the highspy object appsi created (``_solver_model``) is run through the same
    HiGHS driver as the ``"highs"`` backend (:mod:`odtkit.solvers._highs_driver`): options,
    log / trace / interrupt callbacks and Ctrl-C, and status, dual bound and node count read from
    highspy (appsi has no name for some HiGHS statuses, e.g. a node limit or an interrupt).
    Values and duals come back through appsi's loader. Capabilities: all seven
    (``mip_start``, ``dual_bound``, ``trace``, ``interrupt``, ``duals`` -- LP row duals, HiGHS
    convention ``c - A.T @ duals = reduced_costs`` --, ``lp_method``, ``heuristics_off``).
``"highs"``
    ``pyomo.contrib.solver`` HiGHS interface (Pyomo's newer solver API). It sets up its highspy
    object inside ``solve()``, so no callbacks can be attached before the run (no ``trace``, no
    ``interrupt``) and in the installed Pyomo it has no MIP start; options are validated by the
    driver before the solve and status, bound and node count are read from that highspy object
    afterwards with the driver's rules. Capabilities: ``dual_bound``, ``duals``, ``lp_method``,
    ``heuristics_off``.
any other name
    A solver of Pyomo's classic ``SolverFactory`` (e.g. ``"cbc"``, ``"glpk"``, ``"gurobi"``),
    optionally with ``executable="/path/to/binary"``. It must be installed (ValueError
    otherwise). ``mip_start`` only if the plugin is ``warm_start_capable()``; no proven dual
    bound (``bound`` is ``-inf`` unless optimal); ``time_limit`` / ``threads`` / ``seed`` /
    ``mip_gap`` / ``node_limit`` are mapped for cbc, glpk, gurobi and cplex only: asking for one
    that has no mapping raises ValueError (the default ``mip_gap=0`` is passed where a mapping
    exists, otherwise the solver's own default gap applies). Capabilities: ``duals``, and
    ``mip_start`` when the plugin is warm-start capable. Pyomo writes the solver's files into a
    private directory of :mod:`odtkit.solvers._cmd` (removed on return and on SIGTERM, swept by
    the next solve after a SIGKILL); Pyomo starts the solver process itself, so unlike PuLP's
    ``"cbc"`` it is not killed with its Python process (``backend="pulp", solver="cbc"`` is).

:meth:`PyomoBackend.capabilities_for` answers per solver (ValueError for one that is unknown or
not installed); the registry checks every option against it once, so nothing is silently dropped.
Extra keyword options go to the solver as its own options (HiGHS option names for the two HiGHS
interfaces, validated before the solve).

Cost of the modelling layer (measured on 2 shared cores, tic-tac-toe depth 2): RBinOCT
(3.9k columns, 1.0k rows, 84k nonzeros) builds in ~0.1-0.3 s and transfers to HiGHS in ~1.2 s;
FlowOCT (13.5k columns, 19k rows, 90k nonzeros) in ~0.5-0.7 s and ~2.3-2.5 s. The transfer is
Pyomo's own expression walking (``generate_standard_repn`` per row); the highs backend passes
the same arrays in ~0.01 s. The build pauses the cyclic garbage collector (4-6x faster) and
appsi is created with ``only_child_vars=True`` (all columns in one call rather than one highspy
``addVars`` per row, 2.5x faster on FlowOCT).

``Solution.trace`` is HiGHS's (time, incumbent, bound) trace for ``"appsi_highs"`` (a MIP, unless
``trace=False``), ending with the final row; for the other solvers it is that final row alone.
``Solution.timings`` splits ``build`` (IR -> ConcreteModel), ``transfer`` (Pyomo ->
solver, incl. Pyomo's expression walking), ``solve`` (solver run, == ``Solution.time``) and
``read`` (solution back into a numpy vector).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np

from odtkit._limits import alarm_at, check_deadline, sigint_flag, sigint_watch
from odtkit.model import Model
from odtkit.results import Status
from odtkit.solvers import _cmd
from odtkit.solvers import _common as common
from odtkit.solvers import _highs_driver as driver
from odtkit.solvers._registry import (
    CAPABILITIES,
    Backend,
    Capability,
    SolveOptions,
    register_backend,
)
from odtkit.solvers._solution import Solution

__all__ = ["DEFAULT_SOLVER", "PyomoBackend", "PyomoModel", "to_pyomo"]

#: Solver name used when ``solver=None``.
DEFAULT_SOLVER = "appsi_highs"

# Pyomo's newer HiGHS interface sets up its highspy object inside solve(): no MIP start in this
# Pyomo, and no way to attach the driver's callbacks before the run
_CONTRIB_HIGHS_CAPS = frozenset(
    {Capability.DUAL_BOUND, Capability.DUALS, Capability.LP_METHOD, Capability.HEURISTICS_OFF}
)

# Classic SolverFactory option names per solver: option -> (solver option name, converter).
_LEGACY_KEYS = ("time_limit", "threads", "seed", "mip_gap", "node_limit")
_LEGACY_TYPES: dict[str, Any] = {
    "time_limit": float,
    "threads": int,
    "seed": int,
    "mip_gap": float,
    "node_limit": int,
}


def _legacy_names(*names: str, **types: Any) -> dict[str, tuple[str, Any]]:
    """The option table of a solver that names all five options (``names`` in
    :data:`_LEGACY_KEYS` order); ``types`` overrides a converter."""
    return {
        k: (n, types.get(k, _LEGACY_TYPES[k])) for k, n in zip(_LEGACY_KEYS, names, strict=True)
    }


_LEGACY_OPTION_NAMES: dict[str, dict[str, tuple[str, Any]]] = {
    "cbc": _legacy_names("sec", "threads", "randomCbcSeed", "ratioGap", "maxNodes"),
    "glpk": {
        "time_limit": ("tmlim", lambda t: max(1, int(np.ceil(t)))),
        "mip_gap": ("mipgap", float),
    },
    "gurobi": _legacy_names(
        "TimeLimit", "Threads", "Seed", "MIPGap", "NodeLimit", node_limit=float
    ),
    "cplex": _legacy_names(
        "timelimit", "threads", "randomseed", "mip_tolerances_mipgap", "mip_limits_nodes"
    ),
}
for _alias, _base in (
    ("gurobi_direct", "gurobi"),
    ("gurobi_persistent", "gurobi"),
    ("cplex_direct", "cplex"),
    ("cplex_persistent", "cplex"),
):
    _LEGACY_OPTION_NAMES[_alias] = _LEGACY_OPTION_NAMES[_base]


@dataclass
class PyomoModel:
    """A Pyomo translation of an IR model.

    Attributes
    ----------
    model : pyomo.environ.ConcreteModel
    variables : list
        ``VarData`` objects in IR column order (``variables[j]`` is column ``j``).
    used : ndarray of bool
        Columns that appear in a row or in the objective. Pyomo's solver interfaces pass only
        those to the solver; the others get 0 clipped into their bounds when read back.
    constraints : list
        ``ConstraintData`` objects in IR row order; ``None`` for free rows (no finite bound),
        which are not added to Pyomo.
    build_time : float
        Seconds spent building.
    """

    model: Any
    variables: list[Any]
    used: np.ndarray
    constraints: list[Any]
    build_time: float


def _component_name(block: Any, name: str, suffix: str) -> str:
    # a group and a block may share a name (or shadow a ConcreteModel attribute)
    candidate = name
    while hasattr(block, candidate):
        candidate = f"{candidate}_{suffix}"
    return candidate


# Pyomo creates hundreds of thousands of small container objects here; the cyclic garbage
# collector would rescan the growing heap again and again (measured 4-6x slower with it)
@common.paused_gc()
def to_pyomo(model: Model[object]) -> PyomoModel:
    """``model`` as a Pyomo ``ConcreteModel`` (how: the module docstring), with its ``VarData``
    and ``ConstraintData`` listed in the IR's order (:class:`PyomoModel`)."""
    import pyomo.environ as pe
    from pyomo.core.expr.numeric_expr import LinearExpression

    t0 = time.perf_counter()
    m = pe.ConcreteModel(name=model.name)
    lower = np.where(np.isfinite(model.col_lower), model.col_lower, np.nan)
    upper = np.where(np.isfinite(model.col_upper), model.col_upper, np.nan)
    xs: list[Any] = []
    for group in model.vars.values():
        check_deadline()
        sl = group.slice
        integral = model.integrality[sl]
        if integral.all():
            lo, up = model.col_lower[sl], model.col_upper[sl]
            binary = group.kind == "binary" and (lo >= 0).all() and (up <= 1).all()
            domain = pe.Binary if binary else pe.Integers
        elif not integral.any():
            domain = pe.Reals
        else:  # pragma: no cover - the builder gives every group one kind
            domain = None
        if len(group.shape) == 1:
            index: Any = range(group.size)
        else:
            index = pe.Set(
                initialize=list(product(*(range(s) for s in group.shape))),
                dimen=len(group.shape),
                ordered=True,
            )
            m.add_component(_component_name(m, f"{group.name}_index", "set"), index)
        var = pe.Var(index, domain=domain if domain is not None else pe.Reals, dense=True)
        m.add_component(_component_name(m, group.name, "var"), var)
        datas = list(var.values())
        if domain is None:  # pragma: no cover
            for v, flag in zip(datas, integral.tolist(), strict=True):
                v.domain = pe.Integers if flag else pe.Reals
        # bounds: None for infinite ones (nan marks them here so the lists stay native floats)
        for v, lo, up in zip(datas, lower[sl].tolist(), upper[sl].tolist(), strict=True):
            v.setlb(None if lo != lo else lo)
            v.setub(None if up != up else up)
        xs.extend(datas)

    data, indices, indptr = common.row_lists(model)
    row_lo = np.where(np.isfinite(model.row_lower), model.row_lower, np.nan).tolist()
    row_up = np.where(np.isfinite(model.row_upper), model.row_upper, np.nan).tolist()
    cons: list[Any] = []
    for block in model.constraints.values():
        first = block.start

        def rule(_m: Any, r: int, first: int = first) -> Any:
            i = first + r
            if r % 4096 == 0:
                check_deadline()  # Pyomo builds one row at a time: seconds on big models
            lo, up = row_lo[i], row_up[i]
            if lo != lo and up != up:
                return pe.Constraint.Skip  # free row: constrains nothing
            s, e = indptr[i], indptr[i + 1]
            body = LinearExpression(
                linear_coefs=data[s:e], linear_vars=[xs[j] for j in indices[s:e]]
            )
            if lo == up:
                return body == lo
            return (None if lo != lo else lo, body, None if up != up else up)

        con = pe.Constraint(range(block.size), rule=rule)
        m.add_component(_component_name(m, block.name, "con"), con)
        cons.extend(con[r] if r in con else None for r in range(block.size))

    nz = np.flatnonzero(model.c)
    objective = LinearExpression(
        constant=float(model.offset),
        linear_coefs=model.c[nz].tolist(),
        linear_vars=[xs[j] for j in nz.tolist()],
    )
    m.add_component(_component_name(m, "objective", "obj"), pe.Objective(expr=objective))
    return PyomoModel(m, xs, common.used_columns(model), cons, time.perf_counter() - t0)


def _read_columns(
    get: Any, built: PyomoModel, model: Model[object], fill: np.ndarray
) -> np.ndarray:
    """Column values from ``get(vars_to_load=...)`` for the used columns, ``fill`` elsewhere."""
    out = fill.astype(float)
    idx = np.flatnonzero(built.used)
    if idx.size:
        xs = built.variables
        got = get(vars_to_load=[xs[j] for j in idx.tolist()])
        out[idx] = np.fromiter(got.values(), dtype=float, count=idx.size)
    return out


def _status_from_termination(tc: Any, model: Model[object], node_limit: int | None) -> str:
    name = getattr(tc, "name", str(tc))
    mapping = {
        "optimal": "optimal",
        "convergenceCriteriaSatisfied": "optimal",
        "globallyOptimal": "optimal",
        "locallyOptimal": "optimal",
        "infeasible": "infeasible",
        "provenInfeasible": "infeasible",
        "locallyInfeasible": "infeasible",
        "unbounded": "unbounded",
        "maxTimeLimit": "time_limit",
        "maxIterations": "node_limit" if node_limit is not None else "iteration_limit",
        "iterationLimit": "node_limit" if node_limit is not None else "iteration_limit",
        "maxEvaluations": "node_limit" if node_limit is not None else "iteration_limit",
        "objectiveLimit": "objective_limit",
        "minFunctionValue": "objective_limit",
        "interrupted": "interrupted",
        "userInterrupt": "interrupted",
    }
    if name == "infeasibleOrUnbounded":
        return common.infeasible_or_unbounded(model)
    return mapping.get(name, "error")


# solution statuses of classic plugins whose point may be loaded
_LOADABLE = frozenset(
    {"optimal", "locallyOptimal", "globallyOptimal", "feasible", "bestSoFar", "stoppedByLimit"}
)


@contextlib.contextmanager
def _quiet(name: str, level: int = logging.ERROR) -> Iterator[None]:
    """Only records of ``level`` and above from logger ``name`` inside the block."""
    logger = logging.getLogger(name)
    previous = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(previous)


def _quiet_logger() -> logging.Logger:
    # appsi copies everything written to stdout during the run into a logger; the driver's
    # logging callback already collects the log, so that copy goes nowhere
    logger = logging.getLogger("odtkit.solvers.pyomo.appsi")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return logger


class PyomoBackend(Backend):
    """Pyomo modelling layer over HiGHS (``appsi_highs`` by default) or any Pyomo solver.

    Class-level ``capabilities`` are those of the default solver; :meth:`capabilities_for`
    answers per solver name, and the registry checks every option against it.
    """

    name = "pyomo"
    default_solver = DEFAULT_SOLVER
    capabilities = CAPABILITIES

    @classmethod
    def available(cls) -> bool:
        return common.importable("highspy", "pyomo.environ")  # both are hard dependencies

    @classmethod
    def version(cls) -> str:
        import pyomo.version

        return str(pyomo.version.version)

    @classmethod
    def capabilities_for(
        cls, solver: str | None = None, executable: str | None = None, **extra: Any
    ) -> frozenset[Capability]:
        """Capabilities of ``solver`` through Pyomo (ValueError if it is not available here;
        ``executable=`` names a classic solver's binary)."""
        name = solver or DEFAULT_SOLVER
        if name == "appsi_highs":
            return CAPABILITIES
        if name == "highs":
            return _CONTRIB_HIGHS_CAPS
        opt = cls._legacy_solver(name, executable)
        caps = {Capability.DUALS}
        if opt.warm_start_capable():
            caps.add(Capability.MIP_START)
        return frozenset(caps)

    @staticmethod
    def _legacy_solver(name: str, executable: str | None) -> Any:
        import pyomo.environ as pe

        if executable and not (os.path.isfile(executable) and os.access(executable, os.X_OK)):
            raise ValueError(
                f"backend 'pyomo': solver {name!r} is not available here "
                f"(no executable at {executable!r})"
            )
        kwargs = {"executable": executable} if executable else {}
        # the factory logs a traceback for unknown names before returning a placeholder
        try:
            with _quiet("pyomo.opt", logging.CRITICAL):
                opt = pe.SolverFactory(name, **kwargs)
        except Exception as exc:  # pragma: no cover - pyomo raises various errors
            raise ValueError(f"backend 'pyomo': cannot create solver {name!r}: {exc}") from exc
        if opt is None or type(opt).__name__ == "UnknownSolver":
            raise ValueError(f"backend 'pyomo': {name!r} is not a Pyomo solver name")
        if not opt.available(exception_flag=False):
            where = f"no executable at {executable!r}" if executable else "not installed"
            raise ValueError(
                f"backend 'pyomo': solver {name!r} is not available here ({where}); "
                f"the HiGHS interfaces 'appsi_highs' and 'highs' always are"
            )
        return opt

    # ------------------------------------------------------------------------------------------
    def solve(self, model: Model[object], options: SolveOptions) -> Solution:
        solver = options.solver or DEFAULT_SOLVER
        extra = dict(options.extra)
        executable = extra.pop("executable", None)
        path: _PyomoPath[Any]
        if solver == "appsi_highs":
            path = _AppsiPath(extra, solver)
        elif solver == "highs":
            path = _ContribHighsPath(extra, solver)
        else:
            path = _LegacyPath(extra, solver, executable)
        return path.solve(model, options)


# --- the three solve paths: translate -> run -> read (odtkit.solvers._common.SolvePath) ---------


def _want_duals(model: Model[object], options: SolveOptions) -> bool:
    return not model.is_mip and options.duals is not False


class _PyomoPath(common.SolvePath[PyomoModel, common.Raw]):
    """The translation every Pyomo path shares: :func:`to_pyomo`, then the start's values."""

    def __init__(self, extra: dict[str, Any], solver: str) -> None:
        self.extra, self.solver = extra, solver

    def translate(self, model: Model[object], options: SolveOptions) -> PyomoModel:
        if "highs" in self.solver:
            driver.silence_banner()  # before Pyomo creates its own first Highs object
        with alarm_at(options.deadline):  # Pyomo's loops never return in between
            built = to_pyomo(model)
        if options.start is not None:
            for v, val in zip(built.variables, options.start.tolist(), strict=True):
                v.set_value(val, skip_validation=True)
        return built


@dataclass
class _HighsRun:
    """A HiGHS run through one of Pyomo's interfaces, read by the driver (``out``); ``loader``
    gives values and duals in Pyomo's column order."""

    built: PyomoModel
    loader: Any
    out: common.Readout
    solver: str
    solve_time: float
    transfer_time: float


def _read_highs_run(raw: _HighsRun, model: Model[object]) -> Solution:
    """Values and duals through Pyomo's loader (it knows its column order), the rest from the
    driver's readout (duals only where it found HiGHS's dual feasible)."""
    built, loader, out = raw.built, raw.loader, raw.out
    t2 = time.perf_counter()
    x = duals = reduced = None
    if out.has_solution:
        get_vars = getattr(loader, "get_vars", None) or loader.get_primals
        x = _read_columns(get_vars, built, model, common.idle_values(model))
        if out.duals is not None:
            duals, reduced = _lp_duals(loader, built, model)
    return out.solution(
        model,
        backend="pyomo",
        solver=raw.solver,
        time=raw.solve_time,
        x=x,
        duals=duals,
        reduced_costs=reduced,
        timings=common.timings(built.build_time, raw.transfer_time, raw.solve_time, t2),
    )


def _lp_duals(opt: Any, built: PyomoModel, model: Model[object]) -> tuple[np.ndarray, np.ndarray]:
    present = [c for c in built.constraints if c is not None]
    got = opt.get_duals(cons_to_load=present) if present else {}
    duals = np.zeros(model.n_constraints)
    rows = np.fromiter((c is not None for c in built.constraints), bool, model.n_constraints)
    duals[rows] = np.fromiter((got[c] for c in present), float, len(present))
    # a column in no row and without cost has reduced cost 0 (= its cost)
    reduced = _read_columns(opt.get_reduced_costs, built, model, model.c)
    return duals, reduced


class _AppsiPath(_PyomoPath[_HighsRun]):
    """Pyomo's ``appsi_highs``: its highspy object configured, called back and read by the
    driver, so statuses, bounds and node counts are those of the highs backend."""

    def run(self, native: PyomoModel, model: Model[object], options: SolveOptions) -> _HighsRun:
        from pyomo.contrib.appsi.solvers import Highs

        # only_child_vars: add every Var of the model in one call, instead of appsi discovering
        # them constraint by constraint (one highspy addVars call per row: 2.5x slower transfer)
        opt = Highs(only_child_vars=True)
        cfg = opt.config
        cfg.load_solution = False
        # appsi captures stdout during the run; the driver's verbose echo reaches the terminal
        # through it only when it streams
        cfg.stream_solver = options.verbose
        cfg.solver_output_logger = _quiet_logger()
        cfg.warmstart = options.start is not None
        # appsi sets log_to_console=True right before the run, then its highs_options: turn it
        # back off so that the log comes through the driver's callback only
        opt.highs_options = {"log_to_console": False}
        # we hand Pyomo a finished model: skip its change detection on solve()
        uc = opt.update_config
        for flag in (
            "check_for_new_or_removed_constraints",
            "check_for_new_or_removed_vars",
            "check_for_new_or_removed_params",
            "check_for_new_objective",
            "update_constraints",
            "update_vars",
            "update_params",
            "update_named_expressions",
            "update_objective",
        ):
            setattr(uc, flag, False)
        t0 = time.perf_counter()
        with common.paused_gc(), alarm_at(options.deadline):  # see to_pyomo
            opt.set_instance(native.model)
        t_transfer = time.perf_counter() - t0
        check_deadline()
        # the highspy object appsi created: options, callbacks and the readout go through the
        # driver
        h = opt._solver_model
        driver.apply_options(h, driver.highs_options(options, model.is_mip, self.extra))
        start = options.start if model.is_mip else None
        with (
            driver.attach(
                h,
                options,
                is_mip=model.is_mip,
                start_objective=None if start is None else model.objective_value(start),
                label=model.name,
            ) as session,
            _quiet("pyomo.contrib.appsi.solvers.highs"),
        ):
            # quiet: appsi warns about HiGHS statuses it has no name for (e.g. kInterrupt),
            # which the driver reads itself
            t1 = time.perf_counter()
            opt.solve(native.model)
            t_solve = time.perf_counter() - t1
        out = driver.read(h, model, session, want_duals=_want_duals(model, options))
        return _HighsRun(native, opt, out, "pyomo/appsi_highs", t_solve, t_transfer)

    def read(self, raw: _HighsRun, model: Model[object], options: SolveOptions) -> Solution:
        return _read_highs_run(raw, model)


class _ContribHighsPath(_PyomoPath[_HighsRun]):
    """Pyomo's newer ``highs`` interface: it sets up its highspy object inside ``solve()`` (no
    MIP start, no callbacks attached before the run); the driver reads the object afterwards."""

    def run(self, native: PyomoModel, model: Model[object], options: SolveOptions) -> _HighsRun:
        from pyomo.contrib.solver.common.factory import SolverFactory

        opt = SolverFactory("highs")
        stream = io.StringIO()
        tee: list[Any] = [stream]
        if options.verbose:
            tee.append(sys.stdout)
        # this interface collects the console log through its tee, and sets the options itself:
        # they are validated here first
        highs_options = driver.check_options(
            {**driver.highs_options(options, model.is_mip, self.extra), "log_to_console": True}
        )
        driver.ready_scheduler(options.threads)

        def stop_now() -> None:
            # the Highs object this interface made for the run (none yet: stops at its start)
            h = getattr(opt, "_solver_model", None)
            if h is not None:
                h.setOptionValue("time_limit", 0.0)

        t0 = time.perf_counter()
        # Ctrl-C must not raise inside HiGHS's log callback (the run then ends as "Solve
        # error"): a flag, and a thread that stops HiGHS through its time limit
        with common.paused_gc(), sigint_flag() as ctrl_c, sigint_watch(stop_now):
            res = opt.solve(
                native.model,
                load_solutions=False,
                raise_exception_on_nonoptimal_result=False,
                solver_options=highs_options,
                tee=tee,
            )
        t_total = time.perf_counter() - t0
        t_solve = float(getattr(res.timing_info, "highs_time", t_total))
        log = stream.getvalue()
        if options.log_callback is not None:
            common.emit_log(log, SolveOptions(log_callback=options.log_callback))
        # the run's highspy object: read with the same rules as every HiGHS run
        out = driver.read(opt._solver_model, model, want_duals=_want_duals(model, options))
        out.log = log
        if ctrl_c.is_set() and out.status not in (Status.OPTIMAL, Status.INFEASIBLE):
            out.status = Status.INTERRUPTED
        transfer = max(t_total - t_solve, 0.0)
        return _HighsRun(native, res.solution_loader, out, "pyomo/highs", t_solve, transfer)

    def read(self, raw: _HighsRun, model: Model[object], options: SolveOptions) -> Solution:
        return _read_highs_run(raw, model)


@dataclass
class _LegacyRun:
    built: PyomoModel
    opt: Any
    result: Any
    log: str
    solve_time: float
    want_duals: bool


class _LegacyPath(_PyomoPath[_LegacyRun]):
    """A classic ``SolverFactory`` plugin (CBC, GLPK, Gurobi, ...): files in, files out."""

    def __init__(self, extra: dict[str, Any], solver: str, executable: str | None) -> None:
        super().__init__(extra, solver)
        self.executable = executable

    def run(self, native: PyomoModel, model: Model[object], options: SolveOptions) -> _LegacyRun:
        import pyomo.environ as pe
        from pyomo.common.tee import capture_output
        from pyomo.common.tempfiles import TempfileManager

        solver = self.solver
        opt = PyomoBackend._legacy_solver(solver, self.executable)
        for k, v in _legacy_options(solver, options, self.extra).items():
            opt.options[k] = v
        want_duals = _want_duals(model, options)
        if want_duals:
            native.model.dual = pe.Suffix(direction=pe.Suffix.IMPORT)
        kwargs: dict[str, Any] = {"load_solutions": False, "tee": options.verbose}
        if options.start is not None:
            kwargs["warmstart"] = True
        t1 = time.perf_counter()
        # the solver's files (model, solution, log) in one private directory: removed on
        # return and on SIGTERM, swept by the next solve after a SIGKILL (odtkit.solvers._cmd)
        with _cmd.private_dir() as folder, _cmd.cleanup_on_sigterm():
            previous_dir = TempfileManager.tempdir
            TempfileManager.tempdir = folder
            try:
                with capture_output() as captured, common.paused_gc():  # paused_gc: see to_pyomo
                    res = opt.solve(native.model, **kwargs)
            finally:
                TempfileManager.tempdir = previous_dir
        t_solve = time.perf_counter() - t1
        log = captured.getvalue() if hasattr(captured, "getvalue") else ""
        common.emit_log(log, options)
        return _LegacyRun(native, opt, res, log, t_solve, want_duals)

    def read(self, raw: _LegacyRun, model: Model[object], options: SolveOptions) -> Solution:
        built, res = raw.built, raw.result
        termination = res.solver.termination_condition
        status = _status_from_termination(termination, model, options.node_limit)
        if str(termination) == "intermediateNonInteger":
            # a limit was hit before any integer solution; say which limit
            if options.node_limit is not None:
                status = "node_limit"
            elif options.time_limit is not None:
                status = "time_limit"
        t2 = time.perf_counter()
        x = duals = None
        if len(res.solution) > 0 and str(res.solution(0).status) in _LOADABLE:
            # pyomo warns when loading a point from an aborted (limit-hit) run; we re-check
            # feasibility ourselves below
            with _quiet("pyomo.core"):
                built.model.solutions.load_from(res)
            vals = np.fromiter(
                (np.nan if v.value is None else v.value for v in built.variables),
                dtype=float,
                count=model.n_vars,
            )
            idle = ~built.used
            vals[idle] = common.idle_values(model)[idle]
            # classic plugins may hand back a point for infeasible or aborted runs
            x = common.feasible_or_none(model, vals)
        has_solution = x is not None
        if has_solution and raw.want_duals and status == "optimal":
            dual = built.model.dual
            duals = np.fromiter(
                (0.0 if c is None else float(dual.get(c, 0.0)) for c in built.constraints),
                dtype=float,
                count=model.n_constraints,
            )
        nodes = 0
        try:
            raw_nodes = res.solver.statistics.branch_and_bound.number_of_bounded_subproblems
            nodes = int(raw_nodes) if raw_nodes is not None else 0
        except (AttributeError, TypeError, ValueError):
            nodes = 0
        version = raw.opt.version()
        # classic plugins report no proven bound: only optimality proves one
        out = common.conclude(
            model,
            status,
            x,
            model.objective_value(x) if x is not None else np.nan,
            time=raw.solve_time,
            version=".".join(map(str, version)) if version else "",
            nodes=nodes,
            log=raw.log,
            trace_enabled=options.trace is not False,
            duals=duals,
            stats={
                "termination_condition": str(res.solver.termination_condition),
                "note": "transfer (file writing) is included in solve for classic solvers",
            },
        )
        return out.solution(
            model,
            backend="pyomo",
            solver=f"pyomo/{self.solver}",
            time=raw.solve_time,
            timings=common.timings(built.build_time, 0.0, raw.solve_time, t2),
        )


def _legacy_options(solver: str, options: SolveOptions, extra: dict[str, Any]) -> dict[str, Any]:
    """A classic plugin's options: the mapped limits (ValueError for one the solver has no
    known name for) and the caller's own solver options."""
    names = _LEGACY_OPTION_NAMES.get(solver, {})
    requested = {
        "time_limit": options.time_left(),
        "threads": options.threads,
        "seed": options.seed,
        "node_limit": options.node_limit,
        "mip_gap": options.mip_gap if (options.mip_gap != 0.0 or "mip_gap" in names) else None,
    }
    solver_options: dict[str, Any] = {}
    for key, value in requested.items():
        if value is None:
            continue
        if key not in names:
            raise ValueError(
                f"backend 'pyomo' does not know how to pass {key}= to solver {solver!r} "
                f"(mapped for: {sorted(_LEGACY_OPTION_NAMES)}); pass the solver's own option "
                f"as a keyword instead"
            )
        opt_name, convert = names[key]
        solver_options[opt_name] = convert(value)
    solver_options.update(extra)
    return solver_options


register_backend("pyomo", PyomoBackend)

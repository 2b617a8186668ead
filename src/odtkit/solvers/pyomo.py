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
    interface with MIP starts (``warmstart``). Capabilities: ``mip_start``, ``dual_bound``
    (``best_objective_bound``), ``duals`` (LP row duals, HiGHS convention
    ``c - A.T @ duals = reduced_costs``), ``lp_method`` (HiGHS option ``solver``).
``"highs"``
    ``pyomo.contrib.solver`` HiGHS interface (Pyomo's newer solver API). In the installed Pyomo it
    has no MIP start, so ``start=`` raises ValueError; otherwise as above.
any other name
    A solver of Pyomo's classic ``SolverFactory`` (e.g. ``"cbc"``, ``"glpk"``, ``"gurobi"``),
    optionally with ``executable="/path/to/binary"``. It must be installed (ValueError
    otherwise). ``mip_start`` only if the plugin is ``warm_start_capable()``; no proven dual
    bound (``bound`` is ``-inf`` unless optimal); ``time_limit`` / ``threads`` / ``seed`` /
    ``mip_gap`` / ``node_limit`` are mapped for cbc, glpk, gurobi and cplex only: asking for one
    that has no mapping raises ValueError (the default ``mip_gap=0`` is passed where a mapping
    exists, otherwise the solver's own default gap applies).

The registry checks options against the class-level :attr:`PyomoBackend.capabilities` (those of
the default ``appsi_highs``); :meth:`PyomoBackend.solve` re-checks them against the chosen
solver, so nothing is silently dropped. Extra keyword options go to the solver as its own
options (HiGHS option names for the two HiGHS interfaces, validated before the solve).

Cost of the modelling layer (measured on 2 shared cores, tic-tac-toe depth 2): RBinOCT
(3.9k columns, 1.0k rows, 84k nonzeros) builds in ~0.1-0.3 s and transfers to HiGHS in ~1.2 s;
FlowOCT (13.5k columns, 19k rows, 90k nonzeros) in ~0.5-0.7 s and ~2.3-2.5 s. The transfer is
Pyomo's own expression walking (``generate_standard_repn`` per row); the highs backend passes
the same arrays in ~0.01 s. The build pauses the cyclic garbage collector (4-6x faster) and
appsi is created with ``only_child_vars=True`` (all columns in one call rather than one highspy
``addVars`` per row, 2.5x faster on FlowOCT).

``Solution.trace`` holds a single final row (time, objective, bound): Pyomo exposes no progress
callbacks. ``Solution.timings`` splits ``build`` (IR -> ConcreteModel), ``transfer`` (Pyomo ->
solver, incl. Pyomo's expression walking), ``solve`` (solver run, == ``Solution.time``) and
``read`` (solution back into a numpy vector).
"""

from __future__ import annotations

import io
import logging
import os
import time
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np

from odtkit.model import Model
from odtkit.results import make_trace
from odtkit.solvers._registry import Backend, SolveOptions, register_backend
from odtkit.solvers._solution import Solution
from odtkit.solvers.highs import NO_HEURISTICS

#: Solver name used when ``solver=None``.
DEFAULT_SOLVER = "appsi_highs"

_HIGHS_CAPS = frozenset({"mip_start", "dual_bound", "duals", "lp_method", "heuristics_off"})

# Classic SolverFactory option names per solver: option -> (solver option name, converter).
_LEGACY_OPTION_NAMES: dict[str, dict[str, tuple[str, Any]]] = {
    "cbc": {
        "time_limit": ("sec", float),
        "threads": ("threads", int),
        "seed": ("randomCbcSeed", int),
        "mip_gap": ("ratioGap", float),
        "node_limit": ("maxNodes", int),
    },
    "glpk": {
        "time_limit": ("tmlim", lambda t: max(1, int(np.ceil(t)))),
        "mip_gap": ("mipgap", float),
    },
    "gurobi": {
        "time_limit": ("TimeLimit", float),
        "threads": ("Threads", int),
        "seed": ("Seed", int),
        "mip_gap": ("MIPGap", float),
        "node_limit": ("NodeLimit", float),
    },
    "cplex": {
        "time_limit": ("timelimit", float),
        "threads": ("threads", int),
        "seed": ("randomseed", int),
        "mip_gap": ("mip_tolerances_mipgap", float),
        "node_limit": ("mip_limits_nodes", int),
    },
}
for _alias, _base in (("gurobi_direct", "gurobi"), ("gurobi_persistent", "gurobi"),
                      ("cplex_direct", "cplex"), ("cplex_persistent", "cplex")):
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


def to_pyomo(model: Model) -> PyomoModel:
    """Translate ``model`` into a Pyomo ``ConcreteModel`` (see the module docstring).

    Parameters
    ----------
    model : Model

    Returns
    -------
    PyomoModel
    """
    from pyomo.common.gc_manager import PauseGC

    # Pyomo creates hundreds of thousands of small container objects here; the cyclic garbage
    # collector would rescan the growing heap again and again (measured 4-6x slower with it)
    with PauseGC():
        return _to_pyomo(model)


def _to_pyomo(model: Model) -> PyomoModel:
    import pyomo.environ as pe
    from pyomo.core.expr.numeric_expr import LinearExpression

    t0 = time.perf_counter()
    m = pe.ConcreteModel(name=model.name)
    lower = np.where(np.isfinite(model.col_lower), model.col_lower, np.nan)
    upper = np.where(np.isfinite(model.col_upper), model.col_upper, np.nan)
    xs: list[Any] = []
    for group in model.vars.values():
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

    A = model.A
    data, indices, indptr = A.data.tolist(), A.indices.tolist(), A.indptr.tolist()
    row_lo = np.where(np.isfinite(model.row_lower), model.row_lower, np.nan).tolist()
    row_up = np.where(np.isfinite(model.row_upper), model.row_upper, np.nan).tolist()
    cons: list[Any] = []
    for block in model.constraints.values():
        first = block.start

        def rule(_m: Any, r: int, first: int = first) -> Any:
            i = first + r
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
    used = np.zeros(model.n_vars, dtype=bool)
    used[model.A.indices] = True
    used[model.c != 0] = True
    return PyomoModel(m, xs, used, cons, time.perf_counter() - t0)


def _read_columns(get: Any, built: PyomoModel, model: Model, fill: np.ndarray) -> np.ndarray:
    """Column values from ``get(vars_to_load=...)`` for the used columns, ``fill`` elsewhere."""
    out = fill.astype(float)
    idx = np.flatnonzero(built.used)
    if idx.size:
        xs = built.variables
        got = get(vars_to_load=[xs[j] for j in idx.tolist()])
        out[idx] = np.fromiter(got.values(), dtype=float, count=idx.size)
    return out


def _idle_values(model: Model) -> np.ndarray:
    return np.clip(np.zeros(model.n_vars), model.col_lower, model.col_upper)


def _status_from_termination(tc: Any, model: Model, node_limit: int | None) -> str:
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
        # same rule as the highs backend: with every column bounded it cannot be unbounded
        bounded = np.isfinite(model.col_lower).all() and np.isfinite(model.col_upper).all()
        return "infeasible" if bounded else "infeasible_or_unbounded"
    return mapping.get(name, "error")


# solution statuses of classic plugins whose point may be loaded
_LOADABLE = frozenset(
    {"optimal", "locallyOptimal", "globallyOptimal", "feasible", "bestSoFar", "stoppedByLimit"}
)


class _LineCollector(logging.Handler):
    """Logging handler that keeps the solver's log lines and forwards them live."""

    def __init__(self, callback: Any) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []
        self.callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        line = record.getMessage()
        self.lines.append(line)
        if self.callback is not None:
            self.callback(line + "\n")


def _check_highs_options(extra: dict[str, Any]) -> dict[str, Any]:
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    out = {}
    for key, value in extra.items():
        if isinstance(value, np.integer):
            value = int(value)
        elif isinstance(value, np.floating):
            value = float(value)
        if h.setOptionValue(key, value) == highspy.HighsStatus.kError:
            raise ValueError(
                f"backend 'pyomo': HiGHS rejected option {key}={value!r} "
                "(unknown name or invalid value)"
            )
        out[key] = value
    return out


class PyomoBackend(Backend):
    """Pyomo modelling layer over HiGHS (``appsi_highs`` by default) or any Pyomo solver.

    Class-level ``capabilities`` are those of the default solver; other solvers are checked in
    :meth:`solve` (see :meth:`solver_capabilities`).
    """

    name = "pyomo"
    capabilities = _HIGHS_CAPS

    @classmethod
    def available(cls) -> bool:
        try:
            import highspy  # noqa: F401
            import pyomo.environ  # noqa: F401
        except ImportError:  # pragma: no cover - both are hard dependencies
            return False
        return True

    @classmethod
    def version(cls) -> str:
        import pyomo.version

        return str(pyomo.version.version)

    @classmethod
    def solver_capabilities(cls, solver: str | None = None, **extra: Any) -> frozenset[str]:
        """Capabilities of ``solver`` through Pyomo (raises ValueError if it is not available)."""
        name = solver or DEFAULT_SOLVER
        if name == "appsi_highs":
            return _HIGHS_CAPS
        if name == "highs":
            return _HIGHS_CAPS - {"mip_start"}
        opt = cls._legacy_solver(name, extra.get("executable"))
        caps = {"duals"}
        if opt.warm_start_capable():
            caps.add("mip_start")
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
        factory_logger = logging.getLogger("pyomo.opt")
        level = factory_logger.level
        factory_logger.setLevel(logging.CRITICAL)
        try:
            opt = pe.SolverFactory(name, **kwargs)
        except Exception as exc:  # pragma: no cover - pyomo raises various errors
            raise ValueError(f"backend 'pyomo': cannot create solver {name!r}: {exc}") from exc
        finally:
            factory_logger.setLevel(level)
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
    def solve(self, model: Model, options: SolveOptions) -> Solution:
        solver = options.solver or DEFAULT_SOLVER
        extra = dict(options.extra)
        executable = extra.pop("executable", None)
        caps = self.solver_capabilities(solver, executable=executable)
        for capability, requested, what in (
            ("mip_start", options.start is not None, "start="),
            ("lp_method", options.lp_method is not None, "lp_method="),
            ("duals", bool(options.duals), "duals=True"),
            ("heuristics_off", not options.heuristics, "heuristics=False"),
        ):
            if requested and capability not in caps:
                raise ValueError(
                    f"backend 'pyomo' with solver {solver!r} lacks the capability {capability!r} "
                    f"needed for {what}; its capabilities are {sorted(caps)}"
                )
        built = to_pyomo(model)
        if options.start is not None:
            for v, val in zip(built.variables, options.start.tolist(), strict=True):
                v.set_value(val, skip_validation=True)
        if solver == "appsi_highs":
            return self._solve_appsi(model, built, options, extra, caps)
        if solver == "highs":
            return self._solve_contrib_highs(model, built, options, extra, caps)
        return self._solve_legacy(model, built, options, extra, caps, solver, executable)

    # ------------------------------------------------------------------------------------------
    @staticmethod
    def _highs_options(
        model: Model, options: SolveOptions, extra: dict[str, Any]
    ) -> dict[str, Any]:
        opts: dict[str, Any] = {
            "mip_rel_gap": options.mip_gap,
            "mip_abs_gap": 0.0 if options.mip_gap == 0.0 else 1e-6,
        }
        if options.threads is not None:
            opts["threads"] = options.threads
        if options.seed is not None:
            opts["random_seed"] = options.seed
        if options.node_limit is not None:
            opts["mip_max_nodes"] = options.node_limit
        if options.lp_method is not None and not model.is_mip:
            opts["solver"] = options.lp_method
        if not options.heuristics:
            opts.update(NO_HEURISTICS)
        opts.update(extra)
        return _check_highs_options(opts)

    def _solve_appsi(
        self, model: Model, built: PyomoModel, options: SolveOptions, extra: dict[str, Any],
        caps: frozenset[str],
    ) -> Solution:
        from pyomo.common.gc_manager import PauseGC
        from pyomo.contrib.appsi.solvers import Highs

        # only_child_vars: add every Var of the model in one call, instead of appsi discovering
        # them constraint by constraint (one highspy addVars call per row: 2.5x slower transfer)
        opt = Highs(only_child_vars=True)
        opt.highs_options = self._highs_options(model, options, extra)
        cfg = opt.config
        cfg.load_solution = False
        cfg.stream_solver = options.verbose
        cfg.warmstart = options.start is not None
        if options.time_limit is not None:
            cfg.time_limit = options.time_limit
        log_name = f"odtkit.solvers.pyomo.appsi.{id(opt)}"
        logger = logging.getLogger(log_name)
        logger.propagate = False
        logger.setLevel(logging.DEBUG)
        collector = _LineCollector(options.log_callback)
        logger.addHandler(collector)
        cfg.solver_output_logger = logger
        cfg.log_level = logging.INFO
        # we hand Pyomo a finished model: skip its change detection on solve()
        uc = opt.update_config
        for flag in (
            "check_for_new_or_removed_constraints", "check_for_new_or_removed_vars",
            "check_for_new_or_removed_params", "check_for_new_objective", "update_constraints",
            "update_vars", "update_params", "update_named_expressions", "update_objective",
        ):
            setattr(uc, flag, False)
        try:
            t0 = time.perf_counter()
            with PauseGC():  # see to_pyomo
                opt.set_instance(built.model)
            t_transfer = time.perf_counter() - t0
            t1 = time.perf_counter()
            res = opt.solve(built.model)
            t_solve = time.perf_counter() - t1
        finally:
            logger.removeHandler(collector)
        status = _status_from_termination(res.termination_condition, model, options.node_limit)
        t2 = time.perf_counter()
        x = duals = reduced = None
        has_solution = res.best_feasible_objective is not None
        if has_solution:
            x = _read_columns(opt.get_primals, built, model, _idle_values(model))
            if not model.is_mip and options.duals is not False:
                duals, reduced = self._lp_duals(opt, built, model)
        # node count: appsi's Results has none; read it from the underlying highspy object
        highs = getattr(opt, "_solver_model", None)
        nodes = int(highs.getInfo().mip_node_count) if highs is not None and model.is_mip else 0
        t_read = time.perf_counter() - t2
        objective = float(res.best_feasible_objective) if has_solution else float("nan")
        bound = self._bound(res.best_objective_bound, status, objective, has_solution)
        return self._result(
            model, built, status, has_solution, objective, bound, t_solve, max(nodes, 0),
            "pyomo/appsi_highs", ".".join(map(str, opt.version())), x, duals, reduced,
            "".join(line + "\n" for line in collector.lines),
            {"build": built.build_time, "transfer": t_transfer, "solve": t_solve, "read": t_read},
            {"termination_condition": str(res.termination_condition)},
        )

    @staticmethod
    def _lp_duals(opt: Any, built: PyomoModel, model: Model) -> tuple[np.ndarray, np.ndarray]:
        present = [c for c in built.constraints if c is not None]
        got = opt.get_duals(cons_to_load=present) if present else {}
        duals = np.zeros(model.n_constraints)
        rows = np.fromiter((c is not None for c in built.constraints), bool, model.n_constraints)
        duals[rows] = np.fromiter((got[c] for c in present), float, len(present))
        # a column in no row and without cost has reduced cost 0 (= its cost)
        reduced = _read_columns(opt.get_reduced_costs, built, model, model.c)
        return duals, reduced

    @staticmethod
    def _bound(raw: Any, status: str, objective: float, has_solution: bool) -> float:
        if status == "infeasible":
            return float("inf")
        bound = float("-inf") if raw is None else float(raw)
        if not np.isfinite(bound):
            bound = float("-inf")
        if status == "optimal" and has_solution and bound == float("-inf"):
            bound = objective
        return bound

    def _solve_contrib_highs(
        self, model: Model, built: PyomoModel, options: SolveOptions, extra: dict[str, Any],
        caps: frozenset[str],
    ) -> Solution:
        from pyomo.common.gc_manager import PauseGC
        from pyomo.contrib.solver.common.factory import SolverFactory

        opt = SolverFactory("highs")
        stream = io.StringIO()
        tee: list[Any] = [stream]
        if options.verbose:
            import sys

            tee.append(sys.stdout)
        highs_options = self._highs_options(model, options, extra)
        t0 = time.perf_counter()
        with PauseGC():  # the transfer happens inside solve here; see to_pyomo
            res = opt.solve(
                built.model,
                load_solutions=False,
                raise_exception_on_nonoptimal_result=False,
                time_limit=options.time_limit,
                solver_options=highs_options,
                tee=tee,
            )
        t_total = time.perf_counter() - t0
        t_solve = float(getattr(res.timing_info, "highs_time", t_total))
        status = _status_from_termination(res.termination_condition, model, options.node_limit)
        t2 = time.perf_counter()
        x = duals = reduced = None
        has_solution = res.incumbent_objective is not None
        loader = res.solution_loader
        if has_solution:
            get_vars = getattr(loader, "get_vars", None) or loader.get_primals
            x = _read_columns(get_vars, built, model, _idle_values(model))
            if not model.is_mip and options.duals is not False:
                duals, reduced = self._lp_duals(loader, built, model)
        nodes = getattr(res.extra_info, "mip_node_count", 0) if model.is_mip else 0
        t_read = time.perf_counter() - t2
        log = stream.getvalue()
        if options.log_callback is not None:
            for line in log.splitlines(keepends=True):
                options.log_callback(line)
        objective = float(res.incumbent_objective) if has_solution else float("nan")
        bound = self._bound(res.objective_bound, status, objective, has_solution)
        return self._result(
            model, built, status, has_solution, objective, bound, t_solve, max(int(nodes or 0), 0),
            "pyomo/highs", ".".join(map(str, opt.version())), x, duals, reduced, log,
            {"build": built.build_time, "transfer": max(t_total - t_solve, 0.0), "solve": t_solve,
             "read": t_read},
            {"termination_condition": str(res.termination_condition)},
        )

    def _solve_legacy(
        self, model: Model, built: PyomoModel, options: SolveOptions, extra: dict[str, Any],
        caps: frozenset[str], solver: str, executable: str | None,
    ) -> Solution:
        import pyomo.environ as pe

        opt = self._legacy_solver(solver, executable)
        names = _LEGACY_OPTION_NAMES.get(solver, {})
        requested = {
            "time_limit": options.time_limit,
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
        for k, v in solver_options.items():
            opt.options[k] = v
        want_duals = not model.is_mip and options.duals is not False
        if want_duals:
            built.model.dual = pe.Suffix(direction=pe.Suffix.IMPORT)
        kwargs: dict[str, Any] = {"load_solutions": False, "tee": options.verbose}
        if options.start is not None:
            kwargs["warmstart"] = True
        from pyomo.common.tee import capture_output

        t1 = time.perf_counter()
        from pyomo.common.gc_manager import PauseGC

        with capture_output() as captured, PauseGC():  # PauseGC: see to_pyomo
            res = opt.solve(built.model, **kwargs)
        t_solve = time.perf_counter() - t1
        log = captured.getvalue() if hasattr(captured, "getvalue") else ""
        if options.verbose:
            print(log, end="")
        if options.log_callback is not None:
            for line in log.splitlines(keepends=True):
                options.log_callback(line)
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
        has_solution = False
        if len(res.solution) > 0 and str(res.solution(0).status) in _LOADABLE:
            # pyomo warns when loading a point from an aborted (limit-hit) run; we re-check
            # feasibility ourselves below
            core_logger = logging.getLogger("pyomo.core")
            level = core_logger.level
            core_logger.setLevel(logging.ERROR)
            try:
                built.model.solutions.load_from(res)
            finally:
                core_logger.setLevel(level)
            vals = np.fromiter(
                (np.nan if v.value is None else v.value for v in built.variables),
                dtype=float, count=model.n_vars,
            )
            idle = ~built.used
            vals[idle] = _idle_values(model)[idle]
            # classic plugins may hand back a point for infeasible or aborted runs: keep it
            # only if it really is feasible
            if np.isfinite(vals).all() and model.is_feasible(vals, tol=1e-6):
                x, has_solution = vals, True
        if has_solution and want_duals and status == "optimal":
            dual = built.model.dual
            duals = np.fromiter(
                (0.0 if c is None else float(dual.get(c, 0.0)) for c in built.constraints),
                dtype=float, count=model.n_constraints,
            )
        t_read = time.perf_counter() - t2
        objective = model.objective_value(x) if has_solution else float("nan")
        bound = self._bound(None, status, objective, has_solution)
        nodes = 0
        try:
            raw_nodes = res.solver.statistics.branch_and_bound.number_of_bounded_subproblems
            nodes = int(raw_nodes) if raw_nodes is not None else 0
        except (AttributeError, TypeError, ValueError):
            nodes = 0
        version = opt.version()
        return self._result(
            model, built, status, has_solution, objective, bound, t_solve, max(nodes, 0),
            f"pyomo/{solver}", ".".join(map(str, version)) if version else "", x, duals, None, log,
            {"build": built.build_time, "transfer": 0.0, "solve": t_solve, "read": t_read},
            {"termination_condition": str(res.solver.termination_condition),
             "note": "transfer (file writing) is included in solve for classic solvers"},
        )

    @staticmethod
    def _result(
        model: Model, built: PyomoModel, status: str, has_solution: bool, objective: float,
        bound: float, t_solve: float, nodes: int, solver: str, version: str,
        x: np.ndarray | None, duals: np.ndarray | None, reduced: np.ndarray | None, log: str,
        timings: dict[str, float], stats: dict[str, Any],
    ) -> Solution:
        rows = []
        if has_solution or np.isfinite(bound):
            rows.append((t_solve, objective if has_solution else np.inf, bound))
        return Solution(
            status=status,
            has_solution=has_solution,
            objective=objective,
            bound=bound,
            time=t_solve,
            nodes=nodes,
            solver=solver,
            solver_version=version,
            backend="pyomo",
            x=x,
            values=model.values(x) if x is not None else {},
            duals=duals,
            reduced_costs=reduced,
            trace=make_trace(rows),
            log=log,
            timings=timings,
            stats=stats,
        )


register_backend("pyomo", PyomoBackend)

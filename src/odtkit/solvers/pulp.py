"""The ``"pulp"`` backend: Model IR -> PuLP ``LpProblem`` -> HiGHS or CBC.

Translation: one ``LpVariable`` per column, named like the IR's LP writer (``f_3_7`` for element
``[3, 7]`` of group ``f``), all added to the problem (also columns that appear nowhere); one
``LpConstraint`` per row, built from a ``LpAffineExpression`` over the CSR row slice (a list of
(variable, coefficient) pairs, never per-term ``+=``), named ``block_r``. PuLP has no ranged rows,
so a ranged row becomes ``block_r_lo`` (>=) and ``block_r_hi`` (<=); its dual is their sum.
Free rows are omitted. The objective carries the IR offset as its constant.
:func:`to_pulp` exposes the translation on its own.

Solvers (``solver=`` option of :func:`odtkit.solvers.solve`)
-------------------------------------------------------------
``"highs"`` (default)
    PuLP's in-process ``HiGHS`` interface (highspy) builds the HiGHS model (its
    ``buildSolverModel``: PuLP's own per-column / per-row loop) into a ``highspy.Highs`` object
    that the backend created and configured; the run itself goes through the same HiGHS driver as
    the ``"highs"`` backend (:mod:`odtkit.solvers._highs_driver`: options, MIP start via
    ``setSolution``, log / trace / interrupt callbacks, Ctrl-C, status, bound and node count read
    from highspy), because PuLP's own status table reports a time limit as "optimal", lacks
    HiGHS's node limit, and PuLP passes no objective constant (the driver adds it back to every
    value, trace included). The solution arrays are mapped back from PuLP's column order (by
    name). Capabilities: all seven (``mip_start``, ``dual_bound``, ``trace``, ``interrupt``,
    ``duals``, ``lp_method``, ``heuristics_off``).
``"cbc"``
    The ``cbc`` on PATH, else the CBC binary bundled with PuLP, run as a child process in its
    own session that the backend polls (:func:`_run_cbc`; PuLP's ``COIN_CMD`` writes the MPS
    and ``.mst`` files and reads the solution, but it cannot be interrupted). MIP start via an
    ``.mst`` file; ``-sec`` counts wall-clock seconds; status, proven lower bound and node
    count parsed from CBC's log ("Result - ...", "Lower bound:", "Enumerated nodes:"). CBC
    reports objectives without the constant; the backend re-adds it. Capabilities:
    ``mip_start``, ``dual_bound``, ``duals`` (from CBC's solution file) and ``interrupt``:
    Ctrl-C, ``should_stop`` or the deadline forward one SIGINT, CBC stops at its next node
    ("User ctrl-c") and writes its incumbent; in preprocessing or the root LP it reads no
    signal and is killed after :data:`CBC_GRACE` seconds (the answer is then the start), or
    after :data:`CBC_INCUMBENT_GRACE` seconds once its log has shown an incumbent (a second
    Ctrl-C kills at once). CBC's log is read as it is written (a pseudo-terminal on POSIX:
    ``log_callback`` gets each line live). The process dies with ours (Linux) and its files
    live in one private directory (:mod:`odtkit.solvers._cmd`).
``"highs_cmd"``
    ``HiGHS_CMD`` (the ``highs`` executable must be on PATH or given as ``path=``): MIP start via
    ``warmStart``; status, dual bound and nodes parsed from the HiGHS log. Capabilities:
    ``mip_start``, ``dual_bound``; no ``interrupt``: the HiGHS executable installs no SIGINT
    handler (it would die without writing its solution), and PuLP waits for it unconditionally.

:meth:`PulpBackend.capabilities_for` answers per solver (ValueError for an unknown solver or
one that cannot run here); the registry checks every option against it once, naming backend,
solver and capability when one is missing. Extra keyword options: HiGHS option names for
``"highs"`` (validated before the translation), CBC command-line options
(``{"cuts": "off"}`` -> ``-cuts off``) for ``"cbc"``, HiGHS option names for ``"highs_cmd"``;
``path=`` selects a solver binary.

Cost of the modelling layer (measured on 2 shared cores, tic-tac-toe depth 2): RBinOCT
(3.9k columns, 1.0k rows, 84k nonzeros) builds in ~0.15-0.2 s and PuLP hands it to HiGHS in
~0.2 s; FlowOCT (13.5k columns, 19k rows, 90k nonzeros) in ~0.8-1.0 s and ~0.6-1.0 s (PuLP's
``addCol``/``addRow`` loop). For CBC, writing the MPS file alone takes ~0.3 s / ~1.0 s.

``Solution.trace`` is HiGHS's (time, incumbent, bound) trace for ``"highs"``, ending with the
final row; for the command-line solvers it is that final row alone. ``Solution.timings``:
``build`` (IR -> LpProblem), ``transfer`` (LpProblem -> HiGHS, PuLP's own per-column/per-row
loop; for the command-line solvers the file writing is part of ``solve``), ``solve``
(== ``Solution.time``), ``read``.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from odtkit._limits import alarm_at, check_deadline, sigint_flag
from odtkit.model import Model
from odtkit.results import Status
from odtkit.solvers import _cmd
from odtkit.solvers import _highs_driver as driver
from odtkit.solvers._common import (
    NO_SOLUTION,
    SolvePath,
    conclude,
    emit_log,
    feasible_or_none,
    idle_values,
    importable,
    infeasible_or_unbounded,
    paused_gc,
    row_lists,
    timings,
    used_columns,
)
from odtkit.solvers._registry import (
    CAPABILITIES,
    Backend,
    Capability,
    SolveOptions,
    register_backend,
)
from odtkit.solvers._solution import Solution

__all__ = [
    "DEFAULT_SOLVER",
    "SOLVER_CAPABILITIES",
    "PulpBackend",
    "PulpModel",
    "parse_cbc_log",
    "parse_highs_log",
    "to_pulp",
]

#: Solver used when ``solver=None``.
DEFAULT_SOLVER = "highs"

SOLVER_CAPABILITIES: dict[str, frozenset[Capability]] = {
    "highs": CAPABILITIES,
    "cbc": frozenset(
        {Capability.MIP_START, Capability.DUAL_BOUND, Capability.DUALS, Capability.INTERRUPT}
    ),
    "highs_cmd": frozenset({Capability.MIP_START, Capability.DUAL_BOUND}),
}


# PuLP's own class names are accepted too, case-insensitively
_ALIASES = {"pulp_cbc_cmd": "cbc", "coin_cmd": "cbc", "coin": "cbc"}


def _solver_name(solver: str | None) -> str:
    if solver is None:
        return DEFAULT_SOLVER
    if not isinstance(solver, str):
        raise TypeError(f"backend 'pulp': solver must be a str or None, got {solver!r}")
    name = solver.lower()
    name = _ALIASES.get(name, name)
    if name not in SOLVER_CAPABILITIES:
        raise ValueError(
            f"backend 'pulp': solver must be one of {sorted(SOLVER_CAPABILITIES)} (or PuLP's "
            f"class names {sorted(_ALIASES)}), got {solver!r}"
        )
    return name


@dataclass
class PulpModel:
    """A PuLP translation of an IR model.

    Attributes
    ----------
    problem : pulp.LpProblem
    variables : list of pulp.LpVariable
        In IR column order.
    used : ndarray of bool
        Columns that appear in a row or in the objective (PuLP passes only those to a solver).
    constraints : list of pulp.LpConstraint
        In insertion order (free rows omitted, ranged rows as two constraints).
    row_of : ndarray of int
        IR row of each entry of ``constraints``.
    build_time : float
    """

    problem: Any
    variables: list[Any]
    used: np.ndarray
    constraints: list[Any]
    row_of: np.ndarray
    build_time: float


# building hundreds of thousands of small PuLP objects: see paused_gc
@paused_gc()
def to_pulp(model: Model[object]) -> PulpModel:
    """``model`` as a PuLP ``LpProblem`` (how: the module docstring), with its variables and
    constraints listed in the IR's order (:class:`PulpModel`)."""
    import pulp

    t0 = time.perf_counter()
    prob = pulp.LpProblem(_safe_name(model.name), pulp.LpMinimize)
    names = model.column_names()
    lower = model.col_lower.tolist()
    upper = model.col_upper.tolist()
    cats = np.where(model.integrality, pulp.LpInteger, pulp.LpContinuous).tolist()
    inf = float("inf")
    xs = [
        prob.add_variable(name, None if lo == -inf else lo, None if up == inf else up, cat)
        for name, lo, up, cat in zip(names, lower, upper, cats, strict=True)
    ]
    # PuLP only knows columns that appear in a row or the objective; the others are absent from
    # the solver's model and get a value within their bounds when the solution is read back
    used = used_columns(model)
    data, indices, indptr = row_lists(model)
    row_lo, row_up = model.row_lower.tolist(), model.row_upper.tolist()
    rnames = model.row_names()
    le, ge, eq = pulp.LpConstraintLE, pulp.LpConstraintGE, pulp.LpConstraintEQ
    cons: list[Any] = []
    rows: list[int] = []
    for i in range(model.n_constraints):
        if i % 4096 == 0:
            check_deadline()  # PuLP's objects are built one row at a time: seconds on big models
        lo, up = row_lo[i], row_up[i]
        if lo == -inf and up == inf:
            continue
        s, e = indptr[i], indptr[i + 1]
        pairs = [(xs[j], v) for j, v in zip(indices[s:e], data[s:e], strict=True)]
        if lo == up:
            parts = [(eq, lo, rnames[i])]
        elif lo == -inf:
            parts = [(le, up, rnames[i])]
        elif up == inf:
            parts = [(ge, lo, rnames[i])]
        else:
            parts = [(ge, lo, f"{rnames[i]}_lo"), (le, up, f"{rnames[i]}_hi")]
        for sense, rhs, name in parts:
            cons.append(
                pulp.LpConstraint(pulp.LpAffineExpression(pairs), sense=sense, rhs=rhs, name=name)
            )
            rows.append(i)
    prob.extend(cons)
    nz = np.flatnonzero(model.c)
    prob.setObjective(
        pulp.LpAffineExpression(
            [(xs[j], v) for j, v in zip(nz.tolist(), model.c[nz].tolist(), strict=True)],
            constant=float(model.offset),
        )
    )
    row_of = np.asarray(rows, dtype=np.int64)
    return PulpModel(prob, xs, used, cons, row_of, time.perf_counter() - t0)


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "model"


# --- log parsing (command-line solvers) ------------------------------------------------------

_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf(?:inity)?)"


def _last_number(pattern: str, text: str) -> float | None:
    found = re.findall(pattern + r"\s*" + _NUM, text, flags=re.IGNORECASE | re.MULTILINE)
    return float(found[-1]) if found else None


# A solver's verdict line -> status: the first entry with a word in the line wins ("error" if
# none does). CBC's "Result - ..." line:
_CBC_RESULT: tuple[tuple[tuple[str, ...], str], ...] = (
    (("optimal",), "optimal"),
    (("infeasible",), "infeasible"),
    (("unbounded",), "unbounded"),
    (("time",), "time_limit"),
    (("node", "iteration"), "node_limit"),
    (("ctrl-c", "user"), "interrupted"),
)
# HiGHS's "Model status" line (after "optimal" at its start):
_HIGHS_STATUS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("unbounded or infeasible", "infeasible or unbounded"), "infeasible_or_unbounded"),
    (("infeasible",), "infeasible"),
    (("unbounded",), "unbounded"),
    (("time limit",), "time_limit"),
    (("solution limit", "node"), "node_limit"),
    (("iteration limit",), "iteration_limit"),
    (("interrupt",), "interrupted"),
)


def _status_in(line: str, table: tuple[tuple[tuple[str, ...], str], ...]) -> str:
    return next((status for words, status in table if any(w in line for w in words)), "error")


def parse_cbc_log(text: str) -> dict[str, Any]:
    """Status, objective, lower bound and node count from a CBC log.

    Returns a dict with ``status`` (a Status value, or None if the log says nothing
    recognisable), ``objective``, ``bound`` and ``nodes`` (None when absent). CBC's values
    exclude the objective constant.
    """
    out: dict[str, Any] = {"status": None, "objective": None, "bound": None, "nodes": None}
    result = re.findall(r"^Result - (.*)$", text, flags=re.MULTILINE)
    if result:
        out["status"] = _status_in(result[-1].lower(), _CBC_RESULT)
    elif re.search(r"infeasible or unbounded", text, re.IGNORECASE):
        # e.g. "Pre-processing says infeasible or unbounded" (no "Result -" line follows)
        out["status"] = "infeasible_or_unbounded"
    else:  # pure LP (``-initialSolve``): clp's one-line verdicts
        if re.search(r"^Optimal - objective value", text, flags=re.MULTILINE):
            out["status"] = "optimal"
            out["objective"] = _last_number(r"Optimal - objective value", text)
        elif re.search(r"primal infeasible|problem is infeasible", text, re.IGNORECASE):
            out["status"] = "infeasible"
        elif re.search(r"dual infeasible|unbounded", text, re.IGNORECASE):
            out["status"] = "unbounded"
        elif re.search(r"Stopped on time|time limit", text, re.IGNORECASE):
            out["status"] = "time_limit"
    obj = _last_number(r"^Objective value:", text.replace("\r", ""))
    if obj is None:
        obj = _last_number(r"Objective value:", text)
    if obj is not None:
        out["objective"] = obj
    out["bound"] = _last_number(r"Lower bound:", text)
    if out["bound"] is None and out["status"] in (None, "interrupted", "time_limit"):
        # a run stopped (killed) before its summary: the last bound it printed on the way,
        # branch-and-bound's "best possible", else the root LP's "Continuous objective value"
        out["bound"] = _last_number(r"best possible", text)
        if out["bound"] is None:
            out["bound"] = _last_number(r"Continuous objective value is", text)
    nodes = _last_number(r"Enumerated nodes:", text)
    out["nodes"] = int(nodes) if nodes is not None else None
    return out


def parse_highs_log(text: str) -> dict[str, Any]:
    """Status, primal/dual bound and node count from a HiGHS log (library or command line)."""
    out: dict[str, Any] = {"status": None, "objective": None, "bound": None, "nodes": None}
    st = re.findall(r"^\s*(?:Model status\s*:|Status)\s+(.+?)\s*$", text, flags=re.MULTILINE)
    if st:
        s = st[-1].lower()
        out["status"] = "optimal" if s.startswith("optimal") else _status_in(s, _HIGHS_STATUS)
    out["objective"] = _last_number(r"^\s*Primal bound\s+", text.replace("\r", ""))
    out["bound"] = _last_number(r"^\s*Dual bound\s+", text.replace("\r", ""))
    if out["objective"] is None:
        out["objective"] = _last_number(r"Objective value\s*:", text)
    nodes = _last_number(r"^\s*Nodes\s+", text.replace("\r", ""))
    out["nodes"] = int(nodes) if nodes is not None else None
    return out


# ----------------------------------------------------------------------------------------------


#: Seconds CBC gets after our SIGINT to write its solution before it is killed, while its log
#: shows no incumbent. CBC stops at its next node within milliseconds, but in preprocessing and
#: in the root LP (Clp) it reads no signal at all: FlowOCT at depth 3 on tic-tac-toe spent 40 s
#: there, ignoring SIGINT; without an incumbent, waiting would gain nothing.
CBC_GRACE = 0.5
#: The same once CBC's log shows an incumbent: it writes it at its next check of the signal
#: (after a cut pass or a heuristic), and a kill would lose it. A second Ctrl-C kills at once.
#: Short, because a Ctrl-C should return within about a second: 10 s here made the Ctrl-C
#: benchmark wait 10 s in RBinOCT's root cuts (benchmarks/results/limits.md) and gained nothing,
#: as CBC read no signal in that time.
CBC_INCUMBENT_GRACE = 3.0
#: CBC's own ``-sec`` is late by the same phases: past the deadline by this much we stop it.
CBC_DEADLINE_SLACK = 0.1
_POLL = 0.02
#: A log line of CBC's that announces an incumbent (heuristic, node, MIP start)
_CBC_INCUMBENT = re.compile(
    r"(?:Integer solution of|MIPStart provided solution with cost|solution of cost)\s+" + _NUM,
    re.IGNORECASE,
)


class _CbcWatch:
    """What CBC's live log told us so far: its best incumbent value (None: none yet)."""

    def __init__(self, options: SolveOptions) -> None:
        self.options = options
        self.incumbent: float | None = None

    def on_line(self, line: str) -> None:
        m = _CBC_INCUMBENT.search(line)
        if m is not None:
            value = float(m.group(1))
            if self.incumbent is None or value < self.incumbent:
                self.incumbent = value
        if self.options.verbose:
            sys.stdout.write(line)
        if self.options.log_callback is not None:
            self.options.log_callback(line)


def _run_cbc(
    built: PulpModel,
    model: Model[object],
    options: SolveOptions,
    extra: dict[str, Any],
    path: str | None,
) -> tuple[str, float, Status | None, dict[str, Any]]:
    """Run CBC as a child process we can stop; return ``(log, seconds, why we stopped it,
    facts)``.

    PuLP's ``COIN_CMD`` writes the files and reads the solution (its helpers are used here),
    but it waits for CBC unconditionally: Ctrl-C in that wait raised KeyboardInterrupt and lost
    the run. Here the child runs in its own session (a terminal's Ctrl-C reaches only us), dies
    with us (:mod:`odtkit.solvers._cmd`: ``PR_SET_PDEATHSIG`` on Linux, a SIGTERM handler that
    kills it and removes its files), its files live in one private directory, and we poll while
    reading its log live (a pseudo-terminal on POSIX; ``log_callback`` gets each line as CBC
    prints it): on Ctrl-C (a temporary SIGINT handler), ``should_stop`` or the deadline we
    forward one SIGINT, CBC prints "Stopped on ctrl-c" and writes its incumbent. If it is in a
    phase that reads no signal, it is killed after :data:`CBC_GRACE` seconds, or
    :data:`CBC_INCUMBENT_GRACE` once its log shows an incumbent (a second Ctrl-C kills at
    once); the answer is then the start (if any) with the bound its log printed so far.
    ``why`` is ``interrupted`` / ``time_limit`` when we stopped it, else None. ``facts``:
    ``cbc_log_incumbent`` (the best incumbent value the log announced, without the constant)
    and ``cbc_killed`` (1 if it had to be killed).
    """
    import signal

    import pulp

    cbc_options = [f"{k} {v}" for k, v in extra.items()]
    if options.seed is not None:
        cbc_options.append(f"randomCbcSeed {options.seed}")
    helper = pulp.COIN_CMD(
        path=_cbc_path(path),
        msg=False,
        gapRel=options.mip_gap,
        gapAbs=0.0 if options.mip_gap == 0.0 else None,
        threads=options.threads,
        maxNodes=options.node_limit,
        timeMode="elapsed",  # -sec counts wall-clock seconds, not CPU
        options=cbc_options,
    )
    problem = built.problem
    watch = _CbcWatch(options)
    killed = False
    with _cmd.private_dir() as folder, _cmd.cleanup_on_sigterm():
        mps, mst, sol, log_path = (
            os.path.join(folder, f) for f in ("m.mps", "m.mst", "m.sol", "log")
        )
        t0 = time.perf_counter()
        with alarm_at(options.deadline), paused_gc():
            vs, var_names, con_names, _ = problem.writeMPS(mps, rename=1)
            args = [helper.path, mps]
            if options.start is not None:
                helper.writesol(mst, problem, vs, var_names, con_names)
                args += ["-mips", mst]
        left = options.time_left()
        if left is not None:
            args += ["-sec", f"{left:.3f}"]
        for option in helper.getOptions() + helper.options:
            args += f"-{option}".split()
        args += [
            "-solve" if model.is_mip else "-initialSolve",
            "-printingOptions",
            "all",
            "-solution",
            sol,
        ]
        stop_at = math.inf if left is None else time.perf_counter() + left + CBC_DEADLINE_SLACK
        why: Status | None = None
        output = _cmd.LiveOutput(log_path, watch.on_line)
        child = None
        try:
            with sigint_flag() as ctrl_c:
                child = _cmd.popen(args, stdout=output.stdout, stderr=subprocess.STDOUT)
                output.started()
                signalled = math.inf
                # should_stop, Ctrl-C and the deadline are consulted at least once, even when
                # CBC has already exited by then (a small model on a loaded machine): whether a
                # stop request is seen must not depend on how fast the child was
                first = True
                while first or child.poll() is None:
                    first = False
                    now = time.perf_counter()
                    if why is None:
                        asked = options.should_stop is not None and options.should_stop()
                        if ctrl_c.is_set() or asked:
                            why = Status.INTERRUPTED
                        elif now >= stop_at:
                            why = Status.TIME_LIMIT
                        if why is not None:
                            ctrl_c.clear()  # from here on, a Ctrl-C means "now"
                            child.send_signal(signal.SIGINT)
                            signalled = now
                    else:
                        grace = CBC_GRACE if watch.incumbent is None else CBC_INCUMBENT_GRACE
                        if ctrl_c.is_set() or now - signalled > grace:
                            killed = True
                            _cmd.kill(child)
                            break
                    if not output.eof:
                        output.pump(_POLL)
                    else:
                        with contextlib.suppress(subprocess.TimeoutExpired):
                            child.wait(timeout=_POLL)
            log = output.finish()
        finally:
            output.close()
            if child is not None:
                _cmd.kill(child)  # reaped already unless an exception left it running
        seconds = time.perf_counter() - t0
        if os.path.exists(sol) and os.path.getsize(sol) > 0:
            try:
                status, values, _, prices, slacks, sol_status = helper.readsol_MPS(
                    sol, problem, vs, var_names, con_names
                )
            except (ValueError, IndexError, KeyError):  # half-written by a killed CBC
                pass
            else:
                problem.assignVarsVals(values)
                problem.assignConsPi(prices)
                problem.assignConsSlack(slacks, activity=True)
                problem.assignStatus(status, sol_status)
    facts: dict[str, Any] = {"cbc_killed": int(killed)}
    if watch.incumbent is not None:
        facts["cbc_log_incumbent"] = watch.incumbent
    return log, seconds, why, facts


def _run_highs_cmd(
    built: PulpModel, options: SolveOptions, extra: dict[str, Any], path: str | None
) -> tuple[str, float]:
    """Run the ``highs`` executable through PuLP's ``HiGHS_CMD``; return ``(log, seconds)``.

    No interrupt: the HiGHS executable installs no SIGINT handler (it would die without writing
    its solution), so Ctrl-C is left to Python and ends the call.
    """
    import pulp

    highs_options = [f"{k}={v}" for k, v in extra.items()]
    if options.seed is not None:
        highs_options.append(f"random_seed={options.seed}")
    if options.node_limit is not None:
        highs_options.append(f"mip_max_nodes={options.node_limit}")
    # PuLP's MPS, solution and log files go to a private directory too (removed on exit and
    # on SIGTERM, swept after a SIGKILL); the HiGHS executable itself is PuLP's child
    with _cmd.private_dir() as folder, _cmd.cleanup_on_sigterm():
        log_path = os.path.join(folder, "highs.log")
        s = pulp.HiGHS_CMD(
            path=path,
            msg=False,
            timeLimit=options.time_left(),
            gapRel=options.mip_gap,
            gapAbs=0.0 if options.mip_gap == 0.0 else None,
            threads=options.threads,
            logPath=log_path,
            warmStart=options.start is not None,
            options=highs_options,
        )
        s.tmpDir = folder
        t1 = time.perf_counter()
        with paused_gc():  # PuLP writes the MPS file here
            built.problem.solve(s)
        seconds = time.perf_counter() - t1
        with open(log_path, errors="replace") as fh:
            return fh.read(), seconds


def _cbc_path(path: str | None) -> str | None:
    if path:
        return path if os.access(path, os.X_OK) else None
    found = shutil.which("cbc")
    if found:
        return found
    try:
        from pulp.apis.coin_api import pulp_cbc_path
    except ImportError:  # pragma: no cover - old PuLP
        return None
    return pulp_cbc_path if os.access(pulp_cbc_path, os.X_OK) else None


class PulpBackend(Backend):
    """PuLP modelling layer over HiGHS (in-process, default), CBC or the HiGHS executable."""

    name = "pulp"
    default_solver = DEFAULT_SOLVER
    capabilities = SOLVER_CAPABILITIES[DEFAULT_SOLVER]

    @classmethod
    def available(cls) -> bool:
        return importable("highspy", "pulp")  # both are hard dependencies

    @classmethod
    def version(cls) -> str:
        import pulp

        return str(pulp.__version__)

    @classmethod
    def solver_available(cls, solver: str | None = None, path: str | None = None) -> bool:
        """Whether ``solver`` (``"highs"``, ``"cbc"``, ``"highs_cmd"``) can run here."""
        import pulp

        name = _solver_name(solver)
        if name == "highs":
            return bool(pulp.HiGHS().available())
        if name == "cbc":
            return _cbc_path(path) is not None
        return bool(pulp.HiGHS_CMD(path=path, msg=False).available())

    @classmethod
    def capabilities_for(
        cls, solver: str | None = None, path: str | None = None, **extra: Any
    ) -> frozenset[Capability]:
        """Capabilities of ``solver`` (see the module docstring); ValueError if it is unknown or
        cannot run here (``path=`` names its executable)."""
        name = _solver_name(solver)
        if not cls.solver_available(name, path):
            raise ValueError(
                f"backend 'pulp': solver {name!r} is not available here"
                + (f" (no executable at {path!r})" if path else " (executable not found)")
            )
        return SOLVER_CAPABILITIES[name]

    def solve(self, model: Model[object], options: SolveOptions) -> Solution:
        solver = _solver_name(options.solver)
        extra = dict(options.extra)
        path = extra.pop("path", None)
        if solver == "highs":
            return _HighsPath(extra).solve(model, options)
        return _CmdPath(extra, solver, path).solve(model, options)


def _cmd_version(log: str) -> str:
    m = re.search(r"(?:Version|version)[:\s]+v?(\d+\.\d+(?:\.\d+)?)", log)
    return m.group(1) if m else ""


# --- the two solve paths: translate -> run -> read (odtkit.solvers._common.SolvePath) -----------


@dataclass
class _HighsModel:
    """PuLP's in-process HiGHS: the translation, the ``highspy.Highs`` PuLP filled, and the HiGHS
    column of each IR column PuLP passed (``order[k]`` for IR column ``passed[k]``)."""

    built: PulpModel
    h: Any
    passed: np.ndarray
    order: np.ndarray
    transfer_time: float


@dataclass
class _HighsRun:
    native: _HighsModel
    session: driver.Session
    solve_time: float


class _HighsPath(SolvePath[_HighsModel, _HighsRun]):
    """PuLP -> its in-process HiGHS interface -> the HiGHS driver."""

    def __init__(self, extra: dict[str, Any]) -> None:
        self.extra = extra

    def translate(self, model: Model[object], options: SolveOptions) -> _HighsModel:
        import pulp

        h = driver.new_highs()
        # options first: a rejected one fails before the (slow) translation
        driver.apply_options(h, driver.highs_options(options, model.is_mip, self.extra))
        with alarm_at(options.deadline):  # PuLP's loops never return in between
            built = to_pulp(model)
            built.problem.solverModel = h
            t0 = time.perf_counter()
            with paused_gc():  # PuLP's own per-column / per-row transfer loop
                pulp.HiGHS(mip=True).buildSolverModel(built.problem)
            t_transfer = time.perf_counter() - t0
        check_deadline()
        if options.time_limit is not None:  # what the translation left of it
            driver.apply_options(h, {"time_limit": options.time_left()})
        # HiGHS column of each IR column PuLP passed (PuLP orders them by name)
        passed = np.flatnonzero([getattr(v, "index", None) is not None for v in built.variables])
        order = np.fromiter(
            (built.variables[j].index for j in passed.tolist()), np.int64, passed.size
        )
        return _HighsModel(built, h, passed, order, t_transfer)

    def run(self, native: _HighsModel, model: Model[object], options: SolveOptions) -> _HighsRun:
        h = native.h
        start = options.start if model.is_mip else None
        with driver.attach(
            h,
            options,
            is_mip=model.is_mip,
            offset=float(model.offset) - driver.objective_offset(h),  # PuLP drops the constant
            start_objective=None if start is None else model.objective_value(start),
            label=model.name,
        ) as session:
            if start is not None:
                vec = np.zeros(h.getNumCol())
                vec[native.order] = start[native.passed]
                driver.set_start(h, vec)
            t1 = time.perf_counter()
            h.run()
            t_solve = time.perf_counter() - t1
        return _HighsRun(native, session, t_solve)

    def read(self, raw: _HighsRun, model: Model[object], options: SolveOptions) -> Solution:
        native = raw.native
        passed, order = native.passed, native.order
        t2 = time.perf_counter()
        out = driver.read(
            native.h, model, raw.session, want_duals=not model.is_mip and options.duals is not False
        )
        x = duals = reduced = None
        if out.x is not None:
            # PuLP's column order and split rows, mapped back to the model's
            x = idle_values(model)
            x[passed] = out.x[order]
            if out.duals is not None and out.reduced_costs is not None:
                duals = np.zeros(model.n_constraints)
                np.add.at(duals, native.built.row_of, out.duals)
                reduced = model.c.astype(float)  # columns PuLP did not pass: reduced cost = cost
                reduced[passed] = out.reduced_costs[order]
        return out.solution(
            model,
            backend="pulp",
            solver="pulp/HiGHS",
            time=raw.solve_time,
            x=x,
            duals=duals,
            reduced_costs=reduced,
            timings=timings(native.built.build_time, native.transfer_time, raw.solve_time, t2),
        )


@dataclass
class _CmdRun:
    built: PulpModel
    log: str
    solve_time: float
    stopped: Status | None
    facts: dict[str, Any]


class _CmdPath(SolvePath[PulpModel, _CmdRun]):
    """PuLP -> a command-line solver (CBC, the HiGHS executable) -> its log and solution file."""

    def __init__(self, extra: dict[str, Any], solver: str, path: str | None) -> None:
        self.extra, self.solver, self.path = extra, solver, path

    def translate(self, model: Model[object], options: SolveOptions) -> PulpModel:
        with alarm_at(options.deadline):
            built = to_pulp(model)
        if options.start is not None:
            for v, val in zip(built.variables, options.start.tolist(), strict=True):
                v.setInitialValue(val, check=False)
        return built

    def run(self, native: PulpModel, model: Model[object], options: SolveOptions) -> _CmdRun:
        if self.solver == "cbc":
            if options.lp_method is not None:  # pragma: no cover - refused above
                raise ValueError("backend 'pulp' with solver 'cbc' has no lp_method")
            log, t_solve, stopped, facts = _run_cbc(native, model, options, self.extra, self.path)
            return _CmdRun(native, log, t_solve, stopped, facts)
        log, t_solve = _run_highs_cmd(native, options, self.extra, self.path)
        emit_log(log, options)
        return _CmdRun(native, log, t_solve, None, {})

    def read(self, raw: _CmdRun, model: Model[object], options: SolveOptions) -> Solution:
        import pulp

        built, solver, log = raw.built, self.solver, raw.log
        parsed = parse_cbc_log(log) if solver == "cbc" else parse_highs_log(log)
        t2 = time.perf_counter()
        used_idx = np.flatnonzero(built.used)
        vals = idle_values(model)
        xs = built.variables
        vals[built.used] = np.fromiter(
            (np.nan if xs[j].varValue is None else xs[j].varValue for j in used_idx.tolist()),
            dtype=float,
            count=used_idx.size,
        )
        status = Status(parsed["status"] or "error")
        if raw.stopped is not None and status not in (Status.OPTIMAL, Status.INFEASIBLE):
            status = raw.stopped  # we stopped it: CBC's own verdict may be missing (killed)
        if status == Status.INFEASIBLE_OR_UNBOUNDED:
            status = infeasible_or_unbounded(model)
        x = None
        if status not in NO_SOLUTION and pulp.LpStatus.get(built.problem.status) != "Infeasible":
            x = feasible_or_none(model, vals)
        has_solution = x is not None
        objective = model.objective_value(x) if x is not None else float("nan")
        # the logs report objectives without the constant: shift by the observed difference
        reported = parsed["objective"]
        shift = (
            objective - reported if has_solution and reported is not None else float(model.offset)
        )
        duals = None
        if (
            solver == "cbc"
            and has_solution
            and not model.is_mip
            and status == Status.OPTIMAL
            and options.duals is not False
        ):
            pis = np.fromiter(
                (0.0 if c.pi is None else c.pi for c in built.constraints),
                dtype=float,
                count=len(built.constraints),
            )
            duals = np.zeros(model.n_constraints)
            np.add.at(duals, built.row_of, pis)
        out = conclude(
            model,
            status,
            x,
            objective,
            time=raw.solve_time,
            version=_cmd_version(log),
            raw_bound=None if parsed["bound"] is None else float(parsed["bound"]) + shift,
            nodes=int(parsed["nodes"] or 0) if model.is_mip else 0,
            log=log,
            trace_enabled=options.trace is not False,
            duals=duals,
            stats={
                "pulp_status": pulp.LpStatus.get(built.problem.status),
                "note": "file writing is included in solve for command-line solvers",
                # the log's incumbent (with the constant): lost when CBC had to be killed
                **{
                    k: v + float(model.offset) if k == "cbc_log_incumbent" else v
                    for k, v in raw.facts.items()
                },
            },
        )
        return out.solution(
            model,
            backend="pulp",
            solver="pulp/CBC" if solver == "cbc" else "pulp/HiGHS_CMD",
            time=raw.solve_time,
            timings=timings(built.build_time, 0.0, raw.solve_time, t2),
        )


register_backend("pulp", PulpBackend)

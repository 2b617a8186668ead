"""``solve_formulation``: build → start → solve → decode → re-verify, the one path every caller of
a mathematical program takes (:func:`odtkit.compare`, the estimators, ensemble pruning).

The answer is an :class:`odtkit.results.Result` whose objective is the decoded model's value by
the formulation's :meth:`~odtkit.formulations.Formulation.evaluate` (the single truth), never the
solver's own number, and whose bound is checked against it: a solver that reports a bound above
the value of a model it returned has failed numerically, and the result says so (status
``error`` and a message) instead of handing out a wrong certificate.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from odtkit._limits import Deadline, OutOfTime, charged
from odtkit._validation import check_positive_number
from odtkit.formulations._base import Formulation, Property
from odtkit.model import Model
from odtkit.results import Result, Status, empty_trace

__all__ = ["solve_formulation", "solve_model", "verify_solution"]

#: How far (objective units) a solver's value or bound may stray from the verified objective.
VERIFY_TOLERANCE = 1e-6


def solve_formulation(
    formulation: Formulation[Any, Any, Any, Any],
    data: Any,
    *,
    backend: str = "highs",
    start: Any = None,
    start_is_optimal: bool = False,
    time_limit: float | None = None,
    solve_options: Mapping[str, Any] | None = None,
    **problem: Any,
) -> Result:
    """Build ``formulation`` on ``data``, solve it, decode and re-verify the answer.

    Parameters
    ----------
    formulation : Formulation
        e.g. ``RBinOCT()``, ``FlowOCT()``, an ensemble-pruning formulation.
    data : Dataset or EnsembleData
        What ``formulation.build`` takes.
    backend : str
        Solver backend, a name of :func:`odtkit.solvers.registered_backends`.
    start : model object or ndarray, optional
        A warm start: a model object (e.g. a :class:`~odtkit.tree.Tree`) that
        ``formulation.start`` turns into a start vector, or a full start vector. Ignored by a
        backend without the ``"mip_start"`` capability (``stats["warm_start"]`` says).
    start_is_optimal : bool
        ``start`` is a certified optimum of the stated problem (e.g. the search core proved
        it). For an ``EXACT`` formulation it is then an optimum of the model too, so the solver
        runs with ``heuristics=False`` (on a backend with the ``"heuristics_off"`` capability,
        unless ``solve_options`` says otherwise) and spends its effort on the proof alone.
    time_limit : float, optional
        Seconds for the whole call: the build, the backend's translation, the solve and the
        decode share them. A build that alone exhausts the limit gives status ``time_limit``
        without a model (``stats["stopped_before_solve"]`` says so; ``stats`` still holds every
        key listed below, ``model_ir`` None), never an exception; one
        that leaves too little for the translation keeps the start, if one was given.
    solve_options : mapping, optional
        Further keywords of :func:`odtkit.solvers.solve` (``threads=``, ``heuristics=`` ...).
    **problem
        The problem, passed to ``formulation.build``: its fields by keyword (``lam=``,
        ``max_depth=`` ...).

    Returns
    -------
    Result
        ``model`` is the decoded object (None without a solution), ``solution`` the backend's
        :class:`~odtkit.solvers.Solution`, ``stats`` holds ``build_time``, ``solve_time``,
        ``warm_start``, ``solver`` and the built ``model_ir``. Ctrl-C during the build gives
        status ``interrupted`` without a model; during the solve, the solver's incumbent.
    """
    from odtkit.solvers import Capability, backend_capabilities

    # checked before the build, which may take long: a bad limit, backend or solver is refused
    # at once, naming the argument
    time_limit = check_positive_number(time_limit, "time_limit")
    if solve_options is not None and not isinstance(solve_options, Mapping):
        raise TypeError(f"solve_options must be a mapping, got {type(solve_options).__name__}")
    options = dict(solve_options or {})
    # the solver chosen in solve_options decides (pyomo's "highs" takes no start)
    which = {k: options[k] for k in ("solver", "path", "executable") if k in options}
    capabilities = backend_capabilities(backend, **which)
    deadline = Deadline(time_limit)
    t0 = deadline.start
    try:
        with charged(deadline):
            model = formulation.build(data, **problem)
    except OutOfTime:
        return _not_solved(formulation, backend, Status.TIME_LIMIT, deadline, "the build")
    except KeyboardInterrupt:
        return _not_solved(formulation, backend, Status.INTERRUPTED, deadline, "the build")
    build_time = time.perf_counter() - t0
    start_vector = None
    if start is not None and Capability.MIP_START in capabilities:
        start_vector = (
            np.asarray(start, dtype=float)
            if isinstance(start, np.ndarray)
            else formulation.start(model, start)
        )
        certified = start_is_optimal and Property.EXACT in formulation.properties
        if certified and Capability.HEURISTICS_OFF in capabilities:
            options.setdefault("heuristics", False)  # the start is optimal: only the proof is left
    result = solve_model(
        formulation,
        model,
        data,
        backend=backend,
        start=start_vector,
        time_limit=deadline.limit_left(),
        **options,
    )
    stats = {**result.stats, "build_time": build_time}
    return result.replace(time=time.perf_counter() - t0, stats=stats)


def _not_solved(
    formulation: Formulation[Any, Any, Any, Any],
    backend: str,
    status: Status,
    deadline: Deadline,
    phase: str,
) -> Result:
    """The answer of a call stopped (time limit, Ctrl-C) before a model existed to solve.

    Its ``stats`` carry every key a solved result's do (``build_time``, ``solve_time``,
    ``warm_start``, ``solver``, ``model_ir``), so that no caller needs a special case to read
    them, plus ``stopped_before_solve`` saying why.
    """
    why = "the time limit ran out" if status == Status.TIME_LIMIT else "interrupted (Ctrl-C)"
    elapsed = deadline.elapsed()
    return Result(
        model=None,
        objective=math.nan,
        lower_bound=-math.inf,
        status=status,
        time=elapsed,
        method=formulation.name,
        backend=backend,
        stats={
            "build_time": elapsed,
            "solve_time": 0.0,
            "warm_start": False,
            "solver": None,
            "model_ir": None,
            "stopped_before_solve": f"{why} during {phase}",
        },
        message=f"{why} during {phase}: nothing was solved",
    )


def solve_model(
    formulation: Formulation[Any, Any, Any, Any],
    model: Model[Any],
    data: Any,
    *,
    backend: str,
    start: np.ndarray | None = None,
    time_limit: float | None = None,
    **solve_options: Any,
) -> Result:
    """Solve a ``model`` that ``formulation`` built, verify the answer, distrust a bad start.

    A warm-started answer that fails verification (status ``error``) is solved again without
    the start: HiGHS 1.16 maps a MIP start into its presolved space wrongly on some models (its
    log says "MIP start solution is feasible in the reduced space" with a value below the true
    optimum), takes that value as its incumbent, closes the gap at the root and returns the
    start itself as "optimal" under the wrong value. ``stats``: ``warm_start``, ``solve_time``
    (both solves) and ``start_rejected`` (the verification's message) when it happened.
    """
    from odtkit.solvers import solve

    deadline = Deadline(time_limit)
    solution = solve(model, backend=backend, time_limit=time_limit, start=start, **solve_options)
    result = verify_solution(formulation, model, solution, data)
    stats: dict[str, Any] = {"warm_start": start is not None}
    if start is not None and result.status == Status.ERROR:
        stats["start_rejected"] = result.message
        spent = solution.time
        solution = solve(model, backend=backend, time_limit=deadline.limit_left(), **solve_options)
        result = verify_solution(formulation, model, solution, data)
        stats["solve_time"] = spent + solution.time
    return result.replace(stats={**result.stats, **stats})


def verify_solution(
    formulation: Formulation[Any, Any, Any, Any], model: Model[Any], solution: Any, data: Any
) -> Result:
    """The model-level :class:`Result` of a backend ``solution`` of ``model``, re-verified.

    Decodes the solution, evaluates the decoded object with ``formulation.evaluate`` and checks
    it and the certificate: a violated side constraint (``formulation.violation``, e.g. a
    decoded tree that is not δ-fair), a bound above that value (beyond ``VERIFY_TOLERANCE``) or,
    for a formulation declaring ``DECODE_NOT_WORSE``, a decoded value above the solver's, turns
    the status into ``error`` with a message; the bound is then dropped (``-inf``). A bound
    within the tolerance of the verified objective after an optimal solve becomes that objective
    (the bound is valid for the stated problem, so the decoded model is certified). An optimal
    solve that leaves a gap (a formulation that is not ``EXACT``, or a solver's gap tolerance)
    becomes ``feasible`` and says why in ``message``: ``optimal`` always means certified for the
    stated problem.
    """
    status = Status.parse(solution.status)
    decoded = formulation.decode(model, solution) if solution.has_solution else None
    message = ""
    if decoded is None:
        objective = math.nan
        infeasible = status == Status.INFEASIBLE
        bound = math.inf if infeasible else formulation.lower_bound(model, solution)
    else:
        objective = float(formulation.evaluate(model, decoded, data))
        bound = formulation.lower_bound(model, solution)
        properties = formulation.properties
        violated = formulation.violation(model, decoded, data)
        if violated:
            message = f"{violated}: the solver's answer breaks a side constraint"
        elif bound > objective + VERIFY_TOLERANCE:
            message = (
                f"the solver's bound {bound:.10g} exceeds the verified objective {objective:.10g} "
                "of the model it returned: its numerics failed, so nothing is certified"
            )
        elif (
            Property.DECODE_NOT_WORSE in properties
            and objective > solution.objective + VERIFY_TOLERANCE
        ):
            message = (
                f"the decoded model scores {objective:.10g}, worse than the solver's value "
                f"{solution.objective:.10g}: the solution does not describe the model it encodes"
            )
        if message:
            status, bound = Status.ERROR, -math.inf
        else:
            bound = min(bound, objective)
            if status == Status.OPTIMAL and objective - bound <= VERIFY_TOLERANCE:
                bound = objective  # a proof within the solver's tolerance certifies the model
            elif status == Status.OPTIMAL:
                # optimal for the program, not proven for the stated problem: say why
                status = Status.FEASIBLE
                if Property.EXACT in properties:
                    why = "the solver stopped at its optimality gap tolerance"
                else:
                    why = "the model's optimum need not be the stated problem's"
                message = f"optimal for the model, but {why}: " + (
                    "its bound is not valid for the stated problem"
                    if bound == -math.inf
                    else f"the verified objective {objective:.10g} is certified only down to "
                    f"{bound:.10g}"
                )
    return Result(
        model=decoded,
        objective=objective,
        lower_bound=bound,
        status=status,
        time=float(solution.time),
        method=formulation.name,
        backend=solution.backend,
        trace=solution.trace if solution.trace is not None else empty_trace(),
        n_explored=int(solution.nodes),
        stats={"solver": solution.solver, "solve_time": float(solution.time), "model_ir": model},
        solution=solution,
        message=message,
    )

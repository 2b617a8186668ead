"""How every pruning model is solved: solver options, the integral-LP check, verified MIPs and
:func:`solve_ip3` (IP3 / LP1 / IP1 by LP with a MIP fallback, which budgets and column
generation call as well as :func:`~odtkit.pruning.prune`).

Every answer goes through :func:`odtkit.pipeline.verify_solution`: the decoded pruning is
re-scored by the formulation's ``evaluate`` (:func:`~odtkit.pruning.objective_terms`) and a
solver value or bound that disagrees with it turns the status into ``error``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from odtkit._limits import Deadline, OutOfTime, charged
from odtkit.model import Model
from odtkit.pipeline import solve_model, verify_solution
from odtkit.pruning._data import EnsembleData
from odtkit.pruning._ensemble import PrunedEnsemble
from odtkit.pruning._formulations import IP1, IP3, LP1, PruningFormulation, check_problem
from odtkit.results import Result, Status
from odtkit.solvers import backend_capabilities, solve

#: HiGHS's default dual feasibility tolerance (1e-7) treats reduced costs below it as zero; the
#: feature-cost coefficients ``lam c_k / N`` can be far smaller than that (tiny λ, large N), which
#: made the LP stop ~1e-8 above the optimum. 1e-10 keeps objectives exact to 1e-9
#: (docs/formulations-search-and-pruning.md §0.4).
HIGHS_TOLERANCES: dict[str, Any] = {"dual_feasibility_tolerance": 1e-10}

#: an LP value farther than this from an integer counts as fractional
#: (docs/formulations-search-and-pruning.md §9, last open doubt)
INTEGRALITY_TOL = 1e-7


def solver_options(backend: str) -> dict[str, Any]:
    """Options of :func:`odtkit.solvers.solve` every pruning model gets on ``backend``."""
    return dict(HIGHS_TOLERANCES) if backend == "highs" else {}


def max_fractionality(x: np.ndarray | None, integrality: np.ndarray | None = None) -> float:
    """Largest distance of an entry to its nearest integer (over ``integrality`` columns)."""
    if x is None or x.size == 0:
        return 0.0
    v = x if integrality is None else x[integrality]
    return float(np.max(np.abs(v - np.round(v)))) if v.size else 0.0


def solve_mip(
    formulation: PruningFormulation[Any],
    model: Model[Any],
    data: EnsembleData,
    *,
    backend: str,
    time_limit: float | None,
    start: Any = None,
) -> tuple[Result, dict[str, Any]]:
    """``model`` as an integer program, verified (:func:`odtkit.pipeline.solve_model`, which
    also distrusts a warm start whose answer fails verification); ``start`` a pruning to
    warm-start from. Returns the Result and stats (``mip_time``, ``warm_start``,
    ``start_rejected``).
    """
    vector = None
    if start is not None and "mip_start" in backend_capabilities(backend):
        vector = formulation.start(model, start)
    result = solve_model(
        formulation,
        model,
        data,
        backend=backend,
        start=vector,
        time_limit=time_limit,
        **solver_options(backend),
    )
    stats = {"mip_time": result.stats["solve_time"], "warm_start": result.stats["warm_start"]}
    if "start_rejected" in result.stats:
        stats["start_rejected"] = result.stats["start_rejected"]
    return result, stats


def _with_pruning(result: Result, data: EnsembleData, lam: float | None) -> Result:
    """``result`` with its decoded leaf masks wrapped in a PrunedEnsemble."""
    if result.model is None:
        return result
    return result.replace(model=PrunedEnsemble(data, result.model, 0.0 if lam is None else lam))


def _at_limit(
    start: PrunedEnsemble | None,
    model: Any,
    method: str,
    backend: str,
    deadline: Deadline,
    message: str,
) -> Result:
    """The warm start ``start`` (as ``model``), unproven: what a limit that left no solve
    returns."""
    return Result(
        model=model,
        objective=start.objective if start is not None else np.nan,
        lower_bound=-np.inf,
        status=Status.TIME_LIMIT,
        time=deadline.elapsed(),
        method=method,
        backend=backend,
        message=message,
    )


def solve_ip3(
    data: EnsembleData,
    *,
    lam: float | None = None,
    budget: float | None = None,
    method: str = "lp",
    backend: str = "highs",
    time_limit: float | None = None,
    start: PrunedEnsemble | None = None,
    aggregate: bool = True,
) -> Result:
    """Solve IP3 for ``lam`` (LP1 for ``budget``; IP1 with ``method="ip1"``), verified.

    ``method="lp"``: the LP relaxation by simplex (a vertex); if the vertex is fractional beyond
    ``INTEGRALITY_TOL`` (never observed for IP3, always possible for LP1) or the LP does not
    finish optimal, the integer program is solved instead (warm-started from ``start``) and
    ``stats["fallback"]`` says why. ``method="mip"``/``"ip1"``: the integer program directly.
    ``aggregate`` builds the compact IP3 (``IP3(aggregate=True, merge=True)``).

    Returns
    -------
    Result
        ``model`` the PrunedEnsemble (None for an infeasible model or a solver stopped without
        a solution), ``method`` the formulation's name (``"ip3"``, ``"lp1"``, ``"ip1"``),
        ``solution`` the solved program's Solution; ``stats``: ``solved_as`` (``"lp"`` or
        ``"mip"``), ``max_fractionality`` (of the LP vertex when an LP was solved),
        ``fallback``, ``lp_status`` / ``lp_objective`` / ``lp_time`` / ``mip_time``,
        ``build_time``, ``formulation`` and the built ``model_ir``; with a ``time_limit``,
        ``over_time_limit``: the seconds the call ran past it (the transfer into HiGHS and the
        re-scoring run outside HiGHS's clock). An LP that spends the limit starts no MIP.
    """
    if method not in ("lp", "mip", "ip1"):
        raise ValueError(f"method must be 'lp', 'mip' or 'ip1', got {method!r}")
    lam, budget = check_problem(lam, budget)
    deadline = Deadline(time_limit)  # the build, the LP and a MIP fallback share it
    t0 = deadline.start
    if method == "ip1":
        formulation: IP3 | IP1 = IP1()
    else:
        kind = IP3 if budget is None else LP1
        formulation = kind(aggregate=aggregate, merge=aggregate)
    try:
        with charged(deadline):
            model = formulation.build(data, lam=lam, budget=budget)
    except OutOfTime:
        why = "the time limit ran out during the build"
        return _at_limit(start, start, formulation.name, backend, deadline, why).replace(
            stats={"stopped_before_solve": why}
        )
    stats: dict[str, Any] = {
        "build_time": time.perf_counter() - t0,
        "formulation": formulation,
    }
    result = None
    if method == "lp":
        solution = solve(
            model,
            backend=backend,
            time_limit=deadline.limit_left(),
            relax=True,
            lp_method="simplex",
            **solver_options(backend),
        )
        frac = max_fractionality(solution.x, model.integrality) if solution.has_solution else np.nan
        stats.update(
            lp_time=solution.time,
            lp_status=solution.status,
            lp_objective=solution.objective,
            max_fractionality=frac,
            solved_as="lp",
        )
        if solution.status == Status.INFEASIBLE or (
            solution.status == Status.OPTIMAL and frac <= INTEGRALITY_TOL
        ):
            result = verify_solution(formulation, model, solution, data)
        else:
            stats["fallback"] = (
                f"LP status {solution.status}"
                if solution.status != Status.OPTIMAL
                else f"fractional LP vertex (max fractionality {frac:.3g})"
            )
            stats["lp_solution"] = solution
    lp_timed_out = stats.get("lp_status") == Status.TIME_LIMIT
    if result is None and method == "lp" and (lp_timed_out or deadline.expired()):
        # The LP spent the limit: a MIP fallback would get 1 ms of HiGHS but first pay a whole
        # model transfer and presolve outside HiGHS's clock (the 46 % overrun of issue 42 on a
        # 47-tree forest), only to return no better pruning than ``start``.
        stats["fallback"] += "; no MIP: the time limit was spent in the LP"
        why = "the time limit ran out in the LP; no MIP was started"
        leaves = None if start is None else start.leaves  # wrapped again by _with_pruning
        result = _at_limit(start, leaves, formulation.name, backend, deadline, why)
    if result is None:
        # after Ctrl-C in the LP the MIP only hands back the start (a 1 ms limit)
        interrupted = stats.get("lp_status") == Status.INTERRUPTED
        left = 1e-3 if interrupted else deadline.limit_left()
        result, mip_stats = solve_mip(
            formulation, model, data, backend=backend, time_limit=left, start=start
        )
        if interrupted:
            result = result.replace(status=Status.INTERRUPTED)
        stats.update(mip_stats, solved_as="mip")
        stats.setdefault(
            "max_fractionality",
            max_fractionality(result.solution.x, model.integrality)
            if result.solution.has_solution
            else np.nan,
        )
    result = _with_pruning(result, data, lam)
    elapsed = time.perf_counter() - t0
    if time_limit is not None:
        # what HiGHS's own limit cannot hold: the model build before it (checked against the
        # deadline), the transfer into HiGHS and the re-scoring after it (both run to the end)
        stats["over_time_limit"] = max(0.0, elapsed - time_limit)
    return result.replace(time=elapsed, stats={**result.stats, **stats})

"""Feature-cost budgets: the exact path or the λ search of Corollary 4.3, and the budgeted LP1
(NWS 2016, Corollary 4.3; docs/formulations-search-and-pruning.md §7.7, §8.6, §7.11).

By default (``search="path"``) the hull is the exact cost–error path of
:func:`~odtkit.pruning.cost_error_path` (min cuts): the vertex within budget and the Lagrangian
bound ``E_j + λ_j (C_j - B)`` at the breakpoint below it are exact, so a budget at a hull vertex
(or above the λ = 0 cost) is answered without any solver; ``search="lp"`` keeps the λ search by
LPs.

The λ search (Eisner–Severance line intersection) only reaches prunings on the lower convex
hull of the (cost, error) trade-off. Every λ it solves also gives the Lagrangian bound
``OPT(λ) - λ B`` on the budgeted optimum, so its answer comes with a certificate of how far off
it may be. LP1 — IP3 without the λ term plus the row ``cost <= B`` — is exact for hull budgets,
but for a budget between two hull vertices its simplex vertex can be fractional with a value
strictly below every integral pruning within budget (§8.6: B = 3 gives 0.125 while the best
pruning has error term 0.25). ``budget_method="exact"`` then solves LP1 as a MIP (the budget row
breaks total unimodularity), warm-started from the λ-search solution, and returns the best
pruning within budget.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from odtkit.pruning._data import EnsembleData
from odtkit.pruning._ensemble import PrunedEnsemble
from odtkit.pruning._formulations import check_budget
from odtkit.pruning._path import exact_path
from odtkit.pruning._solve import solve_ip3
from odtkit.results import Result, Status, make_trace

__all__ = ["budget_prune", "check_budget_method", "lambda_search"]

_TOL = 1e-9


def check_budget_method(budget_method: Any) -> str:
    """``budget_method`` if it is ``"exact"`` or ``"lambda"``, else ValueError naming it."""
    if budget_method not in ("exact", "lambda"):
        raise ValueError(f"budget_method must be 'exact' or 'lambda', got {budget_method!r}")
    checked: str = budget_method  # one of the two strings above
    return checked


def lambda_search(
    data: EnsembleData,
    *,
    budget: float,
    backend: str = "highs",
    time_limit: float | None = None,
    max_steps: int = 100,
    aggregate: bool = True,
) -> Result:
    """Smallest-error IP3 solution over λ with cost <= ``budget`` (a lower-hull vertex).

    Returns
    -------
    Result
        ``model`` the hull pruning within budget (``lam`` 0: its objective is the error term),
        ``lower_bound`` the best Lagrangian bound ``max_λ OPT(λ) - λ budget``, ``status``
        ``optimal`` when that bound proves the pruning optimal for the budget, else
        ``feasible`` (the search cannot go past the hull; ``message`` says so);
        ``stats["lambda_steps"]`` lists every λ tried with its cost and error term and
        ``stats["lambda"]`` the λ of the answer; ``trace`` one row per λ.
    """
    budget = check_budget(budget)
    t0 = time.perf_counter()
    steps: list[dict[str, float]] = []
    trace: list[tuple[float, float, float]] = []
    best_bound = -np.inf
    best_error = np.inf

    def at(lam: float) -> Result:
        nonlocal best_bound, best_error
        r = solve_ip3(
            data,
            lam=lam,
            method="lp",
            backend=backend,
            time_limit=time_limit,
            aggregate=aggregate,
        )
        # weak duality of the budget row: OPT(B) >= OPT(λ) - λ B for every λ >= 0
        best_bound = max(best_bound, r.lower_bound - lam * budget)
        if r.model is not None:
            steps.append(
                {"lam": lam, "cost_term": r.model.cost_term, "error_term": r.model.error_term}
            )
            if r.model.cost_term <= budget + _TOL:
                best_error = min(best_error, r.model.error_term)
        trace.append((time.perf_counter() - t0, best_error, best_bound))
        return r.replace(stats={**r.stats, "lambda": lam})

    def done(hi: Result, status: Status | None = None, message: str = "") -> Result:
        pruned = PrunedEnsemble(data, hi.model.leaves, 0.0) if hi.model is not None else None
        objective = pruned.error_term if pruned is not None else np.nan
        bound = min(best_bound, objective) if pruned is not None else best_bound
        if status is None:
            if objective - bound <= _TOL:
                status, bound = Status.OPTIMAL, objective
            else:
                status = Status.FEASIBLE
                message = (
                    "the λ search reaches only prunings on the lower convex hull of the "
                    f"(cost, error) trade-off; the Lagrangian bound leaves a gap of "
                    f"{objective - bound:.3g} (prune's method='lp' closes it)"
                )
        stats = {
            **hi.stats,
            "budget": budget,
            "lambda_steps": steps,
            "lambda_error_term": objective,
            "lambda_cost_term": pruned.cost_term if pruned is not None else np.nan,
        }
        return hi.replace(
            model=pruned,
            objective=objective,
            lower_bound=bound,
            status=status,
            method="lambda_search",
            time=time.perf_counter() - t0,
            trace=make_trace(trace),
            stats=stats,
            message=message or hi.message,
        )

    lo = at(0.0)
    if lo.model is None or lo.status != Status.OPTIMAL:
        return done(lo, lo.status, f"the λ = 0 problem stopped with status {lo.status.value}")
    if lo.model.cost_term <= budget + _TOL:
        return done(lo)
    pos = data.costs[data.costs > 0]
    # above N / min positive cost every positive-cost pruning loses to the best cost-0 one
    lam_hi = 2.0 * data.n_samples / float(pos.min()) + 1.0 if pos.size else 1.0
    hi = at(lam_hi)
    if hi.model is None or hi.status != Status.OPTIMAL:
        return done(
            hi, hi.status, f"the λ = {lam_hi:g} problem stopped with status {hi.status.value}"
        )
    for _ in range(max_steps):
        dc = lo.model.cost_term - hi.model.cost_term
        if dc <= _TOL:
            break
        lam = (hi.model.error_term - lo.model.error_term) / dc
        s = at(lam)
        if s.model is None or s.status != Status.OPTIMAL:
            return done(
                hi, s.status, f"the λ = {lam:g} problem stopped with status {s.status.value}"
            )
        fits = s.model.cost_term <= budget + _TOL
        line = hi.model.error_term + lam * hi.model.cost_term
        if s.model.error_term + lam * s.model.cost_term >= line - _TOL:
            # no hull vertex strictly between: take a tied solution if it fits and is better
            if fits and s.model.error_term < hi.model.error_term - _TOL:
                hi = s
            break
        if fits:
            hi = s
        else:
            lo = s
    return done(hi)


def budget_prune(
    data: EnsembleData,
    *,
    budget: Any,
    budget_method: str = "exact",
    backend: str = "highs",
    time_limit: float | None = None,
    aggregate: bool = True,
    search: str = "path",
    path: Any = None,
) -> Result:
    """Best pruning with average feature cost <= ``budget`` (see the module docstring).

    ``search="path"`` (default) takes the hull from the exact cost–error path (``path``, a
    :class:`~odtkit.pruning.CostErrorPath` of ``data``, is computed if not given): a budget
    whose hull pruning's Lagrangian bound closes the gap is answered with ``method="path"``
    and ``stats["solved_as"] == "path"``; otherwise, with ``"exact"``, LP1 as below, warm
    started from that hull pruning. ``search="lp"``: the λ search by LPs (:func:`lambda_search`).

    ``budget_method="lambda"`` returns :func:`lambda_search`'s Result; ``"exact"`` solves LP1
    (as an LP, as a MIP warm-started from the λ-search pruning when the vertex is fractional)
    and returns a Result with ``method="lp1"`` whose ``stats`` also hold the λ search's
    (``lambda_steps``, ``lambda``, ``lambda_error_term``, ``lambda_cost_term``); its bound is
    the better of LP1's and the Lagrangian one.
    """
    budget = check_budget(budget, allow_negative=False)
    check_budget_method(budget_method)
    if search not in ("path", "lp"):
        raise ValueError(f"search must be 'path' or 'lp', got {search!r}")
    t0 = time.perf_counter()
    if search == "path":
        sweep = _hull_within(data, budget, path)
    else:
        sweep = lambda_search(
            data, budget=budget, backend=backend, time_limit=time_limit, aggregate=aggregate
        )
    proven = search == "path" and sweep.status == Status.OPTIMAL
    if budget_method == "lambda" or sweep.model is None or proven:
        # (proven: the hull pruning's Lagrangian bound closes the gap; nothing left to solve)
        return sweep
    exact = solve_ip3(
        data,
        budget=budget,
        method="lp",
        backend=backend,
        time_limit=time_limit,
        start=sweep.model,
        aggregate=aggregate,
    )
    lambda_stats: dict[str, Any] = {
        k: sweep.stats[k]
        for k in ("lambda_steps", "lambda", "lambda_error_term", "lambda_cost_term", "path")
        if k in sweep.stats
    }
    stats = {**exact.stats, "budget": budget, "lambda_bound": sweep.lower_bound, **lambda_stats}
    bound = max(exact.lower_bound, sweep.lower_bound)
    if exact.model is None or exact.objective > sweep.objective:
        # the MIP stopped (time limit) without a pruning as good as the λ search's
        exact = exact.replace(model=sweep.model, objective=sweep.objective)
        stats["note"] = "the MIP found nothing better than the λ-search pruning"
    return exact.replace(
        lower_bound=min(bound, exact.objective), time=time.perf_counter() - t0, stats=stats
    )


def _hull_within(data: EnsembleData, budget: float, path: Any = None) -> Result:
    """The exact path's best hull pruning within ``budget``, with its Lagrangian bound."""
    t0 = time.perf_counter()
    if path is None:
        path = exact_path(data)
    elif path.data is not data:
        raise ValueError("path was computed for another EnsembleData")
    j = path.vertex_within(budget)
    bound, lam = path.lagrangian_bound(budget)
    pruned = path.pruning(j, lam=0.0)
    objective = pruned.error_term  # re-scored by objective_terms, not taken from the path
    if path.status != Status.OPTIMAL:
        # a path cut short may miss hull vertices: its pruning is feasible, its bound is not
        status, bound = path.status, -np.inf
        message = f"the cost-error path stopped early ({path.status.value}): no bound"
    elif objective - bound <= _TOL:
        status, bound, message = Status.OPTIMAL, objective, ""
    else:
        status = Status.FEASIBLE
        message = (
            "the budget lies between two vertices of the lower convex hull of the (cost, "
            f"error) trade-off; the Lagrangian bound leaves a gap of {objective - bound:.3g} "
            "(prune's method='cut' closes it)"
        )
    elapsed = time.perf_counter() - t0
    return Result(
        model=pruned,
        objective=objective,
        lower_bound=min(bound, objective),
        status=status,
        time=elapsed,
        method="path",
        backend="native",
        trace=make_trace([(elapsed, objective, min(bound, objective))]),
        stats={
            "budget": budget,
            "solved_as": "path",
            "path": path,
            "path_vertex": j,
            "path_time": path.time,
            "lambda": lam,
            "lambda_error_term": objective,
            "lambda_cost_term": pruned.cost_term,
            "lambda_steps": [],
        },
        message=message,
    )

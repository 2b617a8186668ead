"""Feature-cost budgets: the λ search of Corollary 4.3 and the budgeted LP1 (spec §7.7, §8.6).

The λ search (Eisner–Severance line intersection) only reaches prunings on the lower convex
hull of the (cost, error) trade-off. LP1 — IP3 without the λ term plus the row
``cost <= B`` — is exact for such budgets, but for a budget between two hull vertices its simplex
vertex can be fractional with a value strictly below every integral pruning within budget
(§8.6: B = 3 gives 0.125 while the best pruning has error term 0.25). ``budget_method="exact"``
then solves LP1 as a MIP (the budget row breaks total unimodularity), warm-started from the
λ-search solution, and returns the best integral pruning within budget.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from odtkit.pruning._ensemble import PrunedEnsemble
from odtkit.pruning._extract import EnsembleData

__all__ = ["budget_prune", "lambda_search"]

_TOL = 1e-9


def lambda_search(
    data: EnsembleData, budget: float, backend: str = "highs", time_limit: float | None = None,
    max_steps: int = 100, aggregate: bool = True,
) -> tuple[PrunedEnsemble, list[dict[str, float]]]:
    """Smallest-error IP3 solution over λ with cost <= budget (lower-hull vertex).

    Returns ``(pruning, steps)``; ``steps`` lists every λ tried with its cost and error term.
    """
    from odtkit.pruning._api import solve_ip3

    steps: list[dict[str, float]] = []

    def at(lam: float) -> PrunedEnsemble:
        pe = solve_ip3(
            data, lam, method="lp", backend=backend, time_limit=time_limit, aggregate=aggregate
        )
        steps.append({"lam": lam, "cost_term": pe.cost_term, "error_term": pe.error_term})
        return pe

    lo = at(0.0)
    if lo.cost_term <= budget + _TOL:
        return lo, steps
    pos = data.costs[data.costs > 0]
    # above N / min positive cost every positive-cost pruning loses to the best cost-0 one
    lam_hi = 2.0 * data.n_samples / float(pos.min()) + 1.0 if pos.size else 1.0
    hi = at(lam_hi)
    for _ in range(max_steps):
        dc = lo.cost_term - hi.cost_term
        if dc <= _TOL:
            break
        lam = (hi.error_term - lo.error_term) / dc
        s = at(lam)
        line = hi.error_term + lam * hi.cost_term
        if s.error_term + lam * s.cost_term >= line - _TOL:
            # no hull vertex strictly between: take a tied solution if it fits and is better
            if s.cost_term <= budget + _TOL and s.error_term < hi.error_term - _TOL:
                hi = s
            break
        if s.cost_term <= budget + _TOL:
            hi = s
        else:
            lo = s
    return hi, steps


def budget_prune(
    data: EnsembleData,
    budget: Any,
    budget_method: str = "exact",
    backend: str = "highs",
    time_limit: float | None = None,
    aggregate: bool = True,
) -> PrunedEnsemble:
    """Best pruning with average feature cost <= ``budget`` (see module docstring)."""
    from odtkit.pruning._api import max_fractionality, solve_ip3

    if isinstance(budget, bool) or not isinstance(budget, (int, float, np.integer, np.floating)):
        raise TypeError(f"budget must be a number, got {type(budget).__name__}")
    budget = float(budget)
    if not np.isfinite(budget):
        raise ValueError(f"budget must be finite, got {budget}")
    if budget_method not in ("exact", "lambda"):
        raise ValueError(f"budget_method must be 'exact' or 'lambda', got {budget_method!r}")
    t0 = time.perf_counter()
    if budget < 0:
        # every pruning has cost >= 0 (the all-root pruning costs exactly 0): prove it with LP1
        pe = solve_ip3(
            data, 0.0, method="lp", backend=backend, time_limit=time_limit, budget=budget,
            aggregate=aggregate,
        )
        pe.info["note"] = (
            f"budget={budget} is below the cheapest pruning's cost 0 (every tree cut to its root)"
        )
        return pe
    sweep, steps = lambda_search(
        data, budget, backend=backend, time_limit=time_limit, aggregate=aggregate
    )
    info: dict[str, Any] = {
        "budget": budget,
        "lambda_steps": steps,
        "lambda": steps[-1]["lam"] if steps else 0.0,
        "lambda_error_term": sweep.error_term,
        "lambda_cost_term": sweep.cost_term,
    }
    if budget_method == "lambda":
        pe = PrunedEnsemble(
            data=data, leaves=sweep.leaves, lam=0.0, status="optimal_for_own_cost",
            method="lambda", info=info, model=sweep.model, result=sweep.result,
            solver_objective=sweep.error_term,
        )
        pe.info["time"] = time.perf_counter() - t0
        return pe

    from odtkit.formulations.pruning import build_ip3, decode
    from odtkit.pruning._solve import run

    lp1 = build_ip3(data, 0.0, budget=budget, aggregate=aggregate, merge=aggregate)
    res = run(lp1, backend=backend, relax=True, lp_method="simplex", time_limit=time_limit)
    frac = max_fractionality(res.x, lp1.integrality) if res.has_solution else np.nan
    info.update(lp1_objective=res.objective, lp1_status=res.status, lp1_max_fractionality=frac)
    method = "lp1"
    if res.status == "optimal" and frac <= 1e-7:
        leaves = decode(lp1, res.x, data)
        final = res
    else:
        info["lp1_fractional"] = True
        info["note"] = (
            "LP1 vertex is fractional: this budget is not reached by any λ (Corollary 4.3 does "
            "not apply); solved LP1 as a MIP from the λ-search solution"
        )
        start = _vector(lp1, data, sweep)
        final = run(lp1, backend=backend, time_limit=time_limit, start=start)
        if final.has_solution and abs(lp1.objective_value(final.x) - final.objective) > 1e-9:
            # HiGHS 1.16 maps a MIP start into its presolved space wrongly on these models (log:
            # "MIP start solution is feasible in the reduced space" with a value below the true
            # optimum), takes that value as its incumbent, closes the gap at the root and
            # returns the start itself as "optimal" under the wrong value: the returned vector
            # contradicts the reported objective. Solve again without the start.
            info["start_rejected"] = (
                f"solver value {final.objective:.10g} but its solution is worth "
                f"{lp1.objective_value(final.x):.10g}"
            )
            final = run(lp1, backend=backend, time_limit=time_limit)
        method = "lp1_mip"
        if not final.has_solution:
            leaves = sweep.leaves
            info["mip_status"] = final.status
        else:
            leaves = decode(lp1, final.x, data)
    pe = PrunedEnsemble(
        data=data, leaves=leaves, lam=0.0,
        status=final.status if final.has_solution else "time_limit", method=method,
        max_fractionality=float(frac) if np.isfinite(frac) else np.nan, model=lp1, result=final,
        info=info, solver_objective=float(final.objective),
    )
    pe.info["time"] = time.perf_counter() - t0
    return pe


def _vector(model: Any, data: EnsembleData, pe: PrunedEnsemble) -> np.ndarray:
    """Full IP3/LP1 column vector of an integral pruning (MIP start)."""
    from odtkit.pruning._ensemble import objective_terms

    terms = objective_terms(data, pe.leaves, 0.0)
    return model.vector(
        {
            "z": np.concatenate(pe.leaves).astype(float),
            "wt": _wt(model, data, terms["wt"]),
            "w": _w(model, terms["w"]),
        }
    )


def _wt(model: Any, data: EnsembleData, wt_entries: np.ndarray) -> np.ndarray:
    """``wt`` values per entry, or per (t, u, k) group for the aggregated model."""
    if model.meta.get("aggregate"):
        return wt_entries[data.group_start].astype(float)
    return wt_entries.astype(float)


def _w(model: Any, w_pairs: np.ndarray) -> np.ndarray:
    """``w`` values per pair, or per merged class (its representative's value)."""
    if model.meta.get("merge"):
        return w_pairs[model.meta["class_rep"]].astype(float)
    return w_pairs.astype(float)

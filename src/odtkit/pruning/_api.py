"""``prune``, ``individual_prune`` and ``cost_error_path``: the user-facing entry points."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from odtkit._validation import check_lambda, check_positive_number
from odtkit.pruning._ensemble import PrunedEnsemble, tree_dp, unpruned
from odtkit.pruning._extract import EnsembleData, extract

__all__ = ["prune", "individual_prune", "cost_error_path", "solve_ip3", "METHODS"]

METHODS = ("lp", "mip", "colgen", "ip1")

#: an LP value farther than this from an integer counts as fractional (spec §9 last doubt)
INTEGRALITY_TOL = 1e-7


def _data(ensemble: Any, X: Any, y: Any, costs: Any) -> EnsembleData:
    if isinstance(ensemble, EnsembleData):
        if costs is not None:
            raise ValueError("costs are fixed at extraction; pass them to extract(), not here")
        return ensemble
    if X is None or y is None:
        raise TypeError("prune needs the training data X and y the pruning is measured on")
    return extract(ensemble, X, y, costs)


def max_fractionality(x: np.ndarray | None, integrality: np.ndarray | None = None) -> float:
    """Largest distance of an entry to its nearest integer (over ``integrality`` columns)."""
    if x is None or x.size == 0:
        return 0.0
    v = x if integrality is None else x[integrality]
    return float(np.max(np.abs(v - np.round(v)))) if v.size else 0.0


def solve_ip3(
    data: EnsembleData,
    lam: float,
    method: str = "lp",
    backend: str = "highs",
    time_limit: float | None = None,
    budget: float | None = None,
    start: np.ndarray | None = None,
    aggregate: bool = True,
) -> PrunedEnsemble:
    """Solve IP3 (or LP1 with ``budget``, or IP1 with ``method="ip1"``) through the Model IR.

    ``method="lp"``: LP relaxation by HiGHS simplex (a vertex); if the vertex is fractional
    beyond ``INTEGRALITY_TOL`` (never observed for IP3, always possible for LP1) or the LP does not
    finish optimal, the integer program is solved instead and ``info["fallback"]`` says why.
    """
    from odtkit.formulations.pruning import build_ip1, build_ip3, decode
    from odtkit.pruning._solve import run

    t0 = time.perf_counter()
    if method == "ip1":
        model = build_ip1(data, lam, budget=budget)
    else:
        model = build_ip3(data, lam, budget=budget, aggregate=aggregate, merge=aggregate)
    t_build = time.perf_counter() - t0
    info: dict[str, Any] = {"build_time": t_build, "formulation": model.meta["formulation"]}
    lp_result = None
    frac = 0.0
    if method == "lp":
        res = run(model, backend=backend, relax=True, lp_method="simplex", time_limit=time_limit)
        lp_result = res
        frac = max_fractionality(res.x, model.integrality) if res.has_solution else np.nan
        info.update(lp_time=res.time, lp_status=res.status, lp_objective=res.objective)
        if res.status == "infeasible":
            return _infeasible(data, lam, model, res, info)
        if res.status != "optimal" or not frac <= INTEGRALITY_TOL:
            info["fallback"] = (
                f"LP status {res.status}" if res.status != "optimal"
                else f"fractional LP vertex (max fractionality {frac:.3g})"
            )
            res = run(model, backend=backend, time_limit=time_limit, start=start)
            info["mip_time"] = res.time
    elif method in ("mip", "ip1"):
        res = run(model, backend=backend, time_limit=time_limit, start=start)
        info["mip_time"] = res.time
    else:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if res.status == "infeasible":
        return _infeasible(data, lam, model, res, info)
    if not res.has_solution:
        raise RuntimeError(
            f"{model.meta['formulation']} ({method}) stopped with status {res.status!r} and no "
            "solution; raise time_limit"
        )
    leaves = decode(model, res.x, data)
    status = res.status
    pe = PrunedEnsemble(
        data=data,
        leaves=leaves,
        lam=0.0 if budget is not None else lam,
        status=status,
        method=method,
        max_fractionality=frac,
        model=model,
        result=res,
        info=info,
        solver_objective=float(res.objective),
    )
    if lp_result is not None and lp_result is not res:
        info["lp_result"] = lp_result
    info["time"] = time.perf_counter() - t0
    return pe


def _infeasible(data: EnsembleData, lam: float, model: Any, res: Any, info: dict) -> PrunedEnsemble:
    roots = []
    for t in data.trees:
        z = np.zeros(t.n_nodes, dtype=bool)
        z[0] = True
        roots.append(z)
    info["note"] = "infeasible: no pruning satisfies the budget; leaves hold the root pruning"
    return PrunedEnsemble(
        data=data, leaves=roots, lam=lam, status="infeasible", method="lp", max_fractionality=0.0,
        model=model, result=res, info=info, solver_objective=float("nan"),
    )


def prune(
    ensemble: Any,
    X: Any = None,
    y: Any = None,
    costs: Any = None,
    lam: float = 0.0,
    method: str = "lp",
    budget: float | None = None,
    budget_method: str = "exact",
    backend: str = "highs",
    time_limit: float | None = None,
    formulation: str = "compact",
) -> PrunedEnsemble:
    """Optimally prune a tree ensemble for error plus feature cost (NWS IP3).

    Minimises ``(1/(NT)) sum_t (training errors of pruned tree t)
    + lam * (1/N) sum_i (cost of the distinct features example i acquires across all trees)``
    over all valid prunings (keep the root; keep both children or none).

    Parameters
    ----------
    ensemble : fitted RandomForestClassifier / ExtraTreesClassifier / BaggingClassifier of trees,
        a list of fitted DecisionTreeClassifiers, or an :class:`EnsembleData` from :func:`extract`
        (then ``X``, ``y``, ``costs`` are taken from it).
    X, y : training data the objective is measured on (not the trees' bootstrap samples).
    costs : array-like (n_features,), optional
        Feature acquisition costs ``c_k >= 0`` (default 1).
    lam : float
        Weight λ >= 0 of the average feature cost.
    method : {"lp", "mip", "colgen", "ip1"}
        ``"lp"``: LP relaxation of IP3 by HiGHS simplex (integral vertex by Theorem 4.2, checked;
        MIP fallback otherwise). ``"mip"``: IP3 as an integer program. ``"colgen"``: Dantzig–Wolfe
        column generation with the tree-DP pricing. ``"ip1"``: the weak IP1 as a MIP (baseline).
    budget : float, optional
        Maximum average feature cost per example. Then the error term is minimised subject to the
        budget; see ``budget_method``. ``lam`` is ignored.
    budget_method : {"exact", "lambda"}
        ``"lambda"``: the λ search of Corollary 4.3 (exact only for budgets on the lower convex
        hull of the cost/error trade-off). ``"exact"`` (default): additionally the budgeted LP1;
        if its simplex vertex is fractional (budgets between hull vertices, spec §8.6), LP1 is
        solved as a MIP warm-started from the λ-search solution, giving the best integral pruning
        within budget. ``info`` reports both.
    backend : str
        Solver backend for the models (``odtkit.solvers``).
    time_limit : float, optional
        Seconds per solver call.
    formulation : {"compact", "full"}
        ``"full"``: IP3 exactly as printed (one ``w^{(t)}_{k,i}`` and feature row per tree,
        feature, example). ``"compact"`` (default): the equivalent aggregated IP3 with one
        ``w^{(t)}`` per (tree, node u, feature) and (feature, example) pairs with identical link
        structure merged — same optimum, integral vertices, far fewer rows and nonzeros (see
        :func:`odtkit.formulations.pruning.build_ip3`, ``aggregate=True, merge=True``).

    Returns
    -------
    PrunedEnsemble
        With ``objective``, ``status``, ``max_fractionality``, ``model``, ``result``.
    """
    lam = check_lambda(lam)
    time_limit = check_positive_number(time_limit, "time_limit")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if formulation not in ("compact", "full"):
        raise ValueError(f"formulation must be 'compact' or 'full', got {formulation!r}")
    aggregate = formulation == "compact"
    t0 = time.perf_counter()
    data = _data(ensemble, X, y, costs)
    t_extract = time.perf_counter() - t0
    if budget is not None:
        from odtkit.pruning._budget import budget_prune

        pe = budget_prune(
            data, budget, budget_method, backend=backend, time_limit=time_limit,
            aggregate=aggregate,
        )
    elif method == "colgen":
        pe = _colgen(data, lam, backend, time_limit)
    else:
        pe = solve_ip3(
            data, lam, method=method, backend=backend, time_limit=time_limit,
            aggregate=aggregate,
        )
    pe.info["extract_time"] = t_extract
    pe.info["total_time"] = time.perf_counter() - t0
    return pe


def _colgen(
    data: EnsembleData, lam: float, backend: str, time_limit: float | None
) -> PrunedEnsemble:
    from odtkit.pruning._colgen import column_generation

    cg = column_generation(data, lam, backend=backend, time_limit=time_limit)
    info = {k: v for k, v in cg.items() if k not in ("leaves", "trace", "result", "model")}
    if cg["leaves"] is None and cg["status"] == "optimal":
        # no integral combination of the generated columns attains the LP value: the compact LP
        # is integral at a vertex (Theorem 4.2), so solve it instead
        pe = solve_ip3(data, lam, method="lp", backend=backend, time_limit=time_limit)
        pe.info.update(colgen=info, fallback="compact LP after fractional column generation")
        pe.trace = cg["trace"]
        return pe
    if cg["leaves"] is None:
        raise RuntimeError(
            f"column generation stopped with status {cg['status']!r} and no integral pruning; "
            "raise time_limit"
        )
    status = cg["status"]
    return PrunedEnsemble(
        data=data, leaves=cg["leaves"], lam=lam, status=status, method="colgen",
        max_fractionality=float(cg["max_fractionality"]), model=cg["model"], result=cg["result"],
        trace=cg["trace"], info=info, solver_objective=float(cg["lp_value"]),
    )


def individual_prune(
    ensemble: Any, X: Any = None, y: Any = None, costs: Any = None, lam: float = 0.0
) -> PrunedEnsemble:
    """Individual-pruning baseline (NWS "ind.pru."): each tree pruned alone by IP2.

    Each tree ``t`` minimises ``(1/N) sum e_h z_h + lam_ind (1/N) sum_i sum_{k used in t} c_k``
    with ``lam_ind = T lam`` by the exact tree DP of §7.9 (ties -> prune), ignoring that trees
    share acquired features. The returned object is accounted like every other pruning (features
    paid once across trees), so its ``objective`` is directly comparable to :func:`prune`'s;
    ``info["individual_objective"]`` is the per-tree-cost objective the DP minimised (divided
    by T).
    """
    lam = check_lambda(lam)
    data = _data(ensemble, X, y, costs)
    N, T = data.n_samples, data.n_trees
    leaves, total = [], 0.0
    for tree in data.trees:
        value, z = tree_dp(tree, tree.error / N, (T * lam) * data.costs[tree.use_feature] / N)
        leaves.append(z)
        total += value
    return PrunedEnsemble(
        data=data, leaves=leaves, lam=lam, status="optimal", method="individual",
        info={"individual_objective": total / T, "lam_ind": T * lam},
        solver_objective=total / T,
    )


def cost_error_path(
    ensemble: Any,
    X: Any = None,
    y: Any = None,
    lams: Any = (0.0,),
    costs: Any = None,
    X_test: Any = None,
    y_test: Any = None,
    methods: tuple[str, ...] = ("ensemble", "individual"),
    solver_method: str = "lp",
    backend: str = "highs",
) -> pd.DataFrame:
    """Trade-off curve: one row per (λ, method) with training terms and optional test metrics.

    ``methods`` among ``"ensemble"`` (IP3 via ``solver_method``), ``"individual"`` (per-tree DP)
    and ``"none"`` (unpruned). Extraction is done once and shared.
    """
    data = _data(ensemble, X, y, costs)
    rows = []
    for lam in np.atleast_1d(np.asarray(lams, dtype=float)):
        for m in methods:
            if m == "ensemble":
                pe = prune(data, lam=float(lam), method=solver_method, backend=backend)
            elif m == "individual":
                pe = individual_prune(data, lam=float(lam))
            elif m == "none":
                pe = PrunedEnsemble(data=data, leaves=unpruned(data), lam=float(lam), method="none")
            else:
                raise ValueError(f"unknown method {m!r}; use 'ensemble', 'individual' or 'none'")
            row = {"lam": float(lam), "method": m, **pe.summary()}
            row["method"] = m
            if X_test is not None:
                for k, v in pe.evaluate(X_test, y_test).items():
                    row[f"test_{k}"] = v
            rows.append(row)
    return pd.DataFrame(rows)

"""Dantzig–Wolfe column generation for LP-IP3 (NWS 2016).

docs/formulations-search-and-pruning.md §7.8–7.9.

The restricted master is a formulation, :class:`odtkit.pruning.ColgenMaster`:
its ``build`` gives the initial master (root-only and individual-pruning columns) as a Model,
:meth:`~odtkit.pruning.ColgenMaster.column_arrays` the coefficients of new columns
and :meth:`~odtkit.pruning.ColgenMaster.with_columns` the master over any column
set. With the ``"highs"`` backend the master lives in one :class:`odtkit.solvers.IncrementalLP`:
built once from the initial columns, every iteration appends all the priced-out prunings in one
vectorized ``addCols`` call and re-solves by simplex from the previous optimal basis, which stays
valid because new columns enter nonbasic (a few hundred pivots instead of a cold solve of a
rebuilt model). Other backends rebuild the master through :func:`odtkit.solvers.solve` each
iteration. By default (``merge=True``) pairs with identical link structure are merged exactly as
in ``IP3(merge=True)``, so the master has the compact LP's link rows rather than one row per
entry.

Row duals have the convention ``c - A^T y = reduced costs``: link duals ``q_e <= 0``, prices
``pi_e = -q_e``, convexity duals ``r_t``. Pricing for tree ``t`` is the exact tree DP of §7.9
with leaf costs ``e_h / (NT)`` and entry prices ``pi_e``; a pruning with DP value
``OPT_t < r_t - eps`` enters. The Lagrangian bound ``master + sum_t min(0, OPT_t - r_t)`` is
recorded every iteration; it is the Result's lower bound.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from odtkit._limits import stop_on_interrupt
from odtkit._validation import check_lambda
from odtkit.model import Model
from odtkit.pipeline import VERIFY_TOLERANCE, verify_solution
from odtkit.pruning._data import EnsembleData
from odtkit.pruning._ensemble import PrunedEnsemble, tree_dp
from odtkit.pruning._formulations import ColgenMaster, MasterColumn
from odtkit.pruning._solve import HIGHS_TOLERANCES, solver_options
from odtkit.results import Result, Status, make_trace
from odtkit.solvers import IncrementalLP, Solution, solve

__all__ = ["column_generation"]


def _as_ir_result(res: Solution, model: Model[object], n_initial: int, n_w: int) -> Solution:
    """Re-index an incremental master solution to ``model`` (the master of the same columns).

    The incremental LP holds ``[alpha_0..alpha_{J0-1}, w, alpha_{J0}..]`` (added columns go
    last); the IR model holds all ``alpha`` then ``w``. Rows are identical, so duals carry over.
    """
    alpha, w = model.vars["alpha"], model.vars["w"]
    J = alpha.stop - alpha.start
    assert alpha.start == 0 and w.start == J and w.stop - w.start == n_w
    order = np.concatenate(
        [
            np.arange(n_initial),
            n_initial + n_w + np.arange(J - n_initial),
            n_initial + np.arange(n_w),
        ]
    )
    assert res.x is not None  # only a solved master is re-indexed
    x = res.x[order]
    rc = res.reduced_costs[order] if res.reduced_costs is not None else None
    return dataclasses.replace(res, x=x, values=model.values(x), reduced_costs=rc)


def column_generation(
    data: EnsembleData,
    *,
    lam: float,
    backend: str = "highs",
    tol: float = 1e-10,
    max_iter: int = 10_000,
    time_limit: float | None = None,
    init: str = "individual",
    incremental: bool | None = None,
    merge: bool = True,
) -> Result:
    """Solve LP-IP3 by column generation, then recover an integral optimal pruning.

    Parameters
    ----------
    lam : float
        Weight λ >= 0 of the average feature cost.
    init : {"root", "individual"}
        Initial columns (``ColgenMaster(init=...)``): the root-only pruning of each tree, plus
        with ``"individual"`` each tree's individual-pruning DP solution.
    incremental : bool, optional
        Keep the master in one warm-started :class:`~odtkit.solvers.IncrementalLP` (default for
        ``backend="highs"``, the only backend that supports it); ``False`` rebuilds and
        re-solves it through :func:`odtkit.solvers.solve` every iteration.
    merge : bool
        ``ColgenMaster(merge=...)``: merged link rows (default) or one per entry (LP4).

    Returns
    -------
    Result
        ``model`` the PrunedEnsemble (None only if no master was ever solved and there is no
        column to fall back on), ``objective`` its IP3 objective, ``lower_bound`` the best
        Lagrangian bound, ``trace`` one row per iteration (incumbent = master value, bound =
        Lagrangian bound), ``solution`` the last solved master LP in the column order of
        ``stats["model_ir"]`` (that master as a Model). ``status`` ``optimal`` after
        convergence with an integral pruning attaining the LP value; ``error`` when no integral
        combination of the generated columns attains it (``stats["integral_by"] ==
        "failed"``, the model is then the binary master's best pruning); a limit otherwise.
        ``stats``: ``lp_value`` (converged master value = LP-IP3), ``iterations``,
        ``n_columns``, ``max_fractionality`` of the master's alpha, ``integral_by``
        (``"master_lp"``, ``"master_mip"``, ``"initial_columns"`` or ``"failed"``),
        ``mip_result`` (the binary master's Result, when solved), ``incremental``,
        ``master_time`` / ``pricing_time``, ``simplex_iterations`` (incremental only) and
        ``master_rows`` (link rows of the master).
    """
    lam = check_lambda(lam)
    t0 = time.perf_counter()
    N, T = data.n_samples, data.n_trees
    master = ColgenMaster(merge=merge, init=init)
    initial = master.build(data, lam=lam)
    layout = initial.meta.layout
    cols: list[MasterColumn] = list(initial.meta.columns)
    keys = {(c.tree, np.packbits(c.leaves).tobytes()) for c in cols}
    n_initial = len(cols)
    # pricing sees one price per entry: its link row's price, 0 for entries without a row
    # (a merged pair's entries are priced through the class representative's rows)
    has_row = layout.row_of_entry >= 0
    entry_row = layout.row_of_entry[has_row]
    entry_price = np.zeros(data.n_entries)
    leaf_costs = [t.error.astype(np.float64) / (N * T) for t in data.trees]
    link = initial.constraints["link"]
    conv = initial.constraints["convexity"]

    if incremental is None:
        incremental = backend == "highs"
    elif incremental and backend != "highs":
        raise ValueError(f"incremental=True needs backend='highs', got {backend!r}")
    trace_rows = []
    status = Status.OPTIMAL
    it = 0
    res = last_ok = last_model = model = None
    lp: IncrementalLP | None = None
    n_in_lp = n_solved = 0  # columns in the incremental LP / in the last solved master
    master_time = pricing_time = 0.0
    simplex_iterations = 0
    # Ctrl-C in the pricing (Python) or in a master solve ends the loop at once; the answer is
    # then built from the last master solved to the end (status interrupted)
    with stop_on_interrupt() as ctrl_c:
        while True:
            it += 1
            remaining = None
            if time_limit is not None:
                remaining = max(time_limit - (time.perf_counter() - t0), 1e-3)
            t1 = time.perf_counter()
            if incremental:
                if lp is None:
                    lp = IncrementalLP(initial, **HIGHS_TOLERANCES)
                else:
                    lp.add_columns(*master.column_arrays(initial, cols[n_in_lp:]))
                n_in_lp = len(cols)
                res = lp.solve(time_limit=remaining)
                simplex_iterations += res.stats["iterations"]
            else:
                model = master.with_columns(initial, data, cols)
                res = solve(
                    model,
                    backend=backend,
                    relax=True,
                    lp_method="simplex",
                    time_limit=remaining,
                    **solver_options(backend),
                )
            master_time += time.perf_counter() - t1
            if res.status != Status.OPTIMAL or res.duals is None:
                status = res.status if res.status != Status.OPTIMAL else Status.ERROR
                ctrl_c.check(status)
                res = last_ok  # keep the last solved master (a valid upper bound), if any
                break
            last_ok, last_model = res, model
            n_solved = len(cols)
            t1 = time.perf_counter()
            entry_price[has_row] = np.maximum(-res.duals[link.start + entry_row], 0.0)
            r = res.duals[conv.start : conv.stop]
            lagr = res.objective
            added = []
            for t, tree in enumerate(data.trees):
                e0, e1 = data.entry_offset[t], data.entry_offset[t + 1]
                opt, z = tree_dp(tree, leaf_costs[t], entry_price[e0:e1])
                lagr += min(0.0, opt - r[t])
                key = (t, np.packbits(z).tobytes())
                if opt < r[t] - tol and key not in keys:
                    keys.add(key)
                    added.append(master.column(initial, data, t, z))
            cols.extend(added)
            pricing_time += time.perf_counter() - t1
            trace_rows.append((time.perf_counter() - t0, float(res.objective), float(lagr)))
            if not added:
                break
            if it >= max_iter:
                status = Status.ITERATION_LIMIT
                break
            if time_limit is not None and time.perf_counter() - t0 > time_limit:
                status = Status.TIME_LIMIT
                break
    if ctrl_c.interrupted:
        status, res = Status.INTERRUPTED, last_ok  # last_model is last_ok's model

    trace = make_trace(trace_rows)
    model = last_model
    if res is not None and incremental:
        # report the master as the IR model of the solved columns, in the IR's column order
        model = master.with_columns(initial, data, cols[:n_solved])
        res = _as_ir_result(res, model, n_initial, layout.n_w)
    stats: dict[str, Any] = {
        "iterations": it,
        "n_columns": len(cols),
        "incremental": incremental,
        "master_time": master_time,
        "pricing_time": pricing_time,
        "simplex_iterations": simplex_iterations if incremental else None,
        "master_rows": layout.n_rows,
        "lp_value": float(res.objective) if res is not None else np.nan,
        "model_ir": model,
        "max_fractionality": np.nan,
    }
    lower_bound = float(trace["bound"].max()) if len(trace) else -np.inf

    def answer(leaves: Any, status: Status, message: str = "") -> Result:
        pruned = PrunedEnsemble(data, leaves, lam) if leaves is not None else None
        objective = pruned.objective if pruned is not None else np.nan
        bound = lower_bound
        if pruned is not None and bound > objective + VERIFY_TOLERANCE:
            status, bound = Status.ERROR, -np.inf
            message = (
                f"the Lagrangian bound {lower_bound:.10g} exceeds the verified objective "
                f"{objective:.10g}: the master's duals are wrong, so nothing is certified"
            )
        elif pruned is not None:
            bound = min(bound, objective)
            if status == Status.OPTIMAL and objective - bound <= VERIFY_TOLERANCE:
                bound = objective
        return Result(
            model=pruned,
            objective=objective,
            lower_bound=bound,
            status=status,
            time=time.perf_counter() - t0,
            method="colgen",
            backend=backend,
            trace=trace,
            stats=stats,
            solution=res,
            message=message,
        )

    alpha = res.values["alpha"] if res is not None else None
    frac = float(np.max(np.minimum(alpha, 1 - alpha))) if alpha is not None and alpha.size else 0.0

    def from_initial_columns(status: Status) -> Result:
        # the better of the all-root and the last-column (individual-pruning) prunings
        per_tree = [[c.leaves for c in cols if c.tree == t] for t in range(T)]
        candidates = [[p[0] for p in per_tree], [p[-1] for p in per_tree]]
        best = min(candidates, key=lambda c: PrunedEnsemble(data, c, lam).objective)
        stats["integral_by"] = "initial_columns"
        return answer(best, status)

    if res is None or (frac > 1e-7 and status == Status.INTERRUPTED):
        # no master solved within the limit, or Ctrl-C with a fractional master (no MIP then)
        return from_initial_columns(status)
    stats["max_fractionality"] = frac
    if frac <= 1e-7:
        # columns priced after the last master solve (limit reached) are not in alpha
        stats["integral_by"] = "master_lp"
        assert model is not None  # the model of the solved master res
        return answer(master.decode(model, res), status)
    # ties: the LP optimum is a mix of integral optima; the restricted master with binary alpha
    # (few columns) picks one; it is optimal iff it attains the LP value
    binary = ColgenMaster(merge=merge, init=init, integral=True)
    mip_model = binary.with_columns(initial, data, cols)
    left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 1e-3)
    mip_solution = solve(mip_model, backend=backend, time_limit=left, **solver_options(backend))
    mip = verify_solution(binary, mip_model, mip_solution, data)
    if mip.status in (Status.INTERRUPTED, Status.TIME_LIMIT) and status == Status.OPTIMAL:
        status = mip.status  # the LP converged, the recovery of an integral pruning did not
    stats["mip_result"] = mip
    if mip.model is None and status in (Status.INTERRUPTED, Status.TIME_LIMIT):
        return from_initial_columns(status)
    # after convergence the binary master must attain the LP value to be optimal; after a
    # limit it is just the best integral combination of the columns found so far
    if mip.model is None or (status == Status.OPTIMAL and mip.objective > stats["lp_value"] + 1e-9):
        stats["integral_by"] = "failed"
        return answer(
            mip.model,
            Status.ERROR,
            "no integral combination of the generated columns attains the master's LP value",
        )
    stats["integral_by"] = "master_mip"
    return answer(mip.model, status)

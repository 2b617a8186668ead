"""Dantzig–Wolfe column generation for LP-IP3 (spec §7.8–7.9).

Restricted master (LP4 without explicit slacks): one column ``alpha_j`` per generated pruning
``j`` of tree ``t_j`` plus every ``w_{k,i}``,

    min  sum_j cost_j alpha_j + lam sum_{k,i} c_k / N w_{k,i}
    s.t. sum_{j in t} wt_j[e] alpha_j - w_{pair(e)} <= 0     for every entry e = (t, k, i)  (link)
         sum_{j in t} alpha_j = 1                            for every tree t        (convexity)

With the ``"highs"`` backend the master lives in one :class:`odtkit.solvers.IncrementalLP`:
it is built once from the initial columns, every iteration appends all the priced-out prunings
in one vectorized ``addCols`` call and re-solves by simplex from the previous optimal basis,
which stays valid because new columns enter nonbasic (a few hundred pivots instead of a cold
solve of a rebuilt model). Other backends rebuild the master through
:func:`odtkit.solvers.solve` each iteration. By default (``merge=True``) pairs with identical
link structure are merged exactly as in ``build_ip3(merge=True)``, so the master has the compact
LP's link rows rather than one row per entry (see ``_Layout``). Row duals have the convention
``c - A^T y = reduced costs``: link duals ``q_e <= 0``, prices ``pi_e = -q_e``, convexity
duals ``r_t``. Pricing for tree ``t`` is the exact tree DP of §7.9 with leaf costs
``e_h / (NT)`` and entry prices ``pi_e``; a pruning with DP value ``OPT_t < r_t - eps`` enters.
The Lagrangian bound ``master + sum_t min(0, OPT_t - r_t)`` is recorded every iteration.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np
import pandas as pd

from odtkit.model import ModelBuilder
from odtkit.pruning._ensemble import covered_mask, tree_dp
from odtkit.pruning._extract import EnsembleData
from odtkit.pruning._solve import HIGHS_TOLERANCES
from odtkit.solvers import IncrementalLP, Solution

__all__ = ["column_generation"]


@dataclasses.dataclass
class _Layout:
    """Link rows of the master: one per kept entry, each linked to one ``w`` column.

    Without merging every entry ``(t, k, i)`` keeps its row and ``w`` is per pair ``(k, i)``
    (the spec's LP4). With merging (as ``build_ip3(merge=True)``): pairs whose entries fall in
    the same ``(t, u, k)`` groups take equal optimal ``w`` values, so one ``w`` per class (cost
    summed over the class) and only the class representative's entries keep link rows. A
    pruning's ``w^{(t)}`` is constant on a group, so the restricted master — and its value, the
    LP-IP3 optimum — is the same as with every row; only far fewer rows reach HiGHS.
    """

    row_of_entry: np.ndarray  # global entry -> link row, -1 for dropped entries
    w_of_row: np.ndarray  # link row -> w column
    w_cost: np.ndarray  # objective coefficient of each w column

    @property
    def n_rows(self) -> int:
        return int(self.w_of_row.shape[0])

    @property
    def n_w(self) -> int:
        return int(self.w_cost.shape[0])


def _layout(data: EnsembleData, lam: float, merge: bool) -> _Layout:
    from odtkit.formulations.pruning import _merge_pairs

    pair_cost = lam * data.costs[data.pair_feature] / data.n_samples
    pair_class, class_rep = _merge_pairs(data) if merge else (None, None)
    if pair_class is None:  # not merging (or the exact check refused to merge)
        rows = np.arange(data.n_entries, dtype=np.int64)
        return _Layout(rows, data.entry_pair.astype(np.int64), pair_cost)
    is_rep = np.zeros(data.n_pairs, dtype=bool)
    is_rep[class_rep] = True
    keep = np.flatnonzero(is_rep[data.entry_pair])
    row_of_entry = np.full(data.n_entries, -1, dtype=np.int64)
    row_of_entry[keep] = np.arange(keep.shape[0])
    w_cost = np.bincount(pair_class, weights=pair_cost, minlength=class_rep.shape[0])
    return _Layout(row_of_entry, pair_class[data.entry_pair[keep]], w_cost)


def _column(
    data: EnsembleData, layout: _Layout, t: int, z: np.ndarray
) -> tuple[np.ndarray, float]:
    """Link rows where the pruning's ``w^{(t)}`` is 1 (sorted) and its error cost ``e'z/(NT)``."""
    tree = data.trees[t]
    cov = covered_mask(tree, z)
    active = ~(cov[tree.use_node] | z[tree.use_node])
    rows = layout.row_of_entry[data.entry_offset[t] + np.flatnonzero(active)]
    cost = float(tree.error[z].sum()) / (data.n_samples * data.n_trees)
    return rows[rows >= 0], cost


def _master(
    data: EnsembleData,
    layout: _Layout,
    cols: list[tuple[int, np.ndarray, float]],
    integral: bool,
) -> Any:
    b = ModelBuilder("pruning_master")
    J = len(cols)
    # no explicit alpha <= 1 (implied by convexity): an active upper bound would move part of the
    # dual into the bound and the pricing prices would no longer certify optimality
    if integral:
        alpha = b.add_vars("alpha", shape=(J,), kind="binary")
    else:
        alpha = b.add_vars("alpha", shape=(J,), kind="continuous", lb=0.0, ub=np.inf)
    w = b.add_vars("w", shape=(layout.n_w,), kind="continuous", lb=0.0, ub=1.0)
    ne = layout.n_rows
    lens = np.array([c[1].shape[0] for c in cols], dtype=np.int64)
    ent = np.concatenate([c[1] for c in cols]) if J else np.zeros(0, np.int64)
    acol = np.repeat(alpha.index, lens)
    erows = np.arange(ne, dtype=np.int64)
    b.add_constraints(
        "link",
        np.concatenate([ent, erows]),
        np.concatenate([acol, w.index[layout.w_of_row]]),
        np.concatenate([np.ones(ent.shape[0]), -np.ones(ne)]),
        "<=",
        np.zeros(ne),
    )
    trees = np.array([c[0] for c in cols], dtype=np.int64)
    b.add_constraints("convexity", trees, alpha.index, 1.0, "==", np.ones(data.n_trees))
    b.add_objective(alpha.index, np.array([c[2] for c in cols]))
    b.add_objective(w.index, layout.w_cost)
    return b.build()


def _append_columns(
    lp: IncrementalLP, model: Any, new: list[tuple[int, np.ndarray, float]]
) -> None:
    """Append master columns ``alpha_j`` (one ``addCols`` call): +1 on the pruning's active
    link rows, +1 on its tree's convexity row, cost ``e'z / (NT)``."""
    if not new:
        return
    link0 = model.constraints["link"].start
    conv0 = model.constraints["convexity"].start
    lens = np.array([c[1].shape[0] + 1 for c in new], dtype=np.int64)
    starts = np.zeros(len(new) + 1, dtype=np.int64)
    np.cumsum(lens, out=starts[1:])
    # link rows precede the convexity rows, so each column's row indices stay sorted
    rows = np.concatenate(
        [np.append(link0 + ent, conv0 + t) for t, ent, _ in new]
    )
    m = len(new)
    lp.add_columns(
        np.array([c[2] for c in new]), np.zeros(m), np.full(m, np.inf), starts, rows,
        np.ones(rows.shape[0]),
    )


def _as_ir_result(res: Solution, model: Any, n_initial: int, n_w: int) -> Solution:
    """Re-index an incremental master solution to ``model`` (``_master`` of the same columns).

    The incremental LP holds ``[alpha_0..alpha_{J0-1}, w, alpha_{J0}..]`` (added columns go
    last); the IR model holds all ``alpha`` then ``w``. Rows are identical, so duals carry over.
    """
    alpha, w = model.vars["alpha"], model.vars["w"]
    J = alpha.stop - alpha.start
    assert alpha.start == 0 and w.start == J and w.stop - w.start == n_w
    order = np.concatenate([
        np.arange(n_initial),
        n_initial + n_w + np.arange(J - n_initial),
        n_initial + np.arange(n_w),
    ])
    x = res.x[order]
    rc = res.reduced_costs[order] if res.reduced_costs is not None else None
    return dataclasses.replace(res, x=x, values=model.values(x), reduced_costs=rc)


def column_generation(
    data: EnsembleData,
    lam: float,
    backend: str = "highs",
    tol: float = 1e-10,
    max_iter: int = 10_000,
    time_limit: float | None = None,
    init: str = "individual",
    incremental: bool | None = None,
    merge: bool = True,
) -> dict[str, Any]:
    """Solve LP-IP3 by column generation, then recover an integral optimal pruning.

    Parameters
    ----------
    init : {"root", "individual"}
        Initial columns: the root-only pruning of each tree (spec), plus with ``"individual"``
        each tree's individual-pruning DP solution (λ_ind = Tλ), a cheap warm start.
    incremental : bool, optional
        Keep the master in one warm-started :class:`~odtkit.solvers.IncrementalLP` (default for
        ``backend="highs"``, the only backend that supports it); ``False`` rebuilds and
        re-solves it through :func:`odtkit.solvers.solve` every iteration.
    merge : bool
        Merge (feature, example) pairs with identical link structure, as
        ``build_ip3(merge=True)`` does (fewer master rows, same LP value); ``False`` keeps one
        link row per entry (the spec's LP4).

    Returns
    -------
    dict with ``leaves`` (per-tree masks), ``lp_value`` (converged master value = LP-IP3),
    ``status``, ``iterations``, ``n_columns``, ``trace`` (time, incumbent = master value,
    bound = Lagrangian bound), ``max_fractionality`` of the master's alpha, ``integral_by``
    (how integrality was obtained), ``result`` (last backend Solution), ``model`` (last master),
    ``master_time`` / ``pricing_time`` (seconds), ``simplex_iterations`` (incremental only),
    ``master_rows`` (link rows of the master).
    """
    from odtkit.pruning._solve import run

    t0 = time.perf_counter()
    N, T = data.n_samples, data.n_trees
    layout = _layout(data, lam, merge)
    # pricing sees one price per entry: its link row's price, 0 for entries without a row
    # (a merged pair's entries are priced through the class representative's rows)
    has_row = layout.row_of_entry >= 0
    entry_row = layout.row_of_entry[has_row]
    entry_price = np.zeros(data.n_entries)
    leaf_costs = [t.error.astype(np.float64) / (N * T) for t in data.trees]
    cols: list[tuple[int, np.ndarray, float]] = []
    keys: set[tuple[int, bytes]] = set()
    masks: list[np.ndarray] = []

    def add(t: int, z: np.ndarray) -> bool:
        key = (t, np.packbits(z).tobytes())
        if key in keys:
            return False
        keys.add(key)
        ent, cost = _column(data, layout, t, z)
        cols.append((t, ent, cost))
        masks.append(z.copy())
        return True

    for t, tree in enumerate(data.trees):
        root = np.zeros(tree.n_nodes, dtype=bool)
        root[0] = True
        add(t, root)
        if init == "individual":
            price = lam * data.costs[tree.use_feature] / N
            _, z = tree_dp(tree, leaf_costs[t], price)
            add(t, z)
        elif init != "root":
            raise ValueError(f"init must be 'root' or 'individual', got {init!r}")
    n_initial = len(cols)

    trace_rows = []
    status = "optimal"
    it = 0
    res = model = last_ok = None
    if incremental is None:
        incremental = backend == "highs"
    elif incremental and backend != "highs":
        raise ValueError(f"incremental=True needs backend='highs', got {backend!r}")
    lp: IncrementalLP | None = None
    n_in_lp = n_solved = 0  # columns in the incremental LP / in the last solved master
    master_time = pricing_time = 0.0
    simplex_iterations = 0
    while True:
        it += 1
        remaining = None
        if time_limit is not None:
            remaining = max(time_limit - (time.perf_counter() - t0), 1e-3)
        t1 = time.perf_counter()
        if incremental:
            if lp is None:
                model = _master(data, layout, cols, integral=False)
                lp = IncrementalLP(model, **HIGHS_TOLERANCES)
            else:
                _append_columns(lp, model, cols[n_in_lp:])
            n_in_lp = len(cols)
            res = lp.solve(time_limit=remaining)
            simplex_iterations += res.stats["iterations"]
        else:
            model = _master(data, layout, cols, integral=False)
            res = run(model, backend=backend, relax=True, lp_method="simplex", time_limit=remaining)
        master_time += time.perf_counter() - t1
        if res.status != "optimal" or res.duals is None:
            status = res.status if res.status != "optimal" else "error"
            if last_ok is not None:  # keep the last solved master (a valid upper bound)
                res = last_ok
            break
        last_ok = res
        n_solved = len(cols)
        t1 = time.perf_counter()
        link = model.constraints["link"]
        conv = model.constraints["convexity"]
        entry_price[has_row] = np.maximum(-res.duals[link.start + entry_row], 0.0)
        r = res.duals[conv.start : conv.stop]
        lagr = res.objective
        added = 0
        for t, tree in enumerate(data.trees):
            e0, e1 = data.entry_offset[t], data.entry_offset[t + 1]
            opt, z = tree_dp(tree, leaf_costs[t], entry_price[e0:e1])
            lagr += min(0.0, opt - r[t])
            if opt < r[t] - tol and add(t, z):
                added += 1
        pricing_time += time.perf_counter() - t1
        trace_rows.append((time.perf_counter() - t0, float(res.objective), float(lagr)))
        if added == 0:
            break
        if it >= max_iter:
            status = "iteration_limit"
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            status = "time_limit"
            break
    if incremental and res is not None and res.has_solution:
        # report the master as the IR model of the solved columns, in the IR's column order
        model = _master(data, layout, cols[:n_solved], integral=False)
        res = _as_ir_result(res, model, n_initial, layout.n_w)

    trace = pd.DataFrame(trace_rows, columns=["time", "incumbent", "bound"])
    out: dict[str, Any] = {
        "status": status,
        "iterations": it,
        "n_columns": len(cols),
        "trace": trace,
        "result": res,
        "model": model,
        "incremental": incremental,
        "master_time": master_time,
        "pricing_time": pricing_time,
        "simplex_iterations": simplex_iterations if incremental else None,
        "master_rows": layout.n_rows,
        "lp_value": float(res.objective) if res is not None and res.has_solution else np.nan,
    }
    if res is None or not res.has_solution:
        # no master solved within the limit: best of the initial integral prunings
        from odtkit.pruning._ensemble import objective_terms

        per_tree = [[m for (t2, _, _), m in zip(cols, masks, strict=True) if t2 == t]
                    for t in range(T)]
        cands = [[p[0] for p in per_tree], [p[-1] for p in per_tree]]
        vals = [float(objective_terms(data, c, lam)["objective"]) for c in cands]
        out.update(leaves=cands[int(np.argmin(vals))], max_fractionality=np.nan,
                   integral_by="initial_columns", lower_bound=-np.inf, lp_value=np.nan)
        return out
    out["lower_bound"] = float(trace["bound"].max()) if len(trace) else -np.inf
    alpha = res.values["alpha"]
    frac = float(np.max(np.minimum(alpha, 1 - alpha))) if alpha.size else 0.0
    out["max_fractionality"] = frac
    chosen = np.zeros(T, dtype=np.int64)
    if frac <= 1e-7:
        # columns priced after the last master solve (limit reached) are not in alpha
        for j in range(alpha.shape[0]):
            if alpha[j] > 0.5:
                chosen[cols[j][0]] = j
        out["integral_by"] = "master_lp"
    else:
        # ties: the LP optimum is a mix of integral optima; the restricted master with binary
        # alpha (few columns) picks one; it is optimal iff it attains the LP value
        mip_model = _master(data, layout, cols, integral=True)
        mres = run(mip_model, backend=backend)
        a = mres.values.get("alpha") if mres.has_solution else None
        # after convergence the binary master must attain the LP value to be optimal; after a
        # limit it is just the best integral combination of the columns found so far
        if a is None or (status == "optimal" and mres.objective > out["lp_value"] + 1e-9):
            out.update(leaves=None, integral_by="failed", mip_result=mres)
            return out
        for j, (t, _, _) in enumerate(cols):
            if a[j] > 0.5:
                chosen[t] = j
        out["integral_by"] = "master_mip"
        out["mip_result"] = mres
    out["leaves"] = [masks[j] for j in chosen]
    out["time"] = time.perf_counter() - t0
    return out

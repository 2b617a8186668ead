"""``prune``, ``individual_prune``, ``cost_error_path`` and ``solve_ip3``: the entry points.

Every answer is an :class:`odtkit.results.Result` whose ``model`` is the
:class:`~odtkit.pruning.PrunedEnsemble` (``None`` when there is none, e.g. an infeasible
model) and whose ``objective`` is that pruning's value for the stated problem by
:func:`~odtkit.pruning.objective_terms`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from odtkit._limits import Deadline, OutOfTime, charged
from odtkit._validation import check_lambda, check_positive_number
from odtkit._warnings import warn as _warn
from odtkit.pruning._budget import budget_prune, check_budget_method
from odtkit.pruning._colgen import column_generation
from odtkit.pruning._cut import cut_prune, example_weights
from odtkit.pruning._data import EnsembleData
from odtkit.pruning._ensemble import PrunedEnsemble, individual_objective, tree_dp, unpruned
from odtkit.pruning._extract import (
    checked_inputs,
    extract,
    extract_checked,
    root_only_data,
)
from odtkit.pruning._formulations import check_budget, check_problem
from odtkit.pruning._guard import (
    CUT_BYTES_PER_ENTRY,
    DATA_BYTES_PER_ENTRY,
    MODEL_BYTES_PER_ENTRY,
    Guard,
    Stopped,
)
from odtkit.pruning._path import CostErrorPath, exact_path
from odtkit.pruning._solve import solve_ip3
from odtkit.results import Result, Status, make_trace

__all__ = [
    "prune",
    "individual_prune",
    "cost_error_path",
    "tradeoff_grid",
    "solve_ip3",
    "METHODS",
    "BUDGET_METHODS",
]

#: ``prune(method=)`` for the λ problem (no ``budget``).
METHODS = ("cut", "lp", "mip", "colgen", "ip1")
#: ``prune(method=)`` with a ``budget``: the best pruning within it from the exact path's hull and
#: LP1 off the hull ("cut") or from the λ search by LPs and LP1 ("lp"); or only the hull pruning
#: within it (Corollary 4.3), from the exact path ("hull") or the λ search by LPs ("lambda").
BUDGET_METHODS = ("cut", "lp", "hull", "lambda")
#: the old (method, budget_method) pairs of a budget -> the one method that replaces them
_OLD_BUDGET_SPELLING = {
    ("cut", "exact"): "cut",
    ("lp", "exact"): "lp",
    ("cut", "lambda"): "hull",
    ("lp", "lambda"): "lambda",
}
_BUDGET_PARTS = {new: old for old, new in _OLD_BUDGET_SPELLING.items()}
#: the methods whose programs ``formulation=`` shapes, without / with a budget (the native cut,
#: the hull of the exact path, column generation and IP1 build no IP3 or LP1)
_FORMULATED = {False: ("lp", "mip"), True: ("cut", "lp", "lambda")}


def _data(ensemble: Any, X: Any, y: Any, costs: Any) -> EnsembleData:
    if isinstance(ensemble, EnsembleData):
        if not ensemble.complete:
            raise ValueError(
                "ensemble is the stand-in EnsembleData of a stopped prune (statistics at the "
                "roots only); extract the ensemble again with extract(ensemble, X, y)"
            )
        if costs is not None:
            raise ValueError("costs are fixed at extraction; pass them to extract(), not here")
        return ensemble
    if X is None or y is None:
        raise TypeError("prune needs the training data X and y the pruning is measured on")
    return extract(ensemble, X, y, costs)


def prune(
    ensemble: Any,
    X: Any = None,
    y: Any = None,
    *,
    costs: Any = None,
    lam: float | None = None,
    method: str | None = None,
    budget: float | None = None,
    budget_method: str | None = None,
    backend: str = "highs",
    time_limit: float | None = None,
    formulation: str | None = None,
    memory_limit_mb: float | None = None,
) -> Result:
    """Optimally prune a tree ensemble for error plus feature cost (NWS IP3).

    Minimises ``(1/(NT)) sum_t (training errors of pruned tree t)
    + lam * (1/N) sum_i (cost of the distinct features example i acquires across all trees)``
    over all valid prunings (keep the root; keep both children or none); with ``budget`` the
    error term subject to the average feature cost being at most ``budget``.

    Parameters
    ----------
    ensemble : fitted RandomForestClassifier / ExtraTreesClassifier / BaggingClassifier of trees,
        a list of fitted DecisionTreeClassifiers, or an :class:`EnsembleData` from :func:`extract`
        (then ``X``, ``y``, ``costs`` are taken from it).
    X, y : training data the objective is measured on (not the trees' bootstrap samples).
    costs : array-like (n_features,), optional
        Feature acquisition costs ``c_k >= 0`` (default 1).
    lam : float
        Weight λ >= 0 of the average feature cost. Required unless ``budget`` is given (then
        it must be omitted): ``lam=0.0`` ignores the costs. Scale: the error term is an
        average per-tree error *rate* (at most 1) and the cost term an average feature cost per
        example, so ``lam=0.01`` trades one unit of feature cost for 1 % of error. Above
        roughly (root-only error - unpruned error) / unpruned cost every tree is cut to its root
        (a warning says so); :func:`cost_error_path` lists every λ where the answer changes.
    method : str, optional
        How the problem is solved: one setting, whose values depend on whether ``budget`` is
        given. Without a budget (the λ problem, ``METHODS``): ``"cut"`` (the default): IP3 as one
        minimum s–t cut in the native core (docs/formulations-search-and-pruning.md §7.11),
        certified by its flow (``lower_bound``) and by re-scoring the pruning; ties go to the
        smaller pruning; no solver backend. ``"lp"``: LP relaxation of IP3 by simplex (integral
        vertex by Theorem 4.2, checked; MIP fallback otherwise). ``"mip"``: IP3 as an integer
        program. ``"colgen"``: Dantzig–Wolfe column generation with the tree-DP pricing.
        ``"ip1"``: the weak IP1 as a MIP (baseline).
        With a budget (``BUDGET_METHODS``): ``"cut"`` (the default): the best pruning within the
        budget. The lower convex hull of the cost/error trade-off comes from the exact cost–error
        path (:func:`cost_error_path`); a budget at a hull vertex is answered there, one strictly
        between two vertices goes to the budgeted LP1, and if its simplex vertex is fractional
        (docs/formulations-search-and-pruning.md §8.6) LP1 is solved as a MIP warm-started from
        the hull pruning within budget. ``"lp"``: the same answer with the hull from the λ search
        by LPs. ``"hull"``: only the best hull pruning within the budget, from the exact path
        (Corollary 4.3: exact for budgets at a hull vertex; its Lagrangian bound says how far off
        it may be elsewhere, status ``feasible``); ``"lambda"``: the same from the λ search by LPs
        (NWS's method).
    budget : float, optional
        Maximum average feature cost per example (>= 0): the error term is minimised subject to
        it; see ``method``.
    budget_method : {"exact", "lambda"}, optional
        Deprecated (FutureWarning; removed in odtkit 0.3.0): with a budget, ``method`` names how
        it is met (``method="cut"`` or ``"lp"`` with ``budget_method="exact"`` are ``"cut"`` and
        ``"lp"``; with ``"lambda"`` they are ``"hull"`` and ``"lambda"``); without one it never
        had an effect.
    backend : str
        Solver backend of the methods that solve a program (``odtkit.solvers``); the native cut
        and the exact path's hull use none.
    time_limit : float, optional
        Seconds for the whole call, from its start: extraction, network or model build and
        solve share one deadline (checked before each tree and between the vectorized steps;
        HiGHS's MIP presolve may overrun it by what it takes). At the limit the best pruning
        so far comes back with status ``time_limit``: a cut stopped by it (or by Ctrl-C)
        returns the pruning its flow so far defines, with a valid bound; a call stopped before
        any solver answered returns every tree cut to its root (always feasible, cost 0), with
        the unpruned trees' training errors as lower bound. ``message`` says which.
    memory_limit_mb : float, optional
        Memory budget of the whole call; None: the searches' default (75 % of what the process
        can still get, or ``$ODTKIT_MEMORY_LIMIT_MB``). The extraction charges its compact
        data and, for the programs and the exact path, projects their peak from the number of
        feature-use entries, stopping before the budget with status ``memory_limit`` and a
        trivially feasible pruning (every tree cut to its root, or the unpruned ensemble when
        the data was extracted and it is better). The cut gets what the data leaves: it
        reduces its network first and stops before building one that would not fit, with
        status ``memory_limit``, the pruning of the splits it has proven optimal to keep and
        a valid bound. A solver's own search memory beyond its copy of the program is not
        counted.
        Ctrl-C anywhere in the call returns status ``interrupted`` the same way, never a
        ``KeyboardInterrupt``.
    formulation : {"compact", "full"}, optional
        The form of IP3 (and of LP1 with a budget), for the methods that build it: ``"lp"`` and
        ``"mip"``; with a budget ``"cut"``, ``"lp"`` and ``"lambda"``. ``"full"``: IP3 exactly as
        printed (one ``w^{(t)}_{k,i}`` and feature row per tree, feature, example).
        ``"compact"`` (the default): the equivalent ``IP3(aggregate=True, merge=True)`` — same
        optimum, integral vertices, far fewer rows and nonzeros. Given with another method it has
        no effect and warns (FutureWarning); from odtkit 0.3.0 that is an error.

    Returns
    -------
    Result
        ``model``: the :class:`PrunedEnsemble` (None when there is none); ``objective``: its
        value for the stated problem (``model.objective``, or its error term with a budget);
        ``lower_bound``, ``status``, ``trace``, ``solution``; ``stats`` with
        ``max_fractionality``, ``fallback`` (why an LP was re-solved as a MIP), the times
        (``extract_time``, ``build_time``, ``lp_time``, ``mip_time``), the λ-search steps of a
        budget and the Model IR in ``model_ir``.
    """
    lam, budget = check_problem(lam, budget)
    if budget is not None:
        budget = check_budget(budget, allow_negative=False)
    time_limit = check_positive_number(time_limit, "time_limit")
    memory_limit_mb = check_positive_number(memory_limit_mb, "memory_limit_mb")
    method = _method(method, budget, budget_method)
    aggregate = _formulation(formulation, method, budget) == "compact"
    # below, a budget's method is (where its hull comes from: "cut" the path, "lp" the λ search
    # by LPs; what is returned: "exact" the best pruning within budget, "lambda" the hull's)
    method, budget_method = (method, "exact") if budget is None else _BUDGET_PARTS[method]
    guard = Guard(time_limit, memory_limit_mb)
    if method == "cut" and budget is None:
        # compact data only: the native cut budgets its (reduced) network itself
        guard.per_entry = guard.held_per_entry = 0.0
    else:  # a budget's "cut" is the path (its network, and LP1 the entry lists)
        extra = CUT_BYTES_PER_ENTRY if method == "cut" else MODEL_BYTES_PER_ENTRY
        guard.per_entry = DATA_BYTES_PER_ENTRY + extra
    t0 = guard.deadline.start
    state: dict[str, Any] = {}
    try:
        with charged(guard.deadline):
            data = _guarded_data(ensemble, X, y, costs, guard, state)
            state["extract_time"] = time.perf_counter() - t0
            guard.check_time("the extraction")
            guard.phase = "the solve" if method == "cut" else "the model build and solve"
            result = _dispatch(data, lam, budget, method, budget_method, backend, aggregate, guard)
    except (Stopped, OutOfTime, KeyboardInterrupt, MemoryError) as exc:
        result = _stopped(exc, ensemble, X, y, costs, state, guard, lam, budget, method, backend)
    else:
        if result.model is None and result.status in _LIMITS:
            result = _trivial(
                data,
                lam,
                budget,
                result.status,
                result.message or f"status {result.status}",
                _error_bound(data),
                method,
                backend,
                guard,
                solver_result=result,
            )
        elif budget is None and lam is not None and lam > 0 and result.status == Status.OPTIMAL:
            # only a certified answer says what lam does: a limit's fallback (all roots when a
            # stopped cut had forced nothing yet) says nothing about the optimum
            _warn_if_roots_only(result.model, lam)
    return result.replace(
        time=time.perf_counter() - t0,
        stats={**result.stats, "extract_time": state.get("extract_time", np.nan)},
    )


def _method(method: Any, budget: float | None, budget_method: Any) -> str:
    """``prune``'s ``method`` checked against whether a budget is given, the deprecated
    ``budget_method`` folded in (a FutureWarning naming the method that replaces it)."""
    if method is None:
        method = "cut"
    if budget_method is not None:
        check_budget_method(budget_method)
        if budget is None:
            _warn(
                "budget_method is deprecated and will be removed in odtkit 0.3.0; without a "
                "budget it has no effect: drop it",
                FutureWarning,
            )
        elif (method, budget_method) in _OLD_BUDGET_SPELLING:
            new = _OLD_BUDGET_SPELLING[method, budget_method]
            _warn(
                f"budget_method is deprecated and will be removed in odtkit 0.3.0: with a "
                f"budget, method names how it is met; method={method!r} with "
                f"budget_method={budget_method!r} is method={new!r} (the same answer)",
                FutureWarning,
            )
            method = new
    if budget is not None and method not in BUDGET_METHODS:
        if method in METHODS:
            raise ValueError(
                f"method={method!r} solves the λ problem; with a budget use one of {BUDGET_METHODS}"
            )
        raise ValueError(f"with a budget, method must be one of {BUDGET_METHODS}, got {method!r}")
    if budget is None and method not in METHODS:
        if method in BUDGET_METHODS:
            raise ValueError(
                f"method={method!r} meets a budget: give budget=, or use one of {METHODS} for "
                "the λ problem"
            )
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return str(method)


def _formulation(formulation: Any, method: str, budget: float | None) -> str:
    """``formulation`` checked (default ``"compact"``); a FutureWarning when ``method`` builds
    no program it could shape."""
    if formulation is None:
        return "compact"
    if formulation not in ("compact", "full"):
        raise ValueError(f"formulation must be 'compact' or 'full', got {formulation!r}")
    if method not in _FORMULATED[budget is not None]:
        what = f"method={method!r}" + (" with a budget" if budget is not None else "")
        _warn(
            f"formulation has no effect with {what} (it shapes IP3 and LP1, built by methods "
            f"{_FORMULATED[False]} and, with a budget, {_FORMULATED[True]}); passing it there "
            "is deprecated and will be an error in odtkit 0.3.0",
            FutureWarning,
        )
    return str(formulation)


#: statuses of a call stopped early, which must still come with a pruning
_LIMITS = (Status.TIME_LIMIT, Status.MEMORY_LIMIT, Status.INTERRUPTED, Status.NODE_LIMIT)


def _guarded_data(
    ensemble: Any, X: Any, y: Any, costs: Any, guard: Guard, state: dict[str, Any]
) -> EnsembleData:
    """The extraction under ``guard`` (or a given EnsembleData, charged for the method)."""
    if isinstance(ensemble, EnsembleData):
        data = _data(ensemble, X, y, costs)
        state["data"] = data
        N, T = data.n_samples, data.n_trees
        guard.charge_data(N, data.n_features, T, data.n_nodes, data.n_classes)
        guard.need(guard.peak(data.n_entries), f"the pruning of {T} trees on {N} examples")
        return data
    if X is None or y is None:
        raise TypeError("prune needs the training data X and y the pruning is measured on")
    state["inputs"] = checked_inputs(ensemble, X, y, costs)
    guard.phase = "the extraction"
    data = extract_checked(state["inputs"], guard)
    state["data"] = data
    return data


def _dispatch(
    data: EnsembleData,
    lam: float | None,
    budget: float | None,
    method: str,
    budget_method: str,
    backend: str,
    aggregate: bool,
    guard: Guard,
) -> Result:
    """The solve of :func:`prune` once the data is there, within ``guard``'s limits."""
    if budget is not None:
        return budget_prune(
            data,
            budget=budget,
            budget_method=budget_method,
            backend=backend,
            time_limit=guard.deadline.limit_left(),
            aggregate=aggregate,
            search="path" if method == "cut" else "lp",
        )
    assert lam is not None  # check_problem: without a budget, lam is given
    if method == "cut":
        guard.phase = "the network build"
        t_build = time.perf_counter()
        weight = example_weights(data)
        t_build = time.perf_counter() - t_build
        guard.check_time("the network build")
        guard.phase = "the max-flow"
        result = cut_prune(
            data,
            lam=lam,
            time_limit=guard.deadline.limit_left(),
            memory_limit_mb=guard.left_mb(data.n_entries),
            weight=weight,
        )
        return result.replace(stats={**result.stats, "build_time": t_build})
    if method == "colgen":
        return _colgen(data, lam, backend, guard.deadline)
    return solve_ip3(
        data,
        lam=lam,
        method=method,
        backend=backend,
        time_limit=guard.deadline.limit_left(),
        aggregate=aggregate,
    )


def _error_bound(data: EnsembleData) -> int:
    """Training errors of the unpruned trees: no pruning has fewer (a split never adds an
    error under majority labels), so ``/ (N T)`` bounds every objective from below."""
    return int(sum(int(t.error[t.is_leaf].sum()) for t in data.trees))


def _stopped(
    exc: BaseException,
    ensemble: Any,
    X: Any,
    y: Any,
    costs: Any,
    state: dict[str, Any],
    guard: Guard,
    lam: float | None,
    budget: float | None,
    method: str,
    backend: str,
) -> Result:
    """The answer of a call a limit or Ctrl-C stopped before its solver returned."""
    if isinstance(exc, Stopped):
        status, message = exc.status, exc.message
    elif isinstance(exc, OutOfTime):
        status, message = Status.TIME_LIMIT, f"the time limit ran out during {guard.phase}"
    elif isinstance(exc, KeyboardInterrupt):
        status, message = Status.INTERRUPTED, f"Ctrl-C during {guard.phase}"
    else:
        status = Status.MEMORY_LIMIT
        message = f"an allocation failed during {guard.phase} (out of memory)"
    data = state.get("data")
    if data is not None:
        return _trivial(
            data, lam, budget, status, message, _error_bound(data), method, backend, guard
        )
    inputs = state.get("inputs")
    if inputs is None:  # stopped while validating: validate again (bad input still raises)
        inputs = checked_inputs(ensemble, X, y, costs)
    stand_in = root_only_data(
        inputs["ests"],
        inputs["fmaps"],
        inputs["classes"],
        inputs["n_features"],
        inputs["codes"],
        inputs["costs"],
        inputs["schema"],
    )
    # the trees extracted before the stop bound their own errors; the others by 0
    errors = int(sum(inputs.get("leaf_errors", ())))
    return _trivial(stand_in, lam, budget, status, message, errors, method, backend, guard)


def _trivial(
    data: EnsembleData,
    lam: float | None,
    budget: float | None,
    status: Status,
    message: str,
    errors: int,
    method: str,
    backend: str,
    guard: Guard,
    solver_result: Result | None = None,
) -> Result:
    """A stopped call's answer: the better trivially feasible pruning -- every tree cut to its
    root (cost 0: within every budget), or, after a memory stop with the data extracted, the
    unpruned ensemble when it is better and within the budget -- with the lower bound
    ``errors / (N T)`` (or the solver's, if higher)."""
    weight = 0.0 if lam is None else lam
    roots = [np.arange(t.n_nodes) == 0 for t in data.trees]
    candidates = [("every tree cut to its root", PrunedEnsemble(data, roots, weight))]
    if status == Status.MEMORY_LIMIT and data.complete:
        whole = PrunedEnsemble(data, unpruned(data), weight)
        if budget is None or whole.cost_term <= budget + 1e-12:
            candidates.append(("the unpruned ensemble", whole))
    what, pruned = min(candidates, key=lambda c: c[1].objective)
    objective = pruned.objective
    bound = errors / (data.n_samples * data.n_trees)
    if solver_result is not None and np.isfinite(solver_result.lower_bound):
        bound = max(bound, float(solver_result.lower_bound))
    bound = min(bound, objective)
    elapsed = guard.deadline.elapsed()
    stats = dict(solver_result.stats) if solver_result is not None else {}
    stats["fallback"] = what
    return Result(
        model=pruned,
        objective=objective,
        lower_bound=bound,
        status=status,
        time=elapsed,
        method=method if solver_result is None else solver_result.method,
        backend=("native" if method == "cut" else backend),
        trace=make_trace([(elapsed, objective, bound)]),
        stats=stats,
        solution=None if solver_result is None else solver_result.solution,
        message=(
            f"{message}; returned {what}, a trivially feasible pruning (objective "
            f"{objective:.6g}); lower bound {bound:.6g} from the training errors of the trees "
            "extracted (unpruned)"
        ),
    )


def _warn_if_roots_only(pruned: PrunedEnsemble | None, lam: float) -> None:
    """Warn when ``lam`` cut every tree to its root: the answer is then one constant vote.
    Called for certified (``optimal``) answers only.

    The two terms are on different scales: the error term is an average per-tree error rate
    (at most 1), the cost term an average feature cost per example (the unpruned ensemble's can
    be many units). Keeping all splits stops paying once ``lam`` exceeds (root-only error -
    unpruned error) / unpruned cost: the warning names that scale.
    """
    if pruned is None or pruned.n_leaves != pruned.n_trees:
        return
    full = PrunedEnsemble(pruned.data, unpruned(pruned.data), lam)
    if full.n_leaves == full.n_trees or full.cost_term <= 0:
        return
    scale = (pruned.error_term - full.error_term) / full.cost_term
    _warn(
        f"lam={lam:g} prunes every tree to its root (a constant prediction): one unit of "
        f"average feature cost per example (the unpruned ensemble's is {full.cost_term:.3g}) is "
        f"worth lam={lam:g} of average per-tree error rate. Informative values of lam lie below "
        f"about {scale:.3g}; cost_error_path(...) gives every breakpoint exactly.",
        UserWarning,
    )


def _colgen(data: EnsembleData, lam: float, backend: str, deadline: Deadline) -> Result:
    cg = column_generation(data, lam=lam, backend=backend, time_limit=deadline.limit_left())
    if cg.stats["integral_by"] != "failed":
        return cg
    # no integral combination of the generated columns attains the LP value: the compact LP
    # is integral at a vertex (Theorem 4.2), so solve it instead
    left = deadline.limit_left()
    result = solve_ip3(data, lam=lam, method="lp", backend=backend, time_limit=left)
    stats = {
        **result.stats,
        "colgen": cg,
        "fallback": "compact LP after fractional column generation",
    }
    return result.replace(trace=cg.trace, stats=stats)


def individual_prune(
    ensemble: Any, X: Any = None, y: Any = None, *, costs: Any = None, lam: float
) -> Result:
    """Individual-pruning baseline (NWS "ind.pru."): each tree pruned alone by IP2.

    Each tree ``t`` minimises ``(1/N) sum e_h z_h + lam_ind (1/N) sum_i sum_{k used in t} c_k``
    with ``lam_ind = T lam`` by the exact tree DP of §7.9 (ties -> prune), ignoring that trees
    share acquired features.

    Returns
    -------
    Result
        ``objective`` is the problem the DP solves (``IP2()``'s: features paid per tree,
        averaged over trees), certified optimal; ``model`` the PrunedEnsemble, whose own
        ``objective`` is accounted like every other pruning (features paid once across trees)
        and so is directly comparable to :func:`prune`'s (also in ``stats["ensemble_objective"]``).
    """
    lam = check_lambda(lam)
    t0 = time.perf_counter()
    data = _data(ensemble, X, y, costs)
    N, T = data.n_samples, data.n_trees
    leaves, total = [], 0.0
    for tree in data.trees:
        value, z = tree_dp(tree, tree.error / N, (T * lam) * data.costs[tree.use_feature] / N)
        leaves.append(z)
        total += value
    pruned = PrunedEnsemble(data, leaves, lam)
    objective = individual_objective(data, leaves, lam)
    return Result(
        model=pruned,
        objective=objective,
        lower_bound=min(objective, total / T),  # the DP is exact: its value bounds the optimum
        status=Status.OPTIMAL,
        time=time.perf_counter() - t0,
        method="individual",
        backend="numpy",
        stats={"ensemble_objective": pruned.objective, "lam_ind": T * lam, "dp_value": total / T},
    )


def tradeoff_grid(
    ensemble: Any,
    X: Any = None,
    y: Any = None,
    *,
    lams: Any = (0.0,),
    costs: Any = None,
    X_test: Any = None,
    y_test: Any = None,
    methods: tuple[str, ...] = ("ensemble", "individual"),
    solver_method: str = "cut",
    backend: str = "highs",
) -> pd.DataFrame:
    """Trade-off on a grid of λ: one row per (λ, method), training terms and test metrics.

    For the ensemble alone, :func:`cost_error_path` gives every λ at which the optimum changes
    exactly; this grid compares methods (e.g. with individual pruning) at chosen λ.

    ``methods`` among ``"ensemble"`` (IP3 via ``solver_method``), ``"individual"`` (per-tree DP)
    and ``"none"`` (unpruned). Extraction is done once and shared. The objective columns are the
    pruned ensembles' (:meth:`PrunedEnsemble.summary`: features paid once), so comparable across
    methods; ``status`` is the solver's.
    """
    data = _data(ensemble, X, y, costs)
    rows = []
    for lam in np.atleast_1d(np.asarray(lams, dtype=float)):
        for m in methods:
            if m == "ensemble":
                result = prune(data, lam=float(lam), method=solver_method, backend=backend)
                pruned, status = result.model, result.status.value
            elif m == "individual":
                result = individual_prune(data, lam=float(lam))
                pruned, status = result.model, result.status.value
            elif m == "none":
                pruned, status = PrunedEnsemble(data, unpruned(data), float(lam)), "none"
            else:
                raise ValueError(f"unknown method {m!r}; use 'ensemble', 'individual' or 'none'")
            row = {**pruned.summary(), "lam": float(lam), "method": m, "status": status}
            if X_test is not None:
                for k, v in pruned.evaluate(X_test, y_test).items():
                    row[f"test_{k}"] = v
            rows.append(row)
    return pd.DataFrame(rows)


def cost_error_path(
    ensemble: Any,
    X: Any = None,
    y: Any = None,
    *,
    costs: Any = None,
    time_limit: float | None = None,
    progress: bool | None = None,
) -> CostErrorPath:
    """The exact cost–error path of ensemble pruning: every λ where the optimal pruning changes.

    Solves IP3 for all λ >= 0 at once by parametric minimum cuts (Eisner–Severance line intersection
    on nested cut windows, docs/formulations-search-and-pruning.md §7.11); its cost is a few cuts of
    the whole network.

    Parameters
    ----------
    ensemble, X, y, costs
        As for :func:`prune` (or an :class:`EnsembleData`).
    time_limit : float, optional
        Seconds for the whole path. At the limit, or on Ctrl-C, the path so far comes back
        with ``status`` ``time_limit`` / ``interrupted`` and the λ intervals where vertices may
        be missing in ``unproven`` (:class:`CostErrorPath`); ``RuntimeError`` only when not even
        the two end cuts finished.
    progress : bool, optional
        A live line on stderr (cuts so far) once the path has taken 2 s; None (default):
        shown when stderr is a terminal.

    Returns
    -------
    CostErrorPath
        The lower convex hull of (cost term, error term): per vertex the λ interval where it is
        optimal, its error and cost terms and its pruning (:meth:`CostErrorPath.pruning`,
        :meth:`~CostErrorPath.at`, :meth:`~CostErrorPath.to_frame` with optional test data,
        :meth:`~CostErrorPath.vertex_within` a budget); plot with
        :func:`odtkit.plot.plot_cost_error_path`.
    """
    time_limit = check_positive_number(time_limit, "time_limit")
    deadline = Deadline(time_limit)  # the extraction is charged too
    data = _data(ensemble, X, y, costs)
    return exact_path(data, time_limit=deadline.limit_left(), progress=progress)

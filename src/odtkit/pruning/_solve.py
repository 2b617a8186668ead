"""How every pruning model is solved: solver options, the integral-LP check and verified MIPs.

Every answer goes through :func:`odtkit.pipeline.verify_solution`: the decoded pruning is
re-scored by the formulation's ``evaluate`` (:func:`~odtkit.pruning.objective_terms`) and a
solver value or bound that disagrees with it turns the status into ``error``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from odtkit.formulations._base import Formulation
from odtkit.model import Model
from odtkit.pipeline import solve_model
from odtkit.results import Result

#: HiGHS's default dual feasibility tolerance (1e-7) treats reduced costs below it as zero; the
#: feature-cost coefficients ``lam c_k / N`` can be far smaller than that (tiny λ, large N), which
#: made the LP stop ~1e-8 above the optimum. 1e-10 keeps objectives exact to 1e-9
#: (docs/formulations-search-and-pruning.md §0.4).
HIGHS_TOLERANCES = {"dual_feasibility_tolerance": 1e-10}

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
    formulation: Formulation,
    model: Model,
    data: Any,
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
    from odtkit.solvers import backend_capabilities

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

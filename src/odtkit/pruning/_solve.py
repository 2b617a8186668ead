"""One place that calls the solver backend for every pruning model."""

from __future__ import annotations

from typing import Any

#: HiGHS's default dual feasibility tolerance (1e-7) treats reduced costs below it as zero; the
#: feature-cost coefficients ``lam c_k / N`` can be far smaller than that (tiny λ, large N), which
#: made the LP stop ~1e-8 above the optimum. 1e-10 keeps objectives exact to 1e-9 (spec §0.4).
HIGHS_TOLERANCES = {"dual_feasibility_tolerance": 1e-10}


def run(model: Any, backend: str = "highs", **kwargs: Any) -> Any:
    """``odtkit.solvers.solve`` with the tight HiGHS tolerances added for the highs backend."""
    from odtkit.solvers import solve

    if backend == "highs":
        kwargs = {**HIGHS_TOLERANCES, **kwargs}
    return solve(model, backend=backend, **kwargs)

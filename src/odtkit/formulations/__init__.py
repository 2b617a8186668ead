"""MIP formulations of optimal decision trees, built as backend-neutral :class:`odtkit.model.Model`.

Each formulation is a stateless :class:`Formulation`: the constructor takes modelling choices,
``build(dataset, *, max_depth, lam) -> Model`` the problem, and the model's ``meta`` carries what
``decode(model, solution) -> Tree``, ``start(model, tree) -> ndarray`` (a complete, feasible MIP
start), ``evaluate(model, tree, dataset)`` and ``lower_bound(model, solution)`` need. Solve one
with :func:`odtkit.solve_formulation`; see FORMULATIONS-TREES.md for the math.

* :class:`BinOCT` — Verwer & Zhang, binary specialization: minimum errors at depth D.
* :class:`RBinOCT` — OSDT Appendix J, with the null split by default (optimum = OPT(D, λ)).
* :class:`FlowOCT` — Aghaei et al., regularized in OSDT units, leaves at any depth <= D.
"""

from odtkit.formulations._base import (
    DECODE_NOT_WORSE,
    EXACT,
    LP_INTEGRAL,
    PROPERTIES,
    VALID_BOUND,
    Formulation,
)
from odtkit.formulations.binoct import BinOCT, RBinOCT
from odtkit.formulations.flowoct import FlowOCT

__all__ = [
    "BinOCT",
    "DECODE_NOT_WORSE",
    "EXACT",
    "FlowOCT",
    "Formulation",
    "LP_INTEGRAL",
    "PROPERTIES",
    "RBinOCT",
    "VALID_BOUND",
]

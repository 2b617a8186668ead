"""MIP formulations of optimal decision trees, built as backend-neutral :class:`odtkit.model.Model`.

Each formulation is a stateless :class:`Formulation`: the constructor takes modelling choices,
``build(dataset, TreeProblem(max_depth, lam))`` (or ``build(dataset, max_depth=, lam=)``) the
problem, and the model's ``meta`` (a :class:`TreeMeta`, extended per formulation:
``Model[BinOCTMeta]`` ...) carries what ``decode(model, solution) -> Tree``,
``start(model, tree) -> ndarray`` (a complete, feasible MIP start), ``evaluate(model, tree,
dataset)`` and ``lower_bound(model, solution)`` need. Solve one
with :func:`odtkit.solve_formulation`; see docs/formulations-trees.md for the math
and docs/references.md for the papers.

* :class:`BinOCT` — Verwer & Zhang, binary specialization: minimum errors at depth D.
* :class:`RBinOCT` — OSDT Appendix J, with the null split by default (optimum = OPT(D, λ)).
* :class:`FlowOCT` — Aghaei et al., regularized in OSDT units, leaves at any depth <= D.
* :class:`PathOCT` — trees as nested choices along feature paths: integral LP relaxation,
  size ~ (2p)^D (shallow trees).

``build(..., fairness=Fairness(...))`` adds a fairness constraint to each tree formulation
(:mod:`odtkit.formulations.fairness`).

The ensemble-pruning formulations (IP0-IP3, LP1, the column-generation master) follow the same
:class:`Formulation` protocol but live with the rest of pruning: ``odtkit.pruning.IP3`` ...
(the old paths ``odtkit.formulations.pruning`` and ``odtkit.formulations.network`` still import,
with a FutureWarning).
"""

from odtkit.formulations._base import (
    DECODE_NOT_WORSE,
    EXACT,
    LP_INTEGRAL,
    PROPERTIES,
    VALID_BOUND,
    Formulation,
    FormulationMeta,
    Property,
)
from odtkit.formulations._common import TreeMeta, TreeProblem
from odtkit.formulations.binoct import BinOCT, BinOCTMeta, RBinOCT
from odtkit.formulations.flowoct import FlowOCT, FlowOCTMeta
from odtkit.formulations.paths import PathOCT, PathOCTMeta

__all__ = [
    "BinOCT",
    "BinOCTMeta",
    "DECODE_NOT_WORSE",
    "EXACT",
    "FlowOCT",
    "FlowOCTMeta",
    "Formulation",
    "FormulationMeta",
    "LP_INTEGRAL",
    "PROPERTIES",
    "PathOCT",
    "PathOCTMeta",
    "Property",
    "RBinOCT",
    "TreeMeta",
    "TreeProblem",
    "VALID_BOUND",
]

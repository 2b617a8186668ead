"""Optimal ensemble pruning with feature costs (Nan, Wang, Saligrama 2016).

The mathematics, with the corrections to the printed statements:
docs/formulations-search-and-pruning.md §7–9.

>>> from odtkit.pruning import prune, worked_example
>>> trees, X, y, costs = worked_example()
>>> result = prune(trees, X, y, costs=costs, lam=0.1)
>>> result.status.value, round(result.objective, 12), result.model.n_leaves
('optimal', 0.4, 6)

* :func:`prune` — IP3 as one minimum cut in the native core (default), by its integral LP
  relaxation (simplex), as a MIP, or by column generation; budgets via the exact cost–error
  path and the budgeted LP1. Answers are :class:`odtkit.results.Result` objects whose
  ``model`` is the :class:`PrunedEnsemble`.
* :func:`cost_error_path` — every λ where the optimal pruning changes (:class:`CostErrorPath`);
  :func:`tradeoff_grid` — methods side by side on a λ grid; :func:`individual_prune` — the
  per-tree baseline; :func:`column_generation`, :func:`lambda_search`, :func:`budget_prune` —
  the algorithms.
* :class:`PrunedEnsemble` — predict / predict_proba / feature_cost / error / to_sklearn;
  :func:`objective_terms` — the one accounting every answer is checked with.
* Formulations (:mod:`odtkit.formulations.pruning`): :class:`IP0`, :class:`IP1`,
  :class:`IP2`, :class:`IP3`, :class:`LP1`, :class:`ColgenMaster`;
  :func:`certify_network_matrix` — Lemma 4.1 certificate on a built model
  (:mod:`odtkit.formulations.network`).
"""

from odtkit.formulations.network import (
    NetworkCertificate,
    certify_network_matrix,
    is_totally_unimodular,
)
from odtkit.formulations.pruning import IP0, IP1, IP2, IP3, LP1, ColgenMaster
from odtkit.pruning._api import (
    cost_error_path,
    individual_prune,
    prune,
    solve_ip3,
    tradeoff_grid,
)
from odtkit.pruning._budget import budget_prune, lambda_search
from odtkit.pruning._colgen import column_generation
from odtkit.pruning._ensemble import (
    PrunedEnsemble,
    brute_force_prune,
    individual_objective,
    objective_terms,
    tree_dp,
)
from odtkit.pruning._example import worked_example
from odtkit.pruning._extract import EnsembleData, TreeData, check_ensemble, extract
from odtkit.pruning._path import CostErrorPath

__all__ = [
    "ColgenMaster",
    "CostErrorPath",
    "EnsembleData",
    "IP0",
    "IP1",
    "IP2",
    "IP3",
    "LP1",
    "NetworkCertificate",
    "PrunedEnsemble",
    "TreeData",
    "brute_force_prune",
    "budget_prune",
    "certify_network_matrix",
    "check_ensemble",
    "column_generation",
    "cost_error_path",
    "extract",
    "individual_objective",
    "individual_prune",
    "is_totally_unimodular",
    "lambda_search",
    "objective_terms",
    "prune",
    "solve_ip3",
    "tradeoff_grid",
    "tree_dp",
    "worked_example",
]

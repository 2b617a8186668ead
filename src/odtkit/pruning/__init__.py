"""Optimal ensemble pruning with feature costs (Nan, Wang, Saligrama 2016).

The mathematics, with the corrections to the printed statements:
docs/formulations-search-and-pruning.md §7–9.

>>> from odtkit.pruning import prune, worked_example
>>> trees, X, y, costs = worked_example()
>>> result = prune(trees, X, y, costs=costs, lam=0.1)
>>> result.status.value, round(result.objective, 12), result.model.n_leaves
('optimal', 0.4, 6)

* :func:`prune` — IP3 by its integral LP relaxation (simplex), as a MIP, or by column
  generation; budgets via the λ search and the budgeted LP1. Answers are
  :class:`odtkit.results.Result` objects whose ``model`` is the :class:`PrunedEnsemble`.
* :func:`individual_prune` — the per-tree baseline; :func:`cost_error_path` — trade-off curves;
  :func:`column_generation`, :func:`lambda_search`, :func:`budget_prune` — the algorithms.
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
from odtkit.pruning._api import cost_error_path, individual_prune, prune, solve_ip3
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
from odtkit.pruning._extract import EnsembleData, TreeData, extract

__all__ = [
    "ColgenMaster",
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
    "tree_dp",
    "worked_example",
]

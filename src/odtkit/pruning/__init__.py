"""Optimal ensemble pruning with feature costs (Nan, Wang, Saligrama 2016; spec §7–9).

>>> from odtkit.pruning import prune, worked_example
>>> trees, X, y, costs = worked_example()
>>> round(prune(trees, X, y, costs=costs, lam=0.1).objective, 12)
0.4

* :func:`prune` — IP3 by its integral LP relaxation (HiGHS simplex), as a MIP, or by column
  generation; budgets via the λ search and the budgeted LP1.
* :func:`individual_prune` — the per-tree baseline; :func:`cost_error_path` — trade-off curves.
* :class:`PrunedEnsemble` — predict / predict_proba / feature_cost / error / to_sklearn.
* :func:`certify_network_matrix` — Lemma 4.1 certificate on a built IP3 model.
* Models: :mod:`odtkit.formulations.pruning` (IP0–IP3 as Model IR).
"""

from odtkit.formulations.network import certify_network_matrix
from odtkit.pruning._api import cost_error_path, individual_prune, prune
from odtkit.pruning._budget import lambda_search
from odtkit.pruning._ensemble import PrunedEnsemble, brute_force_prune, tree_dp
from odtkit.pruning._example import worked_example
from odtkit.pruning._extract import EnsembleData, TreeData, extract

__all__ = [
    "EnsembleData",
    "PrunedEnsemble",
    "TreeData",
    "brute_force_prune",
    "certify_network_matrix",
    "cost_error_path",
    "extract",
    "individual_prune",
    "lambda_search",
    "prune",
    "tree_dp",
    "worked_example",
]

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
* Formulations, on the :class:`odtkit.formulations.Formulation` protocol (problem
  :class:`PruningProblem`, meta :class:`PruningMeta`): :class:`IP0`, :class:`IP1`,
  :class:`IP2`, :class:`IP3` (meta :class:`IP3Meta`), :class:`LP1` and the column-generation
  :class:`ColgenMaster` (meta :class:`MasterMeta`, columns :class:`MasterColumn`);
  :func:`certify_network_matrix` — the Lemma 4.1 certificate on a built model.

Everything pruning needs lives in this package: the data (``_data``, built by ``_extract``),
the one accounting (``_objective``), the formulations (``_formulations``), their certificate
(``_network``), the native cut and path (``_cut``, ``_path``, on the extension
:mod:`odtkit._native` that the tree search shares) and the API. It imports no tree search
(:mod:`odtkit.core`), and the search imports nothing from here. Each name has one public
path: ``odtkit.pruning.<name>``.
"""

from odtkit.pruning._api import (
    cost_error_path,
    individual_prune,
    prune,
    solve_ip3,
    tradeoff_grid,
)
from odtkit.pruning._budget import budget_prune, lambda_search
from odtkit.pruning._colgen import column_generation
from odtkit.pruning._data import EnsembleData, TreeData
from odtkit.pruning._ensemble import (
    PrunedEnsemble,
    brute_force_prune,
    individual_objective,
    objective_terms,
    tree_dp,
)
from odtkit.pruning._example import worked_example
from odtkit.pruning._extract import check_ensemble, extract
from odtkit.pruning._formulations import (
    IP0,
    IP1,
    IP2,
    IP3,
    LP1,
    ColgenMaster,
    IP3Meta,
    MasterColumn,
    MasterMeta,
    PruningMeta,
    PruningProblem,
)
from odtkit.pruning._network import (
    NetworkCertificate,
    certify_network_matrix,
    is_totally_unimodular,
)
from odtkit.pruning._path import CostErrorPath

__all__ = [
    "ColgenMaster",
    "CostErrorPath",
    "EnsembleData",
    "IP0",
    "IP1",
    "IP2",
    "IP3",
    "IP3Meta",
    "LP1",
    "MasterColumn",
    "MasterMeta",
    "NetworkCertificate",
    "PrunedEnsemble",
    "PruningMeta",
    "PruningProblem",
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

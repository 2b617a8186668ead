"""odtkit: provably optimal interpretable models, by MIP and by native search, compared.

The public API is re-exported here; see the README for the quickstart.
"""

from typing import TYPE_CHECKING, Any

from odtkit import constraints, costs, datasets, metrics
from odtkit.core import (
    SearchOptions,
    regularization_path,
    search_numeric,
    search_rule_list,
    search_tree,
)
from odtkit.datasets import Dataset
from odtkit.fairness import Fairness
from odtkit.greedy import greedy_tree

# eager (numpy and pandas only; the native glue loads inside rashomon()): a lazy binding would
# be shadowed by the submodule once anything imported odtkit.rashomon first
from odtkit.rashomon import RashomonSet, rashomon
from odtkit.render import export_text
from odtkit.results import Certificate, Result, Status
from odtkit.rulelist import RuleList
from odtkit.tree import Tree

if TYPE_CHECKING:  # the lazy attributes below, as type checkers should see them
    from odtkit._compare import Comparison, compare
    from odtkit.task import Task, solve

__version__ = "0.1.0"

__all__ = [
    "Certificate",
    "Dataset",
    "Comparison",
    "FairTreeClassifier",
    "Fairness",
    "LimitReachedWarning",
    "OptimalRuleListClassifier",
    "OptimalTreeClassifier",
    "OptimalTreeClassifierCV",
    "RashomonSet",
    "Result",
    "RuleList",
    "SearchOptions",
    "Status",
    "Task",
    "Tree",
    "compare",
    "constraints",
    "costs",
    "datasets",
    "export_text",
    "greedy_tree",
    "metrics",
    "plot_tree",
    "pruning",
    "rashomon",
    "regularization_path",
    "search_numeric",
    "search_rule_list",
    "search_tree",
    "solve",
    "solve_formulation",
    "sweep",
    "__version__",
]

# Attributes that import scikit-learn / the MIP stack load on first use, so `import odtkit`
# and the CLI start quickly.
_LAZY = {
    "compare": ("odtkit._compare", "compare"),
    "Comparison": ("odtkit._compare", "Comparison"),
    # the task imports the Binarizer's policy and the method registry only when solving
    "Task": ("odtkit.task", "Task"),
    "solve": ("odtkit.task", "solve"),
    "pruning": ("odtkit.pruning", None),
    "solve_formulation": ("odtkit.pipeline", "solve_formulation"),
    "sweep": ("odtkit.sweeping", "sweep"),
    "OptimalTreeClassifier": ("odtkit.estimators", "OptimalTreeClassifier"),
    "OptimalTreeClassifierCV": ("odtkit.estimators", "OptimalTreeClassifierCV"),
    "OptimalRuleListClassifier": ("odtkit.estimators", "OptimalRuleListClassifier"),
    "FairTreeClassifier": ("odtkit.estimators", "FairTreeClassifier"),
    "LimitReachedWarning": ("odtkit.estimators", "LimitReachedWarning"),
    "plot_tree": ("odtkit.plot", "plot_tree"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'odtkit' has no attribute {name!r}")
    import importlib

    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value

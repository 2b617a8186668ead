"""odtkit: provably optimal interpretable models, by MIP and by native search, compared.

The public API is re-exported here; see the README for the quickstart.
"""

from odtkit import datasets, metrics, pruning
from odtkit.compare import compare
from odtkit.core import search_rule_list, search_tree
from odtkit.datasets import Dataset
from odtkit.estimators import OptimalRuleListClassifier, OptimalTreeClassifier
from odtkit.greedy import greedy_tree
from odtkit.rulelist import RuleList
from odtkit.tree import Tree

__version__ = "0.1.0"

__all__ = [
    "Dataset",
    "OptimalRuleListClassifier",
    "OptimalTreeClassifier",
    "RuleList",
    "Tree",
    "compare",
    "datasets",
    "greedy_tree",
    "metrics",
    "pruning",
    "search_rule_list",
    "search_tree",
    "__version__",
]

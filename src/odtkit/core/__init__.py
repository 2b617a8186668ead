"""Python face of the native tree searches (the extension ``odtkit._native``, shared with
:mod:`odtkit.pruning`)."""

from odtkit._native import Bitset
from odtkit.core.numeric import search_numeric
from odtkit.core.path import RegularizationPath, regularization_path
from odtkit.core.pricing import PositionRule, Priced, price
from odtkit.core.rules import search_rule_list
from odtkit.core.search import (
    SearchOptions,
    TrivialAnswerWarning,
    informative_lam_range,
    search_tree,
)

__all__ = [
    "Bitset",
    "PositionRule",
    "Priced",
    "RegularizationPath",
    "SearchOptions",
    "TrivialAnswerWarning",
    "informative_lam_range",
    "price",
    "regularization_path",
    "search_numeric",
    "search_rule_list",
    "search_tree",
]

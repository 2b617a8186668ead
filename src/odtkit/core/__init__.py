"""Python face of the native search core (``odtkit.core._native``)."""

from odtkit.core._native import Bitset
from odtkit.core._result import SEARCH_STATUSES, TRACE_COLUMNS, SearchResult
from odtkit.core.rules import search_rule_list
from odtkit.core.search import search_tree

__all__ = [
    "Bitset",
    "SearchResult",
    "SEARCH_STATUSES",
    "TRACE_COLUMNS",
    "search_rule_list",
    "search_tree",
]

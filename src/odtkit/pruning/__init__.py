"""Optimal ensemble pruning with feature costs (NWS IP3), see FORMULATIONS-SEARCH-AND-PRUNING §7."""

from odtkit.pruning._ensemble import PrunedEnsemble
from odtkit.pruning._example import worked_example
from odtkit.pruning._extract import EnsembleData, TreeData, extract

__all__ = ["EnsembleData", "PrunedEnsemble", "TreeData", "extract", "worked_example"]

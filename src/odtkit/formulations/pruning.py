"""Deprecated path of the ensemble-pruning formulations: import them from :mod:`odtkit.pruning`.

The formulations moved into the pruning package (issue 38), beside the data they build from and
the accounting they are scored with; ``odtkit.pruning.IP3`` ... is their one public path. This
module re-exports them with a FutureWarning and goes in a later release.
"""

from odtkit._warnings import warn
from odtkit.pruning import (
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

__all__ = [
    "ColgenMaster",
    "IP0",
    "IP1",
    "IP2",
    "IP3",
    "IP3Meta",
    "LP1",
    "MasterColumn",
    "MasterMeta",
    "PruningMeta",
    "PruningProblem",
]

warn(
    "odtkit.formulations.pruning is deprecated and will be removed: import the pruning "
    "formulations from odtkit.pruning (from odtkit.pruning import IP3)",
    FutureWarning,
)

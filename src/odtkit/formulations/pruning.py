"""Deprecated path of the ensemble-pruning formulations: import them from :mod:`odtkit.pruning`.

The formulations moved into the pruning package (issue 38), beside the data they build from and
the accounting they are scored with; ``odtkit.pruning.IP3`` ... is their one public path. This
module re-exports them with a FutureWarning and goes in a later release.
"""

from odtkit import pruning as _package
from odtkit._warnings import warn
from odtkit.pruning import _formulations as _moved

#: The moved module's public names, as the package exports them: derived, not listed again, so
#: this path holds exactly what moved (the package-internal helpers of ``_formulations`` stay out).
__all__ = [name for name in _moved.__all__ if name in _package.__all__]
globals().update({name: getattr(_package, name) for name in __all__})

warn(
    "odtkit.formulations.pruning is deprecated and will be removed: import the pruning "
    "formulations from odtkit.pruning (from odtkit.pruning import IP3)",
    FutureWarning,
)

"""The input checks odtkit runs, for callers that check before they call (the command line, a
user's own wrapper): each raises ``ValueError`` / ``TypeError`` naming the argument, with the
message odtkit's own functions give.

The checks live in :mod:`odtkit._validation` (the one validation home), except
:func:`check_dataset`, which lives beside the :class:`~odtkit.datasets.Dataset` it checks (the
datasets package imports ``_validation``); this module is their public face, so no caller
outside the package imports a private name.
"""

from odtkit._validation import check_depth, check_lambda, check_positive_number, min_depth
from odtkit.datasets._dataset import check_dataset

__all__ = ["check_dataset", "check_depth", "check_lambda", "check_positive_number", "min_depth"]

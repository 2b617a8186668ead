"""The input checks odtkit runs, for callers that check before they call (the command line, a
user's own wrapper): each raises ``ValueError`` / ``TypeError`` naming the argument, with the
message odtkit's own functions give.

The checks live in :mod:`odtkit._validation` (the one validation home); this module is their
public face, so no caller outside the package imports a private name.
"""

from odtkit._validation import check_dataset, check_depth, check_lambda, check_positive_number

__all__ = ["check_dataset", "check_depth", "check_lambda", "check_positive_number"]

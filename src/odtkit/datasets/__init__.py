"""Datasets: the :class:`Dataset` container, bundled benchmarks, CSV loading and binarization.

Bundled (CC BY 4.0, UCI): ``monk1``, ``monk2``, ``monk3``, ``tic-tac-toe``, ``car-evaluation``
(alias ``car``), ``balance-scale`` and ``german-credit`` (with its sensitive attribute
``Gender=Male``, for fairness); see :func:`names`, :func:`load` and :func:`describe`.
Benchmark-only sets (COMPAS, coupon, ...) are read from the shared data directory with
:func:`load_shared` and are never shipped in the package.
"""

from typing import TYPE_CHECKING

from odtkit.datasets._bundled import (
    binarize_frame,
    check_labels,
    describe,
    load,
    load_file,
    load_shared,
    names,
    resolve,
    shared_path,
)
from odtkit.datasets._dataset import Dataset
from odtkit.datasets._tables import TableReading, binary_kind, read_table, read_table_and_reading
from odtkit.datasets._thresholds import Thresholds

if TYPE_CHECKING:  # the type checker sees the class; at run time __getattr__ loads it late
    from odtkit.datasets._binarizer import Binarizer

__all__ = [
    "Binarizer",
    "Dataset",
    "TableReading",
    "Thresholds",
    "binarize_frame",
    "binary_kind",
    "check_labels",
    "describe",
    "load",
    "load_file",
    "load_shared",
    "names",
    "read_table",
    "read_table_and_reading",
    "resolve",
    "shared_path",
]


def __getattr__(name: str) -> object:
    # Binarizer pulls in scikit-learn (seconds of import time); load it on first use
    if name == "Binarizer":
        from odtkit.datasets._binarizer import Binarizer

        return Binarizer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

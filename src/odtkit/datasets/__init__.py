"""Datasets: the :class:`Dataset` container, bundled benchmarks, CSV loading and binarization.

Bundled (CC BY 4.0, UCI): ``monk1``, ``monk2``, ``monk3``, ``tic-tac-toe``, ``car-evaluation``
(alias ``car``) and ``balance-scale``; see :func:`names`, :func:`load` and :func:`describe`.
Benchmark-only sets (COMPAS, coupon, ...) are read from the shared data directory with
:func:`load_shared` and are never shipped in the package.
"""

from odtkit.datasets._binarizer import Binarizer
from odtkit.datasets._bundled import (
    binarize_frame,
    describe,
    load,
    load_file,
    load_shared,
    names,
    shared_path,
)
from odtkit.datasets._dataset import Dataset

__all__ = [
    "Binarizer",
    "Dataset",
    "binarize_frame",
    "describe",
    "load",
    "load_file",
    "load_shared",
    "names",
    "shared_path",
]

"""Input checks shared by every public entry point.

Each check raises ``ValueError``/``TypeError`` whose message names the offending argument and
what was expected, so a user sees *which* input is wrong rather than a failure deep inside a solver.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np


def as_binary_matrix(X: object, name: str = "X") -> np.ndarray:
    """Return ``X`` as a C-contiguous ``bool`` array of shape (n, p), or raise.

    Accepts bool arrays and numeric arrays whose entries are all 0 or 1.
    """
    if hasattr(X, "to_numpy"):  # pandas DataFrame
        X = X.to_numpy()
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be array-like of 0/1 values, got {type(X).__name__}") from exc
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-dimensional (n_samples, n_features), got shape {arr.shape}"
        )
    if arr.dtype == bool:
        return np.ascontiguousarray(arr)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold 0/1 numbers or booleans, got dtype {arr.dtype}")
    if arr.size and arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN; features must be binary (0/1)")
    if arr.size and not np.isin(arr, (0, 1)).all():
        bad = arr[~np.isin(arr, (0, 1))].ravel()[:3]
        raise ValueError(
            f"{name} must be binary (0/1); found values such as {bad.tolist()} "
            "(binarize raw tables with odtkit.datasets.Binarizer)"
        )
    return np.ascontiguousarray(arr.astype(bool))


def encode_labels(y: object, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """Map labels to ``0..K-1`` (int64), returning ``(codes, classes)`` with the original values.

    Labels must be all numeric (int/bool/float without NaN) or all strings.
    """
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {arr.shape}")
    if arr.dtype.kind == "O":
        kinds = {type(v) for v in arr.tolist()}
        if kinds <= {str}:
            arr = arr.astype(str)
        elif all(issubclass(k, (Integral, bool, np.integer, np.bool_)) for k in kinds):
            arr = arr.astype(np.int64)
        else:
            names = sorted(k.__name__ for k in kinds)
            raise TypeError(
                f"{name} must hold labels of one type (all numbers or all strings), got {names}"
            )
    if arr.dtype.kind == "f":
        if np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN labels")
        if not np.all(arr == np.round(arr)):
            raise TypeError(
                f"{name} must hold class labels, got non-integer floats (regression targets?)"
            )
    if arr.dtype.kind not in "biufUS":
        raise TypeError(f"{name} must hold numeric or string class labels, got dtype {arr.dtype}")
    classes, codes = np.unique(arr, return_inverse=True)
    return codes.astype(np.int64), classes


def check_lambda(lam: object, name: str = "lam") -> float:
    """Return the per-leaf penalty as a float, rejecting negatives, NaN and non-numbers."""
    if isinstance(lam, bool) or not isinstance(lam, Real):
        raise TypeError(f"{name} must be a non-negative number, got {type(lam).__name__}")
    value = float(lam)
    if math.isnan(value) or value < 0 or math.isinf(value):
        raise ValueError(f"{name} must be a finite number >= 0, got {lam!r}")
    return value


def check_depth(depth: object, name: str = "max_depth", allow_none: bool = True) -> int | None:
    """Return a depth limit (number of splits on the longest path), or None for unlimited."""
    if depth is None:
        if allow_none:
            return None
        raise TypeError(f"{name} must be a non-negative integer, got None")
    if isinstance(depth, bool) or not isinstance(depth, Integral):
        raise TypeError(f"{name} must be a non-negative integer, got {type(depth).__name__}")
    if depth < 0:
        raise ValueError(f"{name} must be >= 0, got {depth}")
    return int(depth)


def check_positive_number(value: object, name: str, allow_none: bool = True) -> float | None:
    """Return a positive float (time or memory limit), or None."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a positive number, got {type(value).__name__}")
    v = float(value)
    if not v > 0 or math.isnan(v):
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return v


def check_node_limit(node_limit: object, name: str = "node_limit") -> int | None:
    """Return a positive integer limit on explored nodes, or None for no limit."""
    if node_limit is None:
        return None
    if isinstance(node_limit, bool) or not isinstance(node_limit, Integral):
        raise TypeError(f"{name} must be a positive integer, got {type(node_limit).__name__}")
    if node_limit <= 0:
        raise ValueError(f"{name} must be > 0, got {node_limit}")
    return int(node_limit)


def check_switches(switches: Any, known: tuple[str, ...], name: str = "bounds") -> dict[str, bool]:
    """Validate a mapping of switch name -> bool (e.g. bounds to turn off) against ``known``."""
    if switches is None:
        return {}
    if not isinstance(switches, Mapping):
        raise TypeError(
            f"{name} must be a mapping of bound name to bool, got {type(switches).__name__}"
        )
    out: dict[str, bool] = {}
    for key, value in switches.items():
        if key not in known:
            raise ValueError(
                f"unknown {name[:-1] if name.endswith('s') else name} {key!r}; known: {known}"
            )
        if not isinstance(value, bool):
            raise TypeError(f"{name}[{key!r}] must be a bool, got {type(value).__name__}")
        out[key] = value
    return out

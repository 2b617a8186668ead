"""Input checks shared by every public entry point.

Each check raises ``ValueError``/``TypeError`` whose message names the offending argument and
what was expected, so a user sees *which* input is wrong rather than a failure deep inside a solver.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping
from numbers import Integral, Real
from typing import Any, Literal, overload

import numpy as np


def as_binary_matrix(X: object, name: str = "X") -> np.ndarray:
    """Return ``X`` as a C-contiguous ``bool`` array of shape (n, p), or raise.

    Accepts bool arrays and numeric arrays whose entries are all 0 or 1.
    """
    if hasattr(X, "to_numpy") and hasattr(X, "dtypes") and hasattr(X, "columns"):
        X = _frame_as_numbers(X, name)
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
    if arr.dtype.kind == "c":
        raise ValueError(
            f"Complex data not supported: {name} holds complex numbers; features must be "
            "binary (0/1)"
        )
    if arr.dtype.kind not in "biuf":
        odd = next((v for v in arr.ravel().tolist() if not isinstance(v, (int, float))), None)
        such = "" if odd is None else f" (values such as {odd!r})"
        raise TypeError(f"{name} must hold 0/1 numbers or booleans, got dtype {arr.dtype}{such}")
    if arr.size and arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN; features must be binary (0/1)")
    if arr.size and not np.isin(arr, (0, 1)).all():
        bad = arr[~np.isin(arr, (0, 1))].ravel()[:3]
        raise ValueError(
            f"{name} must be binary (0/1); found values such as {bad.tolist()} "
            "(binarize raw tables with odtkit.datasets.Binarizer)"
        )
    return np.ascontiguousarray(arr.astype(bool))


def _frame_as_numbers(frame: Any, name: str) -> np.ndarray:
    """A DataFrame of 0/1 features as a float array, a column that cannot be one named:
    pandas' nullable dtypes (Int64, boolean, Float64) read as numbers, their pd.NA refused
    as a missing value, a categorical or text column refused by its dtype."""
    for column, dtype in zip(frame.columns, frame.dtypes, strict=True):
        if getattr(dtype, "kind", "O") not in "biuf":
            raise TypeError(
                f"{name} column {str(column)!r} has dtype {dtype}: features must be 0/1 numbers "
                "or booleans (binarize raw tables with odtkit.datasets.Binarizer)"
            )
    arr: np.ndarray = frame.to_numpy(dtype=float, na_value=np.nan)  # pandas is untyped (Any)
    absent = np.isnan(arr).any(axis=0)
    if absent.any():
        column = frame.columns[int(np.flatnonzero(absent)[0])]
        raise ValueError(
            f"{name} column {str(column)!r} has missing values (NaN); features must be binary "
            "(0/1) (odtkit.datasets.Binarizer encodes missing cells as features)"
        )
    return arr


def encode_labels(y: object, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """Map labels to ``0..K-1`` (int64), returning ``(codes, classes)`` with the original values.

    Labels must be all numeric (int/bool/float without NaN) or all strings.
    """
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {arr.shape}")
    check_label_kinds(arr, name)
    if arr.dtype.kind == "O":
        kinds = set(map(type, arr.tolist()))
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
        if np.isinf(arr).any():
            raise ValueError(f"{name} contains inf: labels must be finite class labels")
        if not np.all(arr == np.round(arr)):
            raise TypeError(
                f"{name} must hold class labels, got non-integer floats (regression targets?)"
            )
    if arr.dtype.kind not in "biufUS":
        raise TypeError(f"{name} must hold numeric or string class labels, got dtype {arr.dtype}")
    classes, codes = np.unique(arr, return_inverse=True)
    return codes.astype(np.int64), classes


def _is_missing(value: object) -> bool:
    """None, NaN or ``pd.NA`` (read without importing pandas)."""
    if value is None or type(value).__name__ == "NAType":
        return True
    return isinstance(value, (float, np.floating)) and value != value


def named(name: str, error: BaseException) -> str:
    """``error``'s message, led by ``name`` unless it names it already: scikit-learn's checks
    word a problem ("Found array with 0 sample(s)") without the argument it found it in. The
    original words stay, so a pattern matched against them still matches."""
    message = str(error)
    if re.search(rf"(^|[^\w]){re.escape(name)}([^\w]|$)", message):
        return message
    return f"{name}: {message}"


def check_label_kinds(y: np.ndarray, name: str = "y") -> None:
    """Refuse labels no classifier can take, naming ``name``: complex numbers (scikit-learn's
    words first, "Complex data not supported", as its estimator checks expect), missing labels
    (None, NaN, ``pd.NA`` in an object array) and a mix of numbers and strings (which cannot
    be ordered: numpy's sort raised "'<' not supported"). Other checks (floats that are not
    whole numbers, NaN in a float array) are left to the caller (scikit-learn's words for the
    estimators)."""
    if y.dtype.kind == "c":
        raise ValueError(
            f"Complex data not supported: {name} holds complex numbers; class labels must be "
            "numbers or strings"
        )
    if y.dtype.kind != "O":
        return
    values = y.tolist()
    kinds = set(map(type, values))
    # only None, a float NaN or pd.NA is missing: a column of strings (the common case) needs
    # no scan value by value
    missing = (
        []
        if kinds <= {str, bytes, int, bool}
        else [i for i, v in enumerate(values) if _is_missing(v)]
    )
    if missing:
        raise ValueError(
            f"{name} has {len(missing)} missing label(s) (None/NaN) at rows {missing[:5]}: "
            "every row needs a class label (drop those rows or give them one)"
        )
    if any(issubclass(k, (complex, np.complexfloating)) for k in kinds):
        raise ValueError(
            f"Complex data not supported: {name} holds complex numbers; class labels must be "
            "numbers or strings"
        )
    texts = {k for k in kinds if issubclass(k, (str, bytes))}
    if texts and texts != kinds:
        names = sorted(k.__name__ for k in kinds)
        raise TypeError(
            f"{name} must hold labels of one type (all numbers or all strings), got {names}"
        )


def check_lambda(lam: object, name: str = "lam") -> float:
    """Return the per-leaf penalty as a float, rejecting negatives, NaN and non-numbers."""
    if isinstance(lam, bool) or not isinstance(lam, Real):
        raise TypeError(f"{name} must be a non-negative number, got {type(lam).__name__}")
    value = float(lam)
    if math.isnan(value) or value < 0 or math.isinf(value):
        raise ValueError(f"{name} must be a finite number >= 0, got {lam!r}")
    return value


# allow_none=False (every caller passes it by keyword) never returns None: the overloads let
# callers keep an `int` without a check
@overload
def check_depth(
    depth: object,
    name: str = ...,
    *,
    allow_none: Literal[False],
    minimum: int = ...,
    n_features: int | None = ...,
) -> int: ...
@overload
def check_depth(
    depth: object,
    name: str = ...,
    allow_none: bool = ...,
    minimum: int = ...,
    n_features: int | None = ...,
) -> int | None: ...
def check_depth(
    depth: object,
    name: str = "max_depth",
    allow_none: bool = True,
    minimum: int = 0,
    n_features: int | None = None,
) -> int | None:
    """Return a depth limit (number of splits on the longest path), or None for unlimited.

    ``minimum`` is the smallest accepted value (1 for the MIPs, which need a branch node).
    With ``n_features`` (the p binary features of the data) a depth above p is clamped to
    ``max(p, minimum)``: no optimal tree is deeper than p. A path that tests a binary feature
    twice sends every row reaching the second test the same way, so that node can be replaced
    by its non-empty child: the same predictions (so the same errors and disparity) with one
    leaf fewer. Hence ``OPT(D) = OPT(min(D, p))`` for every ``lam >= 0``, and a depth such as
    ``2**63`` (which no native integer holds, and for which the fair DP would allocate per
    level) is the same problem as depth p.
    """
    if depth is None:
        if allow_none:
            return None
        raise TypeError(f"{name} must be an integer >= {minimum}, got None")
    if isinstance(depth, bool) or not isinstance(depth, Integral):
        raise TypeError(f"{name} must be a non-negative integer, got {type(depth).__name__}")
    value = int(depth)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {depth}")
    if n_features is not None:
        return min(value, max(int(n_features), minimum))
    return value


def min_depth(needs_branch: bool) -> int:
    """The smallest ``max_depth`` a method takes: the one rule of the API and the CLI.

    ``max_depth=0`` (the single leaf, a constant prediction) is a legitimate baseline: the
    searches take it and certify the majority leaf (with a TrivialAnswerWarning saying so).
    A MIP formulation (``needs_branch``) models at least one branch node, so it needs 1. A
    table with a single class is no error either, at either door: the optimum is the leaf
    predicting that class (scikit-learn's ``check_classifiers_one_label`` convention), said
    by the same warning (a single class often means the wrong label column).
    """
    return 1 if needs_branch else 0


def check_names(value: object, name: str) -> tuple[str, ...]:
    """Return a non-empty tuple of distinct names, in the order given, or raise naming ``name``.

    ``value`` is one name, a comma-separated string of names (``"dp,flowoct"``) or a sequence
    of names: a single string is never taken apart into its characters. Empty names (``","``,
    ``"dp,"``) and non-strings are refused; repeated names are kept once. Whether each name is
    known is the caller's check.
    """
    if isinstance(value, str):
        items: list[object] = [part.strip() for part in value.split(",")]
    elif isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)):
        items = list(value)
    else:
        raise TypeError(
            f"{name} must be a name, a comma-separated string or a sequence of names, "
            f"got {type(value).__name__}"
        )
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{name} must hold names (str), got {item!r}")
    names = tuple(dict.fromkeys(str(item) for item in items))
    if not names or any(not n.strip() for n in names):
        raise ValueError(f"{name} must be one or more non-empty names, got {value!r}")
    return names


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


def check_count(value: object, name: str, minimum: int = 1) -> int | None:
    """Return an integer ``>= minimum`` (a node limit, a thread count, a seed), or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_node_limit(node_limit: object, name: str = "node_limit") -> int | None:
    """Return a positive integer limit on explored nodes, or None for no limit."""
    return check_count(node_limit, name)


def check_nonnegative_number(value: object, name: str) -> float:
    """Return a finite float ``>= 0`` (a gap, a tolerance)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number >= 0, got {type(value).__name__}")
    v = float(value)
    if not 0 <= v < math.inf:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


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


def check_dataset_fields(
    X: object, y: object, classes: object, feature_names: object, sample_weight: object
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...], np.ndarray | None]:
    """The fields of a :class:`~odtkit.datasets.Dataset`, checked (and dtypes normalized).

    ``X`` a 2-d bool array (n, p); ``y`` a 1-d array of n integer codes in ``0..K-1`` with
    ``K = len(classes)``; ``feature_names`` p names; ``sample_weight`` None or n finite numbers
    >= 0. Raises TypeError/ValueError naming the argument. Values are never converted in a way
    that could change their meaning: a float ``y`` or a 0/1 integer ``X`` is refused here
    (:meth:`Dataset.from_arrays` converts user input first).
    """
    if not isinstance(X, np.ndarray) or X.ndim != 2:
        shape = getattr(X, "shape", None)
        raise ValueError(
            f"X must be a 2-dimensional (n_samples, n_features) array, got "
            f"{type(X).__name__} of shape {shape}"
        )
    if X.dtype != bool:
        raise TypeError(
            f"X must be a bool array, got dtype {X.dtype} (Dataset.from_arrays converts 0/1 data)"
        )
    n, p = X.shape
    if not isinstance(y, np.ndarray) or y.ndim != 1:
        shape = getattr(y, "shape", None)
        raise ValueError(f"y must be a 1-dimensional array, got {type(y).__name__} of {shape}")
    if y.dtype.kind not in "iu":
        raise TypeError(
            f"y must hold integer class codes 0..K-1, got dtype {y.dtype} "
            "(Dataset.from_arrays encodes raw labels)"
        )
    if y.shape[0] != n:
        raise ValueError(f"X and y must have the same number of samples, got {n} and {y.shape[0]}")
    classes = np.asarray(classes)
    if classes.ndim != 1:
        raise ValueError(f"classes must be 1-dimensional, got shape {classes.shape}")
    if y.size and (y.min() < 0 or y.max() >= classes.size):
        raise ValueError(
            f"y must hold class codes 0..{classes.size - 1} (K = len(classes) = {classes.size}), "
            f"got codes from {int(y.min())} to {int(y.max())}"
        )
    if y.dtype != np.int64:
        y = y.astype(np.int64)
    if isinstance(feature_names, str) or not isinstance(feature_names, Collection):
        raise TypeError(
            f"feature_names must be a sequence of str, got {type(feature_names).__name__}"
        )
    names = tuple(str(f) for f in feature_names)
    if len(names) != p:
        raise ValueError(
            f"feature_names must have one name per column of X ({p}), got {len(names)}"
        )
    weights = check_sample_weight(sample_weight, n)
    return X, y, classes, names, weights


def check_sample_weight(
    sample_weight: object, n: int, name: str = "sample_weight", positive_sum: bool = False
) -> np.ndarray | None:
    """Return ``n`` finite weights ``>= 0`` as float64 (None stays None), or raise.

    With ``positive_sum`` all-zero weights are refused too (every objective divides by the
    total weight).
    """
    if sample_weight is None:
        return None
    try:
        weights = np.asarray(sample_weight, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numbers, got {type(sample_weight).__name__}") from exc
    if weights.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {weights.shape}")
    if not np.all(np.isfinite(weights)) or (weights < 0).any():
        raise ValueError(f"{name} must be finite and >= 0")
    if weights.size and not np.isfinite(weights.sum()):
        raise ValueError(
            f"{name} sums to inf (largest weight {weights.max():.3g}): every objective divides "
            "by the total weight; divide the weights by a common factor (the answer is the same)"
        )
    if positive_sum and not weights.sum() > 0:
        raise ValueError(f"{name} must have a positive sum, got all weights zero")
    return weights


#: Largest weights within these powers of two are used as given; others are scaled
_SAFE_WEIGHT_EXPONENTS = (-64, 64)


def scale_weights(weights: np.ndarray) -> np.ndarray:
    """``weights`` times the power of two that brings the largest into ``[0.5, 1)``, when the
    largest lies outside ``[2**-64, 2**64]``; ``weights`` unchanged otherwise.

    Weights of an ordinary scale are left alone: integer weights (unit weights above all) keep
    the native searches' exact integer sums, and answers do not move by a rounding.

    Every objective divides the misclassified weight by the total weight, so scaled weights
    state the same problem, and multiplying by a power of two is exact in floating point (for
    every weight whose scaled value is not below the smallest normal number, i.e. every weight
    within a factor 2**-1021 of the largest; smaller ones weigh less than the solvers' tie
    tolerance of 1e-9 of the total anyway). The solvers' tolerances scale with the total
    weight: on subnormal weights (1e-320) they underflowed to 0 and the dp's objective lost
    digits (0.20665349 for a tree that scores 0.20666667); at scale ~1 both are exact.
    """
    # annotated: numpy's stubs type ldexp of an ndarray of unknown dtype as Any
    scaled: np.ndarray = np.ldexp(weights, -weight_exponent(weights))
    return scaled


def weight_exponent(weights: np.ndarray) -> int:
    """The ``e`` of :func:`scale_weights`: ``np.ldexp(weights, -e)`` has its largest in
    ``[0.5, 1)``, or ``e = 0`` when the largest is already within ``[2**-64, 2**64]`` (or no
    weight is positive). A count ``c`` in the user's units is ``np.ldexp(c, -e)`` in the
    scaled ones (the factor itself may not fit in a float)."""
    top = float(weights.max()) if weights.size else 0.0
    if not top > 0 or not math.isfinite(top):
        return 0
    exponent = math.frexp(top)[1]
    low, high = _SAFE_WEIGHT_EXPONENTS
    return 0 if low < exponent <= high else exponent

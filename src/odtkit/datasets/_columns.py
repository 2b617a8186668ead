"""Reading a table's columns as numbers, without scikit-learn.

The Binarizer (``_binarizer``) and the exact numeric search (``odtkit.core.numeric``) read
columns the same way; these helpers live apart from the Binarizer so that importing the search
core does not import scikit-learn (about 3 s of a sweep worker's start-up on a loaded machine).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# the reading of one column as numbers sits with the features that read it (odtkit._features,
# below the datasets package: the renderers import it)
from odtkit._features import _numeric, _refuse_complex, _refuse_complex_dtype

__all__ = ["GUESS_ROUNDS", "_numeric", "_refuse_complex", "check_unique_columns", "column_at"]

#: Rounds of the threshold-guessing reference model every entry point asks for
#: (``Binarizer(guess_thresholds=GUESS_ROUNDS)``). Part of the Binarizer's threshold policy; it
#: stands here, without scikit-learn, so that the exact numeric search (``odtkit.core.numeric``)
#: reads it without importing ``odtkit.methods`` (the MIP stack, which imports ``odtkit.core``:
#: an import cycle). ``odtkit.methods`` re-exports it.
GUESS_ROUNDS = 40


def check_unique_columns(X: object, name: str = "X") -> None:
    """Refuse a DataFrame ``X`` that names a column twice: every frame entering the Binarizer,
    the exact search and the estimators passes here. A duplicated column read by name would
    be the first of them, or both (a duplicated label column becomes a feature)."""
    columns = getattr(X, "columns", None)
    if columns is None:
        return
    names = [str(c) for c in columns]
    if len(set(names)) == len(names):
        return
    twice = sorted({n for n in names if names.count(n) > 1})
    raise ValueError(
        f"{name} has duplicate column names {twice}: each column needs a name of its own"
    )


def column_at(frame: pd.DataFrame, position: int) -> pd.Series:
    """Column ``position`` of ``frame``, whose names are unique (:func:`check_unique_columns`).

    Read by its label: ``frame.iloc[:, position]`` builds the Series through the positional
    indexer, about 3x the cost (pandas 3.1: 45 against 15 us a column), and a small fit reads
    a column several times (the Binarizer, the exact search's columns, two transforms)."""
    columns = frame.columns
    if not isinstance(columns, pd.MultiIndex):
        try:
            column = frame[columns[position]]
        except (KeyError, TypeError, ValueError):  # a label pandas will not look up
            column = None
        if isinstance(column, pd.Series):
            return column
    return frame.iloc[:, position]


def _as_frame(X: object, name: str) -> tuple[pd.DataFrame, bool]:
    """``X`` as a DataFrame, plus whether it came as one (names are then meaningful); a
    DataFrame naming a column twice is refused (:func:`check_unique_columns`)."""
    if isinstance(X, pd.DataFrame):
        check_unique_columns(X, name)
        return X, True
    if isinstance(X, pd.Series):
        raise ValueError(f"{name} must be 2-dimensional; pass a DataFrame (e.g. series.to_frame())")
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-dimensional (n_samples, n_columns), got shape {arr.shape}"
        )
    frame = pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])
    # An object array may hold plain numbers; let pandas find the real column types.
    return frame.infer_objects(), False


def _numeric_block(frame: pd.DataFrame, names: list[str]) -> np.ndarray | None:
    """All of ``frame`` as one float array (missing cells NaN) when every column is numeric
    (bool included, as :func:`_numeric` reads it), else None; an infinite value is refused
    naming its column, as :func:`_numeric` does."""
    dtypes = list(frame.dtypes)  # a Series built on every read (~25 us): read once
    if not all(
        pd.api.types.is_numeric_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype)
        for dtype in dtypes
    ):
        return None
    for name, dtype in zip(names, dtypes, strict=True):
        _refuse_complex_dtype(dtype, name)
    try:
        block: np.ndarray = frame.to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        return None  # let the column-by-column path name the column
    infinite = np.isinf(block).any(axis=0)
    if infinite.any():
        name = names[int(np.flatnonzero(infinite)[0])]
        raise ValueError(f"column {name!r} has infinite values; Binarizer needs finite numbers")
    return block

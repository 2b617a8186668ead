"""Bundled UCI benchmark sets, CSV loading, and access to the shared benchmark data directory."""

from __future__ import annotations

import importlib.resources
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from odtkit._warnings import warn
from odtkit.datasets._dataset import Dataset
from odtkit.datasets._tables import read_table

if TYPE_CHECKING:
    from odtkit.datasets._binarizer import Binarizer

#: Environment variable that points at the shared benchmark ``data`` directory.
SHARED_DATA_ENV = "ODTKIT_SHARED_DATA"

_UCI_LICENCE = "CC BY 4.0"


@dataclass(frozen=True)
class _Bundled:
    file: str
    source: str


# Label column of every bundled file is "label"; the original names are in data/README.md.
_BUNDLED: dict[str, _Bundled] = {
    "monk1": _Bundled("monk1.csv", "UCI MONK's Problems (MONK-1 train), via OSDT"),
    "monk2": _Bundled("monk2.csv", "UCI MONK's Problems (MONK-2 train), via OSDT"),
    "monk3": _Bundled("monk3.csv", "UCI MONK's Problems (MONK-3 train), via OSDT"),
    "tic-tac-toe": _Bundled("tic-tac-toe.csv", "UCI Tic-Tac-Toe Endgame, via OSDT"),
    "car-evaluation": _Bundled("car-evaluation.csv", "UCI Car Evaluation, via OSDT"),
    "balance-scale": _Bundled("balance-scale.csv", "UCI Balance Scale, via OSDT"),
    "german-credit": _Bundled(
        "german-credit.csv", "UCI Statlog German Credit, via pystreed (fairness; f0 = sex)"
    ),
}
_ALIASES = {"car": "car-evaluation"}
_LABEL = "label"

# Benchmark-only sets: their licences do not allow (or do not state) redistribution,
# so they are read from the shared data directory and never shipped in the wheel.
_SHARED: dict[str, str] = {
    "compas-binary": "osdt/compas-binary.csv",
    "coupon-carryout": "gosdt/coupon_carryout.csv",
    "coupon-rest20": "gosdt/coupon_rest20.csv",
    "bar-7": "gosdt/gosdt2020/bar-7.csv",
    "compas-corels-train": "corels/compas_train-binary.csv",
    "compas-corels-test": "corels/compas_test-binary.csv",
    "monk1-gosdt": "gosdt/monk1.csv",
    "monk2-gosdt": "gosdt/monk2.csv",
}


def names() -> list[str]:
    """Names of the bundled datasets, in the order :func:`describe` lists them."""
    return list(_BUNDLED)


def _canonical(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}")
    key = _ALIASES.get(name, name)
    if key not in _BUNDLED:
        known = ", ".join(names())
        aliases = ", ".join(f"{a!r} -> {t!r}" for a, t in _ALIASES.items())
        hint = " (use load_shared for benchmark-only sets)" if name in _SHARED else ""
        raise ValueError(
            f"unknown dataset name {name!r}{hint}; known names: {known} (aliases: {aliases})"
        )
    return key


def load(name: str) -> Dataset:
    """Load a bundled binarized dataset.

    Parameters
    ----------
    name : str
        One of :func:`names` (``"car"`` is accepted for ``"car-evaluation"``).

    Returns
    -------
    Dataset
        Bool features with the original (one-hot) feature names and labels 0/1.

    Raises
    ------
    ValueError
        If ``name`` is not a bundled dataset.
    """
    key = _canonical(name)
    resource = importlib.resources.files("odtkit.datasets") / "data" / _BUNDLED[key].file
    with resource.open("rb") as handle:
        frame = pd.read_csv(handle)
    return Dataset.from_frame(frame, _LABEL, name=key)


def describe() -> pd.DataFrame:
    """One row per bundled dataset: size, class balance, source and licence.

    Returns
    -------
    DataFrame
        Columns ``name, n_samples, n_features, n_classes, class_balance, source, licence``;
        ``class_balance`` reads like ``"0:62 / 1:62"``.
    """
    rows = []
    for key, entry in _BUNDLED.items():
        data = load(key)
        counts = np.bincount(data.y, minlength=data.n_classes)
        balance = " / ".join(f"{c}:{int(k)}" for c, k in zip(data.classes, counts, strict=True))
        rows.append(
            {
                "name": key,
                "n_samples": data.n_samples,
                "n_features": data.n_features,
                "n_classes": data.n_classes,
                "class_balance": balance,
                "source": entry.source,
                "licence": _UCI_LICENCE,
            }
        )
    return pd.DataFrame(rows)


# -- arbitrary CSV files ---------------------------------------------------------------------------


def _blank_labels(labels: pd.Series) -> np.ndarray:
    """Positions of the blank cells of a label column (missing, or only spaces)."""
    blank = np.array(labels.isna(), dtype=bool)
    if labels.dtype == object or pd.api.types.is_string_dtype(labels.dtype):
        text = labels.astype(str).str.strip().to_numpy()
        blank |= text == ""
    return np.flatnonzero(blank)


def check_labels(frame: pd.DataFrame, label: str, *, first_line: int | None = None) -> None:
    """Refuse blank label cells, naming the first few rows.

    ``first_line``: ``frame`` was read from a file whose row 0 is that line (2 below a header
    row, 1 without one), so row ``i`` is named as line ``i + first_line``; None names the rows
    by their index.
    """
    blank = _blank_labels(frame[label])
    if blank.size == 0:
        return
    if first_line is not None:
        where = ("line " if blank.size == 1 else "lines ") + ", ".join(
            str(i + first_line) for i in blank[:5]
        )
    else:
        where = "index " + ", ".join(str(v) for v in frame.index[blank[:5]])
    more = ", ..." if blank.size > 5 else ""
    cells = "cell" if blank.size == 1 else "cells"
    raise ValueError(
        f"label column {label!r} has {blank.size} blank {cells} ({where}{more}): "
        "drop them or fill them"
    )


def _non_binary_columns(features: pd.DataFrame) -> list[str]:
    bad = []
    for column in features.columns:
        values = features[column]
        if values.dtype == bool:
            continue
        if not pd.api.types.is_numeric_dtype(values) or values.isna().any():
            bad.append(str(column))
        elif not values.isin((0, 1)).all():
            bad.append(str(column))
    return bad


def load_file(
    path: str | os.PathLike[str],
    *,
    label: str | None = None,
    sep: str | None = None,
    name: str | None = None,
    binarize: bool = False,
    max_thresholds: int | None = None,
    guess_thresholds: int | None = None,
) -> Dataset:
    """Load a CSV file as a :class:`Dataset`.

    Parameters
    ----------
    path : str or path-like
        A delimited text file with a header row. CRLF line endings and a UTF-8 BOM are fine.
    label : str, optional
        Name of the label column; defaults to the last column.
    sep : str, optional
        Field separator. By default tab for ``.tsv``/``.tab`` files, else the one of ``;``
        ``,`` tab ``|`` that splits the lines into as many fields as the header, runs of
        blanks only when none does (see :func:`read_table`).
    name : str, optional
        Dataset name; defaults to the file name without extension.
    binarize : bool, default=False
        If some feature column is not 0/1 (or has missing cells), binarize the features with
        :class:`Binarizer` instead of raising; it encodes missing cells (see its docstring).
    max_thresholds, guess_thresholds : int, optional
        Passed to :class:`Binarizer` when binarizing (``guess_thresholds`` fits its reference
        model on the labels).

    Returns
    -------
    Dataset

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is not a text table, ``label`` is not a column or has blank cells, or
        features are not binary and ``binarize`` is False.
    """
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"path {str(path)!r} does not exist or is not a file")
    frame = read_table(file, sep)
    if frame.shape[1] < 2:
        raise ValueError(
            f"path {str(path)!r} has {frame.shape[1]} column(s); need features plus a label "
            "(is sep right?)"
        )
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    if label is None:
        label = columns[-1]
    elif label not in columns:
        raise ValueError(f"label {label!r} is not a column of {str(path)!r}; columns are {columns}")
    dataset_name = file.stem if name is None else name
    check_labels(frame, label, first_line=2)

    features = frame.drop(columns=[label])
    bad = _non_binary_columns(features)
    if not bad:
        return Dataset.from_frame(frame, label, name=dataset_name)
    if not binarize:
        shown = ", ".join(repr(c) for c in bad[:10]) + (
            f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        )
        gaps = " (some with missing values)" if features[bad].isna().any().any() else ""
        raise ValueError(
            f"{str(path)!r} has non-binary feature columns {shown}{gaps}; "
            "pass binarize=True to binarize them with odtkit.datasets.Binarizer"
        )
    dataset, _ = binarize_frame(
        frame,
        label,
        max_thresholds=max_thresholds,
        guess_thresholds=guess_thresholds,
        name=dataset_name,
    )
    return dataset


def binarize_frame(
    frame: pd.DataFrame,
    label: str,
    *,
    max_thresholds: int | None = None,
    categorical: list[str] | None = None,
    name: str = "data",
    guess_thresholds: int | None = None,
) -> tuple[Dataset, Binarizer]:
    """Binarize every column of ``frame`` except ``label`` and wrap the result.

    Parameters
    ----------
    frame : DataFrame
        Raw features plus the label column.
    label : str
        Name of the label column.
    max_thresholds, categorical, guess_thresholds
        See :class:`Binarizer`; ``guess_thresholds`` fits its reference model on the labels.
    name : str
        Dataset name.

    Returns
    -------
    (Dataset, Binarizer)
        The binarized dataset and the fitted binarizer (to transform test data the same way).

    Raises
    ------
    ValueError
        If ``label`` is not a column or has blank cells, or the Binarizer refuses a column.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if label not in frame.columns:
        raise ValueError(
            f"label {label!r} is not a column of frame; columns are {list(frame.columns)}"
        )
    check_labels(frame, label)
    # scikit-learn (behind Binarizer) costs seconds to import: only pay it when binarizing
    from odtkit.datasets._binarizer import Binarizer

    binarizer = Binarizer(
        max_thresholds=max_thresholds, categorical=categorical, guess_thresholds=guess_thresholds
    )
    X = binarizer.fit_transform(frame.drop(columns=[label]), frame[label].to_numpy())
    dataset = Dataset.from_arrays(
        X, frame[label], feature_names=list(binarizer.get_feature_names_out()), name=name
    )
    return dataset, binarizer


# -- shared benchmark data ------------------------------------------------------------------------


def _search_starts() -> list[Path]:
    starts = [Path.cwd()]
    package = importlib.resources.files("odtkit.datasets")
    # Only a real directory can sit inside a checkout; a zipped install has no siblings to find.
    if isinstance(package, Path):
        starts.append(package)
    return starts


def _shared_root() -> Path | None:
    env = os.environ.get(SHARED_DATA_ENV)
    if env:
        root = Path(env).expanduser()
        if root.is_dir():
            return root
        warn(f"{SHARED_DATA_ENV}={env!r} is not a directory; searching for shared/data instead")
    for start in _search_starts():
        for folder in (start, *start.parents):
            candidate = folder / "shared" / "data"
            if candidate.is_dir():
                return candidate
    return None


def shared_path(relative: str | os.PathLike[str] = "") -> Path | None:
    """Locate a file in the shared benchmark ``data`` directory, or return None.

    The directory is ``$ODTKIT_SHARED_DATA`` if set, else the first ``shared/data`` found
    walking up from the working directory and then from the installed package (so a checkout
    next to ``shared/`` finds it).

    Parameters
    ----------
    relative : str or path-like, default=""
        Path inside the data directory, e.g. ``"osdt/compas-binary.csv"``; empty for the
        directory itself.

    Returns
    -------
    Path or None
        None when the directory or the file is absent, so benchmarks can skip cleanly.
    """
    root = _shared_root()
    if root is None:
        return None
    target = root / relative if str(relative) else root
    return target if target.exists() else None


def resolve(dataset: Any) -> Any:
    """``dataset`` itself, or the bundled (else shared) dataset of that name: what
    :func:`odtkit.compare` and :func:`odtkit.sweep` accept by name."""
    if not isinstance(dataset, str):
        return dataset
    if dataset in names() or dataset == "car":
        return load(dataset)
    return load_shared(dataset)


def load_shared(name: str) -> Dataset:
    """Load a benchmark-only dataset from the shared data directory.

    Parameters
    ----------
    name : str
        One of ``compas-binary``, ``coupon-carryout``, ``coupon-rest20``, ``bar-7``,
        ``compas-corels-train``, ``compas-corels-test``, ``monk1-gosdt``, ``monk2-gosdt``.

    Raises
    ------
    ValueError
        If ``name`` is unknown.
    FileNotFoundError
        If the shared data directory or the file is absent.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}")
    if name not in _SHARED:
        hint = " (a bundled set: use load)" if _ALIASES.get(name, name) in _BUNDLED else ""
        raise ValueError(
            f"unknown shared dataset name {name!r}{hint}; known names: {', '.join(_SHARED)}"
        )
    relative = _SHARED[name]
    root = _shared_root()
    if root is None:
        raise FileNotFoundError(
            f"shared benchmark data not found for {name!r}: no shared/data directory above the "
            f"working directory or the package; set {SHARED_DATA_ENV} to its location"
        )
    path = root / relative
    if not path.is_file():
        raise FileNotFoundError(
            f"shared dataset {name!r} expected at {str(path)!r}, which is missing"
        )
    return load_file(path, name=name)

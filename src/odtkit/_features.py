"""What a binary feature is (:class:`FeatureSpec`) and what it computes from a raw column.

The Binarizer describes each of its output columns by a :class:`FeatureSpec` (the renderers
print them, :mod:`odtkit.io` saves them with a model), and computes each one through
:func:`evaluate_features`: the one definition of what a feature of a raw column is, shared by
``Binarizer.transform`` and the prediction of a saved model (``odtkit predict``), so the two
cannot drift apart. It imports no odtkit module: the renderers (:mod:`odtkit.render`, which
re-exports :class:`FeatureSpec`) and the datasets package both stand on it (in ``datasets/``,
the renderers' import would close a cycle through the lazily loaded Binarizer). The reading of
a column as numbers (:func:`_numeric`) is here for the same reason; ``datasets/_columns.py``
re-exports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

__all__ = [
    "FeatureKind",
    "FeatureSpec",
    "UnreadableColumn",
    "evaluate_features",
    "format_threshold",
]

FeatureKind = Literal["binary", "threshold", "category", "missing"]
_KINDS = ("binary", "threshold", "category", "missing")


def format_threshold(value: float) -> str:
    """Shortest text that reads back as exactly ``value`` (``25.5``, ``3``, ``1e-07``).

    ``repr`` round-trips, so two different thresholds never get the same text; only the
    redundant ``.0`` of whole numbers is dropped.
    """
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _format_value(value: object) -> str:
    if isinstance(value, (float, np.floating)):
        return format_threshold(float(value))
    return str(value)


@dataclass(frozen=True)
class FeatureSpec:
    """What one binary feature tests on the raw data.

    Parameters
    ----------
    source : str
        The raw column the feature is computed from.
    kind : {"binary", "threshold", "category", "missing"}
        ``threshold``: the feature is ``source <= value``; ``category``: ``source == value``;
        ``binary``: the raw column itself is 0/1 (``value`` unused); ``missing``: the value of
        ``source`` is missing (``value`` unused).
    value : float, category value or None
    missing : bool or None, default=None
        The feature's value on a row whose ``source`` is missing, for a column that had
        missing values when the features were chosen: ``True`` (``age <= 40.5 or missing``)
        or ``False`` (``age <= 40.5``, so ``age > 40.5 or missing`` when 0). ``None``: the
        column had no missing values; the text then does not mention them (such a feature is
        0 on a missing value, see :class:`~odtkit.datasets.Binarizer`). Ignored by ``missing``.
    """

    source: str
    kind: FeatureKind = "binary"
    value: Any = None
    missing: bool | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(
                f"kind must be 'binary', 'threshold', 'category' or 'missing', got {self.kind!r}"
            )
        if self.missing not in (None, True, False):
            raise ValueError(f"missing must be None, True or False, got {self.missing!r}")

    @property
    def name(self) -> str:
        """The feature's column name (what ``Binarizer.get_feature_names_out`` returns)."""
        if self.kind == "missing":
            return f"{self.source} is missing"
        if self.kind in ("threshold", "category"):
            operator, value = self._comparison(1)
            name = f"{self.source}{operator}{value}"
        else:
            name = self.source
        # the "missing fails" feature keeps the plain name: it is what x <= t means on NaN
        return f"{name} or missing" if self.missing else name

    def condition(self, bit: int) -> str:
        """The test a sample with feature value ``bit`` (0 or 1) passes, as text."""
        if self.kind == "missing":
            return f"{self.source} is {'' if bit else 'not '}missing"
        if self.kind in ("threshold", "category"):
            operator, value = self._comparison(bit)
            text = f"{self.source} {operator} {value}"
        else:
            text = f"{self.source} = {int(bit)}"
        # a missing value passes the side whose bit is the feature's value on it
        if self.missing is not None and bool(bit) == self.missing:
            text += " or missing"
        return text

    def _comparison(self, bit: int) -> tuple[str, str]:
        """The operator and value text of a threshold or category feature's side ``bit``."""
        if self.kind == "threshold":
            return ("<=" if bit else ">"), format_threshold(self.value)
        return ("=" if bit else "!="), _format_value(self.value)

    def evaluate(self, column: pd.Series | np.ndarray) -> np.ndarray:
        """This feature computed from the raw ``column``: a bool array, one entry per row.

        ``threshold``: ``x <= value``; ``category``: ``x == value``; ``binary``: ``x == 1``;
        ``missing``: ``x`` is missing (NaN, None, ``pd.NA``). On a missing cell the feature is
        :attr:`missing` (``None`` and ``False``: False), whatever its kind. This is the one
        definition of what a feature computes: :meth:`Binarizer.transform
        <odtkit.datasets.Binarizer.transform>` and a model loaded by :func:`odtkit.io.load`
        both evaluate their features through it (:func:`evaluate_features`, which reads the
        column once for all the features of one column).

        Parameters
        ----------
        column : Series or 1-D array-like
            The raw values of :attr:`source`, in row order.

        Returns
        -------
        ndarray of bool, shape (n_rows,)

        Raises
        ------
        ValueError
            A ``threshold`` or ``binary`` feature on a column of text or with infinite values
            (:class:`UnreadableColumn`, naming the column).
        """
        return evaluate_features([self], column)[:, 0]

    def __str__(self) -> str:
        return self.name


class UnreadableColumn(ValueError):
    """A column a ``threshold`` or ``binary`` feature cannot read as numbers.

    The message is the Binarizer's; ``source`` names the column, and ``infinite_rows`` holds
    the positions of its infinite cells (empty when the column holds text), so that a caller
    can name them as it numbers rows (``odtkit predict``: by line of the file).
    """

    def __init__(self, message: str, source: str, infinite_rows: np.ndarray) -> None:
        super().__init__(message)
        self.source = source
        self.infinite_rows = infinite_rows


def _numbers(column: pd.Series, source: str) -> np.ndarray:
    """``column`` as floats (missing cells NaN): the Binarizer's reading, its refusals as
    :class:`UnreadableColumn`."""
    try:
        return _numeric(column, source)
    except ValueError as exc:
        try:
            values = column.to_numpy(dtype=float, na_value=np.nan)
            rows = np.flatnonzero(np.isinf(values))
        except (TypeError, ValueError):
            rows = np.empty(0, dtype=np.intp)
        raise UnreadableColumn(str(exc), source, rows) from exc


def evaluate_features(specs: Sequence[FeatureSpec], column: pd.Series | np.ndarray) -> np.ndarray:
    """The features ``specs``, all of one raw column, computed from ``column``.

    What :meth:`FeatureSpec.evaluate` computes for each, vectorized: the column is read once
    (as numbers only when a ``threshold`` or ``binary`` feature needs it) and each run of
    thresholds compared in one operation, so a Binarizer's ``transform`` costs a few array
    operations per column, not per feature.

    Parameters
    ----------
    specs : sequence of FeatureSpec
        Features of one source column (their ``source`` is not checked: ``column`` is it).
    column : Series or 1-D array-like
        The raw values, in row order.

    Returns
    -------
    ndarray of bool, shape (n_rows, len(specs))
        Column ``k`` is ``specs[k]`` on each row.
    """
    if not isinstance(column, pd.Series):
        column = pd.Series(np.asarray(column, dtype=object)).infer_objects()
    blocks = _feature_blocks(specs, column)
    if not blocks:
        return np.zeros((len(column), 0), dtype=bool)
    return np.ascontiguousarray(np.hstack(blocks))


def _feature_blocks(specs: Sequence[FeatureSpec], column: pd.Series) -> list[np.ndarray]:
    """:func:`evaluate_features` as blocks of columns to stack (the Binarizer stacks those of
    every column at once): one block per run of consecutive features of one kind and one
    ``missing`` side, the Binarizer's layout (the plain thresholds, the same "or missing",
    "is missing"), each run one array operation."""
    absent = _absent(column)
    blanks = bool(absent.any())
    source = str(specs[0].source) if specs else ""
    values: np.ndarray | None = None
    levels: tuple[pd.Index, np.ndarray] | None = None  # the category index and cell codes
    previous: tuple[np.ndarray, np.ndarray] | None = None  # a threshold run's cuts and test
    blocks: list[np.ndarray] = []
    k = 0
    while k < len(specs):
        kind, passes = specs[k].kind, bool(specs[k].missing)
        end = k + 1
        while end < len(specs) and specs[end].kind == kind and bool(specs[end].missing) == passes:
            end += 1
        run = specs[k:end]
        k = end
        if kind == "missing":
            blocks.append(np.repeat(absent[:, None], len(run), axis=1))
            continue
        if kind == "category":
            if levels is None:
                # one hash lookup per cell: an unseen level (and a missing cell) is -1
                index = pd.Index([s.value for s in specs if s.kind == "category"])
                index = index if index.is_unique else index.unique()
                levels = (index, index.get_indexer(column.to_numpy()))
            wanted = levels[0].get_indexer([s.value for s in run])
            test = levels[1][:, None] == wanted[None, :]
        else:
            if values is None:
                values = _numbers(column, source)
            if kind == "threshold":
                cuts = np.asarray([float(s.value) for s in run], dtype=float)
                if previous is not None and np.array_equal(previous[0], cuts):
                    test = previous[1]  # "x <= t or missing" after "x <= t": one comparison
                else:
                    # NaN <= t is False: a missing cell fails every threshold
                    test = values[:, None] <= cuts[None, :]
                    previous = (cuts, test)
            else:  # binary: x == 1
                test = np.repeat((values == 1)[:, None], len(run), axis=1)
        # on a missing cell the feature is its ``missing`` side (None or False: False)
        blocks.append(test | absent[:, None] if passes and blanks else test)
    return blocks


def _absent(column: pd.Series) -> np.ndarray:
    """The column's missing cells: a numpy float column's are its NaNs (read from its array,
    ~8x cheaper than ``isna``'s Series on every transform); any other dtype asks pandas."""
    if isinstance(column.dtype, np.dtype) and column.dtype.kind == "f":
        nan: np.ndarray = np.isnan(column.to_numpy())
        return nan
    return np.asarray(column.isna(), dtype=bool)


def _numeric(column: pd.Series, name: str) -> np.ndarray:
    """The column as floats, a missing cell (NaN, None, ``pd.NA``) as NaN; infinities refused."""
    # the dtype directly, not through a one-column frame (~0.2 ms a column on every fit)
    _refuse_complex_dtype(column.dtype, name)
    try:
        values: np.ndarray = column.to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"column {name!r} must be numeric, got values such as {column.iloc[:3].tolist()}"
        ) from exc
    if np.isinf(values).any():
        raise ValueError(f"column {name!r} has infinite values; Binarizer needs finite numbers")
    return values


def _refuse_complex(frame: pd.DataFrame, names: list[str]) -> None:
    """A complex column refused naming it: cast to float it kept only its real part, with
    nothing but numpy's ComplexWarning."""
    for name, dtype in zip(names, frame.dtypes, strict=True):
        _refuse_complex_dtype(dtype, name)


def _refuse_complex_dtype(dtype: object, name: str) -> None:
    if getattr(dtype, "kind", "") == "c":
        raise ValueError(
            f"column {name!r} holds complex numbers; Binarizer needs real numbers or categories"
        )

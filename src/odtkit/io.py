"""Saving and loading a fitted tree with everything needed to predict raw rows (JSON only).

A model file is the JSON that ``odtkit fit --out`` writes: the tree (:meth:`Tree.to_dict
<odtkit.tree.Tree.to_dict>`), one description per binary feature (its source column, kind,
threshold or category, and where a blank cell goes: :class:`~odtkit.render.FeatureSpec`), the
classes, the label column's name, how the training table was read
(:class:`~odtkit.datasets.TableReading`), the certificate (over what the tree is proven
optimal) and the fit's record (status, objective, lower bound, binarization, ...). Loading one
runs no code: it is parsed as JSON and checked, never unpickled. Files written by earlier
versions (without ``reading``) still load, read with the default reading.

>>> from odtkit import OptimalTreeClassifier, io  # doctest: +SKIP
>>> io.save(OptimalTreeClassifier().fit(X, y), "tree.json")  # doctest: +SKIP
>>> io.load("tree.json").predict(new_rows)  # doctest: +SKIP

The CLI (``odtkit fit --out``, ``odtkit predict``) is a thin adapter over this module; a file
saved from a notebook is one ``odtkit predict`` reads, and the other way round.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from odtkit._features import FeatureSpec, UnreadableColumn, evaluate_features
from odtkit.datasets import TableReading, binary_kind
from odtkit.tree import Tree

__all__ = [
    "ModelFileError",
    "SavedModel",
    "dumps",
    "feature_dicts",
    "load",
    "loads",
    "save",
    "tree_record",
]

_WRITTEN_BY = "expected a tree file written by 'odtkit fit --out'"


class ModelFileError(ValueError):
    """A model file :func:`load` refuses (not JSON, no tree, malformed parts), or a feature of
    a loaded model this version cannot evaluate. The message names the file; ``odtkit
    predict`` prints it after ``MODEL:``."""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _shown(names: Iterable[Any], limit: int = 10) -> str:
    texts = [str(n) for n in names]
    return ", ".join(texts[:limit]) + (f", ... ({len(texts)} in all)" if len(texts) > limit else "")


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def dumps(record: Mapping[str, Any]) -> str:
    """``record`` as the JSON text a model file holds (numpy scalars and arrays as numbers and
    lists, anything else not JSON as its text); what ``odtkit ... --json`` prints too."""
    return json.dumps(record, indent=1, default=_json_default)


def feature_dicts(specs: Sequence[FeatureSpec]) -> list[dict[str, Any]]:
    """The ``features`` entry of a model file: per binary feature its source column, kind,
    value (threshold or category) and ``missing`` (where a blank cell goes; None: the column
    had no blanks when fitted)."""
    return [
        {
            "source": s.source,
            "kind": s.kind,
            "value": s.value,
            "missing": getattr(s, "missing", None),
        }
        for s in specs
    ]


def tree_record(
    result: Any,
    dataset: Any,
    *,
    label: str | None,
    method: str,
    lam: float,
    max_depth: int | None,
    certificate: str | None,
    binarization: Mapping[str, Any] | None,
    features: Sequence[Mapping[str, Any]] | None,
    reading: TableReading | None,
) -> dict[str, Any]:
    """What ``odtkit fit --json`` prints and ``--out`` writes: the answer, how to read the
    tree, and everything :func:`load` needs to binarize new rows the same way (``features``:
    per binary feature its source column, kind and threshold or category; see
    :func:`feature_dicts`).

    Parameters
    ----------
    result : odtkit.Result
        The fit's result (its ``model`` the tree, or None).
    dataset : odtkit.datasets.Dataset
        The binary training data the tree was fitted on.
    label, method, lam, max_depth, certificate, binarization, features, reading
        Stored as given (``reading`` as :meth:`TableReading.to_dict`).
    """
    from odtkit import metrics

    tree = result.model
    record: dict[str, Any] = {
        "data": dataset.name,
        "label": label,
        "method": method,
        "lam": lam,
        "max_depth": max_depth,
        "status": result.status,
        "certificate": certificate,
        "objective": result.objective,
        "lower_bound": result.lower_bound,
        "gap": result.gap,
        "time": result.time,
        "message": result.message,
        "binarization": binarization,
        # how the table was read: predict reads new rows the same way (a file without it,
        # from an older odtkit, is read with the defaults)
        "reading": None if reading is None else reading.to_dict(),
    }
    if tree is not None:
        record.update(
            n_leaves=tree.n_leaves,
            depth=tree.depth,
            train_accuracy=metrics.accuracy(tree, dataset),
            feature_names=list(dataset.feature_names),
            features=features,
            classes=dataset.classes.tolist(),
            tree=tree.to_dict(),
        )
    return record


def _spec(entry: Mapping[str, Any]) -> FeatureSpec | None:
    """A model file's feature entry as a FeatureSpec; None when this version cannot read it
    (an unknown kind): refused only if the tree tests it (:meth:`SavedModel.feature_bits`)."""
    try:
        return FeatureSpec(
            str(entry["source"]), entry["kind"], entry.get("value"), entry.get("missing")
        )
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class SavedModel:
    """A fitted tree as :func:`load` read it (or :func:`save` wrote it).

    Attributes
    ----------
    tree : Tree
        The tree over the binary features (leaves hold class indices).
    features : list of FeatureSpec or None
        What each binary feature the tree indexes computes from a raw column (None: an entry
        this version cannot read, refused when the tree tests it).
    classes : list
        The class values, indexed by the leaves' labels.
    label : str or None
        The label column of the training table (None: not known).
    reading : TableReading
        How the training table was read: read new rows the same way
        (``odtkit.datasets.read_table(path, reading=model.reading)``).
    certificate : str or None
        Over what the tree is proven optimal (``all thresholds``, ``guessed thresholds``,
        ``binarization``), None when it is not.
    record : dict
        The whole file: the fit's status, objective, lower bound, binarization, ...
    """

    tree: Tree
    features: list[FeatureSpec | None]
    classes: list[Any]
    label: str | None = None
    reading: TableReading = field(default_factory=TableReading)
    certificate: str | None = None
    record: dict[str, Any] = field(default_factory=dict)

    def read_rows(self, path: str | os.PathLike[str]) -> pd.DataFrame:
        """The table at ``path`` read as the training table was (:attr:`reading`; the
        separator detected afresh), ready for :meth:`predict`."""
        import dataclasses

        from odtkit.datasets import read_table_and_reading

        reading = dataclasses.replace(self.reading, sep=None)
        return read_table_and_reading(Path(os.fspath(path)), reading)[0]

    def used_columns(self) -> list[str]:
        """The raw columns the tree tests, in the order of the features it tests."""
        entries = self.record.get("features") or []
        sources = []
        for j in sorted(self.tree.features_used()):
            spec = self.features[j]
            sources.append(spec.source if spec is not None else str(entries[j].get("source")))
        return list(dict.fromkeys(sources))

    def feature_bits(
        self, frame: pd.DataFrame, *, name: str = "X", first_line: int | None = None
    ) -> np.ndarray:
        """The binary features the tree tests, computed from ``frame``'s raw columns by
        :meth:`FeatureSpec.evaluate <odtkit.render.FeatureSpec.evaluate>`, as the fitted
        Binarizer computes them; the features the tree does not test stay False.

        Parameters
        ----------
        frame : DataFrame
            Raw rows with (at least) the columns the tree tests (:meth:`used_columns`).
        name : str, default="X"
            What messages call the table (``odtkit predict``: the file's name).
        first_line : int or None, default=None
            Messages name rows by position from 0; given, by line: row ``i`` is line
            ``first_line + i`` (``odtkit predict``: 2, the line under the header).

        Returns
        -------
        ndarray of bool, shape (n_rows, n_features)

        Raises
        ------
        ValueError
            A column the tree tests is absent, holds text where numbers are compared, or
            infinite values (fitting refuses them too); :class:`ModelFileError` for a tested
            feature of a kind this version does not know.

        Warns
        -----
        UserWarning
            Blank cells in a column that had none when the tree was fitted (a blank then fails
            every test on it), or a categorical column none of whose values the tree knows.
        """
        entries = self.record.get("features") or []
        tested: dict[int, FeatureSpec] = {}
        for j in sorted(self.tree.features_used()):
            spec = self.features[j]
            if spec is None:
                kind = entries[j].get("kind") if j < len(entries) else None
                raise ModelFileError(f"feature {j} is of kind {kind!r}, unknown to this odtkit")
            tested[j] = spec
        needed = self.used_columns()
        absent_columns = [c for c in needed if c not in frame.columns]
        if absent_columns:
            raise ValueError(
                f"{name} has no column {absent_columns[0]!r}, which the tree tests "
                f"(it tests {_shown(needed)})"
            )
        X = np.zeros((len(frame), max(len(self.features), 1)), dtype=bool)
        for source in needed:
            column = frame[source]
            mine = [j for j, spec in tested.items() if spec.source == source]
            self._warn_on(column, source, name, first_line)
            try:
                X[:, mine] = evaluate_features([tested[j] for j in mine], column)
            except UnreadableColumn as exc:
                raise ValueError(_unreadable(exc, column, name, first_line)) from None
        return X

    def predict(
        self, frame: pd.DataFrame, *, name: str = "X", first_line: int | None = None
    ) -> np.ndarray:
        """The predicted class of each row of ``frame`` (an object array of class values).

        ``frame`` holds raw rows (read as the training table was: :attr:`reading`); the
        features are computed by :meth:`feature_bits` (see it for ``name``, ``first_line``
        and what is refused or warned about).
        """
        bits = self.feature_bits(frame, name=name, first_line=first_line)
        predicted: np.ndarray = np.asarray(self.classes, dtype=object)[self.tree.predict(bits)]
        return predicted

    def _warn_on(self, column: pd.Series, source: str, name: str, first_line: int | None) -> None:
        own = [s for s in self.features if s is not None and s.source == source]
        absent = np.array(column.isna(), dtype=bool)
        fitted_with_blanks = any(s.kind == "missing" or s.missing for s in own)
        if absent.any() and not fitted_with_blanks:
            rows = np.flatnonzero(absent)
            warnings.warn(
                f"column {source!r} of {name} has {_plural(rows.size, 'blank cell')} "
                f"({_where(rows, first_line, always_plural=True)}) but had none when the tree "
                "was fitted: a blank fails every test on it (x <= t, x = v, x = 1)",
                UserWarning,
                stacklevel=3,
            )
        levels = [s.value for s in own if s.kind == "category"]
        if levels:
            index = pd.Index(levels)
            codes = (index if index.is_unique else index.unique()).get_indexer(column.to_numpy())
            if (codes[~absent] < 0).all():
                warnings.warn(
                    f"no value of column {source!r} in {name} is one of the categories the "
                    f"tree was fitted on ({_shown(levels, 5)})",
                    UserWarning,
                    stacklevel=3,
                )


def _where(rows: np.ndarray, first_line: int | None, *, always_plural: bool = False) -> str:
    """``lines 4, 9`` (``first_line`` given) or ``rows 2, 7``: the first five, then ``...``."""
    word = "row" if first_line is None else "line"
    offset = 0 if first_line is None else first_line
    listed = ", ".join(str(i + offset) for i in rows[:5]) + (", ..." if rows.size > 5 else "")
    return f"{word}{'' if rows.size == 1 and not always_plural else 's'} {listed}"


def _unreadable(exc: UnreadableColumn, column: pd.Series, name: str, first_line: int | None) -> str:
    """The message of a column a tested feature cannot read, naming the table and rows."""
    rows = exc.infinite_rows
    if rows.size:
        return (
            f"column {exc.source!r} of {name} has {_plural(rows.size, 'infinite value')} "
            f"({_where(rows, first_line)}); fit refuses them too: give finite numbers or blank "
            "cells"
        )
    if "must be numeric" in str(exc):
        return (
            f"column {exc.source!r} of {name} must be numeric (the tree compares it with a "
            f"threshold), got values such as {column.iloc[:3].tolist()}"
        )
    return f"{name}: {exc}"


def load(path: str | os.PathLike[str]) -> SavedModel:
    """The model file at ``path``, checked (JSON only: loading it runs no code).

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`save` or ``odtkit fit --out`` (of this or an earlier
        version).

    Returns
    -------
    SavedModel

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ModelFileError
        Not JSON, no tree, malformed features, classes, tree or reading, or a tree indexing
        features or classes the file does not list.
    """
    text = os.fspath(path)
    where = Path(text)
    if not where.is_file():
        raise FileNotFoundError(f"{text!r}: no such file")
    return loads(where.read_bytes(), name=where.name)


def loads(content: str | bytes, *, name: str = "the model") -> SavedModel:
    """A model from the text of a model file (what :func:`dumps` of its record wrote), checked
    as :func:`load` checks a file; ``name`` is what messages call it."""
    raw = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    kind = binary_kind(raw[:4096])
    if kind is not None:
        raise ModelFileError(f"{name} is not JSON ({kind}); {_WRITTEN_BY}")
    try:
        payload = json.loads(raw.decode("utf-8-sig"))
    except ValueError as exc:
        raise ModelFileError(f"{name} is not JSON ({exc}); {_WRITTEN_BY}") from None
    return _checked_model(payload, name)


def _checked_model(payload: Any, name: str) -> SavedModel:
    if not isinstance(payload, dict) or not isinstance(payload.get("tree"), dict):
        raise ModelFileError(f"{name} holds no tree; {_WRITTEN_BY}")
    if "features" not in payload:
        raise ModelFileError(
            f"{name} was written by an older odtkit without the binarization; fit it "
            "again with 'odtkit fit --out'"
        )
    specs, classes = payload["features"], payload.get("classes")
    good_specs = isinstance(specs, list) and all(
        isinstance(s, dict) and isinstance(s.get("source"), str) and "kind" in s for s in specs
    )
    if not good_specs or not isinstance(classes, list) or not classes:
        raise ModelFileError(f"{name} has malformed 'features' or 'classes'; {_WRITTEN_BY}")
    try:
        tree = Tree.from_dict(payload["tree"])
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"{name} has a malformed tree ({exc})") from None
    used = tree.features_used()
    labels = {label for _, label in tree.leaves()}
    if (used and max(used) >= len(specs)) or max(labels) >= len(classes):
        raise ModelFileError(f"{name}: the tree indexes features or classes it does not list")
    label = payload.get("label")
    reading = payload.get("reading")
    try:
        # absent (a file of an older odtkit) or null: the default reading
        how = TableReading.from_dict(reading if isinstance(reading, dict) else None)
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"{name} has a malformed 'reading' ({exc})") from None
    certificate = payload.get("certificate")
    return SavedModel(
        tree,
        [_spec(s) for s in specs],
        classes,
        label if isinstance(label, str) else None,
        how,
        certificate if isinstance(certificate, str) else None,
        payload,
    )


def _estimator_record(estimator: Any) -> dict[str, Any]:
    """The model file of a fitted :class:`~odtkit.OptimalTreeClassifier` (or a subclass):
    its tree, features (``binarizer_``'s, else its 0/1 columns by name), classes, certificate
    and the fit's record."""
    tree = getattr(estimator, "tree_", None)
    if not isinstance(tree, Tree):
        raise TypeError(
            "save needs a fitted tree estimator (OptimalTreeClassifier, fitted: tree_ set) or "
            f"a SavedModel, got {type(estimator).__name__}"
        )
    binarizer = getattr(estimator, "binarizer_", None)
    if binarizer is not None:
        features = feature_dicts(binarizer.get_feature_specs())
    else:
        features = [
            {"source": str(n), "kind": "binary", "value": None} for n in estimator.feature_names_
        ]
    result = getattr(estimator, "result_", None)
    certificate = getattr(estimator, "certificate_", None)
    certificate = getattr(certificate, "value", certificate)  # an enum: its text
    classes = np.asarray(estimator.classes_)
    return {
        "data": None,
        "label": None,
        "method": getattr(estimator, "method", None),
        "lam": getattr(estimator, "lam", None),
        "max_depth": getattr(estimator, "max_depth", None),
        "status": None if result is None else str(getattr(result.status, "value", result.status)),
        "certificate": None if certificate is None else str(certificate),
        "objective": None if result is None else result.objective,
        "lower_bound": None if result is None else result.lower_bound,
        "gap": None if result is None else result.gap,
        "time": None if result is None else result.time,
        "message": None if result is None else result.message,
        "binarization": None,
        "reading": None,
        "n_leaves": tree.n_leaves,
        "depth": tree.depth,
        "feature_names": [str(n) for n in estimator.feature_names_],
        "features": features,
        "classes": classes.tolist(),
        "tree": tree.to_dict(),
    }


def save(model: Any, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
    """Write ``model`` to ``path`` as a model file (JSON), atomically.

    Parameters
    ----------
    model : SavedModel or fitted OptimalTreeClassifier
        A loaded model (written back as it was read), or a fitted tree estimator: its tree,
        feature descriptions (``binarizer_``), classes, certificate and result. ``odtkit
        predict MODEL DATA`` then predicts a CSV's rows as ``model.predict`` does (the columns
        named as in the DataFrame the estimator was fitted on).
    path : str or path-like
    overwrite : bool, default=False
        Replace an existing file (otherwise a ValueError).

    Raises
    ------
    TypeError
        ``model`` is neither a SavedModel nor a fitted tree estimator.
    ValueError
        ``path`` exists and ``overwrite`` is False, or cannot be written.
    """
    from odtkit.files import check_out, write_atomic

    record = model.record if isinstance(model, SavedModel) else _estimator_record(model)
    text = dumps(record)
    target = Path(os.fspath(path))
    loads(text, name=target.name)  # what is written loads back
    check_out(str(target), inputs={}, force=overwrite, option="path")
    write_atomic(target, text, replace=overwrite)

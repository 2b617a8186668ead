"""The CLI's table door: reading a CSV (or naming a bundled dataset), choosing the label and
feature columns, the fairness columns, and binarizing it as the estimators do
(``--thresholds``); the arguments that say how (``--label``, ``--columns``, ``--na-values``,
...)."""

from __future__ import annotations

import argparse
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from odtkit.cli._common import (
    NO_HEADER_HELP,
    BadInput,
    _checked,
    _columns,
    _depth,
    _plural,
    _shown,
)


@dataclass
class _Data:
    """A loaded problem: the dataset, the fairness constraint and how its features read."""

    dataset: Any
    fairness: Any
    #: what the printers name features by: the fitted Binarizer (``age <= 40.5``) or names
    features: Any
    label: str | None = None
    #: JSON summary of how a CSV was binarized (None for a bundled dataset)
    binarization: dict[str, Any] | None = None
    #: one dict per binary feature (source, kind, value): what ``predict`` re-evaluates
    specs: list[dict[str, Any]] | None = None
    #: the CSV's raw feature columns and labels, kept for the exact search (``--thresholds
    #: all``), which reads them instead of a binarization (None otherwise)
    frame: pd.DataFrame | None = None
    labels: Any = None
    #: how the table was read (odtkit.datasets.TableReading; None for a bundled dataset):
    #: ``fit --out`` stores it so that ``predict`` reads new rows the same way
    reading: Any = None
    #: the problem as odtkit.Task states it (what fit solves and the certificate reads)
    task: Any = None


def _is_file_argument(text: str) -> bool:
    path = Path(text)
    return path.suffix.lower() in (".csv", ".tsv", ".txt") or path.is_file()


def _reading(args: argparse.Namespace, stored: Any = None) -> Any:
    """How to read a table: ``stored`` (what the model was fitted with; None: the defaults)
    with the options given on the command line (``--na-values``, ``--decimal``,
    ``--thousands``, ``--dates``) in place of its own; the separator is detected afresh."""
    import dataclasses

    from odtkit.datasets import TableReading

    given = {
        "na_values": getattr(args, "na_values", None),
        "decimal": getattr(args, "decimal", None),
        "thousands": getattr(args, "thousands", None),
        "dates": getattr(args, "dates", None),
    }
    if given["na_values"] is not None:
        given["na_values"] = tuple(_columns(given["na_values"]))
    changes = {key: value for key, value in given.items() if value is not None}
    try:
        return dataclasses.replace(stored or TableReading(), sep=None, **changes)
    except (ValueError, TypeError) as exc:
        message = str(exc)
        for key in given:
            message = message.replace(key, "--" + key.replace("_", "-"), 1)
        raise BadInput(message) from None


def _read_table(
    text: str,
    what: str,
    *,
    min_rows: int = 2,
    min_columns: int = 2,
    header: bool = True,
    reading: Any = None,
) -> tuple[pd.DataFrame, str, Any]:
    """The table of a file argument, its file name and how it was read (a
    :class:`odtkit.datasets.TableReading`: the separator found, the date columns' units);
    refuses what is not a table.

    ``what`` is the argument as the usage names it (``DATA``, ``--dataset``). ``header=False``
    (``--no-header``): the first row is data and the columns are named ``0, 1, ...``; with a
    header, a first row made only of numbers is refused (it is data: pandas would silently
    take it for the column names and lose it). Notes on the reading (spaces removed, columns
    that look like numbers or dates) are warnings: one line each on stderr.
    """
    from odtkit.datasets import read_table_and_reading
    from odtkit.files import numeric_header

    path = Path(text)
    if not path.is_file():
        reason = "is a directory, not a file" if path.is_dir() else "no such file"
        raise BadInput(f"{what} {text!r}: {reason}")
    try:
        frame, how = read_table_and_reading(path, reading, header=header, flags=True)
    except ValueError as exc:
        raise BadInput(f"{what}: {exc}") from None
    except OSError as exc:
        raise BadInput(f"{what} {text!r}: {exc.strerror or exc}") from None
    frame.columns = [str(c) for c in frame.columns]
    if header and numeric_header(frame.columns):
        raise BadInput(
            f"{what}: the first row of {path.name} is only numbers ({_shown(frame.columns, 5)}), "
            "so it is data, not a header row; if the file has no header, pass --no-header "
            "(columns are then named 0, 1, ... by position: --label 4)"
        )
    # prose parses as a header of words over a row or two of mostly blank cells
    filled = int(frame.notna().any(axis=0).sum())
    if filled < min_columns:
        need = "a feature column and a label column" if min_columns > 1 else "a column"
        reason = f"{filled} column(s) with values, need {need}; is it separated by , ; or tabs?"
    elif frame.shape[0] < min_rows:
        reason = f"{frame.shape[0]} row(s) under the header, need at least {min_rows}"
    else:
        return frame, path.name, how
    raise BadInput(
        f"{what}: {path.name} is not a table ({reason}); expected a header row, then one row "
        "per example, e.g. 'age,income,colour,y'"
    )


def _unnamed(column: str) -> bool:
    """A column pandas named because its header cell is blank (``Unnamed: 3``)."""
    return re.fullmatch(r"Unnamed: \d+", column) is not None


def _label(frame: pd.DataFrame, args: argparse.Namespace, name: str) -> str:
    """``--label``, checked: a column of ``frame`` with a name in the header; by default the
    last named column."""
    label = args.label
    if label is None:
        named = [c for c in frame.columns if not _unnamed(str(c))]
        return str(named[-1] if named else frame.columns[-1])
    if not label.strip():
        raise BadInput(
            f"--label {label!r}: give the label column's name (default: the last column)"
        )
    if label not in frame.columns:
        raise BadInput(
            f"--label {label!r} is not a column of {name} (columns: {_shown(frame.columns)})"
        )
    if _unnamed(label):
        raise BadInput(
            f"--label {label!r}: that column of {name} has no name in the header row ({label!r} "
            "is what pandas calls it); write a name in the header and pass it to --label"
        )
    return str(label)


def _select_columns(
    frame: pd.DataFrame, args: argparse.Namespace, *, keep: Sequence[str], name: str
) -> pd.DataFrame:
    """``--columns`` / ``--drop`` applied to the feature columns (``keep`` always stays)."""
    chosen, dropped = _columns(args.columns), _columns(args.drop)
    if chosen and dropped:
        raise BadInput("give --columns or --drop, not both")
    for option, names in (("--columns", chosen), ("--drop", dropped)):
        unknown = [c for c in names if c not in frame.columns]
        if unknown:
            raise BadInput(
                f"{option} names {_shown(unknown)}, not a column of {name} "
                f"(columns: {_shown(frame.columns)})"
            )
    if dropped:
        needed = [c for c in dropped if c in keep]
        if needed:
            raise BadInput(
                f"--drop {needed[0]!r}: that is the label or a --protected/--legit column"
            )
        return frame.drop(columns=dropped)
    if chosen:
        wanted = set(chosen) | set(keep)
        return frame[[c for c in frame.columns if c in wanted]]
    return frame


def _threshold_choice(args: argparse.Namespace) -> str | int:
    """``--thresholds`` (default ``guess``), or the deprecated ``--max-thresholds N``."""
    choice: str | int | None = getattr(args, "thresholds", None)
    old: int | None = getattr(args, "max_thresholds", None)
    if old is None:
        return "guess" if choice is None else choice
    if choice is not None:
        raise BadInput("--max-thresholds is the old spelling of --thresholds N: give only one")
    if old < 1:
        raise BadInput(f"--max-thresholds must be >= 1, got {old}")
    warnings.warn(
        f"--max-thresholds is deprecated; use --thresholds {old} (the same thresholds)",
        FutureWarning,
        stacklevel=1,
    )
    return old


def _binarization(binarizer: Any, choice: str | int, exact: bool = False) -> dict[str, Any]:
    """How a table was binarized: per column its kind and features, and one sentence.

    ``exact``: ``binarizer`` is the exact search's, holding only the thresholds its tree uses.
    """
    from odtkit.methods import GUESS_ROUNDS

    specs = binarizer.get_feature_specs()
    counts = Counter(spec.source for spec in specs)
    # columns with blank cells at fit (a Binarizer that encodes missing values says which)
    blanks = [str(c) for c in getattr(binarizer, "missing_columns_", [])]
    columns = []
    for name in (str(c) for c in binarizer.feature_names_in_):
        entry: dict[str, Any] = {
            "name": name,
            "n_features": counts.get(name, 0),
            "blank_cells": name in blanks,
        }
        if name in binarizer.categories_:
            entry.update(kind="category", categories=list(binarizer.categories_[name]))
        elif name in binarizer.binary_columns_:
            entry.update(kind="binary")
        else:
            thresholds = binarizer.thresholds_.get(name, [])
            entry.update(kind="threshold", thresholds=[float(t) for t in thresholds])
        columns.append(entry)
    how = {
        "guess": f"--thresholds guess ({GUESS_ROUNDS} boosting rounds)",
        "all": "--thresholds all (every midpoint)",
        # the exact search did not run (a constraint, a MIP, no depth): the guess
        "auto": f"--thresholds auto (the guess here: {GUESS_ROUNDS} boosting rounds)",
    }.get(str(choice), f"--thresholds {choice} (at most {choice} per column)")
    if exact:
        how = (
            f"--thresholds {choice} (the exact search over every threshold; the tree's thresholds)"
        )
    parts = []
    for kind, word in (("threshold", "numeric"), ("category", "categorical"), ("binary", "0/1")):
        group = [c for c in columns if c["kind"] == kind]
        if not group:
            continue
        used = [f"{c['name']} {c['n_features']}" for c in group if c["n_features"]]
        unused = len(group) - len(used)
        detail = ", ".join(used)
        if unused:
            guessed = choice in ("guess", "auto")
            why = "constant or never split on by the guess" if guessed else "constant"
            why = "not split on by the tree" if exact else why
            detail += ("; " if used else "") + f"{unused} gave none: {why}"
        n_out = sum(c["n_features"] for c in group)
        parts.append(
            f"{_plural(len(group), word + ' column')} into {_plural(n_out, 'feature')} ({detail})"
        )
    if blanks:
        parts.append(f"blank cells in {_shown(blanks)} (features say where a blank goes)")
    summary = f"binarized with {how}: " + "; ".join(parts) if parts else "no feature columns"
    return {
        "thresholds": choice,
        "exact_search": exact,
        "n_columns": len(columns),
        "n_features": len(specs),
        "columns": columns,
        "summary": summary,
    }


def _check_labels(
    frame: pd.DataFrame, label: str, what: str, name: str, *, header: bool = True
) -> None:
    """Refuse blank label cells (named by their line in the file). A single class is no
    error, as in the API (``odtkit.validation.min_depth``): the tree is the one leaf, and the
    search's warning says so."""
    from odtkit.datasets import check_labels as blank_cells

    try:
        blank_cells(frame, label, first_line=2 if header else 1)
    except ValueError as exc:
        raise BadInput(f"{what}: {name}: {exc}") from None


def _load(
    args: argparse.Namespace, what: str, *, exact: bool = False, clock: bool = False
) -> _Data:
    """The dataset (a name or a CSV path), the fairness constraint of the arguments and how to
    name its features when printing (the fitted Binarizer of a CSV: ``age <= 40.5``).

    A protected column is taken out of the split features unless ``--split-on-protected``; in a
    CSV it keeps its raw values (any number of groups). Every other column of a CSV goes
    through the Binarizer (0/1 columns pass through as one feature; blank cells are the
    Binarizer's to handle), as ``--thresholds`` says.

    ``exact`` (the exact search over every threshold will run): a CSV is not binarized here,
    its feature columns and labels are returned raw (``frame``, ``labels``) with no dataset.
    ``clock`` (fit): binarization is charged to ``--time-limit``, as the estimators charge it
    to ``time_limit`` (:meth:`odtkit.Task.from_table`); the task's deadline holds what is left.
    """
    from odtkit.fairness import Fairness, split_protected
    from odtkit.io import feature_dicts
    from odtkit.task import Task

    notion = getattr(args, "fairness", None)  # fit has no fairness arguments
    protected = _columns(getattr(args, "protected", None))
    legit_column = getattr(args, "legit", None)
    if notion is None and (protected or legit_column):
        raise BadInput("--protected/--legit need --fairness NOTION")
    if notion is not None and not protected:
        raise BadInput("--fairness needs --protected COLUMN[,COLUMN...]")
    choice = _threshold_choice(args)
    values: Any = None
    legit: Any = None
    label: str | None = None
    binarization: dict[str, Any] | None = None
    reading: Any = None
    if _is_file_argument(args.dataset):
        frame, name, reading = _read_table(
            args.dataset, what, header=not args.no_header, reading=_reading(args)
        )
        label = _label(frame, args, name)
        legit_column = _fairness_columns(frame, name, label, protected, legit_column)
        frame = _select_columns(
            frame, args, keep=[label, *protected, *_columns(legit_column)], name=name
        )
        _check_labels(frame, label, what, name, header=not args.no_header)
        if protected:
            values = frame[protected].to_numpy()
            values = values[:, 0] if len(protected) == 1 else values
            if not args.split_on_protected:
                frame = frame.drop(columns=protected)
        if legit_column:
            legit = frame[legit_column].to_numpy()
        if frame.shape[1] < 2:
            raise BadInput(f"{what}: {name} has no feature column left besides the label")
        if exact:
            if notion is not None:
                raise BadInput(
                    "--fairness: the exact search over every threshold (method exact, "
                    "--thresholds all) takes no fairness constraint; use --thresholds guess"
                )
            return _Data(
                None,
                None,
                None,
                label,
                frame=frame.drop(columns=[label]),
                labels=frame[label].to_numpy(),
                reading=reading,
            )
        try:
            task = Task.from_table(
                frame.drop(columns=[label]),
                frame[label].to_numpy(),
                thresholds=choice,
                binarize=True,
                time_limit=args.time_limit if clock else None,
                name=Path(args.dataset).stem,
                exact=False,
            )
        except (ValueError, TypeError) as exc:
            raise BadInput(f"{what}: {name}: {exc}") from None
        dataset, binarizer = task.dataset, task.binarizer
        assert dataset is not None  # exact=False: binarized here
        features: Any = binarizer
        binarization = _binarization(binarizer, choice)
        specs = feature_dicts(binarizer.get_feature_specs())
    else:
        if _columns(args.columns) or _columns(args.drop) or args.no_header:
            raise BadInput(
                f"--columns/--drop/--no-header are for a CSV file; {args.dataset!r} is a bundled "
                "dataset"
            )
        dataset = _named_dataset(args.dataset, what)
        if protected:
            if args.split_on_protected:
                values = tuple(protected) if len(protected) > 1 else protected[0]
            else:
                dataset, values = _checked(
                    lambda: split_protected(
                        dataset, protected if len(protected) > 1 else protected[0]
                    )
                )
        if legit_column:
            legit = legit_column
        features = dataset.feature_names
        specs = [{"source": str(n), "kind": "binary", "value": None} for n in features]
        task = Task.from_dataset(dataset, time_limit=args.time_limit if clock else None)
    if exact:
        raise BadInput(
            f"{what} {args.dataset!r} is a bundled dataset, already binary: the exact search "
            "over every threshold (method exact) reads a CSV file's numeric columns"
        )
    constraints = _constraints(args)
    if constraints:
        try:
            task = task.constrained(constraints)
        except (ValueError, TypeError) as exc:
            flag = "--constraint" if getattr(args, "constraint", None) else "--costs"
            raise BadInput(f"{flag}: {exc}") from None
    if notion is None:
        return _Data(
            dataset, None, features, label, binarization, specs, reading=reading, task=task
        )
    # the labels of a CSV may be numbers: match the class whose text is --positive-class
    positive = next((c for c in dataset.classes if str(c) == args.positive_class), None)
    if positive is None:
        raise BadInput(
            f"--positive-class {args.positive_class!r} is not a class of the label "
            f"(classes: {_shown(dataset.classes)}); name the favourable one"
        )
    try:
        fairness = Fairness(
            notion, protected=values, delta=args.delta, positive_class=positive, legit=legit
        )
        fairness.groups(dataset)  # resolved here, so that its refusals are one line
    except (ValueError, TypeError, KeyError) as exc:
        raise BadInput(_fairness_message(str(exc), protected, legit_column)) from None
    return _Data(
        dataset, fairness, features, label, binarization, specs, reading=reading, task=task
    )


def _constraints(args: argparse.Namespace) -> list[Any]:
    """The ``--constraint`` texts parsed (:func:`odtkit.constraints.parse`) and the ``--costs``
    objective (:func:`odtkit.costs.parse`), stated together; [] when none."""
    from odtkit import costs
    from odtkit.constraints import parse

    out: list[Any] = []
    for text in getattr(args, "constraint", None) or ():
        try:
            out.append(parse(text))
        except ValueError as exc:
            raise BadInput(f"--constraint: {exc}") from None
    text = getattr(args, "costs", None)
    if text is not None:
        try:
            out.append(costs.parse(text))
        except (TypeError, ValueError) as exc:
            raise BadInput(f"--costs: {exc}") from None
    return out


def _stated(args: argparse.Namespace) -> bool:
    """Whether the arguments state a side constraint or a cost objective (the binarization's
    methods answer them; the exact search over every threshold sits out)."""
    return bool(getattr(args, "constraint", None)) or getattr(args, "costs", None) is not None


def _add_constraint_argument(parser: argparse.ArgumentParser) -> None:
    """``--constraint TEXT`` (repeatable): a side constraint in the syntax of
    :func:`odtkit.constraints.parse`, which ``fit`` and ``compare`` both take; and
    ``--costs TEXT``, a cost objective (:func:`odtkit.costs.parse`)."""
    from odtkit import costs
    from odtkit.constraints import SYNTAX

    parser.add_argument(
        "--constraint",
        action="append",
        metavar="TEXT",
        help="a side constraint every tree must meet (repeat for several; NAME is a column "
        "of the CSV, all its thresholds, or a binary feature; docs/constraints.md):\n" + SYNTAX,
    )
    parser.add_argument(
        "--costs",
        metavar="TEXT",
        help="minimize what the predictions cost instead of the misclassified share "
        "(odtkit.costs, docs/constraints.md):\n" + costs.SYNTAX,
    )


def _fairness_message(text: str, protected: Sequence[str], legit: str | None) -> str:
    """A refusal of :class:`odtkit.Fairness`, its argument names as the options and columns
    the user gave (``protected attribute 'protected'`` is ``--protected 'sex'``)."""
    for k, column in enumerate(protected):
        text = text.replace(f"'protected[{k}]'", repr(column))
    if len(protected) == 1:
        text = text.replace("'protected'", repr(protected[0]))
    if legit:
        text = text.replace("'legit'", repr(legit))
    for word in ("protected", "legit", "delta"):
        if re.match(rf"{word}\b", text):
            return f"--{word} {text[len(word) :].lstrip(' =:')}"
    return f"--fairness: {text}"


def _fairness_columns(
    frame: pd.DataFrame, name: str, label: str, protected: list[str], legit: str | None
) -> str | None:
    """Refuse ``--protected``/``--legit`` columns that are not feature columns of ``frame``
    (unknown, the label, named twice, or one column both protected and legitimate); the
    ``--legit`` column's name."""
    legit_names = _columns(legit)
    if len(legit_names) > 1:
        raise BadInput(f"--legit {legit!r}: give one column (the legitimate factor)")
    for option, names in (("--protected", protected), ("--legit", legit_names)):
        for column in names:
            if column == label:
                raise BadInput(
                    f"{option} {column!r} is the label column of {name}; name a feature column "
                    "(or another --label)"
                )
            if column not in frame.columns:
                raise BadInput(
                    f"{option} {column!r} is not a column of {name} "
                    f"(columns: {_shown(frame.columns)})"
                )
        twice = sorted({c for c in names if names.count(c) > 1})
        if twice:
            raise BadInput(f"{option} names {_shown(twice)} twice")
    if legit_names and legit_names[0] in protected:
        raise BadInput(
            f"--legit {legit_names[0]!r} is also --protected; the legitimate factor is another "
            "column"
        )
    return legit_names[0] if legit_names else None


def _named_dataset(name: str, what: str) -> Any:
    """A bundled dataset (or a benchmark set of :func:`odtkit.datasets.load_shared`) by name."""
    from odtkit import datasets
    from odtkit.datasets import resolve
    from odtkit.validation import check_dataset

    try:
        return check_dataset(resolve(name))
    except (ValueError, FileNotFoundError):
        raise BadInput(
            f"{what} {name!r} is neither a file nor a bundled dataset; bundled: "
            f"{', '.join(datasets.names())} (or pass a CSV path: a header row, one column per "
            "feature and a label column, e.g. 'age,income,colour,y')"
        ) from None


def _thresholds(text: str) -> str | int:
    word = text.strip().lower()
    if word in ("guess", "all", "auto"):
        return word
    try:
        number = int(word)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(
            f"expected 'auto', 'guess', 'all' or a positive integer, got {text!r}"
        )
    return number


def _add_column_arguments(
    parser: argparse.ArgumentParser, *, stay: str, stored: bool = False
) -> None:
    parser.add_argument(
        "--columns", metavar="A,B,...", help=f"use only these columns of a CSV file{stay}"
    )
    parser.add_argument("--drop", metavar="A,B", help="leave these columns of a CSV file out")
    parser.add_argument("--no-header", action="store_true", help=NO_HEADER_HELP)
    _add_reading_arguments(parser, stored=stored)


def _add_reading_arguments(parser: argparse.ArgumentParser, *, stored: bool = False) -> None:
    """``--na-values``, ``--decimal``, ``--thousands``, ``--dates``: how a CSV's text is read
    (``stored``: predict, whose default is what the tree was fitted with)."""
    default = " (default: as the tree was fitted)" if stored else ""
    group = parser.add_argument_group("reading a CSV file" + default)
    group.add_argument(
        "--na-values",
        metavar="A,B",
        help="cell texts that mean missing, comma-separated (e.g. '?,-'), besides pandas' own "
        "(empty, NA, N/A, n/a, NaN, null, None)",
    )
    group.add_argument("--decimal", metavar="C", help="decimal mark of numbers: ',' reads 3,5")
    group.add_argument(
        "--thousands", metavar="C", help="thousands separator of numbers: ',' reads 1,234"
    )
    group.add_argument(
        "--dates",
        choices=("keep", "as-numbers"),
        help="as-numbers: a column of dates (2024-03-01, 01/03/2024: month first unless only "
        "day first reads every cell) becomes days since 1970-01-01, of date-times "
        "(2024-03-01 12:30) seconds since 1970-01-01, so thresholds apply; keep (the "
        "default): they are categories",
    )


def _add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """The positional DATA (a CSV file or a bundled dataset) and the problem's arguments, at the
    default depth: what ``fit`` and ``rashomon`` read a table with, in one place so both
    subcommands take and describe it alike."""
    from odtkit.methods import DEFAULT_MAX_DEPTH

    parser.add_argument(
        "dataset",
        metavar="DATA",
        help="CSV file with a header row, or none and --no-header (numeric and categorical "
        "columns are binarized), or a bundled dataset name",
    )
    _add_problem_arguments(parser, depth=DEFAULT_MAX_DEPTH)


def _add_problem_arguments(parser: argparse.ArgumentParser, *, depth: int | None) -> None:
    from odtkit.methods import GUESS_ROUNDS

    parser.add_argument(
        "--label",
        help="label column of a CSV file (default: the last column; with --no-header, its "
        "0-based position)",
    )
    parser.add_argument(
        "--max-depth",
        type=_depth,
        default=depth,
        help="maximum depth ('none': unlimited, search methods only): 0 (the single leaf, a "
        "baseline) for the search methods, >= 1 for the MIPs, as in the Python API; a depth "
        "above the number of binary features is clamped to it (the same optimum)",
    )
    parser.add_argument("--lam", type=float, default=0.01, help="penalty per leaf, >= 0")
    parser.add_argument(
        "--thresholds",
        type=_thresholds,
        default=argparse.SUPPRESS,  # absent: guess, unless the deprecated --max-thresholds
        metavar="auto|guess|all|N",
        help="thresholds of the numeric CSV columns (default: auto for fit, as the "
        "estimators;\n"
        "guess elsewhere):\n"
        "  auto   all where the exact search runs (dp at a limited --max-depth, no\n"
        "         --constraint, --costs or --fairness), else guess\n"
        f"  guess  those a boosted reference model ({GUESS_ROUNDS} depth-1 rounds) splits on;\n"
        "         the tree is optimal over the guessed thresholds\n"
        "  all    every threshold: on a CSV, the exact search over the sorted columns (method\n"
        "         exact) replaces dp, certified over all thresholds; MIPs, bnb and an unlimited\n"
        "         --max-depth get every midpoint binarized (exact too, but can be thousands)\n"
        "  N      at most N per column, at quantiles of the distinct values\n"
        "how the table was binarized is printed on stderr (in 'binarization' with --json)",
    )
    parser.add_argument(
        "--max-thresholds",
        type=int,
        default=argparse.SUPPRESS,
        metavar="N",
        help="deprecated spelling of --thresholds N",
    )
    _add_column_arguments(parser, stay=" (the label and --protected/--legit columns stay)")

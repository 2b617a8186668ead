"""Command line: ``odtkit datasets``, ``fit``, ``predict``, ``compare``, ``prune`` and
``rashomon``.

Exit codes: 0 the answer is certified optimal (``predict``: predictions written); 2 bad input
(a wrong argument or file; one line names it, never a traceback); 3 a time or node limit
stopped the work (the best answer so far is printed, with its bound); 1 no answer; 130
interrupted by Ctrl-C (the best answer so far is printed first).

A CSV is binarized the way the estimators binarize it (``--thresholds guess``: the thresholds
of a boosted reference model, see :class:`odtkit.datasets.Binarizer`), and ``fit --out`` writes
everything ``predict`` needs to binarize new rows the same way as JSON (never a pickle).
``--thresholds all`` on a CSV runs the exact search over every threshold of the raw columns
(method ``exact``, :func:`odtkit.core.search_numeric`) in place of ``dp``; the tree's
binarization is then the thresholds it uses. The output says over what each answer is
certified (``certificate``: all thresholds, guessed thresholds, or the binarization).
Warnings print as one line ``odtkit: warning: ...`` on stderr, each once.

A table is read by :func:`odtkit.datasets.read_table_and_reading`: the separator from the
lines (tab for ``.tsv``), a line longer than the header or a name given twice refused, text
stripped of surrounding spaces, and a warning per column that looks like numbers or dates,
naming the option that parses it (``--na-values``, ``--decimal``, ``--thousands``,
``--dates as-numbers``). ``fit --out`` stores how the table was read, and ``predict`` reads
new rows the same way (its own options replace the stored ones).

Files (:mod:`odtkit.files`): ``--out`` is checked before any work (never an input file, an
existing file only with ``--force``) and written atomically; stderr (and ``out`` in the
``--json`` payload) says whether it was written. ``prune`` reads a forest saved by skops,
trusting only the types of a tree ensemble, and a pickle only with ``--trust-pickle``.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import pandas as pd

from odtkit.fairness import NOTION_REGISTRY, NOTIONS, notion_help
from odtkit.files import SKOPS_INSTALL

if TYPE_CHECKING:  # odtkit.compare loads the MIP stack: only the compare command pays for it
    from odtkit.compare import Comparison

__all__ = ["BadInput", "build_parser", "main"]

Command = Callable[[argparse.Namespace], int]

EXIT_OPTIMAL, EXIT_NO_ANSWER, EXIT_BAD_INPUT, EXIT_LIMIT, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class BadInput(Exception):
    """An argument or input file the command cannot use (exit code 2)."""


def _exit_code(status: str) -> int:
    """The exit code of a run that ended with ``status``, read from :class:`odtkit.Status`:
    0 optimal, 130 interrupted, 3 a limit stopped it (:attr:`Status.stopped_early`) or the
    answer is feasible but unproven, 1 otherwise (no answer, or an unknown status)."""
    from odtkit.results import Status

    try:
        known = Status.parse(status)
    except ValueError:
        return EXIT_NO_ANSWER
    if known is Status.OPTIMAL:
        return EXIT_OPTIMAL
    if known is Status.INTERRUPTED:
        return EXIT_INTERRUPTED
    if known.stopped_early or known is Status.FEASIBLE:
        return EXIT_LIMIT
    return EXIT_NO_ANSWER


def _checked(what: Callable[[], Any], *, flag: str | None = None) -> Any:
    """``what()``, its ValueError/TypeError/FileNotFoundError turned into :class:`BadInput`.

    Only argument checks and input loading run through here: an error deeper in a solve is a
    bug and keeps its traceback. ``flag`` (``"--max-depth"``) replaces the Python name of the
    argument (``max_depth``) in the message, so it names what the user typed.
    """
    try:
        return what()
    except (ValueError, TypeError, FileNotFoundError, KeyError) as exc:
        message = str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)
        if flag is not None:
            message = message.replace(flag.lstrip("-").replace("-", "_"), flag, 1)
        raise BadInput(message) from None


def _datasets(args: argparse.Namespace) -> int:
    from odtkit import datasets

    table = datasets.describe()
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table.to_string(index=False))
    return 0


def _columns(text: str | None) -> list[str]:
    return [c.strip() for c in (text or "").split(",") if c.strip()]


def _shown(names: Iterable[Any], limit: int = 10) -> str:
    texts = [str(n) for n in names]
    return ", ".join(texts[:limit]) + (f", ... ({len(texts)} in all)" if len(texts) > limit else "")


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
    choice, old = getattr(args, "thresholds", None), getattr(args, "max_thresholds", None)
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


class _ThresholdOptions(TypedDict, total=False):
    """The threshold keywords of ``binarize_frame`` / ``Binarizer`` that ``--thresholds`` sets."""

    max_thresholds: int
    guess_thresholds: int


def _binarizer_options(choice: str | int) -> _ThresholdOptions:
    from odtkit.methods import GUESS_ROUNDS

    if choice == "guess":
        return {"guess_thresholds": GUESS_ROUNDS}
    if choice == "all":
        return {}
    return {"max_thresholds": int(choice)}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


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
    }.get(str(choice), f"--thresholds {choice} (at most {choice} per column)")
    if exact:
        how = "--thresholds all (the exact search over every threshold; the tree's thresholds)"
    parts = []
    for kind, word in (("threshold", "numeric"), ("category", "categorical"), ("binary", "0/1")):
        group = [c for c in columns if c["kind"] == kind]
        if not group:
            continue
        used = [f"{c['name']} {c['n_features']}" for c in group if c["n_features"]]
        unused = len(group) - len(used)
        detail = ", ".join(used)
        if unused:
            why = "constant or never split on by the guess" if choice == "guess" else "constant"
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


def _load(args: argparse.Namespace, what: str, *, exact: bool = False) -> _Data:
    """The dataset (a name or a CSV path), the fairness constraint of the arguments and how to
    name its features when printing (the fitted Binarizer of a CSV: ``age <= 40.5``).

    A protected column is taken out of the split features unless ``--split-on-protected``; in a
    CSV it keeps its raw values (any number of groups). Every other column of a CSV goes
    through the Binarizer (0/1 columns pass through as one feature; blank cells are the
    Binarizer's to handle), as ``--thresholds`` says.

    ``exact`` (the exact search over every threshold will run): a CSV is not binarized here,
    its feature columns and labels are returned raw (``frame``, ``labels``) with no dataset.
    """
    from odtkit.datasets import binarize_frame
    from odtkit.fairness import Fairness, split_protected
    from odtkit.io import feature_dicts

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
            dataset, binarizer = binarize_frame(
                frame, label, name=Path(args.dataset).stem, **_binarizer_options(choice)
            )
        except (ValueError, TypeError) as exc:
            raise BadInput(f"{what}: {name}: {exc}") from None
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
    if exact:
        raise BadInput(
            f"{what} {args.dataset!r} is a bundled dataset, already binary: the exact search "
            "over every threshold (method exact) reads a CSV file's numeric columns"
        )
    if notion is None:
        return _Data(dataset, None, features, label, binarization, specs, reading=reading)
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
    return _Data(dataset, fairness, features, label, binarization, specs, reading=reading)


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


def _check_out(args: argparse.Namespace, **inputs: str | None) -> None:
    """Refuse, before any work is done, an ``--out`` that would lose data or cannot be
    written: an existing file without ``--force``, an input file (``inputs``: ``DATA=path``),
    a directory, a missing or unwritable directory (see :func:`odtkit.files.check_out`)."""
    from odtkit.files import check_out

    if args.out is not None:
        _checked(lambda: check_out(args.out, inputs=inputs, force=args.force))


def _save(args: argparse.Namespace, content: str | bytes, *, say: bool = True) -> dict[str, Any]:
    """Write ``content`` to ``--out`` atomically; what was done, for stderr and ``--json``.

    Interrupted (Ctrl-C) or failing, the older file at ``--out`` stays as it was and no
    partial file is left; stderr says the file was not written.
    """
    from odtkit.files import write_atomic

    try:
        # an OSError (disk full) is one line saying the file was not written
        _checked(lambda: write_atomic(Path(args.out), content, replace=args.force))
    except KeyboardInterrupt:
        _not_written(args, "interrupted while writing")
        raise
    if say:
        print(f"odtkit {args.command}: wrote {args.out}", file=sys.stderr)
    return {"file": args.out, "written": True, "reason": None}


def _not_written(args: argparse.Namespace, reason: str) -> dict[str, Any]:
    """Say on stderr that ``--out`` was NOT written and why (an older file there, if any,
    is not this run's answer)."""
    if os.path.lexists(args.out):
        reason += f"; the file already at {args.out} is from an earlier run, not this one's answer"
    print(f"odtkit {args.command}: --out {args.out} NOT written: {reason}", file=sys.stderr)
    return {"file": args.out, "written": False, "reason": reason}


def _depth(text: str) -> int | None:
    if text.lower() in ("none", "unlimited"):
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'none', got {text!r}") from None


def _check_common(args: argparse.Namespace, *, depth_required: bool) -> None:
    from odtkit.validation import check_depth, check_lambda, check_positive_number, min_depth

    _checked(lambda: check_lambda(args.lam), flag="--lam")
    # only the lower end here: a depth above the number of binary features is clamped once
    # the data is loaded (_clamp_depth), so no huge integer reaches the native code. The
    # API's rule: depth 0 (one leaf) for the searches, >= 1 where a MIP runs (depth_required)
    lowest = min_depth(needs_branch=depth_required)
    depth = args.max_depth if args.max_depth is None else min(args.max_depth, max(lowest, 1))
    _checked(
        lambda: check_depth(depth, allow_none=not depth_required, minimum=lowest),
        flag="--max-depth",
    )
    _checked(lambda: check_positive_number(args.time_limit, "time_limit"), flag="--time-limit")
    _checked(
        lambda: check_positive_number(args.memory_limit_mb, "memory_limit_mb"),
        flag="--memory-limit-mb",
    )


def _clamp_depth(args: argparse.Namespace, dataset: Any) -> None:
    """``--max-depth`` above the number of binary features, clamped to it (at least 1).

    A path tests a feature at most once (a second test of it on the path leaves one branch
    empty), so no deeper tree is better: the clamped problem has the same optimum. A huge
    depth (``99999999999999999999``) never reaches the native code or a MIP this way.
    """
    largest = max(int(dataset.n_features), 1)
    if args.max_depth is not None and args.max_depth > largest:
        warnings.warn(
            f"--max-depth {args.max_depth} is more than the {dataset.n_features} binary "
            "feature(s) of the data, the largest meaningful depth (a path tests a feature at "
            f"most once): solving with --max-depth {largest}, the same optimum",
            UserWarning,
            stacklevel=1,
        )
        args.max_depth = largest


def _print_json(payload: dict[str, Any]) -> None:
    from odtkit.io import dumps

    print(dumps(payload))


def _tree_payload(result: Any, data: _Data, args: argparse.Namespace) -> dict[str, Any]:
    """What ``fit --json`` prints and ``--out`` writes (:func:`odtkit.io.tree_record`): the
    answer, how to read the tree, and everything ``odtkit predict`` needs to binarize new rows
    the same way."""
    from odtkit.io import tree_record

    return tree_record(
        result,
        data.dataset,
        label=data.label,
        method=result.method if result.method == "exact" else args.method,
        lam=args.lam,
        max_depth=args.max_depth,
        certificate=_certificate(result, data),
        binarization=data.binarization,
        features=data.specs,
        reading=data.reading,
    )


def _certificate(result: Any, data: _Data) -> str | None:
    """Over what ``result``'s tree is proven optimal (None: it is not): ``all thresholds``
    (the exact search, or every midpoint), ``guessed thresholds`` or ``binarization`` (at most
    N thresholds per column, or a bundled dataset's own binary features)."""
    if result.status != "optimal":
        return None
    if result.method == "exact":
        return "all thresholds"
    choice = None if data.binarization is None else data.binarization["thresholds"]
    return {"all": "all thresholds", "guess": "guessed thresholds"}.get(str(choice), "binarization")


_OVER = {
    "all thresholds": "all thresholds",
    "guessed thresholds": "the guessed thresholds",
    "binarization": "the binarization",
}


def _wants_exact(args: argparse.Namespace, method: Any) -> bool:
    """The exact search over every threshold runs: ``--method exact``, or ``dp`` with
    ``--thresholds all`` on a CSV at a limited depth (unlimited, every midpoint is binarized
    and dp searches it: the same optimum, as before the exact search existed)."""
    if getattr(method, "raw", False):
        if args.max_depth is None:
            raise BadInput(
                f"--max-depth none: method {method.name} is depth-limited; give --max-depth N"
            )
        return True
    return (
        method.name == "dp"
        and getattr(args, "thresholds", None) == "all"
        and args.max_depth is not None
        and _is_file_argument(args.dataset)
    )


def _exact_fit(args: argparse.Namespace, data: _Data) -> Any:
    """The exact search on the CSV's raw columns; fills ``data`` with the binarization its
    tree reads (the Result's Binarizer: the thresholds the tree uses), so the printed tree,
    ``--json`` and ``--out`` (what ``predict`` re-evaluates) are as for a binarized fit."""
    from odtkit.datasets import Dataset
    from odtkit.io import feature_dicts
    from odtkit.methods import METHODS

    result = _checked(
        lambda: METHODS["exact"].search_raw(
            data.frame,
            data.labels,
            lam=args.lam,
            max_depth=args.max_depth,
            time_limit=args.time_limit,
            memory_limit_mb=args.memory_limit_mb,
        )
    )
    binarizer = result.binarizer
    names = [str(n) for n in binarizer.get_feature_names_out()]
    data.dataset = Dataset.from_arrays(
        binarizer.transform(data.frame),
        data.labels,
        feature_names=names,
        name=Path(args.dataset).stem,
    )
    data.features = binarizer
    data.binarization = _binarization(binarizer, "all", exact=True)
    data.specs = feature_dicts(binarizer.get_feature_specs())
    return result


def _check_backend(name: str, option: str) -> None:
    from odtkit.solvers import registered_backends

    if name not in registered_backends():
        raise BadInput(f"{option} {name!r}: choose from {', '.join(registered_backends())}")


def _fit(args: argparse.Namespace) -> int:
    from odtkit.io import dumps
    from odtkit.methods import get_method

    method = _checked(lambda: get_method(args.method), flag="--method")
    _check_common(args, depth_required=not method.is_search)
    _check_backend(args.backend, "--backend")
    _check_out(args, DATA=args.dataset if _is_file_argument(args.dataset) else None)
    exact = _wants_exact(args, method)
    data = _load(args, "DATA", exact=exact)
    if exact:  # the binarization is the tree's own, known once it is found
        result = _exact_fit(args, data)
    else:
        _clamp_depth(args, data.dataset)
    dataset = data.dataset
    if data.binarization is not None and not args.json:
        print(data.binarization["summary"], file=sys.stderr)
    if not exact:
        result = method.solve(
            dataset,
            lam=args.lam,
            max_depth=args.max_depth,
            backend=args.backend,
            time_limit=args.time_limit,
            memory_limit_mb=args.memory_limit_mb,
        )
    payload = _tree_payload(result, data, args)
    if args.out is not None:
        if result.model is not None:
            saved = _save(args, dumps(payload))
        else:
            saved = _not_written(args, f"no tree (status {result.status})")
        payload["out"] = saved  # after writing: the file holds the answer, not this record
    if args.json:
        _print_json(payload)
        return _exit_code(result.status)
    depth = "unlimited" if args.max_depth is None else f"<= {args.max_depth}"
    print(
        f"data {dataset.name}: {dataset.n_samples} rows, {dataset.n_features} binary features, "
        f"classes {dataset.classes.tolist()}; method {payload['method']}, lambda {args.lam}, "
        f"depth {depth}"
    )
    certificate = payload["certificate"]
    over = "" if certificate is None else f" over {_OVER[certificate]}"
    print(
        f"status {result.status}{over}, objective {result.objective:.6g}, lower bound "
        f"{result.lower_bound:.6g} (gap {result.gap:.3g}), time {result.time:.2f} s"
    )
    if result.model is None:
        print(f"no tree: {result.message}")
        return _exit_code(result.status)
    print(
        f"{result.model.n_leaves} leaves, depth {result.model.depth}, train accuracy "
        f"{payload['train_accuracy']:.4f}"
        + ("" if args.out is None else f"; written to {args.out}")
    )
    if result.status != "optimal" and result.message:
        print(f"note: {result.message}")
    print(result.model.to_text(data.features, dataset.classes))
    return _exit_code(result.status)


# -- rashomon --------------------------------------------------------------------------------


def _check_epsilon(value: float) -> float:
    if not (math.isfinite(value) and value >= 0):
        raise BadInput(f"--epsilon must be a finite number >= 0, got {value!r}")
    return value


def _rashomon(args: argparse.Namespace) -> int:
    """Every tree within ``--epsilon`` of the optimum, on the table binarized as ``fit`` does:
    the optimum and bound, the exact count, the objective histogram, per-feature usage, the
    ``--top`` trees as text, and whether the build was complete."""
    from odtkit import metrics
    from odtkit.io import dumps
    from odtkit.rashomon import rashomon
    from odtkit.render import export_text

    _check_common(args, depth_required=False)
    _check_epsilon(args.epsilon)
    if args.top < 0:
        raise BadInput(f"--top must be >= 0, got {args.top}")
    _check_out(args, DATA=args.dataset if _is_file_argument(args.dataset) else None)
    # --thresholds all binarizes every midpoint here (the set over every threshold): the
    # exact search finds one tree, not a set, so its own binarization would be the wrong space
    data = _load(args, "DATA")
    _clamp_depth(args, data.dataset)
    dataset = data.dataset
    if data.binarization is not None and not args.json:
        print(data.binarization["summary"], file=sys.stderr)
    rset = _checked(
        lambda: rashomon(
            dataset,
            lam=args.lam,
            max_depth=args.max_depth,
            epsilon=args.epsilon,
            absolute=args.absolute,
            leaves=args.leaves,
            time_limit=args.time_limit,
            memory_limit_mb=args.memory_limit_mb,
        ),
        flag="--epsilon",
    )
    count = rset.count()
    histogram = rset.objective_histogram()
    usage = rset.feature_usage()
    if not isinstance(usage.index, pd.RangeIndex):  # indexed by feature name: keep the names
        usage = usage.reset_index()
    top = list(rset[: min(args.top, count)]) if args.top else []
    classes = dataset.classes
    trees = [
        {
            "index": i,
            # re-scored by metrics, the one truth (the set's order is by this objective)
            "objective": metrics.objective(tree, dataset, lam=args.lam),
            "n_leaves": tree.n_leaves,
            "depth": tree.depth,
            "tree": tree.to_dict(),
            "text": export_text(tree, data.features, classes, data=dataset),
        }
        for i, tree in enumerate(top)
    ]
    status = str(rset.status)
    code = EXIT_OPTIMAL if rset.complete else (_exit_code(status) or EXIT_LIMIT)
    payload: dict[str, Any] = {
        "data": dataset.name,
        "label": data.label,
        "lam": args.lam,
        "max_depth": args.max_depth,
        "epsilon": args.epsilon,
        "absolute": args.absolute,
        "leaves": args.leaves,
        "status": status,
        "complete": bool(rset.complete),
        "optimum": rset.optimum,
        "lower_bound": rset.lower_bound,
        "bound": rset.bound,
        "count": count,
        "histogram": histogram.to_dict(orient="records"),
        "feature_usage": usage.to_dict(orient="records"),
        "top": trees,
        "feature_names": list(dataset.feature_names),
        "features": data.specs,
        "classes": classes.tolist(),
        "binarization": data.binarization,
        "stats": dict(rset.stats),
    }
    if args.out is not None:
        payload["out"] = _save(args, dumps(payload))
    if args.json:
        _print_json(payload)
        return code
    depth = "unlimited" if args.max_depth is None else f"<= {args.max_depth}"
    print(
        f"data {dataset.name}: {dataset.n_samples} rows, {dataset.n_features} binary features, "
        f"classes {classes.tolist()}; lambda {args.lam}, depth {depth}, leaves {args.leaves}"
    )
    certified = rset.lower_bound >= rset.optimum - 1e-9
    slack = f"optimum + {args.epsilon:g}" if args.absolute else f"(1 + {args.epsilon:g}) x optimum"
    print(
        f"optimum {rset.optimum:.6g} ("
        + ("certified" if certified else f"not certified: lower bound {rset.lower_bound:.6g}")
        + f"), bound {rset.bound:.6g} = {slack}"
    )
    if rset.complete:
        print(f"{count:,} trees within the bound (the complete set)")
    else:
        print(
            f"{count:,} trees within the bound found before the build stopped ({status}): "
            "every one a genuine member, but NOT the complete set"
        )
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        if count:
            print("\nobjective histogram (trees per exact misclassified weight and leaves):")
            print(histogram.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
        print(_usage_text(usage, count))
    if trees:
        print(f"\nthe {_plural(len(trees), 'best tree')} in objective order:")
        for entry in trees:
            print(
                f"\n#{entry['index']}: objective {entry['objective']:.6g}, "
                f"{entry['n_leaves']} leaves, "
                f"depth {entry['depth']}"
            )
            print(entry["text"])
    print(
        "\nbuild: complete"
        if rset.complete
        else f"\nbuild: INCOMPLETE ({status}); raise --time-limit or lower --epsilon"
    )
    return code


def _usage_text(usage: pd.DataFrame, count: int) -> str:
    """Per-feature usage, most used first, the features no good tree uses counted, not listed;
    and the reading people ask first: which features every good tree splits on."""
    head = "\nfeature usage (share of the set's trees that split on each feature):"
    if count == 0:
        return "\nno tree listed: no objective histogram or feature usage"
    if "share" not in usage.columns:
        return f"{head}\n{usage.to_string(index=False)}"
    used = usage[usage["share"] > 0].sort_values("share", ascending=False, kind="stable")
    unused = len(usage) - len(used)
    lines = [head, used.to_string(index=False, float_format=lambda v: f"{v:.4g}")]
    if unused:
        lines.append(f"({_plural(unused, 'feature')} used by no tree of the set)")
    name = "feature" if "feature" in usage.columns else usage.columns[0]
    every = [str(f) for f in used.loc[used["share"] >= 1.0, name]]
    lines.append(
        "every tree of the set splits on: " + (", ".join(every) if every else "no one feature")
    )
    return "\n".join(lines)


# -- predict ---------------------------------------------------------------------------------


def _read_model(text: str) -> Any:
    """The tree file ``fit --out`` wrote, checked by :func:`odtkit.io.load` (JSON only:
    loading it runs no code); its refusals named ``MODEL``."""
    from odtkit import io

    try:
        return io.load(text)
    except FileNotFoundError as exc:
        raise BadInput(f"MODEL {exc}") from None
    except ValueError as exc:
        raise BadInput(f"MODEL: {exc}") from None


def _predict(args: argparse.Namespace) -> int:
    from odtkit.io import ModelFileError

    saved = _read_model(args.model)
    _check_out(args, MODEL=args.model, DATA=args.data)
    raw, name, _ = _read_table(
        args.data,
        "DATA",
        min_rows=1,
        min_columns=1,
        header=not args.no_header,
        reading=_reading(args, saved.reading),
    )
    frame = _select_columns(raw, args, keep=[], name=name)
    needed = saved.used_columns()
    for column in needed:
        if column not in frame.columns:
            how = " (left out by --columns/--drop)" if column in raw.columns else ""
            raise BadInput(
                f"DATA: {name} has no column {column!r}{how}, which the tree tests "
                f"(it tests {_shown(needed)})"
            )
    try:
        predictions = saved.predict(frame, name=name, first_line=2)
    except ModelFileError as exc:
        raise BadInput(f"MODEL: {exc}") from None
    except ValueError as exc:
        raise BadInput(f"DATA: {exc}") from None
    out = frame.copy() if args.keep_input else pd.DataFrame(index=frame.index)
    if "prediction" in out.columns:
        raise BadInput(f"DATA: {name} already has a column 'prediction'; --drop it or rename it")
    out["prediction"] = predictions
    text = out.to_csv(index=False)
    if args.out is None:
        sys.stdout.write(text)
    else:
        _save(args, text, say=False)  # said below, with the number of rows
    label = saved.label
    if label is not None and label in raw.columns:
        truth = raw[label].to_numpy(dtype=object)
        known = ~pd.isna(raw[label]).to_numpy()
        if known.any():
            right = int((truth[known] == predictions[known]).sum())
            print(
                f"accuracy {right / known.sum():.4f} on the {_plural(int(known.sum()), 'row')} "
                f"with a {label!r} value ({right} right)",
                file=sys.stderr,
            )
    if args.out is not None:
        print(f"{_plural(len(out), 'prediction')} written to {args.out}", file=sys.stderr)
    return EXIT_OPTIMAL


#: ``odtkit compare``'s methods when --methods is not given (the MIPs among them sized to the
#: table and --time-limit: ``compare(..., sized=True)``).
_DEFAULT_METHODS = "dp,pathoct,flowoct,rbinoct"


def _compare(args: argparse.Namespace) -> int:
    # through the package's lazy attribute: importing the submodule by name would bind
    # ``odtkit.compare`` to the module, and every later ``odtkit.compare(...)`` would fail
    from odtkit import compare
    from odtkit.methods import METHODS
    from odtkit.solvers import registered_backends

    given = getattr(args, "methods", None)
    sized = given is None  # the default list: leave out the MIPs too big to answer
    methods = [m.strip() for m in (_DEFAULT_METHODS if given is None else given).split(",")]
    backends = [b.strip() for b in args.backends.split(",")]
    for option, names, known in (
        ("--methods", methods, tuple(METHODS)),
        ("--backends", backends, registered_backends()),
    ):
        if not all(names):
            raise BadInput(
                f"{option} {getattr(args, option[2:])!r} has an empty name; give names "
                f"separated by commas, e.g. {option} {','.join(known[:2])}"
            )
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise BadInput(f"unknown method(s) {unknown}; choose from {tuple(METHODS)}")
    unknown = [b for b in backends if b not in registered_backends()]
    if unknown:
        raise BadInput(f"unknown backend(s) {unknown}; choose from {registered_backends()}")
    _check_common(args, depth_required=True)
    every = getattr(args, "thresholds", None) == "all" and args.fairness is None
    if every and _is_file_argument(args.dataset):
        # every threshold: the exact search replaces dp (the MIPs get every midpoint; with
        # --fairness the fair dp keeps every midpoint: the exact search takes no constraint)
        methods = list(dict.fromkeys("exact" if m == "dp" else m for m in methods))
    raw = any(METHODS[m].raw for m in methods)
    data = _load(args, "--dataset", exact=raw)
    options: dict[str, Any] = {
        "lam": args.lam,
        "max_depth": args.max_depth,
        "methods": methods,
        "backends": backends,
        "time_limit": args.time_limit,
        "warm_start": not args.no_warm_start,
        "memory_limit_mb": args.memory_limit_mb,
        "sized": sized,
    }
    if raw:
        # the exact search reads the raw columns; compare binarizes them for the others
        choice = _threshold_choice(args)
        try:
            comparison = compare(data.frame, y=data.labels, thresholds=choice, **options)
        except (ValueError, TypeError) as exc:
            raise BadInput(f"--dataset: {Path(args.dataset).name}: {exc}") from None
        comparison = comparison.replace(dataset=Path(args.dataset).stem)
        data.binarization = _binarization(comparison.binarizer, choice)
        if not args.json:
            print(data.binarization["summary"], file=sys.stderr)
    else:
        dataset = data.dataset
        mips = [m for m in methods if not METHODS[m].is_search]
        if dataset.n_features == 0 and mips:
            raise BadInput(
                f"--dataset: {dataset.name} has 0 binary features (every feature column is "
                f"constant), so the only tree is one leaf; the MIP methods ({', '.join(mips)}) "
                "need a feature to split on: use --methods dp"
            )
        _clamp_depth(args, dataset)
        if data.binarization is not None and not args.json:
            print(data.binarization["summary"], file=sys.stderr)
        comparison = compare(dataset, fairness=data.fairness, **options)
    return _report_comparison(comparison, args, data, raw)


def _report_comparison(
    comparison: Comparison, args: argparse.Namespace, data: _Data, raw: bool
) -> int:
    """Print the comparison (``--json``: its payload) and return the exit code."""
    best = comparison.best
    # on a raw table the exact search's tree reads through its own Binarizer (its thresholds)
    features = best.reader if raw and best is not None else data.features
    table = comparison.to_frame()
    if "interrupted" in set(table["status"]):
        code = EXIT_INTERRUPTED
    else:
        code = EXIT_OPTIMAL if comparison.certified else EXIT_LIMIT
    if args.json:
        _print_json(_comparison_payload(comparison, table, features, data))
        return code
    print(
        f"dataset {comparison.dataset}, lambda {comparison.lam}, depth <= {comparison.max_depth}, "
        f"time limit {args.time_limit} s per run, MIP warm start from "
        f"{comparison.warm_start_source}"
    )
    fairness = data.fairness
    if fairness is not None:
        print(
            f"fairness: {fairness.notion} disparity <= {fairness.delta} between the groups of "
            f"{args.protected}, positive class {fairness.positive_class!r}"
        )
    # messages are sentences: print them under the table, not as a column; the runs' wall
    # seconds are in --json (the printed table stays as it was)
    shown = table.drop(columns=["message", "wall"])
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    for run in comparison:
        if run.result.message:
            print(f"note: {run.method} ({run.backend}): {run.result.message}")
    if comparison.left_out:
        print(_left_out_line(comparison, args))
    print(comparison.reading())
    if best is not None and best.tree is not None:
        optimum = comparison.certified_optimum
        print(
            f"best tree: {best.method} ({best.backend}), objective {best.objective:.6f}, "
            f"{best.tree.n_leaves} leaves, "
            + (
                f"certified optimum {optimum:.6f} over {_OVER[best.certificate]}"
                if comparison.certified
                else "not certified"
            )
        )
        print(best.tree.to_text(features, list(comparison.class_names)))
    return code


def _left_out_line(comparison: Comparison, args: argparse.Namespace) -> str:
    """One line: the default methods not run, why, and the --methods that forces them."""
    why = "; ".join(f"{name}: {reason}" for name, reason in comparison.left_out.items())
    every = ",".join(dict.fromkeys([*(r.method for r in comparison), *comparison.left_out]))
    return (
        f"left out of the default methods (too big for --time-limit {args.time_limit:g} s): "
        f"{why}; run them anyway with --methods {every}"
    )


def _comparison_payload(
    comparison: Comparison, table: pd.DataFrame, features: Any, data: _Data
) -> dict[str, Any]:
    """What ``compare --json`` prints."""
    best = comparison.best
    certified = comparison.certified
    return {
        "dataset": comparison.dataset,
        "lam": comparison.lam,
        "max_depth": comparison.max_depth,
        "certified_optimum": comparison.certified_optimum if certified else None,
        # per certificate ("all thresholds", "binarization"): its certified optimum
        "certified_optima": {
            k: (None if math.isnan(v) else v) for k, v in comparison.certified_optima.items()
        },
        "certificate": best.certificate if certified and best is not None else None,
        "rows": table.to_dict(orient="records"),
        # the default methods not run (too big for the time limit), each with why
        "left_out": dict(comparison.left_out),
        "best_tree": None if best is None or best.tree is None else best.tree.to_dict(),
        "feature_names": _feature_names(features, comparison),
        "classes": list(comparison.class_names),
        "binarization": data.binarization,
    }


def _feature_names(features: Any, comparison: Comparison) -> list[str]:
    """The names of the features the best tree indexes (its Binarizer's, or the dataset's)."""
    if hasattr(features, "get_feature_names_out"):
        return [str(n) for n in features.get_feature_names_out()]
    return list(comparison.feature_names)


def _costs(text: str | None, columns: list[str]) -> Any:
    """``--costs age=2,income=5``: one cost per feature column, 1 for those not named."""
    import numpy as np

    costs = np.ones(len(columns))
    for item in _columns(text):
        name, _, value = item.partition("=")
        if name not in columns:
            raise BadInput(f"--costs names {name!r}, which is not a feature column")
        try:
            costs[columns.index(name)] = float(value)
        except ValueError:
            raise BadInput(f"--costs {item!r}: expected NAME=NUMBER") from None
    return costs


def _forest_columns(
    ensemble: Any, frame: pd.DataFrame, label: str, name: str, *, given: bool
) -> tuple[pd.DataFrame, list[str], bool]:
    """The feature columns of DATA for the forest, the columns ignored, and whether the
    forest knows its columns by name.

    A forest fitted on a DataFrame knows its columns (``feature_names_in_``): they are taken by
    NAME, in its order (reordered columns are fine; one it needs and DATA lacks is an error
    naming it; others besides the label are ignored and reported). A forest fitted on an
    array takes every column but the label, by position.
    """
    names = getattr(ensemble, "feature_names_in_", None)
    if names is None and isinstance(ensemble, (list, tuple)) and ensemble:
        names = getattr(ensemble[0], "feature_names_in_", None)
    if names is None:
        return frame.drop(columns=[label]), [], False
    names = [str(n) for n in names]
    if label in names:
        default = "" if given else " (the default: the last column)"
        raise BadInput(
            f"--label {label!r}{default} is a feature the forest was fitted on; name the label "
            "column with --label"
        )
    absent = [n for n in names if n not in frame.columns]
    if absent:
        raise BadInput(
            f"DATA: {name} has no column {_shown(absent)}, which the forest was fitted on "
            f"(its features: {_shown(names)})"
        )
    ignored = [str(c) for c in frame.columns if c != label and c not in names]
    return frame[names], ignored, True


def _prune(args: argparse.Namespace) -> int:
    from odtkit.files import dump_forest, load_forest
    from odtkit.pruning import check_ensemble, prune

    forest_path, data_path = Path(args.forest), Path(args.data)
    for path, what in ((forest_path, "FOREST"), (data_path, "DATA")):
        if not path.is_file():
            raise BadInput(f"{what} {str(path)!r}: no such file")
    if (args.lam is None) == (args.budget is None):
        raise BadInput("give exactly one of --lam and --budget")
    _check_out(args, FOREST=args.forest, DATA=args.data)
    ensemble, fmt = _checked(
        lambda: load_forest(forest_path, trust_pickle=args.trust_pickle, data=data_path)
    )
    frame, name, _ = _read_table(
        args.data, "DATA", header=not args.no_header, reading=_reading(args)
    )
    label = _label(frame, args, name)
    _check_labels(frame, label, "DATA", name, header=not args.no_header)
    try:  # what was loaded safely may still be no forest (a skops file of another model)
        check_ensemble(ensemble)
    except (TypeError, ValueError) as exc:
        raise BadInput(f"FOREST: {forest_path.name}: {exc}") from None
    X, ignored, by_name = _forest_columns(
        ensemble, frame, label, name, given=args.label is not None
    )
    y = frame[label].to_numpy()
    costs = _costs(args.costs, [str(c) for c in X.columns])
    with warnings.catch_warnings():
        if not by_name:  # positional by design here: the API's warning would only be noise
            warnings.filterwarnings("ignore", "X has feature names", UserWarning)
        result = _checked(
            lambda: prune(
                ensemble,
                X,
                y,
                costs=costs,
                lam=args.lam,
                budget=args.budget,
                time_limit=args.time_limit,
                memory_limit_mb=args.memory_limit_mb,
            )
        )
        pruned = result.model
        accuracy = None if pruned is None else 1.0 - pruned.error(X, y)
    payload: dict[str, Any] = {
        "status": result.status,
        "objective": result.objective,
        "lower_bound": result.lower_bound,
        "time": result.time,
        "message": result.message,
    }
    if ignored:
        payload["ignored_columns"] = ignored
    if pruned is not None:
        payload.update(pruned.summary())
        payload.update(n_trees=pruned.n_trees, train_accuracy=accuracy)
    if args.out is not None:
        if pruned is not None:
            # the pruned scikit-learn ensemble, in FOREST's format: loadable by scikit-learn
            # users without odtkit, and by 'odtkit prune' again
            whole = None if isinstance(ensemble, (list, tuple)) else ensemble  # a list of trees
            content = _checked(lambda: dump_forest(pruned.to_sklearn(whole), fmt))
            payload["out"] = _save(args, content)
        else:
            payload["out"] = _not_written(args, f"no pruning (status {result.status})")
    if args.json:
        _print_json(payload)
        return _exit_code(result.status)
    print(
        f"status {result.status}, objective {result.objective:.6g}, lower bound "
        f"{result.lower_bound:.6g}, time {result.time:.2f} s"
    )
    if ignored:
        print(f"columns the forest was not fitted on, ignored: {_shown(ignored)}")
    if pruned is None:
        print(f"no pruning: {result.message}")
        return _exit_code(result.status)
    print(
        f"{pruned.n_trees} trees: {pruned.n_leaves_unpruned} leaves -> {pruned.n_leaves}; "
        f"error term {pruned.error_term:.6g}, cost term {pruned.cost_term:.6g} (average feature "
        f"cost per example), train accuracy {payload['train_accuracy']:.4f}"
        + ("" if args.out is None else f"; pruned forest ({fmt}) written to {args.out}")
    )
    return _exit_code(result.status)


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawTextHelpFormatter):
    """Defaults shown, and line breaks kept (one line per method in ``--methods``)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line (naming the argument), exit 2."""

    def error(self, message: str) -> Any:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


MEMORY_HELP = (
    "memory budget of the native searches in MB (default: 75%% of what the process can still "
    "get: available memory, ulimit -v, a container's limit; $ODTKIT_MEMORY_LIMIT_MB "
    "overrides); at the budget the best answer so far is printed (exit 3)"
)


def _thresholds(text: str) -> str | int:
    word = text.strip().lower()
    if word in ("guess", "all"):
        return word
    try:
        number = int(word)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(
            f"expected 'guess', 'all' or a positive integer, got {text!r}"
        )
    return number


NO_HEADER_HELP = (
    "the CSV file has no header row: its columns are named 0, 1, ... by position (--label 4). "
    "Without it, a first row made only of numbers is refused: it is data"
)
FORCE_HELP = "replace an existing --out file (otherwise refused)"


def _out_help(what: str) -> str:
    return (
        f"write {what} to FILE: atomically (a temporary file renamed over FILE, so Ctrl-C or a "
        "full disk leaves no partial file and an older FILE intact; a link at FILE is "
        "replaced, not followed); never an input file; an existing FILE only with --force"
    )


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
        metavar="guess|all|N",
        help="thresholds of the numeric CSV columns (default: guess, as the estimators):\n"
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


def _subcommand(
    sub: Any, commands: dict[str, Command], name: str, run: Command, **options: Any
) -> argparse.ArgumentParser:
    """The sub-parser of command ``name`` (odtkit's help layout), recorded as run by ``run``."""
    commands[name] = run
    parser: argparse.ArgumentParser = sub.add_parser(
        name, formatter_class=_HelpFormatter, **options
    )
    return parser


def _add_output_switches(parser: argparse.ArgumentParser) -> None:
    """``--force`` (overwrite ``--out``) and ``--json`` of the commands that write a result."""
    parser.add_argument("--force", action="store_true", help=FORCE_HELP)
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Command]]:
    from odtkit import __version__
    from odtkit.methods import DEFAULT_MAX_DEPTH, DEFAULT_TIME_LIMIT, METHODS
    from odtkit.methods import describe as describe_methods
    from odtkit.solvers import registered_backends

    backends = registered_backends()
    fair_methods = ", ".join(name for name, m in METHODS.items() if m.fair)

    parser = _Parser(
        prog="odtkit",
        description="Provably optimal sparse decision trees: MIP and search, compared.",
        epilog="exit codes: 0 optimal, 1 no answer, 2 bad input, 3 a limit stopped the work "
        "(best answer so far printed), 130 interrupted",
    )
    parser.add_argument("--version", action="version", version=f"odtkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    commands: dict[str, Command] = {}
    sub.add_parser("datasets", help="list the bundled datasets with shapes and class balance")
    commands["datasets"] = _datasets

    fit = _subcommand(
        sub,
        commands,
        "fit",
        _fit,
        help="fit a certified optimal tree on a CSV file (or a bundled dataset)",
    )
    fit.add_argument(
        "dataset",
        metavar="DATA",
        help="CSV file with a header row, or none and --no-header (numeric and categorical "
        "columns are binarized), or a bundled dataset name",
    )
    _add_problem_arguments(fit, depth=DEFAULT_MAX_DEPTH)
    fit.add_argument("--method", default="dp", help="one of:\n" + describe_methods())
    fit.add_argument("--backend", default="highs", help="MIP backend: " + ", ".join(backends))
    fit.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, help="seconds")
    fit.add_argument("--memory-limit-mb", type=float, help=MEMORY_HELP)
    fit.add_argument(
        "--out",
        metavar="FILE",
        help=_out_help(
            "the tree, its certificate and the binarization as JSON (what 'odtkit predict' reads)"
        )
        + "; a run that ends without a tree writes nothing and says so",
    )
    _add_output_switches(fit)

    pred = _subcommand(
        sub,
        commands,
        "predict",
        _predict,
        help="apply a tree saved by 'fit --out' to the rows of a CSV file",
        description="Binarize the rows of DATA exactly as the tree's training table was "
        "(thresholds and categories are in MODEL) and write a CSV with a 'prediction' column. "
        "DATA needs the columns the tree tests; others are ignored. If DATA has the label "
        "column, the accuracy is printed on stderr.",
    )
    pred.add_argument("model", metavar="MODEL", help="tree JSON written by 'odtkit fit --out'")
    pred.add_argument("data", metavar="DATA", help="CSV file with a header row (or --no-header)")
    pred.add_argument("--out", metavar="FILE", help=_out_help("the CSV") + " (default: stdout)")
    pred.add_argument("--force", action="store_true", help=FORCE_HELP)
    pred.add_argument(
        "--keep-input",
        action="store_true",
        help="copy the input columns (after --columns/--drop) before the prediction column",
    )
    _add_column_arguments(pred, stay="", stored=True)

    cmp = _subcommand(
        sub,
        commands,
        "compare",
        _compare,
        help="solve one problem with the search core and the MIPs, verify and tabulate",
    )
    cmp.add_argument(
        "--dataset",
        default="monk1",
        help="bundled dataset name, or a CSV file (header row; columns are binarized)",
    )
    _add_problem_arguments(cmp, depth=DEFAULT_MAX_DEPTH)
    cmp.add_argument(
        "--methods",
        default=argparse.SUPPRESS,  # not given: the sized default list (no "(default: None)")
        help=f"comma-separated (default: {_DEFAULT_METHODS}, each MIP only when its model is "
        "small enough to answer within --time-limit; the ones left out are named), any of:\n"
        + describe_methods(),
    )
    cmp.add_argument(
        "--backends", default="highs", help="comma-separated, any of: " + ",".join(backends)
    )
    cmp.add_argument("--time-limit", type=float, default=10.0, help="seconds per run")
    cmp.add_argument("--memory-limit-mb", type=float, help=MEMORY_HELP)
    cmp.add_argument("--no-warm-start", action="store_true", help="start the MIPs cold")
    cmp.add_argument("--json", action="store_true", help="print JSON instead of a table")
    fair = cmp.add_argument_group(f"fairness (methods {fair_methods})")
    fair.add_argument(
        "--fairness",
        choices=NOTIONS,
        help=f"bound a disparity: {notion_help()}",
    )
    fair.add_argument(
        "--protected",
        help="protected column(s), comma-separated; taken out of the split features",
    )
    fair.add_argument("--delta", type=float, default=0.05, help="largest disparity, in [0, 1]")
    fair.add_argument("--positive-class", default="1", help="the favourable label")
    legit_notions = " or ".join(n.name for n in NOTION_REGISTRY.values() if n.legit)
    fair.add_argument("--legit", help=f"legitimate factor column of --fairness {legit_notions}")
    fair.add_argument(
        "--split-on-protected",
        action="store_true",
        help="keep the protected column(s) among the split features too",
    )

    prn = _subcommand(
        sub,
        commands,
        "prune",
        _prune,
        help="optimally prune a scikit-learn forest (a skops file) for error + feature cost",
        description="Prune a fitted scikit-learn forest for training error + feature cost. "
        "FOREST is a skops file (skops.io.dump(forest, 'forest.skops'); "
        f"{SKOPS_INSTALL}), loaded with only the types a tree ensemble is made of: loading it "
        "runs no code. A pickle runs any code it names when loaded, so it is read only with "
        "--trust-pickle, for files you made yourself.",
    )
    prn.add_argument(
        "forest",
        metavar="FOREST",
        help="a fitted RandomForest/ExtraTrees/Bagging classifier saved by skops.io.dump (or a "
        "pickle, with --trust-pickle)",
    )
    prn.add_argument(
        "data",
        metavar="DATA",
        help="CSV of the training rows the forest saw. A forest fitted on named columns takes "
        "its columns by name (in any order; others besides the label are ignored and listed), "
        "one fitted on an array every column but the label, by position; a blank cell is a "
        "missing value, routed as the forest routes it",
    )
    prn.add_argument(
        "--trust-pickle",
        action="store_true",
        help="FOREST may be a pickle: loading it RUNS ANY CODE IT NAMES; only for a file you "
        "made yourself",
    )
    prn.add_argument(
        "--label",
        help="label column (default: the last column; with --no-header, its 0-based position)",
    )
    prn.add_argument("--no-header", action="store_true", help=NO_HEADER_HELP)
    _add_reading_arguments(prn)
    prn.add_argument("--lam", type=float, help="weight of the average feature cost")
    prn.add_argument("--budget", type=float, help="instead of --lam: largest average cost")
    prn.add_argument("--costs", help="feature costs NAME=COST,... (others cost 1)")
    prn.add_argument(
        "--time-limit", type=float, help="seconds for the whole prune, extraction included"
    )
    prn.add_argument("--memory-limit-mb", type=float, help=MEMORY_HELP)
    prn.add_argument(
        "--out",
        metavar="FILE",
        help=_out_help("the pruned scikit-learn forest (to_sklearn)")
        + "; in FOREST's format: skops, or a pickle when FOREST was a pickle read with "
        "--trust-pickle",
    )
    _add_output_switches(prn)

    rsh = _subcommand(
        sub,
        commands,
        "rashomon",
        _rashomon,
        help="every tree within epsilon of the optimum (the Rashomon set): counted, summarised",
        description="Binarize DATA as 'odtkit fit' does, certify the optimum of misclassified "
        "fraction + lam x leaves over trees of depth <= --max-depth, and build the set of "
        "every tree whose objective is <= (1 + epsilon) x optimum (optimum + epsilon with "
        "--absolute). Prints the optimum and the bound, the exact number of trees, the "
        "objective histogram, the share of trees that use each feature, the --top best trees "
        "and whether the build was complete (a limit or Ctrl-C leaves a partial set of genuine "
        "members: exit 3 or 130).",
    )
    rsh.add_argument(
        "dataset",
        metavar="DATA",
        help="CSV file with a header row, or none and --no-header (numeric and categorical "
        "columns are binarized), or a bundled dataset name",
    )
    _add_problem_arguments(rsh, depth=DEFAULT_MAX_DEPTH)
    rsh.add_argument(
        "--epsilon",
        type=float,
        default=0.05,
        help="slack over the optimum, >= 0: relative (0.05 = 5%% above it), or absolute in "
        "objective units with --absolute",
    )
    rsh.add_argument(
        "--absolute", action="store_true", help="the bound is optimum + epsilon, not (1 + eps)x"
    )
    rsh.add_argument(
        "--leaves",
        choices=("any", "majority"),
        default="any",
        help="what a leaf may predict: any class, or only a class of maximal training weight",
    )
    rsh.add_argument("--top", type=int, default=3, help="print the N best trees (0: none)")
    rsh.add_argument(
        "--time-limit", type=float, default=DEFAULT_TIME_LIMIT, help="seconds for the build"
    )
    rsh.add_argument("--memory-limit-mb", type=float, help=MEMORY_HELP)
    rsh.add_argument(
        "--out",
        metavar="FILE",
        help=_out_help(
            "the --json payload (optimum, bound, count, histogram, feature usage, "
            "the --top trees with the binarization)"
        ),
    )
    _add_output_switches(rsh)
    return parser, commands


def _one_line_warnings() -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints ``odtkit: warning: <message>`` once per message,
    without the file, line number and source echo a person cannot act on."""
    seen: set[str] = set()

    def show(message: Any, category: Any, filename: Any, lineno: Any, *_: Any, **__: Any) -> None:
        text = " ".join(str(message).split())
        if text not in seen:
            seen.add(text)
            print(f"odtkit: warning: {text}", file=sys.stderr)

    return show


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():  # restores showwarning when the command is done
        warnings.showwarning = _one_line_warnings()
        return _run(commands[args.command], args)


def _run(command: Command, args: argparse.Namespace) -> int:
    try:
        return command(args)
    except BadInput as exc:
        print(f"odtkit {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"odtkit {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader went away (`odtkit compare | head`): not an error of ours; silence the
        # flush at exit that would raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OPTIMAL


if __name__ == "__main__":
    sys.exit(main())

"""A user's delimited text table, read without silent damage.

pandas guesses a lot when it reads a file, and several of its guesses corrupt a table without a
word: a whitespace separator splits ``dark red`` in two, a row with one field too many turns
the first column into the index and shifts every other, duplicate names become ``a.1``, and
``yes `` is a class apart from ``yes``. This module reads the text itself first (the header
row, the number of fields per line) and hands pandas only what it has checked:

* the delimiter: ``.tsv``/``.tab`` files are tab-separated; otherwise the one of ``;`` ``,``
  tab ``|`` that splits the header into two fields or more and gives the most lines of a 64 KiB
  sample the header's width (quotes respected), whitespace only when none of those does;
* a row with more fields than the header is refused naming its line (unless the extra fields
  are blank: trailing separators); a row with fewer has blank cells;
* a header that names a column twice is refused naming the name;
* text cells lose surrounding spaces (a cell of spaces is blank), columns without a header
  name and without a value (``Unnamed: 3``, from trailing separators) are dropped;
* text that looks like numbers (thousands separators, decimal commas, numbers with a few
  tokens such as ``?`` among them) or dates is named in a warning with the option that parses
  it; with ``dates="as-numbers"`` date columns become days (dates) or seconds (date-times)
  since 1970-01-01, so that thresholds apply.

Every note is one warning (:func:`odtkit._warnings.warn`), one line per column.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from odtkit._warnings import warn

__all__ = ["TableReading", "binary_kind", "read_table", "read_table_and_reading"]

#: the field separators tried, in order of preference when two split a sample equally well
#: (semicolon first: a ';'-file may carry commas inside names, never the reverse in practice)
SEPARATORS = (";", ",", "\t", "|")
#: what ``sep`` is for a table of fields separated by runs of blanks
WHITESPACE = r"\s+"
_TAB_SUFFIXES = (".tsv", ".tab")
_SAMPLE = 1 << 16
#: share of the sample's lines that must have the header's width for a separator to be trusted
_CONSISTENT = 0.9
#: share of a text column's cells that must look like numbers (or dates) to say so
_MOSTLY = 0.8
_UNNAMED = re.compile(r"Unnamed: \d+")
_DIGIT = re.compile(r"\d")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{4}/\d{1,2}/\d{1,2}|\d{1,2}[/.]\d{1,2}[/.]\d{4}")
_TIME = re.compile(r"[ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2}|[AaPp][Mm])?")
_EPOCH = pd.Timestamp("1970-01-01")
_UNITS = {"days": 86400.0, "seconds": 1.0}
_DATE_CHOICES = ("keep", "as-numbers")
#: ``DataFrame.attrs`` key of a table whose text columns :func:`read_table` has checked
TEXT_CHECKED = "odtkit.text_columns_checked"


@dataclass(frozen=True)
class TableReading:
    """How a text table is read: what ``odtkit fit --out`` stores so that ``predict`` reads new
    rows the same way.

    Parameters
    ----------
    sep : str, optional
        Field separator; None: detected (see :func:`read_table`).
    na_values : tuple of str
        Extra cell texts read as missing (pandas' own ``NA``, ``n/a``, ``null``, ... always are).
    decimal : str
        Decimal mark of numbers (``","`` for ``3,5``).
    thousands : str, optional
        Thousands separator of numbers (``","`` for ``1,234``).
    dates : {"keep", "as-numbers"}
        ``"as-numbers"``: columns of dates become days since 1970-01-01, of date-times seconds
        since 1970-01-01 (floats), so that thresholds apply; ``"keep"``: they stay text.
    date_units : mapping of str to {"days", "seconds"}
        Columns read as dates with their unit (filled in by :func:`read_table_and_reading`;
        given, those columns are converted with that unit whatever they look like).
    """

    sep: str | None = None
    na_values: tuple[str, ...] = ()
    decimal: str = "."
    thousands: str | None = None
    dates: str = "keep"
    date_units: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check = _one_character
        check(self.decimal, "decimal")
        if self.thousands is not None:
            check(self.thousands, "thousands")
            if self.thousands == self.decimal:
                raise ValueError(
                    f"thousands and decimal are both {self.decimal!r}; they must differ"
                )
        if self.dates not in _DATE_CHOICES:
            raise ValueError(f"dates must be one of {_DATE_CHOICES}, got {self.dates!r}")
        bad = {c: u for c, u in self.date_units.items() if u not in _UNITS}
        if bad:
            raise ValueError(f"date_units must map columns to 'days' or 'seconds', got {bad}")
        if not all(isinstance(v, str) for v in self.na_values):
            raise TypeError(f"na_values must be strings, got {list(self.na_values)!r}")

    def to_dict(self) -> dict[str, Any]:
        """The reading as JSON-ready values (what a tree file stores)."""
        return {
            "sep": self.sep,
            "na_values": list(self.na_values),
            "decimal": self.decimal,
            "thousands": self.thousands,
            "dates": self.dates,
            "date_units": dict(self.date_units),
        }

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> TableReading:
        """The reading :meth:`to_dict` wrote; None or an empty mapping (a file written before
        readings were stored) is the default reading."""
        if not values:
            return cls()
        return cls(
            sep=values.get("sep"),
            na_values=tuple(values.get("na_values") or ()),
            decimal=values.get("decimal") or ".",
            thousands=values.get("thousands"),
            dates=values.get("dates") or "keep",
            date_units=dict(values.get("date_units") or {}),
        )


def _one_character(value: object, name: str) -> None:
    if not isinstance(value, str) or len(value) != 1 or value.isalnum() or value in "\r\n":
        raise ValueError(f"{name} must be one punctuation character such as ',', got {value!r}")


def binary_kind(head: bytes) -> str | None:
    """What a file that starts with ``head`` probably is, if it is not UTF-8 text; else None."""
    if head.startswith(b"\x80"):  # pickle protocol 2 and later (scikit-learn, joblib)
        return "a pickle?"
    if head.startswith(b"PK\x03\x04"):
        return "a zip archive or an Excel workbook? save it as CSV"
    if b"\x00" in head:
        return "binary data"
    try:
        # a multi-byte character cut at the end of the sample is not an error
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as exc:
        return f"not UTF-8 at byte {exc.start}: save it as UTF-8 text"
    return None


# -- the delimiter and the lines ---------------------------------------------------------------


def _records(text: str, sep: str) -> Iterable[tuple[int, list[str]]]:
    """``(line number, fields)`` of every non-blank line (a quoted field may span lines: the
    number is that of the line the record ends on)."""
    if sep == WHITESPACE:
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                yield number, line.split()
        return
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    try:
        for row in reader:
            # a blank line (pandas skips it too); a line of separators is a row of blanks
            if len(row) > 1 or (row and row[0].strip()):
                yield reader.line_num, row
    except csv.Error:  # an unterminated quote: pandas names it better
        return


def _agreement(sample: str, sep: str) -> tuple[float, int]:
    """The share of the sample's lines below the first that have its number of fields, and
    that number."""
    rows = [row for _, row in _records(sample, sep)]
    if not rows:
        return 0.0, 0
    width = len(rows[0])
    rest = rows[1:]
    if not rest:
        return 1.0, width
    return sum(len(r) == width for r in rest) / len(rest), width


def detect_separator(path: Path, text: str) -> str:
    """The field separator of the table ``text`` read from ``path`` (see the module's notes)."""
    if path.suffix.lower() in _TAB_SUFFIXES:
        return "\t"
    sample = text[:_SAMPLE]
    if len(text) > _SAMPLE and "\n" in sample:
        sample = sample[: sample.rindex("\n")]  # whole lines only
    best, best_share = None, -1.0
    for sep in SEPARATORS:
        share, width = _agreement(sample, sep)
        if width >= 2 and share > best_share:
            best, best_share = sep, share
    if best is not None and best_share >= _CONSISTENT:
        return best
    share, width = _agreement(sample, WHITESPACE)
    if width >= 2 and share >= _CONSISTENT:
        return WHITESPACE
    return best if best is not None else ","


def _check_widths(text: str, sep: str, width: int, name: str) -> int:
    """Refuse lines with more fields than the header (``width``), naming them; extra fields
    that are all blank (trailing separators) are harmless. The most fields of a line."""
    long = []
    widest = width
    for number, row in _records(text, sep):
        if len(row) > width:
            widest = max(widest, len(row))
            if any(cell.strip() for cell in row[width:]):
                long.append((number, len(row)))
    if not long:
        return widest
    shown = ", ".join(f"line {n} has {k}" for n, k in long[:3]) + (", ..." if len(long) > 3 else "")
    what = "tab" if sep == "\t" else "whitespace" if sep == WHITESPACE else repr(sep)
    raise ValueError(
        f"{name}: {_count(len(long), 'line')} with more fields than the {width} of the first "
        f"line ({shown}; separator {what}): a separator inside a field? quote the field"
    )


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _header_names(text: str, sep: str, name: str) -> list[str]:
    """The header row's names, stripped; a blank name is pandas' ``Unnamed: k``; a name given
    twice is refused (pandas would silently rename the second ``a.1``)."""
    first = next(iter(_records(text, sep)), (0, []))[1]
    names = [cell.strip() or f"Unnamed: {i}" for i, cell in enumerate(first)]
    seen: dict[str, list[int]] = {}
    for i, column in enumerate(names):
        seen.setdefault(column, []).append(i + 1)
    twice = {c: places for c, places in seen.items() if len(places) > 1}
    if twice:
        shown = "; ".join(
            f"{c!r} (columns {', '.join(map(str, places))})" for c, places in twice.items()
        )
        raise ValueError(f"{name}: the header row names a column twice: {shown}; rename them")
    return names


# -- reading -------------------------------------------------------------------------------


def read_table(
    path: Path,
    sep: str | None = None,
    *,
    header: bool = True,
    na_values: Iterable[str] = (),
    decimal: str = ".",
    thousands: str | None = None,
    dates: str = "keep",
) -> pd.DataFrame:
    """The delimited text table at ``path``.

    Parameters
    ----------
    path : Path
        A UTF-8 text file (a byte-order mark and CRLF line ends are fine).
    sep : str, optional
        Field separator; by default tab for ``.tsv``/``.tab`` files, else the one of ``;``
        ``,`` tab ``|`` that splits the lines into as many fields as the header (quotes
        respected), runs of blanks only when none of them does.
    header : bool, default=True
        False: the first line is data and the columns are named ``0, 1, ...`` by position.
    na_values, decimal, thousands, dates
        See :class:`TableReading`.

    Returns
    -------
    DataFrame
        Text cells without surrounding spaces; empty unnamed columns dropped.

    Raises
    ------
    ValueError
        Naming the file when it is not a text table (a pickle, a workbook, another encoding),
        pandas cannot parse it, a line has more fields than the header, or the header names a
        column twice.

    Warns
    -----
    UserWarning
        One line per column whose cells lost surrounding spaces, that was dropped, or whose
        text looks like numbers or dates (naming the keyword that parses it).
    """
    reading = TableReading(
        sep=sep,
        na_values=tuple(na_values),
        decimal=decimal,
        thousands=thousands,
        dates=dates,
    )
    return read_table_and_reading(path, reading, header=header)[0]


def read_table_and_reading(
    path: Path, reading: TableReading | None = None, *, header: bool = True, flags: bool = False
) -> tuple[pd.DataFrame, TableReading]:
    """:func:`read_table` with its options as a :class:`TableReading`, returning the table and
    how it was read (the detected ``sep``, the ``date_units`` of the columns read as dates).

    ``flags``: the warnings name the command line's options (``--decimal ,``) rather than the
    keywords (``decimal=','``).
    """
    reading = TableReading() if reading is None else reading
    with path.open("rb") as raw:
        head = raw.read(4096)
    kind = binary_kind(head)
    if kind is not None:
        raise ValueError(f"{path.name} is not a text table ({kind})")
    try:
        # utf-8-sig drops a byte-order mark, which would otherwise glue itself to the first name
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path.name} is not a text table (not UTF-8 at byte {exc.start}: save it as UTF-8)"
        ) from None
    sep = reading.sep if reading.sep is not None else detect_separator(path, text)
    names = _header_names(text, sep, path.name) if header else None
    first_line, first = next(iter(_records(text, sep)), (0, []))
    width = len(first)
    widest = _check_widths(text, sep, width, path.name)
    if names is None:
        names = [str(i) for i in range(width)]
    # blank fields past the header's width (trailing separators) get columns, dropped below
    extra = [f"\0blank {k}" for k in range(widest - width)]
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            sep=sep,
            # the header row was read above: pandas gets the names and the lines below it
            # (with header=0 it would take the header's width for every line)
            header=None,
            skiprows=first_line if header else 0,
            names=names + extra,
            # never take the first column for the index (rows one field longer)
            index_col=False,
            na_values=list(reading.na_values) or None,
            decimal=reading.decimal,
            thousands=reading.thousands,
        ).drop(columns=extra)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else "nothing to read"
        raise ValueError(f"{path.name} is not a table ({reason})") from None
    tidy = _Tidy(path.name, flags)
    frame = tidy.drop_empty_unnamed(frame)
    frame = tidy.strip_text(frame)
    frame, units = tidy.dates(frame, reading)
    tidy.number_like(frame, reading)
    frame.attrs[TEXT_CHECKED] = True  # the Binarizer need not say it again
    return frame, replace(reading, sep=sep, date_units=units)


# -- what pandas read, tidied and explained ---------------------------------------------------


def warn_text_columns(frame: pd.DataFrame, name: str = "X") -> None:
    """Warn once per text column of an in-memory table that looks like numbers or dates and so
    is binarized as categories (the :class:`~odtkit.datasets.Binarizer` on a DataFrame): what
    it looks like, and the ``pandas.read_csv`` / :func:`read_table` keyword or conversion that
    reads it as numbers. A table :func:`read_table` read was checked already (its ``attrs``
    say so)."""
    if frame.attrs.get(TEXT_CHECKED):
        return
    tidy = _Tidy(name, flags=False, in_memory=True)
    for column in frame.columns:
        values = frame[column]
        if not _is_text(values):
            continue
        # numbers and dates hold digits: a column of words (most categories) needs no count
        if not any(isinstance(v, str) and _DIGIT.search(v) for v in values.unique()):
            continue
        # the distinct texts once, for both checks (they run on every fit of a text column)
        counts = _text_counts(values)
        if counts.empty:
            continue
        tidy.warn_if_number_like(column, counts)
        unit = _date_unit(values, counts)
        if unit is not None:
            warn(
                f"{name}: column {str(column)!r} looks like "
                f"{'date-times' if unit == 'seconds' else 'dates'} (e.g. {_first_text(values)!r}) "
                "and is binarized as categories; convert it to numbers first (e.g. "
                f"pd.to_datetime(...) as {unit} since 1970-01-01; read_table(..., "
                "dates='as-numbers') does it), so thresholds apply"
            )


@dataclass
class _Tidy:
    """The after-reading passes over a table, each column's note one warning line."""

    name: str
    flags: bool
    #: the table is a DataFrame already: name the reader keywords as pandas.read_csv's too
    in_memory: bool = False

    def _option(self, option: str, value: str) -> str:
        if self.flags:
            return f"--{option.replace('_', '-')} {value}"
        keyword = f"na_values={value.split(',')!r}" if option == "na_values" else None
        keyword = keyword or f"{option}={value!r}"
        if self.in_memory:
            return f"{keyword} in pandas.read_csv (or odtkit's read_table)"
        return keyword

    def drop_empty_unnamed(self, frame: pd.DataFrame) -> pd.DataFrame:
        def blank(value: object) -> bool:
            return bool(pd.isna(value)) or (isinstance(value, str) and not value.strip())

        empty = [
            c for c in frame.columns if _UNNAMED.fullmatch(str(c)) and frame[c].map(blank).all()
        ]
        if empty:
            warn(
                f"{self.name}: dropped {_count(len(empty), 'column')} with no name in the header "
                f"and no value ({', '.join(map(str, empty))}; trailing separators?)"
            )
        return frame.drop(columns=empty)

    def strip_text(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Text cells without surrounding spaces (``"yes "`` is ``"yes"``), a cell of spaces
        blank, and a column that is then all numbers read as numbers."""
        for column in frame.columns:
            values = frame[column]
            if not _is_text(values):
                continue
            text = values.str.strip() if values.dtype != object else values.map(_stripped)
            changed = int((text != values).sum() - (values.isna() & text.isna()).sum())
            if not changed:
                continue
            text = text.map(lambda v: np.nan if v == "" else v)
            example = next(v for v, t in zip(values, text, strict=True) if v is not t and v != t)
            warn(
                f"{self.name}: column {str(column)!r}: spaces around the text of "
                f"{_count(changed, 'cell')} removed (e.g. {example!r})"
            )
            numbers = pd.to_numeric(text, errors="coerce")
            if numbers.notna().sum() == text.notna().sum():
                frame[column] = numbers
            else:
                frame[column] = text
        return frame

    def dates(
        self, frame: pd.DataFrame, reading: TableReading
    ) -> tuple[pd.DataFrame, dict[str, str]]:
        """Date columns as days or seconds since 1970-01-01 (``dates="as-numbers"``, or the
        columns of ``reading.date_units``), else a warning naming each."""
        units: dict[str, str] = {}
        for column in frame.columns:
            unit = reading.date_units.get(str(column))
            values = frame[column]
            if not _is_text(values):
                continue  # numbers already (or blank): nothing to parse
            if unit is None:
                unit = _date_unit(values)
                if unit is None:
                    continue
                if reading.dates != "as-numbers":
                    warn(
                        f"{self.name}: column {str(column)!r} looks like "
                        f"{'date-times' if unit == 'seconds' else 'dates'} (e.g. "
                        f"{_first_text(values)!r}) and is read as categories; "
                        f"{self._option('dates', 'as-numbers')} reads it as {unit} since "
                        "1970-01-01, so thresholds apply"
                    )
                    continue
            frame[column], bad = _date_numbers(values, unit)
            units[str(column)] = unit
            lost = f"; {_count(bad, 'cell')} not a date read as missing" if bad else ""
            warn(
                f"{self.name}: column {str(column)!r} read as {unit} since 1970-01-01 "
                f"({self._option('dates', 'as-numbers')}){lost}"
            )
        return frame, units

    def number_like(self, frame: pd.DataFrame, reading: TableReading) -> None:
        """Warn about each text column whose cells are mostly numbers written in a way pandas
        did not read as numbers: thousands separators, decimal commas, a few other tokens."""
        for column in frame.columns:
            values = frame[column]
            if not _is_text(values):
                continue
            counts = _text_counts(values)
            if not counts.empty:
                self.warn_if_number_like(column, counts)

    def warn_if_number_like(self, column: object, counts: pd.Series) -> None:
        """The warning of :meth:`number_like` for one text column, from its distinct texts
        ``counts`` (:func:`_text_counts`)."""
        note = self._number_note(counts)
        if note:
            warn(f"{self.name}: column {str(column)!r} is read as categories, but {note}")

    def _number_note(self, counts: pd.Series) -> str | None:
        """What the distinct texts ``counts`` (text -> cells) look like, if numbers."""
        text = counts.index.to_series()
        n = counts.sum()
        plain = np.array([bool(_NUMBER.fullmatch(v)) for v in text], dtype=bool)
        grouped = np.array([bool(_THOUSANDS.fullmatch(v)) for v in text], dtype=bool)
        comma = np.array([bool(_DECIMAL_COMMA.fullmatch(v)) for v in text], dtype=bool)
        share = counts[plain | grouped | comma].sum() / n
        if share >= _MOSTLY and (grouped | comma).any():
            example = text[grouped | comma].iloc[0]
            if comma.any() and not grouped[comma].all():
                return (
                    f"its cells look like numbers with a decimal comma (e.g. {example!r}): "
                    f"{self._option('decimal', ',')} reads them as numbers"
                )
            return (
                f"its cells look like numbers with thousands separators (e.g. {example!r}): "
                f"{self._option('thousands', ',')} reads them as numbers"
                + (f" (decimal commas? {self._option('decimal', ',')})" if comma.all() else "")
            )
        numbers = counts[plain].sum() / n
        others = counts[~plain]
        if numbers >= 0.5 and 0 < len(others) <= 5:
            tokens = ", ".join(f"{t!r} ({k}x)" for t, k in others.items())
            joined = ",".join(str(t) for t in others.index)
            return (
                f"{numbers:.0%} of its cells are numbers; the others are {tokens}: "
                f"if they mean missing, {self._option('na_values', joined)} reads them so"
            )
        return None


def _text_counts(values: pd.Series) -> pd.Series:
    """The distinct text cells of ``values`` (in order of appearance) and how many cells hold
    each: the checks run over distinct texts, a handful in a column of thousands of cells."""
    counts = values.dropna().value_counts(sort=False)
    return counts[[isinstance(v, str) for v in counts.index]]


def _stripped(value: object) -> object:
    return value.strip() if isinstance(value, str) else value


def _is_text(values: pd.Series) -> bool:
    # pandas 3 reads text as its string dtype, pandas 2 as object
    return bool(values.dtype == object or pd.api.types.is_string_dtype(values.dtype))


def _first_text(values: pd.Series) -> str:
    return str(next(v for v in values if isinstance(v, str)))


def _date_unit(values: pd.Series, counts: pd.Series | None = None) -> str | None:
    """``"days"`` for a text column of dates, ``"seconds"`` for date-times, else None
    (``counts``: :func:`_text_counts` of ``values``, when the caller has it)."""
    counts = _text_counts(values) if counts is None else counts
    if counts.empty:
        return None
    text = [str(v).strip() for v in counts.index]
    dates = np.array([bool(_DATE.match(v)) for v in text])
    if counts[dates].sum() / counts.sum() < _MOSTLY:
        return None
    rest = [v[m.end() :] for v in text if (m := _DATE.match(v)) is not None]
    if all(r == "" for r in rest):
        return "days"
    return "seconds" if all(r == "" or _TIME.fullmatch(r) for r in rest) else None


def _date_numbers(values: pd.Series, unit: str) -> tuple[pd.Series, int]:
    """``values`` (date texts) as days or seconds since 1970-01-01, and how many present cells
    were no date (read as missing)."""
    text = values.map(lambda v: v.strip() if isinstance(v, str) else v)
    iso = all(
        bool(re.match(r"\d{4}-", v)) for v in text if isinstance(v, str)
    )  # ISO 8601: one format, no day-first guessing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas' "could not infer format" notes
        if iso:
            parsed = pd.to_datetime(text, errors="coerce", format="ISO8601")
        else:
            # 01/03/2024: month first (pandas' default) unless only day first reads more cells
            # (13/03/2024)
            parsed = pd.to_datetime(text, errors="coerce")
            day_first = pd.to_datetime(text, errors="coerce", dayfirst=True)
            if day_first.notna().sum() > parsed.notna().sum():
                parsed = day_first
    if getattr(parsed.dt, "tz", None) is not None:
        parsed = parsed.dt.tz_convert("UTC").dt.tz_localize(None)
    numbers = (parsed - _EPOCH).dt.total_seconds() / _UNITS[unit]
    bad = int((parsed.isna() & values.notna()).sum())
    return numbers.astype(float), bad

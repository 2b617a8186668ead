"""Reading a user's table without silent damage (issue 37 items 1, 4, 5, 6): the delimiter,
lines longer than the header, duplicate names, spaces around text, empty unnamed columns,
number-like text and dates; and the API's refusal of duplicate column names and of classes
that differ only by spaces."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import odtkit
from odtkit import metrics
from odtkit.datasets import Binarizer, TableReading, read_table, read_table_and_reading
from odtkit.estimators import OptimalRuleListClassifier, OptimalTreeClassifier


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _read(path, **options):
    """The table and the warnings read_table gave, as one-line texts."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = read_table(path, **options)
    return frame, [str(w.message) for w in caught]


# -- item 1: the delimiter ---

TSV = "age\tcolour\ty\n30\tdark red\tyes\n41\t\tno\n52\tblue\tyes\n63\tlight  green\tno\n"


@pytest.mark.parametrize("suffix", [".tsv", ".tab", ".txt", ".csv"])
def test_a_tab_separated_file_keeps_spaces_inside_fields(tmp_path, suffix):
    frame, _ = _read(_write(tmp_path, "t" + suffix, TSV))
    assert list(frame.columns) == ["age", "colour", "y"]
    assert frame["age"].tolist() == [30, 41, 52, 63]  # not the index
    assert frame["colour"].tolist()[0] == "dark red" and pd.isna(frame["colour"][1])
    assert frame["colour"][3] == "light  green"
    assert frame["y"].tolist() == ["yes", "no", "yes", "no"]  # an empty cell shifts nothing


def test_tsv_suffix_is_tab_even_when_commas_split_as_well(tmp_path):
    frame, _ = _read(_write(tmp_path, "c.tsv", "a,b\tc\n1,2\t3\n4,5\t6\n"))
    assert list(frame.columns) == ["a,b", "c"]


@pytest.mark.parametrize(
    ("text", "columns", "first"),
    [
        ("f1;f2;cls\r\n1;0;1\r\n0;0;0\r\n", ["f1", "f2", "cls"], [1, 0, 1]),
        ('name;x;y\n"Smith, J";1;0\n"Doe, A";2;1\n', ["name", "x", "y"], ["Smith, J", 1, 0]),
        ('name,x,y\n"Smith; J",1,0\n"Doe; A",2,1\n', ["name", "x", "y"], ["Smith; J", 1, 0]),
        ("a|b|y\n1|2|3\n4|5|6\n", ["a", "b", "y"], [1, 2, 3]),
        ("a b  y\n1 0 1\n0 1 0\n", ["a", "b", "y"], [1, 0, 1]),  # blanks: nothing else splits
        ("x;y\n1,5;a\n2,5;b\n", ["x", "y"], ["1,5", "a"]),  # ';' over decimal commas
    ],
)
def test_separators_commas_semicolons_quotes_and_blanks(tmp_path, text, columns, first):
    frame, _ = _read(_write(tmp_path, "s.csv", text))
    assert list(frame.columns) == columns
    assert frame.iloc[0].tolist() == first


def test_the_separator_is_read_beyond_the_first_line(tmp_path):
    # the header holds a comma inside a name, the lines below only semicolons
    path = _write(tmp_path, "h.csv", 'id;"a,b";y\n1;2;3\n4;5;6\n')
    _, reading = read_table_and_reading(path)
    assert reading.sep == ";"


def test_a_line_longer_than_the_header_is_refused_naming_it(tmp_path):
    path = _write(tmp_path, "long.csv", "a,b,y\n1,2,3\n4,5,6\n7,dark,red,8\n")
    with pytest.raises(ValueError, match=r"long.csv: 1 line with more fields.*line 4 has 4"):
        read_table(path)
    # every data line one field longer: pandas took the first column for the index
    path = _write(tmp_path, "index.tsv", "age\tcolour\ty\n30\tred\tdark\tyes\n40\tb\tc\tno\n")
    with pytest.raises(ValueError, match=r"2 lines with more fields than the 3 .*line 2 has 4"):
        read_table(path)


def test_shorter_lines_have_blank_cells_and_trailing_separators_are_harmless(tmp_path):
    frame, _ = _read(_write(tmp_path, "short.csv", "a,b,y\n1,2\n3,4,5,,\n"))
    assert frame.shape == (2, 3) and pd.isna(frame["y"][0]) and frame["y"][1] == 5


# -- item 4: duplicate names ---


def test_a_header_naming_a_column_twice_is_refused(tmp_path):
    path = _write(tmp_path, "dup.csv", "a,y,b,y\n1,0,2,0\n2,1,3,1\n")
    with pytest.raises(ValueError, match=r"dup.csv: the header row names a column twice: 'y' "):
        read_table(path)
    path = _write(tmp_path, "dup2.csv", "a, y,b,y \n1,0,2,0\n2,1,3,1\n")  # spaces around names
    with pytest.raises(ValueError, match="'y' \\(columns 2, 4\\)"):
        read_table(path)


def _duplicated_label():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.integers(0, 4, 30), "b": rng.integers(0, 4, 30)})
    y = rng.integers(0, 2, 30)
    return pd.concat([X, pd.Series(y, name="a")], axis=1), y


@pytest.mark.parametrize(
    "call",
    [
        lambda X, y: OptimalTreeClassifier(max_depth=1).fit(X, y),
        lambda X, y: OptimalTreeClassifier(max_depth=1, binarize=False).fit(X > 1, y),
        lambda X, y: OptimalTreeClassifier(max_depth=1, thresholds="all").fit(X, y),
        lambda X, y: OptimalRuleListClassifier().fit(X, y),
        lambda X, y: Binarizer().fit(X, y),
        lambda X, y: odtkit.compare(X, y=y, lam=0.01, max_depth=1, methods=["dp"]),
        lambda X, y: OptimalTreeClassifier(max_depth=1).fit(X.iloc[:, :2], y).predict(X),
        lambda X, y: Binarizer().fit(X.iloc[:, :2]).transform(X),
    ],
)
def test_duplicate_column_names_are_refused_naming_x(call):
    X, y = _duplicated_label()
    with pytest.raises(ValueError, match=r"X has duplicate column names \['a'\]"):
        call(X, y)


# -- item 5: spaces around text, unnamed columns, padded classes ---


def test_spaces_around_text_are_removed_with_one_note_per_column(tmp_path):
    path = _write(tmp_path, "pad.csv", "c,n,y\nred ,1,yes\n red, 2 ,yes \nblue,3,no\n  ,4,no\n")
    frame, notes = _read(path)
    assert frame["c"].tolist()[:3] == ["red", "red", "blue"] and pd.isna(frame["c"][3])
    assert frame["n"].tolist() == [1, 2, 3, 4]  # ' 2 ' was text beside numbers
    assert frame["y"].tolist() == ["yes", "yes", "no", "no"]
    assert sorted(n.split(":")[1] for n in notes) == [" column 'c'", " column 'y'"]
    assert any("column 'y': spaces around the text of 1 cell removed" in n for n in notes)


def test_empty_unnamed_columns_are_dropped_with_a_note(tmp_path):
    frame, notes = _read(_write(tmp_path, "trail.csv", "a,b,y,\n1,2,x,\n3,4,z,\n"))
    assert list(frame.columns) == ["a", "b", "y"]
    assert notes == [
        "trail.csv: dropped 1 column with no name in the header and no value (Unnamed: 3; "
        "trailing separators?)"
    ]
    frame, notes = _read(_write(tmp_path, "kept.csv", "a,,y\n1,2,x\n3,4,z\n"))
    assert list(frame.columns) == ["a", "Unnamed: 1", "y"] and not notes  # it has values


@pytest.mark.parametrize(
    "fit",
    [
        lambda X, y: OptimalTreeClassifier(max_depth=1).fit(X, y),
        lambda X, y: odtkit.Dataset.from_arrays(X > 1, y),
        lambda X, y: odtkit.compare(X, y=y, lam=0.01, max_depth=1, methods=["dp"]),
    ],
)
def test_classes_differing_only_by_spaces_are_refused_naming_y(fit):
    X = pd.DataFrame({"a": np.arange(8) % 4})
    y = np.array(["yes", "yes ", "no", "no", "yes", "no", " no", "yes"])
    with pytest.raises(ValueError, match=r"y has classes that differ only by surrounding spaces"):
        fit(X, y)


# -- item 6: number-like text and dates ---

NUMBERS = (
    'n,d,q,when,at,y\n"1,234",3.5,?,2020-01-05,2020-01-05 10:00:00,a\n'
    '"2,345",2.5,4,2020-02-05,2020-01-05 10:01:00,b\n"12,000",1.5,5,2021-01-01,'
    '2020-01-05T10:02:30,a\n"999",1,6,2022-03-03,2020-01-06 00:00:00,b\n'
    '"1,000",0,7,2022-03-04,2020-01-07 00:00:00,b\n'
)


def test_number_like_text_and_dates_are_named_with_the_keyword_that_parses_them(tmp_path):
    frame, notes = _read(_write(tmp_path, "num.csv", NUMBERS))
    assert frame["n"].dtype.kind not in "if" and frame["q"].dtype.kind not in "if"
    by_column = {n.split("'")[1]: n for n in notes}
    assert set(by_column) == {"n", "q", "when", "at"}
    assert "thousands separators (e.g. '1,234'): thousands=','" in by_column["n"]
    assert "80% of its cells are numbers; the others are '?' (1x)" in by_column["q"]
    assert "na_values=['?']" in by_column["q"]
    assert "looks like dates (e.g. '2020-01-05')" in by_column["when"]
    assert "dates='as-numbers' reads it as days since 1970-01-01" in by_column["when"]
    assert "looks like date-times" in by_column["at"] and "seconds" in by_column["at"]


def test_the_options_parse_number_like_text_and_dates(tmp_path):
    path = _write(tmp_path, "num.csv", NUMBERS)
    frame, notes = _read(path, thousands=",", na_values=["?"], dates="as-numbers")
    assert frame["n"].tolist() == [1234, 2345, 12000, 999, 1000]
    assert pd.isna(frame["q"][0]) and frame["q"].tolist()[1:] == [4, 5, 6, 7]
    epoch = pd.Timestamp("1970-01-01")
    assert frame["when"][0] == (pd.Timestamp("2020-01-05") - epoch).days
    assert frame["at"][1] - frame["at"][0] == 60.0  # seconds, a minute apart
    assert frame["at"][0] == (pd.Timestamp("2020-01-05 10:00") - epoch).total_seconds()
    assert [n for n in notes if "read as" in n] == [
        "num.csv: column 'when' read as days since 1970-01-01 (dates='as-numbers')",
        "num.csv: column 'at' read as seconds since 1970-01-01 (dates='as-numbers')",
    ]
    _, reading = read_table_and_reading(path, TableReading(dates="as-numbers"))
    assert reading.date_units == {"when": "days", "at": "seconds"}


def test_decimal_commas_are_named_and_parsed(tmp_path):
    path = _write(tmp_path, "dec.csv", "x;y\n3,5;a\n4,25;b\n-0,5;a\n7;b\n")
    frame, notes = _read(path)
    assert notes == [
        "dec.csv: column 'x' is read as categories, but its cells look like numbers with a "
        "decimal comma (e.g. '3,5'): decimal=',' reads them as numbers"
    ]
    frame, notes = _read(path, decimal=",")
    assert frame["x"].tolist() == [3.5, 4.25, -0.5, 7.0] and not notes


def test_a_reading_round_trips_and_checks_its_options():
    reading = TableReading(sep="\t", na_values=("?",), decimal=",", thousands=".")
    assert TableReading.from_dict(reading.to_dict()) == reading
    assert TableReading.from_dict(None) == TableReading()
    with pytest.raises(ValueError, match="decimal must be one punctuation character"):
        TableReading(decimal="ab")
    with pytest.raises(ValueError, match="thousands and decimal are both ','"):
        TableReading(decimal=",", thousands=",")
    with pytest.raises(ValueError, match="dates must be one of"):
        TableReading(dates="epoch")


def test_a_duplicated_label_column_no_longer_gives_a_perfect_tree(tmp_path):
    # issue 37 item 4: 'y.1' was a feature equal to the label (training accuracy 1.0)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    frame = pd.DataFrame({"a": rng.normal(size=60), "y": y, "b": rng.normal(size=60)})
    frame.columns = ["a", "y", "y"]
    path = tmp_path / "dup.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match="names a column twice: 'y'"):
        odtkit.datasets.load_file(path, binarize=True)
    clean = frame.iloc[:, :2]
    clean.to_csv(path, index=False)
    data = odtkit.datasets.load_file(path, binarize=True)
    tree = odtkit.search_tree(data, lam=0.01, max_depth=2).model
    assert metrics.accuracy(tree, data) < 1.0


def test_dates_are_month_first_unless_only_day_first_reads_every_cell(tmp_path):
    epoch = pd.Timestamp("1970-01-01")
    path = _write(tmp_path, "dm.csv", "d,y\n01/03/2024,a\n13/03/2024,b\n20/04/2024,a\n")
    frame, _ = _read(path, dates="as-numbers")
    assert frame["d"][0] == (pd.Timestamp("2024-03-01") - epoch).days
    path = _write(tmp_path, "md.csv", "d,y\n01/03/2024,a\n12/13/2024,b\n")
    frame, _ = _read(path, dates="as-numbers")
    assert frame["d"][0] == (pd.Timestamp("2024-01-03") - epoch).days
    path = _write(tmp_path, "bad.csv", "d,y\n2024-01-03,a\n2024-02-30,b\n2024-03-01,a\n")
    frame, notes = _read(path, dates="as-numbers")
    assert pd.isna(frame["d"][1])
    assert notes == [
        "bad.csv: column 'd' read as days since 1970-01-01 (dates='as-numbers'); 1 cell not a "
        "date read as missing"
    ]


def test_a_dataframe_s_number_like_text_columns_are_named_at_fit():
    """Issue 37 item 6 through the API: a DataFrame column of numbers written as text (thousands
    separators, '?' for missing, dates) is binarized as categories, and fit says so per column
    with the reader keyword that parses it; a table read_table read is not told twice."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "income": [f"{v:,}" for v in rng.integers(1_000, 99_999, 50)],
            "score": ["?" if i % 5 == 0 else str(i) for i in range(50)],
            "day": pd.date_range("2020-01-01", periods=50).strftime("%Y-%m-%d"),
            "colour": rng.choice(["red", "blue"], 50),
        }
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Binarizer().fit(frame)
    said = [str(w.message) for w in caught]
    assert any("'income'" in m and "thousands=','" in m for m in said)
    assert any("'score'" in m and "na_values=['?']" in m for m in said)
    assert any("'day'" in m and "dates" in m for m in said)
    assert not any("'colour'" in m for m in said)
    frame.attrs["odtkit.text_columns_checked"] = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Binarizer().fit(frame)
    assert not caught

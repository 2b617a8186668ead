"""Bad inputs through the command line and the Python API, each run and classified (issue 37).

A battery in the spirit of the issue's 422 hostile inputs: hostile tables (delimiters, duplicate
names, whitespace labels, number-like text, magnitudes float32 cannot tell apart, infinities,
thousands of classes, fairness options that contradict each other, ...) and hostile arguments,
through every subcommand (``fit``, ``compare``, ``rashomon``, ``predict``, ``prune``) and through
the public Python entry points. Each case states what a demanding user expects:

* ``error`` — refused: the CLI exits 2 with one line ``odtkit CMD: error: ...`` (or argparse's
  usage + one error line), the API raises ValueError/TypeError whose message names the argument
  (or the column);
* ``answer`` — solved: the CLI exits 0 (optimal) or 3 (a limit stopped it, best answer printed),
  the API returns; a case may add a check of the answer itself (the same objective as the clean
  table's, accuracy 1 on a separable column, ...);
* ``either`` — both are acceptable, as long as it is one of them.

Anything else is a defect: a traceback, another exit code, a silent answer where a refusal is due,
a wrong answer, an error that names nothing, or a run past its time limit (each case runs in a
forked child with a hard timeout). Writes ``results/bad_inputs.{json,md}``.

Run: ``python benchmarks/bad_inputs.py [--only SUBSTRING] [--out-name bad_inputs]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

RESULTS = Path(__file__).resolve().parent / "results"
TIMEOUT = 90.0  # seconds per case: every case passes a time limit of at most 10 s


@dataclass
class Case:
    name: str
    group: str
    expect: str  # "error" | "answer" | "either"
    run: Callable[[], Any]  # CLI: returns (code, stdout, stderr); API: returns the answer
    kind: str = "cli"
    names: tuple[str, ...] = ()  # an API error must name one of these
    check: Callable[[Any], str | None] | None = None  # None when the answer is right
    tags: tuple[str, ...] = field(default_factory=tuple)


# ---------------------------------------------------------------------------------------------
# tables


def _base_frame(n: int = 80, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "colour": rng.choice(["dark red", "green", "blue"], n),
            "income": rng.normal(50, 15, n).round(1),
        }
    )
    frame["y"] = np.where((frame.age > 40) & (frame.colour != "dark red"), "yes", "no")
    return frame


def _write(folder: Path, name: str, text: str | bytes) -> str:
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


def _separable(values: list[float], n: int = 40) -> pd.DataFrame:
    """One column whose two values separate the classes exactly (accuracy 1 is reachable)."""
    half = n // 2
    return pd.DataFrame(
        {"x": [values[0]] * half + [values[1]] * half, "y": [0] * half + [1] * half}
    )


def make_tables(folder: Path) -> dict[str, str]:
    base = _base_frame()
    tables: dict[str, str] = {}
    tables["base"] = _write(folder, "base.csv", base.to_csv(index=False))
    blanks = base.copy()
    blanks.loc[::7, "income"] = np.nan
    tables["base_blanks"] = _write(folder, "base_blanks.csv", blanks.to_csv(index=False))
    tables["tsv_spaces"] = _write(folder, "spaces.tsv", blanks.to_csv(index=False, sep="\t"))
    tables["tsv_as_txt"] = _write(folder, "spaces.txt", blanks.to_csv(index=False, sep="\t"))
    tables["tsv_as_csv"] = _write(folder, "tabs.csv", blanks.to_csv(index=False, sep="\t"))
    tables["semicolon"] = _write(folder, "semi.csv", blanks.to_csv(index=False, sep=";"))
    tables["pipe"] = _write(folder, "pipe.csv", blanks.to_csv(index=False, sep="|"))
    text = blanks.to_csv(index=False)
    tables["trailing_commas"] = _write(
        folder, "trailing.csv", "".join(line + ",\n" for line in text.splitlines())
    )
    extra = text.splitlines()
    extra[5] = extra[5] + ",surplus"
    tables["extra_field"] = _write(folder, "extra_field.csv", "\n".join(extra) + "\n")
    dup_label = base.copy()
    dup_label.insert(0, "y_copy", dup_label["y"])
    tables["dup_label"] = _write(
        folder, "dup_label.csv", dup_label.to_csv(index=False).replace("y_copy", "y", 1)
    )
    dup_feature = base.copy()
    dup_feature.insert(1, "age2", dup_feature["age"] + 1)
    tables["dup_feature"] = _write(
        folder, "dup_feature.csv", dup_feature.to_csv(index=False).replace("age2", "age", 1)
    )
    spaced = base.copy()
    spaced["y"] = np.where(np.arange(len(spaced)) % 3 == 0, spaced["y"] + " ", spaced["y"])
    tables["label_spaces"] = _write(folder, "label_spaces.csv", spaced.to_csv(index=False))
    spaced_cat = base.copy()
    spaced_cat["colour"] = np.where(
        np.arange(len(spaced_cat)) % 2 == 0, " " + spaced_cat["colour"], spaced_cat["colour"]
    )
    tables["category_spaces"] = _write(folder, "cat_spaces.csv", spaced_cat.to_csv(index=False))
    numbery = base.copy()
    numbery["income"] = [f"{v * 1000:,.0f}" for v in base["income"]]
    tables["thousands"] = _write(folder, "thousands.csv", numbery.to_csv(index=False))
    decimal = base.copy()
    decimal["income"] = [f"{v:.1f}".replace(".", ",") for v in base["income"]]
    tables["decimal_comma"] = _write(folder, "decimal.csv", decimal.to_csv(index=False, sep=";"))
    question = base.copy().astype({"income": object})
    question.loc[::5, "income"] = "?"
    tables["question_marks"] = _write(folder, "question.csv", question.to_csv(index=False))
    dates = base.copy()
    dates["day"] = pd.Timestamp("2020-01-01") + pd.to_timedelta(base["age"] * 10, unit="D")
    dates["day"] = dates["day"].dt.strftime("%Y-%m-%d")
    tables["dates"] = _write(folder, "dates.csv", dates[["day", "colour", "y"]].to_csv(index=False))
    stamps = base.copy()
    stamps["when"] = (
        pd.Timestamp("2021-03-04 05:06:07") + pd.to_timedelta(base["age"] * 3600, unit="s")
    ).dt.strftime("%Y-%m-%d %H:%M:%S")
    tables["datetimes"] = _write(folder, "stamps.csv", stamps[["when", "y"]].to_csv(index=False))
    single = base.copy()
    single["y"] = "yes"
    tables["single_class"] = _write(folder, "single.csv", single.to_csv(index=False))
    for key, values in {
        "tiny": [1e-50, 2e-50],
        "float32_ties": [16_777_216.0, 16_777_217.0],
        "timestamps": [1_700_000_000.0, 1_700_000_060.0],
        "huge": [1e308, -1e308],
    }.items():
        tables[key] = _write(folder, f"{key}.csv", _separable(values).to_csv(index=False))
    inf = base.copy()
    inf.loc[3, "income"] = np.inf
    tables["inf_cell"] = _write(folder, "inf.csv", inf.to_csv(index=False))
    tables["empty"] = _write(folder, "empty.csv", "")
    tables["header_only"] = _write(folder, "header_only.csv", "a,b,y\n")
    tables["one_row"] = _write(folder, "one_row.csv", "a,b,y\n1,2,0\n")
    tables["binary"] = _write(folder, "binary.csv", bytes(range(256)) * 4)
    tables["latin1"] = _write(
        folder, "latin1.csv", "a,b,y\n1,caf\xe9,0\n2,th\xe9,1\n".encode("latin-1")
    )
    tables["label_only"] = _write(folder, "label_only.csv", "y\n0\n1\n0\n1\n")
    blank_label = base.copy().astype({"y": object})
    blank_label.loc[::9, "y"] = None
    tables["blank_labels"] = _write(folder, "blank_labels.csv", blank_label.to_csv(index=False))
    all_blank = base.copy()
    all_blank["empty"] = np.nan
    tables["blank_column"] = _write(
        folder, "blank_column.csv", all_blank[["age", "empty", "colour", "y"]].to_csv(index=False)
    )
    quoted = base.copy()
    quoted.loc[2, "colour"] = 'a "quoted"\nnewline, comma'
    tables["quoted_newline"] = _write(folder, "quoted.csv", quoted.to_csv(index=False))
    mixed = base.copy().astype({"income": object})
    mixed.loc[::4, "income"] = "unknown"
    tables["mixed_column"] = _write(folder, "mixed.csv", mixed.to_csv(index=False))
    na_words = base.copy().astype({"income": object})
    na_words.loc[::6, "income"] = "NULL"
    na_words.loc[1::6, "income"] = "nan"
    tables["na_words"] = _write(folder, "na_words.csv", na_words.to_csv(index=False))
    rng = np.random.default_rng(1)
    many = pd.DataFrame({"x": rng.normal(size=5_000), "z": rng.integers(0, 9, 5_000)})
    many["y"] = [f"c{i}" for i in rng.integers(0, 2_500, 5_000)]
    tables["many_classes"] = _write(folder, "many_classes.csv", many.to_csv(index=False))
    wide = pd.DataFrame(rng.normal(size=(60, 400)).round(2), columns=[f"f{i}" for i in range(400)])
    wide["y"] = rng.integers(0, 2, 60)
    tables["wide"] = _write(folder, "wide.csv", wide.to_csv(index=False))
    numeric_header = base.copy()
    tables["no_header"] = _write(
        folder,
        "noheader.csv",
        numeric_header[["age", "income", "y"]]
        .replace({"yes": 1, "no": 0})
        .to_csv(index=False, header=False),
    )
    unicode_names = base.copy()
    unicode_names.columns = ["âge", "couleur 🎨", "revenu", "étiquette"]
    tables["unicode_names"] = _write(folder, "unicode.csv", unicode_names.to_csv(index=False))
    constant = base.copy()
    constant.insert(0, "k", 1)
    tables["constant_column"] = _write(folder, "constant.csv", constant.to_csv(index=False))
    # predict's new rows
    new = base.copy()
    tables["new_reordered"] = _write(
        folder, "new_reordered.csv", new[["income", "y", "colour", "age"]].to_csv(index=False)
    )
    tables["new_renamed"] = _write(
        folder, "new_renamed.csv", new.rename(columns={"age": "Age"}).to_csv(index=False)
    )
    new_inf = new.copy()
    new_inf.loc[0, "age"] = np.inf
    tables["new_inf"] = _write(folder, "new_inf.csv", new_inf.to_csv(index=False))
    new_text = new.copy().astype({"age": object})
    new_text.loc[0, "age"] = "old"
    tables["new_text"] = _write(folder, "new_text.csv", new_text.to_csv(index=False))
    new_unseen = new.copy()
    new_unseen.loc[0, "colour"] = "purple"
    tables["new_unseen_category"] = _write(folder, "new_unseen.csv", new_unseen.to_csv(index=False))
    tables["new_missing_column"] = _write(
        folder, "new_missing.csv", new.drop(columns=["age"]).to_csv(index=False)
    )
    new_blank = new.copy()
    new_blank.loc[::3, "age"] = np.nan
    tables["new_blank"] = _write(folder, "new_blank.csv", new_blank.to_csv(index=False))
    tables["new_dup"] = _write(
        folder,
        "new_dup.csv",
        new.assign(age2=new.age).to_csv(index=False).replace("age2", "age", 1),
    )
    # prune's training rows (numeric only: a forest takes numbers)
    numeric = pd.DataFrame({"a": rng.normal(size=300).round(2), "b": rng.normal(size=300).round(2)})
    numeric["y"] = (numeric.a + numeric.b > 0).astype(int)
    tables["forest_train"] = _write(folder, "forest_train.csv", numeric.to_csv(index=False))
    tables["forest_swapped"] = _write(
        folder,
        "forest_swapped.csv",
        numeric.rename(columns={"a": "b", "b": "a"}).to_csv(index=False),
    )
    tables["forest_renamed"] = _write(
        folder, "forest_renamed.csv", numeric.rename(columns={"a": "A"}).to_csv(index=False)
    )
    tables["forest_reordered"] = _write(
        folder, "forest_reordered.csv", numeric[["b", "a", "y"]].to_csv(index=False)
    )
    with_nan = numeric.copy()
    with_nan.loc[::10, "a"] = np.nan
    tables["forest_nan"] = _write(folder, "forest_nan.csv", with_nan.to_csv(index=False))
    with_inf = numeric.copy()
    with_inf.loc[4, "b"] = np.inf
    tables["forest_inf"] = _write(folder, "forest_inf.csv", with_inf.to_csv(index=False))
    tables["forest_missing_column"] = _write(
        folder, "forest_missing.csv", numeric.drop(columns=["b"]).to_csv(index=False)
    )
    text_cells = numeric.copy().astype({"a": object})
    text_cells.loc[0, "a"] = "high"
    tables["forest_text"] = _write(folder, "forest_text.csv", text_cells.to_csv(index=False))
    return tables


def make_models(folder: Path, tables: dict[str, str]) -> dict[str, str]:
    """A tree file from ``fit --out`` and skops forests (fitted with names, with NaN, ...)."""
    from sklearn.ensemble import RandomForestClassifier

    from odtkit.cli import main

    models: dict[str, str] = {}
    tree = str(folder / "tree.json")
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        main(["fit", tables["base_blanks"], "--label", "y", "--out", tree, "--force"])
    models["tree"] = tree
    try:
        import skops.io as sio
    except ImportError:
        return models
    train = pd.read_csv(tables["forest_train"])
    forest = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0)
    forest.fit(train[["a", "b"]], train["y"])
    models["forest"] = str(folder / "forest.skops")
    sio.dump(forest, models["forest"])
    with_nan = pd.read_csv(tables["forest_nan"])
    forest_nan = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0)
    forest_nan.fit(with_nan[["a", "b"]], with_nan["y"])
    models["forest_nan"] = str(folder / "forest_nan.skops")
    sio.dump(forest_nan, models["forest_nan"])
    unnamed = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0)
    unnamed.fit(train[["a", "b"]].to_numpy(), train["y"])
    models["forest_unnamed"] = str(folder / "forest_unnamed.skops")
    sio.dump(unnamed, models["forest_unnamed"])
    return models


# ---------------------------------------------------------------------------------------------
# the command line


def _cli(argv: list[str]) -> Callable[[], Any]:
    def run() -> tuple[int, str, str]:
        from odtkit.cli import main

        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else 2
        return int(code), out.getvalue(), err.getvalue()

    return run


def _json_objective(stdout: str) -> dict[str, Any] | None:
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        return None


def _same_objective_as(reference: dict[str, Any]) -> Callable[[Any], str | None]:
    def check(result: tuple[int, str, str]) -> str | None:
        payload = _json_objective(result[1])
        if payload is None:
            return "no JSON on stdout"
        want = reference.get("objective")
        got = payload.get("objective")
        if want is None or got is None or abs(float(got) - float(want)) > 1e-9:
            return f"objective {got} differs from the clean table's {want}"
        return None

    return check


def _perfect(result: tuple[int, str, str]) -> str | None:
    payload = _json_objective(result[1])
    if payload is None:
        return "no JSON on stdout"
    accuracy = payload.get("train_accuracy")
    if accuracy is None or accuracy < 1.0 - 1e-12:
        return f"training accuracy {accuracy} on a column that separates the classes"
    return None


def _mentions(*words: str) -> Callable[[Any], str | None]:
    def check(result: tuple[int, str, str]) -> str | None:
        missing = [w for w in words if w.lower() not in result[2].lower()]
        return f"stderr does not mention {missing}" if missing else None

    return check


def _data(command: str, path: str) -> list[str]:
    """A table as ``command`` takes it: ``compare`` by ``--dataset``, the others by position."""
    return ["--dataset", path] if command == "compare" else [path]


def cli_cases(tables: dict[str, str], models: dict[str, str], folder: Path) -> list[Case]:
    quick = ["--time-limit", "10"]
    cases: list[Case] = []

    def add(name: str, group: str, expect: str, argv: list[str], **kw: Any) -> None:
        cases.append(Case(name, group, expect, _cli(argv), **kw))

    reference: dict[str, dict[str, Any]] = {}
    for key in ("base", "base_blanks"):
        code, out, _ = _cli(["fit", tables[key], "--label", "y", "--json", *quick])()
        reference[key] = _json_objective(out) or {}

    # 1. delimiters: the same table however it is delimited
    for key in ("tsv_spaces", "tsv_as_txt", "tsv_as_csv", "semicolon", "pipe", "trailing_commas"):
        add(
            f"fit {key}",
            "delimiters",
            "answer",
            ["fit", tables[key], "--label", "y", "--json", *quick],
            check=_same_objective_as(reference["base_blanks"]),
        )
        add(
            f"fit {key} default label",
            "delimiters",
            "answer",
            ["fit", tables[key], "--json", *quick],
            check=_same_objective_as(reference["base_blanks"]),
        )
    add("fit extra field in a row", "delimiters", "error", ["fit", tables["extra_field"], *quick])
    add("fit quoted newline", "delimiters", "answer", ["fit", tables["quoted_newline"], *quick])
    # 4. duplicate names
    for key in ("dup_label", "dup_feature"):
        for command in ("fit", "compare", "rashomon"):
            add(
                f"{command} {key}",
                "duplicates",
                "error",
                [command, *_data(command, tables[key]), *quick],
            )
    add(
        "predict duplicate columns",
        "duplicates",
        "error",
        ["predict", models["tree"], tables["new_dup"]],
    )
    # 5. silent acceptance
    add(
        "fit labels with trailing spaces",
        "labels",
        "answer",
        ["fit", tables["label_spaces"], "--json", *quick],
        check=_same_objective_as(reference["base"]),
    )
    add(
        "fit categories with leading spaces",
        "labels",
        "answer",
        ["fit", tables["category_spaces"], "--json", *quick],
        check=_same_objective_as(reference["base"]),
    )
    add("fit --label ''", "labels", "error", ["fit", tables["base"], "--label", "", *quick])
    add("fit --label unknown", "labels", "error", ["fit", tables["base"], "--label", "nope"])
    add(
        "fit --label a feature of many values",
        "labels",
        "either",
        ["fit", tables["base"], "--label", "income", *quick],
    )
    add("fit blank labels", "labels", "error", ["fit", tables["blank_labels"], *quick])
    add("fit label-only table", "labels", "error", ["fit", tables["label_only"], *quick])
    for command in ("fit", "compare", "rashomon"):
        # one rule at both doors (issue 37 item 5): a single class is the leaf predicting it
        add(
            f"{command} single class",
            "labels",
            "answer",
            [command, *_data(command, tables["single_class"]), *quick],
        )
        add(
            f"{command} --max-depth 0",
            "depth",
            "either",
            [command, *_data(command, tables["base"]), "--max-depth", "0", *quick],
        )
    # 6. number-like text: an answer, and per column the option that parses it on stderr
    for key, column, option in (
        ("thousands", "income", "--thousands"),
        ("decimal_comma", "income", "--decimal"),
        ("question_marks", "income", "--na-values"),
        ("dates", "day", "--dates"),
        ("datetimes", "when", "--dates"),
    ):
        add(
            f"fit {key}",
            "number-like text",
            "answer",
            ["fit", tables[key], *quick],
            check=_mentions(f"'{column}'", option),
        )
    add(  # pandas reads NULL and nan as missing already: nothing to say
        "fit na_words", "number-like text", "answer", ["fit", tables["na_words"], *quick]
    )
    add(
        "fit mixed text and numbers",
        "number-like text",
        "answer",
        ["fit", tables["mixed_column"], *quick],
    )
    # 3. magnitudes
    for key in ("tiny", "float32_ties", "timestamps", "huge"):
        for choice in ("guess", "all", "5"):
            add(
                f"fit {key} --thresholds {choice}",
                "magnitudes",
                "answer",
                ["fit", tables[key], "--thresholds", choice, "--lam", "0.01", "--json", *quick],
                check=_perfect,
            )
    add("fit inf cell", "magnitudes", "error", ["fit", tables["inf_cell"], *quick])
    # not tables
    for key in ("empty", "header_only", "one_row", "binary", "latin1", "label_only"):
        for command in ("fit", "compare", "rashomon"):
            add(
                f"{command} {key}",
                "not a table",
                "error",
                [command, *_data(command, tables[key]), *quick],
            )
    add(
        "fit no header without --no-header",
        "not a table",
        "error",
        ["fit", tables["no_header"], *quick],
    )
    add(
        "fit no header with --no-header",
        "not a table",
        "answer",
        ["fit", tables["no_header"], "--no-header", *quick],
    )
    add("fit missing file", "not a table", "error", ["fit", str(folder / "nope.csv")])
    add("fit a directory", "not a table", "error", ["fit", str(folder)])
    # odd but fine tables
    for key in ("blank_column", "unicode_names", "constant_column", "wide", "mixed_column"):
        add(f"fit {key}", "odd tables", "answer", ["fit", tables[key], *quick])
        add(
            f"compare {key}",
            "odd tables",
            "answer",
            ["compare", "--dataset", tables[key], "--max-depth", "2", *quick],
        )
    # 8. many classes
    add(
        "fit 2,500 classes",
        "many classes",
        "answer",
        ["fit", tables["many_classes"], "--time-limit", "10"],
    )
    add(
        "rashomon 2,500 classes",
        "many classes",
        "either",
        ["rashomon", tables["many_classes"], "--time-limit", "10"],
    )
    # 7. fairness options
    fair = [
        "compare",
        "--dataset",
        tables["constant_column"],
        "--label",
        "y",
        "--max-depth",
        "2",
        *quick,
    ]
    for extra, expect in (
        (["--protected", "colour"], "error"),
        (["--protected", "colour", "--fairness", "sp", "--delta", "0.2"], "either"),
        (["--fairness", "sp", "--protected", "k"], "error"),
        (["--fairness", "sp", "--protected", "y"], "error"),
        (["--fairness", "sp", "--protected", "nope"], "error"),
        (["--fairness", "csp", "--legit", "colour", "--protected", "colour"], "error"),
        (["--fairness", "csp", "--protected", "colour"], "error"),
        (["--legit", "age"], "error"),
        (["--protected", "colour", "--drop", "colour"], "error"),
        (
            ["--fairness", "sp", "--protected", "colour", "--columns", "age"]
            + ["--positive-class", "yes"],
            "answer",
        ),
        (["--protected", "income"], "either"),
        (["--protected", "colour", "--delta", "-1"], "error"),
        (["--protected", "colour", "--delta", "nan"], "error"),
    ):
        add("compare " + " ".join(extra), "fairness options", expect, fair + extra)
    # hostile arguments on a good table, every subcommand that takes them
    bad_args = [
        (["--lam", "-1"], "error"),
        (["--lam", "nan"], "error"),
        (["--lam", "inf"], "error"),
        (["--lam", "abc"], "error"),
        (["--lam", "1e300"], "either"),
        (["--lam", "0"], "answer"),
        (["--max-depth", "-1"], "error"),
        (["--max-depth", "1.5"], "error"),
        (["--max-depth", "100"], "answer"),
        (["--max-depth", "abc"], "error"),
        (["--time-limit", "0"], "error"),
        (["--time-limit", "-1"], "error"),
        (["--time-limit", "nan"], "error"),
        (["--time-limit", "inf"], "either"),
        (["--memory-limit-mb", "0"], "error"),
        (["--memory-limit-mb", "-5"], "error"),
        (["--memory-limit-mb", "1"], "either"),
        (["--thresholds", "0"], "error"),
        (["--thresholds", "foo"], "error"),
        (["--thresholds", "-3"], "error"),
        (["--thresholds", "1"], "answer"),
        (["--columns", "nope"], "error"),
        (["--drop", "y"], "error"),
        (["--columns", "age", "--drop", "income"], "error"),
        (["--drop", "age,colour,income"], "error"),
        (["--method", "nonsense"], "error"),
        (["--backend", "nonsense"], "error"),
        (["--out", str(folder / "missing_dir" / "x.json")], "error"),
        (["--out", "TABLE"], "error"),
    ]
    for command in ("fit", "compare", "rashomon"):
        for extra, expect in bad_args:
            if command == "rashomon" and extra[0] in ("--method", "--backend"):
                continue
            if command == "compare" and extra[0] == "--method":
                extra = ["--methods", extra[1]]
            if command == "compare" and extra[0] == "--out":
                continue
            extra = [tables["base"] if e == "TABLE" else e for e in extra]
            data = _data(command, tables["base"])
            limit = [] if "--time-limit" in extra else quick
            depth = (
                ["--max-depth", "2"] if command == "compare" and "--max-depth" not in extra else []
            )
            add(
                f"{command} {' '.join(extra).replace(str(folder), '.')}",
                "arguments",
                expect,
                [command, *data, *depth, *limit, *extra],
            )
    for extra, expect in (
        (["--epsilon", "-1"], "error"),
        (["--epsilon", "nan"], "error"),
        (["--epsilon", "1e9"], "either"),
        (["--top", "-1"], "error"),
        (["--epsilon", "0"], "answer"),
    ):
        add(
            f"rashomon {' '.join(extra)}",
            "arguments",
            expect,
            ["rashomon", tables["base"], *quick, *extra],
        )
    # predict: new rows against a saved tree
    tree = models["tree"]
    for key, expect in (
        ("new_reordered", "answer"),
        ("new_renamed", "error"),
        ("new_inf", "error"),
        ("new_text", "error"),
        ("new_unseen_category", "answer"),
        ("new_missing_column", "error"),
        ("new_blank", "answer"),
        ("base_blanks", "answer"),
        ("empty", "error"),
        ("binary", "error"),
        ("header_only", "error"),
        ("tsv_spaces", "answer"),
    ):
        add(f"predict {key}", "predict", expect, ["predict", tree, tables[key]])
    add(
        "predict a CSV as the model",
        "predict",
        "error",
        ["predict", tables["base"], tables["base"]],
    )
    add(
        "predict a missing model",
        "predict",
        "error",
        ["predict", str(folder / "none.json"), tables["base"]],
    )
    garbage = _write(folder, "garbage.json", '{"tree": 5}')
    add("predict a malformed model", "predict", "error", ["predict", garbage, tables["base"]])
    # prune: a saved forest against its training rows
    if "forest" in models:
        forest = models["forest"]
        for key, expect in (
            ("forest_train", "answer"),
            ("forest_swapped", "answer"),  # the CLI takes a named forest's columns by name
            ("forest_renamed", "error"),
            ("forest_reordered", "answer"),
            ("forest_nan", "answer"),
            ("forest_inf", "error"),
            ("forest_missing_column", "error"),
            ("forest_text", "error"),
            ("base", "error"),
            ("empty", "error"),
        ):
            add(
                f"prune {key}",
                "prune",
                expect,
                ["prune", forest, tables[key], "--lam", "0.01", *quick],
            )
        add(
            "prune a NaN-trained forest on its rows",
            "prune",
            "answer",
            ["prune", models["forest_nan"], tables["forest_nan"], "--lam", "0.01", *quick],
        )
        add(
            "prune an unnamed forest by position",
            "prune",
            "answer",
            ["prune", models["forest_unnamed"], tables["forest_train"], "--lam", "0.01", *quick],
        )
        for extra, expect in (
            (["--lam", "-1"], "error"),
            (["--lam", "nan"], "error"),
            (["--budget", "-1"], "error"),
            (["--lam", "0.1", "--budget", "1"], "error"),
            (["--costs", "a=-1"], "error"),
            (["--costs", "zzz=1"], "error"),
            (["--costs", "a=abc"], "error"),
            (["--costs", "a"], "error"),
        ):
            add(
                f"prune {' '.join(extra)}",
                "prune",
                expect,
                [
                    "prune",
                    forest,
                    tables["forest_train"],
                    *quick,
                    *(
                        extra
                        if "--lam" in extra or "--budget" in extra
                        else ["--lam", "0.01", *extra]
                    ),
                ],
            )
        add(
            "prune a CSV as the forest",
            "prune",
            "error",
            ["prune", tables["base"], tables["forest_train"], "--lam", "0.01"],
        )
    return cases


# ---------------------------------------------------------------------------------------------
# the Python API


def _object_array(items: list[Any]) -> np.ndarray:
    """A 1-D object array whose cells are the items themselves (lists stay lists)."""
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


def _fit(X: Any, y: Any, **params: Any) -> Any:
    from odtkit.estimators import OptimalTreeClassifier

    params.setdefault("time_limit", 10)
    return OptimalTreeClassifier(**params).fit(X, y)


def _accuracy_one(model: Any, X: Any, y: Any) -> str | None:
    accuracy = float(np.mean(model.predict(X) == np.asarray(y)))
    return None if accuracy == 1.0 else f"training accuracy {accuracy} on a separable column"


def api_cases(tables: dict[str, str]) -> list[Case]:
    base = _base_frame()
    X, y = base.drop(columns="y"), base["y"].to_numpy()
    numeric = X[["age", "income"]]
    cases: list[Case] = []

    def add(
        name: str,
        group: str,
        expect: str,
        run: Callable[[], Any],
        names: tuple[str, ...] = ("X", "column", "feature names"),
        check: Callable[[Any], str | None] | None = None,
    ) -> None:
        cases.append(Case(name, group, expect, run, kind="api", names=names, check=check))

    # y
    hostile_y: dict[str, Any] = {
        "y with None": np.where(np.arange(len(y)) == 3, None, y).astype(object),
        "y mixing ints and strings": np.array([1 if v == "yes" else "no" for v in y], dtype=object),
        "complex y": (y == "yes").astype(complex),
        "y classes differing by a space": np.where(
            np.arange(len(y)) % 3 == 0, np.char.add(y.astype(str), " "), y
        ),
        "y of lists": _object_array([[v] for v in y]),
        "y too short": y[:-1],
        "y 2-D": np.stack([y, y], axis=1),
        "y single class": np.full(len(y), "yes"),
        "y float with NaN": np.where(y == "yes", 1.0, np.nan),
        "y empty": np.array([]),
    }
    for name, bad in hostile_y.items():
        expect = "either" if name == "y single class" else "error"
        add(f"fit {name}", "y", expect, lambda bad=bad: _fit(X, bad), names=("y", "label"))
        add(
            f"compare {name}",
            "y",
            expect,
            lambda bad=bad: __import__("odtkit").compare(
                numeric, y=bad, max_depth=2, methods=["dp"], lam=0.01
            ),
            names=("y", "label"),
        )
    # X
    listy = X.copy()
    listy["lists"] = [[i, i + 1] for i in range(len(X))]
    cplx = numeric.copy().astype({"income": complex})
    cplx["income"] = cplx["income"] + 1j
    dup = X.copy()
    dup.columns = ["age", "age", "income"]
    inf = numeric.copy()
    inf.iloc[2, 0] = np.inf
    hostile_X: dict[str, tuple[Any, str]] = {
        "list-valued column": (listy, "error"),
        "complex column": (cplx, "error"),
        "duplicate column names": (dup, "error"),
        "an inf cell": (inf, "error"),
        "dict cells": (pd.DataFrame({"d": [{"k": i} for i in range(len(X))]}), "error"),
        "no rows": (X.iloc[:0], "error"),
        "no columns": (X.iloc[:, :0], "error"),
        "1-D X": (numeric["age"].to_numpy(), "error"),
        "3-D X": (np.zeros((len(X), 2, 2)), "error"),
        "string X": ("not a table", "error"),
        "nullable Int64 with NA": (
            numeric.astype({"age": "Int64"}).mask(
                np.repeat(np.arange(len(X))[:, None] % 7 == 0, 2, axis=1)
            ),
            "answer",
        ),
        "nullable boolean": (
            pd.DataFrame(
                {
                    "b": pd.array(
                        [True, False, None] * (len(X) // 3) + [True] * (len(X) % 3), dtype="boolean"
                    )
                }
            ),
            "answer",
        ),
        "category dtype": (X.astype({"colour": "category"}), "answer"),
        "string dtype": (X.astype({"colour": "string"}), "answer"),
        "bool column": (X.assign(old=X.age > 40), "answer"),
        "datetime column": (
            X.assign(when=pd.Timestamp("2020-01-01") + pd.to_timedelta(X.age, unit="D")),
            "either",
        ),
        "timedelta column": (X.assign(span=pd.to_timedelta(X.age, unit="D")), "either"),
        "all-NaN column": (X.assign(empty=np.nan), "answer"),
        "1e308 values": (numeric.assign(big=np.where(y == "yes", 1e308, -1e308)), "answer"),
        "object column of numbers as text": (numeric.astype(str), "either"),
    }
    for name, (bad, expect) in hostile_X.items():
        add(f"fit {name}", "X", expect, lambda bad=bad: _fit(bad, y))
    for name, values in {
        "tiny": [1e-50, 2e-50],
        "float32 ties": [16_777_216.0, 16_777_217.0],
        "timestamps": [1_700_000_000.0, 1_700_000_060.0],
        "huge": [1e308, -1e308],
    }.items():
        frame = _separable(values)
        for thresholds in ("guess", "all", 5):

            def run(frame: pd.DataFrame = frame, thresholds: Any = thresholds) -> Any:
                kwargs = {} if thresholds == "guess" else {"thresholds": thresholds}
                return _fit(frame[["x"]], frame["y"], lam=0.01, **kwargs)

            add(
                f"fit {name} thresholds={thresholds}",
                "magnitudes",
                "answer",
                run,
                check=lambda model, frame=frame: _accuracy_one(model, frame[["x"]], frame["y"]),
            )
    # parameters
    for param, values in {
        "lam": [-1, float("nan"), float("inf"), "0.1", Fraction(1, 100), 1 + 0j, None, True],
        "max_depth": [-1, 1.5, "3", True, 0, 10**9],
        "time_limit": [0, -1, float("nan"), "5", None],
        "guess_thresholds": [0, -1, 10**9, 2.5, "40"],
        "thresholds": ["foo", 0, -3, 1.5, "ALL"],
        "memory_limit_mb": [0, -1, "big"],
    }.items():
        for value in values:
            ok = (param, value) in {
                ("lam", Fraction(1, 100)),
                ("max_depth", 0),
                ("max_depth", 10**9),
                ("time_limit", None),
                ("guess_thresholds", 10**9),
                ("thresholds", "ALL"),
                ("lam", True),
            }
            expect = "either" if ok else "error"
            add(
                f"fit {param}={value!r}",
                "parameters",
                expect,
                lambda param=param, value=value: _fit(X, y, **{param: value}),
                names=(param,),
            )
    # sample_weight
    for name, weight in {
        "negative": -np.ones(len(y)),
        "NaN": np.full(len(y), np.nan),
        "short": np.ones(len(y) - 1),
        "all zero": np.zeros(len(y)),
        "strings": np.array(["1"] * len(y)),
    }.items():

        def fit_weighted(weight: Any = weight) -> Any:
            from odtkit.estimators import OptimalTreeClassifier

            return OptimalTreeClassifier(time_limit=10).fit(X, y, sample_weight=weight)

        add(
            f"fit sample_weight {name}",
            "sample_weight",
            "either" if name == "strings" else "error",  # numeric text is numbers, as sklearn
            fit_weighted,
            names=("sample_weight",),
        )

    # predict side
    def fitted() -> Any:
        return _fit(X, y, lam=0.01)

    predict_cases = {
        "reordered columns": (lambda: X[["income", "colour", "age"]], "error"),
        "renamed column": (lambda: X.rename(columns={"age": "Age"}), "error"),
        "an inf cell": (
            lambda: X.assign(age=np.where(np.arange(len(X)) == 0, np.inf, X.age)),
            "error",
        ),
        "a missing column": (lambda: X.drop(columns="age"), "error"),
        "an array for a DataFrame fit": (lambda: X.to_numpy(), "either"),
        "duplicate columns": (lambda: dup, "error"),
        "an unseen category": (lambda: X.assign(colour="purple"), "answer"),
        "text in a numeric column": (
            lambda: X.astype({"age": object}).assign(age=["old"] + list(X.age[1:])),
            "error",
        ),
    }
    for name, (rows, expect) in predict_cases.items():
        add(f"predict {name}", "predict", expect, lambda rows=rows: fitted().predict(rows()))
    # many classes, huge guesses: a limit holds, memory is bounded
    rng = np.random.default_rng(2)
    many_X = pd.DataFrame({"x": rng.normal(size=4_000), "z": rng.integers(0, 9, 4_000)})
    for k in (1_000, 4_000):
        many_y = rng.integers(0, k, 4_000)
        add(
            f"fit {k} classes",
            "many classes",
            "answer",
            lambda many_y=many_y: _fit(many_X, many_y, time_limit=5),
        )
    # compare and the search functions
    from odtkit import compare, search_tree

    add(
        "compare lam=-1",
        "parameters",
        "error",
        lambda: compare(numeric, y=y, max_depth=2, lam=-1, methods=["dp"]),
        names=("lam",),
    )
    add(
        "compare methods=['nope']",
        "parameters",
        "error",
        lambda: compare(numeric, y=y, max_depth=2, lam=0.01, methods=["nope"]),
        names=("methods", "method"),
    )
    add(
        "compare duplicate column names",
        "X",
        "error",
        lambda: compare(dup, y=y, max_depth=2, lam=0.01, methods=["dp"]),
    )
    add(
        "search_tree on a DataFrame",
        "X",
        "either",
        lambda: search_tree(X, max_depth=2, lam=0.01),
        names=("data", "X", "column"),
    )
    # pruning
    try:
        from sklearn.ensemble import RandomForestClassifier

        from odtkit.pruning import prune
    except ImportError:  # pragma: no cover
        return cases
    rows = pd.read_csv(tables["forest_train"])
    features, labels = rows[["a", "b"]], rows["y"]
    forest = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0).fit(
        features, labels
    )
    with_nan = features.copy()
    with_nan.loc[::10, "a"] = np.nan
    forest_nan = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0).fit(
        with_nan, labels
    )
    for name, (the_forest, data, expect) in {
        "swapped names": (forest, features.rename(columns={"a": "b", "b": "a"}), "error"),
        "renamed column": (forest, features.rename(columns={"a": "A"}), "error"),
        "reordered columns": (forest, features[["b", "a"]], "either"),
        "NaN cells": (forest_nan, with_nan, "answer"),
        "NaN cells, forest fitted without": (forest, with_nan, "answer"),
        "an inf cell": (
            forest,
            features.assign(b=np.where(np.arange(len(features)) == 4, np.inf, features.b)),
            "error",
        ),
        "a missing column": (forest, features[["a"]], "error"),
    }.items():
        add(
            f"prune {name}",
            "prune",
            expect,
            lambda the_forest=the_forest, data=data: prune(
                the_forest, data, labels, lam=0.01, time_limit=10
            ),
        )
    return cases


# ---------------------------------------------------------------------------------------------
# running and classifying


def _classify(case: Case, outcome: dict[str, Any]) -> tuple[str, str]:
    """(verdict, why): verdict is 'error', 'answer' or 'defect'."""
    if outcome.get("timeout"):
        return "defect", f"still running after {TIMEOUT:.0f} s"
    if case.kind == "cli":
        if "exception" in outcome:
            return "defect", "traceback: " + outcome["exception"]
        code, err = outcome["code"], outcome["stderr"]
        if "Traceback" in err:
            return "defect", "traceback on stderr"
        lines = [
            line
            for line in err.splitlines()
            if line.strip() and "warning:" not in line and not line.startswith(" ")
        ]
        if code == 2:
            errors = [line for line in lines if ": error:" in line]
            if len(errors) != 1:
                return "defect", f"exit 2 with {len(errors)} error lines"
            verdict = "error"
            why = errors[0]
        elif code in (0, 3):
            verdict, why = "answer", f"exit {code}"
        else:
            return "defect", f"exit {code}: {err.strip().splitlines()[-1:] if err.strip() else ''}"
    else:
        if "exception" in outcome:
            kind, message = outcome["exception_type"], outcome["exception"]
            if kind not in ("ValueError", "TypeError") and not outcome.get("value_or_type"):
                return "defect", f"{kind}: {message}"
            named = [n for n in case.names if n.lower() in message.lower()]
            if not named:
                return "defect", f"{kind} naming none of {list(case.names)}: {message}"
            verdict, why = "error", f"{kind}: {message}"
        else:
            verdict, why = "answer", outcome.get("summary", "returned")
    if case.expect != "either" and verdict != case.expect:
        return "defect", f"expected {case.expect}, got {verdict} ({why})"
    if verdict == "answer" and outcome.get("check"):
        return "defect", outcome["check"]
    return verdict, why


def _child(case: Case, queue: Any) -> None:
    import warnings

    if case.kind == "api":
        warnings.simplefilter("ignore")  # the CLI's warnings are its stderr lines: kept
    else:
        warnings.simplefilter("default")
    outcome: dict[str, Any] = {}
    try:
        result = case.run()
        if case.kind == "cli":
            outcome.update(code=result[0], stdout=result[1][-4000:], stderr=result[2][-4000:])
            if result[0] in (0, 3) and case.check is not None:
                outcome["check"] = case.check(result)
        else:
            outcome["summary"] = type(result).__name__
            if case.check is not None:
                outcome["check"] = case.check(result)
            status = getattr(result, "status_", None)
            if status is not None:
                outcome["summary"] += f" status {status}"
    except BaseException as exc:  # the classification is the point
        outcome["exception_type"] = type(exc).__name__
        outcome["value_or_type"] = isinstance(exc, (ValueError, TypeError))
        outcome["exception"] = " ".join(str(exc).split())[:400]
        outcome["where"] = traceback.format_exc(limit=-2)[-800:]
    queue.put(outcome)


def run_case(case: Case) -> dict[str, Any]:
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    start = time.perf_counter()
    process = ctx.Process(target=_child, args=(case, queue))
    process.start()
    try:
        outcome = queue.get(timeout=TIMEOUT)
    except Exception:
        outcome = {"timeout": True}
        process.kill()
    process.join(5)
    outcome["seconds"] = round(time.perf_counter() - start, 2)
    verdict, why = _classify(case, outcome)
    return {
        "name": case.name,
        "group": case.group,
        "interface": case.kind,
        "expect": case.expect,
        "verdict": verdict,
        "why": why[:300],
        "seconds": outcome["seconds"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="run the cases whose name has this text")
    parser.add_argument("--out-name", default="bad_inputs")
    args = parser.parse_args()
    import odtkit  # noqa: F401  (imported once, before the children fork)
    import odtkit.cli  # noqa: F401

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.chdir(folder)
        tables = make_tables(folder)
        models = make_models(folder, tables)
        cases = cli_cases(tables, models, folder) + api_cases(tables)
        if args.only:
            cases = [c for c in cases if args.only in c.name]
        rows = []
        for i, case in enumerate(cases, 1):
            row = run_case(case)
            rows.append(row)
            mark = {"error": ".", "answer": ".", "defect": "X"}[row["verdict"]]
            print(
                f"[{i}/{len(cases)}] {mark} {case.kind} {case.name}: {row['why'][:150]}", flush=True
            )
    import odtkit as package

    counts = Counter(row["verdict"] for row in rows)
    summary = {
        "cases": len(rows),
        "clear_error": counts["error"],
        "answer": counts["answer"],
        "defect": counts["defect"],
        "by_interface": {
            k: dict(Counter(r["verdict"] for r in rows if r["interface"] == k))
            for k in ("cli", "api")
        },
        "odtkit": getattr(package, "__version__", "?"),
        "python": sys.version.split()[0],
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.out_name}.json").write_text(
        json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n"
    )
    lines = [
        "# Bad inputs through the CLI and the API (issue 37)",
        "",
        f"`python benchmarks/bad_inputs.py`: {len(rows)} cases "
        f"({summary['by_interface']}); a clear one-line error: {counts['error']}, a correct "
        f"answer: {counts['answer']}, defects: {counts['defect']}.",
        "",
        "| group | cases | clear error | answer | defect |",
        "|---|---|---|---|---|",
    ]
    for group in dict.fromkeys(r["group"] for r in rows):
        mine = Counter(r["verdict"] for r in rows if r["group"] == group)
        lines.append(
            f"| {group} | {sum(mine.values())} | {mine['error']} | {mine['answer']} | "
            f"{mine['defect']} |"
        )
    defects = [r for r in rows if r["verdict"] == "defect"]
    if defects:
        lines += ["", "## Defects", "", "| interface | case | what happened |", "|---|---|---|"]
        lines += [
            f"| {r['interface']} | {r['name']} | {r['why'].replace('|', '/')} |" for r in defects
        ]
    (RESULTS / f"{args.out_name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:3]))


if __name__ == "__main__":
    main()

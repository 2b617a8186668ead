"""``odtkit predict``: a tree saved by ``fit --out`` (:func:`odtkit.io.load`) applied to the
rows of a CSV file, its features computed as the Binarizer computes them
(:meth:`odtkit.render.FeatureSpec.evaluate`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import pandas as pd

from odtkit.cli import _tables
from odtkit.cli._common import (
    EXIT_OPTIMAL,
    FORCE_HELP,
    BadInput,
    _check_out,
    _out_help,
    _plural,
    _save,
    _shown,
    _subcommand,
)

NAME = "predict"


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


def run(args: argparse.Namespace) -> int:
    from odtkit.io import ModelFileError

    saved = _read_model(args.model)
    _check_out(args, MODEL=args.model, DATA=args.data)
    raw, name, _ = _tables._read_table(
        args.data,
        "DATA",
        min_rows=1,
        min_columns=1,
        header=not args.no_header,
        reading=_tables._reading(args, saved.reading),
    )
    frame = _tables._select_columns(raw, args, keep=[], name=name)
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


def add_parser(sub: Any) -> None:
    """Add the ``predict`` sub-parser to ``sub`` (:func:`odtkit.cli.build_parser`)."""
    pred = _subcommand(
        sub,
        "predict",
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
    _tables._add_column_arguments(pred, stay="", stored=True)

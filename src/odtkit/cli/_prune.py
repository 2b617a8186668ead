"""``odtkit prune``: a scikit-learn forest read safely (skops, or a pickle with
``--trust-pickle``) and pruned optimally for error + feature cost (:func:`odtkit.pruning.prune`)."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from odtkit.cli import _tables
from odtkit.cli._common import (
    NO_HEADER_HELP,
    BadInput,
    _add_limits,
    _add_output_switches,
    _check_out,
    _checked,
    _columns,
    _exit_code,
    _not_written,
    _out_help,
    _print_json,
    _save,
    _shown,
    _subcommand,
)
from odtkit.files import SKOPS_INSTALL

NAME = "prune"


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


def run(args: argparse.Namespace) -> int:
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
    frame, name, _ = _tables._read_table(
        args.data, "DATA", header=not args.no_header, reading=_tables._reading(args)
    )
    label = _tables._label(frame, args, name)
    _tables._check_labels(frame, label, "DATA", name, header=not args.no_header)
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


def add_parser(sub: Any) -> None:
    """Add the ``prune`` sub-parser to ``sub`` (:func:`odtkit.cli.build_parser`)."""
    prn = _subcommand(
        sub,
        "prune",
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
    _tables._add_reading_arguments(prn)
    prn.add_argument("--lam", type=float, help="weight of the average feature cost")
    prn.add_argument("--budget", type=float, help="instead of --lam: largest average cost")
    prn.add_argument("--costs", help="feature costs NAME=COST,... (others cost 1)")
    _add_limits(prn, default=None, time_help="seconds for the whole prune, extraction included")
    prn.add_argument(
        "--out",
        metavar="FILE",
        help=_out_help("the pruned scikit-learn forest (to_sklearn)")
        + "; in FOREST's format: skops, or a pickle when FOREST was a pickle read with "
        "--trust-pickle",
    )
    _add_output_switches(prn)

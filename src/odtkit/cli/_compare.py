"""``odtkit compare``: one problem solved by the search core and the MIPs
(:func:`odtkit.compare`), verified and tabulated."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from odtkit.cli import _tables
from odtkit.cli._common import (
    _OVER,
    EXIT_INTERRUPTED,
    EXIT_LIMIT,
    EXIT_OPTIMAL,
    BadInput,
    _add_limits,
    _check_common,
    _clamp_depth,
    _print_json,
    _subcommand,
)
from odtkit.fairness import NOTION_REGISTRY, NOTIONS, notion_help

if TYPE_CHECKING:  # odtkit._compare loads the MIP stack: only the compare command pays for it
    from odtkit import Comparison

NAME = "compare"


#: ``odtkit compare``'s methods when --methods is not given (the MIPs among them sized to the
#: table and --time-limit: ``compare(..., sized=True)``).
_DEFAULT_METHODS = "dp,columns,pathoct,flowoct,rbinoct"


def run(args: argparse.Namespace) -> int:
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
    constrained = _tables._stated(args)
    every = getattr(args, "thresholds", None) == "all" and args.fairness is None and not constrained
    if every and _tables._is_file_argument(args.dataset):
        # every threshold: the exact search replaces dp (the MIPs get every midpoint; with
        # --fairness the fair dp keeps every midpoint: the exact search takes no constraint)
        methods = list(dict.fromkeys("exact" if m == "dp" else m for m in methods))
    raw = any(METHODS[m].raw for m in methods)
    data = _tables._load(args, "--dataset", exact=raw)
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
        choice = _tables._threshold_choice(args)
        try:
            comparison = compare(
                data.frame,
                y=data.labels,
                thresholds=choice,
                constraints=_tables._constraints(args) or None,
                **options,
            )
        except (ValueError, TypeError) as exc:
            raise BadInput(f"--dataset: {Path(args.dataset).name}: {exc}") from None
        comparison = comparison.replace(dataset=Path(args.dataset).stem)
        data.binarization = _tables._binarization(comparison.binarizer, choice)
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
        # the task (not its dataset): its threshold policy gives each row's certificate
        # its side constraints (--constraint) were resolved with the task, by raw column
        comparison = compare(data.task, fairness=data.fairness, **options)
    return _report_comparison(comparison, args, data, raw)


def _report_comparison(
    comparison: Comparison, args: argparse.Namespace, data: _tables._Data, raw: bool
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
    constraints = None if comparison.task is None else comparison.task.constraints
    if constraints:
        print(f"constraints: {constraints.describe()}")
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
    comparison: Comparison, table: pd.DataFrame, features: Any, data: _tables._Data
) -> dict[str, Any]:
    """What ``compare --json`` prints."""
    best = comparison.best
    constraints = None if comparison.task is None else comparison.task.constraints
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
        # what every run carried (--constraint, --costs), as docs/constraints.md words it
        "constraints": list(constraints.descriptions) if constraints else [],
    }


def _feature_names(features: Any, comparison: Comparison) -> list[str]:
    """The names of the features the best tree indexes (its Binarizer's, or the dataset's)."""
    if hasattr(features, "get_feature_names_out"):
        return [str(n) for n in features.get_feature_names_out()]
    return list(comparison.feature_names)


def add_parser(sub: Any) -> None:
    """Add the ``compare`` sub-parser to ``sub`` (:func:`odtkit.cli.build_parser`)."""
    from odtkit.methods import DEFAULT_MAX_DEPTH, METHODS
    from odtkit.methods import describe as describe_methods
    from odtkit.solvers import registered_backends

    backends = registered_backends()
    fair_methods = ", ".join(name for name, m in METHODS.items() if m.fair)

    cmp = _subcommand(
        sub,
        "compare",
        help="solve one problem with the search core and the MIPs, verify and tabulate",
    )
    cmp.add_argument(
        "--dataset",
        default="monk1",
        help="bundled dataset name, or a CSV file (header row; columns are binarized)",
    )
    _tables._add_problem_arguments(cmp, depth=DEFAULT_MAX_DEPTH)
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
    _add_limits(cmp, default=10.0, time_help="seconds per run")
    cmp.add_argument("--no-warm-start", action="store_true", help="start the MIPs cold")
    cmp.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _tables._add_constraint_argument(cmp)
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

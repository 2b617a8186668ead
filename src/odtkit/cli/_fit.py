"""``odtkit fit``: a certified optimal tree on a CSV file or a bundled dataset, printed, and
with ``--out`` saved for ``odtkit predict`` (:mod:`odtkit.io`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from odtkit.cli import _tables
from odtkit.cli._common import (
    _OVER,
    BadInput,
    _add_limits,
    _add_output_switches,
    _check_common,
    _check_out,
    _checked,
    _clamp_depth,
    _exit_code,
    _not_written,
    _out_help,
    _plural,
    _print_json,
    _save,
    _subcommand,
)

NAME = "fit"


def _tree_payload(result: Any, data: _tables._Data, args: argparse.Namespace) -> dict[str, Any]:
    """What ``fit --json`` prints and ``--out`` writes (:func:`odtkit.io.tree_record`): the
    answer, how to read the tree, and everything ``odtkit predict`` needs to binarize new rows
    the same way."""
    from odtkit.io import tree_record

    return tree_record(
        result,
        data.dataset,
        label=data.label,
        method=result.method if result.method == "exact" or args.method == "auto" else args.method,
        lam=args.lam,
        max_depth=args.max_depth,
        certificate=_certificate(result, data),
        binarization=data.binarization,
        features=data.specs,
        reading=data.reading,
    )


def _certificate(result: Any, data: _tables._Data) -> str | None:
    """Over what ``result``'s tree is proven optimal (None: it is not): the Result's own
    certificate, set by :func:`odtkit.solve` by the one rule of the API, the CLI and
    ``compare`` (:meth:`odtkit.datasets.Thresholds.certificate`)."""
    certificate = getattr(result, "certificate", None)
    return None if certificate is None else str(certificate)


def _wants_exact(args: argparse.Namespace, method: Any) -> bool:
    """The exact search over every threshold runs: ``--method exact``, or ``dp`` with
    ``--thresholds all`` or ``auto`` (the default) on a CSV at a limited depth (unlimited,
    ``all`` binarizes every midpoint and dp searches it: the same optimum, as before the exact
    search existed; ``auto`` guesses)."""
    if _tables._stated(args) and not getattr(method, "raw", False):
        return False  # side constraints: the binarization's methods (the exact search sits out)
    if getattr(method, "raw", False):
        if args.max_depth is None:
            raise BadInput(
                f"--max-depth none: method {method.name} is depth-limited; give --max-depth N"
            )
        return True
    return (
        method.name == "dp"
        and getattr(args, "thresholds", None) in ("all", "auto")
        and args.max_depth is not None
        and _tables._is_file_argument(args.dataset)
    )


def _exact_fit(args: argparse.Namespace, data: _tables._Data) -> Any:
    """The exact search on the CSV's raw columns (:func:`odtkit.solve` of a task whose policy
    is every threshold, its guess charged to ``--time-limit``); fills ``data`` with the
    binarization its tree reads (the Result's Binarizer: the thresholds the tree uses), so the
    printed tree, ``--json`` and ``--out`` (what ``predict`` re-evaluates) are as for a
    binarized fit."""
    from odtkit.io import feature_dicts
    from odtkit.task import Task, solve

    # "auto" or "all" as stated (--method exact under another policy searches every threshold)
    choice = args.thresholds if getattr(args, "thresholds", None) in ("all", "auto") else "all"
    task = Task.from_table(
        data.frame,
        data.labels,
        thresholds=choice,
        binarize=True,
        time_limit=args.time_limit,
        name=Path(args.dataset).stem,
        exact=True,
    )
    result = _checked(
        lambda: solve(
            task,
            method="exact",
            lam=args.lam,
            max_depth=args.max_depth,
            memory_limit_mb=args.memory_limit_mb,
        )
    )
    data.task = task
    data.dataset, binarizer = task.features_of(result)
    data.features = binarizer
    data.binarization = _tables._binarization(binarizer, choice, exact=True)
    data.specs = feature_dicts(binarizer.get_feature_specs())
    return result


def _check_constrained(args: argparse.Namespace, method: Any, data: _tables._Data) -> None:
    """Refuse a search named by ``--method`` for ``--constraint``s it cannot certify, and a
    MIP (``auto`` may pick one) without a depth, before anything is solved."""
    from odtkit.methods import METHODS, method_names
    from odtkit.task import search_sits_out

    task = data.task
    if task is None or not task.constraints:
        return
    why = search_sits_out(task, method.name) if method.is_search else ""
    if args.method == "auto":
        if why and args.max_depth is None:
            raise BadInput(
                f"--constraint: the search cannot certify them ({why}) and a MIP needs a "
                "depth: give --max-depth N"
            )
    elif why:
        mips = [n for n in method_names(exact=True, raw=False) if not METHODS[n].is_search]
        raise BadInput(
            f"--method {args.method} cannot certify the constraints: {why}; use --method auto "
            f"or a MIP ({', '.join(mips)})"
        )


def _check_backend(name: str, option: str) -> None:
    from odtkit.solvers import registered_backends

    if name not in registered_backends():
        raise BadInput(f"{option} {name!r}: choose from {', '.join(registered_backends())}")


def run(args: argparse.Namespace) -> int:
    from odtkit.io import dumps
    from odtkit.methods import get_method

    if args.method is None:  # the search, or a MIP for constraints it cannot certify
        args.method = "auto" if _tables._stated(args) else "dp"
    if getattr(args, "thresholds", None) is None and getattr(args, "max_thresholds", None) is None:
        # fit's default is the estimators': the exact search wherever it runs, else the guess
        args.thresholds = "auto"
    method = _checked(
        lambda: get_method("dp" if args.method == "auto" else args.method), flag="--method"
    )
    if getattr(method, "raw", False) and _tables._stated(args):
        raise BadInput(
            f"--method {args.method}: the exact search over every threshold takes no "
            "--constraint; use --method auto, dp or a MIP"
        )
    _check_common(args, depth_required=not method.is_search)
    _check_backend(args.backend, "--backend")
    _check_out(args, DATA=args.dataset if _tables._is_file_argument(args.dataset) else None)
    exact = _wants_exact(args, method)
    data = _tables._load(args, "DATA", exact=exact, clock=True)
    if exact:  # the binarization is the tree's own, known once it is found
        result = _exact_fit(args, data)
    else:
        _clamp_depth(args, data.dataset)
        _check_constrained(args, method, data)
    dataset = data.dataset
    if data.binarization is not None and not args.json:
        print(data.binarization["summary"], file=sys.stderr)
    if not exact:
        from odtkit.task import solve

        # the time limit is what binarization left of --time-limit (the task's deadline); a
        # MIP is warm-started by the search core as the estimator's is: one path, one answer
        result = solve(
            data.task,
            method="auto" if args.method == "auto" else method,
            lam=args.lam,
            max_depth=args.max_depth,
            backend=args.backend,
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
    features = _plural(dataset.n_features, "binary feature")
    if data.binarization is not None and data.binarization["exact_search"]:
        # what the certificate covers is every threshold of the columns; the binary features
        # are the returned tree's own binarization (its thresholds, the columns' categories)
        columns = _plural(data.binarization["n_columns"], "column")
        features = f"{columns} searched over every threshold (the tree's binarization: {features})"
    print(
        f"data {dataset.name}: {dataset.n_samples} rows, {features}, "
        f"classes {dataset.classes.tolist()}; method {payload['method']}, lambda {args.lam}, "
        f"depth {depth}"
    )
    constraints = None if data.task is None else data.task.constraints
    if constraints:
        print(f"constraints: {constraints.describe()}")
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


def add_parser(sub: Any) -> None:
    """Add the ``fit`` sub-parser to ``sub`` (:func:`odtkit.cli.build_parser`)."""
    from odtkit.methods import DEFAULT_TIME_LIMIT
    from odtkit.methods import describe as describe_methods
    from odtkit.solvers import registered_backends

    backends = registered_backends()

    fit = _subcommand(
        sub,
        "fit",
        help="fit a certified optimal tree on a CSV file (or a bundled dataset)",
    )
    _tables._add_data_arguments(fit)
    fit.add_argument(
        "--method",
        default=None,
        help="auto (the default: dp, or with a --constraint the search cannot certify a MIP "
        "that carries it: columns (branch-and-price) when its pricing takes them, else pathoct "
        "when it fits the time limit, else flowoct) or one of:\n" + describe_methods(),
    )
    fit.add_argument("--backend", default="highs", help="MIP backend: " + ", ".join(backends))
    _add_limits(fit, default=DEFAULT_TIME_LIMIT, time_help="seconds")
    fit.add_argument(
        "--out",
        metavar="FILE",
        help=_out_help(
            "the tree, its certificate and the binarization as JSON (what 'odtkit predict' reads)"
        )
        + "; a run that ends without a tree writes nothing and says so",
    )
    _tables._add_constraint_argument(fit)
    _add_output_switches(fit)

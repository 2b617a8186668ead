"""Command line: ``odtkit datasets``, ``odtkit fit``, ``odtkit compare`` and ``odtkit prune``.

Exit codes: 0 the answer is certified optimal; 2 bad input (a wrong argument or file; the
message names it); 3 a time or node limit stopped the work (the best answer so far is
printed, with its bound); 1 no answer; 130 interrupted by Ctrl-C (the best answer so far is
printed first).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from odtkit.fairness import NOTIONS

__all__ = ["BadInput", "build_parser", "main"]

Command = Callable[[argparse.Namespace], int]

EXIT_OPTIMAL, EXIT_NO_ANSWER, EXIT_BAD_INPUT, EXIT_LIMIT, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class BadInput(Exception):
    """An argument or input file the command cannot use (exit code 2)."""


def _exit_code(status: str) -> int:
    if status == "optimal":
        return EXIT_OPTIMAL
    if status == "interrupted":
        return EXIT_INTERRUPTED
    if status in ("time_limit", "node_limit", "memory_limit", "feasible"):
        return EXIT_LIMIT
    return EXIT_NO_ANSWER


def _checked(what: Callable[[], Any]) -> Any:
    """``what()``, its ValueError/TypeError/FileNotFoundError turned into :class:`BadInput`.

    Only argument checks and input loading run through here: an error deeper in a solve is a
    bug and keeps its traceback.
    """
    try:
        return what()
    except (ValueError, TypeError, FileNotFoundError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise BadInput(str(message)) from None


def _datasets(args: argparse.Namespace) -> int:
    from odtkit import datasets

    table = datasets.describe()
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table.to_string(index=False))
    return 0


def _columns(text: str | None) -> list[str]:
    return [c.strip() for c in (text or "").split(",") if c.strip()]


def _load(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """The dataset (a name or a CSV path), the fairness constraint of the arguments and how to
    name its features when printing (the fitted Binarizer of a CSV: ``age <= 40.5``).

    A protected column is taken out of the split features unless ``--split-on-protected``; in a
    CSV it keeps its raw values (any number of groups), the other columns are binarized if
    they are not 0/1.
    """
    from odtkit.datasets import Dataset, binarize_frame
    from odtkit.datasets._bundled import _non_binary_columns, _read_table
    from odtkit.fairness import Fairness, split_protected

    notion = getattr(args, "fairness", None)  # fit has no fairness arguments
    protected = _columns(getattr(args, "protected", None))
    legit_column = getattr(args, "legit", None)
    if notion is None and (protected or legit_column):
        raise BadInput("--protected/--legit need --fairness NOTION")
    if notion is not None and not protected:
        raise BadInput("--fairness needs --protected COLUMN[,COLUMN...]")
    path = Path(args.dataset)
    values: Any = None
    binarizer: Any = None
    legit: Any = None
    if path.suffix.lower() in (".csv", ".tsv", ".txt") or path.is_file():
        if not path.is_file():
            raise BadInput(f"--dataset {args.dataset!r}: no such file")
        frame = _read_table(path, None)
        label = args.label or str(frame.columns[-1])
        for column in [label, *protected, *_columns(legit_column)]:
            if column not in frame.columns:
                raise BadInput(
                    f"column {column!r} is not in {path.name} "
                    f"(columns: {list(frame.columns)[:10]}...)"
                )
        if protected:
            values = frame[protected].to_numpy()
            values = values[:, 0] if len(protected) == 1 else values
            if not args.split_on_protected:
                frame = frame.drop(columns=protected)
        if legit_column:
            legit = frame[legit_column].to_numpy()
        if _non_binary_columns(frame.drop(columns=[label])):
            dataset, binarizer = binarize_frame(
                frame, label, name=path.stem, max_thresholds=args.max_thresholds
            )
        else:
            dataset = Dataset.from_frame(frame, label, name=path.stem)
    else:
        dataset = _named_dataset(args.dataset)
        if protected:
            if args.split_on_protected:
                values = tuple(protected) if len(protected) > 1 else protected[0]
            else:
                dataset, values = split_protected(
                    dataset, protected if len(protected) > 1 else protected[0]
                )
        if legit_column:
            legit = legit_column
    if notion is None:
        return dataset, None, binarizer or dataset.feature_names
    # the labels of a CSV may be numbers: match the class whose text is --positive-class
    positive = next((c for c in dataset.classes if str(c) == args.positive_class), None)
    fairness = Fairness(
        notion,
        protected=values,
        delta=args.delta,
        positive_class=args.positive_class if positive is None else positive,
        legit=legit,
    )
    return dataset, fairness, binarizer or dataset.feature_names


def _named_dataset(name: str) -> Any:
    """A bundled dataset (or a benchmark set of :func:`odtkit.datasets.load_shared`) by name."""
    from odtkit import datasets
    from odtkit._validation import check_dataset
    from odtkit.datasets._bundled import resolve

    try:
        return check_dataset(resolve(name))
    except (ValueError, FileNotFoundError):
        raise BadInput(
            f"{name!r} is neither a file nor a bundled dataset; bundled: "
            f"{', '.join(datasets.names())} (or pass a CSV path: a header row, one column per "
            "feature and a label column, e.g. 'age,income,colour,y')"
        ) from None


def _depth(text: str) -> int | None:
    if text.lower() in ("none", "unlimited"):
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'none', got {text!r}") from None


def _check_common(args: argparse.Namespace, *, depth_required: bool) -> None:
    from odtkit._validation import check_depth, check_lambda, check_positive_number

    _checked(lambda: check_lambda(args.lam))
    _checked(lambda: check_depth(args.max_depth, allow_none=not depth_required, minimum=1))
    _checked(lambda: check_positive_number(args.time_limit, "time_limit"))
    _checked(lambda: check_positive_number(args.memory_limit_mb, "memory_limit_mb"))


def _print_json(payload: dict[str, Any]) -> None:
    print(json.dumps(payload, indent=1, default=_json_default))


def _json_default(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def _tree_payload(result: Any, dataset: Any, args: argparse.Namespace) -> dict[str, Any]:
    """What ``fit --json`` prints and ``--out`` writes: the answer and how to read the tree."""
    from odtkit import metrics

    tree = result.model
    payload: dict[str, Any] = {
        "data": dataset.name,
        "method": args.method,
        "lam": args.lam,
        "max_depth": args.max_depth,
        "status": result.status,
        "objective": result.objective,
        "lower_bound": result.lower_bound,
        "gap": result.gap,
        "time": result.time,
        "message": result.message,
    }
    if tree is not None:
        payload.update(
            n_leaves=tree.n_leaves,
            depth=tree.depth,
            train_accuracy=metrics.accuracy(tree, dataset),
            feature_names=list(dataset.feature_names),
            classes=dataset.classes.tolist(),
            tree=tree.to_dict(),
        )
    return payload


def _fit(args: argparse.Namespace) -> int:
    from odtkit import solve_formulation
    from odtkit.methods import get_method

    method = _checked(lambda: get_method(args.method))
    _check_common(args, depth_required=not method.is_search)
    dataset, _, features = _checked(lambda: _load(args))
    if method.is_search:
        result = method.search(
            dataset,
            lam=args.lam,
            max_depth=args.max_depth,
            time_limit=args.time_limit,
            memory_limit_mb=args.memory_limit_mb,
        )
    else:
        result = solve_formulation(
            method.formulation(),
            dataset,
            backend=args.backend,
            lam=args.lam,
            max_depth=args.max_depth,
            time_limit=args.time_limit,
        )
    payload = _tree_payload(result, dataset, args)
    if args.out is not None and result.model is not None:
        Path(args.out).write_text(json.dumps(payload, indent=1, default=_json_default))
    if args.json:
        _print_json(payload)
        return _exit_code(result.status)
    depth = "unlimited" if args.max_depth is None else f"<= {args.max_depth}"
    print(
        f"data {dataset.name}: {dataset.n_samples} rows, {dataset.n_features} binary features, "
        f"classes {dataset.classes.tolist()}; method {method.name}, lambda {args.lam}, "
        f"depth {depth}"
    )
    print(
        f"status {result.status}, objective {result.objective:.6g}, lower bound "
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
    print(result.model.to_text(features, dataset.classes))
    return _exit_code(result.status)


def _compare(args: argparse.Namespace) -> int:
    from odtkit.compare import compare
    from odtkit.methods import METHODS
    from odtkit.solvers import registered_backends

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise BadInput(f"unknown method(s) {unknown}; choose from {tuple(METHODS)}")
    unknown = [b for b in backends if b not in registered_backends()]
    if unknown:
        raise BadInput(f"unknown backend(s) {unknown}; choose from {registered_backends()}")
    _check_common(args, depth_required=True)
    dataset, fairness, features = _checked(lambda: _load(args))
    table = compare(
        dataset,
        lam=args.lam,
        max_depth=args.max_depth,
        methods=methods,
        backends=backends,
        time_limit=args.time_limit,
        warm_start=not args.no_warm_start,
        fairness=fairness,
        memory_limit_mb=args.memory_limit_mb,
    )
    attrs = table.attrs
    certified = not math.isnan(attrs["certified_optimum"])
    if "interrupted" in set(table["status"]):
        code = EXIT_INTERRUPTED
    else:
        code = EXIT_OPTIMAL if certified else EXIT_LIMIT
    if args.json:
        best = attrs["best_tree"]
        _print_json(
            {
                "dataset": attrs["dataset"],
                "lam": attrs["lam"],
                "max_depth": attrs["depth"],
                "certified_optimum": attrs["certified_optimum"] if certified else None,
                "rows": table.to_dict(orient="records"),
                "best_tree": None if best is None else best.to_dict(),
                "feature_names": list(attrs["feature_names"]),
                "classes": list(attrs["class_names"]),
            }
        )
        return code
    print(
        f"dataset {attrs['dataset']}, lambda {attrs['lam']}, depth <= {attrs['depth']}, "
        f"time limit {args.time_limit} s per run, MIP warm start from {attrs['warm_start_source']}"
    )
    if fairness is not None:
        print(
            f"fairness: {fairness.notion} disparity <= {fairness.delta} between the groups of "
            f"{args.protected}, positive class {fairness.positive_class!r}"
        )
    # messages are sentences: print them under the table, not as a column
    shown = table.drop(columns="message")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    for row in table.itertuples():
        if row.message:
            print(f"note: {row.method} ({row.backend}): {row.message}")
    print(_reading(table))
    best = attrs["best_tree"]
    if best is not None:
        row = table.iloc[attrs["best_row"]]
        optimum = attrs["certified_optimum"]
        print(
            f"best tree: {row['method']} ({row['backend']}), objective {row['objective']:.6f}, "
            f"{best.n_leaves} leaves, "
            + (f"certified optimum {optimum:.6f}" if certified else "not certified")
        )
        print(best.to_text(features, attrs["class_names"]))
    return code


def _seconds(t: float) -> str:
    return f"{t * 1000:.2g} ms" if t < 0.1 else f"{t:.2g} s"


def _reading(table: pd.DataFrame) -> str:
    """The table in one sentence: who certified what how fast, who stopped with which gap."""
    parts = []
    for row in table.itertuples():
        name = row.method if table["method"].is_unique else f"{row.method}/{row.backend}"
        if row.status == "optimal":
            parts.append(f"{name} certified {row.objective:.6g} in {_seconds(row.time)}")
        elif row.n_leaves > 0 and row.status in ("time_limit", "node_limit", "interrupted"):
            parts.append(
                f"{name} holds a tree of value {row.objective:.6g} but stopped ({row.status}) "
                f"with bound {row.bound:.4g}, gap {row.gap:.3g}"
            )
        else:
            parts.append(f"{name}: {row.status}")
    same = all(agrees is True for agrees in table["agrees"])  # None: nothing certified
    return (
        "reading: " + "; ".join(parts) + ("; every tree has the certified value." if same else ".")
    )


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


def _prune(args: argparse.Namespace) -> int:
    from odtkit.datasets._bundled import _read_table
    from odtkit.pruning import prune

    forest_path, data_path = Path(args.forest), Path(args.data)
    for path, what in ((forest_path, "FOREST"), (data_path, "DATA")):
        if not path.is_file():
            raise BadInput(f"{what} {str(path)!r}: no such file")
    if (args.lam is None) == (args.budget is None):
        raise BadInput("give exactly one of --lam and --budget")
    with forest_path.open("rb") as handle:
        # a pickle runs code when loaded: only load files you trust (the --help says so)
        ensemble = _checked(lambda: pickle.load(handle))
    frame = _checked(lambda: _read_table(data_path, None))
    label = args.label or str(frame.columns[-1])
    if label not in frame.columns:
        raise BadInput(f"--label {label!r} is not a column of {data_path.name}")
    X, y = frame.drop(columns=[label]), frame[label].to_numpy()
    costs = _costs(args.costs, [str(c) for c in X.columns])
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
    payload: dict[str, Any] = {
        "status": result.status,
        "objective": result.objective,
        "lower_bound": result.lower_bound,
        "time": result.time,
        "message": result.message,
    }
    if pruned is not None:
        payload.update(pruned.summary())
        payload.update(n_trees=pruned.n_trees, train_accuracy=1.0 - pruned.error(X, y))
        if args.out is not None:
            with Path(args.out).open("wb") as handle:
                pickle.dump(pruned, handle)
    if args.json:
        _print_json(payload)
        return _exit_code(result.status)
    print(
        f"status {result.status}, objective {result.objective:.6g}, lower bound "
        f"{result.lower_bound:.6g}, time {result.time:.2f} s"
    )
    if pruned is None:
        print(f"no pruning: {result.message}")
        return _exit_code(result.status)
    print(
        f"{pruned.n_trees} trees: {pruned.n_leaves_unpruned} leaves -> {pruned.n_leaves}; "
        f"error term {pruned.error_term:.6g}, cost term {pruned.cost_term:.6g} (average feature "
        f"cost per example), train accuracy {payload['train_accuracy']:.4f}"
        + ("" if args.out is None else f"; pruned ensemble pickled to {args.out}")
    )
    return _exit_code(result.status)


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawTextHelpFormatter):
    """Defaults shown, and line breaks kept (one line per method in ``--methods``)."""


MEMORY_HELP = (
    "memory budget of the native searches in MB (default: 75%% of what the process can still "
    "get: available memory, ulimit -v, a container's limit; $ODTKIT_MEMORY_LIMIT_MB "
    "overrides); at the budget the best answer so far is printed (exit 3)"
)


def _add_problem_arguments(parser: argparse.ArgumentParser, *, depth: int | None) -> None:
    parser.add_argument("--label", help="label column of a CSV file (default: the last column)")
    parser.add_argument(
        "--max-depth",
        type=_depth,
        default=depth,
        help="maximum depth >= 1 ('none': unlimited, search methods only)",
    )
    parser.add_argument("--lam", type=float, default=0.01, help="penalty per leaf, >= 0")
    parser.add_argument(
        "--max-thresholds",
        type=int,
        default=None,
        help="at most this many thresholds per numeric CSV column (default: every midpoint); "
        "the tree is then optimal over those thresholds",
    )


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Command]]:
    from odtkit import __version__
    from odtkit.methods import describe as describe_methods

    parser = argparse.ArgumentParser(
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

    fit = sub.add_parser(
        "fit",
        help="fit a certified optimal tree on a CSV file (or a bundled dataset)",
        formatter_class=_HelpFormatter,
    )
    fit.add_argument(
        "dataset",
        metavar="DATA",
        help="CSV file with a header row (numeric and categorical columns are binarized), "
        "or a bundled dataset name",
    )
    _add_problem_arguments(fit, depth=4)
    fit.add_argument("--method", default="dp", help="one of:\n" + describe_methods())
    fit.add_argument("--backend", default="highs", help="MIP backend: highs, pyomo or pulp")
    fit.add_argument("--time-limit", type=float, default=60.0, help="seconds")
    fit.add_argument("--memory-limit-mb", type=float, help=MEMORY_HELP)
    fit.add_argument("--out", help="write the tree, its certificate and names as JSON")
    fit.add_argument("--json", action="store_true", help="print JSON instead of text")
    commands["fit"] = _fit

    cmp = sub.add_parser(
        "compare",
        help="solve one problem with the search core and the MIPs, verify and tabulate",
        formatter_class=_HelpFormatter,
    )
    cmp.add_argument(
        "--dataset",
        default="monk1",
        help="bundled dataset name, or a CSV file (header row; non-0/1 columns are binarized)",
    )
    _add_problem_arguments(cmp, depth=3)
    cmp.add_argument(
        "--methods",
        default="dp,pathoct,flowoct,rbinoct",
        help="comma-separated, any of:\n" + describe_methods(),
    )
    cmp.add_argument("--backends", default="highs", help="comma-separated: highs,pyomo,pulp")
    cmp.add_argument("--time-limit", type=float, default=10.0, help="seconds per run")
    cmp.add_argument("--memory-limit-mb", type=float, help=MEMORY_HELP)
    cmp.add_argument("--no-warm-start", action="store_true", help="start the MIPs cold")
    cmp.add_argument("--json", action="store_true", help="print JSON instead of a table")
    fair = cmp.add_argument_group("fairness (methods dp, rbinoct, flowoct, pathoct)")
    fair.add_argument(
        "--fairness",
        choices=NOTIONS,
        help="bound a disparity: sp (statistical parity), csp (conditional sp), pe (predictive "
        "equality), eopp (equal opportunity), eodds (equalized odds)",
    )
    fair.add_argument(
        "--protected",
        help="protected column(s), comma-separated; taken out of the split features",
    )
    fair.add_argument("--delta", type=float, default=0.05, help="largest disparity, in [0, 1]")
    fair.add_argument("--positive-class", default="1", help="the favourable label")
    fair.add_argument("--legit", help="legitimate factor column of --fairness csp")
    fair.add_argument(
        "--split-on-protected",
        action="store_true",
        help="keep the protected column(s) among the split features too",
    )
    commands["compare"] = _compare

    prn = sub.add_parser(
        "prune",
        help="optimally prune a pickled scikit-learn forest for error + feature cost",
        formatter_class=_HelpFormatter,
    )
    prn.add_argument(
        "forest",
        metavar="FOREST",
        help="pickle of a fitted RandomForest/ExtraTrees/Bagging classifier (a pickle runs code "
        "when loaded: only load files you trust)",
    )
    prn.add_argument("data", metavar="DATA", help="CSV of the training rows the forest saw")
    prn.add_argument("--label", help="label column (default: the last column)")
    prn.add_argument("--lam", type=float, help="weight of the average feature cost")
    prn.add_argument("--budget", type=float, help="instead of --lam: largest average cost")
    prn.add_argument("--costs", help="feature costs NAME=COST,... (others cost 1)")
    prn.add_argument("--time-limit", type=float, help="seconds per solver call")
    prn.add_argument("--memory-limit-mb", type=float, help=MEMORY_HELP)
    prn.add_argument("--out", help="pickle the pruned ensemble here")
    prn.add_argument("--json", action="store_true", help="print JSON instead of text")
    commands["prune"] = _prune
    return parser, commands


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = build_parser()
    args = parser.parse_args(argv)
    try:
        return commands[args.command](args)
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

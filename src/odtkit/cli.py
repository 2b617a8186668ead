"""Command line: ``odtkit datasets`` and ``odtkit compare``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from odtkit.fairness import NOTIONS

Command = Callable[[argparse.Namespace], int]


def _datasets(args: argparse.Namespace) -> int:
    from odtkit import datasets

    table = datasets.describe()
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table.to_string(index=False))
    return 0


def _columns(text: str | None) -> list[str]:
    return [c.strip() for c in (text or "").split(",") if c.strip()]


def _load(args: argparse.Namespace) -> tuple[Any, Any]:
    """The dataset (a name or a CSV path) and the fairness constraint of the arguments.

    A protected column is taken out of the split features unless ``--split-on-protected``; in a
    CSV it keeps its raw values (any number of groups), the other columns are binarized if
    they are not 0/1.
    """
    from odtkit.compare import _dataset
    from odtkit.datasets import Dataset, binarize_frame
    from odtkit.datasets._bundled import _non_binary_columns, _read_table
    from odtkit.fairness import Fairness, split_protected

    protected = _columns(args.protected)
    if args.fairness is None and (protected or args.legit):
        raise SystemExit("odtkit compare: --protected/--legit need --fairness NOTION")
    if args.fairness is not None and not protected:
        raise SystemExit("odtkit compare: --fairness needs --protected COLUMN[,COLUMN...]")
    path = Path(args.dataset)
    values: Any = None
    legit: Any = None
    if path.suffix.lower() in (".csv", ".tsv", ".txt") or path.is_file():
        if not path.is_file():
            raise SystemExit(f"odtkit compare: --dataset {args.dataset!r}: no such file")
        frame = _read_table(path, None)
        label = args.label or str(frame.columns[-1])
        for column in [label, *protected, *_columns(args.legit)]:
            if column not in frame.columns:
                raise SystemExit(
                    f"odtkit compare: column {column!r} is not in {path.name} "
                    f"(columns: {list(frame.columns)[:10]}...)"
                )
        if protected:
            values = frame[protected].to_numpy()
            values = values[:, 0] if len(protected) == 1 else values
            if not args.split_on_protected:
                frame = frame.drop(columns=protected)
        if args.legit:
            legit = frame[args.legit].to_numpy()
        if _non_binary_columns(frame.drop(columns=[label])):
            dataset, _ = binarize_frame(frame, label, name=path.stem)
        else:
            dataset = Dataset.from_frame(frame, label, name=path.stem)
    else:
        dataset = _dataset(args.dataset)
        if protected:
            if args.split_on_protected:
                values = tuple(protected) if len(protected) > 1 else protected[0]
            else:
                dataset, values = split_protected(
                    dataset, protected if len(protected) > 1 else protected[0]
                )
        if args.legit:
            legit = args.legit
    if args.fairness is None:
        return dataset, None
    # the labels of a CSV may be numbers: match the class whose text is --positive-class
    positive = next((c for c in dataset.classes if str(c) == args.positive_class), None)
    fairness = Fairness(
        args.fairness,
        protected=values,
        delta=args.delta,
        positive_class=args.positive_class if positive is None else positive,
        legit=legit,
    )
    return dataset, fairness


def _compare(args: argparse.Namespace) -> int:
    from odtkit.compare import compare
    from odtkit.methods import METHODS

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise SystemExit(
            f"odtkit compare: unknown method(s) {unknown}; choose from {tuple(METHODS)}"
        )
    try:
        dataset, fairness = _load(args)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        raise SystemExit(f"odtkit compare: {exc}") from None
    table = compare(
        dataset,
        lam=args.lam,
        max_depth=args.max_depth,
        methods=methods,
        backends=backends,
        time_limit=args.time_limit,
        warm_start=not args.no_warm_start,
        fairness=fairness,
    )
    attrs = table.attrs
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
    best = attrs["best_tree"]
    if best is not None:
        row = table.iloc[attrs["best_row"]]
        print(
            f"best tree: {row['method']} ({row['backend']}), objective {row['objective']:.6f}, "
            f"{best.n_leaves} leaves, certified optimum {attrs['certified_optimum']:.6f}"
        )
        print(best.to_text(attrs["feature_names"], attrs["class_names"]))
    return 0


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Command]]:
    from odtkit.methods import describe as describe_methods

    parser = argparse.ArgumentParser(
        prog="odtkit",
        description="Provably optimal sparse decision trees: MIP and search, compared.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    commands: dict[str, Command] = {}
    sub.add_parser("datasets", help="list the bundled datasets with shapes and class balance")
    commands["datasets"] = _datasets
    cmp = sub.add_parser(
        "compare",
        help="solve one problem with the search core and the MIPs, verify and tabulate",
        formatter_class=argparse.RawTextHelpFormatter,  # one line per method in --methods
    )
    cmp.add_argument(
        "--dataset",
        default="monk1",
        help="bundled or shared dataset name, or a CSV file (header row; non-0/1 columns are "
        "binarized)",
    )
    cmp.add_argument("--label", help="label column of a CSV file (default: the last column)")
    cmp.add_argument("--max-depth", type=int, default=3, help="maximum depth (>= 1)")
    cmp.add_argument("--lam", type=float, default=0.01, help="penalty per leaf")
    cmp.add_argument(
        "--methods",
        default="dp,rbinoct,flowoct",
        help="comma-separated, any of:\n" + describe_methods(),
    )
    cmp.add_argument("--backends", default="highs", help="comma-separated: highs,pyomo,pulp")
    cmp.add_argument("--time-limit", type=float, default=10.0, help="seconds per run")
    cmp.add_argument("--no-warm-start", action="store_true", help="start the MIPs cold")
    fair = cmp.add_argument_group("fairness (methods dp, rbinoct, flowoct)")
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
    return parser, commands


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = build_parser()
    args = parser.parse_args(argv)
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

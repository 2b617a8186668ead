"""Command line: ``odtkit datasets`` and ``odtkit compare``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import pandas as pd

Command = Callable[[argparse.Namespace], int]


def _datasets(args: argparse.Namespace) -> int:
    from odtkit import datasets

    table = datasets.describe()
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table.to_string(index=False))
    return 0


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
    table = compare(
        args.dataset,
        lam=args.lam,
        max_depth=args.max_depth,
        methods=methods,
        backends=backends,
        time_limit=args.time_limit,
        warm_start=not args.no_warm_start,
    )
    attrs = table.attrs
    print(
        f"dataset {attrs['dataset']}, lambda {attrs['lam']}, depth <= {attrs['depth']}, "
        f"time limit {args.time_limit} s per run, MIP warm start from {attrs['warm_start_source']}"
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
    cmp.add_argument("--dataset", default="monk1", help="bundled or shared dataset name")
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
    commands["compare"] = _compare
    return parser, commands


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = build_parser()
    args = parser.parse_args(argv)
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

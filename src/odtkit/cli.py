"""Command line: ``odtkit datasets`` (and ``odtkit compare`` once the solvers land)."""

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


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Command]]:
    parser = argparse.ArgumentParser(
        prog="odtkit",
        description="Provably optimal sparse decision trees: MIP and search, compared.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    commands: dict[str, Command] = {}
    sub.add_parser("datasets", help="list the bundled datasets with shapes and class balance")
    commands["datasets"] = _datasets
    return parser, commands


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = build_parser()
    args = parser.parse_args(argv)
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

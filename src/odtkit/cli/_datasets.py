"""``odtkit datasets``: the bundled datasets with their shapes and class balance."""

from __future__ import annotations

import argparse
from typing import Any

import pandas as pd

NAME = "datasets"


def run(args: argparse.Namespace) -> int:
    from odtkit import datasets

    table = datasets.describe()
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table.to_string(index=False))
    return 0


def add_parser(sub: Any) -> None:
    """Add the ``datasets`` sub-parser to ``sub``."""
    sub.add_parser("datasets", help="list the bundled datasets with shapes and class balance")

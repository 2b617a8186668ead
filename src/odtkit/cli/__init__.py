"""Command line: ``odtkit datasets``, ``fit``, ``predict``, ``compare``, ``prune`` and
``rashomon``.

One module per subcommand (``_fit.py``, ``_predict.py``, ``_compare.py``, ``_prune.py``,
``_rashomon.py``, ``_datasets.py``), each a thin adapter over library calls that adds its own
sub-parser (``add_parser``) and runs it (``run``); ``_tables.py`` is the table door (reading a
CSV, choosing its columns, binarizing it), ``_common.py`` what they share (exit codes,
:class:`BadInput`, ``--out``). No subcommand module imports another, and the library never
imports ``odtkit.cli``. The model file ``fit --out`` writes and ``predict`` reads is
:mod:`odtkit.io`'s.

Exit codes: 0 the answer is certified optimal (``predict``: predictions written); 2 bad input
(a wrong argument or file; one line names it, never a traceback); 3 a time or node limit
stopped the work (the best answer so far is printed, with its bound); 1 no answer; 130
interrupted by Ctrl-C (the best answer so far is printed first).

A CSV is binarized the way the estimators binarize it (``--thresholds guess``: the thresholds
of a boosted reference model, see :class:`odtkit.datasets.Binarizer`), and ``fit --out`` writes
everything ``predict`` needs to binarize new rows the same way as JSON (never a pickle).
``--thresholds all`` on a CSV runs the exact search over every threshold of the raw columns
(method ``exact``, :func:`odtkit.core.search_numeric`) in place of ``dp``; the tree's
binarization is then the thresholds it uses. The output says over what each answer is
certified (``certificate``: all thresholds, guessed thresholds, or the binarization).
Warnings print as one line ``odtkit: warning: ...`` on stderr, each once.

A table is read by :func:`odtkit.datasets.read_table_and_reading`: the separator from the
lines (tab for ``.tsv``), a line longer than the header or a name given twice refused, text
stripped of surrounding spaces, and a warning per column that looks like numbers or dates,
naming the option that parses it (``--na-values``, ``--decimal``, ``--thousands``,
``--dates as-numbers``). ``fit --out`` stores how the table was read, and ``predict`` reads
new rows the same way (its own options replace the stored ones).

Files (:mod:`odtkit.files`): ``--out`` is checked before any work (never an input file, an
existing file only with ``--force``) and written atomically; stderr (and ``out`` in the
``--json`` payload) says whether it was written. ``prune`` reads a forest saved by skops,
trusting only the types of a tree ensemble, and a pickle only with ``--trust-pickle``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from odtkit.cli import _common, _compare, _datasets, _fit, _predict, _prune, _rashomon
from odtkit.cli._common import BadInput, _Parser

__all__ = ["BadInput", "build_parser", "main"]

#: The subcommands, in the order ``odtkit --help`` lists them: each adds its own sub-parser
#: (``add_parser``) and runs it (``run``).
_SUBCOMMANDS = (_datasets, _fit, _predict, _compare, _prune, _rashomon)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, _common.Command]]:
    """The ``odtkit`` parser, assembled from the subcommands' own sub-parsers, and per
    subcommand name the function that runs it."""
    from odtkit import __version__

    parser = _Parser(
        prog="odtkit",
        description="Provably optimal sparse decision trees: MIP and search, compared.",
        epilog="exit codes: 0 optimal, 1 no answer, 2 bad input, 3 a limit stopped the work "
        "(best answer so far printed), 130 interrupted",
    )
    parser.add_argument("--version", action="version", version=f"odtkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    commands: dict[str, _common.Command] = {}
    for command in _SUBCOMMANDS:
        command.add_parser(sub)
        commands[command.NAME] = command.run
    return parser, commands


def _one_line_warnings() -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints ``odtkit: warning: <message>`` once per message,
    without the file, line number and source echo a person cannot act on."""
    seen: set[str] = set()

    def show(message: Any, category: Any, filename: Any, lineno: Any, *_: Any, **__: Any) -> None:
        text = " ".join(str(message).split())
        if text not in seen:
            seen.add(text)
            print(f"odtkit: warning: {text}", file=sys.stderr)

    return show


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():  # restores showwarning when the command is done
        warnings.showwarning = _one_line_warnings()
        return _run(commands[args.command], args)


def _run(command: _common.Command, args: argparse.Namespace) -> int:
    try:
        return command(args)
    except BadInput as exc:
        print(f"odtkit {args.command}: error: {exc}", file=sys.stderr)
        return _common.EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"odtkit {args.command}: interrupted", file=sys.stderr)
        return _common.EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader went away (`odtkit compare | head`): not an error of ours; silence the
        # flush at exit that would raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return _common.EXIT_OPTIMAL

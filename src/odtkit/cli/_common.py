"""What every subcommand shares: the exit codes, :class:`BadInput` (a refusal printed as one
line, exit 2), argument checks, ``--out`` writing and the help layout."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

Command = Callable[[argparse.Namespace], int]


EXIT_OPTIMAL, EXIT_NO_ANSWER, EXIT_BAD_INPUT, EXIT_LIMIT, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class BadInput(Exception):
    """An argument or input file the command cannot use (exit code 2)."""


def _exit_code(status: str) -> int:
    """The exit code of a run that ended with ``status``, read from :class:`odtkit.Status`:
    0 optimal, 130 interrupted, 3 a limit stopped it (:attr:`Status.stopped_early`) or the
    answer is feasible but unproven, 1 otherwise (no answer, or an unknown status)."""
    from odtkit.results import Status

    try:
        known = Status.parse(status)
    except ValueError:
        return EXIT_NO_ANSWER
    if known is Status.OPTIMAL:
        return EXIT_OPTIMAL
    if known is Status.INTERRUPTED:
        return EXIT_INTERRUPTED
    if known.stopped_early or known is Status.FEASIBLE:
        return EXIT_LIMIT
    return EXIT_NO_ANSWER


def _checked(what: Callable[[], Any], *, flag: str | None = None) -> Any:
    """``what()``, its ValueError/TypeError/FileNotFoundError turned into :class:`BadInput`.

    Only argument checks and input loading run through here: an error deeper in a solve is a
    bug and keeps its traceback. ``flag`` (``"--max-depth"``) replaces the Python name of the
    argument (``max_depth``) in the message, so it names what the user typed.
    """
    try:
        return what()
    except (ValueError, TypeError, FileNotFoundError, KeyError) as exc:
        message = str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)
        if flag is not None:
            message = message.replace(flag.lstrip("-").replace("-", "_"), flag, 1)
        raise BadInput(message) from None


def _columns(text: str | None) -> list[str]:
    return [c.strip() for c in (text or "").split(",") if c.strip()]


def _shown(names: Iterable[Any], limit: int = 10) -> str:
    texts = [str(n) for n in names]
    return ", ".join(texts[:limit]) + (f", ... ({len(texts)} in all)" if len(texts) > limit else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _check_out(args: argparse.Namespace, **inputs: str | None) -> None:
    """Refuse, before any work is done, an ``--out`` that would lose data or cannot be
    written: an existing file without ``--force``, an input file (``inputs``: ``DATA=path``),
    a directory, a missing or unwritable directory (see :func:`odtkit.files.check_out`)."""
    from odtkit.files import check_out

    if args.out is not None:
        _checked(lambda: check_out(args.out, inputs=inputs, force=args.force))


def _save(args: argparse.Namespace, content: str | bytes, *, say: bool = True) -> dict[str, Any]:
    """Write ``content`` to ``--out`` atomically; what was done, for stderr and ``--json``.

    Interrupted (Ctrl-C) or failing, the older file at ``--out`` stays as it was and no
    partial file is left; stderr says the file was not written.
    """
    from odtkit.files import write_atomic

    try:
        # an OSError (disk full) is one line saying the file was not written
        _checked(lambda: write_atomic(Path(args.out), content, replace=args.force))
    except KeyboardInterrupt:
        _not_written(args, "interrupted while writing")
        raise
    if say:
        print(f"odtkit {args.command}: wrote {args.out}", file=sys.stderr)
    return {"file": args.out, "written": True, "reason": None}


def _not_written(args: argparse.Namespace, reason: str) -> dict[str, Any]:
    """Say on stderr that ``--out`` was NOT written and why (an older file there, if any,
    is not this run's answer)."""
    if os.path.lexists(args.out):
        reason += f"; the file already at {args.out} is from an earlier run, not this one's answer"
    print(f"odtkit {args.command}: --out {args.out} NOT written: {reason}", file=sys.stderr)
    return {"file": args.out, "written": False, "reason": reason}


def _depth(text: str) -> int | None:
    if text.lower() in ("none", "unlimited"):
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'none', got {text!r}") from None


def _check_common(args: argparse.Namespace, *, depth_required: bool) -> None:
    from odtkit.validation import check_depth, check_lambda, check_positive_number, min_depth

    _checked(lambda: check_lambda(args.lam), flag="--lam")
    # only the lower end here: a depth above the number of binary features is clamped once
    # the data is loaded (_clamp_depth), so no huge integer reaches the native code. The
    # API's rule: depth 0 (one leaf) for the searches, >= 1 where a MIP runs (depth_required)
    lowest = min_depth(needs_branch=depth_required)
    depth = args.max_depth if args.max_depth is None else min(args.max_depth, max(lowest, 1))
    _checked(
        lambda: check_depth(depth, allow_none=not depth_required, minimum=lowest),
        flag="--max-depth",
    )
    _checked(lambda: check_positive_number(args.time_limit, "time_limit"), flag="--time-limit")
    _checked(
        lambda: check_positive_number(args.memory_limit_mb, "memory_limit_mb"),
        flag="--memory-limit-mb",
    )


def _clamp_depth(args: argparse.Namespace, dataset: Any) -> None:
    """``--max-depth`` above the number of binary features, clamped to it (at least 1).

    A path tests a feature at most once (a second test of it on the path leaves one branch
    empty), so no deeper tree is better: the clamped problem has the same optimum. A huge
    depth (``99999999999999999999``) never reaches the native code or a MIP this way.
    """
    largest = max(int(dataset.n_features), 1)
    if args.max_depth is not None and args.max_depth > largest:
        warnings.warn(
            f"--max-depth {args.max_depth} is more than the {dataset.n_features} binary "
            "feature(s) of the data, the largest meaningful depth (a path tests a feature at "
            f"most once): solving with --max-depth {largest}, the same optimum",
            UserWarning,
            stacklevel=1,
        )
        args.max_depth = largest


def _print_json(payload: dict[str, Any]) -> None:
    from odtkit.io import dumps

    print(dumps(payload))


_OVER = {
    "all thresholds": "all thresholds",
    "guessed thresholds": "the guessed thresholds",
    "binarization": "the binarization",
}


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawTextHelpFormatter):
    """Defaults shown, and line breaks kept (one line per method in ``--methods``)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line (naming the argument), exit 2."""

    def error(self, message: str) -> Any:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


MEMORY_HELP = (
    "memory budget of the native searches in MB (default: 75%% of what the process can still "
    "get: available memory, ulimit -v, a container's limit; $ODTKIT_MEMORY_LIMIT_MB "
    "overrides); at the budget the best answer so far is printed (exit 3)"
)


NO_HEADER_HELP = (
    "the CSV file has no header row: its columns are named 0, 1, ... by position (--label 4). "
    "Without it, a first row made only of numbers is refused: it is data"
)


FORCE_HELP = "replace an existing --out file (otherwise refused)"


def _out_help(what: str) -> str:
    return (
        f"write {what} to FILE: atomically (a temporary file renamed over FILE, so Ctrl-C or a "
        "full disk leaves no partial file and an older FILE intact; a link at FILE is "
        "replaced, not followed); never an input file; an existing FILE only with --force"
    )


def _subcommand(sub: Any, name: str, **options: Any) -> argparse.ArgumentParser:
    """The sub-parser of command ``name``, in odtkit's help layout."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name, formatter_class=_HelpFormatter, **options
    )
    return parser


def _add_limits(parser: argparse.ArgumentParser, *, default: float | None, time_help: str) -> None:
    """``--time-limit`` (seconds, ``time_help`` saying for what; ``default``) and
    ``--memory-limit-mb`` of the commands that solve, the memory budget described once."""
    parser.add_argument("--time-limit", type=float, default=default, help=time_help)
    parser.add_argument("--memory-limit-mb", type=float, help=MEMORY_HELP)


def _add_output_switches(parser: argparse.ArgumentParser) -> None:
    """``--force`` (overwrite ``--out``) and ``--json`` of the commands that write a result."""
    parser.add_argument("--force", action="store_true", help=FORCE_HELP)
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")

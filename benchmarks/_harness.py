"""Plumbing shared by the benchmark scripts, so that each script says only what it measures.

* measuring: :func:`repeat` (up to N runs, stopping early: a run that hit its limit or took
  longer than :data:`LONG_RUN` is not repeated);
* statistics: :func:`geomean` and :func:`ratio_summary` (overall, where the peer needs at least
  :data:`PEER_FLOOR` seconds, and the hard cases apart from the rest);
* data: :func:`load_dataset` (bundled via ``odtkit.datasets.load``, else the shared benchmark
  sets via ``load_shared``) and :func:`shared_file` (a raw file under ``../shared/data`` or
  ``$ODTKIT_SHARED_DATA``); both return None and say ``[skip]`` when the data is absent;
* child processes: :func:`run_child` (any command; every JSON-object line it prints is a row,
  collected as it arrives, the child killed past a timeout), :func:`call_in_child` (one
  function of a module in this folder, in a fresh interpreter, possibly another venv's), and
  the child side's :func:`emit` and :func:`peak_rss_mb`;
* results: :func:`machine_info`, :func:`timestamp`, :func:`write_results` /
  :func:`read_results` (``NAME.json`` + ``NAME.md``), :func:`md_table`, :func:`fmt` and
  :func:`add_out_dir` (the ``--out-dir`` flag every script takes, so smoke runs can write to
  /tmp instead of over the committed results).

Only the standard library is imported at module level: a peer's own interpreter (ODTlearn's
venv, which has no odtkit) runs this file as the entry point of :func:`call_in_child`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import platform
import queue
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
#: Below this many seconds a peer's time is mostly start-up and timer noise.
PEER_FLOOR = 0.05
#: A run longer than this many seconds is not repeated: its noise is small next to its time.
LONG_RUN = 20.0

T = TypeVar("T")


# -------------------------------------------------------------------------------- measuring
def repeat(run: Callable[[], T], times: int, *, again: Callable[[T], bool]) -> list[T]:
    """Up to ``times`` results of ``run()``, stopping after the first one for which
    ``again(result)`` is false (e.g. it hit its limit or took longer than :data:`LONG_RUN`)."""
    results: list[T] = []
    for _ in range(times):
        results.append(run())
        if not again(results[-1]):
            break
    return results


def median_time(run: Callable[[], T], reps: int, *, long: float = 5.0) -> tuple[float, T]:
    """The median wall time of up to ``reps`` calls of ``run`` (one over ``long`` seconds is
    not repeated) and the last call's result."""
    times: list[float] = []
    outs: list[T] = []
    for _ in range(max(1, reps)):
        start = time.perf_counter()
        outs.append(run())
        times.append(time.perf_counter() - start)
        if times[-1] > long:
            break
    return statistics.median(times), outs[-1]


#: The bundled tables of the search benchmark (benchmarks/search_vs_peers.py) that the
#: constrained and cost-sensitive searches are measured on.
SEARCH_TABLES = (
    "monk1",
    "monk2",
    "monk3",
    "tic-tac-toe",
    "car-evaluation",
    "balance-scale",
    "compas-binary",
    "coupon-carryout",
)


# ------------------------------------------------------------------------------ statistics
def geomean(values: Iterable[float | None]) -> float:
    """Geometric mean of the positive finite values (None, 0, NaN and inf are left out);
    NaN when none is left."""
    kept = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in kept) / len(kept)) if kept else math.nan


@dataclass(frozen=True)
class RatioSummary:
    """Time ratios summarised as the reports quote them (all geometric means)."""

    n: int  #: ratios given (NaN ones included; :func:`geomean` leaves them out)
    geomean: float
    worst: float  #: the largest finite ratio
    n_floor: int  #: ratios whose peer needed at least ``floor`` seconds
    geomean_floor: float
    n_hard: int  #: ratios flagged hard (e.g. a run stopped at the time limit)
    geomean_hard: float
    n_rest: int  #: the others
    geomean_rest: float


def ratio_summary(
    ratios: Sequence[float],
    *,
    peer_times: Sequence[float] | None = None,
    hard: Sequence[bool] | None = None,
    floor: float = PEER_FLOOR,
) -> RatioSummary:
    """Summarise ``ratios``: overall, over those whose ``peer_times`` reach ``floor`` (all of
    them when no peer times are given), and the ``hard`` ones apart from the rest."""
    ratios = list(ratios)
    peer = list(peer_times) if peer_times is not None else [math.inf] * len(ratios)
    flags = list(hard) if hard is not None else [False] * len(ratios)
    above = [r for r, t in zip(ratios, peer, strict=True) if t >= floor]
    hard_ones = [r for r, h in zip(ratios, flags, strict=True) if h]
    rest = [r for r, h in zip(ratios, flags, strict=True) if not h]
    finite = [r for r in ratios if math.isfinite(r)]
    return RatioSummary(
        n=len(ratios),
        geomean=geomean(ratios),
        worst=max(finite, default=math.nan),
        n_floor=len(above),
        geomean_floor=geomean(above),
        n_hard=len(hard_ones),
        geomean_hard=geomean(hard_ones),
        n_rest=len(rest),
        geomean_rest=geomean(rest),
    )


# ------------------------------------------------------------------------------------ data
def load_dataset(name: str) -> Any:
    """A bundled dataset (``odtkit.datasets.load``, aliases included) or a shared benchmark set
    (``odtkit.datasets.load_shared``); None, with a ``[skip]`` line on stderr, when absent."""
    from odtkit import datasets

    try:
        try:
            return datasets.load(name)
        except ValueError:  # not bundled
            return datasets.load_shared(name)
    except (FileNotFoundError, ValueError, OSError) as exc:
        print(f"[skip] {name}: {exc}", file=sys.stderr)
        return None


def shared_file(relative: str) -> Path | None:
    """``relative`` inside the shared data directory (``$ODTKIT_SHARED_DATA``, else the first
    ``shared/data`` above the working directory or the package); None, with a ``[skip]`` line
    on stderr, when absent."""
    from odtkit.datasets import shared_path

    path = shared_path(relative)
    if path is None:
        print(
            f"[skip] {relative}: not found in the shared data directory (../shared/data or "
            "$ODTKIT_SHARED_DATA)",
            file=sys.stderr,
        )
    return path


# -------------------------------------------------------------------------- child processes
@dataclass
class Child:
    """What a child process left: its JSON rows (in order), exit code and stderr."""

    rows: list[dict[str, Any]]
    returncode: int | None
    stderr: str
    timed_out: bool = False

    def stderr_tail(self, n: int = 3) -> list[str]:
        return self.stderr.strip().splitlines()[-n:]

    def reason(self) -> str:
        """The stderr line that names the error (else the last one)."""
        tail = self.stderr.strip().splitlines()
        return next((x for x in tail if "ERROR" in x or "Error" in x), tail[-1] if tail else "")


class ChildError(RuntimeError):
    """A child exited without a result (non-zero exit, no JSON row, or the timeout)."""

    def __init__(self, child: Child) -> None:
        what = "timed out" if child.timed_out else f"exited with {child.returncode}"
        super().__init__(f"child {what}: {child.reason()}")
        self.child = child


def run_child(
    cmd: Sequence[str],
    *,
    timeout: float,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    env: dict[str, str] | None = None,
) -> Child:
    """Run ``cmd``; every stdout line holding a JSON object is a row, passed to ``on_row`` as
    it arrives. The child is killed ``timeout`` seconds after its start (the rows it had
    printed are kept)."""
    rows: list[dict[str, Any]] = []
    # stderr goes to a file: gosdt warns on every fit and a full pipe would block the child
    with tempfile.TemporaryFile(mode="w+") as errfile:
        proc = subprocess.Popen(
            list(cmd), stdout=subprocess.PIPE, stderr=errfile, text=True, env=env
        )
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        # a reader thread, so that a child printing nothing is killed on time too
        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + timeout
        timed_out = False
        while True:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                timed_out = True
                proc.kill()
                break
            if line is None:
                break
            if line.startswith("{"):
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                rows.append(row)
                if on_row is not None:
                    on_row(row)
        proc.wait()
        errfile.seek(0)
        return Child(rows, proc.returncode, errfile.read(), timed_out)


def call_in_child(
    target: str,
    *args: Any,
    timeout: float,
    python: str | None = None,
    src: str | None = None,
) -> dict[str, Any]:
    """``module:function(*args)`` (a module in this folder, JSON arguments, a JSON-able dict
    returned) in a fresh interpreter, ``python`` or this one. ``src``: import odtkit from this
    source folder instead of the installed one (e.g. the code before a change, with its native
    module built in place: before/after in one run). Raises :class:`ChildError` when it fails
    or runs past ``timeout`` seconds."""
    cmd = [python or sys.executable, str(Path(__file__).resolve()), target, json.dumps(args)]
    env = None if src is None else {**os.environ, _SRC_VARIABLE: str(Path(src).resolve())}
    child = run_child(cmd, timeout=timeout, env=env)
    if child.timed_out or child.returncode != 0 or not child.rows:
        raise ChildError(child)
    return child.rows[-1]


def imported_from(module: str) -> dict[str, str]:
    """Child side: the file ``module`` is imported from (which code a ``src`` child ran)."""
    return {"file": str(importlib.import_module(module).__file__)}


def emit(row: dict[str, Any]) -> None:
    """Child side: hand one row to the parent (one JSON line on stdout, flushed now)."""
    print(json.dumps(row), flush=True)


def dist_version(dist: str) -> str | None:
    """The installed version of distribution ``dist`` (a peer in its own venv), or None."""
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def peak_rss_mb() -> float:
    """Child side: this process's peak resident set so far (ru_maxrss), in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ---------------------------------------------------------------------------------- results
def machine_info(*keys: str) -> dict[str, Any]:
    """Facts about this machine for a report's header: ``python``, ``machine``,
    ``processor``, ``platform``, ``cpus``, ``load_average``; only ``keys`` (in that order)
    when given."""
    facts: dict[str, Callable[[], Any]] = {
        "python": platform.python_version,
        "machine": platform.machine,
        "processor": platform.processor,
        "platform": platform.platform,
        "cpus": os.cpu_count,
        "load_average": os.getloadavg,
    }
    return {k: facts[k]() for k in (keys or tuple(facts))}


def timestamp(utc: bool = True) -> str:
    """``YYYY-mm-dd HH:MM:SS UTC``, or local time without a zone when ``utc`` is false."""
    if utc:
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    return time.strftime("%Y-%m-%d %H:%M:%S")


def add_out_dir(parser: argparse.ArgumentParser) -> None:
    """The ``--out-dir`` flag: where ``NAME.json`` and ``NAME.md`` are read and written."""
    parser.add_argument(
        "--out-dir",
        type=Path,
        default=RESULTS,
        help="directory of the JSON and Markdown results (default benchmarks/results; a "
        "smoke run can write to /tmp instead)",
    )


def read_results(name: str, out_dir: Path = RESULTS) -> dict[str, Any] | None:
    """``out_dir/NAME.json``, or None when there is none."""
    path = Path(out_dir) / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def rewrite_report(name: str, out_dir: Path, render: Callable[[dict[str, Any]], str]) -> Path:
    """``--report-only``: ``out_dir/NAME.md`` rendered again from ``out_dir/NAME.json``
    (SystemExit naming the file when there is none)."""
    payload = read_results(name, out_dir)
    if payload is None:
        raise SystemExit(f"no {name}.json in {out_dir}")
    return write_results(name, None, render(payload), out_dir=out_dir)


def write_results(
    name: str,
    payload: dict[str, Any] | None,
    markdown: str | None = None,
    *,
    out_dir: Path = RESULTS,
    json_default: Callable[[Any], Any] | None = None,
) -> Path:
    """Write ``out_dir/NAME.json`` (``payload``, when given) and ``out_dir/NAME.md``
    (``markdown``, when given); returns ``out_dir/NAME`` without a suffix."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if payload is not None:
        text = json.dumps(payload, indent=1, default=json_default)
        (out_dir / f"{name}.json").write_text(text)
    if markdown is not None:
        (out_dir / f"{name}.md").write_text(markdown)
    return out_dir / name


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A Markdown table's lines: the header, the rule and one line per row (cells ``str``)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def fmt(v: Any, digits: int = 3, *, missing: str = "–", fixed_from: float = 1e4) -> str:
    """A table cell: None and NaN as ``missing``; a float to ``digits`` significant digits
    (no decimals from ``fixed_from`` up); anything else as ``str``."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return missing
    if isinstance(v, float):
        return f"{v:.{digits}g}" if abs(v) < fixed_from else f"{v:.0f}"
    return str(v)


#: environment variable naming the odtkit source folder a child imports (call_in_child's src)
_SRC_VARIABLE = "ODTKIT_BENCH_SRC"


def _call_main(argv: list[str]) -> None:
    """Entry point of :func:`call_in_child`: ``_harness.py MODULE:FUNCTION JSON_ARGS``."""
    src = os.environ.get(_SRC_VARIABLE)
    if src:
        # an editable install hooks the import system ahead of sys.path: drop its finder
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        sys.path.insert(0, src)
    target, args = argv
    module, function = target.split(":")
    emit(getattr(importlib.import_module(module), function)(*json.loads(args)))


if __name__ == "__main__":
    _call_main(sys.argv[1:])

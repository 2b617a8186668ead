"""Limits: time limits that start with the user's call, the default memory budget, and Ctrl-C
outside one native search or HiGHS run.

The native searches and every in-process HiGHS run already stop within milliseconds (``Budget``
polls Python's signal handlers; :mod:`odtkit.solvers._highs_driver` installs a temporary SIGINT
handler). This module is the plumbing for everything around them:

* :class:`Deadline` -- one clock per user call, started when the call starts. The build of a
  model, its translation by a modelling layer, the solve and the decode share it:
  :func:`charged` makes a deadline the active one for a ``with`` block, and long Python phases
  (each :class:`~odtkit.model.ModelBuilder` call, PuLP's row loop) call :func:`check_deadline`
  between their vectorized steps, which raises :class:`OutOfTime` once it has passed; a
  third-party translation that never returns in between runs under :func:`alarm_at`. The
  caller that opened the block turns that into status ``time_limit`` with whatever it knows.
* :func:`sigint_flag` -- a temporary SIGINT handler that only sets a flag, for code that polls
  (a solver running in a child process); :func:`sigint_watch` -- a thread that learns of a
  SIGINT at once, for a solver that does not call back into Python for seconds.
* :func:`stop_on_interrupt` -- "a Ctrl-C arrived during this loop of solves": one helper for
  ``compare``, the paths, column generation and the serial sweep. Ctrl-C lands either in Python
  code (a ``KeyboardInterrupt``) or inside a solve (which returns status ``interrupted``);
  :meth:`LoopStop.check` turns the second into the first, and the ``with`` block catches both,
  so the loop ends at once and its caller reports what finished with status ``interrupted``.
* :func:`default_memory_limit_mb` -- the memory budget of a call given none: a share of what
  the process can still get (``/proc/meminfo``, the control group's limit, ``ulimit -v``),
  read by the native searches' config, the pruning guard and the pruning cut.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from odtkit._validation import check_positive_number
from odtkit.results import Status

__all__ = [
    "ADDRESS_SPACE_SHARE",
    "DEFAULT_MEMORY_SHARE",
    "Deadline",
    "address_space_room_mb",
    "alarm_at",
    "available_memory_mb",
    "cgroup_room_mb",
    "default_memory_limit_mb",
    "proc_kb",
    "LoopStop",
    "OutOfTime",
    "active_deadline",
    "charged",
    "check_deadline",
    "sigint_flag",
    "sigint_handler",
    "sigint_watch",
    "stop_on_interrupt",
]


class OutOfTime(BaseException):  # noqa: N818 - control flow between layers, like KeyboardInterrupt
    """The active :class:`Deadline` passed during a phase that checks it (never reaches users:
    the caller that opened :func:`charged` turns it into status ``time_limit``). A
    ``BaseException``, so that a library's ``except Exception`` around user code (Pyomo's rules)
    does not swallow or log it."""


class Deadline:
    """A wall-clock deadline on :func:`time.perf_counter`, or none (``seconds=None``).

    Parameters
    ----------
    seconds : float or None
        Seconds from now; None: no limit.
    """

    __slots__ = ("at", "start")

    def __init__(self, seconds: float | None) -> None:
        self.start = time.perf_counter()
        self.at = math.inf if seconds is None else self.start + float(seconds)

    @property
    def limited(self) -> bool:
        return math.isfinite(self.at)

    def remaining(self) -> float | None:
        """Seconds left (0.0 once passed); None without a limit."""
        if not self.limited:
            return None
        return max(self.at - time.perf_counter(), 0.0)

    def limit_left(self) -> float | None:
        """The time limit for the next phase: what is left, at least 1 ms (a solver reads 0 as
        "no limit" or rejects it); None without a limit."""
        left = self.remaining()
        return None if left is None else max(left, 1e-3)

    def expired(self) -> bool:
        return time.perf_counter() >= self.at

    def elapsed(self) -> float:
        return time.perf_counter() - self.start


_active: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar(
    "odtkit_deadline", default=None
)


@contextlib.contextmanager
def charged(deadline: Deadline) -> Iterator[Deadline]:
    """Make ``deadline`` the one :func:`check_deadline` reads inside the ``with`` block.

    Nested blocks keep the earlier of the two deadlines: an inner call never gets more time
    than the outer call it is part of.
    """
    outer = _active.get()
    if outer is not None and outer.at < deadline.at:
        deadline = outer
    token = _active.set(deadline)
    try:
        yield deadline
    finally:
        _active.reset(token)


def active_deadline() -> Deadline | None:
    """The deadline :func:`charged` made active (None outside such a block): for preprocessing
    that bounds its own work by the time left (the Binarizer's threshold guessing) instead of
    being cut by :func:`check_deadline`."""
    return _active.get()


def check_deadline() -> None:
    """Raise :class:`OutOfTime` if the active deadline has passed (cheap: one clock read).

    Called between the vectorized phases of a long build, never per scalar.
    """
    deadline = _active.get()
    if deadline is not None and deadline.expired():
        raise OutOfTime


@contextlib.contextmanager
def alarm_at(deadline: Deadline | None) -> Iterator[None]:
    """Raise :class:`OutOfTime` in the ``with`` block when ``deadline`` passes, wherever it is.

    For pure-Python phases of a third-party library that never return control in between
    (Pyomo's and PuLP's translation of a big model into their own objects and into HiGHS): a
    ``SIGALRM`` timer whose handler raises. Never wrap a solver's run in it: a signal handler
    runs only between bytecodes, so it would fire after the run and throw its answer away.
    Main thread on POSIX only; elsewhere (and without a limit) the block runs unguarded and the
    periodic :func:`check_deadline` calls remain. The previous handler and timer are restored.
    """
    left = None if deadline is None else deadline.remaining()
    usable = (
        left is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0.0  # someone else's timer: leave it
    )
    if not usable or left is None:
        yield
        return
    if left <= 0.0:
        raise OutOfTime

    fired = threading.Event()

    def expire(*_: Any) -> None:
        fired.set()
        raise OutOfTime

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, left)
    try:
        yield
    except OutOfTime:
        raise
    except Exception as exc:
        # the handler's OutOfTime raised inside a native call (a binding converting its
        # arguments, say) can come out as that call's own error, e.g. PuLP's HiGHS addRow
        # reporting "incompatible function arguments" on a loaded machine: once the alarm
        # fired, whatever the block raises is the limit
        if fired.is_set():
            raise OutOfTime from exc
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def sigint_handler(handler: Callable[..., Any]) -> Iterator[None]:
    """``handler`` as the SIGINT handler for the ``with`` block, the previous one restored.

    Only the main thread can install a handler; elsewhere this does nothing (Ctrl-C then
    reaches no solver: poll ``should_stop`` there).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def sigint_flag() -> Iterator[threading.Event]:
    """A SIGINT handler that only sets the yielded flag, for code that polls (see
    :func:`sigint_handler`)."""
    flag = threading.Event()
    with sigint_handler(lambda *_: flag.set()):
        yield flag


@contextlib.contextmanager
def sigint_watch(on_sigint: Callable[[], None]) -> Iterator[None]:
    """Call ``on_sigint()`` from a helper thread as soon as a SIGINT arrives in the block.

    A Python signal handler runs only when the main thread executes bytecode; a solver that
    runs for seconds without calling back into Python (HiGHS between two log lines: its root
    cut loop, a sub-MIP) delays it that long. The C-level handler still writes the signal
    number to the wakeup fd at once: a thread blocked on that fd reacts within milliseconds
    and can tell the solver to stop (``on_sigint`` must be thread-safe). The Python handler
    the caller installed still runs later, as usual. Main thread only (elsewhere a no-op); the
    previous wakeup fd is restored.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    closing = b"\xff"  # not a signal number: tells the thread to end

    def watch() -> None:
        while True:
            got = os.read(read_end, 64)
            if not got or closing in got:
                return
            if signal.SIGINT in got:
                on_sigint()

    thread = threading.Thread(target=watch, name="odtkit-sigint-watch", daemon=True)
    thread.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        os.write(write_end, closing)
        thread.join()
        os.close(read_end)
        os.close(write_end)


class LoopStop:
    """Whether a Ctrl-C (or ``should_stop``) ended a loop of solves (see :func:`stop_on_interrupt`).

    Attributes
    ----------
    interrupted : bool
    """

    def __init__(self) -> None:
        self.interrupted = False

    def check(self, status: Any) -> None:
        """End the loop now if a solve it ran was interrupted (``status == "interrupted"``)."""
        if status == Status.INTERRUPTED:
            self.interrupted = True
            raise KeyboardInterrupt

    def check_rows(self, rows: Any) -> None:
        """:meth:`check` for table rows (dicts with a ``"status"``), e.g. one sweep task's."""
        for row in rows:
            self.check(row.get("status"))


@contextlib.contextmanager
def stop_on_interrupt() -> Iterator[LoopStop]:
    """Run a loop of solves so that Ctrl-C ends the loop, not the caller.

    Inside the block, Ctrl-C raises ``KeyboardInterrupt`` in Python code (Python's own
    handler) and makes a solve return status ``interrupted`` (the native searches and HiGHS
    catch it); call :meth:`LoopStop.check` on each solve's status. Either way the block ends
    there with ``interrupted`` set, and the code after it reports what finished.
    """
    stop = LoopStop()
    try:
        yield stop
    except KeyboardInterrupt:
        stop.interrupted = True


# ------------------------------------------------------------------------------------------
# the default memory budget
# ------------------------------------------------------------------------------------------
#: Share of the memory available when a search starts that it may use by default.
DEFAULT_MEMORY_SHARE = 0.75
#: Share of the address space left under ``ulimit -v`` that a search may use by default.
ADDRESS_SPACE_SHARE = 0.5


def proc_kb(path: str, field: str) -> float | None:
    """A ``kB`` field of a ``/proc`` file (``/proc/meminfo``'s ``MemAvailable``,
    ``/proc/self/status``'s ``VmSize``), None where there is none."""
    try:
        with open(path, encoding="ascii") as proc:
            for line in proc:
                if line.startswith(field + ":"):
                    return float(line.split()[1])
    except OSError:
        pass
    return None


def available_memory_mb() -> float | None:
    """Memory the machine can give this process now (MemAvailable), in MB; None if unknown."""
    available_kb = proc_kb("/proc/meminfo", "MemAvailable")
    if available_kb is not None:
        return available_kb / 1024.0
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2.0**20
    except (ValueError, OSError, AttributeError):
        return None


def address_space_room_mb() -> float | None:
    """What ``ulimit -v`` (``RLIMIT_AS``) still lets this process map, in MB; None: no limit."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    mapped_kb = proc_kb("/proc/self/status", "VmSize")
    return max(soft / 2.0**20 - (mapped_kb or 0.0) / 1024.0, 0.0)


def cgroup_room_mb() -> float | None:
    """What this process's control group (a container's memory limit) still allows, in MB."""
    for limit_file, usage_file in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),  # cgroup v2
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",  # cgroup v1
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ):
        try:
            with open(limit_file, encoding="ascii") as f:
                limit = f.read().strip()
            with open(usage_file, encoding="ascii") as f:
                usage = float(f.read().strip())
        except (OSError, ValueError):
            continue
        if limit == "max" or not limit.isdigit() or float(limit) >= 2.0**60:
            return None
        return max(float(limit) - usage, 0.0) / 2.0**20
    return None


def default_memory_limit_mb() -> float | None:
    """The memory budget of a search given none: ``$ODTKIT_MEMORY_LIMIT_MB`` if set, else
    :data:`DEFAULT_MEMORY_SHARE` of what the process can still get when the search starts.

    "What it can still get" is the smallest of the machine's available memory and the room left
    in a container's memory limit, and :data:`ADDRESS_SPACE_SHARE` of the room left under
    ``ulimit -v``. Searches count every
    byte of their own structures against the budget and stop with status ``memory_limit``
    (best tree and bound kept) before crossing it; without a default, a search on an
    innocent-looking table could grow until the kernel killed the process (issue 13). Should
    an allocation fail anyway (another process took the memory), the search ends the same way.
    """
    override = os.environ.get("ODTKIT_MEMORY_LIMIT_MB")
    if override:
        return check_positive_number(float(override), "ODTKIT_MEMORY_LIMIT_MB")
    address_space = address_space_room_mb()
    rooms = [
        DEFAULT_MEMORY_SHARE * room
        for room in (available_memory_mb(), cgroup_room_mb())
        if room is not None
    ]
    if address_space is not None:
        # ulimit -v counts address space, which runs ahead of the bytes in use (allocator
        # arenas, freed blocks still mapped): CORELS at a 112 MB budget mapped 180 MB
        rooms.append(ADDRESS_SPACE_SHARE * address_space)
    return max(min(rooms), 64.0) if rooms else None

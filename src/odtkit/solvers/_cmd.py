"""Command-line solver processes (CBC): they die with us and leave no files behind.

A solver run as a child process outlives a Python process that ends without unwinding (SIGTERM
with the default action, SIGKILL, the OOM killer), and so do its MPS, start, log and solution
files. Three measures, each a best effort where the platform lacks the means:

* :func:`private_dir` -- each solve's files live in one fresh directory
  ``<tmp>/odtkit_solver_<pid>_<random>``, removed when the solve ends (normally, by an
  exception, by SIGTERM through :func:`cleanup_on_sigterm`, at interpreter exit). A directory
  whose process is gone (killed by SIGKILL, say) is removed by the next solve in any process
  of the same user (:func:`sweep_stale`).
* :func:`popen` -- the child runs in its own session (a terminal's Ctrl-C reaches only us; we
  forward it) and, on Linux, with ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills it
  when the thread that started it ends, whatever ended it. Elsewhere (macOS, Windows) there is
  no such call: a SIGTERM still ends the child through :func:`cleanup_on_sigterm`, a SIGKILL
  leaves it running until its own time limit.
* :func:`cleanup_on_sigterm` -- during a solve in the main thread of a program that left
  SIGTERM at its default action, a SIGTERM handler kills the children and removes the
  directories, then restores the default action and re-sends the signal, so the process still
  ends by SIGTERM (exit status -15). A program with its own SIGTERM handler keeps it: if it
  raises (``SystemExit``), the solve's ``finally`` blocks do the same clean-up.

:class:`LiveOutput` reads the child's output as it is written (a pseudo-terminal on POSIX, so
that the solver's C stdio flushes each line instead of a 4 KB block at its exit), for a live
log and for knowing whether the solver already holds an incumbent when we stop it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["LiveOutput", "cleanup_on_sigterm", "kill", "popen", "private_dir", "sweep_stale"]

PREFIX = "odtkit_solver_"
_NAME = re.compile(rf"^{PREFIX}(\d+)_")

_lock = threading.Lock()
_dirs: set[str] = set()
# Any: popen passes its caller's keywords through, so a child may be in text or bytes mode
_children: set[subprocess.Popen[Any]] = set()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except OSError:  # pragma: no cover - e.g. a pid outside the platform's range
        return False
    return True


def sweep_stale(folder: str | None = None) -> list[str]:
    """Remove this user's solver directories in ``folder`` (default: the temp directory) whose
    process no longer runs; return their paths.

    A reused pid keeps a dead process's directory until that pid is free again: never wrong,
    only late.
    """
    folder = tempfile.gettempdir() if folder is None else folder
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    me = os.getpid()
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        m = _NAME.match(entry.name)
        if m is None or int(m.group(1)) == me:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            if uid is not None and entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue
        if not _pid_alive(int(m.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed


@contextlib.contextmanager
def private_dir() -> Iterator[str]:
    """A fresh directory for one solve's files (see the module docstring), removed on exit.

    Stale directories of dead processes are swept first.
    """
    sweep_stale()
    folder = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}_")
    with _lock:
        _dirs.add(folder)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        with _lock:
            _dirs.discard(folder)


def _pdeathsig_preexec() -> Callable[[], None] | None:
    """A ``preexec_fn`` that asks the kernel to SIGKILL the child when its parent thread ends
    (Linux), or None. Everything it calls is looked up here, before the fork."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - no libc symbol
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    pr_set_pdeathsig = 1
    sigkill = int(signal.SIGKILL)
    parent = os.getpid()
    getppid, exit_now = os.getppid, os._exit

    def preexec() -> None:
        prctl(pr_set_pdeathsig, sigkill, 0, 0, 0)
        if getppid() != parent:  # the parent died before the call above: nobody would kill us
            exit_now(1)

    return preexec


def popen(args: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """:class:`subprocess.Popen` in a new session, killed with its parent (Linux), registered
    for :func:`cleanup_on_sigterm`; unregister with :func:`kill` or :func:`forget`."""
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    if os.name == "posix":
        kwargs["start_new_session"] = True
        preexec = _pdeathsig_preexec()
        if preexec is not None:
            kwargs["preexec_fn"] = preexec
    child = subprocess.Popen(args, **kwargs)
    with _lock:
        _children.add(child)
    return child


def kill(child: subprocess.Popen[Any]) -> None:
    """Kill ``child`` (its whole session on POSIX) and reap it."""
    if child.poll() is None:
        with contextlib.suppress(OSError):
            if os.name == "posix":
                os.killpg(child.pid, signal.SIGKILL)  # its own session: pgid == pid
            else:  # pragma: no cover
                child.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=10)
    forget(child)


def forget(child: subprocess.Popen[Any]) -> None:
    """Stop tracking ``child`` (it has ended)."""
    with _lock:
        _children.discard(child)


def _cleanup_all() -> None:
    with _lock:
        children, dirs = list(_children), list(_dirs)
    for child in children:
        kill(child)
    for folder in dirs:
        shutil.rmtree(folder, ignore_errors=True)


atexit.register(_cleanup_all)


@contextlib.contextmanager
def cleanup_on_sigterm() -> Iterator[None]:
    """Kill the children and remove the directories on SIGTERM within the block, then pass the
    signal on (see the module docstring). Main thread only; elsewhere a no-op."""
    if os.name != "posix" or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous != signal.SIG_DFL:
        # ignored, handled in C, or the program's own handler: it decides; if that handler
        # raises (SystemExit, say), the solve's ``finally`` blocks kill the child and remove
        # the directory
        yield
        return

    def on_sigterm(signum: int, frame: Any) -> None:
        _cleanup_all()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)  # end as the default action would have

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGTERM) is on_sigterm:
            signal.signal(signal.SIGTERM, previous)


class LiveOutput:
    """The child's stdout and stderr, line by line as written, also kept as a log file.

    POSIX: a pseudo-terminal in raw mode (the child's C stdio is line-buffered on a terminal);
    elsewhere the file alone, read after the run (:attr:`live` False).

    Parameters
    ----------
    log_path : str
    on_line : callable
        Called with each complete line (ending in ``"\\n"``) in the reading thread.
    """

    def __init__(self, log_path: str, on_line: Callable[[str], None]) -> None:
        self._file = open(log_path, "w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        self._on_line = on_line
        self._pending = b""
        self._master: int | None = None
        self._slave: int | None = None
        if os.name == "posix":
            import pty
            import tty

            try:
                self._master, self._slave = pty.openpty()
                tty.setraw(self._slave)  # no "\r\n" translation, no echo
            except OSError:  # no pseudo-terminals here (a locked-down container): the file
                self.close()
                self._file = open(log_path, "w+", encoding="utf-8", errors="replace")  # noqa: SIM115
                self._master = self._slave = None
        self.live = self._master is not None
        #: the child side is closed (the child has ended, or closed its output)
        self.eof = not self.live

    @property
    def stdout(self) -> Any:
        """What to pass as the child's ``stdout`` (and ``stderr``)."""
        return self._slave if self._slave is not None else self._file

    def started(self) -> None:
        """Close our copy of the terminal's child side (after Popen)."""
        if self._slave is not None:
            os.close(self._slave)
            self._slave = None

    def pump(self, timeout: float) -> bool:
        """Read what the child wrote, waiting up to ``timeout`` s; whether anything came.

        Without a terminal (not POSIX) this only waits: the child writes to the file."""
        if self._master is None:
            return False
        import select

        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self._master, 65536)
        except OSError:  # EIO: every child side is closed
            data = b""
        if data:
            self._feed(data)
        else:
            self.eof = True
        return bool(data)

    def _feed(self, data: bytes) -> None:
        *lines, self._pending = (self._pending + data).split(b"\n")
        for raw in lines:
            line = raw.decode("utf-8", errors="replace").rstrip("\r") + "\n"
            self._file.write(line)
            self._on_line(line)

    def finish(self) -> str:
        """Drain what is left (the child has ended) and return the whole log."""
        if self._master is not None:
            while self.pump(0.0):  # the child has ended: what it wrote is all there
                pass
            if self._pending:
                self._feed(b"\n")
            os.close(self._master)
            self._master = None
        self.started()
        self._file.flush()
        self._file.seek(0)
        text = self._file.read()
        self._file.close()
        return text

    def close(self) -> None:
        """Release everything (idempotent)."""
        self.started()
        if self._master is not None:
            os.close(self._master)
            self._master = None
        if not self._file.closed:
            self._file.close()

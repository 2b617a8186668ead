"""Helpers shared by several test files (they import them: ``from conftest import ...``)."""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from odtkit.model import Model, ModelBuilder


def cbc_binary() -> str | None:
    """A runnable CBC: one on PATH, else the binary bundled with PuLP, else None."""
    found = shutil.which("cbc")
    if found:
        return found
    try:
        from pulp.apis.coin_api import pulp_cbc_path
    except ImportError:  # pragma: no cover - pulp is a dependency
        return None
    return pulp_cbc_path if os.access(pulp_cbc_path, os.X_OK) else None


CBC = cbc_binary()


def cbc_version(binary: str | None) -> str | None:
    """The version CBC prints on start (``Version: 2.10.3``), or None."""
    if binary is None:
        return None
    try:
        done = subprocess.run(
            [binary, "-quit"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"^Version:\s*(\S+)", done.stdout, re.MULTILINE)
    return found.group(1) if found else None


CBC_VERSION = cbc_version(CBC)
needs_cbc = pytest.mark.skipif(CBC is None, reason="no CBC binary (optional solver)")


def hard_knapsack(n: int = 60, m: int = 8, seed: int = 0) -> Model:
    """A multi-dimensional knapsack that takes HiGHS many nodes: for limits, traces, interrupts."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder("mknap")
    x = b.add_vars("x", shape=n, kind="binary")
    W = rng.integers(20, 100, size=(m, n)).astype(float)
    b.add_constraints(
        "cap", np.repeat(np.arange(m), n), np.tile(x.index, m), W.ravel(), "<=", W.sum(1) / 2
    )
    b.add_objective(x.index, -rng.integers(10, 100, size=n).astype(float))
    b.set_objective_offset(7.0)
    return b.build()


@contextlib.contextmanager
def sigint_inside(module: Any, name: str, after: float = 0.1) -> Iterator[threading.Event]:
    """Send this process one SIGINT ``after`` seconds into a call of ``module.name``.

    For interrupt tests in this process: a timer started before the solve races the solve's
    Python set-up, and on a loaded machine (issue 22: load 12-15 on 2 cores) the signal then
    lands outside the solver as a KeyboardInterrupt. Here a helper thread waits until the
    wrapped function (a native search, say) has been entered, and sends the signal only while
    it still runs. The yielded event is set once the signal went out.

    The signal can still be handled after the call returned (it went out just before a native
    search ended without polling again; Python runs handlers between bytecodes): for the block
    the SIGINT handler raises KeyboardInterrupt only while the call runs, and otherwise just
    records it, so a late signal fails the test's own assertions instead of ending the session
    (issue 28: the sanitizer build's slowdown made that window wide). The previous handler is
    restored on exit.
    """
    real = getattr(module, name)
    entered, sent = threading.Event(), threading.Event()
    finished, lock = threading.Event(), threading.Lock()
    inside = threading.Event()

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        inside.set()
        try:
            return real(*args, **kwargs)
        finally:
            inside.clear()
            with lock:
                finished.set()

    def fire() -> None:
        entered.wait()
        if finished.wait(after):
            return
        with lock:
            if not finished.is_set():
                os.kill(os.getpid(), signal.SIGINT)
                sent.set()

    def only_inside(signum: int, frame: Any) -> None:
        if inside.is_set():
            raise KeyboardInterrupt

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, only_inside) if main else None
    thread = threading.Thread(target=fire, name="sigint-inside", daemon=True)
    setattr(module, name, wrapper)
    thread.start()
    try:
        yield sent
    finally:
        setattr(module, name, real)
        entered.set()
        finished.set()
        thread.join()
        if main:
            signal.signal(signal.SIGINT, previous)


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@contextlib.contextmanager
def benchmark_module(name: str) -> Iterator[Any]:
    """The module ``benchmarks/<name>.py``, imported with benchmarks/ on sys.path meanwhile."""
    import odtkit.datasets  # noqa: F401  (imported before any output is captured)

    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCHMARKS))

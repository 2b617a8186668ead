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
from collections.abc import Callable, Iterator
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
def _sigint_while(
    module: Any,
    name: str,
    wrapper: Callable[..., Any],
    fire: Callable[[], None],
    inside: threading.Event,
    finished: threading.Event,
    also: threading.Event | None = None,
) -> Iterator[None]:
    """The scaffold the SIGINT fixtures share: ``module.name`` replaced by ``wrapper`` and a
    thread running ``fire`` for the block; a SIGINT handler (main thread only) that raises
    KeyboardInterrupt only while ``inside`` is set and otherwise just lets the signal go; on
    exit the real function and the previous handler come back, and ``finished`` (and ``also``)
    are set so that the thread ends."""
    real = getattr(module, name)

    def only_inside(signum: int, frame: Any) -> None:
        if inside.is_set():
            raise KeyboardInterrupt

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, only_inside) if main else None
    thread = threading.Thread(target=fire, name=f"sigint-{name}", daemon=True)
    setattr(module, name, wrapper)
    thread.start()
    try:
        yield
    finally:
        setattr(module, name, real)
        if also is not None:
            also.set()
        finished.set()
        thread.join()
        if main:
            signal.signal(signal.SIGINT, previous)


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

    with _sigint_while(module, name, wrapper, fire, inside, finished, also=entered):
        yield sent


class SigintOnce:
    """A callable that sends this process one SIGINT on its first call (and then does nothing).

    Given to a MIP solve as ``log_callback`` (called *while it runs*, with the solve's own Ctrl-C
    handling installed, which records the signal and stops the solver), it makes a Ctrl-C land
    inside the run, deterministically: no timer races the solve, so a fast machine cannot
    finish first (the tests that used a timer skipped then). ``sent`` is set once the signal
    went out; ``then`` (optional) is called every time with the same arguments (the callback
    this one stands in for); ``when`` (optional): send only from a call it accepts (a log line
    that shows the solver in its node loop, where CBC reads the signal). Not for a native
    search's ``progress`` (its Python frame would run the signal handler, and the search
    discards what the callback raises: see :func:`sigint_at_first_poll`).
    """

    def __init__(
        self, then: Callable[..., Any] | None = None, when: Callable[..., bool] | None = None
    ) -> None:
        self.sent = threading.Event()
        self._then = then
        self._when = when

    def __call__(self, *args: Any) -> None:
        if not self.sent.is_set() and (self._when is None or self._when(*args)):
            self.sent.set()
            os.kill(os.getpid(), signal.SIGINT)
        if self._then is not None:
            self._then(*args)


@contextlib.contextmanager
def sigint_at_first_poll(module: Any, name: str, progress_at: int) -> Iterator[threading.Event]:
    """Send one SIGINT once a call of ``module.name`` (a native search) has polled for Ctrl-C.

    The native searches call their ``progress`` callable (positional argument ``progress_at``)
    each time they poll for Ctrl-C (Budget::check_clock, about every 5 ms of search), right
    before ``PyErr_CheckSignals``. Here that callable is a builtin (``dict.__setitem__``: no
    Python frame runs, so no signal handler can run inside it and be lost there); a helper
    thread waits until it was first called -- the search is running -- and then sends the
    signal, which the next poll turns into status ``interrupted``. No timer races the search,
    so a fast machine cannot finish first (the tests that used one skipped then); a search
    that ends between two polls can (the test asserts the status). The block's SIGINT handler
    raises KeyboardInterrupt only while the search runs, and otherwise records the signal; the
    previous handler is restored on exit. The yielded event is set once the signal went out.
    """
    real = getattr(module, name)
    polled: dict[float, float] = {}
    sent, inside, finished = threading.Event(), threading.Event(), threading.Event()
    lock = threading.Lock()

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        args_list = list(args)
        kwargs.pop("progress", None)
        del args_list[progress_at:]
        inside.set()
        try:
            return real(*args_list, progress=polled.__setitem__, **kwargs)
        finally:
            inside.clear()
            with lock:
                finished.set()

    def fire() -> None:
        while not polled and not finished.wait(0.001):
            pass
        with lock:
            if not finished.is_set():
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
                sent.set()

    with _sigint_while(module, name, wrapper, fire, inside, finished):
        yield sent


@contextlib.contextmanager
def sigint_at_first_log_line(module: Any, name: str = "solve") -> Iterator[threading.Event]:
    """Send one SIGINT from the first log line of every ``module.name`` call (a MIP solve).

    ``odtkit.solvers.solve`` installs its Ctrl-C handling before the solver writes its first
    line, and HiGHS cannot finish before its first interrupt check: the signal stops the run,
    deterministically. Any ``log_callback`` of the caller still gets every line.
    """
    real = getattr(module, name)
    sent = threading.Event()

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        once = SigintOnce(kwargs.get("log_callback"))
        once.sent = sent  # one signal for the block, whichever call writes first
        kwargs["log_callback"] = once
        return real(*args, **kwargs)

    setattr(module, name, wrapper)
    try:
        yield sent
    finally:
        setattr(module, name, real)


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


#: The environment variable that caps every Hypothesis test's ``max_examples`` (unset: no cap).
#: .ci/run sets it for the oldest-dependencies phase, which is there to catch API differences in
#: old releases of numpy, scipy, pandas, scikit-learn, highspy, pyomo and pulp: every test still
#: runs and drives the same calls into them, on fewer random instances. The oracle agreement
#: itself is established at full example counts in the newest-dependencies phase.
MAX_EXAMPLES_CAP = "ODTKIT_MAX_EXAMPLES"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Cap each Hypothesis test's ``max_examples`` at ``$ODTKIT_MAX_EXAMPLES`` when it is set."""
    cap = os.environ.get(MAX_EXAMPLES_CAP)
    if not cap:
        return
    from hypothesis import settings

    limit = int(cap)
    if limit < 1:
        raise pytest.UsageError(f"{MAX_EXAMPLES_CAP}={cap}: expected a positive integer")
    for item in items:
        test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        # @given stores the test's settings on the wrapper and reads them when the test runs
        # (hypothesis 6.90 to 6.170 alike), so replacing them here is what the run uses
        current = getattr(test, "_hypothesis_internal_use_settings", None)
        if current is not None and current.max_examples > limit:
            test._hypothesis_internal_use_settings = settings(current, max_examples=limit)

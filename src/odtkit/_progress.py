"""A live progress line for long work: elapsed time, incumbent, bound and gap.

One :class:`Progress` per run. It draws nothing for the first ``delay`` seconds (most runs end
before), then redraws every ``interval`` seconds, and erases itself when closed, so a finished
run leaves only its result. It is off when ``enabled`` is False and, by default, when
stderr is not a terminal (CI logs, pipes, notebooks capturing stderr).
"""

from __future__ import annotations

import math
import shutil
import sys
import threading
import time
from typing import Any, TextIO

#: Seconds before a line appears, and between redraws.
DELAY, INTERVAL = 2.0, 0.5


def progress_enabled(enabled: bool | None, stream: TextIO | None = None) -> bool:
    """``enabled``, or (None) whether ``stream`` (stderr) is a terminal."""
    if enabled is not None:
        return bool(enabled)
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def describe(label: str, elapsed: float, incumbent: float, bound: float) -> str:
    """``label: 3.2 s, incumbent 0.2513, bound 0.0149, gap 94.1%``."""
    parts = [f"{label}: {elapsed:.1f} s"]
    parts.append(f"incumbent {incumbent:.6g}" if math.isfinite(incumbent) else "no incumbent")
    if math.isfinite(bound):
        parts.append(f"bound {bound:.6g}")
    if math.isfinite(incumbent) and math.isfinite(bound):
        gap = (incumbent - bound) / max(abs(incumbent), 1e-12)
        parts.append(f"gap {max(gap, 0.0):.1%}")
    return ", ".join(parts)


class Progress:
    """A live line on ``stream`` (stderr); see the module docstring.

    ``update`` only records the latest numbers (it is called from solver callbacks, which may
    not come for seconds while a solver is busy in one phase); a daemon thread redraws the
    line every ``interval`` seconds with the elapsed time measured here.

    Parameters
    ----------
    label : str
        What runs (e.g. the model's name).
    enabled : bool, optional
        None: on when ``stream`` is a terminal.
    """

    def __init__(
        self,
        label: str,
        enabled: bool | None = None,
        *,
        stream: TextIO | None = None,
        delay: float | None = None,
        interval: float | None = None,
    ) -> None:
        self.label = label
        self._stream = sys.stderr if stream is None else stream
        self._enabled = progress_enabled(enabled, self._stream)
        self._delay = DELAY if delay is None else delay
        self._interval = INTERVAL if interval is None else interval
        self._start = time.monotonic()
        self._numbers = (math.inf, -math.inf)
        self._text: str | None = None
        self._done = threading.Event()
        self._bar: Any = None  # created at the first redraw, after ``delay``
        self._thread: threading.Thread | None = None
        if self._enabled:
            self._thread = threading.Thread(
                target=self._redraw, name="odtkit-progress", daemon=True
            )
            self._thread.start()

    @property
    def active(self) -> bool:
        return self._enabled

    def update(self, incumbent: float, bound: float) -> None:
        """Record the run's current incumbent and bound."""
        self._numbers = (incumbent, bound)

    def show(self, text: str) -> None:
        """Report progress as ``text`` instead (work without one incumbent, e.g. a path)."""
        self._text = text

    def _redraw(self) -> None:
        if self._done.wait(self._delay):
            return
        from tqdm import tqdm

        # tqdm reads the size from the stream and hides the line when it gets none (a pty of
        # size 0, as under `script` or some container shells); shutil falls back to 80x24
        size = shutil.get_terminal_size()
        self._bar = tqdm(
            total=None,
            bar_format="{desc}",
            file=self._stream,
            leave=False,
            ncols=size.columns,
            nrows=max(size.lines, 2),
        )
        while True:
            incumbent, bound = self._numbers
            elapsed = time.monotonic() - self._start
            if self._text is not None:
                line = f"{self.label}: {elapsed:.1f} s, {self._text}"
            else:
                line = describe(self.label, elapsed, incumbent, bound)
            self._bar.set_description_str(line)
            if self._done.wait(self._interval):
                break
        self._bar.close()

    def close(self) -> None:
        """Stop redrawing and erase the line."""
        self._enabled = False
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

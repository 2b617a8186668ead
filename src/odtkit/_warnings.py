"""Every odtkit warning goes through :func:`warn`: it points at the user's line, not odtkit's.

``warnings.warn(..., stacklevel=k)`` names the file and line ``k`` frames up, and a fixed ``k``
is right for one call path only: the same search warns from ``search_tree``, from
``compare``, from an estimator's ``fit`` and from a sweep's task, each at another depth. So
:func:`warn` walks the stack to the first frame outside the odtkit package (and outside
``importlib``, for warnings raised while odtkit is imported) and warns there: the message then
reads ``script.py:12: TrivialAnswerWarning: ...`` with the user's own line.

Inside a sweep task, :func:`collecting` gathers odtkit's warnings instead of showing them (a
worker process's stderr is not the user's), so that :func:`odtkit.sweep` can report each one
once, naming the dataset, fold, depth and λ it came from. The collector is a context variable,
so concurrent tasks on the threads of one Dask worker each keep their own.

:func:`silencing` drops one category of odtkit warning in a block, collected or not: a caller
that knows a warning's reason does not hold (an estimator whose binarization was cut short)
says so in its result instead.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import warnings
from collections.abc import Iterator

__all__ = ["collecting", "silencing", "user_stacklevel", "warn"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_collector: contextvars.ContextVar[list[tuple[type[Warning], str]] | None] = contextvars.ContextVar(
    "odtkit_warning_collector", default=None
)
_silenced: contextvars.ContextVar[tuple[type[Warning], ...]] = contextvars.ContextVar(
    "odtkit_silenced_warnings", default=()
)


def _internal(filename: str) -> bool:
    return filename.startswith(_PACKAGE) or filename.startswith("<frozen importlib")


def user_stacklevel(skip: int = 1) -> int:
    """The ``stacklevel`` that makes ``warnings.warn``, called ``skip`` frames below the caller
    of this function, name the first frame outside odtkit (the outermost frame if none is)."""
    frame = sys._getframe(skip + 1)
    level = 2
    while frame.f_back is not None and _internal(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """Issue ``message`` at the user's call site (or hand it to the active collector)."""
    if issubclass(category, _silenced.get()):
        return
    collected = _collector.get()
    if collected is not None:
        collected.append((category, str(message)))
        return
    warnings.warn(message, category, stacklevel=user_stacklevel(1))


@contextlib.contextmanager
def collecting() -> Iterator[list[tuple[type[Warning], str]]]:
    """Gather the warnings :func:`warn` issues in this block (and this context) into a list."""
    collected: list[tuple[type[Warning], str]] = []
    token = _collector.set(collected)
    try:
        yield collected
    finally:
        _collector.reset(token)


@contextlib.contextmanager
def silencing(category: type[Warning]) -> Iterator[None]:
    """Drop the odtkit warnings of ``category`` that :func:`warn` issues in this block."""
    token = _silenced.set((*_silenced.get(), category))
    try:
        yield
    finally:
        _silenced.reset(token)

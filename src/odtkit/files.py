"""The command line's files: safe output paths, atomic writes, headers made of numbers and forests
loaded without running code.

Every function raises :class:`ValueError` with a one-line message naming the argument as the
usage spells it (``--out``, ``FOREST``, ``DATA``); the CLI turns it into ``odtkit: error: ...``
and exit code 2.

* :func:`check_out` refuses, before any work, an output path that would lose data: an existing
  file (unless ``force``), one of the command's input files (also through a link), a directory,
  a missing or unwritable directory, a device.
* :func:`write_atomic` writes a temporary file next to the target and renames it over the
  target (``os.replace``): a reader never sees half a file, a symbolic link at the target is
  replaced rather than followed, and an interrupted write (Ctrl-C, a full disk) leaves the older
  file as it was and no temporary file behind.
* :func:`load_forest` reads a skops file (``skops.io``), accepting only the types a fitted tree
  ensemble is made of, and a pickle only when the caller trusts it: unpickling runs whatever
  code the file names.
"""

from __future__ import annotations

import math
import os
import pickle
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "FOREST_TYPES",
    "SKOPS_INSTALL",
    "check_out",
    "dump_forest",
    "load_forest",
    "numeric_header",
    "write_atomic",
]

#: the types of a fitted scikit-learn forest that skops does not trust by default (estimators,
#: numpy arrays and dtypes it trusts already); anything else in a FOREST file is refused
FOREST_TYPES = frozenset({"sklearn.tree._tree.Tree"})

SKOPS_INSTALL = "pip install 'odtkit[skops]'"
_CHUNK = 1 << 20


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_out(
    text: str,
    *,
    inputs: Mapping[str, str | None],
    force: bool,
    option: str = "--out",
) -> Path:
    """The output path ``text`` once it is safe to write there; ValueError naming ``option``.

    ``inputs`` maps the usage names of the command's input files (``DATA``, ``MODEL``) to their
    paths (None: not a file); the output may be none of them, whatever ``force`` says.
    Writability is probed by creating (and removing) a temporary file in the directory, so a
    read-only mount, an ACL or a full quota is caught here and not after the solve.
    """
    path = Path(text)
    if text.strip() == "" or path.name in ("", ".", ".."):
        raise ValueError(f"{option} {text!r}: give a file name")
    for what, source in inputs.items():
        if source is not None and _same_file(path, Path(source)):
            raise ValueError(
                f"{option} {text!r} is the input file {what}; write the result to another file"
            )
    exists = os.path.lexists(path)
    if path.is_dir():
        raise ValueError(f"{option} {text!r} is a directory; give a file name")
    folder = path.parent
    if not folder.is_dir():
        reason = "is not a directory" if folder.exists() else "does not exist"
        raise ValueError(f"{option} {text!r}: directory {str(folder)!r} {reason}")
    if exists:
        # a link is replaced, never followed; but not a link to a device or a pipe
        mode = os.stat(path).st_mode if path.exists() else stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise ValueError(f"{option} {text!r} exists and is not a regular file; not replaced")
        if not force:
            kind = "a link" if path.is_symlink() else "a file"
            raise ValueError(
                f"{option} {text!r}: {kind} of that name exists; pass --force to replace it "
                "(a link is replaced, not the file it points to)"
            )
        if not path.is_symlink() and not os.access(path, os.W_OK):
            raise ValueError(f"{option} {text!r} is read-only; not replaced")
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".odtkit-probe-")
    except OSError as exc:
        raise ValueError(
            f"{option} {text!r}: cannot create a file in directory {str(folder)!r} "
            f"({exc.strerror or exc})"
        ) from None
    os.close(handle)
    os.unlink(probe)
    return path


def _write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to the open descriptor ``fd`` (in chunks: a Ctrl-C lands between them)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view[:_CHUNK])
        view = view[written:]


def _new_file_mode(path: Path) -> int:
    if path.exists() and not path.is_symlink():
        return stat.S_IMODE(os.stat(path).st_mode)  # a replaced file keeps its permissions
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path, content: str | bytes, *, replace: bool = True) -> None:
    """Write ``content`` to ``path`` in one step (a temporary file beside it, renamed).

    ``replace=False`` never replaces a file: the temporary file is hard-linked to ``path``,
    which fails if a file of that name appeared since :func:`check_out` (a file system
    without hard links falls back to a check and ``os.replace``). On any exception, Ctrl-C
    included, the temporary file is removed, ``path`` is as it was and the exception
    propagates (an OSError as ValueError naming ``--out``).
    """
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    folder = path.parent
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:
            _write_all(fd, data)
            os.fchmod(fd, _new_file_mode(path))
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(temporary, path)
        else:
            _link(temporary, path)
    except BaseException as exc:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        if isinstance(exc, FileExistsError):
            raise ValueError(
                f"--out {str(path)!r}: a file of that name appeared during the run; not "
                "replaced (pass --force to replace it)"
            ) from None
        if isinstance(exc, OSError):
            raise ValueError(
                f"--out {str(path)!r}: {exc.strerror or exc}; not written (an older file there "
                "is unchanged)"
            ) from None
        raise


def _link(temporary: str, path: Path) -> None:
    try:
        os.link(temporary, path)  # atomic, and never over an existing name
    except FileExistsError:
        raise
    except OSError:
        if os.path.lexists(path):
            raise FileExistsError(path) from None
        os.replace(temporary, path)
    else:
        os.unlink(temporary)


# -- tables ----------------------------------------------------------------------------------


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def numeric_header(columns: Any) -> bool:
    """Whether a header row is made only of numbers (and blanks): a data row, most likely.

    The column names 0, 1, ..., n-1 are a header (what ``pandas.DataFrame.to_csv`` writes for
    an unnamed array, and what ``--no-header`` names the columns).
    """
    names = [str(c) for c in columns]
    if names == [str(i) for i in range(len(names))]:
        return False
    blank = [n.startswith("Unnamed: ") for n in names]
    numbers = [_is_number(n) for n in names]
    return any(numbers) and all(a or b for a, b in zip(numbers, blank, strict=True))


# -- forests ---------------------------------------------------------------------------------


def _skops() -> Any:
    try:
        import skops.io
    except ImportError:
        return None
    return skops.io


def load_forest(path: Path, *, trust_pickle: bool, data: Path | None = None) -> tuple[Any, str]:
    """The fitted ensemble in the file ``path`` and its format (``"skops"`` or ``"pickle"``).

    A skops file is loaded with only the types of :data:`FOREST_TYPES` trusted beyond skops'
    own defaults (scikit-learn estimators, numpy); any other type is refused before anything
    is built. A pickle is loaded only with ``trust_pickle=True``: unpickling runs whatever code
    the file names. ``data`` (the DATA argument) lets the message say when two arguments look
    swapped.
    """
    from odtkit.datasets._tables import binary_kind

    name = path.name
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"FOREST {str(path)!r}: {exc.strerror or exc}") from None
    usage = "usage: odtkit prune FOREST DATA, the forest first"
    if not raw:
        raise ValueError(f"FOREST: {name} is empty; expected a forest saved by skops.io.dump")
    if raw.startswith(b"PK\x03\x04"):  # a zip archive: skops' format
        return _load_skops(raw, name), "skops"
    if not trust_pickle:
        if binary_kind(raw[:4096]) is None:  # text
            swapped = False
            if data is not None and data.is_file():
                with data.open("rb") as handle:
                    swapped = binary_kind(handle.read(4096)) is not None
            hint = "FOREST and DATA look swapped" if swapped else "expected a skops file"
            raise ValueError(f"FOREST: {name} is a text file, not a forest ({hint}; {usage})")
        what = "a pickle" if raw.startswith(b"\x80") else "not a skops file (a pickle?)"
        raise ValueError(
            f"FOREST: {name} is {what}, and loading a pickle runs any code it names: not loaded. "
            "Save the forest with skops.io.dump(forest, 'forest.skops') "
            f"({SKOPS_INSTALL}), or pass --trust-pickle if you made this file yourself"
        )
    try:
        # the caller passed --trust-pickle: this runs whatever code the file names
        return pickle.loads(raw), "pickle"
    except Exception as exc:  # any unpickling failure is a bad file, never our bug
        raise ValueError(
            f"FOREST: {name} cannot be unpickled ({type(exc).__name__}: {exc})"
        ) from None


def _load_skops(raw: bytes, name: str) -> Any:
    sio = _skops()
    if sio is None:
        raise ValueError(f"FOREST: {name} is a skops file; reading it needs skops: {SKOPS_INSTALL}")
    try:
        untrusted = sio.get_untrusted_types(data=raw)
    except Exception as exc:  # a truncated or foreign zip: a bad file
        raise ValueError(
            f"FOREST: {name} is not a readable skops file ({type(exc).__name__}: {exc})"
        ) from None
    refused = sorted(set(untrusted) - FOREST_TYPES)
    if refused:
        shown = ", ".join(refused[:5]) + (", ..." if len(refused) > 5 else "")
        raise ValueError(
            f"FOREST: {name} holds types a tree ensemble is not made of ({shown}); not loaded"
        )
    try:
        return sio.loads(raw, trusted=sorted(untrusted))
    except Exception as exc:
        raise ValueError(
            f"FOREST: {name} is not a readable skops file ({type(exc).__name__}: {exc})"
        ) from None


def dump_forest(ensemble: Any, fmt: str) -> bytes:
    """``ensemble`` as the bytes of a skops file (``fmt="skops"``) or a pickle."""
    if fmt == "pickle":
        return pickle.dumps(ensemble)
    sio = _skops()
    if sio is None:
        raise ValueError(f"--out: writing a skops file needs skops: {SKOPS_INSTALL}")
    written: bytes = sio.dumps(ensemble)  # skops is untyped
    return written

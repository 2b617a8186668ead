"""Checks that keep the code's shape (issue 26, point 6).

* docs/ARCHITECTURE.md names only files that exist (it once cited a ``search_py.hpp`` that never
  did);
* ``src/`` holds at most :data:`MAX_DUPLICATE_PAIRS` pairs of places sharing a run of
  :data:`MIN_RUN` or more identical lines that are not boilerplate: the same logic is written
  once (a small self-contained detector; CI has no external tool for it);
* mypy checks every odtkit module: ``[tool.mypy]`` in pyproject.toml exempts third-party
  packages only (``.ci/run`` runs mypy itself and fails on any error), under ``strict = true``;
  an override on odtkit modules relaxes nothing but what :data:`RELAXED` names (issue 38
  item 5).
"""

from __future__ import annotations

import ast
import os
import re
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "odtkit"

# --------------------------------------------------------------------------------------------
# docs/ARCHITECTURE.md cites only files that exist
# --------------------------------------------------------------------------------------------

#: A path-like token: a name ending in .py/.hpp/.cpp (with any directories before it), or a
#: path under src/, odtkit/, tests/ or benchmarks/.
_PATH_TOKEN = re.compile(
    r"(?<![\w./-])("
    r"(?:src|odtkit|tests|benchmarks)/[\w./-]*"
    r"|[\w./-]*\w\.(?:py|hpp|cpp)"
    r")(?![\w/-]|\.\w)"
)


def _repository_files() -> list[str]:
    skip = {".git", ".ci-venv", ".ci-venv-oldest", "build", "__pycache__", ".hypothesis"}
    out = []
    # pruned walk, never entering a skipped directory: .ci/run builds and installs the
    # oldest-dependencies phase (build/, .ci-venv-oldest/) while this suite runs, and a
    # directory a build deletes mid-walk would end an rglob with FileNotFoundError
    for here, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in skip and not d.endswith(".egg-info"))
        rel = Path(here).relative_to(ROOT)
        out.extend((rel / d).as_posix() + "/" for d in dirs)
        out.extend((rel / f).as_posix() for f in files if f not in skip)
    return out


def _resolves(token: str, files: list[str]) -> bool:
    """``token`` is a repository path, or the tail of one (the layout names files relative to
    the directory it lists them under: ``core/native/paged.hpp``, ``_highs_driver.py``)."""
    token = token.rstrip(".")  # a path ending a sentence
    if token.startswith("odtkit/"):
        token = "src/" + token
    return any(f == token or f.endswith("/" + token) for f in files)


def path_tokens(text: str) -> list[str]:
    return sorted({match.group(1).rstrip(".") for match in _PATH_TOKEN.finditer(text)})


def test_path_tokens_are_found() -> None:
    text = (
        "see `core/native/search_types.hpp`, search.py, rules.py and src/odtkit/cli.py; "
        "tests/ and benchmarks/limits.py. Not here: x.pyc, numpy.linalg, a.py.txt"
    )
    assert path_tokens(text) == [
        "benchmarks/limits.py",
        "core/native/search_types.hpp",
        "rules.py",
        "search.py",
        "src/odtkit/cli.py",
        "tests/",
    ]


def test_architecture_names_only_existing_files() -> None:
    files = _repository_files()
    tokens = path_tokens((ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    assert len(tokens) > 20, f"the path pattern found too little: {tokens}"
    missing = [t for t in tokens if not _resolves(t, files)]
    assert not missing, f"docs/ARCHITECTURE.md names files that do not exist: {missing}"


# --------------------------------------------------------------------------------------------
# duplicated blocks in src/
# --------------------------------------------------------------------------------------------

#: A run this many identical significant lines long is a duplicated block.
MIN_RUN = 6
#: At most this many pairs of places may share one (issue 26: 21 pairs when it was written).
MAX_DUPLICATE_PAIRS = 10
#: A run of lines standing in more places than this is a pattern, not a copy (as `duplicates`).
_MAX_PLACES = 8
#: A line of brackets and separators only (``)``, ``],``, ``});``).
_LONE_BRACKETS = re.compile(r"^[()\[\]{},;:]*$")


def _python_skipped_lines(source: str) -> set[int]:
    """Line numbers of import statements and of string-only statements (docstrings)."""
    skipped: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        boilerplate = isinstance(node, ast.Import | ast.ImportFrom) or (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        if boilerplate:
            end = node.end_lineno or node.lineno
            skipped.update(range(node.lineno, end + 1))
    return skipped


def significant_lines(path: Path) -> list[tuple[int, str]]:
    """``(line number, line with white space folded)`` of the lines that count: no blank,
    comment-only, import, docstring or lone-bracket line."""
    source = path.read_text(encoding="utf-8")
    python = path.suffix == ".py"
    skipped = _python_skipped_lines(source) if python else set()
    comment = ("#",) if python else ("//", "/*", "*", "#include", "#pragma")
    out = []
    for number, line in enumerate(source.splitlines(), start=1):
        folded = " ".join(line.split())
        if (
            not folded
            or number in skipped
            or folded.startswith(comment)
            or _LONE_BRACKETS.match(folded)
        ):
            continue
        out.append((number, folded))
    return out


def duplicate_pairs(
    files: list[Path], root: Path, min_run: int = MIN_RUN
) -> dict[tuple[str, str], list[tuple[int, int, int, int]]]:
    """Pairs of files sharing runs of ``min_run`` or more identical significant lines.

    Returns ``{(file a, file b): [(a first line, a last line, b first line, b last line)]}``
    (files named relative to ``root``), each run maximal; two overlapping places in one file
    are not a pair.
    """
    names = [path.relative_to(root).as_posix() for path in files]
    lines = [significant_lines(path) for path in files]
    windows: dict[tuple[str, ...], list[tuple[int, int]]] = defaultdict(list)
    for f, numbered in enumerate(lines):
        text = [t for _, t in numbered]
        for i in range(len(text) - min_run + 1):
            windows[tuple(text[i : i + min_run])].append((f, i))
    runs: dict[tuple[str, str], list[tuple[int, int, int, int]]] = defaultdict(list)
    for places in windows.values():
        if len(places) < 2 or len(places) > _MAX_PLACES:
            continue
        for a in range(len(places)):
            for b in range(a + 1, len(places)):
                (fa, ia), (fb, ib) = places[a], places[b]
                ta, tb = lines[fa], lines[fb]
                if ia > 0 and ib > 0 and ta[ia - 1][1] == tb[ib - 1][1]:
                    continue  # not where the run starts: counted from its start
                length = min_run
                while (
                    ia + length < len(ta)
                    and ib + length < len(tb)
                    and ta[ia + length][1] == tb[ib + length][1]
                ):
                    length += 1
                if fa == fb and abs(ia - ib) < length:
                    continue  # a repeated line run against itself
                runs[(names[fa], names[fb])].append(
                    (
                        ta[ia][0],
                        ta[ia + length - 1][0],
                        tb[ib][0],
                        tb[ib + length - 1][0],
                    )
                )
    return dict(runs)


def _source_files() -> list[Path]:
    native = PACKAGE / "core" / "native"
    return sorted(
        [*PACKAGE.rglob("*.py"), *native.glob("*.cpp"), *native.glob("*.hpp")],
        key=lambda p: p.as_posix(),
    )


def _report(pairs: dict[tuple[str, str], list[tuple[int, int, int, int]]]) -> str:
    rows = []
    for (a, b), found in sorted(pairs.items(), key=lambda kv: -max(r[1] - r[0] for r in kv[1])):
        a0, a1, b0, b1 = max(found, key=lambda r: r[1] - r[0])
        more = f" (+{len(found) - 1} more runs)" if len(found) > 1 else ""
        rows.append(f"{a}:{a0}-{a1} ~ {b}:{b0}-{b1}{more}")
    return "\n".join(rows)


def test_the_detector_finds_a_copied_block(tmp_path: Path) -> None:
    body = "\n".join(f"    total += weights[{k}] * values[{k}]" for k in range(7))
    block = f'def f(weights, values):\n    """Doc."""\n    total = 0\n{body}\n    return total\n'
    other = "import os\n\n\ndef g(x):\n    # the same block, indented otherwise\n" + "\n".join(
        f"  total += weights[{k}]  *  values[{k}]" for k in range(7)
    )
    (tmp_path / "a.py").write_text(block)
    (tmp_path / "b.py").write_text(other + "\n")
    boiler = "from x import (\n" + "".join(f"    name{k},\n" for k in range(8)) + ")\n"
    (tmp_path / "c.py").write_text(boiler)
    (tmp_path / "d.py").write_text(boiler)
    pairs = duplicate_pairs(sorted(tmp_path.glob("*.py")), tmp_path)
    assert pairs == {("a.py", "b.py"): [(4, 10, 6, 12)]}


def test_at_most_ten_duplicated_blocks_in_src() -> None:
    pairs = duplicate_pairs(_source_files(), PACKAGE.parent)
    assert len(pairs) <= MAX_DUPLICATE_PAIRS, (
        f"{len(pairs)} pairs of places in src/odtkit share {MIN_RUN}+ identical lines "
        f"(at most {MAX_DUPLICATE_PAIRS}): make one piece of code serve\n{_report(pairs)}"
    )


# --------------------------------------------------------------------------------------------
# mypy covers every odtkit module
# --------------------------------------------------------------------------------------------


#: The per-module flags ``mypy --strict`` implies (``mypy --help``; its other two,
#: warn_unused_ignores and warn_redundant_casts, are global options) and their strict values.
STRICT_FLAGS = {
    "disallow_any_generics": True,
    "disallow_subclassing_any": True,
    "disallow_untyped_calls": True,
    "disallow_untyped_defs": True,
    "disallow_incomplete_defs": True,
    "check_untyped_defs": True,
    "disallow_untyped_decorators": True,
    "warn_return_any": True,
    "implicit_reexport": False,
    "strict_equality": True,
    "extra_checks": True,
}

#: The only odtkit modules held to less than ``mypy --strict``, and the strict flags each is
#: excused from: none since estimators.py was made strict (its scikit-learn base classes are
#: untyped, so each class line carries a named ``type: ignore[misc]`` instead). A module may
#: leave this table, and a flag may leave an entry, but nothing joins them.
RELAXED: dict[str, dict[str, object]] = {}


def _mypy_overrides() -> list[tuple[list[str], dict[str, object]]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    out = []
    for override in config["tool"]["mypy"].get("overrides", []):
        modules = override["module"]
        out.append(([modules] if isinstance(modules, str) else modules, override))
    return out


def test_mypy_exempts_only_third_party_modules() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mypy = config["tool"]["mypy"]
    assert "src/odtkit" in mypy.get("files", []), "mypy must check src/odtkit"
    assert not mypy.get("ignore_errors"), "[tool.mypy] must not ignore errors"
    assert not mypy.get("ignore_missing_imports"), "ignore_missing_imports only per package"
    for modules, override in _mypy_overrides():
        assert not override.get("ignore_errors"), f"an override ignores errors in {modules}"
        ours = [m for m in modules if m == "odtkit" or m.startswith("odtkit.")]
        if not ours:
            assert set(override) <= {"module", "ignore_missing_imports"}, (
                f"an override of {modules} relaxes more than missing imports: {override}"
            )
            continue
        # an override of odtkit modules only tightens: strict flags at their strict values
        assert ours == modules, f"one override mixes odtkit and third-party modules: {modules}"
        settings = {k: v for k, v in override.items() if k != "module"}
        relaxing = {k: v for k, v in settings.items() if STRICT_FLAGS.get(k, not v) != v}
        if relaxing:
            # a relaxation names its module alone, so that RELAXED can be checked against it
            assert len(ours) == 1, f"a mypy override relaxes several odtkit modules: {ours}"
            allowed = RELAXED.get(ours[0], {})
            beyond = {k: v for k, v in relaxing.items() if allowed.get(k) != v}
            assert not beyond, f"a mypy override relaxes odtkit module {ours[0]}: {beyond}"


def test_mypy_strict_on_every_module_but_those_relaxed() -> None:
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy.get("strict") is True, "[tool.mypy] must set strict = true"
    # no global flag undoes part of strict (an odtkit module is relaxed by an override only)
    undone = {k: v for k, v in mypy.items() if k in STRICT_FLAGS and v != STRICT_FLAGS[k]}
    assert not undone, f"[tool.mypy] relaxes strict for every module: {undone}"
    for flag in ("warn_unused_ignores", "warn_redundant_casts", "warn_unused_configs"):
        assert mypy.get(flag, True), f"[tool.mypy] turns off {flag}, which strict implies"
    relaxed = {}
    for modules, override in _mypy_overrides():
        for module in modules:
            if module in RELAXED:
                relaxed[module] = {k: v for k, v in override.items() if k != "module"}
    # an entry of RELAXED that pyproject no longer relaxes is stale: remove it from the table
    assert relaxed == RELAXED, f"pyproject's relaxations {relaxed} are not RELAXED {RELAXED}"
    for module in RELAXED:
        path = PACKAGE.parent / (module.replace(".", "/") + ".py")
        assert path.is_file(), f"RELAXED names {module}, which is not a module of src/odtkit"

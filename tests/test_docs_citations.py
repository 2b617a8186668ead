"""Citations resolve inside the repository.

Docstrings and comments cite the mathematics as ``docs/<file>.md §N``; these tests check that no
shipped file points at a document a user of the package does not have (the team's working
copies outside the repository), and that every ``docs/<file>.md §N`` citation names a file in
``docs/`` and a section that file really has.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: Text that only makes sense next to files outside the repository.
OUTSIDE = ("FORMULATIONS-", "spec §", "../shared")

#: Suffixes of the text files that carry docstrings, comments or prose.
TEXT_SUFFIXES = {".py", ".pyi", ".cpp", ".hpp", ".h", ".md", ".rst", ".txt", ".toml", ".cfg"}

#: ``docs/<file>.md`` then (possibly across a line break and a comment marker) ``§N`` or a
#: range ``§N-M`` / ``§N–M``.
CITATION = re.compile(
    r"docs/(?P<file>[\w.-]+\.md)"
    r"(?:\s*(?://|#:?|\*)?\s*§(?P<first>\d+(?:\.\d+)*)(?:\s*[-–]\s*(?P<last>\d+(?:\.\d+)*))?)?"
)
HEADING = re.compile(r"^#{2,6}\s+(\d+(?:\.\d+)*)\.?\s")
LIST_ITEM = re.compile(r"^\s{0,3}(\d+)\.\s")


def _text_files(*roots: Path) -> list[Path]:
    files = []
    for root in roots:
        if root.is_file():
            files.append(root)
            continue
        files.extend(
            p for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in TEXT_SUFFIXES
        )
    return files


def _sections(document: Path) -> set[str]:
    """Numbers of the headings of ``document``, plus ``N.k`` for item k of a numbered list that
    sits directly in section ``N`` (e.g. the global conventions 0.1-0.6)."""
    found: set[str] = set()
    current = None
    for line in document.read_text(encoding="utf-8").splitlines():
        heading = HEADING.match(line)
        if heading:
            current = heading.group(1)
            found.add(current)
            continue
        item = LIST_ITEM.match(line)
        if item and current is not None and "." not in current:
            found.add(f"{current}.{item.group(1)}")
    return found


SHIPPED = _text_files(ROOT / "src", ROOT / "README.md", DOCS)
CITING = _text_files(ROOT / "src", ROOT / "tests", ROOT / "benchmarks", ROOT / "README.md", DOCS)


def test_the_scan_covers_the_code_and_the_docs():
    names = {p.name for p in SHIPPED}
    assert {"search.py", "bnb.cpp", "README.md", "formulations-trees.md"} <= names


@pytest.mark.parametrize("needle", OUTSIDE)
def test_no_shipped_file_points_outside_the_repository(needle):
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in SHIPPED
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if needle in line
    ]
    assert not offenders, f"{needle!r} in {offenders}"


def test_every_docs_citation_names_an_existing_file_and_section():
    sections = {p.name: _sections(p) for p in DOCS.glob("*.md")}
    cited = 0
    broken = []
    for path in CITING:
        text = path.read_text(encoding="utf-8")
        for match in CITATION.finditer(text):
            where = f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}"
            name = match.group("file")
            if name not in sections:
                broken.append(f"{where}: no docs/{name}")
                continue
            for number in (match.group("first"), match.group("last")):
                if number is None:
                    continue
                cited += 1
                if number not in sections[name]:
                    broken.append(f"{where}: docs/{name} has no §{number}")
    assert not broken, "\n".join(broken)
    assert cited > 50  # the docstrings do cite by section; a regex that matches nothing fails


def test_the_section_parser_reads_headings_and_numbered_conventions():
    search = _sections(DOCS / "formulations-search-and-pruning.md")
    trees = _sections(DOCS / "formulations-trees.md")
    assert {"0", "0.4", "2.5", "3.8", "7.6", "9"} <= search
    assert {"1.4", "4.5", "5.4", "7.5"} <= trees
    assert "3.9" not in trees  # §3.9 exists only in the search document

"""The README is true: its Python examples run, its commands parse, it points nowhere outside."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from odtkit.cli import build_parser

README = Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text(encoding="utf-8")
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
BASH_BLOCKS = re.findall(r"```bash\n(.*?)```", TEXT, flags=re.S)


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_examples_run(index, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example may write a file (io.save)
    exec(compile(PYTHON_BLOCKS[index], f"README.md python block {index}", "exec"), {})
    assert capsys.readouterr().out  # every example prints what it shows


def test_every_odtkit_command_in_the_readme_parses():
    parser, _ = build_parser()
    commands = [
        part.strip()
        for block in BASH_BLOCKS
        for line in block.splitlines()
        for part in line.split("#")[0].split("&&")
        if part.strip().startswith("odtkit ")
    ]
    assert any(c.startswith("odtkit compare") for c in commands)
    for command in commands:
        parser.parse_args(shlex.split(command)[1:])  # SystemExit(2) on a wrong flag


def test_the_readme_points_nowhere_outside_the_repository():
    assert "../shared" not in TEXT and "shared/" not in TEXT.replace("2 shared cores", "")

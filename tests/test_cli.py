"""The console script: ``odtkit datasets`` lists the bundled sets."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from odtkit.cli import main


def test_datasets_command_lists_every_bundled_set(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for name in ("monk1", "monk2", "monk3", "tic-tac-toe", "car-evaluation", "balance-scale"):
        assert name in out
    assert "0:62 / 1:62" in out  # monk1 class balance


def test_unknown_command_exits_with_usage(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2


def test_console_script_is_installed():
    exe = shutil.which("odtkit")
    cmd = [exe, "datasets"] if exe else [sys.executable, "-m", "odtkit.cli", "datasets"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert "tic-tac-toe" in out

"""The notebooks in notebooks/ run top to bottom on small data (their cells assert results)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    cells = json.loads(path.read_text())["cells"]
    namespace: dict[str, object] = {"__name__": "__notebook__"}
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        exec(compile(source, f"{path.name}[cell {i}]", "exec"), namespace)  # noqa: S102


def test_there_is_a_notebook():
    assert NOTEBOOKS, "notebooks/ should hold at least the quickstart"

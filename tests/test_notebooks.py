"""The notebooks in notebooks/ run top to bottom on small data (their cells assert results).

Each notebook runs in a fresh Python process, its code cells in order (matplotlib's Agg
backend), as a kernel would run them: what the process prints at the C level reaches a cell's
output in Jupyter too, and HiGHS prints its copyright banner only for a process's first
``Highs`` object, so only a fresh process shows whether a notebook lets it through. Beyond the
cells' own asserts, issue 22 asks of every notebook:

* every cell has an id (nbformat 4.5; without one nbformat warns ``MissingIDFieldWarning``);
* no output, stored in the file or printed when run, carries HiGHS's banner;
* no stored output is an error, and every legend entry names something drawn.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
IDS = [p.stem for p in NOTEBOOKS]

#: What HiGHS prints when a process creates its first ``Highs`` object.
BANNER = "Running HiGHS"

#: Runs the code cells of the notebook ``sys.argv[1]``, then names every legend entry whose
#: artist draws nothing (a line of fewer than two finite points and no marker, empty bars).
RUNNER = r"""
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

path = sys.argv[1]
namespace = {"__name__": "__notebook__"}
for i, cell in enumerate(json.load(open(path, encoding="utf-8"))["cells"]):
    if cell["cell_type"] == "code":
        exec(compile("".join(cell["source"]), f"{path}[cell {i}]", "exec"), namespace)

def drawn(artist):
    if isinstance(artist, matplotlib.lines.Line2D):
        xy = np.asarray(artist.get_xydata(), dtype=float).reshape(-1, 2)
        points = int(np.isfinite(xy).all(axis=1).sum())
        line = artist.get_linestyle() not in ("None", "none", "", " ")
        marker = artist.get_marker() not in (None, "None", "none", "", " ")
        return (line and points >= 2) or (marker and points >= 1)
    if isinstance(artist, matplotlib.container.Container):
        return any(drawn(child) for child in artist)
    if isinstance(artist, matplotlib.patches.Rectangle):
        return artist.get_width() != 0 and artist.get_height() != 0
    return True

for number in plt.get_fignums():
    for ax in plt.figure(number).axes:
        if ax.get_legend() is None:
            continue
        for artist, label in zip(*ax.get_legend_handles_labels()):
            if not drawn(artist):
                print(f"LEGEND-NOT-DRAWN figure {number}: {label!r}", flush=True)
"""


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _stored_text(output: dict) -> str:
    if output.get("output_type") == "stream":
        text = output.get("text", "")
    elif output.get("output_type") == "error":
        text = "\n".join(output.get("traceback", []))
    else:
        text = output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_runs(path):
    pytest.importorskip("matplotlib", reason="matplotlib: the optional extra odtkit[plot] (in dev)")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    if env.get("PYTHONPATH"):  # the child runs in notebooks/, as Jupyter would: no relative paths
        parts = env["PYTHONPATH"].split(os.pathsep)
        env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in parts if p)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(path)],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=path.parent,
        env=env,
    )
    printed = done.stdout + done.stderr
    assert done.returncode == 0, printed[-4000:]
    assert BANNER not in printed, f"HiGHS's banner reached a cell's output:\n{printed[-2000:]}"
    empty = [line for line in done.stdout.splitlines() if line.startswith("LEGEND-NOT-DRAWN")]
    assert not empty, empty


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_file_is_clean(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert (notebook["nbformat"], notebook["nbformat_minor"]) >= (4, 5)
    ids = [cell.get("id") for cell in notebook["cells"]]
    assert all(ids), f"cells without an id: {[i for i, x in enumerate(ids) if not x]}"
    assert len(set(ids)) == len(ids), "cell ids repeat"
    for i, cell in enumerate(notebook["cells"]):
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", (i, _stored_text(output)[-1000:])
            assert BANNER not in _stored_text(output), f"cell {i} stores HiGHS's banner"


def test_there_is_a_notebook():
    assert NOTEBOOKS, "notebooks/ should hold at least the quickstart"

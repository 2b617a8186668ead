"""benchmarks/_harness.py, and the committed reports re-rendered from their JSON through it."""

from __future__ import annotations

import json
import math
import sys

import pytest
from conftest import BENCHMARKS, benchmark_module

RESULTS = BENCHMARKS / "results"


@pytest.fixture(scope="module")
def harness():
    with benchmark_module("_harness") as module:
        yield module


def test_geomean_leaves_out_what_has_no_logarithm(harness):
    assert harness.geomean([1.0, 4.0, None, 0.0, math.nan, math.inf]) == pytest.approx(2.0)
    assert math.isnan(harness.geomean([]))


def test_ratio_summary_overall_floor_and_hard(harness):
    s = harness.ratio_summary(
        [0.5, 2.0, 8.0, math.nan], peer_times=[0.01, 1.0, 1.0, 1.0], hard=[True, False, False, True]
    )
    assert (s.n, s.n_floor, s.n_hard, s.n_rest) == (4, 3, 2, 2)
    assert s.geomean == pytest.approx(2.0)
    assert s.geomean_floor == pytest.approx(4.0)
    assert s.geomean_hard == pytest.approx(0.5)
    assert s.geomean_rest == pytest.approx(4.0)
    assert s.worst == 8.0


def test_repeat_stops_after_the_first_run_not_to_repeat(harness):
    results = iter([1, 2, 30, 4])
    assert harness.repeat(lambda: next(results), 4, again=lambda r: r < 20) == [1, 2, 30]
    assert harness.repeat(lambda: 1, 2, again=lambda r: True) == [1, 1]


def test_table_and_cells(harness):
    assert harness.md_table(["a", "b"], [[1, "x"]]) == ["| a | b |", "|---|---|", "| 1 | x |"]
    assert harness.fmt(None) == "–" and harness.fmt(math.nan, missing="") == ""
    assert harness.fmt(0.123456) == "0.123" and harness.fmt(123456.7) == "123457"
    assert harness.fmt(123456.7, 4, fixed_from=math.inf) == "1.235e+05"
    assert harness.fmt(7) == "7"


def test_results_round_trip(harness, tmp_path):
    stem = harness.write_results("x", {"a": [1, 2]}, "# x\n", out_dir=tmp_path / "out")
    assert stem == tmp_path / "out" / "x"
    assert harness.read_results("x", tmp_path / "out") == {"a": [1, 2]}
    assert (tmp_path / "out" / "x.md").read_text() == "# x\n"
    assert harness.read_results("missing", tmp_path) is None
    info = harness.machine_info("python", "cpus")
    assert list(info) == ["python", "cpus"]
    assert harness.timestamp().endswith(" UTC")


def test_run_child_streams_rows_and_kills_a_silent_child_on_time(harness):
    code = "import time; print('{\"a\": 1}', flush=True); print('noise'); time.sleep(60)"
    seen = []
    child = harness.run_child([sys.executable, "-c", code], timeout=1.0, on_row=seen.append)
    assert child.timed_out and child.rows == [{"a": 1}] == seen
    assert child.returncode != 0


def test_call_in_child_returns_the_dict_or_raises(harness):
    assert harness.call_in_child("_harness:machine_info", "cpus", timeout=60) == {
        "cpus": harness.machine_info("cpus")["cpus"]
    }
    with pytest.raises(harness.ChildError, match="AttributeError"):
        harness.call_in_child("_harness:no_such_function", timeout=60)


def test_call_in_child_imports_odtkit_from_a_given_source_folder(harness, tmp_path):
    """Before/after in one run: a child given ``src`` imports that odtkit, not the installed
    (or editable) one; without it, the installed one."""
    (tmp_path / "odtkit").mkdir()
    (tmp_path / "odtkit" / "__init__.py").write_text("")
    other = harness.call_in_child("_harness:imported_from", "odtkit", timeout=60, src=tmp_path)
    assert other["file"] == str(tmp_path / "odtkit" / "__init__.py")
    ours = harness.call_in_child("_harness:imported_from", "odtkit", timeout=60)
    assert not ours["file"].startswith(str(tmp_path))


def test_pruning_scale_report_renders_and_every_pruning_matched():
    """The committed before/after rows of benchmarks/pruning.py part scale render, and every
    case found the same pruning before and after (leaf for leaf)."""
    results = json.loads((RESULTS / "pruning.json").read_text())
    assert "scale" in results, "the committed pruning results lost their scale part"
    with benchmark_module("_pruning_scale") as scale:
        text = "\n".join(scale.scale_section(results["scale"]))
    assert "| same |" in text and "**no**" not in text
    assert text.count("| yes |") == sum(r.get("version") == "after" for r in results["scale"])


def test_dataset_loading_skips_absent_data(harness, capsys):
    assert harness.load_dataset("car").name == "car-evaluation"
    assert harness.load_dataset("no-such-set") is None
    assert "[skip] no-such-set" in capsys.readouterr().err


# -- the committed reports, re-rendered from their JSON -----------------------------------------


@pytest.mark.parametrize("name", ["mip_vs_search", "mip_vs_search_d3", "mip_vs_search_large"])
def test_mip_vs_search_report_renders_from_its_json(harness, name):
    import mip_vs_search

    payload = json.loads((RESULTS / f"{name}.json").read_text())
    assert mip_vs_search.markdown(payload) == (RESULTS / f"{name}.md").read_text()


def test_bnb_osdt_report_renders_from_its_json(harness):
    import bnb_osdt

    payload = json.loads((RESULTS / "bnb_osdt.json").read_text())
    # the committed run's limits, as its header states them
    assert bnb_osdt.render(payload, 30.0, 2000.0, 3) == (RESULTS / "bnb_osdt.md").read_text()

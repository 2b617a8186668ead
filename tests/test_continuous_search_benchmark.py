"""benchmarks/continuous_search.py (issue 23): its datasets, its child plumbing and its report."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from conftest import BENCHMARKS, benchmark_module

RESULTS = BENCHMARKS / "results"


@pytest.fixture(scope="module")
def bench():
    with benchmark_module("continuous_search") as module:
        yield module


def test_digits_are_pooled_by_summing_2x2_blocks(bench):
    from sklearn.datasets import load_digits

    d = load_digits()
    keep = np.isin(d.target, (3, 8))
    X, y = bench.pooled_digits38()
    assert X.shape == (int(keep.sum()), 16)
    np.testing.assert_array_equal(y, d.target[keep] == 8)
    images = d.images[keep]
    for i in range(4):
        for j in range(4):
            block = images[:, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2].sum(axis=(1, 2))
            np.testing.assert_array_equal(X[:, 4 * i + j], block)


@pytest.mark.parametrize(
    "name, shape, classes",
    [
        ("breast_cancer", (569, 30), 2),
        ("wine", (178, 13), 3),
        ("digits38", (357, 16), 2),
        ("synthetic", (2000, 10), 2),
        ("synthetic:42", (2000, 10), 2),
        ("anes96", (944, 9), 2),
        ("fair", (6366, 8), 2),
    ],
)
def test_datasets_load_offline_as_float_columns_and_class_codes(bench, name, shape, classes):
    if name in ("anes96", "fair"):
        pytest.importorskip(
            "statsmodels", reason="statsmodels: a benchmark-only dependency (its data sets)"
        )
    X, y, cols = bench.load(name)
    assert X.shape == shape and X.dtype == np.float64 and np.isfinite(X).all()
    assert len(cols) == shape[1] and len(set(cols)) == shape[1]
    assert y.dtype == np.int32 and set(np.unique(y)) == set(range(classes))


def test_one_setting_per_child_and_a_missing_contree_is_a_row_not_a_crash(bench, tmp_path):
    # this interpreter has no pycontree: ConTree's child fails and the run goes on
    bench.main(
        [
            "--datasets",
            "wine",
            "--depths",
            "2",
            "--lams",
            "0,0.02",
            "--reps",
            "1",
            "--time-limit",
            "30",
            "--contree-python",
            sys.executable,
            "--out-dir",
            str(tmp_path),
        ]
    )
    payload = json.loads((tmp_path / "continuous_search.json").read_text())
    rows = {(r["tool"], r["lam"]): r for r in payload["rows"]}
    assert set(rows) == {("contree", 0.0), ("ours", 0.0), ("ours", 0.02)}
    assert "pycontree" in rows["contree", 0.0]["error"]
    X, y, _ = bench.load("wine")
    for lam in (0.0, 0.02):
        r = rows["ours", lam]
        assert r["rescore_ok"] and 0 <= r["errors"] < len(y)
        assert r["objective"] == pytest.approx(r["errors"] / len(y) + lam * r["leaves"])
        assert r["lower_bound"] <= r["objective"] + 1e-9 and r["peak_rss_mb"] > 0
    assert "## lam = 0: side by side" in (tmp_path / "continuous_search.md").read_text()


def test_summary_separates_the_floor_the_rest_and_the_hard_cases(bench):
    def row(tool, depth, time, certified, errors, **kw):
        return dict(
            tool=tool, dataset="t", depth=depth, lam=0.0, time=time, certified=certified,
            errors=errors, leaves=4, peak_rss_mb=100.0, status="optimal" if certified
            else "time_limit", mode="exact", lower_bound=0.01, rescore_ok=True, **kw,
        )  # fmt: skip

    payload = {
        "time_limit": 10.0,
        "datasets": {"t": {"n": 100, "m": 2, "classes": 2, "distinct_values": 50}},
        "rows": [
            row("contree", 2, 0.01, True, 5),
            row("ours", 2, 0.02, True, 5),
            row("contree", 3, 1.0, True, 3),
            row("ours", 3, 0.5, True, 3),
            row("contree", 4, 10.0, False, 2),
            row("ours", 4, 10.0, False, 2),
        ],
    }
    pairs = bench.side_by_side(payload)
    assert [p.get("hard") for p in pairs] == [False, False, True]
    assert [p["ratio"] for p in pairs] == pytest.approx([2.0, 0.5, 1.0])
    text = "\n".join(bench.summary_lines(payload, pairs))
    assert "not hard: 0.5 over 1 settings" in text  # only depth 3 reaches 50 ms, not hard
    assert "noise dominate): 2 over 1" in text
    assert "ConTree certifies 2 of 3" in text and "certifies 2 of those" in text
    assert "non-zero bound: 1 of 1" in text
    assert math.isfinite(pairs[1]["ratio"])


@pytest.mark.parametrize("name", ["continuous_search", "continuous_search_synthetic42"])
def test_report_renders_from_its_json(bench, name):
    payload = json.loads((RESULTS / f"{name}.json").read_text())
    assert bench.render(payload) == (RESULTS / f"{name}.md").read_text()

"""odtkit.compare and the `odtkit compare` command: every tree re-verified, agreement flagged."""

from __future__ import annotations

import math

import pytest

from odtkit import compare, metrics
from odtkit.cli import main
from odtkit.solvers import available_backends
from odtkit.testing import brute_force_tree, example_dataset_trees, random_dataset

TOL = 1e-6


def test_all_methods_agree_on_the_worked_example():
    ds = example_dataset_trees()
    table = compare(ds, 0.1, 2, time_limit=30)
    assert list(table["method"]) == ["search", "rbinoct", "flowoct"]
    assert set(table["status"]) == {"optimal"}
    assert table["objective"].to_list() == pytest.approx([11 / 30] * 3, abs=TOL)
    assert table["bound"].to_list() == pytest.approx([11 / 30] * 3, abs=TOL)
    assert table["agrees"].to_list() == [True, True, True]
    assert table["warm_start"].to_list() == [False, True, True]
    assert table.attrs["warm_start_source"] == "search_tree"
    assert table.attrs["certified_optimum"] == pytest.approx(11 / 30)
    best = table.attrs["best_tree"]
    assert metrics.objective(best, ds, 0.1) == pytest.approx(11 / 30)
    for tree, value in zip(table.attrs["trees"], table["objective"], strict=True):
        assert metrics.objective(tree, ds, 0.1) == pytest.approx(value)


def test_original_rbinoct_and_binoct_are_flagged_when_they_miss_the_optimum():
    """λ = 0.25 (§7.3): OPT = 7/12; original RBinOCT's tree has 2/3, BinOCT's (min errors) too."""
    ds = example_dataset_trees()
    table = compare(
        ds, 0.25, 1, methods=("search", "rbinoct", "rbinoct_original", "binoct"), time_limit=30
    )
    by_method = table.set_index("method")
    assert by_method.loc["search", "objective"] == pytest.approx(7 / 12)
    assert by_method.loc["rbinoct", "agrees"] is True
    assert by_method.loc["rbinoct_original", "objective"] == pytest.approx(2 / 3)
    assert by_method.loc["rbinoct_original", "reported"] == pytest.approx(2 / 3)
    assert by_method.loc["rbinoct_original", "agrees"] is False
    assert by_method.loc["binoct", "reported"] == pytest.approx(1.0)  # one error
    assert by_method.loc["binoct", "agrees"] is False
    # BinOCT's error bound converts to a valid lower bound on OPT: 1/6 + λ <= 7/12
    assert by_method.loc["binoct", "bound"] == pytest.approx(1 / 6 + 0.25)


@pytest.mark.parametrize("seed", range(4))
def test_random_instances_match_the_oracle(seed):
    ds = random_dataset(seed, n_samples=12, n_features=3)
    lam = 0.02
    opt = brute_force_tree(ds, lam, 2)[1]
    table = compare(ds, lam, 2, time_limit=30)
    assert table["objective"].to_list() == pytest.approx([opt] * 3, abs=TOL)
    assert table["agrees"].all()


def test_cold_start_and_other_backends():
    ds = example_dataset_trees()
    backends = [b for b in ("highs", "pyomo", "pulp") if b in available_backends()]
    table = compare(
        ds,
        0.1,
        1,
        methods=("rbinoct", "flowoct"),
        backends=backends,
        warm_start=False,
        time_limit=30,
    )
    assert len(table) == 2 * len(backends)
    assert not table["warm_start"].any()
    assert table["objective"].to_list() == pytest.approx([11 / 30] * len(table), abs=TOL)
    assert table["agrees"].all()


def test_time_limited_runs_report_a_gap_not_an_error():
    ds = random_dataset(21, n_samples=60, n_features=6)
    table = compare(ds, 0.005, 3, methods=("rbinoct", "flowoct"), time_limit=0.05)
    for row in table.itertuples():
        assert row.status in ("time_limit", "optimal")
        if not math.isnan(row.objective):
            assert row.bound <= row.objective + TOL
            assert row.gap >= -TOL


def test_bad_arguments():
    ds = example_dataset_trees()
    with pytest.raises(ValueError, match="methods"):
        compare(ds, 0.1, 1, methods=("cart",))
    with pytest.raises(ValueError, match="backend"):
        compare(ds, 0.1, 1, backends=("gurobi",))
    with pytest.raises(ValueError, match="depth"):
        compare(ds, 0.1, 0)
    with pytest.raises(TypeError, match="dataset"):
        compare(3, 0.1, 1)


def test_cli_compare_prints_the_table_and_the_best_tree(capsys):
    assert (
        main(
            ["compare", "--dataset", "monk1", "--depth", "1", "--lam", "0.05", "--time-limit", "10"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "warm start from search_tree" in out
    for word in ("search", "rbinoct", "flowoct", "agrees", "best tree:", "predict"):
        assert word in out


def test_a_certified_start_switches_heuristics_off_only_where_it_is_optimal(monkeypatch):
    import odtkit.solvers

    calls = []
    real_solve = odtkit.solvers.solve

    def spy(model, **kwargs):
        calls.append((model.meta.get("formulation"), kwargs.get("heuristics", True)))
        return real_solve(model, **kwargs)

    monkeypatch.setattr(odtkit.solvers, "solve", spy)
    ds = random_dataset(3, n_samples=24, n_features=3)
    table = compare(ds, 0.02, 2, methods=("search", "flowoct", "rbinoct", "binoct"))
    assert table["agrees"].iloc[:3].tolist() == [True, True, True]
    heuristics = dict(calls)
    # the search tree is optimal for (R)BinOCT-with-null-split and FlowOCT, not for BinOCT
    assert heuristics == {"flowoct": False, "rbinoct": False, "binoct": True}
    calls.clear()
    compare(ds, 0.02, 2, methods=("search", "flowoct"), heuristics=True)
    assert calls == [("flowoct", True)]
    calls.clear()
    compare(ds, 0.02, 2, methods=("flowoct",))  # greedy start: not certified
    assert calls == [("flowoct", True)]

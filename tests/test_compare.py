"""odtkit.compare and the `odtkit compare` command: every tree re-verified, agreement flagged."""

from __future__ import annotations

import math

import pytest
from conftest import sigint_inside

from odtkit import Dataset, Status, compare, metrics
from odtkit.cli import main
from odtkit.methods import METHODS, SEARCH_METHODS
from odtkit.solvers import available_backends
from odtkit.testing import brute_force_tree, example_dataset_trees, random_dataset

TOL = 1e-6


def test_all_methods_agree_on_the_worked_example():
    ds = example_dataset_trees()
    table = compare(ds, lam=0.1, max_depth=2, time_limit=30)
    assert list(table["method"]) == ["dp", "rbinoct", "flowoct"]
    assert set(table["status"]) == {"optimal"}
    assert table["objective"].to_list() == pytest.approx([11 / 30] * 3, abs=TOL)
    assert table["bound"].to_list() == pytest.approx([11 / 30] * 3, abs=TOL)
    assert table["agrees"].to_list() == [True, True, True]
    assert table["warm_start"].to_list() == [False, True, True]
    assert table.attrs["warm_start_source"] == "search_tree"
    assert table.attrs["certified_optimum"] == pytest.approx(11 / 30)
    best = table.attrs["best_tree"]
    assert metrics.objective(best, ds, lam=0.1) == pytest.approx(11 / 30)
    for tree, value in zip(table.attrs["trees"], table["objective"], strict=True):
        assert metrics.objective(tree, ds, lam=0.1) == pytest.approx(value)


def test_original_rbinoct_and_binoct_are_flagged_when_they_miss_the_optimum():
    """λ = 0.25 (docs/formulations-trees.md §7.3): OPT = 7/12; original RBinOCT's tree has 2/3,
    BinOCT's (min errors) too."""
    ds = example_dataset_trees()
    table = compare(
        ds,
        lam=0.25,
        max_depth=1,
        methods=("dp", "rbinoct", "rbinoct_original", "binoct"),
        time_limit=30,
    )
    by_method = table.set_index("method")
    assert by_method.loc["dp", "objective"] == pytest.approx(7 / 12)
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
    opt = brute_force_tree(ds, lam=lam, max_depth=2)[1]
    table = compare(ds, lam=lam, max_depth=2, time_limit=30)
    assert table["objective"].to_list() == pytest.approx([opt] * 3, abs=TOL)
    assert table["agrees"].all()


def test_cold_start_and_other_backends():
    ds = example_dataset_trees()
    backends = [b for b in ("highs", "pyomo", "pulp") if b in available_backends()]
    table = compare(
        ds,
        lam=0.1,
        max_depth=1,
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
    table = compare(ds, lam=0.005, max_depth=3, methods=("rbinoct", "flowoct"), time_limit=0.05)
    for row in table.itertuples():
        assert row.status in ("time_limit", "optimal")
        if not math.isnan(row.objective):
            assert row.bound <= row.objective + TOL
            assert row.gap >= -TOL


def _build_runs_out(monkeypatch, formulation_class):
    """Every build of ``formulation_class`` uses up its time limit, whatever the machine."""
    from odtkit._limits import OutOfTime

    def build(self, data, **problem):
        raise OutOfTime

    monkeypatch.setattr(formulation_class, "build", build)


def test_a_build_that_uses_up_the_limit_is_a_time_limit_row_holding_the_start(monkeypatch):
    """Issue 22: a MIP whose build ran out of time raised KeyError 'warm_start' in compare."""
    from odtkit.formulations import FlowOCT

    ds = random_dataset(22, n_samples=40, n_features=5)
    _build_runs_out(monkeypatch, FlowOCT)
    table = compare(ds, lam=0.01, max_depth=2, methods=("dp", "flowoct"), time_limit=30)
    dp, flow = table.itertuples()
    assert dp.status == "optimal"
    assert flow.status == "time_limit"
    start = table.attrs["trees"][0]
    assert table.attrs["trees"][1] is start
    assert flow.objective == pytest.approx(metrics.objective(start, ds, lam=0.01), abs=1e-12)
    assert flow.bound == -math.inf and flow.gap == math.inf
    assert flow.warm_start is True and flow.agrees is True
    assert "during the build" in flow.message and "warm start" in flow.message


def test_a_cold_build_that_uses_up_the_limit_is_a_row_without_a_tree(monkeypatch):
    from odtkit.formulations import RBinOCT

    ds = random_dataset(23, n_samples=40, n_features=5)
    _build_runs_out(monkeypatch, RBinOCT)
    table = compare(ds, lam=0.01, max_depth=2, methods=("rbinoct",), warm_start=False)
    (row,) = table.itertuples()
    assert row.status == "time_limit" and math.isnan(row.objective) and row.bound == -math.inf
    assert row.warm_start is False and table.attrs["trees"] == [None]


def test_solve_formulation_stopped_in_the_build_carries_every_stats_key():
    """A limit far too small for any build: the stopped result reads like a solved one."""
    from odtkit.formulations import FlowOCT
    from odtkit.pipeline import solve_formulation

    ds = random_dataset(24, n_samples=40, n_features=5)
    res = solve_formulation(FlowOCT(), ds, time_limit=1e-9, lam=0.01, max_depth=2)
    assert res.status == "time_limit" and res.model is None
    for key in ("build_time", "solve_time", "warm_start", "solver", "model_ir"):
        assert key in res.stats, key
    assert res.stats["warm_start"] is False and res.stats["stopped_before_solve"]


def test_bad_arguments():
    ds = example_dataset_trees()
    with pytest.raises(ValueError, match="methods"):
        compare(ds, lam=0.1, max_depth=1, methods=("cart",))
    with pytest.raises(ValueError, match="methods"):
        compare(ds, lam=0.1, max_depth=1, methods=("search",))  # now "dp" or "bnb"
    with pytest.raises(ValueError, match="methods"):
        compare(ds, lam=0.1, max_depth=1, methods=())
    with pytest.raises(ValueError, match="backend"):
        compare(ds, lam=0.1, max_depth=1, backends=("gurobi",))
    with pytest.raises(ValueError, match="max_depth"):
        compare(ds, lam=0.1, max_depth=0)
    with pytest.raises(TypeError, match="dataset"):
        compare(3, lam=0.1, max_depth=1)
    with pytest.raises(TypeError):
        compare(ds, 0.1, 1)  # the problem is keyword-only


def test_cli_compare_prints_the_table_and_the_best_tree(capsys):
    assert (
        main(
            [
                "compare",
                "--dataset",
                "monk1",
                "--max-depth",
                "1",
                "--lam",
                "0.05",
                "--time-limit",
                "10",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "warm start from search_tree" in out
    for word in ("dp", "rbinoct", "flowoct", "agrees", "best tree:", "|--- class: "):
        assert word in out


def test_a_certified_start_switches_heuristics_off_only_where_it_is_optimal(monkeypatch):
    import odtkit.solvers

    calls = []
    real_solve = odtkit.solvers.solve

    def spy(model, **kwargs):
        calls.append((model.meta.formulation, kwargs.get("heuristics", True)))
        return real_solve(model, **kwargs)

    monkeypatch.setattr(odtkit.solvers, "solve", spy)
    ds = random_dataset(3, n_samples=24, n_features=3)
    table = compare(ds, lam=0.02, max_depth=2, methods=("dp", "flowoct", "rbinoct", "binoct"))
    assert table["agrees"].iloc[:3].tolist() == [True, True, True]
    heuristics = dict(calls)
    # the search tree is optimal for (R)BinOCT-with-null-split and FlowOCT, not for BinOCT
    assert heuristics == {"flowoct": False, "rbinoct": False, "binoct": True}
    calls.clear()
    compare(ds, lam=0.02, max_depth=2, methods=("dp", "flowoct"), heuristics=True)
    assert calls == [("flowoct", True)]
    calls.clear()
    compare(ds, lam=0.02, max_depth=2, methods=("flowoct",))  # greedy start: not certified
    assert calls == [("flowoct", True)]


def test_a_model_that_cannot_be_built_is_an_error_row_with_a_message():
    """Original RBinOCT needs a non-constant feature: its row says so, the others still agree."""
    ds = Dataset.from_arrays([[0, 1], [0, 1], [0, 1], [0, 1]], [0, 1, 1, 1])
    table = compare(ds, lam=0.1, max_depth=1, methods=("dp", "rbinoct_original", "rbinoct"))
    assert list(table["method"]) == ["dp", "rbinoct_original", "rbinoct"]
    assert all(isinstance(Status.parse(s), Status) for s in table["status"])  # no "error: ..."
    error = table.set_index("method").loc["rbinoct_original"]
    assert error["status"] == Status.ERROR
    assert "non-constant feature" in error["message"]
    assert error["backend"] == "highs"
    assert math.isnan(error["objective"]) and error["n_leaves"] == 0
    assert error["agrees"] is False
    assert table.attrs["trees"][1] is None
    ok = table[table["method"] != "rbinoct_original"]
    assert set(ok["status"]) == {"optimal"} and set(ok["message"]) == {""}
    assert ok["agrees"].tolist() == [True, True]
    assert ok["objective"].to_list() == pytest.approx([0.25 + 0.1] * 2)


def test_both_search_methods_and_the_method_vocabulary():
    ds = example_dataset_trees()
    table = compare(ds, lam=0.1, max_depth=2, methods=("bnb", "dp", "flowoct"), time_limit=30)
    assert list(table["method"]) == ["bnb", "dp", "flowoct"]
    assert list(table["backend"][:2]) == ["native", "native"]
    assert table["agrees"].tolist() == [True, True, True]
    assert table["warm_start"].tolist() == [False, False, True]
    assert set(METHODS) == {
        "dp",
        "bnb",
        "exact",
        "rbinoct",
        "rbinoct_original",
        "flowoct",
        "pathoct",
        "binoct",
    }
    assert SEARCH_METHODS == ("dp", "bnb")


def test_binoct_row_is_feasible_and_says_why_it_is_not_certified_for_the_stated_problem():
    ds = example_dataset_trees()
    table = compare(ds, lam=0.25, max_depth=1, methods=("binoct",), warm_start=False)
    row = table.iloc[0]
    assert row["status"] == "feasible" and row["bound"] < row["objective"]
    assert "optimum need not be the stated problem's" in row["message"]


def test_cli_help_lists_the_methods_and_depth_is_max_depth(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["compare", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--max-depth" in out
    for name, method in METHODS.items():
        assert name in out and method.description in out
    with pytest.raises(SystemExit) as exc:
        main(["compare", "--depth", "2"])
    assert exc.value.code == 2
    capsys.readouterr()
    assert main(["compare", "--methods", "search"]) == 2
    assert "unknown method" in capsys.readouterr().err


def test_ctrl_c_stops_the_run_and_the_rest_of_the_table():
    # issue 13: `odtkit compare` interrupted RBinOCT and then ran FlowOCT for its full limit.
    # The signal goes out once the first MIP is inside solve() (a timer started before the
    # call raced compare's set-up on a loaded machine); what is asserted is the table, not
    # seconds.
    import odtkit.solvers
    from odtkit import datasets

    with sigint_inside(odtkit.solvers, "solve", after=0.5) as sent:
        table = compare(
            datasets.load("monk1"),
            lam=0.01,
            max_depth=3,
            methods=("dp", "rbinoct", "flowoct"),
            backends=("highs", "pyomo"),
            time_limit=60,
        )
    if not sent.is_set():
        pytest.skip("RBinOCT finished within 0.5 s: nothing left to interrupt")
    status = {(r.method, r.backend): r.status for r in table.itertuples()}
    assert status[("dp", "native")] == "optimal"
    assert status[("rbinoct", "highs")] == "interrupted"
    assert [status[(m, b)] for m in ("rbinoct", "flowoct") for b in ("highs", "pyomo")][1:] == [
        "not_run"
    ] * 3
    assert table.attrs["best_tree"] is not None  # the search's certified tree is kept

"""odtkit.compare and the `odtkit compare` command: every tree re-verified, agreement flagged."""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from conftest import sigint_at_first_log_line

import odtkit
from odtkit import Comparison, Dataset, Result, Status, compare, metrics
from odtkit._compare import COLUMNS
from odtkit.cli import main
from odtkit.methods import METHODS, SEARCH_METHODS
from odtkit.solvers import available_backends
from odtkit.testing import (
    EXAMPLE_TREES_PROTECTED,
    brute_force_tree,
    example_dataset_trees,
    random_dataset,
)

TOL = 1e-6


def test_all_methods_agree_on_the_worked_example():
    ds = example_dataset_trees()
    comparison = compare(ds, lam=0.1, max_depth=2, time_limit=30)
    table = comparison.to_frame()
    assert list(table["method"]) == ["dp", "columns", "rbinoct", "flowoct"]
    assert set(table["status"]) == {"optimal"}
    assert table["objective"].to_list() == pytest.approx([11 / 30] * 4, abs=TOL)
    assert table["bound"].to_list() == pytest.approx([11 / 30] * 4, abs=TOL)
    assert table["agrees"].to_list() == [True] * 4
    assert table["warm_start"].to_list() == [False, True, True, True]
    assert comparison.warm_start_source == "search_tree"
    assert comparison.certified_optimum == pytest.approx(11 / 30)
    assert comparison.agree
    best = comparison.best_tree
    assert metrics.objective(best, ds, lam=0.1) == pytest.approx(11 / 30)
    for tree, value in zip(comparison.trees, table["objective"], strict=True):
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
    ).to_frame()
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
    table = compare(ds, lam=lam, max_depth=2, time_limit=30).to_frame()
    assert table["objective"].to_list() == pytest.approx([opt] * len(table), abs=TOL)
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
    ).to_frame()
    assert len(table) == 2 * len(backends)
    assert not table["warm_start"].any()
    assert table["objective"].to_list() == pytest.approx([11 / 30] * len(table), abs=TOL)
    assert table["agrees"].all()


def test_time_limited_runs_report_a_gap_not_an_error():
    ds = random_dataset(21, n_samples=60, n_features=6)
    comparison = compare(
        ds, lam=0.005, max_depth=3, methods=("rbinoct", "flowoct"), time_limit=0.05
    )
    for row in comparison.to_frame().itertuples():
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
    comparison = compare(ds, lam=0.01, max_depth=2, methods=("dp", "flowoct"), time_limit=30)
    dp, flow = comparison.to_frame().itertuples()
    assert dp.status == "optimal"
    assert flow.status == "time_limit"
    start = comparison.trees[0]
    assert comparison.trees[1] is start
    assert flow.objective == pytest.approx(metrics.objective(start, ds, lam=0.01), abs=1e-12)
    assert flow.bound == -math.inf and flow.gap == math.inf
    assert flow.warm_start is True and flow.agrees is True
    assert "during the build" in flow.message and "warm start" in flow.message


def test_a_cold_build_that_uses_up_the_limit_is_a_row_without_a_tree(monkeypatch):
    from odtkit.formulations import RBinOCT

    ds = random_dataset(23, n_samples=40, n_features=5)
    _build_runs_out(monkeypatch, RBinOCT)
    comparison = compare(ds, lam=0.01, max_depth=2, methods=("rbinoct",), warm_start=False)
    (row,) = comparison.to_frame().itertuples()
    assert row.status == "time_limit" and math.isnan(row.objective) and row.bound == -math.inf
    assert row.warm_start is False and comparison.trees == (None,)
    assert comparison.best is None and comparison.best_tree is None


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
    table = compare(
        ds, lam=0.02, max_depth=2, methods=("dp", "flowoct", "rbinoct", "binoct")
    ).to_frame()
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
    comparison = compare(ds, lam=0.1, max_depth=1, methods=("dp", "rbinoct_original", "rbinoct"))
    table = comparison.to_frame()
    assert list(table["method"]) == ["dp", "rbinoct_original", "rbinoct"]
    assert all(isinstance(Status.parse(s), Status) for s in table["status"])  # no "error: ..."
    error = table.set_index("method").loc["rbinoct_original"]
    assert error["status"] == Status.ERROR
    assert "non-constant feature" in error["message"]
    assert error["backend"] == "highs"
    assert math.isnan(error["objective"]) and error["n_leaves"] == 0
    assert error["agrees"] is False
    assert comparison.trees[1] is None and not comparison.runs[1].answered
    ok = table[table["method"] != "rbinoct_original"]
    assert set(ok["status"]) == {"optimal"} and set(ok["message"]) == {""}
    assert ok["agrees"].tolist() == [True, True]
    assert ok["objective"].to_list() == pytest.approx([0.25 + 0.1] * 2)


def test_both_search_methods_and_the_method_vocabulary():
    ds = example_dataset_trees()
    table = compare(
        ds, lam=0.1, max_depth=2, methods=("bnb", "dp", "flowoct"), time_limit=30
    ).to_frame()
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
        "columns",
        "binoct",
    }
    assert SEARCH_METHODS == ("dp", "bnb")


def test_binoct_row_is_feasible_and_says_why_it_is_not_certified_for_the_stated_problem():
    ds = example_dataset_trees()
    table = compare(ds, lam=0.25, max_depth=1, methods=("binoct",), warm_start=False).to_frame()
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
    # The signal goes out at the first MIP's first log line, inside its solve() (a timer
    # raced compare's set-up on a loaded machine, and RBinOCT's solve on a fast one); what is
    # asserted is the table, not seconds.
    import odtkit.solvers
    from odtkit import datasets

    with sigint_at_first_log_line(odtkit.solvers, "solve") as sent:
        comparison = compare(
            datasets.load("monk1"),
            lam=0.01,
            max_depth=3,
            methods=("dp", "rbinoct", "flowoct"),
            backends=("highs", "pyomo"),
            time_limit=60,
        )
    assert sent.is_set()
    status = {(r.method, r.backend): r.status for r in comparison}
    assert status[("dp", "native")] == "optimal"
    assert status[("rbinoct", "highs")] == "interrupted"
    assert [status[(m, b)] for m in ("rbinoct", "flowoct") for b in ("highs", "pyomo")][1:] == [
        "not_run"
    ] * 3
    assert comparison.best_tree is not None  # the search's certified tree is kept


# --- the Comparison (issue 26): a typed result, not a DataFrame with attrs ---------------------


def _worse_and_better():
    """λ = 0.25, depth 1 on the worked example: dp and rbinoct certify 7/12; original RBinOCT's
    and BinOCT's trees score 2/3 (feasible, worse). The searches run first."""
    return compare(
        example_dataset_trees(),
        lam=0.25,
        max_depth=1,
        methods=("rbinoct_original", "dp", "binoct", "rbinoct"),
        time_limit=30,
    )


def test_the_comparison_holds_each_runs_result_and_the_best_by_verified_objective():
    ds = example_dataset_trees()
    comparison = _worse_and_better()
    assert isinstance(comparison, Comparison) and isinstance(comparison, odtkit.Comparison)
    assert list(comparison.results) == ["dp", "rbinoct_original", "binoct", "rbinoct"]
    assert all(isinstance(r, Result) for r in comparison.results.values())
    assert len(comparison) == 4 and [run.method for run in comparison] == list(comparison.results)
    table = comparison.to_frame()
    best = comparison.best
    # the first of the least verified objectives (dp), re-scored by the one truth
    assert best is not None and best.method == "dp"
    assert best.objective == pytest.approx(table["objective"].min()) == pytest.approx(7 / 12)
    assert metrics.objective(best.tree, ds, lam=0.25) == pytest.approx(best.objective)
    assert comparison.best_tree is best.tree is comparison.results["dp"].model
    assert comparison.certified_optimum == pytest.approx(7 / 12) and comparison.certified
    assert comparison.certified_optima == {"binarization": pytest.approx(7 / 12)}
    # two runs miss the optimum: the certified answers are there, but not every tree has them
    assert [run.agrees for run in comparison] == [True, False, False, True]
    assert not comparison.agree
    reading = comparison.reading()
    assert reading.startswith("reading: dp certified 0.583333 in ")
    assert "every tree has the certified value" not in comparison.reading()


def test_to_frame_is_the_table_with_todays_columns_and_no_attrs():
    comparison = _worse_and_better()
    table = comparison.to_frame()
    assert list(table.columns) == list(COLUMNS)
    assert table.attrs == {}
    assert table["method"].tolist() == list(comparison.results)
    assert table["objective"].to_list() == pytest.approx([7 / 12, 2 / 3, 2 / 3, 7 / 12])
    assert table["agrees"].tolist() == [True, False, False, True]
    assert table["agrees"].dtype == object and set(table["message"].map(type)) == {str}
    for run, row in zip(comparison, table.itertuples(), strict=True):
        assert row.status == run.result.status and row.bound == run.result.lower_bound
        assert row.gap == pytest.approx(row.objective - row.bound, abs=1e-12)
    # a new frame each time: editing one leaves the comparison as it was
    table.loc[0, "objective"] = -1.0
    assert comparison.to_frame()["objective"].iloc[0] == pytest.approx(7 / 12)
    fair = compare(
        example_dataset_trees(),
        lam=0.1,
        max_depth=1,
        methods=("dp",),
        fairness=odtkit.Fairness("sp", protected=EXAMPLE_TREES_PROTECTED, delta=0.2),
    )
    columns = list(fair.to_frame().columns)
    assert columns[columns.index("n_leaves") + 1] == "fairness_gap"


def test_the_comparison_survives_a_row_filter():
    """Before: ``attrs["best_row"]`` was a position into the unfiltered table, and a filtered
    table kept the old attrs (or lost them)."""
    comparison = _worse_and_better()
    table = comparison.to_frame()
    mask = table["method"] != "dp"
    kept = comparison.filter(mask)
    assert len(kept) == 3 and list(kept.results) == ["rbinoct_original", "binoct", "rbinoct"]
    # best is the best of the runs kept (rbinoct), never a stale position
    assert kept.best is not None and kept.best.method == "rbinoct"
    assert kept.best.objective == pytest.approx(table[mask]["objective"].min())
    # verdicts and certified optima are facts about the problem: a filter keeps them
    pd.testing.assert_frame_equal(kept.to_frame(), table[mask].reset_index(drop=True))
    assert kept.certified_optimum == pytest.approx(7 / 12)
    worse = comparison.filter(lambda run: run.agrees is False)
    assert [run.method for run in worse] == ["rbinoct_original", "binoct"]
    assert worse.best is not None and worse.best.method == "rbinoct_original"
    assert comparison.filter([False] * 4).best is None
    with pytest.raises(ValueError, match="one bool per run"):
        comparison.filter([True])


def test_two_frames_concatenate():
    """Before: pd.concat dropped the attrs, and with them every tree and the best row."""
    first = compare(example_dataset_trees(), lam=0.1, max_depth=1, methods=("dp", "flowoct"))
    second = _worse_and_better()
    both = pd.concat(
        {"lam=0.1": first.to_frame(), "lam=0.25": second.to_frame()}, names=["problem", "row"]
    )
    assert len(both) == len(first) + len(second) and list(both.columns) == list(COLUMNS)
    assert both.loc["lam=0.1", "objective"].to_list() == pytest.approx([11 / 30] * 2)
    assert both.groupby(level="problem")["objective"].min().to_list() == pytest.approx(
        [11 / 30, 7 / 12]
    )
    # the trees stay with their comparisons
    assert first.best_tree is not None and second.best_tree is not None


def test_runs_on_several_backends_are_named_by_method_and_backend():
    comparison = compare(
        example_dataset_trees(),
        lam=0.1,
        max_depth=1,
        methods=("dp", "pathoct"),
        backends=("highs", "pyomo") if "pyomo" in available_backends() else ("highs",),
        time_limit=30,
    )
    names = list(comparison.results)
    if len(comparison) == 3:
        assert names[0] == "dp/native" and names[1] == "pathoct/highs"
        assert names[2].startswith("pathoct/pyomo")
    assert comparison.agree and "every tree has the certified value" in comparison.reading()
    assert comparison.names == tuple(names)
    assert repr(comparison).splitlines()[0] == "Comparison(example-trees, lam=0.1, max_depth=1)"
    assert "pathoct" in repr(comparison) and "<table" in comparison._repr_html_()


def test_asking_for_the_comparison_type_leaves_odtkit_compare_callable():
    # odtkit.Comparison loads the odtkit.compare submodule, which binds that name in the
    # package: the compare function must still be what odtkit.compare is
    import subprocess
    import sys

    code = (
        "import odtkit\n"
        "assert odtkit.Comparison.__name__ == 'Comparison'\n"
        "assert callable(odtkit.compare), type(odtkit.compare)\n"
        "assert 'Comparison' in odtkit.__all__\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def _fixed_times(monkeypatch):
    """``odtkit compare`` with every run's seconds fixed (row i: i+1 ms, its build i+1 half-ms),
    so that what it prints can be compared line by line."""
    real = odtkit.compare

    def fixed(*args, **kwargs):
        comparison = real(*args, **kwargs)
        runs = []
        for i, run in enumerate(comparison.runs):
            stats = {**run.result.stats, "solve_time": 0.001 * (i + 1)}
            if stats.get("build_time"):
                stats["build_time"] = 0.0005 * (i + 1)
            result = run.result.replace(time=0.001 * (i + 1), stats=stats)
            runs.append(dataclasses.replace(run, result=result))
        return comparison.replace(runs=tuple(runs))

    monkeypatch.setattr(odtkit, "compare", fixed)


def _before(section: str) -> str:
    """What `odtkit compare` printed before the Comparison (the attrs-based table of issue 25's
    code, the same seconds fixed the same way): the command's output must not change."""
    text = (Path(__file__).parent / "data" / "compare_cli_before.txt").read_text()
    sections = dict(part.split("\n", 1) for part in text.split("=== ")[1:])
    return sections[section]


def test_the_cli_prints_what_it_printed_before(monkeypatch, capsys, tmp_path):
    from sklearn.datasets import load_iris

    _fixed_times(monkeypatch)
    argv = ["compare", "--dataset", "monk3", "--max-depth", "1", "--lam", "0.01"]
    # the default methods before branch-and-price (columns) joined them
    old_defaults = ["--methods", "dp,pathoct,flowoct,rbinoct"]
    assert main([*argv, *old_defaults, "--time-limit", "60"]) == 0
    assert capsys.readouterr().out == _before("monk3")
    X, y = load_iris(return_X_y=True, as_frame=True)
    X = X.iloc[::5].reset_index(drop=True)
    X["species"] = y.iloc[::5].to_numpy()
    path = tmp_path / "iris30.csv"
    X.to_csv(path, index=False)
    argv = ["compare", "--dataset", str(path), "--max-depth", "2", "--lam", "0.02"]
    assert main([*argv, "--methods", "exact,dp,rbinoct", "--time-limit", "60"]) == 0
    assert capsys.readouterr().out == _before("iris30")


def test_a_tree_above_delta_is_an_error_run_that_is_never_best(monkeypatch):
    """Every tree re-measured: one whose disparity exceeds δ neither sets nor meets the
    optimum, whatever its objective (the measure is forced above δ here)."""
    data = example_dataset_trees()
    fairness = odtkit.Fairness("sp", protected=EXAMPLE_TREES_PROTECTED, delta=0.2)
    honest = compare(data, lam=0.1, max_depth=1, methods=("dp", "flowoct"), fairness=fairness)
    assert honest.agree and honest.best is not None
    # compare's own re-measure only: the fair search checks its tree with the real one
    module = sys.modules["odtkit._compare"]
    seen = SimpleNamespace(
        objective=metrics.objective, is_fair=metrics.is_fair, fairness_gap=lambda *_: 0.5
    )
    monkeypatch.setattr(module, "metrics", seen)
    comparison = compare(data, lam=0.1, max_depth=1, methods=("dp", "flowoct"), fairness=fairness)
    assert [run.status for run in comparison] == [Status.ERROR, Status.ERROR]
    assert all(run.unfair and run.agrees is False and run.bound == -math.inf for run in comparison)
    assert all("disparity 0.5 > delta=0.2" in run.result.message for run in comparison)
    assert comparison.best is None and not comparison.certified and not comparison.agree
    assert comparison.to_frame()["fairness_gap"].tolist() == [0.5, 0.5]


def test_indexing_a_comparison_says_to_use_the_frame():
    """compare() returned a DataFrame before: a notebook's table["agrees"] gets a message
    naming .to_frame(), not Python's bare "not subscriptable"."""
    comparison = compare(odtkit.datasets.load("monk1"), lam=0.01, max_depth=1, methods="dp")
    with pytest.raises(TypeError, match=r"to_frame\(\)\['agrees'\]"):
        comparison["agrees"]


def test_a_comparison_where_nothing_ran_does_not_agree() -> None:
    """A search that sits out and no MIP to run: nothing was certified, so the reading does not
    claim that every tree has the certified value."""
    from odtkit.constraints import ClassRecall

    data = odtkit.datasets.load("monk1")
    comparison = compare(
        data,
        lam=0.01,
        max_depth=2,
        methods=["dp"],
        constraints=[ClassRecall(1, at_least=0.9)],
    )
    assert comparison.runs[0].sat_out
    assert not comparison.agree
    assert "every tree has the certified value" not in comparison.reading()

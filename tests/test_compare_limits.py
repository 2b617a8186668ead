"""compare at real sizes (issue 37 items 9 and 12): one method's failure is its row, every
MIP holds its limit with its build included, a MIP without a bound says why, and the default
methods are the ones that can answer at the table's size."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from odtkit import Status, compare, metrics
from odtkit._limits import OutOfTime
from odtkit.cli import main
from odtkit.formulations import BinOCT, FlowOCT, PathOCT, RBinOCT
from odtkit.methods import METHODS
from odtkit.pipeline import solve_formulation
from odtkit.results import Result
from odtkit.solvers import Solution
from odtkit.testing import random_dataset

TOL = 1e-9


def _raising(exc):
    def build(self, data, *args, **kwargs):
        raise exc

    return build


def _check_dp_row(comparison, data, lam):
    dp = comparison.runs[0]
    assert dp.method == "dp" and dp.status == Status.OPTIMAL
    assert dp.objective == pytest.approx(metrics.objective(dp.tree, data, lam=lam), abs=TOL)
    return dp


# --- item 9: a failure is a row ------------------------------------------------------------


def test_a_memory_error_in_a_build_is_that_method_s_row(monkeypatch):
    data = random_dataset(31, n_samples=60, n_features=6)
    monkeypatch.setattr(
        PathOCT, "build", _raising(MemoryError("Unable to allocate 565. MiB for an array"))
    )
    comparison = compare(
        data, lam=0.01, max_depth=2, methods=("dp", "pathoct", "flowoct"), time_limit=30
    )
    dp = _check_dp_row(comparison, data, 0.01)
    path, flow = comparison.runs[1:]
    assert path.status == Status.MEMORY_LIMIT and path.tree is None and not path.answered
    assert (
        path.result.message
        == "out of memory: Unable to allocate 565. MiB for an array; nothing was solved"
    )
    assert flow.status == Status.OPTIMAL and flow.objective == pytest.approx(dp.objective)
    assert comparison.certified and comparison.best is dp
    assert "pathoct: memory_limit" in comparison.reading()


@pytest.mark.parametrize(
    ("target", "attribute"),
    [(FlowOCT, "build"), (FlowOCT, "decode"), (RBinOCT, "start")],
)
def test_any_exception_of_a_build_decode_or_start_is_an_error_row(monkeypatch, target, attribute):
    data = random_dataset(32, n_samples=50, n_features=5)
    boom = RuntimeError("native error:\n  bad index 7")
    monkeypatch.setattr(target, attribute, _raising(boom))
    comparison = compare(
        data, lam=0.01, max_depth=2, methods=("dp", "flowoct", "rbinoct"), time_limit=30
    )
    _check_dp_row(comparison, data, 0.01)
    failed = [run for run in comparison if run.status == Status.ERROR]
    assert [run.method for run in failed] == [target.name]
    # one line: the exception's type and its text with the line breaks folded
    assert failed[0].result.message == "failed with RuntimeError: native error: bad index 7"
    others = [run for run in comparison.runs[1:] if run.method != target.name]
    assert all(run.status == Status.OPTIMAL for run in others)


def test_the_cli_reports_a_failed_method_as_a_row_and_keeps_the_dp_answer(monkeypatch, capsys):
    monkeypatch.setattr(PathOCT, "build", _raising(MemoryError()))
    argv = ["compare", "--dataset", "monk1", "--max-depth", "2", "--methods", "dp,pathoct"]
    assert main(argv) == 0  # dp certified the optimum
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert "note: pathoct (highs): out of memory; nothing was solved" in captured.out
    assert "memory_limit" in captured.out and "best tree: dp (native)" in captured.out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as on Linux")
def test_a_real_address_space_limit_leaves_the_dp_row(tmp_path):
    """The issue's case: ``ulimit -v`` and a table whose PathOCT cells do not fit (its depth-3
    masks of 20,000 rows take 1.2 GB), in a child process so that the limit is its own."""
    rng = np.random.default_rng(0)
    X = rng.random((20_000, 40)) < 0.5
    y = (X[:, 0] ^ X[:, 1]) | (rng.random(20_000) < 0.1)
    frame = pd.DataFrame(X.astype(int), columns=[f"f{j}" for j in range(40)])
    frame["y"] = y.astype(int)
    frame.to_csv(tmp_path / "big.csv", index=False)
    child = (
        "import resource, sys\n"
        "limit = 1500 * 2**20\n"
        "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
        "from odtkit.cli import main\n"
        f"sys.exit(main(['compare', '--dataset', {str(tmp_path / 'big.csv')!r}, "
        "'--methods', 'dp,pathoct', '--json']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=600
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    rows = {row["method"]: row for row in json.loads(done.stdout)["rows"]}
    assert rows["dp"]["status"] == "optimal"
    assert rows["pathoct"]["status"] in ("memory_limit", "error", "time_limit")
    if rows["pathoct"]["status"] == "memory_limit":
        assert rows["pathoct"]["message"].startswith("out of memory")


# --- item 12a: the limit covers the build ----------------------------------------------------


def _expired(monkeypatch, module):
    """``module``'s deadline checks see an expired deadline; returns the list of calls."""
    calls = []

    def check():
        calls.append(1)
        raise OutOfTime

    monkeypatch.setattr(module, "check_deadline", check)
    return calls


def test_pathoct_s_layout_stops_at_an_expired_deadline(monkeypatch):
    import odtkit.formulations.paths as paths

    calls = _expired(monkeypatch, paths)
    data = random_dataset(33, n_samples=80, n_features=8)
    res = solve_formulation(PathOCT(), data, time_limit=60, lam=0.01, max_depth=3)
    assert calls  # the layout's own check stopped it, before any ModelBuilder call
    assert res.status == Status.TIME_LIMIT and res.model is None
    assert res.message == "the time limit ran out during the build: nothing was solved"


def test_flowoct_s_separation_pairs_stop_at_an_expired_deadline(monkeypatch):
    import odtkit.formulations._common as common

    calls = _expired(monkeypatch, common)
    data = random_dataset(34, n_samples=80, n_features=8)
    res = solve_formulation(FlowOCT(), data, time_limit=60, lam=0.01, max_depth=2)
    assert calls and res.status == Status.TIME_LIMIT and res.model is None


def test_pathoct_refuses_before_allocating_the_next_level():
    """The check on the next level's cells (each holds at least its K leaves) comes before
    their row masks are allocated: a model over max_paths never reaches them."""
    data = random_dataset(35, n_samples=300, n_features=12)
    size = PathOCT().estimate_size(data, 3)
    with pytest.raises(ValueError, match="max_paths=5,000"):
        PathOCT(max_paths=5_000).build(data, max_depth=3, lam=0.01)
    assert size.n_vars > 5_000


def test_the_solver_gets_what_the_build_left_of_the_limit(monkeypatch):
    """HiGHS's own time_limit is the remaining time, not the whole limit: a build that took
    0.3 s of a 2 s limit leaves the solver at most 1.7 s."""
    import odtkit.solvers

    real_build, real_solve, given = FlowOCT.build, odtkit.solvers.solve, []

    def slow_build(self, *args, **kwargs):
        import time

        time.sleep(0.3)
        return real_build(self, *args, **kwargs)

    def spy(model, *, time_limit=None, **kwargs):
        given.append(time_limit)
        return real_solve(model, time_limit=time_limit, **kwargs)

    monkeypatch.setattr(FlowOCT, "build", slow_build)
    monkeypatch.setattr(odtkit.solvers, "solve", spy)
    data = random_dataset(46, n_samples=60, n_features=6)
    res = solve_formulation(FlowOCT(), data, time_limit=2.0, lam=0.01, max_depth=2)
    assert res.stats["build_time"] >= 0.3
    assert given and 0 < given[0] <= 2.0 - res.stats["build_time"] + 1e-3


def test_a_tiny_limit_stops_every_mip_and_keeps_the_certified_dp():
    data = random_dataset(44, n_samples=400, n_features=12)
    comparison = compare(
        data,
        lam=0.01,
        max_depth=2,
        methods=("dp", "pathoct", "flowoct", "rbinoct"),
        time_limit=0.01,
    )
    dp = _check_dp_row(comparison, data, 0.01)
    for run in comparison.runs[1:]:
        if run.status == Status.OPTIMAL:  # a model solved within 10 ms is a fair answer
            assert run.objective == pytest.approx(dp.objective)
            continue
        assert run.status == Status.TIME_LIMIT, run.result.message
        assert run.tree is not None  # the warm start is kept
        assert run.objective == pytest.approx(metrics.objective(run.tree, data, lam=0.01))
        assert run.bound <= run.objective + 1e-6
        assert run.bound > -math.inf or run.result.message  # a bound, or why there is none
    assert comparison.certified


def test_the_cli_exits_0_with_a_tiny_limit_when_dp_certified(capsys):
    argv = ["compare", "--dataset", "monk1", "--max-depth", "2", "--time-limit", "0.01"]
    code = main([*argv, "--methods", "dp,flowoct,rbinoct"])
    out = capsys.readouterr().out
    assert code in (0, 3)
    assert code == 0 or "dp: time_limit" in out  # 3 only when dp itself did not finish


def test_a_model_the_solver_could_not_even_set_up_in_the_limit_is_not_built(monkeypatch):
    """Named methods run, but one whose model is far beyond what HiGHS sets up within the
    limit (its presolve and root preparation poll no limit) is a time_limit row with its
    warm start and the reason, never a build and an overrun."""
    data = random_dataset(45, n_samples=300, n_features=10)
    built = []
    monkeypatch.setattr(PathOCT, "build", _raising(AssertionError("must not be built")))
    real = FlowOCT.build

    def counted(self, *args, **kwargs):
        built.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(FlowOCT, "build", counted)
    comparison = compare(
        data, lam=0.01, max_depth=3, methods=("dp", "pathoct", "flowoct"), time_limit=0.05
    )
    dp = _check_dp_row(comparison, data, 0.01)
    for run in comparison.runs[1:]:
        why = METHODS[run.method].too_big(data, 3, 0.05, setup=True)
        assert why.startswith("its model has ~") and "more than HiGHS sets up in 0.05 s" in why
        assert run.status == Status.TIME_LIMIT and run.bound == -math.inf
        assert run.tree is dp.tree and run.objective == pytest.approx(dp.objective)
        assert run.result.message == (
            f"not built: {why}; it would overrun the limit before solving; the row reports "
            "its warm start"
        )
    assert not built
    cold = compare(
        data, lam=0.01, max_depth=3, methods="flowoct", time_limit=0.05, warm_start=False
    )
    (run,) = cold.runs
    assert run.status == Status.TIME_LIMIT and run.tree is None and not built


# --- item 12b: no bound says why -------------------------------------------------------------


def _stopped_without_bound(status, nodes=0, backend="highs"):
    def solve(formulation, data, *, start=None, time_limit=None, **kwargs):
        solution = Solution(
            status=status,
            has_solution=False,  # the Result below holds the start as its tree
            objective=0.5,
            lower_bound=-math.inf,
            time=9.5,
            nodes=nodes,
            backend=backend,
        )
        return Result(
            start,
            metrics.objective(start, data, lam=kwargs["lam"]),
            -math.inf,
            Status(status),
            10.0,
            formulation.name,
            backend,
            stats={"warm_start": True, "build_time": 0.5},
            solution=solution,
        )

    return solve


def test_a_mip_without_a_bound_says_why_in_its_row_and_the_reading(monkeypatch):
    module = sys.modules["odtkit._compare"]  # the package's compare is the function
    monkeypatch.setattr(module, "solve_formulation", _stopped_without_bound("time_limit"))
    data = random_dataset(37, n_samples=60, n_features=6)
    comparison = compare(data, lam=0.01, max_depth=2, methods=("dp", "flowoct"), time_limit=10)
    flow = comparison.runs[1]
    assert flow.bound == -math.inf
    why = "no bound: the root LP relaxation did not finish in the limit (9.5 s of solver time)"
    assert flow.result.message == why
    assert f"stopped (time_limit) with {why}" in comparison.reading()
    assert "bound -inf" not in comparison.reading()


def test_a_mip_without_a_valid_bound_by_its_nature_gets_no_reason(monkeypatch):
    """rbinoct_original declares no valid bound: its -inf is what it is, not a stop."""
    module = sys.modules["odtkit._compare"]  # the package's compare is the function
    monkeypatch.setattr(module, "solve_formulation", _stopped_without_bound("time_limit"))
    data = random_dataset(38, n_samples=60, n_features=6)
    comparison = compare(
        data, lam=0.01, max_depth=2, methods=("dp", "rbinoct_original"), time_limit=10
    )
    assert comparison.runs[1].result.message == ""


# --- item 12c: the default list is sized to the table ----------------------------------------


@pytest.mark.parametrize("formulation", [RBinOCT(), BinOCT(), RBinOCT(null_split=False)])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_big_m_size_estimates_are_exact(formulation, depth):
    data = random_dataset(39, n_samples=120, n_features=7)
    model = formulation.build(data, max_depth=depth, lam=0.01)
    size = formulation.estimate_size(data, depth)
    assert (size.n_vars, size.n_nonzeros) == (model.n_vars, model.n_nonzeros)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_flowoct_s_estimate_is_its_model_without_the_cuts(depth):
    data = random_dataset(40, n_samples=120, n_features=7)
    bare = FlowOCT(separation_distance=None).build(data, max_depth=depth, lam=0.01)
    size = FlowOCT().estimate_size(data, depth)
    assert (size.n_vars, size.n_nonzeros) == (bare.n_vars, bare.n_nonzeros)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_pathoct_s_estimate_bounds_its_model(depth):
    data = random_dataset(41, n_samples=200, n_features=9)
    model = PathOCT().build(data, max_depth=depth, lam=0.01)
    size = PathOCT().estimate_size(data, depth)
    assert size.n_vars >= model.n_vars and size.n_nonzeros >= model.n_nonzeros


def test_the_default_methods_leave_out_the_mips_too_big_for_the_limit():
    data = random_dataset(42, n_samples=300, n_features=10)
    comparison = compare(data, lam=0.01, max_depth=3, time_limit=0.05)
    # branch-and-price's master holds one column per tree: never too big to build
    assert [run.method for run in comparison] == ["dp", "columns"]
    assert set(comparison.left_out) == {"rbinoct", "flowoct"}
    for name, why in comparison.left_out.items():
        assert why == METHODS[name].too_big(data, 3, 0.05)
        assert "nonzeros, more than it answers in 0.05 s" in why
    assert "not run (too big for the time limit): rbinoct, flowoct" in comparison.reading()
    # generous limits run them all, and named methods always run
    assert not compare(data, lam=0.01, max_depth=1, time_limit=600).left_out
    named = compare(data, lam=0.01, max_depth=3, methods=("dp", "flowoct"), time_limit=0.05)
    assert [run.method for run in named] == ["dp", "flowoct"] and not named.left_out
    forced = compare(data, lam=0.01, max_depth=3, time_limit=0.05, methods="dp,rbinoct", sized=True)
    assert [run.method for run in forced] == ["dp"] and set(forced.left_out) == {"rbinoct"}


def test_sized_is_checked():
    data = random_dataset(43, n_samples=30, n_features=4)
    with pytest.raises(TypeError, match="sized must be True, False or None"):
        compare(data, lam=0.01, max_depth=2, sized="yes")


def test_the_cli_names_the_left_out_methods_and_how_to_force_them(capsys):
    argv = ["compare", "--dataset", "monk1", "--max-depth", "2", "--time-limit", "0.05"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    line = next(s for s in out.splitlines() if s.startswith("left out"))
    assert line.startswith(
        "left out of the default methods (too big for --time-limit 0.05 s): pathoct: its model"
    )
    assert line.endswith("run them anyway with --methods dp,columns,pathoct,flowoct,rbinoct")
    assert main([*argv, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload["left_out"]) == {"pathoct", "flowoct", "rbinoct"}
    assert [row["method"] for row in payload["rows"]] == ["dp", "columns"]
    assert all(row["wall"] >= row["time"] for row in payload["rows"])

"""The HiGHS driver: option mapping and validation, the status table, the bound rule, callbacks.

Everything every in-process HiGHS run of the library does to its ``highspy.Highs`` object lives in
``odtkit.solvers._highs_driver``; these are its unit tests. Behaviour through the backends is
tested in test_highs_backend.py, test_pulp_backend.py, test_pyomo_backend.py and
test_backend_agreement.py.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import highspy
import numpy as np
import pytest
from conftest import hard_knapsack

from odtkit.model import ModelBuilder
from odtkit.results import Status
from odtkit.solvers import SolveOptions, solve
from odtkit.solvers import _common as common
from odtkit.solvers import _highs_driver as driver
from odtkit.solvers.highs import pass_model


def knapsack(n: int = 30, m: int = 4, seed: int = 0):
    return hard_knapsack(n=n, m=m, seed=seed)


# --- options ---------------------------------------------------------------------------------


def test_defaults_prove_optimality_exactly_and_log_through_the_callback():
    opts = driver.highs_options(SolveOptions(), is_mip=True)
    assert opts == {
        "output_flag": True,
        "log_to_console": False,
        "mip_rel_gap": 0.0,
        "mip_abs_gap": 0.0,
    }


def test_every_solve_option_maps_to_its_highs_name():
    options = SolveOptions(
        time_limit=12.5,
        threads=1,
        seed=7,
        node_limit=30,
        mip_gap=0.01,
        lp_method="ipm",
        heuristics=False,
        extra={"presolve": "off", "mip_rel_gap": 0.02},
    )
    mip = driver.highs_options(options, is_mip=True)
    assert mip["time_limit"] == 12.5 and mip["threads"] == 1 and mip["random_seed"] == 7
    assert mip["mip_max_nodes"] == 30
    assert mip["mip_abs_gap"] == 1e-6  # a positive gap: not exact any more
    assert "solver" not in mip  # lp_method would switch a MIP's branch-and-bound off
    assert {k: mip[k] for k in driver.NO_HEURISTICS} == driver.NO_HEURISTICS
    # named HiGHS options come last and win
    assert mip["presolve"] == "off" and mip["mip_rel_gap"] == 0.02
    lp = driver.highs_options(options, is_mip=False)
    assert lp["solver"] == "ipm"
    # a backend that took its own keywords out of extra passes the rest
    assert "presolve" not in driver.highs_options(options, is_mip=True, extra={})


def test_heuristics_on_sets_no_heuristic_option():
    opts = driver.highs_options(SolveOptions(heuristics=True), is_mip=True)
    assert not set(driver.NO_HEURISTICS) & set(opts)


def test_apply_options_sets_values_and_converts_numpy_scalars():
    h = highspy.Highs()
    applied = driver.apply_options(
        h,
        {
            "output_flag": np.bool_(False),
            "threads": np.int64(1),
            "time_limit": np.float32(2.5),
            "presolve": "off",
        },
    )
    assert applied == {"output_flag": False, "threads": 1, "time_limit": 2.5, "presolve": "off"}
    assert type(applied["threads"]) is int and type(applied["time_limit"]) is float
    assert _option(h, "threads") == 1 and _option(h, "time_limit") == 2.5
    assert _option(h, "presolve") == "off" and _option(h, "output_flag") is False


def _option(h, key):
    value = h.getOptionValue(key)
    return value[1] if isinstance(value, tuple) else value  # newer highspy: (status, value)


@pytest.mark.parametrize(
    "key,value", [("not_a_highs_option", 1), ("presolve", "sometimes"), ("threads", "many")]
)
def test_a_rejected_option_raises_naming_it(key, value):
    with pytest.raises(ValueError, match=f"HiGHS rejected option {key}="):
        driver.apply_options(highspy.Highs(), {"output_flag": False, key: value})
    with pytest.raises(ValueError, match=key):
        driver.check_options({key: value})
    # and through every backend, before anything is solved (solve's own checks answer a
    # wrongly typed argument of its signature with TypeError)
    for backend in ("highs", "pulp", "pyomo"):
        with pytest.raises((TypeError, ValueError), match=key):
            solve(knapsack(n=4), backend=backend, **{key: value})


def test_check_options_returns_the_converted_dict():
    assert driver.check_options({"random_seed": np.int32(3)}) == {"random_seed": 3}


# --- statuses --------------------------------------------------------------------------------

#: Every HighsModelStatus this highspy has, and the Status it means.
EXPECTED_STATUS = {
    "kNotset": Status.ERROR,
    "kLoadError": Status.ERROR,
    "kModelError": Status.ERROR,
    "kPresolveError": Status.ERROR,
    "kSolveError": Status.ERROR,
    "kPostsolveError": Status.ERROR,
    "kModelEmpty": Status.ERROR,
    "kOptimal": Status.OPTIMAL,
    "kInfeasible": Status.INFEASIBLE,
    "kUnboundedOrInfeasible": None,  # depends on the columns' bounds, see below
    "kUnbounded": Status.UNBOUNDED,
    "kObjectiveBound": Status.OBJECTIVE_LIMIT,
    "kObjectiveTarget": Status.OBJECTIVE_LIMIT,
    "kTimeLimit": Status.TIME_LIMIT,
    "kIterationLimit": Status.ITERATION_LIMIT,
    "kUnknown": Status.ERROR,
    "kSolutionLimit": Status.NODE_LIMIT,
    "kInterrupt": Status.INTERRUPTED,
    "kMemoryLimit": Status.MEMORY_LIMIT,
    "kHighsInterrupt": Status.INTERRUPTED,
}


def test_the_status_table_covers_every_highs_model_status():
    members = highspy.HighsModelStatus.__members__
    # a HiGHS status added by a newer highspy must be given a meaning here, not fall to "error"
    assert set(members) <= set(EXPECTED_STATUS), set(members) - set(EXPECTED_STATUS)
    for name, member in members.items():
        expected = EXPECTED_STATUS[name]
        if expected is None:
            assert driver.status_of(member, bounded=True) == Status.INFEASIBLE
            assert driver.status_of(member, bounded=False) == Status.INFEASIBLE_OR_UNBOUNDED
        else:
            assert driver.status_of(member, bounded=True) == expected, name


def test_an_interrupt_request_overrides_every_status_but_a_proof():
    S = highspy.HighsModelStatus
    for member in S.__members__.values():
        got = driver.status_of(member, bounded=True, interrupted=True)
        if member in (S.kOptimal, S.kInfeasible, S.kUnboundedOrInfeasible):
            assert got in (Status.OPTIMAL, Status.INFEASIBLE)
        else:
            assert got == Status.INTERRUPTED


def test_infeasible_or_unbounded_looks_at_the_column_bounds():
    assert common.infeasible_or_unbounded(knapsack(n=3)) == Status.INFEASIBLE
    b = ModelBuilder("free")
    b.add_vars("y", shape=2, kind="integer", lb=0.0, ub=[1.0, np.inf])
    assert common.infeasible_or_unbounded(b.build()) == Status.INFEASIBLE_OR_UNBOUNDED


# --- the bound rule --------------------------------------------------------------------------

INF = float("inf")


@pytest.mark.parametrize(
    "status,is_mip,has_solution,objective,raw,expected,noted",
    [
        # proofs
        (Status.INFEASIBLE, True, False, np.nan, 3.0, INF, False),
        (Status.OPTIMAL, True, True, 5.0, 5.0, 5.0, False),
        (Status.OPTIMAL, True, True, 5.0, 4.9999, 4.9999, False),
        (Status.OPTIMAL, True, True, 5.0, None, 5.0, False),  # no bound reported: the objective
        (Status.OPTIMAL, True, True, 5.0, -INF, 5.0, False),
        (Status.OPTIMAL, False, True, 5.0, 0.0, 5.0, False),  # LP: strong duality, raw ignored
        # an error proves nothing, whatever the info held
        (Status.ERROR, True, False, np.nan, 0.0, -INF, False),
        # limits: the dual bound when there is one
        (Status.TIME_LIMIT, True, True, 5.0, 3.0, 3.0, False),
        (Status.TIME_LIMIT, True, False, np.nan, 3.0, 3.0, False),
        (Status.NODE_LIMIT, True, True, 5.0, None, -INF, False),
        (Status.INTERRUPTED, True, True, 5.0, -INF, -INF, False),
        (Status.INTERRUPTED, False, True, 5.0, None, -INF, False),
        # never above the incumbent (beyond the tolerance)
        (Status.TIME_LIMIT, True, True, 5.0, 5.0 + 1e-10, 5.0 + 1e-10, False),
        (Status.INTERRUPTED, True, True, 5.0, 6.0, -INF, True),
        (Status.TIME_LIMIT, True, True, -1e6, -1e6 + 1.0, -INF, True),
        (Status.OPTIMAL, True, True, 5.0, 6.0, 5.0, False),
    ],
)
def test_final_bound(status, is_mip, has_solution, objective, raw, expected, noted):
    bound, note = common.final_bound(
        status, is_mip=is_mip, has_solution=has_solution, objective=objective, raw_bound=raw
    )
    assert bound == expected
    assert (note is not None) == noted
    if noted:
        assert "above the incumbent" in note


def test_final_trace_ends_with_the_final_row_unless_switched_off():
    rows = [(0.1, 9.0, 1.0), (0.2, 8.0, 2.0)]
    tr = common.final_trace(rows, 0.3, 7.0, 7.0, True)
    assert tr.to_numpy().tolist() == [[0.1, 9.0, 1.0], [0.2, 8.0, 2.0], [0.3, 7.0, 7.0]]
    assert rows == [(0.1, 9.0, 1.0), (0.2, 8.0, 2.0)]  # the session's rows are not changed
    assert common.final_trace(None, 0.3, 7.0, 7.0, True).to_numpy().tolist() == [[0.3, 7.0, 7.0]]
    # no solution: the incumbent is +inf; nothing at all: no row
    assert common.final_trace(None, 0.3, np.nan, 2.0, False).to_numpy().tolist() == [
        [0.3, INF, 2.0]
    ]
    assert common.final_trace(None, 0.3, np.nan, -INF, False).empty
    assert common.final_trace(rows, 0.3, 7.0, 7.0, True, enabled=False).empty


def test_idle_values_are_zero_clipped_into_the_bounds():
    b = ModelBuilder("idle")
    b.add_vars("a", shape=3, kind="continuous", lb=[-1.0, 2.0, -np.inf], ub=[1.0, 5.0, -3.0])
    np.testing.assert_array_equal(common.idle_values(b.build()), [0.0, 2.0, -3.0])


def test_feasible_or_none():
    model = knapsack(n=3, m=1)
    assert common.feasible_or_none(model, np.zeros(3)) is not None
    assert common.feasible_or_none(model, np.full(3, np.nan)) is None
    assert common.feasible_or_none(model, np.full(3, 5.0)) is None


# --- a run: attach and read ------------------------------------------------------------------


def _loaded(model, **options):
    h = highspy.Highs()
    driver.apply_options(h, driver.highs_options(SolveOptions(**options), model.is_mip))
    pass_model(h, model, model.integrality.astype(np.int32))
    return h


def test_read_of_a_run_that_never_happened_reports_an_error_without_a_bound():
    model = knapsack()
    h = _loaded(model)  # never run: HiGHS's info holds defaults (mip_dual_bound 0)
    out = driver.read(h, model, want_duals=False)
    assert out.status == Status.ERROR and not out.has_solution
    assert out.bound == -INF and out.nodes == 0 and np.isnan(out.objective)


def test_attach_collects_log_and_trace_and_restores_everything():
    model = knapsack()
    lines: list[str] = []
    h = _loaded(model)
    before = signal.getsignal(signal.SIGINT)
    with driver.attach(h, SolveOptions(log_callback=lines.append), is_mip=True) as session:
        assert signal.getsignal(signal.SIGINT) == session.request_stop
        h.run()
    assert signal.getsignal(signal.SIGINT) is before
    # every callback the session installed is removed again
    for event in (
        h.cbLogging,
        h.cbMipImprovingSolution,
        h.cbMipLogging,
        h.cbSimplexInterrupt,
        h.cbIpmInterrupt,
        h.cbMipInterrupt,
    ):
        assert not event.callbacks
    out = driver.read(h, model, session, want_duals=False)
    assert out.status == Status.OPTIMAL and out.log and "".join(lines) == out.log
    assert len(out.trace) >= 2 and out.trace["incumbent"].iloc[-1] == out.objective
    assert out.objective == pytest.approx(solve(model).objective)


def test_the_offset_the_solver_does_not_know_is_added_to_every_value():
    model = knapsack()
    ref = solve(model)
    h = _loaded(model)
    h.changeObjectiveOffset(0.0)  # what PuLP does: the constant never reaches HiGHS
    with driver.attach(h, SolveOptions(), is_mip=True, offset=model.offset) as session:
        h.run()
    out = driver.read(h, model, session, want_duals=False)
    assert out.objective == pytest.approx(ref.objective)
    assert out.bound == pytest.approx(ref.lower_bound)
    finite = out.trace["incumbent"][np.isfinite(out.trace["incumbent"])]
    assert finite.iloc[0] >= ref.objective - 1e-9 and finite.iloc[-1] == pytest.approx(
        ref.objective
    )


def test_attach_outside_the_main_thread_leaves_signals_alone():
    model = knapsack()
    seen: dict = {}

    def work() -> None:
        h = _loaded(model)
        with driver.attach(h, SolveOptions(), is_mip=True):
            # no SIGINT handler can be installed here, so nothing polls for one
            seen["interrupt_hooks"] = len(h.cbMipInterrupt.callbacks)
            h.run()
        seen["status"] = driver.read(h, model, want_duals=False).status

    before = signal.getsignal(signal.SIGINT)
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen == {"interrupt_hooks": 0, "status": Status.OPTIMAL}
    assert signal.getsignal(signal.SIGINT) is before


def test_should_stop_is_polled_and_interrupts():
    model = knapsack(n=60, m=8)
    calls: list[int] = []

    def stop() -> bool:
        calls.append(1)
        return True

    h = _loaded(model)
    with driver.attach(h, SolveOptions(should_stop=stop), is_mip=True) as session:
        h.run()
    out = driver.read(h, model, session, want_duals=False)
    assert calls and session.interrupted
    assert out.status == Status.INTERRUPTED
    assert out.bound <= solve(model).objective + 1e-9


@pytest.mark.parametrize("backend", ["highs", "pulp", "pyomo"])
def test_a_change_of_thread_count_in_one_thread_still_runs(backend):
    """HiGHS sizes a per-thread scheduler at its first run and refuses a later run asking for
    another count ('error' before it starts) unless the driver resets it."""
    model = knapsack(n=40, m=5, seed=2)
    ref = solve(model)
    for threads in (None, 1, 2, None, 1):
        res = solve(model, backend=backend, threads=threads, node_limit=5)
        assert res.status in ("optimal", "node_limit"), (threads, res, res.log[-300:])
        assert res.has_solution and res.lower_bound <= ref.objective + 1e-9


@pytest.mark.parametrize("backend", ["highs", "pyomo", "pulp"])
def test_no_highs_banner_unless_asked(backend):
    # HiGHS prints a copyright banner from C when a process creates its first Highs object;
    # users saw it above every table (issue 12)
    code = (
        "from odtkit import datasets, solve_formulation\n"
        "from odtkit.formulations import RBinOCT\n"
        "r = solve_formulation(RBinOCT(), datasets.load('monk1'), "
        f"backend={backend!r}, lam=0.01, max_depth=1)\n"
        "print('status', r.status)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert "status optimal" in out
    assert "HiGHS" not in out and "Copyright" not in out, out


def test_optimal_without_a_feasible_point_is_an_error():
    # a solver that prints "optimal" but hands back a point that fails the model's own check
    # has failed: never status optimal with has_solution False (seen with CBC's LP files)
    model = hard_knapsack()
    readout = common.conclude(model, "optimal", None, float("nan"), time=0.1, version="x")
    assert readout.status == Status.ERROR and not readout.has_solution
    assert "not feasible" in readout.stats["error"]

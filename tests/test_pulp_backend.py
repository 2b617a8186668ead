"""The PuLP backend: the LpProblem mirrors the IR, HiGHS and CBC through PuLP, logs, capabilities.

Cross-backend optimum / status agreement lives in test_backend_agreement.py.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pulp
import pytest
from conftest import hard_knapsack, needs_cbc

from odtkit.model import Model, ModelBuilder
from odtkit.solvers import available_backends, backend_capabilities, solve
from odtkit.solvers.pulp import (
    SOLVER_CAPABILITIES,
    PulpBackend,
    parse_cbc_log,
    parse_highs_log,
    to_pulp,
)


def ranged() -> Model:
    """Rows of every kind (==, <=, >=, ranged, free), an idle column, a 2-d group, an offset."""
    b = ModelBuilder("ranged")
    x = b.add_vars("x", shape=(2, 2), kind="integer", lb=0.0, ub=3.0)
    y = b.add_vars("y", shape=2, kind="continuous", lb=-1.0, ub=np.inf)
    b.add_vars("idle", shape=1, kind="continuous", lb=2.0, ub=4.0)
    xi = x.index.ravel()
    b.add_constraints("eq", [0, 0], [xi[0], xi[1]], [1.0, 1.0], "==", [2.0])
    b.add_constraints(
        "ineq",
        [0, 0, 1, 1],
        [xi[2], y.index[0], xi[3], y.index[1]],
        [1.0, 1.0, 2.0, -1.0],
        ["<=", ">="],
        [2.5, -0.5],
    )
    b.add_constraints("rng", [0, 0], [xi[0], xi[3]], [1.0, 1.0], ">=", [1.0])
    b.add_constraints("free", [0], [xi[2]], [1.0], "<=", [100.0])
    b.add_objective(xi, [1.0, -1.0, -2.0, 0.5])
    b.add_objective(y.index, [1.0, 0.25])
    b.set_objective_offset(3.25)
    m = b.build()
    upper = m.row_upper.copy()
    upper[m.constraints["rng"].start] = 3.0  # 1 <= x00 + x11 <= 3
    upper[m.constraints["free"].start] = np.inf  # no bound at all
    return dataclasses.replace(m, row_upper=upper)


def test_registered_with_capabilities_per_solver():
    assert "pulp" in available_backends()
    assert backend_capabilities("pulp") == SOLVER_CAPABILITIES["highs"]
    assert SOLVER_CAPABILITIES["highs"] == {
        "mip_start",
        "dual_bound",
        "trace",
        "interrupt",
        "duals",
        "lp_method",
        "heuristics_off",
    }
    assert "trace" not in SOLVER_CAPABILITIES["cbc"]
    assert PulpBackend.solver_available("highs") and PulpBackend.solver_available("HiGHS")
    assert PulpBackend.version() == pulp.__version__


def test_lp_problem_mirrors_rows_columns_names_and_offset():
    model = ranged()
    built = to_pulp(model)
    prob = built.problem
    assert [v.name for v in built.variables] == model.column_names()
    names = [c.name for c in built.constraints]
    assert names == ["eq_0", "ineq_0", "ineq_1", "rng_0_lo", "rng_0_hi"]  # free row omitted
    np.testing.assert_array_equal(built.row_of, [0, 1, 2, 3, 3])
    assert built.constraints[0].sense == pulp.LpConstraintEQ
    assert built.constraints[1].sense == pulp.LpConstraintLE
    assert built.constraints[3].sense == pulp.LpConstraintGE
    assert prob.objective.constant == pytest.approx(3.25)
    assert not built.used[model.vars["idle"].start] and built.used[: model.vars["idle"].start].all()
    # expressions evaluate to A @ point, objective to c.x + offset
    rng = np.random.default_rng(1)
    point = rng.random(model.n_vars)
    for v, val in zip(built.variables, point, strict=True):
        v.varValue = float(val)
    act = np.array([c.value() - c.constant for c in built.constraints])
    np.testing.assert_allclose(act, (model.A @ point)[built.row_of])
    assert prob.objective.value() == pytest.approx(model.objective_value(point))


def test_pulp_written_lp_file_reread_by_highspy_has_the_same_optimum(tmp_path):
    """Independent check of the translation: PuLP's own LP writer, HiGHS's own reader."""
    import highspy

    model = ranged()
    path = tmp_path / "ranged.lp"
    to_pulp(model).problem.writeLP(str(path))
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    ref = solve(model, backend="highs")
    # PuLP's LP writer (like its HiGHS interface) drops the objective constant
    assert "3.25" not in path.read_text()
    assert h.getInfo().objective_function_value + model.offset == pytest.approx(ref.objective)


def test_highs_through_pulp_reports_offset_bound_values_and_idle_columns():
    model = ranged()
    ref = solve(model, backend="highs")
    res = solve(model, backend="pulp")
    assert res.solver == "pulp/HiGHS" and res.backend == "pulp" and res.solver_version
    assert res.status == "optimal" and res.objective == pytest.approx(ref.objective)
    assert res.lower_bound == pytest.approx(res.objective)
    assert res.values["idle"][0] == 2.0  # not in PuLP's model: 0 clipped into [2, 4]
    assert model.check(res.x).empty
    assert set(res.timings) == {"build", "transfer", "solve", "read"}
    assert res.time == res.timings["solve"]


def test_limits_are_statuses():
    model = hard_knapsack()
    res = solve(model, backend="pulp", time_limit=0.1)
    assert res.status == "time_limit" and res.lower_bound > -np.inf
    if res.has_solution:
        assert res.lower_bound <= res.objective + 1e-9 and model.check(res.x).empty
    res = solve(model, backend="pulp", node_limit=2)
    assert res.status == "node_limit" and res.nodes >= 1  # PuLP itself has no entry for this


def test_should_stop_interrupts_with_status_interrupted():
    model = hard_knapsack()
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 5

    res = solve(model, backend="pulp", should_stop=stop)
    assert res.status == "interrupted" and calls
    if res.has_solution:
        assert model.check(res.x).empty and res.lower_bound <= res.objective + 1e-9


def test_lp_duals_and_methods_match_the_highs_backend():
    model = ranged().relaxed()
    for method in ("simplex", "ipm"):
        res = solve(model, backend="pulp", lp_method=method, duals=True)
        ref = solve(model, backend="highs", lp_method=method, duals=True)
        assert res.objective == pytest.approx(ref.objective)
        # the ranged row's two PuLP rows are summed back into one IR dual
        np.testing.assert_allclose(res.reduced_costs, model.c - model.A.T @ res.duals, atol=1e-7)


def test_log_goes_to_callback_or_stdout_only_when_asked(capsys):
    lines: list[str] = []
    res = solve(ranged(), backend="pulp", log_callback=lines.append)
    assert res.log and "".join(lines) == res.log
    assert capsys.readouterr().out == ""
    solve(ranged(), backend="pulp", verbose=True)
    assert "HiGHS" in capsys.readouterr().out


def test_capabilities_unknown_solvers_and_bad_options_fail_clearly():
    model = ranged()
    with pytest.raises(ValueError, match="solver must be one of"):
        solve(model, backend="pulp", solver="gurobi")
    with pytest.raises(ValueError, match="HiGHS rejected option"):
        solve(model, backend="pulp", not_a_highs_option=3)
    if not PulpBackend.solver_available("highs_cmd"):
        with pytest.raises(ValueError, match="'highs_cmd' is not available"):
            solve(model, backend="pulp", solver="highs_cmd")
    with pytest.raises(ValueError, match="no executable at"):
        solve(model, backend="pulp", solver="cbc", path="/nonexistent/cbc")


@needs_cbc
def test_cbc_refuses_what_it_cannot_do_and_accepts_the_rest():
    model = hard_knapsack(n=30, m=4, seed=1)
    with pytest.raises(ValueError, match="'pulp'.*'cbc'.*trace"):
        solve(model, backend="pulp", solver="cbc", trace=True)
    with pytest.raises(ValueError, match="lp_method"):
        solve(model.relaxed(), backend="pulp", solver="cbc", lp_method="simplex")
    ref = solve(model, backend="highs")
    res = solve(
        model, backend="pulp", solver="PULP_CBC_CMD", threads=1, seed=5, time_limit=30, cuts="off"
    )
    assert res.solver == "pulp/CBC" and res.status == "optimal"
    assert res.objective == pytest.approx(ref.objective) and res.lower_bound == res.objective
    assert "-cuts off" in res.log or "cuts off" in res.log
    assert res.solver_version.count(".") == 2


def _refuse_to_run(self, model, options):  # pragma: no cover - must never be reached
    raise AssertionError("the registry must refuse before the backend runs")


@needs_cbc
def test_the_registry_refuses_what_cbc_lacks_before_the_backend_runs(monkeypatch):
    monkeypatch.setattr(PulpBackend, "solve", _refuse_to_run)
    model = hard_knapsack(n=10, m=2)
    for name in ("cbc", "COIN_CMD"):
        assert backend_capabilities("pulp", name) == SOLVER_CAPABILITIES["cbc"]
        with pytest.raises(
            ValueError,
            match=rf"^backend 'pulp' with solver '{name}' lacks the capability 'trace' needed "
            rf"for trace=True; its capabilities are "
            rf"\['dual_bound', 'duals', 'interrupt', 'mip_start'\]$",
        ):
            solve(model, backend="pulp", solver=name, trace=True)


def test_the_registry_refuses_what_highs_cmd_lacks_before_the_backend_runs(monkeypatch):
    monkeypatch.setattr(PulpBackend, "solve", _refuse_to_run)
    model = hard_knapsack(n=10, m=2)
    if PulpBackend.solver_available("highs_cmd"):  # pragma: no cover - needs the highs binary
        assert backend_capabilities("pulp", "highs_cmd") == SOLVER_CAPABILITIES["highs_cmd"]
        with pytest.raises(
            ValueError, match="^backend 'pulp' with solver 'highs_cmd' lacks the capability 'trace'"
        ):
            solve(model, backend="pulp", solver="highs_cmd", trace=True)
    else:
        # without the executable there is nothing to have capabilities: the solver is refused
        for call in (
            lambda: backend_capabilities("pulp", "highs_cmd"),
            lambda: solve(model, backend="pulp", solver="highs_cmd", trace=True),
        ):
            with pytest.raises(ValueError, match="'highs_cmd' is not available"):
                call()
    # solver=None is the in-process HiGHS
    assert backend_capabilities("pulp") == backend_capabilities("pulp", "highs")
    with pytest.raises(ValueError, match="solver must be one of"):
        backend_capabilities("pulp", "gurobi")


@needs_cbc
def test_cbc_bound_and_nodes_come_from_its_log_with_the_offset_added():
    model = hard_knapsack(n=60, m=8, seed=0)
    res = solve(model, backend="pulp", solver="cbc", node_limit=3)
    assert res.status == "node_limit" and res.has_solution
    assert res.nodes >= 1
    ref = solve(model, backend="highs")
    assert res.lower_bound <= ref.objective + 1e-6 <= res.objective + 2e-6
    parsed = parse_cbc_log(res.log)
    assert res.lower_bound == pytest.approx(parsed["bound"] + model.offset)


CBC_TIME_LIMIT_LOG = """
Cbc0010I After 100 nodes, 40 on tree, -2392 best solution, best possible -2404.7 (0.30 seconds)
Result - Stopped on time limit

Objective value:                -2392.00000000
Lower bound:                    -2404.700
Gap:                            0.01
Enumerated nodes:               118
Total iterations:               2411
"""


def test_log_parsers_on_recorded_and_live_logs():
    got = parse_cbc_log(CBC_TIME_LIMIT_LOG)
    assert got == {"status": "time_limit", "objective": -2392.0, "bound": -2404.7, "nodes": 118}
    assert parse_cbc_log("Result - Linear relaxation infeasible\n")["status"] == "infeasible"
    assert parse_cbc_log("Pre-processing says infeasible or unbounded\n")["status"] == (
        "infeasible_or_unbounded"
    )
    assert parse_cbc_log("Optimal - objective value -3.5\n")["status"] == "optimal"
    # the HiGHS parser (for HiGHS_CMD) on a real HiGHS log, checked against highspy's own numbers
    res = solve(hard_knapsack(), backend="highs", node_limit=3)
    got = parse_highs_log(res.log)
    assert got["status"] == res.status == "node_limit"
    assert got["objective"] == pytest.approx(res.objective)
    assert got["bound"] == pytest.approx(res.lower_bound)
    assert got["nodes"] == res.nodes
    lp = solve(hard_knapsack().relaxed(), backend="highs")
    got = parse_highs_log(lp.log)
    assert got["status"] == "optimal" and got["objective"] == pytest.approx(lp.objective)


@pytest.mark.skipif(
    not PulpBackend.solver_available("highs_cmd"), reason="no highs executable (optional solver)"
)
def test_highs_cmd_solves_and_reads_its_log():  # pragma: no cover - needs the highs binary
    model = hard_knapsack(n=30, m=4, seed=1)
    ref = solve(model, backend="highs")
    res = solve(model, backend="pulp", solver="highs_cmd")
    assert res.status == "optimal" and res.objective == pytest.approx(ref.objective)


@needs_cbc
def test_cbc_lp_values_read_from_its_file_count_as_a_solution():
    # CBC's solution file carries printed precision: on RBinOCT's big-M rows (coefficients
    # ~1000) that was a 1e-6 violation, and the LP came back "optimal" without a solution
    from odtkit import datasets
    from odtkit.formulations import RBinOCT

    model = RBinOCT().build(datasets.load("tic-tac-toe"), max_depth=2, lam=0.01)
    cbc = solve(model, backend="pulp", solver="cbc", relax=True)
    highs = solve(model, relax=True)
    assert cbc.status == "optimal" and cbc.has_solution
    assert cbc.objective == pytest.approx(highs.objective, abs=1e-6)


def test_a_killed_cbc_run_gives_the_last_bound_its_log_printed():
    """CBC killed before its summary (it reads no signal in preprocessing): the bound is the
    last one printed on the way, never one of a finished run's intermediate lines."""
    killed_in_tree = (
        "Continuous objective value is 0.007 - 4.0 seconds\n"
        "Cbc0010I After 0 nodes, 1 on tree, 0.3 best solution, best possible 0.0071 (5 s)\n"
    )
    assert parse_cbc_log(killed_in_tree) == {
        "status": None,
        "objective": None,
        "bound": 0.0071,
        "nodes": None,
    }
    killed_at_root = "Continuous objective value is 0.007 - 40.46 seconds\n"
    assert parse_cbc_log(killed_at_root)["bound"] == 0.007
    finished = killed_in_tree + "Result - Optimal solution found\n\nObjective value: 0.25\n"
    assert parse_cbc_log(finished)["bound"] is None  # optimal: the bound is the objective

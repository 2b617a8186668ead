"""The Pyomo backend: the ConcreteModel mirrors the IR, solver choice, options and capabilities.

Cross-backend optimum / status agreement lives in test_backend_agreement.py.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pyomo.environ as pe
import pytest
from conftest import CBC, hard_knapsack

from odtkit.model import Model, ModelBuilder
from odtkit.solvers import CAPABILITIES, available_backends, backend_capabilities, solve
from odtkit.solvers.pyomo import PyomoBackend, to_pyomo


def toy() -> Model:
    """2-d binary group, 1-d continuous group with an infinite bound, three row senses, offset."""
    b = ModelBuilder("toy")
    x = b.add_vars("x", shape=(2, 3), kind="binary")
    y = b.add_vars(
        "y", shape=2, kind="continuous", lb=np.array([-5.0, 0.0]), ub=np.array([5.0, np.inf])
    )
    b.add_constraints("pick", np.repeat([0, 1], 3), x.index.ravel(), 1.0, "==", [1.0, 1.0])
    b.add_constraints(
        "mix",
        [0, 0, 1, 1],
        [y.index[0], x.index[0, 0], y.index[1], x.index[1, 2]],
        [1.0, 2.0, 1.0, -1.0],
        ["<=", ">="],
        [3.0, -1.0],
    )
    b.add_objective(x.index.ravel(), [3.0, 1.0, 2.0, -1.0, 2.0, 5.0])
    b.add_objective(y.index, [-1.0, 1.0])
    b.set_objective_offset(0.5)
    return b.build()


def test_registered_with_the_default_solver_capabilities():
    assert "pyomo" in available_backends()
    # appsi_highs runs through the HiGHS driver: callbacks on its highspy object give it all
    assert backend_capabilities("pyomo") == CAPABILITIES
    assert backend_capabilities("pyomo", "appsi_highs") == CAPABILITIES
    # the newer pyomo.contrib.solver HiGHS interface has no MIP start in this Pyomo, and sets up
    # its highspy object inside solve() (no callbacks)
    assert backend_capabilities("pyomo", "highs") == {
        "dual_bound",
        "duals",
        "lp_method",
        "heuristics_off",
    }
    assert PyomoBackend.version()


def test_concrete_model_mirrors_groups_blocks_bounds_and_offset():
    model = toy()
    built = to_pyomo(model)
    m = built.model
    assert isinstance(m.x, pe.Var) and isinstance(m.y, pe.Var)
    assert set(m.x.keys()) == {(i, j) for i in range(2) for j in range(3)}
    assert set(m.y.keys()) == {0, 1}
    assert all(v.domain is pe.Binary for v in m.x.values())
    assert all(v.domain is pe.Reals for v in m.y.values())
    assert (m.y[0].lb, m.y[0].ub, m.y[1].lb, m.y[1].ub) == (-5.0, 5.0, 0.0, None)
    assert len(m.pick) == 2 and len(m.mix) == 2
    assert m.pick[0].equality and m.pick[0].upper == 1.0
    assert m.mix[0].upper == 3.0 and m.mix[0].lower is None
    assert m.mix[1].lower == -1.0 and m.mix[1].upper is None
    # IR column order: variables[j] is column j, in C order within each group
    assert built.variables[model.vars["x"].index[1, 2]] is m.x[1, 2]
    assert built.variables[model.vars["y"].index[1]] is m.y[1]
    # objective = c.x + offset at any point
    rng = np.random.default_rng(0)
    point = rng.random(model.n_vars)
    for v, val in zip(built.variables, point, strict=True):
        v.set_value(float(val), skip_validation=True)
    assert pe.value(m.objective) == pytest.approx(model.objective_value(point))
    # row activities match A @ point
    act = np.array([pe.value(c.body) for c in built.constraints])
    np.testing.assert_allclose(act, model.A @ point)


def test_pyomo_written_lp_file_reread_by_highspy_has_the_same_optimum(tmp_path):
    """An independent check of the translation: Pyomo's own LP writer, HiGHS's own reader."""
    import highspy

    model = toy()
    built = to_pyomo(model)
    path = tmp_path / "toy.lp"
    built.model.write(str(path), format="lp")
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    ref = solve(model, backend="highs")
    assert h.getInfo().objective_function_value == pytest.approx(ref.objective)


def test_name_collisions_and_free_rows_are_handled():
    b = ModelBuilder("clash")
    obj = b.add_vars("objective", shape=2, kind="integer", lb=0, ub=3)
    b.add_constraints("objective", [0, 0], obj.index, [1.0, 1.0], ">=", [2.0])
    b.add_constraints("spare", [0], [obj.index[0]], [1.0], "<=", [10.0])
    b.add_objective(obj.index, [1.0, 2.0])
    m = b.build()
    upper = m.row_upper.copy()
    upper[m.constraints["spare"].start] = np.inf  # a free row: no finite bound at all
    m = dataclasses.replace(m, row_upper=upper)
    built = to_pyomo(m)
    names = {c.name for c in built.model.component_objects()}
    assert {"objective", "objective_con", "objective_obj", "spare"} <= names
    assert built.constraints[m.constraints["spare"].start] is None
    res = solve(m, backend="pyomo", duals=None)
    assert res.status == "optimal" and res.objective == pytest.approx(2.0)
    lp = solve(m.relaxed(), backend="pyomo", duals=True)
    assert lp.duals[m.constraints["spare"].start] == 0.0


def test_default_result_fields():
    model = toy()
    res = solve(model, backend="pyomo")
    ref = solve(model, backend="highs")
    assert res.solver == "pyomo/appsi_highs" and res.backend == "pyomo"
    assert res.solver_version.count(".") == 2
    assert res.objective == pytest.approx(ref.objective)
    assert set(res.timings) == {"build", "transfer", "solve", "read"}
    assert all(t >= 0 for t in res.timings.values())
    assert res.time == res.timings["solve"]
    # the trace ends with the final (time, incumbent, bound) row
    assert res.trace[["incumbent", "bound"]].iloc[-1].tolist() == pytest.approx(
        [res.objective, res.objective]
    )
    assert res.values["x"].shape == (2, 3)
    np.testing.assert_allclose(res.values["x"], ref.values["x"])


def test_time_limit_is_a_status_and_keeps_incumbent_and_bound():
    model = hard_knapsack()
    res = solve(model, backend="pyomo", time_limit=0.1)
    assert res.status == "time_limit"
    assert res.lower_bound > -np.inf  # dual_bound: the root LP bound at least
    if res.has_solution:
        assert model.check(res.x).empty and res.lower_bound <= res.objective + 1e-9
        assert res.gap >= 0


def test_node_count_and_options_reach_highs():
    model = hard_knapsack(n=40, m=5, seed=2)
    res = solve(model, backend="pyomo", node_limit=5, threads=1, seed=3)
    assert res.status in ("node_limit", "optimal")
    assert res.nodes >= 1
    ref = solve(model, backend="highs")
    full = solve(model, backend="pyomo", mip_rel_gap=0.0, presolve="on")
    assert full.objective == pytest.approx(ref.objective)


def test_lp_method_and_duals_on_the_relaxation():
    model = toy().relaxed()
    for method in ("simplex", "ipm"):
        res = solve(model, backend="pyomo", lp_method=method, duals=True)
        ref = solve(model, backend="highs", lp_method=method, duals=True)
        assert res.objective == pytest.approx(ref.objective)
        assert res.duals.shape == (model.n_constraints,)
        assert res.reduced_costs.shape == (model.n_vars,)
        # reduced costs are consistent with the row duals: d = c - A.T y
        np.testing.assert_allclose(res.reduced_costs, model.c - model.A.T @ res.duals, atol=1e-7)


def test_log_is_collected_and_forwarded_not_printed(capsys):
    lines: list[str] = []
    res = solve(toy(), backend="pyomo", log_callback=lines.append)
    assert res.log and "HiGHS" in res.log
    assert lines and "".join(lines) == res.log
    assert "HiGHS" not in capsys.readouterr().out


def test_warm_start_is_accepted_and_checked():
    model = toy()
    start = {"x": np.array([[0, 1, 0], [1, 0, 0]]), "y": np.array([3.0, 0.0])}
    assert model.check(start).empty
    res = solve(model, backend="pyomo", start=start)
    assert res.status == "optimal"
    with pytest.warns(RuntimeWarning, match="violates"):
        solve(model, backend="pyomo", start={"x": np.ones((2, 3)), "y": np.zeros(2)})


def test_capabilities_are_enforced_per_solver():
    model = toy()
    with pytest.raises(ValueError, match="pyomo.*'highs'.*mip_start"):
        solve(
            model,
            backend="pyomo",
            solver="highs",
            start=np.zeros(model.n_vars),
            start_check="ignore",
        )
    with pytest.raises(ValueError, match="pyomo.*'highs'.*trace"):
        solve(model, backend="pyomo", solver="highs", trace=True)
    with pytest.raises(ValueError, match="pyomo.*'highs'.*interrupt"):
        solve(model, backend="pyomo", solver="highs", should_stop=lambda: False)
    # appsi_highs (the default) has them: callbacks on its highspy object
    res = solve(model, backend="pyomo", trace=True, should_stop=lambda: False)
    assert res.status == "optimal"


def test_unknown_or_missing_solvers_and_bad_options_fail_clearly():
    model = toy()
    with pytest.raises(ValueError, match="not a Pyomo solver name|not available"):
        solve(model, backend="pyomo", solver="no_such_solver_xyz")
    with pytest.raises(ValueError, match="no_such_binary"):
        solve(model, backend="pyomo", solver="cbc", executable="/nonexistent/no_such_binary")
    with pytest.raises(ValueError, match="HiGHS rejected option"):
        solve(model, backend="pyomo", not_a_highs_option=1)
    glpk = pe.SolverFactory("glpk")
    if not glpk.available(exception_flag=False):
        with pytest.raises(ValueError, match="'glpk' is not available"):
            solve(model, backend="pyomo", solver="glpk")


@pytest.mark.skipif(CBC is None, reason="no CBC binary (optional solver)")
def test_classic_solver_by_name_with_mapped_options():
    model = hard_knapsack(n=30, m=4, seed=1)
    ref = solve(model, backend="highs")
    res = solve(
        model, backend="pyomo", solver="cbc", executable=CBC, threads=1, seed=2, time_limit=30
    )
    assert res.solver == "pyomo/cbc" and res.status == "optimal"
    assert res.objective == pytest.approx(ref.objective)
    assert res.lower_bound == res.objective  # no dual bound capability: proven only when optimal
    assert "dual_bound" not in backend_capabilities("pyomo", "cbc", executable=CBC)
    with pytest.raises(ValueError, match="lp_method"):
        solve(model.relaxed(), backend="pyomo", solver="cbc", executable=CBC, lp_method="simplex")

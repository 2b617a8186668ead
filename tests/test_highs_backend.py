"""The highspy backend and the registry: statuses, bounds, starts, limits, traces, LP duals."""

from __future__ import annotations

import itertools
import os
import signal
import warnings

import numpy as np
import pytest
from conftest import SigintOnce

from odtkit.model import Model, ModelBuilder
from odtkit.results import TRACE_COLUMNS
from odtkit.solvers import (
    Backend,
    Solution,
    available_backends,
    backend_capabilities,
    register_backend,
    solve,
)


def knapsack_cover(
    n: int = 24, m: int = 16, seed: int = 0
) -> tuple[Model, np.ndarray, np.ndarray, np.ndarray]:
    """min c.x + 1.5  s.t.  W x >= W.sum(1)/2 (a multi-dimensional covering problem)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder("cover")
    x = b.add_vars("x", shape=n, kind="binary")
    W = rng.integers(1, 20, size=(m, n)).astype(float)
    rhs = W.sum(axis=1) / 2
    b.add_constraints("cap", np.repeat(np.arange(m), n), np.tile(x.index, m), W.ravel(), ">=", rhs)
    c = rng.integers(5, 30, size=n).astype(float)
    b.add_objective(x.index, c)
    b.set_objective_offset(1.5)
    return b.build(), W, rhs, c


def brute_force_cover(W: np.ndarray, rhs: np.ndarray, c: np.ndarray) -> float:
    best = np.inf
    for bits in itertools.product((0.0, 1.0), repeat=c.size):
        x = np.array(bits)
        if np.all(W @ x >= rhs - 1e-9):
            best = min(best, c @ x)
    return best + 1.5


def test_highs_is_registered_with_all_capabilities():
    assert "highs" in available_backends()
    assert {
        "mip_start",
        "dual_bound",
        "trace",
        "interrupt",
        "duals",
        "lp_method",
    } <= backend_capabilities("highs")


def test_optimum_matches_brute_force_and_offset_is_reported():
    model, W, rhs, c = knapsack_cover(n=12, m=6, seed=3)
    res = solve(model)
    assert res.status == "optimal" and res.has_solution
    assert res.objective == pytest.approx(brute_force_cover(W, rhs, c), abs=1e-9)
    assert res.lower_bound == pytest.approx(res.objective, abs=1e-9) and res.gap == pytest.approx(
        0, abs=1e-9
    )
    assert model.check(res.x).empty
    assert model.objective_value(res.x) == pytest.approx(res.objective)
    assert res.values["x"].shape == (12,)
    assert res.solver == "highs" and res.backend == "highs" and res.solver_version
    res.raise_if_not_optimal()


def test_trace_has_the_search_core_columns_and_is_monotone():
    model, *_ = knapsack_cover()
    res = solve(model)
    assert tuple(res.trace.columns) == TRACE_COLUMNS
    assert len(res.trace) >= 2
    inc = res.trace["incumbent"].to_numpy()
    bnd = res.trace["bound"].to_numpy()
    assert np.all(np.diff(inc) <= 1e-9)
    assert np.all(bnd <= inc + 1e-9)
    assert inc[-1] == pytest.approx(res.objective) and bnd[-1] == pytest.approx(res.lower_bound)
    assert "HiGHS" in res.log


def test_feasible_start_is_used_and_infeasible_start_warns_or_raises():
    model, *_ = knapsack_cover()
    start = np.ones(model.n_vars)  # everything selected covers every row
    res = solve(model, start=start)
    assert res.status == "optimal"
    assert res.stats["start_objective"] == pytest.approx(model.objective_value(start))
    assert res.stats["start_used"] is True
    assert res.trace["incumbent"].iloc[0] == pytest.approx(model.objective_value(start))
    bad = np.zeros(model.n_vars)
    with pytest.warns(RuntimeWarning, match="violates"):
        res_bad = solve(model, start=bad)
    assert res_bad.status == "optimal" and res_bad.objective == pytest.approx(res.objective)
    with pytest.raises(ValueError, match="violates"):
        solve(model, start=bad, start_check="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        solve(model, start=bad, start_check="ignore", node_limit=1)
    with pytest.raises(ValueError, match="length"):
        solve(model, start=np.ones(3))


def test_tiny_node_limit_returns_the_start_with_status_and_bound():
    model, *_ = knapsack_cover(n=40, m=30, seed=1)
    start = np.ones(model.n_vars)
    res = solve(model, start=start, node_limit=1)
    assert res.status in ("node_limit", "optimal")
    assert res.has_solution and res.objective <= model.objective_value(start) + 1e-9
    assert res.lower_bound <= res.objective + 1e-9
    assert model.check(res.x).empty


def test_time_limit_is_a_status_not_an_exception():
    model, *_ = knapsack_cover(n=60, m=40, seed=2)
    res = solve(model, time_limit=0.02)
    assert res.status == "time_limit"
    assert res.lower_bound <= (res.objective if res.has_solution else np.inf)
    if res.has_solution:
        assert model.check(res.x).empty
    with pytest.raises(RuntimeError, match="time_limit"):
        res.raise_if_not_optimal()


def test_should_stop_interrupts_with_incumbent():
    model, *_ = knapsack_cover(n=60, m=40, seed=2)
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 30

    res = solve(model, start=np.ones(model.n_vars), should_stop=stop)
    assert res.status == "interrupted"
    assert res.has_solution and model.check(res.x).empty
    assert res.lower_bound <= res.objective + 1e-9


@pytest.mark.skipif(os.name != "posix", reason="needs SIGINT delivery")
def test_ctrl_c_interrupts_and_restores_the_handler():
    model, *_ = knapsack_cover(n=70, m=50, seed=4)  # seconds of branch and bound
    before = signal.getsignal(signal.SIGINT)
    # the signal goes out at HiGHS's first log line: inside the run (a timer started before
    # the call raced its set-up, and one started at that line raced a fast machine's solve)
    ctrl_c = SigintOnce()
    res = solve(model, start=np.ones(model.n_vars), time_limit=30, log_callback=ctrl_c)
    assert ctrl_c.sent.is_set()
    assert signal.getsignal(signal.SIGINT) is before
    assert res.status == "interrupted" and res.has_solution
    assert model.check(res.x).empty and res.lower_bound <= res.objective + 1e-9


def infeasible_model() -> Model:
    b = ModelBuilder("infeasible")
    x = b.add_vars("x", shape=2, kind="binary")
    b.add_constraints("sum", rows=[0, 0], cols=x.index, vals=1.0, sense=">=", rhs=[3.0])
    b.add_objective(x.index, 1.0)
    return b.build()


def test_infeasible_model_status():
    res = solve(infeasible_model())
    assert res.status == "infeasible" and not res.has_solution
    assert np.isnan(res.objective) and res.lower_bound == np.inf
    assert res.x is None and res.values == {}
    assert np.isnan(res.gap)
    with pytest.raises(RuntimeError, match="infeasible"):
        res.raise_if_not_optimal()
    lp = solve(infeasible_model(), relax=True)
    assert lp.status == "infeasible"


def test_unbounded_lp_status():
    b = ModelBuilder("unbounded")
    x = b.add_vars("x", shape=2, lb=-np.inf, ub=np.inf)
    b.add_constraints("c", rows=[0, 0], cols=x.index, vals=[1.0, -1.0], sense="<=", rhs=[1.0])
    b.add_objective(x.index, [-1.0, -1.0])
    res = solve(b.build())
    assert res.status in ("unbounded", "infeasible_or_unbounded")


def test_lp_relaxation_duals_and_methods():
    """min x + 2y  s.t.  x + y >= 1, x <= 0.4 (LP): x = 0.4, y = 0.6, objective 1.6."""
    b = ModelBuilder("lp")
    v = b.add_vars("v", shape=2, kind="integer", lb=0, ub=1)
    b.add_constraints("cover", rows=[0, 0], cols=v.index, vals=1.0, sense=">=", rhs=[1.0])
    b.add_constraints("cap", rows=[0], cols=[v.index[0]], vals=1.0, sense="<=", rhs=[0.4])
    b.add_objective(v.index, [1.0, 2.0])
    model = b.build()
    for method in ("simplex", "ipm"):
        res = solve(model, relax=True, lp_method=method)
        assert res.status == "optimal" and res.objective == pytest.approx(1.6)
        assert res.lower_bound == pytest.approx(1.6)
        np.testing.assert_allclose(res.x, [0.4, 0.6], atol=1e-7)
        # HiGHS convention: c - A.T @ duals = reduced costs; cover dual 2, cap dual -1
        np.testing.assert_allclose(res.duals, [2.0, -1.0], atol=1e-7)
        np.testing.assert_allclose(model.c - model.A.T @ res.duals, res.reduced_costs, atol=1e-7)
        # no branch-and-bound trace for an LP: the trace is the final (time, incumbent, bound) row
        assert len(res.trace) == 1
        assert res.trace[["incumbent", "bound"]].iloc[0].tolist() == pytest.approx([1.6, 1.6])
    mip = solve(model)
    assert mip.objective == pytest.approx(2.0) and mip.duals is None


def test_bad_options_fail_loudly():
    model, *_ = knapsack_cover(n=6, m=3)
    with pytest.raises(ValueError, match="backend"):
        solve(model, backend="nope")
    with pytest.raises(ValueError, match="time_limit"):
        solve(model, time_limit=0)
    with pytest.raises(ValueError, match="lp_method"):
        solve(model, lp_method="barrier")
    with pytest.raises(ValueError, match="option"):
        solve(model, not_a_highs_option=3)
    with pytest.raises(TypeError, match="Model"):
        solve("model")


class _NoFeatures(Backend):
    name = "nofeatures"
    capabilities = frozenset()

    def solve(self, model, options):  # pragma: no cover - never reached in these tests
        raise AssertionError("capabilities must be checked before solve")


def test_missing_capability_raises_instead_of_falling_back():
    register_backend("nofeatures", _NoFeatures)
    model, *_ = knapsack_cover(n=6, m=3)
    with pytest.raises(ValueError, match="mip_start"):
        solve(model, backend="nofeatures", start=np.ones(6))
    with pytest.raises(ValueError, match="lp_method"):
        solve(model, backend="nofeatures", lp_method="simplex")
    with pytest.raises(ValueError, match="trace"):
        solve(model, backend="nofeatures", trace=True)
    with pytest.raises(ValueError, match="interrupt"):
        solve(model, backend="nofeatures", should_stop=lambda: False)
    with pytest.raises(ValueError, match="duals"):
        solve(model, backend="nofeatures", duals=True)
    with pytest.raises(ValueError, match="heuristics_off"):
        solve(model, backend="nofeatures", heuristics=False)
    with pytest.raises(TypeError, match="heuristics"):
        solve(model, heuristics="off")


@pytest.mark.parametrize("backend", ["highs", "pyomo", "pulp"])
def test_heuristics_off_keeps_the_answer_and_sets_every_heuristic_option(backend, monkeypatch):
    from odtkit.solvers import _highs_driver as driver
    from odtkit.solvers.highs import NO_HEURISTICS

    assert backend in available_backends()  # highspy, pyomo and pulp are dependencies
    seen: dict = {}
    original = driver.apply_options

    def spy(h, options):
        seen.update(options)
        return original(h, options)

    # every backend's HiGHS run sets its options through the driver's one setter
    monkeypatch.setattr(driver, "apply_options", spy)
    model, *_ = knapsack_cover(n=12, m=4)
    ref = solve(model)
    seen.clear()
    res = solve(model, backend=backend, heuristics=False)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(ref.objective)
    assert {k: seen[k] for k in NO_HEURISTICS} == NO_HEURISTICS


def test_result_validates_status_and_trace():
    with pytest.raises(ValueError, match="status"):
        Solution(status="done", has_solution=False)
    r = Solution(
        status="time_limit", has_solution=True, objective=2.0, lower_bound=1.5, x=np.zeros(1)
    )
    assert r.gap == pytest.approx(0.5) and r.relative_gap == pytest.approx(0.25)

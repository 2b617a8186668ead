"""A time limit holds for the whole call, model building included, on every solver.

Every case runs an instance that cannot finish within :data:`LIMIT` and checks what the call
did: it stopped with status ``time_limit`` and kept a valid answer -- the objective re-evaluated
by ``odtkit.metrics`` (or the pruning's own accounting) and a bound at most the optimum where
the optimum is known (the dp on the MIP instances, the exact min cut for pruning). A build that
alone exhausts the limit returns status ``time_limit`` instead of raising, with the start when
one was given.

How far past the limit the call returns (issue 13's contract: ``0.1 * limit + 1 s``) is a
wall-clock figure that depends on the machine's load (issue 22: 9 s for a 2 s limit at load 15
on 2 cores), so it is not asserted here: ``benchmarks/limits.py`` measures it for every case.
"""

from __future__ import annotations

import math
import signal
import time

import numpy as np
import pytest
from conftest import CBC

from odtkit import datasets, metrics
from odtkit.core import search_rule_list, search_tree
from odtkit.datasets import Dataset
from odtkit.fairness import Fairness
from odtkit.formulations import BinOCT, FlowOCT, PathOCT, RBinOCT
from odtkit.greedy import greedy_tree
from odtkit.pipeline import solve_formulation

#: Seconds given to every solver.
LIMIT = 2.0


@pytest.fixture(scope="module")
def hard_search_data() -> Dataset:
    """3000 x 30 random binary rows, 5-feature parity with noise: depth 5-6 takes the dp > 2 s."""
    rng = np.random.default_rng(1)
    X = rng.random((3000, 30)) < 0.5
    y = ((X[:, :5].sum(1) + rng.integers(0, 3, 3000)) % 2).astype(int)
    return Dataset.from_arrays(X, y, name="random")


SEARCHES = {
    "dp": dict(max_depth=6),
    "dp_anytime": dict(max_depth=None),  # no depth limit under a time limit: the anytime driver
    "bnb": dict(max_depth=6, method="bnb"),
    "fair_dp": dict(max_depth=6, fairness="sp"),
}


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_every_search_stops_at_the_time_limit_with_a_verified_tree(name, hard_search_data):
    data, lam = hard_search_data, 0.0005
    kw = dict(SEARCHES[name])
    if kw.get("fairness"):
        kw["fairness"] = Fairness("sp", protected=data.X[:, 7], delta=0.01)
    res = search_tree(data, lam=lam, time_limit=LIMIT, **kw)
    assert res.status == "time_limit", res
    assert res.objective == pytest.approx(metrics.objective(res.model, data, lam=lam), abs=1e-12)
    assert res.lower_bound <= res.objective


def test_corels_stops_at_the_time_limit_with_a_verified_rule_list(hard_search_data):
    data, lam = hard_search_data, 0.0005
    res = search_rule_list(data, lam=lam, time_limit=LIMIT)
    assert res.status == "time_limit", res
    assert res.objective == pytest.approx(metrics.objective(res.model, data, lam=lam), abs=1e-12)
    assert res.lower_bound <= res.objective


# --- the MIPs ---------------------------------------------------------------------------------

TTT = datasets.load("tic-tac-toe")
MIP_LAM, MIP_DEPTH = 0.001, 3
MIPS = {"rbinoct": RBinOCT, "binoct": BinOCT, "flowoct": FlowOCT, "pathoct": PathOCT}
BACKENDS = {
    "highs": {},
    "pyomo": {},
    "pulp": {},
    "pulp-cbc": {"solver": "cbc"},
}


def _fairness() -> Fairness:
    return Fairness("sp", protected=TTT.X[:, 0], delta=0.01)


@pytest.fixture(scope="module")
def ttt_optimum() -> dict[str, float]:
    free = search_tree(TTT, lam=MIP_LAM, max_depth=MIP_DEPTH).objective
    fair = search_tree(TTT, lam=MIP_LAM, max_depth=MIP_DEPTH, fairness=_fairness())
    assert fair.status == "optimal"
    return {"free": free, "fair": fair.objective}


def _check_mip(name: str, backend: str, fair: bool, optimum: dict[str, float]) -> None:
    options = dict(BACKENDS[backend])
    if options.get("solver") == "cbc" and CBC is None:
        pytest.skip("no CBC binary")
    extra = {"fairness": _fairness()} if fair else {}
    res = solve_formulation(
        MIPS[name](),
        TTT,
        backend=backend.split("-")[0],
        time_limit=LIMIT,
        solve_options=options,
        lam=MIP_LAM,
        max_depth=MIP_DEPTH,
        **extra,
    )
    assert res.status == "time_limit", res
    opt = optimum["fair" if fair else "free"]
    if res.model is not None:
        assert res.objective == pytest.approx(
            metrics.objective(res.model, TTT, lam=MIP_LAM), abs=1e-12
        )
        assert res.objective >= opt - 1e-9
    assert res.lower_bound <= opt + 1e-7


@pytest.mark.parametrize("name", sorted(MIPS))
def test_every_mip_stops_at_the_time_limit_on_highs(name, ttt_optimum):
    _check_mip(name, "highs", False, ttt_optimum)


def test_the_fair_mip_stops_at_the_time_limit(ttt_optimum):
    _check_mip("flowoct", "highs", True, ttt_optimum)


@pytest.mark.parametrize("backend", ["pyomo", "pulp", "pulp-cbc"])
@pytest.mark.parametrize("name", ["rbinoct", "flowoct"])
def test_the_mips_stop_at_the_time_limit_on_every_backend(name, backend, ttt_optimum):
    _check_mip(name, backend, False, ttt_optimum)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["pyomo", "pulp", "pulp-cbc"])
@pytest.mark.parametrize("name", ["binoct", "pathoct", "fair_flowoct"])
def test_the_other_mips_stop_at_the_time_limit_on_every_backend(name, backend, ttt_optimum):
    fair = name.startswith("fair_")
    _check_mip(name.removeprefix("fair_"), backend, fair, ttt_optimum)


# --- the build is charged ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_data() -> Dataset:
    """20,000 x 20 random rows: FlowOCT's build takes ~0.3-0.5 s, PuLP's and Pyomo's
    translations of it several seconds."""
    rng = np.random.default_rng(0)
    X = rng.random((20_000, 20)) < 0.5
    y = (X[:, 0] ^ X[:, 1] ^ (rng.random(20_000) < 0.1)).astype(int)
    return Dataset.from_arrays(X, y, name="big")


@pytest.mark.parametrize("backend", ["highs", "pulp", "pyomo"])
def test_a_build_that_exhausts_the_limit_gives_status_time_limit(backend, big_data):
    limit = 0.05  # less than the build alone
    res = solve_formulation(
        FlowOCT(), big_data, backend=backend, time_limit=limit, lam=0.001, max_depth=2
    )
    assert res.status == "time_limit" and res.model is None, res
    assert "during the build" in res.message
    assert math.isnan(res.objective) and res.lower_bound == -math.inf


class _Prebuilt(RBinOCT):
    """RBinOCT whose ``build`` hands back a model built beforehand: the call's limit is then
    all the translation's, however slowly a loaded machine builds (1.1 s idle here)."""

    def __init__(self, model) -> None:
        super().__init__()
        self._built = model

    def build(self, data, **problem):
        return self._built


@pytest.fixture(scope="module")
def big_rbinoct(big_data):
    return RBinOCT().build(big_data, lam=0.001, max_depth=2)


@pytest.mark.parametrize("backend", ["pulp", "pyomo"])
def test_a_translation_that_exhausts_the_limit_keeps_the_start(backend, big_data, big_rbinoct):
    """The build fits, the modelling layer's translation does not: the start is the answer."""
    lam = 0.001
    start = greedy_tree(big_data, lam=lam, max_depth=2)
    # PuLP's and Pyomo's translations of this model take seconds even on an idle machine
    res = solve_formulation(
        _Prebuilt(big_rbinoct),
        big_data,
        backend=backend,
        start=start,
        time_limit=0.3,
        lam=lam,
        max_depth=2,
    )
    assert res.status == "time_limit", res
    assert res.solution.stats.get("stopped_before_solve"), res.solution.stats
    assert res.model is not None
    assert res.objective == pytest.approx(metrics.objective(start, big_data, lam=lam), abs=1e-12)


# --- pruning ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def forest_data():
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from odtkit.pruning import prune
    from odtkit.pruning._extract import extract

    X, y = make_classification(2000, 30, n_informative=10, random_state=0)
    forest = RandomForestClassifier(50, max_depth=6, random_state=0, n_jobs=1).fit(X, y)
    data = extract(forest, X, y)
    exact = prune(data, lam=0.001, method="cut")
    assert exact.status == "optimal"
    return data, exact.objective


@pytest.mark.parametrize("method", ["lp", "mip", "colgen"])
def test_every_pruning_method_stops_at_the_time_limit(method, forest_data):
    from odtkit.pruning import prune

    data, opt = forest_data
    # not less: HiGHS's MIP presolve of this IP3 (460k rows) runs 2.4 s whatever its time limit
    limit = LIMIT
    res = prune(data, lam=0.001, method=method, time_limit=limit)
    assert res.status == "time_limit", res
    if res.model is not None:
        assert res.objective == pytest.approx(res.model.objective, abs=1e-12)
        assert res.objective >= opt - 1e-9
    assert res.lower_bound <= opt + 1e-9


# --- the plumbing -----------------------------------------------------------------------------


def test_an_inner_deadline_never_outlives_the_outer_one():
    from odtkit._limits import Deadline, OutOfTime, charged, check_deadline

    with charged(Deadline(0.0)):
        with charged(Deadline(60.0)):  # an inner call with a longer limit of its own
            with pytest.raises(OutOfTime):
                check_deadline()
    with charged(Deadline(None)):
        check_deadline()  # no limit: never raises
    assert Deadline(None).limit_left() is None
    assert Deadline(0.0).limit_left() == 1e-3  # a positive limit for the next phase


def test_alarm_at_stops_a_python_loop_that_never_checks():
    from odtkit._limits import Deadline, OutOfTime, alarm_at

    # the loop's own bound is a safety net (without the alarm it would spin for a minute and
    # fail below), not a measurement
    give_up = time.monotonic() + 60.0
    with pytest.raises(OutOfTime), alarm_at(Deadline(0.2)):
        while time.monotonic() < give_up:
            pass
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0  # the timer is off again


def test_alarm_at_reports_the_limit_when_a_native_call_masks_it():
    """The alarm's OutOfTime raised inside a native call can come out as that call's own error
    (PuLP's HiGHS ``addRow`` said "incompatible function arguments" on a loaded machine): once
    the alarm fired, what the block raises is the limit. An error before it stays itself."""
    from odtkit._limits import Deadline, OutOfTime, alarm_at

    def masking_call() -> None:
        try:
            time.sleep(60.0)  # the alarm's handler raises out of the sleep
        except OutOfTime:
            raise TypeError("incompatible function arguments") from None

    with pytest.raises(OutOfTime), alarm_at(Deadline(0.2)):
        masking_call()
    with pytest.raises(TypeError), alarm_at(Deadline(60.0)):
        raise TypeError("a real error, before any limit")
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0


def test_stop_on_interrupt_ends_the_loop_at_an_interrupted_status_or_a_keyboard_interrupt():
    from odtkit._limits import stop_on_interrupt

    done = []
    with stop_on_interrupt() as stop:
        for status in ("optimal", "interrupted", "optimal"):
            done.append(status)
            stop.check(status)
    assert stop.interrupted and done == ["optimal", "interrupted"]
    with stop_on_interrupt() as stop:
        raise KeyboardInterrupt
    assert stop.interrupted
    with stop_on_interrupt() as stop:
        stop.check_rows([{"status": "optimal"}, {"status": "time_limit"}])
    assert not stop.interrupted


def test_a_cost_error_path_cut_short_is_a_valid_partial_path(forest_data, monkeypatch):
    """A limit between the end cuts and the last window: status time_limit, every vertex a
    pruning no better than the optimum, and the budget answer built on it carries no bound."""
    from odtkit.pruning import _path, cost_error_path, prune
    from odtkit.pruning._budget import _hull_within
    from odtkit.pruning._path import exact_path

    data, _ = forest_data
    full = cost_error_path(data)
    assert full.status == "optimal" and full.unproven == ()
    assert full.n_vertices > 2  # windows to split after the two end cuts
    # the time limit runs out in the third min cut (the first window's), whatever the
    # machine's speed: the native cut reports it as it would at its deadline
    real_cut = _path._native.closure_min_cut
    calls = []

    def cut_until_the_limit(*args, **kwargs):
        calls.append(kwargs.get("time_limit"))
        if len(calls) == 3:
            return {"status": "time_limit"}
        return real_cut(*args, **kwargs)

    monkeypatch.setattr(_path._native, "closure_min_cut", cut_until_the_limit)
    path = exact_path(data, time_limit=60.0)
    monkeypatch.undo()
    assert len(calls) == 3 and all(0 < limit <= 60.0 for limit in calls)
    assert path.status == "time_limit" and path.unproven
    for j in (0, path.n_vertices // 2, path.n_vertices - 1):
        lam = float(path.lam_lo[j])
        assert path.at(lam).objective >= prune(data, lam=lam, method="cut").objective - 1e-12
    within = _hull_within(data, float(path.cost_term[-1]) + 1e-9, path)
    assert within.status == "time_limit" and within.lower_bound == -np.inf

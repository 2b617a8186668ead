"""Limits of ensemble pruning (issue 28): one time limit, one memory budget and Ctrl-C for the
whole ``prune`` call -- extraction, network build, model build and solve.

Every stopped call must come back as a Result with the limit's status, a feasible pruning
re-scored by :func:`objective_terms`, and a lower bound that is below its objective and below
the exact optimum (the brute-force oracle on small forests). Time runs out at a chosen phase by
expiring the active :class:`~odtkit._limits.Deadline` from inside that phase; Ctrl-C is a real
SIGINT sent while the phase runs (``sigint_inside``). Nothing here reads the wall clock.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
import tracemalloc
import warnings

import numpy as np
import pytest
from conftest import sigint_inside
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

import odtkit._limits as limits
from odtkit.pruning import (
    IP3,
    EnsembleData,
    _cut,
    _extract,
    _solve,
    brute_force_prune,
    extract,
    objective_terms,
    prune,
)
from odtkit.pruning._ensemble import is_valid_pruning
from odtkit.results import Status

LAM = 0.02


def _small(seed: int = 0, n: int = 60, T: int = 3, depth: int = 2):
    """A forest small enough for the brute-force oracle."""
    X, y = make_classification(
        n, n_features=5, n_informative=3, n_redundant=0, flip_y=0.2, random_state=seed
    )
    rf = RandomForestClassifier(T, max_depth=depth, random_state=seed).fit(X, y)
    return rf, X, y


def _sizeable(n: int = 3000, T: int = 12, depth: int = 6):
    X, y = make_classification(n, 20, random_state=1)
    rf = RandomForestClassifier(T, max_depth=depth, random_state=1).fit(X, y)
    return rf, X, y


def _check(result, status, rf, X, y, lam=LAM, optimum=None):
    """The stopped answer: the status, a valid pruning, its objective re-scored, a valid bound."""
    assert result.status == status, result.message
    pruned = result.model
    assert pruned is not None
    pairs = zip(pruned.data.trees, pruned.leaves, strict=True)
    assert all(is_valid_pruning(t, z) for t, z in pairs)
    # re-score on a freshly extracted copy: the stand-in data must not fake the objective
    data = extract(rf, X, y)
    terms = objective_terms(data, pruned.leaves, lam=lam)
    assert result.objective == pytest.approx(float(terms["objective"]), abs=1e-12)
    assert pruned.objective == pytest.approx(result.objective, abs=1e-12)
    assert math.isfinite(result.lower_bound)
    assert result.lower_bound <= result.objective + 1e-12
    if optimum is not None:
        assert result.lower_bound <= optimum + 1e-12
    assert result.message or status == Status.OPTIMAL
    # the pruning predicts like the sklearn copy it exports
    np.testing.assert_allclose(
        pruned.predict_proba(X[:20]),
        np.mean([t.predict_proba(X[:20]) for t in pruned.to_sklearn()], axis=0),
    )
    return pruned


def _optimum(rf, X, y, lam=LAM):
    return brute_force_prune(extract(rf, X, y), lam=lam)[0]


def _expire_after(monkeypatch, module, name, calls=1):
    """Make the active deadline pass once ``module.name`` has been called ``calls`` times."""
    real = getattr(module, name)
    seen = {"n": 0}

    def wrapper(*args, **kwargs):
        out = real(*args, **kwargs)
        seen["n"] += 1
        if seen["n"] >= calls:
            active = limits._active.get()
            if active is not None:  # not the oracle's own extraction
                active.at = 0.0
        return out

    monkeypatch.setattr(module, name, wrapper)


def _pause():
    """Sleep in small steps (a signal lands at once): the phase that calls it is running."""
    for _ in range(3000):
        time.sleep(0.01)


def _slow_on_call(monkeypatch, module, name, call=1):
    """``module.name`` calls :func:`_pause` first on its ``call``-th call; send the SIGINT
    with ``sigint_inside(THIS, "_pause")``."""
    real = getattr(module, name)
    seen = {"n": 0}

    def slow(*args, **kwargs):
        seen["n"] += 1
        if seen["n"] == call:
            THIS._pause()
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, slow)


THIS = sys.modules[__name__]


# ------------------------------------------------------------------------------------------
# time: one deadline from the start of the call, whatever the phase
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["cut", "mip", "lp", "colgen"])
@pytest.mark.parametrize("after_trees", [1, 2, 3])
def test_time_runs_out_during_extraction(monkeypatch, method, after_trees):
    rf, X, y = _small()
    _expire_after(monkeypatch, _extract, "_tree_data", calls=after_trees)
    res = prune(rf, X, y, lam=LAM, method=method, time_limit=1000)
    _check(res, Status.TIME_LIMIT, rf, X, y, optimum=_optimum(rf, X, y))
    assert "extraction" in res.message and "root" in res.message


@pytest.mark.parametrize("method", ["cut", "lp"])
def test_time_runs_out_with_a_budget(monkeypatch, method):
    rf, X, y = _small(8)
    _expire_after(monkeypatch, _extract, "_tree_data", calls=2)
    res = prune(rf, X, y, budget=0.5, method=method, time_limit=1000)
    _check(res, Status.TIME_LIMIT, rf, X, y, lam=0.0)
    assert res.model.cost_term <= 0.5
    assert res.lower_bound <= brute_force_prune(extract(rf, X, y), lam=0.0, budget=0.5)[0]


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    T=st.integers(1, 3),
    stop=st.integers(1, 3),
    lam=st.sampled_from([0.0, 1e-3, 0.02, 0.3]),
    method=st.sampled_from(["cut", "lp"]),
)
def test_property_stopped_bounds_are_valid(monkeypatch, seed, T, stop, lam, method):
    rf, X, y = _small(seed, n=40, T=T)
    optimum = _optimum(rf, X, y, lam=lam)
    with monkeypatch.context() as patch:
        _expire_after(patch, _extract, "_tree_data", calls=min(stop, T))
        res = prune(rf, X, y, lam=lam, method=method, time_limit=1000)
    _check(res, Status.TIME_LIMIT, rf, X, y, lam=lam, optimum=optimum)
    assert res.objective >= optimum - 1e-12


def test_time_runs_out_during_the_network_build(monkeypatch):
    rf, X, y = _small(1)
    _expire_after(monkeypatch, _cut, "duplicate_examples")
    res = prune(rf, X, y, lam=LAM, time_limit=1000)
    _check(res, Status.TIME_LIMIT, rf, X, y, optimum=_optimum(rf, X, y))
    assert "network build" in res.message
    # the data was complete: the bound is the unpruned trees' errors, above 0
    data = extract(rf, X, y)
    unpruned_errors = sum(int(t.error[t.is_leaf].sum()) for t in data.trees)
    assert res.lower_bound == pytest.approx(unpruned_errors / (data.n_samples * data.n_trees))


@pytest.mark.parametrize("method", ["mip", "lp"])
def test_mip_whose_build_runs_out_returns_a_pruning(monkeypatch, method):
    """Issue 28: ``method="mip"`` at the time limit returned no pruning at all."""
    rf, X, y = _small(2)
    _expire_after(monkeypatch, IP3, "_build")  # the build returns, its deadline has passed
    real = IP3._build

    def build(self, *args, **kwargs):
        model = real(self, *args, **kwargs)
        limits.check_deadline()  # the build's last check
        return model

    monkeypatch.setattr(IP3, "_build", build)
    res = prune(rf, X, y, lam=LAM, method=method, time_limit=1000)
    _check(res, Status.TIME_LIMIT, rf, X, y, optimum=_optimum(rf, X, y))


def test_lp_that_spends_the_limit_starts_no_mip(monkeypatch):
    """Issue 42: the LP method overran its limit by 46 %: an LP stopped by the limit fell back
    to a MIP that had 1 ms of HiGHS but first paid a whole model transfer. Now no MIP starts,
    and the answer is the trivial pruning with a valid bound and the overrun in the stats."""
    rf, X, y = _small(3)
    real = _solve.solve

    def lp_stopped(*args, **kwargs):  # the LP returns at its limit, the deadline has passed
        solution = real(*args, **kwargs)
        active = limits._active.get()
        if active is not None:
            active.at = 0.0
        return dataclasses.replace(solution, status=Status.TIME_LIMIT)

    monkeypatch.setattr(_solve, "solve", lp_stopped)

    def no_mip(*args, **kwargs):
        raise AssertionError("a MIP was started after the time limit")

    monkeypatch.setattr(_solve, "solve_mip", no_mip)
    res = prune(rf, X, y, lam=LAM, method="lp", time_limit=1000)
    _check(res, Status.TIME_LIMIT, rf, X, y, optimum=_optimum(rf, X, y))
    assert res.stats["over_time_limit"] >= 0.0
    direct = _solve.solve_ip3(extract(rf, X, y), lam=LAM, method="lp", time_limit=1000)
    assert direct.status == Status.TIME_LIMIT and direct.model is None
    assert "no MIP" in direct.stats["fallback"]


@pytest.mark.parametrize("method", ["lp", "mip"])
def test_highs_methods_at_a_tiny_limit(method):
    """A tiny limit on the HiGHS methods: a status, a valid pruning and a valid bound (never
    seconds), and the overrun past the limit reported."""
    rf, X, y = _sizeable()
    data = extract(rf, X, y)
    res = prune(data, lam=1e-3, method=method, time_limit=1e-3)
    assert res.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    _check(res, res.status, rf, X, y, lam=1e-3)


def test_a_real_time_limit_still_returns_a_pruning():
    rf, X, y = _sizeable()
    for method in ("cut", "mip"):
        res = prune(rf, X, y, lam=1e-3, method=method, time_limit=1e-6)
        assert res.status in (Status.TIME_LIMIT, Status.OPTIMAL)
        _check(res, res.status, rf, X, y, lam=1e-3)


# ------------------------------------------------------------------------------------------
# memory: the whole call within memory_limit_mb (or the default budget)
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["cut", "mip"])
def test_memory_limit_refuses_before_building(method):
    rf, X, y = _sizeable()
    tracemalloc.start()
    try:
        res = prune(rf, X, y, lam=1e-3, method=method, memory_limit_mb=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20 * 1.5  # numpy's arrays are traced: nothing big was built
    pruned = _check(res, Status.MEMORY_LIMIT, rf, X, y, lam=1e-3)
    assert "memory_limit_mb=1" in res.message
    assert pruned.n_leaves == pruned.n_trees


def test_memory_limit_projected_during_extraction():
    """A budget the smallest entry list passes but the program's projection from the entries
    does not: the call stops after the extraction, never builds the entry lists, keeps the
    better trivial pruning and bounds by the trees extracted."""
    from odtkit.pruning._guard import DATA_BYTES_PER_ENTRY, MODEL_BYTES_PER_ENTRY, Guard

    rf, X, y = _sizeable()
    data = extract(rf, X, y)
    guard = Guard(None, None)
    guard.per_entry = DATA_BYTES_PER_ENTRY + MODEL_BYTES_PER_ENTRY  # what an LP charges
    guard.start_extraction(len(y), X.shape[1], len(rf.estimators_), data.n_nodes, 2)
    low, high = guard.peak(len(y) * len(rf.estimators_)), guard.peak(data.n_entries)
    limit_mb = (low + high) / 2 / 2**20
    tracemalloc.start()
    try:
        res = prune(rf, X, y, lam=1e-3, method="lp", memory_limit_mb=limit_mb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    _check(res, Status.MEMORY_LIMIT, rf, X, y, lam=1e-3)
    assert "memory_limit_mb" in res.message and "projected" in res.message
    assert peak < limit_mb * 2**20
    assert res.lower_bound > 0  # some trees' errors were known


def test_memory_limit_after_extraction_keeps_the_better_trivial_pruning():
    """EnsembleData given: the budget stops before the network; with data in hand the
    unpruned ensemble competes with the roots (small λ: it wins)."""
    rf, X, y = _sizeable()
    data = extract(rf, X, y)
    res = prune(data, lam=1e-6, memory_limit_mb=1)
    _check(res, Status.MEMORY_LIMIT, rf, X, y, lam=1e-6)
    assert res.stats["fallback"] == "the unpruned ensemble"
    budgeted = prune(data, budget=0.5, memory_limit_mb=1)
    assert budgeted.status == Status.MEMORY_LIMIT
    assert budgeted.model.cost_term <= 0.5  # the trivial answer respects the budget


def test_the_cut_builds_its_network_within_the_budget():
    """Issue 25: the cut charges only the compact data up front; its native network is
    budgeted where it is built. A budget the data fits but the whole network does not: at a
    larger λ (most of the network needed) the cut stops with status
    memory_limit, a valid pruning and bound; at a small λ the reduced network fits and the
    answer is optimal and equal to the unbudgeted one."""
    rf, X, y = _sizeable(n=4000, T=20, depth=8)
    data = extract(rf, X, y)
    # a λ where the reductions leave much of the network (rule 6 leaves 5 arcs at 0.01)
    lam = 0.02
    free = prune(data, lam=lam)
    assert free.status == Status.OPTIMAL
    # what the whole network takes (arcs of 8 bytes plus the max-flow's 24 per arc), halved
    limit_mb = 3 + 0.5 * 32 * free.stats["n_arcs"] / 2**20
    stopped = prune(rf, X, y, lam=lam, memory_limit_mb=limit_mb)
    _check(stopped, Status.MEMORY_LIMIT, rf, X, y, lam=lam, optimum=free.objective)
    assert "memory" in stopped.message
    small = prune(rf, X, y, lam=1e-4, memory_limit_mb=limit_mb)
    assert small.status == Status.OPTIMAL, small.message
    assert small.objective == pytest.approx(prune(data, lam=1e-4).objective, abs=1e-12)
    assert small.stats["n_arcs"] < 0.1 * free.stats["n_arcs"]


def test_roots_only_warning_only_on_a_certified_answer():
    """Issue 42: a prune stopped by its memory budget before anything was forced returns every
    tree cut to its root; that fallback is not the optimum, so it must not be described as what
    lam does (the warning said "lam=... prunes every tree to its root"). A certified roots-only
    answer (a lam far above every breakpoint) still warns. (Rule 6 of the cut now certifies
    this forest's roots-only answer at lam=0.5 within the 2.2 MB its data needs, where the cut
    used to stop at 3 MB: the budget below stops the extraction instead.)"""
    rf, X, y = _sizeable(n=4000, T=20, depth=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the stopped call
        stopped = prune(rf, X, y, lam=0.5, memory_limit_mb=1.5)
    assert stopped.status == Status.MEMORY_LIMIT
    assert stopped.model.n_leaves == stopped.model.n_trees  # the roots-only fallback
    with pytest.warns(UserWarning, match="prunes every tree to its root"):
        certified = prune(rf, X, y, lam=1e3)
    assert certified.status == Status.OPTIMAL
    assert certified.model.n_leaves == certified.model.n_trees


def test_default_memory_budget_is_honoured(monkeypatch):
    rf, X, y = _sizeable()
    monkeypatch.setenv("ODTKIT_MEMORY_LIMIT_MB", "1")
    res = prune(rf, X, y, lam=1e-3)
    _check(res, Status.MEMORY_LIMIT, rf, X, y, lam=1e-3)
    assert "default memory budget" in res.message


def test_stand_in_data_is_refused_as_input():
    rf, X, y = _sizeable()
    res = prune(rf, X, y, lam=1e-3, memory_limit_mb=1)
    assert not res.model.data.complete
    with pytest.raises(ValueError, match="stopped prune"):
        prune(res.model.data, lam=1e-3)


# ------------------------------------------------------------------------------------------
# Ctrl-C: a status, never a KeyboardInterrupt
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [1, 3])
def test_ctrl_c_during_extraction(monkeypatch, call):
    rf, X, y = _small(3)
    _slow_on_call(monkeypatch, _extract, "_tree_data", call=call)
    with sigint_inside(THIS, "_pause", after=0.05) as sent:
        res = prune(rf, X, y, lam=LAM)
    assert sent.is_set()
    _check(res, Status.INTERRUPTED, rf, X, y, optimum=_optimum(rf, X, y))
    assert "Ctrl-C during the extraction" in res.message


def test_ctrl_c_during_the_input_checks(monkeypatch):
    rf, X, y = _small(9)
    _slow_on_call(monkeypatch, _extract, "as_numeric_matrix")
    with sigint_inside(THIS, "_pause", after=0.05) as sent:
        res = prune(rf, X, y, lam=LAM)
    assert sent.is_set()
    _check(res, Status.INTERRUPTED, rf, X, y, optimum=_optimum(rf, X, y))
    assert "Ctrl-C during the input checks" in res.message


def test_ctrl_c_during_the_network_build(monkeypatch):
    rf, X, y = _small(4)
    _slow_on_call(monkeypatch, _cut, "duplicate_examples")
    with sigint_inside(THIS, "_pause", after=0.05) as sent:
        res = prune(rf, X, y, lam=LAM)
    assert sent.is_set()
    _check(res, Status.INTERRUPTED, rf, X, y, optimum=_optimum(rf, X, y))
    assert "network build" in res.message


def test_ctrl_c_during_the_model_build(monkeypatch):
    rf, X, y = _small(5)
    _slow_on_call(monkeypatch, IP3, "_build")
    with sigint_inside(THIS, "_pause", after=0.05) as sent:
        res = prune(rf, X, y, lam=LAM, method="mip")
    assert sent.is_set()
    _check(res, Status.INTERRUPTED, rf, X, y, optimum=_optimum(rf, X, y))


# ------------------------------------------------------------------------------------------
# no limit hit: the same answers as before
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["cut", "lp", "mip", "colgen"])
def test_unlimited_calls_are_optimal(method):
    rf, X, y = _small(6)
    res = prune(rf, X, y, lam=LAM, method=method, time_limit=600, memory_limit_mb=4000)
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(_optimum(rf, X, y), abs=1e-9)
    assert isinstance(extract(rf, X, y), EnsembleData)


# ------------------------------------------------------------------------------------------
# bad inputs: one clear error naming the argument (plain data rows for the hostile table)
# ------------------------------------------------------------------------------------------
def _unfitted():
    return RandomForestClassifier(3)


BAD_PRUNE_INPUTS = [
    # (case, keyword overrides, exception, message pattern)
    ("time_limit negative", {"time_limit": -1.0}, ValueError, "time_limit"),
    ("time_limit nan", {"time_limit": float("nan")}, ValueError, "time_limit"),
    ("time_limit zero", {"time_limit": 0}, ValueError, "time_limit"),
    ("time_limit string", {"time_limit": "5"}, TypeError, "time_limit"),
    ("memory_limit_mb negative", {"memory_limit_mb": -5}, ValueError, "memory_limit_mb"),
    ("memory_limit_mb nan", {"memory_limit_mb": float("nan")}, ValueError, "memory_limit_mb"),
    ("memory_limit_mb bool", {"memory_limit_mb": True}, TypeError, "memory_limit_mb"),
    ("X too few features", {"X": "drop_column"}, ValueError, r"X has 4 features"),
    ("X too many features", {"X": "add_column"}, ValueError, r"X has 6 features"),
    ("y shorter than X", {"y": "short"}, ValueError, r"^y must be 1-dimensional"),
    ("y unknown label", {"y": "unknown"}, ValueError, r"^y contains labels"),
    # NaN is routed as the forest routes it (tests/test_pruning_inputs.py); inf is refused
    ("X with inf", {"X": "inf"}, ValueError, r"^X column 'column 3' has 1 infinite value"),
    ("unfitted forest", {"ensemble": "unfitted"}, Exception, r"not fitted"),
    ("time_limit inf", {"time_limit": float("inf")}, None, None),
]


@pytest.mark.parametrize(
    "case, overrides, error, match", BAD_PRUNE_INPUTS, ids=[c[0] for c in BAD_PRUNE_INPUTS]
)
def test_bad_prune_inputs(case, overrides, error, match):
    rf, X, y = _small(7)
    args = {"ensemble": rf, "X": X, "y": y}
    kwargs = {"lam": LAM}
    special = {
        "drop_column": lambda: X[:, :4],
        "add_column": lambda: np.hstack([X, X[:, :1]]),
        "inf": lambda: np.where(np.arange(X.size).reshape(X.shape) == 3, np.inf, X),
        "short": lambda: y[:-1],
        "unknown": lambda: np.where(np.arange(y.size) == 0, 7, y),
        "unfitted": _unfitted,
    }
    for key, value in overrides.items():
        value = special[value]() if isinstance(value, str) and value in special else value
        (args if key in args else kwargs)[key] = value
    if error is None:
        res = prune(args["ensemble"], args["X"], args["y"], **kwargs)
        _check(res, Status.OPTIMAL, rf, X, y)
        return
    with pytest.raises(error, match=match) as info:
        prune(args["ensemble"], args["X"], args["y"], **kwargs)
    assert "\n" not in str(info.value)

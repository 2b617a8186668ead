"""OPT certified in the Rashomon set's own memo (``rashomon_certify``) against the dp.

Without side constraints :func:`odtkit.core.rashomon.build_rashomon` certifies the optimum in
the build's memo (its root's splits in the one-split trees' order, each child solved up to the
budget the incumbent of its time would give the build, the incumbent starting at the best leaf,
far above OPT, and falling to OPT) and then builds the set in that memo. Here every such set
must equal the one the dp's certified OPT gives the plain build (``rashomon_build``): the same
optimum, the same histogram key by key, the same trees in the same order; its optimal tree must
score OPT; and a build stopped by a limit keeps the optimum and bounds its count.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import _native, metrics, testing
from odtkit.core._problem import build_problem, search_config
from odtkit.core.rashomon import RashomonProblem, build_rashomon, count_upper_bound
from odtkit.core.search import TrivialAnswerWarning, search_tree
from odtkit.datasets import Dataset
from odtkit.rashomon import RashomonSet, rashomon


@st.composite
def _tables(draw):
    n = draw(st.integers(1, 60))
    p = draw(st.integers(1, 6))
    K = draw(st.integers(2, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.random((n, p)) < rng.uniform(0.2, 0.8)
    if p > 1 and draw(st.booleans()):  # duplicated columns: equal children, tied splits
        X[:, -1] = X[:, 0]
    y = X[:, 0].astype(int) if p == 1 else (X[:, 0] ^ X[:, 1]).astype(int) % K
    y = np.where(rng.random(n) < 0.25, rng.integers(0, K, n), y)
    # integer weights take the depth-two pair counts; fractional ones the recursion
    kind = draw(st.sampled_from(["unit", "integer", "fraction"]))
    weights = {
        "unit": None,
        "integer": rng.integers(1, 5, n).astype(float),
        "fraction": rng.integers(1, 5, n) / 4.0 + 0.1,
    }[kind]
    return Dataset.from_arrays(X, y, sample_weight=weights)


def _by_the_dp(problem: RashomonProblem, count_only: bool):
    """The set the dp's certified OPT gives the plain build (the path taken with constraints)."""
    data = problem.dataset
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrivialAnswerWarning)  # a leaf is a fine optimum here
        found = search_tree(data, lam=problem.lam, max_depth=problem.max_depth, method="dp")
    assert found.status == "optimal"
    opt = float(found.objective)
    bound = opt + problem.epsilon if problem.absolute else opt * (1.0 + problem.epsilon)
    config = search_config(
        problem.lam,
        time_limit=None,
        node_limit=None,
        memory_limit_mb=None,
        bounds={},
        max_depth=-1 if problem.max_depth is None else problem.max_depth,
    )
    native = _native.rashomon_build(
        build_problem(data), config, bound, problem.leaves == "majority", count_only=count_only
    )
    return opt, native


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=_tables(),
    depth=st.sampled_from([None, 0, 1, 2, 3, 4]),
    lam=st.sampled_from([0.0, 0.004, 0.02, 0.1, 0.7]),
    epsilon=st.sampled_from([0.0, 0.01, 0.1, 0.5, 3.0]),
    absolute=st.booleans(),
    leaves=st.sampled_from(["any", "majority"]),
    count_only=st.booleans(),
)
def test_the_set_certified_in_its_memo_is_the_dps_key_by_key(
    data, depth, lam, epsilon, absolute, leaves, count_only
):
    problem = RashomonProblem(
        data, lam=lam, max_depth=depth, epsilon=epsilon, absolute=absolute, leaves=leaves
    )
    core = build_rashomon(problem, count_only=count_only)
    assert core.complete and core.status == "optimal" and core.stats["certified"]
    opt, native = _by_the_dp(problem, count_only)
    assert abs(core.optimum - opt) <= 1e-12 * max(1.0, opt)
    assert core.lower_bound == core.optimum
    assert metrics.objective(core.optimal_tree, data, lam=lam) == core.optimum
    # the same bound from the same optimum, so the same keys, counts and trees
    assert core.bound == (opt + epsilon if absolute else opt * (1.0 + epsilon))
    assert core.count() == int(native.count(), 16)
    ours = core._native_set.histogram()
    theirs = native.histogram()
    assert ours[0] == theirs[0] and ours[1] == theirs[1] and ours[3] == theirs[3]
    if not count_only:
        # the same trees at the same indices: the first and last ones, and some between
        n = core.count()
        starts = {0, max(0, n - 500), n // 3, n // 2}
        for start in sorted(starts):
            k = min(500, n - start)
            ours_codes, _ = core._native_set.trees(format(start, "x"), k, -99)
            theirs_codes, _ = native.trees(format(start, "x"), k, -99)
            assert np.array_equal(ours_codes, theirs_codes)
        assert core.optimal_tree in RashomonSet(core)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 18),
    p=st.integers(1, 4),
    depth=st.integers(1, 3),
    lam=st.sampled_from([0.0, 0.03]),
    epsilon=st.sampled_from([0.0, 0.2, 2.0]),
    fractional=st.booleans(),
)
def test_the_certified_set_against_the_brute_force(seed, n, p, depth, lam, epsilon, fractional):
    rng = np.random.default_rng(seed)
    X = rng.random((n, p)) < 0.5
    y = rng.integers(0, 2, n)
    weights = rng.integers(1, 5, n) / 4.0 + 0.1 if fractional else None
    data = Dataset.from_arrays(X, y, sample_weight=weights)
    rs = rashomon(data, lam=lam, max_depth=depth, epsilon=epsilon)
    truth = testing.brute_force_rashomon_set(data, lam=lam, max_depth=depth, epsilon=epsilon)
    assert rs.complete and rs.stats["certified"]
    assert abs(rs.optimum - truth[0][1]) <= 1e-9
    assert sorted(map(repr, rs)) == sorted(repr(tree) for tree, _ in truth)


@pytest.mark.parametrize("count_only", [False, True])
@pytest.mark.parametrize("memory_limit_mb", [1.0, 4.0])
def test_a_build_stopped_after_the_certification_keeps_the_optimum_and_a_bound(
    count_only, memory_limit_mb
):
    data, _ = testing.planted_tree_dataset(2, 600, 20, 4, 0.2)
    problem = RashomonProblem(data, lam=0.001, max_depth=4, epsilon=2.0)
    core = build_rashomon(problem, memory_limit_mb=memory_limit_mb, count_only=count_only)
    assert not core.complete and core.status == "memory_limit"
    # the optimum was certified (small enough to fit), or the dp's incumbent stands in for it
    assert core.optimal_tree is not None
    assert metrics.objective(core.optimal_tree, data, lam=0.001) <= core.bound + 1e-9
    found = core.count()
    assert 1 <= found <= core.count_upper_bound <= count_upper_bound(problem, core.bound)
    if not count_only:
        rs = RashomonSet(core)
        assert core.optimal_tree in rs
        for index in range(min(found, 30)):
            assert metrics.objective(rs[index], data, lam=0.001) <= core.bound + 1e-9


def test_ctrl_c_during_the_certification_answers_with_the_dps_incumbent():
    from conftest import sigint_inside

    from odtkit.core import rashomon as engine

    # the certification takes ~0.7 s here; after a Ctrl-C the dp answers at once
    data, _ = testing.planted_tree_dataset(0, 3000, 40, 5, 0.2)
    problem = RashomonProblem(data, lam=0.005, max_depth=5, epsilon=0.01)
    with sigint_inside(engine._native, "rashomon_certify", after=0.05) as sent:
        core = build_rashomon(problem, time_limit=120)
    assert sent.is_set()
    if core.complete:  # the certification ended before the signal was polled
        return
    assert core.status == "interrupted" and not core.stats["certified"]
    assert core.lower_bound <= core.optimum and core.optimal_tree is not None
    rs = RashomonSet(core)
    assert core.optimal_tree in rs and 1 <= rs.count() <= core.count_upper_bound
    for index in range(min(rs.count(), 50)):
        assert metrics.objective(rs[index], data, lam=0.005) <= core.bound + 1e-9

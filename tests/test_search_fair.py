"""search_tree(fairness=...): the native fair DP against the brute-force fair oracle, the
worked example of docs/formulations-trees.md §7.5, the unconstrained search, its switches and
limits."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
from conftest import sigint_at_first_poll
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from odtkit import Dataset, Fairness, _native, metrics, search_tree
from odtkit.core import SearchOptions
from odtkit.core._problem import build_problem, search_config
from odtkit.core.search import FAIR_BOUNDS
from odtkit.testing import (
    EXAMPLE_TREES_FAIR_OPTIMA,
    EXAMPLE_TREES_PROTECTED,
    brute_force_fair_tree,
    example_dataset_trees,
    random_dataset,
)

NOTIONS = ("sp", "pe", "eopp", "eodds", "csp")
#: δ values that no small instance attains exactly (docs/formulations-trees.md §5.3), and the
#: extremes.
DELTAS = (0.0, 0.1234, 0.3141592, 1.0)


def fairness_for(data: Dataset, notion: str, delta: float, values: int, seed: int) -> Fairness:
    """A statement on random protected values (every value present) for ``data``."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, values, size=data.n_samples)
    a[:values] = np.arange(values)
    legit = rng.integers(0, 2, size=data.n_samples) if notion == "csp" else None
    return Fairness(notion, protected=a, delta=delta, positive_class=1, legit=legit)


def usable_fairness(
    data: Dataset, notion: str, delta: float, values: int, seed: int
) -> Fairness | None:
    """``fairness_for``, falling back to sp when the notion has no pair to constrain, and None
    when not even sp has (no positive row at all)."""
    for name in (notion, "sp"):
        fairness = fairness_for(data, name, delta, values, seed)
        try:
            fairness.groups(data)
        except ValueError:
            continue
        return fairness
    return None


def check_fair_result(result, data: Dataset, fairness: Fairness, lam: float, depth: int) -> None:
    """What every fair answer satisfies, oracle or not."""
    assert result.method == "dp"
    assert result.model.depth <= depth
    assert metrics.objective(result.model, data, lam=lam) == pytest.approx(
        result.objective, abs=1e-9
    )
    assert metrics.is_fair(result.model, data, fairness)
    assert result.stats["fairness_gap"] == pytest.approx(
        metrics.fairness_gap(result.model, data, fairness)
    )
    assert result.lower_bound <= result.objective + 1e-12
    assert list(result.trace.columns) == ["time", "incumbent", "bound"]
    assert (np.diff(result.trace["incumbent"]) <= 1e-12).all()
    if result.status == "optimal":
        assert result.lower_bound == pytest.approx(result.objective, abs=1e-12)


# --------------------------------------------------------------------------------------------
# the worked example (docs/formulations-trees.md §7.5)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("notion", "delta"), sorted(EXAMPLE_TREES_FAIR_OPTIMA))
def test_section_7_5(notion: str, delta: float) -> None:
    data = example_dataset_trees()
    fairness = Fairness(notion, protected=EXAMPLE_TREES_PROTECTED, delta=delta)
    for lam, expected in zip((0.1, 0.0), EXAMPLE_TREES_FAIR_OPTIMA[notion, delta], strict=True):
        result = search_tree(data, lam=lam, max_depth=1, fairness=fairness)
        assert result.status == "optimal"
        assert result.objective == pytest.approx(expected, abs=1e-12)
        check_fair_result(result, data, fairness, lam, 1)


def test_section_7_5_stump_is_found_when_delta_allows_it() -> None:
    data = example_dataset_trees()
    fairness = Fairness("sp", protected=EXAMPLE_TREES_PROTECTED, delta=0.4)
    result = search_tree(data, lam=0.1, max_depth=1, fairness=fairness)
    assert result.model.feature == 0  # the stump x1: (0, 1), disparity 1/3
    assert result.stats["fairness_gap"] == pytest.approx(1 / 3)
    # δ = 0.2 < 1/3: the stump is out, the leaf (disparity 0) is the fair optimum
    tight = search_tree(data, lam=0.1, max_depth=1, fairness=fairness.replace(delta=0.2))
    assert tight.model.is_leaf and tight.stats["fairness_gap"] == 0.0


# --------------------------------------------------------------------------------------------
# against the brute-force oracle
# --------------------------------------------------------------------------------------------


def compare_with_oracle(data, fairness, lam, depth, bounds=None) -> None:
    _, expected = brute_force_fair_tree(data, fairness, lam=lam, max_depth=depth)
    result = search_tree(
        data, lam=lam, max_depth=depth, fairness=fairness, options=SearchOptions(bounds=bounds)
    )
    assert result.status == "optimal"
    assert result.objective == pytest.approx(expected, abs=1e-9), (fairness.notion, bounds)
    check_fair_result(result, data, fairness, lam, depth)


@st.composite
def fair_instances(draw, max_samples: int = 12, max_features: int = 4, max_depth: int = 3):
    seed = draw(st.integers(0, 10_000))
    data = random_dataset(
        seed,
        n_samples=draw(st.integers(4, max_samples)),
        n_features=draw(st.integers(1, max_features)),
        n_classes=draw(st.sampled_from((2, 2, 3))),
        weighted=draw(st.booleans()),
    )
    notion = draw(st.sampled_from(NOTIONS))
    values = draw(st.sampled_from((2, 2, 3)))
    delta = draw(st.sampled_from(DELTAS))
    fairness = usable_fairness(data, notion, delta, values, seed)
    assume(fairness is not None)
    lam = draw(st.sampled_from((0.0, 0.0, 0.02, 0.07)))
    depth = draw(st.integers(1, max_depth))
    return data, fairness, lam, depth


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fair_instances())
def test_matches_the_oracle(instance) -> None:
    compare_with_oracle(*instance)


def defined_rate_gaps(tree, data: Dataset, fairness: Fairness) -> list[float]:
    """Rate differences recomputed from scratch (not from ``Fairness.groups``): for every pair
    of protected values and every label set of the notion in which both groups have rows."""
    a = np.asarray(fairness.protected)
    positive = data.y == list(data.classes).index(fairness.positive_class)
    predicted = tree.predict(data.X) == list(data.classes).index(fairness.positive_class)
    sets = {"pe": [~positive], "eopp": [positive], "eodds": [~positive, positive]}
    w = data.weights
    gaps = []
    values = np.unique(a)
    for i, va in enumerate(values):
        for vb in values[i + 1 :]:
            for rows in sets[fairness.notion]:
                first, second = rows & (a == va), rows & (a == vb)
                if w[first].sum() > 0 and w[second].sum() > 0:
                    rate = [np.average(predicted[s], weights=w[s]) for s in (first, second)]
                    gaps.append(abs(rate[0] - rate[1]))
    return gaps


@st.composite
def one_sided_group_instances(draw):
    """Three protected groups, one of which holds only positive or only negative rows."""
    seed = draw(st.integers(0, 10_000))
    base = random_dataset(
        seed,
        n_samples=draw(st.integers(6, 12)),
        n_features=draw(st.integers(1, 4)),
        weighted=draw(st.booleans()),
    )
    a = np.random.default_rng(seed).integers(0, 3, size=base.n_samples)
    a[:3] = np.arange(3)
    y = base.y.copy()
    y[a == 2] = draw(st.sampled_from((0, 1)))  # group 2: one label only
    assume((y == 1).any() and (y == 0).any())
    data = Dataset.from_arrays(base.X, y, sample_weight=base.sample_weight)
    notion = draw(st.sampled_from(("pe", "eopp", "eodds")))
    fairness = Fairness(notion, protected=a, delta=draw(st.sampled_from(DELTAS)))
    try:
        fairness.groups(data)
    except ValueError:
        assume(False)
    return data, fairness, draw(st.sampled_from((0.0, 0.02, 0.07))), draw(st.integers(1, 3))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_sided_group_instances())
def test_groups_without_positives_or_negatives_match_the_oracle(instance) -> None:
    """Issue 22: eodds dropped the defined half of a pair whose group lacked positives."""
    data, fairness, lam, depth = instance
    compare_with_oracle(data, fairness, lam, depth)
    tree = search_tree(data, lam=lam, max_depth=depth, fairness=fairness).model
    assert max(defined_rate_gaps(tree, data, fairness), default=0.0) <= fairness.delta + 1e-9


@pytest.mark.parametrize("seed", range(24))
def test_matches_the_oracle_on_unit_weights_and_one_pair(seed: int) -> None:
    # the fast path: unit weights (integer disparity sums), one binary pair, the shortcut off so
    # that the front search itself is exercised at every depth
    data = random_dataset(seed, n_samples=12, n_features=4)
    fairness = usable_fairness(data, ("sp", "pe", "eopp")[seed % 3], DELTAS[seed % 4], 2, seed)
    # the 24 seeds are fixed and each has a positive row: a test that skipped here would test
    # nothing without saying so
    assert fairness is not None, f"seed {seed}: no positive row"
    lam = (0.0, 0.01, 0.05)[seed % 3]
    for depth in (1, 2, 3):
        compare_with_oracle(data, fairness, lam, depth, bounds={"shortcut": False})


@pytest.mark.parametrize("switch", FAIR_BOUNDS)
def test_each_switch_off_keeps_the_optimum(switch: str) -> None:
    for seed in range(10):
        data = random_dataset(100 + seed, n_samples=11, n_features=4, weighted=seed % 2 == 1)
        fairness = usable_fairness(data, ("sp", "eodds")[seed % 2], 0.1234, 2 + seed % 2, seed)
        if fairness is None:
            continue
        compare_with_oracle(data, fairness, 0.02 * (seed % 2), 3, bounds={switch: False})


def test_all_pruning_off_keeps_the_optimum() -> None:
    off = dict.fromkeys(FAIR_BOUNDS, False)
    for seed in range(8):
        data = random_dataset(200 + seed, n_samples=10, n_features=3, n_classes=2 + seed % 2)
        fairness = usable_fairness(data, "sp", 0.3141592, 2, seed)
        if fairness is not None:
            compare_with_oracle(data, fairness, 0.0, 2, off)


@pytest.mark.parametrize(
    ("depth", "bounds"),
    [
        (4, {"shortcut": False}),  # Lagrangian cuts on depth-3 root children
        (4, {"shortcut": False, "lagrangian": False}),  # the generic recursion
        (5, {"shortcut": False}),  # the generic recursion below depth-4 root children
    ],
)
def test_deeper_trees(depth: int, bounds: dict[str, bool]) -> None:
    for seed in range(6):
        data = random_dataset(300 + seed, n_samples=12, n_features=4 + seed % 2)
        fairness = usable_fairness(data, ("sp", "eopp")[seed % 2], 0.1234, 2, seed)
        if fairness is not None:
            compare_with_oracle(data, fairness, (0.0, 0.01)[seed % 2], depth, bounds=bounds)


def test_delta_one_is_the_unconstrained_optimum() -> None:
    for seed in range(12):
        data = random_dataset(400 + seed, n_samples=12, n_features=4, weighted=seed % 3 == 0)
        fairness = usable_fairness(data, NOTIONS[seed % 4], 1.0, 2 + seed % 2, seed)
        if fairness is None:
            continue
        for lam, depth in ((0.0, 2), (0.03, 3)):
            fair = search_tree(data, lam=lam, max_depth=depth, fairness=fairness)
            free = search_tree(data, lam=lam, max_depth=depth)
            assert fair.objective == pytest.approx(free.objective, abs=1e-12)
            assert fair.stats["shortcut"] == 1.0


def test_weights_are_respected() -> None:
    # integer weights behave like duplicated rows, fractional ones use the double path
    for seed in range(6):
        data = random_dataset(500 + seed, n_samples=10, n_features=3, weighted=True)
        rows = np.repeat(np.arange(data.n_samples), data.weights.astype(int))
        a = np.random.default_rng(seed).integers(0, 2, size=data.n_samples)
        a[:2] = [0, 1]
        dup = Dataset(data.X[rows], data.y[rows], data.classes, data.feature_names, "dup")
        weighted = search_tree(
            data, lam=0.0, max_depth=2, fairness=Fairness("sp", protected=a, delta=0.1234)
        )
        repeated = search_tree(
            dup, lam=0.0, max_depth=2, fairness=Fairness("sp", protected=a[rows], delta=0.1234)
        )
        assert weighted.objective == pytest.approx(repeated.objective, abs=1e-12)
        scaled = Dataset(data.X, data.y, data.classes, data.feature_names, "x", data.weights * 0.37)
        fairness = Fairness("sp", protected=a, delta=0.1234)
        compare_with_oracle(scaled, fairness, 0.01, 2, bounds={"shortcut": False})


def test_front_statistics_are_reported() -> None:
    data = random_dataset(7, n_samples=12, n_features=4)
    fairness = usable_fairness(data, "sp", 0.0, 2, 7)
    assert fairness is not None
    result = search_tree(
        data,
        lam=0.0,
        max_depth=3,
        fairness=fairness,
        options=SearchOptions(bounds={"shortcut": False}),
    )
    for key in ("front_max", "front_mean", "fronts_built", "n_pairs", "presolve_objective"):
        assert key in result.stats
    assert result.stats["n_pairs"] == 1.0


# --------------------------------------------------------------------------------------------
# limits: a fair tree and a valid bound, whatever stops the search
# --------------------------------------------------------------------------------------------


def hard_instance(seed: int = 3) -> tuple[Dataset, Fairness, float]:
    """An oracle-sized instance whose unconstrained optimum is unfair (no shortcut)."""
    for s in range(seed, seed + 200):
        data = random_dataset(s, n_samples=12, n_features=4)
        fairness = usable_fairness(data, "sp", 0.0, 2, s)
        if fairness is None:
            continue
        free = search_tree(data, lam=0.0, max_depth=3)
        if not metrics.is_fair(free.model, data, fairness):
            _, optimum = brute_force_fair_tree(data, fairness, lam=0.0, max_depth=3)
            if optimum > free.objective + 1e-9:
                return data, fairness, optimum
    raise AssertionError("no instance found")


def test_node_limits_give_a_fair_tree_and_a_valid_bound() -> None:
    data, fairness, optimum = hard_instance()
    seen = set()
    for node_limit in (1, 2, 3, 5, 8, 13, 21, 34, 55, 89):
        result = search_tree(
            data,
            lam=0.0,
            max_depth=3,
            fairness=fairness,
            options=SearchOptions(node_limit=node_limit),
        )
        seen.add(str(result.status))
        check_fair_result(result, data, fairness, 0.0, 3)
        assert result.lower_bound <= optimum + 1e-12
        assert result.objective >= optimum - 1e-12
        if result.status == "node_limit":
            assert result.n_explored <= node_limit
        else:
            assert result.status == "optimal"
            assert result.objective == pytest.approx(optimum, abs=1e-12)
    assert "node_limit" in seen


def test_time_and_memory_limits_give_a_fair_tree_and_a_valid_bound() -> None:
    data, fairness, optimum = hard_instance()
    for limits, status in (
        ({"time_limit": 1e-9}, "time_limit"),
        ({"memory_limit_mb": 1e-6}, "memory_limit"),
    ):
        result = search_tree(data, lam=0.0, max_depth=3, fairness=fairness, **limits)
        assert result.status == status
        check_fair_result(result, data, fairness, 0.0, 3)
        assert result.lower_bound <= optimum + 1e-12


def slow_instance() -> tuple[Dataset, Fairness]:
    """Large enough that the fair phase itself runs for seconds at depth 4."""
    rng = np.random.default_rng(0)
    X = rng.random((3000, 30)) < 0.5
    y = (X[:, 0] ^ X[:, 1] ^ (rng.random(3000) < 0.2)).astype(int)
    a = (X[:, 2] ^ (rng.random(3000) < 0.3)).astype(int)
    return Dataset.from_arrays(X, y), Fairness("sp", protected=a, delta=0.001)


def test_time_limit_inside_the_front_search() -> None:
    # the fair phase itself is stopped; the bound must stay below the optimum
    data, fairness = slow_instance()
    free = search_tree(data, lam=0.0, max_depth=4)
    # a limit past the unconstrained phase (its time here, x2 for a loaded machine) but inside
    # the fair one, which runs for seconds
    limit = 2 * free.time + 0.2
    result = search_tree(data, lam=0.0, max_depth=4, fairness=fairness, time_limit=limit)
    assert result.status in ("time_limit", "optimal")
    check_fair_result(result, data, fairness, 0.0, 4)
    assert result.lower_bound >= free.objective - 1e-12  # at least the unconstrained bound


@pytest.mark.skipif(os.name != "posix", reason="needs SIGINT delivery")
def test_ctrl_c_gives_interrupted_with_a_fair_tree() -> None:
    data, fairness = slow_instance()
    before = signal.getsignal(signal.SIGINT)
    # the signal goes out from the fair DP's first poll for Ctrl-C: inside the search, on any
    # machine (the instance runs for seconds)
    with sigint_at_first_poll(_native, "search_fair_dp", progress_at=5) as sent:
        result = search_tree(data, lam=0.0, max_depth=4, fairness=fairness, time_limit=20)
    assert signal.getsignal(signal.SIGINT) is before
    assert sent.is_set(), "the fair DP never polled for Ctrl-C"
    assert result.status == "interrupted"
    check_fair_result(result, data, fairness, 0.0, 4)


# --------------------------------------------------------------------------------------------
# bad arguments
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"fairness": "sp"}, TypeError, "fairness"),
        ({"method": "bnb"}, ValueError, "method"),
        ({"strategy": "queue"}, ValueError, "strategy"),
        ({"max_depth": None}, ValueError, "max_depth"),
        ({"upper_bound": 0.5}, ValueError, "upper_bound"),
        ({"bounds": {"depth2": False}}, ValueError, "bound"),
        ({"bounds": {"window": 0}}, TypeError, "window"),
        ({"node_limit": 0}, ValueError, "node_limit"),
        ({"lam": -1.0}, ValueError, "lam"),
    ],
)
def test_bad_arguments(kwargs, error, match) -> None:
    data = example_dataset_trees()
    call = {
        "lam": 0.0,
        "max_depth": 2,
        "fairness": Fairness("sp", protected=EXAMPLE_TREES_PROTECTED, delta=0.1),
    }
    call.update(kwargs)
    with pytest.raises(error, match=match):
        search_tree(data, **call)


def test_fairness_of_another_dataset_is_refused() -> None:
    data = example_dataset_trees()
    other = random_dataset(1, n_samples=9, n_features=2)
    groups = Fairness("sp", protected=np.arange(9) % 2).groups(other)
    with pytest.raises(ValueError, match="another dataset"):
        search_tree(data, lam=0.0, max_depth=1, fairness=groups)
    with pytest.raises(ValueError, match="rows"):
        search_tree(data, lam=0.0, max_depth=1, fairness=Fairness("sp", protected=[0, 1, 0]))


def test_native_arguments_are_checked() -> None:
    data = example_dataset_trees()
    problem = build_problem(data)
    config = search_config(
        0.0, time_limit=None, node_limit=None, memory_limit_mb=None, bounds={}, max_depth=1
    )
    coef = np.ascontiguousarray(
        Fairness("sp", protected=EXAMPLE_TREES_PROTECTED).groups(data).coefficients
    )
    with pytest.raises(ValueError, match="one row per sample"):
        _native.search_fair_dp(problem, coef[:3], 0.1, 1, config)
    with pytest.raises(ValueError, match="delta"):
        _native.search_fair_dp(problem, coef, 1.5, 1, config)
    with pytest.raises(ValueError, match="positive_code"):
        _native.search_fair_dp(problem, coef, 0.1, 2, config)
    with pytest.raises(TypeError):
        _native.search_fair_dp(problem, coef.astype(np.float32), 0.1, 1, config)
    bad = coef.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        _native.search_fair_dp(problem, bad, 0.1, 1, config)
    config.max_depth = -1
    with pytest.raises(ValueError, match="max_depth"):
        _native.search_fair_dp(problem, coef, 0.1, 1, config)


# --------------------------------------------------------------------------------------------
# slow: wider random instances
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fair_instances(max_samples=14, max_features=5, max_depth=4))
def test_matches_the_oracle_wide(instance) -> None:
    data, fairness, lam, depth = instance
    compare_with_oracle(data, fairness, lam, depth, bounds={"shortcut": False})

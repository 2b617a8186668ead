"""CORELS rule-list search against the rule-list oracle, worked examples and anytime invariants."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import sigint_inside
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import _native, datasets, metrics
from odtkit.core import search_rule_list
from odtkit.core.rules import RULE_BOUNDS, RULE_POLICIES, SYMMETRY_MAPS, mine_antecedents
from odtkit.datasets import Dataset
from odtkit.results import Result
from odtkit.rulelist import RuleList
from odtkit.testing import (
    LAMBDAS,
    brute_force_rule_list,
    example_dataset_a,
    random_dataset,
)

EXAMPLE_A_ANTECEDENTS = [
    [(0, 1)],
    [(0, 0)],
    [(1, 1)],
    [(1, 0)],
    [(2, 1)],
    [(0, 1), (1, 1)],
    [(0, 0), (1, 0)],
]


def random_antecedents(rng: np.random.Generator, n_features: int, count: int) -> list:
    """Random conjunctions of 1-2 literals on distinct features (duplicates allowed)."""
    out = []
    for _ in range(count):
        size = int(rng.integers(1, min(2, n_features) + 1))
        features = rng.choice(n_features, size=size, replace=False)
        out.append([(int(f), int(rng.integers(0, 2))) for f in features])
    return out


def instance(seed: int, weighted: bool = False) -> tuple[Dataset, list, float]:
    rng = np.random.default_rng(seed)
    data = random_dataset(
        seed,
        n_samples=int(rng.integers(3, 40)),
        n_features=int(rng.integers(1, 5)),
        weighted=weighted,
    )
    ants = random_antecedents(rng, data.n_features, int(rng.integers(1, 6)))
    lam = float(rng.choice(LAMBDAS))
    return data, ants, lam


def check_result(result: Result, data: Dataset, lam: float) -> None:
    assert isinstance(result.model, RuleList)
    assert result.objective == pytest.approx(
        metrics.objective(result.model, data, lam=lam), abs=1e-12
    )
    assert result.lower_bound <= result.objective + 1e-12
    assert list(result.trace.columns) == ["time", "incumbent", "bound"]
    assert (np.diff(result.trace["incumbent"]) <= 1e-12).all()
    assert (result.trace["bound"] <= result.trace["incumbent"] + 1e-12).all()


@pytest.mark.parametrize("lam, expected", [(0.01, 0.131111), (0.1, 0.311111), (0.2, 0.422222)])
@pytest.mark.parametrize("policy", RULE_POLICIES)
@pytest.mark.parametrize("symmetry", SYMMETRY_MAPS)
def test_example_a_values(lam: float, expected: float, policy: str, symmetry: str) -> None:
    """docs/formulations-search-and-pruning.md §6.3 rule-list values with the given antecedents,
    for every policy and map."""
    data = example_dataset_a()
    result = search_rule_list(
        data, lam=lam, antecedents=EXAMPLE_A_ANTECEDENTS, policy=policy, symmetry=symmetry
    )
    assert result.status == "optimal"
    assert result.objective == pytest.approx(expected, abs=1e-6)
    assert result.lower_bound == result.objective
    check_result(result, data, lam)
    _, oracle = brute_force_rule_list(
        data, lam=lam, antecedents=EXAMPLE_A_ANTECEDENTS, max_length=len(EXAMPLE_A_ANTECEDENTS)
    )
    assert result.objective == pytest.approx(oracle, abs=1e-9)


def test_example_a_list() -> None:
    """At lam = 0.2 the unique optimum is 'x1=0 and x2=0 -> 0, else 1' (2 mistakes)."""
    data = example_dataset_a()
    result = search_rule_list(data, lam=0.2, antecedents=EXAMPLE_A_ANTECEDENTS)
    assert result.model == RuleList([([(0, 0), (1, 0)], 0)], 1)
    assert metrics.misclassified(result.model, data) == 2


@pytest.mark.parametrize("seed", range(120))
def test_matches_oracle_random(seed: int) -> None:
    data, ants, lam = instance(seed, weighted=seed % 3 == 0)
    policy = RULE_POLICIES[seed % len(RULE_POLICIES)]
    symmetry = SYMMETRY_MAPS[(seed // 5) % len(SYMMETRY_MAPS)]
    result = search_rule_list(data, lam=lam, antecedents=ants, policy=policy, symmetry=symmetry)
    _, oracle = brute_force_rule_list(data, lam=lam, antecedents=ants, max_length=len(ants))
    assert result.status == "optimal"
    assert result.objective == pytest.approx(oracle, abs=1e-9)
    check_result(result, data, lam)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("bound", [*RULE_BOUNDS, "all"])
def test_bounds_off_never_change_optimum(seed: int, bound: str) -> None:
    data, ants, lam = instance(1000 + seed)
    switches = dict.fromkeys(RULE_BOUNDS, False) if bound == "all" else {bound: False}
    result = search_rule_list(
        data, lam=lam, antecedents=ants, bounds=switches, symmetry=SYMMETRY_MAPS[seed % 3]
    )
    _, oracle = brute_force_rule_list(data, lam=lam, antecedents=ants, max_length=len(ants))
    assert result.objective == pytest.approx(oracle, abs=1e-9)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    policy=st.sampled_from(RULE_POLICIES),
    symmetry=st.sampled_from(SYMMETRY_MAPS),
    weighted=st.booleans(),
)
def test_matches_oracle_hypothesis(seed: int, policy: str, symmetry: str, weighted: bool) -> None:
    data, ants, lam = instance(seed, weighted)
    result = search_rule_list(data, lam=lam, antecedents=ants, policy=policy, symmetry=symmetry)
    _, oracle = brute_force_rule_list(data, lam=lam, antecedents=ants, max_length=len(ants))
    assert result.objective == pytest.approx(oracle, abs=1e-9)
    check_result(result, data, lam)


@pytest.mark.parametrize("seed", range(30))
def test_matrix_antecedents_equal_literals(seed: int) -> None:
    """Passing the truth table as a matrix gives the same optimum; the list predicts from it."""
    data, ants, lam = instance(2000 + seed)
    truth = np.column_stack(
        [np.all(data.X[:, [f for f, _ in a]] == [v for _, v in a], axis=1) for a in ants]
    )
    by_matrix = search_rule_list(data, lam=lam, antecedents=truth)
    by_literals = search_rule_list(data, lam=lam, antecedents=ants)
    assert by_matrix.objective == pytest.approx(by_literals.objective, abs=1e-12)
    on_matrix = Dataset(truth, data.y, data.classes, tuple(f"a{r}" for r in range(truth.shape[1])))
    assert metrics.objective(by_matrix.model, on_matrix, lam=lam) == pytest.approx(
        by_matrix.objective
    )
    _, oracle = brute_force_rule_list(data, lam=lam, antecedents=truth, max_length=truth.shape[1])
    assert by_matrix.objective == pytest.approx(oracle, abs=1e-9)


@pytest.mark.parametrize("seed", range(30))
def test_mining_with_min_support_lam_is_lossless(seed: int) -> None:
    """Filtering antecedents at support lam (Thms 10, 21) never changes the optimum."""
    data = random_dataset(3000 + seed, n_features=3)
    lam = float(LAMBDAS[seed % len(LAMBDAS)])
    filtered = search_rule_list(data, lam=lam, max_cardinality=2)
    _, everything = mine_antecedents(data.X, 2, 0.0)
    unfiltered = search_rule_list(data, lam=lam, antecedents=everything)
    assert filtered.objective == pytest.approx(unfiltered.objective, abs=1e-9)
    assert filtered.stats["n_antecedents"] <= everything.shape[1]


def test_mining_is_exhaustive_and_deduplicated() -> None:
    rng = np.random.default_rng(7)
    X = rng.random((50, 4)) < 0.5
    ants, truth = mine_antecedents(X, 2, 0.0)
    # every kept column is the conjunction it names, and no two columns are equal
    for a, col in zip(ants, truth.T, strict=True):
        assert np.array_equal(col, np.all(X[:, [f for f, _ in a]] == [v for _, v in a], axis=1))
    assert len({col.tobytes() for col in truth.T}) == truth.shape[1]
    # every conjunction of <= 2 literals with support in (0, 1] is represented
    seen = {col.tobytes() for col in truth.T}
    for f in range(4):
        for v in (0, 1):
            col = X[:, f] == v
            if col.any():
                assert col.tobytes() in seen
            for g in range(f + 1, 4):
                for u in (0, 1):
                    col2 = col & (X[:, g] == u)
                    if col2.any():
                        assert col2.tobytes() in seen
    # support filter
    ants_f, truth_f = mine_antecedents(X, 2, 0.2)
    support = truth_f.mean(axis=0)
    assert ((support >= 0.2 - 1e-12) & (support <= 0.8 + 1e-12)).all()


def test_limits_return_valid_lists() -> None:
    data = random_dataset(5, n_samples=40, n_features=6)
    lam = 0.005
    _, oracle_full = None, search_rule_list(data, lam=lam, max_cardinality=2).objective
    for kwargs in (
        {"node_limit": 1},
        {"node_limit": 3},
        {"time_limit": 1e-6},
        {"memory_limit_mb": 1e-6},
    ):
        result = search_rule_list(data, lam=lam, max_cardinality=2, **kwargs)
        check_result(result, data, lam)
        assert result.lower_bound <= oracle_full + 1e-9 <= result.objective + 2e-9
        if result.status != "optimal":
            assert result.status in ("node_limit", "time_limit", "memory_limit")
    assert search_rule_list(data, lam=lam, node_limit=1).status == "node_limit"
    assert search_rule_list(data, lam=lam, memory_limit_mb=1e-6).status == "memory_limit"


def test_limits_share_the_search_contract() -> None:
    # CORELS reads the typed SearchConfig of the tree searches: 0 means "no limit" (no longer
    # -1), node_limit counts expanded prefixes exactly, and the counters stay integers
    data, lam = datasets.load("tic-tac-toe"), 0.01
    free = search_rule_list(data, lam=lam, max_cardinality=1)
    assert free.status == "optimal" and free.n_explored > 5
    assert all(isinstance(v, int) for k, v in free.stats.items() if k != "antecedents")
    limited = search_rule_list(data, lam=lam, max_cardinality=1, node_limit=5)
    assert limited.status == "node_limit" and limited.n_explored == 5
    assert limited.lower_bound <= free.objective + 1e-12 <= limited.objective + 2e-12
    _, truth = mine_antecedents(data.X, 1, lam)
    problem = _native.Problem(truth, data.y.astype(np.int32), np.ones(data.n_samples), 2)
    config = _native.SearchConfig(lam=lam, policy="lower_bound")
    assert (config.time_limit, config.node_limit, config.memory_limit_mb) == (0.0, 0, 0.0)
    raw = _native.search_corels(problem, config)
    assert raw.status.name == "optimal" and raw.n_explored == free.n_explored
    assert raw.objective == pytest.approx(free.objective, abs=1e-12)
    for name, value in (("node_limit", -1), ("time_limit", -1.0), ("memory_limit_mb", -1.0)):
        with pytest.raises(ValueError, match=name):
            _native.search_corels(problem, _native.SearchConfig(lam=lam, **{name: value}))


def test_trace_and_bound_monotone() -> None:
    data = random_dataset(11, n_samples=40, n_features=6)
    result = search_rule_list(data, lam=0.01, max_cardinality=2, policy="bfs")
    assert result.status == "optimal"
    bounds = result.trace["bound"].to_numpy()
    assert (np.diff(bounds) >= -1e-12).all()
    assert result.trace["incumbent"].iloc[-1] == pytest.approx(result.objective)
    assert result.trace["bound"].iloc[-1] == pytest.approx(result.objective)


def test_single_class_and_constant_features() -> None:
    X = np.zeros((6, 2), dtype=bool)
    data = Dataset.from_arrays(X, np.zeros(6, dtype=int))
    result = search_rule_list(data, lam=0.01)
    assert result.objective == 0.0 and result.model.n_rules == 0


def test_bad_input() -> None:
    data = example_dataset_a()
    with pytest.raises(ValueError, match="binary labels"):
        search_rule_list(random_dataset(1, n_classes=3), lam=0.1)
    with pytest.raises(ValueError, match="policy"):
        search_rule_list(data, lam=0.1, policy="random")
    with pytest.raises(ValueError, match="symmetry"):
        search_rule_list(data, lam=0.1, symmetry="mirror")
    with pytest.raises(ValueError, match="unknown bound"):
        search_rule_list(data, lam=0.1, bounds={"permutation": False})
    with pytest.raises(TypeError, match="bounds"):
        search_rule_list(data, lam=0.1, bounds=["support"])
    with pytest.raises(ValueError, match="lam"):
        search_rule_list(data, lam=-1.0)
    with pytest.raises(TypeError, match="max_cardinality"):
        search_rule_list(data, lam=0.1, max_cardinality=1.5)
    with pytest.raises(ValueError, match="min_support"):
        search_rule_list(data, lam=0.1, min_support=0.7)
    with pytest.raises(ValueError, match="node_limit"):
        search_rule_list(data, lam=0.1, node_limit=0)
    with pytest.raises(ValueError, match="one row per sample"):
        search_rule_list(data, lam=0.1, antecedents=np.ones((3, 2), dtype=bool))
    with pytest.raises(ValueError, match="beyond"):
        search_rule_list(data, lam=0.1, antecedents=[[(5, 1)]])
    with pytest.raises(ValueError, match="value"):
        search_rule_list(data, lam=0.1, antecedents=[[(0, 2)]])
    with pytest.raises(TypeError, match="dataset"):
        search_rule_list(data.X, lam=0.1)


def test_native_binding_rejects_bad_arrays() -> None:
    # CORELS takes the shared Problem (antecedents as features) and the typed SearchConfig
    truth = np.ones((4, 2), dtype=bool)
    y = np.zeros(4, dtype=np.int32)
    w = np.ones(4)
    config = _native.SearchConfig(lam=0.1)
    with pytest.raises(TypeError):
        _native.Problem(truth[:, 0], y, w, 2)  # 1-D truth table
    with pytest.raises(ValueError):
        _native.Problem(truth, np.zeros(3, dtype=np.int32), w, 2)
    with pytest.raises(ValueError):
        _native.Problem(truth, np.full(4, 2, dtype=np.int32), w, 2)  # labels must be 0/1
    with pytest.raises(ValueError, match="binary"):
        _native.search_corels(_native.Problem(truth, y, w, 3), config)
    with pytest.raises(ValueError):
        _native.search_corels(
            _native.Problem(truth, y, w, 2), _native.SearchConfig(lam=0.1, policy="nope")
        )
    with pytest.raises(TypeError):
        _native.search_corels(_native.Problem(truth, y, w, 2), {"lam": 0.1})  # untyped config


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(600))
def test_matches_oracle_slow(seed: int) -> None:
    data, ants, lam = instance(10_000 + seed, weighted=seed % 2 == 0)
    _, oracle = brute_force_rule_list(data, lam=lam, antecedents=ants, max_length=len(ants))
    for policy in RULE_POLICIES:
        for symmetry in SYMMETRY_MAPS:
            result = search_rule_list(
                data, lam=lam, antecedents=ants, policy=policy, symmetry=symmetry
            )
            assert result.objective == pytest.approx(oracle, abs=1e-9)


def test_interrupt_returns_incumbent() -> None:
    """SIGINT during the native search: status 'interrupted', a valid list and bound."""
    import signal

    rng = np.random.default_rng(1)
    X = rng.random((2000, 12)) < 0.5
    y = (X[:, 0] ^ X[:, 1] ^ (rng.random(2000) < 0.3)).astype(int)
    data = Dataset.from_arrays(X, y)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        # the signal goes out once the native search runs (a timer raced its set-up)
        with sigint_inside(_native, "search_corels"):
            result = search_rule_list(data, lam=0.001, time_limit=20, memory_limit_mb=1000)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.status in ("interrupted", "optimal")
    check_result(result, data, 0.001)

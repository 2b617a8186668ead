"""Partial Rashomon sets (issue 42): a build stopped anywhere keeps what it found.

A build stopped by ``node_limit`` (a deterministic point), ``time_limit`` or
``memory_limit_mb`` must hold the optimal tree (when the search certified it), only trees
within the bound, an exact count of them and an upper bound on the full set's size; membership
and ``index`` must be decided from the tree itself, never by listing the set. The truth is the
brute-force oracle (:func:`odtkit.testing.brute_force_rashomon_set`) on tiny tables and the
unlimited build (checked against the oracle in tests/test_rashomon.py) on larger ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from odtkit import metrics, testing
from odtkit.core.rashomon import RashomonProblem, build_rashomon, count_upper_bound
from odtkit.datasets import Dataset
from odtkit.rashomon import RashomonSet, rashomon
from odtkit.tree import Tree

#: node limits tried on every drawn problem (then doubled until the build completes)
_LIMITS = (1, 2, 3, 4, 6, 9, 14, 20, 30)


def _check_partial(rs: RashomonSet, data: Dataset, truth: list[Tree] | None) -> list[Tree]:
    """The invariants of any set, partial or not; returns its trees."""
    trees = list(rs)
    n = rs.count()
    assert len(trees) == n and len(set(trees)) == n  # the count is exact, no tree twice
    assert sum(rs.objective_histogram()["count"]) == n
    if n:
        rescored = np.array([metrics.objective(t, data, lam=rs.lam) for t in trees])
        assert (rescored <= rs.bound + 1e-9).all()
        np.testing.assert_allclose(rs.core.objectives(0, n), rescored, atol=1e-9, rtol=0)
    if rs.stats["certified"]:
        assert rs.optimal_tree is not None
        assert rs.optimal_tree in rs and rs.optimal_tree in trees
        assert metrics.objective(trees[0], data, lam=rs.lam) == pytest.approx(rs.optimum, abs=1e-9)
    assert rs.count_upper_bound() >= n
    if truth is not None:
        assert set(trees) <= set(truth)
        assert rs.count_upper_bound() >= len(truth)
        listed = {tree: i for i, tree in enumerate(trees)}
        # members and non-members of the partial set alike (a spread of the truth's order)
        step = max(1, len(truth) // 40)
        for tree in truth[::step]:
            # membership by the tree itself, and its position without listing
            assert (tree in rs) == (tree in listed)
            if tree in listed:
                assert rs.index(tree) == listed[tree]
            else:
                with pytest.raises(ValueError):
                    rs.index(tree)
    for j in range(data.n_features):
        assert rs.core.count_without(j) == sum(j not in t.features_used() for t in trees)
    return trees


#: the oracle lists at most this many trees per drawn problem (keeps the test fast)
_ORACLE_CAP = 3_000
#: memory budget of a listable reference set (a count-only set needs far less)
_LISTED_MB = 256


@st.composite
def _problems(draw: st.DrawFn) -> tuple[Dataset, dict]:
    p = draw(st.sampled_from([2, 3, 3, 4]))
    n = draw(st.sampled_from([6, 8, 10, 12]))
    K = draw(st.sampled_from([2, 2, 3]))
    data = testing.random_dataset(draw(st.integers(0, 2**32 - 1)), n, p, n_classes=K)
    problem = {
        "lam": draw(st.sampled_from([0.0, 0.01, 1 / 12, 0.1])),
        "max_depth": draw(st.sampled_from([1, 2, 3])),
        "epsilon": draw(st.sampled_from([0.05, 0.2, 0.5, 2.0])),
        "leaves": draw(st.sampled_from(["any", "majority"])),
    }
    return data, problem


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_problems())
def test_a_build_stopped_at_any_node_keeps_the_optimum_and_only_members(drawn):
    data, problem = drawn
    oracle = testing.brute_force_rashomon_set(data, **problem)
    truth = [tree for tree, _ in oracle]
    if len(truth) > _ORACLE_CAP:
        event("too many to check tree by tree")
        return
    problems = RashomonProblem(data, **problem)
    limits = list(_LIMITS)
    limit = 1
    while True:
        limit = limits.pop(0) if limits else 2 * limit
        rs = RashomonSet(build_rashomon(problems, node_limit=limit))
        _check_partial(rs, data, truth)
        if rs.complete:
            assert rs.count() == len(truth) == rs.count_upper_bound()
            break
        assert rs.status == "node_limit" and rs.count() >= 1
        event(f"stopped with {rs.count()} of {len(truth)}")


def test_the_upper_bound_counts_every_tree_of_the_space_without_a_bound():
    # lam = 0 and a huge epsilon: the set is the whole admissible space, the bound's count
    # (no admissibility) is at least that
    data = testing.random_dataset(3, 12, 3, n_classes=2)
    for depth in (1, 2, 3):
        problem = RashomonProblem(data, lam=0.0, max_depth=depth, epsilon=100.0)
        full = rashomon(data, lam=0.0, max_depth=depth, epsilon=100.0)
        assert count_upper_bound(problem, full.bound) >= full.count()
        assert full.count_upper_bound() == full.count()
    # every structure is distinct features per path: depth 1 on p = 3, K = 2 is 2 + 3 * 4
    problem = RashomonProblem(data, lam=0.0, max_depth=1, epsilon=100.0)
    assert count_upper_bound(problem, 1.0) == 14


def test_the_upper_bound_uses_lambda_to_cap_the_leaves():
    data = testing.random_dataset(4, 40, 6, n_classes=2)
    problem = RashomonProblem(data, lam=0.3, max_depth=4, epsilon=0.0)
    # objective <= 0.5 leaves at most one leaf: the K single leaves
    assert count_upper_bound(problem, 0.5) == 2


@pytest.mark.parametrize("time_limit", [0.02, 0.05, 0.1, 0.3])
def test_time_limits_keep_the_certified_optimum(time_limit):
    # the dp certifies OPT fast; the build of a huge set at a large epsilon stops part-way
    data, _ = testing.planted_tree_dataset(5, 1_500, 24, 5, 0.15)
    rs = rashomon(data, lam=0.001, max_depth=4, epsilon=0.5, time_limit=time_limit)
    if rs.complete:
        return
    n = rs.count()
    assert n >= 1 or not rs.stats["certified"]
    if rs.stats["certified"]:
        assert rs[0] == rs.optimal_tree or metrics.objective(
            rs[0], data, lam=0.001
        ) == pytest.approx(rs.optimum, abs=1e-9)
        assert rs.optimal_tree in rs
    rng = np.random.default_rng(0)
    for i in {0, n - 1, *rng.integers(0, max(n, 1), size=20).tolist()} if n else ():
        assert metrics.objective(rs[i], data, lam=0.001) <= rs.bound + 1e-9
        assert rs[i] in rs and rs.index(rs[i]) == i
    assert rs.count_upper_bound() >= n


def test_a_memory_limit_stops_inside_a_node_and_keeps_the_optimum():
    # one node of a large-epsilon set gathers millions of blocks: the limit is checked there
    data, _ = testing.planted_tree_dataset(5, 1_500, 24, 5, 0.15)
    rs = rashomon(data, lam=0.001, max_depth=4, epsilon=0.5, memory_limit_mb=8)
    assert not rs.complete and rs.status == "memory_limit"
    assert rs.stats["certified"] and rs.optimal_tree in rs
    assert rs.core.stats["peak_memory_mb"] <= 8 * 1.1
    assert rs.count() >= 1 and rs.count_upper_bound() >= rs.count()
    tree = rs[rs.count() - 1]
    assert metrics.objective(tree, data, lam=0.001) <= rs.bound + 1e-9


def test_membership_of_a_partial_set_is_not_a_scan():
    data, _ = testing.planted_tree_dataset(5, 1_500, 24, 5, 0.15)
    rs = rashomon(data, lam=0.001, max_depth=4, epsilon=0.5, memory_limit_mb=8)
    assert not rs.complete

    def no_listing(*args: object, **kwargs: object) -> None:
        raise AssertionError("membership listed the set")

    rs.__class__ = type("NoIter", (RashomonSet,), {"__iter__": no_listing})
    assert rs.optimal_tree in rs
    # a tree within the bound the build did not reach is not a member of the partial set
    leaf = Tree.leaf(int(np.argmax(np.bincount(data.y))))
    assert (leaf in rs) == (metrics.objective(leaf, data, lam=0.001) <= rs.bound + 1e-9)


@pytest.mark.parametrize("node_limit", [5, 50, 500, 5_000])
def test_a_stopped_build_is_a_subset_of_the_full_set_on_a_larger_table(node_limit):
    # too many trees for the oracle: the unlimited build (the oracle's equal on small tables)
    # is the truth here
    data, _ = testing.planted_tree_dataset(2, 300, 10, 3, 0.2)
    problem = RashomonProblem(data, lam=0.005, max_depth=3, epsilon=0.3)
    full = RashomonSet(build_rashomon(problem))
    assert full.complete and full.count() > 10_000
    rs = RashomonSet(build_rashomon(problem, node_limit=node_limit))
    if rs.complete:
        assert rs.count() == full.count()
        return
    assert rs.optimal_tree in rs and rs.count_upper_bound() >= full.count() >= rs.count()
    n = rs.count()
    rng = np.random.default_rng(node_limit)
    for i in {0, n - 1, *rng.integers(0, n, size=30).tolist()}:
        tree = rs[i]
        assert tree in full and rs.index(tree) == i
        assert metrics.objective(tree, data, lam=0.005) <= rs.bound + 1e-9


# ------------------------------------------------------------------------------ count only
@st.composite
def _count_problems(draw: st.DrawFn) -> tuple[Dataset, dict]:
    n = draw(st.integers(8, 60))
    p = draw(st.integers(2, 6))
    K = draw(st.integers(2, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.random((n, p)) < rng.uniform(0.2, 0.8)
    y = np.where(rng.random(n) < 0.25, rng.integers(0, K, n), (X[:, 0] ^ X[:, 1]).astype(int))
    # integer weights take the dense table, fractional ones the hash map
    kind = draw(st.sampled_from(["none", "integer", "fraction"]))
    weights = {
        "none": None,
        "integer": rng.integers(1, 4, n).astype(float),
        "fraction": rng.random(n) + 0.05,
    }[kind]
    data = Dataset.from_arrays(X, y % K, sample_weight=weights)
    problem = {
        "lam": draw(st.sampled_from([0.0, 0.005, 0.01, 0.03, 0.1])),
        "max_depth": draw(st.sampled_from([1, 2, 3, 4, None] if p <= 4 else [1, 2, 3, 4])),
        "epsilon": draw(st.sampled_from([0.0, 0.05, 0.2, 0.5, 2.0])),
        "leaves": draw(st.sampled_from(["any", "majority"])),
    }
    return data, problem


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_count_problems())
def test_counting_only_gives_the_histogram_of_the_full_build(drawn):
    data, problem = drawn
    # a drawn set can hold ~1e10 trees (5 columns, depth 4, epsilon 2): listed without a limit it
    # grew to the default budget (22 GB here) and stopped; the listable reference gets a small
    # budget and the example is skipped when it does not fit
    full = RashomonSet(build_rashomon(RashomonProblem(data, **problem), memory_limit_mb=_LISTED_MB))
    if not full.complete:
        event("too many trees to list as the reference")
        return
    counted = rashomon(data, **problem, count_only=True)
    assert counted.complete
    assert counted.count() == full.count()
    a, b = full.objective_histogram(), counted.objective_histogram()
    assert a["leaves"].tolist() == b["leaves"].tolist()
    assert a["count"].tolist() == b["count"].tolist()
    np.testing.assert_array_equal(a["misclassified"], b["misclassified"])
    event(f"weights integral={bool(np.all(data.weights == np.round(data.weights)))}")


def test_counting_only_with_a_split_budget_and_huge_counts():
    from odtkit.constraints import MaxLeaves

    data, _ = testing.planted_tree_dataset(1, 200, 8, 3, 0.2)
    for constraints in (None, [MaxLeaves(5)]):
        kwargs = {"lam": 0.0, "max_depth": 4, "epsilon": 10.0, "constraints": constraints}
        full = rashomon(data, **kwargs)
        counted = rashomon(data, **kwargs, count_only=True)
        assert counted.count() == full.count()
        assert (
            counted.objective_histogram()["count"].tolist()
            == full.objective_histogram()["count"].tolist()
        )


def test_a_count_only_set_refuses_to_read_trees_and_a_stopped_one_is_bounded():
    data, _ = testing.planted_tree_dataset(2, 300, 10, 3, 0.2)
    problem = RashomonProblem(data, lam=0.005, max_depth=3, epsilon=0.3)
    full = RashomonSet(build_rashomon(problem))
    counted = RashomonSet(build_rashomon(problem, count_only=True))
    assert counted.count() == full.count()
    for read in (lambda: counted[0], lambda: list(counted), counted.feature_usage):
        with pytest.raises(ValueError, match="count_only"):
            read()
    assert full.optimal_tree in counted  # complete: decided by the objective alone
    for node_limit in (5, 50, 500):
        stopped = RashomonSet(build_rashomon(problem, node_limit=node_limit, count_only=True))
        if stopped.complete:
            continue
        assert 1 <= stopped.count() <= full.count() <= stopped.count_upper_bound()
        with pytest.raises(ValueError, match="count_only"):
            _ = full.optimal_tree in stopped
        listed = RashomonSet(build_rashomon(problem, node_limit=node_limit))
        # the same trees were reached; the optimum counted at most once more
        assert listed.count() - 1 <= stopped.count() <= listed.count()

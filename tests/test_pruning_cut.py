"""IP3 as a minimum cut, the exact cost–error path and budgets from it (§7.11, §8).

Sections are those of docs/formulations-search-and-pruning.md.

Every answer is checked against independent truths: the brute-force oracle over all prunings,
the LP and MIP of IP3, scipy's max-flow on the same network, and :func:`objective_terms`.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.ensemble import BaggingClassifier, ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from odtkit import _native
from odtkit.pruning import (
    CostErrorPath,
    brute_force_prune,
    cost_error_path,
    extract,
    objective_terms,
    prune,
    worked_example,
)
from odtkit.pruning._cut import closure_network, cut_prune, duplicate_examples
from odtkit.results import Status

A = [True, False, False, False, False]  # tree pruned to its root (§8.3)
C = [False, True, False, True, True]  # both splits kept


def _forest(seed, n=30, T=2, depth=2, k=5, kind="rf", classes=2, integer_x=False, zero_costs=False):
    X, y = make_classification(
        n,
        n_features=k,
        n_informative=min(k, 3),
        n_redundant=0,
        n_classes=classes,
        n_clusters_per_class=1,
        random_state=seed,
        flip_y=0.2,
    )
    if integer_x:  # few distinct values: many equal thresholds across trees
        X = np.round(X)
    rng = np.random.default_rng(seed)
    if kind == "rf":
        ens = RandomForestClassifier(T, max_depth=depth, random_state=seed).fit(X, y)
    elif kind == "et":
        ens = ExtraTreesClassifier(T, max_depth=depth, random_state=seed).fit(X, y)
    else:  # bagging with feature subsets: each tree sees its own columns
        ens = BaggingClassifier(
            DecisionTreeClassifier(max_depth=depth),
            n_estimators=T,
            max_features=0.6,
            random_state=seed,
        ).fit(X, y)
    costs = rng.integers(1, 5, size=k).astype(float)
    if zero_costs:
        costs[rng.random(k) < 0.4] = 0.0
    return ens, X, y, costs


def _n_prunings(d):
    from odtkit.pruning._ensemble import enumerate_prunings

    return int(np.prod([len(enumerate_prunings(t)) for t in d.trees], dtype=np.float64))


# ---------------------------------------------------------------------- the native max-flow
def _scipy_max_flow(src, snk, tails, heads):
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    n = src.shape[0]
    s, t = n, n + 1
    big = int(src.sum()) + 1
    rows = np.concatenate([np.full(n, s), np.arange(n), tails])
    cols = np.concatenate([np.arange(n), np.full(n, t), heads])
    caps = np.concatenate([src, snk, np.full(tails.shape[0], big)]).astype(np.int32)
    g = csr_matrix((caps, (rows, cols)), shape=(n + 2, n + 2))
    g.sum_duplicates()
    return maximum_flow(g, s, t).flow_value


def _brute_closure(src, snk, tails, heads):
    n = src.shape[0]
    best = None
    for bits in itertools.product([0, 1], repeat=n):
        x = np.array(bits, dtype=bool)
        if np.any(x[tails] & ~x[heads]):
            continue  # not closed
        value = int(src[~x].sum() + snk[x].sum())
        best = value if best is None else min(best, value)
    return best


def _brute_minimal_side(src, snk, tails, heads):
    """The minimal source side of a minimum cut: the intersection of all minimum closures
    (minimum cuts are closed under intersection, so it is itself one)."""
    n = src.shape[0]
    best, side = None, np.ones(n, dtype=bool)
    for bits in itertools.product([0, 1], repeat=n):
        x = np.array(bits, dtype=bool)
        if np.any(x[tails] & ~x[heads]):
            continue
        value = int(src[~x].sum() + snk[x].sum())
        if best is None or value < best:
            best, side = value, x
        elif value == best:
            side = side & x
    return side


ALGORITHMS = ["dinic", "push_relabel", "boykov_kolmogorov", "auto"]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 9),
    m=st.integers(0, 20),
    seed=st.integers(0, 10_000),
)
@pytest.mark.parametrize("greedy", [True, False])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_closure_min_cut_equals_brute_force_and_scipy(algorithm, greedy, n, m, seed):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 6, size=n) * rng.integers(0, 2, size=n)
    snk = rng.integers(0, 6, size=n) * rng.integers(0, 2, size=n)
    tails = rng.integers(0, n, size=m)
    heads = rng.integers(0, n, size=m)
    src, snk = src.astype(np.int64), snk.astype(np.int64)
    t32, h32 = tails.astype(np.int32), heads.astype(np.int32)
    # greedy: from the greedy start flow (any cycles of "up" links included) or from zero
    out = _native.closure_min_cut(src, snk, t32, h32, algorithm=algorithm, greedy=greedy)
    side = np.asarray(out["source_side"]).astype(bool)
    assert out["status"] == "optimal"
    assert out["algorithm"] in ALGORITHMS[:-1]
    assert out["flow"] == out["cut"] == _brute_closure(src, snk, tails, heads)
    assert out["flow"] == _scipy_max_flow(src, snk, tails, heads)
    assert not np.any(side[tails] & ~side[heads])  # a closure
    assert out["cut"] == int(src[~side].sum() + snk[side].sum())
    # ties go to pruning the same way whatever the algorithm: the minimal source side
    np.testing.assert_array_equal(side, _brute_minimal_side(src, snk, tails, heads))


def _forest_like_network(rng, n_splits=3000, n_pairs=6000, fan=8):
    """A pruning-shaped closure network: random trees of splits (child -> parent) with source
    capacities, each split using ``fan`` random pairs that carry the sink capacities."""
    parent = np.array([rng.integers(0, max(v, 1)) for v in range(1, n_splits)])
    pair_tails = np.repeat(np.arange(n_splits), fan)
    pair_heads = n_splits + rng.integers(0, n_pairs, size=n_splits * fan)
    tails = np.concatenate([np.arange(1, n_splits), pair_tails]).astype(np.int32)
    heads = np.concatenate([parent, pair_heads]).astype(np.int32)
    src = np.zeros(n_splits + n_pairs, np.int64)
    src[:n_splits] = rng.integers(0, 50, n_splits) * rng.integers(0, 2, n_splits)
    snk = np.zeros(n_splits + n_pairs, np.int64)
    snk[n_splits:] = rng.integers(1, 20, n_pairs)
    return src, snk, tails, heads


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_algorithm_gives_dinics_flow_and_minimal_side_on_forest_shaped_networks(seed):
    rng = np.random.default_rng(seed)
    src, snk, tails, heads = _forest_like_network(rng)
    if seed == 2:  # ties everywhere: equal capacities make many minimum cuts
        src[src > 0], snk[:] = 8, np.where(snk > 0, 4, 0)
    ref = _native.closure_min_cut(src, snk, tails, heads, algorithm="dinic", greedy=False)
    assert ref["status"] == "optimal"
    assert ref["flow"] == _scipy_max_flow(src, snk, tails, heads)
    for algorithm in ALGORITHMS:
        for greedy in (True, False):
            out = _native.closure_min_cut(
                src, snk, tails, heads, algorithm=algorithm, greedy=greedy
            )
            assert out["status"] == "optimal" and out["flow"] == out["cut"] == ref["flow"]
            np.testing.assert_array_equal(out["source_side"], ref["source_side"])


@pytest.mark.parametrize("source_scale", [100, 1])
def test_auto_runs_boykov_kolmogorov_when_the_sinks_hold_little_capacity_else_dinic(
    source_scale,
):
    rng = np.random.default_rng(7)
    src, snk, tails, heads = _forest_like_network(rng, 300, 600)
    src *= source_scale
    out = _native.closure_min_cut(src, snk, tails, heads)  # algorithm="auto" by default
    small = snk.sum() < 0.2 * src.sum()
    assert small == (source_scale == 100)  # the two cases lie on either side of the rule
    assert out["algorithm"] == ("boykov_kolmogorov" if small else "dinic")
    assert out["flow"] == _native.closure_min_cut(src, snk, tails, heads, algorithm="dinic")["flow"]
    # no sink capacity at all (lam = 0): the zero flow is one BFS away, Dinic runs
    zero = _native.closure_min_cut(src, snk * 0, tails, heads)
    assert zero["algorithm"] == "dinic" and zero["flow"] == 0


@pytest.mark.parametrize("algorithm", ALGORITHMS[:-1])
def test_a_stopped_max_flow_still_gives_a_closure_and_a_valid_bound(algorithm):
    rng = np.random.default_rng(5)
    src, snk, tails, heads = _forest_like_network(rng, 20_000, 40_000)
    best = _native.closure_min_cut(src, snk, tails, heads, algorithm="dinic")["flow"]
    out = _native.closure_min_cut(src, snk, tails, heads, time_limit=1e-9, algorithm=algorithm)
    assert out["status"] == "time_limit" and out["algorithm"] == algorithm
    side = np.asarray(out["source_side"]).astype(bool)
    assert not np.any(side[tails] & ~side[heads])  # a closure: a valid pruning
    assert out["cut"] == int(src[~side].sum() + snk[side].sum()) >= best
    assert 0 <= out["flow"] <= best  # the flow that reached t is a feasible flow's value


def test_closure_min_cut_rejects_an_unknown_algorithm():
    one = np.ones(2, dtype=np.int64)
    with pytest.raises(ValueError, match="algorithm"):
        _native.closure_min_cut(
            one, one, one[:0].astype(np.int32), one[:0].astype(np.int32), algorithm="simplex"
        )


def test_closure_min_cut_rejects_bad_input():
    one = np.ones(2, dtype=np.int64)
    with pytest.raises(ValueError, match=">= 0"):
        _native.closure_min_cut(-one, one, np.zeros(1, np.int32), np.ones(1, np.int32))
    with pytest.raises(ValueError, match="arc ends"):
        _native.closure_min_cut(one, one, np.zeros(1, np.int32), np.full(1, 5, np.int32))
    with pytest.raises(ValueError, match="one entry per node"):
        _native.closure_min_cut(one, one[:1], np.zeros(0, np.int32), np.zeros(0, np.int32))
    with pytest.raises(ValueError, match="2\\*\\*62"):
        _native.closure_min_cut(one * 2**62, one, np.zeros(0, np.int32), np.zeros(0, np.int32))
    with pytest.raises(TypeError):  # int32 is not converted silently
        _native.closure_min_cut(one.astype(np.int32), one, np.zeros(0, np.int32), one[:0])


# ---------------------------------------------------------------------- worked example (§8)
@pytest.mark.parametrize(
    ("lam", "objective", "leaves"),
    [(0.05, 0.2, C), (0.1, 0.4, C), (0.2, 0.5, A), (0.125, 0.5, A)],
)
def test_worked_example(lam, objective, leaves):
    trees, X, y, costs = worked_example()
    res = prune(trees, X, y, costs=costs, lam=lam)
    assert res.method == "cut" and res.backend == "native"
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(objective, abs=1e-12)
    assert res.lower_bound == res.objective
    assert res.stats["flow"] == res.stats["cut"]
    assert res.stats["cut_objective"] == pytest.approx(res.objective, abs=1e-12)
    # at the three-way tie 1/8 the cut returns the smallest optimal pruning, (A, A')
    for z in res.model.leaves:
        np.testing.assert_array_equal(z, leaves)


def test_worked_example_path_and_budgets():
    trees, X, y, costs = worked_example()
    path = cost_error_path(trees, X, y, costs=costs)
    assert isinstance(path, CostErrorPath) and len(path) == 2
    np.testing.assert_allclose(path.breakpoints, [0.125])
    np.testing.assert_allclose(path.cost_term, [4.0, 0.0])
    np.testing.assert_allclose(path.error_term, [0.0, 0.5])
    frame = path.to_frame(X_test=X, y_test=y)
    assert list(frame.n_leaves) == [6, 2]
    np.testing.assert_allclose(frame.test_feature_cost, frame.cost_term)
    # §8.6: budgets 0 and 4 are hull vertices; 2 and 3 lie between (exact answer 0.25)
    cases = [(0.0, 0.5, "path"), (2.0, 0.25, "lp1"), (3.0, 0.25, "lp1"), (4.0, 0.0, "path")]
    for B, err, how in cases:
        res = prune(trees, X, y, costs=costs, budget=B)
        assert res.status == Status.OPTIMAL and res.method == how
        assert res.objective == pytest.approx(err) and res.model.cost_term <= B + 1e-12
        hull = prune(trees, X, y, costs=costs, budget=B, method="hull")
        assert hull.objective == pytest.approx(0.5 if B < 4 else 0.0)
        assert hull.lower_bound <= err + 1e-12
        assert (hull.status == Status.OPTIMAL) == (hull.objective == pytest.approx(err))


# ---------------------------------------------------------------------- oracle agreement
@pytest.mark.parametrize("seed", range(8))
def test_cut_equals_brute_force_lp_and_mip(seed):
    ens, X, y, costs = _forest(seed, n=25, T=2 + seed % 2, depth=2 + (seed % 3 == 0))
    d = extract(ens, X, y, costs)
    for lam in (0.0, 0.003, 0.02, 0.1, 0.5):
        oracle, _ = brute_force_prune(d, lam=lam)
        cut = prune(d, lam=lam)
        lp = prune(d, lam=lam, method="lp")
        mip = prune(d, lam=lam, method="mip")
        for res in (cut, lp, mip):
            assert res.status == Status.OPTIMAL
            assert res.objective == pytest.approx(oracle, abs=1e-9)
        assert cut.lower_bound == cut.objective
        terms = objective_terms(d, cut.model.leaves, lam=lam)
        assert terms["objective"] == pytest.approx(cut.stats["cut_objective"], abs=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    T=st.integers(1, 3),
    depth=st.integers(1, 3),
    classes=st.integers(2, 3),
    kind=st.sampled_from(["rf", "et", "bagging"]),
    integer_x=st.booleans(),
    zero_costs=st.booleans(),
    lam=st.sampled_from([0.0, 1e-4, 0.003, 0.01, 0.05, 0.2, 1.0]),
)
def test_property_cut_equals_oracle(seed, T, depth, classes, kind, integer_x, zero_costs, lam):
    ens, X, y, costs = _forest(
        seed,
        n=30,
        T=T,
        depth=depth,
        classes=classes,
        kind=kind,
        integer_x=integer_x,
        zero_costs=zero_costs,
    )
    d = extract(ens, X, y, costs)
    if _n_prunings(d) > 20_000:
        return
    oracle, _ = brute_force_prune(d, lam=lam, limit=20_000)
    res = prune(d, lam=lam)
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(oracle, abs=1e-9)
    assert res.lower_bound == res.objective
    # the path's vertex at lam is optimal too
    path = cost_error_path(d)
    j = path.vertex_at(lam)
    assert path.error_term[j] + lam * path.cost_term[j] == pytest.approx(oracle, abs=1e-9)


def test_cut_on_a_larger_forest_matches_the_lp():
    X, y = make_classification(600, 12, n_informative=6, random_state=3)
    ens = RandomForestClassifier(8, max_depth=6, random_state=3).fit(X, y)
    costs = np.random.default_rng(3).uniform(0, 3, 12)
    d = extract(ens, X, y, costs)
    for lam in (1e-4, 1e-3, 1e-2):
        cut, lp = prune(d, lam=lam), prune(d, lam=lam, method="lp")
        assert cut.status == Status.OPTIMAL
        assert cut.objective == pytest.approx(lp.objective, abs=1e-9)
        assert cut.objective - cut.lower_bound <= 1e-9


def test_time_limit_returns_a_valid_pruning_and_bound():
    X, y = make_classification(400, 10, random_state=0)
    ens = RandomForestClassifier(5, max_depth=5, random_state=0).fit(X, y)
    d = extract(ens, X, y)
    res = cut_prune(d, lam=1e-3, time_limit=1e-9)
    assert res.status == Status.TIME_LIMIT
    exact = prune(d, lam=1e-3)
    terms = objective_terms(d, res.model.leaves, lam=1e-3)
    assert res.objective == terms["objective"] >= exact.objective - 1e-12
    assert res.lower_bound <= exact.objective + 1e-12


def test_network_is_built_from_the_arrays():
    ens, X, y, costs = _forest(1, n=40, T=3, depth=3, zero_costs=True)
    d = extract(ens, X, y, costs)
    net = closure_network(d, merge=False)
    n_internal = sum(int((t.left >= 0).sum()) for t in d.trees)
    paid = d.costs[d.pair_feature] > 0
    assert net.n_splits == n_internal and net.n_nodes == n_internal + int(paid.sum())
    # one child->parent arc per non-root internal node, one arc per entry of a paid pair
    assert net.n_arcs == (n_internal - d.n_trees) + int(paid[d.entry_pair].sum())
    assert np.all(net.gain >= 0)


def test_examples_with_identical_paths_are_one_node():
    # integer features: many rows reach the same leaf in every tree
    ens, X, y, costs = _forest(4, n=80, T=3, depth=3, integer_x=True)
    d = extract(ens, X, y, costs)
    rep, weight = duplicate_examples(d)
    leaf = np.stack([t.leaf_of for t in d.trees], axis=1)
    np.testing.assert_array_equal(leaf, leaf[rep])
    # classes are maximal: two representatives never share a leaf tuple
    reps = np.unique(rep)
    assert len({tuple(r) for r in leaf[reps]}) == reps.size
    assert weight.sum() == d.n_samples and np.all(weight[reps] >= 1)
    merged, full = closure_network(d), closure_network(d, merge=False)
    assert merged.n_nodes < full.n_nodes and merged.n_arcs < full.n_arcs
    for lam in (0.0, 0.004, 0.03, 0.2):
        a, b = cut_prune(d, lam=lam, network=merged), cut_prune(d, lam=lam, network=full)
        assert a.status == b.status == Status.OPTIMAL
        assert a.objective == pytest.approx(b.objective, abs=1e-12)
        assert a.objective == pytest.approx(brute_force_prune(d, lam=lam, limit=10**6)[0])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**16),
    T=st.integers(1, 5),
    depth=st.sampled_from([2, 3, 5, None]),
    integer_x=st.booleans(),
)
def test_property_identical_pairs_merge_into_exactly_their_classes(seed, T, depth, integer_x):
    """Rule 4 (the native merge of pairs with the same predecessors): against the unmerged
    native network, grouped in numpy by predecessor set, every class is one pair node (none is
    split, none merged with another), with that class's predecessors and summed cost."""
    from odtkit.pruning._cut import native_network

    ens, X, y, costs = _forest(seed, n=70, T=T, depth=depth, integer_x=integer_x)
    d = extract(ens, X, y, costs)
    full, merged = native_network(d, merge=False), native_network(d, merge=True)
    np.testing.assert_array_equal(full.split_node, merged.split_node)

    def pred_sets(net):
        S = net.split_node.shape[0]
        preds: dict[int, set[int]] = {}
        for t, h in zip(net.tails.tolist(), net.heads.tolist(), strict=True):
            if h >= S:
                preds.setdefault(h - S, set()).add(t)
        return [frozenset(preds.get(q, ())) for q in range(net.pair.shape[0])]

    classes: dict[frozenset[int], list[int]] = {}
    for q, ps in enumerate(pred_sets(full)):
        classes.setdefault(ps, []).append(q)
    got = pred_sets(merged)
    assert len(got) == len(set(got)) == len(classes)  # no two nodes with one set, none missing
    first = {int(k): q for q, k in enumerate(full.pair.tolist())}
    for q, ps in enumerate(got):
        members = classes[ps]
        assert first[int(merged.pair[q])] in members  # the node's first key is of its class
        assert merged.pair_cost[q] == pytest.approx(full.pair_cost[members].sum(), rel=1e-12)


# ---------------------------------------------------------------------- the path
def _check_path(d, path):
    """Each vertex is optimal inside its interval, and both neighbours at each breakpoint."""
    assert np.all(np.diff(path.breakpoints) > 0)
    assert np.all(np.diff(path.cost_term) < 0) and np.all(np.diff(path.error_term) > 0)
    for j in range(len(path)):
        pe = path.pruning(j)
        terms = objective_terms(d, pe.leaves, lam=0.0)
        assert terms["error_term"] == pytest.approx(path.error_term[j], abs=1e-12)
        assert terms["cost_term"] == pytest.approx(path.cost_term[j], abs=1e-9)
    for j, lam in enumerate(path.breakpoints):
        for eps, k in ((-1e-7, j), (1e-7, j + 1)):  # just below: vertex j, just above: j + 1
            at = lam * (1 + eps) if lam > 0 else eps
            if at < 0:
                continue
            res = prune(d, lam=at)
            value = path.error_term[k] + at * path.cost_term[k]
            assert res.objective == pytest.approx(value, abs=1e-9)
        # at the breakpoint both neighbours are optimal
        res = prune(d, lam=lam)
        for k in (j, j + 1):
            value = path.error_term[k] + lam * path.cost_term[k]
            assert value == pytest.approx(res.objective, abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_path_breakpoints_verified_just_below_and_above(seed):
    X, y = make_classification(300, 8, n_informative=5, random_state=seed)
    ens = RandomForestClassifier(4, max_depth=4 + seed % 2, random_state=seed).fit(X, y)
    costs = np.random.default_rng(seed).uniform(0.2, 3, 8)
    d = extract(ens, X, y, costs)
    path = cost_error_path(d)
    assert len(path) > 3
    _check_path(d, path)
    assert path.n_cuts <= 2 * len(path) + 2


def test_path_without_positive_costs_is_one_vertex():
    ens, X, y, _ = _forest(2, n=30, T=2, depth=3)
    d = extract(ens, X, y, np.zeros(5))
    path = cost_error_path(d)
    assert len(path) == 1 and path.cost_term[0] == 0.0
    assert path.error_term[0] == pytest.approx(prune(d, lam=0.0).objective)


# ---------------------------------------------------------------------- budgets
def _budget_grid(path):
    """Budgets at every hull vertex, between consecutive ones, and beyond both ends."""
    c = np.sort(path.cost_term)
    mids = (c[:-1] + c[1:]) / 2
    return np.unique(np.concatenate([c, mids, c[:-1] + 1e-9, [c[-1] * 1.5 + 1.0]]))


@pytest.mark.parametrize("seed", range(12))
def test_budgets_at_between_and_beyond_breakpoints_equal_the_oracle(seed):
    kind = ["rf", "et", "bagging"][seed % 3]
    ens, X, y, costs = _forest(
        seed + 20, n=25, T=2 + seed % 2, depth=2, kind=kind, zero_costs=seed % 4 == 0
    )
    d = extract(ens, X, y, costs)
    path = cost_error_path(d)
    for B in _budget_grid(path):
        oracle, _ = brute_force_prune(d, lam=0.0, budget=B)
        res = prune(d, budget=B)
        assert res.status == Status.OPTIMAL, (seed, B, res.message)
        assert res.model.cost_term <= B + 1e-9
        assert res.objective == pytest.approx(oracle, abs=1e-9), (seed, B)
        assert res.lower_bound <= oracle + 1e-9
        hull = prune(d, budget=B, method="hull")
        assert hull.lower_bound <= oracle + 1e-9 <= hull.objective + 2e-9


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    T=st.integers(1, 3),
    depth=st.integers(1, 3),
    kind=st.sampled_from(["rf", "et", "bagging"]),
    frac=st.floats(0.0, 1.2),
)
def test_property_budget_equals_oracle(seed, T, depth, kind, frac):
    ens, X, y, costs = _forest(seed, n=20, T=T, depth=depth, kind=kind, classes=2 + seed % 2)
    d = extract(ens, X, y, costs)
    if _n_prunings(d) > 5_000:
        return
    B = frac * prune(d, lam=0.0).model.cost_term
    oracle, _ = brute_force_prune(d, lam=0.0, budget=B)
    res = prune(d, budget=B)
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(oracle, abs=1e-9)
    assert res.model.cost_term <= B + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("block", range(10))
def test_budgets_many_seeds_and_shapes_slow(block):
    # 300 forests (rf / et / bagging, 1-3 trees of depth 1-3, 2-3 classes, equal thresholds,
    # zero costs) x every budget of the grid: at the time of writing 2234 budgets, all equal to
    # the oracle, by the path and by the LP λ search alike
    for seed in range(block * 30, block * 30 + 30):
        rng = np.random.default_rng(seed)
        ens, X, y, costs = _forest(
            seed,
            n=int(rng.integers(10, 40)),
            T=1 + seed % 3,
            depth=1 + (seed // 3) % 3,
            kind=["rf", "et", "bagging"][seed % 3],
            classes=2 + seed % 2,
            integer_x=seed % 5 == 0,
            zero_costs=seed % 4 == 0,
        )
        d = extract(ens, X, y, costs)
        if _n_prunings(d) > 3000:
            continue
        for B in _budget_grid(cost_error_path(d)):
            oracle, _ = brute_force_prune(d, lam=0.0, budget=B)
            for method in ("cut", "lp"):
                res = prune(d, budget=B, method=method)
                assert res.status == Status.OPTIMAL, (seed, B, method)
                assert res.objective == pytest.approx(oracle, abs=1e-9), (seed, B, method)
                assert res.model.cost_term <= B + 1e-9


# ---------------------------------------------------------------------- the reduced network
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    T=st.integers(1, 6),
    depth=st.integers(1, 5),
    classes=st.integers(2, 3),
    kind=st.sampled_from(["rf", "et", "bagging"]),
    integer_x=st.booleans(),
    zero_costs=st.booleans(),
    lam=st.sampled_from([0.0, 1e-5, 1e-4, 0.001, 0.003, 0.01, 0.05, 0.2, 1.0]),
)
@example(
    seed=50, T=1, depth=3, classes=3, kind="bagging", integer_x=True, zero_costs=False, lam=0.01
)
def test_property_reductions_keep_the_uncompressed_cut(
    seed, T, depth, classes, kind, integer_x, zero_costs, lam
):
    """Issue 25: dead splits, forced splits and merged pairs change the network the flow sees,
    never its minimal minimum cut: the pruning equals the uncompressed numpy network's, leaf for
    leaf, for every combination of the reductions."""
    ens, X, y, costs = _forest(
        seed,
        n=60,
        T=T,
        depth=depth,
        classes=classes,
        kind=kind,
        integer_x=integer_x,
        zero_costs=zero_costs,
    )
    d = extract(ens, X, y, costs)
    # the numpy network with identical examples merged, as the native one merges them: each
    # example's sink capacity is rounded up on its own unmerged, a class's summed one merged, so
    # at a tie of two minimum cuts the unit of rounding alone can pick another minimal one (seed
    # 50, one bagged tree of depth 3, three classes, integer x, lam 0.01: the same objective,
    # three leaves apart)
    reference = cut_prune(d, lam=lam, network=closure_network(d, merge=True))
    assert reference.status == Status.OPTIMAL
    for reduce, merge_pairs in itertools.product([True, False], repeat=2):
        res = cut_prune(d, lam=lam, reduce=reduce, merge_pairs=merge_pairs)
        assert res.status == Status.OPTIMAL, res.message
        assert res.lower_bound == res.objective
        assert res.objective == pytest.approx(reference.objective, abs=1e-12)
        for z, z_ref in zip(res.model.leaves, reference.model.leaves, strict=True):
            np.testing.assert_array_equal(z, z_ref)
        assert res.stats["cut_objective"] == pytest.approx(res.objective, abs=1e-12)
        if not reduce:
            assert res.stats["n_forced"] == res.stats["n_dead"] == 0
        if not merge_pairs:
            assert res.stats["n_arcs"] == res.stats["n_arcs_unmerged"]


def test_reductions_shrink_the_network_where_they_should():
    X, y = make_classification(3000, 10, n_informative=6, random_state=5)
    ens = RandomForestClassifier(30, max_depth=8, random_state=5).fit(X, y)
    d = extract(ens, X, y)
    full = closure_network(d, merge=False)
    small_lam = cut_prune(d, lam=1e-4)
    # at a small lam almost every split pays for itself: forced, and its pairs paid
    assert small_lam.stats["n_forced"] > 0.5 * full.n_splits
    assert small_lam.stats["n_arcs"] < 0.01 * full.n_arcs
    # deep splits that no training example profits from are dead at every lam
    big_lam = cut_prune(d, lam=0.5)
    assert big_lam.stats["n_dead"] > 0 and big_lam.stats["n_forced"] == 0
    assert big_lam.stats["n_arcs"] <= big_lam.stats["n_arcs_unmerged"] < full.n_arcs
    for res in (small_lam, big_lam):
        assert res.objective == pytest.approx(
            cut_prune(d, lam=res.model.lam, network=full).objective, abs=1e-12
        )


def test_native_cut_rejects_inconsistent_trees():
    ens, X, y, costs = _forest(2, n=40, T=2, depth=3)
    d = extract(ens, X, y, costs)
    from odtkit.pruning._ensemble import compact_arrays

    ones = np.ones(d.n_samples, dtype=np.int64)
    tree = d.trees[0]
    arrays = compact_arrays(tree)

    def call(**spoil):
        lists = {
            "left": tree.left,
            "right": tree.right,
            "feature": np.maximum(tree.feature, 0),
            "end": tree.end,
            "error": tree.error,
            "first_use": arrays["first_use"],
            "by_leaf": arrays["by_leaf"],
            "leaf_start": arrays["leaf_start"],
        }
        dtypes = {"error": np.int64, "leaf_start": np.int64, "first_use": np.uint8}
        lists.update(spoil)
        args = [[np.ascontiguousarray(v, dtype=dtypes.get(k, np.int32))] for k, v in lists.items()]
        return _native.ensemble_min_cut(_native.CompactTrees(*args, d.costs, ones), 0.01, 1.0)

    assert call()["status"] == "optimal"
    bad_child = tree.left.copy()
    bad_child[0] = 10**6
    with pytest.raises(ValueError, match="pre-order|one child|end"):
        call(left=bad_child)
    with pytest.raises(ValueError, match="out of range"):
        call(by_leaf=np.full(d.n_samples, d.n_samples + 5))
    with pytest.raises(ValueError, match="leaf_start"):
        call(leaf_start=arrays["leaf_start"] * 2)
    with pytest.raises(ValueError, match="feature"):
        call(feature=np.where(tree.left >= 0, 99, 0))
    with pytest.raises(ValueError, match="one entry per example"):
        call(by_leaf=arrays["by_leaf"][:-1])


@pytest.mark.parametrize("seed", range(6))
def test_path_on_the_reduced_network_equals_the_uncompressed_path(seed):
    from odtkit.pruning._path import exact_path

    ens, X, y, costs = _forest(
        seed, n=80, T=2 + seed, depth=2 + seed % 3, integer_x=seed % 2 == 0, zero_costs=seed > 3
    )
    d = extract(ens, X, y, costs)
    reduced, full = exact_path(d), exact_path(d, network=closure_network(d, merge=False))
    assert reduced.network.n_arcs <= full.network.n_arcs
    np.testing.assert_allclose(reduced.breakpoints, full.breakpoints, rtol=1e-12)
    np.testing.assert_allclose(reduced.error_term, full.error_term, atol=1e-12)
    np.testing.assert_allclose(reduced.cost_term, full.cost_term, atol=1e-9)
    for j in range(len(reduced)):
        for z, z_full in zip(reduced.pruning(j).leaves, full.pruning(j).leaves, strict=True):
            np.testing.assert_array_equal(z, z_full)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    T=st.integers(1, 4),
    depth=st.integers(1, 5),
    k=st.sampled_from([3, 20, 64, 65, 130]),
    kind=st.sampled_from(["rf", "et", "bagging"]),
    lam=st.sampled_from([0.0, 0.01, 0.3]),
)
def test_compact_accounting_equals_the_per_entry_accounting(seed, T, depth, k, kind, lam):
    """The objective every cut answer is re-scored with (per-tree feature masks, no entry
    lists) equals objective_terms (the per-entry accounting the models use) to the last bit,
    on random valid prunings, with more than 64 features too."""
    from odtkit.pruning._ensemble import enumerate_prunings, objective_value

    ens, X, y, costs = _forest(seed, n=50, T=T, depth=depth, k=k, kind=kind, zero_costs=True)
    d = extract(ens, X, y, costs)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        z = []
        for tree in d.trees:
            options = enumerate_prunings(tree, limit=2000)
            z.append(options[rng.integers(len(options))])
        full = objective_terms(d, z, lam=lam)
        compact = objective_value(d, z, lam=lam)
        for key in ("error_term", "cost_term", "objective"):
            assert compact[key] == full[key]


@pytest.mark.parametrize("seed", range(4))
def test_reduced_network_cut_plus_constant_is_the_full_cut(seed):
    """The network the max-flow sees after the reductions: its minimum cut plus the forced
    pairs' capacity is the uncompressed network's minimum cut, in the same scaled integers
    (without the merge of identical examples, which rounds one summed capacity instead of each
    example's)."""
    from odtkit.pruning._cut import reduced_network

    ens, X, y, costs = _forest(seed, n=200, T=4 + seed, depth=4, zero_costs=seed % 2 == 1)
    d = extract(ens, X, y, costs)
    full = closure_network(d, merge=False)
    for lam in (1e-4, 1e-3, 0.01, 0.1):
        src, snk = full.capacities(lam)
        whole = _native.closure_min_cut(src, snk, full.tails, full.heads)
        red = reduced_network(d, lam, merge_examples=False)
        assert red["scale"] == full.scale
        part = _native.closure_min_cut(
            red["source_cap"], red["sink_cap"], red["tails"], red["heads"]
        )
        assert part["status"] == whole["status"] == "optimal"
        assert red["constant"] + part["flow"] == whole["flow"]
        assert red["tails"].shape[0] <= full.n_arcs

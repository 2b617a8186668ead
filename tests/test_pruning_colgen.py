"""Column generation (§7.8) and its pricing problem as a tree DP / shortest path (§7.9).

Sections are those of docs/formulations-search-and-pruning.md.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

from odtkit.pruning import (
    IP3,
    ColgenMaster,
    certify_network_matrix,
    column_generation,
    extract,
    prune,
    tree_dp,
    worked_example,
)
from odtkit.pruning._ensemble import enumerate_prunings, objective_terms
from odtkit.results import TRACE_COLUMNS, Result, Status


def _data(seed, n=40, T=3, depth=3, k=6):
    X, y = make_classification(
        n, n_features=k, n_informative=4, n_redundant=0, random_state=seed, flip_y=0.2
    )
    rf = RandomForestClassifier(T, max_depth=depth, random_state=seed).fit(X, y)
    costs = np.random.default_rng(seed).uniform(0.5, 3.0, size=k)
    return extract(rf, X, y, costs)


def _pruning_value(tree, z, leaf_cost, price):
    cov = np.zeros(tree.n_nodes, dtype=bool)
    for h in range(1, tree.n_nodes):  # pre-order: parent before child
        p = tree.parent[h]
        cov[h] = cov[p] or z[p]
    active = ~(cov[tree.use_node] | z[tree.use_node])
    return float(leaf_cost[z].sum() + price[active].sum())


@pytest.mark.parametrize("seed", range(4))
def test_dp_equals_enumeration_and_shortest_path(seed):
    d = _data(seed, n=15, T=2, depth=3)
    rng = np.random.default_rng(seed)
    for t, tree in enumerate(d.trees):
        leaf_cost = rng.uniform(0, 1, tree.n_nodes)
        price = rng.uniform(0, 0.3, tree.n_entries)
        value, z = tree_dp(tree, leaf_cost, price)
        best = min(_pruning_value(tree, m, leaf_cost, price) for m in enumerate_prunings(tree))
        assert value == pytest.approx(best, abs=1e-12)
        assert _pruning_value(tree, z, leaf_cost, price) == pytest.approx(value, abs=1e-12)
        # shortest 0 -> L path in the §7.9 DAG built from the certified network matrix
        model = IP3().build(d, lam=0.0)
        cert = certify_network_matrix(model, tu_check=False)
        g = cert.graph(t)
        z0 = model.vars["z"].start + d.node_offset[t]
        wt0 = model.vars["wt"].start + d.entry_offset[t]
        for a, b, key, data in g.edges(keys=True, data=True):
            col = data["col"]
            if model.vars["z"].start <= col < model.vars["z"].stop:
                w = leaf_cost[col - z0]
            else:
                w = price[col - wt0]
            g.edges[a, b, key]["weight"] = w
        L = max(g.nodes)
        sp = nx.shortest_path_length(g, 0, L, weight="weight")
        assert sp == pytest.approx(value, abs=1e-12)


def test_colgen_worked_example_trace():
    trees, X, y, costs = worked_example()
    d = extract(trees, X, y, costs)
    for lam, obj in [(0.05, 0.2), (0.1, 0.4), (0.125, 0.5), (0.2, 0.5)]:
        for init in ("root", "individual"):
            cg = column_generation(d, lam=lam, init=init)
            assert isinstance(cg, Result) and cg.status == Status.OPTIMAL
            assert cg.stats["lp_value"] == pytest.approx(obj, abs=1e-9)
            assert objective_terms(d, cg.model.leaves, lam=lam)["objective"] == pytest.approx(obj)
            assert cg.objective == pytest.approx(obj) and cg.lower_bound == cg.objective
            tr = cg.trace
            assert tuple(tr.columns) == TRACE_COLUMNS
            assert np.all(tr.bound <= tr.incumbent + 1e-12)
            assert np.all(np.diff(tr.incumbent) <= 1e-12)  # master value only decreases
            assert tr.bound.iloc[-1] == pytest.approx(tr.incumbent.iloc[-1], abs=1e-9)
            assert tr.bound.max() <= obj + 1e-9  # Lagrangian bound is a valid lower bound


@pytest.mark.parametrize("seed", range(4))
def test_colgen_equals_full_lp(seed):
    d = _data(seed + 10, n=60, T=2 + seed, depth=2 + seed % 3)
    lam = [0.002, 0.01, 0.03, 0.08][seed]
    lp = prune(d, lam=lam, method="lp")
    cg = prune(d, lam=lam, method="colgen")
    assert cg.status == Status.OPTIMAL and cg.method == "colgen"
    assert cg.solution.objective == pytest.approx(lp.solution.objective, abs=1e-9)
    assert cg.objective == pytest.approx(lp.objective, abs=1e-9)
    assert cg.lower_bound == pytest.approx(lp.objective, abs=1e-9)
    assert len(cg.trace) >= 1 and tuple(cg.trace.columns) == TRACE_COLUMNS


@settings(max_examples=6, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    T=st.integers(1, 5),
    depth=st.integers(1, 4),
    lam=st.sampled_from([0.0, 0.003, 0.02, 0.1]),
)
def test_property_colgen_equals_lp(seed, T, depth, lam):
    d = _data(seed, n=50, T=T, depth=depth)
    lp = prune(d, lam=lam)
    cg = prune(d, lam=lam, method="colgen")
    assert cg.objective == pytest.approx(lp.objective, abs=1e-9)
    assert cg.solution.objective == pytest.approx(lp.objective, abs=1e-9)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    T=st.integers(2, 10),
    depth=st.integers(2, 6),
    lam=st.floats(0.0, 0.2),
)
def test_property_colgen_equals_lp_slow(seed, T, depth, lam):
    d = _data(seed, n=200, T=T, depth=depth, k=8)
    lp = prune(d, lam=lam)
    cg = prune(d, lam=lam, method="colgen")
    assert cg.objective == pytest.approx(lp.objective, abs=1e-9)


def test_colgen_bad_init():
    trees, X, y, costs = worked_example()
    with pytest.raises(ValueError, match="init"):
        column_generation(extract(trees, X, y, costs), lam=0.1, init="random")
    with pytest.raises(ValueError, match="init"):
        ColgenMaster(init="random")


def test_colgen_time_limit_returns_valid_bounds():
    d = _data(3, n=150, T=6, depth=4, k=8)
    lam = 0.005
    lp = prune(d, lam=lam)
    cg = prune(d, lam=lam, method="colgen", time_limit=0.05)
    assert cg.status in ("optimal", "time_limit")
    # an integral pruning (upper bound) and a Lagrangian lower bound around the optimum
    assert cg.objective >= lp.objective - 1e-9
    assert cg.lower_bound <= lp.objective + 1e-9
    if cg.status == "optimal":
        assert cg.objective == pytest.approx(lp.objective, abs=1e-9)

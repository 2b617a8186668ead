"""IP0–IP3 models, the Lemma 4.1 certificate and total unimodularity (§7.2–7.7, §8.2, §8.6).

Sections are those of docs/formulations-search-and-pruning.md.
"""

from __future__ import annotations

import dataclasses

import networkx as nx
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

from odtkit.model import ModelBuilder
from odtkit.pruning import (
    IP0,
    IP1,
    IP2,
    IP3,
    LP1,
    brute_force_prune,
    certify_network_matrix,
    extract,
    is_totally_unimodular,
    tree_dp,
    worked_example,
)
from odtkit.pruning._ensemble import enumerate_prunings, objective_terms
from odtkit.solvers import solve


def _example(trees_idx=(0, 1), rows=(0, 1)):
    trees, X, y, costs = worked_example()
    rows = list(rows)
    return extract([trees[i] for i in trees_idx], X[rows], y[rows], costs)


def _lp(model):
    return solve(model, relax=True, lp_method="simplex")


def _frac(x):
    return float(np.max(np.abs(x - np.round(x))))


def _random_data(seed, n=30, T=3, depth=2, k=5):
    X, y = make_classification(
        n, n_features=k, n_informative=3, n_redundant=0, random_state=seed, flip_y=0.2
    )
    rf = RandomForestClassifier(T, max_depth=depth, random_state=seed, bootstrap=True).fit(X, y)
    costs = np.random.default_rng(seed).integers(1, 4, size=k).astype(float)
    return extract(rf, X, y, costs)


def test_ip3_instance_of_8_2():
    d = _example()
    m = IP3().build(d, lam=0.1)
    assert m.n_vars == 24 and m.n_constraints == 22  # 10 z, 8 w^(t), 6 w; 6 + 8 + 8 rows
    z = m.vars["z"].index
    # error coefficients 1/4 on the four internal nodes (e_h = 1), 0 on leaves
    np.testing.assert_allclose(m.c[z], [0.25, 0, 0.25, 0, 0] * 2)
    w = m.vars["w"].index
    # lam * c_k / N with c = (1, 1, 2), N = 2
    np.testing.assert_allclose(m.c[w], 0.1 * d.costs[d.pair_feature] / 2)
    assert np.all(m.c[m.vars["wt"].index] == 0)
    assert m.is_mip and np.all(m.row_upper[m.constraints["link"].slice] == 0)


@pytest.mark.parametrize("lam,obj", [(0.05, 0.2), (0.1, 0.4), (0.125, 0.5), (0.2, 0.5)])
@pytest.mark.parametrize("aggregate", [False, True])
def test_ip3_lp_is_integral_and_optimal_on_example(lam, obj, aggregate):
    d = _example()
    m = IP3(aggregate=aggregate).build(d, lam=lam)
    res = _lp(m)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(obj, abs=1e-9)
    assert _frac(res.x) <= 1e-9  # a vertex, integral even at the three-way tie lam = 1/8
    leaves = IP3(aggregate=aggregate).decode(m, res)
    assert objective_terms(d, leaves, lam=lam)["objective"] == pytest.approx(obj, abs=1e-12)
    assert m.check(np.round(res.x)).empty


def _with_objective(model, coeffs):
    return dataclasses.replace(model, c=np.asarray(coeffs, dtype=float), offset=0.0)


def test_ip1_lp_fractional_while_ip3_integral_section_7_3():
    """Tree 1 of NWS Fig. 1, one example routed 1 -> 3 -> 4, objective 10 z1 + z3 + w11 + w21."""
    d = _example(trees_idx=(0,), rows=(0,))
    ip1 = IP1().build(d, lam=0.0)
    c = np.zeros(ip1.n_vars)
    z = ip1.vars["z"].index
    c[z[0]], c[z[2]] = 10.0, 1.0
    c[ip1.vars["w"].index] = 1.0  # w_{1,1}, w_{2,1}
    lp1 = _lp(_with_objective(ip1, c))
    assert lp1.objective == pytest.approx(1.5, abs=1e-9)
    assert _frac(lp1.x) == pytest.approx(0.5)
    mip1 = solve(_with_objective(ip1, c))
    assert mip1.objective == pytest.approx(2.0, abs=1e-9)
    # IP3 with the same objective on (z, w): integral LP with the integer optimum
    ip3 = IP3().build(d, lam=0.0)
    c3 = np.zeros(ip3.n_vars)
    z3 = ip3.vars["z"].index
    c3[z3[0]], c3[z3[2]] = 10.0, 1.0
    c3[ip3.vars["w"].index] = 1.0
    lp3 = _lp(_with_objective(ip3, c3))
    assert lp3.objective == pytest.approx(2.0, abs=1e-9)
    assert _frac(lp3.x) <= 1e-9
    # and the constraint matrices: IP3's is totally unimodular, IP1's is not
    assert is_totally_unimodular(ip3.A) == (True, "subdeterminants")
    assert is_totally_unimodular(ip1.A)[0] is False


def test_certificate_matches_printed_matrix_8_6():
    d = _example()
    cert = certify_network_matrix(IP3().build(d, lam=0.1), tu_check=False)
    assert cert.ok and cert.consecutive_ones and cert.network and cert.link_ok
    assert list(cert.per_tree["rows"]) == [7, 7]
    # §7.6's M for tree 1, columns z1..z5, w11, w21, w12, w22 (w_{k,i})
    spec = np.array(
        [
            [-1, -1, 0, 0, 0, 0, 0, 0, 0],
            [0, 1, -1, -1, 0, 0, 0, 0, 0],
            [0, 0, 0, 1, -1, 0, 0, 0, 0],
            [0, 0, 0, 0, 1, 0, -1, 0, 0],
            [0, 0, 0, 0, 0, 0, 1, 0, -1],
            [0, 0, 1, 0, 0, -1, 0, 0, 1],
            [0, 0, 0, 0, 0, 1, -1 + 1, -1, 0],
        ]
    )
    # our wt columns are ordered (u, k, i): (1,1), (1,2) under node 1, then (2,1), (2,2)
    ours = cert.matrices[0].toarray()
    perm = [0, 1, 2, 3, 4, 5, 7, 6, 8]  # spec columns w11, w21, w12, w22 -> ours w11,w12,w21,w22
    np.testing.assert_array_equal(ours[:, [perm.index(j) for j in range(9)]], spec)


def test_shortest_path_graph_of_tree_1_has_three_paths():
    d = _example()
    cert = certify_network_matrix(IP3().build(d, lam=0.1), tu_check=False)
    g = cert.graph(0)
    L = 7
    assert nx.is_directed_acyclic_graph(g)
    assert all(u < v for u, v in g.edges())
    paths = list(nx.all_simple_edge_paths(g, 0, L))
    assert len(paths) == 3  # prunings A, B, C
    zcols = set(range(5))
    path_leaves = sorted(
        sorted(g.edges[e]["col"] for e in p if g.edges[e]["col"] in zcols) for p in paths
    )
    assert path_leaves == [[0], [1, 2], [1, 3, 4]]  # {1}, {2,3}, {2,4,5} in spec numbering


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("aggregate,merge", [(False, False), (True, False), (True, True)])
def test_certificate_on_random_forests(seed, aggregate, merge):
    d = _random_data(seed, depth=3)
    model = IP3(aggregate=aggregate, merge=merge).build(d, lam=0.05)
    cert = certify_network_matrix(model, tu_check=False)
    assert cert.ok, cert.per_tree
    assert len(cert.matrices) == d.n_trees
    # paths of each tree's DAG <-> valid prunings (counted by enumeration), tiny trees only
    for t, tree in enumerate(d.trees):
        if tree.n_nodes <= 7 and tree.n_entries <= 40:
            g = cert.graph(t)
            L = max(g.nodes)
            n_paths = sum(1 for _ in nx.all_simple_edge_paths(g, 0, L))
            assert n_paths == len(enumerate_prunings(tree))


def test_certificate_detects_non_preorder_numbering():
    d = _example(trees_idx=(0,), rows=(0,))
    m = IP3().build(d, lam=0.1)
    # renumber z so that node 3's subtree (z3, z4, z5) comes before leaf 2: not pre-order any more
    perm = np.array([0, 2, 3, 4, 1])  # new position of old z_h
    A = m.A.tocsc()
    zidx = m.vars["z"].index
    cols = np.arange(m.n_vars)
    cols[zidx[perm]] = zidx
    b = ModelBuilder("permuted")
    b.add_vars("z", shape=(5,), kind="binary", lb=0, ub=1)
    b.add_vars("wt", shape=(m.vars["wt"].size,), kind="binary", lb=0, ub=1)
    b.add_vars("w", shape=(m.vars["w"].size,), kind="binary", lb=0, ub=1)
    P = A[:, cols]
    for name, blk in m.constraints.items():
        sense = "==" if name != "link" else "<="
        rhs = m.row_upper[blk.slice]
        b.add_constraints(name, matrix=P[blk.slice], sense=sense, rhs=rhs)
    cert = certify_network_matrix(b.build(), tu_check=False)
    assert not cert.consecutive_ones and not cert.ok


@pytest.mark.parametrize(
    "trees_idx,rows",
    [((0,), (0, 1)), pytest.param((0, 1), (0,), marks=pytest.mark.slow)],
)
def test_brute_force_tu_small_ip3(trees_idx, rows):
    d = _example(trees_idx=trees_idx, rows=rows)
    ip3 = IP3().build(d, lam=0.1)
    # 11 x 13 / 14 x 17 once empty lines are dropped
    cert = certify_network_matrix(ip3, tu_check="auto")
    assert cert.totally_unimodular is True and cert.tu_method != "skipped"
    agg = certify_network_matrix(IP3(aggregate=True).build(d, lam=0.1), tu_check="auto")
    assert agg.totally_unimodular is True
    merged = IP3(aggregate=True, merge=True).build(d, lam=0.1)
    assert certify_network_matrix(merged, tu_check="auto").totally_unimodular is True


def test_brute_force_tu_sanity():
    # TU fails as soon as a 2x2 submatrix has determinant 2: sanity of the brute force
    assert is_totally_unimodular(np.array([[1, 1], [-1, 1]]))[0] is False
    assert is_totally_unimodular(np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]]))[0] is False
    assert is_totally_unimodular(np.array([[1, 1, 0], [0, 1, 1]]))[0] is True


def _no_large_dense(monkeypatch, limit=10**6):
    """Fail at once (instead of allocating gigabytes) if a sparse matrix above ``limit``
    entries is made dense."""
    import scipy.sparse as sp

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        original = cls.toarray

        def toarray(self, *args, _original=original, **kwargs):
            assert self.shape[0] * self.shape[1] <= limit, f"densified {self.shape}"
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "toarray", toarray)


def test_auto_tu_check_decides_from_the_sparse_shape(monkeypatch):
    """Issue 22: "auto" densified the whole matrix before deciding it was too large (10.6 GiB
    on IP3 of a 10-tree forest). A large, very sparse matrix must cost memory by its nonzeros."""
    import tracemalloc

    import scipy.sparse as sp

    m, n = 4000, 3000  # dense float64: 96 MB
    rng = np.random.default_rng(0)
    rows, cols = np.arange(n) % m, rng.permutation(n)
    A = sp.csr_matrix((np.ones(n), (rows, cols)), shape=(m, n))
    _no_large_dense(monkeypatch)
    tracemalloc.start()
    try:
        assert is_totally_unimodular(A) is None
        assert is_totally_unimodular(A, force=True) is None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000, peak
    # empty rows and columns are still dropped before deciding: this one is a 2 x 2 block
    small = sp.csr_matrix(([1.0, 1.0, -1.0], ([5, 9, 9], [7, 7, 8])), shape=(m, n))
    assert is_totally_unimodular(small) == (True, "subdeterminants")
    assert is_totally_unimodular(sp.csr_matrix((m, n))) == (True, "subdeterminants")
    bad = sp.csr_matrix(([2.0], ([0], [0])), shape=(m, n))
    assert is_totally_unimodular(bad) == (False, "subdeterminants")


def test_certificate_of_a_forest_on_breast_cancer_stays_sparse(monkeypatch):
    """The issue's case end to end: IP3 of a 10-tree, depth-4 forest (~43k x 33k)."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    forest = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    model = IP3().build(extract(forest, X, y), lam=0.001)
    assert model.A.shape[0] * model.A.shape[1] > 10**9
    _no_large_dense(monkeypatch)
    cert = certify_network_matrix(model)  # tu_check="auto"
    assert cert.ok and cert.totally_unimodular is None and cert.tu_method == "skipped"


def test_budget_row_breaks_integrality_8_6():
    d = _example()
    expected = {0.0: (0.5, True), 3.0: (0.125, False), 4.0: (0.0, True)}
    for B, (val, integral) in expected.items():
        res = _lp(LP1().build(d, budget=B))
        assert res.objective == pytest.approx(val, abs=1e-9)
        assert (_frac(res.x) <= 1e-9) == integral
    # B = 3: best pruned ensemble within budget has error term 0.25 (oracle)
    best, _ = brute_force_prune(d, lam=0.0, budget=3.0)
    assert best == pytest.approx(0.25)
    assert solve(LP1().build(d, budget=3.0)).objective == pytest.approx(0.25, abs=1e-9)
    assert _lp(LP1().build(d, budget=-1.0)).status == "infeasible"


def test_ip0_and_ip2_against_dp():
    d = _random_data(7, depth=3)
    N, T = d.n_samples, d.n_trees
    r0 = _lp(IP0().build(d))
    assert _frac(r0.x) <= 1e-9
    dp0 = sum(tree_dp(t, t.error / (N * T), np.zeros(t.n_entries))[0] for t in d.trees)
    assert r0.objective == pytest.approx(dp0, abs=1e-12)
    lam = 0.03
    for t, tree in enumerate(d.trees):
        r2 = _lp(IP2(tree=t).build(d, lam=lam))
        assert _frac(r2.x) <= 1e-9
        dp, _ = tree_dp(tree, tree.error / N, lam * d.costs[tree.use_feature] / N)
        assert r2.objective == pytest.approx(dp, abs=1e-9)
    # all trees side by side = individual pruning with lam_ind = T lam, divided by T
    r_all = _lp(IP2().build(d, lam=lam))
    ind = (
        sum(tree_dp(tr, tr.error / N, T * lam * d.costs[tr.use_feature] / N)[0] for tr in d.trees)
        / T
    )
    assert r_all.objective == pytest.approx(ind, abs=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_ip1_ip3_mip_and_lp_match_enumeration(seed):
    d = _random_data(seed, n=20, T=2, depth=3)
    lam = [0.0, 0.01, 0.05, 0.2, 1.0][seed]
    oracle, _ = brute_force_prune(d, lam=lam)
    ip3 = IP3().build(d, lam=lam)
    assert _lp(ip3).objective == pytest.approx(oracle, abs=1e-9)
    assert _frac(_lp(ip3).x) <= 1e-7
    assert _lp(IP3(aggregate=True).build(d, lam=lam)).objective == pytest.approx(oracle, abs=1e-9)
    merged = _lp(IP3(aggregate=True, merge=True).build(d, lam=lam))
    assert merged.objective == pytest.approx(oracle, abs=1e-9) and _frac(merged.x) <= 1e-7
    assert solve(ip3).objective == pytest.approx(oracle, abs=1e-9)
    assert solve(IP1().build(d, lam=lam)).objective == pytest.approx(oracle, abs=1e-9)


def test_bad_arguments():
    d = _example()
    with pytest.raises(ValueError, match="lam"):
        IP3().build(d, lam=-1.0)
    with pytest.raises(ValueError, match="budget"):
        LP1().build(d, budget=float("nan"))
    with pytest.raises(ValueError, match="tree"):
        IP2(tree=5).build(d, lam=0.1)
    with pytest.raises(ValueError, match="aggregate"):
        IP3(merge=True)
    # the problem: lam required, budget only where the formulation models it, never both
    with pytest.raises(TypeError, match="lam"):
        IP3().build(d)
    with pytest.raises(TypeError, match="LP1"):
        IP3().build(d, budget=3.0)
    with pytest.raises(TypeError, match="budget"):
        LP1().build(d)
    with pytest.raises(TypeError, match="budget="):
        LP1().build(d, lam=0.1)
    with pytest.raises(TypeError, match="not both"):
        IP1().build(d, lam=0.1, budget=3.0)
    with pytest.raises(TypeError, match="IP0"):
        IP0().build(d, lam=0.1)
    with pytest.raises(TypeError, match="budget"):
        LP1().build(d, budget="3")


def test_merge_classes_and_budget_rows():
    d = _example()
    m = IP3(aggregate=True, merge=True).build(d, lam=0.1)
    # both examples use the same features at the same nodes: 3 classes of 2 pairs each
    pc = m.meta.pair_class
    assert m.vars["w"].size == 3 and np.all(np.bincount(pc) == 2)
    np.testing.assert_allclose(np.sort(m.c[m.vars["w"].index]), 0.1 * np.array([1.0, 1.0, 2.0]))
    for B, val in [(0.0, 0.5), (3.0, 0.125), (4.0, 0.0)]:
        merged = _lp(LP1(aggregate=True, merge=True).build(d, budget=B))
        assert merged.objective == pytest.approx(val, abs=1e-9)


def test_certificate_refuses_blocks_outside_lemma_4_1():
    # IP1's cover rows and LP1's budget row are not covered by the lemma: nothing is certified
    d = _example()
    ip1 = certify_network_matrix(IP1().build(d, lam=0.1), tu_check=False)
    assert not ip1.ok and ip1.other_blocks == ("cover",)
    lp1 = certify_network_matrix(LP1().build(d, budget=3.0), tu_check=False)
    assert not lp1.ok and lp1.other_blocks == ("budget",)
    ip3 = certify_network_matrix(IP3().build(d, lam=0.1), tu_check=False)
    assert ip3.ok and ip3.other_blocks == ()


# ---------------------------------------------------------------------- the formulation protocol
def _random_pruning(d, seed):
    from odtkit.pruning import PrunedEnsemble

    rng = np.random.default_rng(seed)
    leaves = []
    for tree in d.trees:
        options = enumerate_prunings(tree)
        leaves.append(options[rng.integers(len(options))])
    return PrunedEnsemble(d, leaves, 0.03)


def _formulations(d, pruning):
    """(formulation, problem, the pruning's leaves in the model's trees) of every pruning model."""
    from odtkit.pruning import ColgenMaster

    budget = pruning.cost_term
    columns = [(t, z) for t, z in enumerate(pruning.leaves)]
    return [
        (IP0(), {}, pruning.leaves),
        (IP1(), {"lam": 0.03}, pruning.leaves),
        (IP1(), {"budget": budget}, pruning.leaves),
        (IP2(), {"lam": 0.03}, pruning.leaves),
        (IP2(tree=1), {"lam": 0.03}, pruning.leaves[1:2]),
        (IP3(), {"lam": 0.03}, pruning.leaves),
        (IP3(aggregate=True), {"lam": 0.03}, pruning.leaves),
        (IP3(aggregate=True, merge=True), {"lam": 0.03}, pruning.leaves),
        (LP1(), {"budget": budget}, pruning.leaves),
        (LP1(aggregate=True, merge=True), {"budget": budget}, pruning.leaves),
        (ColgenMaster(), {"lam": 0.03, "columns": columns}, pruning.leaves),
        (
            ColgenMaster(merge=False, integral=True),
            {"lam": 0.03, "columns": columns},
            pruning.leaves,
        ),
    ]


@pytest.mark.parametrize("seed", range(3))
def test_every_pruning_formulation_round_trips_start_check_decode(seed):
    d = _random_data(seed, n=25, T=3, depth=3)
    pruning = _random_pruning(d, seed)
    for formulation, problem, leaves in _formulations(d, pruning):
        model = formulation.build(d, **problem)
        assert model.meta.formulation == formulation.name
        x = formulation.start(model, pruning)
        assert model.check(x).empty, formulation
        decoded = formulation.decode(model, x)
        assert len(decoded) == len(leaves)
        for a, b in zip(decoded, leaves, strict=True):
            np.testing.assert_array_equal(a, b)
        # the start is the pruning's cheapest encoding: its value is the stated objective
        assert model.objective_value(x) == pytest.approx(
            formulation.evaluate(model, decoded, d), abs=1e-12
        ), formulation


def test_declared_properties():
    from odtkit.formulations import DECODE_NOT_WORSE, EXACT, LP_INTEGRAL, VALID_BOUND
    from odtkit.pruning import ColgenMaster

    every = {EXACT, VALID_BOUND, DECODE_NOT_WORSE, LP_INTEGRAL}
    assert IP3().properties == IP3(aggregate=True, merge=True).properties == every
    assert IP0().properties == IP2().properties == every
    assert IP1().properties == LP1().properties == every - {LP_INTEGRAL}
    assert ColgenMaster().properties == frozenset()
    assert ColgenMaster(integral=True).properties == {DECODE_NOT_WORSE}


def test_solve_formulation_and_verify_on_pruning_formulations():
    from odtkit.pipeline import solve_formulation
    from odtkit.pruning import prune

    d = _example()
    lp = solve_formulation(
        IP3(aggregate=True, merge=True),
        d,
        lam=0.1,
        solve_options={"relax": True, "lp_method": "simplex"},
    )
    assert lp.status == "optimal" and lp.objective == pytest.approx(0.4)
    assert lp.lower_bound == lp.objective and lp.method == "ip3"
    for z in lp.model:
        np.testing.assert_array_equal(z, [False, True, False, True, True])
    # LP1 as a MIP warm-started from a pruning within budget (the λ = 0.2 roots)
    roots = prune(d, lam=0.2).model
    mip = solve_formulation(LP1(), d, budget=3.0, start=roots)
    assert mip.stats["warm_start"] and mip.objective == pytest.approx(0.25)
    # a decoded model over budget is worth +inf for the budgeted problem
    lp1 = LP1().build(d, budget=3.0)
    whole = prune(d, lam=0.0).model.leaves  # cost 4 > 3
    assert LP1().evaluate(lp1, whole, d) == np.inf
    with pytest.raises(ValueError, match="built by"):
        IP3().decode(lp1, np.zeros(lp1.n_vars))

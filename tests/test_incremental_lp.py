"""odtkit.solvers.IncrementalLP: a persistent HiGHS LP that gains columns between solves."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit.model import ModelBuilder
from odtkit.solvers import IncrementalLP, solve


def _random_lp(seed: int, m: int, n: int, density: float = 0.3):
    """A feasible, bounded LP: covering rows ``A x >= 1`` and packing rows ``B x <= u``.

    Costs are positive and ``x <= 2`` for every column, so it is bounded; column 0 alone
    (``x_0 = 2``) satisfies every row, so every prefix of the columns is feasible.
    """
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.1, 1.0, (m, n)) * (rng.random((m, n)) < density)
    A[:, 0] = rng.uniform(0.5, 1.0, m)  # column 0 alone covers every row: always feasible
    B = rng.uniform(0.0, 1.0, (2, n))
    u = B.sum(axis=1) + B[:, 0]  # x = e_0 * 2 satisfies the packing rows
    c = rng.uniform(0.5, 2.0, n)
    return A, B, u, c


def _model(A, B, u, c, cols, ub=2.0):
    b = ModelBuilder("rand")
    k = len(cols)
    x = b.add_vars("x", shape=(k,), kind="continuous", lb=0.0, ub=ub)
    Asub = sp.coo_matrix(A[:, cols])
    b.add_constraints("cover", Asub.row, x.index[Asub.col], Asub.data, ">=", np.ones(A.shape[0]))
    Bsub = sp.coo_matrix(B[:, cols])
    b.add_constraints("pack", Bsub.row, x.index[Bsub.col], Bsub.data, "<=", u)
    b.add_objective(x.index, c[cols])
    return b.build()


def _csc(A, B, cols):
    M = sp.csc_matrix(np.vstack([A, B])[:, cols])
    return M.indptr, M.indices, M.data


def _check_duality(model_rows, res, c, lo, up):
    """Reduced costs ``c - M.T y`` and the dual objective equal to the primal objective."""
    M, rl, ru = model_rows
    y = res.duals
    d = c - M.T @ y
    np.testing.assert_allclose(d, res.reduced_costs, atol=1e-7)
    # dual objective of min c'x, rl <= Mx <= ru, lo <= x <= up: pick each bound by the sign
    dual = sum(
        float(v[s > 1e-12] @ bnd_lo[s > 1e-12] + v[s < -1e-12] @ bnd_up[s < -1e-12])
        for v, s, bnd_lo, bnd_up in ((y, y, rl, ru), (d, d, lo, up))
    )
    assert dual == pytest.approx(res.objective, abs=1e-7)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    m=st.integers(1, 12),
    n=st.integers(2, 25),
    n0=st.integers(1, 10),
    batches=st.integers(1, 4),
)
def test_adding_columns_equals_solving_from_scratch(seed, m, n, n0, batches):
    A, B, u, c = _random_lp(seed, m, n)
    n0 = min(n0, n)
    inc = IncrementalLP(_model(A, B, u, c, list(range(n0))))
    first = inc.solve()
    assert first.status == "optimal"
    splits = np.array_split(np.arange(n0, n), batches)
    have = n0
    for part in splits:
        idx = part.tolist()
        starts, rows, vals = _csc(A, B, idx)
        new = inc.add_columns(
            c[idx], np.zeros(len(idx)), np.full(len(idx), 2.0), starts, rows, vals
        )
        np.testing.assert_array_equal(new, np.arange(have, have + len(idx)))
        have += len(idx)
        res = inc.solve()
        ref = solve(_model(A, B, u, c, list(range(have))), relax=True, lp_method="simplex")
        assert res.status == ref.status == "optimal"
        assert res.objective == pytest.approx(ref.objective, abs=1e-8)
        assert res.x.shape == (have,)
        M = np.vstack([A, B])[:, :have]
        rl = np.concatenate([np.ones(m), np.full(2, -np.inf)])
        ru = np.concatenate([np.full(m, np.inf), u])
        # primal feasibility of the incremental solution and its objective
        assert np.all(M @ res.x >= rl - 1e-7) and np.all(M @ res.x <= ru + 1e-7)
        assert c[:have] @ res.x == pytest.approx(res.objective, abs=1e-8)
        _check_duality((M, rl, ru), res, c[:have], np.zeros(have), np.full(have, 2.0))
        # same sign convention as the "highs" backend: binding >= row dual >= 0, <= row <= 0
        assert np.all(res.duals[:m] >= -1e-9) and np.all(res.duals[m:] <= 1e-9)


def _cover_model(A, c):
    b = ModelBuilder("cover")
    x = b.add_vars("x", shape=(A.shape[1],), kind="continuous", lb=0.0, ub=np.inf)
    M = sp.coo_matrix(A)
    b.add_constraints("cover", M.row, x.index[M.col], M.data, ">=", np.ones(A.shape[0]))
    b.add_objective(x.index, c)
    return b.build()


def test_warm_start_needs_few_iterations():
    # covering LP min c'x, A x >= 1, x >= 0; expensive unit columns keep it feasible
    rng = np.random.default_rng(7)
    m, n0 = 150, 400
    R = rng.uniform(0.1, 1.0, (m, n0)) * (rng.random((m, n0)) < 0.05)
    A = np.hstack([np.eye(m), R])
    c = np.concatenate([np.full(m, 10.0), rng.uniform(0.5, 2.0, n0)])
    inc = IncrementalLP(_cover_model(A, c))
    cold = inc.solve()
    assert cold.status == "optimal"
    # an ordinary sparse column priced 10% below its dual value: it must enter the basis
    col = rng.uniform(0.1, 1.0, m) * (rng.random(m) < 0.1)
    cost = 0.9 * float(col @ cold.duals)
    assert cost - col @ cold.duals < -1e-6
    rows = np.flatnonzero(col)
    inc.add_columns([cost], [0.0], [np.inf], [0, rows.size], rows, col[rows])
    warm = inc.solve()
    A2, c2 = np.column_stack([A, col]), np.append(c, cost)
    ref = solve(_cover_model(A2, c2), relax=True, lp_method="simplex")
    assert warm.status == "optimal"
    assert warm.objective == pytest.approx(ref.objective, abs=1e-9)
    assert warm.objective < cold.objective - 1e-9
    # cold reference: the same LP from scratch, presolve off so both count simplex iterations
    scratch = IncrementalLP(_cover_model(A2, c2), presolve="off").solve()
    assert scratch.objective == pytest.approx(ref.objective, abs=1e-9)
    assert 1 <= warm.stats["iterations"]
    assert warm.stats["iterations"] * 5 <= scratch.stats["iterations"]
    # nothing changed: no iteration at all
    assert inc.solve().stats["iterations"] == 0


def test_values_groups_and_mip_relaxed():
    b = ModelBuilder("mip")
    x = b.add_vars("x", shape=(2,), kind="binary")
    b.add_constraints("r", [0, 0], x.index, [1.0, 1.0], ">=", [1.5])
    b.add_objective(x.index, [1.0, 2.0])
    inc = IncrementalLP(b.build())
    res = inc.solve()
    assert res.status == "optimal"
    assert res.objective == pytest.approx(2.0)  # LP relaxation: x = (1, 0.5)
    np.testing.assert_allclose(res.values["x"], [1.0, 0.5])
    inc.add_columns([0.5], [0.0], [1.0], [0, 1], [0], [1.0])
    res = inc.solve()
    assert res.objective == pytest.approx(1.0)  # x = (0.5, 0, 1): the new column is cheapest
    assert res.values["x"].shape == (2,) and res.x.shape == (3,)


def test_infeasible_and_time_limit():
    b = ModelBuilder("inf")
    x = b.add_vars("x", shape=(1,), kind="continuous", lb=0.0, ub=1.0)
    b.add_constraints("r", [0], x.index, [1.0], ">=", [2.0])
    b.add_objective(x.index, [1.0])
    inc = IncrementalLP(b.build())
    assert inc.solve(time_limit=10.0).status == "infeasible"
    inc.add_columns([1.0], [0.0], [5.0], [0], [0], [1.0])  # now feasible
    res = inc.solve()
    assert res.status == "optimal" and res.objective == pytest.approx(2.0)


def test_bad_input():
    b = ModelBuilder("m")
    x = b.add_vars("x", shape=(1,), kind="continuous", lb=0.0, ub=1.0)
    b.add_constraints("r", [0], x.index, [1.0], "<=", [1.0])
    b.add_objective(x.index, [1.0])
    model = b.build()
    with pytest.raises(TypeError, match="model"):
        IncrementalLP("not a model")
    with pytest.raises(ValueError, match="lp_method"):
        IncrementalLP(model, lp_method="barrier")
    with pytest.raises(ValueError, match="option"):
        IncrementalLP(model, no_such_option=1)
    inc = IncrementalLP(model)
    with pytest.raises(ValueError, match="same length"):
        inc.add_columns([1.0, 2.0], [0.0], [1.0, 1.0], [0, 1], [0, 0], [1.0, 1.0])
    with pytest.raises(ValueError, match="csc_index rows"):
        inc.add_columns([1.0], [0.0], [1.0], [0], [3], [1.0])
    with pytest.raises(ValueError, match="lower must be"):
        inc.add_columns([1.0], [2.0], [1.0], [0], [0], [1.0])
    with pytest.raises(ValueError, match="time_limit"):
        inc.solve(time_limit=0)
    assert inc.add_columns([], [], [], [], [], []).shape == (0,)
    assert inc.n_vars == 1


def test_colgen_master_result_is_consistent_with_its_ir_model():
    # the incremental master's solution, re-indexed to the IR master, must be feasible for it,
    # attain its objective and satisfy c - A.T y = reduced costs (a wrong column order breaks all)
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from odtkit.pruning import column_generation, extract, prune

    X, y = make_classification(
        120, n_features=6, n_informative=4, n_redundant=0, random_state=3, flip_y=0.2
    )
    rf = RandomForestClassifier(5, max_depth=4, random_state=3).fit(X, y)
    d = extract(rf, X, y, np.random.default_rng(3).uniform(0.5, 3.0, 6))
    lam = 0.004
    cg = column_generation(d, lam=lam, init="root")
    assert cg.stats["incremental"] and cg.status == "optimal" and cg.stats["iterations"] > 1
    model, res = cg.stats["model_ir"], cg.solution
    assert model.check(res.x).empty
    assert model.objective_value(res.x) == pytest.approx(res.objective, abs=1e-9)
    np.testing.assert_allclose(model.c - model.A.T @ res.duals, res.reduced_costs, atol=1e-9)
    assert res.values["alpha"].shape == (model.vars["alpha"].stop,)
    assert cg.stats["lp_value"] == pytest.approx(
        prune(d, lam=lam, method="lp").solution.objective, abs=1e-9
    )
    assert cg.stats["simplex_iterations"] >= 0


@pytest.mark.parametrize("seed", range(3))
def test_colgen_variants_agree(seed):
    # incremental vs rebuilt master, merged vs per-entry link rows: the same LP-IP3 value, equal
    # to the compact LP's, and integral prunings with the same objective
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from odtkit.pruning import column_generation, extract, objective_terms, prune

    rng = np.random.default_rng(seed)
    X, y = make_classification(
        150, n_features=5, n_informative=3, n_redundant=0, random_state=seed, flip_y=0.2
    )
    X = np.round(X, 0)  # duplicated rows, so merging has something to merge
    rf = RandomForestClassifier(4, max_depth=3 + seed, random_state=seed).fit(X, y)
    d = extract(rf, X, y, rng.uniform(0.5, 3.0, 5))
    lam = [0.001, 0.01, 0.05][seed]
    ref = prune(d, lam=lam, method="lp")
    runs = {
        (inc, merge): column_generation(d, lam=lam, incremental=inc, merge=merge)
        for inc in (True, False)
        for merge in (True, False)
    }
    for cg in runs.values():
        assert cg.status == "optimal"
        assert cg.stats["lp_value"] == pytest.approx(ref.solution.objective, abs=1e-9)
        assert objective_terms(d, cg.model.leaves, lam=lam)["objective"] == pytest.approx(
            ref.objective, abs=1e-9
        )
        # the reported master is the Model IR of the solved columns, whatever the variant
        master = cg.stats["model_ir"]
        assert master.check(cg.solution.x).empty
        assert master.objective_value(cg.solution.x) == pytest.approx(cg.stats["lp_value"])
    rows = {k: cg.stats["master_rows"] for k, cg in runs.items()}
    assert rows[(True, True)] < rows[(True, False)] == d.n_entries
    with pytest.raises(ValueError, match="incremental"):
        column_generation(d, lam=lam, backend="pulp", incremental=True)

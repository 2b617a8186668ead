"""Model IR: building, immutability, views, feasibility checks and the LP/MPS writers."""

from __future__ import annotations

import highspy
import numpy as np
import pytest
import scipy.sparse as sp

from odtkit.model import ConstraintBlock, Model, ModelBuilder, VarGroup


def small_model() -> Model:
    """min 2a + 3b0 + b1 + 5   s.t.  a + b0 >= 1,  b0 + b1 <= 1,  a - b1 == 0,  0 <= a <= 4 int."""
    b = ModelBuilder("small")
    a = b.add_vars("a", shape=1, kind="integer", lb=0, ub=4)
    bb = b.add_vars("b", shape=(2,), kind="continuous", lb=0.0, ub=[1.0, 2.0], labels=(["p", "q"],))
    b.add_constraints(
        "rows",
        rows=[0, 0, 1, 1, 2, 2],
        cols=[a.index[0], bb.index[0], bb.index[0], bb.index[1], a.index[0], bb.index[1]],
        vals=[1, 1, 1, 1, 1, -1],
        sense=[">=", "<=", "=="],
        rhs=[1, 1, 0],
    )
    b.add_objective(a.index, 2.0)
    b.add_objective(bb.index, [3.0, 1.0])
    b.set_objective_offset(5.0)
    return b.build()


def test_builder_assembles_matrix_bounds_and_objective():
    m = small_model()
    assert (m.n_vars, m.n_constraints, m.n_nonzeros) == (3, 3, 6)
    np.testing.assert_array_equal(m.A.toarray(), [[1, 1, 0], [0, 1, 1], [1, 0, -1]])
    np.testing.assert_array_equal(m.row_lower, [1, -np.inf, 0])
    np.testing.assert_array_equal(m.row_upper, [np.inf, 1, 0])
    np.testing.assert_array_equal(m.col_upper, [4, 1, 2])
    np.testing.assert_array_equal(m.integrality, [True, False, False])
    np.testing.assert_array_equal(m.c, [2, 3, 1])
    assert m.offset == 5.0
    assert isinstance(m.A, sp.csr_matrix)
    assert isinstance(m.vars["b"], VarGroup) and m.vars["b"].labels == (("p", "q"),)
    assert isinstance(m.constraints["rows"], ConstraintBlock) and m.constraints["rows"].size == 3
    np.testing.assert_array_equal(m.vars["b"].index, [1, 2])


def test_duplicate_triplets_accumulate_and_objective_accumulates():
    b = ModelBuilder()
    x = b.add_vars("x", shape=(2, 2), kind="binary")
    b.add_constraints(
        "c", rows=[0, 0, 0], cols=[x.index[0, 0], x.index[0, 0], x.index[1, 1]], vals=1.0, rhs=[1.0]
    )
    b.add_objective(x.index.ravel(), 1.0)
    b.add_objective(x.index[0], 2.0)
    m = b.build()
    np.testing.assert_array_equal(m.A.toarray(), [[2, 0, 0, 1]])
    np.testing.assert_array_equal(m.c, [3, 3, 1, 1])


def test_matrix_input_and_range_constraints():
    b = ModelBuilder()
    b.add_vars("x", shape=3, lb=-1, ub=1)
    b.add_constraints("m", matrix=sp.csr_matrix(np.array([[1.0, 2.0, 0.0]])), sense="==", rhs=1.0)
    b.add_range_constraints(
        "r", rows=[0, 1], cols=[0, 2], vals=1.0, lower=[-0.5, 0.0], upper=[0.5, 2.0]
    )
    m = b.build()
    np.testing.assert_array_equal(m.row_lower, [1, -0.5, 0])
    np.testing.assert_array_equal(m.row_upper, [1, 0.5, 2])


def test_model_is_immutable():
    m = small_model()
    with pytest.raises(ValueError):
        m.c[0] = 1.0
    with pytest.raises(ValueError):
        m.A.data[0] = 7.0
    with pytest.raises(TypeError):
        m.vars["z"] = m.vars["a"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        m.offset = 3.0  # type: ignore[misc]


def test_builder_closes_after_build_and_validates_input():
    b = ModelBuilder()
    x = b.add_vars("x", shape=2)
    with pytest.raises(ValueError, match="already used"):
        b.add_vars("x", shape=1)
    with pytest.raises(ValueError, match="name"):
        b.add_vars("1bad", shape=1)
    with pytest.raises(ValueError, match="kind"):
        b.add_vars("y", shape=1, kind="boolean")
    with pytest.raises(ValueError, match="cols"):
        b.add_constraints("c", rows=[0], cols=[5], vals=[1.0], rhs=[0.0])
    with pytest.raises(ValueError, match="sense"):
        b.add_constraints("c", rows=[0], cols=[0], vals=[1.0], sense="<", rhs=[0.0])
    with pytest.raises(ValueError, match="rows"):
        b.add_constraints("c", rows=[3], cols=[0], vals=[1.0], rhs=[0.0, 1.0])
    b.add_objective(x.index, 1.0)
    b.build()
    with pytest.raises(RuntimeError, match="already built"):
        b.add_vars("z", shape=1)


def test_values_vector_round_trip_and_objective_value():
    m = small_model()
    vals = m.values(np.array([1.0, 0.0, 1.0]))
    assert set(vals) == {"a", "b"} and vals["b"].shape == (2,)
    np.testing.assert_array_equal(m.vector(vals), [1, 0, 1])
    assert m.objective_value(np.array([1.0, 0.0, 1.0])) == 2 + 1 + 5
    with pytest.raises(ValueError, match="lacks"):
        m.vector({"a": [1.0]})
    with pytest.raises(ValueError, match="length"):
        m.values(np.zeros(5))


def test_check_reports_rows_bounds_and_integrality():
    m = small_model()
    assert m.check(np.array([1.0, 0.0, 1.0])).empty
    assert m.is_feasible({"a": [1.0], "b": [0.0, 1.0]})
    report = m.check(np.array([0.5, 1.5, 0.0]))
    by_block = {(r.block, r.row): r.violation for r in report.itertuples()}
    assert by_block[("rows", 1)] == pytest.approx(0.5)  # b0 + b1 = 1.5 > 1
    assert by_block[("rows", 2)] == pytest.approx(0.5)  # a - b1 = 0.5 != 0
    assert by_block[("bounds:b", 0)] == pytest.approx(0.5)  # b0 = 1.5 > 1
    assert by_block[("integrality:a", 0)] == pytest.approx(0.5)
    assert ("rows", 0) not in by_block  # 0.5 + 1.5 >= 1 holds


def test_relaxed_drops_integrality_only():
    m = small_model()
    r = m.relaxed()
    assert not r.integrality.any() and r.vars["a"].kind == "continuous"
    assert r.A is m.A and r.offset == m.offset
    assert m.integrality[0]


def test_summary_repr_and_html():
    m = small_model()
    s = m.summary()
    assert list(s["name"]) == ["a", "b", "rows"]
    assert list(s["nonzeros"]) == [2, 4, 6]
    assert "3 vars" in repr(m) and "<table" in m._repr_html_()


def test_names_are_lp_legal():
    b = ModelBuilder()
    b.add_vars("f", shape=(2, 3), kind="binary")
    b.add_vars("s", shape=())
    b.add_constraints("route", rows=[0, 1], cols=[0, 6], vals=1.0, rhs=[1.0, 1.0])
    m = b.build()
    assert m.column_names()[:4] == ["f_0_0", "f_0_1", "f_0_2", "f_1_0"]
    assert m.column_names()[-1] == "s"
    assert m.row_names() == ["route_0", "route_1"]


def _highs_optimum(path: str) -> float | None:
    """The optimum HiGHS reads from the file; None when it finds the model infeasible."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(path) == highspy.HighsStatus.kOk
    h.setOptionValue("mip_rel_gap", 0.0)
    h.run()
    if h.getModelStatus() == highspy.HighsModelStatus.kInfeasible:
        return None
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value


def random_mip(seed: int) -> Model:
    rng = np.random.default_rng(seed)
    n, m = 12, 8
    b = ModelBuilder(f"rand{seed}")
    x = b.add_vars("x", shape=(n // 2, 2), kind="binary")
    y = b.add_vars("y", shape=3, kind="integer", lb=-2, ub=5)
    z = b.add_vars("z", shape=2, kind="continuous", lb=[-np.inf, 0.0], ub=[np.inf, 3.0])
    cols = np.concatenate([x.index.ravel(), y.index, z.index])
    A = rng.integers(-3, 4, size=(m, cols.size)).astype(float)
    A[rng.random(A.shape) < 0.4] = 0.0
    r, c = np.nonzero(A)
    senses = rng.choice(["<=", ">=", "=="], size=m, p=[0.5, 0.4, 0.1])
    rhs = np.where(senses == "==", 0.0, rng.integers(-2, 6, size=m)).astype(float)
    b.add_constraints("mix", r, cols[c], A[r, c], senses, rhs)
    b.add_range_constraints(
        "box",
        rows=[0, 0],
        cols=[z.index[0], y.index[0]],
        vals=[1.0, 1.0],
        lower=[-4.0],
        upper=[4.0],
    )
    b.add_objective(cols, rng.integers(-5, 6, size=cols.size))
    b.add_objective(z.index[0], 0.0)
    b.set_objective_offset(float(rng.normal()))
    return b.build()


@pytest.mark.parametrize("seed", range(6))
def test_lp_and_mps_files_give_the_same_optimum(tmp_path, seed):
    from odtkit.solvers import solve

    model = random_mip(seed)
    direct = solve(model)
    model.to_lp(tmp_path / "m.lp")
    model.to_mps(tmp_path / "m.mps")
    if direct.status == "infeasible":  # seed 4: then the files must be infeasible too
        assert _highs_optimum(str(tmp_path / "m.lp")) is None
        assert _highs_optimum(str(tmp_path / "m.mps")) is None
        return
    assert direct.status == "optimal"
    assert _highs_optimum(str(tmp_path / "m.lp")) == pytest.approx(direct.objective, abs=1e-7)
    assert _highs_optimum(str(tmp_path / "m.mps")) == pytest.approx(direct.objective, abs=1e-7)
    # and the solution satisfies the IR's own check
    assert model.check(direct.x).empty


@pytest.mark.parametrize("formulation", ["rbinoct", "flowoct"])
def test_formulation_models_round_trip_through_lp_and_mps(tmp_path, formulation):
    """A tree model written by our writers and re-read by HiGHS has the same optimum (11/30)."""
    from odtkit.formulations import FlowOCT, RBinOCT
    from odtkit.testing import example_dataset_trees

    form = RBinOCT() if formulation == "rbinoct" else FlowOCT()
    model = form.build(example_dataset_trees(), max_depth=2, lam=0.1)
    model.to_lp(tmp_path / "t.lp")
    model.to_mps(tmp_path / "t.mps")
    for name in ("t.lp", "t.mps"):
        assert _highs_optimum(str(tmp_path / name)) == pytest.approx(11 / 30, abs=1e-7)

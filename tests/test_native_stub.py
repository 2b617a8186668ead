"""The native extension's typed seam: its stub, its status enum and its typed search output.

``src/odtkit/_native.pyi`` is what mypy checks every call into the extension against, so
it must name exactly what the built module holds. It is written by nanobind's stubgen; after a
change to the bindings, rebuild and regenerate it from the repository root with

    stub=src/odtkit/_native.pyi
    PYTHONPATH=src python -m nanobind.stubgen -P -m odtkit._native -o $stub
    ruff check --fix $stub && ruff format $stub
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest

import odtkit
from odtkit import _native
from odtkit.core._problem import leaf_answer, native_status
from odtkit.results import Status

# the package's folder, not the extension's: an editable install keeps the built module in
# site-packages and the stub (a source file) in src/
STUB = Path(odtkit.__file__).resolve().parent / "_native.pyi"
NATIVE_SOURCES = Path(__file__).resolve().parents[1] / "src" / "odtkit" / "core" / "native"


def _stub_tree() -> ast.Module:
    assert STUB.is_file(), f"{STUB} is missing: the native module has no stub"
    return ast.parse(STUB.read_text(encoding="utf-8"))


def _defined(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _public(names: Iterable[str]) -> set[str]:
    return {name for name in names if not name.startswith("__")}


def test_the_stub_names_every_attribute_of_the_built_module() -> None:
    """dir(_native) and the stub's top-level names agree both ways (a binding added without
    regenerating the stub, or a stale stub entry, fails here)."""
    assert _public(_defined(_stub_tree().body)) == _public(dir(_native))


def test_the_stub_names_every_member_of_each_bound_class() -> None:
    classes = {n.name: n for n in _stub_tree().body if isinstance(n, ast.ClassDef)}
    for name, node in classes.items():
        bound = getattr(_native, name)
        stub_members = {n for n in _defined(node.body) if not n.startswith("_")}
        assert stub_members == {m for m in dir(bound) if not m.startswith("_")}, name


def _small_problem() -> _native.Problem:
    rng = np.random.default_rng(3)
    X = rng.random((60, 6)) < 0.5
    y = (X[:, 0] ^ X[:, 1]).astype(np.int32)
    return _native.Problem(X, y, np.ones(60), 2)


def test_a_search_returns_a_typed_read_only_output_with_a_status_enum() -> None:
    out = _native.search_dp(_small_problem(), _native.SearchConfig(lam=0.01, max_depth=2))
    assert isinstance(out, _native.SearchOutput)
    assert out.status is _native.SearchStatus.optimal
    assert len(out.tree) == 7  # the xor of features 0 and 1: three splits, four leaves
    assert out.lower_bound == pytest.approx(out.objective)
    assert len(out.trace_time) == len(out.trace_incumbent) == len(out.trace_bound) >= 1
    assert out.split_column == out.split_rank == out.split_missing_le == []
    with pytest.raises(AttributeError):
        out.objective = 0.0  # type: ignore[misc]  # read-only is the point
    changed = out.replace(tree=[-1], stats={"x": 1.0})
    assert (changed.tree, changed.stats, changed.objective) == ([-1], {"x": 1.0}, out.objective)
    assert out.tree != [-1]  # replace made a copy


def test_every_native_status_maps_to_a_user_status() -> None:
    for member in _native.SearchStatus:
        assert native_status(member) == Status(member.name)
    rng = np.random.default_rng(3)
    X = rng.random((200, 12)) < 0.5
    noise = (rng.random(200) < 0.5).astype(np.int32)
    problem = _native.Problem(X, noise, np.ones(200), 2)
    limited = _native.search_dp(problem, _native.SearchConfig(lam=0.0, max_depth=4, node_limit=1))
    assert native_status(limited.status) is Status.NODE_LIMIT


def test_the_leaf_answer_is_a_search_output() -> None:
    y = np.array([0, 1, 1, 1])
    out = leaf_answer(y, np.ones(4), 2, 0.1)
    assert isinstance(out, _native.SearchOutput)
    assert out.status is _native.SearchStatus.memory_limit
    assert out.tree == [-2] and out.objective == pytest.approx(0.35)
    assert out.lower_bound == pytest.approx(0.1) and out.stats == {"out_of_memory": 1.0}


def test_the_fair_search_is_split_by_concern_on_one_budget() -> None:
    sources = sorted(NATIVE_SOURCES.glob("fair_*"))
    assert {p.name for p in sources} >= {
        "fair_dp.cpp",
        "fair_fronts.hpp",
        "fair_fronts.cpp",
        "fair_bounds.cpp",
        "fair_search.cpp",
    }
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) < 700, path.name
        # the fair search keeps no memory limit of its own beside the Budget's
        assert not re.search(r"\bmemory_(limit|stop)_\b", text), path.name

"""One oracle-agreement check for the side-constraint tests (tests/test_constraints_*.py).

A solver under ``constraints`` either reaches the optimum of
:func:`odtkit.testing.brute_force_constrained_tree` with a tree that satisfies every constraint
(as :func:`odtkit.metrics.constraint_violations` measures), or says ``infeasible`` with no tree
when the oracle finds none. The random constraints come from
:func:`odtkit.testing.random_constraint`; each test file keeps its own settings and special
cases and passes its solver as a callable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from odtkit import metrics, solve_formulation
from odtkit.constraints import resolve
from odtkit.datasets import Dataset
from odtkit.testing import brute_force_constrained_tree, random_dataset

TOL = 1e-6

#: ``solve(data, constraints, lam=, depth=) -> Result``
Solver = Callable[..., Any]


def constraint_dataset(
    rng: np.random.Generator,
    n_features: int,
    *,
    n_samples: tuple[int, int] = (4, 13),
    classes: tuple[int, ...] = (2, 2, 3),
    weighted: bool | None = None,
    zero_weight: float = 0.3,
) -> Dataset:
    """A tiny random instance: ``n_samples`` rows (low inclusive, high exclusive), a number of
    classes drawn from ``classes``, integer weights (drawn when ``weighted`` is None), and with
    probability ``zero_weight`` one or two rows of weight 0 (solvers leave them out, constraints
    must not read them)."""
    n = int(rng.integers(*n_samples))
    if weighted is None:
        weighted = bool(rng.random() < 0.7)
    data = random_dataset(
        int(rng.integers(2**31)),
        n,
        n_features,
        n_classes=int(rng.choice(classes)),
        weighted=weighted,
    )
    if rng.random() < zero_weight:
        w = np.array(data.weights, dtype=float)
        w[rng.choice(n, size=int(rng.integers(1, 3)), replace=False)] = 0.0
        if w.sum() > 0:
            data = dataclasses.replace(data, sample_weight=w)
    return data


def agree_with_oracle(
    solve: Solver,
    data: Dataset,
    constraints: list[Any],
    *,
    lam: float,
    depth: int,
    tol: float = TOL,
    oracle: tuple[Any, float] | None = None,
) -> tuple[Any, float, Any]:
    """Solve and compare with the oracle (``oracle``: its answer when the caller has it);
    returns ``(oracle_tree, oracle_value, result)`` for the caller's own further checks
    (``oracle_tree`` is None when infeasible)."""
    if oracle is None:
        oracle = brute_force_constrained_tree(data, constraints, lam=lam, max_depth=depth)
    tree, best = oracle
    result = solve(data, constraints, lam=lam, depth=depth)
    if tree is None:
        assert result.status == "infeasible", (result.status, result.message, constraints)
        assert result.model is None
        return tree, best, result
    assert result.status == "optimal", (result.status, result.message, constraints)
    assert result.objective == pytest.approx(best, abs=tol), constraints
    # under a cost objective (odtkit.costs, stated in the same list) the truth measures cost
    costs = resolve(constraints, data)
    assert metrics.objective(result.model, data, lam=lam, costs=costs) == pytest.approx(
        best, abs=tol
    )
    assert metrics.constraint_violations(result.model, data, constraints) == []
    assert result.model.depth <= depth
    return tree, best, result


def formulation_solver(form: Any, **kwargs: Any) -> Solver:
    """``solve_formulation(form, ...)`` as a :data:`Solver` (``kwargs`` passed through)."""

    def solve(data: Dataset, constraints: list[Any], *, lam: float, depth: int) -> Any:
        return solve_formulation(
            form, data, max_depth=depth, lam=lam, constraints=constraints, **kwargs
        )

    return solve


def formulation_agrees(
    form: Any,
    data: Dataset,
    constraints: list[Any],
    *,
    lam: float,
    depth: int,
    warm_start: bool = False,
    start_value: bool = True,
) -> Any:
    """:func:`agree_with_oracle` for a tree formulation, and the oracle's optimum is a feasible
    start of the model (of its value when ``start_value``; off where the model's objective is in
    other units, as BinOCT's error count); ``warm_start`` also hands it to the solver."""
    tree, best = brute_force_constrained_tree(data, constraints, lam=lam, max_depth=depth)
    if tree is not None:
        model = form.build(data, max_depth=depth, lam=lam, constraints=constraints)
        x = form.start(model, tree)
        assert model.is_feasible(x), model.check(x)
        if start_value:
            assert model.objective_value(x) <= best + TOL
    start = tree if warm_start else None
    solve = formulation_solver(form, start=start)
    return agree_with_oracle(solve, data, constraints, lam=lam, depth=depth, oracle=(tree, best))[2]


def assert_blocks_named(model: Any, names: Any, lp_path: Any) -> None:
    """Every name in ``names`` is a constraint block of ``model``, in ``summary()`` and in
    the LP file written to ``lp_path``."""
    summary = model.summary()
    assert set(names) <= set(summary["name"][summary["item"] == "constraints"])
    model.to_lp(lp_path)
    text = lp_path.read_text()
    for name in names:
        assert name in text, name


def assert_fairness_argument_is_one_more(form: Any, data: Dataset, outer: Any, inner: Any) -> None:
    """``fairness=outer`` beside ``constraints=[inner]`` is one more constraint (stated first by
    TreeFormulation.build): both blocks are there and the optimum is the oracle's of both."""
    model = form.build(data, max_depth=2, lam=0.0, fairness=outer, constraints=[inner])
    assert {"fairness", "fairness_2"} <= set(model.constraints)
    _, best = brute_force_constrained_tree(data, [outer, inner], lam=0.0, max_depth=2)
    result = solve_formulation(
        form, data, max_depth=2, lam=0.0, fairness=outer, constraints=[inner]
    )
    assert result.status == "optimal", result.message
    assert result.objective == pytest.approx(best, abs=TOL)

"""Old spellings of issue 38 item 4 keep working for one cycle, each with a FutureWarning that
names its replacement, and give the same answer as the new spelling (docs/deprecations.md)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from odtkit.results import Result, Status, relative_gap
from odtkit.solvers import Solution


def test_solution_bound_is_the_deprecated_spelling_of_lower_bound():
    new = Solution(status="time_limit", has_solution=True, objective=2.0, lower_bound=1.5, x=[0.0])
    with pytest.warns(FutureWarning, match="Solution.lower_bound"):
        old = Solution(status="time_limit", has_solution=True, objective=2.0, bound=1.5, x=[0.0])
    assert old.lower_bound == new.lower_bound == 1.5
    with pytest.warns(FutureWarning, match="Solution.lower_bound"):
        assert new.bound == 1.5
    with pytest.raises(TypeError, match="lower_bound only"):
        Solution(status="optimal", has_solution=False, bound=1.0, lower_bound=1.0)


def test_result_bound_is_the_deprecated_spelling_of_lower_bound():
    result = Result(
        model=None, objective=1.0, lower_bound=0.5, status=Status.FEASIBLE, time=0.0, method="dp"
    )
    with pytest.warns(FutureWarning, match="Result.lower_bound"):
        assert result.bound == 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        assert result.lower_bound == 0.5


@pytest.mark.parametrize(
    ("gap", "objective", "expected"),
    [
        (0.5, 2.0, 0.25),
        (0.5, -2.0, 0.25),
        (0.0, 0.0, 0.0),
        (0.5, 0.0, math.inf),
        (math.inf, 1.0, math.inf),
        (math.nan, 1.0, math.nan),
    ],
)
def test_one_relative_gap_for_results_and_solutions(gap, objective, expected):
    got = relative_gap(gap, objective)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected
    if not math.isnan(gap) and not math.isinf(gap):
        sol = Solution(
            status="feasible",
            has_solution=True,
            objective=objective,
            lower_bound=objective - gap,
            x=np.zeros(1),
        )
        res = Result(
            model=object(),
            objective=objective,
            lower_bound=objective - gap,
            status=Status.FEASIBLE,
            time=0.0,
            method="dp",
        )
        assert sol.relative_gap == res.relative_gap == got


# --- search_tree: SearchOptions, and search_numeric for a raw table ---------------------------


def _same_answer(a, b):
    assert a.status == b.status and a.objective == b.objective and a.lower_bound == b.lower_bound
    assert a.model == b.model


@pytest.mark.parametrize(
    "moved",
    [
        {"node_limit": 50},
        {"bounds": {"depth2": False}},
        {"policy": "bfs", "strategy": "recursive"},
        {"upper_bound": 0.5},
        {"progress": False},
    ],
)
def test_search_tree_keywords_moved_into_search_options(moved):
    from odtkit.core import SearchOptions, search_tree
    from odtkit.testing import example_dataset_trees

    data = example_dataset_trees()
    method = "bnb" if "policy" in moved else "dp"
    new = search_tree(data, lam=0.01, max_depth=3, method=method, options=SearchOptions(**moved))
    with pytest.warns(FutureWarning, match=r"options=SearchOptions\("):
        old = search_tree(data, lam=0.01, max_depth=3, method=method, **moved)
    _same_answer(old, new)


def test_search_tree_refuses_a_setting_given_both_ways():
    from odtkit.core import SearchOptions, search_tree
    from odtkit.testing import example_dataset_trees

    with pytest.raises(TypeError, match="node_limit given both"):
        search_tree(
            example_dataset_trees(),
            lam=0.01,
            node_limit=5,
            options=SearchOptions(node_limit=9),
        )
    with pytest.raises(TypeError, match="options must be an odtkit.core.SearchOptions"):
        search_tree(example_dataset_trees(), lam=0.01, options={"node_limit": 5})


def test_search_tree_on_a_raw_table_is_search_numeric():
    from odtkit.core import search_numeric, search_tree

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    weight = rng.uniform(0.5, 2.0, size=40)
    new = search_numeric(X, y, lam=0.01, max_depth=2, sample_weight=weight)
    with pytest.warns(FutureWarning, match=r"search_numeric\(X, y"):
        old = search_tree(X, y=y, lam=0.01, max_depth=2, sample_weight=weight)
    _same_answer(old, new)


# --- prune: one method per way of solving -----------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"method": "cut", "budget_method": "exact"}, "cut"),
        ({"method": "lp", "budget_method": "exact"}, "lp"),
        ({"method": "cut", "budget_method": "lambda"}, "hull"),
        ({"method": "lp", "budget_method": "lambda"}, "lambda"),
    ],
)
def test_prune_budget_method_folds_into_method(old, new):
    from odtkit.pruning import extract, prune, worked_example

    data = extract(*worked_example())
    for budget in (0.0, 2.0, 3.0, 4.0):
        fresh = prune(data, budget=budget, method=new)
        with pytest.warns(FutureWarning, match=f"method={new!r}"):
            before = prune(data, budget=budget, **old)
        assert (before.status, before.method) == (fresh.status, fresh.method)
        assert before.objective == fresh.objective and before.lower_bound == fresh.lower_bound
        assert all(
            np.array_equal(a, b)
            for a, b in zip(before.model.leaves, fresh.model.leaves, strict=True)
        )


def test_prune_settings_that_mean_nothing_warn_and_wrong_ones_raise():
    from odtkit.pruning import extract, prune, worked_example

    data = extract(*worked_example())
    plain = prune(data, lam=0.1)
    with pytest.warns(FutureWarning, match="without a budget it has no effect"):
        assert prune(data, lam=0.1, budget_method="exact").objective == plain.objective
    with pytest.warns(FutureWarning, match="formulation has no effect with method='cut'"):
        assert prune(data, lam=0.1, formulation="full").objective == plain.objective
    with pytest.warns(FutureWarning, match="formulation has no effect with method='hull'"):
        prune(data, budget=2.0, method="hull", formulation="compact")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        full = prune(data, lam=0.1, method="lp", formulation="full")
        assert full.objective == pytest.approx(plain.objective)
        prune(data, budget=2.0, method="lambda", formulation="full")
    with pytest.raises(ValueError, match="meets a budget"):
        prune(data, lam=0.1, method="hull")
    with pytest.raises(ValueError, match="solves the λ problem"):
        prune(data, budget=2.0, method="mip")
    with pytest.raises(ValueError, match="budget_method"):
        prune(data, budget=2.0, budget_method="nope")


# --- the library's own calls use no deprecated spelling ---------------------------------------


def test_default_entry_points_raise_no_future_warning():
    """pyproject has no filterwarnings: a deprecated spelling used inside odtkit would warn
    every user, so each entry point's default call must stay silent."""
    from sklearn.ensemble import RandomForestClassifier

    import odtkit
    from odtkit.pruning import prune
    from odtkit.testing import example_dataset_trees

    data = example_dataset_trees()
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        odtkit.OptimalTreeClassifier(max_depth=2, lam=0.01).fit(X, y)
        odtkit.compare(data, lam=0.05, max_depth=2, methods=("dp", "flowoct"), time_limit=30)
        odtkit.sweep(data, lams=(0.05,), depths=(2,), folds=None, progress=False, n_jobs=1)
        odtkit.regularization_path(data, max_depth=2, lam_min=0.01)
        odtkit.rashomon(data, lam=0.05, max_depth=2, epsilon=0.05)
        forest = RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y)
        prune(forest, X, y, lam=0.01)
        prune(forest, X, y, budget=1.0)

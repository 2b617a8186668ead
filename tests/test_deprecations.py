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

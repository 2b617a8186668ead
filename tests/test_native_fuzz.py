"""Fuzzing of the native bindings (issue 13 part 6), and the reproducers of what it found.

The CI step of ``.ci/run`` also runs this file against a build with AddressSanitizer and
UndefinedBehaviorSanitizer (``-Ccmake.define.ODTKIT_SANITIZE=ON``), where an out-of-bounds
access, a use after free or undefined behaviour aborts instead of passing unnoticed.
"""

from __future__ import annotations

import numpy as np
import pytest

from odtkit.core import _native

SEARCHES = {
    "dp": _native.search_dp,
    "dp_anytime": _native.search_dp_anytime,
    "dp_queue": _native.search_dp_queue,
    "bnb": _native.search_bnb,
    "corels": _native.search_corels,
}


# ------------------------------------------------------------------------------------------
# Reproducers
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SEARCHES)
def test_a_problem_without_features_is_a_single_leaf(name: str) -> None:
    """0 features: bnb's arenas were asked for runs of 0 words before holding any page, and
    read pages_.back() of an empty vector (a segfault in the release build)."""
    problem = _native.Problem(
        np.zeros((3, 0), dtype=bool), np.array([0, 1, 1], dtype=np.int32), np.ones(3), 2
    )
    out = SEARCHES[name](problem, _native.SearchConfig(lam=0.01))
    assert out["tree"] == [-2]
    assert out["status"] == "optimal"
    # a tree pays lam for its leaf, a rule list nothing for its default rule
    assert out["objective"] == pytest.approx(1 / 3 + (0.0 if name == "corels" else 0.01))
    assert out["lower_bound"] == pytest.approx(out["objective"])


@pytest.mark.parametrize(
    ("n", "weight"), [(0, 1.0), (3, 0.0), (3, 1e308)], ids=["no-rows", "zero", "overflow"]
)
def test_a_problem_whose_weights_do_not_sum_to_a_positive_number_is_refused(
    n: int, weight: float
) -> None:
    """dp, the anytime dp and the fair dp answered NaN with status 'optimal' on 0 rows or all
    weights 0 (bnb and corels refused them), and 1e308 * 3 overflowed the total to inf."""
    X = np.zeros((n, 2), dtype=bool)
    with pytest.raises(ValueError, match="weights"):
        _native.Problem(X, np.zeros(n, dtype=np.int32), np.full(n, weight), 2)

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

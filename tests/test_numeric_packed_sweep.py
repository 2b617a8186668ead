"""The two-class stump sweep on 16-bit lanes against the brute force and the 32-bit sweep
(issue 41).

With two classes, whole weights and a total below 2^15, a sub-problem that sweeps thresholds
keeps a 16-bit copy of its column orders and sweeps eight rows at a time; a split of a column
without missing rows marks its le side by comparing positions in that column's order, and a
side that costs at most 2 Lambda leaves the sweep (docs §3.10). These tables have ties (a
threshold only after the last row of a rank), missing cells (the gathered path and the missing
rows' own counts), and weights that bring the total right below 2^15. The answer must be the
brute force's optimum, and scaling every weight by the same factor (a total above 2^15, so the
32-bit sweep runs instead) must give the same objective, bound and status.
"""

from __future__ import annotations

import numpy as np
import pytest
from _oracle_settings import oracle_settings
from hypothesis import assume, given
from hypothesis import strategies as st

from odtkit.core import search_numeric
from odtkit.testing import brute_force_threshold_tree, random_numeric_table

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TOL = 1e-9
PACKED = oracle_settings(60)


def _table(seed: int, missing: float, heavy: bool):
    """Two classes, whole weights, ties, and a near-continuous column; `heavy`: weights that
    bring the total to just below 2^15 (the largest partial sums the 16-bit lanes hold)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 17))
    X, y, _ = random_numeric_table(
        seed, n_rows=n, n_columns=int(rng.integers(2, 4)), n_classes=2, missing=missing
    )
    column = np.round(rng.normal(size=(n, 1)), 1)
    X = np.hstack([column, X])
    w = rng.integers(1, 4, size=n).astype(float)
    if heavy:
        w = np.floor(w / w.sum() * 32760.0)
        w[0] += 32767.0 - w.sum()
    return X, y, w


@PACKED
@given(
    seed=st.integers(0, 2**32 - 1),
    lam=st.sampled_from([0.0, 0.01, 0.04, 0.1]),
    depth=st.integers(2, 3),
    missing=st.sampled_from([0.0, 0.0, 0.25]),
    heavy=st.booleans(),
)
def test_packed_sweep_matches_the_brute_force_and_the_wide_sweep(seed, lam, depth, missing, heavy):
    X, y, w = _table(seed, missing, heavy)
    assume(len(np.unique(y)) > 1)
    _, optimum = brute_force_threshold_tree(X, y, lam=lam, max_depth=depth, sample_weight=w)
    packed = search_numeric(X, y, lam=lam, max_depth=depth, sample_weight=w)
    # a total of 40,000 or more: the 32-bit sweep, the same optimum
    wide = search_numeric(X, y, lam=lam, max_depth=depth, sample_weight=w * 5000.0)
    context = {"packed": packed.objective, "wide": wide.objective, "oracle": optimum}
    assert packed.status == "optimal", context
    assert packed.objective == pytest.approx(optimum, abs=TOL), context
    assert packed.lower_bound == pytest.approx(optimum, abs=TOL), context
    assert wide.status == "optimal", context
    assert wide.objective == pytest.approx(packed.objective, abs=TOL), context


@PACKED
@given(seed=st.integers(0, 2**32 - 1), lam=st.sampled_from([0.005, 0.02]))
def test_depth_four_with_packed_sweeps_matches_the_brute_force(seed, lam):
    # depth 4: the packed sweep also bounds the depth-3 children of the root (its stump pass)
    X, y, w = _table(seed, 0.0, False)
    X, y, w = X[:12], y[:12], w[:12]
    assume(len(np.unique(y)) > 1)
    _, optimum = brute_force_threshold_tree(X, y, lam=lam, max_depth=4, sample_weight=w)
    result = search_numeric(X, y, lam=lam, max_depth=4, sample_weight=w)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(optimum, abs=TOL)

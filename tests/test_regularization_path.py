"""regularization_path: every breakpoint checked against independent truths.

* tiny instances: the lower convex hull of (leaves, mistakes) over *every* tree
  (``enumerate_trees``) gives the exact path, breakpoints included;
* small instances: the brute-force oracle at every breakpoint, just below and above it, and at
  every segment's midpoint;
* bundled sets: ``search_tree`` just below and above every breakpoint.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import odtkit
from odtkit import datasets, metrics
from odtkit.core import RegularizationPath, regularization_path, search_tree
from odtkit.core.path import PATH_COLUMNS
from odtkit.datasets import Dataset
from odtkit.testing import brute_force_tree, dataset_strategy, enumerate_trees, random_dataset


def exact_path(data: Dataset, max_depth: int, lam_min: float) -> list[tuple[int, int, Fraction]]:
    """(leaves, mistakes, start λ·n) of each piece, from the hull of all trees' (L, m) points.

    Unweighted data only (integer mistakes, exact rational breakpoints).
    """
    best: dict[int, int] = {}
    for tree in enumerate_trees(data.n_features, max_depth, data.n_classes):
        m = int(metrics.misclassified(tree, data))
        best[tree.n_leaves] = min(best.get(tree.n_leaves, m), m)
    # lower convex hull, from the single leaf towards more leaves, keeping only the part where
    # mistakes strictly fall (a vertex must be strictly better somewhere)
    hull: list[tuple[int, int]] = []
    for point in sorted(best.items()):
        if hull and point[1] >= hull[-1][1]:
            continue
        while len(hull) >= 2:
            (l1, m1), (l2, m2) = hull[-2], hull[-1]
            # drop the middle point unless it lies strictly below the chord
            if (m2 - m1) * (point[0] - l1) >= (point[1] - m1) * (l2 - l1):
                hull.pop()
            else:
                break
        hull.append(point)
    lo = Fraction(lam_min) * data.n_samples
    pieces = []
    # walk from the most leaves (small λ) to the single leaf
    hull.reverse()
    for i, (leaves, m) in enumerate(hull):
        start = Fraction(0) if i == 0 else Fraction(m - hull[i - 1][1], hull[i - 1][0] - leaves)
        end = (
            Fraction(hull[i + 1][1] - m, leaves - hull[i + 1][0]) if i + 1 < len(hull) else math.inf
        )
        if end <= lo:
            continue
        pieces.append((leaves, m, max(start, lo)))
    return pieces


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 2**32 - 1),
    st.integers(3, 14),
    st.integers(1, 3),
    st.integers(1, 2),
    st.sampled_from([0.0, 0.0, 0.02, 0.1]),
)
def test_path_equals_hull_of_all_trees(seed: int, n: int, p: int, depth: int, lam_min: float):
    data = random_dataset(seed, n, p)
    path = regularization_path(data, max_depth=depth, lam_min=lam_min)
    expected = exact_path(data, depth, lam_min)
    assert path.status == "optimal" and path.certified
    got = [(s.n_leaves, int(s.misclassified)) for s in path.segments]
    assert got == [(leaves, m) for leaves, m, _ in expected]
    starts = [float(x) / n for _, _, x in expected]
    assert [s.lam_lo for s in path.segments] == pytest.approx(starts, rel=1e-12, abs=1e-15)


def _check_against_oracle(data: Dataset, path: RegularizationPath, depth: int) -> None:
    segs = path.segments
    assert segs[0].lam_lo == path.lam_min and segs[-1].lam_hi == math.inf
    for a, b in zip(segs, segs[1:], strict=False):
        assert a.lam_hi == b.lam_lo and a.n_leaves > b.n_leaves and a.loss < b.loss
    assert segs[-1].n_leaves == 1
    probes = []
    for s in segs:
        hi = s.lam_hi if math.isfinite(s.lam_hi) else s.lam_lo + 0.5
        probes.append((s, (s.lam_lo + hi) / 2))
        width = hi - s.lam_lo
        probes.append((s, s.lam_lo + 1e-3 * width))  # just above the breakpoint on its left
        probes.append((s, hi - 1e-3 * width))  # just below the one on its right
        probes.append((s, s.lam_lo))  # at a breakpoint both neighbours are optimal
    for s, lam in probes:
        # the segment's tree is a real tree scoring what the path says
        assert metrics.objective(s.tree, data, lam=lam) == pytest.approx(s.objective(lam))
        _, oracle = brute_force_tree(data, lam=lam, max_depth=depth)
        assert s.objective(lam) == pytest.approx(oracle, abs=1e-9), (lam, s)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dataset_strategy(max_samples=30, max_features=5), st.integers(1, 3))
def test_oracle_at_every_breakpoint(data: Dataset, depth: int):
    path = regularization_path(data, max_depth=depth)
    assert path.certified
    _check_against_oracle(data, path, depth)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dataset_strategy(max_samples=25, max_features=4, n_classes=3, weighted=True),
    st.integers(1, 3),
)
def test_oracle_weighted_multiclass(data: Dataset, depth: int):
    path = regularization_path(data, max_depth=depth, lam_min=0.01)
    _check_against_oracle(data, path, depth)


@pytest.mark.parametrize(("name", "depth"), [("monk2", 4), ("monk3", 5), ("car", 3)])
def test_breakpoints_verified_by_search_below_and_above(name: str, depth: int):
    data = datasets.load(name)
    path = regularization_path(data, max_depth=depth, lam_min=0.001)
    assert path.certified and len(path.breakpoints) >= 2
    for left, right in zip(path.segments, path.segments[1:], strict=False):
        bp = right.lam_lo
        delta = 1e-4 * min(left.lam_hi - left.lam_lo, 1.0)
        below = search_tree(data, lam=bp - delta, max_depth=depth)
        above = search_tree(data, lam=bp + delta, max_depth=depth)
        assert below.objective == pytest.approx(left.objective(bp - delta), abs=1e-12)
        assert above.objective == pytest.approx(right.objective(bp + delta), abs=1e-12)
        # just below the breakpoint the right-hand tree is strictly worse, and vice versa
        assert right.objective(bp - delta) > below.objective
        assert left.objective(bp + delta) > above.objective


def test_time_limit_returns_best_known_with_valid_gaps():
    data = datasets.load("tic-tac-toe")
    full = regularization_path(data, max_depth=4)
    cut = regularization_path(data, max_depth=4, time_limit=0.02)
    assert full.certified
    if cut.certified:  # a fast machine: nothing to check beyond agreement
        assert len(cut.segments) == len(full.segments)
        return
    assert cut.status == "time_limit" and cut.uncertified
    segs = cut.segments
    assert segs[0].lam_lo == 0.0 and segs[-1].lam_hi == math.inf
    for a, b in zip(segs, segs[1:], strict=False):
        assert a.lam_hi == b.lam_lo
    for s in segs:
        hi = s.lam_hi if math.isfinite(s.lam_hi) else s.lam_lo + 0.1
        for lam in np.linspace(s.lam_lo, hi, 5):
            opt = full.objective_at(lam)
            assert s.objective(lam) >= opt - 1e-12  # a real tree: never below the optimum
            assert s.objective(lam) - s.lower_bound_gap <= opt + 1e-12  # the gap is valid
            if s.certified:
                assert s.objective(lam) == pytest.approx(opt, abs=1e-12)


def test_single_class_and_large_lam_min_need_no_solve():
    X = np.array([[0, 1], [1, 0], [1, 1]], dtype=bool)
    pure = Dataset.from_arrays(X, [1, 1, 1])
    path = regularization_path(pure, max_depth=3)
    assert path.n_solves == 0 and len(path.segments) == 1 and path.segments[0].n_leaves == 1
    data = random_dataset(3, 30, 4)
    leaf_loss = regularization_path(data, max_depth=2).segments[-1].loss
    path = regularization_path(data, max_depth=2, lam_min=leaf_loss + 0.01)
    assert path.n_solves == 0 and path.segments[0].n_leaves == 1 and path.certified


def test_frame_accessors_and_exports():
    assert odtkit.regularization_path is regularization_path
    data = datasets.load("monk1")
    path = regularization_path(data, max_depth=3)
    frame = path.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == [*PATH_COLUMNS, "tree"]
    assert len(frame) == len(path.segments) == len(path.breakpoints) + 1
    assert frame["accuracy"].is_monotonic_decreasing
    mid = (path.segments[0].lam_lo + path.segments[0].lam_hi) / 2
    assert path.tree_at(mid) == path.segments[0].tree
    assert path.tree_at(path.breakpoints[0]) == path.segments[1].tree
    assert path.objective_at(mid) == pytest.approx(
        search_tree(data, lam=mid, max_depth=3).objective
    )
    assert set(path.solves["outcome"]) <= {"start", "confirmed", "new_line"}
    assert path.n_solves == len(path.solves)
    assert "optimal" in repr(path)
    with pytest.raises(ValueError, match="lam_min"):
        regularization_path(data, max_depth=3, lam_min=0.01).segment_at(0.005)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"max_depth": 2, "lam_min": -0.1}, ValueError, "lam_min"),
        ({"max_depth": 2, "lam_min": "a"}, TypeError, "lam_min"),
        ({"max_depth": -1}, ValueError, "max_depth"),
        ({"max_depth": 2, "time_limit": -1}, ValueError, "time_limit"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        regularization_path(datasets.load("monk1"), **kwargs)

"""The depth-two solver's compacted pair counts (issue 27): on large supports the counts come
from AND + popcount over the support's points renumbered densely instead of the point-pair
pass, and the second child of a split from its parent's counts less its sibling's. All give the
same integer counts, so every optimum must equal the brute-force oracle's and the generic
recursion's (``depth2`` switched off), on weighted (multi-plane) and three-class data too.
"""

from __future__ import annotations

import pytest

from odtkit.core import SearchOptions, search_tree
from odtkit.testing import brute_force_tree, planted_tree_dataset, random_dataset

CASES = [
    # (seed, n_samples, n_features, n_classes, weighted)
    (0, 3000, 10, 2, False),
    (1, 3000, 10, 3, False),
    (2, 2500, 9, 2, True),
    (3, 2500, 9, 3, True),
]


@pytest.mark.parametrize(("seed", "n", "p", "k", "weighted"), CASES)
@pytest.mark.parametrize("lam", [0.0, 0.004])
def test_compact_counts_match_the_oracle(
    seed: int, n: int, p: int, k: int, weighted: bool, lam: float
) -> None:
    d = random_dataset(seed, n, p, n_classes=k, weighted=weighted)
    for depth in (2, 3):
        r = search_tree(d, lam=lam, max_depth=depth, method="dp")
        assert r.status == "optimal"
        _, best = brute_force_tree(d, lam=lam, max_depth=depth)
        assert r.objective == pytest.approx(best, abs=1e-9)
        assert r.stats["depth2_compact_counts"] > 0  # the compacted path ran


@pytest.mark.parametrize("depth", [3, 4])
def test_compact_counts_match_the_generic_recursion(depth: int) -> None:
    d, _ = planted_tree_dataset(5, 6000, 16, 4, 0.1, n_classes=3, class_weights=(5, 3, 2))
    fast = search_tree(d, lam=0.002, max_depth=depth, method="dp")
    generic = search_tree(
        d, lam=0.002, max_depth=depth, method="dp", options=SearchOptions(bounds={"depth2": False})
    )
    assert fast.status == generic.status == "optimal"
    assert fast.stats["depth2_compact_counts"] > 0
    assert fast.stats["depth2_sibling_counts"] > 0  # a parent's counts less a sibling's
    assert fast.objective == pytest.approx(generic.objective, abs=1e-12)


def test_compact_counts_identical_with_the_portable_popcount() -> None:
    from odtkit import _native
    from odtkit.core._problem import build_problem

    d, _ = planted_tree_dataset(6, 4000, 14, 4, 0.1, class_weights=(0.8, 0.2))
    outs = [
        _native.search_dp(
            build_problem(d, popcount=m), _native.SearchConfig(lam=0.002, max_depth=4)
        )
        for m in ("portable", "auto")
    ]
    for key in ("tree", "objective", "lower_bound", "status", "n_explored"):
        assert getattr(outs[0], key) == getattr(outs[1], key), key
    assert outs[0].stats["depth2_compact_counts"] > 0

"""Run-time popcount dispatch: the hardware and the portable kernels give identical answers."""

from __future__ import annotations

import pytest

from odtkit import _native, datasets
from odtkit.core._problem import build_problem, problem_from_arrays
from odtkit.core.rules import mine_antecedents
from odtkit.testing import random_dataset


@pytest.mark.parametrize(("n_features", "n_words"), [(1, 1), (7, 3), (40, 16), (5, 129)])
def test_kernel_modes_agree(n_features: int, n_words: int) -> None:
    portable = _native._popcount_kernel_bench(n_features, n_words, 50, "portable")
    dispatch = _native._popcount_kernel_bench(n_features, n_words, 50, "dispatch")
    assert portable[1] == dispatch[1] > 0
    assert portable[0] >= 0 and dispatch[0] >= 0
    with pytest.raises(ValueError, match="mode"):
        _native._popcount_kernel_bench(n_features, n_words, 1, "fast")


def test_problem_reports_its_kernels() -> None:
    data = datasets.load("monk2")
    assert build_problem(data, popcount="portable").popcount == "portable"
    expected = "hardware" if _native._cpu_has_hardware_popcount() else "portable"
    assert build_problem(data).popcount == expected
    with pytest.raises(ValueError, match="popcount"):
        build_problem(data, popcount="avx2")


def _same(a: _native.SearchOutput, b: _native.SearchOutput) -> None:
    for key in ("tree", "objective", "lower_bound", "status", "n_explored"):
        assert getattr(a, key) == getattr(b, key), key


@pytest.mark.parametrize(
    "data",
    [
        datasets.load("tic-tac-toe"),
        datasets.load("balance-scale"),
        random_dataset(5, n_samples=60, n_features=7, n_classes=3, weighted=True),
    ],
    ids=["tic-tac-toe", "balance-scale", "random-weighted"],
)
def test_searches_identical_in_both_modes(data) -> None:
    problems = [build_problem(data, popcount=m) for m in ("portable", "auto")]
    runs = [
        (_native.search_dp, dict(lam=0.01, max_depth=2)),
        (_native.search_dp, dict(lam=0.02, max_depth=4)),
        (_native.search_dp_queue, dict(lam=0.02, max_depth=3)),
        (_native.search_bnb, dict(lam=0.05, max_depth=3, node_limit=20000)),
    ]
    for search, options in runs:
        a, b = (search(p, _native.SearchConfig(**options)) for p in problems)
        _same(a, b)
    if data.n_classes == 2:
        _, truth = mine_antecedents(data.X, 1, 0.01)
        a, b = (
            _native.search_corels(
                problem_from_arrays(truth, data.y, data.weights, 2, popcount=m),
                _native.SearchConfig(lam=0.01, node_limit=300),
            )
            for m in ("portable", "auto")
        )
        _same(a, b)

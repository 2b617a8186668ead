"""Aggregating rows before a model is built: the packed-word unique and the chunked cell sums."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit import Dataset
from odtkit.datasets._dataset import unique_rows
from odtkit.formulations import PathOCT, RBinOCT
from odtkit.formulations import paths as paths_module
from odtkit.formulations._common import row_data


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 60),
    p=st.integers(0, 140),
    density=st.floats(0.0, 1.0),
    repeat=st.booleans(),
    n_labels=st.integers(1, 300),
    seed=st.integers(0, 2**32 - 1),
)
def test_unique_rows_equals_numpy_unique(n, p, density, repeat, n_labels, seed):
    rng = np.random.default_rng(seed)
    X = rng.random((n, p)) < density
    if repeat:
        X = X[rng.integers(0, n, size=n)]
    y = rng.integers(0, n_labels, size=n)
    for label in (None, y):
        keys = X.astype(np.int64) if label is None else np.column_stack([X, label])
        distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
        first, of_row = unique_rows(X, label)
        np.testing.assert_array_equal(keys[first], distinct)
        np.testing.assert_array_equal(of_row, inverse.reshape(-1))


def test_row_data_sums_weights_of_equal_rows_and_drops_zero_weight_ones():
    X = np.array([[1, 0], [1, 0], [0, 1], [1, 0], [0, 1]], dtype=bool)
    y = np.array([1, 1, 0, 0, 0])
    w = np.array([2.0, 3.0, 0.0, 4.0, 0.0])
    rows = row_data(Dataset.from_arrays(X, y, sample_weight=w))
    # (1,0,y=0) weight 4 and (1,0,y=1) weight 5; the (0,1) rows weigh nothing
    np.testing.assert_array_equal(rows.X, [[1, 0], [1, 0]])
    np.testing.assert_array_equal(rows.y, [0, 1])
    np.testing.assert_allclose(rows.weight * 9 / rows.total_weight, [4, 5])
    np.testing.assert_array_equal(rows.source, [1, 1, -1, 0, -1])


def test_million_rows_on_few_patterns_build_a_model_of_the_patterns():
    # issue 15: a build must cost the distinct rows, not the rows
    rng = np.random.default_rng(0)
    X = rng.random((1_000_000, 8)) < 0.5
    y = (X[:, 0] ^ X[:, 1]).astype(np.int64)
    big = RBinOCT().build(Dataset.from_arrays(X, y), max_depth=2, lam=0.01)
    first, _ = unique_rows(X, y)
    small = RBinOCT().build(Dataset.from_arrays(X[first], y[first]), max_depth=2, lam=0.01)
    assert big.n_vars == small.n_vars and big.n_nonzeros == small.n_nonzeros


def test_path_cells_summed_in_chunks_give_the_same_model(monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.random((300, 6)) < 0.4
    y = rng.integers(0, 3, size=300)
    w = rng.integers(1, 4, size=300).astype(float)
    data = Dataset.from_arrays(X, y, sample_weight=w)
    whole = PathOCT().build(data, max_depth=2, lam=0.01)
    monkeypatch.setattr(paths_module, "MASK_CHUNK_VALUES", 301)  # one cell per chunk
    chunked = PathOCT().build(data, max_depth=2, lam=0.01)
    assert (whole.A != chunked.A).nnz == 0
    np.testing.assert_array_equal(whole.c, chunked.c)

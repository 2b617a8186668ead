"""The native Bitset against numpy boolean arrays, across 64-bit word boundaries."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit.core import Bitset


@st.composite
def bool_pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(0, 200))
    a = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    b = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return a, b


@settings(max_examples=150, deadline=None)
@given(bool_pairs())
def test_operations_match_numpy(pair: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = pair
    A, B = Bitset.from_numpy(a), Bitset.from_numpy(b)
    assert len(A) == a.size
    assert A.n_words == (a.size + 63) // 64
    assert A.count() == int(a.sum())
    assert A.count_and(B) == int((a & b).sum())
    assert A.any() == bool(a.any())
    np.testing.assert_array_equal((A & B).to_numpy(), a & b)
    np.testing.assert_array_equal((A | B).to_numpy(), a | b)
    np.testing.assert_array_equal((A ^ B).to_numpy(), a ^ b)
    np.testing.assert_array_equal(A.and_not(B).to_numpy(), a & ~b)
    np.testing.assert_array_equal((~A).to_numpy(), ~a)
    # the tail past size() stays zero, so popcounts over whole words are exact
    assert (~A).count() == int((~a).sum())
    assert A == Bitset.from_numpy(a.copy())


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 127, 128, 129, 200])
def test_word_layout_and_zero_tail(n: int) -> None:
    ones = Bitset(n, True)
    assert ones.count() == n
    words = ones.words()
    assert len(words) == (n + 63) // 64
    if n % 64:
        assert words[-1] == (1 << (n % 64)) - 1
    bits = np.zeros(n, dtype=bool)
    bits[::3] = True
    w = Bitset.from_numpy(bits).words()
    for i in range(n):
        assert bool((w[i // 64] >> (i % 64)) & 1) == bits[i]


def test_mismatched_sizes_and_dtypes_are_rejected() -> None:
    with pytest.raises(ValueError):
        Bitset(10).count_and(Bitset(11))
    with pytest.raises(TypeError):
        Bitset.from_numpy(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        Bitset.from_numpy(np.zeros((2, 2), dtype=bool))

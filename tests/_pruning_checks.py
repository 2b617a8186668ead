"""Checks the pruning tests share."""

from __future__ import annotations

import numpy as np
import pytest

from odtkit.results import Status


def same_pruning(res, ref) -> None:
    """``res`` is certified and prunes every tree exactly as ``ref`` does (same objective)."""
    assert res.status == Status.OPTIMAL, res.message
    assert res.lower_bound == res.objective
    assert res.objective == pytest.approx(ref.objective, abs=1e-12)
    for z, z_ref in zip(res.model.leaves, ref.model.leaves, strict=True):
        np.testing.assert_array_equal(z, z_ref)

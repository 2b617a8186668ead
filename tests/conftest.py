"""Helpers shared by several test files (they import them: ``from conftest import ...``)."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from odtkit.model import Model, ModelBuilder


def cbc_binary() -> str | None:
    """A runnable CBC: one on PATH, else the binary bundled with PuLP, else None."""
    found = shutil.which("cbc")
    if found:
        return found
    try:
        from pulp.apis.coin_api import pulp_cbc_path
    except ImportError:  # pragma: no cover - pulp is a dependency
        return None
    return pulp_cbc_path if os.access(pulp_cbc_path, os.X_OK) else None


CBC = cbc_binary()
needs_cbc = pytest.mark.skipif(CBC is None, reason="no CBC binary (optional solver)")


def hard_knapsack(n: int = 60, m: int = 8, seed: int = 0) -> Model:
    """A multi-dimensional knapsack that takes HiGHS many nodes: for limits, traces, interrupts."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder("mknap")
    x = b.add_vars("x", shape=n, kind="binary")
    W = rng.integers(20, 100, size=(m, n)).astype(float)
    b.add_constraints(
        "cap", np.repeat(np.arange(m), n), np.tile(x.index, m), W.ravel(), "<=", W.sum(1) / 2
    )
    b.add_objective(x.index, -rng.integers(10, 100, size=n).astype(float))
    b.set_objective_offset(7.0)
    return b.build()

"""``search_numeric(start="auto")``: the search's own start, the guessed-threshold tree only
after a limit stopped it (issue 41: the guess never made a certificate faster, so the
estimators and ``odtkit fit`` no longer pay for it on every fit)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit import metrics
from odtkit.core import search_numeric
from odtkit.core.numeric import FALLBACK_MIN_SECONDS, STARTS
from odtkit.datasets import Dataset


def _table(seed: int, n: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n).round(1),
            "b": rng.integers(0, 6, n).astype(float),
            "c": rng.normal(size=n).round(2),
        }
    )
    X.loc[rng.random(n) < 0.1, "c"] = np.nan
    y = ((X["a"] > 0.3) ^ (X["b"] > 2) ^ (rng.random(n) < 0.15)).astype(int).to_numpy()
    return X, y


def _rescored(result, X, y, lam):
    names = tuple(str(n) for n in result.binarizer.get_feature_names_out())
    data = Dataset(result.binarizer.transform(X), y, np.unique(y), names)
    return metrics.objective(result.model, data, lam=lam)


def test_auto_is_a_start():
    assert "auto" in STARTS and FALLBACK_MIN_SECONDS > 0


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), lam=st.sampled_from([0.0, 0.01, 0.03]))
def test_auto_without_a_stop_is_the_search_alone(seed, lam):
    X, y = _table(seed, 60)
    auto = search_numeric(X, y, lam=lam, max_depth=2, start="auto")
    greedy = search_numeric(X, y, lam=lam, max_depth=2, start="greedy")
    assert auto.status == greedy.status == "optimal"
    assert auto.objective == pytest.approx(greedy.objective, abs=1e-12)
    assert "fallback_objective" not in auto.stats  # nothing stopped it: no guess ran
    assert "start_objective" not in auto.stats


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), lam=st.sampled_from([0.0, 0.01]))
def test_auto_after_a_stop_keeps_the_better_tree_and_the_searchs_bound(seed, lam):
    X, y = _table(seed, 60)
    optimum = search_numeric(X, y, lam=lam, max_depth=3).objective
    stopped = search_numeric(X, y, lam=lam, max_depth=3, node_limit=1, start="greedy")
    auto = search_numeric(X, y, lam=lam, max_depth=3, node_limit=1, start="auto")
    assert auto.status == "node_limit"
    # the guessed-threshold tree was asked, and the answer is the better of the two
    guessed = auto.stats["fallback_objective"]
    assert auto.objective == pytest.approx(min(stopped.objective, guessed), abs=1e-9)
    assert auto.stats["fallback_used"] == (guessed < stopped.objective)
    # the bound is the search's: valid over every threshold, below the certified optimum
    assert auto.lower_bound == pytest.approx(stopped.lower_bound, abs=1e-12)
    assert auto.lower_bound <= optimum + 1e-9 <= auto.objective + 2e-9
    # the returned tree reads raw rows through its Binarizer and scores what it says
    assert _rescored(auto, X, y, lam) == pytest.approx(auto.objective, abs=1e-9)


def test_auto_with_a_short_time_limit_never_asks_the_guess():
    """Below FALLBACK_MIN_SECONDS left the guess (boosting, not interruptible) would overrun
    the limit: a stopped search answers alone."""
    X, y = _table(3, 300)
    result = search_numeric(X, y, lam=0.0, max_depth=4, time_limit=1e-6, start="auto")
    assert result.status == "time_limit"
    assert "fallback_objective" not in result.stats
    assert result.model is not None

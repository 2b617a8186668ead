"""Issue 37 items 3 and 8: threshold guessing is exact in float64 and bounded in memory.

The reference model (scikit-learn's boosted stumps) compares in float32; it now sees each
value's rank among its column's distinct values, and each of its splits maps back to the
float64 midpoint of the two values it separates. Many classes are merged beyond a bound, and a
``guess_thresholds`` no model could honour is refused naming it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import Dataset, metrics
from odtkit.datasets import Binarizer
from odtkit.datasets._binarizer import MAX_GUESS_ROUNDS
from odtkit.estimators import OptimalTreeClassifier

# (low value, high value): one column, class 0 at the low value and class 1 at the high one.
# float32 cannot tell the first three pairs apart; 1e308 is beyond float32's range.
PAIRS = {
    "1e-50 vs 2e-50": (1e-50, 2e-50),
    "2**24 vs 2**24 + 1": (16_777_216.0, 16_777_217.0),
    "timestamps 60 s apart": (1_700_000_000.0, 1_700_000_060.0),
    "1e308 vs -1e308": (-1e308, 1e308),
    "1e308 vs 1.7e308": (1e308, 1.7e308),
}


def _two_values(low: float, high: float, n: int = 40) -> tuple[pd.DataFrame, np.ndarray]:
    y = np.arange(n) % 2
    return pd.DataFrame({"x": np.where(y == 0, low, high)}), y


def _between_distinct(thresholds: np.ndarray, values: np.ndarray) -> bool:
    """Every threshold lies in [lo, hi) of two adjacent distinct values, strictly between them
    whenever a float lies between them."""
    distinct = np.unique(values)
    for t in thresholds:
        at = np.searchsorted(distinct, t, side="right")
        if not 1 <= at < distinct.size:
            return False
        lo, hi = distinct[at - 1], distinct[at]
        room = np.nextafter(lo, np.inf) < hi
        if not (lo < t < hi if room else t == lo):
            return False
    return True


@pytest.mark.parametrize(
    ("thresholds", "certificate"),
    [("auto", "all thresholds"), ("guess", "guessed thresholds")],
    ids=["default (exact search)", "guess"],
)
@pytest.mark.parametrize(("low", "high"), list(PAIRS.values()), ids=list(PAIRS))
def test_default_fit_separates_values_float32_cannot(low, high, thresholds, certificate):
    X, y = _two_values(low, high)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning either: a clean, certified fit
        est = OptimalTreeClassifier(thresholds=thresholds).fit(X, y)
    assert est.certificate_ == certificate
    assert est.status_ == "optimal"
    assert est.score(X, y) == 1.0
    assert (est.predict(X) == OptimalTreeClassifier(thresholds="all").fit(X, y).predict(X)).all()


@pytest.mark.parametrize(("low", "high"), list(PAIRS.values()), ids=list(PAIRS))
def test_binarizer_guess_is_the_float64_midpoint(low, high):
    X, y = _two_values(low, high)
    cuts = Binarizer(guess_thresholds=40).fit(X, y).thresholds_["x"]
    assert cuts.size == 1 and low < cuts[0] < high
    if np.isfinite(low + high):
        assert cuts[0] == pytest.approx((low + high) / 2, rel=1e-9)


def test_guess_among_many_values_is_exact_too():
    # a real column of timestamps a minute apart: the label flips at one of them
    t = 1_700_000_000.0 + 60.0 * np.arange(200)
    y = (np.arange(200) >= 137).astype(int)
    X = pd.DataFrame({"t": t})
    binarizer = Binarizer(guess_thresholds=40).fit(X, y)
    cuts = binarizer.thresholds_["t"]
    assert np.any((cuts > t[136]) & (cuts < t[137]))  # the flip, which float32 cannot see
    assert _between_distinct(cuts, t)
    assert OptimalTreeClassifier().fit(X, y).score(X, y) == 1.0


magnitudes = st.floats(min_value=-300, max_value=300, allow_nan=False)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    exponents=st.lists(magnitudes, min_size=3, max_size=30),
    signs=st.lists(st.sampled_from([-1.0, 1.0]), min_size=30, max_size=30),
    cut=st.floats(0.05, 0.95),
)
def test_guessed_thresholds_are_float64_midpoints_and_separate(exponents, signs, cut):
    values = np.array([s * 10.0**e for s, e in zip(signs, exponents, strict=False)])
    distinct = np.unique(values)
    if distinct.size < 2:
        return
    # perfectly separable by one threshold on the column
    pivot = distinct[min(max(1, int(cut * distinct.size)), distinct.size - 1)]
    X = pd.DataFrame({"x": np.concatenate([values, values])})
    y = (X["x"].to_numpy() >= pivot).astype(int)
    binarizer = Binarizer(guess_thresholds=40).fit(X, y)
    cuts = binarizer.thresholds_.get("x", np.empty(0))
    if not (distinct.size == 2 and distinct[0] == 0 and distinct[1] == 1):
        assert _between_distinct(cuts, X["x"].to_numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a trivial answer on a pure column, say
        est = OptimalTreeClassifier(lam=0.001).fit(X, y)
    assert est.score(X, y) == 1.0


# --- item 8: bounded memory and parameters that cannot be honoured ------------------------------
def test_guess_thresholds_beyond_the_bound_is_refused_naming_it():
    X, y = _two_values(0.0, 3.0)
    with pytest.raises(ValueError, match=r"guess_thresholds must be <= 100000"):
        Binarizer(guess_thresholds=10**9).fit(X, y)
    with pytest.raises(ValueError, match=r"'guess_thresholds' parameter.*\[1, 100000\]"):
        OptimalTreeClassifier(guess_thresholds=10**9).fit(X, y)


def test_more_rounds_than_candidate_thresholds_are_that_many():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    y = (X["a"] + 0.3 * rng.normal(size=60) > 0).astype(int)
    most = Binarizer(guess_thresholds=MAX_GUESS_ROUNDS).fit(X, y)
    exact = Binarizer(guess_thresholds=2 * 59).fit(X, y)  # 59 midpoints per column
    for name in ("a", "b"):
        assert np.array_equal(most.thresholds_[name], exact.thresholds_[name])
        assert _between_distinct(most.thresholds_[name], X[name].to_numpy())


def test_many_classes_are_merged_with_a_warning():
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(1500, 3)), columns=["a", "b", "c"])
    y = rng.integers(0, 500, 1500)
    with pytest.warns(UserWarning, match=r"separates the 63 most frequent of \d+ classes"):
        binarizer = Binarizer(guess_thresholds=10).fit(X, y)
    for name in ("a", "b", "c"):
        assert _between_distinct(binarizer.thresholds_[name], X[name].to_numpy())


@pytest.mark.parametrize(("n", "classes"), [(3000, 2000), (4000, 10_000)])
def test_thousands_of_classes_return_within_the_limit_verified(n, classes):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n, 4))
    y = rng.integers(0, classes, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # classes merged, limit reached, few rows per class
        est = OptimalTreeClassifier(time_limit=2).fit(X, y)
    assert est.status_ in {"optimal", "time_limit"}
    data = Dataset.from_arrays(est.binarizer_.transform(X), y)
    assert est.objective_ == pytest.approx(metrics.objective(est.tree_, data, lam=0.01), abs=1e-9)
    assert est.lower_bound_ <= est.objective_ + 1e-9

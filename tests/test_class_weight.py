"""OptimalTreeClassifier(class_weight=): scikit-learn's class weights as row weights, so the
tree minimizes a cost-sensitive error; "balanced" at lam 0 is 1 - balanced accuracy, checked
against the brute-force oracle on the reweighted data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.metrics import balanced_accuracy_score
from sklearn.utils.class_weight import compute_sample_weight

from odtkit import Dataset, OptimalTreeClassifier
from odtkit.testing import brute_force_tree


def _imbalanced(seed: int, n: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p))
    y = (rng.random(n) < 0.2 + 0.5 * X[:, 0] * X[:, -1]).astype(int)
    y[:2] = (0, 1)  # both classes present
    return X, y


@settings(max_examples=25, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), n=st.integers(6, 30), p=st.integers(1, 3))
def test_balanced_minimizes_one_minus_balanced_accuracy(seed: int, n: int, p: int) -> None:
    X, y = _imbalanced(seed, n, p)
    clf = OptimalTreeClassifier(lam=0.0, max_depth=2, class_weight="balanced").fit(X, y)
    assert clf.certified_
    predicted = clf.predict(X)
    assert clf.objective_ == pytest.approx(1 - balanced_accuracy_score(y, predicted), abs=1e-9)
    weights = compute_sample_weight("balanced", y)
    data = Dataset.from_arrays(X, y, sample_weight=weights)
    _, best = brute_force_tree(data, lam=0.0, max_depth=2)
    assert clf.objective_ == pytest.approx(best, abs=1e-9)


def test_a_dict_is_the_same_as_the_row_weights_it_makes() -> None:
    X, y = _imbalanced(3, 40, 3)
    sample_weight = np.linspace(0.5, 2.0, len(y))
    by_class = OptimalTreeClassifier(lam=0.01, max_depth=2, class_weight={0: 1.0, 1: 4.0})
    by_row = OptimalTreeClassifier(lam=0.01, max_depth=2)
    by_class.fit(X, y, sample_weight=sample_weight)
    by_row.fit(X, y, sample_weight=sample_weight * np.where(y == 1, 4.0, 1.0))
    assert by_class.tree_ == by_row.tree_
    assert by_class.objective_ == pytest.approx(by_row.objective_)


def test_bad_class_weight_is_refused_naming_it() -> None:
    X, y = _imbalanced(1, 20, 2)
    with pytest.raises(ValueError, match="class_weight"):
        OptimalTreeClassifier(class_weight="heavy").fit(X, y)
    with pytest.raises(ValueError, match="class_weight"):
        OptimalTreeClassifier(class_weight={0: 1.0, 7: 2.0}).fit(X, y)


def test_class_weight_is_a_parameter() -> None:
    clf = OptimalTreeClassifier(class_weight="balanced")
    assert clf.get_params()["class_weight"] == "balanced"
    assert clone(clf).class_weight == "balanced"

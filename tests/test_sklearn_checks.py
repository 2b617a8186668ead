"""The estimators under scikit-learn's own checks, and the conventions a pipeline relies on."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from odtkit import datasets, metrics
from odtkit.datasets import Binarizer
from odtkit.estimators import FairTreeClassifier, OptimalRuleListClassifier, OptimalTreeClassifier
from odtkit.testing import random_dataset

# FairTreeClassifier.fit needs the protected attribute (``sensitive=``, one value per row);
# scikit-learn's checks call fit(X, y), so every check that fits must fail (with the message
# "sensitive is required"). The checks that never fit, and those on input validation (which
# runs before the protected attribute is asked for), pass.
_FAIR_NEEDS_SENSITIVE = (
    "check_classifier_data_not_an_array",
    "check_classifiers_classes",
    "check_classifiers_one_label",
    "check_classifiers_one_label_sample_weights",
    "check_classifiers_train",
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_dtype_object",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_1sample",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_pipeline_consistency",
    "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weights_list",
    "check_sample_weights_not_an_array",
    "check_sample_weights_not_overwritten",
    "check_sample_weights_pandas_series",
    "check_sample_weights_shape",
    "check_supervised_y_2d",
)


def _expected_failures(estimator: object) -> dict[str, str]:
    if isinstance(estimator, FairTreeClassifier):
        reason = "fit needs sensitive= (the protected attribute); the checks call fit(X, y)"
        return dict.fromkeys(_FAIR_NEEDS_SENSITIVE, reason)
    return {}


# small instances keep the whole run to a few seconds: depth 2, single-literal rules
@parametrize_with_checks(
    [
        OptimalTreeClassifier(max_depth=2),
        OptimalRuleListClassifier(max_cardinality=1),
        FairTreeClassifier(max_depth=2),
    ],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def _frame(n: int = 80, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {"age": rng.integers(18, 70, n), "color": rng.choice(["red", "blue", "green"], n)}
    )
    y = np.where((frame["age"] <= 30) | (frame["color"] == "red"), "yes", "no")
    return frame, y


def test_feature_names_in_come_from_a_dataframe():
    frame, y = _frame()
    clf = OptimalTreeClassifier(lam=0.01, max_depth=2).fit(frame, y)
    assert list(clf.feature_names_in_) == ["age", "color"]
    assert clf.n_features_in_ == 2
    binary = pd.DataFrame({"a": [0, 1, 1, 0], "b": [1, 1, 0, 0]})
    clf = OptimalTreeClassifier(max_depth=1).fit(binary, [0, 1, 1, 0])
    assert clf.binarizer_ is None and clf.feature_names_ == ["a", "b"]
    clf.fit(binary.to_numpy(), [0, 1, 1, 0])  # refitting on an array forgets the names
    assert not hasattr(clf, "feature_names_in_")
    with pytest.raises(ValueError, match="expecting 2 features"):
        clf.predict(np.zeros((2, 3)))


def test_binarizer_names_and_pandas_output():
    frame, _ = _frame()
    binarizer = Binarizer(max_thresholds=3).fit(frame)
    names = list(binarizer.get_feature_names_out())
    assert len(names) == 3 + 3
    assert names[3:] == ["color=blue", "color=green", "color=red"]
    out = binarizer.set_output(transform="pandas").transform(frame)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == names
    assert np.array_equal(out.to_numpy(), Binarizer(max_thresholds=3).fit_transform(frame))
    assert np.array_equal(out["color=red"].to_numpy(), (frame["color"] == "red").to_numpy())


@pytest.mark.parametrize(
    "factory",
    [
        lambda: OptimalTreeClassifier(lam=0.01, max_depth=2),
        lambda: OptimalRuleListClassifier(lam=0.01, max_cardinality=1),
    ],
)
def test_predict_proba_is_the_training_class_frequency_of_the_leaf(factory):
    data = random_dataset(4, n_samples=60, n_features=5)
    weights = np.random.default_rng(4).integers(1, 4, data.n_samples).astype(float)
    clf = factory().fit(data.X, data.y, sample_weight=weights)
    proba = clf.predict_proba(data.X)
    model = clf.tree_ if hasattr(clf, "tree_") else clf.rule_list_
    part = model.apply(data.X)
    for p in np.unique(part):  # independent recount per leaf / rule
        rows = part == p
        expected = np.bincount(data.y[rows], weights=weights[rows], minlength=2)
        assert np.allclose(proba[rows], expected / expected.sum())
    assert np.array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(data.X))


def test_score_clone_and_pickle_round_trip():
    data = datasets.load("monk1")
    labels = data.classes[data.y]
    clf = OptimalTreeClassifier(lam=0.01, max_depth=3).fit(data.X, labels)
    assert clf.score(data.X, labels) == pytest.approx(metrics.accuracy(clf.tree_, data))
    fresh = clone(clf)
    assert fresh.get_params() == clf.get_params() and not hasattr(fresh, "tree_")
    restored = pickle.loads(pickle.dumps(clf))
    assert restored.tree_ == clf.tree_
    assert np.array_equal(restored.predict_proba(data.X), clf.predict_proba(data.X))
    rules = OptimalRuleListClassifier(lam=0.01).fit(data.X, labels)
    restored = pickle.loads(pickle.dumps(rules))
    assert restored.rule_list_ == rules.rule_list_
    assert restored.score(data.X, labels) == rules.score(data.X, labels)


def test_grid_search_over_lam_picks_the_best_cross_validated_penalty():
    data = datasets.load("monk3")
    grid = {"lam": [0.001, 0.01, 0.1]}
    cv = KFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(OptimalTreeClassifier(max_depth=3), grid, cv=cv).fit(data.X, data.y)
    scores = search.cv_results_["mean_test_score"]
    assert search.best_params_["lam"] == grid["lam"][int(np.argmax(scores))]
    # the refitted estimator is the optimal tree for the chosen lam on all the data
    best = search.best_estimator_
    lam = search.best_params_["lam"]
    assert best.result_.status == "optimal"
    assert best.result_.objective == pytest.approx(metrics.objective(best.tree_, data, lam=lam))


def test_invalid_input_errors_name_the_argument():
    data = random_dataset(2, n_samples=20, n_features=3)
    clf = OptimalTreeClassifier(max_depth=2)
    with pytest.raises(ValueError, match="sample_weight must have a positive sum"):
        clf.fit(data.X, data.y, sample_weight=np.zeros(data.n_samples))
    with pytest.raises(ValueError, match="sample_weight must be finite"):
        clf.fit(data.X, data.y, sample_weight=-np.ones(data.n_samples))
    with pytest.raises(ValueError, match="Unknown label type"):
        clf.fit(data.X, np.linspace(0, 1, data.n_samples))
    with pytest.raises(ValueError, match="requires y"):
        clf.fit(data.X, None)
    with pytest.raises(ValueError, match="Only binary classification"):
        OptimalRuleListClassifier().fit(data.X, np.arange(data.n_samples) % 3)

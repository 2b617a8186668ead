"""The estimators under scikit-learn's own checks, and the conventions a pipeline relies on."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from odtkit import datasets, metrics
from odtkit.datasets import Binarizer
from odtkit.estimators import FairTreeClassifier, OptimalRuleListClassifier, OptimalTreeClassifier
from odtkit.testing import random_dataset


class FairOnFirstColumn(FairTreeClassifier):
    """``FairTreeClassifier`` whose protected attribute is the first column of ``X``.

    scikit-learn's checks call ``fit(X, y)`` (and ``fit(X, y, sample_weight=w)``); the fair
    estimator needs ``sensitive=`` too. This wrapper reads it from ``X`` -- the first column, cut
    at its mean into two groups (a continuous column would make every row its own group) -- so
    that every check runs the real fair fit. The column stays in ``X`` (the estimator keeps a
    protected attribute out of the splits only when ``X`` does not hold it), so the fitted
    estimator is the one the checks see: same ``n_features_in_``, same ``predict``.
    """

    def fit(self, X, y, sample_weight=None):  # type: ignore[override]
        return super().fit(X, y, _first_column_groups(X), sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # check_classifiers_train wants > 0.83 training accuracy on blobs whose first column
        # (the protected attribute here) separates the classes: a rate gap of at most delta
        # between the groups costs accuracy there by design. poor_score is scikit-learn's tag
        # for that: the check's other assertions still run (and one fails: _FAIR_NOT_APPLICABLE).
        tags.classifier_tags.poor_score = True
        return tags


def _first_column_groups(X: object) -> np.ndarray | None:
    """Two groups from the first column of ``X``: above its mean or not (two groups whenever
    the column is not constant, 0/1 columns included; a missing value is in the second group).

    None when ``X`` is no 2-d numeric table: then ``fit``'s own validation of ``X``, which runs
    before the protected attribute is read, refuses it with its own message (what the
    input-validation checks assert).
    """
    try:
        column = np.asarray(X, dtype=float)[:, 0]
    except (TypeError, ValueError, IndexError):
        return None
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column's mean
        return (column > np.nanmean(column)).astype(int)


#: The checks that do not apply to the fair estimator, each with why (strict: xfail_strict in
#: pyproject.toml; a check here that starts passing fails the run, so the list stays true).
#: Its ``positive_class`` (default 1) is the favourable label whose rate the constraint bounds;
#: ``fit`` refuses a ``y`` that does not hold it, naming it, rather than guess which label is
#: favourable.
_FAIR_NOT_APPLICABLE = {
    "check_classifiers_classes": (
        "string labels ('one', 'two', ...): positive_class=1 is none of them, and fit refuses "
        "a favourable label that y does not hold"
    ),
    # a finding of these checks, not fixed here (it would change answers): the fair tree's
    # leaf label is the one the constraint chose, which may go against the leaf's majority,
    # while predict_proba is the leaf's training class fractions; scikit-learn expects
    # predict == classes_[argmax(predict_proba)] (issue 38, reported to the lead)
    "check_classifiers_train": (
        "predict_proba (the leaf's training class fractions) disagrees with predict on the "
        "leaves whose label the fairness constraint set against their majority"
    ),
    "check_fit2d_1sample": (
        "one row, label 0: positive_class=1 is not a label of y (and the protected attribute "
        "has one group); fit says so, not the '1 sample' / 'one class' the check looks for"
    ),
}


#: Before scikit-learn 1.8, check_dtype_object fitted labels {0, 4} (``X[:, 0] * 4`` on the 0/1
#: table the estimator's tags ask for): positive_class=1 is not among them either. From 1.8 on
#: its labels are 0..3 and the check passes (the CI runs the oldest supported release too).
_SKLEARN_BEFORE_1_8 = tuple(int(p) for p in sklearn.__version__.split(".")[:2]) < (1, 8)


def _expected_failures(estimator: object) -> dict[str, str]:
    if not isinstance(estimator, FairTreeClassifier):
        return {}
    expected = dict(_FAIR_NOT_APPLICABLE)
    if _SKLEARN_BEFORE_1_8:
        expected["check_dtype_object"] = (
            "labels {0, 4} (scikit-learn < 1.8): positive_class=1 is not a label of y"
        )
    if estimator.delta >= 1:  # no constraint binds: every leaf predicts its majority
        del expected["check_classifiers_train"]
    return expected


# small instances keep the whole run to a few seconds: depth 2, single-literal rules; the fair
# estimator twice, with its default delta and with delta=1 (no constraint binds), under which
# check_classifiers_train runs to its end
@parametrize_with_checks(
    [
        OptimalTreeClassifier(max_depth=2),
        OptimalRuleListClassifier(max_cardinality=1),
        FairOnFirstColumn(max_depth=2),
        FairOnFirstColumn(max_depth=2, delta=1.0),
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

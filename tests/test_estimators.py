"""scikit-learn conventions for the estimators (search and MIP methods)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import KFold, cross_val_score

from odtkit import datasets, metrics
from odtkit.estimators import OptimalRuleListClassifier, OptimalTreeClassifier
from odtkit.testing import brute_force_tree, random_dataset


def test_fit_predict_matches_the_certified_tree():
    data = datasets.load("monk1")
    clf = OptimalTreeClassifier(lam=0.01, max_depth=3).fit(data.X, data.classes[data.y])
    assert clf.result_.status == "optimal"
    assert clf.result_.objective == pytest.approx(metrics.objective(clf.tree_, data, lam=0.01))
    assert np.array_equal(clf.predict(data.X), data.classes[clf.tree_.predict(data.X)])
    proba = clf.predict_proba(data.X)
    assert proba.shape == (data.n_samples, 2)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert clf.score(data.X, data.classes[data.y]) == pytest.approx(
        metrics.accuracy(clf.tree_, data)
    )


@pytest.mark.parametrize("method", ["dp", "bnb"])
def test_search_methods_reach_the_oracle(method):
    data = random_dataset(11, n_samples=30, n_features=4)
    clf = OptimalTreeClassifier(lam=0.02, max_depth=2, method=method).fit(data.X, data.y)
    assert clf.result_.method == method
    assert clf.result_.objective == pytest.approx(
        brute_force_tree(data, lam=0.02, max_depth=2)[1], abs=1e-9
    )


def test_raw_table_is_binarized_and_string_labels_round_trip():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"age": rng.integers(18, 70, 80), "color": rng.choice(["red", "blue"], 80)}
    )
    y = np.where((frame["age"] <= 30) | (frame["color"] == "red"), "yes", "no")
    clf = OptimalTreeClassifier(lam=0.01, max_depth=2, max_thresholds=8).fit(frame, y)
    assert clf.binarizer_ is not None
    assert set(clf.predict(frame)) <= {"yes", "no"}
    text = clf.to_text()
    assert "age <= " in text or "color = " in text
    assert "<=" not in text.replace(" <= ", "")  # no raw feature names such as age<=30.5
    assert clf.score(frame, y) >= 0.9


def test_sklearn_clone_and_cross_validation():
    data = datasets.load("monk3")
    clf = OptimalTreeClassifier(lam=0.02, max_depth=2)
    assert clone(clf).get_params() == clf.get_params()
    scores = cross_val_score(clf, data.X, data.y, cv=KFold(3, shuffle=True, random_state=0))
    assert scores.shape == (3,)
    assert scores.mean() > 0.7  # monk3's concept is mostly a depth-2 tree


def test_bad_parameters_are_named():
    data = random_dataset(1, n_samples=20, n_features=3)
    with pytest.raises(ValueError, match="method"):
        OptimalTreeClassifier(method="cart").fit(data.X, data.y)
    # methods whose optimum is not the estimator's objective are refused, by their properties
    for method in ("binoct", "rbinoct_original"):
        with pytest.raises(ValueError, match=r"'method' parameter .* among .*'rbinoct'") as err:
            OptimalTreeClassifier(method=method, max_depth=2).fit(data.X, data.y)
        assert f"'{method}'," not in str(err.value)  # not among the accepted names
    with pytest.raises(TypeError, match="solver"):
        OptimalTreeClassifier(solver="dp")  # renamed: "solver" is a backend's program
    with pytest.raises(ValueError, match="lam"):
        OptimalTreeClassifier(lam=-1).fit(data.X, data.y)
    with pytest.raises(ValueError, match="binarize"):
        OptimalTreeClassifier(binarize="yes").fit(data.X, data.y)
    clf = OptimalTreeClassifier(max_depth=2).fit(data.X, data.y)
    with pytest.raises(ValueError, match="expecting 3 features"):
        clf.predict(np.zeros((2, 5)))


def test_rule_list_classifier_certifies_and_predicts():
    data = datasets.load("monk1")
    clf = OptimalRuleListClassifier(lam=0.02).fit(data.X, data.y)
    assert clf.result_.status == "optimal"
    assert clf.result_.objective == pytest.approx(metrics.objective(clf.rule_list_, data, lam=0.02))
    assert np.array_equal(clf.predict(data.X), clf.rule_list_.predict(data.X))


@pytest.mark.parametrize("method", ["rbinoct", "flowoct"])
def test_mip_methods_reach_the_oracle_and_keep_the_certificate(method):
    data = random_dataset(5, n_samples=25, n_features=3)
    clf = OptimalTreeClassifier(lam=0.03, max_depth=2, method=method).fit(data.X, data.y)
    assert clf.result_.status == "optimal"
    assert clf.result_.method == method and clf.result_.backend == "highs"
    assert clf.result_.solution is not None and clf.result_.stats["warm_start"]
    assert clf.result_.objective == pytest.approx(metrics.objective(clf.tree_, data, lam=0.03))
    expected = brute_force_tree(data, lam=0.03, max_depth=2)[1]
    assert metrics.objective(clf.tree_, data, lam=0.03) == pytest.approx(expected, abs=1e-6)
    assert clf.result_.lower_bound <= expected + 1e-6


def test_mip_method_needs_a_depth():
    data = random_dataset(5, n_samples=25, n_features=3)
    with pytest.raises(ValueError, match="max_depth"):
        OptimalTreeClassifier(method="flowoct", max_depth=None).fit(data.X, data.y)


def test_cv_estimator_picks_lam_by_cross_validation_over_the_path():
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    from odtkit.core import regularization_path, search_tree
    from odtkit.estimators import OptimalTreeClassifierCV

    data = datasets.load("monk2")
    y = data.classes[data.y]
    clf = OptimalTreeClassifierCV(max_depth=3, cv=4).fit(data.X, y)
    res = clf.cv_results_
    path = regularization_path(data, max_depth=3)
    assert len(res["param_lam"]) == len(path.segments)
    assert list(res["n_leaves"]) == [s.n_leaves for s in path.segments]
    # each score is the held-out accuracy of the fold's optimal tree at that candidate λ
    # (optimality checked by search_tree; the path's own tree is scored, as ties may differ)
    splits = StratifiedKFold(4, shuffle=True, random_state=0).split(data.X, data.y)
    for k, (tr, te) in enumerate(splits):
        train, test = data.subset(tr), data.subset(te)
        fold_path = regularization_path(train, max_depth=3)
        for j, lam in enumerate(res["param_lam"]):
            tree = fold_path.tree_at(float(lam))
            optimum = search_tree(train, lam=float(lam), max_depth=3).objective
            assert metrics.objective(tree, train, lam=float(lam)) == pytest.approx(optimum)
            assert res[f"split{k}_test_score"][j] == pytest.approx(metrics.accuracy(tree, test))
    best = clf.best_index_
    assert res["rank_test_score"][best] == 1
    assert res["mean_test_score"][best] == res["mean_test_score"].max() == clf.best_score_
    # the refit tree is the full data's optimum at best_lam_
    refit = search_tree(data, lam=clf.best_lam_, max_depth=3)
    assert metrics.objective(clf.tree_, data, lam=clf.best_lam_) == pytest.approx(refit.objective)
    assert (clf.predict(data.X) == data.classes[clf.tree_.predict(data.X)]).all()
    assert clf.predict_proba(data.X).shape == (data.n_samples, 2)
    assert clone(clf).get_params() == clf.get_params()
    with pytest.raises(ValueError, match="cv"):
        OptimalTreeClassifierCV(cv=1).fit(data.X, y)


def test_a_mip_whose_build_uses_up_the_limit_keeps_the_search_start(monkeypatch):
    """Issue 22: a limit returns the best tree so far. A MIP method whose build ran out of time
    raised "returned no tree"; the estimator now keeps the search core's warm start and its
    bound, and says so."""
    from odtkit._limits import OutOfTime
    from odtkit.core import search_tree
    from odtkit.formulations import FlowOCT

    def build(self, data, **problem):
        raise OutOfTime

    monkeypatch.setattr(FlowOCT, "build", build)
    data = random_dataset(7, n_samples=40, n_features=5)
    est = OptimalTreeClassifier(method="flowoct", lam=0.01, max_depth=2, binarize=False)
    est.fit(data.X, data.y)
    reference = search_tree(data, lam=0.01, max_depth=2)
    assert est.status_ == "optimal" and est.certified_
    assert est.objective_ == pytest.approx(reference.objective)
    assert est.lower_bound_ <= est.objective_ + 1e-12
    assert "warm start" in est.result_.message and "flowoct" in est.result_.message
    assert est.score(data.X, data.y) > 0.5

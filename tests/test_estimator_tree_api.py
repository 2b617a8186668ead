"""The estimators' sklearn.tree-style inspection API, their export and drawing, their default
limits and outcome attributes, and the CV estimator's folds (no held-out label in training)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import KFold

import odtkit
from odtkit import metrics
from odtkit.datasets import Dataset
from odtkit.estimators import (
    FairTreeClassifier,
    LimitReachedWarning,
    OptimalRuleListClassifier,
    OptimalTreeClassifier,
    OptimalTreeClassifierCV,
)
from odtkit.methods import DEFAULT_MAX_DEPTH, DEFAULT_TIME_LIMIT
from odtkit.testing import random_dataset
from odtkit.tree import Tree


def _table(n: int = 160, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Two numeric columns and a category; the label depends on all three, with noise."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "income": rng.normal(50, 15, n).round(1),
            "colour": rng.choice(["red", "blue", "green"], n),
        }
    )
    y = np.where(
        (frame["age"] <= 40) & (frame["colour"] != "red") | (frame["income"] > 65), "yes", "no"
    )
    flip = rng.random(n) < 0.1
    y[flip] = np.where(y[flip] == "yes", "no", "yes")
    return frame, y


def _breast_cancer(rows: int | None = None) -> tuple[pd.DataFrame, pd.Series]:
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(as_frame=True, return_X_y=True)
    if rows is not None:
        X, y = X.iloc[:rows], y.iloc[:rows]
    return X, y


# -- item 2: the CV estimator's folds ----------------------------------------------------------


def _record_paths(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Dataset, object]]:
    """Record every (dataset, path) of the CV estimator's regularization_path calls."""
    import odtkit.core

    calls: list[tuple[Dataset, object]] = []
    real = odtkit.core.regularization_path

    def spy(dataset, **kwargs):
        path = real(dataset, **kwargs)
        calls.append((dataset, path))
        return path

    monkeypatch.setattr(odtkit.core, "regularization_path", spy)
    return calls


def test_cv_fold_training_never_sees_its_held_out_labels(monkeypatch):
    """Relabel fold k's held-out rows only: fold k's training features and trees stay put.

    Threshold guessing fits a boosted model on the labels; fitted on all rows before the folds
    were cut, the held-out labels chose the thresholds the fold was trained and scored on.
    """
    X, y = _breast_cancer(240)
    X = X.iloc[:, :8]
    y = y.to_numpy()
    cv = KFold(3, shuffle=True, random_state=0)
    k = 1
    held_out = list(cv.split(X))[k][1]
    y_other = y.copy()
    y_other[held_out] = np.random.default_rng(1).permutation(1 - y[held_out])

    runs = []
    for labels in (y, y_other):
        calls = _record_paths(monkeypatch)
        clf = OptimalTreeClassifierCV(max_depth=2, cv=cv, lam_min=0.005).fit(X, labels)
        assert clf.binarizer_ is not None and len(calls) == 1 + 3  # the full path, then folds
        runs.append(calls[1 + k])
    (train_a, path_a), (train_b, path_b) = runs
    assert train_a.feature_names == train_b.feature_names
    assert np.array_equal(train_a.X, train_b.X)
    assert np.array_equal(train_a.y, train_b.y)
    assert path_a.trees == path_b.trees
    # and the held-out rows really are out of that fold's training set
    assert train_a.n_samples == X.shape[0] - held_out.size


def test_cv_fold_scores_are_the_fold_binarizers_trees_on_held_out_rows(monkeypatch):
    from odtkit.datasets import Binarizer
    from odtkit.methods import GUESS_ROUNDS

    frame, y = _table(120, seed=3)
    cv = KFold(3, shuffle=True, random_state=2)
    calls = _record_paths(monkeypatch)
    clf = OptimalTreeClassifierCV(max_depth=2, cv=cv).fit(frame, y)
    for k, (tr, te) in enumerate(cv.split(frame)):
        binarizer = Binarizer(guess_thresholds=GUESS_ROUNDS).fit(frame.iloc[tr], y[tr])
        train, path = calls[1 + k]
        assert train.feature_names == tuple(binarizer.get_feature_names_out())
        codes = np.searchsorted(clf.classes_, y[te])
        test = Dataset(
            binarizer.transform(frame.iloc[te]), codes, clf.classes_, train.feature_names
        )
        expected = [
            metrics.accuracy(path.tree_at(lam), test) for lam in clf.cv_results_["param_lam"]
        ]
        assert np.allclose(clf.cv_results_[f"split{k}_test_score"], expected)


# -- item 9: the sklearn.tree inspection API ---------------------------------------------------


def _preorder_ids(tree: Tree) -> list[Tree]:
    out: list[Tree] = []

    def walk(node: Tree) -> None:
        out.append(node)
        if not node.is_leaf:
            walk(node.left)
            walk(node.right)

    walk(tree)
    return out


@pytest.fixture(scope="module")
def fitted():
    frame, y = _table()
    weights = np.random.default_rng(5).choice([0.5, 1.0, 2.0], size=len(y))
    clf = OptimalTreeClassifier(lam=0.005, max_depth=3).fit(frame, y, sample_weight=weights)
    assert clf.get_n_leaves() >= 4
    return clf, frame, y, weights


def test_depth_leaves_apply_and_decision_path_follow_the_tree(fitted):
    clf, frame, _, _ = fitted
    assert clf.get_depth() == clf.tree_.depth and clf.get_n_leaves() == clf.tree_.n_leaves
    nodes = _preorder_ids(clf.tree_)
    Xb = clf.binarizer_.transform(frame)
    leaf_ids, paths = [], []
    for row in Xb:  # an independent walk, row by row
        node_id, path = 0, [0]
        while not nodes[node_id].is_leaf:
            node = nodes[node_id]
            # pre-order: the left child follows its parent, the right one its left subtree
            left_size = len(_preorder_ids(node.left))
            node_id = node_id + 1 if not row[node.feature] else node_id + 1 + left_size
            path.append(node_id)
        leaf_ids.append(node_id)
        paths.append(path)
    assert np.array_equal(clf.apply(frame), leaf_ids)
    indicator = clf.decision_path(frame)
    assert indicator.format == "csr" and indicator.shape == (len(frame), len(nodes))
    expected = np.zeros(indicator.shape, dtype=int)
    for i, path in enumerate(paths):
        expected[i, path] = 1
    assert np.array_equal(indicator.toarray(), expected)


def test_node_counts_are_weighted_training_counts(fitted):
    clf, frame, y, weights = fitted
    ids = clf.decision_path(frame).toarray().astype(bool)
    codes = np.searchsorted(clf.classes_, y)
    for node in range(ids.shape[1]):
        rows = ids[:, node]
        expected = np.bincount(codes[rows], weights=weights[rows], minlength=2)
        assert np.allclose(clf.node_counts_[node], expected)


def _gini_decrease_oracle(clf, frame, codes, weights, criterion):
    """Impurity decrease per input column, summed the slow way (row masks per node)."""
    Xb = clf.binarizer_.transform(frame)
    specs = clf.binarizer_.get_feature_specs()
    out = dict.fromkeys(frame.columns, 0.0)

    def impurity(mask):
        counts = np.bincount(codes[mask], weights=weights[mask], minlength=2)
        total = counts.sum()
        if total == 0:
            return 0.0
        if criterion == "error":
            return total - counts.max()
        return total * (1 - ((counts / total) ** 2).sum())

    def walk(node, mask):
        if node.is_leaf:
            return
        right = mask & Xb[:, node.feature]
        left = mask & ~Xb[:, node.feature]
        out[specs[node.feature].source] += impurity(mask) - impurity(left) - impurity(right)
        walk(node.left, left)
        walk(node.right, right)

    walk(clf.tree_, np.ones(len(frame), dtype=bool))
    values = np.array([out[c] for c in frame.columns])
    return values / values.sum()


@pytest.mark.parametrize("criterion", ["gini", "error"])
def test_feature_importances_per_input_column(fitted, criterion):
    clf, frame, y, weights = fitted
    codes = np.searchsorted(clf.classes_, y)
    importances = clf.compute_feature_importances(criterion)
    assert importances.shape == (clf.n_features_in_,) == (3,)
    assert importances.sum() == pytest.approx(1.0)
    assert np.allclose(importances, _gini_decrease_oracle(clf, frame, codes, weights, criterion))
    if criterion == "gini":
        assert np.array_equal(clf.feature_importances_, importances)
    with pytest.raises(ValueError, match="criterion"):
        clf.compute_feature_importances("entropy")


def test_feature_importances_of_binary_input_and_a_single_leaf():
    data = random_dataset(11, n_samples=60, n_features=5)
    clf = OptimalTreeClassifier(lam=0.01, max_depth=2).fit(data.X, data.y)
    assert clf.binarizer_ is None and clf.feature_importances_.shape == (5,)
    used = sorted(clf.tree_.features_used())
    assert set(np.flatnonzero(clf.feature_importances_)) <= set(used)
    leaf = OptimalTreeClassifier(lam=0.9).fit(data.X, data.y)  # the single leaf wins
    assert leaf.get_n_leaves() == 1 and leaf.get_depth() == 0
    assert np.array_equal(leaf.feature_importances_, np.zeros(5))
    assert np.array_equal(leaf.apply(data.X), np.zeros(data.n_samples))
    assert leaf.decision_path(data.X).shape == (data.n_samples, 1)


def test_export_text_of_an_estimator_shows_weighted_counts(fitted):
    clf, frame, y, weights = fitted
    text = odtkit.export_text(clf)
    assert "age <= " in text or "income <= " in text or "colour = " in text
    leaves = [line for line in text.splitlines() if "class: " in line]
    assert len(leaves) == clf.get_n_leaves()
    assert all(line.rstrip().endswith("]") and "no: " in line for line in leaves)
    # the same text from the bare tree and the training data, counted again there
    data = Dataset(
        clf.binarizer_.transform(frame),
        np.searchsorted(clf.classes_, y),
        clf.classes_,
        tuple(clf.feature_names_),
        sample_weight=weights,
    )
    assert odtkit.export_text(clf.tree_, clf.binarizer_, data=data) == text
    assert odtkit.export_text(clf, show_counts=False) == clf.to_text()
    assert "." in text.split("class: ")[1]  # weights 0.5: fractional counts are printed


def test_export_text_of_a_result_and_of_a_rule_list():
    data = odtkit.datasets.load("monk1")
    result = odtkit.search_tree(data, lam=0.01, max_depth=2)
    text = odtkit.export_text(result, data=data)
    total = sum(
        int(part.split(": ")[1])
        for line in text.splitlines()
        if "[" in line
        for part in line[line.index("[") + 1 : -1].split(", ")
    )
    assert total == data.n_samples
    rules = OptimalRuleListClassifier(lam=0.02).fit(data.X, data.classes[data.y])
    listing = odtkit.export_text(rules)
    assert listing.splitlines()[0].startswith("if ") and listing.count("[") == (
        rules.rule_list_.n_rules + 1
    )
    assert rules.rule_counts_.sum() == data.n_samples
    with pytest.raises(TypeError, match="odtkit"):
        from sklearn.tree import DecisionTreeClassifier

        odtkit.export_text(DecisionTreeClassifier().fit(data.X, data.y))


def test_plot_tree_takes_the_estimator_and_shows_leaf_counts(fitted, tmp_path):
    matplotlib = pytest.importorskip(
        "matplotlib", reason="matplotlib: the optional extra odtkit[plot] (in dev)"
    )
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    clf = fitted[0]
    ax = odtkit.plot_tree(clf)
    nodes = [t.get_text() for t in ax.texts if t.get_gid() == "odtkit-node"]
    leaves = [t for t in nodes if "\n" in t]
    assert len(leaves) == clf.get_n_leaves()
    is_leaf = [node.is_leaf for node in _preorder_ids(clf.tree_)]
    for leaf, node, counts in zip(
        leaves, clf.tree_.leaves(), clf.node_counts_[is_leaf], strict=True
    ):
        expected = ", ".join(
            f"{name}: {float(c):g}" for name, c in zip(clf.classes_, counts, strict=True)
        )
        assert leaf == f"{clf.classes_[node[1]]}\n{expected}"
    # no two boxes overlap and every box lies inside the figure
    ax.figure.canvas.draw()
    boxes = []
    for text in ax.texts:
        patch = text.get_bbox_patch()
        e = (patch if patch is not None else text).get_window_extent()
        boxes.append((e.x0, e.y0, e.x1, e.y1))
    b = np.array(boxes)
    overlap = (
        (b[:, None, 0] < b[None, :, 2])
        & (b[None, :, 0] < b[:, None, 2])
        & (b[:, None, 1] < b[None, :, 3])
        & (b[None, :, 1] < b[:, None, 3])
    )
    np.fill_diagonal(overlap, False)
    assert not overlap.any()
    width, height = ax.figure.canvas.get_width_height()
    assert b[:, 0].min() >= 0 and b[:, 2].max() <= width
    assert b[:, 1].min() >= 0 and b[:, 3].max() <= height
    ax.figure.savefig(tmp_path / "tree.png")
    plt.close(ax.figure)
    with pytest.raises(TypeError, match="export_text"):
        data = odtkit.datasets.load("monk1")
        odtkit.plot_tree(OptimalRuleListClassifier(lam=0.05).fit(data.X, data.y))


# -- item 10: finite default limits, the outcome, one warning ----------------------------------


def test_every_estimator_has_the_shared_finite_defaults():
    for estimator in (
        OptimalTreeClassifier(),
        OptimalTreeClassifierCV(),
        FairTreeClassifier(),
        OptimalRuleListClassifier(),
    ):
        assert estimator.time_limit == DEFAULT_TIME_LIMIT
    for estimator in (OptimalTreeClassifier(), OptimalTreeClassifierCV(), FairTreeClassifier()):
        assert estimator.max_depth == DEFAULT_MAX_DEPTH


def _fit_quietly(estimator, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", LimitReachedWarning)
        return estimator.fit(*args, **kwargs)


def test_a_certified_fit_reports_its_outcome_without_warning():
    data = random_dataset(7, n_samples=50, n_features=4)
    sensitive = np.arange(data.n_samples) % 2
    fits = [
        _fit_quietly(OptimalTreeClassifier(max_depth=2), data.X, data.y),
        _fit_quietly(OptimalTreeClassifierCV(max_depth=2, cv=3), data.X, data.y),
        _fit_quietly(FairTreeClassifier(max_depth=2, delta=0.2), data.X, data.y, sensitive),
        _fit_quietly(OptimalRuleListClassifier(), data.X, data.y),
    ]
    for clf in fits:
        assert clf.status_ == odtkit.Status.OPTIMAL and clf.certified_ is True
        assert clf.lower_bound_ == pytest.approx(clf.objective_)
    assert fits[0].objective_ == pytest.approx(metrics.objective(fits[0].tree_, data, lam=0.01))


def _one_limit_warning(record) -> str:
    limits = [w for w in record if issubclass(w.category, LimitReachedWarning)]
    assert len(limits) == 1, [str(w.message) for w in record]
    return str(limits[0].message)


def test_rule_list_on_breast_cancer_stops_at_its_limit_with_a_valid_list():
    """The default settings, a short limit: a rule list, a valid bound, one warning."""
    X, y = _breast_cancer()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        clf = OptimalRuleListClassifier(time_limit=2.0).fit(X, y)
    message = _one_limit_warning(record)
    assert clf.status_ == odtkit.Status.TIME_LIMIT and not clf.certified_
    assert "time limit" in message and "gap" in message
    data = Dataset(
        clf.binarizer_.transform(X), y.to_numpy(), clf.classes_, tuple(clf.feature_names_)
    )
    assert clf.objective_ == pytest.approx(metrics.objective(clf.rule_list_, data, lam=0.01))
    assert 0.0 <= clf.lower_bound_ <= clf.objective_
    assert clf.score(X, y) > 0.85  # a real list, not an empty one


def test_tree_stopped_by_its_limit_warns_once_with_the_gap():
    data = random_dataset(3, n_samples=2000, n_features=60)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        clf = OptimalTreeClassifier(lam=0.001, max_depth=4, time_limit=0.05).fit(data.X, data.y)
    message = _one_limit_warning(record)
    assert clf.status_ == odtkit.Status.TIME_LIMIT and clf.certified_ is False
    assert "time_limit=0.05 s" in message and "lower bound" in message
    assert clf.lower_bound_ <= clf.objective_
    assert clf.objective_ == pytest.approx(metrics.objective(clf.tree_, data, lam=0.001))


def test_cv_stopped_by_its_limit_warns_once_and_says_what_is_certified():
    data = random_dataset(5, n_samples=1500, n_features=50)  # 0.7 s to certify
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        clf = OptimalTreeClassifierCV(max_depth=3, cv=3, time_limit=0.02).fit(data.X, data.y)
    message = _one_limit_warning(record)
    assert "fold paths stopped early" in message or "time limit" in message
    chosen = clf.path_.segment_at(clf.best_lam_)
    assert clf.certified_ == chosen.certified
    assert clf.objective_ == pytest.approx(chosen.objective(clf.best_lam_))
    assert clf.lower_bound_ <= clf.objective_ + 1e-12
    assert len(clf.fold_status_) == 3

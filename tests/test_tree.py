"""Tree: structure, prediction, serialisation, canonical form, scikit-learn import."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from odtkit import metrics
from odtkit.testing import example_dataset_trees, random_dataset
from odtkit.tree import Tree, majority_label


def trees(max_feature: int = 4, max_label: int = 2) -> st.SearchStrategy[Tree]:
    leaves = st.integers(0, max_label).map(Tree.leaf)
    return st.recursive(
        leaves,
        lambda children: st.builds(Tree.split, st.integers(0, max_feature), children, children),
        max_leaves=12,
    )


def test_stump_routes_zero_left_one_right():
    stump = Tree.split(0, Tree.leaf(0), Tree.leaf(1))
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]], dtype=bool)
    assert stump.predict(X).tolist() == [0, 1, 1, 0]
    assert stump.apply(X).tolist() == [0, 1, 1, 0]


def test_depth_and_leaf_counts_follow_the_conventions():
    leaf = Tree.leaf(1)
    assert leaf.depth == 0 and leaf.n_leaves == 1 and leaf.is_leaf
    tree = Tree.split(0, Tree.split(1, Tree.leaf(0), Tree.leaf(1)), Tree.leaf(1))
    assert tree.depth == 2
    assert tree.n_leaves == 3
    assert tree.n_internal == 2
    assert tree.leaves() == [(((0, 0), (1, 0)), 0), (((0, 0), (1, 1)), 1), (((0, 1),), 1)]
    assert tree.features_used() == {0, 1}


def test_invalid_nodes_are_rejected():
    with pytest.raises(TypeError, match="label"):
        Tree.leaf(-1)
    with pytest.raises(TypeError, match="feature"):
        Tree.split(-2, Tree.leaf(0), Tree.leaf(1))
    with pytest.raises(TypeError, match="left and right"):
        Tree.split(0, Tree.leaf(0), "leaf")
    with pytest.raises(ValueError, match="leaf needs"):
        Tree()


def test_a_node_is_taken_apart_as_what_it_is():
    # as_split / as_leaf: the typed inverses of split / leaf (walkers read them, not the
    # optional fields)
    left, right = Tree.leaf(0), Tree.split(2, Tree.leaf(1), Tree.leaf(0))
    node = Tree.split(1, left, right)
    assert node.as_split() == (1, left, right)
    assert left.as_leaf() == 0
    with pytest.raises(ValueError, match="leaf has no split"):
        left.as_split()
    with pytest.raises(ValueError, match="internal node has no label"):
        node.as_leaf()


def test_predict_rejects_too_few_features():
    tree = Tree.split(3, Tree.leaf(0), Tree.leaf(1))
    with pytest.raises(ValueError, match="tests feature 3"):
        tree.predict(np.zeros((2, 2), dtype=bool))


def test_majority_ties_go_to_smallest_class_and_empty_leaf_predicts_zero():
    assert majority_label(np.array([2.0, 2.0])) == 0
    assert majority_label(np.array([1.0, 3.0, 3.0])) == 1
    assert majority_label(np.zeros(3)) == 0


def test_to_text_names_features_and_classes():
    tree = Tree.split(0, Tree.leaf(0), Tree.leaf(1))
    text = tree.to_text(["smoker", "x"], ["no", "yes"])
    assert text.splitlines() == [
        "|--- smoker = 0",
        "|   |--- class: no",
        "|--- smoker = 1",
        "|   |--- class: yes",
    ]


@given(trees())
def test_dict_round_trip_is_json_safe(tree):
    data = json.loads(json.dumps(tree.to_dict()))
    assert Tree.from_dict(data) == tree
    assert hash(Tree.from_dict(data)) == hash(tree)


def test_from_dict_reports_missing_keys():
    with pytest.raises(ValueError, match="left"):
        Tree.from_dict({"feature": 0, "right": {"label": 1}})


@settings(max_examples=60, deadline=None)
@given(trees(), st.integers(0, 10_000), st.sampled_from([0.0, 0.01, 0.1, 0.3]))
def test_canonical_keeps_predictions_and_never_raises_objective(tree, seed, lam):
    data = random_dataset(seed, n_features=5, n_classes=3)
    canon = tree.canonical(data.X)
    assert np.array_equal(canon.predict(data.X), tree.predict(data.X))
    assert canon.depth <= tree.depth
    assert canon.n_leaves <= tree.n_leaves
    assert metrics.objective(canon, data, lam=lam) <= metrics.objective(tree, data, lam=lam) + 1e-12
    # idempotent
    assert canon.canonical(data.X) == canon


def test_canonical_example_of_formulations_trees_7_4():
    data = example_dataset_trees()
    complete = Tree.split(
        0, Tree.split(0, Tree.leaf(0), Tree.leaf(0)), Tree.split(0, Tree.leaf(1), Tree.leaf(1))
    )
    stump = Tree.split(0, Tree.leaf(0), Tree.leaf(1))
    assert complete.canonical(data.X) == stump
    assert metrics.objective(complete, data, lam=0.1) == pytest.approx(1 / 6 + 4 * 0.1)
    assert metrics.objective(stump, data, lam=0.1) == pytest.approx(11 / 30)


def test_canonical_without_data_only_merges():
    tree = Tree.split(2, Tree.split(1, Tree.leaf(1), Tree.leaf(1)), Tree.leaf(0))
    assert tree.canonical() == Tree.split(2, Tree.leaf(1), Tree.leaf(0))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6), st.sampled_from([2, 3]))
def test_predict_equals_the_sklearn_tree_it_came_from(seed, depth, n_classes):
    data = random_dataset(seed, n_samples=60, n_features=6, n_classes=n_classes)
    if len(np.unique(data.y)) < 2:
        return
    clf = DecisionTreeClassifier(max_depth=depth, random_state=seed).fit(data.X, data.y)
    tree = Tree.from_sklearn(clf)
    rng = np.random.default_rng(seed)
    X_new = rng.random((50, 6)) < 0.5
    for X in (data.X, X_new):
        assert np.array_equal(tree.predict(X), clf.predict(X))
    assert tree.depth <= depth


def test_from_sklearn_maps_string_classes_through_dataset_classes():
    X = np.array([[0], [0], [1], [1]], dtype=bool)
    y = np.array(["no", "no", "yes", "yes"])
    clf = DecisionTreeClassifier().fit(X, y)
    assert Tree.from_sklearn(clf) == Tree.split(0, Tree.leaf(0), Tree.leaf(1))
    assert Tree.from_sklearn(clf, classes=["yes", "no"]) == Tree.split(
        0, Tree.leaf(1), Tree.leaf(0)
    )


def test_from_sklearn_rejects_unfitted_and_non_binary():
    with pytest.raises(ValueError, match="fitted"):
        Tree.from_sklearn(DecisionTreeClassifier())
    X = np.arange(20, dtype=float).reshape(-1, 1)
    y = (X[:, 0] > 7).astype(int)
    clf = DecisionTreeClassifier(max_depth=1).fit(X, y)
    with pytest.raises(ValueError, match="binary"):
        Tree.from_sklearn(clf)

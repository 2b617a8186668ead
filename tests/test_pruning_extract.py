"""Extraction of pruning data from sklearn ensembles.

The definitions of docs/formulations-search-and-pruning.md §7.1 and the example of §8.1.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import BaggingClassifier, ExtraTreesClassifier, RandomForestClassifier
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from odtkit.pruning import extract, prune, worked_example


def _data(n=80, k=6, classes=2, seed=0):
    X, y = make_classification(
        n, n_features=k, n_informative=4, n_redundant=0, n_classes=classes, random_state=seed
    )
    return X, y


def _ensembles(X, y):
    return {
        "rf": RandomForestClassifier(4, max_depth=4, random_state=0).fit(X, y),
        "et": ExtraTreesClassifier(3, max_depth=3, random_state=1).fit(X, y),
        "bag_subsets": BaggingClassifier(
            DecisionTreeClassifier(max_depth=3), n_estimators=3, max_features=0.6, random_state=2
        ).fit(X, y),
        "best_first": [
            DecisionTreeClassifier(max_leaf_nodes=7, random_state=s).fit(X[s::2], y[s::2])
            for s in range(2)
        ],
    }


def test_worked_example_table_8_1():
    trees, X, y, costs = worked_example()
    d = extract(trees, X, y, costs)
    assert d.n_trees == 2 and d.n_samples == 2 and d.n_nodes == 10
    for t, tree in enumerate(d.trees):
        # pre-order: root, leaf, node, leaf, leaf (nodes 1..5 / 6..10 of §8.1)
        np.testing.assert_array_equal(tree.left, [1, -1, 3, -1, -1])
        np.testing.assert_array_equal(tree.right, [2, -1, 4, -1, -1])
        np.testing.assert_array_equal(tree.parent, [-1, 0, 0, 2, 2])
        np.testing.assert_array_equal(tree.end, [5, 2, 5, 4, 5])
        np.testing.assert_array_equal(tree.error, [1, 0, 1, 0, 0])
        np.testing.assert_array_equal(tree.pred, [0, 0, 0, 1, 0])  # node 2 empty -> parent's
        np.testing.assert_array_equal(tree.counts.sum(axis=1), [2, 0, 2, 1, 1])
        np.testing.assert_array_equal(tree.feature[[0, 2]], [0, 1] if t == 0 else [2, 1])
        # K_{t,i}: u for the root feature is node 0, for x2 node 2 (§8.1's nodes 1/3 and 6/8)
        got = sorted(zip(tree.use_example, tree.use_feature, tree.use_node, strict=True))
        root_f = 0 if t == 0 else 2
        want = sorted([(i, root_f, 0) for i in range(2)] + [(i, 1, 2) for i in range(2)])
        assert [tuple(map(int, g)) for g in got] == want
    # w pairs: (k, i) for k in {0, 1, 2}, x2 shared by both trees
    assert d.n_pairs == 6 and d.n_entries == 8


@pytest.mark.parametrize("kind", ["rf", "et", "bag_subsets", "best_first"])
def test_routing_and_statistics_match_sklearn(kind):
    X, y = _data(seed=3)
    ens = _ensembles(X, y)[kind]
    d = extract(ens, X, y)
    ests = ens if isinstance(ens, list) else ens.estimators_
    fmaps = getattr(ens, "estimators_features_", None)
    n = X.shape[0]
    for t, (tree, est) in enumerate(zip(d.trees, ests, strict=True)):
        cols = fmaps[t] if fmaps is not None else np.arange(X.shape[1])
        Xt = X[:, cols]
        # pre-order invariants
        assert np.all(tree.parent[1:] < np.arange(1, tree.n_nodes))
        inner = np.flatnonzero(tree.left >= 0)
        np.testing.assert_array_equal(tree.left[inner], inner + 1)
        np.testing.assert_array_equal(tree.right[inner], tree.end[tree.left[inner]])
        # leaf reached = sklearn's apply, mapped through the pre-order renumbering
        np.testing.assert_array_equal(tree.sk_node[tree.leaf_of], est.apply(Xt))
        # S_h class counts = decision_path indicator times one-hot labels
        path = est.decision_path(Xt).toarray().astype(bool)[:, tree.sk_node]
        onehot = np.eye(d.n_classes)[np.searchsorted(d.classes, y)]
        np.testing.assert_allclose(tree.counts, path.T.astype(float) @ onehot)
        # first node testing each feature on each path, by a plain loop
        want = set()
        for i in range(n):
            seen = set()
            for h in np.flatnonzero(path[i]):  # pre-order ids increase along a path
                f = tree.feature[h]
                if tree.left[h] >= 0 and f not in seen:
                    seen.add(f)
                    want.add((i, int(f), int(h)))
        got = set(
            zip(
                tree.use_example.tolist(),
                tree.use_feature.tolist(),
                tree.use_node.tolist(),
                strict=True,
            )
        )
        assert got == want
        # entries sorted by (u, k, i) (row order of §7.6)
        key = (tree.use_node * 1000 + tree.use_feature) * n + tree.use_example
        assert np.all(np.diff(key) > 0)
    assert d.n_entries == sum(t.n_entries for t in d.trees)
    pairs = set(zip(d.pair_feature.tolist(), d.pair_example.tolist(), strict=True))
    assert len(pairs) == d.n_pairs


def test_multiclass_and_empty_nodes():
    X, y = _data(n=120, classes=3, seed=5)
    rf = RandomForestClassifier(3, max_depth=5, random_state=0).fit(X, y)
    # prune on a small subset: many nodes receive no example
    d = extract(rf, X[:15], y[:15])
    for tree in d.trees:
        empty = tree.counts.sum(axis=1) == 0
        assert empty.any()
        nz = np.flatnonzero(empty)
        np.testing.assert_array_equal(tree.pred[nz], tree.pred[tree.parent[nz]])
        assert np.all(tree.error[nz] == 0)
        full = ~empty
        np.testing.assert_array_equal(tree.pred[full], np.argmax(tree.counts[full], axis=1))


def test_string_labels():
    X, y = _data(seed=1)
    labels = np.array(["no", "yes"])[y]
    rf = RandomForestClassifier(2, max_depth=2, random_state=0).fit(X, labels)
    pe = prune(rf, X, labels, lam=0.01).model
    assert set(pe.predict(X)) <= {"no", "yes"}


def test_bad_input():
    X, y = _data()
    with pytest.raises(NotFittedError):
        extract(RandomForestClassifier(), X, y)
    with pytest.raises(NotFittedError):
        extract([DecisionTreeClassifier()], X, y)
    rf = RandomForestClassifier(2, max_depth=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="costs"):
        extract(rf, X, y, costs=np.ones(3))
    with pytest.raises(ValueError, match="costs"):
        extract(rf, X, y, costs=-np.ones(X.shape[1]))
    with pytest.raises(ValueError, match="features"):
        extract(rf, X[:, :-1], y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        extract(rf, Xn, y)
    with pytest.raises(ValueError, match="unknown"):
        extract(rf, X, y + 5)
    with pytest.raises(ValueError, match="labels"):
        extract(rf, X, y[:-1])
    with pytest.raises(TypeError):
        extract(LogisticRegression().fit(X, y), X, y)
    bag = BaggingClassifier(LogisticRegression(), n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="decision trees"):
        extract(bag, X, y)
    from sklearn.ensemble import AdaBoostClassifier, GradientBoostingClassifier

    for boosted in (AdaBoostClassifier(n_estimators=3), GradientBoostingClassifier(n_estimators=3)):
        with pytest.raises(TypeError, match="boosted"):  # weighted votes: not IP3's model
            extract(boosted.fit(X, y), X, y)
    with pytest.raises(ValueError, match="empty"):
        extract([], X, y)
    with pytest.raises(ValueError, match="lam"):
        prune(rf, X, y, lam=-0.1)
    with pytest.raises(TypeError, match="training data"):
        prune(rf, lam=0.1)

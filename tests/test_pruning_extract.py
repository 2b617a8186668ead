"""Extraction of pruning data from sklearn ensembles.

The definitions of docs/formulations-search-and-pruning.md §7.1 and the example of §8.1.
"""

from __future__ import annotations

import numpy as np
import pytest
from _routing import decision_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
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
        # S_h class counts = path indicator (sklearn's routing) times one-hot labels
        path = decision_paths(est, Xt)[:, tree.sk_node]
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
    Xn[0, 0] = np.inf  # NaN is routed as the trees route it (tests/test_pruning_inputs.py)
    with pytest.raises(ValueError, match="X column 'column 0' has 1 infinite value"):
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


# ------------------------------------------------------------------------------------------
# issue 25: the native extraction against an independent numpy reference
# ------------------------------------------------------------------------------------------
def _reference_tree(est, fmap, X, codes, n_classes):
    """The pre-2025 extraction of one tree, in numpy from sklearn's own routing (the path to
    the leaf ``apply`` reaches: tests/_routing.py):
    pre-order ids, class counts, the leaf of each example, and the feature-use entries
    ``(i, k, u)`` (first node on i's path testing k) sorted by ``(u, k, i)``."""
    tr = est.tree_
    cl, cr = tr.children_left, tr.children_right
    order, stack = [], [0]
    while stack:
        v = stack.pop()
        order.append(v)
        if cl[v] >= 0:
            stack += [cr[v], cl[v]]
    order = np.array(order)
    new = np.full(cl.shape[0], -1)
    new[order] = np.arange(order.shape[0])
    inner = cl[order] >= 0
    feat = np.where(inner, tr.feature[order], -1)
    if fmap is not None:
        feat = np.where(inner, fmap[np.maximum(feat, 0)], -1)
    Xt = X if fmap is None else X[:, fmap]
    path = decision_paths(est, Xt)[:, order]  # (N, n_nodes) pre-order
    ex, fk, un = [], [], []
    for k in np.unique(feat[inner]):
        on = path & (feat == k)[None, :]
        rows = np.flatnonzero(on.any(axis=1))
        ex.append(rows)
        fk.append(np.full(rows.shape[0], k))
        un.append(np.argmax(on[rows], axis=1))  # pre-order ids increase along a path
    ex, fk, un = (np.concatenate(a) if a else np.zeros(0, np.int64) for a in (ex, fk, un))
    srt = np.lexsort((ex, fk, un))
    return {
        "left": np.where(inner, new[np.maximum(cl[order], 0)], -1),
        "right": np.where(inner, new[np.maximum(cr[order], 0)], -1),
        "feature": feat,
        "threshold": np.where(inner, tr.threshold[order], np.nan),
        "sk_node": order,
        "leaf_of": new[est.apply(Xt)],
        "counts": path.T.astype(float) @ np.eye(n_classes)[codes],
        "entries": (ex[srt], fk[srt], un[srt]),
    }


def _reference_pairs(entries, n, K):
    """pair_key / entry_pair / entry_group / group_start as the pre-native EnsembleData built
    them (dense marks; groups = runs of equal (u, k) within a tree)."""
    keys = np.concatenate([k * n + i for i, k, _ in entries])
    present = np.zeros(K * n, dtype=bool)
    present[keys] = True
    rank = np.cumsum(present) - 1
    starts, off = [], 0
    for _, k, u in entries:
        if u.shape[0]:
            brk = np.flatnonzero((np.diff(u) != 0) | (np.diff(k) != 0)) + 1
            starts.append(np.concatenate(([0], brk)) + off)
        off += u.shape[0]
    gstart = np.concatenate(starts)
    flag = np.zeros(off, dtype=np.int64)
    flag[gstart] = 1
    return np.flatnonzero(present), rank[keys], np.cumsum(flag) - 1, gstart


def _edge_rows(ens, X, seed):
    """``X`` with cells set exactly on the trees' thresholds, one float64 ulp either side, and
    values that float32 rounds onto or across a threshold (sklearn compares float32 X)."""
    rng = np.random.default_rng(seed)
    X = X.copy()
    ests = ens if isinstance(ens, list) else ens.estimators_
    fmaps = getattr(ens, "estimators_features_", None)
    for t, est in enumerate(ests):
        tr = est.tree_
        for v in np.flatnonzero(tr.children_left >= 0):
            f = tr.feature[v] if fmaps is None else fmaps[t][tr.feature[v]]
            thr = tr.threshold[v]
            if not np.isfinite(thr):  # a missing-or-not split (threshold inf): no edge
                continue
            f32 = np.float32(thr)
            cands = [
                thr,
                np.nextafter(thr, np.inf),
                np.nextafter(thr, -np.inf),
                float(f32),
                float(np.nextafter(f32, np.float32(np.inf))),
                float(np.nextafter(f32, np.float32(-np.inf))),
                thr + 1e-9,
                thr - 1e-9,
            ]
            rows = rng.integers(0, X.shape[0], len(cands))
            X[rows, f] = cands
    return X


def _forests(X, y):
    return {
        "rf": RandomForestClassifier(5, max_depth=5, random_state=0).fit(X, y),
        "et": ExtraTreesClassifier(4, max_depth=6, random_state=1).fit(X, y),
        "bag_subsets": BaggingClassifier(
            DecisionTreeClassifier(max_depth=4),
            n_estimators=4,
            max_features=0.5,
            bootstrap_features=True,
            random_state=2,
        ).fit(X, y),
        "best_first": [
            DecisionTreeClassifier(max_leaf_nodes=11, random_state=s).fit(X[s::2], y[s::2])
            for s in range(3)
        ],
    }


def _holes(X, rate, seed):
    """``X`` with a fraction ``rate`` of its cells missing (NaN)."""
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return X


@pytest.mark.parametrize("missing", [False, True], ids=["complete", "nan"])
@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("kind", ["rf", "et", "bag_subsets", "best_first"])
def test_native_extraction_equals_the_numpy_reference(kind, ties, classes, missing):
    """Issue 25: the native extraction gives today's arrays, entries in today's order, on
    forests with equal thresholds (integer features) and rows on / next to thresholds.
    Issue 37: with missing cells (forests fitted on them) NaN goes where scikit-learn's
    ``apply`` sends it, so the reference built from it needs no NaN rule of its own."""
    X, y = _data(n=150, k=7, classes=classes, seed=11)
    if ties:  # few distinct values: equal thresholds across nodes and trees
        X = np.round(X)
    if missing:
        X = _holes(X, 0.15, seed=classes)
    ens = _forests(X, y)[kind]
    Xe = _edge_rows(ens, X, seed=3)
    d = extract(ens, Xe, y)
    ests = ens if isinstance(ens, list) else ens.estimators_
    fmaps = getattr(ens, "estimators_features_", None)
    codes = np.searchsorted(d.classes, y)
    refs = [
        _reference_tree(est, None if fmaps is None else fmaps[t], Xe, codes, d.n_classes)
        for t, est in enumerate(ests)
    ]
    assert sum(r["entries"][0].shape[0] for r in refs) == d.n_entries  # before materializing
    for tree, ref in zip(d.trees, refs, strict=True):
        for name in ("left", "right", "feature", "sk_node", "leaf_of"):
            np.testing.assert_array_equal(getattr(tree, name), ref[name], err_msg=name)
            assert getattr(tree, name).dtype == np.int32, name
        np.testing.assert_array_equal(tree.threshold, ref["threshold"])
        np.testing.assert_array_equal(tree.counts, ref["counts"])
        est_nan_left = np.asarray(ests[d.trees.index(tree)].tree_.missing_go_to_left, bool)
        np.testing.assert_array_equal(tree.missing_left, est_nan_left[tree.sk_node] & ~tree.is_leaf)
        for got, want in zip(
            (tree.use_example, tree.use_feature, tree.use_node), ref["entries"], strict=True
        ):
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, want)
        # the compact form: examples sorted by (leaf, index), leaf_start their histogram
        np.testing.assert_array_equal(tree.by_leaf, np.argsort(tree.leaf_of, kind="stable"))
        hist = np.bincount(tree.leaf_of, minlength=tree.n_nodes + 1)
        np.testing.assert_array_equal(tree.leaf_start, np.concatenate(([0], np.cumsum(hist)))[:-1])
    want = _reference_pairs([r["entries"] for r in refs], d.n_samples, d.n_features)
    for name, w in zip(("pair_key", "entry_pair", "entry_group", "group_start"), want, strict=True):
        np.testing.assert_array_equal(getattr(d, name), w, err_msg=name)
    assert d.n_groups == want[3].shape[0]


@pytest.mark.parametrize("kind", ["rf", "et", "bag_subsets", "best_first"])
def test_missing_values_reach_the_leaves_the_forest_sends_them_to(kind):
    """Issue 37: NaN in the training rows and in new rows reaches, in every tree, the leaf the
    tree's own ``apply`` gives (the extraction, and the unpruned ensemble's routing)."""
    from odtkit.pruning import PrunedEnsemble
    from odtkit.pruning._ensemble import unpruned

    X, y = _data(n=200, k=7, seed=5)
    X = _holes(X, 0.2, seed=1)
    ens = _forests(X, y)[kind]
    d = extract(ens, X, y)
    fresh = _holes(_data(n=120, k=7, seed=6)[0], 0.3, seed=2)
    applied = PrunedEnsemble(d, unpruned(d), 0.0).apply(fresh)
    ests = ens if isinstance(ens, list) else ens.estimators_
    fmaps = getattr(ens, "estimators_features_", None) or [None] * len(ests)
    for t, (est, fmap, tree) in enumerate(zip(ests, fmaps, d.trees, strict=True)):
        cols = slice(None) if fmap is None else fmap
        Xt, fresh_t = X[:, cols].astype(np.float32), fresh[:, cols].astype(np.float32)
        np.testing.assert_array_equal(tree.sk_node[tree.leaf_of], est.apply(Xt))
        np.testing.assert_array_equal(tree.sk_node[applied[:, t]], est.apply(fresh_t))


def test_a_forest_fitted_without_nan_sends_it_where_scikit_learn_does():
    """A node that saw no missing value at fit sends NaN to the child that got more training
    samples (scikit-learn's rule, read from ``tree_.missing_go_to_left``)."""
    X, y = _data(n=200, k=7, seed=5)
    rf = RandomForestClassifier(5, max_depth=5, random_state=0).fit(X, y)
    Xn = _holes(X, 0.2, seed=3)
    d = extract(rf, Xn, y)
    for est, tree in zip(rf.estimators_, d.trees, strict=True):
        np.testing.assert_array_equal(tree.sk_node[tree.leaf_of], est.apply(Xn.astype(np.float32)))


def test_entry_counts_do_not_materialize_the_lists():
    X, y = _data(n=200, seed=4)
    rf = RandomForestClassifier(6, max_depth=6, random_state=0).fit(X, y)
    d = extract(rf, X, y)
    m = d.n_entries
    per_tree = [t.n_entries for t in d.trees]
    stats_free = (d.n_nodes, d.n_groups, d.entry_offset.copy())
    # nothing materialized: neither the entry lists nor the pair/group index
    assert not any(k in t.__dict__ for t in d.trees for k in ("_entries", "use_node"))
    assert not any(k in d.__dict__ for k in ("_pairs", "_groups", "pair_key", "entry_group"))
    assert m == sum(per_tree) == sum(t.use_node.shape[0] for t in d.trees)
    assert all("_entries" in t.__dict__ for t in d.trees)  # materialized once, then cached
    assert stats_free[1] == d.group_start.shape[0]
    np.testing.assert_array_equal(stats_free[2], np.concatenate(([0], np.cumsum(per_tree))))


def _sk_arrays(rf):
    ests = rf.estimators_
    return (
        [e.tree_.children_left.astype(np.int64) for e in ests],
        [e.tree_.children_right.astype(np.int64) for e in ests],
        [e.tree_.feature.astype(np.int64) for e in ests],
        [e.tree_.threshold.astype(np.float64) for e in ests],
    )


def test_native_extraction_rejects_bad_input():
    from odtkit import _native

    X, y = _data(n=50, seed=2)
    rf = RandomForestClassifier(2, max_depth=3, random_state=0).fit(X, y)
    X32, y32 = X.astype(np.float32), y.astype(np.int32)
    cl, cr, f, thr = _sk_arrays(rf)
    raw, status = _native.extract_trees(cl, cr, f, thr, X32, y32, 2)
    assert status == "optimal" and len(raw) == 2

    def call(cl=cl, cr=cr, f=f, thr=thr, X32=X32, y32=y32, n_classes=2):
        return _native.extract_trees(cl, cr, f, thr, X32, y32, n_classes)

    inner = int(np.flatnonzero(cl[0] >= 0)[1])
    bad = cl[0].copy()
    bad[inner] = cl[0].shape[0]
    with pytest.raises(ValueError, match="tree 0: node .* child ids out of range"):
        call(cl=[bad, cl[1]])
    bad = cl[0].copy()
    bad[inner] = 0  # back to the root
    with pytest.raises(ValueError, match="cycle or a shared child"):
        call(cl=[bad, cl[1]])
    bad = cr[1].copy()
    bad[int(np.flatnonzero(cl[1] >= 0)[0])] = -1  # one child missing
    with pytest.raises(ValueError, match="tree 1: node"):
        call(cr=[cr[0], bad])
    bad = f[0].copy()
    bad[0] = X.shape[1]
    with pytest.raises(ValueError, match="tests feature .* out of range"):
        call(f=[bad, f[1]])
    with pytest.raises(ValueError, match="same length"):
        call(thr=[thr[0][:-1], thr[1]])
    with pytest.raises(ValueError, match="one array per tree"):
        call(thr=thr[:1])
    with pytest.raises(ValueError, match="class code"):
        call(n_classes=1)
    with pytest.raises(ValueError, match="one class code per row"):
        call(y32=y32[:-1])
    t0 = raw[0]
    args = (t0["parent"], t0["first_use"], t0["leaf_of"])
    ex, node = _native.tree_entries(*args)
    assert ex.dtype == node.dtype == np.int64 and ex.shape == node.shape
    bad = t0["parent"].copy()
    bad[2] = 2  # a cycle
    with pytest.raises(ValueError, match=r"parent\[2\] is not an earlier node"):
        _native.tree_entries(bad, *args[1:])
    with pytest.raises(ValueError, match=r"parent\[0\] must be -1"):
        _native.tree_entries(np.roll(t0["parent"], 1), *args[1:])
    leaf = t0["leaf_of"].copy()
    leaf[3] = len(t0["parent"])
    with pytest.raises(ValueError, match=r"leaf_of\[3\]"):
        _native.tree_entries(t0["parent"], t0["first_use"], leaf)
    with pytest.raises(ValueError, match="one entry per node"):
        _native.tree_entries(t0["parent"], t0["first_use"][:-1], leaf)
    with pytest.raises(ValueError, match="no nodes"):
        call(
            cl=[cl[0][:0], cl[1]],
            cr=[cr[0][:0], cr[1]],
            f=[f[0][:0], f[1]],
            thr=[thr[0][:0], thr[1]],
        )


def test_native_extraction_stops_on_a_tiny_time_limit():
    from odtkit import _native
    from odtkit.pruning import _extract
    from odtkit.pruning._guard import Guard, Stopped
    from odtkit.results import Status

    X, y = _data(n=3000, k=10, seed=6)
    rf = RandomForestClassifier(30, max_depth=6, random_state=0).fit(X, y)
    cl, cr, f, thr = _sk_arrays(rf)
    raw, status = _native.extract_trees(
        cl, cr, f, thr, X.astype(np.float32), y.astype(np.int32), 2, time_limit=1e-9
    )
    assert status == "time_limit" and len(raw) < 30
    inputs = _extract.checked_inputs(rf, X, y)
    with pytest.raises(Stopped) as stop:
        _extract.extract_checked(inputs, Guard(1e-9, None))
    assert stop.value.status == Status.TIME_LIMIT
    assert "extraction" in stop.value.message


@pytest.mark.parametrize(
    ("native_status", "status", "says"),
    [
        ("interrupted", "interrupted", "Ctrl-C during the extraction (tree 2 of 3)"),
        ("time_limit", "time_limit", "the time limit ran out during the extraction (tree 2"),
    ],
)
def test_a_stopped_native_extraction_stops_prune(monkeypatch, native_status, status, says):
    """The native call stopped after one tree: prune answers with the limit's status, the
    root-only pruning, and the first tree's unpruned errors as its bound."""
    from odtkit.pruning import _extract

    X, y = _data(n=90, seed=7)
    rf = RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y)
    real = _extract._native_trees

    def one_tree(*args, **kwargs):
        raw, _ = real(*args, **kwargs)
        return raw[:1], native_status

    monkeypatch.setattr(_extract, "_native_trees", one_tree)
    res = prune(rf, X, y, lam=0.01, time_limit=1000)
    monkeypatch.undo()
    assert res.status == status and says in res.message
    assert res.model.n_leaves == res.model.n_trees  # every tree cut to its root
    first = extract(rf, X, y).trees[0]
    assert res.lower_bound == pytest.approx(first.error[first.is_leaf].sum() / (90 * 3))


@pytest.mark.parametrize("kind", ["rf", "bag_subsets", "best_first"])
def test_objective_terms_from_the_compact_entries(kind):
    """The accounting reads the compact entries: equal (bit for bit) to the one over the entry
    lists and the pair index, which it builds only if ``wt``/``w`` are read."""
    from odtkit.pruning import objective_terms
    from odtkit.pruning._ensemble import covered_mask, is_valid_pruning

    X, y = _data(n=150, k=7, classes=3, seed=12)
    d = extract(_forests(X, y)[kind], X, y, costs=np.linspace(0.1, 2.0, 7))
    rng = np.random.default_rng(0)
    for _ in range(10):
        z = []
        for tree in d.trees:  # a random valid pruning: cut at random internal nodes
            cut = (rng.random(tree.n_nodes) < 0.3) & (tree.left >= 0)
            cut[0] = False
            z.append((cut | (tree.left < 0)) & ~covered_mask(tree, cut))
        assert all(is_valid_pruning(t, zt) for t, zt in zip(d.trees, z, strict=True))
        terms = objective_terms(d, z, lam=0.3)
        assert not any(k in t.__dict__ for t in d.trees for k in ("_entries", "use_node"))
        assert not any(k in d.__dict__ for k in ("_pairs", "pair_key"))
        wt = np.concatenate(
            [~(covered_mask(t, zt) | zt)[t.use_node] for t, zt in zip(d.trees, z, strict=True)]
        )
        w = np.zeros(d.n_pairs, dtype=bool)
        w[d.entry_pair[wt]] = True
        cost = float(d.costs[d.pair_feature[w]].sum()) / d.n_samples
        err = sum(int(t.error[zt].sum()) for t, zt in zip(d.trees, z, strict=True))
        assert terms["cost_term"] == cost
        assert terms["error_term"] == err / (d.n_samples * d.n_trees)
        assert terms["objective"] == terms["error_term"] + 0.3 * cost
        np.testing.assert_array_equal(terms["wt"], wt)
        np.testing.assert_array_equal(terms["w"], w)
        for t in d.trees:  # drop the materialized lists for the next round's check
            t.__dict__.pop("_entries", None)
        d.__dict__.pop("_pairs", None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_rows=st.integers(1, 70),
    rate=st.sampled_from([0.0, 0.25]),
    seed=st.integers(0, 2**16),
)
def test_property_interleaved_routing_reaches_the_leaves_apply_gives(n_rows, rate, seed):
    """The native routing walks 16 rows at a time and gives a lane the next row when its row
    reaches a leaf: every row of every tree, whatever the number of rows (fewer than the lanes,
    not a multiple of them) and with NaN cells, lands in the leaf the tree's ``apply`` gives."""
    rng = np.random.default_rng(seed)
    X, y = _data(n=120, k=5, seed=seed % 7)
    X = np.round(X, 1)  # equal values: rows on the thresholds
    if rate:
        X = _holes(X, rate, seed=seed)
    rf = RandomForestClassifier(3, random_state=seed % 5).fit(X, y)  # full depth
    rows = rng.choice(120, size=n_rows, replace=n_rows > 120)
    Xr, yr = X[rows], y[rows]
    d = extract(rf, Xr, yr)
    for est, tree in zip(rf.estimators_, d.trees, strict=True):
        np.testing.assert_array_equal(tree.sk_node[tree.leaf_of], est.apply(Xr.astype(np.float32)))

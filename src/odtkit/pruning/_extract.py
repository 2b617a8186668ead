"""Vectorized extraction of everything IP0–IP3 need from a fitted tree ensemble.

For every tree (Nan, Wang, Saligrama 2016; docs/formulations-search-and-pruning.md §7.1) we
compute, with node ids renumbered in **pre-order** (root, left subtree, right subtree):

* ``left``/``right``/``parent``/``depth``/``end`` (the subtree of ``h`` is ``h .. end[h]-1``),
  ``feature``/``threshold`` (global feature indices, also for bagging with feature subsets);
* ``counts[h, c]``: training examples of class ``c`` in ``S_h`` (routed to or through ``h``),
  ``pred[h]`` (majority, ties -> smallest class, empty -> parent's prediction) and ``error[h]``;
* the **feature-use entries** ``(example i, feature k, node u)``: for every example and every
  feature on its root-to-leaf path, the first (closest to the root) node ``u = u_{t,k,i}``
  testing ``k``. Entries are sorted by ``(u, k, i)``, the row order of §7.6.

Everything is computed from the training data handed to :func:`odtkit.pruning.prune`, *not*
from the bootstrap samples the trees were grown on: the pruning objective is an empirical risk on
that data, so ``S_h``, ``e_h`` and the leaf distributions all refer to it. (A node that receives
none of these examples has ``S_h`` empty, ``e_h = 0`` and predicts its parent's class.)

Routing is our own level-by-level numpy loop that reproduces scikit-learn's rule exactly
(``X`` is cast to float32 and compared ``<=`` against the float64 threshold, as sklearn's
Cython code does); a test cross-checks it against ``decision_path``. This also handles
``BaggingClassifier`` feature subsets, whose trees index a column subset of ``X``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from odtkit._limits import check_deadline

__all__ = ["TreeData", "EnsembleData", "extract", "check_ensemble", "route"]


@dataclass(frozen=True, eq=False)
class TreeData:
    """One tree in pre-order with its training statistics and feature-use entries."""

    left: np.ndarray  # int64 (n_nodes,), -1 at leaves
    right: np.ndarray
    parent: np.ndarray  # -1 at the root
    depth: np.ndarray
    end: np.ndarray  # subtree of h = [h, end[h])
    feature: np.ndarray  # global feature index, -1 at leaves
    threshold: np.ndarray  # float64, nan at leaves
    counts: np.ndarray  # float64 (n_nodes, n_classes): training class counts of S_h
    dist: np.ndarray  # class distribution (nearest non-empty ancestor for empty nodes)
    pred: np.ndarray  # int64 class codes
    error: np.ndarray  # int64 e_h
    sk_node: np.ndarray  # pre-order id -> node id in the sklearn tree_
    use_example: np.ndarray  # int64 (m,)
    use_feature: np.ndarray  # int64 (m,)
    use_node: np.ndarray  # int64 (m,) = u_{t,k,i}, entries sorted by (u, k, i)
    leaf_of: np.ndarray  # int64 (N,): unpruned leaf reached by each training example

    @property
    def n_nodes(self) -> int:
        return int(self.left.shape[0])

    @property
    def is_leaf(self) -> np.ndarray:
        return self.left < 0

    @property
    def n_leaves(self) -> int:
        return int(np.count_nonzero(self.left < 0))

    @property
    def max_depth(self) -> int:
        return int(self.depth.max())

    @property
    def n_entries(self) -> int:
        return int(self.use_node.shape[0])

    def ancestors_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """``(indptr, indices)``: for node ``h`` the ancestors-or-self, root first.

        Built level by level (one numpy step per depth), so cost is O(sum of depths).
        """
        n = self.n_nodes
        cnt = self.depth + 1
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(cnt, out=indptr[1:])
        indices = np.empty(indptr[-1], dtype=np.int64)
        # position of the ancestor at depth d of node h is indptr[h] + d; walk up from h
        cur = np.arange(n, dtype=np.int64)
        d = self.depth.copy()
        alive = np.ones(n, dtype=bool)
        while alive.any():
            idx = np.flatnonzero(alive)
            indices[indptr[idx] + d[idx]] = cur[idx]
            cur[idx] = self.parent[cur[idx]]
            d[idx] -= 1
            alive[idx] = d[idx] >= 0
        return indptr, indices


@dataclass(frozen=True, eq=False)
class EnsembleData:
    """All trees of an ensemble on one training set, plus global indexing for the models."""

    trees: list[TreeData]
    y: np.ndarray  # int64 class codes 0..C-1
    classes: np.ndarray
    costs: np.ndarray  # float64 (K,)
    n_features: int
    estimators: list[Any] | None = None  # the fitted sklearn trees (for export)
    #: False for the stand-in a stopped ``prune`` returns with its root-only pruning
    #: (statistics at the roots only, no entries): see ``odtkit.pruning._guard.root_only_data``
    complete: bool = True
    node_offset: np.ndarray = field(init=False)  # global z id of tree t's node h = offset[t] + h
    entry_offset: np.ndarray = field(init=False)  # global w^(t) id = entry_offset[t] + j
    pair_key: np.ndarray = field(init=False)  # sorted unique k * N + i over all entries
    entry_pair: np.ndarray = field(init=False)  # global entry -> index into pair_key
    entry_group: np.ndarray = field(init=False)  # global entry -> (tree, u, k) group id
    group_start: np.ndarray = field(init=False)  # first global entry of each group

    def __post_init__(self) -> None:
        sizes = np.array([t.n_nodes for t in self.trees], dtype=np.int64)
        esizes = np.array([t.n_entries for t in self.trees], dtype=np.int64)
        object.__setattr__(self, "node_offset", np.concatenate(([0], np.cumsum(sizes))))
        object.__setattr__(self, "entry_offset", np.concatenate(([0], np.cumsum(esizes))))
        n = self.n_samples
        keys = np.concatenate(
            [t.use_feature * n + t.use_example for t in self.trees] or [np.zeros(0, np.int64)]
        )
        # dense marking instead of np.unique: keys < K * N, so this is linear
        present = np.zeros(self.n_features * n, dtype=bool)
        present[keys] = True
        check_deadline()  # between the vectorized steps of a large ensemble (prune's limit)
        rank = np.cumsum(present, dtype=np.int64) - 1
        object.__setattr__(self, "pair_key", np.flatnonzero(present).astype(np.int64))
        object.__setattr__(self, "entry_pair", rank[keys])
        # aggregated feature rows: entries of one tree with equal (u, k) are contiguous (sorted
        # by (u, k, i)) and share w^{(t)} in every feasible solution
        starts = []
        for t, off in zip(self.trees, self.entry_offset[:-1], strict=True):
            if t.n_entries:
                brk = np.flatnonzero((np.diff(t.use_node) != 0) | (np.diff(t.use_feature) != 0)) + 1
                starts.append(np.concatenate(([0], brk)) + off)
        check_deadline()
        gstart = np.concatenate(starts) if starts else np.zeros(0, np.int64)
        flag = np.zeros(self.n_entries, dtype=np.int64)
        flag[gstart] = 1
        object.__setattr__(self, "entry_group", np.cumsum(flag) - 1)
        object.__setattr__(self, "group_start", gstart.astype(np.int64))

    @property
    def n_samples(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_trees(self) -> int:
        return len(self.trees)

    @property
    def n_classes(self) -> int:
        return int(self.classes.shape[0])

    @property
    def n_nodes(self) -> int:
        return int(self.node_offset[-1])

    @property
    def n_entries(self) -> int:
        return int(self.entry_offset[-1])

    @property
    def n_pairs(self) -> int:
        return int(self.pair_key.shape[0])

    @property
    def n_groups(self) -> int:
        return int(self.group_start.shape[0])

    @property
    def pair_feature(self) -> np.ndarray:
        return self.pair_key // self.n_samples

    @property
    def pair_example(self) -> np.ndarray:
        return self.pair_key % self.n_samples

    def stats(self) -> dict[str, int]:
        """Sizes for reports (NWS "Complexity" quantities)."""
        return {
            "n_samples": self.n_samples,
            "n_trees": self.n_trees,
            "n_features": self.n_features,
            "n_nodes": self.n_nodes,
            "n_leaves": int(sum(t.n_leaves for t in self.trees)),
            "max_depth": int(max(t.max_depth for t in self.trees)),
            "n_entries": self.n_entries,
            "n_pairs": self.n_pairs,
            "n_groups": self.n_groups,
        }


# ------------------------------------------------------------------------------------------
# input checks
# ------------------------------------------------------------------------------------------
def _estimators(ensemble: Any) -> tuple[list[Any], list[np.ndarray | None], np.ndarray, int]:
    """Return (trees, per-tree feature maps or None, classes, n_features_in)."""
    from sklearn.exceptions import NotFittedError
    from sklearn.tree import DecisionTreeClassifier

    if isinstance(ensemble, DecisionTreeClassifier):
        ensemble = [ensemble]
    if isinstance(ensemble, (list, tuple)):
        if len(ensemble) == 0:
            raise ValueError("ensemble must contain at least one tree, got an empty list")
        for j, est in enumerate(ensemble):
            if not isinstance(est, DecisionTreeClassifier):
                raise TypeError(
                    f"ensemble[{j}] must be a fitted sklearn DecisionTreeClassifier, "
                    f"got {type(est).__name__}"
                )
            if not hasattr(est, "tree_"):
                raise NotFittedError(f"ensemble[{j}] is not fitted; call fit() first")
        classes = np.asarray(ensemble[0].classes_)
        nf = int(ensemble[0].n_features_in_)
        for j, est in enumerate(ensemble):
            if est.n_features_in_ != nf or not np.array_equal(np.asarray(est.classes_), classes):
                raise ValueError(
                    f"ensemble[{j}] has different classes or number of features than ensemble[0]"
                )
        return list(ensemble), [None] * len(ensemble), classes, nf
    name = type(ensemble).__name__
    if not hasattr(ensemble, "fit") or not hasattr(ensemble, "get_params"):
        raise TypeError(
            "ensemble must be a fitted RandomForestClassifier, ExtraTreesClassifier, "
            f"BaggingClassifier of DecisionTreeClassifiers, or a list of trees; got {name}"
        )
    if not hasattr(ensemble, "estimators_"):
        if hasattr(ensemble, "n_features_in_"):  # fitted, but not an ensemble of trees
            raise TypeError(
                f"{name} is not a tree ensemble; pass a RandomForestClassifier, "
                "ExtraTreesClassifier, BaggingClassifier of trees or a list of trees"
            )
        raise NotFittedError(f"this {name} is not fitted; call fit() first")
    if hasattr(ensemble, "estimator_weights_") or hasattr(ensemble, "init_"):
        # IP3 prices every tree's error equally and the pruned ensemble votes with equal weight
        # (NWS): a boosted ensemble's weighted (or additive) vote is another model, which at
        # lam = 0 disagreed with ada.predict on 5.6 % of test rows
        raise TypeError(
            f"{name} is a boosted ensemble (weighted or additive votes); prune models equally "
            "weighted votes only: pass a RandomForestClassifier, ExtraTreesClassifier, "
            "BaggingClassifier of trees or a list of trees"
        )
    ests = list(ensemble.estimators_)
    for j, est in enumerate(ests):
        if not isinstance(est, DecisionTreeClassifier):
            raise TypeError(
                f"{name}.estimators_[{j}] is a {type(est).__name__}; only decision trees "
                "(DecisionTreeClassifier / ExtraTreeClassifier) can be pruned"
            )
    if not hasattr(ensemble, "classes_") or np.ndim(ensemble.classes_) != 1:
        raise TypeError(f"{name} must be a single-output classifier")
    classes = np.asarray(ensemble.classes_)
    nf = int(ensemble.n_features_in_)
    feats = getattr(ensemble, "estimators_features_", None)
    if feats is None:
        fmaps: list[np.ndarray | None] = [None] * len(ests)
    else:
        fmaps = [np.asarray(f, dtype=np.int64) for f in feats]
    return ests, fmaps, classes, nf


def check_ensemble(ensemble: Any) -> tuple[list[Any], list[np.ndarray | None], np.ndarray, int]:
    """Validate a fitted ensemble; raises ``NotFittedError``/``TypeError``/``ValueError``."""
    return _estimators(ensemble)


def as_numeric_matrix(X: Any, n_features: int, name: str = "X") -> np.ndarray:
    """``X`` as float32 (n, n_features) exactly as sklearn trees compare it, or raise."""
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    try:
        arr = np.asarray(X)
    except Exception as exc:
        raise TypeError(f"{name} must be a numeric array, got {type(X).__name__}") from exc
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional (n_samples, n_features), got {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.shape[1] != n_features:
        raise ValueError(
            f"{name} has {arr.shape[1]} features but the ensemble was fitted on {n_features}"
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must contain at least one sample")
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def encode_y(y: Any, classes: np.ndarray, n: int) -> np.ndarray:
    """Class codes of ``y`` w.r.t. the ensemble's ``classes_``; unknown labels are an error."""
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    arr = np.asarray(y)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(
            f"y must be 1-dimensional with {n} labels (one per row of X), got {arr.shape}"
        )
    try:
        codes = np.searchsorted(classes, arr)
        codes = np.clip(codes, 0, len(classes) - 1)
        ok = classes[codes] == arr
    except TypeError as exc:
        raise TypeError(
            f"y labels are not comparable with the ensemble's classes {classes}"
        ) from exc
    if not np.all(ok):
        bad = np.unique(arr[~ok])[:3].tolist()
        raise ValueError(
            f"y contains labels {bad} unknown to the ensemble (classes_={classes.tolist()})"
        )
    return codes.astype(np.int64)


def check_costs(costs: Any, n_features: int) -> np.ndarray:
    """Feature costs ``c_k >= 0`` (default 1), one per feature."""
    if costs is None:
        return np.ones(n_features, dtype=np.float64)
    try:
        c = np.asarray(costs, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError("costs must be an array of non-negative numbers") from exc
    if c.ndim != 1 or c.shape[0] != n_features:
        raise ValueError(
            f"costs must have one entry per feature ({n_features}), got shape {c.shape}"
        )
    if not np.isfinite(c).all() or (c < 0).any():
        raise ValueError("costs must be finite and >= 0")
    return c


# ------------------------------------------------------------------------------------------
# per-tree extraction
# ------------------------------------------------------------------------------------------
def _preorder(children_left: np.ndarray, children_right: np.ndarray) -> np.ndarray:
    """sklearn node ids in pre-order (best-first builders do not number nodes in pre-order)."""
    n = children_left.shape[0]
    order = np.empty(n, dtype=np.int64)
    stack = [0]
    pos = 0
    cl = children_left.tolist()
    cr = children_right.tolist()
    # O(n_nodes) with tiny constants: trees have at most a few thousand nodes
    while stack:
        v = stack.pop()
        order[pos] = v
        pos += 1
        if cl[v] >= 0:
            stack.append(cr[v])
            stack.append(cl[v])
    return order[:pos]


def _structure(est: Any, fmap: np.ndarray | None) -> dict[str, np.ndarray]:
    tr = est.tree_
    cl = np.asarray(tr.children_left, dtype=np.int64)
    cr = np.asarray(tr.children_right, dtype=np.int64)
    order = _preorder(cl, cr)
    n = order.shape[0]
    new_id = np.full(cl.shape[0], -1, dtype=np.int64)
    new_id[order] = np.arange(n)
    left = np.where(cl[order] >= 0, new_id[np.maximum(cl[order], 0)], -1)
    right = np.where(cr[order] >= 0, new_id[np.maximum(cr[order], 0)], -1)
    feat = np.asarray(tr.feature, dtype=np.int64)[order]
    feat = np.where(left >= 0, feat, -1)
    if fmap is not None:
        feat = np.where(feat >= 0, fmap[np.maximum(feat, 0)], -1)
    thr = np.where(left >= 0, np.asarray(tr.threshold, dtype=np.float64)[order], np.nan)
    parent = np.full(n, -1, dtype=np.int64)
    internal = np.flatnonzero(left >= 0)
    parent[left[internal]] = internal
    parent[right[internal]] = internal
    # depth and subtree ends: children have larger pre-order ids than parents, so one forward
    # pass for depth and one backward pass for sizes suffice (vectorized by levels)
    depth = np.zeros(n, dtype=np.int64)
    for h in range(1, n):  # cheap: per-node ints on a small tree
        depth[h] = depth[parent[h]] + 1
    size = np.ones(n, dtype=np.int64)
    for h in range(n - 1, 0, -1):
        size[parent[h]] += size[h]
    return {
        "left": left,
        "right": right,
        "parent": parent,
        "depth": depth,
        "end": np.arange(n) + size,
        "feature": feat,
        "threshold": thr,
        "sk_node": order,
    }


def route(
    left: np.ndarray,
    right: np.ndarray,
    feature: np.ndarray,
    threshold: np.ndarray,
    X32: np.ndarray,
    stop: np.ndarray | None = None,
) -> np.ndarray:
    """Paths of all rows of ``X32`` from the root: int64 (N, D+1), padded with -1.

    ``stop`` (bool per node) marks nodes where routing ends early (pruned leaves).
    """
    n = X32.shape[0]
    node = np.zeros(n, dtype=np.int64)
    cols = [node.copy()]
    is_stop = left < 0 if stop is None else (stop | (left < 0))
    active = np.flatnonzero(~is_stop[node])
    while active.size:
        nd = node[active]
        go_left = X32[active, feature[nd]].astype(np.float64) <= threshold[nd]
        node[active] = np.where(go_left, left[nd], right[nd])
        col = np.full(n, -1, dtype=np.int64)
        col[active] = node[active]
        cols.append(col)
        active = active[~is_stop[node[active]]]
    return np.stack(cols, axis=1)


def _tree_data(
    est: Any, fmap: np.ndarray | None, X32: np.ndarray, y: np.ndarray, n_classes: int
) -> TreeData:
    s = _structure(est, fmap)
    n_nodes = s["left"].shape[0]
    n = X32.shape[0]
    paths = route(s["left"], s["right"], s["feature"], s["threshold"], X32)
    on = paths >= 0
    rows = np.broadcast_to(np.arange(n)[:, None], paths.shape)[on]
    nodes = paths[on]
    leaf_of = paths[np.arange(n), on.sum(axis=1) - 1]
    counts = np.bincount(nodes * n_classes + y[rows], minlength=n_nodes * n_classes)
    counts = counts.reshape(n_nodes, n_classes).astype(np.float64)
    support = counts.sum(axis=1)
    pred = np.argmax(counts, axis=1).astype(np.int64)  # ties -> smallest class
    dist = np.divide(counts, np.maximum(support, 1.0)[:, None])
    empty = support == 0
    if empty[0]:  # cannot happen with n >= 1 (every example passes the root); kept for safety
        pred[0] = int(np.argmax(np.bincount(y, minlength=n_classes)))
    if empty.any():
        # parents precede children in pre-order: one forward pass settles chains of empty nodes
        for h in np.flatnonzero(empty):
            if h > 0:
                pred[h] = pred[s["parent"][h]]
                dist[h] = dist[s["parent"][h]]
    error = (support - counts[np.arange(n_nodes), pred]).round().astype(np.int64)

    # first node testing each feature on each example's path: walk the path columns in depth
    # order and keep a (example, feature) pair the first time it is seen. Each column holds an
    # example at most once, so a "seen" mask over N*K keys makes this linear (no sort).
    K = int(max(s["feature"].max(), 0)) + 1
    seen = np.zeros(n * K, dtype=bool)
    ex_l, f_l, u_l = [], [], []
    for d in range(paths.shape[1] - 1):
        col = paths[:, d]
        rows_d = np.flatnonzero(col >= 0)
        nodes_d = col[rows_d]
        inner = s["left"][nodes_d] >= 0
        rows_d, nodes_d = rows_d[inner], nodes_d[inner]
        f_d = s["feature"][nodes_d]
        keys = rows_d * K + f_d
        new = ~seen[keys]
        seen[keys] = True
        ex_l.append(rows_d[new])
        f_l.append(f_d[new])
        u_l.append(nodes_d[new])
    ex = np.concatenate(ex_l) if ex_l else np.zeros(0, np.int64)
    fk = np.concatenate(f_l) if f_l else np.zeros(0, np.int64)
    u = np.concatenate(u_l) if u_l else np.zeros(0, np.int64)
    # row order of §7.6 within the tree: by (u, k, i), one int64 sort key
    order = np.argsort((u * K + fk) * n + ex, kind="stable")
    return TreeData(
        left=s["left"],
        right=s["right"],
        parent=s["parent"],
        depth=s["depth"],
        end=s["end"],
        feature=s["feature"],
        threshold=s["threshold"],
        counts=counts,
        dist=dist,
        pred=pred,
        error=error,
        sk_node=s["sk_node"],
        use_example=ex[order].astype(np.int64),
        use_feature=fk[order].astype(np.int64),
        use_node=u[order].astype(np.int64),
        leaf_of=leaf_of.astype(np.int64),
    )


def checked_inputs(ensemble: Any, X: Any, y: Any, costs: Any = None) -> dict[str, Any]:
    """Every input of :func:`extract` validated: the trees, their feature maps, ``classes``,
    ``n_features``, ``X32`` (float32, as the trees compare), ``codes`` (class codes of y) and
    ``costs``."""
    ests, fmaps, classes, nf = _estimators(ensemble)
    X32 = as_numeric_matrix(X, nf)
    return {
        "ests": ests,
        "fmaps": fmaps,
        "classes": classes,
        "n_features": nf,
        "X32": X32,
        "codes": encode_y(y, classes, X32.shape[0]),
        "costs": check_costs(costs, nf),
    }


def extract_checked(inputs: dict[str, Any], guard: Any = None) -> EnsembleData:
    """:func:`extract` from :func:`checked_inputs`, tree by tree under a pruning ``guard``
    (``odtkit.pruning._guard.Guard``): before each tree it checks the time, after each it
    projects the call's peak memory from the entries so far and stops before the budget.
    ``inputs["leaf_errors"]`` collects each finished tree's unpruned training errors (what a
    stopped call's lower bound is made of)."""
    ests, fmaps, X32, codes = inputs["ests"], inputs["fmaps"], inputs["X32"], inputs["codes"]
    n_classes, N, T = len(inputs["classes"]), X32.shape[0], len(ests)
    inputs["leaf_errors"] = []
    if guard is not None:
        depth = np.array([max(int(e.tree_.max_depth), 0) for e in ests], dtype=np.float64)
        guard.start_extraction(N, inputs["n_features"], T, int(depth.max(initial=0)))
        # the most entries a tree can have: one per example and level (distinct features)
        upper = N * np.minimum(depth, inputs["n_features"])
        upper_left = float(upper.sum())
        done_entries = done_upper = 0.0
    trees = []
    for j, (est, fmap) in enumerate(zip(ests, fmaps, strict=True)):
        if guard is not None:
            guard.check_time(f"the extraction (tree {j + 1} of {T})")
        tree = _tree_data(est, fmap, X32, codes, n_classes)
        trees.append(tree)
        inputs["leaf_errors"].append(int(tree.error[tree.is_leaf].sum()))
        if guard is not None:
            done_entries += tree.n_entries
            done_upper += upper[j]
            upper_left -= upper[j]
            fill = done_entries / done_upper if done_upper else 1.0
            guard.need(
                guard.peak(done_entries + fill * upper_left),
                f"the pruning of {T} trees on {N} examples (projected from {j + 1} trees)",
            )
    if guard is not None:
        guard.check_time("the extraction (the pair index)")
    return EnsembleData(
        trees=trees,
        y=codes,
        classes=inputs["classes"],
        costs=inputs["costs"],
        n_features=inputs["n_features"],
        estimators=list(ests),
    )


def extract(ensemble: Any, X: Any, y: Any, costs: Any = None) -> EnsembleData:
    """Extract all trees of ``ensemble`` on training data ``(X, y)``.

    Parameters
    ----------
    ensemble : RandomForestClassifier, ExtraTreesClassifier, BaggingClassifier or list
        Fitted scikit-learn ensemble of decision trees, or a list of fitted
        ``DecisionTreeClassifier`` sharing classes and features.
    X : array-like (N, K)
        Numeric training features (the data the pruning objective is measured on).
    y : array-like (N,)
        Labels, all among ``ensemble.classes_``.
    costs : array-like (K,), optional
        Feature acquisition costs ``c_k >= 0``; default all ones.

    Returns
    -------
    EnsembleData
    """
    return extract_checked(checked_inputs(ensemble, X, y, costs))

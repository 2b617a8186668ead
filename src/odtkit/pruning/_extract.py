"""Extraction of everything IP0–IP3 need from a fitted tree ensemble.

For every tree (Nan, Wang, Saligrama 2016; docs/formulations-search-and-pruning.md §7.1) we
compute, with node ids renumbered in **pre-order** (root, left subtree, right subtree):

* ``left``/``right``/``parent``/``depth``/``end`` (the subtree of ``h`` is ``h .. end[h]-1``),
  ``feature``/``threshold`` (global feature indices, also for bagging with feature subsets);
* ``counts[h, c]``: training examples of class ``c`` in ``S_h`` (routed to or through ``h``),
  ``pred[h]`` (majority, ties -> smallest class, empty -> parent's prediction) and ``error[h]``;
* the **feature-use entries** ``(example i, feature k, node u)``: for every example and every
  feature on its root-to-leaf path, the first (closest to the root) node ``u = u_{t,k,i}``
  testing ``k``. Entries are sorted by ``(u, k, i)``, the row order of §7.6.

The entries are kept **compact**. ``u`` tests ``k`` itself, so ``u`` has entries iff it is a
*first-use* node (internal, no strict ancestor tests ``feature[u]``), and they are
``{(i, feature[u], u) : i in S_u}``. The subtree of ``u`` is the pre-order range
``[u, end[u])``, so with the examples sorted by their leaf (``by_leaf``; ``leaf_start[v]``
examples have a leaf ``< v``) ``S_u`` is the one slice
``by_leaf[leaf_start[u] : leaf_start[end[u]]]``. A tree thus holds 8 bytes per example
(``leaf_of``, ``by_leaf``, int32) instead of 24 per entry; ``n_entries`` is a sum over the
first-use nodes, and the ``use_*`` lists (and EnsembleData's pair and group index) are built
only when a caller reads them -- the LP/MIP models do, the min cut does not need to.

Everything is computed from the training data handed to :func:`odtkit.pruning.prune`, *not*
from the bootstrap samples the trees were grown on: the pruning objective is an empirical risk on
that data, so ``S_h``, ``e_h`` and the leaf distributions all refer to it. (A node that receives
none of these examples has ``S_h`` empty, ``e_h = 0`` and predicts its parent's class.)

Routing is native (``_native.extract_trees``, core/native/ensemble.hpp): one call walks every
tree's ``tree_`` arrays with the GIL released, stops between trees on the time limit or
Ctrl-C, and reproduces scikit-learn's rule exactly (``X`` is cast to float32 and compared
``<=`` against the float64 threshold, as sklearn's Cython code does; a missing value, NaN,
goes to the child ``tree_.missing_go_to_left`` names: the side the node learned, or for a
node that saw none at fit the child that got more training samples); tests cross-check it
against ``decision_path``.

``X`` is checked as scikit-learn checks it at ``predict`` (:class:`FeatureSchema`): a
DataFrame's column names must be the ensemble's ``feature_names_in_`` in order (a
``ValueError`` lists the unexpected, missing or reordered names; names on one side only are a
warning and the columns go by position), infinite values are refused naming the column, and
NaN is routed when the trees can route it (scikit-learn >= 1.4 trees; else refused naming
the column). ``BaggingClassifier`` feature subsets are mapped to global columns
before the call. :func:`route` (numpy, level by level) stays for predictions of pruned trees.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from odtkit import _native
from odtkit._validation import check_label_kinds
from odtkit._warnings import warn
from odtkit.pruning._data import EnsembleData, FeatureSchema, TreeData
from odtkit.pruning._guard import Stopped
from odtkit.results import Status

__all__ = ["check_ensemble", "extract", "route"]


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


def feature_schema(ensemble: Any, ests: list[Any], n_features: int) -> FeatureSchema:
    """The :class:`FeatureSchema` of a validated ensemble (``ests``: its trees)."""
    if isinstance(ensemble, (list, tuple)):  # a list of trees (or one tree): all must agree
        names = _fitted_names(ests[0])
        for j, est in enumerate(ests):
            if _fitted_names(est) != names:
                raise ValueError(
                    f"ensemble[{j}] was fitted on other feature names than ensemble[0] "
                    f"({_listed(_fitted_names(est) or ())} vs {_listed(names or ())})"
                )
        owner = type(ests[0]).__name__
    else:
        names, owner = _fitted_names(ensemble), type(ensemble).__name__
    refusals = [why for why in map(_nan_refusal, ests) if why]
    return FeatureSchema(
        n_features=n_features,
        names=names,
        nan=not refusals,
        owner=owner,
        nan_refusal=refusals[0] if refusals else "",
    )


def _fitted_names(est: Any) -> tuple[str, ...] | None:
    names = getattr(est, "feature_names_in_", None)
    return None if names is None else tuple(str(n) for n in names)


def _nan_refusal(tree: Any) -> str:
    """Why scikit-learn's predict would refuse NaN for ``tree`` ("" when it routes it): the
    forests ask their first tree's ``allow_nan`` tag (``_validate_X_predict``), and the routing
    reads ``tree_.missing_go_to_left`` (scikit-learn >= 1.3)."""
    from sklearn.utils import get_tags

    name = type(tree).__name__
    if not hasattr(tree.tree_, "missing_go_to_left"):
        return f"{name} has no tree_.missing_go_to_left (fitted by scikit-learn < 1.3)"
    try:
        allowed = bool(get_tags(tree).input_tags.allow_nan)
    except (AttributeError, TypeError):  # an estimator without scikit-learn's tags
        allowed = False
    if not allowed:
        return f"scikit-learn's {name} (splitter={getattr(tree, 'splitter', '?')!r}) refuses NaN"
    return ""


def _listed(names: Any, limit: int = 8) -> str:
    texts = [repr(str(n)) for n in names]
    more = f", ... ({len(texts)} in all)" if len(texts) > limit else ""
    return "[" + ", ".join(texts[:limit]) + more + "]"


def _column_names(X: Any, name: str) -> tuple[str, ...] | None:
    """The column names of a DataFrame ``X`` as scikit-learn reads them: all strings, else
    none (mixed strings and others is an error, as in scikit-learn)."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "shape"):
        return None
    kinds = sorted({type(c).__name__ for c in columns})
    if len(kinds) > 1 and "str" in kinds:
        raise TypeError(
            f"{name}'s column names must all be strings to be matched with the ensemble's "
            f"feature names; got names of types {kinds}"
        )
    return tuple(columns) if kinds == ["str"] else None


def check_feature_names(X: Any, schema: FeatureSchema, name: str = "X") -> None:
    """scikit-learn's rule at predict: a DataFrame's columns must be the fitted feature names
    in order (``ValueError`` naming ``name`` and the names off); names on one side only warn,
    and the columns are then taken by position."""
    got, fitted = _column_names(X, name), schema.names
    if got is None and fitted is None:
        return
    if fitted is None:
        warn(
            f"{name} has feature names, but {schema.owner} was fitted without feature names: "
            "its columns are taken by position",
            UserWarning,
        )
        return
    if got is None:
        warn(
            f"{name} does not have valid feature names, but {schema.owner} was fitted with "
            f"feature names {_listed(fitted)}: its columns are taken by position",
            UserWarning,
        )
        return
    if got == fitted:
        return
    unexpected = [c for c in got if c not in fitted]
    missing = [c for c in fitted if c not in got]
    parts = []
    if unexpected:
        parts.append(f"unseen at fit: {_listed(unexpected)}")
    if missing:
        parts.append(f"seen at fit, now missing: {_listed(missing)}")
    if not parts:
        parts.append(
            f"the same names in another order: fitted {_listed(fitted)}, got {_listed(got)}"
        )
    raise ValueError(
        f"{name}'s column names must be the feature names {schema.owner} was fitted on, in the "
        f"same order (as scikit-learn requires; select them with {name}[names]): "
        + "; ".join(parts)
    )


def as_numeric_matrix(X: Any, schema: FeatureSchema | int, name: str = "X") -> np.ndarray:
    """``X`` as float32 (n, n_features) exactly as sklearn trees compare it, or raise.

    ``schema`` (or just the number of features) says what the ensemble expects: its feature
    names (:func:`check_feature_names`) and whether NaN may pass (it is routed as the trees
    route it); infinite values (or finite ones beyond float32, which the trees compare in) are
    refused naming the column, as scikit-learn refuses them.
    """
    if not isinstance(schema, FeatureSchema):
        schema = FeatureSchema(int(schema))
    check_feature_names(X, schema, name)
    labels = _column_names(X, name)
    arr = _as_array(X, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional (n_samples, n_features), got {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.shape[1] != schema.n_features:
        raise ValueError(
            f"{name} has {arr.shape[1]} features but the ensemble was fitted on {schema.n_features}"
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must contain at least one sample")
    with np.errstate(over="ignore"):  # beyond float32: inf, refused below naming the column
        arr = np.ascontiguousarray(arr, dtype=np.float32)
    if np.isfinite(arr).all():
        return arr
    if labels is None:
        labels = schema.names or tuple(f"column {j}" for j in range(arr.shape[1]))
    infinite = np.isinf(arr).any(axis=0)
    if infinite.any():
        j = int(np.argmax(infinite))
        raise ValueError(
            f"{name} column {labels[j]!r} has {int(np.isinf(arr[:, j]).sum())} infinite "
            "value(s) (or values too large for float32, which the trees compare in); "
            "scikit-learn's trees refuse them too"
        )
    if not schema.nan:
        j = int(np.argmax(np.isnan(arr).any(axis=0)))
        raise ValueError(
            f"{name} column {labels[j]!r} has {int(np.isnan(arr[:, j]).sum())} missing value(s) "
            f"(NaN), which these trees cannot route ({schema.nan_refusal}); impute them first"
        )
    return arr


def _as_array(X: Any, name: str) -> np.ndarray:
    """``X`` as a numpy array; a DataFrame's non-numeric columns are named, and its nullable
    columns (pandas' Int64, boolean, ...) read with NaN for a missing cell."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(X, "columns") and hasattr(X, "iloc"):
        bad = [
            (str(c), dt)
            for c, dt in zip(X.columns, dtypes, strict=True)
            if getattr(dt, "kind", "O") not in "biuf"
        ]
        if bad:
            raise TypeError(
                f"{name} must be numeric: column(s) {_listed(c for c, _ in bad)} are not "
                f"(dtype {bad[0][1]}); encode them as they were encoded for the forest's fit"
            )
        if all(isinstance(dt, np.dtype) for dt in dtypes):
            return np.asarray(X.to_numpy())
        return np.asarray(X.to_numpy(dtype=np.float64, na_value=np.nan))
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    try:
        return np.asarray(X)
    except Exception as exc:
        raise TypeError(f"{name} must be a numeric array, got {type(X).__name__}") from exc


def encode_y(y: Any, classes: np.ndarray, n: int) -> np.ndarray:
    """Class codes of ``y`` w.r.t. the ensemble's ``classes_``; unknown labels are an error."""
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    arr = np.asarray(y)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(
            f"y must be 1-dimensional with {n} labels (one per row of X), got {arr.shape}"
        )
    check_label_kinds(arr)  # None, complex, numbers mixed with strings: named, not "'<'"
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
def _native_trees(
    ests: list[Any],
    fmaps: list[np.ndarray | None],
    X32: np.ndarray,
    codes: np.ndarray,
    n_classes: int,
    time_limit: float = 0.0,
) -> tuple[list[dict[str, np.ndarray]], str]:
    """All trees through one native call: per-tree dicts of the :class:`TreeData` arrays
    (``pred``/``dist``/``error`` excepted) for the trees done, and the native status
    (``optimal``; or ``time_limit``/``interrupted``/``memory_limit`` with fewer trees)."""
    left, right, feature, threshold, missing = [], [], [], [], []
    for est, fmap in zip(ests, fmaps, strict=True):
        tr = est.tree_
        # where a NaN goes (sklearn >= 1.3); without it every NaN goes right, but X then has
        # none: as_numeric_matrix refuses NaN for such trees (FeatureSchema.nan)
        nan_left = getattr(tr, "missing_go_to_left", None)
        if nan_left is None:
            nan_left = np.zeros(tr.node_count, dtype=np.uint8)
        missing.append(np.ascontiguousarray(nan_left, dtype=np.uint8))
        left.append(np.ascontiguousarray(tr.children_left, dtype=np.int64))
        right.append(np.ascontiguousarray(tr.children_right, dtype=np.int64))
        feat = np.ascontiguousarray(tr.feature, dtype=np.int64)
        if fmap is not None:  # BaggingClassifier feature subsets: local -> global columns
            feat = np.where(feat >= 0, fmap[np.maximum(feat, 0)], feat)
        feature.append(feat)
        threshold.append(np.ascontiguousarray(tr.threshold, dtype=np.float64))
    return _native.extract_trees(
        left,
        right,
        feature,
        threshold,
        np.ascontiguousarray(X32, dtype=np.float32),
        np.ascontiguousarray(codes, dtype=np.int32),
        int(n_classes),
        time_limit=float(time_limit),
        missing_go_to_left=missing,
    )


def _native_stop(status: str, phase: str, guard: Any) -> BaseException:
    """The exception for a native extraction that stopped with ``status`` during ``phase``:
    the guard's ``Stopped`` under a guard, else what the Python code would have raised."""
    if status == "interrupted":
        return (
            Stopped(Status.INTERRUPTED, f"Ctrl-C during {phase}") if guard else KeyboardInterrupt()
        )
    if status == "memory_limit":
        if guard is None:
            return MemoryError(f"out of memory during {phase}")
        return Stopped(Status.MEMORY_LIMIT, f"an allocation failed during {phase} (out of memory)")
    return Stopped(Status.TIME_LIMIT, f"the time limit ran out during {phase}")


#: the native extraction's arrays of one tree that are its structure (shared by every pruning of
#: it), and its compact feature-use entries (see TreeData)
_STRUCTURE = (
    "left",
    "right",
    "parent",
    "depth",
    "end",
    "feature",
    "threshold",
    "missing_left",
    "sk_node",
)
_COMPACT_ENTRIES = ("leaf_of", "by_leaf", "leaf_start", "first_use")


def _tree_data(raw: dict[str, np.ndarray], y: np.ndarray, n_classes: int) -> TreeData:
    """A :class:`TreeData` from one tree of :func:`_native_trees`: adds ``pred`` (majority,
    ties -> smallest class, empty node -> its parent's), ``dist`` and ``error``."""
    counts = raw["counts"]
    n_nodes = counts.shape[0]
    support = counts.sum(axis=1)
    pred = np.argmax(counts, axis=1).astype(np.int64)  # ties -> smallest class
    dist = np.divide(counts, np.maximum(support, 1.0)[:, None])
    empty = support == 0
    if empty[0]:  # cannot happen with n >= 1 (every example passes the root); kept for safety
        pred[0] = int(np.argmax(np.bincount(y, minlength=n_classes)))
    if empty.any():
        # an empty node takes its nearest non-empty ancestor's prediction and distribution:
        # climb all empty nodes one level per step (the root is never empty)
        nodes = np.flatnonzero(empty)
        nodes = nodes[nodes > 0]
        src = raw["parent"][nodes].astype(np.int64)
        while True:
            up = empty[src] & (src > 0)
            if not up.any():
                break
            src[up] = raw["parent"][src[up]]
        pred[nodes] = pred[src]
        dist[nodes] = dist[src]
    error = (support - counts[np.arange(n_nodes), pred]).round().astype(np.int64)
    structure = {k: raw[k] for k in _STRUCTURE + _COMPACT_ENTRIES}
    return TreeData(**structure, counts=counts, dist=dist, pred=pred, error=error)


def route(
    left: np.ndarray,
    right: np.ndarray,
    feature: np.ndarray,
    threshold: np.ndarray,
    X32: np.ndarray,
    stop: np.ndarray | None = None,
    missing_left: np.ndarray | None = None,
) -> np.ndarray:
    """Paths of all rows of ``X32`` from the root: int64 (N, D+1), padded with -1.

    ``stop`` (bool per node) marks nodes where routing ends early (pruned leaves);
    ``missing_left`` (bool per node; None: all False) where a NaN goes, as sklearn routes it.
    """
    n = X32.shape[0]
    node = np.zeros(n, dtype=np.int64)
    cols = [node.copy()]
    is_stop = left < 0 if stop is None else (stop | (left < 0))
    active = np.flatnonzero(~is_stop[node])
    while active.size:
        nd = node[active]
        x = X32[active, feature[nd]].astype(np.float64)
        go_left = x <= threshold[nd]
        if missing_left is not None:
            go_left = np.where(np.isnan(x), missing_left[nd], go_left)
        node[active] = np.where(go_left, left[nd], right[nd])
        col = np.full(n, -1, dtype=np.int64)
        col[active] = node[active]
        cols.append(col)
        active = active[~is_stop[node[active]]]
    return np.stack(cols, axis=1)


def checked_inputs(ensemble: Any, X: Any, y: Any, costs: Any = None) -> dict[str, Any]:
    """Every input of :func:`extract` validated: the trees, their feature maps, ``classes``,
    ``n_features``, ``schema`` (names, NaN), ``X32`` (float32, as the trees compare),
    ``codes`` (class codes of y) and ``costs``."""
    ests, fmaps, classes, nf = _estimators(ensemble)
    schema = feature_schema(ensemble, ests, nf)
    X32 = as_numeric_matrix(X, schema)
    return {
        "ests": ests,
        "fmaps": fmaps,
        "classes": classes,
        "n_features": nf,
        "schema": schema,
        "X32": X32,
        "codes": encode_y(y, classes, X32.shape[0]),
        "costs": check_costs(costs, nf),
    }


def extract_checked(inputs: dict[str, Any], guard: Any = None) -> EnsembleData:
    """:func:`extract` from :func:`checked_inputs`, under a pruning ``guard``
    (``odtkit.pruning._guard.Guard``).

    Before the native extraction the guard charges the compact data (and refuses at once if
    even the smallest pruning would not fit); the native call gets what is left of the time
    limit and stops between trees on it or on Ctrl-C, which becomes the guard's
    :class:`~odtkit.pruning._guard.Stopped`. Once the trees are known the call's peak is
    projected from their exact number of entries. ``inputs["leaf_errors"]`` collects each
    extracted tree's unpruned training errors (what a stopped call's lower bound is made of).
    """
    ests, fmaps, X32, codes = inputs["ests"], inputs["fmaps"], inputs["X32"], inputs["codes"]
    n_classes, N, T = len(inputs["classes"]), X32.shape[0], len(ests)
    inputs["leaf_errors"] = []
    time_limit = 0.0
    if guard is not None:
        n_nodes = sum(int(e.tree_.node_count) for e in ests)
        guard.start_extraction(N, inputs["n_features"], T, n_nodes, n_classes)
        guard.check_time(f"the extraction (tree 1 of {T})")
        left = guard.deadline.remaining()
        # a positive limit: 0 means none to the native call
        time_limit = 0.0 if left is None else max(left, 1e-9)
    raw, status = _native_trees(ests, fmaps, X32, codes, n_classes, time_limit)
    trees = []
    for j, tree_raw in enumerate(raw):
        if guard is not None:
            guard.check_time(f"the extraction (tree {j + 1} of {T})")
        tree = _tree_data(tree_raw, codes, n_classes)
        trees.append(tree)
        inputs["leaf_errors"].append(int(tree.error[tree.is_leaf].sum()))
    if status != "optimal":
        raise _native_stop(status, f"the extraction (tree {len(raw) + 1} of {T})", guard)
    if guard is not None:
        m = sum(t.n_entries for t in trees)
        guard.need(
            guard.peak(m),
            f"the pruning of {T} trees on {N} examples (projected from their {m} entries)",
        )
        guard.check_time("the extraction")
    return EnsembleData(
        trees=trees,
        y=codes,
        classes=inputs["classes"],
        costs=inputs["costs"],
        n_features=inputs["n_features"],
        estimators=list(ests),
        schema=inputs["schema"],
    )


def extract(ensemble: Any, X: Any, y: Any, costs: Any = None) -> EnsembleData:
    """Extract all trees of ``ensemble`` on training data ``(X, y)``.

    Parameters
    ----------
    ensemble : RandomForestClassifier, ExtraTreesClassifier, BaggingClassifier or list
        Fitted scikit-learn ensemble of decision trees, or a list of fitted
        ``DecisionTreeClassifier`` sharing classes and features.
    X : array-like (N, K)
        Numeric training features (the data the pruning objective is measured on). A
        DataFrame's column names must be the ensemble's ``feature_names_in_``, in order, as
        scikit-learn requires at predict; missing values (NaN) are routed as the trees route
        them (``tree_.missing_go_to_left``), infinite values refused.
    y : array-like (N,)
        Labels, all among ``ensemble.classes_``.
    costs : array-like (K,), optional
        Feature acquisition costs ``c_k >= 0``; default all ones.

    Returns
    -------
    EnsembleData
    """
    return extract_checked(checked_inputs(ensemble, X, y, costs))


def root_only_data(
    ests: list[Any],
    fmaps: list[np.ndarray | None],
    classes: np.ndarray,
    n_features: int,
    codes: np.ndarray,
    costs: np.ndarray,
    schema: FeatureSchema | None = None,
) -> Any:
    """An :class:`EnsembleData` that holds only what the root-only pruning needs.

    Each tree has its real structure (so the pruned copies, ``n_leaves_unpruned`` and routing
    are right) but training statistics at the root only (every node predicts the root's
    majority class) and no feature-use entries: exact for the pruning that cuts every tree to
    its root (error at the root, no feature acquired), meaningless for any other, so it is
    marked ``complete=False`` and ``prune`` refuses it as input.
    """
    n_classes = len(classes)
    root_counts = np.bincount(codes, minlength=n_classes).astype(np.float64)
    label = int(np.argmax(root_counts))
    root_dist = root_counts / max(root_counts.sum(), 1.0)
    root_error = int(round(root_counts.sum() - root_counts[label]))
    # the structure alone: one row routed (never read), no time limit; a Ctrl-C arriving
    # meanwhile stops it between trees, so go on with the trees still missing
    one_row, one_code = np.zeros((1, n_features), np.float32), np.zeros(1, np.int32)
    raw: list[dict[str, np.ndarray]] = []
    while len(raw) < len(ests):
        k = len(raw)
        raw += _native_trees(ests[k:], fmaps[k:], one_row, one_code, n_classes)[0]
    N = codes.shape[0]
    # never read: the merge of duplicate examples needs complete data
    zeros = np.broadcast_to(np.int32(0), (N,))
    trees = []
    for s in raw:
        n = s["left"].shape[0]
        counts = np.zeros((n, n_classes))
        counts[0] = root_counts
        error = np.zeros(n, dtype=np.int64)
        error[0] = root_error
        trees.append(
            TreeData(
                **{k: s[k] for k in _STRUCTURE},
                counts=counts,
                dist=np.broadcast_to(root_dist, (n, n_classes)),
                pred=np.full(n, label, dtype=np.int64),
                error=error,
                leaf_of=zeros,
                by_leaf=zeros,
                leaf_start=np.zeros(n + 1, dtype=np.int64),
                first_use=np.zeros(n, dtype=bool),  # no entries
            )
        )
    return EnsembleData(
        trees=trees,
        y=codes,
        classes=classes,
        costs=costs,
        n_features=n_features,
        estimators=list(ests),
        complete=False,
        schema=schema,
    )

"""Shared machinery of the tree formulations: heap numbering, row aggregation, embedding,
routing, decoding and the common ``build / decode / start`` life cycle.

Heap numbering (FORMULATIONS-TREES §1.2): root 1, children ``2u`` (x = 0) and ``2u + 1``
(x = 1); branch nodes ``1 .. 2^D - 1``, leaves ``2^D .. 2^(D+1) - 1``, ``depth(u) =
floor(log2 u)``. Arrays indexed by heap node have length ``2^(D+1)`` and ignore entry 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from odtkit._validation import check_depth, check_lambda
from odtkit.datasets import Dataset
from odtkit.model import Model
from odtkit.tree import Tree

NO_FEATURE = -1


# ---------------------------------------------------------------------------------------------
# heap numbering
# ---------------------------------------------------------------------------------------------
def branch_nodes(depth: int) -> np.ndarray:
    """Heap indices of the branch nodes ``1 .. 2^D - 1``."""
    return np.arange(1, 2**depth, dtype=np.int64)


def leaf_nodes(depth: int) -> np.ndarray:
    """Heap indices of the leaves ``2^D .. 2^(D+1) - 1``."""
    return np.arange(2**depth, 2 ** (depth + 1), dtype=np.int64)


def node_depth(nodes: np.ndarray) -> np.ndarray:
    """``floor(log2 u)`` for heap indices ``u >= 1`` (exact integer arithmetic)."""
    nodes = np.asarray(nodes, dtype=np.int64)
    out = np.zeros(nodes.shape, dtype=np.int64)
    v = nodes.copy()
    while np.any(v > 1):
        more = v > 1
        out[more] += 1
        v[more] >>= 1
    return out


def subtree_leaf_ranges(nodes: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For branch nodes ``u``: (first left leaf, first right leaf, number of leaves per side).

    ``L_L(u) = [left, left + size)`` and ``L_R(u) = [right, right + size)`` as heap indices.
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    size = 2 ** (depth - node_depth(nodes) - 1)
    return 2 * nodes * size, (2 * nodes + 1) * size, size


def ancestor_pairs(nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All (node, strict ancestor) pairs of the given heap nodes, as two aligned arrays."""
    nodes = np.asarray(nodes, dtype=np.int64)
    d = node_depth(nodes)
    rep = np.repeat(nodes, d)
    # level offsets 1..depth(u) for each node
    offsets = np.arange(rep.size) - np.repeat(np.cumsum(d) - d, d) + 1
    return rep, rep >> offsets


# ---------------------------------------------------------------------------------------------
# data preparation
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RowData:
    """The rows a formulation is built on: distinct (x, y) pairs with summed weights.

    Identical (x, y) rows are routed identically by every tree, so merging them into one weighted
    row changes no objective value and shrinks every row-indexed block of the models.
    """

    X: np.ndarray  # bool (m, p)
    y: np.ndarray  # int64 (m,)
    weight: np.ndarray  # float (m,)
    total_weight: float
    n_classes: int
    n_features: int

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])


def check_dataset(dataset: Any) -> Dataset:
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be an odtkit Dataset, got {type(dataset).__name__}")
    if dataset.n_samples == 0:
        raise ValueError("dataset must have at least one sample")
    return dataset


def row_data(dataset: Dataset, aggregate: bool = True) -> RowData:
    """Distinct (x, y) rows with summed weights (or every row when ``aggregate`` is False)."""
    X, y, w = dataset.X, dataset.y, dataset.weights.astype(float)
    if aggregate:
        keys = np.concatenate(
            [X.astype(np.uint8), y[:, None].astype(np.uint8 if y.max() < 256 else np.int64)], axis=1
        )
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        weight = np.bincount(inverse, weights=w, minlength=uniq.shape[0])
        keep = weight > 0
        X = uniq[keep, :-1].astype(bool)
        y = uniq[keep, -1].astype(np.int64)
        weight = weight[keep]
    else:
        keep = w > 0
        X, y, weight = X[keep], y[keep], w[keep]
    return RowData(
        X=np.ascontiguousarray(X),
        y=np.ascontiguousarray(y),
        weight=weight,
        total_weight=float(dataset.total_weight),
        n_classes=int(dataset.n_classes),
        n_features=int(dataset.n_features),
    )


def separation_pairs(
    rows: RowData, max_distance: int, max_pairs: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of rows with different labels whose features differ in at most ``max_distance``.

    Returns ``(first, second, differ)``: row indices with ``first < second`` and the (pairs, p)
    boolean matrix of the features on which each pair differs. Pairs come closest first; with
    ``max_pairs`` only that many are kept (the closest, which give the strongest cuts).
    Hamming distances are computed in blocks of rows as ``X @ (1 - X).T + (1 - X) @ X.T`` so
    memory stays ``O(block * m)``.
    """
    X = rows.X
    m = X.shape[0]
    if m < 2 or max_distance < 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, X.shape[1]), bool)
    ones = X.astype(np.float32)
    zeros = 1.0 - ones
    block = max(1, min(m, 4_000_000 // max(m, 1)))
    firsts, seconds, dists = [], [], []
    for lo in range(0, m, block):
        hi = min(m, lo + block)
        dist = ones[lo:hi] @ zeros.T + zeros[lo:hi] @ ones.T
        a, c = np.nonzero(
            (dist <= max_distance + 0.5)
            & (rows.y[lo:hi, None] != rows.y[None, :])
            & (np.arange(lo, hi)[:, None] < np.arange(m)[None, :])
        )
        firsts.append(a + lo)
        seconds.append(c)
        dists.append(dist[a, c])
    first, second, dist = np.concatenate(firsts), np.concatenate(seconds), np.concatenate(dists)
    order = np.argsort(dist, kind="stable")
    if max_pairs is not None:
        order = order[:max_pairs]
    first, second = first[order].astype(np.int64), second[order].astype(np.int64)
    return first, second, X[first] != X[second]


# ---------------------------------------------------------------------------------------------
# trees <-> heap arrays
# ---------------------------------------------------------------------------------------------
@dataclass
class HeapTree:
    """A tree of depth <= D in heap numbering: arrays of length ``2^(D+1)``.

    ``present[u]``: node ``u`` belongs to the tree; ``feature[u]``: tested feature of an internal
    node (``NO_FEATURE`` at leaves / absent nodes); ``label[u]``: class of a leaf (-1 otherwise).
    """

    depth: int
    present: np.ndarray
    feature: np.ndarray
    label: np.ndarray

    @property
    def is_leaf(self) -> np.ndarray:
        return self.present & (self.feature == NO_FEATURE)

    @property
    def is_internal(self) -> np.ndarray:
        return self.present & (self.feature != NO_FEATURE)


def embed(tree: Tree, depth: int) -> HeapTree:
    """Heap arrays of ``tree`` (root at 1, children of ``u`` at ``2u`` / ``2u+1``)."""
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be an odtkit Tree, got {type(tree).__name__}")
    if tree.depth > depth:
        raise ValueError(f"tree has depth {tree.depth} but the model allows depth <= {depth}")
    size = 2 ** (depth + 1)
    present = np.zeros(size, dtype=bool)
    feature = np.full(size, NO_FEATURE, dtype=np.int64)
    label = np.full(size, -1, dtype=np.int64)
    stack = [(tree, 1)]
    while stack:
        node, u = stack.pop()
        present[u] = True
        if node.is_leaf:
            label[u] = node.label
        else:
            feature[u] = node.feature
            stack.append((node.left, 2 * u))
            stack.append((node.right, 2 * u + 1))
    return HeapTree(depth, present, feature, label)


def route(X: np.ndarray, heap: HeapTree) -> np.ndarray:
    """Heap node of the leaf each row of ``X`` reaches (vectorized over rows, one level a step)."""
    node = np.ones(X.shape[0], dtype=np.int64)
    rows = np.arange(X.shape[0])
    for _ in range(heap.depth):
        feat = heap.feature[node]
        internal = feat != NO_FEATURE
        step = np.zeros(X.shape[0], dtype=np.int64)
        step[internal] = X[rows[internal], feat[internal]]
        node = np.where(internal, 2 * node + step, node)
    return node


def paths(X: np.ndarray, heap: HeapTree) -> np.ndarray:
    """(m, D+1) heap nodes on each row's root-to-leaf path, padded with 0 after the leaf."""
    m = X.shape[0]
    out = np.zeros((m, heap.depth + 1), dtype=np.int64)
    node = np.ones(m, dtype=np.int64)
    rows = np.arange(m)
    out[:, 0] = 1
    active = np.ones(m, dtype=bool)
    for level in range(1, heap.depth + 1):
        feat = heap.feature[node]
        active &= feat != NO_FEATURE
        nxt = 2 * node[active] + X[rows[active], feat[active]]
        node[active] = nxt
        out[active, level] = nxt
    return out


def heap_to_tree(feature: np.ndarray, label: np.ndarray, is_leaf: np.ndarray, u: int = 1) -> Tree:
    """Read the Tree below heap node ``u`` (leaves where ``is_leaf``)."""
    if is_leaf[u]:
        return Tree.leaf(int(label[u]))
    return Tree.split(
        int(feature[u]),
        heap_to_tree(feature, label, is_leaf, 2 * u),
        heap_to_tree(feature, label, is_leaf, 2 * u + 1),
    )


def prune_empty(tree: Tree, X: np.ndarray) -> Tree:
    """Replace every internal node with a side that receives no row by its other side (§1.4).

    Unlike ``Tree.canonical`` it never merges equal-labelled sibling leaves.
    """

    def walk(node: Tree, rows: np.ndarray) -> Tree:
        if node.is_leaf:
            return node
        right = X[rows, node.feature]
        if not right.any():
            return walk(node.left, rows)
        if right.all():
            return walk(node.right, rows)
        return Tree.split(
            node.feature, walk(node.left, rows[~right]), walk(node.right, rows[right])
        )

    if X.shape[0] == 0:
        return tree
    return walk(tree, np.arange(X.shape[0]))


def class_weight_matrix(rows: RowData) -> np.ndarray:
    """(m, K) matrix with each row's weight in its class column."""
    out = np.zeros((rows.n_rows, rows.n_classes))
    out[np.arange(rows.n_rows), rows.y] = rows.weight
    return out


# ---------------------------------------------------------------------------------------------
# the common life cycle
# ---------------------------------------------------------------------------------------------
class TreeFormulation:
    """Base of BinOCT / RBinOCT / FlowOCT: keeps the parameters and data of the last build.

    Parameters given to the constructor are defaults that ``build`` keywords override.
    """

    name = "tree"

    def __init__(
        self, depth: int | None = None, lam: float | None = None, *, aggregate: bool = True
    ) -> None:
        self.depth = depth
        self.lam = lam
        self.aggregate = aggregate
        self.model_: Model | None = None
        self.rows_: RowData | None = None

    def _configure(
        self, dataset: Any, depth: int | None, lam: float | None, aggregate: bool | None
    ) -> RowData:
        dataset = check_dataset(dataset)
        depth = self.depth if depth is None else depth
        if depth is None:
            raise ValueError(f"{self.name}.build needs depth= (an integer >= 1)")
        depth = check_depth(depth, "depth", allow_none=False)
        if depth < 1:
            raise ValueError(f"depth must be >= 1 for {self.name}, got {depth}")
        lam = self.lam if lam is None else lam
        self.depth = depth
        self.lam = check_lambda(0.0 if lam is None else lam)
        if aggregate is not None:
            self.aggregate = bool(aggregate)
        return row_data(dataset, self.aggregate)

    def _require_built(self) -> Model:
        if self.model_ is None:
            raise RuntimeError(f"call {self.name}.build(dataset, ...) before decode/start")
        return self.model_

    def _rows_for(self, dataset: Any) -> RowData:
        """Row data of ``dataset``; it must be the data the model was built on."""
        dataset = check_dataset(dataset)
        rows = row_data(dataset, self.aggregate)
        built = self.rows_
        assert built is not None
        if (
            rows.n_rows != built.n_rows
            or rows.n_features != built.n_features
            or not (np.array_equal(rows.X, built.X) and np.array_equal(rows.y, built.y))
        ):
            raise ValueError("dataset differs from the one the model was built on")
        return rows

    def _values(self, result_or_values: Any) -> dict[str, np.ndarray]:
        model = self._require_built()
        if hasattr(result_or_values, "has_solution") and hasattr(result_or_values, "values"):
            if not result_or_values.has_solution:
                raise ValueError(
                    f"the result has no solution to decode (status {result_or_values.status!r})"
                )
            values = result_or_values.values
            if not values:
                values = model.values(result_or_values.x)
            return dict(values)
        if isinstance(result_or_values, Mapping):
            return {k: np.asarray(v, dtype=float) for k, v in result_or_values.items()}
        return model.values(np.asarray(result_or_values, dtype=float))

"""The data every pruning module reads: one tree (:class:`TreeData`), the ensemble with its
costs (:class:`EnsembleData`) and the fitted feature schema (:class:`FeatureSchema`).

What the fields mean -- pre-order nodes, training counts, the compact feature-use entries and
the lists built from them on first use -- is written up in :mod:`odtkit.pruning._extract`, which
builds these objects from a fitted ensemble (docs/formulations-search-and-pruning.md §7.1). They
sit apart from the extraction so that the accounting (``_objective``) and the formulations
(``_formulations``) import the types they take, and nothing of the extraction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from odtkit import _native
from odtkit._limits import check_deadline

__all__ = ["EnsembleData", "FeatureSchema", "TreeData"]


@dataclass(frozen=True, eq=False)
class TreeData:
    """One tree in pre-order with its training statistics and its compact feature-use entries.

    The entries ``(example i, feature k, node u)`` are not stored: ``u`` has entries iff it is
    a first-use node (``first_use[u]``), and they are ``{(i, feature[u], u) : i in S_u}`` with
    ``S_u = by_leaf[leaf_start[u] : leaf_start[end[u]]]`` (see the module docstring).
    ``use_example``/``use_feature``/``use_node`` materialize them on first access.
    """

    left: np.ndarray  # int32 (n_nodes,), -1 at leaves (left[h] = h + 1 at internal nodes)
    right: np.ndarray
    parent: np.ndarray  # -1 at the root
    depth: np.ndarray
    end: np.ndarray  # subtree of h = [h, end[h])
    feature: np.ndarray  # global feature index, -1 at leaves
    threshold: np.ndarray  # float64, nan at leaves
    missing_left: np.ndarray  # bool: a missing value (NaN) goes left (tree_.missing_go_to_left)
    counts: np.ndarray  # float64 (n_nodes, n_classes): training class counts of S_h
    dist: np.ndarray  # class distribution (nearest non-empty ancestor for empty nodes)
    pred: np.ndarray  # int64 class codes
    error: np.ndarray  # int64 e_h
    sk_node: np.ndarray  # int32: pre-order id -> node id in the sklearn tree_
    leaf_of: np.ndarray  # int32 (N,): unpruned leaf reached by each training example
    by_leaf: np.ndarray  # int32 (N,): examples sorted by (leaf_of, example index)
    leaf_start: np.ndarray  # int64 (n_nodes + 1,): examples with leaf_of < v
    first_use: np.ndarray  # bool (n_nodes,): internal, no strict ancestor tests feature[u]

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

    @cached_property
    def entry_sizes(self) -> np.ndarray:
        """int64 ``|S_u|`` of each first-use node ``u`` (in ``np.flatnonzero(first_use)``)."""
        u = np.flatnonzero(self.first_use)
        # annotated: numpy's stubs type arithmetic on an ndarray of unknown dtype as Any
        sizes: np.ndarray = self.leaf_start[self.end[u]] - self.leaf_start[u]
        return sizes

    @property
    def n_entries(self) -> int:
        """Number of feature-use entries, without materializing them."""
        return int(self.entry_sizes.sum())

    @cached_property
    def _entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.first_use.any():  # also the root-only stand-in (leaf_of never read)
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        # a counting sort by node (native, O(entries)): each example in index order joins the
        # bucket of every first-use ancestor of its leaf, so buckets come out sorted by i
        example, node = _native.tree_entries(
            np.ascontiguousarray(self.parent, dtype=np.int32),
            np.ascontiguousarray(self.first_use, dtype=bool),
            np.ascontiguousarray(self.leaf_of, dtype=np.int32),
        )
        return example, self.feature[node].astype(np.int64), node

    @property
    def use_example(self) -> np.ndarray:
        """int64 (m,): example of each entry; entries sorted by ``(u, k, i)`` (§7.6)."""
        return self._entries[0]

    @property
    def use_feature(self) -> np.ndarray:
        """int64 (m,): feature of each entry (``feature[use_node]``)."""
        return self._entries[1]

    @property
    def use_node(self) -> np.ndarray:
        """int64 (m,): ``u_{t,k,i}``, the first node on the example's path testing the feature."""
        return self._entries[2]

    def ancestors_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """``(indptr, indices)``: for node ``h`` the ancestors-or-self, root first.

        Built level by level (one numpy step per depth), so cost is O(sum of depths).
        """
        n = self.n_nodes
        cnt = self.depth.astype(np.int64) + 1
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(cnt, out=indptr[1:])
        indices = np.empty(indptr[-1], dtype=np.int64)
        # position of the ancestor at depth d of node h is indptr[h] + d; walk up from h
        cur = np.arange(n, dtype=np.int64)
        d = self.depth.astype(np.int64)
        alive = np.ones(n, dtype=bool)
        while alive.any():
            idx = np.flatnonzero(alive)
            indices[indptr[idx] + d[idx]] = cur[idx]
            cur[idx] = self.parent[cur[idx]]
            d[idx] -= 1
            alive[idx] = d[idx] >= 0
        return indptr, indices


@dataclass(frozen=True)
class FeatureSchema:
    """What a fitted ensemble expects of ``X``, checked as scikit-learn checks it at predict.

    ``names`` is its ``feature_names_in_`` (None when it was fitted on an array); ``nan`` says
    whether its trees route missing values (empty) or why they cannot (``nan_refusal``).
    """

    n_features: int
    names: tuple[str, ...] | None = None
    nan: bool = False
    owner: str = "the ensemble"  # the estimator's class, for messages
    nan_refusal: str = "the ensemble cannot route missing values"


@dataclass(frozen=True, eq=False)
class EnsembleData:
    """All trees of an ensemble on one training set, plus global indexing for the models.

    The global entry and pair indexing (``pair_key``, ``entry_pair``, ``entry_group``,
    ``group_start``) is computed on first access: the cut never needs it.
    """

    trees: list[TreeData]
    y: np.ndarray  # int64 class codes 0..C-1
    classes: np.ndarray
    costs: np.ndarray  # float64 (K,)
    n_features: int
    estimators: list[Any] | None = None  # the fitted sklearn trees (for export)
    #: False for the stand-in a stopped ``prune`` returns with its root-only pruning
    #: (statistics at the roots only, no entries): see ``root_only_data`` below
    complete: bool = True
    #: what X must look like to be routed (width, fitted names, NaN): checked like sklearn
    schema: FeatureSchema | None = None
    node_offset: np.ndarray = field(init=False)  # global z id of tree t's node h = offset[t] + h
    entry_offset: np.ndarray = field(init=False)  # global w^(t) id = entry_offset[t] + j

    def __post_init__(self) -> None:
        sizes = np.array([t.n_nodes for t in self.trees], dtype=np.int64)
        esizes = np.array([t.n_entries for t in self.trees], dtype=np.int64)
        object.__setattr__(self, "node_offset", np.concatenate(([0], np.cumsum(sizes))))
        object.__setattr__(self, "entry_offset", np.concatenate(([0], np.cumsum(esizes))))

    @cached_property
    def _pairs(self) -> tuple[np.ndarray, np.ndarray]:
        n = self.n_samples
        keys = np.concatenate(
            [t.use_feature * n + t.use_example for t in self.trees] or [np.zeros(0, np.int64)]
        )
        # dense marking instead of np.unique: keys < K * N, so this is linear
        present = np.zeros(self.n_features * n, dtype=bool)
        present[keys] = True
        check_deadline()  # between the vectorized steps of a large ensemble (prune's limit)
        rank = np.cumsum(present, dtype=np.int64) - 1
        return np.flatnonzero(present).astype(np.int64), rank[keys]

    @property
    def pair_key(self) -> np.ndarray:
        """int64: sorted unique ``k * N + i`` over all entries."""
        return self._pairs[0]

    @property
    def entry_pair(self) -> np.ndarray:
        """int64: global entry -> index into ``pair_key``."""
        return self._pairs[1]

    @cached_property
    def _groups(self) -> tuple[np.ndarray, np.ndarray]:
        # aggregated feature rows: a tree's entries with equal (u, k) share w^{(t)} in every
        # feasible solution; k = feature[u], so a group is a first-use node with entries
        sizes = np.concatenate(
            [t.entry_sizes for t in self.trees] or [np.zeros(0, np.int64)]
        ).astype(np.int64)
        sizes = sizes[sizes > 0]
        gstart = np.cumsum(sizes) - sizes
        return np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes), gstart

    @property
    def entry_group(self) -> np.ndarray:
        """int64: global entry -> ``(tree, u, k)`` group id."""
        return self._groups[0]

    @property
    def group_start(self) -> np.ndarray:
        """int64: first global entry of each group."""
        return self._groups[1]

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
        return int(sum(int(np.count_nonzero(t.entry_sizes)) for t in self.trees))

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

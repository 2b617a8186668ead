"""The accounting of an ensemble pruning: its training errors, the feature costs it pays, the
IP3 objective (:func:`objective_terms`, :func:`objective_value`), the individual-pruning
objective (:func:`individual_objective`) and the exact per-tree DP (:func:`tree_dp`).

NWS 2016 as written up in docs/formulations-search-and-pruning.md §7.9–7.10.

The pruning formulations (``_formulations``), the model object (``_ensemble``) and the
algorithms all score prunings with these functions; this module sits below all of them in the
package and imports only numpy and the data types (``_data``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from odtkit.pruning._data import EnsembleData, TreeData

__all__ = [
    "acquired_counts",
    "compact_arrays",
    "covered_mask",
    "individual_objective",
    "is_valid_pruning",
    "objective_terms",
    "objective_value",
    "tree_dp",
    "tree_terms",
]


# ------------------------------------------------------------------------------------------
# structure helpers
# ------------------------------------------------------------------------------------------
def _levels(tree: TreeData) -> list[np.ndarray]:
    """Node ids grouped by depth (level d = nodes at depth d, pre-order within the level)."""
    order = np.argsort(tree.depth, kind="stable")
    bounds = np.searchsorted(tree.depth[order], np.arange(tree.max_depth + 2))
    return [order[bounds[d] : bounds[d + 1]] for d in range(tree.max_depth + 1)]


def covered_mask(tree: TreeData, z: np.ndarray) -> np.ndarray:
    """``covered[h]``: some strict ancestor of ``h`` is a leaf of the pruned tree (h is cut off)."""
    covered = np.zeros(tree.n_nodes, dtype=bool)
    for lev in _levels(tree)[1:]:
        p = tree.parent[lev]
        covered[lev] = covered[p] | z[p]
    return covered


def is_valid_pruning(tree: TreeData, z: np.ndarray) -> bool:
    """Sherali's characterisation (IP0 rows): every unpruned leaf has exactly one pruned-leaf
    ancestor-or-self."""
    z = np.asarray(z, dtype=bool)
    if z.shape != (tree.n_nodes,):
        return False
    indptr, indices = tree.ancestors_csr()
    leaves = np.flatnonzero(tree.is_leaf)
    sums = np.add.reduceat(z[indices].astype(np.int64), indptr[:-1])[leaves]
    return bool(np.all(sums == 1))


def tree_dp(
    tree: TreeData, leaf_cost: np.ndarray, entry_price: np.ndarray
) -> tuple[float, np.ndarray]:
    """Exact minimum over valid prunings of ``sum_h leaf_cost[h] z_h + sum_j price[j] w_j``.

    ``w_j`` (entry ``j`` = (example, feature, node u)) is 1 iff ``u`` stays an internal node.
    Bottom-up DP of §7.9: ``best(h) = min(leaf_cost[h], sum_{u_j = h} price[j] + best(l) +
    best(r))``; ties prefer pruning (the first option). Returns ``(value, z)``.
    """
    n = tree.n_nodes
    wsum = np.bincount(tree.use_node, weights=entry_price, minlength=n)
    best = np.asarray(leaf_cost, dtype=np.float64).copy()
    split = np.zeros(n, dtype=bool)
    levels = _levels(tree)
    for lev in reversed(levels):
        inner = lev[tree.left[lev] >= 0]
        if inner.size == 0:
            continue
        alt = wsum[inner] + best[tree.left[inner]] + best[tree.right[inner]]
        take = alt < best[inner]
        split[inner] = take
        best[inner] = np.where(take, alt, best[inner])
    # top-down: a node is a pruned leaf iff it is reached and does not split
    z = np.zeros(n, dtype=bool)
    reached = np.zeros(n, dtype=bool)
    reached[0] = True
    for lev in levels:
        r = lev[reached[lev]]
        z[r] = ~split[r]
        s = r[split[r]]
        reached[tree.left[s]] = True
        reached[tree.right[s]] = True
    return float(best[0]), z


def tree_terms(tree: TreeData, z: np.ndarray) -> tuple[int, np.ndarray]:
    """One tree's share of the accounting: its training errors ``sum_h e_h z_h`` and, per
    feature-use entry, whether the pruning acquires the feature (``w^{(t)}``: the entry's node
    ``u`` stays an internal node, i.e. is neither a pruned leaf nor cut off)."""
    covered = covered_mask(tree, z)
    return int(tree.error[z].sum()), ~(covered[tree.use_node] | z[tree.use_node])


class _Terms(dict[str, Any]):
    """:func:`objective_terms`' answer. ``wt`` and ``w`` are built on first access: they need
    the explicit entry lists and the pair index, which the min cut never builds."""

    def __init__(
        self, values: dict[str, float], data: EnsembleData, z: list[np.ndarray], marks: Any
    ):
        super().__init__(values)
        self._data, self._z, self._marks = data, z, marks

    def __missing__(self, key: str) -> np.ndarray:
        if key == "wt":
            wt = [tree_terms(t, zt)[1] for t, zt in zip(self._data.trees, self._z, strict=True)]
            value = np.concatenate(wt) if wt else np.zeros(0, dtype=bool)
        elif key == "w":
            value = self._marks[self._data.pair_key]
        else:
            raise KeyError(key)
        self[key] = value
        return value


def compact_arrays(tree: TreeData) -> dict[str, np.ndarray]:
    """The tree's entries in compact form: ``by_leaf`` (examples sorted by leaf),
    ``leaf_start`` (``S_u = by_leaf[leaf_start[u]:leaf_start[end[u]]]``) and ``first_use``
    (internal nodes no ancestor of which tests their feature: the only nodes with entries, and
    then exactly ``{(i, feature[u], u) : i in S_u}``)."""
    return {"by_leaf": tree.by_leaf, "leaf_start": tree.leaf_start, "first_use": tree.first_use}


def acquired_counts(data: EnsembleData, z: list[np.ndarray]) -> np.ndarray:
    """int64 (K,): how many training examples acquire each feature under the pruning ``z`` (a
    feature is acquired for example ``i`` when some tree keeps, as a split, a node testing it on
    ``i``'s path). Per tree, each node's set of acquired features is a bit mask (its parent's,
    plus the parent's feature if the parent is a kept split), so every example needs one gather
    of its leaf's mask per tree: never the per-entry lists."""
    N, K = data.n_samples, data.n_features
    words = (K + 63) // 64
    acquired = np.zeros((N, words), dtype=np.uint64)
    one = np.uint64(1)
    for tree, zt in zip(data.trees, z, strict=True):
        kept = (tree.left >= 0) & ~covered_mask(tree, zt) & ~zt
        mask = np.zeros((tree.n_nodes, words), dtype=np.uint64)
        for level in _levels(tree)[1:]:  # parents come a level earlier
            p = tree.parent[level]
            mask[level] = mask[p]
            take = kept[p]
            f = tree.feature[p[take]].astype(np.int64)
            mask[level[take], f // 64] |= one << (f % 64).astype(np.uint64)
        acquired |= mask[tree.leaf_of]
    counts = np.zeros(words * 64, dtype=np.int64)
    for start in range(0, N, 65536):  # bits -> bools a slice at a time (N x 64 words bytes)
        block = acquired[start : start + 65536]
        bits = np.unpackbits(block.view(np.uint8), axis=1, bitorder="little")
        counts += bits.sum(axis=0, dtype=np.int64)
    return counts[:K]


def objective_value(data: EnsembleData, z: list[np.ndarray], *, lam: float) -> dict[str, float]:
    """``error_term``, ``cost_term`` and ``objective`` of a pruning, equal to
    :func:`objective_terms`' to the last bit but computed another way (per-tree bit masks of
    acquired features, :func:`acquired_counts`, instead of marking entry slices), so the two
    check each other; what the cut and :class:`PrunedEnsemble` use."""
    N, T = data.n_samples, data.n_trees
    err = sum(int(tree.error[zt].sum()) for tree, zt in zip(data.trees, z, strict=True))
    # the costs of the acquired pairs in (feature, example) order, summed as objective_terms
    # sums them (the same values in the same order give the same float)
    cost = float(np.repeat(data.costs, acquired_counts(data, z)).sum()) / N
    error_term = err / (N * T)
    return {"error_term": error_term, "cost_term": cost, "objective": error_term + lam * cost}


def objective_terms(
    data: EnsembleData, z: list[np.ndarray], *, lam: float
) -> dict[str, float | np.ndarray]:
    """IP3 objective terms of a pruning on the training data (the model's accounting).

    Returns ``error_term`` = average per-tree training error, ``cost_term`` = average feature
    cost per example (features shared across trees paid once), ``objective`` =
    ``error_term + lam * cost_term``, plus per-tree ``wt`` (the implied ``w^{(t)}`` values,
    concatenated over trees) and ``w`` (per (feature, example) pair), both computed when
    first read.

    The cost is read from the compact entries (see :mod:`odtkit.pruning._extract`): a tree
    acquires feature ``k`` for example ``i`` iff a first-use node ``u`` testing ``k`` stays
    internal and ``i`` is in ``S_u``, one slice of ``by_leaf``. The acquired pairs are marked
    in one dense ``K x N`` mask and summed in pair order, as the pair index would.
    """
    N, T = data.n_samples, data.n_trees
    err = 0
    marks = np.zeros(data.n_features * N, dtype=bool)
    for tree, zt in zip(data.trees, z, strict=True):
        zt = np.asarray(zt, dtype=bool)
        err += int(tree.error[zt].sum())
        u = np.flatnonzero(tree.first_use & ~(covered_mask(tree, zt) | zt))
        lo, sizes = tree.leaf_start[u], tree.leaf_start[tree.end[u]] - tree.leaf_start[u]
        total = int(sizes.sum())
        if total == 0:
            continue
        pos = np.arange(total, dtype=np.int64) + np.repeat(lo - (np.cumsum(sizes) - sizes), sizes)
        marks[np.repeat(tree.feature[u].astype(np.int64) * N, sizes) + tree.by_leaf[pos]] = True
    cost = float(data.costs[np.flatnonzero(marks) // N].sum()) / N
    error_term = err / (N * T)
    values = {"error_term": error_term, "cost_term": cost, "objective": error_term + lam * cost}
    return _Terms(values, data, list(z), marks)


def individual_objective(
    data: EnsembleData, z: list[np.ndarray], lam: float, trees: list[int] | None = None
) -> float:
    """Individual-pruning objective (IP2): features paid once per *tree*, not per ensemble.

    ``z`` holds the masks of ``trees`` (default all). For all T trees this is
    ``1/(NT) sum_t e'z_t + lam (1/N) sum_t (cost of the features tree t acquires)``, the
    per-tree problems with ``lam_ind = T lam`` averaged; for one tree ``e'z/N + lam cost/N``.
    """
    trees = list(range(data.n_trees)) if trees is None else list(trees)
    errors = cost = 0.0
    for t, zt in zip(trees, z, strict=True):
        tree = data.trees[t]
        e, active = tree_terms(tree, np.asarray(zt, dtype=bool))
        errors += e
        cost += float(data.costs[tree.use_feature[active]].sum())
    N = data.n_samples
    return errors / (N * len(trees)) + lam * cost / N

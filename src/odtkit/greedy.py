"""Greedy baseline: Gini-grown tree pruned bottom-up with the exact objective (search spec §3.2).

It is the first incumbent of every solver, so it must be deterministic and never worse than a
single leaf. Growing and pruning happen in one recursion: a subtree is kept only if its leaves
cost strictly less (in count units) than collapsing it into one leaf, which is cost-complexity
pruning with parameter ``lam`` (IP0 of §7.2 solved by dynamic programming).
"""

from __future__ import annotations

import numpy as np

from odtkit._validation import check_dataset, check_depth, check_lambda
from odtkit.datasets import Dataset
from odtkit.tree import Tree, majority_label


def _gini(class_weights: np.ndarray) -> np.ndarray:
    """Gini impurity ``1 - sum pi_k^2`` along the last axis (0 for an empty set)."""
    total = class_weights.sum(axis=-1)
    safe = np.where(total > 0, total, 1.0)
    return 1.0 - ((class_weights / safe[..., None]) ** 2).sum(axis=-1)


def greedy_tree(dataset: Dataset, *, lam: float, max_depth: int | None = None) -> Tree:
    """CART-style tree grown by Gini reduction and pruned with ``misclassified/n + lam*leaves``.

    Parameters
    ----------
    dataset : Dataset
    lam : float
        Per-leaf penalty (>= 0).
    max_depth : int or None
        Maximum number of splits on a path; None = unlimited.

    Returns
    -------
    Tree
        Deterministic (ties between features go to the smallest index); its objective is at most
        that of the best single leaf.
    """
    dataset = check_dataset(dataset)
    lam = check_lambda(lam)
    max_depth = check_depth(max_depth)
    limit = dataset.n_features if max_depth is None else min(max_depth, dataset.n_features)
    onehot = np.zeros((dataset.n_samples, dataset.n_classes))
    onehot[np.arange(dataset.n_samples), dataset.y] = dataset.weights
    X = dataset.X
    penalty = lam * dataset.total_weight
    tol = 1e-9 * max(1.0, dataset.total_weight)

    def grow(rows: np.ndarray, used: np.ndarray, depth: int) -> tuple[Tree, float]:
        counts = onehot[rows].sum(axis=0)
        label = majority_label(counts)
        leaf_value = float(counts.sum() - counts[label]) + penalty
        leaf = Tree.leaf(label)
        if counts.sum() - counts[label] <= 0 or depth == limit:
            return leaf, leaf_value
        sub = X[rows]
        right_counts = sub.T.astype(float) @ onehot[rows]  # (p, K) class weights where x_f = 1
        left_counts = counts[None, :] - right_counts
        n_right = right_counts.sum(axis=1)
        n_left = left_counts.sum(axis=1)
        valid = (~used) & (n_right > 0) & (n_left > 0)
        if not valid.any():
            return leaf, leaf_value
        total = counts.sum()
        weighted_child = (n_left * _gini(left_counts) + n_right * _gini(right_counts)) / total
        reduction = np.where(valid, _gini(counts) - weighted_child, -np.inf)
        feature = int(np.argmax(reduction))  # first maximum = smallest index on ties
        goes_right = sub[:, feature]
        now_used = used.copy()
        now_used[feature] = True
        left_tree, left_value = grow(rows[~goes_right], now_used, depth + 1)
        right_tree, right_value = grow(rows[goes_right], now_used, depth + 1)
        if left_value + right_value < leaf_value - tol:
            return Tree.split(feature, left_tree, right_tree), left_value + right_value
        return leaf, leaf_value

    tree, _ = grow(np.arange(dataset.n_samples), np.zeros(dataset.n_features, dtype=bool), 0)
    return tree

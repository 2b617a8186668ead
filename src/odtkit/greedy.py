"""Greedy baseline: Gini-grown tree pruned bottom-up with the exact objective.

Specified in docs/formulations-search-and-pruning.md §3.2 (Gini growth as in CART, Breiman et
al. 1984).

It is the first incumbent of every solver, so it must be deterministic and never worse than a
single leaf. Growing and pruning happen in one recursion: a subtree is kept only if its leaves
cost strictly less (in count units) than collapsing it into one leaf, which is cost-complexity
pruning with parameter ``lam`` (IP0 of §7.2 solved by dynamic programming).

The tree is grown natively (``odtkit._native.greedy_tree``, the same function the native
searches start from): bitset popcounts over the deduplicated points instead of numpy passes
over the rows. It sums the Gini terms in numpy's order, so it returns the tree of the former
numpy implementation (kept as the reference in tests/test_oracle_and_greedy.py); only weights
with fractional parts, whose class sums round differently, can break a near-tie otherwise.
"""

from __future__ import annotations

from odtkit import _native
from odtkit._validation import check_depth, check_lambda
from odtkit.core._problem import decode_tree, problem_from_arrays
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset
from odtkit.tree import Tree

__all__ = ["greedy_tree"]


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
    max_depth = check_depth(max_depth, n_features=dataset.n_features)
    problem = problem_from_arrays(dataset.X, dataset.y, dataset.weights, int(dataset.n_classes))
    return decode_tree(_native.greedy_tree(problem, lam, -1 if max_depth is None else max_depth))

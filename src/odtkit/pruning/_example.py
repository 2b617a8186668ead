"""The worked example of docs/formulations-search-and-pruning.md §8 as real scikit-learn trees.

Two trees over three binary features with costs ``(1, 1, 2)`` and two training examples:
tree 1 tests x1 at the root (left leaf, right: x2), tree 2 tests x3 at the root (left leaf,
right: x2). The trees are *fitted* (so they are ordinary ``DecisionTreeClassifier`` objects)
on small designed data sets whose greedy Gini splits are unique, then pruned on the two
examples of §8.1.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _fit(root: int, second: int, constant: int) -> Any:  # a scikit-learn tree (untyped)
    from sklearn.tree import DecisionTreeClassifier

    # (root, second) -> label with multiplicities that make the greedy choice unique:
    # root=0 -> class 0 (4 rows), root=1, second=0 -> class 1 (2 rows), root=1, second=1 -> 0 (1)
    rows = [(0, 0, 0)] * 2 + [(0, 1, 0)] * 2 + [(1, 0, 1)] * 2 + [(1, 1, 0)]
    X = np.zeros((len(rows), 3))
    y = np.zeros(len(rows), dtype=np.int64)
    for r, (a, b, lab) in enumerate(rows):
        X[r, root] = a
        X[r, second] = b
        X[r, constant] = 1.0
        y[r] = lab
    return DecisionTreeClassifier(random_state=0).fit(X, y)


def worked_example() -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray]:
    """``(trees, X, y, costs)`` of §8: prune ``trees`` on ``(X, y)`` with ``costs``.

    Expected (tests): λ = 0.1 keeps both trees (objective 0.4); λ = 0.2 prunes both to the root
    (0.5); individual pruning at λ = 0.1 keeps only tree 1.
    """
    trees = [_fit(root=0, second=1, constant=2), _fit(root=2, second=1, constant=0)]
    X = np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    y = np.array([1, 0])
    costs = np.array([1.0, 1.0, 2.0])
    return trees, X, y, costs

"""Pruned ensembles: the model object, test-time evaluation and the brute-force oracle.

NWS 2016 as written up in docs/formulations-search-and-pruning.md §7.9–7.10. The accounting
(the tree DP, objective terms) lives in ``_objective``, below this module and the pruning
formulations, and is re-exported here.

A pruning of tree ``t`` is a bool mask ``z[t]`` over its pre-order nodes (``z_h = 1`` iff ``h``
is a leaf of the pruned tree). Everything here is vectorized per depth level, so evaluating a
pruning costs a handful of numpy passes per tree.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cached_property
from itertools import product
from typing import Any

import numpy as np

from odtkit.pruning._data import EnsembleData, TreeData
from odtkit.pruning._extract import as_numeric_matrix, encode_y, route
from odtkit.pruning._objective import (
    acquired_counts,
    compact_arrays,
    covered_mask,
    individual_objective,
    is_valid_pruning,
    objective_terms,
    objective_value,
    tree_dp,
    tree_terms,
)

__all__ = [
    "PrunedEnsemble",
    "tree_dp",
    "covered_mask",
    "individual_objective",
    "objective_terms",
    "objective_value",
    "acquired_counts",
    "compact_arrays",
    "tree_terms",
    "is_valid_pruning",
    "enumerate_prunings",
    "brute_force_prune",
]


# ------------------------------------------------------------------------------------------
# oracles
# ------------------------------------------------------------------------------------------
def enumerate_prunings(tree: TreeData, limit: int = 100_000) -> list[np.ndarray]:
    """All valid prunings of ``tree`` (bool masks); raises if there are more than ``limit``."""

    def rec(h: int) -> list[list[int]]:
        if tree.left[h] < 0:
            return [[h]]
        out = [[h]]
        lefts = rec(int(tree.left[h]))
        rights = rec(int(tree.right[h]))
        if (len(lefts) * len(rights)) > limit:
            raise ValueError(f"tree has more than {limit} prunings; enumeration is for tiny trees")
        out += [a + b for a in lefts for b in rights]
        return out

    masks = []
    for leaves in rec(0):
        m = np.zeros(tree.n_nodes, dtype=bool)
        m[leaves] = True
        masks.append(m)
    return masks


def brute_force_prune(
    data: EnsembleData,
    *,
    lam: float,
    budget: float | None = None,
    limit: int = 200_000,
) -> tuple[float, list[np.ndarray]]:
    """Test oracle: best pruning by enumerating all combinations of per-tree prunings.

    With ``budget`` the objective is the error term subject to ``cost_term <= budget``
    (returns ``inf`` and ``[]`` if nothing fits).
    """
    per_tree = [enumerate_prunings(t) for t in data.trees]
    total = int(np.prod([len(p) for p in per_tree], dtype=np.float64))
    if total > limit:
        raise ValueError(f"{total} combinations exceed limit={limit}")
    best, arg = np.inf, []
    for combo in product(*per_tree):
        z = list(combo)
        terms = objective_terms(data, z, lam=lam)
        if budget is None:
            val = float(terms["objective"])
        elif terms["cost_term"] <= budget + 1e-12:
            val = float(terms["error_term"])
        else:
            continue
        if val < best - 1e-12:
            best, arg = val, [m.copy() for m in z]
    return best, arg


# ------------------------------------------------------------------------------------------
# the user object
# ------------------------------------------------------------------------------------------
@dataclass(eq=False)
class PrunedEnsemble:
    """A pruned tree ensemble: the model object of every pruning :class:`~odtkit.results.Result`.

    How it was found (status, bounds, solver, timings, fractionality) is the Result's; this
    object is the pruning itself with its objective terms and test-time evaluation.

    Parameters
    ----------
    data : EnsembleData
        The extracted trees and the training data the pruning is measured on.
    leaves : list of ndarray of bool
        Per tree, the pruned-leaf mask over pre-order nodes (``z^{(t)}``).
    lam : float
        The feature-cost weight λ of :attr:`objective` (0 for a budgeted pruning, whose
        objective is the error term).

    Attributes
    ----------
    objective : float
        IP3 objective ``error_term + lam * cost_term`` of this pruning on the training data,
        by :func:`objective_terms` (the one accounting every solver's answer is checked with).
    error_term, cost_term : float
        Average per-tree training error and average training feature cost per example.
    """

    data: EnsembleData
    leaves: list[np.ndarray]
    lam: float

    # the terms are computed on first use: a solver's Result already holds the verified
    # objective, so wrapping its decoded leaves costs nothing until someone asks
    @cached_property
    def _terms(self) -> tuple[float, float, float]:
        terms = objective_value(self.data, self.leaves, lam=self.lam)
        return float(terms["error_term"]), float(terms["cost_term"]), float(terms["objective"])

    @property
    def error_term(self) -> float:
        return self._terms[0]

    @property
    def cost_term(self) -> float:
        return self._terms[1]

    @property
    def objective(self) -> float:
        return self._terms[2]

    # ---------------------------------------------------------------- structure
    @property
    def n_trees(self) -> int:
        return self.data.n_trees

    @property
    def classes_(self) -> np.ndarray:
        return self.data.classes

    @property
    def leaves_per_tree(self) -> np.ndarray:
        """Leaves of each pruned tree."""
        return np.array([int(z.sum()) for z in self.leaves])

    @property
    def n_leaves(self) -> int:
        """Leaves of the pruned ensemble (all trees)."""
        return int(self.leaves_per_tree.sum())

    @property
    def n_leaves_unpruned(self) -> int:
        """Leaves of the ensemble before pruning."""
        return int(sum(t.n_leaves for t in self.data.trees))

    def __repr__(self) -> str:
        return (
            f"PrunedEnsemble(T={self.n_trees}, leaves={self.n_leaves}/{self.n_leaves_unpruned}, "
            f"lam={self.lam:.6g}, objective={self.objective:.6g}, "
            f"error_term={self.error_term:.4g}, cost_term={self.cost_term:.4g})"
        )

    # ---------------------------------------------------------------- routing
    def _X(self, X: Any) -> np.ndarray:
        # checked like the ensemble's own predict: its feature names, NaN routed as its trees do
        schema = self.data.schema
        return as_numeric_matrix(X, self.data.n_features if schema is None else schema)

    def _paths(self, tree: TreeData, z: np.ndarray, X32: np.ndarray) -> np.ndarray:
        """Paths of the rows of ``X32`` through ``tree`` pruned to the leaves ``z``."""
        return route(tree.left, tree.right, tree.feature, tree.threshold, X32, z, tree.missing_left)

    def apply(self, X: Any) -> np.ndarray:
        """Pre-order id of the pruned leaf each row reaches in each tree, shape (n, T)."""
        X32 = self._X(X)
        out = np.empty((X32.shape[0], self.n_trees), dtype=np.int64)
        for t, (tree, z) in enumerate(zip(self.data.trees, self.leaves, strict=True)):
            paths = self._paths(tree, z, X32)
            out[:, t] = paths[np.arange(X32.shape[0]), (paths >= 0).sum(axis=1) - 1]
        return out

    def predict_proba(self, X: Any) -> np.ndarray:
        """Average over trees of the training class distribution of the reached leaf."""
        leaves = self.apply(X)
        proba = np.zeros((leaves.shape[0], self.data.n_classes))
        for t, tree in enumerate(self.data.trees):
            proba += tree.dist[leaves[:, t]]
        # annotated: numpy's stubs type arithmetic on an ndarray of unknown dtype as Any
        mean: np.ndarray = proba / self.n_trees
        return mean

    def predict(self, X: Any, vote: str = "soft") -> np.ndarray:
        """Predicted labels: ``vote="soft"`` argmax of :meth:`predict_proba` (sklearn forests'
        rule), ``"hard"`` majority of the leaves' ``Pred_h`` (BudgetRF); ties -> smallest class."""
        labels: np.ndarray = self.classes_[self._predict_codes(X, vote)]
        return labels

    def _predict_codes(self, X: Any, vote: str) -> np.ndarray:
        codes: np.ndarray  # numpy's stubs type argmax along an axis as Any
        if vote == "soft":
            codes = np.argmax(self.predict_proba(X), axis=1)
            return codes
        if vote == "hard":
            leaves = self.apply(X)
            votes = np.zeros((leaves.shape[0], self.data.n_classes), dtype=np.int64)
            rows = np.arange(leaves.shape[0])
            for t, tree in enumerate(self.data.trees):
                np.add.at(votes, (rows, tree.pred[leaves[:, t]]), 1)
            codes = np.argmax(votes, axis=1)
            return codes
        raise ValueError(f"vote must be 'soft' or 'hard', got {vote!r}")

    def error(self, X: Any, y: Any, vote: str = "soft") -> float:
        """Misclassification rate of the ensemble's prediction (see :meth:`predict`)."""
        codes = encode_y(y, self.classes_, np.asarray(X).shape[0])
        return float(np.mean(self._predict_codes(X, vote) != codes))

    def error_term_on(self, X: Any, y: Any) -> float:
        """Average per-tree error (IP3's surrogate) on ``(X, y)``; equals ``error_term`` on the
        training data."""
        codes = encode_y(y, self.classes_, np.asarray(X).shape[0])
        leaves = self.apply(X)
        wrong = 0
        for t, tree in enumerate(self.data.trees):
            wrong += int(np.count_nonzero(tree.pred[leaves[:, t]] != codes))
        n_rows: int = codes.shape[0]
        return wrong / (n_rows * self.n_trees)

    def features_used(self, X: Any) -> np.ndarray:
        """Bool (n, K): feature ``k`` is acquired for row ``i`` by some tree (tested strictly above
        the pruned leaf the row reaches)."""
        X32 = self._X(X)
        n = X32.shape[0]
        used = np.zeros((n, self.data.n_features), dtype=bool)
        rows = np.arange(n)
        for tree, z in zip(self.data.trees, self.leaves, strict=True):
            paths = self._paths(tree, z, X32)
            for d in range(paths.shape[1] - 1):
                # a node is passed "strictly above" the leaf iff the path continues below it
                nxt = paths[:, d + 1] >= 0
                used[rows[nxt], tree.feature[paths[nxt, d]]] = True
        return used

    def feature_cost(self, X: Any) -> np.ndarray:
        """Per-row test-time feature cost: unique features acquired across trees, costed."""
        cost: np.ndarray = self.features_used(X).astype(np.float64) @ self.data.costs
        return cost

    def evaluate(self, X: Any, y: Any) -> dict[str, float]:
        """Soft/hard error, surrogate error term, and mean feature cost on ``(X, y)``."""
        return {
            "error_soft": self.error(X, y, "soft"),
            "error_hard": self.error(X, y, "hard"),
            "error_term": self.error_term_on(X, y),
            "feature_cost": float(self.feature_cost(X).mean()),
        }

    def summary(self) -> dict[str, Any]:
        """One row for tables: λ, objective terms and leaf counts."""
        return {
            "lam": self.lam,
            "objective": self.objective,
            "error_term": self.error_term,
            "cost_term": self.cost_term,
            "n_leaves": self.n_leaves,
            "n_leaves_unpruned": self.n_leaves_unpruned,
        }

    # ---------------------------------------------------------------- export
    def score(self, X: Any, y: Any, vote: str = "soft") -> float:
        """Accuracy on ``(X, y)`` (scikit-learn's classifier ``score``)."""
        return 1.0 - self.error(X, y, vote=vote)

    def to_sklearn(self, ensemble: Any = None) -> Any:
        """Pruned copies of the fitted sklearn trees; with ``ensemble``, a pruned copy of it.

        ``ensemble`` is the fitted forest / bagging classifier that was pruned: the copy is
        that estimator with its ``estimators_`` replaced by the pruned trees, so its
        ``predict_proba`` (the average of the trees') equals this ensemble's soft vote and it
        can be pickled, scored and deployed like the original. Without it, the list of
        pruned trees.

        Each copy's ``tree_`` has the pruned nodes turned into leaves whose ``value`` is the
        training class distribution of ``S_h`` (the data passed to ``prune``), so
        ``tree.predict_proba(X[:, features])`` equals this ensemble's per-tree distribution.
        Unreachable nodes stay in the arrays (sklearn cannot drop nodes) but are never visited.
        For bagging with feature subsets, feed each tree its columns
        (``ensemble.estimators_features_[t]``).
        """
        if self.data.estimators is None:
            raise ValueError("the original sklearn estimators are not available")
        out = []
        for tree, z, est in zip(self.data.trees, self.leaves, self.data.estimators, strict=True):
            new = copy.deepcopy(est)
            state = new.tree_.__getstate__()
            nodes = state["nodes"].copy()
            values = state["values"].copy()
            sk = tree.sk_node
            cut = sk[z & (tree.left >= 0)]
            nodes["left_child"][cut] = -1
            nodes["right_child"][cut] = -1
            nodes["feature"][cut] = -2
            nodes["threshold"][cut] = -2.0
            est_classes = np.asarray(est.classes_)
            if values.shape[2] != self.data.n_classes:
                # the tree saw fewer classes (bootstrap): map its class codes to ensemble codes
                cols = est_classes.astype(np.int64)
                values[sk, 0, :] = tree.dist[:, cols]
            else:
                values[sk, 0, :] = tree.dist
            state["nodes"] = nodes
            state["values"] = values
            new.tree_.__setstate__(state)
            out.append(new)
        if ensemble is None:
            return out
        if len(getattr(ensemble, "estimators_", ())) != len(out):
            raise ValueError(
                f"ensemble must be the fitted ensemble that was pruned ({len(out)} trees), got "
                f"{type(ensemble).__name__}"
            )
        pruned = copy.deepcopy(ensemble)
        pruned.estimators_ = out
        return pruned


def unpruned(data: EnsembleData) -> list[np.ndarray]:
    """The identity pruning (all original leaves)."""
    return [t.is_leaf.copy() for t in data.trees]

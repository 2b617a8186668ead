"""Tree: the currency every solver returns and every metric reads.

Conventions (one place, used everywhere):

* depth = number of splits on the longest root-to-leaf path; a single leaf has depth 0;
* at a node testing feature ``j`` a sample with ``x_j = 0`` goes **left**, ``x_j = 1`` **right**;
* leaf labels are class codes ``0..K-1`` (``Dataset.classes`` maps them back);
* a leaf's majority label breaks ties towards the **smallest** class code, and a leaf that
  receives no training sample predicts class 0 (see :func:`majority_label`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Tree", "majority_label"]


def majority_label(class_weights: np.ndarray) -> int:
    """The predicted class of a leaf from its per-class (weighted) counts.

    Ties go to the smallest class code; an empty leaf (all zeros) predicts 0. Ties never change
    an objective value, only which of several optimal trees is returned.
    """
    return int(np.argmax(class_weights))


@dataclass(frozen=True)
class Tree:
    """A binary decision tree over binary features (immutable, hashable, compared structurally).

    A leaf has ``label`` set and ``feature is None``; an internal node has ``feature``, ``left``
    (samples with ``x[feature] == 0``) and ``right`` (``x[feature] == 1``).
    Build trees with :meth:`leaf` and :meth:`split`.
    """

    feature: int | None = None
    left: Tree | None = None
    right: Tree | None = None
    label: int | None = None

    def __post_init__(self) -> None:
        if self.feature is None:
            if self.label is None or self.left is not None or self.right is not None:
                raise ValueError("a leaf needs a label and no children")
        elif self.left is None or self.right is None or self.label is not None:
            raise ValueError("an internal node needs two children and no label")

    # construction -------------------------------------------------------------------------
    @staticmethod
    def leaf(label: int) -> Tree:
        """A leaf predicting class code ``label``."""
        if isinstance(label, bool) or not isinstance(label, (int, np.integer)) or label < 0:
            raise TypeError(f"label must be a non-negative class code, got {label!r}")
        return Tree(label=int(label))

    @staticmethod
    def split(feature: int, left: Tree, right: Tree) -> Tree:
        """An internal node testing ``feature``: ``x = 0`` goes ``left``, ``x = 1`` ``right``."""
        if isinstance(feature, bool) or not isinstance(feature, (int, np.integer)) or feature < 0:
            raise TypeError(f"feature must be a non-negative feature index, got {feature!r}")
        if not isinstance(left, Tree) or not isinstance(right, Tree):
            raise TypeError("left and right must be Tree instances")
        return Tree(feature=int(feature), left=left, right=right)

    # structure ------------------------------------------------------------------------------
    @property
    def is_leaf(self) -> bool:
        return self.feature is None

    # The fields are optional because a leaf has no children and a split no label; these two
    # take a node apart once, typed, instead of every walker re-checking ``None``.
    def as_split(self) -> tuple[int, Tree, Tree]:
        """``(feature, left, right)`` of an internal node, the inverse of :meth:`split`.

        Raises ValueError on a leaf.
        """
        if self.feature is None or self.left is None or self.right is None:
            raise ValueError("a leaf has no split")
        return self.feature, self.left, self.right

    def as_leaf(self) -> int:
        """The class code a leaf predicts, the inverse of :meth:`leaf`.

        Raises ValueError on an internal node.
        """
        if self.label is None:
            raise ValueError("an internal node has no label")
        return self.label

    @property
    def depth(self) -> int:
        """Number of splits on the longest root-to-leaf path (a leaf has depth 0)."""
        left, right = self.left, self.right
        if left is None or right is None:  # a leaf (checked as the fields, for speed)
            return 0
        return 1 + max(left.depth, right.depth)

    @property
    def n_leaves(self) -> int:
        """Number of leaves; every leaf counts, also one that receives no sample."""
        left, right = self.left, self.right
        if left is None or right is None:
            return 1
        return left.n_leaves + right.n_leaves

    @property
    def n_internal(self) -> int:
        return self.n_leaves - 1

    def leaves(self) -> list[tuple[tuple[tuple[int, int], ...], int]]:
        """Every leaf in pre-order as ``(path, label)``, path = ``((feature, value), ...)``."""
        out: list[tuple[tuple[tuple[int, int], ...], int]] = []

        def walk(node: Tree, path: tuple[tuple[int, int], ...]) -> None:
            feature, left, right = node.feature, node.left, node.right
            if feature is None or left is None or right is None:
                out.append((path, node.as_leaf()))
            else:
                walk(left, (*path, (feature, 0)))
                walk(right, (*path, (feature, 1)))

        walk(self, ())
        return out

    def features_used(self) -> set[int]:
        feature, left, right = self.feature, self.left, self.right
        if feature is None or left is None or right is None:
            return set()
        return {feature} | left.features_used() | right.features_used()

    # prediction ---------------------------------------------------------------------------
    def node_rows(self, X: np.ndarray) -> list[np.ndarray]:
        """For every node in pre-order (root, left subtree, right subtree), the indices of the
        rows of ``X`` that reach it."""
        X = _as_feature_matrix(X, self)
        out: list[np.ndarray] = []

        def route(node: Tree, rows: np.ndarray) -> None:
            out.append(rows)
            feature, left, right = node.feature, node.left, node.right
            if feature is None or left is None or right is None:
                return
            goes_right = X[rows, feature]
            route(left, rows[~goes_right])
            route(right, rows[goes_right])

        route(self, np.arange(X.shape[0]))
        return out

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Index (pre-order among the leaves) of the leaf each row reaches."""
        X = _as_feature_matrix(X, self)
        out = np.empty(X.shape[0], dtype=np.int64)
        nodes = zip(self.node_rows(X), self._preorder(), strict=True)
        for leaf, rows in enumerate(rows for rows, node in nodes if node.is_leaf):
            out[rows] = leaf
        return out

    def _preorder(self) -> list[Tree]:
        left, right = self.left, self.right
        if left is None or right is None:
            return [self]
        return [self, *left._preorder(), *right._preorder()]

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted class codes (int64) for the rows of binary matrix ``X``."""
        labels = np.array([label for _, label in self.leaves()], dtype=np.int64)
        predicted: np.ndarray = labels[self.apply(X)]  # numpy types fancy indexing as Any
        return predicted

    # canonical form -------------------------------------------------------------------------
    def canonical(self, X: np.ndarray | None = None, *, merge: bool = True) -> Tree:
        """Prune-empty then merge, in one post-order pass (docs/formulations-trees.md §1.4).

        With training rows ``X`` a node one of whose sides receives no row is replaced by its
        other side; without ``X`` only merging happens. A node whose two (processed) children are
        leaves with equal labels becomes that leaf. Predictions on ``X`` never change, depth never
        grows and the number of leaves never grows. ``merge=False`` keeps equal sibling leaves
        (a constraint may need their split: :class:`odtkit.constraints.RequireFeatures`).
        """
        Xb = None if X is None else _as_feature_matrix(X, self)

        def walk(node: Tree, rows: np.ndarray | None) -> Tree:
            if node.is_leaf:
                return node
            feature, node_left, node_right = node.as_split()
            if rows is None or Xb is None:
                left, right = walk(node_left, None), walk(node_right, None)
            else:
                goes_right = Xb[rows, feature]
                left_rows, right_rows = rows[~goes_right], rows[goes_right]
                if right_rows.size == 0:
                    return walk(node_left, left_rows)
                if left_rows.size == 0:
                    return walk(node_right, right_rows)
                left, right = walk(node_left, left_rows), walk(node_right, right_rows)
            if merge and left.is_leaf and right.is_leaf and left.label == right.label:
                return left
            return Tree(feature=feature, left=left, right=right)

        return walk(self, None if Xb is None else np.arange(Xb.shape[0]))

    # serialisation --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe nested dict: ``{"label": k}`` or ``{"feature": j, "left": ., "right": .}``."""
        feature, left, right = self.feature, self.left, self.right
        if feature is None or left is None or right is None:
            return {"label": int(self.as_leaf())}
        return {"feature": int(feature), "left": left.to_dict(), "right": right.to_dict()}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Tree:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(data, dict):
            raise TypeError(f"data must be a dict, got {type(data).__name__}")
        if "label" in data:
            return Tree.leaf(data["label"])
        try:
            return Tree.split(
                data["feature"], Tree.from_dict(data["left"]), Tree.from_dict(data["right"])
            )
        except KeyError as exc:
            raise ValueError(f"tree dict node lacks key {exc.args[0]!r}: {data!r}") from exc

    def to_text(self, feature_names: Any = None, class_names: Any = None) -> str:
        """``export_text``-style listing (``age <= 40.5`` / ``age > 40.5``), ``x = 0`` first.

        Parameters
        ----------
        feature_names : sequence of str or FeatureSpec, fitted Binarizer, or None
            See :func:`odtkit.render.tree_to_text`; a Binarizer's feature descriptions print
            thresholds and categories as tests on the raw columns.
        class_names : sequence, optional
            The class values the leaf labels index (e.g. ``dataset.classes``).
        """
        from odtkit.render import tree_to_text

        return tree_to_text(self, feature_names, class_names)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        if self.is_leaf:
            return f"Leaf({self.label})"
        return f"Split({self.feature}, {self.left!r}, {self.right!r})"

    @staticmethod
    def from_sklearn(estimator: Any, classes: Any = None) -> Tree:
        """Convert a fitted ``DecisionTreeClassifier`` trained on 0/1 features.

        Every threshold must lie strictly between 0 and 1 (so ``x <= t`` means ``x = 0``).

        Parameters
        ----------
        estimator : fitted sklearn.tree.DecisionTreeClassifier
        classes : array-like, optional
            The class values the leaf labels index (e.g. ``dataset.classes``): a leaf predicting
            ``estimator.classes_[k]`` gets the position of that value in ``classes``. By default
            the estimator is assumed to be fitted on class codes (``dataset.y``), so non-negative
            integer ``classes_`` are used as the labels themselves; other ``classes_`` become their
            index. Ties in a leaf go to the smallest class, as in scikit-learn.
        """
        tree_ = getattr(estimator, "tree_", None)
        if tree_ is None:
            raise ValueError("estimator must be a fitted scikit-learn DecisionTreeClassifier")
        if getattr(estimator, "n_outputs_", 1) != 1:
            raise ValueError("estimator must have a single output")
        fitted_classes = np.asarray(estimator.classes_)
        if classes is not None:
            lookup = {value: pos for pos, value in enumerate(np.asarray(classes).tolist())}
            missing = [c for c in fitted_classes.tolist() if c not in lookup]
            if missing:
                raise ValueError(f"classes lacks the estimator's classes {missing}")
            label_of = [lookup[c] for c in fitted_classes.tolist()]
        elif fitted_classes.dtype.kind in "iu" and (fitted_classes >= 0).all():
            label_of = [int(c) for c in fitted_classes]
        else:
            label_of = list(range(len(fitted_classes)))
        left, right = tree_.children_left, tree_.children_right
        feature, threshold, value = tree_.feature, tree_.threshold, tree_.value

        def build(node: int) -> Tree:
            if left[node] == -1:
                return Tree.leaf(label_of[majority_label(value[node][0])])
            t = threshold[node]
            if not 0.0 < t < 1.0:
                raise ValueError(
                    f"estimator splits feature {feature[node]} at {t}; "
                    "only binary (0/1) features are supported"
                )
            return Tree.split(int(feature[node]), build(left[node]), build(right[node]))

        return build(0)


def _as_feature_matrix(X: Any, tree: Tree) -> np.ndarray:
    from odtkit._validation import as_binary_matrix

    matrix = (
        X
        if isinstance(X, np.ndarray) and X.dtype == bool and X.ndim == 2
        else as_binary_matrix(X, "X")
    )
    used = tree.features_used()
    if used and max(used) >= matrix.shape[1]:
        raise ValueError(f"X has {matrix.shape[1]} features but the tree tests feature {max(used)}")
    return matrix

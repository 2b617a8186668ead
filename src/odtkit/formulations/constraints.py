r"""The side constraints of :mod:`odtkit.constraints` as a tree formulation sees them.

:func:`odtkit.constraints.resolve` states every constraint over the *data* rows; a formulation
builds on *merged* rows (identical (x, y), :class:`~odtkit.formulations._common.RowData`) with
rescaled weights. Every tree routes the members of a merged row together, so they share one
prediction and, every block being linear in the predictions, the coefficients of a merged row
are the sums over its members. :func:`model_constraints` does that once per model; each
formulation then states, in its own variables,

* ``prediction`` (per block, shape ``(m, n_rows * n_classes)``): "model row r is predicted k";
* ``per_leaf``: its leaf indicators; ``per_split``: its split indicators;
* ``per_group``: one binary per feature group, "some split tests a feature of the group";
* ``min_leaf_weight`` (in the model's weight units): a row per leaf,

and names each block after :attr:`odtkit.constraints.LinearRows.name` so it shows in
``model.summary()`` and the LP file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from odtkit.constraints import (
    CONSTRAINT_TOLERANCE,
    LinearRows,
    ResolvedConstraints,
    effective_splits,
)
from odtkit.tree import Tree

__all__ = [
    "ModelConstraints",
    "PredictionSides",
    "merge_prediction",
    "model_constraints",
    "prediction_sides",
]


def merge_prediction(
    prediction: sp.csr_matrix, source: np.ndarray, n_rows: int, n_classes: int
) -> sp.csr_matrix:
    """Sum the columns ``i * K + k`` of the data rows merged into each model row.

    Parameters
    ----------
    prediction : sparse matrix, shape (m, n_samples * K)
    source : int array, shape (n_samples,)
        The model row of each data row, ``-1`` for a row the model leaves out (weight 0; a
        non-zero coefficient on it is refused: no model can state its prediction).
    """
    source = np.asarray(source, dtype=np.int64)
    K = n_classes
    n = source.size
    data_col = np.arange(n * K)
    model_row = np.repeat(source, K)
    kept = model_row >= 0
    A = sp.csr_matrix(prediction)
    dropped = np.flatnonzero(~kept)
    if dropped.size and A[:, dropped].count_nonzero():
        raise ValueError("a constraint reads the prediction of a row of weight 0")
    merge = sp.csr_matrix(
        (np.ones(int(kept.sum())), (data_col[kept], model_row[kept] * K + data_col[kept] % K)),
        shape=(n * K, n_rows * K),
    )
    return sp.csr_matrix(A @ merge)


@dataclass(frozen=True, eq=False)
class ModelConstraints:
    """A :class:`ResolvedConstraints` on a model's merged rows.

    Attributes
    ----------
    resolved : ResolvedConstraints
        As resolved against the dataset (``violation`` re-measures decoded trees with it).
    blocks : tuple of LinearRows
        ``resolved.blocks``, in order.
    prediction : tuple of csr_matrix
        Per block, its prediction coefficients on the model rows, shape
        ``(m, n_rows * n_classes)`` (column ``r * K + k``).
    min_leaf_weight : float
        ``resolved.min_leaf_weight`` in the model's weight units (0 when none).
    losses : ndarray, shape (n_rows, n_classes), or None
        The cost objective (``resolved.losses``) on the model rows, in the model's weight
        units: the objective is ``sum_{r,k} losses[r, k] [row r predicted k] / total + lam *
        leaves`` in place of the misclassified weight. None: the plain objective.
    """

    resolved: ResolvedConstraints
    blocks: tuple[LinearRows, ...]
    prediction: tuple[sp.csr_matrix, ...]
    min_leaf_weight: float
    losses: np.ndarray | None = None

    def __bool__(self) -> bool:
        return bool(self.resolved)

    @property
    def reads_predictions(self) -> bool:
        return any(b.reads_predictions for b in self.blocks)

    def start_violations(self, tree: Tree, X: np.ndarray, weight: np.ndarray) -> list[str]:
        """What ``tree`` breaks on the model's rows ``X`` with weights ``weight`` (model units):
        a start must be a feasible point of the model (``check_tree``)."""
        out = []
        if self.min_leaf_weight > 0:
            support = np.bincount(tree.apply(X), weights=weight, minlength=tree.n_leaves)
            if support.min() < self.min_leaf_weight * (1 - CONSTRAINT_TOLERANCE):
                out.append(f"min_leaf_support: a leaf receives {support.min():.6g} (model units)")
        m, K = X.shape[0], self.resolved.n_classes
        onehot = np.zeros(m * K)
        onehot[np.arange(m) * K + tree.predict(X)] = 1.0
        effective = effective_splits(tree, X)
        splits = np.bincount(np.asarray(effective, dtype=np.int64), minlength=X.shape[1])
        used = set(effective)
        for block, A in zip(self.blocks, self.prediction, strict=True):
            tested = np.array([any(int(j) in used for j in g) for g in block.groups], dtype=float)
            values = (
                A @ onehot
                + block.per_leaf * tree.n_leaves
                + block.per_split @ splits
                + (block.per_group @ tested if block.groups else 0.0)
            )
            tol = CONSTRAINT_TOLERANCE * np.maximum(1.0, np.abs(np.r_[block.lower, block.upper]))
            m_rows = block.n_rows
            bad = (values < block.lower - tol[:m_rows]) | (values > block.upper + tol[m_rows:])
            out.extend(f"{block.name}: {block.labels[r]}" for r in np.flatnonzero(bad))
        return out


@dataclass(frozen=True, eq=False)
class PredictionSides:
    r"""A block's prediction coefficients as differences of non-negative *sides*.

    Row :math:`b` of the block reads :math:`\sum_{r,k} A_{b, rK+k} [\hat y_r = k]`; per class
    :math:`k`, the coefficient vector :math:`A_{b,\cdot,k}` is the difference of its positive
    and negative parts, each a side (a non-negative vector over the model rows read with one
    class). Equal sides are stored once. With :math:`P_s = \sum_r S_{r,s}[\hat y_r = k(s)]`,
    the block's prediction part is ``combine @ P``.

    Attributes
    ----------
    S : csc_matrix, shape (n_rows, n_sides)
    side_class : int array, shape (n_sides,)
    combine : csr_matrix, shape (n_block_rows, n_sides)
        Entries +1 (a positive part) and -1 (a negative part).
    """

    S: sp.csc_matrix
    side_class: np.ndarray
    combine: sp.csr_matrix

    @property
    def n_sides(self) -> int:
        return int(self.side_class.size)


def prediction_sides(prediction: sp.csr_matrix, n_classes: int) -> PredictionSides:
    """The distinct non-negative sides of a block's prediction coefficients, per class.

    Parameters
    ----------
    prediction : sparse matrix, shape (n_block_rows, n_rows * n_classes)
        Column ``r * n_classes + k`` (as :attr:`ModelConstraints.prediction`).
    """
    A = sp.csr_matrix(prediction)
    R, K = A.shape[0], n_classes
    m = A.shape[1] // K
    parts: list[sp.csr_matrix] = []
    sign: list[np.ndarray] = []
    klass: list[np.ndarray] = []
    block_row: list[np.ndarray] = []
    for k in range(K):  # classes, not rows: a handful of sparse products
        Ak = sp.csr_matrix(A[:, k::K])
        for s, part in ((1.0, Ak.maximum(0.0)), (-1.0, (-Ak).maximum(0.0))):
            part = sp.csr_matrix(part)
            part.eliminate_zeros()
            keep = np.flatnonzero(np.diff(part.indptr))
            parts.append(sp.csr_matrix(part[keep]))
            sign.append(np.full(keep.size, s))
            klass.append(np.full(keep.size, k, dtype=np.int64))
            block_row.append(keep)
    cand = sp.csr_matrix(sp.vstack(parts), shape=(sum(p.shape[0] for p in parts), m))
    cand.sort_indices()
    classes = np.concatenate(klass)
    # equal (class, side) candidates share one side: a key per candidate row (one Python step
    # per candidate, i.e. per (block row, class, sign), never per model row)
    index: dict[tuple[int, bytes, bytes], int] = {}
    side_of = np.empty(cand.shape[0], dtype=np.int64)
    for c in range(cand.shape[0]):
        lo, hi = cand.indptr[c], cand.indptr[c + 1]
        key = (int(classes[c]), cand.indices[lo:hi].tobytes(), cand.data[lo:hi].tobytes())
        side_of[c] = index.setdefault(key, len(index))
    first = np.zeros(len(index), dtype=np.int64)
    first[side_of[::-1]] = np.arange(cand.shape[0])[::-1]  # the first candidate of each side
    S = sp.csc_matrix(cand[first].T)
    combine = sp.csr_matrix(
        (np.concatenate(sign), (np.concatenate(block_row), side_of)), shape=(R, len(index))
    )
    return PredictionSides(S=S, side_class=classes[first], combine=combine)


def model_constraints(
    resolved: ResolvedConstraints,
    source: np.ndarray,
    n_rows: int,
    weight_scale: float,
) -> ModelConstraints:
    """``resolved`` on a model's rows: ``source`` maps data rows to model rows (``-1``: left
    out), ``weight_scale`` is the model's weight units per data weight unit."""
    prediction = tuple(
        merge_prediction(b.prediction, source, n_rows, resolved.n_classes) for b in resolved.blocks
    )
    losses = None
    if resolved.losses is not None:
        K = resolved.n_classes
        merged = merge_prediction(sp.csr_matrix(resolved.losses.reshape(1, -1)), source, n_rows, K)
        losses = merged.toarray().reshape(n_rows, K) * weight_scale
        losses.setflags(write=False)
    return ModelConstraints(
        resolved=resolved,
        blocks=resolved.blocks,
        prediction=prediction,
        min_leaf_weight=resolved.min_leaf_weight * weight_scale,
        losses=losses,
    )

r"""Cost-sensitive objectives: what a wrong (or right) prediction costs, row by row.

The plain objective of every solver is OSDT's ``misclassified / W + lam * leaves`` with ``W``
the total training weight. A *cost* replaces the misclassified weight by

.. math::

    \mathrm{cost}(T) \;=\; \sum_i L_{i, \hat y_i}, \qquad
    R(T) \;=\; \mathrm{cost}(T) / W \;+\; \lambda \cdot |\mathrm{leaves}(T)|

with one loss :math:`L_{i,k}` per (training row, predicted class), so a leaf predicting class
:math:`k` costs the sum of its rows' :math:`L_{\cdot,k}` (the primitive that pricing by dynamic
programming needs). Three values state :math:`L` (each frozen, checked on construction):

* :class:`CostMatrix` ``(matrix)``: ``matrix[true, predicted]``, so :math:`L_{i,k} = w_i
  C_{y_i,k}`; the identity's complement (0 on the diagonal, 1 elsewhere) is the plain
  objective;
* :class:`BalancedError` ``()``: :math:`1 -` balanced accuracy (the mean recall over the
  classes present), i.e. :math:`L_{i,k} = w_i W / (K' W_{y_i}) [y_i \ne k]` with :math:`K'`
  the classes of positive weight;
* :class:`RowCosts` ``(costs)``: any finite :math:`L` given row by row (negative entries
  allowed: a dual-adjusted cost).

A cost is stated in the same list as the side constraints (``constraints=`` of every door,
:func:`odtkit.constraints.resolve`), at most one per problem: it is part of the problem
statement every solver reads from one :class:`~odtkit.constraints.ResolvedConstraints`.

**What the search takes.** When every row's losses take at most two values, the smaller at
no more than one class (always with two classes; a cost matrix whose off-diagonal entries
depend on the true class only; :class:`BalancedError`), the problem *is* a plain weighted one:
row :math:`i` gets label :math:`y'_i = \arg\min_k L_{i,k}` and weight :math:`w'_i = \max_k
L_{i,k} - \min_k L_{i,k}`, and :math:`\mathrm{cost}(T) = \sum_i \min_k L_{i,k} +
\mathrm{misclassified}'(T)` (:func:`reduction`). Every native search then certifies it. Other
costs (a general matrix over three classes or more) are the MIPs'.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from odtkit.datasets._dataset import Dataset

__all__ = [
    "SYNTAX",
    "BalancedError",
    "CostMatrix",
    "Costs",
    "Reduction",
    "RowCosts",
    "parse",
    "reduction",
]


class Costs(ABC):
    """Base of the cost objectives: a frozen value whose :meth:`losses` on a dataset is the
    ``(n_samples, n_classes)`` matrix :math:`L`."""

    kind = "costs"

    def describe(self) -> str:
        """One line for messages and summaries."""
        return repr(self)

    @abstractmethod
    def losses(self, dataset: Dataset) -> np.ndarray:
        """The loss of predicting each class for each row of ``dataset`` (checked against it)."""


def _matrix(value: Any, name: str) -> np.ndarray:
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a matrix of numbers, got {value!r}") from None
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"{name} must be a 2-d matrix, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must hold finite numbers")
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class CostMatrix(Costs):
    """Misclassification costs by class: ``matrix[t, k]`` is the cost of predicting class
    ``k`` (code order, ``dataset.classes``) for a row of true class ``t``, per unit of weight.

    Entries are finite and ``>= 0``; the matrix is ``K x K`` for the dataset's ``K`` classes.
    """

    matrix: Any
    kind = "cost_matrix"

    def __post_init__(self) -> None:
        matrix = _matrix(self.matrix, "matrix")
        if matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"matrix must be square (K x K), got shape {matrix.shape}")
        if (matrix < 0).any():
            raise ValueError("matrix must hold costs >= 0")
        object.__setattr__(self, "matrix", matrix)

    def describe(self) -> str:
        rows = ";".join(",".join(f"{v:g}" for v in row) for row in self.matrix)
        return f"cost-matrix={rows}"

    def losses(self, dataset: Dataset) -> np.ndarray:
        K = dataset.n_classes
        if self.matrix.shape != (K, K):
            labels = ", ".join(map(str, dataset.classes))
            raise ValueError(
                f"matrix: the dataset has {K} classes ({labels}), so the cost matrix must be "
                f"{K} x {K}, got {self.matrix.shape[0]} x {self.matrix.shape[1]}"
            )
        losses: np.ndarray = dataset.weights[:, None] * self.matrix[dataset.y]
        return losses


@dataclass(frozen=True, eq=False)
class BalancedError(Costs):
    """One minus balanced accuracy: each class present (positive weight) weighs ``1/K'`` in
    total, so ``cost(T) / W`` is the mean over those classes of the share of their weight the
    tree misclassifies (scikit-learn's ``balanced_accuracy_score`` with sample weights)."""

    kind = "balanced_error"

    def describe(self) -> str:
        return "balanced-error"

    def losses(self, dataset: Dataset) -> np.ndarray:
        w, y, K = dataset.weights, dataset.y, dataset.n_classes
        per_class = np.bincount(y, weights=w, minlength=K)
        present = per_class > 0
        scale = np.zeros(K)
        scale[present] = dataset.total_weight / (present.sum() * per_class[present])
        L = np.repeat((w * scale[y])[:, None], K, axis=1)
        L[np.arange(y.size), y] = 0.0
        return L


@dataclass(frozen=True, eq=False)
class RowCosts(Costs):
    """Per-row-per-class losses: ``costs[i, k]`` is what predicting class ``k`` for training
    row ``i`` costs (any finite number; sample weights are *not* applied to it).

    A row of sample weight 0 must cost 0 for every class (no model can state its prediction).
    """

    costs: Any = field(repr=False)
    kind = "row_costs"

    def __post_init__(self) -> None:
        object.__setattr__(self, "costs", _matrix(self.costs, "costs"))

    def describe(self) -> str:
        n, K = self.costs.shape
        return f"row-costs({n} x {K})"

    def losses(self, dataset: Dataset) -> np.ndarray:
        shape = (dataset.n_samples, dataset.n_classes)
        if self.costs.shape != shape:
            raise ValueError(
                f"costs must have one row per sample and one column per class, shape {shape}, "
                f"got {self.costs.shape}"
            )
        idle = dataset.weights == 0
        if idle.any() and np.abs(self.costs[idle]).max() > 0:
            row = int(np.flatnonzero(idle & (np.abs(self.costs).max(axis=1) > 0))[0])
            raise ValueError(
                f"costs: row {row} has sample weight 0 but a nonzero cost (give it weight, or "
                "cost 0)"
            )
        return np.array(self.costs)


class Reduction(NamedTuple):
    """A cost objective as a plain weighted problem (:func:`reduction`)."""

    y: np.ndarray
    weights: np.ndarray
    constant: float


def reduction(losses: np.ndarray) -> Reduction | str:
    """The plain weighted problem equal to the cost objective ``losses``, or why there is none.

    With ``m_i = max_k L[i, k]`` and ``l_i = min_k L[i, k]``, when no row has two classes below
    its maximum, ``cost(T) = sum_i l_i + sum_{i : pred_i != y'_i} w'_i`` with ``y'_i`` the
    argmin and ``w'_i = m_i - l_i``: the misclassified weight of the relabelled, reweighted
    rows plus a constant.
    """
    L = np.asarray(losses, dtype=float)
    top = L.max(axis=1)
    low = L.min(axis=1)
    spread = np.maximum(np.abs(top), np.abs(low))
    below = L < top[:, None] - 1e-12 * np.maximum(1.0, spread)[:, None]
    if (below.sum(axis=1) > 1).any():
        row = int(np.flatnonzero(below.sum(axis=1) > 1)[0])
        return (
            f"row {row}'s costs ({', '.join(f'{v:g}' for v in L[row])}) are below their "
            "maximum at more than one class, so they are no weighted misclassification"
        )
    # a row whose losses are all equal (to rounding) is indifferent: weight exactly 0
    weights = np.where(below.any(axis=1), top - low, 0.0)
    return Reduction(
        y=L.argmin(axis=1).astype(np.int32), weights=weights, constant=float(low.sum())
    )


#: The one description of :func:`parse`'s syntax (the CLI's ``--costs`` help prints it).
SYNTAX = """\
balanced                      1 - balanced accuracy (each class present weighs the same)
C00,C01;C10,C11               a cost matrix, row = true class, column = predicted class,
                              classes in the order of the sorted labels (';' between rows)"""


def parse(text: str) -> Costs:
    """A cost objective from its text form: the CLI's ``--costs`` syntax (:data:`SYNTAX`).

    Raises
    ------
    ValueError
        Naming what is wrong (a cell that is not a number, rows of different lengths).
    """
    if not isinstance(text, str):
        raise TypeError(f"costs text must be a string, got {type(text).__name__}")
    stripped = text.strip()
    if stripped.lower() in ("balanced", "balanced-error", "balanced_error"):
        return BalancedError()
    rows = [row.split(",") for row in stripped.split(";")]
    try:
        matrix = [[float(cell) for cell in row] for row in rows]
    except ValueError:
        raise ValueError(
            f"costs {text!r}: expected 'balanced' or a matrix like '0,1;5,0'"
        ) from None
    if len({len(row) for row in matrix}) != 1:
        raise ValueError(f"costs {text!r}: every row of the matrix needs the same length")
    try:
        return CostMatrix(matrix)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"costs {text!r}: {exc}") from None

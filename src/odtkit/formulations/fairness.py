r"""The fairness constraint block, shared by every tree formulation (docs/formulations-trees.md §5).

A :class:`~odtkit.fairness.FairnessGroups` states, for each constrained pair :math:`j` of
groups, the linear disparity

.. math::

    \Delta_j = \sum_i \gamma_{ij}\, \hat y^+_i, \qquad
    \gamma_{ij} = \frac{w_i}{W(G_j)} [i \in G_j] - \frac{w_i}{W(G'_j)} [i \in G'_j],

of the positive predictions :math:`\hat y^+_i = [\hat y_i = k^+] \in \{0,1\}`; a tree is
δ-fair iff :math:`-\delta \le \Delta_j \le \delta` for every pair (§5.2-5.3). A formulation
states :math:`\hat y^+` in its own variables and this module adds the rows.

**Merged rows.** A formulation builds on merged rows (identical x, or identical (x, y)): every
tree routes the members of a merged row :math:`r` together, so they share one prediction, and
since :math:`\Delta_j` is linear, :math:`\sum_{i \in r} \gamma_{ij} \hat y^+_i =
\hat y^+_r \sum_{i\in r}\gamma_{ij}`. :func:`merge_groups` sums the coefficient vectors of the
merged rows, so the block has one entry per merged row, never per data row.

Two ways to state :math:`\hat y^+_r`:

* **linear** (:func:`add_fairness_rows`): :math:`\hat y^+_r = (P x)_r` for a sparse matrix
  :math:`P` over the model's columns that is exact at the model's integer points (the fair
  FlowOCT: :math:`\hat y^+_r = \sum_u \zeta_{r,u,k^+}`). The block is the :math:`n_{pairs}`
  range rows :math:`-\delta \le (\Gamma^\top P)\,x \le \delta`, one sparse product.
* **per leaf** (:func:`add_leaf_fairness`): :math:`\hat y^+_r = \sum_t q_{r,t}\, c_t` with
  :math:`q_{r,t}` (row r reaches leaf t, exact at integer points) and a binary :math:`c_t`
  (leaf t predicts :math:`k^+`), as in RBinOCT. The product is linearized per (leaf, *side*),
  not per row: each pair's coefficient vector is the difference of two non-negative *sides*
  :math:`s \ge 0` (a group's normalized weights; a group shared by several pairs is one side),
  the side's mass in leaf t is :math:`M_{t,s} = \sum_r s_r q_{r,t} \in [0, U_s]`,
  :math:`U_s = \sum_r s_r` (= 1), and :math:`\rho_{t,s} = c_t M_{t,s}` is stated by its
  McCormick rows, which are exact for binary :math:`c_t`:

  .. math::

      0 \le \rho_{t,s} \le U_s c_t, \qquad \rho_{t,s} \le M_{t,s}, \qquad
      \rho_{t,s} \ge M_{t,s} - U_s (1 - c_t),

  and the pair rows are :math:`-\delta \le \sum_t (\rho_{t,s_j} - \rho_{t,s'_j}) \le \delta`.
  That is :math:`|\text{leaves}|\cdot|\text{sides}|` variables instead of one product per
  (row, leaf), and per side it is the convex hull of :math:`\{(c, M, \rho): c \in\{0,1\},
  \rho = cM\}`, so at least as tight as one big-M product per pair on
  :math:`M_{t,s_j} - M_{t,s'_j} \in [-1, 1]`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from odtkit.fairness import FAIRNESS_TOLERANCE, Fairness, FairnessGroups
from odtkit.model import ModelBuilder, VarGroup

__all__ = [
    "FairRows",
    "add_disparity_rows",
    "add_fairness_rows",
    "add_leaf_fairness",
    "add_leaf_products",
    "check_fairness",
    "leaf_product_values",
    "leaf_side_values",
    "merge_groups",
]


def check_fairness(fairness: Any) -> Fairness | None:
    """``fairness`` if it is None or an :class:`odtkit.Fairness`, else a TypeError naming it."""
    if fairness is None or isinstance(fairness, Fairness):
        return fairness
    raise TypeError(f"fairness must be an odtkit.Fairness or None, got {type(fairness).__name__}")


@dataclass(frozen=True, eq=False)
class FairRows:
    """A fairness constraint resolved against a dataset and merged onto a model's rows.

    Attributes
    ----------
    groups : FairnessGroups
        As resolved against the dataset (what decoded trees are re-measured with).
    coefficients : ndarray, shape (n_rows, n_pairs)
        The disparity coefficients summed over the data rows merged into each model row.
    """

    groups: FairnessGroups
    coefficients: np.ndarray

    @property
    def delta(self) -> float:
        return self.groups.delta

    @property
    def positive_code(self) -> int:
        return self.groups.positive_code

    @property
    def n_pairs(self) -> int:
        return int(self.coefficients.shape[1])

    def gap(self, positive: np.ndarray) -> float:
        """Largest absolute disparity of a positive-prediction vector over the model's rows."""
        values = np.asarray(positive, dtype=float) @ self.coefficients
        return float(np.abs(values).max()) if values.size else 0.0

    def is_fair(self, positive: np.ndarray) -> bool:
        """``gap(positive) <= delta`` up to :data:`odtkit.fairness.FAIRNESS_TOLERANCE`."""
        return self.gap(positive) <= self.delta + FAIRNESS_TOLERANCE

    def sides(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(S, first, second)``: the distinct non-negative sides and each pair's two sides.

        ``S`` has shape (n_rows, n_sides); pair j's coefficients are
        ``S[:, first[j]] - S[:, second[j]]`` (a protected value's group shared by several
        pairs is stored once).
        """
        coef = self.coefficients
        both = np.concatenate([np.maximum(coef, 0.0), np.maximum(-coef, 0.0)], axis=1)
        S, inverse = np.unique(both, axis=1, return_inverse=True)
        inverse = inverse.reshape(-1)
        P = coef.shape[1]
        return S, inverse[:P], inverse[P:]


def merge_groups(groups: FairnessGroups, row_of: np.ndarray, n_rows: int) -> FairRows:
    """Sum ``groups``' coefficients over the data rows merged into each model row.

    Parameters
    ----------
    groups : FairnessGroups
        Resolved against the dataset the model is built on.
    row_of : int array, shape (n_samples,)
        The model row of each data row, ``-1`` for a row the model leaves out (weight 0: its
        coefficients are 0, so leaving it out changes no disparity).
    n_rows : int
        Number of model rows.
    """
    row_of = np.asarray(row_of, dtype=np.int64)
    coef = groups.coefficients
    if row_of.shape != (coef.shape[0],):
        raise ValueError(f"row_of must have shape ({coef.shape[0]},), got {row_of.shape}")
    kept = row_of >= 0
    if np.any(coef[~kept] != 0.0):
        raise ValueError("a data row left out of the model has a non-zero fairness coefficient")
    merge = sp.csr_matrix(
        (np.ones(int(kept.sum())), (row_of[kept], np.flatnonzero(kept))),
        shape=(n_rows, coef.shape[0]),
    )
    merged = np.asarray(merge @ coef, dtype=float)
    merged.setflags(write=False)
    return FairRows(groups, merged)


def add_fairness_rows(
    builder: ModelBuilder, fair: FairRows, positive: Any, name: str = "fairness"
) -> None:
    r"""Add :math:`-\delta \le \Gamma^\top P x \le \delta` (one range row per pair).

    Parameters
    ----------
    builder : ModelBuilder
    fair : FairRows
        The merged coefficients :math:`\Gamma` (n_rows, n_pairs) and δ.
    positive : scipy.sparse matrix, shape (n_rows, builder.n_vars)
        :math:`P`: row r is the positive prediction of model row r, exact at integer points.
    """
    P = sp.csr_matrix(positive)
    if P.shape[0] != fair.coefficients.shape[0]:
        raise ValueError(
            f"positive has {P.shape[0]} rows but the fairness coefficients have "
            f"{fair.coefficients.shape[0]}"
        )
    add_disparity_rows(builder, fair, sp.csr_matrix(fair.coefficients.T) @ P, name)


def add_disparity_rows(
    builder: ModelBuilder, fair: FairRows, disparity: Any, name: str = "fairness"
) -> None:
    r"""Add :math:`-\delta \le D x \le \delta` for a model that states each pair's disparity
    directly as a linear function :math:`D x` (shape (n_pairs, builder.n_vars)), exact at the
    model's integer points (e.g. from per-cell counts, as PathOCT does)."""
    D = sp.csr_matrix(disparity)
    if D.shape[0] != fair.n_pairs:
        raise ValueError(f"disparity has {D.shape[0]} rows, one per pair needs {fair.n_pairs}")
    builder.add_range_constraints(
        name, matrix=D, lower=-fair.delta, upper=fair.delta, n_rows=fair.n_pairs
    )


def add_leaf_fairness(
    builder: ModelBuilder,
    fair: FairRows,
    reaches: np.ndarray,
    leaf_positive: np.ndarray,
    name: str = "fairness",
) -> None:
    r"""Add the per-(leaf, side) linearization of :math:`\sum_t q_{r,t} c_t` and the pair rows.

    Parameters
    ----------
    builder : ModelBuilder
    fair : FairRows
    reaches : int array, shape (n_rows, n_leaves)
        Column of :math:`q_{r,t}` (row r reaches leaf t; exact at integer points).
    leaf_positive : int array, shape (n_leaves,)
        Column of the binary :math:`c_t` (leaf t predicts the positive class).

    Adds the variable group ``rho_<name>`` (n_leaves, n_sides) and the blocks
    ``<name>_mass`` (:math:`\rho \le M`), ``<name>_on`` (:math:`\rho \le U c`),
    ``<name>_off`` (:math:`\rho \ge M - U(1-c)`) (:func:`add_leaf_products`) and ``<name>``
    (the pairs).
    """
    reaches = np.asarray(reaches, dtype=np.int64)
    leaf_positive = np.asarray(leaf_positive, dtype=np.int64).reshape(-1)
    m, L = reaches.shape
    if m != fair.coefficients.shape[0] or leaf_positive.size != L:
        raise ValueError(
            f"reaches must have shape ({fair.coefficients.shape[0]}, n_leaves) and "
            f"leaf_positive n_leaves entries, got {reaches.shape} and {leaf_positive.shape}"
        )
    S, first, second = fair.sides()
    rho = add_leaf_products(
        builder, S, np.zeros(S.shape[1], dtype=np.int64), reaches, leaf_positive[:, None], name
    )
    # pairs: -delta <= sum_t rho[t, first] - rho[t, second] <= delta
    P = first.size
    pair_rows = np.repeat(np.arange(P), L)
    t_p = np.tile(np.arange(L), P)
    builder.add_range_constraints(
        name,
        np.concatenate([pair_rows, pair_rows]),
        np.concatenate([rho.index[t_p, np.repeat(first, L)], rho.index[t_p, np.repeat(second, L)]]),
        np.concatenate([np.ones(P * L), -np.ones(P * L)]),
        lower=-fair.delta,
        upper=fair.delta,
        n_rows=P,
    )


def add_leaf_products(
    builder: ModelBuilder,
    sides: Any,
    side_class: np.ndarray,
    reaches: np.ndarray,
    leaf_class: np.ndarray,
    name: str,
) -> VarGroup:
    r"""Add :math:`\rho_{t,s} = c_{t,k(s)} M_{t,s}` for every leaf t and side s, by McCormick.

    The one linearization of "the weight a leaf's prediction puts on a side" every
    per-leaf model shares (the fairness pairs, the prediction rows of
    :mod:`odtkit.constraints`): a side is a non-negative vector :math:`s` over the model rows
    read with one class :math:`k(s)`, :math:`M_{t,s} = \sum_r s_r q_{r,t} \in [0, U_s]` with
    :math:`U_s = \sum_r s_r`, and the rows are exact for binary :math:`c`.

    Parameters
    ----------
    builder : ModelBuilder
    sides : array or sparse matrix, shape (n_rows, n_sides)
        Non-negative side vectors, one column each.
    side_class : int array, shape (n_sides,)
        The column of ``leaf_class`` each side is read with.
    reaches : int array, shape (n_rows, n_leaves)
        Column of :math:`q_{r,t}` (row r reaches leaf t; exact at integer points).
    leaf_class : int array, shape (n_leaves, n_cols)
        Columns of the binaries :math:`c_{t,k}` (leaf t predicts k).
    name : str

    Returns
    -------
    VarGroup
        ``rho_<name>``, shape (n_leaves, n_sides); the blocks are ``<name>_mass``
        (:math:`\rho \le M`), ``<name>_on`` (:math:`\rho \le U c`) and ``<name>_off``
        (:math:`\rho \ge M - U(1-c)`).
    """
    S = sp.coo_matrix(sides)
    L = reaches.shape[1]
    G = S.shape[1]
    upper = np.asarray(S.sum(axis=0), dtype=float).reshape(-1)  # (G,)
    rho = builder.add_vars(f"rho_{name}", (L, G), "continuous", lb=0.0, ub=upper[None, :])
    rho_cols = rho.index.ravel()  # row t * G + g
    local = np.arange(L * G)
    # the side masses M[t, g] = sum_r S[r, g] q[r, t], as triplets on row t * G + g
    r_nz, g_nz, v_nz = S.row.astype(np.int64), S.col.astype(np.int64), S.data.astype(float)
    t_all = np.repeat(np.arange(L), r_nz.size)
    mass_rows = t_all * G + np.tile(g_nz, L)
    mass_cols = reaches[np.tile(r_nz, L), t_all]
    mass_vals = np.tile(v_nz, L)
    c_cols = np.asarray(leaf_class, dtype=np.int64)[:, np.asarray(side_class, dtype=np.int64)]
    c_cols = c_cols.reshape(-1)  # (L * G,), row t * G + g
    u_flat = np.tile(upper, L)
    ones, zeros = np.ones(L * G), np.zeros(L * G)
    # rho - M <= 0;  rho - U c <= 0;  M - rho + U c <= U
    for block, rows, cols, vals, rhs in (
        ("mass", [local, mass_rows], [rho_cols, mass_cols], [ones, -mass_vals], zeros),
        ("on", [local, local], [rho_cols, c_cols], [ones, -u_flat], zeros),
        (
            "off",
            [local, mass_rows, local],
            [rho_cols, mass_cols, c_cols],
            [-ones, mass_vals, u_flat],
            u_flat,
        ),
    ):
        builder.add_constraints(
            f"{name}_{block}",
            np.concatenate(rows),
            np.concatenate(cols),
            np.concatenate(vals),
            "<=",
            rhs,
        )
    return rho


def leaf_product_values(
    sides: Any, side_class: np.ndarray, leaf_of_row: np.ndarray, leaf_class: np.ndarray
) -> np.ndarray:
    """The values of ``rho`` (n_leaves, n_sides) of :func:`add_leaf_products` for rows routed
    to ``leaf_of_row``, with ``leaf_class`` (n_leaves, n_cols) the 0/1 values of ``c``."""
    S = sp.csr_matrix(sides)
    L = leaf_class.shape[0]
    route = sp.csr_matrix(
        (np.ones(leaf_of_row.size), (leaf_of_row, np.arange(leaf_of_row.size))),
        shape=(L, leaf_of_row.size),
    )
    mass = np.asarray((route @ S).toarray(), dtype=float)  # (L, G)
    out: np.ndarray = mass * np.asarray(leaf_class, dtype=float)[:, side_class]
    return out


def leaf_side_values(fair: FairRows, leaf_of_row: np.ndarray, positive_leaf: np.ndarray) -> Any:
    """The values of ``rho`` (n_leaves, n_sides) for rows in ``leaf_of_row`` (a start)."""
    S, _, _ = fair.sides()
    zeros = np.zeros(S.shape[1], dtype=np.int64)
    return leaf_product_values(S, zeros, leaf_of_row, np.asarray(positive_leaf)[:, None])

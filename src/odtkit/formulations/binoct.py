r"""BinOCT (Verwer & Zhang) on binary features and its regularized form RBinOCT (OSDT App. J).

Verwer & Zhang 2019; Hu et al. 2019 (OSDT), Appendix J. Binary specialization of BinOCT
(docs/formulations-trees.md §2.7), heap numbering (§1.2), branch nodes
:math:`\mathcal B = \{1..2^D-1\}`, leaves :math:`\mathcal L = \{2^D..2^{D+1}-1\}`,
non-constant features :math:`\mathcal J^+`, classes :math:`k`, row weights :math:`\omega_i`
(1 unless the dataset is weighted; identical (x, y) rows are merged into one weighted row),
:math:`W_k = \sum_{i: y_i = k}\omega_i`, :math:`W = \sum_i \omega_i`, :math:`m` = number of
(merged) rows. Variables: :math:`f_{u,j}\in\{0,1\}` (node u tests j), :math:`c_{t,k}\in\{0,1\}`
(leaf t predicts k), :math:`e_{t,k}\ge 0` (misclassified weight of class k in t),
:math:`q_{i,t}\in[0,1]` (row i reaches t).

.. math::

    \text{(BB0)}\quad & \min \textstyle\sum_{t,k} e_{t,k} \\
    \text{(BB1)}\quad & \textstyle\sum_{j\in\mathcal J^+} f_{u,j} = 1
        \quad \forall u\in\mathcal B \\
    \text{(BB2)}\quad & \textstyle\sum_{t} q_{i,t} = 1 \quad \forall i \\
    \text{(BB3)}\quad & \textstyle\sum_k c_{t,k} = 1 \quad \forall t\in\mathcal L \\
    \text{(BB4)}\quad & \textstyle\sum_{i: x_{ij}=1}\sum_{t\in\mathcal L_L(u)} q_{i,t}
        + \sum_{i: x_{ij}=0}\sum_{t\in\mathcal L_R(u)} q_{i,t} \le m(1-f_{u,j})
        \quad \forall u, j\in\mathcal J^+ \\
    \text{(BB5)}\quad & \textstyle\sum_{i: y_i=k}\omega_i q_{i,t} - W_k c_{t,k} \le e_{t,k}
        \quad \forall t, k

RBinOCT (§3.1) adds :math:`\alpha_t\in\{0,1\}` and

.. math::

    \text{(R0)}\quad & \min \tfrac1W \textstyle\sum_{t,k} e_{t,k} + \lambda\sum_t \alpha_t \\
    \text{(R1)}\quad & \textstyle\sum_i q_{i,t} \le m\,\alpha_t \quad \forall t

and, with the **null split** (§3.2, on by default for RBinOCT), :math:`g_u\in\{0,1\}` ("send every
row left") replacing (BB1) by (N1) :math:`\sum_j f_{u,j} + g_u = 1` and adding
(N2) :math:`\sum_i\sum_{t\in\mathcal L_R(u)} q_{i,t} \le m(1-g_u)`. With null splits the optimum
of (R0) equals OSDT's :math:`\mathrm{OPT}(D,\lambda)` over trees of depth :math:`\le D` (§3.3);
without them it can be larger (§7.3: 2/3 instead of 7/12).

**Cost objective** (a cost of :mod:`odtkit.costs` among ``constraints=``: the losses
:math:`L_{i,k}` on the merged rows, in the model's weight units, any sign, any :math:`K`).
With the gains :math:`G_{i,k} = \max_{k'} L_{i,k'} - L_{i,k} \ge 0` and
:math:`U_k = \sum_i G_{i,k}`, (BB5) becomes

.. math::

    \text{(BC)}\quad & \textstyle\sum_i G_{i,k}\, q_{i,t} - U_k c_{t,k} \le e_{t,k}
        \quad \forall t, k

and the objective gains the constant :math:`C = \sum_i (\max_k L_{i,k} - \sum_k G_{i,k})`
(the model's offset, divided by :math:`W` in (R0)). At integer points :math:`e_{t,k}` is the
gain leaf t forgoes by not predicting k, :math:`(1 - c_{t,k})\sum_i G_{i,k} q_{i,t}`, and
every row reaches one leaf, so :math:`\sum_{t,k} e_{t,k} + C = \sum_i L_{i,\hat y_i}`, the
cost. The plain objective is :math:`L_{i,k} = \omega_i [k \ne y_i]`: :math:`G` is the weight
at the true class, :math:`C = 0` and (BC) is (BB5), the same model. A two-class cost has one
nonzero gain per row: (BC) is (BB5) on the rows :func:`odtkit.costs.reduction` relabels and
reweights. A completion to depth D keeps every prediction, so every variant carries a cost
(BinOCT's bound: ``(bound on sum e + C) / W + lam``) and the properties above hold under it.
With more classes a row's costs may take three values or more; its gains then sum above its
largest, and the LP bound of (BC) falls below the trivial :math:`\sum_i \min_k L_{i,k}`. Each
leaf forgoes at least its rows' floors :math:`F_i = \sum_k G_{i,k} - \max_k G_{i,k}` (what
row i forgoes at its best class), which every integer point satisfies with the values above:

.. math::

    \text{(BF)}\quad & \textstyle\sum_k e_{t,k} \ge \sum_i F_i\, q_{i,t} \quad \forall t

(block ``cost_floor``, only when some :math:`F_i > 0`; never for a two-class cost).

**Fairness** (``build(..., fairness=)``, §5). Once :math:`f` (and :math:`g`)
are integral, (BB2), (BB4) and (N2) leave each row exactly one leaf, so :math:`q` is the 0/1
routing of the complete tree :math:`C` and the positive prediction of row :math:`i` is
:math:`\sum_t q_{i,t} c_{t,k^+}`. The product is linearized per (leaf, group side), not per row
(:func:`odtkit.formulations.fairness.add_leaf_fairness`): with the side masses
:math:`M_{t,s} = \sum_i s_i q_{i,t}`,

.. math::

    \text{(FR)}\quad 0 \le \rho_{t,s} \le U_s c_{t,k^+},\quad \rho_{t,s} \le M_{t,s},\quad
    \rho_{t,s} \ge M_{t,s} - U_s(1 - c_{t,k^+}),\quad
    -\delta \le \textstyle\sum_t (\rho_{t,s_j} - \rho_{t,s'_j}) \le \delta

(exact for binary :math:`c`), on the merged (x, y) rows with summed coefficients. A solution's
rows then measure exactly :math:`C`'s disparities, which are those of
:math:`\operatorname{canon}(C)` (same training predictions), and a δ-fair tree completed by
null splits keeps its predictions; so §3.3 carries over: with null splits the optimum is the
optimal δ-fair tree's :math:`R` (``EXACT``, ``VALID_BOUND``), without them it is only an upper
bound on it; BinOCT's error bound stays a valid bound (a fair tree completed to depth D is
fair).

**Side constraints** (``build(..., constraints=)``, :mod:`odtkit.constraints`). Each
:class:`~odtkit.constraints.LinearRows` becomes one range block named after it, over

* predictions: :math:`\sum_{r,k} A_{b,rk}\,[\hat y_r = k]` as for fairness, by
  :func:`~odtkit.formulations.fairness.add_leaf_products` on the distinct non-negative sides
  of each class's coefficient vector (:func:`~odtkit.formulations.constraints.prediction_sides`);
* leaves: :math:`\sum_t o_t` with the binary :math:`o_v` = "some row reaches node v",
  :math:`\sum_i q_{i,t} \le m\,o_t`, :math:`o_t \le \sum_i q_{i,t}` at the leaves and
  :math:`o_{2v}, o_{2v+1} \le o_v \le o_{2v} + o_{2v+1}` above;
* effective splits: :math:`h_u = o_{2u} o_{2u+1}` (both sides of u receive a row) and
  :math:`s_{u,j} = f_{u,j} h_u`, each by its three McCormick rows, exact at integer points;
  the count on feature j is :math:`\sum_u s_{u,j}`;
* tested groups: a binary :math:`v_g` with :math:`s_{u,j} \le v_g \le \sum_{u, j\in g}
  s_{u,j}`;

and the minimum leaf support is :math:`\sum_i \omega_i q_{i,t} \ge L\, o_t`. At integer
points the counts are those of :math:`\operatorname{prune\_empty}(C)`: its leaves are the
occupied leaves, its splits the effective ones. The returned tree (``canonical``) has the same
predictions, no more leaves and no more splits (equal leaves are merged only without a
:class:`~odtkit.constraints.RequireFeatures`, the one row with a lower bound on splits), so
since every cost in the vocabulary is non-negative it satisfies every row the model does; and
with null splits every feasible tree is a point of the model with its own value (its leaves
continue by null splits, which occupy nothing new and split nothing). So RBinOCT with null
splits stays ``EXACT`` under constraints. Without null splits (BinOCT's default, RBinOCT's
``null_split=False``) shallow trees are completed by real splits, which can add leaves and
effective splits: the model then carries the prediction rows and
:class:`~odtkit.constraints.RequireFeatures` (both survive a completion) and refuses the
others (one line naming the constraint) rather than call a feasible problem infeasible or
lose BinOCT's bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from odtkit.fairness import FairnessGroups
from odtkit.formulations._base import (
    DECODE_NOT_WORSE,
    EXACT,
    VALID_BOUND,
    Property,
    check_built_by,
)
from odtkit.formulations._common import (
    NO_FEATURE,
    ModelSize,
    RowData,
    TreeFormulation,
    TreeMeta,
    branch_nodes,
    check_tree,
    embed,
    nonconstant_features,
    prune_empty,
    subtree_leaf_ranges,
)
from odtkit.formulations.constraints import ModelConstraints, prediction_sides
from odtkit.formulations.fairness import (
    FairRows,
    add_leaf_fairness,
    add_leaf_products,
    leaf_product_values,
    leaf_side_values,
    merge_groups,
)
from odtkit.model import Model, ModelBuilder
from odtkit.tree import Tree

__all__ = ["BOUND_TOLERANCE", "BinOCT", "BinOCTMeta", "RBinOCT"]

#: Slack (in error units) allowed when rounding a solver's error bound up to an integer.
BOUND_TOLERANCE = 1e-6


@dataclass(frozen=True, kw_only=True, eq=False)
class BinOCTMeta(TreeMeta):
    """The meta of a (R)BinOCT model: :class:`~odtkit.formulations.TreeMeta` and the choices.

    Attributes
    ----------
    null_split, regularized : bool
    features : tuple of int
        The non-constant features, one column of ``f`` each, in order.
    """

    null_split: bool
    regularized: bool
    features: tuple[int, ...]


def _build(
    b: ModelBuilder,
    rows: RowData,
    depth: int,
    lam: float,
    *,
    regularized: bool,
    null_split: bool,
    name: str,
    groups: FairnessGroups | None = None,
    side: ModelConstraints | None = None,
) -> tuple[np.ndarray, FairRows | None]:
    """Add the model to ``b``; the non-constant features (``f``'s columns) and the fairness
    block's rows."""
    m, K = rows.n_rows, rows.n_classes
    X = rows.X
    nonconstant = np.flatnonzero(X.any(axis=0) & ~X.all(axis=0))
    if nonconstant.size == 0 and not null_split:
        raise ValueError(
            f"{name} needs a non-constant feature to split on (every feature is constant on the "
            "data); use null_split=True"
        )
    nJ = nonconstant.size
    n_branch, n_leaf = 2**depth - 1, 2**depth
    branches = branch_nodes(depth)

    f = b.add_vars("f", (n_branch, nJ), "binary", labels=(branches.tolist(), nonconstant.tolist()))
    g = b.add_vars("g", (n_branch,), "binary", labels=(branches.tolist(),)) if null_split else None
    c = b.add_vars("c", (n_leaf, K), "binary")
    gains = _leaf_gains(rows, None if side is None else side.losses)
    # e[t, k] <= U_k at every optimum; the plain model keeps its original bound W
    e_upper = rows.total_weight if side is None or side.losses is None else gains.total
    e = b.add_vars("e", (n_leaf, K), "continuous", lb=0.0, ub=e_upper)
    q = b.add_vars("q", (m, n_leaf), "continuous", lb=0.0, ub=1.0)
    alpha = b.add_vars("alpha", (n_leaf,), "binary") if regularized else None

    # (BB1) / (N1): every branch node tests exactly one usable feature (or is a null split)
    r_rows = [np.repeat(np.arange(n_branch), nJ)]
    r_cols = [f.index.ravel()]
    if g is not None:
        r_rows.append(np.arange(n_branch))
        r_cols.append(g.index)
    b.add_constraints(
        "one_test", np.concatenate(r_rows), np.concatenate(r_cols), 1.0, "==", np.ones(n_branch)
    )
    # (BB2): every row reaches exactly one leaf
    b.add_constraints(
        "one_leaf", np.repeat(np.arange(m), n_leaf), q.index.ravel(), 1.0, "==", np.ones(m)
    )
    # (BB3): every leaf predicts exactly one class
    b.add_constraints(
        "one_class", np.repeat(np.arange(n_leaf), K), c.index.ravel(), 1.0, "==", np.ones(n_leaf)
    )

    # (BB4): if u tests j, rows with x_j = 1 stay out of the left subtree and rows with x_j = 0
    # out of the right one. A row of the block touches one contiguous block of leaves.
    left, right, size = subtree_leaf_ranges(branches, depth)
    rr, cc, vv = [], [], []
    Xj = X[:, nonconstant].T  # (nJ, m)
    rows_idx = np.arange(m)
    for ui in range(n_branch):
        s = int(size[ui])
        first = np.where(Xj, left[ui], right[ui]) - n_leaf  # (nJ, m): first forbidden leaf
        leaf_cols = first[:, :, None] + np.arange(s)[None, None, :]
        cols = q.index[rows_idx[None, :, None], leaf_cols]
        local = ui * nJ + np.arange(nJ)
        rr.append(np.broadcast_to(local[:, None, None], cols.shape).ravel())
        cc.append(cols.ravel())
        vv.append(np.ones(cols.size))
        rr.append(local)
        cc.append(f.index[ui])
        vv.append(np.full(nJ, float(m)))
    if nJ:
        b.add_constraints(
            "route",
            np.concatenate(rr),
            np.concatenate(cc),
            np.concatenate(vv),
            "<=",
            np.full(n_branch * nJ, float(m)),
        )

    # (BB5) / (BC): misclassified weight (lost gain) per leaf and class; the plain objective's
    # gains are the row weights at the true class, so its rows are the original's
    err_rows = (
        np.arange(n_leaf)[None, :] * K + gains.klass[:, None]
    ).ravel()  # (nnz, n_leaf) -> row t*K+k
    b.add_constraints(
        "leaf_error",
        np.concatenate([err_rows, np.arange(n_leaf * K), np.arange(n_leaf * K)]),
        np.concatenate([q.index[gains.row].ravel(), c.index.ravel(), e.index.ravel()]),
        np.concatenate(
            [np.repeat(gains.gain, n_leaf), -np.tile(gains.total, n_leaf), -np.ones(n_leaf * K)]
        ),
        "<=",
        np.zeros(n_leaf * K),
    )
    floor = np.flatnonzero(gains.floor)
    if floor.size:
        # (BF): the gain a leaf forgoes is at least its rows' forgone gain under their best
        # prediction (only a multi-class cost has one); not needed for exactness, but the LP
        # bound of (BC) alone falls below sum_i min_k L_ik (depth 3, 3 classes: 10x fewer nodes)
        b.add_constraints(
            "cost_floor",
            np.concatenate(
                [np.repeat(np.arange(n_leaf), K), np.tile(np.arange(n_leaf), floor.size)]
            ),
            np.concatenate([e.index.ravel(), q.index[floor].ravel()]),
            np.concatenate([np.ones(n_leaf * K), -np.repeat(gains.floor[floor], n_leaf)]),
            ">=",
            np.zeros(n_leaf),
        )
    if alpha is not None:
        # (R1): a leaf that receives a row is counted
        b.add_constraints(
            "leaf_used",
            np.concatenate([np.tile(np.arange(n_leaf), m), np.arange(n_leaf)]),
            np.concatenate([q.index.ravel(), alpha.index]),
            np.concatenate([np.ones(m * n_leaf), np.full(n_leaf, -float(m))]),
            "<=",
            np.zeros(n_leaf),
        )
    if g is not None:
        # (N2): a null split sends no row into its right subtree
        rr, cc = [], []
        for ui in range(n_branch):
            s = int(size[ui])
            cols = q.index[:, right[ui] - n_leaf : right[ui] - n_leaf + s]
            rr.append(np.full(cols.size, ui))
            cc.append(cols.ravel())
        b.add_constraints(
            "null_split",
            np.concatenate([*rr, np.arange(n_branch)]),
            np.concatenate([*cc, g.index]),
            np.concatenate([np.ones(sum(x.size for x in cc)), np.full(n_branch, float(m))]),
            "<=",
            np.full(n_branch, float(m)),
        )

    fair = None
    if groups is not None:
        # (FR): the positive prediction of row i is sum_t q[i, t] c[t, k+], linearized per
        # (leaf, side) by the shared block; q is exact once f and g are integral
        fair = merge_groups(groups, rows.source, m)
        add_leaf_fairness(b, fair, q.index, c.index[:, fair.positive_code])
    if side is not None:
        _add_side_constraints(b, rows, side, depth, nonconstant, f.index, c.index, q.index)

    if alpha is not None:
        b.add_objective(e.index.ravel(), 1.0 / rows.total_weight)
        b.add_objective(alpha.index, lam)
        scale = 1.0 / rows.total_weight
    else:
        b.add_objective(e.index.ravel(), 1.0)
        scale = 1.0
    if gains.constant != 0.0:
        # (BC)'s constant: without it the optimum (and the solver's bound) would be off by it
        b.set_objective_offset(gains.constant * scale)
    return nonconstant, fair


class _LeafGains(NamedTuple):
    r"""The data of (BB5) / (BC) (module docstring, "Cost objective"): the nonzero gains
    :math:`G_{i,k}` as (model row, class, value) triples, row-major, their class totals
    :math:`U_k` (the big-M of ``c``), the objective's constant :math:`C` and (BF)'s floor
    :math:`F_i` per model row."""

    row: np.ndarray
    klass: np.ndarray
    gain: np.ndarray
    total: np.ndarray
    constant: float
    floor: np.ndarray

    @property
    def integral(self) -> bool:
        """Every lost gain is an integer at integer points (BinOCT rounds its bound up)."""
        return bool(np.all(self.gain == np.round(self.gain)))


def _leaf_gains(rows: RowData, losses: np.ndarray | None) -> _LeafGains:
    r"""(BB5)'s gains (the row weights at the true class) or, under a cost objective, those of
    :math:`G = \max_k L_{i,k} - L` (``losses`` on the model rows, model units)."""
    K = rows.n_classes
    if losses is None:
        W_k = np.bincount(rows.y, weights=rows.weight, minlength=K)
        no_floor = np.zeros(rows.n_rows)
        return _LeafGains(np.arange(rows.n_rows), rows.y, rows.weight, W_k, 0.0, no_floor)
    top = losses.max(axis=1)
    G = top[:, None] - losses  # >= 0, exactly 0 at a row's costliest class
    r, k = np.nonzero(G > 0)
    gain = G[r, k]
    total = np.bincount(k, weights=gain, minlength=K)
    # (BF)'s floor: what a row forgoes at its best class, sum_k G - max_k G (0 when the row's
    # costs take two values: every two-class cost, every reduction of odtkit.costs)
    floor = G.sum(axis=1) - G.max(axis=1)
    floor[floor <= 1e-12 * np.maximum(1.0, np.abs(top))] = 0.0  # rounding, not a floor
    return _LeafGains(r, k, gain, total, float(top.sum() - gain.sum()), floor)


# side constraints ------------------------------------------------------------------------------
#: Constraint kinds a model without null splits refuses (``_BinOCTBase._check_side``).
_STRUCTURAL = frozenset({"min_leaf_support", "max_leaves", "feature_budget", "forbid_features"})


def _describe(c: Any) -> str:
    return str(c.describe()) if hasattr(c, "describe") else repr(c)


@dataclass(frozen=True)
class _SidePlan:
    """Which auxiliary variables the side constraints of a model need (computed the same way by
    the build and by ``start``)."""

    occupied: bool  # node occupancy (leaves and, with counted splits, every node)
    counted: np.ndarray  # positions in the model's features whose effective splits are counted


def _side_plan(side: ModelConstraints, features: np.ndarray) -> _SidePlan:
    counted = np.zeros(side.resolved.n_features, dtype=bool)
    for block in side.blocks:
        counted |= np.any(block.per_split != 0, axis=0)
        for g in block.groups:
            counted[g] = True
    positions = np.flatnonzero(counted[features]) if features.size else np.zeros(0, np.int64)
    leaves = any(np.any(block.per_leaf != 0) for block in side.blocks)
    occupied = bool(leaves or side.min_leaf_weight > 0 or positions.size)
    return _SidePlan(occupied=occupied, counted=positions.astype(np.int64))


def _add_side_constraints(
    b: ModelBuilder,
    rows: RowData,
    side: ModelConstraints,
    depth: int,
    features: np.ndarray,
    f: np.ndarray,
    c: np.ndarray,
    q: np.ndarray,
) -> None:
    r"""The blocks of :mod:`odtkit.constraints` (module docstring, "Side constraints").

    ``f`` (n_branch, nJ), ``c`` (n_leaf, K) and ``q`` (m, n_leaf) are the column indices of
    the model's variables. Auxiliary rows: ``side_occupied_*`` (:math:`o_v`: some row reaches
    node v), ``side_effective`` (:math:`h_u = o_{2u} o_{2u+1}`), ``side_split``
    (:math:`s_{u,j} = f_{u,j} h_u`); per constraint ``<name>_used_*`` and the
    :func:`~odtkit.formulations.fairness.add_leaf_products` blocks ``<name>_mass/_on/_off``.
    """
    m = rows.n_rows
    n_branch, n_leaf = 2**depth - 1, 2**depth
    plan = _side_plan(side, features)
    occ = s_eff = None
    if plan.occupied:
        # o_v for the heap nodes 2 .. 2^(D+1)-1 (the root is reached whenever there are rows)
        occ = b.add_vars("occupied", (2 * n_leaf - 2,), "binary").index
        occ_leaf = occ[n_leaf - 2 :]  # heap nodes n_leaf .. 2 n_leaf - 1
        leaf_rows = np.tile(np.arange(n_leaf), m)
        # sum_i q[i, t] <= m o_t and o_t <= sum_i q[i, t]: o_t = [some row reaches leaf t]
        b.add_constraints(
            "side_occupied_leaf",
            np.concatenate(
                [leaf_rows, np.arange(n_leaf), leaf_rows + n_leaf, np.arange(n_leaf) + n_leaf]
            ),
            np.concatenate([q.ravel(), occ_leaf, q.ravel(), occ_leaf]),
            np.concatenate(
                [
                    np.ones(m * n_leaf),
                    np.full(n_leaf, -float(m)),
                    -np.ones(m * n_leaf),
                    np.ones(n_leaf),
                ]
            ),
            "<=",
            np.zeros(2 * n_leaf),
        )
        inner = np.arange(2, n_leaf)  # heap nodes that are neither root nor leaf
        if inner.size:
            n_in = inner.size
            # o_child <= o_v (two rows per node) and o_v <= o_2v + o_2v+1
            local = np.arange(n_in)
            b.add_constraints(
                "side_occupied_inner",
                np.concatenate(
                    [
                        local,
                        local,
                        local + n_in,
                        local + n_in,
                        local + 2 * n_in,
                        local + 2 * n_in,
                        local + 2 * n_in,
                    ]
                ),
                np.concatenate(
                    [
                        occ[2 * inner - 2],
                        occ[inner - 2],
                        occ[2 * inner - 1],
                        occ[inner - 2],
                        occ[inner - 2],
                        occ[2 * inner - 2],
                        occ[2 * inner - 1],
                    ]
                ),
                np.concatenate(
                    [
                        np.ones(n_in),
                        -np.ones(n_in),
                        np.ones(n_in),
                        -np.ones(n_in),
                        np.ones(n_in),
                        -np.ones(n_in),
                        -np.ones(n_in),
                    ]
                ),
                "<=",
                np.zeros(3 * n_in),
            )
        if plan.counted.size:
            u = np.arange(1, n_leaf)  # branch nodes
            h = b.add_vars("effective", (n_branch,), "continuous", lb=0.0, ub=1.0).index
            lo, hi = occ[2 * u - 2], occ[2 * u - 1]
            local = np.arange(n_branch)
            ones = np.ones(n_branch)
            # h <= o_2u, h <= o_2u+1, o_2u + o_2u+1 - h <= 1
            b.add_constraints(
                "side_effective",
                np.concatenate(
                    [
                        local,
                        local,
                        local + n_branch,
                        local + n_branch,
                        local + 2 * n_branch,
                        local + 2 * n_branch,
                        local + 2 * n_branch,
                    ]
                ),
                np.concatenate([h, lo, h, hi, lo, hi, h]),
                np.concatenate([ones, -ones, ones, -ones, ones, ones, -ones]),
                "<=",
                np.concatenate([np.zeros(2 * n_branch), np.ones(n_branch)]),
            )
            nC = plan.counted.size
            s_var = b.add_vars(
                "split_effective",
                (n_branch, nC),
                "continuous",
                lb=0.0,
                ub=1.0,
                labels=(u.tolist(), features[plan.counted].tolist()),
            )
            s_eff = s_var.index
            fs = f[:, plan.counted].ravel()
            hs = np.repeat(h, nC)
            ss = s_eff.ravel()
            n_s = ss.size
            local = np.arange(n_s)
            ones = np.ones(n_s)
            # s <= f, s <= h, f + h - s <= 1
            b.add_constraints(
                "side_split",
                np.concatenate(
                    [
                        local,
                        local,
                        local + n_s,
                        local + n_s,
                        local + 2 * n_s,
                        local + 2 * n_s,
                        local + 2 * n_s,
                    ]
                ),
                np.concatenate([ss, fs, ss, hs, fs, hs, ss]),
                np.concatenate([ones, -ones, ones, -ones, ones, ones, -ones]),
                "<=",
                np.concatenate([np.zeros(2 * n_s), np.ones(n_s)]),
            )
    if side.min_leaf_weight > 0:
        assert occ is not None  # plan.occupied
        # sum_i w_i q[i, t] >= L o_t: every leaf some row reaches receives >= L
        b.add_constraints(
            "min_leaf_support",
            np.concatenate([np.tile(np.arange(n_leaf), m), np.arange(n_leaf)]),
            np.concatenate([q.ravel(), occ[n_leaf - 2 :]]),
            np.concatenate(
                [np.repeat(rows.weight, n_leaf), np.full(n_leaf, -side.min_leaf_weight)]
            ),
            ">=",
            np.zeros(n_leaf),
        )
    # column of feature j's effective-split count per branch node, by position in ``features``
    position = np.full(side.resolved.n_features, -1, dtype=np.int64)
    position[features[plan.counted]] = np.arange(plan.counted.size)
    for block, A in zip(side.blocks, side.prediction, strict=True):
        rr: list[np.ndarray] = []
        cc: list[np.ndarray] = []
        vv: list[np.ndarray] = []
        R = block.n_rows
        if A.nnz:
            sides = prediction_sides(A, rows.n_classes)
            rho = add_leaf_products(b, sides.S, sides.side_class, q, c, block.name).index
            comb = sp.coo_matrix(sides.combine)
            rr.append(np.repeat(comb.row, n_leaf))
            cc.append(rho[:, comb.col].T.ravel())
            vv.append(np.repeat(comb.data, n_leaf))
        if np.any(block.per_leaf != 0):
            assert occ is not None
            rr.append(np.repeat(np.arange(R), n_leaf))
            cc.append(np.tile(occ[n_leaf - 2 :], R))
            vv.append(np.repeat(block.per_leaf, n_leaf))
        if s_eff is not None:
            rj, jj = np.nonzero(block.per_split)
            at = position[jj]
            keep = at >= 0  # a constant feature is never an effective split
            rj, jj, at = rj[keep], jj[keep], at[keep]
            rr.append(np.repeat(rj, n_branch))
            cc.append(s_eff[:, at].T.ravel())
            vv.append(np.repeat(block.per_split[rj, jj], n_branch))
        if block.groups:
            used = _add_group_used(b, block.name, block.groups, position, s_eff)
            rg, gg = np.nonzero(block.per_group)
            rr.append(rg)
            cc.append(used[gg])
            vv.append(block.per_group[rg, gg])
        b.add_range_constraints(
            block.name,
            np.concatenate(rr) if rr else np.zeros(0, np.int64),
            np.concatenate(cc) if cc else np.zeros(0, np.int64),
            np.concatenate(vv) if vv else np.zeros(0),
            lower=block.lower,
            upper=block.upper,
            n_rows=R,
        )


def _add_group_used(
    b: ModelBuilder,
    name: str,
    groups: tuple[np.ndarray, ...],
    position: np.ndarray,
    s_eff: np.ndarray | None,
) -> np.ndarray:
    """Binaries ``used_<name>[g]`` = some effective split tests a feature of group g, exact in
    both directions (a ">=" row or a negative cost needs the upper link too)."""
    n_g = len(groups)
    used = b.add_vars(f"used_{name}", (n_g,), "binary").index
    up_r, up_c, down_r, down_c = [], [], [], []
    n_up = 0
    for gi, g in enumerate(groups):  # groups: raw columns, a handful
        at = position[np.asarray(g, dtype=np.int64)]
        at = at[at >= 0]
        cols = s_eff[:, at].ravel() if s_eff is not None and at.size else np.zeros(0, np.int64)
        # s <= used (one row per split variable), used <= sum s
        up_r.append(n_up + np.arange(cols.size))
        up_c.append(np.stack([cols, np.full(cols.size, used[gi])], axis=1).ravel())
        n_up += cols.size
        down_r.append(np.full(cols.size + 1, gi))
        down_c.append(np.r_[used[gi], cols])
    up_rows = np.repeat(np.concatenate(up_r), 2) if n_up else np.zeros(0, np.int64)
    b.add_constraints(
        f"{name}_used_up",
        up_rows,
        np.concatenate(up_c) if n_up else np.zeros(0, np.int64),
        np.tile([1.0, -1.0], n_up),
        "<=",
        np.zeros(n_up),
    )
    down_cols = np.concatenate(down_c)
    b.add_constraints(
        f"{name}_used_down",
        np.concatenate(down_r),
        down_cols,
        np.where(np.isin(down_cols, used), 1.0, -1.0),
        "<=",
        np.zeros(n_g),
    )
    return used


def _side_start(
    side: ModelConstraints,
    features: np.ndarray,
    depth: int,
    f: np.ndarray,
    c: np.ndarray,
    leaf_of_row: np.ndarray,
    n_classes: int,
) -> dict[str, np.ndarray]:
    """The values of the side constraints' variables for the routing ``leaf_of_row`` of a
    complete tree with tests ``f`` and leaf classes ``c`` (0/1 arrays)."""
    n_leaf = 2**depth
    plan = _side_plan(side, features)
    values: dict[str, np.ndarray] = {}
    occ = np.zeros(2 * n_leaf, dtype=bool)
    occ[n_leaf:] = np.bincount(leaf_of_row, minlength=n_leaf) > 0
    for v in range(n_leaf - 1, 0, -1):
        occ[v] = occ[2 * v] | occ[2 * v + 1]
    s_eff = np.zeros((n_leaf - 1, plan.counted.size))
    if plan.occupied:
        values["occupied"] = occ[2:].astype(float)
        if plan.counted.size:
            u = np.arange(1, n_leaf)
            h = (occ[2 * u] & occ[2 * u + 1]).astype(float)
            values["effective"] = h
            s_eff = f[:, plan.counted] * h[:, None]
            values["split_effective"] = s_eff
    position = np.full(side.resolved.n_features, -1, dtype=np.int64)
    position[features[plan.counted]] = np.arange(plan.counted.size)
    for block, A in zip(side.blocks, side.prediction, strict=True):
        if A.nnz:
            sides = prediction_sides(A, n_classes)
            values[f"rho_{block.name}"] = leaf_product_values(
                sides.S, sides.side_class, leaf_of_row, c
            )
        if block.groups:
            used = np.zeros(len(block.groups))
            for gi, g in enumerate(block.groups):
                at = position[np.asarray(g, dtype=np.int64)]
                at = at[at >= 0]
                used[gi] = float(at.size > 0 and s_eff[:, at].sum() > 0.5)
            values[f"used_{block.name}"] = used
    return values


class _BinOCTBase(TreeFormulation[BinOCTMeta]):
    regularized = False
    default_null_split = False

    def __init__(self, *, null_split: bool | None = None, aggregate: bool = True) -> None:
        super().__init__(aggregate=aggregate)
        self.null_split = self.default_null_split if null_split is None else bool(null_split)

    def _model(self, builder: ModelBuilder, tree: TreeMeta) -> BinOCTMeta:
        side = tree.constraints
        if side is not None:
            self._check_side(side, tree)
        features, fair = _build(
            builder,
            tree.rows,
            tree.max_depth,
            tree.lam,
            regularized=self.regularized,
            null_split=self.null_split,
            name=self.name,
            groups=tree.fairness_groups,
            side=side,
        )
        return tree.extend(
            BinOCTMeta,
            fair_rows=fair,
            null_split=self.null_split,
            regularized=self.regularized,
            features=tuple(features.tolist()),
            carries_costs=True,  # (BC) in every variant: a completion keeps the predictions
        )

    def _check_side(self, side: ModelConstraints, tree: TreeMeta) -> None:
        """Refuse what this model cannot carry exactly (one line naming the constraint)."""
        if self.null_split:
            return
        # without null splits the model describes complete trees of depth D: completing a
        # shallower tree adds leaves and splits (on any feature when none is constant on a
        # leaf's rows), so a structural constraint would cut off feasible trees: BinOCT's
        # error bound would no longer bound their optimum, and either could call a feasible
        # problem infeasible. Predictions (and a required split) survive the completion.
        for c, kind in zip(side.resolved.constraints, side.resolved.kinds, strict=True):
            if kind in _STRUCTURAL:
                raise ValueError(
                    f"{self.name} (null_split=False) cannot carry {kind} ({_describe(c)}) "
                    "exactly: completing a tree to depth D adds leaves and splits; use "
                    "BinOCT(null_split=True) or RBinOCT"
                )

    def _size(self, rows: RowData, depth: int) -> ModelSize:
        """Counted as :func:`_build` adds them: (BB4) dominates, a nonzero per (usable
        feature, row, leaf on one side of each branch node)."""
        m, K, nJ = rows.n_rows, rows.n_classes, nonconstant_features(rows.X)
        n_branch, n_leaf = 2**depth - 1, 2**depth
        null, reg = int(self.null_split), int(self.regularized)
        sides = depth * 2 ** (depth - 1)  # leaves in one subtree, summed over branch nodes
        n_vars = n_branch * (nJ + null) + 2 * n_leaf * K + m * n_leaf + reg * n_leaf
        nonzeros = (
            n_branch * (nJ + null)  # (BB1) / (N1)
            + m * n_leaf  # (BB2)
            + 3 * n_leaf * K  # (BB3), (BB5)'s c and e
            + nJ * (m * sides + n_branch)  # (BB4)
            + m * n_leaf  # (BB5)'s q
            + reg * (m * n_leaf + n_leaf)  # (R1)
            + null * (m * sides + n_branch)  # (N2)
        )
        return ModelSize(n_vars, nonzeros)

    # decoding ----------------------------------------------------------------------------------
    def _tree(self, meta: BinOCTMeta, values: dict[str, np.ndarray]) -> Tree:
        """The tested feature of every branch node (or its null split) and the class of every
        leaf, from the rounded binaries (> 0.5); ``decode`` then makes it canonical."""
        depth, n_classes = meta.max_depth, meta.n_classes
        features = np.asarray(meta.features, dtype=np.int64)
        n_leaf = 2**depth
        f = values["f"].reshape(n_leaf - 1, features.size)
        g = values["g"].reshape(-1) if meta.null_split else np.zeros(n_leaf - 1)
        c = values["c"].reshape(n_leaf, n_classes)

        def node(u: int) -> Tree:
            if u >= n_leaf:
                return Tree.leaf(int(np.argmax(c[u - n_leaf])))
            if g[u - 1] > 0.5 or features.size == 0:
                return node(2 * u)
            return Tree.split(int(features[np.argmax(f[u - 1])]), node(2 * u), node(2 * u + 1))

        return node(1)

    # warm start --------------------------------------------------------------------------------
    def start(self, model: Model[BinOCTMeta], tree: Tree) -> np.ndarray:
        """A complete, feasible MIP start (full column vector) from any tree of depth <= D (§6.3).

        The tree is first pruned of empty sides (``prune_empty``), then completed to depth D:
        with null splits every shallow leaf continues with null splits (its rows go to the
        leftmost descendant leaf; value ``R(prune_empty(T))`` for RBinOCT); without them it
        continues with splits on a feature that is constant on its rows when one exists (the rows
        stay together), otherwise on any usable feature.
        """
        model = check_built_by(model, self)
        meta = model.meta
        tree = check_tree(tree, meta)
        rows, fair = meta.rows, meta.fair_rows
        null_split, regularized = meta.null_split, meta.regularized
        D, X, m = meta.max_depth, rows.X, rows.n_rows
        heap = embed(prune_empty(tree, X), D)
        features = np.asarray(meta.features, dtype=np.int64)
        position = np.full(rows.n_features, -1, dtype=np.int64)
        position[features] = np.arange(features.size)
        n_branch, n_leaf = 2**D - 1, 2**D

        feat = np.full(2 ** (D + 1), NO_FEATURE, dtype=np.int64)
        null = np.zeros(2 ** (D + 1), dtype=bool)
        label = heap.label.copy()
        at = np.ones(m, dtype=np.int64)  # current node of every row, level by level
        for level in range(D):
            for u in range(2**level, 2 ** (level + 1)):
                if heap.feature[u] != NO_FEATURE:
                    feat[u] = heap.feature[u]
                    continue
                # a leaf of the tree above depth D (or a node below one): complete it
                label[2 * u] = label[2 * u + 1] = label[u]
                if null_split:
                    null[u] = True
                    continue
                here = X[at == u]
                constant = (~here.any(axis=0)) | here.all(axis=0)
                usable = features[constant[features]]
                feat[u] = int(usable[0]) if usable.size else int(features[0])
            # rows at a null split go left; X is read only where a feature is tested (with no
            # features at all, every node is a null split and X has no column to read)
            split = np.flatnonzero(~null[at])
            step = np.zeros(m, dtype=np.int64)
            step[split] = X[split, feat[at[split]]]
            at = 2 * at + step
        leaf_of_row = at - n_leaf

        values: dict[str, np.ndarray] = {}
        f = np.zeros((n_branch, features.size))
        split_nodes = np.flatnonzero(~null[1:n_leaf]) + 1
        if features.size:
            if np.any(position[feat[split_nodes]] < 0):
                raise ValueError("the pruned tree splits on a constant feature")  # cannot happen
            f[split_nodes - 1, position[feat[split_nodes]]] = 1.0
        values["f"] = f
        if null_split:
            values["g"] = null[1:n_leaf].astype(float)
        leaf_labels = np.maximum(label[n_leaf:], 0)
        c = np.zeros((n_leaf, rows.n_classes))
        c[np.arange(n_leaf), leaf_labels] = 1.0
        values["c"] = c
        gains = _leaf_gains(rows, None if meta.constraints is None else meta.constraints.losses)
        mass = np.zeros((n_leaf, rows.n_classes))
        np.add.at(mass, (leaf_of_row[gains.row], gains.klass), gains.gain)
        values["e"] = np.where(c > 0.5, 0.0, mass)
        q = np.zeros((m, n_leaf))
        q[np.arange(m), leaf_of_row] = 1.0
        values["q"] = q
        if regularized:
            values["alpha"] = (np.bincount(leaf_of_row, minlength=n_leaf) > 0).astype(float)
        if fair is not None:
            positive_leaf = c[:, fair.positive_code]
            values["rho_fairness"] = leaf_side_values(fair, leaf_of_row, positive_leaf)
        if meta.constraints is not None:
            values.update(
                _side_start(meta.constraints, features, D, f, c, leaf_of_row, rows.n_classes)
            )
        return model.vector(values)


class BinOCT(_BinOCTBase):
    """BinOCT, binary specialization (BB0)-(BB5): minimum misclassified weight, complete depth D.

    Its optimum is the minimum (weighted) number of errors over trees of depth <= D, so it
    declares only ``VALID_BOUND``: :meth:`lower_bound` turns the error bound into one on
    OSDT's OPT(D, lam). ``lam`` is used only when decoded trees are evaluated.
    ``null_split=False`` by default (the original). See the module docstring for the math.
    """

    name = "binoct"
    regularized = False
    default_null_split = False

    _properties = frozenset({VALID_BOUND})

    def lower_bound(self, model: Model[BinOCTMeta], solution: Any) -> float:
        r"""``errors / W + lam`` with ``errors`` the solver's bound on the misclassified weight
        (under a cost objective: ``(lost + C) / W + lam`` with ``lost`` its bound on
        :math:`\sum e` and ``C`` the model's offset, so ``lost + C`` bounds the cost).

        Every tree of depth <= D misclassifies (costs) at least that much and has at least one
        leaf. When every gain (plain: every (merged) row weight) is an integer, ``sum e`` is an
        integer at every integer point, so its bound is rounded up (``ceil(bound - 1e-6)``): a
        solver's bound of 3.999999 certifies 4 errors.
        """
        model = check_built_by(model, self)
        bound = float(solution.lower_bound)
        if math.isnan(bound) or bound == -math.inf:
            return -math.inf
        if bound == math.inf:
            return math.inf
        meta = model.meta
        losses = None if meta.constraints is None else meta.constraints.losses
        lost = bound - model.offset  # the offset is C (0 for the plain objective)
        if _leaf_gains(meta.rows, losses).integral:
            lost = math.ceil(lost - BOUND_TOLERANCE)
        return (max(lost, 0.0) + model.offset) / meta.rows.total_weight + meta.lam


class RBinOCT(_BinOCTBase):
    """Regularized BinOCT (R0)-(R1) in OSDT units, with the null split (N1)-(N2) by default.

    ``null_split=True``: optimum = OSDT's OPT(D, lam) over trees of depth <= D (``EXACT``,
    ``VALID_BOUND``, ``DECODE_NOT_WORSE``).
    ``null_split=False``: the original of OSDT Appendix J (optimum >= OPT, §3.3): only
    ``DECODE_NOT_WORSE``, its bound bounds its own optimum, not OPT.
    See the module docstring for the math.
    """

    name = "rbinoct"
    regularized = True
    default_null_split = True

    @property
    def properties(self) -> frozenset[Property]:
        if self.null_split:
            return frozenset({EXACT, VALID_BOUND, DECODE_NOT_WORSE})
        return frozenset({DECODE_NOT_WORSE})

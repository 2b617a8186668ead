r"""Regularized FlowOCT (Aghaei, Gómez, Vayanos) in OSDT units, leaves at any depth <= D.

Aghaei, Gómez, Vayanos 2021; docs/formulations-trees.md §4. Heap numbering, branch nodes
:math:`\mathcal B = \{1..2^D-1\}`, leaves
:math:`\mathcal L = \{2^D..2^{D+1}-1\}`, all nodes :math:`\mathcal N`, strict ancestors
:math:`A(u)`, features :math:`\mathcal J` (all columns), row weights :math:`\omega_i`
(identical (x, y) rows merged), :math:`W = \sum_i \omega_i`. Variables:
:math:`b_{u,j}\in\{0,1\}` (u branches on j), :math:`p_u\in\{0,1\}` (u predicts),
:math:`w_{u,k}\in[0,1]` (u predicts k), flows :math:`z_{i,u}\in[0,1]` (into u; :math:`z_{i,1}` is
the source arc) and :math:`\zeta_{i,u}\in[0,1]` (u to the sink).

.. math::

    \text{(F0)}\quad & \min\ 1 - \tfrac1W \textstyle\sum_i \omega_i z_{i,1}
        + \lambda \sum_{u\in\mathcal N} p_u \\
    \text{(F1)}\quad & \textstyle\sum_j b_{u,j} + p_u + \sum_{a\in A(u)} p_a = 1
        \quad \forall u\in\mathcal B \\
    \text{(F2)}\quad & p_t + \textstyle\sum_{a\in A(t)} p_a = 1 \quad \forall t\in\mathcal L \\
    \text{(F3)}\quad & \textstyle\sum_k w_{u,k} = p_u \quad \forall u\in\mathcal N \\
    \text{(F4)}\quad & z_{i,u} = z_{i,2u} + z_{i,2u+1} + \zeta_{i,u}
        \quad \forall i, u\in\mathcal B \\
    \text{(F5)}\quad & \zeta_{i,t} = z_{i,t} \quad \forall i, t\in\mathcal L \\
    \text{(F6)}\quad & z_{i,2u} \le \textstyle\sum_{j: x_{ij}=0} b_{u,j}
        \quad \forall i, u\in\mathcal B \\
    \text{(F7)}\quad & z_{i,2u+1} \le \textstyle\sum_{j: x_{ij}=1} b_{u,j}
        \quad \forall i, u\in\mathcal B \\
    \text{(F8)}\quad & \zeta_{i,u} \le w_{u,y_i} \quad \forall i, u\in\mathcal N

**Separation cuts** (ours; not in the paper or odtlearn). Two rows :math:`i, i'` with different
labels that differ only in the features :math:`S_{ii'}` reach the same node, hence the same
prediction, unless some branch node tests a feature of :math:`S_{ii'}`; so at most one of them is
classified correctly unless such a test exists:

.. math::

    \text{(SC)}\quad \omega_i z_{i,1} + \omega_{i'} z_{i',1}
        - \min(\omega_i, \omega_{i'}) \textstyle\sum_{u\in\mathcal B}\sum_{j\in S_{ii'}} b_{u,j}
        \le \max(\omega_i, \omega_{i'})

It holds for every tree (all integer points of (F1)-(F8) stay feasible, so every tree's start
does too) and cuts deep into the LP relaxation, where fractional tests let both rows of a close
pair reach leaves that predict their own labels: on monk1 at D=2, λ=0.01 the root LP bound rises
from 0.058 to 0.137 (optimum 0.217), on monk3 from 0.043 to 0.209 (0.251). One row per pair of
differently labelled rows at Hamming distance ``<= separation_distance`` (closest first, at most
``max_separation_cuts``); identical-x pairs (distance 0) give :math:`z_{i,1} + z_{i',1} \le 1`.
The sum runs over every branch node, so the cut weakens with depth (monk1 D=3: LP bound 0.048
without, 0.079 with, optimum 0.139). A path-aware variant (one variable per pair and node:
"both rows reach u and are both correct") lifted that to 0.096 but doubled the rows and made
HiGHS 2-3x slower at D=2 and D=3, so it is not used.

The constant 1 of (F0) is the model's objective offset, so objective and bound are in OSDT units:
the optimum equals :math:`\mathrm{OPT}(D,\lambda)` (every leaf counts, also an empty one, by
(F-id) :math:`\sum_u p_u = 1 + \sum_{u,j} b_{u,j}`). odtlearn's λ maps as
:math:`\lambda_o = n\lambda/(1+n\lambda)` (F-map).

**Fairness** (``build(..., fairness=)``, §5). The single-sink model cannot
state a row's *predicted* class: :math:`z_{i,1}` is only bounded above by correctness, and
under a side constraint the solver could leave a correctly classified row "unclassified" to
move a disparity. The fair model is §5.1's multi-sink form, every row routed and one sink per
class, built on **cells** :math:`c` (the distinct x; every tree routes and predicts all rows of
a cell alike) with class weights :math:`W_{c,k}` and merged disparity coefficients
:math:`\gamma_{c,j} = \sum_{i\in c}\gamma_{ij}` (:mod:`odtkit.formulations.fairness`):
:math:`b, p` binary, :math:`w` **binary**, :math:`z_{c,u}\in[0,1]`,
:math:`\zeta_{c,u,k}\in[0,1]`, (F1)-(F3), (F6)-(F7) on cells and

.. math::

    \text{(M0)}\quad & \min\ 1 - \tfrac1W \textstyle\sum_{c,u,k} W_{c,k}\zeta_{c,u,k}
        + \lambda \sum_u p_u \\
    \text{(M4)}\quad & z_{c,u} = z_{c,2u} + z_{c,2u+1} + \textstyle\sum_k \zeta_{c,u,k}
        \quad \forall c, u\in\mathcal B \qquad
    \text{(M5)}\quad \textstyle\sum_k \zeta_{c,t,k} = z_{c,t} \quad \forall c, t\in\mathcal L \\
    \text{(M8)}\quad & \zeta_{c,u,k} \le w_{u,k} \qquad
    \text{(M9)}\quad z_{c,1} = 1 \qquad
    \text{(FM)}\quad -\delta \le \textstyle\sum_c \gamma_{c,j}\sum_u \zeta_{c,u,k^+}
        \le \delta \quad \forall j

*Proof of exactness.* Let :math:`(b, p, w)` be integral and satisfy (F1)-(F3): it encodes a
tree :math:`T` of depth :math:`\le D` whose prediction nodes carry the class of their unit
vector :math:`w_{u,\cdot}`. Then (M4)-(M9), (F6)-(F7) have exactly one solution in
:math:`(z, \zeta)`, the 0/1 routing of every cell along its path: at an active branch node
testing :math:`j`, one arc has capacity 0 (the side :math:`x_{cj}` does not lead to) and every
sink has capacity :math:`w_{u,k} \le p_u = 0`, so all the flow entering :math:`u` continues to
the child on the path; at a prediction node the child arcs have capacity
:math:`\sum_j b_{u,j} = 0` and only the sink of its class is open; nodes off the path receive
nothing. So :math:`z, \zeta` need not be declared integer (the solver branches only on :math:`b,
p, w`, not on the flows as odtlearn's binary :math:`z, \zeta` would make it), (M0) equals
:math:`R(T)` (every prediction node counts, (F-id)) and (FM) is exactly :math:`T`'s disparity of
pair j (§5.3 on merged rows). Conversely every δ-fair tree of depth :math:`\le D` gives such a
point (:meth:`FlowOCT.start`). Hence the optimum is the optimal δ-fair tree's :math:`R`, and
decoding through ``canonical`` keeps every training prediction (so the disparities) and never
raises :math:`R`. :math:`w` must be binary: with :math:`w_{u,k^+} = 1/2` a leaf could send half
of each row to either sink, a randomized classifier that can meet (FM) more cheaply than any
tree.

*Separation cuts under fairness* (SC-M): for (x, y) rows :math:`i, i'` with different labels in
different cells :math:`c, c'` differing on :math:`S`,
:math:`\sum_u\zeta_{c,u,y_i} + \sum_u\zeta_{c',u,y_{i'}} - \sum_{u\in\mathcal B,
j\in S} b_{u,j} \le 1`: if both are predicted their labels they reach different prediction
nodes, so a node on their common path tests a feature of :math:`S`. It holds at every tree's
point, so it stays valid with every row routed (the weighted (SC) becomes unweighted because
:math:`\zeta` is now exactly the 0/1 "predicted k").

*Symmetry at* :math:`\lambda = 0` (``symmetry_breaking=True``). (Z1) :math:`p_u = 0` for
:math:`u\in\mathcal B`: a leaf above depth D can be split on any feature with both children
keeping its class, which changes no prediction and, at :math:`\lambda = 0`, no value; so some
optimal tree is complete. (Z2) when :math:`p \ge D`, :math:`b_{a,j} + b_{u,j} \le 1` for every
ancestor :math:`a` of a branch node :math:`u`: a repeated test sends all rows of :math:`u` to
one side; testing instead a feature not on the path (one exists since the path has fewer than
:math:`D \le p` tests) and copying the non-empty side into both children changes no prediction
and keeps the tree complete; applied top-down this removes every repetition. Neither changes the
optimum; the start completes (and first prunes) a tree accordingly.

**Side constraints** (``build(..., constraints=[...])``, :mod:`odtkit.constraints`). Every
:class:`~odtkit.constraints.LinearRows` becomes one block under its name, over leaves
:math:`\sum_u p_u`, splits on :math:`j` :math:`\sum_u b_{u,j}`, a binary :math:`g_G` per
feature group (blocks ``<name>_used_lo`` :math:`g_G \ge b_{u,j}` and ``<name>_used_hi``
:math:`g_G \le \sum_{u, j\in G} b_{u,j}`, so :math:`g_G` is exactly "G is tested") and
predictions. Those count the *raw* tree, while a constraint is measured on the *returned* one
(``canonical``: empty sides pruned, equal sibling leaves merged unless a RequireFeatures is
stated). Which model:

* Only *monotone* blocks (no prediction, upper bounds only, non-negative leaf/split/group
  coefficients: MaxLeaves, FeatureBudget, ForbidFeatures): the single-sink model (F0)-(F8)
  with the raw counts. Decoding only removes leaves and splits, so a raw tree within the
  bounds decodes into one within them (never worse, DECODE_NOT_WORSE); conversely the
  returned form of an optimal feasible tree has every split effective, so its raw and
  returned counts agree and it is a point of the model. Exact.
* Anything else (a prediction row, a minimum leaf support, RequireFeatures' lower bound):
  the multi-sink model on cells, where routing is exact (see the proof above). A row's
  prediction is :math:`\sum_u \zeta_{c(r),u,k}`: the per-merged-row coefficients of
  :class:`~odtkit.formulations.constraints.ModelConstraints` are summed onto the cell's sinks.
  When some block reads the shape (leaves, splits, groups) or a support is stated, also

  .. math::

      \text{(E)}\quad & \textstyle\sum_c z_{c,\mathrm{child}} \ge \sum_j b_{u,j}
          \quad \forall u\in\mathcal B,\ \mathrm{child}\in\{2u, 2u+1\} \\
      \text{(S)}\quad & \textstyle\sum_c W_c z_{c,u} \ge L\, p_u \quad \forall u\in\mathcal N

  (``split_effective``, ``min_leaf_support``; :math:`W_c` the cell's weight and :math:`L` the
  support, both in model units; every cell has positive weight). Under (E) every split of the
  raw tree is effective and every leaf non-empty, so the raw tree *is* the returned one up to
  merging equal leaves, which only happens without a RequireFeatures and only lowers leaves,
  splits and tested groups (the vocabulary's shape coefficients are upper-bounded and
  non-negative except RequireFeatures', and merging raises a leaf's support): the counts are
  exact for every block. Every tree's returned form satisfies (E), and (S) exactly when all
  its leaves are supported, so the optimum is the optimal feasible tree's. (Z1)/(Z2) are left
  out when the shape is read: completing a tree adds leaves and non-effective splits.

**Cost objectives** (:mod:`odtkit.costs`, stated in ``constraints=``). A cost prices every
row's *predicted* class, which only the multi-sink model states, so a stated cost always takes
it (with or without other constraints). With :math:`L_{c,k} = \sum_{i\in c} L_{i,k}` the
losses of the model rows of cell :math:`c` (``ModelConstraints.losses``, model units), (M0)
becomes

.. math::

    \text{(MC)}\quad \min\ \tfrac1W \textstyle\sum_{c,u,k} L_{c,k}\,\zeta_{c,u,k}
        + \lambda \textstyle\sum_u p_u

with no constant: at every tree's point each cell leaves through exactly the sink of its
predicted class, so (MC) is the tree's cost objective and the proof above goes through word for
word (for any K and any losses, negative ones included). (M0) is (MC) with
:math:`L_{c,k} = W_c - W_{c,k}`, the plain objective's losses. (Z1)/(Z2) change no prediction,
hence no cost, and stay; so do the separation cuts (they hold at every tree's point).

The separation cuts stay valid: (SC) and (SC-M) hold at the point of every tree, and the
side constraints only remove points, never change what :math:`z, \zeta` mean.

*Sparser arcs* (fair model): a row of (F6)/(F7) with more features on its side than off it is
written in its complement form through (F1), :math:`z_{c,\mathrm{child}} + \sum_{j:
x_{cj}\ne\mathrm{side}} b_{u,j} + p_u + \sum_{a\in A(u)} p_a \le 1` (the same row): on one-hot
data the left arcs drop from about :math:`p` to about (ones + depth) nonzeros.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from odtkit._validation import check_depth
from odtkit.constraints import LinearRows
from odtkit.datasets._dataset import unique_rows
from odtkit.fairness import FairnessGroups
from odtkit.formulations._base import DECODE_NOT_WORSE, EXACT, VALID_BOUND, check_built_by
from odtkit.formulations._common import (
    NO_FEATURE,
    ModelSize,
    RowData,
    TreeFormulation,
    TreeMeta,
    ancestor_pairs,
    branch_nodes,
    check_tree,
    complete_tree,
    embed,
    node_depth,
    paths,
    prune_empty,
    separation_pairs,
)
from odtkit.formulations.constraints import ModelConstraints
from odtkit.formulations.fairness import FairRows, add_fairness_rows, merge_groups
from odtkit.model import Model, ModelBuilder
from odtkit.tree import Tree

__all__ = ["Cells", "FlowOCT", "FlowOCTMeta"]


def _add_structure(bld: ModelBuilder, b: Any, pv: Any, w: Any, depth: int) -> None:
    """(F1) + (F2) and (F3): the tree structure and one class per prediction node."""
    n_nodes, p, K = 2 ** (depth + 1) - 1, b.shape[1], w.shape[1]
    branches = branch_nodes(depth)
    nodes = np.arange(1, n_nodes + 1, dtype=np.int64)
    # (F1) + (F2): one row per node: branches (branch nodes only), predicts, or an ancestor predicts
    node_u, anc = ancestor_pairs(nodes)
    bld.add_constraints(
        "structure",
        np.concatenate([np.repeat(branches - 1, p), nodes - 1, node_u - 1]),
        np.concatenate([b.index.ravel(), pv.index, pv.index[anc - 1]]),
        1.0,
        "==",
        np.ones(n_nodes),
    )
    # (F3): a prediction node picks one class, other nodes none
    bld.add_constraints(
        "one_class",
        np.concatenate([np.repeat(nodes - 1, K), nodes - 1]),
        np.concatenate([w.index.ravel(), pv.index]),
        np.concatenate([np.ones(n_nodes * K), -np.ones(n_nodes)]),
        "==",
        np.zeros(n_nodes),
    )


def _add_flow(bld: ModelBuilder, z: Any, zeta: Any, depth: int) -> None:
    """Flow conservation, rows (i, u) -> i * n_branch + (u - 1): (F4)/(M4) at branch nodes
    ``z[i, u] = z[i, 2u] + z[i, 2u+1] + sum_k zeta[i, u, k]`` and (F5)/(M5) at the last level
    ``sum_k zeta[i, u, k] = z[i, u]``. ``zeta`` has one sink per node (F) or per node and class
    (M, a third axis)."""
    m, n_nodes = z.shape
    zi = zeta.index.reshape(m, n_nodes, -1)
    K = zi.shape[2]
    n_branch = 2**depth - 1
    i_b = np.repeat(np.arange(m), n_branch)
    u_b = np.tile(branch_nodes(depth), m)
    local = i_b * n_branch + (u_b - 1)
    bld.add_constraints(
        "flow_branch",
        np.concatenate([np.tile(local, 3), np.repeat(local, K)]),
        np.concatenate(
            [
                z.index[i_b, u_b - 1],
                z.index[i_b, 2 * u_b - 1],
                z.index[i_b, 2 * u_b],
                zi[i_b, u_b - 1].ravel(),
            ]
        ),
        np.concatenate([np.repeat([1.0, -1.0, -1.0], local.size), -np.ones(local.size * K)]),
        "==",
        np.zeros(m * n_branch),
    )
    leaves = np.arange(n_branch + 1, n_nodes + 1, dtype=np.int64)
    i_l = np.repeat(np.arange(m), leaves.size)
    t_l = np.tile(leaves, m)
    local_l = np.arange(i_l.size)
    bld.add_constraints(
        "flow_leaf",
        np.concatenate([np.repeat(local_l, K), local_l]),
        np.concatenate([zi[i_l, t_l - 1].ravel(), z.index[i_l, t_l - 1]]),
        np.concatenate([np.ones(local_l.size * K), -np.ones(local_l.size)]),
        "==",
        np.zeros(local_l.size),
    )


def _add_arcs(bld: ModelBuilder, X: np.ndarray, b: Any, z: Any, pv: Any = None) -> None:
    """(F6) / (F7): arc capacities from the tested feature's value, rows (i, u) -> i*|B| + u-1.

    With ``pv`` (the p columns), a row whose side has more features than the other is written
    in its complement form, the same row by (F1) (``sum_j b_uj = 1 - p_u - sum_{a in A(u)}
    p_a``): ``z_{i,child} + sum_{j: x_ij != side} b_{u,j} + p_u + sum_a p_a <= 1``. On one-hot
    data most x are 0, so the left arcs shrink from ~p to ~(ones + depth) nonzeros each.
    """
    m, n_branch = X.shape[0], b.shape[0]
    branches = np.arange(1, n_branch + 1, dtype=np.int64)
    i_b = np.repeat(np.arange(m), n_branch)
    u_b = np.tile(branches, m)
    local = i_b * n_branch + (u_b - 1)
    depth_u = node_depth(branches)
    for side, name_ in ((0, "arc_left"), (1, "arc_right")):
        on_side = X == bool(side)
        if pv is None:
            flip = np.zeros(m, dtype=bool)
        else:
            count = on_side.sum(axis=1)
            flip = count > X.shape[1] - count + 1 + int(depth_u.max())
        # direct rows: z - sum_{j: x_ij = side} b[u, j] <= 0; flipped: z + sum_{x_ij != side} b
        # + p_u + sum_a p_a <= 1
        ii, jj = np.nonzero(np.where(flip[:, None], ~on_side, on_side))
        rr = (ii[:, None] * n_branch + (branches[None, :] - 1)).ravel()
        cc = b.index[(branches[None, :] - 1), jj[:, None]].ravel()
        vv = np.repeat(np.where(flip[ii], 1.0, -1.0), n_branch)
        rows_, cols_, vals_ = (
            [local, rr],
            [z.index[i_b, 2 * u_b - 1 + side], cc],
            [
                np.ones(local.size),
                vv,
            ],
        )
        if flip.any():
            fi = np.flatnonzero(flip)
            node_u, anc = ancestor_pairs(branches)
            for us, ps in ((branches, branches), (node_u, anc)):
                r_f = (fi[:, None] * n_branch + (us[None, :] - 1)).ravel()
                rows_.append(r_f)
                cols_.append(np.tile(pv.index[ps - 1], fi.size))
                vals_.append(np.ones(r_f.size))
        rhs = np.repeat(flip.astype(float), n_branch)
        bld.add_constraints(
            name_,
            np.concatenate(rows_),
            np.concatenate(cols_),
            np.concatenate(vals_),
            "<=",
            rhs,
        )


def _build(
    bld: ModelBuilder,
    rows: RowData,
    depth: int,
    lam: float,
    *,
    binary_w: bool,
    separation_distance: int | None,
    max_separation_cuts: int | None,
    side: ModelConstraints | None = None,
) -> None:
    m, K, p = rows.n_rows, rows.n_classes, rows.n_features
    n_branch, n_nodes = 2**depth - 1, 2 ** (depth + 1) - 1
    branches = branch_nodes(depth)
    nodes = np.arange(1, n_nodes + 1, dtype=np.int64)

    b = bld.add_vars("b", (n_branch, p), "binary", labels=(branches.tolist(), list(range(p))))
    pv = bld.add_vars("p", (n_nodes,), "binary", labels=(nodes.tolist(),))
    w = bld.add_vars("w", (n_nodes, K), "binary" if binary_w else "continuous", lb=0.0, ub=1.0)
    z = bld.add_vars("z", (m, n_nodes), "continuous", lb=0.0, ub=1.0)
    zeta = bld.add_vars("zeta", (m, n_nodes), "continuous", lb=0.0, ub=1.0)

    _add_structure(bld, b, pv, w, depth)
    _add_flow(bld, z, zeta, depth)  # (F4), (F5)
    _add_arcs(bld, rows.X, b, z)
    # (F8): a row reaches the sink at u only if u predicts its class
    i_n = np.repeat(np.arange(m), n_nodes)
    u_n = np.tile(nodes, m)
    local_n = np.arange(i_n.size)
    bld.add_constraints(
        "sink",
        np.tile(local_n, 2),
        np.concatenate([zeta.index[i_n, u_n - 1], w.index[u_n - 1, rows.y[i_n]]]),
        np.repeat([1.0, -1.0], local_n.size),
        "<=",
        np.zeros(local_n.size),
    )
    if separation_distance is not None:
        _add_separation_cuts(bld, rows, b, z, separation_distance, max_separation_cuts)
    if side is not None:
        # monotone blocks only (_needs_routing): raw counts of leaves and splits
        _add_side_constraints(bld, side, b, pv, None)
    # (F0): 1 - correct weight / W + lam * (number of prediction nodes)
    bld.add_objective(z.index[:, 0], -rows.weight / rows.total_weight)
    bld.add_objective(pv.index, lam)
    bld.set_objective_offset(1.0)


def _shapes_tree(side: ModelConstraints | None) -> bool:
    """Whether ``side`` reads the tree's shape (leaves, splits, tested groups, leaf support)."""
    if side is None:
        return False
    return side.min_leaf_weight > 0 or any(
        b.per_leaf.any() or b.per_split.any() or b.per_group.any() for b in side.blocks
    )


def _monotone(block: LinearRows) -> bool:
    """An upper bound on non-negative leaf / split / group counts, no prediction: decoding
    (which only removes splits and leaves) never breaks it, so raw counts state it exactly."""
    return (
        not block.reads_predictions
        and bool(np.all(np.isneginf(block.lower)))
        and bool(np.all(block.per_leaf >= 0))
        and bool(np.all(block.per_split >= 0))
        and bool(np.all(block.per_group >= 0))
    )


def _needs_routing(side: ModelConstraints | None) -> bool:
    """Whether ``side`` needs every row routed (the multi-sink model on cells): a prediction,
    a leaf's support, a lower bound on splits (RequireFeatures: effective splits only) or a
    cost objective (it prices every row's predicted class)."""
    if side is None:
        return False
    return (
        side.losses is not None
        or side.min_leaf_weight > 0
        or not all(_monotone(b) for b in side.blocks)
    )


def _add_side_constraints(
    bld: ModelBuilder,
    side: ModelConstraints,
    b: Any,
    pv: Any,
    predicted: tuple[np.ndarray, np.ndarray] | None,
) -> None:
    r"""One block per :class:`~odtkit.constraints.LinearRows`, under its name (module docstring,
    *Side constraints*): leaves :math:`\sum_u p_u`, splits on j :math:`\sum_u b_{u,j}`, a group
    tested :math:`g_G` (a binary with :math:`g_G \ge b_{u,j}` and :math:`g_G \le \sum b_{u,j}`
    over :math:`j\in G`, blocks ``<name>_used_lo`` / ``<name>_used_hi``) and predictions through
    ``predicted``: (row, column) pairs with "model row r is predicted k" (row ``r * K + k``) the
    sum of its columns."""
    n_branch, p = b.shape
    # sum_u b[u, j] and sum_u p_u as (1 or p, n_vars) selectors, widened as groups add columns
    split_r = np.tile(np.arange(p), n_branch)
    split_c = b.index.ravel()
    for block, A in zip(side.blocks, side.prediction, strict=True):
        used = None
        if block.groups and block.per_group.any():
            G = len(block.groups)
            used = bld.add_vars(f"used_{block.name}", (G,), "binary")
            sizes = np.array([g.size for g in block.groups], dtype=np.int64)
            members = np.concatenate(block.groups).astype(np.int64)
            of_group = np.repeat(np.arange(G), sizes)
            # used_lo: used_g >= b[u, j] for every branch node u and j in g (one row each)
            n_lo = members.size * n_branch
            r_lo = np.arange(n_lo)
            bld.add_constraints(
                f"{block.name}_used_lo",
                np.tile(r_lo, 2),
                np.concatenate(
                    [
                        np.repeat(used.index[of_group], n_branch),
                        b.index[:, members].T.ravel(),
                    ]
                ),
                np.repeat([1.0, -1.0], n_lo),
                ">=",
                np.zeros(n_lo),
            )
            # used_hi: used_g <= sum over u and j in g of b[u, j]
            bld.add_constraints(
                f"{block.name}_used_hi",
                np.concatenate([np.arange(G), np.repeat(of_group, n_branch)]),
                np.concatenate([used.index, b.index[:, members].T.ravel()]),
                np.concatenate([np.ones(G), -np.ones(n_lo)]),
                "<=",
                np.zeros(G),
            )
        n_vars = bld.n_vars
        split_sel = sp.csr_matrix((np.ones(split_c.size), (split_r, split_c)), shape=(p, n_vars))
        leaf_sel = sp.csr_matrix(
            (np.ones(pv.size), (np.zeros(pv.size, dtype=np.int64), pv.index)), shape=(1, n_vars)
        )
        M = (
            sp.csr_matrix(block.per_leaf[:, None]) @ leaf_sel
            + sp.csr_matrix(block.per_split) @ split_sel
        )
        if used is not None:
            G = len(block.groups)
            group_sel = sp.csr_matrix((np.ones(G), (np.arange(G), used.index)), shape=(G, n_vars))
            M = M + sp.csr_matrix(block.per_group) @ group_sel
        if A.nnz:
            if predicted is None:  # pragma: no cover - _needs_routing chose the model
                raise AssertionError("a prediction row in a model that cannot state predictions")
            p_rows, p_cols = predicted
            P = sp.csr_matrix((np.ones(p_rows.size), (p_rows, p_cols)), shape=(A.shape[1], n_vars))
            M = M + A @ P
        bld.add_range_constraints(
            block.name, matrix=sp.csr_matrix(M), lower=block.lower, upper=block.upper
        )


@dataclass(frozen=True)
class Cells:
    """The distinct x of a model's rows: every tree routes (and predicts) a cell as one.

    ``X`` (m, p) the cells, ``weight`` (m, K) each cell's weight per class, ``of_row`` the cell
    of each :class:`RowData` row.
    """

    X: np.ndarray
    weight: np.ndarray
    of_row: np.ndarray

    @property
    def n_cells(self) -> int:
        return int(self.X.shape[0])


def _cells(rows: RowData, aggregate: bool) -> Cells:
    """Merge the (x, y) rows with equal x (or keep every row a cell when not ``aggregate``)."""
    if aggregate:
        first, of_row = unique_rows(rows.X)
        X = rows.X[first]
    else:
        X, of_row = rows.X, np.arange(rows.n_rows)
    weight = np.zeros((X.shape[0], rows.n_classes))
    np.add.at(weight, (of_row, rows.y), rows.weight)
    return Cells(np.ascontiguousarray(X, dtype=bool), weight, of_row.astype(np.int64))


class _FairParts(NamedTuple):
    cells: Cells
    fair: FairRows | None
    complete: bool
    distinct: bool


@dataclass(frozen=True, kw_only=True, eq=False)
class FlowOCTMeta(TreeMeta):
    """The meta of a FlowOCT model: :class:`~odtkit.formulations.TreeMeta` and the choices.

    Attributes
    ----------
    binary_w : bool
    separation_distance, max_separation_cuts : int or None
        The separation cuts the model has (``max_separation_cuts`` resolved to a number).
    cells : Cells or None
        The multi-sink model's cells (None in the single-sink model: no fairness, and no side
        constraint that needs every row routed).
    complete_trees, distinct_path_features : bool
        The fair model's symmetry breaking at ``lam = 0``, (Z1) and (Z2).
    """

    binary_w: bool
    separation_distance: int | None
    max_separation_cuts: int | None
    cells: Cells | None = None
    complete_trees: bool = False
    distinct_path_features: bool = False

    @property
    def fair_X(self) -> np.ndarray:
        """The fair model's fairness block counts cells."""
        return self.rows.X if self.cells is None else self.cells.X


def _build_fair(
    bld: ModelBuilder,
    rows: RowData,
    depth: int,
    lam: float,
    groups: FairnessGroups | None,
    *,
    aggregate: bool,
    separation_distance: int | None,
    max_separation_cuts: int | None,
    symmetry_breaking: bool,
    side: ModelConstraints | None = None,
) -> _FairParts:
    """The multi-sink model (module docstring, (M0)-(M9) on cells) with the fairness block of
    ``groups`` and the side constraints ``side`` (either may be None)."""
    cells = _cells(rows, aggregate)
    m, K, p = cells.n_cells, rows.n_classes, rows.n_features
    n_branch, n_nodes = 2**depth - 1, 2 ** (depth + 1) - 1
    branches = branch_nodes(depth)
    nodes = np.arange(1, n_nodes + 1, dtype=np.int64)
    cell_of_data_row = np.where(rows.source >= 0, cells.of_row[rows.source], -1)
    fair = None if groups is None else merge_groups(groups, cell_of_data_row, m)
    # (Z1)/(Z2) at lam = 0: complete trees only, with distinct features on every path; not
    # when a constraint reads the tree's shape (completing a tree adds leaves and splits)
    shaped = _shapes_tree(side)
    complete = symmetry_breaking and lam == 0.0 and not shaped
    distinct = complete and p >= depth
    b = bld.add_vars("b", (n_branch, p), "binary", labels=(branches.tolist(), list(range(p))))
    p_ub = np.ones(n_nodes)
    if complete:
        p_ub[:n_branch] = 0.0  # (Z1): no prediction above the last level
    pv = bld.add_vars("p", (n_nodes,), "binary", ub=p_ub, labels=(nodes.tolist(),))
    w = bld.add_vars("w", (n_nodes, K), "binary", ub=p_ub[:, None])
    # (M9) as a bound: every cell enters the root
    z_lb = np.zeros((m, n_nodes))
    z_lb[:, 0] = 1.0
    z = bld.add_vars("z", (m, n_nodes), "continuous", lb=z_lb, ub=1.0)
    zeta_ub = np.broadcast_to(p_ub[None, :, None], (m, n_nodes, K))
    zeta = bld.add_vars("zeta", (m, n_nodes, K), "continuous", lb=0.0, ub=zeta_ub)

    _add_structure(bld, b, pv, w, depth)
    if distinct:
        # (Z2): a branch node never tests a feature an ancestor tests
        node_u, anc = ancestor_pairs(branches)
        pairs = np.repeat(np.arange(node_u.size), p) * p + np.tile(np.arange(p), node_u.size)
        bld.add_constraints(
            "distinct_path",
            np.concatenate([pairs, pairs]),
            np.concatenate([b.index[node_u - 1].ravel(), b.index[anc - 1].ravel()]),
            1.0,
            "<=",
            np.ones(node_u.size * p),
        )
    _add_flow(bld, z, zeta, depth)  # (M4), (M5)
    _add_arcs(bld, cells.X, b, z, pv)
    # (M8): a cell leaves to the sink of class k at u only if u predicts k (at the nodes that
    # may predict)
    sinks = nodes[p_ub > 0]
    size = m * sinks.size * K
    c_n = np.repeat(np.arange(m), sinks.size * K)
    u_n = np.tile(np.repeat(sinks, K), m)
    k_n = np.tile(np.arange(K), m * sinks.size)
    local_n = np.arange(size)
    bld.add_constraints(
        "sink",
        np.tile(local_n, 2),
        np.concatenate([zeta.index[c_n, u_n - 1, k_n], w.index[u_n - 1, k_n]]),
        np.repeat([1.0, -1.0], size),
        "<=",
        np.zeros(size),
    )
    if separation_distance is not None:
        _add_cell_separation_cuts(
            bld, rows, cells, b, zeta, separation_distance, max_separation_cuts
        )
    if fair is not None:
        # (FM): the positive prediction of cell c is sum_u zeta[c, u, k+]
        positive = sp.csr_matrix(
            (
                np.ones(m * n_nodes),
                (np.repeat(np.arange(m), n_nodes), zeta.index[:, :, fair.positive_code].ravel()),
            ),
            shape=(m, bld.n_vars),
        )
        add_fairness_rows(bld, fair, positive)
    if side is not None:
        _add_routed_constraints(bld, rows, cells, side, b, pv, z, zeta, shaped)
    losses = None if side is None else side.losses
    if losses is None:
        # (M0): 1 - correct weight / W + lam * (number of prediction nodes)
        gain = np.broadcast_to(cells.weight[:, None, :], (m, n_nodes, K))
        bld.add_objective(zeta.index.ravel(), -gain.ravel() / rows.total_weight)
        bld.add_objective(pv.index, lam)
        bld.set_objective_offset(1.0)
    else:
        # (MC): a cost objective prices each cell's sink of class k with its rows' losses
        cell_loss = np.zeros((m, K))
        np.add.at(cell_loss, cells.of_row, losses)
        price = np.broadcast_to(cell_loss[:, None, :], (m, n_nodes, K))
        bld.add_objective(zeta.index.ravel(), price.ravel() / rows.total_weight)
        bld.add_objective(pv.index, lam)
    return _FairParts(cells, fair, complete, distinct)


def _add_routed_constraints(
    bld: ModelBuilder,
    rows: RowData,
    cells: Cells,
    side: ModelConstraints,
    b: Any,
    pv: Any,
    z: Any,
    zeta: Any,
    shaped: bool,
) -> None:
    """The side constraints in the multi-sink model (module docstring, *Side constraints*):
    (E) every split effective and (S) every prediction node's support when ``shaped``, then
    the named blocks, predictions read from the sinks."""
    m, n_nodes = z.shape
    n_branch = b.shape[0]
    if shaped:
        # (E): a branch node's children each receive a cell when it splits,
        # sum_c z[c, child] >= sum_j b[u, j]
        branches = np.arange(1, n_branch + 1, dtype=np.int64)
        child = np.concatenate([2 * branches, 2 * branches + 1])
        r_z = np.repeat(np.arange(child.size), m)
        r_b = np.repeat(np.arange(child.size), b.shape[1])
        parent = np.concatenate([branches, branches])
        bld.add_constraints(
            "split_effective",
            np.concatenate([r_z, r_b]),
            np.concatenate([z.index[:, child - 1].T.ravel(), b.index[parent - 1].ravel()]),
            np.concatenate([np.ones(r_z.size), -np.ones(r_b.size)]),
            ">=",
            np.zeros(child.size),
        )
    if side.min_leaf_weight > 0:
        # (S): sum_c W_c z[c, u] >= L p_u at every node (the cells' routing is exact)
        support = cells.weight.sum(axis=1)
        r_z = np.repeat(np.arange(n_nodes), m)
        bld.add_constraints(
            "min_leaf_support",
            np.concatenate([r_z, np.arange(n_nodes)]),
            np.concatenate([z.index.T.ravel(), pv.index]),
            np.concatenate([np.tile(support, n_nodes), np.full(n_nodes, -side.min_leaf_weight)]),
            ">=",
            np.zeros(n_nodes),
        )
    # "model row r is predicted k" = sum_u zeta[cell(r), u, k], at row r * K + k
    K = rows.n_classes
    r_idx = np.repeat(np.arange(rows.n_rows * K), n_nodes)
    cell_k = zeta.index[cells.of_row].transpose(0, 2, 1)  # (n_rows, K, n_nodes)
    _add_side_constraints(bld, side, b, pv, (r_idx, cell_k.ravel()))


def _add_cell_separation_cuts(
    bld: ModelBuilder,
    rows: RowData,
    cells: Cells,
    b: Any,
    zeta: Any,
    max_distance: int,
    max_cuts: int | None,
) -> None:
    """(SC-M): (x, y) rows i, i' with different labels in different cells c, c' are both
    predicted their labels only if some branch node tests a feature on which they differ."""
    first, second, differ = separation_pairs(rows, max_distance, max_cuts)
    cf, cs = cells.of_row[first], cells.of_row[second]
    keep = cf != cs  # equal x: implied by the flow (a cell leaves to one sink)
    first, second, differ, cf, cs = first[keep], second[keep], differ[keep], cf[keep], cs[keep]
    if first.size == 0:
        return
    n_branch, n_nodes = b.shape[0], zeta.shape[1]
    pairs = np.arange(first.size)
    pair_z = np.repeat(pairs, n_nodes)
    pair, feat = np.nonzero(differ)
    pair_b = np.repeat(pair, n_branch)
    col_b = b.index[np.tile(np.arange(n_branch), pair.size), np.repeat(feat, n_branch)]
    bld.add_constraints(
        "separation",
        np.concatenate([pair_z, pair_z, pair_b]),
        np.concatenate(
            [
                zeta.index[cf, :, rows.y[first]].ravel(),
                zeta.index[cs, :, rows.y[second]].ravel(),
                col_b,
            ]
        ),
        np.concatenate([np.ones(2 * pair_z.size), -np.ones(pair_b.size)]),
        "<=",
        np.ones(first.size),
    )


def _add_separation_cuts(
    bld: ModelBuilder,
    rows: RowData,
    b: Any,
    z: Any,
    max_distance: int,
    max_cuts: int | None,
) -> None:
    """(SC) for every close pair of differently labelled rows, one row per pair."""
    first, second, differ = separation_pairs(rows, max_distance, max_cuts)
    if first.size == 0:
        return
    n_branch = b.shape[0]
    pair, feat = np.nonzero(differ)  # (pair, feature) on which it differs
    pair_b = np.repeat(pair, n_branch)
    col_b = b.index[np.tile(np.arange(n_branch), pair.size), np.repeat(feat, n_branch)]
    w_first, w_second = rows.weight[first], rows.weight[second]
    lighter = np.minimum(w_first, w_second)
    pairs = np.arange(first.size)
    bld.add_constraints(
        "separation",
        np.concatenate([pairs, pairs, pair_b]),
        np.concatenate([z.index[first, 0], z.index[second, 0], col_b]),
        np.concatenate([w_first, w_second, -lighter[pair_b]]),
        "<=",
        np.maximum(w_first, w_second),
    )


class FlowOCT(TreeFormulation[FlowOCTMeta]):
    """Regularized FlowOCT (F0)-(F8): optimum = OSDT's OPT(D, lam), leaves at any depth <= D.

    Declares ``EXACT``, ``VALID_BOUND`` and ``DECODE_NOT_WORSE``.

    Parameters
    ----------
    binary_w : bool
        Declare the class variables w binary (the paper) instead of continuous (odtlearn). The
        fair model always declares them binary (module docstring).
    aggregate : bool
        Merge identical (x, y) rows into one weighted row.
    separation_distance : int or None
        Add the separation cuts (SC) for differently labelled rows at Hamming distance at most
        this (default 3; None leaves them out, which gives the paper's formulation). One-hot
        features put rows that differ in one attribute at distance 2, tic-tac-toe's nearest
        differently labelled boards at distance 3.
    max_separation_cuts : int or None
        At most this many (SC) rows, closest pairs first (None: four per data row, which keeps
        the cut rows below the flow rows of a depth-2 model).
    symmetry_breaking : bool
        In the fair model at ``lam = 0``, describe only complete trees with distinct features
        on every path, (Z1)-(Z2) (same optimum; default True).

    With ``build(..., fairness=Fairness(...))`` the model is the multi-sink form on cells with
    the fairness block (module docstring); it is ``EXACT`` for the fair problem (its optimum is
    the optimal δ-fair tree of depth <= D), its bound is valid for it and the decoded tree is
    never worse. Its LP bound is weak at ``lam = 0`` (rows route themselves fractionally: about
    0.008 error at the root on german-credit at depth 2, optimum 0.27), so HiGHS certifies by
    enumeration; :class:`~odtkit.formulations.PathOCT` has an integral LP relaxation for
    shallow trees. See the module docstring for the math.

    With ``build(..., constraints=[...])`` (:mod:`odtkit.constraints`) every constraint is a
    block under its name, in the single-sink model when it only bounds leaves, split costs and
    forbidden features from above, else in the multi-sink one (module docstring, *Side
    constraints*); EXACT for the constrained problem. A cost objective stated there
    (:mod:`odtkit.costs`) is minimized in the multi-sink model (module docstring, *Cost
    objectives*).
    """

    name = "flowoct"

    def __init__(
        self,
        *,
        binary_w: bool = False,
        aggregate: bool = True,
        separation_distance: int | None = 3,
        max_separation_cuts: int | None = None,
        symmetry_breaking: bool = True,
    ) -> None:
        super().__init__(aggregate=aggregate)
        self.binary_w = bool(binary_w)
        self.symmetry_breaking = bool(symmetry_breaking)
        self.separation_distance = check_depth(separation_distance, "separation_distance")
        self.max_separation_cuts = check_depth(max_separation_cuts, "max_separation_cuts")

    _properties = frozenset({EXACT, VALID_BOUND, DECODE_NOT_WORSE})

    def _model(self, builder: ModelBuilder, tree: TreeMeta) -> FlowOCTMeta:
        rows, groups, side = tree.rows, tree.fairness_groups, tree.constraints
        max_cuts = self.max_separation_cuts
        max_cuts = 4 * rows.n_rows if max_cuts is None else max_cuts
        if groups is not None or _needs_routing(side):
            fair = _build_fair(
                builder,
                rows,
                tree.max_depth,
                tree.lam,
                groups,
                aggregate=self.aggregate,
                separation_distance=self.separation_distance,
                max_separation_cuts=max_cuts,
                symmetry_breaking=self.symmetry_breaking,
                side=side,
            )
            return tree.extend(
                FlowOCTMeta,
                fair_rows=fair.fair,
                binary_w=True,
                separation_distance=self.separation_distance,
                max_separation_cuts=max_cuts,
                cells=fair.cells,
                complete_trees=fair.complete,
                distinct_path_features=fair.distinct,
                carries_costs=True,  # (MC) reads constraints.losses when a cost is stated
            )
        _build(
            builder,
            rows,
            tree.max_depth,
            tree.lam,
            binary_w=self.binary_w,
            separation_distance=self.separation_distance,
            max_separation_cuts=max_cuts,
            side=side,
        )
        return tree.extend(
            FlowOCTMeta,
            binary_w=self.binary_w,
            separation_distance=self.separation_distance,
            max_separation_cuts=max_cuts,
            carries_costs=True,  # a stated cost always takes the multi-sink model above
        )

    def _size(self, rows: RowData, depth: int) -> ModelSize:
        """Counted as :func:`_build` adds them, without the separation cuts (at most
        ``max_separation_cuts`` short rows): (F6)/(F7) dominate, p + 2 nonzeros per (row,
        branch node)."""
        m, K, p = rows.n_rows, rows.n_classes, rows.n_features
        n_branch, n_leaf, n_nodes = 2**depth - 1, 2**depth, 2 ** (depth + 1) - 1
        ancestors = sum(d * 2**d for d in range(depth + 1))
        n_vars = n_branch * p + n_nodes * (1 + K) + 2 * m * n_nodes
        nonzeros = (
            n_branch * p
            + n_nodes
            + ancestors  # (F1), (F2)
            + n_nodes * (K + 1)  # (F3)
            + m * (4 * n_branch + 2 * n_leaf)  # (F4), (F5)
            + m * n_branch * (p + 2)  # (F6), (F7)
            + 2 * m * n_nodes  # (F8)
        )
        return ModelSize(n_vars, nonzeros)

    def _tree(self, meta: FlowOCTMeta, values: dict[str, np.ndarray]) -> Tree:
        """From the root (§4.6): ``p_u > 0.5`` makes u a leaf with class ``argmax_k w_{u,k}``;
        otherwise u tests ``argmax_j b_{u,j}``; ``decode`` then makes it canonical."""
        n_branch = 2**meta.max_depth - 1
        b = values["b"].reshape(n_branch, meta.n_features)
        pv = values["p"].reshape(-1)
        w = values["w"].reshape(pv.size, meta.n_classes)

        def node(u: int) -> Tree:
            if u > n_branch or pv[u - 1] > 0.5:
                return Tree.leaf(int(np.argmax(w[u - 1])))
            return Tree.split(int(np.argmax(b[u - 1])), node(2 * u), node(2 * u + 1))

        return node(1)

    def start(self, model: Model[FlowOCTMeta], tree: Tree) -> np.ndarray:
        """A complete, feasible MIP start from any tree of depth <= D, of value R(tree) (§6.3);
        under side constraints (which the tree must satisfy) of the value of its returned form,
        ``resolved.canonical(tree)``, at most R(tree)."""
        model = check_built_by(model, self)
        meta = model.meta
        tree = check_tree(tree, meta)
        rows = meta.rows
        D = meta.max_depth
        cells = meta.cells
        side = meta.constraints
        if side is not None:
            # the model counts the raw tree's leaves and splits and (E) wants every split
            # effective: prune empty sides (and merge, as decode does); this keeps every
            # constraint (check_tree) and never raises R
            tree = side.resolved.canonical(tree, rows.X)
        if cells is not None and meta.complete_trees:
            # same predictions, hence the same value at lam = 0 and the same disparities
            tree = complete_tree(prune_empty(tree, cells.X), D, rows.n_features)
        heap = embed(tree, D)
        n_branch, n_nodes, m = 2**D - 1, 2 ** (D + 1) - 1, rows.n_rows
        internal = np.flatnonzero(heap.is_internal)
        leaf = np.flatnonzero(heap.is_leaf)
        b = np.zeros((n_branch, rows.n_features))
        b[internal - 1, heap.feature[internal]] = 1.0
        pv = np.zeros(n_nodes)
        pv[leaf - 1] = 1.0
        w = np.zeros((n_nodes, rows.n_classes))
        w[leaf - 1, heap.label[leaf]] = 1.0
        if cells is not None:
            # multi-sink: every cell follows its path and leaves to its leaf's class
            path = paths(cells.X, heap)
            end = path[np.arange(cells.n_cells), (path > 0).sum(axis=1) - 1]
            z = np.zeros((cells.n_cells, n_nodes))
            ci, level = np.nonzero(path > 0)
            z[ci, path[ci, level] - 1] = 1.0
            zeta = np.zeros((cells.n_cells, n_nodes, rows.n_classes))
            zeta[np.arange(cells.n_cells), end - 1, heap.label[end]] = 1.0
            values = {"b": b, "p": pv, "w": w, "z": z, "zeta": zeta}
            return model.vector(values | _used_values(model, tree))
        path = paths(rows.X, heap)  # (m, D+1), 0-padded
        end = path[np.arange(m), (path > 0).sum(axis=1) - 1]
        correct = heap.label[end] == rows.y
        z = np.zeros((m, n_nodes))
        zeta = np.zeros((m, n_nodes))
        ci, level = np.nonzero((path > 0) & correct[:, None])
        z[ci, path[ci, level] - 1] = 1.0
        zeta[np.flatnonzero(correct), end[correct] - 1] = 1.0
        assert np.all(heap.feature[end] == NO_FEATURE)
        values = {"b": b, "p": pv, "w": w, "z": z, "zeta": zeta}
        return model.vector(values | _used_values(model, tree))


def _used_values(model: Model[FlowOCTMeta], tree: Tree) -> dict[str, np.ndarray]:
    """The group indicators of a start ``tree`` (every split of it effective): 1 for a group
    some split tests."""
    side = model.meta.constraints
    if side is None:
        return {}
    used = tree.features_used()
    return {
        f"used_{block.name}": np.array(
            [any(int(j) in used for j in g) for g in block.groups], dtype=float
        )
        for block in side.blocks
        if f"used_{block.name}" in model.vars
    }

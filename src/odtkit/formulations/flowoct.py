r"""Regularized FlowOCT (Aghaei, Gómez, Vayanos) in OSDT units, leaves at any depth <= D.

FORMULATIONS-TREES §4. Heap numbering, branch nodes :math:`\mathcal B = \{1..2^D-1\}`, leaves
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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from odtkit._validation import check_depth
from odtkit.formulations._base import DECODE_NOT_WORSE, EXACT, VALID_BOUND, check_built_by
from odtkit.formulations._common import (
    NO_FEATURE,
    RowData,
    TreeFormulation,
    ancestor_pairs,
    branch_nodes,
    check_tree,
    embed,
    paths,
    separation_pairs,
)
from odtkit.model import Model, ModelBuilder
from odtkit.tree import Tree


def _build(
    bld: ModelBuilder,
    rows: RowData,
    depth: int,
    lam: float,
    *,
    binary_w: bool,
    separation_distance: int | None,
    max_separation_cuts: int | None,
) -> None:
    m, K, p = rows.n_rows, rows.n_classes, rows.n_features
    X = rows.X
    n_branch, n_nodes = 2**depth - 1, 2 ** (depth + 1) - 1
    branches = branch_nodes(depth)
    nodes = np.arange(1, n_nodes + 1, dtype=np.int64)
    leaves = np.arange(n_branch + 1, n_nodes + 1, dtype=np.int64)

    bld.meta.update(
        binary_w=binary_w,
        separation_distance=separation_distance,
        max_separation_cuts=max_separation_cuts,
    )
    b = bld.add_vars("b", (n_branch, p), "binary", labels=(branches.tolist(), list(range(p))))
    pv = bld.add_vars("p", (n_nodes,), "binary", labels=(nodes.tolist(),))
    w = bld.add_vars("w", (n_nodes, K), "binary" if binary_w else "continuous", lb=0.0, ub=1.0)
    z = bld.add_vars("z", (m, n_nodes), "continuous", lb=0.0, ub=1.0)
    zeta = bld.add_vars("zeta", (m, n_nodes), "continuous", lb=0.0, ub=1.0)

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
    # (F4): flow conservation at branch nodes, rows (i, u) -> i * n_branch + (u - 1)
    i_b = np.repeat(np.arange(m), n_branch)
    u_b = np.tile(branches, m)
    local = i_b * n_branch + (u_b - 1)
    bld.add_constraints(
        "flow_branch",
        np.tile(local, 4),
        np.concatenate(
            [
                z.index[i_b, u_b - 1],
                z.index[i_b, 2 * u_b - 1],
                z.index[i_b, 2 * u_b],
                zeta.index[i_b, u_b - 1],
            ]
        ),
        np.repeat([1.0, -1.0, -1.0, -1.0], local.size),
        "==",
        np.zeros(m * n_branch),
    )
    # (F5): at the last level all flow goes to the sink
    i_l = np.repeat(np.arange(m), leaves.size)
    t_l = np.tile(leaves, m)
    local_l = np.arange(i_l.size)
    bld.add_constraints(
        "flow_leaf",
        np.tile(local_l, 2),
        np.concatenate([zeta.index[i_l, t_l - 1], z.index[i_l, t_l - 1]]),
        np.repeat([1.0, -1.0], local_l.size),
        "==",
        np.zeros(local_l.size),
    )
    # (F6) / (F7): arc capacities from the tested feature's value
    for side, name_ in ((0, "arc_left"), (1, "arc_right")):
        ii, jj = np.nonzero(X == bool(side))  # rows i with x_ij = side
        # for every branch node u: -b[u, j] on row (i, u)
        rr = (ii[:, None] * n_branch + (branches[None, :] - 1)).ravel()
        cc = b.index[(branches[None, :] - 1), jj[:, None]].ravel()
        bld.add_constraints(
            name_,
            np.concatenate([local, rr]),
            np.concatenate([z.index[i_b, 2 * u_b - 1 + side], cc]),
            np.concatenate([np.ones(local.size), -np.ones(rr.size)]),
            "<=",
            np.zeros(m * n_branch),
        )
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
    # (F0): 1 - correct weight / W + lam * (number of prediction nodes)
    bld.add_objective(z.index[:, 0], -rows.weight / rows.total_weight)
    bld.add_objective(pv.index, lam)
    bld.set_objective_offset(1.0)


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


class FlowOCT(TreeFormulation):
    """Regularized FlowOCT (F0)-(F8): optimum = OSDT's OPT(D, lam), leaves at any depth <= D.

    Declares ``EXACT``, ``VALID_BOUND`` and ``DECODE_NOT_WORSE``.

    Parameters
    ----------
    binary_w : bool
        Declare the class variables w binary (the paper) instead of continuous (odtlearn).
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

    See the module docstring for the math.
    """

    name = "flowoct"

    def __init__(
        self,
        *,
        binary_w: bool = False,
        aggregate: bool = True,
        separation_distance: int | None = 3,
        max_separation_cuts: int | None = None,
    ) -> None:
        super().__init__(aggregate=aggregate)
        self.binary_w = bool(binary_w)
        self.separation_distance = check_depth(separation_distance, "separation_distance")
        self.max_separation_cuts = check_depth(max_separation_cuts, "max_separation_cuts")

    @property
    def properties(self) -> frozenset[str]:
        return frozenset({EXACT, VALID_BOUND, DECODE_NOT_WORSE})

    def _model(self, builder: ModelBuilder, rows: RowData, depth: int, lam: float) -> None:
        max_cuts = self.max_separation_cuts
        _build(
            builder,
            rows,
            depth,
            lam,
            binary_w=self.binary_w,
            separation_distance=self.separation_distance,
            max_separation_cuts=4 * rows.n_rows if max_cuts is None else max_cuts,
        )

    def _tree(self, meta: Any, values: dict[str, np.ndarray]) -> Tree:
        """From the root (§4.6): ``p_u > 0.5`` makes u a leaf with class ``argmax_k w_{u,k}``;
        otherwise u tests ``argmax_j b_{u,j}``; ``decode`` then makes it canonical."""
        n_branch = 2 ** meta["max_depth"] - 1
        b = values["b"].reshape(n_branch, meta["n_features"])
        pv = values["p"].reshape(-1)
        w = values["w"].reshape(pv.size, meta["n_classes"])

        def node(u: int) -> Tree:
            if u > n_branch or pv[u - 1] > 0.5:
                return Tree.leaf(int(np.argmax(w[u - 1])))
            return Tree.split(int(np.argmax(b[u - 1])), node(2 * u), node(2 * u + 1))

        return node(1)

    def start(self, model: Model, tree: Tree) -> np.ndarray:
        """A complete, feasible MIP start from any tree of depth <= D, of value R(tree) (§6.3)."""
        model = check_built_by(model, self)
        meta = model.meta
        tree = check_tree(tree, meta)
        rows: RowData = meta["rows"]
        D = meta["max_depth"]
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
        path = paths(rows.X, heap)  # (m, D+1), 0-padded
        end = path[np.arange(m), (path > 0).sum(axis=1) - 1]
        correct = heap.label[end] == rows.y
        z = np.zeros((m, n_nodes))
        zeta = np.zeros((m, n_nodes))
        ci, level = np.nonzero((path > 0) & correct[:, None])
        z[ci, path[ci, level] - 1] = 1.0
        zeta[np.flatnonzero(correct), end[correct] - 1] = 1.0
        assert np.all(heap.feature[end] == NO_FEATURE)
        return model.vector({"b": b, "p": pv, "w": w, "z": z, "zeta": zeta})

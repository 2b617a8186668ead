r"""PathOCT: trees as nested choices along feature paths, an extended formulation whose LP
relaxation is exact without side constraints (so a fairness bound is all the solver branches
on). For shallow trees only: its size grows like :math:`(2p)^D`.

Heap numbering (docs/formulations-trees.md §1.2). A **cell** :math:`(u, h)` is a node
:math:`u` of depth :math:`d` together with its *history* :math:`h = (j_1, \dots, j_d)`, the
features tested at its ancestors (root first); with the directions fixed by :math:`u`'s position
it selects the rows :math:`R(u,h) = \{i : x_{i j_e} = \text{dir}_e(u),\ e = 1..d\}`. Only cells with
:math:`R(u,h) \ne \emptyset` exist. In cell :math:`(u,h)` an **action** :math:`a` is "leaf of
class k" or, for :math:`d < D`, "split on j" for a feature j that leaves **both** sides of
:math:`R(u,h)` non-empty (which excludes a repeated feature); a split creates the two child cells
:math:`(2u, h{+}j)` and :math:`(2u{+}1, h{+}j)`. Variables: :math:`y_{u,h,a} \in [0,1]` and the
binary marginals :math:`b_{u,j}` (u splits on j) and :math:`c_{u,k}` (u is a leaf of class k).

.. math::

    \text{(P0)}\quad & \min \textstyle\sum_{(u,h),k} y_{u,h,\text{leaf }k}
        \bigl(\tfrac{1}{W}\,\text{err}_k(R(u,h)) + \lambda\bigr) \\
    \text{(P1)}\quad & \textstyle\sum_a y_{1,(),a} = 1 \\
    \text{(P2)}\quad & \textstyle\sum_a y_{u,h,a} = y_{\text{parent}(u), h_{<d},
        \text{split } j_d} \quad \forall (u,h),\ d \ge 1 \\
    \text{(P3)}\quad & b_{u,j} = \textstyle\sum_h y_{u,h,\text{split } j}, \qquad
        c_{u,k} = \textstyle\sum_h y_{u,h,\text{leaf } k}

with :math:`\text{err}_k(R)` the weight of the rows of :math:`R` not of class k and
:math:`W` the total weight. Fairness (docs/formulations-trees.md §5) adds, for each constrained pair
:math:`j`, :math:`-\delta \le \sum_{(u,h)} \gamma_j(R(u,h))\, y_{u,h,\text{leaf }k^+}
\le \delta` with :math:`\gamma_j(R) = \sum_{i\in R}\gamma_{ij}` (the shared block of
:mod:`odtkit.formulations.fairness`): no per-row variable at all, the counts are computed once.

**Side constraints** (:mod:`odtkit.constraints`, ``constraints=``; each block named after its
:attr:`~odtkit.constraints.LinearRows.name`). A cell has a fixed row set, so a row's prediction
term :math:`\sum_i A_{r,i,\hat y_i}` is :math:`\sum_{(u,h),k} A_{r,k}(R(u,h))\,
y_{u,h,\text{leaf }k}` with :math:`A_{r,k}(R) = \sum_{i \in R} A_{r,i,k}`, summed once with the
cell sums (several :class:`~odtkit.fairness.Fairness` values this way too; a ``fairness=``
given beside ``constraints=`` is one more of them, ``TreeFormulation.build``); leaves count as
:math:`\sum_{u,k} c_{u,k}` and splits on j as :math:`\sum_u b_{u,j}` (every split action is
effective: both its cells are non-empty); a feature group g tested somewhere is a binary
:math:`t_g` (``<name>_used``) with :math:`t_g \ge \sum_{j \in g} b_{u,j}` per branch node u
(``<name>_used_lo``) and :math:`t_g \le \sum_{u, j \in g} b_{u,j}` (``<name>_used_hi``). A
forbidden feature has no split action at all (its ``b`` are 0 through (P3), and its block
states it). With a minimum leaf weight :math:`\underline{w}`, a split action exists only when
both of its cells weigh at least :math:`\underline{w}`, so every cell below the root is heavy
enough to be a leaf and the lighter ones are never created (``max_paths`` counts what remains);
``min_leaf_support`` states per node :math:`\sum_{h,k} (w(R(u,h)) - \underline{w})\,
y_{u,h,\text{leaf }k} \ge 0`, which binds only the root when the data weighs less than
:math:`\underline{w}`. Each of these is exact at integer points, so the optimum is OPT over the
trees of depth :math:`\le D` that satisfy the constraints (a tree and its pruned form satisfy
the same ones); with side constraints the LP relaxation is no longer integral but a
Lagrangian-type bound (one multiplier per side row): on german-credit at depth 2 with
``FeatureBudget(1, 2, per="feature")``, ``MinLeafSupport(share=0.05)`` and
``ClassRecall(0, at_least=0.6)`` (resp. ``0.8``) the root LP bound is 0.3018 (0.3572) against the
optimal error 0.315 (0.363).

**Cost objectives** (:mod:`odtkit.costs`, stated in ``constraints=``). The model rows' losses
:math:`L_{i,k}` (``ModelConstraints.losses``, model units) are summed per cell with the other
cell sums, and a leaf-k action costs :math:`\tfrac1W L_k(R(u,h)) + \lambda` with
:math:`L_k(R) = \sum_{i\in R} L_{i,k}` in place of :math:`\tfrac1W \text{err}_k(R(u,h))`; nothing
else changes. Every argument below holds for any linear per-cell cost (negative losses
included: an empty leaf costs nothing, so pruning it still never raises :math:`R`), so the model
is exact for the cost objective and its LP relaxation without side constraints stays integral,
for any number of classes and any loss matrix.

**Exactness.** (i) Any tree :math:`T` of depth :math:`\le D` has a point of value
:math:`R(\mathrm{prune\_empty}(T)) \le R(T)` with the same training predictions (so the same
disparities): prune it (§1.4), then every node has a unique history, a non-empty cell and an
allowed action; set those :math:`y` to 1 (:meth:`PathOCT.start`). (ii) If :math:`b, c` are
integral then so is :math:`y`: by induction on the depth exactly one cell of each level-d
node carries mass 1 (its parent's split action is the only one with mass) and its action vector
equals the integral marginals (P3). Such a point is a tree whose (P0) value is exactly its
:math:`R` (every leaf counted, errors counted in its cell) and whose fairness rows are exactly
its disparities. So the optimum is OSDT's :math:`\mathrm{OPT}(D, \lambda)` over (δ-fair) trees of
depth :math:`\le D`, and the decoded ``canonical`` tree is never worse.

**The LP relaxation without fairness is integral**: for fixed marginals of the root the feasible
set of the rest is a product over the root's actions of scaled copies of the subproblem's
polytope, so by induction every point is a convex combination of trees (the polytope is the
convex hull of its trees) and (P0) is linear. With fairness rows the LP is the bound of one
Lagrangian multiplier per pair, which is tight in practice: on german-credit (1000 rows, 69
features) at depth 2 the root LP bound is within 0.004 of the optimal fair accuracy, where the
fair FlowOCT's LP bound is near 0 error.

**Size.** Cells grow like :math:`(2p)^d` per level; ``build`` refuses a model with more than
``max_paths`` variables :math:`y` (naming the count). Depth 2 on 69 features is about 48,000
:math:`y`; depth 3 is practical only for a few dozen features.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from odtkit._limits import check_deadline
from odtkit._validation import check_depth
from odtkit.constraints import CONSTRAINT_TOLERANCE
from odtkit.fairness import FairnessGroups
from odtkit.formulations._base import DECODE_NOT_WORSE, EXACT, VALID_BOUND, check_built_by
from odtkit.formulations._common import (
    ModelSize,
    RowData,
    TreeFormulation,
    TreeMeta,
    branch_nodes,
    check_tree,
    label_of,
    nonconstant_features,
    prune_empty,
    split_of,
)
from odtkit.formulations.constraints import ModelConstraints
from odtkit.formulations.fairness import FairRows, add_disparity_rows, merge_groups
from odtkit.model import Model, ModelBuilder
from odtkit.tree import Tree

__all__ = ["MASK_CHUNK_VALUES", "PathLayout", "PathOCT", "PathOCTMeta"]

#: Cells' row masks are unpacked to floats this many values at a time (64 MB) to sum over them.
MASK_CHUNK_VALUES = 1 << 23


@dataclass(frozen=True)
class PathLayout:
    """The cells and actions of a built model (what ``start`` needs to place a tree).

    Per cell: ``node`` (heap index), ``first`` (first action's y index; a cell's actions are
    contiguous: K leaves, then its splits). Per action (y index): ``cell``, ``action`` (class
    code ``k`` of a leaf is stored as ``-1 - k``, a split as its feature), ``left`` / ``right``
    (the child cells of a split, -1 for a leaf).
    """

    node: np.ndarray
    first: np.ndarray
    cell: np.ndarray
    action: np.ndarray
    left: np.ndarray
    right: np.ndarray

    @property
    def n_paths(self) -> int:
        return int(self.cell.size)


def _refuse(depth: int, needed: int, max_paths: int) -> None:
    raise ValueError(
        f"PathOCT at max_depth={depth} needs more than {needed:,} path variables "
        f"(limit max_paths={max_paths:,}): the model grows like (2p)^D; use FlowOCT "
        "or RBinOCT for this depth, or raise max_paths"
    )


def _layout(
    rows: RowData,
    depth: int,
    max_paths: int,
    values: np.ndarray,
    *,
    splittable: np.ndarray | None = None,
    floor: float = 0.0,
) -> tuple[PathLayout, np.ndarray]:
    """Enumerate the cells level by level; return the layout and each cell's sums of
    ``values`` (m, V) over its rows.

    ``splittable`` (bool, per feature) leaves out the split actions on the other features
    (forbidden ones). With ``floor > 0`` (a minimum leaf weight, model units) a split action
    exists only when both its child cells weigh at least ``floor``: a cell lighter than that
    can be neither a leaf nor, its children being lighter still, split, so such a cell (and
    everything below it) is never created."""
    X = rows.X
    m, p = X.shape
    K = rows.n_classes
    Xf = X.astype(np.float64)
    wX = Xf * rows.weight[:, None] if floor > 0 else Xf
    # a cell's rows are a bit mask, packed 8 rows per byte: depth 2 on 20 features has 1,520
    # cells, and unpacked float masks of 100,000 rows took 1.5 GB (10^6 rows would take 12)
    packed_X = np.packbits(X.T, axis=1)  # (p, ceil(m / 8)); padding bits are 0
    masks = np.packbits(np.ones((1, m), dtype=bool), axis=1)
    chunk = max(1, MASK_CHUNK_VALUES // max(m, 1))
    level_nodes = np.ones(1, dtype=np.int64)
    level_used = np.zeros((1, p), dtype=bool)  # features on the history
    cells_node, cells_first, cell_sums = [], [], []
    act_cell, act_action, act_left, act_right = [], [], [], []
    n_cells = n_y = 0
    for level in range(depth + 1):
        n_level = masks.shape[0]
        cell_ids = n_cells + np.arange(n_level)
        sums = np.empty((n_level, values.shape[1]))
        ones = np.empty((n_level, p))  # rows of the cell with x_j = 1
        size = np.empty((n_level, 1))
        w_ones = np.empty((n_level, p)) if floor > 0 and level < depth else ones
        w_size = np.empty((n_level, 1)) if floor > 0 and level < depth else size
        for lo in range(0, n_level, chunk):
            check_deadline()  # a deep level takes seconds: stop between chunks, not after
            block = np.unpackbits(masks[lo : lo + chunk], axis=1, count=m).astype(np.float64)
            sums[lo : lo + chunk] = block @ values
            if level < depth:
                ones[lo : lo + chunk] = block @ Xf
                size[lo : lo + chunk, 0] = block.sum(axis=1)
                if floor > 0:
                    w_ones[lo : lo + chunk] = block @ wX
                    w_size[lo : lo + chunk, 0] = block @ rows.weight
        cell_sums.append(sums)
        if level < depth:
            allowed = (ones > 0) & (ones < size) & ~level_used
            if splittable is not None:
                allowed &= splittable[None, :]
            if floor > 0:
                allowed &= (w_ones >= floor) & (w_size - w_ones >= floor)
        else:
            allowed = np.zeros((n_level, p), dtype=bool)
        n_split = allowed.sum(axis=1)
        n_actions = K + n_split
        first = n_y + np.concatenate([[0], np.cumsum(n_actions)[:-1]])
        total = int(n_actions.sum())
        if n_y + total > max_paths:
            _refuse(depth, n_y + total, max_paths)
        cells_node.append(level_nodes)
        cells_first.append(first)
        # actions: K leaves then the splits, per cell
        a_cell = np.repeat(cell_ids, n_actions)
        leaf_action = np.tile(-1 - np.arange(K), (n_level, 1))
        split_cell, split_feat = np.nonzero(allowed)
        action = np.empty(total, dtype=np.int64)
        offset = np.repeat(first - n_y, n_actions)  # start of each action's cell, local
        pos_in_cell = np.arange(total) - offset
        is_leaf = pos_in_cell < K
        action[is_leaf] = leaf_action.ravel()
        action[~is_leaf] = split_feat  # np.nonzero is row-major: cells in order, features sorted
        left = np.full(total, -1, dtype=np.int64)
        right = np.full(total, -1, dtype=np.int64)
        n_children = split_cell.size
        child_base = n_cells + n_level
        left[~is_leaf] = child_base + 2 * np.arange(n_children)
        right[~is_leaf] = child_base + 2 * np.arange(n_children) + 1
        act_cell.append(a_cell)
        act_action.append(action)
        act_left.append(left)
        act_right.append(right)
        if n_y + total + 2 * n_children * K > max_paths:
            # every child cell has at least its K leaf actions: refuse before allocating its
            # row masks (the next level's masks are what ran out of memory under ulimit -v)
            _refuse(depth, n_y + total + 2 * n_children * K, max_paths)
        # next level: children of every split, left (x_j = 0) then right (x_j = 1)
        if level < depth and n_children:
            xs = packed_X[split_feat]  # (children, ceil(m / 8))
            parent_masks = masks[split_cell]
            masks = np.empty((2 * n_children, packed_X.shape[1]), dtype=np.uint8)
            masks[0::2] = parent_masks & ~xs
            masks[1::2] = parent_masks & xs
            nodes = level_nodes[split_cell]
            level_nodes = np.empty(2 * n_children, dtype=np.int64)
            level_nodes[0::2] = 2 * nodes
            level_nodes[1::2] = 2 * nodes + 1
            used = level_used[split_cell].copy()
            used[np.arange(n_children), split_feat] = True
            level_used = np.repeat(used, 2, axis=0)
        n_cells += n_level
        n_y += total
        if level < depth and n_children == 0:
            break
    layout = PathLayout(
        node=np.concatenate(cells_node),
        first=np.concatenate(cells_first),
        cell=np.concatenate(act_cell),
        action=np.concatenate(act_action),
        left=np.concatenate(act_left),
        right=np.concatenate(act_right),
    )
    return layout, np.concatenate(cell_sums, axis=0)


def _leaf_floor(side: ModelConstraints | None) -> float:
    """The minimum leaf weight in model units, less the tolerance the truth
    (:meth:`~odtkit.constraints.ResolvedConstraints.violations`) grants: a cell at least this
    heavy may be a leaf (0 without a minimum leaf support)."""
    if side is None or side.min_leaf_weight <= 0:
        return 0.0
    floor = side.resolved.min_leaf_weight
    slack = CONSTRAINT_TOLERANCE * max(1.0, floor)
    return max(0.0, side.min_leaf_weight * (floor - slack) / floor)


def _prediction_columns(
    side: ModelConstraints | None, m: int, K: int
) -> tuple[np.ndarray, np.ndarray]:
    """The blocks' prediction coefficients as per-row values for the cell sums: ``(values,
    keys)`` with ``values[i, t]`` the coefficient of "row i predicted ``keys[t] % K``" in the
    stacked block row ``keys[t] // K``; only the (block row, class) pairs some row reads."""
    if side is None or not side.reads_predictions:
        return np.zeros((m, 0)), np.zeros(0, dtype=np.int64)
    P = sp.coo_matrix(sp.vstack(side.prediction))  # (stacked block rows, m * K)
    key = P.row.astype(np.int64) * K + P.col.astype(np.int64) % K
    keys = np.unique(key)
    values = np.zeros((m, keys.size))
    np.add.at(values, (P.col.astype(np.int64) // K, np.searchsorted(keys, key)), P.data)
    return values, keys


def _build(
    bld: ModelBuilder,
    rows: RowData,
    depth: int,
    lam: float,
    groups: FairnessGroups | None,
    max_paths: int,
    side: ModelConstraints | None = None,
) -> tuple[PathLayout, FairRows | None]:
    """Add the model to ``bld``; its path layout and the fairness block's rows."""
    m, K, p = rows.n_rows, rows.n_classes, rows.n_features
    class_weight = np.zeros((m, K))
    class_weight[np.arange(m), rows.y] = rows.weight
    fair = None if groups is None else merge_groups(groups, rows.source, m)
    n_fair = 0 if fair is None else fair.n_pairs
    pred_values, pred_keys = _prediction_columns(side, m, K)
    losses = None if side is None else side.losses
    parts = [class_weight, pred_values]
    if losses is not None:
        parts.append(losses)  # a cost objective: its K columns summed per cell like the rest
    if fair is not None:
        parts.append(fair.coefficients)
    floor = _leaf_floor(side)
    forbidden = None if side is None else side.resolved.forbidden
    splittable = None if forbidden is None or not forbidden.any() else ~forbidden
    layout, sums = _layout(
        rows, depth, max_paths, np.hstack(parts), splittable=splittable, floor=floor
    )
    n_cells, n_y = layout.node.size, layout.n_paths
    n_branch, n_nodes = 2**depth - 1, 2 ** (depth + 1) - 1
    branches = branch_nodes(depth)
    nodes = np.arange(1, n_nodes + 1, dtype=np.int64)

    b = bld.add_vars("b", (n_branch, p), "binary", labels=(branches.tolist(), list(range(p))))
    c = bld.add_vars("c", (n_nodes, K), "binary", labels=(nodes.tolist(), list(range(K))))
    y = bld.add_vars("y", (n_y,), "continuous", lb=0.0, ub=1.0)
    ys = y.index
    # (P1) + (P2): one row per cell, its actions sum to its parent's split (1 at the root)
    parent = np.full(n_cells, -1, dtype=np.int64)
    splits = np.flatnonzero(layout.left >= 0)
    parent[layout.left[splits]] = splits
    parent[layout.right[splits]] = splits
    has_parent = parent >= 0
    bld.add_constraints(
        "cell",
        np.concatenate([layout.cell, np.flatnonzero(has_parent)]),
        np.concatenate([ys, ys[parent[has_parent]]]),
        np.concatenate([np.ones(n_y), -np.ones(int(has_parent.sum()))]),
        "==",
        (~has_parent).astype(float),
    )
    # (P3): the marginals b (splits) and c (leaves), row (u-1)*p + j and (u-1)*K + k
    node_of_y = layout.node[layout.cell]
    is_leaf = layout.action < 0
    split_rows = (node_of_y[~is_leaf] - 1) * p + layout.action[~is_leaf]
    bld.add_constraints(
        "split_marginal",
        np.concatenate([np.arange(n_branch * p), split_rows]),
        np.concatenate([b.index.ravel(), ys[~is_leaf]]),
        np.concatenate([np.ones(n_branch * p), -np.ones(split_rows.size)]),
        "==",
        np.zeros(n_branch * p),
    )
    leaf_class = -1 - layout.action[is_leaf]
    leaf_rows = (node_of_y[is_leaf] - 1) * K + leaf_class
    bld.add_constraints(
        "leaf_marginal",
        np.concatenate([np.arange(n_nodes * K), leaf_rows]),
        np.concatenate([c.index.ravel(), ys[is_leaf]]),
        np.concatenate([np.ones(n_nodes * K), -np.ones(leaf_rows.size)]),
        "==",
        np.zeros(n_nodes * K),
    )
    # (P0): each leaf action costs its cell's misclassified weight / W + lam; under a cost
    # objective, its cell's losses for that class (column K + n_keys + k of the sums) instead
    leaf_cells = layout.cell[is_leaf]
    cell_weight = sums[:, :K]
    if losses is None:
        err = cell_weight[leaf_cells].sum(axis=1) - cell_weight[leaf_cells, leaf_class]
    else:
        err = sums[leaf_cells, K + pred_keys.size + leaf_class]
    bld.add_objective(ys[is_leaf], err / rows.total_weight + lam)
    fair_name = "fairness"
    if side is not None:
        _add_side_constraints(
            bld, side, layout, sums[:, K : K + pred_keys.size], pred_keys, b.index, c.index, ys
        )
        if floor > 0 or side.min_leaf_weight > 0:
            _add_min_leaf_support(bld, layout, cell_weight.sum(axis=1), floor, ys)
    if fair is not None:
        # (PF): pair j's disparity is sum over positive leaf actions of the cell's gamma_j
        positive = np.flatnonzero(is_leaf)[leaf_class == fair.positive_code]
        gamma = sums[layout.cell[positive], sums.shape[1] - n_fair :]  # (positives, pairs)
        pair, which = np.nonzero(gamma.T)
        matrix = sp.csr_matrix(
            (gamma.T[pair, which], (pair, ys[positive[which]])),
            shape=(fair.n_pairs, bld.n_vars),
        )
        add_disparity_rows(bld, fair, matrix, name=fair_name)
    return layout, fair


def _add_side_constraints(
    bld: ModelBuilder,
    side: ModelConstraints,
    layout: PathLayout,
    pred_sums: np.ndarray,
    pred_keys: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    ys: np.ndarray,
) -> None:
    """One block per :class:`~odtkit.constraints.LinearRows`, named after it.

    A leaf-k action's prediction coefficient is the sum of A over its cell's rows (the cell
    sums ``pred_sums``, one column per ``pred_keys`` entry); leaves count through the
    marginals ``c``, splits through ``b`` (every split action is effective: both its cells are
    non-empty); a tested feature group is a binary ``<name>_used`` tied to ``b`` both ways."""
    K = c.shape[1]
    n_branch = b.shape[0]
    is_leaf = layout.action < 0
    leaf_y = np.flatnonzero(is_leaf)
    leaf_class = -1 - layout.action[leaf_y]
    # the prediction part of every stacked block row, (stacked rows, n_vars)
    r_idx, c_idx, vals = [], [], []
    for k in range(K):
        cols = np.flatnonzero(pred_keys % K == k)
        if not cols.size:
            continue
        acts = leaf_y[leaf_class == k]
        sub = pred_sums[layout.cell[acts]][:, cols]  # (actions, keys of class k)
        a, t = np.nonzero(sub)
        r_idx.append(pred_keys[cols[t]] // K)
        c_idx.append(ys[acts[a]])
        vals.append(sub[a, t])
    used_vars = {}
    for block in side.blocks:
        if block.groups:
            used_vars[block.name] = bld.add_vars(
                f"{block.name}_used", (len(block.groups),), "binary"
            ).index
    n_vars = bld.n_vars
    n_stacked = sum(block.n_rows for block in side.blocks)
    prediction = sp.csr_matrix(
        (
            np.concatenate(vals) if vals else np.zeros(0),
            (
                np.concatenate(r_idx) if r_idx else np.zeros(0, dtype=np.int64),
                np.concatenate(c_idx) if c_idx else np.zeros(0, dtype=np.int64),
            ),
        ),
        shape=(n_stacked, n_vars),
    )
    # per leaf: the sum of all c (one per leaf); per split on j: b_{u,j} at every branch node u
    every_leaf = sp.csr_matrix(
        (np.ones(c.size), (np.zeros(c.size, dtype=np.int64), c.ravel())), shape=(1, n_vars)
    )
    every_node = sp.csr_matrix(
        (np.ones(b.size), (np.tile(np.arange(b.shape[1]), n_branch), b.ravel())),
        shape=(b.shape[1], n_vars),
    )
    offset = 0
    for block in side.blocks:
        mb = block.n_rows
        total = (
            prediction[offset : offset + mb]
            + sp.csr_matrix(block.per_leaf[:, None]) @ every_leaf
            + sp.csr_matrix(block.per_split) @ every_node
        )
        offset += mb
        if block.groups:
            used = used_vars[block.name]
            on_used = sp.csr_matrix(
                (np.ones(used.size), (np.arange(used.size), used)), shape=(used.size, n_vars)
            )
            total = total + sp.csr_matrix(block.per_group) @ on_used
            _add_group_links(bld, block.name, block.groups, used, b)
        total = sp.csr_matrix(total)
        total.eliminate_zeros()
        bld.add_range_constraints(
            block.name, matrix=total, lower=block.lower, upper=block.upper, n_rows=mb
        )


def _add_group_links(
    bld: ModelBuilder, name: str, groups: tuple[np.ndarray, ...], used: np.ndarray, b: np.ndarray
) -> None:
    """``used_g`` is 1 exactly when a split tests a feature of group g: ``<name>_used_lo``
    (per branch node u: used_g >= sum over j in g of b_{u,j}, at most one split per node) and
    ``<name>_used_hi`` (used_g <= sum over u and j in g of b_{u,j})."""
    n_branch = b.shape[0]
    G = len(groups)
    feat = np.concatenate(groups).astype(np.int64)
    gid = np.repeat(np.arange(G), [g.size for g in groups])
    u = np.repeat(np.arange(n_branch), feat.size)
    lo_rows = np.concatenate([u * G + np.tile(gid, n_branch), np.arange(n_branch * G)])
    lo_cols = np.concatenate([b[u, np.tile(feat, n_branch)], np.tile(used, n_branch)])
    lo_vals = np.concatenate([-np.ones(u.size), np.ones(n_branch * G)])
    bld.add_constraints(f"{name}_used_lo", lo_rows, lo_cols, lo_vals, ">=", np.zeros(n_branch * G))
    hi_rows = np.concatenate([np.tile(gid, n_branch), np.arange(G)])
    hi_cols = np.concatenate([b[u, np.tile(feat, n_branch)], used])
    hi_vals = np.concatenate([-np.ones(u.size), np.ones(G)])
    bld.add_constraints(f"{name}_used_hi", hi_rows, hi_cols, hi_vals, "<=", np.zeros(G))


def _add_min_leaf_support(
    bld: ModelBuilder, layout: PathLayout, cell_weight: np.ndarray, floor: float, ys: np.ndarray
) -> None:
    """``min_leaf_support``: per node u, sum over its leaf actions of (cell weight - floor) *
    y >= 0. The layout already creates only cells of weight >= floor below the root (a split
    needs two heavy enough children), so the rows bind only the root's leaf actions when the
    whole data weighs less than the floor (then no tree is feasible)."""
    leaf_y = np.flatnonzero(layout.action < 0)
    node = layout.node[layout.cell[leaf_y]]
    present, row = np.unique(node, return_inverse=True)
    coef = cell_weight[layout.cell[leaf_y]] - floor
    bld.add_constraints("min_leaf_support", row, ys[leaf_y], coef, ">=", np.zeros(present.size))


@dataclass(frozen=True, kw_only=True, eq=False)
class PathOCTMeta(TreeMeta):
    """The meta of a PathOCT model: :class:`~odtkit.formulations.TreeMeta`, the path layout
    (the cells and actions behind ``y``) and ``max_paths``."""

    layout: PathLayout
    max_paths: int


class PathOCT(TreeFormulation[PathOCTMeta]):
    """Trees as nested choices along feature paths (P0)-(P3): optimum = OSDT's OPT(D, lam)
    (over δ-fair trees with ``fairness=``, over the trees satisfying ``constraints=``; of the
    cost objective when ``constraints=`` states one, :mod:`odtkit.costs`); integral LP
    relaxation without side constraints.

    Declares ``EXACT``, ``VALID_BOUND`` and ``DECODE_NOT_WORSE``. Sized like ``(2p)^D``: meant
    for depth <= 2 (or 3 on few features).

    Parameters
    ----------
    aggregate : bool
        Merge identical (x, y) rows into one weighted row (only the counts see rows).
    max_paths : int
        Largest number of path variables ``build`` accepts (default 2,000,000).

    See the module docstring for the math.
    """

    name = "pathoct"

    _properties = frozenset({EXACT, VALID_BOUND, DECODE_NOT_WORSE})

    def __init__(self, *, aggregate: bool = True, max_paths: int = 2_000_000) -> None:
        super().__init__(aggregate=aggregate)
        max_paths_ = check_depth(max_paths, "max_paths", allow_none=False, minimum=1)
        assert max_paths_ is not None  # allow_none=False
        self.max_paths = max_paths_

    def _model(self, builder: ModelBuilder, tree: TreeMeta) -> PathOCTMeta:
        layout, fair = _build(
            builder,
            tree.rows,
            tree.max_depth,
            tree.lam,
            tree.fairness_groups,
            self.max_paths,
            tree.constraints,
        )
        return tree.extend(
            PathOCTMeta,
            fair_rows=fair,
            layout=layout,
            max_paths=self.max_paths,
            carries_costs=True,  # (P0) reads constraints.losses when a cost is stated
        )

    def _size(self, rows: RowData, depth: int) -> ModelSize:
        """An upper bound: every cell of depth d < D splits on each of the p - d usable
        features not on its history into two non-empty cells (so level d holds at most
        2^d p!/(p-d)! cells); each cell has its K leaf actions. Nonzeros: each y in its cell's
        row and in one marginal row, each non-root cell once more as its parent's split."""
        K, p = rows.n_classes, nonconstant_features(rows.X)
        n_branch, n_nodes = 2**depth - 1, 2 ** (depth + 1) - 1
        cells, n_y, n_cells = 1, 0, 0
        for level in range(depth + 1):
            splits = cells * max(p - level, 0) if level < depth else 0
            n_y += cells * K + splits
            n_cells += cells
            cells = 2 * splits
        marginals = n_branch * p + n_nodes * K
        return ModelSize(n_y + marginals, 2 * n_y + (n_cells - 1) + marginals)

    def _tree(self, meta: PathOCTMeta, values: dict[str, np.ndarray]) -> Tree:
        """From the root: a node whose leaf marginal ``c_u`` has a class above 0.5 is a leaf of
        that class, otherwise it splits on ``argmax_j b_{u,j}``."""
        n_branch = 2**meta.max_depth - 1
        b = values["b"].reshape(n_branch, meta.n_features)
        c = values["c"].reshape(-1, meta.n_classes)

        def node(u: int) -> Tree:
            if u > n_branch or c[u - 1].max() > 0.5 or b[u - 1].max() <= 0.5:
                return Tree.leaf(int(np.argmax(c[u - 1])))
            return Tree.split(int(np.argmax(b[u - 1])), node(2 * u), node(2 * u + 1))

        return node(1)

    def start(self, model: Model[PathOCTMeta], tree: Tree) -> np.ndarray:
        """The point of ``prune_empty(tree)`` (value R(prune_empty(tree)) <= R(tree), same
        training predictions, the feature-group binaries of side constraints set from its
        splits); a δ-fair tree is required with ``fairness=``, one that satisfies the side
        constraints with ``constraints=``."""
        model = check_built_by(model, self)
        meta = model.meta
        tree = check_tree(tree, meta)
        rows, layout = meta.rows, meta.layout
        D, K, p = meta.max_depth, meta.n_classes, meta.n_features
        y = np.zeros(layout.n_paths)
        b = np.zeros((2**D - 1, p))
        c = np.zeros((2 ** (D + 1) - 1, K))
        pruned = prune_empty(tree, rows.X)
        stack = [(pruned, 0, 1)]  # (subtree, cell, heap node)
        while stack:
            node, cell, u = stack.pop()
            lo = layout.first[cell]
            hi = layout.first[cell + 1] if cell + 1 < layout.first.size else layout.n_paths
            code = -1 - label_of(node) if node.is_leaf else split_of(node)[0]
            hit = lo + np.flatnonzero(layout.action[lo:hi] == code)
            if hit.size != 1:
                raise ValueError(
                    f"the pruned start tree uses an action ({code}) the model does not have at "
                    f"node {u}"
                )  # cannot happen: a pruned tree's splits have two non-empty sides
            y[hit[0]] = 1.0
            if node.is_leaf:
                c[u - 1, label_of(node)] = 1.0
            else:
                j, left, right = split_of(node)
                b[u - 1, j] = 1.0
                stack.append((left, int(layout.left[hit[0]]), 2 * u))
                stack.append((right, int(layout.right[hit[0]]), 2 * u + 1))
        values = {"b": b, "c": c, "y": y}
        if meta.constraints is not None:
            # every split of the pruned tree is effective on the model's rows
            tested = set(pruned.features_used())
            for block in meta.constraints.blocks:
                if block.groups:
                    values[f"{block.name}_used"] = np.array(
                        [any(int(j) in tested for j in g) for g in block.groups], dtype=float
                    )
        return model.vector(values)

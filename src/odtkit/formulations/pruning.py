"""Ensemble pruning with feature costs (Nan, Wang, Saligrama 2016): IP0, IP1, IP2, IP3 as Model IR.

Spec: FORMULATIONS-SEARCH-AND-PRUNING §7. All builders take an
:class:`odtkit.pruning.EnsembleData` (from :func:`odtkit.pruning.extract`) and return an
immutable :class:`odtkit.model.Model` whose variable groups are

* ``z``  — one per node of every tree, in global pre-order (tree 0's nodes, then tree 1's ...);
* ``wt`` — ``w^{(t)}_{k,i}``, one per feature-use entry (example i uses feature k in tree t),
  entries ordered by tree, then ``(u_{t,k,i}, k, i)``;
* ``w``  — ``w_{k,i}``, one per (feature, example) pair used by some tree (IP1, IP3);

and whose constraint blocks are ``leaf`` (Sherali rows, one per unpruned leaf), ``feature``
(NWS eq. 2, one per entry), ``link`` (``w^{(t)}_{k,i} <= w_{k,i}``), ``cover`` (IP1's
``w_{k,i} >= z_h``) and ``budget`` (LP1). Building is vectorized per tree (one numpy gather over
the ancestor lists), so 40 trees x 10 000 examples build in about a second.

:func:`certify_network_matrix` checks Lemma 4.1 on a built model from its matrix alone, and
:func:`is_totally_unimodular` brute-forces total unimodularity of small matrices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from math import comb
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from odtkit.model import Model, ModelBuilder

__all__ = [
    "build_ip0",
    "build_ip1",
    "build_ip2",
    "build_ip3",
    "decode",
    "certify_network_matrix",
    "NetworkCertificate",
    "is_totally_unimodular",
]


def _check_lam(lam: Any) -> float:
    from odtkit._validation import check_lambda

    return check_lambda(lam, "lam")


def _gather_ancestors(
    indptr: np.ndarray, indices: np.ndarray, nodes: np.ndarray, skip_top: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """For each ``nodes[j]`` the ancestors-or-self (root first), flattened: ``(owner j, node)``.

    ``skip_top[j]`` drops that many nodes from the root end (used for "strictly below u").
    """
    start = indptr[nodes]
    stop = indptr[nodes + 1]
    if skip_top is not None:
        start = start + skip_top
    cnt = np.maximum(stop - start, 0)
    owner = np.repeat(np.arange(nodes.shape[0], dtype=np.int64), cnt)
    offs = np.arange(owner.shape[0], dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    return owner, indices[np.repeat(start, cnt) + offs]


def _leaf_rows(data: Any, z_index: np.ndarray, trees: list[int]) -> tuple[np.ndarray, ...]:
    """COO of the Sherali rows ``z_h + sum_{u in p(h)} z_u = 1`` for the given trees."""
    R, C = [], []
    row0 = 0
    for t in trees:
        tree = data.trees[t]
        indptr, indices = tree.ancestors_csr()
        leaves = np.flatnonzero(tree.is_leaf)
        owner, anc = _gather_ancestors(indptr, indices, leaves)
        R.append(owner + row0)
        C.append(z_index[data.node_offset[t] + anc])
        row0 += leaves.shape[0]
    return np.concatenate(R), np.concatenate(C), row0


def _feature_rows(
    data: Any, z_index: np.ndarray, wt_index: np.ndarray, trees: list[int], wt_base: np.ndarray
) -> tuple[np.ndarray, ...]:
    """COO of ``w^{(t)}_{k,i} + z_u + sum_{h in p(u)} z_h = 1`` (one row per entry)."""
    R, C = [], []
    row0 = 0
    for t in trees:
        tree = data.trees[t]
        indptr, indices = tree.ancestors_csr()
        m = tree.n_entries
        owner, anc = _gather_ancestors(indptr, indices, tree.use_node)
        rows_local = np.arange(m, dtype=np.int64)
        R.append(np.concatenate([rows_local, owner]) + row0)
        C.append(
            np.concatenate(
                [wt_index[wt_base[t] + rows_local], z_index[data.node_offset[t] + anc]]
            )
        )
        row0 += m
    return np.concatenate(R), np.concatenate(C), row0


def _common_vars(b: ModelBuilder, data: Any, kind: str) -> Any:
    return b.add_vars("z", shape=(data.n_nodes,), kind=kind, lb=0.0, ub=1.0)


def _meta(b: ModelBuilder, data: Any, formulation: str, lam: float | None, **extra: Any) -> None:
    b.meta.update(
        {
            "formulation": formulation,
            "lam": lam,
            "n_samples": data.n_samples,
            "n_trees": data.n_trees,
            "node_offset": data.node_offset.copy(),
            "entry_offset": data.entry_offset.copy(),
            **extra,
        }
    )


def build_ip0(data: Any) -> Model:
    """IP0 (Sherali et al.): minimise the average per-tree training error over valid prunings.

    ``min 1/(NT) sum_t sum_h e_h z_h  s.t.  leaf rows, z binary``. (Without feature costs the
    trees decouple; the optimum keeps every tree whole up to ties.)
    """
    b = ModelBuilder("pruning_ip0")
    z = _common_vars(b, data, "binary")
    r, c, m = _leaf_rows(data, z.index, list(range(data.n_trees)))
    b.add_constraints("leaf", r, c, 1.0, "==", np.ones(m))
    err = np.concatenate([t.error for t in data.trees]).astype(np.float64)
    b.add_objective(z.index, err / (data.n_samples * data.n_trees))
    _meta(b, data, "IP0", None)
    return b.build()


def _ensemble_objective(
    b: ModelBuilder, data: Any, z: Any, w: Any, lam: float, budget: float | None
) -> None:
    N, T = data.n_samples, data.n_trees
    err = np.concatenate([t.error for t in data.trees]).astype(np.float64)
    b.add_objective(z.index, err / (N * T))
    cost = data.costs[data.pair_feature] / N
    if budget is None:
        b.add_objective(w.index, lam * cost)
    else:
        zero = np.zeros(data.n_pairs, dtype=np.int64)
        b.add_constraints("budget", zero, w.index, cost, "<=", np.array([budget]))


def build_ip1(data: Any, lam: float, budget: float | None = None) -> Model:
    """IP1, the first (weak) formulation, extended to the ensemble (§7.3).

    ``min 1/(NT) sum e_h z_h + lam sum_k c_k 1/N sum_i w_{k,i}`` s.t. leaf rows and
    ``w_{k,i} >= z^{(t)}_h`` for every tree t, example i and node h on i's path strictly below
    ``u_{t,k,i}`` (i.e. k is tested in p(h)); z, w binary. Its LP relaxation is weak: the MIP
    needs branching (benchmark "IP1-MIP").
    """
    lam = _check_lam(lam)
    b = ModelBuilder("pruning_ip1")
    z = _common_vars(b, data, "binary")
    w = b.add_vars("w", shape=(data.n_pairs,), kind="binary", lb=0.0, ub=1.0)
    trees = list(range(data.n_trees))
    r, c, m = _leaf_rows(data, z.index, trees)
    b.add_constraints("leaf", r, c, 1.0, "==", np.ones(m))
    R, Cz, Cw = [], [], []
    row0 = 0
    for t in trees:
        tree = data.trees[t]
        indptr, indices = tree.ancestors_csr()
        leaf = tree.leaf_of[tree.use_example]
        skip = tree.depth[tree.use_node] + 1
        owner, below = _gather_ancestors(indptr, indices, leaf, skip_top=skip)
        pair = data.entry_pair[data.entry_offset[t] + owner]
        k = owner.shape[0]
        R.append(np.arange(k, dtype=np.int64) + row0)
        Cz.append(z.index[data.node_offset[t] + below])
        Cw.append(w.index[pair])
        row0 += k
    rows = np.concatenate(R)
    b.add_constraints(
        "cover",
        np.concatenate([rows, rows]),
        np.concatenate([np.concatenate(Cw), np.concatenate(Cz)]),
        np.concatenate([np.ones(row0), -np.ones(row0)]),
        ">=",
        np.zeros(row0),
    )
    _ensemble_objective(b, data, z, w, lam, budget)
    _meta(b, data, "IP1", lam, budget=budget)
    return b.build()


def build_ip2(data: Any, lam: float, tree: int | None = None) -> Model:
    """IP2, the strong single-tree formulation (§7.4), or all trees side by side.

    With ``tree=t``: ``min 1/N sum_h e_h z_h + lam sum_k c_k 1/N sum_i w_{k,i}`` over tree t
    (``z`` then holds only tree t's nodes). With ``tree=None``: the block-diagonal model of
    *individual pruning* with ``lam_ind = T lam``, scaled by ``1/T`` (objective
    ``1/(NT) sum e z + lam 1/N sum_t sum c_k w^{(t)}``, features paid once per tree), whose
    optimum is the individual-pruning baseline of §7.10.
    """
    lam = _check_lam(lam)
    N = data.n_samples
    if tree is None:
        trees = list(range(data.n_trees))
        scale = 1.0 / data.n_trees
    else:
        if not (0 <= int(tree) < data.n_trees):
            raise ValueError(f"tree must be in 0..{data.n_trees - 1}, got {tree}")
        trees = [int(tree)]
        scale = 1.0
    b = ModelBuilder("pruning_ip2")
    sizes = np.array([data.trees[t].n_nodes for t in trees])
    esizes = np.array([data.trees[t].n_entries for t in trees])
    z = b.add_vars("z", shape=(int(sizes.sum()),), kind="binary", lb=0.0, ub=1.0)
    wt = b.add_vars("wt", shape=(int(esizes.sum()),), kind="binary", lb=0.0, ub=1.0)
    # local re-indexing: global node id of tree t -> position in this model's z group
    z_map = np.full(data.n_nodes, -1, dtype=np.int64)
    wt_base = np.zeros(data.n_trees, dtype=np.int64)
    pos = epos = 0
    for t, s, e in zip(trees, sizes, esizes, strict=True):
        z_map[data.node_offset[t] : data.node_offset[t + 1]] = z.index[pos : pos + s]
        wt_base[t] = epos
        pos += s
        epos += e
    r, c, m = _leaf_rows(data, z_map, trees)
    b.add_constraints("leaf", r, c, 1.0, "==", np.ones(m))
    r, c, m = _feature_rows(data, z_map, wt.index, trees, wt_base)
    b.add_constraints("feature", r, c, 1.0, "==", np.ones(m))
    err = np.concatenate([data.trees[t].error for t in trees]).astype(np.float64)
    b.add_objective(z.index, scale * err / N)
    feats = np.concatenate([data.trees[t].use_feature for t in trees])
    # per-tree lam_ind = T lam, times scale 1/T  ->  lam (ensemble); single tree: lam
    b.add_objective(wt.index, lam * data.costs[feats] / N)
    _meta(b, data, "IP2", lam, trees=trees)
    return b.build()


def build_ip3(
    data: Any,
    lam: float = 0.0,
    budget: float | None = None,
    aggregate: bool = False,
    merge: bool = False,
) -> Model:
    """IP3, the ensemble formulation (§7.5); with ``budget`` the budgeted problem LP1 (§7.7).

    ``min 1/(NT) sum_t sum_h e_h z_h + lam sum_k c_k (1/N) sum_i w_{k,i}`` s.t. leaf rows,
    feature rows, link rows; z, wt, w binary. With ``budget=B`` the ``lam`` term is replaced by
    the row ``sum_k c_k (1/N) sum_i w_{k,i} <= B`` (which destroys total unimodularity).
    ``w <= 1`` is kept as a bound (implied at optimum for ``lam c_k >= 0``; explicit for safety).

    ``aggregate=True`` builds the equivalent compact form: all ``w^{(t)}_{k,i}`` with the same
    ``(t, u_{t,k,i}, k)`` equal ``1 - sum_{h in p(u) + u} z_h`` in every feasible point, so they
    share one ``wt`` column and one feature row (one fictitious leaf per (u, k) in Lemma 4.1's
    augmented tree); link rows become ``wt_{t,u,k} <= w_{k,i}``. The map between the two
    polyhedra is an injective affine map of the same (z, w) polyhedron, so vertices stay integral
    and optimal values coincide, while the feature rows shrink from one per (t, k, i) — each with
    depth(u) + 2 nonzeros — to one per (t, u, k).

    ``merge=True`` (needs ``aggregate``) additionally merges (feature, example) pairs whose link
    rows involve the same ``wt`` columns: their ``w_{k,i}`` take equal optimal values, so one
    column per class with cost ``lam c_k |class| / N`` and the class representative's link rows
    suffice. The merged model is the aggregated IP3 of "virtual examples" (one per class) with
    weighted costs — the same matrix shape, hence still integral. ``meta["pair_class"]`` maps
    every pair to its ``w`` column.
    """
    lam = _check_lam(lam)
    if budget is not None:
        budget = float(budget)
        if not np.isfinite(budget):
            raise ValueError(f"budget must be a finite number, got {budget}")
    b = ModelBuilder("pruning_ip3" if budget is None else "pruning_lp1")
    z = _common_vars(b, data, "binary")
    n_wt = data.n_groups if aggregate else data.n_entries
    wt = b.add_vars("wt", shape=(n_wt,), kind="binary", lb=0.0, ub=1.0)
    if merge and not aggregate:
        raise ValueError("merge=True needs aggregate=True")
    pair_class, class_rep = _merge_pairs(data) if merge else (None, None)
    n_w = data.n_pairs if pair_class is None else class_rep.shape[0]
    w = b.add_vars("w", shape=(n_w,), kind="binary", lb=0.0, ub=1.0)
    trees = list(range(data.n_trees))
    r, c, m = _leaf_rows(data, z.index, trees)
    b.add_constraints("leaf", r, c, 1.0, "==", np.ones(m))
    if aggregate:
        R, C = [], []
        row0 = 0
        g_tree = np.searchsorted(data.entry_offset, data.group_start, side="right") - 1
        for t in trees:
            tree = data.trees[t]
            gs = np.flatnonzero(g_tree == t)
            u = tree.use_node[data.group_start[gs] - data.entry_offset[t]]
            indptr, indices = tree.ancestors_csr()
            owner, anc = _gather_ancestors(indptr, indices, u)
            R.append(np.concatenate([np.arange(gs.shape[0]), owner]) + row0)
            C.append(np.concatenate([wt.index[gs], z.index[data.node_offset[t] + anc]]))
            row0 += gs.shape[0]
        r, c, m = np.concatenate(R), np.concatenate(C), row0
        wt_of_entry = wt.index[data.entry_group]
    else:
        r, c, m = _feature_rows(data, z.index, wt.index, trees, data.entry_offset[:-1])
        wt_of_entry = wt.index
    b.add_constraints("feature", r, c, 1.0, "==", np.ones(m))
    if pair_class is None:
        keep = np.arange(data.n_entries, dtype=np.int64)
        w_of_entry = w.index[data.entry_pair]
    else:
        is_rep = np.zeros(data.n_pairs, dtype=bool)
        is_rep[class_rep] = True
        keep = np.flatnonzero(is_rep[data.entry_pair])
        w_of_entry = w.index[pair_class[data.entry_pair[keep]]]
    ne = keep.shape[0]
    rows = np.arange(ne, dtype=np.int64)
    b.add_constraints(
        "link",
        np.concatenate([rows, rows]),
        np.concatenate([wt_of_entry[keep], w_of_entry]),
        np.concatenate([np.ones(ne), -np.ones(ne)]),
        "<=",
        np.zeros(ne),
    )
    if pair_class is None:
        _ensemble_objective(b, data, z, w, lam, budget)
    else:
        N, T = data.n_samples, data.n_trees
        err = np.concatenate([t.error for t in data.trees]).astype(np.float64)
        b.add_objective(z.index, err / (N * T))
        size = np.bincount(pair_class, minlength=n_w).astype(np.float64)
        cost = data.costs[data.pair_feature[class_rep]] * size / N
        if budget is None:
            b.add_objective(w.index, lam * cost)
        else:
            zero = np.zeros(n_w, dtype=np.int64)
            b.add_constraints("budget", zero, w.index, cost, "<=", np.array([budget]))
    extra = {} if pair_class is None else {"pair_class": pair_class, "class_rep": class_rep}
    _meta(
        b, data, "IP3" if budget is None else "LP1", lam, budget=budget, aggregate=aggregate,
        merge=pair_class is not None, **extra,
    )
    return b.build()


def _merge_pairs(data: Any) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Classes of (feature, example) pairs linked to identical sets of aggregated wt columns.

    Candidates come from two independent random 64-bit signature sums; every class is then
    verified exactly (sorted group lists compared element by element against the
    representative), and on any mismatch nothing is merged. Returns ``(pair_class, class_rep)``.
    """
    P = data.n_pairs
    p, g = data.entry_pair, data.entry_group
    order = np.lexsort((g, p))
    ps, gs = p[order], g[order]
    cnt = np.bincount(ps, minlength=P)
    ptr = np.concatenate(([0], np.cumsum(cnt)))
    rng = np.random.default_rng(12345)
    r1 = rng.integers(0, 2**63 - 1, size=data.n_groups, dtype=np.int64).view(np.uint64)
    r2 = rng.integers(0, 2**63 - 1, size=data.n_groups, dtype=np.int64).view(np.uint64)
    h1 = np.zeros(P, dtype=np.uint64)
    h2 = np.zeros(P, dtype=np.uint64)
    np.add.at(h1, ps, r1[gs])
    np.add.at(h2, ps, r2[gs])
    key = np.stack([h1.view(np.int64), h2.view(np.int64), cnt], axis=1)
    _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inv = inv.ravel()
    rep_of_pair = first[inv]
    j = np.arange(ps.shape[0]) - ptr[ps]
    same = gs == gs[ptr[rep_of_pair[ps]] + j]
    if not np.all(same):
        return None, None
    return inv.astype(np.int64), first.astype(np.int64)


def decode(model: Model, x: np.ndarray, data: Any) -> list[np.ndarray]:
    """Per-tree pruned-leaf masks (``z > 0.5``) from a solution vector of an IP0–IP3 model."""
    zval = model.values(np.asarray(x, dtype=np.float64))["z"].reshape(-1)
    trees = model.meta.get("trees", list(range(data.n_trees)))
    out, pos = [], 0
    for t in trees:
        n = data.trees[t].n_nodes
        out.append(zval[pos : pos + n] > 0.5)
        pos += n
    return out


# ------------------------------------------------------------------------------------------
# Lemma 4.1 certificate
# ------------------------------------------------------------------------------------------
@dataclass
class NetworkCertificate:
    """Outcome of :func:`certify_network_matrix`.

    Attributes
    ----------
    ok : bool
        Every tree block is a network matrix after the row operations (and, for IP3, the link
        block has the interval structure of Theorem 4.2's proof); TU confirmed if it was checked.
    consecutive_ones : bool
        In the augmented pre-order every column's ones are contiguous (Lemma 4.1 step 4).
    network : bool
        After ``M = D A`` every column has exactly one -1 and at most one +1 (step 6).
    link_ok : bool or None
        Link rows are ``wt - w <= 0`` with every ``wt`` in exactly one link row (None: no link).
    totally_unimodular : bool or None
        Brute-force result on the full constraint matrix (None: too large, not checked).
    tu_method : str
        ``"subdeterminants"``, ``"ghouila-houri"`` or ``"skipped"``.
    per_tree : DataFrame
        One row per tree: rows, columns, consecutive_ones, network.
    matrices : list of scipy.sparse matrices
        The per-tree ``M = D A`` (rows in augmented pre-order), for inspection.
    row_orders : list of ndarray
        Model row indices of each tree block in the order used.
    """

    ok: bool
    consecutive_ones: bool
    network: bool
    link_ok: bool | None
    totally_unimodular: bool | None
    tu_method: str
    per_tree: pd.DataFrame
    matrices: list = field(default_factory=list, repr=False)
    row_orders: list = field(default_factory=list, repr=False)

    def __bool__(self) -> bool:
        return self.ok

    def graph(self, t: int):  # noqa: ANN201 - networkx object
        """Tree ``t``'s shortest-path DAG of §7.9: nodes ``0..L``, one arc ``(a-1) -> b`` per
        column (attribute ``col`` = model column index)."""
        import networkx as nx

        M = sp.csc_matrix(self.matrices[t])
        L = M.shape[0]
        g = nx.MultiDiGraph()
        g.add_nodes_from(range(L + 1))
        for j in range(M.shape[1]):
            col = M[:, j].toarray().ravel()
            if not col.any():
                continue
            a = int(np.flatnonzero(col == -1)[0])
            plus = np.flatnonzero(col == 1)
            bnode = int(plus[0]) if plus.size else L
            g.add_edge(a, bnode, col=int(self.per_tree.attrs["columns"][t][j]))
        return g


def _tree_blocks(model: Model) -> tuple[np.ndarray, str]:
    rows = [np.arange(model.constraints["leaf"].start, model.constraints["leaf"].stop)]
    if "feature" in model.constraints:
        blk = model.constraints["feature"]
        rows.append(np.arange(blk.start, blk.stop))
    return np.concatenate(rows), "z"


def certify_network_matrix(model: Model, tu_check: str | bool = "auto") -> NetworkCertificate:
    """Check Lemma 4.1 (and the link structure of Thm 4.2) on a built IP0/IP2/IP3 model.

    Works from the constraint matrix alone: the ``z`` columns must be numbered in pre-order per
    tree (as the builders do). For each row of the ``leaf``/``feature`` blocks, its ``z`` columns
    form a root path; the deepest one (largest id) is the row's anchor node, the smallest its
    tree's root, and subtree ends follow from the leaf rows. Rows are sorted in the augmented
    pre-order of §7.6 (a fictitious leaf of ``u`` after all real descendants of ``u``, deeper
    anchors first), the consecutive-ones property is verified, the bidiagonal ``D`` is applied
    and every column of ``M = D A`` must have one -1 and at most one +1.

    Parameters
    ----------
    model : Model
        From :func:`build_ip0`, :func:`build_ip2` or :func:`build_ip3` (no budget row).
    tu_check : "auto", True or False
        Also brute-force total unimodularity of the full matrix (``"auto"``: when small enough).
    """
    if "leaf" not in model.constraints or "z" not in model.vars:
        raise ValueError("model must have a 'z' variable group and a 'leaf' constraint block")
    rows, _ = _tree_blocks(model)
    A = model.A[rows].tocsr()
    if not (np.allclose(model.row_lower[rows], 1.0) and np.allclose(model.row_upper[rows], 1.0)):
        raise ValueError("tree blocks must be equality rows with right-hand side 1")
    zg = model.vars["z"]
    coo = A.tocoo()
    is_z = (coo.col >= zg.start) & (coo.col < zg.stop)
    m = A.shape[0]
    zc = coo.col - zg.start
    anchor = np.full(m, -1, dtype=np.int64)
    root = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    np.maximum.at(anchor, coo.row[is_z], zc[is_z])
    np.minimum.at(root, coo.row[is_z], zc[is_z])
    nz_z = np.bincount(coo.row[is_z], minlength=m)
    n_other = np.bincount(coo.row[~is_z], minlength=m)
    other_col = np.full(m, -1, dtype=np.int64)
    other_col[coo.row[~is_z]] = coo.col[~is_z]
    if np.any(anchor < 0) or np.any(n_other > 1):
        raise ValueError("every tree row needs z columns and at most one other (w) column")
    is_leaf_row = n_other == 0
    # end[v] = 1 + last leaf below v, from the leaf rows containing v
    end = np.zeros(zg.size, dtype=np.int64)
    lr = is_leaf_row[coo.row] & is_z
    np.maximum.at(end, zc[lr], anchor[coo.row[lr]] + 1)
    depth = nz_z - 1
    primary = np.where(is_leaf_row, 2 * anchor, 2 * end[anchor] - 1)
    secondary = np.where(is_leaf_row, 0, -depth)
    order = np.lexsort((other_col, secondary, primary, root))
    roots_sorted = root[order]
    cuts = np.flatnonzero(np.diff(roots_sorted)) + 1
    blocks = np.split(order, cuts)

    Acsc = A.tocsc()
    records, mats, row_orders, colsets = [], [], [], []
    all_c1 = all_net = True
    seen_cols = np.zeros(model.n_vars, dtype=np.int64)
    for blk in blocks:
        sub = Acsc[blk]  # rows in augmented pre-order
        cols = np.flatnonzero(np.diff(sp.csc_matrix(sub).indptr))
        sub = sp.csc_matrix(sub[:, cols])
        seen_cols[cols] += 1
        L = sub.shape[0]
        # consecutive ones: for every column, (last - first + 1) == count of ones
        ptr = sub.indptr
        first = sub.indices[ptr[:-1]]
        last = np.maximum.reduceat(sub.indices, ptr[:-1])
        cnt = np.diff(ptr)
        c1 = bool(np.all(last - first + 1 == cnt) and np.all(sub.data == 1.0))
        D = sp.diags([-np.ones(L), np.ones(L - 1)], [0, -1], shape=(L, L), format="csr")
        M = sp.csc_matrix(D @ sub)
        M.eliminate_zeros()
        minus = np.asarray((M == -1).sum(axis=0)).ravel()
        plus = np.asarray((M == 1).sum(axis=0)).ravel()
        bad = M.data[(M.data != 1) & (M.data != -1)]
        net = bool(bad.size == 0 and np.all(minus == 1) and np.all(plus <= 1))
        all_c1 &= c1
        all_net &= net
        records.append(
            {"rows": L, "columns": cols.shape[0], "consecutive_ones": c1, "network": net}
        )
        mats.append(M)
        row_orders.append(rows[blk])
        colsets.append(cols)
    disjoint = bool(np.all(seen_cols <= 1))
    per_tree = pd.DataFrame(records)
    per_tree.attrs["columns"] = colsets

    link_ok: bool | None = None
    if "link" in model.constraints:
        lb = model.constraints["link"]
        Lk = model.A[lb.start : lb.stop].tocsr()
        wtg, wg = model.vars["wt"], model.vars["w"]
        Lc = Lk.tocoo()
        in_wt = (Lc.col >= wtg.start) & (Lc.col < wtg.stop)
        in_w = (Lc.col >= wg.start) & (Lc.col < wg.stop)
        per_row_ok = (np.bincount(Lc.row[in_wt & (Lc.data == 1)], minlength=Lk.shape[0]) == 1) & (
            np.bincount(Lc.row[in_w & (Lc.data == -1)], minlength=Lk.shape[0]) == 1
        )
        wt_count = np.bincount(Lc.col[in_wt] - wtg.start, minlength=wtg.size)
        # spec IP3: every w^{(t)}_{k,i} in exactly one link row; aggregated: in at least one
        wt_once = wt_count >= 1 if model.meta.get("aggregate") else wt_count == 1
        link_ok = bool(
            np.all(per_row_ok)
            and np.all(np.diff(Lk.indptr) == 2)
            and np.all(wt_once)
            and np.all(np.isinf(model.row_lower[lb.start : lb.stop]))
            and np.allclose(model.row_upper[lb.start : lb.stop], 0.0)
        )

    tu: bool | None = None
    method = "skipped"
    if tu_check:
        res = is_totally_unimodular(model.A, force=tu_check is True)
        if res is not None:
            tu, method = res
    ok = bool(
        all_c1 and all_net and disjoint and (link_ok in (None, True)) and (tu in (None, True))
    )
    return NetworkCertificate(
        ok=ok,
        consecutive_ones=all_c1,
        network=all_net and disjoint,
        link_ok=link_ok,
        totally_unimodular=tu,
        tu_method=method,
        per_tree=per_tree,
        matrices=mats,
        row_orders=row_orders,
    )


def _subdeterminants_ok(A: np.ndarray) -> bool:
    m, n = A.shape
    for k in range(1, min(m, n) + 1):
        rsets = np.array(list(combinations(range(m), k)), dtype=np.int64)
        csets = np.array(list(combinations(range(n), k)), dtype=np.int64)
        for rs in rsets:
            sub = A[rs][:, csets]  # (k, n_csets, k)
            dets = np.linalg.det(np.transpose(sub, (1, 0, 2)))
            if np.any(np.abs(np.abs(dets) - np.round(np.abs(dets))) > 1e-6) or np.any(
                np.round(np.abs(dets)) > 1
            ):
                return False
    return True


def _ghouila_houri_ok(A: np.ndarray, chunk: int = 1 << 18) -> bool:
    """Every subset of rows has a signing with all column sums in {-1, 0, 1} (Ghouila-Houri)."""
    m = A.shape[0]
    total = 3**m
    pow3 = 3 ** np.arange(m, dtype=np.int64)
    covered = np.zeros(1 << m, dtype=bool)
    for s in range(0, total, chunk):
        code = np.arange(s, min(total, s + chunk), dtype=np.int64)
        digits = (code[:, None] // pow3[None, :]) % 3  # 0 absent, 1 plus, 2 minus
        sign = np.where(digits == 2, -1, digits).astype(np.int64)
        sums = sign @ A.astype(np.int64)
        good = np.all(np.abs(sums) <= 1, axis=1)
        masks = ((digits != 0).astype(np.int64) << np.arange(m, dtype=np.int64)).sum(axis=1)
        covered[masks[good]] = True
    return bool(covered.all())


def is_totally_unimodular(
    A: Any, force: bool = False, max_subdet: int = 300_000, max_gh_rows: int = 15
) -> tuple[bool, str] | None:
    """Brute-force total unimodularity of a small matrix, or None if too large.

    Uses all square subdeterminants when their number ``C(m+n, m)`` is at most ``max_subdet``;
    otherwise the Ghouila-Houri characterisation (every subset of rows — of columns, if fewer —
    has a +-1 signing whose sums are all in {-1, 0, 1}; 3^m signings) for ``m <= max_gh_rows``.
    Zero rows and columns are dropped first (they do not affect TU). ``force`` raises the limits.
    """
    M = np.asarray(sp.csr_matrix(A).toarray(), dtype=np.float64)
    M = M[np.any(M != 0, axis=1)][:, np.any(M != 0, axis=0)]
    if M.size == 0:
        return True, "subdeterminants"
    if np.any(~np.isin(M, (-1.0, 0.0, 1.0))):
        return False, "subdeterminants"
    m, n = M.shape
    if force:
        max_subdet *= 10
        max_gh_rows += 2
    if comb(m + n, m) <= max_subdet:
        return _subdeterminants_ok(M), "subdeterminants"
    if min(m, n) <= max_gh_rows:
        return _ghouila_houri_ok(M if m <= n else M.T), "ghouila-houri"
    return None

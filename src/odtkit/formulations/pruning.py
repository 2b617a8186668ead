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

The Lemma 4.1 certificate of these matrices is :mod:`odtkit.formulations.network`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from odtkit.model import Model, ModelBuilder

__all__ = [
    "build_ip0",
    "build_ip1",
    "build_ip2",
    "build_ip3",
    "decode",
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

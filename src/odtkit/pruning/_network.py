"""The Lemma 4.1 certificate: the pruning models' constraint matrices are network matrices.

NWS 2016, Lemma 4.1 / Theorem 4.2 (docs/formulations-search-and-pruning.md §7.6–7.7): after
sorting the rows of one tree's ``leaf`` and ``feature`` blocks in the augmented pre-order of
§7.6 every column has consecutive ones, so the bidiagonal row operation ``M = D A`` leaves one
-1 and at most one +1 per column — a network matrix; IP3's ``link`` rows ``wt - w <= 0`` keep
total unimodularity. :func:`certify_network_matrix` checks this on a built
:class:`~odtkit.model.Model` from its matrix and block names alone (IP0, IP2, IP3 and the compact
IP3 qualify; IP1's ``cover`` rows and LP1's ``budget`` row do not), and
:func:`is_totally_unimodular` brute-forces total unimodularity of small matrices as an
independent check.

It lives apart from the builders (``_formulations``) because it certifies a
property of a matrix, whoever built it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from math import comb
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from odtkit.model import Model
from odtkit.pruning._formulations import IP3Meta

__all__ = ["NetworkCertificate", "certify_network_matrix", "is_totally_unimodular"]

#: The constraint blocks Lemma 4.1 and Theorem 4.2 speak about; any other block (IP1's
#: ``cover``, LP1's ``budget``) is outside the certificate.
CERTIFIED_BLOCKS = ("leaf", "feature", "link")


@dataclass
class NetworkCertificate:
    """Outcome of :func:`certify_network_matrix`.

    Attributes
    ----------
    ok : bool
        Every tree block is a network matrix after the row operations, the link block (IP3)
        has the structure of Theorem 4.2's proof, no other block exists, and TU was confirmed
        if it was checked. False means nothing is certified (not that the LP is fractional).
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
    other_blocks : tuple of str
        Constraint blocks outside :data:`CERTIFIED_BLOCKS` (IP1's ``cover``, LP1's ``budget``):
        the lemma says nothing about them, so their presence makes ``ok`` False.
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
    other_blocks: tuple[str, ...] = ()
    matrices: list[sp.csc_matrix] = field(default_factory=list, repr=False)
    row_orders: list[np.ndarray] = field(default_factory=list, repr=False)

    def __bool__(self) -> bool:
        return self.ok

    def graph(self, t: int) -> Any:  # a networkx MultiDiGraph (networkx is untyped)
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


def _tree_blocks(model: Model[object]) -> tuple[np.ndarray, str]:
    rows = [np.arange(model.constraints["leaf"].start, model.constraints["leaf"].stop)]
    if "feature" in model.constraints:
        blk = model.constraints["feature"]
        rows.append(np.arange(blk.start, blk.stop))
    return np.concatenate(rows), "z"


def certify_network_matrix(
    model: Model[object], tu_check: str | bool = "auto"
) -> NetworkCertificate:
    """Check Lemma 4.1 (and the link structure of Thm 4.2) on a built IP0, IP2 or IP3 model.

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
        Built by :class:`~odtkit.pruning.IP0`, ``IP2`` or ``IP3``. A model with
        other blocks (``IP1``'s cover rows, ``LP1``'s budget row) is refused: ``ok`` is False
        and ``other_blocks`` names them.
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
        # IP3 (§7.5): every w^{(t)}_{k,i} in exactly one link row; aggregated: in at least one
        aggregated = isinstance(model.meta, IP3Meta) and model.meta.aggregate
        wt_once = wt_count >= 1 if aggregated else wt_count == 1
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
    other = tuple(name for name in model.constraints if name not in CERTIFIED_BLOCKS)
    ok = bool(
        all_c1
        and all_net
        and disjoint
        and not other
        and (link_ok in (None, True))
        and (tu in (None, True))
    )
    return NetworkCertificate(
        ok=ok,
        consecutive_ones=all_c1,
        network=all_net and disjoint,
        link_ok=link_ok,
        totally_unimodular=tu,
        tu_method=method,
        per_tree=per_tree,
        other_blocks=other,
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


def _small_enough(m: int, n: int, max_subdet: int, max_gh_rows: int) -> str | None:
    """Which brute force fits an ``m x n`` matrix (``None``: neither), from the shape alone.

    ``C(m+n, m) >= 2^min(m, n)``, so a matrix with more than ``log2(max_subdet)`` rows and
    columns never has few enough subdeterminants; the binomial is only computed below that (a
    big integer of a large shape would itself be slow)."""
    if min(m, n) <= max_subdet.bit_length() and comb(m + n, m) <= max_subdet:
        return "subdeterminants"
    if min(m, n) <= max_gh_rows:
        return "ghouila-houri"
    return None


def is_totally_unimodular(
    A: Any, force: bool = False, max_subdet: int = 300_000, max_gh_rows: int = 15
) -> tuple[bool, str] | None:
    """Brute-force total unimodularity of a small matrix, or None if too large.

    Uses all square subdeterminants when their number ``C(m+n, m)`` is at most ``max_subdet``;
    otherwise the Ghouila-Houri characterisation (every subset of rows — of columns, if fewer —
    has a +-1 signing whose sums are all in {-1, 0, 1}; 3^m signings) for ``m <= max_gh_rows``.
    Zero rows and columns are dropped first (they do not affect TU). ``force`` raises the limits.

    The decision is taken on the sparse matrix (its shape without zero rows and columns and its
    stored values); only a matrix small enough to brute-force is ever made dense, so a large
    model (IP3 of a forest: tens of thousands of rows and columns) costs memory in proportion
    to its nonzeros and returns None.
    """
    S = sp.csr_matrix(A, dtype=np.float64, copy=True)  # a Model's matrix is read-only
    S.eliminate_zeros()
    S = S[np.diff(S.indptr) > 0]
    S = S[:, np.flatnonzero(np.bincount(S.indices, minlength=S.shape[1]))]
    if S.nnz == 0:
        return True, "subdeterminants"
    if np.any(~np.isin(S.data, (-1.0, 1.0))):
        return False, "subdeterminants"
    m, n = S.shape
    if force:
        max_subdet *= 10
        max_gh_rows += 2
    how = _small_enough(m, n, max_subdet, max_gh_rows)
    if how is None:
        return None
    M = S.toarray()
    if how == "subdeterminants":
        return _subdeterminants_ok(M), how
    return _ghouila_houri_ok(M if m <= n else M.T), how

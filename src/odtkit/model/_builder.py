"""ModelBuilder: accumulate variable groups and sparse constraint blocks, then freeze a Model.

Everything is vectorized: a constraint block is given as COO triplets (or a scipy.sparse
matrix) computed with numpy index arithmetic, and ``build()`` assembles all blocks into one CSR
matrix in a single COO -> CSR conversion.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, overload

import numpy as np
import scipy.sparse as sp

from odtkit._limits import check_deadline
from odtkit.model._model import VAR_KINDS, ConstraintBlock, Model, VarGroup

M = TypeVar("M")

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
SENSES = ("<=", ">=", "==")


def _check_name(name: Any, what: str, taken: Mapping[str, Any]) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"{what} name must start with a letter and contain only letters, digits and '_', "
            f"got {name!r}"
        )
    if name in taken:
        raise ValueError(f"{what} name {name!r} is already used")
    return name


def _broadcast(value: Any, shape: tuple[int, ...], name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    try:
        return np.broadcast_to(arr, shape).reshape(-1)
    except ValueError:
        raise ValueError(
            f"{name} must be a scalar or broadcastable to shape {shape}, got shape {arr.shape}"
        ) from None


class ModelBuilder:
    """Collects a model piece by piece; :meth:`build` returns the immutable :class:`Model`.

    Examples
    --------
    >>> b = ModelBuilder("toy")
    >>> x = b.add_vars("x", shape=(2,), kind="binary")
    >>> b.add_constraints("cover", rows=[0, 0], cols=x.index, vals=1.0, sense=">=", rhs=[1.0])
    >>> b.add_objective(x.index, [3.0, 2.0])
    >>> model = b.build()
    """

    def __init__(self, name: str = "model") -> None:
        self.name = str(name)
        self._groups: dict[str, VarGroup] = {}
        self._lower: list[np.ndarray] = []
        self._upper: list[np.ndarray] = []
        self._n_vars = 0
        self._blocks: dict[str, ConstraintBlock] = {}
        self._coo_rows: list[np.ndarray] = []
        self._coo_cols: list[np.ndarray] = []
        self._coo_vals: list[np.ndarray] = []
        self._row_lower: list[np.ndarray] = []
        self._row_upper: list[np.ndarray] = []
        self._n_rows = 0
        self._obj_cols: list[np.ndarray] = []
        self._obj_vals: list[np.ndarray] = []
        self._offset = 0.0
        self._built = False

    @property
    def n_vars(self) -> int:
        return self._n_vars

    @property
    def n_constraints(self) -> int:
        return self._n_rows

    @property
    def vars(self) -> Mapping[str, VarGroup]:
        return dict(self._groups)

    # variables ---------------------------------------------------------------------------------
    def add_vars(
        self,
        name: str,
        shape: int | Sequence[int],
        kind: str = "continuous",
        lb: Any = 0.0,
        ub: Any = np.inf,
        labels: Sequence[Any] | None = None,
    ) -> VarGroup:
        """Add a group of ``prod(shape)`` columns.

        Parameters
        ----------
        name : str
            Group name (letters, digits, ``_``; starts with a letter).
        shape : int or tuple of int
        kind : {"binary", "integer", "continuous"}
            Binary columns get bounds clipped to [0, 1].
        lb, ub : float or array broadcastable to ``shape``
        labels : sequence with one label sequence (or None) per dimension, optional

        Returns
        -------
        VarGroup whose ``index`` holds the global column numbers.
        """
        self._check_open()
        _check_name(name, "variable group", self._groups)
        shape_t = tuple(int(s) for s in np.atleast_1d(np.asarray(shape)).reshape(-1))
        if any(s < 0 for s in shape_t):
            raise ValueError(f"shape must be non-negative, got {shape_t}")
        if kind not in VAR_KINDS:
            raise ValueError(f"kind must be one of {VAR_KINDS}, got {kind!r}")
        size = int(np.prod(shape_t, dtype=np.int64))
        lower = _broadcast(lb, shape_t, "lb").astype(float)
        upper = _broadcast(ub, shape_t, "ub").astype(float)
        if kind == "binary":
            lower = np.maximum(lower, 0.0)
            upper = np.minimum(upper, 1.0)
        if np.any(np.isnan(lower)) or np.any(np.isnan(upper)):
            raise ValueError(f"bounds of group {name!r} contain NaN")
        if labels is not None:
            labels = tuple(None if lab is None else tuple(lab) for lab in labels)
            if len(labels) != len(shape_t) or any(
                lab is not None and len(lab) != s for lab, s in zip(labels, shape_t, strict=True)
            ):
                raise ValueError(
                    f"labels of group {name!r} must give one sequence per dimension of {shape_t}"
                )
        group = VarGroup(name, shape_t, self._n_vars, size, kind, labels)
        self._groups[name] = group
        self._lower.append(lower)
        self._upper.append(upper)
        self._n_vars += size
        return group

    # constraints -------------------------------------------------------------------------------
    def add_constraints(
        self,
        name: str,
        rows: Any = None,
        cols: Any = None,
        vals: Any = None,
        sense: str | Sequence[str] | np.ndarray = "<=",
        rhs: Any = 0.0,
        *,
        matrix: sp.spmatrix | sp.sparray | None = None,
        n_rows: int | None = None,
    ) -> ConstraintBlock:
        """Add a block of rows ``sum_j a_rj x_j  (sense)  rhs_r``.

        Parameters
        ----------
        name : str
        rows, cols, vals : array-like
            COO triplets: ``rows`` are local row numbers ``0..m-1`` of this block, ``cols`` global
            column indices (e.g. ``group.index[...]``), ``vals`` coefficients (scalar broadcasts).
            Duplicate (row, col) pairs are summed.
        sense : "<=", ">=", "==" or an array of them (one per row)
        rhs : float or array of length m
        matrix : scipy.sparse matrix of shape (m, n_vars_so_far or fewer columns), optional
            Instead of triplets.
        n_rows : int, optional
            Number of rows m; by default ``len(rhs)`` if ``rhs`` is an array, else ``max(rows)+1``.
        """
        self._check_open()
        _check_name(name, "constraint block", self._blocks)
        if matrix is not None:
            if rows is not None or cols is not None or vals is not None:
                raise ValueError("give either matrix= or rows/cols/vals triplets, not both")
            coo = sp.coo_matrix(matrix)
            r, c, v = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data.astype(float)
            m_default = coo.shape[0]
        else:
            if rows is None or cols is None or vals is None:
                raise ValueError("add_constraints needs rows, cols and vals (or matrix=)")
            r = np.asarray(rows, dtype=np.int64).reshape(-1)
            c = np.asarray(cols, dtype=np.int64).reshape(-1)
            v = np.broadcast_to(np.asarray(vals, dtype=float), r.shape).reshape(-1)
            if r.shape != c.shape:
                raise ValueError(f"rows and cols must have equal length, got {r.size} and {c.size}")
            m_default = None
        rhs_arr = np.asarray(rhs, dtype=float)
        if n_rows is not None:
            m = int(n_rows)
        elif rhs_arr.ndim > 0:
            m = int(rhs_arr.size)
        elif m_default is not None:
            m = int(m_default)
        else:
            m = int(r.max()) + 1 if r.size else 0
        if r.size and (r.min() < 0 or r.max() >= m):
            raise ValueError(f"rows of block {name!r} must lie in 0..{m - 1}")
        if c.size and (c.min() < 0 or c.max() >= self._n_vars):
            raise ValueError(
                f"cols of block {name!r} must be column indices in 0..{self._n_vars - 1}"
            )
        if np.any(~np.isfinite(v)):
            raise ValueError(f"coefficients of block {name!r} must be finite")
        rhs_v = _broadcast(rhs_arr, (m,), "rhs")
        senses = np.broadcast_to(np.asarray(sense, dtype=object), (m,))
        bad = [s for s in set(senses.tolist()) if s not in SENSES]
        if bad:
            raise ValueError(f"sense must be one of {SENSES}, got {bad}")
        lower = np.where((senses == ">=") | (senses == "=="), rhs_v, -np.inf).astype(float)
        upper = np.where((senses == "<=") | (senses == "=="), rhs_v, np.inf).astype(float)
        return self._add_block(name, r, c, v, lower, upper, m)

    def add_range_constraints(
        self,
        name: str,
        rows: Any = None,
        cols: Any = None,
        vals: Any = None,
        lower: Any = -np.inf,
        upper: Any = np.inf,
        *,
        matrix: sp.spmatrix | sp.sparray | None = None,
        n_rows: int | None = None,
    ) -> ConstraintBlock:
        """Like :meth:`add_constraints` but with explicit ``lower <= a.x <= upper`` per row."""
        lo, up = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        if n_rows is None and (lo.ndim > 0 or up.ndim > 0):
            n_rows = int(lo.size if lo.ndim > 0 else up.size)
        block = self.add_constraints(
            name, rows, cols, vals, "<=", 0.0, matrix=matrix, n_rows=n_rows
        )
        m = block.size
        self._row_lower[-1] = _broadcast(lo, (m,), "lower")
        self._row_upper[-1] = _broadcast(up, (m,), "upper")
        if np.any(self._row_lower[-1] > self._row_upper[-1]):
            raise ValueError(f"block {name!r} has rows with lower > upper")
        return block

    def _add_block(
        self,
        name: str,
        r: np.ndarray,
        c: np.ndarray,
        v: np.ndarray,
        lower: np.ndarray,
        upper: np.ndarray,
        m: int,
    ) -> ConstraintBlock:
        block = ConstraintBlock(name, self._n_rows, m)
        self._blocks[name] = block
        self._coo_rows.append(r + self._n_rows)
        self._coo_cols.append(c)
        self._coo_vals.append(v)
        self._row_lower.append(lower)
        self._row_upper.append(upper)
        self._n_rows += m
        return block

    # objective ---------------------------------------------------------------------------------
    def add_objective(self, cols: Any, coeffs: Any) -> None:
        """Add ``coeffs * x[cols]`` to the (minimised) objective; repeated columns accumulate."""
        self._check_open()
        c = np.asarray(cols, dtype=np.int64).reshape(-1)
        v = np.broadcast_to(np.asarray(coeffs, dtype=float), np.asarray(cols).shape).reshape(-1)
        if c.size and (c.min() < 0 or c.max() >= self._n_vars):
            raise ValueError(f"objective cols must be column indices in 0..{self._n_vars - 1}")
        if np.any(~np.isfinite(v)):
            raise ValueError("objective coefficients must be finite")
        self._obj_cols.append(c)
        self._obj_vals.append(v)

    def set_objective_offset(self, offset: float) -> None:
        """Set the objective constant (reported in every objective value and bound)."""
        self._check_open()
        offset = float(offset)
        if not np.isfinite(offset):
            raise ValueError(f"offset must be finite, got {offset}")
        self._offset = offset

    # build -------------------------------------------------------------------------------------
    @overload
    def build(self) -> Model[None]: ...

    @overload
    def build(self, meta: M) -> Model[M]: ...

    def build(self, meta: Any = None) -> Model[Any]:
        """Assemble the immutable Model (one COO -> CSR conversion). The builder is then closed.

        ``meta`` (any immutable object, e.g. a formulation's frozen dataclass) becomes
        ``model.meta``; its type is the model's type parameter.
        """
        self._check_open()
        n, m = self._n_vars, self._n_rows
        if self._coo_rows:
            rows = np.concatenate(self._coo_rows)
            cols = np.concatenate(self._coo_cols)
            vals = np.concatenate(self._coo_vals)
        else:
            rows = cols = np.empty(0, dtype=np.int64)
            vals = np.empty(0)
        A = sp.csr_matrix((vals, (rows, cols)), shape=(m, n))
        A.sum_duplicates()
        A.eliminate_zeros()
        A.sort_indices()
        check_deadline()
        c = np.zeros(n)
        if self._obj_cols:
            np.add.at(c, np.concatenate(self._obj_cols), np.concatenate(self._obj_vals))
        integrality = np.zeros(n, dtype=bool)
        for g in self._groups.values():
            if g.kind != "continuous":
                integrality[g.start : g.stop] = True
        col_lower = np.concatenate(self._lower) if self._lower else np.empty(0)
        col_upper = np.concatenate(self._upper) if self._upper else np.empty(0)
        if np.any(col_lower > col_upper):
            raise ValueError("some variables have lb > ub")
        model = Model(
            name=self.name,
            A=A,
            row_lower=np.concatenate(self._row_lower) if self._row_lower else np.empty(0),
            row_upper=np.concatenate(self._row_upper) if self._row_upper else np.empty(0),
            col_lower=col_lower,
            col_upper=col_upper,
            integrality=integrality,
            c=c,
            offset=self._offset,
            vars=self._groups,
            constraints=self._blocks,
            meta=meta,
        )
        self._built = True
        return model

    def _check_open(self) -> None:
        if self._built:
            raise RuntimeError("this ModelBuilder has already built its Model; start a new builder")
        # every builder call ends a vectorized phase of a formulation's build: the place to
        # notice that the caller's time limit has passed (odtkit._limits)
        check_deadline()

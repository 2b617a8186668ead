"""The immutable, backend-neutral Model: plain numpy / scipy.sparse data.

A Model is what every formulation builds and every backend consumes::

    min  c @ x + offset
    s.t. row_lower <= A @ x <= row_upper
         col_lower <= x <= col_upper,  x[integrality] integer

Columns are organised in named *variable groups* (contiguous column blocks with a shape) and rows
in named *constraint blocks* (contiguous row blocks). Build it with
:class:`odtkit.model.ModelBuilder`.

A model is generic over its ``meta``: whatever its builder attached (a formulation attaches its
own frozen dataclass, e.g. :class:`odtkit.formulations.TreeMeta`, so ``Model[TreeMeta]``). The IR
itself knows nothing about formulations: it stores the object and hands it back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, TypeVar

import numpy as np
import pandas as pd
import scipy.sparse as sp

VAR_KINDS = ("binary", "integer", "continuous")

#: The type of a model's ``meta`` (covariant: a ``Model[TreeMeta]`` is a ``Model[object]``).
MetaT = TypeVar("MetaT", covariant=True)


class _Span:
    """A contiguous block ``start .. start+size-1`` (of columns or of rows): a mixin, not a
    dataclass, so that the subclasses keep their own field order."""

    start: int
    size: int

    @property
    def stop(self) -> int:
        return self.start + self.size

    @property
    def slice(self) -> slice:
        return slice(self.start, self.start + self.size)


@dataclass(frozen=True)
class VarGroup(_Span):
    """A named block of columns ``start .. start+size-1`` viewed with shape ``shape`` (C order).

    Attributes
    ----------
    name : str
    shape : tuple of int
    start : int
        Global index of the first column.
    size : int
        Number of columns (``prod(shape)``).
    kind : str
        ``"binary"``, ``"integer"`` or ``"continuous"``.
    labels : tuple or None
        One sequence of labels per dimension (or None for a dimension), for display and names.
    """

    name: str
    shape: tuple[int, ...]
    start: int
    size: int
    kind: str
    labels: tuple[Any, ...] | None = None

    @property
    def index(self) -> np.ndarray:
        """int64 array of ``shape`` holding the global column indices of the group."""
        idx = np.arange(self.start, self.start + self.size, dtype=np.int64).reshape(self.shape)
        idx.setflags(write=False)
        return idx

    def __repr__(self) -> str:
        cols = f"{self.start}..{self.stop - 1}"
        return f"VarGroup({self.name!r}, shape={self.shape}, kind={self.kind!r}, cols={cols})"


@dataclass(frozen=True)
class ConstraintBlock(_Span):
    """A named block of rows ``start .. start+size-1`` of the constraint matrix."""

    name: str
    start: int
    size: int

    def __repr__(self) -> str:
        return f"ConstraintBlock({self.name!r}, rows={self.start}..{self.stop - 1})"


_READ_ONLY_MAPPINGS = ("vars", "constraints")


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Model(Generic[MetaT]):
    """An immutable linear (mixed-integer) minimisation model. Build with ``ModelBuilder``.

    Attributes
    ----------
    name : str
    A : scipy.sparse.csr_matrix, shape (n_constraints, n_vars)
    row_lower, row_upper : ndarray of float
        Row activity bounds (``-inf`` / ``inf`` for one-sided rows; equal for equalities).
    col_lower, col_upper : ndarray of float
    integrality : ndarray of bool
        True for binary and integer columns.
    c : ndarray of float
        Objective coefficients (minimisation).
    offset : float
        Objective constant, included in every reported objective and bound.
    vars : Mapping[str, VarGroup]
    constraints : Mapping[str, ConstraintBlock]
    meta : MetaT
        What the builder attached (``None`` by default): a formulation's frozen dataclass of
        everything its ``decode``/``start``/``evaluate`` read (e.g.
        :class:`odtkit.formulations.TreeMeta`). Should be immutable: models are shared.
    """

    name: str
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray
    c: np.ndarray
    offset: float
    vars: Mapping[str, VarGroup]
    constraints: Mapping[str, ConstraintBlock]
    meta: MetaT

    def __post_init__(self) -> None:
        for name in ("row_lower", "row_upper", "col_lower", "col_upper", "integrality", "c"):
            _frozen(getattr(self, name))
        for arr in (self.A.data, self.A.indices, self.A.indptr):
            arr.setflags(write=False)
        for name in _READ_ONLY_MAPPINGS:
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    # pickle and copy.deepcopy: a mappingproxy cannot be pickled, so the state holds plain dicts
    # and the read-only views (and read-only arrays, which unpickle writeable) are made again
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for name in _READ_ONLY_MAPPINGS:
            state[name] = dict(state[name])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__post_init__()

    # sizes ------------------------------------------------------------------------------------
    @property
    def n_vars(self) -> int:
        return int(self.A.shape[1])

    @property
    def n_constraints(self) -> int:
        return int(self.A.shape[0])

    @property
    def n_nonzeros(self) -> int:
        return int(self.A.nnz)

    @property
    def is_mip(self) -> bool:
        return bool(self.integrality.any())

    # views ------------------------------------------------------------------------------------
    def values(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Split a full column vector into one array per group (reshaped to the group's shape)."""
        x = self._check_vector(x, "x")
        return {g.name: x[g.start : g.stop].reshape(g.shape) for g in self.vars.values()}

    def vector(self, values: Mapping[str, Any] | np.ndarray) -> np.ndarray:
        """Inverse of :meth:`values`: a full column vector from one array per group.

        A full vector is accepted as is (validated and copied). Missing groups are an error.
        """
        if isinstance(values, np.ndarray):
            return self._check_vector(values, "values").copy()
        if not isinstance(values, Mapping):
            raise TypeError(
                f"values must be a dict of arrays by group or a vector, got {type(values).__name__}"
            )
        unknown = set(values) - set(self.vars)
        if unknown:
            raise ValueError(
                f"values has unknown groups {sorted(unknown)}; model groups: {list(self.vars)}"
            )
        missing = [g for g in self.vars if g not in values]
        if missing:
            raise ValueError(f"values lacks the groups {missing}")
        x = np.empty(self.n_vars)
        for g in self.vars.values():
            arr = np.asarray(values[g.name], dtype=float)
            if arr.size != g.size:
                raise ValueError(
                    f"values[{g.name!r}] has {arr.size} entries, group shape is {g.shape}"
                )
            x[g.start : g.stop] = arr.reshape(-1)
        return x

    def objective_value(self, x: np.ndarray) -> float:
        """``c @ x + offset``."""
        x = self._check_vector(x, "x")
        return float(self.c @ x + self.offset)

    def check(self, x: Mapping[str, Any] | np.ndarray, tol: float = 1e-6) -> pd.DataFrame:
        """Every violated row, bound and integrality requirement of an assignment.

        Parameters
        ----------
        x : full column vector or dict of arrays by group
        tol : float
            Absolute tolerance.

        Returns
        -------
        DataFrame with columns ``block, row, activity, lower, upper, violation``; ``row`` is the
        row number inside the constraint block (for bounds and integrality: the flat index inside
        the variable group, with block ``"bounds:<group>"`` / ``"integrality:<group>"``).
        Empty means feasible.
        """
        x = self.vector(x)
        parts: list[pd.DataFrame] = []
        act = self.A @ x
        viol = np.maximum(self.row_lower - act, act - self.row_upper)
        bad = np.flatnonzero(viol > tol)
        if bad.size:
            parts.append(
                self._frame(bad, act, self.row_lower, self.row_upper, viol, self._row_blocks())
            )
        viol = np.maximum(self.col_lower - x, x - self.col_upper)
        bad = np.flatnonzero(viol > tol)
        if bad.size:
            parts.append(
                self._frame(
                    bad, x, self.col_lower, self.col_upper, viol, self._col_groups("bounds")
                )
            )
        frac = np.where(self.integrality, np.abs(x - np.round(x)), 0.0)
        bad = np.flatnonzero(frac > tol)
        if bad.size:
            rounded = np.round(x)
            parts.append(
                self._frame(bad, x, rounded, rounded, frac, self._col_groups("integrality"))
            )
        if not parts:
            return pd.DataFrame(
                {
                    "block": pd.Series(dtype=object),
                    "row": pd.Series(dtype=np.int64),
                    "activity": pd.Series(dtype=float),
                    "lower": pd.Series(dtype=float),
                    "upper": pd.Series(dtype=float),
                    "violation": pd.Series(dtype=float),
                }
            )
        return pd.concat(parts, ignore_index=True)

    def is_feasible(self, x: Mapping[str, Any] | np.ndarray, tol: float = 1e-6) -> bool:
        """True when :meth:`check` finds no violation."""
        empty: bool = self.check(x, tol).empty  # pandas is untyped here (Any)
        return empty

    def relaxed(self) -> Model[MetaT]:
        """The LP relaxation: the same model with every integrality requirement dropped."""
        return Model(
            name=f"{self.name}_lp",
            A=self.A,
            row_lower=self.row_lower,
            row_upper=self.row_upper,
            col_lower=self.col_lower,
            col_upper=self.col_upper,
            integrality=np.zeros(self.n_vars, dtype=bool),
            c=self.c,
            offset=self.offset,
            vars={
                k: VarGroup(g.name, g.shape, g.start, g.size, "continuous", g.labels)
                for k, g in self.vars.items()
            },
            constraints=self.constraints,
            meta=self.meta,
        )

    # names and output ---------------------------------------------------------------------------
    def column_names(self) -> list[str]:
        """LP-legal names, ``group_i_j`` for element ``[i, j]`` of group ``group``."""
        from odtkit.model._io import column_names

        return column_names(self)

    def row_names(self) -> list[str]:
        """LP-legal names, ``block_r`` for row ``r`` of block ``block``."""
        from odtkit.model._io import row_names

        return row_names(self)

    def to_lp(self, path: Any) -> None:
        """Write the model in CPLEX LP format (readable by HiGHS, CBC, Gurobi, ...)."""
        from odtkit.model._io import write_lp

        write_lp(self, path)

    def to_mps(self, path: Any) -> None:
        """Write the model in free MPS format (readable by HiGHS, CBC, ...)."""
        from odtkit.model._io import write_mps

        write_mps(self, path)

    def summary(self) -> pd.DataFrame:
        """One row per variable group and constraint block: kind, shape, count, nonzeros."""
        A_csc = self.A.tocsc()
        col_nnz = np.diff(A_csc.indptr)
        row_nnz = np.diff(self.A.indptr)
        rows = []
        for g in self.vars.values():
            rows.append(
                {
                    "item": "variables",
                    "name": g.name,
                    "kind": g.kind,
                    "shape": "x".join(map(str, g.shape)) or "scalar",
                    "count": g.size,
                    "nonzeros": int(col_nnz[g.start : g.stop].sum()),
                }
            )
        for b in self.constraints.values():
            lo, up = self.row_lower[b.slice], self.row_upper[b.slice]
            senses = sorted(
                {
                    (
                        "=="
                        if lo_ == up_
                        else "<="
                        if lo_ == -np.inf
                        else ">="
                        if up_ == np.inf
                        else "range"
                    )
                    for lo_, up_ in zip(lo[:1000], up[:1000], strict=True)
                }
            )
            rows.append(
                {
                    "item": "constraints",
                    "name": b.name,
                    "kind": ",".join(senses),
                    "shape": str(b.size),
                    "count": b.size,
                    "nonzeros": int(row_nnz[b.start : b.stop].sum()),
                }
            )
        return pd.DataFrame(rows, columns=["item", "name", "kind", "shape", "count", "nonzeros"])

    def __repr__(self) -> str:
        n_int = int(self.integrality.sum())
        return (
            f"Model({self.name!r}: {self.n_vars} vars ({n_int} integer) "
            f"in {len(self.vars)} groups, {self.n_constraints} constraints "
            f"in {len(self.constraints)} blocks, {self.n_nonzeros} nonzeros)"
        )

    def _repr_html_(self) -> str:
        table: str = self.summary().to_html(index=False)  # pandas is untyped here (Any)
        return f"<p><b>{_html_escape(repr(self))}</b></p>" + table

    # helpers ----------------------------------------------------------------------------------
    def _check_vector(self, x: Any, name: str) -> np.ndarray:
        v = np.asarray(x, dtype=float)
        if v.shape != (self.n_vars,):
            raise ValueError(
                f"{name} must be a vector of length n_vars={self.n_vars}, got shape {v.shape}"
            )
        return v

    def _row_blocks(self) -> tuple[np.ndarray, list[str], np.ndarray]:
        starts = np.array([b.start for b in self.constraints.values()], dtype=np.int64)
        names = [b.name for b in self.constraints.values()]
        return starts, names, starts

    def _col_groups(self, prefix: str) -> tuple[np.ndarray, list[str], np.ndarray]:
        starts = np.array([g.start for g in self.vars.values()], dtype=np.int64)
        names = [f"{prefix}:{g.name}" for g in self.vars.values()]
        return starts, names, starts

    @staticmethod
    def _frame(
        bad: np.ndarray,
        act: np.ndarray,
        lower: np.ndarray,
        upper: np.ndarray,
        viol: np.ndarray,
        blocks: tuple[np.ndarray, Sequence[str], np.ndarray],
    ) -> pd.DataFrame:
        starts, names, _ = blocks
        which = np.searchsorted(starts, bad, side="right") - 1
        return pd.DataFrame(
            {
                "block": np.asarray(names, dtype=object)[which],
                "row": bad - starts[which],
                "activity": act[bad],
                "lower": lower[bad],
                "upper": upper[bad],
                "violation": viol[bad],
            }
        )


def _html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

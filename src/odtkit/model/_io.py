"""LP and MPS writers for :class:`Model` (no solver needed; output is readable by HiGHS).

Names: column ``[i, j]`` of group ``f`` is written ``f_i_j``; row ``r`` of block ``route`` is
``route_r``. Ranged rows (both bounds finite and different) become two rows ``<name>_lo`` /
``<name>_hi`` in LP format (the format has no portable range syntax) and one ranged row in MPS.
Free rows (both bounds infinite) constrain nothing and are omitted. Every column bound is written
explicitly, and integer columns are declared general integers with their bounds (never through the
``Binary`` section, whose implied bounds differ between readers).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from odtkit.model._model import Model


def _names(prefix_sizes: list[tuple[str, tuple[int, ...]]]) -> list[str]:
    out: list[str] = []
    for name, shape in prefix_sizes:
        size = int(np.prod(shape, dtype=np.int64))
        if size == 0:
            continue
        if len(shape) == 0:
            out.append(name)
            continue
        idx = np.indices(shape).reshape(len(shape), -1).T.astype(str)
        out.extend(f"{name}_" + "_".join(row) for row in idx)
    return out


def column_names(model: Model[object]) -> list[str]:
    return _names([(g.name, g.shape) for g in model.vars.values()])


def row_names(model: Model[object]) -> list[str]:
    return _names([(b.name, (b.size,)) for b in model.constraints.values()])


def _num(v: float) -> str:
    if v == np.inf:
        return "inf"
    if v == -np.inf:
        return "-inf"
    return repr(float(v))


def _terms(cols: np.ndarray, vals: np.ndarray, names: np.ndarray) -> str:
    parts = []
    for k, (j, v) in enumerate(zip(cols.tolist(), vals.tolist(), strict=True)):
        sign = "-" if v < 0 else "+"
        parts.append(f"{sign} {_num(abs(v))} {names[j]}")
        if k % 8 == 7:
            parts.append("\n  ")
    return " ".join(parts)


def write_lp(model: Model[object], path: str | os.PathLike[str]) -> None:
    """Write ``model`` in CPLEX LP format."""
    names = np.asarray(column_names(model), dtype=object)
    rnames = row_names(model)
    if model.n_vars == 0:
        raise ValueError("cannot write a model without variables")
    out: list[str] = [f"\\ {model.name}: written by odtkit", "Minimize"]
    nz = np.flatnonzero(model.c)
    obj = _terms(nz, model.c[nz], names) if nz.size else f"0 {names[0]}"
    if model.offset != 0.0:
        obj += f" {'-' if model.offset < 0 else '+'} {_num(abs(model.offset))}"
    out.append(f" obj: {obj}")
    out.append("Subject To")
    A = model.A
    for r in range(model.n_constraints):
        lo, up = model.row_lower[r], model.row_upper[r]
        if lo == -np.inf and up == np.inf:
            continue
        sl = slice(A.indptr[r], A.indptr[r + 1])
        cols, vals = A.indices[sl], A.data[sl]
        expr = _terms(cols, vals, names) if cols.size else f"0 {names[0]}"
        if lo == up:
            out.append(f" {rnames[r]}: {expr} = {_num(up)}")
        elif lo == -np.inf:
            out.append(f" {rnames[r]}: {expr} <= {_num(up)}")
        elif up == np.inf:
            out.append(f" {rnames[r]}: {expr} >= {_num(lo)}")
        else:
            out.append(f" {rnames[r]}_lo: {expr} >= {_num(lo)}")
            out.append(f" {rnames[r]}_hi: {expr} <= {_num(up)}")
    out.append("Bounds")
    for j in range(model.n_vars):
        lo, up = model.col_lower[j], model.col_upper[j]
        if lo == -np.inf and up == np.inf:
            out.append(f" {names[j]} free")
        elif lo == up:
            out.append(f" {names[j]} = {_num(lo)}")
        else:
            out.append(f" {_num(lo)} <= {names[j]} <= {_num(up)}")
    ints = np.flatnonzero(model.integrality)
    if ints.size:
        out.append("General")
        for k in range(0, ints.size, 10):
            out.append(" " + " ".join(names[ints[k : k + 10]]))
    out.append("End")
    _write(path, out)


def write_mps(model: Model[object], path: str | os.PathLike[str]) -> None:
    """Write ``model`` in free MPS format (objective constant as ``-RHS`` of the objective row)."""
    names = column_names(model)
    rnames = row_names(model)
    lo_r, up_r = model.row_lower, model.row_upper
    keep = ~((lo_r == -np.inf) & (up_r == np.inf))
    out: list[str] = [f"NAME {model.name}", "ROWS", " N obj"]
    for r in np.flatnonzero(keep):
        lo, up = lo_r[r], up_r[r]
        kind = "E" if lo == up else "L" if lo == -np.inf else "G"
        out.append(f" {kind} {rnames[r]}")
    out.append("COLUMNS")
    A = model.A.tocsc()
    in_int = False
    marker = 0
    for j in range(model.n_vars):
        is_int = bool(model.integrality[j])
        if is_int != in_int:
            tag = "'INTORG'" if is_int else "'INTEND'"
            out.append(f" MARKER{marker} 'MARKER' {tag}")
            marker += 1
            in_int = is_int
        sl = slice(A.indptr[j], A.indptr[j + 1])
        entries = [
            (rnames[r], v)
            for r, v in zip(A.indices[sl].tolist(), A.data[sl].tolist(), strict=True)
            if keep[r]
        ]
        if model.c[j] != 0.0 or not entries:
            out.append(f" {names[j]} obj {_num(model.c[j])}")
        out.extend(f" {names[j]} {rn} {_num(v)}" for rn, v in entries)
    if in_int:
        out.append(f" MARKER{marker} 'MARKER' 'INTEND'")
    out.append("RHS")
    if model.offset != 0.0:
        out.append(f" RHS obj {_num(-model.offset)}")
    ranges: list[str] = []
    for r in np.flatnonzero(keep):
        lo, up = lo_r[r], up_r[r]
        rhs = up if lo == -np.inf else lo
        if rhs != 0.0:
            out.append(f" RHS {rnames[r]} {_num(rhs)}")
        if lo != up and np.isfinite(lo) and np.isfinite(up):
            ranges.append(f" RNG {rnames[r]} {_num(up - lo)}")
    if ranges:
        out.append("RANGES")
        out.extend(ranges)
    out.append("BOUNDS")
    for j in range(model.n_vars):
        lo, up = model.col_lower[j], model.col_upper[j]
        if lo == -np.inf and up == np.inf:
            out.append(f" FR BND {names[j]}")
            continue
        if lo == up:
            out.append(f" FX BND {names[j]} {_num(lo)}")
            continue
        out.append(f" MI BND {names[j]}" if lo == -np.inf else f" LO BND {names[j]} {_num(lo)}")
        out.append(f" PL BND {names[j]}" if up == np.inf else f" UP BND {names[j]} {_num(up)}")
    out.append("ENDATA")
    _write(path, out)


def _write(path: Any, lines: list[str]) -> None:
    with open(os.fspath(path), "w", encoding="ascii") as fh:
        fh.write("\n".join(lines))
        fh.write("\n")

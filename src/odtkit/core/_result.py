"""SearchResult: what every native search returns, with the field names the MIP Result uses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

#: Column names of every convergence trace (search core and MIP backends alike).
TRACE_COLUMNS = ("time", "incumbent", "bound")

#: Why a search stopped.
SEARCH_STATUSES = ("optimal", "time_limit", "node_limit", "memory_limit", "interrupted")


def empty_trace() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=float) for c in TRACE_COLUMNS})


@dataclass(frozen=True)
class SearchResult:
    """Outcome of a native search: the best model found and its certificate.

    Attributes
    ----------
    model : Tree or RuleList
        Best model found (always a real model, never worse than the greedy start).
    objective : float
        Its objective, equal to ``odtkit.metrics.objective(model, dataset, lam)``.
    lower_bound : float
        A valid lower bound on the optimum; equals ``objective`` when ``status == "optimal"``.
    status : str
        One of ``SEARCH_STATUSES``.
    time : float
        Wall-clock seconds of the search (preprocessing included).
    method : str
        ``"dp"``, ``"bnb"`` or ``"corels"``.
    n_explored : int
        Subproblems (dp), trees/states (bnb) or prefixes (corels) expanded.
    peak_memory_mb : float
        Estimate of the search's own peak memory (caches, queues, bitsets).
    trace : DataFrame
        Columns ``time, incumbent, bound``, a row whenever either changes.
    stats : dict
        Method-specific counters.
    """

    model: Any
    objective: float
    lower_bound: float
    status: str
    time: float
    method: str
    n_explored: int = 0
    peak_memory_mb: float = 0.0
    trace: pd.DataFrame = field(default_factory=empty_trace)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def tree(self) -> Any:
        """The returned model (alias kept for tree searches)."""
        return self.model

    @property
    def bound(self) -> float:
        """Same as ``lower_bound``; the name the MIP Result uses."""
        return self.lower_bound

    @property
    def gap(self) -> float:
        """Absolute gap ``objective - lower_bound`` in objective units (0 when optimal)."""
        return max(0.0, self.objective - self.lower_bound)

    @property
    def is_optimal(self) -> bool:
        return self.status == "optimal"

    def raise_if_not_optimal(self) -> SearchResult:
        if not self.is_optimal:
            raise RuntimeError(
                f"{self.method} search stopped with status {self.status!r} "
                f"(objective {self.objective:.6g}, lower bound {self.lower_bound:.6g})"
            )
        return self

    def summary(self) -> dict[str, Any]:
        """One row for tables: method, status, objective, bound, gap, time, explored, memory."""
        return {
            "method": self.method,
            "status": self.status,
            "objective": self.objective,
            "bound": self.lower_bound,
            "gap": self.gap,
            "time": self.time,
            "n_explored": self.n_explored,
            "peak_memory_mb": self.peak_memory_mb,
            "n_leaves": getattr(self.model, "n_leaves", None),
        }

"""The exact cost–error path of IP3: every λ at which the optimal pruning changes.

docs/formulations-search-and-pruning.md §7.11.

Only the sink capacities of the cut network depend on λ, and they grow with it, so the minimal
optimal source sets are nested: ``S(λ2) ⊆ S(λ1)`` for ``λ1 < λ2`` (Gallo–Grigoriadis–Tarjan).
The path is found by the Eisner–Severance line intersection with contraction: given optimal
sets ``S_L`` (at a smaller λ, larger cost) and ``S_R``, the lines ``E + λ C`` of the two meet
at ``λ*``; the optimum at ``λ*`` lies between them, so only the nodes of ``S_L \\ S_R`` are cut
(``S_R`` is contracted into the source, everything outside ``S_L`` into the sink, and arcs
leaving the window are dropped: closure makes them vacuous). If the cut's line is strictly
below the common value at ``λ*`` it is a new vertex of the lower convex hull and both halves
are searched; otherwise ``λ*`` is a breakpoint. Every level of the recursion cuts disjoint node
windows, so its total work is at most one cut of the whole network.

Each hull vertex ``j`` is stored implicitly by the nested sets: node ``v`` of the network is in
vertex ``j``'s set iff ``exit_index[v] > j``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from odtkit import _native
from odtkit._limits import stop_on_interrupt
from odtkit._progress import Progress
from odtkit.pruning._cut import ClosureNetwork, _native_cut, example_weights, native_network
from odtkit.pruning._data import EnsembleData
from odtkit.pruning._ensemble import PrunedEnsemble
from odtkit.results import Status

__all__ = ["CostErrorPath", "exact_path"]

#: relative tolerance of the line comparisons (errors and costs are sums of integers / reals)
_REL_TOL = 1e-12
#: a window of at least this many nodes, and nearly the whole network, is cut by the λ-dependent
#: reductions of ``_cut`` (rules 3 and 5) instead of one flow on the window: the path's first
#: interior cut is the whole problem at some λ, where they can leave a fraction of the network
_REDUCED_MIN_NODES = 200_000
_REDUCED_SHARE = 0.9
#: such a window is first cut at ``λ* · _PROBE_FACTOR``: any λ inside a window gives a vertex
#: of the hull, and one strictly below both end lines splits the window as λ* would. The
#: reductions' cost depends on λ far more than the window's size (the default forest,
#: 100 trees on 100,000 rows: 81 CPU s at λ* = 0.0232, where they force and exclude nothing,
#: 10 s at λ*/2, where they force the 119,769 splits of the vertex optimal at both)
_PROBE_FACTOR = 0.5


@dataclass(eq=False)
class CostErrorPath:
    """The lower convex hull of IP3's (cost term, error term) trade-off, exactly.

    Vertex ``j`` (``0 .. n_vertices-1``, by increasing λ and so decreasing cost) is the optimal
    pruning for every ``λ`` in ``[lam_lo[j], lam_hi[j]]`` (``lam_lo[0] = 0``,
    ``lam_hi[-1] = inf``); ``breakpoints = lam_hi[:-1]``, where the optimum changes (both
    neighbours are optimal there). Ties inside an interval go to the smallest set of splits.

    Attributes
    ----------
    data : EnsembleData
    lam_lo, lam_hi, error_term, cost_term : ndarray (n_vertices,)
    n_cuts : int
        Min cuts solved (each on a window of the network).
    time : float
    status : Status
        ``optimal`` for the whole path; ``time_limit`` / ``interrupted`` when the computation
        stopped early. Every vertex is then still an optimal pruning for some λ, but between
        the ends of an ``unproven`` interval hull vertices may be missing: the path there is
        the upper envelope of the two known ones (a feasible pruning, an upper bound), and the
        chord of their values is a lower bound (OPT is concave in λ).
    unproven : tuple of (lam_lo, lam_hi)
        The λ intervals where vertices may be missing (empty when ``status`` is optimal).
    """

    data: EnsembleData
    network: ClosureNetwork
    exit_index: np.ndarray
    lam_lo: np.ndarray
    lam_hi: np.ndarray
    error_term: np.ndarray
    cost_term: np.ndarray
    n_cuts: int
    time: float
    stats: dict[str, Any] = field(default_factory=dict)
    status: Status = Status.OPTIMAL
    unproven: tuple[tuple[float, float], ...] = ()

    @property
    def n_vertices(self) -> int:
        return int(self.lam_lo.shape[0])

    def __len__(self) -> int:
        return self.n_vertices

    @property
    def breakpoints(self) -> np.ndarray:
        """The λ at which the optimal pruning changes, increasing."""
        return self.lam_hi[:-1].copy()

    def __repr__(self) -> str:
        return (
            f"CostErrorPath(vertices={self.n_vertices}, cost {self.cost_term[0]:.4g} -> "
            f"{self.cost_term[-1]:.4g}, error term {self.error_term[0]:.4g} -> "
            f"{self.error_term[-1]:.4g}, cuts={self.n_cuts}, time={self.time:.3g}s)"
        )

    def side(self, j: int) -> np.ndarray:
        """Source side (kept splits and acquired pairs) of vertex ``j`` in the cut network."""
        j = self._check(j)
        return self.exit_index > j

    def pruning(self, j: int, lam: float | None = None) -> PrunedEnsemble:
        """The pruned ensemble of vertex ``j`` (its objective at ``lam``, default ``lam_lo[j]``)."""
        j = self._check(j)
        lam = float(self.lam_lo[j]) if lam is None else float(lam)
        return PrunedEnsemble(self.data, self.network.leaves(self.side(j)), lam)

    def vertex_at(self, lam: float) -> int:
        """Index of the vertex optimal at ``lam`` (at a breakpoint: the lower-cost one)."""
        if not lam >= 0:
            raise ValueError(f"lam must be >= 0, got {lam!r}")
        return int(np.searchsorted(self.lam_hi[:-1], lam, side="right"))

    def at(self, lam: float) -> PrunedEnsemble:
        """An optimal pruning for ``lam`` (the vertex of :meth:`vertex_at`)."""
        return self.pruning(self.vertex_at(lam), lam)

    def vertex_within(self, budget: float) -> int:
        """Index of the lowest-error vertex whose cost term is at most ``budget``."""
        tol = _REL_TOL * max(1.0, abs(budget))
        fits = np.flatnonzero(self.cost_term <= budget + tol)
        if fits.size == 0:
            raise ValueError(f"no pruning has cost term <= {budget!r}")
        return int(fits[0])

    def lagrangian_bound(self, budget: float) -> tuple[float, float]:
        """``(bound, lam)``: the best Lagrangian bound ``max_λ OPT(λ) - λ budget`` on the
        smallest error term within ``budget``, and the λ attaining it (a breakpoint, or 0)."""
        j = self.vertex_within(budget)
        lam = float(self.lam_lo[j])
        return float(self.error_term[j] + lam * (self.cost_term[j] - budget)), lam

    def to_frame(self, X_test: Any = None, y_test: Any = None) -> pd.DataFrame:
        """One row per vertex: ``lam_lo``, ``lam_hi``, ``error_term``, ``cost_term``,
        ``n_leaves``; with test data also :meth:`PrunedEnsemble.evaluate`'s columns
        prefixed ``test_``."""
        rows = []
        for j in range(self.n_vertices):
            row: dict[str, Any] = {
                "vertex": j,
                "lam_lo": float(self.lam_lo[j]),
                "lam_hi": float(self.lam_hi[j]),
                "error_term": float(self.error_term[j]),
                "cost_term": float(self.cost_term[j]),
            }
            pe = self.pruning(j)
            row["n_leaves"] = pe.n_leaves
            if X_test is not None:
                for k, v in pe.evaluate(X_test, y_test).items():
                    row[f"test_{k}"] = v
            rows.append(row)
        return pd.DataFrame(rows)

    def _check(self, vertex: Any) -> int:
        j = int(vertex)
        if j < 0:
            j += self.n_vertices
        if not 0 <= j < self.n_vertices:
            raise IndexError(f"vertex {j} out of range (path has {self.n_vertices})")
        return j


class _CutStopped(Exception):  # noqa: N818 - control flow inside exact_path
    def __init__(self, status: Status) -> None:
        super().__init__(status.value)
        self.status = status


def _lam_max(data: EnsembleData) -> float:
    """A λ above which every optimum has cost 0: a pair costs at least min c / N and the error
    term varies by at most 1."""
    pos = data.costs[data.costs > 0]
    return 2.0 * data.n_samples / float(pos.min()) + 1.0 if pos.size else 1.0


def _split_arcs(network: ClosureNetwork) -> tuple[np.ndarray, np.ndarray]:
    """The arcs ``child -> parent`` between splits (the others go from a split to a pair)."""
    to_split = network.heads < network.n_splits
    return network.tails[to_split], network.heads[to_split]


def _zero_lam_side(network: ClosureNetwork) -> np.ndarray:
    """Minimal source side at λ = 0, without a flow.

    Every sink capacity is 0 there, so the maximum flow is 0 and the side is what ``s`` reaches
    along the infinite arcs: the splits that gain (positive source capacity), their ancestors,
    and the pairs these point to.
    """
    n_split = network.n_splits
    child, parent = _split_arcs(network)
    side = np.zeros(network.n_nodes, dtype=bool)
    side[:n_split] = network.gain > 0
    while True:  # one round per level of the deepest tree
        grow = parent[side[child] & ~side[parent]]
        if grow.size == 0:
            break
        side[grow] = True
    from_side = side[network.tails]
    side[network.heads[from_side]] = True
    return side


def _every_gain_pays(network: ClosureNetwork, nodes: np.ndarray) -> bool:
    """Whether every split in ``nodes`` that gains needs a priced pair (its own or an
    ancestor's): then at a λ where one pair costs more than all gains together the minimal
    source side is empty, and no flow is needed to say so."""
    n_split = network.n_splits
    priced = np.zeros(network.n_nodes, dtype=bool)
    priced[n_split:] = network.pair_cost > 0
    blocked = np.zeros(network.n_nodes, dtype=bool)
    blocked[network.tails[priced[network.heads]]] = True
    child, parent = _split_arcs(network)
    while True:  # a split under a blocked one is blocked: closure keeps its parent
        grow = child[blocked[parent] & ~blocked[child]]
        if grow.size == 0:
            break
        blocked[grow] = True
    splits = nodes[nodes < n_split]
    return not bool(np.any((network.gain[splits] > 0) & ~blocked[splits]))


def exact_path(
    data: EnsembleData,
    *,
    network: ClosureNetwork | None = None,
    time_limit: float | None = None,
    progress: bool | None = None,
) -> CostErrorPath:
    """Every breakpoint of IP3's optimal pruning over λ ≥ 0 (module docstring).

    A time limit or Ctrl-C after the first two cuts returns the path so far: the windows not
    yet split are closed at their lines' intersection and listed in ``unproven`` (status
    ``time_limit`` / ``interrupted``, see :class:`CostErrorPath`). Before them there is no path
    at all, and ``RuntimeError`` says so.
    """
    t0 = time.perf_counter()
    if network is None:
        network = native_network(data)
    N, T = data.n_samples, data.n_trees
    NT = N * T
    scale = network.scale
    n_split = network.n_splits
    V = network.n_nodes
    gain = np.zeros(V, dtype=np.float64)
    gain[:n_split] = network.gain
    cost = np.zeros(V, dtype=np.float64)
    cost[n_split:] = network.pair_cost
    src_all = np.zeros(V, dtype=np.int64)
    src_all[:n_split] = network.gain * np.int64(scale)
    local = np.full(V, -1, dtype=np.int32)  # scratch: global node -> window index
    n_cuts = 0

    def cut(nodes: np.ndarray, arcs: np.ndarray, lam: float) -> np.ndarray:
        """Minimal source side (bool over ``nodes``) of the window's network at ``lam``."""
        nonlocal n_cuts
        n_cuts += 1
        local[nodes] = np.arange(nodes.shape[0], dtype=np.int32)
        src = src_all[nodes]
        limit = float(src.sum()) + 1.0
        snk = np.ceil(np.minimum(lam * T * cost[nodes] * scale, limit)).astype(np.int64)
        left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 1e-3)
        out = _native.closure_min_cut(
            src,
            snk,
            np.ascontiguousarray(local[network.tails[arcs]]),
            np.ascontiguousarray(local[network.heads[arcs]]),
            time_limit=float(left or 0.0),
            # on the path's windows push-relabel took 0.6-0.9x Dinic's time (same minimal
            # side; benchmarks/results/pruning.md, part scale): cut 0 (lam = 0) gets Dinic
            algorithm="dinic" if lam == 0.0 else "push_relabel",
        )
        local[nodes] = -1
        if out["status"] != "optimal":
            raise _CutStopped(Status.parse(out["status"]))
        return np.asarray(out["source_side"]).astype(bool)

    weight: np.ndarray | None = None

    def reduced_cut(nodes: np.ndarray, lam: float) -> np.ndarray | None:
        """The window's minimal source side from the whole problem at ``lam`` cut with every
        reduction (its minimal optimum lies between the window's ends, which are the minimal
        optima at smaller and larger λ); None when the reductions stopped on memory."""
        nonlocal n_cuts, weight
        if weight is None:
            weight = example_weights(data)
        left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 1e-3)
        # no rule 7 here: its cut at lam / 3 costs more than it saves on the default forest's
        # first window (path 121 -> 144 CPU s with it, benchmarks/pruning_default_forests.py)
        out = _native_cut(
            data,
            lam,
            weight,
            reduce=True,
            time_limit=left,
            memory_limit_mb=None,
            nest_levels=0,
        )
        status = Status(out["status"])
        if status == Status.MEMORY_LIMIT:
            return None
        if status != Status.OPTIMAL:
            raise _CutStopped(status)
        n_cuts += 1
        kept = np.zeros(V, dtype=bool)
        kept[:n_split] = out["kept"][network.split_node]
        inside = np.zeros(V, dtype=bool)
        inside[nodes] = True
        kept &= inside
        # a window pair is on the side iff a kept split of the window points to it (pairs of
        # the contracted source side belong to it, so none of the window's has such a tail);
        # read over every arc, not through the window's list (one gather less): a pair outside
        # the window marked here is never read below
        kept[network.heads[kept[network.tails]]] = True
        window_side: np.ndarray = kept[nodes]
        return window_side

    def big(nodes: np.ndarray) -> bool:
        """Whether a window is cut by the reductions (nearly the whole network)."""
        return bool(nodes.shape[0] >= max(_REDUCED_MIN_NODES, _REDUCED_SHARE * V))

    def window_cut(nodes: np.ndarray, arcs: np.ndarray, lam: float) -> np.ndarray:
        if big(nodes):
            inside = reduced_cut(nodes, lam)
            if inside is not None:
                return inside
        return cut(nodes, arcs, lam)

    def line(E: float, C: float, lam: float) -> float:
        return E / NT + lam * C / N

    # int32 ids (the native network has fewer than 2**31 nodes and arcs): the windows' arc
    # lists are the path's largest arrays
    all_nodes = np.arange(V, dtype=np.int32)
    all_arcs = np.arange(network.n_arcs, dtype=np.int32)
    exit_lam = np.full(V, -np.inf)
    lam_top = _lam_max(data)
    try:
        # both ends are known without a flow on the whole network (λ = 0: what the gains
        # reach; λ_top: nothing, when every gain needs a priced pair)
        in0 = _zero_lam_side(network)
        n_cuts += 1
        S0 = all_nodes[in0]
        # every node, when every split gains (no arc to filter: two gathers over ~10^8 arcs)
        arcs0 = all_arcs if in0.all() else all_arcs[in0[network.tails] & in0[network.heads]]
        del all_arcs
        if _every_gain_pays(network, S0):
            in_hi = np.zeros(S0.shape[0], dtype=bool)
            n_cuts += 1
        else:
            in_hi = cut(S0, arcs0, lam_top)
    except _CutStopped as stop:
        raise RuntimeError(
            f"the cost-error path stopped ({stop.status.value}) before its two end cuts: "
            "there is no path yet"
        ) from None
    E0 = network.base_errors - gain[S0].sum()
    C0 = cost[S0].sum()
    S_hi = S0[in_hi]
    exit_lam[S_hi] = np.inf
    E_hi = network.base_errors - gain[S_hi].sum()
    C_hi = cost[S_hi].sum()
    member = np.zeros(V, dtype=bool)
    # windows: (nodes, arcs, E_L, C_L, E_R, C_R, λ_L, λ_R); L has the larger cost and is
    # proven optimal at λ_L, R at λ_R
    stack = []
    window = S0[~in_hi]
    if window.size:
        member[window] = True
        stack.append(
            (
                window,
                arcs0[member[network.tails[arcs0]] & member[network.heads[arcs0]]],
                E0,
                C0,
                E_hi,
                C_hi,
                0.0,
                lam_top,
            )
        )
        member[window] = False

    def _split(window: tuple[Any, ...]) -> None:
        """Cut one window at its lines' intersection (a big one first at a probe λ below it):
        a breakpoint, or two new windows."""
        nodes, arcs, EL, CL, ER, CR, lam_l, lam_r = window
        dC = CL - CR
        if not dC > 0 or not ER >= EL:
            # impossible for minimal optimal sets (R would never beat L); refuse to guess
            raise RuntimeError(
                f"inconsistent cost-error path: window costs {CL!r} -> {CR!r}, errors "
                f"{EL!r} -> {ER!r}"
            )
        lam = (ER - EL) / NT / (dC / N)
        probe = lam * _PROBE_FACTOR
        if big(nodes) and probe > lam_l:
            # a vertex at a λ where the reductions may do more than at λ* (_PROBE_FACTOR); one
            # strictly below both end lines there is a new hull vertex between them
            inside = reduced_cut(nodes, probe)
            if inside is not None and 0 < np.count_nonzero(inside) < nodes.size:
                S = nodes[inside]
                EM, CM = ER - gain[S].sum(), CR + cost[S].sum()
                ends = min(line(EL, CL, probe), line(ER, CR, probe))
                if line(EM, CM, probe) < ends - _REL_TOL * max(1.0, abs(ends)):
                    probe_splits[0] += 1
                    halves(nodes, arcs, inside, (EL, CL, EM, CM, ER, CR), (lam_l, probe, lam_r))
                    return
        inside = window_cut(nodes, arcs, lam)
        S = nodes[inside]
        EM = ER - gain[S].sum()
        CM = CR + cost[S].sum()
        common = line(EL, CL, lam)
        if (
            line(EM, CM, lam) < common - _REL_TOL * max(1.0, abs(common))
            and 0 < S.size < nodes.size
        ):
            halves(nodes, arcs, inside, (EL, CL, EM, CM, ER, CR), (lam_l, lam, lam_r))
        else:
            exit_lam[nodes] = lam

    def halves(
        nodes: np.ndarray,
        arcs: np.ndarray,
        inside: np.ndarray,
        values: tuple[float, ...],
        lams: tuple[float, float, float],
    ) -> None:
        """The two windows on either side of vertex M (``inside``, optimal at ``lams[1]``)."""
        EL, CL, EM, CM, ER, CR = values
        lam_l, lam, lam_r = lams
        # each arc's two ends read once for both halves (the first window's arcs are the
        # whole network's, ~10^8 on the default forest: every gather over them costs ~1 s)
        half = np.zeros(V, dtype=np.int8)
        half[nodes[inside]] = 1
        half[nodes[~inside]] = 2
        tail = half[network.tails[arcs]]
        head = half[network.heads[arcs]]
        same = tail == head
        for label, part, ends in (
            (1, nodes[inside], (EM, CM, ER, CR, lam, lam_r)),
            (2, nodes[~inside], (EL, CL, EM, CM, lam_l, lam)),
        ):
            stack.append((part, arcs[same & (tail == label)], *ends))

    probe_splits = [0]  # windows split at a probe λ (stats)
    bar = Progress("cost-error path", progress)  # a live line: big forests take minutes
    status = Status.OPTIMAL
    current = None  # the window being split, until its halves are on the stack
    try:
        with stop_on_interrupt() as ctrl_c:
            while stack:
                bar.show(f"{n_cuts} cuts, {len(stack)} windows to split")
                current = stack.pop()
                _split(current)
                current = None
    except _CutStopped as stop:
        status = stop.status
    finally:
        bar.close()
    if ctrl_c.interrupted:
        status = Status.INTERRUPTED
    unproven = []
    if status != Status.OPTIMAL:
        # windows never split: close each at its lines' intersection (the envelope of its two
        # proven vertices); a window's halves come after it on the stack and refine it
        for nodes, _, EL, CL, ER, CR, lam_l, lam_r in ([current] if current else []) + stack:
            exit_lam[nodes] = (ER - EL) / NT / ((CL - CR) / N)
            unproven.append((float(lam_l), float(lam_r)))

    breaks = np.unique(exit_lam[np.isfinite(exit_lam)])
    exit_index = np.where(
        exit_lam == -np.inf,
        0,
        np.where(exit_lam == np.inf, breaks.size + 1, np.searchsorted(breaks, exit_lam) + 1),
    ).astype(np.int64)
    n_vertices = breaks.size + 1

    # vertex j's set is {exit_index > j}: sums over it by a reverse cumulative bincount
    def per_vertex(values: np.ndarray) -> np.ndarray:
        b = np.bincount(exit_index, weights=values, minlength=n_vertices + 1)
        return np.cumsum(b[::-1])[::-1][1:]

    errors = network.base_errors - per_vertex(gain)
    costs = per_vertex(cost)
    return CostErrorPath(
        data=data,
        network=network,
        exit_index=exit_index,
        lam_lo=np.concatenate(([0.0], breaks)),
        lam_hi=np.concatenate((breaks, [np.inf])),
        error_term=errors / NT,
        cost_term=costs / N,
        n_cuts=n_cuts,
        time=time.perf_counter() - t0,
        stats={
            "n_nodes": V,
            "n_arcs": network.n_arcs,
            "lam_max": lam_top,
            "probe_splits": probe_splits[0],
        },
        status=status,
        unproven=tuple(sorted(unproven)),
    )

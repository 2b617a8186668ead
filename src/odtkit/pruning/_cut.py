"""IP3 as one minimum s–t cut in the native core.

Picard 1976; docs/formulations-search-and-pruning.md §7.11.

With ``x_h = 1`` iff internal node ``h`` stays a split, a valid pruning is a set of splits closed
under "parent", and IP3 (no budget row) reads, in units of ``1/(NT)``::

    min  sum_t e_root(t) + sum_h a_h x_h + sum_(k,i) lam T c_k w_(k,i)
    s.t. x_h <= x_parent(h),   x_u <= w_(k,i) for every feature-use entry (t, k, i, u)

with ``a_h = e_left + e_right - e_h <= 0``: a minimum-cost closure, i.e. a minimum cut of the
network ``s -> h`` (capacity ``-a_h``), ``(k,i) -> t`` (capacity ``lam T c_k``) and infinite arcs
``h -> parent(h)``, ``u -> (k,i)``. Pairs with ``c_k = 0`` are free and dropped.

**Exactness.** The native max-flow works on int64. Source capacities ``-a_h`` are integers and
are multiplied by a power of two ``scale`` exactly; sink capacities are rounded *up* (so that a
tie between keeping and pruning goes to pruning, as in the tree DP). Every sink capacity is then
within one unit above the real one, so every cut is within ``n_pay`` units (``n_pay`` = sink arcs)
of its real capacity, and ``const + (flow - n_pay) / scale`` is a valid lower bound on the real
optimum (weak duality on the rounded network, then that shift) whatever the rounding did. The
returned pruning's objective is recomputed independently by
:func:`~odtkit.pruning.objective_terms` and must equal the real capacity of the cut it came
from. ``scale`` is as large as int64 allows (``sum -a_h * scale <= 2**61``), so the gap
``<= n_pay / (scale N T)`` is far below the 1e-9 objective tolerance on every realistic
instance; if it is not, the status says ``feasible`` with both numbers.

**Limits.** A time limit or Ctrl-C stops the max-flow: the flow found so far is still a valid
bound and the nodes reachable from ``s`` in its residual network are a valid closure, so the
result is the pruning they define, with status ``time_limit``/``interrupted``.

**The network the max-flow sees** (issue 25). :func:`cut_prune` builds it natively from the
compact entries (a node ``u`` has entries iff it is a *first-use* node, and they are then the
examples of its subtree: one slice of the examples sorted by leaf), never from per-entry arrays,
and shrinks it exactly before any flow. Below, "closure" is a source side, ``c(C)`` its integer
cut capacity, and the answer is the *minimal* minimum closure (the intersection of all minimum
closures; ties go to pruning). Seven reductions, all on the integer network the flow solves:

1. *Identical examples* (``merge``): examples that reach the same leaf in every tree follow the
   same paths, so each of their pairs has the same predecessors; one node with the summed
   capacity has the same cut values (:func:`duplicate_examples`).
2. *Dead splits*: if every split in the subtree of ``h`` gains nothing (``G_h = 0``), then for any
   minimum closure ``C`` the closure ``C`` minus ``h``'s subtree (and minus the pairs no longer
   forced) is closed and costs no more, so it is minimum too: ``h`` is in no *minimal* minimum
   closure. Dropping such splits (and their arcs) keeps the minimal minimum closure.
3. *Forced splits*, depending on λ: let ``P`` be pairs every minimum closure contains (initially
   none) and ``F`` splits every minimum closure contains (closed under "parent"). For a split
   ``h`` whose parent is in ``F`` (or a root), let ``unpaid(h)`` be the sink capacity of its pairs
   outside ``P`` and ``val(h) = gain(h) - unpaid(h) + sum over its children c of max(0,
   val(c))``. If ``val(h) > 0``, every minimum closure ``C`` contains ``h``: otherwise ``C``
   misses ``h`` and its whole subtree, and adding ``h`` with the descendants whose ``val`` is
   positive (recursively; a closed set since ``h``'s parent is in ``C``) gains their capacities
   and pays at most their ``unpaid`` (``P ⊆ C``), so it lowers ``c(C)`` by at least ``val(h) > 0``
   -- a contradiction. So ``h`` joins ``F`` and its pairs join ``P``; repeated to a fixed point.
   Then every minimum closure is ``F ∪ P`` plus a minimum closure of the network on the other
   splits and pairs (arcs into ``P`` or out of ``F`` are satisfied), whose minimal one is the
   minimal one of the whole: the answer is identical to the uncompressed cut's, and
   ``c = sum of P's sink capacities + the reduced cut``. The flow bound shifts by that constant.
   The rule holds for any such ``P``, so the splits one tree's pass forces pay their pairs
   before the next tree's pass, and the ``unpaid`` sums are kept across passes and rule 5's
   rounds, re-summed only for the first-use nodes whose feature gained paid pairs since.
4. *Identical pairs* (``merge_pairs``): two pair nodes with the same set of predecessors (after
   1–3) are both in or both out of every closure (a pair is in a minimal one iff some
   predecessor is), so one node with the summed capacity has the same cut values. This
   generalizes 1 per feature; groups come from two 64-bit sums over the predecessors and are
   verified list by list.
5. *Restricted problems* (``restrict_levels``, depending on λ; issue 42). For a closed set ``X``
   of splits let ``c(X) = sum of src over the splits not in X + cap(pairs(X))``, with
   ``pairs(X)`` the pairs of ``X``'s first-use nodes outside ``P``. A minimum closure is a
   minimiser ``X`` with exactly ``pairs(X)`` (any other pair only adds capacity), and its
   capacity is ``c(X)`` plus the constant of ``P``. ``cap(pairs(X))`` is a coverage function,
   hence submodular, and the first term is modular, so ``c`` is submodular on the closed sets,
   which are closed under union and intersection. Two consequences. (a) Minimisers form a
   lattice: for minimisers ``A``, ``B``, ``c(A ∪ B) + c(A ∩ B) <= c(A) + c(B)`` makes both
   minimisers, so the minimal minimum closure ``M`` (the answer) is the intersection of all
   minimum closures. (b) Let ``C`` be a closed candidate set with ``F ⊆ C`` and ``M_C`` the
   minimal minimiser of ``c`` over the closed ``X`` with ``F ⊆ X ⊆ C``. Then ``M_C ⊆ M``:
   ``M ∩ M_C`` is such an ``X`` (``F ⊆ M`` by rule 3), so ``c(M ∩ M_C) >= c(M_C)``, and
   submodularity gives ``c(M ∪ M_C) <= c(M) + c(M_C) - c(M ∩ M_C) <= c(M)``: ``M ∪ M_C`` is a
   minimum closure too, so equality holds throughout, ``c(M ∩ M_C) = c(M_C)``, ``M ∩ M_C``
   is a minimiser on ``C`` and contains the minimal one: ``M_C ⊆ M ∩ M_C ⊆ M``. With (a),
   ``M_C`` is in every minimum closure: it joins ``F``, its pairs join ``P`` (exactly rule 3's
   premises), and rule 3 runs again, forcing deeper splits whose pairs are now paid. The
   restricted problem is the network of rule 3 on the splits of ``C`` minus ``F`` and their
   pairs outside ``P`` (splits outside ``C`` fixed out), solved by the same max-flow, which
   returns the minimal minimum closure; rules 2 and 4 hold inside it by their own proofs. All
   of it is on the integer capacities the final flow uses, so the answer is the same bit for
   bit. ``C`` is ``F`` plus the live splits of depth ``<= L`` (closed: a parent is shallower,
   and below a dead split all are dead), for ``L = 0, 1, ...`` until two rounds in a row force
   nothing (or ``L`` reaches ``restrict_levels``). A limit that stops a round's flow forces
   nothing from it (its side is a closure, not ``M_C``).
6. *Excluded splits* (depending on λ; issue 42). For any feasible flow ``f`` of the network of
   rule 3 (live splits, pairs outside ``P``) with residual terminal capacities ``rsrc``,
   ``rsnk``, and any closed ``X``, the cut is ``c(X) = |f| + sum_{v not in X} rsrc(v) +
   sum_{v in X} rsnk(v) + inflow_f(X)`` (every term >= 0; ``inflow_f(X)`` the flow on arcs
   into ``X``: none leave it, it is closed). A minimum closure ``M`` has ``c(M) <= c(∅)``, so
   ``sum_{v in M} rsnk(v) <= sum_{v in M} rsrc(v) <= R0 = sum_v rsrc(v)``. If ``h`` is in
   ``M``, so are its live ancestors and all their pairs and ``h``'s: so a split whose chain
   ``S(h)`` = rsnk of the pairs of ``h`` and of its live ancestors exceeds ``R0`` is in no
   minimum closure. Such splits (with their subtrees: ``S`` only grows downwards) are left
   out of the network; as they are in no minimum closure, the minimum closures of the network
   without them are those of the whole (``M`` among them, so the minimal one is ``M``), and
   its minimum cut is smaller by exactly their source capacities, which the flow bound adds
   back. ``f`` is a greedy flow read from the
   slices without building any network (each live split, deepest first, sends its source
   capacity into the pairs with sink capacity left of its own slice and its live ancestors');
   it is computed again on the splits not yet excluded, which frees the sink capacity the
   excluded ones took, until a pass excludes nothing. Where the optimum keeps (almost) nothing
   the greedy flow saturates (almost) every source arc, ``R0`` is small and every split goes:
   scikit-learn's default forest at λ = 0.1 needs no max-flow at all. Where the optimum keeps
   many splits, ``R0`` is at least the gain the optimum keeps and the rule excludes little.
   It runs after rule 3 and again after rule 5's rounds (whose candidate sets leave excluded
   splits out: still closed, as the excluded set is closed under children).
7. *Nested λ* (``nest_levels``, ``nest_arcs``; issue 42). The sink capacities only grow with λ
   (each is rounded up from a product with λ), so with ``f``, ``f'`` the cut functions at λ and
   ``λ' < λ``, ``g = f - f'`` adds a non-negative amount per pair a set pays and only grows with
   the set. For the minimal minimisers ``A`` at ``λ'`` and ``B`` at λ, submodularity and
   ``f'(A) <= f'(A ∪ B)`` give ``f'(A ∩ B) <= f'(B)``, and ``g(A ∩ B) <= g(B)``, so ``f(A ∩ B) <=
   f(B)``: ``A ∩ B`` is a minimiser at λ and holds the least one, so ``B ⊆ A``. The splits
   outside ``A`` then leave the network as in rule 6: the minimisers over the closed sets inside
   a set that holds ``B`` are global minimisers, so the least one there is ``B``, and their source
   arcs are in its cut. Where ``nest_arcs`` arcs or more are left after rules 1-6, the cut at
   ``λ / 3`` (with every rule, this one ``nest_levels - 1`` deep) runs first and is used if it
   is certified. Where it runs and the unpaid pairs' capacity is at least the live splits' gain,
   rule 5 is left out at λ (its shallow restricted problems cannot pay for their pairs there).

The final max-flow is ``kAuto``'s, except on deep trees (a remaining split 20 or more levels
down, as in scikit-learn's full-depth default forests), where push-relabel replaces Dinic
(ensemble_cut.cpp's ``final_algorithm``), and runs on arcs read from the tree slices instead of
arc arrays (``slice_flow``, ensemble_cut.cpp's ``SliceFlow``: 12 bytes an arc instead of 32).
After its greedy start that flow runs forward (the splits' unrouted source capacity pushed
towards the pairs) or, where the greedy flow left less sink capacity unused than source
capacity unrouted, on the reversed network (the pairs' unused capacity pulled towards the
splits with source capacity left, then every split's deficit returned along its outflow). The
minimal side is the same whichever runs.

At small λ most splits are forced (the 100-tree, depth-10, 100,000-row forest of
``benchmarks/pruning.py`` keeps a few thousand of its 76 M arcs at λ = 1e-3); at large λ rule
3 forces nothing, and rule 5 is what forces the splits the optimum keeps (scikit-learn's
default forest at λ = 1e-2: benchmarks/pruning_default_forests.py). :func:`closure_network` and
:func:`solve_network` keep the uncompressed numpy construction, which the path uses and the
tests compare against.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from odtkit import _native
from odtkit._limits import check_deadline, default_memory_limit_mb
from odtkit.pruning._data import EnsembleData
from odtkit.pruning._ensemble import PrunedEnsemble, compact_arrays, objective_value
from odtkit.results import Result, Status, make_trace

__all__ = [
    "ClosureNetwork",
    "closure_network",
    "cut_prune",
    "duplicate_examples",
    "kept_to_leaves",
    "native_network",
    "reduced_network",
    "scale_for",
    "CUT_TOLERANCE",
]

#: objectives and bounds closer than this (normalized) are equal (as the searches' tolerance)
CUT_TOLERANCE = 1e-9
#: rounds of rule 5 (restricted problems at the depth limits 0 .. RESTRICT_LEVELS - 1) that
#: :func:`cut_prune` runs by default (module docstring; benchmarks/pruning_default_forests.py)
RESTRICT_LEVELS = 32
#: rule 7 (nested λ, ensemble_cut.cpp): the cut at λ / 3 first where the network left at λ holds
#: NEST_ARCS slice entries or more, at most NEST_LEVELS levels deep
NEST_LEVELS = 2
NEST_ARCS = 20 * 2**20
_TOTAL = float(2**61)
_ROUND_FIELDS = ("level", "n_nodes", "n_arcs", "n_forced_cut", "n_forced_rule")
_KEPT = (
    ": returned the pruning its flow so far defines (the splits reachable from the source in "
    "the residual network), with the flow as lower bound"
)
_STOPPED = {
    Status.TIME_LIMIT: "the time limit stopped the max-flow" + _KEPT,
    Status.INTERRUPTED: "Ctrl-C stopped the max-flow" + _KEPT,
    Status.MEMORY_LIMIT: "the memory budget (memory_limit_mb) stopped the max-flow" + _KEPT,
}


@dataclass(frozen=True, eq=False)
class ClosureNetwork:
    """The λ-independent part of the cut network of one :class:`EnsembleData`.

    Nodes ``0 .. n_splits-1`` are the internal tree nodes (``split_node``: their global node id,
    ``data.node_offset[t] + h``), nodes ``n_splits ..`` the (feature, example) pairs with a
    positive cost (``pair``: their index into ``data.pair_key``). ``gain`` (int64) is ``-a_h``,
    the training errors split ``h`` saves, ``pair_cost`` the pair's ``c_k`` (times the number of
    examples it stands for, see :func:`duplicate_examples`); ``tails``/``heads``
    the infinite arcs; ``base_errors`` the errors of the ensemble pruned to its roots.
    """

    data: EnsembleData
    split_node: np.ndarray
    gain: np.ndarray
    pair: np.ndarray
    pair_cost: np.ndarray
    tails: np.ndarray
    heads: np.ndarray
    base_errors: int

    @property
    def n_splits(self) -> int:
        return int(self.split_node.shape[0])

    @property
    def n_nodes(self) -> int:
        return self.n_splits + int(self.pair.shape[0])

    @property
    def n_arcs(self) -> int:
        return int(self.tails.shape[0])

    @property
    def scale(self) -> float:
        """Power of two the integer capacities are multiplied by (see the module docstring)."""
        return scale_for(int(self.gain.sum()))

    def capacities(self, lam: float) -> tuple[np.ndarray, np.ndarray]:
        """Scaled int64 (source_cap, sink_cap) for ``lam`` (sink arcs rounded up)."""
        s = self.scale
        n_split = self.n_splits
        src = np.zeros(self.n_nodes, dtype=np.int64)
        src[:n_split] = self.gain * np.int64(s)
        snk = np.zeros(self.n_nodes, dtype=np.int64)
        real = lam * self.data.n_trees * self.pair_cost * s
        # a cap above the total source capacity can never be cut, so clip it there (+1)
        limit = float(src.sum()) + 1.0
        snk[n_split:] = np.ceil(np.minimum(real, limit)).astype(np.int64)
        return src, snk

    def cut_value(self, lam: float, side: np.ndarray) -> float:
        """Real capacity of the cut with source side ``side`` (in units of 1/(NT))."""
        n_split = self.n_splits
        lost = float(self.gain[~side[:n_split]].sum())
        paid = float((lam * self.data.n_trees * self.pair_cost[side[n_split:]]).sum())
        return lost + paid

    def objective(self, lam: float, side: np.ndarray) -> float:
        """IP3 objective of the pruning ``side`` defines, from the cut's real capacity."""
        NT = self.data.n_samples * self.data.n_trees
        return (self.base_errors - float(self.gain.sum()) + self.cut_value(lam, side)) / NT

    def leaves(self, side: np.ndarray) -> list[np.ndarray]:
        """Per-tree pruned-leaf masks of the closure ``side`` (kept splits)."""
        kept = np.zeros(self.data.n_nodes, dtype=bool)
        kept[self.split_node[side[: self.n_splits]]] = True
        return kept_to_leaves(self.data, kept)


def _trees(data: EnsembleData) -> list[tuple[Any, int]]:
    return list(zip(data.trees, data.node_offset[:-1].tolist(), strict=True))


def scale_for(total_gain: int) -> float:
    """The power of two the integer capacities are multiplied by: as large as keeps the sum of
    the scaled source capacities within 2**61."""
    return float(2.0 ** np.floor(np.log2(_TOTAL / max(float(total_gain), 1.0))))


def error_totals(data: EnsembleData) -> tuple[int, int]:
    """``(base_errors, total_gain)``: the training errors of the trees cut to their roots, and
    what all splits together save (the root errors minus the unpruned leaves' errors)."""
    base = int(sum(int(t.error[0]) for t in data.trees))
    return base, base - int(sum(int(t.error[t.left < 0].sum()) for t in data.trees))


def kept_to_leaves(data: EnsembleData, kept: np.ndarray) -> list[np.ndarray]:
    """Per-tree pruned-leaf masks from the kept splits (bool per global node, a closure)."""
    parent = np.concatenate(
        [np.where(t.parent >= 0, t.parent + off, -1) for t, off in _trees(data)]
    )
    reached = parent < 0
    reached[~reached] = kept[parent[~reached]]
    z = reached & ~kept
    off = data.node_offset
    return [z[off[t] : off[t + 1]] for t in range(data.n_trees)]


def duplicate_examples(data: EnsembleData) -> tuple[np.ndarray, np.ndarray]:
    """``(representative, weight)``: examples that reach the same leaf in every tree follow the
    same paths, so their (feature, example) pairs have the same arcs and can be one node of
    summed capacity. ``representative[i]`` is the first such example of ``i``'s class,
    ``weight[i]`` the class size at a representative (0 elsewhere).

    Classes come from two random 64-bit signatures of the leaf tuple and are then verified
    element by element; on any mismatch nothing is merged.
    """
    N = data.n_samples
    rng = np.random.default_rng(20161)
    r = rng.integers(1, 2**63 - 1, size=(2, data.n_trees), dtype=np.int64).view(np.uint64)
    key = np.zeros((N, 2), dtype=np.uint64)
    # tree by tree, so that no N x T matrix is ever held (100 trees x 100,000 rows: 80 MB each)
    with np.errstate(over="ignore"):  # wrap-around arithmetic is the point of a signature
        for t, tree in enumerate(data.trees):
            leaf = tree.leaf_of.astype(np.uint64)
            key[:, 0] += leaf * r[0, t]
            key[:, 1] += leaf * r[1, t]
    _, first, inverse = np.unique(
        key.view(np.int64), axis=0, return_index=True, return_inverse=True
    )
    representative = first[inverse.ravel()]
    if not all(np.array_equal(t.leaf_of, t.leaf_of[representative]) for t in data.trees):
        representative = np.arange(N)
    weight = np.bincount(representative, minlength=N)
    return representative, weight


def closure_network(data: EnsembleData, *, merge: bool = True) -> ClosureNetwork:
    """Build the cut network of ``data`` from its arrays (numpy only, no per-node loop).

    ``merge``: pairs of examples with identical paths through every tree are one node
    (:func:`duplicate_examples`); the optimum and every cut value are unchanged.
    """
    pairs = list(_trees(data))
    left = np.concatenate([np.where(t.left >= 0, t.left + off, -1) for t, off in pairs])
    right = np.concatenate([np.where(t.right >= 0, t.right + off, -1) for t, off in pairs])
    parent = np.concatenate([np.where(t.parent >= 0, t.parent + off, -1) for t, off in pairs])
    error = np.concatenate([t.error for t in data.trees]).astype(np.int64)
    check_deadline()  # between the vectorized steps (prune's one deadline)
    internal = left >= 0
    split_node = np.flatnonzero(internal)
    split_id = np.cumsum(internal, dtype=np.int64) - 1
    gain = error[split_node] - error[left[split_node]] - error[right[split_node]]
    # a split never increases training error (majority labels); guard the closure's premise
    if np.any(gain < 0):
        raise AssertionError("a split increases training error; EnsembleData is inconsistent")
    roots = data.node_offset[:-1]
    # child -> parent arcs among internal nodes
    child = split_node[parent[split_node] >= 0]
    tails = [split_id[child]]
    heads = [split_id[parent[child]]]
    # first-use node -> pair arcs, for pairs whose feature costs something (and, merging, whose
    # example represents its class of identical paths, with the class size as a multiplier)
    if merge and data.n_trees:
        _, weight = duplicate_examples(data)
        check_deadline()
    else:
        weight = np.ones(data.n_samples, dtype=np.int64)
    pair_weight = weight[data.pair_example]
    pair_cost_all = data.costs[data.pair_feature] * pair_weight
    paid = pair_cost_all > 0
    pair = np.flatnonzero(paid)
    pair_id = np.cumsum(paid, dtype=np.int64) - 1 + split_node.shape[0]
    if data.n_entries:
        entry_paid = paid[data.entry_pair]
        use_node = np.concatenate([t.use_node + off for t, off in pairs])[entry_paid]
        tails.append(split_id[use_node])
        del use_node
        check_deadline()
        heads.append(pair_id[data.entry_pair[entry_paid]])
    return ClosureNetwork(
        data=data,
        split_node=split_node,
        gain=gain.astype(np.int64),
        pair=pair,
        pair_cost=pair_cost_all[pair],
        tails=np.concatenate(tails).astype(np.int32),
        heads=np.concatenate(heads).astype(np.int32),
        base_errors=int(error[roots].sum()),
    )


def solve_network(
    network: ClosureNetwork,
    lam: float,
    *,
    time_limit: float | None = None,
    memory_limit_mb: float | None = None,
) -> dict[str, Any]:
    """One native min cut for ``lam``: the raw output plus ``side`` (bool), ``objective`` (from
    the cut's real capacity) and ``lower_bound`` (from the flow)."""
    if memory_limit_mb is None:
        memory_limit_mb = default_memory_limit_mb()
    src, snk = network.capacities(lam)
    out = _native.closure_min_cut(
        src,
        snk,
        network.tails,
        network.heads,
        time_limit=float(time_limit or 0.0),
        memory_limit_mb=float(memory_limit_mb or 0.0),
    )
    side = np.asarray(out["source_side"]).astype(bool)
    NT = network.data.n_samples * network.data.n_trees
    const = network.base_errors - float(network.gain.sum())
    out["side"] = side
    out["objective"] = network.objective(lam, side)
    # each rounded sink capacity is < 1 unit (+ float64 rounding) above the real one
    slack = float(np.count_nonzero(snk)) * (1.0 + 1e-12)
    out["lower_bound"] = (const + (out["flow"] - slack) / network.scale) / NT
    return out


def example_weights(data: EnsembleData, merge: bool = True) -> np.ndarray:
    """int64 (N,): how many examples each one stands for in the cut network (the class size at
    a representative of :func:`duplicate_examples`, 0 elsewhere; all ones without ``merge``)."""
    if merge and data.n_trees:
        return duplicate_examples(data)[1].astype(np.int64)
    return np.ones(data.n_samples, dtype=np.int64)


def _compact_trees(data: EnsembleData, weight: np.ndarray) -> Any:
    """``_native.CompactTrees`` of ``data``: what the native ensemble functions read (the
    compact arrays in the dtypes the binding takes, no copy when the extraction made them so),
    with the costs and the example ``weight``."""
    trees = data.trees
    compact = [compact_arrays(t) for t in trees]
    i32 = np.int32
    return _native.CompactTrees(
        [np.ascontiguousarray(t.left, dtype=i32) for t in trees],
        [np.ascontiguousarray(t.right, dtype=i32) for t in trees],
        [np.ascontiguousarray(np.maximum(t.feature, 0), dtype=i32) for t in trees],
        [np.ascontiguousarray(t.end, dtype=i32) for t in trees],
        [np.ascontiguousarray(t.error, dtype=np.int64) for t in trees],
        [np.ascontiguousarray(c["first_use"], dtype=np.uint8) for c in compact],
        [np.ascontiguousarray(c["by_leaf"], dtype=i32) for c in compact],
        [np.ascontiguousarray(c["leaf_start"], dtype=np.int64) for c in compact],
        np.ascontiguousarray(data.costs, dtype=np.float64),
        np.ascontiguousarray(weight, dtype=np.int64),
    )


def native_network(data: EnsembleData, *, merge: bool = True) -> ClosureNetwork:
    """The λ-independent cut network built natively from the compact entries, with the exact
    reductions that do not depend on λ (module docstring: 1, 2 and 4 -- identical examples,
    dead splits, identical pairs; all three with ``merge``, dead splits always). What the exact
    path cuts; ``pair`` holds each pair node's first (feature, example) key ``k * N + i``."""
    weight = example_weights(data, merge)
    check_deadline()
    out = _native.ensemble_network(_compact_trees(data, weight), merge_pairs=merge)
    return ClosureNetwork(
        data=data,
        split_node=np.asarray(out["split_node"]),
        gain=np.asarray(out["gain"]),
        pair=np.asarray(out["pair_first"]),
        pair_cost=np.asarray(out["pair_cost"]),
        tails=np.asarray(out["tails"]),
        heads=np.asarray(out["heads"]),
        base_errors=error_totals(data)[0],
    )


def reduced_network(
    data: EnsembleData,
    lam: float,
    *,
    merge_examples: bool = True,
    merge_pairs: bool = True,
    restrict_levels: int = RESTRICT_LEVELS,
) -> dict[str, Any]:
    """The network :func:`cut_prune` hands its max-flow at ``lam`` (every reduction of the
    module docstring), as int64 ``source_cap``/``sink_cap`` and int32 ``tails``/``heads`` for
    ``_native.closure_min_cut``, with ``constant`` (the capacity the forced pairs and the
    excluded splits' source arcs add to every minimum cut: full minimum cut = ``constant`` +
    this one's), ``scale``, ``n_forced``, ``n_dead``.
    For measuring max-flow algorithms on the graphs that remain (benchmarks/maxflow.py)."""
    weight = example_weights(data, merge_examples)
    scale = scale_for(error_totals(data)[1])
    out = _native.ensemble_reduced_network(
        _compact_trees(data, weight),
        float(lam),
        scale,
        merge_pairs=merge_pairs,
        restrict_levels=int(restrict_levels),
    )
    out = {k: np.asarray(v) if isinstance(v, np.ndarray) else v for k, v in out.items()}
    out["scale"] = scale
    return out


def _native_cut(
    data: EnsembleData,
    lam: float,
    weight: np.ndarray,
    *,
    reduce: bool,
    merge_pairs: bool = True,
    restrict_levels: int = RESTRICT_LEVELS,
    time_limit: float | None,
    memory_limit_mb: float | None,
    slice_flow: int = -1,
    nest_levels: int = NEST_LEVELS,
    nest_arcs: int = NEST_ARCS,
) -> dict[str, Any]:
    """The native cut of the compact trees (``_native.ensemble_min_cut``), with ``kept`` (bool
    per global node), ``objective`` (from the cut's real capacity) and ``lower_bound``."""
    if memory_limit_mb is None:
        memory_limit_mb = default_memory_limit_mb()
    base_errors, total_gain = error_totals(data)
    scale = scale_for(total_gain)
    out = _native.ensemble_min_cut(
        _compact_trees(data, weight),
        float(lam),
        scale,
        reduce=reduce,
        merge_pairs=merge_pairs,
        restrict_levels=int(restrict_levels),
        time_limit=float(time_limit or 0.0),
        memory_limit_mb=float(memory_limit_mb or 0.0),
        slice_flow=int(slice_flow),
        nest_levels=int(nest_levels),
        nest_arcs=int(nest_arcs),
    )
    if out["total_gain"] != total_gain:
        raise AssertionError("the native network's gains disagree with the trees' errors")
    N, T = data.n_samples, data.n_trees
    NT = N * T
    const = base_errors - total_gain
    out["kept"] = np.asarray(out["kept"]).astype(bool)
    out["scale"] = scale
    out["objective"] = (const + out["lost_gain"] + lam * T * out["paid_cost"]) / NT
    # every rounded sink capacity is < 1 unit (+ float64 rounding) above the real one, and no
    # cut pays more pairs than there are paid features times represented examples
    n_pay = int(np.count_nonzero(data.costs > 0)) * int(np.count_nonzero(weight))
    out["lower_bound"] = (const + (out["flow"] - n_pay * (1.0 + 1e-12)) / scale) / NT
    return out


def cut_prune(
    data: EnsembleData,
    *,
    lam: float,
    time_limit: float | None = None,
    memory_limit_mb: float | None = None,
    network: ClosureNetwork | None = None,
    weight: np.ndarray | None = None,
    reduce: bool = True,
    merge_pairs: bool = True,
    restrict_levels: int = RESTRICT_LEVELS,
    slice_flow: int = -1,
    nest_levels: int = NEST_LEVELS,
    nest_arcs: int = NEST_ARCS,
) -> Result:
    """IP3 for ``lam`` by one minimum cut, certified (see the module docstring).

    Parameters
    ----------
    data : EnsembleData
    lam : float
    time_limit, memory_limit_mb : float, optional
        Limits of the max-flow (and of the reduction before it).
    network : ClosureNetwork, optional
        Solve this uncompressed numpy network instead of the native one (the reference the
        tests and benchmarks compare with).
    weight : ndarray, optional
        :func:`example_weights` when already computed (default: computed here, merged).
    reduce : bool
        Force and drop splits before the flow (exact; False: the whole native network).
    merge_pairs : bool
        Pairs with the same predecessors as one node (exact).
    restrict_levels : int
        With ``reduce``: rounds of rule 5 before the flow, the restricted problems of the
        splits at depth <= 0, 1, ..., ``restrict_levels - 1`` (exact; 0: none).
    slice_flow : int
        The final max-flow on arcs read from the tree slices, never stored (push-relabel,
        ``algorithm="push_relabel_slices"``, or on the reversed network from the pairs' unused
        sink capacity, ``"push_relabel_slices_reverse"``; the same flow value and minimal
        cut): -1 where the arc-array network would run push-relabel (trees 20 or more levels
        deep), 0 never, 1 always (the direction picked after the greedy flow: reverse where it
        left less sink capacity unused than source capacity unrouted), 2 always and forward,
        3 always and reverse.
    nest_levels, nest_arcs : int
        Rule 7 (exact): where the network left holds ``nest_arcs`` slice entries or more, the
        cut at ``lam / 3`` runs first and the splits outside its answer leave the network,
        up to ``nest_levels`` levels deep (0: never).

    Returns
    -------
    Result
        ``method="cut"``, ``backend="native"``; ``objective`` the pruning's IP3 objective
        re-scored from the trees (:func:`~odtkit.pruning._ensemble.objective_value`),
        ``lower_bound`` from the flow value; ``stats``: ``flow``, ``cut`` (equal when optimal,
        scaled integers), ``scale``, ``cut_objective`` (the objective from the cut's real
        capacity), ``n_nodes``, ``n_arcs`` (the network the max-flow ran on), ``n_forced``,
        ``n_dead``, ``n_paid``, ``iterations``, ``phases``, ``augmentations``, ``algorithm`` (the
        final max-flow's, ``""`` if none ran),
        ``reduce_time``, ``flow_time``. Status ``error`` if the re-scored objective disagrees
        with the cut's.
    """
    t0 = time.perf_counter()
    if network is not None:
        out = solve_network(network, lam, time_limit=time_limit, memory_limit_mb=memory_limit_mb)
        leaves = network.leaves(out["side"])
        extra = {
            "scale": network.scale,
            "n_nodes": network.n_nodes,
            "n_arcs": network.n_arcs,
            "flow_time": out["seconds"],
        }
    else:
        if weight is None:
            weight = example_weights(data)
        out = _native_cut(
            data,
            lam,
            weight,
            reduce=reduce,
            merge_pairs=merge_pairs,
            restrict_levels=restrict_levels,
            time_limit=time_limit,
            memory_limit_mb=memory_limit_mb,
            slice_flow=slice_flow,
            nest_levels=nest_levels,
            nest_arcs=nest_arcs,
        )
        leaves = kept_to_leaves(data, out["kept"])
        extra = {
            key: out[key]
            for key in (
                "scale",
                "n_nodes",
                "n_arcs",
                "n_nodes_unmerged",
                "n_arcs_unmerged",
                "n_forced",
                "n_dead",
                "n_excluded",
                "n_paid",
                "iterations",
            )
        }
        extra.update(
            reduce_time=out["reduce_seconds"],
            flow_time=out["flow_seconds"],
            algorithm=out["algorithm"],
        )
        extra["restrict_rounds"] = [
            dict(zip(_ROUND_FIELDS, map(int, row), strict=True)) | {"seconds": float(sec)}
            for row, sec in zip(
                np.asarray(out["rounds"]).reshape(-1, len(_ROUND_FIELDS)),
                np.asarray(out["round_seconds"]),
                strict=True,
            )
        ]
    objective = float(objective_value(data, leaves, lam=lam)["objective"])
    bound = min(float(out["lower_bound"]), objective)
    status = Status(out["status"])
    message = _STOPPED.get(status, "")
    if abs(objective - out["objective"]) > CUT_TOLERANCE:
        status = Status.ERROR
        message = (
            f"the pruning's objective {objective!r} differs from its cut's {out['objective']!r}"
        )
    elif status == Status.OPTIMAL:
        if objective - out["lower_bound"] <= CUT_TOLERANCE:
            bound = objective
        else:
            status = Status.FEASIBLE
            message = (
                f"integer rounding of the capacities leaves a gap of "
                f"{objective - out['lower_bound']:.3g} between the cut and the flow"
            )
    elapsed = time.perf_counter() - t0
    stats = {
        "flow": out["flow"],
        "cut": out["cut"],
        "cut_objective": out["objective"],
        "phases": out["phases"],
        "augmentations": out["augmentations"],
        **extra,
    }
    return Result(
        model=PrunedEnsemble(data, leaves, lam),
        objective=objective,
        lower_bound=bound,
        status=status,
        time=elapsed,
        method="cut",
        backend="native",
        trace=make_trace([(elapsed, objective, bound)]),
        peak_memory_mb=float(out["peak_memory_mb"]),
        stats=stats,
        message=message,
    )

"""``search_rule_list``: certifiably optimal rule lists (CORELS) and antecedent mining.

Minimises ``misclassified/n + lam * n_rules`` (the default rule is free, every label is the
empirical majority of what its rule captures) over rule lists built from pre-mined antecedents
(Angelino et al. 2018 (CORELS); docs/formulations-search-and-pruning.md §5). Mining is
vectorised numpy here, streamed in blocks that honour the time and memory limits; the branch and
bound runs in C++ (``odtkit._native.search_corels``) with the GIL released.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np

from odtkit import _native, metrics
from odtkit._progress import Progress
from odtkit._validation import as_binary_matrix, check_lambda, check_switches
from odtkit._warnings import warn as _warn
from odtkit.core._binary import native_outcome
from odtkit.core._problem import (
    POLICIES,
    build_problem,
    leaf_answer,
    problem_from_arrays,
    search_config,
)
from odtkit.core.search import TrivialAnswerWarning, trivial_answer_message
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset
from odtkit.results import Result, Status
from odtkit.rulelist import Antecedent, RuleList, antecedent_truth

__all__ = [
    "OBJECTIVE_TOLERANCE",
    "RULE_BOUNDS",
    "RULE_POLICIES",
    "SYMMETRY_MAPS",
    "mine_antecedents",
    "search_rule_list",
]

#: Queue policies (§5.4).
RULE_POLICIES = POLICIES
#: Symmetry-aware maps (§5.4): sorted prefix key, uncaptured-set key, or none.
SYMMETRY_MAPS = ("permutation_map", "captured_map", "none")
#: Switchable bounds of §5.3 (all on by default); turning one off never changes the optimum.
RULE_BOUNDS = ("support", "accurate_support", "max_support", "lookahead", "equivalent_points")
OBJECTIVE_TOLERANCE = 1e-9
# Mining materialises (n_samples, block) boolean blocks; this caps one block at ~4 MB, so the
# clock and the memory are checked every few milliseconds.
_MINING_BLOCK_CELLS = 1 << 22
# Python objects per kept antecedent besides its arrays (its key in the dedup set, its literal
# tuples once decoded), a generous estimate for the memory projection.
_MINING_OBJECT_BYTES = 320
# Seconds per kept antecedent to decode it, unpack its column and build the native Problem
# after mining (~1 us + ~8 ns per sample measured; taken with a margin): mining stops early
# enough for this to fit in the time limit too.
_MINING_FINISH_SECONDS = 1.5e-6
_MINING_FINISH_SECONDS_PER_SAMPLE = 1.0e-8


def _check_cardinality(max_cardinality: Any) -> int:
    if isinstance(max_cardinality, bool) or not isinstance(max_cardinality, Integral):
        raise TypeError(
            f"max_cardinality must be a positive integer, got {type(max_cardinality).__name__}"
        )
    if max_cardinality < 1:
        raise ValueError(f"max_cardinality must be >= 1, got {max_cardinality}")
    return int(max_cardinality)


def _check_support(min_support: Any, lam: float) -> float:
    if min_support is None:
        return lam
    if isinstance(min_support, bool) or not isinstance(min_support, Real):
        raise TypeError(
            f"min_support must be a number in [0, 0.5], got {type(min_support).__name__}"
        )
    value = float(min_support)
    if not 0.0 <= value <= 0.5:
        raise ValueError(f"min_support must lie in [0, 0.5], got {min_support!r}")
    return value


def mine_antecedents(
    X: Any,
    max_cardinality: int = 2,
    min_support: float = 0.0,
    sample_weight: np.ndarray | None = None,
) -> tuple[list[Antecedent], np.ndarray]:
    """All conjunctions of up to ``max_cardinality`` literals, filtered and deduplicated.

    Literals are ``x_j = 1`` and ``x_j = 0``; a conjunction uses each feature at most once.
    An antecedent is kept when its (weighted) support fraction ``s`` satisfies
    ``0 < s``, ``s >= min_support`` and ``s <= 1 - min_support`` (CORELS Thms 10 and 21 make
    ``min_support = lam`` lossless), and when no earlier antecedent (fewer literals first, then
    lexicographic) captures exactly the same samples (interchangeable antecedents, §5.6).

    Returns
    -------
    (antecedents, truth) : list of literal tuples and the (n_samples, R) boolean truth table.
    """
    X = as_binary_matrix(X)
    max_cardinality = _check_cardinality(max_cardinality)
    antecedents, truth, _ = _mine(X, max_cardinality, min_support, sample_weight)
    return antecedents, truth


def _combination_blocks(n_literals: int, size: int, block: int) -> Iterator[np.ndarray]:
    """Literal combinations of ``size`` on distinct features, lexicographic, in blocks of rows.

    Literal ``2j`` is ``x_j = 0`` and ``2j + 1`` is ``x_j = 1``. The same order as filtering
    ``itertools.combinations(range(n_literals), size)``, but the last literal is a numpy range
    per prefix, so nothing of size C(2p, size) is ever materialised.
    """
    pending: list[np.ndarray] = []
    count = 0
    for prefix in itertools.combinations(range(n_literals), size - 1):
        features = [lit // 2 for lit in prefix]
        if len(set(features)) < len(prefix):
            continue
        last = np.arange(prefix[-1] + 1 if prefix else 0, n_literals, dtype=np.int64)
        if prefix:
            last = last[~np.isin(last // 2, features)]
        if last.size == 0:
            continue
        rows = np.empty((last.size, size), dtype=np.int64)
        rows[:, : size - 1] = prefix
        rows[:, size - 1] = last
        pending.append(rows)
        count += last.size
        if count >= block:
            yield np.concatenate(pending)
            pending, count = [], 0
    if pending:
        yield np.concatenate(pending)


def _mine(
    X: np.ndarray,
    max_cardinality: int,
    min_support: float,
    sample_weight: np.ndarray | None,
    *,
    deadline: float | None = None,
    memory_bytes: float | None = None,
) -> tuple[list[Antecedent], np.ndarray, str | None]:
    """:func:`mine_antecedents` under limits: ``(antecedents, truth, stopped)``.

    Streams the candidates in blocks of at most ``_MINING_BLOCK_CELLS`` cells, keeps each
    block's survivors as packed bits and deduplicates them against a set of the captured sets
    seen so far. Before each block it checks the clock plus the time that finishing (decoding
    the kept antecedents, the truth table, the native Problem) will take against ``deadline``,
    and the projected peak memory (the kept antecedents, the truth table and Problem built
    from them, one block's work) against ``memory_bytes``; on either it stops and returns what
    it has kept, with ``stopped`` = ``"time_limit"`` or ``"memory_limit"`` (``None``: complete).
    """
    n, p = X.shape
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    total = w.sum()
    tol = 1e-12
    # literal columns: 2j is x_j = 0, 2j+1 is x_j = 1
    literals = np.empty((n, 2 * p), dtype=bool)
    literals[:, 0::2] = ~X
    literals[:, 1::2] = X
    n_bytes = (n + 7) // 8
    # per kept antecedent: its packed key (in the set and the kept list), its column of the
    # truth table, its bitset in the native Problem, its literal tuples
    per_kept = 2 * n_bytes + n + 8 * ((n + 63) // 64) + _MINING_OBJECT_BYTES
    fixed = literals.nbytes + 3 * _MINING_BLOCK_CELLS  # the literals, one block's temporaries
    finish = _MINING_FINISH_SECONDS + _MINING_FINISH_SECONDS_PER_SAMPLE * n  # per kept
    seen: set[bytes] = set()
    kept_keys: list[bytes] = []
    kept_combos: list[np.ndarray] = []
    n_kept = 0
    stopped: str | None = None
    for size in range(1, min(max_cardinality, p) + 1):
        block = max(1, _MINING_BLOCK_CELLS // max(1, n * size))
        for combos in _combination_blocks(2 * p, size, block):
            if deadline is not None and (
                time.perf_counter() + (n_kept + len(combos)) * finish >= deadline
            ):
                stopped = "time_limit"
                break
            if memory_bytes is not None and (
                fixed + (n_kept + len(combos)) * (per_kept + 8 * size) > memory_bytes
            ):
                stopped = "memory_limit"
                break
            truth = literals[:, combos[:, 0]]
            for k in range(1, size):
                truth &= literals[:, combos[:, k]]
            support = (w @ truth) / total
            keep = np.flatnonzero(
                (support > tol)
                & (support >= min_support - tol)
                & (support <= 1.0 - min_support + tol)
            )
            if keep.size == 0:
                continue
            packed = np.packbits(truth[:, keep], axis=0).T.tobytes()
            fresh = []
            for i in range(keep.size):
                key = packed[i * n_bytes : (i + 1) * n_bytes]
                if key not in seen:
                    seen.add(key)
                    kept_keys.append(key)
                    fresh.append(i)
            if fresh:
                kept_combos.append(combos[keep[fresh]])
                n_kept += len(fresh)
        if stopped:
            break
    del seen
    if not n_kept:
        return [], np.zeros((n, 0), dtype=bool), stopped
    # one (feature, value) tuple per literal, shared by every antecedent using it
    literal_tuples = [(lit // 2, lit % 2) for lit in range(2 * p)]
    names: list[Antecedent] = []
    for combos in kept_combos:
        columns = [[literal_tuples[lit] for lit in col] for col in combos.T.tolist()]
        names.extend(zip(*columns, strict=True))
    # transpose the packed keys (8x smaller than the table), then unpack along the samples
    bits = np.frombuffer(b"".join(kept_keys), dtype=np.uint8).reshape(n_kept, n_bytes)
    del kept_keys
    truth = np.unpackbits(np.ascontiguousarray(bits.T), axis=0, count=n).view(bool)
    return names, np.ascontiguousarray(truth), stopped


def _universal_lower_bound(dataset: Dataset, lam: float) -> float:
    """A lower bound on every rule list over any antecedents of ``dataset``'s features.

    Samples with identical feature rows satisfy the same antecedents, so every rule list
    misclassifies at least the minority weight of each such group (equivalent points, §5.3);
    a list with rules also pays ``lam`` for one, and the empty list is the majority default.
    """
    problem = build_problem(dataset)
    total = problem.total_weight
    eq = problem.point_minority_total / total
    empty = 1.0 - np.bincount(dataset.y, weights=dataset.weights, minlength=2).max() / (
        dataset.total_weight  # the problem's weights are scaled (problem_from_arrays)
    )
    return float(min(empty, eq + lam))


def _check_antecedents(
    antecedents: Any, dataset: Dataset
) -> tuple[list[Antecedent], np.ndarray, bool]:
    """Explicit antecedents: literal conjunctions over the dataset's features, or a bool matrix.

    Returns (antecedents as literal tuples, truth table, is_matrix). For a matrix, antecedent r is
    the literal ``(r, 1)`` over the matrix's columns.
    """
    if isinstance(antecedents, np.ndarray) or (
        isinstance(antecedents, tuple)
        and len(antecedents) == 2
        and isinstance(antecedents[0], np.ndarray)
    ):
        matrix = antecedents[0] if isinstance(antecedents, tuple) else antecedents
        truth = as_binary_matrix(matrix, "antecedents")
        if truth.shape[0] != dataset.n_samples:
            raise ValueError(
                f"antecedents must have one row per sample ({dataset.n_samples}), "
                f"got {truth.shape[0]}"
            )
        return [((r, 1),) for r in range(truth.shape[1])], truth, True
    if not isinstance(antecedents, Sequence) or isinstance(antecedents, (str, bytes)):
        raise TypeError(
            "antecedents must be a bool matrix (n_samples, R), a (matrix, names) pair, or a "
            "sequence of conjunctions of (feature, value) literals"
        )
    # RuleList validates literals; reuse it so both paths accept exactly the same antecedents
    checked = [RuleList([(a, 0)]).rules[0][0] for a in antecedents]
    for a in checked:
        if max(f for f, _ in a) >= dataset.n_features:
            raise ValueError(
                f"antecedent {a} uses a feature beyond the dataset's {dataset.n_features}"
            )
    if not checked:
        return [], np.zeros((dataset.n_samples, 0), dtype=bool), False
    truth = np.column_stack([antecedent_truth(dataset.X, a) for a in checked])
    return checked, np.ascontiguousarray(truth), False


def _decode_rule_list(code: Sequence[int]) -> tuple[list[int], list[int], int]:
    """(antecedent ids, their labels, default label) of a rule list encoded as a one-sided tree.

    ``[a0, a1, ..., -(d+1), ..., -(l1+1), -(l0+1)]``: rule k splits on antecedent ``a_k``, its
    ``x = 1`` side is the leaf of label ``l_k`` and its ``x = 0`` side the rest of the list.
    """
    n_rules = next((i for i, v in enumerate(code) if v < 0), len(code))
    if len(code) != 2 * n_rules + 1 or any(v >= 0 for v in code[n_rules:]):
        raise RuntimeError(f"corels returned a malformed rule list encoding {list(code)}: a bug")
    prefix = [int(v) for v in code[:n_rules]]
    labels = [-int(v) - 1 for v in reversed(code[n_rules + 1 :])]
    return prefix, labels, -int(code[n_rules]) - 1


def _mine_charged(
    dataset: Dataset, config: Any, max_cardinality: int, support: float, start: float
) -> tuple[list[Antecedent], np.ndarray, str | None, dict[str, Any]]:
    """:func:`_mine` under the call's limits, which the search then gets what is left of
    (``config`` is updated): the antecedents, their truth table, why mining stopped (None:
    complete) and the mining stats."""
    memory_bytes = config.memory_limit_mb * 2.0**20 if config.memory_limit_mb > 0 else None
    literal_sets, truth, mining_stopped = _mine(
        dataset.X,
        max_cardinality,
        support,
        dataset.sample_weight,
        deadline=start + config.time_limit if config.time_limit > 0 else None,
        memory_bytes=memory_bytes,
    )
    mining = {
        "mining_ms": round(1000 * (time.perf_counter() - start)),
        "mining_complete": int(mining_stopped is None),
    }
    # the search gets what the mining left of the limits (its decoded antecedents stay)
    if config.time_limit > 0:
        config.time_limit = max(start + config.time_limit - time.perf_counter(), 1e-9)
    if memory_bytes is not None:
        left = memory_bytes - len(literal_sets) * _MINING_OBJECT_BYTES
        config.memory_limit_mb = max(left / 2.0**20, 1e-9)
    return literal_sets, truth, mining_stopped, mining


def search_rule_list(
    dataset: Dataset,
    *,
    lam: float,
    max_cardinality: int = 2,
    min_support: float | None = None,
    policy: str = "lower_bound",
    symmetry: str = "permutation_map",
    time_limit: float | None = None,
    node_limit: int | None = None,
    memory_limit_mb: float | None = None,
    bounds: Mapping[str, bool] | None = None,
    antecedents: Any = None,
    progress: bool | None = None,
) -> Result:
    """Find a rule list minimising ``misclassified/n + lam * n_rules`` (CORELS) and certify it.

    Parameters
    ----------
    dataset : Dataset
        Binary features and **binary** labels (class codes 0/1), optional sample weights.
    lam : float
        Penalty per rule (the default rule is free), ``>= 0``.
    max_cardinality : int
        Mined antecedents are conjunctions of up to this many literals ``x_j = 0/1``.
    min_support : float, optional
        Mining keeps antecedents with support in ``[min_support, 1 - min_support]``. The default
        ``lam`` loses nothing (no optimal list uses a rule outside that range, §5.3 items 4, 6);
        a larger value (CORELS uses 0.01) restricts the search space.
    policy : {"lower_bound", "curiosity", "objective", "bfs", "dfs"}
        Queue order; never changes the optimum. The default is ``lower_bound`` because it
        certifies COMPAS at c = 0.005 in ~12 s where curiosity (CORELS's default) does not
        finish in 60 s (benchmarks/results/rule_lists.md).
    symmetry : {"permutation_map", "captured_map", "none"}
        Symmetry-aware map: one prefix per antecedent set, one per captured set, or none.
    time_limit, memory_limit_mb : float, optional
        Stop after this many seconds (mining and search together) / when the mined
        antecedents, or the trie, queue and map of the search, would exceed this many MB. A
        limit hit while mining stops it there: the search then runs (with what remains of the
        limits) over the antecedents mined so far, the status is the mining's limit and the
        lower bound is one that holds for every rule list (the equivalent-points bound of the
        raw features), since unmined antecedents could do better.
    node_limit : int, optional
        Stop after expanding this many prefixes.
    bounds : mapping of str to bool, optional
        Switch bounds of ``RULE_BOUNDS`` off (ablations); all on by default.
    antecedents : optional
        Skip mining and use these: a sequence of conjunctions of ``(feature, value)`` literals
        over the dataset's features, or a bool matrix ``(n_samples, R)`` (optionally as a
        ``(matrix, names)`` pair). With a matrix, rule ``r`` of the returned list is the literal
        ``(r, 1)`` over the matrix's columns, so the model predicts from that matrix.

    progress : bool, optional
        A live line on stderr (elapsed, incumbent, bound, gap) once the search has run for
        2 s; None (default): shown when stderr is a terminal.

    Returns
    -------
    Result
        ``model`` is a :class:`~odtkit.rulelist.RuleList`; ``stats`` holds ``antecedents``
        (the literal tuples searched, or the matrix names), ``n_antecedents``, search counters
        and, when it mined, ``mining_ms`` (its wall time) and ``mining_complete`` (0 if a limit
        stopped it).
    """
    start = time.perf_counter()
    dataset = check_dataset(dataset)
    if dataset.n_classes > 2:
        raise ValueError(
            f"search_rule_list supports binary labels only; the dataset has {dataset.n_classes} "
            "classes (use search_tree for multi-class data)"
        )
    lam = check_lambda(lam)
    max_cardinality = _check_cardinality(max_cardinality)
    support = _check_support(min_support, lam)
    if not isinstance(policy, str) or policy not in RULE_POLICIES:
        raise ValueError(f"policy must be one of {RULE_POLICIES}, got {policy!r}")
    if not isinstance(symmetry, str) or symmetry not in SYMMETRY_MAPS:
        raise ValueError(f"symmetry must be one of {SYMMETRY_MAPS}, got {symmetry!r}")
    config = search_config(
        lam,
        time_limit=time_limit,
        node_limit=node_limit,
        memory_limit_mb=memory_limit_mb,
        bounds=check_switches(bounds, RULE_BOUNDS),
        policy=policy,
        symmetry=symmetry,
    )
    names: Sequence[str] | None = None
    mining_stopped: str | None = None
    mining: dict[str, Any] = {}
    # what a stop before the search leaves: no antecedent, the empty list
    literal_sets: list[Any] = []
    truth = np.zeros((dataset.n_samples, 0), dtype=bool)
    is_matrix = False
    try:
        if antecedents is None:
            literal_sets, truth, mining_stopped, mining = _mine_charged(
                dataset, config, max_cardinality, support, start
            )
            is_matrix = False
        else:
            literal_sets, truth, is_matrix = _check_antecedents(antecedents, dataset)
            if is_matrix and isinstance(antecedents, tuple):
                names = [str(s) for s in antecedents[1]]
                if len(names) != truth.shape[1]:
                    raise ValueError("antecedent names must have one entry per matrix column")
        # the antecedents are the features of the Problem: its points are CORELS's equivalence
        # classes, and the rule list comes back as the one-sided tree it is
        problem = problem_from_arrays(truth, dataset.y, dataset.weights, 2)
    except MemoryError:  # the empty list (default rule only), as search_tree's single leaf
        problem = None
        raw = leaf_answer(dataset.y, dataset.weights, 2, lam, leaf_cost=0.0)
    except KeyboardInterrupt:
        # Ctrl-C while mining or building the Problem (the search itself reports it as a
        # status): the empty list, with the bound that holds for every rule list
        problem, is_matrix, names = None, False, None
        literal_sets, truth = [], np.zeros((dataset.n_samples, 0), dtype=bool)
        mining_stopped, mining = "interrupted", {"mining_complete": 0}
        raw = leaf_answer(
            dataset.y,
            dataset.weights,
            2,
            lam,
            leaf_cost=0.0,
            status=_native.SearchStatus.interrupted,
        )
    if problem is not None:
        try:
            with Progress("rule list search", progress) as bar:
                raw = _native.search_corels(problem, config, bar.update if bar.active else None)
        except MemoryError:
            raw = leaf_answer(dataset.y, dataset.weights, 2, lam, leaf_cost=0.0)
    prefix, labels, default_label = _decode_rule_list(raw.tree)
    model = RuleList(
        [(literal_sets[r], label) for r, label in zip(prefix, labels, strict=True)],
        default_label,
    )
    # re-check against the single truth (on the matrix itself when antecedents were a matrix)
    check_on = (
        Dataset(
            truth,
            dataset.y,
            dataset.classes,
            tuple(names or (f"a{r}" for r in range(truth.shape[1]))),
            dataset.name,
            dataset.sample_weight,
        )
        if is_matrix
        else dataset
    )
    objective = metrics.objective(model, check_on, lam=lam)
    if abs(objective - raw.objective) > OBJECTIVE_TOLERANCE:
        raise RuntimeError(
            f"corels reported objective {raw.objective!r} but the returned rule list scores "
            f"{objective!r} (odtkit.metrics.objective): this is a bug"
        )
    status, lower_bound, trace = native_outcome(raw, objective)
    if mining_stopped is not None:
        # the search's bound holds over the mined antecedents only
        status = Status.parse(mining_stopped)
        lower_bound = min(_universal_lower_bound(dataset, lam), objective)
    stats: dict[str, Any] = {key: int(value) for key, value in raw.stats.items()}  # counters
    stats.update(mining)
    stats["n_antecedents"] = truth.shape[1]
    stats["antecedents"] = list(names) if names is not None else literal_sets
    result = Result(
        model=model,
        objective=objective,
        lower_bound=lower_bound,
        status=status,
        time=time.perf_counter() - start,
        method="corels",
        n_explored=raw.n_explored,
        peak_memory_mb=raw.peak_memory_mb,
        trace=trace,
        stats=stats,
    )
    if status == "optimal" and model.n_rules == 0:
        message = trivial_answer_message(dataset, lam, what="rule list with rules")
        if message is not None:
            _warn(message, TrivialAnswerWarning)
    return result

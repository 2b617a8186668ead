"""One time limit, one memory budget and Ctrl-C for a whole :func:`~odtkit.pruning.prune` call.

The pruning's big structures all grow with the number of feature-use entries ``m`` (one per
example, tree and feature on the example's path): the explicit ``(u, k, i)`` lists, the
``(feature, example)`` pair index, the cut network's arcs and a program's link rows. The native
extraction itself keeps the entries compact (8 bytes per example and tree, see
:mod:`odtkit.pruning._extract`), so :class:`Guard` charges that before the call, and the call
returns ``m`` exactly without building the lists: the call's peak is projected from it and the
call stops *before* building what would not fit. The cut of one λ holds nothing per entry
beyond the compact data: its native network is reduced first and budgeted by the native code
itself (it stops with the forced splits, a valid pruning, before allocating past the budget), so
it gets what the data leaves of the budget; the exact path (a budget) charges
:data:`CUT_BYTES_PER_ENTRY`, the programs the lists and :data:`MODEL_BYTES_PER_ENTRY`.

A stop is a :class:`Stopped` (time, memory) or a ``KeyboardInterrupt`` (Ctrl-C in Python code);
``prune`` turns either into a Result with the limit's status and the best pruning it has, at
worst the trivially feasible one: every tree cut to its root (cost 0, so within every budget),
whose objective is the training error of the majority class and needs no extraction at all.
"""

from __future__ import annotations

from odtkit._limits import Deadline, default_memory_limit_mb
from odtkit.results import Status

__all__ = [
    "CUT_BYTES_PER_ENTRY",
    "DATA_BYTES_PER_ENTRY",
    "MODEL_BYTES_PER_ENTRY",
    "Guard",
    "Stopped",
]

#: bytes per entry once the explicit entry lists are built (on first read, by whoever reads
#: them): ``use_example/feature/node`` (int64) in the trees, ``entry_pair`` and ``entry_group``
#: in EnsembleData, plus the key temporaries; the compact extraction holds none of them
DATA_BYTES_PER_ENTRY = 56
#: the exact path on top of the data: the native network's arcs (int32 tails, heads), the
#: window masks and the max-flow's graph (the cut of one λ budgets its own network natively)
CUT_BYTES_PER_ENTRY = 40
#: an LP/MIP on top of the data: the IR's CSR rows, the modelling copy and the solver's copy
MODEL_BYTES_PER_ENTRY = 200


class Stopped(BaseException):  # noqa: N818 - control flow, like OutOfTime
    """A limit ended a phase of the call: ``status`` and a ``message`` naming the phase."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _mb(nbytes: float) -> float:
    return nbytes / 2.0**20


class Guard:
    """The deadline and the memory budget of one pruning call.

    Parameters
    ----------
    time_limit : float or None
        Seconds for the whole call (None: no limit).
    memory_limit_mb : float or None
        The budget; None: the searches' default (``default_memory_limit_mb``).
    """

    def __init__(self, time_limit: float | None, memory_limit_mb: float | None) -> None:
        self.deadline = Deadline(time_limit)
        self.given = memory_limit_mb is not None
        self.memory_limit_mb = memory_limit_mb if self.given else default_memory_limit_mb()
        self.per_entry: float = DATA_BYTES_PER_ENTRY  # set by the method before extraction
        #: what the data holds per entry when a native phase starts (0: compact only)
        self.held_per_entry: float = DATA_BYTES_PER_ENTRY
        self.fixed = 0.0  # bytes independent of m (X, dense N x K marks, compact data)
        self.projected = 0.0  # the call's projected peak so far
        self.phase = "the input checks"  # named in the message of a stop

    # ------------------------------------------------------------------ time
    def check_time(self, phase: str) -> None:
        if self.deadline.expired():
            raise Stopped(Status.TIME_LIMIT, f"the time limit ran out during {phase}")

    # ------------------------------------------------------------------ memory
    @property
    def name(self) -> str:
        if self.given:
            return f"memory_limit_mb={self.memory_limit_mb:g}"
        return (
            f"the default memory budget of {self.memory_limit_mb:.0f} MB (set memory_limit_mb "
            "to change it)"
        )

    def need(self, nbytes: float, what: str) -> None:
        """Stop (status ``memory_limit``) if ``nbytes`` in all would exceed the budget."""
        self.projected = max(self.projected, float(nbytes))
        if self.memory_limit_mb is not None and _mb(nbytes) > self.memory_limit_mb:
            raise Stopped(
                Status.MEMORY_LIMIT,
                f"{what} would need about {_mb(nbytes):.0f} MB, over {self.name}",
            )

    def peak(self, n_entries: float) -> float:
        """Projected peak bytes of the call for ``n_entries`` entries."""
        return self.fixed + n_entries * self.per_entry

    def left_mb(self, n_entries: float) -> float | None:
        """What the budget leaves for a native phase once the data of ``n_entries`` is held."""
        if self.memory_limit_mb is None:
            return None
        held = _mb(self.fixed + n_entries * self.held_per_entry)
        return max(self.memory_limit_mb - held, 1.0)

    def start_extraction(
        self, n_samples: int, n_features: int, n_trees: int, n_nodes: int, n_classes: int
    ) -> None:
        """Charge what does not grow with the entries (:meth:`charge_data`) and refuse at
        once if even the smallest entry list (one per example and tree) would not fit."""
        self.charge_data(n_samples, n_features, n_trees, n_nodes, n_classes)
        T, N = n_trees, n_samples
        self.need(self.peak(N * T), f"the pruning of {T} trees on {N} examples")

    def charge_data(
        self, n_samples: int, n_features: int, n_trees: int, n_nodes: int, n_classes: int
    ) -> None:
        """``fixed``: ``X`` as float32 and the dense ``(feature, example)`` marks and ranks
        (``13 K N`` bytes; the cut's paid marks and pair map take 5 of them), the compact
        extraction (``leaf_of`` and ``by_leaf``, int32 per example and tree, and about
        ``100 + 16 C`` bytes per tree node) and the merge of identical examples (two uint64
        signatures and the sort behind them, ``64 N``: it runs tree by tree)."""
        N, K, T = n_samples, n_features, n_trees
        nodes = float(n_nodes) * (100.0 + 16.0 * n_classes)
        self.fixed = 13.0 * N * K + 8.0 * N * T + nodes + 64.0 * N

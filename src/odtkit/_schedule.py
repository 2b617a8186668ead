"""Longest-first scheduling of a sweep's tasks: cost estimates, the scheduler, a simulator.

A sweep's tasks are independent and of very different sizes (a depth-6 path on tic-tac-toe
takes a hundred times a depth-4 path on monk1), so the order they are handed to the workers
decides how long the last worker runs alone. :class:`Scheduler` hands out the task with the
largest *estimated* cost first (LPT, longest processing time first: Graham's list scheduling
with its 4/3 - 1/(3W) bound, against no bound for an arbitrary order):

* before any task finished, the estimate is :func:`prior_cost` (rows, binary features, depth,
  one λ or the whole path, method: a rough model of the dp's work, in seconds of a 2026
  desktop core);
* as tasks finish, the estimate of a task whose *group* (same dataset, depth, method, path or
  λ: the folds of one cell, which cost nearly the same) has finished tasks is their mean
  measured time, and the prior of the other tasks is scaled by the geometric mean of measured /
  prior over every finished task (the machine's speed and the model's bias, learned).

:func:`simulate` replays list scheduling (each task, in the scheduler's order, to the first
worker that is free) on given task times, for any number of workers: the makespan a scheduler
would reach, against :func:`ideal_makespan` = max(sum / W, longest). Pure Python, no odtkit
imports: the sweep (``odtkit.sweeping``) and its benchmark use it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Sequence
from typing import Protocol

__all__ = [
    "FifoOrder",
    "Scheduler",
    "ideal_makespan",
    "prior_cost",
    "simulate",
]

#: Seconds per unit of :func:`prior_cost`'s work model for one λ's dp solve, and the fixed
#: cost of a task (fold cut, re-verification, accuracies). Fitted (least squares of log times)
#: on the regularization paths of ``benchmarks/sweep_scaling.py``'s six sets at depths 4-6 on
#: its 2-core machine: within a factor 2.2 (rms) of the measured means, 4.6 at worst.
_SECONDS_PER_UNIT = 8e-10
_OVERHEAD = 0.002
#: How much longer a whole regularization path takes than one λ's solve (a path solves a
#: handful of λ near its breakpoints).
_PATH_FACTOR = 6.0
#: Sub-problems per level of depth, per binary feature (bounds prune the rest).
_GROWTH_PER_FEATURE = 1 / 3
_LOG_WORK_CAP = 400.0


def prior_cost(
    n_rows: int, n_features: int, depth: int | None, *, path: bool, relative_cost: float = 1.0
) -> float:
    """Estimated seconds of one task, before anything was measured.

    The dp's work grows with the rows (bitset words), with the square of the binary features
    (the depth-two solver at each pair of leaves) and by a factor of about a third of the
    features per level of depth above two (the sub-problems the bounds leave); a depth above
    the features counts as the features (:func:`odtkit._validation.check_depth` clamps it the
    same way), None as unlimited. Good to a factor of a few: only the order of the tasks and
    ``sweep(plan=True)``'s estimate rest on it. ``relative_cost`` is the method's cost relative
    to the dp on the same cell (:attr:`odtkit.methods.Method.relative_cost`).
    """
    p = max(int(n_features), 1)
    d = p if depth is None else min(int(depth), p)
    growth = max(p * _GROWTH_PER_FEATURE, 1.0)
    log_work = math.log(max(int(n_rows), 1)) + 2 * math.log(p) + max(d - 2, 0) * math.log(growth)
    work = math.exp(min(log_work, _LOG_WORK_CAP))  # unlimited depth on wide data: huge, finite
    factor = (_PATH_FACTOR if path else 1.0) * relative_cost
    return factor * (_OVERHEAD + _SECONDS_PER_UNIT * work)


class Scheduler:
    """Longest estimated task first, the estimates refined by the times of finished tasks.

    Parameters
    ----------
    priors : sequence of float
        Estimated cost of each task (any positive unit; seconds from :func:`prior_cost`).
    groups : sequence of hashable
        Each task's group: tasks of one group are expected to cost the same (the folds of one
        dataset, depth, method and λ cell).

    ``pop()`` returns the index of the task to run next, ``done(index, seconds)`` records a
    finished task's measured time. Ties go to the lower index (the grid's order). Both take
    O(log n): a grid of thousands of tasks is scheduled in milliseconds. The tasks of groups
    without a time wait in one heap by prior (the common calibration keeps their order); each
    group with times has one entry, its mean and its lowest remaining task, in another.
    """

    def __init__(self, priors: Sequence[float], groups: Sequence[Hashable]) -> None:
        if len(priors) != len(groups):
            raise ValueError("priors and groups must have the same length")
        self._priors = [max(float(p), 1e-12) for p in priors]
        ids: dict[Hashable, int] = {}
        # groups by number: heap entries never compare the caller's keys (None < 3 fails)
        self._group = [ids.setdefault(g, len(ids)) for g in groups]
        self._remaining = set(range(len(self._priors)))
        self._members: list[list[int]] = [[] for _ in ids]  # each a heap of task indices
        for i, g in enumerate(self._group):
            self._members[g].append(i)  # ascending: already a heap
        self._unmeasured = [(-p, i) for i, p in enumerate(self._priors)]
        heapq.heapify(self._unmeasured)
        self._measured: list[tuple[float, int, int]] = []  # (-mean, lowest remaining, group)
        self._time_sum = [0.0] * len(ids)
        self._time_count = [0] * len(ids)
        self._log_ratio_sum = 0.0
        self._n_measured = 0

    def __len__(self) -> int:
        return len(self._remaining)

    def _mean(self, group: int) -> float:
        return self._time_sum[group] / self._time_count[group]

    def estimate(self, index: int) -> float:
        """The current estimate of task ``index`` (seconds when the priors are)."""
        group = self._group[index]
        if self._time_count[group]:
            return self._mean(group)
        return self._priors[index] * self.calibration

    @property
    def calibration(self) -> float:
        """Geometric mean of measured / prior over the finished tasks (1 before any)."""
        if not self._n_measured:
            return 1.0
        return math.exp(self._log_ratio_sum / self._n_measured)

    def _head(self, group: int) -> int | None:
        """The lowest remaining task of ``group``."""
        members = self._members[group]
        while members and members[0] not in self._remaining:
            heapq.heappop(members)
        return members[0] if members else None

    def _push_group(self, group: int) -> None:
        head = self._head(group)
        if head is not None:
            heapq.heappush(self._measured, (-self._mean(group), head, group))

    def pop(self) -> int:
        """The remaining task of the largest current estimate (lowest index on ties)."""
        if not self._remaining:
            raise IndexError("no task left")
        unmeasured, measured = self._unmeasured, self._measured
        while unmeasured and (
            unmeasured[0][1] not in self._remaining
            or self._time_count[self._group[unmeasured[0][1]]]
        ):
            heapq.heappop(unmeasured)
        while measured and (
            measured[0][1] not in self._remaining
            or measured[0][1] != self._head(measured[0][2])
            or measured[0][0] != -self._mean(measured[0][2])
        ):
            heapq.heappop(measured)
        candidates = []
        if unmeasured:
            index = unmeasured[0][1]
            candidates.append((-self._priors[index] * self.calibration, index))
        if measured:
            candidates.append((measured[0][0], measured[0][1]))
        _, best = min(candidates)
        self._remaining.discard(best)
        if self._time_count[self._group[best]]:
            self._push_group(self._group[best])
        return best

    def done(self, index: int, seconds: float) -> None:
        """Record that task ``index`` took ``seconds`` (non-positive or nan: ignored)."""
        if not seconds > 0 or math.isinf(seconds):
            return
        group = self._group[index]
        self._time_sum[group] += float(seconds)
        self._time_count[group] += 1
        self._log_ratio_sum += math.log(seconds / self._priors[index])
        self._n_measured += 1
        self._push_group(group)

    def order(self) -> list[int]:
        """Every remaining task in the order :meth:`pop` would give without new times."""
        return sorted(self._remaining, key=lambda i: (-self.estimate(i), i))


class _Policy(Protocol):
    def pop(self) -> int: ...

    def done(self, index: int, seconds: float) -> None: ...


class FifoOrder:
    """A fixed order (the grid's order by default: what ``sweep`` did before it scheduled)."""

    def __init__(self, order: Sequence[int]) -> None:
        self._order = list(order)
        self._next = 0

    def pop(self) -> int:
        if self._next >= len(self._order):
            raise IndexError("no task left")
        self._next += 1
        return self._order[self._next - 1]

    def done(self, index: int, seconds: float) -> None:
        """A fixed order learns nothing."""


def simulate(times: Sequence[float], workers: int, policy: _Policy | None = None) -> float:
    """Makespan of list scheduling ``times`` onto ``workers`` identical workers.

    Each task, in the order ``policy`` hands them out (a :class:`Scheduler` or a
    :class:`FifoOrder`; default: the given order), starts on the first worker that is free;
    when a task finishes, ``policy.done`` hears its time before the next ``pop`` (the
    scheduler's refinement, replayed). Ties finish in index order. No overheads: compare with
    :func:`ideal_makespan`.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    n = len(times)
    policy = FifoOrder(range(n)) if policy is None else policy
    running: list[tuple[float, int]] = []  # (finish time, task)
    clock = 0.0
    started = 0
    while started < n and len(running) < workers:
        index = policy.pop()
        heapq.heappush(running, (clock + float(times[index]), index))
        started += 1
    makespan = 0.0
    while running:
        clock, index = heapq.heappop(running)
        makespan = max(makespan, clock)
        policy.done(index, float(times[index]))
        if started < n:
            nxt = policy.pop()
            heapq.heappush(running, (clock + float(times[nxt]), nxt))
            started += 1
    return makespan


def ideal_makespan(times: Sequence[float], workers: int) -> float:
    """The lower bound of any schedule: max(sum / workers, longest task)."""
    if not times:
        return 0.0
    return max(math.fsum(times) / workers, max(times))

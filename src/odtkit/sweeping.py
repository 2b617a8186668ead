"""``sweep``: datasets × folds × depths × λ (or the whole path) × methods, as one tidy table.

Every cell of the grid is an independent task (one solve, or one regularization path), run

* on a local process pool (the default; ``n_jobs=1`` runs them in this process), or
* on a Dask cluster, when ``client=`` is a ``dask.distributed.Client`` (``pip install
  'odtkit[dask]'``; dask is imported only then).

Results stream back as tasks finish (a tqdm progress bar when tqdm is installed and
``progress=True``). A task that raises, or that gives no answer within ``task_timeout``, becomes a
row with status ``"error"`` or ``"time_limit"`` and a ``message``: a sweep is never lost to one
task; Ctrl-C returns the finished rows and the rest as ``"interrupted"`` rows. The table is
sorted by the grid, so a local and a Dask run of the same sweep give the same table (up to the
``time`` column).

Tasks go to the workers longest first (:mod:`odtkit._schedule`: an estimate from each task's rows,
features, depth, λ or path and method, replaced by the measured times of the finished folds of the
same cell), a pool worker's next task chosen when one finishes, so that the last tasks to run are
short ones; on Dask every task is submitted at once, ranked by the estimates before the sweep
(Dask's ``priority``), so its order is not refined. Each worker receives each dataset once, with the
fold of each row (the pool's ``initializer``; ``client.scatter(..., broadcast=True)`` on Dask); a
task carries only its coordinates and cuts its fold from them.

The local pool and a Dask ``LocalCluster`` start their workers with ``"spawn"``, which imports
the calling script again: a script calls ``sweep`` under ``if __name__ == "__main__":`` (a
worker that finds ``sweep`` called while it imports the script exits at once, and the parent
raises one RuntimeError saying so).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as futures_wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from odtkit._limits import LoopStop
from odtkit._schedule import FifoOrder, Scheduler, ideal_makespan, prior_cost, simulate
from odtkit._validation import check_depth, check_lambda, check_positive_number
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset
from odtkit.results import Status

__all__ = ["SWEEP_COLUMNS", "sweep"]

#: Columns of the table :func:`sweep` returns, in order.
SWEEP_COLUMNS = (
    "dataset",
    "fold",
    "depth",
    "lam",
    "lam_hi",
    "method",
    "objective",
    "bound",
    "status",
    "train_accuracy",
    "test_accuracy",
    "leaves",
    "time",
    "message",
)
_SORT = ["dataset", "fold", "depth", "method", "lam"]


@dataclass(frozen=True)
class _Task:
    """One cell of the grid: its coordinates and parameters, not its data (a worker holds each
    dataset once and cuts the fold from it: :class:`_Folds`)."""

    index: int
    dataset: str
    fold: int
    depth: int | None
    method: str
    lam: float | None  # None: the whole regularization path
    time_limit: float | None
    lam_min: float
    backend: str


@dataclass(frozen=True)
class _Folds:
    """One dataset and the fold of each row: what a worker receives once per sweep."""

    data: Dataset
    # the test fold of each row (k-fold: each row is tested once, trained on in the other
    # folds); None: no folds (train on all the data, no test)
    fold_of_row: np.ndarray | None

    def fold(self, fold: int) -> tuple[Dataset, Dataset | None]:
        """(train, test) of fold ``fold``, cut on demand (a copy of a few rows, next to a solve):
        the rows of scikit-learn's split, in its (ascending) order."""
        if self.fold_of_row is None:
            return self.data, None
        test = self.fold_of_row == fold
        return self.data.subset(np.flatnonzero(~test)), self.data.subset(np.flatnonzero(test))

    def train_shape(self, fold: int) -> tuple[int, int]:
        """(rows, features) of fold ``fold``'s training set, without cutting it."""
        if self.fold_of_row is None:
            return self.data.n_samples, self.data.n_features
        rows = int(np.count_nonzero(self.fold_of_row != fold))
        return rows, self.data.n_features


def _row(task: _Task, **values: Any) -> dict[str, Any]:
    row: dict[str, object] = {c: math.nan for c in SWEEP_COLUMNS}
    row.update(
        dataset=task.dataset,
        fold=task.fold,
        depth=task.depth,
        lam=task.lam,
        lam_hi=math.nan,
        method=task.method,
        status=Status.ERROR.value,
        leaves=0,
        message="",
    )
    row.update(values)
    return row


def _accuracies(tree: Any, train: Dataset, test: Dataset | None) -> dict[str, float]:
    from odtkit import metrics

    on_test = math.nan if test is None else metrics.accuracy(tree, test)
    return {"train_accuracy": metrics.accuracy(tree, train), "test_accuracy": on_test}


#: Key of a row dict carrying the odtkit warnings its task raised, as ``(category, text)``
#: pairs; :func:`sweep` takes it out before the row reaches ``on_rows`` or the table.
_WARNINGS = "_warnings"


def run_task(task: _Task, folds: _Folds) -> list[dict[str, Any]]:
    """Rows of one task on its dataset's ``folds``; an exception becomes an ``error`` row (never
    raises).

    odtkit's warnings (e.g. a λ that makes the single leaf optimal) are not shown here, in a
    worker whose stderr is not the user's: each row's ``message`` ends with them, and the rows
    carry them (``_WARNINGS``) for :func:`sweep` to report once with the task's coordinates.
    """
    from odtkit._warnings import collecting

    with collecting() as caught:
        rows = _task_rows(task, folds)
    if caught:
        unique = list(dict.fromkeys(caught))
        said = "; ".join(f"{category.__name__}: {text}" for category, text in unique)
        for row in rows:
            row["message"] = f"{row['message']}; {said}" if row.get("message") else said
            row[_WARNINGS] = unique
    return rows


def _task_rows(task: _Task, folds: _Folds) -> list[dict[str, Any]]:
    start = time.perf_counter()
    try:
        train, test = folds.fold(task.fold)
        if task.lam is None:
            return _run_path(task, train, test, start)
        return [_run_solve(task, train, test, task.lam, start)]
    except Exception as exc:  # noqa: BLE001 - a failed task is a row, not a lost sweep
        message = f"{type(exc).__name__}: {exc}"
        detail = traceback.format_exc(limit=3).strip().splitlines()[-1]
        return [
            _row(
                task,
                status=Status.ERROR.value,
                time=time.perf_counter() - start,
                message=message if detail in message else f"{message} ({detail})",
            )
        ]


def _run_solve(
    task: _Task, train: Dataset, test: Dataset | None, lam: float, start: float
) -> dict[str, Any]:
    from odtkit.task import Task, solve

    # the one solve path (odtkit.task); a sweep's MIPs run cold, each cell on its own limit
    result = solve(
        Task.from_dataset(train),
        method=task.method,
        lam=lam,
        max_depth=task.depth,
        backend=task.backend,
        time_limit=task.time_limit,
        warm_start=False,
    )
    tree = result.model
    accuracies = (
        _accuracies(tree, train, test) if tree is not None else {"train_accuracy": math.nan}
    )
    return _row(
        task,
        objective=result.objective,
        bound=result.lower_bound,
        status=result.status.value,
        leaves=0 if tree is None else tree.n_leaves,
        time=time.perf_counter() - start,
        message=result.message,
        **accuracies,
    )


def _run_path(
    task: _Task, train: Dataset, test: Dataset | None, start: float
) -> list[dict[str, Any]]:
    from odtkit.core import regularization_path

    path = regularization_path(
        train, max_depth=task.depth, lam_min=task.lam_min, time_limit=task.time_limit
    )
    elapsed = time.perf_counter() - start
    rows = []
    for s in path.segments:
        objective = s.objective(s.lam_lo)
        rows.append(
            _row(
                task,
                lam=s.lam_lo,
                lam_hi=s.lam_hi,
                objective=objective,
                bound=objective - s.lower_bound_gap,
                status=Status.OPTIMAL.value if s.certified else path.status.value,
                leaves=s.n_leaves,
                time=elapsed,
                **_accuracies(s.tree, train, test),
            )
        )
    return rows


# ---------------------------------------------------------------------------------------------
# the grid
# ---------------------------------------------------------------------------------------------


def _named_datasets(datasets: Any) -> list[tuple[str, Dataset]]:
    """(name, Dataset) pairs from a mapping, a sequence of names / Datasets, or one of them."""
    from odtkit.datasets._bundled import resolve

    if isinstance(datasets, (str, Dataset)):
        datasets = [datasets]
    if isinstance(datasets, Mapping):
        items = [(str(k), check_dataset(v, f"datasets[{k!r}]")) for k, v in datasets.items()]
    elif isinstance(datasets, Iterable):
        items = []
        for d in datasets:
            data = check_dataset(resolve(d))
            items.append((d if isinstance(d, str) else data.name, data))
    else:
        raise TypeError(
            f"datasets must be a Dataset, a name, or a sequence/mapping of them, got "
            f"{type(datasets).__name__}"
        )
    if not items:
        raise ValueError("datasets is empty")
    names = [n for n, _ in items]
    if len(set(names)) != len(names):
        raise ValueError(f"datasets must have distinct names, got {names}")
    return items


def _splits(data: Dataset, folds: int | None, seed: int) -> _Folds:
    """The dataset with its (train, test) rows per fold: stratified k-fold when every class has
    ``folds`` rows."""
    if folds is None:
        return _Folds(data, None)
    from sklearn.model_selection import KFold, StratifiedKFold

    counts = np.bincount(data.y, minlength=data.n_classes)
    stratify = counts[counts > 0].min() >= folds
    splitter = (StratifiedKFold if stratify else KFold)(folds, shuffle=True, random_state=seed)
    if folds > data.n_samples:
        raise ValueError(f"folds={folds} exceeds the {data.n_samples} rows of {data.name!r}")
    fold_of_row = np.full(data.n_samples, -1, dtype=np.int32)
    for fold, (_, test) in enumerate(splitter.split(data.X, data.y)):
        fold_of_row[test] = fold
    return _Folds(data, fold_of_row)


def _grid(
    datasets: Any,
    lams: Any,
    depths: Sequence[int | None] | int | None,
    folds: int | None,
    methods: Sequence[str],
    time_limit: float | None,
    lam_min: float,
    backend: str,
    seed: int,
) -> tuple[list[_Task], dict[str, _Folds]]:
    """The grid's tasks in grid order, and each dataset with its folds (shipped once)."""
    from odtkit.methods import DATASET_METHODS, get_method

    path = isinstance(lams, str)
    if path and lams != "path":
        raise ValueError(f"lams must be a sequence of numbers or 'path', got {lams!r}")
    lam_values: list[float | None] = (
        [None] if path else [check_lambda(v, "lams") for v in _as_list(lams, "lams")]
    )
    depth_values = [check_depth(d, "depths") for d in _as_list(depths, "depths")]
    # a sweep binarizes each dataset once: the raw-table method ("exact") is compare's
    method_names = [
        get_method(m, DATASET_METHODS, "methods entry").name for m in _as_list(methods, "methods")
    ]
    if path and method_names != ["dp"]:
        raise ValueError(
            f"lams='path' runs the dp's regularization path: methods must be ['dp'], "
            f"got {method_names}"
        )
    if folds is not None and (isinstance(folds, bool) or not isinstance(folds, int) or folds < 2):
        raise ValueError(f"folds must be an integer >= 2 or None, got {folds!r}")
    tasks: list[_Task] = []
    shipped: dict[str, _Folds] = {}
    for name, data in _named_datasets(datasets):
        shipped[name] = _splits(data, folds, seed)
        for fold in range(1 if folds is None else folds):
            for depth in depth_values:
                for method in method_names:
                    for lam in lam_values:
                        tasks.append(
                            _Task(
                                len(tasks),
                                name,
                                fold,
                                depth,
                                method,
                                lam,
                                time_limit,
                                lam_min,
                                backend,
                            )
                        )
    return tasks, shipped


def _as_list(values: Any, name: str) -> list[Any]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        values = [values]
    out = list(values)
    if not out:
        raise ValueError(f"{name} is empty")
    return out


# ---------------------------------------------------------------------------------------------
# executors: each yields (task, rows) as tasks finish
# ---------------------------------------------------------------------------------------------


def _timeout_rows(task: _Task, timeout: float) -> list[dict[str, Any]]:
    return [
        _row(
            task,
            status=Status.TIME_LIMIT.value,
            time=timeout,
            message=f"no answer from the worker within task_timeout={timeout:g} s",
        )
    ]


def _result_rows(future: Any, task: _Task) -> list[dict[str, Any]]:
    """A finished task's rows, or one error row if it raised (a dead pool process, a killed
    Dask worker): a failed task is a row, never a lost sweep."""
    try:
        rows: list[dict[str, Any]] = future.result()
        return rows
    except Exception as exc:  # noqa: BLE001 - BrokenProcessPool, KilledWorker, the task's own
        return [_row(task, status=Status.ERROR.value, message=repr(exc))]


def _run_serial(
    tasks: list[_Task], shipped: Mapping[str, _Folds]
) -> Iterator[tuple[_Task, list[dict[str, Any]]]]:
    for task in tasks:
        yield task, run_task(task, shipped[task.dataset])


def _schedule(tasks: list[_Task], shipped: Mapping[str, _Folds]) -> Scheduler:
    """Longest estimated task first (:mod:`odtkit._schedule`): the estimate of a task is its
    :func:`~odtkit._schedule.prior_cost` until tasks of its group (the folds of one dataset,
    depth, method and λ) have finished, then their mean time."""
    from odtkit.methods import get_method

    priors = []
    for t in tasks:
        rows, features = shipped[t.dataset].train_shape(t.fold)
        cost = get_method(t.method).relative_cost
        priors.append(prior_cost(rows, features, t.depth, path=t.lam is None, relative_cost=cost))
    return Scheduler(priors, [(t.dataset, t.depth, t.method, t.lam) for t in tasks])


def _task_seconds(rows: list[dict[str, Any]]) -> float:
    """A finished task's own wall time (a path's rows repeat it); nan when it has none."""
    times = [r.get("time", math.nan) for r in rows]
    finite = [t for t in times if isinstance(t, float) and math.isfinite(t)]
    return max(finite) if finite else math.nan


def _drive(
    tasks: list[_Task],
    schedule: Scheduler,
    slots: int,
    submit: Callable[[_Task], Any],
    wait: Callable[[list[Any], float | None], set[Any]],
    rows_of: Callable[[Any, _Task], list[dict[str, Any]]],
    budget: float,
    timeout: float,
) -> Iterator[tuple[_Task, list[dict[str, Any]]]]:
    """Run ``tasks`` with at most ``slots`` submitted at once, the next always the scheduler's
    longest (so each finished task's time refines the order of the rest); yield ``(task,
    rows)`` as they finish. Past ``budget`` seconds in all, every unfinished task is a
    ``time_limit`` row (the caller ends what still runs)."""
    deadline = time.monotonic() + budget
    running: dict[Any, _Task] = {}

    def fill() -> None:
        while len(schedule) and len(running) < slots:
            task = tasks[schedule.pop()]
            running[submit(task)] = task

    fill()
    while running:
        left = deadline - time.monotonic()
        done = (
            wait(list(running), None if math.isinf(left) else max(left, 0.0)) if left > 0 else set()
        )
        if not done:
            break
        for future in sorted(done, key=lambda f: running[f].index):
            task = running.pop(future)
            rows = rows_of(future, task)
            schedule.done(task.index, _task_seconds(rows))
            yield task, rows
        fill()
    unfinished = sorted(running.values(), key=lambda t: t.index)
    unfinished += [tasks[i] for i in sorted(schedule.order())]
    for task in unfinished:
        yield task, _timeout_rows(task, timeout)


#: Tasks submitted beyond one per worker: a worker that finishes finds its next task queued
#: instead of waiting for the parent to choose it (one more keeps every worker fed; more would
#: fix the order before the finished tasks' times could refine it).
_QUEUED = 1


#: Exit code of a worker process that found ``sweep`` called again while it imported the
#: user's script (:func:`_refuse_in_a_bootstrapping_worker`); the parent reads it.
_UNGUARDED_EXIT = 86

_UNGUARDED_MESSAGE = (
    "odtkit.sweep with n_jobs > 1 starts worker processes with 'spawn', which import your "
    'script again: call it under `if __name__ == "__main__":` (see the example in '
    "help(odtkit.sweep))"
)


def _bootstrapping() -> bool:
    """Whether this process is a spawned child still importing its parent's main module (the
    flag multiprocessing's own check of the same situation reads)."""
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


def _refuse_in_a_bootstrapping_worker() -> None:
    """A ``sweep`` reached while a worker imports the user's unguarded script: end the worker
    at once, quietly, with an exit code that tells the parent why (the parent raises one clear
    error; without this every worker printed multiprocessing's traceback and the parent a row
    of errors). ``os._exit``, not ``SystemExit``: an interpreter shutting down closes its pipes
    to the pool (which the parent reads as a broken pool) well before the process ends, so
    under load the parent saw no exit code yet and took the script for guarded."""
    if _bootstrapping():
        os._exit(_UNGUARDED_EXIT)


def _unguarded(workers: Sequence[Any], patience: float = 10.0) -> bool:
    """Whether a worker of a broken pool ended because the script calls sweep unguarded.

    The pool terminates its other workers once it is broken, so each ends soon; ``patience``
    seconds in all bound the wait for their exit codes.
    """
    deadline = time.monotonic() + patience
    while True:
        alive = [p for p in workers if p.exitcode is None]  # before the check: no exit missed
        if any(p.exitcode == _UNGUARDED_EXIT for p in workers):
            return True
        if not alive or time.monotonic() > deadline:
            return False
        alive[0].join(timeout=0.05)


#: A pool worker's datasets (:func:`_install`): the parent ships each once per worker, through
#: the pool's ``initializer``, instead of once per task.
_SHIPPED: dict[str, _Folds] = {}


def _install(shipped: Mapping[str, _Folds]) -> None:
    """Pool worker start-up: keep the sweep's datasets, and import the solvers now (in
    parallel on every worker) rather than in the first task."""
    import odtkit.core
    import odtkit.methods
    import odtkit.metrics  # noqa: F401

    _SHIPPED.clear()
    _SHIPPED.update(shipped)


def _run_installed(task: _Task) -> list[dict[str, Any]]:
    """A pool worker's task: its data from the worker's :data:`_SHIPPED`."""
    return run_task(task, _SHIPPED[task.dataset])


def _processes(executor: ProcessPoolExecutor) -> list[Any]:
    """The pool's worker processes (none once it is shut down)."""
    return list((getattr(executor, "_processes", None) or {}).values())


def _run_pool(
    tasks: list[_Task], shipped: Mapping[str, _Folds], timeout: float, n_jobs: int
) -> Iterator[tuple[_Task, list[dict[str, Any]]]]:
    # spawn: a clean interpreter per worker (no inherited threads or native state); each
    # worker lives for the whole sweep, its datasets installed once. A worker that dies breaks
    # the executor: its tasks become error rows instead of being retried.
    processes = min(n_jobs, len(tasks))
    executor = ProcessPoolExecutor(
        processes,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_install,
        initargs=(dict(shipped),),
    )
    checked = False
    submitted: list[Future[list[dict[str, Any]]]] = []
    # every worker the pool started, kept here: a broken pool need not keep its list of them
    workers: dict[int, Any] = {}

    def submit(task: _Task) -> Future[list[dict[str, Any]]]:
        future: Future[list[dict[str, Any]]]
        try:
            future = executor.submit(_run_installed, task)
        except BrokenProcessPool as exc:  # broken while the grid was being fed
            future = Future()
            future.set_exception(exc)
        submitted.append(future)
        workers.update({p.pid: p for p in _processes(executor)})
        return future

    def wait(
        futures: list[Future[list[dict[str, Any]]]], seconds: float | None
    ) -> set[Future[list[dict[str, Any]]]]:
        try:
            return set(futures_wait(futures, seconds, return_when=FIRST_COMPLETED).done)
        except RuntimeError as exc:
            # A Ctrl-C that lands while threading.Condition.wait releases its lock makes the
            # `with` around it release it again: RuntimeError("release unlocked lock") raised
            # during the KeyboardInterrupt (test_interrupts met it at load 4). It is that
            # Ctrl-C, and sweep keeps the finished rows for it as for any other.
            if isinstance(exc.__context__, KeyboardInterrupt):
                raise exc.__context__ from None
            raise

    def rows_of(future: Future[list[dict[str, Any]]], task: _Task) -> list[dict[str, Any]]:
        nonlocal checked
        if not checked and isinstance(future.exception(), BrokenProcessPool):
            checked = True  # another cause: the remaining broken futures need no check
            if _unguarded(list(workers.values())):
                raise RuntimeError(_UNGUARDED_MESSAGE)
        return _result_rows(future, task)

    # tasks queue behind each other, so the fair deadline is the grid's: rounds x task_timeout
    budget = timeout * math.ceil(len(tasks) / processes)
    schedule = _schedule(tasks, shipped)
    try:
        yield from _drive(
            tasks, schedule, processes + _QUEUED, submit, wait, rows_of, budget, timeout
        )
    finally:
        if any(not f.done() for f in submitted):
            # a running task cannot be cancelled (it hung, or the sweep was interrupted):
            # end the worker processes
            for process in _processes(executor):
                process.terminate()
        executor.shutdown(wait=False, cancel_futures=True)


def _run_dask(
    tasks: list[_Task], shipped: Mapping[str, _Folds], timeout: float, client: Any
) -> Iterator[tuple[_Task, list[dict[str, Any]]]]:
    try:
        from distributed import as_completed
    except ImportError as exc:  # pragma: no cover - a client implies distributed
        raise ImportError("client= needs dask.distributed: pip install 'odtkit[dask]'") from exc
    run = uuid.uuid4().hex
    # each dataset (with its folds' rows) to every worker once; the tasks name it by its future
    data = {
        name: client.scatter(folds, broadcast=True, hash=False) for name, folds in shipped.items()
    }
    workers = client.scheduler_info().get("workers", {})
    n_workers = max(1, len(workers))
    budget = timeout * math.ceil(len(tasks) / n_workers)
    submitted: list[Any] = []
    # one event-driven stream of finished futures for the whole grid; its deadline is the grid's
    finished = as_completed(timeout=None if math.isinf(budget) else budget)

    def submit(task: _Task) -> Any:
        # every task at once, each ranked by the scheduler's order (Dask runs a higher priority
        # first): a worker that finishes takes the next from the Dask scheduler's queue, where
        # a client choosing it on each completion left workers idle for a round trip per task
        # (occupancy 0.77 against the pool's 0.89 on 180 tasks at 2 workers)
        future = client.submit(
            run_task,
            task,
            data[task.dataset],
            key=f"odtkit-sweep-{run}-{task.index}",
            pure=False,
            priority=len(tasks) - len(submitted),
        )
        submitted.append(future)
        finished.add(future)
        return future

    def wait(futures: list[Any], seconds: float | None) -> set[Any]:
        try:
            return set(finished.next_batch(block=True))
        except (TimeoutError, StopIteration):
            return set()

    try:
        yield from _drive(
            tasks,
            _schedule(tasks, shipped),
            len(tasks),
            submit,
            wait,
            _result_rows,
            budget,
            timeout,
        )
    finally:
        for future in submitted:
            if not future.done():
                future.cancel()


# ---------------------------------------------------------------------------------------------


def sweep(
    datasets: Any,
    *,
    lams: Sequence[float] | str = (0.01,),
    depths: Sequence[int | None] | int | None = (3,),
    folds: int | None = 5,
    methods: Sequence[str] | str = ("dp",),
    time_limit: float | None = 60.0,
    lam_min: float = 0.0,
    client: Any = None,
    n_jobs: int | None = None,
    task_timeout: float | None = None,
    backend: str = "highs",
    seed: int = 0,
    progress: bool = True,
    on_rows: Callable[[list[dict[str, Any]]], None] | None = None,
    plan: bool = False,
) -> pd.DataFrame:
    """Solve a grid of problems and return one tidy table, locally or on a Dask cluster.

    Parameters
    ----------
    datasets : Dataset, str, or a sequence / mapping of them
        Datasets (named by ``Dataset.name`` or the mapping's keys) or names of bundled / shared
        sets (``"monk1"``, ``"compas-binary"``).
    lams : sequence of float or "path"
        Leaf penalties, or ``"path"``: the exact regularization path on [``lam_min``, ∞) of each
        (dataset, fold, depth), one row per path segment (``lam`` its start, ``lam_hi`` its end).
        ``"path"`` needs ``methods=("dp",)``.
    depths : int, None or a sequence of them
        Depth limits (None: unlimited, search methods only).
    folds : int or None, default 5
        Stratified k-fold (shuffled with ``seed``; plain k-fold when a class has fewer rows):
        every task trains on k-1 folds and reports the held-out fold's accuracy. None: train
        on all the data, ``test_accuracy`` is nan.
    methods : str or sequence of str
        Names of :data:`odtkit.methods.METHODS` that run on a binarized Dataset
        (:data:`odtkit.methods.DATASET_METHODS`; the raw-table ones are :func:`odtkit.compare`'s).
    time_limit : float or None
        Seconds per task, passed to the solver (a path's whole budget).
    lam_min : float
        Left end of the paths (``lams="path"``).
    client : dask.distributed.Client, optional
        Run the tasks on this cluster instead of a local process pool.
    n_jobs : int, optional
        Local worker processes (default: the CPU count); 1 runs the tasks in this process.
        Ignored with ``client``.
    task_timeout : float, optional
        Wall-clock seconds one task may take (default ``2 * time_limit + 60``; unlimited when
        ``time_limit`` is None). The grid's deadline is this times the rounds of tasks per
        worker; tasks without an answer then become ``time_limit`` rows (the local pool's
        workers are terminated, Dask futures cancelled).
    backend : str
        MIP backend of the MIP methods, a name of :func:`odtkit.solvers.registered_backends`.
    seed : int
        Shuffling of the folds.
    progress : bool
        A tqdm progress bar while results stream in (when tqdm is installed).
    on_rows : callable, optional
        Called with each finished task's rows as they arrive (e.g. to append to a file).
    plan : bool, default False
        Print the estimate of the sweep before running it: the tasks, their estimated serial
        time and longest task, and the estimated wall time on the workers it will use (list
        scheduling of the estimates in the sweep's longest-first order), beside the ideal
        max(sum / workers, longest) and the grid's order. The estimates come from each task's
        rows, binary features, depth, λ or path and method (:func:`odtkit._schedule.prior_cost`)
        and are good to a factor of a few; the sweep then runs as without ``plan``.

    Returns
    -------
    DataFrame
        Columns :data:`SWEEP_COLUMNS`: ``dataset, fold, depth, lam, lam_hi, method, objective,
        bound, status, train_accuracy, test_accuracy, leaves, time, message``, sorted by
        dataset, fold, depth, method and lam. ``time`` is the task's wall clock (for a path:
        the whole path's, repeated on its rows).

    Raises
    ------
    RuntimeError
        When the worker processes could not start because the calling script runs ``sweep``
        at its top level, unguarded (see the notes).

    Notes
    -----
    Tasks run longest first: each task's cost is estimated before the sweep (``plan``) and,
    once tasks of the same dataset, depth, method and λ have finished, from their measured
    times; the next free worker takes the remaining task of the largest estimate (on Dask the
    order of the first estimates, as task priorities, without that refinement). Each worker
    receives each dataset once (the local pool's initializer; on Dask, ``client.scatter`` to
    every worker), the tasks only its name, fold and parameters. The order changes how soon the
    sweep ends, never its table.

    With ``n_jobs`` > 1 (the default on a machine with several cores) the tasks run in worker
    processes started with ``"spawn"``: each imports the calling script again, as
    ``__mp_main__``. A script that calls ``sweep`` at its top level would start the sweep
    again in every worker; put the call under ``if __name__ == "__main__":`` (a notebook or
    ``n_jobs=1`` needs nothing). A Dask ``LocalCluster`` starts its workers the same way, so
    create the ``Client`` under the same guard (unguarded, Dask fails with "Nanny failed to
    start").

    Examples
    --------
    A script, run as ``python my_sweep.py``::

        import odtkit

        if __name__ == "__main__":
            table = odtkit.sweep("monk1", lams=[0.01, 0.05], depths=[2, 3], folds=5)
            print(table.groupby(["depth", "lam"])["test_accuracy"].mean())

    The same on a local Dask cluster::

        from dask.distributed import Client

        import odtkit

        if __name__ == "__main__":
            with Client(n_workers=2) as client:
                table = odtkit.sweep("monk1", lams=[0.01, 0.05], client=client)
    """
    _refuse_in_a_bootstrapping_worker()
    time_limit = check_positive_number(time_limit, "time_limit")
    lam_min = check_lambda(lam_min, "lam_min")
    task_timeout = check_positive_number(task_timeout, "task_timeout")
    if task_timeout is None:
        task_timeout = math.inf if time_limit is None else 2 * time_limit + 60
    if n_jobs is not None and (
        isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1
    ):
        raise ValueError(f"n_jobs must be a positive integer or None, got {n_jobs!r}")
    if not isinstance(plan, bool):
        raise TypeError(f"plan must be True or False, got {plan!r}")
    tasks, shipped = _grid(
        datasets, lams, depths, folds, methods, time_limit, lam_min, backend, seed
    )
    if client is not None:
        workers = _dask_threads(client)
        where = f"Dask worker thread{'s' if workers > 1 else ''}"
        stream = _run_dask(tasks, shipped, task_timeout, client)
    elif (n_jobs or multiprocessing.cpu_count()) == 1 or len(tasks) == 1:
        workers, where = 1, "this process (serial)"
        stream = _run_serial(tasks, shipped)
    else:
        workers = min(n_jobs or multiprocessing.cpu_count(), len(tasks))
        where = f"pool worker{'s' if workers > 1 else ''}"
        stream = _run_pool(tasks, shipped, task_timeout, workers)
    if plan:
        print(_plan_text(tasks, shipped, workers, where), flush=True)
    bar = _progress_bar(len(tasks), progress)
    by_task: dict[int, list[dict[str, Any]]] = {}
    finished: set[int] = set()
    # odtkit warning (category, text) -> the tasks that raised it, in the order they finished
    raised: dict[tuple[type[Warning], str], list[_Task]] = {}
    try:
        for task, task_rows in stream:
            finished.add(task.index)
            for row in task_rows:
                for key in row.pop(_WARNINGS, ()):
                    if not raised.setdefault(key, []) or raised[key][-1] is not task:
                        raised[key].append(task)
            by_task[task.index] = task_rows
            if on_rows is not None:
                on_rows(task_rows)
            if bar is not None:
                bar.update(1)
            # Ctrl-C inside a task's solve is consumed there (status interrupted): it ends the
            # sweep as a Ctrl-C anywhere else does
            LoopStop().check_rows(task_rows)
    except KeyboardInterrupt:
        # Ctrl-C keeps what finished; the rest are rows saying so
        if hasattr(stream, "close"):
            stream.close()  # ends the pool's workers / cancels the Dask futures
        for t in tasks:
            if t.index not in finished:
                by_task[t.index] = [
                    _row(
                        t, status=Status.INTERRUPTED.value, message="interrupted before it finished"
                    )
                ]
    finally:
        if bar is not None:
            bar.close()
    _report_warnings(raised)
    # the grid's order, whatever order the tasks ran and finished in
    rows = [row for index in sorted(by_task) for row in by_task[index]]
    frame = pd.DataFrame(rows, columns=list(SWEEP_COLUMNS))
    frame["depth"] = frame["depth"].astype("Int64")
    frame["leaves"] = frame["leaves"].astype(int)
    return frame.sort_values(_SORT, kind="stable", na_position="first").reset_index(drop=True)


def _dask_threads(client: Any) -> int:
    """Task slots of a Dask cluster: its workers' threads (at least one)."""
    workers = client.scheduler_info().get("workers", {})
    return max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))


def _plan_text(tasks: list[_Task], shipped: Mapping[str, _Folds], workers: int, where: str) -> str:
    """``plan=True``'s estimate: serial time, longest task, and the wall time of the
    longest-first order on ``workers`` (list scheduling of the estimates), the ideal and the
    grid's order beside it."""
    schedule = _schedule(tasks, shipped)
    cost = [schedule.estimate(t.index) for t in tasks]
    wall = simulate(cost, workers, schedule)
    fifo = simulate(cost, workers, FifoOrder(range(len(tasks))))
    return (
        f"sweep plan: {len(tasks)} task{'s' if len(tasks) > 1 else ''}, estimated serial "
        f"{_seconds(math.fsum(cost))}, longest task {_seconds(max(cost))}; estimated wall "
        f"{_seconds(wall)} on {workers} {where}, longest first (ideal max(sum/W, longest) "
        f"{_seconds(ideal_makespan(cost, workers))}, grid order {_seconds(fifo)}); estimates "
        "from rows, features, depth, λ or path and method, good to a factor of a few"
    )


def _seconds(value: float) -> str:
    return f"{value:.2g} s" if value < 10 else f"{value:.0f} s"


def _where(task: _Task) -> str:
    lam = "path" if task.lam is None else f"{task.lam:g}"
    return (
        f"dataset {task.dataset!r}, fold {task.fold}, depth {task.depth}, lam={lam}, "
        f"method {task.method}"
    )


#: Distinct warnings of one category a sweep shows in full; the rest are counted in one line
#: (each row's ``message`` still has its own).
_SHOWN_PER_CATEGORY = 3


def _report_warnings(raised: Mapping[tuple[type[Warning], str], list[_Task]]) -> None:
    """Each distinct warning of the sweep's tasks once, at the user's ``sweep(...)`` line,
    naming the first task that raised it and how many others did; past
    ``_SHOWN_PER_CATEGORY`` of one category, one line counts the rest."""
    from odtkit._warnings import warn

    by_category: dict[type[Warning], list[tuple[str, list[_Task]]]] = {}
    # in grid order, whatever order the tasks finished in
    for (category, text), tasks in raised.items():
        by_category.setdefault(category, []).append((text, sorted(tasks, key=lambda t: t.index)))
    for items in by_category.values():
        items.sort(key=lambda item: item[1][0].index)
    for category, items in by_category.items():
        for text, tasks in items[:_SHOWN_PER_CATEGORY]:
            more = len(tasks) - 1
            also = f" (and {more} more task{'s' if more > 1 else ''})" if more else ""
            warn(f"sweep task {_where(tasks[0])}{also}: {text}", category)
        rest = items[_SHOWN_PER_CATEGORY:]
        if rest:
            n_tasks = len({t.index for _, tasks in rest for t in tasks})
            warn(
                f"sweep: {len(rest)} more {category.__name__} text"
                f"{'s' if len(rest) > 1 else ''} from {n_tasks} task"
                f"{'s' if n_tasks > 1 else ''}, first {_where(rest[0][1][0])}: see the table's "
                "message column",
                category,
            )


def _progress_bar(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="sweep", unit="task")

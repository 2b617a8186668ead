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
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures import TimeoutError as FuturesTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from odtkit._limits import LoopStop
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
    """One cell of the grid, with the data it needs (pickled to a worker)."""

    index: int
    dataset: str
    fold: int
    depth: int | None
    method: str
    lam: float | None  # None: the whole regularization path
    train: Dataset
    test: Dataset | None
    time_limit: float | None
    lam_min: float
    backend: str


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


def _accuracies(tree: Any, task: _Task) -> dict[str, float]:
    from odtkit import metrics

    test = math.nan if task.test is None else metrics.accuracy(tree, task.test)
    return {"train_accuracy": metrics.accuracy(tree, task.train), "test_accuracy": test}


#: Key of a row dict carrying the odtkit warnings its task raised, as ``(category, text)``
#: pairs; :func:`sweep` takes it out before the row reaches ``on_rows`` or the table.
_WARNINGS = "_warnings"


def run_task(task: _Task) -> list[dict[str, Any]]:
    """Rows of one task; an exception becomes an ``error`` row (never raises).

    odtkit's warnings (e.g. a λ that makes the single leaf optimal) are not shown here, in a
    worker whose stderr is not the user's: each row's ``message`` ends with them, and the rows
    carry them (``_WARNINGS``) for :func:`sweep` to report once with the task's coordinates.
    """
    from odtkit._warnings import collecting

    with collecting() as caught:
        rows = _task_rows(task)
    if caught:
        unique = list(dict.fromkeys(caught))
        said = "; ".join(f"{category.__name__}: {text}" for category, text in unique)
        for row in rows:
            row["message"] = f"{row['message']}; {said}" if row.get("message") else said
            row[_WARNINGS] = unique
    return rows


def _task_rows(task: _Task) -> list[dict[str, Any]]:
    start = time.perf_counter()
    try:
        if task.lam is None:
            return _run_path(task, start)
        return [_run_solve(task, task.lam, start)]
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


def _run_solve(task: _Task, lam: float, start: float) -> dict[str, Any]:
    from odtkit.methods import get_method

    result = get_method(task.method).solve(
        task.train,
        lam=lam,
        max_depth=task.depth,
        backend=task.backend,
        time_limit=task.time_limit,
    )
    tree = result.model
    accuracies = _accuracies(tree, task) if tree is not None else {"train_accuracy": math.nan}
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


def _run_path(task: _Task, start: float) -> list[dict[str, Any]]:
    from odtkit.core import regularization_path

    path = regularization_path(
        task.train, max_depth=task.depth, lam_min=task.lam_min, time_limit=task.time_limit
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
                **_accuracies(s.tree, task),
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


def _splits(data: Dataset, folds: int | None, seed: int) -> list[tuple[Dataset, Dataset | None]]:
    """(train, test) per fold: stratified k-fold when every class has ``folds`` rows."""
    if folds is None:
        return [(data, None)]
    from sklearn.model_selection import KFold, StratifiedKFold

    counts = np.bincount(data.y, minlength=data.n_classes)
    stratify = counts[counts > 0].min() >= folds
    splitter = (StratifiedKFold if stratify else KFold)(folds, shuffle=True, random_state=seed)
    if folds > data.n_samples:
        raise ValueError(f"folds={folds} exceeds the {data.n_samples} rows of {data.name!r}")
    return [
        (data.subset(train), data.subset(test)) for train, test in splitter.split(data.X, data.y)
    ]


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
) -> list[_Task]:
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
    for name, data in _named_datasets(datasets):
        for fold, (train, test) in enumerate(_splits(data, folds, seed)):
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
                                train,
                                test,
                                time_limit,
                                lam_min,
                                backend,
                            )
                        )
    return tasks


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
        return future.result()
    except Exception as exc:  # noqa: BLE001 - BrokenProcessPool, KilledWorker, the task's own
        return [_row(task, status=Status.ERROR.value, message=repr(exc))]


def _run_serial(tasks: list[_Task], timeout: float) -> Iterator[tuple[_Task, list[dict]]]:
    for task in tasks:
        yield task, run_task(task)


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


def _run_pool(
    tasks: list[_Task], timeout: float, n_jobs: int
) -> Iterator[tuple[_Task, list[dict]]]:
    # spawn: a clean interpreter per worker (no inherited threads or native state). A worker
    # that dies breaks the executor: its tasks become error rows instead of being retried.
    processes = min(n_jobs, len(tasks))
    executor = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))
    futures = {executor.submit(run_task, t): t for t in tasks}
    workers = list(getattr(executor, "_processes", {}).values())
    # tasks queue behind each other, so the fair deadline is the grid's: rounds x task_timeout
    budget = timeout * math.ceil(len(tasks) / processes)
    finished: set[Future] = set()
    try:
        for future in as_completed(futures, timeout=None if math.isinf(budget) else budget):
            finished.add(future)
            task = futures[future]
            if isinstance(future.exception(), BrokenProcessPool):
                if _unguarded(workers):
                    raise RuntimeError(_UNGUARDED_MESSAGE)
                workers = []  # another cause: the remaining broken futures need no check
            yield task, _result_rows(future, task)
    except FuturesTimeout:
        for future, task in futures.items():
            if future not in finished:
                yield task, _timeout_rows(task, timeout)
    finally:
        if any(not f.done() for f in futures):
            # a running task cannot be cancelled (it hung, or the sweep was interrupted):
            # end the worker processes
            for process in list(getattr(executor, "_processes", {}).values()):
                process.terminate()
        executor.shutdown(wait=False, cancel_futures=True)


def _run_dask(
    tasks: list[_Task], timeout: float, client: Any
) -> Iterator[tuple[_Task, list[dict]]]:
    try:
        from distributed import as_completed
    except ImportError as exc:  # pragma: no cover - a client implies distributed
        raise ImportError("client= needs dask.distributed: pip install 'odtkit[dask]'") from exc
    run = uuid.uuid4().hex
    futures = {client.submit(run_task, t, key=f"odtkit-sweep-{run}-{t.index}"): t for t in tasks}
    n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    budget = timeout * math.ceil(len(tasks) / n_workers)
    finished = as_completed(list(futures), timeout=None if math.isinf(budget) else budget)
    seen = set()
    try:
        for future in finished:
            task = futures[future]
            seen.add(future.key)
            yield task, _result_rows(future, task)
    except TimeoutError:
        for future, task in futures.items():
            if future.key not in seen:
                future.cancel()
                yield task, _timeout_rows(task, timeout)
    finally:
        for future in futures:
            if future.key not in seen:
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
    tasks = _grid(datasets, lams, depths, folds, methods, time_limit, lam_min, backend, seed)
    if client is not None:
        stream = _run_dask(tasks, task_timeout, client)
    elif (n_jobs or multiprocessing.cpu_count()) == 1 or len(tasks) == 1:
        stream = _run_serial(tasks, task_timeout)
    else:
        stream = _run_pool(tasks, task_timeout, n_jobs or multiprocessing.cpu_count())
    bar = _progress_bar(len(tasks), progress)
    rows: list[dict[str, Any]] = []
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
            rows.extend(task_rows)
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
        rows += [
            _row(t, status=Status.INTERRUPTED.value, message="interrupted before it finished")
            for t in tasks
            if t.index not in finished
        ]
    finally:
        if bar is not None:
            bar.close()
    _report_warnings(raised)
    frame = pd.DataFrame(rows, columns=list(SWEEP_COLUMNS))
    frame["depth"] = frame["depth"].astype("Int64")
    frame["leaves"] = frame["leaves"].astype(int)
    return frame.sort_values(_SORT, kind="stable", na_position="first").reset_index(drop=True)


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

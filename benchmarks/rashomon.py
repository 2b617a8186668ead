"""odtkit's Rashomon set against TreeFARMS and PRAXIS, side by side (issue 24).

The set (docs of ``odtkit.rashomon``): every tree T of depth <= max_depth whose every split sends
rows both ways, with R(T) = misclassified/n + lam * leaves <= (1 + epsilon) * OPT (+ 1e-9),
OPT certified, no rounding of lam * n. Leaves predict any class (``leaves="any"``) or only a
majority class (``leaves="majority"``, every tied class allowed).

What the peers compute, established on monk2 and a 6-row table (``tiny``: X = [[0,0,1],
[0,1,1], [1,0,1], [1,1,1], [0,0,1], [1,1,1]], y = [0,1,1,0,1,0]; column 2 constant) by
comparing each peer's trees, converted to ``odtkit.Tree``, with a brute-force enumeration of
the set (``testing.enumerate_trees`` filtered to admissible splits, every tree re-scored by
``metrics.objective``):

TreeFARMS 0.2.4 (BSD 3-Clause, from the GOSDT authors; ``TREEFARMS(config).fit(X_frame, y)``)

* ``depth_budget`` counts levels with the root leaf at depth 1: ``depth_budget=1`` returned only
  the root leaf, ``2`` at most stumps (monk2, lam 0.01, eps 0.05: 2 trees, depth <= 1), ``3``
  depth <= 2 (13 trees). So odtkit ``max_depth=d`` is ``depth_budget=d + 1`` (no Python wrapper
  adds the one, unlike ``gosdt.GOSDTClassifier``).
* ``regularization`` is lam per leaf on the normalized objective, not rounded: its metric values
  (float32) equal ``metrics.objective`` of the decoded trees (monk2 d<=3: 179 of 179 trees);
  ``rashomon_bound_multiplier=eps`` is meant as R <= (1 + eps) * OPT.
* Trees: ``model_set.get_tree_at_idx_raw(i)`` is a dict, ``"true"`` = x_j == 1 (odtkit's right),
  ``"false"`` = x_j == 0, ``"prediction"`` a class code; feature numbers are the frame's columns
  (0/1 columns are kept as they are; the decoded trees' errors equal its ``loss`` metric).
* Leaves predict one majority class only, ties broken to one class: on ``tiny`` (3 rows of each
  class, lam 0.2, eps 0.5, depth 2) its 9 trees miss the root leaf predicting 0 (R = 4.2/6 = OPT)
  but hold the one predicting 1. So it is compared with odtkit's ``leaves="majority"`` set.
* By default it drops "trivial extensions" (a split whose two leaves predict the same class):
  monk2 d<=2 lam 0.01 eps 0.05: 13 trees, 60 of the 61 trees of the exact set it lacks have such
  a pair. With ``rashomon_ignore_trivial_extensions=False`` (used here) it returned 71 trees:
  exactly the ``leaves="majority"`` set (71 = 71, the 3 trees of the any-class set it lacks
  have a minority leaf). On ``tiny`` the 5 majority-set trees it lacks all have a tied leaf.
* Its stated objectives are per stored group: ``get_tree_metric_at_idx_raw(i)`` gives the
  group's (objective, loss, leaves), and a group may mix trees of equal objective but other
  (loss, leaves) (planted d4 lam 0.01 eps 0.05: 296 of 399 trees). So trees are re-scored here.
* It can break its bound by far: planted d4 lam 2/169 eps 0.01 (n = 300): 281,407 trees whose
  own objectives run from 95.75/300 to 109.30/300, where 1.01 x 95.75 = 96.71.
* ``regularization`` below 1/n is used as given (no silent raise as in gosdt's wrapper): monk2
  d<=1 lam 0.005: the root leaf's metric is 0.38370 = 64/169 + 0.005.
* Splits with an empty side: never seen (column 2 of ``tiny`` is never split on).
* ``predict`` and ``load`` raise NotImplementedError; no time limit overrun handling beyond its
  ``time_limit`` config (status 2 = "possible timeout").

PRAXIS 0.0.30 (tree-praxis, MIT; ``PRAXIS().fit(X, y, lambda_reg, depth_budget, rashomon_mult)``)

* ``depth_budget=d`` = at most d split levels (``1``: the root leaf and 12 stumps on monk2).
* lam is rounded to whole misclassifications: ``gamma = llround(lam * n)`` (cpp/praxis.cpp,
  ``fit``), the objective is ``errors + gamma * leaves`` (integers), and the bound is
  ``llround(reference * (1 + rashomon_mult))`` where ``reference`` is the objective of a tree
  found by its lookahead heuristic (``generalized_lickety_split``), an upper bound on OPT, not
  OPT. monk2 lam 0.01 (lam*n = 1.69 -> 2), eps 0.05, depth 2: reference 65, bound
  llround(68.25) = 68; 92 trees = the 74 of the exact set + 18 above its bound
  (R*n = 67.07 and 67.38 > 1.05 * 63.76 = 66.948). ``tiny`` lam 0.2 (1.2 -> 1), eps 0.5: 44
  trees = the 22 of the set + 22 with R*n in 6.4..6.8 > 6.3. So lam = 0.01 and 2/169 on 169
  rows give the same set.
* Leaves predict any class with the default ``majority_leaf_only=False`` (monk2 depth 1: the
  12 stumps include the 11 whose two leaves both predict 0), so it is compared with odtkit's
  ``leaves="any"`` set.
* Trees: ``get_tree_paths(i)`` = (paths, predictions), a path a list of signed 1-based features,
  +f = x_{f-1} == 1, -f = x_{f-1} == 0 (checked here against ``get_predictions`` on the data).
* No split with an empty side (``tiny``: the constant column is never split on); no time limit
  (the parent kills it at the timeout).

Method. Every tool runs in a fresh child process, so its peak RSS (``ru_maxrss``, whole process:
interpreter and imports included; the RSS before the fit is reported too) is its own; a peer
child runs in the peer's own interpreter (``$ODTKIT_TREEFARMS_PYTHON``,
``$ODTKIT_PRAXIS_PYTHON``; unset = "not installed") with an address-space limit
(``--peer-memory-mb``). Times: a peer's fit (TreeFARMS computes and stores its whole set there;
PRAXIS builds its trie, so its count is free after it); ours: *count* = ``build_rashomon`` +
``count()``, *materialise* = that + reading every tree's codes (when the set has at most
``--materialise-cap`` trees). Up to ``--reps`` repetitions, median (a run above 5 s is not
repeated). The peers' trees (up to ``--compare-cap``) are converted to pre-order codes (left =
x_j == 0) and compared with ours as sets; every peer tree outside ours and every tree of ours
outside the peer is re-scored by ``odtkit.metrics.objective`` and placed: *peer above the
bound* (the peer's set breaks the exact bound), *outside the tree space* (deeper, a split with
an empty side, a non-majority leaf for the majority set), *missing from the peer*, and
*missing from ours* (a tree within the bound that our set lacks: our bug, printed loudly).

Writes benchmarks/results/rashomon.json and rashomon.md (rewritten after every row).

Usage: ``PYTHONPATH=src python benchmarks/rashomon.py [--quick] [--datasets A,B] [--depths 4,5]
[--lams 0.01,0.005] [--epsilons 0.01,0.05] [--time-limit S] [--reps N] [--tools
ours,praxis,treefarms] [--budget-minutes M] [--out-dir DIR] [--name STEM] [--report-only]``
with ``ODTKIT_TREEFARMS_PYTHON=/path/to/venv/bin/python`` and ``ODTKIT_PRAXIS_PYTHON=...``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import _harness as harness
import numpy as np

NAME = "rashomon"
DATASETS = (
    "monk1",
    "monk2",
    "monk3",
    "tic-tac-toe",
    "car-evaluation",
    "compas-binary",
    "planted",
)
LAMS = (0.01, 2 / 169, 0.005)
DEPTHS = (4, 5, 6)
EPSILONS = (0.01, 0.05)
TIME_LIMIT = 120.0
QUICK = {
    "datasets": ("monk1", "monk2", "monk3", "planted"),
    "depths": (4,),
    "lams": (0.01, 2 / 169),
    "epsilons": (0.01, 0.05),
    "time_limit": 60.0,
    "reps": 3,
}
#: the planted set: labels of a random depth-4 tree on 12 fair coin columns, 20 % label noise
#: (300 rows: PRAXIS' sets at lam 0.005 run from 74 trees (d4, eps 0.01) to 6.3 million (d6,
#: eps 0.05); with 1000 rows and 10 % noise the planted tree stood alone: 5 trees everywhere)
PLANTED = {"seed": 0, "n_samples": 300, "n_features": 12, "depth": 4, "noise": 0.2}
#: ours materialises (reads every tree's codes) up to this many trees
MATERIALISE_CAP = 2_000_000
#: peer trees extracted and compared (and ours, as codes) up to this many trees
COMPARE_CAP = 100_000
#: a run longer than this is not repeated
REPEAT_BELOW = 5.0
#: address-space limit of a peer child (TreeFARMS reached 10 GB on hard GOSDT settings)
PEER_MEMORY_MB = 8192
TOLERANCE = 1e-9  #: the library's objective tolerance (``R(T) <= bound + 1e-9``)
PAD = int(np.iinfo(np.int32).min)  #: right padding of a code row (the core's convention)
BATCH = 1 << 16  #: trees per ``codes`` call when materialising
PEERS = {
    "treefarms": ("ODTKIT_TREEFARMS_PYTHON", "majority"),
    "praxis": ("ODTKIT_PRAXIS_PYTHON", "any"),
}


# ------------------------------------------------------------------------------------ data
def load(name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``(X uint8 (n, m), y int64 codes)`` of dataset ``name``; None (with a ``[skip]`` line)
    when it is not available (compas-binary lives in the shared data directory)."""
    if name == "planted":
        from odtkit.testing import planted_tree_dataset

        d, _ = planted_tree_dataset(**PLANTED)
    else:
        d = harness.load_dataset(name)
        if d is None:
            return None
    return np.ascontiguousarray(d.X, dtype=np.uint8), np.asarray(d.y, dtype=np.int64)


def write_npz(name: str, folder: Path) -> Path | None:
    data = load(name)
    if data is None:
        return None
    path = folder / f"{name}.npz"
    np.savez(path, X=data[0], y=data[1])
    return path


# ----------------------------------------------------------------------------- tree codes
def pad_codes(codes: Sequence[Sequence[int]]) -> np.ndarray:
    """Pre-order codes as one int32 array, rows padded on the right with :data:`PAD`."""
    width = max((len(c) for c in codes), default=1)
    out = np.full((len(codes), width), PAD, dtype=np.int32)
    for i, c in enumerate(codes):
        out[i, : len(c)] = c
    return out


def code_keys(codes: np.ndarray) -> list[tuple[int, ...]]:
    """One hashable key per code row (the padding dropped): equal keys = equal trees."""
    return [tuple(int(v) for v in row if v != PAD) for row in np.asarray(codes)]


def treefarms_code(node: dict[str, Any]) -> list[int]:
    """TreeFARMS' tree dict (``"true"`` = x_j == 1) as an odtkit pre-order code."""
    if "prediction" in node:
        return [-(int(node["prediction"]) + 1)]
    return [int(node["feature"]), *treefarms_code(node["false"]), *treefarms_code(node["true"])]


def praxis_code(paths: Sequence[Sequence[int]], labels: Sequence[int]) -> list[int]:
    """PRAXIS' leaf paths (signed 1-based features, +f = x_{f-1} == 1) and leaf labels as an
    odtkit pre-order code (x_j == 0 first)."""
    paths = [list(p) for p in paths]

    def build(prefix: list[int], members: list[int]) -> list[int]:
        depth = len(prefix)
        if len(members) == 1 and len(paths[members[0]]) == depth:
            return [-(int(labels[members[0]]) + 1)]
        f = abs(paths[members[0]][depth])
        left = [i for i in members if paths[i][depth] == -f]
        right = [i for i in members if paths[i][depth] == f]
        if len(left) + len(right) != len(members) or not left or not right:
            raise ValueError(f"PRAXIS paths do not form a tree: {paths}")
        return [f - 1, *build([*prefix, -f], left), *build([*prefix, f], right)]

    return build([], list(range(len(paths))))


def predict_code(code: Sequence[int], X: np.ndarray) -> np.ndarray:
    """Class codes a pre-order code predicts on the rows of ``X`` (numpy only: the peers'
    children check their decoding with it)."""
    out = np.empty(X.shape[0], dtype=np.int64)
    pos = 0

    def walk(rows: np.ndarray) -> None:
        nonlocal pos
        v = int(code[pos])
        pos += 1
        if v < 0:
            out[rows] = -v - 1
            return
        right = X[rows, v].astype(bool)
        walk(rows[~right])
        walk(rows[right])

    walk(np.arange(X.shape[0]))
    return out


# ----------------------------------------------------------------------- child plumbing
@contextlib.contextmanager
def stdout_to(path: str) -> Iterator[None]:
    """Send file descriptor 1 (the peers' C++ ``cout`` and Python prints) to ``path``, so that
    only our JSON rows reach the parent."""
    import ctypes

    sys.stdout.flush()
    saved = os.dup(1)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        with contextlib.suppress(Exception):
            ctypes.CDLL(None).fflush(None)  # C stdio (cout synced with it) before switching
        os.dup2(saved, 1)
        os.close(fd)
        os.close(saved)


def limit_memory(mb: float | None) -> None:
    if mb:
        import resource

        limit = int(mb * 1024 * 1024)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _repeat(once: Any, reps: int) -> dict[str, Any]:
    runs = harness.repeat(
        once, reps, again=lambda r: r.get("complete", True) and r["time"] <= REPEAT_BELOW
    )
    out = dict(runs[len(runs) // 2])
    out["time"] = statistics.median(r["time"] for r in runs)
    out["times"] = [r["time"] for r in runs]
    mats = [r.get("materialise_time") for r in runs]
    if mats[0] is not None and None not in mats:
        # each run lists after it counts, so the medians keep that order
        out["materialise_time"] = statistics.median(mats)
    return out


def _sample_indices(count: int, k: int) -> list[int]:
    return sorted(set(np.linspace(0, count - 1, num=min(k, count)).astype(int).tolist()))


# ----------------------------------------------------------------------- child: TreeFARMS
def treefarms_child(
    npz: str,
    lam: float,
    depth: int,
    eps: float,
    limit: float,
    reps: int,
    cap: int,
    out: str,
    memory_mb: float,
) -> dict[str, Any]:
    """Child side in TreeFARMS' interpreter: fit (median of ``reps``), then its trees as codes
    in ``out`` (``.npy``, at most ``cap``). Emits the fit row first, so a timeout during the
    extraction keeps the measurement."""
    import pandas as pd
    from treefarms import TREEFARMS

    limit_memory(memory_mb)
    data = np.load(npz)
    X, y = data["X"], data["y"]
    frame = pd.DataFrame(X.astype(np.int64), columns=[f"f{j}" for j in range(X.shape[1])])
    labels = pd.Series(y.astype(np.int64), name="y")
    config = {
        "regularization": lam,
        "rashomon_bound_multiplier": eps,
        "depth_budget": depth + 1,  # its root leaf has depth 1 (see the top of this file)
        "rashomon_ignore_trivial_extensions": False,
        "time_limit": int(math.ceil(limit)),
    }
    base_rss = harness.peak_rss_mb()
    log = tempfile.mktemp(suffix=".log")
    model: Any = None

    def once() -> dict[str, Any]:
        nonlocal model
        model = TREEFARMS(dict(config))
        with stdout_to(log):
            t0 = time.perf_counter()
            model.fit(frame, labels)
            elapsed = time.perf_counter() - t0
        return {"time": elapsed, "complete": not model.timeout}

    row = _repeat(once, reps)
    count = int(model.get_tree_count())
    metrics = [model.model_set.get_tree_metric_at_idx_raw(i) for i in _sample_indices(count, 1)]
    import treefarms  # noqa: F401

    row.update(
        kind="fit",
        available=True,
        count=count,
        status="time_limit" if model.timeout else "done",
        peak_rss_mb=harness.peak_rss_mb(),
        rss_before_fit_mb=base_rss,
        config=config,
        version=harness.dist_version("treefarms"),
        first_metric=metrics[0] if metrics else None,
    )
    harness.emit(row)
    t0 = time.perf_counter()
    n = min(count, cap)
    raw = [model.model_set.get_tree_at_idx_raw(i) for i in range(n)]
    codes = [treefarms_code(t) for t in raw]
    # decode check: the objective of our reading equals TreeFARMS' own (float32) value. Not
    # its (loss, leaves): a stored group shares one objective but may mix them (planted d4
    # lam 0.01: a tree of 76 errors and 7 leaves listed with "79, 6", both 97/300)
    bad = 0
    for i in _sample_indices(n, 200):
        objective = float(model.model_set.get_tree_metric_at_idx_raw(i)[0])
        errors = int(np.count_nonzero(predict_code(codes[i], X) != y))
        mine = errors / len(y) + lam * sum(v < 0 for v in codes[i])
        bad += abs(mine - objective) > 1e-6 * max(1.0, abs(objective))
    np.save(out, pad_codes(codes))
    harness.emit(
        {
            "kind": "trees",
            "extracted": n,
            "extract_seconds": time.perf_counter() - t0,
            "decode_mismatches": int(bad),
            "metric_range": _metric_range(model, count),
        }
    )
    return {"kind": "done"}


def _metric_range(model: Any, count: int) -> list[float] | None:
    """TreeFARMS' own objectives of its first and last stored metric groups (min, max)."""
    values = model.model_set.available_metrics.get("metric_values") or []
    objs = [float(v[0]) for v in values]
    return [min(objs), max(objs)] if objs and count else None


# -------------------------------------------------------------------------- child: PRAXIS
def praxis_child(
    npz: str,
    lam: float,
    depth: int,
    eps: float,
    limit: float,
    reps: int,
    cap: int,
    out: str,
    memory_mb: float,
) -> dict[str, Any]:
    """Child side in PRAXIS' interpreter (``limit`` unused: PRAXIS has none, the parent kills
    the child at its timeout)."""
    from praxis import PRAXIS

    limit_memory(memory_mb)
    data = np.load(npz)
    X = np.ascontiguousarray(data["X"], dtype=np.uint8)
    y = data["y"].astype(np.int64)
    base_rss = harness.peak_rss_mb()
    log = tempfile.mktemp(suffix=".log")
    model: Any = None

    def once() -> dict[str, Any]:
        nonlocal model
        model = PRAXIS()
        with stdout_to(log):
            t0 = time.perf_counter()
            model.fit(X, y, lambda_reg=lam, depth_budget=depth, rashomon_mult=eps)
            count = model.count_trees()
            elapsed = time.perf_counter() - t0
        return {"time": elapsed, "count": int(count)}

    row = _repeat(once, reps)
    said = Path(log).read_text(errors="replace").splitlines()
    row.update(
        kind="fit",
        available=True,
        status="done",
        peak_rss_mb=harness.peak_rss_mb(),
        rss_before_fit_mb=base_rss,
        version=harness.dist_version("tree-praxis"),
        gamma=int(round(lam * len(y))),  # llround(lam * n): its per-leaf cost in errors
        min_objective=int(model.get_min_objective()),
        reference=_said(said, "Best objective:"),
        own_bound=_said(said, "Objective bound"),
    )
    harness.emit(row)
    t0 = time.perf_counter()
    n = min(row["count"], cap)
    codes = []
    for i in range(n):
        paths, labels = model.get_tree_paths(i)
        codes.append(praxis_code(paths, labels))
    bad = 0
    for i in _sample_indices(n, 200):
        theirs = np.asarray(model.get_predictions(i, X)).ravel()
        bad += not np.array_equal(predict_code(codes[i], X), theirs)
    np.save(out, pad_codes(codes))
    harness.emit(
        {
            "kind": "trees",
            "extracted": n,
            "extract_seconds": time.perf_counter() - t0,
            "decode_mismatches": int(bad),
        }
    )
    return {"kind": "done"}


def _said(lines: list[str], prefix: str) -> int | None:
    """The first integer after ``prefix`` in PRAXIS' printed lines (e.g. ``Objective bound: 68``
    or ``Objective bound (user-set): 68``)."""
    for line in lines:
        if line.startswith(prefix):
            tail = line[len(prefix) :].split(":")[-1].split()
            with contextlib.suppress(ValueError, IndexError):
                return int(tail[0])
    return None


# --------------------------------------------------------------------------- child: odtkit
def measure_ours(
    dataset: Any,
    *,
    lam: float,
    depth: int,
    eps: float,
    leaves: str,
    limit: float,
    reps: int,
    cap: int = MATERIALISE_CAP,
    build: Any = None,
) -> tuple[dict[str, Any], Any]:
    """Time ``build_rashomon`` + ``count()`` and, up to ``cap`` trees, reading every tree's
    codes; returns the row and the last core (``build`` replaces ``build_rashomon``: tests)."""
    if build is None:
        from odtkit.core.rashomon import RashomonProblem, build_rashomon

        def build(dataset: Any, *, time_limit: float, **problem: Any) -> Any:
            return build_rashomon(RashomonProblem(dataset, **problem), time_limit=time_limit)

    core: Any = None

    def once() -> dict[str, Any]:
        nonlocal core
        t0 = time.perf_counter()
        core = build(
            dataset, lam=lam, max_depth=depth, epsilon=eps, leaves=leaves, time_limit=limit
        )
        count = int(core.count())
        t_count = time.perf_counter() - t0
        t_mat = None
        if core.complete and count <= cap:
            for start in range(0, count, BATCH):
                core.codes(start, min(count, start + BATCH))
            t_mat = time.perf_counter() - t0
        return {
            "time": t_count,
            "materialise_time": t_mat,
            "count": count,
            "complete": bool(core.complete),
        }

    row = _repeat(once, reps)
    mats = [r for r in [row.get("materialise_time")] if r is not None]
    n = dataset.total_weight
    row.update(
        status=str(core.status),
        optimum=float(core.optimum),
        lower_bound=float(core.lower_bound),
        bound=float(core.bound),
        optimum_count_units=float(core.optimum) * n,
        bound_count_units=float(core.bound) * n,
        materialised=bool(mats),
        stats={k: v for k, v in dict(core.stats).items() if isinstance(v, int | float | str)},
    )
    return row, core


def ours_child(
    npz: str,
    lam: float,
    depth: int,
    eps: float,
    leaves: str,
    limit: float,
    reps: int,
    cap: int,
    compare_cap: int,
    peer_files: dict[str, list[Any]],
) -> dict[str, Any]:
    """Child side in odtkit's interpreter: measure, then compare with every peer's trees."""
    from odtkit import metrics
    from odtkit.datasets import Dataset

    data = np.load(npz)
    d = Dataset.from_arrays(data["X"].astype(bool), data["y"])
    base_rss = harness.peak_rss_mb()
    try:
        from odtkit.core.rashomon import build_rashomon  # noqa: F401
    except ImportError as exc:
        return {"available": False, "reason": f"odtkit.core.rashomon: {exc}"[:200]}
    row, core = measure_ours(
        d, lam=lam, depth=depth, eps=eps, leaves=leaves, limit=limit, reps=reps, cap=cap
    )
    row.update(available=True, peak_rss_mb=harness.peak_rss_mb(), rss_before_fit_mb=base_rss)
    # independent check of the certified optimum: re-score the tree the core says achieves it
    opt = metrics.objective(core.optimal_tree, d, lam=lam)
    row["optimal_tree_rescored"] = opt
    row["optimal_tree_ok"] = abs(opt - row["optimum"]) <= TOLERANCE
    if peer_files:
        ours_codes = None
        if row["complete"] and row["count"] <= compare_cap:
            ours_codes = core.codes(0, row["count"]) if row["count"] else np.zeros((0, 1))
        row["compare"] = {
            peer: classify(
                d,
                lam=lam,
                max_depth=depth,
                leaves=leaves,
                bound=row["bound"],
                ours_count=row["count"],
                ours_codes=ours_codes,
                peer_codes=np.load(path),
                peer_count=count,
            )
            for peer, (path, count) in peer_files.items()
        }
    return row


# ------------------------------------------------------------------------ classification
def outside_space(tree: Any, dataset: Any, max_depth: int | None, leaves: str) -> str | None:
    """Why ``tree`` is not in the tree space of the set (None when it is): deeper than
    ``max_depth``, a split with an empty side (weight <= 1e-12 W), a label out of range, or
    (``leaves="majority"``) a leaf predicting a class of less than maximal weight."""
    X = np.asarray(dataset.X, dtype=bool)
    y = np.asarray(dataset.y)
    w = np.asarray(dataset.weights, dtype=np.float64)
    K = int(dataset.n_classes)
    empty = 1e-12 * float(w.sum())
    if max_depth is not None and tree.depth > max_depth:
        return "deeper than max_depth"

    def walk(node: Any, rows: np.ndarray) -> str | None:
        if node.is_leaf:
            if not 0 <= int(node.label) < K:
                return "label out of range"
            if leaves == "majority":
                weight = np.bincount(y[rows], weights=w[rows], minlength=K)
                if weight[int(node.label)] < weight.max() - TOLERANCE * max(weight.max(), 1.0):
                    return "non-majority leaf"
            return None
        right = rows[X[rows, node.feature]]
        left = rows[~X[rows, node.feature]]
        if w[left].sum() <= empty or w[right].sum() <= empty:
            return "split with an empty side"
        return walk(node.left, left) or walk(node.right, right)

    return walk(tree, np.arange(X.shape[0]))


def leaf_traits(tree: Any, dataset: Any) -> set[str]:
    """Traits of a tree a peer may leave out by design: two sibling leaves with the same label
    (``"same-label siblings"``), a leaf whose majority is tied (``"tied leaf"``), a leaf
    predicting a minority class (``"non-majority leaf"``)."""
    X = np.asarray(dataset.X, dtype=bool)
    y = np.asarray(dataset.y)
    w = np.asarray(dataset.weights, dtype=np.float64)
    K = int(dataset.n_classes)
    traits: set[str] = set()

    def walk(node: Any, rows: np.ndarray) -> None:
        if node.is_leaf:
            weight = np.bincount(y[rows], weights=w[rows], minlength=K)
            top = weight.max()
            if weight[int(node.label)] < top - TOLERANCE * max(top, 1.0):
                traits.add("non-majority leaf")
            if np.count_nonzero(weight >= top - TOLERANCE * max(top, 1.0)) > 1:
                traits.add("tied leaf")
            return
        if node.left.is_leaf and node.right.is_leaf and node.left.label == node.right.label:
            traits.add("same-label siblings")
        col = X[rows, node.feature]
        walk(node.left, rows[~col])
        walk(node.right, rows[col])

    walk(tree, np.arange(X.shape[0]))
    return traits


def classify(
    dataset: Any,
    *,
    lam: float,
    max_depth: int | None,
    leaves: str,
    bound: float,
    ours_count: int,
    ours_codes: np.ndarray | None,
    peer_codes: np.ndarray,
    peer_count: int | None = None,
    examples: int = 3,
    detail_cap: int = 20_000,
) -> dict[str, Any]:
    """Compare a peer's trees with our set, every placed tree re-scored by
    ``metrics.objective``.

    With ``ours_codes`` (our whole set) the comparison is as sets: ``common``, ``peer_only``
    (split into ``peer_above_bound``, ``peer_outside_space`` and ``missing_from_ours``: within
    the bound and in the space, so our bug) and ``missing_from_peer`` (ours only; each
    re-scored: ``ours_above_bound`` is our bug; ``missing_traits`` counts the traits of
    :func:`leaf_traits` over at most ``detail_cap`` of them). Without it (our set too large to
    list), every peer tree is re-scored instead and ``missing_from_peer`` is
    ``ours_count - peer_valid`` (negative would be our bug: ``missing_from_ours``). When the
    peer's set has more trees (``peer_count``) than ``peer_codes`` holds (its extraction was
    capped), ``partial`` is set and ``missing_from_peer`` is None: only the trees held are
    placed.
    """
    from odtkit import metrics
    from odtkit.core._problem import decode_tree

    n = float(dataset.total_weight)
    peer_keys = code_keys(peer_codes)
    distinct = set(peer_keys)
    out: dict[str, Any] = {
        "peer_trees": len(peer_keys),
        "peer_duplicates": len(peer_keys) - len(distinct),
        "ours": ours_count,
        "bound_count_units": bound * n,
        "as_sets": ours_codes is not None,
        "partial": peer_count is not None and peer_count > len(peer_keys),
    }

    def score(key: tuple[int, ...]) -> tuple[Any, float]:
        tree = decode_tree(list(key))
        return tree, metrics.objective(tree, dataset, lam=lam)

    def place(keys: list[tuple[int, ...]]) -> dict[str, Any]:
        above, outside, valid = [], [], []
        reasons: dict[str, int] = {}
        top = -math.inf
        for key in keys:
            tree, r = score(key)
            why = outside_space(tree, dataset, max_depth, leaves)
            if why is not None:
                outside.append(key)
                reasons[why] = reasons.get(why, 0) + 1
            elif r > bound + TOLERANCE:
                above.append(key)
                top = max(top, r)
            else:
                valid.append(key)
        return {
            "above": above,
            "outside": outside,
            "valid": valid,
            "reasons": reasons,
            "max_objective_count_units": top * n if above else None,
        }

    if ours_codes is not None:
        ours = set(code_keys(ours_codes))
        common = distinct & ours
        placed = place(sorted(distinct - ours))
        only_ours = sorted(ours - distinct)
        traits: dict[str, int] = {}
        ours_above = []
        for key in only_ours[:detail_cap]:
            tree, r = score(key)
            if r > bound + TOLERANCE:
                ours_above.append(key)
            for t in leaf_traits(tree, dataset) or {"none of these"}:
                traits[t] = traits.get(t, 0) + 1
        # every common tree is one of ours: re-score a sample against the bound too
        for key in sorted(common)[:: max(1, len(common) // 500)]:
            if score(key)[1] > bound + TOLERANCE:
                ours_above.append(key)
        out.update(
            common=len(common),
            peer_only=len(distinct) - len(common),
            missing_from_peer=len(only_ours),
            missing_traits=traits,
            missing_traits_of=min(len(only_ours), detail_cap),
            ours_above_bound=len(ours_above),
            examples_missing_from_peer=[list(k) for k in only_ours[:examples]],
            examples_ours_above_bound=[list(k) for k in ours_above[:examples]],
        )
    else:
        placed = place(sorted(distinct))
        out.update(
            common=None,
            peer_only=None,
            missing_from_peer=ours_count - len(placed["valid"]),
            ours_above_bound=None,
        )
    valid = len(placed["valid"])
    out.update(
        peer_above_bound=len(placed["above"]),
        peer_above_max_count_units=placed["max_objective_count_units"],
        peer_outside_space=len(placed["outside"]),
        outside_reasons=placed["reasons"],
        examples_peer_above_bound=[list(k) for k in placed["above"][:examples]],
    )
    if ours_codes is not None:
        out["missing_from_ours"] = valid
        out["examples_missing_from_ours"] = [list(k) for k in placed["valid"][:examples]]
    else:
        out["peer_valid"] = valid
        out["missing_from_ours"] = max(0, valid - ours_count)
    if out["partial"]:
        out["missing_from_peer"] = None
        out["missing_traits"], out["missing_traits_of"] = {}, 0
    out["our_bug"] = bool(out["missing_from_ours"] or out.get("ours_above_bound"))
    return out


# ---------------------------------------------------------------------------------- parent
def peer_python(peer: str) -> str | None:
    return os.environ.get(PEERS[peer][0]) or None


def run_peer(
    peer: str, npz: Path, setting: dict[str, Any], args: argparse.Namespace, folder: Path
) -> dict[str, Any]:
    """One peer fit in its own interpreter; its trees saved next to ``npz`` (or, with
    ``--peer-cache DIR``, kept in DIR and reused by a later run with the same settings)."""
    python = peer_python(peer)
    if python is None:
        return {"available": False, "reason": f"not installed (set {PEERS[peer][0]})"}
    stem = f"{peer}-{npz.stem}-{_key(setting)}-t{args.time_limit:g}-r{args.reps}"
    if args.peer_cache is not None:
        cached = args.peer_cache / f"{stem}.json"
        if cached.exists():
            return {**json.loads(cached.read_text()), "cached": True}
        row = _run_peer(peer, python, npz, setting, args, args.peer_cache / f"{stem}.npy")
        if row.get("status") != "failed":
            cached.write_text(json.dumps(row))
        return row
    return _run_peer(peer, python, npz, setting, args, folder / f"{stem}.npy")


def _run_peer(
    peer: str,
    python: str,
    npz: Path,
    setting: dict[str, Any],
    args: argparse.Namespace,
    out: Path,
) -> dict[str, Any]:
    cmd = [
        python,
        str(Path(harness.__file__).resolve()),
        f"{NAME}:{peer}_child",
        json.dumps(
            [
                str(npz),
                setting["lam"],
                setting["depth"],
                setting["eps"],
                args.time_limit,
                args.reps,
                args.compare_cap,
                str(out),
                args.peer_memory_mb,
            ]
        ),
    ]
    timeout = args.time_limit * (1 + args.reps) + 60
    child = harness.run_child(cmd, timeout=timeout)
    fit = next((r for r in child.rows if r.get("kind") == "fit"), None)
    trees = next((r for r in child.rows if r.get("kind") == "trees"), None)
    if fit is None:
        if child.timed_out:
            return {"available": True, "status": "timeout", "time": math.nan}
        reason = child.reason()
        memory = "MemoryError" in child.stderr or "bad_alloc" in child.stderr
        return {
            "available": True,
            "status": "memory" if memory else "failed",
            "reason": f"exit {child.returncode}: {reason[:200]}",
            "time": math.nan,
        }
    row = {k: v for k, v in fit.items() if k != "kind"}
    if trees is not None and out.exists():
        row.update({k: v for k, v in trees.items() if k != "kind"}, codes_file=str(out))
    else:
        row["extract_failed"] = "timeout" if child.timed_out else child.reason()[:200]
    return row


def run_ours(
    npz: Path,
    setting: dict[str, Any],
    leaves: str,
    peer_files: dict[str, list[Any]],
    args: argparse.Namespace,
) -> dict[str, Any]:
    try:
        return harness.call_in_child(
            f"{NAME}:ours_child",
            str(npz),
            setting["lam"],
            setting["depth"],
            setting["eps"],
            leaves,
            args.time_limit,
            args.reps,
            args.materialise_cap,
            args.compare_cap,
            peer_files,
            timeout=args.time_limit * (1 + args.reps) + 600,
        )
    except harness.ChildError as exc:
        status = "timeout" if exc.child.timed_out else "failed"
        return {"available": True, "status": status, "error": str(exc)[-300:], "time": math.nan}


def _key(s: dict[str, Any]) -> str:
    return f"d{s['depth']}-l{s['lam']:.6g}-e{s['eps']:g}"


def wait_for_quiet(max_wait: float) -> list[float]:
    """Wait (at most ``max_wait`` s) while the 1-minute load is above the core count; returns
    the load averages when the run starts (recorded with the row)."""
    cpus = os.cpu_count() or 1
    end = time.monotonic() + max_wait
    while os.getloadavg()[0] > cpus and time.monotonic() < end:
        time.sleep(2.0)
    return [round(v, 2) for v in os.getloadavg()]


def harder_than_failed(s: dict[str, Any], failed: list[dict[str, Any]]) -> bool:
    """Another setting of the same dataset that is no harder (depth <=, lam >=, eps <=) timed
    out or ran out of memory: this one is skipped for that tool."""
    return any(
        f["dataset"] == s["dataset"]
        and f["depth"] <= s["depth"]
        and f["lam"] >= s["lam"] - 1e-15
        and f["eps"] <= s["eps"]
        for f in failed
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="monk1-3 + planted, depth 4")
    parser.add_argument("--datasets", default=None)
    parser.add_argument("--depths", default=None)
    parser.add_argument("--lams", default=None)
    parser.add_argument("--epsilons", default=None)
    parser.add_argument("--time-limit", type=float, default=None, help="seconds (default 120)")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 3)")
    parser.add_argument("--tools", default="ours,praxis,treefarms")
    parser.add_argument("--materialise-cap", type=int, default=MATERIALISE_CAP)
    parser.add_argument("--compare-cap", type=int, default=COMPARE_CAP)
    parser.add_argument("--peer-memory-mb", type=float, default=PEER_MEMORY_MB)
    parser.add_argument("--max-wait", type=float, default=5.0, help="wait for load (s)")
    parser.add_argument("--budget-minutes", type=float, default=None, help="stop starting rows")
    parser.add_argument(
        "--peer-cache",
        type=Path,
        default=None,
        help="keep the peers' rows and trees here and reuse them (peers measured once)",
    )
    parser.add_argument("--report-only", action="store_true", help="rebuild the .md only")
    parser.add_argument("--name", default=NAME)
    harness.add_out_dir(parser)
    args = parser.parse_args(argv)
    if args.peer_cache is not None:
        args.peer_cache.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        harness.rewrite_report(args.name, args.out_dir, render)
        return
    quick = QUICK if args.quick else {}
    if args.time_limit is None:
        args.time_limit = quick.get("time_limit", TIME_LIMIT)
    if args.reps is None:
        args.reps = quick.get("reps", 3)
    names = _split(args.datasets, str) or list(quick.get("datasets", DATASETS))
    depths = _split(args.depths, int) or list(quick.get("depths", DEPTHS))
    lams = _split(args.lams, _number) or list(quick.get("lams", LAMS))
    epsilons = _split(args.epsilons, float) or list(quick.get("epsilons", EPSILONS))
    tools = _split(args.tools, str)
    started = time.monotonic()
    payload: dict[str, Any] = {
        "started": harness.timestamp(),
        "machine": harness.machine_info(),
        "command": "PYTHONPATH=src python benchmarks/rashomon.py " + " ".join(sys.argv[1:]),
        "time_limit": args.time_limit,
        "reps": args.reps,
        "caps": {"materialise": args.materialise_cap, "compare": args.compare_cap},
        "peers": {p: peer_python(p) for p in PEERS if p in tools},
        "peer_cache": str(args.peer_cache) if args.peer_cache else None,
        "datasets": {},
        "rows": [],
        "skipped": [],
    }
    failed: dict[str, list[dict[str, Any]]] = {t: [] for t in tools}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files: dict[str, Path] = {}
        for name in names:
            npz = write_npz(name, folder)
            if npz is None:
                payload["skipped"].append(f"{name}: data not found")
                continue
            files[name] = npz
            with np.load(npz) as data:
                payload["datasets"][name] = {
                    "n": int(data["X"].shape[0]),
                    "features": int(data["X"].shape[1]),
                    "classes": int(data["y"].max()) + 1,
                }
        # depth first, then the datasets: a time budget cut leaves every dataset measured at
        # the shallower depths rather than the first datasets at every depth
        for depth in depths:
            for name, npz in files.items():
                for lam in sorted(lams, reverse=True):
                    for eps in sorted(epsilons):
                        s = {"dataset": name, "depth": depth, "lam": lam, "eps": eps}
                        if args.budget_minutes and (
                            time.monotonic() - started > 60 * args.budget_minutes
                        ):
                            payload["skipped"].append(f"{_label(s)}: time budget used up")
                            continue
                        row = run_setting(npz, s, tools, failed, args, folder)
                        payload["rows"].append(row)
                        print(_progress(row), flush=True)
                        payload["finished"] = harness.timestamp()
                        payload["load_average_end"] = list(os.getloadavg())
                        harness.write_results(
                            args.name, payload, render(payload), out_dir=args.out_dir
                        )
    harness.write_results(args.name, payload, render(payload), out_dir=args.out_dir)
    print(f"wrote {args.out_dir / args.name}.json and .md")


def run_setting(
    npz: Path,
    s: dict[str, Any],
    tools: list[str],
    failed: dict[str, list[dict[str, Any]]],
    args: argparse.Namespace,
    folder: Path,
) -> dict[str, Any]:
    row: dict[str, Any] = dict(s)
    row["load_at_start"] = wait_for_quiet(args.max_wait)
    files: dict[str, dict[str, list[Any]]] = {"any": {}, "majority": {}}
    for peer in (p for p in PEERS if p in tools):
        if harder_than_failed(s, failed[peer]):
            row[peer] = {"available": True, "status": "skipped (an easier setting failed)"}
            continue
        r = run_peer(peer, npz, s, args, folder)
        row[peer] = r
        if r.get("status") in ("timeout", "memory", "time_limit"):
            failed[peer].append(s)
        if "codes_file" in r:
            files[PEERS[peer][1]][peer] = [r["codes_file"], r["count"]]
    if "ours" in tools:
        for leaves in ("any", "majority"):
            key = f"ours_{leaves}"
            if harder_than_failed(s, failed.setdefault(key, [])):
                row[key] = {"available": True, "status": "skipped (an easier setting failed)"}
                continue
            r = run_ours(npz, s, leaves, files[leaves], args)
            row[key] = r
            if r.get("status") in ("timeout", "time_limit", "memory_limit"):
                failed[key].append(s)
    for f in folder.glob(f"*-{npz.stem}-{_key(s)}-*.npy"):
        f.unlink()
    return row


def _split(text: str | None, kind: Any) -> list[Any]:
    return [kind(v) for v in text.split(",") if v] if text else []


def _number(text: str) -> float:
    """A float, or a fraction such as ``2/169``."""
    num, _, den = text.partition("/")
    return float(num) / float(den) if den else float(num)


def _label(s: dict[str, Any]) -> str:
    return f"{s['dataset']} d{s['depth']} lam={_lam(s['lam'])} eps={s['eps']:g}"


def _lam(lam: float) -> str:
    return "2/169" if abs(lam - 2 / 169) < 1e-12 else f"{lam:g}"


def _progress(row: dict[str, Any]) -> str:
    parts = [_label(row)]
    for tool in ("ours_any", "praxis", "ours_majority", "treefarms"):
        r = row.get(tool)
        if not r:
            continue
        if not r.get("available", True):
            parts.append(f"{tool}: n/a")
        elif "count" in r:
            parts.append(f"{tool}: {r['count']} trees {r['time']:.3g} s")
        else:
            parts.append(f"{tool}: {r.get('status')}")
        for peer, c in (r.get("compare") or {}).items():
            if c.get("our_bug"):
                parts.append(f"*** OUR BUG vs {peer}: {c['missing_from_ours']} missing ***")
    return "; ".join(parts)


# ---------------------------------------------------------------------------------- report
def _ok(r: dict[str, Any] | None) -> bool:
    return bool(r) and r.get("available", True) and "count" in r


def _time(r: dict[str, Any] | None, key: str = "time") -> str:
    if not r:
        return "–"
    if not r.get("available", True):
        return "not installed"
    if "count" not in r:
        return str(r.get("status", "failed"))
    return harness.fmt(r.get(key))


def _diff(ours: dict[str, Any] | None, peer: str) -> str:
    """One cell: how the peer's set differs from ours."""
    if not _ok(ours) or not ours.get("compare") or peer not in ours["compare"]:
        return "–"
    c = ours["compare"][peer]
    bits = []
    if c.get("our_bug"):
        bits.append(f"**OURS MISSES {c['missing_from_ours']}**")
    if c.get("peer_above_bound"):
        bits.append(f"{c['peer_above_bound']} above bound")
    if c.get("peer_outside_space"):
        bits.append(f"{c['peer_outside_space']} outside space")
    if c.get("missing_from_peer"):
        bits.append(f"{c['missing_from_peer']} missing")
    if c.get("peer_duplicates"):
        bits.append(f"{c['peer_duplicates']} duplicates")
    if c.get("partial"):
        bits.append(f"only its first {c['peer_trees']:,} trees compared")
    return ", ".join(bits) or "same set"


def pairs(payload: dict[str, Any], peer: str) -> list[dict[str, Any]]:
    """Settings where both ours (the matching leaves rule) and ``peer`` finished."""
    ours_key = f"ours_{PEERS[peer][1]}"
    out = []
    for row in payload["rows"]:
        o, p = row.get(ours_key), row.get(peer)
        if _ok(o) and _ok(p) and o.get("complete") and p.get("time", 0) > 0:
            out.append({"row": row, "ours": o, "peer": p})
    return out


def render(payload: dict[str, Any]) -> str:
    machine = payload["machine"]
    rows = payload["rows"]
    loads = [r["load_at_start"][0] for r in rows if r.get("load_at_start")]
    versions = {
        peer: sorted({str(r[peer].get("version")) for r in rows if _ok(r.get(peer))})
        for peer in PEERS
    }
    lines = [
        "# The Rashomon set: odtkit against TreeFARMS and PRAXIS (issue 24)",
        "",
        f"Run {payload['started']} to {payload.get('finished', '?')}; {machine['cpus']} cpus "
        f"({machine['processor'] or machine['machine']}), Python {machine['python']}; "
        f"1-minute load at the start of the settings {_range(loads)} (a shared machine: other "
        "jobs ran too; a setting waited up to 5 s for the load to drop below the core "
        f"count). Reproduce: `{payload.get('command', '')}` with ODTKIT_TREEFARMS_PYTHON and "
        "ODTKIT_PRAXIS_PYTHON set to the peers' interpreters.",
        f"Time limit {payload['time_limit']:g} s per run; up to {payload['reps']} repetitions "
        "(median; a run above 5 s is not repeated). TreeFARMS "
        f"{', '.join(versions['treefarms']) or '–'} "
        "(`depth_budget = d + 1`, `rashomon_ignore_trivial_extensions=False`), PRAXIS "
        f"{', '.join(versions['praxis']) or '–'} (`depth_budget = d`, defaults otherwise).",
        "Each tool in its own child process; *RSS* = its peak resident set (whole process, the "
        "interpreter and imports included). Ours: *count* = `build_rashomon` + `count()`; "
        "*list* = that + reading every tree's codes. PRAXIS' time is its fit (its count is "
        "free after it); TreeFARMS' time is its fit (it builds its whole set there).",
        'PRAXIS is compared with our `leaves="any"` set (its leaves predict any class), '
        'TreeFARMS with our `leaves="majority"` set (its leaves predict a majority class). '
        "*Difference*: every tree in one set and not the other re-scored by "
        "`odtkit.metrics.objective`: *above bound* = the peer's tree breaks R <= (1+eps) OPT; "
        "*missing* = trees of the exact set the peer lacks; **OURS MISSES** = a peer tree "
        "within the bound and in the space that our set lacks (our bug).",
        "",
        "## Datasets",
        "",
        *harness.md_table(
            ["dataset", "rows", "binary features", "classes"],
            [[k, v["n"], v["features"], v["classes"]] for k, v in payload["datasets"].items()],
        ),
        "",
        "## Side by side",
        "",
    ]
    table = []
    for r in rows:
        oa, om = r.get("ours_any"), r.get("ours_majority")
        px, tf = r.get("praxis"), r.get("treefarms")
        table.append(
            [
                r["dataset"],
                r["depth"],
                _lam(r["lam"]),
                f"{r['eps']:g}",
                _count(oa),
                _time(oa),
                _time(oa, "materialise_time"),
                harness.fmt((oa or {}).get("peak_rss_mb"), 4),
                _count(px),
                _time(px),
                harness.fmt((px or {}).get("peak_rss_mb"), 4),
                _diff(oa, "praxis"),
                _count(om),
                _time(om, "materialise_time"),
                _count(tf),
                _time(tf),
                harness.fmt((tf or {}).get("peak_rss_mb"), 4),
                _diff(om, "treefarms"),
            ]
        )
    lines += harness.md_table(
        [
            "dataset",
            "d",
            "lam",
            "eps",
            "ours (any)",
            "count s",
            "list s",
            "RSS MB",
            "PRAXIS",
            "fit s",
            "RSS MB",
            "PRAXIS vs ours",
            "ours (majority)",
            "list s",
            "TreeFARMS",
            "fit s",
            "RSS MB",
            "TreeFARMS vs ours",
        ],
        table,
    )
    lines += ["", *summary_lines(payload)]
    cached = sum(1 for r in rows for p in PEERS if (r.get(p) or {}).get("cached"))
    if cached:
        lines += [
            "",
            f"{cached} peer rows come from an earlier pass with the same settings "
            "(`--peer-cache`): the peers were measured once, ours in this pass.",
        ]
    if payload.get("skipped"):
        lines += ["", "Not run: " + "; ".join(payload["skipped"]) + "."]
    return "\n".join(lines) + "\n"


def _or_dash(v: Any) -> Any:
    return "–" if v is None else v


def _count(r: dict[str, Any] | None) -> str:
    if not _ok(r):
        return "–"
    c = f"{r['count']:,}"
    return c if r.get("complete", True) else f"{c} (partial)"


def _range(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}" if values else "–"


def _ratio_lines(title: str, ps: list[dict[str, Any]], ours_key: str, target: str) -> list[str]:
    ratios = [
        p["ours"][ours_key] / p["peer"]["time"] if p["ours"].get(ours_key) else math.nan for p in ps
    ]
    s = harness.ratio_summary(ratios, peer_times=[p["peer"]["time"] for p in ps])
    low = [r for r, p in zip(ratios, ps, strict=True) if p["peer"]["time"] < harness.PEER_FLOOR]
    return [
        f"* {title}: {harness.fmt(s.geomean_floor)} over {s.n_floor} settings where the peer "
        f"needs >= {harness.PEER_FLOOR * 1000:.0f} ms; {harness.fmt(harness.geomean(low))} over "
        f"{len(low)} below (start-up and timer noise); all {harness.fmt(s.geomean)} over "
        f"{s.n}, worst {harness.fmt(s.worst)} (target {target})."
    ]


def summary_lines(payload: dict[str, Any]) -> list[str]:
    px, tf = pairs(payload, "praxis"), pairs(payload, "treefarms")
    lines = ["Time ratios ours/peer (geometric means; < 1 means ours is faster):", ""]
    if px:
        lines += _ratio_lines("count / PRAXIS fit", px, "time", "<= 1")
        lines += _ratio_lines("list / PRAXIS fit", px, "materialise_time", "<= 2")
    if tf:
        lines += _ratio_lines("list (majority) / TreeFARMS fit", tf, "materialise_time", "<= 0.1")
    if not px and not tf:
        lines += ["* no setting has both ours and a peer yet."]
    lines += ["", "Memory (peak RSS, whole process):", ""]
    for name, ps in (("PRAXIS", px), ("TreeFARMS", tf)):
        if ps:
            wins = sum(p["ours"]["peak_rss_mb"] <= p["peer"]["peak_rss_mb"] for p in ps)
            ratio = harness.geomean(p["ours"]["peak_rss_mb"] / p["peer"]["peak_rss_mb"] for p in ps)
            lines.append(
                f"* ours <= {name} in {wins} of {len(ps)} settings; ours/{name} "
                f"{harness.fmt(ratio)} (geometric mean)."
            )
    lines += ["", "Set differences (each tree re-scored by `metrics.objective`):", ""]
    bugs = []
    for peer, ps, label in (("praxis", px, "PRAXIS"), ("treefarms", tf, "TreeFARMS")):
        comps = [p["ours"]["compare"][peer] for p in ps if peer in p["ours"].get("compare", {})]
        if not comps:
            continue
        same = sum(_diff_same(c) for c in comps)
        above = [c for c in comps if c["peer_above_bound"]]
        missing = [c for c in comps if c.get("missing_from_peer")]
        traits: dict[str, int] = {}
        for c in comps:
            if c.get("partial"):  # ours-only there may just lie beyond the peer's extraction
                continue
            for t, k in (c.get("missing_traits") or {}).items():
                traits[t] = traits.get(t, 0) + k
        lines.append(
            f"* {label}: the same set in {same} of {len(comps)} compared settings; trees above "
            f"the bound in {len(above)} ({sum(c['peer_above_bound'] for c in above):,} trees); "
            f"trees of the exact set missing in {len(missing)} "
            f"({sum(c['missing_from_peer'] for c in missing):,} trees"
            + (
                "; traits of those checked: "
                + ", ".join(f"{t} {k:,}" for t, k in sorted(traits.items()))
                if traits
                else ""
            )
            + ")."
        )
        bugs += [(label, p["row"], p["ours"]["compare"][peer]) for p in ps if _bug(p, peer)]
    rescore_bad = [
        r
        for r in payload["rows"]
        for k in ("ours_any", "ours_majority")
        if _ok(r.get(k)) and not r[k].get("optimal_tree_ok", True)
    ]
    if bugs or rescore_bad:
        lines += ["", "## **OUR BUGS**", ""]
        for label, row, c in bugs:
            lines.append(
                f"* {_label(row)} vs {label}: {c['missing_from_ours']} trees within the bound "
                f"missing from ours (e.g. {c.get('examples_missing_from_ours')}), "
                f"{c.get('ours_above_bound')} of ours above the bound "
                f"(e.g. {c.get('examples_ours_above_bound')})"
            )
        for r in rescore_bad:
            lines.append(f"* {_label(r)}: the optimal tree re-scores differently from `optimum`")
    elif any(pairs_ for pairs_ in (px, tf)):
        lines += ["", "No tree within the bound is missing from ours (0 differences of ours)."]
    lines += bound_lines(payload)
    return lines


def bound_lines(payload: dict[str, Any]) -> list[str]:
    """How each peer states its bound, next to the exact one (count units: objective * n)."""
    table = []
    for r in payload["rows"]:
        o, p = r.get("ours_any"), r.get("praxis")
        n = payload["datasets"][r["dataset"]]["n"]
        if _ok(o) and _ok(p):
            c = (o.get("compare") or {}).get("praxis", {})
            table.append(
                [
                    _label(r),
                    f"{r['lam'] * n:.3g} -> {p.get('gamma')}",
                    p.get("reference"),
                    p.get("own_bound"),
                    harness.fmt(o["optimum_count_units"], 5),
                    harness.fmt(o["bound_count_units"], 5),
                    c.get("peer_above_bound", "–"),
                    harness.fmt(c.get("peer_above_max_count_units"), 5),
                ]
            )
    lines = []
    if table:
        lines += [
            "",
            "## PRAXIS' bound (in misclassifications: objective x n)",
            "",
            "PRAXIS scores errors + gamma * leaves with gamma = round(lam * n) and keeps trees "
            "up to round(reference * (1 + eps)), the reference being its heuristic tree's "
            "score, not the certified optimum.",
            "",
        ]
        lines += harness.md_table(
            [
                "setting",
                "lam*n -> gamma",
                "its reference",
                "its bound",
                "exact OPT",
                "exact bound",
                "its trees above",
                "worst of them",
            ],
            table,
        )
    table = []
    for r in payload["rows"]:
        o, t = r.get("ours_majority"), r.get("treefarms")
        n = payload["datasets"][r["dataset"]]["n"]
        if _ok(o) and _ok(t) and t.get("metric_range"):
            c = (o.get("compare") or {}).get("treefarms", {})
            low, high = t["metric_range"]
            table.append(
                [
                    _label(r),
                    harness.fmt(low * n, 5),
                    harness.fmt(high * n, 5),
                    harness.fmt(o["optimum_count_units"], 5),
                    harness.fmt(o["bound_count_units"], 5),
                    c.get("peer_above_bound", "–"),
                    _or_dash(c.get("missing_from_peer")),
                ]
            )
    if table:
        lines += [
            "",
            "## TreeFARMS' objectives (x n) against the exact optimum and bound (majority leaves)",
            "",
        ]
        lines += harness.md_table(
            [
                "setting",
                "its best",
                "its worst",
                "exact OPT",
                "exact bound",
                "its trees above",
                "missing",
            ],
            table,
        )
    return lines


def _diff_same(c: dict[str, Any]) -> bool:
    return not (
        c["peer_above_bound"]
        or c["peer_outside_space"]
        or c.get("missing_from_peer")
        or c["missing_from_ours"]
    )


def _bug(p: dict[str, Any], peer: str) -> bool:
    return bool(p["ours"].get("compare", {}).get(peer, {}).get("our_bug"))


if __name__ == "__main__":
    main()

"""``search_numeric``: optimal trees over every threshold of a raw table, certified as such.

The native search (``_native.search_numeric``, ``core/native/numeric.cpp``) splits numeric
columns directly: a split is a column and a threshold between two consecutive distinct present
values, so its certificate holds over *every* threshold, not over a binarization chosen
beforehand. This module is its Python face (the contract is pinned in issue 23):

* the columns are analysed by an every-midpoint :class:`~odtkit.datasets.Binarizer` (the
  package's one meaning of "every threshold": thresholds, 0/1 columns, one-hot categories,
  constant and dropped columns, missing cells) and handed to the native code as float columns
  (:func:`native_columns`);
* the native answer (a pre-order tree code over numbered splits ``(column, rank, missing_le)``)
  is mapped back to that Binarizer's features (:func:`decode_answer`) and the tree returned
  over a copy of the Binarizer restricted to the thresholds it uses
  (``Result.binarizer``), so ``result.model.predict(result.binarizer.transform(X_new))``
  predicts raw rows;
* the objective is re-evaluated by :func:`odtkit.metrics.objective` on that binarization, as
  for every other search.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from odtkit import _native
from odtkit._limits import Deadline, charged
from odtkit._progress import Progress
from odtkit._validation import (
    check_depth,
    check_lambda,
    check_positive_number,
    check_sample_weight,
    encode_labels,
    scale_weights,
)
from odtkit.core._binary import (
    _warn_if_trivial,
    charge_elapsed,
    check_upper_bound,
    guarded_answer,
    search_dataset,
    verified_result,
)
from odtkit.core._problem import decode_tree, encode_tree, leaf_answer, search_config
from odtkit.datasets import Dataset
from odtkit.datasets._columns import (
    GUESS_ROUNDS,
    _as_frame,
    _numeric,
    _numeric_block,
    column_at,
)
from odtkit.render import FeatureSpec
from odtkit.results import Result
from odtkit.tree import Tree

if TYPE_CHECKING:
    from odtkit.datasets import Binarizer

__all__ = [
    "CERTIFICATE",
    "GUESS_SHARE",
    "STARTS",
    "NativeColumns",
    "decode_answer",
    "encode_start",
    "native_columns",
    "search_numeric",
    "split_feature",
]

#: Where the exact search starts: its own greedy tree (native), the guessed-threshold dp tree,
#: or ``"auto"``: its own start, and the guessed-threshold tree only when a limit stops it.
STARTS = ("greedy", "guess", "auto")
#: Share of ``time_limit`` that the guessed-threshold tree may spend (threshold guessing + the
#: dp): before the search (``start="guess"``) or kept back for after it (``start="auto"``).
GUESS_SHARE = 0.25
#: ``start="auto"`` asks the guessed-threshold tree only with this much time left: its
#: boosting is not interruptible and costs 0.05-1.7 s (issue 41), so with less it would
#: overrun the limit for a tree no better than the search's. A limit under
#: FALLBACK_MIN_SECONDS / GUESS_SHARE (4 s) goes to the search whole.
FALLBACK_MIN_SECONDS = 1.0
#: Statuses after which ``start="auto"`` asks the guessed-threshold tree: a limit stopped the
#: search with its incumbent (a Ctrl-C means stop now).
_LIMITS = ("time_limit", "node_limit", "memory_limit")
#: ``Result.stats["certificate"]`` of the exact search: its bound holds over every threshold.
CERTIFICATE = "all thresholds"

#: A native column's origin: (index in the Binarizer's columns, role, level). Role "values":
#: the raw numbers of a threshold, 0/1 or constant column; "level": the 0/1 indicator of one
#: category; "missing": a categorical column's 0/1 "is missing" indicator.
_Source = tuple[int, str, Any]


@dataclasses.dataclass(frozen=True, eq=False)
class NativeColumns:
    """The float columns the native search sees, and where each comes from.

    Attributes
    ----------
    values : ndarray of float64, shape (n, m), C-contiguous
        NaN marks a missing cell (only in "values" columns).
    sources : list of (int, str, object)
        Per native column: the Binarizer column it encodes, its role ("values", "level",
        "missing") and the category level (None unless "level").
    distinct : list of ndarray
        Per native column: its sorted distinct present values (``v_0 < ... < v_{D-1}``).
    has_nan : ndarray of bool
        Per native column: whether some cell is missing.
    """

    values: np.ndarray
    sources: list[_Source]
    distinct: list[np.ndarray]
    has_nan: np.ndarray

    @property
    def n_splits(self) -> int:
        """How many distinct native splits the columns admit (the every-midpoint features)."""
        sizes = np.array([d.size for d in self.distinct], dtype=np.int64)
        nan = self.has_nan.astype(np.int64)
        return int(np.sum(np.maximum(sizes - 1, 0) * (1 + nan) + nan))

    def index(self) -> dict[_Source, int]:
        """Native column number of each source."""
        return {source: c for c, source in enumerate(self.sources)}


def native_columns(binarizer: Binarizer, X: Any) -> NativeColumns:
    """The native columns of ``X`` for a Binarizer fitted on it with every midpoint.

    A threshold or 0/1 column passes its values (NaN where missing); a constant column with
    missing cells passes 0 where present and NaN where missing (only its "is missing" split
    exists); a one-hot column passes one 0/1 indicator per level (a missing cell is 0 in each)
    and, when it had missing cells, one 0/1 "is missing" indicator. Constant columns without
    missing cells and dropped columns pass nothing.
    """
    frame, from_frame = _as_frame(X, "X")
    frame = binarizer._align(frame, from_frame)
    n = frame.shape[0]
    spec = binarizer._spec
    numbers = [i for i, (_, kind, _, _) in enumerate(spec) if kind in ("threshold", "binary")]
    # one float block for the numeric columns (a column at a time through pandas: ~0.3 ms each);
    # all of them: the frame itself (a positional selection copies it, ~0.2 ms on 344 x 7)
    within = frame if len(numbers) == frame.shape[1] else frame.iloc[:, numbers]
    block = _numeric_block(within, [spec[i][0] for i in numbers])
    at_block = {i: j for j, i in enumerate(numbers)}
    columns: list[np.ndarray] = []
    sources: list[_Source] = []
    for i, (name, kind, params, missing) in enumerate(spec):
        if kind in ("threshold", "binary"):
            if block is not None:
                columns.append(block[:, at_block[i]])
            else:
                columns.append(_numeric(column_at(frame, i), name))
            sources.append((i, "values", None))
        elif kind == "constant" and missing:
            absent = column_at(frame, i).isna().to_numpy()
            columns.append(np.where(absent, np.nan, 0.0))
            sources.append((i, "values", None))
        elif kind == "onehot":
            column = column_at(frame, i)
            # as Binarizer.transform: a missing cell (or an unseen level) matches no level
            codes = pd.Index(params).get_indexer(column.to_numpy())
            indicators = (codes[:, None] == np.arange(len(params))[None, :]).astype(np.float64)
            columns.extend(indicators.T)
            sources.extend((i, "level", level) for level in params)
            if missing:
                columns.append(column.isna().to_numpy().astype(np.float64))
                sources.append((i, "missing", None))
    values = (
        np.ascontiguousarray(np.column_stack(columns), dtype=np.float64)
        if columns
        else np.zeros((n, 0))
    )
    absent = np.isnan(values)
    distinct = [np.unique(values[~absent[:, c], c]) for c in range(values.shape[1])]
    for c, (i, _, _) in enumerate(sources):
        name, kind, params = spec[i][:3]
        if kind == "threshold" and len(params) != distinct[c].size - 1:
            raise ValueError(
                f"the Binarizer must keep every midpoint of column {name!r} (fit it without "
                "max_thresholds or guess_thresholds)"
            )
    return NativeColumns(values, sources, distinct, absent.any(axis=0))


def split_feature(
    binarizer: Binarizer, columns: NativeColumns, split: tuple[int, int, int]
) -> tuple[FeatureSpec, bool]:
    """The Binarizer feature of native split ``(column, rank, missing_le)``, and whether its
    bit 1 is the split's "le" side (True for thresholds; else bit 1 is the "gt" side).

    Raises RuntimeError for a split the native contract does not allow (a bug).
    """
    c, k, missing_le = (int(v) for v in split)
    if not 0 <= c < len(columns.sources):
        raise RuntimeError(f"the exact search returned split column {c} of {len(columns.sources)}")
    i, role, level = columns.sources[c]
    name, kind, params, missing = binarizer._spec[i]
    last = columns.distinct[c].size - 1  # D - 1
    nan = bool(columns.has_nan[c])
    if missing_le not in (0, 1) or (missing_le and not (nan and k < last)):
        raise RuntimeError(f"the exact search returned missing_le={missing_le} for {split}")
    plain = False if missing else None  # FeatureSpec.missing of a "missing fails" feature
    if nan and k == last:
        return FeatureSpec(name, "missing"), False
    if role == "values" and kind == "threshold" and 0 <= k < last:
        return FeatureSpec(name, "threshold", float(params[k]), True if missing_le else plain), True
    if role == "values" and kind == "binary" and k == 0 and last == 1:
        # bit 1 is x == 1 (the gt side); a missing cell is 0 in "c", 1 in "c or missing"
        return FeatureSpec(name, "binary", missing=(not missing_le) if nan else None), False
    if role == "level" and k == 0 and last == 1:
        return FeatureSpec(name, "category", level, plain), False
    if role == "missing" and k == 0 and last == 1:
        return FeatureSpec(name, "missing"), False
    raise RuntimeError(
        f"the exact search returned split {split} (rank {k} of {last + 1} distinct values) on "
        f"column {name!r} ({kind}, {role})"
    )


def decode_answer(
    raw: _native.SearchOutput, binarizer: Binarizer, columns: NativeColumns
) -> tuple[Tree, Binarizer]:
    """The native answer's tree over ``binarizer`` restricted to the thresholds it uses, and
    that restricted Binarizer.

    A native split node's first child is its "le" side, its second the "gt" side; a Tree's
    left child takes the rows whose feature is 0, so a threshold node (bit 1 = le) swaps them.
    """
    splits = list(zip(raw.split_column, raw.split_rank, raw.split_missing_le, strict=True))
    shape = decode_tree(raw.tree)  # features are split numbers
    features: dict[int, tuple[FeatureSpec, bool]] = {}
    for j in shape.features_used():
        if j >= len(splits):
            raise RuntimeError(f"the exact search's tree uses split {j} of {len(splits)}")
        features[j] = split_feature(binarizer, columns, splits[j])
    used: dict[str, list[float]] = {}
    for feature, _ in features.values():
        if feature.kind == "threshold":
            used.setdefault(feature.source, []).append(feature.value)
    # a column's "is missing" feature stays only if the tree tests the column
    tested = {feature.source for feature, _ in features.values()}
    restricted = binarizer._restricted(used, tested=tested)
    position = {spec: f for f, spec in enumerate(restricted.get_feature_specs())}

    def build(node: Tree) -> Tree:
        if node.is_leaf:
            return node
        split, left, right = node.as_split()
        feature, le_is_one = features[split]
        le, gt = build(left), build(right)
        if le_is_one:
            return Tree.split(position[feature], gt, le)
        return Tree.split(position[feature], le, gt)

    return build(shape), restricted


def encode_start(
    tree: Tree, binarizer: Binarizer, columns: NativeColumns
) -> tuple[list[tuple[int, int, int]], list[int]]:
    """A tree over ``binarizer``'s features (any thresholds between present values, e.g.
    guessed ones; same columns as the Binarizer ``columns`` came from) as native splits
    ``(column, rank, missing_le)`` and the pre-order code over their numbers."""
    specs = binarizer.get_feature_specs()
    spec_index = {name: i for i, (name, *_) in enumerate(binarizer._spec)}
    index = columns.index()
    numbers: dict[tuple[int, int, int], int] = {}

    def split_of(feature: FeatureSpec) -> tuple[tuple[int, int, int], bool]:
        i = spec_index[feature.source]
        if feature.kind == "category":
            return (index[(i, "level", feature.value)], 0, 0), False
        if feature.kind == "missing":
            if (i, "missing", None) in index:
                return (index[(i, "missing", None)], 0, 0), False
            c = index[(i, "values", None)]
            return (c, columns.distinct[c].size - 1, 0), False
        c = index[(i, "values", None)]
        if feature.kind == "threshold":
            rank = int(np.searchsorted(columns.distinct[c], feature.value, side="right")) - 1
            return (c, rank, int(bool(feature.missing))), True
        # binary: the plain feature sends a missing cell to the x == 0 (le) side
        missing_le = int(not feature.missing) if columns.has_nan[c] else 0
        return (c, 0, missing_le), False

    code: list[int] = []

    def walk(node: Tree) -> None:
        if node.is_leaf:
            code.append(-(int(node.as_leaf()) + 1))
            return
        feature, left, right = node.as_split()
        split, le_is_one = split_of(specs[feature])
        code.append(numbers.setdefault(split, len(numbers)))
        le, gt = (right, left) if le_is_one else (left, right)
        walk(le)
        walk(gt)

    walk(tree)
    return list(numbers), code


def _guess_start(
    X: Any,
    codes: np.ndarray,
    n_classes: int,
    weights: np.ndarray | None,
    columns: NativeColumns,
    *,
    categorical: list[str] | None,
    lam: float,
    max_depth: int,
    budget: float | None,
    memory_limit_mb: Any,
) -> tuple[Result, list[tuple[int, int, int]], list[int]]:
    """The guessed-threshold dp tree (the start of ``start="guess"``, the fallback of
    ``start="auto"``) and its native splits and code.

    Threshold guessing and the dp share ``budget`` seconds (None: no limit).
    """
    from odtkit.datasets import Binarizer  # scikit-learn: only when a search reads raw columns

    deadline = Deadline(budget)
    with charged(deadline):
        guessed = Binarizer(categorical=categorical, guess_thresholds=GUESS_ROUNDS)
        guessed.fit(X, codes, sample_weight=weights)
    data = Dataset(
        guessed.transform(X),
        codes,
        np.arange(n_classes),
        tuple(guessed.get_feature_names_out()),
        sample_weight=weights,
    )
    result = search_dataset(
        data,
        lam=lam,
        max_depth=max_depth,
        method="dp",
        time_limit=deadline.limit_left(),
        memory_limit_mb=memory_limit_mb,
        progress=False,
    )
    splits, code = encode_start(result.model, guessed, columns)
    return result, splits, code


def search_numeric(
    X: Any,
    y: Any,
    *,
    lam: float,
    max_depth: int | None = 3,
    sample_weight: Any = None,
    categorical: list[str] | None = None,
    time_limit: float | None = None,
    node_limit: int | None = None,
    memory_limit_mb: float | None = None,
    upper_bound: float | None = None,
    start: str = "greedy",
    progress: bool | None = None,
) -> Result:
    """Find a tree minimising ``misclassified/n + lam * leaves`` over every threshold of the
    raw columns, and certify it.

    Unlike :func:`search_tree` on a binarized :class:`~odtkit.datasets.Dataset`, whose
    certificate holds over the thresholds the binarization kept, the bound here holds over
    every split of the raw table: numeric columns at any threshold between two distinct values
    (missing cells sent either way, or missing against present), 0/1 columns, one-hot
    categories and "is missing" — exactly the features of an every-midpoint
    :class:`~odtkit.datasets.Binarizer`, without building them.

    Parameters
    ----------
    X : DataFrame or 2-d array-like, shape (n_samples, n_columns)
        Numeric, 0/1, bool and categorical (object, string, category dtype, or named in
        ``categorical``) columns; missing cells (NaN, None, ``pd.NA``) allowed, infinities not.
    y : array-like of shape (n_samples,)
        Class labels (all numbers or all strings; multi-class allowed). Leaves predict codes
        into the sorted distinct labels (``np.unique(y)``).
    lam : float
        Penalty per leaf, ``>= 0``.
    max_depth : int, default=3
        Maximum number of splits on a root-to-leaf path; the search is depth-limited, so
        ``None`` is refused.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights with a positive sum.
    categorical : list of str, optional
        Numeric columns to treat as categorical (``Binarizer(categorical=)``).
    time_limit, node_limit, memory_limit_mb : optional
        As in :func:`search_tree`; at a limit (or on Ctrl-C) the best tree so far comes back
        with a bound valid over every threshold and status ``time_limit``, ``node_limit``,
        ``memory_limit`` or ``interrupted``. That tree is never worse than the start, the
        greedy tree, the depth-1 optimum (both taken before any limit is consulted) nor the
        optimum of any depth up to ``stats["certified_depth"]`` (the shallower optima are
        certified first: depth 2, and with ``lam > 0`` every depth below ``max_depth``);
        docs/formulations-search-and-pruning.md §3.10 "Driver".
    upper_bound : float, optional
        Objective of a known tree, used to prune.
    start : {"greedy", "guess", "auto"}, default="greedy"
        The incumbent the search starts from: its native greedy tree, or the optimal tree over
        guessed thresholds (``Binarizer(guess_thresholds=GUESS_ROUNDS)`` and ``search_tree``'s
        dp, within ``GUESS_SHARE`` of ``time_limit``); the answer is never worse than it.
        ``"auto"``: the native start, with ``GUESS_SHARE`` of ``time_limit`` kept back (a
        limit of 4 s or more; a shorter one is the search's whole); only if a limit stops the
        search does the guessed-threshold tree run, in the time left, and the better of the
        two trees comes back with the search's bound. The guess never made
        a certificate faster (it costs 0.05-1.7 s and the search's own incumbents are as
        good: ``benchmarks/results/numeric_doors.md``), so it runs only where it can help.
    progress : bool, optional
        A live line on stderr, as in :func:`search_tree`.

    Returns
    -------
    Result
        ``method="exact"``; ``model`` a :class:`~odtkit.tree.Tree` over the features of
        ``binarizer``, a fitted :class:`~odtkit.datasets.Binarizer` holding only the
        thresholds the tree uses (``result.model.predict(result.binarizer.transform(X))``
        predicts raw rows, as class codes). ``objective`` re-evaluated by
        :func:`odtkit.metrics.objective` on that binarization; ``stats["certificate"]`` is
        ``"all thresholds"``, ``stats["start"]`` the start, plus the native counters
        (``thresholds_evaluated``, ``subproblems``, ``memo_entries``) and
        ``certified_depth`` (``max_depth`` when optimal).

    Raises
    ------
    TypeError, ValueError
        On an invalid argument (the message names it).
    RuntimeError
        If the native answer breaks its contract or its objective disagrees with
        :func:`odtkit.metrics.objective` (a bug).
    """
    from odtkit.datasets import Binarizer  # scikit-learn: only when a search reads raw columns

    began = time.perf_counter()
    lam = check_lambda(lam)
    if max_depth is None:
        raise ValueError(
            "max_depth=None: the exact search over every threshold is depth-limited; give an "
            "integer max_depth >= 0"
        )
    max_depth = check_depth(max_depth, allow_none=False)
    if not isinstance(start, str) or start not in STARTS:
        raise ValueError(f"start must be one of {STARTS}, got {start!r}")
    time_limit = check_positive_number(time_limit, "time_limit")
    frame, _ = _as_frame(X, "X")
    n = frame.shape[0]
    if n == 0:
        raise ValueError("X is empty: the search needs at least one row")
    codes, classes = encode_labels(y, "y")
    if codes.shape[0] != n:
        raise ValueError(f"X has {n} rows but y has {codes.shape[0]} labels")
    weights = check_sample_weight(sample_weight, n, positive_sum=True)
    # a row of weight 0 is a row left out (as the estimators' Binarizer does): the native
    # search takes positive weights only, and no threshold need separate such a row
    rows, row_codes, row_weights = X, codes, weights
    if weights is not None and not weights.all():
        kept = weights > 0
        rows = X.iloc[kept] if hasattr(X, "iloc") else np.asarray(X)[kept]
        row_codes, row_weights = codes[kept], weights[kept]
    unit = np.ones(row_codes.size) if row_weights is None else row_weights
    # start="auto" keeps GUESS_SHARE of the limit back for the guessed-threshold tree only where
    # that share can run it (FALLBACK_MIN_SECONDS); under a shorter limit the search has it all
    fallback = start == "auto" and (
        time_limit is None or GUESS_SHARE * time_limit >= FALLBACK_MIN_SECONDS
    )
    config = search_config(
        lam,
        # start="auto" keeps GUESS_SHARE back for the guessed-threshold tree, if it is needed
        time_limit=time_limit
        if time_limit is None or not fallback
        else time_limit * (1 - GUESS_SHARE),
        node_limit=node_limit,
        memory_limit_mb=memory_limit_mb,
        bounds={},
        # a useful split leaves rows on both sides, so no optimal tree is deeper than n - 1
        max_depth=min(max_depth, row_codes.size - 1),
        upper_bound=check_upper_bound(upper_bound),
    )
    binarizer = Binarizer(categorical=categorical).fit(rows)
    guess: list[Result] = []

    def guessed(
        columns: NativeColumns, budget: float | None
    ) -> tuple[Result, list[tuple[int, int, int]], list[int]]:
        # the guessed-threshold tree within ``budget`` seconds: the start of "guess", the
        # fallback of "auto"; kept in ``guess`` for the stats
        answer = _guess_start(
            rows,
            row_codes,
            int(classes.size),
            row_weights,
            columns,
            categorical=categorical,
            lam=lam,
            max_depth=max_depth,
            budget=budget,
            memory_limit_mb=memory_limit_mb,
        )
        guess.append(answer[0])
        return answer

    def prepare() -> tuple[NativeColumns, list[tuple[int, int, int]]]:
        columns = native_columns(binarizer, rows)
        # a path that tests a split twice sends every row the same way the second time
        config.max_depth = min(config.max_depth, columns.n_splits)
        splits: list[tuple[int, int, int]] = []
        if start == "guess":
            share = None if time_limit is None else GUESS_SHARE * time_limit
            _, splits, config.initial_tree = guessed(columns, share)
        return columns, splits

    # the columns of the answer `run` returned (none for the leaf of a Ctrl-C or MemoryError
    # before the search)
    searched: list[NativeColumns] = []
    # start="auto": the objective the search stopped at, before the guessed-threshold tree
    stopped_at: list[float] = []

    def run(prepared: tuple[NativeColumns, list[tuple[int, int, int]]]) -> _native.SearchOutput:
        columns, splits = prepared
        if guess and guess[0].status == "interrupted":
            # a Ctrl-C during the guessed-threshold dp: its tree, no exact search
            searched.append(columns)
            return _start_answer(guess[0], splits, config.initial_tree, lam)
        if not columns.sources:
            # no column can split a row from another: the majority leaf is optimal
            answer = leaf_answer(
                row_codes, unit, int(classes.size), lam, status=_native.SearchStatus.optimal
            )
            searched.append(columns)
            return answer.replace(stats={})
        with Progress("exact search (all thresholds)", progress) as bar:
            raw = _native.search_numeric(
                columns.values,
                np.ascontiguousarray(row_codes, dtype=np.int32),
                np.ascontiguousarray(scale_weights(unit), dtype=np.float64),
                int(classes.size),
                charge_elapsed(config, began),
                bar.update if bar.active else None,
                splits,
            )
        searched.append(columns)
        if fallback and raw.status.name in _LIMITS and _time_left() >= FALLBACK_MIN_SECONDS:
            stopped_at.append(float(raw.objective))
            try:
                # in the time the search left (GUESS_SHARE of the limit, unless preprocessing
                # took some): the answer still comes back by the limit
                left = None if time_limit is None else _time_left()
                raw = _better_of(raw, guessed(columns, left))
            except KeyboardInterrupt:  # Ctrl-C during the guess: the search's answer, now
                raw = raw.replace(status=_native.SearchStatus.interrupted)
        return raw

    def _time_left() -> float:
        if time_limit is None:
            return math.inf
        return max(time_limit - (time.perf_counter() - began), 0.0)

    raw = guarded_answer(prepare, run, row_codes, unit, int(classes.size), lam)
    if searched:
        columns = searched[-1]
    else:  # the leaf of a Ctrl-C or MemoryError before the search: no split
        columns = NativeColumns(np.zeros((row_codes.size, 0)), [], [], np.zeros(0, dtype=bool))
    tree, restricted = decode_answer(raw, binarizer, columns)
    data = Dataset(
        restricted.transform(X),
        codes,
        classes,
        tuple(restricted.get_feature_names_out()),
        sample_weight=weights,
    )
    result = verified_result(
        raw.replace(tree=encode_tree(tree)),
        data,
        lam=lam,
        max_depth=max_depth,
        method="exact",
        start=began,
    )
    # a single class, or max_depth=0, said as at every other door (constrained=True: the range
    # of lam that matters would be measured on the tree's own features, not every threshold)
    _warn_if_trivial(result, data, lam, max_depth, constrained=True)
    stats = {
        **result.stats,
        "certificate": CERTIFICATE,
        "start": start,
        "native_columns": len(columns.sources),
    }
    if guess and start == "guess":
        stats["start_objective"] = guess[0].objective
    elif guess:  # start="auto" after a limit: the guessed-threshold tree was asked
        stats["fallback_objective"] = guess[0].objective
        stats["fallback_used"] = bool(guess[0].objective < stopped_at[0])
    changes: dict[str, Any] = {}
    if binarizer.truncated_:
        # an estimator's clock ran out while the columns were read: the columns left unread
        # were never searched, so only "every tree pays lam for one leaf" bounds the optimum
        changes = {"lower_bound": min(lam, result.objective), "status": "time_limit"}
        stats["truncated"] = True
    return result.replace(
        binarizer=restricted,
        stats=stats,
        time=time.perf_counter() - began,
        **changes,
    )


def _better_of(
    searched: _native.SearchOutput,
    guessed: tuple[Result, list[tuple[int, int, int]], list[int]],
) -> _native.SearchOutput:
    """``start="auto"`` after a limit stopped the search: the guessed-threshold tree in the
    search's answer when it is strictly better, with the search's status and bound (valid over
    every threshold; the guess's bound holds over its own thresholds only)."""
    result, splits, code = guessed
    if result.model is None or not float(result.objective) < float(searched.objective):
        return searched
    elapsed = list(searched.trace_time)
    return _native.SearchOutput(
        tree=list(code),
        objective=float(result.objective),
        lower_bound=float(searched.lower_bound),
        status=searched.status,
        n_explored=int(searched.n_explored) + int(result.n_explored),
        peak_memory_mb=max(float(searched.peak_memory_mb), float(result.peak_memory_mb)),
        trace_time=elapsed + [elapsed[-1] if elapsed else 0.0],
        trace_incumbent=list(searched.trace_incumbent) + [float(result.objective)],
        trace_bound=list(searched.trace_bound) + [float(searched.lower_bound)],
        stats=dict(searched.stats),
        split_column=[s[0] for s in splits],
        split_rank=[s[1] for s in splits],
        split_missing_le=[s[2] for s in splits],
    )


def _start_answer(
    guessed: Result, splits: list[tuple[int, int, int]], code: list[int], lam: float
) -> _native.SearchOutput:
    """A native-style answer holding the guessed-threshold tree (status ``interrupted``): its
    bound is over the guessed thresholds only, so the answer's is ``lam`` (every tree pays one
    leaf at least)."""
    objective = float(guessed.objective)
    bound = min(lam, objective)
    return _native.SearchOutput(
        tree=list(code),
        objective=objective,
        lower_bound=bound,
        status=_native.SearchStatus.interrupted,
        n_explored=int(guessed.n_explored),
        peak_memory_mb=float(guessed.peak_memory_mb),
        trace_time=[0.0],
        trace_incumbent=[objective],
        trace_bound=[bound],
        split_column=[s[0] for s in splits],
        split_rank=[s[1] for s in splits],
        split_missing_le=[s[2] for s in splits],
    )

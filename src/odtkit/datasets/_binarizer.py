"""Turn a raw table (numbers and categories) into the binary features every solver needs."""

from __future__ import annotations

import copy
import time
from collections.abc import Collection, Mapping
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import NotFittedError

from odtkit._features import FeatureSpec, _feature_blocks, format_threshold
from odtkit._limits import Deadline, active_deadline
from odtkit._warnings import warn
from odtkit.datasets._columns import _as_frame, _numeric, _numeric_block, column_at

__all__ = ["Binarizer", "format_threshold"]

#: How one raw column is encoded: (name, kind, thresholds or levels, had missing cells at fit);
#: kind is "threshold", "binary", "onehot", "constant" or "dropped" (no present value).
_Column = tuple[str, str, np.ndarray | list[Any], bool]
#: The output features: their specs, their names, and per column that yields any (its position,
#: its specs), the specs in ``transform``'s order.
_Outputs = tuple[list[FeatureSpec], np.ndarray, list[tuple[int, list[FeatureSpec]]]]


#: Columns of ``fit``'s loop between two reads of the active deadline's clock.
_DEADLINE_STRIDE = 64
#: Share of the time left when threshold guessing starts that its reference model may take
#: (the search gets the rest).
_GUESS_SHARE = 0.5
#: Largest share of the guessing time one boosting round may take (more classes are merged).
_ROUND_SHARE = 0.125
#: Largest ``guess_thresholds``: the reference model keeps a tree per round (and per class),
#: ~1-2 KB each; ``10**9`` rounds asked scikit-learn for a 7.45 GiB array of them.
MAX_GUESS_ROUNDS = 100_000
#: Most classes the reference model separates (the others are merged into one class): it
#: fits one tree per class per round and holds several (rows x classes) float64 arrays.
_GUESS_MAX_CLASSES = 64
#: Most (rows x classes) cells of one of those arrays (32 MiB of float64).
_GUESS_MAX_CELLS = 1 << 22
#: Most trees (rounds x classes) of the reference model.
_GUESS_MAX_TREES = 200_000


def _midpoints_between(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Thresholds between the pairs ``lo[i] < hi[i]`` (adjacent distinct values).

    Each threshold is the midpoint written with the fewest significant digits that stay within
    rounding noise of it (a billionth of the gap) and strictly between the pair: 17.5 | 17.6
    gives ``17.55``, not the float average ``17.549999999999997``. Any ``t`` with
    ``lo <= t < hi`` splits the pair the same way, so the split is exactly the midpoint's.
    For neighbouring floats (nothing representable in between) the lower value itself is
    used, so ``x <= t`` still splits them exactly.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        mid = (lo + hi) / 2.0
        overflow = ~np.isfinite(mid)
        if overflow.any():
            mid[overflow] = lo[overflow] / 2.0 + hi[overflow] / 2.0
    out = np.where((mid > lo) & (mid < hi), mid, lo)
    todo = out > lo  # pairs with room for a shorter number than the midpoint
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        magnitude = np.floor(np.log10(np.abs(np.where(mid == 0, 1.0, mid))))
        for digits in range(1, 17):
            if not todo.any():
                break
            exponent = digits - 1 - magnitude[todo]  # scale so that `digits` digits are whole
            scale = 10.0 ** np.abs(exponent)
            scaled = np.where(exponent >= 0, mid[todo] * scale, mid[todo] / scale)
            whole = np.round(scaled)
            # dividing a whole number by an exact power of ten is correctly rounded, so the
            # result prints as that short decimal
            candidate = np.where(exponent >= 0, whole / scale, whole * scale)
            near = np.abs(candidate - mid[todo]) <= 1e-9 * (hi[todo] - lo[todo])
            fits = near & (candidate > lo[todo]) & (candidate < hi[todo])
            index = np.flatnonzero(todo)[fits]
            out[index] = candidate[fits]
            todo[index] = False
    return out


def _quantile_indices(n_distinct: int, k: int) -> np.ndarray:
    """Indices of ``k`` midpoints that cut ``n_distinct`` sorted values into k+1 near-equal groups.

    Requires ``n_distinct >= k + 2``, so the cut positions are more than one apart and the
    rounded indices are strictly increasing (no duplicate thresholds).
    """
    cuts = np.floor(np.arange(1, k + 1) * n_distinct / (k + 1) + 0.5).astype(np.int64)
    return np.clip(cuts, 1, n_distinct - 1) - 1


def _splits_of(model: Any) -> dict[int, list[float]]:
    """The (column, threshold) of every depth-1 tree of a fitted boosting model."""
    splits: dict[int, list[float]] = {}
    for tree in np.asarray(model.estimators_).ravel():
        feature, threshold = int(tree.tree_.feature[0]), float(tree.tree_.threshold[0])
        if feature >= 0:
            splits.setdefault(feature, []).append(threshold)
    return splits


def _guess_classes(n_rows: int, n_classes: int, rounds: int) -> int:
    """How many classes the reference model may separate (the most frequent ones, the rest
    merged into one): its memory is (rows x classes) arrays and (rounds x classes) trees,
    so both stay bounded whatever the number of classes (10,000 classes of 20,000 rows
    asked for 763 MiB in one array)."""
    cap = min(_GUESS_MAX_CLASSES, _GUESS_MAX_CELLS // max(n_rows, 1), _GUESS_MAX_TREES // rounds)
    return n_classes if n_classes <= max(cap, 2) else max(cap, 2)


def _merged_labels(y: np.ndarray, keep: int) -> np.ndarray:
    """``y`` as codes with only its ``keep - 1`` most frequent classes kept apart and every
    other class one class (code -1); ``y`` itself when it has at most ``keep`` classes."""
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    if classes.size <= keep:
        return y
    order = np.argsort(-counts, kind="stable")
    merged = np.isin(codes, order[keep - 1 :])
    return np.where(merged, -1, codes).astype(np.int64)


def _reference_splits(
    X: np.ndarray,
    y: np.ndarray,
    sample_weight: object,
    rounds: int,
    deadline: Deadline | None,
) -> tuple[dict[int, list[float]], bool]:
    """Splits of the ``rounds``-round depth-1 boosted reference model of threshold guessing,
    and whether ``deadline`` cut it short.

    The labels ``y`` come with at most :func:`_guess_classes` classes (the caller merged the
    rest). Under a deadline the model may take ``_GUESS_SHARE`` of the time left: a one-tree
    pilot measures what a tree costs; one round fits a tree per class (2,000 rows of 1,000
    classes: 3 s a round, 2 min for 40), so when a round would take more than
    ``_ROUND_SHARE`` of the budget, the classes beyond the most frequent ones that fit are
    merged into one, and boosting stops after the round that reaches the budget or the
    deadline (scikit-learn's ``monitor``; a Ctrl-C in an estimator's fit ends the deadline).
    Without a deadline: the full model.
    """
    from sklearn.ensemble import GradientBoostingClassifier

    def model(n: int) -> GradientBoostingClassifier:
        return GradientBoostingClassifier(n_estimators=n, max_depth=1, random_state=0)

    if deadline is None or not deadline.limited:
        return _splits_of(model(rounds).fit(X, y, sample_weight=sample_weight)), False
    start = time.perf_counter()
    stop_at = start + _GUESS_SHARE * (deadline.remaining() or 0.0)
    classes, counts = np.unique(y, return_counts=True)
    # the pilot: the most frequent class against the rest, one tree
    pilot = model(1).fit(X, y == classes[np.argmax(counts)], sample_weight=sample_weight)
    per_tree = time.perf_counter() - start
    room = stop_at - time.perf_counter()
    trees_per_round = 1 if classes.size == 2 else classes.size
    if room <= 0 or per_tree * min(trees_per_round, 2) > room:
        return _splits_of(pilot), True  # the pilot's splits are all there is time for
    truncated = False
    labels = y
    round_room = room * _ROUND_SHARE
    if per_tree * trees_per_round > round_room:
        # the most frequent classes that one round can separate in its share of the time; the
        # others are one class. Rounds that short let the monitor below see the deadline (and
        # a Ctrl-C, which ends it) often: one round of 1,000 classes held a Ctrl-C for 29 s.
        labels = _merged_labels(y, max(2, int(round_room / per_tree)))
        truncated = True
    stopped = []

    def out_of_time(i: int, *_: Any) -> bool:
        # the deadline itself too: a Ctrl-C during fit ends it early (estimators)
        if (time.perf_counter() >= stop_at or deadline.expired()) and i + 1 < rounds:
            stopped.append(i)
            return True
        return False

    # its first round repeats the pilot's split (the same residuals up to sign and shift)
    reference = model(rounds).fit(X, labels, sample_weight=sample_weight, monitor=out_of_time)
    return _splits_of(reference), truncated or bool(stopped)


class Binarizer(TransformerMixin, BaseEstimator):  # type: ignore[misc]  # sklearn is untyped
    """Binarize numeric and categorical columns into boolean split features.

    Every numeric column ``c`` yields threshold features ``c<=t`` (True iff ``x <= t``);
    every categorical column yields one-hot features ``c=value`` (no level dropped). A numeric
    column holding exactly the values 0 and 1 (or a bool column) yields one feature named ``c``
    (True iff ``x == 1``), and a constant column yields nothing.

    **Missing values** (NaN, None, ``pd.NA``; docs/formulations-trees.md §9). A column with
    missing cells at ``fit`` yields, besides the features above (computed from its present
    values, and False on a missing cell):

    * numeric: for each threshold ``t`` also ``c<=t or missing`` (True iff ``x <= t`` or
      ``x`` is missing), and one ``c is missing``;
    * 0/1: also ``c or missing`` (``x == 1`` or missing) and ``c is missing``;
    * categorical: ``c is missing``, the missing cell being one more level of the one-hot
      encoding;
    * a column whose present values are all equal: ``c is missing`` only;
    * a column with no present value: nothing; ``fit`` warns (``UserWarning``) and lists it in
      ``dropped_columns_``.

    So every split a CART-style tree can make on a kept threshold — ``x <= t`` with the missing
    values sent left or right, or missing against present — is one feature (and every feature
    is such a split): a tree certified optimal over these features is optimal over all trees
    of such splits, so on the training data it is at least as good as any tree CART could grow
    on the same thresholds, whichever way each split sends the missing values. The
    3-valued 0/1 column gets three features because each of its three two-way splits
    ({1 | 0, NA}, {1, NA | 0}, {NA | 0, 1}) is a CART split. Columns without missing values at
    ``fit`` get exactly the features described first.

    Parameters
    ----------
    max_thresholds : int or None, default=None
        At most this many thresholds per numeric column. ``None`` keeps every midpoint between
        adjacent distinct values, so no two rows that differ in a column become identical.
        With a cap, the kept midpoints split the sorted *distinct* values into
        ``max_thresholds + 1`` groups of near-equal size (quantiles of the distinct values).
        Thresholds come from the present (non-missing) values only.
    categorical : list of str or None, default=None
        Columns to one-hot encode even though they are numeric. Columns of object, string or
        category dtype are always categorical.
    guess_thresholds : int or None, default=None
        Threshold guessing (McTavish et al. 2022, docs/references.md): fit a reference model of
        this many depth-1 gradient-boosting rounds on the numeric columns (``fit`` then needs
        ``y``) and keep only the thresholds it splits on, each moved to the midpoint between
        the two distinct values it separates. A column it never splits on yields no feature.
        An optimal tree over these features is optimal *over the guessed thresholds*, not
        over every threshold; in exchange the search sees tens of features instead of one per
        distinct value (breast cancer: 40 instead of 11,699). ``max_thresholds`` still caps
        each column. scikit-learn's ``GradientBoostingClassifier`` refuses NaN, so the
        reference model sees each missing cell as its column's median of present values: it
        only proposes thresholds (between present values); the features above still encode
        missingness exactly, whichever way the tree then sends it. The reference model sees
        each value's rank among its column's distinct values, so its float32 arithmetic
        cannot merge distinct float64 values (``1e-50`` and ``2e-50``, ``16777216`` and
        ``16777217``) or refuse large finite ones (``1e308``); each of its splits is mapped
        back to the float64 midpoint of the two values it separates. At most
        ``MAX_GUESS_ROUNDS`` (100,000) rounds (a ValueError above); more rounds than candidate
        thresholds (distinct values minus one, summed over the columns) are fitted as that
        many. Its memory is bounded: it separates at most 64 classes (fewer on many rows or
        rounds: a tree per class and round, rows x classes arrays), the most frequent ones, the
        others merged into one class (a ``UserWarning`` says so).

    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only set when ``fit`` was given a DataFrame (scikit-learn convention).
    thresholds_ : dict of str to ndarray of float
        The thresholds kept for each numeric column (empty for constant columns).
    categories_ : dict of str to list
        The levels seen during ``fit`` for each categorical column.
    binary_columns_ : list of str
        Numeric 0/1 columns passed through as a single feature (plus the two missing-value
        features when they had missing cells).
    missing_columns_ : list of str
        Columns with missing cells at ``fit`` (and at least one present value): the columns
        that got the missing-value features.
    dropped_columns_ : list of str
        Columns with no present value at ``fit``: they yield no feature.
    truncated_ : bool
        True when a time limit cut ``fit`` short: only inside an estimator's ``fit`` (whose
        ``time_limit`` covers binarization and search), where the columns left when it ran out
        yield no feature and the reference model of ``guess_thresholds`` may have fewer rounds
        (or, with many classes, separate the most frequent classes only). A plain
        ``Binarizer().fit`` has no time limit and is never cut.

    Notes
    -----
    A category not seen during ``fit`` encodes as all-False for that column. A missing value
    in a column that had none at ``fit`` encodes the same way: every feature of that column is
    False (``x <= t`` fails, as for NaN in IEEE arithmetic: the row goes to the ``x > t`` side;
    0/1 columns read it as 0, categorical ones as an unseen level). Infinite values are
    refused (``ValueError`` naming the column): a threshold between them and the finite values
    would be meaningless.
    """

    def __init__(
        self,
        max_thresholds: int | None = None,
        categorical: list[str] | None = None,
        guess_thresholds: int | None = None,
    ):
        self.max_thresholds = max_thresholds
        self.categorical = categorical
        self.guess_thresholds = guess_thresholds

    # -- fitting -------------------------------------------------------------------------------

    def fit(
        self, X: pd.DataFrame | np.ndarray, y: object = None, sample_weight: object = None
    ) -> Binarizer:
        """Choose the thresholds and categories from ``X``.

        Parameters
        ----------
        X : DataFrame or 2-D array-like, shape (n_samples, n_columns)
            Column names are taken from the DataFrame, else ``x0, x1, ...``.
        y : array-like, optional
            Labels; used (and required) only by ``guess_thresholds``.
        sample_weight : array-like, optional
            Weights of the rows for ``guess_thresholds``'s reference model.

        Returns
        -------
        self
        """
        k = self._check_max_thresholds()
        rounds = self._check_guess_thresholds(y)
        frame, from_frame = _as_frame(X, "X")
        if frame.shape[0] == 0:
            raise ValueError("X is empty: Binarizer needs at least one row to fit")
        names = [str(c) for c in frame.columns]  # unique: _as_frame checked
        forced = self._check_categorical(names)
        # an estimator's fit charges binarization to its time limit (odtkit._limits.charged)
        deadline = active_deadline()
        truncated = False

        spec: list[_Column] = []
        text_columns: list[int] = []  # positions of text columns read as categories
        guessed: list[tuple[int, int, np.ndarray]] = []  # (spec index, column, distinct values)
        # (spec index, lower and upper values of each pair): threshold columns' midpoints to be
        pending: list[tuple[int, np.ndarray, np.ndarray]] = []
        thresholds: dict[str, np.ndarray] = {}
        categories: dict[str, list[Any]] = {}
        binary: list[str] = []
        dropped: list[str] = []
        # the numeric columns (not named categorical) are read as one float block: a column
        # at a time through pandas costs ~0.3 ms, 3 s on 10,000 columns
        numeric = [
            position
            for position, (name, dtype) in enumerate(zip(names, frame.dtypes, strict=True))
            if name not in forced
            and pd.api.types.is_numeric_dtype(dtype)
            and not isinstance(dtype, pd.CategoricalDtype)
        ]
        if len(numeric) == len(names):
            block = _numeric_block(frame, names)
        elif numeric:
            block = _numeric_block(frame.iloc[:, numeric], [names[p] for p in numeric])
        else:
            block = None
        in_block = {position: j for j, position in enumerate(numeric)} if block is not None else {}
        for position, name in enumerate(names):
            if truncated or (
                deadline is not None
                and position % _DEADLINE_STRIDE == 0
                and position > 0
                and deadline.expired()
            ):
                # out of time: the columns not examined yield no feature
                truncated = True
                thresholds[name] = np.empty(0)
                spec.append((name, "constant", np.empty(0), False))
                continue
            if position in in_block:
                assert block is not None
                column = None
                values = block[:, in_block[position]]
                absent = np.isnan(values)
            else:
                column = column_at(frame, position)
                absent = column.isna().to_numpy()
            if absent.all():
                dropped.append(name)
                spec.append((name, "dropped", np.empty(0), False))
                continue
            missing = bool(absent.any())
            if column is not None and (name in forced or _is_categorical_dtype(column)):
                if name not in forced and not isinstance(column.dtype, pd.CategoricalDtype):
                    text_columns.append(position)  # said once below if it looks like numbers
                levels = _categories(column, name)
                # the missing cell is one more level: two levels are a split
                kind = "onehot" if len(levels) + missing > 1 else "constant"
                categories[name] = levels
                spec.append((name, kind, levels, missing))
                continue
            if column is not None:
                values = _numeric(column, name)
            distinct = np.unique(values[~absent])
            if distinct.size <= 1:
                thresholds[name] = np.empty(0)
                spec.append((name, "constant", np.empty(0), missing))
            elif distinct.size == 2 and distinct[0] == 0 and distinct[1] == 1:
                binary.append(name)
                spec.append((name, "binary", np.empty(0), missing))
            elif rounds is not None:
                # the reference model picks the cuts (_guess): no midpoints for all of them
                guessed.append((len(spec), position, distinct))
                cuts = np.empty(0)
                thresholds[name] = cuts
                spec.append((name, "threshold", cuts, missing))
            else:
                if k is not None and distinct.size - 1 > k:
                    at = _quantile_indices(distinct.size, k)
                    pending.append((len(spec), distinct[at], distinct[at + 1]))
                else:
                    pending.append((len(spec), distinct[:-1], distinct[1:]))
                thresholds[name] = np.empty(0)  # filled below, in the column order
                spec.append((name, "threshold", np.empty(0), missing))
        if pending:
            # every column's midpoints in one call: its cost is a few array operations per
            # significant digit, whatever the number of pairs
            cuts = _midpoints_between(
                np.concatenate([lo for _, lo, _ in pending]),
                np.concatenate([hi for _, _, hi in pending]),
            )
            ends = np.cumsum([lo.size for _, lo, _ in pending])
            for (index, _, _), part in zip(pending, np.split(cuts, ends[:-1]), strict=True):
                name, kind, _, missing = spec[index]
                thresholds[name] = part
                spec[index] = (name, kind, part, missing)
        if dropped:
            warn(
                f"Binarizer: column(s) {dropped} have no present value (all missing) and yield "
                "no feature"
            )
        if text_columns and from_frame:
            from odtkit.datasets._tables import warn_text_columns

            checked = frame.iloc[:, text_columns]
            checked.attrs.update(frame.attrs)  # a table read_table read was checked there
            warn_text_columns(checked)
        if guessed and rounds is not None and not truncated:  # guessed only with rounds
            truncated = self._guess(
                frame,
                guessed,
                y,
                sample_weight,
                rounds,
                k,
                spec,
                thresholds,
                deadline,
                None if block is None else (block, in_block),
            )
        self.truncated_ = truncated

        self.n_features_in_ = len(names)
        if from_frame:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._names = names
        self._spec = spec
        self.thresholds_ = thresholds
        self.categories_ = categories
        self.binary_columns_ = binary
        self.missing_columns_ = [name for name, kind, _, missing in spec if missing]
        self.dropped_columns_ = dropped
        self._outputs: _Outputs | None = None  # _output_features
        return self

    def _guess(
        self,
        frame: pd.DataFrame,
        guessed: list[tuple[int, int, np.ndarray]],
        y: object,
        sample_weight: object,
        rounds: int,
        k: int | None,
        spec: list[_Column],
        thresholds: dict[str, np.ndarray],
        deadline: Deadline | None = None,
        block: tuple[np.ndarray, dict[int, int]] | None = None,
    ) -> bool:
        """Keep, per numeric column, the thresholds a depth-1 boosted reference model uses;
        True when ``deadline`` cut the reference model short (:func:`_reference_splits`)."""
        columns = [position for _, position, _ in guessed]
        if block is not None:  # the float block and each column's place in it
            numeric = block[0][:, [block[1][position] for position in columns]]
        else:
            numeric = np.column_stack(
                [_numeric(column_at(frame, j), str(frame.columns[j])) for j in columns]
            )
        # The reference model (scikit-learn's trees) compares in float32: 1e-50 and 2e-50, or
        # 16,777,216 and 16,777,217, are one value to it, and 1e308 is "too large". It sees
        # each value's rank among its column's distinct values instead (exact in float32 up
        # to 2**24 distinct values; the order, so every split, is the column's), and a split
        # between ranks r and r + 1 maps back to the float64 midpoint of those two values.
        ranks: np.ndarray = np.full(numeric.shape, np.nan)
        for local, (_, _, distinct) in enumerate(guessed):
            present = ~np.isnan(numeric[:, local])
            ranks[present, local] = np.searchsorted(distinct, numeric[present, local])
        absent = np.isnan(ranks)
        if absent.any():
            # GradientBoostingClassifier refuses NaN; the reference model only proposes
            # thresholds between present values, so a missing cell stands at the median of its
            # column (every guessed column has at least 2 distinct present values)
            ranks = np.where(absent, np.nanmedian(ranks, axis=0), ranks)
        labels = np.asarray(y)
        if labels.shape[0] != ranks.shape[0]:
            raise ValueError(
                f"y has {labels.shape[0]} labels for {ranks.shape[0]} rows of X (guess_thresholds)"
            )
        # more rounds than candidate thresholds cannot split more ways
        rounds = min(rounds, sum(distinct.size - 1 for _, _, distinct in guessed))
        truncated = False
        n_classes = np.unique(labels).size
        if n_classes < 2:  # nothing to learn: no thresholds
            splits: dict[int, list[float]] = {}
        else:
            keep = _guess_classes(labels.shape[0], n_classes, rounds)
            if keep < n_classes:
                warn(
                    f"Binarizer: threshold guessing separates the {keep - 1} most frequent of "
                    f"{n_classes} classes and the others as one class: its reference model "
                    f"fits a tree per class and round on rows x classes arrays, "
                    f"so it is bounded at {keep} classes here; guess_thresholds=None keeps "
                    "every threshold"
                )
                labels = _merged_labels(labels, keep)
            splits, truncated = _reference_splits(ranks, labels, sample_weight, rounds, deadline)
        for local, (index, _, distinct) in enumerate(guessed):
            name, missing = spec[index][0], spec[index][3]
            if local not in splits:
                # never split on: no feature (already so in spec and thresholds)
                continue
            # a threshold t on the ranks separates rank floor(t) from the next one
            at = np.floor(np.asarray(splits[local], float)).astype(np.int64)
            keep_at = np.unique(np.clip(at, 0, distinct.size - 2))
            cuts = _midpoints_between(distinct[keep_at], distinct[keep_at + 1])
            if k is not None and cuts.size > k:
                cuts = cuts[_quantile_indices(cuts.size + 1, k)]
            thresholds[name] = cuts
            spec[index] = (name, "threshold", cuts, missing)
        return truncated

    def _check_guess_thresholds(self, y: object) -> int | None:
        g = self.guess_thresholds
        if g is None:
            return None
        if isinstance(g, bool) or not isinstance(g, Integral) or g < 1:
            raise ValueError(f"guess_thresholds must be a positive integer or None, got {g!r}")
        if g > MAX_GUESS_ROUNDS:
            raise ValueError(
                f"guess_thresholds must be <= {MAX_GUESS_ROUNDS} (its reference model keeps a "
                f"tree per round), got {g!r}; guess_thresholds=None keeps every threshold"
            )
        if y is None:
            raise ValueError("guess_thresholds needs y: call fit(X, y)")
        from odtkit._validation import check_label_kinds

        try:  # a list as it is: numpy would turn [1, "a"] into the strings "1" and "a"
            labels = np.asarray(y, dtype=object if isinstance(y, (list, tuple)) else None)
        except (TypeError, ValueError):
            labels = None  # ragged: the reference model's own check words it
        if labels is not None:
            check_label_kinds(labels.ravel())  # None, complex, numbers mixed with strings
        return int(g)

    def _check_max_thresholds(self) -> int | None:
        k = self.max_thresholds
        if k is None:
            return None
        if isinstance(k, bool) or not isinstance(k, Integral):
            raise TypeError(f"max_thresholds must be a positive integer or None, got {k!r}")
        if k < 1:
            raise ValueError(f"max_thresholds must be >= 1, got {k}")
        return int(k)

    def _check_categorical(self, names: list[str]) -> set[str]:
        if self.categorical is None:
            return set()
        if isinstance(self.categorical, str):
            raise TypeError(
                f"categorical must be a list of column names, got the string {self.categorical!r}"
            )
        forced = [str(c) for c in self.categorical]
        unknown = [c for c in forced if c not in names]
        if unknown:
            raise ValueError(f"categorical names columns not in X: {unknown}; columns are {names}")
        return set(forced)

    # -- transforming --------------------------------------------------------------------------

    def transform(self, X: pd.DataFrame | np.ndarray) -> np.ndarray:
        """Binary features of ``X``, shape (n_samples, n_features_out), dtype bool.

        A DataFrame is matched to the fitted columns by name (extra columns are ignored);
        an array is matched by position.
        """
        self._check_fitted()
        frame, from_frame = _as_frame(X, "X")
        at = self._positions(frame, from_frame)
        # each feature as FeatureSpec.evaluate computes it (what a saved model's prediction
        # computes too), a column at a time; columns that yield nothing are not read (on
        # 10,000 guessed columns most are not)
        blocks = [
            block
            for position, specs in self._output_features()[2]
            for block in _feature_blocks(specs, column_at(frame, at[position]))
        ]
        if not blocks:
            return np.zeros((frame.shape[0], 0), dtype=bool)
        return np.ascontiguousarray(np.hstack(blocks))

    def _align(self, frame: pd.DataFrame, from_frame: bool) -> pd.DataFrame:
        """``frame``'s fitted columns, in the fitted order."""
        at = self._positions(frame, from_frame)
        if at == list(range(frame.shape[1])):
            return frame
        return frame.iloc[:, at]

    def _positions(self, frame: pd.DataFrame, from_frame: bool) -> list[int]:
        """Where each fitted column stands in ``frame``: by name for a DataFrame, else by
        position (reading single columns from these is cheaper than a reordered copy)."""
        if from_frame and hasattr(self, "feature_names_in_"):
            names = [str(c) for c in frame.columns]
            lookup = {n: i for i, n in enumerate(names)}
            missing = [n for n in self._names if n not in lookup]
            if missing:
                raise ValueError(f"X is missing the fitted columns {missing}")
            return [lookup[n] for n in self._names]
        if frame.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {frame.shape[1]} columns but the Binarizer was fitted on "
                f"{self.n_features_in_}"
            )
        return list(range(frame.shape[1]))

    def get_feature_names_out(self, input_features: object = None) -> np.ndarray:
        """Names of the output features, e.g. ``age<=25.5``, ``color=red``, ``smoker``.

        Parameters
        ----------
        input_features : ignored
            Accepted for scikit-learn compatibility; names come from the fitted columns.
        """
        self._check_fitted()
        return self._output_features()[1].copy()

    def get_feature_specs(self) -> list[FeatureSpec]:
        """What each output feature tests on the raw data (source column, kind, parameter).

        The renderers (:func:`odtkit.render.tree_to_text`, :func:`odtkit.plot.plot_tree`) read
        these to print ``age <= 40.5`` / ``age > 40.5`` and ``color = red`` / ``color != red``.
        """
        self._check_fitted()
        return list(self._output_features()[0])

    def _output_features(self) -> _Outputs:
        """The output features' specs and names, and per column that yields any its position
        and its specs (in ``transform``'s order), built on first use: an every-midpoint fit has
        one per distinct value (15,310 on breast_cancer, ~40 ms to describe) that the exact
        search over every threshold never reads (it describes its restricted copy)."""
        outputs = getattr(self, "_outputs", None)
        if outputs is None:
            by_column = [(k, _output_specs([entry])) for k, entry in enumerate(self._spec)]
            by_column = [(k, specs) for k, specs in by_column if specs]
            specs = [spec for _, column in by_column for spec in column]
            names = np.asarray([f.name for f in specs], dtype=object)
            outputs = self._outputs = (specs, names, by_column)
        return outputs

    def _restricted(
        self, thresholds: Mapping[str, Any], tested: Collection[str] | None = None
    ) -> Binarizer:
        """A copy of this fitted Binarizer whose numeric columns keep only ``thresholds[name]``
        (none for a numeric column not named); categorical, 0/1, constant and dropped columns
        are kept as they are (but see ``tested``).

        The exact search over every threshold (:func:`odtkit.core.search_numeric`) analyses the
        columns with every midpoint and returns a tree over the few it uses: the restricted
        copy's ``transform`` yields just the columns that tree indexes (each kept threshold
        with its missing-value variants), not one per distinct value. Each kept threshold must
        be one of the fitted ones (ValueError otherwise), so a row is encoded exactly as the
        full Binarizer encodes it. ``tested``: the columns the tree tests; a numeric column
        outside it keeping no threshold yields no feature at all (not even "is missing"), nor
        does a categorical or 0/1 column outside it, so the copy lists only what its tree
        reads. None: every column is kept.
        """
        self._check_fitted()
        spec: list[_Column] = []
        kept: dict[str, np.ndarray] = {}
        for name, kind, params, missing in self._spec:
            if kind == "threshold":
                requested = thresholds.get(name, ())
                wanted = (
                    np.unique(np.asarray(requested, dtype=float)) if len(requested) else np.empty(0)
                )
                # most columns keep none (a tree tests a few): no lookup among their midpoints
                unknown = wanted[~np.isin(wanted, params)] if wanted.size else wanted
                if unknown.size:
                    raise ValueError(
                        f"thresholds of column {name!r} must be among the fitted ones, got "
                        f"{unknown[:3].tolist()}"
                    )
                kept[name] = wanted
                untested = tested is not None and name not in tested and wanted.size == 0
                spec.append((name, kind, wanted, missing and not untested))
            elif tested is not None and name not in tested and kind in ("onehot", "binary"):
                # a category or 0/1 column the tree never tests: no feature either
                spec.append((name, "dropped", np.empty(0), False))
            else:
                spec.append((name, kind, params, missing))
        unknown_names = sorted(set(thresholds) - set(kept))
        if unknown_names:
            raise ValueError(f"thresholds names columns that are not numeric: {unknown_names}")
        out = copy.copy(self)
        out._spec = spec
        out.thresholds_ = {**self.thresholds_, **kept}
        out._outputs = None
        return out

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing cell is encoded, see the class docstring
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags

    def _check_fitted(self) -> None:
        if not hasattr(self, "_spec"):
            raise NotFittedError(
                "This Binarizer instance is not fitted yet; call 'fit' before using it"
            )


def _is_categorical_dtype(column: pd.Series) -> bool:
    dtype = column.dtype
    return (
        isinstance(dtype, pd.CategoricalDtype)
        or pd.api.types.is_string_dtype(dtype)
        or pd.api.types.is_object_dtype(dtype)
    )


def _categories(column: pd.Series, name: str) -> list[Any]:
    """The levels present in ``column`` (a missing cell is no level)."""
    column = column[column.notna().to_numpy()]
    if isinstance(column.dtype, pd.CategoricalDtype):
        present = set(column.unique())
        return [c for c in column.cat.categories if c in present]
    try:
        levels = pd.unique(column.to_numpy())
    except TypeError as exc:  # "unhashable type: 'list'"
        raise ValueError(
            f"column {name!r} holds values that cannot be categories, such as "
            f"{column.iloc[0]!r} ({type(column.iloc[0]).__name__}); a column must hold "
            "numbers or categories (strings)"
        ) from exc
    return sorted(levels.tolist(), key=_level_key)


def _level_key(value: object) -> tuple[str, object]:
    # Grouping by type first keeps mixed-type object columns sortable (1 < "a" would raise).
    if isinstance(value, (int, float, str)):
        return (type(value).__name__, value)
    return (type(value).__name__, str(value))


def _output_specs(spec: list[_Column]) -> list[FeatureSpec]:
    """One FeatureSpec per output column, in ``transform``'s order.

    A column with missing cells at fit: the plain features (False on a missing cell), then the
    same tests "or missing" (0/1 and threshold columns), then "is missing".
    """
    out: list[FeatureSpec] = []
    for name, kind, params, missing in spec:
        plain = False if missing else None  # None: no missing value seen, text as before
        if kind == "binary":
            out.append(FeatureSpec(name, "binary", missing=plain))
        elif kind == "threshold":
            out.extend(FeatureSpec(name, "threshold", float(t), plain) for t in params)
        elif kind == "onehot":
            out.extend(FeatureSpec(name, "category", v, plain) for v in params)
        if missing and kind == "binary":
            out.append(FeatureSpec(name, "binary", missing=True))
        elif missing and kind == "threshold":
            out.extend(FeatureSpec(name, "threshold", float(t), True) for t in params)
        if missing:
            out.append(FeatureSpec(name, "missing"))
    return out

"""scikit-learn compatible classifiers over the methods of this library.

``OptimalTreeClassifier`` fits a provably optimal sparse tree (native search or a MIP) and keeps
the certificate (``result_``: objective, lower bound, status). Raw numeric/categorical inputs are
binarized with :class:`odtkit.datasets.Binarizer` when ``binarize`` allows it, so the estimator
drops into pipelines, ``cross_val_score`` and grid searches over ``lam`` and ``max_depth``.

Every estimator has a finite default ``time_limit`` (:data:`odtkit.methods.DEFAULT_TIME_LIMIT`)
and says after ``fit`` how it stopped: ``status_``, ``objective_``, ``lower_bound_`` and
``certified_``; a fit that a limit (or Ctrl-C) stopped before the proof emits one
:class:`LimitReachedWarning` stating the gap.

The tree estimators follow :mod:`sklearn.tree`'s inspection API: ``get_depth()``,
``get_n_leaves()``, ``apply(X)``, ``decision_path(X)`` and ``feature_importances_``; nodes are
numbered in pre-order (root 0, then the whole ``x = 0`` subtree, then the ``x = 1`` subtree),
the numbering of ``node_counts_``. :func:`odtkit.export_text` and :func:`odtkit.plot_tree` take
a fitted estimator. ``OptimalTreeClassifier.rashomon(epsilon=)`` after a fit is every tree within
``epsilon`` of the optimum on the fitted features (:func:`odtkit.rashomon`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Set
from dataclasses import replace
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from odtkit import metrics
from odtkit._limits import Deadline, charged, stop_on_interrupt
from odtkit._validation import (
    as_binary_matrix,
    check_depth,
    check_label_kinds,
    check_lambda,
    check_positive_number,
    check_sample_weight,
    named,
)
from odtkit._warnings import warn
from odtkit.datasets import Dataset
from odtkit.datasets._binarizer import (  # the class itself (the package loads it lazily)
    MAX_GUESS_ROUNDS,
    Binarizer,
)
from odtkit.datasets._columns import check_unique_columns
from odtkit.datasets._thresholds import Thresholds
from odtkit.fairness import NOTIONS
from odtkit.methods import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_TIME_LIMIT,
    GUESS_ROUNDS,
    Method,
    fill_method_names,
    get_method,
    method_names,
)
from odtkit.results import Status
from odtkit.task import Task, _fitted, solve
from odtkit.tree import Tree


def _load_frame_layer() -> None:
    """scikit-learn reads a DataFrame's column names through narwhals, whose pandas layer
    loads on first use, and asks it whether an array is a frame, which the first time reads
    the entry points of every installed distribution (narwhals' plugins): do both here, at
    import, so that the first fit's clock (its ``time_limit``) does not pay for them (~15 ms
    and ~6 ms of a small first fit)."""
    try:
        import narwhals.stable.v2 as nw
        import pandas as pd

        nw.from_native(pd.DataFrame({"x": [0.0]}), eager_only=True)
        nw.dependencies.is_into_dataframe(np.zeros(1))
    except Exception:  # noqa: BLE001 - another narwhals: the first fit loads what it needs
        pass


_load_frame_layer()

__all__ = [
    "FairTreeClassifier",
    "LimitReachedWarning",
    "OptimalRuleListClassifier",
    "OptimalTreeClassifier",
    "OptimalTreeClassifierCV",
]


def _class_distribution(
    part: np.ndarray, n_parts: int, labels: np.ndarray, data: Dataset
) -> np.ndarray:
    """Training class fractions per leaf (or rule): row ``i`` of the result sums to 1.

    ``part`` is the leaf each training row reaches; a leaf that no row of positive weight
    reaches predicts its own ``labels`` entry with certainty.
    """
    dist = np.zeros((n_parts, data.n_classes))
    np.add.at(dist, (part, data.y), data.weights)
    empty = dist.sum(axis=1) == 0
    dist[empty, labels[empty]] = 1.0
    fractions: np.ndarray = dist / dist.sum(axis=1, keepdims=True)
    return fractions


class LimitReachedWarning(UserWarning):
    """A fit stopped at a limit (time, memory, nodes) or at Ctrl-C before proving optimality.

    The fitted model is the best one found so far and still predicts; ``status_`` says which
    limit, ``objective_ - lower_bound_`` is how far from optimal it may be. Silence it with
    ``warnings.simplefilter("ignore", odtkit.LimitReachedWarning)``.
    """


#: Keyed by Status, a StrEnum: a status string looks its member up.
_STOPPED_BY: dict[str, str] = {
    Status.TIME_LIMIT: "its time limit",
    Status.MEMORY_LIMIT: "its memory limit",
    Status.NODE_LIMIT: "its node limit",
    Status.ITERATION_LIMIT: "its iteration limit",
    Status.OBJECTIVE_LIMIT: "its objective limit",
    Status.INTERRUPTED: "an interrupt (Ctrl-C)",
}


def _gap_text(objective: float, lower_bound: float) -> str:
    if not math.isfinite(lower_bound):
        return f"objective {objective:.6g}, no lower bound known"
    gap = max(0.0, objective - lower_bound)
    share = f", {100 * gap / objective:.3g} % of the objective" if objective > 0 else ""
    return f"objective {objective:.6g}, lower bound {lower_bound:.6g} (gap {gap:.3g}{share})"


def _record_outcome(
    estimator: Any,
    status: Status,
    objective: float,
    lower_bound: float,
    model: str = "model",
    extra: str = "",
    certified: bool | None = None,
) -> None:
    """Set ``status_``, ``objective_``, ``lower_bound_``, ``certified_``; warn if stopped early.

    One :class:`LimitReachedWarning` per fit, naming the limit and the gap, so a default
    ``time_limit`` never passes off a best-so-far model as the optimum in silence.
    """
    estimator.status_ = Status.parse(status)
    estimator.objective_ = float(objective)
    estimator.lower_bound_ = float(lower_bound)
    estimator.certified_ = (
        estimator.status_ == Status.OPTIMAL if certified is None else bool(certified)
    )
    # over what the model is optimal: None when it is not proven optimal at all
    kind = getattr(estimator, "_certificate_kind", None)
    estimator.certificate_ = kind() if estimator.certified_ and kind is not None else None
    stopped = estimator.status_.stopped_early and not estimator.certified_
    if not (stopped or extra):
        return
    name = type(estimator).__name__
    if stopped:
        limit = _STOPPED_BY.get(estimator.status_, estimator.status_.value)
        if estimator.status_ == Status.TIME_LIMIT and getattr(estimator, "time_limit", None):
            limit += f" (time_limit={estimator.time_limit:g} s)"
        head = (
            f"{name} stopped at {limit} before proving the {model} optimal; it keeps the best "
            f"{model} found: {_gap_text(objective, lower_bound)}."
        )
    else:
        head = ""
    advice = (
        " Raise time_limit (or lower max_depth / raise lam) to certify it; status_, "
        "objective_ and lower_bound_ hold the outcome."
    )
    message = " ".join(part for part in (head, extra) if part) + advice
    if not head:
        message = f"{name}: {message}"
    warn(message, LimitReachedWarning)


def _preorder(tree: Tree) -> tuple[list[Tree], np.ndarray, np.ndarray]:
    """The nodes of ``tree`` in pre-order (root 0, the whole left subtree, then the right)
    and each node's left and right child ids (-1 at a leaf), as :mod:`sklearn.tree` numbers.

    Ids are positions, never object identities: a subtree object used twice gets two ids.
    """
    nodes: list[Tree] = []
    children: list[list[int]] = []
    stack: list[tuple[Tree, int, int]] = [(tree, -1, 0)]  # (node, parent id, side)
    while stack:
        node, parent, side = stack.pop()
        if parent >= 0:
            children[parent][side] = len(nodes)
        nodes.append(node)
        children.append([-1, -1])
        if node.left is not None and node.right is not None:  # an internal node
            here = len(nodes) - 1
            stack.extend(((node.right, here, 1), (node.left, here, 0)))  # left popped first
    ids = np.array(children, dtype=np.int64).reshape(-1, 2)
    return nodes, ids[:, 0], ids[:, 1]


def _weighted_impurity(counts: np.ndarray, criterion: str) -> np.ndarray:
    """``total weight x impurity`` per row of class weights: Gini, or the minority weight."""
    total: np.ndarray = counts.sum(axis=1)
    if criterion == "error":
        minority: np.ndarray = total - counts.max(axis=1, initial=0.0)
        return minority
    safe = np.where(total > 0, total, 1.0)
    gini: np.ndarray = total - (counts**2).sum(axis=1) / safe
    return gini


#: The methods of :class:`OptimalTreeClassifier`: those whose optimum is the estimator's
#: objective (EXACT), on a binarized table ("exact", the raw-table search, is
#: ``thresholds="all"``); and of :class:`FairTreeClassifier`, those that also take fairness.
TREE_METHODS = method_names(exact=True, raw=False)
FAIR_METHODS = method_names(exact=True, fair=True, raw=False)

#: A parameter's constraints (a list), or "no_validation".
_Constraints = dict[str, list[Any] | str]


class _RealInterval(Interval):  # type: ignore[misc]  # scikit-learn is untyped
    """scikit-learn's Interval of real numbers for any :class:`numbers.Real` (a
    ``Fraction(1, 100)`` for ``lam``): its own check calls ``np.isnan``, which fails on a
    Fraction with a TypeError that names no parameter; every other check reads it as the float
    it is (``check_lambda``)."""

    def __contains__(self, val: object) -> bool:
        if isinstance(val, Real) and not isinstance(val, (int, float, np.number)):
            val = float(val)
        return bool(super().__contains__(val))


#: A positive limit in seconds or MB (inf allowed: no limit), or None (the default).
_LIMIT = [_RealInterval(Real, 0, None, closed="right"), None]
#: A penalty (lam, lam_min): a finite number >= 0.
_PENALTY = [_RealInterval(Real, 0, None, closed="left")]
#: A depth limit: an integer >= 0 (None added where unlimited is allowed).
_DEPTH = [Interval(Integral, 0, None, closed="left")]
#: The parameters every estimator here shares (binarization, limits).
_INPUT_CONSTRAINTS: _Constraints = {
    "time_limit": _LIMIT,
    "memory_limit_mb": _LIMIT,
    "binarize": ["boolean", StrOptions({"auto"})],
    # deprecated (FutureWarning at fit): thresholds says it alone
    "max_thresholds": [
        Interval(Integral, 1, None, closed="left"),
        None,
        StrOptions({"deprecated"}),
    ],
    "guess_thresholds": [
        Interval(Integral, 1, MAX_GUESS_ROUNDS, closed="both"),
        None,
        StrOptions({"deprecated"}),
    ],
    "thresholds": [
        StrOptions({"guess", "all", "auto"}),
        Interval(Integral, 1, None, closed="left"),
        Thresholds,
        None,
    ],
}


class _RegisteredBackends(Set[str]):
    """The names of :func:`odtkit.solvers.registered_backends`, read when listed. The default
    ``"highs"`` (registered by odtkit.solvers itself) is a member without importing the solver
    modules: a search-only fit at the defaults needs none, and their import (~40 ms) was a
    first fit's largest cost. A backend registered after import counts."""

    def __contains__(self, name: object) -> bool:
        return name == "highs" or name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    @classmethod
    def _from_iterable(cls, values: Iterable[Any]) -> set[Any]:
        # set operations (scikit-learn checks ``deprecated - options``) give a plain set
        return set(values)

    @staticmethod
    def _names() -> list[str]:
        from odtkit.solvers import registered_backends

        return list(registered_backends())


def _backend_constraint() -> list[Any]:
    """``backend``: a name of :func:`odtkit.solvers.registered_backends` (read when a fit
    validates a name other than the default, not when odtkit is imported)."""
    return [StrOptions(_RegisteredBackends())]


class _ParameterConstraints:
    """scikit-learn's ``_parameter_constraints``, built from the registries each time it is
    read: the method names from :data:`odtkit.methods.METHODS`, the backend names from
    :func:`odtkit.solvers.registered_backends` (so a backend registered after import counts)."""

    def __init__(self, build: Callable[[], _Constraints]) -> None:
        self.build = build

    def __get__(self, obj: object, owner: type[BaseEstimator]) -> _Constraints:
        every = {**_INPUT_CONSTRAINTS, **self.build()}
        return {name: every[name] for name in owner._get_param_names()}


def _tree_constraints(
    methods: tuple[str, ...], depth: list[Any], *, auto: bool = False
) -> Callable[[], _Constraints]:
    def build() -> _Constraints:
        return {
            "lam": _PENALTY,
            "max_depth": depth,
            "method": [StrOptions(set(methods) | {"auto"} if auto else set(methods))],
            "backend": _backend_constraint(),
            # a list of odtkit.constraints values, checked by check_constraints at fit
            "constraints": "no_validation",
            "class_weight": [dict, StrOptions({"balanced"}), None],
            # an array-like K x K, checked against the classes at fit
            "cost_matrix": "no_validation",
        }

    return build


def _plain_column(dtype: Any) -> bool:
    """A numpy, categorical or string column: dense, as scikit-learn's check_array wants."""
    import pandas as pd

    return isinstance(dtype, (np.dtype, pd.CategoricalDtype, pd.StringDtype))


def _check_feature_values(X: Any) -> None:
    """Refuse complex numbers and infinite values in ``X`` naming the column, at ``fit`` and
    ``predict`` alike (prediction skips reading a column the tree does not use, so an
    infinity there passed unnoticed although ``fit`` refuses it). Missing cells are the
    Binarizer's (or scikit-learn's) matter."""
    import pandas as pd

    # a frame's dtypes are a Series built on every read (hasattr reads it too): once
    dtypes = getattr(X, "dtypes", None) if hasattr(X, "columns") else None
    if dtypes is not None:
        columns = [str(c) for c in X.columns]
        kinds = [
            "c"
            if getattr(d, "kind", "") == "c"
            else "f"
            if pd.api.types.is_numeric_dtype(d) and not isinstance(d, pd.CategoricalDtype)
            else "o"
            for d in dtypes
        ]
        numeric = [j for j, k in enumerate(kinds) if k == "f"]
        within = X if len(numeric) == len(kinds) else X.iloc[:, numeric]
        block = within.to_numpy(dtype=float, na_value=np.nan)
        where = [numeric[j] for j in np.flatnonzero(np.isinf(block).any(axis=0))]
        complex_at = [j for j, k in enumerate(kinds) if k == "c"]
    else:
        try:
            arr = np.asarray(X)
        except (TypeError, ValueError):
            return  # ragged and the like: scikit-learn's check words it
        if arr.ndim != 2 or arr.dtype.kind not in "biufc":
            return
        columns = [f"x{j}" for j in range(arr.shape[1])]
        complex_at = list(range(arr.shape[1])) if arr.dtype.kind == "c" else []
        where = [] if complex_at else list(np.flatnonzero(np.isinf(arr).any(axis=0)))
    if complex_at:
        raise ValueError(  # scikit-learn's words first: its estimator checks expect them
            f"Complex data not supported: X column {columns[complex_at[0]]!r} holds complex "
            "numbers; features must be real numbers or categories"
        )
    if where:
        raise ValueError(
            f"X column {columns[int(where[0])]!r} has infinite values; features must be finite "
            "numbers (or missing)"
        )


#: The default of the deprecated threshold settings (scikit-learn's spelling of "not given").
_DEPRECATED = "deprecated"


def _spelled(policy: Thresholds) -> str:
    """How to write ``policy`` as the ``thresholds`` setting."""
    default = Thresholds(policy.choice)
    if policy == default:
        return repr(policy.choice)
    fields = [repr(policy.choice)]
    if policy.rounds != default.rounds:
        fields.append(f"rounds={policy.rounds}")
    if policy.max_per_column is not None:
        fields.append(f"max_per_column={policy.max_per_column}")
    if not policy.exact_search:
        fields.append("exact_search=False")
    return f"odtkit.datasets.Thresholds({', '.join(fields)})"


class _BinaryInputMixin:
    """Shared input validation (scikit-learn's conventions), binarization and transform."""

    binarize: bool | str
    binarizer_: Binarizer | None
    time_limit: float | None
    memory_limit_mb: float | None
    max_thresholds: int | None | str  # deprecated: "deprecated" when not given
    guess_thresholds: int | None | str
    #: "guess", "all", an int, a Thresholds or None ("guess")
    thresholds: str | int | Thresholds | None

    #: The table settings every estimator's ``__init__`` takes, annotated above
    _TABLE_PARAMETERS = (
        "time_limit",
        "memory_limit_mb",
        "binarize",
        "max_thresholds",
        "guess_thresholds",
        "thresholds",
    )

    def _keep_table_parameters(self, given: dict[str, Any]) -> None:
        """Store the table settings among an ``__init__``'s arguments (its ``locals()``) as they
        are, scikit-learn's ``__init__`` contract (``get_params`` and ``clone`` read them back by
        the signature's names): the six every estimator takes, assigned in one place."""
        for name in self._TABLE_PARAMETERS:
            setattr(self, name, given[name])

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        # string and categorical columns are one-hot encoded by the Binarizer
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        # missing values are encoded by the Binarizer (docs/formulations-trees.md §9)
        tags.input_tags.allow_nan = True
        return tags

    def _check_X(self, X: Any, reset: bool, allow_nan: bool) -> Any:
        """``X`` checked by scikit-learn (2-d, dense, non-empty, no inf; names and width).

        NaN only when ``allow_nan`` (the Binarizer encodes it). A DataFrame is returned as it
        is, so the Binarizer still sees its column dtypes (and names an infinite column).
        """
        from sklearn.utils.validation import check_array, validate_data

        frame = hasattr(X, "columns") and hasattr(X, "iloc")
        if frame:
            check_unique_columns(X, "X")  # before scikit-learn, whose error names no argument
            if X.shape[1] == 0:  # numpy's "at least one array or dtype is required" otherwise
                raise ValueError(
                    f"X has 0 feature(s) (shape={X.shape}) while a minimum of 1 is required"
                )
        _check_feature_values(X)
        try:
            if frame:
                if X.shape[0] == 0 or not all(_plain_column(d) for d in X.dtypes):
                    # emptiness, sparse and other extension columns in scikit-learn's words
                    check_array(X, dtype=None, ensure_all_finite=False)
                # a frame of plain columns passes check_array as it is (2-d, dense, non-empty);
                # its conversion to one object array cost ~20 % of a small fit
                validate_data(self, X, skip_check_array=True, reset=reset)
                return X
            finite = "allow-nan" if allow_nan else True
            return validate_data(self, X, dtype=None, reset=reset, ensure_all_finite=finite)
        except ValueError as exc:
            raise ValueError(named("X", exc)) from None

    def _start_clock(self, policy: Thresholds | None = None, *, exact: bool = False) -> Deadline:
        """The fit's one clock: ``time_limit`` covers binarization (threshold guessing) and the
        search alike, so the search gets what preprocessing left (``limit_left``). What the
        fit imports on first use (``policy``'s guess, unless the exact search runs: ``exact``)
        is imported before the clock starts."""
        limit = check_positive_number(self.time_limit, "time_limit")
        if policy is not None and self.binarize is not False:
            policy.load_dependencies(exact=exact)
        return Deadline(limit)

    def _start_fit(
        self, X: Any, y: Any, sample_weight: Any, no_exact_search: str | None = None
    ) -> tuple[Deadline, Dataset]:
        """The fit's clock and its Dataset: validated, binarized as configured, classes and
        names remembered.

        The threshold policy is read first; ``no_exact_search`` (the reason) refuses
        ``thresholds="all"`` for an estimator that cannot run the exact search. Binarization
        runs charged to the fit's clock (:meth:`odtkit.Task.from_table`): out of time, the
        Binarizer keeps what it has (``binarizer_.truncated_``) and the result says so."""
        policy = self._thresholds_policy(warn_old=True)
        if no_exact_search is not None:
            self._refuse_all_thresholds(no_exact_search)
        deadline = self._start_clock(policy)
        X, y, weights = self._checked_input(X, y, sample_weight)
        task = self._task(X, y, weights, deadline, policy, exact=False)
        assert task.dataset is not None  # exact=False: binarized here
        return deadline, task.dataset

    def _checked_input(self, X: Any, y: Any, sample_weight: Any) -> tuple[Any, Any, Any]:
        """``(X, y, weights)`` checked as scikit-learn does (and ``binarize``, ``thresholds``)."""
        from sklearn.utils.validation import check_consistent_length, column_or_1d

        self._thresholds_policy()  # a bad thresholds value is refused before any work
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        X = self._check_X(X, reset=True, allow_nan=self.binarize is not False)
        y = y.to_numpy() if hasattr(y, "to_numpy") else y
        try:
            # a list as it is: numpy would turn [1, "a"] into the strings "1" and "a"
            labels = np.asarray(y, dtype=object if isinstance(y, (list, tuple)) else None)
        except (TypeError, ValueError):  # ragged: scikit-learn's check words it
            labels = None
        if labels is not None:
            # None, complex numbers, numbers mixed with strings: refused naming y
            check_label_kinds(labels.ravel())
        try:
            y = column_or_1d(y, warn=True)
        except ValueError as exc:
            raise ValueError(named("y", exc)) from None
        try:
            check_consistent_length(X, y)
        except ValueError as exc:
            raise ValueError(f"X and y must have one row per example: {exc}") from None
        if not (isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "biu"):
            # whole numbers in one column are class labels whatever they are (type_of_target
            # says "binary" or "multiclass"): its unique() and checks cost ~0.2 ms a fit
            check_classification_targets(y)
        weights = check_sample_weight(sample_weight, len(y), positive_sum=True)
        class_weight = getattr(self, "class_weight", None)  # OptimalTreeClassifier's parameter
        if class_weight is not None:
            from sklearn.utils.class_weight import compute_sample_weight

            try:
                factor = compute_sample_weight(class_weight, y)
            except ValueError as exc:
                raise ValueError(named("class_weight", exc)) from None
            weights = factor if weights is None else weights * factor
            if not weights.sum() > 0:
                raise ValueError("class_weight gives every row weight 0")
        return X, y, weights

    def _task(
        self,
        X: Any,
        y: np.ndarray,
        weights: np.ndarray | None,
        deadline: Deadline,
        policy: Thresholds,
        exact: bool | None,
        fairness: Any = None,
    ) -> Task:
        """The fit's :class:`odtkit.Task` (binarized as ``binarize`` and the policy say, under
        the fit's deadline), remembered with its classes, features and Binarizer."""
        task = Task.from_table(
            X,
            y,
            sample_weight=weights,
            thresholds=policy,
            binarize=self.binarize,
            fairness=fairness,
            deadline=deadline,
            exact=exact,
            # OptimalTreeClassifier's parameters (the estimators built on it state none)
            constraints=self._stated_constraints(),
        )
        self._fit_task = task
        self._exact_search = False
        self.binarizer_ = task.binarizer
        if task.dataset is not None:
            self.classes_ = task.dataset.classes
            self.feature_names_ = list(task.dataset.feature_names)
        return task

    def _stated_constraints(self) -> list[Any] | None:
        """``constraints`` with the ``cost_matrix`` objective (:mod:`odtkit.costs`) beside
        them: OptimalTreeClassifier's parameters; None when neither is set."""
        from odtkit.constraints import check_constraints
        from odtkit.costs import BalancedError, CostMatrix, Costs

        stated = list(check_constraints(getattr(self, "constraints", None)))
        matrix = getattr(self, "cost_matrix", None)
        if matrix is None:
            return stated or None
        if any(isinstance(c, Costs) for c in stated):
            raise ValueError("cost_matrix: constraints already state a cost objective")
        if isinstance(matrix, str):
            if matrix != "balanced":
                raise ValueError(
                    f"cost_matrix must be a K x K matrix or 'balanced', got {matrix!r}"
                )
            stated.append(BalancedError())
        else:
            try:
                stated.append(CostMatrix(matrix))
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"cost_matrix: {exc}") from None
        return stated

    def _drop_raw_table(self) -> None:
        """Keep the fitted task without its raw table (the fitted estimator needs its policy
        and Binarizer, not a second copy of ``X`` in memory and in every pickle)."""
        task = getattr(self, "_fit_task", None)
        if task is not None and task.X is not None:
            self._fit_task = replace(task, X=None, y=None, sample_weight=None)

    def _fitted_binarizer(self, X: Any, y: np.ndarray, weights: np.ndarray | None) -> Binarizer:
        """A new Binarizer as configured, fitted on the rows of ``X`` (and ``y``, to guess)."""
        binarizer: Binarizer = self._fit_task.fitted_binarizer(X, y, weights)
        return binarizer

    def _thresholds_policy(self, *, warn_old: bool = False) -> Thresholds:
        """The :class:`odtkit.datasets.Thresholds` that ``thresholds`` (and, deprecated,
        ``max_thresholds`` / ``guess_thresholds``) mean; the FutureWarning of the old settings
        is issued when ``warn_old`` (the fit's first reading).

        The old settings map onto the policy (with ``thresholds`` left at ``"guess"``):
        ``guess_thresholds=R`` is ``Thresholds("guess", rounds=R)``;
        ``guess_thresholds=None`` is ``"all"`` (every midpoint binarized, as before: not the
        exact search) and with ``max_thresholds=N`` it is ``N``; ``max_thresholds=N`` alone
        (guessing on, as its default was) caps the guess at N per column. During the
        deprecation period a ``thresholds`` other than ``"guess"`` together with either old
        setting is a ValueError naming both (neither silently overrides the other).
        """
        choice = getattr(self, "thresholds", "guess")
        old_max = getattr(self, "max_thresholds", _DEPRECATED)
        old_guess = getattr(self, "guess_thresholds", _DEPRECATED)
        if old_max == _DEPRECATED and old_guess == _DEPRECATED:
            return Thresholds.parse(choice)
        if choice not in ("guess", "auto", None):
            Thresholds.parse(choice)  # a bad value is refused as such first
            raise ValueError(
                f"thresholds={choice!r} decides the thresholds alone: leave max_thresholds and "
                "guess_thresholds (deprecated) unset, or set thresholds='guess' to use them "
                f"(got max_thresholds={old_max!r}, guess_thresholds={old_guess!r})"
            )
        most: Any = None if old_max == _DEPRECATED else old_max
        rounds: Any = GUESS_ROUNDS if old_guess == _DEPRECATED else old_guess
        if rounds is None:
            policy = Thresholds("all", exact_search=False) if most is None else Thresholds(most)
        else:
            policy = Thresholds("guess", rounds=rounds, max_per_column=most)
        if warn_old:  # once per fit, by its first reading
            old = ", ".join(
                f"{name}={value!r}"
                for name, value in (("max_thresholds", old_max), ("guess_thresholds", old_guess))
                if value != _DEPRECATED
            )
            warn(
                f"{type(self).__name__}: {old} is deprecated and will be removed; use "
                f"thresholds={_spelled(policy)} (the same thresholds)",
                FutureWarning,
            )
        return policy

    def _refuse_all_thresholds(self, why: str) -> None:
        """ValueError for an estimator that cannot run the exact search over every threshold."""
        if getattr(self, "thresholds", None) == "all":
            raise ValueError(
                f"{type(self).__name__} does not take thresholds='all': {why}. The optimum over "
                "every threshold is also reached with "
                "thresholds=odtkit.datasets.Thresholds('all', exact_search=False) "
                "(every midpoint binarized; slow on continuous tables)"
            )

    def _certificate_kind(self) -> str:
        """Over what a certified model is optimal (:meth:`odtkit.Task.certificate`: the one
        rule of the API, the CLI and ``compare``)."""
        return self._fit_task.certificate(exact=getattr(self, "_exact_search", False))

    def _feature_specs(self) -> Any:
        """What each binary feature tests: the Binarizer's descriptions, else plain names."""
        return self.feature_names_ if self.binarizer_ is None else self.binarizer_

    def _transform(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "n_features_in_")
        X = self._check_X(X, reset=False, allow_nan=self.binarizer_ is not None)
        if self.binarizer_ is not None:
            return self.binarizer_.transform(X)
        return as_binary_matrix(X, "X")


class OptimalTreeClassifier(_BinaryInputMixin, ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """A certifiably optimal sparse decision tree: ``misclassified/n + lam * leaves`` minimal.

    Parameters
    ----------
    lam : float, default=0.01
        Penalty per leaf on the n-normalized loss.
    max_depth : int or None, default=3
        Maximum number of splits on a path (:data:`odtkit.methods.DEFAULT_MAX_DEPTH`, as in
        ``odtkit fit`` and the CV and fair estimators). None = unlimited (the search only; the
        MIP methods need a depth; on continuous tables an unlimited search can be slow).
        0 is the single leaf, a baseline the search methods take (a MIP needs 1 or more), and
        a ``y`` of a single class fits the leaf predicting it: one rule with ``odtkit fit``
        (:func:`odtkit.validation.min_depth`), each said by a TrivialAnswerWarning.
    method : {TREE_METHODS}, default="dp"
        A name of :data:`odtkit.methods.METHODS` whose optimum is the stated problem's:
        native search (dynamic programming or OSDT branch-and-bound) or an exact MIP
        formulation solved by ``backend`` and warm-started from the search core.
        ``"auto"``: ``"dp"``, unless ``constraints`` holds one the search cannot certify;
        then a MIP that carries them (PathOCT when it fits ``time_limit``, else FlowOCT;
        :func:`odtkit.solve`).
    backend : str, default="highs"
        MIP backend, a name of :func:`odtkit.solvers.registered_backends`; ignored by the
        search methods.
    time_limit : float or None, default=60.0
        Seconds for the whole fit, binarization (threshold guessing) included
        (:data:`odtkit.methods.DEFAULT_TIME_LIMIT`); on expiry the best tree so far is kept,
        ``status_`` says why and a :class:`LimitReachedWarning` states the gap. If it runs out
        while binarizing, the columns not yet examined yield no feature
        (``binarizer_.truncated_``) and the fit still returns its best tree, flagged
        ``time_limit``. None: no limit.
    memory_limit_mb : float or None, default=None
        Memory budget of the native searches (the search itself, and the MIP's warm start).
        None: 75 % of what the process can still get when the search starts (the machine's
        available memory, ``ulimit -v``, a container's limit; ``$ODTKIT_MEMORY_LIMIT_MB``
        overrides). At the budget the best tree so far is kept with status ``memory_limit``.
        HiGHS has no memory limit: the MIP itself is bounded by ``time_limit`` only.
    binarize : {"auto", True, False}, default="auto"
        Whether ``X`` goes through :class:`~odtkit.datasets.Binarizer` at all: "auto" unless
        every cell is 0/1 (its columns are then the features as they are), True always, False
        never (the cells must be 0/1). ``thresholds`` says which thresholds a binarized
        numeric column gets; it has no effect on 0/1 input used as it is.
    thresholds : {"auto", "guess", "all"}, int or odtkit.datasets.Thresholds, default="auto"
        Which thresholds of the numeric columns the tree may use, the one threshold setting
        (:class:`odtkit.datasets.Thresholds`, shared with ``odtkit fit --thresholds`` and
        :func:`odtkit.compare`):

        * ``"auto"`` (the default): ``"all"`` by the exact search wherever it runs (method
          ``"dp"`` or ``"auto"`` at a limited depth, no ``constraints`` or ``cost_matrix``),
          else ``"guess"``; ``certificate_`` says which. Chosen by measurement
          (``benchmarks/results/threshold_default.md``, issue 41): at the default depth and
          ``time_limit`` the exact search certifies all 11 benchmark tables (0.08-7.8 s CPU;
          the guess 0.17-0.65 s) with about the same held-out accuracy, and its certificate
          holds over every threshold. If a limit
          stops it, the guessed-threshold tree is asked in the time kept back for it and the
          better tree is kept, with the bound over every threshold;
        * ``"guess"``: those a 40-round depth-1 gradient-boosted reference model splits on
          (McTavish et al. 2022); the tree is certified optimal *over those thresholds*
          (``certificate_ == "guessed thresholds"``). Measured on breast cancer (5-fold CV,
          lam=0.002): 28-40 features instead of 15,310, the search certifies in 0.2 s, and
          test accuracy is 0.949 against 0.935 for scikit-learn's CART with the same number
          of leaves (``benchmarks/continuous_defaults.py``). ``Thresholds("guess",
          rounds=R)`` takes another number of rounds (at most 100,000; the guess is exact in
          float64 and its memory bounded, see :class:`~odtkit.datasets.Binarizer`);
        * ``"all"``: every threshold, by the exact native search over the sorted columns
          (:func:`odtkit.core.search_numeric` with ``start="auto"``: a quarter of a
          ``time_limit`` of 4 s or more is kept back for the guessed-threshold tree, asked
          only if the limit stops the search): the tree is certified optimal over *all* thresholds
          (``certificate_ == "all thresholds"``). Method ``"dp"`` only (a MIP needs a
          binarized table: ValueError). With
          ``max_depth=None`` (the exact search is depth-limited) every midpoint is binarized
          and searched by dp instead: the same optimum, much slower
          (``Thresholds("all", exact_search=False)`` asks for that at any depth). 0/1 input
          is searched as it is (every threshold of a 0/1 column is its one split);
        * an int N: at most N thresholds per column, at quantiles (``certificate_ ==
          "binarization"``).

        None is "guess".
    max_thresholds, guess_thresholds : deprecated
        The old spelling of ``thresholds`` (a FutureWarning at ``fit``; removed in a later
        release). With ``thresholds`` left at "guess" they map to: ``guess_thresholds=R``
        -> ``Thresholds("guess", rounds=R)``; ``guess_thresholds=None`` ->
        ``Thresholds("all", exact_search=False)`` (every midpoint binarized, as before);
        ``max_thresholds=N`` with ``guess_thresholds=None`` -> ``N``; ``max_thresholds=N``
        alone (guessing on, its old default) -> ``Thresholds("guess", max_per_column=N)``.
        Set together with another ``thresholds``: ValueError naming both.

    constraints : list or None, default=None
        Side constraints of :mod:`odtkit.constraints` (``MinLeafSupport``, ``MaxLeaves``,
        ``FeatureBudget``, ``ForbidFeatures``, ``RequireFeatures``, ``ClassRecall``,
        ``FalsePositiveRate``, ``Predict``, ``odtkit.Fairness``; docs/constraints.md),
        resolved once against the binarized table: a feature name is a column of ``X`` (all
        its thresholds) or one binary feature. A method that cannot certify them is refused
        (``method="auto"`` picks one that can); the fitted tree satisfies every one, re-checked
        by :func:`odtkit.metrics.constraint_violations`. With constraints the exact search over
        every threshold sits out (``thresholds="all"`` binarizes every midpoint).
    class_weight : dict, "balanced" or None, default=None
        Weights per class, as in scikit-learn: each row's weight is multiplied by its class's
        (``"balanced"``: ``n / (n_classes * n_c)``, computed on the unweighted labels), so the
        misclassified share the tree minimizes is cost-sensitive; with ``"balanced"`` and
        ``lam=0`` it is ``1 - balanced accuracy``. ``objective_`` is measured with these
        weights.
    cost_matrix : array-like of shape (n_classes, n_classes), "balanced" or None, default=None
        Misclassification costs (:class:`odtkit.costs.CostMatrix`): ``cost_matrix[t, k]`` is
        what predicting ``classes_[k]`` costs for a row of class ``classes_[t]`` (per unit of
        weight), and the tree minimizes ``cost / n + lam * leaves``; ``"balanced"``
        (:class:`odtkit.costs.BalancedError`) minimizes ``1 - balanced accuracy`` (with the
        sample weights) plus ``lam * leaves``. The search certifies every two-class matrix and
        every matrix whose costs of a wrong prediction depend on the true class only; a general
        matrix over three classes or more goes to a MIP (``method="auto"``). ``objective_`` is
        measured with the costs.

    Attributes
    ----------
    tree_ : Tree
    result_ : odtkit.results.Result of the fit (objective, bound, status, trace; for a MIP
        also the backend's ``solution``).
    status_ : odtkit.Status
        How the fit stopped (``optimal``, ``time_limit``, ``memory_limit``, ...).
    objective_, lower_bound_ : float
        The fitted tree's objective on the training data and a valid lower bound on the optimum.
    certified_ : bool
        The tree is proven optimal (``status_ == "optimal"``).
    certificate_ : odtkit.Certificate or None
        Over what the tree is proven optimal (a StrEnum: compares equal to the strings
        "all thresholds", "guessed thresholds", "binarization"): every threshold of the
        numeric columns (the exact search of ``thresholds="all"``, every midpoint, or a table
        whose feature columns are all 0/1, used as they are or passed through the Binarizer),
        the guessed thresholds, or the at most N per column; None when ``certified_`` is
        False. The one rule of the API, ``odtkit fit`` and :func:`odtkit.compare`
        (:meth:`odtkit.datasets.Thresholds.certificate`).
    classes_ : ndarray
    binarizer_ : Binarizer or None
    feature_names_ : list of str
        The binary features the tree splits on (the Binarizer's outputs, or the input columns).
    n_features_in_, feature_names_in_
        The input table's columns (scikit-learn convention).
    leaf_distribution_ : ndarray (n_leaves, n_classes) of training class fractions per leaf.
    node_counts_ : ndarray (n_nodes, n_classes)
        Weighted training class counts per node, nodes in pre-order (root 0, then the whole
        ``x = 0`` subtree, then the ``x = 1`` subtree): the numbering of :meth:`apply` and
        :meth:`decision_path`.
    feature_importances_ : ndarray (n_features_in_,)
        Weighted Gini impurity decrease per *input column* (summed over the binary features
        derived from it), normalized to sum to 1; all zeros for a single leaf. See
        :meth:`compute_feature_importances` (also the misclassification decrease).
    """

    _parameter_constraints = _ParameterConstraints(
        _tree_constraints(TREE_METHODS, [*_DEPTH, None], auto=True)
    )

    def __init__(
        self,
        lam: float = 0.01,
        max_depth: int | None = DEFAULT_MAX_DEPTH,
        method: str = "dp",
        backend: str = "highs",
        time_limit: float | None = DEFAULT_TIME_LIMIT,
        binarize: bool | str = "auto",
        max_thresholds: int | None | str = _DEPRECATED,
        guess_thresholds: int | None | str = _DEPRECATED,
        memory_limit_mb: float | None = None,
        thresholds: str | int | Thresholds | None = "auto",
        constraints: Any = None,
        class_weight: dict[Any, float] | str | None = None,
        cost_matrix: Any = None,
    ) -> None:
        self.lam = lam
        self.max_depth = max_depth
        self.method = method
        self.backend = backend
        self.constraints = constraints
        self.class_weight = class_weight
        self.cost_matrix = cost_matrix
        self._keep_table_parameters(locals())

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> OptimalTreeClassifier:
        """Fit the optimal tree on ``X`` (binary, or raw when ``binarize`` allows) and ``y``."""
        self._validate_params()  # scikit-learn's check against _parameter_constraints
        lam = check_lambda(self.lam)
        depth = check_depth(self.max_depth)
        # a TypeError names what is not a constraint, a ValueError a bad cost_matrix, before
        # anything is binarized
        self._stated_constraints()
        method: Method | str = (
            "auto" if self.method == "auto" else get_method(self.method, TREE_METHODS)
        )
        policy = self._thresholds_policy(warn_old=True)
        if policy.every and not isinstance(method, str) and method.name != "dp":
            raise ValueError(
                f"thresholds='all' runs the exact search over every threshold, method 'dp' "
                f"only; method={self.method!r} needs a binarized table (thresholds='guess' "
                "or an int)"
            )
        # the exact search runs at a limited depth only (unlimited: every midpoint binarized
        # for "all", the guess for "auto"), for dp and for "auto" without stated constraints
        # or costs; "auto" binarizes by the guess for every other method
        exact = (
            policy.runs_exact_search
            and depth is not None
            and (method == "auto" or getattr(method, "name", None) == "dp")
            and not self._stated_constraints()
        )
        deadline = self._start_clock(policy, exact=exact)
        X, y, weights = self._checked_input(X, y, sample_weight)
        task = self._task(X, y, weights, deadline, policy, exact=None if exact else False)
        result = self._solved(task, method, lam, depth)
        data, self.binarizer_ = task.features_of(result)
        if result.binarizer is not None:  # the exact search's: the thresholds its tree uses
            self._exact_search = True
            self.classes_ = data.classes
            self.feature_names_ = list(data.feature_names)
        self.result_ = result
        self._keep_tree(data)
        # what rashomon() builds the set over: the fitted features, lam and depth as checked
        self._rashomon_problem = (data, lam, depth)
        r = self.result_
        _record_outcome(self, r.status, r.objective, r.lower_bound, "tree")
        self._drop_raw_table()
        return self

    def _solved(self, task: Task, method: Method | str, lam: float, depth: int | None) -> Any:
        """:func:`odtkit.solve` of the fit's task; a MIP that returned no tree (and had no
        warm start to fall back on) is a RuntimeError: an estimator must hold a model."""
        result = solve(
            task,
            method=method,
            backend=self.backend,
            lam=lam,
            max_depth=depth,
            memory_limit_mb=self.memory_limit_mb,
        )
        if not result.has_model:
            raise RuntimeError(
                f"{result.method} on {self.backend} returned no tree (status "
                f"{result.status.value!r}){': ' + result.message if result.message else ''}"
            )
        return result

    def _keep_tree(self, data: Dataset, tree: Any = None) -> None:
        """``tree_`` (``tree``, else the fitted result's), its leaf class distributions, the
        per-node training counts and the feature importances."""
        self.tree_ = self.result_.model if tree is None else tree
        labels = np.array([label for _, label in self.tree_.leaves()])
        self.leaf_distribution_ = _class_distribution(
            self.tree_.apply(data.X), self.tree_.n_leaves, labels, data
        )
        rows = self.tree_.node_rows(data.X)
        counts = np.zeros((len(rows), data.n_classes))
        for node, idx in enumerate(rows):
            counts[node] = np.bincount(data.y[idx], data.weights[idx], minlength=data.n_classes)
        self.node_counts_ = counts
        self.feature_importances_ = self.compute_feature_importances()

    # -- sklearn.tree's inspection API -------------------------------------------------------

    def get_depth(self) -> int:
        """Splits on the longest root-to-leaf path (a single leaf has depth 0)."""
        check_is_fitted(self, "tree_")
        depth: int = self.tree_.depth
        return depth

    def get_n_leaves(self) -> int:
        """Number of leaves of the fitted tree."""
        check_is_fitted(self, "tree_")
        n_leaves: int = self.tree_.n_leaves
        return n_leaves

    def apply(self, X: Any) -> np.ndarray:
        """The node id of the leaf each row of ``X`` reaches, shape (n_samples,).

        Nodes are numbered in pre-order, as in :mod:`sklearn.tree`: the root is 0, then the
        whole ``x = 0`` (left) subtree, then the ``x = 1`` (right) subtree; the rows of
        :attr:`node_counts_` follow the same numbering.
        """
        check_is_fitted(self, "tree_")
        Xb = np.ascontiguousarray(self._transform(X), dtype=bool)
        nodes, _, _ = _preorder(self.tree_)
        out = np.empty(Xb.shape[0], dtype=np.int64)
        for node, idx in enumerate(self.tree_.node_rows(Xb)):
            if nodes[node].is_leaf:
                out[idx] = node
        return out

    def decision_path(self, X: Any) -> Any:
        """Indicator of the nodes each row passes through: scipy CSR, (n_samples, n_nodes).

        Entry ``[i, j]`` is 1 when row ``i`` reaches node ``j`` (pre-order numbering, as in
        :meth:`apply`).
        """
        from scipy.sparse import csr_matrix

        check_is_fitted(self, "tree_")
        Xb = np.ascontiguousarray(self._transform(X), dtype=bool)
        rows = self.tree_.node_rows(Xb)
        row_ids = np.concatenate(rows)
        node_ids = np.repeat(np.arange(len(rows)), [idx.size for idx in rows])
        ones = np.ones(row_ids.size, dtype=np.int64)
        return csr_matrix((ones, (row_ids, node_ids)), shape=(Xb.shape[0], len(rows)))

    def compute_feature_importances(
        self, criterion: str = "gini", normalize: bool = True
    ) -> np.ndarray:
        """Impurity decrease of the fitted tree's splits per input column (training data).

        For each split ``t`` with children ``L``, ``R`` the decrease is
        ``W_t i(t) - W_L i(L) - W_R i(R)`` (``W`` the weighted training count of a node), summed
        over the splits on each binary feature and then over the binary features derived from
        each input column (a Binarizer's thresholds and categories of that column).

        Parameters
        ----------
        criterion : {"gini", "error"}, default="gini"
            ``"gini"``: Gini impurity, as :mod:`sklearn.tree` (the ``feature_importances_``
            default). ``"error"``: the misclassification rate of the node's majority class,
            i.e. the training mistakes each split removes (the quantity the objective counts;
            a split that only purifies both sides without changing a majority scores 0).
        normalize : bool, default=True
            Divide by the total (all zeros stay zeros, e.g. for a single leaf); else the
            decreases are fractions of the total training weight.

        Returns
        -------
        ndarray of shape (n_features_in_,)
        """
        check_is_fitted(self, "node_counts_")
        if criterion not in ("gini", "error"):
            raise ValueError(f"criterion must be 'gini' or 'error', got {criterion!r}")
        nodes, left, right = _preorder(self.tree_)
        impurity = _weighted_impurity(self.node_counts_, criterion)
        split = np.flatnonzero(left >= 0)
        decrease = impurity[split] - impurity[left[split]] - impurity[right[split]]
        features = np.array([nodes[j].feature for j in split], dtype=np.int64)
        per_feature = np.zeros(len(self.feature_names_))
        np.add.at(per_feature, features, np.maximum(decrease, 0.0))
        out = np.zeros(self.n_features_in_)
        np.add.at(out, self._source_columns(), per_feature)
        total = out.sum()
        if normalize:
            return out / total if total > 0 else out
        root = float(self.node_counts_[0].sum())
        return out / root if root > 0 else out

    def _source_columns(self) -> np.ndarray:
        """The input column each binary feature is derived from."""
        if self.binarizer_ is None:
            return np.arange(len(self.feature_names_))
        b = self.binarizer_
        names = getattr(b, "feature_names_in_", None)
        if names is None:
            names = [f"x{j}" for j in range(b.n_features_in_)]
        position = {str(name): j for j, name in enumerate(names)}
        return np.array([position[s.source] for s in b.get_feature_specs()], dtype=np.int64)

    def _render_parts(self) -> tuple[Any, Any, Any, np.ndarray]:
        """(model, feature descriptions, class names, training counts per leaf) for export."""
        check_is_fitted(self, "tree_")
        _, left, _ = _preorder(self.tree_)
        return self.tree_, self._feature_specs(), self.classes_, self.node_counts_[left < 0]

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class values (the original labels of ``y``)."""
        check_is_fitted(self, "tree_")
        labels: np.ndarray = self.classes_[self.tree_.predict(self._transform(X))]
        return labels

    def predict_proba(self, X: Any) -> np.ndarray:
        """Training class fractions of the leaf each row reaches.

        ``predict`` is the class with the largest fraction, except in a fair tree
        (:class:`FairTreeClassifier`) whose constraint labels a leaf against its majority: there
        the fractions stay the data's and ``predict`` is the constrained label.
        """
        check_is_fitted(self, "tree_")
        fractions: np.ndarray = self.leaf_distribution_[self.tree_.apply(self._transform(X))]
        return fractions

    def to_text(self) -> str:
        """The fitted tree with feature names and class values."""
        check_is_fitted(self, "tree_")
        text: str = self.tree_.to_text(self._feature_specs(), self.classes_)
        return text

    def rashomon(
        self,
        epsilon: float = 0.05,
        *,
        absolute: bool = False,
        leaves: str = "any",
        time_limit: float | None = None,
        X: Any = None,
    ) -> Any:
        """Every tree as good as the fitted one, within ``epsilon``: the Rashomon set.

        :func:`odtkit.rashomon` on the problem this estimator was fitted on: the fitted binary
        features (``feature_names_``: the Binarizer's outputs for a raw table, or the 0/1
        input columns), the training rows and weights, and ``lam`` and ``max_depth`` as they
        were at ``fit``. The set is ``{T : R(T) <= (1 + epsilon) * OPT}`` (``OPT + epsilon``
        with ``absolute=True``) over the trees of depth <= ``max_depth`` on those features,
        OPT certified by the native search whatever ``method`` fitted the tree (a certified
        ``tree_`` scores OPT). With threshold guessing (``thresholds="guess"``) the set is
        over the guessed thresholds, exactly as the fitted tree is optimal over them; a Binarizer
        cut short by the time limit (``binarizer_.truncated_``) leaves it over the features
        built in time.

        Parameters
        ----------
        epsilon : float, default=0.05
            Slack over the optimum, ``>= 0``: relative (0.05 = 5 % above OPT), or absolute in
            objective units with ``absolute=True``.
        absolute : bool, default=False
        leaves : {"any", "majority"}, default="any"
            What a leaf may predict: any class, or only a class of maximal training weight.
        time_limit : float or None, default=None
            Seconds for building the set; None: the estimator's own ``time_limit`` (finite by
            default), ``math.inf``: no limit. A limit (or Ctrl-C) returns a partial set of
            genuine members with ``complete == False`` and emits a
            :class:`LimitReachedWarning`.
        X : DataFrame or array-like, optional
            The training table, needed (and read) only after a fit by the exact search over
            every threshold (``certificate_ == "all thresholds"``: ``thresholds="all"``, or
            the default ``"auto"`` where the search runs). Its ``binarizer_`` holds only the
            fitted tree's thresholds, so the set is built over the thresholds of the
            estimator's policy (the guessed ones for ``"auto"``, every midpoint for
            ``"all"``) plus the tree's own, binarized from ``X``; the set's ``binarizer``
            encodes new rows for its trees. OPT is the exact optimum still: the fitted tree
            lies in that space and no tree of it beats the optimum over every threshold.

        Returns
        -------
        odtkit.RashomonSet
            With ``constraints`` stated at ``fit``, the set of the good trees that meet them
            (OPT: the constrained optimum; ``rashomon(constraints=)``). Its trees index the
            fitted binary features and predict class codes
            (``classes_[code]`` is the label). They read binary rows, so for a raw table
            predict through the fitted Binarizer::

                rset = est.rashomon(epsilon=0.02)
                labels = est.classes_[rset.predictions(est.binarizer_.transform(X))]

            (``binarizer_`` is None when the estimator was fitted on 0/1 columns: pass those
            rows as they are.) :func:`odtkit.export_text` prints a member with the
            estimator's feature descriptions: ``export_text(rset[i], est.binarizer_ or
            est.feature_names_, est.classes_)``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            After a fit by the exact search without ``X`` (its ``binarizer_`` holds only the
            fitted tree's thresholds: a set over them would miss every good tree that splits
            elsewhere), or with an ``X`` that is not the training table; ``X`` after any
            other fit. Also for a bad ``epsilon``, ``leaves`` or ``time_limit``, and for a
            fitted constraint the set cannot take
            (:func:`odtkit.core.rashomon.rashomon_refusal`).
        """
        from odtkit.rashomon import rashomon

        check_is_fitted(self, "tree_")
        exact = bool(getattr(self, "_exact_search", False))
        if exact and X is None:
            raise ValueError(
                f"{type(self).__name__}.rashomon: the estimator was fitted by the exact search "
                "over every threshold (thresholds='all', or the default 'auto' where the "
                "search runs), whose binarizer_ holds only the thresholds the fitted tree "
                "uses; pass the training table, rashomon(epsilon, X=X), for the set over the "
                "policy's thresholds plus the tree's own"
            )
        if not exact and X is not None:
            raise ValueError(
                f"{type(self).__name__}.rashomon: X is read only after a fit by the exact "
                "search; this estimator's set is over its fitted features already"
            )
        if not isinstance(absolute, (bool, np.bool_)):
            raise TypeError(f"absolute must be True or False, got {absolute!r}")
        own = time_limit is None
        limit = check_positive_number(self.time_limit if own else time_limit, "time_limit")
        problem = getattr(self, "_rashomon_problem", None)
        if problem is None:  # unpickled from an odtkit that did not keep the fitted rows
            raise ValueError(
                f"{type(self).__name__}.rashomon needs the fitted training rows, which this "
                "estimator (fitted by an older odtkit) did not keep: fit it again"
            )
        data, lam, depth = problem
        # the fit's side constraints (resolved on these features): the set of the good trees
        # that meet them, or a ValueError naming one the set cannot take, never ignored
        task = getattr(self, "_fit_task", None)
        binarizer = None
        if exact:
            assert task is not None
            data, binarizer = self._policy_and_tree_features(X, data, task)
        rset = rashomon(
            data,
            lam=lam,
            max_depth=depth,
            epsilon=epsilon,
            absolute=bool(absolute),
            leaves=leaves,
            constraints=None if task is None else task.constraints,
            time_limit=None if limit is None or math.isinf(limit) else limit,
            memory_limit_mb=self.memory_limit_mb,
        )
        if not rset.complete:
            # Status is a StrEnum: the set's status string looks its member up
            stopped = _STOPPED_BY.get(str(rset.status), str(rset.status))
            source = "the estimator's time_limit" if own else "time_limit"
            if str(rset.status) == Status.TIME_LIMIT and limit is not None:
                stopped += f" ({source}={limit:g} s)"
            warn(
                f"{type(self).__name__}.rashomon stopped at {stopped} before the set was "
                f"complete: it holds {rset.count()} genuine members (objective <= "
                f"{rset.bound:.6g}), not every one; complete is False. Raise time_limit "
                "(math.inf: none), or lower epsilon or max_depth.",
                LimitReachedWarning,
            )
        if binarizer is not None:
            rset.binarizer = binarizer
        return rset

    def _policy_and_tree_features(
        self, X: Any, data: Dataset, task: Task
    ) -> tuple[Dataset, Binarizer]:
        """After a fit by the exact search: the training rows ``data`` binarized over the
        thresholds of the estimator's policy plus the fitted tree's own, and that Binarizer.
        ``X`` must be the training table: it is binarized by ``binarizer_`` to the fitted
        rows, and every threshold of the tree must be a midpoint of its columns."""
        X = self._check_X(X, reset=False, allow_nan=True)
        exact = self.binarizer_
        assert exact is not None  # the exact search reads a raw table
        if not np.array_equal(np.asarray(exact.transform(X), dtype=bool), data.X):
            raise ValueError(
                f"{type(self).__name__}.rashomon: X is not the table this estimator was "
                "fitted on (its rows binarize to other features than the fitted ones)"
            )
        weights = data.sample_weight
        policy = task.fitted_binarizer(X, data.y, weights)
        # every midpoint of the rows the exact search read (weight-0 rows left out as there),
        # restricted to the policy's thresholds plus the tree's: the tree's are among them
        every = _fitted(Thresholds("all"), X, data.y, weights, task.categorical)
        wanted = {
            name: np.union1d(policy.thresholds_.get(name, []), exact.thresholds_.get(name, []))
            for name in every.thresholds_
        }
        try:
            union = every._restricted(wanted)
        except ValueError as exc:
            raise ValueError(
                f"{type(self).__name__}.rashomon: X is not the table this estimator was "
                f"fitted on ({exc})"
            ) from None
        names = tuple(str(n) for n in union.get_feature_names_out())
        rows = np.ascontiguousarray(union.transform(X), dtype=bool)
        return Dataset(rows, data.y, data.classes, names, data.name, weights), union


class OptimalTreeClassifierCV(OptimalTreeClassifier):
    """An optimal tree whose λ is chosen by cross-validation over the exact regularization path.

    ``fit`` computes :func:`odtkit.core.regularization_path` on the whole training set: its
    segments are the candidates (every λ in a segment gives the same tree, so a finite list of
    trees is the whole search space). Each fold's own path gives, for every candidate, the tree
    that fold would fit (its tree at the segment's representative λ: the midpoint, or 1.5x the
    start of the last, single-leaf segment), scored on the held-out fold. The best mean score
    wins, ties going to fewer leaves; the refit is the full path's tree there, so the whole fit
    is ``cv + 1`` paths and no further solve.

    Parameters
    ----------
    max_depth : int or None, default=3
        Maximum splits on a path (None: unlimited, usually slow at small λ).
    cv : int or cross-validation splitter, default=5
        As in scikit-learn (an int means stratified k-fold; shuffled with ``random_state``).
    lam_min : float, default=0.0
        Smallest λ considered.
    time_limit : float or None, default=60.0
        Seconds for the whole fit (:data:`odtkit.methods.DEFAULT_TIME_LIMIT`): binarization and
        the paths (the full data's, then each fold's) share it, each path still to run getting
        an equal share of what is left. A path stopped early is the best known trees:
        ``certified_`` says whether the refit tree is proven optimal, and a
        :class:`LimitReachedWarning` says which paths stopped.
    memory_limit_mb : float or None, default=None
        Memory budget of each path's searches, as in :class:`OptimalTreeClassifier`.
    random_state : int or None, default=0
        Shuffling of the folds when ``cv`` is an int.
    binarize, max_thresholds, guess_thresholds
        As in :class:`OptimalTreeClassifier` (the last two deprecated). Each fold fits its own
        Binarizer on its training rows (threshold guessing reads labels: no held-out label may
        shape the features a fold is scored on), and its path runs on those features; the
        refit's Binarizer (``binarizer_``) is fitted on all rows.
    thresholds : {"guess"}, int or odtkit.datasets.Thresholds, default="guess"
        As in :class:`OptimalTreeClassifier`, except ``"all"`` (ValueError): the exact search
        over every threshold has no regularization path; ``Thresholds("all",
        exact_search=False)`` binarizes every midpoint, whose path is optimal over all
        thresholds (slow on continuous tables).

    Attributes
    ----------
    best_lam_ : float
        The chosen λ (the representative λ of the best segment).
    best_index_ : int
        Its row in ``cv_results_``.
    best_score_ : float
        Its mean held-out accuracy (weighted by ``sample_weight`` when given).
    cv_results_ : dict of arrays
        One entry per candidate segment: ``param_lam``, ``lam_lo``, ``lam_hi``, ``n_leaves``,
        ``split{k}_test_score``, ``mean_test_score``, ``std_test_score``, ``rank_test_score``,
        ``mean_train_score``; ``pandas.DataFrame(cv_results_)`` tabulates it.
    path_ : RegularizationPath
        The full training set's path (``path_.to_frame()``).
    interrupted_ : bool
        Ctrl-C ended the fit early: the tree was chosen on the folds scored by then.
    status_ : odtkit.Status
        The full path's status (``optimal`` when every segment is certified).
    objective_, lower_bound_, certified_
        The refit tree's objective at ``best_lam_``, a valid lower bound there, and whether
        that tree is proven optimal (its segment is certified).
    certificate_
        As in :class:`OptimalTreeClassifier`.
    fold_status_ : list of odtkit.Status
        Each scored fold's path status.
    tree_, classes_, binarizer_, feature_names_, leaf_distribution_, node_counts_
        As in :class:`OptimalTreeClassifier`; ``tree_`` is ``path_.tree_at(best_lam_)``.
    feature_importances_
        As in :class:`OptimalTreeClassifier`, of the refit tree.
    """

    _parameter_constraints = _ParameterConstraints(
        lambda: {
            "max_depth": [*_DEPTH, None],
            "cv": ["cv_object"],
            "lam_min": _PENALTY,
            "random_state": ["random_state"],
        }
    )

    def __init__(
        self,
        max_depth: int | None = DEFAULT_MAX_DEPTH,
        cv: Any = 5,
        lam_min: float = 0.0,
        time_limit: float | None = DEFAULT_TIME_LIMIT,
        random_state: int | None = 0,
        binarize: bool | str = "auto",
        max_thresholds: int | None | str = _DEPRECATED,
        guess_thresholds: int | None | str = _DEPRECATED,
        memory_limit_mb: float | None = None,
        thresholds: str | int | Thresholds | None = "guess",
    ) -> None:
        self.max_depth = max_depth
        self.cv = cv
        self.lam_min = lam_min
        self.random_state = random_state
        self._keep_table_parameters(locals())

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> OptimalTreeClassifierCV:
        """Compute the paths, score every candidate on the folds, keep the best tree."""
        from sklearn.model_selection import StratifiedKFold, check_cv

        from odtkit.core import regularization_path

        self._validate_params()  # scikit-learn's check against _parameter_constraints

        depth = check_depth(self.max_depth)
        lam_min = check_lambda(self.lam_min, "lam_min")
        deadline, data = self._start_fit(
            X, y, sample_weight, "the exact numeric search has no regularization path"
        )
        X_checked = self._check_X(X, reset=False, allow_nan=self.binarizer_ is not None)
        if isinstance(self.cv, int) and not isinstance(self.cv, bool):
            splitter: Any = StratifiedKFold(self.cv, shuffle=True, random_state=self.random_state)
        else:
            splitter = check_cv(self.cv, data.y, classifier=True)
        # time_limit covers the whole fit: each path still to run gets an equal share of what
        # is left (the full data's, then one per fold)
        paths_left = [1 + splitter.get_n_splits(data.X, data.y)]

        def path_of(rows: Dataset) -> Any:  # the full data's path and each fold's, alike
            left = deadline.limit_left()
            share = None if left is None else max(left / max(paths_left[0], 1), 1e-3)
            paths_left[0] -= 1
            return regularization_path(
                rows,
                max_depth=depth,
                lam_min=lam_min,
                time_limit=share,
                memory_limit_mb=self.memory_limit_mb,
            )

        path = path_of(data)
        segments = path.segments
        lam_lo = np.array([s.lam_lo for s in segments])
        lam_hi = np.array([s.lam_hi for s in segments])
        last = max(1.5 * lam_lo[-1], lam_lo[-1] + 1e-3)
        candidates = np.where(np.isfinite(lam_hi), (lam_lo + lam_hi) / 2, last)
        scores, train_scores, fold_status = [], [], []
        # Ctrl-C ends the folds (the path it interrupted is still scored): the choice is made
        # on the folds scored so far, and interrupted_ says so
        with stop_on_interrupt() as ctrl_c:
            ctrl_c.check(path.status)
            for train_idx, test_idx in splitter.split(data.X, data.y):
                with charged(deadline):
                    train, test = self._fold_data(X_checked, data, train_idx, test_idx)
                fold_path = path_of(train)
                trees = [fold_path.tree_at(lam) for lam in candidates]
                scores.append([metrics.accuracy(t, test) for t in trees])
                train_scores.append([metrics.accuracy(t, train) for t in trees])
                fold_status.append(fold_path.status)
                ctrl_c.check(fold_path.status)
        if not scores:
            raise KeyboardInterrupt("interrupted (Ctrl-C) before a fold was scored")
        self.interrupted_ = ctrl_c.interrupted
        scores_arr = np.array(scores)
        mean, std = scores_arr.mean(axis=0), scores_arr.std(axis=0)
        leaves = np.array([s.n_leaves for s in segments])
        # best mean score; on ties the simpler tree (fewer leaves)
        order = np.lexsort((leaves, -mean))
        best = int(order[0])
        ranks = np.empty(len(segments), dtype=int)
        ranks[order] = np.arange(1, len(segments) + 1)
        self.cv_results_ = {
            "param_lam": candidates,
            "lam_lo": lam_lo,
            "lam_hi": lam_hi,
            "n_leaves": leaves,
            **{f"split{k}_test_score": scores_arr[k] for k in range(len(scores_arr))},
            "mean_test_score": mean,
            "std_test_score": std,
            "rank_test_score": ranks,
            "mean_train_score": np.array(train_scores).mean(axis=0),
        }
        self.best_index_ = best
        self.best_lam_ = float(candidates[best])
        self.best_score_ = float(mean[best])
        self.path_ = path
        self.fold_status_ = fold_status
        self._keep_tree(data, segments[best].tree)
        chosen = segments[best]
        objective = chosen.objective(self.best_lam_)
        stopped = [s for s in fold_status if s.stopped_early]
        extra = ""
        if stopped:
            extra = (
                f"{len(stopped)} of the {len(fold_status)} fold paths stopped early "
                f"({', '.join(sorted({s.value for s in stopped}))}): λ was chosen on the best "
                "known fold trees, not proven optimal ones."
            )
        status = path.status
        cut = self._fit_task.binarization_cut()
        if cut is not None:
            status = self._fit_task.binarization_stop(status)
            extra = f"{extra} {cut[0].upper()}{cut[1:]}.".strip()
        _record_outcome(
            self,
            status,
            objective,
            objective - chosen.lower_bound_gap,
            "tree",
            extra=extra,
            certified=chosen.certified and status == path.status,
        )
        self._drop_raw_table()
        return self

    def rashomon(self, *args: Any, **kwargs: Any) -> Any:
        """Not supported: ``best_lam_`` stands for a whole segment of the regularization path
        chosen by held-out score, and the Rashomon set changes with λ inside it, so no one set
        is "the set of the fitted model". NotImplementedError naming the way round:
        ``OptimalTreeClassifier(lam=est.best_lam_, max_depth=...).fit(X, y).rashomon()``."""
        raise NotImplementedError(
            f"{type(self).__name__}.rashomon is not supported: best_lam_ stands for a segment "
            "of the regularization path chosen by cross-validation, and the Rashomon set "
            "changes with lambda inside it; fit OptimalTreeClassifier(lam=best_lam_, "
            "max_depth=...) and call its rashomon() for the set at that lambda"
        )

    def _fold_data(
        self, X: Any, data: Dataset, train_idx: np.ndarray, test_idx: np.ndarray
    ) -> tuple[Dataset, Dataset]:
        """A fold's training and held-out sets, binarized by a Binarizer fitted on the fold's
        training rows only (``guess_thresholds`` reads labels: held-out ones must not count)."""
        if self.binarizer_ is None:  # the input was binary: nothing was fitted
            return data.subset(train_idx), data.subset(test_idx)
        weights = data.sample_weight

        def rows(idx: np.ndarray) -> Any:
            return X.iloc[idx] if hasattr(X, "iloc") else X[idx]

        binarizer = self._fitted_binarizer(
            rows(train_idx), data.y[train_idx], None if weights is None else weights[train_idx]
        )
        names = tuple(str(n) for n in binarizer.get_feature_names_out())

        def part(idx: np.ndarray) -> Dataset:
            Xb = np.ascontiguousarray(binarizer.transform(rows(idx)), dtype=bool)
            w = None if weights is None else weights[idx]
            return Dataset(Xb, data.y[idx], data.classes, names, data.name, w)

        return part(train_idx), part(test_idx)


class FairTreeClassifier(OptimalTreeClassifier):
    """A certifiably optimal tree under a fairness constraint (docs/formulations-trees.md §5).

    Minimises ``misclassified/n + lam * leaves`` over trees of depth <= ``max_depth`` whose
    positive-prediction rates differ by at most ``delta`` between the groups of the protected
    attribute passed to :meth:`fit` as ``sensitive`` (kept out of the splits unless ``X`` holds
    it too). ``lam=0`` (the default) maximises accuracy, as STreeD's group-fairness task does.

    Parameters
    ----------
    notion : {NOTIONS}, default="sp"
        See :class:`odtkit.Fairness`.
    delta : float, default=0.05
        Largest allowed disparity on the training data, in [0, 1].
    positive_class : label, default=1
        The favourable label (a value of ``y``).
    lam : float, default=0.0
    max_depth : int, default=3
        Required: the fair search and MIPs are depth-limited.
    method : {FAIR_METHODS}, default="dp"
        The native fair dynamic program, or a fair MIP warm-started from it.
    backend, time_limit, binarize, max_thresholds, guess_thresholds, memory_limit_mb
        As in :class:`OptimalTreeClassifier` (``max_thresholds`` and ``guess_thresholds``
        deprecated).
    thresholds : {"guess"}, int or odtkit.datasets.Thresholds, default="guess"
        As in :class:`OptimalTreeClassifier`, except ``"all"`` (ValueError): the exact search
        over every threshold takes no fairness constraint; ``Thresholds("all",
        exact_search=False)`` binarizes every midpoint, optimal over all thresholds (slow on
        continuous tables).

    Attributes
    ----------
    fairness_ : odtkit.Fairness
        The constraint as fitted (with the training ``sensitive`` values).
    fairness_gap_ : float
        The fitted tree's disparity on the training data (re-measured, <= delta).
    tree_, result_, classes_, binarizer_, feature_names_, leaf_distribution_, node_counts_
        As in :class:`OptimalTreeClassifier`.
    status_, objective_, lower_bound_, certified_, certificate_, feature_importances_
        As in :class:`OptimalTreeClassifier`.
    """

    _parameter_constraints = _ParameterConstraints(
        lambda: {
            **_tree_constraints(FAIR_METHODS, _DEPTH)(),
            "notion": [str],  # Fairness validates it (any case, long names, hyphens)
            "delta": [Interval(Real, 0, 1, closed="both")],
            "positive_class": "no_validation",
        }
    )

    def __init__(
        self,
        notion: str = "sp",
        delta: float = 0.05,
        positive_class: Any = 1,
        lam: float = 0.0,
        max_depth: int | None = DEFAULT_MAX_DEPTH,
        method: str = "dp",
        backend: str = "highs",
        time_limit: float | None = DEFAULT_TIME_LIMIT,
        binarize: bool | str = "auto",
        max_thresholds: int | None | str = _DEPRECATED,
        guess_thresholds: int | None | str = _DEPRECATED,
        memory_limit_mb: float | None = None,
        thresholds: str | int | Thresholds | None = "guess",
    ) -> None:
        super().__init__(
            lam=lam,
            max_depth=max_depth,
            method=method,
            backend=backend,
            time_limit=time_limit,
            binarize=binarize,
            max_thresholds=max_thresholds,
            guess_thresholds=guess_thresholds,
            memory_limit_mb=memory_limit_mb,
            thresholds=thresholds,
        )
        self.notion = notion
        self.delta = delta
        self.positive_class = positive_class

    # sensitive comes third, before sample_weight (the fair estimators' calling convention since
    # they were added): fit(X, y, sample_weight=w) by keyword, as scikit-learn calls it, still
    # works, a positional third argument is the protected attribute
    def fit(  # type: ignore[override]
        self,
        X: Any,
        y: Any,
        sensitive: Any = None,
        sample_weight: Any = None,
        legit: Any = None,
    ) -> FairTreeClassifier:
        """Fit the optimal δ-fair tree.

        Parameters
        ----------
        X, y, sample_weight
            As in :meth:`OptimalTreeClassifier.fit`.
        sensitive : array-like, shape (n_samples,) or (n_samples, n_attributes)
            The protected attribute(s), one value per row (required).
        legit : array-like, shape (n_samples,), optional
            The legitimate factor of ``notion="csp"``.
        """
        from odtkit.fairness import Fairness

        self._validate_params()  # scikit-learn's check against _parameter_constraints

        lam = check_lambda(self.lam)
        depth = check_depth(self.max_depth, allow_none=False)
        method = get_method(self.method, FAIR_METHODS)
        deadline, data = self._start_fit(
            X, y, sample_weight, "the exact numeric search takes no fairness constraint"
        )
        if sensitive is None:
            raise ValueError("sensitive is required: the protected attribute, one value per row")
        if isinstance(sensitive, str):
            raise TypeError("sensitive must be the attribute's values (an array), not a name")
        self.fairness_ = Fairness(
            self.notion,
            protected=sensitive,
            delta=self.delta,
            positive_class=self.positive_class,
            legit=legit,
        )
        self.result_ = self._solved(
            replace(self._fit_task, fairness=self.fairness_), method, lam, depth
        )
        self._keep_tree(data)
        r = self.result_
        _record_outcome(self, r.status, r.objective, r.lower_bound, "tree")
        self.fairness_gap_ = metrics.fairness_gap(self.tree_, data, self.fairness_)
        self._drop_raw_table()
        return self

    def rashomon(self, *args: Any, **kwargs: Any) -> Any:
        """Not supported: the Rashomon set is built without a fairness constraint, so its
        trees need not be δ-fair; a set of the fitted problem would have to keep only the fair
        ones (the native build has no fairness constraint). NotImplementedError."""
        raise NotImplementedError(
            f"{type(self).__name__}.rashomon is not supported: the Rashomon set is built "
            "without a fairness constraint, so its trees need not satisfy this estimator's "
            "delta; OptimalTreeClassifier(...).rashomon() gives the unconstrained set (check "
            "each tree with odtkit.metrics.fairness_gap)"
        )

    def fairness_gap(self, X: Any, y: Any, sensitive: Any, legit: Any = None) -> float:
        """The fitted tree's disparity on other data (e.g. a test split), same notion and δ.

        ``y`` holds the true labels (pe, eopp and eodds compare rates within them).
        """
        check_is_fitted(self, "tree_")
        Xb = np.ascontiguousarray(self._transform(X), dtype=bool)
        y = np.asarray(y)
        codes = np.searchsorted(self.classes_, y)
        codes = np.clip(codes, 0, len(self.classes_) - 1)
        if y.shape != (Xb.shape[0],) or np.any(self.classes_[codes] != y):
            raise ValueError("y must hold one label per row of X, all seen during fit")
        data = Dataset(Xb, codes.astype(np.int64), self.classes_, tuple(self.feature_names_))
        fairness = self.fairness_.replace(protected=sensitive, legit=legit)
        return metrics.fairness_gap(self.tree_, data, fairness)


class OptimalRuleListClassifier(_BinaryInputMixin, ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """A certifiably optimal rule list (CORELS objective ``mis/n + lam * rules``), binary labels.

    Parameters
    ----------
    lam : float, default=0.01
        Penalty per rule.
    max_cardinality : int, default=2
        Literals per mined antecedent (CORELS's default). The number of rules needs no cap:
        each costs ``lam``, so an optimal list has fewer than ``1 / lam`` of them.
    min_support : float or None, default=None
        Antecedents must capture at least this fraction of samples (and leave as many out);
        None uses the search's default (derived from ``lam``, as CORELS does).
    time_limit : float or None, default=60.0
        Seconds, binarization, mining and search together
        (:data:`odtkit.methods.DEFAULT_TIME_LIMIT`). On
        continuous tables the rule-list search rarely finishes its proof (breast cancer,
        ``lam=0.01``: after 60 s a 3-rule list of objective 0.049 against a bound of 0.042,
        still unproven after 25 minutes); at the limit the best list so far is kept,
        ``status_`` says so and a :class:`LimitReachedWarning` states the gap. None: no limit.
    binarize, max_thresholds, guess_thresholds, memory_limit_mb
        As in :class:`OptimalTreeClassifier` (``max_thresholds`` and ``guess_thresholds``
        deprecated).
    thresholds : {"guess"}, int or odtkit.datasets.Thresholds, default="guess"
        As in :class:`OptimalTreeClassifier`, except ``"all"`` (ValueError): the exact search
        builds trees; ``Thresholds("all", exact_search=False)`` binarizes every midpoint.

    Attributes
    ----------
    rule_list_ : RuleList
    result_ : odtkit.results.Result of the fit.
    status_, objective_, lower_bound_, certified_, certificate_
        As in :class:`OptimalTreeClassifier` (the list is optimal over the rules mined from
        the binarization).
    classes_, binarizer_, feature_names_, n_features_in_, feature_names_in_
        As in :class:`OptimalTreeClassifier`.
    rule_distribution_ : ndarray (n_rules + 1, n_classes)
        Training class fractions per rule, the default rule last.
    rule_counts_ : ndarray (n_rules + 1, n_classes)
        Weighted training class counts of the rows each rule classifies, the default rule last.
    """

    _parameter_constraints = _ParameterConstraints(
        lambda: {
            "lam": _PENALTY,
            "max_cardinality": [Interval(Integral, 1, None, closed="left")],
            "min_support": [Interval(Real, 0, 0.5, closed="both"), None],
        }
    )

    def __init__(
        self,
        lam: float = 0.01,
        max_cardinality: int = 2,
        min_support: float | None = None,
        time_limit: float | None = DEFAULT_TIME_LIMIT,
        binarize: bool | str = "auto",
        max_thresholds: int | None | str = _DEPRECATED,
        guess_thresholds: int | None | str = _DEPRECATED,
        memory_limit_mb: float | None = None,
        thresholds: str | int | Thresholds | None = "guess",
    ) -> None:
        self.lam = lam
        self.max_cardinality = max_cardinality
        self.min_support = min_support
        self._keep_table_parameters(locals())

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # CORELS lists predict one of two labels
        return tags

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> OptimalRuleListClassifier:
        """Fit the optimal rule list on ``X`` (binary, or raw when ``binarize`` allows) and ``y``.

        ``y`` must have at most two classes.
        """
        from odtkit.core import search_rule_list

        self._validate_params()  # scikit-learn's check against _parameter_constraints

        lam = check_lambda(self.lam)
        deadline, data = self._start_fit(
            X, y, sample_weight, "the exact search builds trees, not rule lists"
        )
        if data.n_classes > 2:
            raise ValueError(
                f"Only binary classification is supported: y has {data.n_classes} classes "
                f"and {type(self).__name__} predicts one of two labels (use "
                "OptimalTreeClassifier for multi-class data)"
            )
        task = self._fit_task
        with task.quiet_if_truncated():
            result = search_rule_list(
                data,
                lam=lam,
                max_cardinality=self.max_cardinality,
                min_support=self.min_support,
                time_limit=deadline.limit_left(),
                memory_limit_mb=self.memory_limit_mb,
            )
        self.result_ = task.flag_truncated(result)
        self.rule_list_ = self.result_.model
        labels = np.array(
            [label for _, label in self.rule_list_.rules] + [self.rule_list_.default_label]
        )
        part = self.rule_list_.apply(data.X)
        n_parts = self.rule_list_.n_rules + 1
        self.rule_distribution_ = _class_distribution(part, n_parts, labels, data)
        self.rule_counts_ = np.zeros((n_parts, data.n_classes))
        np.add.at(self.rule_counts_, (part, data.y), data.weights)
        r = self.result_
        _record_outcome(self, r.status, r.objective, r.lower_bound, "rule list")
        self._drop_raw_table()
        return self

    def _render_parts(self) -> tuple[Any, Any, Any, np.ndarray]:
        """(model, feature descriptions, class names, training counts per rule) for export."""
        check_is_fitted(self, "rule_list_")
        return self.rule_list_, self._feature_specs(), self.classes_, self.rule_counts_

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class values (the original labels of ``y``)."""
        check_is_fitted(self, "rule_list_")
        labels: np.ndarray = self.classes_[self.rule_list_.predict(self._transform(X))]
        return labels

    def predict_proba(self, X: Any) -> np.ndarray:
        """Training class fractions of the rule (or the default) that classifies each row."""
        check_is_fitted(self, "rule_list_")
        fractions: np.ndarray = self.rule_distribution_[self.rule_list_.apply(self._transform(X))]
        return fractions

    def to_text(self) -> str:
        """The fitted rule list with feature names and class values."""
        check_is_fitted(self, "rule_list_")
        text: str = self.rule_list_.to_text(self._feature_specs(), self.classes_)
        return text


# the method lists of the docstrings come from the registry, so a new method reaches them
fill_method_names(OptimalTreeClassifier, TREE_METHODS=TREE_METHODS)
fill_method_names(FairTreeClassifier, FAIR_METHODS=FAIR_METHODS, NOTIONS=NOTIONS)

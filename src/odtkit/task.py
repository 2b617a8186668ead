"""One front door from a table to a solved problem: :class:`Task` and :func:`solve`.

A :class:`Task` is the problem stated once: a raw table binarized as a threshold policy says
(:class:`odtkit.datasets.Thresholds`) under the task's one :class:`~odtkit._limits.Deadline`,
or a binary :class:`~odtkit.datasets.Dataset` given as it is, with its weights and fairness
constraint. :func:`solve` is the one path from a task to a :class:`~odtkit.results.Result`:
the exact search over every threshold where the task asks for it, else the method on the
binarized features (a MIP warm-started by the search core), binarization cut short folded
into the status, and the :class:`~odtkit.results.Certificate` set.

The estimators, ``odtkit fit``, :func:`odtkit.compare` and :func:`odtkit.sweep` are adapters
over these two: they validate their own inputs, build a task and solve it, so that a table
gives the same tree, status and certificate whichever of them fitted it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from odtkit._limits import Deadline, charged, sigint_handler
from odtkit._validation import as_binary_matrix
from odtkit._warnings import silencing
from odtkit.constraints import ResolvedConstraints, check_constraints, resolve
from odtkit.datasets._dataset import Dataset, check_dataset
from odtkit.datasets._thresholds import Thresholds
from odtkit.results import Certificate, Result, Status

if TYPE_CHECKING:
    from odtkit.methods import Method

__all__ = ["Certificate", "Task", "Thresholds", "search_sits_out", "solve"]


def _is_binary_table(X: Any) -> bool:
    """Every cell of ``X`` (a DataFrame or array) is 0 or 1 (or a bool): the table's columns
    can be the features as they are."""
    arr = X.to_numpy() if hasattr(X, "to_numpy") else np.asarray(X)
    if arr.dtype == bool:
        return True
    if arr.dtype.kind not in "biuf":
        return False
    return bool(np.isin(arr, (0, 1)).all())


@dataclass(frozen=True, eq=False)
class Task:
    """A learning problem stated once: the features a tree may split on, the labels, weights,
    fairness, the threshold policy and the one clock.

    Build it with :meth:`from_table` (a raw table) or :meth:`from_dataset` (binary features).

    Attributes
    ----------
    dataset : Dataset or None
        The binary features every method but the exact search runs on; None when the exact
        search over every threshold is to run (it binarizes the table itself: :func:`solve`
        then builds the dataset its tree reads, :meth:`features_of`).
    binarizer : Binarizer or None
        The fitted Binarizer that made ``dataset`` (None for 0/1 input used as it is, a
        dataset given directly, or a deferred binarization).
    X, y, sample_weight
        The raw table, its labels and weights (kept for the exact search and to binarize
        later); None for :meth:`from_dataset`.
    thresholds : Thresholds or None
        The policy (None for :meth:`from_dataset`).
    fairness : Fairness or None
    deadline : Deadline
        The clock of the whole call: binarization is charged to it, and :func:`solve` gives
        the solver what it left.
    binarize_time : float
        Seconds spent binarizing.
    truncated : bool
        The deadline cut binarization short (the columns left yield no feature).
    interrupted : bool
        Ctrl-C reached binarization (which then ended as the time limit would).
    name : str or None
    categorical : tuple of str or None
        The columns :meth:`from_table` was told to take as categories.
    constraints : ResolvedConstraints or None
        The side constraints (:mod:`odtkit.constraints`, docs/constraints.md) resolved once
        against ``dataset``, a name of a raw column standing for all its binary features;
        None when none is stated.
    """

    dataset: Dataset | None
    binarizer: Any = None
    X: Any = None
    y: Any = None
    sample_weight: np.ndarray | None = None
    thresholds: Thresholds | None = None
    fairness: Any = None
    deadline: Deadline = field(default_factory=lambda: Deadline(None))
    binarize_time: float = 0.0
    truncated: bool = False
    interrupted: bool = False
    name: str | None = None
    categorical: tuple[str, ...] | None = None
    constraints: ResolvedConstraints | None = None

    # -- construction ----------------------------------------------------------------------

    @classmethod
    def from_dataset(
        cls,
        dataset: Any,
        *,
        fairness: Any = None,
        time_limit: float | None = None,
        deadline: Deadline | None = None,
        constraints: Any = None,
    ) -> Task:
        """A task on binary features given as they are (a bundled or pre-binarized
        :class:`~odtkit.datasets.Dataset`; its certificate is "binarization": what it was
        binarized from is unknown). ``time_limit`` / ``deadline``: the task's clock, as in
        :meth:`from_table`; ``constraints``: side constraints (:mod:`odtkit.constraints`)
        naming the dataset's features, resolved here."""
        clock = Deadline(time_limit) if deadline is None else deadline
        task = cls(check_dataset(dataset, "dataset"), fairness=fairness, deadline=clock)
        return task.constrained(constraints) if constraints is not None else task

    @classmethod
    def from_table(
        cls,
        X: Any,
        y: Any,
        *,
        sample_weight: np.ndarray | None = None,
        thresholds: Thresholds | str | int | None = "guess",
        binarize: bool | str = "auto",
        fairness: Any = None,
        time_limit: float | None = None,
        deadline: Deadline | None = None,
        name: str | None = None,
        exact: bool | None = None,
        categorical: Sequence[str] | None = None,
        constraints: Any = None,
    ) -> Task:
        """A task on a raw table ``X`` (DataFrame or 2-D array) with labels ``y``.

        Parameters
        ----------
        X, y, sample_weight
            The table, one label per row and optional row weights. Rows of weight 0 are left
            out of threshold fitting (they would change the guess but not the objective).
        thresholds : Thresholds, "guess", "all" or int, default="guess"
            The threshold policy (:class:`odtkit.datasets.Thresholds`).
        binarize : {"auto", True, False}, default="auto"
            Whether the table goes through the Binarizer: "auto" unless its cells are all 0/1
            (then its columns are the features as they are), True always, False never (the
            cells must be 0/1).
        fairness : Fairness or None
        time_limit, deadline
            The task's one clock: a given ``deadline``, else a new one of ``time_limit``
            seconds. Binarization is charged to it; out of time the Binarizer keeps what it
            has (``truncated``), and a Ctrl-C ends it likewise (``interrupted``).
        name : str or None
            The dataset's name.
        exact : bool or None
            Whether the exact search over every threshold will run (then the table is not
            binarized here: that search binarizes it itself). None: when the policy says so
            (``"all"`` with ``exact_search``) and the table is binarized; a caller that knows
            the search cannot run (no depth, a MIP, fairness) passes False.
        categorical : list of str or None
            Columns to take as categories even if their values are numbers (codes such as
            ZIP or ward numbers): one feature per value instead of thresholds, in the
            Binarizer and in the exact search alike (text, category and bool columns are
            categories without being named).
        constraints : list of constraints or None
            Side constraints (:mod:`odtkit.constraints`, docs/constraints.md), resolved once
            against the binarized features; a name of a raw column stands for all its binary
            features (``ForbidFeatures(["age"])`` forbids every threshold on ``age``). With
            constraints the table is always binarized here: the exact search over every
            threshold takes none (its certificate is then over the binarization).
        """
        given = check_constraints(constraints)
        policy = Thresholds.parse(thresholds)
        if exact is None:
            exact = policy.runs_exact_search
        if given:
            exact = False  # the exact numeric search carries no side constraint
        if deadline is None:
            # the process's imports, before the call's clock
            policy.load_dependencies(exact=exact)
            deadline = Deadline(time_limit)
        binarizes = binarize is True or (binarize == "auto" and not _is_binary_table(X))
        weights = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        common = {
            "X": X,
            "y": y,
            "sample_weight": weights,
            "thresholds": policy,
            "fairness": fairness,
            "deadline": deadline,
            "name": name,
            "categorical": None if categorical is None else tuple(str(c) for c in categorical),
        }
        if binarizes and exact:
            return cls(None, **common)
        began = time.perf_counter()
        stopped = [False]

        def stop_binarizing(*_: Any) -> None:
            # a Ctrl-C ends binarization as the time limit would (the Binarizer keeps what it
            # has); the search that follows then stops at once, and the status says
            # "interrupted"
            stopped[0] = True
            deadline.at = time.perf_counter()

        binarizer = None
        with charged(deadline), sigint_handler(stop_binarizing):
            if binarizes:
                binarizer = _fitted(policy, X, y, weights, common["categorical"])
                Xb = binarizer.transform(X)
                names = [str(n) for n in binarizer.get_feature_names_out()]
            else:
                # 0/1 features as they are (a DataFrame of nullable dtypes read as numbers, a
                # missing or categorical column refused by name)
                Xb = as_binary_matrix(X, "X")
                columns = getattr(X, "columns", None)
                names = (
                    [str(c) for c in columns]
                    if columns is not None
                    else [f"x{j}" for j in range(Xb.shape[1])]
                )
        named = {} if name is None else {"name": name}
        data = check_dataset(
            Dataset.from_arrays(Xb, y, feature_names=names, sample_weight=weights, **named),
            "data",
        )
        truncated = binarizer is not None and bool(getattr(binarizer, "truncated_", False))
        task = cls(
            data,
            binarizer=binarizer,
            binarize_time=time.perf_counter() - began,
            truncated=truncated,
            interrupted=stopped[0],
            **common,
        )
        return task.constrained(given) if given else task

    def with_every_midpoint(self) -> Task:
        """This task with its deferred binarization done where the exact search cannot run:
        over every midpoint for ``"all"`` (the same optimum as the exact search), by the
        guess for ``"auto"``."""
        if self.dataset is not None:
            return self
        assert self.thresholds is not None
        return Task.from_table(
            self.X,
            self.y,
            sample_weight=self.sample_weight,
            thresholds=replace(self.thresholds, exact_search=False),
            binarize=True,
            fairness=self.fairness,
            deadline=self.deadline,
            name=self.name,
            exact=False,
        )

    def constrained(self, constraints: Any) -> Task:
        """This task with the side constraints ``constraints`` (:mod:`odtkit.constraints`; a
        list, one, None for none, or a :class:`~odtkit.constraints.ResolvedConstraints` of
        its dataset) in place of its own, resolved once against its binary features: a name
        of a raw column (a Binarizer's ``FeatureSpec.source``) stands for all its binary
        features. A task whose table is not binarized yet (the exact search's) is binarized
        over every midpoint first: that search takes no constraint.

        Raises
        ------
        TypeError, ValueError
            Naming the constraint that is not one, or that names no feature, column or
            label of the data.
        """
        given = (
            constraints
            if isinstance(constraints, ResolvedConstraints)
            else check_constraints(constraints)
        )
        task = self.with_every_midpoint() if given and self.dataset is None else self
        if not given:
            return replace(task, constraints=None)
        assert task.dataset is not None
        binarizer = task.binarizer
        sources = (
            None
            if binarizer is None
            else [str(spec.source) for spec in binarizer.get_feature_specs()]
        )
        return replace(task, constraints=resolve(given, task.dataset, sources=sources))

    # -- reading ----------------------------------------------------------------------------

    @property
    def is_table(self) -> bool:
        """Built from a raw table (:meth:`from_table`)."""
        return self.thresholds is not None

    def certificate(self, *, exact: bool = False) -> Certificate:
        """Over what an optimal tree of this task is optimal (``exact``: the exact search
        found it): "binarization" for a dataset given directly, else the policy's rule
        (:meth:`odtkit.datasets.Thresholds.certificate`)."""
        if self.thresholds is None:
            return Certificate.BINARIZATION
        return self.thresholds.certificate(self.binarizer, exact=exact)

    def features_of(self, result: Result) -> tuple[Dataset, Any]:
        """The dataset and Binarizer ``result``'s tree reads: the exact search's own Binarizer
        (the thresholds its tree uses) applied to the whole table, else the task's."""
        if result.binarizer is None or not self.is_table:
            assert self.dataset is not None
            return self.dataset, self.binarizer
        binarizer = result.binarizer
        names = [str(n) for n in binarizer.get_feature_names_out()]
        named = {} if self.name is None else {"name": self.name}
        data = Dataset.from_arrays(
            binarizer.transform(self.X),
            self.y,
            feature_names=names,
            sample_weight=self.sample_weight,
            **named,
        )
        return check_dataset(data, "data"), binarizer

    def binarization_cut(self) -> str | None:
        """What stopped binarization, for a result's message; None if nothing did."""
        if self.truncated:
            what = "Ctrl-C stopped" if self.interrupted else "the time limit cut"
            return (
                f"{what} binarization (threshold guessing): the model is the best over the "
                "features built in time, not over all the configured ones"
            )
        if self.interrupted:
            return "Ctrl-C during binarization: the search that followed stopped at once"
        return None

    def binarization_stop(self, status: Status) -> Status:
        """The status of a solve that ended with ``status`` after this task's binarization."""
        if status == Status.OPTIMAL and not self.truncated:
            return status  # every configured feature was built, and the search proved it
        if self.interrupted:
            return Status.INTERRUPTED
        return Status.TIME_LIMIT if status == Status.OPTIMAL else status

    def flag_truncated(self, result: Result) -> Result:
        """``result`` with status ``time_limit`` (``interrupted`` after a Ctrl-C) and a message
        if binarization was cut short (its optimum is then over fewer features than
        configured), or if a Ctrl-C during binarization left the search no time."""
        why = self.binarization_cut()
        if why is None:
            return result
        return result.replace(
            status=self.binarization_stop(result.status),
            message="; ".join(filter(None, [result.message, why])),
        )

    @contextlib.contextmanager
    def quiet_if_truncated(self) -> Iterator[None]:
        """Silence TrivialAnswerWarning when binarization was cut short: its reason (no feature
        beats the leaf) is about the features built in time, not the data, and would mislead."""
        from odtkit.core import TrivialAnswerWarning

        if self.truncated:
            with silencing(TrivialAnswerWarning):
                yield
        else:
            yield

    def fitted_binarizer(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """A new Binarizer of this task's policy fitted on other rows (a fold's), weight-0
        rows left out as for the task's own."""
        assert self.thresholds is not None
        return _fitted(self.thresholds, X, y, sample_weight, self.categorical)


def _fitted(
    policy: Thresholds,
    X: Any,
    y: Any,
    weights: np.ndarray | None,
    categorical: tuple[str, ...] | None = None,
) -> Any:
    """A Binarizer of ``policy`` fitted on the rows of ``X`` (and ``y``, to guess) that count:
    a row of weight 0 is a row left out. ``categorical``: columns taken as categories."""
    binarizer = policy.binarizer(None if categorical is None else list(categorical))
    y = np.asarray(y)
    if weights is None or weights.all():
        return binarizer.fit(X, y, sample_weight=weights)
    kept = weights > 0
    rows = X.iloc[kept] if hasattr(X, "iloc") else X[kept]
    return binarizer.fit(rows, y[kept], sample_weight=weights[kept])


def _relabelled(tree: Any, codes: np.ndarray) -> Any:
    """``tree`` with leaf label ``k`` replaced by ``codes[k]``."""
    from odtkit.tree import Tree

    if tree.feature is None or tree.left is None or tree.right is None:  # a leaf
        return Tree.leaf(int(codes[tree.label]))
    return Tree.split(tree.feature, _relabelled(tree.left, codes), _relabelled(tree.right, codes))


def _runs_exact(task: Task, method: Any, max_depth: int | None) -> bool:
    """The exact search over every threshold answers ``task`` for ``method``: a raw-table
    method, or ``dp`` on a table whose policy is "all" (exact search) at a limited depth."""
    if getattr(method, "raw", False):
        return True
    return (
        task.dataset is None
        and not task.constraints
        and method.name == "dp"
        and max_depth is not None
        and task.fairness is None
    )


#: The MIPs ``method="auto"`` hands side constraints the search cannot certify to, in order:
#: branch-and-price (``"columns"``) when its pricing takes them (``columns_refusal``), else
#: PathOCT when its model fits the time limit (``Method.too_big``), else FlowOCT.
AUTO_MIPS = ("columns", "pathoct", "flowoct")


def search_sits_out(task: Task, method: str = "dp") -> str:
    """Why the native search ``method`` cannot certify ``task``'s side constraints ("" when it
    can, or none is stated): :func:`odtkit.methods.search_refusal`; a fairness constraint
    stated beside side constraints is the MIPs' (the search takes one fairness alone)."""
    from odtkit.methods import search_refusal

    if not task.constraints:
        return ""
    if task.fairness is not None:
        return "a fairness constraint together with side constraints is for the MIPs"
    return search_refusal(task.constraints, method)


def _columns_sit_out(task: Task) -> str:
    """Why branch-and-price cannot price ``task``'s constraints ("" when it can)."""
    from odtkit.formulations.columns import columns_refusal

    assert task.dataset is not None
    if task.fairness is not None and task.dataset.n_classes > 2:
        return "a fairness constraint over three or more classes"
    return columns_refusal(task.constraints)


def _chosen(
    task: Task, method: Any, max_depth: int | None, time_limit: float | None
) -> tuple[Method, str]:
    """The method that runs and, for ``"auto"``, why it was chosen ("" otherwise)."""
    from odtkit.methods import METHODS, get_method

    if not (isinstance(method, str) and method == "auto"):
        chosen = get_method(method) if isinstance(method, str) else method
        if task.constraints:
            if chosen.raw:
                raise ValueError(
                    f"method {chosen.name!r} (the exact search over every threshold) takes no "
                    "side constraint: use method='auto', 'dp' or a MIP on the binarization"
                )
            why = search_sits_out(task, chosen.name) if chosen.is_search else ""
            if why:
                raise ValueError(
                    f"method {chosen.name!r} cannot certify the constraints: {why}; use "
                    f"method='auto' or a MIP ({', '.join(AUTO_MIPS)})"
                )
        return chosen, ""
    why = search_sits_out(task, "dp")
    if not why:
        return METHODS["dp"], ""
    assert task.dataset is not None  # a task with constraints is always binarized
    if not _columns_sit_out(task):
        return METHODS["columns"], (
            f"method auto: the search sat out ({why}), so branch-and-price (columns) carried them"
        )
    limit = task.deadline.limit_left() if time_limit is None else time_limit
    for name in AUTO_MIPS[1:-1]:
        if max_depth is not None and not METHODS[name].too_big(task.dataset, max_depth, limit):
            break
    else:
        name = AUTO_MIPS[-1]
    return METHODS[name], f"method auto: the search sat out ({why}), so {name} carried them"


def _rechecked(result: Result, task: Task) -> Result:
    """``result`` re-checked against the task's side constraints by :mod:`odtkit.metrics`'s
    one truth: a returned tree that breaks one is status ``error``, never a certificate; an
    ``infeasible`` verdict names a constraint no tree can meet, where one is found."""
    constraints = task.constraints
    if not constraints or task.dataset is None:
        return result
    if result.status == Status.INFEASIBLE:
        why = constraints.obvious_infeasibility()
        return (
            result
            if not why
            else result.replace(message="; ".join(filter(None, [result.message, why])))
        )
    if not result.has_model:
        return result
    broken = constraints.violations(result.model, task.dataset)
    if not broken:
        return result
    return result.replace(
        status=Status.ERROR,
        certificate=None,
        message="; ".join(
            filter(None, [result.message, "the tree breaks a side constraint: " + broken[0]])
        ),
    )


def solve(
    task: Task,
    *,
    method: Any = "auto",
    backend: str = "highs",
    lam: float,
    max_depth: int | None,
    time_limit: float | None = None,
    memory_limit_mb: float | None = None,
    warm_start: bool = True,
) -> Result:
    """Solve ``task`` with ``method``: THE path of the estimators, ``odtkit fit``, ``compare``
    and ``sweep``.

    * The exact search over every threshold (:meth:`odtkit.methods.Method.search_raw`) when
      ``method`` is a raw-table method, or ``dp`` on a table whose policy is "all" at a given
      depth; its tree reads the Result's Binarizer (:meth:`Task.features_of`).
    * Otherwise ``method`` on the task's binary features (:meth:`Method.solve`); a MIP is
      warm-started (``warm_start``, a backend with MIP starts) by the dp given 20 % of the
      limit, and when it stops before solving anything the warm start is the answer.
    * ``method="auto"`` (the default): ``dp``, unless the task's side constraints
      (:attr:`Task.constraints`) are ones the search cannot certify
      (:func:`search_sits_out`); then a MIP that carries them, PathOCT when its model fits
      the time limit, else FlowOCT (the Result's ``message`` says which, and why).

    With side constraints, the exact search over every threshold sits out (the certificate
    is over the binarization), a search runs only where it certifies them (else ValueError
    naming the constraint), a MIP carries them as named blocks and is warm-started only by a
    search that certifies them (else cold), and every returned tree is re-checked with
    :meth:`odtkit.constraints.ResolvedConstraints.violations`: one that breaks a constraint
    is status ``error``.

    ``time_limit``: seconds; None is what the task's deadline left. Binarization cut short
    (or reached by Ctrl-C) turns an ``optimal`` status into ``time_limit`` (``interrupted``)
    with a message. The Result's ``certificate`` says over what an optimal tree is optimal
    (None unless ``optimal``).

    Raises
    ------
    ValueError
        For an unknown method, a MIP without depth, a raw-table method on a dataset.
    """
    chosen, why = _chosen(task, method, max_depth, time_limit)
    exact = _runs_exact(task, chosen, max_depth)
    if exact:
        if not task.is_table:
            raise ValueError(
                f"method {chosen.name!r} searches every threshold of a raw table: build the "
                "task with Task.from_table"
            )
        if max_depth is None:
            raise ValueError(f"method {chosen.name!r} is depth-limited: set max_depth")
        result = _exact(task, lam, max_depth, time_limit, memory_limit_mb)
    else:
        if task.dataset is None:
            task = task.with_every_midpoint()
        with task.quiet_if_truncated():
            result = _on_dataset(
                task, chosen, backend, lam, max_depth, time_limit, memory_limit_mb, warm_start
            )
        result = task.flag_truncated(_rechecked(result, task))
    if why:
        result = result.replace(message="; ".join(filter(None, [why, result.message])))
    certificate = task.certificate(exact=exact) if result.status == Status.OPTIMAL else None
    return result.replace(certificate=certificate)


def _exact(
    task: Task,
    lam: float,
    max_depth: int,
    time_limit: float | None,
    memory_limit_mb: float | None,
) -> Result:
    """The exact search over every threshold of the task's raw columns; its threshold guess
    (the start) and the search share the task's deadline."""
    from odtkit.methods import METHODS

    X, y, weights = task.X, np.asarray(task.y), task.sample_weight
    # thresholds come from the rows that count: a row of weight 0 is a row left out
    kept = None if weights is None or weights.all() else weights > 0
    rows = X if kept is None else (X.iloc[kept] if hasattr(X, "iloc") else X[kept])
    with charged(task.deadline):
        result = METHODS["exact"].search_raw(
            rows,
            y if kept is None else y[kept],
            lam=lam,
            max_depth=max_depth,
            sample_weight=weights if kept is None or weights is None else weights[kept],
            time_limit=task.deadline.limit_left() if time_limit is None else time_limit,
            memory_limit_mb=memory_limit_mb,
            categorical=None if task.categorical is None else list(task.categorical),
        )
    if kept is not None:
        # leaves predict codes into the kept rows' classes: renumber into all of y's
        seen = np.unique(y[kept])
        result = result.replace(
            model=_relabelled(result.model, np.searchsorted(np.unique(y), seen))
        )
    return result


def _on_dataset(
    task: Task,
    method: Method,
    backend: str,
    lam: float,
    depth: int | None,
    time_limit: float | None,
    memory_limit_mb: float | None,
    warm_start: bool,
) -> Result:
    """``method`` on the task's binary features; a MIP warm-started by the search core."""
    from odtkit.methods import METHODS

    data = task.dataset
    assert data is not None  # solve binarized a deferred table first
    fairness = task.fairness
    constraints = task.constraints
    given = time_limit is not None
    # what binarization left of the call's time limit
    limit = time_limit if given else task.deadline.limit_left()
    warm = None
    # with side constraints the search warm-starts a MIP only where it certifies them
    searchable = not search_sits_out(task, "dp")
    if warm_start and not method.is_search and depth is not None and searchable:
        from odtkit.solvers import backend_capabilities

        if "mip_start" in backend_capabilities(backend):
            # the search core's tree is the warm start; a short budget keeps it cheap
            budget = None if limit is None else max(0.1, 0.2 * limit)
            warm = METHODS["dp"].search(
                data,
                lam=lam,
                max_depth=depth,
                time_limit=budget,
                memory_limit_mb=memory_limit_mb,
                fairness=fairness,
                constraints=constraints,
            )
            if warm.has_model and constraints and constraints.violations(warm.model, data):
                warm = None  # never a start that breaks a constraint: the MIP starts cold
    result = method.solve(
        data,
        lam=lam,
        max_depth=depth,
        backend=backend,
        time_limit=limit if given else task.deadline.limit_left(),
        memory_limit_mb=memory_limit_mb,
        fairness=fairness,
        start=None if warm is None else warm.model,
        start_is_optimal=warm is not None and warm.status == Status.OPTIMAL,
        constraints=constraints,
    )
    if method.is_search:
        return result
    why = result.stats.get("stopped_before_solve")
    if not result.has_model and why and warm is not None and warm.has_model:
        # a limit returns the best tree so far: the search core's start, with its own
        # bound (valid for the same problem), rather than no answer at all
        return warm.replace(
            message=f"{method.name} on {backend}: {why}, so nothing was solved; the "
            f"tree and bound are the search core's warm start ({warm.status.value})"
        )
    return result

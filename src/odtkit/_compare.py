"""Run the search core and the MIP formulations on one problem, re-verify every tree, tabulate.

:func:`compare` is the library's main job: one problem (data, λ, depth), several methods, one
:class:`Comparison`. The search core runs first; its tree warm-starts every MIP. Every returned
tree is re-evaluated with :func:`odtkit.metrics.objective` (the single truth) and each run says
whether its verified objective agrees with the best certified optimum.

On a raw table (``compare(X, y=labels, ...)``) it also races the exact search over every
threshold (``"exact"``) against the methods on a binarization of the same rows; the
``certificate`` column says over what each row's answer is certified.

``compare`` works in three steps: planning (:func:`_plan`: validate, pick the methods, binarize
a raw table), running (:func:`_run_search` / :func:`_run_mip`: one method on one backend gives
one :class:`Run`, holding its :class:`~odtkit.results.Result`) and reading
(:func:`_read`: the certified optima and each run's verdict, in a :class:`Comparison`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NoReturn, TypedDict

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from odtkit import metrics
from odtkit._limits import stop_on_interrupt
from odtkit._validation import (
    check_depth,
    check_lambda,
    check_names,
    check_positive_number,
)
from odtkit.constraints import ResolvedConstraints
from odtkit.datasets import Dataset
from odtkit.datasets._bundled import resolve
from odtkit.datasets._dataset import check_dataset
from odtkit.datasets._thresholds import Thresholds
from odtkit.fairness import Fairness, FairnessGroups
from odtkit.formulations import EXACT, VALID_BOUND, Formulation, Property, TreeProblem
from odtkit.methods import (
    METHODS,
    MIP_METHODS,
    RAW_METHODS,
    SEARCH_METHODS,
    Method,
    check_fair,
    fill_code_names,
    get_method,
    method_names,
)
from odtkit.pipeline import solve_formulation
from odtkit.results import Certificate, Result, Status
from odtkit.task import Task, search_sits_out, solve
from odtkit.tree import Tree

if TYPE_CHECKING:  # the Binarizer imports scikit-learn: only a raw table pays for it
    from odtkit.datasets._binarizer import Binarizer

__all__ = ["COLUMNS", "DEFAULT_METHODS", "TOLERANCE", "Comparison", "Run", "compare"]

COLUMNS = (
    "method",
    "backend",
    "status",
    "objective",
    "bound",
    "gap",
    "time",
    "n_leaves",
    "agrees",
    "certificate",
    "reported",
    "warm_start",
    "build_time",
    "wall",
    "message",
)
TOLERANCE = 1e-6
#: What :func:`compare` runs when ``methods`` is not given: each MIP only when its model is
#: small enough to answer within the time limit (``sized``, :meth:`Method.too_big`).
DEFAULT_METHODS = ("dp", "columns", "rbinoct", "flowoct")
#: The certificates of a comparison, as the reading says them ("certified ... over ...").
OVER = MappingProxyType(
    {
        Certificate.ALL_THRESHOLDS: "all thresholds",
        Certificate.GUESSED_THRESHOLDS: "the guessed thresholds",
        Certificate.BINARIZATION: "the binarization",
    }
)

_NOT_RUN = "not run: interrupted (Ctrl-C)"
_INTERRUPTED_OUTSIDE = "interrupted (Ctrl-C) outside the solver: no answer kept"


@dataclass(frozen=True)
class Run:
    """One row of a :class:`Comparison`: one method on one backend, and the verdict on it.

    Attributes
    ----------
    method : str
        The method's name in :data:`odtkit.methods.METHODS`.
    result : Result
        Its answer, as the comparison judged it: a tree above the fairness δ is status
        ``error`` with bound ``-inf``; a run that failed before solving, or that an interrupt
        kept from running, is a Result without a model (``answered`` False).
    certificate : str
        Over what the run's bound and an ``optimal`` status hold: ``"all thresholds"`` or
        ``"binarization"``.
    properties : frozenset of str
        What its answer means (the formulation's declared properties, e.g. ``EXACT``,
        ``VALID_BOUND``); empty for a run without an answer.
    reader : Binarizer or None
        What reads the run's tree from raw rows (a raw table only): the exact search's own
        Binarizer, restricted to the thresholds its tree uses, or the shared binarization.
    warm_start : bool
        The MIP started from a tree.
    answered : bool
        The solver ran (False: it failed before solving or was not run).
    fairness_gap : float or None
        The tree's re-measured disparity (``nan`` without a tree); None without fairness.
    unfair : bool
        The tree's disparity exceeds δ, or it breaks a side constraint: not a feasible answer.
    agrees : bool or None
        The verified objective equals the certified optimum of the run's certificate within
        :data:`TOLERANCE` and its bound is consistent; None when nothing was certified.
    wall : float
        Seconds of the whole run as the comparison saw it (a MIP's build, translation, solve,
        decode and verification: what its time limit covers); ``nan`` for a row not run.
    sat_out : str
        Why the method did not run: a search that cannot certify the side constraints
        (``compare(..., constraints=)``; status ``not_run``, the reason also in ``message``);
        "" for a run. Such a row is not judged (``agrees`` None) and not counted by
        :attr:`Comparison.agree`.
    """

    method: str
    result: Result
    certificate: str
    properties: frozenset[Property] = frozenset()
    reader: Binarizer | None = None
    warm_start: bool = False
    answered: bool = True
    fairness_gap: float | None = None
    unfair: bool = False
    agrees: bool | None = None
    wall: float = math.nan
    sat_out: str = ""

    @property
    def backend(self) -> str:
        """The backend, or the backend's solver program when it names one."""
        solution = self.result.solution
        return self.result.backend if solution is None else (solution.solver or self.result.backend)

    @property
    def tree(self) -> Tree | None:
        tree: Tree | None = self.result.model  # Result.model is Any: a comparison's are trees
        return tree

    @property
    def status(self) -> Status:
        return self.result.status

    @property
    def objective(self) -> float:
        """The verified objective (``nan`` without a tree)."""
        return self.result.objective

    @property
    def bound(self) -> float:
        return self.result.lower_bound

    @property
    def time(self) -> float:
        """The solver's seconds (the search's whole call)."""
        return float(self.result.stats.get("solve_time", self.result.time))

    @property
    def gap(self) -> float:
        """``objective - bound``; 0 within 1e-12 (round-off of an exact certificate)."""
        gap = self.objective - self.bound if not math.isnan(self.objective) else math.nan
        return 0.0 if abs(gap) <= 1e-12 else gap

    @property
    def feasible(self) -> bool:
        """A tree that answers the stated problem (it may set or meet the optimum)."""
        return not math.isnan(self.objective) and not self.unfair

    def record(self) -> dict[str, Any]:
        """The row of :meth:`Comparison.to_frame` (``reported`` and ``build_time`` are
        missing for a run without an answer)."""
        result = self.result
        row: dict[str, Any] = {
            "method": self.method,
            "backend": self.backend,
            "status": result.status,
            "objective": result.objective,
            "bound": result.lower_bound,
            "gap": self.gap,
            "time": self.time,
            "n_leaves": result.model.n_leaves if result.model is not None else 0,
            "agrees": self.agrees,
            "certificate": self.certificate,
            "warm_start": self.warm_start,
            "wall": self.wall,
            "message": result.message,
        }
        if self.answered:
            solution = result.solution
            row["reported"] = result.objective if solution is None else solution.objective
            row["build_time"] = result.stats.get("build_time", 0.0)
        if self.fairness_gap is not None:
            row["fairness_gap"] = self.fairness_gap
        return row


@dataclass(frozen=True, eq=False)
class Comparison:
    """What :func:`compare` returns: every run's :class:`Result`, verified and judged.

    Attributes
    ----------
    runs : tuple of Run
        The rows, in the order they ran (searches first, then each MIP per backend).
    dataset : str
        The dataset's name.
    lam : float
        Penalty per leaf.
    max_depth : int
        The depth limit the binarized methods solved (clamped to the number of features).
    certified_optima : mapping of str to float
        Per certificate (``"all thresholds"``, ``"binarization"``) its certified optimum
        (``nan`` if no run certified one), in the order the certificates first appear.
    warm_start_source : str
        Where the MIPs' start came from: ``"search_tree"``, ``"exact"``, ``"greedy_tree"``,
        ``"single_leaf"`` or ``"none"``.
    feature_names, class_names : tuple
        The binarized dataset's features and classes (what the trees index).
    fairness : Fairness or None
        The constraint, if the problem had one.
    binarizer : Binarizer or None
        The binarization of a raw table (None for a Dataset).
    thresholds : str, int or None
        How a raw table was binarized (None for a Dataset).
    binarize_time : float
        Seconds of that shared binarization (no run's ``time`` includes it).
    left_out : mapping of str to str
        The methods of the default list that were not run, each with why: its model is too
        big to answer within the time limit (``compare(..., sized=)``).

    ``to_frame()`` is the table; ``best``, ``agree`` and ``reading()`` read it. The object is
    immutable: ``filter`` and ``replace`` give new ones, and ``best`` is always computed from
    the runs it holds.
    """

    runs: tuple[Run, ...]
    dataset: str
    lam: float
    max_depth: int
    certified_optima: Mapping[str, float]
    warm_start_source: str = "none"
    feature_names: tuple[str, ...] = ()
    class_names: tuple[Any, ...] = ()
    fairness: Fairness | None = None
    binarizer: Binarizer | None = None
    thresholds: str | int | None = None
    binarize_time: float = 0.0
    left_out: Mapping[str, str] = field(default_factory=dict)
    #: the problem as the one front door states it: what fixes each run's certificate
    task: Task | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", tuple(self.runs))
        object.__setattr__(self, "certified_optima", MappingProxyType(dict(self.certified_optima)))
        object.__setattr__(self, "left_out", MappingProxyType(dict(self.left_out)))

    # --- reading ---------------------------------------------------------------------------

    @property
    def best(self) -> Run | None:
        """The run of least verified objective among the feasible ones (the first on a tie);
        None when no run holds a feasible tree."""
        return min((r for r in self.runs if r.feasible), key=lambda r: r.objective, default=None)

    @property
    def best_tree(self) -> Tree | None:
        best = self.best
        return None if best is None else best.tree

    @property
    def certified_optimum(self) -> float:
        """The certified optimum of the best run's certificate (``nan`` if none)."""
        best = self.best
        return math.nan if best is None else self.certified_optima.get(best.certificate, math.nan)

    @property
    def certified(self) -> bool:
        """The best run's problem has a certified optimum."""
        return not math.isnan(self.certified_optimum)

    @property
    def agree(self) -> bool:
        """Every run's verified objective is its certificate's certified optimum (False when
        a run disagrees or nothing was certified)."""
        judged = [r for r in self.runs if not r.sat_out]
        # nothing ran (every search sat out, every MIP left out): there is nothing to agree on
        return bool(judged) and all(r.agrees is True for r in judged)

    @property
    def names(self) -> tuple[str, ...]:
        """A name per run: the method, or ``method/backend`` when a method ran on several
        backends (the keys of :attr:`results`)."""
        methods = [r.method for r in self.runs]
        if len(set(methods)) == len(methods):
            return tuple(methods)
        return tuple(f"{r.method}/{r.backend}" for r in self.runs)

    @property
    def results(self) -> Mapping[str, Result]:
        """Each run's Result by :attr:`names`."""
        return MappingProxyType(dict(zip(self.names, (r.result for r in self.runs), strict=True)))

    @property
    def trees(self) -> tuple[Tree | None, ...]:
        """Each run's tree (None for a run without one)."""
        return tuple(r.tree for r in self.runs)

    def to_frame(self) -> pd.DataFrame:
        """The table: one row per run.

        Columns ``method, backend, status, objective, bound, gap, time, n_leaves, agrees,
        certificate, reported, warm_start, build_time, message`` (and ``fairness_gap`` after
        ``n_leaves`` with fairness); see :func:`compare`. A new DataFrame each call, carrying
        no ``attrs``: what it says about the problem is this object's.
        """
        columns = list(COLUMNS)
        if self.fairness is not None:
            columns.insert(columns.index("n_leaves") + 1, "fairness_gap")
        table = pd.DataFrame([r.record() for r in self.runs]).reindex(columns=columns)
        table["agrees"] = table["agrees"].astype(object)
        table["message"] = table["message"].fillna("")
        return table

    def reading(self) -> str:
        """The table in one sentence: who certified what how fast, who stopped with which gap,
        and whether every tree has the certified value (``odtkit compare`` prints it)."""
        parts = [_said(name, r) for name, r in zip(self.names, self.runs, strict=True)]
        if self.left_out:
            parts.append(f"not run (too big for the time limit): {', '.join(self.left_out)}")
        if len(self.certified_optima) > 1:
            # two problems in one table: the exact search's (every threshold) and the
            # binarization's
            known = {k: v for k, v in self.certified_optima.items() if not math.isnan(v)}
            said = ", ".join(
                f"over {OVER.get(Certificate(k), k)} {v:.6g}" for k, v in known.items()
            )
            tail = f"; certified optima: {said}" if said else ""
            return "reading: " + "; ".join(parts) + tail + "."
        ending = "; every tree has the certified value." if self.agree else "."
        return "reading: " + "; ".join(parts) + ending

    # --- new comparisons ------------------------------------------------------------------

    def filter(self, keep: Callable[[Run], bool] | Sequence[bool] | np.ndarray) -> Comparison:
        """The comparison of the runs ``keep`` selects (a predicate on a :class:`Run`, or one
        bool per run, e.g. a mask of ``to_frame()``). Verdicts and certified optima are facts
        about the problem and stay; ``best`` is the best of the runs kept."""
        if callable(keep):
            chosen = [bool(keep(r)) for r in self.runs]
        else:
            chosen = [bool(k) for k in np.asarray(keep, dtype=bool).ravel()]
            if len(chosen) != len(self.runs):
                raise ValueError(
                    f"keep must hold one bool per run ({len(self.runs)}), got {len(chosen)}"
                )
        return self.replace(runs=tuple(r for r, k in zip(self.runs, chosen, strict=True) if k))

    def replace(self, **changes: Any) -> Comparison:
        """A copy with some fields changed (e.g. ``dataset=`` a file's name)."""
        return replace(self, **changes)

    # --- container and notebook faces ------------------------------------------------------

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self) -> Iterator[Run]:
        return iter(self.runs)

    def __getitem__(self, key: object) -> NoReturn:
        # compare() returned a DataFrame until issue 26: say how to read the table now
        raise TypeError(
            f"a Comparison is not a table: use comparison.to_frame()[{key!r}] for the column, "
            "or .best / .results / .runs for the answers"
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.dataset}, lam={self.lam:g}, max_depth={self.max_depth})\n"
            + repr(self.to_frame())
        )

    def _repr_html_(self) -> str:
        return str(self.to_frame()._repr_html_())


def _said(name: str, run: Run) -> str:
    """One run in the reading's words."""
    if run.sat_out:
        return f"{name} sat out ({run.sat_out})"
    status, objective = run.status, run.objective
    if status == Status.OPTIMAL:
        return f"{name} certified {objective:.6g} in {_seconds(run.time)}"
    leaves = run.tree.n_leaves if run.tree is not None else 0
    stopped = status in (Status.TIME_LIMIT, Status.NODE_LIMIT, Status.INTERRUPTED)
    if leaves > 0 and stopped and run.bound == -math.inf:
        # a bare "-inf, gap inf" says nothing: the row's message says why there is no bound
        why = run.result.message if run.result.message.startswith("no bound") else "no bound"
        return f"{name} holds a tree of value {objective:.6g} but stopped ({status}) with {why}"
    if leaves > 0 and stopped:
        return (
            f"{name} holds a tree of value {objective:.6g} but stopped ({status}) "
            f"with bound {run.bound:.4g}, gap {run.gap:.3g}"
        )
    return f"{name}: {status}"


def _seconds(t: float) -> str:
    return f"{t * 1000:.2g} ms" if t < 0.1 else f"{t:.2g} s"


def compare(
    dataset: Dataset | Task | str | pd.DataFrame | ArrayLike,
    *,
    lam: float,
    max_depth: int,
    methods: str | Sequence[str] | None = None,
    backends: str | Sequence[str] = ("highs",),
    time_limit: float | None = 60.0,
    warm_start: bool = True,
    fairness: Fairness | None = None,
    memory_limit_mb: float | None = None,
    y: Any = None,
    thresholds: str | int | Thresholds | None = None,
    sized: bool | None = None,
    constraints: Any = None,
    **solve_options: Any,
) -> Comparison:
    """Solve one problem with the search core and MIP formulations; verify and compare.

    Parameters
    ----------
    dataset : Dataset, Task, str, DataFrame or array
        A Dataset, a bundled dataset name (``"monk1"``) or a shared one (``"compas-binary"``);
        or, with ``y``, a raw table (numeric and categorical columns, missing cells); or an
        :class:`odtkit.Task` already built (binarized; its policy gives the certificates).
    lam : float
        Penalty per leaf (OSDT units).
    max_depth : int
        Maximum depth D >= 1 (every method solves ``min R(T)`` over trees of depth <= D, except
        ``"rbinoct_original"``, which may be worse, and ``"binoct"``, which minimises errors).
        A depth above the number of features p is the same problem as depth p and is clamped
        to it (``odtkit._validation.check_depth``).
    methods : str or sequence of str, optional
        Names of :data:`odtkit.methods.METHODS` (one name, ``"dp,flowoct"`` or a sequence;
        repeated names run once): search methods ({SEARCH_METHODS}) run once, MIP
        methods ({MIP_METHODS}) once per backend. None: :data:`DEFAULT_METHODS`
        ({DEFAULT_METHODS}), each MIP only when it can answer at the table's size
        (``sized``). The raw-table methods ({RAW_METHODS}: the search over every threshold
        of the raw numeric columns,
        :func:`odtkit.core.search_numeric` started from the guessed-threshold tree) need a raw
        table and ``y``.
    backends : str or sequence of str
        Solver backends for the MIPs (names of :func:`odtkit.solvers.registered_backends`),
        given like ``methods``.
    time_limit : float, optional
        Seconds per run: a search's whole call; a MIP's build, solve, decode and verification
        together (a build that would overrun stops: status ``time_limit``, the row keeps its
        warm start).
    warm_start : bool
        Start every MIP from the first search method's tree (from the greedy tree if no search
        method is requested; from the ``"exact"`` tree when it is better and every threshold
        it tests is in the binarization, e.g. ``thresholds="all"``). Backends without the
        ``"mip_start"`` capability run cold; the ``warm_start`` column says which runs were
        warm. When the search certified its tree optimal, the formulations declaring
        ``EXACT`` also run with ``heuristics=False`` (unless ``solve_options`` says
        otherwise): their start is already optimal, so the solver spends its effort on the
        proof alone.
    fairness : Fairness, optional
        Solve the fairness-constrained problem instead: the lowest objective over trees of
        depth <= D whose disparity (``fairness.notion`` between the groups of
        ``fairness.protected``) is at most ``fairness.delta``. Only methods that can honour it
        are accepted ({FAIR_METHODS}). Every tree is re-measured with
        :func:`odtkit.metrics.fairness_gap` (column ``fairness_gap``); a tree above δ is an
        error row and never agrees. The MIPs start from the search's tree (always δ-fair), or
        from the greedy tree if it is δ-fair, else from the best single leaf (always fair).
    memory_limit_mb : float, optional
        Memory budget of each search run (None: the searches' default, 75 % of what the
        process can still get). HiGHS has no memory limit; the MIPs are bounded by time.
    y : array-like, optional
        The labels of a raw table ``dataset``: ``"exact"`` runs on the raw columns, every other
        method on their binarization by :class:`odtkit.datasets.Binarizer` as ``thresholds``
        says. The binarized trees are trees over thresholds of the same rows, scored with the
        same λ, so every objective in the table is directly comparable; an ``"exact"`` row
        that is certified is therefore <= every binarized row's objective (its bound is checked
        against every tree in the table; a violation makes its ``agrees`` False). The
        ``"exact"`` row's ``time`` includes its start (the guessed-threshold dp); the
        binarized rows' exclude the shared binarization (``Comparison.binarize_time``).
    thresholds : {"guess", "all"}, int or None, default=None
        The binarization of a raw table for the non-exact methods: ``"guess"`` (the default,
        the estimators' guessed thresholds), ``"all"`` (every midpoint: the optimum over all
        thresholds too, but as a binary problem; thousands of features on continuous
        columns) or at most N thresholds per column. Only with ``y``.
    constraints : list of constraints, optional
        Side constraints (:mod:`odtkit.constraints`, docs/constraints.md) resolved once
        against the binarized features (a raw column's name stands for all its binary
        features): every MIP carries them as named blocks; a search runs only where it
        certifies them, else its row sits out (status ``not_run``, ``message`` says why, not
        judged); every tree is re-checked (one that breaks a constraint is an ``error`` row).
        None: a given :class:`odtkit.Task`'s own.
    sized : bool, optional
        Leave out the MIPs whose model, estimated before it is built
        (:meth:`odtkit.methods.Method.too_big`), is too big to answer within ``time_limit``;
        ``Comparison.left_out`` says which and why. None (default): only when ``methods`` is
        None, so that a method named explicitly always runs (and holds its limit).
    **solve_options
        Passed to :func:`odtkit.solvers.solve` (e.g. ``threads=1``).

    Returns
    -------
    Comparison
        Every run's :class:`~odtkit.results.Result` (``.results``, ``.runs``), the best run
        (``.best``, by verified objective), whether the certified answers agree (``.agree``),
        the certified optima, the problem and, for a raw table, the binarization. Its
        ``to_frame()`` is the table: columns ``method, backend, status, objective, bound, gap,
        time, n_leaves, agrees`` plus ``reported`` (the solver's own objective),
        ``warm_start``, ``build_time`` and ``message`` (and ``fairness_gap`` with
        ``fairness``). ``objective`` is ``metrics.objective`` of the returned (decoded) tree;
        ``bound`` a lower bound on the optimum in the same units (``-inf`` for a method whose
        bound is not valid for the stated problem); ``time`` the solver's seconds (the search's
        whole call). ``agrees`` is True when the verified objective equals the best certified
        optimum within 1e-6 (None if nothing was certified) and the row's certificate is
        consistent. ``certificate`` says over what a row's bound and an ``optimal`` status
        hold: ``"all thresholds"`` (``"exact"``, and every method on a raw table binarized with
        ``thresholds="all"``: every midpoint is the same problem) or ``"binarization"`` (the
        binary features the other methods were given); ``agrees`` compares a row with the
        certified optimum of its own certificate. A method that fails to build its model
        (e.g. ``"rbinoct_original"`` when every feature is constant) gives a row with status
        ``error`` and the reason in ``message``, as does a solver whose certificate fails
        verification. Each run's ``reader`` is, on a raw table, the Binarizer that reads its
        tree from raw rows (the exact search's own, restricted to the thresholds its tree
        uses, or the shared one).
    """
    plan = _plan(
        dataset,
        lam=lam,
        max_depth=max_depth,
        methods=methods,
        backends=backends,
        time_limit=time_limit,
        warm_start=warm_start,
        fairness=fairness,
        memory_limit_mb=memory_limit_mb,
        y=y,
        thresholds=thresholds,
        sized=sized,
        constraints=constraints,
        solve_options=solve_options,
    )
    runs, source = _run_all(plan)
    return _read(plan, runs, source)


compare.__doc__ = fill_code_names(
    compare.__doc__,
    SEARCH_METHODS=SEARCH_METHODS,
    MIP_METHODS=MIP_METHODS,
    RAW_METHODS=RAW_METHODS,
    FAIR_METHODS=method_names(fair=True),
    DEFAULT_METHODS=DEFAULT_METHODS,
)


# --- planning -------------------------------------------------------------------------------


class _SearchLimits(TypedDict):
    lam: float
    time_limit: float | None
    memory_limit_mb: float | None


@dataclass(frozen=True)
class _Plan:
    """What :func:`compare` was asked, validated: the methods and the data they run on."""

    methods: tuple[Method, ...]
    backends: tuple[str, ...]
    dataset: Dataset  # what every method but the raw-table ones runs on
    lam: float
    max_depth: int  # clamped to the binarized features
    raw_depth: int  # as given (the raw-table search clamps it to the rows)
    time_limit: float | None
    memory_limit_mb: float | None
    warm_start: bool
    fairness: Fairness | None
    groups: FairnessGroups | None
    solve_options: Mapping[str, Any] = field(default_factory=dict)
    raw_X: Any = None
    y: Any = None
    binarizer: Binarizer | None = None
    thresholds: str | int | None = None
    binarize_time: float = 0.0
    left_out: Mapping[str, str] = field(default_factory=dict)
    #: the problem as the one front door states it: what fixes each run's certificate
    task: Task | None = None

    @property
    def limits(self) -> _SearchLimits:
        """What every search is given besides its data and depth."""
        return {
            "lam": self.lam,
            "time_limit": self.time_limit,
            "memory_limit_mb": self.memory_limit_mb,
        }

    @property
    def fair_kw(self) -> dict[str, Any]:
        return {} if self.fairness is None else {"fairness": self.fairness}

    @property
    def constraints(self) -> ResolvedConstraints | None:
        """The side constraints every run carries (None when none is stated)."""
        return None if self.task is None else self.task.constraints

    def sat_out(self, method: Method) -> str:
        """Why the search ``method`` sits out the side constraints ("" when it runs): the
        exact search takes none, another search only those it certifies."""
        if not self.constraints:
            return ""
        if method.raw:
            return "the exact search over every threshold takes no side constraint"
        if method.loop is not None:
            from odtkit.formulations.columns import columns_refusal

            return columns_refusal(self.constraints)
        if not method.is_search:
            return ""
        task = self.task
        assert task is not None
        if self.fairness is not None:
            task = replace(task, fairness=self.fairness)
        return search_sits_out(task, method.name)

    def certificate(self, method: Method) -> Certificate:
        """Over what ``method``'s optimum holds: the task's rule (:meth:`odtkit.Task.certificate`:
        every midpoint of a raw table is every threshold, the same problem as "exact")."""
        assert self.task is not None
        return self.task.certificate(exact=method.raw)

    def unanswered(self, method: Method, backend: str, status: Status, message: str) -> Run:
        """A run without an answer: it failed before solving, or an interrupt stopped it."""
        result = Result(
            None, math.nan, -math.inf, status, 0.0, method.name, backend, message=message
        )
        return Run(
            method.name, result, self.certificate(method), reader=self.binarizer, answered=False
        )


def _plan(
    dataset: Any,
    *,
    lam: Any,
    max_depth: Any,
    methods: Any,
    backends: Any,
    time_limit: Any,
    warm_start: bool,
    fairness: Any,
    memory_limit_mb: float | None,
    y: Any,
    thresholds: Any,
    sized: bool | None,
    solve_options: Mapping[str, Any],
    constraints: Any = None,
) -> _Plan:
    """Validate the arguments (in the order their errors are reported) and prepare the data."""
    from odtkit.solvers import backend_capabilities

    lam = check_lambda(lam)
    if sized is None:
        sized = methods is None
    elif not isinstance(sized, bool):
        raise TypeError(f"sized must be True, False or None, got {sized!r}")
    names = check_names(DEFAULT_METHODS if methods is None else methods, "methods")
    chosen = tuple(get_method(m, what="methods entry") for m in names)
    raw: dict[str, Any] = {}
    if y is not None:
        raw = _binarized(dataset, y, thresholds)
        data = raw["dataset"]
    else:
        if thresholds is not None:
            raise ValueError("thresholds binarizes a raw table: pass it with y (the labels)")
        given = dataset if isinstance(dataset, Task) else None
        needs_raw = [m.name for m in chosen if m.raw]
        if needs_raw and (given is None or not given.is_table):
            raise ValueError(
                f"methods entry {needs_raw[0]!r} searches every threshold of a raw table: pass "
                "compare(X, y=labels, ...) with the table's numeric columns"
            )
        if given is not None and given.is_table:
            raw = _task_fields(given.with_every_midpoint())
            data = raw["dataset"]
        elif given is not None:
            data = check_dataset(given.dataset)
            raw = {"task": given}
        else:
            data = check_dataset(resolve(dataset))
            raw = {"task": Task.from_dataset(data)}
    if constraints is not None or (raw.get("task") is not None and raw["task"].constraints):
        # resolved once against the binarized features (raw columns by name); a Task given
        # with its own constraints keeps them unless others are given here
        task = raw["task"] if constraints is None else raw["task"].constrained(constraints)
        raw = {**raw, "task": task}
    raw_depth = _depth(max_depth)
    depth = _depth(max_depth, n_features=data.n_features)
    time_limit = check_positive_number(time_limit, "time_limit")
    groups = _fairness_groups(fairness, data)
    for method in chosen:
        check_fair(method, fairness)
    backend_names = check_names(backends, "backends")
    for b in backend_names:
        backend_capabilities(b)  # raises ValueError naming the registered backends
    left_out = _too_big(chosen, data, depth, time_limit) if sized else {}
    return _Plan(
        methods=tuple(m for m in chosen if m.name not in left_out),
        backends=backend_names,
        left_out=left_out,
        lam=lam,
        max_depth=depth,
        raw_depth=raw_depth,
        time_limit=time_limit,
        memory_limit_mb=memory_limit_mb,
        warm_start=warm_start,
        fairness=fairness,
        groups=groups,
        solve_options=solve_options,
        **{"dataset": data, **raw},
    )


def _too_big(
    methods: tuple[Method, ...], data: Dataset, depth: int, time_limit: float | None
) -> dict[str, str]:
    """The MIPs of ``methods`` too big to answer ``data`` within ``time_limit``, with why
    (:meth:`Method.too_big`, nothing built). One method always stays: with every one too
    big, the first runs, so that the table is never empty."""
    out = {m.name: m.too_big(data, depth, time_limit) for m in methods}
    out = {name: why for name, why in out.items() if why}
    if len(out) == len(methods) and methods:
        out.pop(methods[0].name)
    return out


def _depth(max_depth: Any, n_features: int | None = None) -> int:
    depth = check_depth(max_depth, "max_depth", allow_none=False, minimum=1, n_features=n_features)
    assert depth is not None  # allow_none=False
    return depth


def _binarized(X: Any, y: Any, thresholds: Any) -> dict[str, Any]:
    """The raw table's fields of a :class:`_Plan`: the table, its labels, its binarization
    (a :class:`odtkit.Task` of the threshold policy: every midpoint for ``"all"``, which the
    methods on a binarization need; "exact" reads the table itself)."""
    if isinstance(X, (Dataset, str, Task)):
        raise ValueError(
            "y is given, so dataset must be the raw table (a DataFrame or 2-D array) of "
            f"those labels, not a {type(X).__name__}"
        )
    task = Task.from_table(X, y, thresholds=thresholds, binarize=True, exact=False)
    return _task_fields(task)


def _task_fields(task: Task) -> dict[str, Any]:
    """A table :class:`odtkit.Task`'s fields of a :class:`_Plan`."""
    assert task.dataset is not None and task.thresholds is not None
    choice = task.thresholds.choice
    return {
        "dataset": task.dataset,
        "raw_X": task.X,
        "y": task.y,
        "binarizer": task.binarizer,
        "thresholds": choice if task.thresholds == Thresholds(choice) else task.thresholds,
        "binarize_time": task.binarize_time,
        "task": task,
    }


def _fairness_groups(fairness: Any, dataset: Dataset) -> FairnessGroups | None:
    """``fairness`` resolved against ``dataset`` once (its errors name the argument)."""
    if fairness is None:
        return None
    if not isinstance(fairness, Fairness):
        raise TypeError(f"fairness must be an odtkit.Fairness, got {type(fairness).__name__}")
    return fairness.groups(dataset)


# --- running --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Start:
    """The MIPs' warm start: the tree, where it came from, whether it is certified optimal."""

    tree: Tree | None = None
    source: str = "none"
    optimal: bool = False
    value: float = math.inf


def _run_all(plan: _Plan) -> tuple[list[Run], str]:
    """Every run in order (the searches, then each MIP per backend) and the start's source.

    Ctrl-C ends the run it interrupts (status interrupted, best answer kept) and the table:
    the runs after it are rows with status not_run.
    """
    runs: list[Run] = []
    interrupted = False
    for method in plan.methods:
        if method.is_search:
            solve = partial(_run_search, plan, method)
            interrupted = _attempt(plan, method, "native", interrupted, runs, solve)
    start = _start(plan, runs)
    for method in plan.methods:
        if method.is_search:
            continue
        formulation = method.formulation() if method.is_formulation else None
        for backend in plan.backends:
            if formulation is None:
                solve = partial(_run_loop, plan, method, backend, start)
            else:
                solve = partial(_run_mip, plan, method, formulation, backend, start)
            interrupted = _attempt(plan, method, backend, interrupted, runs, solve)
    return runs, start.source


def _attempt(
    plan: _Plan,
    method: Method,
    backend: str,
    interrupted: bool,
    runs: list[Run],
    solve: Callable[[], Run],
) -> bool:
    """Append ``method``'s run on ``backend`` to ``runs`` (not run after an interrupt); return
    whether the table is interrupted now."""
    if interrupted:
        runs.append(plan.unanswered(method, backend, Status.NOT_RUN, _NOT_RUN))
        return True
    run = None
    began = time.perf_counter()
    with stop_on_interrupt() as ctrl_c:  # Ctrl-C outside the solver
        try:
            run = solve()
        except Exception as exc:  # noqa: BLE001 - one method's failure is its row (see _failed)
            run = _failed(plan, method, backend, exc)
        run = replace(run, wall=time.perf_counter() - began)
    if run is None:
        runs.append(plan.unanswered(method, backend, Status.INTERRUPTED, _INTERRUPTED_OUTSIDE))
        return True
    runs.append(run)
    return ctrl_c.interrupted or run.status == Status.INTERRUPTED


#: The longest reason a failed run's row quotes from its exception.
_REASON_CHARS = 200


def _failed(plan: _Plan, method: Method, backend: str, exc: Exception) -> Run:
    """The row of a run that raised: ``memory_limit`` for a MemoryError (a model too large
    for the address space, e.g. PathOCT's cells under ``ulimit -v``), else ``error``, with the
    exception in one line. The comparison goes on: the other rows and their verified answers
    are worth more than one method's traceback (issue 37)."""
    text = " ".join(str(exc).split())
    if len(text) > _REASON_CHARS:
        text = text[: _REASON_CHARS - 3] + "..."
    said = f": {text}" if text else ""
    if isinstance(exc, MemoryError):
        status, message = Status.MEMORY_LIMIT, f"out of memory{said}; nothing was solved"
    else:
        status, message = Status.ERROR, f"failed with {type(exc).__name__}{said}"
    return plan.unanswered(method, backend, status, message)


def _run_search(plan: _Plan, method: Method) -> Run:
    """One native search (over the raw table's every threshold for a raw-table method),
    through :func:`odtkit.solve` on the plan's task; a search that cannot certify the side
    constraints sits out (a ``not_run`` row saying why)."""
    assert plan.task is not None
    why = plan.sat_out(method)
    if why:
        run = plan.unanswered(method, "native", Status.NOT_RUN, f"sat out: {why}")
        return replace(run, sat_out=why)
    task = plan.task if plan.fairness is None else replace(plan.task, fairness=plan.fairness)
    result = solve(
        task,
        method=method,
        lam=plan.lam,
        max_depth=plan.raw_depth if method.raw else plan.max_depth,
        time_limit=plan.time_limit,
        memory_limit_mb=plan.memory_limit_mb,
    )
    reader = result.binarizer if method.raw else plan.binarizer
    return Run(method.name, result, plan.certificate(method), method.properties, reader)


def _run_mip(
    plan: _Plan,
    method: Method,
    formulation: Formulation[Dataset, TreeProblem, Any, Tree],
    backend: str,
    start: _Start,
) -> Run:
    """One MIP on one backend; a model that cannot be built is an error run, one too big for
    the solver to even set up within the limit is not built (a time_limit run)."""
    tree = start.tree if plan.warm_start else None
    hopeless = method.too_big(plan.dataset, plan.max_depth, plan.time_limit, setup=True)
    if hopeless:
        return _not_built(plan, method, backend, tree, hopeless)
    try:
        result = solve_formulation(
            formulation,
            plan.dataset,
            backend=backend,
            start=tree,
            start_is_optimal=start.optimal,
            time_limit=plan.time_limit,
            solve_options=plan.solve_options,
            lam=plan.lam,
            max_depth=plan.max_depth,
            **plan.fair_kw,
            **({"constraints": plan.constraints} if plan.constraints else {}),
        )
    except ValueError as exc:  # e.g. original BinOCT on all-constant features
        return plan.unanswered(method, backend, Status.ERROR, str(exc))
    if tree is not None and result.model is None:
        result = _keep_start(result, tree, plan.dataset, plan.lam)
    if result.lower_bound == -math.inf and not result.message and VALID_BOUND in method.properties:
        result = result.replace(message=_no_bound(result, backend))
    return Run(
        method.name,
        result,
        plan.certificate(method),
        formulation.properties,
        plan.binarizer,
        warm_start=result.stats["warm_start"],
    )


def _run_loop(plan: _Plan, method: Method, backend: str, start: _Start) -> Run:
    """One column-generation method (branch-and-price) on one backend, started from the
    searches' tree; it sits out constraints its pricing cannot take (a ``not_run`` row)."""
    why = plan.sat_out(method)
    if why:
        run = plan.unanswered(method, backend, Status.NOT_RUN, f"sat out: {why}")
        return replace(run, sat_out=why)
    tree = start.tree if plan.warm_start else None
    result = method.solve(
        plan.dataset,
        lam=plan.lam,
        max_depth=plan.max_depth,
        backend=backend,
        time_limit=plan.time_limit,
        start=tree,
        fairness=plan.fairness,
        constraints=plan.constraints or None,
    )
    return Run(
        method.name,
        result,
        plan.certificate(method),
        method.properties,
        plan.binarizer,
        warm_start=tree is not None,
    )


def _not_built(plan: _Plan, method: Method, backend: str, tree: Tree | None, why: str) -> Run:
    """The row of a MIP not built because the solver could not set its model up within the
    limit (HiGHS's presolve and root preparation poll no limit: such a model overran 10 s by
    3-4 s on broward and wine): status time_limit, the warm start verified, no bound."""
    message = f"not built: {why}; it would overrun the limit before solving"
    if tree is None:
        return plan.unanswered(method, backend, Status.TIME_LIMIT, message)
    objective = metrics.objective(tree, plan.dataset, lam=plan.lam)
    result = Result(
        tree,
        objective,
        -math.inf,
        Status.TIME_LIMIT,
        0.0,
        method.name,
        backend,
        stats={"build_time": 0.0, "solve_time": 0.0, "warm_start": True, "model_ir": None},
        message=message + "; the row reports its warm start",
    )
    return Run(
        method.name,
        result,
        plan.certificate(method),
        method.properties,
        plan.binarizer,
        warm_start=True,
    )


def _no_bound(result: Result, backend: str) -> str:
    """Why a MIP that declares a valid bound has none (``-inf``), in the row's words."""
    solution = result.solution
    if result.status == Status.INTERRUPTED:
        return "no bound: interrupted (Ctrl-C) before the root LP relaxation was solved"
    if solution is None or result.status == Status.ERROR:
        return "no bound: nothing was solved"
    if backend != "highs" and solution.nodes == 0 and result.status.stopped_early:
        # the modelling layers read a bound back only from a finished solve
        return f"no bound: the {backend} backend reports one only when the solve finishes"
    if result.status.stopped_early and solution.nodes == 0:
        return (
            f"no bound: the root LP relaxation did not finish in the limit "
            f"({solution.time:.3g} s of solver time)"
        )
    return f"no bound: the solver stopped ({result.status}) without one"


def _start(plan: _Plan, searches: list[Run]) -> _Start:
    """The MIPs' start: the first binarized search's tree, or the exact search's when it is
    better and lies in the binarization, else (warm starts wanted) the greedy tree, or the best
    single leaf when the greedy tree is not fair."""
    start = _Start()
    exact: _Start | None = None
    for run in searches:
        if not run.answered:
            continue
        optimal = run.status == Status.OPTIMAL
        if METHODS[run.method].raw:
            # a MIP start only if every threshold its tree tests is in the binarized table
            moved = _into(
                run.tree, run.reader, plan.binarizer, plan.dataset, plan.lam, run.objective
            )
            if moved is not None and exact is None:
                exact = _Start(moved, "exact", optimal, run.objective)
        elif start.tree is None:
            start = _Start(run.tree, "search_tree", optimal, run.objective)
    if exact is not None and exact.value < start.value - TOLERANCE:
        # optimal over every threshold and in the binarization: optimal there too
        start = exact
    if start.tree is None and plan.warm_start:
        start = _greedy_start(plan)
    return start


def _greedy_start(plan: _Plan) -> _Start:
    """Without a search tree: the greedy tree, or the best single leaf when it is not fair."""
    from odtkit.greedy import greedy_tree

    greedy = greedy_tree(plan.dataset, lam=plan.lam, max_depth=plan.max_depth)
    constraints = plan.constraints
    if constraints and constraints.violations(greedy, plan.dataset):
        # never a start that breaks a side constraint: the single leaf if it meets them all,
        # else the MIPs start cold
        leaf = _best_leaf(plan.dataset)
        if constraints.violations(leaf, plan.dataset):
            return _Start()
        if plan.groups is None or metrics.is_fair(leaf, plan.dataset, plan.groups):
            return _Start(leaf, "single_leaf")
        return _Start()
    if plan.groups is not None and not metrics.is_fair(greedy, plan.dataset, plan.groups):
        return _Start(_best_leaf(plan.dataset), "single_leaf")
    return _Start(greedy, "greedy_tree")


def _into(
    tree: Tree | None,
    reader: Any,
    binarizer: Any,
    dataset: Dataset,
    lam: float,
    objective: float,
) -> Tree | None:
    """``tree`` (over ``reader``'s features) re-indexed over ``binarizer``'s, when every test it
    makes is one of them (same column, kind, threshold and missing-value routing); else None.

    Checked by re-scoring: the moved tree must score ``objective`` on ``dataset``."""
    if tree is None or reader is None or binarizer is None:
        return None

    def key(spec: Any) -> tuple[Any, ...]:
        return (spec.source, spec.kind, spec.value, spec.missing)

    index = {key(spec): j for j, spec in enumerate(binarizer.get_feature_specs())}
    specs = reader.get_feature_specs()

    def walk(node: Tree | None) -> Tree | None:
        if node is None or node.is_leaf:
            return node
        j = index.get(key(specs[node.feature]))
        left = walk(node.left) if j is not None else None
        right = walk(node.right) if left is not None else None
        return None if j is None or left is None or right is None else Tree.split(j, left, right)

    moved = walk(tree)
    if moved is None:
        return None
    score = metrics.objective(moved, dataset, lam=lam)
    return moved if abs(score - objective) <= TOLERANCE else None


def _keep_start(result: Result, start: Tree, dataset: Dataset, lam: float) -> Result:
    """A MIP stopped before its solver ran (the build used up the time limit) still holds its
    warm start: the row reports that tree, verified, with the status the run ended in and no
    bound of its own (``-inf``, valid), as a solver stopped at once would have."""
    why = result.stats.get("stopped_before_solve")
    if not why or result.status != Status.TIME_LIMIT:
        return result
    return result.replace(
        model=start,
        objective=metrics.objective(start, dataset, lam=lam),
        stats={**result.stats, "warm_start": True},
        message=f"{why}: nothing was solved, the row reports its warm start",
    )


def _best_leaf(dataset: Dataset) -> Tree:
    """The single leaf of least error: always δ-fair, a start for any fair MIP."""
    from odtkit.tree import majority_label

    counts = np.bincount(dataset.y, weights=dataset.weights, minlength=dataset.n_classes)
    return Tree.leaf(majority_label(counts))


# --- reading --------------------------------------------------------------------------------


def _read(plan: _Plan, runs: list[Run], source: str) -> Comparison:
    """The comparison of ``runs``: each tree's disparity re-measured, the certified optimum of
    each certificate, and each run's verdict against it."""
    if plan.groups is not None:
        runs = [_judged_fairness(run, plan.dataset, plan.groups) for run in runs]
    if plan.constraints:
        runs = [_judged_constraints(run, plan.dataset, plan.constraints) for run in runs]
    optima = {kind: _certified(runs, kind) for kind in dict.fromkeys(r.certificate for r in runs)}
    best = {kind: _best_verified(runs, kind) for kind in optima}
    runs = [replace(r, agrees=_agrees(r, optima[r.certificate], best[r.certificate])) for r in runs]
    data = plan.dataset
    return Comparison(
        runs=tuple(runs),
        dataset=data.name,
        lam=plan.lam,
        max_depth=plan.max_depth,
        certified_optima=optima,
        warm_start_source=source,
        feature_names=tuple(data.feature_names),
        class_names=tuple(data.classes),
        fairness=plan.fairness,
        binarizer=plan.binarizer,
        thresholds=plan.thresholds if plan.raw_X is not None else None,
        binarize_time=plan.binarize_time,
        left_out=plan.left_out,
        task=plan.task,
    )


def _judged_constraints(run: Run, dataset: Dataset, constraints: ResolvedConstraints) -> Run:
    """``run`` with its tree re-checked against the side constraints (:mod:`odtkit.metrics`'s
    one truth); a tree that breaks one makes it an error run, never a certificate."""
    tree = run.tree
    if tree is None or run.unfair:
        return run
    broken = constraints.violations(tree, dataset)
    if not broken:
        return run
    said = run.result.message
    message = f"its tree breaks a side constraint: {broken[0]}: not a feasible answer" + (
        f"; {said}" if said else ""
    )
    result = run.result.replace(status=Status.ERROR, lower_bound=-math.inf, message=message)
    return replace(run, result=result, unfair=True)


def _judged_fairness(run: Run, dataset: Dataset, groups: FairnessGroups) -> Run:
    """``run`` with its tree's disparity re-measured; a tree above δ makes it an error run."""
    from odtkit.fairness import FAIRNESS_TOLERANCE

    tree = run.tree
    if tree is None:
        return replace(run, fairness_gap=math.nan)
    gap = metrics.fairness_gap(tree, dataset, groups)
    if gap <= groups.delta + FAIRNESS_TOLERANCE:
        return replace(run, fairness_gap=gap)
    said = run.result.message
    message = (
        f"its tree has disparity {gap:.6g} > delta={groups.delta:g}: not a feasible answer"
    ) + (f"; {said}" if said else "")
    result = run.result.replace(status=Status.ERROR, lower_bound=-math.inf, message=message)
    return replace(run, result=result, fairness_gap=gap, unfair=True)


# Two problems may share a comparison: OPT over all thresholds (the exact search) <= OPT over
# the binarization (every binarized tree is a threshold tree on the same rows and λ). A run's
# certificate is judged within its problem; an all-thresholds bound must also stay below every
# tree of the table.


def _best_verified(runs: list[Run], kind: str) -> float:
    """The least verified objective a certificate ``kind``'s bound must not exceed: over the
    runs of that certificate, and over every run for ``"all thresholds"``."""
    values = [
        r.objective
        for r in runs
        if r.feasible and (r.certificate == kind or kind == "all thresholds")
    ]
    return min(values) if values else math.nan


def _certified(runs: list[Run], kind: str) -> float:
    """The certified optimum of certificate ``kind`` (``nan`` if none): the least objective an
    exact method proved optimal, else the best feasible tree when a valid bound meets it."""
    mine = [r for r in runs if r.certificate == kind]
    # a run's bound is valid for its problem by its method's declared properties; a failed
    # certificate was already dropped to -inf by verify_solution
    bound = max((r.bound for r in mine if VALID_BOUND in r.properties), default=-math.inf)
    optimal = [
        r.objective
        for r in mine
        if EXACT in r.properties and r.status == Status.OPTIMAL and not math.isnan(r.objective)
    ]
    if optimal:
        return min(optimal)
    own = [r.objective for r in mine if r.feasible]
    return min(own) if own and min(own) <= bound + TOLERANCE else math.nan


def _agrees(run: Run, certified: float, best: float) -> bool | None:
    """``run``'s verdict: its tree meets the certified optimum and its bound is consistent."""
    if run.sat_out:
        return None  # not run: nothing to judge
    if not run.feasible:
        return False
    # verify_solution flags a solver whose value or bound contradicts its own tree; a bound
    # above another method's verified tree would be a bug too
    consistent = run.status != Status.ERROR and run.bound <= best + TOLERANCE
    if math.isnan(certified):
        return None if consistent else False
    return consistent and abs(run.objective - certified) <= TOLERANCE

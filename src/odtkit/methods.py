"""The one vocabulary of tree methods: :func:`odtkit.compare`'s ``methods=``, the estimator's
``method=`` and the CLI's ``--methods`` all take these names.

* search methods (the native core, :func:`odtkit.core.search_tree`): {SEARCH_METHODS};
* MIP methods (a formulation solved by a backend through :func:`odtkit.solve_formulation`):
  {MIP_METHODS};
* the raw-table method {RAW_METHODS} (:func:`odtkit.core.search_numeric`): the native search
  over every threshold of the numeric columns themselves, certified over *all thresholds*
  where the others are certified over the binarization they are given
  (:attr:`Method.certificate`). It needs the raw table, not a binarized Dataset:
  :meth:`Method.search_raw`, ``compare(X, y=...)``, ``OptimalTreeClassifier(thresholds="all")``.

"solver" is not a method: it names a backend's solver program (``solve(..., solver="cbc")``).
What a method's answer means (exact, valid bound) is read from :attr:`Method.properties`: the
formulation's declared properties, stated on the entry so that reading them builds no
formulation (``tests/test_registry.py`` checks them against ``formulation().properties``),
never from lists of names.

This mapping is the one list of method names: the estimators' ``_parameter_constraints``, the
CLI's ``--method`` / ``--methods`` choices and help, and the docstrings that name methods
(:func:`method_names`) are all read from it, so a new entry reaches each of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, overload

from odtkit.datasets._columns import GUESS_ROUNDS
from odtkit.formulations import (
    DECODE_NOT_WORSE,
    EXACT,
    VALID_BOUND,
    BinOCT,
    FlowOCT,
    Formulation,
    PathOCT,
    Property,
    RBinOCT,
    TreeProblem,
)
from odtkit.results import Certificate, Result

if TYPE_CHECKING:
    from odtkit.datasets._dataset import Dataset
    from odtkit.tree import Tree

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DATASET_METHODS",
    "DEFAULT_TIME_LIMIT",
    "GUESS_ROUNDS",
    "METHODS",
    "MIP_METHODS",
    "Method",
    "RAW_METHODS",
    "SEARCH_METHODS",
    "check_fair",
    "search_refusal",
    "describe",
    "fill_code_names",
    "fill_method_names",
    "get_method",
    "method_names",
]

#: The defaults every entry point shares (the estimators, ``odtkit fit`` and ``odtkit compare``),
#: so that the same table gives the same tree whichever way it was fitted.
#: Depth 3 is what every MIP method can still prove on real tables, and what the search
#: certifies in well under a second on guessed thresholds.
DEFAULT_MAX_DEPTH = 3
#: Seconds; a limit returns the best tree so far with a valid bound, never nothing.
DEFAULT_TIME_LIMIT = 60.0


@dataclass(frozen=True)
class Method:
    """A named way to solve ``min R(T)`` over trees of depth <= D.

    Attributes
    ----------
    name : str
    description : str
        One line, shown by ``odtkit compare --help``.
    factory : callable or None
        Makes the formulation of a MIP method (None for a search method).
    fair : bool
        Solves the fairness-constrained problem too (``fairness=`` of :func:`odtkit.compare`,
        :func:`odtkit.search_tree` and the formulation's ``build``).
    raw : bool
        Runs on the raw table (numeric / categorical columns, missing cells) and searches every
        threshold itself (:meth:`search_raw`), instead of on a binarized Dataset.
    properties : frozenset of Property
        What the answer means (:class:`odtkit.formulations.Property`): a MIP method's are its
        formulation's declared properties, stated here so that reading them constructs no
        formulation; a search certifies the optimum of the stated problem and its bound is
        valid for it (the default).
    cost : float or None
        Time on a cell relative to the dp's, for the order in which a sweep runs its tasks
        (:func:`odtkit._schedule.prior_cost`; only the order rests on it); None: 1 for a search,
        200 for a MIP (a formulation's build and a HiGHS solve: the long tasks of a mixed grid).
    answers_per_second : float or None
        A MIP's reach: the nonzeros of its model (:meth:`Formulation.estimate_size
        <odtkit.formulations._common.TreeFormulation.estimate_size>`, counted before building)
        it can still answer per second of time limit, measured with HiGHS on real tables
        (``benchmarks/compare_real_tables.py``). A larger model is left out of
        :func:`odtkit.compare`'s default methods (:meth:`too_big`); None: never left out.
    loop : callable or None
        Runs a method that is neither one search nor one model: column generation with
        branch-and-price (:func:`odtkit.branch_and_price`), which alternates a master LP
        solved by a backend with the search as its pricing engine. It takes a Dataset and the
        keywords of :meth:`solve` and returns a Result; like a MIP it needs a depth, runs once
        per backend and starts from the search's tree.
    sets_up_per_second : float or None
        The nonzeros HiGHS still sets up (reads, presolves, prepares its root) per second of
        time limit: phases that poll no limit, so a larger model would overrun it whatever the
        limit says; :func:`odtkit.compare` does not build it (status ``time_limit``, the warm
        start kept, the reason in its row) even when named. None: always built.
    """

    name: str
    description: str
    factory: Callable[[], Formulation[Dataset, TreeProblem, Any, Tree]] | None = None
    fair: bool = False
    raw: bool = False
    properties: frozenset[Property] = frozenset({EXACT, VALID_BOUND})
    cost: float | None = None
    answers_per_second: float | None = None
    sets_up_per_second: float | None = None
    loop: Callable[..., Result] | None = None

    def too_big(
        self, dataset: Any, max_depth: int, time_limit: float | None, *, setup: bool = False
    ) -> str:
        """Why this MIP cannot answer ``dataset`` at ``max_depth`` within ``time_limit``
        seconds ("" when it can, for a search, or without a limit): its estimated model has
        more nonzeros than :attr:`answers_per_second` times the limit (``setup``: than
        :attr:`sets_up_per_second` times it, so that the solver could not even start within
        the limit). Nothing is built."""
        if self.factory is None:
            return ""
        rate = self.sets_up_per_second if setup else self.answers_per_second
        if self.is_search or rate is None or time_limit is None:
            return ""
        from odtkit.formulations._common import TreeFormulation

        formulation = self.formulation()
        if not isinstance(formulation, TreeFormulation):
            return ""
        size = formulation.estimate_size(dataset, max_depth)
        reach = rate * time_limit
        if size.n_nonzeros <= reach:
            return ""
        can = "HiGHS sets up" if setup else "it answers"
        return (
            f"its model has ~{size.n_nonzeros:,} nonzeros, more than {can} in "
            f"{time_limit:g} s (~{reach:,.0f})"
        )

    @property
    def relative_cost(self) -> float:
        """:attr:`cost`, or its default: 1 for a search, 200 for a MIP."""
        if self.cost is not None:
            return self.cost
        return 1.0 if self.factory is None else 200.0

    @property
    def certificate(self) -> Certificate:
        """What an optimal answer is optimal over, knowing only the method: ``"all
        thresholds"`` (a raw-table method) or ``"binarization"`` (the binary features it was
        given). What a run on a table is certified over also depends on the table and its
        threshold policy: :meth:`odtkit.Task.certificate` decides it (the ``certificate`` of
        :func:`odtkit.solve`'s Result and of :func:`odtkit.compare`'s rows)."""
        return Certificate.ALL_THRESHOLDS if self.raw else Certificate.BINARIZATION

    @property
    def is_search(self) -> bool:
        """Run by the native search core (else a MIP: a formulation or a column-generation
        loop, solved by a backend)."""
        return self.factory is None and self.loop is None

    @property
    def is_formulation(self) -> bool:
        """A MIP formulation built once and solved by a backend (:meth:`formulation`)."""
        return self.factory is not None

    def formulation(self) -> Formulation[Dataset, TreeProblem, Any, Tree]:
        """A new formulation object of this MIP method."""
        if self.factory is None:
            kind = "a search method" if self.is_search else "a column-generation method"
            raise ValueError(f"{self.name!r} is {kind}, not a MIP formulation")
        return self.factory()

    def search(
        self,
        dataset: Any,
        *,
        lam: float,
        max_depth: int | None,
        time_limit: float | None = None,
        fairness: Any = None,
        memory_limit_mb: float | None = None,
        constraints: Any = None,
    ) -> Result:
        """Run this search method on ``dataset`` (a model-level Result with a Tree).

        ``memory_limit_mb=None`` is the searches' default budget (see ``search_tree``).
        ``constraints``: side constraints (:mod:`odtkit.constraints`) the search must
        certify; a ValueError naming the one it cannot (:func:`search_refusal`).
        """
        from odtkit.core import search_tree

        if not self.is_search:
            raise ValueError(f"{self.name!r} is a MIP method, not a search")
        if self.raw:
            raise ValueError(
                f"method {self.name!r} runs on the raw table (its numeric columns' every "
                "threshold), not on a binarized Dataset: use compare(X, y=...), "
                "OptimalTreeClassifier(thresholds='all') or odtkit.core.search_numeric"
            )
        check_fair(self, fairness)
        extra: dict[str, Any] = {} if fairness is None else {"fairness": fairness}
        if constraints:
            from odtkit.constraints import resolve

            constraints = resolve(constraints, dataset)
            why = search_refusal(constraints, self.name)
            if why:
                raise ValueError(f"method {self.name!r} cannot take the constraints: {why}")
            extra["constraints"] = constraints
        return search_tree(
            dataset,
            lam=lam,
            max_depth=max_depth,
            method=self.name,
            time_limit=time_limit,
            memory_limit_mb=memory_limit_mb,
            **extra,
        )

    def solve(
        self,
        dataset: Any,
        *,
        lam: float,
        max_depth: int | None,
        backend: str = "highs",
        time_limit: float | None = None,
        memory_limit_mb: float | None = None,
        fairness: Any = None,
        start: Any = None,
        start_is_optimal: bool = False,
        constraints: Any = None,
    ) -> Result:
        """Run this method on the binarized ``dataset``: the native search (:meth:`search`), or
        the formulation built and solved by ``backend`` (:func:`odtkit.solve_formulation`,
        warm-started from the tree ``start``, which a MIP method needs a depth for).

        The one way the estimators, ``odtkit fit`` and :func:`odtkit.sweep` run a method, so
        that they agree on what a method means; ``memory_limit_mb`` bounds a search only (HiGHS
        has no memory limit), ``backend``, ``start`` and ``start_is_optimal`` a MIP only.
        ``constraints`` (:mod:`odtkit.constraints`, a list or a
        :class:`~odtkit.constraints.ResolvedConstraints` of ``dataset``): a MIP carries them
        as named blocks, a search takes them only where it can certify them (ValueError
        otherwise, :func:`search_refusal`).
        """
        if self.is_search:
            return self.search(
                dataset,
                lam=lam,
                max_depth=max_depth,
                time_limit=time_limit,
                fairness=fairness,
                memory_limit_mb=memory_limit_mb,
                constraints=constraints,
            )
        from odtkit.pipeline import solve_formulation

        if max_depth is None:
            raise ValueError(f"method {self.name!r} is a MIP over a complete tree: set max_depth")
        check_fair(self, fairness)
        extra: dict[str, Any] = {} if fairness is None else {"fairness": fairness}
        if constraints:
            extra["constraints"] = constraints
        if self.loop is not None:
            return self.loop(
                dataset,
                lam=lam,
                max_depth=max_depth,
                backend=backend,
                time_limit=time_limit,
                start=start,
                **extra,
            )
        return solve_formulation(
            self.formulation(),
            dataset,
            backend=backend,
            start=start,
            start_is_optimal=start_is_optimal,
            time_limit=time_limit,
            lam=lam,
            max_depth=max_depth,
            **extra,
        )

    def search_raw(
        self,
        X: Any,
        y: Any,
        *,
        lam: float,
        max_depth: int,
        sample_weight: Any = None,
        time_limit: float | None = None,
        memory_limit_mb: float | None = None,
        categorical: list[str] | None = None,
    ) -> Result:
        """Run this raw-table method on the columns ``X`` and labels ``y`` (``categorical``:
        columns taken as categories, as :func:`odtkit.core.search_numeric`'s).

        The exact search starts from its own incumbents (``start="auto"``): the guessed-
        threshold dp tree runs only if a limit stops the search, in the share of
        ``time_limit`` kept back for it, and the better tree comes back (the guess never made
        a certificate faster; it cost up to 1.7 s per fit). The Result's ``binarizer`` reads
        new rows for its ``model``.
        """
        from odtkit.core import search_numeric

        if not self.raw:
            raise ValueError(f"{self.name!r} runs on a binarized Dataset: use search()")
        n_rows = len(X) if hasattr(X, "__len__") else 0
        if isinstance(max_depth, int) and not isinstance(max_depth, bool) and n_rows > 1:
            # a split that leaves a side empty never helps, so no optimal tree needs more
            # than n - 1 splits on a path: the same optimum, and no huge integer goes native
            max_depth = min(max_depth, n_rows - 1)
        return search_numeric(
            X,
            y,
            lam=lam,
            max_depth=max_depth,
            sample_weight=sample_weight,
            time_limit=time_limit,
            memory_limit_mb=memory_limit_mb,
            categorical=categorical,
            start="auto",
        )


def search_refusal(constraints: Any, method: str = "dp") -> str:
    """Why the native search ``method`` cannot certify ``constraints`` (a
    :class:`~odtkit.constraints.ResolvedConstraints`, or a list); "" when it can or none is
    stated.

    The one rule is :func:`odtkit.core.search.search_refusal`; :func:`odtkit.solve`,
    :func:`odtkit.compare` and :meth:`Method.search` ask it here, so the search sits out
    with this reason rather than drop a constraint. A native core without that rule takes
    no side constraint.
    """
    from odtkit.constraints import ResolvedConstraints

    if not constraints:
        return ""
    core = importlib.import_module("odtkit.core.search")
    refusal = getattr(core, "search_refusal", None)
    if refusal is None:
        shown = (
            constraints.describe()
            if isinstance(constraints, ResolvedConstraints)
            else ", ".join(map(str, constraints))
        )
        return f"the native search takes no side constraint ({shown})"
    return str(refusal(constraints, method))


def check_fair(method: Method, fairness: Any) -> None:
    """ValueError when ``fairness`` is given to a method that cannot honour it."""
    if fairness is not None and not method.fair:
        fair = method_names(fair=True)
        raise ValueError(
            f"method {method.name!r} cannot solve a fairness-constrained problem; use one of {fair}"
        )


def _branch_and_price(dataset: Any, **kw: Any) -> Result:
    """:func:`odtkit.branch_and_price` (imported when first run: it imports the solvers)."""
    from odtkit.branch_and_price import branch_and_price

    return branch_and_price(dataset, **kw)


#: What an exact MIP formulation declares: its optimum is the stated problem's, its bound is
#: valid, and decoding never worsens the solver's objective.
_EXACT_MIP = frozenset({EXACT, VALID_BOUND, DECODE_NOT_WORSE})

#: The reach of the MIPs (``Method.answers_per_second``): nonzeros of the estimated model per
#: second of time limit up to which HiGHS, warm-started, still certified the depth-3 trees of
#: real tables in 10 s (guessed thresholds, lam=0.01, load 2-3 on 2 cores;
#: benchmarks/results/compare_real_tables_forced): PathOCT's integral LP certified
#: car-evaluation (136,000), balance-scale (167,000), compas-2016 (243,000) and COMPAS
#: (288,000, in 8 s) but not tic-tac-toe (243,000) nor anything from 600,000 on; FlowOCT
#: certified 61,000 and 125,000 but not 32,000-42,000 on four others (its size predicts
#: little: 2,000 keeps the tables it answers at depth 2, wine's 14,000 in 8 s); RBinOCT
#: nothing above 1,300 (its big-M LP bound is lam). BinOCT's family shares the big-M reach.
#: ``sets_up_per_second``: the models HiGHS overran 10 s on, first run of the same benchmark:
#: PathOCT 600,000 (broward: 13.0 s) and 1.3 M (wine: 14.0 s), FlowOCT 353,000 (broward:
#: 13.2 s), RBinOCT 2.4 M (coupon_carryout: 13.5 s); those it held: PathOCT 288,000, FlowOCT
#: 158,000, RBinOCT 450,000.
_BIG_M_REACH = 1_000.0

METHODS: MappingProxyType[str, Method] = MappingProxyType(
    {
        m.name: m
        for m in (
            Method("dp", "native dynamic programming with bounds (GOSDT/STreeD-style)", fair=True),
            Method("bnb", "native OSDT branch-and-bound", cost=3.0),
            Method(
                "exact",
                "native search over every threshold of the raw numeric columns: optimum over "
                "all thresholds (a CSV or compare(X, y=...); depth-limited)",
                raw=True,
            ),
            Method(
                "rbinoct",
                "regularized BinOCT MIP with null splits: optimum = OPT(D, lam)",
                RBinOCT,
                fair=True,
                properties=_EXACT_MIP,
                answers_per_second=_BIG_M_REACH,
                sets_up_per_second=100_000.0,
            ),
            Method(
                "rbinoct_original",
                "RBinOCT MIP of OSDT App. J, no null splits: its optimum may exceed OPT",
                partial(RBinOCT, null_split=False),
                properties=frozenset({DECODE_NOT_WORSE}),
                answers_per_second=_BIG_M_REACH,
                sets_up_per_second=100_000.0,
            ),
            Method(
                "flowoct",
                "regularized FlowOCT MIP with separation cuts: optimum = OPT(D, lam)",
                FlowOCT,
                fair=True,
                properties=_EXACT_MIP,
                answers_per_second=2_000.0,
                sets_up_per_second=30_000.0,
            ),
            Method(
                "pathoct",
                "path MIP, integral LP without side constraints: optimum = OPT(D, lam); size "
                "~(2p)^D, for shallow trees",
                PathOCT,
                fair=True,
                properties=_EXACT_MIP,
                answers_per_second=25_000.0,
                sets_up_per_second=40_000.0,
            ),
            Method(
                "columns",
                "branch-and-price over whole trees, priced by the native dp: PathOCT's LP bound "
                "without listing its paths; optimum = OPT(D, lam) under the side constraints",
                fair=True,
                properties=frozenset({EXACT, VALID_BOUND}),
                cost=20.0,
                loop=_branch_and_price,
            ),
            Method(
                "binoct",
                "BinOCT MIP: minimum errors at depth D; its bound converts to one on OPT",
                BinOCT,
                properties=frozenset({VALID_BOUND}),
                answers_per_second=_BIG_M_REACH,
                sets_up_per_second=100_000.0,
            ),
        )
    }
)
#: The searches over a binarized Dataset (the native core's ``search_tree``).
SEARCH_METHODS: tuple[str, ...] = tuple(n for n, m in METHODS.items() if m.is_search and not m.raw)
#: The searches over the raw table (every threshold of its numeric columns).
RAW_METHODS: tuple[str, ...] = tuple(n for n, m in METHODS.items() if m.raw)
MIP_METHODS: tuple[str, ...] = tuple(n for n, m in METHODS.items() if not m.is_search)
#: The methods that take a binarized Dataset (every one but the raw-table ones).
DATASET_METHODS: tuple[str, ...] = SEARCH_METHODS + MIP_METHODS


def get_method(name: Any, choices: tuple[str, ...] | None = None, what: str = "method") -> Method:
    """The :class:`Method` called ``name``; ValueError naming ``what`` and the choices otherwise.

    ``choices`` restricts the accepted names (default: every name of :data:`METHODS`).
    """
    choices = tuple(METHODS) if choices is None else choices
    if not isinstance(name, str) or name not in choices:
        raise ValueError(f"{what} must be one of {choices}, got {name!r}")
    return METHODS[name]


def method_names(
    *, exact: bool | None = None, fair: bool | None = None, raw: bool | None = None
) -> tuple[str, ...]:
    """The names of :data:`METHODS`, in its order, whose answer is ``exact`` (declares
    ``EXACT``), that take ``fair``-ness and run on the ``raw`` table, as asked (None: either)."""

    def keep(m: Method) -> bool:
        return (
            (exact is None or (EXACT in m.properties) == exact)
            and (fair is None or m.fair == fair)
            and (raw is None or m.raw == raw)
        )

    return tuple(name for name, m in METHODS.items() if keep(m))


def fill_method_names(obj: Any, **lists: tuple[str, ...]) -> None:
    """Write each list of method names into ``obj``'s docstring where it says ``{KEY}``, in
    numpy-doc form (``{"dp", "bnb"}``), so that the docstring lists what the registry holds.

    (Not ``str.format``: docstrings hold other braces.) Nothing to do under ``python -OO``.
    """
    doc = obj.__doc__
    if doc is None:
        return
    for key, names in lists.items():
        doc = doc.replace("{" + key + "}", "{" + ", ".join(f'"{n}"' for n in names) + "}")
    obj.__doc__ = doc


def _code_list(names: tuple[str, ...]) -> str:
    return ", ".join(f'``"{n}"``' for n in names)


def describe() -> str:
    """One line per method, ``name: description`` (the CLI's help)."""
    width = max(map(len, METHODS))
    return "\n".join(f"{name:<{width}}  {m.description}" for name, m in METHODS.items())


@overload
def fill_code_names(doc: str, **lists: tuple[str, ...]) -> str: ...
@overload
def fill_code_names(doc: None, **lists: tuple[str, ...]) -> None: ...
def fill_code_names(doc: str | None, **lists: tuple[str, ...]) -> str | None:
    """``doc`` with each ``{KEY}`` replaced by its list of names in running text
    (````"dp"``, ``"bnb"````): how this module's and :func:`odtkit.compare`'s docstrings list
    what the registry holds (:func:`fill_method_names` writes the numpy-doc form). None (under
    ``python -OO``) stays None."""
    if doc is None:
        return None
    for key, names in lists.items():
        doc = doc.replace("{" + key + "}", _code_list(names))
    return doc


if __doc__ is not None:  # None under python -OO
    __doc__ = fill_code_names(
        __doc__, SEARCH_METHODS=SEARCH_METHODS, MIP_METHODS=MIP_METHODS, RAW_METHODS=RAW_METHODS
    )

"""Backend registry and the single entry point :func:`solve`.

Writing a backend
-----------------
Subclass :class:`Backend`, set ``name``, ``capabilities`` (a frozenset drawn from
:data:`CAPABILITIES`) and implement ``available()``, ``version()`` and
``solve(model, options) -> Solution``, then call ``register_backend(name, cls)`` at import time.
A backend that drives several solvers (``solve(..., solver=...)``) overrides
:meth:`Backend.capabilities_for` to answer per solver name (and to refuse an unknown or
unavailable one); a backend of one solver refuses any other name through the default
:meth:`Backend.capabilities_for` (its :meth:`Backend.solver_names`). :func:`solve` validates
every option and checks it once, against ``capabilities_for(solver, **options)``, refusing
(ValueError naming backend, solver and capability) any option that needs a capability the
backend lacks with that solver, so a backend only ever receives options it declared it supports:

* ``options.start`` (full column vector, already validated) needs ``"mip_start"``;
* ``options.lp_method`` needs ``"lp_method"``;
* ``options.should_stop`` needs ``"interrupt"``;
* ``options.trace=True`` needs ``"trace"`` (``None`` means "if you can");
* ``options.duals=True`` needs ``"duals"`` (``None`` means "if you can");
* ``options.heuristics=False`` needs ``"heuristics_off"``.

``"dual_bound"`` declares that ``Solution.lower_bound`` is a proven bound for MIPs (otherwise
``-inf`` unless optimal). Backends solve ``options.relax`` by solving ``model.relaxed()`` —
:func:`solve` already passes the relaxed model, so a backend sees ``options.relax`` only for
reporting.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

import numpy as np

from odtkit._limits import Deadline, OutOfTime, charged
from odtkit._validation import check_count, check_nonnegative_number, check_positive_number
from odtkit._warnings import warn as _warn
from odtkit.model import Model
from odtkit.solvers._solution import Solution


class Capability(StrEnum):
    """What a backend can do with a solver (the module docstring says which option needs
    which). A ``StrEnum``: ``Capability.MIP_START == "mip_start"``."""

    MIP_START = "mip_start"
    DUAL_BOUND = "dual_bound"
    TRACE = "trace"
    INTERRUPT = "interrupt"
    DUALS = "duals"
    LP_METHOD = "lp_method"
    HEURISTICS_OFF = "heuristics_off"


CAPABILITIES = frozenset(Capability)
LP_METHODS = ("simplex", "ipm")
START_CHECKS = ("warn", "raise", "ignore")


@dataclass(frozen=True)
class SolveOptions:
    """Validated options handed to a backend (see :func:`solve` for their meaning)."""

    time_limit: float | None = None
    start: np.ndarray | None = None
    threads: int | None = None
    seed: int | None = None
    verbose: bool = False
    relax: bool = False
    lp_method: str | None = None
    mip_gap: float = 0.0
    node_limit: int | None = None
    trace: bool | None = None
    duals: bool | None = None
    should_stop: Callable[[], bool] | None = None
    log_callback: Callable[[str], None] | None = None
    progress: bool | None = None
    start_check: str = "warn"
    solver: str | None = None
    heuristics: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: The clock of ``time_limit``, started when :func:`solve` was called: a backend that spends
    #: time translating the model gives the solver :meth:`time_left`, not ``time_limit``.
    deadline: Deadline | None = None

    def time_left(self) -> float | None:
        """Seconds of ``time_limit`` left now (at least 1 ms, so that a solver told 0 does not
        read it as "no limit"); None without a limit."""
        if self.time_limit is None:
            return None
        if self.deadline is None:
            return self.time_limit
        return max(self.deadline.remaining() or 0.0, 1e-3)


class Backend(ABC):
    """Base class of a solver backend. Subclasses are stateless; one ``solve`` call per model."""

    name: ClassVar[str] = ""
    #: Solver used when ``solve(..., solver=None)``; named in capability errors.
    default_solver: ClassVar[str] = ""
    capabilities: ClassVar[frozenset[Capability]] = frozenset()

    @classmethod
    def solver_names(cls) -> tuple[str, ...]:
        """The solver names ``solve(..., solver=)`` accepts with this backend (case-insensitive).

        The default is the one solver ``default_solver``; a backend driving several overrides
        this (and :meth:`capabilities_for`).
        """
        return (cls.default_solver,) if cls.default_solver else ()

    @classmethod
    def capabilities_for(cls, solver: str | None = None, **extra: Any) -> frozenset[Capability]:
        """Capabilities with ``solver`` (``None``: the default solver).

        ``extra`` holds the solver options of the call (e.g. an executable's path). The default
        is the class-level ``capabilities``, for a solver of :meth:`solver_names` (any other
        raises ValueError naming it: a backend never solves with another program than the one
        asked for); a backend with several solvers answers per name and raises ValueError for
        an unknown or unavailable one.
        """
        check_solver_name(cls, solver)
        return cls.capabilities

    @classmethod
    def available(cls) -> bool:
        """True when the solver software is importable / installed."""
        return True

    @classmethod
    def version(cls) -> str:
        return ""

    @abstractmethod
    def solve(self, model: Model[object], options: SolveOptions) -> Solution:
        """Solve ``model`` with validated ``options``; limits are statuses, never exceptions."""


def check_solver_name(cls: type[Backend], solver: object) -> None:
    """Refuse a ``solver`` that backend ``cls`` does not have, naming its solvers."""
    if solver is None:
        return
    if not isinstance(solver, str):
        raise TypeError(
            f"backend {cls.name!r}: solver must be a str or None, got {type(solver).__name__}"
        )
    names = cls.solver_names()
    if solver.lower() not in {n.lower() for n in names}:
        raise ValueError(
            f"backend {cls.name!r} has no solver {solver!r}: solver must be one of "
            f"{list(names)} (or None for {cls.default_solver!r}); other solvers run through "
            f"another backend (registered: {registered_backends()})"
        )


_BACKENDS: dict[str, type[Backend]] = {}


def register_backend(name: str, cls: type[Backend]) -> None:
    """Register (or replace) backend class ``cls`` under ``name``."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"backend name must be a non-empty string, got {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise TypeError(f"cls must be a subclass of odtkit.solvers.Backend, got {cls!r}")
    unknown = set(cls.capabilities) - CAPABILITIES
    if unknown:
        raise ValueError(f"backend {name!r} declares unknown capabilities {sorted(unknown)}")
    _BACKENDS[name] = cls


def registered_backends() -> list[str]:
    """Every registered backend name (available or not)."""
    return sorted(_BACKENDS)


def available_backends() -> list[str]:
    """Registered backends whose solver software is installed."""
    return [name for name in sorted(_BACKENDS) if _BACKENDS[name].available()]


def backend_capabilities(
    name: str, solver: str | None = None, **extra: Any
) -> frozenset[Capability]:
    """The capabilities of backend ``name`` with ``solver`` (``None``: its default solver).

    ``extra`` are solver options that select the solver software (e.g. ``path=`` for pulp,
    ``executable=`` for pyomo). Raises ValueError for an unknown backend, or a solver the backend
    does not know or cannot run here.
    """
    return _get(name).capabilities_for(solver, **extra)


def _get(name: str) -> type[Backend]:
    if name not in _BACKENDS:
        raise ValueError(f"backend must be one of {registered_backends()}, got {name!r}")
    return _BACKENDS[name]


def _check_capabilities(
    cls: type[Backend],
    backend: str,
    solver: str | None,
    extra: Mapping[str, Any],
    requested: Mapping[Capability, str],
) -> None:
    """Refuse the first requested ``{capability: option}`` that ``solver`` lacks: the one place
    where capabilities are checked."""
    caps = cls.capabilities_for(solver, **extra)
    name = solver if solver is not None else cls.default_solver
    for capability, option in requested.items():
        if capability not in caps:
            with_solver = f" with solver {name!r}" if name else ""
            raise ValueError(
                f"backend {backend!r}{with_solver} lacks the capability {str(capability)!r} "
                f"needed for {option}; its capabilities are {sorted(map(str, caps))}"
            )


def solve(
    model: Model[object],
    backend: str = "highs",
    *,
    time_limit: float | None = None,
    start: Mapping[str, Any] | np.ndarray | None = None,
    threads: int | None = None,
    seed: int | None = None,
    verbose: bool = False,
    relax: bool = False,
    lp_method: str | None = None,
    mip_gap: float = 0.0,
    node_limit: int | None = None,
    trace: bool | None = None,
    duals: bool | None = None,
    should_stop: Callable[[], bool] | None = None,
    log_callback: Callable[[str], None] | None = None,
    progress: bool | None = None,
    start_check: str = "warn",
    solver: str | None = None,
    heuristics: bool = True,
    **options: Any,
) -> Solution:
    """Solve ``model`` (minimise) with a registered backend.

    Parameters
    ----------
    model : Model
    backend : str
        ``"highs"`` (highspy directly), ``"pyomo"`` or ``"pulp"`` (when installed/registered).
    time_limit : float, optional
        Seconds from this call, the modelling layer's translation included; reaching it gives
        status ``"time_limit"`` (never an exception), with the start as incumbent when the
        limit ran out before the solver started.
    start : full vector or dict by group, optional
        MIP start (needs capability ``"mip_start"``). It is checked with ``model.check`` first:
        ``start_check="warn"`` warns about violations and passes it anyway (the solver then
        decides), ``"raise"`` raises ValueError, ``"ignore"`` skips the check.
    threads, seed : int, optional
    verbose : bool
        Print the solver log.
    relax : bool
        Solve the LP relaxation ``model.relaxed()``.
    lp_method : {"simplex", "ipm"}, optional
        LP algorithm (capability ``"lp_method"``); simplex gives vertex solutions.
    mip_gap : float
        Relative MIP gap; the default 0 proves optimality exactly (the absolute gap is 0 too).
    node_limit : int, optional
        Branch-and-bound node limit (status ``"node_limit"``).
    trace : bool, optional
        Record (time, incumbent, bound); ``True`` requires capability ``"trace"``.
    duals : bool, optional
        Return LP row duals; ``True`` requires capability ``"duals"``.
    should_stop : callable, optional
        Polled during the solve; returning True interrupts it (status ``"interrupted"``, with the
        incumbent so far). Needs capability ``"interrupt"``.
    log_callback : callable, optional
        Receives every log line.
    progress : bool, optional
        A live line on stderr (elapsed, incumbent, bound, gap) for a MIP solved by HiGHS that
        runs longer than 2 s. None (default): shown when stderr is a terminal.
    solver : str, optional
        Backend-specific solver name (e.g. pyomo ``"appsi_highs"``, pulp ``"CBC"``). The options
        above are checked against that solver's capabilities
        (:func:`backend_capabilities` ``(backend, solver)``); a solver the backend does not
        have (``backend="highs", solver="cbc"``: CBC runs through ``backend="pulp"``), or one
        not installed, raises ValueError listing the backend's solvers.
    heuristics : bool
        ``False`` switches the solver's primal heuristics off (capability ``"heuristics_off"``).
        Use it when the start is already optimal (the search core certified it), so only the
        proof is left: HiGHS's sub-MIP heuristics then only search for a better solution that
        does not exist. It never changes the answer, only where the effort goes.
    **options
        Passed through to the backend's solver options (unknown names raise in the backend).

    Returns
    -------
    Solution
        Ctrl-C during the solve gives status ``"interrupted"`` with the incumbent so far (on the
        backends with the ``"interrupt"`` capability; the others stop but keep only a start),
        never a ``KeyboardInterrupt``.
    """
    deadline = Deadline(time_limit if isinstance(time_limit, (int, float)) else None)
    if not isinstance(model, Model):
        raise TypeError(f"model must be an odtkit.model.Model, got {type(model).__name__}")
    cls = _get(backend)
    if not cls.available():
        raise ValueError(
            f"backend {backend!r} is registered but its solver software is not installed"
        )
    time_limit = check_positive_number(time_limit, "time_limit")
    threads = check_count(threads, "threads")
    node_limit = check_count(node_limit, "node_limit")
    seed = check_count(seed, "seed", minimum=0)
    mip_gap = check_nonnegative_number(mip_gap, "mip_gap")
    if lp_method is not None and lp_method not in LP_METHODS:
        raise ValueError(f"lp_method must be one of {LP_METHODS} or None, got {lp_method!r}")
    if start_check not in START_CHECKS:
        raise ValueError(f"start_check must be one of {START_CHECKS}, got {start_check!r}")
    if should_stop is not None and not callable(should_stop):
        raise TypeError("should_stop must be a callable returning bool")
    if not isinstance(heuristics, (bool, np.bool_)):
        raise TypeError(f"heuristics must be True or False, got {heuristics!r}")
    if log_callback is not None and not callable(log_callback):
        raise TypeError("log_callback must be a callable taking one str")
    requested = {
        capability: option
        for capability, option, wanted in (
            (Capability.MIP_START, "start=", start is not None),
            (Capability.LP_METHOD, "lp_method=", lp_method is not None),
            (Capability.TRACE, "trace=True", bool(trace)),
            (Capability.DUALS, "duals=True", bool(duals)),
            (Capability.INTERRUPT, "should_stop=", should_stop is not None),
            (Capability.HEURISTICS_OFF, "heuristics=False", not heuristics),
        )
        if wanted
    }
    _check_capabilities(cls, backend, solver, options, requested)
    if relax:
        model = model.relaxed()
    start_vec = None
    if start is not None:
        start_vec = model.vector(start)
        if start_check != "ignore":
            violations = model.check(start_vec)
            if not violations.empty:
                worst = violations.sort_values("violation", ascending=False).head(5)
                msg = (
                    f"MIP start violates {len(violations)} constraints/bounds "
                    f"of {model.name!r}; worst:\n" + worst.to_string(index=False)
                )
                if start_check == "raise":
                    raise ValueError(msg)
                _warn(msg, RuntimeWarning)
    opts = SolveOptions(
        time_limit=time_limit,
        start=start_vec,
        threads=threads,
        seed=seed,
        verbose=bool(verbose),
        relax=bool(relax),
        lp_method=lp_method,
        mip_gap=mip_gap,
        node_limit=node_limit,
        trace=trace,
        duals=duals,
        should_stop=should_stop,
        log_callback=log_callback,
        progress=None if progress is None else bool(progress),
        start_check=start_check,
        solver=solver,
        heuristics=bool(heuristics),
        extra=dict(options),
        deadline=deadline,
    )
    try:
        with charged(deadline):
            return cls().solve(model, opts)
    except OutOfTime:
        why, status = "the time limit ran out before the solver started", "time_limit"
    except KeyboardInterrupt:
        # Ctrl-C in the backend's Python code (the translation), before the solver's own
        # handler was installed
        why, status = "interrupted (Ctrl-C) before the solver started", "interrupted"
    return Solution.unsolved(
        model, status, backend=backend, start=start_vec, time=deadline.elapsed(), message=why
    )

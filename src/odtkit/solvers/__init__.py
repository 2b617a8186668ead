"""Solver backends behind one entry point, one Solution type.

>>> from odtkit.solvers import solve, available_backends
>>> result = solve(model, backend="highs", time_limit=60)   # doctest: +SKIP

Backends: ``"highs"`` (highspy, always), ``"pyomo"`` and ``"pulp"`` (registered when their
modules and solver software are installed). Each declares its capabilities, per solver where it
drives several (``backend_capabilities("pulp", "cbc")``); asking for one it lacks raises
ValueError, never a silent fallback. Every in-process HiGHS run, whatever the backend, goes
through one driver (``odtkit.solvers._highs_driver``): same options, callbacks, statuses and
bound rule.
"""

import importlib

from odtkit._warnings import warn as _warn
from odtkit.solvers._registry import (
    CAPABILITIES,
    Backend,
    Capability,
    SolveOptions,
    available_backends,
    backend_capabilities,
    register_backend,
    registered_backends,
    solve,
)
from odtkit.solvers._solution import Solution
from odtkit.solvers.highs import HighsBackend, IncrementalLP

# Optional backends register themselves on import. A missing module (or missing pyomo / pulp
# package) just leaves the backend unregistered; any other error is reported, not hidden.
for _module in ("odtkit.solvers.pyomo", "odtkit.solvers.pulp"):
    try:
        importlib.import_module(_module)
    except ModuleNotFoundError as _exc:
        if _exc.name not in (_module, "pyomo", "pulp"):
            _warn(f"could not load solver backend {_module}: {_exc!r}", RuntimeWarning)
    except Exception as _exc:  # pragma: no cover - depends on other modules' state
        _warn(f"could not load solver backend {_module}: {_exc!r}", RuntimeWarning)

__all__ = [
    "Backend",
    "CAPABILITIES",
    "Capability",
    "HighsBackend",
    "IncrementalLP",
    "SolveOptions",
    "Solution",
    "available_backends",
    "backend_capabilities",
    "register_backend",
    "registered_backends",
    "solve",
]

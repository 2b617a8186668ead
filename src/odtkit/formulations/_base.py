"""The one protocol of every formulation: trees, fairness-constrained trees and ensemble pruning.

A formulation is **stateless**: its constructor takes modelling *choices* (null splits, cuts,
aggregation) and never changes; the *problem* goes to :meth:`Formulation.build` with the data,
as a small frozen dataclass (:class:`~odtkit.formulations.TreeProblem`,
:class:`~odtkit.pruning.PruningProblem`) or as the same fields by keyword
(``build(data, max_depth=2, lam=0.01)``). ``build`` returns an immutable
:class:`~odtkit.model.Model` whose ``meta`` is the formulation's own frozen dataclass (a
:class:`FormulationMeta`: :class:`~odtkit.formulations.TreeMeta`,
:class:`~odtkit.pruning.PruningMeta` and their subclasses) holding everything
:meth:`~Formulation.decode` and :meth:`~Formulation.start` need. So one formulation object can
build many models, a model can be decoded without the object that built it being in any
particular state, and every read of the meta is an attribute a type checker sees.

Declared properties say what a solver's answer means for the problem the user stated; callers
(:func:`odtkit.solve_formulation`, :func:`odtkit.compare`) read them instead of keeping lists of
formulation names:

``EXACT``
    The optimum of the model equals the optimum of the stated problem (for trees: OSDT's
    ``OPT(D, lam)`` over trees of depth <= D).
``VALID_BOUND``
    :meth:`Formulation.lower_bound` of any solution is a valid lower bound on the stated
    problem's optimum.
``DECODE_NOT_WORSE``
    The decoded model's verified objective is never above the solver's objective value.
``LP_INTEGRAL``
    The LP relaxation has integral vertices (solve it as an LP).
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar, cast

import numpy as np

from odtkit.model import Model


class Property(StrEnum):
    """A declared property of a formulation (the module docstring says what each means).

    A ``StrEnum``, so that a member equals its string (``Property.EXACT == "exact"``) and the
    names people already use keep working.
    """

    EXACT = "exact"
    VALID_BOUND = "valid_bound"
    DECODE_NOT_WORSE = "decode_not_worse"
    LP_INTEGRAL = "lp_integral"


EXACT = Property.EXACT
VALID_BOUND = Property.VALID_BOUND
DECODE_NOT_WORSE = Property.DECODE_NOT_WORSE
LP_INTEGRAL = Property.LP_INTEGRAL
PROPERTIES = frozenset(Property)


@dataclass(frozen=True, kw_only=True, eq=False)
class FormulationMeta:
    """Base of every formulation's ``Model.meta``: the name of the formulation that built the
    model (:func:`check_built_by` compares it). Subclasses add what their formulation's
    ``decode``/``start``/``evaluate`` read; ``eq=False`` because they hold numpy arrays."""

    formulation: str

    def extend(self, meta_type: type[MT], **choices: Any) -> MT:
        """A ``meta_type`` (a subclass) holding this meta's fields and a formulation's own
        ``choices``: how each formulation adds to its family's common meta."""
        common = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return meta_type(**{**common, **choices})


MT = TypeVar("MT", bound=FormulationMeta)

#: A formulation's data (e.g. Dataset), problem (e.g. TreeProblem), meta (e.g. BinOCTMeta) and
#: decoded (e.g. Tree) types. Invariant: data and decoded values are both taken and returned.
DataT = TypeVar("DataT")
P = TypeVar("P")
M = TypeVar("M", bound=FormulationMeta)
DecodedT = TypeVar("DecodedT")


class Formulation(ABC, Generic[DataT, P, M, DecodedT]):
    """Base of every formulation (see the module docstring), generic over the data ``DataT`` it
    models, its problem type ``P``, the type ``M`` of the ``meta`` of the models it builds and
    the type ``DecodedT`` of what :meth:`decode` returns: tree formulations are
    ``Formulation[Dataset, TreeProblem, <Name>Meta, Tree]``, the pruning ones
    ``Formulation[EnsembleData, PruningProblem, <Name>Meta, list[np.ndarray]]``.

    Subclasses set ``name`` and ``_properties`` (or override :attr:`properties` when they depend
    on the choices) and implement :meth:`build`, :meth:`decode`, :meth:`evaluate` and
    :meth:`start` (every formulation can be warm-started); :meth:`lower_bound` and
    :meth:`violation` (side constraints, e.g. fairness) have defaults.
    """

    name: ClassVar[str] = ""
    #: The problem dataclass ``build`` takes (``P``), for code generic over formulations.
    problem_type: ClassVar[type[Any]] = object
    _properties: ClassVar[frozenset[Property]] = frozenset()

    @property
    def properties(self) -> frozenset[Property]:
        """Declared properties (a subset of :data:`PROPERTIES`); may depend on the choices."""
        return self._properties

    @abstractmethod
    def build(self, data: DataT, problem: P | None = None, /) -> Model[M]:
        """The model of ``data`` for ``problem``; every formulation also takes the problem's
        fields by keyword instead (``build(data, max_depth=2, lam=0.01)``)."""

    @abstractmethod
    def decode(self, model: Model[M], solution: Any) -> DecodedT:
        """The model object (tree, pruning ...) of a solution of ``model``.

        ``solution`` is a :class:`odtkit.solvers.Solution` with a solution, a dict of values by
        variable group, or a full column vector.
        """

    @abstractmethod
    def evaluate(self, model: Model[M], decoded: DecodedT, data: DataT) -> float:
        """The stated problem's objective of ``decoded`` on ``data``, by :mod:`odtkit.metrics`
        (or the pruning module's own accounting): the single truth every answer is checked
        against."""

    @abstractmethod
    def start(self, model: Model[M], obj: Any) -> np.ndarray:
        """A complete, feasible start vector of ``model`` from a model object (e.g. a tree; a
        pruning starts from a ``PrunedEnsemble``, which holds its data, not from its decoded
        leaf masks, so ``obj`` is not ``DecodedT``)."""

    def violation(self, model: Model[M], decoded: DecodedT, data: DataT) -> str:
        """Why ``decoded`` breaks a side constraint of the stated problem on ``data`` (a
        fairness bound ...), re-measured by :mod:`odtkit.metrics`; ``""`` when it satisfies them
        all. The default states no side constraint. :func:`odtkit.pipeline.verify_solution`
        turns a non-empty answer into status ``error``: the solver's model is not a solution.
        """
        return ""

    def lower_bound(self, model: Model[M], solution: Any) -> float:
        """A lower bound on the stated problem's optimum from a solver's answer.

        The default is the solver's own bound when the formulation declares ``VALID_BOUND``
        and ``-inf`` otherwise (the model's bound then bounds only its own, larger, optimum).
        """
        if VALID_BOUND not in self.properties:
            return -math.inf
        return float(solution.lower_bound)

    def __repr__(self) -> str:
        choices = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({choices})"


def solution_values(model: Model[Any], solution: Any) -> dict[str, np.ndarray]:
    """Values by variable group from a Solution, a dict by group or a full column vector."""
    if hasattr(solution, "has_solution") and hasattr(solution, "values"):
        if not solution.has_solution:
            raise ValueError(
                f"the solution has no values to decode (status {str(solution.status)!r})"
            )
        values = solution.values or model.values(solution.x)
        return {k: np.asarray(v, dtype=float) for k, v in values.items()}
    if isinstance(solution, Mapping):
        return {k: np.asarray(v, dtype=float) for k, v in solution.items()}
    return model.values(np.asarray(solution, dtype=float))


def check_built_by(model: object, formulation: Formulation[Any, Any, M, Any]) -> Model[M]:
    """``model`` if ``formulation`` (by name) built it, else a TypeError/ValueError naming it."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be an odtkit.model.Model, got {type(model).__name__}")
    meta = model.meta
    built_by = meta.formulation if isinstance(meta, FormulationMeta) else None
    if built_by != formulation.name:
        raise ValueError(
            f"model was built by {built_by!r}, not by {formulation.name!r}: decode and start it "
            "with the formulation that built it"
        )
    # the name matches, so its meta is the one this formulation attaches
    return cast("Model[M]", model)

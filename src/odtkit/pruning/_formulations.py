"""Ensemble pruning with feature costs (Nan, Wang, Saligrama 2016) as formulations.

The mathematics: docs/formulations-search-and-pruning.md §7. Every class follows the
:class:`~odtkit.formulations.Formulation` protocol: modelling choices in the constructor, the
problem in ``build(data, PruningProblem(lam=...))`` or ``build(data, *, lam=None, budget=None)``
with ``data`` an :class:`odtkit.pruning.EnsembleData` (from :func:`odtkit.pruning.extract`).
Exactly one of ``lam`` (minimise error + λ · feature cost) and ``budget`` (minimise error
subject to feature cost <= budget) states the problem; each formulation accepts the forms it
models (the model's ``meta`` is a :class:`PruningMeta`):

* :class:`IP0` — no costs (``build(data)``): EXACT, VALID_BOUND, DECODE_NOT_WORSE, LP_INTEGRAL;
* :class:`IP1` — ``lam`` or ``budget``: EXACT, VALID_BOUND, DECODE_NOT_WORSE;
* :class:`IP2` — ``lam``: EXACT, VALID_BOUND, DECODE_NOT_WORSE, LP_INTEGRAL;
* :class:`IP3` — ``lam``: EXACT, VALID_BOUND, DECODE_NOT_WORSE, LP_INTEGRAL;
* :class:`LP1` — ``budget``: EXACT, VALID_BOUND, DECODE_NOT_WORSE;
* :class:`ColgenMaster` — ``lam``: DECODE_NOT_WORSE with ``integral=True``, else nothing (a
  restricted master bounds the optimum from above only).

(IP0's problem is the error alone; IP2's is *individual* pruning, features paid per tree.) The
budget row of LP1 is the only thing separating it from IP3, and it breaks total unimodularity,
which is why LP1 is its own formulation: a formulation's properties hold for every model it
builds.

``decode(model, solution)`` returns the pruning as a list of bool leaf masks, one per tree of
the model in pre-order (``z_h = 1`` iff ``h`` is a leaf of the pruned tree); wrap it in an
:class:`odtkit.pruning.PrunedEnsemble` for predictions. ``evaluate`` re-scores a pruning with
the pruning module's single accounting (:func:`odtkit.pruning.objective_terms`), ``start``
turns a :class:`~odtkit.pruning.PrunedEnsemble` into a complete, feasible start vector.

The models' variable groups are

* ``z``  — one per node of every tree, in global pre-order (tree 0's nodes, then tree 1's ...);
* ``wt`` — ``w^{(t)}_{k,i}``, one per feature-use entry (example i uses feature k in tree t),
  entries ordered by tree, then ``(u_{t,k,i}, k, i)`` (compact IP3: one per ``(t, u, k)``);
* ``w``  — ``w_{k,i}``, one per (feature, example) pair used by some tree (IP1, IP3; compact
  IP3: one per class of merged pairs);
* ``alpha`` — the column-generation master's convex weights of generated prunings;

and the constraint blocks ``leaf`` (Sherali rows, one per unpruned leaf), ``feature``
(NWS eq. 2, one per entry), ``link`` (``w^{(t)}_{k,i} <= w_{k,i}``), ``cover`` (IP1's
``w_{k,i} >= z_h``), ``budget`` (LP1) and ``convexity`` (master). Building is vectorized per
tree (one numpy gather over the ancestor lists), so 40 trees x 10 000 examples build in about a
second. The Lemma 4.1 certificate of these matrices is
:func:`odtkit.pruning.certify_network_matrix`.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np

from odtkit._validation import check_lambda
from odtkit.formulations._base import (
    DECODE_NOT_WORSE,
    EXACT,
    LP_INTEGRAL,
    VALID_BOUND,
    Formulation,
    FormulationMeta,
    Property,
    check_built_by,
    solution_values,
)
from odtkit.model import Model, ModelBuilder
from odtkit.pruning._data import EnsembleData, TreeData
from odtkit.pruning._objective import individual_objective, objective_terms, tree_dp, tree_terms

__all__ = [
    "ColgenMaster",
    "IP0",
    "IP1",
    "IP2",
    "IP3",
    "IP3Meta",
    "LP1",
    "MasterColumn",
    "MasterMeta",
    "PruningFormulation",
    "PruningMeta",
    "PruningProblem",
    "check_budget",
    "check_problem",
]

#: A pruning's average feature cost may exceed the budget by this much (relative to
#: ``max(1, |budget|)``) before it counts as over budget: the solver's primal tolerance.
BUDGET_TOLERANCE = 1e-9


# ------------------------------------------------------------------------------------------
# the problem
# ------------------------------------------------------------------------------------------
def check_budget(budget: Any, allow_negative: bool = True) -> float:
    """``budget`` as a finite float; TypeError/ValueError naming it otherwise.

    A negative budget builds a legitimate (infeasible) model; :func:`odtkit.pruning.prune`
    refuses it (``allow_negative=False``) because no pruning can cost less than 0.
    """
    if isinstance(budget, bool) or not isinstance(budget, (int, float, np.integer, np.floating)):
        raise TypeError(f"budget must be a number, got {type(budget).__name__}")
    value = float(budget)
    if not math.isfinite(value):
        raise ValueError(f"budget must be a finite number, got {budget!r}")
    if value < 0 and not allow_negative:
        raise ValueError(
            f"budget must be >= 0 (the cheapest pruning, every tree cut to its root, costs 0), "
            f"got {budget!r}"
        )
    return value


def check_problem(lam: Any, budget: Any) -> tuple[float | None, float | None]:
    """The pruning problem ``(lam, budget)``: exactly one of them, validated.

    ``lam`` is required without a budget: a default λ = 0 would silently mean "ignore the
    feature costs". With a budget, λ has no role, so giving both is an error too.
    """
    if budget is None:
        if lam is None:
            raise TypeError(
                "lam is required: the weight λ >= 0 of the average feature cost (lam=0.0 "
                "ignores the costs), or give budget= to bound the cost instead"
            )
        return check_lambda(lam, "lam"), None
    if lam is not None:
        raise TypeError(
            "give lam or budget, not both: with a budget the error term is minimised subject "
            "to the cost budget and lam plays no role"
        )
    return None, check_budget(budget)


@dataclass(frozen=True)
class PruningProblem:
    """The ensemble-pruning problem: minimise error + ``lam`` · feature cost, or the error
    subject to feature cost <= ``budget`` (at most one of them; neither is IP0's error alone).

    Validated on construction (TypeError/ValueError naming the field); each formulation
    refuses the forms it does not model.
    """

    lam: float | None = None
    budget: float | None = None

    def __post_init__(self) -> None:
        if self.lam is not None and self.budget is not None:
            check_problem(self.lam, self.budget)  # raises: both given
        if self.lam is not None:
            object.__setattr__(self, "lam", check_lambda(self.lam, "lam"))
        if self.budget is not None:
            object.__setattr__(self, "budget", check_budget(self.budget))

    @property
    def penalty(self) -> float:
        """``lam`` of a problem in the λ form (TypeError for the budgeted one)."""
        if self.lam is None:
            raise TypeError("this problem has no lam (it is budgeted, or IP0's error alone)")
        return self.lam


@dataclass(frozen=True, kw_only=True, eq=False)
class PruningMeta(FormulationMeta):
    """What every pruning formulation's model carries (its ``Model.meta``).

    Attributes
    ----------
    formulation : str
        The name of the formulation that built the model.
    lam, budget : float or None
        The stated problem (:class:`PruningProblem`).
    n_samples, n_trees : int
        The ensemble data's examples and trees.
    trees : tuple of int
        The trees the model holds, in its order (IP2 may hold one).
    node_offset, entry_offset : ndarray
        The data's global node and feature-use entry offsets per tree.
    """

    lam: float | None
    budget: float | None
    n_samples: int
    n_trees: int
    trees: tuple[int, ...]
    node_offset: np.ndarray
    entry_offset: np.ndarray


@dataclass(frozen=True, kw_only=True, eq=False)
class IP3Meta(PruningMeta):
    """The meta of an IP3 / LP1 model: :class:`PruningMeta` and the choices; with merged pairs
    ``pair_class`` maps every pair to its ``w`` column, ``class_rep`` each column's pair."""

    aggregate: bool
    merge: bool
    pair_class: np.ndarray | None = None
    class_rep: np.ndarray | None = None


PM = TypeVar("PM", bound=PruningMeta)


# ------------------------------------------------------------------------------------------
# shared machinery
# ------------------------------------------------------------------------------------------
def _gather_ancestors(
    tree: TreeData, nodes: np.ndarray, skip_top: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """For each ``nodes[j]`` of ``tree`` the ancestors-or-self (root first), flattened:
    ``(owner j, node)``.

    ``skip_top[j]`` drops that many nodes from the root end (used for "strictly below u").
    """
    indptr, indices = tree.ancestors_csr()
    start = indptr[nodes]
    stop = indptr[nodes + 1]
    if skip_top is not None:
        start = start + skip_top
    cnt = np.maximum(stop - start, 0)
    owner = np.repeat(np.arange(nodes.shape[0], dtype=np.int64), cnt)
    offs = np.arange(owner.shape[0], dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    return owner, indices[np.repeat(start, cnt) + offs]


def _leaf_rows(
    data: EnsembleData, z_index: np.ndarray, trees: list[int]
) -> tuple[np.ndarray, np.ndarray, int]:
    """COO of the Sherali rows ``z_h + sum_{u in p(h)} z_u = 1`` for the given trees."""
    R, C = [], []
    row0 = 0
    for t in trees:
        tree = data.trees[t]
        leaves = np.flatnonzero(tree.is_leaf)
        owner, anc = _gather_ancestors(tree, leaves)
        R.append(owner + row0)
        C.append(z_index[data.node_offset[t] + anc])
        row0 += leaves.shape[0]
    return np.concatenate(R), np.concatenate(C), row0


def _feature_rows(
    data: EnsembleData,
    z_index: np.ndarray,
    wt_index: np.ndarray,
    trees: list[int],
    wt_base: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int]:
    """COO of ``w^{(t)}_{k,i} + z_u + sum_{h in p(u)} z_h = 1`` (one row per entry)."""
    R, C = [], []
    row0 = 0
    for t in trees:
        tree = data.trees[t]
        m = tree.n_entries
        owner, anc = _gather_ancestors(tree, tree.use_node)
        rows_local = np.arange(m, dtype=np.int64)
        R.append(np.concatenate([rows_local, owner]) + row0)
        C.append(
            np.concatenate([wt_index[wt_base[t] + rows_local], z_index[data.node_offset[t] + anc]])
        )
        row0 += m
    return np.concatenate(R), np.concatenate(C), row0


def _merge_pairs(data: EnsembleData) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Classes of (feature, example) pairs linked to identical sets of aggregated wt columns.

    Candidates come from two independent random 64-bit signature sums; every class is then
    verified exactly (sorted group lists compared element by element against the
    representative), and on any mismatch nothing is merged. Returns ``(pair_class, class_rep)``.
    """
    P = data.n_pairs
    p, g = data.entry_pair, data.entry_group
    order = np.lexsort((g, p))
    ps, gs = p[order], g[order]
    cnt = np.bincount(ps, minlength=P)
    ptr = np.concatenate(([0], np.cumsum(cnt)))
    rng = np.random.default_rng(12345)
    r1 = rng.integers(0, 2**63 - 1, size=data.n_groups, dtype=np.int64).view(np.uint64)
    r2 = rng.integers(0, 2**63 - 1, size=data.n_groups, dtype=np.int64).view(np.uint64)
    h1 = np.zeros(P, dtype=np.uint64)
    h2 = np.zeros(P, dtype=np.uint64)
    np.add.at(h1, ps, r1[gs])
    np.add.at(h2, ps, r2[gs])
    key = np.stack([h1.view(np.int64), h2.view(np.int64), cnt], axis=1)
    _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inv = inv.ravel()
    rep_of_pair = first[inv]
    j = np.arange(ps.shape[0]) - ptr[ps]
    same = gs == gs[ptr[rep_of_pair[ps]] + j]
    if not np.all(same):
        return None, None
    return inv.astype(np.int64), first.astype(np.int64)


def _meta(
    data: EnsembleData, formulation: str, problem: PruningProblem, trees: list[int] | None = None
) -> PruningMeta:
    return PruningMeta(
        formulation=formulation,
        lam=problem.lam,
        budget=problem.budget,
        n_samples=data.n_samples,
        n_trees=data.n_trees,
        trees=tuple(range(data.n_trees)) if trees is None else tuple(trees),
        node_offset=data.node_offset.copy(),
        entry_offset=data.entry_offset.copy(),
    )


def _errors(data: EnsembleData, trees: Sequence[int]) -> np.ndarray:
    return np.concatenate([data.trees[t].error for t in trees]).astype(np.float64)


def _error_objective(b: ModelBuilder, data: EnsembleData, z: Any) -> None:
    """The average per-tree error ``1/(NT) sum_t sum_h e_h z_h`` on all trees' ``z``."""
    b.add_objective(z.index, _errors(data, range(data.n_trees)) / (data.n_samples * data.n_trees))


def _split_trees(z: np.ndarray, model: Model[PruningMeta]) -> list[np.ndarray]:
    """Per-tree pieces of a ``z``-shaped array (the model's trees, in its order)."""
    offset = model.meta.node_offset
    sizes = [int(offset[t + 1] - offset[t]) for t in model.meta.trees]
    return np.split(np.asarray(z), np.cumsum(sizes)[:-1])


def _leaves(decoded: Any) -> list[np.ndarray]:
    """Leaf masks of a decoded pruning (a list of masks or a PrunedEnsemble)."""
    leaves = getattr(decoded, "leaves", decoded)
    return [np.asarray(z, dtype=bool) for z in leaves]


def _pruning(obj: Any, model: Model[PruningMeta]) -> Any:
    """``obj`` if it is a pruning of the ensemble ``model`` was built on, else TypeError."""
    data = getattr(obj, "data", None)
    if data is None or not hasattr(obj, "leaves"):
        raise TypeError(
            f"a start is built from a PrunedEnsemble (its data and leaves), got "
            f"{type(obj).__name__}"
        )
    meta = model.meta
    if data.n_trees != meta.n_trees or data.n_samples != meta.n_samples:
        raise ValueError(
            f"the pruning has {data.n_trees} trees on {data.n_samples} examples, the model "
            f"{meta.n_trees} on {meta.n_samples}"
        )
    return obj


def _stated_objective(terms: dict[str, Any], meta: PruningMeta) -> float:
    """The stated problem's value of a pruning's objective terms: error + λ cost, or the error
    term within the budget (``inf`` over it: the pruning is infeasible for that problem)."""
    budget = meta.budget
    if budget is None:
        return float(terms["objective"])
    if terms["cost_term"] > budget + BUDGET_TOLERANCE * max(1.0, abs(budget)):
        return math.inf
    return float(terms["error_term"])


class PruningFormulation(Formulation[EnsembleData, PruningProblem, PM, list[np.ndarray]]):
    """Shared problem handling, decoding, accounting and starts of the pruning formulations.

    Subclasses set ``name``, ``_properties``, ``_forms`` (the problem forms ``build`` accepts:
    ``"lam"``, ``"budget"``; none: IP0's error alone) and implement ``_build`` and
    ``_start_values``.
    """

    problem_type = PruningProblem
    _forms: ClassVar[frozenset[str]] = frozenset({"lam"})

    def build(
        self,
        data: EnsembleData,
        problem: PruningProblem | None = None,
        /,
        *,
        lam: float | None = None,
        budget: float | None = None,
    ) -> Model[PM]:
        """The model of ``data`` (an :class:`~odtkit.pruning.EnsembleData`) for ``problem``, or
        for ``lam=`` / ``budget=`` (exactly one, of the forms this formulation models; IP0
        takes neither)."""
        return self._build(data, self._problem(problem, lam, budget))

    @abstractmethod
    def _build(self, data: EnsembleData, problem: PruningProblem) -> Model[PM]:
        """The model of ``data`` for a problem of a form this formulation models."""

    def _problem(self, problem: Any, lam: Any, budget: Any) -> PruningProblem:
        if problem is not None:
            if not isinstance(problem, PruningProblem):
                raise TypeError(f"problem must be a PruningProblem, got {type(problem).__name__}")
            if lam is not None or budget is not None:
                raise TypeError(
                    "give the problem as a PruningProblem or by keyword (lam=, budget=), not both"
                )
            lam, budget = problem.lam, problem.budget
        who = type(self).__name__
        if not self._forms:
            if lam is not None or budget is not None:
                raise TypeError(
                    f"{who} has no feature costs: call build(data) without lam or budget"
                )
            return PruningProblem()
        if budget is None and lam is None and "lam" not in self._forms:
            raise TypeError(f"{who} models the budgeted problem: budget is required")
        lam, budget = check_problem(lam, budget)
        if budget is None and "lam" not in self._forms:
            raise TypeError(f"{who} models the budgeted problem: give budget=, not lam=")
        if budget is not None and "budget" not in self._forms:
            raise TypeError(
                f"{who} has no budget form (the budgeted IP3 is LP1); give lam=, not budget="
            )
        return PruningProblem(lam, budget)

    def decode(self, model: Model[PM], solution: Any) -> list[np.ndarray]:
        """Leaf masks (``z > 0.5``), one per tree of the model, from a solution."""
        check_built_by(model, self)
        z = solution_values(model, solution)["z"].reshape(-1)
        return _split_trees(z > 0.5, model)

    def evaluate(self, model: Model[PM], decoded: Any, data: EnsembleData) -> float:
        """The stated problem's value of a pruning by :func:`~odtkit.pruning.objective_terms`:
        ``error_term + lam * cost_term``, or with a budget the error term (``inf`` over it)."""
        check_built_by(model, self)
        terms = objective_terms(data, _leaves(decoded), lam=model.meta.lam or 0.0)
        return _stated_objective(terms, model.meta)

    def start(self, model: Model[PM], obj: Any) -> np.ndarray:
        """The complete, feasible column vector of a pruning (a ``PrunedEnsemble``)."""
        check_built_by(model, self)
        pruning = _pruning(obj, model)
        terms = objective_terms(pruning.data, pruning.leaves, lam=0.0)
        return model.vector(self._start_values(model, pruning, terms))

    @abstractmethod
    def _start_values(
        self, model: Model[PM], pruning: Any, terms: dict[str, Any]
    ) -> dict[str, np.ndarray]:
        """Start values by variable group of ``pruning`` (``terms``: its objective terms)."""


# ------------------------------------------------------------------------------------------
# IP0, IP1, IP2
# ------------------------------------------------------------------------------------------
_ALL = frozenset({EXACT, VALID_BOUND, DECODE_NOT_WORSE, LP_INTEGRAL})
_MIP = frozenset({EXACT, VALID_BOUND, DECODE_NOT_WORSE})


class IP0(PruningFormulation[PruningMeta]):
    """IP0 (Sherali et al.): minimise the average per-tree training error over valid prunings.

    ``min 1/(NT) sum_t sum_h e_h z_h  s.t.  leaf rows, z binary``. No feature costs, so
    ``build(data)`` takes neither ``lam`` nor ``budget`` (IP3 with ``lam=0`` is the same
    problem); the trees decouple and the optimum keeps every tree whole up to ties.
    """

    name = "ip0"
    _properties = _ALL
    _forms = frozenset()

    def _build(self, data: EnsembleData, problem: PruningProblem) -> Model[PruningMeta]:
        b = ModelBuilder("pruning_ip0")
        z = b.add_vars("z", shape=(data.n_nodes,), kind="binary", lb=0.0, ub=1.0)
        r, c, m = _leaf_rows(data, z.index, list(range(data.n_trees)))
        b.add_constraints("leaf", r, c, 1.0, "==", np.ones(m))
        _error_objective(b, data, z)
        return b.build(_meta(data, self.name, problem))

    def _start_values(
        self, model: Model[PruningMeta], pruning: Any, terms: dict[str, Any]
    ) -> dict[str, np.ndarray]:
        return {"z": np.concatenate(pruning.leaves).astype(float)}


def _ensemble_objective(
    b: ModelBuilder,
    data: EnsembleData,
    z: Any,
    w: Any,
    cost: np.ndarray,
    problem: PruningProblem,
) -> None:
    """Error term on ``z``; ``lam * cost`` on ``w`` or the row ``cost . w <= budget``."""
    _error_objective(b, data, z)
    if problem.budget is None:
        b.add_objective(w.index, problem.penalty * cost)
    else:
        zero = np.zeros(w.size, dtype=np.int64)
        b.add_constraints("budget", zero, w.index, cost, "<=", np.array([problem.budget]))


class IP1(PruningFormulation[PruningMeta]):
    """IP1, the first (weak) formulation, extended to the ensemble (§7.3).

    ``min 1/(NT) sum e_h z_h + lam sum_k c_k 1/N sum_i w_{k,i}`` s.t. leaf rows and
    ``w_{k,i} >= z^{(t)}_h`` for every tree t, example i and node h on i's path strictly below
    ``u_{t,k,i}`` (i.e. k is tested in p(h)); z, w binary; with ``budget`` the cost row instead
    of the λ term. Its LP relaxation is weak (not LP_INTEGRAL): the MIP needs branching
    (benchmark "IP1-MIP").
    """

    name = "ip1"
    _properties = _MIP
    _forms = frozenset({"lam", "budget"})

    def _build(self, data: EnsembleData, problem: PruningProblem) -> Model[PruningMeta]:
        b = ModelBuilder("pruning_ip1")
        z = b.add_vars("z", shape=(data.n_nodes,), kind="binary", lb=0.0, ub=1.0)
        w = b.add_vars("w", shape=(data.n_pairs,), kind="binary", lb=0.0, ub=1.0)
        trees = list(range(data.n_trees))
        r, c, m = _leaf_rows(data, z.index, trees)
        b.add_constraints("leaf", r, c, 1.0, "==", np.ones(m))
        R, Cz, Cw = [], [], []
        row0 = 0
        for t in trees:
            tree = data.trees[t]
            leaf = tree.leaf_of[tree.use_example]
            skip = tree.depth[tree.use_node] + 1
            owner, below = _gather_ancestors(tree, leaf, skip_top=skip)
            pair = data.entry_pair[data.entry_offset[t] + owner]
            k = owner.shape[0]
            R.append(np.arange(k, dtype=np.int64) + row0)
            Cz.append(z.index[data.node_offset[t] + below])
            Cw.append(w.index[pair])
            row0 += k
        rows = np.concatenate(R)
        b.add_constraints(
            "cover",
            np.concatenate([rows, rows]),
            np.concatenate([np.concatenate(Cw), np.concatenate(Cz)]),
            np.concatenate([np.ones(row0), -np.ones(row0)]),
            ">=",
            np.zeros(row0),
        )
        cost = data.costs[data.pair_feature] / data.n_samples
        _ensemble_objective(b, data, z, w, cost, problem)
        return b.build(_meta(data, self.name, problem))

    def _start_values(
        self, model: Model[PruningMeta], pruning: Any, terms: dict[str, Any]
    ) -> dict[str, np.ndarray]:
        return {"z": np.concatenate(pruning.leaves).astype(float), "w": terms["w"].astype(float)}


class IP2(PruningFormulation[PruningMeta]):
    """IP2, the strong single-tree formulation (§7.4), or all trees side by side.

    Parameters
    ----------
    tree : int, optional
        Model tree ``tree`` alone: ``min 1/N sum_h e_h z_h + lam sum_k c_k 1/N sum_i w_{k,i}``
        (``z`` then holds only that tree's nodes). ``None`` (default): the block-diagonal model
        of *individual pruning* with ``lam_ind = T lam``, scaled by ``1/T`` (objective
        ``1/(NT) sum e z + lam 1/N sum_t sum c_k w^{(t)}``, features paid once per tree), whose
        optimum is the individual-pruning baseline of §7.10. That — not the ensemble objective —
        is the problem ``evaluate`` scores and the properties refer to.
    """

    name = "ip2"
    _properties = _ALL

    def __init__(self, tree: int | None = None) -> None:
        if tree is not None and (isinstance(tree, bool) or not isinstance(tree, (int, np.integer))):
            raise TypeError(f"tree must be an int or None, got {type(tree).__name__}")
        self.tree = None if tree is None else int(tree)

    def _trees(self, data: EnsembleData) -> list[int]:
        if self.tree is None:
            return list(range(data.n_trees))
        if not 0 <= self.tree < data.n_trees:
            raise ValueError(f"tree must be in 0..{data.n_trees - 1}, got {self.tree}")
        return [self.tree]

    def _build(self, data: EnsembleData, problem: PruningProblem) -> Model[PruningMeta]:
        """The IP2 model of ``data`` (of tree ``self.tree`` or of all trees) for ``lam``."""
        lam = problem.penalty
        trees = self._trees(data)
        N = data.n_samples
        scale = 1.0 / len(trees)  # 1/T for all trees side by side, 1 for a single tree
        b = ModelBuilder("pruning_ip2")
        sizes = np.array([data.trees[t].n_nodes for t in trees])
        esizes = np.array([data.trees[t].n_entries for t in trees])
        z = b.add_vars("z", shape=(int(sizes.sum()),), kind="binary", lb=0.0, ub=1.0)
        wt = b.add_vars("wt", shape=(int(esizes.sum()),), kind="binary", lb=0.0, ub=1.0)
        # local re-indexing: global node id of tree t -> position in this model's z group
        z_map = np.full(data.n_nodes, -1, dtype=np.int64)
        wt_base = np.zeros(data.n_trees, dtype=np.int64)
        pos = epos = 0
        for t, s, e in zip(trees, sizes, esizes, strict=True):
            z_map[data.node_offset[t] : data.node_offset[t + 1]] = z.index[pos : pos + s]
            wt_base[t] = epos
            pos += s
            epos += e
        r, c, m = _leaf_rows(data, z_map, trees)
        b.add_constraints("leaf", r, c, 1.0, "==", np.ones(m))
        r, c, m = _feature_rows(data, z_map, wt.index, trees, wt_base)
        b.add_constraints("feature", r, c, 1.0, "==", np.ones(m))
        b.add_objective(z.index, scale * _errors(data, trees) / N)
        feats = np.concatenate([data.trees[t].use_feature for t in trees])
        # per-tree lam_ind = T lam, times scale 1/T  ->  lam (ensemble); single tree: lam
        b.add_objective(wt.index, lam * data.costs[feats] / N)
        return b.build(_meta(data, self.name, problem, trees=trees))

    def evaluate(self, model: Model[PruningMeta], decoded: Any, data: EnsembleData) -> float:
        """Individual-pruning objective of the model's trees (features paid once per tree),
        by :func:`~odtkit.pruning.individual_objective`."""
        check_built_by(model, self)
        meta = model.meta
        return individual_objective(data, _leaves(decoded), meta.lam or 0.0, list(meta.trees))

    def _start_values(
        self, model: Model[PruningMeta], pruning: Any, terms: dict[str, Any]
    ) -> dict[str, np.ndarray]:
        trees = model.meta.trees
        offset = pruning.data.entry_offset
        return {
            "z": np.concatenate([pruning.leaves[t] for t in trees]).astype(float),
            "wt": np.concatenate([terms["wt"][offset[t] : offset[t + 1]] for t in trees]).astype(
                float
            ),
        }


# ------------------------------------------------------------------------------------------
# IP3 and the budgeted LP1
# ------------------------------------------------------------------------------------------
class IP3(PruningFormulation[IP3Meta]):
    """IP3, the ensemble formulation (§7.5): integral LP relaxation (Theorem 4.2).

    ``min 1/(NT) sum_t sum_h e_h z_h + lam sum_k c_k (1/N) sum_i w_{k,i}`` s.t. leaf rows,
    feature rows, link rows; z, wt, w binary. ``w <= 1`` is kept as a bound (implied at optimum
    for ``lam c_k >= 0``; explicit for safety).

    Parameters
    ----------
    aggregate : bool
        Build the equivalent compact form: all ``w^{(t)}_{k,i}`` with the same
        ``(t, u_{t,k,i}, k)`` equal ``1 - sum_{h in p(u) + u} z_h`` in every feasible point, so
        they share one ``wt`` column and one feature row (one fictitious leaf per (u, k) in
        Lemma 4.1's augmented tree); link rows become ``wt_{t,u,k} <= w_{k,i}``. The map between
        the two polyhedra is an injective affine map of the same (z, w) polyhedron, so vertices
        stay integral and optimal values coincide, while the feature rows shrink from one per
        (t, k, i) — each with depth(u) + 2 nonzeros — to one per (t, u, k).
    merge : bool
        (Needs ``aggregate``.) Also merge (feature, example) pairs whose link rows involve the
        same ``wt`` columns: their ``w_{k,i}`` take equal optimal values, so one column per
        class with cost ``lam c_k |class| / N`` and the class representative's link rows
        suffice. The merged model is the aggregated IP3 of "virtual examples" (one per class)
        with weighted costs — the same matrix shape, hence still integral.
        ``meta.pair_class`` maps every pair to its ``w`` column.
    """

    name = "ip3"
    _properties = _ALL

    def __init__(self, aggregate: bool = False, merge: bool = False) -> None:
        if merge and not aggregate:
            raise ValueError("merge=True needs aggregate=True")
        self.aggregate = bool(aggregate)
        self.merge = bool(merge)

    def _build(self, data: EnsembleData, problem: PruningProblem) -> Model[IP3Meta]:
        """The IP3 model of ``data`` for ``lam`` (the budgeted problem: :class:`LP1`)."""
        b = ModelBuilder("pruning_ip3" if problem.budget is None else "pruning_lp1")
        z = b.add_vars("z", shape=(data.n_nodes,), kind="binary", lb=0.0, ub=1.0)
        n_wt = data.n_groups if self.aggregate else data.n_entries
        wt = b.add_vars("wt", shape=(n_wt,), kind="binary", lb=0.0, ub=1.0)
        pair_class, class_rep = _merge_pairs(data) if self.merge else (None, None)
        n_w = data.n_pairs if class_rep is None else class_rep.shape[0]
        w = b.add_vars("w", shape=(n_w,), kind="binary", lb=0.0, ub=1.0)
        trees = list(range(data.n_trees))
        r, c, m = _leaf_rows(data, z.index, trees)
        b.add_constraints("leaf", r, c, 1.0, "==", np.ones(m))
        if self.aggregate:
            R, C = [], []
            row0 = 0
            g_tree = np.searchsorted(data.entry_offset, data.group_start, side="right") - 1
            for t in trees:
                tree = data.trees[t]
                gs = np.flatnonzero(g_tree == t)
                u = tree.use_node[data.group_start[gs] - data.entry_offset[t]]
                owner, anc = _gather_ancestors(tree, u)
                R.append(np.concatenate([np.arange(gs.shape[0]), owner]) + row0)
                C.append(np.concatenate([wt.index[gs], z.index[data.node_offset[t] + anc]]))
                row0 += gs.shape[0]
            r, c, m = np.concatenate(R), np.concatenate(C), row0
            wt_of_entry = wt.index[data.entry_group]
        else:
            r, c, m = _feature_rows(data, z.index, wt.index, trees, data.entry_offset[:-1])
            wt_of_entry = wt.index
        b.add_constraints("feature", r, c, 1.0, "==", np.ones(m))
        if pair_class is None or class_rep is None:
            keep = np.arange(data.n_entries, dtype=np.int64)
            w_of_entry = w.index[data.entry_pair]
            cost = data.costs[data.pair_feature] / data.n_samples
        else:
            is_rep = np.zeros(data.n_pairs, dtype=bool)
            is_rep[class_rep] = True
            keep = np.flatnonzero(is_rep[data.entry_pair])
            w_of_entry = w.index[pair_class[data.entry_pair[keep]]]
            size = np.bincount(pair_class, minlength=n_w).astype(np.float64)
            cost = data.costs[data.pair_feature[class_rep]] * size / data.n_samples
        ne = keep.shape[0]
        rows = np.arange(ne, dtype=np.int64)
        b.add_constraints(
            "link",
            np.concatenate([rows, rows]),
            np.concatenate([wt_of_entry[keep], w_of_entry]),
            np.concatenate([np.ones(ne), -np.ones(ne)]),
            "<=",
            np.zeros(ne),
        )
        _ensemble_objective(b, data, z, w, cost, problem)
        meta = _meta(data, self.name, problem).extend(
            IP3Meta,
            aggregate=self.aggregate,
            merge=pair_class is not None,
            pair_class=pair_class,
            class_rep=class_rep,
        )
        return b.build(meta)

    def _start_values(
        self, model: Model[IP3Meta], pruning: Any, terms: dict[str, Any]
    ) -> dict[str, np.ndarray]:
        wt, w = terms["wt"], terms["w"]
        meta = model.meta
        if meta.aggregate:
            wt = wt[pruning.data.group_start]  # constant on each (t, u, k) group
        if meta.class_rep is not None:
            w = w[meta.class_rep]  # equal on each class of merged pairs
        return {
            "z": np.concatenate(pruning.leaves).astype(float),
            "wt": wt.astype(float),
            "w": w.astype(float),
        }


class LP1(IP3):
    """LP1 (§7.7): IP3 without the λ term plus the budget row
    ``sum_k c_k (1/N) sum_i w_{k,i} <= budget`` — minimum error within a feature-cost budget.

    Same choices (``aggregate``, ``merge``) and columns as :class:`IP3`. The budget row
    destroys total unimodularity: for a budget between two vertices of the lower convex hull of
    the (cost, error) trade-off the LP vertex can be fractional with a value strictly below
    every pruning within budget (§8.6), so LP1 is not LP_INTEGRAL and is solved as a MIP then.
    A negative budget builds an infeasible model.
    """

    name = "lp1"
    _properties = _MIP
    _forms = frozenset({"budget"})


# ------------------------------------------------------------------------------------------
# the column-generation master
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class _Layout:
    """Link rows of the master: one per kept entry, each linked to one ``w`` column.

    Without merging every entry ``(t, k, i)`` keeps its row and ``w`` is per pair ``(k, i)`` (LP4 of
    docs/formulations-search-and-pruning.md §7.8). With merging (as ``IP3(merge=True)``): pairs
    whose entries fall in the same ``(t, u, k)`` groups take equal optimal ``w`` values, so one
    ``w`` per class (cost summed over the class) and only the class representative's entries keep
    link rows. A pruning's ``w^{(t)}`` is constant on a group, so the restricted master — and its
    value, the LP-IP3 optimum — is the same as with every row; only far fewer rows reach the solver.
    """

    row_of_entry: np.ndarray  # global entry -> link row, -1 for dropped entries
    w_of_row: np.ndarray  # link row -> w column
    w_cost: np.ndarray  # objective coefficient of each w column
    class_rep: np.ndarray | None  # merged: representative pair of each w column

    @property
    def n_rows(self) -> int:
        return int(self.w_of_row.shape[0])

    @property
    def n_w(self) -> int:
        return int(self.w_cost.shape[0])


def _layout(data: EnsembleData, lam: float, merge: bool) -> _Layout:
    pair_cost = lam * data.costs[data.pair_feature] / data.n_samples
    pair_class, class_rep = _merge_pairs(data) if merge else (None, None)
    if pair_class is None or class_rep is None:  # not merging (or the check refused to)
        rows = np.arange(data.n_entries, dtype=np.int64)
        return _Layout(rows, data.entry_pair.astype(np.int64), pair_cost, None)
    is_rep = np.zeros(data.n_pairs, dtype=bool)
    is_rep[class_rep] = True
    keep = np.flatnonzero(is_rep[data.entry_pair])
    row_of_entry = np.full(data.n_entries, -1, dtype=np.int64)
    row_of_entry[keep] = np.arange(keep.shape[0])
    w_cost = np.bincount(pair_class, weights=pair_cost, minlength=class_rep.shape[0])
    return _Layout(row_of_entry, pair_class[data.entry_pair[keep]], w_cost, class_rep)


@dataclass(frozen=True, eq=False)
class MasterColumn:
    """One generated pruning of tree ``tree`` as a column ``alpha_j`` of the master.

    ``rows`` are the master's link rows (sorted, block-relative) where the pruning's
    ``w^{(t)}`` is 1, ``cost`` its error cost ``e'z / (NT)``.
    """

    tree: int
    leaves: np.ndarray
    rows: np.ndarray
    cost: float


def _column(data: EnsembleData, layout: _Layout, t: int, z: np.ndarray) -> MasterColumn:
    tree = data.trees[int(t)]
    z = np.asarray(z, dtype=bool)
    errors, wt = tree_terms(tree, z)
    rows = layout.row_of_entry[data.entry_offset[t] + np.flatnonzero(wt)]
    return MasterColumn(int(t), z, rows[rows >= 0], errors / (data.n_samples * data.n_trees))


@dataclass(frozen=True, kw_only=True, eq=False)
class MasterMeta(PruningMeta):
    """The meta of a restricted master: :class:`PruningMeta`, the link layout, the columns
    (``column_tree[j]``: the tree of column ``j``) and whether ``alpha`` is binary."""

    layout: _Layout
    columns: tuple[MasterColumn, ...]
    column_tree: np.ndarray
    integral: bool


class ColgenMaster(PruningFormulation[MasterMeta]):
    """The restricted master of Dantzig–Wolfe column generation for LP-IP3.

    NWS 2016 LP4; docs/formulations-search-and-pruning.md §7.8.

    LP4 without explicit slacks: one column ``alpha_j`` per generated pruning ``j`` of tree
    ``t_j`` plus every ``w`` (per pair, or per class of merged pairs)::

        min  sum_j cost_j alpha_j + lam sum_{k,i} c_k / N w_{k,i}
        s.t. sum_{j in t} wt_j[e] alpha_j - w_{pair(e)} <= 0   for every entry e     (link)
             sum_{j in t} alpha_j = 1                          for every tree t  (convexity)

    ``build(data, *, lam, columns=None)`` gives the restricted master over ``columns`` (by
    default the initial ones, see ``init``); column generation then appends columns to an
    :class:`odtkit.solvers.IncrementalLP` from :meth:`column_arrays`, or rebuilds the master
    with :meth:`with_columns`. The master restricts LP-IP3, so its value bounds the optimum from
    above and its solver bound is no bound on IP3 (no VALID_BOUND, not EXACT); with
    ``integral=True`` every solution is an integral combination of prunings whose decoded
    objective is at most the master's value (DECODE_NOT_WORSE).

    Parameters
    ----------
    merge : bool
        Merge (feature, example) pairs with identical link structure, as ``IP3(merge=True)``
        does (fewer link rows, same LP value); ``False`` keeps one link row per entry (LP4).
    init : {"individual", "root"}
        Initial columns: the root-only pruning of each tree (spec), plus with ``"individual"``
        each tree's individual-pruning DP solution (λ_ind = Tλ), a cheap warm start.
    integral : bool
        Binary ``alpha`` (the master as an integer program over the generated columns).
        Without it ``alpha`` has no explicit upper bound (implied by convexity): an active
        bound would take part of the dual and the pricing prices would no longer certify
        optimality.
    """

    name = "colgen_master"

    def __init__(self, merge: bool = True, init: str = "individual", integral: bool = False):
        if init not in ("root", "individual"):
            raise ValueError(f"init must be 'root' or 'individual', got {init!r}")
        self.merge = bool(merge)
        self.init = init
        self.integral = bool(integral)

    @property
    def properties(self) -> frozenset[Property]:
        return frozenset({DECODE_NOT_WORSE}) if self.integral else frozenset()

    def build(
        self,
        data: EnsembleData,
        problem: PruningProblem | None = None,
        /,
        *,
        lam: float | None = None,
        budget: float | None = None,
        columns: Sequence[Any] | None = None,
    ) -> Model[MasterMeta]:
        """The restricted master of ``data`` for ``lam`` (or ``problem``) over ``columns``.

        ``columns``: ``(tree, leaf mask)`` pairs or :class:`MasterColumn` objects of this
        data and λ; default the initial columns of ``init``. Every tree needs one.
        """
        return self._master(data, self._problem(problem, lam, budget), columns)

    def _build(self, data: EnsembleData, problem: PruningProblem) -> Model[MasterMeta]:
        return self._master(data, problem, None)

    def _master(
        self, data: EnsembleData, problem: PruningProblem, columns: Sequence[Any] | None
    ) -> Model[MasterMeta]:
        lam = problem.penalty
        layout = _layout(data, lam, self.merge)
        if columns is None:
            columns = self.initial_prunings(data, lam)
        cols = [
            c if isinstance(c, MasterColumn) else _column(data, layout, int(c[0]), c[1])
            for c in columns
        ]
        return self._model(data, problem, layout, cols)

    def with_columns(
        self, model: Model[MasterMeta], data: EnsembleData, columns: Sequence[Any]
    ) -> Model[MasterMeta]:
        """The master of ``model``'s data and λ over other ``columns`` (its link layout
        reused, not recomputed); ``integral`` is this formulation's."""
        model = check_built_by(model, self)
        layout = model.meta.layout
        cols = [
            c if isinstance(c, MasterColumn) else _column(data, layout, int(c[0]), c[1])
            for c in columns
        ]
        return self._model(data, PruningProblem(lam=model.meta.lam), layout, cols)

    def column(
        self, model: Model[MasterMeta], data: EnsembleData, tree: int, leaves: np.ndarray
    ) -> MasterColumn:
        """The master column of pruning ``leaves`` of tree ``tree``."""
        model = check_built_by(model, self)
        return _column(data, model.meta.layout, tree, leaves)

    def initial_prunings(self, data: EnsembleData, lam: float) -> list[tuple[int, np.ndarray]]:
        """Each tree's root-only pruning, plus its individual-pruning DP optimum (``init``)."""
        N, T = data.n_samples, data.n_trees
        out: list[tuple[int, np.ndarray]] = []
        for t, tree in enumerate(data.trees):
            root = np.zeros(tree.n_nodes, dtype=bool)
            root[0] = True
            out.append((t, root))
            if self.init == "individual":
                price = lam * data.costs[tree.use_feature] / N
                _, z = tree_dp(tree, tree.error.astype(np.float64) / (N * T), price)
                if not np.array_equal(z, root):
                    out.append((t, z))
        return out

    def column_arrays(
        self, model: Model[MasterMeta], columns: Sequence[MasterColumn]
    ) -> tuple[np.ndarray, ...]:
        """``(costs, lower, upper, csc_starts, csc_rows, csc_values)`` of ``columns`` in
        ``model``'s rows: what :meth:`odtkit.solvers.IncrementalLP.add_columns` takes."""
        check_built_by(model, self)
        link0 = model.constraints["link"].start
        conv0 = model.constraints["convexity"].start
        m = len(columns)
        lens = np.array([c.rows.shape[0] + 1 for c in columns], dtype=np.int64)
        starts = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(lens, out=starts[1:])
        # link rows precede the convexity rows, so each column's row indices stay sorted
        rows = (
            np.concatenate([np.append(link0 + c.rows, conv0 + c.tree) for c in columns])
            if m
            else np.zeros(0, dtype=np.int64)
        )
        costs = np.array([c.cost for c in columns], dtype=np.float64)
        return costs, np.zeros(m), np.full(m, np.inf), starts, rows, np.ones(rows.shape[0])

    def _model(
        self, data: EnsembleData, problem: PruningProblem, layout: _Layout, cols: list[MasterColumn]
    ) -> Model[MasterMeta]:
        b = ModelBuilder("pruning_master")
        J = len(cols)
        if self.integral:
            alpha = b.add_vars("alpha", shape=(J,), kind="binary")
        else:
            alpha = b.add_vars("alpha", shape=(J,), kind="continuous", lb=0.0, ub=np.inf)
        w = b.add_vars("w", shape=(layout.n_w,), kind="continuous", lb=0.0, ub=1.0)
        ne = layout.n_rows
        lens = np.array([c.rows.shape[0] for c in cols], dtype=np.int64)
        ent = np.concatenate([c.rows for c in cols]) if J else np.zeros(0, np.int64)
        erows = np.arange(ne, dtype=np.int64)
        b.add_constraints(
            "link",
            np.concatenate([ent, erows]),
            np.concatenate([np.repeat(alpha.index, lens), w.index[layout.w_of_row]]),
            np.concatenate([np.ones(ent.shape[0]), -np.ones(ne)]),
            "<=",
            np.zeros(ne),
        )
        col_tree = np.array([c.tree for c in cols], dtype=np.int64)
        b.add_constraints("convexity", col_tree, alpha.index, 1.0, "==", np.ones(data.n_trees))
        b.add_objective(alpha.index, np.array([c.cost for c in cols], dtype=np.float64))
        b.add_objective(w.index, layout.w_cost)
        meta = _meta(data, self.name, problem).extend(
            MasterMeta,
            layout=layout,
            columns=tuple(cols),
            column_tree=col_tree,
            integral=self.integral,
        )
        return b.build(meta)

    def decode(self, model: Model[MasterMeta], solution: Any) -> list[np.ndarray]:
        """Per tree, the leaves of its column with the largest ``alpha`` (for an integral
        ``alpha``: the chosen pruning; for a fractional one only a rounding)."""
        model = check_built_by(model, self)
        alpha = solution_values(model, solution)["alpha"].reshape(-1)
        col_tree, cols = model.meta.column_tree, model.meta.columns
        out = []
        for t in range(model.meta.n_trees):
            js = np.flatnonzero(col_tree == t)
            if js.size == 0:
                raise ValueError(f"the master has no column of tree {t}")
            out.append(cols[int(js[np.argmax(alpha[js])])].leaves.copy())
        return out

    def _start_values(
        self, model: Model[MasterMeta], pruning: Any, terms: dict[str, Any]
    ) -> dict[str, np.ndarray]:
        col_tree, cols = model.meta.column_tree, model.meta.columns
        alpha = np.zeros(len(cols))
        for t, z in enumerate(pruning.leaves):
            match = [j for j in np.flatnonzero(col_tree == t) if np.array_equal(cols[j].leaves, z)]
            if not match:
                raise ValueError(f"tree {t}'s pruning is not a column of this master")
            alpha[match[0]] = 1.0
        layout = model.meta.layout
        w = terms["w"] if layout.class_rep is None else terms["w"][layout.class_rep]
        return {"alpha": alpha, "w": w.astype(float)}

r"""TreeColumns: the Dantzig–Wolfe master over whole trees (column generation's restricted master).

docs/formulations-trees.md §10. A *column* is one tree :math:`T` of depth :math:`\le D` (a
:class:`TreeColumn`, measured once by the truth: :func:`odtkit.metrics.objective` and
:meth:`odtkit.constraints.LinearRows.values`); the master picks a convex combination of the
columns it is given, subject to the side rows of :mod:`odtkit.constraints`:

.. math::

    \min\ & \textstyle\sum_T R(T)\,\theta_T + M \sum_r (s^-_r + s^+_r) \\
    \text{(convexity)}\quad & \textstyle\sum_T \theta_T = 1 \\
    \text{(one block per constraint)}\quad & \ell_r \le \textstyle\sum_T v_r(T)\,\theta_T
        + s^-_r - s^+_r \le u_r \\
    & \theta \ge 0,\ s \ge 0

with :math:`v_r(T)` the middle term of row :math:`r` for :math:`T` (predictions, leaves,
effective splits, tested feature groups). A minimum leaf support and forbidden features are no
rows: they define which trees are columns at all (the pricing domain). The slacks :math:`s`
cost :math:`M` per unit (``penalty``) so that every restricted master is feasible; with
``phase="feasibility"`` the objective is :math:`\sum_r (s^-_r + s^+_r)` alone, whose optimum
over *all* trees is 0 exactly when some convex combination of trees meets the rows.

Over all trees this LP is the convex hull of the trees cut by the side rows: PathOCT's LP
relaxation, without listing its paths (its size is the number of columns times the number of
side rows, independent of the row count). Without side rows its optimum is a single tree
(:math:`\min_T R(T)` over a simplex), so the LP bound is the optimum itself.

**Pricing.** With row duals :math:`\mu` (convention of the ``"highs"`` backend: :math:`c -
A^\top y` are the reduced costs) and the convexity dual :math:`\pi`, a column's reduced cost is

.. math::

    \bar c(T) = R(T) - \textstyle\sum_r \mu_r v_r(T) - \pi
      = \sum_i C_{i,\hat y_i} + \kappa\,|\text{leaves}(T)|
        + \sum_{g \text{ tested}} \rho_g - \beta - \pi

with per-row-per-class costs :math:`C_{i,k} = L_{i,k}/W - \sum_r \mu_r A_{r,i,k}` (:math:`L`
the losses: misclassified weight or a stated cost), a per-leaf cost :math:`\kappa = \lambda -
\sum_r \mu_r a_r + \beta`, where a split costs :math:`\beta = -\sum_r \mu_r B_{r,j}` whatever its
feature (a tree has one split fewer than leaves), and a set-up cost :math:`\rho_g = -\sum_r
\mu_r C_{r,g}` per feature group tested. :meth:`TreeColumns.pricing` returns these terms; the
most negative :math:`\bar c` over the domain is one exact search (:func:`odtkit.core.price`).
A split cost that depends on the feature, or a negative leaf or group cost (a lower bound on
leaves, a required feature), is outside what the search prices:
:func:`odtkit.formulations.columns.columns_refusal` names it before anything is built.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from odtkit import metrics
from odtkit.constraints import ResolvedConstraints, resolve
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset
from odtkit.fairness import Fairness
from odtkit.formulations._base import (
    DECODE_NOT_WORSE,
    Formulation,
    FormulationMeta,
    Property,
    check_built_by,
    solution_values,
)
from odtkit.formulations._common import TreeProblem, data_key
from odtkit.model import Model, ModelBuilder
from odtkit.tree import Tree

__all__ = [
    "ColumnsMeta",
    "PricingTerms",
    "TreeColumn",
    "TreeColumns",
    "columns_refusal",
    "heap_actions",
    "side_constraints",
]

#: The slack penalty per unit of violation, relative to the largest column cost: large enough
#: that no dual of a feasible master reaches it in practice (the loop raises it when a slack
#: stays positive and a feasibility check finds the rows satisfiable).
PENALTY = 1e4


def heap_actions(tree: Tree) -> dict[int, int]:
    """The action at each heap position of ``tree`` (root 1, children ``2u`` (``x_j = 0``) and
    ``2u + 1``): the feature ``j >= 0`` of a split, ``-1 - k`` for a leaf of class ``k``."""
    out: dict[int, int] = {}
    stack = [(tree, 1)]
    while stack:
        node, u = stack.pop()
        if node.feature is None:
            assert node.label is not None  # a leaf has a label
            out[u] = -1 - node.label
        else:
            out[u] = node.feature
            assert node.left is not None and node.right is not None
            stack.append((node.left, 2 * u))
            stack.append((node.right, 2 * u + 1))
    return out


def side_constraints(
    dataset: Dataset, constraints: Any, fairness: Fairness | None = None
) -> ResolvedConstraints | None:
    """``constraints`` (and a ``fairness`` stated beside them, one more of them) resolved
    against ``dataset``; None when nothing is stated."""
    if isinstance(constraints, ResolvedConstraints):
        if fairness is not None:
            raise TypeError(
                "give fairness inside the constraints when they are already resolved "
                "(odtkit.constraints.resolve([fairness, ...], dataset))"
            )
        return constraints if constraints else None
    stated = list(constraints or ())
    if fairness is not None:
        stated.insert(0, fairness)
    return resolve(stated, dataset) if stated else None


def columns_refusal(resolved: ResolvedConstraints | None) -> str:
    """Why column generation cannot price ``resolved`` exactly ("" when it can).

    The pricing search takes per-row-per-class costs reducible to a weighted misclassification
    (every two-class cost; with three or more classes, no row read by a prediction row), a
    non-negative cost per leaf and per split that is the same for every feature, and
    non-negative set-up costs per feature group: so every row that reads predictions needs two
    classes, a split budget must cost the same for every feature, and a required feature
    (a group counted from below) is out.
    """
    if resolved is None:
        return ""
    K = resolved.n_classes
    for block in resolved.blocks:
        if block.reads_predictions and K > 2:
            return (
                f"{block.name}: a constraint on predictions with {K} classes makes the pricing "
                "costs general per-class costs, which the search prices only for two classes"
            )
        if block.groups and np.any(np.isfinite(block.lower) & (block.per_group != 0).any(axis=1)):
            return (
                f"{block.name}: a lower bound on the feature groups a tree tests (a required "
                "feature) has no exact pricing by the search"
            )
        if np.any(np.isfinite(block.lower) & (block.per_leaf != 0)):
            return f"{block.name}: a lower bound on the leaf count has no exact pricing"
        split = block.per_split[:, ~resolved.forbidden]
        if split.size and np.any(split.max(axis=1) != split.min(axis=1)):
            return (
                f"{block.name}: a split budget whose cost depends on the feature has no exact "
                "pricing by the search (the search prices one cost per leaf)"
            )
        if np.any(np.isfinite(block.lower) & (split != 0).any(axis=1)):
            return f"{block.name}: a lower bound on the split count has no exact pricing"
        if block.groups and np.any(block.per_group < 0):
            return f"{block.name}: a negative cost per tested feature group has no exact pricing"
        if np.any(block.per_leaf < 0) or np.any(split < 0):
            return f"{block.name}: a negative cost per leaf or split has no exact pricing"
    if resolved.losses is not None and K > 2:
        from odtkit.costs import reduction

        reduced = reduction(resolved.losses)
        if isinstance(reduced, str):
            return f"the cost objective: {reduced}"
    return ""


@dataclass(frozen=True, eq=False)
class TreeColumn:
    """One tree as the master sees it, measured by the truth.

    Attributes
    ----------
    tree : Tree
    cost : float
        Its objective :math:`R(T)` (:func:`odtkit.metrics.objective`, the stated cost included).
    values : ndarray, shape (m,)
        The middle terms of the side rows, blocks in order.
    feasible : bool
        It meets every side constraint (:meth:`ResolvedConstraints.violations`).
    actions : dict
        :func:`heap_actions` of the tree (branching reads them).
    """

    tree: Tree
    cost: float
    values: np.ndarray
    feasible: bool
    actions: dict[int, int]

    @staticmethod
    def of(
        tree: Tree, dataset: Dataset, resolved: ResolvedConstraints | None, lam: float
    ) -> TreeColumn:
        """Measure ``tree`` on ``dataset`` (the one place a column's numbers come from)."""
        cost = metrics.objective(tree, dataset, lam=lam, costs=resolved)
        if resolved is None or not resolved.blocks:
            values = np.zeros(0)
        else:
            values = np.concatenate([b.values(tree, dataset) for b in resolved.blocks])
        feasible = resolved is None or not resolved.violations(tree, dataset)
        return TreeColumn(tree, float(cost), values, feasible, heap_actions(tree))


@dataclass(frozen=True, kw_only=True, eq=False)
class ColumnsMeta(FormulationMeta):
    """What a master carries: the problem, its columns in ``theta`` order, its rows' bounds.

    ``phase`` is ``"optimize"`` (objective :math:`R` plus ``penalty`` per unit of slack) or
    ``"feasibility"`` (the slacks alone).
    """

    max_depth: int
    lam: float
    n_features: int
    n_classes: int
    total_weight: float
    data_key: str
    constraints: ResolvedConstraints | None
    columns: tuple[TreeColumn, ...]
    row_lower: np.ndarray
    row_upper: np.ndarray
    penalty: float
    phase: str


@dataclass(frozen=True, eq=False)
class PricingTerms:
    r"""The reduced cost of a tree as pricing terms (module docstring), in objective units.

    ``reduced(T) = sum_i row_costs[i, T(x_i)] + leaf_cost * leaves(T) + sum of group_costs of
    the groups T tests + constant``.
    """

    row_costs: np.ndarray
    leaf_cost: float
    group_costs: tuple[tuple[np.ndarray, float], ...]
    constant: float


class TreeColumns(Formulation[Dataset, TreeProblem, ColumnsMeta, Tree]):
    """The restricted master over a given set of trees (module docstring).

    ``build(dataset, max_depth=, lam=, constraints=, fairness=, columns=[trees])``. The master
    restricts the problem to convex combinations of its columns, so its value bounds the optimum
    from above only: it declares no bound (column generation's Lagrangian bound is the loop's,
    :func:`odtkit.branch_and_price`). With ``integral=True`` ``theta`` is binary and no slack
    exists: a solution is one of the columns, meeting the rows (DECODE_NOT_WORSE).

    Parameters
    ----------
    integral : bool
        Binary ``theta``, no slacks: the master as an integer program over its columns (the
        loop's incumbent heuristic).
    """

    name = "tree_columns"
    problem_type = TreeProblem

    def __init__(self, integral: bool = False) -> None:
        self.integral = bool(integral)

    @property
    def properties(self) -> frozenset[Property]:
        return frozenset({DECODE_NOT_WORSE}) if self.integral else frozenset()

    def build(
        self,
        dataset: Dataset,
        problem: TreeProblem | None = None,
        /,
        *,
        max_depth: int | None = None,
        lam: float | None = None,
        fairness: Fairness | None = None,
        constraints: Any = None,
        columns: Sequence[Tree | TreeColumn] = (),
        penalty: float | None = None,
        phase: str = "optimize",
    ) -> Model[ColumnsMeta]:
        """The master of ``dataset`` over ``columns`` (trees, or columns measured on it).

        ``penalty``: the cost of a unit of slack (default :data:`PENALTY` times the largest
        column cost, at least 1); ``phase``: ``"optimize"`` or ``"feasibility"``.
        """
        dataset = check_dataset(dataset)
        problem = TreeProblem.of(problem, max_depth, lam, fairness, constraints)
        if problem.max_depth is None:
            raise ValueError("max_depth must be set: the columns are trees of depth <= max_depth")
        if phase not in ("optimize", "feasibility"):
            raise ValueError(f"phase must be 'optimize' or 'feasibility', got {phase!r}")
        resolved = side_constraints(dataset, problem.constraints, problem.fairness)
        cols = tuple(
            c if isinstance(c, TreeColumn) else TreeColumn.of(c, dataset, resolved, problem.lam)
            for c in columns
        )
        if not cols:
            raise ValueError("columns must hold at least one tree")
        blocks = () if resolved is None else resolved.blocks
        lower = np.concatenate([b.lower for b in blocks]) if blocks else np.zeros(0)
        upper = np.concatenate([b.upper for b in blocks]) if blocks else np.zeros(0)
        if penalty is None:
            penalty = PENALTY * max(1.0, max(abs(c.cost) for c in cols))
        if not (isinstance(penalty, (int, float)) and penalty > 0 and math.isfinite(penalty)):
            raise ValueError(f"penalty must be a positive finite number, got {penalty!r}")
        meta = ColumnsMeta(
            formulation=self.name,
            max_depth=int(problem.max_depth),
            lam=problem.lam,
            n_features=dataset.n_features,
            n_classes=dataset.n_classes,
            total_weight=dataset.total_weight,
            data_key=data_key(dataset),
            constraints=resolved,
            columns=cols,
            row_lower=lower,
            row_upper=upper,
            penalty=float(penalty),
            phase=phase,
        )
        return self._model(meta)

    def _model(self, meta: ColumnsMeta) -> Model[ColumnsMeta]:
        cols, m = meta.columns, meta.row_lower.size
        J = len(cols)
        builder = ModelBuilder(self.name)
        theta = builder.add_vars(
            "theta", J, "binary" if self.integral else "continuous", 0.0, np.inf
        )
        slacks = not self.integral and m > 0
        if slacks:
            below = builder.add_vars("slack_below", m, "continuous", 0.0, np.inf)
            above = builder.add_vars("slack_above", m, "continuous", 0.0, np.inf)
        builder.add_constraints("convexity", np.zeros(J), theta.index, 1.0, "==", 1.0, n_rows=1)
        start = 0
        blocks = () if meta.constraints is None else meta.constraints.blocks
        values = np.array([c.values for c in cols]).reshape(J, m)  # (columns, rows)
        for block in blocks:
            r = block.n_rows
            V = sp.csr_matrix(values[:, start : start + r].T)  # (rows, columns)
            coo = V.tocoo()
            rows_, cols_, vals_ = [coo.row], [theta.index[coo.col]], [coo.data]
            if slacks:
                local = np.arange(r)
                rows_ += [local, local]
                cols_ += [below.index[start + local], above.index[start + local]]
                vals_ += [np.ones(r), -np.ones(r)]
            builder.add_range_constraints(
                block.name,
                np.concatenate(rows_),
                np.concatenate(cols_),
                np.concatenate(vals_),
                block.lower,
                block.upper,
                n_rows=r,
            )
            start += r
        if meta.phase == "optimize":
            builder.add_objective(theta.index, np.array([c.cost for c in cols]))
        if slacks:
            weight = meta.penalty if meta.phase == "optimize" else 1.0
            builder.add_objective(below.index, np.full(m, weight))
            builder.add_objective(above.index, np.full(m, weight))
        return builder.build(meta)

    # --- reading a solution ---------------------------------------------------------------------
    def decode(self, model: Model[ColumnsMeta], solution: Any) -> Tree:
        """The column of largest ``theta`` (one tree; fractional masters are the loop's to
        branch), as a solver returns it (``ResolvedConstraints.canonical`` / ``canonical``)."""
        model = check_built_by(model, self)
        theta = solution_values(model, solution)["theta"]
        return model.meta.columns[int(np.argmax(theta))].tree

    def evaluate(self, model: Model[ColumnsMeta], decoded: Tree, data: Dataset) -> float:
        model = check_built_by(model, self)
        if data_key(data) != model.meta.data_key:
            raise ValueError("dataset is not the one the master was built on")
        return metrics.objective(decoded, data, lam=model.meta.lam, costs=model.meta.constraints)

    def violation(self, model: Model[ColumnsMeta], decoded: Tree, data: Dataset) -> str:
        model = check_built_by(model, self)
        resolved = model.meta.constraints
        return "" if resolved is None else "; ".join(resolved.violations(decoded, data))

    def start(self, model: Model[ColumnsMeta], obj: Any) -> np.ndarray:
        """The master point of the column ``obj`` (a tree among the columns): its ``theta`` 1,
        slacks covering whatever rows it breaks."""
        model = check_built_by(model, self)
        if not isinstance(obj, Tree):
            raise TypeError(f"a master starts from a Tree, got {type(obj).__name__}")
        meta = model.meta
        index = next((i for i, c in enumerate(meta.columns) if c.tree == obj), None)
        if index is None:
            raise ValueError("the tree is not a column of this master")
        x = np.zeros(model.n_vars)
        x[model.vars["theta"].index[index]] = 1.0
        if "slack_below" in model.vars:
            v = meta.columns[index].values
            x[model.vars["slack_below"].index] = np.maximum(meta.row_lower - v, 0.0)
            x[model.vars["slack_above"].index] = np.maximum(v - meta.row_upper, 0.0)
        return x

    # --- pricing --------------------------------------------------------------------------------
    def pricing(self, model: Model[ColumnsMeta], dataset: Dataset, duals: Any) -> PricingTerms:
        """The reduced cost of a tree under the row ``duals`` of a solved master (module
        docstring), as the terms the pricing search takes."""
        model = check_built_by(model, self)
        meta = model.meta
        y = np.asarray(duals, dtype=float)
        if y.shape != (model.n_constraints,):
            raise ValueError(f"duals must have one value per row ({model.n_constraints})")
        n, K = dataset.n_samples, meta.n_classes
        W = meta.total_weight
        optimize = meta.phase == "optimize"
        if not optimize:
            row_costs = np.zeros((n, K))
        elif meta.constraints is not None and meta.constraints.losses is not None:
            row_costs = meta.constraints.losses / W
        else:
            row_costs = dataset.weights[:, None] * (dataset.y[:, None] != np.arange(K)[None, :]) / W
        pi = float(y[model.constraints["convexity"].start])
        leaf = meta.lam if optimize else 0.0
        split = 0.0
        groups: dict[bytes, tuple[np.ndarray, float]] = {}
        blocks = () if meta.constraints is None else meta.constraints.blocks
        forbidden = (
            np.zeros(meta.n_features, dtype=bool)
            if meta.constraints is None
            else meta.constraints.forbidden
        )
        for block in blocks:
            mu = y[model.constraints[block.name].slice]
            if block.reads_predictions:
                row_costs = row_costs - (sp.csr_matrix(block.prediction).T @ mu).reshape(n, K)
            leaf -= float(mu @ block.per_leaf)
            allowed = block.per_split[:, ~forbidden]
            if allowed.size:
                split -= float(mu @ allowed[:, 0])
            if block.groups:
                rho = -(mu @ block.per_group)
                for g, cost in zip(block.groups, rho, strict=True):
                    key = np.sort(np.asarray(g, dtype=np.int64)).tobytes()
                    old = groups.get(key, (np.sort(np.asarray(g, dtype=np.int64)), 0.0))
                    groups[key] = (old[0], old[1] + float(cost))
        # the signs columns_refusal guarantees, up to the LP's dual tolerance
        scale = max(1.0, abs(meta.penalty))
        leaf += split
        if leaf < 0:
            if leaf < -1e-9 * scale:
                raise ValueError(f"a leaf priced at {leaf!r} < 0: a dual of the wrong sign")
            leaf = 0.0
        kept = tuple((g, max(0.0, c)) for g, c in groups.values() if c > 1e-12 * scale)
        return PricingTerms(
            row_costs=row_costs, leaf_cost=float(leaf), group_costs=kept, constant=-split - pi
        )

    def column_count(self, model: Model[ColumnsMeta]) -> int:
        """The number of columns (trees) of ``model``."""
        return len(check_built_by(model, self).meta.columns)

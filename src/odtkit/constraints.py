r"""Side constraints a user can state, with one meaning for every solver, metric and oracle.

Each constraint is a small frozen value, checked on construction (an error names the argument).
:func:`resolve` turns a list of them, once, against a :class:`~odtkit.datasets.Dataset` into a
:class:`ResolvedConstraints`: what every consumer reads. A formulation turns it into named
constraint blocks, the native search takes the parts it can certify, :mod:`odtkit.metrics`
checks every returned tree against it and the brute-force oracle of :mod:`odtkit.testing`
enumerates under it. No solver keeps its own notion of a constraint.

**The linear form.** Except the minimum leaf support, every constraint is a block of rows

.. math::

    \ell_r \;\le\; \sum_i A_{r, i, \hat y_i}
        \;+\; a_r \cdot |\text{leaves}(T)|
        \;+\; \sum_{\text{splits } s} B_{r, j(s)}
        \;+\; \sum_g C_{r, g}\, [\text{group } g \text{ is tested}]
    \;\le\; u_r

over a tree :math:`T`: a coefficient per (data row, predicted class) (:math:`A`, sparse), per
leaf (:math:`a`), per split on binary feature :math:`j` (:math:`B`) and per *feature group*
tested somewhere in the tree (:math:`C`; a group is a raw column's binary features, or one
binary feature). Every tree formulation states predictions, leaves and splits in its own
variables, so it carries each row exactly. The minimum leaf support is a row per leaf: every
leaf of :math:`T` receives at least ``min_leaf_weight`` of training weight.

**The tree a constraint is measured on** is the tree as returned. A solver returns a tree
pruned of empty sides (``Tree.canonical``), which never breaks a constraint except
:class:`RequireFeatures` (merging two equal leaves drops a split); :meth:`ResolvedConstraints.
canonical` is the one rule for that (docs/constraints.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp

from odtkit.costs import Costs
from odtkit.datasets._dataset import Dataset, check_dataset
from odtkit.fairness import FAIRNESS_TOLERANCE, Fairness, FairnessGroups
from odtkit.tree import Tree

__all__ = [
    "CONSTRAINT_TOLERANCE",
    "ClassRecall",
    "Constraint",
    "FalsePositiveRate",
    "FeatureBudget",
    "ForbidFeatures",
    "LinearRows",
    "MaxLeaves",
    "MinLeafSupport",
    "Predict",
    "RequireFeatures",
    "ResolvedConstraints",
    "SYNTAX",
    "check_constraints",
    "effective_splits",
    "parse",
    "resolve",
]

#: A returned tree satisfies a row when it is within this much of the bound (relative to
#: ``max(1, |bound|)``): a MIP may violate a row by its feasibility tolerance.
CONSTRAINT_TOLERANCE = FAIRNESS_TOLERANCE


# ------------------------------------------------------------------------------------------
# the vocabulary


def _number(value: object, name: str, *, minimum: float = 0.0, maximum: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    out = float(value)
    # infinite costs, budgets and weights are refused: a model row cannot hold them, and an
    # infinite cost means "never test it", which ForbidFeatures states
    if not math.isfinite(out) or not minimum <= out <= maximum:
        interval = (
            f"[{minimum:g}, {maximum:g}]" if maximum < math.inf else f"finite and >= {minimum:g}"
        )
        raise ValueError(f"{name} must be {interval}, got {value!r}")
    return out


def _names(value: object, name: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a feature name or a list of them, got {value!r}")
    out = tuple(value)
    if not out or not all(isinstance(v, str) and v for v in out):
        raise ValueError(f"{name} must be a non-empty list of feature names, got {value!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"{name} lists a feature twice: {list(out)}")
    return out


def _label(value: object, name: str) -> Any:
    if isinstance(value, (list, tuple, dict, set, np.ndarray)) or value is None:
        raise TypeError(f"{name} must be a single label value, got {value!r}")
    return value


class Constraint:
    """Base of the constraint vocabulary: a frozen value with a short ``kind``.

    Subclasses implement :meth:`_rows` (their :class:`LinearRows` on a dataset); a constraint
    that is not linear in that sense (:class:`MinLeafSupport`) is handled by :func:`resolve`.
    """

    kind = "constraint"

    def describe(self) -> str:
        """One line for messages and summaries."""
        return repr(self)

    def _rows(self, ctx: _Context) -> LinearRows:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class MinLeafSupport(Constraint):
    """Every leaf receives at least ``weight`` of training weight (or ``share`` of the total).

    Exactly one of the two is given. Rows of weight 0 count nothing; a leaf no positive-weight
    row reaches violates any positive support.
    """

    weight: float | None = None
    share: float | None = None
    kind = "min_leaf_support"

    def __post_init__(self) -> None:
        if (self.weight is None) == (self.share is None):
            raise TypeError("MinLeafSupport takes exactly one of weight= and share=")
        if self.weight is not None:
            weight = _number(self.weight, "weight")
            if math.isinf(weight):
                # no leaf meets it: a finite weight above the total says "infeasible" instead
                raise ValueError(f"weight must be a finite number >= 0, got {self.weight!r}")
            object.__setattr__(self, "weight", weight)
        else:
            object.__setattr__(self, "share", _number(self.share, "share", maximum=1.0))

    def min_weight(self, total_weight: float) -> float:
        if self.weight is not None:
            return float(self.weight)
        assert self.share is not None  # exactly one is given (__post_init__)
        return float(self.share) * total_weight

    def describe(self) -> str:
        if self.weight is not None:
            return f"min-leaf-weight={self.weight:g}"
        return f"min-leaf-share={self.share:g}"


@dataclass(frozen=True)
class MaxLeaves(Constraint):
    """The tree has at most ``k`` leaves (``k >= 1``)."""

    k: int
    kind = "max_leaves"

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, Integral):
            raise TypeError(f"k must be an integer, got {type(self.k).__name__}")
        if self.k < 1:
            raise ValueError(f"k must be >= 1, got {self.k}")
        object.__setattr__(self, "k", int(self.k))

    def describe(self) -> str:
        return f"max-leaves={self.k}"

    def _rows(self, ctx: _Context) -> LinearRows:
        return ctx.rows(self, (f"leaves <= {self.k}",), per_leaf=np.ones(1), upper=[self.k])


@dataclass(frozen=True)
class FeatureBudget(Constraint):
    """The summed cost of the splits (``per="split"``) or of the distinct features the tree
    tests (``per="feature"``) stays within ``budget``.

    ``costs`` is one number (every feature costs the same: ``FeatureBudget(1, 3,
    per="feature")`` is "at most 3 features"), or a mapping from feature names to costs
    (features not named cost 0). A name is a binary feature of the dataset or, for a dataset
    binarized from a table, a raw column: all its binary features, counted once per
    ``"feature"`` (testing ``age`` at three thresholds uses one feature).
    """

    costs: Any
    budget: float
    per: str = "split"
    kind = "feature_budget"

    def __post_init__(self) -> None:
        if self.per not in ("split", "feature"):
            raise ValueError(f"per must be 'split' or 'feature', got {self.per!r}")
        object.__setattr__(self, "budget", _number(self.budget, "budget"))
        costs = self.costs
        if isinstance(costs, Mapping):
            if not costs:
                raise ValueError("costs must name at least one feature")
            checked = {}
            for key, value in costs.items():
                if not isinstance(key, str) or not key:
                    raise TypeError(f"costs keys must be feature names, got {key!r}")
                checked[key] = _number(value, f"costs[{key!r}]")
            object.__setattr__(self, "costs", tuple(sorted(checked.items())))
        else:
            object.__setattr__(self, "costs", _number(costs, "costs"))

    def describe(self) -> str:
        costs = self.costs if isinstance(self.costs, float) else dict(self.costs)
        return f"feature-budget(costs={costs}, budget={self.budget:g}, per={self.per})"

    def _rows(self, ctx: _Context) -> LinearRows:
        label = (f"{self.per} cost <= {self.budget:g}",)
        if isinstance(self.costs, float):
            groups = ctx.all_groups()
            cost = np.full(len(groups), self.costs)
        else:
            groups = [ctx.group(name, "costs") for name, _ in self.costs]
            cost = np.array([c for _, c in self.costs])
        if self.per == "split":
            per_split = np.zeros(ctx.n_features)
            for g, c in zip(groups, cost, strict=True):
                per_split[g] += c
            return ctx.rows(self, label, per_split=per_split[None, :], upper=[self.budget])
        return ctx.rows(self, label, groups=groups, per_group=cost[None, :], upper=[self.budget])


@dataclass(frozen=True)
class ForbidFeatures(Constraint):
    """The tree never tests these features (binary feature names or raw columns)."""

    features: Any
    kind = "forbid_features"

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", _names(self.features, "features"))

    def describe(self) -> str:
        return f"forbid={','.join(self.features)}"

    def forbidden(self, ctx: _Context) -> np.ndarray:
        mask = np.zeros(ctx.n_features, dtype=bool)
        for name in self.features:
            mask[ctx.group(name, "features")] = True
        return mask

    def _rows(self, ctx: _Context) -> LinearRows:
        per_split = self.forbidden(ctx).astype(float)[None, :]
        return ctx.rows(self, ("forbidden splits <= 0",), per_split=per_split, upper=[0.0])


@dataclass(frozen=True)
class RequireFeatures(Constraint):
    """The tree tests each of these features (a binary feature, or any binary feature of a
    raw column) at least once, at a split both of whose sides receive training weight."""

    features: Any
    kind = "require_features"

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", _names(self.features, "features"))

    def describe(self) -> str:
        return f"require={','.join(self.features)}"

    def _rows(self, ctx: _Context) -> LinearRows:
        per_split = np.zeros((len(self.features), ctx.n_features))
        for r, name in enumerate(self.features):
            per_split[r, ctx.group(name, "features")] = 1.0
        labels = tuple(f"splits on {name} >= 1" for name in self.features)
        return ctx.rows(self, labels, per_split=per_split, lower=np.ones(len(labels)))


@dataclass(frozen=True)
class ClassRecall(Constraint):
    """The weighted share of the rows of class ``cls`` predicted ``cls`` is at least
    ``at_least`` (recall, or the true positive rate of ``cls``)."""

    cls: Any
    at_least: float
    kind = "class_recall"

    def __post_init__(self) -> None:
        object.__setattr__(self, "cls", _label(self.cls, "cls"))
        object.__setattr__(self, "at_least", _number(self.at_least, "at_least", maximum=1.0))

    def describe(self) -> str:
        return f"recall[{self.cls}]>={self.at_least:g}"

    def _rows(self, ctx: _Context) -> LinearRows:
        k = ctx.class_code(self.cls, "cls")
        rows = ctx.y == k
        A = ctx.prediction_rows([(rows, k, ctx.w[rows] / ctx.class_weight(rows, "cls"))])
        label = (f"recall of {self.cls!r} >= {self.at_least:g}",)
        return ctx.rows(self, label, prediction=A, lower=[self.at_least])


@dataclass(frozen=True)
class FalsePositiveRate(Constraint):
    """The weighted share of the rows *not* of class ``cls`` predicted ``cls`` is at most
    ``at_most``."""

    cls: Any
    at_most: float
    kind = "false_positive_rate"

    def __post_init__(self) -> None:
        object.__setattr__(self, "cls", _label(self.cls, "cls"))
        object.__setattr__(self, "at_most", _number(self.at_most, "at_most", maximum=1.0))

    def describe(self) -> str:
        return f"fpr[{self.cls}]<={self.at_most:g}"

    def _rows(self, ctx: _Context) -> LinearRows:
        k = ctx.class_code(self.cls, "cls")
        rows = ctx.y != k
        A = ctx.prediction_rows([(rows, k, ctx.w[rows] / ctx.class_weight(rows, "cls"))])
        label = (f"false positive rate of {self.cls!r} <= {self.at_most:g}",)
        return ctx.rows(self, label, prediction=A, upper=[self.at_most])


@dataclass(frozen=True)
class Predict(Constraint):
    """The named training rows (positions ``0..n-1``) are predicted ``cls``."""

    rows: Any
    cls: Any
    kind = "predict"

    def __post_init__(self) -> None:
        rows = np.asarray(self.rows)
        if rows.ndim == 0:
            rows = rows.reshape(1)
        if rows.ndim != 1 or rows.size == 0 or rows.dtype.kind not in "iu":
            raise ValueError(f"rows must be a non-empty list of row positions, got {self.rows!r}")
        if (rows < 0).any() or np.unique(rows).size != rows.size:
            raise ValueError("rows must be distinct non-negative row positions")
        object.__setattr__(self, "rows", tuple(int(r) for r in rows))
        object.__setattr__(self, "cls", _label(self.cls, "cls"))

    def describe(self) -> str:
        shown = ",".join(map(str, self.rows[:5])) + ("..." if len(self.rows) > 5 else "")
        return f"predict[{shown}]={self.cls}"

    def _rows(self, ctx: _Context) -> LinearRows:
        k = ctx.class_code(self.cls, "cls")
        rows = np.array(self.rows)
        if rows.max() >= ctx.n_samples:
            raise ValueError(f"rows: position {rows.max()} is past the dataset's {ctx.n_samples}")
        if (ctx.w[rows] <= 0).any():
            raise ValueError(
                f"rows: row {rows[ctx.w[rows] <= 0][0]} has weight 0, and solvers leave "
                "weight-0 rows out"
            )
        m = rows.size
        A = sp.csr_matrix(
            (np.ones(m), (np.arange(m), rows * ctx.n_classes + k)),
            shape=(m, ctx.n_samples * ctx.n_classes),
        )
        labels = tuple(f"row {r} predicted {self.cls!r}" for r in rows)
        return ctx.rows(self, labels, prediction=A, lower=np.ones(m))


def _fairness_rows(fairness: Fairness, ctx: _Context) -> tuple[LinearRows, FairnessGroups]:
    groups = fairness.groups(ctx.dataset)
    coef = groups.coefficients
    i_nz, j_nz = np.nonzero(coef)
    A = sp.csr_matrix(
        (coef[i_nz, j_nz], (j_nz, i_nz * ctx.n_classes + groups.positive_code)),
        shape=(groups.n_pairs, ctx.n_samples * ctx.n_classes),
    )
    delta = np.full(groups.n_pairs, groups.delta)
    labels = tuple(f"{fairness.notion} {pair.name}" for pair in groups.pairs)
    return ctx.rows(fairness, labels, prediction=A, lower=-delta, upper=delta), groups


# ------------------------------------------------------------------------------------------
# the resolved form


@dataclass(frozen=True, eq=False)
class LinearRows:
    """One constraint's rows in the linear form of the module docstring.

    Attributes
    ----------
    constraint : Constraint or Fairness
        What the rows state.
    name : str
        The block name (``constraint.kind``, numbered when a kind occurs twice).
    labels : tuple of str
        One description per row.
    prediction : scipy.sparse.csr_matrix, shape (m, n_samples * n_classes)
        :math:`A`: column ``i * n_classes + k`` is the coefficient of "row i is predicted k".
    per_leaf : ndarray, shape (m,)
    per_split : ndarray, shape (m, n_features)
    groups : tuple of int arrays
        The feature groups :math:`C` counts (each a set of binary feature indices).
    per_group : ndarray, shape (m, len(groups))
    lower, upper : ndarray, shape (m,)
        Bounds (``-inf`` / ``inf`` where absent).
    """

    constraint: Any
    name: str
    labels: tuple[str, ...]
    prediction: sp.csr_matrix = field(repr=False)
    per_leaf: np.ndarray = field(repr=False)
    per_split: np.ndarray = field(repr=False)
    groups: tuple[np.ndarray, ...] = field(repr=False)
    per_group: np.ndarray = field(repr=False)
    lower: np.ndarray = field(repr=False)
    upper: np.ndarray = field(repr=False)

    @property
    def n_rows(self) -> int:
        return len(self.labels)

    @property
    def reads_predictions(self) -> bool:
        return bool(self.prediction.nnz)

    def values(self, tree: Tree, dataset: Dataset) -> np.ndarray:
        """The rows' middle terms for ``tree`` on the training rows of ``dataset``.

        Splits and tested groups count only *effective* splits, both of whose sides receive
        positive training weight (the only splits a returned tree has).
        """
        X = dataset.X
        n, K = X.shape[0], dataset.n_classes
        onehot = np.zeros(n * K)
        onehot[np.arange(n) * K + tree.predict(X)] = 1.0
        effective = effective_splits(tree, X[dataset.weights > 0])
        splits = np.bincount(
            np.asarray(effective, dtype=np.int64), minlength=self.per_split.shape[1]
        ).astype(float)
        used = set(effective)
        tested = np.array([any(int(j) in used for j in g) for g in self.groups], dtype=float)
        out: np.ndarray = (
            self.prediction @ onehot
            + self.per_leaf * tree.n_leaves
            + self.per_split @ splits
            + (self.per_group @ tested if self.groups else 0.0)
        )
        return out

    def violated(self, tree: Tree, dataset: Dataset) -> list[str]:
        """Descriptions of the rows ``tree`` breaks (beyond :data:`CONSTRAINT_TOLERANCE`)."""
        values = self.values(tree, dataset)
        out = []
        for label, v, lo, hi in zip(self.labels, values, self.lower, self.upper, strict=True):
            below = v < lo - CONSTRAINT_TOLERANCE * max(1.0, abs(lo))
            above = v > hi + CONSTRAINT_TOLERANCE * max(1.0, abs(hi))
            if below or above:
                out.append(f"{self.name}: {label} (value {v:.10g})")
        return out


def effective_splits(tree: Tree, X: np.ndarray) -> list[int]:
    """The feature of every split of ``tree`` both of whose sides receive a row of ``X`` (the
    positive-weight training rows), in pre-order."""
    out = []
    for node, rows in zip(tree._preorder(), tree.node_rows(X), strict=True):
        if node.feature is not None:
            right = X[rows, node.feature]
            if right.any() and not right.all():
                out.append(node.feature)
    return out


@dataclass(frozen=True, eq=False)
class ResolvedConstraints:
    """A list of constraints resolved against one dataset: what every solver reads.

    Attributes
    ----------
    constraints : tuple
        As given (:class:`Constraint` values and :class:`~odtkit.fairness.Fairness`).
    blocks : tuple of LinearRows
        One per constraint except :class:`MinLeafSupport`, in order.
    min_leaf_weight : float
        The largest minimum leaf support (``0`` when none is stated).
    fairness : tuple of FairnessGroups
        Each :class:`~odtkit.fairness.Fairness` resolved (also a block).
    forbidden : ndarray of bool, shape (n_features,)
        Binary features some :class:`ForbidFeatures` forbids.
    n_samples, n_features, n_classes : int
    total_weight : float
    losses : ndarray, shape (n_samples, n_classes), or None
        The cost objective's losses (:mod:`odtkit.costs`): predicting class ``k`` for row ``i``
        costs ``losses[i, k]`` in place of a misclassified weight; None for the plain
        objective.
    """

    constraints: tuple[Any, ...]
    blocks: tuple[LinearRows, ...]
    min_leaf_weight: float
    fairness: tuple[FairnessGroups, ...]
    forbidden: np.ndarray = field(repr=False)
    n_samples: int = 0
    n_features: int = 0
    n_classes: int = 0
    total_weight: float = 0.0
    losses: np.ndarray | None = field(default=None, repr=False)

    @property
    def cost(self) -> Costs | None:
        """The cost objective stated (:mod:`odtkit.costs`), None for the plain one."""
        return next((c for c in self.constraints if isinstance(c, Costs)), None)

    @property
    def side_constraints(self) -> tuple[Any, ...]:
        """The constraints proper: everything stated but the cost objective."""
        return tuple(c for c in self.constraints if not isinstance(c, Costs))

    def __bool__(self) -> bool:
        return bool(self.constraints)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(_kind(c) for c in self.constraints)

    @property
    def keeps_equal_leaves(self) -> bool:
        """Whether a split whose two leaves predict the same class must be kept: only a
        :class:`RequireFeatures` can need one."""
        return any(isinstance(c, RequireFeatures) for c in self.constraints)

    def canonical(self, tree: Tree, X: np.ndarray) -> Tree:
        """The tree a solver returns for ``tree`` on its (positive-weight) rows ``X``: empty
        sides pruned, and equal leaves merged unless :attr:`keeps_equal_leaves`."""
        return tree.canonical(X, merge=not self.keeps_equal_leaves)

    def leaf_weights(self, tree: Tree, dataset: Dataset) -> np.ndarray:
        """Training weight reaching each leaf (pre-order; 0 for a leaf no row reaches)."""
        leaf = tree.apply(dataset.X)
        return np.bincount(leaf, weights=dataset.weights, minlength=tree.n_leaves)

    def violations(self, tree: Tree, dataset: Dataset) -> list[str]:
        """Every constraint ``tree`` breaks on ``dataset``, one line each ([] when none)."""
        dataset = check_dataset(dataset)
        if dataset.n_samples != self.n_samples:
            raise ValueError("the constraints were resolved against another dataset")
        out: list[str] = []
        if self.min_leaf_weight > 0:
            support = self.leaf_weights(tree, dataset).min()
            floor = self.min_leaf_weight
            if support < floor - CONSTRAINT_TOLERANCE * max(1.0, floor):
                out.append(
                    f"min_leaf_support: a leaf receives weight {support:.10g} < {floor:.10g}"
                )
        for block in self.blocks:
            out.extend(block.violated(tree, dataset))
        return out

    def satisfied_by(self, tree: Tree, dataset: Dataset) -> bool:
        return not self.violations(tree, dataset)

    def obvious_infeasibility(self) -> str:
        """A constraint no tree can meet, found without search ("" when none is found)."""
        if self.min_leaf_weight > self.total_weight * (1 + CONSTRAINT_TOLERANCE):
            return (
                f"min_leaf_support: {self.min_leaf_weight:g} exceeds the total weight "
                f"{self.total_weight:g}, so no leaf can meet it"
            )
        for c in self.constraints:
            if isinstance(c, RequireFeatures):
                clash = [f for f in c.features if f in self._forbidden_names()]
                if clash:
                    return f"require_features: {clash[0]!r} is also forbidden"
        predicted: dict[int, Any] = {}
        for c in self.constraints:
            if isinstance(c, Predict):
                for r in c.rows:
                    if predicted.setdefault(r, c.cls) != c.cls:
                        both = f"{predicted[r]!r} and {c.cls!r}"
                        return f"predict: row {r} must be predicted both {both}"
        leaves = [c.k for c in self.constraints if isinstance(c, MaxLeaves)]
        required = sum(len(c.features) for c in self.constraints if isinstance(c, RequireFeatures))
        if leaves and required > min(leaves) - 1:
            return (
                f"max_leaves: {min(leaves)} leaves allow {min(leaves) - 1} splits, fewer than "
                f"the {required} required features"
            )
        return ""

    def _forbidden_names(self) -> set[str]:
        return {f for c in self.constraints if isinstance(c, ForbidFeatures) for f in c.features}

    @property
    def descriptions(self) -> tuple[str, ...]:
        """One line per stated constraint (and cost objective), in order."""
        return tuple(_describe(c) for c in self.constraints)

    def describe(self) -> str:
        return ", ".join(self.descriptions)


def _kind(c: Any) -> str:
    return "fairness" if isinstance(c, Fairness) else str(c.kind)


def _describe(c: Any) -> str:
    if isinstance(c, Fairness):
        return f"fairness({c.notion}, delta={c.delta:g})"
    return str(c.describe())


class _Context:
    """A dataset and its feature groups, while constraints are resolved against it."""

    def __init__(self, dataset: Dataset, sources: Sequence[str] | None) -> None:
        self.dataset = dataset
        self.n_samples, self.n_features = dataset.X.shape
        self.n_classes = dataset.n_classes
        self.y = dataset.y
        self.w = dataset.weights
        names = tuple(dataset.feature_names)
        if sources is None:
            sources = names
        sources = tuple(sources)
        if len(sources) != self.n_features:
            raise ValueError(
                f"sources has {len(sources)} entries but the dataset has {self.n_features} features"
            )
        self.names, self.sources = names, sources
        self._seen: dict[str, int] = {}

    def group(self, name: str, argument: str) -> np.ndarray:
        """The binary features ``name`` stands for: a raw column's, or one binary feature."""
        by_source = [j for j, s in enumerate(self.sources) if s == name]
        if by_source:
            return np.array(by_source, dtype=np.int64)
        if name in self.names:
            return np.array([self.names.index(name)], dtype=np.int64)
        shown = sorted(set(self.sources))
        more = "..." if len(shown) > 12 else ""
        raise ValueError(
            f"{argument}: {name!r} is neither a feature nor a column of the data "
            f"(columns: {shown[:12]}{more})"
        )

    def all_groups(self) -> list[np.ndarray]:
        """Every raw column's binary features (one group per column, in column order)."""
        order = list(dict.fromkeys(self.sources))
        return [np.flatnonzero(np.array(self.sources) == s) for s in order]

    def class_code(self, label: Any, argument: str) -> int:
        classes = list(self.dataset.classes)
        for k, c in enumerate(classes):
            if c == label:
                return k
        if isinstance(label, str):
            # a label given as text (the CLI's syntax, odtkit.constraints.parse) matches the
            # class whose text is the same: "1" is the class 1 of integer labels
            same = [k for k, c in enumerate(classes) if str(c) == label]
            if len(same) == 1:
                return same[0]
        raise ValueError(f"{argument}={label!r} is not a label of the dataset (labels: {classes})")

    def class_weight(self, rows: np.ndarray, argument: str) -> float:
        total = float(self.w[rows].sum())
        if total <= 0:
            raise ValueError(f"{argument}: the rate is undefined, its rows have no weight")
        return total

    def prediction_rows(self, parts: list[tuple[np.ndarray, int, np.ndarray]]) -> sp.csr_matrix:
        """One row per part: coefficient ``values`` on (rows, class k)."""
        K = self.n_classes
        r_idx, c_idx, vals = [], [], []
        for r, (rows, k, values) in enumerate(parts):
            idx = np.flatnonzero(rows)
            r_idx.append(np.full(idx.size, r))
            c_idx.append(idx * K + k)
            vals.append(values)
        return sp.csr_matrix(
            (np.concatenate(vals), (np.concatenate(r_idx), np.concatenate(c_idx))),
            shape=(len(parts), self.n_samples * K),
        )

    def rows(
        self,
        constraint: Any,
        labels: tuple[str, ...],
        *,
        prediction: sp.csr_matrix | None = None,
        per_leaf: np.ndarray | None = None,
        per_split: np.ndarray | None = None,
        groups: Sequence[np.ndarray] = (),
        per_group: np.ndarray | None = None,
        lower: Any = None,
        upper: Any = None,
    ) -> LinearRows:
        m = len(labels)
        kind = _kind(constraint)
        count = self._seen.get(kind, 0)
        self._seen[kind] = count + 1
        name = kind if count == 0 else f"{kind}_{count + 1}"
        shape = (m, self.n_samples * self.n_classes)
        return LinearRows(
            constraint=constraint,
            name=name,
            labels=labels,
            prediction=sp.csr_matrix(shape) if prediction is None else sp.csr_matrix(prediction),
            per_leaf=np.zeros(m) if per_leaf is None else np.asarray(per_leaf, dtype=float),
            per_split=np.zeros((m, self.n_features)) if per_split is None else per_split,
            groups=tuple(groups),
            per_group=np.zeros((m, len(groups))) if per_group is None else per_group,
            lower=np.full(m, -np.inf) if lower is None else np.asarray(lower, dtype=float),
            upper=np.full(m, np.inf) if upper is None else np.asarray(upper, dtype=float),
        )


_VOCABULARY = (
    "Fairness, MinLeafSupport, MaxLeaves, FeatureBudget, ForbidFeatures, RequireFeatures, "
    "ClassRecall, FalsePositiveRate, Predict; at most one cost objective of odtkit.costs: "
    "CostMatrix, BalancedError, RowCosts"
)
_STATED = (Constraint, Fairness, Costs)


def check_constraints(constraints: Any) -> tuple[Any, ...]:
    """``constraints`` as a tuple of vocabulary values (None or [] is no constraint); a
    TypeError names anything else."""
    if constraints is None:
        return ()
    if isinstance(constraints, ResolvedConstraints):
        return constraints.constraints
    if isinstance(constraints, _STATED):
        return (constraints,)
    if isinstance(constraints, (str, bytes)) or not isinstance(constraints, Iterable):
        raise TypeError(
            f"constraints must be a list of constraints ({_VOCABULARY}), got {constraints!r}"
        )
    out = tuple(constraints)
    for c in out:
        if not isinstance(c, _STATED):
            raise TypeError(
                f"constraints: {c!r} is not a constraint (one of {_VOCABULARY} from "
                "odtkit.constraints)"
            )
    if sum(isinstance(c, Costs) for c in out) > 1:
        raise ValueError("constraints: state at most one cost objective (odtkit.costs)")
    return out


def resolve(
    constraints: Any, dataset: Dataset, *, sources: Sequence[str] | None = None
) -> ResolvedConstraints:
    """Resolve ``constraints`` once against ``dataset``.

    Parameters
    ----------
    constraints : list of constraints, a single one, None, or a ResolvedConstraints
        A :class:`ResolvedConstraints` is returned as it is after checking it belongs to
        ``dataset`` (its row and feature counts).
    dataset : Dataset
    sources : sequence of str, optional
        The raw column each binary feature was computed from (a binarized table's
        ``FeatureSpec.source``), so a constraint can name a raw column. Default: each feature
        is its own column.
    """
    dataset = check_dataset(dataset)
    if isinstance(constraints, ResolvedConstraints):
        if (constraints.n_samples, constraints.n_features) != dataset.X.shape:
            raise ValueError("constraints were resolved against another dataset")
        return constraints
    given = check_constraints(constraints)
    ctx = _Context(dataset, sources)
    blocks: list[LinearRows] = []
    fairness: list[FairnessGroups] = []
    min_leaf = 0.0
    forbidden = np.zeros(ctx.n_features, dtype=bool)
    losses = None
    for c in given:
        if isinstance(c, Costs):
            losses = c.losses(dataset)
            losses.setflags(write=False)
            continue
        if isinstance(c, MinLeafSupport):
            min_leaf = max(min_leaf, c.min_weight(dataset.total_weight))
            continue
        if isinstance(c, Fairness):
            block, groups = _fairness_rows(c, ctx)
            fairness.append(groups)
            blocks.append(block)
            continue
        if isinstance(c, ForbidFeatures):
            forbidden |= c.forbidden(ctx)
        blocks.append(c._rows(ctx))
    forbidden.setflags(write=False)
    return ResolvedConstraints(
        constraints=given,
        blocks=tuple(blocks),
        min_leaf_weight=min_leaf,
        fairness=tuple(fairness),
        forbidden=forbidden,
        n_samples=ctx.n_samples,
        n_features=ctx.n_features,
        n_classes=ctx.n_classes,
        total_weight=dataset.total_weight,
        losses=losses,
    )


# ------------------------------------------------------------------------------------------
# the command line's syntax

#: The one description of :func:`parse`'s syntax (the CLI's ``--constraint`` help prints it).
SYNTAX = """\
min-leaf-share=S              every leaf receives >= S of the total training weight (0..1)
min-leaf-weight=W             every leaf receives >= W of training weight
max-leaves=K                  at most K leaves
max-features=K                at most K distinct features (raw columns) tested
max-splits=K                  at most K splits
feature-budget=B:NAME=C,...   distinct features tested cost <= B (features not named cost 0)
feature-budget=B:C            the same, every feature costing C
split-budget=B:NAME=C,...     the splits' summed cost <= B (split-budget=B:C: each costs C)
forbid=NAME,...               never test these features (raw columns or binary features)
require=NAME,...              test each of these at least once
recall:CLASS>=R               recall of CLASS >= R (quote it: the shell reads > as a redirect)
fpr:CLASS<=R                  false positive rate of CLASS <= R (quote it)
predict:ROW,...=CLASS         these training rows (positions from 0) are predicted CLASS"""


def parse(text: str) -> Constraint:
    """One constraint from its text form: the CLI's ``--constraint`` syntax.

    ::

        {SYNTAX}

    A NAME is a raw column of the table or one binary feature (resolved with the dataset,
    :func:`resolve`); it holds no comma, and a cost is read after its last ``=`` (so
    ``age<=40.5=2`` costs the binary feature ``age<=40.5`` 2). A CLASS is kept as text: it
    matches the label whose text is the same when resolved. Blanks around parts are ignored.
    ``max-features=K`` is ``FeatureBudget(1, K, per="feature")``, ``max-splits=K`` is
    ``FeatureBudget(1, K, per="split")``. Fairness has its own flags (``--fairness``).

    Raises
    ------
    ValueError
        Naming the part of ``text`` that is wrong (an unknown key, a number that is not one, a
        value out of range).
    """
    if not isinstance(text, str):
        raise TypeError(f"a constraint's text must be a string, got {type(text).__name__}")
    stripped = text.strip()
    try:
        return _parse(stripped)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"constraint {text!r}: {exc}") from None


if parse.__doc__ is not None:  # None under python -OO
    parse.__doc__ = parse.__doc__.replace("{SYNTAX}", "\n        ".join(SYNTAX.splitlines()))


_PREFIXED = ("recall:", "fpr:", "predict:")
_KEYS = (
    "min-leaf-share",
    "min-leaf-weight",
    "max-leaves",
    "max-features",
    "max-splits",
    "feature-budget",
    "split-budget",
    "forbid",
    "require",
)


def _parse(text: str) -> Constraint:
    head = text.split(":", 1)[0].strip().lower() + ":"
    if head in _PREFIXED:
        body = text.split(":", 1)[1]
        if head == "recall:":
            cls, value = _split_once(body, ">=", "recall:CLASS>=R")
            return ClassRecall(cls, at_least=_float(value, "R"))
        if head == "fpr:":
            cls, value = _split_once(body, "<=", "fpr:CLASS<=R")
            return FalsePositiveRate(cls, at_most=_float(value, "R"))
        rows, cls = body.split("=", 1) if "=" in body else (body, "")
        if not cls.strip():
            raise ValueError("expected predict:ROW,...=CLASS")
        return Predict([_int(r, "ROW") for r in _items(rows, "ROW")], cls.strip())
    if "=" not in text:
        raise ValueError(f"expected KEY=VALUE or one of {', '.join(_PREFIXED)}; keys: {_KEYS}")
    key, value = (part.strip() for part in text.split("=", 1))
    key = key.lower()
    if key == "min-leaf-share":
        return MinLeafSupport(share=_float(value, "S"))
    if key == "min-leaf-weight":
        return MinLeafSupport(weight=_float(value, "W"))
    if key == "max-leaves":
        return MaxLeaves(_int(value, "K"))
    if key in ("max-features", "max-splits"):
        per = "feature" if key == "max-features" else "split"
        return FeatureBudget(1, _int(value, "K"), per=per)
    if key in ("feature-budget", "split-budget"):
        per = "feature" if key == "feature-budget" else "split"
        budget, costs = _split_once(value, ":", f"{key}=B:NAME=C,... or {key}=B:C")
        if "=" not in costs:
            return FeatureBudget(_float(costs, "C"), _float(budget, "B"), per=per)
        named: dict[str, float] = {}
        for item in _items(costs, "NAME=C"):
            if "=" not in item:
                raise ValueError(f"{item!r}: expected NAME=C")
            name, cost = (part.strip() for part in item.rsplit("=", 1))
            if name in named:
                raise ValueError(f"{name!r} is given two costs")
            named[name] = _float(cost, f"the cost of {name!r}")
        return FeatureBudget(named, _float(budget, "B"), per=per)
    if key == "forbid":
        return ForbidFeatures(list(_items(value, "NAME")))
    if key == "require":
        return RequireFeatures(list(_items(value, "NAME")))
    raise ValueError(f"unknown key {key!r}; keys: {', '.join(_KEYS + _PREFIXED)}")


def _split_once(text: str, sep: str, form: str) -> tuple[str, str]:
    if sep not in text:
        raise ValueError(f"expected {form}")
    left, right = text.rsplit(sep, 1) if sep != ":" else text.split(sep, 1)
    if not left.strip() or not right.strip():
        raise ValueError(f"expected {form}")
    return left.strip(), right.strip()


def _items(text: str, what: str) -> tuple[str, ...]:
    items = tuple(part.strip() for part in text.split(","))
    if not items or not all(items):
        raise ValueError(f"expected a comma-separated list of {what}, got {text.strip()!r}")
    return items


def _float(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{what} must be a number, got {text.strip()!r}") from None


def _int(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(f"{what} must be an integer, got {text.strip()!r}") from None

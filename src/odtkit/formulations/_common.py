"""Shared machinery of the tree formulations: heap numbering, row aggregation, embedding and
the :class:`TreeFormulation` base (stateless ``build / decode / start / evaluate``).

Heap numbering (docs/formulations-trees.md §1.2): root 1, children ``2u`` (x = 0) and ``2u + 1``
(x = 1); branch nodes ``1 .. 2^D - 1``, leaves ``2^D .. 2^(D+1) - 1``, ``depth(u) =
floor(log2 u)``. Arrays indexed by heap node have length ``2^(D+1)`` and ignore entry 0.
"""

from __future__ import annotations

import dataclasses
import hashlib
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import numpy as np

from odtkit import metrics
from odtkit._limits import check_deadline
from odtkit._validation import check_depth, check_lambda, scale_weights
from odtkit.constraints import ResolvedConstraints, check_constraints, resolve
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset, unique_rows
from odtkit.fairness import FAIRNESS_TOLERANCE, Fairness, FairnessGroups
from odtkit.formulations._base import (
    Formulation,
    FormulationMeta,
    check_built_by,
    solution_values,
)
from odtkit.formulations.constraints import ModelConstraints, model_constraints
from odtkit.formulations.fairness import FairRows, check_fairness
from odtkit.model import Model, ModelBuilder
from odtkit.tree import Tree

NO_FEATURE = -1


# ---------------------------------------------------------------------------------------------
# heap numbering
# ---------------------------------------------------------------------------------------------
def branch_nodes(depth: int) -> np.ndarray:
    """Heap indices of the branch nodes ``1 .. 2^D - 1``."""
    return np.arange(1, 2**depth, dtype=np.int64)


def node_depth(nodes: np.ndarray) -> np.ndarray:
    """``floor(log2 u)`` for heap indices ``u >= 1`` (exact integer arithmetic)."""
    nodes = np.asarray(nodes, dtype=np.int64)
    out = np.zeros(nodes.shape, dtype=np.int64)
    v = nodes.copy()
    while np.any(v > 1):
        more = v > 1
        out[more] += 1
        v[more] >>= 1
    return out


def subtree_leaf_ranges(nodes: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For branch nodes ``u``: (first left leaf, first right leaf, number of leaves per side).

    ``L_L(u) = [left, left + size)`` and ``L_R(u) = [right, right + size)`` as heap indices.
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    size = 2 ** (depth - node_depth(nodes) - 1)
    return 2 * nodes * size, (2 * nodes + 1) * size, size


def ancestor_pairs(nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All (node, strict ancestor) pairs of the given heap nodes, as two aligned arrays."""
    nodes = np.asarray(nodes, dtype=np.int64)
    d = node_depth(nodes)
    rep = np.repeat(nodes, d)
    # level offsets 1..depth(u) for each node
    offsets = np.arange(rep.size) - np.repeat(np.cumsum(d) - d, d) + 1
    return rep, rep >> offsets


# ---------------------------------------------------------------------------------------------
# data preparation
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RowData:
    """The rows a formulation is built on: distinct (x, y) pairs with summed weights.

    Identical (x, y) rows are routed identically by every tree, so merging them into one weighted
    row changes no objective value and shrinks every row-indexed block of the models.
    """

    X: np.ndarray  # bool (m, p)
    y: np.ndarray  # int64 (m,)
    weight: np.ndarray  # float (m,)
    total_weight: float
    n_classes: int
    n_features: int
    source: np.ndarray  # int64 (n_samples,): the row each data row is merged into, -1 if dropped

    @property
    def n_rows(self) -> int:
        """Distinct weighted rows after merging: at most the data's ``n_samples`` (the
        scikit-learn name the package uses for data rows), hence a name of its own."""
        return int(self.X.shape[0])


#: Mean row weight above which integer weights are rescaled to mean 1 even though that makes
#: them fractional.
LARGE_MEAN_WEIGHT = 1e4


def _weight_scale(weight: np.ndarray) -> float:
    """One factor for every row weight the models see (the objective is normalized by the total
    weight, so it changes no optimum).

    Raw weights of 1e6 made big-M rows (bounds of the total weight) that HiGHS solved wrongly
    (issue 16: 31 of 40 RBinOCT instances at x1e6, 40 of 40 at x1e7 came back with a
    contradicted certificate). Weights that are integer multiples of one base (integers: their
    greatest common divisor; else the smallest weight) are divided by it, which makes them
    small integers (BinOCT's bound rounds integral error counts up); other weights, and any
    whose mean is still above ``LARGE_MEAN_WEIGHT``, are brought to mean 1.
    """
    if weight.size == 0 or weight.sum() <= 0:
        return 1.0
    to_mean_one = weight.size / weight.sum()
    if np.all(weight == np.round(weight)) and weight.max() < 2**62:
        scale = 1.0 / float(np.gcd.reduce(weight.astype(np.int64)))
    else:
        ratios = weight / weight.min()
        integral = np.all(np.abs(ratios - np.round(ratios)) <= 1e-9 * ratios)
        scale = 1.0 / weight.min() if integral else to_mean_one
    return scale if weight.mean() * scale <= LARGE_MEAN_WEIGHT else to_mean_one


def row_data(dataset: Dataset, aggregate: bool = True) -> RowData:
    """Distinct (x, y) rows with summed weights (or every row when ``aggregate`` is False)."""
    X, y, w = dataset.X, dataset.y, dataset.weights.astype(float)
    if aggregate:
        first, inverse = unique_rows(X, y)
        weight = np.bincount(inverse, weights=w, minlength=first.size)
        keep = weight > 0
        X = X[first[keep]]
        y = y[first[keep]].astype(np.int64)
        weight = weight[keep]
        renumber = np.cumsum(keep) - 1
        source = np.where(keep[inverse], renumber[inverse], -1)
    else:
        keep = w > 0
        X, y, weight = X[keep], y[keep], w[keep]
        source = np.where(keep, np.cumsum(keep) - 1, -1)
    weight = scale_weights(weight)  # exact; subnormal weights made _weight_scale inf
    scale = _weight_scale(weight)
    return RowData(
        X=np.ascontiguousarray(X),
        y=np.ascontiguousarray(y),
        weight=weight * scale,
        total_weight=float(weight.sum() * scale),
        n_classes=int(dataset.n_classes),
        n_features=int(dataset.n_features),
        source=source.astype(np.int64),
    )


def data_key(dataset: Dataset) -> str:
    """A digest of ``dataset``'s X, y and weights: which data a model was built on.

    ``evaluate`` compares it so that a model is never checked against other data of the same
    shape (its bound would then certify nothing). Hashing packed bits costs far less than the
    build itself.
    """
    digest = hashlib.blake2b(digest_size=16)
    digest.update(np.asarray(dataset.X.shape, dtype=np.int64).tobytes())
    digest.update(np.packbits(dataset.X, axis=None).tobytes())
    digest.update(np.ascontiguousarray(dataset.y, dtype=np.int64).tobytes())
    if dataset.sample_weight is not None:
        digest.update(np.ascontiguousarray(dataset.sample_weight, dtype=float).tobytes())
    return digest.hexdigest()


#: The separation-pair search compares every pair of rows (O(m^2 p)): on more rows than this it
#: searches among this many of the heaviest rows only. The cuts are valid for any pair, so
#: fewer candidates only means fewer cuts (issue 16: 30,000 rows x 20 features spent 7 s of a
#: 7.2 s FlowOCT build in the search; 100,000 rows 90 s).
SEPARATION_SEARCH_ROWS = 4000


def separation_pairs(
    rows: RowData,
    max_distance: int,
    max_pairs: int | None = None,
    max_rows: int = SEPARATION_SEARCH_ROWS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of rows with different labels whose features differ in at most ``max_distance``.

    Returns ``(first, second, differ)``: row indices with ``first < second`` and the (pairs, p)
    boolean matrix of the features on which each pair differs. Pairs come closest first; with
    ``max_pairs`` only that many are kept (the closest, which give the strongest cuts).
    Hamming distances are computed in blocks of rows as ``X @ (1 - X).T + (1 - X) @ X.T`` so
    memory stays ``O(block * m)``. With more than ``max_rows`` rows only the ``max_rows``
    heaviest are searched, which bounds the work at ``O(max_rows^2 p)``.
    """
    X = rows.X
    m = X.shape[0]
    if m < 2 or max_distance < 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, X.shape[1]), bool)
    if m > max_rows:
        keep = np.sort(np.argsort(-rows.weight, kind="stable")[:max_rows])
        sub = dataclasses.replace(rows, X=X[keep], y=rows.y[keep], weight=rows.weight[keep])
        first, second, differ = separation_pairs(sub, max_distance, max_pairs, max_rows)
        return keep[first], keep[second], differ
    ones = X.astype(np.float32)
    zeros = 1.0 - ones
    block = max(1, min(m, 4_000_000 // max(m, 1)))
    firsts, seconds, dists = [], [], []
    for lo in range(0, m, block):
        check_deadline()  # O(m^2 p) in all: a compare's time limit includes it
        hi = min(m, lo + block)
        dist = ones[lo:hi] @ zeros.T + zeros[lo:hi] @ ones.T
        a, c = np.nonzero(
            (dist <= max_distance + 0.5)
            & (rows.y[lo:hi, None] != rows.y[None, :])
            & (np.arange(lo, hi)[:, None] < np.arange(m)[None, :])
        )
        firsts.append(a + lo)
        seconds.append(c)
        dists.append(dist[a, c])
    first, second, dist = np.concatenate(firsts), np.concatenate(seconds), np.concatenate(dists)
    order = np.argsort(dist, kind="stable")
    if max_pairs is not None:
        order = order[:max_pairs]
    first, second = first[order].astype(np.int64), second[order].astype(np.int64)
    return first, second, X[first] != X[second]


# ---------------------------------------------------------------------------------------------
# trees <-> heap arrays
# ---------------------------------------------------------------------------------------------
@dataclass
class HeapTree:
    """A tree of depth <= D in heap numbering: arrays of length ``2^(D+1)``.

    ``present[u]``: node ``u`` belongs to the tree; ``feature[u]``: tested feature of an internal
    node (``NO_FEATURE`` at leaves / absent nodes); ``label[u]``: class of a leaf (-1 otherwise).
    """

    depth: int
    present: np.ndarray
    feature: np.ndarray
    label: np.ndarray

    @property
    def is_leaf(self) -> np.ndarray:
        # annotated: numpy's stubs type ``&`` on ndarrays of unknown dtype as Any
        leaf: np.ndarray = self.present & (self.feature == NO_FEATURE)
        return leaf

    @property
    def is_internal(self) -> np.ndarray:
        internal: np.ndarray = self.present & (self.feature != NO_FEATURE)
        return internal


def split_of(node: Tree) -> tuple[int, Tree, Tree]:
    """``(feature, left, right)`` of an internal node (``Tree`` types them optional, since a
    leaf has none)."""
    if node.feature is None or node.left is None or node.right is None:
        raise ValueError("a leaf has no split")  # cannot happen: callers test is_leaf first
    return node.feature, node.left, node.right


def label_of(node: Tree) -> int:
    """The class of a leaf."""
    if node.label is None:
        raise ValueError("an internal node has no label")  # cannot happen, as above
    return node.label


def embed(tree: Tree, depth: int) -> HeapTree:
    """Heap arrays of ``tree`` (root at 1, children of ``u`` at ``2u`` / ``2u+1``)."""
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be an odtkit Tree, got {type(tree).__name__}")
    if tree.depth > depth:
        raise ValueError(f"tree has depth {tree.depth} but the model allows depth <= {depth}")
    size = 2 ** (depth + 1)
    present = np.zeros(size, dtype=bool)
    feature = np.full(size, NO_FEATURE, dtype=np.int64)
    label = np.full(size, -1, dtype=np.int64)
    stack = [(tree, 1)]
    while stack:
        node, u = stack.pop()
        present[u] = True
        if node.is_leaf:
            label[u] = label_of(node)
        else:
            feature[u], left, right = split_of(node)
            stack.append((left, 2 * u))
            stack.append((right, 2 * u + 1))
    return HeapTree(depth, present, feature, label)


def paths(X: np.ndarray, heap: HeapTree) -> np.ndarray:
    """(m, D+1) heap nodes on each row's root-to-leaf path, padded with 0 after the leaf."""
    m = X.shape[0]
    out = np.zeros((m, heap.depth + 1), dtype=np.int64)
    node = np.ones(m, dtype=np.int64)
    rows = np.arange(m)
    out[:, 0] = 1
    active = np.ones(m, dtype=bool)
    for level in range(1, heap.depth + 1):
        feat = heap.feature[node]
        active &= feat != NO_FEATURE
        nxt = 2 * node[active] + X[rows[active], feat[active]]
        node[active] = nxt
        out[active, level] = nxt
    return out


def prune_empty(tree: Tree, X: np.ndarray) -> Tree:
    """Replace every internal node with a side that receives no row by its other side (§1.4).

    Unlike ``Tree.canonical`` it never merges equal-labelled sibling leaves.
    """

    def walk(node: Tree, rows: np.ndarray) -> Tree:
        if node.is_leaf:
            return node
        j, left, right_child = split_of(node)
        right = X[rows, j]
        if not right.any():
            return walk(left, rows)
        if right.all():
            return walk(right_child, rows)
        return Tree.split(j, walk(left, rows[~right]), walk(right_child, rows[right]))

    if X.shape[0] == 0:
        return tree
    return walk(tree, np.arange(X.shape[0]))


def complete_tree(tree: Tree, depth: int, n_features: int) -> Tree:
    """``tree`` with every leaf above ``depth`` split down to ``depth``, both sides keeping the
    leaf's class (so every prediction is unchanged), on features not yet tested on the path
    (the smallest free ones) while there are any."""

    def walk(node: Tree, level: int, used: frozenset[int]) -> Tree:
        if level == depth:
            return node
        if node.is_leaf:
            free = [j for j in range(n_features) if j not in used]
            j = free[0] if free else 0
            child = walk(node, level + 1, used | {j})
            return Tree.split(j, child, child)
        j, left, right = split_of(node)
        used = used | {j}
        return Tree.split(j, walk(left, level + 1, used), walk(right, level + 1, used))

    return walk(tree, 0, frozenset())


def check_tree(tree: Any, meta: TreeMeta) -> Tree:
    """``tree`` if it fits a model with ``meta`` (depth, features, classes and, in a fair
    model, δ-fairness on the rows its fairness block counts: a start must be feasible), else
    raise."""
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be an odtkit Tree, got {type(tree).__name__}")
    depth = meta.max_depth
    if tree.depth > depth:
        raise ValueError(f"tree has depth {tree.depth} but the model allows depth <= {depth}")
    used = tree.features_used()
    if used and max(used) >= meta.n_features:
        raise ValueError(f"tree tests feature {max(used)}; the data has {meta.n_features}")
    if any(label >= meta.n_classes for _, label in tree.leaves()):
        raise ValueError(f"tree predicts a class code >= n_classes={meta.n_classes}")
    if meta.fair_rows is not None:
        check_fair_start(tree, meta.fair_X, meta.fair_rows)
    if meta.constraints is not None:
        broken = meta.constraints.start_violations(tree, meta.rows.X, meta.rows.weight)
        if broken:
            raise ValueError(
                "the start tree breaks a side constraint, so it is not a feasible point of the "
                "model: " + "; ".join(broken[:3])
            )
    return tree


def check_fair_start(tree: Tree, X: np.ndarray, fair: FairRows) -> None:
    """Raise ValueError unless ``tree`` is δ-fair on the model rows ``X`` (a start must be)."""
    positive = tree.predict(X) == fair.positive_code
    gap = fair.gap(positive)
    if gap > fair.delta + FAIRNESS_TOLERANCE:
        raise ValueError(
            f"the start tree is not {fair.delta:g}-fair ({fair.groups.fairness.notion}): its "
            f"largest disparity is {gap:.6g}, so it is not a feasible point of the fair model"
        )


def _check_carried(model: Model[Any], side: ModelConstraints, formulation: str) -> None:
    """Refuse a model that leaves out a stated constraint: every block of ``side`` must be a
    constraint block of the model under its name (``min_leaf_support`` too when stated), so no
    formulation can silently ignore one."""
    names = [b.name for b in side.blocks]
    if side.min_leaf_weight > 0:
        names.append("min_leaf_support")
    cost = side.resolved.cost
    if cost is not None and not model.meta.carries_costs:
        raise ValueError(
            f"{formulation} does not carry the cost objective {cost.describe()}: its model "
            "minimizes the misclassified weight"
        )
    missing = [n for n in names if n not in model.constraints]
    if missing:
        raise ValueError(
            f"{formulation} does not carry the constraint(s) {', '.join(missing)}: no block of "
            "that name in its model"
        )


# ---------------------------------------------------------------------------------------------
# the common protocol
# ---------------------------------------------------------------------------------------------
#: HiGHS indexes columns and nonzeros with 32-bit integers.
MAX_MODEL_ENTRIES = 2**31 - 1


def check_complete_tree_size(max_depth: int, n_rows: int, requested: object = None) -> None:
    """Refuse a depth whose complete tree cannot be a model: every tree formulation has a
    variable per (row, node) of the complete tree of depth ``max_depth`` (2^(D+1) - 1 nodes).
    ``requested``: the depth the caller gave, when :func:`check_depth` clamped it to
    ``max_depth`` (the message names both)."""
    entries = (2 ** (max_depth + 1) - 1) * max(n_rows, 1)
    if entries > MAX_MODEL_ENTRIES:
        given = max_depth if requested is None or requested == max_depth else requested
        clamped = "" if given == max_depth else f" (clamped to {max_depth}, the feature count)"
        deepest = max(
            d for d in range(1, 64) if (2 ** (d + 1) - 1) * max(n_rows, 1) <= MAX_MODEL_ENTRIES
        )
        raise ValueError(
            f"max_depth={given}{clamped} needs a complete tree of 2^{max_depth + 1} - 1 nodes, one "
            f"variable per node and distinct row ({entries:.3g} in all), more than a solver can "
            f"index (2^31 - 1); with {n_rows} distinct rows max_depth must be at most {deepest} "
            "(search_tree has no such limit)"
        )


class ModelSize(NamedTuple):
    """The size of the model a formulation would build, estimated from counts alone (the
    merged rows, features, classes and the depth) without building it: what
    :func:`odtkit.compare` reads to leave out of its default methods a MIP too big for the
    time limit. Exact for FlowOCT and RBinOCT up to their cut rows; an upper bound for
    PathOCT (every pair of features assumed to leave both sides of a cell non-empty)."""

    n_vars: int
    n_nonzeros: int


def nonconstant_features(X: np.ndarray) -> int:
    """How many columns of ``X`` take both values (the only ones a tree splits on usefully)."""
    return int((X.any(axis=0) & ~X.all(axis=0)).sum()) if X.size else 0


@dataclass(frozen=True)
class TreeProblem:
    """The problem every tree formulation solves: OSDT's ``min R(T) = errors / W + lam * leaves``
    over trees of depth <= ``max_depth``, δ-fair ones only with ``fairness``.

    Validated on construction (TypeError/ValueError naming the field); ``build`` then clamps
    ``max_depth`` to the data's feature count (a deeper tree is never better).

    Attributes
    ----------
    max_depth : int
        Depth D >= 1 of the complete tree the model describes.
    lam : float
        Penalty per leaf (OSDT units), ``>= 0``.
    fairness : Fairness, optional
        A fairness constraint (docs/formulations-trees.md §5).
    constraints : tuple or ResolvedConstraints
        Side constraints of :mod:`odtkit.constraints` (docs/constraints.md); a
        :class:`~odtkit.constraints.ResolvedConstraints` (resolved against the dataset, e.g.
        with raw-column names) is kept as it is.
    """

    max_depth: int
    lam: float
    fairness: Fairness | None = None
    constraints: tuple[Any, ...] | ResolvedConstraints = ()

    def __post_init__(self) -> None:
        depth = check_depth(self.max_depth, "max_depth", allow_none=False, minimum=1)
        object.__setattr__(self, "max_depth", depth)
        object.__setattr__(self, "lam", check_lambda(self.lam))
        object.__setattr__(self, "fairness", check_fairness(self.fairness))
        if not isinstance(self.constraints, ResolvedConstraints):
            object.__setattr__(self, "constraints", check_constraints(self.constraints))

    @classmethod
    def of(
        cls,
        problem: TreeProblem | None,
        max_depth: int | None = None,
        lam: float | None = None,
        fairness: Fairness | None = None,
        constraints: Any = None,
    ) -> TreeProblem:
        """``problem``, or the problem given by keyword (exactly one of the two forms)."""
        if problem is not None:
            if not isinstance(problem, TreeProblem):
                raise TypeError(f"problem must be a TreeProblem, got {type(problem).__name__}")
            keywords = (max_depth, lam, fairness, constraints)
            if any(v is not None for v in keywords):
                raise TypeError(
                    "give the problem as a TreeProblem or by keyword (max_depth=, lam=, "
                    "fairness=, constraints=), not both"
                )
            return problem
        if max_depth is None or lam is None:
            given = (("max_depth", max_depth), ("lam", lam))
            missing = " and ".join(name for name, value in given if value is None)
            raise TypeError(f"build() needs {missing} (or a TreeProblem)")
        if not isinstance(constraints, ResolvedConstraints):
            constraints = check_constraints(constraints)
        return cls(max_depth, lam, fairness, constraints)


@dataclass(frozen=True, kw_only=True, eq=False)
class TreeMeta(FormulationMeta):
    """What every tree formulation's model carries (its ``Model.meta``); each formulation's
    own meta (:class:`~odtkit.formulations.binoct.BinOCTMeta` ...) adds its choices.

    Attributes
    ----------
    formulation : str
        The name of the formulation that built the model.
    max_depth, lam, fairness
        The stated problem (``max_depth`` clamped to the feature count).
    n_features, n_classes : int
    total_weight : float
        The dataset's total sample weight.
    data_key : str
        :func:`data_key` of the dataset: ``evaluate`` refuses other data.
    rows : RowData
        The positive-weight (merged) rows the model was built on.
    aggregate : bool
        Whether identical rows were merged.
    fairness_groups : FairnessGroups or None
        The fairness constraint's groups on the dataset (``violation`` re-measures with them).
    fair_rows : FairRows or None
        The fairness block's rows, as the model sees them (starts are checked against them).
    constraints : ModelConstraints or None
        The side constraints (:mod:`odtkit.constraints`) on the model's rows; None when the
        problem states none. ``decode`` returns ``constraints.resolved.canonical`` of the raw
        tree and ``violation`` re-measures with ``constraints.resolved``.
    carries_costs : bool
        Set by a formulation whose objective reads ``constraints.losses`` (a cost objective,
        :mod:`odtkit.costs`); ``build`` refuses a model with a stated cost that does not.
    """

    max_depth: int
    lam: float
    n_features: int
    n_classes: int
    total_weight: float
    data_key: str
    rows: RowData
    aggregate: bool
    fairness: Fairness | None = None
    fairness_groups: FairnessGroups | None = None
    fair_rows: FairRows | None = None
    constraints: ModelConstraints | None = None
    carries_costs: bool = False

    @property
    def fair_X(self) -> np.ndarray:
        """The rows ``fair_rows`` counts (the model's rows; FlowOCT's fair model: its cells)."""
        return self.rows.X


TM = TypeVar("TM", bound=TreeMeta)


class TreeFormulation(Formulation[Dataset, TreeProblem, TM, Tree]):
    """Base of BinOCT / RBinOCT / FlowOCT on the :class:`Formulation` protocol.

    The constructor keeps modelling choices only; :meth:`build` validates the problem
    (a :class:`TreeProblem`), merges rows and attaches as ``model.meta`` everything
    :meth:`decode`, :meth:`start` and :meth:`evaluate` read: a :class:`TreeMeta` extended by
    each subclass's choices (``TM``). Decoding and starting read the model, never the object's
    state, so one object serves any number of models.

    Subclasses implement :meth:`_model` (the variables and rows; it returns the meta),
    :meth:`_tree` (the raw tree of a solution's values) and :meth:`start`.
    """

    name = "tree"
    problem_type = TreeProblem

    def __init__(self, *, aggregate: bool = True) -> None:
        self.aggregate = bool(aggregate)

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
    ) -> Model[TM]:
        """The model of ``dataset`` (binary features, classes 0..K-1) for depth <= ``max_depth``.

        Parameters
        ----------
        dataset : Dataset
        problem : TreeProblem, optional
            The problem; or give its fields by keyword instead:
        max_depth : int
            Depth D >= 1 of the complete tree the model describes.
        lam : float
            Penalty per leaf (OSDT units), ``>= 0``.
        fairness : Fairness, optional
            A fairness constraint (docs/formulations-trees.md §5): the model then describes only the
            δ-fair trees (:mod:`odtkit.formulations.fairness`), ``meta.fairness`` holds the
            constraint and ``meta.fairness_groups`` its groups on ``dataset``, which
            :meth:`violation` re-measures decoded trees with.
        constraints : list of constraints or ResolvedConstraints, optional
            Side constraints (:mod:`odtkit.constraints`, docs/constraints.md): the model then
            describes only the trees that satisfy them, one named block per constraint;
            ``meta.constraints`` holds them on the model's rows.
        """
        dataset = check_dataset(dataset)
        problem = TreeProblem.of(problem, max_depth, lam, fairness, constraints)
        depth = check_depth(
            problem.max_depth,
            "max_depth",
            allow_none=False,
            minimum=1,
            n_features=dataset.n_features,
        )
        assert depth is not None  # allow_none=False
        fairness, stated = problem.fairness, problem.constraints
        if fairness is not None and stated:
            # one path for a fairness stated beside other constraints: it is one more of them
            if isinstance(stated, ResolvedConstraints):
                raise TypeError(
                    "give fairness inside the constraints when they are already resolved "
                    "(odtkit.constraints.resolve([fairness, ...], dataset))"
                )
            stated, fairness = (fairness, *stated), None
        groups = None if fairness is None else fairness.groups(dataset)
        rows = row_data(dataset, self.aggregate)
        check_complete_tree_size(depth, rows.n_rows, problem.max_depth)
        side = None
        if stated:
            resolved = resolve(stated, dataset)
            scale = rows.total_weight / dataset.total_weight if dataset.total_weight > 0 else 1.0
            side = model_constraints(resolved, rows.source, rows.n_rows, scale)
        builder = ModelBuilder(self.name)
        tree = TreeMeta(
            formulation=self.name,
            max_depth=depth,
            lam=problem.lam,
            n_features=dataset.n_features,
            n_classes=dataset.n_classes,
            total_weight=dataset.total_weight,
            data_key=data_key(dataset),
            rows=rows,
            aggregate=self.aggregate,
            fairness=fairness,
            fairness_groups=groups,
            constraints=side,
        )
        model = builder.build(self._model(builder, tree))
        if side is not None:
            _check_carried(model, side, self.name)
        return model

    def estimate_size(self, dataset: Dataset, max_depth: int) -> ModelSize:
        """The size of ``build(dataset, max_depth=max_depth, lam=...)`` without building it
        (:class:`ModelSize`; milliseconds where the build takes seconds): the rows are merged
        as the build merges them, then counted. Fairness blocks are not counted."""
        dataset = check_dataset(dataset)
        depth = check_depth(
            max_depth, "max_depth", allow_none=False, minimum=1, n_features=dataset.n_features
        )
        assert depth is not None  # allow_none=False
        return self._size(row_data(dataset, self.aggregate), depth)

    @abstractmethod
    def _size(self, rows: RowData, depth: int) -> ModelSize:
        """:meth:`estimate_size` on merged ``rows`` at depth ``depth``."""

    @abstractmethod
    def _model(self, builder: ModelBuilder, tree: TreeMeta) -> TM:
        """Add the variables, rows and objective of the problem ``tree`` states (with
        ``tree.fairness_groups`` also the fairness block); return the model's meta: ``tree``
        extended by this formulation's choices."""

    @abstractmethod
    def _tree(self, meta: TM, values: dict[str, np.ndarray]) -> Tree:
        """The tree a solution's values describe, before pruning."""

    def decode(self, model: Model[TM], solution: Any) -> Tree:
        """The canonical tree of ``solution`` (a Solution, values by group or a column vector).

        The raw tree read from the rounded binaries is pruned of empty sides and merged
        (``Tree.canonical``, docs/formulations-trees.md §1.4) against the rows the model was built
        on: the positive-weight ones, so a leaf that only weight-0 rows reach is not kept (the
        model does not count it either, and keeping it would cost ``lam``).
        """
        model = check_built_by(model, self)
        values = solution_values(model, solution)
        meta = model.meta
        raw = self._tree(meta, values)
        if meta.constraints is not None:
            return meta.constraints.resolved.canonical(raw, meta.rows.X)
        return raw.canonical(meta.rows.X)

    def evaluate(self, model: Model[TM], decoded: Any, data: Any) -> float:
        """``metrics.objective(decoded, data, lam)`` with the model's ``lam``: the one truth."""
        model = check_built_by(model, self)
        data = check_dataset(data, "data")
        meta = model.meta
        if data_key(data) != meta.data_key:
            raise ValueError("data differs from the dataset the model was built on")
        costs = None if meta.constraints is None else meta.constraints.resolved
        return metrics.objective(decoded, data, lam=meta.lam, costs=costs)

    def violation(self, model: Model[TM], decoded: Any, data: Any) -> str:
        """Why ``decoded`` breaks the model's fairness constraint on ``data`` ("" if it does not,
        or the model has none), measured by :func:`odtkit.metrics.fairness_gap`."""
        model = check_built_by(model, self)
        groups = model.meta.fairness_groups
        side = model.meta.constraints
        if groups is None and side is None:
            return ""
        data = check_dataset(data, "data")
        if data_key(data) != model.meta.data_key:
            raise ValueError("data differs from the dataset the model was built on")
        if side is not None:
            broken = metrics.constraint_violations(decoded, data, side.resolved)
            if broken:
                return (
                    "the decoded tree breaks a side constraint, so it is not a solution of the "
                    "stated problem: " + "; ".join(broken[:3])
                )
        if groups is None:
            return ""
        gap = metrics.fairness_gap(decoded, data, groups)
        if gap <= groups.delta + FAIRNESS_TOLERANCE:
            return ""
        return (
            f"the decoded tree is not {groups.delta:g}-fair ({groups.fairness.notion}): its "
            f"largest disparity is {gap:.10g}, so it is not a solution of the stated problem"
        )

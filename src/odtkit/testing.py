"""Independent truths for tests: brute-force oracles, fixed worked examples, random instances.

Nothing here shares code with the solvers it checks (no bounds, no bitsets, no caches), so an
agreement between a solver and the oracle is evidence, not a tautology.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from odtkit._validation import check_depth, check_lambda, check_sample_weight, encode_labels
from odtkit.datasets import Dataset
from odtkit.tree import Tree, majority_label

if TYPE_CHECKING:
    from odtkit.fairness import Fairness
    from odtkit.rulelist import RuleList

#: A tree shape of :func:`enumerate_trees`: ``None`` (a leaf) or ``(feature, left, right)``.
_Structure = tuple[int, "_Structure", "_Structure"] | None

__all__ = [
    "CONSTRAINT_KINDS",
    "EXAMPLE_A_OPTIMA",
    "EXAMPLE_TREES_FAIR_OPTIMA",
    "EXAMPLE_TREES_PROTECTED",
    "LAMBDAS",
    "brute_force_constrained_tree",
    "brute_force_fair_tree",
    "brute_force_rashomon_histogram",
    "brute_force_rashomon_set",
    "brute_force_rule_list",
    "brute_force_threshold_tree",
    "brute_force_tree",
    "dataset_strategy",
    "enumerate_trees",
    "example_dataset_a",
    "example_dataset_trees",
    "planted_tree_dataset",
    "random_constraint",
    "random_constraints",
    "random_dataset",
    "random_numeric_table",
    "threshold_tree_leaves",
    "threshold_tree_predict",
]


def _class_weights(dataset: Dataset) -> np.ndarray:
    """(n, K) matrix with each sample's weight in its class column."""
    out = np.zeros((dataset.n_samples, dataset.n_classes))
    out[np.arange(dataset.n_samples), dataset.y] = dataset.weights
    return out


def brute_force_tree(dataset: Dataset, *, lam: float, max_depth: int) -> tuple[Tree, float]:
    """Exact optimum of ``misclassified/n + lam * leaves`` over all trees of depth <= ``max_depth``.

    Uses the exhaustive recursion of docs/formulations-search-and-pruning.md §6.1,
    ``OPT(s, A, d) = min(leaf(s), min_f OPT(s & x_f=0, A - f, d-1) + OPT(s & x_f=1, A - f, d-1))``,
    memoised on (rows, unused features, depth): every feature is tried at every node, including
    splits with an empty side, with no bound or pruning. Values are compared in count units
    (``mis + lam*n*leaves``); ties keep the tree with fewer leaves, then the leaf/first feature.
    Reaches p <= 8 features and n <= 200 samples in well under a second for depth <= 3.

    Returns
    -------
    (tree, objective) : the optimal tree and its objective (normalized by n).
    """
    lam = check_lambda(lam)
    max_depth = check_depth(max_depth, allow_none=False, n_features=dataset.n_features)
    weights = _class_weights(dataset)
    X = dataset.X
    n = dataset.total_weight
    penalty = lam * n
    # sample weights can be fractional: compare with a tolerance relative to the total weight
    # (an absolute floor would make every tree tie when all weights are tiny, e.g. 1e-12)
    tol = 1e-9 * n

    @cache
    def opt(rows_key: bytes, available: frozenset[int], depth: int) -> tuple[float, int, Tree]:
        rows = np.frombuffer(rows_key, dtype=bool)
        counts = weights[rows].sum(axis=0)
        label = majority_label(counts)
        best = (float(counts.sum() - counts[label]) + penalty, 1, Tree.leaf(label))
        if depth == 0:
            return best
        for f in sorted(available):
            right = rows & X[:, f]
            left = rows & ~X[:, f]
            rest = available - {f}
            lv, lh, lt = opt(left.tobytes(), rest, depth - 1)
            rv, rh, rt = opt(right.tobytes(), rest, depth - 1)
            value, leaves = lv + rv, lh + rh
            if value < best[0] - tol or (abs(value - best[0]) <= tol and leaves < best[1]):
                best = (value, leaves, Tree.split(f, lt, rt))
        return best

    all_rows = np.ones(dataset.n_samples, dtype=bool)
    depth = min(max_depth, dataset.n_features)
    value, _, tree = opt(all_rows.tobytes(), frozenset(range(dataset.n_features)), depth)
    return tree, value / n


def enumerate_trees(n_features: int, max_depth: int, n_classes: int = 2) -> Iterator[Tree]:
    """Every tree of depth <= ``max_depth`` with distinct features on each path, every labelling.

    The explicit enumeration of docs/formulations-search-and-pruning.md §6.1 (count
    ``C(k, d) = 1 + k C(k-1, d-1)^2`` structures, times the labellings); it checks
    :func:`brute_force_tree` on tiny instances (p <= 3, depth <= 2).
    """

    def structures(available: tuple[int, ...], depth: int) -> Iterator[_Structure]:
        yield None  # a leaf
        if depth == 0:
            return
        for f in available:
            rest = tuple(g for g in available if g != f)
            for left in structures(rest, depth - 1):
                for right in structures(rest, depth - 1):
                    yield (f, left, right)

    def n_leaves(s: _Structure) -> int:
        return 1 if s is None else n_leaves(s[1]) + n_leaves(s[2])

    def build(s: _Structure, labels: Iterator[int]) -> Tree:
        if s is None:
            return Tree.leaf(next(labels))
        return Tree.split(s[0], build(s[1], labels), build(s[2], labels))

    for s in structures(tuple(range(n_features)), max_depth):
        for labelling in itertools.product(range(n_classes), repeat=n_leaves(s)):
            yield build(s, iter(labelling))


def brute_force_fair_tree(
    dataset: Dataset, fairness: Fairness, *, lam: float, max_depth: int
) -> tuple[Tree | None, float]:
    """Exact optimum of ``misclassified/n + lam * leaves`` over δ-fair trees of depth <= max_depth.

    Exhaustive and bound-free: for every sub-problem (rows, unused features, depth) it lists
    *every* prediction vector some tree can produce on those rows, keeping the fewest leaves
    that produce it (objective and fairness depend only on the predictions and the leaf count).
    A vector's disparities are then measured with the coefficients of
    :meth:`odtkit.fairness.Fairness.groups` (exact up to 1e-9) and the cheapest δ-fair vector
    wins. Each leaf may predict any class. Exponential in the rows: keep n <= 12, p <= 4,
    depth <= 3.

    Returns
    -------
    (tree, objective) : an optimal δ-fair tree and its objective. A single leaf is always
    fair, so a tree always exists.
    """
    lam = check_lambda(lam)
    max_depth = check_depth(max_depth, allow_none=False, n_features=dataset.n_features)
    groups = fairness.groups(dataset)
    n, K = dataset.n_samples, dataset.n_classes
    X, y, w = dataset.X, dataset.y, dataset.weights
    penalty = lam * dataset.total_weight

    @cache
    def vectors(
        rows_key: bytes, available: frozenset[int], depth: int
    ) -> dict[bytes, tuple[int, Tree]]:
        """prediction vector on ``rows`` (int8 labels, -1 elsewhere) -> (leaves, tree)."""
        rows = np.frombuffer(rows_key, dtype=bool)
        out: dict[bytes, tuple[int, Tree]] = {}
        for k in range(K):
            pred = np.where(rows, k, -1).astype(np.int8)
            out[pred.tobytes()] = (1, Tree.leaf(k))
        if depth == 0:
            return out
        for f in sorted(available):
            rest = available - {f}
            left = vectors((rows & ~X[:, f]).tobytes(), rest, depth - 1)
            right = vectors((rows & X[:, f]).tobytes(), rest, depth - 1)
            for lkey, (lleaves, ltree) in left.items():
                lpred = np.frombuffer(lkey, dtype=np.int8)
                for rkey, (rleaves, rtree) in right.items():
                    rpred = np.frombuffer(rkey, dtype=np.int8)
                    key = np.maximum(lpred, rpred).tobytes()  # disjoint supports, -1 elsewhere
                    leaves = lleaves + rleaves
                    if key not in out or leaves < out[key][0]:
                        out[key] = (leaves, Tree.split(f, ltree, rtree))
        return out

    all_rows = np.ones(n, dtype=bool)
    depth = min(max_depth, dataset.n_features)
    best: tuple[float, int, Tree | None] = (np.inf, 0, None)
    tol = 1e-9 * dataset.total_weight
    for key, (leaves, tree) in vectors(
        all_rows.tobytes(), frozenset(range(dataset.n_features)), depth
    ).items():
        pred = np.frombuffer(key, dtype=np.int8)
        if groups.gap(pred == groups.positive_code) > groups.delta + 1e-9:
            continue
        value = float(w[pred != y].sum()) + penalty * leaves
        if value < best[0] - tol or (abs(value - best[0]) <= tol and leaves < best[1]):
            best = (value, leaves, tree)
    return best[2], best[0] / dataset.total_weight


def brute_force_constrained_tree(
    dataset: Dataset, constraints: Any, *, lam: float, max_depth: int
) -> tuple[Tree | None, float]:
    """Exact optimum of ``misclassified/n + lam * leaves`` (``cost/n + ...`` under a cost
    objective of :mod:`odtkit.costs`) over the trees of depth <= ``max_depth`` that satisfy
    ``constraints`` (any list of :mod:`odtkit.constraints` values, fairness included), as
    :meth:`~odtkit.constraints.ResolvedConstraints.violations` measures them.

    Every tree of :func:`enumerate_trees` is checked one by one, so nothing is assumed about
    which trees can be optimal (an empty leaf, a split with two equal leaves: each is tried).
    Ties go to fewer leaves. Keep ``p**depth`` small (p <= 4 at depth 2, p <= 3 at depth 3).

    Returns
    -------
    (tree, objective) : an optimal feasible tree and its objective, or ``(None, inf)`` when no
    tree satisfies the constraints.
    """
    from odtkit.constraints import resolve

    lam = check_lambda(lam)
    max_depth = check_depth(max_depth, allow_none=False, n_features=dataset.n_features)
    resolved = resolve(constraints, dataset)
    X, y, w = dataset.X, dataset.y, dataset.weights
    penalty = lam * dataset.total_weight
    tol = 1e-9 * dataset.total_weight
    depth = min(max_depth, dataset.n_features)
    best: tuple[float, int, Tree | None] = (np.inf, 0, None)
    losses = resolved.losses
    rows = np.arange(dataset.n_samples)
    for tree in enumerate_trees(dataset.n_features, depth, dataset.n_classes):
        pred = tree.predict(X)
        loss = w[pred != y].sum() if losses is None else losses[rows, pred].sum()
        value = float(loss) + penalty * tree.n_leaves
        if value > best[0] + tol or (value >= best[0] - tol and tree.n_leaves >= best[1]):
            continue
        if resolved.violations(tree, dataset):
            continue
        best = (value, tree.n_leaves, tree)
    if best[2] is None:
        return None, float("inf")
    return best[2], best[0] / dataset.total_weight


def brute_force_rashomon_histogram(
    dataset: Dataset, *, max_depth: int | None, leaves: str = "any"
) -> dict[tuple[float, int], int]:
    """How many trees of the Rashomon tree space have each (misclassified weight, leaves).

    The space of :func:`brute_force_rashomon_set` (admissible splits: weight ``> 1e-12 * W`` on
    both sides; ``leaves`` "any" or "majority"), counted by the plain recursion
    ``H(s, d) = leaves(s) + sum_j H(s & ~x_j, d-1) (*) H(s & x_j, d-1)`` where ``(*)`` adds the
    keys of every pair and multiplies their counts, memoised on (rows, depth), with no bound and
    no pruning: every tree of the space is counted, whatever its objective. The set for any
    ``lam`` and bound is then ``sum(count for (e, k), count in H.items() if e / W + lam * k <=
    bound + 1e-9)``. Counts are Python ints. Exponential in the depth but not in the number of
    trees: p <= 8, depth <= 4 and a few hundred rows run in seconds.
    """
    depth_limit = check_depth(max_depth, n_features=dataset.n_features)
    depth = dataset.n_features if depth_limit is None else depth_limit
    if leaves not in ("any", "majority"):
        raise ValueError(f"leaves must be 'any' or 'majority', got {leaves!r}")
    X, y, w, K = dataset.X, dataset.y, dataset.weights, dataset.n_classes
    empty = 1e-12 * float(w.sum())

    @cache
    def histogram(rows_key: bytes, d: int) -> dict[tuple[float, int], int]:
        rows = np.frombuffer(rows_key, dtype=bool)
        class_weight = np.bincount(y[rows], weights=w[rows], minlength=K)
        total = float(class_weight.sum())
        out: dict[tuple[float, int], int] = {}
        for k in range(K):
            if leaves == "majority" and class_weight[k] < class_weight.max() - empty:
                continue
            key = (total - float(class_weight[k]), 1)
            out[key] = out.get(key, 0) + 1
        if d == 0:
            return out
        for f in range(dataset.n_features):
            right, left = rows & X[:, f], rows & ~X[:, f]
            if w[right].sum() <= empty or w[left].sum() <= empty:
                continue
            left_hist = histogram(left.tobytes(), d - 1)
            right_hist = histogram(right.tobytes(), d - 1)
            for (e1, k1), c1 in left_hist.items():
                for (e2, k2), c2 in right_hist.items():
                    key = (e1 + e2, k1 + k2)
                    out[key] = out.get(key, 0) + c1 * c2
        return out

    return histogram(np.ones(dataset.n_samples, dtype=bool).tobytes(), depth)


def brute_force_rashomon_set(
    dataset: Dataset,
    *,
    lam: float,
    max_depth: int | None,
    epsilon: float,
    absolute: bool = False,
    leaves: str = "any",
) -> list[tuple[Tree, float]]:
    """Every tree of the Rashomon set, by explicit enumeration (docs/rashomon.md §1, §5).

    The set is ``{T : R(T) <= bound + 1e-9}`` with ``bound = (1 + epsilon) * OPT`` (``OPT +
    epsilon`` with ``absolute``), over the trees of depth <= ``max_depth`` (``None``: unlimited)
    whose every split is admissible: both sides receive training weight ``> 1e-12 * W`` of the
    rows reaching it. With ``leaves="majority"`` a leaf may only predict a class of maximal
    weight among its rows (ties within ``1e-12 * W``: every tied class is allowed); with
    ``"any"`` it may predict any class. ``OPT`` is the minimum over that same space (checked
    against :func:`brute_force_tree`, whose space holds it: an inadmissible split can be pruned
    without raising the objective).

    No bound, memo or search is involved: the structures come from :func:`enumerate_trees`
    (with ``n_classes=1``), a structure with an inadmissible split is dropped, every labelling
    of the others is scored (its misclassified weight is a sum of per-leaf costs), and every
    tree kept is re-scored by :func:`odtkit.metrics.objective`, the value returned with it.
    Exponential in everything: keep ``p <= 4`` features with ``max_depth <= 3`` (or
    ``max_depth=None`` with ``p <= 3``), ``K <= 3`` classes and ``n <= ~20`` rows.

    Returns
    -------
    list of (tree, objective)
        Sorted by objective, then fewer leaves, then the tree's ``repr`` (a fixed order; the
        library's own order among exact ties may differ).
    """
    from odtkit import metrics
    from odtkit.core.rashomon import RashomonProblem

    problem = RashomonProblem(
        dataset, lam=lam, max_depth=max_depth, epsilon=epsilon, absolute=absolute, leaves=leaves
    )
    dataset, lam, epsilon, absolute = (
        problem.dataset,
        problem.lam,
        problem.epsilon,
        problem.absolute,
    )
    p = dataset.n_features
    depth = p if problem.max_depth is None else problem.max_depth
    total = dataset.total_weight
    floor = 1e-12 * total
    X, K = dataset.X, dataset.n_classes
    weights = _class_weights(dataset)

    def leaf_weights(node: Tree, rows: np.ndarray, out: list[np.ndarray]) -> bool:
        """Append each leaf's class weights (pre-order); False at an inadmissible split."""
        if node.is_leaf:
            out.append(weights[rows].sum(axis=0))
            return True
        feature, left_node, right_node = node.as_split()
        left, right = rows & ~X[:, feature], rows & X[:, feature]
        if weights[left].sum() <= floor or weights[right].sum() <= floor:
            return False
        return leaf_weights(left_node, left, out) and leaf_weights(right_node, right, out)

    def relabel(node: Tree, labels: Iterator[int]) -> Tree:
        if node.is_leaf:
            return Tree.leaf(next(labels))
        feature, left, right = node.as_split()
        return Tree.split(feature, relabel(left, labels), relabel(right, labels))

    # (structure, labellings (M, L), objectives (M,)) of every admissible structure
    scored: list[tuple[Tree, np.ndarray, np.ndarray]] = []
    all_rows = np.ones(dataset.n_samples, dtype=bool)
    for structure in enumerate_trees(p, depth, n_classes=1):
        per_leaf: list[np.ndarray] = []
        if not leaf_weights(structure, all_rows, per_leaf):
            continue
        class_w = np.array(per_leaf)  # (L, K)
        if leaves == "majority":
            allowed = [np.flatnonzero(w >= w.max() - floor) for w in class_w]
        else:
            allowed = [np.arange(K)] * len(per_leaf)
        # every labelling (itertools.product order), built as one array
        grids = np.meshgrid(*allowed, indexing="ij")
        labellings = np.stack(grids, axis=-1).reshape(-1, len(per_leaf)).astype(np.int64)
        cost = class_w.sum(axis=1, keepdims=True) - class_w  # (L, K): mistakes per label
        mistakes = cost[np.arange(len(per_leaf)), labellings].sum(axis=1)
        scored.append((structure, labellings, mistakes / total + lam * len(per_leaf)))

    opt_index = min(range(len(scored)), key=lambda i: scored[i][2].min())
    structure, labellings, values = scored[opt_index]
    best = relabel(structure, iter(labellings[int(values.argmin())].tolist()))
    opt = metrics.objective(best, dataset, lam=lam)
    _, reference = brute_force_tree(dataset, lam=lam, max_depth=depth)
    if abs(opt - reference) > 1e-9:  # pragma: no cover - a bug in one of the two oracles
        raise AssertionError(f"rashomon oracle OPT {opt!r} != brute_force_tree {reference!r}")
    bound = opt + epsilon if absolute else (1.0 + epsilon) * opt
    out: list[tuple[Tree, float]] = []
    for structure, labellings, values in scored:
        # the vectorized values pre-select (with slack); metrics.objective decides
        for labelling in labellings[values <= bound + 1e-9 + 1e-7]:
            tree = relabel(structure, iter(labelling.tolist()))
            value = metrics.objective(tree, dataset, lam=lam)
            if value <= bound + 1e-9:
                out.append((tree, value))
    out.sort(key=lambda item: (item[1], item[0].n_leaves, repr(item[0])))
    return out


# --------------------------------------------------------------------------------------------
# Worked examples of docs/formulations-search-and-pruning.md and docs/formulations-trees.md
# --------------------------------------------------------------------------------------------


#: Optimal objectives on :func:`example_dataset_a`: ``lam -> (depth 1, depth >= 2)``.
EXAMPLE_A_OPTIMA: dict[float, tuple[float, float]] = {
    0.01: (0.454444, 0.151111),
    0.05: (0.494444, 0.311111),
    0.1: (0.544444, 0.511111),
    0.2: (0.644444, 0.644444),
}


def example_dataset_a() -> Dataset:
    """The fixed 9-sample, 3-feature dataset of docs/formulations-search-and-pruning.md §6.3.

    ``y = x1 xor x2`` plus a conflicting duplicate of row 7. Optimal objectives are in
    :data:`EXAMPLE_A_OPTIMA`.
    """
    X = np.array(
        [
            [0, 0, 0],
            [0, 0, 1],
            [0, 1, 0],
            [0, 1, 1],
            [1, 0, 0],
            [1, 0, 1],
            [1, 1, 0],
            [1, 1, 1],
            [1, 1, 1],
        ],
        dtype=bool,
    )
    y = np.array([0, 0, 1, 1, 1, 1, 0, 0, 1])
    return Dataset.from_arrays(X, y, feature_names=["x1", "x2", "x3"], name="example-a")


def example_dataset_trees() -> Dataset:
    """The 6-row, 2-feature example of docs/formulations-trees.md §7.1 (protected attribute: §7.5).

    ``OPT(1, 0.1) = 11/30`` (stump on x1), ``OPT(1, 0.25) = 7/12`` (single leaf of class 0).
    """
    X = np.array([[0, 0], [0, 0], [0, 1], [1, 0], [1, 1], [1, 1]], dtype=bool)
    y = np.array([0, 0, 0, 1, 1, 0])
    return Dataset.from_arrays(X, y, feature_names=["x1", "x2"], name="example-trees")


EXAMPLE_TREES_PROTECTED = np.array([0, 1, 0, 1, 0, 1])

#: docs/formulations-trees.md §7.5: optimal fair objectives on :func:`example_dataset_trees` with
#: :data:`EXAMPLE_TREES_PROTECTED`, depth 1: ``(notion, delta) -> (lam = 0.1, lam = 0)``.
EXAMPLE_TREES_FAIR_OPTIMA: dict[tuple[str, float], tuple[float, float]] = {
    ("sp", 0.0): (13 / 30, 1 / 3),
    ("sp", 0.2): (13 / 30, 1 / 3),
    ("sp", 0.4): (11 / 30, 1 / 6),
    ("pe", 0.0): (13 / 30, 1 / 3),
    ("pe", 0.2): (13 / 30, 1 / 3),
    ("pe", 0.4): (13 / 30, 1 / 3),
    ("pe", 0.6): (11 / 30, 1 / 6),
    ("eopp", 0.0): (11 / 30, 1 / 6),
    ("eopp", 0.2): (11 / 30, 1 / 6),
    ("eopp", 0.4): (11 / 30, 1 / 6),
    ("eodds", 0.0): (13 / 30, 1 / 3),
    ("eodds", 0.2): (13 / 30, 1 / 3),
    ("eodds", 0.4): (13 / 30, 1 / 3),
    ("eodds", 0.6): (11 / 30, 1 / 6),
}


# --------------------------------------------------------------------------------------------
# Random instances (docs/formulations-search-and-pruning.md §6.5)
# --------------------------------------------------------------------------------------------

LAMBDAS = (0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.15, 0.2, 0.25, 0.3)


#: The kinds :func:`random_constraint` draws: one per value of :mod:`odtkit.constraints`
#: (``FeatureBudget`` per split or per feature), and ``Fairness``.
CONSTRAINT_KINDS = (
    "max_leaves",
    "min_leaf_support",
    "feature_budget",
    "forbid_features",
    "require_features",
    "class_recall",
    "false_positive_rate",
    "predict",
    "fairness",
)


def random_constraint(kind: str, dataset: Dataset, rng: np.random.Generator) -> Any:
    """A random side constraint of ``kind`` (one of :data:`CONSTRAINT_KINDS`) on ``dataset``.

    The arguments are drawn from small grids that make the constraint binding, slack or
    infeasible on tiny instances (a budget of 0, a recall of 1, a leaf share above 1/2, a
    required feature beside few leaves). The answer always resolves on ``dataset``
    (:func:`odtkit.constraints.resolve`): a rate is stated over a class with weight, ``Predict``
    names rows of positive weight, and where the kind is undefined on the draw (a false-positive
    rate when one class holds all the weight, a fairness notion with an empty group) a
    ``ClassRecall`` of 0.5 stands in for it, so a caller never has to filter.

    Parameters
    ----------
    kind : str
        One of :data:`CONSTRAINT_KINDS`.
    dataset : Dataset
        The data the constraint is stated on (its feature names, classes and weights).
    rng : numpy.random.Generator
        The source of every draw (reproducible from its seed).

    Returns
    -------
    constraint : an :mod:`odtkit.constraints` value or an :class:`odtkit.Fairness`.
    """
    from odtkit import constraints as oc
    from odtkit.fairness import Fairness

    if kind not in CONSTRAINT_KINDS:
        raise ValueError(f"kind must be one of {CONSTRAINT_KINDS}, got {kind!r}")
    names = list(dataset.feature_names)
    w = dataset.weights
    present = [k for k in range(dataset.n_classes) if w[dataset.y == k].sum() > 0]
    if not present:
        raise ValueError("dataset has no row of positive weight")
    some = [
        str(f)
        for f in rng.choice(names, size=min(len(names), int(rng.integers(1, 3))), replace=False)
    ]
    fallback = oc.ClassRecall(dataset.classes[int(rng.choice(present))], at_least=0.5)
    if kind == "max_leaves":
        return oc.MaxLeaves(int(rng.integers(1, 5)))
    if kind == "min_leaf_support":
        if rng.random() < 0.6:
            return oc.MinLeafSupport(share=float(rng.choice([0.1, 0.2, 0.25, 0.3, 0.45, 0.6])))
        return oc.MinLeafSupport(weight=float(rng.choice([1.0, 2.0, 3.5, 4.0, 5.0])))
    if kind == "feature_budget":
        per = str(rng.choice(["split", "feature"]))
        costs: Any = (
            1.0
            if rng.random() < 0.4
            else {f: float(rng.choice([0.0, 0.5, 1.0, 2.0])) for f in some}
        )
        return oc.FeatureBudget(costs, float(rng.choice([0.0, 1.0, 1.5, 2.0, 3.0])), per=per)
    if kind == "forbid_features":
        return oc.ForbidFeatures(some)
    if kind == "require_features":
        return oc.RequireFeatures(some[:1] if rng.random() < 0.7 else some)
    if kind == "class_recall":
        k = int(rng.choice(present))
        return oc.ClassRecall(
            dataset.classes[k], at_least=float(rng.choice([0.3, 0.4, 0.6, 0.8, 1.0]))
        )
    if kind == "false_positive_rate":
        others = [k for k in range(dataset.n_classes) if w[dataset.y != k].sum() > 0]
        if not others:  # undefined: one class holds all the weight
            return fallback
        k = int(rng.choice(others))
        return oc.FalsePositiveRate(dataset.classes[k], at_most=float(rng.choice([0.0, 0.2, 0.5])))
    if kind == "predict":
        heavy = np.flatnonzero(w > 0)
        chosen = rng.choice(heavy, size=min(heavy.size, int(rng.integers(1, 4))), replace=False)
        label = dataset.classes[int(rng.integers(dataset.n_classes))]
        return oc.Predict(sorted(int(r) for r in chosen), label)
    # fairness: two groups that both weigh > 0, a protected attribute that is not a feature
    heavy = np.flatnonzero(w > 0)
    protected = np.where(rng.random(dataset.n_samples) < 0.5, "a", "b")
    protected[heavy[0]], protected[heavy[-1]] = "a", "b"
    positive_class = dataset.classes[int(rng.choice(present))]
    delta = float(rng.choice([0.1, 0.3]))
    for notion in (str(rng.choice(["sp", "sp", "pe", "eopp", "eodds"])), "sp"):
        fairness = Fairness(notion, protected=protected, delta=delta, positive_class=positive_class)
        try:
            oc.resolve([fairness], dataset)
        except ValueError:  # undefined on this draw (e.g. a group without a positive row)
            continue
        return fairness
    return fallback  # every tree has the same positive rate on this draw


def random_constraints(
    dataset: Dataset,
    rng: np.random.Generator,
    n: int,
    kinds: tuple[str, ...] = CONSTRAINT_KINDS,
) -> list[Any]:
    """``n`` constraints of kinds drawn from ``kinds`` (with repeats), each by
    :func:`random_constraint`: a random combination for oracle-agreement tests."""
    return [random_constraint(str(rng.choice(kinds)), dataset, rng) for _ in range(n)]


def random_dataset(
    seed: int,
    n_samples: int | None = None,
    n_features: int | None = None,
    n_classes: int = 2,
    weighted: bool = False,
) -> Dataset:
    """A small random instance for property tests, reproducible from ``seed``.

    Features are i.i.d. Bernoulli(1/2); labels are either i.i.d. uniform or a noisy function
    of two features (both kinds make ties and conflicting duplicates common). ``weighted`` draws
    integer sample weights 1..3 so weighted and duplicated data can be compared.
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 41)) if n_samples is None else n_samples
    p = int(rng.integers(1, 7)) if n_features is None else n_features
    X = rng.random((n, p)) < 0.5
    if rng.random() < 0.5 or p < 2:
        y = rng.integers(0, n_classes, size=n)
    else:
        a, b = rng.choice(p, size=2, replace=False)
        y = (X[:, a] ^ X[:, b]).astype(int) % n_classes
        flip = rng.random(n) < 0.15
        y[flip] = rng.integers(0, n_classes, size=int(flip.sum()))
    weights = rng.integers(1, 4, size=n).astype(float) if weighted else None
    # Dataset.from_arrays would re-encode labels; keep all K classes even if one is unused
    Xc = np.ascontiguousarray(X)
    yc = np.ascontiguousarray(y.astype(np.int64))
    Xc.setflags(write=False)
    yc.setflags(write=False)
    return Dataset(
        Xc, yc, np.arange(n_classes), tuple(f"x{j}" for j in range(p)), f"random-{seed}", weights
    )


def planted_tree_dataset(
    seed: int,
    n_samples: int,
    n_features: int,
    depth: int,
    noise: float,
    *,
    n_classes: int = 2,
    class_weights: Any = None,
) -> tuple[Dataset, Tree]:
    """A hard instance for benchmarks: labels of a random complete tree, then label noise.

    Features are i.i.d. Bernoulli(1/2). The planted tree splits every node of depth < ``depth``
    on a feature not yet used on its path (uniformly drawn), and its leaves predict a class
    (uniformly among ``n_classes``, or by ``class_weights``); each label is then replaced, with
    probability ``noise``, by another class (uniformly; with two classes: flipped).
    Reproducible from ``seed``; the defaults draw exactly what they drew before these options.

    Parameters
    ----------
    seed, n_samples, n_features, depth, noise
        As above; ``noise`` lies in [0, 0.5].
    n_classes : int, keyword-only
        Number of classes (>= 2).
    class_weights : sequence of n_classes non-negative numbers, keyword-only
        Shares of the planted leaves per class (normalised; largest-remainder quotas of the
        ``2**depth`` leaves, shuffled), so that e.g. ``(0.9, 0.1)`` plants a 90/10 imbalance
        before noise. None: each leaf's class is drawn uniformly.

    Returns
    -------
    (dataset, planted) : the dataset (named ``planted-n x p-d-noise-seed``, with ``-kK`` /
    ``-w...`` appended when the options are used) and the planted tree.
    """
    checked = check_depth(depth)
    if checked is None or checked > n_features:
        raise ValueError(f"depth must be an integer <= n_features, got {checked!r}")
    depth = checked
    if not 0.0 <= noise <= 0.5:
        raise ValueError(f"noise must lie in [0, 0.5], got {noise!r}")
    if isinstance(n_classes, bool) or not isinstance(n_classes, int | np.integer) or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}")
    n_classes = int(n_classes)
    quotas: list[int] | None = None
    if class_weights is not None:
        w = np.asarray(class_weights, dtype=float)
        if w.shape != (n_classes,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(
                f"class_weights must be {n_classes} non-negative finite numbers with a positive "
                f"sum (one per class), got {class_weights!r}"
            )
        n_leaves = 2**depth
        share = w / w.sum() * n_leaves
        counts = np.floor(share).astype(int)
        order = np.argsort(-(share - counts), kind="stable")
        counts[order[: n_leaves - int(counts.sum())]] += 1
        quotas = [int(c) for c in np.repeat(np.arange(n_classes), counts)]
    rng = np.random.default_rng(seed)
    X = rng.random((n_samples, n_features)) < 0.5
    if quotas is not None:
        quotas = [int(c) for c in rng.permutation(quotas)]
    leaves = iter(quotas or ())

    def grow(level: int, used: frozenset[int]) -> Tree:
        if level == depth:
            if quotas is not None:
                return Tree.leaf(next(leaves))
            return Tree.leaf(int(rng.integers(n_classes)))
        feature = int(rng.choice([j for j in range(n_features) if j not in used]))
        used = used | {feature}
        return Tree.split(feature, grow(level + 1, used), grow(level + 1, used))

    planted = grow(0, frozenset())
    y = planted.predict(X).astype(np.int64)
    flip = rng.random(n_samples) < noise
    if n_classes == 2:
        y ^= flip
    else:
        # another class, uniformly: a shift by 1 .. K-1
        y[flip] = (y[flip] + rng.integers(1, n_classes, size=int(flip.sum()))) % n_classes
    name = f"planted-{n_samples}x{n_features}-d{depth}-{noise:g}-{seed}"
    if n_classes != 2:
        name += f"-k{n_classes}"
    if class_weights is not None:
        name += "-w" + ":".join(f"{v:g}" for v in np.asarray(class_weights, dtype=float))
    Xc = np.ascontiguousarray(X)
    Xc.setflags(write=False)
    y.setflags(write=False)
    classes = np.arange(n_classes)
    names = tuple(f"x{j}" for j in range(n_features))
    return Dataset(Xc, y, classes, names, name), planted


def dataset_strategy(
    max_samples: int = 40, max_features: int = 6, n_classes: int = 2, weighted: bool = False
) -> Any:
    """A hypothesis strategy of random instances (hypothesis, a dev dependency, loads lazily)."""
    from hypothesis import strategies as st

    return st.builds(
        lambda seed, n, p: random_dataset(seed, n, p, n_classes=n_classes, weighted=weighted),
        st.integers(0, 2**32 - 1),
        st.integers(3, max_samples),
        st.integers(1, max_features),
    )


# --------------------------------------------------------------------------------------------
# Rule-list oracle (docs/formulations-search-and-pruning.md §6.2)
# --------------------------------------------------------------------------------------------


def brute_force_rule_list(
    dataset: Dataset, *, lam: float, antecedents: Any, max_length: int
) -> tuple[RuleList, float]:
    """Exact optimum of ``misclassified/n + lam * n_rules`` over rule lists of length <= max_length.

    Enumerates every ordered tuple of distinct antecedents (``itertools.permutations`` order,
    extended one antecedent at a time so each list costs one vector update), with empirical
    labels: a rule predicts the majority (ties -> smallest code) of the samples it captures in
    context, the default rule that of the samples no rule captures. No bound, no pruning. Count
    units are compared; ties keep the shorter list.

    Parameters
    ----------
    dataset : Dataset
        Binary labels.
    lam : float
    antecedents : bool matrix (n_samples, R) or sequence of conjunctions of (feature, value)
        With a matrix, antecedent ``r`` is returned as the literal ``(r, 1)`` over its columns.
    max_length : int
        Longest prefix enumerated; ``max_length >= R`` makes the oracle exact (use R <= 7).

    Returns
    -------
    (rule_list, objective) : an optimal :class:`~odtkit.rulelist.RuleList` and its objective.
    """
    from odtkit.rulelist import RuleList

    lam = check_lambda(lam)
    max_length = check_depth(max_length, name="max_length", allow_none=False)
    if isinstance(antecedents, np.ndarray):
        truth = np.asarray(antecedents, dtype=bool)
        literal_sets: list[tuple[tuple[int, int], ...]] = [((r, 1),) for r in range(truth.shape[1])]
    else:
        literal_sets = [tuple(sorted((int(f), int(v)) for f, v in a)) for a in antecedents]
        cols = [
            np.all(dataset.X[:, [f for f, _ in a]] == [v for _, v in a], axis=1)
            for a in literal_sets
        ]
        truth = np.column_stack(cols) if cols else np.zeros((dataset.n_samples, 0), dtype=bool)
    weights = _class_weights(dataset)  # (n, K)
    n_total = dataset.total_weight
    penalty = lam * n_total
    tol = 1e-9 * n_total
    n_rules = truth.shape[1]

    best: list[Any] = [np.inf, 0, (), (), 0]  # value, length, prefix, labels, default

    def visit(
        prefix: tuple[int, ...], labels: tuple[int, ...], free: np.ndarray, mistakes: float
    ) -> None:
        rest = weights[free].sum(axis=0)
        default = majority_label(rest)
        value = mistakes + float(rest.sum() - rest[default]) + penalty * len(prefix)
        if value < best[0] - tol or (abs(value - best[0]) <= tol and len(prefix) < best[1]):
            best[:] = [value, len(prefix), prefix, labels, default]
        if len(prefix) == max_length:
            return
        for r in range(n_rules):
            if r in prefix:
                continue
            captured = free & truth[:, r]
            counts = weights[captured].sum(axis=0)
            label = majority_label(counts)
            visit(
                prefix + (r,),
                labels + (label,),
                free & ~truth[:, r],
                mistakes + float(counts.sum() - counts[label]),
            )

    visit((), (), np.ones(dataset.n_samples, dtype=bool), 0.0)
    _, _, prefix, labels, default = best
    model = RuleList([(literal_sets[r], q) for r, q in zip(prefix, labels, strict=True)], default)
    return model, best[0] / n_total


# --------------------------------------------------------------------------------------------
# Threshold-tree oracle on raw numeric tables (issue 23; the split space of the exact search)
# --------------------------------------------------------------------------------------------

#: A tree of :func:`brute_force_threshold_tree`: a leaf is its class code (``int``); a split is
#: ``(column, threshold, missing_left, le_subtree, gt_subtree)``.
ThresholdTree = int | tuple[int, float | None, bool, "ThresholdTree", "ThresholdTree"]


def brute_force_threshold_tree(
    X: object,
    y: object,
    *,
    lam: float,
    max_depth: int,
    sample_weight: object = None,
) -> tuple[ThresholdTree, float]:
    """Exact optimum of ``misclassified weight / total weight + lam * leaves`` over every tree of
    depth <= ``max_depth`` whose splits are thresholds on the raw values of ``X``.

    The split space is that of the exact numeric search (issue 23): on a column ``c``, a row
    goes to the *le* side iff ``x <= t`` for a threshold ``t`` between two consecutive distinct
    present values, its missing (NaN) rows going to the le side or to the gt side (both are
    tried when the column has a NaN cell), plus the split "present | missing". Categorical
    columns are the caller's business: pass their one-hot 0/1 indicators (a missing cell 0 in
    each, plus a 0/1 "is missing" column when there are missing cells).

    The recursion (docs/formulations-search-and-pruning.md §6.7) works on the raw values and on
    row subsets, memoised on (rows, depth),
    ``OPT(S, d) = min(leaf(S), min_split OPT(S_le, d-1) + OPT(S_gt, d-1))``, with no bound, no
    binarization and nothing shared with odtkit's searches. At a node the thresholds are taken
    between consecutive distinct present values *of the node's rows*: on ``S`` every threshold
    between consecutive values of the whole column either separates the present rows of ``S``
    exactly as one of these does, or sends all of them one way, which leaves the split
    "present | missing" (also tried, up to the order of the children, which does not change the
    objective) or a split with an empty side. **Splits with an empty side are skipped**: such a
    split costs one leaf more (the empty leaf: no error, ``lam``) on top of ``OPT(S, d-1)``,
    and ``OPT(S, d-1) >= OPT(S, d)``, so it can never beat the best tree without it; the
    searches may keep them, the optimum is the same. Values are compared in weight units
    (``mis + lam * W * leaves``, tolerance ``1e-9 W``); ties keep the tree with fewer leaves,
    then the first found (leaf first, then columns in order, thresholds ascending, missing gt
    before missing le, then "present | missing"). A leaf predicts its heaviest class, ties to
    the smallest code.

    Cost: tables of <= 10 rows x 3 columns at depth <= 3 take well under a second.

    Parameters
    ----------
    X : array-like of float, shape (n_samples, n_columns)
        Raw numeric values; NaN marks a missing cell. Infinite values are refused.
    y : array-like of class labels, shape (n_samples,)
        Encoded as odtkit encodes labels (sorted distinct values -> codes ``0..K-1``).
    lam : float
        Penalty per leaf, ``>= 0``.
    max_depth : int
        Largest number of splits on a root-to-leaf path.
    sample_weight : array-like of float, optional
        Non-negative row weights with a positive sum (default: all 1).

    Returns
    -------
    (tree, objective) : an optimal tree and its objective. ``tree`` is a class code (a leaf)
        or ``(column, threshold, missing_left, le, gt)``: with a float ``threshold`` the rows
        with ``x <= threshold`` go to ``le`` (``threshold`` is the largest value of the node's
        rows on that side, so the test is exact), the missing rows to ``le`` iff
        ``missing_left``; with ``threshold is None`` the present rows go to ``le`` and the
        missing ones to ``gt`` (``missing_left`` False). :func:`threshold_tree_predict`
        applies it to rows.
    """
    lam = check_lambda(lam)
    max_depth = check_depth(max_depth, allow_none=False)
    values = np.asarray(X, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got shape {values.shape}")
    if np.isinf(values).any():
        raise ValueError("X contains inf: thresholds need finite values (NaN marks missing)")
    codes, classes = encode_labels(y, "y")
    n = values.shape[0]
    if codes.shape != (n,) or n == 0:
        raise ValueError(f"y must have shape ({n},) with n > 0, got {codes.shape}")
    weights = check_sample_weight(sample_weight, n, positive_sum=True)
    w = [1.0] * n if weights is None else [float(v) for v in weights]
    label_of = [int(c) for c in codes]
    n_classes = len(classes)
    total = float(sum(w))
    penalty = lam * total
    tol = 1e-9 * total
    # plain Python lists: the subsets hold a handful of rows, where numpy's per-call cost rules
    columns = [[float(v) for v in values[:, c]] for c in range(values.shape[1])]

    def splits(
        rows: tuple[int, ...],
    ) -> Iterator[tuple[int, float | None, bool, tuple[int, ...], tuple[int, ...]]]:
        for c, column in enumerate(columns):
            present = [i for i in rows if column[i] == column[i]]  # NaN != NaN
            missing = tuple(i for i in rows if column[i] != column[i])
            distinct = sorted({column[i] for i in present})
            for t in distinct[:-1]:
                le = tuple(i for i in present if column[i] <= t)
                gt = tuple(i for i in present if column[i] > t)
                yield c, t, False, le, tuple(sorted(gt + missing))
                if missing:
                    yield c, t, True, tuple(sorted(le + missing)), gt
            if present and missing:
                yield c, None, False, tuple(present), missing

    @cache
    def opt(rows: tuple[int, ...], depth: int) -> tuple[float, int, ThresholdTree]:
        counts = [0.0] * n_classes
        for i in rows:
            counts[label_of[i]] += w[i]
        label = max(range(n_classes), key=lambda k: (counts[k], -k))
        best: tuple[float, int, ThresholdTree] = (sum(counts) - counts[label] + penalty, 1, label)
        if depth == 0:
            return best
        for c, t, missing_left, le, gt in splits(rows):
            lv, lleaves, ltree = opt(le, depth - 1)
            rv, rleaves, rtree = opt(gt, depth - 1)
            value, leaves = lv + rv, lleaves + rleaves
            if value < best[0] - tol or (abs(value - best[0]) <= tol and leaves < best[1]):
                best = (value, leaves, (c, t, missing_left, ltree, rtree))
        return best

    value, _, tree = opt(tuple(range(n)), max_depth)
    return tree, value / total


def threshold_tree_predict(tree: ThresholdTree, X: object) -> np.ndarray:
    """Class codes a tree of :func:`brute_force_threshold_tree` predicts for the rows of ``X``."""
    values = np.asarray(X, dtype=float)
    out = np.empty(values.shape[0], dtype=np.int64)

    def route(node: ThresholdTree, rows: np.ndarray) -> None:
        if not isinstance(node, tuple):
            out[rows] = node
            return
        column, threshold, missing_left, le, gt = node
        x = values[rows, column]
        absent = np.isnan(x)
        go_le = ~absent if threshold is None else (x <= threshold) | (absent & missing_left)
        route(le, rows[go_le])
        route(gt, rows[~go_le])

    route(tree, np.arange(values.shape[0]))
    return out


def threshold_tree_leaves(tree: ThresholdTree) -> int:
    """Number of leaves of a tree of :func:`brute_force_threshold_tree`."""
    if not isinstance(tree, tuple):
        return 1
    return threshold_tree_leaves(tree[3]) + threshold_tree_leaves(tree[4])


def random_numeric_table(
    seed: int,
    n_rows: int | None = None,
    n_columns: int | None = None,
    n_classes: int = 2,
    *,
    missing: float = 0.15,
    weights: str | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """A small raw numeric table for the threshold oracle's property tests, from ``seed``.

    Each column is drawn as one of: few small integers (many ties), a handful of fractional
    values, 0/1, or a constant; about half the columns then get missing cells (each cell NaN
    with probability ``missing``, so a column may end up all missing). Some rows are copies of
    others (duplicates, with the same or a different label). Labels are uniform or a noisy
    threshold rule on a random column. ``weights`` is None, ``"int"`` (1..3) or ``"float"``
    (uniform in [0.1, 2.5)).

    Returns
    -------
    (X, y, sample_weight) : float matrix (NaN = missing), int labels ``0..n_classes-1``
        (not all need occur), weights or None.
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 11)) if n_rows is None else n_rows
    m = int(rng.integers(1, 4)) if n_columns is None else n_columns
    X = np.empty((n, m))
    for c in range(m):
        kind = rng.integers(4)
        if kind == 0:
            X[:, c] = rng.integers(0, 4, size=n)
        elif kind == 1:
            pool = np.round(rng.normal(size=int(rng.integers(2, 6))), 2)
            X[:, c] = rng.choice(pool, size=n)
        elif kind == 2:
            X[:, c] = rng.integers(0, 2, size=n)
        else:
            X[:, c] = np.round(rng.normal(), 1)
        if rng.random() < 0.5:
            X[rng.random(n) < missing, c] = np.nan
    if n > 2 and rng.random() < 0.4:
        copies = rng.integers(1, n // 2 + 1)
        src, dst = rng.choice(n, size=2 * copies, replace=False).reshape(2, -1)
        X[dst] = X[src]
    if rng.random() < 0.5:
        y = rng.integers(0, n_classes, size=n)
    else:
        # a threshold rule on one column (its missing cells read as its smallest value)
        column = X[:, int(rng.integers(m))]
        filled = np.where(np.isnan(column), np.nanmin(column, initial=np.inf), column)
        y = (filled > np.median(filled)).astype(np.int64) % n_classes
        flip = rng.random(n) < 0.2
        y[flip] = rng.integers(0, n_classes, size=int(flip.sum()))
    w = None
    if weights == "int":
        w = rng.integers(1, 4, size=n).astype(float)
    elif weights == "float":
        w = rng.uniform(0.1, 2.5, size=n)
    elif weights is not None:
        raise ValueError(f"weights must be None, 'int' or 'float', got {weights!r}")
    return X, y.astype(np.int64), w

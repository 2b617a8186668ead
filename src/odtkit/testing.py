"""Independent truths for tests: brute-force oracles, fixed worked examples, random instances.

Nothing here shares code with the solvers it checks (no bounds, no bitsets, no caches), so an
agreement between a solver and the oracle is evidence, not a tautology.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from functools import cache
from typing import Any

import numpy as np

from odtkit._validation import check_depth, check_lambda
from odtkit.datasets import Dataset
from odtkit.tree import Tree, majority_label

__all__ = [
    "EXAMPLE_A_OPTIMA",
    "EXAMPLE_TREES_FAIR_OPTIMA",
    "EXAMPLE_TREES_PROTECTED",
    "LAMBDAS",
    "brute_force_fair_tree",
    "brute_force_rule_list",
    "brute_force_tree",
    "dataset_strategy",
    "enumerate_trees",
    "example_dataset_a",
    "example_dataset_trees",
    "planted_tree_dataset",
    "random_dataset",
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

    def structures(available: tuple[int, ...], depth: int) -> Iterator[Any]:
        yield None  # a leaf
        if depth == 0:
            return
        for f in available:
            rest = tuple(g for g in available if g != f)
            for left in structures(rest, depth - 1):
                for right in structures(rest, depth - 1):
                    yield (f, left, right)

    def n_leaves(s: Any) -> int:
        return 1 if s is None else n_leaves(s[1]) + n_leaves(s[2])

    def build(s: Any, labels: Iterator[int]) -> Tree:
        if s is None:
            return Tree.leaf(next(labels))
        return Tree.split(s[0], build(s[1], labels), build(s[2], labels))

    for s in structures(tuple(range(n_features)), max_depth):
        for labelling in itertools.product(range(n_classes), repeat=n_leaves(s)):
            yield build(s, iter(labelling))


def brute_force_fair_tree(
    dataset: Dataset, fairness: Any, *, lam: float, max_depth: int
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
    def vectors(rows_key: bytes, available: frozenset[int], depth: int) -> dict[bytes, Any]:
        """prediction vector on ``rows`` (int8 labels, -1 elsewhere) -> (leaves, tree)."""
        rows = np.frombuffer(rows_key, dtype=bool)
        out: dict[bytes, Any] = {}
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
    seed: int, n_samples: int, n_features: int, depth: int, noise: float
) -> tuple[Dataset, Tree]:
    """A hard instance for benchmarks: labels of a random complete tree, then label noise.

    Features are i.i.d. Bernoulli(1/2). The planted tree splits every node of depth < ``depth``
    on a feature not yet used on its path (uniformly drawn), and its leaves predict 0 or 1
    (uniformly); each label is then flipped with probability ``noise``. Reproducible from
    ``seed``.

    Returns
    -------
    (dataset, planted) : the binary dataset (named ``planted-n x p-d-noise-seed``) and the
    planted tree.
    """
    depth = check_depth(depth)
    if depth is None or depth > n_features:
        raise ValueError(f"depth must be an integer <= n_features, got {depth!r}")
    if not 0.0 <= noise <= 0.5:
        raise ValueError(f"noise must lie in [0, 0.5], got {noise!r}")
    rng = np.random.default_rng(seed)
    X = rng.random((n_samples, n_features)) < 0.5

    def grow(level: int, used: frozenset[int]) -> Tree:
        if level == depth:
            return Tree.leaf(int(rng.integers(2)))
        feature = int(rng.choice([j for j in range(n_features) if j not in used]))
        used = used | {feature}
        return Tree.split(feature, grow(level + 1, used), grow(level + 1, used))

    planted = grow(0, frozenset())
    y = planted.predict(X).astype(np.int64)
    y ^= rng.random(n_samples) < noise
    name = f"planted-{n_samples}x{n_features}-d{depth}-{noise:g}-{seed}"
    Xc = np.ascontiguousarray(X)
    Xc.setflags(write=False)
    y.setflags(write=False)
    return Dataset(Xc, y, np.arange(2), tuple(f"x{j}" for j in range(n_features)), name), planted


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
) -> tuple[Any, float]:
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
        literal_sets = [((r, 1),) for r in range(truth.shape[1])]
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

"""Fuzzing of the native bindings (issue 13 part 6), and the reproducers of what it found.

The CI step of ``.ci/run`` also runs this file against a build with AddressSanitizer and
UndefinedBehaviorSanitizer (``-Ccmake.define.ODTKIT_SANITIZE=ON``), where an out-of-bounds
access, a use after free or undefined behaviour aborts instead of passing unnoticed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from odtkit import Fairness, _native, metrics
from odtkit.core import search_rule_list, search_tree
from odtkit.core._problem import POLICIES, decode_tree
from odtkit.core.rules import RULE_BOUNDS, SYMMETRY_MAPS, _decode_rule_list
from odtkit.core.search import BOUNDS, FAIR_BOUNDS
from odtkit.datasets import Dataset
from odtkit.rulelist import RuleList
from odtkit.testing import (
    brute_force_fair_tree,
    brute_force_rule_list,
    brute_force_tree,
)
from odtkit.tree import Tree

SEARCHES = {
    "dp": _native.search_dp,
    "dp_anytime": _native.search_dp_anytime,
    "dp_queue": _native.search_dp_queue,
    "bnb": _native.search_bnb,
    "corels": _native.search_corels,
}


# ------------------------------------------------------------------------------------------
# Reproducers
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SEARCHES)
def test_a_problem_without_features_is_a_single_leaf(name: str) -> None:
    """0 features: bnb's arenas were asked for runs of 0 words before holding any page, and
    read pages_.back() of an empty vector (a segfault in the release build)."""
    problem = _native.Problem(
        np.zeros((3, 0), dtype=bool), np.array([0, 1, 1], dtype=np.int32), np.ones(3), 2
    )
    out = SEARCHES[name](problem, _native.SearchConfig(lam=0.01))
    assert out.tree == [-2]
    assert out.status.name == "optimal"
    # a tree pays lam for its leaf, a rule list nothing for its default rule
    assert out.objective == pytest.approx(1 / 3 + (0.0 if name == "corels" else 0.01))
    assert out.lower_bound == pytest.approx(out.objective)


@pytest.mark.parametrize(
    ("n", "weight"), [(0, 1.0), (3, 0.0), (3, 1e308)], ids=["no-rows", "zero", "overflow"]
)
def test_a_problem_whose_weights_do_not_sum_to_a_positive_number_is_refused(
    n: int, weight: float
) -> None:
    """dp, the anytime dp and the fair dp answered NaN with status 'optimal' on 0 rows or all
    weights 0 (bnb and corels refused them), and 1e308 * 3 overflowed the total to inf."""
    X = np.zeros((n, 2), dtype=bool)
    with pytest.raises(ValueError, match="weights"):
        _native.Problem(X, np.zeros(n, dtype=np.int32), np.full(n, weight), 2)


@pytest.mark.parametrize("name", ["dp", "dp_anytime", "dp_queue", "bnb"])
def test_the_largest_depth_limit_is_no_limit(name: str) -> None:
    """max_depth = 2**31 - 1 (what Python's int32 allows) overflowed `depth + 2` in the memo
    keys of dp and dp queue (undefined behaviour, reported by UBSan)."""
    rng = np.random.default_rng(0)
    problem = _native.Problem(
        np.ascontiguousarray(rng.random((12, 4)) < 0.5),
        rng.integers(0, 2, 12).astype(np.int32),
        np.ones(12),
        2,
    )
    deep, free = (
        SEARCHES[name](problem, _native.SearchConfig(lam=0.01, max_depth=d))
        for d in (2**31 - 1, -1)
    )
    assert deep.status.name == free.status.name == "optimal"
    assert deep.objective == pytest.approx(free.objective, abs=TOL)


def test_a_penalty_that_overflows_in_count_units_is_refused() -> None:
    """lam = 1e308 on 12 rows: lam * total weight is inf. Every objective came back inf and
    dp queue looped forever (in the release build too); now each entry point refuses it, and
    the largest penalty that fits still gives the best single leaf."""
    rng = np.random.default_rng(0)
    problem = _native.Problem(
        np.ascontiguousarray(rng.random((12, 4)) < 0.5),
        rng.integers(0, 2, 12).astype(np.int32),
        np.ones(12),
        2,
    )
    for search in SEARCHES.values():
        with pytest.raises(ValueError, match="lam"):
            search(problem, _native.SearchConfig(lam=1e308))
        out = search(problem, _native.SearchConfig(lam=1e300))
        assert out.status.name == "optimal" and len(out.tree) == 1
    with pytest.raises(ValueError, match="lam"):
        _native.greedy_tree(problem, 1e308)
    with pytest.raises(ValueError, match="lam"):
        _native.search_fair_dp(
            problem, np.zeros((12, 1)), 0.1, 1, _native.SearchConfig(lam=1e308, max_depth=2)
        )


def test_anytime_deepening_stops_at_the_number_of_features() -> None:
    """The anytime dp deepened up to max_depth - 1: at max_depth = 2**31 - 1 with a root that
    every round prunes at once (lam 2, upper bound 0) it ran 2**31 rounds without a tick, 46 s
    past a 0.1 s time limit. No path splits on more features than there are."""
    rng = np.random.default_rng(2)
    problem = _native.Problem(
        np.ascontiguousarray(rng.random((9, 7)) < 0.5),
        rng.integers(0, 2, 9).astype(np.int32),
        np.ones(9),
        2,
    )
    for lam, upper_bound in [(2.0, 0.0), (0.01, math.inf)]:
        config = _native.SearchConfig(
            lam=lam, max_depth=2**31 - 1, time_limit=0.1, upper_bound=upper_bound
        )
        out = _native.search_dp_anytime(problem, config)
        assert out.stats["deepening_depth"] <= problem.n_features
        free = _native.search_dp(problem, _native.SearchConfig(lam=lam))
        if out.status.name == "optimal":
            assert out.objective == pytest.approx(free.objective, abs=TOL)


# ------------------------------------------------------------------------------------------
# Random instances
# ------------------------------------------------------------------------------------------

STATUSES = {"optimal", "time_limit", "node_limit", "memory_limit", "interrupted"}
TOL = 1e-9
# the oracles enumerate every tree (rule list): only on instances this small
ORACLE_ROWS, ORACLE_FEATURES = 8, 4
SWITCHES = {
    "dp": BOUNDS["dp"],
    "dp_anytime": BOUNDS["dp"],
    "dp_queue": BOUNDS["dp"],
    "bnb": BOUNDS["bnb"],
    "corels": RULE_BOUNDS,
}


def fuzz(examples: int) -> Any:
    """Hypothesis settings of these tests: ``examples`` cases, no deadline (the sanitizer build
    runs several times slower), every health check off (draws are deliberately varied)."""
    return settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))


#: Examples of the fast tests (the whole file runs in well under a minute) and of the slow ones.
FAST, LONG = fuzz(60), fuzz(2000)


def _weights(draw: st.DrawFn, n: int) -> np.ndarray:
    """Ones, zeros among ones, fractions, 1e-300, 1e300, or a mix of the extremes."""
    kind = draw(st.sampled_from(["ones", "zeros", "fractional", "tiny", "huge", "mixed"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "ones":
        w = np.ones(n)
    elif kind == "zeros":
        w = (rng.random(n) < 0.6).astype(float)
    elif kind == "fractional":
        w = rng.uniform(0.0, 3.0, size=n)
    elif kind == "tiny":
        w = np.full(n, 1e-300)
    elif kind == "huge":
        w = np.full(n, 1e300)
    else:
        w = rng.choice([0.0, 1e-300, 0.37, 1.0, 1e300], size=n)
    if not w.sum() > 0:
        w[0] = 1.0
    return w


#: Tiny limits: they stop a search at its first check, or a few nodes in.
LIMITS = {
    "node": (1, 2, 5, 50, 2**62),
    "time": (1e-9, 1e-3, 0.05, math.inf),
    "memory": (1e-6, 0.01, 1.0, math.inf),
}
#: Instance sizes: small enough for the oracles, medium (limits bite), 2,000 features.
SIZES = ("oracle", "oracle", "medium", "wide")


@st.composite
def instances(
    draw: st.DrawFn, n_classes: int | None = None, sizes: tuple[str, ...] = SIZES
) -> Dataset:
    """Random binary data: 1 row to 60, 0 to 12 features or 2,000, 1-4 classes, rows and
    columns duplicated on purpose, any weights of :func:`_weights`. Half of the instances are
    small enough for the oracles (at most 8 rows x 4 features)."""
    size = draw(st.sampled_from(sizes))
    if size == "oracle":
        n, p = draw(st.integers(1, ORACLE_ROWS)), draw(st.integers(0, ORACLE_FEATURES))
    elif size == "medium":
        n, p = draw(st.integers(9, 60)), draw(st.integers(5, 12))
    else:
        n, p = draw(st.integers(1, 30)), 2000
    k = n_classes if n_classes is not None else draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    # rows drawn from a small pool repeat, and so do columns copied from others
    pool = rng.random((int(rng.integers(1, n + 1)), p)) < rng.uniform(0.1, 0.9)
    X = pool[rng.integers(0, pool.shape[0], size=n)]
    if p >= 2 and rng.random() < 0.5:
        X[:, rng.integers(0, p, size=p // 2)] = X[:, rng.integers(0, p, size=p // 2)]
    y = rng.integers(0, k, size=n).astype(np.int64)
    X = np.ascontiguousarray(X)
    return Dataset(X, y, np.arange(k), tuple(f"x{j}" for j in range(p)), "fuzz", _weights(draw, n))


def _problem(data: Dataset) -> Any:
    return _native.Problem(
        np.ascontiguousarray(data.X),
        data.y.astype(np.int32),
        np.ascontiguousarray(data.weights),
        int(data.n_classes),
    )


def _random_tree(draw: st.DrawFn, p: int, k: int, depth: int) -> list[int]:
    """A pre-order encoded tree over p features and k classes, at most ``depth`` deep."""
    if depth == 0 or p == 0 or draw(st.booleans()):
        return [-(draw(st.integers(0, k - 1)) + 1)]
    f = draw(st.integers(0, p - 1))
    return [f, *_random_tree(draw, p, k, depth - 1), *_random_tree(draw, p, k, depth - 1)]


@st.composite
def configs(draw: st.DrawFn, name: str, data: Dataset) -> dict[str, Any]:
    """SearchConfig keywords: lam, depth, tiny limits, every switch, policy, symmetry,
    upper_bound (0, a random value or inf: the oracle cases add below/at/above the optimum) and
    an initial tree (valid, malformed or too deep)."""
    p, k = data.n_features, int(data.n_classes)
    options: dict[str, Any] = {
        "lam": draw(st.sampled_from([0.0, 1e-4, 0.01, 0.05, 0.3, 2.0, 1e300, 1e308])),
        "policy": draw(st.sampled_from(POLICIES)),
        "symmetry": draw(st.sampled_from(SYMMETRY_MAPS)),
        "bounds": draw(st.dictionaries(st.sampled_from(SWITCHES[name]), st.booleans())),
    }
    depth = draw(st.sampled_from([None, 0, 1, 2, 3, 2**31 - 1]))
    if name != "corels" and depth is not None:
        options["max_depth"] = depth
    for limit in draw(st.sampled_from([(), (), ("node",), ("time",), ("memory",), LIMITS])):
        options[f"{limit}_limit" if limit != "memory" else "memory_limit_mb"] = draw(
            st.sampled_from(LIMITS[limit])
        )
    if p > ORACLE_FEATURES or data.n_samples > ORACLE_ROWS:
        # beyond the oracle's reach an unlimited search can take seconds: keep examples short
        options["time_limit"] = min(options.get("time_limit", 0.1), 0.1)
        if p > 50:
            options["node_limit"] = min(options.get("node_limit", 20), 20)
    options["upper_bound"] = draw(st.sampled_from([0.0, 0.3, 1e308, math.inf, math.inf]))
    if name != "corels":
        kind = draw(st.sampled_from(["none", "none", "valid", "malformed", "too_deep"]))
        limit = depth if depth is not None and depth < 4 else 3
        if kind == "valid":
            options["initial_tree"] = _random_tree(draw, p, k, limit)
        elif kind == "malformed":
            options["initial_tree"] = draw(
                st.sampled_from([[0], [-(k + 1)], [p, -1, -1], [-1, -1], [-1, 0]])
            )
        elif kind == "too_deep" and p > 0:
            tree = [-1]
            for _ in range(limit + 1):
                tree = [0, *tree, -1]
            options["initial_tree"] = tree
    return options


def _objective(model: Any, data: Dataset, lam: float) -> float:
    return metrics.objective(model, data, lam=lam)


def _check_output(
    name: str, out: _native.SearchOutput, data: Dataset, options: dict[str, Any]
) -> Any:
    """The certificate of a native answer; returns the decoded model."""
    lam = options["lam"]
    assert out.status.name in STATUSES, out.status.name
    if name == "corels":
        prefix, labels, default = _decode_rule_list(out.tree)
        model = RuleList([(((r, 1),), lab) for r, lab in zip(prefix, labels, strict=True)], default)
        assert all(0 <= r < data.n_features for r in prefix)
    else:
        model = decode_tree(out.tree)
        if options.get("max_depth") is not None:
            assert model.depth <= options["max_depth"]
        assert all(0 <= f < data.n_features for f in _features(model))
    assert all(0 <= lab < data.n_classes for lab in _labels(model))
    value = _objective(model, data, lam)
    scale = max(1.0, abs(value))
    assert out.objective == pytest.approx(value, abs=TOL * scale)
    assert out.lower_bound <= value + TOL * scale
    assert 0.0 <= out.lower_bound or out.lower_bound == pytest.approx(0.0, abs=TOL)
    if out.status.name == "optimal":
        assert out.lower_bound == pytest.approx(value, abs=TOL * scale)
    return model


def _features(tree: Tree) -> list[int]:
    return [] if tree.is_leaf else [tree.feature, *_features(tree.left), *_features(tree.right)]


def _labels(model: Any) -> list[int]:
    if isinstance(model, RuleList):
        return [lab for _, lab in model.rules] + [model.default_label]
    if model.is_leaf:
        return [model.label]
    return _labels(model.left) + _labels(model.right)


def _oracle(name: str, data: Dataset, options: dict[str, Any]) -> float | None:
    """The optimum by enumeration on instances of at most 8 rows x 4 features, else None."""
    if data.n_samples > ORACLE_ROWS or data.n_features > ORACLE_FEATURES:
        return None
    if name == "corels":
        return brute_force_rule_list(
            data, lam=options["lam"], antecedents=data.X, max_length=data.n_features
        )[1]
    depth = options.get("max_depth")
    return brute_force_tree(
        data, lam=options["lam"], max_depth=data.n_features if depth is None else depth
    )[1]


def _allowed_error(name: str, data: Dataset, options: dict[str, Any], error: Exception) -> bool:
    """Whether ``error`` is a documented refusal of this input, with a message naming why."""
    message = str(error)
    if isinstance(error, ValueError) and "lam is too large" in message:
        return not math.isfinite(options["lam"] * data.total_weight)
    if isinstance(error, ValueError) and "initial_tree" in message:
        return "initial_tree" in options
    if isinstance(error, ValueError) and name == "corels" and "binary labels" in message:
        return data.n_classes != 2
    return False


@pytest.mark.parametrize("name", SEARCHES)
@fuzz(150)
@given(data=st.data())
def test_native_searches_return_a_valid_certificate(name: str, data: st.DataObject) -> None:
    _native_search_case(name, data)


@pytest.mark.slow
@pytest.mark.parametrize("name", SEARCHES)
@LONG
@given(data=st.data())
def test_native_searches_return_a_valid_certificate_long(name: str, data: st.DataObject) -> None:
    _native_search_case(name, data)


def _native_search_case(name: str, data: st.DataObject) -> None:
    dataset = data.draw(instances(n_classes=2 if name == "corels" else None))
    options = data.draw(configs(name, dataset))
    optimum = _oracle(name, dataset, options)
    if optimum is not None and data.draw(st.booleans()):
        # an upper bound just below, at or just above the optimum
        options["upper_bound"] = max(0.0, optimum + data.draw(st.sampled_from([-1e-3, 0.0, 1e-3])))
    problem = _problem(dataset)
    try:
        out = SEARCHES[name](problem, _native.SearchConfig(**options))
    except ValueError as error:
        assert _allowed_error(name, dataset, options, error), (error, options)
        event("refused")
        return
    event(f"status {out.status.name}, oracle {optimum is not None}")
    _check_output(name, out, dataset, options)
    if optimum is not None:
        scale = max(1.0, optimum)
        assert out.lower_bound <= optimum + TOL * scale
        if out.status.name == "optimal":
            assert out.objective == pytest.approx(optimum, abs=TOL * scale)


# ------------------------------------------------------------------------------------------
# The public wrappers
# ------------------------------------------------------------------------------------------


def _public_options(draw: st.DrawFn, data: Dataset) -> dict[str, Any]:
    small = data.n_samples <= ORACLE_ROWS and data.n_features <= ORACLE_FEATURES
    options: dict[str, Any] = {"lam": draw(st.sampled_from([0.0, 0.01, 0.05, 0.3]))}
    for limit in draw(st.sampled_from([(), (), ("node",), ("time",), ("memory",), LIMITS])):
        options[f"{limit}_limit" if limit != "memory" else "memory_limit_mb"] = draw(
            st.sampled_from(LIMITS[limit])
        )
    if not small:
        options["time_limit"] = min(options.get("time_limit", 0.1), 0.1)
        if data.n_features > 50:
            options["node_limit"] = min(options.get("node_limit", 20), 20)
    return options


@fuzz(100)
@given(data=st.data())
def test_search_tree_returns_a_valid_certificate(data: st.DataObject) -> None:
    _search_tree_case(data)


@pytest.mark.slow
@LONG
@given(data=st.data())
def test_search_tree_returns_a_valid_certificate_long(data: st.DataObject) -> None:
    _search_tree_case(data)


def _search_tree_case(data: st.DataObject) -> None:
    dataset = data.draw(instances())
    options = _public_options(data.draw, dataset)
    method = data.draw(st.sampled_from(["dp", "bnb"]))
    options["method"] = method
    options["max_depth"] = data.draw(st.sampled_from([None, 0, 1, 2, 3]))
    options["strategy"] = (
        data.draw(st.sampled_from([None, "recursive", "queue", "anytime"]))
        if method == "dp"
        else None
    )
    options["bounds"] = data.draw(st.dictionaries(st.sampled_from(BOUNDS[method]), st.booleans()))
    options["policy"] = data.draw(st.sampled_from(POLICIES))
    optimum = _oracle("dp", dataset, options)
    offsets = [None, 0.0, 0.3] + ([-1e-3, 0.0, 1e-3] if optimum is not None else [])
    offset = data.draw(st.sampled_from(offsets))
    if offset is not None:
        options["upper_bound"] = max(0.0, (optimum or 0.0) + offset)
    try:
        result = search_tree(dataset, **options)
    except ValueError as error:
        # the documented refusals; each message names the argument
        assert "max_depth" in str(error) or "features" in str(error), (error, options)
        return
    _check_result(result, dataset, options["lam"], optimum)
    if options["max_depth"] is not None:
        assert result.model.depth <= options["max_depth"]


@FAST
@given(data=st.data())
def test_search_rule_list_returns_a_valid_certificate(data: st.DataObject) -> None:
    dataset = data.draw(instances(n_classes=2))
    options = _public_options(data.draw, dataset)
    options["max_cardinality"] = data.draw(st.integers(1, 2))
    options["policy"] = data.draw(st.sampled_from(POLICIES))
    options["symmetry"] = data.draw(st.sampled_from(SYMMETRY_MAPS))
    options["bounds"] = data.draw(st.dictionaries(st.sampled_from(RULE_BOUNDS), st.booleans()))
    if dataset.n_features > 50:
        options["max_cardinality"] = 1
    use_matrix = data.draw(st.booleans())
    if use_matrix:
        options["antecedents"] = dataset.X
    try:
        result = search_rule_list(dataset, **options)
    except ValueError as error:
        assert "feature" in str(error), (error, options)
        return
    optimum = None
    if use_matrix and dataset.n_samples <= ORACLE_ROWS and dataset.n_features <= ORACLE_FEATURES:
        optimum = _oracle("corels", dataset, {"lam": options["lam"]})
    check_on = dataset
    if not use_matrix:
        # mined antecedents are literal conjunctions over the dataset's own features
        assert all(0 <= f < dataset.n_features for a, _ in result.model.rules for f, _ in a)
    _check_result(result, check_on, options["lam"], optimum)


def _check_result(result: Any, data: Dataset, lam: float, optimum: float | None) -> None:
    assert str(result.status) in STATUSES, result.status
    value = metrics.objective(result.model, data, lam=lam)
    scale = max(1.0, value)
    assert result.objective == pytest.approx(value, abs=TOL * scale)
    assert result.lower_bound <= result.objective + TOL * scale
    if optimum is not None:
        assert result.lower_bound <= optimum + TOL * scale
        if result.status == "optimal":
            assert result.objective == pytest.approx(optimum, abs=TOL * scale)


@fuzz(60)
@given(data=st.data())
def test_fair_search_returns_a_fair_tree_and_a_valid_certificate(data: st.DataObject) -> None:
    dataset = data.draw(instances(sizes=("oracle", "oracle", "medium")))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    # every group and the positive class present (else the statement is refused: see below)
    protected = rng.permutation(np.arange(dataset.n_samples) % data.draw(st.integers(2, 3)))
    present = np.unique(dataset.y)
    fairness = Fairness(
        notion=data.draw(st.sampled_from(["sp", "pe", "eopp", "eodds"])),
        protected=protected,
        delta=data.draw(st.sampled_from([0.0, 0.1, 0.5, 1.0])),
        positive_class=int(data.draw(st.sampled_from(list(present)))),
    )
    options = _public_options(data.draw, dataset)
    depth = data.draw(st.integers(0, 2))
    options["bounds"] = data.draw(st.dictionaries(st.sampled_from(FAIR_BOUNDS), st.booleans()))
    try:
        result = search_tree(dataset, max_depth=depth, fairness=fairness, **options)
    except ValueError as error:
        # e.g. a positive class or a protected group without rows: nothing to constrain
        assert any(a in str(error) for a in ("positive_class", "protected")), error
        event(f"refused: {str(error)[:40]}")
        return
    optimum = None
    if dataset.n_samples <= ORACLE_ROWS and dataset.n_features <= ORACLE_FEATURES:
        optimum = brute_force_fair_tree(dataset, fairness, lam=options["lam"], max_depth=depth)[1]
    _check_result(result, dataset, options["lam"], optimum)
    assert metrics.is_fair(result.model, dataset, fairness)
    assert result.model.depth <= depth


# ------------------------------------------------------------------------------------------
# Wrong arrays, the greedy tree, the bitsets and the closure min cut
# ------------------------------------------------------------------------------------------


def _spoil(array: np.ndarray, how: str) -> np.ndarray:
    """``array`` made non-contiguous, Fortran-ordered, of another dtype or dimension."""
    if how == "strided":
        wide = np.repeat(array, 2, axis=0)
        return wide[::2]
    if how == "fortran":
        return np.asfortranarray(array) if array.ndim == 2 and array.shape[1] > 1 else array.T
    if how == "dtype":
        other = {"b": np.uint8, "i": np.int64 if array.itemsize == 4 else np.int32}.get(
            array.dtype.kind, np.float32
        )
        with np.errstate(over="ignore"):  # 1e300 as float32 is inf: still the wrong dtype
            return array.astype(other)
    return array[..., None]  # one dimension too many


@FAST
@given(data=st.data())
def test_problem_rejects_wrong_arrays_with_a_type_error(data: st.DataObject) -> None:
    dataset = data.draw(instances(sizes=("oracle", "medium")).filter(lambda d: d.n_samples > 1))
    arrays = {
        "X": np.ascontiguousarray(dataset.X),
        "y": dataset.y.astype(np.int32),
        "weights": np.ascontiguousarray(dataset.weights),
    }
    name = data.draw(st.sampled_from(sorted(arrays)))
    how = data.draw(st.sampled_from(["strided", "fortran", "dtype", "ndim"]))
    spoilt = _spoil(arrays[name], how)
    if spoilt.flags.c_contiguous and spoilt.dtype == arrays[name].dtype:
        if spoilt.ndim == arrays[name].ndim:
            return  # nothing spoilt (a 1-d or single-column array is contiguous both ways)
    arrays[name] = spoilt
    with pytest.raises(TypeError):
        _native.Problem(arrays["X"], arrays["y"], arrays["weights"], int(dataset.n_classes))


@FAST
@given(data=st.data())
def test_greedy_tree_is_a_valid_tree_no_worse_than_a_leaf(data: st.DataObject) -> None:
    dataset = data.draw(instances())
    lam = data.draw(st.sampled_from([0.0, 0.01, 0.3]))
    depth = data.draw(st.sampled_from([-1, 0, 1, 3]))
    tree = decode_tree(_native.greedy_tree(_problem(dataset), lam, depth))
    if depth >= 0:
        assert tree.depth <= depth
    assert all(0 <= f < dataset.n_features for f in _features(tree))
    best_leaf = min(
        metrics.objective(Tree.leaf(k), dataset, lam=lam) for k in range(dataset.n_classes)
    )
    assert metrics.objective(tree, dataset, lam=lam) <= best_leaf + TOL * max(1.0, best_leaf)


@FAST
@given(
    st.lists(st.booleans(), max_size=200),
    st.lists(st.booleans(), max_size=200),
)
def test_bitsets_agree_with_numpy(a: list[bool], b: list[bool]) -> None:
    n = min(len(a), len(b))
    x, z = np.array(a[:n], dtype=bool), np.array(b[:n], dtype=bool)
    bx, bz = _native.Bitset.from_numpy(x), _native.Bitset.from_numpy(z)
    assert len(bx) == n and bx.n_words == (n + 63) // 64
    assert bx.count() == x.sum() and bx.any() == x.any()
    assert bx.count_and(bz) == (x & z).sum()
    for got, want in [
        (bx & bz, x & z),
        (bx | bz, x | z),
        (bx ^ bz, x ^ z),
        (~bx, ~x),
        (bx.and_not(bz), x & ~z),
    ]:
        np.testing.assert_array_equal(got.to_numpy(), want)
        assert got.count() == want.sum()  # the tail beyond n stays zero
    assert (bx == _native.Bitset.from_numpy(x.copy())) and _native.Bitset(n, True).count() == n


def _cut_value(source_cap: np.ndarray, sink_cap: np.ndarray, side: np.ndarray) -> int:
    return int(source_cap[~side].sum() + sink_cap[side].sum())


@FAST
@given(data=st.data())
def test_closure_min_cut_is_a_closed_minimum_cut(data: st.DataObject) -> None:
    n = data.draw(st.integers(0, 9))
    m = data.draw(st.integers(0, 20)) if n else 0
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    top = data.draw(st.sampled_from([1, 10, 2**40]))
    source_cap = rng.integers(0, top, size=n, dtype=np.int64)
    sink_cap = rng.integers(0, top, size=n, dtype=np.int64)
    tails = rng.integers(0, max(n, 1), size=m, dtype=np.int32)
    heads = rng.integers(0, max(n, 1), size=m, dtype=np.int32)
    bad = data.draw(st.sampled_from(["none", "none", "none", "arc", "negative", "huge"]))
    if bad == "arc" and m:
        heads[0] = data.draw(st.sampled_from([-1, n, 2**31 - 1]))
    elif bad == "negative" and n:
        sink_cap[0] = -1
    elif bad == "huge" and n:
        source_cap[0] = 2**62
    limit = data.draw(st.sampled_from([0.0, 1e-9]))
    algorithm = data.draw(st.sampled_from(["auto", "dinic", "push_relabel", "boykov_kolmogorov"]))
    try:
        out = _native.closure_min_cut(
            source_cap, sink_cap, tails, heads, time_limit=limit, algorithm=algorithm
        )
    except ValueError as error:
        assert bad != "none" and any(w in str(error) for w in ("capacities", "arc")), error
        return
    side = out["source_side"].astype(bool)
    assert side.shape == (n,)
    # closed: an infinite arc never leaves the source side
    assert not np.any(side[tails] & ~side[heads])
    assert out["flow"] <= out["cut"] == _cut_value(source_cap, sink_cap, side)
    assert out["status"] in STATUSES
    if out["status"] == "optimal":
        assert out["flow"] == out["cut"]
        # brute force over every closed source side
        best = min(
            _cut_value(source_cap, sink_cap, s)
            for s in (
                np.array([(mask >> v) & 1 for v in range(n)], dtype=bool) for mask in range(2**n)
            )
            if not np.any(s[tails] & ~s[heads])
        )
        assert out["cut"] == best
        # the same minimal source side as Dinic (ties go to pruning whatever the algorithm)
        dinic = _native.closure_min_cut(source_cap, sink_cap, tails, heads, algorithm="dinic")
        np.testing.assert_array_equal(out["source_side"], dinic["source_side"])


@pytest.mark.parametrize("how", ["strided", "fortran", "dtype", "ndim"])
def test_fair_search_and_min_cut_reject_wrong_arrays_with_a_type_error(how: str) -> None:
    rng = np.random.default_rng(1)
    problem = _native.Problem(
        np.ascontiguousarray(rng.random((6, 3)) < 0.5),
        rng.integers(0, 2, 6).astype(np.int32),
        np.ones(6),
        2,
    )
    coefficients = np.ascontiguousarray(rng.normal(size=(6, 2)))
    with pytest.raises(TypeError):
        _native.search_fair_dp(
            problem, _spoil(coefficients, how), 0.1, 1, _native.SearchConfig(max_depth=2)
        )
    caps = [np.arange(4, dtype=np.int64), np.arange(4, dtype=np.int64)[::-1].copy()]
    arcs = [np.array([0, 1, 2], dtype=np.int32), np.array([1, 2, 3], dtype=np.int32)]
    for k in range(4):
        arrays = caps + arcs
        arrays[k] = _spoil(arrays[k], how)
        if how == "fortran":
            arrays[k] = np.repeat(arrays[k], 2)[::2]  # a 1-d array is contiguous both ways
        with pytest.raises(TypeError):
            _native.closure_min_cut(*arrays)

"""The Python face of the exact search over every threshold (``odtkit.core.search_numeric``).

Nothing here needs the native search: the native columns, the mapping of native splits
``(column, rank, missing_le)`` back to Binarizer features, the restricted Binarizer and the
start conversion are checked against a router that applies the native split semantics to the
raw values directly (``_raw_route``, written from the pinned contract), and the whole function
runs end to end on a fake ``_native.search_numeric`` that returns a chosen answer.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pandas as pd
import pytest

from odtkit import _native, search_numeric, search_tree
from odtkit.core import numeric as numeric_module
from odtkit.core.numeric import STARTS, decode_answer, encode_start, native_columns
from odtkit.datasets import Binarizer, Dataset
from odtkit.tree import Tree

# -- a small raw table with every kind of column ------------------------------------------------


def _frame() -> pd.DataFrame:
    nan = np.nan
    return pd.DataFrame(
        {
            "a": [1.5, 2.0, 2.0, 3.0, nan, 7.0, 1.5, nan, 3.0, 0.5],  # ties and missing
            "b": [0.1, 0.4, 0.3, 0.2, 0.9, 0.1, 0.5, 0.6, 0.7, 0.8],  # numeric, no missing
            "bin": [0.0, 1.0, nan, 1.0, 0.0, 1.0, 0.0, nan, 1.0, 0.0],  # 0/1 with missing
            "flag": [True, False, True, True, False, False, True, False, True, False],  # 0/1
            "cat": ["r", "g", "b", "r", None, "g", "b", "r", None, "g"],  # one-hot, missing
            "kind": ["x", "y", "x", "y", "x", "y", "x", "y", "x", "x"],  # one-hot
            "half": [5.0, nan, 5.0, 5.0, nan, 5.0, 5.0, 5.0, nan, 5.0],  # constant + missing
            "const": [4.0] * 10,  # constant: no split
            "gone": [nan] * 10,  # dropped: no split
            "k": [1, 2, 3, 1, 2, 3, 1, 2, 3, 1],  # numeric, one-hot through categorical=
        }
    )


Y = np.array(["p", "q", "p", "q", "q", "p", "r", "q", "p", "r"])


def _fitted(frame: pd.DataFrame) -> Binarizer:
    with pytest.warns(UserWarning, match="no present value"):
        return Binarizer(categorical=["k"]).fit(frame)


def _raw_route(values: np.ndarray, splits: list, code: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(leaf number, predicted label) of every row, applying the native split semantics.

    Split ``(c, k, missing_le)`` on the distinct present values ``v`` of column ``c``: rank
    ``k <= D-2`` sends ``x <= v_k`` (and NaN iff ``missing_le``) to its first child; rank
    ``D-1`` sends the present rows there and the missing ones to the second child.
    """
    n = values.shape[0]
    leaf = np.full(n, -1)
    label = np.full(n, -1)
    pos = 0
    count = 0

    def walk(rows: np.ndarray) -> None:
        nonlocal pos, count
        v = code[pos]
        pos += 1
        if v < 0:
            leaf[rows] = count
            label[rows] = -v - 1
            count += 1
            return
        c, k, missing_le = splits[v]
        x = values[:, c]
        nan = np.isnan(x)
        distinct = np.unique(x[~nan])
        if k == distinct.size - 1:
            assert missing_le == 0 and nan.any()
            le = ~nan
        else:
            with np.errstate(invalid="ignore"):
                le = (x <= distinct[k]) | (nan & bool(missing_le))
        walk(rows & le)
        walk(rows & ~le)

    walk(np.ones(n, dtype=bool))
    assert pos == len(code)
    return leaf, label


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = np.unique(np.column_stack([a, b]), axis=0)
    return pairs.shape[0] == np.unique(a).size == np.unique(b).size


def _every_split(columns) -> list[tuple[int, int, int]]:
    out = []
    for c, distinct in enumerate(columns.distinct):
        nan = bool(columns.has_nan[c])
        for k in range(distinct.size - 1):
            out.append((c, k, 0))
            if nan:
                out.append((c, k, 1))
        if nan:
            out.append((c, distinct.size - 1, 0))
    return out


def _answer(
    splits: list,
    code: list[int],
    objective: float = 0.0,
    lower_bound: float = 0.0,
    status: str = "optimal",
    **extra,
) -> _native.SearchOutput:
    return _native.SearchOutput(
        tree=list(code),
        objective=objective,
        lower_bound=lower_bound,
        status=_native.SearchStatus[status],
        split_column=[s[0] for s in splits],
        split_rank=[s[1] for s in splits],
        split_missing_le=[s[2] for s in splits],
        **extra,
    )


# -- the native columns -------------------------------------------------------------------------


def test_native_columns_of_every_kind() -> None:
    frame = _frame()
    binarizer = _fitted(frame)
    columns = native_columns(binarizer, frame)
    roles = [(binarizer._spec[i][0], role, level) for i, role, level in columns.sources]
    assert roles == [
        ("a", "values", None),
        ("b", "values", None),
        ("bin", "values", None),
        ("flag", "values", None),
        ("cat", "level", "b"),
        ("cat", "level", "g"),
        ("cat", "level", "r"),
        ("cat", "missing", None),
        ("kind", "level", "x"),
        ("kind", "level", "y"),
        ("half", "values", None),
        ("k", "level", 1),
        ("k", "level", 2),
        ("k", "level", 3),
    ]  # "const" (no missing cell) and "gone" (no present value) pass nothing
    values = columns.values
    assert values.dtype == np.float64 and values.flags.c_contiguous
    np.testing.assert_array_equal(values[:, 0], frame["a"].to_numpy())  # NaN kept
    np.testing.assert_array_equal(values[:, 2], frame["bin"].to_numpy())
    np.testing.assert_array_equal(values[:, 3], frame["flag"].to_numpy(dtype=float))
    np.testing.assert_array_equal(values[:, 6], (frame["cat"] == "r").to_numpy(dtype=float))
    np.testing.assert_array_equal(values[:, 7], frame["cat"].isna().to_numpy(dtype=float))
    np.testing.assert_array_equal(
        values[:, 10], np.where(frame["half"].isna(), np.nan, 0.0)
    )  # constant with missing: only its missing split
    np.testing.assert_array_equal(values[:, 12], (frame["k"] == 2).to_numpy(dtype=float))
    assert columns.has_nan.tolist() == [True, False, True] + [False] * 7 + [True] + [False] * 3
    np.testing.assert_array_equal(columns.distinct[0], [0.5, 1.5, 2.0, 3.0, 7.0])
    assert [d.size for d in columns.distinct[4:]] == [2] * 6 + [1] + [2] * 3


def test_native_columns_of_an_array_and_a_numbers_only_table() -> None:
    X = np.array([[1.0, 0.0, 3.0], [2.0, 1.0, 3.0], [np.nan, 1.0, 3.0]])
    binarizer = Binarizer().fit(X)
    columns = native_columns(binarizer, X)
    assert [role for _, role, _ in columns.sources] == ["values", "values"]
    np.testing.assert_array_equal(columns.values, X[:, :2])


def test_native_columns_refuse_a_binarizer_without_every_midpoint() -> None:
    frame = pd.DataFrame({"a": np.arange(10.0)})
    with pytest.raises(ValueError, match="every midpoint of column 'a'"):
        native_columns(Binarizer(max_thresholds=2).fit(frame), frame)


# -- the mapping of native splits back to Binarizer features ------------------------------------


def test_every_single_split_routes_rows_as_the_native_semantics() -> None:
    frame = _frame()
    binarizer = _fitted(frame)
    columns = native_columns(binarizer, frame)
    splits = _every_split(columns)
    # a: 4 ranks x 2 + missing; b: 8; bin: 2 + missing; flag; cat: 4; kind: 2; half; k: 3
    assert len(splits) == 9 + 8 + 3 + 1 + 4 + 2 + 1 + 3
    for split in splits:
        code = [0, -1, -2]
        tree, restricted = decode_answer(_answer([split], code), binarizer, columns)
        leaf, label = _raw_route(columns.values, [split], code)
        Xb = restricted.transform(frame)
        assert Xb.shape[1] == len(restricted.get_feature_specs())
        np.testing.assert_array_equal(tree.predict(Xb), label, err_msg=str(split))
        assert _same_partition(tree.apply(Xb), leaf), split


@pytest.mark.parametrize("seed", range(12))
def test_random_deep_trees_route_rows_as_the_native_semantics(seed: int) -> None:
    rng = np.random.default_rng(seed)
    frame = _frame()
    binarizer = _fitted(frame)
    columns = native_columns(binarizer, frame)
    every = _every_split(columns)
    splits = [every[i] for i in rng.choice(len(every), size=6, replace=False)]
    code: list[int] = []
    labels = iter(rng.integers(0, 3, size=64).tolist())

    def grow(depth: int) -> None:
        if depth == 0 or rng.random() < 0.2:
            code.append(-(next(labels) + 1))
            return
        code.append(int(rng.integers(len(splits))))
        grow(depth - 1)
        grow(depth - 1)

    grow(4)
    tree, restricted = decode_answer(_answer(splits, code), binarizer, columns)
    leaf, label = _raw_route(columns.values, splits, code)
    Xb = restricted.transform(frame)
    np.testing.assert_array_equal(tree.predict(Xb), label)
    assert _same_partition(tree.apply(Xb), leaf)
    # the restricted Binarizer keeps exactly the thresholds the tree uses
    used: dict[str, set[float]] = {}
    for j in {v for v in code if v >= 0}:
        c, k, _ = splits[j]
        name, kind, params, _ = binarizer._spec[columns.sources[c][0]]
        if kind == "threshold" and k < columns.distinct[c].size - 1:
            used.setdefault(name, set()).add(float(params[k]))
    for name, thresholds in restricted.thresholds_.items():
        assert set(thresholds.tolist()) == used.get(name, set()), name


def test_the_decoded_features_and_orientation_follow_the_contract() -> None:
    frame = _frame()
    binarizer = _fitted(frame)
    columns = native_columns(binarizer, frame)

    def decoded(split):
        tree, restricted = decode_answer(_answer([split], [0, -1, -2]), binarizer, columns)
        feature = restricted.get_feature_specs()[tree.feature]
        # (feature name, label where the bit is 1)
        return feature.name, tree.right.label

    assert decoded((0, 1, 0)) == ("a<=1.75", 0)  # le side is bit 1: the first child
    assert decoded((0, 1, 1)) == ("a<=1.75 or missing", 0)
    assert decoded((0, 4, 0)) == ("a is missing", 1)  # rank D-1: missing on the gt side
    assert decoded((1, 0, 0)) == ("b<=0.15", 0)
    assert decoded((2, 0, 1)) == ("bin", 1)  # x == 1 is the gt side
    assert decoded((2, 0, 0)) == ("bin or missing", 1)
    assert decoded((2, 1, 0)) == ("bin is missing", 1)
    assert decoded((3, 0, 0)) == ("flag", 1)
    assert decoded((5, 0, 0)) == ("cat=g", 1)
    assert decoded((7, 0, 0)) == ("cat is missing", 1)
    assert decoded((10, 0, 0)) == ("half is missing", 1)
    assert decoded((13, 0, 0)) == ("k=3", 1)


@pytest.mark.parametrize(
    "split",
    [(14, 0, 0), (0, 5, 0), (0, 4, 1), (1, 0, 1), (1, 9, 0), (3, 1, 0), (4, 0, 2), (10, 0, 1)],
)
def test_a_split_outside_the_contract_is_a_runtime_error(split) -> None:
    frame = _frame()
    binarizer = _fitted(frame)
    columns = native_columns(binarizer, frame)
    with pytest.raises(RuntimeError, match="exact search"):
        decode_answer(_answer([split], [0, -1, -2]), binarizer, columns)


def test_a_tree_code_naming_a_missing_split_is_a_runtime_error() -> None:
    frame = _frame()
    binarizer = _fitted(frame)
    columns = native_columns(binarizer, frame)
    with pytest.raises(RuntimeError, match="split 1 of 1"):
        decode_answer(_answer([(0, 0, 0)], [1, -1, -2]), binarizer, columns)


# -- the restricted Binarizer -------------------------------------------------------------------


def test_restricted_binarizer_encodes_its_columns_as_the_full_one() -> None:
    frame = _frame()
    full = _fitted(frame)
    restricted = full._restricted({"a": [1.75, 5.0], "b": [0.35]})
    assert restricted.thresholds_["a"].tolist() == [1.75, 5.0]
    assert restricted.thresholds_["b"].tolist() == [0.35]
    names = list(restricted.get_feature_names_out())
    assert "a<=1.75 or missing" in names and "cat=g" in names and "k=1" in names
    assert not any(name.startswith("b<=0.15") for name in names)
    full_names = list(full.get_feature_names_out())
    at = [full_names.index(name) for name in names]
    np.testing.assert_array_equal(restricted.transform(frame), full.transform(frame)[:, at])
    assert len(full.get_feature_specs()) > len(names)  # the full one is untouched
    with pytest.raises(ValueError, match="among the fitted ones"):
        full._restricted({"a": [1.7]})
    with pytest.raises(ValueError, match="not numeric"):
        full._restricted({"cat": [1.0]})


# -- search_numeric end to end on a fake native search ------------------------------------------


class _FakeNative:
    """Stands in for ``_native.search_numeric``: checks its arguments, answers ``splits`` /
    ``code`` with the objective the raw routing gives."""

    def __init__(self, splits=None, code=None, *, objective_shift=0.0, status="optimal"):
        self.splits, self.code = splits, code
        self.shift, self.status = objective_shift, status
        self.calls: list[dict] = []

    def __call__(self, values, y, weights, n_classes, config, report, initial_splits):
        assert values.dtype == np.float64 and values.flags.c_contiguous and values.ndim == 2
        assert y.dtype == np.int32 and weights.dtype == np.float64
        assert y.shape == weights.shape == (values.shape[0],)
        assert isinstance(initial_splits, list)
        self.calls.append(
            {
                "values": values,
                "y": y,
                "weights": weights,
                "n_classes": n_classes,
                "initial_splits": list(initial_splits),
                "initial_tree": list(config.initial_tree),
                "max_depth": config.max_depth,
                "lam": config.lam,
            }
        )
        splits, code = self.splits, self.code
        if splits is None:  # answer the start (a native search is never worse than it)
            splits, code = list(initial_splits), list(config.initial_tree)
        _, label = _raw_route(values, splits, code)
        loss = weights[label != y].sum() / weights.sum()
        leaves = sum(v < 0 for v in code)
        objective = loss + config.lam * leaves + self.shift
        return _answer(
            splits,
            code,
            objective=objective,
            lower_bound=objective if self.status == "optimal" else 0.0,
            status=self.status,
            n_explored=7,
            peak_memory_mb=1.0,
            trace_time=[0.0],
            trace_incumbent=[objective],
            trace_bound=[0.0],
            stats={"thresholds_evaluated": 3, "subproblems": 2, "memo_entries": 1},
        )


def _fake(monkeypatch, fake: _FakeNative) -> _FakeNative:
    monkeypatch.setattr(_native, "search_numeric", fake, raising=False)
    return fake


def test_search_numeric_end_to_end_on_a_fake_answer(monkeypatch) -> None:
    frame = _frame()
    # a on rank 1 with missing to le; then bin "or missing", and cat is missing
    splits = [(0, 1, 1), (2, 0, 0), (7, 0, 0)]
    code = [0, 1, -1, -2, 2, -3, -2]
    fake = _fake(monkeypatch, _FakeNative(splits, code))
    weights = np.arange(1.0, 11.0)
    with pytest.warns(UserWarning, match="no present value"):
        result = search_numeric(
            frame, Y, lam=0.01, max_depth=2, categorical=["k"], sample_weight=weights
        )
    (call,) = fake.calls
    assert call["n_classes"] == 3 and call["max_depth"] == 2 and call["lam"] == 0.01
    assert call["initial_splits"] == [] and call["initial_tree"] == []  # greedy: no start
    np.testing.assert_array_equal(call["y"], np.unique(Y, return_inverse=True)[1])
    assert result.method == "exact" and result.status == "optimal"
    assert result.stats["certificate"] == "all thresholds"
    assert result.stats["start"] == "greedy" and result.stats["thresholds_evaluated"] == 3
    assert result.model.depth == 2 and result.model.n_leaves == 4
    _, label = _raw_route(call["values"], splits, code)
    predicted = result.model.predict(result.binarizer.transform(frame))
    np.testing.assert_array_equal(predicted, label)
    assert result.objective == pytest.approx(
        weights[label != call["y"]].sum() / weights.sum() + 0.04, abs=1e-12
    )
    assert result.lower_bound == result.objective
    # only the used threshold of "a" is kept
    assert result.binarizer.thresholds_["a"].tolist() == [1.75]
    assert result.binarizer.thresholds_["b"].size == 0
    # Result stays picklable and its repr one line
    again = pickle.loads(pickle.dumps(result))
    np.testing.assert_array_equal(again.model.predict(again.binarizer.transform(frame)), label)
    assert "\n" not in repr(result)


def test_search_numeric_on_an_array_and_through_search_tree(monkeypatch) -> None:
    X = np.array([[1.0, 5.0], [2.0, 4.0], [3.0, 3.0], [4.0, 2.0], [5.0, 1.0]])
    y = [0, 0, 1, 1, 1]
    _fake(monkeypatch, _FakeNative([(0, 1, 0)], [0, -1, -2]))
    result = search_tree(X, y=y, lam=0.0, max_depth=1)
    assert result.method == "exact" and result.objective == 0.0
    assert list(result.binarizer.get_feature_names_out()) == ["x0<=2.5"]
    np.testing.assert_array_equal(result.model.predict(result.binarizer.transform(X)), y)
    assert search_tree(X, y=y, lam=0.0, max_depth=1, method="exact").objective == 0.0


def test_a_disagreeing_objective_is_a_runtime_error(monkeypatch) -> None:
    X = np.array([[1.0], [2.0], [3.0]])
    _fake(monkeypatch, _FakeNative([(0, 0, 0)], [0, -1, -2], objective_shift=0.1))
    with pytest.raises(RuntimeError, match="odtkit.metrics.objective"):
        search_numeric(X, [0, 1, 1], lam=0.0, max_depth=1)


def test_a_limit_keeps_the_native_status_and_bound(monkeypatch) -> None:
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    _fake(monkeypatch, _FakeNative([(0, 1, 0)], [0, -1, -2], status="time_limit"))
    result = search_numeric(X, [0, 0, 1, 0], lam=0.0, max_depth=1, time_limit=5)
    assert result.status == "time_limit" and result.lower_bound == 0.0
    assert result.objective == 0.25


def test_a_memory_error_before_the_search_returns_the_certified_leaf(monkeypatch) -> None:
    def no_memory(*_args):
        raise MemoryError

    monkeypatch.setattr(_native, "search_numeric", no_memory, raising=False)
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    result = search_numeric(X, ["a", "a", "b", "a"], lam=0.0, max_depth=2)
    assert result.status == "memory_limit" and result.model.is_leaf
    assert result.objective == 0.25 and result.binarizer is not None


# -- start="guess" ------------------------------------------------------------------------------


def _numeric_table(seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 120
    frame = pd.DataFrame(
        {
            "u": np.round(rng.normal(size=n), 1),
            "v": np.round(rng.uniform(0, 10, size=n)),
            "w": rng.choice(["lo", "mid", "hi"], size=n),
            "z": rng.integers(0, 2, size=n).astype(float),
        }
    )
    frame.loc[rng.choice(n, 12, replace=False), "u"] = np.nan
    frame.loc[rng.choice(n, 9, replace=False), "z"] = np.nan
    frame.loc[rng.choice(n, 7, replace=False), "w"] = None
    y = ((frame["u"].fillna(0) > 0.2) ^ (frame["v"] > 6) | (frame["w"] == "hi")).to_numpy().copy()
    flip = rng.choice(n, 15, replace=False)
    y[flip] = ~y[flip]
    return frame, y.astype(int)


def test_the_guessed_tree_converts_to_native_splits_with_the_same_predictions() -> None:
    frame, y = _numeric_table()
    full = Binarizer().fit(frame)
    columns = native_columns(full, frame)
    guessed = Binarizer(guess_thresholds=40).fit(frame, y)
    data = Dataset.from_arrays(guessed.transform(frame), y)
    for depth in (1, 2, 3):
        tree = search_tree(data, lam=0.0, max_depth=depth).model
        expected = tree.predict(guessed.transform(frame))
        splits, code = encode_start(tree, guessed, columns)
        _, label = _raw_route(columns.values, splits, code)
        np.testing.assert_array_equal(label, expected)
        back, restricted = decode_answer(_answer(splits, code), full, columns)
        np.testing.assert_array_equal(back.predict(restricted.transform(frame)), expected)


def test_every_guessed_feature_kind_converts() -> None:
    frame = _frame()
    binarizer = _fitted(frame)
    columns = native_columns(binarizer, frame)
    for f, _ in enumerate(binarizer.get_feature_specs()):
        tree = Tree.split(f, Tree.leaf(0), Tree.leaf(1))
        splits, code = encode_start(tree, binarizer, columns)
        _, label = _raw_route(columns.values, splits, code)
        np.testing.assert_array_equal(
            label, tree.predict(binarizer.transform(frame)), err_msg=str(f)
        )


def test_start_guess_passes_the_guessed_tree_as_the_start(monkeypatch) -> None:
    frame, y = _numeric_table(1)
    fake = _fake(monkeypatch, _FakeNative())  # answers the start itself
    result = search_numeric(frame, y, lam=0.005, max_depth=2, start="guess", time_limit=60)
    (call,) = fake.calls
    assert call["initial_splits"] and call["initial_tree"][0] == 0
    assert result.stats["start"] == "guess"
    assert result.objective == pytest.approx(result.stats["start_objective"], abs=1e-12)
    guessed = Binarizer(guess_thresholds=40).fit(frame, y)
    data = Dataset.from_arrays(guessed.transform(frame), y)
    dp = search_tree(data, lam=0.005, max_depth=2)
    assert result.objective == pytest.approx(dp.objective, abs=1e-12)
    np.testing.assert_array_equal(
        result.model.predict(result.binarizer.transform(frame)),
        dp.model.predict(guessed.transform(frame)),
    )


# -- bad input ----------------------------------------------------------------------------------


X_OK = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0]])
Y_OK = [0, 1, 0]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"X": np.arange(3.0)}, ValueError, "X must be 2-dimensional"),
        ({"X": np.zeros((0, 2))}, ValueError, "X is empty"),
        ({"y": [0, 1]}, ValueError, "X has 3 rows but y has 2 labels"),
        ({"y": [[0], [1], [0]]}, ValueError, "y must be 1-dimensional"),
        ({"lam": -1}, ValueError, "lam must be"),
        ({"lam": "0"}, TypeError, "lam must be"),
        ({"max_depth": None}, ValueError, "max_depth=None"),
        ({"max_depth": -1}, ValueError, "max_depth must be >= 0"),
        ({"max_depth": 2.5}, TypeError, "max_depth must be"),
        ({"time_limit": 0}, ValueError, "time_limit must be > 0"),
        ({"node_limit": 0}, ValueError, "node_limit must be >= 1"),
        ({"memory_limit_mb": -5}, ValueError, "memory_limit_mb must be > 0"),
        ({"upper_bound": -1}, ValueError, "upper_bound must be >= 0"),
        ({"start": "best"}, ValueError, "start must be one of"),
        ({"categorical": ["nope"]}, ValueError, "categorical names columns not in X"),
        ({"categorical": "x0"}, TypeError, "categorical must be a list"),
        ({"sample_weight": [1, 2]}, ValueError, "sample_weight must have shape"),
        ({"sample_weight": [0, 0, 0]}, ValueError, "sample_weight must have a positive sum"),
        ({"X": np.array([[1.0], [np.inf], [2.0]])}, ValueError, "infinite values"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, match) -> None:
    args = {"X": X_OK, "y": Y_OK, "lam": 0.0, "max_depth": 2, **kwargs}
    with pytest.raises(error, match=match):
        search_numeric(args.pop("X"), args.pop("y"), **args)


def test_search_tree_on_a_raw_table_refuses_what_does_not_apply() -> None:
    with pytest.raises(TypeError, match="dataset must be an odtkit Dataset.*without y"):
        search_tree(X_OK, lam=0.0, max_depth=2)
    with pytest.raises(TypeError, match="strategy"):
        search_tree(X_OK, y=Y_OK, lam=0.0, max_depth=2, strategy="queue")
    with pytest.raises(TypeError, match="bounds, policy"):
        search_tree(X_OK, y=Y_OK, lam=0.0, max_depth=2, bounds={}, policy="bfs")
    with pytest.raises(TypeError, match="fairness"):
        search_tree(X_OK, y=Y_OK, lam=0.0, max_depth=2, fairness=object())
    with pytest.raises(ValueError, match="method must be 'dp' or 'exact'"):
        search_tree(X_OK, y=Y_OK, lam=0.0, max_depth=2, method="bnb")
    with pytest.raises(ValueError, match="max_depth=None"):
        search_tree(X_OK, y=Y_OK, lam=0.0)
    data = Dataset.from_arrays(X_OK > 1, Y_OK)
    with pytest.raises(TypeError, match="y, start apply only to a raw table"):
        search_tree(data, y=Y_OK, start="guess", lam=0.0)


def test_search_numeric_is_exported() -> None:
    import odtkit
    import odtkit.core

    assert odtkit.search_numeric is odtkit.core.search_numeric is numeric_module.search_numeric
    assert "search_numeric" in odtkit.__all__ and "search_numeric" in odtkit.core.__all__


def test_a_ctrl_c_in_the_guessed_dp_returns_its_tree_without_the_exact_search(
    monkeypatch,
) -> None:
    frame, y = _numeric_table(2)
    fake = _fake(monkeypatch, _FakeNative())
    real_guess = numeric_module._guess_start

    def interrupted_guess(*args, **kwargs):
        result, splits, code = real_guess(*args, **kwargs)
        return result.replace(status="interrupted"), splits, code

    monkeypatch.setattr(numeric_module, "_guess_start", interrupted_guess)
    result = search_numeric(frame, y, lam=0.01, max_depth=2, start="guess")
    assert not fake.calls
    assert result.status == "interrupted" and result.lower_bound == 0.01
    assert result.objective == pytest.approx(result.stats["start_objective"], abs=1e-12)


# -- the optimum: the every-midpoint dp's ---------------------------------------------------------


def _random_table(seed: int, n: int, n_classes: int) -> tuple[pd.DataFrame, np.ndarray, Any]:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 6, size=n).astype(float),  # ties
            "b": np.round(rng.normal(size=n), 1),
            "c": rng.integers(0, 2, size=n).astype(float),  # 0/1
            "d": rng.choice(["u", "v", "w"], size=n),
            "e": np.full(n, 3.0),  # constant
        }
    )
    for name in ("a", "b", "c", "d"):
        if rng.random() < 0.5:
            frame.loc[rng.random(n) < 0.15, name] = None
    y = rng.integers(0, n_classes, size=n)
    weights = rng.integers(1, 4, size=n).astype(float) if rng.random() < 0.5 else None
    return frame, y, weights


def _exhaustive_native(values, y, weights, n_classes, config, report, initial_splits):
    """A brute force over every native split (depth <= 2) in the native answer's format."""
    every = []
    for c in range(values.shape[1]):
        x = values[:, c]
        nan = np.isnan(x)
        distinct = np.unique(x[~nan])
        for k in range(distinct.size - 1):
            every.extend((c, k, m) for m in ((0, 1) if nan.any() else (0,)))
        if nan.any():
            every.append((c, distinct.size - 1, 0))
    sides = [_raw_route(values, [split], [0, -1, -2])[0] == 0 for split in every]
    total = weights.sum()

    def best(rows: np.ndarray, depth: int) -> tuple[float, list[int]]:
        counts = np.bincount(y[rows], weights=weights[rows], minlength=n_classes)
        label = int(np.argmax(counts))
        cost, code = (counts.sum() - counts[label]) / total + config.lam, [-(label + 1)]
        for j, le in enumerate(sides if depth > 0 else []):
            if not (rows & le).any() or not (rows & ~le).any():
                continue
            left, left_code = best(rows & le, depth - 1)
            right, right_code = best(rows & ~le, depth - 1)
            if left + right < cost - 1e-12:
                cost, code = left + right, [j, *left_code, *right_code]
        return cost, code

    assert config.max_depth <= 2
    objective, code = best(np.ones(values.shape[0], dtype=bool), config.max_depth)
    return _answer(
        every,
        code,
        objective=objective,
        lower_bound=objective,
        trace_time=[0.0],
        trace_incumbent=[objective],
        trace_bound=[objective],
    )


@pytest.mark.parametrize("seed", range(8))
def test_the_exact_optimum_is_the_every_midpoint_dp_optimum(seed: int, monkeypatch) -> None:
    """The native search's optimum (or, until it is built, a brute force over the native
    splits decoded by this module) equals the dp's over an every-midpoint binarization."""
    settings = [(1, 0.0), (2, 0.0), (2, 0.02)]
    if hasattr(_native, "search_numeric"):
        settings.append((3, 0.01))
    else:
        monkeypatch.setattr(_native, "search_numeric", _exhaustive_native, raising=False)
    frame, y, weights = _random_table(seed, 24 + 3 * seed, 2 + seed % 2)
    full = Binarizer().fit(frame)
    data = Dataset.from_arrays(full.transform(frame), y, sample_weight=weights)
    for depth, lam in settings:
        dp = search_tree(data, lam=lam, max_depth=depth)
        exact = search_numeric(frame, y, lam=lam, max_depth=depth, sample_weight=weights)
        assert exact.status == "optimal", (seed, depth, lam)
        assert exact.objective == pytest.approx(dp.objective, abs=1e-9), (seed, depth, lam)
        # the raw rows' predictions score what the search says
        predicted = exact.model.predict(exact.binarizer.transform(frame))
        w = np.ones(len(y)) if weights is None else weights
        loss = w[predicted != data.y].sum() / w.sum()
        assert loss + lam * exact.model.n_leaves == pytest.approx(exact.objective, abs=1e-12)
        assert exact.model.depth <= depth
    # from the guessed-threshold tree: the same optimum
    guessed = search_numeric(frame, y, lam=0.0, max_depth=2, sample_weight=weights, start="guess")
    dp = search_tree(data, lam=0.0, max_depth=2)
    assert guessed.status == "optimal"
    assert guessed.objective == pytest.approx(dp.objective, abs=1e-9)
    assert guessed.objective <= guessed.stats["start_objective"] + 1e-12


def test_a_table_no_split_can_cut_gets_the_certified_leaf_without_the_native_search(
    monkeypatch,
) -> None:
    fake = _fake(monkeypatch, _FakeNative())
    for X, y in (
        (pd.DataFrame({"c": [1.0] * 5, "d": ["u"] * 5}), list("aabba")),
        (pd.DataFrame({"a": [3.0]}), ["z"]),
    ):
        result = search_numeric(X, y, lam=0.01, max_depth=2)
        assert result.status == "optimal" and result.model.is_leaf
        assert result.objective == result.lower_bound == pytest.approx(0.4 * (len(y) > 1) + 0.01)
        assert result.binarizer.transform(X).shape == (len(y), 0)
    assert not fake.calls  # the native search needs a column to split


def test_zero_weight_rows_are_left_out_and_the_depth_clamped() -> None:
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 2.5, np.nan], "k": ["u", "v", "u", "u", "v"]})
    y = [0, 1, 0, 1, 1]
    weights = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    for start in STARTS:
        result = search_numeric(
            frame, y, lam=0.0, max_depth=2**40, sample_weight=weights, start=start
        )
        assert result.status == "optimal" and result.objective == 0.0
        # thresholds come from the rows that count: 2.0 and the missing cell are left out
        assert result.binarizer.thresholds_["a"].tolist() == [1.75, 2.75]
        predicted = result.model.predict(result.binarizer.transform(frame))
        np.testing.assert_array_equal(predicted[weights > 0], np.asarray(y)[weights > 0])


def test_a_ctrl_c_in_the_native_search_returns_its_incumbent_and_a_valid_bound() -> None:
    import signal

    from conftest import sigint_inside
    from sklearn.datasets import make_classification

    X, y = make_classification(2000, 10, random_state=0)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with sigint_inside(_native, "search_numeric", after=0.2):
            result = search_numeric(X, y, lam=0.0, max_depth=4, time_limit=60)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.status in ("interrupted", "optimal")
    predicted = result.model.predict(result.binarizer.transform(X))
    assert result.objective == pytest.approx(np.mean(predicted != y), abs=1e-12)
    assert 0.0 <= result.lower_bound <= result.objective

"""Missing values: the Binarizer's encoding, its optimality claim, the estimators (issue 22, 8).

The encoding (docs/formulations-trees.md §9) is checked cell by cell against its definition,
and the claim it supports — the certified optimum over the encoded features is the optimum over
every CART-style tree that sends the missing values of each split left or right — against two
independent truths: a recursion over the splits computed straight from the raw table, and
scikit-learn's own NaN-aware ``DecisionTreeClassifier``.
"""

from __future__ import annotations

import warnings
from functools import cache

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit.core import search_tree
from odtkit.datasets import Binarizer, Dataset, load_file
from odtkit.estimators import (
    FairTreeClassifier,
    OptimalRuleListClassifier,
    OptimalTreeClassifier,
    OptimalTreeClassifierCV,
)
from odtkit.render import FeatureSpec, tree_to_text
from odtkit.testing import brute_force_tree
from odtkit.tree import Tree

# -- small random tables with missing cells -------------------------------------------------------


@st.composite
def _tables(draw):
    """6-12 rows, 2-3 columns (numeric, 0/1 or categorical), any cell possibly missing."""
    n = draw(st.integers(6, 12))
    columns = {}
    for j in range(draw(st.integers(2, 3))):
        kind = draw(st.sampled_from(["numeric", "binary", "categorical"]))
        present = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        if kind == "categorical":
            cells = draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
            columns[f"c{j}"] = pd.Series(
                [v if keep else None for v, keep in zip(cells, present, strict=True)],
                dtype=object,
            )
            continue
        top = 1 if kind == "binary" else 4
        cells = draw(st.lists(st.integers(0, top), min_size=n, max_size=n))
        values = [float(v) if keep else np.nan for v, keep in zip(cells, present, strict=True)]
        columns[f"c{j}"] = pd.Series(values, dtype=float)
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    return pd.DataFrame(columns), y


def _expected_cell(spec: FeatureSpec, raw: pd.Series) -> np.ndarray:
    """The feature straight from its definition (docs/formulations-trees.md §9)."""
    absent = raw.isna().to_numpy()
    if spec.kind == "missing":
        return absent
    if spec.kind == "category":
        test = np.array([(not a) and v == spec.value for v, a in zip(raw, absent, strict=True)])
    else:
        values = raw.to_numpy(dtype=float, na_value=np.nan)
        bound = spec.value if spec.kind == "threshold" else None
        with np.errstate(invalid="ignore"):
            test = values <= bound if bound is not None else values == 1
        test = np.where(absent, False, test)
    return test | (absent & bool(spec.missing))


def _present_midpoints(raw: pd.Series) -> set[float]:
    distinct = np.unique(raw.dropna().to_numpy(dtype=float))
    return set(((distinct[:-1] + distinct[1:]) / 2).tolist())


@settings(max_examples=80, deadline=None)
@given(_tables())
def test_encoding_matches_its_definition_cell_by_cell(table):
    frame, _ = table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # an all-missing column is allowed here
        binarizer = Binarizer().fit(frame)
    out = binarizer.transform(frame)
    specs = binarizer.get_feature_specs()
    assert out.shape == (len(frame), len(specs))
    for j, spec in enumerate(specs):
        assert np.array_equal(out[:, j], _expected_cell(spec, frame[spec.source])), spec
    for name in frame.columns:
        raw = frame[name]
        own = [s for s in specs if s.source == name]
        if not raw.isna().any():
            assert all(s.missing is None and s.kind != "missing" for s in own)
            continue
        if raw.isna().all():
            assert own == [] and name in binarizer.dropped_columns_
            continue
        assert name in binarizer.missing_columns_
        assert [s.kind for s in own].count("missing") == 1
        present = raw.dropna()
        if raw.dtype == object:  # every present level, plus the missing "level"
            assert {s.value for s in own if s.kind == "category"} == set(present)
            assert all(s.missing is False for s in own if s.kind == "category")
        elif set(present) == {0.0, 1.0}:
            assert {s.missing for s in own if s.kind == "binary"} == {False, True}
        else:  # every midpoint of the present values, once plain and once "or missing"
            for flag in (False, True):
                cuts = {s.value for s in own if s.kind == "threshold" and s.missing is flag}
                assert cuts == _present_midpoints(raw)


def _cart_optimum(frame: pd.DataFrame, y: np.ndarray, lam: float, depth: int) -> float:
    """Best ``mis/n + lam * leaves`` over CART-style trees of depth <= ``depth``, from raw data.

    A split is ``x <= v`` on a present value ``v`` of a numeric column with the missing rows
    sent left or right, ``x == level`` on a categorical column (missing: its own level, right),
    or "missing vs present"; every subset of rows is scored directly (no Binarizer, no search).
    """
    masks = []
    for name in frame.columns:
        raw = frame[name]
        absent = raw.isna().to_numpy()
        masks.append(absent)
        if raw.dtype == object:
            masks.extend((raw == level).to_numpy() & ~absent for level in set(raw.dropna()))
            continue
        values = raw.to_numpy(dtype=float)
        for v in np.unique(values[~absent]):
            below = np.where(absent, False, values <= v)
            masks.extend((below, below | absent))
    n = len(y)

    @cache
    def best(key: bytes, d: int) -> float:
        rows = np.frombuffer(key, dtype=bool)
        counts = np.bincount(y[rows], minlength=2)
        value = float(counts.sum() - counts.max()) / n + lam
        if d == 0:
            return value
        for mask in masks:
            value = min(
                value,
                best((rows & mask).tobytes(), d - 1) + best((rows & ~mask).tobytes(), d - 1),
            )
        return value

    return best(np.ones(n, dtype=bool).tobytes(), depth)


@pytest.mark.filterwarnings("ignore::odtkit.core.search.TrivialAnswerWarning")
@settings(max_examples=40, deadline=None)
@given(_tables(), st.sampled_from([0.0, 0.05, 0.15]), st.integers(1, 2))
def test_certified_optimum_is_the_best_tree_that_routes_missing_values(table, lam, depth):
    frame, y = table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        binarizer = Binarizer().fit(frame)
    X = binarizer.transform(frame)
    data = Dataset.from_arrays(X, y, feature_names=list(binarizer.get_feature_names_out()))
    result = search_tree(data, lam=lam, max_depth=depth)
    assert result.status == "optimal"
    _, oracle = brute_force_tree(data, lam=lam, max_depth=depth)
    assert result.objective == pytest.approx(oracle, abs=1e-9)
    # and the encoded features lose no CART-style split (nor add a better tree than exists)
    assert result.objective == pytest.approx(_cart_optimum(frame, y, lam, depth), abs=1e-9)


def test_at_least_as_accurate_on_training_data_as_sklearns_nan_aware_cart():
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(3)
    X = rng.integers(0, 6, size=(60, 3)).astype(float)
    y = ((X[:, 0] > 2) ^ (X[:, 1] > 3)).astype(int)
    X[rng.random(X.shape) < 0.2] = np.nan
    y[rng.random(60) < 0.1] ^= 1
    for depth in (1, 2, 3):
        cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
        ours = OptimalTreeClassifier(lam=0.0, max_depth=depth, guess_thresholds=None).fit(X, y)
        assert ours.result_.status == "optimal"
        assert ours.score(X, y) >= cart.score(X, y)


# -- the fitted Binarizer -------------------------------------------------------------------------


def test_numeric_column_with_missing_cells_gets_both_routings_and_an_is_missing_feature():
    # today: ValueError "column 'age' has missing values"
    frame = pd.DataFrame({"age": [30.0, np.nan, 50.0, 40.0], "n": [1, 2, 3, 4]})
    binarizer = Binarizer().fit(frame)
    assert binarizer.get_feature_names_out().tolist() == [
        "age<=35",
        "age<=45",
        "age<=35 or missing",
        "age<=45 or missing",
        "age is missing",
        "n<=1.5",
        "n<=2.5",
        "n<=3.5",
    ]
    assert binarizer.missing_columns_ == ["age"] and binarizer.dropped_columns_ == []
    out = binarizer.transform(frame)
    assert out[1, :5].tolist() == [False, False, True, True, True]  # the missing row
    assert out[0, :5].tolist() == [True, True, True, True, False]


def test_zero_one_column_with_missing_cells_gets_its_three_splits():
    frame = pd.DataFrame({"smoker": [0.0, 1.0, np.nan, 1.0]})
    binarizer = Binarizer().fit(frame)
    assert binarizer.get_feature_names_out().tolist() == [
        "smoker",
        "smoker or missing",
        "smoker is missing",
    ]
    assert binarizer.transform(frame).astype(int).tolist() == [
        [0, 0, 0],
        [1, 1, 0],
        [0, 1, 1],
        [1, 1, 0],
    ]


def test_categorical_missing_cell_is_its_own_level():
    frame = pd.DataFrame(
        {"c": ["a", None, "b", np.nan], "d": pd.Categorical(["x", "y", None, "x"])}
    )
    binarizer = Binarizer().fit(frame)
    assert binarizer.categories_ == {"c": ["a", "b"], "d": ["x", "y"]}
    assert binarizer.get_feature_names_out().tolist() == [
        "c=a",
        "c=b",
        "c is missing",
        "d=x",
        "d=y",
        "d is missing",
    ]
    assert binarizer.transform(frame)[:, 2].tolist() == [False, True, False, True]
    assert binarizer.transform(frame)[:, 5].tolist() == [False, False, True, False]


def test_nullable_pandas_dtypes_and_constant_present_values():
    frame = pd.DataFrame(
        {
            "i": pd.array([1, None, 3, 5], dtype="Int64"),
            "k": [7.0, 7.0, np.nan, 7.0],  # nothing to split but its missingness
            "b": pd.array([True, None, False, True], dtype="boolean"),
        }
    )
    binarizer = Binarizer().fit(frame)
    assert binarizer.get_feature_names_out().tolist() == [
        "i<=2",
        "i<=4",
        "i<=2 or missing",
        "i<=4 or missing",
        "i is missing",
        "k is missing",
        "b",
        "b or missing",
        "b is missing",
    ]
    assert binarizer.transform(frame)[:, 5].tolist() == [False, False, True, False]


def test_all_missing_column_is_dropped_with_a_warning_naming_it():
    frame = pd.DataFrame({"v": [1.0, 2.0, 3.0], "empty": [np.nan] * 3, "c": [None] * 3})
    with pytest.warns(UserWarning, match=r"\['empty', 'c'\].*no present value"):
        binarizer = Binarizer().fit(frame)
    assert binarizer.dropped_columns_ == ["empty", "c"]
    assert binarizer.get_feature_names_out().tolist() == ["v<=1.5", "v<=2.5"]
    # whatever the column holds later, it yields nothing
    later = pd.DataFrame({"v": [2.0], "empty": [5.0], "c": ["z"]})
    assert binarizer.transform(later).tolist() == [[False, True]]


def test_missing_value_unseen_at_fit_fails_every_test_of_its_column():
    frame = pd.DataFrame({"v": [1.0, 2.0, 3.0], "b": [0, 1, 1], "c": ["p", "q", "p"]})
    binarizer = Binarizer().fit(frame)
    out = binarizer.transform(pd.DataFrame({"v": [np.nan], "b": [np.nan], "c": [None]}))
    assert out.tolist() == [[False] * 5]  # v > every threshold, b = 0, c an unseen level
    assert all(s.missing is None for s in binarizer.get_feature_specs())


def test_infinite_values_are_refused_naming_the_column():
    with pytest.raises(ValueError, match="column 'w' has infinite values"):
        Binarizer().fit(pd.DataFrame({"w": [1.0, np.inf, np.nan]}))


def test_guessed_thresholds_with_missing_cells_are_midpoints_of_present_values():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = X.copy()
    X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    binarizer = Binarizer(guess_thresholds=20).fit(X, y)
    every = Binarizer().fit(X)
    kept = sum(binarizer.thresholds_[c].size for c in binarizer.thresholds_)
    assert 0 < kept <= 20
    for column, cuts in binarizer.thresholds_.items():
        assert np.isin(cuts, every.thresholds_[column]).all()
    # every column had missing cells: each keeps its "is missing" feature
    names = binarizer.get_feature_names_out().tolist()
    assert len(names) == 2 * kept + X.shape[1]


# -- rendering ------------------------------------------------------------------------------------


def test_text_says_where_missing_values_go():
    specs = [
        FeatureSpec("age", "threshold", 40.5, missing=True),
        FeatureSpec("age", "threshold", 40.5, missing=False),
        FeatureSpec("age", "missing"),
        FeatureSpec("color", "category", "red", missing=False),
        FeatureSpec("smoker", "binary", missing=True),
        FeatureSpec("age", "threshold", 40.5),
    ]
    assert [(s.condition(1), s.condition(0)) for s in specs] == [
        ("age <= 40.5 or missing", "age > 40.5"),
        ("age <= 40.5", "age > 40.5 or missing"),
        ("age is missing", "age is not missing"),
        ("color = red", "color != red or missing"),
        ("smoker = 1 or missing", "smoker = 0"),
        ("age <= 40.5", "age > 40.5"),  # no missing value at fit: today's text
    ]
    tree = Tree.split(0, Tree.leaf(0), Tree.split(2, Tree.leaf(1), Tree.leaf(0)))
    assert tree_to_text(tree, specs, ["no", "yes"]).splitlines() == [
        "|--- age > 40.5",
        "|   |--- class: no",
        "|--- age <= 40.5 or missing",
        "|   |--- age is not missing",
        "|   |   |--- class: yes",
        "|   |--- age is missing",
        "|   |   |--- class: no",
    ]
    with pytest.raises(ValueError, match="missing must be None, True or False"):
        FeatureSpec("age", "threshold", 1.0, missing="left")


# -- estimators -----------------------------------------------------------------------------------


def _mixed_frame(n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 70, n).astype(float),
            "colour": rng.choice(["red", "blue", "green"], n).astype(object),
            "owner": rng.integers(0, 2, n).astype(float),
            "income": rng.normal(50, 10, n),
        }
    )
    y = np.where((frame["age"] <= 30) | (frame["colour"] == "red"), "yes", "no")
    for column in frame.columns:  # 15 % of each column missing
        frame.loc[rng.random(n) < 0.15, column] = None
    return frame, y


@pytest.mark.parametrize(
    "factory",
    [
        lambda: OptimalTreeClassifier(lam=0.01, max_depth=2),
        lambda: OptimalTreeClassifierCV(max_depth=2, cv=3),
        lambda: OptimalRuleListClassifier(lam=0.01, max_cardinality=1),
    ],
)
def test_estimators_fit_and_predict_with_missing_cells(factory):
    # today: ValueError "column 'age' has missing values"
    frame, y = _mixed_frame()
    clf = factory().fit(frame, y)
    assert clf.binarizer_.missing_columns_ == ["age", "colour", "owner", "income"]
    assert clf.predict(frame).shape == (len(y),) and clf.score(frame, y) > 0.7
    proba = clf.predict_proba(frame)
    assert np.allclose(proba.sum(axis=1), 1.0)
    # arrays with NaN too (the numeric columns)
    numeric = frame[["age", "owner", "income"]].to_numpy(dtype=float)
    factory().fit(numeric, y).predict(numeric)


def test_fitted_tree_routes_missing_values_as_its_text_says():
    frame, y = _mixed_frame()
    clf = OptimalTreeClassifier(lam=0.005, max_depth=3).fit(frame, y)
    assert clf.result_.status == "optimal"
    text = clf.to_text()
    assert "colour" in text
    # the estimator's prediction is the tree on the Binarizer's encoding, NaN rows included
    X = clf.binarizer_.transform(frame)
    assert np.array_equal(clf.predict(frame), clf.classes_[clf.tree_.predict(X)])


def test_fair_tree_with_missing_cells():
    frame, y = _mixed_frame()
    sensitive = (np.arange(len(y)) % 2).astype(int)
    clf = FairTreeClassifier(delta=0.1, max_depth=2, positive_class="yes").fit(
        frame, y, sensitive=sensitive
    )
    assert clf.fairness_gap_ <= 0.1 + 1e-9
    assert clf.predict(frame).shape == (len(y),)


def test_estimator_input_checks_still_refuse_what_they_cannot_encode():
    frame, y = _mixed_frame()
    labels = np.where(y == "yes", 1.0, np.nan)
    with pytest.raises(ValueError, match="contains NaN"), np.errstate(invalid="ignore"):
        OptimalTreeClassifier(max_depth=1).fit(frame[["age"]], labels)  # labels stay complete
    X = np.array([[0.0, 1.0], [1.0, np.nan], [1.0, 0.0]])
    with pytest.raises(ValueError, match="NaN"):  # no Binarizer, no encoding of NaN
        OptimalTreeClassifier(max_depth=1, binarize=False).fit(X, [0, 1, 1])
    with pytest.raises(ValueError, match="X column 'x0' has infinite values"):
        OptimalTreeClassifier(max_depth=1).fit(np.array([[1.0], [np.inf], [2.0]]), [0, 1, 1])
    with pytest.raises(ValueError, match="X column 'age' has infinite values"):
        OptimalTreeClassifier(max_depth=1).fit(frame.assign(age=np.inf), y)
    # a binary fit (no Binarizer) refuses NaN at predict
    clf = OptimalTreeClassifier(max_depth=1).fit(X[[0, 2]], [0, 1])
    assert clf.binarizer_ is None
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(X)


def test_load_file_binarizes_a_table_with_missing_cells(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("age,owner,y\n30,1,a\n,0,b\n50,,a\n40,1,b\n")
    with pytest.raises(ValueError, match="missing values"):
        load_file(path)
    data = load_file(path, binarize=True)
    assert "age is missing" in data.feature_names and "owner or missing" in data.feature_names

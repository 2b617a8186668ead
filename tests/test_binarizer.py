"""Binarizer: thresholds, one-hot encoding, names, errors, and the no-information-lost property."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline

from odtkit.datasets import Binarizer
from odtkit.datasets._binarizer import format_threshold


def _names(binarizer: Binarizer) -> list[str]:
    return binarizer.get_feature_names_out().tolist()


# -- numeric thresholds --------------------------------------------------------------------------


def test_thresholds_are_midpoints_between_adjacent_distinct_values():
    frame = pd.DataFrame({"age": [30, 18, 33, 30, 18, 60]})
    binarizer = Binarizer().fit(frame)
    assert binarizer.thresholds_["age"].tolist() == [24.0, 31.5, 46.5]
    assert _names(binarizer) == ["age<=24", "age<=31.5", "age<=46.5"]


def test_less_or_equal_semantics():
    binarizer = Binarizer().fit(pd.DataFrame({"v": [1.0, 2.0, 4.0]}))
    assert _names(binarizer) == ["v<=1.5", "v<=3"]
    out = binarizer.transform(pd.DataFrame({"v": [1.5, 1.5000001, 3.0, 3.1, -10.0, 10.0]}))
    assert out.dtype == bool
    assert out.tolist() == [
        [True, True],
        [False, True],
        [False, True],
        [False, False],
        [True, True],
        [False, False],
    ]


def test_max_thresholds_caps_the_count_and_takes_quantiles_of_distinct_values():
    values = np.repeat(np.arange(100.0), 3)  # repeats must not shift the quantiles
    binarizer = Binarizer(max_thresholds=3).fit(pd.DataFrame({"v": values}))
    assert binarizer.thresholds_["v"].tolist() == [24.5, 49.5, 74.5]
    assert binarizer.transform(pd.DataFrame({"v": values})).shape == (300, 3)


def test_max_thresholds_one_is_the_median_midpoint():
    binarizer = Binarizer(max_thresholds=1).fit(np.arange(10.0).reshape(-1, 1))
    assert _names(binarizer) == ["x0<=4.5"]


def test_max_thresholds_above_the_number_of_midpoints_keeps_all():
    binarizer = Binarizer(max_thresholds=50).fit(pd.DataFrame({"v": [3, 1, 2]}))
    assert binarizer.thresholds_["v"].tolist() == [1.5, 2.5]


@pytest.mark.parametrize("bad", [0, -2])
def test_max_thresholds_must_be_positive(bad):
    with pytest.raises(ValueError, match="max_thresholds must be >= 1"):
        Binarizer(max_thresholds=bad).fit(pd.DataFrame({"v": [1, 2, 3]}))


@pytest.mark.parametrize("bad", [1.5, True, "3"])
def test_max_thresholds_must_be_an_integer(bad):
    with pytest.raises(TypeError, match="max_thresholds must be a positive integer"):
        Binarizer(max_thresholds=bad).fit(pd.DataFrame({"v": [1, 2, 3]}))


def test_threshold_formatting_is_compact_and_exact():
    assert format_threshold(25.5) == "25.5"
    assert format_threshold(3.0) == "3"
    assert format_threshold(-0.125) == "-0.125"
    assert float(format_threshold(0.1 + 0.2)) == 0.1 + 0.2


def test_adjacent_floats_stay_separated():
    a = 1.0
    b = np.nextafter(a, 2.0)
    out = Binarizer().fit_transform(pd.DataFrame({"v": [a, b]}))
    assert out[:, 0].tolist() == [True, False]


def test_extreme_values_do_not_overflow():
    out = Binarizer().fit_transform(pd.DataFrame({"v": [-1.7e308, 1.7e308]}))
    assert out[:, 0].tolist() == [True, False]


# -- binary, constant and categorical columns ----------------------------------------------------


def test_zero_one_column_is_a_single_feature():
    frame = pd.DataFrame({"smoker": [0, 1, 1, 0], "flag": [True, False, True, True]})
    binarizer = Binarizer().fit(frame)
    assert _names(binarizer) == ["smoker", "flag"]
    assert binarizer.binary_columns_ == ["smoker", "flag"]
    assert binarizer.transform(frame).tolist() == [
        [False, True],
        [True, False],
        [True, True],
        [False, True],
    ]


def test_constant_columns_produce_nothing():
    frame = pd.DataFrame({"k": [7, 7, 7], "z": [0, 0, 0], "c": ["a", "a", "a"], "v": [1, 2, 3]})
    binarizer = Binarizer().fit(frame)
    assert _names(binarizer) == ["v<=1.5", "v<=2.5"]
    assert binarizer.transform(frame).shape == (3, 2)


def test_all_constant_gives_zero_features():
    out = Binarizer().fit_transform(pd.DataFrame({"k": [1, 1]}))
    assert out.shape == (2, 0) and out.dtype == bool


def test_one_hot_encoding():
    frame = pd.DataFrame({"colour": ["red", "blue", "red", "green"]})
    binarizer = Binarizer().fit(frame)
    assert _names(binarizer) == ["colour=blue", "colour=green", "colour=red"]
    assert binarizer.categories_["colour"] == ["blue", "green", "red"]
    out = binarizer.transform(frame)
    assert out.astype(int).tolist() == [[0, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert (out.sum(axis=1) == 1).all()


def test_unseen_category_is_all_zero():
    binarizer = Binarizer().fit(pd.DataFrame({"c": ["a", "b"]}))
    out = binarizer.transform(pd.DataFrame({"c": ["b", "zzz", "a"]}))
    assert out.astype(int).tolist() == [[0, 1], [0, 0], [1, 0]]


def test_category_dtype_is_categorical():
    frame = pd.DataFrame(
        {"size": pd.Categorical(["S", "L", "M"], categories=["S", "M", "L", "XL"])}
    )
    binarizer = Binarizer().fit(frame)
    # The declared order is kept; levels that never occur are dropped.
    assert _names(binarizer) == ["size=S", "size=M", "size=L"]


def test_forced_categorical_numeric_column():
    frame = pd.DataFrame({"code": [3, 1, 2, 3], "v": [0.5, 1.5, 2.5, 0.5]})
    binarizer = Binarizer(categorical=["code"]).fit(frame)
    assert _names(binarizer) == ["code=1", "code=2", "code=3", "v<=1", "v<=2"]
    assert binarizer.transform(frame)[:, :3].astype(int).tolist() == [
        [0, 0, 1],
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
    ]


def test_numpy_input_gets_x_names():
    X = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0]])
    binarizer = Binarizer().fit(X)
    assert _names(binarizer) == ["x0<=1.5", "x0<=2.5", "x1"]
    assert not hasattr(binarizer, "feature_names_in_")
    assert binarizer.n_features_in_ == 2


def test_dataframe_columns_matched_by_name_at_transform():
    frame = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "x"]})
    binarizer = Binarizer().fit(frame)
    shuffled = frame[["b", "a"]].assign(extra=0)
    assert np.array_equal(binarizer.transform(shuffled), binarizer.transform(frame))


# -- errors --------------------------------------------------------------------------------------


def test_unknown_categorical_column():
    with pytest.raises(ValueError, match=r"categorical names columns not in X: \['nope'\]"):
        Binarizer(categorical=["nope"]).fit(pd.DataFrame({"v": [1, 2]}))


def test_transform_missing_column():
    binarizer = Binarizer().fit(pd.DataFrame({"a": [1, 2], "b": [3, 4]}))
    with pytest.raises(ValueError, match=r"missing the fitted columns \['b'\]"):
        binarizer.transform(pd.DataFrame({"a": [1]}))


def test_transform_wrong_width_array():
    binarizer = Binarizer().fit(np.zeros((2, 3)) + np.arange(2)[:, None])
    with pytest.raises(ValueError, match="2 columns but the Binarizer was fitted on 3"):
        binarizer.transform(np.zeros((1, 2)))


def test_one_dimensional_input():
    with pytest.raises(ValueError, match="2-dimensional"):
        Binarizer().fit(np.arange(5))


def test_not_fitted():
    with pytest.raises(NotFittedError):
        Binarizer().transform(np.zeros((1, 1)))
    with pytest.raises(NotFittedError):
        Binarizer().get_feature_names_out()


# -- scikit-learn conventions --------------------------------------------------------------------


def test_sklearn_params_and_clone():
    binarizer = Binarizer(max_thresholds=4, categorical=["c"])
    assert binarizer.get_params() == {
        "max_thresholds": 4,
        "categorical": ["c"],
        "guess_thresholds": None,
    }
    copy = clone(binarizer)
    assert copy.get_params() == binarizer.get_params()
    assert not hasattr(copy, "thresholds_")


def test_works_in_a_pipeline():
    from sklearn.tree import DecisionTreeClassifier

    frame = pd.DataFrame({"v": [1, 2, 3, 4, 5, 6], "c": list("aabbcc")})
    y = [0, 0, 0, 1, 1, 1]
    model = make_pipeline(Binarizer(max_thresholds=1), DecisionTreeClassifier(random_state=0))
    model.fit(frame, y)
    assert model.predict(frame).tolist() == y


def test_fit_transform_equals_fit_then_transform():
    frame = pd.DataFrame({"v": [5, 1, 3, 3], "c": ["p", "q", "p", "r"], "b": [0, 1, 1, 0]})
    assert np.array_equal(Binarizer().fit_transform(frame), Binarizer().fit(frame).transform(frame))


# -- properties ----------------------------------------------------------------------------------

_finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
_column_values = st.one_of(
    st.integers(-3, 3).map(float),  # many ties and 0/1 columns
    _finite,
)


@st.composite
def _numeric_frames(draw):
    n_rows = draw(st.integers(1, 25))
    n_cols = draw(st.integers(1, 4))
    elements = draw(st.sampled_from([st.integers(-3, 3).map(float), _finite, _column_values]))
    values = draw(hnp.arrays(np.float64, (n_rows, n_cols), elements=elements))
    return pd.DataFrame(values, columns=[f"c{j}" for j in range(n_cols)])


def _distinct_rows(a: np.ndarray) -> int:
    return len(np.unique(a, axis=0)) if a.shape[1] else 1


@settings(max_examples=150, deadline=None)
@given(_numeric_frames())
def test_no_information_lost_without_a_cap(frame):
    binarizer = Binarizer()
    out = binarizer.fit_transform(frame)
    assert out.dtype == bool
    assert np.array_equal(out, binarizer.transform(frame))
    # Rows that differ in some column must differ in some feature; equal rows trivially map
    # equal, so the number of distinct rows is preserved exactly.
    assert _distinct_rows(out) == _distinct_rows(frame.to_numpy())
    values = frame.to_numpy()
    differ = (values[:, None, :] != values[None, :, :]).any(axis=2)
    separated = (out[:, None, :] != out[None, :, :]).any(axis=2)
    assert np.array_equal(differ, separated)


@settings(max_examples=100, deadline=None)
@given(_numeric_frames(), st.integers(1, 5))
def test_cap_keeps_a_subset_of_the_midpoints(frame, k):
    capped = Binarizer(max_thresholds=k).fit(frame)
    full = Binarizer().fit(frame)
    for column, cuts in capped.thresholds_.items():
        assert len(cuts) <= k
        assert np.all(np.diff(cuts) > 0)
        assert set(cuts.tolist()) <= set(full.thresholds_[column].tolist())
    assert np.array_equal(capped.fit_transform(frame), capped.transform(frame))


def test_guessed_thresholds_are_our_midpoints_used_by_the_reference_model():
    # issue 13: breast cancer binarized to 15,310 features and the default fit never ended
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = load_breast_cancer(return_X_y=True)
    guessed = Binarizer(guess_thresholds=40).fit(X, y)
    every = Binarizer().fit(X)
    n_features = len(guessed.get_feature_names_out())
    assert 0 < n_features <= 40 < len(every.get_feature_names_out())
    reference = GradientBoostingClassifier(n_estimators=40, max_depth=1, random_state=0).fit(X, y)
    used = {int(t.tree_.feature[0]) for t in reference.estimators_.ravel()}
    for j in range(X.shape[1]):
        cuts = guessed.thresholds_[f"x{j}"]
        assert (cuts.size > 0) == (j in used)
        # each kept threshold is one of the midpoints every-threshold binarization uses
        assert np.isin(cuts, every.thresholds_[f"x{j}"]).all()


def test_guessing_needs_labels_and_a_positive_count():
    X = np.arange(20, dtype=float).reshape(10, 2)
    with pytest.raises(ValueError, match="needs y"):
        Binarizer(guess_thresholds=5).fit(X)
    with pytest.raises(ValueError, match="positive integer"):
        Binarizer(guess_thresholds=0).fit(X, np.arange(10) % 2)
    one_class = Binarizer(guess_thresholds=5).fit(X, np.zeros(10))
    assert len(one_class.get_feature_names_out()) == 0  # nothing to learn: no thresholds


# -- FeatureSpec.evaluate: the one definition of what a feature computes (issue 38 item 2) -----


def test_each_feature_spec_evaluates_to_its_column_of_transform():
    # every kind, with and without blank cells at fit: feature j of transform is spec j
    # evaluated on its source column, one at a time
    rng = np.random.default_rng(3)
    n = 60
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "flag": rng.integers(0, 2, n).astype(float),
            "colour": rng.choice(["red", "green", "blue"], n).astype(object),
            "plain": rng.normal(size=n).round(1),
        }
    )
    for column in ("age", "flag", "colour"):
        frame.loc[rng.random(n) < 0.2, column] = np.nan
    binarizer = Binarizer(max_thresholds=4).fit(frame)
    specs = binarizer.get_feature_specs()
    assert {s.kind for s in specs} == {"threshold", "binary", "category", "missing"}
    new = frame.sample(frac=1.0, random_state=1).reset_index(drop=True)
    new.loc[0, "colour"] = "purple"  # an unseen level matches no category
    expected = binarizer.transform(new)
    for j, spec in enumerate(specs):
        bits = spec.evaluate(new[spec.source])
        assert bits.dtype == bool and bits.shape == (n,)
        np.testing.assert_array_equal(bits, expected[:, j], err_msg=spec.name)


def test_feature_spec_evaluate_refuses_text_and_infinite_values_naming_the_column():
    from odtkit._features import UnreadableColumn
    from odtkit.render import FeatureSpec

    spec = FeatureSpec("age", "threshold", 40.5)
    np.testing.assert_array_equal(
        spec.evaluate(pd.Series([30.0, np.nan, 41.0])), [True, False, False]
    )
    assert FeatureSpec("age", "threshold", 40.5, missing=True).evaluate([np.nan]).tolist() == [True]
    with pytest.raises(ValueError, match="column 'age' must be numeric"):
        spec.evaluate(pd.Series(["young", "old"]))
    with pytest.raises(UnreadableColumn, match="column 'age' has infinite values") as caught:
        spec.evaluate(pd.Series([1.0, np.inf, 2.0, -np.inf]))
    assert caught.value.source == "age" and caught.value.infinite_rows.tolist() == [1, 3]


@settings(deadline=None, max_examples=60)
@given(
    columns=st.lists(
        st.lists(
            st.one_of(
                st.floats(-1e6, 1e6, allow_nan=False),
                st.integers(-50, 50).map(lambda v: v / 10),
                st.sampled_from([np.nextafter(1.0, 2.0), 1.0, 1e-300, 5e-324, 1e308, -1e308]),
            ),
            min_size=1,
            max_size=12,
        ),
        min_size=1,
        max_size=5,
    ),
    cap=st.one_of(st.none(), st.integers(1, 4)),
)
def test_every_columns_midpoints_at_once_equal_each_columns_own(columns, cap):
    # fit computes all columns' midpoints in one call; each column's must be what the
    # column alone gives (the rounding of a midpoint reads that pair only)
    from odtkit.datasets._binarizer import _midpoints_between, _quantile_indices

    n = max(len(c) for c in columns)
    frame = pd.DataFrame({f"c{j}": (c * n)[:n] for j, c in enumerate(columns)}, dtype=float)
    fitted = Binarizer(max_thresholds=cap).fit(frame)
    for name in frame.columns:
        distinct = np.unique(frame[name].to_numpy())
        if distinct.size <= 1 or (distinct.size == 2 and distinct[0] == 0 and distinct[1] == 1):
            continue
        if cap is not None and distinct.size - 1 > cap:
            at = _quantile_indices(distinct.size, cap)
            alone = _midpoints_between(distinct[at], distinct[at + 1])
        else:
            alone = _midpoints_between(distinct[:-1], distinct[1:])
        assert np.array_equal(fitted.thresholds_[name], alone)
    assert list(fitted.thresholds_) == [
        name for name, kind, _, _ in fitted._spec if kind in ("threshold", "constant")
    ]


@pytest.mark.parametrize(
    "labels",
    [
        pd.Index([("a", "b"), 3, 1.5, None], dtype=object),  # tuple, int, float and None labels
        pd.MultiIndex.from_tuples([("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")]),
        pd.interval_range(0, 4),  # labels pandas looks up by containment
        pd.Index([3, 2, 1, 0]),  # integer labels that are not the positions
    ],
)
def test_columns_read_by_label_whatever_the_labels(labels):
    """Columns are read by their label (column_at), not by position: any kind of label reads
    the column at its own position, so fit, transform and the exact search agree with the
    same table under plain names."""
    from odtkit.core import search_numeric
    from odtkit.datasets._columns import column_at

    rng = np.random.default_rng(0)
    values = rng.integers(0, 5, size=(40, 4)).astype(float)
    values[rng.random(values.shape) < 0.1] = np.nan
    y = (np.nan_to_num(values[:, 0]) + values[:, 2].round() % 2 > 2).astype(int)
    odd = pd.DataFrame(values, columns=labels)
    plain = pd.DataFrame(values, columns=[str(c) for c in labels])
    for j in range(4):
        np.testing.assert_array_equal(column_at(odd, j).to_numpy(), values[:, j])
    np.testing.assert_array_equal(
        Binarizer().fit(odd).transform(odd), Binarizer().fit(plain).transform(plain)
    )
    ours = search_numeric(odd, y, lam=0.0, max_depth=2)
    reference = search_numeric(plain, y, lam=0.0, max_depth=2)
    assert ours.objective == reference.objective
    np.testing.assert_array_equal(
        ours.model.predict(ours.binarizer.transform(odd)),
        reference.model.predict(reference.binarizer.transform(plain)),
    )

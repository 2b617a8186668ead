"""Every bad input gets a ValueError/TypeError naming the argument (one test per case)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from odtkit import Dataset, greedy_tree
from odtkit.testing import brute_force_tree, example_dataset_trees

X_OK = np.array([[0, 1], [1, 0], [1, 1]])
Y_OK = np.array([0, 1, 1])


def test_non_binary_features():
    with pytest.raises(ValueError, match=r"X must be binary .*Binarizer"):
        Dataset.from_arrays([[0, 2], [1, 0]], [0, 1])


def test_nan_features():
    with pytest.raises(ValueError, match="X contains NaN"):
        Dataset.from_arrays([[0.0, np.nan], [1.0, 0.0]], [0, 1])


def test_string_features():
    with pytest.raises(TypeError, match="X must hold 0/1 numbers"):
        Dataset.from_arrays(np.array([["a", "b"], ["c", "d"]]), [0, 1])


def test_one_dimensional_features():
    with pytest.raises(ValueError, match="X must be 2-dimensional"):
        Dataset.from_arrays([0, 1, 1], [0, 1, 1])


def test_mixed_label_types():
    with pytest.raises(TypeError, match="y must hold labels of one type"):
        Dataset.from_arrays(X_OK, np.array([0, "a", 1], dtype=object))


def test_float_regression_labels():
    with pytest.raises(TypeError, match="y must hold class labels"):
        Dataset.from_arrays(X_OK, [0.5, 1.0, 0.0])


def test_nan_labels():
    with pytest.raises(ValueError, match="y contains NaN"):
        Dataset.from_arrays(X_OK, [0.0, np.nan, 1.0])


def test_length_mismatch():
    with pytest.raises(ValueError, match="X and y must have the same number of samples"):
        Dataset.from_arrays(X_OK, [0, 1])


def test_empty_data():
    with pytest.raises(ValueError, match="X is empty"):
        Dataset.from_arrays(np.zeros((0, 2)), np.zeros(0, dtype=int))


def test_feature_names_wrong_length():
    with pytest.raises(ValueError, match="feature_names"):
        Dataset.from_arrays(X_OK, Y_OK, feature_names=["a"])


def test_negative_sample_weight():
    with pytest.raises(ValueError, match="sample_weight"):
        Dataset.from_arrays(X_OK, Y_OK, sample_weight=[1, -1, 1])


def test_missing_label_column():
    frame = pd.DataFrame({"a": [0, 1], "b": [1, 0]})
    with pytest.raises(ValueError, match="label 'y' is not a column"):
        Dataset.from_frame(frame, "y")


def test_negative_lambda():
    with pytest.raises(ValueError, match="lam must be a finite number >= 0"):
        greedy_tree(example_dataset_trees(), lam=-0.5)


def test_non_numeric_lambda():
    with pytest.raises(TypeError, match="lam must be a non-negative number"):
        greedy_tree(example_dataset_trees(), lam="0.1")


def test_negative_depth():
    with pytest.raises(ValueError, match="max_depth must be >= 0"):
        brute_force_tree(example_dataset_trees(), lam=0.1, max_depth=-1)


def test_fractional_depth():
    with pytest.raises(TypeError, match="max_depth must be a non-negative integer"):
        greedy_tree(example_dataset_trees(), lam=0.1, max_depth=2.5)


def test_not_a_dataset():
    with pytest.raises(TypeError, match="dataset must be an odtkit Dataset"):
        greedy_tree((X_OK, Y_OK), lam=0.1)


def test_single_class_is_valid_and_optimum_is_one_leaf():
    data = Dataset.from_arrays(X_OK, [1, 1, 1])
    tree, value = brute_force_tree(data, lam=0.01, max_depth=2)
    assert tree.is_leaf and value == pytest.approx(0.01)
    assert greedy_tree(data, lam=0.01).is_leaf


def test_labels_keep_original_values():
    data = Dataset.from_arrays(X_OK, np.array(["yes", "no", "yes"]))
    assert data.classes.tolist() == ["no", "yes"]
    assert data.y.tolist() == [1, 0, 1]
    assert data.n_classes == 2


# --- a Dataset built directly (not via from_arrays) is checked too -------------------------------
X_BOOL = np.array([[0, 1], [1, 0], [1, 1]], dtype=bool)
Y_CODES = np.array([0, 1, 1])
CLASSES = np.array(["no", "yes"])
NAMES = ("a", "b")


def test_direct_dataset_float_labels():
    with pytest.raises(TypeError, match="y must hold integer class codes"):
        Dataset(X_BOOL, np.array([0.0, 1.0, 1.0]), CLASSES, NAMES)


def test_direct_dataset_one_dimensional_X():
    with pytest.raises(ValueError, match="X must be a 2-dimensional"):
        Dataset(np.array([True, False, True]), Y_CODES, CLASSES, NAMES)


def test_direct_dataset_non_bool_X():
    with pytest.raises(TypeError, match="X must be a bool array"):
        Dataset(X_BOOL.astype(int), Y_CODES, CLASSES, NAMES)


def test_direct_dataset_two_dimensional_y():
    with pytest.raises(ValueError, match="y must be a 1-dimensional"):
        Dataset(X_BOOL, Y_CODES[:, None], CLASSES, NAMES)


def test_direct_dataset_length_mismatch():
    with pytest.raises(ValueError, match="X and y must have the same number of samples"):
        Dataset(X_BOOL, Y_CODES[:2], CLASSES, NAMES)


def test_direct_dataset_codes_outside_the_classes():
    with pytest.raises(ValueError, match=r"y must hold class codes 0\.\.1"):
        Dataset(X_BOOL, np.array([0, 2, 1]), CLASSES, NAMES)
    with pytest.raises(ValueError, match="y must hold class codes"):
        Dataset(X_BOOL, np.array([0, -1, 1]), CLASSES, NAMES)


def test_direct_dataset_feature_names_length():
    with pytest.raises(ValueError, match="feature_names must have one name per column"):
        Dataset(X_BOOL, Y_CODES, CLASSES, ("a",))


@pytest.mark.parametrize(
    "weights,match",
    [
        ([1.0, -1.0, 1.0], "finite and >= 0"),
        ([1.0, np.nan, 1.0], "finite and >= 0"),
        ([1.0, np.inf, 1.0], "finite and >= 0"),
        ([1.0, 1.0], r"sample_weight must have shape \(3,\)"),
        ([[1.0, 1.0, 1.0]], r"sample_weight must have shape \(3,\)"),
    ],
)
def test_direct_dataset_bad_weights(weights, match):
    with pytest.raises(ValueError, match=match):
        Dataset(X_BOOL, Y_CODES, CLASSES, NAMES, "w", np.array(weights))


def test_direct_dataset_normalizes_what_cannot_change_meaning():
    data = Dataset(X_BOOL, Y_CODES.astype(np.int32), list(CLASSES), ["a", "b"], "d", [1, 2, 3])
    assert data.y.dtype == np.int64 and data.feature_names == ("a", "b")
    assert data.sample_weight.dtype == float and data.total_weight == 6.0
    assert data.classes.tolist() == ["no", "yes"]


def test_zero_total_weight_is_refused_where_the_objective_divides_by_it():
    from odtkit import compare, metrics
    from odtkit.tree import Tree

    data = Dataset(X_BOOL, Y_CODES, CLASSES, NAMES, "zero", np.zeros(3))
    with pytest.raises(ValueError, match="dataset has zero total sample weight"):
        greedy_tree(data, lam=0.1)
    with pytest.raises(ValueError, match="dataset has zero total sample weight"):
        metrics.objective(Tree.leaf(0), data, lam=0.1)
    with pytest.raises(ValueError, match="dataset has zero total sample weight"):
        compare(data, lam=0.1, max_depth=1)
    with pytest.raises(ValueError, match="sample_weight must have a positive sum"):
        Dataset.from_arrays(X_BOOL, Y_CODES, sample_weight=[0, 0, 0])
    empty = data.subset(np.zeros(3, dtype=bool))
    with pytest.raises(ValueError, match="dataset has no samples"):
        metrics.misclassified(Tree.leaf(0), empty)

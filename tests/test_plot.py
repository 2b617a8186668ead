"""Plots render (Agg backend) and draw what they claim."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

matplotlib = pytest.importorskip(
    "matplotlib", reason="matplotlib: the optional extra odtkit[plot] (in dev)"
)
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from odtkit import datasets  # noqa: E402
from odtkit.core import search_tree  # noqa: E402
from odtkit.plot import plot_cost_error_path, plot_traces, plot_tree  # noqa: E402
from odtkit.render import FeatureSpec  # noqa: E402
from odtkit.tree import Tree  # noqa: E402


def test_plot_tree_labels_every_node():
    tree = Tree.split(0, Tree.leaf(0), Tree.split(1, Tree.leaf(1), Tree.leaf(0)))
    ax = plot_tree(tree, ["a", "b"], ["neg", "pos"])
    nodes = sorted(t.get_text() for t in ax.texts if t.get_gid() == "odtkit-node")
    edges = sorted(t.get_text() for t in ax.texts if t.get_gid() == "odtkit-edge")
    assert nodes == ["a = 1", "b = 1", "neg", "neg", "pos"]
    assert edges == ["no", "no", "yes", "yes"]


def test_plot_tree_says_where_missing_values_go_as_export_text_does():
    # issue 37 item 13: a split of a column with missing cells says which side they take
    specs = [
        FeatureSpec("age", "threshold", 40.5, missing=True),  # missing passes: "yes"
        FeatureSpec("bmi", "threshold", 25.0, missing=False),  # missing fails: "no"
        FeatureSpec("x", "threshold", 3.0),  # no missing values at fit: nothing said
    ]
    tree = Tree.split(
        0, Tree.split(1, Tree.leaf(0), Tree.leaf(1)), Tree.split(2, Tree.leaf(1), Tree.leaf(0))
    )
    ax = plot_tree(tree, specs, ["neg", "pos"])
    nodes = [t.get_text() for t in ax.texts if t.get_gid() == "odtkit-node"]
    assert "age <= 40.5 or missing" in nodes
    assert "bmi <= 25\nno: bmi > 25 or missing" in nodes
    assert "x <= 3" in nodes
    from odtkit.render import tree_to_text

    text = tree_to_text(tree, specs, ["neg", "pos"])
    for words in ("age <= 40.5 or missing", "bmi > 25 or missing"):
        assert words in text  # the plot words it as export_text does
    assert _overlapping_pairs(_boxes(ax)) == []
    plt.close(ax.figure)


def test_plot_tree_of_a_fit_with_missing_cells_names_their_side():
    from odtkit.estimators import OptimalTreeClassifier

    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = (x > 0).astype(int)
    x[rng.random(200) < 0.2] = np.nan
    y[np.isnan(x)] = 1  # missing rows are positive: a good split sends them to x > t
    clf = OptimalTreeClassifier(max_depth=1).fit(pd.DataFrame({"x": x}), y)
    ax = plot_tree(clf)
    nodes = [t.get_text() for t in ax.texts if t.get_gid() == "odtkit-node"]
    splits = [label for label in nodes if "<=" in label]
    assert splits and all("or missing" in label for label in splits)
    plt.close(ax.figure)


def _boxes(ax) -> np.ndarray:
    """Display-space extents (x0, y0, x1, y1) of every label's drawn box."""
    ax.figure.canvas.draw()
    boxes = []
    for text in ax.texts:
        patch = text.get_bbox_patch()
        extent = (patch if patch is not None else text).get_window_extent()
        boxes.append((extent.x0, extent.y0, extent.x1, extent.y1))
    return np.array(boxes)


def _overlapping_pairs(boxes: np.ndarray) -> list[tuple[int, int]]:
    x0, y0, x1, y1 = (boxes[:, k] for k in range(4))
    overlap = (
        (x0[:, None] < x1[None, :])
        & (x0[None, :] < x1[:, None])
        & (y0[:, None] < y1[None, :])
        & (y0[None, :] < y1[:, None])
    )
    np.fill_diagonal(overlap, False)
    return [(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(overlap)), strict=True)]


def _random_tree(rng: np.random.Generator, n_leaves: int, n_features: int) -> Tree:
    if n_leaves == 1:
        return Tree.leaf(int(rng.integers(2)))
    left = int(rng.integers(1, n_leaves))
    feature = int(rng.integers(n_features))
    return Tree.split(
        feature, _random_tree(rng, left, n_features), _random_tree(rng, n_leaves - left, n_features)
    )


@pytest.fixture(scope="module")
def breast_cancer_tree():
    from sklearn.datasets import load_breast_cancer

    from odtkit.estimators import OptimalTreeClassifier

    frame, y = load_breast_cancer(as_frame=True, return_X_y=True)
    return OptimalTreeClassifier(lam=0.002, max_depth=3, max_thresholds=6).fit(frame, y)


@pytest.mark.parametrize("figsize", [None, (5, 3)])
def test_breast_cancer_drawing_has_no_overlapping_labels(breast_cancer_tree, figsize):
    clf = breast_cancer_tree
    assert clf.tree_.n_leaves >= 5
    ax = None if figsize is None else plt.subplots(figsize=figsize)[1]
    ax = plot_tree(clf.tree_, clf.binarizer_, ["malignant", "benign"], ax=ax)
    labels = [t.get_text() for t in ax.texts if t.get_gid() == "odtkit-node"]
    assert any(" <= " in label for label in labels)
    if figsize is not None:  # a small given axes scales the font down instead of overlapping
        assert ax.texts[0].get_fontsize() < 9
    assert _overlapping_pairs(_boxes(ax)) == []
    plt.close(ax.figure)


def test_thirty_leaf_tree_with_long_names_has_no_overlapping_labels():
    rng = np.random.default_rng(3)
    tree = _random_tree(rng, 30, 12)
    assert tree.n_leaves == 30
    specs = [
        FeatureSpec(f"a rather long column name {j}", "threshold", 1000 + j / 7) for j in range(12)
    ]
    ax = plot_tree(tree, specs, ["no", "yes"])
    boxes = _boxes(ax)
    assert len(boxes) == 30 + 29 + 2 * 29  # leaves, splits, edge labels
    assert _overlapping_pairs(boxes) == []
    # every label stays inside the figure
    width, height = ax.figure.canvas.get_width_height()
    assert boxes[:, 0].min() >= 0 and boxes[:, 2].max() <= width
    assert boxes[:, 1].min() >= 0 and boxes[:, 3].max() <= height
    plt.close(ax.figure)


def test_plot_traces_draws_incumbent_and_bound_per_solver():
    data = datasets.load("monk1")
    result = search_tree(data, lam=0.01, max_depth=3)

    class Fake:
        trace = pd.DataFrame({"time": [0.01, 0.2], "incumbent": [0.3, 0.2], "bound": [0.0, 0.2]})

    ax = plot_traces({"dp": result, "mip": Fake()})
    labels = [line.get_label() for line in ax.get_lines()]
    assert "mip incumbent" in labels and "mip bound" in labels
    assert "dp incumbent" in labels


def test_plot_frontier_draws_train_and_held_out():
    from odtkit.core import regularization_path
    from odtkit.plot import plot_frontier

    data = datasets.load("monk2")
    rows = list(range(0, data.n_samples, 2))
    train, test = data.subset(rows), data.subset(list(range(1, data.n_samples, 2)))
    path = regularization_path(train, max_depth=3)
    ax = plot_frontier(path, test, label="monk2")
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"monk2 train", "monk2 held-out"}
    assert list(lines["monk2 train"].get_xdata()) == [s.n_leaves for s in path.segments]
    assert list(lines["monk2 train"].get_ydata()) == pytest.approx(
        [1 - s.loss for s in path.segments]
    )
    cut = regularization_path(datasets.load("tic-tac-toe"), max_depth=4, time_limit=0.005)
    labels = [line.get_label() for line in plot_frontier(cut).get_lines()]
    assert ("train (not certified)" in labels) == (not cut.certified)


def test_plot_cost_error_path_draws_train_and_test_through_every_vertex():
    import numpy as np

    from odtkit.pruning import cost_error_path, worked_example

    trees, X, y, costs = worked_example()
    path = cost_error_path(trees, X, y, costs=costs)
    ax = plot_cost_error_path(path, X, y)
    train, test = ax.get_lines()
    np.testing.assert_allclose(train.get_xdata(), path.cost_term)
    np.testing.assert_allclose(train.get_ydata(), path.error_term)
    np.testing.assert_allclose(test.get_xdata(), path.cost_term)  # test data = training data
    assert "test" in test.get_label()
    assert len(plot_cost_error_path(path).get_lines()) == 1  # no test data: train only


def test_plot_traces_legend_names_only_what_is_drawn():
    # issue 22: CBC's trace has one row, which a step line does not draw, yet it was named twice
    from types import SimpleNamespace

    one_point = pd.DataFrame({"time": [0.4], "incumbent": [0.3], "bound": [0.3]})
    no_bound = pd.DataFrame({"time": [0.1, 0.2], "incumbent": [0.5, 0.3], "bound": [-np.inf] * 2})
    ax = plot_traces(
        {"cbc": SimpleNamespace(trace=one_point), "greedy": SimpleNamespace(trace=no_bound)}
    )
    drawn = {
        line.get_label()
        for line in ax.get_lines()
        if len(line.get_xdata()) > 1 or line.get_marker() not in ("None", None, "")
    }
    legend = {text.get_text() for text in ax.get_legend().get_texts()}
    assert legend == drawn == {"cbc incumbent", "cbc bound", "greedy incumbent"}
    plt.close(ax.figure)

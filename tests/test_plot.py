"""Plots render (Agg backend) and draw what they claim."""

from __future__ import annotations

import pandas as pd
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from odtkit import datasets  # noqa: E402
from odtkit.core import search_tree  # noqa: E402
from odtkit.plot import plot_cost_error_path, plot_traces, plot_tree  # noqa: E402
from odtkit.tree import Tree  # noqa: E402


def test_plot_tree_labels_every_node():
    tree = Tree.split(0, Tree.leaf(0), Tree.split(1, Tree.leaf(1), Tree.leaf(0)))
    ax = plot_tree(tree, ["a", "b"], ["no", "yes"])
    texts = sorted(t.get_text() for t in ax.texts)
    assert texts.count("no") == 2 and "yes" in texts and "a" in texts and "b" in texts


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

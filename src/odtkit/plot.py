"""Plots for notebooks: convergence traces of several solvers, a tree drawing, the accuracy–leaves
frontier of a regularization path, and the exact cost–error path of ensemble pruning.

matplotlib is optional (``pip install odtkit[plot]``); it is imported when a plot is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from odtkit.tree import Tree

__all__ = ["plot_cost_error_path", "plot_frontier", "plot_traces", "plot_tree"]


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plotting needs matplotlib: pip install 'odtkit[plot]'") from exc
    return plt


def _axes(ax: Any) -> Any:
    """``ax``, or the axes of a new 7 x 4 in figure (the size of every curve plot here)."""
    if ax is None:
        _, ax = _pyplot().subplots(figsize=(7, 4))
    return ax


def plot_traces(results: Mapping[str, Any], ax: Any = None, log_time: bool = True) -> Any:
    """Incumbent (solid) and lower bound (dashed) against time, one colour per solver.

    Parameters
    ----------
    results : mapping of label -> result
        Anything with a ``trace`` DataFrame of columns ``time, incumbent, bound``
        (an :class:`odtkit.results.Result` or a backend :class:`odtkit.solvers.Solution`).
    ax : matplotlib Axes, optional
    log_time : bool
        Logarithmic time axis (solvers differ by orders of magnitude).

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    for i, (label, result) in enumerate(results.items()):
        trace = getattr(result, "trace", None)
        if trace is None or len(trace) == 0:
            continue
        color = f"C{i % 10}"
        t = np.maximum(trace["time"].to_numpy(dtype=float), 1e-6)
        incumbent = trace["incumbent"].to_numpy(dtype=float)
        bound = trace["bound"].to_numpy(dtype=float)
        for values, style, what in ((incumbent, "-", "incumbent"), (bound, "--", "bound")):
            finite = np.isfinite(values)
            if not finite.any():
                continue  # nothing to draw, so nothing to name in the legend
            # a single point (CBC reports one) is no line: mark it, or the legend names nothing
            marker = "o" if finite.sum() == 1 else None
            ax.step(
                t[finite],
                values[finite],
                where="post",
                color=color,
                linestyle=style,
                marker=marker,
                label=f"{label} {what}",
            )
    if log_time:
        ax.set_xscale("log")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("objective  (misclassified/n + λ·leaves)")
    ax.legend(fontsize="small")
    return ax


def _text_width(text: str, fontsize: float) -> float:
    """Width of ``text`` (its widest line) in points at ``fontsize`` (no renderer needed)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    widths = [
        TextToPath().get_text_width_height_descent(line, FontProperties(size=fontsize), False)[0]
        for line in text.split("\n")
    ]
    return float(max(widths))


def plot_tree(
    model: Any,
    feature_names: Any = None,
    class_names: Any = None,
    ax: Any = None,
    fontsize: float = 9.0,
    *,
    data: Any = None,
    show_counts: bool = True,
) -> Any:
    """Draw a tree top-down: each split shows its test, the branch that passes it goes right.

    ``plot_tree(clf)`` draws a fitted :class:`~odtkit.OptimalTreeClassifier` (or its CV or fair
    variant) with its own feature descriptions, classes and, under each leaf's class, the
    leaf's weighted training class counts (``no: 3, yes: 10``).

    Every node owns a horizontal slot at least as wide as its label; a node's children share its
    slot side by side, so labels on one level never overlap, on trees of any size. Without
    ``ax`` the figure is sized to the layout (1 unit = 1 point: it grows with the leaves and the
    depth, the text stays ``fontsize``); in a given ``ax`` the font is scaled down when the
    layout would not fit (below ~3 pt glyph widths stop scaling evenly, so give a big tree a
    figure of its own).

    Parameters
    ----------
    model : fitted estimator, Result or Tree
        A Result's tree is drawn; a bare tree takes its names from the next arguments (and
        ``data``).
    feature_names : sequence of str or FeatureSpec, fitted Binarizer, or None
        As in :func:`odtkit.render.tree_to_text`: splits read ``age <= 40.5``, ``color = red``
        or ``x3 = 1``, with edges ``no`` (left, feature 0) and ``yes`` (right, feature 1).
        A split of a column that had missing values says where they go, in
        :func:`~odtkit.export_text`'s words: ``age <= 40.5 or missing`` (they take ``yes``), or
        a second line ``no: age > 40.5 or missing`` (they take ``no``). Overrides an
        estimator's own.
    class_names : sequence, optional
        Overrides an estimator's ``classes_``.
    ax : matplotlib Axes, optional
    fontsize : float
        Font size of the node labels in points.
    data : Dataset, optional
        For a bare tree or Result: training data whose class counts are shown at the leaves.
    show_counts : bool, default=True
        Show the class counts under each leaf when they are known.

    Returns
    -------
    matplotlib Axes
    """
    from odtkit.render import _class_text, _count_text, _model_parts, as_feature_specs

    tree, feature_names, class_names, counts = _model_parts(model, feature_names, class_names, data)
    if not isinstance(tree, Tree):
        raise TypeError(
            f"plot_tree draws trees, got a {type(tree).__name__} (odtkit.export_text prints it)"
        )
    counts = counts if show_counts else None
    plt = _pyplot()
    specs = as_feature_specs(feature_names, max(tree.features_used(), default=-1) + 1)
    pad, gap = 0.3 * fontsize, 0.8 * fontsize  # box padding (matplotlib's default), spacing
    edge_size = 0.85 * fontsize
    edge_width = max(_text_width(t, edge_size) for t in ("no", "yes")) + 2 * 0.2 * edge_size
    edge_height = 1.2 * edge_size + 2 * 0.2 * edge_size
    # a child slot holds both edge labels of its parent's half: no edge label can overlap
    min_slot = 2 * (edge_width + gap)
    labels: dict[int, str] = {}  # slot key (root 1, children 2k and 2k + 1) -> text
    leaf_keys: list[int] = []

    def collect(node: Tree, key: int) -> None:
        if node.is_leaf:
            label = node.as_leaf()
            text = str(class_names[label]) if class_names is not None else str(label)
            if counts is not None:  # leaves are met in pre-order, the order of the counts
                entries = [
                    f"{_class_text(class_names, k)}: {_count_text(c)}"
                    for k, c in enumerate(counts[len(leaf_keys)])
                ]
                # two classes share a line; more get a line each, so a leaf stays narrow
                text += "\n" + ("\n".join(entries) if len(entries) > 2 else ", ".join(entries))
            labels[key] = text
            leaf_keys.append(key)
        else:
            feature, left, right = node.as_split()
            spec = specs[feature]
            labels[key] = spec.condition(1)
            if getattr(spec, "missing", None) is False:
                # missing values take the "no" edge: say so in export_text's words (the "yes"
                # side's text carries "or missing" itself when they go there)
                labels[key] += f"\nno: {spec.condition(0)}"
            collect(left, 2 * key)
            collect(right, 2 * key + 1)

    collect(tree, 1)

    def half_height(key: int) -> float:
        """Half the height of a node's box (matplotlib's line spacing is 1.2 font sizes)."""
        return (1.2 * fontsize * (labels[key].count("\n") + 1) + 2 * pad) / 2

    # a split's box is one line, or two when it says where missing values go
    split_half = max(
        [half_height(key) for key in labels if key not in leaf_keys],
        default=(1.2 * fontsize + 2 * pad) / 2,
    )
    leaf_half = max(half_height(key) for key in leaf_keys)
    # parent box, edge label and child box stacked with a gap between each
    level = max(4.2 * fontsize, split_half + leaf_half + edge_height + gap)

    widths: dict[int, float] = {}

    def measure(node: Tree, key: int) -> float:
        own = max(_text_width(labels[key], fontsize) + 2 * pad + gap, min_slot)
        if not node.is_leaf:
            _, left, right = node.as_split()
            own = max(own, measure(left, 2 * key) + measure(right, 2 * key + 1))
        widths[key] = own
        return own

    total = measure(tree, 1)
    positions: dict[int, tuple[float, float]] = {}

    def place(node: Tree, key: int, start: float, depth: int) -> None:
        positions[key] = (start + widths[key] / 2, -depth * level)
        if node.is_leaf:
            return
        _, left, right = node.as_split()
        children = widths[2 * key] + widths[2 * key + 1]
        offset = start + (widths[key] - children) / 2
        place(left, 2 * key, offset, depth + 1)
        place(right, 2 * key + 1, offset + widths[2 * key], depth + 1)

    place(tree, 1, 0.0, 0)
    height = tree.depth * level
    margin = 1.5 * fontsize
    top = max(margin, (leaf_half if tree.is_leaf else split_half) + 0.6 * fontsize)
    bottom = max(margin, leaf_half + 0.6 * fontsize)
    if ax is None:
        fig = plt.figure(figsize=((total + 2 * margin) / 72, (height + top + bottom) / 72))
        ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
        scale = 1.0
    else:
        box = ax.get_window_extent()
        points = 72 / ax.figure.dpi
        scale = min(
            1.0,
            box.width * points / (total + 2 * margin),
            box.height * points / (height + top + bottom),
        )
    ax.set_xlim(-margin, total + margin)
    ax.set_ylim(-height - bottom, top)

    def draw(node: Tree, key: int) -> None:
        x, y = positions[key]
        leaf = node.is_leaf
        ax.text(
            x,
            y,
            labels[key],
            ha="center",
            va="center",
            multialignment="center",
            fontsize=fontsize * scale,
            bbox={"boxstyle": "round", "facecolor": "#e8f0e8" if leaf else "#dde6f4"},
            gid="odtkit-node",
        )
        if leaf:
            return
        _, left, right = node.as_split()
        for child, child_key, edge in ((left, 2 * key, "no"), (right, 2 * key + 1, "yes")):
            cx, cy = positions[child_key]
            ax.plot([x, cx], [y, cy], color="0.5", zorder=0)
            # the edge label sits halfway between the two boxes, on the edge
            ey = ((y - half_height(key)) + (cy + half_height(child_key))) / 2
            ex = x + (cx - x) * (y - ey) / (y - cy)
            ax.text(
                ex,
                ey,
                edge,
                ha="center",
                va="center",
                fontsize=edge_size * scale,
                color="0.3",
                bbox={"boxstyle": "square,pad=0.2", "facecolor": "white", "edgecolor": "none"},
                gid="odtkit-edge",
            )
            draw(child, child_key)

    draw(tree, 1)
    ax.set_axis_off()
    return ax


def plot_frontier(
    path: Any,
    test: Any = None,
    ax: Any = None,
    label: str = "",
) -> Any:
    """Accuracy against leaves along a regularization path: training and held-out.

    Every segment of the path is one optimal tree; its training accuracy (solid) falls as λ
    grows and leaves are removed, while a held-out set's (dashed, when ``test`` is given)
    usually peaks in between: the frontier shows which tree sizes pay off.

    Parameters
    ----------
    path : RegularizationPath
        From :func:`odtkit.core.regularization_path` (uncertified segments are drawn hollow).
    test : Dataset, optional
        Held-out data, with the training set's features, scored by :func:`odtkit.metrics.accuracy`.
    ax : matplotlib Axes, optional
    label : str
        Prefix of the legend entries (to overlay several paths).

    Returns
    -------
    matplotlib Axes
    """
    from odtkit import metrics

    ax = _axes(ax)
    prefix = f"{label} " if label else ""
    segments = list(path.segments)
    leaves = np.array([s.n_leaves for s in segments])
    train = np.array([1.0 - s.loss for s in segments])
    certified = np.array([s.certified for s in segments])
    (line,) = ax.plot(leaves, train, "-", marker="o", label=f"{prefix}train")
    if not certified.all():
        ax.plot(
            leaves[~certified],
            train[~certified],
            "o",
            markerfacecolor="white",
            color=line.get_color(),
            label=f"{prefix}train (not certified)",
        )
    if test is not None:
        held_out = np.array([metrics.accuracy(s.tree, test) for s in segments])
        ax.plot(
            leaves,
            held_out,
            "--",
            marker="s",
            color=line.get_color(),
            label=f"{prefix}held-out",
        )
    ax.set_xlabel("leaves")
    ax.set_ylabel("accuracy")
    ax.set_title("accuracy–leaves frontier (one optimal tree per λ segment)")
    ax.legend(fontsize="small")
    return ax


def plot_cost_error_path(
    path: Any,
    X_test: Any = None,
    y_test: Any = None,
    *,
    ax: Any = None,
    test_error: str = "error_soft",
    frame: Any = None,
) -> Any:
    """The exact cost–error trade-off of ensemble pruning (:func:`odtkit.pruning.cost_error_path`).

    Training: the IP3 error term (average per-tree error) against the average feature cost
    per example, one marker per vertex of the lower convex hull, joined by the hull's edges.
    With test data: each vertex's pruned ensemble measured on it, its ``test_error`` (a
    column of :meth:`~odtkit.pruning.PrunedEnsemble.evaluate`: ``error_soft``, ``error_hard``
    or ``error_term``) against its test feature cost.

    Parameters
    ----------
    path : CostErrorPath
    X_test, y_test : array-like, optional
        Held-out data; omitted: only the training curve.
    ax : matplotlib Axes, optional
    test_error : str
        Which test error to draw.
    frame : DataFrame, optional
        ``path.to_frame(X_test, y_test)`` if already computed (saves evaluating every vertex
        again).

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    if frame is None:
        frame = path.to_frame(X_test, y_test)
    ax.plot(
        frame["cost_term"], frame["error_term"], marker="o", ms=3, label="train (IP3 error term)"
    )
    column = f"test_{test_error}"
    if column in frame:
        ax.plot(
            frame["test_feature_cost"],
            frame[column],
            marker="s",
            ms=3,
            linestyle=":",
            label=f"test ({test_error.replace('_', ' ')})",
        )
    ax.set_xlabel("average feature cost per example")
    ax.set_ylabel("error")
    ax.set_title(f"cost–error path: {len(frame)} optimal prunings")
    ax.legend(fontsize="small")
    return ax

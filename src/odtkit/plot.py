"""Plots for notebooks: convergence traces, a tree drawing, and the accuracy–leaves frontier.

matplotlib is optional (``pip install odtkit[plot]``); it is imported when a plot is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from odtkit.tree import Tree

__all__ = ["plot_frontier", "plot_traces", "plot_tree"]


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plotting needs matplotlib: pip install 'odtkit[plot]'") from exc
    return plt


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
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    for i, (label, result) in enumerate(results.items()):
        trace = getattr(result, "trace", None)
        if trace is None or len(trace) == 0:
            continue
        color = f"C{i % 10}"
        t = np.maximum(trace["time"].to_numpy(dtype=float), 1e-6)
        incumbent = trace["incumbent"].to_numpy(dtype=float)
        bound = trace["bound"].to_numpy(dtype=float)
        ax.step(t, incumbent, where="post", color=color, label=f"{label} incumbent")
        finite = np.isfinite(bound)
        ax.step(
            t[finite],
            bound[finite],
            where="post",
            color=color,
            linestyle="--",
            label=f"{label} bound",
        )
    if log_time:
        ax.set_xscale("log")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("objective  (misclassified/n + λ·leaves)")
    ax.legend(fontsize="small")
    return ax


def plot_tree(
    tree: Tree,
    feature_names: Any = None,
    class_names: Any = None,
    ax: Any = None,
) -> Any:
    """Draw a tree top-down: internal nodes name their feature, ``x=0`` branches go left.

    Returns
    -------
    matplotlib Axes
    """
    plt = _pyplot()
    if ax is None:
        width = max(4.0, 1.6 * tree.n_leaves)
        _, ax = plt.subplots(figsize=(width, 1.4 * (tree.depth + 1) + 0.6))
    positions: dict[int, tuple[float, float]] = {}
    next_leaf = [0.0]

    def place(node: Tree, depth: int, key: int) -> float:
        if node.is_leaf:
            x = next_leaf[0]
            next_leaf[0] += 1.0
        else:
            x = (
                place(node.left, depth + 1, 2 * key) + place(node.right, depth + 1, 2 * key + 1)
            ) / 2
        positions[key] = (x, -float(depth))
        return x

    place(tree, 0, 1)

    def name(j: int) -> str:
        return str(feature_names[j]) if feature_names is not None else f"x{j}"

    def draw(node: Tree, key: int) -> None:
        x, y = positions[key]
        if node.is_leaf:
            text = str(class_names[node.label]) if class_names is not None else str(node.label)
            ax.text(
                x,
                y,
                text,
                ha="center",
                va="center",
                bbox={"boxstyle": "round", "facecolor": "#e8f0e8"},
            )
            return
        for child, child_key, edge in ((node.left, 2 * key, "0"), (node.right, 2 * key + 1, "1")):
            cx, cy = positions[child_key]
            ax.plot([x, cx], [y, cy], color="0.5", zorder=0)
            ax.text((x + cx) / 2, (y + cy) / 2, edge, fontsize="small", color="0.3")
            draw(child, child_key)
        ax.text(
            x,
            y,
            name(node.feature),
            ha="center",
            va="center",
            bbox={"boxstyle": "round", "facecolor": "#dde6f4"},
        )

    draw(tree, 1)
    ax.set_axis_off()
    ax.margins(0.15)
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

    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
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

"""The one text renderer of trees and rule lists, and the feature descriptions it reads.

A binary feature is described by a :class:`FeatureSpec`: where it comes from (``source``), what
kind of test it is and its parameter. The :class:`~odtkit.datasets.Binarizer` produces one per
output column (:meth:`~odtkit.datasets.Binarizer.get_feature_specs`), so a split reads as the
test on the raw column, in scikit-learn's ``export_text`` style:

=============  ======================  ======================
kind           feature = 1             feature = 0
=============  ======================  ======================
``threshold``  ``age <= 40.5``         ``age > 40.5``
``category``   ``color = red``         ``color != red``
``binary``     ``smoker = 1``          ``smoker = 0``
``missing``    ``age is missing``      ``age is not missing``
=============  ======================  ======================

A feature of a column that had missing values when the Binarizer was fitted also says on which
side a missing value falls (``FeatureSpec.missing``), and the text says so: ``age <= 40.5 or
missing`` / ``age > 40.5`` (missing rows pass the test), ``age <= 40.5`` / ``age > 40.5 or
missing`` (they fail it), likewise ``smoker = 1 or missing`` and ``color != red or missing``
(docs/formulations-trees.md §9). Features of columns without missing values read as above.

A plain string name carries no structure and is rendered as a ``binary`` feature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

# the feature descriptions live beside the columns they read (one definition of what a
# feature computes: FeatureSpec.evaluate); re-exported here, where the renderers read them
from odtkit._features import FeatureSpec, format_threshold

if TYPE_CHECKING:
    from odtkit.rulelist import RuleList
    from odtkit.tree import Tree

__all__ = [
    "FeatureSpec",
    "as_feature_specs",
    "export_text",
    "format_threshold",
    "rule_list_to_text",
    "tree_to_text",
]


def as_feature_specs(features: Any, n_features: int) -> list[FeatureSpec]:
    """Feature descriptions from any of the accepted forms, one per feature index.

    Parameters
    ----------
    features : None, Binarizer, or sequence of FeatureSpec / str
        ``None`` names the features ``x0, x1, ...``; a fitted Binarizer gives its
        :meth:`get_feature_specs`; a string is a plain binary feature's name.
    n_features : int
        How many features the model may index (at least one more than its largest index).
    """
    if features is None:
        return [FeatureSpec(f"x{j}") for j in range(n_features)]
    if hasattr(features, "get_feature_specs"):
        features = features.get_feature_specs()
    if isinstance(features, str) or not isinstance(features, (Sequence, np.ndarray)):
        raise TypeError(
            "feature_names must be a sequence of names or FeatureSpec, or a fitted Binarizer, "
            f"got {type(features).__name__}"
        )
    specs = [f if isinstance(f, FeatureSpec) else FeatureSpec(str(f)) for f in features]
    if len(specs) < n_features:
        raise ValueError(
            f"feature_names has {len(specs)} entries but the model tests feature {n_features - 1}"
        )
    return specs


def _class_text(class_names: Any, k: int) -> str:
    return str(class_names[k]) if class_names is not None else str(k)


def tree_to_text(
    tree: Tree, feature_names: Any = None, class_names: Any = None, leaf_counts: Any = None
) -> str:
    """``export_text``-style listing: one line per branch, ``x = 0`` branch first.

    ``leaf_counts`` (n_leaves, n_classes), leaves in pre-order, appends each leaf's class
    counts: ``class: yes [no: 3, yes: 10]``.

    Example::

        |--- age > 40.5
        |   |--- class: no
        |--- age <= 40.5
        |   |--- color != red
        |   |   |--- class: no
        |   |--- color = red
        |   |   |--- class: yes
    """
    specs = as_feature_specs(feature_names, max(tree.features_used(), default=-1) + 1)
    counts = _check_counts(leaf_counts, tree.n_leaves, "leaf_counts")
    lines: list[str] = []
    leaf = iter(range(tree.n_leaves))

    def walk(node: Tree, depth: int) -> None:
        indent = "|   " * depth
        if node.is_leaf:
            suffix = "" if counts is None else f" {_counts_text(counts[next(leaf)], class_names)}"
            lines.append(f"{indent}|--- class: {_class_text(class_names, node.as_leaf())}{suffix}")
            return
        feature, left, right = node.as_split()
        for bit, child in ((0, left), (1, right)):
            lines.append(f"{indent}|--- {specs[feature].condition(bit)}")
            walk(child, depth + 1)

    walk(tree, 0)
    return "\n".join(lines)


def rule_list_to_text(
    rule_list: RuleList, feature_names: Any = None, class_names: Any = None, rule_counts: Any = None
) -> str:
    """``if <conditions> then <class>`` / ``else if ...`` / ``else <class>`` listing.

    ``rule_counts`` (n_rules + 1, n_classes), the default rule last, appends the class counts
    of the rows each rule classifies.
    """
    specs = as_feature_specs(feature_names, max(rule_list.features_used(), default=-1) + 1)
    counts = _check_counts(rule_counts, rule_list.n_rules + 1, "rule_counts")

    def suffix(i: int) -> str:
        return "" if counts is None else f" {_counts_text(counts[i], class_names)}"

    lines = []
    for i, (antecedent, label) in enumerate(rule_list.rules):
        condition = " and ".join(specs[f].condition(v) for f, v in antecedent)
        keyword = "if" if i == 0 else "else if"
        lines.append(
            f"{keyword} {condition} then class: {_class_text(class_names, label)}{suffix(i)}"
        )
    prefix = "else " if rule_list.rules else ""
    lines.append(
        f"{prefix}class: {_class_text(class_names, rule_list.default_label)}"
        f"{suffix(rule_list.n_rules)}"
    )
    return "\n".join(lines)


# -- class counts and export_text -------------------------------------------------------------


def _check_counts(counts: Any, n_parts: int, what: str) -> np.ndarray | None:
    if counts is None:
        return None
    arr = np.asarray(counts, dtype=float)
    if arr.ndim != 2 or arr.shape[0] != n_parts:
        raise ValueError(f"{what} must have shape ({n_parts}, n_classes), got {arr.shape}")
    return arr


def _count_text(value: float) -> str:
    """A (weighted) count: ``13`` for whole numbers, else at most two decimals."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _counts_text(counts: Any, class_names: Any = None) -> str:
    """``[no: 3, yes: 10]``: one leaf's (or rule's) training class counts, classes in order."""
    return (
        "["
        + ", ".join(
            f"{_class_text(class_names, k)}: {_count_text(c)}" for k, c in enumerate(counts)
        )
        + "]"
    )


def _model_parts(
    model: Any, feature_names: Any = None, class_names: Any = None, data: Any = None
) -> tuple[Any, Any, Any, np.ndarray | None]:
    """What a renderer needs from a fitted estimator, a Result, a Tree or a RuleList.

    Returns ``(model, feature descriptions, class names, counts)``: an estimator gives its own
    (its training counts per leaf or rule stored at fit time); otherwise the arguments, with
    ``data`` (a :class:`~odtkit.datasets.Dataset` the model's features index) supplying the
    counts and, when not given, the feature and class names. Explicit arguments win.
    """
    if hasattr(model, "_render_parts"):  # a fitted odtkit estimator
        own, features, classes, counts = model._render_parts()
        return (
            own,
            features if feature_names is None else feature_names,
            classes if class_names is None else class_names,
            counts,
        )
    if hasattr(model, "get_params") and hasattr(model, "fit"):
        raise TypeError(
            f"{type(model).__name__} is not an odtkit tree or rule-list estimator "
            "(for scikit-learn's trees use sklearn.tree.export_text / plot_tree)"
        )
    if hasattr(model, "model") and hasattr(model, "status"):  # a Result
        model = model.model
    if model is None:
        raise ValueError("model holds no tree or rule list (the solver returned none)")
    if not (hasattr(model, "apply") and hasattr(model, "features_used")):
        raise TypeError(
            "model must be a fitted odtkit estimator, a Result, a Tree or a RuleList, "
            f"got {type(model).__name__}"
        )
    counts = None
    if data is not None:
        n_parts = model.n_leaves if hasattr(model, "n_leaves") else model.n_rules + 1
        counts = np.zeros((n_parts, int(data.n_classes)))
        np.add.at(counts, (model.apply(data.X), data.y), data.weights)
        feature_names = data.feature_names if feature_names is None else feature_names
        class_names = data.classes if class_names is None else class_names
    return model, feature_names, class_names, counts


def export_text(
    model: Any,
    feature_names: Any = None,
    class_names: Any = None,
    *,
    data: Any = None,
    show_counts: bool = True,
) -> str:
    """A tree or rule list as text, tests on the raw columns and class counts at the leaves.

    Parameters
    ----------
    model : fitted estimator, Result, Tree or RuleList
        :class:`~odtkit.OptimalTreeClassifier` (and its CV and fair variants) or
        :class:`~odtkit.OptimalRuleListClassifier`: their feature descriptions, classes and
        weighted training counts are used; a Result's model; or a bare model.
    feature_names : sequence of str or FeatureSpec, fitted Binarizer, or None
        As in :func:`tree_to_text` (overrides an estimator's own).
    class_names : sequence, optional
        The class values the labels index (overrides an estimator's ``classes_``).
    data : Dataset, optional
        For a bare model or Result: the training data, whose weighted class counts per leaf
        (or rule) are shown, and whose names are used unless given.
    show_counts : bool, default=True
        Append ``[class: count, ...]`` to each leaf (rule) when counts are known.

    Example::

        |--- mean concave points > 0.0489
        |   |--- class: 0 [0: 186, 1: 12]
        |--- mean concave points <= 0.0489
        |   |--- class: 1 [0: 26, 1: 345]
    """
    model, features, classes, counts = _model_parts(model, feature_names, class_names, data)
    counts = counts if show_counts else None
    if hasattr(model, "rules"):
        return rule_list_to_text(model, features, classes, rule_counts=counts)
    return tree_to_text(model, features, classes, leaf_counts=counts)

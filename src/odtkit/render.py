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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from odtkit.rulelist import RuleList
    from odtkit.tree import Tree

__all__ = [
    "FeatureSpec",
    "as_feature_specs",
    "format_threshold",
    "rule_list_to_text",
    "tree_to_text",
]

FeatureKind = Literal["binary", "threshold", "category", "missing"]
_KINDS = ("binary", "threshold", "category", "missing")


def format_threshold(value: float) -> str:
    """Shortest text that reads back as exactly ``value`` (``25.5``, ``3``, ``1e-07``).

    ``repr`` round-trips, so two different thresholds never get the same text; only the
    redundant ``.0`` of whole numbers is dropped.
    """
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _format_value(value: object) -> str:
    if isinstance(value, (float, np.floating)):
        return format_threshold(float(value))
    return str(value)


@dataclass(frozen=True)
class FeatureSpec:
    """What one binary feature tests on the raw data.

    Parameters
    ----------
    source : str
        The raw column the feature is computed from.
    kind : {"binary", "threshold", "category", "missing"}
        ``threshold``: the feature is ``source <= value``; ``category``: ``source == value``;
        ``binary``: the raw column itself is 0/1 (``value`` unused); ``missing``: the value of
        ``source`` is missing (``value`` unused).
    value : float, category value or None
    missing : bool or None, default=None
        The feature's value on a row whose ``source`` is missing, for a column that had
        missing values when the features were chosen: ``True`` (``age <= 40.5 or missing``)
        or ``False`` (``age <= 40.5``, so ``age > 40.5 or missing`` when 0). ``None``: the
        column had no missing values; the text then does not mention them (such a feature is
        0 on a missing value, see :class:`~odtkit.datasets.Binarizer`). Ignored by ``missing``.
    """

    source: str
    kind: FeatureKind = "binary"
    value: Any = None
    missing: bool | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(
                f"kind must be 'binary', 'threshold', 'category' or 'missing', got {self.kind!r}"
            )
        if self.missing not in (None, True, False):
            raise ValueError(f"missing must be None, True or False, got {self.missing!r}")

    @property
    def name(self) -> str:
        """The feature's column name (what ``Binarizer.get_feature_names_out`` returns)."""
        if self.kind == "missing":
            return f"{self.source} is missing"
        if self.kind == "threshold":
            name = f"{self.source}<={format_threshold(self.value)}"
        elif self.kind == "category":
            name = f"{self.source}={_format_value(self.value)}"
        else:
            name = self.source
        # the "missing fails" feature keeps the plain name: it is what x <= t means on NaN
        return f"{name} or missing" if self.missing else name

    def condition(self, bit: int) -> str:
        """The test a sample with feature value ``bit`` (0 or 1) passes, as text."""
        if self.kind == "missing":
            return f"{self.source} is {'' if bit else 'not '}missing"
        if self.kind == "threshold":
            text = f"{self.source} {'<=' if bit else '>'} {format_threshold(self.value)}"
        elif self.kind == "category":
            text = f"{self.source} {'=' if bit else '!='} {_format_value(self.value)}"
        else:
            text = f"{self.source} = {int(bit)}"
        # a missing value passes the side whose bit is the feature's value on it
        if self.missing is not None and bool(bit) == self.missing:
            text += " or missing"
        return text

    def __str__(self) -> str:
        return self.name


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


def tree_to_text(tree: Tree, feature_names: Any = None, class_names: Any = None) -> str:
    """``export_text``-style listing: one line per branch, ``x = 0`` branch first.

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
    lines: list[str] = []

    def walk(node: Tree, depth: int) -> None:
        indent = "|   " * depth
        if node.is_leaf:
            lines.append(f"{indent}|--- class: {_class_text(class_names, node.label)}")
            return
        for bit, child in ((0, node.left), (1, node.right)):
            lines.append(f"{indent}|--- {specs[node.feature].condition(bit)}")
            walk(child, depth + 1)

    walk(tree, 0)
    return "\n".join(lines)


def rule_list_to_text(
    rule_list: RuleList, feature_names: Any = None, class_names: Any = None
) -> str:
    """``if <conditions> then <class>`` / ``else if ...`` / ``else <class>`` listing."""
    specs = as_feature_specs(feature_names, max(rule_list.features_used(), default=-1) + 1)
    lines = []
    for i, (antecedent, label) in enumerate(rule_list.rules):
        condition = " and ".join(specs[f].condition(v) for f, v in antecedent)
        keyword = "if" if i == 0 else "else if"
        lines.append(f"{keyword} {condition} then class: {_class_text(class_names, label)}")
    prefix = "else " if rule_list.rules else ""
    lines.append(f"{prefix}class: {_class_text(class_names, rule_list.default_label)}")
    return "\n".join(lines)

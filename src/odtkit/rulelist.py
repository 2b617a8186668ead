"""RuleList: an ordered list of if-then rules with a default rule (the CORELS model).

A rule is ``(antecedent, label)`` where the antecedent is a conjunction of literals
``(feature, value)`` meaning ``x[feature] == value`` over binary features. A sample is classified
by the first rule whose antecedent holds, otherwise by the default label. The sparsity penalty
counts rules; the default rule is free (Angelino et al. 2018 (CORELS), eq. 4;
docs/formulations-search-and-pruning.md §5.2),
which is what :func:`odtkit.metrics.objective` charges through :attr:`RuleList.n_rules`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from odtkit._validation import as_binary_matrix

__all__ = ["Antecedent", "RuleList", "antecedent_truth"]

Literal = tuple[int, int]
Antecedent = tuple[Literal, ...]


def _check_antecedent(antecedent: Any) -> Antecedent:
    try:
        literals = tuple(antecedent)
    except TypeError:
        raise TypeError(
            f"an antecedent must be a sequence of (feature, value) pairs, got {antecedent!r}"
        ) from None
    if not literals:
        raise ValueError("an antecedent needs at least one literal")
    out = []
    for literal in literals:
        if not isinstance(literal, Sequence) or len(literal) != 2:
            raise TypeError(f"a literal must be a (feature, value) pair, got {literal!r}")
        feature, value = literal
        if isinstance(feature, bool) or not isinstance(feature, (int, np.integer)) or feature < 0:
            raise TypeError(f"a literal's feature must be a non-negative index, got {feature!r}")
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, (int, np.integer)) or value not in (0, 1):
            raise ValueError(f"a literal's value must be 0 or 1, got {value!r}")
        out.append((int(feature), int(value)))
    features = [f for f, _ in out]
    if len(set(features)) != len(features):
        raise ValueError(f"an antecedent may test each feature once, got {out}")
    return tuple(sorted(out))


def _check_label(label: Any, what: str) -> int:
    if isinstance(label, bool) or not isinstance(label, (int, np.integer)) or label < 0:
        raise TypeError(f"{what} must be a non-negative class code, got {label!r}")
    return int(label)


def antecedent_truth(X: np.ndarray, antecedent: Antecedent) -> np.ndarray:
    """Boolean vector: which rows of binary ``X`` satisfy every literal of ``antecedent``."""
    features = [f for f, _ in antecedent]
    values = np.array([v for _, v in antecedent], dtype=bool)
    truth: np.ndarray = np.all(X[:, features] == values, axis=1)
    return truth


@dataclass(frozen=True)
class RuleList:
    """An ordered rule list ``if a_1 then q_1 elif a_2 then q_2 ... else q_0``.

    Parameters
    ----------
    rules : sequence of (antecedent, label)
        ``antecedent`` is a sequence of ``(feature, value)`` literals (a conjunction over binary
        features, each feature at most once); ``label`` is a class code.
    default_label : int
        Class code predicted when no rule fires.
    """

    rules: tuple[tuple[Antecedent, int], ...]
    default_label: int

    def __init__(self, rules: Sequence[tuple[Any, int]] = (), default_label: int = 0) -> None:
        checked = []
        for rule in rules:
            if not isinstance(rule, Sequence) or len(rule) != 2:
                raise TypeError(f"a rule must be an (antecedent, label) pair, got {rule!r}")
            checked.append((_check_antecedent(rule[0]), _check_label(rule[1], "a rule's label")))
        object.__setattr__(self, "rules", tuple(checked))
        object.__setattr__(self, "default_label", _check_label(default_label, "default_label"))

    # structure ------------------------------------------------------------------------------
    @property
    def n_rules(self) -> int:
        """Number of rules, the default rule excluded (what ``lam`` multiplies)."""
        return len(self.rules)

    def __len__(self) -> int:
        return self.n_rules

    def features_used(self) -> set[int]:
        return {f for antecedent, _ in self.rules for f, _ in antecedent}

    # prediction -----------------------------------------------------------------------------
    def apply(self, X: Any) -> np.ndarray:
        """Index of the rule that classifies each row (``n_rules`` for the default rule)."""
        X = as_binary_matrix(X)
        needed = max(self.features_used(), default=-1) + 1
        if X.shape[1] < needed:
            raise ValueError(
                f"X has {X.shape[1]} features but the rule list uses feature {needed - 1}"
            )
        out = np.full(X.shape[0], self.n_rules, dtype=np.int64)
        free = np.ones(X.shape[0], dtype=bool)
        for i, (antecedent, _) in enumerate(self.rules):
            fires = free & antecedent_truth(X, antecedent)
            out[fires] = i
            free &= ~fires
        return out

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class codes (int64) for the rows of binary matrix ``X``."""
        labels = np.array([label for _, label in self.rules] + [self.default_label], dtype=np.int64)
        predicted: np.ndarray = labels[self.apply(X)]  # numpy types fancy indexing as Any
        return predicted

    # serialisation ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form; :meth:`from_dict` inverts it."""
        return {
            "rules": [
                {"antecedent": [[f, v] for f, v in antecedent], "label": label}
                for antecedent, label in self.rules
            ],
            "default_label": self.default_label,
        }

    @staticmethod
    def from_dict(data: dict[str, Any]) -> RuleList:
        if not isinstance(data, dict) or "rules" not in data or "default_label" not in data:
            raise ValueError("a rule-list dict needs 'rules' and 'default_label'")
        rules = []
        for rule in data["rules"]:
            if not isinstance(rule, dict) or "antecedent" not in rule or "label" not in rule:
                raise ValueError(f"each rule needs 'antecedent' and 'label', got {rule!r}")
            rules.append(([tuple(lit) for lit in rule["antecedent"]], rule["label"]))
        return RuleList(rules, data["default_label"])

    def to_text(self, feature_names: Any = None, class_names: Any = None) -> str:
        """``if ... then class: ...`` / ``else if ...`` / ``else class: ...`` listing.

        ``feature_names`` and ``class_names`` as in :meth:`odtkit.tree.Tree.to_text`.
        """
        from odtkit.render import rule_list_to_text

        return rule_list_to_text(self, feature_names, class_names)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return f"RuleList(n_rules={self.n_rules}, default_label={self.default_label})"

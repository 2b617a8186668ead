"""The single definition of every objective and side constraint.

Every solver's answer (search core, any MIP backend, oracle, greedy) is re-evaluated here; a
result whose reported objective disagrees with :func:`objective` is a bug.

The objective (OSDT): ``R(T) = misclassified(T) / n + lam * n_leaves(T)`` where ``n`` is the
number of samples (total weight when the dataset is weighted) and *every* leaf counts. For a rule
list the penalty counts rules (the default rule is free), as in CORELS.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from odtkit._validation import check_dataset, check_lambda
from odtkit.datasets import Dataset


class Classifier(Protocol):
    def predict(self, X: np.ndarray) -> np.ndarray: ...


def penalty_count(model: Any) -> int:
    """What ``lam`` multiplies: rules for a rule list, leaves for a tree."""
    if hasattr(model, "n_rules"):
        return int(model.n_rules)
    if hasattr(model, "n_leaves"):
        return int(model.n_leaves)
    raise TypeError(f"model must be a Tree or RuleList, got {type(model).__name__}")


def misclassified(model: Classifier, dataset: Dataset) -> float:
    """Weighted number of training samples the model gets wrong (an integer when unweighted)."""
    dataset = check_dataset(dataset)
    wrong = model.predict(dataset.X) != dataset.y
    if dataset.sample_weight is None:
        return float(np.count_nonzero(wrong))
    return float(dataset.sample_weight[wrong].sum())


def loss(model: Classifier, dataset: Dataset) -> float:
    """Misclassified fraction (weighted)."""
    return misclassified(model, dataset) / dataset.total_weight


def accuracy(model: Classifier, dataset: Dataset) -> float:
    """Fraction (weighted) of samples classified correctly."""
    return 1.0 - loss(model, dataset)


def objective(model: Any, dataset: Dataset, *, lam: float) -> float:
    """The OSDT objective ``misclassified / n + lam * n_leaves`` (``n_rules`` for a rule list).

    Parameters
    ----------
    model : Tree or RuleList
    dataset : Dataset
    lam : float
        Per-leaf penalty on the n-normalized loss, ``>= 0``.
    """
    lam = check_lambda(lam)
    count = penalty_count(model)
    return loss(model, dataset) + lam * count


def objective_counts(model: Any, dataset: Dataset, *, lam: float) -> float:
    """The objective in count units, ``misclassified + lam * n * n_leaves`` (exact for ties)."""
    lam = check_lambda(lam)
    count = penalty_count(model)
    return misclassified(model, dataset) + lam * dataset.total_weight * count


FAIRNESS_NOTIONS = (
    "statistical_parity",
    "predictive_equality",
    "equal_opportunity",
    "equalized_odds",
)


def fairness_gap(
    model: Classifier,
    dataset: Dataset,
    protected: np.ndarray,
    notion: str = "statistical_parity",
    positive_class: int = 1,
) -> float:
    """Largest disparity between protected groups (FORMULATIONS-TREES §5.3), training rows only.

    ``statistical_parity`` compares P(yhat = +) over all rows of each group,
    ``predictive_equality`` over true negatives (FPR), ``equal_opportunity`` over true positives
    (TPR) and ``equalized_odds`` takes the larger of the last two. Groups with no row in the
    compared set are skipped; the gap is the max over all pairs of groups.
    """
    dataset = check_dataset(dataset)
    protected = np.asarray(protected)
    if protected.shape != (dataset.n_samples,):
        raise ValueError(f"protected must have shape ({dataset.n_samples},), got {protected.shape}")
    if notion not in FAIRNESS_NOTIONS:
        raise ValueError(f"notion must be one of {FAIRNESS_NOTIONS}, got {notion!r}")
    positive = model.predict(dataset.X) == positive_class
    is_pos = dataset.y == positive_class
    w = dataset.weights

    def gap(selection: np.ndarray) -> float:
        rates = []
        for group in np.unique(protected):
            rows = selection & (protected == group)
            mass = w[rows].sum()
            if mass > 0:
                rates.append(w[rows & positive].sum() / mass)
        return float(max(rates) - min(rates)) if len(rates) > 1 else 0.0

    everyone = np.ones(dataset.n_samples, dtype=bool)
    if notion == "statistical_parity":
        return gap(everyone)
    if notion == "predictive_equality":
        return gap(~is_pos)
    if notion == "equal_opportunity":
        return gap(is_pos)
    return max(gap(~is_pos), gap(is_pos))

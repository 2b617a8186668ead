"""The single definition of every objective and side constraint.

Every solver's answer (search core, any MIP backend, oracle, greedy) is re-evaluated here; a
result whose reported objective disagrees with :func:`objective` is a bug.

The objective (OSDT): ``R(T) = misclassified(T) / n + lam * n_leaves(T)`` where ``n`` is the
number of samples (total weight when the dataset is weighted) and *every* leaf counts. For a rule
list the penalty counts rules (the default rule is free), as in CORELS.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from odtkit._validation import check_lambda
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset
from odtkit.fairness import FAIRNESS_TOLERANCE, resolve_fairness

if TYPE_CHECKING:
    from odtkit.fairness import Fairness, FairnessGroups

__all__ = [
    "Classifier",
    "accuracy",
    "constraint_violations",
    "cost",
    "fairness_gap",
    "is_fair",
    "loss",
    "misclassified",
    "objective",
    "objective_counts",
    "penalty_count",
]


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


def cost(model: Classifier, dataset: Dataset, costs: Any = None) -> float:
    """What ``model``'s training predictions cost under a cost objective (:mod:`odtkit.costs`):
    the sum of each row's loss for its predicted class; the misclassified weight when
    ``costs`` is None.

    Parameters
    ----------
    model : Tree or any classifier with ``predict``
    dataset : Dataset
    costs : Costs, ResolvedConstraints or None
        The cost objective, or constraints resolved against ``dataset`` (their cost, if any).
    """
    dataset = check_dataset(dataset)
    losses = _losses(costs, dataset)
    if losses is None:
        return misclassified(model, dataset)
    pred = np.asarray(model.predict(dataset.X))
    return float(losses[np.arange(pred.size), pred].sum())


def _losses(costs: Any, dataset: Dataset) -> np.ndarray | None:
    from odtkit.constraints import ResolvedConstraints
    from odtkit.costs import Costs

    if costs is None:
        return None
    if isinstance(costs, ResolvedConstraints):
        if costs.n_samples != dataset.n_samples:
            raise ValueError("costs: the constraints were resolved against another dataset")
        return costs.losses
    if isinstance(costs, Costs):
        return costs.losses(dataset)
    raise TypeError(
        f"costs must be a cost objective of odtkit.costs or a ResolvedConstraints, got "
        f"{type(costs).__name__}"
    )


def objective(model: Any, dataset: Dataset, *, lam: float, costs: Any = None) -> float:
    """The OSDT objective ``misclassified / n + lam * n_leaves`` (``n_rules`` for a rule list).

    With ``costs`` (:mod:`odtkit.costs`), ``cost / n + lam * n_leaves``: the one truth every
    solver's objective under a cost objective is re-measured by.

    Parameters
    ----------
    model : Tree or RuleList
    dataset : Dataset
    lam : float
        Per-leaf penalty on the n-normalized loss, ``>= 0``.
    costs : Costs, ResolvedConstraints or None
        A cost objective (or resolved constraints that may state one); None: misclassification.
    """
    lam = check_lambda(lam)
    count = penalty_count(model)
    dataset = check_dataset(dataset)
    return cost(model, dataset, costs) / dataset.total_weight + lam * count


def objective_counts(model: Any, dataset: Dataset, *, lam: float) -> float:
    """The objective in count units, ``misclassified + lam * n * n_leaves`` (exact for ties)."""
    lam = check_lambda(lam)
    count = penalty_count(model)
    return misclassified(model, dataset) + lam * dataset.total_weight * count


def fairness_gap(model: Classifier, dataset: Dataset, fairness: Fairness | FairnessGroups) -> float:
    """Largest disparity of ``model`` over the pairs ``fairness`` constrains.

    The disparity of docs/formulations-trees.md §5.3.

    The single truth for fairness: every tree a fair solver returns is re-measured here.
    Rates are over the training rows of ``dataset`` (weighted by ``sample_weight``).

    Parameters
    ----------
    model : Tree or any classifier with ``predict``
    dataset : Dataset
    fairness : Fairness or FairnessGroups
        The constraint (a :class:`~odtkit.fairness.FairnessGroups` already resolved against
        ``dataset`` skips the resolution).
    """
    groups = resolve_fairness(fairness, dataset)
    positive = model.predict(dataset.X) == groups.positive_code
    return groups.gap(positive)


def is_fair(model: Classifier, dataset: Dataset, fairness: Fairness | FairnessGroups) -> bool:
    """Whether ``fairness_gap <= delta`` up to ``odtkit.fairness.FAIRNESS_TOLERANCE``."""
    groups = resolve_fairness(fairness, dataset)
    return fairness_gap(model, dataset, groups) <= groups.delta + FAIRNESS_TOLERANCE


def constraint_violations(
    model: Any, dataset: Dataset, constraints: Any, *, sources: Any = None
) -> list[str]:
    """Every constraint of ``constraints`` that ``model`` (a Tree) breaks on ``dataset``.

    The single truth for side constraints (:mod:`odtkit.constraints`): every tree a solver
    returns under constraints is re-checked here, and one that breaks any is an error, never
    a certificate.

    Parameters
    ----------
    model : Tree
    dataset : Dataset
    constraints : list of constraints or ResolvedConstraints
    sources : sequence of str, optional
        The raw column of each binary feature (see :func:`odtkit.constraints.resolve`).

    Returns
    -------
    list of str : one line per broken row (empty when the tree satisfies every constraint).
    """
    from odtkit.constraints import resolve

    resolved = resolve(constraints, dataset, sources=sources)
    return resolved.violations(model, dataset)

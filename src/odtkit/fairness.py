"""One way to state a fairness constraint, used by every solver, metric and oracle.

A :class:`Fairness` says *which* disparity is bounded (the notion), *between whom* (the protected
attribute(s), given separately from the split features), *how much* (``delta``) and *what* a
positive prediction is (``positive_class``). :meth:`Fairness.groups` resolves it against a
dataset into :class:`FairnessGroups`: the list of constrained pairs of row sets
(docs/formulations-trees.md §5.2) and one linear functional per pair,

    disparity_j(yhat) = sum_i coef[i, j] * [yhat_i = positive],
    coef[i, j] = w_i / W(G_j) for i in G_j,  -w_i / W(G'_j) for i in G'_j,  0 otherwise,

so a tree is delta-fair iff ``|disparity_j| <= delta`` for every pair ``j`` (§5.3). The MIP
blocks, the native fair search, the brute-force oracle and :func:`odtkit.metrics.fairness_gap`
all read these same coefficients. Rates are weighted by ``sample_weight`` (with unit weights
they are the group-size normalized rates of §5.2-5.3).

Two facts every solver relies on: a constant predictor has disparity 0 for every pair (each
row of ``coef`` sums to 0 over a group pair), so a single leaf is always fair; and ``delta = 1``
constrains nothing, since a rate difference never exceeds 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from odtkit.datasets._dataset import check_dataset

__all__ = [
    "FAIRNESS_TOLERANCE",
    "NOTIONS",
    "NOTION_ALIASES",
    "NOTION_DESCRIPTIONS",
    "Fairness",
    "FairnessGroups",
    "GroupPair",
    "NOTION_REGISTRY",
    "Notion",
    "notion_help",
    "resolve_fairness",
    "split_protected",
]


@dataclass(frozen=True)
class Notion:
    """A fairness notion: whose positive-prediction rates are compared.

    The one place a notion is defined: :class:`Fairness` validates against it, :meth:`Fairness.
    groups` builds the compared row sets from it, and the CLI's and the estimator's help read
    it. Every solver sees only the resulting pairs of row sets (their coefficients), so a new
    notion is a new entry of :data:`NOTION_REGISTRY` and nothing else.

    Attributes
    ----------
    name : str
        The short name (``Fairness(notion=...)``, ``--fairness``).
    title : str
        What it is called in words.
    rate : str
        The compared rate, for messages.
    rows : tuple of (str, str)
        One comparison per entry: a suffix for the pair's label and which rows the rates are
        taken over, ``"all"``, ``"negative"`` (true label not the positive class) or
        ``"positive"``.
    aliases : tuple of str
        Long names accepted for it.
    legit : bool
        Compares within each value of a legitimate factor (``Fairness(legit=...)``, required).
    """

    name: str
    title: str
    rate: str
    rows: tuple[tuple[str, str], ...]
    aliases: tuple[str, ...] = ()
    legit: bool = False

    @property
    def description(self) -> str:
        return f"{self.title}: {self.rate}"


#: Every notion, by short name.
NOTION_REGISTRY: dict[str, Notion] = {
    n.name: n
    for n in (
        Notion(
            "sp",
            "statistical parity",
            "P(yhat=+ | group)",
            (("", "all"),),
            ("statistical_parity", "demographic_parity"),
        ),
        Notion(
            "csp",
            "conditional statistical parity",
            "P(yhat=+ | group, legit)",
            (("", "all"),),
            ("conditional_statistical_parity",),
            legit=True,
        ),
        Notion(
            "pe",
            "predictive equality",
            "P(yhat=+ | group, y!=+) (false positive rate)",
            ((" | y!=+", "negative"),),
            ("predictive_equality",),
        ),
        Notion(
            "eopp",
            "equal opportunity",
            "P(yhat=+ | group, y=+) (true positive rate)",
            ((" | y=+", "positive"),),
            ("equal_opportunity", "equality_of_opportunity"),
        ),
        Notion(
            "eodds",
            "equalized odds",
            "both the pe and the eopp rates",
            ((" | y!=+", "negative"), (" | y=+", "positive")),
            ("equalized_odds",),
        ),
    )
}
#: Notions (short names) and the long names accepted as aliases, read from the registry.
NOTIONS = tuple(NOTION_REGISTRY)
NOTION_ALIASES = {alias: n.name for n in NOTION_REGISTRY.values() for alias in n.aliases}
NOTION_DESCRIPTIONS = {n.name: n.description for n in NOTION_REGISTRY.values()}


def notion_help() -> str:
    """``"sp (statistical parity), csp (...), ..."``: the notions in words, for help texts."""
    return ", ".join(f"{n.name} ({n.title})" for n in NOTION_REGISTRY.values())


def _check_notion(notion: object) -> str:
    if not isinstance(notion, str):
        raise TypeError(f"notion must be a string, got {type(notion).__name__}")
    key = notion.strip().lower().replace("-", "_")
    # the registry itself, not the tuples derived from it at import: an entry is all a notion
    # needs
    aliases = {alias: n.name for n in NOTION_REGISTRY.values() for alias in n.aliases}
    key = aliases.get(key, key)
    if key not in NOTION_REGISTRY:
        raise ValueError(
            f"notion must be one of {tuple(NOTION_REGISTRY)} (or {tuple(aliases)}), got {notion!r}"
        )
    return key


def _check_delta(delta: object) -> float:
    if isinstance(delta, bool) or not isinstance(delta, Real):
        raise TypeError(f"delta must be a number in [0, 1], got {type(delta).__name__}")
    value = float(delta)
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"delta must be in [0, 1], got {delta!r}")
    return value


def _frozen_array(values: Any, name: str) -> np.ndarray:
    arr = np.array(values, copy=True)
    if arr.dtype.kind == "O":
        arr = arr.astype(str) if all(isinstance(v, str) for v in arr.ravel()) else arr
    if arr.ndim not in (1, 2) or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty 1-d or 2-d array, got shape {arr.shape}")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    if arr.dtype.kind == "O" and pd.isna(arr).any():
        raise ValueError(f"{name} must not contain missing values")
    arr.setflags(write=False)
    return arr


def _check_attribute(value: Any, name: str) -> str | tuple[str, ...] | np.ndarray:
    """A column name, a sequence of column names, or an array (rows first)."""
    if isinstance(value, str):
        return value
    if isinstance(value, pd.DataFrame):
        return _frozen_array(value.to_numpy(), name)
    if isinstance(value, pd.Series):
        return _frozen_array(value.to_numpy(), name)
    if isinstance(value, Sequence) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    if value is None:
        raise ValueError(f"{name} is required")
    return _frozen_array(value, name)


@dataclass(frozen=True)
class GroupPair:
    """Two row sets whose positive-prediction rates may differ by at most ``delta``."""

    name: str
    first: np.ndarray  # bool mask (n,)
    second: np.ndarray  # bool mask (n,)


@dataclass(frozen=True, eq=False)
class FairnessGroups:
    """A :class:`Fairness` resolved against one dataset: the constrained pairs and their weights.

    Attributes
    ----------
    fairness : Fairness
    positive_code : int
        The class code (``dataset.classes`` index) of ``fairness.positive_class``.
    pairs : tuple of GroupPair
    coefficients : ndarray, shape (n_samples, n_pairs)
        ``disparity = coefficients.T @ positive_prediction`` (module docstring).
    undefined : tuple of str
        Names of the comparisons left out because one side has no row (no rate to compare),
        e.g. ``"a: 0 vs 2 | y=+"`` when group 2 has no positive row.
    """

    fairness: Fairness
    positive_code: int
    pairs: tuple[GroupPair, ...]
    coefficients: np.ndarray = field(repr=False)
    undefined: tuple[str, ...] = ()

    @property
    def delta(self) -> float:
        return self.fairness.delta

    @property
    def n_pairs(self) -> int:
        return len(self.pairs)

    def disparities(self, positive: np.ndarray) -> np.ndarray:
        """Signed rate differences (first minus second) of a positive-prediction vector."""
        positive = np.asarray(positive, dtype=float)
        if positive.shape != (self.coefficients.shape[0],):
            raise ValueError(
                f"positive must have shape ({self.coefficients.shape[0]},), got {positive.shape}"
            )
        signed: np.ndarray = positive @ self.coefficients
        return signed

    def gap(self, positive: np.ndarray) -> float:
        """Largest absolute disparity over the constrained pairs (0 when there are none)."""
        values = self.disparities(positive)
        return float(np.abs(values).max()) if values.size else 0.0

    def table(self, positive: np.ndarray) -> pd.DataFrame:
        """One row per constrained pair: both rates, the disparity and whether it is within δ."""
        positive = np.asarray(positive, dtype=float)
        coef = self.coefficients
        rows = []
        for j, pair in enumerate(self.pairs):
            first = float(positive @ np.where(coef[:, j] > 0, coef[:, j], 0.0))
            second = float(-(positive @ np.where(coef[:, j] < 0, coef[:, j], 0.0)))
            rows.append(
                {
                    "pair": pair.name,
                    "rate_first": first,
                    "rate_second": second,
                    "disparity": abs(first - second),
                    "fair": abs(first - second) <= self.delta + FAIRNESS_TOLERANCE,
                }
            )
        columns = ["pair", "rate_first", "rate_second", "disparity", "fair"]
        return pd.DataFrame(rows, columns=columns)


#: Decoded trees are accepted as δ-fair up to this much (§5.3: a MIP may violate a row by its
#: feasibility tolerance).
FAIRNESS_TOLERANCE = 1e-6


@dataclass(frozen=True, eq=False)
class Fairness:
    """A fairness constraint: positive-prediction rates of groups differ by at most ``delta``.

    Parameters
    ----------
    notion : str
        A name of :data:`NOTION_REGISTRY`: statistical parity, conditional statistical parity
        (within each value of ``legit``), predictive equality (false positive rates), equal
        opportunity (true positive rates), equalized odds (both). Long names
        (``"statistical_parity"``, ...) are accepted.
    protected : str, sequence of str, or array-like
        The protected attribute(s): a feature name of the dataset, several names, or values per
        row, shape ``(n_samples,)`` or ``(n_samples, n_attributes)`` (any values: each column's
        distinct values are its groups). Give it separately from ``X`` to keep it out of the
        splits; naming a feature of ``X`` is allowed (then the tree may split on it).
    delta : float
        Largest allowed disparity, in ``[0, 1]``. ``0`` asks for exact parity (a single leaf is
        always fair); ``1`` imposes nothing.
    positive_class : label
        The favourable label (a value of ``y``, not a class code).
    legit : str or array-like, optional
        The legitimate factor of ``csp`` (required there, refused elsewhere).

    Every unordered pair of distinct values of each protected column is constrained (not
    intersections of columns), one comparison of rates at a time, and each comparison only when
    both of its row sets are non-empty: a group without a row in it has no rate. So ``csp``
    compares two groups within each value of ``legit`` that both have rows, and ``eodds``, two
    comparisons per pair, keeps the defined one when the other is not: the false positive rates
    when one group has no positive row, the true positive rates when one has no negative row
    (docs/formulations-trees.md §5.2). :attr:`FairnessGroups.undefined` lists what was left
    out.
    """

    notion: str
    protected: Any
    delta: float = 0.05
    positive_class: Any = 1
    legit: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "notion", _check_notion(self.notion))
        object.__setattr__(self, "delta", _check_delta(self.delta))
        object.__setattr__(self, "protected", _check_attribute(self.protected, "protected"))
        takes_legit = [n.name for n in NOTION_REGISTRY.values() if n.legit]
        if NOTION_REGISTRY[self.notion].legit:
            if self.legit is None:
                raise ValueError(
                    f"legit is required for notion {self.notion!r} (the legitimate factor)"
                )
            object.__setattr__(self, "legit", _check_attribute(self.legit, "legit"))
        elif self.legit is not None:
            raise ValueError(
                f"legit applies only to notion(s) {', '.join(map(repr, takes_legit))}, "
                f"not {self.notion!r}"
            )
        if isinstance(self.positive_class, (list, tuple, dict, set, np.ndarray)):
            raise TypeError("positive_class must be a single label value")

    def replace(self, **changes: Any) -> Fairness:
        """A copy with some fields changed (e.g. another ``delta`` on a frontier)."""
        fields = {
            "notion": self.notion,
            "protected": self.protected,
            "delta": self.delta,
            "positive_class": self.positive_class,
            "legit": self.legit,
        }
        fields.update(changes)
        return Fairness(**fields)

    # ----------------------------------------------------------------------------------------

    def _columns(self, value: Any, dataset: Any, name: str) -> list[tuple[str, np.ndarray]]:
        """Resolve an attribute to named 1-d columns of length n."""
        n = dataset.n_samples
        if isinstance(value, str | tuple):
            names = (value,) if isinstance(value, str) else value
            out = []
            for col in names:
                if col not in dataset.feature_names:
                    raise ValueError(
                        f"{name}={col!r} is not a feature of dataset {dataset.name!r}; pass the "
                        "attribute's values as an array instead"
                    )
                out.append((col, dataset.X[:, dataset.feature_names.index(col)].astype(int)))
            return out
        arr = value
        if arr.shape[0] != n:
            raise ValueError(f"{name} has {arr.shape[0]} rows but the dataset has {n}")
        if arr.ndim == 1:
            return [(name, arr)]
        return [(f"{name}[{k}]", arr[:, k]) for k in range(arr.shape[1])]

    def groups(self, dataset: Any) -> FairnessGroups:
        """Resolve against ``dataset``: the constrained pairs and the disparity coefficients.

        Raises
        ------
        ValueError
            If ``positive_class`` is not a label of the dataset, a protected column has a
            single value, or no pair of groups can be constrained (every pair has an empty
            side for this notion); the message names the argument.
        """
        dataset = check_dataset(dataset)
        classes = list(dataset.classes)
        matches = [k for k, c in enumerate(classes) if c == self.positive_class]
        if not matches:
            raise ValueError(
                f"positive_class={self.positive_class!r} is not a label of the dataset "
                f"(labels: {classes})"
            )
        positive_code = matches[0]
        is_pos = dataset.y == positive_code
        if not is_pos.any():
            raise ValueError(
                f"positive_class={self.positive_class!r} has no row in the dataset, so every "
                "tree has the same positive rate"
            )
        notion = NOTION_REGISTRY[self.notion]
        rows_of = {"all": np.ones(dataset.n_samples, dtype=bool), "negative": ~is_pos}
        rows_of["positive"] = is_pos
        selections = [(suffix, rows_of[which]) for suffix, which in notion.rows]
        strata: list[tuple[str, np.ndarray]] = [("", np.ones(dataset.n_samples, dtype=bool))]
        if notion.legit:
            ((legit_name, legit),) = self._columns(self.legit, dataset, "legit")[:1]
            strata = [(f" | {legit_name}={s}", legit == s) for s in pd.unique(legit)]

        w = dataset.weights
        pairs: list[GroupPair] = []
        undefined: list[str] = []
        for col_name, column in self._columns(self.protected, dataset, "protected"):
            values = pd.unique(column)
            if len(values) < 2:
                raise ValueError(
                    f"protected attribute {col_name!r} has a single value ({values[0]!r}): "
                    "there are no groups to compare"
                )
            try:
                values = sorted(values)
            except TypeError:
                values = list(values)
            for a_idx, va in enumerate(values):
                for vb in values[a_idx + 1 :]:
                    in_a, in_b = column == va, column == vb
                    for stratum_name, stratum in strata:
                        for suffix, sel in selections:
                            pair = GroupPair(
                                f"{col_name}: {va} vs {vb}{stratum_name}{suffix}",
                                in_a & stratum & sel,
                                in_b & stratum & sel,
                            )
                            # a side without weight has no rate, so that comparison is
                            # undefined; every defined one is kept (for eodds the FPR half
                            # when a group has no positive row, the TPR half when it has no
                            # negative one)
                            if w[pair.first].sum() > 0 and w[pair.second].sum() > 0:
                                pairs.append(pair)
                            else:
                                undefined.append(pair.name)
        if not pairs:
            raise ValueError(
                f"protected: no pair of groups has rows on both sides for notion "
                f"{self.notion!r} ({NOTION_DESCRIPTIONS[self.notion]}), so nothing can be "
                "constrained"
            )
        coef = np.zeros((dataset.n_samples, len(pairs)))
        for j, pair in enumerate(pairs):
            coef[pair.first, j] = w[pair.first] / w[pair.first].sum()
            coef[pair.second, j] = -w[pair.second] / w[pair.second].sum()
        coef.setflags(write=False)
        return FairnessGroups(self, positive_code, tuple(pairs), coef, tuple(undefined))


def split_protected(dataset: Any, columns: str | Sequence[str]) -> tuple[Any, np.ndarray]:
    """Take protected feature column(s) out of ``dataset``: ``(dataset without them, values)``.

    Use it to keep a sensitive attribute out of the splits (as STreeD does) while constraining
    fairness with respect to it: ``data, a = split_protected(data, "Gender=Male")`` then
    ``Fairness("sp", protected=a, ...)``.

    Returns
    -------
    (Dataset, ndarray) : the remaining features (same rows, labels, weights and name) and the
    protected values, shape ``(n,)`` for one column, ``(n, m)`` for several (ints 0/1).
    """
    from odtkit.datasets import Dataset

    dataset = check_dataset(dataset)
    names = (columns,) if isinstance(columns, str) else tuple(columns)
    if not names:
        raise ValueError("columns must name at least one feature")
    missing = [c for c in names if c not in dataset.feature_names]
    if missing:
        raise ValueError(
            f"columns {missing} are not features of dataset {dataset.name!r} "
            f"(features: {list(dataset.feature_names)[:8]}...)"
        )
    index = [dataset.feature_names.index(c) for c in names]
    keep = [j for j in range(dataset.n_features) if j not in index]
    X = np.ascontiguousarray(dataset.X[:, keep])
    X.setflags(write=False)
    rest = Dataset(
        X,
        dataset.y,
        dataset.classes,
        tuple(dataset.feature_names[j] for j in keep),
        dataset.name,
        dataset.sample_weight,
    )
    values = dataset.X[:, index].astype(int)
    return rest, values[:, 0] if isinstance(columns, str) else values


def resolve_fairness(fairness: object, dataset: Any) -> FairnessGroups:
    """``fairness`` (a :class:`Fairness`) resolved against ``dataset``, or an already resolved
    :class:`FairnessGroups` checked to belong to it: the one place every fair solver and
    :mod:`odtkit.metrics` turn their ``fairness=`` argument into group pairs."""
    if isinstance(fairness, FairnessGroups):
        if fairness.coefficients.shape[0] != check_dataset(dataset).n_samples:
            raise ValueError("fairness was resolved against another dataset (row count differs)")
        return fairness
    if not isinstance(fairness, Fairness):
        raise TypeError(f"fairness must be an odtkit.Fairness, got {type(fairness).__name__}")
    return fairness.groups(dataset)

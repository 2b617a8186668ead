"""The threshold policy: which thresholds of a raw table's numeric columns a tree may use.

One parser of the user's choice (``"auto"``, ``"guess"``, ``"all"`` or a positive integer N),
read by the
estimators, the CLI, :func:`odtkit.compare` and :class:`odtkit.Task` alike: it gives the
:class:`~odtkit.datasets.Binarizer`'s keyword arguments and the
:class:`~odtkit.results.Certificate` an optimal tree over that binarization earns. Kept beside
the Binarizer and without scikit-learn (the Binarizer is imported where one is built), so the
search core and the CLI's start-up read it cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from odtkit.datasets._columns import GUESS_ROUNDS
from odtkit.results import Certificate

if TYPE_CHECKING:
    from odtkit.datasets._binarizer import Binarizer

__all__ = ["Thresholds"]

#: The most boosting rounds the guess takes (the Binarizer's own limit, repeated here so that
#: this module does not import scikit-learn; tests/test_estimators checks they agree).
_MAX_ROUNDS = 100_000


@dataclass(frozen=True)
class Thresholds:
    """Which thresholds of the numeric columns a tree may use, and what its optimum is over.

    Parameters
    ----------
    choice : {"guess", "all", "auto"} or int, default="guess"
        ``"guess"``: the thresholds a ``rounds``-round depth-1 boosted reference model splits
        on (McTavish et al. 2022; certificate "guessed thresholds"). ``"all"``: every
        threshold (the exact search over the sorted columns where a tree method can run it,
        else every midpoint binarized; certificate "all thresholds"). ``"auto"``: every
        threshold by the exact search where it can run (depth-limited ``dp``, no side
        constraint or cost objective), else the guess (certificate "all thresholds" or
        "guessed thresholds", whichever was searched). An int N: at most N per column, at
        quantiles (certificate "binarization").
    rounds : int, default=GUESS_ROUNDS (40)
        Boosting rounds of the guess (``"guess"``, and ``"auto"`` where it guesses), 1 to
        100,000.
    max_per_column : int or None, default=None
        A cap on the guessed thresholds per column (``"guess"`` only). Only the deprecated
        estimator spelling ``max_thresholds=N`` with guessing sets it.
    exact_search : bool, default=True
        ``"all"`` and ``"auto"``: False never runs the exact search; ``"all"`` then binarizes
        every midpoint (the same optimum; what the deprecated ``guess_thresholds=None`` did),
        ``"auto"`` guesses.
    """

    choice: str | int = "guess"
    rounds: int = GUESS_ROUNDS
    max_per_column: int | None = None
    exact_search: bool = True

    def __post_init__(self) -> None:
        choice = self.choice
        number = isinstance(choice, (int, np.integer)) and not isinstance(choice, (bool, np.bool_))
        if isinstance(choice, str):
            word = choice.strip().lower()
            if word not in ("guess", "all", "auto"):
                raise ValueError(
                    "thresholds must be 'auto', 'guess', 'all' or a positive integer, got "
                    f"{choice!r}"
                )
            object.__setattr__(self, "choice", word)
        elif not number or choice < 1:
            raise ValueError(
                f"thresholds must be 'auto', 'guess', 'all' or a positive integer, got {choice!r}"
            )
        else:
            object.__setattr__(self, "choice", int(choice))
        _check_count("rounds", self.rounds, _MAX_ROUNDS)
        if self.max_per_column is not None:
            _check_count("max_per_column", self.max_per_column, None)

    @classmethod
    def parse(cls, choice: Thresholds | str | int | None) -> Thresholds:
        """``choice`` as a policy: a :class:`Thresholds` as it is, None as ``"guess"`` (the
        default), else ``Thresholds(choice)`` (a ValueError for anything else)."""
        if isinstance(choice, Thresholds):
            return choice
        return cls("guess" if choice is None else choice)

    @property
    def every(self) -> bool:
        """Every threshold (``"all"``)."""
        return self.choice == "all"

    @property
    def runs_exact_search(self) -> bool:
        """``"all"`` or ``"auto"`` by the exact search over the sorted columns, where a tree
        method can."""
        return (self.every or self.choice == "auto") and self.exact_search

    @property
    def guesses(self) -> bool:
        """Fitting under this policy may run the threshold guess: ``"guess"``, and ``"auto"``
        where the exact search does not run. (The exact search asks for the guessed-threshold
        tree only when a limit stops it with a second or more left: it imports the guess's
        module then, not on every fit.)"""
        return self.choice in ("guess", "auto")

    def load_dependencies(self, *, exact: bool = False) -> None:
        """Import what fitting under this policy imports on first use (scikit-learn's
        gradient boosting, for the guess), so that a caller can do it before starting its
        clock: the first fit in a process then does not pay its imports out of its
        ``time_limit`` (issue 41: the imports are a process's cost, not the fit's). ``exact``:
        the fit runs the exact search, which guesses only after a limit stopped it."""
        if self.guesses and not (exact and self.runs_exact_search):
            import sklearn.ensemble  # noqa: F401

    def binarizer_options(self) -> dict[str, int | None]:
        """The :class:`~odtkit.datasets.Binarizer`'s ``max_thresholds`` / ``guess_thresholds``."""
        if self.choice in ("guess", "auto"):
            return {"max_thresholds": self.max_per_column, "guess_thresholds": self.rounds}
        if self.choice == "all":
            return {"max_thresholds": None, "guess_thresholds": None}
        return {"max_thresholds": int(self.choice), "guess_thresholds": None}

    def binarizer(self, categorical: list[str] | None = None) -> Binarizer:
        """A new (unfitted) Binarizer of this policy (``categorical`` as the Binarizer's)."""
        from odtkit.datasets._binarizer import Binarizer

        options = self.binarizer_options()
        return Binarizer(
            max_thresholds=options["max_thresholds"],
            categorical=categorical,
            guess_thresholds=options["guess_thresholds"],
        )

    def certificate(self, binarizer: Any = None, *, exact: bool = False) -> Certificate:
        """Over what an optimal tree on ``binarizer``'s features is optimal: THE rule.

        * ``exact`` (the exact search ran): every threshold;
        * ``binarizer`` None (a table of 0/1 columns used as they are) or a fitted Binarizer
          whose every column is 0/1 (passed through as one feature), constant or empty: every
          threshold, whatever the policy (each threshold of a 0/1 column is its one split);
        * otherwise by the policy: ``"guess"`` and ``"auto"`` (which binarizes by the guess
          where the exact search does not run) guessed thresholds, ``"all"`` every threshold,
          N the binarization.

        A pre-binarized :class:`~odtkit.datasets.Dataset` given directly is not a table: its
        certificate is "binarization" (:meth:`odtkit.Task.from_dataset`), since what it was
        binarized from is unknown.
        """
        if exact or binarizer is None or _only_binary_columns(binarizer):
            return Certificate.ALL_THRESHOLDS
        if self.choice in ("guess", "auto"):
            return Certificate.GUESSED_THRESHOLDS
        if self.choice == "all":
            return Certificate.ALL_THRESHOLDS
        return Certificate.BINARIZATION

    def describe(self) -> str:
        """The policy in a few words (``guess (40 boosting rounds)``)."""
        if self.choice == "guess":
            cap = "" if self.max_per_column is None else f", at most {self.max_per_column}"
            return f"guess ({self.rounds} boosting rounds{cap})"
        if self.choice == "all":
            return "all (every midpoint)"
        if self.choice == "auto":
            return f"auto (the exact search where it runs, else guess with {self.rounds} rounds)"
        return f"{self.choice} (at most {self.choice} per column)"


def _check_count(name: str, value: object, top: int | None) -> None:
    """``value`` is a whole number from 1 to ``top`` (None: no top), else a ValueError."""
    whole = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if not whole or value < 1 or (top is not None and value > top):  # type: ignore[operator]
        most = "" if top is None else f" <= {top}"
        raise ValueError(f"{name} must be an integer >= 1{most}, got {value!r}")


def _only_binary_columns(binarizer: Any) -> bool:
    """Every column of the fitted ``binarizer`` is 0/1, constant or empty: no threshold or
    category was chosen, so the features are the columns as they are."""
    spec = getattr(binarizer, "_spec", None)
    if spec is None or getattr(binarizer, "truncated_", False) or binarizer.missing_columns_:
        return False  # a cut fit's unexamined columns look constant; a blank cell adds features
    return all(kind in ("binary", "constant", "dropped") for _, kind, _, _ in spec) and any(
        kind == "binary" for _, kind, _, _ in spec
    )

"""Time limits and Ctrl-C on wide tables and in preprocessing (issue 28).

* The depth-two solver polls the Budget inside its pair-count pass and its root loop: a limit
  or Ctrl-C stops one call, which costs seconds on thousands of features.
* Ctrl-C in the Python preparation of search_tree / search_rule_list is a status.
* The estimators charge binarization (threshold guessing) to their time limit.

Every case asserts behaviour (status, a model re-scored by odtkit.metrics, a valid bound),
never seconds. The wide tables are sized so that finishing the depth-two pass takes seconds
on any machine while the limit is a fraction of that.
"""

from __future__ import annotations

import time
import types
import warnings
from typing import Any

import numpy as np
import pytest
from conftest import sigint_at_first_poll, sigint_inside

import odtkit._limits as limits
import odtkit.core._binary as search_module  # the search on a Dataset
import odtkit.core.rules as rules_module
from odtkit import _native, metrics
from odtkit.core import SearchOptions, TrivialAnswerWarning, search_rule_list, search_tree
from odtkit.datasets import Binarizer, Dataset
from odtkit.datasets import _binarizer as binarizer_module
from odtkit.estimators import (
    LimitReachedWarning,
    OptimalRuleListClassifier,
    OptimalTreeClassifier,
)

LAM = 0.001


def wide_xor(n: int = 2000, p: int = 3000, seed: int = 0) -> Dataset:
    """n x p random binary features, y = x0 xor x1: the optimum at depth two is the planted
    tree (4 leaves, no mistake), objective 4 * LAM; the greedy start cannot find it."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, p)) < 0.5
    y = (X[:, 0] ^ X[:, 1]).astype(np.int64)
    return Dataset.from_arrays(X, y)


def check_stopped(result: Any, data: Dataset, status: str, optimum: float) -> None:
    """Stopped by `status` inside the depth-two pass: a model re-scored by metrics, a bound
    below both it and the known optimum, and no certificate (the pass did not finish)."""
    assert result.status == status
    assert result.model is not None
    assert result.model.depth <= 2
    assert metrics.objective(result.model, data, lam=LAM) == pytest.approx(
        result.objective, abs=1e-9
    )
    assert result.lower_bound <= result.objective + 1e-12
    assert result.lower_bound <= optimum + 1e-12
    # the old solver finished its pass (seconds) before reading the clock, and certified
    assert result.lower_bound < result.objective


@pytest.fixture(scope="module")
def wide() -> Dataset:
    return wide_xor()


# -- item 1: the depth-two solver under a time limit and Ctrl-C ---------------------------------

WIDE_LIMIT_CASES = [
    # (strategy, max_depth): the recursive dp and the anytime driver both reach a depth-two
    # root solve
    ("recursive", 2),
    ("anytime", 2),
]


@pytest.mark.parametrize(("strategy", "max_depth"), WIDE_LIMIT_CASES)
def test_depth_two_pass_stops_at_time_limit(wide: Dataset, strategy: str, max_depth: int) -> None:
    result = search_tree(
        wide,
        lam=LAM,
        max_depth=max_depth,
        time_limit=0.05,
        options=SearchOptions(strategy=strategy),
    )
    check_stopped(result, wide, "time_limit", 4 * LAM)


def test_depth_two_pass_stops_at_ctrl_c(wide: Dataset) -> None:
    # the signal goes out once the search has polled for Ctrl-C: inside it on any machine
    with sigint_at_first_poll(_native, "search_dp", progress_at=2) as sent:
        try:
            result = search_tree(wide, lam=LAM, max_depth=2)
        except KeyboardInterrupt:
            pytest.fail("Ctrl-C inside the search escaped as KeyboardInterrupt")
    assert sent.is_set(), "the search never polled for Ctrl-C"
    check_stopped(result, wide, "interrupted", 4 * LAM)


def test_depth_two_root_loop_keeps_best_tree_so_far() -> None:
    """Few rows, many features: the pair pass is quick and the root loop (M^2 K) is where a
    limit lands; the tree returned is then the best depth-two tree seen, re-scored."""
    data = wide_xor(n=200, p=2500, seed=1)
    result = search_tree(data, lam=LAM, max_depth=2, time_limit=0.05)
    assert result.status in ("time_limit", "optimal")
    assert metrics.objective(result.model, data, lam=LAM) == pytest.approx(
        result.objective, abs=1e-9
    )
    assert result.lower_bound <= min(result.objective, 4 * LAM) + 1e-12


def test_depth_two_small_problem_unchanged() -> None:
    """Polling never changes an answer that finishes: the planted optimum is certified."""
    data = wide_xor(n=300, p=40, seed=2)
    result = search_tree(data, lam=LAM, max_depth=2)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(4 * LAM)
    assert result.lower_bound == pytest.approx(result.objective)


# -- item 2: Ctrl-C in the Python preparation ----------------------------------------------------


def _slow(real: Any) -> Any:
    """``real`` after a long pause, so that a SIGINT lands in the preparation."""

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(30)
        return real(*args, **kwargs)

    return slow


def _small() -> Dataset:
    rng = np.random.default_rng(3)
    X = rng.random((60, 6)) < 0.5
    return Dataset.from_arrays(X, (X[:, 0] | X[:, 1]).astype(np.int64))


PREPARATION_CASES = [
    # (entry point, module whose helper is slowed, helper): the step the Ctrl-C lands in
    ("search_tree", search_module, "build_search_problem"),
    ("search_tree_bnb", search_module, "build_search_problem"),
    ("search_rule_list", rules_module, "_mine"),
    ("search_rule_list_problem", rules_module, "problem_from_arrays"),
]


@pytest.mark.parametrize(("entry", "module", "helper"), PREPARATION_CASES)
def test_ctrl_c_in_preparation_is_a_status(
    monkeypatch: pytest.MonkeyPatch, entry: str, module: Any, helper: str
) -> None:
    data = _small()
    monkeypatch.setattr(module, helper, _slow(getattr(module, helper)))
    calls = {
        "search_tree": lambda: search_tree(data, lam=0.01, max_depth=2),
        "search_tree_bnb": lambda: search_tree(data, lam=0.01, max_depth=2, method="bnb"),
        "search_rule_list": lambda: search_rule_list(data, lam=0.01),
        "search_rule_list_problem": lambda: search_rule_list(data, lam=0.01),
    }
    with sigint_inside(module, helper, after=0.05):
        try:
            result = calls[entry]()
        except KeyboardInterrupt:
            pytest.fail("Ctrl-C during the preparation raised KeyboardInterrupt")
    assert result.status == "interrupted"
    assert result.model is not None
    assert metrics.objective(result.model, data, lam=0.01) == pytest.approx(result.objective)
    assert result.lower_bound <= result.objective


# -- item 3: estimators charge preprocessing to their time limit --------------------------------


class _JumpingClock:
    """A stand-in for the ``time`` module of odtkit._limits: real time until `after` clock
    reads, then a million seconds later (the fit's deadline passes in mid-binarization)."""

    def __init__(self, after: int) -> None:
        self.reads = 0
        self.after = after

    def perf_counter(self) -> float:
        self.reads += 1
        return time.perf_counter() + (1e6 if self.reads > self.after else 0.0)


def _continuous(n: int = 120, p: int = 300, seed: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    return X, (X[:, 0] > 0.5).astype(np.int64)


TRUNCATED_FIT_CASES = [
    # (estimator, guess_thresholds): the clock jumps after the fit started its deadline, so
    # binarization stops at the next check; the fit still returns a model, flagged
    ("tree", 40),
    ("tree", None),
    ("rule_list", 40),
]


def _assert_rescored(est: Any, X: np.ndarray, y: np.ndarray) -> None:
    """The fitted model is the one over the features built in time: re-scored, bound below."""
    Xb = est.binarizer_.transform(X)
    data = Dataset.from_arrays(Xb, y, feature_names=list(est.feature_names_))
    model = est.result_.model
    assert metrics.objective(model, data, lam=est.lam) == pytest.approx(est.result_.objective)
    assert est.result_.lower_bound <= est.result_.objective + 1e-12
    assert est.predict(X).shape == y.shape


@pytest.mark.parametrize(("kind", "guess"), TRUNCATED_FIT_CASES)
def test_binarization_sees_the_fit_deadline(
    monkeypatch: pytest.MonkeyPatch, kind: str, guess: int | None
) -> None:
    X, y = _continuous()
    clock = _JumpingClock(after=1)  # the Deadline's start is the one real read
    monkeypatch.setattr(limits, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    if kind == "tree":
        est: Any = OptimalTreeClassifier(
            max_depth=2, time_limit=30, guess_thresholds=guess, max_thresholds=3
        )
    else:
        est = OptimalRuleListClassifier(time_limit=30, guess_thresholds=guess)
    with pytest.warns(LimitReachedWarning) as shown:
        est.fit(X, y)
    # "no feature beats the leaf" would be about the features built in time, not the data
    assert not [w for w in shown if issubclass(w.category, TrivialAnswerWarning)]
    assert est.binarizer_.truncated_
    assert est.status_ == "time_limit"
    assert est.result_.status == "time_limit"
    assert "binarization" in est.result_.message
    _assert_rescored(est, X, y)


def test_ctrl_c_during_binarization_returns_the_best_model_flagged_interrupted() -> None:
    X, y = _continuous(n=2000, p=60)
    est = OptimalTreeClassifier(max_depth=2, time_limit=60, guess_thresholds=40)
    with sigint_inside(binarizer_module, "_reference_splits", after=0.05) as sent:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)  # no KeyboardInterrupt: the fit returns its best model
    assert sent.is_set()
    if est.binarizer_.truncated_:  # the usual case
        assert est.result_.status == "interrupted"
        assert "Ctrl-C stopped binarization" in est.result_.message
    else:  # the signal came after the reference model's last check: every feature was built,
        # the search got no time, yet may have proved its tree (depth 2 on an easy table)
        assert est.result_.status in ("interrupted", "optimal")
        assert "Ctrl-C during binarization" in est.result_.message
    _assert_rescored(est, X, y)


def test_binarizer_without_deadline_is_never_truncated() -> None:
    X, y = _continuous(p=50)
    b = Binarizer(guess_thresholds=40).fit(X, y)
    assert not b.truncated_
    assert b.transform(X).shape[1] > 0


class _FakeClock:
    """``time`` for odtkit.datasets._binarizer: every read advances one (fake) second."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


class _Left:
    """A Deadline stand-in with a fixed time left."""

    limited = True

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def remaining(self) -> float:
        return self.seconds

    def expired(self) -> bool:
        return False  # only the guessing budget (a share of what is left) runs out here


REFERENCE_CASES = [
    # (classes, seconds left, truncated): one fake second per tree read; with 20 classes and
    # 20 s left (10 for guessing) a round of 20 trees does not fit: classes are merged and
    # boosting stops early; with 2 s left only the pilot runs; without a deadline, no cut
    (20, 20.0, True),
    (2, 2.0, True),
    (2, None, False),
]


@pytest.mark.parametrize(("n_classes", "left", "truncated"), REFERENCE_CASES)
def test_reference_model_is_bounded_by_time_left(
    monkeypatch: pytest.MonkeyPatch, n_classes: int, left: float | None, truncated: bool
) -> None:
    rng = np.random.default_rng(5)
    X = rng.random((200, 4))
    y = np.minimum((X[:, 0] * n_classes).astype(np.int64), n_classes - 1)
    monkeypatch.setattr(
        binarizer_module, "time", types.SimpleNamespace(perf_counter=_FakeClock().perf_counter)
    )
    deadline = None if left is None else _Left(left)
    splits, cut = binarizer_module._reference_splits(X, y, None, 40, deadline)
    assert cut == truncated
    assert splits  # always some thresholds: at least the pilot's
    assert all(0 <= f < X.shape[1] for f in splits)


class _EndedEarly(limits.Deadline):
    """A deadline a Ctrl-C has ended (estimators end it so) while its budget looked ample."""

    def remaining(self) -> float:
        return 1e6

    def expired(self) -> bool:
        return True


def test_reference_model_stops_at_the_deadline_not_only_at_its_budget() -> None:
    X, y = _continuous(p=30)
    splits, cut = binarizer_module._reference_splits(X, y, None, 40, _EndedEarly(1e6))
    assert cut  # boosting stopped after its first round instead of running all 40
    assert splits


def test_reference_model_uncut_matches_plain_binarizer() -> None:
    """A deadline with time to spare gives the thresholds of a fit without one."""
    X, y = _continuous(p=30)
    plain = Binarizer(guess_thresholds=40).fit(X, y)
    with limits.charged(limits.Deadline(1e6)):
        charged = Binarizer(guess_thresholds=40).fit(X, y)
    assert not charged.truncated_
    assert list(plain.get_feature_names_out()) == list(charged.get_feature_names_out())


WIDE_ESTIMATOR_CASES = [
    # (rows, columns, classes): many continuous columns, many classes
    (60, 3000, 2),
    (600, 4, 200),
]


@pytest.mark.parametrize(("n", "p", "n_classes"), WIDE_ESTIMATOR_CASES)
def test_estimator_returns_best_model_on_wide_or_many_class_data(
    n: int, p: int, n_classes: int
) -> None:
    rng = np.random.default_rng(6)
    X = rng.random((n, p))
    y = rng.integers(0, n_classes, n)
    est = OptimalTreeClassifier(time_limit=1.0)
    with warnings.catch_warnings():
        # a stop at the limit warns; whether it does here depends on the machine
        warnings.simplefilter("ignore", LimitReachedWarning)
        est.fit(X, y)
    assert est.result_.status in ("time_limit", "optimal")
    Xb = est.binarizer_.transform(X)
    data = Dataset.from_arrays(Xb, y, feature_names=list(est.feature_names_))
    assert metrics.objective(est.tree_, data, lam=est.lam) == pytest.approx(est.result_.objective)
    assert est.result_.lower_bound <= est.result_.objective + 1e-12


def test_cv_estimator_charges_binarization(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CV estimator's one deadline: binarization cut by it flags the fit."""
    from odtkit.estimators import OptimalTreeClassifierCV

    X, y = _continuous(n=80, p=200)
    clock = _JumpingClock(after=1)
    monkeypatch.setattr(limits, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    est = OptimalTreeClassifierCV(max_depth=2, time_limit=30, cv=2, guess_thresholds=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.binarizer_.truncated_
    assert est.status_ == "time_limit"
    assert not est.certified_
    assert est.predict(X).shape == y.shape

"""Trivial answers are flagged (issue 13): one class, or a lam so large that one leaf wins.

The warning states the informative range of lam; the oracle checks that range: the best
one-split tree beats the leaf just below its lower end, and the leaf is optimal at depth 2 (and
unlimited, by the search) at its upper end.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings

from odtkit import Fairness
from odtkit.core.rules import search_rule_list
from odtkit.core.search import TrivialAnswerWarning, informative_lam_range, search_tree
from odtkit.datasets import Dataset, load
from odtkit.testing import brute_force_tree, dataset_strategy


def test_a_single_class_is_flagged():
    X = np.random.default_rng(0).random((30, 4)) < 0.5
    data = Dataset.from_arrays(X, np.full(30, "yes"))
    with pytest.warns(TrivialAnswerWarning, match="single class"):
        result = search_tree(data, lam=0.01)
    assert result.model.is_leaf and result.objective == pytest.approx(0.01)


def test_a_lam_above_the_informative_range_is_flagged_with_the_range():
    data = load("monk1")
    best_stump, ceiling = informative_lam_range(data)
    with pytest.warns(TrivialAnswerWarning, match=f"below lam={ceiling:.4g}"):
        result = search_tree(data, lam=ceiling + 0.01, max_depth=3)
    assert result.model.is_leaf
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrivialAnswerWarning)
        assert not search_tree(data, lam=best_stump / 2, max_depth=3).model.is_leaf


def test_max_depth_zero_is_flagged_for_what_it_is():
    with pytest.warns(TrivialAnswerWarning, match="max_depth=0 admits only the single leaf"):
        assert search_tree(load("monk1"), lam=0.0, max_depth=0).model.is_leaf


def test_the_rule_list_search_flags_an_empty_list_too():
    data = load("monk1")
    _, ceiling = informative_lam_range(data)
    with pytest.warns(TrivialAnswerWarning, match="rule list with rules"):
        result = search_rule_list(data, lam=ceiling + 0.01)
    assert result.model.n_rules == 0


def test_no_warning_when_a_depth_limit_or_fairness_makes_the_leaf_optimal():
    rng = np.random.default_rng(1)
    X = rng.random((200, 3)) < 0.5
    y = (X[:, 0] ^ X[:, 1]).astype(int)  # no stump helps; depth 2 is perfect
    data = Dataset.from_arrays(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrivialAnswerWarning)
        assert search_tree(data, lam=0.0, max_depth=1).model.is_leaf
        fair = Fairness(notion="sp", protected=X[:, 0].astype(int), delta=0.0)
        search_tree(data, lam=0.001, max_depth=2, fairness=fair)


@settings(max_examples=80, deadline=None)
@given(data=dataset_strategy(max_samples=30, max_features=4))
def test_the_informative_range_brackets_the_last_breakpoint(data: Dataset):
    best_stump, ceiling = informative_lam_range(data)
    assert 0.0 <= best_stump <= ceiling + 1e-12
    # at the ceiling the leaf is optimal (oracle, depth 2)
    tree, value = brute_force_tree(data, lam=ceiling + 1e-9, max_depth=2)
    leaf_value = 1 - data.class_counts().max() / data.total_weight + ceiling + 1e-9
    assert value == pytest.approx(leaf_value, abs=1e-9)
    if best_stump > 1e-9:
        # just below the best stump's gain some tree with a split beats the leaf
        lam = best_stump * (1 - 1e-6)
        _, value = brute_force_tree(data, lam=lam, max_depth=1)
        assert value < 1 - data.class_counts().max() / data.total_weight + lam - 1e-12


# --- issue 22: warnings a person can read ------------------------------------------------------


def _xor_data() -> Dataset:
    """No single split helps (best stump 0), a depth-2 tree is perfect."""
    rng = np.random.default_rng(1)
    X = rng.random((200, 3)) < 0.5
    return Dataset.from_arrays(X, (X[:, 0] ^ X[:, 1]).astype(int))


def test_the_range_does_not_contradict_itself_when_no_stump_helps():
    """Before: "informative values lie below lam=0.49 ... one split wins below lam=0"."""
    data = _xor_data()
    best_stump, ceiling = informative_lam_range(data)
    assert best_stump == 0.0 and ceiling > 0.0
    with pytest.warns(TrivialAnswerWarning) as record:
        search_tree(data, lam=ceiling + 0.01, max_depth=3)
    (text,) = [str(w.message) for w in record]
    assert f"below lam={ceiling:.4g}" in text
    assert "below lam=0" not in text.replace(f"lam={ceiling:.4g}", "")
    assert "no model with one split beats the leaf" in text


def _call_sites(record) -> set[str]:
    return {w.filename for w in record if issubclass(w.category, TrivialAnswerWarning)}


def test_every_warning_points_at_the_users_line():
    """Before: a fixed stacklevel named odtkit's own files (methods.py, compare.py ...) as soon
    as the search was reached by another path than a direct call."""
    import odtkit
    from odtkit.estimators import OptimalTreeClassifier

    data = load("monk1")
    _, ceiling = informative_lam_range(data)
    lam = ceiling + 0.05
    calls = {
        "search_tree": lambda: search_tree(data, lam=lam, max_depth=2),
        "search_rule_list": lambda: search_rule_list(data, lam=lam),
        "compare": lambda: odtkit.compare(data, lam=lam, max_depth=2, methods=("dp",)),
        "estimator": lambda: OptimalTreeClassifier(lam=lam, max_depth=2).fit(
            data.X, data.classes[data.y]
        ),
    }
    for name, call in calls.items():
        with pytest.warns(TrivialAnswerWarning) as record:
            call()
        assert _call_sites(record) == {__file__}, name


def test_a_sweep_names_the_task_of_each_warning_once():
    """Warnings raised inside sweep tasks come back once each, with dataset, fold, depth and λ,
    at the sweep's call site; the rows' message column keeps them too."""
    import odtkit

    data = load("monk1")
    _, ceiling = informative_lam_range(data)
    lam = round(ceiling + 0.05, 3)
    with pytest.warns(TrivialAnswerWarning) as record:
        table = odtkit.sweep(
            {"m1": data},
            lams=[0.01, lam],
            depths=[2],
            folds=None,
            methods=["dp", "bnb"],
            n_jobs=1,
            progress=False,
        )
    texts = [str(w.message) for w in record if issubclass(w.category, TrivialAnswerWarning)]
    # dp and bnb raise the same text: one warning, naming the first and counting the other
    assert texts == [
        f"sweep task dataset 'm1', fold 0, depth 2, lam={lam:g}, method dp (and 1 more task): "
        + search_warning(data, lam)
    ]
    assert _call_sites(record) == {__file__}
    trivial = table[table["lam"] == lam]
    assert len(trivial) == 2 and trivial["message"].str.contains("TrivialAnswerWarning").all()
    assert not table[table["lam"] == 0.01]["message"].str.contains("Warning").any()


def search_warning(data: Dataset, lam: float) -> str:
    with pytest.warns(TrivialAnswerWarning) as record:
        search_tree(data, lam=lam, max_depth=2)
    return str(record[0].message)

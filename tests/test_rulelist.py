"""RuleList: prediction semantics, objective accounting, text, round trips, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from odtkit import RuleList, metrics
from odtkit.datasets import Dataset
from odtkit.testing import brute_force_rule_list, example_dataset_a


def example_list() -> RuleList:
    return RuleList([([(0, 1), (1, 1)], 0), ([(0, 0), (1, 0)], 0)], 1)


def test_predict_first_rule_wins() -> None:
    X = np.array([[1, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 1]], dtype=bool)
    rl = RuleList([([(0, 1)], 1), ([(0, 1), (1, 1)], 0), ([(2, 1)], 0)], 1)
    # row 0 fires rule 0 before rule 1; row 1 fires rule 2; rows 2/3: rule 0 / rule 2
    assert rl.apply(X).tolist() == [0, 2, 0, 2]
    assert rl.predict(X).tolist() == [1, 0, 1, 0]
    assert RuleList([], 1).predict(X).tolist() == [1, 1, 1, 1]


def test_predict_matches_naive_loop() -> None:
    rng = np.random.default_rng(0)
    X = rng.random((200, 5)) < 0.5
    rl = RuleList([([(0, 1), (3, 0)], 1), ([(2, 0)], 0), ([(4, 1)], 1)], 0)
    expected = []
    for row in X:
        for antecedent, label in rl.rules:
            if all(row[f] == v for f, v in antecedent):
                expected.append(label)
                break
        else:
            expected.append(rl.default_label)
    assert rl.predict(X).tolist() == expected


def test_objective_counts_rules_not_default() -> None:
    data = example_dataset_a()
    rl = example_list()
    assert rl.n_rules == 2 and len(rl) == 2
    assert metrics.misclassified(rl, data) == 1
    assert metrics.objective(rl, data, lam=0.01) == pytest.approx(1 / 9 + 0.02)
    assert metrics.objective(RuleList([], 1), data, lam=0.3) == pytest.approx(4 / 9)


def test_to_text() -> None:
    text = example_list().to_text(["a", "b", "c"], ["no", "yes"])
    assert text.splitlines() == [
        "if a = 1 and b = 1 then class: no",
        "else if a = 0 and b = 0 then class: no",
        "else class: yes",
    ]
    assert RuleList([], 0).to_text() == "class: 0"
    assert "x0 = 1" in str(example_list())


def test_round_trips() -> None:
    rl = example_list()
    assert RuleList.from_dict(rl.to_dict()) == rl
    assert RuleList.from_dict(json.loads(json.dumps(rl.to_dict()))) == rl
    assert hash(rl) == hash(RuleList.from_dict(rl.to_dict()))
    # literal order inside an antecedent is canonicalised
    assert RuleList([([(1, 1), (0, 1)], 0)], 1) == RuleList([([(0, 1), (1, 1)], 0)], 1)
    empty = RuleList([], 1)
    assert RuleList.from_dict(empty.to_dict()) == empty


def test_oracle_returns_consistent_list() -> None:
    data = example_dataset_a()
    ants = [[(0, 1)], [(1, 1)], [(2, 1)], [(0, 0), (1, 0)]]
    for lam in (0.0, 0.05, 0.2):
        model, value = brute_force_rule_list(data, lam=lam, antecedents=ants, max_length=4)
        assert metrics.objective(model, data, lam=lam) == pytest.approx(value, abs=1e-12)


def test_oracle_weighted_equals_duplicated() -> None:
    rng = np.random.default_rng(3)
    X = rng.random((12, 3)) < 0.5
    y = rng.integers(0, 2, 12)
    w = rng.integers(1, 4, 12)
    weighted = Dataset.from_arrays(X, y, sample_weight=w.astype(float))
    duplicated = Dataset.from_arrays(np.repeat(X, w, axis=0), np.repeat(y, w))
    ants = [[(0, 1)], [(1, 0)], [(2, 1)], [(0, 0), (2, 0)]]
    for lam in (0.0, 0.02, 0.1):
        _, a = brute_force_rule_list(weighted, lam=lam, antecedents=ants, max_length=4)
        _, b = brute_force_rule_list(duplicated, lam=lam, antecedents=ants, max_length=4)
        assert a == pytest.approx(b, abs=1e-12)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one literal"):
        RuleList([([], 1)], 0)
    with pytest.raises(ValueError, match="each feature once"):
        RuleList([([(0, 1), (0, 0)], 1)], 0)
    with pytest.raises(ValueError, match="0 or 1"):
        RuleList([([(0, 3)], 1)], 0)
    with pytest.raises(TypeError, match="feature"):
        RuleList([([(-1, 1)], 1)], 0)
    with pytest.raises(TypeError, match="label"):
        RuleList([([(0, 1)], -1)], 0)
    with pytest.raises(TypeError, match="default_label"):
        RuleList([], "yes")
    with pytest.raises(TypeError, match="rule"):
        RuleList([((0, 1),)], 0)
    with pytest.raises(ValueError, match="features"):
        RuleList([([(4, 1)], 1)], 0).predict(np.zeros((2, 3), dtype=bool))
    with pytest.raises(ValueError, match="binary"):
        example_list().predict(np.full((2, 3), 2))
    with pytest.raises(ValueError, match="rules"):
        RuleList.from_dict({"default_label": 0})

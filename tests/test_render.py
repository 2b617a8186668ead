"""The one text renderer: conditions on the raw columns, no float noise, short summaries."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from odtkit import datasets
from odtkit.core import search_rule_list
from odtkit.datasets import Binarizer
from odtkit.estimators import OptimalRuleListClassifier, OptimalTreeClassifier
from odtkit.render import FeatureSpec, as_feature_specs, tree_to_text
from odtkit.rulelist import RuleList
from odtkit.tree import Tree


def test_conditions_read_as_tests_on_the_raw_column():
    age = FeatureSpec("age", "threshold", 40.5)
    color = FeatureSpec("color", "category", "red")
    flag = FeatureSpec("x3")
    assert (age.condition(1), age.condition(0)) == ("age <= 40.5", "age > 40.5")
    assert (color.condition(1), color.condition(0)) == ("color = red", "color != red")
    assert (flag.condition(1), flag.condition(0)) == ("x3 = 1", "x3 = 0")
    assert (age.name, color.name, flag.name) == ("age<=40.5", "color=red", "x3")
    with pytest.raises(ValueError, match="kind"):
        FeatureSpec("age", "interval", 3)


def test_tree_text_in_export_text_style():
    tree = Tree.split(0, Tree.leaf(0), Tree.split(1, Tree.leaf(0), Tree.leaf(1)))
    specs = [FeatureSpec("age", "threshold", 40.5), FeatureSpec("color", "category", "red")]
    assert tree_to_text(tree, specs, ["no", "yes"]).splitlines() == [
        "|--- age > 40.5",
        "|   |--- class: no",
        "|--- age <= 40.5",
        "|   |--- color != red",
        "|   |   |--- class: no",
        "|   |--- color = red",
        "|   |   |--- class: yes",
    ]
    assert tree.to_text().splitlines()[0] == "|--- x0 = 0"
    with pytest.raises(ValueError, match="feature_names has 1 entries"):
        tree.to_text(["a"])
    with pytest.raises(TypeError, match="feature_names"):
        tree.to_text("age")


def test_binarizer_describes_each_output_column():
    frame = pd.DataFrame(
        {"w": [17.5, 17.6, 17.7, 30.0], "c": ["a", "b", "a", "b"], "f": [0, 1, 1, 0]}
    )
    binarizer = Binarizer().fit(frame)
    specs = binarizer.get_feature_specs()
    assert [s.name for s in specs] == list(binarizer.get_feature_names_out())
    assert [(s.source, s.kind) for s in specs] == [
        ("w", "threshold"),
        ("w", "threshold"),
        ("w", "threshold"),
        ("c", "category"),
        ("c", "category"),
        ("f", "binary"),
    ]
    # the float average of 17.5 and 17.6 is 17.549999999999997; the threshold is 17.55
    assert [s.name for s in specs[:3]] == ["w<=17.55", "w<=17.65", "w<=23.85"]
    X = binarizer.transform(frame)
    for j, spec in enumerate(specs[:3]):  # each threshold still splits exactly as its midpoint
        assert np.array_equal(X[:, j], frame["w"].to_numpy() <= spec.value)
    assert as_feature_specs(binarizer, 6) == specs


def test_thresholds_print_without_float_noise_on_real_data():
    from sklearn.datasets import load_breast_cancer

    frame = load_breast_cancer(as_frame=True).frame.drop(columns="target")
    names = Binarizer().fit(frame).get_feature_names_out()
    mantissas = [n.rsplit("<=", 1)[1].split("e")[0] for n in names]
    digits = [len(re.sub(r"[^0-9]", "", m).lstrip("0")) for m in mantissas]
    # the data has at most 6 significant digits, so a midpoint needs at most 7
    assert max(digits) <= 8


def test_estimator_text_names_raw_columns():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {"age": rng.integers(18, 70, 120), "color": rng.choice(["red", "blue"], 120)}
    )
    y = np.where((frame["age"] <= 30) & (frame["color"] == "red"), "yes", "no")
    clf = OptimalTreeClassifier(lam=0.005, max_depth=2).fit(frame, y)
    text = clf.to_text()
    assert re.search(r"age (<=|>) \d+(\.\d+)?$", text, re.M)
    assert re.search(r"color (=|!=) (red|blue)$", text, re.M)
    rules = OptimalRuleListClassifier(lam=0.005).fit(frame, y)
    text = rules.to_text()
    assert text.startswith("if ") and "class: " in text and "<=30" not in text


def test_rule_list_result_repr_is_a_short_summary():
    data = datasets.load("monk1")
    result = search_rule_list(data, lam=0.01)
    assert len(result.stats["antecedents"]) > 100
    text = repr(result)
    assert len(text) < 300 and "RuleList(n_rules=" in text
    assert repr(RuleList([([(0, 1)], 1)], 0)) == "RuleList(n_rules=1, default_label=0)"

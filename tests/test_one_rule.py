"""Issue 37 item 5: the API and the CLI follow one rule for the problems whose answer is a leaf.

``max_depth=0`` (the single leaf) is a baseline the searches take at both doors and a MIP
refuses at both doors (it needs a branch node); a table with a single class is no error at
either door: the tree is the leaf predicting it, with the same warning
(``odtkit.validation.min_depth`` states the rule).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from odtkit.cli import main
from odtkit.estimators import OptimalTreeClassifier


@pytest.fixture
def tables(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 5, 40), "b": rng.normal(size=40).round(2)})
    frame["y"] = rng.integers(0, 2, 40)
    frame.to_csv(tmp_path / "data.csv", index=False)
    frame.assign(y="same").to_csv(tmp_path / "one_class.csv", index=False)
    monkeypatch.chdir(tmp_path)
    return frame


def _cli_tree(argv: list[str], capsys) -> tuple[int, dict, str]:
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else {}), err


def _api(frame: pd.DataFrame, **params) -> tuple[OptimalTreeClassifier, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = OptimalTreeClassifier(**params).fit(frame[["a", "b"]], frame["y"])
    return est, [str(w.message) for w in caught]


def test_depth_zero_is_the_leaf_at_both_doors(tables, capsys):
    est, said = _api(tables, max_depth=0)
    assert est.tree_.is_leaf and est.status_ == "optimal"
    assert any("max_depth=0 admits only the single leaf" in s for s in said)
    code, payload, err = _cli_tree(["fit", "data.csv", "--max-depth", "0"], capsys)
    assert code == 0
    assert payload["n_leaves"] == 1 and payload["status"] == "optimal"
    assert payload["objective"] == pytest.approx(est.objective_)
    assert "max_depth=0 admits only the single leaf" in err


def test_depth_zero_is_refused_by_a_mip_at_both_doors(tables, capsys):
    with pytest.raises(ValueError, match=r"max_depth must be >= 1, got 0"):
        _api(tables, max_depth=0, method="flowoct")
    code = main(["fit", "data.csv", "--max-depth", "0", "--method", "flowoct"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == ["odtkit fit: error: --max-depth must be >= 1, got 0"]
    assert main(["compare", "--dataset", "data.csv", "--max-depth", "0"]) == 2
    assert "--max-depth must be >= 1" in capsys.readouterr().err


def test_a_single_class_is_the_leaf_at_both_doors(tables, capsys):
    frame = tables.assign(y="same")
    est, said = _api(frame)
    assert est.tree_.is_leaf and (est.predict(frame[["a", "b"]]) == "same").all()
    assert any("single class" in s for s in said)
    code, payload, err = _cli_tree(["fit", "one_class.csv"], capsys)
    assert code == 0
    assert payload["n_leaves"] == 1 and payload["objective"] == pytest.approx(est.objective_)
    assert "single class" in err

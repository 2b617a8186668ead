"""``odtkit.io``: a fitted tree saved and loaded with its features, classes, reading and
certificate (JSON only), and predicting raw rows through ``FeatureSpec.evaluate`` (issue 38
item 2).

``tests/data/saved_model/`` holds a model written by ``odtkit fit --out`` before ``odtkit.io``
existed (commit 0c080bf: ``odtkit fit train.csv --max-depth 3 --thresholds 4 --lam 0.005 --out
model.json``) and its ``odtkit predict model.json new.csv`` output: files written then must
load and predict the same.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from odtkit import OptimalTreeClassifier, io
from odtkit.cli import main
from odtkit.datasets import TableReading, read_table
from odtkit.render import FeatureSpec
from odtkit.tree import Tree

SAVED = Path(__file__).resolve().parent / "data" / "saved_model"


def test_a_file_written_before_odtkit_io_loads_with_all_its_parts():
    model = io.load(SAVED / "model.json")
    record = json.loads((SAVED / "model.json").read_text(encoding="utf-8"))
    assert model.tree == Tree.from_dict(record["tree"])
    assert model.classes == ["no", "yes"] and model.label == "y"
    assert model.certificate == "binarization" == record["certificate"]
    assert model.reading == TableReading.from_dict(record["reading"])
    assert all(isinstance(f, FeatureSpec) for f in model.features)
    assert [f.source for f in model.features] == [f["source"] for f in record["features"]]
    assert model.record == record
    assert set(model.used_columns()) <= {"age", "income", "smoker", "colour"}


def test_a_file_written_before_odtkit_io_predicts_as_it_did(tmp_path, capsys):
    expected = pd.read_csv(SAVED / "pred.csv")["prediction"].astype(str).tolist()
    model = io.load(SAVED / "model.json")
    rows = model.read_rows(SAVED / "new.csv")
    assert [str(p) for p in model.predict(rows)] == expected
    # and through the command line, as before
    code = main(["predict", str(SAVED / "model.json"), str(SAVED / "new.csv")])
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["prediction", *expected]


def test_prediction_equals_the_binarizers_features_on_the_training_rows():
    model = io.load(SAVED / "model.json")
    rows = model.read_rows(SAVED / "train.csv")
    bits = model.feature_bits(rows)
    used = sorted(model.tree.features_used())
    for j in used:
        np.testing.assert_array_equal(
            bits[:, j], model.features[j].evaluate(rows[model.features[j].source])
        )
    unused = [j for j in range(len(model.features)) if j not in used]
    assert not bits[:, unused].any()  # features the tree does not test are not computed


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x80\x04\x95pickle", r"m\.json is not JSON \("),
        ("{not json", r"m\.json is not JSON \("),
        ('{"a": 1}', r"m\.json holds no tree; expected a tree file written by 'odtkit fit --out'"),
        ('{"tree": {}}', r"m\.json was written by an older odtkit without the binarization"),
        ('{"tree": {}, "features": [1], "classes": [0]}', r"malformed 'features' or 'classes'"),
        ('{"tree": {"x": 1}, "features": [], "classes": [0]}', r"m\.json has a malformed tree"),
    ],
)
def test_malformed_files_are_refused_with_the_message_predict_prints(tmp_path, content, message):
    path = tmp_path / "m.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(io.ModelFileError, match=message):
        io.load(path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        io.load(tmp_path / "absent.json")


def test_an_unknown_feature_kind_is_refused_only_when_the_tree_tests_it():
    record = json.loads((SAVED / "model.json").read_text(encoding="utf-8"))
    used = sorted(Tree.from_dict(record["tree"]).features_used())
    unused = next(j for j in range(len(record["features"])) if j not in used)
    record["features"][unused]["kind"] = "interval"
    rows = read_table(SAVED / "new.csv")
    io.loads(json.dumps(record)).predict(rows)  # never evaluated: fine
    record["features"][used[0]]["kind"] = "interval"
    with pytest.raises(io.ModelFileError, match=f"feature {used[0]} is of kind 'interval'"):
        io.loads(json.dumps(record)).predict(rows)


def test_text_and_infinite_cells_are_refused_naming_the_column_and_rows():
    model = io.load(SAVED / "model.json")
    rows = model.read_rows(SAVED / "new.csv")
    column = next(
        f.source
        for j, f in enumerate(model.features)
        if j in model.tree.features_used() and f.kind == "threshold"
    )
    bad = rows.copy()
    bad[column] = bad[column].astype(float)
    bad.loc[bad.index[[1, 3]], column] = np.inf
    with pytest.raises(
        ValueError, match=rf"column '{column}' of X has 2 infinite values \(rows 1, 3\)"
    ):
        model.predict(bad)
    with pytest.raises(ValueError, match=r"\(lines 3, 5\)"):
        model.predict(bad, first_line=2)
    bad[column] = "text"
    with pytest.raises(ValueError, match=f"column '{column}' of t.csv must be numeric"):
        model.predict(bad, name="t.csv")
    with pytest.raises(ValueError, match=f"X has no column '{column}', which the tree tests"):
        model.predict(rows.drop(columns=[column]))


def test_a_loaded_model_saves_back_to_the_same_record(tmp_path):
    model = io.load(SAVED / "model.json")
    io.save(model, tmp_path / "again.json")
    assert io.load(tmp_path / "again.json") == model
    with pytest.raises(ValueError, match="exists"):
        io.save(model, tmp_path / "again.json")
    io.save(model, tmp_path / "again.json", overwrite=True)
    with pytest.raises(TypeError, match="fitted tree estimator"):
        io.save(OptimalTreeClassifier(), tmp_path / "unfitted.json")


@pytest.mark.parametrize("thresholds", ["guess", "all"])
def test_an_estimator_saved_predicts_through_the_cli_as_it_predicts(tmp_path, capsys, thresholds):
    # a notebook's tree, saved: `odtkit predict` on a CSV gives estimator.predict's answers
    train = read_table(SAVED / "train.csv")
    X, y = train.drop(columns=["y"]), train["y"]
    estimator = OptimalTreeClassifier(max_depth=2, lam=0.01, thresholds=thresholds).fit(X, y)
    io.save(estimator, tmp_path / "tree.json")
    model = io.load(tmp_path / "tree.json")
    assert model.certificate == estimator.certificate_
    new = read_table(SAVED / "new.csv")
    expected = [str(p) for p in estimator.predict(new)]
    assert [str(p) for p in model.predict(new)] == expected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["predict", str(tmp_path / "tree.json"), str(SAVED / "new.csv")])
    assert code == 0
    assert capsys.readouterr().out.splitlines() == ["prediction", *expected]

"""``odtkit predict MODEL DATA``: a tree saved by ``fit --out`` (JSON, no pickle) applied to new
rows, binarized exactly as the training table was (issue 22, item 6)."""

from __future__ import annotations

import io
import json
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odtkit.cli import main
from odtkit.datasets import Binarizer, binarize_frame
from odtkit.io import SavedModel, feature_dicts, loads
from odtkit.methods import GUESS_ROUNDS
from odtkit.tree import Tree


def _frame(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "income": rng.normal(50, 15, n).round(2),
            "smoker": rng.integers(0, 2, n),
            "colour": rng.choice(["red", "green", "blue"], n),
        }
    )
    positive = ((frame.age > 45) & (frame.colour != "red")) | (frame.income > 75)
    frame["y"] = np.where(positive ^ (rng.random(n) < 0.05), "yes", "no")
    return frame


@pytest.fixture
def fitted(tmp_path):
    train = _frame(0, 200)
    train.to_csv(tmp_path / "train.csv", index=False)
    return tmp_path, train


def _renumbered(tree: Tree, new_index: list[int]) -> Tree:
    if tree.is_leaf:
        return tree
    left, right = _renumbered(tree.left, new_index), _renumbered(tree.right, new_index)
    return Tree.split(new_index[tree.feature], left, right)


@pytest.mark.parametrize("thresholds", ["guess", "all", "3"])
def test_fit_out_then_predict_equals_the_tree_on_the_same_binarized_rows(
    fitted, capsys, thresholds
):
    folder, train = fitted
    model = folder / "tree.json"
    argv = ["fit", str(folder / "train.csv"), "--out", str(model), "--thresholds", thresholds]
    assert main(argv) == 0
    capsys.readouterr()
    # new rows: other column order, an extra column, a category never seen in training
    new = _frame(1, 80)
    new.loc[:4, "colour"] = "purple"
    new["note"] = "x"
    new = new[["note", "colour", "y", "income", "smoker", "age"]]
    new.to_csv(folder / "new.csv", index=False)
    assert main(["predict", str(model), str(folder / "new.csv")]) == 0
    captured = capsys.readouterr()
    predicted = pd.read_csv(io.StringIO(captured.out))
    assert list(predicted.columns) == ["prediction"]

    options = {"guess": {"guess_thresholds": GUESS_ROUNDS}, "all": {}, "3": {"max_thresholds": 3}}
    data, binarizer = binarize_frame(train, "y", **options[thresholds])
    saved = json.loads(model.read_text())
    tree = Tree.from_dict(saved["tree"])
    if thresholds == "all":
        # the exact search saves only the thresholds its tree tests: each is an every-midpoint
        # feature, the same test under the same name
        position = {name: j for j, name in enumerate(data.feature_names)}
        assert set(saved["feature_names"]) <= set(position)
        tree = _renumbered(tree, [position[name] for name in saved["feature_names"]])
    else:
        assert saved["feature_names"] == list(data.feature_names)
    expected = data.classes[tree.predict(binarizer.transform(new))]
    assert predicted["prediction"].tolist() == expected.tolist()
    accuracy = float(np.mean(expected == new["y"].to_numpy()))
    assert f"accuracy {accuracy:.4f} on the 80 rows" in captured.err


def test_the_tree_file_is_plain_json_with_the_binarization(fitted, capsys):
    folder, _ = fitted
    model = folder / "tree.json"
    # the guess keeps every column's features (the exact search, fit's default, keeps only
    # the tree's)
    assert (
        main(["fit", str(folder / "train.csv"), "--thresholds", "guess", "--out", str(model)]) == 0
    )
    saved = json.loads(model.read_text())
    assert saved["label"] == "y" and saved["classes"] == ["no", "yes"]
    assert len(saved["features"]) == len(saved["feature_names"])
    kinds = {f["source"]: f["kind"] for f in saved["features"]}
    assert kinds["colour"] == "category" and kinds["smoker"] == "binary"
    columns = {c["name"]: c for c in saved["binarization"]["columns"]}
    assert columns["age"]["thresholds"] == [
        f["value"] for f in saved["features"] if f["source"] == "age"
    ]


def test_predict_writes_a_file_and_keeps_input_columns(fitted, capsys):
    folder, train = fitted
    model, out = folder / "tree.json", folder / "pred.csv"
    assert main(["fit", str(folder / "train.csv"), "--out", str(model)]) == 0
    saved = json.loads(model.read_text())
    tested = {saved["features"][j]["source"] for j in Tree.from_dict(saved["tree"]).features_used()}
    untested = [c for c in train.columns if c not in tested]  # at least the label
    some = sorted(tested)[0]
    argv = ["predict", str(model), str(folder / "train.csv"), "--out", str(out)]
    assert main([*argv, "--keep-input", "--drop", some]) == 2
    assert f"no column {some!r} (left out by --columns/--drop)" in capsys.readouterr().err
    assert main([*argv, "--keep-input", "--drop", untested[0]]) == 0
    written = pd.read_csv(out)
    assert list(written.columns) == [*(c for c in train if c != untested[0]), "prediction"]
    argv.append("--force")  # the file exists now
    assert main([*argv, "--keep-input", "--columns", ",".join(sorted(tested))]) == 0
    assert list(pd.read_csv(out).columns) == [*(c for c in train if c in tested), "prediction"]
    assert "200 predictions written" in capsys.readouterr().err


def test_predict_refuses_in_one_line(fitted, capsys):
    folder, train = fitted
    model = folder / "tree.json"
    assert main(["fit", str(folder / "train.csv"), "--out", str(model)]) == 0
    train.drop(columns="age").to_csv(folder / "no_age.csv", index=False)
    (folder / "forest.pkl").write_bytes(pickle.dumps({"a": 1}))
    # fit refuses an infinite cell; so does predict, naming the column and line (issue 37)
    infinite = train.astype({"age": float})
    infinite.loc[3, ["age", "income"]] = [np.inf, -np.inf]
    infinite.to_csv(folder / "inf.csv", index=False)
    (folder / "old.json").write_text(json.dumps({"tree": {"label": 0}, "classes": [0, 1]}))
    capsys.readouterr()
    for argv, message in [
        ([model, folder / "no_age.csv"], "DATA: no_age.csv has no column 'age', which the tree"),
        ([folder / "forest.pkl", folder / "train.csv"], "MODEL: forest.pkl is not JSON"),
        ([folder / "train.csv", model], "MODEL: train.csv is not JSON"),
        ([folder / "old.json", folder / "train.csv"], "older odtkit"),
        ([model, folder / "train.csv", "--out", "/nonexistent/p.csv"], "--out"),
        ([folder / "nope.json", folder / "train.csv"], "MODEL "),
        ([model, folder / "inf.csv"], "column 'age' of inf.csv has 1 infinite value (line 5)"),
    ]:
        assert main(["predict", *map(str, argv)]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1


def test_a_blank_cell_in_a_column_fitted_without_blanks_fails_its_tests(fitted, capsys):
    # as the Binarizer encodes it: x <= t, x = v and x = 1 are all False on a blank
    folder, train = fitted
    model = folder / "tree.json"
    assert main(["fit", str(folder / "train.csv"), "--out", str(model), "--columns", "age"]) == 0
    blank, huge = train.astype({"age": float}), train.astype({"age": float})
    blank.loc[[2, 7], "age"] = np.nan
    huge.loc[[2, 7], "age"] = 1e300  # above every threshold: the same side as a blank
    blank.to_csv(folder / "blank.csv", index=False)
    huge.to_csv(folder / "huge.csv", index=False)
    capsys.readouterr()
    assert main(["predict", str(model), str(folder / "huge.csv")]) == 0
    expected = capsys.readouterr().out
    assert main(["predict", str(model), str(folder / "blank.csv")]) == 0
    captured = capsys.readouterr()
    assert captured.out == expected
    warning = [line for line in captured.err.splitlines() if "warning" in line]
    assert (
        len(warning) == 1
        and "column 'age' of blank.csv has 2 blank cells (lines 4, 9)" in (warning[0])
    )


@st.composite
def _tables(draw):
    n = draw(st.integers(2, 12))
    numbers = st.lists(st.integers(-3, 3).map(lambda v: v / 2), min_size=n, max_size=n)
    words = st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n)
    bits = st.lists(st.integers(0, 1), min_size=n, max_size=n)
    return pd.DataFrame({"u": draw(numbers), "v": draw(words), "w": draw(bits), "z": draw(numbers)})


def _saved(tree: Tree, specs: list[dict]) -> SavedModel:
    """The model a file holding ``tree`` over ``specs`` loads as (through JSON)."""
    record = {"tree": tree.to_dict(), "features": json.loads(json.dumps(specs)), "classes": [0, 1]}
    return loads(json.dumps(record))


@settings(max_examples=40, deadline=None)
@given(train=_tables(), new=_tables())
def test_feature_bits_equal_the_binarizers_transform(train, new):
    binarizer = Binarizer().fit(train)
    specs = feature_dicts(binarizer.get_feature_specs())
    if not specs:
        return
    # a chain that tests every feature, so that every feature is computed
    tree = Tree.leaf(0)
    for j in reversed(range(len(specs))):
        tree = Tree.split(j, Tree.leaf(1), tree)
    saved = _saved(tree, specs)
    np.testing.assert_array_equal(saved.feature_bits(new, name="new.csv"), binarizer.transform(new))


def _with_blanks(frame: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    frame = frame.astype({"w": float, "u": float})
    for j, column in enumerate(frame.columns):
        frame.loc[mask[:, j], column] = np.nan
    return frame


@settings(max_examples=40, deadline=None)
@given(
    train=_tables(),
    new=_tables(),
    holes=st.data(),
)
def test_feature_bits_equal_the_binarizers_transform_with_blank_cells(train, new, holes):
    def mask(frame):
        shape = frame.shape
        flat = holes.draw(st.lists(st.booleans(), min_size=shape[0] * 3, max_size=shape[0] * 3))
        out = np.zeros(shape, dtype=bool)
        out[:, :3] = np.asarray(flat).reshape(shape[0], 3)
        return out

    train, new = _with_blanks(train, mask(train)), _with_blanks(new, mask(new))
    try:
        binarizer = Binarizer().fit(train)
        expected = binarizer.transform(new)
    except ValueError as exc:  # a Binarizer that refuses missing values: nothing to match
        assert "missing" in str(exc)
        return
    specs = feature_dicts(binarizer.get_feature_specs())
    tree = Tree.leaf(0)
    for j in reversed(range(len(specs))):
        tree = Tree.split(j, Tree.leaf(1), tree)
    saved = _saved(tree, specs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # blanks in a column fitted without: said, then done
        bits = saved.feature_bits(new, name="new.csv")
    np.testing.assert_array_equal(bits[:, : expected.shape[1]], expected)

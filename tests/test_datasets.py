"""Bundled datasets, CSV loading, binarize_frame and the shared benchmark data."""

from __future__ import annotations

import hashlib
import importlib.resources
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import odtkit.datasets as ds
from odtkit.datasets import Binarizer, Dataset, _bundled

# name -> (n_samples, n_features, (negatives, positives)), from shared/data/README.md
# and shared/BENCHMARK-ANCHORS.md.
BUNDLED = {
    "monk1": (124, 11, (62, 62)),
    "monk2": (169, 11, (105, 64)),
    "monk3": (122, 11, (62, 60)),
    "tic-tac-toe": (958, 18, (332, 626)),
    "car-evaluation": (1728, 15, (1210, 518)),
    "balance-scale": (625, 16, (576, 49)),
    "german-credit": (1000, 70, (300, 700)),
}

# name -> (OSDT file relative to shared/data) for the byte-level comparison.
OSDT_ORIGINALS = {
    "monk1": "osdt/monk1-train.csv",
    "monk2": "osdt/monk2-train.csv",
    "monk3": "osdt/monk3-train.csv",
    "tic-tac-toe": "osdt/tic-tac-toe.csv",
    "car-evaluation": "osdt/car-evaluation.csv",
    "balance-scale": "osdt/balance-scale.csv",
}

# name -> (n_samples, n_features, (negatives, positives)), from shared/data/README.md.
SHARED = {
    "compas-binary": (6907, 12, (3711, 3196)),
    "coupon-carryout": (2280, 87, (598, 1682)),
    "coupon-rest20": (2653, 87, (772, 1881)),
    "bar-7": (1913, 14, (1125, 788)),
    "compas-corels-train": (6489, 14, (3583, 2906)),
    "compas-corels-test": (721, 14, (377, 344)),
    "monk1-gosdt": (124, 17, (62, 62)),
    "monk2-gosdt": (169, 17, (105, 64)),
}


def _data_dir():
    return importlib.resources.files("odtkit.datasets") / "data"


def _require_shared(relative: str = "") -> Path:
    path = ds.shared_path(relative)
    if path is None:
        pytest.skip(f"shared benchmark data {relative or 'directory'} not available")
    return path


# -- bundled sets --------------------------------------------------------------------------------


def test_names_lists_the_bundled_sets():
    assert ds.names() == list(BUNDLED)


@pytest.mark.parametrize("name", list(BUNDLED))
def test_bundled_set_shape_and_balance(name):
    n, p, balance = BUNDLED[name]
    data = ds.load(name)
    assert isinstance(data, Dataset)
    assert data.name == name
    assert data.X.shape == (n, p)
    assert data.X.dtype == bool
    assert data.y.shape == (n,)
    assert data.classes.tolist() == [0, 1]
    assert tuple(np.bincount(data.y).tolist()) == balance
    assert len(data.feature_names) == p
    assert "label" not in data.feature_names


def test_bundled_feature_names_are_the_original_header():
    assert ds.load("monk1").feature_names[:3] == ("a1_1", "a1_2", "a2_1")
    assert ds.load("tic-tac-toe").feature_names[-1] == "Feat8_x"


def test_car_alias():
    car = ds.load("car")
    assert car.name == "car-evaluation"
    assert np.array_equal(car.X, ds.load("car-evaluation").X)


def test_bundled_files_are_package_resources():
    # The wheel ships everything under src/odtkit; finding the files via importlib.resources
    # (not a path next to this test) is what an installed package will do.
    data = _data_dir()
    shipped = {entry.name for entry in data.iterdir()}
    assert {f"{name}.csv" for name in BUNDLED} <= shipped
    assert "README.md" in shipped


def test_bundled_files_match_the_md5_in_the_data_readme():
    data = _data_dir()
    readme = (data / "README.md").read_text(encoding="utf-8")
    for name in BUNDLED:
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{name}.csv`"))
        shipped_md5 = re.findall(r"`([0-9a-f]{32})`", row)[0]
        digest = hashlib.md5((data / f"{name}.csv").read_bytes()).hexdigest()
        assert digest == shipped_md5, name


def test_bundled_files_are_normalized_csv():
    for name in BUNDLED:
        raw = (_data_dir() / f"{name}.csv").read_bytes()
        assert b"\r" not in raw and b";" not in raw
        assert raw.split(b"\n", 1)[0].endswith(b",label")


def test_describe_table():
    table = ds.describe()
    assert list(table.columns) == [
        "name",
        "n_samples",
        "n_features",
        "n_classes",
        "class_balance",
        "source",
        "licence",
    ]
    assert table["name"].tolist() == list(BUNDLED)
    row = table.set_index("name").loc["monk2"]
    assert (row.n_samples, row.n_features, row.n_classes) == (169, 11, 2)
    assert row.class_balance == "0:105 / 1:64"
    assert (table["licence"] == "CC BY 4.0").all()
    assert table["source"].str.contains("UCI").all()


@pytest.mark.data
def test_bundled_german_credit_equals_the_pystreed_original():
    path = _require_shared("pystreed/fairness/german-credit-binarized.csv")
    raw = pd.read_csv(path, sep=" ", header=None)
    bundled = ds.load("german-credit")
    assert np.array_equal(raw.iloc[:, 1:].to_numpy(dtype=bool), bundled.X)
    assert np.array_equal(raw.iloc[:, 0].to_numpy(), bundled.classes[bundled.y])
    assert bundled.feature_names[0] == "Gender=Male"


@pytest.mark.data
@pytest.mark.parametrize("name", list(OSDT_ORIGINALS))
def test_bundled_equals_the_osdt_original(name):
    original = ds.load_file(_require_shared(OSDT_ORIGINALS[name]))
    bundled = ds.load(name)
    assert np.array_equal(original.X, bundled.X)
    assert np.array_equal(original.y, bundled.y)
    assert original.feature_names == bundled.feature_names


# -- bad input -----------------------------------------------------------------------------------


def test_load_unknown_name_lists_known_names():
    with pytest.raises(ValueError, match=r"unknown dataset name 'monk4'.*monk1.*balance-scale"):
        ds.load("monk4")


def test_load_benchmark_only_name_points_to_load_shared():
    with pytest.raises(ValueError, match="load_shared"):
        ds.load("compas-binary")


def test_load_shared_unknown_name_lists_known_names():
    with pytest.raises(
        ValueError, match=r"unknown shared dataset name 'fico'.*compas-binary.*bar-7"
    ):
        ds.load_shared("fico")


def test_load_file_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="path .*nope.csv"):
        ds.load_file(tmp_path / "nope.csv")


def test_load_file_label_not_found(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,y\n0,1,1\n1,0,0\n")
    with pytest.raises(ValueError, match=r"label 'target' is not a column.*\['a', 'b', 'y'\]"):
        ds.load_file(path, label="target")


def test_load_file_non_binary_without_binarize(tmp_path):
    path = tmp_path / "raw.csv"
    path.write_text("age,flag,colour,y\n20,0,red,0\n31,1,blue,1\n45,0,red,1\n")
    with pytest.raises(
        ValueError, match=r"non-binary feature columns 'age', 'colour'.*binarize=True"
    ):
        ds.load_file(path)


def test_load_shared_without_shared_data(monkeypatch):
    monkeypatch.setattr(_bundled, "_shared_root", lambda: None)
    assert ds.shared_path("osdt/compas-binary.csv") is None
    with pytest.raises(FileNotFoundError, match="ODTKIT_SHARED_DATA"):
        ds.load_shared("compas-binary")


def test_load_shared_with_file_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("ODTKIT_SHARED_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"'bar-7' expected at .*bar-7.csv"):
        ds.load_shared("bar-7")


def test_binarize_frame_label_not_found():
    frame = pd.DataFrame({"a": [1, 2], "y": [0, 1]})
    with pytest.raises(ValueError, match="label 'target' is not a column"):
        ds.binarize_frame(frame, "target")


# -- load_file -----------------------------------------------------------------------------------


def test_load_file_semicolon_crlf(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_bytes(b"f1;f2;f3;cls\r\n1;0;1;1\r\n0;0;1;0\r\n1;1;0;1\r\n")
    data = ds.load_file(path)
    assert data.name == "semi"
    assert data.feature_names == ("f1", "f2", "f3")
    assert data.X.tolist() == [[True, False, True], [False, False, True], [True, True, False]]
    assert data.y.tolist() == [1, 0, 1]


def test_load_file_whitespace_separator_and_bom(tmp_path):
    path = tmp_path / "ws.txt"
    path.write_bytes("\ufeffa b  y\n1 0 1\n0 1 0\n".encode())
    data = ds.load_file(path, name="spaces")
    assert data.name == "spaces"
    assert data.feature_names == ("a", "b")
    assert data.y.tolist() == [1, 0]


def test_load_file_explicit_label_and_separator(tmp_path):
    path = tmp_path / "mid.csv"
    path.write_text("y|a|b\nyes|1|0\nno|0|1\nyes|1|1\n")
    data = ds.load_file(path, label="y", sep="|")
    assert data.feature_names == ("a", "b")
    assert data.classes.tolist() == ["no", "yes"]
    assert data.y.tolist() == [1, 0, 1]


def test_load_file_binarize(tmp_path):
    path = tmp_path / "raw.csv"
    path.write_text("age,flag,colour,y\n20,0,red,0\n31,1,blue,1\n45,0,red,1\n31,1,green,0\n")
    data = ds.load_file(path, binarize=True)
    assert data.feature_names == (
        "age<=25.5",
        "age<=38",
        "flag",
        "colour=blue",
        "colour=green",
        "colour=red",
    )
    expected = [
        [1, 1, 0, 0, 0, 1],
        [0, 1, 1, 1, 0, 0],
        [0, 0, 0, 0, 0, 1],
        [0, 1, 1, 0, 1, 0],
    ]
    assert data.X.astype(int).tolist() == expected
    assert data.y.tolist() == [0, 1, 1, 0]


def test_load_file_binarize_max_thresholds(tmp_path):
    path = tmp_path / "num.csv"
    rows = "\n".join(f"{v},{v % 2}" for v in range(20))
    path.write_text("v,y\n" + rows + "\n")
    data = ds.load_file(path, binarize=True, max_thresholds=3)
    assert data.n_features == 3
    assert all(name.startswith("v<=") for name in data.feature_names)


def test_binarize_frame_returns_fitted_binarizer():
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "c": list("abab"), "y": [0, 0, 1, 1]})
    data, binarizer = ds.binarize_frame(frame, "y", categorical=None, name="toy")
    assert isinstance(binarizer, Binarizer)
    assert data.name == "toy"
    assert data.feature_names == tuple(binarizer.get_feature_names_out())
    test = pd.DataFrame({"x": [2.5], "c": ["b"]})
    assert binarizer.transform(test).tolist() == [[False, True, True, False, True]]


# -- shared benchmark data -----------------------------------------------------------------------


def test_shared_path_prefers_environment_variable(monkeypatch, tmp_path):
    (tmp_path / "osdt").mkdir()
    (tmp_path / "osdt" / "x.csv").write_text("a,y\n0,1\n")
    monkeypatch.setenv("ODTKIT_SHARED_DATA", str(tmp_path))
    assert ds.shared_path() == tmp_path
    assert ds.shared_path("osdt/x.csv") == tmp_path / "osdt" / "x.csv"
    assert ds.shared_path("osdt/absent.csv") is None


def test_shared_path_walks_up_from_working_directory(monkeypatch, tmp_path):
    root = tmp_path / "shared" / "data"
    root.mkdir(parents=True)
    work = tmp_path / "main" / "deep"
    work.mkdir(parents=True)
    monkeypatch.delenv("ODTKIT_SHARED_DATA", raising=False)
    monkeypatch.chdir(work)
    assert ds.shared_path() == root


def test_shared_path_bad_environment_variable_warns(monkeypatch, tmp_path):
    monkeypatch.setenv("ODTKIT_SHARED_DATA", str(tmp_path / "missing"))
    with pytest.warns(UserWarning, match="ODTKIT_SHARED_DATA"):
        ds.shared_path()


@pytest.mark.data
@pytest.mark.parametrize("name", list(SHARED))
def test_load_shared(name):
    _require_shared(_bundled._SHARED[name])
    n, p, balance = SHARED[name]
    data = ds.load_shared(name)
    assert data.name == name
    assert data.X.shape == (n, p)
    assert data.X.dtype == bool
    assert tuple(np.bincount(data.y).tolist()) == balance


@pytest.mark.data
def test_load_file_raw_shared_csv_with_binarize():
    path = _require_shared("gosdt/compas.csv")
    with pytest.raises(ValueError, match="binarize=True"):
        ds.load_file(path)
    data = ds.load_file(path, binarize=True, max_thresholds=4)
    assert data.n_samples == 6907
    assert data.X.dtype == bool
    assert tuple(np.bincount(data.y).tolist()) == (3711, 3196)

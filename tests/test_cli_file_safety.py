"""``--out`` of ``odtkit fit``, ``predict`` and ``prune`` loses no data (issue 28, item 1).

An existing file is replaced only with ``--force``; a link at ``--out`` is replaced, never
followed; an input file is never the output; an unwritable place is refused before the solve;
a write interrupted by Ctrl-C (or failing) leaves the older file intact and no partial file;
a run that ends without a model writes nothing and says so.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pickle
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import odtkit.cli._tables
import odtkit.files
from odtkit.cli import main

OLD = b"an older answer\n"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A table, a tree fitted on it (for predict) and a skops forest (for prune)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(80, 3)).round(2), columns=["a", "b", "c"])
    y = (X.a + X.b > 0).astype(int)
    X.assign(y=y).to_csv(tmp_path / "data.csv", index=False)
    monkeypatch.chdir(tmp_path)
    assert main(["fit", "data.csv", "--max-depth", "2", "--out", "tree.json"]) == 0
    sio = pytest.importorskip("skops.io", reason="skops: the optional extra odtkit[skops] (in dev)")
    from sklearn.ensemble import RandomForestClassifier

    forest = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    (tmp_path / "forest.skops").write_bytes(sio.dumps(forest))
    return tmp_path


#: one command per writer; each writes ``out`` and reads the files of :func:`folder`
COMMANDS = {
    "fit": ["fit", "data.csv", "--max-depth", "2", "--thresholds", "guess"],
    "predict": ["predict", "tree.json", "data.csv"],
    "prune": ["prune", "forest.skops", "data.csv", "--lam", "0.01"],
}


def _run(argv, capsys):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def _leftovers(path):
    """Temporary or probe files odtkit left in ``path``."""
    return [p.name for p in path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("command", COMMANDS)
def test_an_existing_file_is_replaced_only_with_force(folder, capsys, command):
    (folder / "out").write_bytes(OLD)
    code, _, err = _run([*COMMANDS[command], "--out", "out"], capsys)
    assert code == 2 and "--out 'out'" in err and "--force" in err
    assert len(err.strip().splitlines()) == 1
    assert (folder / "out").read_bytes() == OLD
    code, _, err = _run([*COMMANDS[command], "--out", "out", "--force"], capsys)
    assert code == 0, err
    assert (folder / "out").read_bytes() != OLD
    assert not _leftovers(folder)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_link_is_replaced_not_followed(folder, capsys, command):
    (folder / "precious.txt").write_bytes(OLD)
    (folder / "link").symlink_to(folder / "precious.txt")
    code, _, err = _run([*COMMANDS[command], "--out", "link"], capsys)
    assert code == 2 and "link" in err and "--force" in err
    assert (folder / "link").is_symlink()
    code, _, err = _run([*COMMANDS[command], "--out", "link", "--force"], capsys)
    assert code == 0, err
    assert (folder / "precious.txt").read_bytes() == OLD  # the link's target untouched
    assert not (folder / "link").is_symlink() and (folder / "link").read_bytes() != OLD


def _inputs():
    return [
        ("fit", ["fit", "data.csv", "--out", "data.csv"], "DATA"),
        ("fit", ["fit", "data.csv", "--out", "./data.csv"], "DATA"),
        ("fit", ["fit", "data.csv", "--out", "data-link.csv"], "DATA"),
        ("predict", ["predict", "tree.json", "data.csv", "--out", "tree.json"], "MODEL"),
        ("predict", ["predict", "tree.json", "data.csv", "--out", "data-link.csv"], "DATA"),
        ("prune", [*COMMANDS["prune"], "--out", "forest.skops"], "FOREST"),
        ("prune", [*COMMANDS["prune"], "--out", "data.csv"], "DATA"),
    ]


@pytest.mark.parametrize(("command", "argv", "what"), _inputs())
def test_an_input_file_is_never_the_output_even_with_force(folder, capsys, command, argv, what):
    (folder / "data-link.csv").symlink_to(folder / "data.csv")
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    code, _, err = _run([*argv, "--force"], capsys)
    assert code == 2 and f"is the input file {what}" in err
    assert len(err.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before


@pytest.mark.parametrize("command", COMMANDS)
def test_a_read_only_directory_is_refused_before_the_work(folder, capsys, monkeypatch, command):
    locked = folder / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        (locked / "probe").touch()  # root writes anyway: then make creating files fail
        (locked / "probe").unlink()

        def refuse(*args, **kwargs):
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(odtkit.files.tempfile, "mkstemp", refuse)
    except PermissionError:
        pass

    def no_work(*args, **kwargs):
        raise AssertionError("the data was read before --out was checked")

    monkeypatch.setattr(odtkit.cli._tables, "_read_table", no_work)
    code, _, err = _run([*COMMANDS[command], "--out", locked / "out"], capsys)
    locked.chmod(0o755)
    assert code == 2 and "--out" in err and "cannot create a file in directory" in err
    assert "Permission denied" in err and len(err.strip().splitlines()) == 1
    assert list(locked.iterdir()) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_ctrl_c_mid_write_leaves_the_older_file_and_no_partial_one(
    folder, capsys, monkeypatch, command
):
    (folder / "out").write_bytes(OLD)
    real = odtkit.files._write_all

    def interrupted(fd, data):
        real(fd, data[: len(data) // 2])
        raise KeyboardInterrupt

    monkeypatch.setattr(odtkit.files, "_write_all", interrupted)
    code, _, err = _run([*COMMANDS[command], "--out", "out", "--force"], capsys)
    assert code == 130
    assert "--out out NOT written: interrupted while writing" in err
    assert (folder / "out").read_bytes() == OLD
    assert not _leftovers(folder)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_failing_write_is_one_line_and_keeps_the_older_file(folder, capsys, monkeypatch, command):
    (folder / "out").write_bytes(OLD)

    def full(fd, data):
        os.write(fd, data[:10])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(odtkit.files, "_write_all", full)
    code, _, err = _run([*COMMANDS[command], "--out", "out", "--force"], capsys)
    errors = [line for line in err.splitlines() if "error" in line]
    assert code == 2 and len(errors) == 1 and "No space left on device; not written" in errors[0]
    assert (folder / "out").read_bytes() == OLD and not _leftovers(folder)


def test_a_written_file_keeps_the_permissions_of_the_one_it_replaces(folder, capsys):
    (folder / "out").write_bytes(OLD)
    (folder / "out").chmod(0o640)
    assert _run([*COMMANDS["fit"], "--out", "out", "--force"], capsys)[0] == 0
    assert (folder / "out").stat().st_mode & 0o777 == 0o640
    assert _run([*COMMANDS["fit"], "--out", "new"], capsys)[0] == 0
    umask = os.umask(0)
    os.umask(umask)
    assert (folder / "new").stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_fit_without_a_tree_writes_nothing_and_says_so(folder, capsys, monkeypatch):
    from odtkit import methods
    from odtkit.results import Status

    real = methods.get_method("dp")

    def no_tree(dataset, **options):
        result = real.solve(dataset, **options)
        return dataclasses.replace(result, model=None, status=Status.TIME_LIMIT, objective=math.nan)

    fake = SimpleNamespace(name="dp", is_search=True, solve=no_tree)
    monkeypatch.setattr(methods, "get_method", lambda *args, **kwargs: fake)
    (folder / "out").write_bytes(OLD)
    code, out, err = _run([*COMMANDS["fit"], "--out", "out", "--force"], capsys)
    assert code == 3 and (folder / "out").read_bytes() == OLD
    assert "--out out NOT written: no tree (status time_limit)" in err
    assert "from an earlier run, not this one's answer" in err
    code, out, err = _run([*COMMANDS["fit"], "--out", "fresh", "--json"], capsys)
    assert code == 3 and not (folder / "fresh").exists()
    record = json.loads(out)["out"]
    assert record["file"] == "fresh" and record["written"] is False
    assert record["reason"] == "no tree (status time_limit)"


def test_a_prune_without_a_pruning_writes_nothing_and_says_so(folder, capsys, monkeypatch):
    import odtkit.pruning

    real = odtkit.pruning.prune

    def no_pruning(*args, **kwargs):
        result = real(*args, **kwargs)
        return dataclasses.replace(result, model=None, status="time_limit", objective=math.nan)

    monkeypatch.setattr(odtkit.pruning, "prune", no_pruning)
    code, out, err = _run([*COMMANDS["prune"], "--out", "pruned", "--json"], capsys)
    assert code == 3 and not (folder / "pruned").exists()
    assert json.loads(out)["out"]["written"] is False
    assert "--out pruned NOT written: no pruning (status time_limit)" in err


def test_the_written_file_says_so_in_json(folder, capsys):
    code, out, err = _run([*COMMANDS["fit"], "--out", "t2.json", "--json"], capsys)
    assert code == 0 and "odtkit fit: wrote t2.json" in err
    payload = json.loads(out)
    assert payload["out"] == {"file": "t2.json", "written": True, "reason": None}
    saved = json.loads((folder / "t2.json").read_text())
    assert "out" not in saved and saved["tree"] == payload["tree"]


def test_prune_writes_the_format_it_read(folder, capsys):
    sio = pytest.importorskip("skops.io", reason="skops: the optional extra odtkit[skops] (in dev)")
    assert _run([*COMMANDS["prune"], "--out", "pruned.skops"], capsys)[0] == 0
    raw = (folder / "pruned.skops").read_bytes()
    assert sio.get_untrusted_types(data=raw) == ["sklearn.tree._tree.Tree"]
    # the pruned forest is a FOREST again, read without trusting anything more
    assert _run(["prune", "pruned.skops", "data.csv", "--lam", "0.01"], capsys)[0] == 0
    forest = sio.loads(raw, trusted=["sklearn.tree._tree.Tree"])
    (folder / "forest.pkl").write_bytes(pickle.dumps(forest))
    argv = ["prune", "forest.pkl", "data.csv", "--lam", "0.01", "--trust-pickle"]
    assert _run([*argv, "--out", "pruned.pkl"], capsys)[0] == 0
    assert type(pickle.loads((folder / "pruned.pkl").read_bytes())) is type(forest)


def test_a_file_appearing_during_the_run_is_not_replaced_without_force(folder, capsys, monkeypatch):
    real = odtkit.cli._tables._load

    def meanwhile(*args, **kwargs):
        (folder / "out").write_bytes(OLD)  # another program writes the name after the check
        return real(*args, **kwargs)

    monkeypatch.setattr(odtkit.cli._tables, "_load", meanwhile)
    code, _, err = _run([*COMMANDS["fit"], "--out", "out", "--json"], capsys)
    assert code == 2 and "appeared during the run; not replaced" in err
    assert (folder / "out").read_bytes() == OLD and not _leftovers(folder)


def test_without_skops_a_skops_forest_is_one_line_saying_how_to_install(
    folder, capsys, monkeypatch
):
    monkeypatch.setattr(odtkit.files, "_skops", lambda: None)
    code, _, err = _run(COMMANDS["prune"], capsys)
    assert code == 2 and "reading it needs skops: pip install 'odtkit[skops]'" in err
    assert len(err.strip().splitlines()) == 1


def test_without_hard_links_a_new_file_is_still_written(folder, capsys, monkeypatch):
    def no_links(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(odtkit.files.os, "link", no_links)
    code, _, err = _run([*COMMANDS["fit"], "--out", "new.json"], capsys)
    assert code == 0 and json.loads((folder / "new.json").read_text())["tree"]
    assert not _leftovers(folder)

"""benchmarks/rashomon.py (issue 24): the peers' tree conversion, the set-difference
classification (on a hand-made table, against a brute-force set) and a run with no peer."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import benchmark_module

from odtkit import metrics, testing
from odtkit.core._problem import decode_tree, encode_tree
from odtkit.datasets import Dataset
from odtkit.tree import Tree

# 6 rows, column 2 constant (a split on it has an empty side), 3 rows of each class
X_TINY = np.array([[0, 0, 1], [0, 1, 1], [1, 0, 1], [1, 1, 1], [0, 0, 1], [1, 1, 1]], bool)
Y_TINY = np.array([0, 1, 1, 0, 1, 0])


@pytest.fixture(scope="module")
def bench():
    with benchmark_module("rashomon") as module:
        yield module


@pytest.fixture
def tiny():
    return Dataset.from_arrays(X_TINY, Y_TINY)


def _admissible(tree: Tree, X: np.ndarray) -> bool:
    def walk(node, rows):
        if node.is_leaf:
            return True
        col = X[rows, node.feature]
        return (
            col.any()
            and (~col).any()
            and walk(node.left, rows[~col])
            and walk(node.right, rows[col])
        )

    return walk(tree, np.arange(X.shape[0]))


class BruteCore:
    """The contract's RashomonCore by brute force (``leaves="any"``): a stand-in for the
    native build on tiny tables."""

    def __init__(self, dataset, *, lam, max_depth, epsilon, leaves="any", time_limit=None):
        assert leaves == "any"
        trees = [
            t
            for t in testing.enumerate_trees(dataset.n_features, max_depth)
            if _admissible(t, dataset.X)
        ]
        scored = sorted(
            (metrics.objective(t, dataset, lam=lam), t.n_leaves, encode_tree(t)) for t in trees
        )
        self.optimum = scored[0][0]
        self.lower_bound = self.optimum
        self.bound = (1 + epsilon) * self.optimum
        self.optimal_tree = decode_tree(scored[0][2])
        self.members = [c for r, _, c in scored if r <= self.bound + 1e-9]
        self.complete, self.status, self.stats = True, "optimal", {"subproblems": 0}

    def count(self):
        return len(self.members)

    def codes(self, start, stop):
        return BENCH_PAD(self.members[start:stop])


def BENCH_PAD(codes):
    width = max((len(c) for c in codes), default=1)
    out = np.full((len(codes), width), np.iinfo(np.int32).min, dtype=np.int32)
    for i, c in enumerate(codes):
        out[i, : len(c)] = c
    return out


# ------------------------------------------------------------------------- conversions
def test_treefarms_trees_are_read_with_true_on_the_right(bench):
    # TreeFARMS: "true" = x_j == 1, odtkit puts x_j == 0 on the left
    raw = {
        "feature": 1,
        "true": {"prediction": 1},
        "false": {"feature": 0, "true": {"prediction": 0}, "false": {"prediction": 1}},
    }
    code = bench.treefarms_code(raw)
    tree = decode_tree(code)
    assert tree == Tree.split(1, Tree.split(0, Tree.leaf(1), Tree.leaf(0)), Tree.leaf(1))
    np.testing.assert_array_equal(bench.predict_code(code, X_TINY), tree.predict(X_TINY))


def test_praxis_paths_are_signed_one_based_features(bench):
    # PRAXIS: +f = x_{f-1} == 1 (odtkit's right), -f = x_{f-1} == 0; leaves in any order
    paths = [[2, 1], [-2], [2, -1]]
    labels = [0, 1, 1]
    tree = decode_tree(bench.praxis_code(paths, labels))
    assert tree == Tree.split(1, Tree.leaf(1), Tree.split(0, Tree.leaf(1), Tree.leaf(0)))
    assert decode_tree(bench.praxis_code([[]], [1])) == Tree.leaf(1)
    with pytest.raises(ValueError, match="do not form a tree"):
        bench.praxis_code([[1], [2]], [0, 1])


def test_padded_codes_round_trip_to_keys(bench):
    codes = [[-1], [0, -1, -2], [1, 0, -1, -2, -2]]
    arr = bench.pad_codes(codes)
    assert arr.dtype == np.int32 and arr.shape == (3, 5)
    assert bench.code_keys(arr) == [tuple(c) for c in codes]


# ----------------------------------------------------------------------- classification
def test_the_difference_is_placed_by_rescoring(bench, tiny):
    lam, eps, depth = 0.2, 0.5, 2
    core = BruteCore(tiny, lam=lam, max_depth=depth, epsilon=eps)
    ours = core.codes(0, core.count())
    members = [list(k) for k in bench.code_keys(ours)]
    assert len(members) == 22  # the exact set on this table (PRAXIS returned 44 here)
    above = [0, -1, -2]  # 4 errors: R = 4/6 + 2 * 0.2 = 1.07 > 1.5 * OPT = 1.05
    assert metrics.objective(decode_tree(above), tiny, lam=lam) > core.bound
    empty_side = [2, -1, -2]  # column 2 is constant: outside the tree space
    deep = [0, 1, -1, 2, -1, -2, -2]  # depth 3 > 2 (and an empty side)
    dropped = members[:3]
    peer = [*members[3:], above, empty_side, deep, members[5]]  # one duplicate
    c = bench.classify(
        tiny,
        lam=lam,
        max_depth=depth,
        leaves="any",
        bound=core.bound,
        ours_count=core.count(),
        ours_codes=ours,
        peer_codes=bench.pad_codes(peer),
    )
    assert c["as_sets"] and c["common"] == 19 and c["peer_duplicates"] == 1
    assert c["peer_above_bound"] == 1 and c["examples_peer_above_bound"] == [above]
    assert c["peer_outside_space"] == 2
    assert c["outside_reasons"] == {"split with an empty side": 1, "deeper than max_depth": 1}
    assert c["missing_from_peer"] == 3
    assert sorted(c["examples_missing_from_peer"]) == sorted(dropped)
    assert c["missing_from_ours"] == 0 and c["ours_above_bound"] == 0 and not c["our_bug"]
    assert sum(c["missing_traits"].values()) >= 3

    # the same peer without our list: every peer tree re-scored, missing = count - valid
    c2 = bench.classify(
        tiny,
        lam=lam,
        max_depth=depth,
        leaves="any",
        bound=core.bound,
        ours_count=core.count(),
        ours_codes=None,
        peer_codes=bench.pad_codes(peer),
    )
    assert not c2["as_sets"] and c2["peer_valid"] == 19 and c2["missing_from_peer"] == 3
    assert c2["peer_above_bound"] == 1 and c2["peer_outside_space"] == 2 and not c2["our_bug"]

    # a capped extraction (the peer holds more trees than were read): no "missing" count
    c3 = bench.classify(
        tiny,
        lam=lam,
        max_depth=depth,
        leaves="any",
        bound=core.bound,
        ours_count=core.count(),
        ours_codes=ours,
        peer_codes=bench.pad_codes(peer),
        peer_count=len(peer) + 10,
    )
    assert c3["partial"] and c3["missing_from_peer"] is None and c3["peer_above_bound"] == 1


def test_a_valid_tree_missing_from_ours_is_our_bug(bench, tiny):
    lam, eps, depth = 0.2, 0.5, 2
    core = BruteCore(tiny, lam=lam, max_depth=depth, epsilon=eps)
    full = core.codes(0, core.count())
    ours = full[1:]  # "our" set lost its first tree
    c = bench.classify(
        tiny,
        lam=lam,
        max_depth=depth,
        leaves="any",
        bound=core.bound,
        ours_count=len(ours),
        ours_codes=ours,
        peer_codes=full,
    )
    assert c["our_bug"] and c["missing_from_ours"] == 1
    assert c["examples_missing_from_ours"] == [list(bench.code_keys(full[:1])[0])]


def test_majority_leaves_space_and_leaf_traits(bench, tiny):
    # a stump on column 0: left rows y = 0,1,1 (majority 1), right rows y = 1,0,0 (majority 0)
    good, minority = (
        Tree.split(0, Tree.leaf(1), Tree.leaf(0)),
        Tree.split(0, Tree.leaf(0), Tree.leaf(0)),
    )
    assert bench.outside_space(good, tiny, 2, "majority") is None
    assert bench.outside_space(minority, tiny, 2, "majority") == "non-majority leaf"
    assert bench.outside_space(minority, tiny, 2, "any") is None
    assert bench.leaf_traits(minority, tiny) == {"same-label siblings", "non-majority leaf"}
    assert bench.leaf_traits(Tree.leaf(0), tiny) == {"tied leaf"}


def test_measure_ours_counts_and_lists_with_a_stand_in_build(bench, tiny):
    row, core = bench.measure_ours(
        tiny, lam=0.2, depth=2, eps=0.5, leaves="any", limit=10, reps=2, build=BruteCore
    )
    assert row["count"] == 22 and row["complete"] and row["materialised"]
    assert row["materialise_time"] >= row["time"] > 0 and len(row["times"]) == 2
    assert row["bound_count_units"] == pytest.approx(1.5 * 4.2)
    row, _ = bench.measure_ours(
        tiny, lam=0.2, depth=2, eps=0.5, leaves="any", limit=10, reps=1, cap=5, build=BruteCore
    )
    assert row["materialise_time"] is None and not row["materialised"]


def test_smallest_setting_runs_with_no_peer_installed(bench, tmp_path, monkeypatch):
    monkeypatch.delenv("ODTKIT_TREEFARMS_PYTHON", raising=False)
    monkeypatch.delenv("ODTKIT_PRAXIS_PYTHON", raising=False)
    bench.main(
        [
            "--datasets",
            "monk1,no-such-data",
            "--depths",
            "1",
            "--lams",
            "0.1",
            "--epsilons",
            "0.01",
            "--reps",
            "1",
            "--max-wait",
            "0",
            "--out-dir",
            str(tmp_path),
        ]
    )
    payload = json.loads((tmp_path / "rashomon.json").read_text())
    (row,) = payload["rows"]
    for peer in ("praxis", "treefarms"):
        assert row[peer] == {
            "available": False,
            "reason": f"not installed (set ODTKIT_{peer.upper()}_PYTHON)",
        }
    for key in ("ours_any", "ours_majority"):
        ours = row[key]
        if ours.get("available"):  # the native Rashomon build is there
            assert ours["complete"] and ours["count"] >= 1 and ours["optimal_tree_ok"]
        else:
            assert "odtkit.core.rashomon" in ours["reason"]
    assert payload["skipped"] == ["no-such-data: data not found"]
    md = (tmp_path / "rashomon.md").read_text()
    assert "not installed" in md and "| monk1 | 1 | 0.1 | 0.01 |" in md

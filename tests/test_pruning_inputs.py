"""What ``prune`` accepts as ``X`` (issue 37, items 2 and 11): feature names and missing values.

* Feature names: a forest fitted on a DataFrame is given its columns by name, in order, as
  scikit-learn's own ``predict`` requires; reordered or renamed columns are a ``ValueError``
  naming ``X`` and the names off (the issue's case: objective 0.452 instead of 0.107 and
  training accuracy 0.605 instead of 1.000, silently). Names on one side only warn and go by
  position, as in scikit-learn. The CLI selects a named forest's columns by name.
* Missing values: scikit-learn's trees route NaN (``tree_.missing_go_to_left``); the
  extraction routes them the same way, so every leaf membership the objective counts is the
  forest's own (checked against ``apply`` and the paths to its leaves), the unpruned ensemble
  predicts like the forest on rows with NaN, and the pruned objective equals one recomputed
  independently from scikit-learn's routing. Infinite values are refused naming the column.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from _routing import decision_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import BaggingClassifier, ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier

from odtkit.cli import main
from odtkit.estimators import OptimalRuleListClassifier, OptimalTreeClassifier
from odtkit.pruning import PrunedEnsemble, extract, prune
from odtkit.pruning._ensemble import unpruned


def _issue_table(n=400, seed=0):
    """Two columns, the label a function of both (so the order matters)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n) * 3})
    y = ((X.a > 0) ^ (X.b > 1)).astype(int).to_numpy()
    return X, y


def _with_nan(X, rate=0.2, seed=1):
    rng = np.random.default_rng(seed)
    X = X.copy()
    for column in X.columns:
        X.loc[rng.random(len(X)) < rate, column] = np.nan
    return X


# ------------------------------------------------------------------------ feature names
@pytest.fixture(scope="module")
def named_forest():
    X, y = _issue_table()
    forest = RandomForestClassifier(10, max_depth=6, random_state=0).fit(X, y)
    return forest, X, y


def test_the_columns_in_fit_order_give_the_forest_its_own_answer(named_forest):
    forest, X, y = named_forest
    result = prune(forest, X, y, lam=0.0)
    assert result.model.score(X, y) == pytest.approx(forest.score(X, y))


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda X: X[["b", "a"]], "another order: fitted ['a', 'b'], got ['b', 'a']"),
        (lambda X: X.rename(columns={"a": "c"}), "unseen at fit: ['c']; seen at fit, now missing"),
        (lambda X: X.assign(c=1.0), "unseen at fit: ['c']"),
    ],
    ids=["reordered", "renamed", "extra"],
)
def test_columns_off_the_fitted_names_are_refused_naming_X(named_forest, change, says):
    forest, X, y = named_forest
    for call in (
        lambda: prune(forest, change(X), y, lam=0.0),
        lambda: extract(forest, change(X), y),
    ):
        with pytest.raises(ValueError, match="X's column names must be the feature names") as e:
            call()
        assert says in str(e.value)
    pruned = prune(forest, X, y, lam=0.0).model
    with pytest.raises(ValueError, match="X's column names") as e:
        pruned.predict(change(X))
    assert says in str(e.value)


def test_names_on_one_side_only_warn_and_go_by_position(named_forest):
    forest, X, y = named_forest
    with pytest.warns(UserWarning, match="X does not have valid feature names, but Random"):
        by_array = prune(forest, X.to_numpy(), y, lam=0.0)
    assert by_array.objective == pytest.approx(prune(forest, X, y, lam=0.0).objective)
    plain = RandomForestClassifier(5, max_depth=4, random_state=0).fit(X.to_numpy(), y)
    with pytest.warns(UserWarning, match="X has feature names, but RandomForestClassifier was"):
        by_frame = prune(plain, X, y, lam=0.0)
    assert by_frame.objective == pytest.approx(prune(plain, X.to_numpy(), y, lam=0.0).objective)


def test_a_list_of_trees_must_agree_on_names_and_names_must_be_strings(named_forest):
    _, X, y = named_forest
    first = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    renamed = X.set_axis(["p", "q"], axis=1)
    other = DecisionTreeClassifier(max_depth=3, random_state=0).fit(renamed, y)
    with pytest.raises(ValueError, match=r"ensemble\[1\] was fitted on other feature names"):
        prune([first, other], X, y, lam=0.0)
    with pytest.raises(ValueError, match="another order"):
        prune([first], X[["b", "a"]], y, lam=0.0)
    with pytest.raises(TypeError, match="X's column names must all be strings"):
        prune([first], X.set_axis(["a", 1], axis=1), y, lam=0.0)


def test_non_numeric_and_infinite_columns_are_named(named_forest):
    forest, X, y = named_forest
    with pytest.raises(TypeError, match=r"X must be numeric: column\(s\) \[.b.\] are not \(dtype"):
        prune(forest, X.assign(b=X.b.astype(str)), y, lam=0.0)
    for bad in (np.inf, -np.inf, 1e39):  # 1e39 is finite but beyond float32
        Xi = X.copy()
        Xi.loc[3, "b"] = bad
        with pytest.raises(ValueError, match="X column 'b' has 1 infinite value"):
            prune(forest, Xi, y, lam=0.0)
    with pytest.raises(ValueError, match="X column 'column 1' has 1 infinite"):
        plain = RandomForestClassifier(2, max_depth=2, random_state=0).fit(X.to_numpy(), y)
        Xi = X.to_numpy().copy()
        Xi[0, 1] = np.inf
        prune(plain, Xi, y, lam=0.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: OptimalTreeClassifier(max_depth=2, time_limit=30),
        lambda: OptimalTreeClassifier(max_depth=2, thresholds="all", time_limit=30),
        lambda: OptimalRuleListClassifier(time_limit=30),
    ],
    ids=["tree", "tree-all-thresholds", "rule-list"],
)
def test_the_estimators_refuse_columns_off_their_fit_like_scikit_learn(make):
    X, y = _issue_table(n=120)
    model = make().fit(X, y)
    methods = ["predict", "predict_proba"]
    if isinstance(model, OptimalTreeClassifier):
        methods += ["apply", "decision_path"]
    for changed in (X[["b", "a"]], X.rename(columns={"a": "c"})):
        for method in methods:
            with pytest.raises(ValueError, match="feature names should match"):
                getattr(model, method)(changed)
        with pytest.raises(ValueError, match="feature names should match"):
            model.score(changed, y)
    np.testing.assert_array_equal(model.predict(X), model.predict(X[["a", "b"]]))


# ------------------------------------------------------------------------ missing values
def _sk_trees(ensemble):
    """(tree, its column map) as the ensemble feeds its trees."""
    if isinstance(ensemble, list):
        return [(t, None) for t in ensemble]
    feats = getattr(ensemble, "estimators_features_", None)
    return [(t, None if feats is None else feats[j]) for j, t in enumerate(ensemble.estimators_)]


def _columns(X, fmap):
    arr = np.asarray(X, dtype=np.float32)
    return arr if fmap is None else arr[:, fmap]


def test_the_unpruned_ensemble_predicts_like_the_forest_on_rows_with_nan():
    X, y = _issue_table(n=300)
    Xn = _with_nan(X)
    # no bootstrap: the trees' leaf values are the class fractions of the data prune sees
    forest = RandomForestClassifier(8, max_depth=6, bootstrap=False, random_state=0)
    forest.fit(Xn, y)
    result = prune(forest, Xn, y, lam=0.0)
    full = PrunedEnsemble(result.model.data, unpruned(result.model.data), 0.0)
    fresh = _with_nan(_issue_table(n=200, seed=5)[0], rate=0.3, seed=9)
    for rows in (Xn, fresh):
        np.testing.assert_allclose(full.predict_proba(rows), forest.predict_proba(rows))
        np.testing.assert_array_equal(full.predict(rows), forest.predict(rows))
    # lam = 0 keeps every split that lowers a training error (it may merge leaves of one
    # majority, which moves soft votes): the per-tree training errors are the forest's
    assert result.model.error_term == pytest.approx(full.error_term, abs=1e-12)
    assert result.model.error_term_on(Xn, y) == pytest.approx(full.error_term_on(Xn, y))
    # and its exported scikit-learn forest predicts what it does, NaN rows included
    exported = result.model.to_sklearn(forest)
    np.testing.assert_allclose(exported.predict_proba(fresh), result.model.predict_proba(fresh))


def test_trees_that_cannot_route_nan_refuse_it_naming_the_column():
    X, y = _issue_table(n=100)
    tree = ExtraTreeClassifier(splitter="best", max_depth=3, random_state=0).fit(X, y)
    Xn = X.copy()
    Xn.loc[[2, 5], "b"] = np.nan
    with pytest.raises(ValueError, match="X column 'b' has 2 missing value") as e:
        prune([tree], Xn, y, lam=0.0)
    assert "splitter='best'" in str(e.value)
    with pytest.raises(ValueError, match="Input X contains NaN"):  # as scikit-learn does
        tree.predict(Xn)


def _independent_objective(ensemble, X, y, leaves, data, lam):
    """The pruning objective from scikit-learn's own routing (tests/_routing.py), without the
    extraction: per tree, each row's pruned leaf is the deepest node of its path kept as a
    leaf; errors against the leaf's majority (ties: smallest class) over the rows reaching it;
    features paid once per row across trees, for the nodes strictly above its pruned leaf."""
    N, T = len(y), len(leaves)
    codes = np.searchsorted(data.classes, y)
    errors, used = 0, np.zeros((N, data.n_features), dtype=bool)
    for (est, fmap), tree, z in zip(_sk_trees(ensemble), data.trees, leaves, strict=True):
        path = decision_paths(est, _columns(X, fmap))
        kept = np.zeros(est.tree_.node_count, dtype=bool)
        kept[tree.sk_node[z]] = True
        depth = np.zeros(est.tree_.node_count, dtype=np.int64)
        for node in range(est.tree_.node_count):  # sklearn's ids: children after parents
            for child in (est.tree_.children_left[node], est.tree_.children_right[node]):
                if child >= 0:
                    depth[child] = depth[node] + 1
        on_leaf = path & kept  # exactly one kept node per row's path
        assert (on_leaf.sum(axis=1) == 1).all()
        leaf = on_leaf.argmax(axis=1)
        for node in np.unique(leaf):
            rows = leaf == node
            reaching = path[:, node]  # S_h: every row through the node (training data)
            majority = np.argmax(np.bincount(codes[reaching], minlength=len(data.classes)))
            errors += int(np.count_nonzero(codes[rows] != majority))
        above = path & (depth[None, :] < depth[leaf][:, None])
        feats = est.tree_.feature
        for i, nodes in enumerate(above):
            f = feats[nodes]
            used[i, f if fmap is None else np.asarray(fmap)[f]] = True
    cost = used.astype(float) @ data.costs
    return errors / (N * T) + lam * cost.mean()


@pytest.mark.filterwarnings("ignore:lam=.* prunes every tree to its root")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(8, 60),
    rate=st.sampled_from([0.0, 0.1, 0.4]),
    lam=st.sampled_from([0.0, 0.002, 0.01, 0.05]),
    kind=st.sampled_from(["rf", "extra", "bagging"]),
)
def test_property_pruned_objective_equals_the_forests_own_routing(seed, n, rate, lam, kind):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)).round(1)
    y = rng.integers(0, 3, n)
    X[rng.random(X.shape) < rate] = np.nan
    ensemble = {
        "rf": RandomForestClassifier(3, max_depth=3, random_state=seed),
        "extra": ExtraTreesClassifier(3, max_depth=3, random_state=seed),
        "bagging": BaggingClassifier(
            DecisionTreeClassifier(max_depth=3), 3, max_features=2, random_state=seed
        ),
    }[kind].fit(X, y)
    result = prune(ensemble, X, y, lam=lam)
    assert result.status == "optimal"
    pruned = result.model
    expected = _independent_objective(ensemble, X, y, pruned.leaves, pruned.data, lam)
    assert result.objective == pytest.approx(expected, abs=1e-9)
    assert pruned.objective == pytest.approx(expected, abs=1e-9)
    # the surrogate on the training rows, by the model's own routing, is the objective's
    assert pruned.error_term_on(X, y) == pytest.approx(pruned.error_term, abs=1e-12)
    assert pruned.feature_cost(X).mean() == pytest.approx(pruned.cost_term, abs=1e-9)


# ------------------------------------------------------------------------ the CLI
@pytest.fixture
def cli_files(tmp_path, monkeypatch):
    sio = pytest.importorskip("skops.io", reason="skops: the optional extra odtkit[skops] (in dev)")
    X, y = _issue_table(n=200)
    frame = X.assign(y=y)
    frame.to_csv(tmp_path / "ab.csv", index=False)
    frame[["b", "a", "y"]].to_csv(tmp_path / "ba.csv", index=False)
    frame.rename(columns={"a": "c"}).to_csv(tmp_path / "renamed.csv", index=False)
    frame.assign(id=np.arange(len(frame)))[["id", "b", "a", "y"]].to_csv(
        tmp_path / "extra.csv", index=False
    )
    holes = _with_nan(X).assign(y=y)
    holes.to_csv(tmp_path / "blank.csv", index=False)  # NaN is written as a blank cell
    frame.assign(b=frame.b.where(frame.index != 3, np.inf)).to_csv(
        tmp_path / "inf.csv", index=False
    )
    named = RandomForestClassifier(6, max_depth=5, random_state=0).fit(X, y)
    (tmp_path / "named.skops").write_bytes(sio.dumps(named))
    with_nan = RandomForestClassifier(6, max_depth=5, random_state=0).fit(holes[["a", "b"]], y)
    (tmp_path / "nan.skops").write_bytes(sio.dumps(with_nan))
    monkeypatch.chdir(tmp_path)
    return {"named": named, "nan": with_nan, "X": X, "y": y, "holes": holes}


def _run(argv, capsys):
    capsys.readouterr()
    code = main(argv)
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["named.skops", "renamed.csv"], "DATA: renamed.csv has no column a, which the forest"),
        (["named.skops", "inf.csv"], "X column 'b' has 1 infinite value"),
        (["named.skops", "ab.csv", "--label", "a"], "--label 'a' is a feature the forest"),
        (["named.skops", "extra.csv", "--costs", "id=2"], "--costs names 'id', which is not a"),
    ],
)
def test_cli_prune_refuses_in_one_line(cli_files, capsys, argv, says):
    code, out = _run(["prune", *argv, "--lam", "0"], capsys)
    assert code == 2
    assert says in out.err and len(out.err.strip().splitlines()) == 1, out.err


def test_cli_prune_takes_a_named_forests_columns_by_name(cli_files, capsys):
    results = {}
    for table in ("ab", "ba", "extra"):
        code, out = _run(["prune", "named.skops", f"{table}.csv", "--lam", "0", "--json"], capsys)
        assert code == 0, out.err
        results[table] = json.loads(out.out)
    X, y = cli_files["X"], cli_files["y"]
    expected = prune(cli_files["named"], X, y, lam=0.0)
    for table, payload in results.items():
        assert payload["objective"] == pytest.approx(expected.objective), table
        assert payload["train_accuracy"] == pytest.approx(expected.model.score(X, y)), table
    assert results["extra"]["ignored_columns"] == ["id"]
    assert "ignored_columns" not in results["ab"]


def test_cli_prune_reads_blank_cells_as_missing_values(cli_files, capsys):
    code, out = _run(["prune", "nan.skops", "blank.csv", "--lam", "0.01", "--json"], capsys)
    assert code == 0, out.err
    payload = json.loads(out.out)
    holes = cli_files["holes"]
    assert holes[["a", "b"]].isna().any(axis=1).sum() > 50
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the API sees the same table: no warning either
        expected = prune(cli_files["nan"], holes[["a", "b"]], cli_files["y"], lam=0.01)
    assert payload["objective"] == pytest.approx(expected.objective)
    assert payload["train_accuracy"] == pytest.approx(
        expected.model.score(holes[["a", "b"]], cli_files["y"])
    )

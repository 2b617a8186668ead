"""Side constraints at every door (docs/constraints.md §4): Task/solve, compare, the estimator
and the CLI carry each kind of the vocabulary to the brute-force oracle's optimum, the search
sits out (with its reason) where it cannot certify them, raw columns are named as such, and no
door silently ignores a constraint: for every kind, a constraint the unconstrained optimum
breaks (so ignoring it would show) is met at the constrained optimum through each door."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtkit import Fairness, OptimalTreeClassifier, Status, Task, compare, solve
from odtkit.cli import main
from odtkit.constraints import (
    ClassRecall,
    FalsePositiveRate,
    FeatureBudget,
    ForbidFeatures,
    MaxLeaves,
    MinLeafSupport,
    Predict,
    RequireFeatures,
    effective_splits,
    resolve,
)
from odtkit.testing import brute_force_constrained_tree, random_dataset

TOL = 1e-6
LAM = 0.02
DEPTH = 2
#: every MIP that states the problem exactly, and the search
METHODS = ["dp", "rbinoct", "flowoct", "pathoct"]

# --- the walk: one binding constraint of every kind -------------------------------------------

#: 12 rows, 3 binary features: the unconstrained optimum has 3 leaves, tests x0 and x2 (twice
#: in all), misclassifies rows 4 and 5, has recall 7/8 and false positive rate 1/4 on class 1
DATA = random_dataset(0, 12, 3, 2, False)
BEST, BEST_VALUE = brute_force_constrained_tree(DATA, [], lam=LAM, max_depth=DEPTH)


def _binding() -> dict[str, tuple[object, str | None]]:
    """Per kind, a constraint the unconstrained optimum breaks, and its CLI text (None:
    Fairness, which the CLI states with --fairness)."""
    assert BEST is not None
    used = sorted(set(effective_splits(BEST, DATA.X)))
    unused = [j for j in range(DATA.n_features) if j not in used]
    names = DATA.feature_names
    leaf_weights = np.bincount(BEST.apply(DATA.X), weights=DATA.weights)
    wrong = int(np.flatnonzero(BEST.predict(DATA.X) != DATA.y)[0])
    label = int(DATA.y[wrong])
    support = float(leaf_weights[leaf_weights > 0].min()) + 1
    protected = DATA.X[:, unused[0]]
    return {
        "forbid_features": (ForbidFeatures([names[used[0]]]), f"forbid={names[used[0]]}"),
        "require_features": (RequireFeatures([names[unused[0]]]), f"require={names[unused[0]]}"),
        "max_leaves": (MaxLeaves(BEST.n_leaves - 1), f"max-leaves={BEST.n_leaves - 1}"),
        "min_leaf_support": (MinLeafSupport(weight=support), f"min-leaf-weight={support:g}"),
        "feature_budget": (FeatureBudget(1, 1, per="feature"), "max-features=1"),
        "feature_budget_split": (FeatureBudget(1, 1, per="split"), "max-splits=1"),
        "class_recall": (ClassRecall(1, at_least=1.0), "recall:1>=1"),
        "false_positive_rate": (FalsePositiveRate(1, at_most=0.0), "fpr:1<=0"),
        "predict": (Predict([wrong], label), f"predict:{wrong}={label}"),
        "fairness": (Fairness("sp", protected=protected, delta=0.05), None),
    }


BINDING = _binding()


def test_the_walk_covers_the_whole_vocabulary():
    import odtkit.constraints as vocabulary

    kinds = {getattr(c, "kind", "fairness") for c, _ in BINDING.values()}
    every = {
        getattr(vocabulary, name).kind
        for name in vocabulary.__all__
        if isinstance(getattr(vocabulary, name), type)
        and issubclass(getattr(vocabulary, name), vocabulary.Constraint)
        and getattr(vocabulary, name) is not vocabulary.Constraint
    }
    assert every | {"fairness"} == kinds


@pytest.fixture(scope="module")
def optima():
    """The constrained oracle per kind: feasible, and strictly worse than the unconstrained
    optimum (so a door that dropped the constraint would return a better objective)."""
    out = {}
    for kind, (constraint, _) in BINDING.items():
        assert resolve([constraint], DATA).violations(BEST, DATA), kind
        tree, value = brute_force_constrained_tree(DATA, [constraint], lam=LAM, max_depth=DEPTH)
        assert tree is not None, kind
        assert value > BEST_VALUE + 1e-9, kind
        out[kind] = value
    return out


@pytest.mark.parametrize("kind", list(BINDING))
def test_solve_meets_every_kind_at_the_oracle(kind, optima):
    constraint, _ = BINDING[kind]
    task = Task.from_dataset(DATA, constraints=[constraint])
    result = solve(task, lam=LAM, max_depth=DEPTH)  # method "auto"
    assert result.status == Status.OPTIMAL, result.message
    assert result.objective == pytest.approx(optima[kind], abs=TOL)
    assert task.constraints is not None
    assert task.constraints.violations(result.model, DATA) == []
    if result.method != "dp":  # the search sat out: the message says which MIP and why
        assert result.message.startswith("method auto: the search sat out")


@pytest.mark.parametrize("kind", list(BINDING))
def test_compare_meets_every_kind_at_the_oracle(kind, optima):
    constraint, _ = BINDING[kind]
    table = compare(
        DATA, lam=LAM, max_depth=DEPTH, methods=METHODS, constraints=[constraint], time_limit=60
    )
    for run in table.runs:
        if run.sat_out:
            assert run.method == "dp" and run.status == Status.NOT_RUN
            assert run.result.message == f"sat out: {run.sat_out}"
            assert run.agrees is None
            continue
        assert run.status == Status.OPTIMAL, (run.method, run.result.message)
        assert run.objective == pytest.approx(optima[kind], abs=TOL), run.method
        assert run.agrees is True
    assert table.agree
    assert table.task is not None and table.task.constraints is not None


@pytest.mark.parametrize("kind", list(BINDING))
def test_the_estimator_meets_every_kind_at_the_oracle(kind, optima):
    constraint, _ = BINDING[kind]
    frame = pd.DataFrame(DATA.X, columns=list(DATA.feature_names))
    clf = OptimalTreeClassifier(
        lam=LAM, max_depth=DEPTH, method="auto", constraints=[constraint], time_limit=None
    )
    clf.fit(frame, DATA.y)
    assert clf.status_ == Status.OPTIMAL
    assert clf.objective_ == pytest.approx(optima[kind], abs=TOL)


@pytest.mark.parametrize("kind", [k for k, (_, text) in BINDING.items() if text is not None])
def test_the_cli_fit_meets_every_kind_at_the_oracle(kind, optima, tmp_path, capsys):
    _, text = BINDING[kind]
    assert text is not None
    path = tmp_path / "walk.csv"
    frame = pd.DataFrame(DATA.X, columns=list(DATA.feature_names))
    frame["label"] = DATA.y
    frame.to_csv(path, index=False)
    argv = ["fit", str(path), "--max-depth", str(DEPTH), "--lam", str(LAM)]
    code = main([*argv, "--constraint", text, "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0, payload
    assert payload["status"] == "optimal"
    assert payload["objective"] == pytest.approx(optima[kind], abs=TOL)


# --- the search sits out, with its reason -------------------------------------------------


def test_the_search_sits_out_where_it_cannot_certify_and_says_why(optima):
    recall, _ = BINDING["class_recall"]
    task = Task.from_dataset(DATA, constraints=[recall])
    with pytest.raises(ValueError, match="method 'dp' cannot certify the constraints") as info:
        solve(task, method="dp", lam=LAM, max_depth=DEPTH)
    assert "recall" in str(info.value)
    table = compare(task, lam=LAM, max_depth=DEPTH, methods=["dp", "pathoct"])
    frame = table.to_frame()
    dp = frame[frame["method"] == "dp"].iloc[0]
    assert dp["status"] == "not_run" and dp["message"].startswith("sat out: ")
    assert "recall" in dp["message"]
    assert "dp sat out (" in table.reading()
    # an explicit search from the estimator is refused naming the constraint
    frame_x = pd.DataFrame(DATA.X, columns=list(DATA.feature_names))
    with pytest.raises(ValueError, match="cannot certify"):
        OptimalTreeClassifier(max_depth=DEPTH, constraints=[recall]).fit(frame_x, DATA.y)


def test_the_exact_search_sits_out_and_the_table_is_binarized():
    frame, y = _raw_table(0)
    task = Task.from_table(frame, y, thresholds="all", constraints=[MaxLeaves(2)])
    assert task.dataset is not None and task.constraints is not None  # binarized here
    with pytest.raises(ValueError, match="takes no side constraint"):
        solve(task, method="exact", lam=LAM, max_depth=DEPTH)
    table = compare(
        frame,
        y=y,
        lam=LAM,
        max_depth=DEPTH,
        methods=["exact", "pathoct"],
        constraints=[MaxLeaves(2)],
    )
    exact = next(r for r in table.runs if r.method == "exact")
    assert exact.sat_out and exact.status == Status.NOT_RUN


# --- raw tables: names of raw columns, the oracle on the binarization ----------------------


def _raw_table(seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 12
    frame = pd.DataFrame(
        {
            "num": rng.normal(size=n).round(2),
            "cat": rng.choice(["a", "b", "c"], n),
        }
    )
    y = ((frame["num"] > 0) ^ (frame["cat"] == "a")).to_numpy().astype(int)
    y[rng.integers(0, n)] ^= 1  # one noisy row
    return frame, y


def test_task_names_raw_columns():
    frame, y = _raw_table(1)
    task = Task.from_table(frame, y, thresholds=1, constraints=[ForbidFeatures(["cat"])])
    assert task.dataset is not None and task.constraints is not None
    names = task.dataset.feature_names
    assert task.constraints.forbidden.tolist() == [n.startswith("cat") for n in names]
    with pytest.raises(ValueError, match="'nope' is neither a feature nor a column"):
        Task.from_table(frame, y, constraints=[ForbidFeatures(["nope"])])
    with pytest.raises(TypeError, match="is not a constraint"):
        Task.from_table(frame, y, constraints=["forbid=cat"])
    assert Task.from_table(frame, y).constraints is None
    # constrained() restates them; None drops them
    again = task.constrained([MaxLeaves(2)])
    assert again.constraints is not None and again.constraints.kinds == ("max_leaves",)
    assert task.constrained(None).constraints is None


def _raw_constraint(draw, kind):
    if kind == "forbid":
        return ForbidFeatures([draw(st.sampled_from(["num", "cat"]))])
    if kind == "require":
        return RequireFeatures([draw(st.sampled_from(["num", "cat"]))])
    if kind == "features":
        return FeatureBudget({"num": 1, "cat": draw(st.sampled_from([1, 2]))}, 1, per="feature")
    if kind == "leaves":
        return MaxLeaves(draw(st.integers(1, 3)))
    if kind == "support":
        return MinLeafSupport(share=draw(st.sampled_from([0.2, 0.3, 0.5])))
    return ClassRecall(draw(st.sampled_from([0, 1])), at_least=draw(st.sampled_from([0.8, 1.0])))


@pytest.mark.filterwarnings("ignore::odtkit.core.TrivialAnswerWarning")  # a forbidden column
@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_solve_on_a_raw_table_reaches_the_oracle(data):
    seed = data.draw(st.integers(0, 50))
    kinds = data.draw(
        st.lists(
            st.sampled_from(["forbid", "require", "features", "leaves", "support", "recall"]),
            min_size=1,
            max_size=2,
            unique=True,
        )
    )
    constraints = [_raw_constraint(data.draw, k) for k in kinds]
    frame, y = _raw_table(seed)
    task = Task.from_table(frame, y, thresholds=1, constraints=constraints)
    assert task.dataset is not None and task.constraints is not None
    assert task.dataset.n_features <= 4  # the oracle's reach at depth 2
    tree, value = brute_force_constrained_tree(
        task.dataset, task.constraints, lam=LAM, max_depth=DEPTH
    )
    result = solve(task, lam=LAM, max_depth=DEPTH)
    if tree is None:
        assert result.status == Status.INFEASIBLE and not result.has_model
        return
    assert result.status == Status.OPTIMAL, result.message
    assert result.objective == pytest.approx(value, abs=TOL)
    assert task.constraints.violations(result.model, task.dataset) == []


def test_an_infeasible_combination_is_a_clear_status():
    task = Task.from_dataset(DATA, constraints=[RequireFeatures(["x1", "x2"]), MaxLeaves(2)])
    result = solve(task, lam=LAM, max_depth=DEPTH)
    assert result.status == Status.INFEASIBLE and not result.has_model
    assert "max_leaves" in result.message


def test_a_returned_tree_that_breaks_a_constraint_is_an_error(monkeypatch):
    # a solver that returned the unconstrained optimum under MaxLeaves(1) would be caught
    import odtkit.task as task_module

    task = Task.from_dataset(DATA, constraints=[MaxLeaves(1)])
    fake = solve(Task.from_dataset(DATA), lam=LAM, max_depth=DEPTH)
    monkeypatch.setattr(task_module, "_on_dataset", lambda *a, **k: fake)
    result = solve(task, lam=LAM, max_depth=DEPTH)
    assert result.status == Status.ERROR and result.certificate is None
    assert "breaks a side constraint: max_leaves" in result.message


# --- the estimator's parameter and the CLI's flag -------------------------------------------


def test_the_estimator_keeps_constraints_as_a_parameter():
    from sklearn.base import clone

    rules = [MaxLeaves(2), ForbidFeatures(["x0"])]
    clf = OptimalTreeClassifier(constraints=rules, method="auto")
    assert clf.get_params()["constraints"] is rules
    copy = clone(clf)
    assert copy.get_params()["constraints"] == rules
    frame = pd.DataFrame(DATA.X, columns=list(DATA.feature_names))
    with pytest.raises(TypeError, match="is not a constraint"):
        OptimalTreeClassifier(constraints=["max-leaves=2"]).fit(frame, DATA.y)
    with pytest.raises(ValueError, match="'zz' is neither"):
        OptimalTreeClassifier(constraints=[ForbidFeatures(["zz"])]).fit(frame, DATA.y)


def test_the_cli_names_raw_columns_and_reports_bad_text(tmp_path, capsys):
    frame, y = _raw_table(2)
    frame["label"] = y
    path = tmp_path / "raw.csv"
    frame.to_csv(path, index=False)
    common = ["--max-depth", "2", "--lam", str(LAM), "--thresholds", "1"]
    code = main(["fit", str(path), *common, "--constraint", "forbid=num", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and payload["status"] == "optimal"
    assert "num" not in json.dumps(payload["tree"])
    code = main(["fit", str(path), *common, "--constraint", "maxleaves=2"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown key 'maxleaves'" in err and "--constraint" in err
    code = main(["fit", str(path), *common, "--constraint", "forbid=nope"])
    assert code == 2 and "'nope' is neither" in capsys.readouterr().err
    code = main(["fit", str(path), *common, "--method", "dp", "--constraint", "recall:1>=0.9"])
    assert code == 2 and "--method dp cannot certify" in capsys.readouterr().err


def test_the_cli_compare_carries_constraints_and_shows_the_search_sitting_out(
    tmp_path, capsys, optima
):
    path = tmp_path / "walk.csv"
    frame = pd.DataFrame(DATA.X, columns=list(DATA.feature_names))
    frame["label"] = DATA.y
    frame.to_csv(path, index=False)
    argv = ["compare", "--dataset", str(path), "--max-depth", "2", "--lam", str(LAM)]
    code = main([*argv, "--methods", "dp,pathoct", "--constraint", "recall:1>=1", "--json"])
    payload = json.loads(capsys.readouterr().out)
    rows = {row["method"]: row for row in payload["rows"]}
    assert code == 0
    assert rows["dp"]["status"] == "not_run" and rows["dp"]["message"].startswith("sat out")
    assert rows["pathoct"]["objective"] == pytest.approx(optima["class_recall"], abs=TOL)
    code = main([*argv, "--methods", "dp,pathoct", "--constraint", "recall:1>=1"])
    out = capsys.readouterr().out
    assert "constraints: recall[1]>=1" in out and "dp sat out" in out

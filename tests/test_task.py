"""The one front door (issue 38 item 1): odtkit.Task, odtkit.solve and the typed certificate.

* the certificate is decided in one place (``Thresholds.certificate``) and the estimators,
  ``odtkit fit`` and ``compare`` agree on it: a numeric table with guessed thresholds, N per
  column, every threshold (the exact search), a table of 0/1 columns used as they are, and a
  bundled (pre-binarized) dataset;
* ``odtkit fit --time-limit`` and ``fit(time_limit=)`` both charge binarization to the limit;
* the deprecated estimator settings warn and give the same tree as their ``thresholds``.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import odtkit
from odtkit import Certificate, OptimalTreeClassifier, Task, compare, solve
from odtkit._limits import active_deadline
from odtkit.cli import main
from odtkit.datasets import Binarizer, Thresholds, load

LAM = 0.02


def _numeric(seed: int = 0, n: int = 60) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n).round(2), "b": rng.integers(0, 25, n).astype(float)})
    y = np.where((X["a"] > 0.3) ^ (X["b"] > 12), "yes", "no")
    flip = rng.random(n) < 0.1
    y[flip] = np.where(y[flip] == "yes", "no", "yes")
    return X, y


def _binary(seed: int = 1, n: int = 60) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.integers(0, 2, (n, 3)), columns=["p", "q", "r"])
    y = np.where(X["p"].to_numpy() ^ X["q"].to_numpy(), "yes", "no")
    return X, y


@pytest.mark.parametrize(
    ("table", "thresholds", "expected"),
    [
        (_numeric, "guess", Certificate.GUESSED_THRESHOLDS),
        (_numeric, 3, Certificate.BINARIZATION),
        (_numeric, "all", Certificate.ALL_THRESHOLDS),
        # every threshold of a 0/1 column is its one split, whatever the policy
        (_binary, "guess", Certificate.ALL_THRESHOLDS),
        (_binary, 3, Certificate.ALL_THRESHOLDS),
    ],
)
def test_the_api_the_cli_and_compare_give_one_certificate(
    table, thresholds, expected, tmp_path, capsys
):
    X, y = table()
    est = OptimalTreeClassifier(lam=LAM, max_depth=2, thresholds=thresholds).fit(X, y)
    assert est.certified_ and est.certificate_ is expected
    assert est.result_.certificate is expected

    path = tmp_path / "table.csv"
    X.assign(outcome=y).to_csv(path, index=False)
    argv = ["fit", str(path), "--max-depth", "2", "--lam", str(LAM), "--json"]
    assert main([*argv, "--thresholds", str(thresholds)]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["certificate"] == expected
    assert payload["objective"] == pytest.approx(est.objective_)

    # compare: its dp runs on the policy's binarization ("all": every midpoint, the same
    # problem as the exact search)
    comparison = compare(X, y=y, lam=LAM, max_depth=2, methods="dp", thresholds=thresholds)
    assert comparison.runs[0].certificate == expected
    assert comparison.runs[0].objective == pytest.approx(est.objective_)

    # the one front door itself
    result = solve(Task.from_table(X, y, thresholds=thresholds), lam=LAM, max_depth=2)
    assert result.certificate is expected
    assert result.objective == pytest.approx(est.objective_)


def test_a_bundled_dataset_is_certified_over_its_binarization(capsys):
    data = load("monk1")
    result = solve(Task.from_dataset(data), lam=LAM, max_depth=2)
    assert result.certificate is Certificate.BINARIZATION
    assert main(["fit", "monk1", "--max-depth", "2", "--lam", str(LAM), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["certificate"] == "binarization"
    assert payload["objective"] == pytest.approx(result.objective)
    comparison = compare("monk1", lam=LAM, max_depth=2, methods="dp")
    assert comparison.runs[0].certificate == "binarization"
    # the same rows given to the estimator as a 0/1 table are a table, not a dataset: every
    # threshold of a 0/1 column is its one split
    est = OptimalTreeClassifier(lam=LAM, max_depth=2).fit(data.X.astype(int), data.y)
    assert est.certificate_ == "all thresholds"
    assert est.objective_ == pytest.approx(result.objective)


def test_the_exact_search_is_certified_over_every_threshold(tmp_path, capsys):
    X, y = _numeric(2)
    task = Task.from_table(X, y, thresholds="all")
    assert task.dataset is None  # the exact search binarizes the table itself
    result = solve(task, lam=LAM, max_depth=2)
    assert result.method == "exact" and result.certificate is Certificate.ALL_THRESHOLDS
    data, binarizer = task.features_of(result)
    assert binarizer is result.binarizer and data.n_samples == len(y)
    path = tmp_path / "table.csv"
    X.assign(outcome=y).to_csv(path, index=False)
    argv = ["fit", str(path), "--max-depth", "2", "--lam", str(LAM), "--json"]
    assert main([*argv, "--method", "exact"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["certificate"] == "all thresholds"
    assert payload["objective"] == pytest.approx(result.objective)
    comparison = compare(X, y=y, lam=LAM, max_depth=2, methods="exact")
    assert comparison.runs[0].certificate == "all thresholds"


def test_the_certificate_is_a_str_enum():
    assert Certificate("guessed thresholds") is Certificate.GUESSED_THRESHOLDS
    assert Certificate.BINARIZATION == "binarization"
    assert odtkit.Certificate is Certificate and odtkit.results.Certificate is Certificate
    assert json.dumps({"c": Certificate.ALL_THRESHOLDS}) == '{"c": "all thresholds"}'


# -- one deadline ------------------------------------------------------------------------------


@pytest.fixture
def binarizing_uses_up_the_limit(monkeypatch):
    """Binarizer.fit that checks it runs charged to a finite deadline, then uses it all up (as
    a slow threshold guess would) and says it was cut short: no timing involved."""
    real = Binarizer.fit
    seen = []

    def fit(self, X, y=None, sample_weight=None):
        out = real(self, X, y, sample_weight)
        deadline = active_deadline()
        seen.append(deadline is not None and deadline.limited)
        if deadline is not None and deadline.limited:
            deadline.at = deadline.start  # nothing left
            self.truncated_ = True
        return out

    monkeypatch.setattr(Binarizer, "fit", fit)
    return seen


def test_the_cli_and_the_estimator_both_charge_binarization_to_the_limit(
    binarizing_uses_up_the_limit, tmp_path, capsys
):
    X, y = _numeric(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", odtkit.LimitReachedWarning)
        est = OptimalTreeClassifier(lam=LAM, max_depth=2, time_limit=5, thresholds="guess")
        est.fit(X, y)
    assert binarizing_uses_up_the_limit == [True]
    assert est.status_ == "time_limit" and est.certificate_ is None
    assert "binarization" in est.result_.message

    path = tmp_path / "table.csv"
    X.assign(outcome=y).to_csv(path, index=False)
    argv = ["fit", str(path), "--max-depth", "2", "--time-limit", "5", "--thresholds", "guess"]
    code = main([*argv, "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert binarizing_uses_up_the_limit == [True, True]
    assert payload["status"] == "time_limit" and payload["certificate"] is None
    assert code == 3 and "binarization" in payload["message"]


# -- the deprecated estimator settings ---------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"max_thresholds": 3}, Thresholds("guess", max_per_column=3)),
        ({"guess_thresholds": 10}, Thresholds("guess", rounds=10)),
        ({"guess_thresholds": None}, Thresholds("all", exact_search=False)),
        ({"max_thresholds": 3, "guess_thresholds": None}, 3),
        ({"guess_thresholds": 40}, "guess"),
    ],
)
def test_deprecated_threshold_settings_warn_and_give_the_same_tree(old, new):
    X, y = _numeric(5, 40)
    with pytest.warns(FutureWarning, match="deprecated.*use thresholds="):
        before = OptimalTreeClassifier(lam=LAM, max_depth=2, **old).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        after = OptimalTreeClassifier(lam=LAM, max_depth=2, thresholds=new).fit(X, y)
    assert before.tree_ == after.tree_
    assert before.objective_ == pytest.approx(after.objective_)
    assert before.certificate_ == after.certificate_
    assert before.feature_names_ == after.feature_names_
    # get_params round trips keep the old spelling (scikit-learn clones it as it is)
    assert before.get_params()[next(iter(old))] == next(iter(old.values()))


def test_thresholds_with_a_deprecated_setting_is_refused_naming_both():
    X, y = _numeric(6, 30)
    with pytest.raises(ValueError, match="max_thresholds"):
        OptimalTreeClassifier(thresholds=3, max_thresholds=2).fit(X, y)


def test_the_policy_parses_once_and_refuses_by_name():
    assert Thresholds.parse(None) == Thresholds("guess")
    assert Thresholds.parse(" ALL ").choice == "all"
    assert Thresholds(4).binarizer_options() == {"max_thresholds": 4, "guess_thresholds": None}
    assert Thresholds("guess", rounds=7).binarizer_options() == {
        "max_thresholds": None,
        "guess_thresholds": 7,
    }
    for bad in ("some", 0, True, 2.5, -1):
        with pytest.raises(ValueError, match="thresholds must be"):
            Thresholds(bad)
    with pytest.raises(ValueError, match="rounds"):
        Thresholds("guess", rounds=10**6)
    from odtkit.datasets._binarizer import MAX_GUESS_ROUNDS
    from odtkit.datasets._thresholds import _MAX_ROUNDS

    assert _MAX_ROUNDS == MAX_GUESS_ROUNDS


def test_a_mip_is_warm_started_alike_by_the_cli_and_the_estimator(tmp_path, capsys):
    """One path: ``odtkit fit --method M`` and ``fit(method=M)`` both warm-start the MIP by the
    search core, so they give the same answer, status, bound and certificate."""
    X, y = _numeric(3, n=40)
    est = OptimalTreeClassifier(lam=LAM, max_depth=2, method="rbinoct", thresholds=3).fit(X, y)
    path = tmp_path / "table.csv"
    X.assign(outcome=y).to_csv(path, index=False)
    argv = ["fit", str(path), "--max-depth", "2", "--lam", str(LAM), "--json"]
    assert main([*argv, "--thresholds", "3", "--method", "rbinoct"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["status"] == est.status_ == "optimal"
    assert payload["certificate"] == est.certificate_ == Certificate.BINARIZATION
    assert payload["objective"] == pytest.approx(est.objective_)
    assert payload["lower_bound"] == pytest.approx(est.lower_bound_, abs=1e-6)
    assert est.result_.stats["warm_start"] is True


def test_categorical_columns_are_categories_in_the_binarization_and_the_exact_search():
    """A column of numeric codes named ``categorical`` gets one feature per value (no
    threshold), whether the task is binarized or the exact search reads the table."""
    rng = np.random.default_rng(5)
    ward = rng.choice([3, 7, 11, 20], 120)
    X = pd.DataFrame({"ward": ward.astype(float), "age": rng.integers(18, 80, 120).astype(float)})
    # wards 7 and 20 (not an interval of codes) say yes: two category tests (3 leaves) tell
    # them apart, where thresholds on the codes need 4 leaves
    y = np.where(np.isin(ward, [7, 20]), "yes", "no")

    task = Task.from_table(X, y, categorical=["ward"])
    kinds = {s.kind for s in task.binarizer.get_feature_specs() if s.source == "ward"}
    assert kinds == {"category"}
    direct = Binarizer(categorical=["ward"], guess_thresholds=40).fit(X, y)
    assert list(direct.get_feature_names_out()) == list(task.binarizer.get_feature_names_out())
    result = solve(task, lam=LAM, max_depth=2)
    assert result.objective == pytest.approx(3 * LAM)  # no mistake
    codes = solve(Task.from_table(X, y), lam=LAM, max_depth=2)
    assert codes.objective == pytest.approx(4 * LAM)

    exact = Task.from_table(X, y, thresholds="all", categorical=["ward"])
    result = solve(exact, lam=LAM, max_depth=2)
    assert result.method == "exact" and result.certificate is Certificate.ALL_THRESHOLDS
    _, binarizer = exact.features_of(result)
    assert {s.kind for s in binarizer.get_feature_specs() if s.source == "ward"} == {"category"}
    assert result.objective == pytest.approx(3 * LAM)


_CLOCK_AFTER_IMPORTS = """
import sys
import numpy as np
import pandas as pd
import odtkit._limits as limits
from odtkit import OptimalTreeClassifier, Task

seen = []
real = limits.Deadline.__init__


def recording(self, *args, **kwargs):
    seen.append("sklearn.ensemble" in sys.modules)
    real(self, *args, **kwargs)


limits.Deadline.__init__ = recording
rng = np.random.default_rng(0)
X = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
y = (X["a"] > 0).astype(int).to_numpy()
assert "sklearn.ensemble" not in sys.modules, "imported before the fit: the test shows nothing"
# the default fit runs the exact search, which needs no guess (it asks for one only after a
# limit stopped it): gradient boosting is not imported at all
OptimalTreeClassifier(lam=0.02, max_depth=2, time_limit=30).fit(X, y)
exact = "sklearn.ensemble" not in sys.modules
seen.clear()
OptimalTreeClassifier(lam=0.02, max_depth=2, time_limit=30, thresholds="guess").fit(X, y)
first = seen[0]
del sys.modules["sklearn.ensemble"]
seen.clear()
Task.from_table(X, y, thresholds="guess", time_limit=30)
print(exact, first, seen[0])
"""


def test_a_fits_clock_starts_after_the_imports_it_needs():
    """The first fit in a process imports scikit-learn's gradient boosting (the threshold
    guess) before its time limit's clock starts, at both doors (issue 41: imports are the
    process's cost, not the fit's), and the default fit (the exact search) does not import it
    at all; checked in a fresh interpreter, by what is imported when the clock is made, not by
    timing."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _CLOCK_AFTER_IMPORTS],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True"]


def test_the_exact_searchs_binarization_lists_only_what_its_tree_reads(tmp_path, capsys):
    """Issue 41: a column with blank cells that the tree never tests gives no "is missing"
    feature in the exact search's binarization, and ``odtkit fit`` says that the certificate
    covers every threshold of the columns, the binary features being the tree's own."""
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"a": rng.normal(size=120).round(2), "b": rng.normal(size=120).round(2)})
    X.loc[rng.random(120) < 0.1, "b"] = np.nan
    y = np.where(X["a"] > 0.2, "yes", "no")
    task = Task.from_table(X, y, thresholds="all")
    result = solve(task, lam=LAM, max_depth=2)
    assert result.tree.features_used() and result.objective == pytest.approx(2 * LAM)
    names = list(result.binarizer.get_feature_names_out())
    assert all(name.startswith("a") for name in names), names
    # rows with blanks in the untested column are read as before
    blanks = X.assign(b=np.nan)
    assert (
        result.tree.predict(result.binarizer.transform(blanks))
        == result.tree.predict(result.binarizer.transform(X))
    ).all()

    # a column the tree tests keeps its missing-value variants
    y2 = np.where(X["b"].isna() | (X["b"] > 0.5), "yes", "no")
    tested = solve(Task.from_table(X, y2, thresholds="all"), lam=LAM, max_depth=2)
    assert any(s.source == "b" for s in tested.binarizer.get_feature_specs())
    assert (np.asarray(tested.tree.predict(tested.binarizer.transform(X))) == (y2 == "yes")).all()

    path = tmp_path / "table.csv"
    X.assign(outcome=y).to_csv(path, index=False)
    argv = ["fit", str(path), "--max-depth", "2", "--lam", str(LAM), "--thresholds", "all"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    said = "2 columns searched over every threshold (the tree's binarization: 1 binary feature)"
    assert said in out

"""One registry per vocabulary (issue 26, point 3).

Method names live in :data:`odtkit.methods.METHODS`, backend names in
:func:`odtkit.solvers.registered_backends`, statuses in :class:`odtkit.Status`. Every list, help
text, ``choices=``, parameter constraint and docstring that names them reads the registry, so a
new entry reaches each of them; these tests fail when a registered name is missing from one, or
when a new hand-written list of names appears in ``src/``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.estimator_checks import check_param_validation

from odtkit import cli
from odtkit.cli import _common
from odtkit.core import search as core_search
from odtkit.estimators import (
    FairTreeClassifier,
    OptimalRuleListClassifier,
    OptimalTreeClassifier,
    OptimalTreeClassifierCV,
)
from odtkit.formulations import EXACT, Formulation
from odtkit.methods import METHODS, SEARCH_METHODS, method_names
from odtkit.results import Status
from odtkit.solvers import registered_backends

SRC = Path(__file__).resolve().parents[1] / "src" / "odtkit"
ESTIMATORS = [
    OptimalTreeClassifier(),
    OptimalTreeClassifierCV(),
    FairTreeClassifier(),
    OptimalRuleListClassifier(),
]


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        cli.main(argv)
    return capsys.readouterr().out


# --- the CLI ----------------------------------------------------------------------------------


def test_cli_help_lists_every_method_and_backend(capsys):
    fit = _help(["fit", "--help"], capsys)
    compare = _help(["compare", "--help"], capsys)
    for text in (fit, compare):
        for name in METHODS:
            assert re.search(rf"^\s*{name}\s", text, re.M), f"{name} missing from the help"
        for backend in registered_backends():
            assert re.search(rf"\b{backend}\b", text), f"backend {backend} missing from the help"
    fair = re.search(r"fairness \(methods ([^)]*)\)", compare)
    assert fair is not None
    assert fair.group(1).split(", ") == list(method_names(fair=True))


def test_exit_codes_cover_every_status():
    codes = {status: _common._exit_code(status) for status in Status}
    assert codes[Status.OPTIMAL] == _common.EXIT_OPTIMAL
    assert codes[Status.INTERRUPTED] == _common.EXIT_INTERRUPTED
    for status in Status:
        if status.stopped_early and status is not Status.INTERRUPTED:
            assert codes[status] == _common.EXIT_LIMIT, status  # every limit, read from the enum
    assert codes[Status.FEASIBLE] == _common.EXIT_LIMIT
    for status in (Status.ERROR, Status.INFEASIBLE, Status.NOT_RUN):
        assert codes[status] == _common.EXIT_NO_ANSWER
    assert _common._exit_code("no such status") == _common.EXIT_NO_ANSWER


# --- the estimators ---------------------------------------------------------------------------


def _options(estimator: object, name: str) -> set[str]:
    (constraint,) = [
        c
        for c in estimator._parameter_constraints[name]  # type: ignore[attr-defined]
        if isinstance(c, StrOptions)
    ]
    return set(constraint.options)


def _doc_choices(doc: str | None, parameter: str) -> list[str]:
    match = re.search(rf"^\s*{parameter} : \{{([^}}]*)\}}", doc or "", re.M)
    assert match is not None, f"no {{...}} choices of {parameter} documented"
    return re.findall(r'"([^"]+)"', match.group(1))


@pytest.mark.parametrize(
    ("cls", "expected"),
    [
        (OptimalTreeClassifier, method_names(exact=True, raw=False)),
        (FairTreeClassifier, method_names(exact=True, fair=True, raw=False)),
    ],
)
def test_estimator_methods_are_the_registry_s(cls, expected):
    estimator = cls()
    # every method whose optimum is the stated problem (pathoct included), none other
    fair_only = cls is FairTreeClassifier
    assert expected == tuple(
        n
        for n, m in METHODS.items()
        if EXACT in m.properties and not m.raw and (m.fair or not fair_only)
    )
    assert "pathoct" in expected
    # OptimalTreeClassifier also takes "auto" (the search, or a MIP for side constraints)
    auto = {"auto"} if cls is OptimalTreeClassifier else set()
    assert _options(estimator, "method") == set(expected) | auto
    assert _doc_choices(cls.__doc__, "method") == list(expected)
    assert _options(estimator, "backend") == set(registered_backends())
    # the backends are documented once, by the registry's name (the fair one says "as in")
    doc = " ".join((OptimalTreeClassifier.__doc__ or "").split())
    assert 'backend : str, default="highs" MIP backend, a name of' in doc
    assert ":func:`odtkit.solvers.registered_backends`" in doc


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_parameter_constraints_cover_every_parameter(estimator):
    # scikit-learn's own check: a constraint per parameter, and a bad type or value of each is
    # refused by fit with a message naming the parameter
    check_param_validation(type(estimator).__name__, estimator)


def test_a_dp_fit_constructs_no_formulation(monkeypatch):
    built: set[str] = set()

    def subclasses(cls: type) -> list[type]:
        return [cls] + [s for c in cls.__subclasses__() for s in subclasses(c)]

    for cls in subclasses(Formulation):
        init = cls.__init__

        def counting(self, *args, _init=init, **kwargs):
            built.add(type(self).__name__)
            _init(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", counting)
    X = np.random.default_rng(0).integers(0, 2, size=(40, 4))
    y = X[:, 0] ^ X[:, 1]
    OptimalTreeClassifier(method="dp", max_depth=2).fit(X, y)
    FairTreeClassifier(method="dp", max_depth=2, delta=0.5).fit(X, y, sensitive=X[:, 3])
    assert built == set()
    METHODS["flowoct"].formulation()
    assert built == {"FlowOCT"}  # the probe does see a construction


@pytest.mark.parametrize("name", [n for n, m in METHODS.items() if m.is_formulation])
def test_declared_properties_are_the_formulation_s(name):
    method = METHODS[name]
    assert method.properties == method.formulation().properties


# --- no other list of names -------------------------------------------------------------------

BACKENDS = frozenset(registered_backends())
#: The hand-written lists that remain, each with why it is not the registry, and its check.
ALLOWED = {
    # the native core sits below the registry (odtkit.methods builds on it): its own names of
    # its searches, kept equal to the registry's search methods
    ("core/_binary.py", ("dp", "bnb")): lambda names: names == SEARCH_METHODS,
    # the methods search_tree accepts on a raw table: dp (run as the exact search) and exact
    ("core/search.py", ("dp", "exact")): lambda names: METHODS[names[1]].raw,
    # defaults: a choice among the registry's names, not a list of them
    ("cli/_compare.py", ("dp", "columns", "pathoct", "flowoct", "rbinoct")): lambda names: (
        set(names) <= set(METHODS)
    ),
    ("_compare.py", ("dp", "columns", "rbinoct", "flowoct")): lambda names: (
        set(names) <= set(METHODS)
    ),
    # solve(method="auto"): the exact MIPs that carry side constraints the search cannot, in
    # the order tried (a choice among the registry's names)
    ("task.py", ("columns", "pathoct", "flowoct")): lambda names: all(
        EXACT in METHODS[n].properties and not METHODS[n].is_search for n in names
    ),
}


def _name_lists() -> list[tuple[str, tuple[str, ...]]]:
    """Every literal tuple/list/set/dict-keys/comma-string in src of >= 2 method or backend
    names."""
    known = set(METHODS) | BACKENDS
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            items: list[object] = []
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                items = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            elif isinstance(node, ast.Dict):
                items = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
                items = [k for k in items if k in known]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                items = node.value.split(",") if "," in node.value else []
            names = tuple(str(i) for i in items)
            if len(names) >= 2 and all(isinstance(i, str) and i in known for i in items):
                found.append((path.relative_to(SRC).as_posix(), names))
    return found


def test_no_hand_written_list_of_names_remains():
    for place, names in _name_lists():
        check = ALLOWED.get((place, names))
        assert check is not None, (
            f"{place} lists names by hand: {names}; read odtkit.methods.METHODS or "
            "odtkit.solvers.registered_backends instead"
        )
        assert check(names), (place, names)


def test_the_search_core_documents_its_own_names():
    assert core_search.SEARCH_ALGORITHMS == SEARCH_METHODS
    assert tuple(core_search.BOUNDS) == SEARCH_METHODS
    assert _doc_choices(core_search.search_tree.__doc__, "method") == list(SEARCH_METHODS)


def test_docstrings_that_name_backends_name_every_one():
    # outside the solver package (whose modules speak of each other by name), a docstring that
    # names two backends is listing them: it must name every one, or the registry instead
    pattern = re.compile(r'``"(' + "|".join(map(re.escape, sorted(BACKENDS))) + r')"``')
    for path in sorted(SRC.rglob("*.py")):
        if path.parent.name == "solvers":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module)):
                doc = " ".join((ast.get_docstring(node) or "").split())
                named = set(pattern.findall(doc))
                if len(named) >= 2:
                    assert named == BACKENDS, (path.name, getattr(node, "name", ""), named)

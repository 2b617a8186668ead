"""The public API is exactly what ``__all__`` says, in every public package and module.

Public modules are discovered (every ``odtkit`` module with no ``_``-prefixed path component),
so a new module is covered the day it is added. Three promises are checked:

* every name in ``__all__`` resolves (lazily loaded names included) and appears once;
* every public class or function a module *defines*, and every public name a package's
  ``__init__`` imports from odtkit or defines (re-exports), is in its ``__all__``;
* a class or function a package re-exports from a public module is in that module's
  ``__all__`` too, so the two listings never disagree.

Imported helpers (``typing.Any``, ``numpy``), submodules bound as a side effect of importing
them, and type aliases (not classes or functions) are deliberately not required.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest

import odtkit

#: The packages and modules the documentation promises an ``__all__`` for; discovery must
#: find at least these (a guard against a discovery that silently finds nothing).
DOCUMENTED = {
    "odtkit",
    "odtkit.constraints",
    "odtkit.core",
    "odtkit.datasets",
    "odtkit.formulations",
    "odtkit.metrics",
    "odtkit.model",
    "odtkit.plot",
    "odtkit.pruning",
    "odtkit.solvers",
    "odtkit.task",
    "odtkit.testing",
}

#: Public-looking names that are implementation details, each with the reason it is not API.
NOT_API = {
    "odtkit.sweeping.run_task": "the executor entry point of sweep(); it takes a private _Task",
}


#: Old import paths kept for one release, each a module that re-exports from the new home with a
#: FutureWarning on import: old path -> the public package that now holds every name.
DEPRECATED_PATHS = {
    "odtkit.formulations.network": "odtkit.pruning",
    "odtkit.formulations.pruning": "odtkit.pruning",
}


def _is_public(qualified: str) -> bool:
    return not any(part.startswith("_") for part in qualified.split("."))


def _public_modules() -> dict[str, bool]:
    """Every public module's name -> whether it is a package."""
    found = {"odtkit": True}
    for info in pkgutil.walk_packages(odtkit.__path__, "odtkit."):
        if _is_public(info.name):
            found[info.name] = info.ispkg
    return dict(sorted(found.items()))


PUBLIC_MODULES = list(_public_modules())
PUBLIC_PACKAGES = [name for name, is_package in _public_modules().items() if is_package]


def _import(name: str) -> ModuleType:
    try:
        with warnings.catch_warnings():
            if name in DEPRECATED_PATHS:  # its warning is checked once, below
                warnings.simplefilter("ignore", FutureWarning)
            return importlib.import_module(name)
    except ModuleNotFoundError as exc:  # an optional third-party dependency, not odtkit itself
        if exc.name and not exc.name.startswith("odtkit"):
            pytest.skip(f"{name} needs {exc.name}")
        raise


def _is_package(module: ModuleType) -> bool:
    return hasattr(module, "__path__")


def _declared(module: ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    assert names is not None, f"{module.__name__} has no __all__"
    assert isinstance(names, list | tuple), f"{module.__name__}.__all__ is not a list"
    assert all(isinstance(n, str) for n in names), f"{module.__name__}.__all__ holds non-strings"
    return list(names)


def _defined_in_odtkit(value: object) -> bool:
    if not (inspect.isclass(value) or inspect.isfunction(value) or inspect.isbuiltin(value)):
        return False
    return str(getattr(value, "__module__", "")).split(".")[0] == "odtkit"


def _init_bindings(package: ModuleType) -> set[str]:
    """Public names a package's ``__init__`` imports from odtkit or defines at top level."""
    tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").split(".")[0] != "odtkit":
                continue
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return {n for n in names if not n.startswith("_")}


def test_discovery_finds_every_documented_package():
    assert DOCUMENTED <= set(PUBLIC_MODULES), DOCUMENTED - set(PUBLIC_MODULES)


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_name_in_all_resolves_once(name):
    module = _import(name)
    declared = _declared(module)
    duplicates = sorted({n for n in declared if declared.count(n) > 1})
    assert not duplicates, f"{name}.__all__ lists {duplicates} twice"
    unresolved = [n for n in declared if not hasattr(module, n)]
    assert not unresolved, f"{name}.__all__ names {unresolved}, which do not exist"


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_definition_and_reexport_is_in_all(name):
    module = _import(name)
    declared = set(_declared(module))
    expected = set()
    for attr, value in vars(module).items():
        if attr.startswith("_") or not _defined_in_odtkit(value):
            continue
        if _is_package(module) or value.__module__ == name:
            expected.add(attr)
    if _is_package(module):
        expected |= _init_bindings(module)
    expected -= {n.rsplit(".", 1)[1] for n in NOT_API if n.rsplit(".", 1)[0] == name}
    missing = sorted(expected - declared)
    assert not missing, f"{name} makes {missing} public but its __all__ omits them"


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_reexports_agree_with_the_defining_module(name):
    module = _import(name)
    disagreements = []
    for attr in _declared(module):
        value = getattr(module, attr)
        if not _defined_in_odtkit(value) or not _is_public(value.__module__):
            continue
        home = importlib.import_module(value.__module__)
        if home is module:
            continue
        if attr not in getattr(home, "__all__", ()):
            disagreements.append(f"{attr} (defined in {value.__module__})")
    assert not disagreements, f"{name} re-exports {disagreements} missing from their __all__"


def test_not_api_names_exist():
    # an exception for a name that was renamed or removed is stale and must go
    for qualified in NOT_API:
        module_name, attr = qualified.rsplit(".", 1)
        assert hasattr(importlib.import_module(module_name), attr), qualified


def test_the_package_level_names_are_importable_by_star():
    namespace: dict[str, object] = {}
    exec("from odtkit import *", namespace)
    assert {"search_tree", "Tree", "Dataset", "OptimalTreeClassifier"} <= set(namespace)


@pytest.mark.parametrize(("old", "new"), sorted(DEPRECATED_PATHS.items()))
def test_a_deprecated_path_warns_and_holds_the_same_objects(old, new):
    # a fresh interpreter: the import (and so the warning) happens once per process
    script = f"""
import warnings
warnings.simplefilter("error", FutureWarning)
try:
    import {old}
except FutureWarning as exc:
    assert "{new}" in str(exc), exc
else:
    raise SystemExit("no FutureWarning")
warnings.simplefilter("ignore", FutureWarning)
import importlib
old, new = importlib.import_module("{old}"), importlib.import_module("{new}")
assert old.__all__ and all(getattr(old, n) is getattr(new, n) for n in old.__all__)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-500:]

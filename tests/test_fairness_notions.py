"""The fairness notions are one registry (``odtkit.fairness.NOTION_REGISTRY``): every list and
help text reads it, and a new notion is one entry, solved and re-measured everywhere."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from odtkit import Fairness, compare
from odtkit.estimators import FairTreeClassifier
from odtkit.fairness import NOTION_REGISTRY, Notion
from odtkit.testing import brute_force_fair_tree, random_dataset


def test_every_notion_is_in_the_cli_help_and_the_estimator_docstring():
    help_text = subprocess.run(
        [sys.executable, "-m", "odtkit.cli", "compare", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    doc = FairTreeClassifier.__doc__ or ""
    for notion in NOTION_REGISTRY.values():
        assert f"{notion.name} ({notion.title})" in " ".join(help_text.split())
        assert f'"{notion.name}"' in doc
        for alias in notion.aliases:
            legit = [0, 1] if notion.legit else None
            assert Fairness(alias.upper(), protected=[0, 1], legit=legit).notion == notion.name


def test_a_new_notion_is_one_registry_entry(monkeypatch):
    """Registered alone, a notion that bounds two comparisons (overall positive rates and
    true positive rates) is validated, solved by the fair DP and three MIPs, equal to the
    brute-force oracle, and re-measured by metrics."""
    monkeypatch.setitem(
        NOTION_REGISTRY,
        "sp_eopp",
        Notion(
            "sp_eopp",
            "parity and opportunity",
            "P(yhat=+ | group) and P(yhat=+ | group, y=+)",
            (("", "all"), (" | y=+", "positive")),
            aliases=("parity_and_opportunity",),
        ),
    )
    data = random_dataset(3, n_samples=12, n_features=3)
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, size=12)
    a[:2] = [0, 1]
    fairness = Fairness("parity-and-opportunity", protected=a, delta=0.15)
    assert fairness.notion == "sp_eopp"
    groups = fairness.groups(data)
    assert len(groups.pairs) == 2  # one comparison per entry of rows
    _, expected = brute_force_fair_tree(data, fairness, lam=0.02, max_depth=2)
    table = compare(
        data, lam=0.02, max_depth=2, fairness=fairness, methods=("dp", "rbinoct", "flowoct")
    ).to_frame()
    assert (table["status"] == "optimal").all(), table[["method", "status", "message"]]
    assert np.allclose(table["objective"], expected, atol=1e-6)
    assert (table["fairness_gap"] <= 0.15 + 1e-6).all()


def test_an_unknown_notion_names_the_registry():
    with pytest.raises(ValueError, match="notion must be one of"):
        Fairness("parity", protected=[0, 1])
    with pytest.raises(ValueError, match="legit applies only to notion"):
        Fairness("sp", protected=[0, 1], legit=[0, 1])

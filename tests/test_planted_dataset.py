"""odtkit.testing.planted_tree_dataset: the benchmark sets of issue 27 (classes, imbalance).

The defaults must keep drawing what they drew before the options existed (benchmarks and
tests name planted sets by their arguments), so two sets are pinned by a hash of X and y.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from odtkit import metrics
from odtkit.testing import planted_tree_dataset


def digest(X: np.ndarray, y: np.ndarray) -> str:
    data = np.packbits(np.asarray(X, dtype=bool)).tobytes() + np.asarray(y).astype("<i8").tobytes()
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((0, 300, 10, 3, 0.1), "789c1d2781bf24c1c2d8b8b20a43a9cf3c6a9077f05513607c32d6d973267eb5"),
        (
            (7, 5000, 20, 5, 0.05),
            "2e8e01f81b394a5d443f164bddf2a8dfbd8ea81d6eb77e903811961c4e9d28a2",
        ),
    ],
)
def test_defaults_draw_what_they_drew_before(args: tuple, expected: str) -> None:
    d, planted = planted_tree_dataset(*args)
    assert digest(d.X, d.y) == expected
    assert planted.n_leaves == 2 ** args[3]
    explicit, _ = planted_tree_dataset(*args, n_classes=2, class_weights=None)
    assert digest(explicit.X, explicit.y) == expected


def test_class_weights_plant_the_imbalance() -> None:
    d, planted = planted_tree_dataset(1, 20_000, 20, 4, 0.0, class_weights=(0.9, 0.1))
    share = np.bincount(d.y, minlength=2) / d.n_samples
    # 16 leaves: quotas 14 / 2 of cells holding ~1/16 of the rows each
    assert 0.83 < share[0] < 0.92
    assert metrics.objective(planted, d, lam=0.0) == 0.0  # no noise: the tree is exact


def test_three_classes_with_noise() -> None:
    d, planted = planted_tree_dataset(2, 6_000, 20, 4, 0.1, n_classes=3)
    assert set(np.unique(d.y)) == {0, 1, 2}
    assert list(d.classes) == [0, 1, 2]
    assert d.name.endswith("-k3")
    error = metrics.objective(planted, d, lam=0.0)
    assert 0.08 < error < 0.12  # the noise rate: a replaced label is always another class


def test_three_classes_weighted() -> None:
    d, _ = planted_tree_dataset(3, 10_000, 30, 5, 0.05, n_classes=3, class_weights=[6, 3, 1])
    share = np.bincount(d.y, minlength=3) / d.n_samples
    assert share[0] > share[1] > share[2] > 0.05


def test_reproducible_with_options() -> None:
    a, _ = planted_tree_dataset(4, 500, 12, 4, 0.1, n_classes=3, class_weights=(1, 1, 2))
    b, _ = planted_tree_dataset(4, 500, 12, 4, 0.1, n_classes=3, class_weights=(1, 1, 2))
    assert digest(a.X, a.y) == digest(b.X, b.y)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"n_classes": 1}, "n_classes"),
        ({"n_classes": 2.0}, "n_classes"),
        ({"n_classes": True}, "n_classes"),
        ({"class_weights": (0.5, 0.3, 0.2)}, "class_weights"),
        ({"class_weights": (1.0, -1.0)}, "class_weights"),
        ({"class_weights": (0.0, 0.0)}, "class_weights"),
        ({"n_classes": 3, "class_weights": (1.0, float("nan"), 1.0)}, "class_weights"),
    ],
)
def test_bad_options_name_the_argument(kwargs: dict, argument: str) -> None:
    with pytest.raises(ValueError, match=argument):
        planted_tree_dataset(0, 100, 6, 3, 0.1, **kwargs)

"""Hypothesis settings shared by the property tests that compare a search with an oracle."""

from __future__ import annotations

from hypothesis import HealthCheck, settings


def oracle_settings(max_examples: int) -> settings:
    """``max_examples`` examples, the same ones every run (a failure reproduces in CI and at a
    desk alike), no deadline (one search may take seconds on a machine at load 10), and draws
    that build tables slowly allowed."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )

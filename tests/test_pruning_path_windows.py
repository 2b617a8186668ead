"""The exact cost–error path's shortcuts: its two end cuts without a flow, and big windows cut by
the λ-dependent reductions of ``_cut`` (rules 3 and 5) instead of one flow on the window.

Both must give the path the flows on the uncompressed network give, vertex by vertex and leaf by
leaf (the reference the shortcuts replace), and the brute-force optimum at every λ tried.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

from odtkit import _native
from odtkit.pruning import _path as path_module
from odtkit.pruning import brute_force_prune, extract
from odtkit.pruning._cut import closure_network, native_network


def _data(seed: int, n: int, T: int, depth: int, kind: str, zero_costs: bool):
    X, y = make_classification(
        n, n_features=6, n_informative=4, n_redundant=0, flip_y=0.15, random_state=seed
    )
    cls = RandomForestClassifier if kind == "rf" else ExtraTreesClassifier
    ens = cls(T, max_depth=depth, random_state=seed).fit(X, y)
    rng = np.random.default_rng(seed)
    costs = rng.uniform(0.2, 3.0, 6)
    if zero_costs:
        costs[rng.random(6) < 0.5] = 0.0
    return extract(ens, X, y, costs)


def _path(d, *, reduced: bool, network=None, probe: float = path_module._PROBE_FACTOR):
    with pytest.MonkeyPatch.context() as m:
        if reduced:  # every window through the reductions, each first at a probe λ
            m.setattr(path_module, "_REDUCED_MIN_NODES", 0)
            m.setattr(path_module, "_REDUCED_SHARE", 0.0)
            m.setattr(path_module, "_PROBE_FACTOR", probe)
        else:  # every window through one flow
            m.setattr(path_module, "_REDUCED_MIN_NODES", 2**62)
        return path_module.exact_path(d, network=network)


#: windows split at a probe λ in each example above (some must be, or the probe is untested)
PROBED: list[int] = []


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(20, 120),
    T=st.integers(1, 5),
    depth=st.integers(1, 5),
    kind=st.sampled_from(["rf", "et"]),
    zero_costs=st.booleans(),
)
def test_windows_cut_by_the_reductions_give_the_flows_path(seed, n, T, depth, kind, zero_costs):
    d = _data(seed, n, T, depth, kind, zero_costs)
    flows = _path(d, reduced=False, network=closure_network(d, merge=False))
    # the probe λ anywhere inside a window (its vertex splits the window as λ* would)
    reduced = _path(d, reduced=True, probe=[0.5, 0.1, 0.9][seed % 3])
    PROBED.append(reduced.stats["probe_splits"])
    np.testing.assert_allclose(reduced.breakpoints, flows.breakpoints, rtol=1e-12)
    np.testing.assert_allclose(reduced.error_term, flows.error_term, atol=1e-12)
    np.testing.assert_allclose(reduced.cost_term, flows.cost_term, atol=1e-9)
    for j in range(len(flows)):
        for z, z_flow in zip(reduced.pruning(j).leaves, flows.pruning(j).leaves, strict=True):
            np.testing.assert_array_equal(z, z_flow)


def test_the_probes_split_windows_in_the_examples_above():
    if not PROBED:
        pytest.skip("run with the property above (not selected)")
    assert sum(PROBED) > 0


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    T=st.integers(1, 4),
    depth=st.integers(1, 6),
    zero_costs=st.booleans(),
    merge=st.booleans(),
)
def test_the_end_sides_equal_the_flows_minimal_sides(seed, T, depth, zero_costs, merge):
    d = _data(seed, 80, T, depth, "rf", zero_costs)
    network = native_network(d) if merge else closure_network(d, merge=False)
    for lam, shortcut in (
        (0.0, path_module._zero_lam_side(network)),
        (path_module._lam_max(d), None),
    ):
        src, snk = network.capacities(lam)
        out = _native.closure_min_cut(
            src, snk, network.tails.astype(np.int32), network.heads.astype(np.int32)
        )
        side = np.asarray(out["source_side"]).astype(bool)
        if shortcut is not None:
            np.testing.assert_array_equal(shortcut, side)
        elif path_module._every_gain_pays(network, np.arange(network.n_nodes)):
            assert not side.any()
        else:  # a split gains with free pairs only: the shortcut must not claim the empty side
            assert side[: network.n_splits].any()


@pytest.mark.parametrize("seed", range(4))
def test_path_with_reduced_windows_is_optimal_at_every_lambda(seed):
    d = _data(seed, 40, 2, 2, "rf", seed % 2 == 1)
    path = _path(d, reduced=True)
    lams = np.concatenate(([0.0, 1e-4, 0.5, 5.0], path.breakpoints, path.breakpoints * 1.01))
    for lam in lams:
        oracle, _ = brute_force_prune(d, lam=float(lam), limit=50_000)
        j = path.vertex_at(float(lam))
        value = path.error_term[j] + lam * path.cost_term[j]
        assert value == pytest.approx(oracle, abs=1e-9)

"""The final max-flow on arcs read from the tree slices (``slice_flow``; SliceFlow in
ensemble_cut.cpp, issue 42) against the uncompressed numpy network and the arc-array max-flow:
the same minimum cut value, the same minimal source side (every tree pruned alike, bit for bit),
on shallow and deep forests, with and without the reductions (forced splits and paid pairs
change which arcs the slices hold), at λ anywhere on the path and at its breakpoints (where
minimum cuts tie and only the minimal one is the answer), also after rule 7 (the cut at λ / 3
first, the splits outside its answer left out); and a memory limit that refuses its network still
returns a valid pruning."""

from __future__ import annotations

import numpy as np
import pytest
from _pruning_checks import same_pruning
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

from odtkit.pruning import cost_error_path, extract
from odtkit.pruning._cut import closure_network, cut_prune
from odtkit.results import Status


def _forest(seed: int, n: int, T: int, k: int, depth: int | None):
    """Noisy labels on ``n`` continuous rows and ``k`` shared features (pairs are shared across
    trees); ``depth=None`` grows full trees (20-30 levels on 1,500 rows)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, k))
    y = (rng.random(n) < 0.35 + 0.3 * (X[:, 0] > 0.5)).astype(int)
    ens = RandomForestClassifier(T, max_depth=depth, random_state=seed).fit(X, y)
    costs = rng.integers(0, 4, size=k).astype(float)  # a free feature: pairs without sink arcs
    return extract(ens, X, y, costs)


def _forest_and_lam(seed, T, k, depth, lam_pick, at_breakpoint):
    """A forest of :func:`_forest` and a λ anywhere from 1e-3 to 1, or at one of its path's
    breakpoints (where minimum cuts tie)."""
    d = _forest(seed, n=600 if depth is None else 400, T=T, k=k, depth=depth)
    breakpoints = cost_error_path(d).breakpoints if at_breakpoint else []
    if len(breakpoints):  # none where every feature is free
        return d, float(breakpoints[int(lam_pick * len(breakpoints) * 0.999)])
    return d, float(10 ** (-3 + 3 * lam_pick))


def _forests_and_lams(test):
    """The property tests' draws: a shallow or full-depth forest of 1-4 trees on 2-5 features
    and the λ of :func:`_forest_and_lam`."""
    draws = given(
        seed=st.integers(0, 10_000),
        T=st.integers(1, 4),
        k=st.integers(2, 5),
        depth=st.sampled_from([3, 6, None]),
        lam_pick=st.floats(0.0, 1.0),
        at_breakpoint=st.booleans(),
    )
    return settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])(
        draws(test)
    )


@_forests_and_lams
def test_property_slice_flow_is_the_same_cut(seed, T, k, depth, lam_pick, at_breakpoint):
    d, lam = _forest_and_lam(seed, T, k, depth, lam_pick, at_breakpoint)
    reference = cut_prune(d, lam=lam, network=closure_network(d, merge=True))
    assert reference.status == Status.OPTIMAL
    for reduce, restrict_levels in ((False, 0), (True, 0), (True, 32)):
        arrays = cut_prune(d, lam=lam, reduce=reduce, restrict_levels=restrict_levels, slice_flow=0)
        sliced = cut_prune(d, lam=lam, reduce=reduce, restrict_levels=restrict_levels, slice_flow=1)
        same_pruning(sliced, reference)
        same_pruning(arrays, reference)
        # the integer min cut itself, on the same scaled network
        assert sliced.stats["flow"] == sliced.stats["cut"] == arrays.stats["cut"]
        if sliced.stats["n_arcs"] > 0:
            assert sliced.stats["algorithm"].startswith("push_relabel_slices")
        event(f"reduce={reduce}: network left {sliced.stats['n_arcs'] > 0}")
    # rule 7 (nested λ): the cut at λ / 3 (and λ / 9) first, on any network left
    for levels in (1, 2):
        nested = cut_prune(d, lam=lam, nest_levels=levels, nest_arcs=1, slice_flow=1)
        same_pruning(nested, reference)
        assert nested.stats["cut"] == arrays.stats["cut"]
        event(f"rule 7 excluded splits: {nested.stats['n_excluded'] > 0}")


def test_deep_forest_picks_the_slice_flow_and_whole_networks_agree():
    """Without the reductions the slice flow solves the whole network (every split and pair),
    which is where it matters (the default forest at λ = 3e-2); auto picks it on deep trees."""
    d = _forest(1, n=1500, T=3, k=4, depth=None)
    lam = 0.02
    auto = cut_prune(d, lam=lam)
    assert auto.stats["algorithm"].startswith("push_relabel_slices")
    whole = cut_prune(d, lam=lam, reduce=False, slice_flow=1)
    whole_arrays = cut_prune(d, lam=lam, reduce=False, slice_flow=0)
    reference = cut_prune(d, lam=lam, network=closure_network(d, merge=True))
    for res in (auto, whole, whole_arrays):
        same_pruning(res, reference)
    assert whole.stats["cut"] == whole_arrays.stats["cut"]
    # no identical pairs merged: every split and every priced pair is a node
    assert whole.stats["n_nodes"] == whole_arrays.stats["n_nodes_unmerged"]
    assert whole.stats["n_arcs"] == whole_arrays.stats["n_arcs_unmerged"]
    # shallow forests keep the arc arrays (Dinic or Boykov-Kolmogorov) unless asked
    shallow = _forest(1, n=1500, T=3, k=4, depth=6)
    assert not cut_prune(shallow, lam=lam).stats["algorithm"].startswith("push_relabel_slices")


@pytest.mark.parametrize("slice_flow", [0, 1])
def test_memory_limit_refusing_the_network_returns_a_valid_pruning(slice_flow):
    d = _forest(2, n=1500, T=3, k=4, depth=None)
    lam = 0.02
    free = cut_prune(d, lam=lam, reduce=False, slice_flow=slice_flow)
    assert free.status == Status.OPTIMAL
    stopped = cut_prune(d, lam=lam, reduce=False, slice_flow=slice_flow, memory_limit_mb=0.5)
    assert stopped.status == Status.MEMORY_LIMIT
    assert stopped.lower_bound <= free.objective + 1e-12 <= stopped.objective + 2e-12
    assert stopped.model.objective == pytest.approx(stopped.objective, abs=1e-12)


@_forests_and_lams
def test_property_reverse_slice_flow_is_the_same_cut(seed, T, k, depth, lam_pick, at_breakpoint):
    """The slice flow on the reversed network (the pairs' unused sink capacity pulled towards
    the splits with source capacity left) against the uncompressed numpy network, leaf by leaf,
    and the forward slice flow's integer cut: where every pair ends saturated (the optimum keeps
    the whole network), where phase 1 leaves wants and deficits (the optimum keeps part of it,
    and the deficits go back to the pairs), and after rule 7."""
    d, lam = _forest_and_lam(seed, T, k, depth, lam_pick, at_breakpoint)
    reference = cut_prune(d, lam=lam, network=closure_network(d, merge=True))
    for reduce in (False, True):
        forward = cut_prune(d, lam=lam, reduce=reduce, slice_flow=2)
        reverse = cut_prune(d, lam=lam, reduce=reduce, slice_flow=3)
        same_pruning(reverse, reference)
        same_pruning(forward, reference)
        assert reverse.stats["flow"] == reverse.stats["cut"] == forward.stats["cut"]
        if reverse.stats["n_arcs"] > 0:
            assert reverse.stats["algorithm"] == "push_relabel_slices_reverse"
            event(f"reduce={reduce}: network left")
    nested = cut_prune(d, lam=lam, nest_levels=2, nest_arcs=1, slice_flow=3)
    same_pruning(nested, reference)
    assert nested.stats["cut"] == forward.stats["cut"]


def test_reverse_slice_flow_proves_a_whole_optimum_and_a_partial_one():
    """On full trees the reverse direction certifies both kinds of network: at a λ where rule 7
    leaves exactly the optimum (every pair saturated at the end) and on the whole network,
    where most splits are cut (phase 1 ends with unmet wants)."""
    d = _forest(3, n=1500, T=3, k=4, depth=None)
    lam = 0.02
    reference = cut_prune(d, lam=lam, network=closure_network(d, merge=True))
    whole = cut_prune(d, lam=lam, reduce=False, slice_flow=3)
    nested = cut_prune(d, lam=lam, nest_arcs=1, slice_flow=3)
    for res in (whole, nested):
        same_pruning(res, reference)
        assert res.stats["flow"] == res.stats["cut"]
    assert whole.stats["algorithm"] == "push_relabel_slices_reverse"


@pytest.mark.parametrize(
    ("seed", "T", "k", "depth", "lam_pick", "reduce"),
    [
        (2681, 3, 5, 6, 0.1962968851147534, False),
        (5969, 3, 5, None, 0.500356430736871, False),
        (9447, 3, 5, 6, 0.042525833888270914, True),
        (9946, 3, 5, 6, 0.8647198061474685, False),
        (2333, 4, 4, 6, 0.3436632283667762, False),
        (991, 3, 5, 6, 0.8838746856109483, False),
    ],
)
def test_slice_flow_where_the_gap_rule_decides(seed, T, k, depth, lam_pick, reduce):
    """Forests (at a breakpoint of their path) where the shared push-relabel's gap rule
    (push_relabel.hpp) shapes the slice flow's cut, forward and reversed: a gap rule off by one
    gets each of them wrong in at least one direction, which the property tests' 40 draws
    missed. Both directions against the uncompressed network, and flow == cut."""
    d, lam = _forest_and_lam(seed, T, k, depth, lam_pick, True)
    reference = cut_prune(d, lam=lam, network=closure_network(d, merge=True))
    for slice_flow in (2, 3):
        res = cut_prune(d, lam=lam, reduce=reduce, slice_flow=slice_flow)
        same_pruning(res, reference)
        assert res.stats["flow"] == res.stats["cut"]

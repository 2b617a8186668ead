"""Rule 5 of the native cut (restricted problems; odtkit.pruning._cut, issue 42): forcing the
minimal minimum closure of the network cut down to the splits of depth <= L never changes the
returned pruning, bit for bit, whatever L and λ (breakpoints of the exact path included, where
minimum cuts tie and only the *minimal* one is the answer)."""

from __future__ import annotations

import numpy as np
from _pruning_checks import same_pruning
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

from odtkit.pruning import cost_error_path, extract
from odtkit.pruning._cut import RESTRICT_LEVELS, closure_network, cut_prune
from odtkit.results import Status


def _shared_forest(seed: int, n: int, T: int, depth: int, k: int):
    """Few features (k <= 4) and several trees: every tree tests the same features, so pairs
    are shared across trees and splits, which is what the rule's proof has to get right."""
    X, y = make_classification(
        n,
        n_features=k,
        n_informative=min(k, 3),
        n_redundant=0,
        n_clusters_per_class=1,
        flip_y=0.25,
        random_state=seed,
    )
    if seed % 3 == 0:  # few distinct values: equal thresholds across trees
        X = np.round(X * 2)
    ens = RandomForestClassifier(T, max_depth=depth, random_state=seed).fit(X, y)
    costs = np.random.default_rng(seed).integers(1, 4, size=k).astype(float)
    return extract(ens, X, y, costs)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    T=st.integers(2, 6),
    depth=st.integers(2, 6),
    k=st.integers(2, 4),
    levels=st.integers(1, 8),
    lam_pick=st.floats(0.0, 1.0),
    at_breakpoint=st.booleans(),
)
def test_property_restricted_rounds_keep_the_pruning(
    seed, T, depth, k, levels, lam_pick, at_breakpoint
):
    d = _shared_forest(seed, n=80, T=T, depth=depth, k=k)
    path = cost_error_path(d)
    if at_breakpoint and len(path.breakpoints):
        lam = float(path.breakpoints[int(lam_pick * len(path.breakpoints) * 0.999)])
    else:
        lam = float(10 ** (-5 + 5 * lam_pick))
    # the numpy network with identical examples merged rounds the same capacities up as the
    # native one (unmerged, the sums of rounded capacities differ by a unit: at a breakpoint,
    # where cuts tie, that alone can pick another minimum cut)
    reference = cut_prune(d, lam=lam, network=closure_network(d, merge=True))
    assert reference.status == Status.OPTIMAL
    without = cut_prune(d, lam=lam, restrict_levels=0)
    assert without.stats["restrict_rounds"] == []
    same_pruning(without, reference)
    for merge_pairs in (True, False):
        res = cut_prune(d, lam=lam, restrict_levels=levels, merge_pairs=merge_pairs)
        same_pruning(res, reference)
        rounds = res.stats["restrict_rounds"]
        assert len(rounds) <= levels
        assert all(r["level"] < levels for r in rounds)
        # what the rounds force is part of the answer (forced = in every minimum closure)
        kept = sum(int((~z).sum()) for z in res.model.leaves)  # not a leaf: kept or below
        assert res.stats["n_forced"] <= kept
        event(f"rounds forced splits: {sum(r['n_forced_cut'] for r in rounds) > 0}")


def test_rounds_force_what_rule_3_cannot_and_shrink_the_flow():
    """A forest where no split pays for itself alone at λ (rule 3 forces nothing) but the
    top levels together do: the rounds force them, and the network left for the flow shrinks,
    with the same pruning as the uncompressed cut."""
    X, y = make_classification(4000, 6, n_informative=5, n_redundant=0, random_state=3)
    ens = RandomForestClassifier(20, max_depth=7, random_state=3).fit(X, y)
    d = extract(ens, X, y)
    lam = 0.02
    plain = cut_prune(d, lam=lam, restrict_levels=0)
    res = cut_prune(d, lam=lam, restrict_levels=RESTRICT_LEVELS)
    reference = cut_prune(d, lam=lam, network=closure_network(d, merge=True))
    same_pruning(plain, reference)
    same_pruning(res, reference)
    rounds = res.stats["restrict_rounds"]
    assert sum(r["n_forced_cut"] for r in rounds) > 0
    assert res.stats["n_forced"] > plain.stats["n_forced"]
    assert res.stats["n_arcs"] < plain.stats["n_arcs"]


def test_rounds_stop_after_two_that_force_nothing():
    X, y = make_classification(500, 5, n_informative=4, n_redundant=0, random_state=1)
    ens = RandomForestClassifier(5, max_depth=6, random_state=1).fit(X, y)
    d = extract(ens, X, y)
    res = cut_prune(d, lam=0.1, restrict_levels=20)
    rounds = res.stats["restrict_rounds"]
    assert [r["n_forced_cut"] for r in rounds] == [3, 0, 0]
    assert [r["level"] for r in rounds] == [0, 1, 2]
    # nothing is worth any feature: rule 6 excludes every split before any round runs
    res = cut_prune(d, lam=10.0, restrict_levels=20)
    assert res.stats["restrict_rounds"] == []
    assert res.stats["n_excluded"] > 0
    assert all(z[0] for z in res.model.leaves)  # every tree cut to its root


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    T=st.integers(2, 6),
    depth=st.integers(2, 6),
    k=st.integers(2, 4),
    lam_pick=st.floats(0.0, 1.0),
    at_breakpoint=st.booleans(),
)
def test_property_rule_6_exclusion_keeps_the_pruning(seed, T, depth, k, lam_pick, at_breakpoint):
    """Rule 6 (splits a greedy flow proves to be in no minimum closure leave the network) at
    the larger λ where it applies, breakpoints included: the same pruning, certified."""
    d = _shared_forest(seed, n=80, T=T, depth=depth, k=k)
    path = cost_error_path(d)
    upper = path.breakpoints[path.breakpoints > 0]
    if at_breakpoint and len(upper):
        lam = float(upper[int(lam_pick * len(upper) * 0.999)])
    else:
        lam = float(10 ** (-2 + 2.5 * lam_pick))
    reference = cut_prune(d, lam=lam, network=closure_network(d, merge=True))
    for levels in (0, RESTRICT_LEVELS):
        res = cut_prune(d, lam=lam, restrict_levels=levels)
        same_pruning(res, reference)
        excluded = res.stats["n_excluded"]
        splits = sum(int((t.left >= 0).sum()) for t in d.trees)
        assert excluded + res.stats["n_forced"] + res.stats["n_dead"] <= splits
        event(f"rule 6 excluded splits: {excluded > 0}")

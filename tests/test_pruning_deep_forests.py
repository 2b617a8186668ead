"""Forests of full-depth trees (scikit-learn's default, issue 42) through the native cut: the
forcing rule that keeps its sums between rounds, and push-relabel as the final max-flow on deep
trees (odtkit.pruning._cut; ensemble_cut.cpp's final_algorithm), never change the pruning, bit
for bit, against the uncompressed numpy network solved by the default max-flow, at λ anywhere
on the path and at its breakpoints (where minimum cuts tie and only the minimal one is the
answer)."""

from __future__ import annotations

import numpy as np
from _pruning_checks import same_pruning
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

from odtkit.pruning import cost_error_path, extract
from odtkit.pruning._cut import closure_network, cut_prune
from odtkit.results import Status


def _deep_forest(seed: int, n: int, T: int, k: int):
    """Noisy labels on ``n`` continuous rows and ``k`` shared features: unlimited depth grows
    trees 20-30 levels deep on 1,500 rows (the final network is then deep enough for
    push-relabel), and every tree tests every feature, so pairs are shared."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, k))
    y = (rng.random(n) < 0.35 + 0.3 * (X[:, 0] > 0.5)).astype(int)
    ens = RandomForestClassifier(T, random_state=seed).fit(X, y)
    costs = rng.integers(1, 4, size=k).astype(float)
    return extract(ens, X, y, costs)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    T=st.integers(2, 4),
    k=st.integers(3, 5),
    lam_pick=st.floats(0.0, 1.0),
    at_breakpoint=st.booleans(),
)
def test_property_deep_forests_keep_the_pruning(seed, T, k, lam_pick, at_breakpoint):
    d = _deep_forest(seed, n=1500, T=T, k=k)
    if at_breakpoint:
        breakpoints = cost_error_path(d).breakpoints
        lam = float(breakpoints[int(lam_pick * len(breakpoints) * 0.999)])
    else:
        lam = float(10 ** (-3 + 3 * lam_pick))
    reference = cut_prune(d, lam=lam, network=closure_network(d, merge=True))
    assert reference.status == Status.OPTIMAL
    for restrict_levels in (0, 32):
        res = cut_prune(d, lam=lam, restrict_levels=restrict_levels)
        same_pruning(res, reference)
        event(f"final max-flow: {res.stats['algorithm'] or 'none'}")
        event(f"rule 6 excluded splits: {res.stats['n_excluded'] > 0}")


def test_deep_forest_runs_push_relabel_and_matches_every_other_flow():
    d = _deep_forest(1, n=1500, T=3, k=4)
    lam = 0.02  # the optimum keeps splits the reductions cannot decide: a network is left
    res = cut_prune(d, lam=lam)
    assert res.stats["algorithm"].startswith("push_relabel_slices")
    assert res.stats["n_arcs"] > 0
    same_pruning(res, cut_prune(d, lam=lam, network=closure_network(d, merge=True)))
    same_pruning(res, cut_prune(d, lam=lam, reduce=False))
    same_pruning(res, cut_prune(d, lam=lam, network=closure_network(d, merge=False)))


def test_rule_6_excludes_every_split_where_the_optimum_keeps_none():
    """At a λ where every tree is best cut to its root, the greedy flow saturates (nearly) every
    split's source arc: rule 6 excludes every live split, no max-flow network is built, and the
    answer is still certified (the excluded splits' source arcs enter the flow bound)."""
    d = _deep_forest(2, n=1500, T=3, k=4)
    lam = 0.4
    res = cut_prune(d, lam=lam)
    reference = cut_prune(d, lam=lam, network=closure_network(d, merge=True))
    same_pruning(res, reference)
    assert res.stats["n_excluded"] > 0
    assert res.stats["n_excluded"] + res.stats["n_dead"] + res.stats["n_forced"] == sum(
        int((t.left >= 0).sum()) for t in d.trees
    )
    assert res.stats["n_arcs"] == 0
    assert all(z[0] for z in res.model.leaves)  # every tree cut to its root
    # without the reductions the flow sees every split, and agrees
    same_pruning(res, cut_prune(d, lam=lam, reduce=False))

"""scikit-learn's default forests pruned at every λ (issue 42): before -> after.

``RandomForestClassifier(n_estimators=T, random_state=0)`` (full depth, scikit-learn's
defaults) on ``make_classification(N, 20, n_informative=10, random_state=0)``; each row is one
``prune(forest, X, y, lam=...)`` (extraction included, the fit not: the forest is fitted once
in its own child and pickled) in a fresh child process: CPU seconds of the call, the child's
peak RSS (the data and the forest loaded included), the status, objective and bound, and the
time split (network build and reductions, max-flow) with the network the max-flow saw. "before"
runs the same child with another interpreter whose odtkit is the code before the change
(``--before-python``, e.g. /work/wt/before/.venv/bin/python), "after" with this one;
``--before-src DIR`` makes the "before" child import odtkit from that source folder instead
(its native module built in place), for an interpreter whose installed odtkit is not the code
before.

    python benchmarks/pruning_default_forests.py [--before-python PY] [--before-src DIR]
        [--cases 100x100000]
        [--lams 1e-4,1e-3,1e-2] [--path] [--cache DIR] [--fit-jobs J] [--report-only]

Writes benchmarks/results/pruning_default_forests.{json,md}; rows of an earlier run for cases
or λ not run again are kept (a case is "TxN" and its side "before"/"after").
"""

from __future__ import annotations

import argparse
import pickle
import resource
import sys
import time
from pathlib import Path
from typing import Any

import _harness as harness

NAME = "pruning_default_forests"
DEFAULT_CACHE = "/tmp/odtkit-bench-default-forests"


def _paths(T: int, N: int, cache: str) -> Path:
    return Path(cache) / f"rf-default-T{T}-N{N}.pkl"


def fit_case(T: int, N: int, cache: str, jobs: int = 1) -> dict[str, Any]:
    """Child side: fit and pickle the forest (not measured; ``jobs`` cores grow the trees, which
    changes neither the forest nor any measured row)."""
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    path = _paths(T, N, cache)
    if not path.exists():
        X, y = make_classification(N, 20, n_informative=10, random_state=0)
        rf = RandomForestClassifier(n_estimators=T, random_state=0, n_jobs=jobs).fit(X, y)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps((X, y, rf)))
    return {"path": str(path)}


def prune_case(T: int, N: int, lam: float, cache: str, what: str) -> dict[str, Any]:
    """Child side: one prune (or the exact path with ``what == "path"``) with whichever odtkit
    this interpreter imports."""
    import odtkit
    from odtkit.pruning import cost_error_path, prune

    X, y, rf = pickle.loads(_paths(T, N, cache).read_bytes())
    leaves = int(sum(e.tree_.n_leaves for e in rf.estimators_))
    rss0 = harness.peak_rss_mb()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    row: dict[str, Any] = {"T": T, "N": N, "leaves": leaves, "odtkit": odtkit.__file__}
    if what == "path":
        path = cost_error_path(rf, X, y)
        row.update(
            lam="path", status=str(path.status), n_vertices=len(path.lam_lo), n_cuts=path.n_cuts
        )
    else:
        res = prune(rf, X, y, lam=lam)
        st = res.stats
        row.update(
            lam=lam,
            status=str(res.status),
            objective=float(res.objective),
            lower_bound=float(res.lower_bound),
            n_nodes=st.get("n_nodes"),
            n_arcs=st.get("n_arcs"),
            n_forced=st.get("n_forced"),
            n_dead=st.get("n_dead"),
            n_excluded=st.get("n_excluded"),
            algorithm=st.get("algorithm"),
            reduce_time=st.get("reduce_time"),
            flow_time=st.get("flow_time"),
            extract_time=st.get("extract_time"),
            fallback=st.get("fallback"),
            restrict_rounds=st.get("restrict_rounds"),
        )
    row.update(
        cpu=time.process_time() - cpu0,
        wall=time.perf_counter() - wall0,
        peak_rss_mb=harness.peak_rss_mb(),
        rss_before_mb=rss0,
        children_cpu=resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime,
    )
    return row


def _key(row: dict[str, Any]) -> tuple[str, str, str]:
    return (f"{row['T']}x{row['N']}", str(row["lam"]), row["side"])


def _rounds(rounds: list[dict[str, Any]] | None) -> str:
    if rounds is None:  # the code before rule 5
        return "–"
    cut = sum(r["n_forced_cut"] for r in rounds)
    rule = sum(r["n_forced_rule"] for r in rounds)
    return f"{len(rounds)}: {cut} + {rule}"


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        "# scikit-learn's default forests pruned at every λ",
        "",
        "(benchmarks/pruning_default_forests.py)",
        "",
        "`prune(RandomForestClassifier(n_estimators=T, random_state=0), X, y, lam=λ)` on "
        "`make_classification(N, 20, n_informative=10, random_state=0)`, one fresh child per "
        "row: CPU seconds of the call (extraction included, the fit not), peak RSS of the child "
        "(data and forest loaded included), status, objective and bound; `network` is what the "
        "max-flow saw (nodes / arcs) and which max-flow ran; `reduce s` and `flow s` are the "
        "native reduction + build and max-flow in wall seconds (the machine is shared); rule 5 "
        "(restricted problems, odtkit.pruning._cut) ran that many rounds, forcing splits by "
        "their cuts and then by rule 3; rule 6 excluded that many splits (a greedy flow read "
        "from the tree slices proves them out of every minimum closure). Before: the code at "
        f"{meta.get('before', '?')}; after: this branch. Machine: 2 shared cores under load "
        f"(load average {meta.get('load', '?')}), {meta.get('when', '')}.",
        "",
    ]
    header = [
        "forest",
        "leaves",
        "λ",
        "side",
        "CPU s",
        "peak RSS MB",
        "status",
        "objective",
        "bound",
        "network nodes / arcs",
        "max-flow",
        "reduce s",
        "flow s",
        "rule 5: rounds, forced by cuts + by rule 3",
        "rule 6: excluded",
    ]
    body = []
    for r in sorted(rows, key=lambda r: (r["T"], r["N"], str(r["lam"]), r["side"] != "before")):
        body.append(
            [
                f"{r['T']} trees x {r['N']}",
                r.get("leaves", "–"),
                r["lam"],
                r["side"],
                harness.fmt(r.get("cpu")),
                harness.fmt(r.get("peak_rss_mb"), 4),
                r.get("status", r.get("error", "–")),
                harness.fmt(r.get("objective"), 6),
                harness.fmt(r.get("lower_bound"), 6),
                f"{harness.fmt(r.get('n_nodes'))} / {harness.fmt(r.get('n_arcs'))}",
                r.get("algorithm") or "–",
                harness.fmt(r.get("reduce_time")),
                harness.fmt(r.get("flow_time")),
                _rounds(r.get("restrict_rounds")),
                harness.fmt(r.get("n_excluded")),
            ]
        )
    lines += harness.md_table(header, body)
    pairs = {}
    for r in rows:
        pairs.setdefault((r["T"], r["N"], str(r["lam"])), {})[r["side"]] = r
    ratios = []
    for (T, N, lam), p in sorted(pairs.items()):
        b, a = p.get("before"), p.get("after")
        if b and a and b.get("cpu") and a.get("cpu") and "error" not in b and "error" not in a:
            ratios.append(
                f"* {T} x {N}, λ = {lam}: CPU {b['cpu']:.1f} -> {a['cpu']:.1f} s "
                f"({a['cpu'] / b['cpu']:.2f}x), peak RSS {b['peak_rss_mb']:.0f} -> "
                f"{a['peak_rss_mb']:.0f} MB ({a['peak_rss_mb'] / b['peak_rss_mb']:.2f}x), "
                f"objective equal: {abs(a.get('objective', 0) - b.get('objective', 1)) < 1e-9}"
            )
    if ratios:
        lines += ["", "After / before:", "", *ratios]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-python", default=None)
    parser.add_argument("--before-src", default=None, help="odtkit source folder of 'before'")
    parser.add_argument("--cases", default="100x100000")
    parser.add_argument("--lams", default="1e-4,1e-3,1e-2")
    parser.add_argument("--path", action="store_true", help="also the exact path (after only)")
    parser.add_argument("--cache", default=DEFAULT_CACHE)
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--fit-jobs", type=int, default=1, help="cores that grow a new forest")
    parser.add_argument("--report-only", action="store_true", help="rebuild the .md only")
    harness.add_out_dir(parser)
    args = parser.parse_args(argv)
    if args.report_only:
        harness.rewrite_report(NAME, args.out_dir, lambda p: markdown(p["rows"], p["meta"]))
        return
    old = harness.read_results(NAME, args.out_dir) or {}
    rows = {_key(r): r for r in old.get("rows", [])}
    sides: list[tuple[str, str | None, str | None]] = [("after", None, None)]
    if args.before_python:
        sides.insert(0, ("before", args.before_python, args.before_src))
    for case in args.cases.split(","):
        T, N = (int(v) for v in case.split("x"))
        harness.call_in_child(
            f"{NAME}:fit_case", T, N, args.cache, args.fit_jobs, timeout=args.timeout
        )
        jobs: list[tuple[Any, str]] = [(float(lam), "prune") for lam in args.lams.split(",")]
        if args.path:
            jobs.append((None, "path"))
        for lam, what in jobs:
            for side, python, src in sides:
                if what == "path" and side == "before":
                    continue
                try:
                    row = harness.call_in_child(
                        f"{NAME}:prune_case",
                        T,
                        N,
                        lam,
                        args.cache,
                        what,
                        timeout=args.timeout,
                        python=python,
                        src=src,
                    )
                except harness.ChildError as exc:
                    row = {
                        "T": T,
                        "N": N,
                        "lam": lam if what == "prune" else "path",
                        "error": str(exc)[:300],
                    }
                row["side"] = side
                rows[_key(row)] = row
                print(row, file=sys.stderr, flush=True)
    meta = {
        "before": (
            f"{args.before_python} ({args.before_src})"
            if args.before_src
            else args.before_python or old.get("meta", {}).get("before")
        ),
        "when": harness.timestamp(),
        "load": round(__import__("os").getloadavg()[0], 1),
        **harness.machine_info(),
    }
    payload = {"meta": meta, "rows": list(rows.values())}
    harness.write_results(NAME, payload, markdown(list(rows.values()), meta), out_dir=args.out_dir)


if __name__ == "__main__":
    main()

"""The same workloads on the code before and after a change, in one run: did answers or speed move?

A refactor that claims "behaviour and speed unchanged" (issue 26) is checked here. Each workload
runs in a fresh interpreter (``_harness.call_in_child``), alternately on the old source tree
(``--before-src``, with its native module built in place) and on this checkout, ``--reps`` times,
so that both sides see the same machine load. A child times only the call (imports, data loading
and the warm-start search are outside the clock). Workloads:

* ``search``: ``search_tree`` (dp, bnb, the fair dp) on bundled datasets;
* ``mip``: RBinOCT and FlowOCT through ``solve_formulation`` on each backend (highs, pyomo,
  pulp), cold and warm-started from the search tree, 1 thread, seed 0: the end-to-end time
  (build + translate + solve + decode + verification);
* ``build``: a formulation's ``build`` alone on the largest bundled table;
* ``prune``: ``pruning.prune`` (min-cut) of a random forest;
* ``estimator``: the scikit-learn estimators' ``fit`` on raw tables (breast cancer: guessed
  thresholds, every threshold by the exact search, N per column, the CV and fair estimators)
  and on a bundled 0/1 table (dp, and RBinOCT warm-started by it), settings spelled the same on both
  sides; the fitted tree is compared too (issue 38: every front end through one task);
* ``rashomon``: :func:`odtkit.rashomon` on bundled datasets: the optimum, the set's bound,
  its exact count, objective histogram and first trees;
* ``compare``: :func:`odtkit.compare` on a raw table (the exact search, and dp on its guessed
  binarization) and on a bundled dataset (dp, RBinOCT, FlowOCT): every row's status,
  objective and bound.

Reports per workload the median time before and after, their ratio, and whether the answers
(status, objective and bound to 1e-9) are the same; writes ``results/NAME.{json,md}``::

    python benchmarks/before_after.py --before-src /tmp/old/src --name refactor_26
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as harness  # noqa: E402

SEARCH = [
    (dataset, method, depth, lam)
    for dataset in ("monk2", "tic-tac-toe", "car-evaluation", "german-credit")
    for method, depth in (("dp", 4), ("dp", 5), ("bnb", 3))
    for lam in (0.01, 0.002)
    # german-credit's depth-5 dp and small-lam bnb take 15-25 s a run: one of each is enough
    if dataset != "german-credit"
    or (method, depth, lam) in {("dp", 4, 0.01), ("dp", 4, 0.002), ("bnb", 3, 0.01)}
]
FAIR = [("german-credit", 3, 0.05), ("tic-tac-toe", 4, 0.02)]
MIP = [
    (dataset, formulation, backend, warm)
    for dataset in ("monk1", "monk3")
    for formulation in ("rbinoct", "flowoct")
    for backend in ("highs", "pyomo", "pulp")
    for warm in (False, True)
    if backend == "highs" or warm
]
BUILD = [("german-credit", "flowoct", 4), ("german-credit", "rbinoct", 4)]
PRUNE = [(5000, 40, 8, 0.001)]
#: (table, estimator, settings): keyword arguments valid before and after issue 38
ESTIMATOR = [
    ("cancer", "tree", {"lam": 0.01, "max_depth": 3}),
    ("cancer", "tree", {"lam": 0.005, "max_depth": 2, "thresholds": "all"}),
    ("cancer", "tree", {"lam": 0.01, "max_depth": 3, "thresholds": 4}),
    ("monk1", "tree", {"lam": 0.025, "max_depth": 2, "method": "rbinoct"}),
    ("cancer", "cv", {"max_depth": 2, "cv": 3}),
    ("cancer", "fair", {"max_depth": 2, "delta": 0.05}),
    ("monk1", "tree", {"lam": 0.01, "max_depth": 3}),
]
RASHOMON = [
    ("monk1", 4, 0.01, 0.1),
    ("tic-tac-toe", 4, 0.01, 0.05),
    ("german-credit", 3, 0.01, 0.02),
]
COMPARE = [("cancer200", ("exact", "dp"), 2), ("monk1", ("dp", "rbinoct", "flowoct"), 2)]


def workloads() -> list[dict[str, Any]]:
    specs: list[dict[str, Any]] = []
    for dataset, method, depth, lam in SEARCH:
        specs.append(dict(kind="search", dataset=dataset, method=method, depth=depth, lam=lam))
    for dataset, depth, delta in FAIR:
        specs.append(dict(kind="fair", dataset=dataset, depth=depth, delta=delta))
    for dataset, formulation, backend, warm in MIP:
        specs.append(
            dict(
                kind="mip",
                dataset=dataset,
                formulation=formulation,
                backend=backend,
                warm=warm,
                depth=2,
                lam=0.025,
            )
        )
    for dataset, formulation, depth in BUILD:
        specs.append(dict(kind="build", dataset=dataset, formulation=formulation, depth=depth))
    for n, trees, depth, lam in PRUNE:
        specs.append(dict(kind="prune", n=n, trees=trees, depth=depth, lam=lam))
    for dataset, depth, lam, epsilon in RASHOMON:
        specs.append(dict(kind="rashomon", dataset=dataset, depth=depth, lam=lam, epsilon=epsilon))
    for table, estimator, settings in ESTIMATOR:
        specs.append(dict(kind="estimator", table=table, estimator=estimator, **settings))
    for table, methods, depth in COMPARE:
        specs.append(dict(kind="compare", table=table, methods=",".join(methods), depth=depth))
    return specs


def label(spec: dict[str, Any]) -> str:
    return " ".join(f"{v}" for k, v in spec.items() if k != "kind") + f" [{spec['kind']}]"


# ---------------------------------------------------------------------------------- child side
def _formulation(name: str) -> Any:
    from odtkit.formulations import FlowOCT, RBinOCT

    return {"rbinoct": RBinOCT, "flowoct": FlowOCT}[name]()


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Child side: one workload, timed around the call only."""
    import numpy as np

    import odtkit
    from odtkit import datasets, metrics

    file = harness.imported_from("odtkit")["file"]
    kind = spec["kind"]
    if kind in ("estimator", "compare"):
        return _front_end(spec, file)
    if kind == "prune":
        from sklearn.datasets import make_classification
        from sklearn.ensemble import RandomForestClassifier

        from odtkit import pruning

        X, y = make_classification(spec["n"], 20, n_informative=10, random_state=1)
        forest = RandomForestClassifier(
            spec["trees"], max_depth=spec["depth"], random_state=1, n_jobs=1
        ).fit(X, y)
        t0 = time.perf_counter()
        r = pruning.prune(forest, X, y, lam=spec["lam"])
        elapsed = time.perf_counter() - t0
        return _answer(r, elapsed, file)
    ds = datasets.load(spec["dataset"])
    if kind == "search":
        t0 = time.perf_counter()
        r = odtkit.search_tree(
            ds, lam=spec["lam"], max_depth=spec["depth"], method=spec["method"], time_limit=60
        )
        return _answer(r, time.perf_counter() - t0, file)
    if kind == "fair":
        rng = np.random.default_rng(0)
        protected = rng.integers(0, 2, ds.n_samples)
        fairness = odtkit.Fairness("demographic_parity", protected=protected, delta=spec["delta"])
        t0 = time.perf_counter()
        r = odtkit.search_tree(
            ds, lam=0.0, max_depth=spec["depth"], fairness=fairness, time_limit=60
        )
        return _answer(r, time.perf_counter() - t0, file)
    if kind == "rashomon":
        t0 = time.perf_counter()
        rset = odtkit.rashomon(
            ds, lam=spec["lam"], max_depth=spec["depth"], epsilon=spec["epsilon"], time_limit=60
        )
        elapsed = time.perf_counter() - t0
        histogram = rset.objective_histogram().to_dict("records")
        first = [tree.to_dict() for tree in rset[: min(20, rset.count())]]
        return {
            "time": elapsed,
            "status": str(rset.status),
            "objective": float(rset.optimum),
            "bound": float(rset.bound),
            "model": repr((rset.count(), histogram, first)),
            "file": file,
        }
    if kind == "build":
        form = _formulation(spec["formulation"])
        t0 = time.perf_counter()
        model = form.build(ds, max_depth=spec["depth"], lam=0.01)
        elapsed = time.perf_counter() - t0
        return {"time": elapsed, "status": "built", "objective": model.n_vars, "bound": 0.0}
    start = None
    if spec["warm"]:
        start = odtkit.search_tree(ds, lam=spec["lam"], max_depth=spec["depth"]).model
    t0 = time.perf_counter()
    r = odtkit.solve_formulation(
        _formulation(spec["formulation"]),
        ds,
        backend=spec["backend"],
        start=start,
        time_limit=60,
        solve_options={"threads": 1, "seed": 0},
        max_depth=spec["depth"],
        lam=spec["lam"],
    )
    elapsed = time.perf_counter() - t0
    out = _answer(r, elapsed, file)
    out["verified"] = float(metrics.objective(r.model, ds, lam=spec["lam"]))
    return out


def _table(name: str) -> tuple[Any, Any]:
    """A raw table (breast cancer, all of it or its first 200 rows) or a bundled 0/1 one."""
    import numpy as np

    if name.startswith("cancer"):
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True, as_frame=True)
        if name == "cancer200":
            X, y = X.iloc[:200], y.iloc[:200]
        return X, y.to_numpy()
    from odtkit import datasets

    ds = datasets.load(name)
    return ds.X.astype(np.int64), ds.classes[ds.y]


def _front_end(spec: dict[str, Any], file: str) -> dict[str, Any]:
    """An estimator's fit or a compare, timed around the call; the answer with its tree(s)."""
    import warnings

    import numpy as np

    import odtkit

    X, y = _table(spec["table"])
    settings = {k: v for k, v in spec.items() if k not in ("kind", "table", "estimator", "methods")}
    warnings.simplefilter("ignore")
    if spec["kind"] == "compare":
        t0 = time.perf_counter()
        if spec["table"] == "monk1":
            comparison = odtkit.compare(
                "monk1", lam=0.01, max_depth=spec["depth"], methods=spec["methods"], threads=1
            )
        else:
            comparison = odtkit.compare(
                X, y=y, lam=0.01, max_depth=spec["depth"], methods=spec["methods"], threads=1
            )
        elapsed = time.perf_counter() - t0
        runs = list(comparison)
        statuses = {str(r.status) for r in runs}
        return {
            "time": elapsed,
            "status": statuses.pop() if len(statuses) == 1 else ",".join(sorted(statuses)),
            "objective": float(sum(r.objective for r in runs)),
            "bound": float(sum(r.bound for r in runs)),
            "model": repr([(r.method, str(r.status), r.objective, r.bound) for r in runs]),
            "file": file,
        }
    lam = settings.pop("lam", 0.0 if spec["estimator"] == "fair" else 0.01)
    if spec["estimator"] == "cv":
        est = odtkit.OptimalTreeClassifierCV(**settings)
        t0 = time.perf_counter()
        est.fit(X, y)
    elif spec["estimator"] == "fair":
        sensitive = np.random.default_rng(0).integers(0, 2, len(y))
        est = odtkit.FairTreeClassifier(lam=lam, **settings)
        t0 = time.perf_counter()
        est.fit(X, y, sensitive)
    else:
        est = odtkit.OptimalTreeClassifier(lam=lam, **settings)
        t0 = time.perf_counter()
        est.fit(X, y)
    elapsed = time.perf_counter() - t0
    return {
        "time": elapsed,
        "status": str(est.status_),
        "objective": float(est.objective_),
        "bound": float(est.lower_bound_),
        "model": est.to_text(),
        "file": file,
    }


def _answer(result: Any, elapsed: float, file: str) -> dict[str, Any]:
    return {
        "time": elapsed,
        "status": str(result.status),
        "objective": float(result.objective),
        "bound": float(result.lower_bound),
        "file": file,
    }


# --------------------------------------------------------------------------------- parent side
def same_answer(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Same status, objective and bound (1e-9). Only proven answers are compared: an incumbent
    and a bound at a time limit depend on the machine's load, not on the code."""
    if a["status"] != b["status"]:
        return False
    if a["status"] not in ("optimal", "built"):
        return True
    if not math.isclose(a["objective"], b["objective"], rel_tol=1e-9, abs_tol=1e-9):
        return False
    if a.get("model") != b.get("model"):  # the same fitted tree(s), where a workload gives one
        return False
    return math.isclose(a["bound"], b["bound"], rel_tol=1e-9, abs_tol=1e-9)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before-src", required=True, help="src/ of the old code, native built in")
    ap.add_argument("--reps", type=int, default=3, help="runs per side (median)")
    ap.add_argument("--name", default="before_after")
    ap.add_argument("--only", default=None, help="run the workloads whose label contains this")
    harness.add_out_dir(ap)
    args = ap.parse_args(argv)
    rows = []
    for spec in workloads():
        if args.only and args.only not in label(spec):
            continue
        runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for _ in range(args.reps):
            for side, src in (("before", args.before_src), ("after", None)):
                runs[side].append(
                    harness.call_in_child(f"{Path(__file__).stem}:run", spec, timeout=600, src=src)
                )
        before = statistics.median(r["time"] for r in runs["before"])
        after = statistics.median(r["time"] for r in runs["after"])
        same = all(same_answer(runs["before"][0], r) for r in runs["before"] + runs["after"])
        row = {
            "workload": label(spec),
            "spec": spec,
            "before_s": before,
            "after_s": after,
            "ratio": after / before if before > 0 else math.nan,
            "same_answers": same,
            "before_file": runs["before"][0]["file"] if "file" in runs["before"][0] else "",
            "after_file": runs["after"][0]["file"] if "file" in runs["after"][0] else "",
            "answer": {k: runs["after"][0][k] for k in ("status", "objective", "bound")},
        }
        rows.append(row)
        print(
            f"{row['workload']:<55} {before:9.4f} {after:9.4f} {row['ratio']:6.3f} "
            f"{'same' if same else 'DIFFERENT'}",
            flush=True,
        )
    payload = {
        "machine": harness.machine_info(),
        "written": harness.timestamp(),
        "before_src": args.before_src,
        "reps": args.reps,
        "rows": rows,
    }
    harness.write_results(args.name, payload, markdown(payload), out_dir=args.out_dir)
    return 0 if all(r["same_answers"] for r in rows) else 1


def markdown(payload: dict[str, Any]) -> str:
    rows = payload["rows"]
    lines = [
        f"# Before and after, in one run (`benchmarks/before_after.py`, {payload['written']})",
        "",
        f"Each workload ran {payload['reps']} times per side in fresh interpreters, alternating "
        "old and new code; medians of the time around the call alone. Ratio = after / before "
        "(< 1: faster after). Same answers: the same status in every run, and the same objective "
        "and bound (1e-9) where proven (a build: the same number of variables); an incumbent at "
        "a time limit depends on the load, not on the code.",
        "",
    ]
    for kind in ("search", "fair", "mip", "build", "prune", "estimator", "compare"):
        mine = [r for r in rows if r["spec"]["kind"] == kind]
        if not mine:
            continue
        slow = [r for r in mine if r["before_s"] >= 0.05]
        lines.append(
            f"* **{kind}**: {len(mine)} workloads, answers the same in "
            f"{sum(r['same_answers'] for r in mine)}; geometric mean after/before "
            f"{harness.fmt(harness.geomean(r['ratio'] for r in mine))}"
            + (
                f", {harness.fmt(harness.geomean(r['ratio'] for r in slow))} over the "
                f"{len(slow)} that take >= 50 ms before"
                if slow
                else ""
            )
        )
    lines += [""]
    lines += harness.md_table(
        [
            "workload",
            "before s",
            "after s",
            "after / before",
            "same answers",
            "status",
            "objective",
        ],
        [
            [
                r["workload"],
                harness.fmt(r["before_s"]),
                harness.fmt(r["after_s"]),
                harness.fmt(r["ratio"]),
                "yes" if r["same_answers"] else "**no**",
                r["answer"]["status"],
                harness.fmt(r["answer"]["objective"], 6),
            ]
            for r in rows
        ],
    )
    m = payload["machine"]
    lines += ["", f"Machine: {m}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())

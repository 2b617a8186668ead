"""Ctrl-C reaction and time-limit overshoot of every solver and long loop (issue 13, part 3).

Writes ``benchmarks/results/limits.{json,md}``. Each case runs in a fresh child process
(``python benchmarks/limits.py --child CASE MODE``):

* ``sigint``: the child prints ``READY`` once the solve is under way (from a solver's log
  callback when it has one, from a wrapper around the solver a loop calls, or right before a
  native search, which polls every ~5 ms), the parent waits ``delay`` seconds, sends SIGINT and
  times the line ``DONE`` the child prints right after the call returned. The contract: 1 s.
* ``limit``: the call with ``time_limit=LIMIT`` (the model build included; a few cases have a
  limit of their own, :data:`LIMITS`); the overshoot is its wall clock minus the limit. The
  contract: ``0.1 * limit + 1 s``.

The tests (``tests/test_time_limits.py``, ``test_interrupts.py``, ``test_limits.py``) check
what these calls return -- status ``time_limit`` / ``interrupted``, the incumbent, a valid
bound -- but not these seconds, which on a loaded machine are the machine's (issue 22: 9 s for
a 2 s limit at load 15 on 2 cores): they are measured here, with the load beside them.

The load average is printed with every row: on the 2 shared cores the numbers are only as
idle as the machine was.

Usage: ``python benchmarks/limits.py [--cases NAME ...] [--out-dir DIR]``
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import _harness as harness

#: Seconds of every ``limit`` run ...
LIMIT = 2.0
#: ... but these cases', each the limit a test of the same call uses.
LIMITS = {
    "bnb cache": 3.0,
    "corels mining": 0.5,
    # issue 28: the estimators on tables that stalled them, and prune from the fitted forest
    "estimator 1000 classes": 5.0,
    "estimator 10000 columns": 5.0,
    "prune cut from forest": 5.0,
    "prune mip from forest": 5.0,
    "build flowoct highs": 0.05,
    "build flowoct pulp": 0.05,
    "build flowoct pyomo": 0.05,
    "translate rbinoct pulp": 0.3,
    "translate rbinoct pyomo": 0.3,
}


def limit_of(case: str) -> float:
    return LIMITS.get(case, LIMIT)


# ----------------------------------------------------------------------------- the cases
def _random(n: int = 3000, p: int = 30) -> Any:
    import numpy as np

    from odtkit.datasets import Dataset

    rng = np.random.default_rng(1)
    X = rng.random((n, p)) < 0.5
    y = ((X[:, :5].sum(1) + rng.integers(0, 3, n)) % 2).astype(int)
    return Dataset.from_arrays(X, y, name="random")


def _forest(n: int, trees: int, depth: int) -> Any:
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from odtkit.pruning._extract import extract

    X, y = make_classification(n, 30, n_informative=10, random_state=0)
    forest = RandomForestClassifier(trees, max_depth=depth, random_state=0, n_jobs=1)
    return extract(forest.fit(X, y), X, y)


def _after_calls(module: Any, name: str, n: int, ready: Callable[[], None]) -> None:
    """Wrap ``module.name`` so that ``ready()`` runs at its ``n``-th call (a loop is under way)."""
    real, calls = getattr(module, name), []

    def counting(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == n:
            ready()
        return real(*args, **kw)

    setattr(module, name, counting)


def _on_branching(ready: Callable[[], None]) -> Callable[[str], None]:
    def log(line: str) -> None:
        if "Nodes" in line or "B&B" in line:
            ready()

    return log


def _search(method: str, ready: Callable, limit: float | None, **kw: Any) -> Callable:
    from odtkit.core import search_tree
    from odtkit.fairness import Fairness

    data = _random()
    if kw.pop("fair", False):
        kw["fairness"] = Fairness("sp", protected=data.X[:, 7], delta=0.01)
    return lambda: search_tree(data, lam=0.0005, method=method, time_limit=limit, **kw).status


def _corels(ready: Callable, limit: float | None) -> Callable:
    from odtkit.core import search_rule_list

    data = _random()
    return lambda: search_rule_list(data, lam=0.0005, time_limit=limit).status


def _mip(
    formulation: str, backend: str, ready: Callable, limit: float | None, fair: bool = False
) -> Callable:
    from odtkit import Fairness, datasets, formulations
    from odtkit.greedy import greedy_tree
    from odtkit.pipeline import solve_formulation

    data = datasets.load("tic-tac-toe")
    start = greedy_tree(data, lam=0.001, max_depth=3)
    problem: dict[str, Any] = {}
    if fair:
        problem["fairness"] = Fairness("sp", protected=data.X[:, 0], delta=0.01)
        start = None  # the greedy tree need not be fair
    options: dict[str, Any] = {"log_callback": _on_branching(ready)}
    layer = backend
    if backend == "pulp-cbc":
        # CBC's log is read after its run: READY before the call, the parent waits 3 s
        layer, options = "pulp", {"solver": "cbc"}
    return lambda: (
        solve_formulation(
            getattr(formulations, formulation)(),
            data,
            backend=layer,
            start=start,
            lam=0.001,
            max_depth=3,
            time_limit=120 if limit is None else limit,
            solve_options=options,
            **problem,
        ).status
    )


def _big(n: int = 20_000, p: int = 20) -> Any:
    import numpy as np

    from odtkit.datasets import Dataset

    rng = np.random.default_rng(0)
    X = rng.random((n, p)) < 0.5
    y = (X[:, 0] ^ X[:, 1] ^ (rng.random(n) < 0.1)).astype(int)
    return Dataset.from_arrays(X, y, name="big")


def _build(backend: str, ready: Callable, limit: float | None) -> Callable:
    """FlowOCT on 20,000 rows: the build alone takes longer than the limit."""
    from odtkit.formulations import FlowOCT
    from odtkit.pipeline import solve_formulation

    data = _big()
    return lambda: (
        solve_formulation(
            FlowOCT(), data, backend=backend, time_limit=limit, lam=0.001, max_depth=2
        ).status
    )


def _translate(backend: str, ready: Callable, limit: float | None) -> Callable:
    """A built RBinOCT (20,000 rows) handed over: PuLP's / Pyomo's translation exhausts it."""
    from odtkit.formulations import RBinOCT
    from odtkit.greedy import greedy_tree
    from odtkit.pipeline import solve_formulation

    data = _big()
    model = RBinOCT().build(data, lam=0.001, max_depth=2)

    class Prebuilt(RBinOCT):
        def build(self, data: Any, **problem: Any) -> Any:
            return model

    start = greedy_tree(data, lam=0.001, max_depth=2)
    return lambda: (
        solve_formulation(
            Prebuilt(),
            data,
            backend=backend,
            start=start,
            time_limit=limit,
            lam=0.001,
            max_depth=2,
        ).status
    )


def _bnb_cache(ready: Callable, limit: float | None) -> Callable:
    """300 x 20 random, lam 1e-4: ~0.8 GB of bnb caches to free after the limit."""
    import numpy as np

    from odtkit.core import search_tree
    from odtkit.datasets import Dataset

    rng = np.random.default_rng(0)
    data = Dataset.from_arrays(rng.random((300, 20)) < 0.5, (rng.random(300) < 0.5).astype(int))
    return lambda: search_tree(data, lam=0.0001, method="bnb", time_limit=limit).status


def _corels_mining(ready: Callable, limit: float | None) -> Callable:
    """200 x 300 random: mining every pair of literals alone takes seconds."""
    import numpy as np

    from odtkit.core import search_rule_list
    from odtkit.datasets import Dataset

    rng = np.random.default_rng(0)
    data = Dataset.from_arrays(rng.random((200, 300)) < 0.5, rng.random(200) < 0.5)
    return lambda: search_rule_list(data, lam=0.005, time_limit=limit).status


def _compare(ready: Callable, limit: float | None) -> Callable:
    import odtkit

    def call() -> str:
        comparison = odtkit.compare(
            "tic-tac-toe",
            lam=0.001,
            max_depth=3,
            methods=("dp", "rbinoct", "flowoct"),
            time_limit=120 if limit is None else limit,
            log_callback=_on_branching(ready),
        )
        return str(comparison.results["rbinoct"].status)

    return call


def _sweep(n_jobs: int, ready: Callable, limit: float | None) -> Callable:
    import odtkit

    data = _random()

    def call() -> str:
        table = odtkit.sweep(
            data,
            lams=[0.02, 0.01, 0.005, 0.002, 0.001, 0.0005, 0.0002, 0.0001],
            depths=5,
            folds=None,
            methods="dp",
            time_limit=limit,
            n_jobs=n_jobs,
            on_rows=lambda _: ready(),
        )
        return "interrupted" if (table["status"] == "interrupted").any() else "optimal"

    return call


def _path(ready: Callable, limit: float | None) -> Callable:
    from odtkit import _native
    from odtkit.core import regularization_path

    data = _random()
    _after_calls(_native, "search_dp", 3, ready)
    return lambda: (
        regularization_path(
            data, max_depth=5, lam_min=0.001, time_limit=limit, progress=False
        ).status
    )


def _prune(method: str, ready: Callable, limit: float | None) -> Callable:
    import odtkit.pruning._colgen as colgen
    from odtkit.pruning import prune

    data = _forest(2000, 50, 6)
    if method == "colgen":
        _after_calls(colgen, "tree_dp", 120, ready)
    return lambda: prune(data, lam=0.001, method=method, time_limit=limit).status


def _cost_error_path(ready: Callable, limit: float | None) -> Callable:
    from odtkit import _native
    from odtkit.pruning import cost_error_path

    data = _forest(8000, 60, 10)
    _after_calls(_native, "closure_min_cut", 4, ready)
    return lambda: cost_error_path(data, time_limit=limit, progress=False).status


def _wide(n: int, p: int, depth: int, ready: Callable, limit: float | None) -> Callable:
    """Issue 28: the depth-two pass over many binary features (2,000 x 6,000 at depth 2 ran
    58 s for a 1 s limit; Ctrl-C on 20,000 x 3,000 at depth 3 waited 147 s)."""
    import numpy as np

    from odtkit.core import search_tree
    from odtkit.datasets import Dataset

    rng = np.random.default_rng(0)
    data = Dataset.from_arrays(rng.random((n, p)) < 0.5, rng.integers(0, 2, n), name="wide")
    return lambda: search_tree(data, lam=0.001, max_depth=depth, time_limit=limit).status


def _estimator(kind: str, ready: Callable, limit: float | None) -> Callable:
    """Issue 28: OptimalTreeClassifier() did not return in 60 s on these raw tables; the fit
    (threshold guessing and binarization included) is charged to its time limit."""
    import numpy as np

    from odtkit import OptimalTreeClassifier

    rng = np.random.default_rng(0)
    if kind == "classes":
        X, y = rng.random((2000, 5)), rng.integers(0, 1000, 2000)
    else:
        X, y = rng.random((100, 10_000)), rng.integers(0, 2, 100)
    estimator = OptimalTreeClassifier(time_limit=limit if limit is not None else 60.0)
    return lambda: estimator.fit(X, y).result_.status


def _prune_forest(method: str, ready: Callable, limit: float | None) -> Callable:
    """Issue 28: prune from the fitted forest, the extraction inside the limit (and Ctrl-C)."""
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from odtkit.pruning import prune

    X, y = make_classification(30_000, 20, n_informative=10, random_state=0)
    forest = RandomForestClassifier(60, max_depth=10, random_state=0, n_jobs=1).fit(X, y)
    return lambda: prune(forest, X, y, lam=0.001, method=method, time_limit=limit).status


#: name -> (prepare(ready, time_limit) -> the call, SIGINT delay after READY, READY right
#: before the call (else the case says READY itself once under way), has a time limit)
CASES: dict[str, tuple[Callable[..., Callable], float, bool, bool]] = {
    "dp": (lambda r, t: _search("dp", r, t, max_depth=6), 1.0, True, True),
    "dp anytime": (lambda r, t: _search("dp", r, t, max_depth=None), 1.0, True, True),
    "bnb": (lambda r, t: _search("bnb", r, t, max_depth=6), 1.0, True, True),
    "fair dp": (lambda r, t: _search("dp", r, t, max_depth=6, fair=True), 1.0, True, True),
    "corels": (_corels, 1.0, True, True),
    **{
        f"{f.lower()} {b}": (
            lambda r, t, f=f, b=b: _mip(f, b, r, t),
            3.0 if b == "pulp-cbc" else 0.2,
            b == "pulp-cbc",
            True,
        )
        for f in ("RBinOCT", "FlowOCT")
        for b in ("highs", "pyomo", "pulp", "pulp-cbc")
    },
    **{
        f"{f.lower()} highs": (lambda r, t, f=f: _mip(f, "highs", r, t), 0.2, False, True)
        for f in ("BinOCT", "PathOCT")
    },
    "fair flowoct highs": (
        lambda r, t: _mip("FlowOCT", "highs", r, t, fair=True),
        0.2,
        False,
        True,
    ),
    "compare": (_compare, 0.2, False, False),
    "sweep serial": (lambda r, t: _sweep(1, r, t), 0.0, False, False),
    "sweep pool": (lambda r, t: _sweep(2, r, t), 0.0, False, False),
    "regularization_path": (_path, 0.0, False, True),
    "prune lp": (lambda r, t: _prune("lp", r, t), 1.0, True, True),
    "prune mip": (lambda r, t: _prune("mip", r, t), 3.0, True, True),
    "prune colgen": (lambda r, t: _prune("colgen", r, t), 0.0, False, True),
    "cost_error_path": (_cost_error_path, 0.0, False, True),
    **{
        f"build flowoct {b}": (lambda r, t, b=b: _build(b, r, t), 0.0, True, True)
        for b in ("highs", "pulp", "pyomo")
    },
    **{
        f"translate rbinoct {b}": (lambda r, t, b=b: _translate(b, r, t), 0.0, True, True)
        for b in ("pulp", "pyomo")
    },
    "bnb cache": (_bnb_cache, 0.0, True, True),
    "corels mining": (_corels_mining, 0.0, True, True),
    "dp wide 2000x6000 depth 2": (lambda r, t: _wide(2000, 6000, 2, r, t), 1.0, True, True),
    "dp wide 20000x3000 depth 3": (lambda r, t: _wide(20_000, 3000, 3, r, t), 1.0, True, True),
    "estimator 1000 classes": (lambda r, t: _estimator("classes", r, t), 1.0, True, True),
    "estimator 10000 columns": (lambda r, t: _estimator("columns", r, t), 1.0, True, True),
    "prune cut from forest": (lambda r, t: _prune_forest("cut", r, t), 1.0, True, True),
    "prune mip from forest": (lambda r, t: _prune_forest("mip", r, t), 1.0, True, True),
}
#: Cases measured under their time limit only (what Ctrl-C does there another case shows).
LIMIT_ONLY = {case for case in CASES if case.startswith(("build ", "translate "))} | {
    "bnb cache",
    "corels mining",
    "fair flowoct highs",  # Ctrl-C waits out FlowOCT's root LP (see NOTES): minutes
}


# ------------------------------------------------------------------------------ the child
def child(case: str, mode: str) -> None:
    out = os.fdopen(os.dup(1), "w")  # Pyomo's appsi captures fd 1 during its solves
    said = threading.Event()

    def ready() -> None:
        if not said.is_set():
            said.set()
            print("READY", file=out, flush=True)

    prepare, _, before, _ = CASES[case]
    call = prepare(ready, limit_of(case) if mode == "limit" else None)
    if before:
        ready()
    t0 = time.perf_counter()
    status = str(call())
    wall = time.perf_counter() - t0
    print("DONE", file=out, flush=True)
    print(f"STATUS {status} {wall:.4f}", file=out, flush=True)


# ----------------------------------------------------------------------------- the parent
def _lines(proc: subprocess.Popen) -> Any:
    import queue

    got: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:
            got.put(line.strip())
        got.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return got


def measure(case: str, mode: str, timeout: float = 300.0) -> dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", case, mode]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines = _lines(proc)
    row: dict[str, Any] = {"case": case, "mode": mode, "load": os.getloadavg()[0]}
    sent = None
    try:
        while True:
            line = lines.get(timeout=timeout)
            if line is None:
                break
            if line == "READY" and mode == "sigint":
                time.sleep(CASES[case][1])
                sent = time.perf_counter()
                proc.send_signal(signal.SIGINT)
            elif line == "DONE" and sent is not None:
                row["reaction_s"] = time.perf_counter() - sent
            elif line.startswith("STATUS "):
                _, status, wall = line.split()
                row["status"], row["wall_s"] = status, float(wall)
                if mode == "limit":
                    row["limit_s"] = limit_of(case)
                    row["overshoot_s"] = float(wall) - limit_of(case)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return row


def render(payload: dict[str, Any]) -> str:
    rows = {(r["case"], r["mode"]): r for r in payload["rows"]}
    lines = [
        "# Ctrl-C reaction and time-limit overshoot",
        "",
        f"{payload['when']}; {payload['machine']}. Time limit {LIMIT:g} s unless the `limit` "
        "column says otherwise. Every run in a fresh child process; `reaction` is SIGINT -> the "
        "call returned (contract 1 s), `overshoot` is wall clock - the limit with the model "
        f"build included (contract 0.1 x limit + 1 s: {0.1 * LIMIT + 1:.1f} s at "
        f"{LIMIT:g} s). `load` is the 1-minute load average at the start of the run (2 cores): "
        "numbers under load > 2 are labelled by it. The tests assert the statuses and answers, "
        "not these seconds.",
        "",
    ]
    table = []
    for case in payload["cases"]:
        s, t = rows.get((case, "sigint"), {}), rows.get((case, "limit"), {})
        table.append(
            [
                case,
                s.get("status", "–"),
                harness.fmt(s.get("reaction_s")),
                harness.fmt(s.get("load"), 2),
                t.get("status", "n/a"),
                harness.fmt(t.get("limit_s")),
                harness.fmt(t.get("overshoot_s")),
                harness.fmt(t.get("load"), 2),
            ]
        )
    lines += harness.md_table(
        [
            "solver / loop",
            "status after SIGINT",
            "reaction s",
            "load",
            "status at limit",
            "limit s",
            "overshoot s",
            "load",
        ],
        table,
    )
    lines += ["", *payload.get("notes", [])]
    return "\n".join(lines) + "\n"


NOTES = [
    "Known limits (HiGHS 1.16). An LP that HiGHS solves inside its MIP checks neither the "
    "interrupt callbacks nor a time limit changed after it started, so FlowOCT's root LP "
    "(13-30 s on tic-tac-toe at depth 3) delays Ctrl-C until it ends; under a time limit it "
    "got the remaining time when it started, so the limit holds. HiGHS's presolve checks "
    "neither: IP3 of a 50-tree forest (460k rows) spends 1.4 s in LP presolve and 2.4 s in "
    "MIP presolve before any check (prune lp / mip). CBC reads no signal in its "
    "preprocessing, root LP and root cuts: it is killed 0.5 s after the forwarded SIGINT (3 s "
    "once its log has shown an incumbent, which it writes if it reads the signal in that "
    "time; a second Ctrl-C kills at once), and the answer is then the start. Everywhere else "
    "HiGHS stops within ms: a thread sees the SIGINT at once and sets its time limit to 0.",
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", nargs=2, metavar=("CASE", "MODE"), help=argparse.SUPPRESS)
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    harness.add_out_dir(ap)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return 0
    rows = []
    for case in args.cases:
        for mode in ("sigint", "limit"):
            if mode == "limit" and not CASES[case][3]:
                continue
            if mode == "sigint" and case in LIMIT_ONLY:
                continue
            rows.append(measure(case, mode))
            print(rows[-1], flush=True)
    payload = {
        "when": harness.timestamp(),
        "machine": harness.machine_info("python", "machine", "cpus"),
        "limit_s": LIMIT,
        "cases": args.cases,
        "rows": rows,
        "notes": NOTES,
    }
    harness.write_results("limits", payload, render(payload), out_dir=args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())

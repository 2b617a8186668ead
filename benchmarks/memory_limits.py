"""Benchmark: how closely every native search keeps its memory budget (issue 13).

Writes benchmarks/results/memory_limits.json and memory_limits.md. Each search runs in a fresh
child process on an instance that outgrows the budget, in two modes:

* ``budget``: ``memory_limit_mb`` = B. Reported: the search's own count at its stop
  (``peak_memory_mb``), what the process really grew by (resident: VmHWM; address space:
  VmPeak), the time to the stop, the status and the gap.
* ``ulimit``: a hard ``RLIMIT_AS`` of B above what the child has mapped and no
  ``memory_limit_mb``. The default budget sees the limit (half its room).
* ``exhausted``: the same hard limit with ``memory_limit_mb`` = 100 B, as when other processes
  took the memory a budget assumed: an allocation fails inside the search, which must end with
  status ``memory_limit``, its incumbent and a valid bound all the same (``out_of_memory``).

Usage: ``python benchmarks/memory_limits.py [--budgets 100 400] [--out-dir DIR]``
"""

from __future__ import annotations

import argparse
from typing import Any

from _harness import (
    ChildError,
    add_out_dir,
    call_in_child,
    fmt,
    machine_info,
    md_table,
    timestamp,
    write_results,
)

#: search -> (rows, features, keyword arguments); random labels make every search hungry
SEARCHES: dict[str, tuple[int, int, dict[str, Any]]] = {
    "dp (recursive)": (5000, 24, {"lam": 0.0005, "strategy": "recursive"}),
    "dp (anytime)": (5000, 24, {"lam": 0.0005, "strategy": "anytime"}),
    "dp (queue), depth 5": (5000, 24, {"lam": 0.0005, "strategy": "queue", "max_depth": 5}),
    "bnb, depth 5": (5000, 24, {"lam": 0.0005, "method": "bnb", "max_depth": 5}),
    "fair dp (eodds), depth 4": (3000, 16, {"lam": 0.0005, "max_depth": 4, "fair": "eodds"}),
    "CORELS": (300, 40, {"lam": 0.001, "rules": True}),
}


def _status_mb(field: str) -> float:
    """A field of /proc/self/status in MB (child side: odtkit is importable there)."""
    from odtkit._limits import proc_kb

    return (proc_kb("/proc/self/status", field) or float("nan")) / 1024.0


def run(name: str, mode: str, budget_mb: float) -> dict[str, Any]:
    """Child side: one search in ``mode`` with budget ``budget_mb``; its measurements."""
    import resource
    import time

    import numpy as np

    from odtkit import Fairness, datasets
    from odtkit.core import search_rule_list, search_tree

    n, p, kwargs = SEARCHES[name]
    kwargs = dict(kwargs)
    rng = np.random.default_rng(0)
    X = rng.random((n, p)) < 0.5
    y = (X[:, 0] ^ X[:, 1] ^ (rng.random(n) < 0.25)).astype(int)
    fair = kwargs.pop("fair", None)
    if fair:
        y = (X[:, 2] & X[:, 3]) | (X[:, 0] & (rng.random(n) < 0.5)) ^ (rng.random(n) < 0.1)
        kwargs["fairness"] = Fairness(notion=fair, protected=X[:, 2].astype(int), delta=0.01)
    data = datasets.Dataset.from_arrays(X, y.astype(int))
    rules = kwargs.pop("rules", False)
    search = search_rule_list if rules else search_tree
    search(data, lam=0.5, time_limit=5) if rules else search(data, lam=0.5, max_depth=1)
    if mode == "budget":
        kwargs["memory_limit_mb"] = budget_mb
    else:
        if mode == "exhausted":
            kwargs["memory_limit_mb"] = 100 * budget_mb
        room = int((_status_mb("VmSize") + budget_mb) * 2**20)
        resource.setrlimit(resource.RLIMIT_AS, (room, room))
    rss0, vm0 = _status_mb("VmRSS"), _status_mb("VmSize")
    start = time.perf_counter()
    result = search(data, time_limit=120, **kwargs)
    seconds = time.perf_counter() - start
    return {
        "search": name,
        "mode": mode,
        "budget_mb": budget_mb,
        "status": str(result.status),
        "seconds": seconds,
        "gap": result.objective - result.lower_bound,
        "counted_mb": result.peak_memory_mb,
        "resident_growth_mb": _status_mb("VmHWM") - rss0,
        "address_growth_mb": _status_mb("VmPeak") - vm0,
        "out_of_memory": float(result.stats.get("out_of_memory", 0.0)),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=float, nargs="+", default=[100.0, 400.0])
    add_out_dir(parser)
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for name in SEARCHES:
        for budget in args.budgets:
            for mode in ("budget", "ulimit", "exhausted"):
                try:
                    row = call_in_child("memory_limits:run", name, mode, budget, timeout=600)
                except ChildError as exc:
                    row = {"search": name, "mode": mode, "budget_mb": budget, "error": str(exc)}
                rows.append(row)
                print(row, flush=True)
    lines = [
        "# Memory budgets: what each search counts and what the process really uses",
        "",
        f"{timestamp()}; {machine_info('python', 'cpus', 'load_average')}.",
        "`budget`: memory_limit_mb = B. `ulimit`: RLIMIT_AS of B above the child's mapping and "
        "the default budget (half that room). `exhausted`: the same RLIMIT_AS and "
        "memory_limit_mb = 100 B, so an allocation fails inside the search. Growth is "
        "measured from just before the search "
        "(VmHWM for resident memory, VmPeak for address space). `caught`: an allocation failed "
        "and the search ended through its bad_alloc handler (status memory_limit all the same).",
        "",
    ]
    lines += md_table(
        [
            "search",
            "mode",
            "B MB",
            "status",
            "s",
            "gap",
            "counted MB",
            "resident growth MB",
            "address growth MB",
            "caught",
        ],
        [
            [
                r["search"],
                r["mode"],
                fmt(r["budget_mb"]),
                r.get("status", r.get("error", "–")[-80:]),
                fmt(r.get("seconds")),
                fmt(r.get("gap")),
                fmt(r.get("counted_mb")),
                fmt(r.get("resident_growth_mb")),
                fmt(r.get("address_growth_mb")),
                "yes" if r.get("out_of_memory") else "no",
            ]
            for r in rows
        ],
    )
    write_results(
        "memory_limits",
        {"timestamp": timestamp(), "machine": machine_info(), "results": rows},
        "\n".join(lines) + "\n",
        out_dir=args.out_dir,
    )


if __name__ == "__main__":
    main()

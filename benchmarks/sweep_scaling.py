"""``odtkit.sweep`` serial, on a 2-worker process pool and on a 2-worker Dask LocalCluster, with
the simulated makespan of its scheduler (and of the grid order) on 2-100 workers.

Writes ``benchmarks/results/sweep_scaling.{json,md}``. The grid is issue 27's: regularization
paths (``lams="path"``) of compas-binary, monk1-3, car and tic-tac-toe, depths ``--depths``
(default 4 5 6), ``--folds`` folds (default 10): 180 tasks. Each mode runs in a fresh
interpreter (``_harness.call_in_child``), timing the whole ``sweep`` call (pool start-up
included; the Dask cluster is started before the clock). With ``--before-src`` (an old source
tree with its native module in place) every mode also runs on that code, alternately with
this checkout's, so both see the same machine load. Every mode must return the same table (all
columns but ``time``): the script checks it across modes and sides.

From the serial run's per-task times (this checkout's), the makespan of list scheduling on W
workers is simulated (``odtkit._schedule.simulate``) for the sweep's longest-first scheduler
(with the refinement it makes as tasks finish, replayed) and for the grid's order (what the
pool did before), against the ideal max(sum / W, longest task). A start-up probe (a 2-task
sweep on a 2-worker pool) measures what spawning the workers and importing odtkit costs.

Usage::

    python benchmarks/sweep_scaling.py [--depths 4 5 6] [--folds 10] [--workers 2]
        [--before-src /tmp/old/src] [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as harness  # noqa: E402

DATASETS = ("compas-binary", "monk1", "monk2", "monk3", "car", "tic-tac-toe")
SIMULATED_WORKERS = (2, 4, 8, 16, 32, 64, 100)


# --- child side ---------------------------------------------------------------------------


def run_mode(mode: str, workers: int, grid: dict[str, Any]) -> dict[str, Any]:
    """One ``sweep`` of ``grid`` in ``mode`` ("serial", "pool", "dask", "startup"): its wall
    time, a digest of its table (all columns but ``time``) and each task's own time."""
    import odtkit
    from odtkit import sweep
    from odtkit.sweeping import SWEEP_COLUMNS

    names = [n for n in grid["datasets"] if harness.load_dataset(n) is not None]
    kwargs: dict[str, Any] = {
        "lams": "path",
        "depths": grid["depths"],
        "folds": grid["folds"],
        "progress": False,
    }
    if mode == "startup":  # two millisecond tasks: the pool's start-up and nothing else
        names, kwargs = ["monk1"], {"lams": (0.1,), "depths": (1,), "folds": 2, "progress": False}
    load = harness.machine_info("load_average")["load_average"][0]
    cluster = client = None
    if mode == "dask":
        import distributed

        cluster = distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = distributed.Client(cluster)
        kwargs["client"] = client
    else:
        kwargs["n_jobs"] = 1 if mode == "serial" else workers
    try:
        start = time.perf_counter()
        table = sweep(names, **kwargs)
        wall = time.perf_counter() - start
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    columns = [c for c in SWEEP_COLUMNS if c != "time"]
    digest = hashlib.sha256(table[columns].to_csv(index=False).encode()).hexdigest()[:16]
    tasks = table.groupby(["dataset", "fold", "depth"], sort=False)["time"].max().reset_index()
    return {
        "mode": mode,
        "workers": workers,
        "wall_s": wall,
        "rows": len(table),
        "all_optimal": bool((table["status"] == "optimal").all()),
        "digest": digest,
        "load_at_start": load,
        "odtkit": str(Path(odtkit.__file__).resolve().parents[1]),
        "task_times": [
            [r.dataset, int(r.fold), int(r.depth), float(r.time)] for r in tasks.itertuples()
        ],
    }


# --- parent side --------------------------------------------------------------------------


def simulated(grid: dict[str, Any], task_times: list[list[Any]]) -> list[dict[str, Any]]:
    """Makespans of the longest-first scheduler and of the grid order on the measured times."""
    from odtkit import sweeping
    from odtkit._schedule import FifoOrder, ideal_makespan, simulate

    names = [n for n in grid["datasets"] if harness.load_dataset(n) is not None]
    tasks, shipped = sweeping._grid(
        names, "path", grid["depths"], grid["folds"], ["dp"], 60.0, 0.0, "highs", 0
    )
    measured = {(d, f, depth): t for d, f, depth, t in task_times}
    times = [measured[(t.dataset, t.fold, t.depth)] for t in tasks]
    schedule = sweeping._schedule(tasks, shipped)
    priors = [schedule.estimate(t.index) for t in tasks]
    rows = [{"estimated_serial_s": sum(priors), "estimated_longest_s": max(priors)}]
    for w in SIMULATED_WORKERS:
        ideal = ideal_makespan(times, w)
        lpt = simulate(times, w, sweeping._schedule(tasks, shipped))
        fifo = simulate(times, w, FifoOrder(range(len(tasks))))
        rows.append(
            {
                "workers": w,
                "ideal_s": ideal,
                "longest_first_s": lpt,
                "grid_order_s": fifo,
                "longest_first_of_ideal": ideal / lpt,
                "grid_order_of_ideal": ideal / fifo,
                "speedup_longest_first": sum(times) / lpt,
                "speedup_ideal": sum(times) / ideal,
            }
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--depths", type=int, nargs="+", default=[4, 5, 6])
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument(
        "--before-src", help="source folder of the code before the change (native module built)"
    )
    ap.add_argument("--no-dask", action="store_true", help="skip the Dask LocalCluster mode")
    ap.add_argument("--reps", type=int, default=1, help="rounds of the parallel modes")
    harness.add_out_dir(ap)
    args = ap.parse_args()
    grid = {"datasets": args.datasets, "depths": args.depths, "folds": args.folds}
    sides = [("after", None)] + ([("before", args.before_src)] if args.before_src else [])
    # the serial mode runs the same solves in the same order on both sides: once, as the
    # reference of both; the parallel modes alternate sides within each round
    plan: list[tuple[str, int, str, str | None]] = [
        ("startup", args.workers, side, src) for side, src in sides
    ]
    plan.append(("serial", 1, "after", None))
    parallel = ["pool"] + ([] if args.no_dask else ["dask"])
    for rep in range(args.reps):
        order = sides if rep % 2 == 0 else sides[::-1]
        plan += [(mode, args.workers, side, src) for mode in parallel for side, src in order]
    load_before = harness.machine_info("load_average")["load_average"]
    runs: list[dict[str, Any]] = []
    for mode, workers, side, src in plan:
        row = harness.call_in_child(
            f"{Path(__file__).stem}:run_mode", mode, workers, grid, timeout=1800, src=src
        )
        row["side"] = side
        runs.append(row)
        print(
            f"{side:6} {mode:8} {workers} workers: {row['wall_s']:.2f} s, load "
            f"{row['load_at_start']:.1f}, digest {row['digest']} ({row['odtkit']})",
            file=sys.stderr,
            flush=True,
        )
    serial_after = next(r for r in runs if r["mode"] == "serial")
    for r in runs:
        r["same_table"] = r["mode"] == "startup" or r["digest"] == serial_after["digest"]
        if r["mode"] != "startup":
            r["speedup_vs_serial"] = serial_after["wall_s"] / r["wall_s"]
            r["efficiency"] = serial_after["wall_s"] / (r["workers"] * r["wall_s"])
            r["task_time_sum_s"] = sum(t[-1] for t in r["task_times"])
    # each task's least time over this checkout's runs (the same solve each time): a task that
    # another job's burst slowed in one run is not taken for a long task
    least: dict[tuple[str, int, int], float] = {}
    for r in runs:
        if r["side"] == "after" and r["mode"] != "startup":
            for dataset, fold, depth, seconds in r["task_times"]:
                key = (dataset, fold, depth)
                least[key] = min(seconds, least.get(key, seconds))
    task_min = [[*key, seconds] for key, seconds in least.items()]
    for r in runs:
        if r is not serial_after:
            del r["task_times"]  # the simulation's inputs are kept; of the rest, the sums
    payload = {
        "generated": harness.timestamp(),
        "machine": harness.machine_info(),
        "load_before": load_before,
        "load_after": harness.machine_info("load_average")["load_average"],
        "grid": grid,
        "command": "python benchmarks/sweep_scaling.py " + " ".join(sys.argv[1:]),
        "n_tasks": len(serial_after["task_times"]),
        "runs": runs,
    }
    payload["task_times_least"] = task_min
    estimate, *payload["simulated"] = simulated(grid, task_min)
    payload.update(estimate)
    payload["simulated_serial_run"] = simulated(grid, serial_after["task_times"])[1:]
    harness.write_results("sweep_scaling", payload, render(payload), out_dir=args.out_dir)
    print(render(payload))
    return 0


def rerender(out_dir: Any = harness.RESULTS) -> None:
    """Rewrite the Markdown from the committed JSON (no new measurement)."""
    payload = harness.read_results("sweep_scaling", out_dir)
    harness.write_results("sweep_scaling", None, render(payload), out_dir=out_dir)


def render(payload: dict[str, Any]) -> str:
    grid = payload["grid"]
    runs = payload["runs"]
    reference = next(r for r in runs if r["mode"] == "serial")
    times = [t[-1] for t in payload.get("task_times_least", reference["task_times"])]
    serial = reference["wall_s"]
    lines = [
        "# odtkit.sweep: serial, a process pool, a Dask LocalCluster; simulated 2-100 workers",
        "",
        f"Command: `{payload['command']}` ({payload['generated']}). Grid: regularization paths "
        f"of {', '.join(grid['datasets'])} at depths {', '.join(map(str, grid['depths']))}, "
        f"{grid['folds']} folds: {payload['n_tasks']} tasks; their own times (least over the "
        f"runs) sum to {sum(times):.1f} s, the longest is {max(times):.2f} s. **Load average "
        f"before {payload['load_before'][0]:.1f}, after {payload['load_after'][0]:.1f} on "
        f"{payload['machine']['cpus']} cores** shared with other jobs (each run's load at its "
        "start in the table). *after*: this checkout (longest first, datasets shipped once per "
        "worker); *before*: `--before-src` (grid order, each task pickling its fold). Each run "
        "is a fresh interpreter; wall = the whole `sweep` call, pool start-up included, the "
        "Dask cluster started before the clock. Efficiency = serial wall / (workers x wall); "
        "*occupancy* = sum of the tasks' own times / (workers x wall): how much of the "
        "wall the workers spent in tasks (start-up, the parent's dispatch and a last task "
        "running alone are the rest); unlike the efficiency it does not fall when other jobs "
        "slow every task down (a sum of task times well above serial's says they did).",
        "",
    ]
    table = []
    for r in runs:
        if r["mode"] == "startup":
            continue
        table.append(
            [
                r["side"],
                r["mode"],
                r["workers"],
                f"{r['wall_s']:.2f}",
                f"{r['speedup_vs_serial']:.2f}",
                f"{r['efficiency']:.2f}",
                f"{r['task_time_sum_s']:.1f}",
                f"{r['task_time_sum_s'] / (r['workers'] * r['wall_s']):.2f}",
                f"{r['load_at_start']:.1f}",
                r["rows"],
                r["all_optimal"],
                r["same_table"],
            ]
        )
    lines += harness.md_table(
        "side | mode | workers | wall s | speed-up vs serial | efficiency | sum of task times "
        "s | occupancy | load at start | rows | all optimal | same table".split(" | "),
        table,
    )
    medians = []
    for side in ("after", "before"):
        for mode in ("pool", "dask"):
            walls = [r["wall_s"] for r in runs if r["side"] == side and r["mode"] == mode]
            if walls:
                wall = statistics.median(walls)
                workers = next(r["workers"] for r in runs if r["mode"] == mode)
                occupancy = statistics.median(
                    r["task_time_sum_s"] / (r["workers"] * r["wall_s"])
                    for r in runs
                    if r["side"] == side and r["mode"] == mode
                )
                medians.append(
                    [side, mode, workers, len(walls), f"{wall:.2f}", f"{serial / wall:.2f}"]
                    + [f"{serial / (workers * wall):.2f}", f"{occupancy:.2f}"]
                )
    lines += [
        "",
        f"Median over the rounds (serial {serial:.2f} s, once: the same solves in the same "
        "order on both sides):",
        "",
    ]
    lines += harness.md_table(
        "side | mode | workers | rounds | median wall s | speed-up | efficiency | median "
        "occupancy".split(" | "),
        medians,
    )
    lines += [
        "",
        f"The plan's estimate (`sweep(plan=True)`, from rows, features, depth, path): serial "
        f"{payload['estimated_serial_s']:.1f} s (measured {sum(times):.1f} s), longest task "
        f"{payload['estimated_longest_s']:.2f} s (measured {max(times):.2f} s).",
    ]
    startup = [r for r in runs if r["mode"] == "startup"]
    if startup:
        said = ", ".join(f"{r['wall_s']:.2f} s ({r['side']})" for r in startup)
        lines += [
            "",
            f"Pool start-up (a 2-task sweep of millisecond tasks on {startup[0]['workers']} "
            f"spawned workers: spawn, import odtkit, install the datasets): {said}. A pool "
            "lives for one sweep, so this is paid once per `sweep` call, not per task.",
        ]
    lines += [
        "",
        "## Simulated makespan on W workers (list scheduling of the measured task times)",
        "",
        "Longest first replays the sweep's scheduler (prior estimates, refined by each finished "
        "task's time); grid order is what the pool did before. No overheads: compare the "
        "ratios, not the seconds. Task times: each task's least time over this checkout's "
        "serial, pool and Dask runs (the same solve each time; a burst of another job in one "
        "run is not taken for the task's cost).",
        "",
    ]
    lines += _simulation_table(payload["simulated"])
    if payload.get("simulated_serial_run"):
        lines += ["", "The same on the serial run's task times alone:", ""]
        lines += _simulation_table(payload["simulated_serial_run"])
    return "\n".join(lines) + "\n"


def _simulation_table(simulated: list[dict[str, Any]]) -> list[str]:
    return harness.md_table(
        "W | ideal max(sum/W, longest) s | longest first s | of ideal | grid order s | "
        "of ideal | speed-up longest first | ideal speed-up".split(" | "),
        [
            [
                s["workers"],
                f"{s['ideal_s']:.2f}",
                f"{s['longest_first_s']:.2f}",
                f"{100 * s['longest_first_of_ideal']:.0f} %",
                f"{s['grid_order_s']:.2f}",
                f"{100 * s['grid_order_of_ideal']:.0f} %",
                f"{s['speedup_longest_first']:.2f}",
                f"{s['speedup_ideal']:.2f}",
            ]
            for s in simulated
        ],
    )


if __name__ == "__main__":
    sys.exit(main())

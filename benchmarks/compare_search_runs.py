"""Two runs of ``search_vs_peers.py`` side by side: did our figures hold across a change?

Run the benchmark on the old and the new code on the same machine, back to back (each writes
its own ``search_vs_peers.json``), then::

    python benchmarks/compare_search_runs.py OLD.json NEW.json --name consolidation_search

(the consolidation of issue 9 kept its two inputs as
``results/consolidation_search_{old,new}_run.json``).

For each of our tools (dp, bnb) it reports the settings both runs certified, whether their
objectives agree (1e-9), the new/old time ratio (geometric mean overall and where the old run
needed at least 50 ms), our time over each peer's in each run, and the hard settings (no proof
within the limit) with incumbent and bound at the limit in both runs. Writes
``benchmarks/results/NAME.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import _harness as harness

OURS = ("dp", "bnb")
PEERS = ("gosdt", "streed")


def _runs(path: Path) -> tuple[dict[tuple, dict[str, Any]], dict[str, Any]]:
    payload = json.loads(Path(path).read_text())
    runs = {(r["tool"], r["dataset"], r["lam"], r["depth"]): r for r in payload["runs"]}
    return runs, payload.get("meta", {})


def _peer_ratios(runs: dict[tuple, dict], tool: str, peer: str) -> harness.RatioSummary:
    ratios, peer_times = [], []
    for key, row in runs.items():
        other = runs.get((peer, *key[1:]))
        if key[0] == tool and other and row.get("optimal") and other.get("optimal"):
            ratios.append(row["time"] / other["time"])
            peer_times.append(other["time"])
    return harness.ratio_summary(ratios, peer_times=peer_times)


def compare(old: dict[tuple, dict], new: dict[tuple, dict]) -> dict[str, Any]:
    """The comparison as plain data (see the module docstring)."""
    out: dict[str, Any] = {}
    for tool in OURS:
        shared = [k for k in new if k[0] == tool and k in old]
        certified = [k for k in shared if new[k].get("optimal") and old[k].get("optimal")]
        agree = sum(abs(new[k]["objective"] - old[k]["objective"]) <= 1e-9 for k in certified)
        ratios = [new[k]["time"] / old[k]["time"] for k in certified]
        summary = harness.ratio_summary(ratios, peer_times=[old[k]["time"] for k in certified])
        hard = [
            {
                "setting": list(k[1:]),
                **{
                    f"{label}_{field}": run[k].get(field, math.nan)
                    for label, run in (("old", old), ("new", new))
                    for field in ("status", "objective", "lower_bound")
                },
            }
            for k in sorted(shared, key=str)
            if not new[k].get("optimal") and new[k].get("status") != "skipped"
        ]
        out[tool] = {
            "settings": len(shared),
            "certified_by_both": len(certified),
            "objectives_agree": agree,
            "new_over_old": summary.geomean,
            "new_over_old_50ms": summary.geomean_floor,
            "n_50ms": summary.n_floor,
            "vs_peers": {
                peer: {
                    label: {
                        "geomean": s.geomean,
                        "n": s.n,
                        "geomean_50ms": s.geomean_floor,
                        "n_50ms": s.n_floor,
                    }
                    for label, s in (
                        ("old", _peer_ratios(old, tool, peer)),
                        ("new", _peer_ratios(new, tool, peer)),
                    )
                }
                for peer in PEERS
            },
            "hard": hard,
        }
    return out


def render(result: dict[str, Any], meta: dict[str, Any]) -> str:
    f = harness.fmt
    lines = [
        "# Search core across a change: old vs new run of `search_vs_peers.py`",
        "",
        *(
            f"* {label} run: {'quick' if m.get('quick') else 'full'} grid, time limit "
            f"{m.get('time_limit')} s, {m.get('reps')} repetition(s), written {m.get('written')}"
            for label, m in (("old", meta.get("old", {})), ("new", meta.get("new", {})))
        ),
        "",
        "Ratios are geometric means of time ratios (< 1: the first is faster); '≥ 50 ms' keeps "
        "the settings where the denominator needs at least 50 ms.",
        "",
    ]
    for tool, r in result.items():
        lines += [
            f"## {tool}",
            "",
            f"{r['settings']} settings in both runs, {r['certified_by_both']} certified by both, "
            f"objectives agree on {r['objectives_agree']}. New/old time: "
            f"{f(r['new_over_old'])} ({f(r['new_over_old_50ms'])} over the {r['n_50ms']} "
            "settings where the old run needs ≥ 50 ms).",
            "",
        ]
        rows = [
            [
                peer,
                label,
                f(s["geomean"]),
                s["n"],
                f(s["geomean_50ms"]),
                s["n_50ms"],
            ]
            for peer, by_run in r["vs_peers"].items()
            for label, s in by_run.items()
        ]
        lines += harness.md_table(
            ["peer", "run", f"{tool}/peer", "settings", "≥ 50 ms", "settings ≥ 50 ms"], rows
        )
        if r["hard"]:
            lines += ["", "Hard settings (no proof within the limit), incumbent / bound:", ""]
            lines += harness.md_table(
                ["dataset, λ, depth", "old", "new"],
                [
                    [
                        ", ".join(str(v) for v in h["setting"]),
                        f"{h['old_status']} {f(h['old_objective'], 6)} / "
                        f"{f(h['old_lower_bound'], 6)}",
                        f"{h['new_status']} {f(h['new_objective'], 6)} / "
                        f"{f(h['new_lower_bound'], 6)}",
                    ]
                    for h in r["hard"]
                ],
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="search_vs_peers.json of the old code")
    parser.add_argument("new", type=Path, help="search_vs_peers.json of the new code")
    parser.add_argument("--name", default="search_runs_compared", help="results file name")
    harness.add_out_dir(parser)
    args = parser.parse_args(argv)
    old, old_meta = _runs(args.old)
    new, new_meta = _runs(args.new)
    result = compare(old, new)
    meta = {"old": old_meta, "new": new_meta}
    path = harness.write_results(
        args.name, {"meta": meta, "result": result}, render(result, meta), out_dir=args.out_dir
    )
    print(f"wrote {path}.json and {path}.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

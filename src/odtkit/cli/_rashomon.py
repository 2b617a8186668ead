"""``odtkit rashomon``: every tree within epsilon of the optimum (:func:`odtkit.rashomon.rashomon`),
counted and summarised."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

import pandas as pd

from odtkit.cli import _tables
from odtkit.cli._common import (
    EXIT_LIMIT,
    EXIT_OPTIMAL,
    BadInput,
    _add_limits,
    _add_output_switches,
    _check_common,
    _check_out,
    _checked,
    _clamp_depth,
    _exit_code,
    _out_help,
    _plural,
    _print_json,
    _save,
    _subcommand,
)

NAME = "rashomon"


def _check_epsilon(value: float) -> float:
    if not (math.isfinite(value) and value >= 0):
        raise BadInput(f"--epsilon must be a finite number >= 0, got {value!r}")
    return value


def run(args: argparse.Namespace) -> int:
    """Every tree within ``--epsilon`` of the optimum, on the table binarized as ``fit`` does:
    the optimum and bound, the exact count, the objective histogram, per-feature usage, the
    ``--top`` trees as text, and whether the build was complete. ``--constraint``s restrict
    the set to the trees meeting them (OPT: the constrained optimum); constraints no tree
    meets print why and exit 1."""
    from odtkit import metrics
    from odtkit.io import dumps
    from odtkit.rashomon import rashomon
    from odtkit.render import export_text

    _check_common(args, depth_required=False)
    _check_epsilon(args.epsilon)
    if args.top < 0:
        raise BadInput(f"--top must be >= 0, got {args.top}")
    _check_out(args, DATA=args.dataset if _tables._is_file_argument(args.dataset) else None)
    # --thresholds all binarizes every midpoint here (the set over every threshold): the
    # exact search finds one tree, not a set, so its own binarization would be the wrong space
    data = _tables._load(args, "DATA")
    _clamp_depth(args, data.dataset)
    dataset = data.dataset
    if data.binarization is not None and not args.json:
        print(data.binarization["summary"], file=sys.stderr)
    constraints = None if data.task is None else data.task.constraints
    rset = _checked(
        lambda: rashomon(
            dataset,
            lam=args.lam,
            max_depth=args.max_depth,
            epsilon=args.epsilon,
            absolute=args.absolute,
            leaves=args.leaves,
            constraints=constraints,
            time_limit=args.time_limit,
            memory_limit_mb=args.memory_limit_mb,
        ),
        flag="--epsilon",
    )
    count = rset.count()
    histogram = rset.objective_histogram()
    usage = rset.feature_usage()
    if not isinstance(usage.index, pd.RangeIndex):  # indexed by feature name: keep the names
        usage = usage.reset_index()
    top = list(rset[: min(args.top, count)]) if args.top else []
    classes = dataset.classes
    trees = [
        {
            "index": i,
            # re-scored by metrics, the one truth (the set's order is by this objective)
            "objective": metrics.objective(tree, dataset, lam=args.lam),
            "n_leaves": tree.n_leaves,
            "depth": tree.depth,
            "tree": tree.to_dict(),
            "text": export_text(tree, data.features, classes, data=dataset),
        }
        for i, tree in enumerate(top)
    ]
    status = str(rset.status)
    infeasible = status == "infeasible"
    if infeasible:
        code = _exit_code(status)
    else:
        code = EXIT_OPTIMAL if rset.complete else (_exit_code(status) or EXIT_LIMIT)
    payload: dict[str, Any] = {
        "data": dataset.name,
        "label": data.label,
        "lam": args.lam,
        "max_depth": args.max_depth,
        "epsilon": args.epsilon,
        "absolute": args.absolute,
        "leaves": args.leaves,
        "constraints": None if constraints is None else constraints.describe(),
        "status": status,
        "complete": bool(rset.complete),
        "optimum": rset.optimum,
        "lower_bound": rset.lower_bound,
        "bound": rset.bound,
        "count": count,
        "histogram": histogram.to_dict(orient="records"),
        "feature_usage": usage.to_dict(orient="records"),
        "top": trees,
        "feature_names": list(dataset.feature_names),
        "features": data.specs,
        "classes": classes.tolist(),
        "binarization": data.binarization,
        "stats": dict(rset.stats),
    }
    if args.out is not None:
        payload["out"] = _save(args, dumps(payload))
    if args.json:
        _print_json(payload)
        return code
    depth = "unlimited" if args.max_depth is None else f"<= {args.max_depth}"
    print(
        f"data {dataset.name}: {dataset.n_samples} rows, {dataset.n_features} binary features, "
        f"classes {classes.tolist()}; lambda {args.lam}, depth {depth}, leaves {args.leaves}"
    )
    if constraints:
        print(f"constraints: {constraints.describe()}")
    if infeasible:
        print(f"infeasible: no tree meets the constraints ({rset.stats.get('message', '')})")
        return code
    certified = rset.lower_bound >= rset.optimum - 1e-9
    slack = f"optimum + {args.epsilon:g}" if args.absolute else f"(1 + {args.epsilon:g}) x optimum"
    print(
        f"optimum {rset.optimum:.6g} ("
        + ("certified" if certified else f"not certified: lower bound {rset.lower_bound:.6g}")
        + f"), bound {rset.bound:.6g} = {slack}"
    )
    if rset.complete:
        print(f"{count:,} trees within the bound (the complete set)")
    else:
        print(
            f"{count:,} trees within the bound found before the build stopped ({status}): "
            "every one a genuine member, but NOT the complete set"
        )
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        if count:
            print("\nobjective histogram (trees per exact misclassified weight and leaves):")
            print(histogram.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
        print(_usage_text(usage, count))
    if trees:
        print(f"\nthe {_plural(len(trees), 'best tree')} in objective order:")
        for entry in trees:
            print(
                f"\n#{entry['index']}: objective {entry['objective']:.6g}, "
                f"{entry['n_leaves']} leaves, "
                f"depth {entry['depth']}"
            )
            print(entry["text"])
    print(
        "\nbuild: complete"
        if rset.complete
        else f"\nbuild: INCOMPLETE ({status}); raise --time-limit or lower --epsilon"
    )
    return code


def _usage_text(usage: pd.DataFrame, count: int) -> str:
    """Per-feature usage, most used first, the features no good tree uses counted, not listed;
    and the reading people ask first: which features every good tree splits on."""
    head = "\nfeature usage (share of the set's trees that split on each feature):"
    if count == 0:
        return "\nno tree listed: no objective histogram or feature usage"
    if "share" not in usage.columns:
        return f"{head}\n{usage.to_string(index=False)}"
    used = usage[usage["share"] > 0].sort_values("share", ascending=False, kind="stable")
    unused = len(usage) - len(used)
    lines = [head, used.to_string(index=False, float_format=lambda v: f"{v:.4g}")]
    if unused:
        lines.append(f"({_plural(unused, 'feature')} used by no tree of the set)")
    name = "feature" if "feature" in usage.columns else usage.columns[0]
    every = [str(f) for f in used.loc[used["share"] >= 1.0, name]]
    lines.append(
        "every tree of the set splits on: " + (", ".join(every) if every else "no one feature")
    )
    return "\n".join(lines)


def add_parser(sub: Any) -> None:
    """Add the ``rashomon`` sub-parser to ``sub`` (:func:`odtkit.cli.build_parser`)."""
    from odtkit.methods import DEFAULT_TIME_LIMIT

    rsh = _subcommand(
        sub,
        "rashomon",
        help="every tree within epsilon of the optimum (the Rashomon set): counted, summarised",
        description="Binarize DATA as 'odtkit fit' does, certify the optimum of misclassified "
        "fraction + lam x leaves over trees of depth <= --max-depth, and build the set of "
        "every tree whose objective is <= (1 + epsilon) x optimum (optimum + epsilon with "
        "--absolute). Prints the optimum and the bound, the exact number of trees, the "
        "objective histogram, the share of trees that use each feature, the --top best trees "
        "and whether the build was complete (a limit or Ctrl-C leaves a partial set of genuine "
        "members: exit 3 or 130). With --constraint, the set of the trees meeting every one, "
        "the optimum being the constrained one (min-leaf-*, max-leaves, max-splits, "
        "split-budget, forbid; any other is refused; none feasible: exit 1).",
    )
    _tables._add_data_arguments(rsh)
    _tables._add_constraint_argument(rsh)
    rsh.add_argument(
        "--epsilon",
        type=float,
        default=0.05,
        help="slack over the optimum, >= 0: relative (0.05 = 5%% above it), or absolute in "
        "objective units with --absolute",
    )
    rsh.add_argument(
        "--absolute", action="store_true", help="the bound is optimum + epsilon, not (1 + eps)x"
    )
    rsh.add_argument(
        "--leaves",
        choices=("any", "majority"),
        default="any",
        help="what a leaf may predict: any class, or only a class of maximal training weight",
    )
    rsh.add_argument("--top", type=int, default=3, help="print the N best trees (0: none)")
    _add_limits(rsh, default=DEFAULT_TIME_LIMIT, time_help="seconds for the build")
    rsh.add_argument(
        "--out",
        metavar="FILE",
        help=_out_help(
            "the --json payload (optimum, bound, count, histogram, feature usage, "
            "the --top trees with the binarization)"
        ),
    )
    _add_output_switches(rsh)

r"""Branch-and-price over whole trees: the master of :class:`~odtkit.formulations.TreeColumns`
solved by any backend, priced by the native search (:func:`odtkit.core.price`).

docs/formulations-trees.md §10. The loop sits above formulations, solvers and core (none of them
knows the others): the master is a formulation building a
:class:`~odtkit.model.Model`, a backend solves its LP and returns row duals, the formulation
turns the duals into pricing terms (:meth:`TreeColumns.pricing`) and the search returns the
tree of least reduced cost over every tree of depth :math:`\le D` (and a valid bound on it, even
when stopped). A column enters when its reduced cost, re-measured by the truth, is negative.

**The bound.** At every iteration :math:`z + \min(0, \underline{\bar c})` (master value plus the
priced lower bound on the least reduced cost; the convexity row makes it a Lagrangian bound) is
a lower bound on the node's problem: the master's slacks only relax the side rows, so it bounds
the constrained optimum from below. When pricing proves that no column has a negative reduced
cost, :math:`z` is the node's LP bound: the convex hull of the trees cut by the side rows, the
same as PathOCT's LP relaxation.

**Branching** on one tree position: the master's marginal of "heap position :math:`u` has
action :math:`a`" (a split on feature :math:`j`, or a leaf of class :math:`k`) summed over the
columns. If every marginal is 0 or 1 the support is a single tree (two different trees differ at
some position); otherwise the most fractional marginal gives two children, "u has a" and "u
has not a", which the pricing search respects exactly (:class:`odtkit.core.PositionRule`) and
which remove the violating columns from the child's master. Nodes are explored best bound first
(depth first until a first feasible tree is known); a node whose bound reaches the incumbent is
pruned. Every column that meets the side rows (the truth, :meth:`ResolvedConstraints.violations`)
is an incumbent candidate.

**Feasibility.** A master whose slacks stay positive after pricing converges is checked by the
same column generation on the slacks alone (``phase="feasibility"``): a positive optimum proves
that no convex combination of the node's trees meets the rows, so the node is infeasible;
otherwise the slack penalty was too small and grows a hundredfold.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from odtkit import metrics
from odtkit._limits import stop_on_interrupt
from odtkit._validation import check_depth, check_lambda, check_node_limit
from odtkit.constraints import ResolvedConstraints
from odtkit.core.pricing import PositionRule, price
from odtkit.datasets import Dataset
from odtkit.datasets._dataset import check_dataset
from odtkit.fairness import Fairness
from odtkit.formulations.columns import (
    TreeColumn,
    TreeColumns,
    columns_refusal,
    side_constraints,
)
from odtkit.model import Model
from odtkit.results import Result, Status, make_trace
from odtkit.solvers import Solution, solve
from odtkit.tree import Tree

__all__ = ["branch_and_price"]

#: A column enters when its reduced cost is below ``-REDUCED_COST_TOLERANCE`` (relative to
#: ``max(1, |master value|)``); gaps and integrality are judged at the same scale.
REDUCED_COST_TOLERANCE = 1e-9
#: A master value of ``theta`` or a marginal within this of 0 or 1 counts as integral.
INTEGRALITY_TOLERANCE = 1e-6
#: Options every master LP gets on the ``"highs"`` backend (exact duals matter: they price).
_HIGHS_OPTIONS: dict[str, Any] = {"dual_feasibility_tolerance": 1e-10}
#: The slack penalty may grow this large before a node is given up as numerically unsettled.
_MAX_PENALTY = 1e12


@dataclass(order=True)
class _Node:
    """An open node: its bound (the parent's until solved), its rules (branching decisions)."""

    key: tuple[float, float, int]
    bound: float = field(compare=False)
    rules: tuple[PositionRule, ...] = field(compare=False)


@dataclass
class _State:
    """What the loop accumulates (columns, incumbent, counters, trace)."""

    dataset: Dataset
    resolved: ResolvedConstraints | None
    lam: float
    depth: int
    backend: str
    began: float
    time_limit: float | None
    columns: dict[Tree, TreeColumn] = field(default_factory=dict)
    incumbent: TreeColumn | None = None
    iterations: int = 0
    pricing_calls: int = 0
    pricing_time: float = 0.0
    master_time: float = 0.0
    trace: list[tuple[float, float, float]] = field(default_factory=list)
    stopped: Status | None = None
    watch: Callable[[Model[Any], Solution, float], Any] | None = None
    #: the open nodes (the heap of the loop), for the global bound the trace records
    open_nodes: list[_Node] = field(default_factory=list)

    def global_bound(self, node_bound: float) -> float:
        """The least bound over the open nodes and the node being solved."""
        return min([node_bound, *(n.bound for n in self.open_nodes), self.upper])

    root_master: Model[Any] | None = None
    root_solution: Solution | None = None
    root_lp: float = math.nan
    penalty: float | None = None
    #: ties of equal bound and depth go to the node opened first
    tickets: Iterator[int] = field(default_factory=itertools.count)

    def remaining(self) -> float | None:
        if self.time_limit is None:
            return None
        return self.time_limit - (time.perf_counter() - self.began)

    def out_of_time(self) -> bool:
        left = self.remaining()
        return left is not None and left <= 0

    def add(self, tree: Tree) -> TreeColumn:
        """The column of ``tree`` (measured once), an incumbent candidate."""
        column = self.columns.get(tree)
        if column is None:
            column = TreeColumn.of(tree, self.dataset, self.resolved, self.lam)
            self.columns[tree] = column
            if column.feasible and (self.incumbent is None or column.cost < self.incumbent.cost):
                self.incumbent = column
        return column

    @property
    def upper(self) -> float:
        return math.inf if self.incumbent is None else self.incumbent.cost


def _respects(column: TreeColumn, rules: tuple[PositionRule, ...]) -> bool:
    for rule in rules:
        want = rule.feature if rule.feature is not None else -1 - int(rule.klass or 0)
        has = column.actions.get(rule.node) == want
        if has != rule.required:
            return False
    return True


def _in_domain(
    tree: Tree, dataset: Dataset, resolved: ResolvedConstraints | None, depth: int
) -> bool:
    """Whether ``tree`` is a tree the pricing searches over (so a valid column)."""
    if tree.depth > depth:
        return False
    if resolved is None:
        return True
    if any(resolved.forbidden[j] for j in tree.features_used()):
        return False
    if resolved.min_leaf_weight > 0:
        floor = resolved.min_leaf_weight
        if resolved.leaf_weights(tree, dataset).min() < floor * (1 - 1e-9):
            return False
    return True


def _solve_master(state: _State, model: Model[Any]) -> Solution:
    began = time.perf_counter()
    left = state.remaining()
    options = _HIGHS_OPTIONS if state.backend == "highs" else {}
    solution = solve(
        model,
        backend=state.backend,
        lp_method="simplex",
        duals=True,
        time_limit=None if left is None else max(left, 1e-3),
        **options,
    )
    state.master_time += time.perf_counter() - began
    return solution


def _price(
    state: _State, master: TreeColumns, model: Model[Any], solution: Solution, rules: Any
) -> tuple[TreeColumn | None, float, bool]:
    """Price the master's duals: the new column (or None), a valid lower bound on the least
    reduced cost, and whether that bound is exact (the search finished)."""
    assert solution.duals is not None
    data = state.dataset
    W = data.total_weight
    terms = master.pricing(model, data, solution.duals)
    resolved = state.resolved
    began = time.perf_counter()
    left = state.remaining()
    priced = price(
        data,
        max_depth=state.depth,
        row_costs=terms.row_costs * W,
        leaf_cost=terms.leaf_cost * W,
        group_costs=[(g, c * W) for g, c in terms.group_costs],
        forbidden=None if resolved is None else resolved.forbidden,
        min_leaf_weight=0.0 if resolved is None else resolved.min_leaf_weight,
        rules=rules,
        time_limit=None if left is None else max(left, 1e-3),
    )
    state.pricing_time += time.perf_counter() - began
    state.pricing_calls += 1
    exact = priced.status == Status.OPTIMAL
    if priced.status == Status.INFEASIBLE:
        return None, math.inf, True
    bound = priced.lower_bound / W + terms.constant
    if priced.tree is None:
        return None, bound, exact
    column = state.add(priced.tree)
    # the reduced cost by the truth (the column's measured cost and rows) must be what the
    # search says it is: the terms and the search agree, or nothing here certifies anything
    y = solution.duals
    reduced = _reduced_cost(model, column, y)
    said = priced.value / W + terms.constant
    if abs(reduced - said) > 1e-7 * max(1.0, abs(reduced), abs(column.cost)):
        raise RuntimeError(
            f"the pricing search values its tree at reduced cost {said!r}, the truth at "
            f"{reduced!r}: this is a bug"
        )
    return column, bound, exact


def _reduced_cost(model: Model[Any], column: TreeColumn, duals: np.ndarray) -> float:
    meta = model.meta
    pi = float(duals[model.constraints["convexity"].start])
    rows = 0.0
    if column.values.size:
        blocks = meta.constraints.blocks
        first = model.constraints[blocks[0].name].start
        rows = float(duals[first : first + column.values.size] @ column.values)
    if meta.phase == "feasibility":
        return -rows - pi
    return column.cost - rows - pi


def _column_generation(
    state: _State, rules: tuple[PositionRule, ...], phase: str, node_bound: float
) -> tuple[Model[Any] | None, Solution | None, float, str]:
    """Column generation at one node: the last master and its solution, the node's bound and
    how it ended: ``"converged"`` (no column prices out: the master value is the node's LP
    value; ``"empty"`` when the node has no tree at all), ``"pruned"`` (the Lagrangian bound
    reached the incumbent first) or ``"stopped"`` (a limit; ``state.stopped`` says which)."""
    master = TreeColumns()
    while True:
        columns = [c for c in state.columns.values() if _respects(c, rules)]
        if not columns:
            return None, None, math.inf, "empty"
        model = master.build(
            state.dataset,
            max_depth=state.depth,
            lam=state.lam,
            constraints=state.resolved,
            columns=columns,
            penalty=state.penalty,
            phase=phase,
        )
        if state.penalty is None:
            state.penalty = model.meta.penalty
        solution = _solve_master(state, model)
        if solution.status != Status.OPTIMAL or solution.duals is None:
            state.stopped = solution.status if solution.status.stopped_early else Status.ERROR
            return model, None, node_bound, "stopped"
        state.iterations += 1
        value = float(solution.objective)
        column, reduced_bound, exact = _price(state, master, model, solution, rules)
        tol = REDUCED_COST_TOLERANCE * max(1.0, abs(value))
        if phase == "optimize":
            node_bound = max(node_bound, value + min(0.0, reduced_bound))
            elapsed = time.perf_counter() - state.began
            state.trace.append((elapsed, state.upper, state.global_bound(node_bound)))
            if state.watch is not None and state.watch(model, solution, node_bound):
                state.stopped = Status.INTERRUPTED
                return model, solution, node_bound, "stopped"
            if node_bound >= state.upper - _gap_tolerance(state.upper):
                return model, solution, node_bound, "pruned"
        entered = column is not None and column in columns  # already in: degenerate duals
        new = column is not None and not entered
        if column is not None and new and _reduced_cost(model, column, solution.duals) < -tol:
            if state.out_of_time():
                state.stopped = Status.TIME_LIMIT
                return model, solution, node_bound, "stopped"
            continue
        if not exact:
            state.stopped = Status.TIME_LIMIT
            return model, solution, node_bound, "stopped"
        # priced out: no column has a negative reduced cost, the master value is the LP's
        if phase == "optimize":
            node_bound = max(node_bound, value)
        return model, solution, node_bound if phase == "optimize" else value, "converged"


def _values(model: Model[Any], solution: Solution) -> dict[str, np.ndarray]:
    if solution.values:
        return dict(solution.values)
    assert solution.x is not None  # an optimal master has a solution
    return model.values(solution.x)


def _slack(model: Model[Any], solution: Solution) -> float:
    values = _values(model, solution)
    return float(sum(values[g].sum() for g in ("slack_below", "slack_above") if g in values))


def _branch(model: Model[Any], solution: Solution) -> tuple[int, int] | None:
    """The (position, action) to branch on, or None if the master is one tree: the shallowest
    position with a fractional marginal, its most fractional action there (a decision near the
    root splits the trees of the master more evenly than one near the leaves)."""
    theta = _values(model, solution)["theta"]
    marginal: dict[tuple[int, int], float] = {}
    for column, weight in zip(model.meta.columns, theta, strict=True):
        if weight > INTEGRALITY_TOLERANCE:
            for position, action in column.actions.items():
                key = (position, action)
                marginal[key] = marginal.get(key, 0.0) + float(weight)
    best: tuple[int, int] | None = None
    score = (math.inf, 0.0)
    for (position, action), value in sorted(marginal.items()):
        frac = min(value, 1.0 - value)
        if frac <= INTEGRALITY_TOLERANCE:
            continue
        level = float(position.bit_length())
        if (level, -frac) < (score[0], -score[1] - 1e-12):
            best, score = (position, action), (level, frac)
    return best


def _rule(position: int, action: int, required: bool) -> PositionRule:
    if action >= 0:
        return PositionRule(node=position, feature=action, required=required)
    return PositionRule(node=position, klass=-1 - action, required=required)


def branch_and_price(
    dataset: Dataset,
    *,
    lam: float,
    max_depth: int,
    constraints: Any = None,
    fairness: Fairness | None = None,
    backend: str = "highs",
    time_limit: float | None = None,
    start: Tree | None = None,
    node_limit: int | None = None,
    watch: Callable[[Model[Any], Solution, float], Any] | None = None,
) -> Result:
    """The optimal tree of depth <= ``max_depth`` under side constraints by branch-and-price.

    Parameters
    ----------
    dataset : Dataset
    lam : float
        Penalty per leaf, ``>= 0``.
    max_depth : int
        Depth limit D >= 1.
    constraints : list of constraints or ResolvedConstraints, optional
        Side constraints and a cost objective (:mod:`odtkit.constraints`, :mod:`odtkit.costs`)
        that the pricing prices exactly (:func:`~odtkit.formulations.columns.columns_refusal`
        names any other, as a ValueError).
    fairness : Fairness, optional
        A fairness constraint (one more row block).
    backend : str
        The backend that solves each master LP (``"highs"``, ``"pyomo"``, ``"pulp"``): it must
        return row duals.
    time_limit : float, optional
        Seconds; the best tree found so far and a valid bound are returned when it is reached.
    start : Tree, optional
        A tree to start from (a column, and the incumbent if it meets the constraints).
    node_limit : int, optional
        Branch-and-bound nodes to explore at most.
    watch : callable, optional
        Called after every master LP solve as ``watch(master, solution, bound)``: the master
        (a :class:`~odtkit.model.Model`; ``master.meta.columns`` are its trees), its LP
        solution (``solution.duals`` price the next column) and the node's bound so far. A
        notebook can record or plot the rounds; a true return value stops the run like Ctrl-C
        (status ``interrupted``, the incumbent and a valid bound kept).

    Returns
    -------
    Result
        ``model`` the best tree found (re-measured by :func:`odtkit.metrics.objective`),
        ``lower_bound`` the least bound of the open nodes, ``trace`` (time, incumbent, bound)
        per master solve and ``stats``:
        ``nodes``, ``iterations`` (master solves), ``pricing_calls``, ``columns``,
        ``pricing_time``, ``master_time``, ``root_bound`` (the root's LP value, PathOCT's LP
        bound), ``master`` (the root's last master, a Model to inspect: columns, rows),
        ``root_solution`` (its LP solution: values, duals) and ``penalty``. ``solution`` is
        None: no single model's solution is the answer.
    """
    began = time.perf_counter()
    dataset = check_dataset(dataset)
    lam = check_lambda(lam)
    depth = check_depth(max_depth, allow_none=False, minimum=1, n_features=dataset.n_features)
    node_limit = check_node_limit(node_limit)
    if time_limit is not None and (isinstance(time_limit, bool) or not time_limit > 0):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if start is not None and not isinstance(start, Tree):
        raise TypeError(f"start must be a Tree, got {type(start).__name__}")
    resolved = side_constraints(dataset, constraints, fairness)
    why = columns_refusal(resolved)
    if why:
        raise ValueError(f"constraints: branch-and-price cannot take them: {why}")
    if watch is not None and not callable(watch):
        raise TypeError(f"watch must be callable, got {type(watch).__name__}")
    state = _State(dataset, resolved, lam, depth, backend, began, time_limit, watch=watch)
    obvious = "" if resolved is None else resolved.obvious_infeasibility()
    if obvious:
        return _result(state, Status.INFEASIBLE, math.inf, 0, obvious)
    # first columns: every single leaf (in the domain unless no leaf is heavy enough) and the
    # start; the first pricing (zero duals on the side rows) adds the unconstrained optimum
    for k in range(dataset.n_classes):
        if _in_domain(Tree.leaf(k), dataset, resolved, depth):
            state.add(Tree.leaf(k))
    starts = [] if start is None else [start]
    fair_trees, relaxed = _fair_optima(state)
    starts.extend(fair_trees)
    for tree in starts:
        tree = tree.canonical(dataset.X[dataset.weights > 0], merge=False)
        if _in_domain(tree, dataset, resolved, depth):
            state.add(tree)
    if not state.columns:
        return _result(state, Status.INFEASIBLE, math.inf, 0, "no leaf meets the leaf support")
    open_nodes = state.open_nodes
    # the fair dp's certified optimum of one fairness constraint alone bounds the whole problem
    # (it drops every other constraint): the root starts from it, and when a column attains it
    # nothing is left to search
    heapq.heappush(open_nodes, _Node((relaxed, 0.0, next(state.tickets)), relaxed, ()))
    nodes = 0
    current: _Node | None = None  # the node being solved (Ctrl-C must not lose its bound)
    with stop_on_interrupt() as ctrl_c:
        while open_nodes:
            if state.out_of_time():
                state.stopped = Status.TIME_LIMIT
                break
            if node_limit is not None and nodes >= node_limit:
                state.stopped = Status.NODE_LIMIT
                break
            node = _select(open_nodes, state)
            if node.bound >= state.upper - _gap_tolerance(state.upper):
                continue
            nodes += 1
            current = node
            children = _solve_node(state, node, is_root=nodes == 1)
            current = None
            if state.stopped is not None:
                heapq.heappush(open_nodes, node)  # unfinished: its bound still counts
                break
            for child in children:
                heapq.heappush(open_nodes, child)
    if ctrl_c.interrupted:
        state.stopped = Status.INTERRUPTED
        if current is not None:
            heapq.heappush(open_nodes, current)  # interrupted inside: its bound still counts
    alive = [n.bound for n in open_nodes if n.bound < state.upper]
    bound = min(alive) if alive else state.upper
    if state.stopped is None:
        status = Status.OPTIMAL if state.incumbent is not None else Status.INFEASIBLE
        message = "" if state.incumbent is not None else "no tree meets the constraints"
    else:
        status, message = state.stopped, ""
    return _result(state, status, bound, nodes, message)


#: Share of the time limit the fair dp may take for a first column.
_FAIR_START_SHARE = 0.1


def _fair_optima(state: _State) -> tuple[list[Tree], float]:
    """The fair dp's optimum for each fairness constraint stated (its own rows met exactly, a
    strong first column and often an incumbent), within a share of the time limit; and the
    largest certified one, a lower bound on the problem (-inf when none is certified or a cost
    objective is stated, which the fair dp does not minimise)."""
    from odtkit.core.search import search_tree

    resolved = state.resolved
    if resolved is None:
        return [], -math.inf
    out, bound = [], -math.inf
    for fairness in (c for c in resolved.constraints if isinstance(c, Fairness)):
        left = state.remaining()
        budget = None if left is None else max(left * _FAIR_START_SHARE, 1e-3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # advice on lam speaks of the fair problem alone
            found = search_tree(
                state.dataset,
                lam=state.lam,
                max_depth=state.depth,
                fairness=fairness,
                time_limit=budget,
            )
        if found.model is not None:
            out.append(found.model)
        if resolved.losses is None and math.isfinite(found.lower_bound):
            bound = max(bound, float(found.lower_bound))
    return out, bound


def _gap_tolerance(upper: float) -> float:
    return REDUCED_COST_TOLERANCE * max(1.0, abs(upper)) if math.isfinite(upper) else 0.0


def _select(open_nodes: list[_Node], state: _State) -> _Node:
    """Best bound first; depth first (the latest child) while no feasible tree is known."""
    if state.incumbent is None and len(open_nodes) > 1:
        deepest = max(range(len(open_nodes)), key=lambda i: (len(open_nodes[i].rules), -i))
        node = open_nodes.pop(deepest)
        heapq.heapify(open_nodes)
        return node
    return heapq.heappop(open_nodes)


def _solve_node(state: _State, node: _Node, *, is_root: bool) -> list[_Node]:
    """Column generation at ``node`` (with the feasibility check), then its children."""
    rules = node.rules
    if not any(_respects(c, rules) for c in state.columns.values()):
        # a fresh node may have no column yet: one plain pricing finds a tree of its domain
        seed = _seed_column(state, rules)
        if seed is None:
            return []
    while True:
        model, solution, bound, ended = _column_generation(state, rules, "optimize", node.bound)
        if is_root and model is not None and solution is not None:
            state.root_master, state.root_solution = model, solution
            if ended == "converged":
                state.root_lp = float(solution.objective)
            elif ended == "pruned":
                state.root_lp = bound  # bound <= LP value <= optimum <= incumbent ~ bound
        node.bound = bound
        if ended != "converged" or solution is None or model is None:
            return []  # empty or pruned: done; stopped: the caller keeps the node open
        if _slack(model, solution) <= INTEGRALITY_TOLERANCE:
            break
        _, _, infeasibility, ended = _column_generation(state, rules, "feasibility", 0.0)
        if ended == "stopped":
            return []
        if infeasibility > INTEGRALITY_TOLERANCE:
            return []  # no convex combination of this node's trees meets the rows
        assert state.penalty is not None
        if state.penalty * 100 > _MAX_PENALTY:
            state.stopped = Status.ERROR
            return []
        state.penalty *= 100
    if bound >= state.upper - _gap_tolerance(state.upper):
        return []
    choice = _branch(model, solution)
    if choice is None:
        # one tree carries the master: its column meets the rows (zero slack), so it is an
        # incumbent (TreeColumn.of re-measured it) and this node is solved
        return []
    position, action = choice
    key = (bound, -float(len(rules) + 1))
    return [
        _Node((*key, next(state.tickets)), bound, (*rules, _rule(position, action, required)))
        for required in (True, False)
    ]


def _seed_column(state: _State, rules: tuple[PositionRule, ...]) -> TreeColumn | None:
    """The best tree of the node's domain for the objective alone (a first column)."""
    data, resolved = state.dataset, state.resolved
    W = data.total_weight
    if resolved is not None and resolved.losses is not None:
        costs = resolved.losses
    else:
        K = data.n_classes
        costs = data.weights[:, None] * (data.y[:, None] != np.arange(K)[None, :])
    left = state.remaining()
    priced = price(
        data,
        max_depth=state.depth,
        row_costs=np.asarray(costs, dtype=float),
        leaf_cost=state.lam * W,
        forbidden=None if resolved is None else resolved.forbidden,
        min_leaf_weight=0.0 if resolved is None else resolved.min_leaf_weight,
        rules=rules,
        time_limit=None if left is None else max(left, 1e-3),
    )
    state.pricing_calls += 1
    if priced.tree is None:
        return None
    return state.add(priced.tree)


def _result(state: _State, status: Status, bound: float, nodes: int, message: str) -> Result:
    data, resolved = state.dataset, state.resolved
    tree = None if state.incumbent is None else state.incumbent.tree
    objective = math.inf if status == Status.INFEASIBLE else math.nan
    if tree is not None:
        X = data.X[data.weights > 0]
        tree = resolved.canonical(tree, X) if resolved is not None else tree.canonical(X)
        objective = metrics.objective(tree, data, lam=state.lam, costs=resolved)
        if resolved is not None and resolved.violations(tree, data):
            raise RuntimeError("branch-and-price returns a tree that breaks a constraint: a bug")
        bound = min(bound, objective)
        if status == Status.OPTIMAL:
            bound = objective
    elif status == Status.INFEASIBLE:
        bound = math.inf
    stats: dict[str, Any] = {
        "nodes": nodes,
        "iterations": state.iterations,
        "pricing_calls": state.pricing_calls,
        "columns": len(state.columns),
        "pricing_time": state.pricing_time,
        "master_time": state.master_time,
        "root_bound": state.root_lp,
        "master": state.root_master,
        "root_solution": state.root_solution,
        "penalty": state.penalty,
    }
    elapsed = time.perf_counter() - state.began
    trace = list(state.trace)
    trace.append((elapsed, objective if tree is not None else math.inf, bound))
    return Result(
        model=tree,
        objective=objective,
        lower_bound=bound,
        status=status,
        time=elapsed,
        method="columns",
        backend=state.backend,
        trace=make_trace(trace),
        n_explored=nodes,
        stats=stats,
        message=message,
    )

"""odtkit native core: 64-bit-word bitsets and the optimal-tree searches."""

import enum
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import numpy
from numpy.typing import NDArray

class Bitset:
    """
    Fixed-length bitset stored as 64-bit words (zero tail), built from a 1-D numpy bool array.
    """

    def __init__(self, n_bits: int, value: bool = False) -> None: ...
    @staticmethod
    def from_numpy(
        values: Annotated[
            NDArray[numpy.bool_], dict(shape=(None,), order="C", device="cpu", writable=False)
        ],
    ) -> Bitset: ...
    def to_numpy(self) -> Annotated[NDArray[numpy.bool_], dict(shape=(None,))]: ...
    def count(self) -> int:
        """Number of set bits (popcount over the words)."""

    def count_and(self, other: Bitset) -> int:
        """popcount(self & other) without building the intersection."""

    def any(self) -> bool: ...
    def and_not(self, other: Bitset) -> Bitset:
        """self & ~other"""

    def __and__(self, arg: Bitset, /) -> Bitset: ...
    def __or__(self, arg: Bitset, /) -> Bitset: ...
    def __xor__(self, arg: Bitset, /) -> Bitset: ...
    def __invert__(self) -> Bitset: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __len__(self) -> int: ...
    @property
    def n_words(self) -> int: ...
    def words(self) -> list[int]: ...
    def __repr__(self) -> str: ...

class Problem:
    """
    Preprocessed search instance: identical rows collapsed into points, per-feature bitsets over points, per-class weights, equivalent-point minorities.
    """

    def __init__(
        self,
        X: Annotated[
            NDArray[numpy.bool_], dict(shape=(None, None), order="C", device="cpu", writable=False)
        ],
        y: Annotated[
            NDArray[numpy.int32], dict(shape=(None,), order="C", device="cpu", writable=False)
        ],
        weights: Annotated[
            NDArray[numpy.float64], dict(shape=(None,), order="C", device="cpu", writable=False)
        ],
        n_classes: int,
        *,
        popcount: str = "auto",
        support: Annotated[
            NDArray[numpy.float64], dict(shape=(None,), order="C", device="cpu", writable=False)
        ]
        | None = None,
    ) -> None:
        """
        X: C-contiguous bool (n, p); y: int32 (n,) codes in [0, n_classes); weights: float64 (n,) nonnegative. popcount: 'auto' (hardware popcount when the CPU has it) or 'portable' (the baseline build's software popcount; for benchmarks and tests). support: None (a leaf's support is its weight) or float64 (n,) nonnegative support weights with a positive sum, in which the dp searches measure a minimum leaf support (SearchConfig.min_leaf_weight is then a share of their total).
        """

    @property
    def popcount(self) -> str:
        """Popcount kernels of this problem's searches: 'hardware' or 'portable'."""

    @property
    def n_samples(self) -> int: ...
    @property
    def n_points(self) -> int: ...
    @property
    def n_features(self) -> int: ...
    @property
    def n_classes(self) -> int: ...
    @property
    def n_words(self) -> int: ...
    @property
    def total_weight(self) -> float: ...
    @property
    def separate_support(self) -> bool: ...
    @property
    def total_support(self) -> float: ...
    @property
    def point_minority_total(self) -> float: ...
    @property
    def integral(self) -> bool: ...
    @property
    def n_class_planes(self) -> int: ...
    @property
    def sample_point(self) -> list[int]: ...
    @property
    def point_class_weight(self) -> list[float]: ...
    def feature(self, j: int) -> Bitset:
        """Bitset over points of x_j = 1."""

class SearchStatus(enum.Enum):
    """
    Why a native search stopped (odtkit.core._problem.native_status maps it to odtkit.results.Status).
    """

    optimal = 0

    time_limit = 1

    node_limit = 2

    memory_limit = 3

    interrupted = 4

class SearchOutput:
    """
    The answer of a native search (search_types.hpp), read-only: tree (pre-order code), objective and lower_bound (normalized), status, n_explored, peak_memory_mb, the trace (trace_time, trace_incumbent, trace_bound), stats, and for search_numeric the split table its tree indexes (split_column, split_rank, split_missing_le; empty elsewhere).
    """

    def __init__(
        self,
        *,
        tree: Sequence[int],
        objective: float,
        lower_bound: float,
        status: SearchStatus,
        n_explored: int = 0,
        peak_memory_mb: float = 0.0,
        trace_time: Sequence[float] = [],
        trace_incumbent: Sequence[float] = [],
        trace_bound: Sequence[float] = [],
        stats: Mapping[str, float] = {},
        split_column: Sequence[int] = [],
        split_rank: Sequence[int] = [],
        split_missing_le: Sequence[int] = [],
    ) -> None: ...
    @property
    def tree(self) -> list[int]: ...
    @property
    def objective(self) -> float: ...
    @property
    def lower_bound(self) -> float: ...
    @property
    def status(self) -> SearchStatus: ...
    @property
    def n_explored(self) -> int: ...
    @property
    def peak_memory_mb(self) -> float: ...
    @property
    def trace_time(self) -> list[float]: ...
    @property
    def trace_incumbent(self) -> list[float]: ...
    @property
    def trace_bound(self) -> list[float]: ...
    @property
    def stats(self) -> dict[str, float]: ...
    @property
    def split_column(self) -> list[int]: ...
    @property
    def split_rank(self) -> list[int]: ...
    @property
    def split_missing_le(self) -> list[int]: ...
    def replace(
        self,
        *,
        tree: Sequence[int] | None = None,
        objective: float | None = None,
        lower_bound: float | None = None,
        status: SearchStatus | None = None,
        stats: Mapping[str, float] | None = None,
    ) -> SearchOutput:
        """A copy with the given fields changed."""

class SearchConfig:
    """
    Typed configuration of every native search (search_types.hpp). Keyword-only; an unknown keyword or attribute raises TypeError/AttributeError, a wrong type TypeError, an unknown policy or symmetry name ValueError. No limit: 0 (time_limit, node_limit, memory_limit_mb), inf (upper_bound), -1 (max_depth). `bounds` is a dict of switches (missing = on), read and assigned as a whole.
    """

    def __init__(
        self,
        *,
        lam: float = 0.0,
        max_depth: int = -1,
        time_limit: float = 0.0,
        node_limit: int = 0,
        memory_limit_mb: float = 0.0,
        upper_bound: float = float("inf"),
        policy: str = "curiosity",
        symmetry: str = "permutation_map",
        bounds: Mapping[str, bool] = {},
        initial_tree: Sequence[int] = [],
        min_leaf_weight: float = 0.0,
        root_features: Sequence[bool] = [],
    ) -> None: ...
    @property
    def lam(self) -> float: ...
    @lam.setter
    def lam(self, arg: float, /) -> None: ...
    @property
    def max_depth(self) -> int: ...
    @max_depth.setter
    def max_depth(self, arg: int, /) -> None: ...
    @property
    def time_limit(self) -> float: ...
    @time_limit.setter
    def time_limit(self, arg: float, /) -> None: ...
    @property
    def node_limit(self) -> int: ...
    @node_limit.setter
    def node_limit(self, arg: int, /) -> None: ...
    @property
    def memory_limit_mb(self) -> float: ...
    @memory_limit_mb.setter
    def memory_limit_mb(self, arg: float, /) -> None: ...
    @property
    def upper_bound(self) -> float: ...
    @upper_bound.setter
    def upper_bound(self, arg: float, /) -> None: ...
    @property
    def policy(self) -> str: ...
    @policy.setter
    def policy(self, arg: str, /) -> None: ...
    @property
    def symmetry(self) -> str: ...
    @symmetry.setter
    def symmetry(self, arg: str, /) -> None: ...
    @property
    def bounds(self) -> dict[str, bool]: ...
    @bounds.setter
    def bounds(self, arg: Mapping[str, bool], /) -> None: ...
    @property
    def initial_tree(self) -> list[int]: ...
    @initial_tree.setter
    def initial_tree(self, arg: Sequence[int], /) -> None: ...
    @property
    def min_leaf_weight(self) -> float: ...
    @min_leaf_weight.setter
    def min_leaf_weight(self, arg: float, /) -> None: ...
    @property
    def root_features(self) -> list[bool]: ...
    @root_features.setter
    def root_features(self, arg: Sequence[bool], /) -> None: ...
    def validate(self) -> None:
        """Raise ValueError on an out-of-range value."""

def search_dp(
    problem: Problem, config: SearchConfig, progress: object | None = None
) -> SearchOutput:
    """
    Recursive DP over supports (search_tree(method='dp')); returns a SearchOutput.
    """

def search_dp_anytime(
    problem: Problem, config: SearchConfig, progress: object | None = None
) -> SearchOutput:
    """
    Anytime DP: iterative deepening and bound raising on one memo (search_tree(method='dp', strategy='anytime')).
    """

def search_dp_queue(
    problem: Problem, config: SearchConfig, progress: object | None = None
) -> SearchOutput:
    """
    Queue-based (GOSDT-style) DP (search_tree(method='dp', strategy='queue')).
    """

def search_fair_dp(
    problem: Problem,
    coefficients: Annotated[
        NDArray[numpy.float64], dict(shape=(None, None), order="C", device="cpu", writable=False)
    ],
    delta: float,
    positive_code: int,
    config: SearchConfig,
    progress: object | None = None,
) -> SearchOutput:
    """
    Fairness-constrained DP over Pareto fronts (search_tree(fairness=...)): coefficients float64 C-contiguous (n_samples, n_pairs), |coefficients.T @ positive| <= delta.
    """

def search_numeric(
    values: Annotated[
        NDArray[numpy.float64], dict(shape=(None, None), order="C", device="cpu", writable=False)
    ],
    labels: Annotated[
        NDArray[numpy.int32], dict(shape=(None,), order="C", device="cpu", writable=False)
    ],
    weights: Annotated[
        NDArray[numpy.float64], dict(shape=(None,), order="C", device="cpu", writable=False)
    ],
    n_classes: int,
    config: SearchConfig,
    progress: object | None = None,
    initial_splits: Sequence[tuple[int, int, int]] = [],
) -> SearchOutput:
    """
    Exact search over every threshold of numeric columns (odtkit.core.search_numeric): values float64 C-contiguous (n, m) with NaN for missing, labels int32, weights float64; the tree's split codes index split_column / split_rank / split_missing_le.
    """

def search_bnb(
    problem: Problem, config: SearchConfig, progress: object | None = None
) -> SearchOutput:
    """OSDT leaf-set branch and bound (search_tree(method='bnb'))."""

def search_corels(
    problem: Problem, config: SearchConfig, progress: object | None = None
) -> SearchOutput:
    """
    CORELS over a Problem whose features are the antecedents (search_rule_list); the rule list comes back as a one-sided tree (corels.hpp).
    """

def greedy_tree(problem: Problem, lam: float, max_depth: int = -1) -> list[int]:
    """
    The greedy tree of docs/formulations-search-and-pruning.md §3.2 (odtkit.greedy.greedy_tree), encoded; max_depth -1: unlimited.
    """

def _popcount_kernel_bench(
    n_features: int, n_words: int, repeats: int, mode: str
) -> tuple[float, int]:
    """
    Debug: (seconds, checksum) of the split-loop popcount kernel; see benchmarks/popcount_kernel.py.
    """

def _cpu_has_hardware_popcount() -> bool:
    """Debug: whether the kernels can use a popcount instruction on this CPU."""

def closure_min_cut(
    source_cap: Annotated[
        NDArray[numpy.int64], dict(shape=(None,), order="C", device="cpu", writable=False)
    ],
    sink_cap: Annotated[
        NDArray[numpy.int64], dict(shape=(None,), order="C", device="cpu", writable=False)
    ],
    tails: Annotated[
        NDArray[numpy.int32], dict(shape=(None,), order="C", device="cpu", writable=False)
    ],
    heads: Annotated[
        NDArray[numpy.int32], dict(shape=(None,), order="C", device="cpu", writable=False)
    ],
    time_limit: float = 0.0,
    memory_limit_mb: float = 0.0,
    algorithm: str = "auto",
    greedy: bool = True,
) -> dict[str, Any]:
    """
    Minimum s-t cut of a closure network (maxflow.hpp): int64 C-contiguous source_cap, sink_cap (n,), int32 tails, heads (m,) of the infinite inner arcs. Returns a dict: source_side (uint8, the minimal source side, the same whatever the algorithm), flow, cut (equal when status is 'optimal'), status, algorithm (the one that ran: 'auto' picks by network size), phases, augmentations, peak_memory_mb, seconds. algorithm: 'auto', 'dinic', 'push_relabel' or 'boykov_kolmogorov'. greedy: start from the greedy flow (maxflow.hpp; the answer is the same, False for measuring).
    """

class CompactTrees:
    """
    The compact trees of an EnsembleData for the native cut functions: per-tree lists of int32 left/right/feature/end, int64 error, uint8 first_use, int32 by_leaf (N,), int64 leaf_start (n_nodes + 1,); float64 costs (K,), int64 weight (N,) (examples each one stands for). Shapes are checked here, indices by each function.
    """

    def __init__(
        self,
        left: Sequence[
            Annotated[
                NDArray[numpy.int32], dict(shape=(None,), order="C", device="cpu", writable=False)
            ]
        ],
        right: Sequence[
            Annotated[
                NDArray[numpy.int32], dict(shape=(None,), order="C", device="cpu", writable=False)
            ]
        ],
        feature: Sequence[
            Annotated[
                NDArray[numpy.int32], dict(shape=(None,), order="C", device="cpu", writable=False)
            ]
        ],
        end: Sequence[
            Annotated[
                NDArray[numpy.int32], dict(shape=(None,), order="C", device="cpu", writable=False)
            ]
        ],
        error: Sequence[
            Annotated[
                NDArray[numpy.int64], dict(shape=(None,), order="C", device="cpu", writable=False)
            ]
        ],
        first_use: Sequence[
            Annotated[
                NDArray[numpy.uint8], dict(shape=(None,), order="C", device="cpu", writable=False)
            ]
        ],
        by_leaf: Sequence[
            Annotated[
                NDArray[numpy.int32], dict(shape=(None,), order="C", device="cpu", writable=False)
            ]
        ],
        leaf_start: Sequence[
            Annotated[
                NDArray[numpy.int64], dict(shape=(None,), order="C", device="cpu", writable=False)
            ]
        ],
        costs: Annotated[
            NDArray[numpy.float64], dict(shape=(None,), order="C", device="cpu", writable=False)
        ],
        weight: Annotated[
            NDArray[numpy.int64], dict(shape=(None,), order="C", device="cpu", writable=False)
        ],
    ) -> None: ...

def ensemble_min_cut(
    trees: CompactTrees,
    lam: float,
    scale: float,
    reduce: bool = True,
    merge_pairs: bool = True,
    restrict_levels: int = 0,
    time_limit: float = 0.0,
    memory_limit_mb: float = 0.0,
    slice_flow: int = -1,
    nest_levels: int = 2,
    nest_arcs: int = 20971520,
) -> dict[str, Any]:
    """
    IP3 as one minimum cut of CompactTrees (ensemble_cut.hpp). reduce: force and drop splits first; merge_pairs: pairs with the same predecessors as one node; restrict_levels: rounds of rule 5 (restricted problems for depth limits 0 .. restrict_levels - 1; all exact). Returns a dict: kept (uint8 per global node), flow, cut (integer, scaled), total_gain, lost_gain, paid_cost, status, algorithm (the final max-flow's, '' if none ran), the network's n_nodes and n_arcs (and before merging), n_forced, n_dead, n_excluded, n_paid, iterations, phases, augmentations, times and peak_memory_mb; rounds (int64, one row of level, nodes, arcs, forced by the cut, forced by rule 3 after it per round of rule 5) and round_seconds. slice_flow: the final max-flow on arcs read from the tree slices (push_relabel_slices): -1 where it is the one to use (deep trees), 0 never, 1 always. nest_levels, nest_arcs: rule 7 (the cut at lam / 3 first, the splits outside its answer left out) where nest_arcs slice entries or more are left, that many levels deep (0: never).
    """

def ensemble_reduced_network(
    trees: CompactTrees,
    lam: float,
    scale: float,
    merge_pairs: bool = True,
    restrict_levels: int = 0,
) -> dict[str, Any]:
    """
    The network ensemble_min_cut gives its max-flow at lam (every exact reduction): int64 source_cap, sink_cap, int32 tails, heads, and constant (the capacity the forced pairs add to every cut), n_splits (split nodes come first), n_forced, n_dead.
    """

def ensemble_network(trees: CompactTrees, merge_pairs: bool = True) -> dict[str, Any]:
    """
    The lambda-independent cut network of CompactTrees (ensemble_cut.hpp), dead splits dropped and identical pairs merged: split_node (global ids), gain, pair_cost, pair_first, int32 tails/heads (split nodes first, then pair nodes), n_dead and the sizes before merging.
    """

class RashomonSet:
    """
    The native Rashomon set (rashomon.hpp): counts in hex text, trees by index in set order. Built by rashomon_build, or by rashomon_certify then rashomon_build_certified.
    """

    @property
    def complete(self) -> bool: ...
    @property
    def status(self) -> str: ...
    @property
    def n_subproblems(self) -> int: ...
    @property
    def seconds(self) -> float: ...
    @property
    def peak_memory_mb(self) -> float: ...
    @property
    def total_weight(self) -> float: ...
    @property
    def count_only(self) -> bool: ...
    @property
    def certified(self) -> bool: ...
    @property
    def optimal_code(self) -> list[int]:
        """Pre-order code of an optimal tree (a certified set; empty otherwise)."""

    def count(self) -> str: ...
    def count_without(self, feature: int) -> str: ...
    def histogram(self) -> tuple[list[float], list[int], list[float], list[str]]: ...
    def tree(self, index: str) -> list[int]: ...
    def trees(
        self, start: str, n: int, pad: int
    ) -> tuple[
        Annotated[NDArray[numpy.int32], dict(shape=(None, None))],
        Annotated[NDArray[numpy.int32], dict(shape=(None,))],
    ]: ...
    def rank(self, code: Sequence[int]) -> str:
        """
        The hex index of the tree with this pre-order code in the set ('' when absent).
        """

def rashomon_build(
    problem: Problem,
    config: SearchConfig,
    bound: float,
    majority_only: bool = False,
    progress: object | None = None,
    allowed: Sequence[int] = [],
    split_costs: Sequence[int] = [],
    budget: int = -1,
    count_only: bool = False,
) -> RashomonSet:
    """
    Build the Rashomon set {trees of depth <= config.max_depth: objective <= bound} (normalized bound; the 1e-9 tolerance is added). Limits in config stop it early (complete=False: a subset, every member genuine). Constraints: every leaf receives >= config.min_leaf_weight of the total weight; a feature whose `allowed` entry is 0 is never split on; the splits' summed `split_costs` (per feature, ints >= 0) stay <= `budget` (-1: no budget). Empty lists: no such constraint. count_only: keep the counts, not the trees (tree, trees, rank and count_without then raise).
    """

def rashomon_certify(
    problem: Problem,
    config: SearchConfig,
    epsilon: float,
    absolute: bool = False,
    majority_only: bool = False,
    progress: object | None = None,
    count_only: bool = False,
) -> RashomonSet:
    """
    Prepare a Rashomon set and certify the optimum in its own memo, every sub-problem solved to what the build for (1 + epsilon) * OPT (OPT + epsilon with absolute) will ask (no side constraints). `certified` False: a limit stopped it (status says which); else `optimal_code` is an optimal tree and rashomon_build_certified builds the set.
    """

def rashomon_build_certified(
    set: RashomonSet,
    problem: Problem,
    config: SearchConfig,
    bound: float,
    progress: object | None = None,
) -> None:
    """
    Build a set rashomon_certify certified, once, for `bound` (normalized; the 1e-9 tolerance is added) under the config's limits (as rashomon_build).
    """

def _count_arithmetic(a: str, b: str) -> tuple[str, str, str, str, str, int]:
    """
    Debug: (a+b, a*b, a-b or '-', a//b, a%b, cmp) of two hex counts (tests of count.hpp).
    """

def extract_trees(
    children_left: Sequence[
        Annotated[
            NDArray[numpy.int64], dict(shape=(None,), order="C", device="cpu", writable=False)
        ]
    ],
    children_right: Sequence[
        Annotated[
            NDArray[numpy.int64], dict(shape=(None,), order="C", device="cpu", writable=False)
        ]
    ],
    feature: Sequence[
        Annotated[
            NDArray[numpy.int64], dict(shape=(None,), order="C", device="cpu", writable=False)
        ]
    ],
    threshold: Sequence[
        Annotated[
            NDArray[numpy.float64], dict(shape=(None,), order="C", device="cpu", writable=False)
        ]
    ],
    X32: Annotated[
        NDArray[numpy.float32], dict(shape=(None, None), order="C", device="cpu", writable=False)
    ],
    y: Annotated[
        NDArray[numpy.int32], dict(shape=(None,), order="C", device="cpu", writable=False)
    ],
    n_classes: int,
    time_limit: float = 0.0,
    missing_go_to_left: Sequence[
        Annotated[
            NDArray[numpy.uint8], dict(shape=(None,), order="C", device="cpu", writable=False)
        ]
    ] = [],
) -> tuple[list[dict[str, Any]], str]:
    """
    Extract sklearn trees for the pruning (ensemble.hpp): lists (one per tree) of the tree_ arrays children_left, children_right, feature (int64, global columns) and threshold (float64); X32 float32 (N, K) and y int32 (N,) C-contiguous; missing_go_to_left (uint8, one array per tree, or none: every NaN goes right) says where a NaN goes, as sklearn routes it. Returns (list of per-tree dicts: left, right, parent, depth, end, feature, sk_node, leaf_of, by_leaf int32, threshold float64, counts float64 (n_nodes, n_classes), leaf_start int64 (n_nodes + 1,), first_use and missing_left bool; status). A stop (time_limit, interrupted, memory_limit) returns the trees done so far.
    """

def tree_entries(
    parent: Annotated[
        NDArray[numpy.int32], dict(shape=(None,), order="C", device="cpu", writable=False)
    ],
    first_use: Annotated[
        NDArray[numpy.bool_], dict(shape=(None,), order="C", device="cpu", writable=False)
    ],
    leaf_of: Annotated[
        NDArray[numpy.int32], dict(shape=(None,), order="C", device="cpu", writable=False)
    ],
) -> tuple[
    Annotated[NDArray[numpy.int64], dict(shape=(None,))],
    Annotated[NDArray[numpy.int64], dict(shape=(None,))],
]:
    """
    The feature-use entries of one extracted tree: (example, node), int64, sorted by (node, example); node runs over the first-use ancestors of each example's leaf.
    """

def search_budget_dp(
    problem: Problem,
    split_costs: Sequence[int],
    allowed: Sequence[bool],
    budget: int,
    min_leaf_weight: float,
    config: SearchConfig,
    progress: object | None = None,
) -> SearchOutput:
    """
    Budgeted DP (odtkit.core.budget.search_budgeted): the optimal tree of depth <= config.max_depth whose splits' summed integer cost (split_costs, one per feature of the problem) is <= budget, splitting only on allowed features, every leaf weighing >= min_leaf_weight (the problem's weight units). An empty tree: no tree is feasible.
    """

// Budgeted DP over supports with Pareto fronts per (support, depth) (budget_dp.hpp).
#include "budget_dp.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bitset.hpp"
#include "search_common.hpp"

namespace odtkit {
namespace {

// One Pareto entry: a tree of resource r and cost c (count units). feature >= 0: a split whose
// children are entries `left` / `right` of the children's fronts; < 0: a leaf, -(k+1).
struct Entry {
  long long r;
  double c;
  int feature;
  int left, right;
};
using Front = std::vector<Entry>;

// Memo key: the support's words followed by the remaining depth.
struct KeyHash {
  std::size_t operator()(const std::vector<std::uint64_t>& k) const {
    return static_cast<std::size_t>(words::hash(k.data(), k.size()));
  }
};

class BudgetSolver {
 public:
  BudgetSolver(const Problem& P, const BudgetSpec& spec, const SearchConfig& config,
               Budget& budget)
      : P_(P),
        spec_(spec),
        budget_(budget),
        bound_(P, config),
        K_(P.n_classes()),
        W_(P.n_words()),
        B_(spec.budget),
        Lambda_(config.lam * P.total_weight()),
        tau_(count_tolerance(P.total_weight())),
        zero_(zero_weight(P.total_weight())),
        minw_(spec.min_leaf_weight) {
    for (std::size_t j = 0; j < P.n_features(); ++j)
      if (spec.allowed[j] && spec.cost[j] <= B_) features_.push_back(static_cast<int>(j));
  }

  // The front of (s, d); nullptr when the budget stopped the search (nothing memoised then).
  const Front* solve(const std::uint64_t* s, int d) {
    std::vector<std::uint64_t> key(s, s + W_);
    key.push_back(static_cast<std::uint64_t>(d));
    auto it = memo_.find(key);
    if (it != memo_.end()) return &it->second;
    if (budget_.tick(bytes_, ahead())) return nullptr;

    std::vector<double> cw(static_cast<std::size_t>(K_));
    P_.class_weights(s, cw.data());
    double total = 0.0;
    for (double v : cw) total += v;
    Front front;
    if (total >= minw_) {
      const double eq = P_.minority(s);
      const LeafBound lb = bound_(cw.data(), eq, d);
      front.push_back(Entry{0, lb.leaf, -(majority_class(cw.data(), K_) + 1), -1, -1});
      if (!lb.terminal && !split_into(s, d, cw, lb.leaf, front)) return nullptr;
    }
    front.shrink_to_fit();  // candidates made it grow; the memo keeps only the Pareto entries
    bytes_ += (W_ + 1) * sizeof(std::uint64_t) + front.capacity() * sizeof(Entry) + 96;
    ++n_fronts_;
    max_front_ = std::max(max_front_, front.size());
    return &memo_.emplace(std::move(key), std::move(front)).first->second;
  }

  // Rebuild the pre-order code of entry `e` of front(s, d) (every front it reads is memoised).
  void rebuild(const std::uint64_t* s, int d, int e, std::vector<int>& code) {
    if (d == 0) {  // a leaf under a depth-1 split (never memoised)
      std::vector<double> cw(static_cast<std::size_t>(K_));
      P_.class_weights(s, cw.data());
      code.push_back(-(majority_class(cw.data(), K_) + 1));
      return;
    }
    const Front* f = lookup(s, d);
    const Entry& entry = (*f).at(static_cast<std::size_t>(e));
    code.push_back(entry.feature);
    if (entry.feature < 0) return;
    std::vector<std::uint64_t> left(W_), right(W_);
    const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(entry.feature));
    words::and_not_into(left.data(), s, x, W_);
    words::and_into(right.data(), s, x, W_);
    rebuild(left.data(), d - 1, entry.left, code);
    rebuild(right.data(), d - 1, entry.right, code);
  }

  std::size_t bytes() const { return bytes_ + memo_.bucket_count() * sizeof(void*); }
  long long n_fronts() const { return n_fronts_; }
  std::size_t max_front() const { return max_front_; }
  long long combinations() const { return combinations_; }

 private:
  const Front* lookup(const std::uint64_t* s, int d) {
    std::vector<std::uint64_t> key(s, s + W_);
    key.push_back(static_cast<std::uint64_t>(d));
    auto it = memo_.find(key);
    if (it == memo_.end()) throw std::logic_error("budget dp: a front to rebuild is not memoised");
    return &it->second;
  }

  // What one more sub-problem may allocate before the next check: its key, a front of up to
  // the budget's size, and the memo's next rehash.
  std::size_t ahead() const {
    const std::size_t entries =
        static_cast<std::size_t>(std::min<long long>(B_ + 1, 1 << 16)) * sizeof(Entry) * 3;
    const std::size_t rehash =
        memo_.size() + 1 > memo_.bucket_count() ? 2 * memo_.bucket_count() * sizeof(void*) : 0;
    return (W_ + 1) * sizeof(std::uint64_t) * 4 + entries + rehash;
  }

  // Adds every effective split's candidates to `front` (holding the leaf) and prunes it to
  // its Pareto entries; false when the budget stopped the search.
  bool split_into(const std::uint64_t* s, int d, const std::vector<double>& cw, double leaf,
                  Front& front) {
    std::vector<std::uint64_t> left(W_), right(W_);
    std::vector<double> cr(static_cast<std::size_t>(K_)), cl(static_cast<std::size_t>(K_));
    double total = 0.0;
    for (double v : cw) total += v;
    Front candidates;
    for (int j : features_) {
      const std::uint64_t* x = P_.feature_words(static_cast<std::size_t>(j));
      const double wr = P_.split_class_weights(s, x, cw.data(), cr.data(), cl.data());
      const double wl = total - wr;
      if (wr <= zero_ || wl <= zero_) continue;  // not an effective split
      if (wr < minw_ || wl < minw_) continue;
      words::and_not_into(left.data(), s, x, W_);
      words::and_into(right.data(), s, x, W_);
      const long long cost = spec_.cost[static_cast<std::size_t>(j)];
      if (d == 1) {
        // two leaves: no sub-problem to memoise (rebuild() recomputes their labels)
        const double c = misclassified(cl.data(), K_) + misclassified(cr.data(), K_) + 2 * Lambda_;
        ++combinations_;
        if (c < best_within(front, candidates, cost) - tau_)
          candidates.push_back(Entry{cost, c, j, 0, 0});
        continue;
      }
      // dominance: every tree splitting on j costs at least its sides' bounds and uses at
      // least `cost`, so an entry within that resource at most that cost dominates them all
      // (the leaf, resource 0, first of all)
      const double lb_l = side_bound(left.data(), cl.data(), d - 1);
      const double lb_r = side_bound(right.data(), cr.data(), d - 1);
      if (lb_l + lb_r >= best_within(front, candidates, cost) - tau_) continue;
      const Front* fl = solve(left.data(), d - 1);
      if (fl == nullptr) return false;
      if (fl->empty()) continue;
      const Front* fr = solve(right.data(), d - 1);
      if (fr == nullptr) return false;
      if (fr->empty()) continue;
      for (std::size_t a = 0; a < fl->size(); ++a) {
        const Entry& ea = (*fl)[a];
        if (ea.r + cost > B_) break;  // sorted by resource
        for (std::size_t b = 0; b < fr->size(); ++b) {
          const Entry& eb = (*fr)[b];
          const long long r = ea.r + eb.r + cost;
          if (r > B_) break;
          const double c = ea.c + eb.c;
          ++combinations_;
          if (c >= leaf - tau_) continue;  // the leaf dominates it
          candidates.push_back(Entry{r, c, j, static_cast<int>(a), static_cast<int>(b)});
        }
      }
      if (candidates.size() > 4 * (front.size() + 64)) prune(front, candidates);
      if (budget_.check_clock()) return false;
    }
    prune(front, candidates);
    return true;
  }

  // The least cost of an entry of front U candidates using at most `r`.
  static double best_within(const Front& front, const Front& candidates, long long r) {
    double best = std::numeric_limits<double>::infinity();
    for (const Entry& e : front)
      if (e.r <= r && e.c < best) best = e.c;
    for (const Entry& e : candidates)
      if (e.r <= r && e.c < best) best = e.c;
    return best;
  }

  // A lower bound on every tree of depth <= d on side s (class weights cw): its memoised
  // front's least cost when there is one (exact), else the leaf/lookahead bound.
  double side_bound(const std::uint64_t* s, const double* cw, int d) {
    const double lb = bound_(cw, P_.minority(s), d).lb;
    scratch_.assign(s, s + W_);
    scratch_.push_back(static_cast<std::uint64_t>(d));
    auto it = memo_.find(scratch_);
    if (it == memo_.end()) return lb;
    if (it->second.empty()) return std::numeric_limits<double>::infinity();
    return std::max(lb, it->second.back().c);  // cost decreases along a front
  }

  // front <- Pareto entries of front U candidates (resource ascending, cost strictly
  // decreasing by more than tau; ties keep the smaller resource, then the earlier entry).
  void prune(Front& front, Front& candidates) {
    if (candidates.empty()) return;
    front.insert(front.end(), candidates.begin(), candidates.end());
    candidates.clear();
    std::stable_sort(front.begin(), front.end(), [](const Entry& a, const Entry& b) {
      return a.r < b.r || (a.r == b.r && a.c < b.c);
    });
    std::size_t out = 0;
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < front.size(); ++i) {
      if (front[i].c < best - tau_) {
        best = front[i].c;
        front[out++] = front[i];
      }
    }
    front.resize(out);
  }

  const Problem& P_;
  const BudgetSpec& spec_;
  Budget& budget_;
  InitialBound bound_;
  int K_;
  std::size_t W_;
  long long B_;
  double Lambda_, tau_, zero_, minw_;
  std::vector<int> features_;
  std::vector<std::uint64_t> scratch_;
  std::unordered_map<std::vector<std::uint64_t>, Front, KeyHash> memo_;
  std::size_t bytes_ = 0, max_front_ = 0;
  long long n_fronts_ = 0, combinations_ = 0;
};

void check_spec(const Problem& P, const BudgetSpec& spec, const SearchConfig& config) {
  if (config.max_depth < 0)
    throw std::invalid_argument("max_depth must be >= 0: the budgeted search needs a depth limit");
  if (spec.cost.size() != P.n_features())
    throw std::invalid_argument("split_costs must have one entry per feature of the problem");
  if (spec.allowed.size() != P.n_features())
    throw std::invalid_argument("allowed must have one entry per feature of the problem");
  for (long long c : spec.cost)
    if (c < 0) throw std::invalid_argument("split_costs must be >= 0");
  // resources add up to 2 * budget + cost before the cap is checked
  if (spec.budget < 0 || spec.budget > (1LL << 60))
    throw std::invalid_argument("budget must be in [0, 2**60]");
  if (!(spec.min_leaf_weight >= 0.0) || !std::isfinite(spec.min_leaf_weight))
    throw std::invalid_argument("min_leaf_weight must be a finite number >= 0");
}

}  // namespace

SearchOutput search_budget_dp(const Problem& problem, const BudgetSpec& spec,
                              const SearchConfig& config, std::function<bool()> interrupted) {
  check_spec(problem, spec, config);
  Budget budget(config, std::move(interrupted));
  const double N = problem.total_weight();
  const double Lambda = config.lam * N;
  const double tau = count_tolerance(N);
  const int D = config.max_depth;
  SearchOutput out(config);
  auto normalized = [N](double v) { return N > 0 ? v / N : v; };

  double incumbent = std::numeric_limits<double>::infinity();
  std::vector<int> tree;
  // every tree has a leaf and misclassifies at least the equivalent-points minority
  const double floor_bound = problem.minority_total() + Lambda;
  int completed = -1;
  {
    // the single majority leaf, when heavy enough, is the first incumbent (before any limit)
    std::vector<double> cw(static_cast<std::size_t>(problem.n_classes()));
    problem.class_weights(problem.all_points().data(), cw.data());
    double total = 0.0;
    for (double v : cw) total += v;
    if (total >= spec.min_leaf_weight) {
      tree = {-(majority_class(cw.data(), problem.n_classes()) + 1)};
      incumbent = misclassified(cw.data(), problem.n_classes()) + Lambda;
    }
  }
  BudgetSolver solver(problem, spec, config, budget);
  catch_out_of_memory(budget, [&] {
    const std::uint64_t* root = problem.all_points().data();
    for (int d = 0; d <= D; ++d) {
      const Front* front = solver.solve(root, d);
      if (front == nullptr) break;
      completed = d;
      if (front->empty()) break;  // no feasible tree at any depth: infeasible
      int best = 0;
      for (std::size_t e = 1; e < front->size(); ++e)
        if ((*front)[e].c < (*front)[static_cast<std::size_t>(best)].c - tau)
          best = static_cast<int>(e);
      const double value = (*front)[static_cast<std::size_t>(best)].c;
      if (value < incumbent - tau) {
        std::vector<int> code;
        solver.rebuild(root, d, best, code);
        const double check = evaluate_tree(problem, code, Lambda, D);
        if (std::abs(check - value) > 16 * tau + 1e-9)
          throw std::logic_error(
              "budget dp: a rebuilt tree does not score what the search found (a bug)");
        tree = std::move(code);  // the tree before its value (a bad_alloc keeps them in step)
        incumbent = check;
      }
      out.record(budget.elapsed(), normalized(incumbent),
                 normalized(d == D ? incumbent : std::min(incumbent, floor_bound)));
    }
  });
  budget.note_memory(solver.bytes());
  // an empty root front (at depth 0 already) is the verdict "infeasible"
  const bool done = completed == D || (completed >= 0 && tree.empty());
  out.status = done && !budget.ran_out_of_memory() ? SearchStatus::optimal : budget.status();
  if (out.status == SearchStatus::optimal && !done) out.status = SearchStatus::memory_limit;
  out.tree = tree;
  out.objective = normalized(incumbent);
  if (tree.empty()) {
    // the root is lighter than the minimum leaf weight: no tree is feasible
    out.status = SearchStatus::optimal;
    out.lower_bound = std::numeric_limits<double>::infinity();
  } else {
    out.lower_bound = out.status == SearchStatus::optimal
                          ? out.objective
                          : normalized(std::min(incumbent, floor_bound));
  }
  out.n_explored = budget.nodes();
  out.peak_memory_mb = budget.peak_memory_mb();
  out.stats["depths_completed"] = static_cast<double>(completed + 1);
  out.stats["fronts"] = static_cast<double>(solver.n_fronts());
  out.stats["front_max"] = static_cast<double>(solver.max_front());
  out.stats["combinations"] = static_cast<double>(solver.combinations());
  out.stats["out_of_memory"] = budget.ran_out_of_memory() ? 1.0 : 0.0;
  out.stats["search_seconds"] = budget.elapsed();
  return out;
}

}  // namespace odtkit

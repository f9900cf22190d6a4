// Anneal: a guided search for spaces too large to time exhaustively.  One annealing chain per
// variant, so a variant whose good region is small is not abandoned because another variant led
// early:
//   1. the variants' default configs, then random candidates (an eighth of the budget);
//   2. until 80% of the budget: pick a chain, the one with the best time with probability 1/2,
//      the second 1/4, ...; move its current config to another config of the same variant drawn
//      with weight exp(-distance / 0.5), distance = the sum over parameters of how many steps
//      apart their values are in the parameter's value list (so sparse spaces, e.g. restricted
//      by ParamSpace::only(), still move to their nearest members); accept by Metropolis on
//      log(time), the temperature falling from 0.3 to 0.003.  One step in ten evaluates a random
//      unevaluated candidate instead.  Every quarter of the budget each chain restarts from its
//      best;
//   3. a greedy polish: the unevaluated configs nearest the bests of the two leading chains, in
//      turn, until the budget is spent or nothing is left within distance 2 (then random ones).
// Revisits cost nothing; a chain that keeps revisiting gets a random unevaluated candidate.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "strategies.hpp"

namespace kiln::detail {
namespace {

constexpr double kJump = 0.1;
constexpr double kScale = 0.5;
constexpr double kT0 = 0.3, kT1 = 0.003;
constexpr double kPolishAt = 0.8;

struct Chain {
  std::vector<std::size_t> members;  // candidates of the variant
  std::optional<std::size_t> cur, best;
};

class Anneal final : public Strategy {
 public:
  const char* name() const override { return "anneal"; }

  void run(SearchContext& ctx) override {
    const std::size_t n = ctx.size();
    if (n == 0) return;
    index(ctx);
    // 1. Defaults, then random candidates.
    for (std::size_t i = 0; i < n && !ctx.done(); ++i)
      if (ctx.candidate(i).is_default) evaluate(ctx, i);
    const std::size_t budget = ctx.eval_budget() ? *ctx.eval_budget() : n;
    for (std::size_t k = 0; k < std::max<std::size_t>(1, budget / 8) && !ctx.done(); ++k) {
      auto j = random_unevaluated(ctx);
      if (!j) break;
      evaluate(ctx, *j);
    }
    // 2. Annealing.
    int restarts = 0, stall = 0;
    while (!ctx.done() && ctx.progress() < kPolishAt) {
      const double phase = ctx.progress() / kPolishAt;
      if (static_cast<int>(phase * 4) > restarts) {
        restarts = static_cast<int>(phase * 4);
        for (Chain& c : chains_) c.cur = c.best;
      }
      std::vector<Chain*> ranked = ranked_chains(ctx);
      if (ranked.empty() || uniform01(ctx.rng()) < kJump) {
        auto j = random_unevaluated(ctx);
        if (!j || !evaluate(ctx, *j)) break;
        continue;
      }
      std::size_t r = 0;  // chain r with probability 2^-(r+1), the last one taking the rest
      while (r + 1 < ranked.size() && uniform01(ctx.rng()) < 0.5) ++r;
      Chain& chain = *ranked[r];
      std::size_t j = propose(ctx, chain, *chain.cur);
      if (ctx.evaluated(j) && ++stall > 20) {
        auto u = random_unevaluated(ctx);
        if (!u) break;
        j = *u;
      }
      if (!ctx.evaluated(j)) stall = 0;
      if (!evaluate(ctx, j)) break;
      if (chain_of_[j] != &chain) continue;  // a jump to another variant
      const double c_new = ctx.cost(j), c_cur = ctx.cost(*chain.cur);
      if (!std::isfinite(c_new)) continue;
      if (!std::isfinite(c_cur) || c_new <= c_cur) {
        chain.cur = j;
        continue;
      }
      const double t = kT0 * std::pow(kT1 / kT0, phase);
      const double delta = std::log(std::max(c_new, 1e-12)) - std::log(std::max(c_cur, 1e-12));
      if (uniform01(ctx.rng()) < std::exp(-delta / t)) chain.cur = j;
    }
    // 3. Greedy polish around the two leading chains' bests, in turn.
    std::size_t turn = 0;
    while (!ctx.done()) {
      std::vector<Chain*> ranked = ranked_chains(ctx);
      if (ranked.size() > 2) ranked.resize(2);
      std::optional<std::size_t> next;
      for (std::size_t k = 0; k < ranked.size() && !next; ++k)
        next = nearest_unevaluated(ctx, *ranked[(turn + k) % ranked.size()], 2);
      ++turn;
      if (!next) next = random_unevaluated(ctx);
      if (!next || !evaluate(ctx, *next)) break;
    }
  }

 private:
  std::vector<std::vector<int>> coords_;  // value positions per candidate
  std::vector<Chain> chains_;
  std::vector<Chain*> chain_of_;          // per candidate

  void index(const SearchContext& ctx) {
    coords_.assign(ctx.size(), {});
    chains_.clear();
    std::map<const Variant*, std::size_t> slot;
    for (std::size_t i = 0; i < ctx.size(); ++i) {
      const Candidate& c = ctx.candidate(i);
      auto [it, fresh] = slot.emplace(c.variant, chains_.size());
      if (fresh) chains_.emplace_back();
      chains_[it->second].members.push_back(i);
      for (const auto& p : c.variant->space().params()) {
        const int v = c.config.get_or(p.name, p.values.front());
        auto pos = std::find(p.values.begin(), p.values.end(), v);
        coords_[i].push_back(static_cast<int>(pos == p.values.end() ? 0 : pos - p.values.begin()));
      }
    }
    chain_of_.assign(ctx.size(), nullptr);
    for (Chain& c : chains_)
      for (std::size_t i : c.members) chain_of_[i] = &c;
  }

  // Evaluates i and keeps its chain's best (and a chain's first current) up to date.
  bool evaluate(SearchContext& ctx, std::size_t i) {
    if (!ctx.evaluate(i)) return false;
    Chain& c = *chain_of_[i];
    const double cost = ctx.cost(i);
    if (std::isfinite(cost) && (!c.best || cost < ctx.cost(*c.best))) c.best = i;
    if (!c.cur || !std::isfinite(ctx.cost(*c.cur))) c.cur = c.best ? c.best : std::optional<std::size_t>(i);
    return true;
  }

  // Chains with a finite best, fastest first.
  std::vector<Chain*> ranked_chains(const SearchContext& ctx) {
    std::vector<Chain*> out;
    for (Chain& c : chains_)
      if (c.best) out.push_back(&c);
    std::sort(out.begin(), out.end(), [&](const Chain* a, const Chain* b) { return ctx.cost(*a->best) < ctx.cost(*b->best); });
    return out;
  }

  int distance(std::size_t a, std::size_t b) const {
    int d = 0;
    for (std::size_t k = 0; k < coords_[a].size() && k < coords_[b].size(); ++k) d += std::abs(coords_[a][k] - coords_[b][k]);
    return d;
  }

  std::size_t propose(SearchContext& ctx, const Chain& chain, std::size_t cur) const {
    const auto& same = chain.members;
    if (same.size() < 2) return pick(ctx.rng(), ctx.size());
    double total = 0.0;
    std::vector<double> w(same.size(), 0.0);
    for (std::size_t k = 0; k < same.size(); ++k)
      if (same[k] != cur) total += w[k] = std::exp(-distance(cur, same[k]) / kScale);
    double u = uniform01(ctx.rng()) * total;
    for (std::size_t k = 0; k < same.size(); ++k) {
      if (w[k] == 0.0) continue;
      if (u < w[k]) return same[k];
      u -= w[k];
    }
    for (std::size_t k = same.size(); k-- > 0;)
      if (same[k] != cur) return same[k];
    return cur;
  }

  std::optional<std::size_t> nearest_unevaluated(const SearchContext& ctx, const Chain& chain, int max_distance) const {
    std::optional<std::size_t> best;
    int best_d = max_distance + 1;
    for (std::size_t j : chain.members) {
      if (ctx.evaluated(j)) continue;
      const int d = distance(*chain.best, j);
      if (d < best_d) {
        best_d = d;
        best = j;
      }
    }
    return best;
  }

  static std::optional<std::size_t> random_unevaluated(SearchContext& ctx) {
    std::vector<std::size_t> left;
    for (std::size_t i = 0; i < ctx.size(); ++i)
      if (!ctx.evaluated(i)) left.push_back(i);
    if (left.empty()) return std::nullopt;
    return left[pick(ctx.rng(), left.size())];
  }
};

}  // namespace

std::unique_ptr<Strategy> make_anneal_strategy() { return std::make_unique<Anneal>(); }

}  // namespace kiln::detail

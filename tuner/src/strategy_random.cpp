// Random: the variants' default configs first (cheap, known baselines), then the rest in a
// seeded random order until the budget is spent.
#include "strategies.hpp"

namespace kiln::detail {
namespace {

class RandomSearch final : public Strategy {
 public:
  const char* name() const override { return "random"; }
  void run(SearchContext& ctx) override {
    std::vector<std::size_t> order, rest;
    for (std::size_t i = 0; i < ctx.size(); ++i) (ctx.candidate(i).is_default ? order : rest).push_back(i);
    for (std::size_t i = rest.size(); i > 1; --i) std::swap(rest[i - 1], rest[pick(ctx.rng(), i)]);
    order.insert(order.end(), rest.begin(), rest.end());
    for (std::size_t i : order) {
      if (ctx.done()) break;
      ctx.evaluate(i);
    }
  }
};

}  // namespace

std::unique_ptr<Strategy> make_random_strategy() { return std::make_unique<RandomSearch>(); }

}  // namespace kiln::detail

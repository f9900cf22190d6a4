// Exhaustive: every candidate in space order (each variant's default first, so the give-up
// threshold is tight early).  An evaluation budget applies only when one is given.
#include "strategies.hpp"

namespace kiln::detail {
namespace {

class Exhaustive final : public Strategy {
 public:
  const char* name() const override { return "exhaustive"; }
  void run(SearchContext& ctx) override {
    for (std::size_t i = 0; i < ctx.size() && !ctx.done(); ++i) ctx.evaluate(i);
  }
};

}  // namespace

std::unique_ptr<Strategy> make_exhaustive_strategy() { return std::make_unique<Exhaustive>(); }

}  // namespace kiln::detail

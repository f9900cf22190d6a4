// Variant::prepare's default: a PreparedLaunch that calls launch() with a copy of the config, for
// variants that do not bind their config to a kernel themselves.
#include "kiln/variant.hpp"

namespace kiln {
namespace {

class ConfiguredLaunch final : public PreparedLaunch {
 public:
  ConfiguredLaunch(const Variant* variant, Config config) : variant_(variant), config_(std::move(config)) {}
  Status run(const Args& args, const Problem& problem, void* workspace, Stream stream) const override {
    return variant_->launch(args, problem, config_, workspace, stream);
  }

 private:
  const Variant* variant_;
  Config config_;
};

}  // namespace

std::shared_ptr<const PreparedLaunch> Variant::prepare(const Problem&, const Config& config, const DeviceInfo&) const {
  return std::make_shared<ConfiguredLaunch>(this, config);
}

}  // namespace kiln

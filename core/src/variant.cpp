// Variant::prepare's default: a PreparedLaunch that calls launch() with a copy of the config, for
// variants that do not bind their config to a kernel themselves; and supports_or_no.
#include "kiln/variant.hpp"

#include <exception>
#include <string>

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

Support Variant::supports_or_no(const Problem& problem, const DeviceInfo& device, const Config& config) const noexcept {
  try {
    return supports(problem, device, config);
  } catch (const std::exception& e) {
    return Support::no(std::string("supports() threw: ") + e.what());
  } catch (...) {
    return Support::no("supports() threw");
  }
}

}  // namespace kiln

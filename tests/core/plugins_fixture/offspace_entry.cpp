// A plugin whose variant's default config lies outside its own declared space: it loads (the
// variant is usable with tuned configs), and the loader warns about the default.
#include <kiln/plugin.hpp>
#include <kiln/variant.hpp>

#include <memory>

namespace {

class OffSpaceHost final : public kiln::Variant {
 public:
  OffSpaceHost()
      : Variant({"fixture_offspace_host", "fixture_scale", kiln::DeviceKind::host, {kiln::f32}, 0, "default outside", false},
                kiln::ParamSpace().param("unroll", {1, 2, 4})) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return kiln::Config{{"unroll", 3}}; }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override {
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args&, const kiln::Problem&, const kiln::Config&, void*, kiln::Stream) const override {
    return kiln::Status::fail(kiln::ErrorKind::unsupported, "fixture: never run");
  }
};

kiln::Status register_offspace(kiln::Registry& registry) noexcept {
  try {
    registry.add_variant(std::make_shared<OffSpaceHost>());
    return {};
  } catch (const std::exception& e) {
    return kiln::Status::fail(kiln::ErrorKind::internal, e.what());
  }
}

}  // namespace

KILN_PLUGIN("fixture_offspace", "0.1.0", register_offspace)

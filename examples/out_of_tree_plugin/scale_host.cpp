// scale_host: the op's host reference as a variant, so scale works without a GPU and the tuner
// has its oracle.
#include "scale_op.hpp"
#include "scale_variants.hpp"

namespace scale_example {
namespace {

class ScaleHost final : public kiln::Variant {
 public:
  ScaleHost()
      : Variant({"scale_host", "scale", kiln::DeviceKind::host, {kiln::f32}, /*priority=*/0,
                 "host loop (the reference)", /*reference=*/true},
                kiln::ParamSpace()) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return {}; }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override {
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args& args, const kiln::Problem& p, const kiln::Config&, void*,
                      kiln::Stream) const override {
    return scale_reference(args, p);
  }
};

}  // namespace

std::shared_ptr<kiln::Variant> make_scale_host() { return std::make_shared<ScaleHost>(); }

}  // namespace scale_example

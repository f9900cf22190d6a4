#include "gemv_host.hpp"

#include "gemv_reference.hpp"

namespace kiln::gemv {
namespace {

class GemvHost final : public Variant {
 public:
  GemvHost()
      : Variant(VariantDesc{"gemv_host", "gemv", DeviceKind::host, {DType::f32, DType::f16, DType::bf16}, 0,
                            "host loop over rows, double accumulation (the reference)", /*reference=*/true},
                ParamSpace{}) {}

  Config default_config(const DeviceInfo&) const override { return {}; }
  Support supports(const Problem&, const DeviceInfo&, const Config&) const override { return Support::yes(); }
  // Synchronous: the host has no stream to queue on.
  Status launch(const Args& args, const Problem& problem, const Config&, void*, Stream) const override {
    return gemv_reference(args, problem);
  }
};

}  // namespace

std::shared_ptr<const Variant> make_gemv_host() { return std::make_shared<GemvHost>(); }

}  // namespace kiln::gemv

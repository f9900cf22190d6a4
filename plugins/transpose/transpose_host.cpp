#include "transpose_host.hpp"

#include "transpose_reference.hpp"

namespace kiln::transpose {
namespace {

class TransposeHost final : public Variant {
 public:
  TransposeHost()
      : Variant(VariantDesc{"transpose_host", "transpose", DeviceKind::host, {DType::f32, DType::f16, DType::bf16, DType::i32}, 0,
                            "host loop over rows (the reference)", /*reference=*/true},
                ParamSpace{}) {}

  Config default_config(const DeviceInfo&) const override { return {}; }
  Support supports(const Problem&, const DeviceInfo&, const Config&) const override { return Support::yes(); }
  // Synchronous: the host has no stream to queue on.
  Status launch(const Args& args, const Problem& problem, const Config&, void*, Stream) const override {
    return transpose_reference(args, problem);
  }
};

}  // namespace

std::shared_ptr<const Variant> make_transpose_host() { return std::make_shared<TransposeHost>(); }

}  // namespace kiln::transpose

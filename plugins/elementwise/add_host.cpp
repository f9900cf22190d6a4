#include "add_host.hpp"

#include "add_reference.hpp"

namespace kiln::elementwise {
namespace {

class AddHost final : public Variant {
 public:
  AddHost()
      : Variant(VariantDesc{"add_host", "add", DeviceKind::host, {DType::f32, DType::f64, DType::i32, DType::f16, DType::bf16}, 0,
                            "host loop over rows (the reference)", /*reference=*/true},
                ParamSpace{}) {}

  Config default_config(const DeviceInfo&) const override { return {}; }
  Support supports(const Problem&, const DeviceInfo&, const Config&) const override { return Support::yes(); }
  // Synchronous: the host has no stream to queue on.
  Status launch(const Args& args, const Problem& problem, const Config&, void*, Stream) const override {
    return add_reference(args, problem);
  }
};

}  // namespace

std::shared_ptr<const Variant> make_add_host() { return std::make_shared<AddHost>(); }

}  // namespace kiln::elementwise

#include "topk_host.hpp"

#include <exception>

#include "topk_reference.hpp"

namespace kiln::topk {
namespace {

class TopkHost final : public Variant {
 public:
  TopkHost()
      : Variant(VariantDesc{"topk_host", "topk", DeviceKind::host, {f32, f16, bf16}, 0,
                            "host reference: partial sort of (value, index) keys per row", /*reference=*/true,
                            /*vendor=*/false},
                ParamSpace{}) {}
  Config default_config(const DeviceInfo&) const override { return {}; }
  Support supports(const Problem&, const DeviceInfo&, const Config&) const override { return Support::yes(); }
  Status launch(const Args& args, const Problem& p, const Config&, void*, Stream) const override {
    try {
      return topk_reference(args, p);
    } catch (const std::exception& e) {  // std::bad_alloc for the per-row key buffer
      return Status::fail(ErrorKind::internal, std::string("topk_host: ") + e.what());
    }
  }
};

}  // namespace

std::shared_ptr<Variant> make_topk_host() { return std::make_shared<TopkHost>(); }

}  // namespace kiln::topk

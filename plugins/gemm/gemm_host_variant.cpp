// gemm_host: the schema's reference run as a variant on host tensors, so op("gemm") works with
// no GPU and the tuner has its oracle.
#include "gemm_reference.hpp"
#include "gemm_schema.hpp"
#include "gemm_variants.hpp"

namespace kiln::gemm {
namespace {

class GemmHost final : public Variant {
 public:
  GemmHost()
      : Variant({"gemm_host", "gemm", DeviceKind::host, {DType::f32, DType::bf16, DType::f16}, 0,
                 "host reference: double accumulation, blocked over rows and k, every layout, dtype and batch",
                 /*reference=*/true},
                ParamSpace{}) {}
  Config default_config(const DeviceInfo&) const override { return {}; }
  Support supports(const Problem&, const DeviceInfo&, const Config&) const override { return Support::yes(); }
  Status launch(const Args& args, const Problem&, const Config&, void*, Stream) const override {
    if (args.tensor_count() != 3) return Status::fail(ErrorKind::argument, "gemm_host: needs a, b, c");
    return gemm_reference(args.tensor(kA), args.tensor(kB), args.tensor(kC), gemm_scalar(args, kAlpha),
                          gemm_scalar(args, kBeta));
  }
};

}  // namespace

std::shared_ptr<Variant> make_gemm_host_variant() { return std::make_shared<GemmHost>(); }

}  // namespace kiln::gemm

// gemv_row_per_thread: one thread per row (the seeds' first kernel).
#include <cstdint>

#include <kiln/cuda_status.hpp>

#include "gemv_cuda_variants.hpp"
#include "gemv_kernels.cuh"
#include "gemv_operands.hpp"
#include "gemv_params.hpp"

namespace kiln::gemv {
namespace {

class GemvRowPerThread final : public Variant {
 public:
  GemvRowPerThread()
      : Variant(VariantDesc{"gemv_row_per_thread", "gemv", DeviceKind::cuda, {DType::f32}, 10,
                            "one thread per row (uncoalesced reads of A)"},
                row_per_thread_space()) {}

  Config default_config(const DeviceInfo& device) const override { return row_per_thread_default(device); }

  Support supports(const Problem& problem, const DeviceInfo&, const Config& config) const override {
    return row_per_thread_supports(problem, config);
  }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const GemvOperands o = gemv_operands(args);
    if (o.m == 0) return Status::success();
    const int block = config.get_or("block", 0);
    if (block <= 0 || block > 1024)
      return Status::fail(ErrorKind::argument, "gemv_row_per_thread: bad config " + config.to_string());
    const auto grid = static_cast<unsigned>((o.m + block - 1) / block);
    gemv_row_per_thread_kernel<float><<<grid, block, 0, static_cast<cudaStream_t>(stream.handle())>>>(
        o.a, o.lda, o.x, o.y, o.m, o.n);
    return cuda_launch_status("gemv_row_per_thread");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_gemv_row_per_thread() { return std::make_shared<GemvRowPerThread>(); }

}  // namespace kiln::gemv

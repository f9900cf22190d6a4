// gemv_smem_x: one thread per row, x staged in shared-memory tiles (the seeds' second kernel).
#include <cstdint>

#include <kiln/cuda_status.hpp>

#include "gemv_cuda_variants.hpp"
#include "gemv_kernels.cuh"
#include "gemv_operands.hpp"
#include "gemv_params.hpp"

namespace kiln::gemv {
namespace {

class GemvSmemX final : public Variant {
 public:
  GemvSmemX()
      : Variant(VariantDesc{"gemv_smem_x", "gemv", DeviceKind::cuda, {DType::f32}, 20,
                            "one thread per row, x staged in shared-memory tiles"},
                smem_x_space()) {}

  Config default_config(const DeviceInfo& device) const override { return smem_x_default(device); }

  Support supports(const Problem& problem, const DeviceInfo& device, const Config& config) const override {
    return smem_x_supports(problem, device, config);
  }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const GemvOperands o = gemv_operands(args);
    if (o.m == 0) return Status::success();
    const int block = config.get_or("block", 0);
    const int tile = config.get_or("tile", 0);
    if (block <= 0 || block > 1024 || tile <= 0 || tile > 12 * 1024)
      return Status::fail(ErrorKind::argument, "gemv_smem_x: bad config " + config.to_string());
    const auto grid = static_cast<unsigned>((o.m + block - 1) / block);
    const std::size_t smem = static_cast<std::size_t>(tile) * sizeof(float);
    gemv_smem_x_kernel<float><<<grid, block, smem, static_cast<cudaStream_t>(stream.handle())>>>(
        o.a, o.lda, o.x, o.y, o.m, o.n, tile);
    return cuda_launch_status("gemv_smem_x");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_gemv_smem_x() { return std::make_shared<GemvSmemX>(); }

}  // namespace kiln::gemv

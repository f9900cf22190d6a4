// transpose_naive_2d: a 2-D grid, one element per thread (the seeds' 2-D transpose).
#include <algorithm>
#include <cstdint>

#include <kiln/cuda_status.hpp>

#include "transpose_cuda_variants.hpp"
#include "transpose_copy.hpp"
#include "transpose_kernels.cuh"
#include "transpose_operands.hpp"
#include "transpose_params.hpp"

namespace kiln::transpose {
namespace {

class TransposeNaive2d final : public Variant {
 public:
  TransposeNaive2d()
      : Variant(VariantDesc{"transpose_naive_2d", "transpose", DeviceKind::cuda, {DType::f32, DType::f16, DType::bf16, DType::i32}, 20,
                            "2-D grid, one element per thread: coalesced reads, strided writes"},
                naive_2d_space()) {}

  Config default_config(const DeviceInfo& device) const override { return naive_2d_default(device); }

  Support supports(const Problem& problem, const DeviceInfo&, const Config& config) const override {
    return naive_2d_supports(problem, config);
  }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const TransposeOperands o = transpose_operands(args);
    if (o.numel() == 0) return Status::success();
    if (o.copy) return transpose_copy(o, static_cast<cudaStream_t>(stream.handle()), name());
    const int bx = config.get_or("block_x", 0), by = config.get_or("block_y", 0);
    if (bx <= 0 || by <= 0 || bx * by > 1024)
      return Status::fail(ErrorKind::argument, "transpose_naive_2d: bad config " + config.to_string());
    const std::int64_t grid_x = (o.n + bx - 1) / bx;
    if (grid_x > 2147483647) return Status::fail(ErrorKind::unsupported, "transpose_naive_2d: n too large");
    const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(std::min<std::int64_t>((o.m + by - 1) / by, 65535)));
    const auto s = static_cast<cudaStream_t>(stream.handle());
    if (o.elem_bytes == 2)
      transpose_naive_2d_kernel<std::uint16_t><<<grid, dim3(bx, by), 0, s>>>(o.in_as<std::uint16_t>(), o.ld_in,
                                                                             o.out_as<std::uint16_t>(), o.ld_out, o.m, o.n);
    else
      transpose_naive_2d_kernel<std::uint32_t><<<grid, dim3(bx, by), 0, s>>>(o.in_as<std::uint32_t>(), o.ld_in,
                                                                             o.out_as<std::uint32_t>(), o.ld_out, o.m, o.n);
    return cuda_launch_status("transpose_naive_2d");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_transpose_naive_2d() { return std::make_shared<TransposeNaive2d>(); }

}  // namespace kiln::transpose

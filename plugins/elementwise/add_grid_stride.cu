// add_grid_stride: the 1-D grid-stride loop, one element per iteration (f32, f64, i32, f16, bf16; halves added in fp32).
#include <algorithm>
#include <cstdint>

#include <kiln/cuda_status.hpp>

#include "add_cuda_variants.hpp"
#include "add_kernels.cuh"
#include "add_operands.hpp"
#include "add_params.hpp"

namespace kiln::elementwise {
namespace {

template <class T>
void launch_grid_stride(const AddOperands& o, int grid, int block, cudaStream_t stream) {
  add_grid_stride_kernel<T><<<grid, block, 0, stream>>>(static_cast<const T*>(o.a), static_cast<const T*>(o.b),
                                                        static_cast<T*>(o.c), o.m, o.n, o.stride_a, o.stride_b,
                                                        o.stride_c);
}

class AddGridStride final : public Variant {
 public:
  AddGridStride()
      : Variant(VariantDesc{"add_grid_stride", "add", DeviceKind::cuda, {DType::f32, DType::f64, DType::i32, DType::f16, DType::bf16}, 20,
                            "1-D grid-stride loop over all m*n elements, one per iteration"},
                add_grid_stride_space()) {}

  Config default_config(const DeviceInfo& device) const override { return add_grid_stride_default(device); }

  Support supports(const Problem&, const DeviceInfo&, const Config&) const override { return Support::yes(); }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const AddOperands o = add_operands(args, /*collapse_dense=*/true);
    if (o.numel() == 0) return Status::success();
    const int block = config.get_or("block", 0);
    const int blocks_per_sm = config.get_or("blocks_per_sm", 0);
    if (block <= 0 || block > 1024 || blocks_per_sm <= 0)
      return Status::fail(ErrorKind::argument, "add_grid_stride: bad config " + config.to_string());
    const int sms = sm_count(problem.device);
    if (sms <= 0) return Status::fail(ErrorKind::cuda, "add_grid_stride: cannot query the SM count");
    const std::int64_t wanted = (o.numel() + block - 1) / block;
    const int grid = static_cast<int>(std::min<std::int64_t>(wanted, std::int64_t{blocks_per_sm} * sms));
    const auto s = static_cast<cudaStream_t>(stream.handle());
    switch (problem.dtype) {
      case DType::f32: launch_grid_stride<float>(o, grid, block, s); break;
      case DType::f64: launch_grid_stride<double>(o, grid, block, s); break;
      case DType::i32: launch_grid_stride<std::int32_t>(o, grid, block, s); break;
      case DType::f16: launch_grid_stride<__half>(o, grid, block, s); break;
      case DType::bf16: launch_grid_stride<__nv_bfloat16>(o, grid, block, s); break;
      default: return Status::fail(ErrorKind::dtype, "add_grid_stride: unsupported dtype");
    }
    return cuda_launch_status("add_grid_stride");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_add_grid_stride() { return std::make_shared<AddGridStride>(); }

}  // namespace kiln::elementwise

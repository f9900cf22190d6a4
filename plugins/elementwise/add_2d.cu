// add_2d: a 2-D grid of 2-D blocks, one element per thread (f32, f64, i32, f16, bf16; halves added in fp32).
#include <algorithm>
#include <cstdint>

#include <kiln/cuda_status.hpp>

#include "add_cuda_variants.hpp"
#include "add_kernels.cuh"
#include "add_operands.hpp"
#include "add_params.hpp"

namespace kiln::elementwise {
namespace {

constexpr std::int64_t kMaxGridX = 2147483647;  // hardware limits of gridDim.x and gridDim.y
constexpr std::int64_t kMaxGridY = 65535;

template <class T>
void launch_2d(const AddOperands& o, dim3 grid, dim3 block, cudaStream_t stream) {
  add_2d_kernel<T><<<grid, block, 0, stream>>>(static_cast<const T*>(o.a), static_cast<const T*>(o.b),
                                               static_cast<T*>(o.c), o.m, o.n, o.stride_a, o.stride_b, o.stride_c);
}

class Add2d final : public Variant {
 public:
  Add2d()
      : Variant(VariantDesc{"add_2d", "add", DeviceKind::cuda, {DType::f32, DType::f64, DType::i32, DType::f16, DType::bf16}, 10,
                            "2-D grid of 2-D blocks, one element per thread"},
                add_2d_space()) {}

  Config default_config(const DeviceInfo& device) const override { return add_2d_default(device); }

  Support supports(const Problem&, const DeviceInfo&, const Config&) const override { return Support::yes(); }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const AddOperands o = add_operands(args, /*collapse_dense=*/false);
    if (o.numel() == 0) return Status::success();
    const int bx = config.get_or("block_x", 0);
    const int by = config.get_or("block_y", 0);
    if (bx <= 0 || by <= 0 || bx * by > 1024)
      return Status::fail(ErrorKind::argument, "add_2d: bad config " + config.to_string());
    const dim3 block(static_cast<unsigned>(bx), static_cast<unsigned>(by));
    const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>((o.n + bx - 1) / bx, kMaxGridX)),
                    static_cast<unsigned>(std::min<std::int64_t>((o.m + by - 1) / by, kMaxGridY)));
    const auto s = static_cast<cudaStream_t>(stream.handle());
    switch (problem.dtype) {
      case DType::f32: launch_2d<float>(o, grid, block, s); break;
      case DType::f64: launch_2d<double>(o, grid, block, s); break;
      case DType::i32: launch_2d<std::int32_t>(o, grid, block, s); break;
      case DType::f16: launch_2d<__half>(o, grid, block, s); break;
      case DType::bf16: launch_2d<__nv_bfloat16>(o, grid, block, s); break;
      default: return Status::fail(ErrorKind::dtype, "add_2d: unsupported dtype");
    }
    return cuda_launch_status("add_2d");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_add_2d() { return std::make_shared<Add2d>(); }

}  // namespace kiln::elementwise

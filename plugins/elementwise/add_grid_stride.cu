// add_grid_stride: the 1-D grid-stride loop, one element per iteration (f32, f64, i32, f16, bf16; halves added in fp32).
#include <algorithm>
#include <cstdint>
#include <memory>

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

using GridStrideLaunchFn = void (*)(const AddOperands&, int, int, cudaStream_t);

GridStrideLaunchFn grid_stride_launcher(DType dtype) {
  switch (dtype) {
    case DType::f32: return &launch_grid_stride<float>;
    case DType::f64: return &launch_grid_stride<double>;
    case DType::i32: return &launch_grid_stride<std::int32_t>;
    case DType::f16: return &launch_grid_stride<__half>;
    case DType::bf16: return &launch_grid_stride<__nv_bfloat16>;
    default: return nullptr;
  }
}

// The decision's bound launch: config read, SM count queried and the typed kernel chosen once, so
// a memo-hit op() only reads the call's operands and launches.
class GridStrideLaunch final : public PreparedLaunch {
 public:
  GridStrideLaunch(GridStrideLaunchFn fn, int block, std::int64_t max_grid)
      : fn_(fn), block_(block), max_grid_(max_grid) {}
  Status run(const Args& args, const Problem&, void*, Stream stream) const override {
    const AddOperands o = add_operands(args, /*collapse_dense=*/true);
    if (o.numel() == 0) return Status::success();
    const std::int64_t wanted = (o.numel() + block_ - 1) / block_;
    fn_(o, static_cast<int>(std::min(wanted, max_grid_)), block_, static_cast<cudaStream_t>(stream.handle()));
    return cuda_launch_status("add_grid_stride");
  }

 private:
  GridStrideLaunchFn fn_;
  int block_;
  std::int64_t max_grid_;
};

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
    const GridStrideLaunchFn fn = grid_stride_launcher(problem.dtype);
    if (!fn) return Status::fail(ErrorKind::dtype, "add_grid_stride: unsupported dtype");
    const std::int64_t wanted = (o.numel() + block - 1) / block;
    const int grid = static_cast<int>(std::min<std::int64_t>(wanted, std::int64_t{blocks_per_sm} * sms));
    fn(o, grid, block, static_cast<cudaStream_t>(stream.handle()));
    return cuda_launch_status("add_grid_stride");
  }

  std::shared_ptr<const PreparedLaunch> prepare(const Problem& problem, const Config& config,
                                                const DeviceInfo& device) const override {
    const int block = config.get_or("block", 0);
    const int blocks_per_sm = config.get_or("blocks_per_sm", 0);
    const int sms = sm_count(problem.device);
    const GridStrideLaunchFn fn = grid_stride_launcher(problem.dtype);
    if (block <= 0 || block > 1024 || blocks_per_sm <= 0 || sms <= 0 || !fn)
      return Variant::prepare(problem, config, device);  // launch() reports what is wrong
    return std::make_shared<GridStrideLaunch>(fn, block, std::int64_t{blocks_per_sm} * sms);
  }
};

}  // namespace

std::shared_ptr<const Variant> make_add_grid_stride() { return std::make_shared<AddGridStride>(); }

}  // namespace kiln::elementwise

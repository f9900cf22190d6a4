// gemv_warp_per_row: several threads per row, float4 loads when aligned, shuffle reduction.
#include <cstdint>
#include <iterator>
#include <utility>

#include <kiln/cuda_status.hpp>

#include "gemv_cuda_variants.hpp"
#include "gemv_kernels.cuh"
#include "gemv_operands.hpp"
#include "gemv_params.hpp"

namespace kiln::gemv {
namespace {

template <std::size_t I>
void launch_warp_per_row(const GemvOperands& o, int rows_per_block, cudaStream_t stream) {
  constexpr WarpPerRowKernel k = kWarpPerRowKernels[I];
  const dim3 block(k.threads_per_row, rows_per_block);
  const auto grid = static_cast<unsigned>((o.m + rows_per_block - 1) / rows_per_block);
  gemv_warp_per_row_kernel<k.threads_per_row, k.vector_width><<<grid, block, 0, stream>>>(o.a, o.lda, o.x, o.y, o.m, o.n);
}

// Launches the instantiated kernel matching (threads_per_row, vector_width); false when none does.
template <std::size_t... I>
bool dispatch(int threads_per_row, int vector_width, const GemvOperands& o, int rows_per_block, cudaStream_t stream,
              std::index_sequence<I...>) {
  return ((kWarpPerRowKernels[I].threads_per_row == threads_per_row &&
                   kWarpPerRowKernels[I].vector_width == vector_width
               ? (launch_warp_per_row<I>(o, rows_per_block, stream), true)
               : false) ||
          ...);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

class GemvWarpPerRow final : public Variant {
 public:
  GemvWarpPerRow()
      : Variant(VariantDesc{"gemv_warp_per_row", "gemv", DeviceKind::cuda, {DType::f32}, 30,
                            "threads_per_row threads per row, float4 loads in flight, shuffle reduction"},
                warp_per_row_space()) {}

  Config default_config(const DeviceInfo& device) const override { return warp_per_row_default(device); }

  Support supports(const Problem& problem, const DeviceInfo&, const Config& config) const override {
    return warp_per_row_supports(problem, config);
  }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const GemvOperands o = gemv_operands(args);
    if (o.m == 0) return Status::success();
    const int rows_per_block = config.get_or("rows_per_block", 0);
    const int threads_per_row = config.get_or("threads_per_row", 0);
    const int vector_width = config.get_or("vector_width", 0);
    const int threads = rows_per_block * threads_per_row;
    if (rows_per_block <= 0 || threads <= 0 || threads % 32 != 0 || threads > 1024)
      return Status::fail(ErrorKind::argument, "gemv_warp_per_row: bad config " + config.to_string());
    // supports() saw problem.align_bytes; recheck the actual views (cheap) rather than fault.
    if (vector_width == 4 && (!aligned16(o.a) || !aligned16(o.x) || (o.m > 1 && o.lda % 4 != 0)))
      return Status::fail(ErrorKind::unsupported,
                          "gemv_warp_per_row: vector_width=4 needs 16-byte aligned a, x and row pitch of a");
    const auto s = static_cast<cudaStream_t>(stream.handle());
    if (!dispatch(threads_per_row, vector_width, o, rows_per_block, s,
                  std::make_index_sequence<std::size(kWarpPerRowKernels)>{}))
      return Status::fail(ErrorKind::argument, "gemv_warp_per_row: threads_per_row=" + std::to_string(threads_per_row) +
                                                   " vector_width=" + std::to_string(vector_width) +
                                                   " is not instantiated");
    return cuda_launch_status("gemv_warp_per_row");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_gemv_warp_per_row() { return std::make_shared<GemvWarpPerRow>(); }

}  // namespace kiln::gemv

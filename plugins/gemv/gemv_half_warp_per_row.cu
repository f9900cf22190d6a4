// gemv_half_warp_per_row: f16 / bf16 A and x, several threads per row, 16-byte loads of 8 halves
// when aligned, f32 accumulation, y in f32 or the input dtype.
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

#include <kiln/cuda_status.hpp>
#include <kiln/variant.hpp>

#include "gemv_cuda_variants.hpp"
#include "gemv_half_kernels.cuh"
#include "gemv_operands.hpp"
#include "gemv_params.hpp"

namespace kiln::gemv {
namespace {

template <class Bits, std::size_t I>
void launch_half(const GemvHalfOperands& o, int rows_per_block, cudaStream_t stream) {
  constexpr HalfWarpPerRowKernel k = kHalfWarpPerRowKernels[I];
  const dim3 block(k.threads_per_row, rows_per_block);
  const std::int64_t rows_per_grid_block = std::int64_t{rows_per_block} * k.rows_per_thread;
  const auto grid = static_cast<unsigned>((o.m + rows_per_grid_block - 1) / rows_per_grid_block);
  gemv_half_warp_per_row_kernel<Bits, k.threads_per_row, k.vector_width, k.rows_per_thread>
      <<<grid, block, 0, stream>>>(o.a, o.lda, o.x, o.y, o.y_half, o.m, o.n);
}

// Launches the instantiated kernel matching (threads_per_row, vector_width, rows_per_thread);
// false when none does.
template <class Bits, std::size_t... I>
bool dispatch(int threads_per_row, int vector_width, int rows_per_thread, const GemvHalfOperands& o,
              int rows_per_block, cudaStream_t stream, std::index_sequence<I...>) {
  return ((kHalfWarpPerRowKernels[I].threads_per_row == threads_per_row &&
                   kHalfWarpPerRowKernels[I].vector_width == vector_width &&
                   kHalfWarpPerRowKernels[I].rows_per_thread == rows_per_thread
               ? (launch_half<Bits, I>(o, rows_per_block, stream), true)
               : false) ||
          ...);
}

bool aligned(const void* p, std::uintptr_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

class GemvHalfWarpPerRow final : public Variant {
 public:
  GemvHalfWarpPerRow()
      : Variant(VariantDesc{"gemv_half_warp_per_row", "gemv", DeviceKind::cuda, {DType::f16, DType::bf16}, 30,
                            "f16/bf16: threads_per_row threads per row, 16-byte loads of 8 halves, f32 accumulation, "
                            "shuffle reduction"},
                half_warp_per_row_space()) {}

  Config default_config(const DeviceInfo& device) const override { return half_warp_per_row_default(device); }

  Support supports(const Problem& problem, const DeviceInfo&, const Config& config) const override {
    return half_warp_per_row_supports(problem, config);
  }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const GemvHalfOperands o = gemv_half_operands(args);
    if (o.m == 0) return Status::success();
    const int rows_per_block = config.get_or("rows_per_block", 0);
    const int threads_per_row = config.get_or("threads_per_row", 0);
    const int vector_width = config.get_or("vector_width", 0);
    const int rows_per_thread = config.get_or("rows_per_thread", 1);
    const int threads = rows_per_block * threads_per_row;
    if (rows_per_block <= 0 || threads <= 0 || threads % 32 != 0 || threads > 1024)
      return Status::fail(ErrorKind::argument, "gemv_half_warp_per_row: bad config " + config.to_string());
    // supports() saw problem.align_bytes; recheck the actual views (cheap) rather than fault.
    if (!aligned(o.a, 2) || !aligned(o.x, 2))
      return Status::fail(ErrorKind::unsupported, "gemv_half_warp_per_row: f16 / bf16 elements must be 2-byte aligned");
    if (vector_width == 8 && (!aligned(o.a, 16) || !aligned(o.x, 16) || (o.m > 1 && o.lda % 8 != 0)))
      return Status::fail(ErrorKind::unsupported,
                          "gemv_half_warp_per_row: vector_width=8 needs 16-byte aligned a, x and row pitch of a");
    const auto s = static_cast<cudaStream_t>(stream.handle());
    constexpr auto kernels = std::make_index_sequence<std::size(kHalfWarpPerRowKernels)>{};
    const bool found = problem.dtype == DType::bf16
                           ? dispatch<Bf16Bits>(threads_per_row, vector_width, rows_per_thread, o, rows_per_block, s, kernels)
                           : problem.dtype == DType::f16
                                 ? dispatch<F16Bits>(threads_per_row, vector_width, rows_per_thread, o, rows_per_block, s, kernels)
                                 : false;
    if (!found)
      return Status::fail(ErrorKind::argument, "gemv_half_warp_per_row: threads_per_row=" +
                                                   std::to_string(threads_per_row) + " vector_width=" +
                                                   std::to_string(vector_width) + " rows_per_thread=" +
                                                   std::to_string(rows_per_thread) + " is not instantiated for " +
                                                   std::string(dtype_name(problem.dtype)));
    return cuda_launch_status("gemv_half_warp_per_row");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_gemv_half_warp_per_row() { return std::make_shared<GemvHalfWarpPerRow>(); }

}  // namespace kiln::gemv

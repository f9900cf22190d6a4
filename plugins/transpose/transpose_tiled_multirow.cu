// transpose_tiled_multirow: several rows per thread, optional 16-byte accesses, grid-stride over
// tiles.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>

#include <kiln/cuda_status.hpp>

#include "transpose_cuda_variants.hpp"
#include "transpose_copy.hpp"
#include "transpose_kernels.cuh"
#include "transpose_operands.hpp"
#include "transpose_params.hpp"

namespace kiln::transpose {
namespace {

template <std::size_t I>
void launch_multirow(const TransposeOperands& o, int tiles_per_block, int group_rows, bool out_any_align,
                     cudaStream_t stream) {
  constexpr MultirowKernel k = kMultirowKernels[I];
  using T = std::conditional_t<k.elem_bytes == 2, std::uint16_t, std::uint32_t>;
  const std::int64_t tiles_x = (o.n + k.tile - 1) / k.tile;
  const std::int64_t tiles = tiles_x * ((o.m + k.tile - 1) / k.tile);
  // Short matrices: whole tile columns in turn (kMultirowWholeColumns says why).
  const std::int64_t tiles_y = (o.m + k.tile - 1) / k.tile;
  if (tiles_y <= kMultirowWholeColumns) group_rows = static_cast<int>(tiles_y);
  const auto grid = static_cast<unsigned>(std::min<std::int64_t>((tiles + tiles_per_block - 1) / tiles_per_block, 2147483647));
  const dim3 block(k.tile / k.vector_width, k.block_rows);
  if constexpr (k.elem_bytes == 2 && k.vector_width == 2 && k.tile == 64) {
    if (out_any_align) {
      transpose_tiled_multirow_kernel<T, k.tile, k.block_rows, k.vector_width, k.load_hint, k.store_hint, true>
          <<<grid, block, 0, stream>>>(o.in_as<T>(), o.ld_in, o.out_as<T>(), o.ld_out, o.m, o.n, tiles_x, tiles, group_rows);
      return;
    }
  }
  transpose_tiled_multirow_kernel<T, k.tile, k.block_rows, k.vector_width, k.load_hint, k.store_hint>
      <<<grid, block, 0, stream>>>(o.in_as<T>(), o.ld_in, o.out_as<T>(), o.ld_out, o.m, o.n, tiles_x, tiles, group_rows);
}

// Launches the instantiated kernel matching `want` (element size included); false when none does.
template <std::size_t... I>
bool dispatch(const MultirowKernel& want, const TransposeOperands& o, int tiles_per_block, int group_rows,
              bool out_any_align, cudaStream_t stream,
              std::index_sequence<I...>) {
  return ((kMultirowKernels[I].elem_bytes == want.elem_bytes && kMultirowKernels[I].tile == want.tile &&
                   kMultirowKernels[I].block_rows == want.block_rows &&
                   kMultirowKernels[I].vector_width == want.vector_width &&
                   kMultirowKernels[I].load_hint == want.load_hint && kMultirowKernels[I].store_hint == want.store_hint
               ? (launch_multirow<I>(o, tiles_per_block, group_rows, out_any_align, stream), true)
               : false) ||
          ...);
}

bool aligned_to(const void* p, std::int64_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

class TransposeTiledMultirow final : public Variant {
 public:
  TransposeTiledMultirow()
      : Variant(VariantDesc{"transpose_tiled_multirow", "transpose", DeviceKind::cuda, {DType::f32, DType::f16, DType::bf16, DType::i32}, 50,
                            "padded shared-memory tile, several rows per thread, 16-byte accesses when aligned, "
                            "grid-stride over tiles"},
                tiled_multirow_space()) {}

  Config default_config(const DeviceInfo& device) const override { return tiled_multirow_default(device); }
  Config default_config_for(const DeviceInfo& device, const Problem& problem) const override {
    return tiled_multirow_default_for(device, problem);
  }

  Support supports(const Problem& problem, const DeviceInfo&, const Config& config) const override {
    return tiled_multirow_supports(problem, config);
  }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const TransposeOperands o = transpose_operands(args);
    if (o.numel() == 0) return Status::success();
    const auto s = static_cast<cudaStream_t>(stream.handle());
    if (o.copy) return transpose_copy(o, s, name());
    const MultirowKernel want{o.elem_bytes, config.get_or("tile", 0), config.get_or("block_rows", 0),
                              config.get_or("vector_width", 0), config.get_or("load_hint", 0),
                              config.get_or("store_hint", 0)};
    const int tiles_per_block = config.get_or("tiles_per_block", 0);
    const int group_rows = config.get_or("group_rows", 1);  // absent: row-major order, as before the parameter
    if (tiles_per_block <= 0 || want.vector_width <= 0 || group_rows <= 0)
      return Status::fail(ErrorKind::argument, "transpose_tiled_multirow: bad config " + config.to_string());
    // supports() saw problem.align_bytes; recheck the actual views (cheap) rather than fault.
    const std::int64_t bytes = std::int64_t{want.vector_width} * o.elem_bytes;
    const std::int64_t vec = want.vector_width;
    const bool in_aligned = aligned_to(o.in, bytes) && (o.m <= 1 || o.ld_in % vec == 0);
    const bool out_aligned = aligned_to(o.out, bytes) && (o.n <= 1 || o.ld_out % vec == 0);
    MultirowKernel run = want;
    bool out_any_align = false;
    if (want.vector_width > 1 && !(in_aligned && out_aligned) && multirow_pairs_any_alignment(config, o.elem_bytes)) {
      // 2-byte pairs where the rows allow: `out` off a 4-byte boundary takes the kernel that
      // shifts its pairs; `in` off one, the scalar kernel of the same shape (pairs read from the
      // second element, or single elements read by the pair kernel, both ran slower than it:
      // docs/performance.md, 2026-11-28).
      if (in_aligned)
        out_any_align = true;
      else
        run.vector_width = 1;
    } else if (want.vector_width > 1 && !(in_aligned && out_aligned)) {
      return Status::fail(ErrorKind::unsupported, "transpose_tiled_multirow: vector_width=" +
                                                      std::to_string(want.vector_width) + " needs " +
                                                      std::to_string(bytes) + "-byte aligned in, out and row pitches");
    }
    if (!dispatch(run, o, tiles_per_block, group_rows, out_any_align, s, std::make_index_sequence<std::size(kMultirowKernels)>{}))
      return Status::fail(ErrorKind::argument, "transpose_tiled_multirow: " + config.to_string() +
                                                   " is not instantiated for " + std::to_string(o.elem_bytes) +
                                                   "-byte elements");
    return cuda_launch_status("transpose_tiled_multirow");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_transpose_tiled_multirow() { return std::make_shared<TransposeTiledMultirow>(); }

}  // namespace kiln::transpose

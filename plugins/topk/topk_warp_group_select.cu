// topk_warp_select's row-per-block tiles (row_warps > 1): the launch over the instantiated tiles.
#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include <cuda_runtime.h>

#include "topk_warp_group_select.cuh"
#include "topk_resident_grid.hpp"
#include "topk_warp_group_select.hpp"

namespace kiln::topk {
namespace {

template <class T, int WARPS, int ITEMS>
cudaError_t launch_group_as(const TopkLaunch& l, int cap, int bucket_sort, cudaStream_t stream) {
  // 16-byte loads need the row start (base and stride) and the row's end on 16-byte boundaries.
  constexpr int vec = 16 / int(sizeof(T));
  const bool vector_loads = reinterpret_cast<std::uintptr_t>(l.x) % 16 == 0 && l.n % vec == 0 &&
                            (l.rows == 1 || l.x_stride % vec == 0);
  // Pipelined (vector_loads, k > 1): a persistent grid, each block with a row buffer; else a block
  // per row (k = 1 on aligned rows: 16-byte loads straight into registers, mode 2).
  auto* kernel = &warp_group_select_kernel<T, WARPS, ITEMS>;
  const std::size_t list_bytes = 2 * std::size_t(cap) * sizeof(std::uint64_t);  // the list, the bucket sort's output
  std::size_t smem = list_bytes;
  std::int64_t grid = l.rows;
  const bool pipelined = vector_loads && l.k > 1;
  if (pipelined) {
    smem += std::size_t(WARPS) * 32 * ITEMS * sizeof(T);
    const int resident = resident_grid(reinterpret_cast<const void*>(kernel), WARPS * 32, smem);
    if (resident <= 0) return cudaErrorInvalidConfiguration;
    grid = std::min<std::int64_t>(grid, resident);
  }
  kernel<<<unsigned(grid), WARPS * 32, smem, stream>>>(static_cast<const T*>(l.x), l.x_stride, l.rows, int(l.n), l.k,
                                                      l.largest, cap, bucket_sort, pipelined ? 1 : vector_loads ? 2 : 0, static_cast<T*>(l.values),
                                                      l.v_stride, l.indices, l.i_stride);
  return cudaGetLastError();
}

template <std::size_t I>
cudaError_t launch_entry(const TopkLaunch& l, int cap, int bucket_sort, cudaStream_t s) {
  constexpr WarpTile t = kWarpSelectTiles[I];
  if constexpr (t.row_warps == 1) {
    return cudaErrorInvalidValue;  // a row-per-warp tile: topk_warp_select.cu launches those
  } else {
    static_assert(t.row_warps == t.warps, "a row per block");
    switch (l.dtype) {
      case DType::f16: return launch_group_as<__half, t.warps, t.items>(l, cap, bucket_sort, s);
      case DType::bf16: return launch_group_as<__nv_bfloat16, t.warps, t.items>(l, cap, bucket_sort, s);
      default: return launch_group_as<float, t.warps, t.items>(l, cap, bucket_sort, s);
    }
  }
}

using Launcher = cudaError_t (*)(const TopkLaunch&, int, int, cudaStream_t);
template <std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> launcher_table(std::index_sequence<I...>) {
  return {&launch_entry<I>...};
}
constexpr std::size_t kTiles = sizeof(kWarpSelectTiles) / sizeof(kWarpSelectTiles[0]);
const std::array<Launcher, kTiles> kLaunchers = launcher_table(std::make_index_sequence<kTiles>{});

}  // namespace

cudaError_t launch_warp_group_select(const TopkLaunch& l, const WarpTile& tile, int cap, int bucket_sort,
                                     cudaStream_t stream) {
  const std::size_t i = std::size_t(&tile - kWarpSelectTiles);
  if (i >= kTiles || tile.row_warps == 1) return cudaErrorInvalidValue;
  return kLaunchers[i](l, cap, bucket_sort, stream);
}

}  // namespace kiln::topk

// topk_warp_select: the adapter (support, dispatch over the instantiated tiles).
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include <cuda_runtime.h>

#include "topk_params.hpp"
#include "topk_variants.hpp"
#include "topk_warp_group_select.hpp"
#include "topk_warp_select.cuh"
#include "topk_warp_select_params.hpp"

namespace kiln::topk {
namespace {

template <class T, int WARPS, int ITEMS>
cudaError_t launch_warps_as(const TopkLaunch& l, int cap, cudaStream_t stream) {
  const std::int64_t blocks = (l.rows + WARPS - 1) / WARPS;
  const std::size_t smem = std::size_t(WARPS) * std::size_t(cap) * sizeof(std::uint64_t);
  warp_select_kernel<T, WARPS, ITEMS><<<unsigned(blocks), WARPS * 32, smem, stream>>>(
      static_cast<const T*>(l.x), l.x_stride, l.rows, int(l.n), l.k, l.largest, cap, static_cast<T*>(l.values),
      l.v_stride, l.indices, l.i_stride);
  return cudaGetLastError();
}

template <int WARPS, int ITEMS>
cudaError_t launch_warps(const TopkLaunch& l, int cap, cudaStream_t stream) {
  switch (l.dtype) {
    case DType::f16: return launch_warps_as<__half, WARPS, ITEMS>(l, cap, stream);
    case DType::bf16: return launch_warps_as<__nv_bfloat16, WARPS, ITEMS>(l, cap, stream);
    default: return launch_warps_as<float, WARPS, ITEMS>(l, cap, stream);
  }
}

using Launcher = cudaError_t (*)(const TopkLaunch&, int, int, cudaStream_t);  // cap, bucket_sort

template <std::size_t I>
cudaError_t launch_entry(const TopkLaunch& l, int cap, int bucket_sort, cudaStream_t s) {
  constexpr WarpTile t = kWarpSelectTiles[I];
  if constexpr (t.row_warps != 1) {
    return launch_warp_group_select(l, kWarpSelectTiles[I], cap, bucket_sort, s);  // topk_warp_group_select.cu
  } else {
    (void)bucket_sort;  // row-per-warp lists are sorted by the warp
    return launch_warps<t.warps, t.items>(l, cap, s);
  }
}

template <std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> launcher_table(std::index_sequence<I...>) {
  return {&launch_entry<I>...};
}
constexpr std::size_t kTiles = sizeof(kWarpSelectTiles) / sizeof(kWarpSelectTiles[0]);
const std::array<Launcher, kTiles> kLaunchers = launcher_table(std::make_index_sequence<kTiles>{});

class WarpSelect final : public Variant {
 public:
  WarpSelect()
      : Variant(VariantDesc{"topk_warp_select", "topk", DeviceKind::cuda, {f32, f16, bf16}, 57,
                            "one warp (rows of up to 4096) or one block (up to 16384) per row held in registers; "
                            "bitwise threshold search with warp reductions, one filter, sort of the list (k <= 256 a row per warp, 512 a row per block)",
                            false, false},
                warp_select_space()) {}
  Config default_config(const DeviceInfo& d) const override { return warp_select_default(d); }
  Config default_config_for(const DeviceInfo& d, const Problem& p) const override {
    return warp_select_default_for(d, p.dims[1], p.dims[2]);
  }
  Support supports(const Problem& p, const DeviceInfo&, const Config& c) const override {
    const Support base = topk_cuda_support(p, kWarpGroupSelectMaxK, "the list is sorted in shared memory");
    if (!base.ok) return base;
    const Support s = warp_select_supports(p.dims[1], p.dims[2], c);
    return s.ok ? s : Support::no("topk_warp_select: " + s.reason);
  }
  Status launch(const Args& args, const Problem& p, const Config& c, void*, Stream stream) const override {
    const TopkLaunch l = topk_launch_of(args, p);
    if (l.rows == 0) return Status::success();
    if (Status st = topk_check_indices(l, "topk_warp_select"); !st.ok()) return st;
    if (const Support s = warp_select_supports(l.n, l.k, c); !s.ok)
      return Status::fail(ErrorKind::unsupported, "topk_warp_select: " + s.reason);
    const WarpTile* tile = warp_select_tile(c);  // not null: warp_select_supports checked it
    const int rows_per_block = tile->row_warps == 1 ? tile->warps : 1;
    if ((l.rows + rows_per_block - 1) / rows_per_block > 2147483647)
      return Status::fail(ErrorKind::unsupported, "topk_warp_select: more than 2^31 - 1 blocks of rows");
    const int cap = warp_select_cap(c.get_or("cap", 64), l.k);
    const cudaError_t e = kLaunchers[std::size_t(tile - kWarpSelectTiles)](l, cap, c.get_or("bucket_sort", 0),
                                                                           static_cast<cudaStream_t>(stream.handle()));
    if (e != cudaSuccess)
      return Status::fail(ErrorKind::cuda, std::string("topk_warp_select: ") + cudaGetErrorString(e));
    return Status::success();
  }
};

}  // namespace

std::shared_ptr<Variant> make_topk_warp_select() { return std::make_shared<WarpSelect>(); }

}  // namespace kiln::topk

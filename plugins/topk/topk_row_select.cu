// topk_row_select: the adapter (support, dispatch over the instantiated tiles).
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include <cuda_runtime.h>

#include "topk_params.hpp"
#include "topk_row_select.cuh"
#include "topk_variants.hpp"

namespace kiln::topk {
namespace {

template <class T, int BLOCK, int ITEMS>
cudaError_t launch_rows_as(const TopkLaunch& l, int cap, cudaStream_t stream) {
  row_select_kernel<T, BLOCK, ITEMS><<<unsigned(l.rows), BLOCK, std::size_t(cap) * sizeof(std::uint64_t), stream>>>(
      static_cast<const T*>(l.x), l.x_stride, int(l.n), l.k, l.largest, cap, static_cast<T*>(l.values), l.v_stride,
      l.indices, l.i_stride);
  return cudaGetLastError();
}

// Every tile for each element type (f32, f16, bf16): 27 kernels.
template <int BLOCK, int ITEMS>
cudaError_t launch_rows(const TopkLaunch& l, int cap, cudaStream_t stream) {
  switch (l.dtype) {
    case DType::f16: return launch_rows_as<__half, BLOCK, ITEMS>(l, cap, stream);
    case DType::bf16: return launch_rows_as<__nv_bfloat16, BLOCK, ITEMS>(l, cap, stream);
    default: return launch_rows_as<float, BLOCK, ITEMS>(l, cap, stream);
  }
}

using Launcher = cudaError_t (*)(const TopkLaunch&, int, cudaStream_t);

template <std::size_t I>
cudaError_t launch_entry(const TopkLaunch& l, int cap, cudaStream_t s) {
  constexpr TileShape t = kRowSelectTiles[I];
  return launch_rows<t.block, t.items>(l, cap, s);
}

template <std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> launcher_table(std::index_sequence<I...>) {
  return {&launch_entry<I>...};
}
constexpr std::size_t kTiles = sizeof(kRowSelectTiles) / sizeof(kRowSelectTiles[0]);
const std::array<Launcher, kTiles> kLaunchers = launcher_table(std::make_index_sequence<kTiles>{});

class RowSelect final : public Variant {
 public:
  RowSelect()
      : Variant(VariantDesc{"topk_row_select", "topk", DeviceKind::cuda, {f32, f16, bf16}, 55,
                            "one block per row held in registers; on-chip radix select, 8-bit digits; sort of the "
                            "selection (n <= 16384)",
                            false, false},
                row_select_space()) {}
  Config default_config(const DeviceInfo& d) const override { return row_select_default(d); }
  Config default_config_for(const DeviceInfo& d, const Problem& p) const override {
    return row_select_default_for(d, p.dims[1], p.dims[2]);
  }
  Support supports(const Problem& p, const DeviceInfo&, const Config& c) const override {
    const Support base = topk_cuda_support(p, kRadixMaxCap, "the selection is sorted in 32 KiB of shared memory");
    if (!base.ok) return base;
    const Support s = row_select_supports(p.dims[1], p.dims[2], c);
    return s.ok ? s : Support::no("topk_row_select: " + s.reason);
  }
  Status launch(const Args& args, const Problem& p, const Config& c, void*, Stream stream) const override {
    const TopkLaunch l = topk_launch_of(args, p);
    if (l.rows == 0) return Status::success();
    if (Status st = topk_check_indices(l, "topk_row_select"); !st.ok()) return st;
    if (const Support s = row_select_supports(l.n, l.k, c); !s.ok)
      return Status::fail(ErrorKind::unsupported, "topk_row_select: " + s.reason);
    if (l.rows > 2147483647) return Status::fail(ErrorKind::unsupported, "topk_row_select: more than 2^31 - 1 rows");
    const int block = c.get_or("block", 256), items = c.get_or("items_per_thread", 16);
    const int cap = radix_cap(c.get_or("cap", 256), l.k);
    for (std::size_t i = 0; i < kTiles; ++i) {
      if (kRowSelectTiles[i].block != block || kRowSelectTiles[i].items != items) continue;
      const cudaError_t e = kLaunchers[i](l, cap, static_cast<cudaStream_t>(stream.handle()));
      if (e != cudaSuccess) return Status::fail(ErrorKind::cuda, std::string("topk_row_select: ") + cudaGetErrorString(e));
      return Status::success();
    }
    return Status::fail(ErrorKind::argument, "topk_row_select: (block, items_per_thread) = (" + std::to_string(block) +
                                                 ", " + std::to_string(items) + ") is not instantiated");
  }
};

}  // namespace

std::shared_ptr<Variant> make_topk_row_select() { return std::make_shared<RowSelect>(); }

}  // namespace kiln::topk

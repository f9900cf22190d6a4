// topk_radix_select: the adapter (support, workspace layout, the pass sequence, dispatch over the
// instantiated tiles).
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include <cuda_runtime.h>

#include "topk_params.hpp"
#include "topk_radix_select.cuh"
#include "topk_variants.hpp"

namespace kiln::topk {
namespace {

static_assert(kRadixBins == kRadixBinsDevice, "one digit width for host and device");

// Digits of the 64-bit key from the top: the value half in passes 0-2, the index half in 3-5.
constexpr int kShift[kRadixPasses] = {53, 42, 32, 21, 10, 0};
constexpr int kWidth[kRadixPasses] = {11, 11, 10, 11, 11, 10};

// Workspace: row states, then one histogram per row, one selection buffer per row, one candidate
// buffer per row (empty when filtering is off).
struct RadixPlan {
  int cap = 0;
  int cand_cap = 0;
  Chunking chunking;
  std::size_t states_bytes = 0, hists_bytes = 0, selected_bytes = 0, cands_bytes = 0;
  std::size_t total() const { return states_bytes + hists_bytes + selected_bytes + cands_bytes; }
};

RadixPlan plan_of(const Problem& p, const Config& c) {
  RadixPlan r;
  const std::size_t rows = std::size_t(p.dims[0]);
  r.cap = radix_cap(c.get_or("cap", 2048), p.dims[2]);
  const std::int64_t tile = std::int64_t(c.get_or("block", 512)) * c.get_or("items_per_thread", 8);
  r.chunking = chunking(p.dims[0], p.dims[1], tile, c.get_or("blocks", 2048));
  r.states_bytes = rows * sizeof(RadixRowState);
  r.hists_bytes = rows * kRadixBins * sizeof(std::uint32_t);
  r.selected_bytes = rows * std::size_t(r.cap) * sizeof(std::uint64_t);
  r.cand_cap = radix_candidates(c.get_or("filter", 0), p.dims[1], r.cap);
  r.cands_bytes = rows * std::size_t(r.cand_cap) * sizeof(std::uint64_t);
  return r;
}

template <class T, int BLOCK, int ITEMS>
cudaError_t launch_tile_as(const TopkLaunch& l, const RadixPlan& r, void* workspace, cudaStream_t stream) {
  const auto* x = static_cast<const T*>(l.x);
  auto* bytes = static_cast<unsigned char*>(workspace);
  auto* states = reinterpret_cast<RadixRowState*>(bytes);
  auto* hists = reinterpret_cast<std::uint32_t*>(bytes + r.states_bytes);
  auto* selected = reinterpret_cast<std::uint64_t*>(bytes + r.states_bytes + r.hists_bytes);
  auto* cands = reinterpret_cast<std::uint64_t*>(bytes + r.states_bytes + r.hists_bytes + r.selected_bytes);
  cudaError_t e = cudaMemsetAsync(workspace, 0, r.states_bytes + r.hists_bytes, stream);
  if (e != cudaSuccess) return e;
  const dim3 grid(unsigned(l.rows), unsigned(r.chunking.chunks));
  // Every pass is queued; rows that are done make its blocks return at once.  The first pass
  // follows the memset plainly; every later kernel is a programmatic dependent of the one before
  // (topk_dependent_launch.cuh).
  radix_hist_kernel<T, BLOCK, ITEMS><<<grid, BLOCK, 0, stream>>>(x, l.x_stride, l.n, l.k, l.largest, kShift[0],
                                                              kWidth[0], r.chunking.chunk_len,
                                                              int(r.chunking.chunks), r.cap, 0, r.cand_cap, states,
                                                              hists, cands);
  if (e = cudaGetLastError(); e != cudaSuccess) return e;
  for (int pass = 1; pass < kRadixPasses; ++pass) {
    if (e = launch_after_prior_grid(&radix_hist_kernel<T, BLOCK, ITEMS>, grid, dim3(BLOCK), 0, stream, false, x,
                                    l.x_stride, l.n, l.k, l.largest, kShift[pass], kWidth[pass], r.chunking.chunk_len,
                                    int(r.chunking.chunks), r.cap, pass, r.cand_cap, states, hists, cands);
        e != cudaSuccess)
      return e;
  }
  if (e = launch_after_prior_grid(&radix_gather_kernel<T, BLOCK, ITEMS>, grid, dim3(BLOCK), 0, stream, false, x,
                                  l.x_stride, l.n, l.largest, r.chunking.chunk_len, int(r.chunking.chunks), r.cap,
                                  r.cand_cap, states, static_cast<const std::uint64_t*>(cands), selected);
      e != cudaSuccess)
    return e;
  return launch_after_prior_grid(&radix_sort_kernel<T, kSortBlock>, dim3(unsigned(l.rows)), dim3(kSortBlock),
                                 std::size_t(r.cap) * sizeof(std::uint64_t), stream, false, x, l.x_stride, l.k, r.cap,
                                 static_cast<const RadixRowState*>(states), static_cast<const std::uint64_t*>(selected),
                                 static_cast<T*>(l.values), l.v_stride, l.indices, l.i_stride);
}

// Every tile for each element type (f32, f16, bf16).
template <int BLOCK, int ITEMS>
cudaError_t launch_tile(const TopkLaunch& l, const RadixPlan& r, void* workspace, cudaStream_t stream) {
  switch (l.dtype) {
    case DType::f16: return launch_tile_as<__half, BLOCK, ITEMS>(l, r, workspace, stream);
    case DType::bf16: return launch_tile_as<__nv_bfloat16, BLOCK, ITEMS>(l, r, workspace, stream);
    default: return launch_tile_as<float, BLOCK, ITEMS>(l, r, workspace, stream);
  }
}

using Launcher = cudaError_t (*)(const TopkLaunch&, const RadixPlan&, void*, cudaStream_t);

template <std::size_t I>
cudaError_t launch_entry(const TopkLaunch& l, const RadixPlan& r, void* ws, cudaStream_t s) {
  constexpr TileShape t = kRadixTiles[I];
  return launch_tile<t.block, t.items>(l, r, ws, s);
}

// One launcher per entry of kRadixTiles, in its order.
template <std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> launcher_table(std::index_sequence<I...>) {
  return {&launch_entry<I>...};
}
constexpr std::size_t kTiles = sizeof(kRadixTiles) / sizeof(kRadixTiles[0]);
const std::array<Launcher, kTiles> kLaunchers = launcher_table(std::make_index_sequence<kTiles>{});

class RadixSelect final : public Variant {
 public:
  RadixSelect()
      : Variant(VariantDesc{"topk_radix_select", "topk", DeviceKind::cuda, {f32, f16, bf16}, 50,
                            "radix select of the k-th (value, index) key, 11-bit digits; gather; bitonic sort of the "
                            "selection",
                            false, false},
                radix_select_space()) {}
  Config default_config(const DeviceInfo& d) const override { return radix_select_default(d); }
  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    return topk_cuda_support(p, kRadixMaxCap, "the selection is sorted in 32 KiB of shared memory");
  }
  std::size_t workspace_bytes(const Problem& p, const Config& c) const override { return plan_of(p, c).total(); }
  Status launch(const Args& args, const Problem& p, const Config& c, void* workspace, Stream stream) const override {
    const TopkLaunch l = topk_launch_of(args, p);
    if (l.rows == 0) return Status::success();
    if (Status st = topk_check_indices(l, "topk_radix_select"); !st.ok()) return st;
    if (workspace == nullptr) return Status::fail(ErrorKind::argument, "topk_radix_select: no workspace given");
    const int block = c.get_or("block", 512), items = c.get_or("items_per_thread", 8);
    for (std::size_t i = 0; i < kTiles; ++i) {
      if (kRadixTiles[i].block != block || kRadixTiles[i].items != items) continue;
      const cudaError_t e = kLaunchers[i](l, plan_of(p, c), workspace, static_cast<cudaStream_t>(stream.handle()));
      if (e != cudaSuccess) return Status::fail(ErrorKind::cuda, std::string("topk_radix_select: ") + cudaGetErrorString(e));
      return Status::success();
    }
    return Status::fail(ErrorKind::argument, "topk_radix_select: (block, items_per_thread) = (" + std::to_string(block) + ", " +
                                                 std::to_string(items) + ") is not instantiated");
  }
};

}  // namespace

std::shared_ptr<Variant> make_topk_radix_select() { return std::make_shared<RadixSelect>(); }

}  // namespace kiln::topk

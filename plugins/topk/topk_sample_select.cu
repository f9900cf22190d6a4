// topk_sample_select: the adapter (support, workspace layout, the launch sequence, dispatch over
// the instantiated filter tiles).
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include <cuda_runtime.h>

#include "topk_dependent_launch.cuh"
#include "topk_params.hpp"
#include "topk_resident_grid.hpp"
#include "topk_sample_select.cuh"
#include "topk_sample_select_params.hpp"
#include "topk_variants.hpp"

namespace kiln::topk {
namespace {

// Workspace: sample row states, the failed-row list, topk_radix_select's row states and
// histograms (for rows that fall back), the candidate buffers (reused as the fallback's selection
// buffers once the select kernel has read them: cand_cap >= fallback_cap), the gathered samples.
struct SampleLayout {
  SamplePlan plan;
  Chunking filter, fallback;
  std::size_t states_bytes = 0, failed_bytes = 0, radix_states_bytes = 0, hists_bytes = 0, cands_bytes = 0;
  std::size_t gather_bytes = 0;  // the gathered sample's ranks (few sampled rows), after the candidates
  std::size_t argmax_bytes = 0;  // k = 1: the largest key of every (row, filter chunk), and nothing else
  std::size_t total() const {
    return argmax_bytes != 0 ? argmax_bytes
                             : states_bytes + failed_bytes + radix_states_bytes + hists_bytes + cands_bytes + gather_bytes;
  }
};

SampleLayout layout_of(const Problem& p, const Config& c) {
  SampleLayout r;
  const std::size_t rows = std::size_t(p.dims[0]);
  r.plan = sample_plan(p.dims[1], p.dims[2], p.dtype == f32 ? 4 : 2);
  const int blocks = c.get_or("blocks", 2048);
  r.filter = chunking(p.dims[0], p.dims[1], std::int64_t(c.get_or("block", 512)) * c.get_or("items_per_thread", 16), blocks);
  r.fallback = chunking(p.dims[0], p.dims[1], std::int64_t(kSampleFallbackTile.block) * kSampleFallbackTile.items, blocks);
  r.states_bytes = rows * sizeof(SampleRowState);
  r.failed_bytes = (rows + 2) / 2 * 8;  // rows + 1 words, rounded up to keep 8-byte alignment
  r.radix_states_bytes = rows * sizeof(RadixRowState);
  r.hists_bytes = rows * kRadixBins * sizeof(std::uint32_t);
  r.cands_bytes = rows * std::size_t(r.plan.cand_cap) * sizeof(std::uint64_t);
  if (p.dims[0] <= kSampleGatherMaxRows && r.plan.samples < p.dims[1])
    r.gather_bytes = rows * std::size_t(r.plan.samples) * sizeof(std::uint32_t);
  if (p.dims[2] == 1) r.argmax_bytes = rows * std::size_t(r.filter.chunks) * sizeof(std::uint64_t);
  return r;
}

template <class T, int BLOCK, int ITEMS>
cudaError_t launch_tile_as(const TopkLaunch& l, const SampleLayout& r, void* workspace, cudaStream_t stream) {
  const auto* x = static_cast<const T*>(l.x);
  if (l.k == 1) {
    // The largest key per (row, chunk), then per row: one pass over the row, two launches.
    auto* partial = static_cast<std::uint64_t*>(workspace);
    sample_argmax_partial_kernel<T, BLOCK, ITEMS><<<dim3(unsigned(l.rows), unsigned(r.filter.chunks)), BLOCK, 0, stream>>>(
        x, l.x_stride, l.n, l.largest, r.filter.chunk_len, partial);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    return launch_after_prior_grid(&sample_argmax_final_kernel<T, kSampleSelectBlock>, dim3(unsigned(l.rows)),
                                   dim3(kSampleSelectBlock), 0, stream, false, x, l.x_stride, int(r.filter.chunks),
                                   partial, static_cast<T*>(l.values), l.v_stride, l.indices, l.i_stride);
  }
  auto* bytes = static_cast<unsigned char*>(workspace);
  std::size_t at = 0;
  auto* states = reinterpret_cast<SampleRowState*>(bytes + at);
  at += r.states_bytes;
  auto* failed = reinterpret_cast<std::uint32_t*>(bytes + at);
  at += r.failed_bytes;
  auto* radix_states = reinterpret_cast<RadixRowState*>(bytes + at);
  at += r.radix_states_bytes;
  auto* hists = reinterpret_cast<std::uint32_t*>(bytes + at);
  at += r.hists_bytes;
  auto* cands = reinterpret_cast<std::uint64_t*>(bytes + at);
  at += r.cands_bytes;
  std::uint32_t* gathered = nullptr;
  const unsigned rows = unsigned(l.rows);
  if (r.gather_bytes != 0) {
    gathered = reinterpret_cast<std::uint32_t*>(bytes + at);
    const unsigned parts = unsigned((r.plan.samples + kSampleGatherBlock - 1) / kSampleGatherBlock);
    sample_gather_kernel<T, kSampleGatherBlock><<<dim3(rows, parts), kSampleGatherBlock, 0, stream>>>(
        x, l.x_stride, l.n, l.largest, r.plan.samples, gathered);
  }
  // The chain's first kernel (the gather, else the threshold) is launched plainly; each later one
  // as a programmatic dependent of the one before (topk_dependent_launch.cuh: its launch overlaps
  // the previous kernel's tail; every kernel waits for it before touching memory).
  const bool after_gather = gathered != nullptr;
  const auto launch = [&](auto* kernel, dim3 grid, unsigned block, std::size_t smem, bool after, auto&&... args) {
    if (const cudaError_t before = cudaGetLastError(); before != cudaSuccess) return before;
    if (!after) {
      kernel<<<grid, block, smem, stream>>>(args...);
      return cudaGetLastError();
    }
    return launch_after_prior_grid(kernel, grid, dim3(block), smem, stream, false, args...);
  };
  const std::size_t sample_bytes = std::size_t(r.plan.samples) * sizeof(std::uint32_t);
  cudaError_t e = cudaSuccess;
  if (r.plan.samples <= kSampleMax) {
    e = launch(&sample_threshold_kernel<T, kSampleBlock>, dim3(rows), kSampleBlock, sample_bytes, after_gather, x,
               l.x_stride, l.n, l.largest, r.plan.samples, r.plan.rank, gathered, states, failed);
  } else {
    // Above 48 KiB of dynamic shared memory the kernel must opt in (per device; cheap to repeat).
    auto* kernel = &sample_threshold_kernel<T, kSampleBlockLong>;
    if (e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 int(std::size_t(kSampleMaxLong) * sizeof(std::uint32_t)));
        e != cudaSuccess)
      return e;
    e = launch(kernel, dim3(rows), kSampleBlockLong, sample_bytes, after_gather, x, l.x_stride, l.n, l.largest,
               r.plan.samples, r.plan.rank, gathered, states, failed);
  }
  if (e != cudaSuccess) return e;
  const dim3 filter_grid(rows, unsigned(r.filter.chunks));
  if constexpr (kSampleFilterCapped<T, BLOCK, ITEMS>)
    e = launch(&sample_filter_kernel_capped<T, BLOCK, ITEMS>, filter_grid, BLOCK, 0, true, x, l.x_stride, l.n,
               l.largest, r.filter.chunk_len, r.plan.cand_cap, states, cands);
  else
    e = launch(&sample_filter_kernel<T, BLOCK, ITEMS>, filter_grid, BLOCK, 0, true, x, l.x_stride, l.n, l.largest,
               r.filter.chunk_len, r.plan.cand_cap, states, cands);
  if (e != cudaSuccess) return e;
  auto* values = static_cast<T*>(l.values);
  if (l.rows <= kSampleSelectWideRows)
    e = launch(&sample_select_kernel<T, kSampleSelectWideBlock>, dim3(rows), kSampleSelectWideBlock, 0, true, x,
               l.x_stride, l.n, l.k, r.plan.cand_cap, states, cands, radix_states, hists, failed, values, l.v_stride,
               l.indices, l.i_stride);
  else
    e = launch(&sample_select_kernel<T, kSampleSelectBlock>, dim3(rows), kSampleSelectBlock, 0, true, x, l.x_stride,
               l.n, l.k, r.plan.cand_cap, states, cands, radix_states, hists, failed, values, l.v_stride, l.indices,
               l.i_stride);
  if (e != cudaSuccess) return e;
  // The fallback: topk_radix_select's passes and gather for the rows whose candidates missed the
  // answer (fewer than k, or more than the buffer holds), then its sort.  Queued always (no host
  // sync); with no failed row both launches are small grids that return at once.
  constexpr int FB = kSampleFallbackTile.block, FI = kSampleFallbackTile.items;
  int cap = r.plan.fallback_cap;
  int chunks = int(r.fallback.chunks);
  std::int64_t n = l.n, x_stride = l.x_stride;
  int k = l.k, largest = l.largest;
  std::int64_t chunk_len = r.fallback.chunk_len;
  auto* passes = &sample_fallback_passes_kernel<T, FB, FI>;
  // A cooperative launch needs every block resident: at most kSampleFallbackGrid, fewer where the
  // device holds fewer.
  const int grid = std::min(kSampleFallbackGrid, resident_grid(reinterpret_cast<const void*>(passes), FB, 0));
  if (grid <= 0) return cudaErrorCooperativeLaunchTooLarge;
  if (e = launch_after_prior_grid(passes, dim3(unsigned(grid)), dim3(FB), 0, stream, true, failed, x, x_stride, n, k,
                                  largest, chunk_len, chunks, cap, radix_states, hists, cands);
      e != cudaSuccess)
    return e;
  return launch(&sample_fallback_sort_kernel<T, kSortBlock>, dim3(kSampleFallbackGrid), kSortBlock,
                std::size_t(cap) * sizeof(std::uint64_t), true, failed, x, l.x_stride, l.k, cap, radix_states, cands,
                values, l.v_stride, l.indices, l.i_stride);
}

using Launcher = cudaError_t (*)(const TopkLaunch&, const SampleLayout&, void*, cudaStream_t);

// Every filter tile for each element type (the sample, select and fallback kernels depend on the
// type only).
template <std::size_t I>
cudaError_t launch_entry(const TopkLaunch& l, const SampleLayout& r, void* ws, cudaStream_t s) {
  constexpr TileShape t = kSampleFilterTiles[I];
  switch (l.dtype) {
    case DType::f16: return launch_tile_as<__half, t.block, t.items>(l, r, ws, s);
    case DType::bf16: return launch_tile_as<__nv_bfloat16, t.block, t.items>(l, r, ws, s);
    default: return launch_tile_as<float, t.block, t.items>(l, r, ws, s);
  }
}

template <std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> launcher_table(std::index_sequence<I...>) {
  return {&launch_entry<I>...};
}
constexpr std::size_t kTiles = sizeof(kSampleFilterTiles) / sizeof(kSampleFilterTiles[0]);
const std::array<Launcher, kTiles> kLaunchers = launcher_table(std::make_index_sequence<kTiles>{});

class SampleSelect final : public Variant {
 public:
  SampleSelect()
      : Variant(VariantDesc{"topk_sample_select", "topk", DeviceKind::cuda, {f32, f16, bf16}, 52,
                            "threshold from a sample of the row; one filtering pass; radix select and sort of the "
                            "candidates (topk_radix_select's passes when they miss)",
                            false, false},
                sample_select_space()) {}
  Config default_config(const DeviceInfo& d) const override { return sample_select_default(d); }
  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    return topk_cuda_support(p, kRadixMaxCap, "the selection is sorted in 32 KiB of shared memory");
  }
  std::size_t workspace_bytes(const Problem& p, const Config& c) const override { return layout_of(p, c).total(); }
  Status launch(const Args& args, const Problem& p, const Config& c, void* workspace, Stream stream) const override {
    const TopkLaunch l = topk_launch_of(args, p);
    if (l.rows == 0) return Status::success();
    if (Status st = topk_check_indices(l, "topk_sample_select"); !st.ok()) return st;
    if (workspace == nullptr) return Status::fail(ErrorKind::argument, "topk_sample_select: no workspace given");
    const int block = c.get_or("block", 512), items = c.get_or("items_per_thread", 16);
    for (std::size_t i = 0; i < kTiles; ++i) {
      if (kSampleFilterTiles[i].block != block || kSampleFilterTiles[i].items != items) continue;
      const cudaError_t e = kLaunchers[i](l, layout_of(p, c), workspace, static_cast<cudaStream_t>(stream.handle()));
      if (e != cudaSuccess)
        return Status::fail(ErrorKind::cuda, std::string("topk_sample_select: ") + cudaGetErrorString(e));
      return Status::success();
    }
    return Status::fail(ErrorKind::argument, "topk_sample_select: (block, items_per_thread) = (" + std::to_string(block) +
                                                 ", " + std::to_string(items) + ") is not instantiated");
  }
};

}  // namespace

std::shared_ptr<Variant> make_topk_sample_select() { return std::make_shared<SampleSelect>(); }

}  // namespace kiln::topk

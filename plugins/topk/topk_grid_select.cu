// topk_grid_select: the adapter (support, workspace layout, grid sizing, the launch sequence).
#include <algorithm>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "topk_grid_select.cuh"
#include "topk_grid_select_params.hpp"
#include "topk_params.hpp"
#include "topk_resident_grid.hpp"
#include "topk_sample_select.cuh"
#include "topk_sample_select_params.hpp"
#include "topk_variants.hpp"

namespace kiln::topk {
namespace {

std::int64_t ceil_div64(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Workspace: the row state and candidates (written by the threshold kernel, read by
// grid_rank_kernel), then the blocks' largest ranks (at most ceil(n / min_chunk) blocks a row), the
// levels' counters and every block's own counts of the latest level.
struct GridLayout {
  GridPlan plan;
  std::size_t states_bytes = 0, cands_bytes = 0, partial_bytes = 0, bins_bytes = 0, block_bins_bytes = 0;
  std::size_t total() const { return states_bytes + cands_bytes + partial_bytes + bins_bytes + block_bins_bytes; }
};

GridLayout layout_of(const Problem& p, const Config& c) {
  GridLayout r;
  const std::size_t rows = std::size_t(p.dims[0]);
  r.plan = grid_plan(p.dims[2]);
  r.states_bytes = rows * sizeof(SampleRowState);
  r.cands_bytes = rows * std::size_t(r.plan.cand_cap) * sizeof(std::uint64_t);
  const std::int64_t most_blocks = ceil_div64(p.dims[1], std::max(c.get_or("min_chunk", 4096), kGridChunkAlign));
  r.partial_bytes = (rows * std::size_t(most_blocks) + 1) / 2 * 8;
  r.bins_bytes = rows * kGridLevels * kGridBins * sizeof(std::uint32_t);
  r.block_bins_bytes = rows * std::size_t(most_blocks) * kGridBins * sizeof(std::uint32_t);
  return r;
}

// Blocks per row and chunk: chunks of at least min_chunk (a multiple of kGridChunkAlign) and as
// many blocks as the device holds at once with that chunk's shared memory, up to one per chunk.
// A chunk past kGridMaxChunk holds its first kGridMaxChunk ranks in shared memory and re-reads the
// rest from global memory (L2) at every pass, up to kGridMaxStreamChunk elements a block.
template <class T, int BLOCK>
cudaError_t launch_as(const TopkLaunch& l, const GridLayout& r, int min_chunk, void* workspace, cudaStream_t stream) {
  const void* held_fn = reinterpret_cast<const void*>(&grid_threshold_kernel<T, BLOCK, false>);
  const void* stream_fn = reinterpret_cast<const void*>(&grid_threshold_kernel<T, BLOCK, true>);
  const void* fn = held_fn;
  std::int64_t chunk = ceil_div64(std::max(min_chunk, kGridChunkAlign), kGridChunkAlign) * kGridChunkAlign;
  int per_row = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::int64_t held = std::min<std::int64_t>(chunk, kGridMaxChunk);
    fn = chunk > kGridMaxChunk ? stream_fn : held_fn;
    const int grid = resident_grid(fn, BLOCK, grid_chunk_smem<T, BLOCK>(held));
    const std::int64_t fits = grid / std::max<std::int64_t>(l.rows, 1);
    if (fits >= 1 && ceil_div64(l.n, chunk) <= fits) {
      per_row = int(ceil_div64(l.n, chunk));
      break;
    }
    if (fits < 1) return cudaErrorCooperativeLaunchTooLarge;
    chunk = ceil_div64(ceil_div64(l.n, fits), kGridChunkAlign) * kGridChunkAlign;  // fewer, longer chunks
    if (chunk > kGridMaxStreamChunk) return cudaErrorCooperativeLaunchTooLarge;
  }
  if (per_row == 0) return cudaErrorCooperativeLaunchTooLarge;
  // Spread the row evenly over the blocks it takes (the last chunk is not left nearly empty).
  int chunk_len = int(ceil_div64(ceil_div64(l.n, per_row), 8) * 8);

  auto* bytes = static_cast<unsigned char*>(workspace);
  std::size_t at = 0;
  auto* states = reinterpret_cast<SampleRowState*>(bytes + at);
  at += r.states_bytes;
  auto* cands = reinterpret_cast<std::uint64_t*>(bytes + at);
  at += r.cands_bytes;
  auto* partial = reinterpret_cast<std::uint32_t*>(bytes + at);
  at += r.partial_bytes;
  auto* bins = reinterpret_cast<std::uint32_t*>(bytes + at);
  at += r.bins_bytes;
  auto* block_bins = reinterpret_cast<std::uint32_t*>(bytes + at);

  const T* x = static_cast<const T*>(l.x);
  std::int64_t x_stride = l.x_stride, n = l.n, cand_cap = r.plan.cand_cap;
  int largest = l.largest, k = l.k;
  std::uint32_t target = r.plan.target;
  T* values = static_cast<T*>(l.values);
  std::int32_t* indices = l.indices;
  void* args[] = {&x, &x_stride, &n, &largest, &k, &per_row, &chunk_len, &target, &cand_cap,
                  &partial, &bins, &block_bins, &states, &cands, &values, &indices};
  // chunk_len <= chunk: its whole held groups need no more shared memory than resident_grid allowed.
  const std::size_t smem = grid_chunk_smem<T, BLOCK>(std::min(chunk_len, kGridMaxChunk));
  if (cudaError_t e = cudaLaunchCooperativeKernel(fn, dim3(unsigned(l.rows * per_row)), dim3(BLOCK), args, smem,
                                                  stream);
      e != cudaSuccess)
    return e;
  // At most BLOCK candidates: the threshold kernel's last block has ordered them.
  if (target <= std::uint32_t(BLOCK)) return cudaSuccess;
  // Between k and target (<= kGridRankCap) candidates: each one's place by counting the larger.
  auto* rank = &grid_rank_kernel<T, kGridRankBlock>;
  const std::size_t rank_smem = grid_rank_smem_bytes<kGridRankBlock>(cand_cap);
  // Above 48 KiB of dynamic shared memory (kGridRankCap > 6000) the kernel must opt in (per
  // device; cheap to repeat).
  if (rank_smem > 48 * 1024)
    if (cudaError_t e = cudaFuncSetAttribute(rank, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(grid_rank_smem_bytes<kGridRankBlock>(kGridRankCap)));
        e != cudaSuccess)
      return e;
  // A programmatic dependent of the cooperative kernel (topk_dependent_launch.cuh).
  return launch_after_prior_grid(rank, dim3(unsigned(ceil_div64(cand_cap, 32))), dim3(kGridRankBlock), rank_smem, stream,
                                 false, x, l.k, cand_cap, static_cast<const SampleRowState*>(states),
                                 static_cast<const std::uint64_t*>(cands), values, indices);
}

template <int BLOCK>
cudaError_t launch_block(const TopkLaunch& l, const GridLayout& r, int min_chunk, void* ws, cudaStream_t s) {
  switch (l.dtype) {
    case DType::f16: return launch_as<__half, BLOCK>(l, r, min_chunk, ws, s);
    case DType::bf16: return launch_as<__nv_bfloat16, BLOCK>(l, r, min_chunk, ws, s);
    default: return launch_as<float, BLOCK>(l, r, min_chunk, ws, s);
  }
}

class GridSelect final : public Variant {
 public:
  GridSelect()
      : Variant(VariantDesc{"topk_grid_select", "topk", DeviceKind::cuda, {f32, f16, bf16}, 51,
                            "a row spread over the resident grid (each block's first 16384 elements held in "
                            "shared memory, the rest re-read from L2); the k-th rank's bin by histograms "
                            "across blocks (grid barriers); one append pass of at most max(256, 2 pow2(k)) "
                            "keys (up to 8192), placed by counting the larger keys: by the last block for "
                            "at most `block` keys, else by a second kernel over many blocks",
                            false, false},
                grid_select_space()) {}
  Config default_config(const DeviceInfo& d) const override { return grid_select_default(d); }
  Support supports(const Problem& p, const DeviceInfo& d, const Config&) const override {
    if (Support s = topk_cuda_support(p, kRadixMaxCap, "the selection is sorted in 32 KiB of shared memory"); !s.ok)
      return s;
    return grid_select_supports(p.dims[0], p.dims[1], d);
  }
  std::size_t workspace_bytes(const Problem& p, const Config& c) const override { return layout_of(p, c).total(); }
  Status launch(const Args& args, const Problem& p, const Config& c, void* workspace, Stream stream) const override {
    const TopkLaunch l = topk_launch_of(args, p);
    if (l.rows == 0) return Status::success();
    if (l.rows != 1)  // the grid's barriers are the row's (grid_select_supports)
      return Status::fail(ErrorKind::argument,
                          "topk_grid_select: rows = " + std::to_string(l.rows) + ": one row only");
    if (Status st = topk_check_indices(l, "topk_grid_select"); !st.ok()) return st;
    if (workspace == nullptr) return Status::fail(ErrorKind::argument, "topk_grid_select: no workspace given");
    const int block = c.get_or("block", 512), min_chunk = c.get_or("min_chunk", 4096);
    auto* s = static_cast<cudaStream_t>(stream.handle());
    const GridLayout r = layout_of(p, c);
    cudaError_t e;
    if (block == 256) e = launch_block<256>(l, r, min_chunk, workspace, s);
    else if (block == 512) e = launch_block<512>(l, r, min_chunk, workspace, s);
    else
      return Status::fail(ErrorKind::argument,
                          "topk_grid_select: block = " + std::to_string(block) + " is not instantiated");
    if (e == cudaErrorCooperativeLaunchTooLarge)
      return Status::fail(ErrorKind::cuda, "topk_grid_select: n = " + std::to_string(l.n) +
                                               " does not fit the device's resident grid");
    if (e != cudaSuccess)
      return Status::fail(ErrorKind::cuda, std::string("topk_grid_select: ") + cudaGetErrorString(e));
    return Status::success();
  }
};

}  // namespace

std::shared_ptr<Variant> make_topk_grid_select() { return std::make_shared<GridSelect>(); }

}  // namespace kiln::topk

// topk_block_merge: the adapter (support, workspace, dispatch over the instantiated tiles).
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include <cuda_runtime.h>

#include "topk_block_merge.cuh"
#include "topk_params.hpp"
#include "topk_variants.hpp"

namespace kiln::topk {
namespace {

// Geometry of one launch, shared by workspace_bytes() and launch().
struct MergePlan {
  int kp = 32;
  Chunking chunking;
  std::size_t workspace = 0;  // the chunks' keys, when a row has more than one chunk
};

MergePlan plan_of(const Problem& p, const Config& c) {
  MergePlan m;
  m.kp = candidates_for(p.dims[2]);
  const std::int64_t tile = std::int64_t(c.get_or("block", 256)) * c.get_or("items_per_thread", 8);
  m.chunking = chunking(p.dims[0], p.dims[1], tile, c.get_or("blocks", 1024));
  if (m.chunking.chunks > 1) {
    m.workspace = std::size_t(p.dims[0]) * std::size_t(m.chunking.chunks) * std::size_t(p.dims[2]) * 8;
  }
  return m;
}

template <int BLOCK, int ITEMS>
cudaError_t launch_tile(const TopkLaunch& l, const MergePlan& m, void* workspace, cudaStream_t stream) {
  const std::size_t smem = std::size_t(2) * m.kp * sizeof(std::uint64_t);
  auto* ws = static_cast<std::uint64_t*>(workspace);
  const dim3 grid(unsigned(l.rows), unsigned(m.chunking.chunks));
  const auto* x = static_cast<const float*>(l.x);  // f32 only (the variant's dtypes)
  auto* values = static_cast<float*>(l.values);
  topk_chunk_kernel<BLOCK, ITEMS><<<grid, BLOCK, smem, stream>>>(
      x, l.x_stride, l.n, l.k, m.kp, l.largest, m.chunking.chunk_len, int(m.chunking.chunks), ws, values,
      l.v_stride, l.indices, l.i_stride);
  if (m.chunking.chunks > 1) {
    topk_merge_kernel<kMergeBlock, kMergeItems><<<unsigned(l.rows), kMergeBlock, smem, stream>>>(
        x, l.x_stride, l.k, m.kp, int(m.chunking.chunks), ws, values, l.v_stride, l.indices, l.i_stride);
  }
  return cudaGetLastError();
}

using Launcher = cudaError_t (*)(const TopkLaunch&, const MergePlan&, void*, cudaStream_t);

template <std::size_t I>
cudaError_t launch_entry(const TopkLaunch& l, const MergePlan& m, void* ws, cudaStream_t s) {
  constexpr TileShape t = kBlockMergeTiles[I];
  return launch_tile<t.block, t.items>(l, m, ws, s);
}

// One launcher per entry of kBlockMergeTiles, in its order.
template <std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> launcher_table(std::index_sequence<I...>) {
  return {&launch_entry<I>...};
}
constexpr std::size_t kTiles = sizeof(kBlockMergeTiles) / sizeof(kBlockMergeTiles[0]);
const std::array<Launcher, kTiles> kLaunchers = launcher_table(std::make_index_sequence<kTiles>{});

class BlockMerge final : public Variant {
 public:
  BlockMerge()
      : Variant(VariantDesc{"topk_block_merge", "topk", DeviceKind::cuda, {f32}, 45,
                            "per-chunk running top-k (threshold filter, bitonic merges in shared memory), then a "
                            "per-row merge",
                            false, false},
                block_merge_space()) {}
  Config default_config(const DeviceInfo& d) const override { return block_merge_default(d); }
  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    return topk_cuda_support(p, kBlockMergeMaxK, "the two candidate buffers would exceed 32 KiB of shared memory");
  }
  std::size_t workspace_bytes(const Problem& p, const Config& c) const override { return plan_of(p, c).workspace; }
  Status launch(const Args& args, const Problem& p, const Config& c, void* workspace, Stream stream) const override {
    const TopkLaunch l = topk_launch_of(args, p);
    if (l.dtype != f32) return Status::fail(ErrorKind::unsupported, "topk_block_merge: f32 only");
    if (l.rows == 0) return Status::success();
    const int block = c.get_or("block", 256), items = c.get_or("items_per_thread", 8);
    for (std::size_t i = 0; i < kTiles; ++i) {
      if (kBlockMergeTiles[i].block != block || kBlockMergeTiles[i].items != items) continue;
      const MergePlan m = plan_of(p, c);
      if (m.workspace > 0 && workspace == nullptr) {
        return Status::fail(ErrorKind::argument, "topk_block_merge: no workspace given");
      }
      const cudaError_t e = kLaunchers[i](l, m, workspace, static_cast<cudaStream_t>(stream.handle()));
      if (e != cudaSuccess) return Status::fail(ErrorKind::cuda, std::string("topk_block_merge: ") + cudaGetErrorString(e));
      return Status::success();
    }
    return Status::fail(ErrorKind::argument, "topk_block_merge: (block, items_per_thread) = (" + std::to_string(block) + ", " +
                                                 std::to_string(items) + ") is not instantiated");
  }
};

}  // namespace

std::shared_ptr<Variant> make_topk_block_merge() { return std::make_shared<BlockMerge>(); }

}  // namespace kiln::topk

// Parameters and plan of topk_grid_radix16 (kernel in topk_grid_radix16.cuh): f16 and bf16 rows
// spread over the resident grid, the k-th value found exactly by two byte-wide histogram passes
// (a 16-bit rank has two bytes), then one pass that appends the values above it and places the
// first members of its tie class in index order.
//
//   kiln::topk::Radix16Plan g = kiln::topk::radix16_plan(/*rows=*/1, /*n=*/1 << 22, /*block=*/512,
//                                                       /*min_vecs=*/2, /*resident=*/264);
//   // g.blocks_per_row == 256, g.vecs_per_thread == 4: each thread reads 4 runs of 16 bytes.
#pragma once
#include <cstdint>

#include <kiln/device.hpp>
#include <kiln/param_space.hpp>
#include <kiln/variant.hpp>

namespace kiln::topk {

inline constexpr int kRadix16Bins = 256;        // one byte of the 16-bit rank per pass
inline constexpr int kRadix16HeaderWords = 528;  // per row: two histograms, the append count, arrivals (padded)
inline constexpr int kRadix16MaxK = 4096;
inline constexpr std::int64_t kRadix16MaxN = std::int64_t(1) << 30;  // element and run numbers stay ints        // the keys above the k-th value are ordered in 32 KiB of shared memory
// Blocks a row may take at most (the workspace holds every block's counts of the second pass).
inline constexpr int kRadix16MaxBlocksPerRow = 2048;
// What supports() assumes the device holds at once: 1024 threads an SM (launch checks the real grid).
inline constexpr int kRadix16ThreadsPerSmAssumed = 1024;

// The grid of a launch: blocks_per_row blocks of `block` threads per row, each thread reading
// vecs_per_thread runs of 16 bytes (8 elements; a row's runs start at the 16-byte boundary at or
// below its first element).
struct Radix16Plan {
  int blocks_per_row = 0;
  std::int64_t vecs_per_thread = 0;
};
// resident: the blocks the device holds at once (all rows share them); blocks_per_row == 0 when a
// row cannot have one.
Radix16Plan radix16_plan(std::int64_t rows, std::int64_t n, int block, int min_vecs, std::int64_t resident);
// Runs of 16 bytes a row may span (it may start up to 7 elements past a boundary).
constexpr std::int64_t radix16_row_vecs(std::int64_t n) { return (n + 7 + 7) / 8; }

// block {256, 512} (template), hold {2, 4}: runs a thread keeps in registers across the passes (the
// rest is re-read, from L2 for rows it holds), min_vecs {1, 2, 4}: runs a thread takes at least
// (fewer blocks for short rows: cheaper barriers).
ParamSpace grid_radix16_space();
Config grid_radix16_default(const DeviceInfo& device);
// f16 and bf16 only; every row must have a block of the resident grid.
Support grid_radix16_supports(DType dtype, std::int64_t rows, std::int64_t n, std::int64_t k, const DeviceInfo& device);

// Workspace: rows x kRadix16HeaderWords words (zeroed by the kernel), the blocks' counts of the
// second pass (rows x blocks x 256 words), the keys above the k-th value (rows x k keys).
struct Radix16Layout {
  std::size_t header_bytes = 0, block_bins_bytes = 0, cands_bytes = 0;
  int max_blocks_per_row = 0;
  std::size_t total() const { return header_bytes + block_bins_bytes + cands_bytes; }
};
Radix16Layout radix16_layout(std::int64_t rows, std::int64_t n, std::int64_t k, int block, int min_vecs);

}  // namespace kiln::topk

// Parameters and plan of topk_grid_select (kernels in topk_grid_select.cuh): a single row of 2^13
// to about 2^24 elements, spread over the whole resident grid.  Each block holds
// its chunk of the row in shared memory as 32-bit ranks (up to kGridMaxChunk; the rest of a longer
// chunk is re-read from global memory at every pass); the grid finds the threshold of the
// k-th rank by histograms combined across blocks (a grid barrier between levels), every block
// appends its keys at or above it; grid_rank_kernel orders them (each one's place counted by many
// blocks).
//
//   kiln::topk::GridPlan g = kiln::topk::grid_plan(/*n=*/1 << 20, /*k=*/100, /*element_bytes=*/4);
//   // g.target == 256: the levels stop once at most 256 keys are at or above the threshold's bin
//   // (or the bin is one value: then its first members in index order make the count k).
#pragma once
#include <cstdint>

#include <kiln/device.hpp>
#include <kiln/param_space.hpp>
#include <kiln/variant.hpp>

namespace kiln::topk {

inline constexpr int kGridBlocks[] = {256, 512};     // instantiated block sizes (template argument)
inline constexpr int kGridMaxChunk = 16384;          // ranks a block holds (64 KiB of shared memory)
// Elements a block takes at most: past kGridMaxChunk, the rest of its chunk is re-read from global
// memory at every pass (a 16-bit row of 2^24 is 32 MiB: the H200's L2 holds it).
inline constexpr int kGridMaxStreamChunk = 65536;
inline constexpr int kGridChunkAlign = 256;          // chunks are multiples of this many elements
// Distance bands, then levels of 32 sub-bins: a band is at most 2^31 wide, 7 levels of 2^-5 take
// it to one rank.
inline constexpr int kGridLevels = 8;
inline constexpr int kGridBins = 64;                 // global counters per row and level (33 used)
// The candidates are ordered by grid_rank_kernel (C x C compares spread over C / 32 blocks), and a
// row may end with up to kGridRankCap of them (more: fewer levels, but the rank's cost grows as
// C^2).  Measured on an H200 (2026-11-28, sixteenth session, docs/performance.md; same call, k =
// 4096, us, cap 8192 / 4096): f32 1 x 2^20 31.0 / 26.5, 1 x 2^22 30.9 / 49.5; bf16 30.3 / 28.2,
// 54.2 / 54.2; f16 30.0 / 30.8, 38.9 / 56.4.  Until the nineteenth session rows with k < 1024 took
// topk_sample_select's one-block select kernel instead: 2.1-2.4 us slower at k = 100 (H200, 2^20
// and 2^22 rows, f32 and bf16).
inline constexpr int kGridRankCap = 8192;
inline constexpr int kGridRankBlock = 512;           // grid_rank_kernel: 16 warps split the list
inline constexpr std::int64_t kGridMinN = 8193;      // shorter rows are topk_row_select's and topk_warp_select's
// What supports() assumes the device holds at once: two blocks of kGridMaxChunk ranks per SM
// (an H100 or H200 holds three); launch() checks the real resident grid.
inline constexpr int kGridBlocksPerSmAssumed = 2;

struct GridPlan {
  std::uint32_t target = 0;   // the candidates a row ends with: between k and target,
                              // max(kSampleSortMin, 2 pow2(k)) up to kGridRankCap
  std::int64_t cand_cap = 0;  // candidate keys per row: target
};
GridPlan grid_plan(std::int64_t k);

// block (an instantiated kGridBlocks size), min_chunk (elements a block takes at least: fewer,
// fuller blocks against more loads in flight).
ParamSpace grid_select_space();
Config grid_select_default(const DeviceInfo& device);
// One row (the grid's barriers are the row's), n from kGridMinN to what the resident grid takes
// (kGridBlocksPerSmAssumed x kGridMaxStreamChunk per SM).
Support grid_select_supports(std::int64_t rows, std::int64_t n, const DeviceInfo& device);

}  // namespace kiln::topk

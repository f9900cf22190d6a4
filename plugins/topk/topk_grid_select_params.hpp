// Parameters and plan of topk_grid_select (kernels in topk_grid_select.cuh): a single row of 2^13
// to a few million elements, spread over the whole resident grid.  Each block holds
// its chunk of the row in shared memory as 32-bit ranks; the grid finds the threshold of the
// k-th rank by histograms combined across blocks (a grid barrier between levels), every block
// appends its keys at or above it, and topk_sample_select's select kernel orders them.
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
inline constexpr int kGridChunkAlign = 256;          // chunks are multiples of this many elements
// Distance bands, then levels of 32 sub-bins: a band is at most 2^31 wide, 7 levels of 2^-5 take
// it to one rank.
inline constexpr int kGridLevels = 8;
inline constexpr int kGridBins = 64;                 // global counters per row and level (33 used)
inline constexpr std::int64_t kGridMinN = 8193;      // shorter rows are topk_row_select's and topk_warp_select's
// What supports() assumes the device holds at once: two blocks of kGridMaxChunk ranks per SM
// (an H100 or H200 holds three); launch() checks the real resident grid.
inline constexpr int kGridBlocksPerSmAssumed = 2;

struct GridPlan {
  std::uint32_t target = 0;   // the candidates a row ends with: between k and target (the select
                              // kernel's sort size, max(kSampleSortMin, 2 pow2(k)) up to
                              // kSampleSortCap, so it needs no radix pass of its own)
  std::int64_t cand_cap = 0;  // candidate keys per row: target
};
GridPlan grid_plan(std::int64_t k);

// block (an instantiated kGridBlocks size), min_chunk (elements a block takes at least: fewer,
// fuller blocks against more loads in flight).
ParamSpace grid_select_space();
Config grid_select_default(const DeviceInfo& device);
// One row (the grid's barriers are the row's), n from kGridMinN to what the resident grid holds
// (kGridBlocksPerSmAssumed x kGridMaxChunk per SM).
Support grid_select_supports(std::int64_t rows, std::int64_t n, const DeviceInfo& device);

}  // namespace kiln::topk

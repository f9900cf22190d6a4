// Tuning spaces, defaults and launch geometry of the CUDA topk variants.  (block,
// items_per_thread) pairs are template arguments of the kernels: only the pairs listed here are
// instantiated, and the spaces carry a constraint that admits only those.  `blocks` and `cap` are
// launch arguments.
//
//   kiln::ParamSpace s = kiln::topk::radix_select_space();
//   kiln::topk::Chunking c = kiln::topk::chunking(/*rows=*/1, /*n=*/1 << 26, /*tile=*/4096, /*blocks=*/2048);
#pragma once
#include <cstddef>
#include <cstdint>

#include <kiln/device.hpp>
#include <kiln/param_space.hpp>
#include <kiln/variant.hpp>

namespace kiln::topk {

struct TileShape {
  int block;  // threads per block
  int items;  // items_per_thread: elements per thread per tile (loads in flight)
};

inline constexpr TileShape kBlockMergeTiles[] = {{128, 8}, {256, 4}, {256, 8}, {256, 16}, {512, 4}, {1024, 2}};
inline constexpr TileShape kRadixTiles[] = {{256, 8}, {512, 4}, {512, 8}, {1024, 4}};

// Candidate buffers of topk_block_merge: two of candidates_for(k) 8-byte keys in shared memory.
inline constexpr int kBlockMergeMaxK = 2048;
// The selection of topk_radix_select is sorted in shared memory: at most 4096 8-byte keys.
inline constexpr int kRadixMaxCap = 4096;
inline constexpr int kRadixBins = 2048;  // 11-bit digits
inline constexpr int kRadixPasses = 6;   // 64-bit keys: 11 + 11 + 10 + 11 + 11 + 10 bits
// Threads of the merge kernel of block_merge and of the sort kernel of radix_select.
inline constexpr int kMergeBlock = 512;
inline constexpr int kMergeItems = 4;
inline constexpr int kSortBlock = 1024;

// How a row is cut into chunks, one block per (row, chunk): about `blocks` blocks in all,
// each chunk a multiple of `tile` elements.
struct Chunking {
  std::int64_t chunks = 1;
  std::int64_t chunk_len = 0;
};
Chunking chunking(std::int64_t rows, std::int64_t n, std::int64_t tile, int blocks);

// Candidate buffer length of block_merge: the power of two >= max(k, 32).
int candidates_for(std::int64_t k);
// Sort capacity of radix_select: max(cap, the power of two >= k).
int radix_cap(int cap, std::int64_t k);
// Candidate buffer of radix_select per row, in keys: 0 when filter is 0 (off), else
// max(cap, ceil(n / filter)).
int radix_candidates(int filter, std::int64_t n, int cap);

// topk_block_merge: block, items_per_thread (instantiated pairs), blocks (target blocks in the grid).
ParamSpace block_merge_space();
Config block_merge_default(const DeviceInfo& device);

// topk_radix_select: block, items_per_thread (instantiated pairs), cap (minimum selection capacity: a row
// stops refining its threshold once the selection fits), blocks (target blocks in the grid),
// filter (0: off; f: a candidate buffer of n / f keys per row, filled by the first pass after the
// candidates fit it, read by the later passes and the gather instead of the row).
ParamSpace radix_select_space();
Config radix_select_default(const DeviceInfo& device);

// topk_row_select: one block per row, the row in registers (n <= block * items_per_thread), an
// on-chip radix select with 8-bit digits, the selection (<= cap keys) sorted in shared memory.
//   block, items_per_thread  an instantiated pair of kRowSelectTiles (template); a config supports
//                            rows of up to block * items_per_thread elements
//   cap                      selection capacity (raised to the power of two >= k): the passes stop
//                            once the keys above the k-th's digit plus its bucket fit
// default_config_for picks the smallest tile that holds the row, among equal sizes the one with
// more threads.
// (1024, 32) was tried: ptxas spilled its 32 keys per thread (408-byte stack frame), so rows stop
// at 16384.
inline constexpr TileShape kRowSelectTiles[] = {{128, 2},  {128, 8},  {256, 4},  {256, 8},  {256, 16},
                                                {512, 8},  {1024, 4}, {512, 16}, {1024, 16}};
inline constexpr int kRowSelectMaxN = 16384;
ParamSpace row_select_space();
Config row_select_default(const DeviceInfo& device);
Config row_select_default_for(const DeviceInfo& device, std::int64_t n, std::int64_t k);
Support row_select_supports(std::int64_t n, std::int64_t k, const Config& config);

}  // namespace kiln::topk

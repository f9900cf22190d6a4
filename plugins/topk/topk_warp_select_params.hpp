// Parameters of topk_warp_select (kernel in topk_warp_select.cuh): one warp per row for the many
// small rows (n <= 4096), the row in registers, a threshold found by a bitwise search on the
// 32-bit rank with warp reductions (no shared-memory histogram, no block barrier), one filter
// into a per-warp list of at most `cap` keys, a warp bitonic sort of that list.
//
//   kiln::Config c = kiln::topk::warp_select_default_for(device, /*n=*/1024, /*k=*/8);
//   // c == {warps 4, items_per_thread 32, cap 64, row_warps 1}: 4 rows per block, a row of up to 1024 per warp
//   kiln::topk::warp_select_cap(64, 100) == 256   // at least twice the power of two >= k
#pragma once
#include <cstdint>

#include <kiln/device.hpp>
#include <kiln/param_space.hpp>
#include <kiln/variant.hpp>

namespace kiln::topk {

struct WarpTile {
  int warps;      // warps per block
  int items;      // items_per_thread
  int row_warps;  // warps per row: 1 (a row per warp, `warps` rows per block) or `warps` (a row per block)
  constexpr int length() const { return 32 * items * row_warps; }  // the longest row the tile holds
};
// The instantiated tiles (template arguments), each for f32, f16 and bf16.  A row per warp
// (topk_warp_select.cuh, 21 kernels), listed by row length, the default for a length first: 4 x
// 32 over 8 x 32 (16384 rows of 1024, k = 8, H200, 2026-11-24: 75.5 against 80.5 us); 4 x 128 and
// 2 x 128 were within 0.5%.  Then a row per block (topk_warp_group_select.cuh, 21 kernels), the
// default for rows of more than 1024 first for each length: 4 x 16 over 8 x 8 (16384 rows of 2048,
// k = 32, H100, 2026-11-26, first version: 130.4 against 182.4 us), 8 x 16 over 4 x 32 (16384 x
// 4096, k = 64: 338.9 against 360.4; k = 256: 531 against 607).
// Not instantiated: 16 x 16 x 16 and 32 x 16 x 32 (rows of 8192 and 16384 at 64 registers, twice
// the warps per SM), slower than the 32-item tiles (H200, 2026-11-27, `kiln tune`, bucket_sort 1):
// 4096 x 8192, k = 256: 128.3 us against 114.6 (8 x 32 x 8); 3000 x 10000, k = 128: 185.6 against
// 162.7 (16 x 32 x 16).
inline constexpr WarpTile kWarpSelectTiles[] = {{8, 8, 1},   {8, 16, 1},   {4, 32, 1},   {8, 32, 1},   {4, 64, 1},
                                                {4, 128, 1}, {2, 128, 1},  {4, 16, 4},   {8, 8, 8},    {8, 16, 8},
                                                {4, 32, 4},  {16, 8, 16},  {8, 32, 8},   {16, 32, 16}};
inline constexpr int kWarpSelectMaxN = 16 * 32 * 32;
// Rows longer than this take a row-per-block tile by default.
inline constexpr int kWarpSelectOneWarpMaxN = 1024;
inline constexpr int kWarpSelectMaxK = 256;
// A row per block: the list (and the bucket sort's output) of up to 2 pow2(k) = 1024 keys.
inline constexpr int kWarpGroupSelectMaxK = 512;
// The list a warp sorts: cap keys of 8 bytes in shared memory per warp (4 KiB at 512).
inline constexpr int kWarpSelectMaxCap = 512;

// The list capacity of a launch: max(cap, 2 * pow2(k)).  The search stops once at most that many
// keys are at or above the threshold; with a capacity of only k it would have to separate the
// k-th key from the (k+1)-th, about twice as many search steps on random rows.
int warp_select_cap(int cap, std::int64_t k);

//   warps             warps per block
//   items_per_thread  with warps and row_warps an instantiated tile (kWarpSelectTiles)
//   row_warps         warps per row: 1 (rows of up to 32 * items, `warps` rows per block) or
//                     `warps` (one row per block, rows of up to 32 * warps * items); absent = 1
//   cap               minimum list capacity (see warp_select_cap)
//   bucket_sort       row per block only: 1 orders lists of more than 64 keys by buckets of one
//                     8-bit digit (topk_warp_group_select.cuh), 0 (or absent) by counting up to
//                     128 keys, else a bitonic sort
ParamSpace warp_select_space();
Config warp_select_default(const DeviceInfo& device);
// The smallest tile holding the row (fewer registers per thread, more rows resident), cap 64: a
// row per warp up to kWarpSelectOneWarpMaxN (the first listed among equal lengths), else a row per
// block with bucket_sort 1 (for 1 < k <= 64 warps the most items per thread among equal lengths:
// 4 x 32 x 4 at 4096 for k = 2 to 256, 2026-11-27; otherwise the first listed).  k up to 256 (kWarpSelectMaxK) a row per warp; 257 to 512 always a
// row per block (the smallest row-per-block tile holding the row).
Config warp_select_default_for(const DeviceInfo& device, std::int64_t n, std::int64_t k);
// The instantiated tile a config names (row_warps absent = 1), or nullptr.
const WarpTile* warp_select_tile(const Config& config);
// n <= the tile's length, k <= kWarpSelectMaxK (a row per warp) or kWarpGroupSelectMaxK (a row
// per block).
Support warp_select_supports(std::int64_t n, std::int64_t k, const Config& config);

}  // namespace kiln::topk

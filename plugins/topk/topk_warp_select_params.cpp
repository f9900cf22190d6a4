#include "topk_warp_select_params.hpp"

#include <algorithm>
#include <string>

namespace kiln::topk {

int warp_select_cap(int cap, std::int64_t k) {
  int p = 1;
  while (p < k) p <<= 1;
  return std::max(cap, 2 * p);
}

ParamSpace warp_select_space() {
  ParamSpace s;
  s.param("warps", {2, 4, 8, 16})
      .param("items_per_thread", {8, 16, 32, 64, 128})
      .param("cap", {64, 128, 256, 512})
      .param("row_warps", {1, 4, 8, 16})
      .param("bucket_sort", {0, 1});
  s.constraint("(warps, items_per_thread, row_warps) instantiated",
               [](const Config& c, const DeviceInfo&, const Problem&) { return warp_select_tile(c) != nullptr; });
  s.constraint("bucket_sort only a row per block", [](const Config& c, const DeviceInfo&, const Problem&) {
    return c.get_or("bucket_sort", 0) == 0 || c.get_or("row_warps", 1) > 1;
  });
  return s;
}

// Rows of up to 1024 (the 16384 x 1024, k = 8).  cap 64 was the fastest list capacity in
// `kiln tune` (H200, 2026-11-24): 75.5 us against 91.2 (128), 96.0 (256), 103.7 (512) at 16384 x
// 1024, k = 8; 170.0 against 187.8 (128) at 16384 x 2048, k = 32; 332.8 against 333.0 (128) and
// 372.6 (256) at 16384 x 4096, k = 64.
Config warp_select_default(const DeviceInfo&) {
  return {{"warps", 4}, {"items_per_thread", 32}, {"cap", 64}, {"row_warps", 1}, {"bucket_sort", 0}};
}

// A row per block: bucket_sort 1, and for 1 < k <= 64 warps the tile with the most items per
// thread among those of the smallest length (fewer warps share the row's fixed costs: bounds,
// scans, barriers); past 64 warps the warps' bound on the k-th rank (each warp's j2-th largest of
// its lanes' second largest, j2 = k / (2 warps) <= 32) is lost and the search starts from the top.
// H200, 2026-11-27, `kiln tune` (bucket_sort 1): 16384 x 4096, k = 64: 4 x 32 x 4 197.6 us against
// 215.5 for 8 x 16 x 8; k = 128: 203.5 against 226.3; k = 256: 221.5 against 225.1; but
// 8192 x 3000, k = 300 (bench): 149.9 us on 4 x 32 x 4 against 118.0 on 8 x 16 x 8.  bucket_sort 1
// against 0 on the same tile: 226.3 against 421.6 us (8 x 16 x 8, 16384 x 4096, k = 128), 119.2
// against 234.0 (8 x 32 x 8, 4096 x 8192, k = 256); cap made no difference (within 0.5%).  k = 1
// keeps the first listed (8 x 16 x 8 at 4096: its k = 1 path was measured, 2026-11-26).
Config warp_select_default_for(const DeviceInfo& device, std::int64_t n, std::int64_t k) {
  const bool one_warp = n <= kWarpSelectOneWarpMaxN && k <= kWarpSelectMaxK;
  const WarpTile* pick = nullptr;
  for (const WarpTile& t : kWarpSelectTiles) {  // listed by row length, the default first
    if ((t.row_warps == 1) != one_warp || t.length() < n) continue;
    if (pick != nullptr && t.length() != pick->length()) break;
    if (pick == nullptr || (!one_warp && k > 1 && k <= 64 * t.warps && t.items > pick->items)) pick = &t;
  }
  if (pick == nullptr) return warp_select_default(device);
  if (one_warp)
    return {{"warps", pick->warps}, {"items_per_thread", pick->items}, {"cap", 64}, {"row_warps", 1}, {"bucket_sort", 0}};
  return {{"warps", pick->warps}, {"items_per_thread", pick->items}, {"cap", 64}, {"row_warps", pick->row_warps},
          {"bucket_sort", 1}};
}

const WarpTile* warp_select_tile(const Config& c) {
  const int warps = c.get_or("warps", 0), items = c.get_or("items_per_thread", 0), row_warps = c.get_or("row_warps", 1);
  for (const WarpTile& t : kWarpSelectTiles)
    if (t.warps == warps && t.items == items && t.row_warps == row_warps) return &t;
  return nullptr;
}

Support warp_select_supports(std::int64_t n, std::int64_t k, const Config& c) {
  if (n > kWarpSelectMaxN)
    return Support::no("n = " + std::to_string(n) + " > " + std::to_string(kWarpSelectMaxN) +
                       ": a block keeps the row in registers");
  const WarpTile* t = warp_select_tile(c);
  if (t == nullptr) return Support::no("(warps, items_per_thread, row_warps) is not an instantiated tile");
  if (n > t->length())
    return Support::no("n = " + std::to_string(n) + " > the tile's " + std::to_string(t->length()) +
                       " (32 * items_per_thread * row_warps)");
  const std::int64_t max_k = t->row_warps == 1 ? kWarpSelectMaxK : kWarpGroupSelectMaxK;
  if (k > max_k)
    return Support::no("k = " + std::to_string(k) + " > " + std::to_string(max_k) +
                       (t->row_warps == 1 ? ": the list of a warp is sorted in shared memory (a row per block takes up to " +
                                                std::to_string(kWarpGroupSelectMaxK) + ")"
                                          : ": the list is sorted in shared memory"));
  return Support::yes();
}

}  // namespace kiln::topk

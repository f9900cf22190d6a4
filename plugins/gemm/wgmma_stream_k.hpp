// Stream-k for gemm_wgmma: how a `streamk` row shares the output tiles' k blocks among the
// persistent blocks, and the workspace that carries partial tiles between them.  Plain C++ (no
// CUDA headers): the variant uses the plan for workspace_bytes(), gemm_wgmma.cu for the launch.
//
// Why: a persistent grid of one block per SM computes ceil(tiles / SMs) tiles per block, so 160
// tiles on 132 SMs take two tile times where 1.2 would do (1000 x 5120 x 5120 in 128 x 256 tiles),
// and 48 tiles use 48 SMs (333 x 4096 x 5120).  Stream-k (Osama et al., PPoPP 2023) gives every
// block an equal run of the (tile, k block) iterations instead; a tile cut between blocks is
// finished by the block holding its first k block, which adds the others' f32 partials.
//
// The plan ("two-tile stream-k + data-parallel"): with `full` whole waves and `rem` tiles left
// over (tiles = full * grid + rem, rem > 0), the first rem + grid tiles (or all of them when
// full = 0) are shared out as iterations, each block getting between one and two tiles' worth,
// and the remaining (full - 1) * grid tiles follow as whole tiles, one wave each.  When the tiles
// fill whole waves the plan is plain persistent tiles (no stream-k).  With fewer tiles than SMs
// the grid is cut so that each block keeps at least kWgmmaStreamKMinIters k blocks (a shorter run
// is mostly pipeline fill).
//
// Workspace: `grid * consumers` flags (ints; zeroed by a small kernel before each launch, so a
// workspace shared with other variants needs no state), rounded up to 256 bytes, then one partial
// tile per block (bm * bn floats: each block writes at most one, the tile its run starts inside).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace kiln::gemm {

inline constexpr int kWgmmaStreamKMinIters = 8;

struct WgmmaStreamKPlan {
  int grid = 0;                // persistent blocks
  std::int64_t sk_tiles = 0;   // tiles shared out as iterations (0: no stream-k), the first ones
  std::int64_t sk_iters = 0;   // sk_tiles * k_blocks
  std::size_t flags_bytes = 0;  // the flags' part of the workspace
  std::size_t bytes = 0;        // workspace (0 without stream-k)
};

inline WgmmaStreamKPlan wgmma_streamk_plan(std::int64_t tiles, std::int64_t k_blocks, int sms, int bm, int bn,
                                           int consumers) {
  WgmmaStreamKPlan p;
  sms = std::max(1, sms);
  p.grid = static_cast<int>(std::min<std::int64_t>(std::max<std::int64_t>(tiles, 1), sms));
  if (tiles <= 0 || k_blocks < 2) return p;
  const std::int64_t full = tiles / sms, rem = tiles % sms;
  if (rem == 0) return p;
  if (full == 0) {
    const std::int64_t by_iters = tiles * k_blocks / kWgmmaStreamKMinIters;
    const std::int64_t grid = std::min<std::int64_t>(sms, std::max(tiles, by_iters));
    if (grid <= tiles) return p;  // one whole tile per block: nothing to share
    p.grid = static_cast<int>(grid);
    p.sk_tiles = tiles;
  } else {
    p.grid = sms;
    p.sk_tiles = rem + sms;
  }
  p.sk_iters = p.sk_tiles * k_blocks;
  if (p.sk_iters > INT32_MAX) {  // the kernel counts iterations in 32 bits: plain tiles instead
    p = WgmmaStreamKPlan{};
    p.grid = static_cast<int>(std::min<std::int64_t>(tiles, sms));
    return p;
  }
  p.flags_bytes = (static_cast<std::size_t>(p.grid) * consumers * sizeof(int) + 255) / 256 * 256;
  p.bytes = p.flags_bytes + static_cast<std::size_t>(p.grid) * bm * bn * sizeof(float);
  return p;
}

}  // namespace kiln::gemm

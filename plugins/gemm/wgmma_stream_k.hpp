// Stream-k for gemm_wgmma: how a `streamk` row shares the output tiles' k blocks among the
// persistent blocks, and the workspace that carries partial tiles between them.  Two modes:
// `streamk` = 1, equal runs of iterations (below), and 2, sliced tiles (further below).  Plain C++ (no
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
// Sliced tiles (`streamk` = 2): runs measured slow on the H100 (sixth session; 512 x 4096 x 11008
// 114 us against 70 for the plain 128 x 128 ping-pong row, 4096^3 277 against 180 for the same
// tile without stream-k).  A likely cause, not verified: the blocks that share an A or B tile run
// at different k (each run starts at its own offset into its tile), so the operand sharing of a
// data-parallel wave is lost and more of A and B come from DRAM.  Sliced tiles keep the waves in
// step: each tile is cut into `slices` equal k ranges, a work unit is one (tile, slice) with
// the slice fastest, so a wave holds whole tiles' slices and slice j of every tile runs at the
// same k.  The slice count is the one with the fewest k blocks per block (waves x blocks per
// slice) plus the hand-over (kWgmmaPartialReadIters per partial read back, per wave, and 1.5 for
// the flags kernel), 2 to 8, at least 4 k blocks a slice, 3 % better than whole tiles, or none.
// The last slice of a tile (its highest unit) adds the others' partials and stores the tile.
//
// Workspace: `grid * consumers` flags (ints; zeroed by a small kernel before each launch, so a
// workspace shared with other variants needs no state), rounded up to 256 bytes, then one partial
// tile per block (bm * bn floats: each block writes at most one, the tile its run starts inside);
// sliced tiles: a flag per consumer and a partial tile per (tile, slice but the last).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace kiln::gemm {

inline constexpr int kWgmmaStreamKMinIters = 8;
inline constexpr int kWgmmaSliceMinIters = 4;
inline constexpr int kWgmmaMaxSlices = 8;
inline constexpr std::size_t kWgmmaFixupMaxWorkspace = std::size_t(1) << 30;
// What the last slice pays per partial it reads back, in k blocks of its tile: measured on the H100
// (sixth session) at about 5 us per 128 x 256 f32 partial (512 x 14336 x 4096 in 4 slices: 193 us
// where whole tiles take 96, 7 waves x 3 partials; 1000 x 5120 x 5120: 148 against 110 and 74 by
// the k blocks alone), 7 k blocks of 0.7 us.  Its likely cause: 128 accumulators leave the
// thread no registers to keep many of the partial's loads in flight.
inline constexpr double kWgmmaPartialReadIters = 7.0;

struct WgmmaStreamKPlan {
  int grid = 0;                // persistent blocks
  std::int64_t sk_tiles = 0;   // streamk 1: tiles shared out as iterations (0: none), the first ones
  std::int64_t sk_iters = 0;   // sk_tiles * k_blocks
  int slices = 1;              // streamk 2: k slices per tile (1: none)
  int slice_kb = 0;            // k blocks per slice
  std::int64_t flags = 0;       // flags (ints) at the start of the workspace
  std::size_t flags_bytes = 0;  // their part of the workspace, rounded up to 256 bytes
  std::size_t bytes = 0;        // workspace (0: the row runs its plain tiles)
  bool active() const { return sk_tiles > 0 || slices > 1; }
};

// `mode`: the row's `streamk` (1 runs, 2 sliced tiles).  An inactive plan (the tiles fill whole
// waves, k is too short, the workspace would pass 1 GiB) runs the row's plain persistent tiles.
inline WgmmaStreamKPlan wgmma_streamk_plan(int mode, std::int64_t tiles, std::int64_t k_blocks, int sms, int bm,
                                           int bn, int consumers) {
  WgmmaStreamKPlan p;
  sms = std::max(1, sms);
  p.grid = static_cast<int>(std::min<std::int64_t>(std::max<std::int64_t>(tiles, 1), sms));
  if (tiles <= 0 || k_blocks < 2) return p;
  const WgmmaStreamKPlan none = p;
  const std::size_t tile_bytes = static_cast<std::size_t>(bm) * bn * sizeof(float);
  if (mode == 2) {
    double best = static_cast<double>((tiles + sms - 1) / sms * k_blocks);
    for (int s = 2; s <= kWgmmaMaxSlices; ++s) {
      const std::int64_t per = (k_blocks + s - 1) / s;
      if (per < kWgmmaSliceMinIters || (k_blocks + per - 1) / per != s) continue;  // no empty or tiny slices
      const std::int64_t waves = (tiles * s + sms - 1) / sms;
      const double cost = static_cast<double>(waves * per) + kWgmmaPartialReadIters * (s - 1) * waves + 1.5;
      if (cost < best * 0.97) {
        best = cost;
        p.slices = s;
        p.slice_kb = static_cast<int>(per);
      }
    }
    if (p.slices == 1) return none;
    p.grid = static_cast<int>(std::min<std::int64_t>(tiles * p.slices, sms));
    p.flags = tiles * (p.slices - 1) * consumers;
    p.flags_bytes = (static_cast<std::size_t>(p.flags) * sizeof(int) + 255) / 256 * 256;
    p.bytes = p.flags_bytes + static_cast<std::size_t>(tiles) * (p.slices - 1) * tile_bytes;
    return p.bytes <= kWgmmaFixupMaxWorkspace ? p : none;
  }
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
  if (p.sk_iters > INT32_MAX) return none;  // the kernel counts iterations in 32 bits
  p.flags = static_cast<std::int64_t>(p.grid) * consumers;
  p.flags_bytes = (static_cast<std::size_t>(p.flags) * sizeof(int) + 255) / 256 * 256;
  p.bytes = p.flags_bytes + static_cast<std::size_t>(p.grid) * tile_bytes;
  return p;
}

}  // namespace kiln::gemm

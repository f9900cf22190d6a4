// The instantiated configurations of gemm_wgmma (Hopper wgmma fed by TMA), as data shared by the
// kernel instantiations (gemm_wgmma.cu) and the ParamSpace (wgmma_params.cpp).  Each row is built
// for bf16 and f16 with K-major operands, the rows kWgmmaTf32Rows also for TF32 (f32 inputs),
// kWgmma3xTf32Rows also for 3xTF32, the rows kWgmmaMnRows also for bf16 and f16 with a
// column-major A and / or a row-major B (MN-major): 9 kernel rows (row 6 shares row 0's kernel,
// the split-k rows, `splits` > 1, rows 0 and 13's: `splits` and `group` are launch arguments),
// plus the mid-m 128 x 192 row 32 and rows 33-36 (128 x 160, 128 x 224, 128 x 96, 256 x 160,
// K-major only): 16 + 3 + 2 + 2 x 2 x 3 + 2 x 2 + 4 x 2 = 45 kernels in gemm_wgmma.cu; the swapped small-m rows (`swap`,
// two kernel rows) 2 x 2 x 2 = 8 more in gemm_wgmma_swap.cu (compiled for sm_90a only).
#pragma once

namespace kiln::gemm {

struct WgmmaConfig {
  int bm, bn, bk;  // block tile; bk is 64 16-bit elements: one 128-byte swizzled row per tile row
                   // (the TF32 build of a row reads the same 128 bytes: 32 f32 elements)
  int stages;      // TMA -> wgmma pipeline depth (shared-memory buffers of the A and B tiles)
  int consumers;   // consumer warpgroups
  int pingpong;    // 0: cooperative, the consumers split each BM x BN tile by rows (BM / consumers
                   // each, a multiple of 64); 1: ping-pong, each consumer computes whole tiles,
                   // taking turns, so one stores its tile while the other multiplies
  int cluster;     // blocks per thread-block cluster (1 or 2): a cluster of 2 computes two tiles
                   // one above the other and multicasts each half of their common B tile to both
  int group;       // tile raster: the scheduler walks `group` rows of work units (a cluster's
                   // tiles) down before moving right (a launch argument: rows that differ only
                   // in `group` share one kernel)
  int splits;      // split k: each (tile, slice) is a work unit that walks k / splits of k and
                   // stores its f32 partial tile into the workspace; a second kernel adds the
                   // slices in order (deterministic) and applies alpha and beta.  1: no split,
                   // C written by the gemm kernel itself.  A launch argument too.
  int swap;        // 1: the swapped small-m kernel (gemm_wgmma_swap.cuh): C^T = W * X^T with W = B on
                   // wgmma's M (64 rows of n per consumer warpgroup, bn = 64 * consumers) and X = A
                   // on wgmma's N (bm = 16 or 64 rows of m); no persistence, no cluster, no raster
                   // (`group` unused); `splits` as above.  0: gemm_wgmma.cuh.
};

// Shapes of the public Hopper write-ups (128 x 256 and 128 x 128 tiles with two consumer
// warpgroups, 4-6 stages); 256 x 128 gives each consumer two 64-row wgmmas per k step.  Every
// consumer holds at most 128 f32 accumulators per thread (64 x 256 or 128 x 128).
// Measured on the H200 (kiln tune, bf16 tb=1 C f32, 2026-11-24; README has every row and C type):
// 128 x 256 is the fastest row, 4096^3 181 us (cuBLASLt's best 176 us), 8192^3 1488 us (1389).
// The cluster row ran 1.7-1.9x slower until its stage releases stopped being cluster-scope fences
// (hopper_ptx.cuh); since then it is as fast as row 0, not faster.  Ping-pong rows with a cluster
// (64 x 256, 128 x 128) were built and measured slower than row 0 (third session), and dropped.
inline constexpr WgmmaConfig kWgmmaConfigs[] = {
    // bm   bn   bk  stages consumers pingpong cluster group splits swap
    {128, 256, 64, 4, 2, 0, 1, 8, 1, 0},
    {128, 128, 64, 5, 2, 0, 1, 8, 1, 0},
    {256, 128, 64, 4, 2, 0, 1, 8, 1, 0},
    {128, 128, 64, 6, 2, 1, 1, 8, 1, 0},
    {64, 256, 64, 4, 2, 1, 1, 8, 1, 0},
    {128, 256, 64, 4, 2, 0, 2, 4, 1, 0},
    {128, 256, 64, 4, 2, 0, 1, 16, 1, 0},  // row 0's kernel (no extra build), rastered 16 tile rows deep
    // Split k (few output tiles, deep k: small-m X * W^T): row 0's kernel (128 x 256 cooperative)
    // and row 13's.  Slice counts 2 to 16: wgmma_default_for picks the one that best fills the
    // SMs (wgmma_params.cpp).
    {128, 256, 64, 4, 2, 0, 1, 8, 2, 0},
    {128, 256, 64, 4, 2, 0, 1, 8, 3, 0},
    {128, 256, 64, 4, 2, 0, 1, 8, 4, 0},
    {128, 256, 64, 4, 2, 0, 1, 8, 6, 0},
    {128, 256, 64, 4, 2, 0, 1, 8, 8, 0},
    {128, 256, 64, 4, 2, 0, 1, 8, 16, 0},
    // 64 x 256 with one consumer warpgroup and 5 stages (217 KiB): for small m, where the time is
    // DRAM streaming B and a block's rate is the B bytes it has in flight (measured on the H200,
    // fourth session: 4 stages of 32 KiB of B streamed about 27 GB/s per SM, 5 of 16 KiB about
    // 20): 160 KiB where rows 0 and 4 have 128.  A 64-row tile wastes no tensor work on m <= 64.
    {64, 256, 64, 5, 1, 0, 1, 8, 1, 0},
    {64, 256, 64, 5, 1, 0, 1, 8, 2, 0},
    {64, 256, 64, 5, 1, 0, 1, 8, 3, 0},
    {64, 256, 64, 5, 1, 0, 1, 8, 4, 0},
    {64, 256, 64, 5, 1, 0, 1, 8, 6, 0},
    {64, 256, 64, 5, 1, 0, 1, 8, 8, 0},
    {64, 256, 64, 5, 1, 0, 1, 8, 16, 0},
    // Swapped (fifth session): C^T = W * X^T for small m, what cuBLASLt runs there (nvjet ..._64x8_
    // ..._splitK_TNT, plugin README).  W's rows fill wgmma's M, X's few rows its N (16 or 64), so
    // no tensor work is wasted on rows past m and a stage is mostly W: 10 stages of 8 KiB of W and
    // 2 KiB of X (101 KiB, two blocks per SM) for m <= 16; for m <= 64 two consumers share one
    // 64-row X tile (9 stages of 16 KiB of W and 8 KiB of X, 217 KiB).  Either way about 160
    // (144) KiB of W in flight per SM, what streaming B at the DRAM rate took in the fourth
    // session's fit.  Slices 1-8 (launch arguments).
    {16, 64, 64, 10, 1, 0, 1, 8, 1, 1},
    {16, 64, 64, 10, 1, 0, 1, 8, 2, 1},
    {16, 64, 64, 10, 1, 0, 1, 8, 3, 1},
    {16, 64, 64, 10, 1, 0, 1, 8, 4, 1},
    {16, 64, 64, 10, 1, 0, 1, 8, 6, 1},
    {16, 64, 64, 10, 1, 0, 1, 8, 8, 1},
    {64, 128, 64, 9, 2, 0, 1, 8, 1, 1},
    {64, 128, 64, 9, 2, 0, 1, 8, 2, 1},
    {64, 128, 64, 9, 2, 0, 1, 8, 3, 1},
    {64, 128, 64, 9, 2, 0, 1, 8, 4, 1},
    {64, 128, 64, 9, 2, 0, 1, 8, 6, 1},
    {64, 128, 64, 9, 2, 0, 1, 8, 8, 1},
    // Mid m (eighth session, row 32): 128 x 192, 4 stages (40 KiB each; 5 do not fit with the
    // epilogue buffers), cooperative.  Nsight Compute on the H200: at m = 128..1000 cuBLASLt runs
    // one wave of wide tiles sized to the problem (nvjet 128x176 at 700 x 8192 x 4096, 128x320 at
    // 1000 x 5120 x 5120, tensor pipe 86-87 % busy) where row 1's 128 x 128 runs 2.4-2.9 waves at
    // 66-78 %; a 192-wide tile is the widest that leaves 128 x 256's tile counts (docs/performance.md).
    {128, 192, 64, 4, 2, 0, 1, 8, 1, 0},
    // More mid-m widths (sixteenth session, rows 33-35): 160, 224 and 96, so that for most m and
    // n some width fills whole waves (nvjet picks its width per problem the same way: 176, 320, 96
    // above).  Over m in 128-2048 and the LLM n, the best of 128 / 192 / 256 leaves 17 % of the
    // waves' tile area idle or padded (geomean), the best of all six widths 11 %.  Stages: as many
    // as fit beside the epilogue buffers.  K-major B only (an MN-major tile is whole 64-column boxes).
    {128, 160, 64, 5, 2, 0, 1, 8, 1, 0},
    {128, 224, 64, 4, 2, 0, 1, 8, 1, 0},
    {128, 96, 64, 6, 2, 0, 1, 8, 1, 0},
    // 256 x 160 (row 36): one wave where m is 900-1300 and n 4096-5120 (1000 x 5120: 4 x 32 = 128
    // tiles; nvjet runs 128 x 320 there), each consumer two 64 x 160 wgmmas (160 accumulators per
    // thread); 3 stages of 52 KiB.
    {256, 160, 64, 3, 2, 0, 1, 8, 1, 0},
};
inline constexpr int kWgmmaConfigCount = static_cast<int>(sizeof(kWgmmaConfigs) / sizeof(kWgmmaConfigs[0]));
inline constexpr int kWgmmaDefault = 0;  // 128 x 256

// Whether two rows run the same kernel (they differ only in launch arguments: group, splits).
constexpr bool wgmma_same_kernel(const WgmmaConfig& a, const WgmmaConfig& b) {
  return a.bm == b.bm && a.bn == b.bn && a.bk == b.bk && a.stages == b.stages && a.consumers == b.consumers &&
         a.pingpong == b.pingpong && a.cluster == b.cluster && a.swap == b.swap;
}
// The first row with row `index`'s kernel: the row whose builds (input types, layouts) it shares.
constexpr int wgmma_kernel_row(int index) {
  for (int i = 0; i < index; ++i)
    if (wgmma_same_kernel(kWgmmaConfigs[i], kWgmmaConfigs[index])) return i;
  return index;
}

// The rows also built for TF32 (allow_tf32 = 1, f32 A and B, wgmma m64nNk8 .tf32): the two
// defaults (wgmma_default_for picks rows 0 and 1) and the ping-pong 128 x 128.  Kept short: every
// row is one more kernel for CI's nvcc.  Row 0 at 8192^3: 1.00x cuBLASLt TF32 (README).  Each
// predicate below also holds for the rows sharing a listed row's kernel (wgmma_kernel_row: row 6
// and the split rows of row 0), which cost no extra build.
inline constexpr int kWgmmaTf32Rows[] = {0, 1, 3};
constexpr bool wgmma_tf32_row(int index) {
  for (int r : kWgmmaTf32Rows)
    if (r == wgmma_kernel_row(index)) return true;
  return false;
}

// The rows also built for 3xTF32 (allow_tf32 = 2, f32 A and B split into TF32 hi and lo parts by a
// prepass, wgmma_3xtf32.hpp): the two defaults only (wgmma_default_for picks rows 0 and 1), and
// not split (the workspace holds the split operands).
inline constexpr int kWgmma3xTf32Rows[] = {0, 1};
constexpr bool wgmma_3xtf32_row(int index) {
  if (kWgmmaConfigs[index].splits != 1) return false;
  for (int r : kWgmma3xTf32Rows)
    if (r == wgmma_kernel_row(index)) return true;
  return false;
}

// The rows also built for bf16 and f16 with MN-major operands (A column-major, ta = 1, and / or B
// row-major, tb = 0: three layouts): the two defaults (wgmma_default_for picks rows 0 and 1).
// Cooperative and without a cluster (the B multicast is built for K-major tiles).  Row 0 with a
// row-major B: 0.99x cuBLASLt at bf16 4096^3 (README).
inline constexpr int kWgmmaMnRows[] = {0, 1};
constexpr bool wgmma_mn_row(int index) {
  for (int r : kWgmmaMnRows)
    if (r == wgmma_kernel_row(index)) return true;
  return false;
}

// The rows also built for a row-major B with a row-major A (tb = 0, ta = 0: X * W with W stored
// k x n) only: the one-consumer 64 x 256 row, the small-m kernel, and the mid-m 128 x 192 row
// (2 kernels each, bf16 and f16).
inline constexpr int kWgmmaMnBRows[] = {13, 32};
// Whether row `index` is built for 16-bit operands in this layout (a_mn: A column-major, b_mn: B
// row-major).
constexpr bool wgmma_layout_row(int index, bool a_mn, bool b_mn) {
  // The swapped rows read W = B either way (K-major, or MN-major through wgmma's transpose of its
  // A operand) and X = A K-major only: X's m is wgmma's N, 16 rows here, and an MN-major tile
  // comes in 64-element boxes.
  if (kWgmmaConfigs[index].swap) return !a_mn;
  if (!a_mn && !b_mn) return true;
  if (wgmma_mn_row(index)) return true;
  if (a_mn) return false;
  for (int r : kWgmmaMnBRows)
    if (r == wgmma_kernel_row(index)) return true;
  return false;
}

// The epilogue stages C through shared memory in chunks of 64 rows x 128 bytes (the TMA store's
// box), two buffers per consumer warpgroup.
inline constexpr int kWgmmaEpilogueChunkBytes = 64 * 128;
// Dynamic shared memory of one block: `stages` A and B tiles of 16-bit elements, the epilogue
// buffers, plus 1 KiB so the kernel can align the first tile to 1024 bytes (what 128-byte
// swizzling needs).
// The swapped kernel stores from registers: no epilogue buffers.
constexpr int wgmma_smem_bytes(const WgmmaConfig& c) {
  return c.stages * (c.bm + c.bn) * c.bk * 2 + (c.swap ? 0 : c.consumers * 2 * kWgmmaEpilogueChunkBytes) + 1024;
}
// The swapped kernel's producer is one warp (its consumers need few registers: no setmaxnreg).
constexpr int wgmma_threads(const WgmmaConfig& c) { return 128 * c.consumers + (c.swap ? 32 : 128); }

// The swapped rows are offered (ParamSpace, default_config_for) only for m up to this: past it X
// takes several tiles of 64 and each re-reads all of W.
inline constexpr long long kWgmmaSwapMaxM = 256;
constexpr bool wgmma_swap_fits(int index, long long m) { return !kWgmmaConfigs[index].swap || m <= kWgmmaSwapMaxM; }

}  // namespace kiln::gemm

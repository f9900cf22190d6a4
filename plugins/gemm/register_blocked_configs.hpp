// The instantiated configurations of gemm_register_blocked, as data shared by the kernel
// instantiations (gemm_register_blocked.cu) and the variant's ParamSpace (gemm_params.cpp).
// Adding a row here instantiates one more kernel; keep the list short (CI compiles it on 2 cores).
#pragma once

namespace kiln::gemm {

struct RegisterBlockedConfig {
  int bm, bn, bk;   // block tile: BM x BN outputs, BK deep k-step
  int tm, tn;       // per-thread register tile (multiples of 4: read as float4 from smem)
  int threads;      // (BM / TM) * (BN / TN)
  int vec;          // global load/store width: 4 (float4, needs 16-byte alignment) or 1
  int stages;       // shared-memory buffers
  int cp_async;     // 0: register-staged double buffering (stages = 2); 1: cp.async pipeline with
                    // `stages` buffers (sm_80+; dynamic shared memory, opted in above 48 KiB)
};

// Curated, not a cartesian product.  128x128x8 with 8x8 per thread is the classic large-problem
// SIMT SGEMM shape; 256x128 / 128x256 halve the global traffic per FLOP; narrower and 64x64 tiles
// give small and skinny problems enough blocks; vec=1 rows serve operands that are not 16-byte
// aligned.  Two cp.async rows: 128x256x16 (41.2 TFLOP/s at 4096^3 on the H200, next to 42.9 for
// the register-staged 128x256x8) and 128x128x16 vec=1, the fastest unaligned row (33.1 vs 27.7).
// Other cp.async rows measured slower than their register-staged twins and were dropped (README).
inline constexpr RegisterBlockedConfig kRegisterBlockedConfigs[] = {
    // bm   bn   bk  tm  tn  threads vec stages cp_async
    {128, 128, 8, 8, 8, 256, 4, 2, 0},
    {128, 64, 8, 8, 4, 256, 4, 2, 0},
    {64, 128, 8, 4, 8, 256, 4, 2, 0},
    {128, 64, 16, 8, 4, 256, 4, 2, 0},
    {64, 64, 8, 8, 4, 128, 4, 2, 0},
    {64, 64, 16, 4, 4, 256, 4, 2, 0},
    {32, 64, 8, 4, 4, 128, 4, 2, 0},
    {256, 128, 8, 8, 8, 512, 4, 2, 0},
    {128, 256, 8, 8, 8, 512, 4, 2, 0},
    {128, 64, 8, 8, 4, 256, 1, 2, 0},
    {64, 64, 8, 4, 4, 256, 1, 2, 0},
    {128, 256, 16, 8, 8, 512, 4, 3, 1},
    {128, 128, 16, 8, 8, 256, 1, 3, 1},
    // Skinny n (n <= 32, e.g. 7680 x 24 x 2560): a 64-wide tile wastes half or more of its FMAs;
    // 32-wide tiles (8 thread columns of 4) do not, and split k gives the few tiles enough blocks.
    {128, 32, 16, 8, 4, 128, 4, 2, 0},
    {256, 32, 16, 8, 4, 256, 4, 2, 0},
};
inline constexpr int kRegisterBlockedConfigCount =
    static_cast<int>(sizeof(kRegisterBlockedConfigs) / sizeof(kRegisterBlockedConfigs[0]));
// The default: 128x256x8, the fastest row measured at 4096^3 on the H200 (README, "Measured").
inline constexpr int kRegisterBlockedDefault = 8;
static_assert(kRegisterBlockedConfigs[kRegisterBlockedDefault].bn == 256, "the default row is 128x256x8");

// Rows also instantiated for gemm_split_k (one grid row per k slice): tiles of at most 128 x 128
// (split k is for problems with few output tiles), register-staged.
constexpr bool split_k_offered(const RegisterBlockedConfig& c) { return c.bm * c.bn <= 128 * 128 && c.cp_async == 0; }

// Shared memory of one block: `stages` A tiles (stored transposed, rows padded by 4 floats against
// bank conflicts on the transposing store) and B tiles.  Static for cp_async = 0 (at most 48 KiB),
// dynamic for cp_async = 1.
constexpr int register_blocked_smem_bytes(const RegisterBlockedConfig& c) {
  return c.stages * c.bk * ((c.bm + 4) + c.bn) * 4;
}

}  // namespace kiln::gemm

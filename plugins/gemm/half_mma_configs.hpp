// The instantiated configurations of gemm_half_mma (f16 / bf16 tensor cores, mma.sync m16n8k16),
// as data shared by the kernel instantiations (gemm_half_mma.cu) and the ParamSpace.  Each row is
// built for both input types and both B layouts: 3 rows, 12 kernels.
#pragma once

namespace kiln::gemm {

struct HalfMmaConfig {
  int bm, bn, bk;  // block tile
  int wm, wn;      // warp tile (multiples of 16 x 8)
  int threads;     // 32 * (BM / WM) * (BN / WN)
  int stages;      // cp.async pipeline depth
};

// The TF32 kernel's measured shapes (tf32_mma_configs.hpp) with a k step of 32 halves (64 bytes).
// Measured on the H200 (kiln tune, bf16 4096^3, C bf16, 2026-11-24): 128 x 128 457 us (301
// TFLOP/s), 128 x 256 515 us, 64 x 64 805 us; cuBLASLt 172 us (docs/performance.md).

inline constexpr HalfMmaConfig kHalfMmaConfigs[] = {
    // bm   bn   bk  wm  wn  threads stages
    {128, 256, 32, 64, 64, 256, 3},
    {128, 128, 32, 64, 32, 256, 3},
    {64, 64, 32, 32, 32, 128, 3},
};
inline constexpr int kHalfMmaConfigCount = static_cast<int>(sizeof(kHalfMmaConfigs) / sizeof(kHalfMmaConfigs[0]));
inline constexpr int kHalfMmaDefault = 1;  // 128 x 128, the fastest row at 4096^3

// Dynamic shared memory of one block: `stages` copies of the A tile (BM rows of BK + 8 halves)
// and the B tile (BK rows of BN + 8 halves, or BN rows of BK + 8 for a column-major B); the
// paddings keep rows 16-byte aligned and the fragment loads free of bank conflicts.
constexpr int half_mma_smem_bytes(const HalfMmaConfig& c, bool b_col) {
  return c.stages * (c.bm * (c.bk + 8) + (b_col ? c.bn * (c.bk + 8) : c.bk * (c.bn + 8))) * 2;
}

}  // namespace kiln::gemm

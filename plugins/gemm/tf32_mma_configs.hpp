// The instantiated configurations of gemm_tf32_mma (TF32 tensor cores, mma.sync m16n8k8), as
// data shared by the kernel instantiations (gemm_tf32_mma.cu) and the ParamSpace.
#pragma once

namespace kiln::gemm {

struct Tf32MmaConfig {
  int bm, bn, bk;   // block tile
  int wm, wn;       // warp tile (multiples of 16 x 8)
  int threads;      // 32 * (BM / WM) * (BN / WN)
  int stages;       // cp.async pipeline depth
};

// Rows 3 and 4 (64 x 64 warp tiles, one block per SM's worth of registers) measured fastest at
// 4096^3 on the H200; the others serve smaller problems.
inline constexpr Tf32MmaConfig kTf32MmaConfigs[] = {
    // bm   bn   bk  wm  wn  threads stages
    {128, 128, 32, 64, 32, 256, 3},
    {128, 128, 16, 64, 32, 256, 4},
    {64, 64, 32, 32, 32, 128, 3},
    {128, 256, 32, 64, 64, 256, 3},
    {128, 128, 32, 64, 64, 128, 3},
};
inline constexpr int kTf32MmaConfigCount =
    static_cast<int>(sizeof(kTf32MmaConfigs) / sizeof(kTf32MmaConfigs[0]));
inline constexpr int kTf32MmaDefault = 3;  // 128 x 256 x 32, 64 x 64 warp tiles

// Dynamic shared memory of one block: `stages` copies of the A tile (BM rows of BK + 4 floats)
// and the B tile (BK rows of BN + 8 floats); the paddings make fragment loads conflict-free.
constexpr int tf32_mma_smem_bytes(const Tf32MmaConfig& c) {
  return c.stages * (c.bm * (c.bk + 4) + c.bk * (c.bn + 8)) * 4;
}

}  // namespace kiln::gemm

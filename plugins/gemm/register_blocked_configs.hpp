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
  int stages;       // shared-memory buffers (2: register-staged double buffering)
};

// Curated, not a cartesian product.  Unmeasured until tuned: the picks follow what is known to
// work for SIMT SGEMM on Ampere/Hopper (128x128x8 with 8x8 per thread as the large-problem
// workhorse; narrower and 64x64 tiles give small and skinny problems enough blocks; 256x128 /
// 128x256 halve the global traffic per FLOP for very large problems; vec=1 rows serve operands
// that are not 16-byte aligned).
inline constexpr RegisterBlockedConfig kRegisterBlockedConfigs[] = {
    // bm   bn   bk  tm  tn  threads vec stages
    {128, 128, 8, 8, 8, 256, 4, 2},
    {128, 64, 8, 8, 4, 256, 4, 2},
    {64, 128, 8, 4, 8, 256, 4, 2},
    {128, 64, 16, 8, 4, 256, 4, 2},
    {64, 64, 8, 8, 4, 128, 4, 2},
    {64, 64, 16, 4, 4, 256, 4, 2},
    {32, 64, 8, 4, 4, 128, 4, 2},
    {256, 128, 8, 8, 8, 512, 4, 2},
    {128, 256, 8, 8, 8, 512, 4, 2},
    {128, 64, 8, 8, 4, 256, 1, 2},
    {64, 64, 8, 4, 4, 256, 1, 2},
};
inline constexpr int kRegisterBlockedConfigCount =
    static_cast<int>(sizeof(kRegisterBlockedConfigs) / sizeof(kRegisterBlockedConfigs[0]));
// The default on sm_80 and newer (and elsewhere, for want of measurements): the classic 128x128x8.
inline constexpr int kRegisterBlockedDefault = 0;

// Static shared memory of one block: double-buffered A tile (stored transposed, rows padded by 4
// floats against bank conflicts on the transposing store) and B tile.
constexpr int register_blocked_smem_bytes(const RegisterBlockedConfig& c) {
  return c.stages * c.bk * ((c.bm + 4) + c.bn) * 4;
}

}  // namespace kiln::gemm

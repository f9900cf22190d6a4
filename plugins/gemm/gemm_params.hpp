// Tuning parameters of the gemm variants, as data: each variant's ParamSpace, its default
// config, and for the template-instantiated kernels the mapping between a Config and its row in
// the compile-time list (register_blocked_configs.hpp, tf32_mma_configs.hpp).
//
//   kiln::ParamSpace s = kiln::gemm::register_blocked_space();   // only the instantiated rows
//   int row = kiln::gemm::register_blocked_index(config);         // -1: not instantiated
#pragma once
#include "kiln/device.hpp"
#include "kiln/param_space.hpp"

namespace kiln::gemm {

// Device limits, with the CUDA defaults when a DeviceInfo leaves them unknown (0).
int max_threads_per_block(const DeviceInfo& d);
int smem_per_block(const DeviceInfo& d);        // without opting in
int smem_per_block_optin(const DeviceInfo& d);  // largest a kernel may opt in to

ParamSpace naive_space();  // block_x, block_y
Config naive_default(const DeviceInfo& d);

ParamSpace row_per_block_space();  // block
Config row_per_block_default(const DeviceInfo& d);

ParamSpace tiled_space();  // tile in {8, 16, 32}
Config tiled_default(const DeviceInfo& d);

ParamSpace tiled_coalesced_space();  // tile in {16, 32}
Config tiled_coalesced_default(const DeviceInfo& d);

ParamSpace tiled_kahan_space();  // tile in {16, 32}
Config tiled_kahan_default(const DeviceInfo& d);

// BM, BN, BK, TM, TN, threads, vec, stages; restricted to kRegisterBlockedConfigs.
ParamSpace register_blocked_space();
Config register_blocked_config(int index);
int register_blocked_index(const Config& c);
Config register_blocked_default(const DeviceInfo& d);
// The default for one problem: vec=1 rows for operands that are not 16-byte aligned, and smaller
// tiles when the problem would give the SMs too few blocks.
Config register_blocked_default_for(const DeviceInfo& d, const Problem& p);

// BM, BN, BK, WM, WN, threads, stages; restricted to kTf32MmaConfigs.
ParamSpace tf32_mma_space();
Config tf32_mma_config(int index);
int tf32_mma_index(const Config& c);
Config tf32_mma_default(const DeviceInfo& d);
Config tf32_mma_default_for(const DeviceInfo& d, const Problem& p);  // 64 x 64 tiles for small problems

}  // namespace kiln::gemm

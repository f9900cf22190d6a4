// Parameters of gemm_half_mma: the rows of kHalfMmaConfigs as a ParamSpace, and the defaults.
#pragma once
#include "kiln/param_space.hpp"

namespace kiln::gemm {

// BM, BN, BK, WM, WN, threads, stages; restricted to kHalfMmaConfigs.
ParamSpace half_mma_space();
Config half_mma_config(int index);
int half_mma_index(const Config& c);  // -1 when not instantiated
Config half_mma_default(const DeviceInfo& d);
// 128 x 256 tiles while they give every SM a block, else 128 x 128, else 64 x 64 (unmeasured rule,
// the TF32 kernel's).
Config half_mma_default_for(const DeviceInfo& d, const Problem& p);

}  // namespace kiln::gemm

// Parameters of gemm_half_mma: the rows of kHalfMmaConfigs as a ParamSpace, and the defaults.
#pragma once
#include "kiln/param_space.hpp"

namespace kiln::gemm {

// BM, BN, BK, WM, WN, threads, stages; restricted to kHalfMmaConfigs.
ParamSpace half_mma_space();
Config half_mma_config(int index);
int half_mma_index(const Config& c);  // -1 when not instantiated
Config half_mma_default(const DeviceInfo& d);
// 128 x 128 tiles while they give every SM a block (the fastest row at bf16 4096^3 on the H200),
// else 64 x 64 (an unmeasured size rule).
Config half_mma_default_for(const DeviceInfo& d, const Problem& p);

}  // namespace kiln::gemm

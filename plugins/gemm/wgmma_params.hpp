// Parameters of gemm_wgmma: the rows of kWgmmaConfigs as a ParamSpace, and the defaults.
#pragma once
#include "kiln/device.hpp"
#include "kiln/param_space.hpp"
#include "kiln/problem.hpp"

namespace kiln::gemm {

// BM, BN, BK, stages, consumers, pingpong, cluster, group; restricted to kWgmmaConfigs, and for
// f32 (TF32) problems to kWgmmaTf32Rows, for a column-major A or row-major B to kWgmmaMnRows.
ParamSpace wgmma_space();
Config wgmma_config(int index);
int wgmma_index(const Config& c);  // -1 when not instantiated
Config wgmma_default(const DeviceInfo& d);
// 128 x 256 tiles while they give every SM a tile, else 128 x 128 (an unmeasured size rule).
Config wgmma_default_for(const DeviceInfo& d, const Problem& p);

}  // namespace kiln::gemm

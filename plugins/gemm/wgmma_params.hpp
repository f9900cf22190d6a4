// Parameters of gemm_wgmma: the rows of kWgmmaConfigs as a ParamSpace, and the defaults.
#pragma once
#include "kiln/device.hpp"
#include "kiln/param_space.hpp"
#include "kiln/problem.hpp"

namespace kiln::gemm {

// BM, BN, BK, stages, consumers, pingpong, cluster, group, splits; restricted to kWgmmaConfigs,
// and for f32 (TF32) problems to kWgmmaTf32Rows, for a column-major A or row-major B to
// kWgmmaMnRows, split rows to problems with few tiles (wgmma_split_useful).
ParamSpace wgmma_space();
Config wgmma_config(int index);
int wgmma_index(const Config& c);  // -1 when not instantiated; no `splits` reads as 1
// Whether row `index` is worth its split: unsplit rows always; a split row while its unsplit tiles
// fill less than two waves of the device's SMs.
bool wgmma_split_useful(const DeviceInfo& d, const Problem& p, int index);
Config wgmma_default(const DeviceInfo& d);
// A rough time model of row `index` on `p` (microseconds, H200-like rates): waves of work units,
// each k block bound by tensor-core or DRAM time, plus the split-k reduction; for a swapped row
// W's bytes at the rate of the blocks streaming it.  Used to rank rows (swapped rows only among
// themselves: the two models are fitted apart).
double wgmma_estimate_us(const DeviceInfo& d, const Problem& p, int index);
// 3xTF32: 128 x 256 tiles while they give every SM a tile, else 128 x 128.  Up to 16 rows of a
// row-major A (16-bit): the swapped row (16-row X tile) whose slice count has the smallest
// wgmma_estimate_us.  Otherwise the row (tile and splits) with the smallest wgmma_estimate_us
// among the unswapped rows without a cluster (0-4, 13, 32) and their split rows.
Config wgmma_default_for(const DeviceInfo& d, const Problem& p);

}  // namespace kiln::gemm

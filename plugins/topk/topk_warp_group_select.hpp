// topk_warp_select's row-per-block tiles (row_warps > 1; kernel in topk_warp_group_select.cuh,
// launch in topk_warp_group_select.cu, a translation unit of their own so that nvcc builds them
// beside the row-per-warp tiles).
#pragma once
#include <cuda_runtime.h>

#include "topk_variants.hpp"
#include "topk_warp_select_params.hpp"

namespace kiln::topk {

// Launches `tile` (an element of kWarpSelectTiles) on the rows of l, lists ordered by buckets when
// bucket_sort is 1; cudaErrorInvalidValue for a row-per-warp tile (row_warps = 1), which
// topk_warp_select.cu launches itself.
cudaError_t launch_warp_group_select(const TopkLaunch& l, const WarpTile& tile, int cap, int bucket_sort,
                                     cudaStream_t stream);

}  // namespace kiln::topk

// TMA tensor maps for the wgmma kernels (gemm_wgmma.cu defines it; gemm_wgmma_swap.cu uses it too).
// CUDA code only (CUtensorMap comes from cuda.h).
#pragma once
#include <cuda.h>

#include <cstdint>

#include "kiln/errors.hpp"

namespace kiln::gemm {

// A matrix (rows x cols, row stride `ld` elements, batch stride `batch_stride`) as a tensor map
// with 128-byte swizzled boxes of 128 bytes (the swizzle span) by `box_rows`.  Batched matrices
// get a third dimension (`batched` says whether it did); a broadcast (stride 0) or single one
// stays 2-D.  The driver's encoder must be available (wgmma_tensor_maps_available).
Status wgmma_encode_matrix(CUtensorMap& map, const void* base, CUtensorMapDataType type, int elem_bytes, int rows,
                           int cols, std::int64_t ld, int batch, std::int64_t batch_stride, int box_rows, bool& batched);

}  // namespace kiln::gemm

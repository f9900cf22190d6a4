// Host entry of the swapped small-m wgmma gemm (gemm_wgmma_swap.cu, sm_90a only): the rows of
// kWgmmaConfigs with `swap` = 1.  Plain C++; launch_wgmma dispatches those rows here.
#pragma once
#include "kiln/errors.hpp"
#include "wgmma_launch.hpp"

namespace kiln::gemm {

// Queues C = alpha * A * B + beta * C as C^T = W * X^T (W = B, X = A; gemm_wgmma_swap.cuh) with
// config row `config_index` (a swap row), and with split k the reduction.  16-bit inputs, A
// row-major (K-major), B either layout.
Status launch_wgmma_swap(const WgmmaGemmArgs& g, int config_index, void* stream);

}  // namespace kiln::gemm

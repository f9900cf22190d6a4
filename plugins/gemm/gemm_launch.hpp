// Host entry points of the gemm kernels, implemented in the .cu files.  Plain C++ (no CUDA
// headers), so the variants that call them compile with the host compiler:
//
//   kiln::gemm::GemmArgs g{a, b, c, m, n, k, lda, ldb, ldc, /*alpha=*/1.f, /*beta=*/0.f};
//   kiln::Status s = kiln::gemm::launch_tiled(g, /*tile=*/32, stream.handle());
//
// Every launcher queues its kernel on `stream` (a cudaStream_t), checks cudaGetLastError() and
// returns a failed Status (ErrorKind::cuda) on error.  m == 0 or n == 0 launches nothing.
#pragma once
#include <cstdint>

#include "kiln/errors.hpp"

namespace kiln::gemm {

// C = alpha * A * B + beta * C on row-major matrices with row strides in elements; A is m x k,
// B is k x n, C is m x n.  When beta == 0 C is never read.
//
// Split k (launch_register_blocked, rows with split_k_offered()): with k_chunk > 0 the launch has
// one grid row (blockIdx.y) per k slice, slice s multiplying columns [s * k_chunk, (s + 1) *
// k_chunk) of A by those rows of B into c + s * split_stride.
struct GemmArgs {
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
  int m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  float alpha = 1.0f, beta = 0.0f;
  int k_chunk = 0;
  std::int64_t split_stride = 0;
};

Status launch_naive(const GemmArgs& g, int block_x, int block_y, void* stream);
Status launch_row_per_block(const GemmArgs& g, int block, void* stream);
Status launch_tiled(const GemmArgs& g, int tile, void* stream);
Status launch_tiled_coalesced(const GemmArgs& g, int tile, void* stream);
Status launch_tiled_kahan(const GemmArgs& g, int tile, void* stream);
// `config_index` indexes kRegisterBlockedConfigs (register_blocked_configs.hpp).  With
// g.k_chunk > 0, one k slice per grid row (see GemmArgs).
Status launch_register_blocked(const GemmArgs& g, int config_index, void* stream);
// C = alpha * (sum of the `splits` m x n slices at partials + s * stride, rows of `ld` floats, in
// slice order) + beta * C: the second pass of gemm_split_k.
Status launch_split_k_reduce(const float* partials, std::int64_t ld, std::int64_t stride, int splits,
                             const GemmArgs& g, void* stream);
// `config_index` indexes kTf32MmaConfigs (tf32_mma_configs.hpp).
Status launch_tf32_mma(const GemmArgs& g, int config_index, void* stream);
// 3xTF32 (fp32-accurate) on the same kernels and configs as launch_tf32_mma.
Status launch_3xtf32_mma(const GemmArgs& g, int config_index, void* stream);

}  // namespace kiln::gemm

// Host entry point of the f16 / bf16 tensor-core gemm (gemm_half_mma.cu).  Plain C++ (no CUDA
// headers), so the variant that calls it compiles with the host compiler.
#pragma once
#include <cstdint>

#include "kiln/errors.hpp"

namespace kiln::gemm {

// C = alpha * A * B + beta * C for f16 or bf16 A and B (f32 accumulation), batched: entry i of
// each operand starts stride_* elements after entry i - 1 (0 broadcasts).  A is row-major with
// row stride lda; B row-major with row stride ldb, or (b_col) column-major with column stride
// ldb; C row-major with row stride ldc, f32 or (c_half) the input type.  Pointers, strides and
// batch strides must be 16-byte aligned in bytes.
struct HalfGemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  int m = 0, n = 0, k = 0, batch = 1;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  float alpha = 1.0f, beta = 0.0f;
  bool bf16 = true, b_col = false, c_half = false;
};
// `config_index` indexes kHalfMmaConfigs (half_mma_configs.hpp).
Status launch_half_mma(const HalfGemmArgs& g, int config_index, void* stream);

}  // namespace kiln::gemm

// Host entry points of the Hopper wgmma gemm (gemm_wgmma.cu, compiled for sm_90a only).  Plain
// C++ (no CUDA headers), so the variant that calls them compiles with the host compiler.
#pragma once
#include <cstdint>
#include <string>

#include "kiln/errors.hpp"

namespace kiln::gemm {

// C = alpha * A * B + beta * C for bf16 or f16 A and B, or f32 A and B read as TF32 (tf32; C f32),
// with f32 accumulation, batched: entry i of
// each operand starts stride_* elements after entry i - 1 (0 broadcasts A or B).  A is row-major
// (row stride lda), B column-major (column stride ldb): both K-major; or, for 16-bit types, A
// column-major (a_mn: column stride lda) and / or B row-major (b_mn: row stride ldb), MN-major.
// C is row-major (row stride
// ldc), f32 or (c_half) the input type.  Pointers, lda, ldb, ldc and nonzero batch strides must be
// 16-byte aligned in bytes (what TMA takes).  `sm_count` sizes the persistent grid.
struct WgmmaGemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  int m = 0, n = 0, k = 0, batch = 1;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  float alpha = 1.0f, beta = 0.0f;
  bool bf16 = true, c_half = false;
  bool tf32 = false;  // f32 A and B through the TF32 tensor cores (bf16 and c_half false)
  // 3xTF32 (with tf32): a and b hold the TF32 hi parts of A and B, a_lo and b_lo their lo parts,
  // laid out alike (lda, ldb, stride_a, stride_b; K-major): wgmma_3xtf32.hpp.
  bool split3 = false;
  const void* a_lo = nullptr;
  const void* b_lo = nullptr;
  bool a_mn = false;  // A column-major (ta = 1)
  bool b_mn = false;  // B row-major (tb = 0)
  int sm_count = 1;
  // Split k (wgmma_split_k.hpp; the slice count is the config's `splits`): the workspace of f32
  // partials, at least wgmma_split_plan(...).bytes, 16-byte aligned, when the plan splits.
  void* partials = nullptr;
};

// Whether the driver's cuTensorMapEncodeTiled could be resolved (through the runtime's
// cudaGetDriverEntryPointByVersion, so kiln needs no -lcuda); `why` says why not.  Resolves once
// per process; call it before the first launch (prepare() does) so launches never do.
bool wgmma_tensor_maps_available(std::string& why);

// Encodes the two tensor maps (host-only work in the driver library: no GPU call, no allocation)
// and queues the kernel.  `config_index` indexes kWgmmaConfigs (wgmma_configs.hpp).
Status launch_wgmma(const WgmmaGemmArgs& g, int config_index, void* stream);

}  // namespace kiln::gemm

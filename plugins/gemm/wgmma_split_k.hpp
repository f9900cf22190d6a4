// Split k for gemm_wgmma: how a config's `splits` cuts k into slices, the workspace of f32 partial
// tiles, and the reduction that turns them into C.  Plain C++ (no CUDA headers): the variant uses
// the plan for workspace_bytes() and supports(), gemm_wgmma.cu for the launch, and
// wgmma_split_reduce.cu launches the reduction.
//
// k is cut in whole k blocks (64 16-bit or 32 f32 elements, one pipeline stage): each slice gets
// kb_per_split = ceil(k_blocks / splits) of them, the last one the rest; slices that would be
// empty are dropped (`splits` is the effective count).  Partials: `splits * batch` matrices of
// m rows x ld floats (ld = n rounded up to 4: a 16-byte pitch, what TMA stores need), slice s of
// batch entry b at (s * batch + b) * m * ld floats.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kiln/errors.hpp"

namespace kiln::gemm {

struct WgmmaSplitPlan {
  int splits = 1;        // effective slices (1: no split, no workspace)
  int kb_per_split = 0;  // k blocks per slice
  std::int64_t ld = 0;   // floats between rows of a partial
  std::size_t bytes = 0;  // workspace
};

inline WgmmaSplitPlan wgmma_split_plan(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                                       int splits, int k_block) {
  WgmmaSplitPlan p;
  const std::int64_t k_blocks = (k + k_block - 1) / k_block;
  if (splits <= 1 || k_blocks <= 1) {
    p.kb_per_split = static_cast<int>(k_blocks);
    return p;
  }
  const std::int64_t per = (k_blocks + splits - 1) / splits;
  p.kb_per_split = static_cast<int>(per);
  p.splits = static_cast<int>((k_blocks + per - 1) / per);
  if (p.splits <= 1) {
    p.splits = 1;
    p.kb_per_split = static_cast<int>(k_blocks);
    return p;
  }
  p.ld = (n + 3) / 4 * 4;
  p.bytes = static_cast<std::size_t>(p.splits) * static_cast<std::size_t>(batch < 1 ? 1 : batch) *
            static_cast<std::size_t>(m) * static_cast<std::size_t>(p.ld) * 4;
  return p;
}

// The largest partials workspace a split config takes; larger problems are declined (they have
// enough output tiles not to need a split).
inline constexpr std::size_t kWgmmaSplitMaxWorkspace = std::size_t(1) << 30;

// C = alpha * (sum over the slices, in order) + beta * C (C not read when beta == 0).
struct WgmmaSplitReduceArgs {
  const float* partials = nullptr;
  std::int64_t ld = 0;
  int m = 0, n = 0, batch = 1, splits = 1;
  void* c = nullptr;
  std::int64_t ldc = 0, stride_c = 0;  // stride_c: elements between batch entries of C
  int c_type = 0;                      // 0: f32, 1: bf16, 2: f16
  float alpha = 1.0f, beta = 0.0f;
};

// Queues the reduction on `stream` (a cudaStream_t): one kernel, capture-safe.
Status launch_wgmma_split_reduce(const WgmmaSplitReduceArgs& r, void* stream);

}  // namespace kiln::gemm

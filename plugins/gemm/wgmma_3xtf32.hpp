// 3xTF32 on wgmma (allow_tf32 = 2): the operands' TF32 split, made by a prepass into the
// workspace, and the workspace's layout.  Plain C++ (no CUDA headers): the variant computes the
// layout for workspace_bytes() and supports(), tf32_split.cu launches the prepass.
//
// Each f32 operand x becomes hi = rna_tf32(x) and lo = rna_tf32(x - hi) (x - hi is exact in f32),
// both exact TF32 values, so the tensor cores read them unchanged whether they truncate or round
// the low 13 mantissa bits; hi + lo carries about 22 of x's 24 bits.  The main loop then runs
// A_lo * B_hi + A_hi * B_lo + A_hi * B_hi (A_lo * B_lo, about 2^-22 of the product, is left out)
// into one set of f32 accumulators.
//
// Workspace: A_hi, A_lo (each m rows x ld, K-major), B_hi, B_lo (each n rows x ld, K-major), ld =
// k rounded up to 4 floats (16 bytes, what TMA needs of a pitch), `batch` copies of each (a
// broadcast operand uses the first), every region 256-byte aligned.  The prepass reads any layout
// (row- or column-major, pitched, batched), so the kernel always sees K-major operands.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kiln/errors.hpp"

namespace kiln::gemm {

struct Wgmma3xTf32Workspace {
  std::int64_t ld = 0;                    // floats between rows of every region
  std::int64_t a_batch = 0, b_batch = 0;  // floats between batch copies of A (m * ld) and B (n * ld)
  std::size_t a_hi = 0, a_lo = 0, b_hi = 0, b_lo = 0;  // byte offsets of the four regions
  std::size_t bytes = 0;                  // total
};

inline Wgmma3xTf32Workspace wgmma_3xtf32_workspace(std::int64_t m, std::int64_t n, std::int64_t k,
                                                   std::int64_t batch) {
  auto round_up = [](std::size_t x, std::size_t to) { return (x + to - 1) / to * to; };
  Wgmma3xTf32Workspace w;
  w.ld = (k + 3) / 4 * 4;
  if (w.ld == 0) w.ld = 4;  // k = 0: nothing is read, but the tensor maps want a nonzero pitch
  w.a_batch = m * w.ld;
  w.b_batch = n * w.ld;
  const std::size_t copies = static_cast<std::size_t>(batch < 1 ? 1 : batch);
  const std::size_t a_bytes = round_up(copies * static_cast<std::size_t>(w.a_batch) * 4, 256);
  const std::size_t b_bytes = round_up(copies * static_cast<std::size_t>(w.b_batch) * 4, 256);
  w.a_hi = 0;
  w.a_lo = a_bytes;
  w.b_hi = 2 * a_bytes;
  w.b_lo = 2 * a_bytes + b_bytes;
  w.bytes = 2 * a_bytes + 2 * b_bytes;
  return w;
}

// The largest workspace the 3xTF32 path takes (8192^3 needs 1 GiB); larger problems are declined
// and fall through to gemm_3xtf32_mma, which needs none.
inline constexpr std::size_t kWgmma3xTf32MaxWorkspace = std::size_t(2) << 30;

// The deepest k the path takes.  The tensor cores' f32 accumulation loses precision with every
// add in a way that does not average out: the error against the f64 reference grew linearly with
// k on the H200, 2.4e-6 at k = 1000, 1.9e-5 at 8192, 7.7e-5 at 32768 and 1.5e-4 at 65536, past
// the 1e-4 tolerance.  Up to 16384 (about 4e-5) it keeps a margin; deeper problems are declined
// and fall through to gemm_3xtf32_mma, which adds each k step's products in f32 registers.
inline constexpr long long kWgmma3xTf32MaxK = 16384;

// One operand of the prepass: `rows` x `k` logical elements, element (r, kk) of batch entry b at
// src + b * batch_stride + r * r_stride + kk * k_stride (in floats; batch_stride 0 or batch 1: one
// copy).  Written K-major to hi / lo: element (r, kk) of copy b at b * rows * ld + r * ld + kk,
// the columns [k, ld) as zeros.
struct Tf32SplitOperand {
  const float* src = nullptr;
  int rows = 0, k = 0, batch = 1;
  std::int64_t r_stride = 0, k_stride = 0, batch_stride = 0;
  float* hi = nullptr;
  float* lo = nullptr;
  std::int64_t ld = 0;
};

// Queues the split of one operand on `stream` (a cudaStream_t); capture-safe (one kernel, no
// allocation, no synchronisation).
Status launch_tf32_split(const Tf32SplitOperand& op, void* stream);

}  // namespace kiln::gemm

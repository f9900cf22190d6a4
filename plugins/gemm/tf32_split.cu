// The 3xTF32 prepass of gemm_wgmma (wgmma_3xtf32.hpp): one f32 operand, any layout, split into
// K-major TF32 hi and lo parts in the workspace.  Memory-bound; one kernel per operand.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gemm_common.cuh"
#include "wgmma_3xtf32.hpp"

namespace kiln::gemm {
namespace {

__device__ __forceinline__ float round_tf32(float x) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

constexpr int kTile = 32;   // a tile is 32 rows x 32 k
constexpr int kRowsPerPass = 8;  // blockDim = (32, 8): each thread moves 4 elements per tile

// One block per 32 x 32 tile (grid-stride over tiles and batch copies).  The tile goes through
// shared memory, so both the read (along whichever of r and k is contiguous in the source) and
// the write (along k) are coalesced.
__global__ void __launch_bounds__(kTile * kRowsPerPass) tf32_split_kernel(Tf32SplitOperand op) {
  __shared__ float tile[kTile][kTile + 1];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const bool k_contiguous = op.k_stride == 1;
  const int tiles_r = (op.rows + kTile - 1) / kTile;
  const int tiles_k = static_cast<int>((op.ld + kTile - 1) / kTile);
  for (int b = static_cast<int>(blockIdx.z); b < op.batch; b += static_cast<int>(gridDim.z)) {
    const float* src = op.src + static_cast<std::int64_t>(b) * op.batch_stride;
    const std::int64_t dst_off = static_cast<std::int64_t>(b) * op.rows * op.ld;
    for (int tr = static_cast<int>(blockIdx.y); tr < tiles_r; tr += static_cast<int>(gridDim.y))
      for (int tk = static_cast<int>(blockIdx.x); tk < tiles_k; tk += static_cast<int>(gridDim.x)) {
        const int r0 = tr * kTile, k0 = tk * kTile;
        __syncthreads();  // the previous tile's reads of `tile` are done
#pragma unroll
        for (int j = 0; j < kTile / kRowsPerPass; ++j) {
          // Consecutive threads walk the source's contiguous dimension.
          const int rr = k_contiguous ? ty + j * kRowsPerPass : tx;
          const int kk = k_contiguous ? tx : ty + j * kRowsPerPass;
          const int r = r0 + rr, k = k0 + kk;
          tile[rr][kk] = r < op.rows && k < op.k ? src[r * op.r_stride + k * op.k_stride] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < kTile / kRowsPerPass; ++j) {
          const int rr = ty + j * kRowsPerPass, r = r0 + rr, k = k0 + tx;
          if (r >= op.rows || k >= op.ld) continue;
          const float x = tile[rr][tx];
          const float hi = round_tf32(x);
          const std::int64_t at = dst_off + static_cast<std::int64_t>(r) * op.ld + k;
          op.hi[at] = hi;
          op.lo[at] = round_tf32(x - hi);  // x - hi is exact in f32
        }
      }
  }
}

}  // namespace

Status launch_tf32_split(const Tf32SplitOperand& op, void* stream) {
  if (op.rows <= 0 || op.ld <= 0 || op.batch <= 0) return Status::success();
  const long long tiles_r = (op.rows + kTile - 1) / kTile, tiles_k = (op.ld + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(std::min<long long>(tiles_k, 1024)),
                  static_cast<unsigned>(std::min<long long>(tiles_r, 32768)),
                  static_cast<unsigned>(std::min(op.batch, 1024)));
  tf32_split_kernel<<<grid, dim3(kTile, kRowsPerPass), 0, as_stream(stream)>>>(op);
  return cuda_launch_status("gemm_wgmma 3xTF32 split");
}

}  // namespace kiln::gemm

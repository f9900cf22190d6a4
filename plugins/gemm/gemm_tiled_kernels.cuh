// Shared-memory tiled gemm (the "chessboard": one TILE x TILE block per C tile, A and B tiles
// staged through shared memory), its variant with the A tile stored transposed, and a
// Kahan-compensated one.  Edge tiles are zero-filled on load and guarded on store, so every
// shape is correct.  Kernel bodies read only their template and launch parameters.
#pragma once
#include "gemm_common.cuh"

namespace kiln::gemm {

// A[row, col] or 0 outside the matrix.
__device__ __forceinline__ float load_or_zero(const float* p, long long ld, int row, int col, int rows,
                                              int cols) {
  return (row < rows && col < cols) ? p[row * ld + col] : 0.0f;
}

template <int TILE>
__global__ void __launch_bounds__(TILE* TILE) gemm_tiled_kernel(GemmArgs g) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < g.k; k0 += TILE) {
    as[ty][tx] = load_or_zero(g.a, g.lda, row, k0 + tx, g.m, g.k);
    bs[ty][tx] = load_or_zero(g.b, g.ldb, k0 + ty, col, g.k, g.n);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TILE; ++kk) acc = fmaf(as[ty][kk], bs[kk][tx], acc);
    __syncthreads();
  }
  if (row < g.m && col < g.n) store_scaled(g.c + row * g.ldc + col, acc, g.alpha, g.beta);
}

// The A tile is read along k by consecutive threads (coalesced) and stored transposed, so the
// inner loop reads both operands along the tile's leading dimension; the +1 padding keeps the
// transposing store free of bank conflicts.
template <int TILE>
__global__ void __launch_bounds__(TILE* TILE) gemm_tiled_coalesced_kernel(GemmArgs g) {
  __shared__ float at[TILE][TILE + 1];  // at[kk][r] = A[tile row r, k0 + kk]
  __shared__ float bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < g.k; k0 += TILE) {
    at[tx][ty] = load_or_zero(g.a, g.lda, row, k0 + tx, g.m, g.k);
    bs[ty][tx] = load_or_zero(g.b, g.ldb, k0 + ty, col, g.k, g.n);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TILE; ++kk) acc = fmaf(at[kk][ty], bs[kk][tx], acc);
    __syncthreads();
  }
  if (row < g.m && col < g.n) store_scaled(g.c + row * g.ldc + col, acc, g.alpha, g.beta);
}

// Like gemm_tiled, with Kahan-compensated accumulation: `comp` carries the low-order bits lost
// by each addition.  The __f*_rn intrinsics are never contracted or reassociated by the compiler,
// which would cancel the compensation.
template <int TILE>
__global__ void __launch_bounds__(TILE* TILE) gemm_tiled_kahan_kernel(GemmArgs g) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float sum = 0.0f, comp = 0.0f;
  for (int k0 = 0; k0 < g.k; k0 += TILE) {
    as[ty][tx] = load_or_zero(g.a, g.lda, row, k0 + tx, g.m, g.k);
    bs[ty][tx] = load_or_zero(g.b, g.ldb, k0 + ty, col, g.k, g.n);
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < TILE; ++kk) {
      const float y = fmaf(as[ty][kk], bs[kk][tx], -comp);  // product minus the carried error
      const float t = __fadd_rn(sum, y);
      comp = __fsub_rn(__fsub_rn(t, sum), y);
      sum = t;
    }
    __syncthreads();
  }
  if (row < g.m && col < g.n) store_scaled(g.c + row * g.ldc + col, sum, g.alpha, g.beta);
}

}  // namespace kiln::gemm

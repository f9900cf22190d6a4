// The first rungs of the gemm ladder: one thread per output element, and one block per output
// row with the A row staged in shared memory.  Kernel bodies read only their parameters.
#pragma once
#include "gemm_common.cuh"

namespace kiln::gemm {

// One thread per C element, k-loop straight from global memory.
__global__ void gemm_naive_kernel(GemmArgs g) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= g.m || col >= g.n) return;
  const float* a = g.a + row * g.lda;
  const float* b = g.b + col;
  float acc = 0.0f;
  for (int kk = 0; kk < g.k; ++kk) acc = fmaf(a[kk], b[kk * g.ldb], acc);
  store_scaled(g.c + row * g.ldc + col, acc, g.alpha, g.beta);
}

// Floats of the A row held in shared memory at once; longer rows are processed in chunks.
inline constexpr int kRowChunk = 4096;

// One block per C row: the block stages A's row in shared memory (chunk by chunk when k is
// larger than kRowChunk) and each thread computes columns tid, tid + blockDim.x, ...
__global__ void gemm_row_per_block_kernel(GemmArgs g) {
  __shared__ float a_row[kRowChunk];
  const int row = blockIdx.x;
  const int tid = threadIdx.x;
  const int nt = blockDim.x;
  const float* a = g.a + row * g.lda;
  float* c = g.c + row * g.ldc;
  if (g.k <= kRowChunk) {
    for (int i = tid; i < g.k; i += nt) a_row[i] = a[i];
    __syncthreads();
    for (int j = tid; j < g.n; j += nt) {
      float acc = 0.0f;
      const float* b = g.b + j;
      for (int kk = 0; kk < g.k; ++kk) acc = fmaf(a_row[kk], b[kk * g.ldb], acc);
      store_scaled(c + j, acc, g.alpha, g.beta);
    }
    return;
  }
  // Wide k: the loops below are uniform across the block, so every thread reaches each barrier.
  for (int j0 = 0; j0 < g.n; j0 += nt) {
    const int j = j0 + tid;
    float acc = 0.0f;
    for (int k0 = 0; k0 < g.k; k0 += kRowChunk) {
      const int len = min(kRowChunk, g.k - k0);
      __syncthreads();  // the previous chunk is consumed
      for (int i = tid; i < len; i += nt) a_row[i] = a[k0 + i];
      __syncthreads();
      if (j < g.n) {
        const float* b = g.b + static_cast<long long>(k0) * g.ldb + j;
        for (int kk = 0; kk < len; ++kk) acc = fmaf(a_row[kk], b[kk * g.ldb], acc);
      }
    }
    if (j < g.n) store_scaled(c + j, acc, g.alpha, g.beta);
  }
}

}  // namespace kiln::gemm

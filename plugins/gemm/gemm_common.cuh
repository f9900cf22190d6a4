// Device helpers shared by the gemm kernels (CUDA errors as Status: <kiln/cuda_status.hpp>).
#pragma once
#include <cuda_runtime.h>

#include <string>

#include <kiln/cuda_status.hpp>

#include "gemm_launch.hpp"

namespace kiln::gemm {

// out = alpha * acc + beta * out; with beta == 0 `out` is not read, so NaN or garbage in C never
// leaks into the result.
__device__ __forceinline__ void store_scaled(float* out, float acc, float alpha, float beta) {
  const float v = alpha * acc;
  *out = beta == 0.0f ? v : fmaf(beta, *out, v);
}

// Maps a 1-D block index to a (tile row, tile column) so that consecutive blocks walk down
// groups of `group` tile rows before moving right: blocks resident together share A rows and B
// columns in L2.
__device__ __forceinline__ void grouped_tile(int pid, int tiles_m, int tiles_n, int group, int& tile_m,
                                             int& tile_n) {
  const int per_group = group * tiles_n;
  const int first_m = (pid / per_group) * group;
  const int rows = min(tiles_m - first_m, group);
  const int in_group = pid % per_group;
  tile_m = first_m + in_group % rows;
  tile_n = in_group / rows;
}

// The k slice of `g` this block computes: all of it unless the launch splits k (g.k_chunk > 0,
// one grid row per slice; see GemmArgs).
__device__ __forceinline__ GemmArgs k_slice(GemmArgs g) {
  if (g.k_chunk <= 0) return g;
  const int k0 = static_cast<int>(blockIdx.y) * g.k_chunk;
  g.a += k0;
  g.b += static_cast<long long>(k0) * g.ldb;
  g.c += static_cast<long long>(blockIdx.y) * g.split_stride;
  g.k = min(g.k_chunk, g.k - k0);
  return g;
}

inline cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace kiln::gemm

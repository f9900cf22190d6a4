// The second pass of gemm_split_k: C = alpha * (sum of the k-slice partial products) + beta * C.
// The first pass is gemm_register_blocked launched with one grid row per slice (GemmArgs.k_chunk).
#include <algorithm>

#include "gemm_common.cuh"

namespace kiln::gemm {
namespace {

// One thread per C element (grid-stride); the slices are added in order, so the result does not
// depend on the launch.  Reads of the partials are coalesced along a row of C.
__global__ void split_k_reduce_kernel(const float* __restrict__ partials, long long ld, long long slice, int splits,
                                      GemmArgs g) {
  const long long mn = static_cast<long long>(g.m) * g.n;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < mn; i += step) {
    const long long row = i / g.n, col = i % g.n;
    const float* p = partials + row * ld + col;
    float acc = 0.0f;
    for (int s = 0; s < splits; ++s) acc += p[s * slice];
    store_scaled(g.c + row * g.ldc + col, acc, g.alpha, g.beta);
  }
}

}  // namespace

Status launch_split_k_reduce(const float* partials, std::int64_t ld, std::int64_t stride, int splits,
                             const GemmArgs& g, void* stream) {
  if (g.m == 0 || g.n == 0) return Status::success();
  constexpr int kBlock = 256;
  const long long mn = static_cast<long long>(g.m) * g.n;
  const unsigned grid = static_cast<unsigned>(std::min<long long>((mn + kBlock - 1) / kBlock, 8192));
  split_k_reduce_kernel<<<grid, kBlock, 0, as_stream(stream)>>>(partials, ld, stride, splits, g);
  return cuda_launch_status("gemm_split_k reduce");
}

}  // namespace kiln::gemm

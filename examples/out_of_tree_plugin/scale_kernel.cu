#include "scale_kernel.hpp"

namespace scale_example {
namespace {

__global__ void scale_grid_stride(const float* __restrict__ x, float* __restrict__ y, std::int64_t n, float alpha) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = alpha * x[i];
  }
}

}  // namespace

cudaError_t launch_scale_kernel(const float* x, float* y, std::int64_t n, float alpha, int block,
                                cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  // Enough blocks to fill the GPU; the grid-stride loop covers the rest.
  const std::int64_t blocks = (n + block - 1) / block;
  const unsigned grid = static_cast<unsigned>(blocks < 4096 ? blocks : 4096);
  scale_grid_stride<<<grid, block, 0, stream>>>(x, y, n, alpha);
  return cudaGetLastError();
}

}  // namespace scale_example

// The CUDA kernel's launcher (scale_kernel.cu); parameters come as launch arguments.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace scale_example {

// Queues y[i] = alpha * x[i], i < n, on `stream` with `block` threads per block.
cudaError_t launch_scale_kernel(const float* x, float* y, std::int64_t n, float alpha, int block,
                                cudaStream_t stream);

}  // namespace scale_example

// The device side of kiln::fill_random: one thread per element (grid-stride), the element
// computed by the same counter_fill_element as the host loop, so both give the same bits.
#include <cuda_runtime.h>

#include "kiln/cuda_status.hpp"
#include "random_fill.hpp"

namespace kiln::detail {
namespace {

__global__ void fill_kernel(char* data, std::int64_t rows, std::int64_t cols, std::int64_t pitch_bytes,
                            std::int64_t esize, CounterFill fill) {
  const std::int64_t total = rows * cols;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / cols, c = i - r * cols;
    counter_fill_element(fill, static_cast<std::uint64_t>(i), data + r * pitch_bytes + c * esize);
  }
}

}  // namespace

void cuda_fill_random(const TensorRef& t, const CounterFill& fill) {
  cuda_status(cudaSetDevice(t.device.ordinal), "cudaSetDevice").throw_if_error("fill_random");
  const std::int64_t rows = t.rows(), cols = t.cols();
  const std::int64_t esize = static_cast<std::int64_t>(dtype_size(t.dtype));
  const std::int64_t total = rows * cols;
  const int threads = 256;
  const std::int64_t want = (total + threads - 1) / threads;
  const int blocks = static_cast<int>(want < 65535 * 8 ? want : 65535 * 8);
  fill_kernel<<<blocks, threads>>>(static_cast<char*>(t.data), rows, cols, t.row_stride * esize, esize, fill);
  cuda_status(cudaGetLastError(), "kernel launch").throw_if_error("fill_random");
  cuda_status(cudaStreamSynchronize(nullptr), "kernel").throw_if_error("fill_random");
}

}  // namespace kiln::detail

// kiln::relative_error on the device: ||got - expected|| / ||expected|| accumulated in double
// per block, NaN, infinity and poison rules as in the host loop (op_schema.cpp), one flag word
// for "infinite error".  The tuner compares every candidate with the expected output this way.
#include <cuda_runtime.h>

#include <cmath>
#include <limits>

#include "device_compare.hpp"
#include "element_value.hpp"
#include "kiln/cuda_status.hpp"

namespace kiln::detail {
namespace {

constexpr int kThreads = 256;

struct Sums {
  double diff2, ref2;
  unsigned int infinite;
};

__global__ void relative_error_kernel(const char* got, std::int64_t got_pitch, const char* expected,
                                      std::int64_t expected_pitch, std::int64_t rows, std::int64_t cols,
                                      std::int64_t esize, int dtype, Sums* out) {
  __shared__ double s_diff[kThreads], s_ref[kThreads];
  double diff2 = 0.0, ref2 = 0.0;
  bool infinite = false;
  const std::int64_t total = rows * cols;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / cols, c = i - r * cols;
    const double g = element_value(got + r * got_pitch + c * esize, 0, dtype);
    const double e = element_value(expected + r * expected_pitch + c * esize, 0, dtype);
    if (isnan(e) && isnan(g)) continue;
    if (isnan(g) || isnan(e) || isinf(g) != isinf(e)) {
      infinite = true;
      continue;
    }
    if (isinf(e)) {
      if (g != e) infinite = true;
      continue;
    }
    diff2 += (g - e) * (g - e);
    ref2 += e * e;
  }
  s_diff[threadIdx.x] = diff2;
  s_ref[threadIdx.x] = ref2;
  if (__syncthreads_or(infinite) && threadIdx.x == 0) atomicOr(&out->infinite, 1u);
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) {
      s_diff[threadIdx.x] += s_diff[threadIdx.x + stride];
      s_ref[threadIdx.x] += s_ref[threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(&out->diff2, s_diff[0]);
    atomicAdd(&out->ref2, s_ref[0]);
  }
}

void check(cudaError_t err, const char* what) { cuda_status(err, what).throw_if_error("relative_error"); }

}  // namespace

double cuda_relative_error(const TensorRef& got, const TensorRef& expected) {
  if (got.dtype != expected.dtype || got.rows() != expected.rows() || got.cols() != expected.cols())
    return std::numeric_limits<double>::infinity();
  check(cudaSetDevice(got.device.ordinal), "cudaSetDevice");
  const std::int64_t rows = got.rows(), cols = got.cols(), total = rows * cols;
  if (total == 0) return 0.0;
  const std::int64_t esize = static_cast<std::int64_t>(dtype_size(got.dtype));
  Sums* sums = nullptr;
  check(cudaMalloc(&sums, sizeof(Sums)), "cudaMalloc");
  Sums host{};
  cudaError_t err = cudaMemset(sums, 0, sizeof(Sums));
  if (err == cudaSuccess) {
    const std::int64_t want = (total + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(want < 4096 ? want : 4096);
    relative_error_kernel<<<blocks, kThreads>>>(static_cast<const char*>(got.data), got.row_stride * esize,
                                                static_cast<const char*>(expected.data),
                                                expected.row_stride * esize, rows, cols, esize,
                                                static_cast<int>(got.dtype), sums);
    err = cudaGetLastError();
    if (err == cudaSuccess) err = cudaMemcpy(&host, sums, sizeof(Sums), cudaMemcpyDeviceToHost);
  }
  cudaFree(sums);
  check(err, "the device relative error");
  if (host.infinite) return std::numeric_limits<double>::infinity();
  if (host.diff2 == 0.0) return 0.0;
  return host.ref2 > 0.0 ? std::sqrt(host.diff2 / host.ref2) : std::sqrt(host.diff2);
}

}  // namespace kiln::detail

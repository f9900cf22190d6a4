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

// Pitches in bytes: row and column pitch of each matrix (column-major and padded views too).
__global__ void relative_error_kernel(const char* got, std::int64_t got_pitch, std::int64_t got_col_pitch,
                                      const char* expected, std::int64_t expected_pitch,
                                      std::int64_t expected_col_pitch, std::int64_t rows, std::int64_t cols,
                                      int dtype, Sums* out) {
  __shared__ double s_diff[kThreads], s_ref[kThreads];
  double diff2 = 0.0, ref2 = 0.0;
  bool infinite = false;
  const std::int64_t total = rows * cols;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / cols, c = i - r * cols;
    const double g = element_value(got + r * got_pitch + c * got_col_pitch, 0, dtype);
    const double e = element_value(expected + r * expected_pitch + c * expected_col_pitch, 0, dtype);
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
  if (got.dtype != expected.dtype || got.rows() != expected.rows() || got.cols() != expected.cols() ||
      got.batch() != expected.batch())
    return std::numeric_limits<double>::infinity();
  check(cudaSetDevice(got.device.ordinal), "cudaSetDevice");
  const std::int64_t rows = got.rows(), cols = got.cols(), total = rows * cols;
  if (total == 0 || got.batch() == 0) return 0.0;
  const std::int64_t esize = static_cast<std::int64_t>(dtype_size(got.dtype));
  Sums* sums = nullptr;
  check(cudaMalloc(&sums, sizeof(Sums)), "cudaMalloc");
  Sums host{};
  cudaError_t err = cudaMemset(sums, 0, sizeof(Sums));
  // One launch per matrix of a batch, all adding into the same sums.
  for (std::int64_t b = 0; b < got.batch() && err == cudaSuccess; ++b) {
    const TensorRef g = got.shape.rank == 3 ? got.matrix_at(b) : got;
    const TensorRef e = expected.shape.rank == 3 ? expected.matrix_at(b) : expected;
    const std::int64_t g_row = g.shape.rank >= 2 ? g.row_stride : 0, e_row = e.shape.rank >= 2 ? e.row_stride : 0;
    const std::int64_t g_col = g.shape.rank >= 2 ? g.col_stride : 1, e_col = e.shape.rank >= 2 ? e.col_stride : 1;
    const std::int64_t want = (total + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(want < 4096 ? want : 4096);
    relative_error_kernel<<<blocks, kThreads>>>(static_cast<const char*>(g.data), g_row * esize, g_col * esize,
                                                static_cast<const char*>(e.data), e_row * esize, e_col * esize,
                                                rows, cols, static_cast<int>(got.dtype), sums);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaMemcpy(&host, sums, sizeof(Sums), cudaMemcpyDeviceToHost);
  cudaFree(sums);
  check(err, "the device relative error");
  if (host.infinite) return std::numeric_limits<double>::infinity();
  if (host.diff2 == 0.0) return 0.0;
  return host.ref2 > 0.0 ? std::sqrt(host.diff2 / host.ref2) : std::sqrt(host.diff2);
}

}  // namespace kiln::detail

// Kernel bodies of the CUDA gemv variants: y = A x, f32, A row-major with row stride `lda`
// (elements).  They read their parameters only from template and launch arguments; the adapters
// (gemv_*.cu) choose them.  Offsets are 64-bit: row * lda passes 2^31 for large matrices.  Every
// kernel accumulates in float with fmaf; the order differs from the host reference's double sum,
// which the op's tolerance (1e-4 relative) allows for.
#pragma once
#include <cstdint>

namespace kiln::gemv {

// One thread per row (the seeds' first kernel, bounds fixed).  Neighbouring threads read
// neighbouring rows, so each load touches a different line; L1 keeps the line for the next
// iterations.  Templated only so that the header may be included by several translation units.
template <class T>
__global__ void gemv_row_per_thread_kernel(const T* __restrict__ a, std::int64_t lda, const T* __restrict__ x,
                                           T* __restrict__ y, std::int64_t m, std::int64_t n) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= m) return;
  const T* ar = a + row * lda;
  T acc = 0;
  for (std::int64_t j = 0; j < n; ++j) acc = fma(ar[j], x[j], acc);
  y[row] = acc;
}

// One thread per row; the block copies x into shared memory `tile` elements per phase and every
// thread reads it from there.  Threads past the last row still help load x and reach every
// barrier (the seed let them write y out of bounds).
template <class T>
__global__ void gemv_smem_x_kernel(const T* __restrict__ a, std::int64_t lda, const T* __restrict__ x,
                                   T* __restrict__ y, std::int64_t m, std::int64_t n, int tile) {
  extern __shared__ __align__(16) unsigned char smem_x_raw[];
  T* xs = reinterpret_cast<T*>(smem_x_raw);  // tile elements
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool active = row < m;
  const T* ar = a + (active ? row : 0) * lda;
  T acc = 0;
  for (std::int64_t t0 = 0; t0 < n; t0 += tile) {
    const int len = static_cast<int>(n - t0 < tile ? n - t0 : tile);
    for (int k = threadIdx.x; k < len; k += blockDim.x) xs[k] = x[t0 + k];
    __syncthreads();
    if (active)
      for (int k = 0; k < len; ++k) acc = fma(ar[t0 + k], xs[k], acc);
    __syncthreads();  // before the next phase overwrites xs
  }
  if (active) y[row] = acc;
}

namespace detail {

__device__ __forceinline__ float dot4(float4 a, float4 b, float acc) {
  acc = fmaf(a.x, b.x, acc);
  acc = fmaf(a.y, b.y, acc);
  acc = fmaf(a.z, b.z, acc);
  return fmaf(a.w, b.w, acc);
}

}  // namespace detail

// kThreadsPerRow threads (blockDim.x) share a row; blockDim.y rows per block; blockDim.x *
// blockDim.y is a multiple of 32.  Each thread strides over its row with kVec-wide loads, kUnroll
// of them issued before any is used, so several 16-byte loads per thread are in flight.  A is
// streamed once (__ldcs: evict first, so x stays cached); x is re-read by every row (__ldg, L1).
// kVec == 4 needs A's rows and x 16-byte aligned; the n % 4 trailing columns are read singly.
// Partial sums meet through xor shuffles within groups of min(kThreadsPerRow, 32) lanes, then
// through shared memory across the warps of a row.  Threads of rows past m do no loads but still
// shuffle (full-warp masks) and reach the barrier.
template <int kThreadsPerRow, int kVec>
__global__ void __launch_bounds__(1024)
    gemv_warp_per_row_kernel(const float* __restrict__ a, std::int64_t lda, const float* __restrict__ x,
                             float* __restrict__ y, std::int64_t m, std::int64_t n) {
  static_assert(kVec == 1 || kVec == 4, "vector width 1 or 4");
  static_assert(kThreadsPerRow >= 2 && (kThreadsPerRow & (kThreadsPerRow - 1)) == 0 && kThreadsPerRow <= 1024,
                "threads per row: a power of two");
  constexpr int kUnroll = kVec == 4 ? 4 : 8;
  constexpr int kStep = kThreadsPerRow * kUnroll;
  const int lane = threadIdx.x;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;

  float part[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) part[u] = 0.0f;

  if (row < m) {
    const float* ar = a + row * lda;
    std::int64_t j = lane;
    if constexpr (kVec == 4) {
      const std::int64_t n4 = n / 4;
      const float4* a4 = reinterpret_cast<const float4*>(ar);
      const float4* x4 = reinterpret_cast<const float4*>(x);
      for (; j + (kUnroll - 1) * kThreadsPerRow < n4; j += kStep) {
        float4 av[kUnroll], xv[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) av[u] = __ldcs(a4 + j + u * kThreadsPerRow);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) xv[u] = __ldg(x4 + j + u * kThreadsPerRow);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) part[u] = detail::dot4(av[u], xv[u], part[u]);
      }
      for (; j < n4; j += kThreadsPerRow) part[0] = detail::dot4(__ldcs(a4 + j), __ldg(x4 + j), part[0]);
      for (std::int64_t c = n4 * 4 + lane; c < n; c += kThreadsPerRow) part[1] = fmaf(ar[c], __ldg(x + c), part[1]);
    } else {
      for (; j + (kUnroll - 1) * kThreadsPerRow < n; j += kStep) {
        float av[kUnroll], xv[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) av[u] = __ldcs(ar + j + u * kThreadsPerRow);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) xv[u] = __ldg(x + j + u * kThreadsPerRow);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) part[u] = fmaf(av[u], xv[u], part[u]);
      }
      for (; j < n; j += kThreadsPerRow) part[0] = fmaf(__ldcs(ar + j), __ldg(x + j), part[0]);
    }
  }

  float acc = 0.0f;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc += part[u];

  // Lanes of one row are kGroup consecutive lanes of a warp, so xor offsets < kGroup stay inside it.
  constexpr int kGroup = kThreadsPerRow < 32 ? kThreadsPerRow : 32;
#pragma unroll
  for (int offset = kGroup / 2; offset > 0; offset /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, offset);

  if constexpr (kThreadsPerRow > 32) {
    constexpr int kWarpsPerRow = kThreadsPerRow / 32;
    __shared__ float warp_sums[32];  // one per warp of the block (<= 1024 threads)
    const int warp = threadIdx.y * kWarpsPerRow + lane / 32;
    if (lane % 32 == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (lane == 0 && row < m) {
      float sum = 0.0f;
#pragma unroll
      for (int w = 0; w < kWarpsPerRow; ++w) sum += warp_sums[threadIdx.y * kWarpsPerRow + w];
      y[row] = sum;
    }
  } else {
    if (lane == 0 && row < m) y[row] = acc;
  }
}

}  // namespace kiln::gemv

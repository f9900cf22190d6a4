// Kernel body of gemv_half_warp_per_row: y = A x with f16 / bf16 A and x (their 16-bit patterns),
// f32 accumulation, y written in f32 or the input dtype.  The structure of gemv_warp_per_row_kernel
// (gemv_kernels.cuh), with 16-byte loads of 8 halves converted to float in registers, and
// optionally two rows per thread group so each chunk of x is loaded and converted once for both.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace kiln::gemv {

// Conversions of the 16-bit patterns (exact to float; from float to nearest even).
struct Bf16Bits {
  __device__ static float to_float(unsigned short b) { return __uint_as_float(static_cast<unsigned>(b) << 16); }
  // The two elements of a 32-bit word, lower address first.
  __device__ static float2 to_float2(unsigned w) { return {__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u)}; }
  __device__ static unsigned short from_float(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};

struct F16Bits {
  __device__ static float to_float(unsigned short h) { return __half2float(__ushort_as_half(h)); }
  __device__ static float2 to_float2(unsigned w) {
    return __half22float2(__halves2half2(__ushort_as_half(static_cast<unsigned short>(w & 0xffffu)),
                                         __ushort_as_half(static_cast<unsigned short>(w >> 16))));
  }
  __device__ static unsigned short from_float(float f) { return __half_as_ushort(__float2half_rn(f)); }
};

namespace detail {

// The 8 halves of a 16-byte load as floats.
template <class Bits>
__device__ __forceinline__ void to_float8(uint4 v, float (&f)[8]) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 p = Bits::to_float2(w[k]);
    f[2 * k] = p.x;
    f[2 * k + 1] = p.y;
  }
}

// acc + the dot product of 8 halves of a with 8 floats of x.
template <class Bits>
__device__ __forceinline__ float dot8(uint4 a, const float (&x)[8], float acc) {
  float af[8];
  to_float8<Bits>(a, af);
#pragma unroll
  for (int k = 0; k < 8; ++k) acc = fmaf(af[k], x[k], acc);
  return acc;
}

}  // namespace detail

// kThreadsPerRow threads (blockDim.x) share kRows consecutive rows (each thread the same columns
// of all of them, so a chunk of x is loaded and converted once for kRows rows); blockDim.y such
// groups per block.  kVec == 8: A's rows and x 16-byte aligned, kUnroll 16-byte loads of A per row
// (evict-first) and of x (read-only cache) in flight per thread; the n % 8 trailing columns are
// read singly.  kVec == 1: 2-byte loads.  Rows past m are clamped for loading (valid memory, the
// values unused) and not stored.
template <class Bits, int kThreadsPerRow, int kVec, int kRows>
__global__ void __launch_bounds__(1024)
    gemv_half_warp_per_row_kernel(const unsigned short* __restrict__ a, std::int64_t lda,
                                  const unsigned short* __restrict__ x, void* __restrict__ y, bool y_half,
                                  std::int64_t m, std::int64_t n) {
  static_assert(kVec == 1 || kVec == 8, "vector width 1 or 8");
  static_assert(kRows == 1 || kRows == 2, "one or two rows per thread group");
  static_assert(kThreadsPerRow >= 2 && (kThreadsPerRow & (kThreadsPerRow - 1)) == 0 && kThreadsPerRow <= 1024,
                "threads per row: a power of two");
  constexpr int kUnroll = kVec == 8 ? (kRows == 1 ? 4 : 2) : 8;
  constexpr int kStep = kThreadsPerRow * kUnroll;
  const int lane = threadIdx.x;
  const std::int64_t row0 = (static_cast<std::int64_t>(blockIdx.x) * blockDim.y + threadIdx.y) * kRows;

  float part[kRows][kUnroll];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) part[r][u] = 0.0f;

  if (row0 < m) {
    const unsigned short* ar[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) ar[r] = a + (row0 + r < m ? row0 + r : m - 1) * lda;
    std::int64_t j = lane;
    if constexpr (kVec == 8) {
      const std::int64_t n8 = n / 8;
      const uint4* x8 = reinterpret_cast<const uint4*>(x);
      for (; j + (kUnroll - 1) * kThreadsPerRow < n8; j += kStep) {
        uint4 av[kRows][kUnroll], xv[kUnroll];
#pragma unroll
        for (int r = 0; r < kRows; ++r)
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) av[r][u] = __ldcs(reinterpret_cast<const uint4*>(ar[r]) + j + u * kThreadsPerRow);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) xv[u] = __ldg(x8 + j + u * kThreadsPerRow);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          float xf[8];
          detail::to_float8<Bits>(xv[u], xf);
#pragma unroll
          for (int r = 0; r < kRows; ++r) part[r][u] = detail::dot8<Bits>(av[r][u], xf, part[r][u]);
        }
      }
      for (; j < n8; j += kThreadsPerRow) {
        float xf[8];
        detail::to_float8<Bits>(__ldg(x8 + j), xf);
#pragma unroll
        for (int r = 0; r < kRows; ++r)
          part[r][0] = detail::dot8<Bits>(__ldcs(reinterpret_cast<const uint4*>(ar[r]) + j), xf, part[r][0]);
      }
      for (std::int64_t c = n8 * 8 + lane; c < n; c += kThreadsPerRow) {
        const float xc = Bits::to_float(__ldg(x + c));
#pragma unroll
        for (int r = 0; r < kRows; ++r) part[r][kUnroll - 1] = fmaf(Bits::to_float(ar[r][c]), xc, part[r][kUnroll - 1]);
      }
    } else {
      for (; j + (kUnroll - 1) * kThreadsPerRow < n; j += kStep) {
        unsigned short av[kRows][kUnroll], xv[kUnroll];
#pragma unroll
        for (int r = 0; r < kRows; ++r)
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) av[r][u] = __ldcs(ar[r] + j + u * kThreadsPerRow);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) xv[u] = __ldg(x + j + u * kThreadsPerRow);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            part[r][u] = fmaf(Bits::to_float(av[r][u]), Bits::to_float(xv[u]), part[r][u]);
      }
      for (; j < n; j += kThreadsPerRow) {
        const float xc = Bits::to_float(__ldg(x + j));
#pragma unroll
        for (int r = 0; r < kRows; ++r) part[r][0] = fmaf(Bits::to_float(__ldcs(ar[r] + j)), xc, part[r][0]);
      }
    }
  }

  constexpr int kGroup = kThreadsPerRow < 32 ? kThreadsPerRow : 32;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    float acc = 0.0f;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += part[r][u];
#pragma unroll
    for (int offset = kGroup / 2; offset > 0; offset /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
    if constexpr (kThreadsPerRow > 32) {
      constexpr int kWarpsPerRow = kThreadsPerRow / 32;
      __shared__ float warp_sums[32];
      const int warp = threadIdx.y * kWarpsPerRow + lane / 32;
      if (r > 0) __syncthreads();  // the previous row's sums are read before they are overwritten
      if (lane % 32 == 0) warp_sums[warp] = acc;
      __syncthreads();
      if (lane == 0) {
        acc = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarpsPerRow; ++w) acc += warp_sums[threadIdx.y * kWarpsPerRow + w];
      }
    }
    const std::int64_t row = row0 + r;
    if (lane == 0 && row < m) {
      if (y_half)
        static_cast<unsigned short*>(y)[row] = Bits::from_float(acc);
      else
        static_cast<float*>(y)[row] = acc;
    }
  }
}

}  // namespace kiln::gemv

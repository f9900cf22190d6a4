// Device helpers shared by the topk kernels: keys of elements, bitonic sorting of keys in shared
// memory by a whole block, and writing a row's result.
#pragma once
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "topk_key.hpp"

namespace kiln::topk {

// The element types the kernels are instantiated for: their key format and raw bits.
template <class T>
struct Element;
template <>
struct Element<float> {
  static constexpr KeyFormat kFormat = KeyFormat::f32;
  __device__ __forceinline__ static std::uint32_t bits(float v) { return __float_as_uint(v); }
};
template <>
struct Element<__half> {
  static constexpr KeyFormat kFormat = KeyFormat::f16;
  __device__ __forceinline__ static std::uint32_t bits(__half v) { return __half_as_ushort(v); }
};
template <>
struct Element<__nv_bfloat16> {
  static constexpr KeyFormat kFormat = KeyFormat::bf16;
  __device__ __forceinline__ static std::uint32_t bits(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
};

template <class T>
__device__ __forceinline__ std::uint32_t rank_of(T v, bool largest) {
  return rank_key(Element<T>::bits(v), largest, Element<T>::kFormat);
}

template <class T>
__device__ __forceinline__ std::uint64_t key_of(T v, std::int64_t index, bool largest) {
  return (std::uint64_t(rank_of(v, largest)) << 32) | std::uint32_t(~std::uint32_t(index));
}

__device__ __forceinline__ std::uint64_t load_key(const std::uint64_t* p) {
  return __ldg(reinterpret_cast<const unsigned long long*>(p));
}

// The sum of v over lanes 0..lane of the calling warp (all 32 lanes call it).
__device__ __forceinline__ std::uint32_t warp_inclusive_scan(std::uint32_t v) {
  const int lane = int(threadIdx.x) & 31;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const std::uint32_t up = __shfl_up_sync(0xFFFFFFFFu, v, o);
    if (lane >= o) v += up;
  }
  return v;
}

// Sorts s[0, p) descending (p a power of two) with the whole block; ends with a barrier.
template <int BLOCK>
__device__ void bitonic_sort_desc(std::uint64_t* s, int p) {
  for (int size = 2; size <= p; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < (p >> 1); t += BLOCK) {
        const int i = 2 * t - (t & (stride - 1));
        const int j = i + stride;
        const bool desc = (i & size) == 0;  // runs of `size` alternate, the last one descends
        const std::uint64_t a = s[i], b = s[j];
        if ((a < b) == desc) {
          s[i] = b;
          s[j] = a;
        }
      }
      __syncthreads();
    }
  }
}

// Sorts the bitonic sequence s[0, p) descending; ends with a barrier.
template <int BLOCK>
__device__ void bitonic_merge_desc(std::uint64_t* s, int p) {
  for (int stride = p >> 1; stride > 0; stride >>= 1) {
    for (int t = threadIdx.x; t < (p >> 1); t += BLOCK) {
      const int i = 2 * t - (t & (stride - 1));
      const int j = i + stride;
      const std::uint64_t a = s[i], b = s[j];
      if (a < b) {
        s[i] = b;
        s[j] = a;
      }
    }
    __syncthreads();
  }
}

// Writes the k best keys of a row (sorted, best first) as values gathered from the row (so the
// bits of x come back unchanged: -0.0 stays -0.0, NaN payloads survive) and indices.
template <int BLOCK, class T>
__device__ void write_row(const std::uint64_t* best, int k, const T* xr, T* values, std::int32_t* indices) {
  for (int i = threadIdx.x; i < k; i += BLOCK) {
    const std::uint32_t j = index_of(best[i]);
    indices[i] = std::int32_t(j);
    values[i] = xr[j];
  }
}

}  // namespace kiln::topk

// Device element helpers of the `add` kernels: the CUDA element type of each kiln dtype and one
// element's sum.  Half types (f16, bf16) are added in fp32 and rounded once to the input type
// (round to nearest even, what kiln's host reference does with kiln/half.hpp); integers wrap.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace kiln::elementwise {

template <class T>
__device__ __forceinline__ T add_values(T x, T y) {
  return x + y;
}

__device__ __forceinline__ __half add_values(__half x, __half y) {
  return __float2half_rn(__half2float(x) + __half2float(y));
}

__device__ __forceinline__ __nv_bfloat16 add_values(__nv_bfloat16 x, __nv_bfloat16 y) {
  return __float2bfloat16_rn(__bfloat162float(x) + __bfloat162float(y));
}

}  // namespace kiln::elementwise

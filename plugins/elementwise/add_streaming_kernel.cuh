// Kernel body of add_streaming: c = a + b over "segments" (the rows of the operands; dense
// operands arrive collapsed to one row).  The grid is one full wave of resident blocks; within a
// segment the float4 chunks are dealt round-robin to the threads of the blocks that share it
// (a grid-stride loop), so every thread moves the same number of chunks, give or take one, and
// at any moment the blocks work on neighbouring addresses.  (An earlier version gave each block
// one contiguous range instead: 3421 GB/s against 4107 for the grid-stride add_vectorized at
// 16384^2 on an H200, 2026-11-24 - a thousand concurrent streams far apart in memory.)
// Alignment is taken from `c`: the first (0..3) elements up to c's first 16-byte boundary are
// done singly, then float4 stores; `a` and `b` are read as float4 when they share c's offset
// within 16 bytes, else as four single floats (still coalesced across the warp).  kItems float4
// per input per thread are loaded before the first store, so kItems * 32 bytes per thread are
// in flight.
#pragma once
#include <cstdint>

namespace kiln::elementwise {

template <bool kStreaming>
__device__ __forceinline__ float4 load4(const float4* p) {
  if constexpr (kStreaming) return __ldcs(p);
  else return __ldg(p);
}

template <bool kStreaming>
__device__ __forceinline__ void store4(float4* p, float4 v) {
  if constexpr (kStreaming) __stcs(p, v);
  else *p = v;
}

// Four floats at p (4-byte aligned only), as one vector.
__device__ __forceinline__ float4 load4_unaligned(const float* p) {
  return make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), __ldg(p + 3));
}

// No __restrict__: c may be a or b (in place); each element is read, then written, by one thread.
// grid: x shares each segment among gridDim.x blocks; y walks the segments (rows) with a stride.
template <int kItems, bool kStreaming>
__global__ void add_streaming_kernel(const float* a, const float* b, float* c,
                                     std::int64_t m, std::int64_t n, std::int64_t stride_a, std::int64_t stride_b,
                                     std::int64_t stride_c) {
  for (std::int64_t row = blockIdx.y; row < m; row += gridDim.y) {
    const float* ar = a + row * stride_a;
    const float* br = b + row * stride_b;
    float* cr = c + row * stride_c;
    // Elements before c's first 16-byte boundary (c is 4-byte aligned: the adapter checks).
    const int misalign = static_cast<int>((reinterpret_cast<std::uintptr_t>(cr) >> 2) & 3);
    const std::int64_t head = misalign == 0 ? 0 : (4 - misalign < n ? 4 - misalign : n);
    const std::int64_t chunks = (n - head) >> 2;
    const std::int64_t tail_start = head + chunks * 4;
    // Block-uniform: a and b share c's offset within 16 bytes.
    const bool vector_loads = (((reinterpret_cast<std::uintptr_t>(ar + head)) | (reinterpret_cast<std::uintptr_t>(br + head))) & 15) == 0;

    const float4* a4 = reinterpret_cast<const float4*>(ar + head);
    const float4* b4 = reinterpret_cast<const float4*>(br + head);
    float4* c4 = reinterpret_cast<float4*>(cr + head);
    const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (std::int64_t base = first; base < chunks; base += threads * kItems) {
      float4 va[kItems], vb[kItems];
      if (vector_loads) {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
          const std::int64_t j = base + i * threads;
          if (j < chunks) {
            va[i] = load4<kStreaming>(a4 + j);
            vb[i] = load4<kStreaming>(b4 + j);
          }
        }
      } else {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
          const std::int64_t j = base + i * threads;
          if (j < chunks) {
            va[i] = load4_unaligned(ar + head + 4 * j);
            vb[i] = load4_unaligned(br + head + 4 * j);
          }
        }
      }
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const std::int64_t j = base + i * threads;
        if (j < chunks)
          store4<kStreaming>(c4 + j, make_float4(va[i].x + vb[i].x, va[i].y + vb[i].y, va[i].z + vb[i].z,
                                                 va[i].w + vb[i].w));
      }
    }
    // The head (block 0) and the tail after the last whole chunk (the last block), singly.
    if (blockIdx.x == 0 && threadIdx.x < head) cr[threadIdx.x] = ar[threadIdx.x] + br[threadIdx.x];
    if (blockIdx.x == gridDim.x - 1) {
      const std::int64_t k = tail_start + threadIdx.x;
      if (k < n) cr[k] = ar[k] + br[k];
    }
  }
}

}  // namespace kiln::elementwise

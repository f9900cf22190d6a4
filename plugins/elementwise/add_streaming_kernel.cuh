// Kernel body of add_streaming: c = a + b over "segments" (the rows of the operands; dense
// operands arrive collapsed to one row), for f32, f16 and bf16 (halves added in fp32, see
// add_element.cuh).  Data moves in 16-byte chunks (4 floats or 8 halves).  Within a segment the
// chunks are dealt round-robin to the threads of the blocks that share it (a grid-stride loop),
// so every thread moves the same number of chunks, give or take one, and at any moment the blocks
// work on neighbouring addresses.  (An earlier version gave each block one contiguous range
// instead: 3421 GB/s against 4107 for the grid-stride add_vectorized at 16384^2 on an H200,
// 2026-11-24 - a thousand concurrent streams far apart in memory.)
// Alignment is taken from `c`: the elements up to c's first 16-byte boundary are done singly,
// then 16-byte stores; `a` and `b` are read as 16-byte vectors when they share c's offset within
// 16 bytes, else element by element (still coalesced across the warp).  kItems chunks per input
// per thread are loaded before the first store, so kItems * 32 bytes per thread are in flight.
// kCache picks the cache hints of the 16-byte accesses (StreamingCache in add_params.hpp).
#pragma once
#include <cstdint>

#include "add_element.cuh"

namespace kiln::elementwise {

// 0: plain loads through the read-only path and plain stores; 1: __ldcs / __stcs (evict-first);
// 2: ld.global.nc.L1::no_allocate.L2::256B (no L1 line, 256-byte L2 prefetch) and st.global.cs.
template <int kCache>
__device__ __forceinline__ uint4 load16(const uint4* p) {
  if constexpr (kCache == 1) {
    return __ldcs(p);
  } else if constexpr (kCache == 2) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
  } else {
    return __ldg(p);
  }
}

template <int kCache>
__device__ __forceinline__ void store16(uint4* p, uint4 v) {
  if constexpr (kCache == 1) {
    __stcs(p, v);
  } else if constexpr (kCache == 2) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
  } else {
    *p = v;
  }
}

// 16 bytes of T from p (aligned to T only), element by element.
template <class T>
__device__ __forceinline__ uint4 load16_unaligned(const T* p) {
  constexpr int kVec = 16 / sizeof(T);
  uint4 v;
  T* e = reinterpret_cast<T*>(&v);
#pragma unroll
  for (int i = 0; i < kVec; ++i) e[i] = p[i];
  return v;
}

// The element-wise sum of two 16-byte chunks of T.
template <class T>
__device__ __forceinline__ uint4 add16(uint4 a, uint4 b) {
  constexpr int kVec = 16 / sizeof(T);
  uint4 c;
  const T* ea = reinterpret_cast<const T*>(&a);
  const T* eb = reinterpret_cast<const T*>(&b);
  T* ec = reinterpret_cast<T*>(&c);
#pragma unroll
  for (int i = 0; i < kVec; ++i) ec[i] = add_values(ea[i], eb[i]);
  return c;
}

// No __restrict__: c may be a or b (in place); each element is read, then written, by one thread.
// grid: x shares each segment among gridDim.x blocks; y walks the segments (rows) with a stride.
template <class T, int kItems, int kCache>
__global__ void add_streaming_kernel(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n,
                                     std::int64_t stride_a, std::int64_t stride_b, std::int64_t stride_c) {
  constexpr int kVec = 16 / static_cast<int>(sizeof(T));
  for (std::int64_t row = blockIdx.y; row < m; row += gridDim.y) {
    const T* ar = a + row * stride_a;
    const T* br = b + row * stride_b;
    T* cr = c + row * stride_c;
    // Elements before c's first 16-byte boundary (c is aligned to T: the adapter checks).
    const int misalign = static_cast<int>((reinterpret_cast<std::uintptr_t>(cr) / sizeof(T)) % kVec);
    const std::int64_t head = misalign == 0 ? 0 : (kVec - misalign < n ? kVec - misalign : n);
    const std::int64_t chunks = (n - head) / kVec;
    const std::int64_t tail_start = head + chunks * kVec;
    // Block-uniform: a and b share c's offset within 16 bytes.
    const bool vector_loads =
        (((reinterpret_cast<std::uintptr_t>(ar + head)) | (reinterpret_cast<std::uintptr_t>(br + head))) & 15) == 0;

    const uint4* a16 = reinterpret_cast<const uint4*>(ar + head);
    const uint4* b16 = reinterpret_cast<const uint4*>(br + head);
    uint4* c16 = reinterpret_cast<uint4*>(cr + head);
    const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (std::int64_t base = first; base < chunks; base += threads * kItems) {
      uint4 va[kItems], vb[kItems];
      if (vector_loads) {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
          const std::int64_t j = base + i * threads;
          if (j < chunks) {
            va[i] = load16<kCache>(a16 + j);
            vb[i] = load16<kCache>(b16 + j);
          }
        }
      } else {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
          const std::int64_t j = base + i * threads;
          if (j < chunks) {
            va[i] = load16_unaligned(ar + head + kVec * j);
            vb[i] = load16_unaligned(br + head + kVec * j);
          }
        }
      }
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const std::int64_t j = base + i * threads;
        if (j < chunks) store16<kCache>(c16 + j, add16<T>(va[i], vb[i]));
      }
    }
    // The head (block 0) and the tail after the last whole chunk (the last block), singly;
    // both are shorter than kVec <= 8 elements, and blocks have at least 32 threads.
    if (blockIdx.x == 0 && threadIdx.x < head) cr[threadIdx.x] = add_values(ar[threadIdx.x], br[threadIdx.x]);
    if (blockIdx.x == gridDim.x - 1) {
      const std::int64_t k = tail_start + threadIdx.x;
      if (k < n) cr[k] = add_values(ar[k], br[k]);
    }
  }
}

}  // namespace kiln::elementwise

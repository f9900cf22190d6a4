// Kernel bodies of the histogram family.  They read their parameters from launch arguments and
// the template arguments only; the adapters are in histogram_variants.cu (the thread_private
// kernels are in histogram_thread_private.cuh).  Each kernel is
// generic over a bin rule: ByteBins (histogram, u8) or RangeBins (histogram_range, f32).
// Every kernel adds into `out`, which the adapter zeroes first.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "histogram_bin.hpp"

namespace kiln::histogram {

// u8 data: the byte is the bin.
struct ByteBins {
  using Element = std::uint8_t;
  static constexpr int kPerVector = 16;  // elements in one 16-byte load
  __device__ __forceinline__ int bin_of(std::uint8_t v) const { return v; }
  __device__ __forceinline__ void bins_of(const uint4& v, int (&b)[kPerVector]) const {
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int j = 0; j < 4; ++j) b[4 * i + j] = (w[i] >> (8 * j)) & 0xFFu;
    }
  }
};

// f32 data: even bins over [lo, hi); -1 for values not counted.
struct RangeBins {
  using Element = float;
  static constexpr int kPerVector = 4;
  RangeParams r;
  __device__ __forceinline__ int bin_of(float x) const { return range_bin(x, r); }
  __device__ __forceinline__ void bins_of(const uint4& v, int (&b)[kPerVector]) const {
    b[0] = range_bin(__uint_as_float(v.x), r);
    b[1] = range_bin(__uint_as_float(v.y), r);
    b[2] = range_bin(__uint_as_float(v.z), r);
    b[3] = range_bin(__uint_as_float(v.w), r);
  }
};

// Loads in flight per thread before the atomics of the first one are issued.
inline constexpr int kUnroll = 4;

template <class Bins>
__global__ void histogram_global_atomic_kernel(const typename Bins::Element* __restrict__ data, std::int64_t n,
                                               Bins rule, std::uint32_t* __restrict__ out) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int b = rule.bin_of(__ldg(data + i));
    if (b >= 0) atomicAdd(out + b, 1u);
  }
}

// One block-wide histogram of `nbins` counters in dynamic shared memory (the seed's algorithm),
// a grid-stride loop over elements, merged into `out` with one global atomic per non-zero bin.
template <class Bins>
__global__ void histogram_smem_kernel(const typename Bins::Element* __restrict__ data, std::int64_t n, Bins rule,
                                      int nbins, std::uint32_t* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  auto* counts = reinterpret_cast<std::uint32_t*>(smem_raw);
  for (int i = threadIdx.x; i < nbins; i += blockDim.x) counts[i] = 0;
  __syncthreads();
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int b = rule.bin_of(__ldg(data + i));
    if (b >= 0) atomicAdd(counts + b, 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < nbins; i += blockDim.x) {
    const std::uint32_t c = counts[i];
    if (c != 0) atomicAdd(out + i, c);
  }
}

// Adds a run of equal bins with one atomic: consecutive equal elements of a vector (all of them
// for constant data) cost one shared-memory atomic instead of one each.
template <int V>
__device__ __forceinline__ void add_runs(std::uint32_t* counts, const int (&b)[V], int bin_stride, int copy_offset) {
  int cur = b[0];
  std::uint32_t run = 1;
#pragma unroll
  for (int j = 1; j < V; ++j) {
    if (b[j] == cur) {
      ++run;
    } else {
      if (cur >= 0) atomicAdd(counts + cur * bin_stride + copy_offset, run);
      cur = b[j];
      run = 1;
    }
  }
  if (cur >= 0) atomicAdd(counts + cur * bin_stride + copy_offset, run);
}

// `copies` private sub-histograms per block in dynamic shared memory (copies * nbins counters;
// copies a power of two).  by_lane = 0: warp w adds into copy w % copies, copy c at
// counts[c * nbins + b].  by_lane = 1: lane l adds into copy l % copies, interleaved as
// counts[b * copies + c], so with 32 copies every lane owns one bank and the atomics of a warp
// never conflict.  kVector: 16-byte loads (uint4) after a scalar head up to the first 16-byte
// boundary, scalar tail; the data pointer must be aligned to its element size.
template <class Bins, bool kVector>
__global__ void histogram_private_kernel(const typename Bins::Element* __restrict__ data, std::int64_t n, Bins rule,
                                         int nbins, int copies, int by_lane, std::uint32_t* __restrict__ out) {
  using Element = typename Bins::Element;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  auto* counts = reinterpret_cast<std::uint32_t*>(smem_raw);
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  for (int i = tid; i < nbins * copies; i += blockDim.x) counts[i] = 0;
  // This thread's copy of bin b is counts[b * bin_stride + copy_offset].
  const int bin_stride = by_lane ? copies : 1;
  const int copy_offset = by_lane ? (lane & (copies - 1)) : (warp & (copies - 1)) * nbins;
  __syncthreads();

  const std::int64_t gtid = std::int64_t(blockIdx.x) * blockDim.x + tid;
  const std::int64_t gstride = std::int64_t(gridDim.x) * blockDim.x;
  // Scalar elements of [begin, end), kUnroll loads in flight per thread.
  auto scalar_span = [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t base = begin + gtid; base < end; base += kUnroll * gstride) {
      Element e[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::int64_t i = base + u * gstride;
        if (i < end) e[u] = __ldg(data + i);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (base + u * gstride < end) {
          const int b = rule.bin_of(e[u]);
          if (b >= 0) atomicAdd(counts + b * bin_stride + copy_offset, 1u);
        }
      }
    }
  };
  if constexpr (kVector) {
    // Scalar head up to the first 16-byte boundary, 16-byte body, scalar tail.
    constexpr int V = Bins::kPerVector;
    const auto misalign = reinterpret_cast<std::uintptr_t>(data) & 15u;
    std::int64_t head = std::int64_t(((16u - misalign) & 15u) / sizeof(Element));
    if (head > n) head = n;
    const std::int64_t nvec = (n - head) / V;
    const uint4* vec = reinterpret_cast<const uint4*>(data + head);
    for (std::int64_t base = gtid; base < nvec; base += kUnroll * gstride) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::int64_t i = base + u * gstride;
        if (i < nvec) v[u] = __ldg(vec + i);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (base + u * gstride < nvec) {
          int b[V];
          rule.bins_of(v[u], b);
          add_runs<V>(counts, b, bin_stride, copy_offset);
        }
      }
    }
    scalar_span(0, head);
    scalar_span(head + nvec * V, n);
  } else {
    scalar_span(0, n);
  }
  __syncthreads();

  // Merge the copies; the copy index is rotated by the bin so that a warp's reads of interleaved
  // copies fall in distinct banks.
  const int copy_stride = by_lane ? 1 : nbins;
  for (int b = tid; b < nbins; b += blockDim.x) {
    std::uint32_t sum = 0;
    for (int c = 0; c < copies; ++c) {
      const int cc = (c + b) & (copies - 1);
      sum += counts[b * bin_stride + cc * copy_stride];
    }
    if (sum != 0) atomicAdd(out + b, sum);
  }
}

}  // namespace kiln::histogram


// Kernel bodies of the histogram family.  They read their parameters from launch arguments and
// the template arguments only; the adapters are in histogram_variants.cu.  Each kernel is
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

namespace kiln::histogram {

// histogram_thread_private: no atomics in the main loop.  Every thread owns 256 8-bit counters in
// dynamic shared memory.  The block's threads form groups of 256, each with a 64 KiB sub-tile of
// one 256-byte row per bin; the counter of bin b of thread t is the byte at
//     (t / 256) << 16 | b << 8 | slot(t % 256)
// so one byte permute (PRMT) of the loaded word and the thread's constant `where` = slot | group
// << 8 forms the address.  slot() puts the 32 lanes of a warp in 32 distinct banks (lane l owns
// bytes of words l and l + 32; the 8 warps of a group take those two words and their four bytes).
// A thread counts at most kFlushVectors * 16 = 240 bytes between flushes, so no counter passes
// 255; a flush sums the tile into per-thread register totals and zeroes it.  kIlp = 2 updates two
// bytes at once: both counters are read, then written back, the first one plus one more when both
// bytes are equal (that write lands last and holds both counts): twice the updates in flight per
// thread for two more instructions per pair.
inline constexpr int kFlushVectors = 15;
inline constexpr int kBatch = 5;  // 16-byte loads in flight per thread, double-buffered

// slot | group << 8 for thread `tid` (bytes 0 and 1 of the address; byte 2 is zero).
__device__ __forceinline__ unsigned counter_where(int tid) {
  const int lane = tid & 31, warp = (tid >> 5) & 7;
  const unsigned slot = unsigned(4 * (lane + 32 * (warp & 1)) + (warp >> 1));
  return slot | unsigned(tid >> 8) << 8;
}

// The address of the counter of byte j of `w`: byte 0 from where.byte0 (slot), byte 1 from w.byte
// j (the bin), byte 2 from where.byte1 (group), byte 3 from where.byte2 (zero).
template <int j>
__device__ __forceinline__ unsigned counter_address(unsigned w, unsigned where) {
  return __byte_perm(w, where, 0x6504u | (j << 4));
}

template <int kIlp>
__device__ __forceinline__ void count_word(unsigned char* tile, unsigned where, unsigned w) {
  const unsigned a[4] = {counter_address<0>(w, where), counter_address<1>(w, where), counter_address<2>(w, where),
                         counter_address<3>(w, where)};
  if constexpr (kIlp == 1) {
#pragma unroll
    for (int j = 0; j < 4; ++j) tile[a[j]] = static_cast<unsigned char>(tile[a[j]] + 1);
  } else {
#pragma unroll
    for (int j = 0; j < 4; j += 2) {
      const unsigned c0 = tile[a[j]], c1 = tile[a[j + 1]];
      tile[a[j + 1]] = static_cast<unsigned char>(c1 + 1);
      tile[a[j]] = static_cast<unsigned char>(c0 + 1 + (a[j] == a[j + 1] ? 1 : 0));
    }
  }
}

// Adds the tile into `total` (bin tid % 256, the row this thread sums) and zeroes it.  Thread t
// sums the 256 bytes at tile[256 t ..] (row t % 256 of group t / 256) in 16-byte chunks rotated by
// the lane so that a warp's reads spread over the banks; even and odd bytes are added in 16-bit
// lanes (64 words * 255 < 65536).
__device__ __forceinline__ void flush_tile(unsigned char* tile, int tid, std::uint32_t& total) {
  constexpr int kChunks = 16;
  const int lane = tid & 31;
  uint4* row = reinterpret_cast<uint4*>(tile + 256 * tid);
  std::uint32_t even = 0, odd = 0;
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    uint4* chunk = row + ((i + lane) & (kChunks - 1));
    const uint4 v = *chunk;
    *chunk = make_uint4(0, 0, 0, 0);
    even += (v.x & 0x00FF00FFu) + (v.y & 0x00FF00FFu);
    even += (v.z & 0x00FF00FFu) + (v.w & 0x00FF00FFu);
    odd += __byte_perm(v.x, 0, 0x4341) + __byte_perm(v.y, 0, 0x4341);
    odd += __byte_perm(v.z, 0, 0x4341) + __byte_perm(v.w, 0, 0x4341);
  }
  total += (even & 0xFFFFu) + (even >> 16) + (odd & 0xFFFFu) + (odd >> 16);
}

// Residency the register budget is planned for: 768 threads per SM (the shared memory allows no more).
template <int kBlock>
inline constexpr int kThreadPrivateMinBlocks = 768 / kBlock > 0 ? 768 / kBlock : 1;

template <int kBlock, int kIlp>
__global__ void __launch_bounds__(kBlock, kThreadPrivateMinBlocks<kBlock>) histogram_thread_private_kernel(const std::uint8_t* __restrict__ data,
                                                                          std::int64_t n,
                                                                          std::uint32_t* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char tile[];  // 256 * kBlock bytes
  const int tid = threadIdx.x;
  {
    uint4* words = reinterpret_cast<uint4*>(tile);
    for (int i = tid; i < 16 * kBlock; i += kBlock) words[i] = make_uint4(0, 0, 0, 0);
  }
  static_assert(kBlock % 256 == 0 && kBlock <= 1024, "groups of 256 threads");
  const unsigned where = counter_where(tid);
  std::uint32_t total = 0;

  // Scalar head up to the first 16-byte boundary and scalar tail: a few global atomics.
  const auto misalign = reinterpret_cast<std::uintptr_t>(data) & 15u;
  std::int64_t head = std::int64_t((16u - misalign) & 15u);
  if (head > n) head = n;
  const std::int64_t nvec = (n - head) / 16;
  if (blockIdx.x == 0) {
    for (std::int64_t i = tid; i < head; i += kBlock) atomicAdd(out + data[i], 1u);
    for (std::int64_t i = head + nvec * 16 + tid; i < n; i += kBlock) atomicAdd(out + data[i], 1u);
  }
  __syncthreads();

  // Each block takes a contiguous range of vectors, in rounds of kFlushVectors per thread, loaded
  // kBatch at a time with the next batch in flight while this one is counted.
  const std::int64_t per_block = (nvec + gridDim.x - 1) / gridDim.x;
  const std::int64_t begin = std::int64_t(blockIdx.x) * per_block;
  const std::int64_t end = begin + per_block < nvec ? begin + per_block : nvec;
  const uint4* vec = reinterpret_cast<const uint4*>(data + head) + tid;
  // How far past `base` this thread's vectors may go, capped to a batch (32-bit compares below).
  auto limit = [&](std::int64_t base) {
    const std::int64_t left = end - base - tid;
    return left <= 0 ? 0 : left >= kBatch * kBlock ? kBatch * kBlock : int(left);
  };
  auto load = [&](std::int64_t base, uint4 (&v)[kBatch]) {
    const int lim = limit(base);
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      if (u * kBlock < lim) v[u] = __ldg(vec + base + u * kBlock);
    }
  };
  static_assert(kFlushVectors % kBatch == 0, "a round is whole batches");
  uint4 cur[kBatch];
  load(begin, cur);
  for (std::int64_t base = begin; base < end;) {  // block-uniform: every thread flushes together
#pragma unroll
    for (int b = 0; b < kFlushVectors / kBatch; ++b) {
      const std::int64_t next = base + std::int64_t(kBatch) * kBlock;
      const int lim = limit(base);
      uint4 ahead[kBatch];
      load(next, ahead);
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        if (u * kBlock < lim) {
          count_word<kIlp>(tile, where, cur[u].x);
          count_word<kIlp>(tile, where, cur[u].y);
          count_word<kIlp>(tile, where, cur[u].z);
          count_word<kIlp>(tile, where, cur[u].w);
        }
        cur[u] = ahead[u];
      }
      base = next;
    }
    __syncthreads();
    flush_tile(tile, tid, total);
    __syncthreads();
  }
  if (total != 0) atomicAdd(out + (tid & 255), total);  // the bin this thread summed
}

}  // namespace kiln::histogram

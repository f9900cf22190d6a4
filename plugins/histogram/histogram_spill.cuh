// histogram_spill and histogram_range_spill: the per-thread 8-bit counters of thread_private
// (histogram_thread_private.cuh: same tile layout, same counter addresses), but a counter that
// passes 255 spills 256 into a block-wide 32-bit count instead of the whole tile being flushed
// every 240 elements.  The periodic flush (two barriers and a read and a zeroing of 256 bytes per
// thread) was about a fifth of the shared-memory wavefronts of a byte: without it the main loop
// has no barrier and touches shared memory twice per counted element (plus, rarely, one atomic).
// The tile is summed once, at the end.
//
// Bytes, kAdaptive = 1: before each batch of loads a warp looks at its first load and picks one
// of three ways to count the batch (warp-uniform, so no lane waits for another's path):
//   - runs: every lane's 16 bytes hold at most kRunsMax runs of equal bytes (constant data, long
//     runs): each run is one counter update of its length;
//   - hot values: at most kMaxHot byte values cover nearly all of a sample of the warp's bytes
//     (skewed, few-valued data): each word is compared with each hot value in SIMD (a zero-byte
//     test), the matches are counted in registers and added once per batch, and only the bytes
//     that match none are counted one by one;
//   - else (uniform-looking bytes) every byte updates its counter.
// Every path is exact for any data; the choice only moves the cost.
//
// Measured (H100, 2026-11-26, README): the runs path pays (1 GiB of runs of 1 to 64 bytes: 392 us
// against 459 per byte, 1.01x CUB), the hot-values path barely (two values: 481 against 515 us;
// four: 549 against 517, a loss): its SIMD comparisons are integer instructions, which a Hopper SM
// issues at half the rate of its 32-bit float ones, so (by our count) they cost more than the
// shared-memory updates they replace.  The spill branch itself costs on data whose counters often pass 255
// (four values: 517 against 460 us for uniform bytes).
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "histogram_kernels.cuh"
#include "histogram_thread_private.cuh"

namespace kiln::histogram {

inline constexpr int kRunsMax = 4;    // runs per 16-byte load (in every lane) that take the runs path
inline constexpr int kMaxHot = 4;     // hot values compared per word at most
inline constexpr int kHotEach = 3;    // loads of a batch of few-valued bytes counted per byte
inline constexpr int kSpillBins = 256;  // block-wide 32-bit overflow counts (one per bin)

// Adds `inc` (<= 256) to the 8-bit counter at `a`; a counter passing 255 keeps its low 8 bits and
// spills 256 into spill[bin].  Returns nothing: the caller's next update of the same counter
// reads what this one stored (same thread, program order).
__device__ __forceinline__ void add_counter(unsigned char* tile, unsigned a, unsigned inc, std::uint32_t* spill,
                                            unsigned bin) {
  const unsigned v = tile[a] + inc;
  tile[a] = static_cast<unsigned char>(v);
  if (v > 255u) atomicAdd(spill + bin, 256u);
}

// One word of bytes, one update each; the four overflow tests share one branch.
__device__ __forceinline__ void count_word_spill(unsigned char* tile, unsigned where, unsigned w,
                                                 std::uint32_t* spill) {
  const unsigned a0 = counter_address<0>(w, where), a1 = counter_address<1>(w, where);
  const unsigned a2 = counter_address<2>(w, where), a3 = counter_address<3>(w, where);
  const unsigned v0 = tile[a0] + 1u;
  tile[a0] = static_cast<unsigned char>(v0);
  const unsigned v1 = tile[a1] + 1u;
  tile[a1] = static_cast<unsigned char>(v1);
  const unsigned v2 = tile[a2] + 1u;
  tile[a2] = static_cast<unsigned char>(v2);
  const unsigned v3 = tile[a3] + 1u;
  tile[a3] = static_cast<unsigned char>(v3);
  if ((v0 | v1 | v2 | v3) & 0x100u) {  // some counter wrapped from 255 to 0 (each v <= 256)
    if (v0 & 0x100u) atomicAdd(spill + (w & 0xFFu), 256u);
    if (v1 & 0x100u) atomicAdd(spill + ((w >> 8) & 0xFFu), 256u);
    if (v2 & 0x100u) atomicAdd(spill + ((w >> 16) & 0xFFu), 256u);
    if (v3 & 0x100u) atomicAdd(spill + (w >> 24), 256u);
  }
}

// The runs path: one update per run of equal bytes in this thread's load.
__device__ __forceinline__ void count_runs(unsigned char* tile, unsigned where, const uint4& v, std::uint32_t* spill) {
  unsigned starts = run_starts(v);
  while (starts != 0) {
    const unsigned q = __ffs(starts) - 1;
    starts &= starts - 1;
    const unsigned next = starts != 0 ? unsigned(__ffs(starts) - 1) : 16u;
    const unsigned bin = byte_of(v, q);
    add_counter(tile, counter_address<0>(bin, where), next - q, spill, bin);
  }
}

// The hot-values path for one load: matches of the nhot values (each repeated in hot[k]) are
// added to match[k]; the other bytes update their counters one by one.
template <int kMax>
__device__ __forceinline__ void count_hot(unsigned char* tile, unsigned where, const uint4& v, std::uint32_t* spill,
                                          const unsigned (&hot)[kMax], int nhot, unsigned (&miss)[kMax]) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
  unsigned rest = 0;  // bit q: byte q matches no hot value
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    unsigned left = 0x80808080u;
#pragma unroll
    for (int k = 0; k < kMax; ++k) {
      if (k < nhot) {
        const unsigned d = differing_bytes(w[i], hot[k]);
        miss[k] += __popc(d);
        left &= d;
      }
    }
    rest |= byte_mask4(left) << (4 * i);
  }
  while (rest != 0) {
    const unsigned q = __ffs(rest) - 1;
    rest &= rest - 1;
    const unsigned bin = byte_of(v, q);
    add_counter(tile, counter_address<0>(bin, where), 1u, spill, bin);
  }
}

enum class SpillPath { each, runs, hot };

// The warp's choice for a batch whose first load is `v` (valid: this lane has that load).  Hot
// values are the most frequent first bytes of the 32 lanes, kept while each covers at least 3
// lanes; the path is taken when the values left over are few enough that the one-by-one bytes
// cost less than the comparisons save (counted in instructions per load; see the README).
// nhot gets the number of hot values, negated when the sample had no other value.
__device__ __forceinline__ SpillPath choose_spill_path(const uint4& v, bool valid, unsigned (&hot)[kMaxHot],
                                                       int& nhot) {
  constexpr unsigned kAll = 0xFFFFFFFFu;
  const unsigned runs = valid ? unsigned(__popc(run_starts(v))) : 0u;
  if (__reduce_max_sync(kAll, runs) <= unsigned(kRunsMax)) return SpillPath::runs;
  const unsigned lane = threadIdx.x & 31u;
  const unsigned sample = valid ? (v.x & 0xFFu) : 256u + lane;  // no load: a value of its own
  unsigned key = unsigned(__popc(__match_any_sync(kAll, sample))) << 9 | sample;
  int covered = 0;
  nhot = 0;
#pragma unroll
  for (int k = 0; k < kMaxHot; ++k) {
    const unsigned top = __reduce_max_sync(kAll, key);
    const unsigned value = top & 511u, count = top >> 9;
    if (count < 3u || value > 255u) break;
    hot[nhot++] = value * 0x01010101u;
    covered += int(count);
    if (sample == value) key = 0;
  }
  // Only when the hot values cover the whole sample: with bytes left over (nine in ten bytes one
  // value, the rest uniform) the one-by-one loop over the others measured 28% slower than
  // per-byte updates (H100, 2026-11-26).  Returned negative: some loads take the per-byte updates.
  const bool worth = nhot >= 1 && covered == 32;
  if (worth) nhot = -nhot;
  return worth ? SpillPath::hot : SpillPath::each;
}

// `nbins` <= 256 (ByteBins: 256).  Each block takes a contiguous range of 16-byte vectors, loaded
// kBatch at a time with the next batch in flight while this one is counted; the scalar head (up
// to the first 16-byte boundary) and tail are counted by block 0 with global atomics.
template <class Bins, int kBlock, int kAdaptive>
__global__ void __launch_bounds__(kBlock, kThreadPrivateMinBlocks<kBlock>)
    histogram_spill_kernel(const typename Bins::Element* __restrict__ data, std::int64_t n, Bins rule, int nbins,
                           std::uint32_t* __restrict__ out) {
  constexpr bool kBytes = std::is_same_v<Bins, ByteBins>;
  static_assert(kBytes || kAdaptive == 0, "floats have one path");
  static_assert(kBlock % 256 == 0 && kBlock <= 1024, "groups of 256 threads");
  constexpr int V = Bins::kPerVector;
  constexpr int kB = kBatch<Bins>;
  // 256 * kBlock bytes of 8-bit counters, then 256 32-bit spill counts.
  extern __shared__ __align__(16) unsigned char tile[];
  std::uint32_t* const spill = reinterpret_cast<std::uint32_t*>(tile + 256 * kBlock);
  const int tid = threadIdx.x;
  {
    uint4* words = reinterpret_cast<uint4*>(tile);
    constexpr int kWords = (256 * kBlock + 4 * kSpillBins) / 16;
    for (int i = tid; i < kWords; i += kBlock) words[i] = make_uint4(0, 0, 0, 0);
  }
  const unsigned where = counter_where(tid);

  const std::int64_t head = aligned_head(data, n);
  const std::int64_t nvec = (n - head) / V;
  if (blockIdx.x == 0) {
    auto scalar = [&](std::int64_t i) {
      const int b = rule.bin_of(data[i]);
      if (b >= 0) atomicAdd(out + b, 1u);
    };
    for (std::int64_t i = tid; i < head; i += kBlock) scalar(i);
    for (std::int64_t i = head + nvec * V + tid; i < n; i += kBlock) scalar(i);
  }
  __syncthreads();

  const std::int64_t per_block = (nvec + gridDim.x - 1) / gridDim.x;
  const std::int64_t begin = std::int64_t(blockIdx.x) * per_block;
  const std::int64_t end = begin + per_block < nvec ? begin + per_block : nvec;
  const uint4* vec = reinterpret_cast<const uint4*>(data + head) + tid;
  // How far past `base` this thread's vectors may go, capped to a batch (32-bit compares below).
  auto limit = [&](std::int64_t base) {
    const std::int64_t left = end - base - tid;
    return left <= 0 ? 0 : left >= kB * kBlock ? kB * kBlock : int(left);
  };
  auto load = [&](std::int64_t base, uint4 (&v)[kB]) {
    const int lim = limit(base);
#pragma unroll
    for (int u = 0; u < kB; ++u) v[u] = u * kBlock < lim ? __ldg(vec + base + u * kBlock) : make_uint4(0, 0, 0, 0);
  };
  // Counts one batch of this thread's loads u with u * kBlock < lim.
  auto count = [&](const uint4 (&v)[kB], int lim) {
    if constexpr (kBytes) {
      SpillPath path = SpillPath::each;
      unsigned hot[kMaxHot] = {0, 0, 0, 0};
      int nhot = 0;
      if constexpr (kAdaptive == 1) path = choose_spill_path(v[0], lim > 0, hot, nhot);
      if (path == SpillPath::runs) {
#pragma unroll
        for (int u = 0; u < kB; ++u)
          if (u * kBlock < lim) count_runs(tile, where, v[u], spill);
      } else if (path == SpillPath::hot) {
        // With no leftover in the sample (few-valued data) the first kHotEach loads take the
        // per-byte updates: they load the shared-memory pipe while the comparisons of the others
        // load the ALUs, and the two run side by side.
        const int each = nhot < 0 ? -nhot : 0;
        nhot = nhot < 0 ? -nhot : nhot;
        unsigned miss[kMaxHot] = {0, 0, 0, 0};
        int loads = 0;
#pragma unroll
        for (int u = 0; u < kB; ++u) {
          if (u * kBlock < lim) {
            if (u < kHotEach && each != 0) {
              count_word_spill(tile, where, v[u].x, spill);
              count_word_spill(tile, where, v[u].y, spill);
              count_word_spill(tile, where, v[u].z, spill);
              count_word_spill(tile, where, v[u].w, spill);
            } else {
              count_hot(tile, where, v[u], spill, hot, nhot, miss);
              ++loads;
            }
          }
        }
#pragma unroll
        for (int k = 0; k < kMaxHot; ++k) {
          const unsigned matches = 16u * unsigned(loads) - miss[k];
          if (k < nhot && matches != 0) {
            const unsigned bin = hot[k] & 0xFFu;
            add_counter(tile, counter_address<0>(bin, where), matches, spill, bin);
          }
        }
      } else {
#pragma unroll
        for (int u = 0; u < kB; ++u) {
          if (u * kBlock < lim) {
            count_word_spill(tile, where, v[u].x, spill);
            count_word_spill(tile, where, v[u].y, spill);
            count_word_spill(tile, where, v[u].z, spill);
            count_word_spill(tile, where, v[u].w, spill);
          }
        }
      }
    } else {
#pragma unroll
      for (int u = 0; u < kB; ++u) {
        if (u * kBlock < lim) {
          int b[V];
          rule.bins_of(v[u], b);
#pragma unroll
          for (int j = 0; j < V; ++j) {
            if (b[j] >= 0) add_counter(tile, counter_address<0>(unsigned(b[j]), where), 1u, spill, unsigned(b[j]));
          }
        }
      }
    }
  };

  // Bytes without the look: three batches per iteration, unrolled (as the 2026-11-22 kernel; the
  // loads past `end` are predicated off).  Otherwise one, rolled: the paths' code is large.
  constexpr int kUnrolled = kBytes && kAdaptive == 0 ? 3 : 1;
  uint4 cur[kB];
  load(begin, cur);
  // No barrier in this loop: blocks and warps run through their ranges independently.
#pragma unroll 1
  for (std::int64_t base = begin; base < end;) {
#pragma unroll
    for (int r = 0; r < kUnrolled; ++r) {
      const std::int64_t next = base + std::int64_t(kB) * kBlock;
      const int lim = limit(base);
      uint4 ahead[kB];
      load(next, ahead);
      count(cur, lim);
#pragma unroll
      for (int u = 0; u < kB; ++u) cur[u] = ahead[u];
      base = next;
    }
  }
  __syncthreads();
  std::uint32_t total = 0;
  flush_tile(tile, tid, total);  // row tid % 256 of group tid / 256: bin tid % 256
  const int bin = tid & 255;
  if (tid < 256) total += spill[bin];
  if (total != 0 && bin < nbins) atomicAdd(out + bin, total);
}

}  // namespace kiln::histogram

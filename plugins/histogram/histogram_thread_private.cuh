// histogram_thread_private and histogram_range_thread_private: private counters, no contention.
// Every thread owns 256 8-bit counters in dynamic shared memory.  The block's threads form groups
// of 256, each with a 64 KiB sub-tile of one 256-byte row per bin; the counter of bin b of thread
// t is the byte at
//     (t / 256) << 16 | b << 8 | slot(t % 256)
// so one byte permute (PRMT) of the bin and the thread's constant `where` = slot | group << 8
// forms the address.  slot() puts the 32 lanes of a warp in 32 distinct banks (lane l owns bytes
// of words l and l + 32; the 8 warps of a group take those two words and their four bytes), so a
// warp's counter updates never conflict, whatever the data.  A thread counts at most
// kCountsPerFlush = 240 elements between flushes, so no counter passes 255; a flush sums the tile
// into per-thread register totals and zeroes it.
//
// The bin rule is a template argument: ByteBins (u8: the address of a byte's counter is one PRMT
// of the loaded word) or RangeBins (f32, at most 256 bins: range_bin, then the same counters;
// values outside [lo, hi) and NaN update nothing).  kIlp = 2 (bytes only) updates two bytes at
// once: both counters are read, then written back, the first one plus one more when both bytes are
// equal (that write lands last and holds both counts).  kIlp = 0 reads nothing back: a counter is
// bumped by one shared atomicAdd of 1 << 8 * (its byte) to its 32-bit word (the word of slot & ~3;
// the other three bytes belong to other warps' threads and never carry: no counter passes 255
// between flushes).  One instruction and no load-to-use wait per byte in place of load, add and
// store: ncu (H200, 2026-11-26) showed the kIlp = 1 kernel waiting on shared-memory loads (short
// scoreboard, 7.2 of 11.6 cycles per instruction) with the shared-memory pipe 87% busy.
//
// Bytes: the counters cost the same whatever the data, but CUB's shared-memory atomics get faster
// when a warp's bytes fall in few bins (the hardware merges a warp's atomics to one address).
// kAdaptive (bytes only) > 0 makes each warp look at the first load of every batch first
// (warp-uniform decisions):
//   - every lane's first load holds at most `runs_max` runs of equal bytes (constant data, runs,
//     data skewed to one value): one update per run (a load of 16 equal bytes: one +16); the
//     periodic flush keeps every counter below 256, so unlike histogram_spill this path needs no
//     overflow test;
//   - kAdaptive = 2: the first bytes of the 32 lanes take at most `few_bins` values (skewed,
//     few-valued data): the batch goes into the block's 256 32-bit counters with shared atomics,
//     one per byte, as CUB counts (the hardware merges a warp's atomics to one address; one
//     1 KiB histogram per block, not one per warp: 8 KiB more per 256 threads pushed three blocks
//     past the 196 KiB carveout);
//   - else the private 8-bit counters, four instructions per byte.
// Bytes with kAdaptive = 0 take histogram_thread_private_plain_kernel below: the private counters
// alone, the round fully unrolled, 256 bytes of shared memory per thread (the fastest on uniform
// bytes).
#pragma once
#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "histogram_kernels.cuh"

namespace kiln::histogram {

inline constexpr int kCountsPerFlush = 240;  // elements per thread between flushes (<= 255)

// 16-byte loads in flight per thread, double-buffered: floats need more bytes in flight to reach
// the DRAM bandwidth (768 threads per SM); bytes are bound by the counters, not by the loads.
template <class Bins>
inline constexpr int kBatch = std::is_same_v<Bins, RangeBins> ? 6 : 5;
// Shared memory of the block's 32-bit histogram (bytes with kAdaptive = 2 only), after the 8-bit
// counters.  The others keep to 256 bytes per thread: three 256-thread blocks then fit an SM's
// 196 KiB shared-memory carveout, which leaves 60 KiB of L1 for the loads in flight; more needs
// the 228 KiB carveout (28 KiB of L1), measured 6-9% slower with 288 bytes per thread (README).
template <class Bins, int kAdaptive>
inline constexpr int kBlockHistBytes = std::is_same_v<Bins, ByteBins> && kAdaptive == 2 ? 256 * 4 : 0;

// 16-byte loads per thread between flushes: 15 for bytes, 60 for floats.
template <class Bins>
inline constexpr int kFlushVectors = kCountsPerFlush / Bins::kPerVector;

// slot | group << 8 for thread `tid` (bytes 0 and 1 of the address; byte 2 is zero).
__device__ __forceinline__ unsigned counter_where(int tid) {
  const int lane = tid & 31, warp = (tid >> 5) & 7;
  const unsigned slot = unsigned(4 * (lane + 32 * (warp & 1)) + (warp >> 1));
  return slot | unsigned(tid >> 8) << 8;
}

// The address of the counter of the bin in byte j of `w`: byte 0 from where.byte0 (slot), byte 1
// from w.byte j (the bin), byte 2 from where.byte1 (group), byte 3 from where.byte2 (zero).
template <int j>
__device__ __forceinline__ unsigned counter_address(unsigned w, unsigned where) {
  return __byte_perm(w, where, 0x6504u | (j << 4));
}

// kIlp = 0: the increment of this thread's byte in its counter's 32-bit word.
__device__ __forceinline__ unsigned counter_increment(unsigned where) { return 1u << (8 * (where & 3u)); }

// kIlp = 0: adds `count` to the counter whose 32-bit word is at byte address `a` (formed from
// word_where(where), so that the permute gives the word's address at once; the word's other bytes
// are unchanged).
__device__ __forceinline__ void bump_counter(unsigned char* tile, unsigned a, unsigned where, unsigned count) {
  atomicAdd(reinterpret_cast<unsigned*>(tile + a), count * counter_increment(where));
}

// kIlp = 0: `where` with the slot's byte-in-word bits cleared.
__device__ __forceinline__ unsigned word_where(unsigned where) { return where & ~3u; }

template <int kIlp>
__device__ __forceinline__ void count_word(unsigned char* tile, unsigned where, unsigned w) {
  if constexpr (kIlp == 0) {
    const unsigned ww = word_where(where);
    bump_counter(tile, counter_address<0>(w, ww), where, 1u);
    bump_counter(tile, counter_address<1>(w, ww), where, 1u);
    bump_counter(tile, counter_address<2>(w, ww), where, 1u);
    bump_counter(tile, counter_address<3>(w, ww), where, 1u);
    return;
  }
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

// 0x80 in each byte of w that differs from the same byte of `other`, 0 where they are equal:
// exact (no borrow crosses a byte).
__device__ __forceinline__ unsigned differing_bytes(unsigned w, unsigned other) {
  const unsigned x = w ^ other;
  return (((x & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | x) & 0x80808080u;
}

// Byte q (0..15) of a 16-byte load.
__device__ __forceinline__ unsigned byte_of(const uint4& v, unsigned q) {
  const unsigned lo = __byte_perm(v.x, v.y, q & 7u), hi = __byte_perm(v.z, v.w, q & 7u);
  return (q & 8u ? hi : lo) & 0xFFu;
}

// Bits 0..3 = bytes 0..3 of a word holding 0x80 or 0 per byte (the multiply gathers bits 7, 15,
// 23, 31 into bits 28..31 without carries).
__device__ __forceinline__ unsigned byte_mask4(unsigned m80) { return (m80 * 0x00204081u) >> 28; }

// Bit q set when byte q of the load starts a run (differs from byte q - 1; byte 0 always).
__device__ __forceinline__ unsigned run_starts(const uint4& v) {
  const unsigned s0 = differing_bytes(v.x, v.x << 8) | 0x80u;
  const unsigned s1 = differing_bytes(v.y, __funnelshift_l(v.x, v.y, 8));
  const unsigned s2 = differing_bytes(v.z, __funnelshift_l(v.y, v.z, 8));
  const unsigned s3 = differing_bytes(v.w, __funnelshift_l(v.z, v.w, 8));
  return byte_mask4(s0) | byte_mask4(s1) << 4 | byte_mask4(s2) << 8 | byte_mask4(s3) << 12;
}

// The runs path of thread_private (no spill: a thread adds at most kCountsPerFlush between flushes,
// so no counter passes 255): a load of 16 equal bytes is one +16, else one update per run of
// equal bytes.
// kIlp = 0: with atomics, as every other update of the tile then.
template <int kIlp>
__device__ __forceinline__ void count_runs_private(unsigned char* tile, unsigned where, const uint4& v) {
  const unsigned rep = __byte_perm(v.x, 0, 0);
  if (v.x == rep && v.y == rep && v.z == rep && v.w == rep) {
    if constexpr (kIlp == 0) {
      bump_counter(tile, counter_address<0>(v.x, word_where(where)), where, 16u);
    } else {
      unsigned char* c = tile + counter_address<0>(v.x, where);
      *c = static_cast<unsigned char>(*c + 16);
    }
    return;
  }
  unsigned starts = run_starts(v);
  while (starts != 0) {
    const unsigned q = __ffs(starts) - 1;
    starts &= starts - 1;
    const unsigned next = starts != 0 ? unsigned(__ffs(starts) - 1) : 16u;
    if constexpr (kIlp == 0) {
      bump_counter(tile, counter_address<0>(byte_of(v, q), word_where(where)), where, next - q);
    } else {
      unsigned char* c = tile + counter_address<0>(byte_of(v, q), where);
      *c = static_cast<unsigned char>(*c + (next - q));
    }
  }
}

// How a warp counts a batch of bytes (see the file comment); loads u < lim / kBlock are this
// thread's.  Called by all 32 lanes of the warp together; the answer is the same for all.
enum class BytePath { runs, few_bins, private8 };

template <int kB, int kBlock, int kAdaptive>
__device__ __forceinline__ BytePath choose_path(const uint4 (&v)[kB], int lim, int runs_max, int few_bins) {
  if constexpr (kAdaptive == 0) return BytePath::private8;
  // Runs: every lane's first load holds at most runs_max runs of equal bytes.  Predicted to pay up
  // to about 8 runs (half a byte's shared-memory wavefronts per run); measured, anything above 1
  // (loads of 16 equal bytes) lost (README, 2026-11-26), hence kDefaultRunsMax = 1.
  const unsigned runs = lim > 0 ? unsigned(__popc(run_starts(v[0]))) : 0u;
  if (__reduce_max_sync(0xFFFFFFFFu, runs) <= unsigned(runs_max)) return BytePath::runs;
  if constexpr (kAdaptive == 1) return BytePath::private8;
  const int lane = threadIdx.x & 31;
  const unsigned sample = lim > 0 ? (v[0].x & 0xFFu) : 256u + unsigned(lane);  // no load: a bin of its own
  const unsigned peers = __match_any_sync(0xFFFFFFFFu, sample);
  const int distinct = __popc(__ballot_sync(0xFFFFFFFFu, (__ffs(peers) - 1) == lane));
  return distinct <= few_bins ? BytePath::few_bins : BytePath::private8;
}

template <int kIlp, int kB, int kBlock>
__device__ __forceinline__ void count_batch(BytePath path, unsigned char* tile, std::uint32_t* block_hist,
                                            unsigned where, const uint4 (&v)[kB], int lim, const ByteBins&) {
  if (path == BytePath::runs) {
#pragma unroll
    for (int u = 0; u < kB; ++u) {
      if (u * kBlock < lim) count_runs_private<kIlp>(tile, where, v[u]);
    }
  } else if (path == BytePath::few_bins) {
#pragma unroll
    for (int u = 0; u < kB; ++u) {
      if (u * kBlock < lim) {
        const unsigned w[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
#pragma unroll
          for (int j = 0; j < 4; ++j) atomicAdd(block_hist + ((w[i] >> (8 * j)) & 0xFFu), 1u);
        }
      }
    }
  } else {
#pragma unroll
    for (int u = 0; u < kB; ++u) {
      if (u * kBlock < lim) {
        count_word<kIlp>(tile, where, v[u].x);
        count_word<kIlp>(tile, where, v[u].y);
        count_word<kIlp>(tile, where, v[u].z);
        count_word<kIlp>(tile, where, v[u].w);
      }
    }
  }
}

template <int kB, int kBlock, int kAdaptive>
__device__ __forceinline__ BytePath choose_path(const uint4 (&)[kB], int, int, int, const RangeBins&) {
  return BytePath::private8;
}
template <int kB, int kBlock, int kAdaptive>
__device__ __forceinline__ BytePath choose_path(const uint4 (&v)[kB], int lim, int runs_max, int few_bins,
                                               const ByteBins&) {
  return choose_path<kB, kBlock, kAdaptive>(v, lim, runs_max, few_bins);
}

// Counts one batch of loads of floats (bins <= 256, so a bin is one byte of the address).
template <int kIlp, int kB, int kBlock>
__device__ __forceinline__ void count_batch(BytePath, unsigned char* tile, std::uint32_t*, unsigned where,
                                            const uint4 (&v)[kB], int lim, const RangeBins& rule) {
#pragma unroll
  for (int u = 0; u < kB; ++u) {
    if (u * kBlock < lim) {
      int b[RangeBins::kPerVector];
      rule.bins_of(v[u], b);
#pragma unroll
      for (int j = 0; j < RangeBins::kPerVector; ++j) {
        if (b[j] >= 0) {
          if constexpr (kIlp == 0) {
            bump_counter(tile, counter_address<0>(unsigned(b[j]), word_where(where)), where, 1u);
          } else {
            const unsigned a = counter_address<0>(unsigned(b[j]), where);
            tile[a] = static_cast<unsigned char>(tile[a] + 1);
          }
        }
      }
    }
  }
}

// Adds the tile into `total` (bin tid % 256, the row this thread sums) and zeroes it.  Thread t
// sums the 256 bytes at tile[256 t ..] (row t % 256 of group t / 256) in 16-byte chunks rotated by
// the lane so that a warp's reads spread over the banks; one __dp4a with 0x01010101 adds the four
// bytes of a word (until 2026-11-26, eighth session: masks and permutes into 16-bit lanes, about
// four instructions a word, a fifth of the ilp 0 kernel's instructions by our count).  The last flush of a block leaves the tile as it is (`zero`
// false): on small inputs, where a block counts a few loads per thread, zeroing and summing the
// tile are most of its shared-memory traffic.
__device__ __forceinline__ void flush_tile(unsigned char* tile, int tid, std::uint32_t& total, bool zero = true) {
  constexpr int kChunks = 16;
  const int lane = tid & 31;
  uint4* row = reinterpret_cast<uint4*>(tile + 256 * tid);
  constexpr unsigned kOnes = 0x01010101u;
  std::uint32_t sx = 0, sy = 0, sz = 0, sw = 0;  // four chains in flight
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    uint4* chunk = row + ((i + lane) & (kChunks - 1));
    const uint4 v = *chunk;
    if (zero) *chunk = make_uint4(0, 0, 0, 0);
    sx = __dp4a(v.x, kOnes, sx);
    sy = __dp4a(v.y, kOnes, sy);
    sz = __dp4a(v.z, kOnes, sz);
    sw = __dp4a(v.w, kOnes, sw);
  }
  total += (sx + sy) + (sz + sw);
}

// flush_tile with zeroing by one atomicExch(word, 0) per word (the generic kernel's `exchange`
// flush): 64 word reads that also zero, lane l starting at word l of its row so that a warp's
// words fall in 32 banks, in place of 16 16-byte loads and 16 16-byte stores (half the
// shared-memory wavefronts, if an exchange costs one like a load).
__device__ __forceinline__ void flush_tile_exchange(unsigned char* tile, int tid, std::uint32_t& total) {
  constexpr int kWords = 64;
  constexpr unsigned kOnes = 0x01010101u;
  const int lane = tid & 31;
  unsigned* row = reinterpret_cast<unsigned*>(tile + 256 * tid);
  std::uint32_t s[4] = {0, 0, 0, 0};
#pragma unroll
  for (int i = 0; i < kWords; ++i) s[i & 3] = __dp4a(atomicExch(row + ((i + lane) & (kWords - 1)), 0u), kOnes, s[i & 3]);
  total += (s[0] + s[1]) + (s[2] + s[3]);
}

// Residency the register budget is planned for: 768 threads per SM (the shared memory allows no more).
template <int kBlock>
inline constexpr int kThreadPrivateMinBlocks = 768 / kBlock > 0 ? 768 / kBlock : 1;

// Elements in one 16-byte vector and head (elements before the first 16-byte boundary, at most n).
template <class Element>
__device__ __forceinline__ std::int64_t aligned_head(const Element* data, std::int64_t n) {
  const auto misalign = reinterpret_cast<std::uintptr_t>(data) & 15u;
  const std::int64_t head = std::int64_t(((16u - misalign) & 15u) / sizeof(Element));
  return head < n ? head : n;
}

// `nbins` <= 256 (the ByteBins rule: 256); kAdaptive (bytes): see the file comment.  Each block takes a contiguous range of vectors, in
// rounds of kFlushVectors per thread, loaded kBatch at a time with the next batch in flight while
// this one is counted; the scalar head (up to the first 16-byte boundary) and tail are counted by
// block 0 with global atomics.
template <class Bins, int kBlock, int kIlp, int kAdaptive>
__global__ void __launch_bounds__(kBlock, kThreadPrivateMinBlocks<kBlock>)
    histogram_thread_private_kernel(const typename Bins::Element* __restrict__ data, std::int64_t n, Bins rule,
                                    int nbins, int runs_max, int few_bins, int exchange,
                                    std::uint32_t* __restrict__ out) {
  using Element = typename Bins::Element;
  constexpr int V = Bins::kPerVector;
  constexpr int kRound = kFlushVectors<Bins>;
  static_assert(kBlock % 256 == 0 && kBlock <= 1024, "groups of 256 threads");
  constexpr int kB = kBatch<Bins>;
  static_assert(kRound % kB == 0, "a round is whole batches");
  // 256 * kBlock bytes of 8-bit counters, then (bytes, kAdaptive = 2) the block's 256-bin u32 histogram.
  extern __shared__ __align__(16) unsigned char tile[];
  std::uint32_t* const block_hist = reinterpret_cast<std::uint32_t*>(tile + 256 * kBlock);
  const int tid = threadIdx.x;
  {
    uint4* words = reinterpret_cast<uint4*>(tile);
    constexpr int kWords = (256 * kBlock + kBlockHistBytes<Bins, kAdaptive>) / 16;
    for (int i = tid; i < kWords; i += kBlock) words[i] = make_uint4(0, 0, 0, 0);
  }
  const unsigned where = counter_where(tid);
  std::uint32_t total = 0;

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
    for (int u = 0; u < kB; ++u) {
      v[u] = u * kBlock < lim ? __ldg(vec + base + u * kBlock) : make_uint4(0, 0, 0, 0);
    }
  };
  uint4 cur[kB];
  load(begin, cur);
  for (std::int64_t base = begin; base < end;) {  // block-uniform: every thread flushes together
    // One batch: choose the path (before the next loads are in flight: fewer live registers),
    // load the next batch, count this one.
    auto batch = [&] {
      const std::int64_t next = base + std::int64_t(kB) * kBlock;
      const int lim = limit(base);
      const BytePath path = choose_path<kB, kBlock, kAdaptive>(cur, lim, runs_max, few_bins, rule);
      uint4 ahead[kB];
      load(next, ahead);
      count_batch<kIlp, kB, kBlock>(path, tile, block_hist, where, cur, lim, rule);
#pragma unroll
      for (int u = 0; u < kB; ++u) cur[u] = ahead[u];
      base = next;
    };
    // Rolled: unrolled, the batch paths of bytes spill registers, and the ten batches of a float
    // round measured 486 us against 280 rolled (H200, 2^28 floats).
#pragma unroll 1
    for (int b = 0; b < kRound / kB; ++b) batch();
    __syncthreads();
    // Bytes: the last flush skips the zeroing and its barrier.  Floats keep both (not timed
    // without them).
    const bool more = !std::is_same_v<Bins, ByteBins> || base < end;  // block-uniform
    if (more && exchange != 0) {  // block-uniform
      flush_tile_exchange(tile, tid, total);
    } else {
      flush_tile(tile, tid, total, more);
    }
    if (more) __syncthreads();
  }
  // Group 0 adds the block's histogram: its last atomics came before the last flush's barrier.
  if constexpr (kBlockHistBytes<Bins, kAdaptive> > 0) {
    if (tid < 256) total += block_hist[tid];
  }
  const int bin = tid & 255;  // the bin this thread summed
  if (total != 0 && bin < nbins) atomicAdd(out + bin, total);
}


// Bytes, kAdaptive = 0: the private 8-bit counters alone (no warp histograms, 256 bytes of shared
// memory per thread), a round of three batches fully unrolled.  The kernel of 2026-11-22
// (432 us on 1 GiB of uniform bytes, H200), kept as it was measured.
template <int kBlock, int kIlp>
__global__ void __launch_bounds__(kBlock, kThreadPrivateMinBlocks<kBlock>)
    histogram_thread_private_plain_kernel(const std::uint8_t* __restrict__ data, std::int64_t n,
                                          std::uint32_t* __restrict__ out) {
  constexpr int kRound = kFlushVectors<ByteBins>;
  constexpr int kB = kBatch<ByteBins>;
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
  const std::int64_t head = aligned_head(data, n);
  const std::int64_t nvec = (n - head) / 16;
  if (blockIdx.x == 0) {
    for (std::int64_t i = tid; i < head; i += kBlock) atomicAdd(out + data[i], 1u);
    for (std::int64_t i = head + nvec * 16 + tid; i < n; i += kBlock) atomicAdd(out + data[i], 1u);
  }
  __syncthreads();

  const std::int64_t per_block = (nvec + gridDim.x - 1) / gridDim.x;
  const std::int64_t begin = std::int64_t(blockIdx.x) * per_block;
  const std::int64_t end = begin + per_block < nvec ? begin + per_block : nvec;
  const uint4* vec = reinterpret_cast<const uint4*>(data + head) + tid;
  auto limit = [&](std::int64_t base) {
    const std::int64_t left = end - base - tid;
    return left <= 0 ? 0 : left >= kB * kBlock ? kB * kBlock : int(left);
  };
  auto load = [&](std::int64_t base, uint4 (&v)[kB]) {
    const int lim = limit(base);
#pragma unroll
    for (int u = 0; u < kB; ++u) {
      if (u * kBlock < lim) v[u] = __ldg(vec + base + u * kBlock);
    }
  };
  static_assert(kRound % kB == 0, "a round is whole batches");
  uint4 cur[kB];
  load(begin, cur);
  for (std::int64_t base = begin; base < end;) {  // block-uniform: every thread flushes together
#pragma unroll
    for (int b = 0; b < kRound / kB; ++b) {
      const std::int64_t next = base + std::int64_t(kB) * kBlock;
      const int lim = limit(base);
      uint4 ahead[kB];
      load(next, ahead);
#pragma unroll
      for (int u = 0; u < kB; ++u) {
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

// Kernel of topk_warp_select's row-per-block tiles (row_warps > 1): one block of WARPS warps per
// row, for rows of 1025 to 16384 elements (and k of 257 to 512 on any row), where a single warp
// would hold too many items per lane (168 registers at 4096: 12 warps per SM, a serial chain of
// 128 loads and compares per lane).
// The algorithm is topk_warp_select's (topk_warp_select.cuh); only the counts are block-wide:
//
// - The row is held in registers as rank keys: element j = (g * THREADS + t) * VEC + e is item
//   g * VEC + e of thread t (VEC elements of 16 bytes).
// - Rows on 16-byte boundaries (base, stride and n) are pipelined: the grid is persistent (as many
//   blocks as are resident) and each block copies its next row into shared memory (cp.async, 16
//   bytes a thread and chunk, each thread the chunks it will read itself, so no barrier guards the
//   buffer) while it selects on the current one; so a block's row is on its way from DRAM while
//   its search, filter and sort run, which one row per block left idle (measured on an H100,
//   2026-11-26: 16384 rows of 4096, k = 64, 339 us against 100 us for k = 1, the loads alone).
//   Other rows: one row per block, scalar loads (all issued first).  k = 1 on aligned rows: one
//   row per block, 16-byte loads straight into registers (no list to sort, so nothing to overlap).
// - The k-th rank T is bounded (the largest rank above; below, from each warp's j-th largest of
//   its lanes' first and second largest ranks), then searched bit by bit from the top; each step is
//   one compare per item, a warp reduction, and one block barrier (counts double-buffered in
//   shared memory, so one barrier per step suffices).
// - The filter appends the ranks >= the threshold to the row's list in shared memory.  The keys
//   (rank, ~index) carry the index, so the order of the appends does not matter.  With
//   bucket_sort = 1 (the default since 2026-11-27): one warp scan and one shared atomic per warp,
//   and a list of more than kBucketSortMin keys is placed by buckets of one 8-bit digit
//   (bucket_sort_write: per key two shared atomics and the larger keys of its bucket counted,
//   four barriers); a bucket beyond kBucketMax falls back to the bitonic sort.  The row's chain was
//   bound by instructions, not barriers: the bitonic sort of up to 512 keys was about half of it at
//   k = 256.  With bucket_sort = 0 (the sixth session's path): one shared atomic per warp and
//   non-empty ballot, lists of at most kRankSortMax keys ordered by counting (each key's place is
//   the number of larger keys: no barrier), longer ones bitonic-sorted (on tiles of 32 items with
//   the stages of stride <= 32 in registers, shuffle_bitonic_sort_desc).  The first k are written.
// - A tie class at the k-th place that leaves more than `cap` keys (every rank bit decided): the
//   ranks above T, and of those equal to T the first in index order, found by the same bitwise
//   search on the index (count of ties below a candidate index).
// Ties, NaN and -0.0 as in topk_key.hpp.  k = 1: the largest rank, then the smallest index
// holding it (two block reductions).
#pragma once
#include <cstdint>
#include <type_traits>

#include "topk_device.cuh"
#include "topk_stage_clocks.cuh"
#include "topk_warp_select.cuh"

namespace kiln::topk {

// Lists of up to this many keys are ordered by counting (count^2 compares over the block, no
// barrier); longer ones by a bitonic sort (on tiles of 32 items shuffle_bitonic_sort_desc: 6 to 10
// barriers instead of 36 to 45).
inline constexpr int kRankSortMax = 128;

// The j-th largest (1 <= j <= 32) of v over the lanes of a warp: a bitonic sort of the 32 values
// by shuffles, descending, then lane j - 1's.
__device__ __forceinline__ std::uint32_t warp_kth_largest(std::uint32_t v, int j, int lane) {
#pragma unroll
  for (int size = 2; size <= 32; size <<= 1) {
#pragma unroll
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      const std::uint32_t other = __shfl_xor_sync(0xFFFFFFFFu, v, stride);
      const bool descending = (lane & size) == 0 || size == 32;  // runs alternate; the last descends
      const bool lower = (lane & stride) == 0;
      v = lower == descending ? max(v, other) : min(v, other);
    }
  }
  return __shfl_sync(0xFFFFFFFFu, v, j - 1);
}

// Sorts s[0, p) descending with the whole block (p a power of two and a multiple of 64): the
// bitonic network of bitonic_sort_desc, but every stage of stride <= 32 runs in registers.  A
// thread holds the pairs (e, e + 32), e = 64 (q / 32) + q % 32 for q = t, t + THREADS, ... < p / 2
// (lane = e % 32, so stride 32 is within the thread and strides 1 to 16 are shuffles); only the
// stages of stride >= 64 go through shared memory.  Barriers for p = 512: 10 instead of 45 (256:
// 6 instead of 36).  Ends with a barrier.
template <int THREADS>
__device__ __forceinline__ void shuffle_bitonic_sort_desc(std::uint64_t* s, int p) {
  constexpr unsigned kAll = 0xFFFFFFFFu;
  const int t = int(threadIdx.x), lane = t & 31;
  // The stages of sizes lo to hi (powers of two), strides min(size / 2, 32) down to 1.  Whole warps
  // take part or not (p / 2 and THREADS are multiples of 32), so the shuffles see full warps.
  auto in_registers = [&](int lo, int hi) {
    for (int q = t; q < (p >> 1); q += THREADS) {
      const int e = ((q >> 5) << 6) | lane;
      std::uint64_t a = s[e], b = s[e + 32];
      for (int size = lo; size <= hi; size <<= 1) {
        const bool desc_a = (e & size) == 0, desc_b = ((e + 32) & size) == 0;
        if (size >= 64) {  // stride 32: the thread's own pair
          const std::uint64_t hi_key = a > b ? a : b, lo_key = a > b ? b : a;
          a = desc_a ? hi_key : lo_key;
          b = desc_a ? lo_key : hi_key;
        }
#pragma unroll
        for (int stride = 16; stride > 0; stride >>= 1) {
          if (stride >= size) continue;  // uniform: the stages of a size are its strides below it
          const std::uint64_t oa = __shfl_xor_sync(kAll, a, stride), ob = __shfl_xor_sync(kAll, b, stride);
          const bool lower = (lane & stride) == 0;
          a = lower == desc_a ? (a > oa ? a : oa) : (a > oa ? oa : a);
          b = lower == desc_b ? (b > ob ? b : ob) : (b > ob ? ob : b);
        }
      }
      s[e] = a;
      s[e + 32] = b;
    }
    __syncthreads();
  };
  in_registers(2, 64);
  for (int size = 128; size <= p; size <<= 1) {
    for (int stride = size >> 1; stride >= 64; stride >>= 1) {
      for (int q = t; q < (p >> 1); q += THREADS) {
        const int i = 2 * q - (q & (stride - 1));
        const int j = i + stride;
        const bool desc = (i & size) == 0;
        const std::uint64_t a = s[i], b = s[j];
        if ((a < b) == desc) {
          s[i] = b;
          s[j] = a;
        }
      }
      __syncthreads();
    }
    in_registers(size, size);
  }
}

// The bucket sort of a list (bucket_sort = 1): buckets of the 8 bits of the key below the highest
// bit where the list's smallest and largest possible keys differ; a bucket of more than
// kBucketMax keys (a row whose list is clustered far below its largest rank, e.g. one NaN or inf
// above the k-th) sends the list to the bitonic sort instead (its counting costs size^2).  Lists
// of up to kBucketSortMin keys are ordered by counting.
inline constexpr int kBuckets = 256;
inline constexpr std::uint32_t kBucketMax = 64;
inline constexpr int kBucketSortMin = 64;

// x's element of rank r (the kernel's ranks: 32 bits for f32, the top 16 for f16/bf16) when the
// rank decides its bits, which is every rank but NaN's (any sign and payload) and zero's (+0.0 or
// -0.0): false for those, whose bits must be read from x.  Saves the row's last global loads (the
// values of the k winners, gathered from x after the row has left shared memory).
template <class T>
__device__ __forceinline__ bool value_of_rank(std::uint32_t r, bool largest, T& out) {
  if constexpr (sizeof(T) == 4) {
    const std::uint32_t o = largest ? r : ~r;  // order_key's value
    if (o == 0xFFFFFFFFu || o == 0x80000000u) return false;
    out = __uint_as_float((o & 0x80000000u) ? (o & 0x7FFFFFFFu) : ~o);
  } else {
    const std::uint32_t o = (largest ? r : ~r) & 0xFFFFu;  // order_key16's value >> 16
    if (o == 0xFFFFu || o == 0x8000u) return false;
    const unsigned short h = static_cast<unsigned short>((o & 0x8000u) ? (o & 0x7FFFu) : (~o & 0xFFFFu));
    if constexpr (std::is_same_v<T, __half>) {
      out = __ushort_as_half(h);
    } else {
      out = __ushort_as_bfloat16(h);
    }
  }
  return true;
}

template <int WARPS>
struct GroupShared {
  std::uint32_t partial[2][WARPS];  // per-warp counts of a search step, double-buffered
  std::uint32_t list_count;
  std::uint32_t oversized;              // a bucket holds more than kBucketMax keys
  std::uint32_t bucket_warp[WARPS];     // per-warp sums of the bucket scan
  std::uint32_t bucket_count[kBuckets];  // keys per bucket; zero between rows (the scatter counts down)
  std::uint32_t bucket_start[kBuckets];  // first place of a bucket, buckets in descending order
  KILN_STAGE_FIELDS                      // diagnostic builds only (topk_stage_clocks.cuh)
};

// Orders the list s[0, count) (count > kBucketSortMin, keys unique and in [lo_key, hi_key]) and
// writes its first k: every key goes to its bucket (a counting sort on one 8-bit digit: shared
// atomics, a block scan of the 256 counts, a scatter into out), and its place is its bucket's
// start plus the number of larger keys in its bucket (about count / 256 on spread ranks).  Instead
// of 45 block-wide compare-exchange stages of all 512 keys (bitonic, k = 256): two shared atomics,
// a few shared loads and stores per key and four barriers.  Returns false, having written nothing,
// when a bucket holds more than kBucketMax keys (then sh.bucket_count is already zero again).
// Starts after a barrier that follows the list's writes; the caller's closing barrier ends it.  Not
// inlined: inlined, it pushed the 16-item f32 tile (8 x 16, held to 64 registers) into 28 bytes of
// spills (ptxas); called, the tile has none.
template <class T, int WARPS>
__device__ __noinline__ bool bucket_sort_write(const std::uint64_t* s, std::uint64_t* out, int count, int k, bool largest,
                                                  std::uint64_t lo_key, std::uint64_t hi_key, GroupShared<WARPS>& sh,
                                                  const T* __restrict__ xr, T* __restrict__ values_row,
                                                  std::int32_t* __restrict__ indices_row) {
  constexpr int THREADS = WARPS * 32;
  constexpr int BPT = THREADS >= kBuckets ? 1 : kBuckets / THREADS;  // bins per scanning thread
  constexpr int SCAN_THREADS = kBuckets / BPT;
  constexpr unsigned kAll = 0xFFFFFFFFu;
  const int t = int(threadIdx.x), warp = t >> 5, lane = t & 31;
  // Every key in [lo_key, hi_key] shares the bits above the highest differing one, so the 8 bits
  // below it order the keys (non-decreasing digit for increasing key).
  const std::uint64_t differ = lo_key ^ hi_key;
  const int high = differ == 0 ? 0 : 63 - __clzll(differ);
  const int shift = high > 7 ? high - 7 : 0;
  auto digit = [&](std::uint64_t key) { return int((key >> shift) & (kBuckets - 1)); };

  for (int i = t; i < count; i += THREADS) atomicAdd(&sh.bucket_count[digit(s[i])], 1u);
  __syncthreads();
  // Exclusive scan of the counts in descending digit order: scan position q holds digit 255 - q.
  std::uint32_t v[BPT], sum = 0;
#pragma unroll
  for (int e = 0; e < BPT; ++e) {
    v[e] = t < SCAN_THREADS ? sh.bucket_count[kBuckets - 1 - (t * BPT + e)] : 0u;
    sum += v[e];
    if (v[e] > kBucketMax) atomicOr(&sh.oversized, 1u);
  }
  std::uint32_t inclusive = sum;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const std::uint32_t o = __shfl_up_sync(kAll, inclusive, d);
    if (lane >= d) inclusive += o;
  }
  if (lane == 31) sh.bucket_warp[warp] = inclusive;
  __syncthreads();
  if (sh.oversized != 0) {
    // Nothing scattered: clear the counts here (read above, before the barrier).
#pragma unroll
    for (int e = 0; e < BPT; ++e)
      if (t < SCAN_THREADS) sh.bucket_count[kBuckets - 1 - (t * BPT + e)] = 0u;
    return false;  // the caller's next barrier orders these writes before the next row's atomics
  }
  std::uint32_t start = inclusive - sum;
  for (int w = 0; w < warp; ++w) start += sh.bucket_warp[w];
#pragma unroll
  for (int e = 0; e < BPT; ++e) {
    if (t < SCAN_THREADS) sh.bucket_start[kBuckets - 1 - (t * BPT + e)] = start;
    start += v[e];
  }
  __syncthreads();
  // Scatter: the count of a bucket is counted down to zero (ready for the next row).
  for (int i = t; i < count; i += THREADS) {
    const std::uint64_t key = s[i];
    const int d = digit(key);
    out[sh.bucket_start[d] + atomicSub(&sh.bucket_count[d], 1u) - 1u] = key;
  }
  __syncthreads();
  // A key's place: its bucket's start plus the larger keys in its bucket (buckets descend, so the
  // bucket of digit d ends where that of d - 1 starts).
  for (int i = t; i < count; i += THREADS) {
    const std::uint64_t key = out[i];
    const int d = digit(key);
    const int first = int(sh.bucket_start[d]), end = d > 0 ? int(sh.bucket_start[d - 1]) : count;
    if (first >= k) continue;
    int place = first;
    for (int q = first; q < end; ++q) place += out[q] > key ? 1 : 0;
    if (place < k) {
      const std::uint32_t j = index_of(key);
      indices_row[place] = std::int32_t(j);
      T value;
      if (!value_of_rank<T>(std::uint32_t(key >> 32), largest, value)) value = xr[j];
      values_row[place] = value;
    }
  }
  return true;
}

// The selection on one row whose ranks are in rk (padding items rank 0): search, filter, sort,
// write.  Every thread of the block calls it; it ends with a barrier, so that the list and the
// counters can be reused for the next row.
template <class T, int WARPS, int ITEMS>
__device__ __forceinline__ void group_select_row(const std::uint32_t (&rk)[ITEMS], const T* __restrict__ xr, int n,
                                                 int k, bool largest, int cap, int bucket_sort, std::uint64_t* list,
                                                 GroupShared<WARPS>& sh, T* __restrict__ values_row,
                                                 std::int32_t* __restrict__ indices_row) {
  constexpr int THREADS = WARPS * 32;
  constexpr int VEC = 16 / int(sizeof(T));
  constexpr unsigned kAll = 0xFFFFFFFFu;
  constexpr int kRankBits = sizeof(T) == 2 ? 16 : 32;
  const int t = int(threadIdx.x), warp = t >> 5, lane = t & 31;
  auto index = [&](int i) { return ((i / VEC) * THREADS + t) * VEC + (i % VEC); };
  if (t == 0) {  // read after the barrier before the filter
    sh.list_count = 0;
    sh.oversized = 0;
  }

  // Block-wide sum / max / min of one value per thread: a warp reduction, one barrier (the slots
  // alternate, so a slot is rewritten only after the barrier that follows its readers).  (A second
  // warp reduction over the partials, lane w reading warp w's, cost the 16-item f32 tiles 4 to 8
  // bytes of spills under their register bound, ptxas 2026-11-27: not taken.)
  int parity = 0;
  auto combine = [&](std::uint32_t v, int op) {
    v = op == 0 ? __reduce_add_sync(kAll, v) : op == 1 ? __reduce_max_sync(kAll, v) : __reduce_min_sync(kAll, v);
    if (lane == 0) sh.partial[parity][warp] = v;
    __syncthreads();
    std::uint32_t s = sh.partial[parity][0];
#pragma unroll
    for (int w = 1; w < WARPS; ++w) {
      const std::uint32_t o = sh.partial[parity][w];
      s = op == 0 ? s + o : op == 1 ? max(s, o) : min(s, o);
    }
    parity ^= 1;
    return s;
  };
  constexpr int kSum = 0, kMax = 1, kMin = 2;

  if (k == 1) {
    std::uint32_t best = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) best = max(best, rk[i]);
    const std::uint32_t top = combine(best, kMax);
    std::uint32_t at = 0xFFFFFFFFu;
#pragma unroll
    for (int i = ITEMS - 1; i >= 0; --i)
      if (index(i) < n && rk[i] == top) at = min(at, std::uint32_t(index(i)));
    const std::uint32_t j = combine(at, kMin);
    if (t == 0) {
      indices_row[0] = std::int32_t(j);
      values_row[0] = xr[j];
    }
    __syncthreads();  // the partial slots of this row are read before the next row writes them
    return;
  }

  // As in topk_warp_select: prefix is the largest threshold found with at least k ranks >= it,
  // count_ge how many (kUnknown: not counted, at least k).
  constexpr std::uint32_t kUnknown = 0xFFFFFFFFu;
  const std::uint32_t ku = std::uint32_t(k), capu = std::uint32_t(cap);
  std::uint32_t prefix = 0, count_ge = std::uint32_t(n), top = kUnknown;
  int b = kRankBits - 1;
  if (count_ge > capu) {
    // T <= top (the largest rank) and T >= low, where at least k ranks are >= low: in each warp
    // the j1-th largest of the lanes' largest ranks (j1 lanes, one rank each) and the j2-th largest
    // of their second largest (j2 lanes, two each), with WARPS * j1 >= k and 2 * WARPS * j2 >= k,
    // whichever is larger; low is the smallest over the warps.  Far tighter than the smallest
    // lane's largest (16384 x 4096, k = 64, 8 warps: about 75 ranks >= low against about 1200), so
    // the search below starts a few bits above T's last and often has nothing left to do.  The
    // bits above the highest one where low and top differ are T's.
    std::uint32_t best = 0, second = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      second = max(second, min(best, rk[i]));
      best = max(best, rk[i]);
    }
    top = combine(best, kMax);
    const int j1 = (k + WARPS - 1) / WARPS, j2 = (k + 2 * WARPS - 1) / (2 * WARPS);
    std::uint32_t low_w = 0;
    // The 32nd largest of 32 lanes is their minimum: one reduction instead of a 15-stage network.
    if (j1 == 32) low_w = __reduce_min_sync(kAll, best);
    else if (j1 < 32) low_w = warp_kth_largest(best, j1, lane);
    if (j2 == 32) low_w = max(low_w, __reduce_min_sync(kAll, second));
    else if (j2 < 32 && j1 > 1) low_w = max(low_w, warp_kth_largest(second, j2, lane));
    const std::uint32_t low = j2 <= 32 ? combine(low_w, kMin) : 0u;
    KILN_STAGE_MARK(sh, 1);
    const std::uint32_t differ = low ^ top;
    b = differ == 0 ? -1 : 31 - __clz(differ);
    prefix = b < 0 ? top : top & ~((2u << b) - 1u);  // b = 31: 2u << 31 wraps to 0, no bit kept
    if (prefix != 0) count_ge = kUnknown;
  }
  for (; b >= 0 && count_ge > capu; --b) {
    const std::uint32_t cand = prefix | (1u << b);
    if (cand > top) continue;  // no rank is that large
    std::uint32_t c0 = 0, c1 = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; i += 2) {
      c0 += rk[i] >= cand ? 1u : 0u;
      if (i + 1 < ITEMS) c1 += rk[i + 1] >= cand ? 1u : 0u;
    }
    const std::uint32_t c = combine(c0 + c1, kSum);
    if (c >= ku) {
      prefix = cand;
      count_ge = c;
    }
  }

  // A tie class at the k-th place beyond the list (every bit decided: prefix is T exactly, fewer
  // than k ranks are above it): the ranks above T and the first `need` equal to T in index order.
  // The largest index bound with fewer than `need` ties below it is the need-th tie's index.
  KILN_STAGE_MARK(sh, 2);
  const bool ties = count_ge > capu;
  std::uint32_t last_eq = 0;
  if (ties) {
    std::uint32_t c = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) c += rk[i] > prefix ? 1u : 0u;
    const std::uint32_t need = ku - combine(c, kSum);
    const int index_bits = 32 - __clz(std::uint32_t(n - 1));
    for (int ib = index_bits - 1; ib >= 0; --ib) {
      const std::uint32_t cand = last_eq | (1u << ib);
      std::uint32_t e = 0;
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) e += (rk[i] == prefix && index(i) < n && std::uint32_t(index(i)) < cand) ? 1u : 0u;
      if (combine(e, kSum) < need) last_eq = cand;
    }
  }
  __syncthreads();  // list_count's reset is seen (no count above may have had a barrier)
  KILN_STAGE_MARK(sh, 3);

  // The filter.  A thread's takes as a bit mask; with bucket_sort, a warp scan of their counts and
  // one shared atomic per warp, then each thread writes its keys in a run of its own (about 9
  // instructions an item); without, one shared atomic per warp and non-empty ballot (the sixth
  // session's filter, about 16 an item).  The order of the list does not matter.
  static_assert(ITEMS <= 32, "the takes of a thread fit a 32-bit mask");
  std::uint32_t takes = 0;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int j = index(i);
    const bool take = j < n && (ties ? rk[i] > prefix || (rk[i] == prefix && std::uint32_t(j) <= last_eq)
                                     : rk[i] >= prefix);
    takes |= take ? 1u << i : 0u;
  }
  if (bucket_sort == 0) {
    const unsigned below = (1u << lane) - 1u;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const bool take = (takes >> i) & 1u;
      const unsigned ballot = __ballot_sync(kAll, take);
      if (ballot != 0) {
        const int leader = __ffs(ballot) - 1;
        std::uint32_t base = 0;
        if (lane == leader) base = atomicAdd(&sh.list_count, std::uint32_t(__popc(ballot)));
        base = __shfl_sync(kAll, base, leader);
        if (take) list[base + __popc(ballot & below)] = (std::uint64_t(rk[i]) << 32) | std::uint32_t(~std::uint32_t(index(i)));
      }
    }
  } else {
    const std::uint32_t mine = __popc(takes);
    std::uint32_t run_end = mine;  // inclusive scan over the lanes
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const std::uint32_t o = __shfl_up_sync(kAll, run_end, d);
      if (lane >= d) run_end += o;
    }
    std::uint32_t base = 0;
    if (lane == 31 && run_end != 0) base = atomicAdd(&sh.list_count, run_end);
    std::uint32_t at = __shfl_sync(kAll, base, 31) + run_end - mine;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      if (takes & (1u << i)) {
        list[at] = (std::uint64_t(rk[i]) << 32) | std::uint32_t(~std::uint32_t(index(i)));
        ++at;
      }
    }
  }
  __syncthreads();
  KILN_STAGE_MARK(sh, 4);
  const int count = int(sh.list_count);
  // Every listed key lies in [lo_key, hi_key]: ranks from the threshold to the largest (top, or
  // kUnknown when not computed), indices below n.
  const std::uint64_t lo_key = (std::uint64_t(prefix) << 32) | std::uint32_t(~std::uint32_t(n - 1));
  const std::uint64_t hi_key = (std::uint64_t(top) << 32) | 0xFFFFFFFFu;
  if (bucket_sort != 0 && count > kBucketSortMin &&
      bucket_sort_write<T, WARPS>(list, list + cap, count, k, largest, lo_key, hi_key, sh, xr, values_row, indices_row)) {
    // written
  } else if (count <= kRankSortMax) {
    // Each key's place in the answer is the number of larger keys (keys are unique).
    for (int i = t; i < count; i += THREADS) {
      const std::uint64_t key = list[i];
      int place = 0;
#pragma unroll 4
      for (int q = 0; q < count; ++q) place += list[q] > key ? 1 : 0;
      if (place < k) {
        const std::uint32_t j = index_of(key);
        indices_row[place] = std::int32_t(j);
        values_row[place] = xr[j];
      }
    }
  } else {
    int p = 2;
    while (p < count) p <<= 1;  // count <= cap, a power of two; p >= 256 here
    for (int i = count + t; i < p; i += THREADS) list[i] = kNoElement;
    __syncthreads();
    // Tiles of up to 16 items are held to 64 registers, where the register sort spills (44 bytes
    // at 8 x 16, f32; 16384 x 4096, k = 64, which never sorts this way, 257.4 -> 268.5 us on an
    // H100): they keep the shared-memory network.
    if constexpr (ITEMS > 16) {
      shuffle_bitonic_sort_desc<THREADS>(list, p);
    } else {
      bitonic_sort_desc<THREADS>(list, p);
    }
    for (int i = t; i < k; i += THREADS) {
      const std::uint32_t j = index_of(list[i]);
      indices_row[i] = std::int32_t(j);
      values_row[i] = xr[j];
    }
  }
  __syncthreads();  // the list and the counters are read before the next row writes them
  KILN_STAGE_MARK(sh, 5);
  KILN_STAGE_ROW(sh);
}

// vector_loads: 0 scalar loads, 1 pipelined (aligned rows, k > 1), 2 16-byte loads straight into
// registers (aligned rows, k = 1).  bucket_sort: 1 orders lists of more than kBucketSortMin keys
// by buckets (bucket_sort_write), 0 by counting (up to kRankSortMax) or a bitonic sort.  Dynamic
// shared memory: the list of cap 8-byte keys (cap a power of two, k <= cap / 2) and the bucket
// sort's output of cap keys, then, for pipelined launches, the row buffer of THREADS * ITEMS
// elements.
// Pipelined launches may have fewer blocks than rows (each block takes rows blockIdx.x,
// + gridDim.x, ...); the others have one block per row.
// Blocks per SM the compiler must leave room for: at most 64 registers a thread for tiles of up to
// 16 items (60 to 80 without the bound; 3 blocks of 8 warps per SM instead of 4), 128 for 32.
template <int WARPS, int ITEMS>
inline constexpr int kGroupMinBlocks = (ITEMS <= 16 ? 32 : 16) / WARPS > 0 ? (ITEMS <= 16 ? 32 : 16) / WARPS : 1;

template <class T, int WARPS, int ITEMS>
__global__ void __launch_bounds__(WARPS * 32, (kGroupMinBlocks<WARPS, ITEMS>))
    warp_group_select_kernel(const T* __restrict__ x, std::int64_t x_stride, std::int64_t rows, int n, int k,
                             int largest, int cap, int bucket_sort, int vector_loads, T* __restrict__ values,
                             std::int64_t v_stride,
                             std::int32_t* __restrict__ indices, std::int64_t i_stride) {
  constexpr int THREADS = WARPS * 32;
  constexpr int VEC = 16 / int(sizeof(T));
  static_assert(ITEMS % VEC == 0, "whole 16-byte chunks per thread");
  constexpr int GROUPS = ITEMS / VEC;
  constexpr int kRankBits = sizeof(T) == 2 ? 16 : 32;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  std::uint64_t* list = reinterpret_cast<std::uint64_t*>(smem_raw);
  __shared__ GroupShared<WARPS> sh;
  const int t = int(threadIdx.x);
  auto index = [&](int i) { return ((i / VEC) * THREADS + t) * VEC + (i % VEC); };
  std::uint32_t rk[ITEMS];
  // The bucket counts start at zero (and each row leaves them so); the row's barriers before its
  // sort order these writes before the first counts.
  for (int i = t; i < kBuckets; i += THREADS) sh.bucket_count[i] = 0u;
  KILN_STAGE_START(sh);

  if (!vector_loads) {
    // One row per block.  Every load first, unconditional (past the end re-read the last
    // element, rank 0), so that all of a thread's loads are in flight at once.
    const std::int64_t row = blockIdx.x;
    const T* xr = x + row * x_stride;
    T v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) v[i] = __ldg(xr + min(index(i), n - 1));
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
      rk[i] = index(i) < n ? rank_of(v[i], largest != 0) >> (32 - kRankBits) : 0u;
    KILN_STAGE_MARK(sh, 0);
    group_select_row<T, WARPS, ITEMS>(rk, xr, n, k, largest != 0, cap, bucket_sort, list, sh, values + row * v_stride,
                                      indices + row * i_stride);
    KILN_STAGE_REPORT(sh);
    return;
  }

  // Aligned rows: chunk c = g * THREADS + t of the row (16 bytes, VEC elements) is group g of
  // thread t.  Chunks past the end re-read the last one (rank 0).
  const int last = n / VEC - 1;  // n % VEC == 0 here
  auto ranks_of_chunk = [&](int g, uint4 raw) {
    const std::uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const std::uint32_t bits = VEC == 4 ? w[e] : (w[e / 2] >> (16 * (e % 2))) & 0xFFFFu;
      const int i = g * VEC + e;
      rk[i] = index(i) < n ? rank_key(bits, largest != 0, Element<T>::kFormat) >> (32 - kRankBits) : 0u;
    }
  };
  if (vector_loads == 2) {
    // k = 1 (a block-wide maximum, no list): one row per block, 16-byte loads straight into
    // registers, all issued first.  The pipeline's trip through shared memory cost 17% here
    // (16384 rows of 4096 on an H100: 116.8 us against 99.9 with direct loads).
    const std::int64_t row = blockIdx.x;
    const uint4* src = reinterpret_cast<const uint4*>(x + row * x_stride);
    uint4 raw[GROUPS];
#pragma unroll
    for (int g = 0; g < GROUPS; ++g) raw[g] = __ldg(src + min(g * THREADS + t, last));
#pragma unroll
    for (int g = 0; g < GROUPS; ++g) ranks_of_chunk(g, raw[g]);
    KILN_STAGE_MARK(sh, 0);
    group_select_row<T, WARPS, ITEMS>(rk, x + row * x_stride, n, k, largest != 0, cap, bucket_sort, list, sh,
                                      values + row * v_stride, indices + row * i_stride);
    KILN_STAGE_REPORT(sh);
    return;
  }

  // Pipelined: chunk c goes to buf[c] and is read back by the thread that copied it.
  uint4* buf = reinterpret_cast<uint4*>(smem_raw + 2 * std::size_t(cap) * sizeof(std::uint64_t));
  auto copy_row = [&](std::int64_t row) {
    const uint4* src = reinterpret_cast<const uint4*>(x + row * x_stride);
#pragma unroll
    for (int g = 0; g < GROUPS; ++g) {
      const unsigned dst = unsigned(__cvta_generic_to_shared(buf + g * THREADS + t));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src + min(g * THREADS + t, last))
                   : "memory");
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  };
  std::int64_t row = blockIdx.x;
  if (row >= rows) return;
  copy_row(row);
  for (; row < rows; row += gridDim.x) {
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#pragma unroll
    for (int g = 0; g < GROUPS; ++g) ranks_of_chunk(g, buf[g * THREADS + t]);
    // This thread's chunks are in registers: its copies of the next row may overwrite them.
    if (row + gridDim.x < rows) copy_row(row + gridDim.x);
    KILN_STAGE_MARK(sh, 0);
    group_select_row<T, WARPS, ITEMS>(rk, x + row * x_stride, n, k, largest != 0, cap, bucket_sort, list, sh,
                                      values + row * v_stride, indices + row * i_stride);
  }
  KILN_STAGE_REPORT(sh);
}

}  // namespace kiln::topk

// Kernel of topk_warp_select: one warp per row for many small rows (n <= 32 * ITEMS, up to 4096),
// WARPS rows per block, no block barrier.  The row is read once, coalesced (element j = 32 i +
// lane is item i of that lane), and kept in registers as rank keys (topk_key.hpp; the 16-bit
// types keep only the top 16 bits, which determine their rank).  One pass bounds the k-th rank T
// (the largest rank above, for k <= 64 the smallest lane's first or second largest below); the
// bits both bounds share are T's.  The rest of T is found bit by bit from the top: a candidate
// threshold is kept when at least k ranks are >= it, each count one compare per item and one warp
// reduction (redux.sync), no shared-memory histogram.  The search stops as soon as at most `cap`
// ranks are >= the threshold; those are filtered, in index order, into the warp's list in shared
// memory, bitonic-sorted by the warp as 64-bit keys (rank, ~index) and the first k written.  When
// no threshold leaves at most `cap` (a tie class at the k-th place), the search has found T
// exactly: the ranks above T and the first k - count(> T) equal to T in index order make the
// list.  Ties, NaN and -0.0 as in topk_key.hpp.  k = 1: the largest rank, then the smallest index
// holding it (two warp reductions).
#pragma once
#include <cstdint>

#include "topk_device.cuh"

namespace kiln::topk {

// Sorts s[0, p) descending (p a power of two) with one warp; ends with __syncwarp.
__device__ inline void warp_bitonic_sort_desc(std::uint64_t* s, int p, int lane) {
  for (int size = 2; size <= p; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = lane; t < (p >> 1); t += 32) {
        const int i = 2 * t - (t & (stride - 1));
        const int j = i + stride;
        const bool desc = (i & size) == 0;  // runs of `size` alternate, the last one descends
        const std::uint64_t a = s[i], b = s[j];
        if ((a < b) == desc) {
          s[i] = b;
          s[j] = a;
        }
      }
      __syncwarp();
    }
  }
}

// Dynamic shared memory: WARPS * cap 8-byte keys (cap a power of two, k <= cap / 2).
template <class T, int WARPS, int ITEMS>
__global__ void __launch_bounds__(WARPS * 32)
    warp_select_kernel(const T* __restrict__ x, std::int64_t x_stride, std::int64_t rows, int n, int k, int largest,
                       int cap, T* __restrict__ values, std::int64_t v_stride, std::int32_t* __restrict__ indices,
                       std::int64_t i_stride) {
  static_assert(ITEMS % 2 == 0, "two counters per step");
  constexpr unsigned kAll = 0xFFFFFFFFu;
  // Bits of the rank that can differ: f32 32; f16/bf16 the top 16 (the low 16 follow from them).
  constexpr int kRankBits = sizeof(T) == 2 ? 16 : 32;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const std::int64_t row = std::int64_t(blockIdx.x) * WARPS + warp;
  if (row >= rows) return;  // whole warps leave; nothing below waits for other warps
  std::uint64_t* list = reinterpret_cast<std::uint64_t*>(smem_raw) + std::size_t(warp) * std::size_t(cap);
  const T* xr = x + row * x_stride;

  // Every load first, unconditional (padding items re-read the last element), so that all are in
  // flight at once: a load inside `j < n ? rank_of(load) : 0` became a branch per item around the
  // load and the NaN test, and the loads of a warp ran one after another (measured on an H200,
  // 2026-11-24: 16384 rows of 4096, k = 1, 613 us).  Padding items then get rank 0: every
  // candidate threshold below is >= 1, so they are never counted, and the filter checks j < n.
  T v[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) v[i] = __ldg(xr + min(i * 32 + lane, n - 1));
  std::uint32_t rk[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i)
    rk[i] = i * 32 + lane < n ? rank_of(v[i], largest != 0) >> (32 - kRankBits) : 0u;

  if (k == 1) {
    // The largest rank, then the smallest index holding it: two warp reductions.
    std::uint32_t best = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) best = rk[i] > best ? rk[i] : best;
    const std::uint32_t top = __reduce_max_sync(kAll, best);
    std::uint32_t at = 0xFFFFFFFFu;
#pragma unroll
    for (int i = ITEMS - 1; i >= 0; --i)
      if (i * 32 + lane < n && rk[i] == top) at = std::uint32_t(i * 32 + lane);
    const std::uint32_t j = __reduce_min_sync(kAll, at);
    if (lane == 0) {
      indices[row * i_stride] = std::int32_t(j);
      values[row * v_stride] = xr[j];
    }
    return;
  }

  // prefix: the largest threshold found so far with at least k ranks >= it; count_ge: how many
  // (kUnknown: not counted, at least k).  The search decides bit b of the k-th rank T from the top.
  constexpr std::uint32_t kUnknown = 0xFFFFFFFFu;
  const std::uint32_t ku = std::uint32_t(k), capu = std::uint32_t(cap);
  std::uint32_t prefix = 0, count_ge = std::uint32_t(n), top = kUnknown;
  int b = kRankBits - 1;
  if (count_ge > capu) {
    // Bounds on T, one cheap pass: T <= top, the largest rank; and when 32 m >= k, T >= low, the
    // smallest over lanes of each lane's m-th largest rank (m = 1 or 2: 32 m ranks are >= low).
    // The bits above the highest one where low and top differ are T's; the search starts below
    // them (on uniform rows low and top share the sign, the exponent and a few mantissa bits:
    // about ten steps saved).  A lane without m elements has an m-th largest of 0.
    std::uint32_t best = 0, second = 0;
    if (k <= 32) {
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) best = max(best, rk[i]);
      second = best;
    } else {
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) {
        second = max(second, min(best, rk[i]));
        best = max(best, rk[i]);
      }
    }
    top = __reduce_max_sync(kAll, best);
    const std::uint32_t low = k <= 64 ? __reduce_min_sync(kAll, second) : 0u;
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
      c1 += rk[i + 1] >= cand ? 1u : 0u;
    }
    const std::uint32_t c = __reduce_add_sync(kAll, c0 + c1);
    if (c >= ku) {
      prefix = cand;
      count_ge = c;
    }
  }

  // The filter, in index order (item-major, then lane): slots from ballots, no atomics.
  const unsigned below = (1u << lane) - 1u;
  std::uint32_t count = 0;
  if (count_ge <= capu) {
    // At most cap ranks are >= prefix: all of them.
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const int j = i * 32 + lane;
      const bool take = j < n && rk[i] >= prefix;
      const unsigned take_ballot = __ballot_sync(kAll, take);
      if (take) list[count + __popc(take_ballot & below)] = (std::uint64_t(rk[i]) << 32) | std::uint32_t(~std::uint32_t(j));
      count += __popc(take_ballot);
    }
  } else {
    // Still more than cap (or not counted): every bit was decided, prefix is the k-th rank T and
    // fewer than k ranks are above it; of the ranks equal to T the first need_eq (in index order)
    // are taken.
    std::uint32_t c = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) c += rk[i] > prefix ? 1u : 0u;
    const std::uint32_t need_eq = ku - __reduce_add_sync(kAll, c);
    std::uint32_t eq_seen = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const int j = i * 32 + lane;
      const bool valid = j < n;
      const bool eq = valid && rk[i] == prefix;
      const unsigned eq_ballot = __ballot_sync(kAll, eq);
      const bool take = valid && (rk[i] > prefix || (eq && eq_seen + __popc(eq_ballot & below) < need_eq));
      const unsigned take_ballot = __ballot_sync(kAll, take);
      if (take) list[count + __popc(take_ballot & below)] = (std::uint64_t(rk[i]) << 32) | std::uint32_t(~std::uint32_t(j));
      count += __popc(take_ballot);
      eq_seen += __popc(eq_ballot);
    }
  }
  int p = 2;
  while (p < int(count)) p <<= 1;  // count <= cap, a power of two
  for (int i = int(count) + lane; i < p; i += 32) list[i] = kNoElement;
  __syncwarp();
  warp_bitonic_sort_desc(list, p, lane);
  for (int i = lane; i < k; i += 32) {
    const std::uint32_t j = index_of(list[i]);
    indices[row * i_stride + i] = std::int32_t(j);
    values[row * v_stride + i] = xr[j];
  }
}

}  // namespace kiln::topk

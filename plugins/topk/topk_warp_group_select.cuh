// Kernel of topk_warp_select's row-group tiles (row_warps > 1): one block of WARPS warps per row,
// for rows of 1025 to 16384 elements, where a single warp would hold too many items per lane (168
// registers at 4096: 12 warps per SM, a serial chain of 128 loads and compares per lane).  The
// algorithm is topk_warp_select's (topk_warp_select.cuh); only the counts are block-wide:
//
// - The row is read once into registers as rank keys: element j = (g * THREADS + t) * VEC + e is
//   item g * VEC + e of thread t (VEC elements of 16 bytes per load), so a thread's loads are
//   ITEMS / VEC 16-byte loads at compile-time offsets from one address.  Rows that are not
//   16-byte aligned (base, stride or n) take scalar loads of the same elements.
// - The k-th rank T is bounded (the largest rank above; for k <= 2 * THREADS the smallest
//   thread's first or second largest below), then searched bit by bit from the top; each step is
//   one compare per item, a warp reduction, and one block barrier (counts double-buffered in
//   shared memory, so one barrier per step suffices).
// - The filter appends the ranks >= the threshold to the row's list in shared memory (one shared
//   atomic per warp and non-empty ballot); the list is bitonic-sorted as 64-bit keys (rank, ~index)
//   and the first k written.  The keys carry the index, so the order of appends does not matter.
// - A tie class at the k-th place that leaves more than `cap` keys (every rank bit decided): the
//   ranks above T, and of those equal to T the first in index order, found by the same bitwise
//   search on the index (count of ties below a candidate index).
// Ties, NaN and -0.0 as in topk_key.hpp.  k = 1: the largest rank, then the smallest index
// holding it (two block reductions).
#pragma once
#include <cstdint>

#include "topk_device.cuh"
#include "topk_warp_select.cuh"

namespace kiln::topk {

// Dynamic shared memory: cap 8-byte keys (cap a power of two, k <= cap / 2).
template <class T, int WARPS, int ITEMS>
__global__ void __launch_bounds__(WARPS * 32)
    warp_group_select_kernel(const T* __restrict__ x, std::int64_t x_stride, int n, int k, int largest, int cap,
                             int vector_loads, T* __restrict__ values, std::int64_t v_stride,
                             std::int32_t* __restrict__ indices, std::int64_t i_stride) {
  constexpr int THREADS = WARPS * 32;
  constexpr int VEC = 16 / int(sizeof(T));
  static_assert(ITEMS % VEC == 0, "whole 16-byte loads per thread");
  constexpr int GROUPS = ITEMS / VEC;
  constexpr unsigned kAll = 0xFFFFFFFFu;
  constexpr int kRankBits = sizeof(T) == 2 ? 16 : 32;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  std::uint64_t* list = reinterpret_cast<std::uint64_t*>(smem_raw);
  __shared__ std::uint32_t partial[2][WARPS];  // per-warp counts of a step, double-buffered
  __shared__ std::uint32_t list_count;
  const int t = int(threadIdx.x), warp = t >> 5, lane = t & 31;
  const std::int64_t row = blockIdx.x;
  const T* xr = x + row * x_stride;
  if (t == 0) list_count = 0;  // first read after the first barrier below

  // Item i = g * VEC + e of this thread is element (g * THREADS + t) * VEC + e.
  auto index = [&](int i) { return ((i / VEC) * THREADS + t) * VEC + (i % VEC); };

  // Every load first, unconditional (past the end re-read the last vector or element, rank 0),
  // so that all of a thread's loads are in flight at once.
  std::uint32_t rk[ITEMS];
  if (vector_loads) {
    const int last = n / VEC - 1;  // n % VEC == 0 here
    uint4 raw[GROUPS];
#pragma unroll
    for (int g = 0; g < GROUPS; ++g)
      raw[g] = __ldg(reinterpret_cast<const uint4*>(xr) + min(g * THREADS + t, last));
#pragma unroll
    for (int g = 0; g < GROUPS; ++g) {
      const std::uint32_t w[4] = {raw[g].x, raw[g].y, raw[g].z, raw[g].w};
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const std::uint32_t bits = VEC == 4 ? w[e] : (w[e / 2] >> (16 * (e % 2))) & 0xFFFFu;
        rk[g * VEC + e] = rank_key(bits, largest != 0, Element<T>::kFormat);
      }
    }
  } else {
    T v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) v[i] = __ldg(xr + min(index(i), n - 1));
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) rk[i] = rank_of(v[i], largest != 0);
  }
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) rk[i] = index(i) < n ? rk[i] >> (32 - kRankBits) : 0u;

  // Block-wide sum / max / min of one value per thread: a warp reduction, one barrier (the slots
  // alternate, so a slot is rewritten only after the barrier that follows its readers).
  int parity = 0;
  auto combine = [&](std::uint32_t v, int op) {
    v = op == 0 ? __reduce_add_sync(kAll, v) : op == 1 ? __reduce_max_sync(kAll, v) : __reduce_min_sync(kAll, v);
    if (lane == 0) partial[parity][warp] = v;
    __syncthreads();
    std::uint32_t s = partial[parity][0];
#pragma unroll
    for (int w = 1; w < WARPS; ++w) {
      const std::uint32_t o = partial[parity][w];
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
      indices[row * i_stride] = std::int32_t(j);
      values[row * v_stride] = xr[j];
    }
    return;
  }

  // As in topk_warp_select: prefix is the largest threshold found with at least k ranks >= it,
  // count_ge how many (kUnknown: not counted, at least k).
  constexpr std::uint32_t kUnknown = 0xFFFFFFFFu;
  const std::uint32_t ku = std::uint32_t(k), capu = std::uint32_t(cap);
  std::uint32_t prefix = 0, count_ge = std::uint32_t(n), top = kUnknown;
  int b = kRankBits - 1;
  if (count_ge > capu) {
    // T <= top (the largest rank); T >= low, the smallest over threads of each thread's m-th
    // largest (m = 1 or 2), when m * THREADS >= k.  The bits above the highest one where they
    // differ are T's.
    std::uint32_t best = 0, second = 0;
    if (k <= THREADS) {
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
    top = combine(best, kMax);
    const std::uint32_t low = k <= 2 * THREADS ? combine(second, kMin) : 0u;
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

  // The filter: one shared atomic per warp and non-empty ballot.
  const unsigned below = (1u << lane) - 1u;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int j = index(i);
    const bool take = j < n && (ties ? rk[i] > prefix || (rk[i] == prefix && std::uint32_t(j) <= last_eq)
                                     : rk[i] >= prefix);
    const unsigned ballot = __ballot_sync(kAll, take);
    if (ballot != 0) {
      const int leader = __ffs(ballot) - 1;
      std::uint32_t base = 0;
      if (lane == leader) base = atomicAdd(&list_count, std::uint32_t(__popc(ballot)));
      base = __shfl_sync(kAll, base, leader);
      if (take) list[base + __popc(ballot & below)] = (std::uint64_t(rk[i]) << 32) | std::uint32_t(~std::uint32_t(j));
    }
  }
  __syncthreads();
  const int count = int(list_count);
  int p = 2;
  while (p < count) p <<= 1;  // count <= cap, a power of two
  for (int i = count + t; i < p; i += THREADS) list[i] = kNoElement;
  __syncthreads();
  if (p <= 64) {
    // A short list: one warp sorts it with no block barrier; the others are done.
    if (warp != 0) return;
    warp_bitonic_sort_desc(list, p, lane);
  } else {
    bitonic_sort_desc<THREADS>(list, p);
  }
  for (int i = (p <= 64 ? lane : t); i < k; i += (p <= 64 ? 32 : THREADS)) {
    const std::uint32_t j = index_of(list[i]);
    indices[row * i_stride + i] = std::int32_t(j);
    values[row * v_stride + i] = xr[j];
  }
}

}  // namespace kiln::topk

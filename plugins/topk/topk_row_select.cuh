// Kernel of topk_row_select: one block per row, for rows that fit in the block's registers
// (n <= block * items_per_thread, up to 16384).  The row is read once, coalesced, and kept as
// 32-bit rank keys (topk_key.hpp; the index is the element's position, so the 64-bit key is
// rebuilt on the fly).  Radix select on the 64-bit key with 8-bit digits from the top runs
// entirely on chip: each pass histograms (shared-memory atomics, 256 bins) the next digit of the
// keys that match the digits found so far, and one warp scans the bins from the best digit down
// to find the digit holding the k-th key.  As soon as the keys above that digit plus its bucket
// fit in `cap`, every key whose known digits are >= those found is gathered into shared memory,
// bitonic-sorted, and the first k are written.  Keys are unique, so at the latest the last digit
// leaves a bucket of one and the selection is exact: ties, NaN and -0.0 as in topk_key.hpp.
#pragma once
#include <cstdint>

#include "topk_device.cuh"

namespace kiln::topk {

// 8-bit digits: 8 passes at most over a 64-bit key.  (Eight copies of each bin, picked by lane, to
// spread the atomics of uniform floats - a quarter of a row shares the first digit - measured
// slower on an H200, 2026-11-24: 1007 us against 644 for 16384 rows of 4096, the extra clearing
// and summing outweighing the conflicts; so did one atomic per distinct digit of a warp with
// __match_any_sync, 2026-11-24 (fourth session): 841 against 688 us there, 155 against 129 us at
// 16384 rows of 1024, k = 8.)  k = 1 skips the passes: a block-wide maximum of the keys.
inline constexpr int kRowSelectBins = 256;

// Dynamic shared memory: cap 8-byte keys (cap a power of two >= k).  T: float, __half or
// __nv_bfloat16 (Element<T> in topk_device.cuh).
template <class T, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    row_select_kernel(const T* __restrict__ x, std::int64_t x_stride, int n, int k, int largest, int cap,
                      T* __restrict__ values, std::int64_t v_stride, std::int32_t* __restrict__ indices,
                      std::int64_t i_stride) {
  static_assert(BLOCK % 32 == 0 && kRowSelectBins % 32 == 0, "whole warps");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  auto* list = reinterpret_cast<std::uint64_t*>(smem_raw);
  __shared__ std::uint32_t hist[kRowSelectBins];
  __shared__ std::uint32_t s_digit, s_above, s_bucket, s_count;
  const std::int64_t row = blockIdx.x;
  const T* xr = x + row * x_stride;
  const int t = threadIdx.x;

  // Every load first, unconditional (padding items re-read the last element), so that all are in
  // flight at once: a load inside `j < n ? rank_of(load) : 0` became a branch per item around the
  // load and its NaN test, one load after another (topk_warp_select.cuh measured it).
  T v[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) v[i] = __ldg(xr + min(i * BLOCK + t, n - 1));
  std::uint32_t rk[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) rk[i] = i * BLOCK + t < n ? rank_of(v[i], largest != 0) : 0u;
  auto key_at = [&](int i) { return (std::uint64_t(rk[i]) << 32) | std::uint32_t(~std::uint32_t(i * BLOCK + t)); };
  const int lane = t & 31;

  if (k == 1) {
    // The best key is the answer: a block-wide maximum, no passes.
    __shared__ std::uint64_t s_warp_best[BLOCK / 32];
    // This thread's best: the largest rank, the first (smallest) index among equal ones.
    std::uint32_t best_rank = 0;
    int best_at = -1;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
      if (i * BLOCK + t < n && (best_at < 0 || rk[i] > best_rank)) {
        best_rank = rk[i];
        best_at = i * BLOCK + t;
      }
    std::uint64_t m = best_at < 0 ? 0 : (std::uint64_t(best_rank) << 32) | std::uint32_t(~std::uint32_t(best_at));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const std::uint64_t other = __shfl_xor_sync(0xFFFFFFFFu, static_cast<unsigned long long>(m), o);
      m = other > m ? other : m;
    }
    if (lane == 0) s_warp_best[t >> 5] = m;
    __syncthreads();
    if (t == 0) {
      for (int w = 1; w < BLOCK / 32; ++w) m = s_warp_best[w] > m ? s_warp_best[w] : m;
      const std::uint32_t j = index_of(m);
      indices[row * i_stride] = std::int32_t(j);
      values[row * v_stride] = xr[j];
    }
    return;
  }

  std::uint64_t prefix = 0, mask = 0;
  std::uint32_t greater = 0;
  for (int shift = 56; shift >= 0; shift -= 8) {
    for (int b = t; b < kRowSelectBins; b += BLOCK) hist[b] = 0;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const std::uint64_t key = key_at(i);
      if (i * BLOCK + t < n && (key & mask) == prefix) atomicAdd(hist + (std::uint32_t(key >> shift) & 0xFFu), 1u);
    }
    __syncthreads();
    if (t < 32) {
      // Lane l owns bins [top - 8, top) read from the top down, so the prefix sum over lanes
      // counts keys from the best digit down.
      constexpr int kPer = kRowSelectBins / 32;
      const int top = kRowSelectBins - t * kPer;
      std::uint32_t c[kPer], total = 0;
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        c[j] = hist[top - 1 - j];
        total += c[j];
      }
      std::uint32_t incl = total;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const std::uint32_t up = __shfl_up_sync(0xFFFFFFFFu, incl, o);
        if (t >= o) incl += up;
      }
      const std::uint32_t need = std::uint32_t(k) - greater;
      std::uint32_t run = incl - total;
      if (run < need && need <= incl) {
#pragma unroll
        for (int j = 0; j < kPer; ++j) {
          if (run + c[j] >= need) {
            s_digit = std::uint32_t(top - 1 - j);
            s_above = run;
            s_bucket = c[j];
            break;
          }
          run += c[j];
        }
      }
    }
    __syncthreads();
    greater += s_above;
    prefix |= std::uint64_t(s_digit) << shift;
    mask |= std::uint64_t(0xFFu) << shift;
    if (greater + s_bucket <= std::uint32_t(cap)) break;  // the same for every thread
    // s_* are rewritten only after the next pass's two barriers: every thread has read them.
  }

  if (t == 0) s_count = 0;
  __syncthreads();
  // Warp-aggregated appends (one atomic per warp and item); at most cap keys qualify.
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const std::uint64_t key = key_at(i);
    const bool take = i * BLOCK + t < n && (key & mask) >= prefix;
    const unsigned ballot = __ballot_sync(0xFFFFFFFFu, take);
    if (ballot != 0) {
      const int leader = __ffs(ballot) - 1;
      std::uint32_t slot = 0;
      if (lane == leader) slot = atomicAdd(&s_count, std::uint32_t(__popc(ballot)));
      slot = __shfl_sync(0xFFFFFFFFu, slot, leader);
      if (take) list[slot + __popc(ballot & ((1u << lane) - 1u))] = key;
    }
  }
  __syncthreads();
  const int count = int(s_count);
  int p = 2;
  while (p < count) p <<= 1;
  for (int i = count + t; i < p; i += BLOCK) list[i] = kNoElement;
  __syncthreads();
  bitonic_sort_desc<BLOCK>(list, p);
  write_row<BLOCK>(list, k, xr, values + row * v_stride, indices + row * i_stride);
}

}  // namespace kiln::topk

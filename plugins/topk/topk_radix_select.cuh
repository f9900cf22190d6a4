// Kernels of topk_radix_select: radix select on the 64-bit keys of topk_key.hpp, 11-bit digits
// from the top.  Per row, a pass histograms the next digit of the keys that match the digits
// found so far; the last block of the row to finish (block counter + __threadfence) picks the
// digit holding the k-th best key.  Once the keys above that digit plus the digit's bucket fit in
// the selection capacity, the row is done: every key whose known digits are >= the found ones is
// gathered (in any order) and the gathered keys are sorted in shared memory; the first k are the
// answer.  Keys are unique (the low half is ~index), so the last pass always leaves one key in
// the bucket and the selection is exactly right, ties and NaN included.
//   radix_hist_kernel   (rows x chunks blocks) one pass; skipped by rows already done
//   radix_gather_kernel (rows x chunks blocks) appends the selected keys of each row (from the
//                       row, or from its candidate buffer when a pass filtered one out)
//   radix_sort_kernel   (rows blocks)          sorts them and writes values and indices
#pragma once
#include <cstdint>

#include "topk_dependent_launch.cuh"
#include "topk_device.cuh"

namespace kiln::topk {

// Per-row state in the workspace (zeroed before the first pass).
struct RadixRowState {
  std::uint64_t prefix;     // digits of the k-th best key found so far
  std::uint64_t mask;       // the bits they cover
  std::uint32_t greater;    // keys whose known digits are larger than prefix's
  std::uint32_t done;       // 1: the selection is every key with (key & mask) >= prefix;
                            // 2: the row was answered by another kernel (every kernel here skips it)
  std::uint32_t arrived;    // blocks of the row that finished the current pass
  std::uint32_t selected;   // gathered keys
  std::uint32_t fill_pass;  // 0, or the pass that copies the candidates out (see below)
  std::uint32_t candidates; // keys copied to the row's candidate buffer
  std::uint32_t unused[2];
};
static_assert(sizeof(RadixRowState) == 48, "workspace layout assumes 48-byte row states");

// Filtering (after AIR Top-K's fused filtering): once the keys above the k-th's digit plus its
// bucket fit in the row's candidate buffer (cand_cap keys), the next pass, while it histograms,
// also copies every key with (key & mask) >= prefix there: a superset of the answer, since the
// digits found so far only grow.  The passes after it and the gather read that buffer instead of
// the row, so on typical data the row is read twice and the rest of the work is on a few percent
// of it.

inline constexpr int kRadixBinsDevice = 2048;

// Inclusive prefix sum over the threads of the block; `scratch` holds 32 words.
template <int BLOCK>
__device__ std::uint32_t block_inclusive_sum(std::uint32_t v, std::uint32_t* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const std::uint32_t up = __shfl_up_sync(0xFFFFFFFFu, v, o);
    if (lane >= o) v += up;
  }
  if (lane == 31) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    std::uint32_t w = lane < BLOCK / 32 ? scratch[lane] : 0u;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const std::uint32_t up = __shfl_up_sync(0xFFFFFFFFu, w, o);
      if (lane >= o) w += up;
    }
    if (lane < BLOCK / 32) scratch[lane] = w;
  }
  __syncthreads();
  return warp > 0 ? v + scratch[warp - 1] : v;
}

// Run by the last block of a row: finds the digit holding the k-th best key among the counts in
// `hist`, updates the row state and zeroes `hist` for the next pass.
template <int BLOCK>
__device__ void select_digit(std::uint32_t* hist, RadixRowState* st, int k, int shift, int width, int cap, int pass,
                             int cand_cap) {
  constexpr int kPer = kRadixBinsDevice / BLOCK;
  __shared__ std::uint32_t scratch[32];
  __shared__ std::uint32_t found_digit, found_above, found_bucket;
  // Thread t owns bins [top - kPer, top), read from the top down, so that the prefix sum over
  // threads counts keys from the best digit down.
  const int top = kRadixBinsDevice - int(threadIdx.x) * kPer;
  std::uint32_t c[kPer];
  std::uint32_t total = 0;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    c[j] = __ldcg(hist + top - 1 - j);
    total += c[j];
  }
  const std::uint32_t need = std::uint32_t(k) - st->greater;
  const std::uint32_t incl = block_inclusive_sum<BLOCK>(total, scratch);
  std::uint32_t run = incl - total;
  if (run < need && need <= incl) {
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      if (run + c[j] >= need) {
        found_digit = std::uint32_t(top - 1 - j);
        found_above = run;
        found_bucket = c[j];
        break;
      }
      run += c[j];
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const std::uint32_t greater = st->greater + found_above;
    st->greater = greater;
    st->prefix |= std::uint64_t(found_digit) << shift;
    st->mask |= ((std::uint64_t(1) << width) - 1) << shift;
    const bool done = greater + found_bucket <= std::uint32_t(cap);
    st->done = done ? 1u : 0u;
    // A row that is not done after the last pass cannot exist (its bucket is one key), so a
    // fill pass set here always runs.
    if (!done && st->fill_pass == 0 && greater + found_bucket <= std::uint32_t(cand_cap))
      st->fill_pass = std::uint32_t(pass + 1);
    st->arrived = 0;
  }
  for (int b = threadIdx.x; b < kRadixBinsDevice; b += BLOCK) hist[b] = 0;
}

// Appends the keys with take set to out (cap slots, counter *count), one atomic per warp.  Every
// lane of the warp must call it.
__device__ __forceinline__ void warp_append(bool take, std::uint64_t key, std::uint64_t* out, std::uint32_t* count,
                                            int cap) {
  const int lane = threadIdx.x & 31;
  const unsigned ballot = __ballot_sync(0xFFFFFFFFu, take);
  if (ballot == 0) return;
  const int leader = __ffs(ballot) - 1;
  std::uint32_t slot = 0;
  if (lane == leader) slot = atomicAdd(count, std::uint32_t(__popc(ballot)));
  slot = __shfl_sync(0xFFFFFFFFu, slot, leader);
  if (take) {
    slot += __popc(ballot & ((1u << lane) - 1u));
    if (slot < std::uint32_t(cap)) out[slot] = key;
  }
}

// Appends the keys of the whole block with (key & mask) >= prefix to out (cap slots, counter
// *count in global memory) with one global atomic per call: a million warps appending to one
// counter serialise at the L2 (measured: a fill pass with per-warp atomics made a 2^26 row take
// 1.66 ms instead of 0.39).  Warps reserve their slots with shared-memory atomics, then one thread
// reserves the block's.  Every thread of the block must call it (it has barriers); kNoElement
// keys are never taken.
template <int ITEMS>
__device__ void block_append(const std::uint64_t (&key)[ITEMS], std::uint64_t mask, std::uint64_t prefix,
                             std::uint64_t* out, std::uint32_t* count, int cap) {
  __shared__ std::uint32_t s_block_count, s_block_base;
  const int lane = threadIdx.x & 31;
  if (threadIdx.x == 0) s_block_count = 0;
  __syncthreads();
  std::uint32_t slot[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const bool take = key[i] != kNoElement && (key[i] & mask) >= prefix;
    const unsigned ballot = __ballot_sync(0xFFFFFFFFu, take);
    slot[i] = 0xFFFFFFFFu;
    if (ballot != 0) {
      const int leader = __ffs(ballot) - 1;
      std::uint32_t first = 0;
      if (lane == leader) first = atomicAdd(&s_block_count, std::uint32_t(__popc(ballot)));
      first = __shfl_sync(0xFFFFFFFFu, first, leader);
      if (take) slot[i] = first + __popc(ballot & ((1u << lane) - 1u));
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) s_block_base = s_block_count != 0 ? atomicAdd(count, s_block_count) : 0u;
  __syncthreads();
  const std::uint32_t block_base = s_block_base;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (slot[i] == 0xFFFFFFFFu) continue;
    const std::uint32_t at = block_base + slot[i];
    if (at < std::uint32_t(cap)) out[at] = key[i];
  }
  // The next call's reset of s_block_count follows a barrier every thread reaches only after
  // reading s_block_base here; s_block_base is rewritten only after two more barriers.
}

// One pass over one chunk of one row (of the row, or of its candidates); the block bodies are
// device functions so that other variants can run them over a list of rows (see
// topk_sample_select's fallback).  Every thread of the block calls them.
template <class T, int BLOCK, int ITEMS>
__device__ __forceinline__ void radix_hist_block(std::int64_t row, int chunk, const T* __restrict__ x,
                                                 std::int64_t x_stride, std::int64_t n, int k, int largest, int shift,
                                                 int width, std::int64_t chunk_len, int chunks, int cap, int pass,
                                                 int cand_cap, RadixRowState* __restrict__ states,
                                                 std::uint32_t* __restrict__ hists, std::uint64_t* __restrict__ cands) {
  __shared__ std::uint32_t h[kRadixBinsDevice];
  __shared__ bool is_last;
  RadixRowState* st = states + row;
  if (st->done) return;  // the same value for every thread of every block of the row
  const std::uint64_t prefix = st->prefix, mask = st->mask;
  const std::uint32_t fill_pass = st->fill_pass;
  const std::uint32_t digit_mask = (1u << width) - 1;
  std::uint64_t* row_cands = cands + row * std::int64_t(cand_cap);
  for (int b = threadIdx.x; b < kRadixBinsDevice; b += BLOCK) h[b] = 0;
  __syncthreads();
  if (fill_pass != 0 && std::uint32_t(pass) > fill_pass) {
    // Read the candidates: this block's share of them.
    const std::int64_t count = st->candidates < std::uint32_t(cand_cap) ? st->candidates : std::uint32_t(cand_cap);
    const std::int64_t begin = count * chunk / chunks, end = count * (chunk + 1) / chunks;
    for (std::int64_t base = begin + threadIdx.x; base < end; base += std::int64_t(BLOCK) * ITEMS) {
      std::uint64_t key[ITEMS];
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) {
        const std::int64_t j = base + std::int64_t(i) * BLOCK;
        key[i] = j < end ? load_key(row_cands + j) : kNoElement;
      }
#pragma unroll
      for (int i = 0; i < ITEMS; ++i)
        if (key[i] != kNoElement && (key[i] & mask) == prefix)
          atomicAdd(h + (std::uint32_t(key[i] >> shift) & digit_mask), 1u);
    }
  } else {
    const bool fill = fill_pass != 0 && std::uint32_t(pass) == fill_pass;  // block-uniform; 0 is "never"
    const T* xr = x + row * x_stride;
    const std::int64_t begin = std::int64_t(chunk) * chunk_len;
    const std::int64_t end = begin + chunk_len < n ? begin + chunk_len : n;
    // Every thread of the block runs the same number of iterations, so the ballots and the
    // barriers of the fill are safe.
    for (std::int64_t base = begin; base < end; base += std::int64_t(BLOCK) * ITEMS) {
      T v[ITEMS];
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) {
        const std::int64_t j = base + std::int64_t(i) * BLOCK + threadIdx.x;
        if (j < end) v[i] = __ldg(xr + j);
      }
      std::uint64_t key[ITEMS];
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) {
        const std::int64_t j = base + std::int64_t(i) * BLOCK + threadIdx.x;
        key[i] = kNoElement;
        if (j < end) {
          key[i] = key_of(v[i], j, largest != 0);
          if ((key[i] & mask) == prefix) atomicAdd(h + (std::uint32_t(key[i] >> shift) & digit_mask), 1u);
        }
      }
      if (fill) block_append<ITEMS>(key, mask, prefix, row_cands, &st->candidates, cand_cap);
    }
  }
  __syncthreads();
  std::uint32_t* hist = hists + row * kRadixBinsDevice;
  for (int b = threadIdx.x; b < kRadixBinsDevice; b += BLOCK) {
    if (h[b] != 0) atomicAdd(hist + b, h[b]);
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(&st->arrived, 1u) == std::uint32_t(chunks - 1);
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  select_digit<BLOCK>(hist, st, k, shift, width, cap, pass, cand_cap);
}

// One pass: blockIdx.x is the row, blockIdx.y its chunk.
template <class T, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    radix_hist_kernel(const T* __restrict__ x, std::int64_t x_stride, std::int64_t n, int k, int largest,
                      int shift, int width, std::int64_t chunk_len, int chunks, int cap, int pass, int cand_cap,
                      RadixRowState* __restrict__ states, std::uint32_t* __restrict__ hists,
                      std::uint64_t* __restrict__ cands) {
  wait_for_prior_grid();  // topk_dependent_launch.cuh: before any global access or return
  let_next_grid_start();
  radix_hist_block<T, BLOCK, ITEMS>(blockIdx.x, int(blockIdx.y), x, x_stride, n, k, largest, shift, width, chunk_len,
                                    chunks, cap, pass, cand_cap, states, hists, cands);
}

template <class T, int BLOCK, int ITEMS>
__device__ __forceinline__ void radix_gather_block(std::int64_t row, int chunk, const T* __restrict__ x,
                                                   std::int64_t x_stride, std::int64_t n, int largest,
                                                   std::int64_t chunk_len, int chunks, int cap, int cand_cap,
                                                   RadixRowState* __restrict__ states,
                                                   const std::uint64_t* __restrict__ cands,
                                                   std::uint64_t* __restrict__ selected) {
  RadixRowState* st = states + row;
  // 0 cannot happen after the last pass (guards the buffer); 2: answered by another kernel
  // (topk_sample_select's rows that did not need these passes).
  if (st->done != 1) return;
  const std::uint64_t prefix = st->prefix, mask = st->mask;
  std::uint64_t* out = selected + row * cap;
  if (st->fill_pass != 0) {
    // The candidates hold every key of the selection.
    const std::uint64_t* row_cands = cands + row * std::int64_t(cand_cap);
    const std::int64_t count = st->candidates < std::uint32_t(cand_cap) ? st->candidates : std::uint32_t(cand_cap);
    const std::int64_t begin = count * chunk / chunks, end = count * (chunk + 1) / chunks;
    for (std::int64_t base = begin; base < end; base += BLOCK) {
      const std::int64_t j = base + threadIdx.x;
      const std::uint64_t key = j < end ? load_key(row_cands + j) : kNoElement;
      warp_append(key != kNoElement && (key & mask) >= prefix, key, out, &st->selected, cap);
    }
    return;
  }
  const T* xr = x + row * x_stride;
  const std::int64_t begin = std::int64_t(chunk) * chunk_len;
  const std::int64_t end = begin + chunk_len < n ? begin + chunk_len : n;
  // Every thread runs the same number of iterations, so the warp-wide ballots are safe.
  for (std::int64_t base = begin; base < end; base += std::int64_t(BLOCK) * ITEMS) {
    T v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const std::int64_t j = base + std::int64_t(i) * BLOCK + threadIdx.x;
      if (j < end) v[i] = __ldg(xr + j);
    }
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const std::int64_t j = base + std::int64_t(i) * BLOCK + threadIdx.x;
      std::uint64_t key = 0;
      bool take = false;
      if (j < end) {
        key = key_of(v[i], j, largest != 0);
        take = (key & mask) >= prefix;
      }
      warp_append(take, key, out, &st->selected, cap);
    }
  }
}

template <class T, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    radix_gather_kernel(const T* __restrict__ x, std::int64_t x_stride, std::int64_t n, int largest,
                        std::int64_t chunk_len, int chunks, int cap, int cand_cap, RadixRowState* __restrict__ states,
                        const std::uint64_t* __restrict__ cands, std::uint64_t* __restrict__ selected) {
  wait_for_prior_grid();  // topk_dependent_launch.cuh: before any global access or return
  let_next_grid_start();
  radix_gather_block<T, BLOCK, ITEMS>(blockIdx.x, int(blockIdx.y), x, x_stride, n, largest, chunk_len, chunks, cap,
                                      cand_cap, states, cands, selected);
}

// Dynamic shared memory: cap keys.
template <class T, int BLOCK>
__device__ __forceinline__ void radix_sort_block(std::int64_t row, const T* __restrict__ x, std::int64_t x_stride,
                                                 int k, int cap, const RadixRowState* __restrict__ states,
                                                 const std::uint64_t* __restrict__ selected, T* __restrict__ values,
                                                 std::int64_t v_stride, std::int32_t* __restrict__ indices,
                                                 std::int64_t i_stride) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  auto* s = reinterpret_cast<std::uint64_t*>(smem_raw);
  if (states[row].done != 1) return;  // 2: answered by another kernel (see the gather)
  const std::uint32_t got = states[row].selected;
  const int count = got < std::uint32_t(cap) ? int(got) : cap;
  int p = 2;
  while (p < count) p <<= 1;
  const std::uint64_t* in = selected + row * cap;
  for (int i = threadIdx.x; i < p; i += BLOCK) s[i] = i < count ? in[i] : kNoElement;
  __syncthreads();
  bitonic_sort_desc<BLOCK>(s, p);
  write_row<BLOCK>(s, k, x + row * x_stride, values + row * v_stride, indices + row * i_stride);
}

template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    radix_sort_kernel(const T* __restrict__ x, std::int64_t x_stride, int k, int cap,
                      const RadixRowState* __restrict__ states, const std::uint64_t* __restrict__ selected,
                      T* __restrict__ values, std::int64_t v_stride, std::int32_t* __restrict__ indices,
                      std::int64_t i_stride) {
  wait_for_prior_grid();  // topk_dependent_launch.cuh: before any global access or return
  let_next_grid_start();
  radix_sort_block<T, BLOCK>(blockIdx.x, x, x_stride, k, cap, states, selected, values, v_stride, indices, i_stride);
}

}  // namespace kiln::topk

// Kernels of topk_radix_select: radix select on the 64-bit keys of topk_key.hpp, 11-bit digits
// from the top.  Per row, a pass histograms the next digit of the keys that match the digits
// found so far; the last block of the row to finish (block counter + __threadfence) picks the
// digit holding the k-th best key.  Once the keys above that digit plus the digit's bucket fit in
// the selection capacity, the row is done: every key whose known digits are >= the found ones is
// gathered (in any order) and the gathered keys are sorted in shared memory; the first k are the
// answer.  Keys are unique (the low half is ~index), so the last pass always leaves one key in
// the bucket and the selection is exactly right, ties and NaN included.
//   radix_hist_kernel   (rows x chunks blocks) one pass; skipped by rows already done
//   radix_gather_kernel (rows x chunks blocks) appends the selected keys of each row
//   radix_sort_kernel   (rows blocks)          sorts them and writes values and indices
#pragma once
#include <cstdint>

#include "topk_device.cuh"

namespace kiln::topk {

// Per-row state in the workspace (zeroed before the first pass).
struct RadixRowState {
  std::uint64_t prefix;     // digits of the k-th best key found so far
  std::uint64_t mask;       // the bits they cover
  std::uint32_t greater;    // keys whose known digits are larger than prefix's
  std::uint32_t done;       // 1: the selection is every key with (key & mask) >= prefix
  std::uint32_t arrived;    // blocks of the row that finished the current pass
  std::uint32_t selected;   // gathered keys
};
static_assert(sizeof(RadixRowState) == 32, "workspace layout assumes 32-byte row states");

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
__device__ void select_digit(std::uint32_t* hist, RadixRowState* st, int k, int shift, int width, int cap) {
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
    st->done = greater + found_bucket <= std::uint32_t(cap) ? 1u : 0u;
    st->arrived = 0;
  }
  for (int b = threadIdx.x; b < kRadixBinsDevice; b += BLOCK) hist[b] = 0;
}

template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    radix_hist_kernel(const float* __restrict__ x, std::int64_t x_stride, std::int64_t n, int k, int largest,
                      int shift, int width, std::int64_t chunk_len, int chunks, int cap,
                      RadixRowState* __restrict__ states, std::uint32_t* __restrict__ hists) {
  __shared__ std::uint32_t h[kRadixBinsDevice];
  __shared__ bool is_last;
  const std::int64_t row = blockIdx.x;
  RadixRowState* st = states + row;
  if (st->done) return;  // the same value for every thread of every block of the row
  const std::uint64_t prefix = st->prefix, mask = st->mask;
  const std::uint32_t digit_mask = (1u << width) - 1;
  for (int b = threadIdx.x; b < kRadixBinsDevice; b += BLOCK) h[b] = 0;
  __syncthreads();
  const float* xr = x + row * x_stride;
  const std::int64_t begin = std::int64_t(blockIdx.y) * chunk_len;
  const std::int64_t end = begin + chunk_len < n ? begin + chunk_len : n;
  for (std::int64_t base = begin + threadIdx.x; base < end; base += std::int64_t(BLOCK) * ITEMS) {
    float v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const std::int64_t j = base + std::int64_t(i) * BLOCK;
      if (j < end) v[i] = __ldg(xr + j);
    }
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const std::int64_t j = base + std::int64_t(i) * BLOCK;
      if (j < end) {
        const std::uint64_t key = key_of(v[i], j, largest != 0);
        if ((key & mask) == prefix) atomicAdd(h + (std::uint32_t(key >> shift) & digit_mask), 1u);
      }
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
  select_digit<BLOCK>(hist, st, k, shift, width, cap);
}

template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    radix_gather_kernel(const float* __restrict__ x, std::int64_t x_stride, std::int64_t n, int largest,
                        std::int64_t chunk_len, int cap, RadixRowState* __restrict__ states,
                        std::uint64_t* __restrict__ selected) {
  const std::int64_t row = blockIdx.x;
  RadixRowState* st = states + row;
  if (!st->done) return;  // cannot happen after the last pass; guards the buffer
  const std::uint64_t prefix = st->prefix, mask = st->mask;
  const int lane = threadIdx.x & 31;
  const float* xr = x + row * x_stride;
  std::uint64_t* out = selected + row * cap;
  const std::int64_t begin = std::int64_t(blockIdx.y) * chunk_len;
  const std::int64_t end = begin + chunk_len < n ? begin + chunk_len : n;
  // Every thread runs the same number of iterations, so the warp-wide ballots are safe.
  for (std::int64_t base = begin; base < end; base += std::int64_t(BLOCK) * ITEMS) {
    float v[ITEMS];
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
      const unsigned ballot = __ballot_sync(0xFFFFFFFFu, take);
      if (ballot != 0) {
        const int leader = __ffs(ballot) - 1;
        std::uint32_t slot = 0;
        if (lane == leader) slot = atomicAdd(&st->selected, std::uint32_t(__popc(ballot)));
        slot = __shfl_sync(0xFFFFFFFFu, slot, leader);
        if (take) {
          slot += __popc(ballot & ((1u << lane) - 1u));
          if (slot < std::uint32_t(cap)) out[slot] = key;
        }
      }
    }
  }
}

// Dynamic shared memory: cap keys.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    radix_sort_kernel(const float* __restrict__ x, std::int64_t x_stride, int k, int cap,
                      const RadixRowState* __restrict__ states, const std::uint64_t* __restrict__ selected,
                      float* __restrict__ values, std::int64_t v_stride, std::int32_t* __restrict__ indices,
                      std::int64_t i_stride) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  auto* s = reinterpret_cast<std::uint64_t*>(smem_raw);
  const std::int64_t row = blockIdx.x;
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

}  // namespace kiln::topk

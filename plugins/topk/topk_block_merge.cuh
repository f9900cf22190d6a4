// Kernels of topk_block_merge.  A block keeps the best `kp` keys seen so far (sorted, in shared
// memory) and a candidate buffer of `kp` keys.  Elements of a tile whose key beats the current
// k-th best (the threshold) are appended to the candidate buffer; a full buffer is sorted
// (bitonic) and merged into the best keys, which raises the threshold.  On random data the
// threshold soon rejects nearly every element, so the pass runs at the speed of the loads.
//   topk_chunk_kernel: one block per (row, chunk); its k best keys go to the workspace, or, when
//                      a row is one chunk, straight to the outputs.
//   topk_merge_kernel: one block per row over the chunks' keys in the workspace.
#pragma once
#include <cstdint>

#include "topk_device.cuh"

namespace kiln::topk {

struct BlockTopkSmem {
  std::uint64_t* best;    // [kp], sorted descending; 0 = no element yet
  std::uint64_t* cand;    // [kp]
  int* count;             // candidates appended (may pass kp: those did not fit)
  std::uint64_t* thresh;  // best[k - 1]
};

// Sorts the first `valid` candidates and merges them into the best keys.
template <int BLOCK>
__device__ void flush_candidates(const BlockTopkSmem& s, int valid, int k, int kp) {
  for (int i = valid + threadIdx.x; i < kp; i += BLOCK) s.cand[i] = kNoElement;
  __syncthreads();
  bitonic_sort_desc<BLOCK>(s.cand, kp);
  // best descending against candidates ascending: the larger of each pair forms a bitonic
  // sequence holding the kp best of both.
  for (int i = threadIdx.x; i < kp; i += BLOCK) {
    const std::uint64_t a = s.best[i], b = s.cand[kp - 1 - i];
    s.best[i] = a > b ? a : b;
  }
  __syncthreads();
  bitonic_merge_desc<BLOCK>(s.best, kp);
  if (threadIdx.x == 0) {
    *s.thresh = s.best[k - 1];
    *s.count = 0;
  }
  __syncthreads();
}

// Appends this thread's pending keys, flushing whenever the buffer fills.  Called by the whole
// block when any thread has a pending key.
template <int BLOCK, int ITEMS>
__device__ void offer_candidates(const BlockTopkSmem& s, const std::uint64_t (&key)[ITEMS], unsigned pending, int k,
                                 int kp) {
  for (;;) {
    bool room = true;  // false once an append found the buffer full: the rest waits for the flush
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      if (room && (pending & (1u << i))) {
        const int pos = atomicAdd(s.count, 1);
        if (pos < kp) {
          s.cand[pos] = key[i];
          pending &= ~(1u << i);
        } else {
          room = false;
        }
      }
    }
    __syncthreads();
    const bool full = *s.count >= kp;
    __syncthreads();  // everyone has read count before the flush resets it
    if (!full) return;  // nothing can be pending: every append found room
    flush_candidates<BLOCK>(s, kp, k, kp);
    const std::uint64_t th = *s.thresh;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      if ((pending & (1u << i)) && key[i] <= th) pending &= ~(1u << i);
    }
    if (!__syncthreads_or(pending != 0)) return;
  }
}

// The k best keys of src(j) for j in [begin, end) end up in s.best[0, k) (0 where fewer).
template <int BLOCK, int ITEMS, class Source>
__device__ void block_topk(const Source& src, std::int64_t begin, std::int64_t end, int k, int kp,
                           const BlockTopkSmem& s) {
  for (int i = threadIdx.x; i < kp; i += BLOCK) s.best[i] = kNoElement;
  if (threadIdx.x == 0) {
    *s.count = 0;
    *s.thresh = kNoElement;
  }
  __syncthreads();
  for (std::int64_t base = begin; base < end; base += std::int64_t(BLOCK) * ITEMS) {
    const std::uint64_t th = *s.thresh;
    std::uint64_t key[ITEMS];
    unsigned pending = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const std::int64_t j = base + std::int64_t(i) * BLOCK + threadIdx.x;
      key[i] = j < end ? src(j) : kNoElement;
      if (key[i] > th) pending |= 1u << i;
    }
    if (__syncthreads_or(pending != 0)) offer_candidates<BLOCK, ITEMS>(s, key, pending, k, kp);
  }
  const int left = *s.count;  // read by all after the last barrier; only the flush changes it
  if (left > 0) flush_candidates<BLOCK>(s, left, k, kp);
}

struct RowSource {
  const float* row;
  bool largest;
  __device__ std::uint64_t operator()(std::int64_t j) const { return key_of(__ldg(row + j), j, largest); }
};

struct KeySource {
  const std::uint64_t* keys;
  __device__ std::uint64_t operator()(std::int64_t j) const { return load_key(keys + j); }
};

// Dynamic shared memory: 2 * kp keys.
template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    topk_chunk_kernel(const float* __restrict__ x, std::int64_t x_stride, std::int64_t n, int k, int kp, int largest,
                      std::int64_t chunk_len, int chunks, std::uint64_t* __restrict__ ws, float* __restrict__ values,
                      std::int64_t v_stride, std::int32_t* __restrict__ indices, std::int64_t i_stride) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ int count;
  __shared__ std::uint64_t thresh;
  auto* best = reinterpret_cast<std::uint64_t*>(smem_raw);
  const BlockTopkSmem s{best, best + kp, &count, &thresh};
  const std::int64_t row = blockIdx.x;
  const int chunk = blockIdx.y;
  const float* xr = x + row * x_stride;
  const std::int64_t begin = std::int64_t(chunk) * chunk_len;
  const std::int64_t end = begin + chunk_len < n ? begin + chunk_len : n;
  block_topk<BLOCK, ITEMS>(RowSource{xr, largest != 0}, begin, end, k, kp, s);
  if (chunks == 1) {
    write_row<BLOCK>(best, k, xr, values + row * v_stride, indices + row * i_stride);
  } else {
    std::uint64_t* out = ws + (row * chunks + chunk) * k;
    for (int i = threadIdx.x; i < k; i += BLOCK) out[i] = best[i];
  }
}

// Dynamic shared memory: 2 * kp keys.
template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    topk_merge_kernel(const float* __restrict__ x, std::int64_t x_stride, int k, int kp, int chunks,
                      const std::uint64_t* __restrict__ ws, float* __restrict__ values, std::int64_t v_stride,
                      std::int32_t* __restrict__ indices, std::int64_t i_stride) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ int count;
  __shared__ std::uint64_t thresh;
  auto* best = reinterpret_cast<std::uint64_t*>(smem_raw);
  const BlockTopkSmem s{best, best + kp, &count, &thresh};
  const std::int64_t row = blockIdx.x;
  const std::int64_t total = std::int64_t(chunks) * k;
  block_topk<BLOCK, ITEMS>(KeySource{ws + row * total}, 0, total, k, kp, s);
  write_row<BLOCK>(best, k, x + row * x_stride, values + row * v_stride, indices + row * i_stride);
}

}  // namespace kiln::topk

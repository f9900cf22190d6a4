// Kernels of topk_sample_select: a threshold from a sample, one filtering pass over the row, an
// exact selection on the candidates (after AIR Top-K's fused filtering, with the first digit
// replaced by a sampled threshold: the pass over the row does one compare per element and no
// histogram atomics, which is what bounds topk_radix_select on long rows).
//   sample_gather_kernel    (rows x parts blocks; only for at most kSampleGatherMaxRows rows that
//                            are sampled) the sample's ranks into the workspace
//   sample_threshold_kernel (rows blocks)          ranks of a sample of the row (runs of 8
//                            contiguous elements spread over the row, or the whole row when
//                            n <= kSampleMax; or the gathered ranks) in shared memory (dynamic);
//                            picks a 32-bit rank threshold T with at least `rank` sampled ranks >= T
//   sample_filter_kernel    (rows x chunks blocks) appends the 64-bit key of every element whose
//                            rank is >= T to the row's candidate buffer (counting past its end);
//                            16-byte loads, appends staged per block in shared memory
//   sample_select_kernel    (rows blocks)          if the candidates hold at least k keys and fit
//                            the buffer, they contain the answer: radix select on them (8-bit
//                            digits starting below their common prefix), a bucket sort (or,
//                            for clustered lists, a bitonic sort) of the <= kSampleSortCap best,
//                            the first k written.  Otherwise the row is
//                            appended to the list of failed rows
//   sample_fallback_passes_kernel (cooperative, at most kSampleFallbackGrid blocks) and
//   sample_fallback_sort_kernel (kSampleFallbackGrid blocks) topk_radix_select's passes, gather
//                            and sort (its block bodies) over the chunks of the failed rows only:
//                            with none, two launches of small grids whose blocks return at once
//   sample_argmax_*_kernel   k = 1 only, instead of all of the above: the largest key of every
//                            (row, chunk), then of every row
// Exact for every input: the candidates are a superset of the answer whenever the row succeeds,
// and the fallback is exact.  Ties, NaN and -0.0 follow topk_key.hpp.
#pragma once
#include <cstdint>

#include <cooperative_groups.h>

#include "topk_dependent_launch.cuh"
#include "topk_device.cuh"
#include "topk_radix_select.cuh"
#include "topk_rank16.hpp"
#include "topk_sample_select_params.hpp"

namespace kiln::topk {

// 8-byte aligned (24 bytes): the workspaces place 8-byte keys right after the rows' states.
struct alignas(8) SampleRowState {
  std::uint32_t threshold;  // rank threshold of the filter
  std::uint32_t count;      // keys the filter passed (may exceed the buffer)
  std::uint32_t best;       // the largest rank among them (the candidates' keys share the bits
                            // above the highest one in which threshold and best differ)
  std::uint32_t unused;     // (topk_grid_select: its blocks' arrivals)
  std::uint32_t bound;      // the filter passes ranks above threshold, and ranks equal to it at
                            // indices below bound (sample_tie_bound)
};

// Block-wide maximum of v (every thread gets it); `scratch` holds 32 words.
template <int BLOCK, class U>
__device__ U block_max(U v, U* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const U other = __shfl_xor_sync(0xFFFFFFFFu, v, o);
    v = other > v ? other : v;
  }
  __syncthreads();  // scratch may still be read by an earlier call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < BLOCK / 32; ++w) v = scratch[w] > v ? scratch[w] : v;
  return v;
}

// Band of a distance d from the best sampled rank: 0 for d = 0, else b with 2^(b-1) <= d < 2^b.
__device__ __forceinline__ int distance_band(std::uint32_t d) { return 32 - __clz(int(d)); }

// The sample's runs of a row: run g of runs = samples / kSampleRun starts at g * n / runs (runs do
// not overlap: n / runs > kSampleRun).  Used by both ways of reading the sample below.
__device__ __forceinline__ std::int64_t sample_run_start(int g, int runs, std::int64_t n) {
  return std::int64_t(g) * n / runs;
}

// For few rows (kSampleGatherMaxRows): the ranks of the sample gathered by many blocks, element j
// of the sample of row r into gathered[r samples + j].  One block reading a sample's scattered
// runs has too few loads in flight: a single row of 2^24 f32 spent 27 us there (Nsight Compute,
// H200), on 32768 elements.  Grid (rows, ceil(samples / BLOCK)); eight consecutive threads read one run.
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    sample_gather_kernel(const T* __restrict__ x, std::int64_t x_stride, std::int64_t n, int largest, int samples,
                         std::uint32_t* __restrict__ gathered) {
  wait_for_prior_grid();  // topk_dependent_launch.cuh: before any global access or return
  const int j = int(blockIdx.y) * BLOCK + int(threadIdx.x);
  if (j >= samples) return;
  const std::int64_t row = blockIdx.x;
  const std::int64_t at = sample_run_start(j / kSampleRun, samples / kSampleRun, n) + j % kSampleRun;
  gathered[row * samples + j] = rank_of(__ldg(x + row * x_stride + at), largest != 0);
}

// The row's filter state from the threshold T the sample gave (every thread calls it; s_rank[j]
// is sample j's rank, sample j at index sample_index(j)).  Two refinements, both keeping at least
// `rank` samples at or above the threshold:
//  - T is raised to c, the lowest sampled rank >= T (no sample lies in [T, c), so fewer
//    candidates and the same margin);
//  - when c's tie class holds at least kSampleTieMin samples (16-bit rows of millions tie by the
//    thousands: 65536 elements a value at the top of 2^26 uniform bf16), its members are passed
//    only below the index just past the m-th sampled member (m = 2 rank + 4, in index order):
//    the filter then appends about m / (samples / n) of the class, not all of it.
// Exact either way: the candidates are the ranks above c and a prefix (by index) of c's class,
// so when they hold at least k keys they hold the answer (ties are taken in index order), and
// when they do not, the row takes the fallback (the select kernel's test is unchanged).
// The class bound is for 16-bit rows only (kClassBound): f32 rows seldom tie that much, and the
// bound's test in the f32 filter cost it 10 registers and a third of its blocks an SM (+8 us at
// 1 x 2^24, twenty-third session).
template <int BLOCK, bool kClassBound>
__device__ void sample_tie_bound(const std::uint32_t* s_rank, int samples, int rank, std::int64_t n,
                                 std::uint32_t threshold, SampleRowState* state, std::uint32_t* scratch) {
  __shared__ std::uint32_t s_at;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  std::uint32_t low = 0xFFFFFFFFu;
  for (int j = t; j < samples; j += BLOCK)
    if (s_rank[j] >= threshold && s_rank[j] < low) low = s_rank[j];
  const std::uint32_t c = ~block_max<BLOCK>(~low, scratch);  // >= threshold: the rank-th sample is
  std::int64_t bound = n;
  const int m = 2 * rank + 4;
  if (kClassBound && std::int64_t(samples) < n) {
    // The m-th sample of c's class in index order: each warp counts a contiguous segment (whole
    // 32-sample blocks, a ballot each: no bank conflicts), a scan of the warps' counts, and the
    // warp whose segment holds it walks its ballots again.
    constexpr int W = BLOCK / 32;
    const int seg = ((samples + W - 1) / W + 31) & ~31, first = warp * seg, last = min(first + seg, samples);
    std::uint32_t mine = 0;  // the same in every lane
    for (int b = first; b < last; b += 32)
      mine += std::uint32_t(__popc(__ballot_sync(0xFFFFFFFFu, b + lane < last && s_rank[b + lane] == c)));
    __syncthreads();  // scratch is free again (block_max's last read)
    if (lane == 0) scratch[warp] = mine;
    if (t == 0) s_at = 0xFFFFFFFFu;
    __syncthreads();
    std::uint32_t before = 0, total = 0;
    for (int w = 0; w < W; ++w) {
      before += w < warp ? scratch[w] : 0u;
      total += scratch[w];
    }
    const std::uint32_t want = std::uint32_t(m);
    if (total >= std::uint32_t(kSampleTieMin) && total > want && before < want && before + mine >= want) {
      std::uint32_t seen = before;
      for (int b = first; b < last; b += 32) {
        const unsigned hit = __ballot_sync(0xFFFFFFFFu, b + lane < last && s_rank[b + lane] == c);
        if (seen + std::uint32_t(__popc(hit)) >= want) {  // the same for the whole warp
          const std::uint32_t upto = std::uint32_t(__popc(hit & (lane == 31 ? 0xFFFFFFFFu : (2u << lane) - 1u)));
          if (((hit >> lane) & 1u) != 0 && seen + upto == want) s_at = std::uint32_t(b + lane);
          break;
        }
        seen += std::uint32_t(__popc(hit));
      }
    }
    __syncthreads();
    if (s_at != 0xFFFFFFFFu) {
      const int j = int(s_at), runs = samples / kSampleRun;
      bound = sample_run_start(j / kSampleRun, runs, n) + j % kSampleRun + 1;
    }
  }
  if (t == 0) *state = SampleRowState{c, 0u, 0u, 0u, std::uint32_t(bound)};
}

// failed[0]: how many rows need the fallback; failed[1 + i]: their indices (any order).
// `gathered`: the sample's ranks from sample_gather_kernel, or null (this kernel reads the sample).
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    sample_threshold_kernel(const T* __restrict__ x, std::int64_t x_stride, std::int64_t n, int largest, int samples,
                            int rank, const std::uint32_t* __restrict__ gathered, SampleRowState* __restrict__ states,
                            std::uint32_t* __restrict__ failed) {
  extern __shared__ std::uint32_t s_rank[];  // samples ranks (dynamic: up to kSampleMaxLong)
  __shared__ std::uint32_t hist[33 * 32];  // [band or sub-bin][lane]: no two lanes of a warp collide
  __shared__ std::uint32_t s_band[33];
  __shared__ std::uint32_t scratch[32];
  __shared__ int s_found;
  __shared__ std::uint32_t s_before;
  const std::int64_t row = blockIdx.x;
  const T* xr = x + row * x_stride;
  const int t = threadIdx.x, lane = t & 31;
  wait_for_prior_grid();  // topk_dependent_launch.cuh: before any global access or return
  if (row == 0 && t == 0) failed[0] = 0;  // read by the select kernel, after this one

  std::uint32_t best = 0;
  if (gathered != nullptr) {
    const std::uint32_t* gr = gathered + row * samples;
#pragma unroll 8
    for (int j = t; j < samples; j += BLOCK) {
      const std::uint32_t r = __ldcg(gr + j);
      s_rank[j] = r;
      best = r > best ? r : best;
    }
  } else if (std::int64_t(samples) == n) {
    for (int j = t; j < samples; j += BLOCK) {
      const std::uint32_t r = rank_of(__ldg(xr + j), largest != 0);
      s_rank[j] = r;
      best = r > best ? r : best;
    }
  } else {
    // samples < n, a multiple of kSampleRun.
    const int runs = samples / kSampleRun;
#pragma unroll 2
    for (int g = t; g < runs; g += BLOCK) {
      const std::int64_t start = sample_run_start(g, runs, n);
      std::uint32_t r[kSampleRun];
#pragma unroll
      for (int i = 0; i < kSampleRun; ++i) r[i] = rank_of(__ldg(xr + start + i), largest != 0);
#pragma unroll
      for (int i = 0; i < kSampleRun; ++i) {
        s_rank[g * kSampleRun + i] = r[i];
        best = r[i] > best ? r[i] : best;
      }
    }
  }
  for (int b = t; b < 33 * 32; b += BLOCK) hist[b] = 0;
  const std::uint32_t top = block_max<BLOCK>(best, scratch);  // has barriers: s_rank and hist are ready

  // Count the samples per band of distance from the best one; the first bands whose total
  // reaches `rank` end in band b*.
  for (int j = t; j < samples; j += BLOCK) atomicAdd(hist + distance_band(top - s_rank[j]) * 32 + lane, 1u);
  __syncthreads();
  if (t < 33) {
    std::uint32_t c = 0;
    for (int l = 0; l < 32; ++l) c += hist[t * 32 + l];
    s_band[t] = c;
  }
  __syncthreads();
  if (t == 0) {
    std::uint32_t cum = 0;
    int found = 32;
    for (int b = 0; b < 33; ++b) {
      if (cum + s_band[b] >= std::uint32_t(rank)) {
        found = b;
        break;
      }
      cum += s_band[b];
    }
    s_found = found;
    s_before = cum;
  }
  for (int b = t; b < 33 * 32; b += BLOCK) hist[b] = 0;
  __syncthreads();
  const int band = s_found;
  if (band == 0) {
    sample_tie_bound<BLOCK, sizeof(T) == 2>(s_rank, samples, rank, n, top, states + row, scratch);
    return;
  }
  // Split band b* = [2^(b*-1), 2^b*) into 32 equal sub-bins (or its 2^(b*-1) single distances) and
  // take the first sub-bins whose running total reaches `rank`: the threshold is the largest
  // distance they cover, so at least `rank` samples are at or above it.
  const std::uint32_t lo = 1u << (band - 1);
  const int sh = band - 1 >= 5 ? band - 6 : 0;
  for (int j = t; j < samples; j += BLOCK) {
    const std::uint32_t d = top - s_rank[j];
    if (distance_band(d) == band) atomicAdd(hist + ((d - lo) >> sh) * 32 + lane, 1u);
  }
  __syncthreads();
  if (t < 32) {
    std::uint32_t c = 0;
    for (int l = 0; l < 32; ++l) c += hist[t * 32 + l];
    s_band[t] = c;
  }
  __syncthreads();
  if (t == 0) {
    std::uint32_t cum = s_before;
    std::uint64_t reach = std::uint64_t(lo) * 2 - 1;  // the whole band
    for (int s = 0; s < 32; ++s) {
      cum += s_band[s];
      if (cum >= std::uint32_t(rank)) {
        reach = std::uint64_t(lo) + (std::uint64_t(s + 1) << sh) - 1;
        break;
      }
    }
    s_before = reach >= top ? 0u : top - std::uint32_t(reach);  // the threshold
  }
  __syncthreads();
  sample_tie_bound<BLOCK, sizeof(T) == 2>(s_rank, samples, rank, n, s_before, states + row, scratch);
}

// The filter reads the row in 16-byte loads (4 f32 or 8 f16/bf16 elements) from its first 16-byte
// boundary (the `head` elements before it, at most 3 or 7, are read one by one by the row's first
// block).  A block's candidates are staged
// in shared memory (kSampleStage keys, warps reserving slots with shared atomics) and written out
// at the end with one global atomic for the slots and one for the best rank; a warp whose keys do
// not fit the stage (rows of ties) appends the overflow with its own global atomic.
template <class T, int BLOCK, int ITEMS>
__device__ __forceinline__ void sample_filter_body(const T* __restrict__ x, std::int64_t x_stride, std::int64_t n,
                                                   int largest, std::int64_t chunk_len, std::int64_t cand_cap,
                                                   SampleRowState* __restrict__ states,
                                                   std::uint64_t* __restrict__ cands) {
  wait_for_prior_grid();  // topk_dependent_launch.cuh: before any global access or return
  constexpr int E = 16 / int(sizeof(T));  // elements per 16-byte load
  static_assert(ITEMS % E == 0, "whole 16-byte loads per thread and tile");
  constexpr int VEC = ITEMS / E;  // 16-byte loads per thread and tile
  __shared__ std::uint64_t s_keys[kSampleStage];
  __shared__ std::uint32_t s_n, s_best, s_base;
  const std::int64_t row = blockIdx.x;
  const int t = threadIdx.x, lane = t & 31;
  if (t == 0) {
    s_n = 0;
    s_best = 0;
  }
  __syncthreads();
  const std::uint32_t threshold = states[row].threshold;
  // Ranks equal to threshold pass at indices below bound only (16-bit rows; see sample_tie_bound).
  constexpr bool kBounded = E == 8;
  const std::int64_t bound = kBounded ? std::int64_t(states[row].bound) : n;
  std::uint32_t* count = &states[row].count;
  std::uint32_t* best = &states[row].best;
  std::uint64_t* out = cands + row * cand_cap;
  const std::uint32_t cap = cand_cap < 0x7FFFFFFF ? std::uint32_t(cand_cap) : 0x7FFFFFFFu;
  const T* xr = x + row * x_stride;
  const int head = int((16 - (reinterpret_cast<std::uintptr_t>(xr) & 15)) & 15) / int(sizeof(T));
  const std::int64_t begin = head + std::int64_t(blockIdx.y) * chunk_len;
  const std::int64_t end = begin + chunk_len < n ? begin + chunk_len : n;
  std::uint32_t my_best = 0;

  // Appends key (rank rk, index j) when take; called by every lane of the warp (ballots).
  auto append = [&](bool take, std::uint32_t rk, std::int64_t j) {
    const unsigned ballot = __ballot_sync(0xFFFFFFFFu, take);
    if (ballot == 0) return;
    const int leader = __ffs(ballot) - 1;
    const std::uint32_t c = std::uint32_t(__popc(ballot));
    std::uint32_t slot = 0, over_base = 0;
    if (lane == leader) {
      slot = atomicAdd(&s_n, c);
      // Slots past the stage go straight to the row's buffer.
      const std::uint32_t fit = slot >= std::uint32_t(kSampleStage) ? 0u
                                : slot + c <= std::uint32_t(kSampleStage) ? c
                                                                           : std::uint32_t(kSampleStage) - slot;
      if (fit < c) over_base = atomicAdd(count, c - fit);
    }
    slot = __shfl_sync(0xFFFFFFFFu, slot, leader);
    over_base = __shfl_sync(0xFFFFFFFFu, over_base, leader);
    if (!take) return;
    my_best = rk > my_best ? rk : my_best;
    const std::uint32_t mine = slot + std::uint32_t(__popc(ballot & ((1u << lane) - 1u)));
    const std::uint64_t key = (std::uint64_t(rk) << 32) | std::uint32_t(~std::uint32_t(j));
    if (mine < std::uint32_t(kSampleStage)) {
      s_keys[mine] = key;
    } else {
      const std::uint32_t first_over = slot > std::uint32_t(kSampleStage) ? slot : std::uint32_t(kSampleStage);
      const std::uint32_t g = over_base + (mine - first_over);
      if (g < cap) out[g] = key;
    }
  };

  if (blockIdx.y == 0 && t < 32) {  // the head: one warp, uniform
    const bool in = t < head && t < n;
    const std::uint32_t rk = in ? rank_of(__ldg(xr + t), largest != 0) : 0u;
    append(in && rk >= threshold && (!kBounded || rk != threshold || t < bound), rk, t);
  }
  // Loads the bits of tile `base` into v (a 16-byte load where the whole vector lies before end).
  auto load_tile = [&](std::int64_t base, std::uint32_t* v) {
#pragma unroll
    for (int q = 0; q < VEC; ++q) {
      const std::int64_t j = base + E * (std::int64_t(q) * BLOCK + t);
      if (j + E - 1 < end) {
        const uint4 raw = __ldg(reinterpret_cast<const uint4*>(xr + j));
        const std::uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
        for (int e = 0; e < E; ++e) v[E * q + e] = E == 4 ? w[e] : (w[e / 2] >> (16 * (e % 2))) & 0xFFFFu;
      } else {
#pragma unroll
        for (int c = 0; c < E; ++c) v[E * q + c] = j + c < end ? Element<T>::bits(__ldg(xr + j + c)) : 0u;
      }
    }
  };
  constexpr std::int64_t kStep = std::int64_t(BLOCK) * ITEMS;
  auto index = [&](std::int64_t base, int i) { return base + E * (std::int64_t(i / E) * BLOCK + t) + (i % E); };
  // Every thread runs the same iterations, so the warp votes are safe.  The next tile's loads are
  // issued before this one is compared (two tiles in flight per thread).
  const Rank16Reach reach = E == 8 ? rank16_reach_of(threshold, Element<T>::kFormat) : Rank16Reach{};
  std::uint32_t next[ITEMS];
  if (begin < end) load_tile(begin, next);
  for (std::int64_t base = begin; base < end; base += kStep) {
    std::uint32_t v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) v[i] = next[i];
    if (base + kStep < end) load_tile(base + kStep, next);
    // 16-bit elements in a whole tile: a pre-test on pairs (rank16_reach: magnitudes against the
    // threshold's, three operations a pair) skips the tiles none of whose elements can reach it,
    // and the exact test below runs on the others.
    if constexpr (E == 8) {
      if (reach.usable && base + kStep <= end) {
        std::uint32_t may = 0;
#pragma unroll
        for (int i = 0; i < ITEMS; i += 2) may |= rank16_reach(v[i] | (v[i + 1] << 16), reach);
        if (!__any_sync(0xFFFFFFFFu, (may & 0x80008000u) != 0)) continue;
      }
    }
    std::uint32_t rk[ITEMS];
    bool take[ITEMS];
    bool any = false;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      rk[i] = rank_key(v[i], largest != 0, Element<T>::kFormat);
      take[i] = index(base, i) < end && rk[i] >= threshold;
      any = any || take[i];
    }
    // On typical data a tile has no candidate at all: one vote skips the appends.
    if (!__any_sync(0xFFFFFFFFu, any)) continue;
    if (kBounded && bound < n) {  // the threshold's tie class is bounded (the same for the whole row)
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) take[i] = take[i] && (rk[i] != threshold || index(base, i) < bound);
    }
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) append(take[i], rk[i], index(base, i));
  }

  // Write the stage out: one global atomic for its slots, one for the best rank.
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const std::uint32_t other = __shfl_xor_sync(0xFFFFFFFFu, my_best, o);
    my_best = other > my_best ? other : my_best;
  }
  if (lane == 0 && my_best != 0) atomicMax(&s_best, my_best);
  __syncthreads();
  const std::uint32_t staged = s_n < std::uint32_t(kSampleStage) ? s_n : std::uint32_t(kSampleStage);
  if (t == 0) {
    s_base = staged != 0 ? atomicAdd(count, staged) : 0u;
    if (s_best != 0) atomicMax(best, s_best);
  }
  __syncthreads();
  const std::uint32_t at = s_base;
  for (std::uint32_t i = t; i < staged; i += BLOCK)
    if (at + i < cap) out[at + i] = s_keys[i];
}

template <class T, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    sample_filter_kernel(const T* __restrict__ x, std::int64_t x_stride, std::int64_t n, int largest,
                         std::int64_t chunk_len, std::int64_t cand_cap, SampleRowState* __restrict__ states,
                         std::uint64_t* __restrict__ cands) {
  sample_filter_body<T, BLOCK, ITEMS>(x, x_stride, n, largest, chunk_len, cand_cap, states, cands);
}

// The same filter held to 1536 resident threads an SM: ptxas gave the 16-bit filter at 8 items a
// thread 62 registers (two 512-thread blocks an SM) where f32's has 40 (three).  A second kernel,
// because naming a minimum block count changes ptxas's choice even where it is 1 (f32 1024 x 8:
// 47 -> 59 registers).  Measured on the H200 at the same config (512 x 8, 2048 blocks), 16-bit
// rows 3% to 9% faster (1 x 2^24 bf16: 71.8 -> 67.2 us); f32 unchanged.
template <class T, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK, 1536 / BLOCK)
    sample_filter_kernel_capped(const T* __restrict__ x, std::int64_t x_stride, std::int64_t n, int largest,
                                std::int64_t chunk_len, std::int64_t cand_cap, SampleRowState* __restrict__ states,
                                std::uint64_t* __restrict__ cands) {
  sample_filter_body<T, BLOCK, ITEMS>(x, x_stride, n, largest, chunk_len, cand_cap, states, cands);
}

template <class T, int BLOCK, int ITEMS>
inline constexpr bool kSampleFilterCapped = sizeof(T) == 2 && ITEMS == 8 && BLOCK == 512;

// k = 1: the answer is the largest key of the row, so no sample, filter or selection is needed.
// Block (row, chunk) writes the largest key of its chunk to partial[row * chunks + chunk] (keys
// are never 0: an empty chunk writes 0); sample_argmax_final_kernel takes the largest per row.
template <int BLOCK>
__device__ std::uint64_t block_max_key(std::uint64_t m, std::uint64_t* scratch) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const std::uint64_t other = __shfl_xor_sync(0xFFFFFFFFu, static_cast<unsigned long long>(m), o);
    m = other > m ? other : m;
  }
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = m;
  __syncthreads();
  if (threadIdx.x == 0)
    for (int w = 1; w < BLOCK / 32; ++w) m = scratch[w] > m ? scratch[w] : m;
  return m;  // valid in thread 0
}

template <class T, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    sample_argmax_partial_kernel(const T* __restrict__ x, std::int64_t x_stride, std::int64_t n, int largest,
                                 std::int64_t chunk_len, std::uint64_t* __restrict__ partial) {
  wait_for_prior_grid();  // topk_dependent_launch.cuh: before any global access or return
  __shared__ std::uint64_t scratch[BLOCK / 32];
  const std::int64_t row = blockIdx.x;
  const T* xr = x + row * x_stride;
  const std::int64_t begin = std::int64_t(blockIdx.y) * chunk_len;
  const std::int64_t end = begin + chunk_len < n ? begin + chunk_len : n;
  std::uint64_t m = 0;
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
      if (j < end) {
        const std::uint64_t key = key_of(v[i], j, largest != 0);
        m = key > m ? key : m;
      }
    }
  }
  m = block_max_key<BLOCK>(m, scratch);
  if (threadIdx.x == 0) partial[row * gridDim.y + blockIdx.y] = m;
}

template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    sample_argmax_final_kernel(const T* __restrict__ x, std::int64_t x_stride, int chunks,
                               const std::uint64_t* __restrict__ partial, T* __restrict__ values,
                               std::int64_t v_stride, std::int32_t* __restrict__ indices, std::int64_t i_stride) {
  wait_for_prior_grid();  // topk_dependent_launch.cuh: before any global access or return
  __shared__ std::uint64_t scratch[BLOCK / 32];
  const std::int64_t row = blockIdx.x;
  std::uint64_t m = 0;
  for (int c = threadIdx.x; c < chunks; c += BLOCK) {
    const std::uint64_t key = partial[row * chunks + c];
    m = key > m ? key : m;
  }
  m = block_max_key<BLOCK>(m, scratch);
  if (threadIdx.x == 0) {
    const std::uint32_t j = index_of(m);
    indices[row * i_stride] = std::int32_t(j);
    values[row * v_stride] = x[row * x_stride + j];
  }
}

// An order-preserving compaction of the keys of one row (see sample_select_kernel): the rank
// shifted right by `drop` (16 for f16/bf16, whose distinct ranks differ in their top 16 bits),
// then the low `index_bits` bits of ~index.  Distinct keys of the row stay distinct.
struct SelectKeyMap {
  int drop, index_bits;
  std::uint64_t index_mask;
  __device__ __forceinline__ std::uint64_t operator()(std::uint64_t key) const {
    return (std::uint64_t(std::uint32_t(key >> 32) >> drop) << index_bits) | (key & index_mask);
  }
};

template <class T>
__device__ __forceinline__ SelectKeyMap select_key_map(std::int64_t n) {
  // f32 ranks use all 32 bits: the map is the identity on the 64-bit key (rank << 32 | ~index),
  // as constants, so the f32 kernel compiles to the code it had before the map (the variable
  // shifts cost it 1.6-2.7 % and 16 registers, thirteenth session).
  if (Element<T>::kFormat == KeyFormat::f32) return SelectKeyMap{0, 32, 0xFFFFFFFFull};
  const int index_bits = n > 1 ? 64 - __clzll(n - 1) : 0;  // n <= 2^31 - 1: at most 31
  return SelectKeyMap{16, index_bits, (std::uint64_t(1) << index_bits) - 1};
}

// Radix select over the row's candidates when they hold the answer; otherwise prepares the row
// for topk_radix_select's passes (row state and histogram zeroed) and returns.
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    sample_select_kernel(const T* __restrict__ x, std::int64_t x_stride, std::int64_t n, int k,
                         std::int64_t cand_cap,
                         const SampleRowState* __restrict__ states, const std::uint64_t* __restrict__ cands,
                         RadixRowState* __restrict__ radix_states, std::uint32_t* __restrict__ radix_hists,
                         std::uint32_t* __restrict__ failed, T* __restrict__ values, std::int64_t v_stride,
                         std::int32_t* __restrict__ indices, std::int64_t i_stride) {
  wait_for_prior_grid();  // topk_dependent_launch.cuh: before any global access or return
  __shared__ std::uint64_t list[kSampleSortCap];
  __shared__ std::uint32_t hist[256];
  __shared__ std::uint32_t s_digit, s_above, s_bucket, s_count, s_oversized;
  __shared__ std::uint32_t s_start[256];                   // the bucket sort's bucket starts
  __shared__ std::uint16_t s_order[kSampleSortCap];        // and list positions by bucket
  const std::int64_t row = blockIdx.x;
  const int t = threadIdx.x, lane = t & 31;
  const std::uint32_t found = states[row].count;
  if (found < std::uint32_t(k) || std::int64_t(found) > cand_cap) {
    if (t == 0) {
      radix_states[row] = RadixRowState{};
      failed[1 + atomicAdd(failed, 1u)] = std::uint32_t(row);
    }
    for (int b = t; b < kRadixBinsDevice; b += BLOCK) radix_hists[row * kRadixBinsDevice + b] = 0;
    return;
  }
  const int count = int(found);
  const std::uint64_t* in = cands + row * cand_cap;
  // Digits and buckets are taken from a compact key that keeps the order of the candidates' keys
  // and drops bits that never decide it: the 16 low rank bits of f16/bf16 (zero, or all ones
  // for largest = 0 and for NaN) and the top bits of ~index above the index bits n needs:
  //   compact = (rank >> drop) << index_bits | (~index & (2^index_bits - 1))
  // (~index & mask = mask - index for index < n <= 2^index_bits).  With the 64-bit key, 16-bit
  // lists spent two passes on zero digits and their tie classes (thousands of equal values) fell
  // into one bucket of the sort; here the digit below a few rank bits is the top of the index.
  const SelectKeyMap cmap = select_key_map<T>(n);
  std::uint64_t prefix = 0, mask = 0;
  std::uint32_t greater = 0;
  constexpr int IT = kSampleSelectItems;  // keys per thread in flight
  // The bitonic sort costs about log^2 of its size in block barriers: refine the digits until the
  // keys left fit twice k's power of two (at least kSampleSortMin, at most kSampleSortCap), not
  // merely the sort's capacity (1 x 2^24, k = 100: 2560 candidates sorted whole took 35 us more).
  int sort_target = kSampleSortMin;
  while (sort_target < 2 * k && sort_target < kSampleSortCap) sort_target <<= 1;
  if (count > sort_target) {
    // Every candidate's rank lies in [threshold, best]: the bits above the highest one in which
    // those two differ are common to all candidates; the digits start below them.
    const std::uint32_t lo_rank = states[row].threshold >> cmap.drop, hi_rank = states[row].best >> cmap.drop;
    int hi = cmap.index_bits + (lo_rank == hi_rank ? 0 : 32 - __clz(int(lo_rank ^ hi_rank)));
    mask = hi >= 64 ? 0 : ~((std::uint64_t(1) << hi) - 1);
    prefix = (std::uint64_t(hi_rank) << cmap.index_bits) & mask;
    while (true) {
      const int lo = hi > 8 ? hi - 8 : 0;
      const std::uint32_t digit_mask = (1u << (hi - lo)) - 1;
      for (int b = t; b < 256; b += BLOCK) hist[b] = 0;
      __syncthreads();
      for (int base = 0; base < count; base += BLOCK * IT) {
        std::uint64_t key[IT];
#pragma unroll
        for (int i = 0; i < IT; ++i) {
          const int j = base + i * BLOCK + t;
          // A 16-bit compact key may be 0, kNoElement: those test j; f32's map is the identity,
          // where kNoElement is no key (its code stays as it was before the map).
          key[i] = j < count ? cmap(load_key(in + j)) : kNoElement;
        }
#pragma unroll
        for (int i = 0; i < IT; ++i) {
          const bool listed = Element<T>::kFormat == KeyFormat::f32 ? key[i] != kNoElement : base + i * BLOCK + t < count;
          const bool match = listed && (key[i] & mask) == prefix;
          const std::uint32_t digit = match ? std::uint32_t(key[i] >> lo) & digit_mask : 0xFFFFFFFFu;
          // Candidates crowd into few digits (ties): one atomic per distinct digit of the warp.
          const unsigned same = __match_any_sync(0xFFFFFFFFu, digit);
          if (match && lane == __ffs(same) - 1) atomicAdd(hist + digit, std::uint32_t(__popc(same)));
        }
      }
      __syncthreads();
      if (t < 32) {
        constexpr int kPer = 256 / 32;
        const int top = 256 - t * kPer;
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
      prefix |= std::uint64_t(s_digit) << lo;
      mask |= std::uint64_t(digit_mask) << lo;
      hi = lo;
      if (greater + s_bucket <= std::uint32_t(sort_target)) break;  // the same for every thread
      // s_* are rewritten only after the next pass's two barriers: every thread has read them.
    }
  }

  // Gather every candidate whose known digits are >= those found: greater + bucket <= the sort
  // capacity keys (all of them when count fits).
  if (t == 0) s_count = 0;
  __syncthreads();
  for (int base = 0; base < count; base += BLOCK * IT) {
    std::uint64_t key[IT];
#pragma unroll
    for (int i = 0; i < IT; ++i) {
      const int j = base + i * BLOCK + t;
      key[i] = j < count ? load_key(in + j) : kNoElement;
    }
#pragma unroll
    for (int i = 0; i < IT; ++i) {
      const bool take = key[i] != kNoElement && (cmap(key[i]) & mask) >= prefix;
      const unsigned ballot = __ballot_sync(0xFFFFFFFFu, take);
      if (ballot != 0) {
        const int leader = __ffs(ballot) - 1;
        std::uint32_t slot = 0;
        if (lane == leader) slot = atomicAdd(&s_count, std::uint32_t(__popc(ballot)));
        slot = __shfl_sync(0xFFFFFFFFu, slot, leader);
        if (take) list[slot + __popc(ballot & ((1u << lane) - 1u))] = key[i];
      }
    }
  }
  __syncthreads();
  const int selected = int(s_count);
  // Lists of more than kSampleBucketSortMin keys are placed by buckets of one 8-bit digit (as
  // topk_warp_select's bucket_sort_write): the bitonic sort of 4096 keys is 78 block-wide stages,
  // which bounded 1 x 2^20, k = 4096 (sixth session).  Every listed compact key lies in
  // [lo_key, hi_key]: at or above the refined prefix and the threshold's, at most the best rank's
  // with any index.
  if (selected > kSampleBucketSortMin) {
    const std::uint64_t lo_key = max(prefix, std::uint64_t(states[row].threshold >> cmap.drop) << cmap.index_bits);
    const std::uint64_t hi_key = (std::uint64_t(states[row].best >> cmap.drop) << cmap.index_bits) | cmap.index_mask;
    const std::uint64_t differ = lo_key ^ hi_key;
    const int high = differ == 0 ? 0 : 63 - __clzll(differ);
    const int shift = high > 7 ? high - 7 : 0;
    // Keys in [lo_key, hi_key] share the bits above `high`: the digit grows with the key.
    auto digit = [=](std::uint64_t key) { return int((cmap(key) >> shift) & 255u); };
    for (int b = t; b < 256; b += BLOCK) hist[b] = 0;
    __syncthreads();
    for (int i = t; i < selected; i += BLOCK) atomicAdd(&hist[digit(list[i])], 1u);
    __syncthreads();
    if (t < 32) {  // exclusive starts of the buckets in descending digit order
      constexpr int kPer = 256 / 32;
      const int top = 256 - t * kPer;
      std::uint32_t c[kPer], total = 0;
      bool big = false;
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        c[j] = hist[top - 1 - j];
        total += c[j];
        big = big || c[j] > kSampleBucketMax;
      }
      std::uint32_t incl = total;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const std::uint32_t up = __shfl_up_sync(0xFFFFFFFFu, incl, o);
        if (t >= o) incl += up;
      }
      std::uint32_t run = incl - total;
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        s_start[top - 1 - j] = run;
        run += c[j];
      }
      big = __any_sync(0xFFFFFFFFu, big);
      if (t == 0) s_oversized = big ? 1u : 0u;
    }
    __syncthreads();
    if (s_oversized == 0) {
      // Scatter the list positions by bucket (each bucket's count is counted down to zero), then
      // a key's place is its bucket's start plus the larger keys of its bucket (at most
      // kSampleBucketMax compares).
      for (int i = t; i < selected; i += BLOCK) {
        const int d = digit(list[i]);
        s_order[s_start[d] + atomicSub(&hist[d], 1u) - 1u] = std::uint16_t(i);
      }
      __syncthreads();
      const T* xr = x + row * x_stride;
      for (int i = t; i < selected; i += BLOCK) {
        const std::uint64_t key = list[i];
        const int d = digit(key);
        const int first = int(s_start[d]), end = d > 0 ? int(s_start[d - 1]) : selected;
        if (first >= k) continue;
        int place = first;
        for (int q = first; q < end; ++q) place += list[s_order[q]] > key ? 1 : 0;
        if (place < k) {
          const std::uint32_t j = index_of(key);
          indices[row * i_stride + place] = std::int32_t(j);
          values[row * v_stride + place] = xr[j];
        }
      }
      return;
    }
    // A bucket beyond kSampleBucketMax keys (a list clustered far below the best rank, e.g. a
    // NaN or inf above the k-th): the bitonic sort.
  }
  int p = 2;
  while (p < selected) p <<= 1;
  for (int i = selected + t; i < p; i += BLOCK) list[i] = kNoElement;
  __syncthreads();
  bitonic_sort_desc<BLOCK>(list, p);
  write_row<BLOCK>(list, k, x + row * x_stride, values + row * v_stride, indices + row * i_stride);
}

// The fallback: topk_radix_select's passes and gather over the chunks of the failed rows (chunks
// per row), one cooperative launch of a grid that loops over them, a grid barrier between the
// passes (where topk_radix_select has a launch boundary; the barrier also orders the memory).
// With no failed row every block returns at once, before any barrier: one empty launch where
// there were seven.  A block may take several chunks of a row in one pass: the last to arrive
// (of any block) picks the digit, as in topk_radix_select.  Launch it with
// cudaLaunchCooperativeKernel and a grid that is resident at once.
template <class T, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    sample_fallback_passes_kernel(const std::uint32_t* __restrict__ failed, const T* __restrict__ x,
                                  std::int64_t x_stride, std::int64_t n, int k, int largest, std::int64_t chunk_len,
                                  int chunks, int cap, RadixRowState* __restrict__ states,
                                  std::uint32_t* __restrict__ hists, std::uint64_t* __restrict__ selected) {
  wait_for_prior_grid();  // topk_dependent_launch.cuh: before any global access or return
  const std::uint32_t failed_rows = failed[0];  // the same for every block: the grid leaves together
  if (failed_rows == 0) return;
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const std::int64_t items = std::int64_t(failed_rows) * chunks;
#pragma unroll 1
  for (int pass = 0; pass < kRadixPasses; ++pass) {
    // Digits of the 64-bit key (as topk_radix_select's): 11 + 11 + 10 value bits, then 11 + 11 +
    // 10 of the index, from the top (shifts 53, 42, 32, 21, 10, 0; computed, not a table, which
    // would live in local memory).
    const int width = pass % 3 == 2 ? 10 : 11;
    const int shift = 64 - 11 * (pass + 1) + (pass >= 2) + (pass >= 5);
    for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
      radix_hist_block<T, BLOCK, ITEMS>(failed[1 + item / chunks], int(item % chunks), x, x_stride, n, k, largest,
                                        shift, width, chunk_len, chunks, cap, pass, 0, states, hists,
                                        nullptr);
      __syncthreads();  // the next item reuses the block's shared memory
    }
    grid.sync();
  }
  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x)
    radix_gather_block<T, BLOCK, ITEMS>(failed[1 + item / chunks], int(item % chunks), x, x_stride, n, largest,
                                        chunk_len, chunks, cap, 0, states, nullptr, selected);
}

// Dynamic shared memory: cap keys.
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    sample_fallback_sort_kernel(const std::uint32_t* __restrict__ failed, const T* __restrict__ x,
                                std::int64_t x_stride, int k, int cap, const RadixRowState* __restrict__ states,
                                const std::uint64_t* __restrict__ selected, T* __restrict__ values, std::int64_t v_stride,
                                std::int32_t* __restrict__ indices, std::int64_t i_stride) {
  wait_for_prior_grid();  // topk_dependent_launch.cuh: before any global access or return
  for (std::uint32_t i = blockIdx.x; i < failed[0]; i += gridDim.x) {
    radix_sort_block<T, BLOCK>(failed[1 + i], x, x_stride, k, cap, states, selected, values, v_stride, indices,
                               i_stride);
    __syncthreads();
  }
}

}  // namespace kiln::topk

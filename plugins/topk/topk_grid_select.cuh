// The kernels of topk_grid_select: one row spread over the resident grid, the threshold of its
// k-th rank found by histograms that all of the row's blocks add to, one grid barrier per level,
// every block then appending its keys at or above the threshold to the row's candidate buffer;
// then each candidate's place by counting the larger ones.
//   grid_threshold_kernel (cooperative: rows x blocks_per_row blocks, all resident; rows = 1:
//                          the barriers are the grid's, so every row must take the same levels)
//     1. block (row, part) reads elements [part chunk, (part + 1) chunk) of the row once (16-byte
//        loads), into shared memory as 32-bit ranks, and its largest rank; barrier; every block
//        takes the row's largest rank `top` from the blocks' partials
//     2. level 0: the row's ranks counted by distance from top in GridLevel0's bins (exact near
//        top, then 2^L sub-bins per octave; f32 896 bins, f16/bf16 1280), in shared memory, then
//        the block's counts up to its own k-th rank added to global counters; barrier; every block
//        picks the bin holding the k-th rank (a block-wide scan)
//     3. levels 1..: while more than `target` ranks lie at or above the chosen bin and the bin
//        holds more than one value, its distances are counted in 256 sub-bins the same way;
//        barrier (f16/bf16: at most one such level; f32: at most four)
//     4. threshold T = the smallest rank of the bin.  At most `target` ranks >= T: each
//        block counts its own, reserves slots with one global atomic and writes their keys
//        (rank << 32 | ~index).  More (a tie class of one value): the keys above the bin and the
//        first k - above members of the class in index order (one more barrier: the blocks' tie
//        counts), exactly k keys
//   grid_rank_kernel: candidate i's place = the candidates with a larger key; place < k written
// Every block reads the same global counters after a barrier, so every decision (and every
// barrier) is the same across the grid, as long as the grid holds one row (two rows may need
// different levels: their blocks would wait at different barriers; topk_grid_select_supports).
// Exact for every input, with no fallback: a row ends with between k and target candidates, a
// superset of its answer.
#pragma once
#include <cstdint>

#include <cooperative_groups.h>

#include "topk_device.cuh"
#include "topk_grid_select_params.hpp"
#include "topk_sample_select.cuh"

namespace kiln::topk {

// Block-wide sum of v (every thread gets it); `scratch` holds 32 words.
template <int BLOCK>
__device__ std::uint32_t block_sum(std::uint32_t v, std::uint32_t* scratch) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
  __syncthreads();  // scratch may still be read by an earlier call
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  v = 0;
  for (int w = 0; w < BLOCK / 32; ++w) v += scratch[w];
  return v;
}

// Block-wide exclusive scan of v in thread order (`scratch` holds 32 words); starts and ends with
// a barrier.
template <int BLOCK>
__device__ std::uint32_t block_exclusive_scan(std::uint32_t v, std::uint32_t* scratch) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  std::uint32_t incl = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const std::uint32_t up = __shfl_up_sync(0xFFFFFFFFu, incl, o);
    if (lane >= o) incl += up;
  }
  __syncthreads();  // scratch may still be read by an earlier call
  if (lane == 31) scratch[w] = incl;
  __syncthreads();
  std::uint32_t base = 0;
  for (int i = 0; i < w; ++i) base += scratch[i];
  return base + incl - v;
}

// Level 0's bins of a distance D from the row's largest rank (D = d for f32, d >> 16 for f16 and
// bf16, whose ranks lie 2^16 apart): exact for D < 2^L (bin D), then 2^L sub-bins per octave
// (D in [2^e, 2^(e+1)), e >= L: bins of 2^(e-L) distances).  The k-th rank of typical rows lies a
// few octaves below the largest: one level finds it to 2^-L of its octave (f16/bf16: to the value
// when D < 2^(L+1)).
template <class T>
struct GridLevel0 {
  static constexpr int kShift = Element<T>::kFormat == KeyFormat::f32 ? 0 : 16;
  static constexpr int kLog = Element<T>::kFormat == KeyFormat::f32 ? kGridLevel0LogF32 : kGridLevel0Log16;
  static constexpr int kSub = 1 << kLog;
  static constexpr int kTopOctave = 31 - kShift;  // D < 2^(32 - kShift)
  static constexpr int kBins = kSub * (kTopOctave - kLog + 2);
  static_assert(kBins <= kGridBins, "level 0 holds more bins than the row's counters");
  __device__ static int bin(std::uint32_t d) {
    const std::uint32_t dd = d >> kShift;
    if (dd < std::uint32_t(kSub)) return int(dd);
    const int e = 31 - __clz(int(dd));
    return kSub + ((e - kLog) << kLog) + int((dd >> (e - kLog)) & std::uint32_t(kSub - 1));
  }
  // The bin's distances: [lo, lo + 2^width_log), in units of d.
  __device__ static void range(int b, std::uint32_t& lo, int& width_log) {
    if (b < kSub) {
      lo = std::uint32_t(b) << kShift;
      width_log = kShift;
      return;
    }
    const int q = b - kSub, e = (q >> kLog) + kLog, sub = q & (kSub - 1);
    lo = ((1u << e) + (std::uint32_t(sub) << (e - kLog))) << kShift;
    width_log = e - kLog + kShift;
  }
};

// Dynamic shared memory: chunk_len ranks.  partial: rows x blocks_per_row words; bins: rows x
// kGridLevels x kGridBins words (zeroed here before the first barrier).  states[row] is written
// whole (threshold, count, best); failed[0] is zeroed for the select kernel.
// Held to 40 registers (1536 threads a multiprocessor): more blocks resident, shorter chunks.
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK, 1536 / BLOCK)
    grid_threshold_kernel(const T* __restrict__ x, std::int64_t x_stride, std::int64_t n, int largest, int k,
                          int blocks_per_row, int chunk_len, std::uint32_t target, std::int64_t cand_cap,
                          std::uint32_t* __restrict__ partial, std::uint32_t* __restrict__ bins,
                          SampleRowState* __restrict__ states, std::uint64_t* __restrict__ cands,
                          std::uint32_t* __restrict__ failed) {
  using L0 = GridLevel0<T>;
  constexpr int kPer = (kGridBins + BLOCK - 1) / BLOCK;  // bins a thread scans
  extern __shared__ __align__(16) std::uint32_t s_rank[];
  __shared__ std::uint32_t hist[kGridBins];
  __shared__ std::uint32_t scratch[32];
  __shared__ std::uint32_t s_pick, s_above, s_count, s_base;
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const int row = int(blockIdx.x) / blocks_per_row, part = int(blockIdx.x) % blocks_per_row;
  const int t = threadIdx.x, lane = t & 31;
  const T* xr = x + std::int64_t(row) * x_stride;
  const std::int64_t begin = std::int64_t(part) * chunk_len;
  const int len = begin >= n ? 0 : n - begin < chunk_len ? int(n - begin) : chunk_len;
  std::uint32_t* row_bins = bins + std::int64_t(row) * kGridLevels * kGridBins;
  if (part == 0) {
    for (int b = t; b < kGridLevels * kGridBins; b += BLOCK) row_bins[b] = 0;
    if (t == 0) states[row] = SampleRowState{0u, 0u, 0u, 0u};
  }
  if (blockIdx.x == 0 && t == 0) failed[0] = 0;

  // 1. The chunk's ranks into shared memory: 16-byte loads (4 f32 or 8 f16/bf16) where the chunk
  // starts 16-byte aligned (chunk_len is a multiple of 8), all of a thread's loads first; the
  // tail (and a misaligned row) element by element.
  constexpr int V = 16 / int(sizeof(T)), UV = 2;
  std::uint32_t best = 0;
  int done = 0;
  if ((reinterpret_cast<std::uintptr_t>(xr + begin) & 15u) == 0) {
    const int nvec = len / V;
    const uint4* xv = reinterpret_cast<const uint4*>(xr + begin);
    for (int base = 0; base < nvec; base += BLOCK * UV) {
      uint4 v[UV];
#pragma unroll
      for (int i = 0; i < UV; ++i) {
        const int jv = base + i * BLOCK + t;
        if (jv < nvec) v[i] = __ldg(xv + jv);
      }
#pragma unroll
      for (int i = 0; i < UV; ++i) {
        const int jv = base + i * BLOCK + t;
        if (jv < nvec) {
          const T* e = reinterpret_cast<const T*>(&v[i]);
          std::uint32_t r[V];
#pragma unroll
          for (int q = 0; q < V; ++q) {
            r[q] = rank_of(e[q], largest != 0);
            best = r[q] > best ? r[q] : best;
          }
#pragma unroll
          for (int q = 0; q < V; q += 4)
            *reinterpret_cast<uint4*>(s_rank + std::int64_t(jv) * V + q) = make_uint4(r[q], r[q + 1], r[q + 2], r[q + 3]);
        }
      }
    }
    done = nvec * V;
  }
  for (int j = done + t; j < len; j += BLOCK) {
    const std::uint32_t r = rank_of(__ldg(xr + begin + j), largest != 0);
    s_rank[j] = r;
    best = r > best ? r : best;
  }
  for (int b = t; b < kGridBins; b += BLOCK) hist[b] = 0;
  best = block_max<BLOCK>(best, scratch);  // its barriers also publish s_rank and hist
  if (t == 0) partial[blockIdx.x] = best;
  grid.sync();
  std::uint32_t m = 0;
  for (int b = t; b < blocks_per_row; b += BLOCK) {
    const std::uint32_t p = __ldcg(partial + std::int64_t(row) * blocks_per_row + b);
    m = p > m ? p : m;
  }
  const std::uint32_t top = block_max<BLOCK>(m, scratch);

  // Counts the distances d = top - rank into nbins bins (level 0: L0's; later levels: d - lo in
  // [0, 2^width_log) by bins of 2^sh) in shared memory (one atomic per bin and warp: lanes with
  // the same bin are matched), adds the block's counts of the bins up to its own k-th rank to the
  // level's global counters (bins past a block's k-th rank lie past the row's), waits for the
  // grid and picks the bin holding the k-th rank: s_pick, s_above (ranks of the row above the
  // bin), s_count (ranks in it).
  auto level = [&](int lvl, std::uint32_t lo, int width_log, int sh, int nbins, std::uint32_t above) {
    for (int base = 0; base < len; base += BLOCK) {  // whole warps: the match needs every lane
      const int j = base + t;
      int b = -1;
      if (j < len) {
        const std::uint32_t d = top - s_rank[j];
        if (lvl == 0) b = L0::bin(d);
        else if (d >= lo && std::uint64_t(d - lo) < (std::uint64_t(1) << width_log)) b = int((d - lo) >> sh);
      }
      const unsigned peers = __match_any_sync(0xFFFFFFFFu, b);
      if (b >= 0 && lane == __ffs(peers) - 1) atomicAdd(hist + b, std::uint32_t(__popc(peers)));
    }
    __syncthreads();
    std::uint32_t* level_bins = row_bins + lvl * kGridBins;
    std::uint32_t c[kPer], sum = 0;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int b = t * kPer + i;
      c[i] = b < nbins ? hist[b] : 0u;
      sum += c[i];
    }
    std::uint32_t before = block_exclusive_scan<BLOCK>(sum, scratch);
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      if (c[i] != 0 && before < std::uint32_t(k)) atomicAdd(level_bins + t * kPer + i, c[i]);
      before += c[i];
    }
    grid.sync();  // also a block barrier: hist has been read
    for (int b = t; b < nbins; b += BLOCK) hist[b] = 0;  // for the next level (after the pick's barriers)
    sum = 0;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int b = t * kPer + i;
      c[i] = b < nbins ? __ldcg(level_bins + b) : 0u;
      sum += c[i];
    }
    before = above + block_exclusive_scan<BLOCK>(sum, scratch);
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int b = t * kPer + i;
      const std::uint32_t after = before + c[i];
      // The first bin that takes the count to k (bin 0 if above already does), or the last bin.
      if (b < nbins && ((after >= std::uint32_t(k) && (before < std::uint32_t(k) || b == 0)) ||
                        (b == nbins - 1 && after < std::uint32_t(k)))) {
        s_pick = std::uint32_t(b);
        s_above = before;
        s_count = c[i];
      }
      before = after;
    }
    __syncthreads();
  };

  // 2. Level 0: L0's bins of distance from top.
  level(0, 0u, 0, 0, L0::kBins, 0u);
  std::uint32_t above = s_above, count = s_count, lo = 0;
  int width_log = 0;
  L0::range(int(s_pick), lo, width_log);
  // 3. 256 sub-bins of the chosen bin until at most `target` ranks are at or above it, or it
  // holds one value: one rank for f32; for f16/bf16 a bin of up to 2^16 distances (their distinct
  // ranks differ by at least 2^16, NaN's included, so such a bin holds one value).
  constexpr int kMinWidthLog = L0::kShift;
  for (int lvl = 1; lvl < kGridLevels && width_log > kMinWidthLog && above + count > target; ++lvl) {
    const int sh = width_log - kGridSubLog > kMinWidthLog ? width_log - kGridSubLog : kMinWidthLog;
    __syncthreads();  // every thread has read s_* of the last level
    level(lvl, lo, width_log, sh, 1 << (width_log - sh), above);
    lo += s_pick << sh;
    width_log = sh;
    above = s_above;
    count = s_count;
  }
  // 4. T: the smallest rank of the bin (distances up to lo + 2^width_log - 1; none exceeds top).
  const std::uint64_t reach = std::uint64_t(lo) + (std::uint64_t(1) << width_log) - 1;
  const std::uint32_t threshold = reach >= top ? 0u : top - std::uint32_t(reach);
  // More than `target` at or above T only when the bin is one value (a tie class): then the keys
  // above the bin and the first k - above of the tie class in index order (ties go to the smaller
  // index), exactly k keys.  Blocks hold the row's chunks in index order.
  const bool trim = above + count > target;
  auto in_bin = [&](std::uint32_t r) {
    const std::uint32_t d = top - r;
    return d >= lo && std::uint64_t(d) <= reach;
  };
  std::uint32_t mine = 0, ties = 0;
  for (int j = t; j < len; j += BLOCK) {
    const std::uint32_t d = top - s_rank[j];
    mine += (trim ? d < lo : std::uint64_t(d) <= reach) ? 1u : 0u;
    ties += trim && in_bin(s_rank[j]) ? 1u : 0u;
  }
  // Exclusive scan of the threads' counts: within warps, then over the warps' totals.
  std::uint32_t incl = mine;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const std::uint32_t up = __shfl_up_sync(0xFFFFFFFFu, incl, o);
    if (lane >= o) incl += up;
  }
  __syncthreads();  // scratch was read by the last level's scan
  if (lane == 31) scratch[t >> 5] = incl;
  __syncthreads();
  std::uint32_t warp_base = 0, total = 0;
  for (int w = 0; w < BLOCK / 32; ++w) {
    const std::uint32_t c = scratch[w];
    warp_base += w < (t >> 5) ? c : 0u;
    total += c;
  }
  std::uint32_t take_ties = 0;  // this block's first take_ties members of the tie class
  if (trim) {  // the same for every block
    const std::uint32_t my_ties = block_sum<BLOCK>(ties, scratch);
    if (t == 0) partial[blockIdx.x] = my_ties;  // every block read the partial maxima two barriers ago
    grid.sync();
    std::uint32_t before = 0;
    for (int b = t; b < part; b += BLOCK) before += __ldcg(partial + std::int64_t(row) * blocks_per_row + b);
    before = block_sum<BLOCK>(before, scratch);
    const std::uint32_t need = std::uint32_t(k) - above;
    take_ties = need > before ? (need - before < my_ties ? need - before : my_ties) : 0u;
  }
  if (t == 0) s_base = total + take_ties != 0 ? atomicAdd(&states[row].count, total + take_ties) : 0u;
  if (part == 0 && t == 0) {
    states[row].threshold = threshold;
    states[row].best = top;
  }
  __syncthreads();
  const std::uint32_t base = s_base;
  std::uint32_t at = base + warp_base + incl - mine;
  std::uint64_t* out = cands + std::int64_t(row) * cand_cap;
  auto key_at = [&](int j) { return (std::uint64_t(s_rank[j]) << 32) | std::uint32_t(~std::uint32_t(begin + j)); };
  for (int j = t; j < len; j += BLOCK) {
    const std::uint32_t d = top - s_rank[j];
    if (trim ? d < lo : std::uint64_t(d) <= reach) {
      if (std::int64_t(at) < cand_cap) out[at] = key_at(j);
      ++at;
    }
  }
  if (take_ties == 0) return;  // the same for the whole block
  // The first take_ties members of the tie class in this chunk, in index order: rounds of BLOCK
  // elements, a ballot per warp and a scan over the warps per round.
  std::uint32_t placed = 0;
  for (int round = 0; round < len && placed < take_ties; round += BLOCK) {
    const int j = round + t;
    const bool tie = j < len && in_bin(s_rank[j]);
    const unsigned ballot = __ballot_sync(0xFFFFFFFFu, tie);
    __syncthreads();  // scratch was read in the last round
    if (lane == 0) scratch[t >> 5] = std::uint32_t(__popc(ballot));
    __syncthreads();
    std::uint32_t before = 0, round_total = 0;
    for (int w = 0; w < BLOCK / 32; ++w) {
      before += w < (t >> 5) ? scratch[w] : 0u;
      round_total += scratch[w];
    }
    const std::uint32_t pos = placed + before + std::uint32_t(__popc(ballot & ((1u << lane) - 1u)));
    if (tie && pos < take_ties) {
      const std::uint32_t slot = base + total + pos;
      if (std::int64_t(slot) < cand_cap) out[slot] = key_at(j);
    }
    placed += round_total;
  }
}

// topk_grid_select's second kernel (rows = 1): the place of each of the row's C candidates is the
// number of candidates with a larger key (keys are distinct: the low half is ~index), and those
// with place < k are written.  Block b takes candidates [32 b, 32 b + 32) (one per lane), its warps
// split the list: C x C compares spread over C / 32 blocks, where one block's sort of up to 4096
// keys took 17-27 us (fourteenth session).  Launch ceil(cand_cap / 32) blocks.
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    grid_rank_kernel(const T* __restrict__ x, int k, std::int64_t cand_cap, const SampleRowState* __restrict__ states,
                     const std::uint64_t* __restrict__ cands, T* __restrict__ values,
                     std::int32_t* __restrict__ indices) {
  constexpr int W = BLOCK / 32;
  __shared__ std::uint64_t s_list[W][32];
  __shared__ std::uint32_t s_place[32];
  const int t = threadIdx.x, lane = t & 31, w = t >> 5;
  const std::uint32_t found = states[0].count;
  const int count = std::int64_t(found) < cand_cap ? int(found) : int(cand_cap);
  if (int(blockIdx.x) * 32 >= count) return;  // the same for the whole block
  const int i = int(blockIdx.x) * 32 + lane;
  const std::uint64_t key = i < count ? load_key(cands + i) : kNoElement;
  if (t < 32) s_place[t] = 0;
  const int per = (count + W - 1) / W;
  const int q0 = w * per, q1 = q0 + per < count ? q0 + per : count;
  std::uint32_t greater = 0;
  for (int q = q0; q < q1; q += 32) {
    // kNoElement (0) past the slice: below every key
    s_list[w][lane] = q + lane < q1 ? load_key(cands + q + lane) : kNoElement;
    __syncwarp();
#pragma unroll 8
    for (int s = 0; s < 32; ++s) greater += s_list[w][s] > key ? 1u : 0u;
    __syncwarp();
  }
  __syncthreads();  // s_place zeroed
  atomicAdd(&s_place[lane], greater);
  __syncthreads();
  if (w == 0 && i < count) {
    const std::uint32_t place = s_place[lane];
    if (place < std::uint32_t(k)) {
      const std::uint32_t j = index_of(key);
      indices[place] = std::int32_t(j);
      values[place] = x[j];
    }
  }
}

}  // namespace kiln::topk

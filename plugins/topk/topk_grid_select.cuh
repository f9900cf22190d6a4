// The kernels of topk_grid_select: one row spread over the resident grid, the threshold
// of its k-th rank found by histograms that all of the row's blocks add to, one grid barrier per
// level, every block then appending its keys at or above the threshold to the row's candidate
// buffer; then grid_rank_kernel orders the candidates (each one's place counted by many blocks).
//   grid_threshold_kernel (cooperative: rows x blocks_per_row blocks, all resident; rows = 1:
//                          the barriers are the grid's, so every row must take the same levels)
//     1. block (row, part) reads elements [part chunk, (part + 1) chunk) of the row once, into
//        shared memory as 32-bit ranks (runs of 16 bytes a thread, stored as quads: every later
//        pass reads four ranks per shared load), and its largest rank; barrier; every block
//        takes the row's largest rank `top` from the blocks' partials.  A chunk past
//        kGridMaxChunk (STREAM) holds its first kGridMaxChunk ranks; every pass re-reads the rest
//        from global memory (L2 for rows it holds)
//     2. level 0: the row's ranks counted by band of distance from top (0 for d = 0, b for
//        2^(b-1) <= d < 2^b: 33 bands, lane-private shared counters, one global atomic per
//        non-empty band and block); barrier; every block picks the band holding the k-th rank
//     3. levels 1..: while more than `target` ranks lie at or above the chosen bin and the bin
//        holds more than one value, its distances are counted in 32 sub-bins the same way; barrier
//     4. threshold T = the smallest rank of the chosen bin.  At most `target` ranks >= T: each
//        block counts its own, reserves slots with one global atomic and writes their keys
//        (rank << 32 | ~index).  More (a tie class of one value): the keys above the bin and the
//        first k - above members of the class in index order (each block's members before it:
//        the earlier blocks' counts of the bin, which every block leaves per level), exactly k keys
//     5. at most BLOCK candidates (k <= BLOCK / 2): the row's last block to append orders them
//   grid_rank_kernel (more candidates): candidate i's place = the candidates with a larger key
//        (keys are distinct); those with place < k are written
// Every block reads the same global counters after a barrier, so every decision (and every
// barrier) is the same across the grid, as long as the grid holds one row (two rows may need
// different levels: their blocks would wait at different barriers; topk_grid_select_supports).
// Exact for every input, with no fallback: a row ends with between k and target candidates, a
// superset of its answer.
#pragma once
#include <cstdint>

#include <cooperative_groups.h>

#include "topk_dependent_launch.cuh"
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

// The chunk in shared memory, as runs: thread t loads the kGridRun<T> elements [E t, E t + E) of
// each group of E BLOCK (one 16-byte load when the row allows it) and stores their ranks as E / 4
// quads; element g E BLOCK + E t + 4 q + i of the chunk is word i of quad (g Q + q) BLOCK + t.  Every
// pass then reads a quad (four ranks) per shared load, and a warp's elements of a group are the
// 32 E consecutive ones of its threads (index order: group, warp, lane, element).
template <class T>
inline constexpr int kGridRun = 16 / int(sizeof(T));
// Dynamic shared memory for a chunk of chunk_len elements: whole groups of quads.
template <class T, int BLOCK>
constexpr std::size_t grid_chunk_smem(std::int64_t chunk_len) {
  constexpr std::int64_t group = std::int64_t(kGridRun<T>) * BLOCK;
  return std::size_t((chunk_len + group - 1) / group * group) * sizeof(std::uint32_t);
}

// The raw bits of element i of a 16-byte run (little-endian halves for f16/bf16).
template <class T>
__device__ __forceinline__ std::uint32_t run_bits(const uint4& raw, int i) {
  const std::uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
  if constexpr (sizeof(T) == 4) return w[i];
  else return (w[i >> 1] >> ((i & 1) * 16)) & 0xFFFFu;
}

// Dynamic shared memory: grid_chunk_smem(chunk_len) bytes.  partial: rows x blocks_per_row words;
// bins: rows x kGridLevels x kGridBins words (zeroed here before the first barrier); block_bins:
// rows x blocks_per_row x kGridBins words, each block's own counts of the latest level.
// states[row] is written whole (threshold, count, best).
// Held to 40 registers (1536 threads a multiprocessor): more blocks resident, shorter chunks.
// STREAM: chunks may pass kGridMaxChunk, their later groups re-read from global memory at every
// pass (a separate instantiation: the streamed path's registers cost the held-only rows about
// 0.6-1.0 us at 2^20-2^22 on an H200, twentieth session).
template <class T, int BLOCK, bool STREAM>
__global__ void __launch_bounds__(BLOCK, 1536 / BLOCK)
    grid_threshold_kernel(const T* __restrict__ x, std::int64_t x_stride, std::int64_t n, int largest, int k,
                          int blocks_per_row, int chunk_len, std::uint32_t target, std::int64_t cand_cap,
                          std::uint32_t* __restrict__ partial, std::uint32_t* __restrict__ bins,
                          std::uint32_t* __restrict__ block_bins, SampleRowState* __restrict__ states,
                          std::uint64_t* __restrict__ cands, T* __restrict__ values,
                          std::int32_t* __restrict__ indices) {
  constexpr int W = BLOCK / 32, E = kGridRun<T>, Q = E / 4, GROUP = E * BLOCK;
  constexpr int kHeldGroups = kGridMaxChunk / GROUP;  // in shared memory; later groups are re-read
  constexpr int kMaxGroups = (STREAM ? kGridMaxStreamChunk : kGridMaxChunk) / GROUP;
  constexpr int kLoadBatch = 4;  // groups whose loads are in flight together (16 registers)
  extern __shared__ uint4 s_quad[];
  __shared__ std::uint32_t hist[33 * 32];  // [bin][lane]: no two lanes of a warp collide
  __shared__ std::uint32_t s_bin[33];
  __shared__ std::uint32_t scratch[32];
  __shared__ std::uint32_t s_warp_ties[kMaxGroups * W];  // the tie class by (group, warp), then its exclusive scan
  __shared__ std::uint32_t s_pick, s_above, s_count, s_base, s_ties, s_last;
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const int row = int(blockIdx.x) / blocks_per_row, part = int(blockIdx.x) % blocks_per_row;
  const int t = threadIdx.x, lane = t & 31, w = t >> 5;
  const T* xr = x + std::int64_t(row) * x_stride;
  const std::int64_t begin = std::int64_t(part) * chunk_len;
  const int len = begin >= n ? 0 : n - begin < chunk_len ? int(n - begin) : chunk_len;
  const int groups = (len + GROUP - 1) / GROUP;
  // Groups [held, groups) are re-read from global memory at every pass (STREAM only).
  const int held = !STREAM || groups < kHeldGroups ? groups : kHeldGroups;
  std::uint32_t* row_bins = bins + std::int64_t(row) * kGridLevels * kGridBins;
  std::uint32_t* row_block_bins = block_bins + std::int64_t(row) * blocks_per_row * kGridBins;
  if (part == 0) {
    for (int b = t; b < kGridLevels * kGridBins; b += BLOCK) row_bins[b] = 0;
    if (t == 0) states[row] = SampleRowState{0u, 0u, 0u, 0u};
  }

  // 1. The chunk's ranks into shared memory (its first `held` groups; the rest only for `best`): a
  // batch of groups' loads in flight, then their ranks.  16-byte loads where the chunk starts on a
  // 16-byte boundary (chunk_len is a multiple of 8).
  const bool vec = (reinterpret_cast<std::uintptr_t>(xr + begin) & 15u) == 0;
  // This thread's run of group g (zeros past the chunk).
  auto load_run = [&](int g) {
    const int e0 = g * GROUP + E * t;
    if (g >= groups || e0 >= len) return make_uint4(0u, 0u, 0u, 0u);
    if (vec && e0 + E <= len) return __ldg(reinterpret_cast<const uint4*>(xr + begin + e0));
    std::uint32_t wds[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int i = 0; i < E; ++i)
      if (e0 + i < len) {
        const std::uint32_t bits = Element<T>::bits(__ldg(xr + begin + e0 + i));
        if constexpr (sizeof(T) == 4) wds[i] = bits;
        else wds[i >> 1] |= bits << ((i & 1) * 16);
      }
    return make_uint4(wds[0], wds[1], wds[2], wds[3]);
  };
  // The ranks of elements 4 q .. 4 q + 3 of a run.
  auto run_ranks = [&](const uint4& raw, int q) {
    return make_uint4(rank_key(run_bits<T>(raw, 4 * q), largest != 0, Element<T>::kFormat),
                      rank_key(run_bits<T>(raw, 4 * q + 1), largest != 0, Element<T>::kFormat),
                      rank_key(run_bits<T>(raw, 4 * q + 2), largest != 0, Element<T>::kFormat),
                      rank_key(run_bits<T>(raw, 4 * q + 3), largest != 0, Element<T>::kFormat));
  };
  std::uint32_t best = 0;
  for (int g0 = 0; g0 < groups; g0 += kLoadBatch) {
    uint4 raw[kLoadBatch];
#pragma unroll
    for (int b = 0; b < kLoadBatch; ++b) raw[b] = load_run(g0 + b);
#pragma unroll
    for (int b = 0; b < kLoadBatch; ++b) {
      const int g = g0 + b, e0 = g * GROUP + E * t;
      if (g >= groups) continue;
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        const uint4 r = run_ranks(raw[b], q);
        const std::uint32_t rr[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
        for (int i = 0; i < 4; ++i)
          if (e0 + 4 * q + i < len) best = rr[i] > best ? rr[i] : best;
        if (!STREAM || g < held) s_quad[(g * Q + q) * BLOCK + t] = r;
      }
    }
  }
  for (int b = t; b < 33 * 32; b += BLOCK) hist[b] = 0;
  best = block_max<BLOCK>(best, scratch);  // its barriers also publish s_quad and hist
  if (t == 0) partial[blockIdx.x] = best;
  grid.sync();
  std::uint32_t m = 0;
  for (int b = t; b < blocks_per_row; b += BLOCK) {
    const std::uint32_t p = __ldcg(partial + std::int64_t(row) * blocks_per_row + b);
    m = p > m ? p : m;
  }
  const std::uint32_t top = block_max<BLOCK>(m, scratch);

  // Calls f(rank, element) for each of this thread's elements of group g (element < len), its
  // ranks from shared memory (g < held) or from `raw`, the group's run loaded by the caller.
  auto visit_group = [&](int g, const uint4& raw, auto&& f) {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const int e0 = g * GROUP + E * t + 4 * q;
      if (e0 >= len) break;
      const uint4 r = !STREAM || g < held ? s_quad[(g * Q + q) * BLOCK + t] : run_ranks(raw, q);
      if (e0 + 4 <= len) {
        f(r.x, e0);
        f(r.y, e0 + 1);
        f(r.z, e0 + 2);
        f(r.w, e0 + 3);
      } else {
        f(r.x, e0);
        if (e0 + 1 < len) f(r.y, e0 + 1);
        if (e0 + 2 < len) f(r.z, e0 + 2);
      }
    }
  };
  // Calls body(g, visit) for every group in order, visit(f) calling f(rank, element) for this
  // thread's elements of g; the streamed groups' runs are loaded two at a time (both in flight).
  auto for_groups = [&](auto&& body) {
    const uint4 none = make_uint4(0u, 0u, 0u, 0u);
    for (int g = 0; g < held; ++g) body(g, [&](auto&& f) { visit_group(g, none, f); });
    for (int g = held; STREAM && g < groups; g += 2) {
      const uint4 a = load_run(g), b = load_run(g + 1);
      body(g, [&](auto&& f) { visit_group(g, a, f); });
      if (g + 1 < groups) body(g + 1, [&](auto&& f) { visit_group(g + 1, b, f); });
    }
  };
  auto each = [&](auto&& f) {
    for_groups([&](int, auto&& visit) { visit(f); });
  };

  // Counts the distances d = top - rank with d - lo in [0, 2^width_log) into bins of 2^sh (or,
  // at level 0, every distance by band), adds the block's counts to the level's global counters,
  // waits for the grid and picks the bin holding the k-th rank: s_pick, s_above (ranks of the
  // row above the bin), s_count (ranks in it).
  auto level = [&](int lvl, std::uint32_t lo, int width_log, int sh, std::uint32_t above) {
    if (lvl == 0) {
      each([&](std::uint32_t r, int) { atomicAdd(hist + distance_band(top - r) * 32 + lane, 1u); });
    } else {
      each([&](std::uint32_t r, int) {
        const std::uint32_t d = top - r;
        if (d >= lo && std::uint64_t(d - lo) < (std::uint64_t(1) << width_log))
          atomicAdd(hist + ((d - lo) >> sh) * 32 + lane, 1u);
      });
    }
    __syncthreads();
    const int nbins = lvl == 0 ? 33 : 32;
    std::uint32_t* level_bins = row_bins + lvl * kGridBins;
    if (t < nbins) {
      std::uint32_t c = 0;
      for (int l = 0; l < 32; ++l) c += hist[t * 32 + l];
      if (c != 0) atomicAdd(level_bins + t, c);
      row_block_bins[std::int64_t(part) * kGridBins + t] = c;  // read only after the last level
    }
    grid.sync();  // also a block barrier: hist has been read
    for (int b = t; b < 33 * 32; b += BLOCK) hist[b] = 0;  // for the next level (after the pick's barriers)
    if (t < nbins) s_bin[t] = __ldcg(level_bins + t);
    __syncthreads();
    if (t < 32) {  // the first bin whose running count reaches k: a warp scan of bins 0..31
      const std::uint32_t c = s_bin[lane];
      const std::uint32_t incl = warp_inclusive_scan(c);
      const unsigned hit = __ballot_sync(0xFFFFFFFFu, above + incl >= std::uint32_t(k));
      const int pick = hit != 0 ? __ffs(int(hit)) - 1 : nbins - 1;
      const std::uint32_t before_pick = __shfl_sync(0xFFFFFFFFu, incl - c, pick & 31);
      const std::uint32_t first32 = __shfl_sync(0xFFFFFFFFu, incl, 31);
      if (lane == 0) {
        // As a serial scan would: the ranks of the bins before the pick; if no bin reaches k
        // (never on real counts) the last bin, with every bin's count.
        std::uint32_t cum = above + first32;
        if (hit != 0) cum = above + before_pick;
        else if (nbins > 32 && cum + s_bin[32] < std::uint32_t(k)) cum += s_bin[32];
        s_pick = std::uint32_t(pick);
        s_above = cum;
        s_count = s_bin[pick];
      }
    }
    __syncthreads();
  };

  // 2. Bands of distance from top; the band b holds distances [2^(b-1), 2^b) (band 0: d = 0).
  level(0, 0u, 0, 0, 0u);
  const int band = int(s_pick);
  int last_pick = band;  // the bin picked at the last level: its count per block is in row_block_bins
  std::uint32_t above = s_above, count = s_count;
  std::uint32_t lo = band == 0 ? 0u : 1u << (band - 1);
  int width_log = band == 0 ? 0 : band - 1;
  // 3. Sub-bins of the chosen bin until at most `target` ranks are at or above it, or it holds
  // one value: one rank for f32; for f16/bf16 a bin of up to 2^16 distances (their distinct ranks
  // differ by multiples of 2^16, NaN's included, so such a bin holds one value).
  constexpr int kMinWidthLog = Element<T>::kFormat == KeyFormat::f32 ? 0 : 16;
  for (int lvl = 1; lvl < kGridLevels && width_log > kMinWidthLog && above + count > target; ++lvl) {
    const int sh = width_log > 5 ? width_log - 5 : 0;
    __syncthreads();  // every thread has read s_* of the last level
    level(lvl, lo, width_log, sh, above);
    last_pick = int(s_pick);
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
  auto taken = [&](std::uint32_t r) {  // appended whole: above the bin (trim) or in or above it
    const std::uint32_t d = top - r;
    return trim ? d < lo : std::uint64_t(d) <= reach;
  };
  auto in_bin = [&](std::uint32_t r) {
    const std::uint32_t d = top - r;
    return d >= lo && std::uint64_t(d) <= reach;
  };
  // The class is the last level's picked bin: the earlier blocks' members are their counts of it,
  // left before that level's barrier (no barrier of its own).  Loaded here, summed after the
  // counts below, so that the loads' latency overlaps them.
  std::uint32_t before = 0;
  if (trim)
    for (int b = t; b < part; b += BLOCK) before += __ldcg(row_block_bins + std::int64_t(b) * kGridBins + last_pick);
  // This thread's keys to append and, on the trim path, each (group, warp)'s members of the class.
  std::uint32_t mine = 0;
  for_groups([&](int g, auto&& visit) {
    std::uint32_t ties = 0;
    visit([&](std::uint32_t r, int) {
      mine += taken(r) ? 1u : 0u;
      ties += trim && in_bin(r) ? 1u : 0u;
    });
    if (trim) {  // the same for every block
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) ties += __shfl_xor_sync(0xFFFFFFFFu, ties, o);
      if (lane == 0) s_warp_ties[g * W + w] = ties;
    }
  });
  // Exclusive scan of the threads' counts: within warps, then over the warps' totals.
  const std::uint32_t incl = warp_inclusive_scan(mine);
  __syncthreads();  // scratch was read by block_max; s_warp_ties is complete
  if (lane == 31) scratch[w] = incl;
  if (trim && w == 0) {
    // Exclusive scan of the (group, warp) tie counts in index order: lane l takes kPer
    // consecutive entries (a loop of 32-entry steps instead spills registers on the held path).
    constexpr int kPer = (kMaxGroups * W + 31) / 32;
    const int slots = groups * W;
    std::uint32_t v[kPer], sum = 0;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int s = lane * kPer + i;
      v[i] = s < slots ? s_warp_ties[s] : 0u;
      sum += v[i];
    }
    std::uint32_t run = warp_inclusive_scan(sum);
    if (lane == 31) s_ties = run;
    run -= sum;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int s = lane * kPer + i;
      if (s < slots) s_warp_ties[s] = run;
      run += v[i];
    }
  }
  __syncthreads();
  std::uint32_t warp_base = 0, total = 0;
  for (int u = 0; u < W; ++u) {
    const std::uint32_t c = scratch[u];
    warp_base += u < w ? c : 0u;
    total += c;
  }
  std::uint32_t take_ties = 0;  // this block's first take_ties members of the tie class
  if (trim) {
    before = block_sum<BLOCK>(before, scratch);
    const std::uint32_t need = std::uint32_t(k) - above, my_ties = s_ties;
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
  auto key_at = [&](std::uint32_t r, int e) {
    return (std::uint64_t(r) << 32) | std::uint32_t(~std::uint32_t(begin + e));
  };
  if (mine != 0)
    each([&](std::uint32_t r, int e) {
      if (taken(r)) {
        if (std::int64_t(at) < cand_cap) out[at] = key_at(r, e);
        ++at;
      }
    });
  // This warp's members of the class with block ordinals below take_ties, in index order: per
  // group, a warp scan of its lanes' counts (every branch here is the same for the whole warp).
  for (int g = 0; g < groups && trim; ++g) {
    const std::uint32_t pre = s_warp_ties[g * W + w];
    if (pre >= take_ties) break;
    const uint4 raw = !STREAM || g < held ? make_uint4(0u, 0u, 0u, 0u) : load_run(g);
    std::uint32_t c = 0;
    visit_group(g, raw, [&](std::uint32_t r, int) { c += in_bin(r) ? 1u : 0u; });
    std::uint32_t pos = pre + warp_inclusive_scan(c) - c;
    if (c != 0)
      visit_group(g, raw, [&](std::uint32_t r, int e) {
        if (in_bin(r)) {
          if (pos < take_ties) {
            const std::uint32_t slot = base + total + pos;
            if (std::int64_t(slot) < cand_cap) out[slot] = key_at(r, e);
          }
          ++pos;
        }
      });
  }
  // 5. A list of at most BLOCK candidates (target <= BLOCK: k <= BLOCK / 2) is ordered here by
  // the row's last block to finish, instead of by grid_rank_kernel's launch: each candidate's
  // place is the number of larger keys (keys are distinct).  The arrivals count in
  // states[row].unused, zeroed by part 0 before the first barrier (every arrival is after it).
  if (target > std::uint32_t(BLOCK)) return;  // the same for every block
  __threadfence();  // this block's candidates are visible before its arrival is
  __syncthreads();
  if (t == 0) s_last = atomicAdd(&states[row].unused, 1u) == std::uint32_t(blocks_per_row - 1) ? 1u : 0u;
  __syncthreads();
  if (s_last == 0) return;
  __threadfence();
  const std::uint32_t found = __ldcg(&states[row].count);
  const int listed = std::int64_t(found) < cand_cap ? int(found) : int(cand_cap);
  auto* s_list = reinterpret_cast<std::uint64_t*>(s_quad);  // the chunk's ranks are no longer read
  const int padded = (listed + 1) & ~1;
  const std::uint64_t key = t < listed ? __ldcg(reinterpret_cast<const unsigned long long*>(out + t)) : kNoElement;
  if (t < padded) s_list[t] = key;  // an odd list ends with kNoElement, below every key
  __syncthreads();
  if (t < listed) {
    const ulonglong2* pairs = reinterpret_cast<const ulonglong2*>(s_list);
    std::uint32_t place = 0;
#pragma unroll 8
    for (int q = 0; q < padded / 2; ++q) {
      const ulonglong2 two = pairs[q];  // the same address for the whole warp: a broadcast
      place += (two.x > key ? 1u : 0u) + (two.y > key ? 1u : 0u);
    }
    if (place < std::uint32_t(k)) {
      const std::uint32_t j = index_of(key);
      indices[place] = std::int32_t(j);
      values[place] = xr[j];
    }
  }
}

// topk_grid_select's second kernel (rows = 1): the place of each of the
// row's C candidates is the number of candidates with a larger key (keys are distinct: the low
// half is ~index, so ties by value go to the smaller index), and those with place < k are written
// (values copied bit for bit from x).  Block b ranks candidates [32 b, 32 b + 32), one per lane:
// the whole list is staged in shared memory (all of a thread's loads in flight first), each warp
// counts the larger keys in its slice of it (W slices, padded with kNoElement = 0, below every
// key), and the warps' counts are summed.  C x C compares over C / 32 blocks, where one block's
// sort of up to 4096 keys took 17-27 us (fourteenth session).  Launch ceil(cand_cap / 32) blocks
// with grid_rank_smem_bytes(cand_cap) bytes of dynamic shared memory.
inline constexpr int kGridRankLoads = 8;  // keys a thread loads before it stores them
template <int BLOCK>
constexpr std::size_t grid_rank_smem_bytes(std::int64_t cand_cap) {
  return std::size_t(cand_cap + 2 * (BLOCK / 32)) * sizeof(std::uint64_t);
}
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    grid_rank_kernel(const T* __restrict__ x, int k, std::int64_t cand_cap, const SampleRowState* __restrict__ states,
                     const std::uint64_t* __restrict__ cands, T* __restrict__ values,
                     std::int32_t* __restrict__ indices) {
  wait_for_prior_grid();  // topk_dependent_launch.cuh: before any global access or return
  let_next_grid_start();
  constexpr int W = BLOCK / 32;
  extern __shared__ __align__(16) std::uint64_t s_list[];  // cand_cap + 2 W keys
  __shared__ std::uint32_t s_greater[W][32];
  const int t = threadIdx.x, lane = t & 31, w = t >> 5;
  const std::uint32_t found = states[0].count;
  const int count = std::int64_t(found) < cand_cap ? int(found) : int(cand_cap);
  if (int(blockIdx.x) * 32 >= count) return;  // the same for the whole block
  // Slices of `per` keys (even: read two at a time), the list padded to W per.
  const int per = ((count + W - 1) / W + 1) & ~1;
  const int padded = W * per;
  for (int base = 0; base < padded; base += BLOCK * kGridRankLoads) {
    std::uint64_t v[kGridRankLoads];
#pragma unroll
    for (int u = 0; u < kGridRankLoads; ++u) {
      const int q = base + u * BLOCK + t;
      v[u] = q < count ? load_key(cands + q) : kNoElement;
    }
#pragma unroll
    for (int u = 0; u < kGridRankLoads; ++u) {
      const int q = base + u * BLOCK + t;
      if (q < padded) s_list[q] = v[u];
    }
  }
  __syncthreads();
  const int i = int(blockIdx.x) * 32 + lane;
  const std::uint64_t key = i < count ? s_list[i] : ~std::uint64_t(0);  // past the list: counts nothing
  const ulonglong2* slice = reinterpret_cast<const ulonglong2*>(s_list + w * per);
  std::uint32_t greater = 0;
#pragma unroll 8
  for (int q = 0; q < per / 2; ++q) {
    const ulonglong2 two = slice[q];  // the same address for the whole warp: a broadcast
    greater += (two.x > key ? 1u : 0u) + (two.y > key ? 1u : 0u);
  }
  s_greater[w][lane] = greater;
  __syncthreads();
  if (w == 0 && i < count) {
    std::uint32_t place = 0;
#pragma unroll
    for (int u = 0; u < W; ++u) place += s_greater[u][lane];
    if (place < std::uint32_t(k)) {
      const std::uint32_t j = index_of(key);
      indices[place] = std::int32_t(j);
      values[place] = x[j];
    }
  }
}

}  // namespace kiln::topk

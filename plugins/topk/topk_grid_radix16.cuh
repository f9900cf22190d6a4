// The kernel of topk_grid_radix16: rows of f16 or bf16 spread over the resident grid (one
// cooperative launch), the k-th value found exactly by two byte-wide histogram passes.
//   grid_radix16_kernel (rows x blocks_per_row blocks, all resident)
//     1. each thread reads its runs of 16 bytes (the first `HOLD` kept in registers, the rest
//        re-read at every pass) and counts the high byte of each element's 16-bit rank
//        (lane-private shared counters); a grid barrier (the row's counters zeroed before it), one
//        global atomic per non-empty bin and block; barrier; every block picks the high byte b1
//     2. the low bytes of the ranks whose high byte is b1, the same way; each block also leaves its
//        own 256 counts in the workspace; barrier; every block picks b2: the k-th rank is v =
//        b1 b2, with A ranks above it (A < k) and need = k - A of its tie class in the answer
//     3. every block appends its A-keys (rank > v: rank << 32 | ~index) to the row's list (one
//        global atomic per block) and writes the members of the tie class whose ordinal in index
//        order is below `need` straight to the output, at place A + ordinal (the earlier blocks'
//        members: their counts of b2 from pass 2; within a block, runs are in index order by warp,
//        run, lane)
//     4. the A keys are ordered by counting the larger ones: by the row's last block to finish
//        when k <= BLOCK / 2, else after a grid barrier by the row's blocks, 32 keys a block
// Two passes always decide a 16-bit rank, so every row takes the same barriers: rows share the grid.
// A thread's runs: warp g (of the row) owns runs [32 P g, 32 P (g + 1)), lane l runs 32 P g + 32 j + l
// (coalesced loads); a run starts at the 16-byte boundary at or below the row's first element.
#pragma once
#include <cstdint>

#include <cooperative_groups.h>

#include "topk_device.cuh"
#include "topk_grid_radix16_params.hpp"
#include "topk_rank16.hpp"

namespace kiln::topk {

// Header words of a row (kRadix16HeaderWords, zeroed before the launch).
inline constexpr int kRadix16Hist1 = 0, kRadix16Hist2 = 256, kRadix16Count = 512, kRadix16Arrivals = 513;

// The bin holding the want-th largest rank of the 256 global counters g (want >= 1): s_pick and
// s_above (the ranks in the bins above it).  Warp 0 scans from bin 255 down, 8 bins a lane.
__device__ __forceinline__ void radix16_pick(const std::uint32_t* g, std::uint32_t want, std::uint32_t& s_pick,
                                             std::uint32_t& s_above) {
  const int lane = int(threadIdx.x) & 31;
  std::uint32_t c[8], sum = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    c[i] = __ldcg(g + 255 - 8 * lane - i);
    sum += c[i];
  }
  const std::uint32_t incl = warp_inclusive_scan(sum);
  const unsigned hit = __ballot_sync(0xFFFFFFFFu, incl >= want);
  const int src = hit != 0 ? __ffs(int(hit)) - 1 : 31;  // no hit only on inconsistent counts
  if (lane == src) {
    std::uint32_t run = incl - sum, above = 0;
    int bin = -1;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      if (bin < 0 && run + c[i] >= want) {
        bin = 255 - 8 * lane - i;
        above = run;
      }
      run += c[i];
    }
    if (bin < 0) {  // the counts never reach want (not on real counts): the lowest bin
      bin = 0;
      above = run - c[7];
    }
    s_pick = std::uint32_t(bin);
    s_above = above;
  }
}

template <class T, int BLOCK, int HOLD>
__global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
    grid_radix16_kernel(const T* __restrict__ x, std::int64_t x_stride, std::int64_t n, int largest, int k,
                        int blocks_per_row, std::int64_t vecs_per_thread, std::uint32_t* __restrict__ header,
                        std::uint32_t* __restrict__ block_bins, std::uint64_t* __restrict__ cands,
                        T* __restrict__ values, std::int64_t v_stride, std::int32_t* __restrict__ indices,
                        std::int64_t i_stride) {
  constexpr int W = BLOCK / 32;
  constexpr KeyFormat kFormat = Element<T>::kFormat;
  // The histograms [bin][lane] (no two lanes of a warp collide), later the staged A keys (at
  // most kRadix16MaxK - 1, padded to W slices of an even length).
  __shared__ __align__(16) std::uint64_t s_buf[kRadix16MaxK + 2 * W];
  std::uint32_t* hist = reinterpret_cast<std::uint32_t*>(s_buf);
  __shared__ std::uint32_t s_warp_above[W], s_warp_ties[W], s_warp_before[W];
  __shared__ std::uint32_t s_greater[W][32];
  __shared__ std::uint32_t s_pick, s_above, s_base, s_last;
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const int row = int(blockIdx.x) / blocks_per_row, part = int(blockIdx.x) % blocks_per_row;
  const int t = threadIdx.x, lane = t & 31, w = t >> 5;
  const T* xr = x + std::int64_t(row) * x_stride;
  const int head = int((reinterpret_cast<std::uintptr_t>(xr) >> 1) & 7u);  // elements past a 16-byte boundary
  const std::uint16_t* runs = reinterpret_cast<const std::uint16_t*>(xr) - head;  // run v: runs[8 v, 8 v + 8)
  std::uint32_t* hdr = header + std::int64_t(row) * kRadix16HeaderWords;
  std::uint32_t* row_bins = block_bins + std::int64_t(row) * blocks_per_row * kRadix16Bins;
  // Element and run numbers fit an int: n <= kRadix16MaxN.
  const int P = int(vecs_per_thread), len = int(n);
  const int first = (part * W + w) * P * 32 + lane;  // run j of this thread: first + 32 j
  const bool big = largest != 0;

  auto load_run = [&](int v) {
    const int e0 = 8 * v - head;
    if (e0 >= 0 && e0 + 8 <= len) return __ldg(reinterpret_cast<const uint4*>(runs + 8 * v));
    std::uint32_t wd[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int i = 0; i < 8; ++i)
      if (e0 + i >= 0 && e0 + i < len) wd[i >> 1] |= std::uint32_t(__ldg(runs + 8 * v + i)) << ((i & 1) * 16);
    return make_uint4(wd[0], wd[1], wd[2], wd[3]);
  };
  // f(rank, index, bits) for each element of run v inside the row.
  auto visit = [&](const uint4& raw, int v, auto&& f) {
    const int e0 = 8 * v - head;
    if (e0 >= len || e0 + 8 <= 0) return;
    const std::uint32_t wd[4] = {raw.x, raw.y, raw.z, raw.w};
    const bool whole = e0 >= 0 && e0 + 8 <= len;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const std::uint32_t r = rank16_pair(wd[q], kFormat, big);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int e = e0 + 2 * q + h;
        if (whole || (e >= 0 && e < len)) f((r >> (16 * h)) & 0xFFFFu, e, (wd[q] >> (16 * h)) & 0xFFFFu);
      }
    }
  };
  uint4 held[HOLD];
#pragma unroll
  for (int j = 0; j < HOLD; ++j) held[j] = j < P ? load_run(first + 32 * j) : make_uint4(0u, 0u, 0u, 0u);
  // body(raw, v) for each of this thread's runs in order (the streamed ones loaded two at a time).
  auto for_runs = [&](auto&& body) {
#pragma unroll
    for (int j = 0; j < HOLD; ++j)
      if (j < P) body(held[j], first + 32 * j);
    for (int j = HOLD; j < P; j += 2) {
      const uint4 a = load_run(first + 32 * j);
      const uint4 b = j + 1 < P ? load_run(first + 32 * (j + 1)) : make_uint4(0u, 0u, 0u, 0u);
      body(a, first + 32 * j);
      if (j + 1 < P) body(b, first + 32 * (j + 1));
    }
  };
  auto each = [&](auto&& f) { for_runs([&](const uint4& raw, int v) { visit(raw, v, f); }); };
  // The block's counts into the 256 global counters g (and, when mine != nullptr, its own copy).
  auto flush = [&](std::uint32_t* g, std::uint32_t* mine) {
    __syncthreads();
    if (t < kRadix16Bins) {
      std::uint32_t c = 0;
#pragma unroll 8
      for (int l = 0; l < 32; ++l) c += hist[(t << 5) | ((l + t) & 31)];  // rotated: no bank conflicts
      if (c != 0) atomicAdd(g + t, c);
      if (mine != nullptr) mine[t] = c;
    }
    __syncthreads();
    for (int b = t; b < kRadix16Bins * 32; b += BLOCK) hist[b] = 0;
  };

  // 1. High bytes.  The row's counters are zeroed by its first block while the blocks count into
  // shared memory; a barrier, then every block adds its counts (no memset before the launch).
  for (int b = t; b < kRadix16Bins * 32; b += BLOCK) hist[b] = 0;
  if (part == 0)
    for (int b = t; b < kRadix16HeaderWords; b += BLOCK) hdr[b] = 0;
  __syncthreads();
  each([&](std::uint32_t r, int, std::uint32_t) { atomicAdd(hist + (((r >> 8) << 5) | lane), 1u); });
  grid.sync();
  flush(hdr + kRadix16Hist1, nullptr);
  grid.sync();
  if (w == 0) radix16_pick(hdr + kRadix16Hist1, std::uint32_t(k), s_pick, s_above);
  __syncthreads();
  const std::uint32_t b1 = s_pick, above1 = s_above;

  // 2. Low bytes of the ranks in b1; the block's own counts stay in row_bins.
  each([&](std::uint32_t r, int, std::uint32_t) {
    if ((r >> 8) == b1) atomicAdd(hist + ((r & 0xFFu) << 5 | std::uint32_t(lane)), 1u);
  });
  flush(hdr + kRadix16Hist2, row_bins + std::int64_t(part) * kRadix16Bins);
  grid.sync();
  if (w == 0) radix16_pick(hdr + kRadix16Hist2, std::uint32_t(k) - above1, s_pick, s_above);
  __syncthreads();
  const std::uint32_t v = b1 << 8 | s_pick, above = above1 + s_above;  // A: ranks above v
  const std::uint32_t need = std::uint32_t(k) - above;                   // members of v's class taken

  // 3. Counts: this thread's ranks above v, its warp's members of the class, the earlier blocks'.
  std::uint32_t mine = 0, ties = 0, before = 0;
  // The earlier blocks' counts first: their loads' latency overlaps the pass.
  for (int b = t; b < part; b += BLOCK) before += __ldcg(row_bins + std::int64_t(b) * kRadix16Bins + (v & 0xFFu));
  each([&](std::uint32_t r, int, std::uint32_t) {
    mine += r > v ? 1u : 0u;
    ties += r == v ? 1u : 0u;
  });
  const std::uint32_t incl = warp_inclusive_scan(mine);
  const std::uint32_t warp_ties = __reduce_add_sync(0xFFFFFFFFu, ties);
  const std::uint32_t warp_before = __reduce_add_sync(0xFFFFFFFFu, before);
  if (lane == 31) s_warp_above[w] = incl;
  if (lane == 0) {
    s_warp_ties[w] = warp_ties;
    s_warp_before[w] = warp_before;
  }
  __syncthreads();
  std::uint32_t above_base = 0, block_above = 0, tie_base = 0, block_ties = 0, earlier = 0;
#pragma unroll
  for (int u = 0; u < W; ++u) {
    const std::uint32_t a = s_warp_above[u], c = s_warp_ties[u];
    above_base += u < w ? a : 0u;
    block_above += a;
    tie_base += u < w ? c : 0u;
    block_ties += c;
    earlier += s_warp_before[u];
  }
  const std::uint32_t take = need > earlier ? (need - earlier < block_ties ? need - earlier : block_ties) : 0u;
  if (t == 0) s_base = block_above != 0 ? atomicAdd(hdr + kRadix16Count, block_above) : 0u;
  __syncthreads();
  std::uint64_t* list = cands + std::int64_t(row) * k;
  T* vrow = values + std::int64_t(row) * v_stride;
  std::int32_t* irow = indices + std::int64_t(row) * i_stride;
  if (mine != 0) {
    std::uint32_t at = s_base + above_base + incl - mine;
    each([&](std::uint32_t r, int e, std::uint32_t) {
      if (r > v) list[at++] = (std::uint64_t(r) << 32) | std::uint32_t(~std::uint32_t(e));
    });
  }
  // The class's members with block ordinal below `take`, straight to place A + earlier + ordinal:
  // per run a warp scan of the lanes' counts (every branch here is the same for the whole warp).
  if (tie_base < take) {
    std::uint32_t pos = tie_base;
    for_runs([&](const uint4& raw, int run) {
      if (pos >= take) return;
      std::uint32_t c = 0;
      visit(raw, run, [&](std::uint32_t r, int, std::uint32_t) { c += r == v ? 1u : 0u; });
      const std::uint32_t run_incl = warp_inclusive_scan(c);
      std::uint32_t p = pos + run_incl - c;
      if (c != 0)
        visit(raw, run, [&](std::uint32_t r, int e, std::uint32_t bits) {
          if (r == v) {
            if (p < take) {
              const std::uint32_t place = above + earlier + p;
              irow[place] = std::int32_t(e);
              reinterpret_cast<std::uint16_t*>(vrow)[place] = std::uint16_t(bits);  // x's bits
            }
            ++p;
          }
        });
      pos += __shfl_sync(0xFFFFFFFFu, run_incl, 31);
    });
  }

  // 4. The A keys above v, each placed by the number of larger ones (keys are distinct).
  auto place_and_write = [&](std::uint64_t key, std::uint32_t place) {
    const std::uint32_t j = index_of(key);
    irow[place] = std::int32_t(j);
    vrow[place] = xr[j];
  };
  if (k <= BLOCK / 2) {  // A < BLOCK / 2: the row's last block to finish orders them
    __threadfence();     // this block's keys are visible before its arrival is
    __syncthreads();
    if (t == 0) s_last = atomicAdd(hdr + kRadix16Arrivals, 1u) == std::uint32_t(blocks_per_row - 1) ? 1u : 0u;
    __syncthreads();
    if (s_last == 0 || above == 0) return;
    __threadfence();
    const int listed = int(above);
    const std::uint64_t key = t < listed ? __ldcg(reinterpret_cast<const unsigned long long*>(list + t)) : 0ull;
    if (t < listed) s_buf[t] = key;
    __syncthreads();
    if (t < listed) {
      std::uint32_t place = 0;
      for (int q = 0; q < listed; ++q) place += s_buf[q] > key ? 1u : 0u;  // a broadcast per q
      place_and_write(key, place);
    }
    return;
  }
  grid.sync();  // every block's keys are in the list (the same branch for every block)
  const int count = int(above);
  const int per = ((count + W - 1) / W + 1) & ~1, padded = W * per;
  bool staged = false;
  for (int c0 = part * 32; c0 < count; c0 += blocks_per_row * 32) {
    if (!staged) {
      for (int q = t; q < padded; q += BLOCK)
        s_buf[q] = q < count ? __ldcg(reinterpret_cast<const unsigned long long*>(list + q)) : 0ull;
      staged = true;
    }
    __syncthreads();
    const int i = c0 + lane;
    const std::uint64_t key = i < count ? s_buf[i] : ~0ull;  // past the list: counts nothing
    const ulonglong2* slice = reinterpret_cast<const ulonglong2*>(s_buf + w * per);
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
      place_and_write(key, place);
    }
  }
}

}  // namespace kiln::topk

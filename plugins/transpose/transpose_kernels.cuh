// Kernel bodies of the CUDA transpose variants: out[j][i] = in[i][j], in [m, n] with row stride
// ld_in, out [n, m] with row stride ld_out (elements).  T is the storage type of the element size
// (std::uint16_t for f16 / bf16, std::uint32_t for f32 / i32): a transpose moves bit patterns.
// They read their parameters only from template and launch arguments; the adapters
// (transpose_*.cu) choose them.  Offsets are 64-bit: row * stride passes 2^31 for large matrices.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace kiln::transpose {

// A 1-D grid-stride loop in the order of `in` (row-major m x n): reads coalesced, writes strided
// by ld_out.  The (row, col) of a thread advances by the loop step without dividing: the step is
// step_rows whole rows plus step_cols columns, with a carry when col passes n.  Needs m, n > 0.
template <class T>
__global__ void transpose_read_coalesced_kernel(const T* __restrict__ in, std::int64_t ld_in, T* __restrict__ out,
                                                std::int64_t ld_out, std::int64_t m, std::int64_t n) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t step_rows = step / n, step_cols = step - step_rows * n;
  std::int64_t row = first / n, col = first - row * n;
  while (row < m) {
    out[col * ld_out + row] = in[row * ld_in + col];
    row += step_rows;
    col += step_cols;
    if (col >= n) {
      col -= n;
      ++row;
    }
  }
}

// The same loop in the order of `out` (row-major n x m): writes coalesced, reads strided by ld_in.
template <class T>
__global__ void transpose_write_coalesced_kernel(const T* __restrict__ in, std::int64_t ld_in, T* __restrict__ out,
                                                 std::int64_t ld_out, std::int64_t m, std::int64_t n) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t step_rows = step / m, step_cols = step - step_rows * m;
  std::int64_t orow = first / m, ocol = first - orow * m;
  while (orow < n) {
    out[orow * ld_out + ocol] = in[ocol * ld_in + orow];
    orow += step_rows;
    ocol += step_cols;
    if (ocol >= m) {
      ocol -= m;
      ++orow;
    }
  }
}

// One element per thread of a 2-D grid, x over the columns of `in` (reads coalesced).  gridDim.y
// is capped at 65535, so rows loop.
template <class T>
__global__ void transpose_naive_2d_kernel(const T* __restrict__ in, std::int64_t ld_in, T* __restrict__ out,
                                          std::int64_t ld_out, std::int64_t m, std::int64_t n) {
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= n) return;  // no barriers below
  const std::int64_t row_step = static_cast<std::int64_t>(gridDim.y) * blockDim.y;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; row < m; row += row_step)
    out[col * ld_out + row] = in[row * ld_in + col];
}

// The unsigned type of kBytes bytes, for loads and stores of kBytes / sizeof(T) elements at once.
template <int kBytes> struct Bits;
template <> struct Bits<2> { using type = unsigned short; };
template <> struct Bits<4> { using type = unsigned int; };
template <> struct Bits<8> { using type = uint2; };
template <> struct Bits<16> { using type = uint4; };

// N consecutive elements at p (aligned to N * sizeof(T)); kEvictFirst: __ldcs (read once,
// evict first), else __ldg (the read-only path, default cache policy).
template <bool kEvictFirst, class T, int N>
__device__ __forceinline__ void load_vec(const T* p, T (&v)[N]) {
  using V = typename Bits<static_cast<int>(sizeof(T)) * N>::type;
  V x;
  if constexpr (kEvictFirst) {
    x = __ldcs(reinterpret_cast<const V*>(p));
  } else {
    x = __ldg(reinterpret_cast<const V*>(p));
  }
  memcpy(v, &x, sizeof x);
}

// N consecutive elements to p (aligned to N * sizeof(T)); kStreaming: __stcs (evict-first).
template <bool kStreaming, class T, int N>
__device__ __forceinline__ void store_vec(T* p, const T (&v)[N]) {
  using V = typename Bits<static_cast<int>(sizeof(T)) * N>::type;
  V x;
  memcpy(&x, v, sizeof x);
  if constexpr (kStreaming) {
    __stcs(reinterpret_cast<V*>(p), x);
  } else {
    *reinterpret_cast<V*>(p) = x;
  }
}

// Whether a row of 2-byte elements starting at p takes its 4-byte pairs from its second element:
// p sits 2 bytes past a 4-byte boundary (an odd row pitch, or a view offset by an odd element).
template <class T>
__device__ __forceinline__ bool pair_shift(const T* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 2) != 0;
}

// A kTile x kTile block moves one tile at a time through shared memory: coalesced reads of a tile
// of `in`, coalesced writes of the transposed tile to `out`.  Rows of the staging tile are padded
// by one element, so a column read (tile[tx][ty]) touches kTile different banks (4-byte T).  The
// grid loops over tiles in both directions (gridDim.y is capped at 65535).  Loop bounds are
// block-uniform, so every thread reaches both barriers.
template <class T, int kTile>
__global__ void __launch_bounds__(kTile* kTile)
    transpose_tiled_padded_kernel(const T* __restrict__ in, std::int64_t ld_in, T* __restrict__ out,
                                  std::int64_t ld_out, std::int64_t m, std::int64_t n) {
  __shared__ T tile[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::int64_t tiles_y = (m + kTile - 1) / kTile, tiles_x = (n + kTile - 1) / kTile;
  for (std::int64_t by = blockIdx.y; by < tiles_y; by += gridDim.y) {
    for (std::int64_t bx = blockIdx.x; bx < tiles_x; bx += gridDim.x) {
      const std::int64_t r = by * kTile + ty, c = bx * kTile + tx;
      if (r < m && c < n) tile[ty][tx] = in[r * ld_in + c];
      __syncthreads();
      // out[orow][ocol] = in[ocol][orow], which sits at tile[tx][ty].
      const std::int64_t orow = bx * kTile + ty, ocol = by * kTile + tx;
      if (orow < n && ocol < m) out[orow * ld_out + ocol] = tile[tx][ty];
      __syncthreads();  // before the next tile overwrites the staging tile
    }
  }
}

// A (kTile / kVec) x kBlockRows block moves kTile x kTile tiles; each thread handles kTile /
// kBlockRows rows of a tile, and issues all its loads before storing any to shared memory, so
// that many loads are in flight.  kVec > 1 moves kVec elements per access (kVec * sizeof(T)
// bytes, up to 16: float4 for 4-byte types, 8 halves for 2-byte ones; needs pointers and row
// strides aligned to that; vectors cut by the matrix edge are moved element by element).
// kOutAnyAlign (2-byte pairs on 64-wide tiles only, one warp a tile row) takes `out` at any
// alignment (`in` must be 4-byte aligned): a whole tile row of `out` whose first element is not
// 4-byte aligned (pair_shift) is written as 31 pairs from its second element (lanes 0-30) and
// its last and first elements singly (lane 31); partial tile rows element by element.  A
// thread's rows all start alike (r0 and kBlockRows are even), so the shift is known once per
// tile.  Staging rows are padded by one element; with 4-byte T, kTile == 32 and kVec == 4 the
// eight lanes of a row and the four rows of a warp then hit 32 distinct banks in both phases.  Tiles are numbered
// row-major over the tile grid (tiles_x per tile row) and taken in a 1-D grid-stride loop.
// With group_rows > 1 the tiles are taken in groups of group_rows tile rows, each group column by
// column (consecutive blocks take vertically adjacent tiles of `in`, horizontally adjacent ones
// of `out`), so the tiles in flight at once span about group_rows tile rows of `in` and as many
// tile rows of `out` rather than one or two of `in` and every row of `out`: longer runs of each
// row on both sides.  Interior tiles (`full`) skip the edge checks.  Cache hints: kLoadHint 0 loads whole vectors
// evict-first (__ldcs), 1 through the read-only path with the default policy (__ldg), which keeps
// a sector that two tiles share (rows not aligned to 32 bytes) for the second one; kStoreHint 1
// stores whole vectors evict-first (__stcs), 0 plainly.
template <class T, int kTile, int kBlockRows, int kVec, int kLoadHint, int kStoreHint, bool kOutAnyAlign = false>
__global__ void __launch_bounds__(kTile / kVec * kBlockRows)
    transpose_tiled_multirow_kernel(const T* __restrict__ in, std::int64_t ld_in, T* __restrict__ out,
                                    std::int64_t ld_out, std::int64_t m, std::int64_t n, std::int64_t tiles_x,
                                    std::int64_t tiles, std::int64_t group_rows) {
  static_assert(kVec * sizeof(T) <= 16, "at most 16-byte accesses");
  static_assert(kTile % kBlockRows == 0 && kTile % kVec == 0, "whole rows and vectors per tile");
  constexpr int kRowsPerThread = kTile / kBlockRows;
  static_assert(!kOutAnyAlign || (kVec == 2 && sizeof(T) == 2 && kTile == 64 && kBlockRows % 2 == 0),
                "out at any alignment: 2-byte pairs, one warp a tile row, even row steps");
  __shared__ __align__(16) T tile[kTile][kTile + 1];
  const int ty = threadIdx.y;
  const int lc = kVec * threadIdx.x;  // this thread's first column within a tile row
  [[maybe_unused]] const bool last_lane = lc + kVec == kTile;  // kOutAnyAlign: lane 31
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    std::int64_t tile_row, tile_col;
    if (group_rows > 1) {
      const std::int64_t group_tiles = group_rows * tiles_x;
      const std::int64_t g = t / group_tiles, first = g * group_rows, in_group = t - g * group_tiles;
      const std::int64_t rows_here = tiles / tiles_x - first < group_rows ? tiles / tiles_x - first : group_rows;
      tile_col = in_group / rows_here;
      tile_row = first + (in_group - tile_col * rows_here);
    } else {
      tile_row = t / tiles_x;
      tile_col = t - tile_row * tiles_x;
    }
    const std::int64_t r0 = tile_row * kTile, c0 = tile_col * kTile;
    const bool full = r0 + kTile <= m && c0 + kTile <= n;

    // Load rows ty, ty + kBlockRows, ... of the tile of `in` at (r0, c0): all loads first.
    T v[kRowsPerThread][kVec];
    const std::int64_t c = c0 + lc;
#pragma unroll
    for (int k = 0; k < kRowsPerThread; ++k) {
      const std::int64_t r = r0 + ty + k * kBlockRows;
      if (full || (r < m && c + kVec - 1 < n)) {
        load_vec<kLoadHint == 0>(in + r * ld_in + c, v[k]);
      } else {
#pragma unroll
        for (int i = 0; i < kVec; ++i) v[k][i] = (r < m && c + i < n) ? in[r * ld_in + c + i] : T(0);
      }
    }
#pragma unroll
    for (int k = 0; k < kRowsPerThread; ++k)
#pragma unroll
      for (int i = 0; i < kVec; ++i) tile[ty + k * kBlockRows][lc + i] = v[k][i];
    __syncthreads();

    // Store rows ty, ty + kBlockRows, ... of the transposed tile: out row c0 + lr holds column lr
    // of the staged tile; this thread writes its columns r0 + lc ... (tile rows lc ...).
    if constexpr (kOutAnyAlign) {
      const bool shifted = pair_shift(out + (c0 + ty) * ld_out + r0);
      const int a = shifted ? (last_lane ? kTile - 1 : lc + 1) : lc;
      const int b = shifted ? (last_lane ? 0 : lc + 2) : lc + 1;
      const bool singly = shifted && last_lane;
      // Unrolled by 2: fully unrolled, the hoisted shared loads took 48-51 registers (half the
      // SM's warps); by 2 it takes 30-32 and none spill.
#pragma unroll 2
      for (int k = 0; k < kRowsPerThread; ++k) {
        const int lr = ty + k * kBlockRows;
        const std::int64_t orow = c0 + lr;
        const T w[2] = {tile[a][lr], tile[b][lr]};
        T* row = out + orow * ld_out + r0;
        if (orow < n && r0 + kTile <= m && !singly) {
          store_vec<kStoreHint == 1>(row + a, w);
        } else if (orow < n) {
          if (r0 + a < m) row[a] = w[0];
          if (r0 + b < m) row[b] = w[1];
        }
      }
      __syncthreads();  // before the next tile overwrites the staging tile
      continue;
    }
    const std::int64_t oc = r0 + lc;
#pragma unroll
    for (int k = 0; k < kRowsPerThread; ++k) {
      const int lr = ty + k * kBlockRows;
      const std::int64_t orow = c0 + lr;
      T w[kVec];
#pragma unroll
      for (int i = 0; i < kVec; ++i) w[i] = tile[lc + i][lr];
      if (full || (orow < n && oc + kVec - 1 < m)) {
        store_vec<kStoreHint == 1>(out + orow * ld_out + oc, w);
      } else if (orow < n) {
        T* dst = out + orow * ld_out;
#pragma unroll
        for (int i = 0; i < kVec; ++i)
          if (oc + i < m) dst[oc + i] = w[i];
      }
    }
    __syncthreads();  // before the next tile overwrites the staging tile
  }
}

}  // namespace kiln::transpose

// Kernel body of transpose_skinny: for matrices with one short side (a few to a few hundred rows or
// columns), where square tiles would leave short rows and partial tiles.  A tile spans the whole
// short side and `span` elements of the long side: for a wide `in` (m short) it is m rows by span
// columns, so its transposed copy is span whole rows of `out`, one contiguous region when `out` is
// dense; for a tall `in` (n short) it is span whole rows of `in`, one contiguous region read.
// Both phases walk the tile linearly (reads in the order of `in`, writes in the order of `out`),
// so every warp access is consecutive addresses whatever the short side is, odd sizes and 4-byte
// alignment included.  The staging array holds the tile column-major, s[c * pitch + r], with an
// odd pitch, so consecutive lanes hit distinct banks in both phases.  T is the storage type of
// the element size (std::uint16_t or std::uint32_t): bit patterns move.
//
// 2-byte types move pairs: one element per access would give a warp 64 bytes where 4-byte types
// move 128, and the kernel would reach half the bytes per second at the same access rate.  With
// `pair_in`, each read is two neighbours of one row of `in` (columns c, c + 1, c even) in one
// 4-byte load; with `pair_out`, each write is two neighbours of one row of `out` (rows r, r + 1 of
// `in`, r even) in one 4-byte store.  The launcher sets each flag only when every such pair is
// 4-byte aligned (pointer, row stride, tile origin); a pair cut by the tile's edge (odd extent)
// moves its one element alone.  The staging array keeps single elements, so a pair read fills two
// staged columns and a pair written takes two staged neighbours.
#pragma once
#include <cstdint>

namespace kiln::transpose {

inline constexpr int kSkinnyIlp = 8;  // loads each thread issues before storing any

namespace skinny_detail {

// Linear walk (the pair paths) over the units of a tile whose rows hold `per_row` units: unit e is (e / per_row,
// e % per_row); quotient and remainder advance by BLOCK without dividing.
template <int BLOCK>
struct Walk {
  int q, r, q_step, r_step, per_row;
  __device__ Walk(int per_row_, int start) : per_row(per_row_) {
    q = start / per_row, r = start - q * per_row;
    q_step = BLOCK / per_row, r_step = BLOCK - q_step * per_row;
  }
  __device__ void next() {
    q += q_step;
    r += r_step;
    if (r >= per_row) {
      r -= per_row;
      ++q;
    }
  }
};

// Read phase, one element per load, in the order of `in`: element e is (e / cols, e % cols).
// (Written out as before the pairs existed, so 4-byte types compile to the same code.)
template <class T, int BLOCK>
__device__ void read_elements(const T* __restrict__ in, std::int64_t ld_in, std::int64_t r0, std::int64_t c0, int rows,
                              int cols, T* s, int pitch) {
  const int total = rows * cols;
  const int q_step = BLOCK / cols, r_step = BLOCK - (BLOCK / cols) * cols;
  int r = static_cast<int>(threadIdx.x) / cols, c = static_cast<int>(threadIdx.x) - r * cols;
  for (int e0 = 0; e0 < total; e0 += BLOCK * kSkinnyIlp) {
    T v[kSkinnyIlp];
    int rr[kSkinnyIlp], cc[kSkinnyIlp];
#pragma unroll
    for (int i = 0; i < kSkinnyIlp; ++i) {
      rr[i] = r;
      cc[i] = c;
      if (e0 + i * BLOCK + static_cast<int>(threadIdx.x) < total) v[i] = __ldcs(in + (r0 + r) * ld_in + c0 + c);
      r += q_step;
      c += r_step;
      if (c >= cols) {
        c -= cols;
        ++r;
      }
    }
#pragma unroll
    for (int i = 0; i < kSkinnyIlp; ++i)
      if (e0 + i * BLOCK + static_cast<int>(threadIdx.x) < total) s[cc[i] * pitch + rr[i]] = v[i];
  }
}

// Read phase of a 2-byte type, two neighbours of a row per 4-byte load (see the file comment).
template <int BLOCK>
__device__ void read_pairs(const std::uint16_t* __restrict__ in, std::int64_t ld_in, std::int64_t r0, std::int64_t c0,
                           int rows, int cols, std::uint16_t* s, int pitch) {
  const int pairs = (cols + 1) >> 1;  // per row; the last is a single element when cols is odd
  const int total = rows * pairs;
  Walk<BLOCK> w(pairs, static_cast<int>(threadIdx.x));  // q: row, r: pair
  for (int e0 = 0; e0 < total; e0 += BLOCK * kSkinnyIlp) {
    unsigned int v[kSkinnyIlp];
    int rr[kSkinnyIlp], cc[kSkinnyIlp];
#pragma unroll
    for (int i = 0; i < kSkinnyIlp; ++i) {
      rr[i] = w.q;
      cc[i] = 2 * w.r;
      if (e0 + i * BLOCK + static_cast<int>(threadIdx.x) < total) {
        const std::uint16_t* src = in + (r0 + w.q) * ld_in + c0 + 2 * w.r;
        v[i] = 2 * w.r + 1 < cols ? __ldcs(reinterpret_cast<const unsigned int*>(src))
                                  : static_cast<unsigned int>(__ldcs(src));
      }
      w.next();
    }
#pragma unroll
    for (int i = 0; i < kSkinnyIlp; ++i)
      if (e0 + i * BLOCK + static_cast<int>(threadIdx.x) < total) {
        s[cc[i] * pitch + rr[i]] = static_cast<std::uint16_t>(v[i]);  // the lower address: little-endian
        if (cc[i] + 1 < cols) s[(cc[i] + 1) * pitch + rr[i]] = static_cast<std::uint16_t>(v[i] >> 16);
      }
  }
}

// Write phase, one element per store, in the order of `out`: element e is out row (e / rows),
// column (e % rows).
template <class T, int BLOCK>
__device__ void write_elements(T* __restrict__ out, std::int64_t ld_out, std::int64_t r0, std::int64_t c0, int rows,
                               int cols, const T* s, int pitch) {
  const int total = rows * cols;
  const int q_step = BLOCK / rows, r_step = BLOCK - (BLOCK / rows) * rows;
  int c = static_cast<int>(threadIdx.x) / rows, r = static_cast<int>(threadIdx.x) - c * rows;
  for (int e = threadIdx.x; e < total; e += BLOCK) {
    __stcs(out + (c0 + c) * ld_out + r0 + r, s[c * pitch + r]);
    c += q_step;
    r += r_step;
    if (r >= rows) {
      r -= rows;
      ++c;
    }
  }
}

// Write phase of a 2-byte type, two neighbours of a row of `out` per 4-byte store.
template <int BLOCK>
__device__ void write_pairs(std::uint16_t* __restrict__ out, std::int64_t ld_out, std::int64_t r0, std::int64_t c0,
                            int rows, int cols, const std::uint16_t* s, int pitch) {
  const int pairs = (rows + 1) >> 1;  // per row of out; the last is single when rows is odd
  const int total = cols * pairs;
  Walk<BLOCK> w(pairs, static_cast<int>(threadIdx.x));  // q: column of in, r: pair of rows of in
  for (int e = threadIdx.x; e < total; e += BLOCK) {
    const int r = 2 * w.r;
    const std::uint16_t* src = s + w.q * pitch + r;
    std::uint16_t* dst = out + (c0 + w.q) * ld_out + r0 + r;
    if (r + 1 < rows)
      __stcs(reinterpret_cast<unsigned int*>(dst), static_cast<unsigned int>(src[0]) | (static_cast<unsigned int>(src[1]) << 16));
    else
      __stcs(dst, src[0]);
    w.next();
  }
}

}  // namespace skinny_detail

// Tiles are (tile_rows x tile_cols) of `in`; tiles_c per tile row; the grid loops over tiles.
// pair_in / pair_out: 2-byte T only (ignored for 4-byte T), see the file comment.
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    transpose_skinny_kernel(const T* __restrict__ in, std::int64_t ld_in, T* __restrict__ out,
                            std::int64_t ld_out, std::int64_t m, std::int64_t n, int tile_rows, int tile_cols,
                            int pitch, std::int64_t tiles_c, std::int64_t tiles, bool pair_in, bool pair_out) {
  extern __shared__ __align__(16) unsigned char skinny_staging[];  // bytes: one name for every T
  T* s = reinterpret_cast<T*>(skinny_staging);
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t tr = t / tiles_c;
    const std::int64_t r0 = tr * tile_rows, c0 = (t - tr * tiles_c) * tile_cols;
    const int rows = static_cast<int>(m - r0 < tile_rows ? m - r0 : tile_rows);  // this tile's extent
    const int cols = static_cast<int>(n - c0 < tile_cols ? n - c0 : tile_cols);
    if constexpr (sizeof(T) == 2) {
      if (pair_in)
        skinny_detail::read_pairs<BLOCK>(in, ld_in, r0, c0, rows, cols, s, pitch);
      else
        skinny_detail::read_elements<T, BLOCK>(in, ld_in, r0, c0, rows, cols, s, pitch);
    } else {
      skinny_detail::read_elements<T, BLOCK>(in, ld_in, r0, c0, rows, cols, s, pitch);
    }
    __syncthreads();
    if constexpr (sizeof(T) == 2) {
      if (pair_out)
        skinny_detail::write_pairs<BLOCK>(out, ld_out, r0, c0, rows, cols, s, pitch);
      else
        skinny_detail::write_elements<T, BLOCK>(out, ld_out, r0, c0, rows, cols, s, pitch);
    } else {
      skinny_detail::write_elements<T, BLOCK>(out, ld_out, r0, c0, rows, cols, s, pitch);
    }
    __syncthreads();  // before the next tile overwrites the staging array
  }
}

}  // namespace kiln::transpose

// Kernel body of transpose_skinny: for matrices with one short side (a few to a few hundred rows or
// columns), where square tiles would leave short rows and partial tiles.  A tile spans the whole
// short side and `span` elements of the long side: for a wide `in` (m short) it is m rows by span
// columns, so its transposed copy is span whole rows of `out`, one contiguous region when `out` is
// dense; for a tall `in` (n short) it is span whole rows of `in`, one contiguous region read.
// Both phases walk the tile linearly (reads in the order of `in`, writes in the order of `out`),
// so every warp access is consecutive addresses whatever the short side is, odd sizes and 4-byte
// alignment included.  The staging array holds the tile column-major, s[c * pitch + r], with an
// odd pitch, so consecutive lanes hit distinct banks in both phases (4-byte T).  T is the storage
// type of the element size (std::uint16_t or std::uint32_t): bit patterns move.
#pragma once
#include <cstdint>

namespace kiln::transpose {

inline constexpr int kSkinnyIlp = 8;  // loads each thread issues before storing any

// Tiles are (tile_rows x tile_cols) of `in`; tiles_c per tile row; the grid loops over tiles.
template <class T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    transpose_skinny_kernel(const T* __restrict__ in, std::int64_t ld_in, T* __restrict__ out,
                            std::int64_t ld_out, std::int64_t m, std::int64_t n, int tile_rows, int tile_cols,
                            int pitch, std::int64_t tiles_c, std::int64_t tiles) {
  extern __shared__ __align__(16) unsigned char skinny_staging[];  // bytes: one name for every T
  T* s = reinterpret_cast<T*>(skinny_staging);
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t tr = t / tiles_c;
    const std::int64_t r0 = tr * tile_rows, c0 = (t - tr * tiles_c) * tile_cols;
    const int rows = static_cast<int>(m - r0 < tile_rows ? m - r0 : tile_rows);  // this tile's extent
    const int cols = static_cast<int>(n - c0 < tile_cols ? n - c0 : tile_cols);
    const int total = rows * cols;

    // Read phase, in the order of `in`: element e is (e / cols, e % cols); the quotient and
    // remainder advance by BLOCK without dividing.
    {
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
    __syncthreads();
    // Write phase, in the order of `out`: element e is out row (e / rows), column (e % rows).
    {
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
    __syncthreads();  // before the next tile overwrites the staging array
  }
}

}  // namespace kiln::transpose

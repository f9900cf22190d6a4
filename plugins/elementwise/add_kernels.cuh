// Kernel bodies of the CUDA `add` variants.  They read their parameters only from template
// arguments and launch arguments; the adapters (add_*.cu) choose them.  All element offsets are
// 64-bit: rows * row_stride passes 2^31 for large tensors.
#pragma once
#include <cstdint>

#include "add_element.cuh"

namespace kiln::elementwise {

// One element per iteration of a 1-D grid-stride loop over the m*n elements in row-major order.
// The (row, col) of a thread's element advances by the loop step without dividing: the step is
// step_rows whole rows plus step_cols columns, with a carry when col passes n.
template <class T>
__global__ void add_grid_stride_kernel(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n,
                                       std::int64_t stride_a, std::int64_t stride_b, std::int64_t stride_c) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t step_rows = step / n;
  const std::int64_t step_cols = step - step_rows * n;
  std::int64_t row = first / n;
  std::int64_t col = first - row * n;
  while (row < m) {
    c[row * stride_c + col] = add_values(a[row * stride_a + col], b[row * stride_b + col]);
    row += step_rows;
    col += step_cols;
    if (col >= n) {
      col -= n;
      ++row;
    }
  }
}

// One element per thread of a 2-D grid (x over columns, y over rows).  The grid is capped by the
// hardware limits (65535 blocks in y), so both dimensions loop when the tensor is larger.
template <class T>
__global__ void add_2d_kernel(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t stride_a,
                              std::int64_t stride_b, std::int64_t stride_c) {
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t col_step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t row_step = static_cast<std::int64_t>(gridDim.y) * blockDim.y;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; row < m;
       row += row_step) {
    const T* ar = a + row * stride_a;
    const T* br = b + row * stride_b;
    T* cr = c + row * stride_c;
    for (std::int64_t col = col0; col < n; col += col_step) cr[col] = add_values(ar[col], br[col]);
  }
}

// float4 loads and stores.  Each row holds `chunks` float4 chunks followed by `tail` (< 4) single
// floats; every row start is 16-byte aligned (the adapter checks).  A tile is kItems * blockDim.x
// consecutive chunks of one row; blocks take tiles in a grid-stride loop, tiles_per_row >= 1 so
// that rows with no whole chunk still have a tile for their tail.  A thread loads all its items
// before it stores any, so kItems * 32 bytes per thread are in flight.
template <int kItems>
__global__ void add_vectorized_kernel(const float* a, const float* b, float* c, std::int64_t chunks, int tail,
                                      std::int64_t stride_a, std::int64_t stride_b, std::int64_t stride_c,
                                      std::int64_t tiles_per_row, std::int64_t tiles) {
  const std::int64_t tile_chunks = static_cast<std::int64_t>(kItems) * blockDim.x;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t row = tile / tiles_per_row;  // block-uniform, once per tile
    const std::int64_t tile_col = tile - row * tiles_per_row;
    const float* ar = a + row * stride_a;
    const float* br = b + row * stride_b;
    float* cr = c + row * stride_c;
    const float4* a4 = reinterpret_cast<const float4*>(ar);
    const float4* b4 = reinterpret_cast<const float4*>(br);
    float4* c4 = reinterpret_cast<float4*>(cr);
    const std::int64_t first = tile_col * tile_chunks + threadIdx.x;

    float4 va[kItems], vb[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const std::int64_t j = first + static_cast<std::int64_t>(i) * blockDim.x;
      if (j < chunks) {
        va[i] = a4[j];
        vb[i] = b4[j];
      }
    }
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const std::int64_t j = first + static_cast<std::int64_t>(i) * blockDim.x;
      if (j < chunks) c4[j] = make_float4(va[i].x + vb[i].x, va[i].y + vb[i].y, va[i].z + vb[i].z, va[i].w + vb[i].w);
    }
    if (tail != 0 && tile_col == tiles_per_row - 1 && static_cast<int>(threadIdx.x) < tail) {
      const std::int64_t k = chunks * 4 + threadIdx.x;
      cr[k] = ar[k] + br[k];
    }
  }
}

}  // namespace kiln::elementwise

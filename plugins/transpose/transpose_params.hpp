// Tuning parameters of the CUDA transpose variants: spaces, defaults, the compile-time lists of
// instantiated tiled kernels, and the problem checks behind supports() — plain C++, so host-only
// builds and tests can inspect them.
//
//   kiln::ParamSpace s = kiln::transpose::tiled_multirow_space();
//   s.count_valid(device, problem);                      // 40 of 48
//   kiln::Config c = kiln::transpose::tiled_multirow_default(device);
//   // tile=32 block_rows=8 vector_width=4 tiles_per_block=1
#pragma once
#include <kiln/device.hpp>
#include <kiln/param_space.hpp>
#include <kiln/problem.hpp>
#include <kiln/variant.hpp>

namespace kiln::transpose {

// transpose_read_coalesced / transpose_write_coalesced: a 1-D grid-stride loop over the elements
// in the order of `in` (reads coalesced, writes strided) or of `out` (the reverse).
//   block  threads per block
ParamSpace one_d_space();
Config one_d_default(const DeviceInfo& device);

// transpose_naive_2d: a 2-D grid, one element per thread, x over the columns of `in` (reads
// coalesced, writes strided).
//   block_x, block_y  block shape; 64 <= block_x * block_y <= 1024
ParamSpace naive_2d_space();
Config naive_2d_default(const DeviceInfo& device);
Support naive_2d_supports(const Problem& problem, const Config& config);

// transpose_tiled_padded: a tile x tile block stages one tile in shared memory (rows padded by
// one element against bank conflicts); reads and writes both coalesced; grid-stride over tiles.
//   tile  16 or 32 (a template parameter, see kPaddedTiles)
inline constexpr int kPaddedTiles[] = {16, 32};
ParamSpace tiled_padded_space();
Config tiled_padded_default(const DeviceInfo& device);

// transpose_tiled_multirow: a (tile / vector_width) x block_rows block moves a tile x tile tile,
// each thread tile / block_rows rows of it, all its loads issued before the tile is stored; a
// 1-D grid-stride loop over tiles.
//   tile             32 or 64 (template)
//   block_rows       rows of threads per block (template)
//   vector_width     1, or 4: 16-byte loads and stores (needs 16-byte aligned pointers and row
//                    pitches; partial vectors at the matrix edges are moved singly) (template)
//   tiles_per_block  grid = ceil(tiles / tiles_per_block) (a launch argument)
// Instantiated (tile, block_rows, vector_width): kMultirowKernels.
struct MultirowKernel {
  int tile;
  int block_rows;
  int vector_width;
};
inline constexpr MultirowKernel kMultirowKernels[] = {
    {32, 4, 1}, {32, 8, 1}, {32, 16, 1}, {64, 8, 1}, {64, 16, 1},
    {32, 8, 4}, {32, 16, 4}, {64, 4, 4}, {64, 8, 4}, {64, 16, 4}};
ParamSpace tiled_multirow_space();
Config tiled_multirow_default(const DeviceInfo& device);
Support tiled_multirow_supports(const Problem& problem, const Config& config);

}  // namespace kiln::transpose

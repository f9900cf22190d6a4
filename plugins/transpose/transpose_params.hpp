// Tuning parameters of the CUDA transpose variants: spaces, defaults, the compile-time lists of
// instantiated tiled kernels, and the problem checks behind supports() — plain C++, so host-only
// builds and tests can inspect them.
//
//   kiln::ParamSpace s = kiln::transpose::tiled_multirow_space();
//   s.count_valid(device, problem);                      // 104 for f32, 70 for bf16
//   kiln::Config c = kiln::transpose::tiled_multirow_default(device);
//   // tile=64 block_rows=8 vector_width=1 load_hint=1 store_hint=0 tiles_per_block=1 group_rows=1
#pragma once
#include <cstddef>
#include <cstdint>

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
//   tile             32, 64 or 128 (template)
//   block_rows       rows of threads per block (template)
//   vector_width     elements per access (template): 1, or up to 16 bytes (4 for 4-byte types,
//                    2 or 8 for 2-byte ones); needs pointers and row pitches aligned to
//                    vector_width * element size, except 2-byte pairs on 64-wide tiles (any
//                    alignment: `out` rows off a 4-byte boundary pair from their second element;
//                    with `in` off one the scalar kernel of the same shape runs); partial vectors
//                    at the matrix edges are moved singly
//   load_hint        0: whole vectors loaded evict-first (__ldcs); 1: __ldg, default policy (template)
//   store_hint       0: plain stores; 1: whole vectors stored evict-first (__stcs) (template)
//   tiles_per_block  grid = ceil(tiles / tiles_per_block) (a launch argument)
//   group_rows       1: tiles in row-major order; G > 1: in groups of G tile rows, each group
//                    column by column (a launch argument; with tiles_per_block=1, on the kernels
//                    of kMultirowGrouped only)
// Instantiated (element bytes, tile, block_rows, vector_width, load_hint, store_hint):
// kMultirowKernels; a config is valid for a problem when its kernel is instantiated for the
// problem's element size.
struct MultirowKernel {
  int elem_bytes;
  int tile;
  int block_rows;
  int vector_width;
  int load_hint;
  int store_hint;
};
inline constexpr MultirowKernel kMultirowKernels[] = {
    // 4-byte types (f32, i32): the tile shapes, then the cache hints on the likely winners
    {4, 32, 4, 1, 0, 0}, {4, 32, 8, 1, 0, 0}, {4, 32, 16, 1, 0, 0}, {4, 64, 4, 1, 0, 0}, {4, 64, 8, 1, 0, 0},
    {4, 64, 16, 1, 0, 0}, {4, 32, 8, 4, 0, 0}, {4, 32, 16, 4, 0, 0}, {4, 64, 4, 4, 0, 0}, {4, 64, 8, 4, 0, 0},
    {4, 64, 16, 4, 0, 0},
    {4, 32, 8, 1, 0, 1}, {4, 64, 8, 1, 0, 1}, {4, 64, 16, 1, 0, 1}, {4, 32, 8, 4, 0, 1}, {4, 64, 8, 4, 0, 1},
    {4, 32, 8, 1, 1, 0}, {4, 64, 8, 1, 1, 0}, {4, 64, 16, 1, 1, 0}, {4, 64, 8, 1, 1, 1}, {4, 32, 8, 4, 1, 0},
    {4, 64, 8, 4, 1, 0},
    // 2-byte types (f16, bf16): scalar, 4-byte pairs and 16-byte vectors of 8
    {2, 64, 8, 1, 0, 0}, {2, 64, 16, 1, 0, 0}, {2, 64, 8, 2, 0, 0}, {2, 64, 16, 2, 0, 0}, {2, 64, 4, 8, 0, 0},
    {2, 64, 8, 8, 0, 0}, {2, 128, 16, 8, 0, 0}, {2, 128, 32, 8, 0, 0},
    {2, 64, 8, 1, 0, 1}, {2, 64, 8, 8, 0, 1}, {2, 128, 16, 8, 0, 1},
    {2, 64, 8, 1, 1, 0}, {2, 64, 8, 8, 1, 0}, {2, 128, 16, 8, 1, 0}};
// Kernels also offered with group_rows 8, 32 and 1024 (tiles_per_block=1): the likely winners.
inline constexpr MultirowKernel kMultirowGrouped[] = {
    {4, 64, 8, 1, 0, 0}, {4, 64, 16, 1, 0, 0}, {4, 32, 8, 1, 0, 0}, {4, 64, 8, 1, 1, 0},
    {4, 64, 8, 1, 0, 1}, {4, 32, 8, 4, 0, 0},  {4, 64, 8, 4, 0, 0}, {4, 32, 8, 4, 1, 0},
    {2, 64, 8, 1, 0, 0}, {2, 64, 8, 2, 0, 0},  {2, 64, 8, 8, 0, 0}, {2, 128, 16, 8, 0, 1}};
// group_rows = kMultirowWholeColumnRows takes whole tile columns in turn (every matrix of up to
// 1024 tile rows: 65536 rows of 64-tiles), the order cuBLAS geam takes; the default.
inline constexpr int kMultirowWholeColumnRows = 1024;
inline constexpr int kMultirowGroupRows[] = {8, 32, kMultirowWholeColumnRows};
// Matrices of at most this many tile rows are always taken whole tile column by whole tile
// column, whatever group_rows says: in row-major order the tiles that write the two parts of
// one row of `out` are a whole tile row apart in time (15625 tiles for 100 x 10^6), and the
// 32-byte sectors they share, partly written and evicted in between, cost a read-modify-write.
// Measured on the H200 (docs/performance.md, 2026-11-24 fourth session).
inline constexpr std::int64_t kMultirowWholeColumns = 8;
// The instantiated kernel of `config` for `elem_bytes`-byte elements, or null.
const MultirowKernel* multirow_kernel(const Config& config, int elem_bytes);
ParamSpace tiled_multirow_space();
Config tiled_multirow_default(const DeviceInfo& device);
// The default for one problem (measured on the H200): tiled_multirow_default, row-major for narrow
// inputs; 2-byte types in 4-byte pairs; f32 / i32 with a short side of at most 32 on 32 x 32
// tiles (float4 when aligned to 16 bytes), small 16-byte aligned ones float4 with evict-first
// stores.
Config tiled_multirow_default_for(const DeviceInfo& device, const Problem& problem);
// 2-byte elements in 4-byte pairs on 64-wide tiles take any (2-byte) alignment: rows of `out`
// starting off a 4-byte boundary pair from their second element (transpose_kernels.cuh); with
// `in` off one, launch() runs the scalar kernel of the same tile, rows and hints.
bool multirow_pairs_any_alignment(const Config& config, int elem_bytes);
Support tiled_multirow_supports(const Problem& problem, const Config& config);

// transpose_skinny: for matrices with a short side (min(m, n) <= kSkinnyMaxShort).  A tile spans
// the whole short side and as much of the long side as fits in `tile_bytes` of shared memory
// (rounded down to a multiple of 32 when that is at least 32, else to a multiple of
// `span_multiple`), read and written linearly (consecutive addresses in both phases, any
// alignment of the element type).  The grid is one wave of resident blocks looping over the tiles.
//   block         threads per block (template: kSkinnyBlocks)
//   tile_bytes    bytes staged per tile (launch argument; shared memory = cols * pitch * element
//                 size, up to 1.5x tile_bytes for a 2-row tile's odd pitch); in bytes so that one
//                 value stages as much data for 2- as for 4-byte types
//   access_bytes  bytes per global load and store: 4 for 4-byte types; for 2-byte types 2 (one
//                 element) or 4 (two neighbours, on each side where pointer, row stride and tile
//                 origin allow; element by element on a side where they do not)
inline constexpr int kSkinnyBlocks[] = {256, 512, 1024};
inline constexpr int kSkinnyMaxShort = 256;
struct SkinnyTile {
  int rows = 0;   // of `in`
  int cols = 0;
  int pitch = 0;  // staging stride between columns: rows rounded up to odd
  std::size_t smem_bytes(int elem_bytes) const {
    return std::size_t(cols) * std::size_t(pitch) * static_cast<std::size_t>(elem_bytes);
  }
};
// The tile of an m x n `in` staging at most `tile_elems` elements (tile_bytes / element size).
SkinnyTile skinny_tile(std::int64_t m, std::int64_t n, int tile_elems, int span_multiple = 1);
// Which sides of a 2-byte transpose move pairs (see transpose_skinny_kernel.cuh): `in` (m x n,
// row stride ld_in) when every pair (c, c + 1) of a row, c even from each tile's first column,
// is 4-byte aligned; `out` (n x m, row stride ld_out) likewise for pairs (r, r + 1).
struct SkinnyPairs {
  bool in = false;
  bool out = false;
};
SkinnyPairs skinny_pairs(std::uintptr_t in, std::uintptr_t out, std::int64_t ld_in, std::int64_t ld_out, std::int64_t m,
                         std::int64_t n, const SkinnyTile& tile);
ParamSpace skinny_space();
Config skinny_default(const DeviceInfo& device);
Support skinny_supports(const Problem& problem);

}  // namespace kiln::transpose

// Tuning parameters of the CUDA `add` variants: spaces, defaults, and the problem checks
// (supports) — plain C++, so host-only builds and tests can inspect them.
//
//   kiln::ParamSpace s = kiln::elementwise::add_2d_space();
//   s.count_valid(device, problem);              // 16: block_x * block_y in [64, 1024]
//   kiln::Config c = kiln::elementwise::add_vectorized_default(device);
#pragma once
#include <array>

#include <kiln/device.hpp>
#include <kiln/errors.hpp>
#include <kiln/param_space.hpp>
#include <kiln/problem.hpp>
#include <kiln/variant.hpp>

namespace kiln::elementwise {

// add_grid_stride: one element per iteration of a 1-D grid-stride loop.
//   block          threads per block
//   blocks_per_sm  grid = min(ceil(m*n / block), blocks_per_sm * SM count)
ParamSpace add_grid_stride_space();
Config add_grid_stride_default(const DeviceInfo& device);

// add_2d: a 2-D grid of 2-D blocks, one element per thread (grid-stride when the grid is capped).
//   block_x, block_y  block shape; 64 <= block_x * block_y <= 1024
ParamSpace add_2d_space();
Config add_2d_default(const DeviceInfo& device);

// add_vectorized (f32): 16-byte loads and stores, `items` float4 per thread per tile.
//   block          threads per block
//   items          float4 chunks per thread per tile (a template parameter, see kVectorItems)
//   blocks_per_sm  grid = min(tiles, blocks_per_sm * SM count)
inline constexpr std::array<int, 4> kVectorItems = {1, 2, 4, 8};
ParamSpace add_vectorized_space();
Config add_vectorized_default(const DeviceInfo& device);
// Needs 16-byte aligned pointers and row pitches (problem.align_bytes == 16).
Support add_vectorized_supports(const Problem& problem);

// add_streaming (f32, any 4-byte alignment): one full wave of blocks; a row's 16-byte chunks (dense
// operands are one row) dealt round-robin to its threads, each loading `items` before storing.
//   block          threads per block
//   items          float4 per input each thread loads before storing (template, kStreamingKernels)
//   streaming      1: __ldcs / __stcs (evict-first cache hints), 0: plain loads and stores (template)
//   blocks_per_sm  resident blocks per SM asked for; capped by the kernel's occupancy, so the grid
//                  is one full wave: min(blocks_per_sm, occupancy) * SM count blocks
struct StreamingKernel {
  int items;
  int streaming;
};
inline constexpr std::array<StreamingKernel, 6> kStreamingKernels = {{{2, 0}, {4, 0}, {8, 0}, {2, 1}, {4, 1}, {8, 1}}};
struct StreamingConfig {
  int block = 0;
  int items = 0;
  int streaming = 0;
  int blocks_per_sm = 0;
};
ParamSpace add_streaming_space();
Config add_streaming_default(const DeviceInfo& device);
// Reads and checks a config (values from the space, an instantiated kernel); ErrorKind::argument.
Status add_streaming_config_from(const Config& config, StreamingConfig& out);
// f32 only; any alignment of at least 4 bytes (a dtype's natural alignment).
Support add_streaming_supports(const Problem& problem);

}  // namespace kiln::elementwise

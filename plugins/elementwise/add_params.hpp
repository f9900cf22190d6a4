// Tuning parameters of the CUDA `add` variants: spaces, defaults, and the problem checks
// (supports) — plain C++, so host-only builds and tests can inspect them.
//
//   kiln::ParamSpace s = kiln::elementwise::add_2d_space();
//   s.count_valid(device, problem);              // 16: block_x * block_y in [64, 1024]
//   kiln::Config c = kiln::elementwise::add_vectorized_default(device);
#pragma once
#include <array>

#include <kiln/device.hpp>
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

}  // namespace kiln::elementwise

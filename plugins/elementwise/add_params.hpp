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
//   blocks_per_sm  grid = min(tiles, blocks_per_sm * SM count); 0: one block per tile (no loop)
inline constexpr std::array<int, 4> kVectorItems = {1, 2, 4, 8};
ParamSpace add_vectorized_space();
Config add_vectorized_default(const DeviceInfo& device);
// Needs 16-byte aligned pointers and row pitches (problem.align_bytes == 16).
Support add_vectorized_supports(const Problem& problem);

// add_streaming (f32, f16, bf16; any alignment of the element type): 16-byte chunks (4 floats or
// 8 halves) of a row (dense operands are one row) dealt round-robin to its threads, each loading
// `items` chunks per input before storing; halves are added in fp32.
//   block          threads per block
//   items          16-byte chunks per input each thread loads before storing (template)
//   streaming      cache hints of the 16-byte accesses (template): 0 plain (__ldg, plain store),
//                  1 __ldcs / __stcs (evict-first), 2 ld.global.nc.L1::no_allocate.L2::256B
//                  and st.global.cs (no L1 line, 256-byte L2 prefetch, evict-first store)
//   blocks_per_sm  resident blocks per SM asked for; capped by the kernel's occupancy, so the grid
//                  is one full wave: min(blocks_per_sm, occupancy) * SM count blocks.  0: no cap,
//                  as many blocks as give every thread a single pass (items chunks each)
// Instantiated for every dtype: items x streaming in kStreamingKernels (12 kernels per dtype).
struct StreamingKernel {
  int items;
  int streaming;
};
inline constexpr std::array<StreamingKernel, 12> kStreamingKernels = {
    {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}, {4, 2}, {8, 2}}};
struct StreamingConfig {
  int block = 0;
  int items = 0;
  int streaming = 0;
  int blocks_per_sm = 0;  // 0: a full grid (one pass per thread)
};
ParamSpace add_streaming_space();
Config add_streaming_default(const DeviceInfo& device);
// Reads and checks a config (values from the space, an instantiated kernel); ErrorKind::argument.
Status add_streaming_config_from(const Config& config, StreamingConfig& out);
// f32, f16 or bf16; any alignment of at least the element size (a dtype's natural alignment).
Support add_streaming_supports(const Problem& problem);

}  // namespace kiln::elementwise

// Tuning parameters of the CUDA gemv variants: spaces, defaults, the compile-time list of
// instantiated warp-per-row kernels, and the problem checks behind supports() — plain C++, so
// host-only builds and tests can inspect them.
//
//   kiln::ParamSpace s = kiln::gemv::warp_per_row_space();
//   s.count_valid(device, problem);                       // 54 of 72
//   kiln::Config c = kiln::gemv::warp_per_row_default(device);
//   // rows_per_block=8 threads_per_row=32 vector_width=4
#pragma once
#include <kiln/device.hpp>
#include <kiln/param_space.hpp>
#include <kiln/problem.hpp>
#include <kiln/variant.hpp>

namespace kiln::gemv {

// gemv_row_per_thread: one thread computes one row (the seeds' first kernel).
//   block  threads per block
ParamSpace row_per_thread_space();
Config row_per_thread_default(const DeviceInfo& device);
Support row_per_thread_supports(const Problem& problem, const Config& config);

// gemv_smem_x: one thread per row; the block stages x in shared memory, `tile` elements at a time.
//   block  threads per block
//   tile   elements of x per phase (tile * 4 bytes of dynamic shared memory)
ParamSpace smem_x_space();
Config smem_x_default(const DeviceInfo& device);
Support smem_x_supports(const Problem& problem, const DeviceInfo& device, const Config& config);

// gemv_warp_per_row: `threads_per_row` threads share a row (a warp, part of one, or several),
// each keeping several loads in flight, then a shuffle reduction (and a shared-memory one across
// the warps of a row when threads_per_row > 32).
//   rows_per_block   rows per block (a launch argument: blockDim.y)
//   threads_per_row  template parameter, see kWarpPerRowKernels
//   vector_width     1 (4-byte loads) or 4 (16-byte float4 loads of A and x: needs 16-byte aligned
//                    pointers and row pitches; any n, the last n % 4 columns are read singly)
// Block size threads_per_row * rows_per_block must be a multiple of 32 (whole warps shuffle) and
// at most 1024.
struct WarpPerRowKernel {
  int threads_per_row;
  int vector_width;
};
// Every (threads_per_row, vector_width) pair is instantiated: 12 kernels.
inline constexpr WarpPerRowKernel kWarpPerRowKernels[] = {
    {4, 1}, {4, 4}, {8, 1}, {8, 4}, {16, 1}, {16, 4}, {32, 1}, {32, 4}, {64, 1}, {64, 4}, {128, 1}, {128, 4}};
ParamSpace warp_per_row_space();
Config warp_per_row_default(const DeviceInfo& device);
Support warp_per_row_supports(const Problem& problem, const Config& config);

// gemv_half_warp_per_row: gemv_warp_per_row for f16 / bf16 A and x (f32 accumulation, y in f32 or
// the input dtype).
//   rows_per_block   thread groups per block (launch argument: blockDim.y)
//   threads_per_row  threads of a group (template parameter)
//   vector_width     8 (16-byte loads of 8 halves of A and x: needs 16-byte aligned pointers and
//                    row pitches; the last n % 8 columns are read singly) or 1 (2-byte loads)
//   rows_per_thread  1 or 2 rows per group (template parameter): with 2, each chunk of x is loaded
//                    and converted once for two rows
// A block holds threads_per_row * rows_per_block threads (whole warps, at most 1024) and computes
// rows_per_block * rows_per_thread rows.  A curated list is instantiated (per dtype).
struct HalfWarpPerRowKernel {
  int threads_per_row;
  int vector_width;
  int rows_per_thread;
};
inline constexpr HalfWarpPerRowKernel kHalfWarpPerRowKernels[] = {
    {8, 8, 1}, {16, 8, 1}, {32, 8, 1}, {64, 8, 1}, {128, 8, 1}, {32, 1, 1}, {32, 8, 2}, {64, 8, 2}, {128, 8, 2}};
ParamSpace half_warp_per_row_space();
Config half_warp_per_row_default(const DeviceInfo& device);
Support half_warp_per_row_supports(const Problem& problem, const Config& config);

}  // namespace kiln::gemv

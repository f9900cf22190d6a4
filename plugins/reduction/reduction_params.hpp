// Tuning parameters of the CUDA reduction variants: spaces, defaults, the instantiated kernel
// configs, grid and workspace sizes, and the problem checks — plain C++, so host-only builds and
// tests can inspect them.
//
//   kiln::ParamSpace s = kiln::reduction::warp_shuffle_space(kiln::reduction::ReduceOp::sum);
//   kiln::Config c = kiln::reduction::warp_shuffle_default(device);
//   kiln::reduction::warp_shuffle_supports(problem, c);   // no, with a reason, when misaligned
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include <kiln/device.hpp>
#include <kiln/errors.hpp>
#include <kiln/param_space.hpp>
#include <kiln/problem.hpp>
#include <kiln/variant.hpp>

#include "reduction_ops.hpp"

namespace kiln::reduction {

// Every workspace starts with this header: the block counter of the last-block finish (a uint32,
// padded so the block partials that follow start 16-byte aligned).  The launch zeroes it.
inline constexpr std::size_t kWorkspaceHeaderBytes = 16;

// --- The ladder (interleaved, sequential, two_pass, atomic, last_block, kahan) ------------------
//   block          threads per block (a power of two: the shared-memory trees halve it)
//   blocks_per_sm  grid = min(ceil(n / block), blocks_per_sm * SM count): a grid-stride loop
// Both are launch arguments, so every config runs the same compiled kernel.
struct LadderConfig {
  int block = 0;
  int blocks_per_sm = 0;
};
ParamSpace ladder_space();
Config ladder_default(const DeviceInfo& device);
// Reads and checks a config (values from the space); fails with ErrorKind::argument.
Status ladder_config_from(const Config& config, LadderConfig& out);
int ladder_grid(std::int64_t n, const LadderConfig& c, int sm_count);
// atomic: 0; kahan: header + a (sum, compensation) float pair per block; others: header + one
// 4-byte partial per block (float, or uint32 for i32), for the largest grid on `sm_count` SMs.
std::size_t ladder_workspace_bytes(Ladder ladder, const LadderConfig& c, int sm_count);

// --- warp_shuffle -------------------------------------------------------------------------------
//   block             threads per block (multiple of 32)
//   blocks_per_sm     grid = min(tiles, blocks_per_sm * SM count), tile = block * items vectors
//   items_per_thread  vectors each thread loads before it adds any (template)
//   vector_width      1 (scalar loads) or 4 (16-byte loads; needs align_bytes 16) (template)
//   acc_double        0: accumulate f32 in float; 1: in double (template; i32 always uint32)
struct WarpShuffleInstance {
  int items_per_thread;
  int vector_width;
  int acc_double;
};
// The kernel configs compiled (curated, not the full product: compile time).  dot loads two
// streams, so 8 x float4 per thread (64 registers of loads) is left out for it.
inline constexpr std::array<WarpShuffleInstance, 10> kDotWarpShuffleInstances = {{
    {1, 4, 0}, {2, 4, 0}, {4, 4, 0}, {1, 4, 1}, {2, 4, 1}, {4, 4, 1},  //
    {4, 1, 0}, {8, 1, 0}, {4, 1, 1}, {8, 1, 1},
}};
// reduce_sum: f32 uses all of them; i32 those with acc_double = 0 (the space's constraint).
inline constexpr std::array<WarpShuffleInstance, 12> kSumWarpShuffleInstances = {{
    {1, 4, 0}, {2, 4, 0}, {4, 4, 0}, {8, 4, 0}, {1, 4, 1}, {2, 4, 1}, {4, 4, 1}, {8, 4, 1},  //
    {4, 1, 0}, {8, 1, 0}, {4, 1, 1}, {8, 1, 1},
}};

struct WarpShuffleConfig {
  int block = 0;
  int blocks_per_sm = 0;
  int items_per_thread = 0;
  int vector_width = 0;
  bool acc_double = false;
};
ParamSpace warp_shuffle_space(ReduceOp op);
Config warp_shuffle_default(const DeviceInfo& device);
Status warp_shuffle_config_from(const Config& config, WarpShuffleConfig& out);
// vector_width 4 needs 16-byte aligned pointers (problem.align_bytes == 16).
Support warp_shuffle_supports(const Problem& problem, const Config& config);
int warp_shuffle_grid(std::int64_t n, const WarpShuffleConfig& c, int sm_count);
// header + one partial per block (8 bytes with acc_double, else 4).
std::size_t warp_shuffle_workspace_bytes(const WarpShuffleConfig& c, int sm_count);

// --- half_warp_shuffle (f16 / bf16 inputs, f32 accumulation) -------------------------------------
//   block, blocks_per_sm, items_per_thread  as warp_shuffle (a tile is block * items vectors)
//   vector_width  8: 16-byte loads of 8 halves.  A misaligned start is peeled: the elements before
//                 the first 16-byte boundary and after the last whole vector are read singly, so
//                 every alignment runs vectorised (dot: when x and y are misaligned alike; else
//                 launch() runs the scalar instance {items 8, vector_width 1}, same result).
//                 1: one 2-byte load per element.
// Accumulation is always f32 (PlainAcc<float>); out is f32 or the input dtype (the out16 dim), a
// launch argument, so it costs no instantiation.  Curated instances as for warp_shuffle: dot
// leaves out 8 x 16 bytes per stream.
struct HalfWarpShuffleInstance {
  int items_per_thread;
  int vector_width;
};
inline constexpr std::array<HalfWarpShuffleInstance, 4> kDotHalfInstances = {{{1, 8}, {2, 8}, {4, 8}, {8, 1}}};
inline constexpr std::array<HalfWarpShuffleInstance, 6> kSumHalfInstances = {
    {{1, 8}, {2, 8}, {4, 8}, {8, 8}, {4, 1}, {8, 1}}};
// The instance dot falls back to when x and y are misaligned differently (must be in both lists).
inline constexpr HalfWarpShuffleInstance kHalfScalarFallback = {8, 1};

ParamSpace half_warp_shuffle_space(ReduceOp op);
Config half_warp_shuffle_default(const DeviceInfo& device);
// acc_double is false in the result; vector_width is 1 or 8.
Status half_warp_shuffle_config_from(const Config& config, WarpShuffleConfig& out);
// f16 / bf16 problems only; elements must be at least 2-byte aligned.
Support half_warp_shuffle_supports(const Problem& problem, const Config& config);

}  // namespace kiln::reduction

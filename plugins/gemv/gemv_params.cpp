#include "gemv_params.hpp"

#include <cstdint>
#include <string>

namespace kiln::gemv {
namespace {

constexpr std::int64_t kMaxGridX = 2147483647;  // gridDim.x limit

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

Support grid_fits(const char* variant, const Problem& problem, int rows_per_block) {
  if (rows_per_block <= 0) return Support::no(std::string(variant) + ": bad config");
  if (ceil_div(problem.dims[0], rows_per_block) > kMaxGridX)
    return Support::no(std::string(variant) + ": m = " + std::to_string(problem.dims[0]) +
                       " needs more than 2^31-1 blocks");
  return Support::yes();
}

}  // namespace

ParamSpace row_per_thread_space() {
  ParamSpace s;
  s.param("block", {64, 128, 256, 512});
  return s;
}

Config row_per_thread_default(const DeviceInfo& device) {
  (void)device;
  // Not measured yet; 256 threads is the usual middle ground (8 blocks fill an sm_90 SM).
  return {{"block", 256}};
}

Support row_per_thread_supports(const Problem& problem, const Config& config) {
  return grid_fits("gemv_row_per_thread", problem, config.get_or("block", 0));
}

ParamSpace smem_x_space() {
  ParamSpace s;
  s.param("block", {64, 128, 256, 512}).param("tile", {256, 512, 1024, 2048, 4096});
  return s;
}

Config smem_x_default(const DeviceInfo& device) {
  (void)device;
  // Not measured yet; a 4 KiB tile of x per phase keeps the two barriers per phase rare.
  return {{"block", 256}, {"tile", 1024}};
}

Support smem_x_supports(const Problem& problem, const DeviceInfo& device, const Config& config) {
  const std::size_t smem = static_cast<std::size_t>(config.get_or("tile", 0)) * sizeof(float);
  const std::size_t limit = device.smem_per_block ? device.smem_per_block : 48 * 1024;
  if (smem > limit)
    return Support::no("gemv_smem_x: tile needs " + std::to_string(smem) + " bytes of shared memory, the limit is " +
                       std::to_string(limit));
  return grid_fits("gemv_smem_x", problem, config.get_or("block", 0));
}

ParamSpace warp_per_row_space() {
  ParamSpace s;
  s.param("rows_per_block", {1, 2, 4, 8, 16, 32})
      .param("threads_per_row", {4, 8, 16, 32, 64, 128})
      .param("vector_width", {1, 4});
  s.constraint("threads_per_row * rows_per_block is a multiple of 32 and <= 1024",
               [](const Config& c, const DeviceInfo&, const Problem&) {
                 const int threads = c.get_or("threads_per_row", 0) * c.get_or("rows_per_block", 0);
                 return threads > 0 && threads % 32 == 0 && threads <= 1024;
               });
  s.constraint("instantiated (threads_per_row, vector_width)", [](const Config& c, const DeviceInfo&, const Problem&) {
    const int tpr = c.get_or("threads_per_row", 0), vec = c.get_or("vector_width", 0);
    for (const WarpPerRowKernel& k : kWarpPerRowKernels)
      if (k.threads_per_row == tpr && k.vector_width == vec) return true;
    return false;
  });
  return s;
}

Config warp_per_row_default(const DeviceInfo& device) {
  (void)device;
  // Not measured yet; a warp per row with float4 loads (4 in flight per thread) and 256-thread
  // blocks.  Misaligned problems fall to the next variant (vector_width=4 does not support them).
  return {{"rows_per_block", 8}, {"threads_per_row", 32}, {"vector_width", 4}};
}

Support warp_per_row_supports(const Problem& problem, const Config& config) {
  if (config.get_or("vector_width", 1) == 4 && problem.align_bytes < 16)
    return Support::no("gemv_warp_per_row: vector_width=4 needs 16-byte aligned pointers and row pitches, these are " +
                       std::to_string(problem.align_bytes) + "-byte aligned");
  return grid_fits("gemv_warp_per_row", problem, config.get_or("rows_per_block", 0));
}

ParamSpace half_warp_per_row_space() {
  ParamSpace s;
  s.param("rows_per_block", {1, 2, 4, 8, 16})
      .param("threads_per_row", {8, 16, 32, 64, 128})
      .param("vector_width", {1, 8})
      .param("rows_per_thread", {1, 2});
  s.constraint("threads_per_row * rows_per_block is a multiple of 32 and <= 1024",
               [](const Config& c, const DeviceInfo&, const Problem&) {
                 const int threads = c.get_or("threads_per_row", 0) * c.get_or("rows_per_block", 0);
                 return threads > 0 && threads % 32 == 0 && threads <= 1024;
               });
  s.constraint("instantiated (threads_per_row, vector_width, rows_per_thread)",
               [](const Config& c, const DeviceInfo&, const Problem&) {
                 const int tpr = c.get_or("threads_per_row", 0), vec = c.get_or("vector_width", 0),
                           rpt = c.get_or("rows_per_thread", 0);
                 for (const HalfWarpPerRowKernel& k : kHalfWarpPerRowKernels)
                   if (k.threads_per_row == tpr && k.vector_width == vec && k.rows_per_thread == rpt) return true;
                 return false;
               });
  return s;
}

Config half_warp_per_row_default(const DeviceInfo& device) {
  (void)device;
  // Measured (H200, kiln tune gemv --shape 16384x16384 --dtype bf16, all 40 configs, 2026-11-24):
  // one 128-thread row per block, 4 x 16-byte loads of A in flight per thread, was the fastest,
  // 134.3 us (3999 GB/s; cuBLAS GemmEx 132.6 us); 4 rows x 64 threads took 140.4 us.
  return {{"rows_per_block", 1}, {"threads_per_row", 128}, {"vector_width", 8}, {"rows_per_thread", 1}};
}

Support half_warp_per_row_supports(const Problem& problem, const Config& config) {
  if (problem.dtype != DType::f16 && problem.dtype != DType::bf16)
    return Support::no("gemv_half_warp_per_row: reads f16 or bf16 A and x, this problem has " +
                       std::string(dtype_name(problem.dtype)));
  if (config.get_or("vector_width", 1) == 8 && problem.align_bytes < 16)
    return Support::no("gemv_half_warp_per_row: vector_width=8 needs 16-byte aligned pointers and row pitches, these "
                       "are " + std::to_string(problem.align_bytes) + "-byte aligned");
  if (problem.align_bytes < 2)
    return Support::no("gemv_half_warp_per_row: f16 / bf16 elements must be 2-byte aligned");
  return grid_fits("gemv_half_warp_per_row", problem,
                   config.get_or("rows_per_block", 0) * config.get_or("rows_per_thread", 1));
}

}  // namespace kiln::gemv

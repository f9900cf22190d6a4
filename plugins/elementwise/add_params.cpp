#include "add_params.hpp"

#include <string>
#include <vector>

namespace kiln::elementwise {

ParamSpace add_grid_stride_space() {
  ParamSpace s;
  s.param("block", {128, 256, 512, 1024}).param("blocks_per_sm", {1, 2, 4, 8, 16, 32});
  return s;
}

Config add_grid_stride_default(const DeviceInfo& device) {
  (void)device;
  // A guess until tuned: 256 x 8 fills an SM's 2048 threads on sm_80/sm_90.
  return {{"block", 256}, {"blocks_per_sm", 8}};
}

ParamSpace add_2d_space() {
  ParamSpace s;
  s.param("block_x", {16, 32, 64, 128}).param("block_y", {1, 2, 4, 8, 16});
  s.constraint("64 <= block_x * block_y <= 1024", [](const Config& c, const DeviceInfo&, const Problem&) {
    const int threads = c.get_or("block_x", 0) * c.get_or("block_y", 0);
    return threads >= 64 && threads <= 1024;
  });
  return s;
}

Config add_2d_default(const DeviceInfo& device) {
  (void)device;
  // A guess until tuned: a warp-wide row (128 contiguous bytes of f32) and 256 threads.
  return {{"block_x", 32}, {"block_y", 8}};
}

ParamSpace add_vectorized_space() {
  ParamSpace s;
  s.param("block", {128, 256, 512})
      .param("items", std::vector<int>(kVectorItems.begin(), kVectorItems.end()))
      .param("blocks_per_sm", {0, 2, 4, 8, 16});
  return s;
}

Config add_vectorized_default(const DeviceInfo& device) {
  (void)device;
  // A guess until tuned: 256 threads x 4 float4 per input keeps 8 KiB per block in flight.
  return {{"block", 256}, {"items", 4}, {"blocks_per_sm", 8}};
}

Support add_vectorized_supports(const Problem& problem) {
  if (problem.dtype != DType::f32)
    return Support::no("add_vectorized: f32 only, got " + std::string(dtype_name(problem.dtype)));
  if (problem.align_bytes < 16)
    return Support::no("add_vectorized: needs 16-byte aligned pointers and row pitches, these are " +
                       std::to_string(problem.align_bytes) + "-byte aligned");
  return Support::yes();
}

ParamSpace add_streaming_space() {
  ParamSpace s;
  s.param("block", {128, 256, 512})
      .param("items", {1, 2, 4, 8})
      .param("streaming", {0, 1, 2})
      .param("blocks_per_sm", {0, 2, 4, 8, 16});
  return s;
}

Config add_streaming_default(const DeviceInfo& device) {
  (void)device;
  // A full grid, one 16-byte chunk per input per thread: blocks start in address order and each
  // moves 4 KiB of a row, so the chunks in flight stay in a narrow, advancing window.  H200,
  // 2026-11-27, `kiln bench add --shape 16384x16384 --vs vendor`: 738.2 us against geam's 737.2;
  // the former default (one wave of persistent blocks, items=4 blocks_per_sm=8) 777.2 us in the
  // same process's tune.  Sizes and dtypes: docs/performance.md, fourteenth session.
  return {{"block", 256}, {"items", 1}, {"streaming", 0}, {"blocks_per_sm", 0}};
}

Status add_streaming_config_from(const Config& config, StreamingConfig& out) {
  out.block = config.get_or("block", 0);
  out.items = config.get_or("items", 0);
  out.streaming = config.get_or("streaming", -1);
  out.blocks_per_sm = config.get_or("blocks_per_sm", -1);
  if (out.block <= 0 || out.block > 1024 || out.block % 32 != 0 || out.blocks_per_sm < 0)
    return Status::fail(ErrorKind::argument, "add_streaming: bad config " + config.to_string() +
                                                 " (block a multiple of 32 up to 1024, blocks_per_sm >= 0)");
  for (const StreamingKernel& k : kStreamingKernels)
    if (k.items == out.items && k.streaming == out.streaming) return Status::success();
  return Status::fail(ErrorKind::argument, "add_streaming: items=" + std::to_string(out.items) + " streaming=" +
                                               std::to_string(out.streaming) +
                                               " is not instantiated (items 1, 2, 4, 8; streaming 0, 1, 2)");
}

Support add_streaming_supports(const Problem& problem) {
  if (problem.dtype != DType::f32 && problem.dtype != DType::f16 && problem.dtype != DType::bf16)
    return Support::no("add_streaming: f32, f16 or bf16, got " + std::string(dtype_name(problem.dtype)));
  if (problem.align_bytes < static_cast<int>(dtype_size(problem.dtype)))
    return Support::no("add_streaming: needs pointers and row pitches aligned to the element size, these are " +
                       std::to_string(problem.align_bytes) + "-byte aligned");
  return Support::yes();
}

}  // namespace kiln::elementwise

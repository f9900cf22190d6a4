#include "reduction_params.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace kiln::reduction {
namespace {

const std::vector<int> kBlocks = {128, 256, 512, 1024};
const std::vector<int> kBlocksPerSm = {1, 2, 4, 8};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// At least one block (it writes the empty sum), at most blocks_per_sm per SM.
int clamp_grid(std::int64_t tiles, int blocks_per_sm, int sm_count) {
  const std::int64_t cap = std::max<std::int64_t>(1, std::int64_t{blocks_per_sm} * sm_count);
  return static_cast<int>(std::clamp<std::int64_t>(tiles, 1, cap));
}

bool in(const std::vector<int>& values, int v) { return std::find(values.begin(), values.end(), v) != values.end(); }

}  // namespace

ParamSpace ladder_space() {
  ParamSpace s;
  s.param("block", kBlocks).param("blocks_per_sm", kBlocksPerSm);
  return s;
}

Config ladder_default(const DeviceInfo& device) {
  (void)device;
  // Not measured yet (no tuning run): 256 x 4 = 1024 threads per SM, half of sm_90's 2048.
  return {{"block", 256}, {"blocks_per_sm", 4}};
}

Status ladder_config_from(const Config& config, LadderConfig& out) {
  out.block = config.get_or("block", 0);
  out.blocks_per_sm = config.get_or("blocks_per_sm", 0);
  if (!in(kBlocks, out.block) || !in(kBlocksPerSm, out.blocks_per_sm))
    return Status::fail(ErrorKind::argument, "reduction ladder: bad config " + config.to_string() +
                                                 " (block in {128,256,512,1024}, blocks_per_sm in {1,2,4,8})");
  return Status::success();
}

int ladder_grid(std::int64_t n, const LadderConfig& c, int sm_count) {
  return clamp_grid(ceil_div(n, c.block), c.blocks_per_sm, sm_count);
}

std::size_t ladder_workspace_bytes(Ladder ladder, const LadderConfig& c, int sm_count) {
  if (ladder == Ladder::atomic) return 0;
  const std::size_t partial = ladder == Ladder::kahan ? 8 : 4;
  const std::size_t max_grid = static_cast<std::size_t>(clamp_grid(INT32_MAX, c.blocks_per_sm, sm_count));
  return kWorkspaceHeaderBytes + max_grid * partial;
}

ParamSpace warp_shuffle_space(ReduceOp op) {
  ParamSpace s;
  s.param("block", kBlocks)
      .param("blocks_per_sm", kBlocksPerSm)
      .param("items_per_thread", {1, 2, 4, 8})
      .param("vector_width", {1, 4})
      .param("acc_double", {0, 1});
  std::vector<Config> instantiated;
  auto add_all = [&](const auto& instances) {
    for (int block : kBlocks)
      for (int bps : kBlocksPerSm)
        for (const WarpShuffleInstance& k : instances)
          instantiated.push_back({{"block", block},
                                  {"blocks_per_sm", bps},
                                  {"items_per_thread", k.items_per_thread},
                                  {"vector_width", k.vector_width},
                                  {"acc_double", k.acc_double}});
  };
  if (op == ReduceOp::dot)
    add_all(kDotWarpShuffleInstances);
  else
    add_all(kSumWarpShuffleInstances);
  s.only(std::move(instantiated));
  s.constraint("acc_double = 0 for i32 (integers accumulate in 32 bits, modulo 2^32)",
               [](const Config& c, const DeviceInfo&, const Problem& p) {
                 return p.dtype != DType::i32 || c.get_or("acc_double", 0) == 0;
               });
  return s;
}

Config warp_shuffle_default(const DeviceInfo& device) {
  (void)device;
  // Not measured yet (no tuning run).  Reasoning: 256 threads x 4 blocks per SM x 4 float4 per
  // thread keeps 64 KiB per SM in flight per input stream, well above what H200's bandwidth-delay
  // product needs (~22 KiB per SM); float accumulation is within the 1e-4 tolerance.
  return {{"block", 256}, {"blocks_per_sm", 4}, {"items_per_thread", 4}, {"vector_width", 4}, {"acc_double", 0}};
}

Status warp_shuffle_config_from(const Config& config, WarpShuffleConfig& out) {
  out.block = config.get_or("block", 0);
  out.blocks_per_sm = config.get_or("blocks_per_sm", 0);
  out.items_per_thread = config.get_or("items_per_thread", 0);
  out.vector_width = config.get_or("vector_width", 0);
  const int acc = config.get_or("acc_double", -1);
  out.acc_double = acc == 1;
  if (!in(kBlocks, out.block) || !in(kBlocksPerSm, out.blocks_per_sm) || !in({1, 2, 4, 8}, out.items_per_thread) ||
      !in({1, 4}, out.vector_width) || (acc != 0 && acc != 1))
    return Status::fail(ErrorKind::argument, "reduction warp_shuffle: bad config " + config.to_string());
  return Status::success();
}

Support warp_shuffle_supports(const Problem& problem, const Config& config) {
  const int vector_width = config.get_or("vector_width", 1);
  if (vector_width > 1 && problem.align_bytes < 16)
    return Support::no("vector_width=4 loads 16 bytes at a time and needs 16-byte aligned pointers; this "
                       "problem's are " + std::to_string(problem.align_bytes) + "-byte aligned (use vector_width=1)");
  return Support::yes();
}

int warp_shuffle_grid(std::int64_t n, const WarpShuffleConfig& c, int sm_count) {
  const std::int64_t vectors = n / c.vector_width;
  return clamp_grid(ceil_div(vectors, std::int64_t{c.block} * c.items_per_thread), c.blocks_per_sm, sm_count);
}

std::size_t warp_shuffle_workspace_bytes(const WarpShuffleConfig& c, int sm_count) {
  const std::size_t partial = c.acc_double ? 8 : 4;
  const std::size_t max_grid = static_cast<std::size_t>(clamp_grid(INT32_MAX, c.blocks_per_sm, sm_count));
  return kWorkspaceHeaderBytes + max_grid * partial;
}

ParamSpace half_warp_shuffle_space(ReduceOp op) {
  ParamSpace s;
  s.param("block", kBlocks)
      .param("blocks_per_sm", kBlocksPerSm)
      .param("items_per_thread", {1, 2, 4, 8})
      .param("vector_width", {1, 8});
  std::vector<Config> instantiated;
  auto add_all = [&](const auto& instances) {
    for (int block : kBlocks)
      for (int bps : kBlocksPerSm)
        for (const HalfWarpShuffleInstance& k : instances)
          instantiated.push_back({{"block", block},
                                  {"blocks_per_sm", bps},
                                  {"items_per_thread", k.items_per_thread},
                                  {"vector_width", k.vector_width}});
  };
  if (op == ReduceOp::dot)
    add_all(kDotHalfInstances);
  else
    add_all(kSumHalfInstances);
  s.only(std::move(instantiated));
  return s;
}

Config half_warp_shuffle_default(const DeviceInfo& device) {
  (void)device;
  // Measured (H200, kiln tune over every config at n = 2^28 bf16, 2026-11-24): 1024 threads x 4
  // blocks per SM x 4 16-byte loads was within 0.3% of the fastest for both ops (reduce_sum
  // 131.8 us, 4074 GB/s; dot 247.4 us, 4340 GB/s); 256 threads x 4 x 4 took 134.9 and 254.0 us.
  return {{"block", 1024}, {"blocks_per_sm", 4}, {"items_per_thread", 4}, {"vector_width", 8}};
}

Status half_warp_shuffle_config_from(const Config& config, WarpShuffleConfig& out) {
  out.block = config.get_or("block", 0);
  out.blocks_per_sm = config.get_or("blocks_per_sm", 0);
  out.items_per_thread = config.get_or("items_per_thread", 0);
  out.vector_width = config.get_or("vector_width", 0);
  out.acc_double = false;
  if (!in(kBlocks, out.block) || !in(kBlocksPerSm, out.blocks_per_sm) || !in({1, 2, 4, 8}, out.items_per_thread) ||
      !in({1, 8}, out.vector_width))
    return Status::fail(ErrorKind::argument, "reduction half_warp_shuffle: bad config " + config.to_string() +
                                                 " (block in {128,256,512,1024}, blocks_per_sm in {1,2,4,8}, "
                                                 "items_per_thread in {1,2,4,8}, vector_width in {1,8})");
  return Status::success();
}

Support half_warp_shuffle_supports(const Problem& problem, const Config& config) {
  (void)config;
  if (problem.dtype != DType::f16 && problem.dtype != DType::bf16)
    return Support::no("reads f16 or bf16 inputs, this problem has " + std::string(dtype_name(problem.dtype)));
  if (problem.align_bytes < 2)
    return Support::no("f16 / bf16 elements must be 2-byte aligned; this problem's pointers are " +
                       std::to_string(problem.align_bytes) + "-byte aligned");
  return Support::yes();
}

}  // namespace kiln::reduction

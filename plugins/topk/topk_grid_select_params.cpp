#include "topk_grid_select_params.hpp"

#include <algorithm>
#include <string>

#include "topk_params.hpp"
#include "topk_sample_select_params.hpp"

namespace kiln::topk {
namespace {

std::int64_t pow2_at_least(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace

GridPlan grid_plan(std::int64_t n, std::int64_t k, int element_bytes) {
  GridPlan g;
  // The select kernel sorts at most max(kSampleSortMin, 2 pow2(k)) keys without radix passes of
  // its own (k <= 2048); for k = 4096 it refines 8192 down to 4096.
  g.target = std::uint32_t(std::max<std::int64_t>(kSampleSortMin, 2 * pow2_at_least(k)));
  g.fallback_cap = radix_cap(2048, k);
  std::int64_t cap = std::max<std::int64_t>(pow2_at_least(g.target), g.fallback_cap);
  if (element_bytes == 2) cap = std::max(cap, pow2_at_least(n / kSampleHalfTieShare));
  g.cand_cap = cap;
  return g;
}

ParamSpace grid_select_space() {
  ParamSpace s;
  s.param("block", {256, 512}).param("min_chunk", {1024, 2048, 4096, 8192});
  return s;
}

// Untuned guess (2026-11-27, not measured yet): 512 threads, chunks of at least 2048 (1 x 2^20:
// 512 blocks of 2048 ranks, 4 per thread).
Config grid_select_default(const DeviceInfo&) { return {{"block", 512}, {"min_chunk", 2048}}; }

Support grid_select_supports(std::int64_t rows, std::int64_t n, const DeviceInfo& device) {
  if (n < kGridMinN) return Support::no("n = " + std::to_string(n) + " < " + std::to_string(kGridMinN));
  const std::int64_t blocks = std::int64_t(device.sm_count) * kGridBlocksPerSmAssumed;
  const std::int64_t per_row = blocks / std::max<std::int64_t>(rows, 1);
  if (per_row < 1 || (n + kGridMaxChunk - 1) / kGridMaxChunk > per_row)
    return Support::no("rows x n = " + std::to_string(rows) + " x " + std::to_string(n) +
                       " exceeds the resident grid (" + std::to_string(blocks) + " blocks of " +
                       std::to_string(kGridMaxChunk) + " elements, a whole number per row)");
  return Support::yes();
}

}  // namespace kiln::topk

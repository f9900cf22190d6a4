#include "topk_grid_select_params.hpp"

#include <algorithm>
#include <string>

#include "topk_params.hpp"
#include "topk_sample_select_params.hpp"

namespace kiln::topk {

GridPlan grid_plan(std::int64_t k) {
  GridPlan g;
  std::int64_t target = kSampleSortMin;
  while (target < 2 * k && target < kGridRankCap) target <<= 1;
  g.target = std::uint32_t(target);
  g.cand_cap = target;
  return g;
}

ParamSpace grid_select_space() {
  ParamSpace s;
  s.param("block", {256, 512}).param("min_chunk", {1024, 2048, 4096, 8192});
  return s;
}

// Measured on an H200, 2026-11-27 (`kiln tune --runs 10`, the first version, development shapes):
// 1 x 2^20, k = 100 f32: min_chunk 4096 22.7 us (block 512) and 22.9 (256), 8192 22.8, 1024 24.2,
// 2048 24.4; 1 x 2^22, k = 1024 bf16: every min_chunk 39.2-39.3 us with 512 threads.
Config grid_select_default(const DeviceInfo&) { return {{"block", 512}, {"min_chunk", 4096}}; }

Support grid_select_supports(std::int64_t rows, std::int64_t n, const DeviceInfo& device) {
  // The levels' grid barriers are the whole grid's: with two rows that need different numbers of
  // levels the blocks of one would wait at a barrier the other never reaches (2026-11-27: a hang
  // on 2 x 9001 rows of values spread over 120 octaves).  Per-row barriers would lift this.
  if (rows != 1)
    return Support::no("rows = " + std::to_string(rows) + ": one row only (its blocks share the grid's barriers)");
  if (n < kGridMinN) return Support::no("n = " + std::to_string(n) + " < " + std::to_string(kGridMinN));
  const std::int64_t blocks = std::int64_t(device.sm_count) * kGridBlocksPerSmAssumed;
  if ((n + kGridMaxStreamChunk - 1) / kGridMaxStreamChunk > blocks)
    return Support::no("n = " + std::to_string(n) + " exceeds the resident grid (" + std::to_string(blocks) +
                       " blocks of " + std::to_string(kGridMaxStreamChunk) + " elements)");
  return Support::yes();
}

}  // namespace kiln::topk

#include "topk_grid_radix16_params.hpp"

#include <algorithm>
#include <string>

namespace kiln::topk {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Blocks a row takes at most: every thread at least min_vecs runs, within the workspace's bound.
std::int64_t most_blocks_per_row(std::int64_t n, int block, int min_vecs) {
  const std::int64_t want = ceil_div(radix16_row_vecs(n), std::int64_t(block) * std::max(min_vecs, 1));
  return std::clamp<std::int64_t>(want, 1, kRadix16MaxBlocksPerRow);
}

}  // namespace

Radix16Plan radix16_plan(std::int64_t rows, std::int64_t n, int block, int min_vecs, std::int64_t resident) {
  Radix16Plan g;
  if (rows < 1 || n < 1 || block < 1 || resident < rows) return g;
  const std::int64_t per_row = std::min(most_blocks_per_row(n, block, min_vecs), resident / rows);
  g.blocks_per_row = int(per_row);
  g.vecs_per_thread = ceil_div(radix16_row_vecs(n), per_row * block);
  return g;
}

ParamSpace grid_radix16_space() {
  ParamSpace s;
  s.param("block", {256, 512}).param("hold", {2, 4}).param("min_vecs", {1, 2, 4});
  return s;
}

Config grid_radix16_default(const DeviceInfo&) { return {{"block", 512}, {"hold", 4}, {"min_vecs", 2}}; }

Support grid_radix16_supports(DType dtype, std::int64_t rows, std::int64_t n, std::int64_t k, const DeviceInfo& device) {
  if (dtype != f16 && dtype != bf16) return Support::no("f16 and bf16 only (two byte-wide passes find a 16-bit value)");
  if (k > kRadix16MaxK)
    return Support::no("k = " + std::to_string(k) + " > " + std::to_string(kRadix16MaxK) +
                       ": the keys above the k-th value are ordered in 32 KiB of shared memory");
  // Every row needs a block of the (cooperative, all-resident) grid; rows share its barriers,
  // which every row takes alike (two passes always decide a 16-bit value).
  const std::int64_t resident = std::int64_t(device.sm_count) * (kRadix16ThreadsPerSmAssumed / 512);
  if (rows > resident)
    return Support::no("rows = " + std::to_string(rows) + " > " + std::to_string(resident) +
                       ": every row needs a block of the resident grid");
  if (n < 1 || n > kRadix16MaxN)
    return Support::no("n = " + std::to_string(n) + ": rows of 1 to 2^30 elements (element numbers are ints)");
  return Support::yes();
}

Radix16Layout radix16_layout(std::int64_t rows, std::int64_t n, std::int64_t k, int block, int min_vecs) {
  Radix16Layout r;
  r.max_blocks_per_row = int(most_blocks_per_row(n, block, min_vecs));
  r.header_bytes = std::size_t(rows) * kRadix16HeaderWords * sizeof(std::uint32_t);
  r.block_bins_bytes = std::size_t(rows) * std::size_t(r.max_blocks_per_row) * kRadix16Bins * sizeof(std::uint32_t);
  r.cands_bytes = std::size_t(rows) * std::size_t(std::max<std::int64_t>(k, 1)) * sizeof(std::uint64_t);
  return r;
}

}  // namespace kiln::topk

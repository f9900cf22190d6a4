#include "split_k_plan.hpp"

#include <algorithm>
#include <vector>

#include "gemm_params.hpp"
#include "register_blocked_configs.hpp"

namespace kiln::gemm {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

const std::vector<int> kSplitValues = {0, 4, 16, 64};

Config with_splits(int row, int splits) {
  Config c = register_blocked_config(row);
  c.set("splits", splits);
  return c;
}

int row_of(int bm, int bn, int bk, int vec) {
  for (int i = 0; i < kRegisterBlockedConfigCount; ++i) {
    const RegisterBlockedConfig& r = kRegisterBlockedConfigs[i];
    if (r.bm == bm && r.bn == bn && r.bk == bk && r.vec == vec && split_k_offered(r)) return i;
  }
  return -1;
}

}  // namespace

SplitKPlan split_k_plan(std::int64_t m, std::int64_t n, std::int64_t k, int bm, int bn, int splits, int sms) {
  SplitKPlan plan;
  if (m <= 0 || n <= 0 || k <= 0 || bm <= 0 || bn <= 0 || splits < 0) return plan;
  std::int64_t want = splits;
  if (want == 0) {
    const std::int64_t tiles = ceil_div(m, bm) * ceil_div(n, bn);
    want = std::min<std::int64_t>(2 * std::max(sms, 1) / tiles, k / kSplitKMinAutoChunk);
  }
  want = std::min<std::int64_t>(want, 65535);  // grid rows
  if (want < 2) return plan;
  const std::int64_t chunk = ceil_div(ceil_div(k, want), kSplitKChunkQuantum) * kSplitKChunkQuantum;
  const std::int64_t splits_needed = ceil_div(k, chunk);
  if (splits_needed < 2) return plan;
  plan.splits = static_cast<int>(splits_needed);
  plan.k_chunk = static_cast<int>(chunk);
  plan.ld = ceil_div(n, 4) * 4;
  plan.stride = m * plan.ld;
  plan.workspace_bytes = std::size_t(plan.splits) * std::size_t(plan.stride) * sizeof(float);
  return plan;
}

ParamSpace split_k_space() {
  // The register_blocked params (their values from the offered rows), then splits.
  std::vector<int> rows;
  for (int i = 0; i < kRegisterBlockedConfigCount; ++i)
    if (split_k_offered(kRegisterBlockedConfigs[i])) rows.push_back(i);
  ParamSpace s;
  const Config first = register_blocked_config(rows.front());
  for (const auto& [name, unused] : first.values()) {
    std::vector<int> values;
    for (int i : rows) values.push_back(register_blocked_config(i).get(name));
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    s.param(name, values);
  }
  s.param("splits", kSplitValues);
  std::vector<Config> instantiated;
  for (int i : rows)
    for (int v : kSplitValues) instantiated.push_back(with_splits(i, v));
  s.only(std::move(instantiated));
  s.constraint("threads <= max threads per block", [](const Config& c, const DeviceInfo& d, const Problem&) {
    return c.get("threads") <= max_threads_per_block(d);
  });
  return s;
}

int split_k_row(const Config& c) {
  if (!c.has("splits")) return -1;
  for (int i = 0; i < kRegisterBlockedConfigCount; ++i)
    if (split_k_offered(kRegisterBlockedConfigs[i]) && with_splits(i, c.get("splits")) == c) return i;
  return -1;
}

// Measured on the H200 (kiln tune gemm --shape 128x128x65536, 2026-11-22): 128 x 64 x 16 tiles
// with automatic slicing were the fastest (68.5 us; 64 x 64 x 8 100.6 us).  Operands that are not
// 16-byte aligned get the scalar-load 128 x 64 row.
Config split_k_default(const DeviceInfo&) { return with_splits(row_of(128, 64, 16, 4), 0); }

// n <= 32 (aligned): a 32-wide row, whose tile holds the whole of n without the padded half of a
// 64-wide one (the tuner's search starts from this default, so the row gets timed on skinny
// problems).  From m = 4096 on the 256 x 32 row: measured on the H200 (kiln tune, automatic
// slicing, tenth session) it beat 128 x 32 at 5000 x 24 x 2560 (44.6 against 47.5 us),
// 6144 x 16 x 6144 (86.5 / 108.2) and 7680 x 24 x 2560 (54.5 / 64.0), and tied it at
// 2560 x 32 x 2560 (30.5 / 30.3).
Config split_k_default_for(const DeviceInfo&, const Problem& p) {
  if (p.align_bytes < 16) return with_splits(row_of(128, 64, 8, 1), 0);
  if (p.dims[1] > 32) return with_splits(row_of(128, 64, 16, 4), 0);
  return with_splits(p.dims[0] >= kSplitKTallSkinnyM ? row_of(256, 32, 16, 4) : row_of(128, 32, 16, 4), 0);
}

}  // namespace kiln::gemm

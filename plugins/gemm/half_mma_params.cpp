#include "half_mma_params.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "gemm_params.hpp"
#include "gemm_schema.hpp"
#include "half_mma_configs.hpp"

namespace kiln::gemm {

Config half_mma_config(int index) {
  const HalfMmaConfig& r = kHalfMmaConfigs[index];
  return {{"BM", r.bm}, {"BN", r.bn}, {"BK", r.bk}, {"WM", r.wm}, {"WN", r.wn}, {"threads", r.threads},
          {"stages", r.stages}};
}

int half_mma_index(const Config& c) {
  for (int i = 0; i < kHalfMmaConfigCount; ++i)
    if (half_mma_config(i) == c) return i;
  return -1;
}

ParamSpace half_mma_space() {
  std::vector<int> bm, bn, bk, wm, wn, threads, stages;
  auto add = [](std::vector<int>& v, int x) {
    for (int y : v)
      if (y == x) return;
    v.push_back(x);
  };
  for (const HalfMmaConfig& r : kHalfMmaConfigs) {
    add(bm, r.bm), add(bn, r.bn), add(bk, r.bk), add(wm, r.wm), add(wn, r.wn), add(threads, r.threads);
    add(stages, r.stages);
  }
  ParamSpace s;
  s.param("BM", bm).param("BN", bn).param("BK", bk).param("WM", wm).param("WN", wn).param("threads", threads)
      .param("stages", stages);
  std::vector<Config> rows;
  for (int i = 0; i < kHalfMmaConfigCount; ++i) rows.push_back(half_mma_config(i));
  s.only(std::move(rows));
  s.constraint("shared memory <= opt-in per-block limit", [](const Config& c, const DeviceInfo& d, const Problem& p) {
    const int i = half_mma_index(c);
    const bool b_col = p.n_dims > kDimTb && p.dims[kDimTb] == 1;
    return i >= 0 && half_mma_smem_bytes(kHalfMmaConfigs[i], b_col) <= smem_per_block_optin(d);
  });
  return s;
}

Config half_mma_default(const DeviceInfo&) { return half_mma_config(kHalfMmaDefault); }

Config half_mma_default_for(const DeviceInfo& d, const Problem& p) {
  const int sms = d.sm_count > 0 ? d.sm_count : 1;
  auto tiles = [&](int bm, int bn) {
    return ((p.dims[kDimM] + bm - 1) / bm) * ((p.dims[kDimN] + bn - 1) / bn) * std::max<std::int64_t>(1, p.dims[kDimBatch]);
  };
  if (tiles(128, 128) >= sms) return half_mma_config(1);  // measured fastest at 4096^3 (half_mma_configs.hpp)
  return half_mma_config(2);
}

}  // namespace kiln::gemm

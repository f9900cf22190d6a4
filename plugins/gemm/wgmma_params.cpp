#include "wgmma_params.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "gemm_params.hpp"
#include "gemm_schema.hpp"
#include "wgmma_configs.hpp"

namespace kiln::gemm {

Config wgmma_config(int index) {
  const WgmmaConfig& r = kWgmmaConfigs[index];
  return {{"BM", r.bm}, {"BN", r.bn}, {"BK", r.bk}, {"stages", r.stages}, {"consumers", r.consumers},
          {"pingpong", r.pingpong}, {"cluster", r.cluster}, {"group", r.group}};
}

int wgmma_index(const Config& c) {
  for (int i = 0; i < kWgmmaConfigCount; ++i)
    if (wgmma_config(i) == c) return i;
  return -1;
}

ParamSpace wgmma_space() {
  std::vector<int> bm, bn, bk, stages, consumers, pingpong, cluster, group;
  auto add = [](std::vector<int>& v, int x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  for (const WgmmaConfig& r : kWgmmaConfigs) {
    add(bm, r.bm), add(bn, r.bn), add(bk, r.bk), add(stages, r.stages), add(consumers, r.consumers), add(pingpong, r.pingpong), add(cluster, r.cluster);
    add(group, r.group);
  }
  ParamSpace s;
  s.param("BM", bm).param("BN", bn).param("BK", bk).param("stages", stages).param("consumers", consumers)
      .param("pingpong", pingpong).param("cluster", cluster).param("group", group);
  std::vector<Config> rows;
  for (int i = 0; i < kWgmmaConfigCount; ++i) rows.push_back(wgmma_config(i));
  s.only(std::move(rows));
  s.constraint("f32 problems: the rows built for TF32 (kWgmmaTf32Rows) or, with allow_tf32 = 2, for 3xTF32 "
               "(kWgmma3xTf32Rows)",
               [](const Config& c, const DeviceInfo&, const Problem& p) {
                 // (a default Problem, n_dims = 0, stands for no problem at all: every row)
                 if (p.dtype != DType::f32 || p.n_dims <= kDimTf32) return true;
                 return p.dims[kDimTf32] == 2 ? wgmma_3xtf32_row(wgmma_index(c)) : wgmma_tf32_row(wgmma_index(c));
               });
  s.constraint("a column-major A or a row-major B: the rows built for them (kWgmmaMnRows; 3xTF32 packs its "
               "operands K-major, so any of its rows)",
               [](const Config& c, const DeviceInfo&, const Problem& p) {
                 if (p.dtype == DType::f32 && p.n_dims > kDimTf32 && p.dims[kDimTf32] == 2) return true;
                 const bool mn = p.n_dims > kDimTb && (p.dims[kDimTa] == 1 || p.dims[kDimTb] == 0);
                 return !mn || wgmma_mn_row(wgmma_index(c));
               });
  s.constraint("shared memory <= opt-in per-block limit", [](const Config& c, const DeviceInfo& d, const Problem&) {
    const int i = wgmma_index(c);
    return i >= 0 && wgmma_smem_bytes(kWgmmaConfigs[i]) <= smem_per_block_optin(d);
  });
  return s;
}

Config wgmma_default(const DeviceInfo&) { return wgmma_config(kWgmmaDefault); }

Config wgmma_default_for(const DeviceInfo& d, const Problem& p) {
  const int sms = d.sm_count > 0 ? d.sm_count : 1;
  const std::int64_t tiles = ((p.dims[kDimM] + 127) / 128) * ((p.dims[kDimN] + 255) / 256) *
                             std::max<std::int64_t>(1, p.dims[kDimBatch]);
  return wgmma_config(tiles >= sms ? kWgmmaDefault : 1);
}

}  // namespace kiln::gemm

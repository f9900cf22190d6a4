#include "gemm_params.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "register_blocked_configs.hpp"
#include "tf32_mma_configs.hpp"

namespace kiln::gemm {
namespace {

// The distinct values of one column of a config table, ascending.
template <class Row, std::size_t N, class Get>
std::vector<int> column(const Row (&rows)[N], Get get) {
  std::vector<int> v;
  for (const Row& r : rows) v.push_back(get(r));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

bool threads_fit(int threads, const DeviceInfo& d) { return threads <= max_threads_per_block(d); }

}  // namespace

int max_threads_per_block(const DeviceInfo& d) { return d.max_threads_per_block > 0 ? d.max_threads_per_block : 1024; }
int smem_per_block(const DeviceInfo& d) {
  return d.smem_per_block > 0 ? static_cast<int>(d.smem_per_block) : 48 * 1024;
}
int smem_per_block_optin(const DeviceInfo& d) {
  return d.smem_per_block_optin > 0 ? static_cast<int>(d.smem_per_block_optin) : smem_per_block(d);
}

// ---- naive -------------------------------------------------------------------------------------

ParamSpace naive_space() {
  ParamSpace s;
  s.param("block_x", {8, 16, 32, 64, 128}).param("block_y", {1, 2, 4, 8, 16, 32});
  s.constraint("block_x * block_y >= 32 (whole warps)",
               [](const Config& c, const DeviceInfo&, const Problem&) { return c.get("block_x") * c.get("block_y") >= 32; });
  s.constraint("block_x * block_y <= max threads per block", [](const Config& c, const DeviceInfo& d, const Problem&) {
    return threads_fit(c.get("block_x") * c.get("block_y"), d);
  });
  return s;
}
// Unmeasured until tuned: 32 threads along n make each warp read B and write C coalesced.
Config naive_default(const DeviceInfo&) { return {{"block_x", 32}, {"block_y", 8}}; }

// ---- row per block -----------------------------------------------------------------------------

ParamSpace row_per_block_space() {
  ParamSpace s;
  s.param("block", {64, 128, 256, 512, 1024});
  s.constraint("block <= max threads per block",
               [](const Config& c, const DeviceInfo& d, const Problem&) { return threads_fit(c.get("block"), d); });
  return s;
}
Config row_per_block_default(const DeviceInfo&) { return {{"block", 256}}; }  // unmeasured until tuned

// ---- tiled -------------------------------------------------------------------------------------

namespace {
ParamSpace tile_space(std::vector<int> tiles) {
  ParamSpace s;
  s.param("tile", std::move(tiles));
  s.constraint("tile * tile <= max threads per block", [](const Config& c, const DeviceInfo& d, const Problem&) {
    return threads_fit(c.get("tile") * c.get("tile"), d);
  });
  return s;
}
}  // namespace

ParamSpace tiled_space() { return tile_space({8, 16, 32}); }
// The seeds measured tile 32 slightly ahead of 16 on the H200 (8.8 vs 8.1 TFLOP/s at 4096^3).
Config tiled_default(const DeviceInfo&) { return {{"tile", 32}}; }
ParamSpace tiled_coalesced_space() { return tile_space({16, 32}); }
Config tiled_coalesced_default(const DeviceInfo&) { return {{"tile", 32}}; }  // unmeasured until tuned
ParamSpace tiled_kahan_space() { return tile_space({16, 32}); }
Config tiled_kahan_default(const DeviceInfo&) { return {{"tile", 32}}; }  // unmeasured until tuned

// ---- register blocked --------------------------------------------------------------------------

Config register_blocked_config(int index) {
  const RegisterBlockedConfig& r = kRegisterBlockedConfigs[index];
  return {{"BM", r.bm}, {"BN", r.bn}, {"BK", r.bk}, {"TM", r.tm}, {"TN", r.tn},
          {"threads", r.threads}, {"vec", r.vec}, {"stages", r.stages}, {"cp_async", r.cp_async}};
}

int register_blocked_index(const Config& c) {
  for (int i = 0; i < kRegisterBlockedConfigCount; ++i)
    if (register_blocked_config(i) == c) return i;
  return -1;
}

ParamSpace register_blocked_space() {
  using R = RegisterBlockedConfig;
  const auto& t = kRegisterBlockedConfigs;
  ParamSpace s;
  s.param("BM", column(t, [](const R& r) { return r.bm; }))
      .param("BN", column(t, [](const R& r) { return r.bn; }))
      .param("BK", column(t, [](const R& r) { return r.bk; }))
      .param("TM", column(t, [](const R& r) { return r.tm; }))
      .param("TN", column(t, [](const R& r) { return r.tn; }))
      .param("threads", column(t, [](const R& r) { return r.threads; }))
      .param("vec", column(t, [](const R& r) { return r.vec; }))
      .param("stages", column(t, [](const R& r) { return r.stages; }))
      .param("cp_async", column(t, [](const R& r) { return r.cp_async; }));
  std::vector<Config> rows;
  for (int i = 0; i < kRegisterBlockedConfigCount; ++i) rows.push_back(register_blocked_config(i));
  s.only(std::move(rows));
  s.constraint("threads <= max threads per block",
               [](const Config& c, const DeviceInfo& d, const Problem&) { return threads_fit(c.get("threads"), d); });
  // cp_async rows use dynamic shared memory and opt in above 48 KiB; the others are static.
  s.constraint("shared memory <= per-block limit (opt-in limit for cp_async)",
               [](const Config& c, const DeviceInfo& d, const Problem&) {
                 const RegisterBlockedConfig r{c.get("BM"),      c.get("BN"),  c.get("BK"),     c.get("TM"),
                                               c.get("TN"),      c.get("threads"), c.get("vec"), c.get("stages"),
                                               c.get("cp_async")};
                 return register_blocked_smem_bytes(r) <= (r.cp_async ? smem_per_block_optin(d) : smem_per_block(d));
               });
  return s;
}

// Measured on the H200 (test_gemm_gpu "[perf]", 4096^3, 2026-11-21): 128x256x8 with 8x8 per
// thread and 512 threads was the fastest row (42.85 TFLOP/s; 128x128x8 41.96).  Elsewhere the same
// pick, unmeasured.  It needs 16-byte aligned operands; dispatch uses register_blocked_default_for,
// which adapts it to the problem.
Config register_blocked_default(const DeviceInfo&) { return register_blocked_config(kRegisterBlockedDefault); }

namespace {
// The row of kRegisterBlockedConfigs with these fields (the list is data; look rows up by value).
int rb_row(int bm, int bn, int bk, int tm, int tn, int vec) {
  for (int i = 0; i < kRegisterBlockedConfigCount; ++i) {
    const RegisterBlockedConfig& r = kRegisterBlockedConfigs[i];
    if (r.bm == bm && r.bn == bn && r.bk == bk && r.tm == tm && r.tn == tn && r.vec == vec) return i;
  }
  return kRegisterBlockedDefault;
}
std::int64_t tiles(const Problem& p, int bm, int bn) {
  return ((p.dims[0] + bm - 1) / bm) * ((p.dims[1] + bn - 1) / bn);
}
std::int64_t sms(const DeviceInfo& d) { return d.sm_count > 0 ? d.sm_count : 132; }
}  // namespace

// Two 256-thread blocks (or one 512-thread block) fit an SM, so a tile shape is worth its reuse only
// while it still gives about two waves of blocks; below that, smaller tiles keep the SMs busy.
// The large-tile picks are the fastest rows measured at 4096^3 on the H200 (2026-11-21: 128x256x8
// 42.85, 128x128x8 41.96, 128x64x16 38.49 vs 128x64x8 32.89 TFLOP/s; unaligned: the cp.async
// 128x128x16 vec=1 row 33.07 vs 27.68 for 128x64x8 vec=1); the small-problem rules are unmeasured.
Config register_blocked_default_for(const DeviceInfo& d, const Problem& p) {
  if (p.align_bytes < 16) {
    if (d.cc_major >= 8 && tiles(p, 128, 128) >= 2 * sms(d)) return register_blocked_config(rb_row(128, 128, 16, 8, 8, 1));
    return register_blocked_config(tiles(p, 128, 64) >= 2 * sms(d) ? rb_row(128, 64, 8, 8, 4, 1)
                                                                    : rb_row(64, 64, 8, 4, 4, 1));
  }
  if (tiles(p, 128, 256) >= 2 * sms(d)) return register_blocked_config(kRegisterBlockedDefault);
  if (tiles(p, 128, 128) >= 2 * sms(d)) return register_blocked_config(rb_row(128, 128, 8, 8, 8, 4));
  if (tiles(p, 128, 64) >= 2 * sms(d))
    return register_blocked_config(p.dims[0] >= p.dims[1] ? rb_row(128, 64, 16, 8, 4, 4) : rb_row(64, 128, 8, 4, 8, 4));
  if (tiles(p, 64, 64) >= sms(d)) return register_blocked_config(rb_row(64, 64, 8, 8, 4, 4));
  return register_blocked_config(rb_row(32, 64, 8, 4, 4, 4));
}

// ---- TF32 mma ----------------------------------------------------------------------------------

Config tf32_mma_config(int index) {
  const Tf32MmaConfig& r = kTf32MmaConfigs[index];
  return {{"BM", r.bm}, {"BN", r.bn}, {"BK", r.bk}, {"WM", r.wm}, {"WN", r.wn}, {"threads", r.threads},
          {"stages", r.stages}};
}

int tf32_mma_index(const Config& c) {
  for (int i = 0; i < kTf32MmaConfigCount; ++i)
    if (tf32_mma_config(i) == c) return i;
  return -1;
}

ParamSpace tf32_mma_space() {
  using R = Tf32MmaConfig;
  const auto& t = kTf32MmaConfigs;
  ParamSpace s;
  s.param("BM", column(t, [](const R& r) { return r.bm; }))
      .param("BN", column(t, [](const R& r) { return r.bn; }))
      .param("BK", column(t, [](const R& r) { return r.bk; }))
      .param("WM", column(t, [](const R& r) { return r.wm; }))
      .param("WN", column(t, [](const R& r) { return r.wn; }))
      .param("threads", column(t, [](const R& r) { return r.threads; }))
      .param("stages", column(t, [](const R& r) { return r.stages; }));
  std::vector<Config> rows;
  for (int i = 0; i < kTf32MmaConfigCount; ++i) rows.push_back(tf32_mma_config(i));
  s.only(std::move(rows));
  s.constraint("threads <= max threads per block",
               [](const Config& c, const DeviceInfo& d, const Problem&) { return threads_fit(c.get("threads"), d); });
  s.constraint("shared memory <= opt-in per-block limit", [](const Config& c, const DeviceInfo& d, const Problem&) {
    const Tf32MmaConfig r{c.get("BM"), c.get("BN"), c.get("BK"), c.get("WM"), c.get("WN"), c.get("threads"),
                          c.get("stages")};
    return tf32_mma_smem_bytes(r) <= smem_per_block_optin(d);
  });
  return s;
}

// Measured on the H200 (test_gemm_gpu "[perf]", 4096^3, 2026-11-21): 128x256x32 with 64x64 warp
// tiles was the fastest row for both TF32 (140.6 TFLOP/s) and 3xTF32 (README, "Measured").
// Elsewhere the same pick, unmeasured.
Config tf32_mma_default(const DeviceInfo&) { return tf32_mma_config(kTf32MmaDefault); }

namespace {
int tf_row(int bm, int bn, int wm, int wn) {
  for (int i = 0; i < kTf32MmaConfigCount; ++i) {
    const Tf32MmaConfig& r = kTf32MmaConfigs[i];
    if (r.bm == bm && r.bn == bn && r.bk == 32 && r.wm == wm && r.wn == wn) return i;
  }
  return kTf32MmaDefault;
}
}  // namespace

// Large tiles while they give every SM a block (128x256, then 128x128 with 64x64 warp tiles, the
// two fastest rows at 4096^3), else 64 x 64 (the size rule is unmeasured).
Config tf32_mma_default_for(const DeviceInfo& d, const Problem& p) {
  if (tiles(p, 128, 256) >= sms(d)) return tf32_mma_config(kTf32MmaDefault);
  if (tiles(p, 128, 128) >= sms(d)) return tf32_mma_config(tf_row(128, 128, 64, 64));
  return tf32_mma_config(tf_row(64, 64, 32, 32));
}

}  // namespace kiln::gemm

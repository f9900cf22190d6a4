#include "wgmma_params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "gemm_params.hpp"
#include "gemm_schema.hpp"
#include "wgmma_configs.hpp"
#include "wgmma_split_k.hpp"

namespace kiln::gemm {

Config wgmma_config(int index) {
  const WgmmaConfig& r = kWgmmaConfigs[index];
  return {{"BM", r.bm}, {"BN", r.bn}, {"BK", r.bk}, {"stages", r.stages}, {"consumers", r.consumers},
          {"pingpong", r.pingpong}, {"cluster", r.cluster}, {"group", r.group}, {"splits", r.splits},
          {"swap", r.swap}};
}

int wgmma_index(const Config& c) {
  // A config written before `splits` (`swap`) existed (a database entry) names an unsplit
  // (unswapped) row.
  Config full = c;
  if (!full.has("splits")) full.set("splits", 1);
  if (!full.has("swap")) full.set("swap", 0);
  for (int i = 0; i < kWgmmaConfigCount; ++i)
    if (wgmma_config(i) == full) return i;
  return -1;
}

bool wgmma_split_useful(const DeviceInfo& d, const Problem& p, int index) {
  if (index < 0) return false;
  const WgmmaConfig& r = kWgmmaConfigs[index];
  if (r.splits == 1 || p.n_dims <= kDimBatch) return true;
  const std::int64_t tiles = ((p.dims[kDimM] + r.bm - 1) / r.bm) * ((p.dims[kDimN] + r.bn - 1) / r.bn) *
                             std::max<std::int64_t>(1, p.dims[kDimBatch]);
  return tiles < 2 * std::max(1, d.sm_count);
}

ParamSpace wgmma_space() {
  std::vector<int> bm, bn, bk, stages, consumers, pingpong, cluster, group, splits, swap;
  auto add = [](std::vector<int>& v, int x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  for (const WgmmaConfig& r : kWgmmaConfigs) {
    add(bm, r.bm), add(bn, r.bn), add(bk, r.bk), add(stages, r.stages), add(consumers, r.consumers), add(pingpong, r.pingpong), add(cluster, r.cluster);
    add(group, r.group);
    add(splits, r.splits);
    add(swap, r.swap);
  }
  ParamSpace s;
  s.param("BM", bm).param("BN", bn).param("BK", bk).param("stages", stages).param("consumers", consumers)
      .param("pingpong", pingpong).param("cluster", cluster).param("group", group).param("splits", splits)
      .param("swap", swap);
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
                 if (p.n_dims <= kDimTb) return true;
                 const int i = wgmma_index(c);
                 return i >= 0 && wgmma_layout_row(i, p.dims[kDimTa] == 1, p.dims[kDimTb] == 0);
               });
  s.constraint("split k (splits > 1) only while the unsplit tiles fill less than two waves of the SMs, not 3xTF32",
               [](const Config& c, const DeviceInfo& d, const Problem& p) {
                 const int i = wgmma_index(c);
                 if (i >= 0 && kWgmmaConfigs[i].splits > 1 && p.dtype == DType::f32 && p.n_dims > kDimTf32 &&
                     p.dims[kDimTf32] == 2)
                   return false;
                 return wgmma_split_useful(d, p, i);
               });
  s.constraint("the swapped small-m rows (swap = 1) only for m <= 256 (past that each X tile re-reads all of W)",
               [](const Config& c, const DeviceInfo&, const Problem& p) {
                 const int i = wgmma_index(c);
                 return i < 0 || p.n_dims <= kDimM || wgmma_swap_fits(i, p.dims[kDimM]);
               });
  s.constraint("shared memory <= opt-in per-block limit", [](const Config& c, const DeviceInfo& d, const Problem&) {
    const int i = wgmma_index(c);
    return i >= 0 && wgmma_smem_bytes(kWgmmaConfigs[i]) <= smem_per_block_optin(d);
  });
  return s;
}

Config wgmma_default(const DeviceInfo&) { return wgmma_config(kWgmmaDefault); }

// The 128 x 192 row's rate per tile flop relative to row 0 (128 x 256), the median over the
// design and square shapes of the H200 timings (eighth session, kiln tune, every row: 0.85-1.01;
// 128 x 128, row 1, measured 0.80-0.91 on the same shapes).  With it the estimate picks 128 x 192
// where 128 x 128 needs a third wave that 128 x 192 does not (700 x 8192 x 4096, 1000 x 5120 x 5120,
// 1500 x 4096 x 14336 of the sweep, all held out, all faster measured); 0.93 would pick none of them.
constexpr double kWgmmaMidMSpeed = 0.94;
// Rows 33-35 (128 x 160, 128 x 224, 128 x 96; sixteenth session): the medians of the same
// measure over 28 mid-m shapes (m 256-1536, n 4096-14336, k 4096; H200, every row timed in one
// run): 0.91, 0.97 and 0.78 (a narrow tile reads more A per flop).  The same run put 128 x 192 at
// 0.97, 256 x 128 at 0.99 and 128 x 128 at 0.89; the figures above are kept (192 at 0.97 or
// 256 x 128 at 0.99 made the picks no faster on those shapes).
constexpr double kWgmma160Speed = 0.91, kWgmma224Speed = 0.97, kWgmma96Speed = 0.78;
// Row 36 (256 x 160): 0.94, its median over the same shapes in a second run (which gave the rows
// above within 0.01 of the first).
constexpr double kWgmma256x160Speed = 0.94;

double wgmma_estimate_us(const DeviceInfo& d, const Problem& p, int index) {
  const WgmmaConfig& r = kWgmmaConfigs[index];
  const double sms = d.sm_count > 0 ? d.sm_count : 1;
  const std::int64_t m = p.dims[kDimM], n = p.dims[kDimN], k = p.dims[kDimK];
  const std::int64_t batch = std::max<std::int64_t>(1, p.dims[kDimBatch]);
  const bool f32_in = p.dtype == DType::f32;
  const int k_block = f32_in ? 32 : 64;
  const std::int64_t tiles_m = (m + r.bm - 1) / r.bm, tiles_n = (n + r.bn - 1) / r.bn;
  const WgmmaSplitPlan plan = wgmma_split_plan(m, n, k, batch, r.splits, k_block);
  const double units = static_cast<double>(tiles_m * tiles_n * batch) * plan.splits;
  const double waves = std::ceil(units / sms);
  constexpr double kTensorFlops = 800e12, kDramBytes = 3.8e12, kL2Bytes = 5.0e12;
  if (r.swap) {
    // The swapped kernel (not persistent), fitted to its timings on the H200 (fifth session, every
    // swapped row on ten shapes with m = 1..128): a fixed 8 us (launch, pipeline fill, the timer)
    // plus W's bytes at the rate of the blocks streaming it, about 50 GB/s per block with 80 KiB
    // of W in flight (in proportion to that), up to the DRAM rate (about 3.9 TB/s reading W
    // K-major, 3.4 MN-major); each extra m tile re-reads W from L2 (about 12 TB/s).  A split adds 0.5 us
    // plus 0.5 per slice (the partials, the reduction launched as a programmatic dependent, and
    // more blocks than the SMs hold at once: 6 and 8 slices measured 2-4 us slower than 1-4).
    const double per_sm = std::max(1.0, std::floor(228.0 * 1024 / (wgmma_smem_bytes(r) + 1024)));
    const double blocks = std::min(units, sms * per_sm);
    const double w_in_flight = static_cast<double>(r.stages) * r.bn * 128;
    const bool w_mn = p.n_dims > kDimTb && p.dims[kDimTb] == 0;
    const double dram = w_mn ? 3.4e12 : 3.9e12;
    const double rate = std::min(dram, blocks * 50e9 * w_in_flight / 81920.0);  // bytes per s
    const double w_bytes = 2.0 * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
    const double l2_bytes = w_bytes * static_cast<double>(tiles_m);
    return 8.0 + std::max(w_bytes / rate, l2_bytes / (2.5 * kL2Bytes)) * 1e6 +
           (plan.splits > 1 ? 0.5 + 0.5 * plan.splits : 0.0);
  }
  // Per k block of one unit, the longer of: the tensor-core time (the row's measured speed
  // relative to row 0; a TF32 k block is half the k at half the rate, the same time), and the
  // time to stream the bytes no concurrent unit shares (a B tile is shared by up to `group` tile
  // rows, an A tile by the tile columns walked together) at the block's DRAM rate.  That rate is
  // bounded by the bytes the block keeps in flight (its stages; TMA fetches no rows past m) over
  // the DRAM latency, which grows with the load: fitted to the H200's small-m X * W^T timings
  // (fourth session), about 1.5 us with 16 of 132 SMs streaming and 5.7 us with all; and by the
  // SM's share of the DRAM bandwidth.
  const double speed = wgmma_kernel_row(index) == kWgmmaDefault ? 1.0
                       : r.consumers == 1                          ? 0.8
                       : r.bm == 64                                ? 0.87
                       : r.bn == 192                               ? kWgmmaMidMSpeed
                       : r.bm == 256 && r.bn == 160                ? kWgmma256x160Speed
                       : r.bn == 160                               ? kWgmma160Speed
                       : r.bn == 224                               ? kWgmma224Speed
                       : r.bn == 96                                ? kWgmma96Speed
                                                                   : 0.92;
  const double flops = 2.0 * r.bm * r.bn * 64;
  const double compute_us = flops / (kTensorFlops / sms) / speed * 1e6;
  const double a_rows = static_cast<double>(std::min<std::int64_t>(r.bm, m));
  const double bytes = 128.0 * (r.bn / static_cast<double>(std::min<std::int64_t>(tiles_m, r.group)) +
                                a_rows / static_cast<double>(std::min<std::int64_t>(tiles_n, 8)));
  const double in_flight = static_cast<double>(r.stages) * (r.bn + a_rows) * 128;
  const double active = std::min(units, sms);
  const double latency_us = 1.5 + 4.2 * active / sms;
  const double sm_rate = std::min(in_flight / latency_us, kDramBytes / 1e6 / active);  // bytes per us
  const double memory_us = bytes / sm_rate;
  const double per_unit_us = 0.5;  // pipeline fill and epilogue
  double us = waves * (plan.kb_per_split * std::max(compute_us, memory_us) + per_unit_us);
  if (plan.splits > 1) {  // the partials written and read back (mostly L2), C written, the second kernel
    // (about 4.4 us for a 1 x 4096 C under Nsight Compute, fourth session)
    const double c_bytes = (p.n_dims > kDimC16 && p.dims[kDimC16] == 1 && !f32_in) ? 2.0 : 4.0;
    us += (2.0 * static_cast<double>(plan.bytes) + static_cast<double>(m * n * batch) * c_bytes) / kL2Bytes * 1e6 + 5.0;
  }
  return us;
}

Config wgmma_default_for(const DeviceInfo& d, const Problem& p) {
  const int sms = d.sm_count > 0 ? d.sm_count : 1;
  const bool split3 = p.dtype == DType::f32 && p.n_dims > kDimTf32 && p.dims[kDimTf32] == 2;
  const std::int64_t tiles = ((p.dims[kDimM] + 127) / 128) * ((p.dims[kDimN] + 255) / 256) *
                             std::max<std::int64_t>(1, p.dims[kDimBatch]);
  const int plain = tiles >= sms ? kWgmmaDefault : 1;
  if (split3 || p.n_dims <= kDimTb) return wgmma_config(plain);
  // The rows without a cluster or a deeper raster (0-4, 13, 32) and the split rows, where built for
  // the problem's type and layout: the one the estimate says is fastest, by 2 % at least (ties:
  // the earlier row).
  const bool tf32 = p.dtype == DType::f32;
  const bool mn = p.dims[kDimTa] == 1 || p.dims[kDimTb] == 0;
  // Up to 16 rows of a row-major A (16-bit): the swapped rows with the narrowest X tile that
  // holds m, their slice count by their own estimate (fitted to their timings; the two models
  // are not compared).  On the H200 (fifth session) the best of them beat every unswapped row on
  // 5 of 6 shapes with m = 1 or 16 and came within 0.3 % of the model's unswapped pick on the
  // sixth; at 48 and 64 rows they were no faster, so larger m keeps the unswapped rows.
  constexpr std::int64_t kSwapDefaultMaxM = 16;
  if (!tf32 && p.dims[kDimTa] == 0 && p.dims[kDimM] <= kSwapDefaultMaxM) {
    int narrowest = 0;
    for (int i = 0; i < kWgmmaConfigCount; ++i)
      if (kWgmmaConfigs[i].swap && kWgmmaConfigs[i].bm >= p.dims[kDimM] &&
          (narrowest == 0 || kWgmmaConfigs[i].bm < narrowest))
        narrowest = kWgmmaConfigs[i].bm;
    int best_swap = -1;
    double best_swap_us = 0.0;
    for (int i = 0; i < kWgmmaConfigCount; ++i) {
      const WgmmaConfig& r = kWgmmaConfigs[i];
      if (!r.swap || r.bm != narrowest || (r.splits > 1 && !wgmma_split_useful(d, p, i))) continue;
      const WgmmaSplitPlan plan = wgmma_split_plan(p.dims[kDimM], p.dims[kDimN], p.dims[kDimK],
                                                   std::max<std::int64_t>(1, p.dims[kDimBatch]), r.splits, 64);
      if ((r.splits > 1 && plan.splits == 1) || plan.bytes > kWgmmaSplitMaxWorkspace) continue;
      const double us = wgmma_estimate_us(d, p, i);
      if (best_swap < 0 || us < best_swap_us * 0.98) {
        best_swap = i;
        best_swap_us = us;
      }
    }
    if (best_swap >= 0) return wgmma_config(best_swap);
  }
  int best = plain;
  double best_us = wgmma_estimate_us(d, p, plain);
  for (int i = 0; i < kWgmmaConfigCount; ++i) {
    const WgmmaConfig& r = kWgmmaConfigs[i];
    if (r.cluster != 1 || r.group != 8 || r.swap) continue;
    if ((tf32 && !wgmma_tf32_row(i)) || (mn && !wgmma_layout_row(i, p.dims[kDimTa] == 1, p.dims[kDimTb] == 0)))
      continue;
    if (r.splits > 1 && !wgmma_split_useful(d, p, i)) continue;
    const WgmmaSplitPlan plan = wgmma_split_plan(p.dims[kDimM], p.dims[kDimN], p.dims[kDimK],
                                                 std::max<std::int64_t>(1, p.dims[kDimBatch]), r.splits, tf32 ? 32 : 64);
    if ((r.splits > 1 && plan.splits == 1) || plan.bytes > kWgmmaSplitMaxWorkspace) continue;
    const double us = wgmma_estimate_us(d, p, i);
    if (us < best_us * 0.98) {  // a clear gain only: the estimate is rough
      best = i;
      best_us = us;
    }
  }
  return wgmma_config(best);
}

}  // namespace kiln::gemm

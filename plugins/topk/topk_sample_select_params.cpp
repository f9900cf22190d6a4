#include "topk_sample_select_params.hpp"

#include <algorithm>
#include <cmath>

namespace kiln::topk {
namespace {

std::int64_t pow2_at_least(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace

SamplePlan sample_plan(std::int64_t n, std::int64_t k, int element_bytes) {
  SamplePlan p;
  p.fallback_cap = radix_cap(2048, k);
  if (n <= kSampleMax) {
    p.samples = int(n);
    p.rank = int(k);
    p.cand_cap = std::max<std::int64_t>(n, p.fallback_cap);
    return p;
  }
  // Long rows take a larger sample: the candidates (about rank / p) shrink with p, and with them
  // the filter's appends and the select kernel's passes (1 x 2^26, k = 100: 32768 -> 8192).
  const int most = n >= kSampleLongRow ? kSampleMaxLong : kSampleMax;
  p.samples = int(std::clamp<std::int64_t>(n / kSampleDensity / kSampleRun * kSampleRun, kSampleMin, most));
  const double frac = double(p.samples) / double(n);
  const double kp = double(k) * frac;
  p.rank = int(std::min<double>(p.samples, std::ceil(kp + 4.0 * std::sqrt(kp)) + 3.0));
  const std::int64_t expected = std::int64_t(std::ceil(double(p.rank) / frac));
  std::int64_t want = pow2_at_least(8 * expected);
  if (element_bytes == 2) want = std::max(want, pow2_at_least(n / kSampleHalfTieShare));
  p.cand_cap = std::max<std::int64_t>(std::min<std::int64_t>(want, n), p.fallback_cap);
  return p;
}

ParamSpace sample_select_space() {
  ParamSpace s;
  s.param("block", {256, 512, 1024}).param("items_per_thread", {8, 16}).param("blocks", {1024, 2048, 4096});
  s.constraint("(block, items_per_thread) instantiated", [](const Config& c, const DeviceInfo&, const Problem&) {
    const int block = c.get("block"), items = c.get("items_per_thread");
    return std::any_of(std::begin(kSampleFilterTiles), std::end(kSampleFilterTiles),
                       [&](const TileShape& t) { return t.block == block && t.items == items; });
  });
  return s;
}

// Measured on an H200, 2026-11-24 (`kiln tune`, 10 runs, the first version of the variant):
// 1 x 2^26, k = 100: every filter tile and grid within 333..349 us (512 x 8, 2048: 334);
// 4096 x 32768, k = 32: 512 x 8 558 us, 1024 x 8 571, 256 x 16 624, 512 x 16 697.
Config sample_select_default(const DeviceInfo&) { return {{"block", 512}, {"items_per_thread", 8}, {"blocks", 2048}}; }

}  // namespace kiln::topk

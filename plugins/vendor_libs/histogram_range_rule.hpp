// The binning rule of histogram_range and how CUB's HistogramEven relates to it.
//
// The op contract (kiln ops): only lo <= x < hi counts (NaN never does);
//   scale = (float)bins / (hi - lo) in float;  b = (int)floorf((x - lo) * scale);  b = min(b, bins-1).
// CUB 3.0 HistogramEven with float samples and levels (cub/device/dispatch/dispatch_histogram.cuh,
// ScaleTransform): valid iff x >= lo && x < hi; reciprocal = (float)(levels-1) / (hi - lo);
// bin = (int)((x - lo) * reciprocal).  That is the contract's formula (x - lo >= 0, so truncation
// is floorf), with one difference: CUB has no min(b, bins-1).  When float rounding carries
// (x - lo) * scale up to `bins` for some x just below hi, CUB would index one bin past the end.
//
// Rounding is monotone, so the largest computed product over valid x is the one at the largest
// float below hi: cub_rule_matches() tests exactly that one value on the host, and when it fails
// histogram_range_cub feeds CUB the contract's own bin numbers (contract_bin as a float, levels
// 0..bins, where CUB's arithmetic is exact) instead of the raw samples.
//
//   cub_rule_matches(0.0f, 1.0f, 256) == true    // the op's default range: no clamp ever needed
//   cub_rule_matches(-1.0f, 1.0f, 256) == false  // (1 - 2^-24) + 1 rounds to 2: CUB would hit bin 256
#pragma once
#include <cmath>

#include "vendor_host_device.hpp"

namespace kiln::vendor {

// Bin scale of the contract, in float.
KILN_VENDOR_HD inline float histogram_scale(float lo, float hi, int bins) {
  return static_cast<float>(bins) / (hi - lo);
}

// The contract's bin of x, or -1 when x does not count.
KILN_VENDOR_HD inline int contract_bin(float x, float lo, float hi, float scale, int bins) {
  if (!(x >= lo && x < hi)) return -1;  // also NaN
  const int b = static_cast<int>(floorf((x - lo) * scale));
  return b < bins - 1 ? b : bins - 1;
}

// Whether CUB's HistogramEven over [lo, hi) with bins + 1 levels gives the contract's bins for
// every float x (host only: needs std::nextafter).  Requires finite lo < hi; false otherwise.
inline bool cub_rule_matches(float lo, float hi, int bins) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi) || bins < 1) return false;
  const float scale = histogram_scale(lo, hi, bins);
  if (!std::isfinite(scale)) return false;
  const float last = std::nextafter(hi, lo);  // the largest float below hi
  if (last < lo) return true;  // no valid sample at all
  const float product = (last - lo) * scale;
  return product < static_cast<float>(bins);
}

}  // namespace kiln::vendor

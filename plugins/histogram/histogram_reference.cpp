#include "histogram_reference.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace kiln::histogram {

Status range_params_of(const Args& args, std::int64_t bins, RangeParams& out) {
  const double lo = args.scalar_count() > 0 ? args.scalar(0) : 0.0;
  const double hi = args.scalar_count() > 1 ? args.scalar(1) : 1.0;
  if (const char* why = range_params_error(lo, hi, bins)) {
    // scalar_text: std::to_string printed 1e300 as 301 digits and 1e-9 as 0.000000.
    return Status::fail(ErrorKind::argument, "histogram_range: " + std::string(why) + ", got lo = " + scalar_text(lo) +
                                                 ", hi = " + scalar_text(hi) + ", bins = " + std::to_string(bins));
  }
  make_range_params(lo, hi, bins, out);
  return Status::success();
}

Status histogram_reference(const Args& args, const Problem& p) {
  (void)p;
  const TensorRef& data = args.tensor(0);
  const TensorRef& bins = args.tensor(1);
  std::uint32_t* out = bins.as<std::uint32_t>();
  std::fill(out, out + kByteBins, 0u);
  const auto* x = data.as<const std::uint8_t>();
  const std::int64_t n = data.numel();
  for (std::int64_t i = 0; i < n; ++i) ++out[x[i]];
  return Status::success();
}

Status histogram_range_reference(const Args& args, const Problem& p) {
  (void)p;
  const TensorRef& data = args.tensor(0);
  const TensorRef& bins = args.tensor(1);
  RangeParams r;
  Status st = range_params_of(args, bins.numel(), r);
  if (!st.ok()) return st;
  std::uint32_t* out = bins.as<std::uint32_t>();
  std::fill(out, out + bins.numel(), 0u);
  const auto* x = data.as<const float>();
  const std::int64_t n = data.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    const int b = range_bin(x[i], r);
    if (b >= 0) ++out[b];
  }
  return Status::success();
}

}  // namespace kiln::histogram

// histogram_cub and histogram_range_cub: cub::DeviceHistogram::HistogramEven.
//   histogram_cub        u8 samples, 257 levels 0..256 -> 256 u32 counts (bin = the byte);
//   histogram_range_cub  f32 samples, bins + 1 levels lo..hi -> bins u32 counts, exactly the op's
//                        float rule (see histogram_range_rule.hpp for where CUB's rule differs
//                        and how that case is handled).
// CUB overwrites the counts (it zeroes them itself), and its temporary storage is sized by its
// own query in workspace_bytes().
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_histogram.cuh>

#include <cmath>
#include <cstdint>
#include <string>

#include "cuda_support.hpp"
#include "histogram_range_rule.hpp"
#include "vendor_variant.hpp"
#include "vendor_variants.hpp"

namespace kiln::vendor {
namespace {

// CUB called with int sample counts (32-bit offsets).
cudaError_t cub_histogram_u8(void* temp, std::size_t& temp_bytes, const void* data, void* counts, int n,
                             cudaStream_t stream) {
  return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, static_cast<const std::uint8_t*>(data),
                                             static_cast<unsigned int*>(counts), 257, 0, 256, n, stream);
}

// Raw f32 samples over [lo, hi): CUB's rule, which is the contract's whenever cub_rule_matches().
cudaError_t cub_histogram_f32(void* temp, std::size_t& temp_bytes, const float* data, unsigned int* counts, int bins,
                              float lo, float hi, int n, cudaStream_t stream) {
  return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, data, counts, bins + 1, lo, hi, n, stream);
}

// The contract's bin number of a sample as a float (-1 when it does not count).
struct ContractBinOf {
  float lo = 0.0f, hi = 1.0f, scale = 1.0f;
  int bins = 1;
  KILN_VENDOR_HD float operator()(float x) const { return static_cast<float>(contract_bin(x, lo, hi, scale, bins)); }
};
using ContractBins = thrust::transform_iterator<ContractBinOf, const float*, float>;

// Bin numbers over levels 0..bins: CUB's scale is bins / bins = 1 and (b - 0) * 1 == b exactly
// for b < 2^24, so CUB counts bin b for b in [0, bins) and drops the -1s: the contract exactly.
cudaError_t cub_histogram_contract(void* temp, std::size_t& temp_bytes, const float* data, unsigned int* counts,
                                   int bins, float lo, float hi, int n, cudaStream_t stream) {
  const ContractBinOf op{lo, hi, histogram_scale(lo, hi, bins), bins};
  return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, ContractBins(data, op), counts, bins + 1, 0.0f,
                                             static_cast<float>(bins), n, stream);
}

// Runs `call` with a null temp pointer (the size query) and then for real; `call(temp, bytes)`.
template <class Call>
Status run_cub(const char* variant, void* workspace, Call call) {
  std::size_t temp_bytes = 0;
  if (Status s = cuda_status(call(nullptr, temp_bytes), variant, "CUB size query"); !s.ok()) return s;
  // A null temp pointer would turn the call into another size query and compute nothing.
  if (workspace == nullptr)
    return Status::fail(ErrorKind::internal, std::string(variant) + ": no workspace (needs " +
                                                 std::to_string(temp_bytes) + " bytes, see workspace_bytes)");
  if (Status s = cuda_status(call(workspace, temp_bytes), variant, "cub::DeviceHistogram::HistogramEven"); !s.ok())
    return s;
  return launch_status(variant);
}

// The size query of `call` on the problem's device; 0 when it fails (launch reports the error).
template <class Call>
std::size_t query_bytes(const Problem& p, Call call) {
  ScopedDevice on(p.device.ordinal);  // CUB sizes its grid for the current device
  std::size_t bytes = 0;
  if (!on.ok() || call(bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return bytes;
}

class HistogramCub final : public VendorVariant {
 public:
  HistogramCub()
      : VendorVariant("histogram_cub", "histogram", {DType::u8},
                      "cub::DeviceHistogram::HistogramEven, 257 levels 0..256 over bytes") {}

  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    return int_limit("n", dim_or(p, "n", 0), "CUB called with int");
  }

  std::size_t workspace_bytes(const Problem& p, const Config&) const override {
    const std::int64_t n = dim_or(p, "n", 0);
    if (n <= 0 || !fits_int(n)) return 0;
    return query_bytes(p, [&](std::size_t& bytes) {
      return cub_histogram_u8(nullptr, bytes, nullptr, nullptr, static_cast<int>(n), nullptr);
    });
  }

  // args = {data[n] u8, bins[256] u32}.
  Status launch(const Args& args, const Problem& problem, const Config&, void* workspace,
                Stream stream) const override {
    const TensorRef& data = args.tensor(0);
    const TensorRef& counts = args.tensor(1);
    const std::int64_t n = data.numel();
    if (!fits_int(n)) return Status::fail(ErrorKind::unsupported, "histogram_cub: n exceeds 2^31-1");
    ScopedDevice on(problem.device.ordinal);
    if (Status s = device_status(on, "histogram_cub"); !s.ok()) return s;
    const auto cu_stream = static_cast<cudaStream_t>(stream.handle());
    if (n == 0)
      return cuda_status(cudaMemsetAsync(counts.data, 0, 256 * sizeof(unsigned int), cu_stream), "histogram_cub",
                         "cudaMemsetAsync");
    return run_cub("histogram_cub", workspace, [&](void* temp, std::size_t& bytes) {
      return cub_histogram_u8(temp, bytes, data.data, counts.data, static_cast<int>(n), cu_stream);
    });
  }
};

class HistogramRangeCub final : public VendorVariant {
 public:
  // Bin numbers travel as floats on the contract path: exact up to 2^24.
  static constexpr std::int64_t kMaxBins = std::int64_t{1} << 24;

  HistogramRangeCub()
      : VendorVariant("histogram_range_cub", "histogram_range", {DType::f32},
                      "cub::DeviceHistogram::HistogramEven, bins + 1 levels lo..hi over f32") {}

  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    if (Support s = int_limit("n", dim_or(p, "n", 0), "CUB called with int"); !s.ok) return s;
    const std::int64_t bins = dim_or(p, "bins", 0);
    if (bins < 1 || bins > kMaxBins)
      return Support::no("bins = " + std::to_string(bins) + " outside [1, 2^24] (bin numbers pass through float)");
    return Support::yes();
  }

  // Room for either path (CUB's storage depends on the sample iterator type).
  std::size_t workspace_bytes(const Problem& p, const Config&) const override {
    const std::int64_t n = dim_or(p, "n", 0);
    const std::int64_t bins = dim_or(p, "bins", 0);
    if (n <= 0 || !fits_int(n) || bins < 1 || bins > kMaxBins) return 0;
    const int ni = static_cast<int>(n), bi = static_cast<int>(bins);
    const std::size_t raw = query_bytes(p, [&](std::size_t& bytes) {
      return cub_histogram_f32(nullptr, bytes, nullptr, nullptr, bi, 0.0f, 1.0f, ni, nullptr);
    });
    const std::size_t contract = query_bytes(p, [&](std::size_t& bytes) {
      return cub_histogram_contract(nullptr, bytes, nullptr, nullptr, bi, 0.0f, 1.0f, ni, nullptr);
    });
    return raw > contract ? raw : contract;
  }

  // args = {data[n] f32, bins[nbins] u32; lo, hi}.
  Status launch(const Args& args, const Problem& problem, const Config&, void* workspace,
                Stream stream) const override {
    const TensorRef& data = args.tensor(0);
    const TensorRef& counts = args.tensor(1);
    const std::int64_t n = data.numel();
    const std::int64_t bins = counts.numel();
    const float lo = static_cast<float>(scalar_or(args, 0, 0.0));
    const float hi = static_cast<float>(scalar_or(args, 1, 1.0));
    if (!fits_int(n) || bins < 1 || bins > kMaxBins)
      return Status::fail(ErrorKind::unsupported, "histogram_range_cub: needs n <= 2^31-1 and 1 <= bins <= 2^24");
    if (!std::isfinite(lo) || !std::isfinite(hi))
      return Status::fail(ErrorKind::argument, "histogram_range_cub: lo and hi must be finite floats (got " +
                                                   std::to_string(lo) + ", " + std::to_string(hi) + ")");
    ScopedDevice on(problem.device.ordinal);
    if (Status s = device_status(on, "histogram_range_cub"); !s.ok()) return s;
    const auto cu_stream = static_cast<cudaStream_t>(stream.handle());
    const int ni = static_cast<int>(n), bi = static_cast<int>(bins);
    // No sample can count (empty input, or hi <= lo): all bins are zero.
    if (n == 0 || !(lo < hi))
      return cuda_status(
          cudaMemsetAsync(counts.data, 0, static_cast<std::size_t>(bins) * sizeof(unsigned int), cu_stream),
          "histogram_range_cub", "cudaMemsetAsync");
    const float* samples = data.as<const float>();
    auto* out = counts.as<unsigned int>();
    if (cub_rule_matches(lo, hi, bi))
      return run_cub("histogram_range_cub", workspace, [&](void* temp, std::size_t& bytes) {
        return cub_histogram_f32(temp, bytes, samples, out, bi, lo, hi, ni, cu_stream);
      });
    return run_cub("histogram_range_cub", workspace, [&](void* temp, std::size_t& bytes) {
      return cub_histogram_contract(temp, bytes, samples, out, bi, lo, hi, ni, cu_stream);
    });
  }
};

}  // namespace

std::shared_ptr<const Variant> make_histogram_cub() { return std::make_shared<HistogramCub>(); }
std::shared_ptr<const Variant> make_histogram_range_cub() { return std::make_shared<HistogramRangeCub>(); }

}  // namespace kiln::vendor

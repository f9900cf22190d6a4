// The vendor plugin without a GPU: what register_vendor adds (variants only, so alone they are
// orphans), and the two host-side rules its CUB variants rest on — the topk sort key and the
// histogram_range bin rule versus CUB's.
#include <kiln/kiln.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"
#include "histogram_range_rule.hpp"
#include "register_vendor.hpp"
#include "topk_sort_key.hpp"

using kiln_test::contains;

namespace {

// Variant -> op, as the op contracts name them.
const std::map<std::string, std::string> kVendorVariants = {
    {"gemm_cublas", "gemm"},
    {"gemm_cublas_tf32", "gemm"},
    {"gemm_cublaslt", "gemm"},
    {"gemv_cublas", "gemv"},
    {"dot_cublas", "dot"},
    {"transpose_cublas_geam", "transpose"},
    {"add_cublas_geam", "add"},
    {"add_cublaslt_transform", "add"},
    {"transpose_cublaslt_transform", "transpose"},
    {"reduce_sum_cub", "reduce_sum"},
    {"histogram_cub", "histogram"},
    {"histogram_range_cub", "histogram_range"},
    {"topk_cub_sort", "topk"},
};

float from_bits(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// The contract's order of topk, written directly: is element i better than element j?
// NaN above +inf (all NaNs equal), -0 == +0, then the smaller index.
bool contract_better(const std::vector<float>& x, int i, int j, bool largest) {
  const bool ni = std::isnan(x[i]), nj = std::isnan(x[j]);
  if (ni || nj) {
    if (ni && nj) return i < j;
    return largest ? ni : nj;  // NaN is the largest value
  }
  if (x[i] != x[j]) return largest ? x[i] > x[j] : x[i] < x[j];  // -0 == +0 here
  return i < j;
}

}  // namespace

TEST_CASE("register_vendor adds vendor variants only; alone they are orphans", "[vendor]") {
  kiln::Registry reg;
  REQUIRE(register_vendor(reg).ok());
  CHECK(reg.op_names().empty());  // the family plugins own the schemas

#if KILN_HAS_CUDA
  const std::vector<std::string> orphans = reg.orphan_variants();
  CHECK(orphans.size() == kVendorVariants.size());
  CHECK(reg.all_variants().size() == kVendorVariants.size());
  for (const auto& [name, op] : kVendorVariants) {
    INFO(name);
    const kiln::Variant* v = reg.find_variant(name);
    REQUIRE(v != nullptr);
    CHECK(v->op() == op);
    CHECK(v->desc().vendor);
    CHECK_FALSE(v->desc().reference);
    CHECK(v->device_kind() == kiln::DeviceKind::cuda);
    // gemm_cublas_tf32 ranks above gemm_cublas (the vendor fallback for tf32=1 problems is the
    // tensor-core path); gemm_cublaslt, tunable over cuBLASLt's heuristic results, just below.
    const int priority = name == "gemm_cublas_tf32" ? 36 : name == "gemm_cublaslt" ? 34 : 35;
    CHECK(v->priority() == priority);
    if (name == "gemm_cublaslt") {
      REQUIRE(v->space().params().size() == 1);
      CHECK(v->space().params()[0].name == "algo");
    } else {
      CHECK(v->space().empty());
      CHECK(v->default_config(kiln::DeviceInfo{}).empty());
    }
    CHECK_FALSE(v->desc().summary.empty());
    const bool listed = std::any_of(orphans.begin(), orphans.end(), [&](const std::string& o) {
      return contains(o, name) && contains(o, "'" + op + "'");
    });
    CHECK(listed);
  }
  CHECK(reg.find_variant("reduce_sum_cub")->dtypes() ==
        std::vector<kiln::DType>{kiln::f32, kiln::i32, kiln::f16, kiln::bf16});
  CHECK(reg.find_variant("dot_cublas")->dtypes() == std::vector<kiln::DType>{kiln::f32, kiln::f16, kiln::bf16});
  CHECK(reg.find_variant("gemv_cublas")->dtypes() == std::vector<kiln::DType>{kiln::f32, kiln::f16, kiln::bf16});
  CHECK(reg.find_variant("histogram_cub")->dtypes() == std::vector<kiln::DType>{kiln::u8});
  CHECK(reg.find_variant("add_cublas_geam")->dtypes() == std::vector<kiln::DType>{kiln::f32, kiln::f64});

  // A second registration clashes; it comes back as a Status, not an exception.
  kiln::Status again = register_vendor(reg);
  CHECK_FALSE(again.ok());
  CHECK(contains(again.message(), "gemm_cublas"));
#else
  // Host-only build: no cuBLAS, no CUB, nothing registered and nothing orphaned.
  CHECK(reg.all_variants().empty());
  CHECK(reg.orphan_variants().empty());
#endif
}

TEST_CASE("topk sort key: ascending key order is the contract's topk order", "[vendor][topk]") {
  using kiln::vendor::topk_key;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();

  SECTION("special values") {
    for (bool largest : {true, false}) {
      CAPTURE(largest);
      CHECK(topk_key(-0.0f, largest) == topk_key(0.0f, largest));
      CHECK(topk_key(nan, largest) == topk_key(-nan, largest));
      CHECK(topk_key(from_bits(0x7f800001u), largest) == topk_key(nan, largest));  // signalling NaN
      CHECK(topk_key(from_bits(0xffffffffu), largest) == topk_key(nan, largest));  // negative NaN
    }
    // largest: NaN first, then +inf, ..., -inf last; smallest: the reverse.
    const std::vector<float> order = {nan, inf, 3.0f, 1e-30f, 0.0f, -1e-45f, -2.0f, -inf};
    for (std::size_t i = 0; i + 1 < order.size(); ++i) {
      CAPTURE(order[i], order[i + 1]);
      CHECK(topk_key(order[i], true) < topk_key(order[i + 1], true));
      CHECK(topk_key(order[i], false) > topk_key(order[i + 1], false));
    }
  }

  SECTION("a stable sort by key equals the contract order, ties and NaN included") {
    const float pool[] = {nan, -nan, inf, -inf, 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 0.5f, from_bits(0x7fc01234u),
                          std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::max()};
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 50; ++trial) {
      const int n = 1 + static_cast<int>(rng() % 300);
      std::vector<float> x(n);
      for (float& v : x)
        v = (rng() % 3 == 0) ? std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng) : pool[rng() % std::size(pool)];
      for (bool largest : {true, false}) {
        std::vector<int> by_key(n), by_contract(n);
        std::iota(by_key.begin(), by_key.end(), 0);
        std::iota(by_contract.begin(), by_contract.end(), 0);
        std::stable_sort(by_key.begin(), by_key.end(),
                         [&](int i, int j) { return topk_key(x[i], largest) < topk_key(x[j], largest); });
        std::sort(by_contract.begin(), by_contract.end(),
                  [&](int i, int j) { return contract_better(x, i, j, largest); });
        CAPTURE(trial, n, largest);
        CHECK(by_key == by_contract);
      }
    }
  }
}

TEST_CASE("histogram_range: CUB's HistogramEven rule versus the contract", "[vendor][histogram_range]") {
  using kiln::vendor::contract_bin;
  using kiln::vendor::cub_rule_matches;
  using kiln::vendor::histogram_scale;

  SECTION("the default range [0, 1) never needs the contract's clamp") {
    int mismatches = 0;
    for (int bins = 1; bins <= (1 << 16); ++bins)
      if (!cub_rule_matches(0.0f, 1.0f, bins)) ++mismatches;
    CHECK(mismatches == 0);
  }

  SECTION("other ranges can: (x - lo) * scale rounds up to bins just below hi") {
    const float lo = -0.1f, hi = 2.0f;
    const int bins = 7;
    REQUIRE_FALSE(cub_rule_matches(lo, hi, bins));
    const float last = std::nextafter(hi, lo);
    const float scale = histogram_scale(lo, hi, bins);
    // CUB's unclamped formula lands one past the last bin; the contract clamps it.
    CHECK(static_cast<int>((last - lo) * scale) == bins);
    CHECK(contract_bin(last, lo, hi, scale, bins) == bins - 1);
    // A symmetric range needs it at every bin count: (1 - 2^-24) - (-1) rounds to 2.
    for (int b = 1; b <= 1000; ++b) CHECK_FALSE(cub_rule_matches(-1.0f, 1.0f, b));
  }

  SECTION("contract_bin: only lo <= x < hi counts") {
    const float lo = 0.0f, hi = 1.0f;
    const int bins = 10;
    const float scale = histogram_scale(lo, hi, bins);
    CHECK(contract_bin(lo, lo, hi, scale, bins) == 0);
    CHECK(contract_bin(0.25f, lo, hi, scale, bins) == 2);
    CHECK(contract_bin(std::nextafter(hi, lo), lo, hi, scale, bins) == bins - 1);
    CHECK(contract_bin(hi, lo, hi, scale, bins) == -1);
    CHECK(contract_bin(-1e-9f, lo, hi, scale, bins) == -1);
    CHECK(contract_bin(std::numeric_limits<float>::quiet_NaN(), lo, hi, scale, bins) == -1);
  }

  SECTION("ranges the op rejects are never called matching") {
    CHECK_FALSE(cub_rule_matches(1.0f, 1.0f, 4));
    CHECK_FALSE(cub_rule_matches(2.0f, 1.0f, 4));
    CHECK_FALSE(cub_rule_matches(0.0f, std::numeric_limits<float>::infinity(), 4));
  }
}

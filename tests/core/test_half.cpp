// The host f16 / bf16 conversions against bit patterns the CUDA toolkit's __float2half_rn,
// __float2bfloat16_rn, __half2float and __bfloat162float produce (IEEE 754 binary16 and the
// bfloat16 truncated-binary32 format, round to nearest even).
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include "catch.hpp"
#include "test_util.hpp"

namespace {

float from_bits(std::uint32_t u) { return kiln::float_from_bits(u); }

}  // namespace

TEST_CASE("float to f16 rounds to nearest even, bit for bit", "[half]") {
  struct Case {
    float in;
    std::uint16_t out;
  };
  const Case cases[] = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {0.5f, 0x3800},
      {1.0f / 3.0f, 0x3555},
      {65504.0f, 0x7bff},                              // largest finite
      {65519.0f, 0x7bff},                              // below the halfway point to 65536
      {65520.0f, 0x7c00},                              // halfway: ties to even = infinity
      {1e10f, 0x7c00},
      {-1e10f, 0xfc00},
      {std::ldexp(1.0f, -14), 0x0400},                 // smallest normal
      {std::ldexp(1.0f, -24), 0x0001},                 // smallest subnormal
      {std::ldexp(1.0f, -25), 0x0000},                 // half of it: tie to even (0)
      {std::ldexp(1.5f, -25), 0x0001},                 // above the tie
      {std::ldexp(3.0f, -25), 0x0002},                 // 1.5 ulp subnormal: tie to even (2)
      {std::ldexp(5.0f, -25), 0x0002},                 // 2.5 ulp: tie to even (2)
      {std::ldexp(1023.0f, -24), 0x03ff},              // largest subnormal
      {1.0f + std::ldexp(1.0f, -11), 0x3c00},          // tie between 1 and 1+2^-10: even (1)
      {1.0f + std::ldexp(3.0f, -11), 0x3c02},          // tie: even (1+2^-9)
      {1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20), 0x3c01},  // just above the tie
      {std::numeric_limits<float>::infinity(), 0x7c00},
      {-std::numeric_limits<float>::infinity(), 0xfc00},
      {std::numeric_limits<float>::denorm_min(), 0x0000},
  };
  for (const Case& c : cases) {
    INFO("input " << c.in);
    CHECK(kiln::float_to_f16(c.in) == c.out);
  }
  // Every NaN, of either sign and any payload, becomes CUDA's canonical 0x7fff.
  CHECK(kiln::float_to_f16(std::numeric_limits<float>::quiet_NaN()) == 0x7fff);
  CHECK(kiln::float_to_f16(from_bits(0xff800001u)) == 0x7fff);
}

TEST_CASE("f16 to float is exact for every pattern and round-trips", "[half]") {
  CHECK(kiln::f16_to_float(0x3c00) == 1.0f);
  CHECK(kiln::f16_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(kiln::f16_to_float(0x8001) == -std::ldexp(1.0f, -24));
  CHECK(kiln::f16_to_float(0x03ff) == std::ldexp(1023.0f, -24));
  CHECK(kiln::f16_to_float(0x7bff) == 65504.0f);
  CHECK(std::isinf(kiln::f16_to_float(0xfc00)));
  CHECK(kiln::f16_to_float(0xfc00) < 0);
  CHECK(std::isnan(kiln::f16_to_float(0x7e00)));
  CHECK(std::signbit(kiln::f16_to_float(0x8000)));
  // Every finite pattern converts to a float that converts back to itself.
  int mismatches = 0;
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0) continue;  // NaN
    if (kiln::float_to_f16(kiln::f16_to_float(static_cast<std::uint16_t>(h))) != h) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("float to bf16 rounds to nearest even, bit for bit", "[half]") {
  CHECK(kiln::float_to_bf16(1.0f) == 0x3f80);
  CHECK(kiln::float_to_bf16(-1.0f) == 0xbf80);
  CHECK(kiln::float_to_bf16(1.0f / 3.0f) == 0x3eab);            // 0x3eaaaaab rounds up
  CHECK(kiln::float_to_bf16(from_bits(0x3f808000u)) == 0x3f80);  // tie: even stays
  CHECK(kiln::float_to_bf16(from_bits(0x3f818000u)) == 0x3f82);  // tie: odd rounds up
  CHECK(kiln::float_to_bf16(from_bits(0x3f808001u)) == 0x3f81);  // above the tie
  CHECK(kiln::float_to_bf16(from_bits(0x7f7fffffu)) == 0x7f80);  // FLT_MAX rounds to infinity
  CHECK(kiln::float_to_bf16(from_bits(0x7f7f7fffu)) == 0x7f7f);  // below the tie stays finite
  CHECK(kiln::float_to_bf16(from_bits(0x00018000u)) == 0x0002);  // subnormal tie, odd: up
  CHECK(kiln::float_to_bf16(from_bits(0x80008000u)) == 0x8000);  // subnormal tie, even: -0
  CHECK(kiln::float_to_bf16(std::numeric_limits<float>::infinity()) == 0x7f80);
  CHECK(kiln::float_to_bf16(-std::numeric_limits<float>::infinity()) == 0xff80);
  CHECK(kiln::float_to_bf16(std::numeric_limits<float>::quiet_NaN()) == 0x7fff);
  CHECK(kiln::float_to_bf16(from_bits(0xff800001u)) == 0x7fff);  // a NaN whose rounding would carry
  CHECK(kiln::bf16_to_float(0x3f80) == 1.0f);
  CHECK(kiln::bf16_to_float(0x0001) == from_bits(0x00010000u));
  int mismatches = 0;
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    if ((b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0) continue;  // NaN
    if (kiln::float_to_bf16(kiln::bf16_to_float(static_cast<std::uint16_t>(b))) != b) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("host references read and write f16 and bf16 elements", "[half]") {
  std::uint16_t h[4] = {0x3c00, 0xc000, 0x0001, 0x7c00};
  const auto t = kiln::TensorRef::matrix(h, kiln::f16, 2, 2, 2, kiln::Device::host());
  CHECK(kiln::load_element(t, 0, 0, 0) == 1.0);
  CHECK(kiln::load_element(t, 0, 0, 1) == -2.0);
  CHECK(kiln::load_element(t, 0, 1, 0) == std::ldexp(1.0, -24));
  CHECK(std::isinf(kiln::load_element(t, 0, 1, 1)));
  kiln::store_element(t, 0, 0, 1, 1.0 / 3.0);
  CHECK(h[1] == 0x3555);
  // Through a transposed view, element (0, 1) is storage element (1, 0).
  kiln::store_element(t.transposed(), 0, 0, 1, 0.5);
  CHECK(h[2] == 0x3800);

  std::uint16_t b[2] = {0, 0};
  const auto v = kiln::TensorRef::vector(b, kiln::bf16, 2, kiln::Device::host());
  kiln::store_element(v, 0, 0, 1, 1.0 / 3.0);
  CHECK(b[1] == 0x3eab);
  CHECK(kiln::load_element(v, 0, 0, 1) == static_cast<double>(kiln::bf16_to_float(0x3eab)));
}

TEST_CASE("store_element rounds past the float range to infinity and refuses integers that do not fit", "[half]") {
  const double fmax = static_cast<double>(std::numeric_limits<float>::max());
  float f[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const auto vf = kiln::TensorRef::vector(f, kiln::f32, 4, kiln::Device::host());
  kiln::store_element(vf, 0, 0, 0, 0x1.fffffefp127);  // below halfway to 2^128: FLT_MAX
  kiln::store_element(vf, 0, 0, 1, 0x1.ffffffp127);   // the tie: to even, infinity
  kiln::store_element(vf, 0, 0, 2, -1e300);
  kiln::store_element(vf, 0, 0, 3, std::nan(""));
  CHECK(f[0] == std::numeric_limits<float>::max());
  CHECK(f[1] == std::numeric_limits<float>::infinity());
  CHECK(f[2] == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(f[3]));
  kiln::store_element(vf, 0, 0, 0, 2.0 * fmax);
  CHECK(f[0] == std::numeric_limits<float>::infinity());
  std::uint16_t h[1] = {0}, b[1] = {0};
  kiln::store_element(kiln::TensorRef::vector(h, kiln::f16, 1, kiln::Device::host()), 0, 0, 0, -1e40);
  CHECK(h[0] == 0xfc00);
  kiln::store_element(kiln::TensorRef::vector(b, kiln::bf16, 1, kiln::Device::host()), 0, 0, 0, 1e40);
  CHECK(b[0] == 0x7f80);

  std::int32_t i[1] = {7};
  const auto vi = kiln::TensorRef::vector(i, kiln::i32, 1, kiln::Device::host());
  kiln::store_element(vi, 0, 0, 0, -2147483648.9);  // truncates to INT32_MIN
  CHECK(i[0] == std::numeric_limits<std::int32_t>::min());
  kiln::store_element(vi, 0, 0, 0, 2147483647.5);
  CHECK(i[0] == std::numeric_limits<std::int32_t>::max());
  i[0] = 7;
  CHECK_THROWS_AS(kiln::store_element(vi, 0, 0, 0, 2147483648.0), kiln::ArgumentError);
  CHECK(kiln_test::error_message([&] { kiln::store_element(vi, 0, 0, 0, 1e10); }) ==
        "store_element: argument 'value' 1e+10 does not fit i32 (expected a finite value whose truncation "
        "lies in [-2147483648, 2147483647])");
  CHECK(i[0] == 7);  // nothing written

  std::uint8_t u[1] = {9};
  const auto vu = kiln::TensorRef::vector(u, kiln::u8, 1, kiln::Device::host());
  kiln::store_element(vu, 0, 0, 0, 255.99);
  CHECK(u[0] == 255);
  kiln::store_element(vu, 0, 0, 0, -0.5);  // truncates to 0
  CHECK(u[0] == 0);
  CHECK_THROWS_AS(kiln::store_element(vu, 0, 0, 0, 256.0), kiln::ArgumentError);
  CHECK_THROWS_AS(kiln::store_element(vu, 0, 0, 0, -1.0), kiln::ArgumentError);
  CHECK_THROWS_AS(kiln::store_element(vu, 0, 0, 0, std::nan("")), kiln::ArgumentError);

  std::uint32_t w[1] = {0};
  const auto vw = kiln::TensorRef::vector(w, kiln::u32, 1, kiln::Device::host());
  kiln::store_element(vw, 0, 0, 0, 4294967295.0);
  CHECK(w[0] == 0xffffffffu);
  CHECK_THROWS_AS(kiln::store_element(vw, 0, 0, 0, 4294967296.0), kiln::ArgumentError);

  std::int64_t l[1] = {0};
  const auto vl = kiln::TensorRef::vector(l, kiln::i64, 1, kiln::Device::host());
  kiln::store_element(vl, 0, 0, 0, -std::ldexp(1.0, 63));
  CHECK(l[0] == std::numeric_limits<std::int64_t>::min());
  CHECK_THROWS_AS(kiln::store_element(vl, 0, 0, 0, std::ldexp(1.0, 63)), kiln::ArgumentError);
  CHECK_THROWS_AS(kiln::store_element(vl, 0, 0, 0, std::numeric_limits<double>::infinity()), kiln::ArgumentError);
}

TEST_CASE("random fills round to the 16-bit types and stay in [-1, 1]", "[half]") {
  std::vector<std::uint16_t> h(4096), b(4096);
  kiln::default_fill(kiln::TensorRef::vector(h.data(), kiln::f16, 4096, kiln::Device::host()), 7);
  kiln::default_fill(kiln::TensorRef::vector(b.data(), kiln::bf16, 4096, kiln::Device::host()), 7);
  double sum_h = 0, sum_b = 0;
  int distinct_diff = 0;
  for (int i = 0; i < 4096; ++i) {
    const float fh = kiln::f16_to_float(h[i]), fb = kiln::bf16_to_float(b[i]);
    CHECK(std::fabs(fh) <= 1.0f);
    CHECK(std::fabs(fb) <= 1.0f);
    // Same seed, same draws: the two roundings of one float differ by at most bf16's half-ulp.
    CHECK(std::fabs(fh - fb) <= std::ldexp(std::fabs(fh), -7) + 1e-7f);
    if (fh != fb) ++distinct_diff;
    sum_h += fh;
    sum_b += fb;
  }
  CHECK(distinct_diff > 1000);            // f16 keeps bits bf16 drops
  CHECK(std::fabs(sum_h / 4096) < 0.05);  // centred
  CHECK(std::fabs(sum_b / 4096) < 0.05);
}

TEST_CASE("tolerances grow with the output's roundoff and the reduction length", "[half]") {
  CHECK(kiln::unit_roundoff(kiln::bf16) == std::ldexp(1.0, -8));
  CHECK(kiln::unit_roundoff(kiln::f16) == std::ldexp(1.0, -11));
  CHECK(kiln::accumulation_tolerance(kiln::f32, 4096) == 1e-4);
  const double bf16_8192 = kiln::accumulation_tolerance(kiln::bf16, 8192);
  CHECK(bf16_8192 == Approx(2.0 / 256 + 8.0 * std::sqrt(8192.0) * std::ldexp(1.0, -24)));
  CHECK(bf16_8192 < 8e-3);
  CHECK(kiln::accumulation_tolerance(kiln::f16, 8192) < kiln::accumulation_tolerance(kiln::bf16, 8192));
  // The figure the docs quote (docs/architecture.md, plugins/gemm/README.md): 1.0e-3, not 2.0e-3.
  CHECK(kiln::accumulation_tolerance(kiln::f16, 8192) == Approx(1.02e-3).epsilon(0.01));
  CHECK(kiln::accumulation_tolerance(kiln::f32, 1 << 24) > kiln::accumulation_tolerance(kiln::f32, 1 << 12));
}

TEST_CASE("f16 and bf16 problem keys print and parse back with eight dims", "[half]") {
  kiln::ParsedKey k;
  REQUIRE(kiln::parse_problem_key("bf16|m=4096|n=4096|k=4096|tf32=0|batch=8|ta=0|tb=1|c16=1", k));
  CHECK(k.dtype == kiln::bf16);
  CHECK(k.n_dims == 8);
  CHECK(k.names[4] == "batch");
  CHECK(k.dims[4] == 8);
  CHECK(k.names[6] == "tb");
  CHECK(k.dims[7] == 1);
  REQUIRE(kiln::parse_problem_key("f16|n=7", k));
  CHECK(k.dtype == kiln::f16);
  CHECK(kiln::parse_dtype("bf16") == kiln::bf16);
  CHECK(kiln::dtype_name(kiln::f16) == "f16");
}

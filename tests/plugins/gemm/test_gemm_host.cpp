// The gemm schema and host reference through kiln::Runtime::op with host buffers; argument
// validation; the variant list and parameter spaces.  No GPU needed.
#include <kiln/kiln.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"
#include "gemm_params.hpp"
#include "gemm_reference.hpp"
#include "gemm_schema.hpp"
#include "register_blocked_configs.hpp"
#include "register_gemm.hpp"
#include "split_k_plan.hpp"
#include "tf32_mma_configs.hpp"

using kiln_test::error_message;
using kiln_test::contains;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_gemm(reg);
  REQUIRE(s.ok());
  return reg;
}

void fill_random(const kiln::TensorRef& t, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::int64_t r = 0; r < t.rows(); ++r)
    for (std::int64_t j = 0; j < t.cols(); ++j) t.as<float>()[r * t.row_stride + j] = static_cast<float>(u(rng));
}

void fill_values(const kiln::TensorRef& t, const std::vector<float>& rows_packed) {
  REQUIRE(static_cast<std::int64_t>(rows_packed.size()) == t.numel());
  for (std::int64_t r = 0; r < t.rows(); ++r)
    for (std::int64_t j = 0; j < t.cols(); ++j) t.as<float>()[r * t.row_stride + j] = rows_packed[r * t.cols() + j];
}

float at(const kiln::TensorRef& t, std::int64_t r, std::int64_t j) { return t.as<float>()[r * t.row_stride + j]; }

// Largest |c - (alpha * a * b + beta * c0)| relative to the largest |expected|, by a plain triple
// loop in long double (independent of the blocked reference).
double max_relative_diff(const kiln::TensorRef& a, const kiln::TensorRef& b, const std::vector<float>& c0,
                         const kiln::TensorRef& c, double alpha, double beta) {
  double worst = 0.0, scale = 0.0;
  for (std::int64_t i = 0; i < c.rows(); ++i)
    for (std::int64_t j = 0; j < c.cols(); ++j) {
      long double s = 0.0L;
      for (std::int64_t kk = 0; kk < a.cols(); ++kk) s += static_cast<long double>(at(a, i, kk)) * at(b, kk, j);
      long double want = alpha * s;
      if (beta != 0.0) want += beta * static_cast<long double>(c0[i * c.cols() + j]);
      const double got = at(c, i, j);
      if (!std::isfinite(got)) return std::numeric_limits<double>::infinity();
      worst = std::max(worst, static_cast<double>(std::fabs(static_cast<long double>(got) - want)));
      scale = std::max(scale, static_cast<double>(std::fabs(want)));
    }
  return scale > 0.0 ? worst / scale : worst;
}

std::vector<float> packed(const kiln::TensorRef& t) {
  std::vector<float> v;
  for (std::int64_t r = 0; r < t.rows(); ++r)
    for (std::int64_t j = 0; j < t.cols(); ++j) v.push_back(at(t, r, j));
  return v;
}

kiln::DeviceInfo fake_gpu() {  // hand-made: no GPU needed
  kiln::DeviceInfo d;
  d.device = kiln::Device::cuda(0);
  d.name = "Test GPU";
  d.cc_major = 9;
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.smem_per_block = 48 * 1024;
  d.smem_per_block_optin = 227 * 1024;
  return d;
}

}  // namespace

TEST_CASE("gemm rejects bad arguments with the matching error", "[gemm][schema]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemm = rt.op("gemm");
  const kiln::Device host = kiln::Device::host();
  kiln::Buffer a = kiln::Buffer::alloc(host, kiln::f32, {7, 5});
  kiln::Buffer b = kiln::Buffer::alloc(host, kiln::f32, {5, 13});
  kiln::Buffer c = kiln::Buffer::alloc(host, kiln::f32, {7, 13});

  SECTION("k of a and b disagree") {
    kiln::Buffer b6 = kiln::Buffer::alloc(host, kiln::f32, {6, 13});
    REQUIRE_THROWS_AS(gemm({a, b6, c}), kiln::ShapeError);
    const std::string msg = error_message([&] { gemm({a, b6, c}); });
    CHECK(contains(msg, "argument 'b' has shape [6x13]"));
    CHECK(contains(msg, "expected [5x13]"));
  }
  SECTION("c is not m x n") {
    kiln::Buffer c_wrong = kiln::Buffer::alloc(host, kiln::f32, {7, 12});
    kiln::Buffer c_t = kiln::Buffer::alloc(host, kiln::f32, {13, 7});
    REQUIRE_THROWS_AS(gemm({a, b, c_wrong}), kiln::ShapeError);
    REQUIRE_THROWS_AS(gemm({a, b, c_t}), kiln::ShapeError);
    const std::string msg = error_message([&] { gemm({a, b, c_wrong}); });
    CHECK(contains(msg, "argument 'c' has shape [7x12]"));
    CHECK(contains(msg, "expected [7x13]"));
  }
  SECTION("rank 1 operands") {
    kiln::Buffer v = kiln::Buffer::alloc(host, kiln::f32, {35});
    REQUIRE_THROWS_AS(gemm({v, b, c}), kiln::ShapeError);
  }
  SECTION("wrong dtype") {
    kiln::Buffer a64 = kiln::Buffer::alloc(host, kiln::f64, {7, 5});
    kiln::Buffer ci = kiln::Buffer::alloc(host, kiln::i32, {7, 13});
    REQUIRE_THROWS_AS(gemm({a64, b, c}), kiln::DTypeError);
    REQUIRE_THROWS_AS(gemm({a, b, ci}), kiln::DTypeError);
    const std::string msg = error_message([&] { gemm({a64, b, c}); });
    CHECK(contains(msg, "a"));
    CHECK(contains(msg, "f64"));
    CHECK(contains(msg, "f32"));
  }
  SECTION("null pointer") {
    kiln::TensorRef null_a = a.ref();
    null_a.data = nullptr;
    REQUIRE_THROWS_AS(gemm({null_a, b, c}), kiln::ArgumentError);
  }
  SECTION("wrong tensor count") {
    REQUIRE_THROWS_AS(gemm({a, b}), kiln::ArgumentError);
  }
  SECTION("good arguments give the problem, tf32 from allow_tf32") {
    CHECK(gemm.problem({a, b, c}).key() == "f32|m=7|n=13|k=5|tf32=0|batch=1|ta=0|tb=0|c16=0");
    CHECK(gemm.problem(kiln::Args({a, b, c}, {1.0, 0.0, 1.0})).key() == "f32|m=7|n=13|k=5|tf32=1|batch=1|ta=0|tb=0|c16=0");
    CHECK(gemm.problem(kiln::Args({a, b, c}, {2.0, 0.5})).key() == "f32|m=7|n=13|k=5|tf32=0|batch=1|ta=0|tb=0|c16=0");
    CHECK(gemm.problem(kiln::Args({a, b, c}, {1.0, 0.0, 2.0})).key() == "f32|m=7|n=13|k=5|tf32=2|batch=1|ta=0|tb=0|c16=0");
    REQUIRE_THROWS_AS(gemm.problem(kiln::Args({a, b, c}, {1.0, 0.0, 0.5})), kiln::ArgumentError);
  }
}

TEST_CASE("gemm_host computes alpha * A * B + beta * C", "[gemm][host]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemm = rt.op("gemm");
  const kiln::Device host = kiln::Device::host();

  SECTION("a hand-computed 2x2 * 2x3") {
    kiln::Buffer a = kiln::Buffer::alloc(host, kiln::f32, {2, 2});
    kiln::Buffer b = kiln::Buffer::alloc(host, kiln::f32, {2, 3});
    kiln::Buffer c = kiln::Buffer::alloc(host, kiln::f32, {2, 3});
    fill_values(a.ref(), {1, 2, 3, 4});
    fill_values(b.ref(), {5, 6, 7, 8, 9, 10});
    c.fill_bytes(0xFF);  // NaN: beta = 0 must not read it
    gemm({a, b, c});
    CHECK(c.to_host<float>() == std::vector<float>{21, 24, 27, 47, 54, 61});

    fill_values(c.ref(), {1, 1, 1, -2, -2, -2});
    gemm(kiln::Args({a, b, c}, {2.0, 0.5}));  // 2 * AB + 0.5 * C
    CHECK(c.to_host<float>() == std::vector<float>{42.5f, 48.5f, 54.5f, 93, 107, 121});

    gemm(kiln::Args({a, b, c}, {0.0, -1.0}));  // alpha = 0: C = -C
    CHECK(c.to_host<float>() == std::vector<float>{-42.5f, -48.5f, -54.5f, -93, -107, -121});
  }
  SECTION("1 x 1 x 1") {
    kiln::Buffer a = kiln::Buffer::alloc(host, kiln::f32, {1, 1});
    kiln::Buffer b = kiln::Buffer::alloc(host, kiln::f32, {1, 1});
    kiln::Buffer c = kiln::Buffer::alloc(host, kiln::f32, {1, 1});
    fill_values(a.ref(), {3});
    fill_values(b.ref(), {-0.5f});
    fill_values(c.ref(), {10});
    gemm(kiln::Args({a, b, c}, {1.0, 1.0}));
    CHECK(c.to_host<float>() == std::vector<float>{8.5f});
  }
  SECTION("beta = 0 with NaN-poisoned C gives finite results") {
    kiln::Buffer a = kiln::Buffer::alloc(host, kiln::f32, {19, 23});
    kiln::Buffer b = kiln::Buffer::alloc(host, kiln::f32, {23, 17});
    kiln::Buffer c = kiln::Buffer::alloc(host, kiln::f32, {19, 17});
    fill_random(a.ref(), 1);
    fill_random(b.ref(), 2);
    c.fill_bytes(0xFF);
    gemm(kiln::Args({a, b, c}, {1.5, 0.0}));
    std::int64_t non_finite = 0;
    for (float v : c.to_host<float>()) non_finite += !std::isfinite(v);
    CHECK(non_finite == 0);
    CHECK(max_relative_diff(a.ref(), b.ref(), std::vector<float>(19 * 17, 0.0f), c.ref(), 1.5, 0.0) < 1e-6);
  }
  SECTION("random shapes across the blocking edges, dense and pitched, alpha and beta") {
    // k = 129 and m = 17 cross the reference's k and row blocks (128 and 16).
    const std::int64_t shapes[][3] = {{1, 1, 1}, {2, 3, 1}, {17, 5, 129}, {33, 65, 17}, {16, 1, 300}};
    const double scalars[][2] = {{1.0, 0.0}, {-0.5, 2.0}, {1.0, 1.0}};
    for (const auto& s : shapes)
      for (bool pitched : {false, true})
        for (const auto& ab : scalars) {
          const std::int64_t m = s[0], n = s[1], k = s[2];
          INFO(m << "x" << n << "x" << k << (pitched ? " pitched" : " dense") << " alpha " << ab[0] << " beta " << ab[1]);
          auto make = [&](std::int64_t r, std::int64_t cc) {
            return pitched ? kiln::Buffer::alloc_pitched(host, kiln::f32, r, cc) : kiln::Buffer::alloc(host, kiln::f32, {r, cc});
          };
          kiln::Buffer a = make(m, k), b = make(k, n), c = make(m, n);
          fill_random(a.ref(), 10 + m);
          fill_random(b.ref(), 20 + n);
          fill_random(c.ref(), 30 + k);
          const std::vector<float> c0 = packed(c.ref());
          gemm(kiln::Args({a, b, c}, {ab[0], ab[1]}));
          CHECK(max_relative_diff(a.ref(), b.ref(), c0, c.ref(), ab[0], ab[1]) < 1e-6);
        }
  }
  SECTION("a strided window of caller memory; the gaps stay untouched") {
    const std::int64_t m = 9, n = 11, k = 7, ld = 15;
    std::vector<float> a_mem(m * ld), b_mem(k * ld), c_mem(m * ld);
    std::memset(c_mem.data(), 0xFF, c_mem.size() * sizeof(float));
    auto a = kiln::TensorRef::matrix(a_mem.data(), kiln::f32, m, k, ld, host);
    auto b = kiln::TensorRef::matrix(b_mem.data(), kiln::f32, k, n, ld, host);
    auto c = kiln::TensorRef::matrix(c_mem.data(), kiln::f32, m, n, ld, host);
    fill_random(a, 41);
    fill_random(b, 42);
    gemm({a, b, c});
    CHECK(max_relative_diff(a, b, std::vector<float>(m * n, 0.0f), c, 1.0, 0.0) < 1e-6);
    std::int64_t gaps_changed = 0;
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t j = n; j < ld; ++j) gaps_changed += !std::isnan(c_mem[r * ld + j]);
    CHECK(gaps_changed == 0);
  }
  SECTION("empty extents") {
    kiln::Buffer a = kiln::Buffer::alloc(host, kiln::f32, {0, 4});
    kiln::Buffer b = kiln::Buffer::alloc(host, kiln::f32, {4, 3});
    kiln::Buffer c = kiln::Buffer::alloc(host, kiln::f32, {0, 3});
    gemm({a, b, c});
    // k = 0: C = alpha * 0 + beta * C.
    kiln::Buffer a0 = kiln::Buffer::alloc(host, kiln::f32, {2, 0});
    kiln::Buffer b0 = kiln::Buffer::alloc(host, kiln::f32, {0, 3});
    kiln::Buffer c2 = kiln::Buffer::alloc(host, kiln::f32, {2, 3});
    fill_values(c2.ref(), {1, 2, 3, 4, 5, 6});
    gemm(kiln::Args({a0, b0, c2}, {1.0, 2.0}));
    CHECK(c2.to_host<float>() == std::vector<float>{2, 4, 6, 8, 10, 12});
  }
  SECTION("512^3 finishes (the reference must stay usable as the tuner's oracle)") {
    kiln::Buffer a = kiln::Buffer::alloc(host, kiln::f32, {512, 512});
    kiln::Buffer b = kiln::Buffer::alloc(host, kiln::f32, {512, 512});
    kiln::Buffer c = kiln::Buffer::alloc(host, kiln::f32, {512, 512});
    fill_random(a.ref(), 51);
    fill_random(b.ref(), 52);
    gemm({a, b, c});
    // Spot-check one row against the plain loop.
    double worst = 0.0;
    for (std::int64_t j = 0; j < 512; ++j) {
      double s = 0.0;
      for (std::int64_t kk = 0; kk < 512; ++kk) s += static_cast<double>(at(a.ref(), 100, kk)) * at(b.ref(), kk, j);
      worst = std::max(worst, std::fabs(s - at(c.ref(), 100, j)));
    }
    CHECK(worst < 1e-4);
  }
}

TEST_CASE("gemm registers its schema and variants", "[gemm][registry]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& s = reg.op("gemm");
  REQUIRE(s.tensors.size() == 3);
  CHECK(s.tensors[0].name == "a");
  CHECK(s.tensors[1].name == "b");
  CHECK(s.tensors[2].name == "c");
  CHECK(s.tensors[0].role == kiln::Role::input);
  CHECK(s.tensors[2].role == kiln::Role::inout);
  REQUIRE(s.scalars.size() == 3);
  CHECK(s.scalars[0].name == "alpha");
  CHECK(s.scalars[0].default_value == 1.0);
  CHECK(s.scalars[1].name == "beta");
  CHECK(s.scalars[1].default_value == 0.0);
  CHECK(s.scalars[2].name == "allow_tf32");
  CHECK(s.scalars[2].default_value == 0.0);
  CHECK(s.dim_names == std::vector<std::string>{"m", "n", "k", "tf32", "batch", "ta", "tb", "c16"});
  CHECK(s.work_unit == kiln::WorkUnit::flop);

  const kiln::Problem p = s.problem_from_dims(kiln::f32, {7, 13, 5}, kiln::Device::host());  // tf32 defaults to 0
  CHECK(p.key() == "f32|m=7|n=13|k=5|tf32=0|batch=1|ta=0|tb=0|c16=0");
  CHECK(s.problem_from_shape(kiln::f32, "4096x4096x4096", kiln::Device::host()).key() ==
        "f32|m=4096|n=4096|k=4096|tf32=0|batch=1|ta=0|tb=0|c16=0");
  CHECK(s.work(p) == 2.0 * 7 * 13 * 5);
  CHECK(s.tolerance_for(p) == 1e-4);
  const kiln::Problem p32 = s.problem_from_dims(kiln::f32, {7, 13, 5, 1}, kiln::Device::host());
  CHECK(s.tolerance_for(p32) == 5e-3);

  std::vector<kiln::TensorSpec> specs;
  REQUIRE(s.tensor_specs(p, specs).ok());
  REQUIRE(specs.size() == 3);
  CHECK(specs[0].shape == kiln::Shape::matrix(7, 5));
  CHECK(specs[1].shape == kiln::Shape::matrix(5, 13));
  CHECK(specs[2].shape == kiln::Shape::matrix(7, 13));
  for (const kiln::TensorSpec& t : specs) CHECK(t.dtype == kiln::f32);

  // The tuner's scalars re-derive the same tf32 flag.
  REQUIRE(s.scalars_for);
  kiln::Args args;
  s.scalars_for(p32, args);
  REQUIRE(args.scalar_count() == 3);
  CHECK(args.scalar(0) == 1.0);
  CHECK(args.scalar(1) == 0.0);
  CHECK(args.scalar(2) == 1.0);
  kiln::Args args0;
  s.scalars_for(p, args0);
  CHECK(args0.scalar(2) == 0.0);

  std::vector<std::string> names;
  for (const kiln::Variant* v : reg.variants("gemm")) names.push_back(v->name());
#if KILN_HAS_CUDA && KILN_HAS_SM90A
  // Architectures including 90 add gemm_wgmma (priority 33, f16 / bf16 and f32 as TF32).
  CHECK(names == std::vector<std::string>{"gemm_tf32_mma", "gemm_3xtf32_mma", "gemm_split_k", "gemm_register_blocked",
                                          "gemm_wgmma", "gemm_half_mma", "gemm_tiled_coalesced", "gemm_tiled",
                                          "gemm_tiled_kahan", "gemm_row_per_block", "gemm_naive", "gemm_host"});
#endif
#if KILN_HAS_CUDA && !KILN_HAS_SM90A
  CHECK(names == std::vector<std::string>{"gemm_tf32_mma", "gemm_3xtf32_mma", "gemm_split_k",
                                          "gemm_register_blocked", "gemm_half_mma", "gemm_tiled_coalesced", "gemm_tiled",
                                          "gemm_tiled_kahan", "gemm_row_per_block", "gemm_naive", "gemm_host"});
#endif
#if KILN_HAS_CUDA
  for (const kiln::Variant* v : reg.variants("gemm")) {
    INFO(v->name());
    if (v->name() == "gemm_wgmma")
      CHECK(v->dtypes() == std::vector<kiln::DType>{kiln::bf16, kiln::f16, kiln::f32});
    else if (v->name() != "gemm_host" && v->name() != "gemm_half_mma")
      CHECK(v->dtypes() == std::vector<kiln::DType>{kiln::f32});
    if (v->name() != "gemm_host") CHECK(v->device_kind() == kiln::DeviceKind::cuda);
  }
#else
  CHECK(names == std::vector<std::string>{"gemm_host"});
#endif
  const kiln::Variant* host = reg.find_variant("gemm_host");
  REQUIRE(host != nullptr);
  CHECK(host->desc().reference);
  CHECK(host->device_kind() == kiln::DeviceKind::host);
  CHECK(host->priority() == 0);
  CHECK(host->space().empty());

  CHECK(!register_gemm(reg).ok());  // a second registration clashes: a Status, not an exception
}

TEST_CASE("gemm parameter spaces enumerate the instantiated configs", "[gemm][params]") {
  namespace g = kiln::gemm;
  const kiln::DeviceInfo dev = fake_gpu();
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& s = reg.op("gemm");
  kiln::Problem p = s.problem_from_dims(kiln::f32, {4096, 4096, 4096}, kiln::Device::cuda(0));
  p.align_bytes = 16;

  int naive_by_hand = 0;
  for (int bx : {8, 16, 32, 64, 128})
    for (int by : {1, 2, 4, 8, 16, 32}) naive_by_hand += (bx * by >= 32 && bx * by <= 1024);
  CHECK(naive_by_hand == 24);
  CHECK(g::naive_space().count_valid(dev, p) == 24);
  CHECK(g::row_per_block_space().count_valid(dev, p) == 5);
  CHECK(g::tiled_space().count_valid(dev, p) == 3);
  CHECK(g::tiled_coalesced_space().count_valid(dev, p) == 2);
  CHECK(g::tiled_kahan_space().count_valid(dev, p) == 2);

  // The register-blocked space is exactly the instantiated list, each row once.
  const std::vector<kiln::Config> rb = g::register_blocked_space().enumerate(dev, p);
  CHECK(rb.size() == static_cast<std::size_t>(g::kRegisterBlockedConfigCount));
  CHECK(g::kRegisterBlockedConfigCount >= 8);
  CHECK(g::kRegisterBlockedConfigCount <= 16);
  for (int i = 0; i < g::kRegisterBlockedConfigCount; ++i) {
    const kiln::Config c = g::register_blocked_config(i);
    INFO(c.to_string());
    CHECK(g::register_blocked_index(c) == i);
    CHECK(std::find(rb.begin(), rb.end(), c) != rb.end());
    const g::RegisterBlockedConfig& r = g::kRegisterBlockedConfigs[i];
    CHECK(r.threads == (r.bm / r.tm) * (r.bn / r.tn));
    CHECK(r.threads <= 1024);
    if (r.cp_async == 0) CHECK(r.stages == 2);
    if (r.cp_async == 0) CHECK(g::register_blocked_smem_bytes(r) <= 48 * 1024);  // static shared memory
    CHECK(g::register_blocked_smem_bytes(r) <= 227 * 1024);
  }
  kiln::Config not_instantiated = g::register_blocked_config(0);
  not_instantiated.set("BK", 16);  // 128x256x16 8x8 is instantiated with cp.async only
  CHECK(g::register_blocked_index(not_instantiated) == -1);
  CHECK(g::register_blocked_space().violated(not_instantiated, dev, p).has_value());

  // Device limits prune the list: 512-thread blocks, and blocks above the shared-memory limit.
  kiln::DeviceInfo small = dev;
  small.max_threads_per_block = 256;
  small.smem_per_block = 16 * 1024;
  std::uint64_t fits_small = 0;
  for (const g::RegisterBlockedConfig& r : g::kRegisterBlockedConfigs)
    fits_small += r.threads <= 256 && g::register_blocked_smem_bytes(r) <= (r.cp_async ? 227 : 16) * 1024;
  CHECK(fits_small < static_cast<std::uint64_t>(g::kRegisterBlockedConfigCount));
  CHECK(g::register_blocked_space().count_valid(small, p) == fits_small);

  const std::vector<kiln::Config> tf = g::tf32_mma_space().enumerate(dev, p);
  CHECK(tf.size() == static_cast<std::size_t>(g::kTf32MmaConfigCount));
  for (int i = 0; i < g::kTf32MmaConfigCount; ++i) CHECK(g::tf32_mma_index(g::tf32_mma_config(i)) == i);
  kiln::DeviceInfo no_optin = dev;
  no_optin.smem_per_block_optin = 48 * 1024;
  std::uint64_t tf_fits = 0;
  for (const g::Tf32MmaConfig& r : g::kTf32MmaConfigs) tf_fits += g::tf32_mma_smem_bytes(r) <= 48 * 1024;
  CHECK(g::tf32_mma_space().count_valid(no_optin, p) == tf_fits);

  // Defaults lie in their spaces.
  CHECK(!g::naive_space().violated(g::naive_default(dev), dev, p).has_value());
  CHECK(!g::row_per_block_space().violated(g::row_per_block_default(dev), dev, p).has_value());
  CHECK(!g::tiled_space().violated(g::tiled_default(dev), dev, p).has_value());
  CHECK(!g::tiled_coalesced_space().violated(g::tiled_coalesced_default(dev), dev, p).has_value());
  CHECK(!g::tiled_kahan_space().violated(g::tiled_kahan_default(dev), dev, p).has_value());
  CHECK(!g::register_blocked_space().violated(g::register_blocked_default(dev), dev, p).has_value());
  CHECK(!g::tf32_mma_space().violated(g::tf32_mma_default(dev), dev, p).has_value());

  // Problem-aware defaults: misaligned operands get a vec=1 row, small problems smaller tiles;
  // every pick lies in the space.
  {
    kiln::Problem unaligned = p;
    unaligned.align_bytes = 4;
    const kiln::Config d_un = g::register_blocked_default_for(dev, unaligned);
    CHECK(d_un.get("vec") == 1);
    CHECK(d_un.get("cp_async") == 1);  // the fastest unaligned row on sm_80+
    kiln::DeviceInfo volta = dev;
    volta.cc_major = 7;
    CHECK(g::register_blocked_default_for(volta, unaligned).get("cp_async") == 0);
    CHECK(g::register_blocked_default_for(dev, p) == g::register_blocked_default(dev));  // 4096^3
    const kiln::Problem mid = s.problem_from_dims(kiln::f32, {1000, 1000, 1000}, kiln::Device::cuda(0));
    const kiln::Config d_mid = g::register_blocked_default_for(dev, mid);
    CHECK(d_mid.get("BM") * d_mid.get("BN") < 128 * 128);
    CHECK(d_mid.get("vec") == 4);
    const kiln::Problem tiny = s.problem_from_dims(kiln::f32, {1, 1, 1}, kiln::Device::cuda(0));
    for (const kiln::Problem& q : {p, unaligned, mid, tiny}) {
      INFO(q.key() << " align " << q.align_bytes);
      CHECK(!g::register_blocked_space().violated(g::register_blocked_default_for(dev, q), dev, q).has_value());
      CHECK(!g::tf32_mma_space().violated(g::tf32_mma_default_for(dev, q), dev, q).has_value());
    }
    CHECK(g::tf32_mma_default_for(dev, p) == g::tf32_mma_default(dev));
    CHECK(g::tf32_mma_default_for(dev, tiny).get("BM") == 64);
  }

#if KILN_HAS_CUDA
  // The registered variants carry these spaces, and say why they refuse a problem.
  const kiln::Variant* rbv = reg.find_variant("gemm_register_blocked");
  const kiln::Variant* tfv = reg.find_variant("gemm_tf32_mma");
  REQUIRE(rbv != nullptr);
  REQUIRE(tfv != nullptr);
  CHECK(rbv->space().count_valid(dev, p) == static_cast<std::uint64_t>(g::kRegisterBlockedConfigCount));
  CHECK(rbv->supports(p, dev, rbv->default_config(dev)).ok);
  CHECK(rbv->default_config_for(dev, p) == g::register_blocked_default_for(dev, p));
  kiln::Problem misaligned = p;
  misaligned.align_bytes = 4;
  const kiln::Support no = rbv->supports(misaligned, dev, rbv->default_config(dev));
  CHECK(!no.ok);
  CHECK(contains(no.reason, "16-byte"));
  bool some_scalar_config = false;
  for (int i = 0; i < g::kRegisterBlockedConfigCount; ++i)
    if (g::kRegisterBlockedConfigs[i].vec == 1) {
      some_scalar_config = true;
      CHECK(rbv->supports(misaligned, dev, g::register_blocked_config(i)).ok);
    }
  CHECK(some_scalar_config);
  CHECK(rbv->supports(misaligned, dev, rbv->default_config_for(dev, misaligned)).ok);  // dispatch keeps this variant

  const kiln::Support tf_no = tfv->supports(p, dev, tfv->default_config(dev));  // tf32 = 0
  CHECK(!tf_no.ok);
  CHECK(contains(tf_no.reason, "allow_tf32"));
  kiln::Problem p32 = s.problem_from_dims(kiln::f32, {4096, 4096, 4096, 1}, kiln::Device::cuda(0));
  p32.align_bytes = 16;
  CHECK(tfv->supports(p32, dev, tfv->default_config(dev)).ok);
  kiln::DeviceInfo volta = dev;
  volta.cc_major = 7;
  CHECK(!tfv->supports(p32, volta, tfv->default_config(volta)).ok);
  // 3xTF32 is fp32-accurate but not IEEE: only for callers who opt in (allow_tf32 = 2, or 1);
  // aligned rows, cc >= 8.0.
  const kiln::Variant* x3 = reg.find_variant("gemm_3xtf32_mma");
  REQUIRE(x3 != nullptr);
  const kiln::Support x3_no = x3->supports(p, dev, x3->default_config(dev));  // tf32 = 0
  CHECK(!x3_no.ok);
  CHECK(contains(x3_no.reason, "allow_tf32=2"));
  kiln::Problem p3x = p;
  p3x.dims[3] = 2;
  CHECK(x3->supports(p3x, dev, x3->default_config(dev)).ok);
  CHECK(x3->supports(p32, dev, x3->default_config(dev)).ok);
  CHECK(!tfv->supports(p3x, dev, tfv->default_config(dev)).ok);  // plain TF32 needs allow_tf32 = 1
  kiln::Problem misaligned3x = misaligned;
  misaligned3x.dims[3] = 2;
  CHECK(!x3->supports(misaligned3x, dev, x3->default_config(dev)).ok);
  CHECK(!x3->supports(p32, volta, x3->default_config(volta)).ok);
  CHECK(x3->space().count_valid(dev, p3x) == static_cast<std::uint64_t>(g::kTf32MmaConfigCount));
  CHECK(tfv->priority() > x3->priority());
  CHECK(x3->priority() > rbv->priority());  // measured faster than SIMT at fp32 accuracy
  CHECK(tfv->priority() > rbv->priority());
  CHECK(rbv->priority() == 50);
  CHECK(reg.find_variant("gemm_tiled_coalesced")->priority() == 30);
  CHECK(reg.find_variant("gemm_tiled")->priority() == 20);
  CHECK(reg.find_variant("gemm_tiled_kahan")->priority() == 15);
  CHECK(reg.find_variant("gemm_naive")->priority() == 5);

  // Extents beyond 32-bit indices are refused with a reason, not run.
  kiln::Problem huge = p;
  huge.dims[2] = std::int64_t{1} << 32;
  CHECK(!rbv->supports(huge, dev, rbv->default_config(dev)).ok);
#endif
}

TEST_CASE("gemm_split_k cuts k into non-empty aligned slices", "[gemm][split_k]") {
  namespace g = kiln::gemm;
  // Automatic: about two blocks per SM over the output tiles, slices at least 256 deep.
  const g::SplitKPlan deep = g::split_k_plan(128, 128, 65536, 64, 64, 0, 132);
  CHECK(deep.splits == 66);  // 264 blocks / 4 tiles
  CHECK(deep.k_chunk == 1008);
  CHECK(deep.workspace_bytes == std::size_t(66) * 128 * 128 * 4);
  CHECK(g::split_k_plan(4096, 4096, 4096, 64, 64, 0, 132).splits == 1);  // enough tiles already
  CHECK(g::split_k_plan(64, 64, 511, 64, 64, 0, 132).splits == 1);       // k too short to cut
  CHECK(g::split_k_plan(64, 64, 512, 64, 64, 0, 132).splits == 2);
  CHECK(g::split_k_plan(0, 64, 4096, 64, 64, 0, 132).splits == 1);
  CHECK(g::split_k_plan(64, 64, 4096, 64, 64, -1, 132).splits == 1);
  CHECK(g::split_k_plan(64, 64, 4096, 64, 64, 0, 0).splits == 2);  // an unknown SM count counts as one
  // Every plan: slices start at multiples of 16 (float4 alignment of A), none is empty, k covered.
  for (std::int64_t k : {17, 31, 32, 33, 100, 777, 4097, 20000, 65536}) {
    for (int splits : {0, 2, 3, 4, 16, 64, 1000}) {
      const g::SplitKPlan plan = g::split_k_plan(100, 70, k, 64, 64, splits, 132);
      INFO("k " << k << " splits " << splits);
      if (plan.splits < 2) {
        CHECK(plan.workspace_bytes == 0);
        continue;
      }
      CHECK(plan.k_chunk % 16 == 0);
      CHECK(std::int64_t(plan.splits - 1) * plan.k_chunk < k);
      CHECK(std::int64_t(plan.splits) * plan.k_chunk >= k);
      if (splits > 0) CHECK(plan.splits <= splits);
      CHECK(plan.ld == 72);  // 70 rounded up to whole float4s: every row and slice 16-byte aligned
      CHECK(plan.stride == 100 * 72);
      CHECK(plan.workspace_bytes == std::size_t(plan.splits) * 100 * 72 * 4);
    }
  }

#if KILN_HAS_CUDA
  const kiln::DeviceInfo dev = fake_gpu();
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& s = reg.op("gemm");
  const kiln::Variant* sk = reg.find_variant("gemm_split_k");
  REQUIRE(sk != nullptr);
  CHECK(sk->priority() > reg.find_variant("gemm_register_blocked")->priority());
  CHECK(sk->priority() < reg.find_variant("gemm_3xtf32_mma")->priority());
  kiln::Problem deep_p = s.problem_from_dims(kiln::f32, {128, 128, 65536}, kiln::Device::cuda(0));
  deep_p.align_bytes = 16;
  const kiln::Config d = sk->default_config_for(dev, deep_p);
  CHECK(d.get("splits") == 0);
  CHECK(d.get("BM") == 128);
  CHECK(d.get("BN") == 64);
  CHECK(d.get("vec") == 4);
  CHECK(g::split_k_row(d) >= 0);
  CHECK(sk->supports(deep_p, dev, d).ok);
  // Skinny n (at most 32): the 32-wide row, which pads n = 24 to 32 instead of 64.
  kiln::Problem skinny = s.problem_from_dims(kiln::f32, {7680, 24, 2560}, kiln::Device::cuda(0));
  skinny.align_bytes = 16;
  const kiln::Config ds = sk->default_config_for(dev, skinny);
  CHECK(ds.get("BN") == 32);
  CHECK(ds.get("BM") == 256);  // tall (m >= kSplitKTallSkinnyM): the 256-row tile
  kiln::Problem short_skinny = s.problem_from_dims(kiln::f32, {2560, 16, 2560}, kiln::Device::cuda(0));
  short_skinny.align_bytes = 16;
  const kiln::Config dss = sk->default_config_for(dev, short_skinny);
  CHECK(dss.get("BN") == 32);
  CHECK(dss.get("BM") == 128);
  CHECK(g::split_k_row(dss) >= 0);
  CHECK(sk->supports(short_skinny, dev, dss).ok);
  CHECK(ds.get("splits") == 0);
  CHECK(g::split_k_row(ds) >= 0);
  CHECK(sk->supports(skinny, dev, ds).ok);
  skinny.align_bytes = 4;
  CHECK(sk->default_config_for(dev, skinny).get("vec") == 1);
  CHECK(!sk->space().violated(sk->default_config(dev), dev, deep_p).has_value());
  // The space: the register-blocked rows of at most 128 x 128 without cp.async, x 4 slicings.
  std::size_t rows = 0;
  for (const g::RegisterBlockedConfig& r : g::kRegisterBlockedConfigs) rows += r.bm * r.bn <= 128 * 128 && !r.cp_async;
  const std::vector<kiln::Config> all = sk->space().enumerate(dev, deep_p);
  CHECK(all.size() == rows * 4);
  for (const kiln::Config& c : all) CHECK(g::split_k_row(c) >= 0);
  CHECK(g::split_k_row(g::register_blocked_config(0)) == -1);  // no splits: not a split_k config

  // Where splitting cannot pay it declines, with the reason.
  kiln::Problem square = s.problem_from_dims(kiln::f32, {4096, 4096, 4096}, kiln::Device::cuda(0));
  square.align_bytes = 16;
  const kiln::Support no_auto = sk->supports(square, dev, sk->default_config_for(dev, square));
  CHECK(!no_auto.ok);
  CHECK(contains(no_auto.reason, "automatic slicing"));
  kiln::Config forced = sk->default_config_for(dev, square);
  forced.set("splits", 64);
  const kiln::Support too_many = sk->supports(square, dev, forced);
  CHECK(!too_many.ok);
  CHECK(contains(too_many.reason, "8 blocks per SM"));
  kiln::Problem unaligned = deep_p;
  unaligned.align_bytes = 4;
  CHECK(!sk->supports(unaligned, dev, d).ok);  // vec = 4 rows need 16-byte alignment
  CHECK(sk->default_config_for(dev, unaligned).get("vec") == 1);
  CHECK(sk->supports(unaligned, dev, sk->default_config_for(dev, unaligned)).ok);
#endif
}

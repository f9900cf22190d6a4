// Every CUDA `gemv` variant and every valid config against the host reference (kiln::ProblemData:
// fresh random inputs, poisoned outputs), dense and pitched; strided views with guard elements;
// the float4 configs' refusal of misaligned views; op("gemv") on device buffers end to end.
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"
#include "register_gemv.hpp"

using kiln_test::contains;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_gemv(reg);
  REQUIRE(s.ok());
  return reg;
}

// The f32 CUDA variants (gemv_half_warp_per_row: test_gemv_half_gpu).
std::vector<const kiln::Variant*> cuda_variants(const kiln::Registry& reg) {
  std::vector<const kiln::Variant*> out;
  for (const kiln::Variant* v : reg.variants("gemv"))
    if (v->device_kind() == kiln::DeviceKind::cuda &&
        std::find(v->dtypes().begin(), v->dtypes().end(), kiln::f32) != v->dtypes().end())
      out.push_back(v);
  return out;
}

// Every valid config of `v` for `p`, or a fixed random sample of `max_configs` of them; the
// default config always among them.
std::vector<kiln::Config> configs_to_test(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p,
                                          std::size_t max_configs = 64) {
  std::vector<kiln::Config> all = v.space().enumerate(dev, p);
  if (all.size() > max_configs) {
    std::mt19937_64 rng(12345);
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(max_configs);
  }
  const kiln::Config d = v.default_config(dev);
  if (std::find(all.begin(), all.end(), d) == all.end()) all.push_back(d);
  return all;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

bool is_vector_config(const kiln::Variant& v, const kiln::Config& c) {
  return v.name() == "gemv_warp_per_row" && c.get_or("vector_width", 1) == 4;
}

// m x n: 1, primes, non-multiples of every tile and of 4, large; the last one dense with n % 4 == 0
// so that float4 loads also run on unpadded rows.
const std::int64_t kShapes[][2] = {{1, 1},      {1, 17},     {17, 1},       {31, 33},
                                   {129, 257},  {1000, 999}, {2048, 4097},  {256, 4096}};

}  // namespace

TEST_CASE("every CUDA gemv variant and config matches the host reference", "[gemv][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemv = rt.op("gemv");
  const kiln::OpSchema& schema = gemv.schema();
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Stream stream;  // the legacy stream: ordered after ProblemData's copies and memsets

  const std::vector<const kiln::Variant*> variants = cuda_variants(rt.registry());
  REQUIRE(variants.size() == 3);

  std::int64_t vector_runs = 0;
  std::uint64_t seed = 1;
  for (const auto& shape : kShapes) {
    for (bool pitched : {false, true}) {
      const kiln::Problem wanted = schema.problem_from_dims(kiln::f32, {shape[0], shape[1]}, gpu);
      kiln::ProblemData data(schema, wanted, gpu, seed++, {pitched, true});
      // The problem as op() derives it from these tensors, alignment included.
      const kiln::Problem p = gemv.problem(data.device_args());
      REQUIRE(p.same_key(wanted));
      for (const kiln::Variant* v : variants) {
        for (const kiln::Config& config : configs_to_test(*v, dev, p)) {
          INFO(v->name() << " " << config.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense")
                         << " align " << p.align_bytes);
          REQUIRE(!v->space().violated(config, dev, p));
          const kiln::Support s = v->supports(p, dev, config);
          if (!s.ok) {
            // Only the float4 configs refuse anything, and only for alignment.
            CHECK(is_vector_config(*v, config));
            CHECK(p.align_bytes < 16);
            CHECK(contains(s.reason, "16-byte"));
            continue;
          }
          data.poison_outputs();
          const kiln::Status st = v->launch(data.device_args(), p, config, nullptr, stream);
          INFO(st.message());
          REQUIRE(st.ok());
          stream.synchronize();
          CHECK(data.error() <= data.tolerance());
          if (is_vector_config(*v, config)) ++vector_runs;
        }
      }
    }
  }
  // Pitched rows (cudaMallocPitch) are 16-byte aligned: the 27 float4 configs ran at least on
  // every pitched shape.
  CHECK(vector_runs >= 27 * static_cast<std::int64_t>(std::size(kShapes)));
}

TEST_CASE("gemv honours A's row stride and writes only y", "[gemv][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemv = rt.op("gemv");
  const kiln::OpSchema& schema = gemv.schema();
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Device host = kiln::Device::host();
  const kiln::Stream stream;

  // A: 129 x 257 inside rows of 260 (16-byte pitch); y: 129 elements 4 in from the start of a
  // 137-element buffer, the 4 before and 4 after are guards.
  const std::int64_t m = 129, n = 257, lda = 260, guard = 4;
  const std::vector<float> ha = random_floats(static_cast<std::size_t>(m * lda), 11);
  const std::vector<float> hx = random_floats(static_cast<std::size_t>(n), 12);
  kiln::Buffer a_store = kiln::Buffer::alloc(gpu, kiln::f32, {m * lda});
  kiln::Buffer x = kiln::Buffer::alloc(gpu, kiln::f32, {n});
  kiln::Buffer y_store = kiln::Buffer::alloc(gpu, kiln::f32, {m + 2 * guard});
  a_store.copy_from_host(ha.data(), ha.size() * sizeof(float));
  x.copy_from_host(hx.data(), hx.size() * sizeof(float));
  const auto a = kiln::TensorRef::matrix(a_store.data(), kiln::f32, m, n, lda, gpu);
  const auto y = kiln::TensorRef::vector(static_cast<float*>(y_store.data()) + guard, kiln::f32, m, gpu);
  const kiln::Args args{a, x, y};
  const kiln::Problem p = gemv.problem(args);
  CHECK(p.align_bytes == 16);

  std::vector<float> y_ref(static_cast<std::size_t>(m));
  const kiln::Args ref_args{kiln::TensorRef::matrix(const_cast<float*>(ha.data()), kiln::f32, m, n, lda, host),
                            kiln::TensorRef::vector(const_cast<float*>(hx.data()), kiln::f32, n, host),
                            kiln::TensorRef::vector(y_ref.data(), kiln::f32, m, host)};
  REQUIRE(schema.reference(ref_args, p).ok());

  for (const kiln::Variant* v : cuda_variants(rt.registry())) {
    for (const kiln::Config& config : configs_to_test(*v, dev, p)) {
      INFO(v->name() << " " << config.to_string());
      REQUIRE(v->supports(p, dev, config).ok);
      y_store.fill_bytes(0xFF);
      REQUIRE(v->launch(args, p, config, nullptr, stream).ok());
      stream.synchronize();
      const std::vector<float> got = y_store.to_host<float>();
      std::int64_t guards_written = 0;
      for (std::int64_t i = 0; i < guard; ++i) {
        guards_written += !std::isnan(got[static_cast<std::size_t>(i)]);
        guards_written += !std::isnan(got[static_cast<std::size_t>(guard + m + i)]);
      }
      CHECK(guards_written == 0);
      const double err = kiln::relative_error(
          kiln::TensorRef::vector(const_cast<float*>(got.data()) + guard, kiln::f32, m, host), ref_args.tensor(2));
      CHECK(err <= 1e-4);
    }
  }
}

TEST_CASE("gemv float4 configs refuse views that are not 16-byte aligned", "[gemv][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemv = rt.op("gemv");
  const kiln::OpSchema& schema = gemv.schema();
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Device host = kiln::Device::host();
  const kiln::Variant* wpr = rt.registry().find_variant("gemv_warp_per_row");
  REQUIRE(wpr != nullptr);
  const kiln::Stream stream;

  // A starts one element into its storage; its row stride (132) is a multiple of 4, so only the
  // pointer is misaligned.
  const std::int64_t m = 37, n = 129, lda = 132;
  const std::vector<float> ha = random_floats(static_cast<std::size_t>(m * lda), 21);
  const std::vector<float> hx = random_floats(static_cast<std::size_t>(n + 1), 22);
  kiln::Buffer a_store = kiln::Buffer::alloc(gpu, kiln::f32, {m * lda});
  kiln::Buffer x_store = kiln::Buffer::alloc(gpu, kiln::f32, {n + 1});
  kiln::Buffer y = kiln::Buffer::alloc(gpu, kiln::f32, {m});
  a_store.copy_from_host(ha.data(), ha.size() * sizeof(float));
  x_store.copy_from_host(hx.data(), hx.size() * sizeof(float));
  const auto a_off = kiln::TensorRef::matrix(static_cast<float*>(a_store.data()) + 1, kiln::f32, m, n, lda, gpu);
  const auto x = kiln::TensorRef::vector(x_store.data(), kiln::f32, n, gpu);

  SECTION("A one element in: float4 refused with a reason, everything else right") {
    const kiln::Args args{a_off, x, y};
    const kiln::Problem p = gemv.problem(args);
    CHECK(p.align_bytes == 4);

    std::vector<float> y_ref(static_cast<std::size_t>(m));
    const kiln::Args ref_args{kiln::TensorRef::matrix(const_cast<float*>(ha.data()) + 1, kiln::f32, m, n, lda, host),
                              kiln::TensorRef::vector(const_cast<float*>(hx.data()), kiln::f32, n, host),
                              kiln::TensorRef::vector(y_ref.data(), kiln::f32, m, host)};
    REQUIRE(schema.reference(ref_args, p).ok());

    std::int64_t refused = 0;
    for (const kiln::Variant* v : cuda_variants(rt.registry())) {
      for (const kiln::Config& config : configs_to_test(*v, dev, p)) {
        INFO(v->name() << " " << config.to_string());
        const kiln::Support s = v->supports(p, dev, config);
        if (is_vector_config(*v, config)) {
          CHECK(!s.ok);
          CHECK(contains(s.reason, "16-byte"));
          // launch() itself checks the pointers too and fails cleanly rather than faulting.
          const kiln::Status st = v->launch(args, p, config, nullptr, stream);
          CHECK(st.kind() == kiln::ErrorKind::unsupported);
          ++refused;
          continue;
        }
        REQUIRE(s.ok);
        y.fill_bytes(0xFF);
        REQUIRE(v->launch(args, p, config, nullptr, stream).ok());
        stream.synchronize();
        const std::vector<float> got = y.to_host<float>();
        CHECK(kiln::relative_error(kiln::TensorRef::vector(const_cast<float*>(got.data()), kiln::f32, m, host),
                                   ref_args.tensor(2)) <= 1e-4);
      }
    }
    CHECK(refused == 27);

    // op() skips the refused default and still computes the right thing.
    const kiln::Decision d = rt.explain(p);
    REQUIRE(d.variant != nullptr);
    CHECK(d.variant->name() == "gemv_smem_x");
    y.fill_bytes(0xFF);
    gemv(args);
    kiln::Stream().synchronize();
    const std::vector<float> got = y.to_host<float>();
    CHECK(kiln::relative_error(kiln::TensorRef::vector(const_cast<float*>(got.data()), kiln::f32, m, host),
                               ref_args.tensor(2)) <= 1e-4);
  }
  SECTION("x one element in") {
    const auto a = kiln::TensorRef::matrix(a_store.data(), kiln::f32, m, n, lda, gpu);
    const auto x_off = kiln::TensorRef::vector(static_cast<float*>(x_store.data()) + 1, kiln::f32, n, gpu);
    const kiln::Problem p = gemv.problem({a, x_off, y});
    CHECK(p.align_bytes == 4);
    CHECK(!wpr->supports(p, dev, wpr->default_config(dev)).ok);
  }
  SECTION("aligned views are accepted and chosen") {
    const auto a = kiln::TensorRef::matrix(a_store.data(), kiln::f32, m, n, lda, gpu);
    const kiln::Problem p = gemv.problem({a, x, y});
    CHECK(p.align_bytes == 16);
    CHECK(wpr->supports(p, dev, wpr->default_config(dev)).ok);
    const kiln::Decision d = rt.explain(p);
    REQUIRE(d.variant != nullptr);
    CHECK(d.variant->name() == "gemv_warp_per_row");
  }
}

TEST_CASE("op(\"gemv\") on device buffers end to end", "[gemv][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemv = rt.op("gemv");
  const kiln::OpSchema& schema = gemv.schema();
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::Device host = kiln::Device::host();
  kiln::OwnedStream stream(gpu);

  for (const auto& shape : {std::vector<std::int64_t>{1024, 1024}, std::vector<std::int64_t>{333, 1001}}) {
    const std::int64_t m = shape[0], n = shape[1];
    INFO(m << "x" << n);
    const std::vector<float> ha = random_floats(static_cast<std::size_t>(m * n), 31);
    const std::vector<float> hx = random_floats(static_cast<std::size_t>(n), 32);
    kiln::Buffer a = kiln::Buffer::alloc_pitched(gpu, kiln::f32, m, n);
    kiln::Buffer x = kiln::Buffer::alloc(gpu, kiln::f32, {n});
    kiln::Buffer y = kiln::Buffer::alloc(gpu, kiln::f32, {m});
    a.copy_from_host(ha.data(), ha.size() * sizeof(float));
    x.copy_from_host(hx.data(), hx.size() * sizeof(float));
    y.fill_bytes(0xFF);
    kiln::Stream().synchronize();  // the copies ran on the legacy stream; ours does not wait for it
    gemv({a, x, y}, stream);
    stream.synchronize();

    std::vector<float> y_ref(static_cast<std::size_t>(m));
    const kiln::Args ref_args{kiln::TensorRef::matrix(const_cast<float*>(ha.data()), kiln::f32, m, n, n, host),
                              kiln::TensorRef::vector(const_cast<float*>(hx.data()), kiln::f32, n, host),
                              kiln::TensorRef::vector(y_ref.data(), kiln::f32, m, host)};
    REQUIRE(schema.reference(ref_args, gemv.problem({a, x, y})).ok());
    const std::vector<float> got = y.to_host<float>();
    CHECK(kiln::relative_error(kiln::TensorRef::vector(const_cast<float*>(got.data()), kiln::f32, m, host),
                               ref_args.tensor(2)) <= 1e-4);
    // Pitched A and fresh x, y are 16-byte aligned: the default is the float4 warp-per-row kernel.
    CHECK(rt.explain(gemv.problem({a, x, y})).variant->name() == "gemv_warp_per_row");
  }
}

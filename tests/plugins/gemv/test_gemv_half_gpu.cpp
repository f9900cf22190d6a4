// f16 and bf16 gemv on the GPU: gemv_half_warp_per_row (every valid config up to a seeded sample,
// always with the default) and the vendor baseline gemv_cublas (cublasGemmEx with n = 1) against
// the f64 host reference on fresh random inputs (kiln::ProblemData: y poisoned first), y in f32
// and in the input type, dense and pitched A, at shapes whose n is not a multiple of 8 (7, 8 +/- 1,
// primes) and m not a multiple of any rows_per_block.  Then views that start 1..7 halves into
// their allocation (the 16-byte configs refuse them with a reason, the scalar ones compute them),
// a row pitch that is not a multiple of 8, and op() end to end.  Tolerances: the schema's
// (accumulation_tolerance of y's dtype and n).
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>
#include <kiln/op_schema.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "quick.hpp"
#include "register_gemv.hpp"
#include "register_vendor.hpp"
#include "test_util.hpp"

namespace {

const kiln::Device kGpu = kiln::Device::cuda(0);

kiln::Runtime& runtime() {
  static kiln::Runtime rt = [] {
    kiln::Registry reg;
    register_gemv(reg).throw_if_error("register_gemv");
    register_vendor(reg).throw_if_error("register_vendor");
    return kiln::Runtime(std::move(reg), kiln_test::offline_options());
  }();
  return rt;
}

// The default, one config per instantiated kernel (threads_per_row, vector_width,
// rows_per_thread), then a seeded sample of the rest: `max_configs` in all (kernels first).
std::vector<kiln::Config> configs_to_test(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p,
                                          std::size_t max_configs) {
  std::vector<kiln::Config> all = v.space().enumerate(dev, p);
  std::mt19937_64 rng(777);
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<kiln::Config> picked{v.default_config(dev)};
  auto kernel = [](const kiln::Config& c) {
    return c.get_or("threads_per_row", 0) * 100 + c.get_or("vector_width", 0) * 10 + c.get_or("rows_per_thread", 0);
  };
  for (const kiln::Config& c : all) {
    if (picked.size() >= max_configs) break;
    bool seen = false;
    for (const kiln::Config& q : picked) seen = seen || kernel(q) == kernel(c);
    if (!seen) picked.push_back(c);
  }
  for (const kiln::Config& c : all) {
    if (picked.size() >= max_configs) break;
    if (std::find(picked.begin(), picked.end(), c) == picked.end()) picked.push_back(c);
  }
  return picked;
}

const std::int64_t kShapes[][2] = {{1, 1},   {1, 7},    {3, 8},     {5, 9},     {7, 15},     {17, 16},
                                   {31, 17}, {33, 257}, {257, 1023}, {1000, 999}, {129, 4099}, {2048, 4096}};

}  // namespace

TEST_CASE("gemv_half_warp_per_row and gemv_cublas match the f64 reference", "[gemv][half][gpu]") {
  kiln::Runtime& rt = runtime();
  kiln::Op gemv = rt.op("gemv");
  const kiln::OpSchema& schema = gemv.schema();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Variant* half = rt.registry().find_variant("gemv_half_warp_per_row");
  const kiln::Variant* vendor = rt.registry().find_variant("gemv_cublas");
  REQUIRE(half != nullptr);
  REQUIRE(vendor != nullptr);
  const std::size_t max_configs = kiln_test::quick_mode() ? 10 : 30;  // >= the 9 kernels + default
  std::uint64_t seed = 3;
  int vector_runs = 0;
  for (kiln::DType t : {kiln::bf16, kiln::f16})
    for (std::int64_t y16 : {0, 1})
      for (const auto& shape : kShapes)
        for (bool pitched : {false, true}) {
          if (kiln_test::skip_when_quick(static_cast<double>(shape[0]) * static_cast<double>(shape[1]))) continue;
          const kiln::Problem wanted = schema.problem_from_dims(t, {shape[0], shape[1], y16}, kGpu);
          kiln::ProblemData data(schema, wanted, kGpu, seed++, {pitched, true});
          const kiln::Problem p = gemv.problem(data.device_args());
          REQUIRE(p.same_key(wanted));
          for (const kiln::Config& c : configs_to_test(*half, dev, p, max_configs)) {
            INFO(half->name() << " [" << c.to_string() << "] on " << p.key() << (pitched ? " pitched" : " dense")
                              << " align " << p.align_bytes);
            const kiln::Support s = half->supports(p, dev, c);
            if (!s.ok) {
              // Only the 16-byte configs refuse, and only for alignment (dense rows of n % 8 != 0).
              CHECK(c.get_or("vector_width", 1) == 8);
              CHECK(p.align_bytes < 16);
              CHECK(kiln_test::contains(s.reason, "16-byte"));
              continue;
            }
            data.poison_outputs();
            const kiln::Status st = half->launch(data.device_args(), p, c, nullptr, kiln::Stream());
            INFO(st.message());
            REQUIRE(st.ok());
            kiln::Stream().synchronize();
            CHECK(data.error() <= data.tolerance());
            if (c.get_or("vector_width", 1) == 8) ++vector_runs;
          }
          INFO("gemv_cublas on " << p.key() << (pitched ? " pitched" : " dense"));
          REQUIRE(vendor->supports(p, dev, {}).ok);
          data.poison_outputs();
          rt.run_variant(*vendor, kiln::Config{}, data.device_args());
          kiln::Stream().synchronize();
          CHECK(data.error() <= data.tolerance());
        }
  CHECK(vector_runs >= 2 * 2 * 10);  // every pitched shape ran 16-byte loads
}

TEST_CASE("gemv half: offset views and odd row pitches run on the scalar kernel", "[gemv][half][gpu]") {
  kiln::Runtime& rt = runtime();
  kiln::Op gemv = rt.op("gemv");
  const kiln::OpSchema& schema = gemv.schema();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Variant* half = rt.registry().find_variant("gemv_half_warp_per_row");
  const kiln::Device host = kiln::Device::host();
  for (kiln::DType t : {kiln::bf16, kiln::f16})
    for (const auto& sh : std::vector<std::array<std::int64_t, 5>>{
             {5, 9, 9, 0, 0}, {17, 33, 40, 3, 1}, {64, 1000, 1003, 1, 7}, {3, 4099, 4104, 8, 2}}) {
      // m x n in a row pitch of ld, A starting ao and x starting xo halves into their allocations.
      const std::int64_t m = sh[0], n = sh[1], ld = sh[2], ao = sh[3], xo = sh[4];
      INFO(kiln::dtype_name(t) << " " << m << "x" << n << " ld " << ld << " a+" << ao << " x+" << xo);
      // Host copies of the whole allocations (random, padding included), the same bytes on the GPU.
      const std::int64_t a_len = ao + m * ld, x_len = xo + n;
      std::vector<std::uint16_t> ha(static_cast<std::size_t>(a_len)), hx(static_cast<std::size_t>(x_len));
      kiln::default_fill(kiln::TensorRef::vector(ha.data(), t, a_len, host), 41 + n);
      kiln::default_fill(kiln::TensorRef::vector(hx.data(), t, x_len, host), 43 + n);
      kiln::Buffer ba = kiln::Buffer::alloc(kGpu, t, {a_len});
      kiln::Buffer bx = kiln::Buffer::alloc(kGpu, t, {x_len});
      kiln::Buffer by = kiln::Buffer::alloc(kGpu, kiln::f32, {m + 1});
      ba.copy_from_host(ha.data(), ha.size() * 2);
      bx.copy_from_host(hx.data(), hx.size() * 2);
      for (kiln::DType yt : {kiln::f32, t}) {
        const auto a = kiln::TensorRef::matrix(static_cast<std::uint16_t*>(ba.data()) + ao, t, m, n, ld, kGpu);
        const auto x = kiln::TensorRef::vector(static_cast<std::uint16_t*>(bx.data()) + xo, t, n, kGpu);
        const auto y = kiln::TensorRef::vector(by.data(), yt, m, kGpu);
        const kiln::Args args{a, x, y};
        const kiln::Problem p = gemv.problem(args);
        // The host reference on the same views of the host copies.
        kiln::Buffer want = kiln::Buffer::alloc(host, yt, {m});
        const kiln::Args host_args{kiln::TensorRef::matrix(ha.data() + ao, t, m, n, ld, host),
                                   kiln::TensorRef::vector(hx.data() + xo, t, n, host), want.ref()};
        REQUIRE(schema.reference(host_args, p).ok());
        kiln::Buffer got = kiln::Buffer::alloc(host, yt, {m});
        auto check = [&](const kiln::Variant& v, const kiln::Config& c) {
          by.fill_bytes(0xFF);
          rt.run_variant(v, c, args);
          kiln::Stream().synchronize();
          got.copy_from(y);
          CHECK(kiln::relative_error(got.ref(), want.ref()) <= schema.tolerance_for(p));
          // y[m] (past the view) is still poison: nothing wrote outside y.
          std::vector<std::uint8_t> bytes(static_cast<std::size_t>(m + 1) * 4);
          by.copy_to_host(bytes.data(), bytes.size());
          CHECK(bytes[static_cast<std::size_t>(m) * kiln::dtype_size(yt)] == 0xFF);
        };
        bool refused = false;
        for (const kiln::Config& c : configs_to_test(*half, dev, p, 12)) {
          INFO("[" << c.to_string() << "] align " << p.align_bytes);
          const kiln::Support s = half->supports(p, dev, c);
          if (!s.ok) {
            CHECK(c.get_or("vector_width", 1) == 8);
            CHECK(kiln_test::contains(s.reason, "16-byte"));
            refused = true;
            continue;
          }
          check(*half, c);
        }
        CHECK(refused == (p.align_bytes < 16));
        check(*half, {{"rows_per_block", 4}, {"threads_per_row", 32}, {"vector_width", 1}, {"rows_per_thread", 1}});
        check(*rt.registry().find_variant("gemv_cublas"), {});
        // op() chooses a variant that supports the view and gets it right.
        by.fill_bytes(0xFF);
        gemv(args);
        kiln::Stream().synchronize();
        got.copy_from(y);
        CHECK(kiln::relative_error(got.ref(), want.ref()) <= schema.tolerance_for(p));
      }
    }
}

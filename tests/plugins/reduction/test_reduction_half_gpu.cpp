// f16 and bf16 dot and reduce_sum on the GPU: <op>_half_warp_shuffle (a seeded sample of its
// configs, always with the default, and every instantiated kernel) and the vendor baselines
// (dot_cublas through cublasDotEx, reduce_sum_cub through TransformReduce) against the f64 host
// reference on fresh random inputs (kiln::ProblemData: output poisoned first), out in f32 and in
// the input type, at sizes around every vector width (1, 7, 8 +/- 1, 15, 16 +/- 1, ...) up to 10^7.
// Then hand-built views that start 0..7 halves past a 16-byte boundary (x and y alike and
// differently, which sends dot to its scalar instance), the counter reset, the empty sum, and
// op() end to end.  Tolerances: the schema's (accumulation_tolerance of out's dtype and n).
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>
#include <kiln/op_schema.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "quick.hpp"
#include "reduction_params.hpp"
#include "register_reduction.hpp"
#include "register_vendor.hpp"
#include "device_workspace.hpp"
#include "test_util.hpp"

namespace {

const kiln::Device kGpu = kiln::Device::cuda(0);

kiln::Runtime& runtime() {
  static kiln::Runtime rt = [] {
    kiln::Registry reg;
    register_reduction(reg).throw_if_error("register_reduction");
    register_vendor(reg).throw_if_error("register_vendor");
    return kiln::Runtime(std::move(reg), kiln_test::offline_options());
  }();
  return rt;
}

using Workspace = kiln_test::DeviceWorkspace;

// The default, one config per instantiated kernel (items, vector width), then others drawn with
// `seed`: `max` in all (kernels first, so max >= the kernel count runs every kernel).
std::vector<kiln::Config> configs_to_run(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p,
                                         std::uint64_t seed, std::size_t max) {
  std::vector<kiln::Config> all = v.space().enumerate(dev, p);
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<kiln::Config> picked{v.default_config(dev)};
  auto kernel = [](const kiln::Config& c) { return c.get_or("items_per_thread", 0) * 100 + c.get_or("vector_width", 0); };
  for (const kiln::Config& c : all) {
    if (picked.size() >= max) break;
    bool seen = false;
    for (const kiln::Config& q : picked) seen = seen || kernel(q) == kernel(c);
    if (!seen) picked.push_back(c);
  }
  for (const kiln::Config& c : all) {
    if (picked.size() >= max) break;
    if (std::find(picked.begin(), picked.end(), c) == picked.end()) picked.push_back(c);
  }
  return picked;
}

const std::int64_t kSizes[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 1000, 4097, 65537, (std::int64_t{1} << 20) | 7,
                               10000019};

std::vector<std::uint16_t> random_halves(std::int64_t n, kiln::DType t, std::uint64_t seed) {
  std::vector<std::uint16_t> v(static_cast<std::size_t>(n));
  kiln::default_fill(kiln::TensorRef::vector(v.data(), t, n, kiln::Device::host()), seed);
  return v;
}

double to_double(std::uint16_t b, kiln::DType t) {
  return t == kiln::bf16 ? kiln::bf16_to_float(b) : kiln::f16_to_float(b);
}

}  // namespace

TEST_CASE("half_warp_shuffle and the vendor baselines match the f64 reference", "[reduction][half][gpu]") {
  kiln::Runtime& rt = runtime();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  Workspace ws;
  const std::size_t max_configs = kiln_test::quick_mode() ? 8 : 24;
  for (const char* op : {"dot", "reduce_sum"}) {
    const kiln::OpSchema& schema = rt.registry().op(op);
    const std::string o = op;
    const kiln::Variant* half = rt.registry().find_variant(o + "_half_warp_shuffle");
    const kiln::Variant* vendor = rt.registry().find_variant(o == "dot" ? "dot_cublas" : "reduce_sum_cub");
    REQUIRE(half != nullptr);
    REQUIRE(vendor != nullptr);
    for (kiln::DType t : {kiln::bf16, kiln::f16})
      for (std::int64_t out16 : {0, 1}) {
        int runs = 0, vendor_runs = 0;
        for (std::int64_t n : kSizes) {
          if (kiln_test::skip_when_quick(static_cast<double>(n))) continue;
          kiln::ProblemData data(schema, schema.problem_from_dims(t, {n, out16}, kGpu), kGpu,
                                 static_cast<std::uint64_t>(n) * 131 + out16);
          const kiln::Problem& p = data.problem();
          for (const kiln::Config& c : configs_to_run(*half, dev, p, static_cast<std::uint64_t>(n), max_configs)) {
            INFO(half->name() << " [" << c.to_string() << "] on " << p.key());
            const kiln::Support s = half->supports(p, dev, c);
            INFO("refused: " << s.reason);
            REQUIRE(s.ok);
            data.poison_outputs();
            const kiln::Status st = half->launch(data.device_args(), p, c, ws.get(half->workspace_bytes(p, c)), kiln::Stream());
            INFO(st.message());
            REQUIRE(st.ok());
            kiln::Stream().synchronize();
            const double err = data.error();
            CHECK(err <= data.tolerance());
            ++runs;
          }
          // The vendor: cublasDotEx writes the input type only, so dot with an f32 out declines.
          const kiln::Support vs = vendor->supports(p, dev, {});
          if (o == "dot" && out16 == 0) {
            CHECK(!vs.ok);
            CHECK(kiln_test::contains(vs.reason, "out16"));
            continue;
          }
          INFO(vendor->name() << " on " << p.key());
          REQUIRE(vs.ok);
          data.poison_outputs();
          rt.run_variant(*vendor, kiln::Config{}, data.device_args());  // throws on failure
          kiln::Stream().synchronize();
          CHECK(data.error() <= data.tolerance());
          ++vendor_runs;
        }
        INFO(op << " " << kiln::dtype_name(t) << " out16=" << out16);
        CHECK(runs >= 10 * 6);
        CHECK((vendor_runs >= 10 || (o == "dot" && out16 == 0)));
      }
  }
}

TEST_CASE("half views that start anywhere: the head is peeled, dot with unlike offsets runs scalar",
          "[reduction][half][gpu]") {
  kiln::Runtime& rt = runtime();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  Workspace ws;
  for (kiln::DType t : {kiln::bf16, kiln::f16})
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{9},
                           std::int64_t{kiln_test::quick_mode() ? 1001 : 100003}}) {
      const std::int64_t total = n + 16;
      const std::vector<std::uint16_t> hx = random_halves(total, t, 5 + n), hy = random_halves(total, t, 9 + n);
      kiln::Buffer bx = kiln::Buffer::alloc(kGpu, t, {total});
      kiln::Buffer by = kiln::Buffer::alloc(kGpu, t, {total});
      bx.copy_from_host(hx.data(), hx.size() * 2);
      by.copy_from_host(hy.data(), hy.size() * 2);
      kiln::Buffer out = kiln::Buffer::alloc(kGpu, kiln::f32, {1});
      for (int xo = 0; xo < 8; ++xo)
        for (int yo : {xo, (xo + 3) % 8})
          for (kiln::DType out_t : {kiln::f32, t})
            for (const char* op : {"reduce_sum", "dot"}) {
              const bool is_dot = std::string(op) == "dot";
              if (!is_dot && yo != xo) continue;
              const auto x = kiln::TensorRef::vector(static_cast<std::uint16_t*>(bx.data()) + xo, t, n, kGpu);
              const auto y = kiln::TensorRef::vector(static_cast<std::uint16_t*>(by.data()) + yo, t, n, kGpu);
              const auto o = kiln::TensorRef::vector(out.data(), out_t, 1, kGpu);
              const kiln::Args args = is_dot ? kiln::Args{x, y, o} : kiln::Args{x, o};
              const kiln::Problem p = rt.op(op).problem(args);
              double want = 0.0;
              for (std::int64_t i = 0; i < n; ++i)
                want += is_dot ? to_double(hx[xo + i], t) * to_double(hy[yo + i], t) : to_double(hx[xo + i], t);
              const float want_f = static_cast<float>(want);
              const double want_out =
                  out_t == kiln::f32 ? want_f
                                     : to_double(t == kiln::bf16 ? kiln::float_to_bf16(want_f) : kiln::float_to_f16(want_f), t);
              const kiln::Variant* v = rt.registry().find_variant(std::string(op) + "_half_warp_shuffle");
              for (const kiln::Config& c : configs_to_run(*v, dev, p, 3, kiln_test::quick_mode() ? 2 : 6)) {
                INFO(op << " " << kiln::dtype_name(t) << " n=" << n << " x+" << xo << " y+" << yo << " out "
                        << kiln::dtype_name(out_t) << " [" << c.to_string() << "] align " << p.align_bytes);
                REQUIRE(v->supports(p, dev, c).ok);
                out.fill_bytes(0xFF);
                const kiln::Status st = v->launch(args, p, c, ws.get(v->workspace_bytes(p, c)), kiln::Stream());
                INFO(st.message());
                REQUIRE(st.ok());
                kiln::Stream().synchronize();
                unsigned char raw[4];  // the whole f32 buffer: an f16 / bf16 out is its first 2 bytes
                out.copy_to_host(raw, sizeof(raw));
                float got_f = 0.0f;
                std::uint16_t got_h = 0;
                std::memcpy(&got_f, raw, sizeof(got_f));
                std::memcpy(&got_h, raw, sizeof(got_h));
                const double got = out_t == kiln::f32 ? static_cast<double>(got_f) : to_double(got_h, t);
                const double tol = rt.registry().op(op).tolerance_for(p);
                // Relative, except near a cancelling sum of a few terms (|sum| < 1), where the f32
                // rounding of the partial sums is measured against 1.
                CHECK(std::fabs(got - want_out) <= tol * std::max(std::fabs(want_out), 1.0));
              }
            }
    }
}

TEST_CASE("half_warp_shuffle: the counter is reset, the empty sum is 0, op() dispatches", "[reduction][half][gpu]") {
  kiln::Runtime& rt = runtime();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  Workspace ws;
  for (const char* op : {"dot", "reduce_sum"}) {
    const kiln::OpSchema& schema = rt.registry().op(op);
    const kiln::Variant* v = rt.registry().find_variant(std::string(op) + "_half_warp_shuffle");
    kiln::ProblemData data(schema, schema.problem_from_dims(kiln::bf16, {1000003, 1}, kGpu), kGpu, 17);
    const kiln::Problem& p = data.problem();
    const kiln::Config c = v->default_config(dev);
    void* w = ws.get(v->workspace_bytes(p, c));
    ws.buffer().fill_bytes(0xA5);  // garbage, as a fresh workspace may hold
    for (int rep = 0; rep < 3; ++rep) {
      INFO(op << " launch " << rep);
      data.poison_outputs();
      REQUIRE(v->launch(data.device_args(), p, c, w, kiln::Stream()).ok());
      kiln::Stream().synchronize();
      CHECK(data.error() <= data.tolerance());
      std::uint32_t counter = 1;
      std::memcpy(&counter, ws.buffer().to_host<std::uint8_t>().data(), sizeof(counter));
      CHECK(counter == 0);
    }

    // The empty sum, in f32 and in the input type.
    kiln::Buffer x = kiln::Buffer::alloc(kGpu, kiln::f16, {8});
    kiln::Buffer out = kiln::Buffer::alloc(kGpu, kiln::f32, {1});
    const auto empty = kiln::TensorRef::vector(x.data(), kiln::f16, 0, kGpu);
    for (kiln::DType out_t : {kiln::f32, kiln::f16}) {
      const auto o = kiln::TensorRef::vector(out.data(), out_t, 1, kGpu);
      const kiln::Args args = std::string(op) == "dot" ? kiln::Args{empty, empty, o} : kiln::Args{empty, o};
      const kiln::Problem pe = rt.op(op).problem(args);
      out.fill_bytes(0xFF);
      REQUIRE(v->launch(args, pe, c, ws.get(v->workspace_bytes(pe, c)), kiln::Stream()).ok());
      kiln::Stream().synchronize();
      std::uint8_t bytes[4] = {1, 1, 1, 1};
      out.copy_to_host(bytes, sizeof(bytes));
      CHECK(bytes[0] == 0);  // +0 in f16 (2 bytes) and f32 (4 bytes)
      CHECK(bytes[1] == 0);
      if (out_t == kiln::f32) CHECK((bytes[2] == 0 && bytes[3] == 0));
      if (out_t == kiln::f16) CHECK((bytes[2] == 0xFF && bytes[3] == 0xFF));  // nothing written past out
    }

    // op() end to end on its own stream, bf16 in and out.
    kiln::OwnedStream own(kGpu);
    data.poison_outputs();
    kiln::Stream().synchronize();
    rt.op(op)(data.device_args(), own);
    own.synchronize();
    CHECK(data.error() <= data.tolerance());
  }
}

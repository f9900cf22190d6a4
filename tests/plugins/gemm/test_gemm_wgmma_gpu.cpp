// gemm_wgmma (Hopper wgmma fed by TMA) on the GPU against the f64 host reference on fresh random
// inputs: every instantiated config, bf16 and f16, C in f32 or the input type (and f32 as TF32 on
// the rows built for it, allow_tf32 = 1, tolerance 5e-3), sizes that are not
// multiples of any tile (m or n below a tile, k not a multiple of 64, k below one stage),
// padded rows, batches with and without a broadcast B, the output poisoned first (NaN in C with
// beta = 0 must not leak).  Then alpha and beta on hand-built views, the prepared (memo-hit)
// launch, and the reasons it declines what it does not compute (f32 with allow_tf32 = 0 or 2 above all).  Off compute capability 9.0 it only warns
// (test_main exits 77, skipped, when there is no GPU at all).
#include <cuda_runtime.h>

#include <kiln/args.hpp>
#include <kiln/buffer.hpp>
#include <kiln/op_schema.hpp>
#include <kiln/runtime.hpp>
#include <kiln/tensor_ref.hpp>
#include <kiln/variant.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <cstdint>
#include <string>

#include "catch.hpp"
#include "quick.hpp"
#include "register_gemm.hpp"
#include "test_util.hpp"
#include "wgmma_configs.hpp"
#include "wgmma_params.hpp"

namespace {

const kiln::Device kGpu = kiln::Device::cuda(0);

kiln::Runtime& runtime() {
  static kiln::Runtime rt = [] {
    kiln::Registry reg;
    register_gemm(reg).throw_if_error("register_gemm");
    return kiln::Runtime(std::move(reg), kiln_test::offline_options());
  }();
  return rt;
}

bool on_hopper() {
  const kiln::DeviceInfo& d = kiln::device_info(kGpu);
  return d.cc_major == 9 && d.cc_minor == 0;
}

const kiln::Variant& wgmma() {
  const kiln::Variant* v = runtime().registry().find_variant("gemm_wgmma");
  REQUIRE(v != nullptr);
  return *v;
}

// Whether supports() has the path of `p` switched off (gemm_wgmma_variant.cpp's kWgmma*Enabled):
// then its checks are skipped with a warning, so that one line there disables a path and its tests.
bool switched_off(const kiln::Problem& p) {
  const kiln::Variant& v = wgmma();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Support s = v.supports(p, dev, v.default_config_for(dev, p));
  if (!s.ok && kiln_test::contains(s.reason, "switched off")) {
    WARN("gemm_wgmma: " << s.reason << ": not checked");
    return true;
  }
  return false;
}

// Runs every config of gemm_wgmma on `data` (poisoned first) and checks each; returns how many ran.
// A problem whose pitches or batch strides are not 16-byte aligned must be declined instead.
int check_all_configs(kiln::ProblemData& data, const std::string& what) {
  kiln::Runtime& rt = runtime();
  const kiln::Variant& v = wgmma();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Problem p = rt.make_problem(rt.registry().op("gemm"), data.device_args());
  int ran = 0;
  for (const kiln::Config& cfg : v.space().enumerate(dev, p)) {
    const kiln::Support s = v.supports(p, dev, cfg);
    INFO("gemm_wgmma [" << cfg.to_string() << "] on " << p.key() << " " << what << " align " << p.align_bytes << ": "
                        << s.reason);
    if (p.align_bytes < 16) {
      CHECK_FALSE(s.ok);
      CHECK(kiln_test::contains(s.reason, "16-byte"));
      ++ran;  // declined as it should
      continue;
    }
    CHECK(s.ok);
    if (!s.ok) continue;
    data.poison_outputs();
    const kiln::Status st = v.launch(data.device_args(), p, cfg, nullptr, kiln::Stream());
    INFO(st.message());
    CHECK(st.ok());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    if (!st.ok()) continue;
    const double err = data.error();
    CHECK(err <= data.tolerance());
    ++ran;
  }
  return ran;
}

}  // namespace

TEST_CASE("gemm_wgmma matches the host reference at sizes off its tiles, batches and both C types", "[gemm][wgmma][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  const kiln::OpSchema& s = runtime().registry().op("gemm");
  std::uint64_t seed = 500;
  // m = 1, m or n below a tile, k not a multiple of 64, k below one 64-deep stage, several waves.
  const char* shapes[] = {"1x40x24", "37x29x45", "130x257x71", "200x72x1000", "513x260x129", "64x300x8",
                          "1000x1100x300"};
  for (kiln::DType t : {kiln::bf16, kiln::f16})
    for (const char* mnk : shapes)
      for (const char* extra : {",tb=1", ",tb=1,c16=1", ",tb=1,batch=3", ",tb=1,batch=2,c16=1"}) {
        const std::string shape = std::string(mnk) + extra;
        const kiln::Problem p = s.problem_from_shape(t, shape, kGpu);
        // Quick (sanitizer) runs keep the small shapes: every config, both types, both C types.
        if (kiln_test::skip_when_quick(double(p.dims[0]) * p.dims[1] * p.dims[2] * p.dims[4], 3e6)) continue;
        // Pitched rows keep every row 16-byte aligned whatever k is.
        kiln::ProblemData data(s, p, kGpu, ++seed, {true, true});
        const std::string what = std::string(kiln::dtype_name(t)) + " " + shape;
        CHECK(check_all_configs(data, what) == kiln::gemm::kWgmmaConfigCount);
      }
}

TEST_CASE("gemm_wgmma TF32 (allow_tf32=1) matches the host reference at sizes off its tiles and batches", "[gemm][wgmma][tf32][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  const kiln::OpSchema& s = runtime().registry().op("gemm");
  if (switched_off(s.problem_from_shape(kiln::f32, "256x256x256,tb=1,tf32=1", kGpu))) return;
  constexpr int kTf32Configs = static_cast<int>(sizeof(kiln::gemm::kWgmmaTf32Rows) / sizeof(int));
  std::uint64_t seed = 700;
  // A stage is 32 f32 of k: k = 8 and 24 are below one stage, 45, 71, 129, 300, 1000 not multiples of it.
  const char* shapes[] = {"1x40x24", "37x29x45", "130x257x71", "200x72x1000", "513x260x129", "64x300x8",
                          "1000x1100x300"};
  for (const char* mnk : shapes)
    for (const char* extra : {",tb=1,tf32=1", ",tb=1,tf32=1,batch=3"}) {
      const std::string shape = std::string(mnk) + extra;
      const kiln::Problem p = s.problem_from_shape(kiln::f32, shape, kGpu);
      REQUIRE(p.dims[3] == 1);
      if (kiln_test::skip_when_quick(double(p.dims[0]) * p.dims[1] * p.dims[2] * p.dims[4], 3e6)) continue;
      kiln::ProblemData data(s, p, kGpu, ++seed, {true, true});
      // The gemm README's TF32 tolerance (10 mantissa bits), not the fp32 one.
      CHECK(data.tolerance() == 5e-3);
      CHECK(check_all_configs(data, "f32 (TF32) " + shape) == kTf32Configs);
    }
}

TEST_CASE("gemm_wgmma: alpha and beta, a broadcast B, operands at an offset, the prepared launch", "[gemm][wgmma][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  kiln::Runtime& rt = runtime();
  const std::int64_t m = 200, n = 136, k = 88, batch = 3;
  for (kiln::DType t : {kiln::bf16, kiln::f16, kiln::f32})
    for (bool c16 : {false, true}) {
      if (t == kiln::f32 && c16) continue;  // f32 inputs (TF32): C is f32 either way
      INFO(kiln::dtype_name(t) << (c16 ? " C in the input type" : " C in f32"));
      const kiln::DType ct = c16 ? t : kiln::f32;
      const double allow_tf32 = t == kiln::f32 ? 1.0 : 0.0;
      // A: batch-strided, 8 elements (16 bytes) into its allocation.
      kiln::Buffer a_store = kiln::Buffer::alloc(kGpu, t, {batch * m * k + 8});
      const auto a = kiln::TensorRef::matrix(static_cast<char*>(a_store.data()) + 16, t, m, k, k, kGpu).batched(batch, m * k);
      // B: one n x k pitched matrix (column-major k x n) shared by every batch entry.
      kiln::Buffer b_store = kiln::Buffer::alloc_pitched(kGpu, t, n, k);
      const auto b = kiln::TensorRef::matrix(b_store.data(), t, n, k, b_store.row_stride(), kGpu).batched(batch, 0).transposed();
      kiln::Buffer c = kiln::Buffer::alloc(kGpu, ct, {batch, m, n});
      kiln::Buffer ha = kiln::Buffer::alloc(kiln::Device::host(), t, {batch * m * k + 8});
      kiln::Buffer hb = kiln::Buffer::alloc_pitched(kiln::Device::host(), t, n, k);
      kiln::Buffer hc = kiln::Buffer::alloc(kiln::Device::host(), ct, {batch, m, n});
      kiln::default_fill(ha.ref(), 21);
      kiln::default_fill(kiln::TensorRef::matrix(hb.data(), t, n, k, hb.row_stride(), kiln::Device::host()), 22);
      kiln::default_fill(hc.ref(), 23);
      a_store.copy_from(ha);
      kiln::copy(kiln::TensorRef::matrix(b_store.data(), t, n, k, b_store.row_stride(), kGpu),
                 kiln::TensorRef::matrix(hb.data(), t, n, k, hb.row_stride(), kiln::Device::host()));
      c.copy_from(hc);
      const kiln::Args args({a, b, c}, {0.75, -0.5, allow_tf32});
      const kiln::Problem p = rt.op("gemm").problem(args);
      REQUIRE(p.dims[4] == batch);
      REQUIRE(p.dims[6] == 1);
      if (switched_off(p)) continue;
      const kiln::Variant& v = wgmma();
      const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
      const kiln::Config cfg = v.default_config_for(dev, p);
      REQUIRE(v.supports(p, dev, cfg).ok);
      // The memo-hit path: bound once, run with the call's arguments.
      const auto prepared = v.prepare(p, cfg, dev);
      REQUIRE(prepared != nullptr);
      const kiln::Status st = prepared->run(args, p, nullptr, kiln::Stream());
      INFO(st.message());
      REQUIRE(st.ok());
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      const auto ha_view = kiln::TensorRef::matrix(static_cast<char*>(ha.data()) + 16, t, m, k, k, kiln::Device::host())
                               .batched(batch, m * k);
      const auto hb_view = kiln::TensorRef::matrix(hb.data(), t, n, k, hb.row_stride(), kiln::Device::host())
                               .batched(batch, 0)
                               .transposed();
      REQUIRE(rt.registry().op("gemm").reference(kiln::Args({ha_view, hb_view, hc.ref()}, {0.75, -0.5, allow_tf32}), p).ok());
      kiln::Buffer got = kiln::Buffer::alloc(kiln::Device::host(), ct, {batch, m, n});
      got.copy_from(c);
      const double tolerance = t == kiln::f32 ? 5e-3 : kiln::accumulation_tolerance(ct, k);  // TF32: the README's
      CHECK(kiln::relative_error(got.ref(), hc.ref()) <= tolerance);
    }
}

TEST_CASE("gemm_wgmma declines what it does not compute, with a reason", "[gemm][wgmma][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  const kiln::OpSchema& s = runtime().registry().op("gemm");
  const kiln::Variant& v = wgmma();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Config cfg = v.default_config(dev);
  auto reason = [&](kiln::DType t, const char* shape, int align) {
    kiln::Problem p = s.problem_from_shape(t, shape, kGpu);
    p.align_bytes = align;
    const kiln::Support sup = v.supports(p, dev, cfg);
    CHECK_FALSE(sup.ok);
    return sup.reason;
  };
  CHECK(kiln_test::contains(reason(kiln::bf16, "256x256x256,tb=0", 16), "column-major B"));
  CHECK(kiln_test::contains(reason(kiln::bf16, "256x256x256,ta=1,tb=1", 16), "row-major A"));
  CHECK(kiln_test::contains(reason(kiln::f16, "256x256x256,tb=1", 8), "16-byte"));
  // f32 only as TF32 with allow_tf32 = 1: never IEEE fp32 (0) nor 3xTF32 (2).
  CHECK(kiln_test::contains(reason(kiln::f32, "256x256x256,tb=1", 16), "needs allow_tf32=1"));
  CHECK(kiln_test::contains(reason(kiln::f32, "256x256x256,tb=1,tf32=2", 16), "needs allow_tf32=1"));
  CHECK(kiln_test::contains(reason(kiln::f32, "256x256x256,tb=1,tf32=0", 16), "allow_tf32=0"));
  CHECK(kiln_test::contains(reason(kiln::f32, "256x256x256,tf32=1", 16), "column-major B"));
  CHECK(kiln_test::contains(reason(kiln::f32, "256x256x256,ta=1,tb=1,tf32=1", 16), "row-major A"));
  CHECK(kiln_test::contains(reason(kiln::f32, "256x256x256,tb=1,tf32=1", 8), "16-byte"));
  {  // a row not built for TF32 declines f32 problems (the space leaves it out for them too)
    const kiln::Problem p = s.problem_from_shape(kiln::f32, "256x256x256,tb=1,tf32=1", kGpu);
    for (int i = 0; i < kiln::gemm::kWgmmaConfigCount; ++i) {
      if (kiln::gemm::wgmma_tf32_row(i)) continue;
      const kiln::Config row = kiln::gemm::wgmma_config(i);
      const kiln::Support sup = v.supports(p, dev, row);
      CHECK_FALSE(sup.ok);
      CHECK(kiln_test::contains(sup.reason, "not built for TF32"));
      for (const kiln::Config& e : v.space().enumerate(dev, p)) CHECK_FALSE(e == row);
    }
  }
  kiln::DeviceInfo ampere = dev;
  ampere.cc_major = 8;
  const kiln::Problem p = s.problem_from_shape(kiln::bf16, "256x256x256,tb=1", kGpu);
  CHECK(kiln_test::contains(v.supports(p, ampere, cfg).reason, "compute capability 9.0"));
}

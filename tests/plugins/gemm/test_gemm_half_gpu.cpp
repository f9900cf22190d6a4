// Half-precision and strided gemm on the GPU: gemm_half_mma (every instantiated config) and
// gemm_cublaslt (its first heuristic choices, and f32 / TF32 too) against the f64 host reference on
// fresh random inputs — f16 and bf16, C in f32 or the input type, row- and column-major operands,
// sizes that are not multiples of any tile, padded rows, batches with and without broadcast,
// alpha and beta, the output poisoned first.  Then hand-built views: an operand that starts at an
// offset inside its allocation, a transposed view of a pitched buffer, a broadcast A.
#include <cuda_runtime.h>

#include <kiln/kiln.hpp>
#include <kiln/half.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "quick.hpp"
#include "register_gemm.hpp"
#include "register_vendor.hpp"
#include "test_util.hpp"

namespace {

const kiln::Device kGpu = kiln::Device::cuda(0);

kiln::Runtime& runtime() {
  static kiln::Runtime rt = [] {
    kiln::Registry reg;
    register_gemm(reg).throw_if_error("register_gemm");
    register_vendor(reg).throw_if_error("register_vendor");
    return kiln::Runtime(std::move(reg), kiln_test::offline_options());
  }();
  return rt;
}

// Runs `variant` with every config it supports on `data` (at most `max_configs`), checking each
// against the reference; returns how many ran.
int check_variant(const std::string& variant, kiln::ProblemData& data, int max_configs, const std::string& what) {
  kiln::Runtime& rt = runtime();
  const kiln::Variant* v = rt.registry().find_variant(variant);
  REQUIRE(v != nullptr);
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Problem p = rt.make_problem(rt.registry().op("gemm"), data.device_args());
  int ran = 0;
  for (const kiln::Config& cfg : v->space().enumerate(dev, p)) {
    if (ran >= max_configs) break;
    const kiln::Support s = v->supports(p, dev, cfg);
    if (!s.ok) {
      INFO(variant << " " << cfg.to_string() << " declines " << p.key() << ": " << s.reason);
      CHECK((variant == "gemm_cublaslt" && kiln_test::contains(s.reason, "heuristic offers")));
      continue;
    }
    INFO(variant << " [" << cfg.to_string() << "] on " << p.key() << " " << what << " align " << p.align_bytes);
    data.poison_outputs();
    kiln::Buffer ws;
    if (const std::size_t bytes = v->workspace_bytes(p, cfg)) ws = kiln::Buffer::alloc(kGpu, kiln::u8, {std::int64_t(bytes)});
    const kiln::Status st = v->launch(data.device_args(), p, cfg, ws.data(), kiln::Stream());
    INFO(st.message());
    REQUIRE(st.ok());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const double err = data.error();
    CHECK(err <= data.tolerance());
    ++ran;
  }
  return ran;
}

}  // namespace

TEST_CASE("half gemm variants match the host reference on every layout and batch form", "[gemm][half][gpu]") {
  kiln::Runtime& rt = runtime();
  const kiln::OpSchema& s = rt.registry().op("gemm");
  std::uint64_t seed = 1;
  const char* shapes[] = {"1x1x1", "37x29x45", "130x257x71", "200x72x1000", "513x260x129"};
  for (kiln::DType t : {kiln::bf16, kiln::f16})
    for (const char* mnk : shapes)
      for (int layout = 0; layout < 4; ++layout)
        for (const char* extra : {"", ",c16=1", ",batch=3", ",batch=2,c16=1"}) {
          // A 1 x 1 operand is row- and column-major at once: its key says ta = tb = 0.
          if (layout != 0 && std::string(mnk) == "1x1x1") continue;
          const std::string shape = std::string(mnk) + ",ta=" + std::to_string(layout & 1) + ",tb=" +
                                    std::to_string(layout >> 1) + extra;
          const kiln::Problem p = s.problem_from_shape(t, shape, kGpu);
          if (kiln_test::skip_when_quick(double(p.dims[0]) * p.dims[1] * p.dims[2] * p.dims[4])) continue;
          for (bool pitched : {false, true}) {
            kiln::ProblemData data(s, p, kGpu, ++seed, {pitched, true});
            const std::string what = std::string(kiln::dtype_name(t)) + " " + shape + (pitched ? " pitched" : " dense");
            CHECK(check_variant("gemm_cublaslt", data, 3, what) >= 1);
            // gemm_half_mma: row-major A, 16-byte aligned rows (k and n multiples of 8 when dense).
            const kiln::Problem dp = rt.make_problem(s, data.device_args());
            const kiln::Variant* half = rt.registry().find_variant("gemm_half_mma");
            if (dp.dims[5] == 0 && dp.align_bytes >= 16)
              CHECK(check_variant("gemm_half_mma", data, 99, what) == 3);
            else
              CHECK_FALSE(half->supports(dp, kiln::device_info(kGpu), half->default_config(kiln::device_info(kGpu))).ok);
          }
        }
}

TEST_CASE("gemm_cublaslt computes f32 and TF32 problems in every layout", "[gemm][half][gpu]") {
  const kiln::OpSchema& s = runtime().registry().op("gemm");
  std::uint64_t seed = 1000;
  for (const char* shape : {"37x29x45,ta=1", "130x257x71,tb=1,batch=2", "64x64x300,ta=1,tb=1", "100x100x100,tf32=1,ta=1"}) {
    kiln::ProblemData data(s, s.problem_from_shape(kiln::f32, shape, kGpu), kGpu, ++seed, {true, true});
    CHECK(check_variant("gemm_cublaslt", data, 2, shape) >= 1);
  }
}

TEST_CASE("hand-built views: offsets, a transposed pitched buffer, broadcast A, alpha and beta", "[gemm][half][gpu]") {
  kiln::Runtime& rt = runtime();
  const std::int64_t m = 40, n = 24, k = 56, batch = 3;
  for (kiln::DType t : {kiln::bf16, kiln::f16})
    for (const char* variant : {"gemm_cublaslt", "gemm_half_mma"}) {
      INFO(variant << " " << kiln::dtype_name(t));
      // A: one matrix broadcast to every batch entry, 8 elements (16 bytes) into its allocation.
      kiln::Buffer a_store = kiln::Buffer::alloc(kGpu, t, {m * k + 8});
      const auto a = kiln::TensorRef::matrix(static_cast<char*>(a_store.data()) + 16, t, m, k, k, kGpu).batched(batch, 0);
      // B: each entry the transpose of an n x k pitched buffer (column-major k x n), batch-strided.
      kiln::Buffer b_store = kiln::Buffer::alloc_pitched(kGpu, t, batch * n, k);
      const auto b = kiln::TensorRef::matrix(b_store.data(), t, n, k, b_store.row_stride(), kGpu)
                         .batched(batch, n * b_store.row_stride())
                         .transposed();
      kiln::Buffer c = kiln::Buffer::alloc(kGpu, kiln::f32, {batch, m, n});
      // Host copies: random inputs, C's old values for beta.
      kiln::Buffer ha = kiln::Buffer::alloc(kiln::Device::host(), t, {m * k + 8});
      kiln::Buffer hb = kiln::Buffer::alloc_pitched(kiln::Device::host(), t, batch * n, k);
      kiln::Buffer hc = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {batch, m, n});
      kiln::default_fill(ha.ref(), 11);
      kiln::default_fill(kiln::TensorRef::matrix(hb.data(), t, batch * n, k, hb.row_stride(), kiln::Device::host()), 12);
      kiln::default_fill(hc.ref(), 13);
      a_store.copy_from(ha);
      kiln::copy(kiln::TensorRef::matrix(b_store.data(), t, batch * n, k, b_store.row_stride(), kGpu),
                 kiln::TensorRef::matrix(hb.data(), t, batch * n, k, hb.row_stride(), kiln::Device::host()));
      c.copy_from(hc);
      const kiln::Problem p = rt.op("gemm").problem({a, b, c});
      CHECK(p.dims[4] == batch);
      CHECK(p.dims[6] == 1);  // tb
      const kiln::Variant* v = rt.registry().find_variant(variant);
      const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
      const kiln::Config cfg = v->default_config_for(dev, p);
      REQUIRE(v->supports(p, dev, cfg).ok);
      rt.run_variant(*v, cfg, kiln::Args({a, b, c}, {0.75, -0.5}));
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      // The reference on host views of the same layout.
      const auto ha_view = kiln::TensorRef::matrix(static_cast<char*>(ha.data()) + 16, t, m, k, k, kiln::Device::host()).batched(batch, 0);
      const auto hb_view = kiln::TensorRef::matrix(hb.data(), t, n, k, hb.row_stride(), kiln::Device::host())
                               .batched(batch, n * hb.row_stride())
                               .transposed();
      REQUIRE(rt.registry().op("gemm").reference(kiln::Args({ha_view, hb_view, hc.ref()}, {0.75, -0.5}), p).ok());
      kiln::Buffer got = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {batch, m, n});
      got.copy_from(c);
      CHECK(kiln::relative_error(got.ref(), hc.ref()) <= kiln::accumulation_tolerance(kiln::f32, k));
    }
}

TEST_CASE("op() runs bf16 gemm through the default choice", "[gemm][half][gpu]") {
  kiln::Runtime& rt = runtime();
  const kiln::OpSchema& s = rt.registry().op("gemm");
  kiln::ProblemData data(s, s.problem_from_shape(kiln::bf16, "257x129x300,c16=1", kGpu), kGpu, 77, {false, true});
  data.poison_outputs();
  rt.op("gemm")(data.device_args());
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(data.error() <= data.tolerance());
  const kiln::Decision d = rt.explain(rt.make_problem(s, data.device_args()));
  REQUIRE(d.variant != nullptr);
  CHECK(d.variant->name() == "gemm_cublaslt");  // vendor above the mma.sync kernel until tuned
}

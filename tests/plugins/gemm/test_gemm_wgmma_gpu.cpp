// gemm_wgmma (Hopper wgmma fed by TMA) on the GPU against the f64 host reference on fresh random
// inputs: every instantiated config, bf16 and f16, C in f32 or the input type (and f32 as TF32 on
// the rows built for it, allow_tf32 = 1, tolerance 5e-3; f32 as 3xTF32, allow_tf32 = 2, every
// layout, tolerance 1e-4; and the column-major A / row-major B layouts on theirs), sizes that are not
// multiples of any tile (m or n below a tile, k not a multiple of 64, k below one stage),
// padded rows, batches with and without a broadcast B, the output poisoned first (NaN in C with
// beta = 0 must not leak).  Then alpha and beta on hand-built views, the prepared (memo-hit)
// launch, and the reasons it declines what it does not compute (f32 with allow_tf32 = 0 above all).  Off compute capability 9.0 it only warns
// (test_main exits 77, skipped, when there is no GPU at all).
#include <cuda_runtime.h>

#include <kiln/args.hpp>
#include <kiln/buffer.hpp>
#include <kiln/op_schema.hpp>
#include <kiln/runtime.hpp>
#include <kiln/tensor_ref.hpp>
#include <kiln/variant.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
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
// A problem whose pitches or batch strides are not 16-byte aligned must be declined instead, unless
// `must_launch` (the problem was built aligned, so a decline would hide the kernel from the test).
// `worst`, when given, receives the largest error seen.
// `only_split`: just the split-k rows (splits > 1); `only_swap`: just the swapped small-m rows;
// `only_bn` (non-zero): just the rows with that tile width.
int check_all_configs(kiln::ProblemData& data, const std::string& what, bool must_launch = false,
                      double* worst = nullptr, bool only_split = false, bool only_swap = false, int only_bn = 0) {
  kiln::Runtime& rt = runtime();
  const kiln::Variant& v = wgmma();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Problem p = rt.make_problem(rt.registry().op("gemm"), data.device_args());
  int ran = 0;
  for (const kiln::Config& cfg : v.space().enumerate(dev, p)) {
    if (only_split && cfg.get("splits") == 1) continue;
    if (only_swap && cfg.get("swap") != 1) continue;
    if (only_bn != 0 && cfg.get("BN") != only_bn) continue;
    const kiln::Support s = v.supports(p, dev, cfg);
    INFO("gemm_wgmma [" << cfg.to_string() << "] on " << p.key() << " " << what << " align " << p.align_bytes << ": "
                        << s.reason);
    if (must_launch) CHECK(p.align_bytes >= 16);
    if (p.align_bytes < 16) {
      CHECK_FALSE(s.ok);
      CHECK(kiln_test::contains(s.reason, "16-byte"));
      ++ran;  // declined as it should
      continue;
    }
    CHECK(s.ok);
    if (!s.ok) continue;
    data.poison_outputs();
    // 3xTF32 splits A and B into a workspace, split k keeps its partials there (fresh per launch
    // here and NaN-filled, so stale or unwritten partials cannot pass).
    const std::size_t ws_bytes = v.workspace_bytes(p, cfg);
    kiln::Buffer ws;
    if (ws_bytes > 0) {
      ws = kiln::Buffer::alloc(kGpu, kiln::u8, {static_cast<std::int64_t>(ws_bytes)});
      REQUIRE(cudaMemset(ws.data(), 0xFF, ws_bytes) == cudaSuccess);  // NaN everywhere until the split writes
    }
    const kiln::Status st = v.launch(data.device_args(), p, cfg, ws_bytes ? ws.data() : nullptr, kiln::Stream());
    INFO(st.message());
    CHECK(st.ok());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    if (!st.ok()) continue;
    const double err = data.error();
    CHECK(err <= data.tolerance());
    if (worst != nullptr) *worst = std::max(*worst, err);
    ++ran;
  }
  return ran;
}

// Shapes for the paths added after the first (TF32, MN-major layouts): single matrices (pitched rows)
// off every tile, m = 1, m or n below a tile, k below one stage and not a multiple of it; and dense
// batches (ProblemData pitches rank-2 tensors only) whose extents keep every pitch and batch stride
// 16-byte aligned in every layout, so that nothing is declined for alignment.
// How many rows satisfy `pred` (a wgmma_configs.hpp predicate; rows sharing a kernel count too),
// among those with splits > 1 when `split`, and offered for a problem with `m` rows (the space
// leaves the swapped rows out past kWgmmaSwapMaxM).
template <typename Pred>
int rows_where(Pred pred, bool split = false, long long m = 1) {
  int n = 0;
  for (int i = 0; i < kiln::gemm::kWgmmaConfigCount; ++i)
    if (pred(i) && (!split || kiln::gemm::kWgmmaConfigs[i].splits > 1) && kiln::gemm::wgmma_swap_fits(i, m)) ++n;
  return n;
}
int split_rows(long long m) {
  return rows_where([](int) { return true; }, true, m);
}

const char* const kAddedPathShapes[] = {"1x40x24",         "37x29x45",          "130x257x71",         "200x72x1000",
                                        "513x260x129",     "64x300x8",          "1000x1100x300",      "8x24x16,batch=3",
                                        "64x136x40,batch=2", "200x72x1000,batch=3", "136x264x200,batch=2"};

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
        CHECK(check_all_configs(data, what) == rows_where([](int) { return true; }, false, p.dims[0]));
      }
}

TEST_CASE("gemm_wgmma TF32 (allow_tf32=1) matches the host reference at sizes off its tiles and batches", "[gemm][wgmma][tf32][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  const kiln::OpSchema& s = runtime().registry().op("gemm");
  if (switched_off(s.problem_from_shape(kiln::f32, "256x256x256,tb=1,tf32=1", kGpu))) return;
  const int kTf32Configs = rows_where(kiln::gemm::wgmma_tf32_row);
  std::uint64_t seed = 700;
  // A stage is 32 f32 of k: k = 8, 16 and 24 are below one stage, 40, 45, 71, 129, 200, 300 and
  // 1000 not multiples of it.
  for (const char* mnk : kAddedPathShapes) {
    const std::string shape = std::string(mnk) + ",tb=1,tf32=1";
    const kiln::Problem p = s.problem_from_shape(kiln::f32, shape, kGpu);
    REQUIRE(p.dims[3] == 1);
    if (kiln_test::skip_when_quick(double(p.dims[0]) * p.dims[1] * p.dims[2] * p.dims[4], 3e6)) continue;
    kiln::ProblemData data(s, p, kGpu, ++seed, {true, true});
    // The gemm README's TF32 tolerance (10 mantissa bits), not the fp32 one.
    CHECK(data.tolerance() == 5e-3);
    CHECK(check_all_configs(data, "f32 (TF32) " + shape, true) == kTf32Configs);
  }
}

TEST_CASE("gemm_wgmma 3xTF32 (allow_tf32=2) matches the host reference at fp32 level in every layout", "[gemm][wgmma][3xtf32][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  const kiln::OpSchema& s = runtime().registry().op("gemm");
  if (switched_off(s.problem_from_shape(kiln::f32, "256x256x256,tb=1,tf32=2", kGpu))) return;
  const int k3xConfigs = rows_where(kiln::gemm::wgmma_3xtf32_row);
  std::uint64_t seed = 1100;
  double worst = 0.0;
  // The prepass packs any layout K-major: row- and column-major A and B, all four pairs.
  for (const char* layout : {",tb=1", ",tb=0", ",ta=1,tb=1", ",ta=1,tb=0"})
    for (const char* mnk : kAddedPathShapes) {
      if (std::string(mnk).rfind("1x", 0) == 0 && std::string(layout).find("ta=1") != std::string::npos) continue;
      const std::string shape = std::string(mnk) + layout + ",tf32=2";
      const kiln::Problem p = s.problem_from_shape(kiln::f32, shape, kGpu);
      REQUIRE(p.dims[3] == 2);
      // Quick (sanitizer) runs keep the small shapes, in every layout.
      if (kiln_test::skip_when_quick(double(p.dims[0]) * p.dims[1] * p.dims[2] * p.dims[4], 3e6)) continue;
      kiln::ProblemData data(s, p, kGpu, ++seed, {true, true});
      // The gemm README's fp32 tolerance (allow_tf32 = 2 is held to the IEEE fp32 bound).
      CHECK(data.tolerance() == 1e-4);
      CHECK(check_all_configs(data, "f32 (3xTF32) " + shape, true, &worst) == k3xConfigs);
    }
  // Plain TF32 lands near 1e-3 on these inputs; 3xTF32 must be far inside the fp32 tolerance.
  std::printf("gemm_wgmma 3xTF32: largest relative error against the f64 reference: %.3g\n", worst);
  CHECK(worst <= 1e-5);
}

TEST_CASE("gemm_wgmma 3xTF32 stays within the fp32 tolerance at deep k", "[gemm][wgmma][3xtf32][deepk][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  const kiln::OpSchema& s = runtime().registry().op("gemm");
  if (switched_off(s.problem_from_shape(kiln::f32, "256x256x256,tb=1,tf32=2", kGpu))) return;
  const int k3xConfigs = rows_where(kiln::gemm::wgmma_3xtf32_row);
  std::uint64_t seed = 1300;
  // The accumulators take k products each: the error grows with k, the tolerance does not.  Up to
  // kWgmma3xTf32MaxK (16384) it must hold; deeper problems are declined.
  for (const char* shape : {"136x200x8192,tb=1,tf32=2", "72x64x16384,ta=1,tb=0,tf32=2", "40x48x16384,tb=1,tf32=2"}) {
    const kiln::Problem p = s.problem_from_shape(kiln::f32, shape, kGpu);
    if (kiln_test::skip_when_quick(double(p.dims[0]) * p.dims[1] * p.dims[2] * p.dims[4], 3e6)) continue;
    kiln::ProblemData data(s, p, kGpu, ++seed, {true, true});
    double worst = 0.0;
    CHECK(check_all_configs(data, std::string("f32 (3xTF32) ") + shape, true, &worst) == k3xConfigs);
    std::printf("gemm_wgmma 3xTF32 %s: largest relative error against the f64 reference: %.3g\n", shape, worst);
  }
  const kiln::Variant& v = wgmma();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Problem deep = s.problem_from_shape(kiln::f32, "72x64x16385,tb=1,tf32=2", kGpu);
  const kiln::Support sup = v.supports(deep, dev, v.default_config_for(dev, deep));
  CHECK_FALSE(sup.ok);
  CHECK(kiln_test::contains(sup.reason, "exceeds 16384"));
}

TEST_CASE("gemm_wgmma with a column-major A and / or a row-major B matches the host reference", "[gemm][wgmma][layouts][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  const kiln::OpSchema& s = runtime().registry().op("gemm");
  std::uint64_t seed = 900;
  // ta = 1: A column-major (MN-major tiles); tb = 0: B row-major; both.
  for (const char* layout : {",ta=1,tb=1", ",tb=0", ",ta=1,tb=0"})
    for (kiln::DType t : {kiln::bf16, kiln::f16}) {
      // Quick (sanitizer) runs keep bf16: f16 differs only in the wgmma's type, not in addressing.
      if (kiln_test::quick_mode() && t == kiln::f16) continue;
      if (switched_off(s.problem_from_shape(t, std::string("256x256x256") + layout, kGpu))) continue;
      for (const char* mnk : kAddedPathShapes)
        for (const char* c16 : {"", ",c16=1"}) {
          // A one-row A has no column-major form of its own (its tensors derive ta = 0).
          if (std::string(mnk).rfind("1x", 0) == 0 && std::string(layout).find("ta=1") != std::string::npos) continue;
          const std::string shape = std::string(mnk) + layout + c16;
          const kiln::Problem p = s.problem_from_shape(t, shape, kGpu);
          if (kiln_test::skip_when_quick(double(p.dims[0]) * p.dims[1] * p.dims[2] * p.dims[4], 3e6)) continue;
          kiln::ProblemData data(s, p, kGpu, ++seed, {true, true});
          const std::string what = std::string(kiln::dtype_name(t)) + " " + shape;
          // Rows 0 and 1's kernels in every MN-major layout, the small-m row's for a row-major B alone.
          const bool a_mn = std::string(layout).find("ta=1") != std::string::npos;
          const bool b_mn = std::string(layout).find("tb=0") != std::string::npos;
          CHECK(check_all_configs(data, what, true) ==
                rows_where([&](int i) { return kiln::gemm::wgmma_layout_row(i, a_mn, b_mn); }, false, p.dims[0]));
        }
    }
}

// The mid-m 128 x 192 row (eighth session) on its own, so that the sanitizer runs can take it
// alone: n off its 192-wide tile and across several tiles, m off 128, k off 64 and below one stage,
// K-major and row-major B, both C types, batches.
TEST_CASE("gemm_wgmma 128 x 192 row matches the host reference off its tiles, K-major and row-major B", "[gemm][wgmma][midm][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  const kiln::OpSchema& s = runtime().registry().op("gemm");
  std::uint64_t seed = 1900;
  const char* shapes[] = {"1x40x24", "37x200x45", "130x385x71", "200x191x1000", "513x600x129", "64x584x8",
                          "300x1000x300", "64x200x40,batch=2", "136x392x200,batch=2"};
  for (const char* layout : {",tb=1", ",tb=0"})
    for (kiln::DType t : {kiln::bf16, kiln::f16}) {
      if (kiln_test::quick_mode() && t == kiln::f16) continue;  // f16 differs only in the wgmma's type
      for (const char* mnk : shapes)
        for (const char* c16 : {"", ",c16=1"}) {
          const std::string shape = std::string(mnk) + layout + c16;
          const kiln::Problem p = s.problem_from_shape(t, shape, kGpu);
          if (kiln_test::skip_when_quick(double(p.dims[0]) * p.dims[1] * p.dims[2] * p.dims[4], 3e6)) continue;
          kiln::ProblemData data(s, p, kGpu, ++seed, {true, true});
          const std::string what = std::string(kiln::dtype_name(t)) + " " + shape;
          const bool b_mn = std::string(layout).find("tb=0") != std::string::npos;
          const int expected = rows_where([&](int i) {
            return kiln::gemm::kWgmmaConfigs[i].bn == 192 && kiln::gemm::wgmma_layout_row(i, false, b_mn);
          });
          REQUIRE(expected >= 1);
          CHECK(check_all_configs(data, what, true, nullptr, false, false, 192) == expected);
        }
    }
}

TEST_CASE("gemm_wgmma 96-, 160- and 224-wide rows (128 x 96, 128 x 160, 256 x 160, 128 x 224) match the host reference off their tiles, alpha and beta", "[gemm][wgmma][midm][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  kiln::Runtime& rt = runtime();
  const kiln::OpSchema& s = rt.registry().op("gemm");
  const kiln::Variant& v = wgmma();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  std::uint64_t seed = 2600;
  // n off every one of the three widths and their 64-column C chunks (the last 32 columns of a
  // 16-bit C tile are stored from registers), m off 128, k below a stage and off 64, batches.
  const char* shapes[] = {"1x40x24",      "37x95x45",      "130x161x71",       "200x225x1000",    "513x481x129",
                          "64x673x8",     "300x1000x300",  "129x97x64",        "64x200x40,batch=2", "136x392x200,batch=2"};
  for (int bn : {96, 160, 224}) {
    const int expected = rows_where([&](int i) { return kiln::gemm::kWgmmaConfigs[i].bn == bn; });
    REQUIRE(expected >= 1);
    for (kiln::DType t : {kiln::bf16, kiln::f16}) {
      if (kiln_test::quick_mode() && t == kiln::f16) continue;  // f16 differs only in the wgmma's type
      for (const char* mnk : shapes)
        for (const char* c16 : {"", ",c16=1"}) {
          const std::string shape = std::string(mnk) + ",tb=1" + c16;
          const kiln::Problem p = s.problem_from_shape(t, shape, kGpu);
          if (kiln_test::skip_when_quick(double(p.dims[0]) * p.dims[1] * p.dims[2] * p.dims[4], 3e6)) continue;
          kiln::ProblemData data(s, p, kGpu, ++seed, {true, true});
          const std::string what = std::string(kiln::dtype_name(t)) + " " + shape + " BN " + std::to_string(bn);
          CHECK(check_all_configs(data, what, true, nullptr, false, false, bn) == expected);
        }
      // Declined for a row-major B (K-major tiles only), with a reason.
      const kiln::Problem mn = s.problem_from_shape(t, "200x225x100,tb=0", kGpu);
      for (int i = 0; i < kiln::gemm::kWgmmaConfigCount; ++i)
        if (kiln::gemm::kWgmmaConfigs[i].bn == bn) {
          const kiln::Support sup = v.supports(mn, dev, kiln::gemm::wgmma_config(i));
          INFO("BN " << bn << " tb = 0: " << sup.reason);
          CHECK_FALSE(sup.ok);
          CHECK_FALSE(sup.reason.empty());
        }
    }
    // alpha and beta (C read from registers' path, beta = 0 with NaN in C never read), C 16-bit.
    const kiln::Device host = kiln::Device::host();
    const std::int64_t m = 150, n = 168 + bn, k = 136;  // 16-byte pitches (TMA), n off every tile
    for (double beta : {-0.5, 0.0}) {
      const kiln::DType t = kiln::bf16;
      kiln::Buffer a = kiln::Buffer::alloc(kGpu, t, {m, k});
      kiln::Buffer b = kiln::Buffer::alloc(kGpu, t, {n, k});
      kiln::Buffer c = kiln::Buffer::alloc(kGpu, t, {m, n});
      kiln::Buffer ha = kiln::Buffer::alloc(host, t, {m, k});
      kiln::Buffer hb = kiln::Buffer::alloc(host, t, {n, k});
      kiln::Buffer hc0 = kiln::Buffer::alloc(host, t, {m, n});
      kiln::default_fill(ha.ref(), 41);
      kiln::default_fill(hb.ref(), 42);
      kiln::default_fill(hc0.ref(), 43);
      if (beta == 0.0) std::fill_n(static_cast<unsigned char*>(hc0.data()), hc0.bytes(), 0xFF);
      a.copy_from(ha);
      b.copy_from(hb);
      const kiln::Args args({a.ref(), b.ref().transposed(), c.ref()}, {0.75, beta});
      const kiln::Problem p = rt.op("gemm").problem(args);
      kiln::Buffer expected_c = kiln::Buffer::alloc(host, t, {m, n});
      expected_c.copy_from(hc0);
      REQUIRE(rt.registry().op("gemm").reference(kiln::Args({ha.ref(), hb.ref().transposed(), expected_c.ref()}, {0.75, beta}), p).ok());
      for (int i = 0; i < kiln::gemm::kWgmmaConfigCount; ++i) {
        if (kiln::gemm::kWgmmaConfigs[i].bn != bn) continue;
        const kiln::Config cfg = kiln::gemm::wgmma_config(i);
        const kiln::Support sup = v.supports(p, dev, cfg);
        INFO("BN " << bn << " beta = " << beta << " [" << cfg.to_string() << "]: " << sup.reason);
        REQUIRE(sup.ok);
        c.copy_from(hc0);
        const kiln::Status st = v.launch(args, p, cfg, nullptr, kiln::Stream());
        INFO(st.message());
        REQUIRE(st.ok());
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        kiln::Buffer got = kiln::Buffer::alloc(host, t, {m, n});
        got.copy_from(c);
        CHECK(kiln::relative_error(got.ref(), expected_c.ref()) <= kiln::accumulation_tolerance(t, k));
      }
    }
  }
}

TEST_CASE("gemm_wgmma: alpha and beta, a broadcast B, operands at an offset, the prepared launch", "[gemm][wgmma][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  kiln::Runtime& rt = runtime();
  const std::int64_t m = 200, n = 136, k = 88, batch = 3;
  const kiln::Device host = kiln::Device::host();
  // (ta, tb): K-major A and B, then the MN-major layouts (16-bit types only).
  const int layouts[][2] = {{0, 1}, {1, 1}, {0, 0}, {1, 0}};
  // f32 twice: TF32 (allow_tf32 = 1, K-major operands only) and 3xTF32 (2, every layout).
  for (int mode = 0; mode < 4; ++mode)
    for (const auto& layout : layouts)
      for (bool c16 : {false, true}) {
        const kiln::DType t = mode == 0 ? kiln::bf16 : mode == 1 ? kiln::f16 : kiln::f32;
        const int ta = layout[0], tb = layout[1];
        if (t == kiln::f32 && c16) continue;  // C f32
        if (mode == 2 && (ta != 0 || tb != 1)) continue;  // TF32: K-major operands
        INFO(kiln::dtype_name(t) << " mode " << mode << " ta = " << ta << " tb = " << tb
                                 << (c16 ? " C in the input type" : " C in f32"));
        const kiln::DType ct = c16 ? t : kiln::f32;
        const double allow_tf32 = mode == 2 ? 1.0 : mode == 3 ? 2.0 : 0.0;
        // A: batch-strided, 16 bytes into its allocation; stored m x k (ta = 0) or k x m (ta = 1).
        const std::int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
        auto a_view = [&](void* base, kiln::Device d) {
          const auto v = kiln::TensorRef::matrix(static_cast<char*>(base) + 16, t, a_rows, a_cols, a_cols, d).batched(batch, m * k);
          return ta ? v.transposed() : v;
        };
        // B: one pitched matrix shared by every batch entry; stored n x k (tb = 1) or k x n (tb = 0).
        const std::int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
        auto b_view = [&](const kiln::Buffer& store, kiln::Device d) {
          const auto v = kiln::TensorRef::matrix(store.data(), t, b_rows, b_cols, store.row_stride(), d).batched(batch, 0);
          return tb ? v.transposed() : v;
        };
        kiln::Buffer a_store = kiln::Buffer::alloc(kGpu, t, {batch * m * k + 8});
        kiln::Buffer b_store = kiln::Buffer::alloc_pitched(kGpu, t, b_rows, b_cols);
        kiln::Buffer c = kiln::Buffer::alloc(kGpu, ct, {batch, m, n});
        kiln::Buffer ha = kiln::Buffer::alloc(host, t, {batch * m * k + 8});
        kiln::Buffer hb = kiln::Buffer::alloc_pitched(host, t, b_rows, b_cols);
        kiln::Buffer hc = kiln::Buffer::alloc(host, ct, {batch, m, n});
        kiln::default_fill(ha.ref(), 21);
        kiln::default_fill(kiln::TensorRef::matrix(hb.data(), t, b_rows, b_cols, hb.row_stride(), host), 22);
        kiln::default_fill(hc.ref(), 23);
        a_store.copy_from(ha);
        kiln::copy(kiln::TensorRef::matrix(b_store.data(), t, b_rows, b_cols, b_store.row_stride(), kGpu),
                   kiln::TensorRef::matrix(hb.data(), t, b_rows, b_cols, hb.row_stride(), host));
        c.copy_from(hc);
        const kiln::Args args({a_view(a_store.data(), kGpu), b_view(b_store, kGpu), c}, {0.75, -0.5, allow_tf32});
        const kiln::Problem p = rt.op("gemm").problem(args);
        REQUIRE(p.dims[4] == batch);
        REQUIRE(p.dims[5] == ta);
        REQUIRE(p.dims[6] == tb);
        if (switched_off(p)) continue;
        const kiln::Variant& v = wgmma();
        const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
        const kiln::Config cfg = v.default_config_for(dev, p);
        const kiln::Support sup = v.supports(p, dev, cfg);
        INFO(sup.reason);
        REQUIRE(sup.ok);
        // The memo-hit path: bound once, run with the call's arguments.
        const auto prepared = v.prepare(p, cfg, dev);
        REQUIRE(prepared != nullptr);
        const std::size_t ws_bytes = v.workspace_bytes(p, cfg);
        // Only 3xTF32 (its operands' parts) and split k (partials) take a workspace.
        CHECK((ws_bytes > 0) == (mode == 3 || cfg.get("splits") > 1));
        kiln::Buffer ws;
        if (ws_bytes > 0) ws = kiln::Buffer::alloc(kGpu, kiln::u8, {static_cast<std::int64_t>(ws_bytes)});
        const kiln::Status st = prepared->run(args, p, ws_bytes ? ws.data() : nullptr, kiln::Stream());
        INFO(st.message());
        REQUIRE(st.ok());
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        REQUIRE(rt.registry()
                    .op("gemm")
                    .reference(kiln::Args({a_view(ha.data(), host), b_view(hb, host), hc.ref()}, {0.75, -0.5, allow_tf32}), p)
                    .ok());
        kiln::Buffer got = kiln::Buffer::alloc(host, ct, {batch, m, n});
        got.copy_from(c);
        // TF32: the README's 5e-3; 3xTF32 the f32 accumulation bound (1e-4).
        const double tolerance = mode == 2 ? 5e-3 : kiln::accumulation_tolerance(ct, k);
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
  // A column-major / B row-major only on the rows built for them (the space leaves the others out).
  for (const char* shape : {"256x256x256,tb=0", "256x256x256,ta=1,tb=1", "256x256x256,ta=1,tb=0"}) {
    const kiln::Problem p = s.problem_from_shape(kiln::f16, shape, kGpu);
    for (int i = 0; i < kiln::gemm::kWgmmaConfigCount; ++i) {
      const kiln::Config row = kiln::gemm::wgmma_config(i);
      const kiln::Support sup = v.supports(p, dev, row);
      INFO(shape << " [" << row.to_string() << "]: " << sup.reason);
      bool listed = false;
      for (const kiln::Config& e : v.space().enumerate(dev, p)) listed = listed || e == row;
      const bool built = kiln::gemm::wgmma_layout_row(i, p.dims[5] == 1, p.dims[6] == 0);
      CHECK(listed == built);
      if (built) {
        CHECK((sup.ok || kiln_test::contains(sup.reason, "switched off")));
      } else {
        CHECK_FALSE(sup.ok);
        CHECK(kiln_test::contains(sup.reason, "kWgmmaMnRows"));
      }
    }
  }
  CHECK(kiln_test::contains(reason(kiln::f16, "256x256x256,tb=1", 8), "16-byte"));
  // f32 only on the TF32 tensor cores (allow_tf32 = 1 or 2): never IEEE fp32 (0).
  CHECK(kiln_test::contains(reason(kiln::f32, "256x256x256,tb=1", 16), "needs allow_tf32=1"));
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
  {  // 3xTF32 only on kWgmma3xTf32Rows, in every layout (its prepass packs the operands K-major)
    for (const char* shape : {"256x256x256,tb=1,tf32=2", "256x256x256,ta=1,tb=0,tf32=2"}) {
      const kiln::Problem p = s.problem_from_shape(kiln::f32, shape, kGpu);
      for (int i = 0; i < kiln::gemm::kWgmmaConfigCount; ++i) {
        const kiln::Config row = kiln::gemm::wgmma_config(i);
        const kiln::Support sup = v.supports(p, dev, row);
        INFO(shape << " [" << row.to_string() << "]: " << sup.reason);
        bool listed = false;
        for (const kiln::Config& e : v.space().enumerate(dev, p)) listed = listed || e == row;
        CHECK(listed == kiln::gemm::wgmma_3xtf32_row(i));
        if (kiln::gemm::wgmma_3xtf32_row(i)) {
          CHECK((sup.ok || kiln_test::contains(sup.reason, "switched off")));
          CHECK(v.workspace_bytes(p, row) >= 4 * 256 * 256 * 4);  // A and B, hi and lo
        } else {
          CHECK_FALSE(sup.ok);
          CHECK((kiln_test::contains(sup.reason, "not built for 3xTF32") ||
                 (kiln::gemm::kWgmmaConfigs[i].splits > 1 && kiln_test::contains(sup.reason, "does not split k"))));
        }
      }
    }
    // A problem whose split would pass the workspace limit is left to gemm_3xtf32_mma.
    CHECK(kiln_test::contains(reason(kiln::f32, "16384x16384x16384,tb=1,tf32=2", 16), "workspace"));
  }
  kiln::DeviceInfo ampere = dev;
  ampere.cc_major = 8;
  const kiln::Problem p = s.problem_from_shape(kiln::bf16, "256x256x256,tb=1", kGpu);
  CHECK(kiln_test::contains(v.supports(p, ampere, cfg).reason, "compute capability 9.0"));
}

TEST_CASE("gemm_wgmma split k matches the host reference: m below a tile, k off the slices, batches", "[gemm][wgmma][splitk][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  const kiln::OpSchema& s = runtime().registry().op("gemm");
  std::uint64_t seed = 1500;
  // m = 1, 7, 33 (below both tile heights), 130 (a second 128-row tile); k below one k block (24:
  // no split at all), 200 (4 blocks: fewer than most slice counts), 1000 and 4100 (not multiples
  // of 64 or of splits x 64: the last slice is short); batches with n off the 256-wide tile.
  const char* shapes[] = {"1x40x24",  "7x264x1000",        "33x520x4100",      "1x4104x1000",
                          "130x257x200", "7x264x1000,batch=3", "33x136x520,batch=2"};
  for (const char* layout : {",tb=1", ",tb=0"})
    for (kiln::DType t : {kiln::bf16, kiln::f16})
      for (const char* mnk : shapes)
        for (const char* c16 : {"", ",c16=1"}) {
          // Quick (sanitizer) runs: bf16, C in the input type, the small shapes.
          if (kiln_test::quick_mode() && (t == kiln::f16 || c16[0] == '\0')) continue;
          const std::string shape = std::string(mnk) + layout + c16;
          const kiln::Problem p = s.problem_from_shape(t, shape, kGpu);
          if (kiln_test::skip_when_quick(double(p.dims[0]) * p.dims[1] * p.dims[2] * p.dims[4], 3e6)) continue;
          if (switched_off(p)) continue;
          kiln::ProblemData data(s, p, kGpu, ++seed, {true, true});
          const std::string what = std::string(kiln::dtype_name(t)) + " " + shape;
          // Every split row built for the layout (row 0's for a row-major B, rows 0 and 4's else).
          const int expected =
              layout[4] == '0'
                  ? rows_where([](int i) { return kiln::gemm::wgmma_layout_row(i, false, true); }, true, p.dims[0])
                  : split_rows(p.dims[0]);
          CHECK(expected >= 6);
          CHECK(check_all_configs(data, what, true, nullptr, true) == expected);
        }
  // TF32 (allow_tf32 = 1): the split rows of row 0 (the TF32 build).
  for (const char* shape : {"7x264x1000,tb=1,tf32=1", "33x136x520,tb=1,tf32=1,batch=2"}) {
    const kiln::Problem p = s.problem_from_shape(kiln::f32, shape, kGpu);
    if (kiln_test::skip_when_quick(double(p.dims[0]) * p.dims[1] * p.dims[2] * p.dims[4], 3e6)) continue;
    if (switched_off(p)) continue;
    kiln::ProblemData data(s, p, kGpu, ++seed, {true, true});
    CHECK(check_all_configs(data, std::string("f32 (TF32) ") + shape, true, nullptr, true) ==
          rows_where(kiln::gemm::wgmma_tf32_row, true));
  }
}

TEST_CASE("gemm_wgmma split k: alpha and beta (C read and rescaled), beta = 0 never reads C", "[gemm][wgmma][splitk][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  kiln::Runtime& rt = runtime();
  const kiln::Variant& v = wgmma();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Device host = kiln::Device::host();
  const std::int64_t m = 33, n = 136, k = 1000, batch = 2;
  for (kiln::DType t : {kiln::bf16, kiln::f16})
    for (int tb : {1, 0})
      for (bool c16 : {false, true})
        for (double beta : {-0.5, 0.0}) {
          if (kiln_test::quick_mode() && (t == kiln::f16 || !c16)) continue;  // sanitizer runs: bf16, C bf16
          const kiln::DType ct = c16 ? t : kiln::f32;
          const std::int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
          kiln::Buffer a = kiln::Buffer::alloc(kGpu, t, {batch, m, k});
          kiln::Buffer b = kiln::Buffer::alloc(kGpu, t, {batch, b_rows, b_cols});
          kiln::Buffer c = kiln::Buffer::alloc(kGpu, ct, {batch, m, n});
          kiln::Buffer ha = kiln::Buffer::alloc(host, t, {batch, m, k});
          kiln::Buffer hb = kiln::Buffer::alloc(host, t, {batch, b_rows, b_cols});
          kiln::Buffer hc0 = kiln::Buffer::alloc(host, ct, {batch, m, n});
          kiln::default_fill(ha.ref(), 31);
          kiln::default_fill(hb.ref(), 32);
          kiln::default_fill(hc0.ref(), 33);
          if (beta == 0.0)  // NaN in C must not leak (bytes 0xFF are NaN in f32, bf16 and f16)
            std::fill_n(static_cast<unsigned char*>(hc0.data()), hc0.bytes(), 0xFF);
          a.copy_from(ha);
          b.copy_from(hb);
          auto b_view = [&](const kiln::Buffer& store) { return tb ? store.ref().transposed() : store.ref(); };
          const kiln::Args args({a.ref(), b_view(b), c.ref()}, {0.75, beta});
          const kiln::Problem p = rt.op("gemm").problem(args);
          REQUIRE(p.dims[6] == tb);
          if (switched_off(p)) continue;
          kiln::Buffer expected = kiln::Buffer::alloc(host, ct, {batch, m, n});
          expected.copy_from(hc0);
          REQUIRE(rt.registry().op("gemm").reference(kiln::Args({ha.ref(), b_view(hb), expected.ref()}, {0.75, beta}), p).ok());
          int ran = 0;
          for (int i = 0; i < kiln::gemm::kWgmmaConfigCount; ++i) {
            if (kiln::gemm::kWgmmaConfigs[i].splits == 1 || !kiln::gemm::wgmma_layout_row(i, false, tb == 0)) continue;
            const kiln::Config cfg = kiln::gemm::wgmma_config(i);
            const kiln::Support sup = v.supports(p, dev, cfg);
            INFO(kiln::dtype_name(t) << " tb = " << tb << " C " << kiln::dtype_name(ct) << " beta = " << beta << " ["
                                     << cfg.to_string() << "]: " << sup.reason);
            REQUIRE(sup.ok);
            const std::size_t ws_bytes = v.workspace_bytes(p, cfg);
            CHECK(ws_bytes >= std::size_t(2) * batch * m * n * 4);  // at least two slices of partials
            kiln::Buffer ws = kiln::Buffer::alloc(kGpu, kiln::u8, {static_cast<std::int64_t>(ws_bytes)});
            REQUIRE(cudaMemset(ws.data(), 0xFF, ws_bytes) == cudaSuccess);
            c.copy_from(hc0);
            const auto prepared = v.prepare(p, cfg, dev);
            REQUIRE(prepared != nullptr);
            const kiln::Status st = prepared->run(args, p, ws.data(), kiln::Stream());
            INFO(st.message());
            REQUIRE(st.ok());
            REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
            kiln::Buffer got = kiln::Buffer::alloc(host, ct, {batch, m, n});
            got.copy_from(c);
            CHECK(kiln::relative_error(got.ref(), expected.ref()) <= kiln::accumulation_tolerance(ct, k));
            // Without a workspace the launch reports it, naming what it needs.
            const kiln::Status none = prepared->run(args, p, nullptr, kiln::Stream());
            CHECK_FALSE(none.ok());
            CHECK(kiln_test::contains(none.message(), "workspace"));
            ++ran;
          }
          CHECK(ran == rows_where([&](int i) { return kiln::gemm::wgmma_layout_row(i, false, tb == 0); }, true, m));
        }
}

TEST_CASE("gemm_wgmma default_config_for splits k where the tiles leave SMs idle, and only there", "[gemm][wgmma][splitk][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  const kiln::OpSchema& s = runtime().registry().op("gemm");
  const kiln::Variant& v = wgmma();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  auto pick = [&](const char* shape) {
    const kiln::Problem p = s.problem_from_shape(kiln::bf16, shape, kGpu);
    const kiln::Config c = v.default_config_for(dev, p);
    INFO(shape << " -> [" << c.to_string() << "]");
    CHECK(v.supports(p, dev, c).ok);
    std::printf("gemm_wgmma default_config_for %s: %s\n", shape, c.to_string().c_str());
    return c;
  };
  // A decode-sized X * W^T: 16 output tiles of 64 x 256 for ~132 SMs and a deep k must split, or
  // take the swapped rows (64 x 16 tiles of C^T: 4 times as many).
  auto split_or_swap = [](const kiln::Config& c) { return c.get("splits") > 1 || c.get("swap") == 1; };
  CHECK(split_or_swap(pick("1x4096x4096,tb=1,c16=1")));
  CHECK(split_or_swap(pick("16x8192x28672,tb=1,c16=1")));
  CHECK(split_or_swap(pick("1x11008x4096,tb=0,c16=1")));
  // Large outputs have tiles enough: no split, no swap.
  for (const char* shape : {"4096x4096x4096,tb=1,c16=1", "8192x8192x8192,tb=1", "2048x14336x4096,tb=1,c16=1"}) {
    const kiln::Config c = pick(shape);
    CHECK(c.get("splits") == 1);
    CHECK(c.get("swap") == 0);
  }
  // Shallow k: nothing to split.
  CHECK(pick("16x4096x64,tb=1").get("splits") == 1);
  // Up to 16 rows of a row-major A: the swapped rows (16-row X tile), both B layouts; past that,
  // a column-major A or f32, the unswapped ones.
  for (const char* shape : {"1x4096x4096,tb=1,c16=1", "16x14336x4096,tb=0,c16=1", "7x28672x8192,tb=1"}) {
    const kiln::Config c = pick(shape);
    CHECK(c.get("swap") == 1);
    CHECK(c.get("BM") == 16);
  }
  CHECK(pick("17x4096x4096,tb=1,c16=1").get("swap") == 0);
  CHECK(pick("96x11008x4096,tb=1,c16=1").get("swap") == 0);
  CHECK(pick("16x4096x4096,ta=1,tb=1").get("swap") == 0);
  {
    const kiln::Problem p = s.problem_from_shape(kiln::f32, "1x4096x4096,tb=1,tf32=1", kGpu);
    CHECK(v.default_config_for(dev, p).get("swap") == 0);
  }
}

TEST_CASE("gemm_wgmma swapped small-m rows match the host reference: m around 8, 16 and 64, n off 64, short k", "[gemm][wgmma][swap][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  const kiln::OpSchema& s = runtime().registry().op("gemm");
  std::uint64_t seed = 1900;
  const int swap_rows = rows_where([](int i) { return kiln::gemm::kWgmmaConfigs[i].swap == 1; });
  REQUIRE(swap_rows >= 2);
  // m: one row, below / at / past the 8-row groups of wgmma's N, past the 16-row tile (33), at
  // and past the 64-row tile (64, 65: a second X tile).  n off the 64-row W tiles (200, 136, 72);
  // k below one 64-deep stage (40), off the stages and the slices (1000), a batch of 3 (520).
  const int ms[] = {1, 7, 8, 9, 33, 64, 65};
  const char* nks[] = {"x200x40", "x136x1000", "x72x520,batch=3"};
  for (const char* layout : {",tb=1", ",tb=0"})
    for (kiln::DType t : {kiln::bf16, kiln::f16})
      for (int m : ms)
        for (const char* nk : nks)
          for (const char* c16 : {"", ",c16=1"}) {
            // f16 differs only in the wgmma's type: one shape of it.
            if (t == kiln::f16 && (m != 9 || nk != nks[1])) continue;
            // Quick (sanitizer) runs: bf16, C in the input type, m = 1, 9 and 65.
            if (kiln_test::quick_mode() && (t == kiln::f16 || c16[0] == '\0' || (m != 1 && m != 9 && m != 65))) continue;
            const std::string shape = std::to_string(m) + nk + layout + c16;
            const kiln::Problem p = s.problem_from_shape(t, shape, kGpu);
            if (switched_off(p)) continue;
            kiln::ProblemData data(s, p, kGpu, ++seed, {true, true});
            const std::string what = std::string(kiln::dtype_name(t)) + " " + shape;
            // Every swapped row, in both B layouts.
            CHECK(check_all_configs(data, what, true, nullptr, false, true) == swap_rows);
          }
  // A column-major A is declined by the swapped rows, with a reason (and the space leaves them out).
  const kiln::Variant& v = wgmma();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Problem p = s.problem_from_shape(kiln::bf16, "9x200x40,ta=1,tb=1", kGpu);
  REQUIRE(p.dims[5] == 1);
  for (int i = 0; i < kiln::gemm::kWgmmaConfigCount; ++i) {
    if (kiln::gemm::kWgmmaConfigs[i].swap != 1) continue;
    const kiln::Config row = kiln::gemm::wgmma_config(i);
    const kiln::Support sup = v.supports(p, dev, row);
    CHECK_FALSE(sup.ok);
    CHECK(kiln_test::contains(sup.reason, "row-major A"));
    for (const kiln::Config& e : v.space().enumerate(dev, p)) CHECK_FALSE(e == row);
  }
  // Past kWgmmaSwapMaxM rows the space leaves them out (each X tile would re-read all of W).
  const kiln::Problem tall = s.problem_from_shape(kiln::bf16, "300x200x40,tb=1", kGpu);
  for (const kiln::Config& e : v.space().enumerate(dev, tall)) CHECK(e.get("swap") == 0);
}

TEST_CASE("gemm_wgmma swapped rows: alpha and beta (C read and rescaled), beta = 0 never reads C, batches, a broadcast B", "[gemm][wgmma][swap][gpu]") {
  if (!on_hopper()) {
    WARN("gemm_wgmma needs compute capability 9.0: not checked on this device");
    return;
  }
  kiln::Runtime& rt = runtime();
  const kiln::Variant& v = wgmma();
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Device host = kiln::Device::host();
  const std::int64_t n = 200, k = 1000, batch = 2;
  for (std::int64_t m : {1, 9, 65})
    for (int tb : {1, 0})
      for (bool c16 : {false, true})
        for (double beta : {-0.5, 0.0}) {
          if (kiln_test::quick_mode() && !c16) continue;  // sanitizer runs: C bf16
          const kiln::DType t = kiln::bf16;
          const kiln::DType ct = c16 ? t : kiln::f32;
          const std::int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
          // m = 9: one B shared by both batch entries (a broadcast W, stride 0).
          const bool broadcast = m == 9;
          kiln::Buffer a = kiln::Buffer::alloc(kGpu, t, {batch, m, k});
          kiln::Buffer b = kiln::Buffer::alloc(kGpu, t, {broadcast ? 1 : batch, b_rows, b_cols});
          kiln::Buffer c = kiln::Buffer::alloc(kGpu, ct, {batch, m, n});
          kiln::Buffer ha = kiln::Buffer::alloc(host, t, {batch, m, k});
          kiln::Buffer hb = kiln::Buffer::alloc(host, t, {broadcast ? 1 : batch, b_rows, b_cols});
          kiln::Buffer hc0 = kiln::Buffer::alloc(host, ct, {batch, m, n});
          kiln::default_fill(ha.ref(), 41 + m);
          kiln::default_fill(hb.ref(), 42 + m);
          kiln::default_fill(hc0.ref(), 43 + m);
          if (beta == 0.0)  // NaN in C must not leak (bytes 0xFF are NaN in f32 and bf16)
            std::fill_n(static_cast<unsigned char*>(hc0.data()), hc0.bytes(), 0xFF);
          a.copy_from(ha);
          b.copy_from(hb);
          auto b_view = [&](const kiln::Buffer& store) {
            kiln::TensorRef r = store.ref();
            if (broadcast)
              r = kiln::TensorRef::matrix(store.data(), t, b_rows, b_cols, b_cols, store.ref().device).batched(batch, 0);
            return tb ? r.transposed() : r;
          };
          const kiln::Args args({a.ref(), b_view(b), c.ref()}, {0.75, beta});
          const kiln::Problem p = rt.op("gemm").problem(args);
          REQUIRE(p.dims[6] == tb);
          REQUIRE(p.dims[4] == batch);
          if (switched_off(p)) continue;
          kiln::Buffer expected = kiln::Buffer::alloc(host, ct, {batch, m, n});
          expected.copy_from(hc0);
          REQUIRE(rt.registry().op("gemm").reference(kiln::Args({ha.ref(), b_view(hb), expected.ref()}, {0.75, beta}), p).ok());
          int ran = 0;
          for (int i = 0; i < kiln::gemm::kWgmmaConfigCount; ++i) {
            if (kiln::gemm::kWgmmaConfigs[i].swap != 1) continue;
            const kiln::Config cfg = kiln::gemm::wgmma_config(i);
            const kiln::Support sup = v.supports(p, dev, cfg);
            INFO("m = " << m << " tb = " << tb << " C " << kiln::dtype_name(ct) << " beta = " << beta << " ["
                        << cfg.to_string() << "]: " << sup.reason);
            REQUIRE(sup.ok);
            const std::size_t ws_bytes = v.workspace_bytes(p, cfg);
            CHECK((ws_bytes > 0) == (cfg.get("splits") > 1));
            kiln::Buffer ws;
            if (ws_bytes > 0) {
              ws = kiln::Buffer::alloc(kGpu, kiln::u8, {static_cast<std::int64_t>(ws_bytes)});
              REQUIRE(cudaMemset(ws.data(), 0xFF, ws_bytes) == cudaSuccess);
            }
            c.copy_from(hc0);
            const auto prepared = v.prepare(p, cfg, dev);
            REQUIRE(prepared != nullptr);
            const kiln::Status st = prepared->run(args, p, ws_bytes ? ws.data() : nullptr, kiln::Stream());
            INFO(st.message());
            REQUIRE(st.ok());
            REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
            kiln::Buffer got = kiln::Buffer::alloc(host, ct, {batch, m, n});
            got.copy_from(c);
            CHECK(kiln::relative_error(got.ref(), expected.ref()) <= kiln::accumulation_tolerance(ct, k));
            ++ran;
          }
          CHECK(ran == rows_where([](int i) { return kiln::gemm::kWgmmaConfigs[i].swap == 1; }));
        }
}

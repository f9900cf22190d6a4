// Every CUDA gemm variant, with every config it instantiates (or every valid config of the small
// spaces), against the host reference on fresh random inputs: sizes 1, primes, non-multiples of
// every tile, dense and pitched, beta != 0, NaN in C with beta == 0, TF32 problems, wide k.
// Ends with a throughput print of the fast variants at 4096^3 (not checked).
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"
#include "quick.hpp"
#include "gemm_reference.hpp"
#include "register_gemm.hpp"
#include "tf32_mma_configs.hpp"

namespace {

constexpr int g_tf32_configs = kiln::gemm::kTf32MmaConfigCount;

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_gemm(reg);
  REQUIRE(s.ok());
  return reg;
}

struct Mnk {
  std::int64_t m, n, k;
};

// Bytes of the row padding of a device matrix (between cols and row_stride) that are not 0xFF.
std::int64_t padding_changed(const kiln::TensorRef& t) {
  if (t.row_stride == t.cols() || t.rows() == 0) return 0;
  const auto whole = kiln::TensorRef::matrix(t.data, t.dtype, t.rows(), t.row_stride, t.row_stride, t.device);
  kiln::Buffer host = kiln::Buffer::alloc(kiln::Device::host(), t.dtype, {t.rows(), t.row_stride});
  kiln::copy(host.ref(), whole);
  std::int64_t changed = 0;
  const std::size_t es = kiln::dtype_size(t.dtype);
  for (std::int64_t r = 0; r < t.rows(); ++r) {
    const auto* row = static_cast<const unsigned char*>(host.data()) + r * t.row_stride * es;
    for (std::size_t b = t.cols() * es; b < static_cast<std::size_t>(t.row_stride) * es; ++b) changed += row[b] != 0xFF;
  }
  return changed;
}

bool is_tf32_variant(const kiln::Variant& v) { return v.name() == "gemm_tf32_mma"; }
// Tensor-core variants (plain and 3xTF32) need 16-byte aligned rows (cp.async 16-byte copies).
bool needs_align16(const std::string& name) { return name == "gemm_tf32_mma" || name == "gemm_3xtf32_mma"; }

// Runs every CUDA variant (or only the one named `only`) and every valid config that supports the
// problem on `data`, checking each against the reference.  Returns how many (variant, config)
// pairs ran per variant.
std::vector<std::pair<std::string, int>> check_all_variants(kiln::Runtime& rt, kiln::ProblemData& data, bool pitched,
                                                            const std::string& only = "") {
  const kiln::OpSchema& schema = rt.registry().op("gemm");
  const kiln::DeviceInfo& dev = kiln::device_info(kiln::Device::cuda(0));
  // The problem as dispatch sees it, alignment included, from the actual device tensors.
  const kiln::Problem p = rt.make_problem(schema, data.device_args());
  std::vector<std::pair<std::string, int>> ran;
  for (const kiln::Variant* v : rt.registry().variants("gemm")) {
    if (v->device_kind() != kiln::DeviceKind::cuda || (!only.empty() && v->name() != only)) continue;
    // These cases are f32 problems; gemm_half_mma (f16/bf16 only) is test_gemm_half_gpu's.
    if (std::find(v->dtypes().begin(), v->dtypes().end(), kiln::f32) == v->dtypes().end()) continue;
    // gemm_wgmma takes f32 only as TF32 with a column-major B (Hopper): test_gemm_wgmma_gpu's.
    if (v->name() == "gemm_wgmma") continue;
    int count = 0;
    for (const kiln::Config& cfg : v->space().enumerate(dev, p)) {
      const kiln::Support s = v->supports(p, dev, cfg);
      if (!s.ok) continue;
      INFO(v->name() << " " << cfg.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense")
                     << " align " << p.align_bytes);
      data.poison_outputs();
      kiln::Buffer workspace;  // gemm_split_k's partial sums
      if (const std::size_t bytes = v->workspace_bytes(p, cfg))
        workspace = kiln::Buffer::alloc(kiln::Device::cuda(0), kiln::u8, {std::int64_t(bytes)});
      const kiln::Status st = v->launch(data.device_args(), p, cfg, workspace.data(), kiln::Stream());
      REQUIRE(st.ok());
      kiln::Stream().synchronize();
      const double err = data.error();
      CAPTURE(err);
      CHECK(err <= data.tolerance());
      if (pitched) CHECK(padding_changed(data.device_args().tensor(2)) == 0);
      ++count;
    }
    ran.emplace_back(v->name(), count);
  }
  return ran;
}

}  // namespace

TEST_CASE("every CUDA gemm variant and config matches the host reference", "[gemm][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("gemm");
  const Mnk shapes[] = {{1, 1, 1},       {7, 13, 5},        {33, 65, 17},   {127, 129, 131},
                        {257, 255, 63},  {1000, 1000, 100}, {128, 128, 1024}, {130, 2, 777},
                        {300, 24, 1001}};  // skinny n off the 32-wide rows' tile, m off 128 and 256
  std::uint64_t seed = 1;
  // allow_tf32 = 0 (IEEE fp32) and 2 (3xTF32 allowed, same fp32 tolerance).
  for (int mode : {0, 2}) {
  for (bool pitched : {false, true}) {
    for (const Mnk& s : shapes) {
      if (kiln_test::skip_when_quick(double(s.m) * double(s.n) * double(s.k), 5e6)) continue;
      const kiln::Problem want = schema.problem_from_dims(kiln::f32, {s.m, s.n, s.k, mode}, kiln::Device::cuda(0));
      kiln::ProblemDataOptions opts;
      opts.pitched = pitched;
      kiln::ProblemData data(schema, want, kiln::Device::cuda(0), seed++, opts);
      const bool aligned = rt.make_problem(schema, data.device_args()).align_bytes >= 16;
      for (const auto& [name, count] : check_all_variants(rt, data, pitched)) {
        INFO(name << " at " << want.key() << (pitched ? " pitched" : " dense"));
        if (name == "gemm_tf32_mma")
          CHECK(count == 0);  // TF32 rounding needs allow_tf32 = 1
        else if (name == "gemm_3xtf32_mma")
          CHECK(count == (mode == 2 && aligned ? g_tf32_configs : 0));  // opt-in, aligned rows
        else if (name == "gemm_split_k")
          CHECK((count > 0) == (s.k > 16));  // two slices need k > 16 (slices start at multiples of 16)
        else
          CHECK(count > 0);  // every other variant handles every shape (vec=1 configs when unaligned)
      }
    }
  }
  }
}

TEST_CASE("gemm_tf32_mma matches the reference within the TF32 tolerance", "[gemm][gpu][tf32]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("gemm");
  const kiln::DeviceInfo& dev = kiln::device_info(kiln::Device::cuda(0));
  if (dev.cc_major < 8) return;  // no TF32 tensor cores
  const Mnk shapes[] = {{1, 1, 1},      {7, 13, 5},       {33, 65, 17},     {127, 129, 131},
                        {257, 255, 63}, {1000, 1000, 100}, {128, 128, 1024}, {130, 2, 777}};
  std::uint64_t seed = 100;
  for (bool pitched : {true, false}) {
    for (const Mnk& s : shapes) {
      if (kiln_test::skip_when_quick(double(s.m) * double(s.n) * double(s.k), 5e6)) continue;
      const kiln::Problem want = schema.problem_from_dims(kiln::f32, {s.m, s.n, s.k, 1}, kiln::Device::cuda(0));
      kiln::ProblemDataOptions opts;
      opts.pitched = pitched;
      kiln::ProblemData data(schema, want, kiln::Device::cuda(0), seed++, opts);
      CHECK(data.tolerance() == 5e-3);
      const kiln::Problem p = rt.make_problem(schema, data.device_args());
      REQUIRE(p.dims[3] == 1);  // ProblemData passed allow_tf32 = 1 (schema scalars_for)
      for (const auto& [name, count] : check_all_variants(rt, data, pitched)) {
        INFO(name << " at " << want.key() << (pitched ? " pitched" : " dense") << " align " << p.align_bytes);
        // Pitched rows are 16-byte aligned, so the tensor-core kernel runs every shape there; dense
        // tensors only when k and n are multiples of 4.
        if (needs_align16(name) && p.align_bytes >= 16) CHECK(count == g_tf32_configs);
        if (needs_align16(name) && p.align_bytes < 16) CHECK(count == 0);
        if (name == "gemm_split_k") CHECK((count > 0) == (s.k > 16));
        else if (!needs_align16(name)) CHECK(count > 0);  // full precision serves tf32 problems too
      }
    }
  }
}

TEST_CASE("wide k: the row-per-block kernel chunks the A row through shared memory", "[gemm][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("gemm");
  // k above the 4096-float chunk, once just past it and once over two chunk boundaries.
  const Mnk shapes[] = {{3, 300, 9000}, {2, 5, 4097}, {5, 1100, 4096}};
  std::uint64_t seed = 200;
  for (const Mnk& s : shapes) {
    if (kiln_test::skip_when_quick(double(s.m) * double(s.n) * double(s.k), 5e6)) continue;
    for (bool pitched : {false, true}) {
      const kiln::Problem want = schema.problem_from_dims(kiln::f32, {s.m, s.n, s.k, 0}, kiln::Device::cuda(0));
      kiln::ProblemDataOptions opts;
      opts.pitched = pitched;
      kiln::ProblemData data(schema, want, kiln::Device::cuda(0), seed++, opts);
      // Under KILN_TEST_QUICK (compute-sanitizer) only the kernel this case is about: the tiled
      // ones, racechecked by the first case, would take many minutes over k = 4097.
      const auto ran = check_all_variants(rt, data, pitched, kiln_test::quick_mode() ? "gemm_row_per_block" : "");
      CHECK(!ran.empty());
      for (const auto& [name, count] : ran) {
        INFO(name << " at " << want.key());
        if (name == "gemm_row_per_block") CHECK(count == 5);
        if (name == "gemm_3xtf32_mma") CHECK(count == 0);  // opt-in only (allow_tf32 = 2)
        if (!needs_align16(name)) CHECK(count > 0);
      }
    }
  }
}

TEST_CASE("gemm_split_k: deep k over few output tiles, every slicing", "[gemm][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("gemm");
  const kiln::DeviceInfo& dev = kiln::device_info(kiln::Device::cuda(0));
  // A single output, a 3 x 5 sliver and a 96 x 80 block (two tiles each way); k not a multiple of
  // the 16-column slice quantum nor of BK.
  const Mnk shapes[] = {{1, 1, 4097}, {3, 5, 20000}, {96, 80, 20000}};
  std::uint64_t seed = 500;
  for (const Mnk& s : shapes) {
    if (kiln_test::skip_when_quick(double(s.m) * double(s.n) * double(s.k), 5e6)) continue;
    for (bool pitched : {false, true}) {
      const kiln::Problem want = schema.problem_from_dims(kiln::f32, {s.m, s.n, s.k, 0}, kiln::Device::cuda(0));
      kiln::ProblemDataOptions opts;
      opts.pitched = pitched;
      kiln::ProblemData data(schema, want, kiln::Device::cuda(0), seed++, opts);
      const kiln::Problem p = rt.make_problem(schema, data.device_args());
      const kiln::Variant* split = rt.registry().find_variant("gemm_split_k");
      REQUIRE(split != nullptr);
      // The automatic slicing applies here (few tiles, deep k), with a workspace.
      const kiln::Config auto_cfg = split->default_config_for(dev, p);
      CHECK(auto_cfg.get("splits") == 0);
      CHECK(split->supports(p, dev, auto_cfg).ok);
      CHECK(split->workspace_bytes(p, auto_cfg) >= 2 * std::size_t(s.m * s.n) * sizeof(float));
      const auto ran = check_all_variants(rt, data, pitched, "gemm_split_k");
      REQUIRE(ran.size() == 1);
      CHECK(ran[0].second >= 8);  // at least every tile shape with automatic slicing
    }
  }
}

TEST_CASE("alpha and beta: beta != 0 reads C, beta == 0 never does (NaN in C)", "[gemm][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("gemm");
  const kiln::DeviceInfo& dev = kiln::device_info(kiln::Device::cuda(0));
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::Device host = kiln::Device::host();

  struct Scalars {
    double alpha, beta;
    bool nan_c;  // C holds NaN before the call
  };
  const Scalars cases[] = {{1.5, -0.75, false}, {-0.5, 0.0, true}, {1.0, 1.0, false}, {2.0, 0.0, false}};
  const Mnk shapes[] = {{33, 65, 17}, {127, 129, 131}, {64, 64, 64}, {1, 1, 1}};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);

  for (const Mnk& s : shapes) {
    if (kiln_test::skip_when_quick(double(s.m) * double(s.n) * double(s.k), 5e6)) continue;
    for (bool pitched : {false, true}) {
      auto alloc = [&](kiln::Device d, std::int64_t r, std::int64_t c) {
        return pitched && d.is_cuda() ? kiln::Buffer::alloc_pitched(d, kiln::f32, r, c) : kiln::Buffer::alloc(d, kiln::f32, {r, c});
      };
      kiln::Buffer ha = alloc(host, s.m, s.k), hb = alloc(host, s.k, s.n), hc0 = alloc(host, s.m, s.n);
      for (kiln::Buffer* h : {&ha, &hb, &hc0}) {
        float* p = static_cast<float*>(h->data());
        for (std::int64_t i = 0; i < h->ref().numel(); ++i) p[i] = u(rng);
      }
      kiln::Buffer a = alloc(gpu, s.m, s.k), b = alloc(gpu, s.k, s.n), c = alloc(gpu, s.m, s.n);
      a.copy_from(ha);
      b.copy_from(hb);

      for (const Scalars& sc : cases) {
        // The expected result, from the host reference.
        kiln::Buffer want = alloc(host, s.m, s.n);
        if (sc.nan_c)
          want.fill_bytes(0xFF);
        else
          want.copy_from(hc0);
        REQUIRE(kiln::gemm::gemm_reference(ha, hb, want, sc.alpha, sc.beta).ok());

        for (double tf32 : {0.0, 1.0}) {
          const kiln::Args args({a, b, c}, {sc.alpha, sc.beta, tf32});
          const kiln::Problem p = rt.make_problem(schema, args);
          for (const kiln::Variant* v : rt.registry().variants("gemm")) {
            if (v->device_kind() != kiln::DeviceKind::cuda) continue;
            if (tf32 != 0.0 && !is_tf32_variant(*v)) continue;  // full precision is covered with tf32 = 0
            for (const kiln::Config& cfg : v->space().enumerate(dev, p)) {
              if (!v->supports(p, dev, cfg).ok) continue;
              INFO(v->name() << " " << cfg.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense")
                             << " alpha " << sc.alpha << " beta " << sc.beta << (sc.nan_c ? " NaN in C" : ""));
              if (sc.nan_c)
                c.fill_bytes(0xFF);
              else
                c.copy_from(hc0);
              kiln::Buffer workspace;  // gemm_split_k's partial sums
              if (const std::size_t bytes = v->workspace_bytes(p, cfg))
                workspace = kiln::Buffer::alloc(gpu, kiln::u8, {std::int64_t(bytes)});
              REQUIRE(v->launch(args, p, cfg, workspace.data(), kiln::Stream()).ok());
              kiln::Stream().synchronize();
              kiln::Buffer got = alloc(host, s.m, s.n);
              got.copy_from(c);
              std::int64_t non_finite = 0;
              for (float x : got.to_host<float>()) non_finite += !std::isfinite(x);
              CHECK(non_finite == 0);
              const double err = kiln::relative_error(got.ref(), want.ref());
              CAPTURE(err);
              CHECK(err <= schema.tolerance_for(p));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("gemm_3xtf32_mma is fp32-accurate at k = 4096 (error vs the f64 reference)", "[gemm][gpu][3xtf32]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("gemm");
  const kiln::DeviceInfo& dev = kiln::device_info(kiln::Device::cuda(0));
  if (dev.cc_major < 8) return;  // no TF32 tensor cores
  // Random [-1, 1) inputs (the schema's fill); the reference accumulates in double.  Plain TF32
  // lands near 1e-3 here, fp32 SIMT near 1e-6: 3xTF32 must be at fp32 level, well below 1e-5.
  const Mnk shapes[] = {{256, 256, 4096}, {200, 136, 4100}};
  std::uint64_t seed = 400;
  for (const Mnk& s : shapes) {
    if (kiln_test::skip_when_quick(double(s.m) * double(s.n) * double(s.k), 5e6)) continue;
    for (int tf32 : {2, 1}) {
      const kiln::Problem want = schema.problem_from_dims(kiln::f32, {s.m, s.n, s.k, tf32}, kiln::Device::cuda(0));
      kiln::ProblemData data(schema, want, kiln::Device::cuda(0), seed++);
      const kiln::Problem p = rt.make_problem(schema, data.device_args());
      REQUIRE(p.align_bytes >= 16);
      for (const char* name : {"gemm_3xtf32_mma", "gemm_register_blocked", "gemm_tf32_mma"}) {
        const kiln::Variant* v = rt.registry().find_variant(name);
        REQUIRE(v != nullptr);
        const kiln::Config cfg = v->default_config_for(dev, p);
        if (!v->supports(p, dev, cfg).ok) continue;  // gemm_tf32_mma with tf32 = 2
        INFO(name << " " << cfg.to_string() << " on " << p.key());
        data.poison_outputs();
        REQUIRE(v->launch(data.device_args(), p, cfg, nullptr, kiln::Stream()).ok());
        kiln::Stream().synchronize();
        const double err = data.error();
        std::printf("gemm accuracy %-22s %-16s relative error %.3e\n", name, p.key().c_str(), err);
        CAPTURE(err);
        if (std::string(name) == "gemm_3xtf32_mma") CHECK(err < 1e-5);
        CHECK(err <= data.tolerance());
      }
    }
  }
}

TEST_CASE("infinite inputs propagate as in fp32 on the default (IEEE) paths", "[gemm][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("gemm");
  const kiln::DeviceInfo& dev = kiln::device_info(kiln::Device::cuda(0));
  const std::int64_t m = 70, n = 68, k = 36;  // 16-byte rows, so 3xTF32 supports it
  // A in [0.5, 1) with a +inf at (3, 5); B positive: row 3 of C is +inf, every other row finite.
  std::vector<float> a(m * k), b(k * n);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> pos(0.5f, 1.0f);
  for (float& x : a) x = pos(rng);
  for (float& x : b) x = pos(rng);
  a[3 * k + 5] = INFINITY;
  auto da = kiln::Buffer::alloc(kiln::Device::cuda(0), kiln::f32, {m, k});
  auto db = kiln::Buffer::alloc(kiln::Device::cuda(0), kiln::f32, {k, n});
  auto dc = kiln::Buffer::alloc(kiln::Device::cuda(0), kiln::f32, {m, n});
  da.copy_from_host(a.data(), a.size() * 4);
  db.copy_from_host(b.data(), b.size() * 4);
  // What op() picks for a default (allow_tf32 = 0) call, and the SIMT kernel explicitly.
  REQUIRE_FALSE(rt.explain(rt.make_problem(schema, kiln::Args({da, db, dc}))).variant->name() == "gemm_3xtf32_mma");
  for (const char* name : {"gemm_register_blocked", "gemm_tiled"}) {
    const kiln::Variant* v = rt.registry().find_variant(name);
    REQUIRE(v != nullptr);
    const kiln::Args args({da, db, dc});
    const kiln::Problem p = rt.make_problem(schema, args);
    const kiln::Config cfg = v->default_config_for(dev, p);
    REQUIRE(v->supports(p, dev, cfg).ok);
    INFO(name << " " << cfg.to_string());
    dc.fill_bytes(0xFF);
    rt.run_variant(*v, cfg, args);
    kiln::Stream().synchronize();
    const std::vector<float> c = dc.to_host<float>();
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const float x = c[i * n + j];
        if (i == 3)
          REQUIRE((std::isinf(x) && x > 0));
        else
          REQUIRE(std::isfinite(x));
      }
  }
}

TEST_CASE("op(\"gemm\") dispatches by default to the fast variants and matches the reference", "[gemm][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("gemm");
  struct Case {
    Mnk s;
    int tf32;
    const char* variant;
    int vec;  // expected register-blocked vec, 0 when not register blocked
  };
  const Case cases[] = {
      {{7, 13, 5}, 0, "gemm_register_blocked", 1},     // dense rows of 20 bytes: not 16-byte aligned
      {{2200, 2203, 64}, 0, "gemm_register_blocked", 1},  // unaligned and large: the cp.async vec=1 row
      {{256, 256, 64}, 0, "gemm_register_blocked", 4},  // aligned, IEEE fp32: SIMT with float4 loads
      {{256, 256, 64}, 2, "gemm_3xtf32_mma", 0},       // allow_tf32 = 2: fp32-accurate tensor cores
      {{2048, 2048, 64}, 2, "gemm_3xtf32_mma", 0},
      {{256, 256, 64}, 1, "gemm_tf32_mma", 0},         // allow_tf32 = 1
      {{7, 13, 5}, 1, "gemm_register_blocked", 1},     // tf32 allowed but misaligned: full precision
      {{96, 80, 20000}, 0, "gemm_split_k", 4},         // four 64 x 64 tiles, deep k: split k
  };
  std::uint64_t seed = 300;
  for (const Case& c : cases) {
    if (kiln_test::skip_when_quick(double(c.s.m) * double(c.s.n) * double(c.s.k), 5e6)) continue;
    const kiln::Problem want = schema.problem_from_dims(kiln::f32, {c.s.m, c.s.n, c.s.k, c.tf32}, kiln::Device::cuda(0));
    kiln::ProblemData data(schema, want, kiln::Device::cuda(0), seed++);
    const kiln::Problem p = rt.make_problem(schema, data.device_args());
    const kiln::Decision d = rt.explain(p);
    INFO(p.key() << " align " << p.align_bytes << "\n" << d.explain());
    REQUIRE(d.variant != nullptr);
    CHECK(d.variant->name() == c.variant);
    if (c.vec != 0) CHECK(d.config.get("vec") == c.vec);
    if (c.s.m == 2200) CHECK(d.config.get("cp_async") == 1);
    data.poison_outputs();
    rt.op("gemm")(data.device_args());
    kiln::Stream().synchronize();
    CHECK(data.error() <= data.tolerance());
  }
}

TEST_CASE("gemm variants report their throughput at 4096^3 (printed, not checked)", "[.][perf][gemm]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("gemm");
  const kiln::DeviceInfo& dev = kiln::device_info(kiln::Device::cuda(0));
  const std::int64_t n = 4096;
  const kiln::Device gpu = kiln::Device::cuda(0);
  kiln::Buffer a = kiln::Buffer::alloc(gpu, kiln::f32, {n, n});
  kiln::Buffer b = kiln::Buffer::alloc(gpu, kiln::f32, {n, n});
  kiln::Buffer c = kiln::Buffer::alloc(gpu, kiln::f32, {n, n});
  a.fill_bytes(0x3c);  // 0x3c3c3c3c ~ 0.0115: finite, no denormals
  b.fill_bytes(0x3c);
  c.fill_bytes(0);

  auto time_config = [&](const kiln::Variant& v, const kiln::Config& cfg, const kiln::Args& args) {
    const kiln::Problem p = rt.make_problem(schema, args);
    if (!v.supports(p, dev, cfg).ok) return;
    for (int i = 0; i < 2; ++i) REQUIRE(v.launch(args, p, cfg, nullptr, kiln::Stream()).ok());
    kiln::Stream().synchronize();
    const int reps = 10;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) REQUIRE(v.launch(args, p, cfg, nullptr, kiln::Stream()).ok());
    kiln::Stream().synchronize();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    std::printf("gemm 4096^3 %-22s %-62s %8.3f ms %7.2f TFLOP/s\n", v.name().c_str(), cfg.to_string().c_str(),
                s * 1e3, schema.work(p) / s * 1e-12);
  };

  const kiln::Args f32_args({a, b, c});
  const kiln::Args tf32_args({a, b, c}, {1.0, 0.0, 1.0});
  const kiln::Problem p = rt.make_problem(schema, f32_args);
  for (const char* name : {"gemm_register_blocked", "gemm_tf32_mma", "gemm_3xtf32_mma"}) {
    const kiln::Variant* v = rt.registry().find_variant(name);
    REQUIRE(v != nullptr);
    const kiln::Args& args = is_tf32_variant(*v) ? tf32_args : f32_args;
    for (const kiln::Config& cfg : v->space().enumerate(dev, p)) time_config(*v, cfg, args);
  }
  for (const char* name : {"gemm_tiled_coalesced", "gemm_tiled"}) {
    const kiln::Variant* v = rt.registry().find_variant(name);
    REQUIRE(v != nullptr);
    time_config(*v, v->default_config(dev), f32_args);
  }
}

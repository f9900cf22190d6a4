// Every CUDA dot and reduce_sum variant and every instantiated config (a seeded sample of 60 plus
// the default where a space is larger) against the host reference, through kiln::ProblemData
// (fresh random inputs, poisoned output), at sizes from 1 through primes and non-multiples of
// every tile to 10^7; i32 exactly.  Also: misaligned views refused by vector_width 4 with a
// reason, the last-block counter reset across repeated launches on one workspace, the empty sum,
// n past 2^31, and op() end to end.
//
// Launches go on the legacy stream, which is ordered after ProblemData's copies and memsets.
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "device_workspace.hpp"
#include "test_util.hpp"
#include "register_reduction.hpp"

using kiln_test::contains;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_reduction(reg);
  REQUIRE(s.ok());
  return reg;
}

bool has_dtype(const kiln::Variant& v, kiln::DType t) {
  return std::find(v.dtypes().begin(), v.dtypes().end(), t) != v.dtypes().end();
}

std::vector<const kiln::Variant*> cuda_variants(const kiln::Registry& reg, const std::string& op) {
  std::vector<const kiln::Variant*> out;
  for (const kiln::Variant* v : reg.variants(op))
    if (v->device_kind() == kiln::DeviceKind::cuda) out.push_back(v);
  return out;
}

// Every valid config when there are at most 60, else the default plus 59 others drawn with `seed`.
std::vector<kiln::Config> configs_to_run(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p,
                                         std::uint64_t seed) {
  std::vector<kiln::Config> all = v.space().enumerate(dev, p);
  if (all.size() <= 60) return all;
  const kiln::Config def = v.default_config(dev);
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<kiln::Config> picked{def};
  for (const kiln::Config& c : all) {
    if (picked.size() == 60) break;
    if (c != def) picked.push_back(c);
  }
  return picked;
}

// Grows a device workspace; returns the pointer to pass (null for 0 bytes).
using Workspace = kiln_test::DeviceWorkspace;

const std::int64_t kSizes[] = {1, 2, 3, 31, 32, 33, 1000, 4097, 65537, (std::int64_t{1} << 20) | 7, 10000019};

}  // namespace

TEST_CASE("every CUDA reduction variant and config matches the host reference", "[reduction][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Stream stream;
  Workspace ws(gpu);

  for (const char* op : {"dot", "reduce_sum"}) {
    const kiln::OpSchema& schema = rt.registry().op(op);
    const std::vector<const kiln::Variant*> variants = cuda_variants(rt.registry(), op);
    REQUIRE(variants.size() == 8);
    for (kiln::DType dtype : schema.dtypes) {
      if (dtype == kiln::f16 || dtype == kiln::bf16) continue;  // test_reduction_half_gpu
      std::int64_t runs = 0;
      for (std::int64_t n : kSizes) {
        const kiln::Problem wanted = schema.problem_from_dims(dtype, {n}, gpu);
        kiln::ProblemData data(schema, wanted, gpu, /*seed=*/static_cast<std::uint64_t>(n) * 31 + 1);
        const kiln::Problem& p = data.problem();
        REQUIRE(p.align_bytes == 16);  // fresh allocations
        for (const kiln::Variant* v : variants) {
          if (!has_dtype(*v, dtype)) continue;
          const std::vector<kiln::Config> configs = configs_to_run(*v, dev, p, static_cast<std::uint64_t>(n));
          REQUIRE(!configs.empty());
          for (const kiln::Config& config : configs) {
            INFO(v->name() << " " << config.to_string() << " on " << p.key());
            const kiln::Support s = v->supports(p, dev, config);
            INFO("refused: " << s.reason);
            REQUIRE(s.ok);  // aligned, any n: everything runs
            void* w = ws.get(v->workspace_bytes(p, config));
            data.poison_outputs();
            const kiln::Status st = v->launch(data.device_args(), p, config, w, stream);
            INFO("launch: " << st.message());
            REQUIRE(st.ok());
            stream.synchronize();
            const double err = data.error();
            CHECK(err <= data.tolerance());
            ++runs;
          }
        }
      }
      INFO(op << " " << kiln::dtype_name(dtype));
      CHECK(runs >= 11 * 6 * 16);
    }
  }
}

TEST_CASE("misaligned views: vector_width 4 refuses with a reason, the rest still reduce right", "[reduction][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Stream stream;
  Workspace ws(gpu);

  const std::int64_t n = 100003;
  std::vector<float> hx(n + 1), hy(n + 1);
  std::mt19937_64 rng(11);
  for (std::int64_t i = 0; i <= n; ++i) {
    hx[i] = static_cast<float>(rng() >> 40) * 0x1p-24f;
    hy[i] = static_cast<float>(rng() >> 40) * 0x1p-24f;
  }
  kiln::Buffer bx = kiln::Buffer::alloc(gpu, kiln::f32, {n + 1});
  kiln::Buffer by = kiln::Buffer::alloc(gpu, kiln::f32, {n + 1});
  kiln::Buffer out = kiln::Buffer::alloc(gpu, kiln::f32, {1});
  bx.copy_from_host(hx.data(), hx.size() * sizeof(float));
  by.copy_from_host(hy.data(), hy.size() * sizeof(float));
  const auto x1 = kiln::TensorRef::vector(static_cast<float*>(bx.data()) + 1, kiln::f32, n, gpu);
  const auto y0 = kiln::TensorRef::vector(by.data(), kiln::f32, n, gpu);
  double want_sum = 0.0, want_dot = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    want_sum += hx[i + 1];
    want_dot += static_cast<double>(hx[i + 1]) * hy[i];
  }

  for (const char* op : {"reduce_sum", "dot"}) {
    const bool is_dot = std::string(op) == "dot";
    const kiln::Args args = is_dot ? kiln::Args{x1, y0, out} : kiln::Args{x1, out};
    const double want = is_dot ? want_dot : want_sum;
    const kiln::Problem p = rt.op(op).problem(args);
    CHECK(p.align_bytes == 4);

    const kiln::Variant* fast = rt.registry().find_variant(std::string(op) + "_warp_shuffle");
    REQUIRE(fast != nullptr);
    const kiln::Config def = fast->default_config(dev);
    REQUIRE(def.get("vector_width") == 4);
    const kiln::Support refused = fast->supports(p, dev, def);
    CHECK(!(refused.ok));
    CHECK(contains(refused.reason, "16-byte"));
    // launch() rechecks the pointers instead of faulting.
    const kiln::Status st = fast->launch(args, p, def, ws.get(fast->workspace_bytes(p, def)), stream);
    CHECK(!(st.ok()));

    // Every config the variants accept gives the right answer on the misaligned view.
    for (const kiln::Variant* v : cuda_variants(rt.registry(), op)) {
      if (!has_dtype(*v, kiln::f32)) continue;
      for (const kiln::Config& config : configs_to_run(*v, dev, p, 5)) {
        INFO(v->name() << " " << config.to_string());
        const kiln::Support s = v->supports(p, dev, config);
        if (!s.ok) {
          CHECK(config.get_or("vector_width", 1) == 4);
          continue;
        }
        out.fill_bytes(0xFF);
        REQUIRE(v->launch(args, p, config, ws.get(v->workspace_bytes(p, config)), stream).ok());
        stream.synchronize();
        const float got = out.to_host<float>()[0];
        CHECK(std::fabs(got - want) <= 1e-4 * std::fabs(want));
      }
    }
    // op() skips the refused default and still gets it right.
    const kiln::Decision d = rt.explain(p);
    REQUIRE(d.variant != nullptr);
    CHECK(d.variant->name() != fast->name());
    out.fill_bytes(0xFF);
    rt.op(op)(args, stream);
    stream.synchronize();
    CHECK(std::fabs(out.to_host<float>()[0] - want) <= 1e-4 * std::fabs(want));
  }
}

TEST_CASE("last-block finishes reset their counter: repeated launches on one workspace", "[reduction][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Stream stream;
  Workspace ws(gpu);

  for (const char* name : {"reduce_sum_last_block", "dot_last_block", "reduce_sum_kahan", "dot_warp_shuffle",
                           "reduce_sum_warp_shuffle"}) {
    const kiln::Variant* v = rt.registry().find_variant(name);
    REQUIRE(v != nullptr);
    const kiln::OpSchema& schema = rt.registry().op(v->op());
    for (kiln::DType dtype : v->dtypes()) {
      kiln::ProblemData data(schema, schema.problem_from_dims(dtype, {1000003}, gpu), gpu, 99);
      const kiln::Problem& p = data.problem();
      const kiln::Config config = v->default_config(dev);
      const std::size_t bytes = v->workspace_bytes(p, config);
      REQUIRE(bytes >= 4);
      void* w = ws.get(bytes);
      ws.buffer().fill_bytes(0xA5);  // garbage, as a fresh workspace may hold
      for (int rep = 0; rep < 5; ++rep) {
        INFO(name << " " << kiln::dtype_name(dtype) << " launch " << rep);
        data.poison_outputs();
        REQUIRE(v->launch(data.device_args(), p, config, w, stream).ok());
        stream.synchronize();
        CHECK(data.error() <= data.tolerance());
        // The counter (the first 4 bytes) is back to zero: the last block reset it.
        const std::vector<std::uint8_t> head = ws.buffer().to_host<std::uint8_t>();
        std::uint32_t counter = 1;
        std::memcpy(&counter, head.data(), sizeof(counter));
        CHECK(counter == 0);
      }
    }
  }
}

TEST_CASE("the empty sum is 0 on every variant", "[reduction][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Stream stream;
  Workspace ws(gpu);
  kiln::Buffer x = kiln::Buffer::alloc(gpu, kiln::f32, {4});
  kiln::Buffer out = kiln::Buffer::alloc(gpu, kiln::f32, {1});
  const auto empty = kiln::TensorRef::vector(x.data(), kiln::f32, 0, gpu);
  for (const char* op : {"dot", "reduce_sum"}) {
    const bool is_dot = std::string(op) == "dot";
    const kiln::Args args = is_dot ? kiln::Args{empty, empty, out} : kiln::Args{empty, out};
    const kiln::Problem p = rt.op(op).problem(args);
    for (const kiln::Variant* v : cuda_variants(rt.registry(), op)) {
      INFO(v->name());
      if (!has_dtype(*v, kiln::f32)) continue;  // the half variants: test_reduction_half_gpu
      const kiln::Config c = v->default_config(dev);
      out.fill_bytes(0xFF);
      REQUIRE(v->launch(args, p, c, ws.get(v->workspace_bytes(p, c)), stream).ok());
      stream.synchronize();
      CHECK(out.to_host<float>()[0] == 0.0f);
    }
  }
}

// 64-bit indexing: n = 2^31 + 7 elements of one repeated value (every byte the same, so the
// device fills them and the exact answer is known).  i32 covers every rung's index arithmetic
// exactly; f32 runs the double and compensated accumulators (a float running sum of the ~16K
// equal terms per thread is off by ~7e-5, too close to the tolerance: a property of float).
TEST_CASE("n past 2^31", "[reduction][gpu][huge]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Stream stream;
  Workspace ws(gpu);
  const std::int64_t n = (std::int64_t{1} << 31) + 7;
  kiln::Buffer x, y;
  try {
    x = kiln::Buffer::alloc(gpu, kiln::f32, {n});
    y = kiln::Buffer::alloc(gpu, kiln::f32, {n});
  } catch (const kiln::Error& e) {
    std::printf("n past 2^31: skipped, cannot allocate 2 x 8 GiB: %s\n", e.what());
    return;
  }
  kiln::Buffer out = kiln::Buffer::alloc(gpu, kiln::f32, {1});

  SECTION("reduce_sum i32, every variant's default and warp_shuffle's scalar path") {
    x.fill_bytes(0x01);  // every element 0x01010101
    const auto xi = kiln::TensorRef::vector(x.data(), kiln::i32, n, gpu);
    const auto oi = kiln::TensorRef::vector(out.data(), kiln::i32, 1, gpu);
    const kiln::Args args{xi, oi};
    const kiln::Problem p = rt.op("reduce_sum").problem(args);
    const auto want = static_cast<std::int32_t>(static_cast<std::uint32_t>(
        static_cast<std::uint64_t>(n) * 0x01010101u));  // modulo 2^32
    for (const kiln::Variant* v : cuda_variants(rt.registry(), "reduce_sum")) {
      if (!has_dtype(*v, kiln::i32)) continue;
      std::vector<kiln::Config> configs{v->default_config(dev)};
      if (v->name() == "reduce_sum_warp_shuffle") {
        kiln::Config scalar = configs[0];
        scalar.set("vector_width", 1);
        configs.push_back(scalar);
      }
      for (const kiln::Config& c : configs) {
        INFO(v->name() << " " << c.to_string());
        out.fill_bytes(0xFF);
        REQUIRE(v->launch(args, p, c, ws.get(v->workspace_bytes(p, c)), stream).ok());
        stream.synchronize();
        std::int32_t got = 0;
        out.copy_to_host(&got, sizeof(got));
        CHECK(got == want);
      }
    }
  }
  SECTION("f32 sum and dot with double and compensated accumulation") {
    x.fill_bytes(0x3C);
    y.fill_bytes(0x3C);
    float v = 0.0f;
    const std::uint32_t bits = 0x3C3C3C3Cu;
    std::memcpy(&v, &bits, sizeof(v));
    const double want_sum = static_cast<double>(n) * v;
    const double want_dot = static_cast<double>(n) * (static_cast<double>(v) * v);
    for (const char* op : {"reduce_sum", "dot"}) {
      const bool is_dot = std::string(op) == "dot";
      const kiln::Args args = is_dot ? kiln::Args{x, y, out} : kiln::Args{x, out};
      const kiln::Problem p = rt.op(op).problem(args);
      const double want = is_dot ? want_dot : want_sum;
      const kiln::Variant* fast = rt.registry().find_variant(std::string(op) + "_warp_shuffle");
      const kiln::Variant* kahan = rt.registry().find_variant(std::string(op) + "_kahan");
      kiln::Config dbl = fast->default_config(dev);
      dbl.set("acc_double", 1);
      for (const auto& [var, c] : {std::make_pair(fast, dbl), std::make_pair(kahan, kahan->default_config(dev))}) {
        INFO(var->name() << " " << c.to_string());
        out.fill_bytes(0xFF);
        REQUIRE(var->launch(args, p, c, ws.get(var->workspace_bytes(p, c)), stream).ok());
        stream.synchronize();
        CHECK(std::fabs(out.to_host<float>()[0] - want) <= 1e-6 * want);
      }
    }
  }
}

TEST_CASE("op() on device buffers dispatches to (half_)warp_shuffle and is right", "[reduction][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  kiln::OwnedStream own(gpu);
  for (const char* op : {"dot", "reduce_sum"}) {
    const kiln::OpSchema& schema = rt.registry().op(op);
    for (kiln::DType dtype : schema.dtypes) {
      INFO(op << " " << kiln::dtype_name(dtype));
      kiln::ProblemData data(schema, schema.problem_from_dims(dtype, {(std::int64_t{1} << 22) + 5}, gpu), gpu, 3);
      const kiln::Decision d = rt.explain(data.problem());
      REQUIRE(d.variant != nullptr);
      const bool half = dtype == kiln::f16 || dtype == kiln::bf16;
      CHECK(d.variant->name() == std::string(op) + (half ? "_half_warp_shuffle" : "_warp_shuffle"));
      data.poison_outputs();
      kiln::Stream().synchronize();  // ProblemData works on the legacy stream; ours does not wait for it
      rt.op(op)(data.device_args(), own);
      own.synchronize();
      CHECK(data.error() <= data.tolerance());
    }
  }
}

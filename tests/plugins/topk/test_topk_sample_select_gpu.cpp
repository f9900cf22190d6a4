// topk_sample_select against the host reference: random rows through ProblemData (outputs
// poisoned) at sizes that are multiples of no tile, on both sides of kSampleMax (sampled
// threshold, or the whole row as the sample), k from 1 to 4096, largest 1 and 0, dense and
// pitched; then hand-built rows that defeat the sample and must take the fallback (every value
// equal, a tie class straddling the k-th place, the best values sitting exactly on the sampled
// runs) or stress the key order (NaN of both signs, infinities, -0.0 against +0.0); then f16 and
// bf16 rows, whose best values tie by the thousands, random and with a few NaNs, infinities and
// signed zeros (the select kernel's compact keys: NaN is the largest or the smallest rank).
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "catch.hpp"
#include "quick.hpp"
#include "register_topk.hpp"
#include "device_workspace.hpp"
#include "test_util.hpp"
#include "topk_sample_select_params.hpp"

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  REQUIRE(register_topk(reg).ok());
  return reg;
}

using Workspace = kiln_test::DeviceWorkspace;

const kiln::Stream kStream;

struct Shape {
  std::int64_t rows, n, k;
};

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

// The variant's configs: every one for small rows, the default and the first of each filter
// tile otherwise (`blocks` only changes the grid).
std::vector<kiln::Config> configs_for(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p,
                                      bool all) {
  std::vector<kiln::Config> out;
  for (const kiln::Config& c : v.space().enumerate(dev, p))
    if (all || c.get("blocks") == 2048) out.push_back(c);
  return out;
}

void cuda_ok(cudaError_t err, const char* what) {
  INFO(what << ": " << cudaGetErrorString(err));
  REQUIRE(err == cudaSuccess);
}

// Runs the variant (every config given) on x [rows, n] and compares with the host reference bit
// for bit (any NaN equals any NaN).  in_graph: each launch is captured in a CUDA graph on a stream
// of its own (its kernels' programmatic dependencies become graph edges) and the graph replayed
// twice, outputs poisoned before each replay.
void check_rows(kiln::Runtime& rt, const kiln::Variant& v, const std::vector<float>& rows, const Shape& s, int largest,
                bool pitched, const std::vector<kiln::Config>& configs, Workspace& ws, const char* what,
                bool in_graph = false) {
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  kiln::Buffer hx = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {s.rows, s.n});
  hx.copy_from_host(rows.data(), rows.size() * sizeof(float));
  kiln::Buffer hv = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {s.rows, s.k});
  kiln::Buffer hi = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {s.rows, s.k});
  const kiln::Args host_args({hx, hv, hi}, {double(largest)});
  REQUIRE(schema.reference(host_args, rt.make_problem(schema, host_args)).ok());
  const std::vector<float> ev = hv.to_host<float>();
  const std::vector<std::int32_t> ei = hi.to_host<std::int32_t>();

  auto alloc = [&](kiln::DType t, std::int64_t r, std::int64_t c) {
    return pitched ? kiln::Buffer::alloc_pitched(gpu, t, r, c) : kiln::Buffer::alloc(gpu, t, {r, c});
  };
  kiln::Buffer dx = alloc(kiln::f32, s.rows, s.n);
  kiln::Buffer dv = alloc(kiln::f32, s.rows, s.k);
  kiln::Buffer di = alloc(kiln::i32, s.rows, s.k);
  dx.copy_from(hx.ref());
  const kiln::Args args({dx, dv, di}, {double(largest)});
  const kiln::Problem p = rt.make_problem(schema, args);
  auto mismatches = [&] {
    const std::vector<float> gv = dv.to_host<float>();
    const std::vector<std::int32_t> gi = di.to_host<std::int32_t>();
    std::int64_t bad = 0;
    for (std::size_t j = 0; j < ev.size(); ++j) {
      bad += !(bits_of(gv[j]) == bits_of(ev[j]) || (std::isnan(gv[j]) && std::isnan(ev[j])));
      bad += gi[j] != ei[j];
    }
    return bad;
  };
  for (const kiln::Config& c : configs) {
    INFO(what << " " << c.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense"));
    REQUIRE(v.supports(p, kiln::device_info(gpu), c).ok);
    void* workspace = ws.get(v.workspace_bytes(p, c));  // before any capture: it may allocate
    if (!in_graph) {
      dv.fill_bytes(0xFF);
      di.fill_bytes(0xFF);
      REQUIRE(v.launch(args, p, c, workspace, kStream).ok());
      kStream.synchronize();
      CHECK(mismatches() == 0);
      continue;
    }
    const kiln::OwnedStream owned(gpu);  // the legacy stream cannot be captured
    const auto cs = static_cast<cudaStream_t>(owned.get().handle());
    cudaGraph_t graph = nullptr;
    cuda_ok(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    const kiln::Status launched = v.launch(args, p, c, workspace, owned.get());
    cuda_ok(cudaStreamEndCapture(cs, &graph), "cudaStreamEndCapture");
    INFO(launched.message());
    REQUIRE(launched.ok());
    cudaGraphExec_t exec = nullptr;
    cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    for (int replay = 0; replay < 2; ++replay) {
      dv.fill_bytes(0xFF);
      di.fill_bytes(0xFF);
      cuda_ok(cudaDeviceSynchronize(), "poisoning the outputs");
      cuda_ok(cudaGraphLaunch(exec, cs), "cudaGraphLaunch");
      cuda_ok(cudaStreamSynchronize(cs), "cudaStreamSynchronize");
      CAPTURE(replay);
      CHECK(mismatches() == 0);
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

}  // namespace

TEST_CASE("topk_sample_select matches the host reference on random rows", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_sample_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  // Small rows (the whole row is the sample), rows just above kSampleMax, long rows; k = 1 to 4096.
  // Sampled rows up to kSampleGatherMaxRows = 32 have their sample gathered by a grid of its own
  // (3 x 20011 in quick runs too); 33 x 20011 and up are sampled by the threshold kernel itself.
  const Shape shapes[] = {{3, 5, 5},          {2, 8191, 4096},    {5, 3001, 1},       {4, 8193, 1},
                          {3, 20011, 1000},   {7, 100003, 64},    {1, 1000003, 1},    {1, 1000003, 100},
                          {1, 1000003, 4096}, {2, 3145733, 2048}, {64, 65539, 64},    {32, 20011, 64},
                          {33, 20011, 64},    {200, 30011, 300}};
  static_assert(kiln::topk::kSampleGatherMaxRows == 32, "the shapes above cover both ways of reading the sample");
  std::uint64_t seed = 1200;
  for (const Shape& s : shapes) {
    if (kiln_test::skip_when_quick(double(s.rows) * double(s.n), 70000.0)) continue;
    for (int largest : {1, 0}) {
      for (bool pitched : {false, true}) {
        const kiln::Problem wanted = schema.problem_from_dims(kiln::f32, {s.rows, s.n, s.k, largest}, gpu);
        kiln::ProblemData data(schema, wanted, gpu, seed++, {pitched, true});
        const kiln::Problem& p = data.problem();
        // Quick (sanitizer) runs: one config per filter kernel.
        const bool all = s.rows * s.n < 200000 && !kiln_test::quick_mode();
        for (const kiln::Config& c : configs_for(*v, dev, p, all)) {
          INFO(c.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense"));
          REQUIRE(v->supports(p, dev, c).ok);
          data.poison_outputs();
          REQUIRE(v->launch(data.device_args(), p, c, ws.get(v->workspace_bytes(p, c)), kStream).ok());
          kStream.synchronize();
          CHECK(data.error() == 0.0);
        }
      }
    }
  }
  // One long row (the larger sample of kSampleLongRow and more, 1024-thread sample kernel with
  // dynamic shared memory) with one config, so that quick (sanitizer) runs cover it too.
  const kiln::Problem wanted = schema.problem_from_dims(kiln::f32, {1, kiln::topk::kSampleLongRow + 5, 100, 1}, gpu);
  kiln::ProblemData data(schema, wanted, gpu, seed++, {false, true});
  const kiln::Problem& p = data.problem();
  const kiln::Config c = v->default_config(dev);
  INFO(c.to_string() << " on " << p.key());
  data.poison_outputs();
  REQUIRE(v->launch(data.device_args(), p, c, ws.get(v->workspace_bytes(p, c)), kStream).ok());
  kStream.synchronize();
  CHECK(data.error() == 0.0);
}

TEST_CASE("topk_sample_select is exact on rows that defeat the sample (the fallback) and on NaN and -0.0",
          "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_sample_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  const bool quick = kiln_test::quick_mode();
  const std::int64_t n_short = quick ? 9001 : 300007;
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();

  // k from 1 to 4096; then a long row (the larger sample of kSampleLongRow and more), not in quick runs.
  std::vector<Shape> shapes = {{2, n_short, 1}, {2, n_short, 100}, {2, n_short, 4096}};
  if (!quick) shapes.push_back({2, kiln::topk::kSampleLongRow + 5, 100});
  for (const Shape& s : shapes) {
    const std::int64_t n = s.n, k = s.k;
    const std::size_t total = std::size_t(s.rows * s.n);
    const kiln::Problem shape_only = rt.registry().op("topk").problem_from_dims(kiln::f32, {s.rows, s.n, s.k, 1}, gpu);
    auto configs = configs_for(*v, dev, shape_only, false);
    if (quick) configs.resize(1);  // sanitizer runs: the kernels are the same for every config
    std::vector<float> x(total);
    for (int largest : {1, 0}) {
      const bool pitched = (k + largest) % 2 == 0;
      // Every value equal (0.5 in one row, -0.0 and +0.0 mixed in the other): the candidates are
      // the whole row; indices decide.
      for (std::size_t i = 0; i < total; ++i) x[i] = i < std::size_t(n) ? 0.5f : ((rng() & 1) ? -0.0f : 0.0f);
      check_rows(rt, *v, x, s, largest, pitched, configs, ws, "all equal");
      // A tie class of 3/4 of the row straddling the k-th place, one better and a few worse values.
      for (std::size_t i = 0; i < total; ++i) x[i] = (rng() % 4) ? 0.25f : u(rng);
      check_rows(rt, *v, x, s, largest, pitched, configs, ws, "tie at the k-th");
      // The best values sit exactly on the sampled runs (g * n / runs, kSampleRun long), all
      // distinct and better than the rest: the threshold is so high that fewer than k pass.
      for (std::size_t i = 0; i < total; ++i) x[i] = u(rng) * 0.5f;
      const kiln::topk::SamplePlan plan = kiln::topk::sample_plan(n, k);
      if (n > kiln::topk::kSampleMax) {
        const std::int64_t runs = plan.samples / kiln::topk::kSampleRun;
        for (std::int64_t r = 0; r < s.rows; ++r)
          for (std::int64_t g = 0; g < runs; ++g)
            for (int i = 0; i < kiln::topk::kSampleRun; ++i) {
              const std::int64_t j = g * n / runs + i;
              const float big = 2.0f + float(g * kiln::topk::kSampleRun + i) / 1024.0f;
              x[std::size_t(r * n + j)] = largest ? big : -big;
            }
      }
      check_rows(rt, *v, x, s, largest, pitched, configs, ws, "sample above the rest");
      // NaN of both signs, infinities, zeros of both signs among uniform values.
      for (std::size_t i = 0; i < total; ++i) {
        const unsigned r = unsigned(rng() % 64);
        x[i] = r == 0 ? nan : r == 1 ? -nan : r == 2 ? inf : r == 3 ? -inf : r == 4 ? -0.0f : r == 5 ? 0.0f : u(rng);
      }
      check_rows(rt, *v, x, s, largest, pitched, configs, ws, "nan inf zeros");
    }
  }
}

// The variant's kernels are chained by programmatic dependent launch (topk_dependent_launch.cuh):
// captured in a CUDA graph, those dependencies become graph edges.  Each way through the chain is
// captured and replayed: the sample gathered by a grid of its own, sampled by the threshold kernel,
// k = 1 (two kernels), and every value equal (the cooperative fallback passes and the sort).
TEST_CASE("topk_sample_select's chained kernels capture in a CUDA graph and replay exactly", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_sample_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  std::mt19937_64 rng(2027);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  struct Case {
    Shape shape;
    bool all_equal;
    const char* what;
  };
  const Case cases[] = {{{3, 200003, 64}, false, "gathered sample"},
                        {{40, 50021, 100}, false, "sampled by the threshold kernel"},
                        {{2, 300007, 1}, false, "k = 1"},
                        {{2, 100003, 500}, true, "every value equal (the fallback)"}};
  for (const Case& c : cases) {
    const Shape& s = c.shape;
    std::vector<float> x(std::size_t(s.rows * s.n));
    for (float& e : x) e = c.all_equal ? 0.5f : u(rng);
    const kiln::Problem shape_only = rt.registry().op("topk").problem_from_dims(kiln::f32, {s.rows, s.n, s.k, 1}, gpu);
    const std::vector<kiln::Config> configs = {v->default_config(dev)};
    REQUIRE(v->supports(shape_only, dev, configs.front()).ok);
    check_rows(rt, *v, x, s, 1, false, configs, ws, c.what, /*in_graph=*/true);
  }
}

// f16 and bf16 (since 2026-11-27): random 16-bit rows in [-1, 1), whose best values tie by the
// thousands in rows of millions (the candidate buffer must hold the threshold value's whole tie
// class, or the row takes the fallback), every filter tile (16-byte loads of 8 elements, heads of
// up to 7 before the first 16-byte boundary when pitched), k = 1 to 4096, the long-row sample.
TEST_CASE("topk_sample_select matches the host reference on random f16 and bf16 rows", "[topk][half][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_sample_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  const Shape shapes[] = {{3, 9001, 7},        {2, 100003, 1},       {5, 65539, 64},
                          {1, 1000003, 100},   {2, 1000003, 4096},   {1, kiln::topk::kSampleLongRow + 5, 100},
                          {1, (std::int64_t(1) << 24) + 3, 100}, {2, std::int64_t(1) << 20, 4096},
                          {3, 4096, 4096}};  // power-of-two rows: every index bit of the select's compact key
  std::uint64_t seed = 1500;
  for (kiln::DType t : {kiln::f16, kiln::bf16}) {
    for (const Shape& s : shapes) {
      if (kiln_test::skip_when_quick(double(s.rows) * double(s.n), 70000.0)) continue;
      for (int largest : {1, 0}) {
        for (bool pitched : {false, true}) {
          const kiln::Problem wanted = schema.problem_from_dims(t, {s.rows, s.n, s.k, largest}, gpu);
          kiln::ProblemData data(schema, wanted, gpu, seed++, {pitched, true});
          const kiln::Problem& p = data.problem();
          REQUIRE(p.dtype == t);
          auto configs = configs_for(*v, dev, p, false);  // one per filter tile
          if (s.n > 2000000) configs.resize(1);
          for (const kiln::Config& c : configs) {
            INFO(c.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense"));
            REQUIRE(v->supports(p, dev, c).ok);
            data.poison_outputs();
            REQUIRE(v->launch(data.device_args(), p, c, ws.get(v->workspace_bytes(p, c)), kStream).ok());
            kStream.synchronize();
            CHECK(data.error() == 0.0);
          }
        }
      }
    }
  }
}

// f16 and bf16 rows of random values with one special in 64 (NaN of both signs, infinities, -0.0,
// +0.0): with largest = 0 a NaN has rank 0, whose compact key in the select kernel is 0 at index
// n - 1 of a power-of-two row; k up to n, so the lists reach the bucket sort.
TEST_CASE("topk_sample_select is exact on f16 and bf16 rows with NaN, inf and signed zeros", "[topk][half][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_sample_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  const Shape shapes[] = {{3, 4096, 4096}, {2, 8191, 3000}, {2, 65536, 2048}, {1, 300007, 1500}, {1, 1 << 20, 700}};
  std::mt19937_64 rng(1700);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (kiln::DType t : {kiln::f16, kiln::bf16}) {
    const bool f16 = t == kiln::f16;
    const std::uint16_t specials[] = {std::uint16_t(f16 ? 0x7E00 : 0x7FC0), std::uint16_t(f16 ? 0xFE01 : 0xFFC1),
                                      std::uint16_t(f16 ? 0x7C00 : 0x7F80), std::uint16_t(f16 ? 0xFC00 : 0xFF80),
                                      std::uint16_t(0x8000), std::uint16_t(0)};
    for (const Shape& s : shapes) {
      if (kiln_test::skip_when_quick(double(s.rows) * double(s.n), 70000.0)) continue;
      std::vector<std::uint16_t> x(static_cast<std::size_t>(s.rows * s.n));
      for (auto& e : x) {
        const unsigned r = unsigned(rng() % 64);
        e = r < 6 ? specials[r] : f16 ? kiln::float_to_f16(u(rng)) : kiln::float_to_bf16(u(rng));
      }
      x[x.size() - 1] = specials[0];  // a NaN at index n - 1
      kiln::Buffer hx = kiln::Buffer::alloc(kiln::Device::host(), t, {s.rows, s.n});
      hx.copy_from_host(x.data(), x.size() * 2);
      for (int largest : {1, 0}) {
        kiln::Buffer hv = kiln::Buffer::alloc(kiln::Device::host(), t, {s.rows, s.k});
        kiln::Buffer hi = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {s.rows, s.k});
        const kiln::Args host_args({hx, hv, hi}, {double(largest)});
        REQUIRE(schema.reference(host_args, rt.make_problem(schema, host_args)).ok());
        kiln::Buffer dx = kiln::Buffer::alloc(gpu, t, {s.rows, s.n}), dv = kiln::Buffer::alloc(gpu, t, {s.rows, s.k}),
                     di = kiln::Buffer::alloc(gpu, kiln::i32, {s.rows, s.k});
        dx.copy_from(hx.ref());
        const kiln::Args args({dx, dv, di}, {double(largest)});
        const kiln::Problem p = rt.make_problem(schema, args);
        auto configs = configs_for(*v, dev, p, false);
        configs.resize(1);
        for (const kiln::Config& c : configs) {
          INFO(c.to_string() << " on " << p.key());
          REQUIRE(v->supports(p, dev, c).ok);
          dv.fill_bytes(0xFF);
          di.fill_bytes(0xFF);
          REQUIRE(v->launch(args, p, c, ws.get(v->workspace_bytes(p, c)), kStream).ok());
          kStream.synchronize();
          CHECK(di.to_host<std::int32_t>() == hi.to_host<std::int32_t>());
          CHECK(dv.to_host<std::uint16_t>() == hv.to_host<std::uint16_t>());
        }
      }
    }
  }
}

// f16 and bf16 rows whose sampled threshold falls in a tie class of thousands (few distinct
// values): the filter passes that class only below an index bound taken from the sampled members
// (sample_tie_bound), so the answer's tie members must come out in index order wherever the
// class lies: spread over the row, sorted to its end or its start, or only in its last or first
// sixteenth (where the bound can miss and the row takes the fallback).
TEST_CASE("topk_sample_select is exact when the threshold's tie class is bounded by index", "[topk][half][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_sample_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  const bool quick = kiln_test::quick_mode();
  const std::int64_t n = quick ? 70001 : kiln::topk::kSampleLongRow + 5;
  std::mt19937_64 rng(1800);
  for (kiln::DType t : {kiln::bf16, kiln::f16}) {
    auto half = [&](float f) { return t == kiln::f16 ? kiln::float_to_f16(f) : kiln::float_to_bf16(f); };
    auto level = [&](int levels) { return half(float(int(rng() % unsigned(levels)) - levels / 2) / float(levels)); };
    const char* patterns[] = {"spread", "ascending", "descending", "best in the last sixteenth",
                              "best in the first sixteenth"};
    for (int pattern = 0; pattern < 5; ++pattern) {
      std::vector<std::uint16_t> x(static_cast<std::size_t>(n));
      for (auto& e : x) e = level(40);
      if (pattern == 1 || pattern == 2) {
        std::vector<std::pair<float, std::uint16_t>> keyed;
        for (auto e : x) keyed.emplace_back(t == kiln::f16 ? kiln::f16_to_float(e) : kiln::bf16_to_float(e), e);
        std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
          return pattern == 1 ? a.first < b.first : a.first > b.first;
        });
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = keyed[i].second;
      } else if (pattern >= 3) {
        // Values below 0.5 (and above -0.5) everywhere, +-0.75 only in one sixteenth of the row.
        const std::int64_t lo = pattern == 3 ? n - n / 16 : 0, hi = pattern == 3 ? n : n / 16;
        for (auto& e : x) e = level(40);
        for (std::int64_t i = lo; i < hi; ++i)
          if (rng() & 1) x[std::size_t(i)] = half((rng() & 2) ? 0.75f : -0.75f);
      }
      kiln::Buffer hx = kiln::Buffer::alloc(kiln::Device::host(), t, {1, n});
      hx.copy_from_host(x.data(), x.size() * 2);
      kiln::Buffer dx = kiln::Buffer::alloc(gpu, t, {1, n});
      dx.copy_from(hx.ref());
      for (std::int64_t k : {std::int64_t(100), std::int64_t(2000)})
        for (int largest : {1, 0}) {
          kiln::Buffer hv = kiln::Buffer::alloc(kiln::Device::host(), t, {1, k});
          kiln::Buffer hi = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {1, k});
          const kiln::Args host_args({hx, hv, hi}, {double(largest)});
          REQUIRE(schema.reference(host_args, rt.make_problem(schema, host_args)).ok());
          kiln::Buffer dv = kiln::Buffer::alloc(gpu, t, {1, k}), di = kiln::Buffer::alloc(gpu, kiln::i32, {1, k});
          const kiln::Args args({dx, dv, di}, {double(largest)});
          const kiln::Problem p = rt.make_problem(schema, args);
          auto configs = configs_for(*v, dev, p, false);
          configs.resize(1);
          for (const kiln::Config& c : configs) {
            INFO(patterns[pattern] << " " << c.to_string() << " on " << p.key());
            REQUIRE(v->supports(p, dev, c).ok);
            dv.fill_bytes(0xFF);
            di.fill_bytes(0xFF);
            REQUIRE(v->launch(args, p, c, ws.get(v->workspace_bytes(p, c)), kStream).ok());
            kStream.synchronize();
            CHECK(di.to_host<std::int32_t>() == hi.to_host<std::int32_t>());
            CHECK(dv.to_host<std::uint16_t>() == hv.to_host<std::uint16_t>());
          }
        }
    }
  }
}

// topk_grid_radix16 against the host reference, bit for bit: random f16 and bf16 rows through
// ProblemData (fresh inputs, outputs poisoned) at lengths that are multiples of no run or tile,
// single rows and batches, k from 1 to 4096 on both sides of block / 2 (the last block orders the
// keys above the k-th value, or the row's blocks after a barrier), largest 1 and 0, dense and
// pitched; hand-built rows (one value, mixed signed zeros, few distinct values so tie classes
// straddle the k-th place, NaN of both signs and payloads with infinities and zeros, ascending
// rows); rows that start 1 to 7 elements off a 16-byte boundary; rows long enough that a thread
// re-reads runs past `hold`; a capture in a CUDA graph.
#include <cuda_runtime.h>
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "device_workspace.hpp"
#include "quick.hpp"
#include "register_topk.hpp"
#include "test_util.hpp"

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

// Every config for problems of up to 300000 elements (not in quick runs); otherwise the default
// and the smallest tile that holds two runs a thread (block 256, hold 2, min_vecs 1).
std::vector<kiln::Config> configs_for(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p) {
  const bool all = !kiln_test::quick_mode() && p.dims[0] * p.dims[1] <= 300000;
  std::vector<kiln::Config> out;
  for (const kiln::Config& c : v.space().enumerate(dev, p))
    if (all || (c.get("block") == 256 && c.get("hold") == 2 && c.get("min_vecs") == 1)) out.push_back(c);
  if (!all) out.push_back(v.default_config(dev));
  return out;
}

void check_random(const kiln::OpSchema& schema, const kiln::Variant& v, kiln::DType t, const Shape& s, int largest,
                  bool pitched, std::uint64_t seed, Workspace& ws) {
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Problem wanted = schema.problem_from_dims(t, {s.rows, s.n, s.k, largest}, gpu);
  kiln::ProblemData data(schema, wanted, gpu, seed, {pitched, true});
  const kiln::Problem& p = data.problem();
  REQUIRE(p.dtype == t);
  for (const kiln::Config& c : configs_for(v, dev, p)) {
    INFO(c.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense"));
    REQUIRE(v.supports(p, dev, c).ok);
    data.poison_outputs();
    REQUIRE(v.launch(data.device_args(), p, c, ws.get(v.workspace_bytes(p, c)), kStream).ok());
    kStream.synchronize();
    CHECK(data.error() == 0.0);
  }
}

// Rows of 16-bit patterns `bits` ([rows, n], row r starting `offset + r * stride` elements into a
// device buffer, so rows may start off a 16-byte boundary), top k, against the host reference bit
// for bit, on every config of configs_for.
void check_bits(kiln::Runtime& rt, const kiln::Variant& v, kiln::DType t, const std::vector<std::uint16_t>& bits,
                const Shape& s, int largest, std::int64_t offset, std::int64_t stride, Workspace& ws,
                const char* what) {
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  REQUIRE(bits.size() == std::size_t(s.rows * s.n));
  REQUIRE(stride >= s.n);
  kiln::Buffer hx = kiln::Buffer::alloc(kiln::Device::host(), t, {s.rows, s.n});
  hx.copy_from_host(bits.data(), bits.size() * 2);
  kiln::Buffer hv = kiln::Buffer::alloc(kiln::Device::host(), t, {s.rows, s.k});
  kiln::Buffer hi = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {s.rows, s.k});
  const kiln::Args host_args({hx, hv, hi}, {double(largest)});
  REQUIRE(schema.reference(host_args, rt.make_problem(schema, host_args)).ok());
  // The device rows inside one buffer: row r at offset + r * stride; the rest is left poisoned.
  const std::int64_t total = offset + (s.rows - 1) * stride + s.n;
  std::vector<std::uint16_t> spread(std::size_t(total), 0x7E01);
  for (std::int64_t r = 0; r < s.rows; ++r)
    std::memcpy(&spread[std::size_t(offset + r * stride)], &bits[std::size_t(r * s.n)], std::size_t(s.n) * 2);
  kiln::Buffer whole = kiln::Buffer::alloc(gpu, t, {1, total});
  whole.copy_from_host(spread.data(), spread.size() * 2);
  unsigned char* first = static_cast<unsigned char*>(whole.data()) + std::size_t(offset) * 2;
  const kiln::TensorRef dx = kiln::TensorRef::matrix(first, t, s.rows, s.n, stride, gpu);
  kiln::Buffer dv = kiln::Buffer::alloc(gpu, t, {s.rows, s.k}), di = kiln::Buffer::alloc(gpu, kiln::i32, {s.rows, s.k});
  const kiln::Args args({dx, dv, di}, {double(largest)});
  const kiln::Problem p = rt.make_problem(schema, args);
  for (const kiln::Config& c : configs_for(v, dev, p)) {
    INFO(what << ": " << c.to_string() << " on " << p.key() << " offset " << offset << " stride " << stride);
    REQUIRE(v.supports(p, dev, c).ok);
    dv.fill_bytes(0xFF);
    di.fill_bytes(0xFF);
    REQUIRE(v.launch(args, p, c, ws.get(v.workspace_bytes(p, c)), kStream).ok());
    kStream.synchronize();
    CHECK(di.to_host<std::int32_t>() == hi.to_host<std::int32_t>());
    CHECK(dv.to_host<std::uint16_t>() == hv.to_host<std::uint16_t>());
  }
}

std::uint16_t half_of(kiln::DType t, float f) { return t == kiln::f16 ? kiln::float_to_f16(f) : kiln::float_to_bf16(f); }

}  // namespace

TEST_CASE("topk_grid_radix16 matches the host reference on random rows and batches", "[topk][half][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_radix16");
  REQUIRE(v != nullptr);
  Workspace ws;
  // Quick runs (the sanitizer): the shapes of up to 70000 elements, both ordering paths.
  const Shape shapes[] = {{1, 1, 1},          {1, 9, 7},           {1, 100, 100},        {1, 8193, 255},
                          {1, 20011, 257},    {1, 20011, 4096},    {1, 262147, 1},       {1, 262147, 1000},
                          {1, 1000003, 100},  {1, 1000003, 4096},  {1, (1 << 22) - 3, 16}, {1, (1 << 22) - 3, 2048},
                          {2, 1000, 64},      {3, 20011, 300},     {64, 1000, 1},        {64, 65537, 64},
                          {200, 1000, 300},   {128, 65536, 256}};
  std::uint64_t seed = 5200;
  for (kiln::DType t : {kiln::bf16, kiln::f16})
    for (const Shape& s : shapes) {
      if (kiln_test::skip_when_quick(double(s.rows) * double(s.n), 70000.0)) continue;
      for (int largest : {1, 0})
        for (bool pitched : {false, true}) check_random(schema, *v, t, s, largest, pitched, seed++, ws);
    }
}

TEST_CASE("topk_grid_radix16 is exact on ties, NaN, infinities and signed zeros", "[topk][half][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_radix16");
  REQUIRE(v != nullptr);
  Workspace ws;
  const bool quick = kiln_test::quick_mode();
  const std::int64_t n = quick ? 9001 : 300007;
  std::mt19937_64 rng(5300);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (kiln::DType t : {kiln::bf16, kiln::f16}) {
    const bool f16 = t == kiln::f16;
    const std::uint16_t specials[] = {std::uint16_t(f16 ? 0x7E00 : 0x7FC0), std::uint16_t(f16 ? 0xFE01 : 0xFFC1),
                                      std::uint16_t(f16 ? 0x7C01 : 0x7F81), std::uint16_t(f16 ? 0x7C00 : 0x7F80),
                                      std::uint16_t(f16 ? 0xFC00 : 0xFF80), std::uint16_t(0x8000),
                                      std::uint16_t(0)};
    // k = 1 and 100: the last block orders; 1025 and 4096: the row's blocks after a barrier.
    for (std::int64_t k : {std::int64_t(1), std::int64_t(100), std::int64_t(1025), std::int64_t(4096)}) {
      if (quick && (k == 1 || k == 4096)) continue;  // racecheck is slow: one k of each ordering path
      const Shape s{1, n, k};
      std::vector<std::uint16_t> x(static_cast<std::size_t>(n));
      for (int largest : {1, 0}) {
        const std::int64_t offset = (k + largest) % 8;  // 0 to 7 elements past a boundary
        for (auto& e : x) e = half_of(t, 0.5f);
        check_bits(rt, *v, t, x, s, largest, offset, n, ws, "all equal");
        for (auto& e : x) e = (rng() & 1) ? 0x8000 : 0;
        check_bits(rt, *v, t, x, s, largest, offset, n, ws, "signed zeros");
        for (auto& e : x) e = half_of(t, float(int(rng() % 301) - 150) / 150.0f);
        check_bits(rt, *v, t, x, s, largest, offset, n, ws, "301 values");
        for (auto& e : x) {
          const unsigned r = unsigned(rng() % 64);
          e = r < 7 ? specials[r] : half_of(t, u(rng));
        }
        x.back() = specials[1];
        check_bits(rt, *v, t, x, s, largest, offset, n, ws, "nan inf zeros");
        for (auto& e : x) e = half_of(t, std::ldexp(u(rng), int(rng() % 41) - 20));
        check_bits(rt, *v, t, x, s, largest, offset, n, ws, "spread exponents");
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = half_of(t, float(i % 5000) / 64.0f);
        check_bits(rt, *v, t, x, s, largest, offset, n, ws, "ascending runs");
      }
    }
  }
}

// Rows that start 1 to 7 elements past a 16-byte boundary, n not a multiple of 8; batches whose
// rows start at every place in a 16-byte run (an odd row stride).
TEST_CASE("topk_grid_radix16 reads rows off a 16-byte boundary and batches of shifted rows", "[topk][half][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_radix16");
  REQUIRE(v != nullptr);
  Workspace ws;
  const bool quick = kiln_test::quick_mode();
  std::mt19937_64 rng(5400);
  const std::int64_t n = quick ? 20011 : 1000003;
  for (kiln::DType t : {kiln::bf16, kiln::f16}) {
    std::vector<std::uint16_t> x(static_cast<std::size_t>(n));
    for (std::int64_t offset : {1, 3, 7})
      for (std::int64_t k : {std::int64_t(100), std::int64_t(1500)}) {
        for (auto& e : x) e = half_of(t, float(int(rng() % 501) - 250) / 250.0f);
        check_bits(rt, *v, t, x, Shape{1, n, k}, 1, offset, n, ws, "offset row");
      }
    // An odd stride: consecutive rows start at every one of the 8 places in a 16-byte run (n is not
    // a multiple of 8 either); k = 200 is ordered by the row's last block, 600 after a barrier.
    for (std::int64_t k : {std::int64_t(200), std::int64_t(600)}) {
      const Shape batch{quick ? 9 : 37, quick ? 3002 : 10002, k};
      std::vector<std::uint16_t> b(std::size_t(batch.rows * batch.n));
      for (auto& e : b) e = half_of(t, float(int(rng() % 1001) - 500) / 500.0f);
      for (int largest : {1, 0}) check_bits(rt, *v, t, b, batch, largest, 5, batch.n + 3, ws, "shifted batch");
    }
  }
}

// Rows whose threads hold more runs than `hold`: the rest are re-read at every pass.
TEST_CASE("topk_grid_radix16 re-reads runs past the registers on long rows", "[topk][half][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_radix16");
  REQUIRE(v != nullptr);
  Workspace ws;
  if (kiln_test::quick_mode()) {
    // A short row on one block: min_vecs 4 with block 256 and hold 2 (runs 2 and 3 re-read).
    const kiln::Device gpu = kiln::Device::cuda(0);
    const kiln::Problem wanted = schema.problem_from_dims(kiln::bf16, {1, 8000, 300, 1}, gpu);
    kiln::ProblemData data(schema, wanted, gpu, 5500);
    const kiln::Config c{{"block", 256}, {"hold", 2}, {"min_vecs", 4}};
    REQUIRE(v->supports(data.problem(), kiln::device_info(gpu), c).ok);
    data.poison_outputs();
    REQUIRE(v->launch(data.device_args(), data.problem(), c, ws.get(v->workspace_bytes(data.problem(), c)), kStream)
                .ok());
    kStream.synchronize();
    CHECK(data.error() == 0.0);
    return;
  }
  std::uint64_t seed = 5600;
  for (const Shape& s : {Shape{1, 1 << 24, 100}, Shape{1, 7000003, 4096}, Shape{1, 50000017, 1000}})
    for (kiln::DType t : {kiln::bf16, kiln::f16}) {
      const int largest = int(seed % 2);
      check_random(schema, *v, t, s, largest, false, seed++, ws);
    }
}

TEST_CASE("topk_grid_radix16 declines f32, k past 4096, rows past the resident grid and huge rows", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_radix16");
  REQUIRE(v != nullptr);
  const kiln::Config c = v->default_config(dev);
  CHECK_FALSE(v->supports(schema.problem_from_dims(kiln::f32, {1, 1 << 20, 64, 1}, gpu), dev, c).ok);
  CHECK_FALSE(v->supports(schema.problem_from_dims(kiln::bf16, {1, 1 << 20, 4097, 1}, gpu), dev, c).ok);
  CHECK_FALSE(v->supports(schema.problem_from_dims(kiln::bf16, {2 * dev.sm_count + 1, 1024, 8, 1}, gpu), dev, c).ok);
  CHECK(v->supports(schema.problem_from_dims(kiln::bf16, {2 * dev.sm_count, 1024, 8, 1}, gpu), dev, c).ok);
  CHECK(v->supports(schema.problem_from_dims(kiln::f16, {1, std::int64_t(1) << 30, 64, 1}, gpu), dev, c).ok);
  CHECK_FALSE(v->supports(schema.problem_from_dims(kiln::f16, {1, (std::int64_t(1) << 30) + 1, 64, 1}, gpu), dev, c).ok);
}

// The launch is one cooperative kernel that zeroes its own counters: captured into a CUDA graph
// on a stream of its own and replayed twice, outputs poisoned before each replay.
TEST_CASE("topk_grid_radix16 captures in a CUDA graph and replays exactly", "[topk][half][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_radix16");
  REQUIRE(v != nullptr);
  Workspace ws;
  for (const Shape& s : {Shape{1, 200003, 100}, Shape{1, 200003, 3000}, Shape{8, 30011, 64}}) {
    const kiln::Problem wanted = schema.problem_from_dims(kiln::bf16, {s.rows, s.n, s.k, 1}, gpu);
    kiln::ProblemData data(schema, wanted, gpu, /*seed=*/78);
    const kiln::Problem& p = data.problem();
    const kiln::Config c = v->default_config(dev);
    INFO(c.to_string() << " on " << p.key());
    REQUIRE(v->supports(p, dev, c).ok);
    void* w = ws.get(v->workspace_bytes(p, c));
    kiln::OwnedStream stream(gpu);
    const auto st = static_cast<cudaStream_t>(stream.get().handle());
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal) == cudaSuccess);
    const kiln::Status launched = v->launch(data.device_args(), p, c, w, stream.get());
    const cudaError_t ended = cudaStreamEndCapture(st, &graph);
    INFO("launch during capture: " << launched.message());
    REQUIRE(launched.ok());
    REQUIRE(ended == cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    for (int replay = 0; replay < 2; ++replay) {
      data.poison_outputs();
      REQUIRE(cudaGraphLaunch(exec, st) == cudaSuccess);
      REQUIRE(cudaStreamSynchronize(st) == cudaSuccess);
      CAPTURE(replay);
      CHECK(data.error() == 0.0);
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

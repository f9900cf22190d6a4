// topk_grid_select against the host reference: random f32, f16 and bf16 rows through ProblemData
// (outputs poisoned) at lengths that are multiples of no chunk, one row (the variant takes no
// more), k from 1 to 4096, largest 1 and 0, dense and pitched, every config; then hand-built rows that stress the
// levels and the fallback (every value equal: the candidates overflow; a tie class of 3/4 of the
// row at the k-th place; values spread over many octaves; NaN of both signs, infinities and zeros
// of both signs; a few huge values above a cluster of neighbouring floats, which sends the k-th
// rank deep into the levels; few distinct values, small tie classes straddling the k-th place),
// compared bit for bit; rows that start off a 16-byte boundary; rows longer than shared memory holds.
#include <cuda_runtime.h>
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
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

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

// Every config for rows of up to 200000 elements in all; otherwise (and in quick runs, the
// sanitizer) the default and the smallest chunk of 256 threads.
std::vector<kiln::Config> configs_for(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p) {
  const bool all = !kiln_test::quick_mode() && p.dims[0] * p.dims[1] <= 200000;
  std::vector<kiln::Config> out;
  for (const kiln::Config& c : v.space().enumerate(dev, p))
    if (all || (c.get("block") == 256 && c.get("min_chunk") == 1024)) out.push_back(c);
  if (!all) out.push_back(v.default_config(dev));
  return out;
}

// Runs every config on the f32 rows x [rows, n] and compares with the host reference bit for bit
// (any NaN equals any NaN).
void check_rows(kiln::Runtime& rt, const kiln::Variant& v, const std::vector<float>& rows, const Shape& s, int largest,
                bool pitched, Workspace& ws, const char* what) {
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
  for (const kiln::Config& c : configs_for(v, kiln::device_info(gpu), p)) {
    INFO(what << " " << c.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense"));
    REQUIRE(v.supports(p, kiln::device_info(gpu), c).ok);
    dv.fill_bytes(0xFF);
    di.fill_bytes(0xFF);
    REQUIRE(v.launch(args, p, c, ws.get(v.workspace_bytes(p, c)), kStream).ok());
    kStream.synchronize();
    const std::vector<float> gv = dv.to_host<float>();
    const std::vector<std::int32_t> gi = di.to_host<std::int32_t>();
    std::int64_t bad = 0;
    for (std::size_t j = 0; j < ev.size(); ++j) {
      bad += !(bits_of(gv[j]) == bits_of(ev[j]) || (std::isnan(gv[j]) && std::isnan(ev[j])));
      bad += gi[j] != ei[j];
    }
    CHECK(bad == 0);
  }
}

// Runs every config on a random row (ProblemData: fresh inputs, outputs poisoned before each run)
// and compares with its host reference.
void check_random_row(const kiln::OpSchema& schema, const kiln::Variant& v, kiln::DType t, const Shape& s,
                      int largest, bool pitched, std::uint64_t seed, Workspace& ws) {
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

// The row of n elements of type t that starts `offset` elements into `bytes` (a view into a larger
// device buffer, so off a 16-byte boundary for most offsets), top k of it largest first, on the
// default config (or every config) against the host reference, bit for bit.
void check_offset_row(kiln::Runtime& rt, const kiln::Variant& v, kiln::DType t, const std::vector<unsigned char>& bytes,
                      std::int64_t n, std::int64_t offset, std::int64_t k, bool every_config, Workspace& ws) {
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const std::size_t es = kiln::dtype_size(t);
  REQUIRE(bytes.size() == std::size_t(n + offset) * es);
  kiln::Buffer hx = kiln::Buffer::alloc(kiln::Device::host(), t, {1, n});
  hx.copy_from_host(bytes.data() + std::size_t(offset) * es, std::size_t(n) * es);
  kiln::Buffer hv = kiln::Buffer::alloc(kiln::Device::host(), t, {1, k});
  kiln::Buffer hi = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {1, k});
  const kiln::Args host_args({hx, hv, hi}, {1.0});
  REQUIRE(schema.reference(host_args, rt.make_problem(schema, host_args)).ok());
  kiln::Buffer whole = kiln::Buffer::alloc(gpu, t, {1, n + offset});
  whole.copy_from_host(bytes.data(), bytes.size());
  unsigned char* first = static_cast<unsigned char*>(whole.data()) + std::size_t(offset) * es;
  const kiln::TensorRef dx = kiln::TensorRef::matrix(first, t, 1, n, n, gpu);
  kiln::Buffer dv = kiln::Buffer::alloc(gpu, t, {1, k}), di = kiln::Buffer::alloc(gpu, kiln::i32, {1, k});
  const kiln::Args args({dx, dv, di}, {1.0});
  const kiln::Problem p = rt.make_problem(schema, args);
  const std::vector<kiln::Config> configs =
      every_config ? configs_for(v, dev, p) : std::vector<kiln::Config>{v.default_config(dev)};
  for (const kiln::Config& c : configs) {
    INFO(c.to_string() << " on " << p.key() << " offset " << offset);
    REQUIRE(v.supports(p, dev, c).ok);
    dv.fill_bytes(0xFF);
    di.fill_bytes(0xFF);
    REQUIRE(v.launch(args, p, c, ws.get(v.workspace_bytes(p, c)), kStream).ok());
    kStream.synchronize();
    CHECK(di.to_host<std::int32_t>() == hi.to_host<std::int32_t>());
    if (t == kiln::f32) CHECK(dv.to_host<float>() == hv.to_host<float>());
    else CHECK(dv.to_host<std::uint16_t>() == hv.to_host<std::uint16_t>());
  }
}

}  // namespace

TEST_CASE("topk_grid_select matches the host reference on random rows", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  // Quick runs (the sanitizer): the shapes of up to 50000 elements (8193, 20011, 40009).
  const Shape shapes[] = {{1, 8193, 7},       {1, 20011, 1000},  {1, 1000003, 100},  {1, 1000003, 4096},
                          {1, 1000003, 1},    {1, 100003, 64},   {1, 3145733, 2048}, {1, (1 << 22) - 3, 16},
                          {1, 1 << 20, 4096}, {1, 262147, 256},   {1, 40009, 2500},  {1, 77777, 1024},
                          {1, 2000003, 3001}};
  std::uint64_t seed = 2400;
  for (kiln::DType t : {kiln::f32, kiln::bf16, kiln::f16}) {
    for (const Shape& s : shapes) {
      if (kiln_test::skip_when_quick(double(s.rows) * double(s.n), 50000.0)) continue;
      for (int largest : {1, 0})
        for (bool pitched : {false, true}) check_random_row(schema, *v, t, s, largest, pitched, seed++, ws);
    }
  }
}

TEST_CASE("topk_grid_select is exact on ties, spread octaves, NaN and signed zeros", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  const bool quick = kiln_test::quick_mode();
  const std::int64_t n = quick ? 9001 : 300007;
  std::mt19937_64 rng(91);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // k = 1 and 100 end with at most 256 candidates, k = 1025, 3001 and 4096 with up to 8192.
  for (const Shape s : {Shape{1, n, 1}, Shape{1, n, 100}, Shape{1, n, 1025}, Shape{1, n, 3001}, Shape{1, n, 4096}}) {
    std::vector<float> x(std::size_t(s.rows * s.n));
    for (int largest : {1, 0}) {
      const bool pitched = (s.k + largest) % 2 == 0;
      // Every value equal (0.5 with largest = 1; -0.0 and +0.0 mixed with largest = 0): one tie
      // class of the whole row, whose first k members by index are the answer.
      for (auto& e : x) e = largest ? 0.5f : ((rng() & 1) ? -0.0f : 0.0f);
      check_rows(rt, *v, x, s, largest, pitched, ws, "all equal");
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = (rng() % 4) ? 0.25f : u(rng);
      check_rows(rt, *v, x, s, largest, pitched, ws, "tie at the k-th");
      // 2001 values (-1, -0.999, ..., 1): tie classes of n / 2001 straddle the k-th place but fit
      // the candidates, so the order within them is the rank kernel's (or the sort's) by index.
      for (auto& e : x) e = float(int(rng() % 2001) - 1000) / 1000.0f;
      check_rows(rt, *v, x, s, largest, pitched, ws, "small tie classes");
      // Magnitudes over 2^-60 .. 2^60: the bands are far apart, the levels go deep.
      for (auto& e : x) e = std::ldexp(u(rng), int(rng() % 121) - 60);
      check_rows(rt, *v, x, s, largest, pitched, ws, "spread octaves");
      // A few huge values (fewer than k) above a cluster of neighbouring floats: the k-th rank
      // lies in a wide level-0 bin far from the largest, so the 256-bin levels go deep.
      for (auto& e : x) {
        const std::uint32_t b = 0x3F800000u + std::uint32_t(rng() % 200000);
        std::memcpy(&e, &b, 4);
        if (rng() % 1024 == 0) e = (largest ? 1.0e30f : -1.0e30f) * (1.0f + u(rng) * 0.5f);
      }
      check_rows(rt, *v, x, s, largest, pitched, ws, "outliers above a cluster");
      for (auto& e : x) {
        const unsigned r = unsigned(rng() % 64);
        e = r == 0 ? nan : r == 1 ? -nan : r == 2 ? inf : r == 3 ? -inf : r == 4 ? -0.0f : r == 5 ? 0.0f : u(rng);
      }
      check_rows(rt, *v, x, s, largest, pitched, ws, "nan inf zeros");
    }
  }
}

// f16 and bf16 rows with one special in 64 (NaN of both signs, infinities, -0.0, +0.0), a NaN at
// index n - 1, compared bit for bit: 16-bit values tie by the hundreds at the k-th place.
TEST_CASE("topk_grid_select is exact on f16 and bf16 rows with NaN, inf and signed zeros", "[topk][half][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  const Shape shapes[] = {{1, 9001, 3000}, {1, 300007, 1500}, {1, 1 << 20, 700}, {1, 1 << 20, 4096}};
  std::mt19937_64 rng(1900);
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
      x[x.size() - 1] = specials[0];
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
        const kiln::Config c = v->default_config(dev);
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

// A row that starts off a 16-byte boundary (a view into a larger buffer, 1 to 7 elements in) is
// read element by element instead of in 16-byte runs; with n not a multiple of a run either.
TEST_CASE("topk_grid_select reads rows that start off a 16-byte boundary", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  std::mt19937_64 rng(1901);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const std::int64_t n = kiln_test::quick_mode() ? 20011 : 1000003;
  for (kiln::DType t : {kiln::f32, kiln::bf16}) {
    const std::size_t es = t == kiln::f32 ? 4 : 2;
    for (std::int64_t offset : {1, 3, 7}) {
      for (std::int64_t k : {std::int64_t(100), std::int64_t(1500)}) {
        // Few distinct values: tie classes at the k-th place (the bf16 rows' trim path).
        std::vector<unsigned char> bytes(std::size_t(n + offset) * es);
        for (std::int64_t i = 0; i < n + offset; ++i) {
          const float f = (rng() % 3) ? float(int(rng() % 501) - 250) / 250.0f : u(rng);
          if (t == kiln::f32) std::memcpy(&bytes[std::size_t(i) * 4], &f, 4);
          else {
            const std::uint16_t h = kiln::float_to_bf16(f);
            std::memcpy(&bytes[std::size_t(i) * 2], &h, 2);
          }
        }
        check_offset_row(rt, *v, t, bytes, n, offset, k, /*every_config=*/false, ws);
      }
    }
  }
}

TEST_CASE("topk_grid_select declines more than one row, rows beyond the resident grid and short rows",
          "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_select");
  REQUIRE(v != nullptr);
  const kiln::Config c = v->default_config(dev);
  CHECK_FALSE(v->supports(schema.problem_from_dims(kiln::f32, {64, 1 << 20, 64, 1}, gpu), dev, c).ok);
  CHECK_FALSE(v->supports(schema.problem_from_dims(kiln::f32, {2, 9001, 64, 1}, gpu), dev, c).ok);
  CHECK_FALSE(v->supports(schema.problem_from_dims(kiln::f32, {1, 1 << 28, 64, 1}, gpu), dev, c).ok);
  // Two blocks of kGridMaxStreamChunk (65536) elements per SM: 2^24 on an H100 or H200, not 2^25.
  if (dev.sm_count >= 128) {
    CHECK(v->supports(schema.problem_from_dims(kiln::bf16, {1, 1 << 24, 64, 1}, gpu), dev, c).ok);
    CHECK_FALSE(v->supports(schema.problem_from_dims(kiln::bf16, {1, 1 << 25, 64, 1}, gpu), dev, c).ok);
  }
  CHECK_FALSE(v->supports(schema.problem_from_dims(kiln::f32, {1, 8192, 64, 1}, gpu), dev, c).ok);
  CHECK(v->supports(schema.problem_from_dims(kiln::f32, {1, 1 << 22, 64, 1}, gpu), dev, c).ok);
}

// Rows longer than the resident grid holds in shared memory (about 6.5 M elements on an H100 or
// H200): each block keeps its first kGridMaxChunk ranks in shared memory and re-reads the rest of
// its chunk from global memory at every pass.  Random rows of the three types, a bf16 row of few
// distinct values (tie classes at the k-th place: the trim path over streamed groups) read from an
// address off a 16-byte boundary (element-wise runs), and all-equal f32 rows; every config (256-
// and 512-thread blocks hold different numbers of groups).  Quick runs (the sanitizer) take one
// random row and the tie row.
TEST_CASE("topk_grid_select re-reads chunks past shared memory from global memory", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  const bool quick = kiln_test::quick_mode();
  std::uint64_t seed = 3100;
  struct Case {
    kiln::DType t;
    std::int64_t n, k;
    int largest;
  };
  const std::vector<Case> randoms =
      quick ? std::vector<Case>{{kiln::f32, 9000011, 100, 1}}
            : std::vector<Case>{{kiln::f32, 9000011, 100, 1},    {kiln::f32, 9000011, 1, 0},
                                {kiln::f32, 12000017, 2000, 1},  {kiln::bf16, 1 << 24, 100, 1},
                                {kiln::bf16, 7000003, 4096, 0},  {kiln::f16, 7000003, 300, 1},
                                {kiln::f16, (1 << 24) - 5, 64, 0}};
  for (const Case& cs : randoms)
    check_random_row(schema, *v, cs.t, Shape{1, cs.n, cs.k}, cs.largest, /*pitched=*/false, seed++, ws);
  // bf16, few distinct values, the row 3 elements into its buffer.
  std::mt19937_64 rng(3101);
  const std::int64_t n = 7000003, offset = 3;
  for (std::int64_t k : {std::int64_t(100), std::int64_t(1500)}) {
    if (quick && k != 100) continue;
    std::vector<unsigned char> bytes(std::size_t(n + offset) * 2);
    for (std::size_t i = 0; i < bytes.size(); i += 2) {
      const std::uint16_t h = kiln::float_to_bf16(float(int(rng() % 301) - 150) / 150.0f);
      std::memcpy(&bytes[i], &h, 2);
    }
    check_offset_row(rt, *v, kiln::bf16, bytes, n, offset, k, /*every_config=*/true, ws);
  }
  if (quick) return;
  // Every value equal: one tie class of the whole row, its first k members by index.
  std::vector<float> x(std::size_t(9000011), 0.5f);
  check_rows(rt, *v, x, Shape{1, 9000011, 300}, 1, false, ws, "all equal, streamed");
}

// op() must stay capturable (docs/architecture.md): the cooperative launch and the rank kernel
// after it (or, for k <= 256, the cooperative launch alone, its last block ordering the list) are
// captured into a CUDA graph on a stream of their own and replayed twice, outputs poisoned before
// each replay, against the host reference.  The counters in the workspace (the levels', the
// last block's arrivals) are the kernels' own to reset, so a replay must not depend on a memset
// outside the graph.
TEST_CASE("topk_grid_select captures in a CUDA graph and replays exactly", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_grid_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  // k = 64 and 100: the last block's order; 300: grid_rank_kernel; 2048 and 4096: also its
  // shared-memory opt-in inside the capture.
  const std::pair<kiln::DType, std::int64_t> cases[] = {{kiln::f32, 64},   {kiln::bf16, 100}, {kiln::f32, 300},
                                                        {kiln::bf16, 300}, {kiln::f32, 2048}, {kiln::f16, 4096}};
  for (const auto& [t, k] : cases) {
    const kiln::Problem wanted = schema.problem_from_dims(t, {1, 200003, k, 1}, gpu);
    kiln::ProblemData data(schema, wanted, gpu, /*seed=*/77);
    const kiln::Problem& p = data.problem();
    const kiln::Config c = v->default_config(dev);
    INFO(c.to_string() << " on " << p.key());
    REQUIRE(v->supports(p, dev, c).ok);
    void* w = ws.get(v->workspace_bytes(p, c));
    kiln::OwnedStream stream(gpu);
    const auto s = static_cast<cudaStream_t>(stream.get().handle());
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
    const kiln::Status launched = v->launch(data.device_args(), p, c, w, stream.get());
    const cudaError_t ended = cudaStreamEndCapture(s, &graph);
    INFO("launch during capture: " << launched.message());
    REQUIRE(launched.ok());
    REQUIRE(ended == cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    for (int replay = 0; replay < 2; ++replay) {
      data.poison_outputs();
      REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
      REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
      CAPTURE(replay);
      CHECK(data.error() == 0.0);
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

// topk on f16 and bf16 rows: every CUDA variant that declares the dtype (topk_row_select,
// topk_radix_select, topk_warp_select, topk_sample_select), with a sample of its configs, against the host reference, largest = 1 and 0,
// dense and pitched; kiln::ProblemData for random rows (16-bit values in [-1, 1): many ties at
// a million elements) with poisoned outputs, and hand-built rows of ties with zeros of both signs
// and of NaNs (both signs, payloads), infinities and -0.0.  topk_block_merge (f32 only) must
// not declare the half types.
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "quick.hpp"
#include "register_topk.hpp"
#include "device_workspace.hpp"
#include "test_util.hpp"

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  REQUIRE(register_topk(reg).ok());
  return reg;
}

std::vector<const kiln::Variant*> half_variants(const kiln::Registry& reg, kiln::DType t) {
  std::vector<const kiln::Variant*> out;
  for (const kiln::Variant* v : reg.variants("topk")) {
    const auto& d = v->desc().dtypes;
    if (v->device_kind() == kiln::DeviceKind::cuda && std::find(d.begin(), d.end(), t) != d.end()) out.push_back(v);
  }
  return out;
}

// The default plus a fixed sample of at most `limit` valid configs.
std::vector<kiln::Config> sample_configs(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p,
                                         std::size_t limit) {
  std::vector<kiln::Config> all = v.space().enumerate(dev, p);
  std::vector<kiln::Config> out;
  const kiln::Config def = v.default_config_for(dev, p);
  if (!v.space().violated(def, dev, p)) out.push_back(def);
  std::mt19937_64 rng(all.size() + std::uint64_t(p.dims[1]));
  std::shuffle(all.begin(), all.end(), rng);
  for (const kiln::Config& c : all) {
    if (out.size() >= limit) break;
    if (c != def) out.push_back(c);
  }
  return out;
}

using Workspace = kiln_test::DeviceWorkspace;

const kiln::Stream kStream;

struct Shape {
  std::int64_t rows, n, k;
};
// Rows that fit topk_row_select (n <= 16384) and longer ones; sizes that are not multiples of any
// tile; k up to 2000.
const Shape kShapes[] = {{1, 7, 7},     {3, 100, 5},      {40, 1000, 8},       {300, 257, 64},
                         {4, 16383, 2000}, {5, 4097, 1024}, {1, 1000003, 100}, {64, (1 << 16) | 3, 64}};

// topk_row_select and topk_warp_select hold a row in registers (n within their tile),
// topk_warp_select sorts at most 512 keys per warp (k <= 256), and topk_grid_select takes one row
// of 8193 elements or more, topk_grid_radix16 at most two rows an SM: refusals for those limits
// are skipped.
bool refused_for_length(const kiln::Variant& v, const kiln::Support& s) {
  if (s.ok) return false;
  const bool n_limit = s.reason.find("n = ") != std::string::npos, k_limit = s.reason.find("k = ") != std::string::npos;
  const bool rows_limit = s.reason.find("rows = ") != std::string::npos;
  return (v.name() == "topk_row_select" && n_limit) || (v.name() == "topk_warp_select" && (n_limit || k_limit)) ||
         (v.name() == "topk_grid_select" && (n_limit || rows_limit)) || (v.name() == "topk_grid_radix16" && rows_limit);
}

// Hand-built rows: ties (0..9 with zeros of both signs) or specials (NaN of both signs and two
// payloads, infinities, -0.0) among random values.
std::vector<std::uint16_t> make_rows(kiln::DType t, const Shape& s, bool ties, std::uint64_t seed) {
  const bool f16 = t == kiln::f16;
  auto half = [&](float f) { return f16 ? kiln::float_to_f16(f) : kiln::float_to_bf16(f); };
  const std::uint16_t specials[] = {std::uint16_t(f16 ? 0x7E00 : 0x7FC0), std::uint16_t(f16 ? 0xFE00 : 0xFFC0),
                                    std::uint16_t(f16 ? 0x7C01 : 0x7F81), std::uint16_t(f16 ? 0x7C00 : 0x7F80),
                                    std::uint16_t(f16 ? 0xFC00 : 0xFF80), std::uint16_t(0x8000)};
  std::vector<std::uint16_t> x(static_cast<std::size_t>(s.rows * s.n));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& e : x) {
    if (ties) {
      const int d = int(rng() % 10);
      e = d == 0 && (rng() & 1) ? std::uint16_t(0x8000) : half(float(d));
    } else {
      const unsigned r = unsigned(rng() % 48);
      e = r < 6 ? specials[r] : half(u(rng));
    }
  }
  return x;
}

}  // namespace

TEST_CASE("topk_block_merge declares f32 only, topk_grid_radix16 f16 and bf16 only; the others all three", "[topk][half][gpu]") {
  const kiln::Registry reg = make_registry();
  for (kiln::DType t : {kiln::f16, kiln::bf16}) {
    std::vector<std::string> names;
    for (const kiln::Variant* v : half_variants(reg, t)) names.push_back(v->name());
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"topk_grid_radix16", "topk_grid_select", "topk_radix_select",
                                            "topk_row_select", "topk_sample_select", "topk_warp_select"});
  }
}

TEST_CASE("CUDA topk variants match the host reference on random f16 and bf16 rows", "[topk][half][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  Workspace ws;
  std::uint64_t seed = 700;
  for (kiln::DType t : {kiln::f16, kiln::bf16}) {
    const auto variants = half_variants(rt.registry(), t);
    REQUIRE(variants.size() == 6);
    for (const Shape& s : kShapes) {
      if (kiln_test::skip_when_quick(double(s.rows) * double(s.n))) continue;
      for (int largest : {1, 0}) {
        for (bool pitched : {false, true}) {
          const kiln::Problem wanted = schema.problem_from_dims(t, {s.rows, s.n, s.k, largest}, gpu);
          kiln::ProblemData data(schema, wanted, gpu, seed++, {pitched, true});
          const kiln::Problem& p = data.problem();
          REQUIRE(p.dtype == t);
          for (const kiln::Variant* v : variants) {
            const std::size_t limit = kiln_test::quick_mode() ? 2 : s.rows * s.n > 100000 ? 6 : 24;
            for (const kiln::Config& c : sample_configs(*v, dev, p, limit)) {
              INFO(v->name() << " " << c.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense"));
              const kiln::Support sup = v->supports(p, dev, c);
              if (refused_for_length(*v, sup)) continue;
              REQUIRE(sup.ok);
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
}

TEST_CASE("CUDA topk on f16 and bf16 rows of ties, NaNs, infinities and signed zeros", "[topk][half][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  Workspace ws;
  std::uint64_t seed = 800;
  for (kiln::DType t : {kiln::f16, kiln::bf16}) {
    for (const Shape& s : kShapes) {
      if (kiln_test::skip_when_quick(double(s.rows) * double(s.n))) continue;
      for (bool ties : {true, false}) {
        const std::vector<std::uint16_t> rows = make_rows(t, s, ties, seed++);
        kiln::Buffer hx = kiln::Buffer::alloc(kiln::Device::host(), t, {s.rows, s.n});
        hx.copy_from_host(rows.data(), rows.size() * 2);
        for (int largest : {1, 0}) {
          kiln::Buffer hv = kiln::Buffer::alloc(kiln::Device::host(), t, {s.rows, s.k});
          kiln::Buffer hi = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {s.rows, s.k});
          const kiln::Args host_args({hx, hv, hi}, {double(largest)});
          REQUIRE(schema.reference(host_args, rt.make_problem(schema, host_args)).ok());
          const bool pitched = (seed + largest) % 2 == 0;
          auto alloc = [&](kiln::DType dt, std::int64_t r, std::int64_t c) {
            return pitched ? kiln::Buffer::alloc_pitched(gpu, dt, r, c) : kiln::Buffer::alloc(gpu, dt, {r, c});
          };
          kiln::Buffer dx = alloc(t, s.rows, s.n), dv = alloc(t, s.rows, s.k), di = alloc(kiln::i32, s.rows, s.k);
          dx.copy_from(hx.ref());
          const kiln::Args args({dx, dv, di}, {double(largest)});
          const kiln::Problem p = rt.make_problem(schema, args);
          for (const kiln::Variant* v : half_variants(rt.registry(), t)) {
            const std::size_t limit = kiln_test::quick_mode() ? 1 : s.rows * s.n > 100000 ? 4 : 12;
            for (const kiln::Config& c : sample_configs(*v, dev, p, limit)) {
              INFO(v->name() << " " << c.to_string() << " on " << p.key() << (ties ? " ties" : " specials"));
              const kiln::Support sup = v->supports(p, dev, c);
              if (refused_for_length(*v, sup)) continue;
              REQUIRE(sup.ok);
              dv.fill_bytes(0xFF);
              di.fill_bytes(0xFF);
              REQUIRE(v->launch(args, p, c, ws.get(v->workspace_bytes(p, c)), kStream).ok());
              kStream.synchronize();
              CHECK(di.to_host<std::int32_t>() == hi.to_host<std::int32_t>());
              // Values bit for bit: the reference copies the bits of x, so NaN payloads must match too.
              CHECK(dv.to_host<std::uint16_t>() == hv.to_host<std::uint16_t>());
            }
          }
        }
      }
    }
  }
}

TEST_CASE("op() runs topk on bf16 device buffers", "[topk][half][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const Shape s{8, 300001, 50};
  const std::vector<std::uint16_t> rows = make_rows(kiln::bf16, s, false, 5);
  kiln::Buffer hx = kiln::Buffer::alloc(kiln::Device::host(), kiln::bf16, {s.rows, s.n});
  hx.copy_from_host(rows.data(), rows.size() * 2);
  kiln::Buffer hv = kiln::Buffer::alloc(kiln::Device::host(), kiln::bf16, {s.rows, s.k});
  kiln::Buffer hi = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {s.rows, s.k});
  rt.op("topk")({hx, hv, hi});  // topk_host
  kiln::Buffer dx = kiln::Buffer::alloc(gpu, kiln::bf16, {s.rows, s.n});
  dx.copy_from(hx.ref());
  kiln::Buffer dv = kiln::Buffer::alloc(gpu, kiln::bf16, {s.rows, s.k});
  kiln::Buffer di = kiln::Buffer::alloc(gpu, kiln::i32, {s.rows, s.k});
  dv.fill_bytes(0xFF);
  di.fill_bytes(0xFF);
  rt.op("topk")({dx, dv, di});
  kStream.synchronize();
  CHECK(di.to_host<std::int32_t>() == hi.to_host<std::int32_t>());
  CHECK(dv.to_host<std::uint16_t>() == hv.to_host<std::uint16_t>());
}

// Every CUDA topk variant, with every config of its space (a fixed sample plus the default for
// the larger shapes), against the host reference, for largest = 1 and 0, dense and pitched
// tensors:  kiln::ProblemData for the schema's random fill (poisoned outputs), and hand-built
// buffers for rows full of ties (values from {0..9}, zeros of both signs), rows with NaNs of both
// signs and infinities, and sorted rows (the worst case for threshold filters).  Finally op() on
// device buffers, end to end.
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "catch.hpp"
#include "device_workspace.hpp"
#include "test_util.hpp"
#include "quick.hpp"
#include "register_topk.hpp"

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_topk(reg);
  REQUIRE(s.ok());
  return reg;
}

// The CUDA variants that take f32 (these cases are f32; topk_grid_radix16, f16 and bf16 only, is in
// test_topk_half_gpu and its own test).
std::vector<const kiln::Variant*> cuda_variants(const kiln::Registry& reg) {
  std::vector<const kiln::Variant*> out;
  for (const kiln::Variant* v : reg.variants("topk"))
    if (v->device_kind() == kiln::DeviceKind::cuda &&
        std::find(v->dtypes().begin(), v->dtypes().end(), kiln::f32) != v->dtypes().end())
      out.push_back(v);
  return out;
}

// One config per compiled kernel: `blocks` only sets the grid (how a row is chunked), so configs
// that differ in it alone run the same code.
std::vector<kiln::Config> one_per_kernel(const std::vector<kiln::Config>& all) {
  std::set<kiln::Config> seen;
  std::vector<kiln::Config> out;
  for (const kiln::Config& c : all) {
    kiln::Config kernel = c;
    kernel.set("blocks", 0);
    if (seen.insert(kernel).second) out.push_back(c);
  }
  return out;
}

// Every valid config when there are at most `limit`, else the default plus a fixed random sample.
// Under KILN_TEST_QUICK (compute-sanitizer runs) every kernel once instead: racecheck takes
// minutes over a k = 1024 selection, and grid sizes do not change what a block does.
std::vector<kiln::Config> configs_for(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p,
                                      std::size_t limit) {
  std::vector<kiln::Config> all = v.space().enumerate(dev, p);
  if (kiln_test::quick_mode()) return one_per_kernel(all);
  if (all.size() <= limit) return all;
  std::vector<kiln::Config> out;
  const kiln::Config def = v.default_config(dev);
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

const kiln::Stream kStream;  // the legacy stream: ordered after the synchronous copies and fills

struct Shape {
  std::int64_t rows, n, k;
};
// (rows, n, k) of the brief: sizes 1, primes, non-multiples of every tile, k up to 1024, batches.
// Rows that topk_row_select holds in registers: 40 x 1000 (k=8), 300 x 257, 33 x 4095, and the
// largest, 4 x 16383 with k = 2000.
const Shape kShapes[] = {{1, 1, 1},           {1, 7, 7},           {3, 100, 5},
                         {1, 1000003, 100},   {5, 4097, 1024},     {64, (1 << 16) | 3, 64},
                         {200, 32768, 32},    {40, 1000, 8},       {300, 257, 64},
                         {33, 4095, 33},      {4, 16383, 2000}};

// topk_row_select and topk_warp_select hold a row in registers: their configs refuse rows longer
// than their tile; topk_warp_select also refuses k > 256 (the list a warp sorts); topk_grid_select
// takes one row, of kGridMinN elements up to what the resident grid holds.
bool refused_for_length(const kiln::Variant& v, const kiln::Support& s) {
  if (s.ok) return false;
  const bool n_limit = s.reason.find("n = ") != std::string::npos, k_limit = s.reason.find("k = ") != std::string::npos;
  const bool rows_limit = s.reason.find("rows = ") != std::string::npos;
  return (v.name() == "topk_row_select" && n_limit) || (v.name() == "topk_warp_select" && (n_limit || k_limit)) ||
         (v.name() == "topk_grid_select" && (n_limit || rows_limit));
}

bool large(const Shape& s) { return s.rows * s.n > 100000; }

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

// Mismatched elements: values bit for bit (any NaN equals any NaN), indices exactly.
std::int64_t mismatches(const std::vector<float>& gv, const std::vector<std::int32_t>& gi, const std::vector<float>& ev,
                        const std::vector<std::int32_t>& ei) {
  std::int64_t bad = 0;
  for (std::size_t j = 0; j < ev.size(); ++j) {
    const bool same = bits_of(gv[j]) == bits_of(ev[j]) || (std::isnan(gv[j]) && std::isnan(ev[j]));
    bad += !same;
    bad += gi[j] != ei[j];
  }
  return bad;
}

enum class Fill { ties, nans, sorted };

const char* fill_name(Fill f) { return f == Fill::ties ? "ties" : f == Fill::nans ? "nans" : "sorted"; }

std::vector<float> make_rows(const Shape& s, Fill fill, std::uint64_t seed) {
  std::vector<float> x(static_cast<std::size_t>(s.rows * s.n));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < x.size(); ++i) {
    switch (fill) {
      case Fill::ties: {
        const int d = int(rng() % 10);
        x[i] = d == 0 && (rng() & 1) ? -0.0f : float(d);
        break;
      }
      case Fill::nans: {
        const unsigned r = unsigned(rng() % 64);
        if (r == 0) x[i] = nan;
        else if (r == 1) x[i] = -nan;
        else if (r == 2) x[i] = inf;
        else if (r == 3) x[i] = -inf;
        else if (r == 4) x[i] = -0.0f;
        else x[i] = u(rng);
        break;
      }
      case Fill::sorted:  // ascending along each row, with runs of equal values
        x[i] = float((i % std::size_t(s.n)) / 3);
        break;
    }
  }
  return x;
}

}  // namespace

TEST_CASE("every CUDA topk variant and config matches the host reference on random rows", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const auto variants = cuda_variants(rt.registry());
  REQUIRE(variants.size() == 6);
  Workspace ws;

  std::uint64_t seed = 300;
  for (const Shape& s : kShapes) {
    if (kiln_test::skip_when_quick(double(s.rows) * double(s.n))) continue;
    for (int largest : {1, 0}) {
      for (bool pitched : {false, true}) {
        const kiln::Problem wanted = schema.problem_from_dims(kiln::f32, {s.rows, s.n, s.k, largest}, gpu);
        kiln::ProblemData data(schema, wanted, gpu, seed++, {pitched, true});
        const kiln::Problem& p = data.problem();
        for (const kiln::Variant* v : variants) {
          CHECK(!v->space().violated(v->default_config(dev), dev, p));
          for (const kiln::Config& c : configs_for(*v, dev, p, large(s) ? 10 : 100)) {
            INFO(v->name() << " " << c.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense"));
            if (refused_for_length(*v, v->supports(p, dev, c))) continue;
            REQUIRE(v->supports(p, dev, c).ok);
            data.poison_outputs();
            const kiln::Status st = v->launch(data.device_args(), p, c, ws.get(v->workspace_bytes(p, c)), kStream);
            REQUIRE(st.ok());
            kStream.synchronize();
            CHECK(data.error() == 0.0);
          }
        }
      }
    }
  }
}

TEST_CASE("CUDA topk variants handle ties, NaN, signed zeros and sorted rows exactly", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const auto variants = cuda_variants(rt.registry());
  Workspace ws;

  std::uint64_t seed = 400;
  for (const Shape& s : kShapes) {
    if (kiln_test::skip_when_quick(double(s.rows) * double(s.n))) continue;
    for (Fill fill : {Fill::ties, Fill::nans, Fill::sorted}) {
      const std::vector<float> rows = make_rows(s, fill, seed++);
      kiln::Buffer hx = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {s.rows, s.n});
      hx.copy_from_host(rows.data(), rows.size() * sizeof(float));
      for (int largest : {1, 0}) {
        // The reference on the host.
        kiln::Buffer hv = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {s.rows, s.k});
        kiln::Buffer hi = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {s.rows, s.k});
        const kiln::Args host_args({hx, hv, hi}, {double(largest)});
        REQUIRE(schema.reference(host_args, rt.make_problem(schema, host_args)).ok());
        const std::vector<float> ev = hv.to_host<float>();
        const std::vector<std::int32_t> ei = hi.to_host<std::int32_t>();

        const bool pitched = (seed + largest) % 2 == 0;  // alternate, so both layouts meet every fill
        auto alloc = [&](kiln::DType t, std::int64_t r, std::int64_t c) {
          return pitched ? kiln::Buffer::alloc_pitched(gpu, t, r, c) : kiln::Buffer::alloc(gpu, t, {r, c});
        };
        kiln::Buffer dx = alloc(kiln::f32, s.rows, s.n);
        kiln::Buffer dv = alloc(kiln::f32, s.rows, s.k);
        kiln::Buffer di = alloc(kiln::i32, s.rows, s.k);
        dx.copy_from(hx.ref());
        const kiln::Args args({dx, dv, di}, {double(largest)});
        const kiln::Problem p = rt.make_problem(schema, args);
        for (const kiln::Variant* v : variants) {
          for (const kiln::Config& c : configs_for(*v, dev, p, large(s) ? 6 : 40)) {
            INFO(v->name() << " " << c.to_string() << " on " << p.key() << " fill " << fill_name(fill)
                           << (pitched ? " pitched" : " dense"));
            if (refused_for_length(*v, v->supports(p, dev, c))) continue;
            REQUIRE(v->supports(p, dev, c).ok);
            dv.fill_bytes(0xFF);
            di.fill_bytes(0xFF);
            REQUIRE(v->launch(args, p, c, ws.get(v->workspace_bytes(p, c)), kStream).ok());
            kStream.synchronize();
            CHECK(mismatches(dv.to_host<float>(), di.to_host<std::int32_t>(), ev, ei) == 0);
          }
        }
      }
    }
  }
}

TEST_CASE("CUDA topk variants break a tie straddling the k-th place by index", "[topk][gpu]") {
  // 299998 copies of one value: the selection must pick the smallest indices among them (for
  // topk_radix_select that takes the index passes, the tie class exceeding any capacity).
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  Workspace ws;
  const std::int64_t n = 300000, k = 1000;
  if (kiln_test::skip_when_quick(double(n))) return;
  std::vector<float> row(n, 0.5f);
  row[123] = 2.0f;      // one above the tie
  row[n - 1] = -7.0f;   // one below
  kiln::Buffer dx = kiln::Buffer::alloc(gpu, kiln::f32, {1, n});
  dx.copy_from_host(row.data(), row.size() * sizeof(float));
  kiln::Buffer dv = kiln::Buffer::alloc(gpu, kiln::f32, {1, k});
  kiln::Buffer di = kiln::Buffer::alloc(gpu, kiln::i32, {1, k});
  for (int largest : {1, 0}) {
    const kiln::Args args({dx, dv, di}, {double(largest)});
    const kiln::Problem p = rt.make_problem(schema, args);
    for (const kiln::Variant* v : cuda_variants(rt.registry())) {
      for (const kiln::Config& c : configs_for(*v, dev, p, 100)) {
        INFO(v->name() << " " << c.to_string() << " largest=" << largest);
        if (refused_for_length(*v, v->supports(p, dev, c))) continue;  // 300000 > 16384
        di.fill_bytes(0xFF);
        REQUIRE(v->launch(args, p, c, ws.get(v->workspace_bytes(p, c)), kStream).ok());
        kStream.synchronize();
        const auto idx = di.to_host<std::int32_t>();
        std::vector<std::int32_t> expected;
        if (largest) {
          expected.push_back(123);
          for (std::int32_t j = 0; std::int64_t(expected.size()) < k; ++j)
            if (j != 123) expected.push_back(j);
        } else {
          expected.push_back(std::int32_t(n - 1));
          for (std::int32_t j = 0; std::int64_t(expected.size()) < k; ++j)
            if (j != 123) expected.push_back(j);
        }
        CHECK(idx == expected);
      }
    }
  }
}

TEST_CASE("op() runs topk on device buffers", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  for (const Shape& s : {Shape{1, 1 << 20, 100}, Shape{64, 5000, 16}}) {
    if (kiln_test::skip_when_quick(double(s.rows) * double(s.n))) continue;
    for (int largest : {1, 0}) {
      const std::vector<float> rows = make_rows(s, Fill::nans, 9 + largest);
      kiln::Buffer hx = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {s.rows, s.n});
      hx.copy_from_host(rows.data(), rows.size() * sizeof(float));
      kiln::Buffer hv = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {s.rows, s.k});
      kiln::Buffer hi = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {s.rows, s.k});
      rt.op("topk")(kiln::Args({hx, hv, hi}, {double(largest)}));  // topk_host

      kiln::Buffer dx = kiln::Buffer::alloc_pitched(gpu, kiln::f32, s.rows, s.n);
      dx.copy_from(hx.ref());
      kiln::Buffer dv = kiln::Buffer::alloc(gpu, kiln::f32, {s.rows, s.k});
      kiln::Buffer di = kiln::Buffer::alloc(gpu, kiln::i32, {s.rows, s.k});
      dv.fill_bytes(0xFF);
      di.fill_bytes(0xFF);
      rt.op("topk")(kiln::Args({dx, dv, di}, {double(largest)}));
      kStream.synchronize();
      CHECK(mismatches(dv.to_host<float>(), di.to_host<std::int32_t>(), hv.to_host<float>(), hi.to_host<std::int32_t>()) == 0);
    }
  }
}

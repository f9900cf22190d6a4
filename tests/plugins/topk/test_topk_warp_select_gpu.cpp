// topk_warp_select (one warp or one block per small row, bitwise threshold search, one filter, sort)
// against the host reference, f32, f16 and bf16, largest = 1 and 0, dense and pitched, outputs
// poisoned first: kiln::ProblemData for fresh random rows at sizes that are not multiples of the
// tiles (row counts not multiples of the warps per block, n below, at and above 32 * items), k at
// 1, 2, the capacity's edges and k == n; hand-built rows of ties with zeros of both signs, of
// NaNs of both signs, infinities and -0.0, one value (a tie class far beyond the list capacity:
// the exact k-th rank and index order), and ascending runs; k up to 512 (a row per block).  Lists
// of more than 64 keys take the bucket sort (bucket_sort = 1, the row-per-block default) or its
// bitonic fallback (a bucket beyond kBucketMax).  Every config that holds the row,
// or under KILN_TEST_QUICK (compute-sanitizer) the default for the row plus one other.
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
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

const kiln::Stream kStream;

struct Shape {
  std::int64_t rows, n, k;
};

// The configs run on a problem: all that hold the row, or in quick runs the default for the row
// and the first other one that holds it.
std::vector<kiln::Config> configs_for(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p) {
  std::vector<kiln::Config> out;
  const kiln::Config def = v.default_config_for(dev, p);
  REQUIRE(v.supports(p, dev, def).ok);
  out.push_back(def);
  for (const kiln::Config& c : v.space().enumerate(dev, p)) {
    if (c == def || !v.supports(p, dev, c).ok) continue;
    out.push_back(c);
    if (kiln_test::quick_mode()) break;
  }
  return out;
}

std::size_t size_of(kiln::DType t) { return t == kiln::f32 ? 4 : 2; }

const char* name_of(kiln::DType t) { return t == kiln::f32 ? "f32" : t == kiln::f16 ? "f16" : "bf16"; }

// The buffer's elements as bytes, rows packed.
std::vector<unsigned char> bytes_of(const kiln::Buffer& b) {
  std::vector<unsigned char> out(std::size_t(b.ref().numel()) * size_of(b.ref().dtype));
  b.copy_to_host(out.data(), out.size());
  return out;
}

}  // namespace

TEST_CASE("topk_warp_select matches the host reference on random rows", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_warp_select");
  REQUIRE(v != nullptr);
  kiln_test::DeviceWorkspace ws;
  // Rows not multiples of 2, 4 or 8 warps; n below, at and just above 32 * items (256, 512,
  // 1024, 2048, 4096); k = 1, 2, the capacity's edges (32, 64: cap 64 and 128; 256: the largest,
  // cap 512), k == n (the whole row fits the list: no search).
  const Shape shapes[] = {{1, 1, 1},     {5, 2, 2},        {37, 31, 2},    {33, 33, 1},     {17, 255, 2},
                          {9, 257, 32},  {65, 1000, 8},    {13, 1024, 64}, {7, 1023, 256},  {5, 2049, 128},
                          {3, 4096, 256}, {11, 4095, 33},  {6, 200, 200},  {5, 256, 256},   {4, 64, 64},
                          {1001, 513, 17}, {3, 3001, 3},   {2, 4096, 1},
                          // Row-per-block tiles (n > 1024): 16-byte loads (n a multiple of 4 for f32, of 8
                          // for f16/bf16) and scalar loads (odd n), n at and just above 8192 and 16384.
                          {3, 2049, 40},   {2, 5000, 5},    {5, 4100, 64},   {2, 8191, 100},  {3, 8192, 2},
                          {2, 8193, 1},    {2, 16384, 256}, {1, 16383, 31},  {7, 6000, 17},
                          // Aligned rows off the tiles: k = 1 (16-byte loads straight into registers),
                          // lists of 129 to 512 keys (the sort with its small strides in registers).
                          {5, 3000, 1},    {3, 5000, 100},  {4, 2052, 65},   {3, 6000, 255},
                          // k = 257 to 512 (a row per block only, lists of up to 1024 keys), short rows
                          // included; lists of 65 to 1024 keys go through the bucket sort.
                          {2, 3000, 300},  {1, 16384, 512}, {3, 6001, 400},  {2, 1000, 500},  {3, 4099, 129}};
  std::uint64_t seed = 1100;
  for (kiln::DType t : {kiln::f32, kiln::f16, kiln::bf16}) {
    for (const Shape& s : shapes) {
      if (kiln_test::skip_when_quick(double(s.rows) * double(s.n), 20000.0)) continue;
      for (int largest : {1, 0}) {
        for (bool pitched : {false, true}) {
          const kiln::Problem wanted = schema.problem_from_dims(t, {s.rows, s.n, s.k, largest}, gpu);
          kiln::ProblemData data(schema, wanted, gpu, seed++, {pitched, true});
          const kiln::Problem& p = data.problem();
          for (const kiln::Config& c : configs_for(*v, dev, p)) {
            INFO(name_of(t) << " " << c.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense"));
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

// Aligned rows (16-byte base, stride and n) go through a persistent grid that copies each block's
// next row into shared memory while it selects on the current one: more rows than resident blocks
// (the default tile of 1032 and of 2048 holds about 5 blocks per SM), so blocks take several rows.
// Run in quick mode too (compute-sanitizer), with the default config and one other.
TEST_CASE("topk_warp_select pipelines many aligned rows through a persistent grid", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_warp_select");
  REQUIRE(v != nullptr);
  kiln_test::DeviceWorkspace ws;
  const Shape shapes[] = {{1200, 1032, 8}, {1500, 2048, 64}, {2000, 4096, 200}, {700, 3000, 300}};
  std::uint64_t seed = 1300;
  for (kiln::DType t : {kiln::f32, kiln::bf16}) {
    for (const Shape& s : shapes) {
      if (kiln_test::quick_mode() && s.n > 1032) continue;
      for (int largest : {1, 0}) {
        const kiln::Problem wanted = schema.problem_from_dims(t, {s.rows, s.n, s.k, largest}, gpu);
        kiln::ProblemData data(schema, wanted, gpu, seed++, {largest == 0, true});
        const kiln::Problem& p = data.problem();
        for (const kiln::Config& c : configs_for(*v, dev, p)) {
          INFO(name_of(t) << " " << c.to_string() << " on " << p.key());
          data.poison_outputs();
          REQUIRE(v->launch(data.device_args(), p, c, ws.get(v->workspace_bytes(p, c)), kStream).ok());
          kStream.synchronize();
          CHECK(data.error() == 0.0);
        }
      }
    }
  }
}

namespace {

enum class Fill { ties, specials, one_value, straddle, sorted };

const char* fill_name(Fill f) {
  switch (f) {
    case Fill::ties: return "ties";
    case Fill::specials: return "specials";
    case Fill::one_value: return "one value";
    case Fill::straddle: return "one value with one above and one below";
    default: return "sorted";
  }
}

// Raw element bits of `count` elements of type t (f32 as 4 bytes, f16/bf16 as 2).
std::vector<unsigned char> make_rows(kiln::DType t, const Shape& s, Fill fill, std::uint64_t seed) {
  const std::size_t count = std::size_t(s.rows * s.n), es = size_of(t);
  std::vector<unsigned char> out(count * es);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // f16/bf16 NaNs of both signs and with another payload; -0.0.
  const std::uint16_t f16_specials[] = {0x7E00, 0xFE00, 0x7C01, 0x7C00, 0xFC00, 0x8000};
  const std::uint16_t bf16_specials[] = {0x7FC0, 0xFFC0, 0x7F81, 0x7F80, 0xFF80, 0x8000};
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t j = i % std::size_t(s.n);
    float f = 0.0f;
    int special = -1;
    switch (fill) {
      case Fill::ties: {
        const int d = int(rng() % 10);
        f = d == 0 && (rng() & 1) ? -0.0f : float(d);
        break;
      }
      case Fill::specials: {
        const unsigned r = unsigned(rng() % 48);
        if (r < 6) special = int(r);
        else f = u(rng);
        break;
      }
      case Fill::one_value: f = (rng() & 1) ? 0.0f : -0.0f; break;  // +0 and -0 tie
      case Fill::straddle: f = j == 7 % std::size_t(s.n) ? 2.0f : j + 1 == std::size_t(s.n) ? -7.0f : 0.5f; break;
      case Fill::sorted: f = float(j / 3); break;
    }
    if (t == kiln::f32) {
      if (special >= 0) {
        const float sp[] = {nan, -nan, std::numeric_limits<float>::signaling_NaN(), inf, -inf, -0.0f};
        f = sp[special];
      }
      std::memcpy(&out[i * 4], &f, 4);
    } else {
      const std::uint16_t h = special >= 0 ? (t == kiln::f16 ? f16_specials : bf16_specials)[special]
                              : t == kiln::f16 ? kiln::float_to_f16(f)
                                               : kiln::float_to_bf16(f);
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("topk_warp_select handles ties, NaN, signed zeros, a tie class beyond its list and sorted rows",
          "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_warp_select");
  REQUIRE(v != nullptr);
  kiln_test::DeviceWorkspace ws;
  const Shape shapes[] = {{7, 1000, 8}, {5, 4095, 200}, {9, 300, 64}, {3, 33, 33}, {4, 4096, 2}, {6, 100, 1},
                          {3, 2000, 256}, {2, 9000, 7}, {3, 5000, 100}, {1, 16384, 3},
                          // Lists of 65 to 1024 keys (the bucket sort): specials put NaN or inf far above the
                          // k-th (a bucket beyond kBucketMax: the bitonic fallback), one value orders by
                          // index digits.
                          {2, 3000, 300}, {1, 12000, 512}, {4, 2500, 90}};
  std::uint64_t seed = 1200;
  for (kiln::DType t : {kiln::f32, kiln::f16, kiln::bf16}) {
    for (const Shape& s : shapes) {
      if (kiln_test::skip_when_quick(double(s.rows) * double(s.n), 20000.0)) continue;
      for (Fill fill : {Fill::ties, Fill::specials, Fill::one_value, Fill::straddle, Fill::sorted}) {
        const std::vector<unsigned char> rows = make_rows(t, s, fill, seed++);
        kiln::Buffer hx = kiln::Buffer::alloc(kiln::Device::host(), t, {s.rows, s.n});
        hx.copy_from_host(rows.data(), rows.size());
        for (int largest : {1, 0}) {
          kiln::Buffer hv = kiln::Buffer::alloc(kiln::Device::host(), t, {s.rows, s.k});
          kiln::Buffer hi = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {s.rows, s.k});
          const kiln::Args host_args({hx, hv, hi}, {double(largest)});
          REQUIRE(schema.reference(host_args, rt.make_problem(schema, host_args)).ok());
          const std::vector<unsigned char> ev = bytes_of(hv);
          const std::vector<std::int32_t> ei = hi.to_host<std::int32_t>();

          const bool pitched = (seed + largest) % 2 == 0;  // alternate, so both layouts meet every fill
          auto alloc = [&](kiln::DType d, std::int64_t r, std::int64_t c) {
            return pitched ? kiln::Buffer::alloc_pitched(gpu, d, r, c) : kiln::Buffer::alloc(gpu, d, {r, c});
          };
          kiln::Buffer dx = alloc(t, s.rows, s.n), dv = alloc(t, s.rows, s.k), di = alloc(kiln::i32, s.rows, s.k);
          dx.copy_from(hx.ref());
          const kiln::Args args({dx, dv, di}, {double(largest)});
          const kiln::Problem p = rt.make_problem(schema, args);
          for (const kiln::Config& c : configs_for(*v, dev, p)) {
            INFO(name_of(t) << " " << c.to_string() << " on " << p.key() << " fill " << fill_name(fill)
                            << (pitched ? " pitched" : " dense"));
            dv.fill_bytes(0xFF);
            di.fill_bytes(0xFF);
            REQUIRE(v->launch(args, p, c, ws.get(v->workspace_bytes(p, c)), kStream).ok());
            kStream.synchronize();
            // Values are copied from x bit for bit, so both compare exactly.
            CHECK(bytes_of(dv) == ev);
            CHECK(di.to_host<std::int32_t>() == ei);
          }
        }
      }
    }
  }
}

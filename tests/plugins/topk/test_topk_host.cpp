// The topk schema and host variant: argument validation through Runtime::op (dtype and shape
// errors name the argument; k outside [1, n] names k and n), the host reference on hand-made
// rows (ties, NaN of both signs, infinities, -0.0 against +0.0, smallest mode, strided rows), and
// the key order itself.
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"
#include "register_topk.hpp"
#include "topk_key.hpp"
#include "topk_params.hpp"
#include "topk_warp_select_params.hpp"

using kiln_test::contains;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_topk(reg);
  REQUIRE(s.ok());
  return reg;
}

const kiln::Device host = kiln::Device::host();
const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

template <class E>
std::string message_of(kiln::Op op, const kiln::Args& args) {
  try {
    op(args);
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

struct Result {
  std::vector<float> values;
  std::vector<std::int32_t> indices;
};

// topk of one row on the host through op().
Result topk_row(kiln::Runtime& rt, const std::vector<float>& row, std::int64_t k, bool largest) {
  const std::int64_t n = std::int64_t(row.size());
  kiln::Buffer x = kiln::Buffer::alloc(host, kiln::f32, {1, n});
  x.copy_from_host(row.data(), row.size() * sizeof(float));
  kiln::Buffer v = kiln::Buffer::alloc(host, kiln::f32, {1, k});
  kiln::Buffer i = kiln::Buffer::alloc(host, kiln::i32, {1, k});
  v.fill_bytes(0xFF);
  i.fill_bytes(0xFF);
  rt.op("topk")(kiln::Args({x, v, i}, {largest ? 1.0 : 0.0}));
  return {v.to_host<float>(), i.to_host<std::int32_t>()};
}

// Values compared bit for bit (so -0.0 differs from +0.0 and NaN payloads count).
void check_bits(const std::vector<float>& got, const std::vector<float>& expected) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t j = 0; j < got.size(); ++j) {
    CAPTURE(j, got[j], expected[j]);
    CHECK(bits_of(got[j]) == bits_of(expected[j]));
  }
}

}  // namespace

TEST_CASE("topk rejects wrong dtypes and shapes, naming the argument", "[topk]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op op = rt.op("topk");
  kiln::Buffer x = kiln::Buffer::alloc(host, kiln::f32, {4, 10});
  kiln::Buffer v = kiln::Buffer::alloc(host, kiln::f32, {4, 3});
  kiln::Buffer i = kiln::Buffer::alloc(host, kiln::i32, {4, 3});

  SECTION("dtypes") {
    kiln::Buffer xd = kiln::Buffer::alloc(host, kiln::f64, {4, 10});
    REQUIRE_THROWS_AS(op({xd, v, i}), kiln::DTypeError);
    CHECK(contains(message_of<kiln::DTypeError>(op, {xd, v, i}), "x"));
    kiln::Buffer vi = kiln::Buffer::alloc(host, kiln::i32, {4, 3});
    REQUIRE_THROWS_AS(op({x, vi, i}), kiln::DTypeError);
    CHECK(contains(message_of<kiln::DTypeError>(op, {x, vi, i}), "values"));
    kiln::Buffer iv = kiln::Buffer::alloc(host, kiln::f32, {4, 3});
    REQUIRE_THROWS_AS(op({x, v, iv}), kiln::DTypeError);
    CHECK(contains(message_of<kiln::DTypeError>(op, {x, v, iv}), "indices"));
  }
  SECTION("values and indices are [rows, k]") {
    kiln::Buffer v5 = kiln::Buffer::alloc(host, kiln::f32, {5, 3});
    REQUIRE_THROWS_AS(op({x, v5, i}), kiln::ShapeError);
    CHECK(contains(message_of<kiln::ShapeError>(op, {x, v5, i}), "values"));
    kiln::Buffer i4 = kiln::Buffer::alloc(host, kiln::i32, {4, 4});
    REQUIRE_THROWS_AS(op({x, v, i4}), kiln::ShapeError);
    CHECK(contains(message_of<kiln::ShapeError>(op, {x, v, i4}), "indices"));
    kiln::Buffer v1 = kiln::Buffer::alloc(host, kiln::f32, {12});
    REQUIRE_THROWS_AS(op({x, v1, i}), kiln::ShapeError);
  }
  SECTION("k > n names k and n") {
    kiln::Buffer x3 = kiln::Buffer::alloc(host, kiln::f32, {2, 3});
    kiln::Buffer v5 = kiln::Buffer::alloc(host, kiln::f32, {2, 5});
    kiln::Buffer i5 = kiln::Buffer::alloc(host, kiln::i32, {2, 5});
    REQUIRE_THROWS_AS(op({x3, v5, i5}), kiln::ShapeError);
    const std::string m = message_of<kiln::ShapeError>(op, {x3, v5, i5});
    CHECK(contains(m, "k = 5"));
    CHECK(contains(m, "n = 3"));
  }
  SECTION("k < 1 names k and n") {
    float dummy[4] = {};
    const auto v0 = kiln::TensorRef::matrix(dummy, kiln::f32, 4, 0, 0, host);
    const auto i0 = kiln::TensorRef::matrix(dummy, kiln::i32, 4, 0, 0, host);
    REQUIRE_THROWS_AS(op({x, v0, i0}), kiln::ShapeError);
    const std::string m = message_of<kiln::ShapeError>(op, {x, v0, i0});
    CHECK(contains(m, "k = 0"));
    CHECK(contains(m, "n = 10"));
  }
  SECTION("outputs apart from x and from each other") {
    std::vector<float> mem(64, 0.5f);
    const auto x4 = kiln::TensorRef::matrix(mem.data(), kiln::f32, 4, 10, 10, host);
    const auto v_in_x = kiln::TensorRef::matrix(mem.data() + 20, kiln::f32, 4, 3, 3, host);
    REQUIRE_THROWS_AS(op({x4, v_in_x, i}), kiln::ArgumentError);
    CHECK(contains(message_of<kiln::ArgumentError>(op, {x4, v_in_x, i}), "argument 'values' overlaps argument 'x' in memory"));
    std::vector<std::int32_t> shared(12);
    const auto v_s = kiln::TensorRef::matrix(shared.data(), kiln::f32, 4, 3, 3, host);
    const auto i_s = kiln::TensorRef::matrix(shared.data(), kiln::i32, 4, 3, 3, host);
    REQUIRE_THROWS_AS(op({x, v_s, i_s}), kiln::ArgumentError);
  }
  SECTION("largest is 0 or 1") {
    REQUIRE_THROWS_AS(op(kiln::Args({x, v, i}, {2.0})), kiln::ArgumentError);
    CHECK(contains(message_of<kiln::ArgumentError>(op, kiln::Args({x, v, i}, {0.5})), "largest = 0.5;"));
  }
}

TEST_CASE("the key order: NaN above +inf, -0.0 equal to +0.0, smaller index first", "[topk]") {
  using kiln::topk::composite_key;
  using kiln::topk::order_key;
  const float ordered[] = {-kInf, -3.0f, -1e-30f, 0.0f, 1e-30f, 2.0f, kInf};
  for (std::size_t a = 0; a + 1 < std::size(ordered); ++a) CHECK(order_key(bits_of(ordered[a])) < order_key(bits_of(ordered[a + 1])));
  CHECK(order_key(bits_of(kNan)) > order_key(bits_of(kInf)));
  CHECK(order_key(bits_of(-kNan)) == order_key(bits_of(kNan)));
  CHECK(order_key(bits_of(-0.0f)) == order_key(bits_of(0.0f)));
  CHECK(composite_key(bits_of(1.0f), 3, true) > composite_key(bits_of(1.0f), 4, true));
  CHECK(composite_key(bits_of(1.0f), 3, false) > composite_key(bits_of(1.0f), 4, false));
  CHECK(composite_key(bits_of(-kInf), 9, false) > composite_key(bits_of(0.0f), 0, false));
  CHECK(composite_key(bits_of(kNan), 0, false) < composite_key(bits_of(kInf), 9, false));
  CHECK(composite_key(bits_of(kNan), 0x7FFFFFFF, false) > kiln::topk::kNoElement);
  CHECK(kiln::topk::index_of(composite_key(bits_of(5.0f), 123456, true)) == 123456u);
}

TEST_CASE("topk_host: best first, ties by smaller index, NaN above +inf", "[topk]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());

  SECTION("largest and smallest") {
    const std::vector<float> row = {3, 1, 4, 1, 5, 9, 2, 6};
    Result r = topk_row(rt, row, 3, true);
    check_bits(r.values, {9, 6, 5});
    CHECK(r.indices == std::vector<std::int32_t>{5, 7, 4});
    r = topk_row(rt, row, 3, false);
    check_bits(r.values, {1, 1, 2});
    CHECK(r.indices == std::vector<std::int32_t>{1, 3, 6});
  }
  SECTION("ties go to the smaller index") {
    const std::vector<float> row = {2, 7, 7, 2, 7};
    Result r = topk_row(rt, row, 2, true);
    check_bits(r.values, {7, 7});
    CHECK(r.indices == std::vector<std::int32_t>{1, 2});
    r = topk_row(rt, row, 3, false);
    check_bits(r.values, {2, 2, 7});
    CHECK(r.indices == std::vector<std::int32_t>{0, 3, 1});
    r = topk_row(rt, row, 5, true);
    CHECK(r.indices == std::vector<std::int32_t>{1, 2, 4, 0, 3});
  }
  SECTION("NaN ranks above +inf: first when largest, last when smallest") {
    const std::vector<float> row = {1.0f, kNan, kInf, -kInf, -kNan, 0.0f};
    Result r = topk_row(rt, row, 4, true);
    CHECK(r.indices == std::vector<std::int32_t>{1, 4, 2, 0});
    check_bits(r.values, {kNan, -kNan, kInf, 1.0f});  // the NaNs come back with their own bits
    r = topk_row(rt, row, 6, false);
    CHECK(r.indices == std::vector<std::int32_t>{3, 5, 0, 2, 1, 4});
    check_bits(r.values, {-kInf, 0.0f, 1.0f, kInf, kNan, -kNan});
  }
  SECTION("-0.0 and +0.0 tie; the values keep their sign bits") {
    const std::vector<float> row = {-0.0f, 1.0f, 0.0f, -1.0f, -0.0f};
    Result r = topk_row(rt, row, 5, true);
    CHECK(r.indices == std::vector<std::int32_t>{1, 0, 2, 4, 3});
    check_bits(r.values, {1.0f, -0.0f, 0.0f, -0.0f, -1.0f});
    r = topk_row(rt, row, 5, false);
    CHECK(r.indices == std::vector<std::int32_t>{3, 0, 2, 4, 1});
    check_bits(r.values, {-1.0f, -0.0f, 0.0f, -0.0f, 1.0f});
  }
  SECTION("k = n = 1") {
    Result r = topk_row(rt, {-2.5f}, 1, true);
    check_bits(r.values, {-2.5f});
    CHECK(r.indices == std::vector<std::int32_t>{0});
  }
  SECTION("rows of a strided matrix, rank-1 tensors") {
    const std::int64_t rows = 3, n = 6, k = 2;
    kiln::Buffer x = kiln::Buffer::alloc_pitched(host, kiln::f32, rows, n);
    REQUIRE(x.row_stride() > n);
    const std::vector<float> dense = {5, 1, 5, 0, 2, 5,     //
                                      -1, -2, -3, -4, -5, -6,  //
                                      kNan, 0, kNan, 7, 7, 8};
    x.copy_from_host(dense.data(), dense.size() * sizeof(float));
    kiln::Buffer v = kiln::Buffer::alloc_pitched(host, kiln::f32, rows, k);
    kiln::Buffer i = kiln::Buffer::alloc_pitched(host, kiln::i32, rows, k);
    rt.op("topk")({x, v, i});
    check_bits(v.to_host<float>(), {5, 5, -1, -2, kNan, kNan});
    CHECK(i.to_host<std::int32_t>() == std::vector<std::int32_t>{0, 2, 0, 1, 0, 2});
    rt.op("topk")(kiln::Args({x, v, i}, {0.0}));
    check_bits(v.to_host<float>(), {0, 1, -6, -5, 0, 7});
    CHECK(i.to_host<std::int32_t>() == std::vector<std::int32_t>{3, 1, 5, 4, 1, 3});

    kiln::Buffer x1 = kiln::Buffer::alloc(host, kiln::f32, {4});
    const float one_row[] = {0.5f, 0.25f, 0.75f, 0.0f};
    x1.copy_from_host(one_row, sizeof one_row);
    kiln::Buffer v1 = kiln::Buffer::alloc(host, kiln::f32, {2});
    kiln::Buffer i1 = kiln::Buffer::alloc(host, kiln::i32, {2});
    rt.op("topk")({x1, v1, i1});
    check_bits(v1.to_host<float>(), {0.75f, 0.5f});
    CHECK(i1.to_host<std::int32_t>() == std::vector<std::int32_t>{2, 0});
  }
}

TEST_CASE("the topk schema describes its problems", "[topk]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& s = reg.op("topk");
  const kiln::Problem p = s.problem_from_dims(kiln::f32, {64, 1 << 20, 64, 0}, host);
  CHECK(p.dim("rows") == 64);
  CHECK(p.dim("k") == 64);
  CHECK(p.dim("largest") == 0);
  CHECK(s.work(p) == 64.0 * (1 << 20) * 4);
  CHECK(s.tolerance_for(p) == 0.0);
  std::vector<kiln::TensorSpec> specs;
  REQUIRE(s.tensor_specs(p, specs).ok());
  REQUIRE(specs.size() == 3);
  CHECK(specs[0].shape == kiln::Shape::matrix(64, 1 << 20));
  CHECK(specs[1].shape == kiln::Shape::matrix(64, 64));
  CHECK(specs[2].dtype == kiln::i32);
  // The scalar follows the problem, so that the tuner runs what it keys.
  kiln::Args args;
  REQUIRE(s.scalars_for);
  s.scalars_for(p, args);
  REQUIRE(args.scalar_count() == 1);
  CHECK(args.scalar(0) == 0.0);
  // Buckets keep largest apart.
  const kiln::Problem q = s.problem_from_dims(kiln::f32, {64, 1 << 20, 64, 1}, host);
  CHECK(s.bucket_of(p) != s.bucket_of(q));
  CHECK(s.bucket_of(q) == s.bucket_of(s.problem_from_dims(kiln::f32, {60, 1000000, 70, 1}, host)));
}

TEST_CASE("register_topk adds the op and its variants", "[topk]") {
  kiln::Registry reg = make_registry();
  REQUIRE(reg.find_op("topk") != nullptr);
  const kiln::Variant* h = reg.find_variant("topk_host");
  REQUIRE(h != nullptr);
  CHECK(h->desc().reference);
  CHECK(h->device_kind() == kiln::DeviceKind::host);
#if KILN_HAS_CUDA
  kiln::DeviceInfo d;
  for (const char* name : {"topk_block_merge", "topk_radix_select", "topk_row_select", "topk_warp_select"}) {
    CAPTURE(name);
    const kiln::Variant* v = reg.find_variant(name);
    REQUIRE(v != nullptr);
    CHECK(v->space().contains(v->default_config(d)));
  }
#endif
  CHECK(!register_topk(reg).ok());
}

TEST_CASE("topk_row_select picks the smallest register tile that holds the row", "[topk]") {
  namespace tk = kiln::topk;
  const kiln::DeviceInfo d;
  auto len = [](const kiln::Config& c) { return c.get("block") * c.get("items_per_thread"); };
  CHECK(len(tk::row_select_default_for(d, 256, 8)) == 256);
  const kiln::Config c1024 = tk::row_select_default_for(d, 1024, 8);
  CHECK(len(c1024) == 1024);
  CHECK(c1024.get("block") == 256);  // (256, 4) over (128, 8): more threads
  CHECK(len(tk::row_select_default_for(d, 1025, 64)) == 2048);  // (256, 8)
  const kiln::Config c4096 = tk::row_select_default_for(d, 4096, 64);
  CHECK(len(c4096) == 4096);
  CHECK(c4096.get("block") == 512);  // (512, 8) over (256, 16) and (1024, 4): at most 512 threads
  CHECK(len(tk::row_select_default_for(d, 16384, 64)) == 16384);
  for (std::int64_t n : {1, 300, 4096, 5000, 16384}) {
    const kiln::Config c = tk::row_select_default_for(d, n, 1);
    CAPTURE(n);
    CHECK(tk::row_select_space().contains(c));
    CHECK(tk::row_select_supports(n, 1, c).ok);
  }
  const kiln::Support too_long = tk::row_select_supports(16385, 8, tk::row_select_default_for(d, 16385, 8));
  CHECK(!too_long.ok);
  CHECK(contains(too_long.reason, "16384"));
  const kiln::Support tile_short = tk::row_select_supports(2000, 8, kiln::Config{{"block", 128}, {"items_per_thread", 8}, {"cap", 256}});
  CHECK(!tile_short.ok);
  CHECK(contains(tile_short.reason, "1024"));
}

TEST_CASE("topk_warp_select picks the smallest warp tile that holds the row and refuses what it cannot hold",
          "[topk]") {
  namespace tk = kiln::topk;
  const kiln::DeviceInfo d;
  auto len = [](const kiln::Config& c) { return 32 * c.get("items_per_thread") * c.get("row_warps"); };
  CHECK(len(tk::warp_select_default_for(d, 256, 8)) == 256);
  CHECK(tk::warp_select_default_for(d, 256, 8).get("warps") == 8);
  CHECK(len(tk::warp_select_default_for(d, 257, 8)) == 512);
  const kiln::Config c1024 = tk::warp_select_default_for(d, 1024, 8);
  CHECK(len(c1024) == 1024);
  CHECK(c1024.get("warps") == 4);  // (4, 32) is listed before (8, 32): the faster one measured
  CHECK(c1024.get("row_warps") == 1);
  // Past 1024 a row per block (row_warps = warps), up to 16384.
  const kiln::Config c1025 = tk::warp_select_default_for(d, 1025, 32);
  CHECK(len(c1025) == 2048);
  CHECK(c1025.get("row_warps") == c1025.get("warps"));
  CHECK(len(tk::warp_select_default_for(d, 2049, 32)) == 4096);
  CHECK(len(tk::warp_select_default_for(d, 5000, 5)) == 8192);
  CHECK(len(tk::warp_select_default_for(d, 16384, 5)) == 16384);
  for (std::int64_t n : {1, 31, 300, 1024, 2048, 4095, 4096, 5000, 8193, 16384}) {
    const kiln::Config c = tk::warp_select_default_for(d, n, 1);
    CAPTURE(n);
    CHECK(tk::warp_select_space().contains(c));
    CHECK(tk::warp_select_supports(n, 1, c).ok);
  }
  // The list: at least twice the power of two >= k, so the search can stop with more than k keys.
  CHECK(tk::warp_select_cap(64, 1) == 64);
  CHECK(tk::warp_select_cap(64, 33) == 128);
  CHECK(tk::warp_select_cap(512, 2) == 512);
  CHECK(tk::warp_select_cap(64, 256) == tk::kWarpSelectMaxCap);
  const kiln::Support too_long = tk::warp_select_supports(4097, 8, tk::warp_select_default(d));
  CHECK(!too_long.ok);
  CHECK(contains(too_long.reason, "n = 4097"));
  const kiln::Support beyond = tk::warp_select_supports(16385, 8, tk::warp_select_default_for(d, 16384, 8));
  CHECK(!beyond.ok);
  CHECK(contains(beyond.reason, "16384"));
  const kiln::Support tile_short =
      tk::warp_select_supports(300, 8, kiln::Config{{"warps", 8}, {"items_per_thread", 8}, {"cap", 64}});
  CHECK(!tile_short.ok);
  CHECK(contains(tile_short.reason, "256"));
  const kiln::Support big_k = tk::warp_select_supports(1000, 257, tk::warp_select_default(d));
  CHECK(!big_k.ok);
  CHECK(contains(big_k.reason, "k = 257"));
  // k = 257 to 512: a row per block (bucket_sort on), even for short rows; past 512 nothing.
  for (std::int64_t n : {300, 1000, 4096, 16384}) {
    const kiln::Config c = tk::warp_select_default_for(d, n, 512);
    CAPTURE(n);
    CHECK(tk::warp_select_space().contains(c));
    CHECK(c.get("row_warps") == c.get("warps"));
    CHECK(c.get("bucket_sort") == 1);
    CHECK(tk::warp_select_supports(n, 512, c).ok);
    CHECK(!tk::warp_select_supports(n, 513, c).ok);
  }
  CHECK(tk::warp_select_default_for(d, 1024, 256).get("bucket_sort") == 0);
  CHECK(tk::warp_select_default_for(d, 4096, 64).get("bucket_sort") == 1);
  // A row per block, k > 1: the most items per thread among the tiles of the smallest length.
  CHECK(tk::warp_select_default_for(d, 4096, 128).get("items_per_thread") == 32);
  CHECK(tk::warp_select_default_for(d, 4096, 128).get("warps") == 4);
  CHECK(tk::warp_select_default_for(d, 4096, 1).get("items_per_thread") == 16);
  CHECK(tk::warp_select_default_for(d, 2048, 100).get("items_per_thread") == 16);
  CHECK(tk::warp_select_default_for(d, 6000, 100).get("warps") == 8);
  // Past k = 64 warps the 4-warp tile loses its bound on the k-th rank: the first listed again.
  CHECK(tk::warp_select_default_for(d, 3000, 256).get("warps") == 4);
  CHECK(tk::warp_select_default_for(d, 3000, 300).get("warps") == 8);
  CHECK(tk::warp_select_default_for(d, 3000, 300).get("items_per_thread") == 16);
  CHECK(tk::warp_select_cap(64, 512) == 1024);
  // Only the listed (warps, items_per_thread, row_warps) tiles are in the space; a config without
  // row_warps (tuned before it existed) is a row per warp.
  const kiln::Problem p;
  CHECK(tk::warp_select_space().violated(kiln::Config{{"warps", 2}, {"items_per_thread", 8}, {"cap", 64}, {"row_warps", 1}, {"bucket_sort", 0}}, d, p));
  CHECK(tk::warp_select_space().violated(kiln::Config{{"warps", 8}, {"items_per_thread", 16}, {"cap", 64}, {"row_warps", 4}, {"bucket_sort", 0}}, d, p));
  CHECK(!tk::warp_select_space().violated(kiln::Config{{"warps", 4}, {"items_per_thread", 128}, {"cap", 512}, {"row_warps", 1}, {"bucket_sort", 0}}, d, p));
  // Bucket sort only a row per block.
  CHECK(tk::warp_select_space().violated(kiln::Config{{"warps", 4}, {"items_per_thread", 32}, {"cap", 64}, {"row_warps", 1}, {"bucket_sort", 1}}, d, p));
  CHECK(!tk::warp_select_space().violated(kiln::Config{{"warps", 16}, {"items_per_thread", 32}, {"cap", 64}, {"row_warps", 16}, {"bucket_sort", 1}}, d, p));
  CHECK(tk::warp_select_tile(kiln::Config{{"warps", 4}, {"items_per_thread", 128}, {"cap", 512}}) != nullptr);
}

// f16 and bf16 keys: order_key16 against the values themselves (every bit pattern), then the
// host reference on a hand-made row through op().
TEST_CASE("f16 and bf16 keys order like their values: NaN on top, -0.0 equal to +0.0", "[topk][half]") {
  for (kiln::topk::KeyFormat f : {kiln::topk::KeyFormat::f16, kiln::topk::KeyFormat::bf16}) {
    const bool is_f16 = f == kiln::topk::KeyFormat::f16;
    CAPTURE(is_f16);
    auto value = [&](std::uint32_t h) {
      return is_f16 ? kiln::f16_to_float(std::uint16_t(h)) : kiln::bf16_to_float(std::uint16_t(h));
    };
    std::vector<std::uint32_t> finite;  // every non-NaN pattern
    for (std::uint32_t h = 0; h < 0x10000u; ++h) {
      const bool nan = std::isnan(value(h));
      CHECK(kiln::topk::is_nan_bits(h, f) == nan);
      if (nan) {
        CHECK(kiln::topk::order_key(h, f) == 0xFFFFFFFFu);
      } else {
        finite.push_back(h);
      }
    }
    std::sort(finite.begin(), finite.end(), [&](std::uint32_t a, std::uint32_t b) { return value(a) < value(b); });
    for (std::size_t i = 1; i < finite.size(); ++i) {
      const std::uint32_t a = finite[i - 1], b = finite[i];
      const std::uint32_t ka = kiln::topk::order_key(a, f), kb = kiln::topk::order_key(b, f);
      INFO(a << " " << b);
      CHECK(ka < 0xFFFFFFFFu);
      if (value(a) == value(b)) CHECK(ka == kb);  // only -0.0 and +0.0
      else CHECK(ka < kb);
    }
  }
}

TEST_CASE("topk_host on f16 and bf16 rows: best first, ties by index, bits unchanged", "[topk][half]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  for (kiln::DType t : {kiln::f16, kiln::bf16}) {
    CAPTURE(kiln::dtype_name(t));
    const bool is_f16 = t == kiln::f16;
    const std::uint16_t nan = is_f16 ? 0x7E00 : 0x7FC0, neg_nan = is_f16 ? 0xFE01 : 0xFFC1;
    const std::uint16_t inf = is_f16 ? 0x7C00 : 0x7F80, neg_inf = is_f16 ? 0xFC00 : 0xFF80;
    const std::uint16_t one = is_f16 ? 0x3C00 : 0x3F80, neg_zero = 0x8000, zero = 0x0000;
    //                                0    1    2         3     4        5    6    7
    const std::vector<std::uint16_t> row = {one, nan, neg_zero, zero, neg_inf, inf, one, neg_nan};
    const std::int64_t n = std::int64_t(row.size());
    kiln::Buffer x = kiln::Buffer::alloc(host, t, {1, n});
    x.copy_from_host(row.data(), row.size() * 2);
    kiln::Buffer v = kiln::Buffer::alloc(host, t, {1, n});
    kiln::Buffer i = kiln::Buffer::alloc(host, kiln::i32, {1, n});
    for (int largest : {1, 0}) {
      rt.op("topk")(kiln::Args({x, v, i}, {double(largest)}));
      const std::vector<std::int32_t> expected =
          largest ? std::vector<std::int32_t>{1, 7, 5, 0, 6, 2, 3, 4} : std::vector<std::int32_t>{4, 2, 3, 0, 6, 5, 1, 7};
      CHECK(i.to_host<std::int32_t>() == expected);
      const std::vector<std::uint16_t> got = v.to_host<std::uint16_t>();
      for (std::size_t j = 0; j < expected.size(); ++j) CHECK(got[j] == row[std::size_t(expected[j])]);
    }
    // values must have the dtype of x.
    kiln::Buffer v32 = kiln::Buffer::alloc(host, kiln::f32, {1, n});
    CHECK(contains(message_of<kiln::DTypeError>(rt.op("topk"), {x, v32, i}), "values"));
  }
}

TEST_CASE("topk refuses values that are the very same view as x (k == n cannot run in place)", "[topk]") {
  // Accepted before, and wrong: values 5 4 3 5 for the row 1 5 3 4 (the row was overwritten while
  // it was still being selected from).
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  std::vector<float> x = {1, 5, 3, 4};
  std::vector<std::int32_t> idx(4, -1);
  const kiln::TensorRef row = kiln::view(x.data(), 1, 4, host);
  try {
    rt.op("topk")({row, row, kiln::view(idx.data(), 1, 4, host)});
    FAIL("accepted");
  } catch (const kiln::ArgumentError& e) {
    CHECK(std::string(e.what()) ==
          "topk: argument 'values' is the very same view as argument 'x': topk cannot run in place (give it an output "
          "of its own)");
  }
  CHECK(x == std::vector<float>({1, 5, 3, 4}));
}

// The `transpose` schema and host variant, through kiln::Runtime::op with host buffers; the
// variant list and parameter spaces.  No GPU needed.
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"
#include "register_transpose.hpp"
#include "transpose_params.hpp"

using kiln_test::error_message;
using kiln_test::contains;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_transpose(reg);
  REQUIRE(s.ok());
  return reg;
}

// An H200 as enumerate_devices() would describe it, for spaces and supports() without a GPU.
kiln::DeviceInfo fake_h200() {
  kiln::DeviceInfo d;
  d.device = kiln::Device::cuda(0);
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.sm_count = 132;
  d.smem_per_block = 48 * 1024;
  d.smem_per_block_optin = 227 * 1024;
  d.max_threads_per_block = 1024;
  return d;
}

}  // namespace

TEST_CASE("transpose registers its schema and variants in priority order", "[transpose]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema* s = reg.find_op("transpose");
  REQUIRE(s != nullptr);
  CHECK(s->signature() == "transpose(in: in, out: out)");
  CHECK(s->dim_names == std::vector<std::string>{"m", "n"});

  const kiln::Variant* host = reg.find_variant("transpose_host");
  REQUIRE(host != nullptr);
  CHECK(host->desc().reference);
  CHECK(host->device_kind() == kiln::DeviceKind::host);
  CHECK(host->priority() == 0);
  CHECK(host->space().empty());

  std::vector<std::string> names;
  for (const kiln::Variant* v : reg.variants("transpose")) names.push_back(v->name());
#if KILN_HAS_CUDA
  CHECK(names == std::vector<std::string>{"transpose_skinny", "transpose_tiled_multirow", "transpose_tiled_padded",
                                          "transpose_write_coalesced", "transpose_naive_2d",
                                          "transpose_read_coalesced", "transpose_host"});
#else
  CHECK(names == std::vector<std::string>{"transpose_host"});
#endif
  CHECK(!register_transpose(reg).ok());  // a clash comes back as a Status
}

TEST_CASE("transpose validates its arguments", "[transpose]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op tr = rt.op("transpose");
  const kiln::Device host = kiln::Device::host();
  kiln::Buffer in = kiln::Buffer::alloc(host, kiln::f32, {3, 5});
  kiln::Buffer out = kiln::Buffer::alloc(host, kiln::f32, {5, 3});

  SECTION("the valid call derives m and n") { CHECK(tr.problem({in, out}).key() == "f32|m=3|n=5"); }
  SECTION("in must be a matrix") {
    kiln::Buffer in1 = kiln::Buffer::alloc(host, kiln::f32, {15});
    REQUIRE_THROWS_AS(tr({in1, out}), kiln::ShapeError);
    const std::string msg = error_message([&] { tr({in1, out}); });
    CHECK(contains(msg, "'in'"));
    CHECK(contains(msg, "rank 2"));
  }
  SECTION("out must be n x m") {
    kiln::Buffer same = kiln::Buffer::alloc(host, kiln::f32, {3, 5});
    REQUIRE_THROWS_AS(tr({in, same}), kiln::ShapeError);
    const std::string msg = error_message([&] { tr({in, same}); });
    CHECK(contains(msg, "'out'"));
    CHECK(contains(msg, "[5x3]"));
    kiln::Buffer flat = kiln::Buffer::alloc(host, kiln::f32, {15});
    REQUIRE_THROWS_AS(tr({in, flat}), kiln::ShapeError);
    CHECK(contains(error_message([&] { tr({in, flat}); }), "'out'"));
  }
  SECTION("one 2- or 4-byte dtype for both") {
    kiln::Buffer out64 = kiln::Buffer::alloc(host, kiln::f64, {5, 3});
    REQUIRE_THROWS_AS(tr({in, out64}), kiln::DTypeError);
    const std::string msg = error_message([&] { tr({in, out64}); });
    CHECK(contains(msg, "'out'"));
    CHECK(contains(msg, "f64"));
    CHECK(contains(msg, "f32"));
    kiln::Buffer in8 = kiln::Buffer::alloc(host, kiln::u8, {3, 5});
    REQUIRE_THROWS_AS(tr({in8, out}), kiln::DTypeError);
    CHECK(contains(error_message([&] { tr({in8, out}); }), "'in'"));
    // Mixed half types are named too.
    kiln::Buffer in16 = kiln::Buffer::alloc(host, kiln::f16, {3, 5});
    kiln::Buffer outb = kiln::Buffer::alloc(host, kiln::bf16, {5, 3});
    REQUIRE_THROWS_AS(tr({in16, outb}), kiln::DTypeError);
    const std::string mixed = error_message([&] { tr({in16, outb}); });
    CHECK(contains(mixed, "'out' has dtype bf16"));
    CHECK(contains(mixed, "f16"));
    for (kiln::DType t : {kiln::f16, kiln::bf16, kiln::i32}) {
      kiln::Buffer i = kiln::Buffer::alloc(host, t, {3, 5});
      kiln::Buffer o = kiln::Buffer::alloc(host, t, {5, 3});
      CHECK(tr.problem({i, o}).key() == std::string(kiln::dtype_name(t)) + "|m=3|n=5");
    }
  }
  SECTION("transposed views are accepted, views with no unit stride are not") {
    CHECK(tr.problem({in.ref(), out.ref().transposed().transposed()}).key() == "f32|m=3|n=5");
    kiln::Buffer in_t = kiln::Buffer::alloc(host, kiln::f32, {5, 3});  // in as its transpose's storage
    CHECK(tr.problem({in_t.ref().transposed(), out}).key() == "f32|m=3|n=5");
    // Every other column of a 3 x 10 array: column stride 2, row stride 10.
    kiln::Buffer wide = kiln::Buffer::alloc(host, kiln::f32, {3, 10});
    const auto skip = kiln::TensorRef::strided(wide.data(), kiln::f32, 3, 5, 10, 2, host);
    REQUIRE_THROWS_AS(tr({skip, out}), kiln::ShapeError);
    const std::string msg = error_message([&] { tr({skip, out}); });
    CHECK(contains(msg, "'in'"));
    CHECK(contains(msg, "column stride 2"));
    CHECK(contains(msg, "row stride 10"));
    // Rank 3 (batches) is refused, naming the argument.
    kiln::Buffer batch = kiln::Buffer::alloc(host, kiln::f32, {2, 3, 5});
    REQUIRE_THROWS_AS(tr({batch, out}), kiln::ShapeError);
    CHECK(contains(error_message([&] { tr({batch, out}); }), "'in'"));
  }
  SECTION("null pointers, a wrong tensor count and in-place calls are refused") {
    kiln::TensorRef null_in = in.ref();
    null_in.data = nullptr;
    REQUIRE_THROWS_AS(tr({null_in, out}), kiln::ArgumentError);
    CHECK(contains(error_message([&] { tr({null_in, out}); }), "'in'"));
    REQUIRE_THROWS_AS(tr({in}), kiln::ArgumentError);
    REQUIRE_THROWS_AS(tr({in, out, out}), kiln::ArgumentError);
    // A square matrix onto itself.
    kiln::Buffer sq = kiln::Buffer::alloc(host, kiln::f32, {4, 4});
    REQUIRE_THROWS_AS(tr({sq, sq}), kiln::ArgumentError);
    CHECK(contains(error_message([&] { tr({sq, sq}); }), "overlap"));
  }
}

TEST_CASE("transpose on host buffers runs the reference", "[transpose]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op tr = rt.op("transpose");
  const kiln::Device host = kiln::Device::host();

  SECTION("a hand case") {
    const std::vector<float> values = {1, 2, 3, 4, 5, 6};
    kiln::Buffer in = kiln::Buffer::alloc(host, kiln::f32, {2, 3});
    in.copy_from_host(values.data(), values.size() * sizeof(float));
    kiln::Buffer out = kiln::Buffer::alloc(host, kiln::f32, {3, 2});
    out.fill_bytes(0xFF);
    tr({in, out});
    CHECK(out.to_host<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
    CHECK(rt.explain(tr.problem({in, out})).variant->name() == "transpose_host");
  }
  SECTION("strided views of larger arrays; the padding is left alone") {
    // in: 2 x 3 inside rows of 4; out: 3 x 2 inside rows of 3.
    std::vector<float> in_store = {1, 2, 3, -1, 4, 5, 6, -1};
    std::vector<float> out_store(9, 7.0f);
    const auto in = kiln::TensorRef::matrix(in_store.data(), kiln::f32, 2, 3, 4, host);
    const auto out = kiln::TensorRef::matrix(out_store.data(), kiln::f32, 3, 2, 3, host);
    tr({in, out});
    CHECK(out_store == std::vector<float>{1, 4, 7, 2, 5, 7, 3, 6, 7});
  }
  SECTION("1 x n and n x 1") {
    const std::vector<float> values = {1, 2, 3, 4, 5};
    kiln::Buffer row = kiln::Buffer::alloc(host, kiln::f32, {1, 5});
    row.copy_from_host(values.data(), values.size() * sizeof(float));
    kiln::Buffer col = kiln::Buffer::alloc(host, kiln::f32, {5, 1});
    tr({row, col});
    CHECK(col.to_host<float>() == values);
    kiln::Buffer back = kiln::Buffer::alloc(host, kiln::f32, {1, 5});
    tr({col, back});
    CHECK(back.to_host<float>() == values);
  }
  SECTION("transposed views on either side, and halves as bit patterns") {
    // in 2 x 3 = {1 2 3; 4 5 6}; as a column-major view its storage is in^T = {1 4; 2 5; 3 6}.
    std::vector<std::uint16_t> in_store = {1, 4, 2, 5, 3, 6};
    const auto in_cm = kiln::TensorRef::col_major(in_store.data(), kiln::bf16, 2, 3, 2, host);
    std::vector<std::uint16_t> out_store(6, 0xFFFF);
    // out 3 x 2 row-major: in^T = {1 4; 2 5; 3 6}, the storage copied.
    tr({in_cm, kiln::TensorRef::matrix(out_store.data(), kiln::bf16, 3, 2, 2, host)});
    CHECK(out_store == std::vector<std::uint16_t>{1, 4, 2, 5, 3, 6});
    // out column-major (storage 2 x 3 row-major): in^T as a view of in's layout: {1 2 3; 4 5 6}.
    std::fill(out_store.begin(), out_store.end(), 0xFFFF);
    tr({in_cm, kiln::TensorRef::col_major(out_store.data(), kiln::bf16, 3, 2, 3, host)});
    CHECK(out_store == std::vector<std::uint16_t>{1, 2, 3, 4, 5, 6});
    // NaN patterns survive (bits, not values).
    std::vector<std::uint16_t> nan_in = {0x7FFF, 0xFFC1, 0x0001, 0x8000};
    std::vector<std::uint16_t> nan_out(4, 0);
    tr({kiln::TensorRef::matrix(nan_in.data(), kiln::f16, 2, 2, 2, host),
        kiln::TensorRef::matrix(nan_out.data(), kiln::f16, 2, 2, 2, host)});
    CHECK(nan_out == std::vector<std::uint16_t>{0x7FFF, 0x0001, 0xFFC1, 0x8000});
  }
  SECTION("the host variant against ProblemData's reference, pitched") {
    const kiln::OpSchema& schema = rt.registry().op("transpose");
    const kiln::Problem wanted = schema.problem_from_dims(kiln::f32, {31, 33}, host);
    kiln::ProblemData data(schema, wanted, host, 3, {/*pitched=*/true, /*reference=*/true});
    data.poison_outputs();
    tr(data.device_args());
    CHECK(data.error() == 0.0);
  }
}

TEST_CASE("transpose schema: tensor specs, work, tolerance", "[transpose]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& s = reg.op("transpose");
  const kiln::Problem p = s.problem_from_dims(kiln::f32, {1025, 2047}, kiln::Device::host());
  std::vector<kiln::TensorSpec> specs;
  REQUIRE(s.tensor_specs(p, specs).ok());
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].shape == kiln::Shape::matrix(1025, 2047));
  CHECK(specs[1].shape == kiln::Shape::matrix(2047, 1025));
  CHECK(s.work(p) == 2.0 * 1025.0 * 2047.0 * 4.0);
  CHECK(s.work_unit == kiln::WorkUnit::byte);
  CHECK(s.tolerance_for(p) == 0.0);
}

TEST_CASE("transpose parameter spaces", "[transpose]") {
  namespace tr = kiln::transpose;
  const kiln::DeviceInfo dev = fake_h200();
  kiln::Registry reg = make_registry();
  kiln::Problem p = reg.op("transpose").problem_from_dims(kiln::f32, {1025, 2047}, kiln::Device::cuda(0));

  SECTION("1-D") {
    const kiln::ParamSpace s = tr::one_d_space();
    CHECK(s.count() == 4);
    CHECK(s.count_valid(dev, p) == 4);
    CHECK(!s.violated(tr::one_d_default(dev), dev, p));
  }
  SECTION("naive_2d") {
    const kiln::ParamSpace s = tr::naive_2d_space();
    CHECK(s.count() == 24);
    // 64 <= threads <= 1024: block_x 8: 3 heights, 16: 4, 32: 5, 64: 5.
    CHECK(s.count_valid(dev, p) == 17);
    const kiln::Config d = tr::naive_2d_default(dev);
    CHECK(!s.violated(d, dev, p));
    CHECK(tr::naive_2d_supports(p, d).ok);
  }
  SECTION("skinny") {
    const kiln::ParamSpace s = tr::skinny_space();
    CHECK(s.count() == 18);
    CHECK(!s.violated(tr::skinny_default(dev), dev, p));
    // access_bytes: 4-byte types only 4 (9 configs), 2-byte types 2 or 4 (18).
    CHECK(s.count_valid(dev, p) == 9);
    const kiln::Problem half = reg.op("transpose").problem_from_dims(kiln::bf16, {100, 1000000}, kiln::Device::cuda(0));
    CHECK(s.count_valid(dev, half) == 18);
    CHECK(!s.violated(tr::skinny_default(dev), dev, half));
    CHECK(tr::skinny_default(dev).get("access_bytes") == 4);
    CHECK(tr::skinny_default(dev).get("tile_bytes") == 32768);  // 8192 floats, 16384 halves
    // 1025 x 2047 has no short side; 100 x 10^6 and 10^6 x 100 do.
    const kiln::Support no = tr::skinny_supports(p);
    CHECK(!no.ok);
    CHECK(contains(no.reason, "at most 256"));
    kiln::Problem wide = reg.op("transpose").problem_from_dims(kiln::f32, {100, 1000000}, kiln::Device::cuda(0));
    CHECK(tr::skinny_supports(wide).ok);
    // Tiles (in elements: tile_bytes / element size): the short side whole, the long side a
    // multiple of 32 within them.
    const tr::SkinnyTile w = tr::skinny_tile(100, 1000000, 8192);
    CHECK(w.rows == 100);
    CHECK(w.cols == 64);
    CHECK(w.pitch == 101);
    const tr::SkinnyTile t = tr::skinny_tile(1000000, 100, 8192);
    CHECK(t.rows == 64);
    CHECK(t.cols == 100);
    CHECK(t.pitch == 65);
    const tr::SkinnyTile v = tr::skinny_tile(2, 7, 16384);  // the long side caps the span
    CHECK(v.rows == 2);
    CHECK(v.cols == 7);
    CHECK(v.smem_bytes(4) == 7 * 3 * sizeof(float));
    CHECK(v.smem_bytes(2) == 7 * 3 * 2);
    // Pairs need an even span below 32; 32 and up are multiples of 32 either way.
    CHECK(tr::skinny_tile(150, 10000, 4096).cols == 27);
    CHECK(tr::skinny_tile(150, 10000, 4096, 2).cols == 26);
    CHECK(tr::skinny_tile(10000, 150, 4096, 2).rows == 26);
    CHECK(tr::skinny_tile(100, 1000000, 8192, 2).cols == 64);
    CHECK(tr::skinny_tile(150, 13, 4096, 2).rows == 150);  // the long side caps the span, odd or not
  }
  SECTION("skinny pairs: each side on its own alignment") {
    const tr::SkinnyTile w = tr::skinny_tile(100, 1000000, 8192, 2);  // 100 x 64
    tr::SkinnyPairs both = tr::skinny_pairs(256, 1024, 1000000, 100, 100, 1000000, w);
    CHECK(both.in);
    CHECK(both.out);
    // A misaligned pointer or an odd row stride stops that side only.
    CHECK(!tr::skinny_pairs(258, 1024, 1000000, 100, 100, 1000000, w).in);
    CHECK(tr::skinny_pairs(258, 1024, 1000000, 100, 100, 1000000, w).out);
    CHECK(!tr::skinny_pairs(256, 1024, 1000001, 100, 100, 1000000, w).in);
    CHECK(!tr::skinny_pairs(256, 1026, 1000000, 100, 100, 1000000, w).out);
    CHECK(tr::skinny_pairs(256, 1026, 1000000, 100, 100, 1000000, w).in);
    const tr::SkinnyTile odd = tr::skinny_tile(101, 1000000, 8192, 2);  // 101 x 64: out rows of 101
    CHECK(!tr::skinny_pairs(256, 1024, 1000000, 101, 101, 1000000, odd).out);
    CHECK(tr::skinny_pairs(256, 1024, 1000000, 102, 101, 1000000, odd).out);  // padded to even
    // A single row needs no even stride; an odd tile extent is fine when it is the only tile.
    const tr::SkinnyTile one = tr::skinny_tile(1, 9, 8192, 2);
    CHECK(tr::skinny_pairs(256, 1024, 9, 1, 1, 9, one).in);
    const tr::SkinnyTile t = tr::skinny_tile(100, 27, 8192, 2);  // tall: one tile of 100 x 27
    CHECK(tr::skinny_pairs(256, 1024, 28, 100, 100, 27, t).in);
    const tr::SkinnyTile cut{100, 27, 101};  // an odd span with more tiles after it: not pairable
    CHECK(!tr::skinny_pairs(256, 1024, 1000, 100, 100, 1000, cut).in);
  }
  SECTION("tiled_padded") {
    const kiln::ParamSpace s = tr::tiled_padded_space();
    CHECK(s.count() == 2);
    CHECK(s.count_valid(dev, p) == 2);
    CHECK(!s.violated(tr::tiled_padded_default(dev), dev, p));
  }
  SECTION("tiled_multirow") {
    const kiln::ParamSpace s = tr::tiled_multirow_space();
    CHECK(s.count() == 3 * 4 * 4 * 2 * 2 * 4 * 4);
    // 22 kernels for 4-byte types and 14 for 2-byte ones x 4 tiles_per_block, and in groups of 8,
    // 32 and 1024 tile rows (whole columns) the 8 grouped 4-byte kernels, 7 for 2-byte types (the
    // 4 listed and three 4-byte entries built for 2-byte elements too: configs do not name the
    // element size).
    CHECK(std::size(tr::kMultirowKernels) == 36);
    CHECK(std::size(tr::kMultirowGroupRows) == 3);
    CHECK(s.count_valid(dev, p) == 88 + 8 * 3);
    kiln::Problem half = reg.op("transpose").problem_from_dims(kiln::bf16, {1025, 2047}, kiln::Device::cuda(0));
    CHECK(s.count_valid(dev, half) == 56 + 7 * 3);
    for (const tr::MultirowKernel& g : tr::kMultirowGrouped) {  // each a built kernel
      const kiln::Config c{{"tile", g.tile}, {"block_rows", g.block_rows}, {"vector_width", g.vector_width},
                           {"load_hint", g.load_hint}, {"store_hint", g.store_hint}, {"tiles_per_block", 1}, {"group_rows", 8}};
      CHECK(tr::multirow_kernel(c, g.elem_bytes) != nullptr);
    }
    const kiln::Config grouped_tpb{{"tile", 64}, {"block_rows", 8}, {"vector_width", 1}, {"load_hint", 0}, {"store_hint", 0}, {"tiles_per_block", 2}, {"group_rows", 8}};
    CHECK(s.violated(grouped_tpb, dev, p).has_value());  // groups only with one tile per block
    const kiln::Config eight{{"tile", 64}, {"block_rows", 8}, {"vector_width", 8}, {"load_hint", 0}, {"store_hint", 0}, {"tiles_per_block", 1}, {"group_rows", 1}};
    CHECK(s.violated(eight, dev, p).has_value());  // 8 floats = 32 bytes: not built
    CHECK(!s.violated(eight, dev, half).has_value());
    half.align_bytes = 16;
    CHECK(tr::tiled_multirow_supports(half, eight).ok);
    half.align_bytes = 4;
    CHECK(!tr::tiled_multirow_supports(half, eight).ok);
    CHECK(contains(tr::tiled_multirow_supports(half, eight).reason, "16-byte"));
    const kiln::Config pairs{{"tile", 64}, {"block_rows", 8}, {"vector_width", 2}, {"load_hint", 0}, {"store_hint", 0}, {"tiles_per_block", 1}, {"group_rows", 1}};
    CHECK(tr::tiled_multirow_supports(half, pairs).ok);  // 4 bytes
    half.align_bytes = 2;
    CHECK(!tr::tiled_multirow_supports(half, eight).ok);
    // 2-byte pairs on 64-wide tiles take any alignment (rows of `out` off a 4-byte boundary pair
    // from their second element; with `in` off one the scalar twin runs, below).
    CHECK(tr::multirow_pairs_any_alignment(pairs, 2));
    CHECK(!tr::multirow_pairs_any_alignment(pairs, 4));
    CHECK(!tr::multirow_pairs_any_alignment(eight, 2));
    CHECK(tr::tiled_multirow_supports(half, pairs).ok);
    // With `in` off a 4-byte boundary launch() runs the pair kernel's scalar twin: every 2-byte
    // pair kernel has one.
    for (const tr::MultirowKernel& k : tr::kMultirowKernels) {
      if (k.elem_bytes != 2 || k.vector_width != 2) continue;
      const kiln::Config scalar{{"tile", k.tile}, {"block_rows", k.block_rows}, {"vector_width", 1},
                                {"load_hint", k.load_hint}, {"store_hint", k.store_hint}, {"tiles_per_block", 1}, {"group_rows", 1}};
      CHECK(tr::multirow_kernel(scalar, 2) != nullptr);
    }
    // The default (scalar 64 x 64) is built for both sizes.
    CHECK(!s.violated(tr::tiled_multirow_default(dev), dev, half).has_value());
    const kiln::Config d = tr::tiled_multirow_default(dev);
    CHECK(!s.violated(d, dev, p));
    const kiln::Config not_built{{"tile", 32}, {"block_rows", 4}, {"vector_width", 4}, {"load_hint", 0}, {"store_hint", 0}, {"tiles_per_block", 1}, {"group_rows", 1}};
    const auto why = s.violated(not_built, dev, p);
    REQUIRE(why.has_value());
    CHECK(contains(*why, "instantiated"));

    p.align_bytes = 16;
    CHECK(tr::tiled_multirow_supports(p, d).ok);
    p.align_bytes = 8;
    const kiln::Config float4{{"tile", 32}, {"block_rows", 8}, {"vector_width", 4}, {"load_hint", 0}, {"store_hint", 0}, {"tiles_per_block", 1}, {"group_rows", 1}};
    const kiln::Support no = tr::tiled_multirow_supports(p, float4);
    CHECK(!no.ok);
    CHECK(contains(no.reason, "16-byte"));
    CHECK(contains(no.reason, "8-byte"));
    CHECK(tr::tiled_multirow_supports(
              p, {{"tile", 64}, {"block_rows", 8}, {"vector_width", 1}, {"load_hint", 1}, {"store_hint", 1}, {"tiles_per_block", 2}, {"group_rows", 1}})
              .ok);
    // The default uses scalar accesses: it supports misaligned problems too.
    CHECK(d.get("vector_width") == 1);
    CHECK(tr::tiled_multirow_supports(p, d).ok);
  }
  SECTION("tiled_multirow's default for a problem") {
    const kiln::ParamSpace s = tr::tiled_multirow_space();
    const kiln::Config d = tr::tiled_multirow_default(dev);
    auto problem = [&](kiln::DType t, std::int64_t m, std::int64_t n, int align) {
      kiln::Problem q = reg.op("transpose").problem_from_dims(t, {m, n}, kiln::Device::cuda(0));
      q.align_bytes = align;
      return q;
    };
    // Square, aligned or not: the default, scalar 64 x 64 tiles taken whole tile column by whole
    // tile column with plain stores (the order cuBLAS geam takes; faster than evict-first stores).
    CHECK(d.get("group_rows") == tr::kMultirowWholeColumnRows);
    CHECK(d.get("store_hint") == 0);
    CHECK(tr::tiled_multirow_default_for(dev, problem(kiln::f32, 16384, 16384, 16)) == d);
    CHECK(tr::tiled_multirow_default_for(dev, problem(kiln::f32, 4097, 4099, 4)) == d);
    CHECK(tr::tiled_multirow_default_for(dev, problem(kiln::f32, 12345, 6789, 4)) == d);
    CHECK(tr::tiled_multirow_default_for(dev, problem(kiln::f32, 4096, 4096, 16)) == d);
    // Small (at most 2^22 elements) and aligned: float4, evict-first stores, row-major.
    const kiln::Config small = tr::tiled_multirow_default_for(dev, problem(kiln::f32, 2048, 2048, 16));
    CHECK(small.get("vector_width") == 4);
    CHECK(small.get("store_hint") == 1);
    CHECK(small.get("group_rows") == 1);
    CHECK(tr::tiled_multirow_default_for(dev, problem(kiln::f32, 2048, 2048, 4)) == d);
    // A short side of at most 32: 32 x 32 tiles, float4 when aligned, scalar otherwise.
    const kiln::Config short_aligned = tr::tiled_multirow_default_for(dev, problem(kiln::f32, 24, 1000000, 16));
    CHECK(short_aligned.get("tile") == 32);
    CHECK(short_aligned.get("vector_width") == 4);
    const kiln::Config short_odd = tr::tiled_multirow_default_for(dev, problem(kiln::i32, 1000001, 31, 4));
    CHECK(short_odd.get("tile") == 32);
    CHECK(short_odd.get("vector_width") == 1);
    CHECK(tr::tiled_multirow_default_for(dev, problem(kiln::f32, 33, 1000000, 16)).get("tile") == 64);
    // 2-byte types: the default, in 4-byte pairs at any alignment.
    const kiln::Config odd_pairs = tr::tiled_multirow_default_for(dev, problem(kiln::bf16, 24, 1000001, 2));
    CHECK(odd_pairs.get("vector_width") == 2);
    CHECK(tr::tiled_multirow_supports(problem(kiln::bf16, 24, 1000001, 2), odd_pairs).ok);
    const kiln::Config pairs = tr::tiled_multirow_default_for(dev, problem(kiln::bf16, 24, 1000000, 16));
    CHECK(pairs.get("vector_width") == 2);
    CHECK(pairs.get("tile") == 64);
    CHECK(pairs.get("group_rows") == tr::kMultirowWholeColumnRows);
    CHECK(tr::tiled_multirow_default_for(dev, problem(kiln::f16, 4096, 4098, 4)).get("vector_width") == 2);
    // Narrow inputs (at most 8 tile columns of 64) go row-major: whole tile rows in turn.
    const kiln::Config narrow = tr::tiled_multirow_default_for(dev, problem(kiln::f32, 1000000, 100, 16));
    CHECK(narrow.get("group_rows") == 1);
    CHECK(narrow.get("tile") == 64);
    CHECK(tr::tiled_multirow_default_for(dev, problem(kiln::f32, 1000000, 512, 16)).get("group_rows") == 1);
    CHECK(tr::tiled_multirow_default_for(dev, problem(kiln::f32, 1000000, 513, 4)).get("group_rows") ==
          tr::kMultirowWholeColumnRows);
    CHECK(tr::tiled_multirow_default_for(dev, problem(kiln::bf16, 1000000, 100, 8)).get("group_rows") == 1);
    // Every one of them is a built, valid config that its problem supports.
    for (const kiln::Problem& q : {problem(kiln::f32, 16384, 16384, 16), problem(kiln::f32, 4097, 4099, 4),
                                   problem(kiln::f16, 4097, 4099, 2), problem(kiln::f32, 100003, 100, 4),
                                   problem(kiln::bf16, 16384, 16384, 16), problem(kiln::bf16, 1000000, 100, 8),
                                   problem(kiln::f16, 4096, 4098, 4), problem(kiln::f32, 2048, 2048, 16),
                                   problem(kiln::i32, 1000, 1000, 16),
                                   problem(kiln::f32, 24, 1000000, 16), problem(kiln::i32, 1000001, 31, 4),
                                   problem(kiln::bf16, 24, 1000000, 2)}) {
      const kiln::Config c = tr::tiled_multirow_default_for(dev, q);
      INFO(q.key() << " " << c.to_string());
      CHECK(!s.violated(c, dev, q));
      CHECK(tr::tiled_multirow_supports(q, c).ok);
    }
    // Short matrices are taken whole tile columns: at most 8 tile rows.
    CHECK(tr::kMultirowWholeColumns == 8);
  }
#if KILN_HAS_CUDA
  SECTION("the registered variants use these spaces and defaults") {
    for (const char* name : {"transpose_skinny", "transpose_tiled_multirow", "transpose_tiled_padded", "transpose_write_coalesced",
                             "transpose_naive_2d", "transpose_read_coalesced"}) {
      const kiln::Variant* v = reg.find_variant(name);
      REQUIRE(v != nullptr);
      INFO(name);
      CHECK(v->device_kind() == kiln::DeviceKind::cuda);
      CHECK(!v->space().violated(v->default_config(dev), dev, p));
    }
    CHECK(reg.find_variant("transpose_tiled_multirow")->space().count_valid(dev, p) == 88 + 8 * 3);
  }
#endif
}

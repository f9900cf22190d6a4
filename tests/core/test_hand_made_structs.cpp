// TensorRef, Args and Problem are plain structs a client may fill in field by field.  The public
// functions that take them must refuse values no factory would produce with the matching
// kiln::Error, before touching memory (audit 11: kiln::copy wrote through a negative row stride,
// Args::resize_scalars(-1) wrote before its array, Problem::key read past dims[]).
#include <kiln/kiln.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "catch.hpp"
#include "scale_op.hpp"
#include "test_util.hpp"

using kiln_test::contains;
using kiln_test::error_message;

namespace {

// A host f32 view with the given fields, as a client would write it.
kiln::TensorRef hand_made(void* data, int rank, std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                          std::int64_t col_stride = 1) {
  kiln::TensorRef t;
  t.data = data;
  t.dtype = kiln::f32;
  t.shape.rank = rank;
  t.shape.dims[0] = rows;
  t.shape.dims[1] = cols;
  t.row_stride = row_stride;
  t.col_stride = col_stride;
  t.device = kiln::Device::host();
  return t;
}

}  // namespace

TEST_CASE("kiln::copy refuses views no factory would make, before copying") {
  std::vector<float> dst(64, 0.0f), src(64, 1.0f);
  const kiln::TensorRef good = hand_made(src.data(), 2, 4, 4, 4);
  // Each of these wrote outside `dst` or dereferenced null before the checks.
  CHECK_THROWS_AS(kiln::copy(hand_made(dst.data() + 32, 2, 4, 4, -4), good), kiln::ShapeError);
  CHECK(contains(error_message([&] { kiln::copy(hand_made(dst.data() + 32, 2, 4, 4, -4), good); }),
                 "kiln::copy: the destination f32[4x4] stride -4 on host: row stride -4 must be >= 1"));
  CHECK(contains(error_message([&] { kiln::copy(hand_made(dst.data(), 2, 4, 4, 2), good); }), "overlap"));
  CHECK_THROWS_AS(kiln::copy(hand_made(nullptr, 2, 4, 4, 4), good), kiln::ArgumentError);
  CHECK(contains(error_message([&] { kiln::copy(good, hand_made(nullptr, 2, 4, 4, 4)); }), "the source"));
  CHECK_THROWS_AS(kiln::copy(hand_made(dst.data(), 7, 4, 4, 4), hand_made(src.data(), 7, 4, 4, 4)), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::copy(hand_made(dst.data(), 2, INT64_MAX, 4, 4), hand_made(src.data(), 2, INT64_MAX, 4, 4)),
                  kiln::ShapeError);
  kiln::TensorRef bad_dtype = hand_made(dst.data(), 2, 4, 4, 4);
  bad_dtype.dtype = static_cast<kiln::DType>(99);
  CHECK_THROWS_AS(kiln::copy(bad_dtype, bad_dtype), kiln::DTypeError);
  for (float v : dst) REQUIRE(v == 0.0f);  // nothing was written
  // An empty (default) Buffer still copies out as nothing.
  kiln::Buffer empty;
  CHECK(empty.to_host<float>().empty());
}

TEST_CASE("Buffer::alloc refuses a dtype outside the enum") {
  const auto bad = static_cast<kiln::DType>(77);
  CHECK(contains(error_message([&] { kiln::Buffer::alloc(kiln::Device::host(), bad, {4}); }), "unknown dtype (77)"));
  CHECK_THROWS_AS(kiln::Buffer::alloc_pitched(kiln::Device::host(), bad, 2, 2), kiln::DTypeError);
}

TEST_CASE("the TensorRef factories and op() refuse a dtype outside the enum") {
  const auto bad = static_cast<kiln::DType>(42);
  std::vector<float> x(16);
  // With no size, a 2^62-element view passed every byte check before.
  CHECK(contains(error_message([&] { kiln::TensorRef::vector(x.data(), bad, std::int64_t(1) << 62, kiln::Device::host()); }),
                 "TensorRef::vector: unknown dtype (42)"));
  CHECK_THROWS_AS(kiln::TensorRef::matrix(x.data(), bad, 4, 4, 4, kiln::Device::host()), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::TensorRef::strided(x.data(), bad, 4, 4, 1, 4, kiln::Device::host()), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::TensorRef::col_major(x.data(), bad, 4, 4, 4, kiln::Device::host()), kiln::DTypeError);

  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  std::vector<float> y(16);
  kiln::TensorRef xv = kiln::view(x), yv = kiln::view(y);
  yv.dtype = bad;  // made by hand
  const std::string what = error_message([&] { rt.op("scale")({xv, yv}); });
  CHECK(contains(what, "argument 'y' has an unknown dtype (42)"));
  CHECK_THROWS_AS(rt.op("scale")({xv, yv}), kiln::DTypeError);
}

TEST_CASE("op() refuses a read-only view as an output, also after a bound call") {
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  std::vector<float> x(16, 1.0f), y(16, 0.0f);
  const std::vector<float>& cx = x;
  const std::vector<float>& cy = y;
  kiln::Op scale = rt.op("scale");
  scale(kiln::Args({kiln::view(cx), kiln::view(y)}, {2.0}));  // a read-only input is fine; binds the layout
  for (float v : y) REQUIRE(v == 2.0f);
  // The same layout but for the mark: the bound call must not take it.
  const std::string what = error_message([&] { scale(kiln::Args({kiln::view(cx), kiln::view(cy)}, {3.0})); });
  CHECK(contains(what, "scale: argument 'y' is read-only (a view of const memory), but the op writes it"));
  CHECK_THROWS_AS(scale(kiln::Args({kiln::view(cx), kiln::view(cy)}, {3.0})), kiln::ArgumentError);
  for (float v : y) REQUIRE(v == 2.0f);  // not written
}

TEST_CASE("an Op used after its Runtime is destroyed throws instead of reading freed memory") {
  std::vector<float> x(16, 1.0f), y(16, 0.0f);
  auto rt = std::make_unique<kiln::Runtime>(kiln_test::scale_registry(), kiln_test::offline_options());
  kiln::Op scale = rt->op("scale");
  scale(kiln::Args({kiln::view(x), kiln::view(y)}, {2.0}));  // binds the layout: the hot path is armed
  for (float v : y) REQUIRE(v == 2.0f);
  const kiln::Op copy = scale;
  rt.reset();
  const kiln::Args again({kiln::view(x), kiln::view(y)}, {3.0});
  const std::string what = error_message([&] { scale(again); });
  CHECK(contains(what, "kiln::Op used after the Runtime that made it was destroyed"));
  CHECK_THROWS_AS(copy(again), kiln::Error);
  CHECK_THROWS_AS(scale.prepare(again), kiln::Error);
  CHECK_THROWS_AS(scale.problem(again), kiln::Error);
  CHECK_THROWS_AS(scale.name(), kiln::Error);
  CHECK_THROWS_AS(copy.schema(), kiln::Error);
  for (float v : y) REQUIRE(v == 2.0f);  // not written
}

TEST_CASE("op() names an empty (rank 0) view as such") {
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  std::vector<float> x(16);
  kiln::Buffer y = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {16});
  kiln::Buffer moved = std::move(y);
  const std::string what = error_message([&] { rt.op("scale")({kiln::view(x), y}); });
  CHECK(contains(what, "argument 'y' is an empty view (rank 0: a default-constructed TensorRef or a moved-from Buffer)"));
  CHECK_THROWS_AS(rt.op("scale")({kiln::view(x), y}), kiln::ShapeError);
}

TEST_CASE("Args: the writing accessors check their index") {
  std::vector<float> x(4);
  kiln::Args args({kiln::view(x)}, {1.0});
  CHECK_THROWS_AS(args.resize_scalars(-1), kiln::ArgumentError);
  CHECK_THROWS_AS(args.resize_scalars(kiln::Args::kMaxScalars + 1), kiln::ArgumentError);
  CHECK_THROWS_AS(args.set_scalar(1, 2.0), kiln::ArgumentError);  // one scalar so far
  CHECK_THROWS_AS(args.set_scalar(-1, 2.0), kiln::ArgumentError);
  args.resize_scalars(3);  // grows with zeros
  CHECK(args.scalar_count() == 3);
  CHECK(args.scalar(0) == 1.0);
  CHECK(args.scalar(2) == 0.0);
  args.set_scalar(2, 5.0);
  CHECK(args.scalar(2) == 5.0);
}

TEST_CASE("a Device made by hand names the field that is off") {
  CHECK(contains(error_message([] { kiln::device_info(kiln::Device{kiln::DeviceKind::host, 3}); }),
                 "no device host with ordinal 3: the host has ordinal -1"));
  CHECK(contains(error_message([] { kiln::device_info(kiln::Device{static_cast<kiln::DeviceKind>(7), 0}); }),
                 "no device of kind 7"));
}

TEST_CASE("op() names an argument whose Device was made by hand and names no device") {
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  std::vector<float> x(64, 1.0f), y(64);
  kiln::TensorRef xv = kiln::view(x), yv = kiln::view(y);
  // Device{host, 0} (ordinal 0 "for the first"): the error said "argument 'y' is on host, but
  // argument 'x' is on host"; a kind outside the enum printed as "cuda:3".
  xv.device = kiln::Device{kiln::DeviceKind::host, 0};
  std::string what = error_message([&] { rt.op("scale")({xv, yv}); });
  CHECK(contains(what, "argument 'x' has Device{host, ordinal 0}: the host has ordinal -1 (use Device::host())"));
  CHECK_THROWS_AS(rt.op("scale")({xv, yv}), kiln::DeviceError);
  xv.device = kiln::Device{static_cast<kiln::DeviceKind>(7), 3};
  what = error_message([&] { rt.op("scale")({yv, xv}); });
  CHECK(contains(what, "argument 'y' has Device{kind 7, ordinal 3}: expected DeviceKind::host or DeviceKind::cuda"));
  xv.device = kiln::Device::cuda(-5);
  what = error_message([&] { rt.op("scale")({xv, yv}); });
  CHECK(contains(what, "argument 'x' has Device{cuda, ordinal -5}: CUDA ordinals are >= 0"));
  CHECK(kiln::Device{static_cast<kiln::DeviceKind>(7), 3}.to_string() == "device kind 7");
  for (float v : y) REQUIRE(v == 0.0f);  // nothing ran
}

TEST_CASE("Problem and Shape made by hand: clear errors, no reads past their arrays") {
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "64", kiln::Device::host());
  p.n_dims = 100;
  CHECK(contains(error_message([&] { p.key(); }), "n_dims is 100, expected 0 to 8"));
  CHECK_THROWS_AS(rt.explain(p), kiln::ArgumentError);
  const kiln::DeviceInfo& host_info = kiln::device_info(kiln::Device::host());
  CHECK(contains(error_message([&] { rt.dispatcher().decide(p, host_info); }), "n_dims = 100, expected 0 to 8"));
  CHECK_THROWS_AS(rt.dispatcher().decide_uncached(p, host_info), kiln::ArgumentError);
  CHECK(contains(error_message([&] { rt.explain(kiln::Problem{}); }), "names no op"));
  // same_key (inline, op()'s hot path) compares the dims it has: past dims[] lies the device.
  kiln::Problem q = p;
  p.n_dims = q.n_dims = kiln::Problem::kMaxDims + 1;
  q.device = kiln::Device::cuda(0);
  CHECK(p.same_key(q));
  std::vector<float> mem(32);
  const kiln::TensorRef batch = kiln::view(mem.data(), 4, 4, kiln::Device::host()).batched(2, 16);
  CHECK(batch.matrix_at(1).data == mem.data() + 16);
  CHECK_THROWS_AS(batch.matrix_at(2), kiln::ShapeError);
  CHECK_THROWS_AS(batch.matrix_at(-1), kiln::ShapeError);
  kiln::Shape s;
  s.rank = 5;
  CHECK(s.to_string() == "[rank 5]");
  CHECK(contains(error_message([&] { s.numel(); }), "shape of rank 5: expected rank 0 to 3"));
  s = kiln::Shape::matrix(4, -20);  // counted -80 elements
  CHECK(contains(error_message([&] { s.numel(); }), "shape [4x-20] has a negative extent"));
  CHECK_THROWS_AS(s.numel(), kiln::ShapeError);
  CHECK(kiln::Shape{}.numel() == 0);
  // A workspace larger than a Buffer can describe names the request, not a negative extent.
  CHECK(contains(error_message([&] { rt.reserve_workspace(kiln::Device::host(), {}, SIZE_MAX); }),
                 "Runtime::workspace: 18446744073709551615 bytes requested on host"));
}

TEST_CASE("strides_error: strides near 2^63 are judged without overflowing") {
  // rows * row_stride and cols * col_stride overflowed (undefined; UBSan: signed integer
  // overflow) and wrapped negative, so these strides, which put (1, 0) and (0, 1) at one
  // address, were said to be fine.
  std::vector<float> mem(4);
  kiln::TensorRef t;
  t.data = mem.data();
  t.shape = kiln::Shape::matrix(3, 3);
  t.row_stride = t.col_stride = std::int64_t(1) << 62;
  CHECK(contains(t.strides_error(), "overlap"));
  // One stride past the other's whole extent: no overlap, and the span check says what is wrong.
  t.row_stride = 4;
  t.col_stride = std::numeric_limits<std::int64_t>::max();
  CHECK(t.strides_error().empty());
  std::int64_t bytes = 0;
  CHECK_FALSE(t.span_fits(bytes));
  // A batch of such matrices: their span does not fit, said so instead of overflowing.
  t.shape = kiln::Shape::batched(2, 3, 3);
  t.col_stride = std::int64_t(1) << 62;
  t.row_stride = 1;
  t.batch_stride = 1;
  CHECK(t.strides_error() == "one matrix spans more elements than fit in int64");
}

TEST_CASE("Runtime::workspace names a Device made by hand as its own argument") {
  // Device{host, 7} was handed the host's workspace once one existed, and before that was refused
  // by "Buffer::alloc: argument 'device'", a function the caller never called.
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  void* host_ws = rt.workspace(kiln::Device::host(), {}, 64);
  CHECK(host_ws != nullptr);
  std::string what = error_message([&] { rt.workspace(kiln::Device{kiln::DeviceKind::host, 7}, {}, 16); });
  CHECK(contains(what, "Runtime::workspace: argument 'device': no device host with ordinal 7"));
  CHECK_THROWS_AS(rt.reserve_workspace(kiln::Device{kiln::DeviceKind::host, 7}, {}, 16), kiln::DeviceError);
  CHECK_THROWS_AS(rt.workspace(kiln::Device{kiln::DeviceKind::host, 7}, {}, 0), kiln::DeviceError);
  what = error_message([&] { rt.reserve_workspace(kiln::Device{kiln::DeviceKind::cuda, 4096}, {}, 16); });
  CHECK(contains(what, "Runtime::workspace: argument 'device': no device cuda:4096"));
  CHECK(rt.workspace(kiln::Device::host(), {}, 16) == host_ws);  // the host's own is still served
}

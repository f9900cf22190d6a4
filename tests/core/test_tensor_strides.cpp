// General 2-D strides, batches and transposed views: construction, validation, copies, and the
// core's refusal to hand such views to ops that did not opt in (OpSchema::strided_views).
#include <kiln/kiln.hpp>

#include <memory>
#include <numeric>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"

using kiln_test::contains;
using kiln_test::error_message;

TEST_CASE("a transposed view is the same memory with the strides swapped", "[strides]") {
  std::vector<float> m(3 * 5);
  std::iota(m.begin(), m.end(), 0.0f);
  const auto a = kiln::TensorRef::matrix(m.data(), kiln::f32, 3, 4, 5, kiln::Device::host());  // padded rows
  const auto t = a.transposed();
  CHECK(t.data == a.data);
  CHECK(t.rows() == 4);
  CHECK(t.cols() == 3);
  CHECK(t.row_stride == 1);
  CHECK(t.col_stride == 5);
  CHECK(t.col_major_layout());
  CHECK_FALSE(t.row_major());
  CHECK_FALSE(t.contiguous());
  CHECK(t.leading_dim() == 5);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) CHECK(kiln::load_element(t, 0, r, c) == kiln::load_element(a, 0, c, r));
  CHECK(t.transposed().row_stride == 5);
  CHECK(t.transposed().col_stride == 1);
  CHECK(t.span_bytes() == a.span_bytes());
  CHECK(t.to_string() == "f32[4x3] strides 1,5 on host");

  const auto cm = kiln::TensorRef::col_major(m.data(), kiln::f32, 4, 3, 5, kiln::Device::host());
  CHECK(cm.row_stride == t.row_stride);
  CHECK(cm.col_stride == t.col_stride);
}

TEST_CASE("batched views repeat a matrix layout, stride 0 broadcasting", "[strides]") {
  std::vector<float> m(2 * 3 * 4);
  std::iota(m.begin(), m.end(), 0.0f);
  const auto a = kiln::TensorRef::matrix(m.data(), kiln::f32, 3, 4, 4, kiln::Device::host());
  const auto b = a.batched(2, 12);
  CHECK(b.shape == kiln::Shape::batched(2, 3, 4));
  CHECK(b.batch() == 2);
  CHECK(b.contiguous());
  CHECK(b.numel() == 24);
  CHECK(b.span_bytes() == 24 * 4);
  CHECK(kiln::load_element(b, 1, 2, 3) == 23.0);
  CHECK(b.matrix_at(1).as<float>() == m.data() + 12);
  CHECK(b.matrix_at(1).shape == kiln::Shape::matrix(3, 4));
  const auto bc = a.batched(5, 0);
  CHECK(kiln::load_element(bc, 4, 1, 1) == kiln::load_element(a, 0, 1, 1));
  CHECK(bc.to_string() == "f32[5x3x4] batch stride 0 on host");
  // A batch of transposed matrices.
  const auto bt = b.transposed();
  CHECK(bt.shape == kiln::Shape::batched(2, 4, 3));
  CHECK(kiln::load_element(bt, 1, 3, 2) == 23.0);
}

TEST_CASE("zero, negative and overlapping strides are refused with the reason", "[strides]") {
  std::vector<float> m(64);
  const auto host = kiln::Device::host();
  CHECK(contains(error_message([&] { kiln::TensorRef::strided(m.data(), kiln::f32, 3, 4, 0, 1, host); }),
                 "row stride 0 must be >= 1"));
  CHECK(contains(error_message([&] { kiln::TensorRef::strided(m.data(), kiln::f32, 3, 4, 4, -1, host); }),
                 "column stride -1 must be >= 1"));
  CHECK(contains(error_message([&] { kiln::TensorRef::strided(m.data(), kiln::f32, 3, 4, 2, 2, host); }), "overlap"));
  CHECK(contains(error_message([&] { kiln::TensorRef::col_major(m.data(), kiln::f32, 4, 3, 3, host); }),
                 "col_stride 3 is smaller than rows 4"));
  const auto a = kiln::TensorRef::matrix(m.data(), kiln::f32, 3, 4, 4, host);
  CHECK(contains(error_message([&] { a.batched(2, 5); }), "batch entries overlap"));
  CHECK(contains(error_message([&] { a.batched(2, -12); }), "must be >= 0"));
  CHECK(contains(error_message([&] { a.batched(2, 12).batched(2, 12); }), "needs a rank-2 view"));
  // Extents of one make the stride along them irrelevant.
  CHECK(kiln::TensorRef::strided(m.data(), kiln::f32, 1, 4, 0, 1, host).strides_error().empty());
  // Strides that interleave without collision are fine: column stride 2 inside a row stride 8.
  CHECK(kiln::TensorRef::strided(m.data(), kiln::f32, 3, 4, 8, 2, host).strides_error().empty());
}

TEST_CASE("copies honour any strides and batches on the host", "[strides]") {
  std::vector<float> src(2 * 3 * 5);
  std::iota(src.begin(), src.end(), 1.0f);
  const auto s = kiln::TensorRef::matrix(src.data(), kiln::f32, 3, 5, 5, kiln::Device::host()).transposed();  // 5x3
  auto d = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {5, 3});
  d.copy_from(s);
  const auto out = d.to_host<float>();
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 3; ++c) CHECK(out[r * 3 + c] == src[c * 5 + r]);

  auto b = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {2, 3, 5});
  CHECK(b.ref().batch_stride == 15);
  b.copy_from_host(src.data(), src.size() * 4);
  CHECK(b.to_host<float>() == src);
  // Broadcasting source into a batch.
  const auto one = kiln::TensorRef::matrix(src.data(), kiln::f32, 3, 5, 5, kiln::Device::host()).batched(2, 0);
  b.copy_from(one);
  const auto back = b.to_host<float>();
  for (int i = 0; i < 15; ++i) CHECK(back[15 + i] == src[i]);
  // A broadcast destination would write one address twice.
  CHECK(contains(error_message([&] { kiln::copy(one, b.ref()); }), "batch stride 0"));
}

// An op "rowonly" (x -> y, dims m and n from x) with no variants: derive_problem's checks alone.
static std::shared_ptr<kiln::OpSchema> rowonly_schema() {
  auto schema = std::make_shared<kiln::OpSchema>();
  schema->name = "rowonly";
  schema->tensors = {{"x", kiln::Role::input}, {"y", kiln::Role::output}};
  schema->dim_names = {"m", "n"};
  schema->make_problem = [](const kiln::Args& args, kiln::Problem& p) {
    p.n_dims = 2;
    p.dims[0] = args.tensor(0).rows();
    p.dims[1] = args.tensor(0).cols();
    return kiln::Status::success();
  };
  schema->tensor_specs = [](const kiln::Problem&, std::vector<kiln::TensorSpec>&) { return kiln::Status::success(); };
  schema->reference = [](const kiln::Args&, const kiln::Problem&) { return kiln::Status::success(); };
  schema->work = [](const kiln::Problem&) { return 0.0; };
  return schema;
}

TEST_CASE("ops that did not opt in get a clear error for strided or batched views", "[strides]") {
  kiln::Registry reg;
  auto schema = rowonly_schema();
  reg.add_op(schema);
  kiln::Runtime rt(std::move(reg), kiln_test::offline_options());
  std::vector<float> x(64), y(64);
  const auto host = kiln::Device::host();
  const auto a = kiln::TensorRef::matrix(x.data(), kiln::f32, 4, 4, 4, host);
  const auto out = kiln::TensorRef::matrix(y.data(), kiln::f32, 4, 4, 4, host);
  CHECK(rt.op("rowonly").problem({a, out}).key() == "f32|m=4|n=4");
  const std::string t = error_message([&] { rt.op("rowonly").problem({a.transposed(), out}); });
  CHECK(contains(t, "argument 'x'"));
  CHECK(contains(t, "row-major views only"));
  const std::string b = error_message([&] { rt.op("rowonly").problem({a, out.batched(2, 16)}); });
  CHECK(contains(b, "argument 'y'"));
  CHECK(contains(b, "takes no batches"));
  // An op that opts in gets the views, with their strides validated.
  schema->strided_views = true;
  CHECK(rt.op("rowonly").problem({a.transposed(), out.batched(2, 16)}).key() == "f32|m=4|n=4");
  kiln::TensorRef bad = a;
  bad.col_stride = 2;  // rows 4 apart, columns 2 apart: (0,2) and (1,0) collide
  CHECK(contains(error_message([&] { rt.op("rowonly").problem({bad, out}); }), "overlap"));
}

TEST_CASE("a one-column view with another column stride still needs rows at least 1 apart", "[strides]") {
  // A matrix with one column counts as row-major whatever its column stride, so an op without
  // strided views never checked its row stride: rows 0 apart (every row of an output on one
  // element) passed, and a negative one was called "more bytes than fit in int64".
  kiln::Registry reg;
  auto schema = rowonly_schema();
  reg.add_op(schema);
  kiln::Runtime rt(std::move(reg), kiln_test::offline_options());
  std::vector<float> x(64), y(64);
  const auto host = kiln::Device::host();
  const auto a = kiln::TensorRef::matrix(x.data(), kiln::f32, 4, 1, 1, host);
  const auto out = kiln::TensorRef::matrix(y.data(), kiln::f32, 4, 1, 1, host);
  CHECK(rt.op("rowonly").problem({a, out}).key() == "f32|m=4|n=1");
  kiln::TensorRef same_row = out;  // what TensorRef::strided refuses: "row stride 0 must be >= 1"
  same_row.row_stride = 0;
  same_row.col_stride = 0;
  const std::string zero = error_message([&] { rt.op("rowonly").problem({a, same_row}); });
  CHECK(contains(zero, "argument 'y'"));
  CHECK(contains(zero, "row stride 0"));
  CHECK(contains(zero, "at least 1 element apart"));
  kiln::TensorRef backwards = a;
  backwards.row_stride = -1;
  backwards.col_stride = 7;
  const std::string negative = error_message([&] { rt.op("rowonly").problem({backwards, out}); });
  CHECK(contains(negative, "argument 'x'"));
  CHECK(contains(negative, "row stride -1"));
  CHECK_THROWS_AS(rt.op("rowonly").problem({backwards, out}), kiln::ShapeError);
  // One row addresses one element whatever its stride, and an empty view none.
  kiln::TensorRef one_row = kiln::TensorRef::matrix(y.data(), kiln::f32, 1, 1, 1, host);
  one_row.row_stride = 0;
  one_row.col_stride = 0;
  kiln::TensorRef one_in = kiln::TensorRef::matrix(x.data(), kiln::f32, 1, 1, 1, host);
  CHECK(rt.op("rowonly").problem({one_in, one_row}).key() == "f32|m=1|n=1");
}

TEST_CASE("the alignment class counts the strides a kernel steps by", "[strides]") {
  alignas(256) static float m[64 * 64];
  const auto host = kiln::Device::host();
  CHECK(kiln::TensorRef::matrix(m, kiln::f32, 8, 8, 8, host).alignment() == 16);
  CHECK(kiln::TensorRef::matrix(m, kiln::f32, 8, 5, 5, host).alignment() == 4);    // 20-byte rows
  CHECK(kiln::TensorRef::matrix(m + 2, kiln::f32, 8, 8, 8, host).alignment() == 8);
  // A row-major k x 1 column steps rows by its row stride, 1 element: 4 bytes.
  CHECK(kiln::TensorRef::matrix(m, kiln::f32, 8, 1, 1, host).alignment() == 4);
  // A column-major matrix steps columns by its column stride; its unit row stride does not count.
  CHECK(kiln::TensorRef::col_major(m, kiln::f32, 8, 8, 8, host).alignment() == 16);
  CHECK(kiln::TensorRef::col_major(m, kiln::f32, 5, 8, 5, host).alignment() == 4);
  // One row: its stride is never used.
  CHECK(kiln::TensorRef::matrix(m, kiln::f32, 1, 5, 5, host).alignment() == 16);
  // Batch strides count unless they broadcast.
  const auto a = kiln::TensorRef::matrix(m, kiln::f32, 4, 4, 4, host);
  CHECK(a.batched(3, 18).alignment() == 8);
  CHECK(a.batched(3, 0).alignment() == 16);
}

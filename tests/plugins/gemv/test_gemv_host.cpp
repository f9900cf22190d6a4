// The `gemv` schema and host variant, through kiln::Runtime::op with host buffers; the variant
// list and parameter spaces.  No GPU needed.
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"
#include "gemv_params.hpp"
#include "register_gemv.hpp"

using kiln_test::error_message;
using kiln_test::contains;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_gemv(reg);
  REQUIRE(s.ok());
  return reg;
}

kiln::Buffer host_matrix(std::int64_t rows, std::int64_t cols, const std::vector<float>& values) {
  kiln::Buffer b = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {rows, cols});
  b.copy_from_host(values.data(), values.size() * sizeof(float));
  return b;
}

kiln::Buffer host_vector(const std::vector<float>& values) {
  kiln::Buffer b = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {static_cast<std::int64_t>(values.size())});
  b.copy_from_host(values.data(), values.size() * sizeof(float));
  return b;
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

TEST_CASE("gemv registers its schema and variants in priority order", "[gemv]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema* s = reg.find_op("gemv");
  REQUIRE(s != nullptr);
  CHECK(s->signature() == "gemv(a: in, x: in, y: out)");
  CHECK(s->dim_names == std::vector<std::string>{"m", "n", "y16"});
  CHECK(s->mode_dims == std::vector<std::string>{"y16"});

  const kiln::Variant* host = reg.find_variant("gemv_host");
  REQUIRE(host != nullptr);
  CHECK(host->desc().reference);
  CHECK(host->device_kind() == kiln::DeviceKind::host);
  CHECK(host->priority() == 0);
  CHECK(host->space().empty());

  std::vector<std::string> names;
  for (const kiln::Variant* v : reg.variants("gemv")) names.push_back(v->name());
#if KILN_HAS_CUDA
  // Equal priorities (the two warp-per-row variants, 30) list in name order.
  CHECK(names == std::vector<std::string>{"gemv_half_warp_per_row", "gemv_warp_per_row", "gemv_smem_x",
                                          "gemv_row_per_thread", "gemv_host"});
#else
  CHECK(names == std::vector<std::string>{"gemv_host"});
#endif
  // A second registration clashes and comes back as a Status, not an exception.
  const kiln::Status again = register_gemv(reg);
  CHECK(!again.ok());
}

TEST_CASE("gemv validates its arguments", "[gemv]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemv = rt.op("gemv");
  const kiln::Device host = kiln::Device::host();
  kiln::Buffer a = kiln::Buffer::alloc(host, kiln::f32, {3, 4});
  kiln::Buffer x = kiln::Buffer::alloc(host, kiln::f32, {4});
  kiln::Buffer y = kiln::Buffer::alloc(host, kiln::f32, {3});

  SECTION("the valid call derives m and n") {
    const kiln::Problem p = gemv.problem({a, x, y});
    CHECK(p.key() == "f32|m=3|n=4|y16=0");
  }
  SECTION("a must be a matrix") {
    kiln::Buffer a1 = kiln::Buffer::alloc(host, kiln::f32, {12});
    REQUIRE_THROWS_AS(gemv({a1, x, y}), kiln::ShapeError);
    const std::string msg = error_message([&] { gemv({a1, x, y}); });
    CHECK(contains(msg, "'a'"));
    CHECK(contains(msg, "rank 2"));
  }
  SECTION("x must have n elements") {
    kiln::Buffer x5 = kiln::Buffer::alloc(host, kiln::f32, {5});
    REQUIRE_THROWS_AS(gemv({a, x5, y}), kiln::ShapeError);
    const std::string msg = error_message([&] { gemv({a, x5, y}); });
    CHECK(contains(msg, "'x'"));
    CHECK(contains(msg, "[4]"));
    kiln::Buffer x41 = kiln::Buffer::alloc(host, kiln::f32, {4, 1});
    REQUIRE_THROWS_AS(gemv({a, x41, y}), kiln::ShapeError);
    CHECK(contains(error_message([&] { gemv({a, x41, y}); }), "'x'"));
  }
  SECTION("y must have m elements") {
    kiln::Buffer y4 = kiln::Buffer::alloc(host, kiln::f32, {4});
    REQUIRE_THROWS_AS(gemv({a, x, y4}), kiln::ShapeError);
    const std::string msg = error_message([&] { gemv({a, x, y4}); });
    CHECK(contains(msg, "'y'"));
    CHECK(contains(msg, "[3]"));
  }
  SECTION("every tensor must be f32 (or a and x one half type)") {
    kiln::Buffer x64 = kiln::Buffer::alloc(host, kiln::f64, {4});
    REQUIRE_THROWS_AS(gemv({a, x64, y}), kiln::DTypeError);
    const std::string msg = error_message([&] { gemv({a, x64, y}); });
    CHECK(contains(msg, "'x'"));
    CHECK(contains(msg, "f64"));
    CHECK(contains(msg, "f32"));
    kiln::Buffer a32 = kiln::Buffer::alloc(host, kiln::i32, {3, 4});
    REQUIRE_THROWS_AS(gemv({a32, x, y}), kiln::DTypeError);
    CHECK(contains(error_message([&] { gemv({a32, x, y}); }), "'a'"));
  }
  SECTION("null pointers, a wrong tensor count and aliasing are refused") {
    kiln::TensorRef null_x = x.ref();
    null_x.data = nullptr;
    REQUIRE_THROWS_AS(gemv({a, null_x, y}), kiln::ArgumentError);
    CHECK(contains(error_message([&] { gemv({a, null_x, y}); }), "'x'"));
    REQUIRE_THROWS_AS(gemv({a, x}), kiln::ArgumentError);
    // y written over x.
    kiln::Buffer xy = kiln::Buffer::alloc(host, kiln::f32, {4});
    const auto y_over_x = kiln::TensorRef::vector(xy.data(), kiln::f32, 3, host);
    REQUIRE_THROWS_AS(gemv({a, xy, y_over_x}), kiln::ArgumentError);
    CHECK(contains(error_message([&] { gemv({a, xy, y_over_x}); }), "overlaps"));
  }
}

TEST_CASE("gemv on host buffers runs the reference", "[gemv]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemv = rt.op("gemv");
  const kiln::Device host = kiln::Device::host();

  SECTION("a hand-computed case") {
    kiln::Buffer a = host_matrix(2, 3, {1, 2, 3, 4, 5, 6});
    kiln::Buffer x = host_vector({1, 0.5f, -1});
    kiln::Buffer y = kiln::Buffer::alloc(host, kiln::f32, {2});
    y.fill_bytes(0xFF);
    gemv({a, x, y});
    CHECK(y.to_host<float>() == std::vector<float>{-1.0f, 0.5f});
    CHECK(rt.explain(gemv.problem({a, x, y})).variant->name() == "gemv_host");
  }
  SECTION("a strided view of a larger array") {
    // A is the left 2 x 3 of a 3 x 5 array (row stride 5); the rest must not be read.
    std::vector<float> storage = {1, 2, 3, 99, 99, 4, 5, 6, 99, 99, 99, 99, 99, 99, 99};
    const auto a = kiln::TensorRef::matrix(storage.data(), kiln::f32, 2, 3, 5, host);
    kiln::Buffer x = host_vector({2, -1, 0.25f});
    kiln::Buffer y = kiln::Buffer::alloc(host, kiln::f32, {2});
    gemv({a, x, y});
    CHECK(y.to_host<float>() == std::vector<float>{0.75f, 4.5f});
  }
  SECTION("accumulation in double: cancellation that float would lose") {
    kiln::Buffer a = host_matrix(1, 3, {1e8f, 1.0f, -1e8f});
    kiln::Buffer x = host_vector({1, 1, 1});
    kiln::Buffer y = kiln::Buffer::alloc(host, kiln::f32, {1});
    gemv({a, x, y});
    CHECK(y.to_host<float>()[0] == 1.0f);
  }
  SECTION("empty extents") {
    kiln::Buffer a = kiln::Buffer::alloc(host, kiln::f32, {3, 0});
    kiln::Buffer x = kiln::Buffer::alloc(host, kiln::f32, {0});
    kiln::Buffer y = kiln::Buffer::alloc(host, kiln::f32, {3});
    y.fill_bytes(0xFF);
    gemv({a, x, y});
    CHECK(y.to_host<float>() == std::vector<float>{0.0f, 0.0f, 0.0f});
  }
  SECTION("the host variant against ProblemData's reference, pitched") {
    const kiln::OpSchema& schema = rt.registry().op("gemv");
    const kiln::Problem wanted = schema.problem_from_dims(kiln::f32, {31, 33}, host);
    kiln::ProblemData data(schema, wanted, host, 3, {/*pitched=*/true, /*reference=*/true});
    data.poison_outputs();
    gemv(data.device_args());
    CHECK(data.error() == 0.0);
  }
}

TEST_CASE("gemv schema: tensor specs, work, tolerance", "[gemv]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& s = reg.op("gemv");
  const kiln::Problem p = s.problem_from_dims(kiln::f32, {2048, 4097}, kiln::Device::host());
  std::vector<kiln::TensorSpec> specs;
  REQUIRE(s.tensor_specs(p, specs).ok());
  REQUIRE(specs.size() == 3);
  CHECK(specs[0].shape == kiln::Shape::matrix(2048, 4097));
  CHECK(specs[1].shape == kiln::Shape::vector(4097));
  CHECK(specs[2].shape == kiln::Shape::vector(2048));
  CHECK(s.work(p) == (2048.0 * 4097.0 + 4097.0 + 2048.0) * 4.0);
  CHECK(s.work_unit == kiln::WorkUnit::byte);
  CHECK(s.tolerance_for(p) == 1e-4);
}

TEST_CASE("gemv parameter spaces", "[gemv]") {
  namespace gv = kiln::gemv;
  const kiln::DeviceInfo dev = fake_h200();
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& schema = reg.op("gemv");
  kiln::Problem p = schema.problem_from_dims(kiln::f32, {1000, 999}, kiln::Device::cuda(0));

  SECTION("row_per_thread") {
    const kiln::ParamSpace s = gv::row_per_thread_space();
    CHECK(s.count() == 4);
    CHECK(s.count_valid(dev, p) == 4);
    const kiln::Config d = gv::row_per_thread_default(dev);
    CHECK(!s.violated(d, dev, p));
    CHECK(gv::row_per_thread_supports(p, d).ok);
  }
  SECTION("smem_x") {
    const kiln::ParamSpace s = gv::smem_x_space();
    CHECK(s.count() == 20);
    CHECK(s.count_valid(dev, p) == 20);
    const kiln::Config d = gv::smem_x_default(dev);
    CHECK(!s.violated(d, dev, p));
    for (const kiln::Config& c : s.enumerate(dev, p)) CHECK(gv::smem_x_supports(p, dev, c).ok);
  }
  SECTION("warp_per_row") {
    const kiln::ParamSpace s = gv::warp_per_row_space();
    CHECK(s.count() == 72);
    // Whole warps, at most 1024 threads: threads_per_row 4: 3 row counts, 8: 4, 16: 5, 32: 6,
    // 64: 5, 128: 4; times two vector widths.
    CHECK(s.count_valid(dev, p) == 54);
    const kiln::Config d = gv::warp_per_row_default(dev);
    CHECK(!s.violated(d, dev, p));
    CHECK(s.violated(kiln::Config{{"rows_per_block", 1}, {"threads_per_row", 4}, {"vector_width", 1}}, dev, p).has_value());
    CHECK(s.violated(kiln::Config{{"rows_per_block", 16}, {"threads_per_row", 128}, {"vector_width", 1}}, dev, p).has_value());
    CHECK(std::size(gv::kWarpPerRowKernels) == 12);

    // vector_width=4 needs 16-byte alignment; vector_width=1 does not.
    p.align_bytes = 16;
    CHECK(gv::warp_per_row_supports(p, d).ok);
    p.align_bytes = 4;
    const kiln::Support no = gv::warp_per_row_supports(p, d);
    CHECK(!no.ok);
    CHECK(contains(no.reason, "16-byte"));
    CHECK(contains(no.reason, "4-byte"));
    CHECK(gv::warp_per_row_supports(p, {{"rows_per_block", 8}, {"threads_per_row", 32}, {"vector_width", 1}}).ok);
  }
#if KILN_HAS_CUDA
  SECTION("the registered variants use these spaces and defaults") {
    for (const char* name : {"gemv_warp_per_row", "gemv_smem_x", "gemv_row_per_thread"}) {
      const kiln::Variant* v = reg.find_variant(name);
      REQUIRE(v != nullptr);
      INFO(name);
      CHECK(v->device_kind() == kiln::DeviceKind::cuda);
      CHECK(!v->space().violated(v->default_config(dev), dev, p));
    }
    CHECK(reg.find_variant("gemv_warp_per_row")->space().count() == 72);
    CHECK(reg.find_variant("gemv_smem_x")->space().count() == 20);
    CHECK(reg.find_variant("gemv_row_per_thread")->space().count() == 4);
  }
#endif
}

namespace {

template <class T>
kiln::TensorRef host_ref(std::vector<T>& v, kiln::DType t) {
  return kiln::TensorRef::vector(v.data(), t, static_cast<std::int64_t>(v.size()), kiln::Device::host());
}

std::vector<std::uint16_t> to_bits(const std::vector<float>& v, kiln::DType t) {
  std::vector<std::uint16_t> out;
  for (float f : v) out.push_back(t == kiln::bf16 ? kiln::float_to_bf16(f) : kiln::float_to_f16(f));
  return out;
}

}  // namespace

TEST_CASE("gemv f16 / bf16: validation names the argument and what is expected", "[gemv][half]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemv = rt.op("gemv");
  const kiln::Device host = kiln::Device::host();
  std::vector<std::uint16_t> a(12, 0x3f80), x(4, 0x3f80), yh(3);
  std::vector<float> xf(4, 1.0f), yf(3);
  const auto am = kiln::TensorRef::matrix(a.data(), kiln::bf16, 3, 4, 4, host);

  SECTION("a bf16, x f16") {
    const auto call = [&] { gemv({am, host_ref(x, kiln::f16), host_ref(yf, kiln::f32)}); };
    const std::string msg = error_message(call);
    CHECK(contains(msg, "'x'"));
    CHECK(contains(msg, "f16"));
    CHECK(contains(msg, "expected bf16"));
    REQUIRE_THROWS_AS(call(), kiln::DTypeError);
  }
  SECTION("a bf16, x f32") {
    REQUIRE_THROWS_AS(gemv({am, host_ref(xf, kiln::f32), host_ref(yf, kiln::f32)}), kiln::DTypeError);
  }
  SECTION("y neither f32 nor the input type") {
    const auto call = [&] { gemv({am, host_ref(x, kiln::bf16), host_ref(yh, kiln::f16)}); };
    const std::string msg = error_message(call);
    CHECK(contains(msg, "'y'"));
    CHECK(contains(msg, "f32 or bf16"));
    REQUIRE_THROWS_AS(call(), kiln::DTypeError);
  }
  SECTION("a column-major view is refused before the op sees it") {
    const auto at = kiln::TensorRef::matrix(a.data(), kiln::bf16, 4, 3, 3, host).transposed();
    const auto call = [&] { gemv({at, host_ref(x, kiln::bf16), host_ref(yf, kiln::f32)}); };
    CHECK(contains(error_message(call), "'a'"));
    REQUIRE_THROWS_AS(call(), kiln::ShapeError);
  }
  SECTION("y16 = 1 needs half inputs") {
    const kiln::OpSchema& s = rt.registry().op("gemv");
    REQUIRE_THROWS_AS(s.problem_from_shape(kiln::f32, "4x4,y16=1", host), kiln::ArgumentError);
  }
}

TEST_CASE("gemv f16 / bf16 on host buffers: hand-computed, keys, specs, tolerance", "[gemv][half]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemv = rt.op("gemv");
  const kiln::OpSchema& s = rt.registry().op("gemv");
  const kiln::Device host = kiln::Device::host();
  for (kiln::DType t : {kiln::bf16, kiln::f16}) {
    INFO(kiln::dtype_name(t));
    // A 2 x 3 in a row pitch of 5 (padding poisoned with NaN: never read).
    std::vector<float> af = {1, 2, -0.5f, NAN, NAN, 0.25f, -4, 3, NAN, NAN};
    std::vector<std::uint16_t> a = to_bits(af, t), x = to_bits({2, 0.5f, -2}, t), yh(2, 0xffff);
    std::vector<float> yf(2, -1.0f);
    const auto am = kiln::TensorRef::matrix(a.data(), t, 2, 3, 5, host);
    gemv({am, host_ref(x, t), host_ref(yf, kiln::f32)});
    CHECK(yf[0] == 4.0f);    // 2 + 1 + 1
    CHECK(yf[1] == -7.5f);   // 0.5 - 2 - 6
    gemv({am, host_ref(x, t), host_ref(yh, t)});
    CHECK(yh[0] == to_bits({4.0f}, t)[0]);
    CHECK(yh[1] == to_bits({-7.5f}, t)[0]);
    const kiln::Problem p = gemv.problem({am, host_ref(x, t), host_ref(yh, t)});
    CHECK(p.key() == std::string(kiln::dtype_name(t)) + "|m=2|n=3|y16=1");

    const kiln::Problem big = s.problem_from_shape(t, "16384x16384,y16=1", host);
    std::vector<kiln::TensorSpec> specs;
    REQUIRE(s.tensor_specs(big, specs).ok());
    CHECK(specs[0].dtype == t);
    CHECK(specs[1].dtype == t);
    CHECK(specs[2].dtype == t);
    CHECK(s.work(big) == (16384.0 * 16384.0 + 16384.0 + 16384.0) * 2.0);
    CHECK(s.tolerance_for(big) == Approx(kiln::accumulation_tolerance(t, 16384)));
    const kiln::Problem f32y = s.problem_from_shape(t, "16384x16384", host);
    REQUIRE(s.tensor_specs(f32y, specs).ok());
    CHECK(specs[2].dtype == kiln::f32);
    CHECK(s.work(f32y) == (16384.0 * 16384.0 + 16384.0) * 2.0 + 16384.0 * 4.0);

    // ProblemData (fresh random inputs, poisoned y) through the host variant: zero error.
    for (const char* shape : {"1x1", "7x9", "33x4099,y16=1"}) {
      kiln::ProblemData data(s, s.problem_from_shape(t, shape, host), host, 5);
      data.poison_outputs();
      gemv(data.device_args());
      CHECK(data.error() == 0.0);
    }
  }
}

TEST_CASE("gemv_half_warp_per_row parameter space", "[gemv][half]") {
  namespace gv = kiln::gemv;
  const kiln::DeviceInfo dev = fake_h200();
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& schema = reg.op("gemv");
  kiln::Problem p = schema.problem_from_dims(kiln::bf16, {1000, 999}, kiln::Device::cuda(0));
  const kiln::ParamSpace s = gv::half_warp_per_row_space();
  CHECK(s.count() == 5 * 5 * 2 * 2);
  // Instantiated (tpr, vec, rows per thread) with whole warps <= 1024 per block: tpr 8: rows 4, 8,
  // 16; 16: 2..16 (4); 32: 1..16 (5, three kernels); 64: 1..16 (5, two kernels); 128: 1..8 (4, two).
  CHECK(s.count_valid(dev, p) == 3 + 4 + 3 * 5 + 2 * 5 + 2 * 4);
  const kiln::Config d = gv::half_warp_per_row_default(dev);
  CHECK(!s.violated(d, dev, p));
  p.align_bytes = 16;
  CHECK(gv::half_warp_per_row_supports(p, d).ok);
  p.align_bytes = 2;
  const kiln::Support no = gv::half_warp_per_row_supports(p, d);
  CHECK(!no.ok);
  CHECK(contains(no.reason, "16-byte"));
  CHECK(gv::half_warp_per_row_supports(
            p, {{"rows_per_block", 8}, {"threads_per_row", 32}, {"vector_width", 1}, {"rows_per_thread", 1}})
            .ok);
  p.dtype = kiln::f32;
  p.align_bytes = 16;
  CHECK(!gv::half_warp_per_row_supports(p, d).ok);
}

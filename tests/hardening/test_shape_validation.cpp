// Problems built from shape strings (the CLI's --shape, plan files, problem lists) go through
// each op's own validation, and sizes that overflow int64 are refused with a ShapeError naming
// the tensor, for every shipped op schema.  Before issue 8 the invalid shapes below were accepted
// (then tuned and stored), and the overflowing ones crashed the tuner with a heap overflow.
#include <kiln/kiln.hpp>

#include <string>
#include <vector>

#include "catch.hpp"
#include "families.hpp"
#include "test_util.hpp"

using kiln_test::contains;
using kiln_test::error_message;

namespace {

const kiln::OpSchema& op(const std::string& name) { return kiln_test::family_registry().op(name); }

kiln::Problem from_shape(const std::string& name, const std::string& shape) {
  const kiln::OpSchema& s = op(name);
  return s.problem_from_shape(s.dtypes.front(), shape, kiln::Device::host());
}

// The ShapeError message for an invalid shape ("" when it is accepted or throws another type).
std::string shape_error(const std::string& name, const std::string& shape) {
  try {
    from_shape(name, shape);
  } catch (const kiln::ShapeError& e) {
    return e.what();
  } catch (...) {
    return "(not a ShapeError)";
  }
  return "";
}

struct Case {
  const char* op;
  const char* shape;
  const char* message;  // a part of the expected message
};

}  // namespace

TEST_CASE("valid shapes still make the problems they name", "[hardening][shape]") {
  const std::vector<std::pair<std::string, std::string>> valid = {
      {"add", "17x33"},           {"add", "1x4099"},        {"dot", "4099"},          {"reduce_sum", "1048579"},
      {"gemm", "127x129x131"},    {"gemm", "7x5x3x1"},      {"gemm", "7x5x3x2"},      {"gemv", "33x4099"},
      {"transpose", "129x257"},   {"histogram", "65537"},   {"histogram_range", "4099x256"},
      {"topk", "5x257x16"},       {"topk", "1x1000x1000x1"}, {"topk", "3x1025x1x0"},  {"topk", "rows=2,n=9,k=9"},
      {"reduce_sum", "0"},        {"histogram", "0"},       {"gemm", "1x1x0"},
  };
  for (const auto& [name, shape] : valid) {
    INFO(name << " " << shape);
    const kiln::Problem p = from_shape(name, shape);
    CHECK(p.schema == &op(name));
    CHECK(p.n_dims == static_cast<int>(op(name).dim_names.size()));
  }
  const kiln::Problem t = from_shape("topk", "5x257x16");
  CHECK(t.key() == "f32|rows=5|n=257|k=16|largest=1");
}

TEST_CASE("each op's own rules refuse invalid shapes", "[hardening][shape]") {
  const std::vector<Case> invalid = {
      {"topk", "1x10x20", "k = 20"},                 // k > n: the topk reference overflowed the heap
      {"topk", "4x1000x10x7", "largest"},            // a mode dim outside {0, 1}
      {"topk", "4x100x0", "k = 0"},                  // zero k
      {"gemm", "8x8x8x5", "allow_tf32"},             // a tf32 mode gemm does not have
      {"gemm", "8x8x8x-1", "bad extent"},            // negative
      {"histogram_range", "100x0", "bins"},          // no bins
      {"histogram_range", "100x2000000000", "2^30"},  // too many bins
      {"topk", "1x3000000000x1", "2^31"},            // indices are i32
      {"add", "0x5", "every tensor is empty"},       // nothing to compute
      {"transpose", "0x4611686018427387903", "every tensor is empty"},  // its reference looped for ever
      {"gemm", "0x0x9223372036854775807", "every tensor is empty"},
  };
  for (const Case& c : invalid) {
    INFO(c.op << " " << c.shape);
    const std::string e = shape_error(c.op, c.shape);
    CAPTURE(e);
    CHECK(contains(e, c.message));
    CHECK(contains(e, c.op));
  }
  // Extra extents are refused by the parser, as before.
  CHECK(contains(shape_error("gemm", "8x8x8x0x1x0x0x0x5"), "too many extents"));  // gemm has 8 dims
  CHECK(contains(shape_error("gemm", "8x8x8x0x1x2"), "ta"));                      // a layout mode outside {0, 1}
  CHECK(contains(shape_error("topk", "4x1000x10x1x7"), "too many extents"));
  // A dim given twice was taken from its last mention (m=1,m=2,n=3 made m=2): now refused.
  CHECK(contains(shape_error("add", "m=1,m=2,n=3"), "dim 'm' is given twice in shape 'm=1,m=2,n=3'"));
  CHECK(contains(shape_error("gemm", "64x64x64,k=8"), "dim 'k' is given twice"));
  CHECK(from_shape("add", "n=3,4").key() == "f32|m=4|n=3");  // a position fills the first dim not given
  // An empty item: the message said only "bad shape 'm=1,,n=2'"; now it says where.
  CHECK(contains(shape_error("add", "m=1,,n=2"), "bad shape 'm=1,,n=2': item 2 (at character 5) is empty"));
  CHECK(contains(shape_error("add", "4x"), "bad shape '4x': it ends with 'x'"));
  CHECK(contains(shape_error("add", ",4"), "bad shape ',4': it starts with ','"));
  CHECK(contains(shape_error("add", ""), "bad shape '': it is empty"));
  CHECK(contains(shape_error("gemm", "8xx8"), "item 2 (at character 3) is empty"));
}

// A hand-made Device no factory gives was accepted by problem_from_shape and problem_from_dims
// (Device{host, 9}); the error came later, from whatever used the problem.
TEST_CASE("problems refuse a Device made by hand that no factory gives", "[hardening][shape]") {
  const kiln::OpSchema& add = op("add");
  const kiln::Device host9{kiln::DeviceKind::host, 9};
  std::string e = error_message([&] { add.problem_from_shape(kiln::f32, "4x4", host9); });
  CHECK(contains(e, "add: argument 'device' has Device{host, ordinal 9}: the host has ordinal -1"));
  CHECK_THROWS_AS(add.problem_from_shape(kiln::f32, "4x4", host9), kiln::DeviceError);
  CHECK_THROWS_AS(add.problem_from_dims(kiln::f32, {4, 4}, host9), kiln::DeviceError);
  e = error_message([&] { add.problem_from_dims(kiln::f32, {4, 4}, kiln::Device::cuda(-2)); });
  CHECK(contains(e, "has Device{cuda, ordinal -2}: CUDA ordinals are >= 0"));
  e = error_message([&] { add.problem_from_dims(kiln::f32, {4, 4}, kiln::Device{static_cast<kiln::DeviceKind>(5), 0}); });
  CHECK(contains(e, "has Device{kind 5, ordinal 0}"));
  // The device need not exist here: a plan may name a GPU this machine lacks.
  CHECK(add.problem_from_dims(kiln::f32, {4, 4}, kiln::Device::cuda(7)).key() == "f32|m=4|n=4");
}

TEST_CASE("problem_from_dims validates like problem_from_shape", "[hardening][shape]") {
  const kiln::OpSchema& topk = op("topk");
  const kiln::Device host = kiln::Device::host();
  CHECK(topk.problem_from_dims(kiln::f32, {4, 100, 10}, host).key() == "f32|rows=4|n=100|k=10|largest=1");
  CHECK(contains(error_message([&] { topk.problem_from_dims(kiln::f32, {1, 10, 20}, host); }), "k = 20"));
  CHECK(contains(error_message([&] { topk.problem_from_dims(kiln::f32, {4, 100, -3}, host); }), "expected >= 0"));
  CHECK_THROWS_AS(topk.problem_from_dims(kiln::f64, {4, 100, 10}, host), kiln::DTypeError);
  const kiln::OpSchema& gemm = op("gemm");
  CHECK_THROWS_AS(gemm.problem_from_dims(kiln::f32, {8, 8, 8, 5}, host), kiln::ShapeError);
}

TEST_CASE("sizes that overflow int64 are refused, naming the tensor", "[hardening][shape][overflow]") {
  const std::vector<Case> overflow = {
      {"add", "3037000500x3037000500", "tensor 'a'"},       // numel past 2^63
      {"add", "9223372036854775807x2", "tensor 'a'"},
      {"reduce_sum", "4611686018427387904", "tensor 'x'"},  // numel fits, bytes do not
      {"dot", "4611686018427387904", "overflow"},
      {"gemm", "3037000500x3037000500x1", "overflow"},
      {"gemm", "1x1x9223372036854775807", "overflow"},
      {"gemv", "9223372036854775807x9223372036854775807", "overflow"},
      {"transpose", "4294967296x4294967296", "overflow"},
      {"histogram", "9223372036854775807", "2^62"},         // u8: the bytes fit, the total does not
      {"histogram_range", "4611686018427387904x16", "overflow"},
      {"topk", "3037000500x2000000000x1", "overflow"},
  };
  for (const Case& c : overflow) {
    INFO(c.op << " " << c.shape);
    const std::string e = shape_error(c.op, c.shape);
    CAPTURE(e);
    CHECK(contains(e, c.message));
    CHECK(contains(e, "not a valid problem"));
  }
  // One past int64 does not parse at all.
  CHECK(contains(shape_error("reduce_sum", "9223372036854775808"), "bad extent"));
  // A bad extent names its dim and what an extent is: "bad extent '1e9' in shape '1e9x1e9'" said
  // neither (1e9 is a number to the reader; -5 and 1.5 are refused for other reasons).
  CHECK(contains(shape_error("add", "1e9x1e9"),
                 "bad extent '1e9' for m in shape '1e9x1e9': expected a whole number written in digits, 0 to 9223372036854775807"));
  CHECK(contains(shape_error("add", "5x-5"), "bad extent '-5' for n in shape '5x-5': expected a whole number"));
  CHECK(contains(shape_error("gemm", "m=8,k=1.5,n=8"), "bad extent '1.5' for k in shape"));
}

TEST_CASE("Shape, TensorRef and Buffer check their sizes", "[hardening][overflow]") {
  const kiln::Shape big = kiln::Shape::matrix(3037000500, 3037000500);
  CHECK_THROWS_AS(big.numel(), kiln::ShapeError);
  CHECK_FALSE(big.fits(kiln::u8));
  const kiln::Shape bytes_overflow = kiln::Shape::vector(std::int64_t(1) << 62);
  CHECK(bytes_overflow.numel() == (std::int64_t(1) << 62));
  CHECK(bytes_overflow.fits(kiln::u8));
  CHECK_FALSE(bytes_overflow.fits(kiln::f32));
  CHECK_THROWS_AS(bytes_overflow.bytes(kiln::f32), kiln::ShapeError);
  CHECK(kiln::Shape::matrix(3, 5).bytes(kiln::f64) == 120);

  // Buffer::alloc used to allocate a wrapped (tiny) byte count here.
  CHECK_THROWS_AS(kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {3037000500, 3037000500}), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {std::int64_t(1) << 62}), kiln::ShapeError);
  CHECK(contains(error_message([] { kiln::Buffer::alloc(kiln::Device::host(), kiln::f64, {std::int64_t(1) << 61, 4}); }),
                 "Buffer::alloc"));
  CHECK_THROWS_AS(kiln::Buffer::alloc_pitched(kiln::Device::host(), kiln::f32, std::int64_t(1) << 40, std::int64_t(1) << 40),
                  kiln::ShapeError);

  static float one = 0.0f;
  CHECK_THROWS_AS(kiln::TensorRef::matrix(&one, kiln::f32, 3037000500, 3037000500, 3037000500, kiln::Device::host()),
                  kiln::ShapeError);
  CHECK_THROWS_AS(kiln::TensorRef::matrix(&one, kiln::f32, 4, 4, std::int64_t(1) << 62, kiln::Device::host()),
                  kiln::ShapeError);
  CHECK_THROWS_AS(kiln::TensorRef::vector(&one, kiln::f64, std::int64_t(1) << 61, kiln::Device::host()),
                  kiln::ShapeError);
  CHECK(kiln::TensorRef::matrix(&one, kiln::f32, 1, 1, 1, kiln::Device::host()).span_bytes() == 4);
}

TEST_CASE("op() names the argument whose size overflows", "[hardening][overflow]") {
  // A hand-made view (not through the checked factories) with an absurd extent.
  kiln::Registry reg;
  register_elementwise(reg).throw_if_error();
  kiln::Runtime rt(std::move(reg), kiln_test::offline_options());
  static float cell[4];
  kiln::TensorRef a;
  a.data = cell;
  a.shape = kiln::Shape::matrix(3037000500, 3037000500);
  a.row_stride = 3037000500;
  a.device = kiln::Device::host();
  const std::string e = error_message([&] { rt.op("add")({a, a, a}); });
  CAPTURE(e);
  CHECK(contains(e, "argument 'a'"));
  CHECK(contains(e, "int64"));
}

// kiln::fill_random and kiln::copy take a TensorRef, a plain struct a client may fill in field by
// field.  A view that cannot be addressed as it says (null or wild pointer, negative strides,
// extents and strides whose last element lies past the end of the address space, a pointer not
// aligned to its elements) is refused with an error naming the argument, before any byte is
// written (fill_random wrote through such views: a segfault, or undefined behaviour).
#include <kiln/kiln.hpp>

#include <cstdint>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"

using kiln_test::contains;
using kiln_test::error_message;

namespace {

kiln::TensorRef hand_made(void* data, int rank, std::int64_t rows, std::int64_t cols, std::int64_t row_stride) {
  kiln::TensorRef t;
  t.data = data;
  t.dtype = kiln::f32;
  t.shape.rank = rank;
  t.shape.dims[0] = rows;
  t.shape.dims[1] = cols;
  t.row_stride = row_stride;
  t.device = kiln::Device::host();
  return t;
}

const kiln::InputDistribution kUnit = kiln::InputDistribution::real(0.0, 1.0);

}  // namespace

TEST_CASE("fill_random refuses a view it cannot address, naming the argument") {
  std::vector<float> buf(64, 0.0f);
  auto fill = [&](const kiln::TensorRef& t) { return error_message([&] { kiln::fill_random(t, kUnit, 1); }); };

  CHECK_THROWS_AS(kiln::fill_random(hand_made(nullptr, 2, 4, 4, 4), kUnit, 1), kiln::ArgumentError);
  CHECK(fill(hand_made(nullptr, 2, 4, 4, 4)) ==
        "fill_random: argument 't' f32[4x4] on host has a null data pointer, expected memory for its elements");
  CHECK(fill(hand_made(nullptr, 1, 16, 0, 16)) ==
        "fill_random: argument 't' f32[16] on host has a null data pointer, expected memory for its elements");

  CHECK_THROWS_AS(kiln::fill_random(hand_made(buf.data() + 32, 2, 4, 4, -4), kUnit, 1), kiln::ShapeError);
  CHECK(fill(hand_made(buf.data() + 32, 2, 4, 4, -4)) ==
        "fill_random: argument 't' f32[4x4] stride -4 on host: row stride -4 must be >= 1");

  // A stride whose products overflow int64 (the loop's r * row_stride was undefined).
  CHECK_THROWS_AS(kiln::fill_random(hand_made(buf.data(), 2, 4, 4, INT64_MAX / 2), kUnit, 1), kiln::ShapeError);
  CHECK(contains(fill(hand_made(buf.data(), 2, 4, 4, INT64_MAX / 2)), "spans more bytes than fit in int64"));

  // A wild pointer whose span runs past the end of the address space.
  void* wild = reinterpret_cast<void*>(UINTPTR_MAX - 63);
  CHECK_THROWS_AS(kiln::fill_random(hand_made(wild, 2, 4, 4, 4), kUnit, 1), kiln::ShapeError);
  CHECK(contains(fill(hand_made(wild, 2, 4, 4, 4)),
                 "fill_random: argument 't' f32[4x4] on host at 18446744073709551552 spans 64 bytes, past the end of "
                 "the address space: expected extents and strides within its allocation"));

  // Element stores need an aligned pointer.
  void* odd = reinterpret_cast<char*>(buf.data()) + 1;
  CHECK_THROWS_AS(kiln::fill_random(hand_made(odd, 2, 2, 2, 2), kUnit, 1), kiln::ArgumentError);
  CHECK(contains(fill(hand_made(odd, 2, 2, 2, 2)), "is not a multiple of the 4-byte element size, expected an aligned pointer"));

  CHECK_THROWS_AS(kiln::fill_random(hand_made(buf.data(), 2, -4, 4, 4), kUnit, 1), kiln::ShapeError);
  CHECK(fill(hand_made(buf.data(), 2, -4, 4, 4)) ==
        "fill_random: argument 't' has shape [-4x4], expected extents >= 0 whose byte count fits in int64");
  CHECK(fill(hand_made(buf.data(), 0, 4, 4, 4)) == "fill_random: argument 't' must have rank 1, 2 or 3, got rank 0");

  kiln::TensorRef bad_dtype = hand_made(buf.data(), 2, 4, 4, 4);
  bad_dtype.dtype = static_cast<kiln::DType>(99);
  CHECK_THROWS_AS(kiln::fill_random(bad_dtype, kUnit, 1), kiln::DTypeError);
  CHECK(contains(fill(bad_dtype), "fill_random: argument 't' has an unknown dtype (99)"));

  kiln::TensorRef bad_device = hand_made(buf.data(), 2, 4, 4, 4);
  bad_device.device.kind = static_cast<kiln::DeviceKind>(7);
  CHECK_THROWS_AS(kiln::fill_random(bad_device, kUnit, 1), kiln::DeviceError);
  CHECK(contains(fill(bad_device), "fill_random: argument 't' is on an unknown device kind (7)"));

  for (float v : buf) REQUIRE(v == 0.0f);  // nothing was written

  // The views a factory makes still fill, and an empty one with any pointer is a no-op.
  kiln::fill_random(hand_made(buf.data(), 2, 4, 4, 8), kUnit, 1);
  CHECK(buf[0] != 0.0f);
  kiln::fill_random(hand_made(nullptr, 2, 0, 4, 4), kUnit, 1);
}

TEST_CASE("kiln::copy refuses a view whose span runs past the end of the address space") {
  std::vector<float> src(16, 1.0f);
  void* wild = reinterpret_cast<void*>(UINTPTR_MAX - 63);
  const kiln::TensorRef good = hand_made(src.data(), 2, 4, 4, 4);
  CHECK_THROWS_AS(kiln::copy(hand_made(wild, 2, 4, 4, 4), good), kiln::ShapeError);
  CHECK(contains(error_message([&] { kiln::copy(hand_made(wild, 2, 4, 4, 4), good); }),
                 "kiln::copy: the destination f32[4x4] on host at 18446744073709551552 spans 64 bytes, past the end"));
  CHECK(contains(error_message([&] { kiln::copy(good, hand_made(wild, 2, 4, 4, 4)); }), "kiln::copy: the source"));
}

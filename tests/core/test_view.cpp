// kiln::view (typed views of the caller's memory), kiln::Half / kiln::BFloat16, and
// Buffer::alloc with size_t extents.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include <kiln/kiln.hpp>

#include "catch.hpp"

TEST_CASE("view deduces the dtype from the element type", "[view]") {
  std::vector<float> f(6);
  std::vector<double> d(6);
  std::vector<kiln::Half> h(6);
  std::vector<kiln::BFloat16> b(6);
  std::vector<std::int32_t> i32(6);
  std::vector<std::uint32_t> u32(6);
  std::vector<std::uint8_t> u8(6);
  std::vector<std::int64_t> i64(6);
  CHECK(kiln::view(f).dtype == kiln::f32);
  CHECK(kiln::view(d).dtype == kiln::f64);
  CHECK(kiln::view(h).dtype == kiln::f16);
  CHECK(kiln::view(b).dtype == kiln::bf16);
  CHECK(kiln::view(i32).dtype == kiln::i32);
  CHECK(kiln::view(u32).dtype == kiln::u32);
  CHECK(kiln::view(u8).dtype == kiln::u8);
  CHECK(kiln::view(i64).dtype == kiln::i64);
  // Both 64-bit signed integer types are i64 (int64_t is `long` on Linux: a std::vector<long long>
  // did not compile, "incomplete type kiln::dtype_of<long long>").
  std::vector<long long> ll(6);
  std::vector<long> l(6);
  CHECK(kiln::view(ll).dtype == kiln::i64);
  CHECK(kiln::view(l).dtype == (sizeof(long) == 8 ? kiln::i64 : kiln::i32));
  const kiln::TensorRef v = kiln::view(f);
  CHECK(v.shape == kiln::Shape::vector(6));
  CHECK(v.device == kiln::Device::host());
  CHECK(v.data == f.data());
}

TEST_CASE("view takes const memory and any integer extents", "[view]") {
  const std::size_t rows = 3, cols = 4, ld = 5;
  const std::vector<float> input(rows * cols, 1.0f);
  const kiln::TensorRef in = kiln::view(input, rows, cols);  // no const_cast in the caller
  CHECK(in.shape == kiln::Shape::matrix(3, 4));
  CHECK(in.row_stride == 4);
  CHECK(in.data == input.data());

  std::vector<double> padded(rows * ld);
  const kiln::TensorRef p = kiln::view(padded.data(), rows, cols, ld, kiln::Device::host());
  CHECK(p.dtype == kiln::f64);
  CHECK(p.shape == kiln::Shape::matrix(3, 4));
  CHECK(p.row_stride == 5);
  const double* const_ptr = padded.data();
  const kiln::TensorRef dense = kiln::view(const_ptr, 2u, 7L, kiln::Device::host());
  CHECK(dense.shape == kiln::Shape::matrix(2, 7));
  CHECK(dense.row_stride == 7);
  const kiln::TensorRef flat = kiln::view(const_ptr, padded.size(), kiln::Device::cuda(0));
  CHECK(flat.shape == kiln::Shape::vector(15));
  CHECK(flat.device == kiln::Device::cuda(0));  // a pointer names its device; nothing is checked here
}

TEST_CASE("view refuses extents that do not describe the memory", "[view]") {
  std::vector<float> v(12);
  CHECK_THROWS_AS(kiln::view(v, 5, 3), kiln::ShapeError);   // 15 != 12
  CHECK_THROWS_WITH(kiln::view(v, 5, 3), KILN_CONTAINS("12 elements is not 5 x 3"));
  CHECK_THROWS_WITH(kiln::view(v.data(), -1, kiln::Device::host()), KILN_CONTAINS("n is negative"));
  CHECK_THROWS_WITH(kiln::view(v.data(), std::numeric_limits<std::size_t>::max(), 1, kiln::Device::host()),
                    KILN_CONTAINS("rows") && KILN_CONTAINS("does not fit in int64"));
  CHECK_THROWS_AS(kiln::view(v.data(), 3, 4, 2, kiln::Device::host()), kiln::ShapeError);  // ld < cols
  CHECK_THROWS_AS(kiln::view(static_cast<float*>(nullptr), 4, kiln::Device::host()), kiln::ArgumentError);
}

TEST_CASE("Buffer::alloc takes size_t extents", "[view][buffer]") {
  const std::size_t m = 5, k = 7;
  auto a = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {m, k});
  CHECK(a.shape() == kiln::Shape::matrix(5, 7));
  auto v = kiln::Buffer::alloc(kiln::Device::host(), kiln::f64, {std::size_t{9}});
  CHECK(v.shape() == kiln::Shape::vector(9));
  const std::size_t too_big = std::size_t{1} << 63;
  CHECK_THROWS_WITH(kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {too_big, k}),
                    KILN_CONTAINS("does not fit in int64"));
  CHECK_THROWS_AS(kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {m, k, m, k}), kiln::ShapeError);

  // Wrapping the caller's vectors and reading a result back through views.
  std::vector<float> in(m * k);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = 0.25f * static_cast<float>(i) - 3.0f;
  a.copy_from(kiln::view(in, m, k));
  std::vector<float> out(m * k, -1.0f);
  kiln::copy(kiln::view(out, m, k), a);
  CHECK(out == in);
}

TEST_CASE("Half and BFloat16 are their bit patterns, converted like half.hpp's functions", "[view][half]") {
  for (float f : {0.0f, -0.0f, 1.0f / 3.0f, 65504.0f, 1e-7f, -2.5f}) {
    CAPTURE(f);
    CHECK(kiln::Half(f).bits == kiln::float_to_f16(f));
    CHECK(static_cast<float>(kiln::Half(f)) == kiln::f16_to_float(kiln::float_to_f16(f)));
    CHECK(kiln::BFloat16(f).bits == kiln::float_to_bf16(f));
    CHECK(static_cast<float>(kiln::BFloat16(f)) == kiln::bf16_to_float(kiln::float_to_bf16(f)));
  }
  CHECK(kiln::Half::from_bits(0x3555) == kiln::Half(1.0f / 3.0f));
  CHECK(kiln::BFloat16::from_bits(0x3eab) == kiln::BFloat16(1.0f / 3.0f));
  CHECK(kiln::Half(0.0f) != kiln::Half(-0.0f));
  // A Buffer of f16 reads back as Half.
  std::vector<kiln::Half> h = {kiln::Half(1.5f), kiln::Half(-2.0f), kiln::Half(0.1f)};
  auto buf = kiln::Buffer::alloc(kiln::Device::host(), kiln::f16, {h.size()});
  buf.copy_from(kiln::view(h));
  CHECK(buf.to_host<kiln::Half>() == h);
}

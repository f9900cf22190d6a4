// kiln::view (typed views of the caller's memory), kiln::Half / kiln::BFloat16, and
// Buffer::alloc with size_t extents.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <kiln/kiln.hpp>

#include "catch.hpp"
#include "test_util.hpp"

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

namespace {
// Whether kiln::view can be called on an argument of type V (and rows, cols when With2D).
template <class V, class = void> struct can_view : std::false_type {};
template <class V> struct can_view<V, std::void_t<decltype(kiln::view(std::declval<V>()))>> : std::true_type {};
template <class V, class = void> struct can_view_2d : std::false_type {};
template <class V>
struct can_view_2d<V, std::void_t<decltype(kiln::view(std::declval<V>(), 2, 3))>> : std::true_type {};
template <class R, class = void> struct can_make_op : std::false_type {};
template <class R>
struct can_make_op<R, std::void_t<decltype(std::declval<R>().op(std::string()))>> : std::true_type {};
}  // namespace

// Views of temporaries dangle once the statement ends (a heap-use-after-free under ASan in an
// outside client's program): they do not compile.  Named objects still convert.
TEST_CASE("views of temporaries do not compile", "[view]") {
  using Vec = std::vector<float>;
  static_assert(can_view<Vec&>::value);
  static_assert(can_view<const Vec&>::value);
  static_assert(!can_view<Vec&&>::value);
  static_assert(!can_view<const Vec&&>::value);
  static_assert(can_view_2d<Vec&>::value);
  static_assert(can_view_2d<const Vec&>::value);
  static_assert(!can_view_2d<Vec&&>::value);
  static_assert(!can_view_2d<const Vec&&>::value);
  static_assert(std::is_convertible_v<kiln::Buffer&, kiln::TensorRef>);
  static_assert(std::is_convertible_v<const kiln::Buffer&, kiln::TensorRef>);
  static_assert(!std::is_convertible_v<kiln::Buffer&&, kiln::TensorRef>);
  static_assert(!std::is_convertible_v<kiln::Buffer, kiln::TensorRef>);
  static_assert(can_make_op<kiln::Runtime&>::value);
  static_assert(!can_make_op<kiln::Runtime&&>::value);
  // The named forms work as before.
  Vec v(6, 1.0f);
  const kiln::Buffer b = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {6});
  const kiln::TensorRef bv = b;
  CHECK(bv.data == b.data());
  CHECK(kiln::view(v, 2, 3).shape == kiln::Shape::matrix(2, 3));
}

// A view of const memory is an input: writing it was a SIGSEGV for a static const array (an outside
// client's program, add on the host) and a silent overwrite of a const std::vector by kiln::copy.
TEST_CASE("views of const memory are read-only: op() and copy refuse to write them", "[view]") {
  std::vector<float> x(16, 1.0f), y(16, 0.0f);
  const std::vector<float>& cy = y;
  const float* cp = y.data();
  CHECK_FALSE(kiln::view(x).read_only);
  CHECK_FALSE(kiln::view(x, 4, 4).read_only);
  CHECK_FALSE(kiln::view(x.data(), 16, kiln::Device::host()).read_only);
  CHECK(kiln::view(cy).read_only);
  CHECK(kiln::view(cy, 4, 4).read_only);
  CHECK(kiln::view(cp, 16, kiln::Device::host()).read_only);
  CHECK(kiln::view(cp, 4, 4, kiln::Device::host()).read_only);
  CHECK(kiln::view(cp, 4, 4, 4, kiln::Device::host()).read_only);
  // Derived views keep the mark.
  CHECK(kiln::view(cy, 4, 4).transposed().read_only);
  CHECK(kiln::view(cy, 4, 4).batched(1, 0).read_only);

  const std::string what = kiln_test::error_message([&] { kiln::copy(kiln::view(cy), kiln::view(x)); });
  CHECK(what.find("kiln::copy: the destination") != std::string::npos);
  CHECK(what.find("is read-only (a view of const memory)") != std::string::npos);
  CHECK_THROWS_AS(kiln::copy(kiln::view(cy), kiln::view(x)), kiln::ArgumentError);
  for (float v : y) REQUIRE(v == 0.0f);  // nothing written
  kiln::copy(kiln::view(y), kiln::view(static_cast<const std::vector<float>&>(x)));  // a read-only source is fine
  for (float v : y) REQUIRE(v == 1.0f);
}

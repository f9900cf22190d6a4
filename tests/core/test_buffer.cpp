#include <kiln/kiln.hpp>

#include <numeric>

#include "catch.hpp"

TEST_CASE("host buffers round-trip data, also when pitched") {
  auto b = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {3, 5});
  CHECK(b.row_stride() == 5);
  CHECK(b.bytes() == 60);
  std::vector<float> in(15);
  std::iota(in.begin(), in.end(), 1.0f);
  b.copy_from_host(in.data(), in.size() * 4);
  CHECK(b.to_host<float>() == in);

  auto p = kiln::Buffer::alloc_pitched(kiln::Device::host(), kiln::f32, 3, 5);
  CHECK(p.row_stride() >= 5);
  CHECK(p.pitch_bytes() % 256 == 0);
  p.fill_bytes(0xFF);
  p.copy_from_host(in.data(), in.size() * 4);
  CHECK(p.to_host<float>() == in);
  // Rows start at the pitch, not packed.
  CHECK(p.ref().as<float>()[p.row_stride()] == 6.0f);

  // Strided to dense copy through kiln::copy.
  auto d = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {3, 5});
  d.copy_from(p);
  CHECK(d.to_host<float>() == in);
}

TEST_CASE("buffers are move-only owners") {
  auto a = kiln::Buffer::alloc(kiln::Device::host(), kiln::u8, {100});
  void* ptr = a.data();
  kiln::Buffer b = std::move(a);
  CHECK(b.data() == ptr);
  CHECK(a.data() == nullptr);
  b = kiln::Buffer::alloc(kiln::Device::host(), kiln::u8, {10});
  CHECK(b.bytes() == 10);
}

TEST_CASE("buffer and view errors name what is wrong") {
  auto b = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {4});
  std::vector<float> three(3);
  REQUIRE_THROWS_AS(b.copy_from_host(three.data(), 12), kiln::ArgumentError);
  REQUIRE_THROWS_AS(b.to_host<double>(), kiln::DTypeError);
  REQUIRE_THROWS_AS(kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {-1}), kiln::ShapeError);
  REQUIRE_THROWS_AS(kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {1, 2, 3, 4}), kiln::ShapeError);
  REQUIRE_THROWS_AS(kiln::TensorRef::matrix(b.data(), kiln::f32, 2, 2, 1, kiln::Device::host()), kiln::ShapeError);
  REQUIRE_THROWS_AS(kiln::TensorRef::vector(nullptr, kiln::f32, 4, kiln::Device::host()), kiln::ArgumentError);
  auto m = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {2, 2});
  REQUIRE_THROWS_AS(kiln::copy(m.ref(), b.ref()), kiln::ShapeError);
  if (kiln::cuda_device_count() == 0)
    REQUIRE_THROWS_AS(kiln::Buffer::alloc(kiln::Device::cuda(0), kiln::f32, {4}), kiln::DeviceError);
  try {
    kiln::TensorRef::matrix(b.data(), kiln::f32, 2, 3, 2, kiln::Device::host());
    FAIL("expected ShapeError");
  } catch (const kiln::ShapeError& e) {
    CHECK(std::string(e.what()).find("row_stride 2") != std::string::npos);
  }
}

TEST_CASE("user memory is wrapped without copying") {
  std::vector<float> mine(12, 1.5f);
  auto view = kiln::TensorRef::matrix(mine.data(), kiln::f32, 3, 4, 4, kiln::Device::host());
  CHECK(view.data == mine.data());
  CHECK(view.contiguous());
  CHECK(view.span_bytes() == 48);
  auto sub = kiln::TensorRef::matrix(mine.data() + 1, kiln::f32, 3, 2, 4, kiln::Device::host());
  CHECK_FALSE(sub.contiguous());
  CHECK(sub.span_bytes() == (2 * 4 + 2) * 4);
  CHECK(sub.to_string() == "f32[3x2] stride 4 on host");
}

TEST_CASE("kiln::copy refuses a destination that overlaps the source") {
  // memcpy of overlapping rows is undefined (ASan: memcpy-param-overlap); a shifted copy would
  // also read elements it had already written.
  std::vector<float> v(8);
  std::iota(v.begin(), v.end(), 0.0f);
  const kiln::Device host = kiln::Device::host();
  const auto head = kiln::TensorRef::vector(v.data(), kiln::f32, 6, host);
  const auto tail = kiln::TensorRef::vector(v.data() + 1, kiln::f32, 6, host);
  REQUIRE_THROWS_AS(kiln::copy(tail, head), kiln::ArgumentError);
  REQUIRE_THROWS_AS(kiln::copy(head, tail), kiln::ArgumentError);
  try {
    kiln::copy(tail, head);
  } catch (const kiln::ArgumentError& e) {
    CHECK(std::string(e.what()).find("overlaps the source") != std::string::npos);
  }
  // Strided (the element-by-element path): a transpose written over its own storage.
  const auto sq = kiln::TensorRef::matrix(v.data(), kiln::f32, 2, 2, 2, host);
  REQUIRE_THROWS_AS(kiln::copy(sq.transposed(), sq), kiln::ArgumentError);
  CHECK(v == std::vector<float>({0, 1, 2, 3, 4, 5, 6, 7}));  // nothing was written
  // The very same view copies nothing; disjoint halves of one vector are fine.
  kiln::copy(head, head);
  kiln::copy(kiln::TensorRef::vector(v.data() + 4, kiln::f32, 4, host), kiln::TensorRef::vector(v.data(), kiln::f32, 4, host));
  CHECK(v == std::vector<float>({0, 1, 2, 3, 0, 1, 2, 3}));
}

// to_host<T> checked only sizeof(T): an i32 buffer read as float (or f32 as std::uint32_t) was
// reinterpreted bits without a word.
TEST_CASE("to_host refuses an element type of another dtype, naming both") {
  const kiln::Device host = kiln::Device::host();
  auto i = kiln::Buffer::alloc(host, kiln::i32, {3});
  const std::vector<std::int32_t> iv = {1, -2, 3};
  i.copy_from_host(iv.data(), iv.size() * sizeof(std::int32_t));
  CHECK(i.to_host<std::int32_t>() == iv);
  CHECK_THROWS_AS(i.to_host<float>(), kiln::DTypeError);
  CHECK_THROWS_WITH(i.to_host<float>(),
                    KILN_CONTAINS("T is the element type of f32 but the buffer holds i32 elements (4 bytes each); read it as std::int32_t"));
  CHECK_THROWS_WITH(i.to_host<std::uint32_t>(), KILN_CONTAINS("holds i32"));
  CHECK_THROWS_WITH(i.to_host<double>(), KILN_CONTAINS("T is the element type of f64"));
  CHECK_THROWS_WITH(i.to_host<std::uint8_t>(), KILN_CONTAINS("read it as std::int32_t"));

  // f16 and bf16: their own types, or std::uint16_t for the bit patterns; nothing else of 2 bytes.
  auto h = kiln::Buffer::alloc(host, kiln::f16, {2});
  auto bf = kiln::Buffer::alloc(host, kiln::bf16, {2});
  h.fill_bytes(0);
  bf.fill_bytes(0);
  CHECK(h.to_host<kiln::Half>().size() == 2);
  CHECK(h.to_host<std::uint16_t>() == std::vector<std::uint16_t>{0, 0});
  CHECK(bf.to_host<std::uint16_t>().size() == 2);
  CHECK(bf.to_host<kiln::BFloat16>().size() == 2);
  CHECK_THROWS_WITH(h.to_host<kiln::BFloat16>(), KILN_CONTAINS("T is the element type of bf16 but the buffer holds f16"));
  CHECK_THROWS_WITH(bf.to_host<kiln::Half>(), KILN_CONTAINS("holds bf16"));
  CHECK_THROWS_WITH(h.to_host<std::int16_t>(),
                    KILN_CONTAINS("T is a 2-byte number type that no kiln dtype has, and the buffer holds f16"));
  CHECK_THROWS_WITH(h.to_host<std::int16_t>(), KILN_CONTAINS("read it as kiln::Half"));
  auto bytes = kiln::Buffer::alloc(host, kiln::u8, {2});
  CHECK_THROWS_AS(bytes.to_host<char>(), kiln::DTypeError);  // u8 is std::uint8_t
  auto f = kiln::Buffer::alloc(host, kiln::f32, {2});
  CHECK_THROWS_WITH(f.to_host<std::uint16_t>(),
                    KILN_CONTAINS("std::uint16_t reads the bit patterns of f16 or bf16, but the buffer holds f32"));

  // A type kiln has no dtype for is taken for an element of its size (a CUDA __half for f16).
  struct TwoBytes {
    unsigned char b[2];
  };
  CHECK(h.to_host<TwoBytes>().size() == 2);
  CHECK_THROWS_WITH(f.to_host<TwoBytes>(), KILN_CONTAINS("T is a 2-byte type but the buffer holds f32 elements (4 bytes each)"));

  // An empty buffer reads as nothing.
  const kiln::Buffer empty;
  CHECK(empty.to_host<float>().empty());
}

TEST_CASE("a Device filled in by hand that names no device is refused where memory or a stream is made") {
  // Device{host, 3} and a kind outside DeviceKind were allocated on the host without a word, and
  // every op then refused the buffer ("argument 'a' has Device{host, ordinal 3}").
  const kiln::Device host3{kiln::DeviceKind::host, 3};
  const kiln::Device kind7{static_cast<kiln::DeviceKind>(7), 0};
  CHECK_THROWS_AS(kiln::Buffer::alloc(host3, kiln::f32, {4}), kiln::DeviceError);
  CHECK_THROWS_WITH(kiln::Buffer::alloc(host3, kiln::f32, {4}),
                    KILN_CONTAINS("Buffer::alloc: argument 'device'") && KILN_CONTAINS("ordinal -1"));
  CHECK_THROWS_WITH(kiln::Buffer::alloc(kind7, kiln::f32, {4}),
                    KILN_CONTAINS("Buffer::alloc: argument 'device'") && KILN_CONTAINS("kind 7"));
  CHECK_THROWS_WITH(kiln::Buffer::alloc_pitched(host3, kiln::f32, 2, 2), KILN_CONTAINS("Buffer::alloc_pitched: argument 'device'"));
  CHECK_THROWS_AS(kiln::Buffer::alloc_pitched(kind7, kiln::f32, 2, 2), kiln::DeviceError);
  CHECK_THROWS_WITH(kiln::OwnedStream(host3), KILN_CONTAINS("OwnedStream: argument 'device'"));
  CHECK_THROWS_AS(kiln::OwnedStream(kind7), kiln::DeviceError);
  // The devices that exist still work.
  CHECK(kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {4}).device() == kiln::Device::host());
  CHECK_NOTHROW(kiln::OwnedStream(kiln::Device::host()));
}

TEST_CASE("copying to or from an empty Buffer says it is empty") {
  // A moved-from Buffer is an empty view; copies with it said only "shape mismatch, destination []".
  auto a = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {2, 2});
  kiln::Buffer b = std::move(a);
  std::vector<float> host(4, 1.0f);
  const std::string into = [&] {
    try {
      a.copy_from(kiln::view(host, 2, 2));  // NOLINT(bugprone-use-after-move): the point of the test
    } catch (const kiln::ShapeError& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  CHECK_THAT(into, KILN_CONTAINS("destination is an empty view") && KILN_CONTAINS("moved-from Buffer") &&
                       KILN_CONTAINS("[2x2]"));
  CHECK_THROWS_WITH(kiln::copy(kiln::view(host, 2, 2), a), KILN_CONTAINS("source is an empty view"));
  // Two empty views copy nothing, as before.
  kiln::Buffer none;
  CHECK_NOTHROW(kiln::copy(none, a));
  b.copy_from(kiln::view(host, 2, 2));
  CHECK(b.to_host<float>() == host);
}

// The histogram schemas and host variants: argument validation through Runtime::op (dtype,
// shape, scalar errors name the argument), the host references on hand-made cases (every byte
// value, NaN, infinities, -0.0, values on bin edges and at hi), and what the registry holds.
#include <kiln/kiln.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"
#include "histogram_bin.hpp"
#include "register_histogram.hpp"

using kiln_test::contains;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_histogram(reg);
  REQUIRE(s.ok());
  return reg;
}

const kiln::Device host = kiln::Device::host();

template <class T>
kiln::Buffer host_buffer(kiln::DType dtype, const std::vector<T>& values) {
  kiln::Buffer b = kiln::Buffer::alloc(host, dtype, {std::int64_t(values.size())});
  b.copy_from_host(values.data(), values.size() * sizeof(T));
  return b;
}

kiln::Buffer poisoned_bins(std::int64_t n) {
  kiln::Buffer b = kiln::Buffer::alloc(host, kiln::u32, {n});
  b.fill_bytes(0xFF);
  return b;
}

// What an op call with these arguments throws, as its message ("" when it does not throw).
template <class E>
std::string message_of(kiln::Op op, const kiln::Args& args) {
  try {
    op(args);
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("histogram rejects wrong dtypes and shapes, naming the argument", "[histogram]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op op = rt.op("histogram");
  kiln::Buffer data = kiln::Buffer::alloc(host, kiln::u8, {100});
  kiln::Buffer bins = kiln::Buffer::alloc(host, kiln::u32, {256});

  SECTION("data must be u8") {
    kiln::Buffer f = kiln::Buffer::alloc(host, kiln::f32, {100});
    REQUIRE_THROWS_AS(op({f, bins}), kiln::DTypeError);
    CHECK(contains(message_of<kiln::DTypeError>(op, {f, bins}), "data"));
  }
  SECTION("bins must be u32") {
    kiln::Buffer b = kiln::Buffer::alloc(host, kiln::i32, {256});
    REQUIRE_THROWS_AS(op({data, b}), kiln::DTypeError);
    CHECK(contains(message_of<kiln::DTypeError>(op, {data, b}), "bins"));
  }
  SECTION("bins must have 256 elements") {
    for (std::int64_t n : {255, 257, 1}) {
      kiln::Buffer b = kiln::Buffer::alloc(host, kiln::u32, {n});
      REQUIRE_THROWS_AS(op({data, b}), kiln::ShapeError);
      CHECK(contains(message_of<kiln::ShapeError>(op, {data, b}), "bins"));
    }
    kiln::Buffer b2 = kiln::Buffer::alloc(host, kiln::u32, {16, 16});
    REQUIRE_THROWS_AS(op({data, b2}), kiln::ShapeError);
  }
  SECTION("data must be rank 1") {
    kiln::Buffer d2 = kiln::Buffer::alloc(host, kiln::u8, {10, 10});
    REQUIRE_THROWS_AS(op({d2, bins}), kiln::ShapeError);
    CHECK(contains(message_of<kiln::ShapeError>(op, {d2, bins}), "data"));
  }
  SECTION("two tensors") { REQUIRE_THROWS_AS(op({data}), kiln::ArgumentError); }
  SECTION("bins apart from data") {  // the bins are zeroed and counted into while data is read
    kiln::Buffer big = kiln::Buffer::alloc(host, kiln::u8, {2048});
    const auto bins_in_data = kiln::TensorRef::vector(big.data(), kiln::u32, 256, host);
    REQUIRE_THROWS_AS(op({big, bins_in_data}), kiln::ArgumentError);
    CHECK(contains(message_of<kiln::ArgumentError>(op, {big, bins_in_data}), "histogram: argument 'bins' overlaps argument 'data'"));
  }
}

TEST_CASE("histogram refuses bins off their element size, also after a call with odd data", "[histogram]") {
  // u8 data may start at any byte, so a call with odd data and aligned bins has the alignment
  // class 1; odd bins have the same class, and the bound call must still not pass them (a u32
  // counter at an odd address is a misaligned-address fault on a GPU).
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op op = rt.op("histogram");
  kiln::Buffer data = kiln::Buffer::alloc(host, kiln::u8, {101});
  data.fill_bytes(7);
  kiln::Buffer bins = kiln::Buffer::alloc(host, kiln::u8, {256 * 4 + 4});
  const auto odd_data = kiln::TensorRef::vector(static_cast<std::uint8_t*>(data.data()) + 1, kiln::u8, 100, host);
  const auto good_bins = kiln::TensorRef::vector(bins.data(), kiln::u32, 256, host);
  const auto odd_bins = kiln::TensorRef::vector(static_cast<std::uint8_t*>(bins.data()) + 1, kiln::u32, 256, host);
  op({odd_data, good_bins});
  CHECK(good_bins.as<std::uint32_t>()[7] == 100);
  REQUIRE_THROWS_AS(op({odd_data, odd_bins}), kiln::ArgumentError);
  CHECK(contains(message_of<kiln::ArgumentError>(op, {odd_data, odd_bins}),
                 "histogram: argument 'bins' has data pointer"));
  CHECK(contains(message_of<kiln::ArgumentError>(op, {odd_data, odd_bins}), "u32 elements must be aligned to their size"));
  op({odd_data, good_bins});  // the bound call is still good for aligned bins
  CHECK(good_bins.as<std::uint32_t>()[7] == 100);
}

TEST_CASE("histogram_range rejects wrong dtypes, shapes and ranges", "[histogram_range]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op op = rt.op("histogram_range");
  kiln::Buffer data = kiln::Buffer::alloc(host, kiln::f32, {100});
  kiln::Buffer bins = kiln::Buffer::alloc(host, kiln::u32, {10});

  SECTION("data must be f32, bins u32") {
    kiln::Buffer d = kiln::Buffer::alloc(host, kiln::u8, {100});
    REQUIRE_THROWS_AS(op({d, bins}), kiln::DTypeError);
    CHECK(contains(message_of<kiln::DTypeError>(op, {d, bins}), "data"));
    kiln::Buffer b = kiln::Buffer::alloc(host, kiln::f32, {10});
    REQUIRE_THROWS_AS(op({data, b}), kiln::DTypeError);
    CHECK(contains(message_of<kiln::DTypeError>(op, {data, b}), "bins"));
  }
  SECTION("both rank 1") {
    kiln::Buffer b2 = kiln::Buffer::alloc(host, kiln::u32, {2, 5});
    REQUIRE_THROWS_AS(op({data, b2}), kiln::ShapeError);
    kiln::Buffer d2 = kiln::Buffer::alloc(host, kiln::f32, {10, 10});
    REQUIRE_THROWS_AS(op({d2, bins}), kiln::ShapeError);
  }
  SECTION("lo < hi, both finite") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<std::pair<double, double>> ranges = {{1.0, 1.0}, {2.0, 1.0}, {nan, 1.0}, {0.0, inf}, {-inf, 0.0}};
    for (const auto& range : ranges) {
      const double lo = range.first, hi = range.second;
      CAPTURE(lo, hi);
      const kiln::Args args({data, bins}, {lo, hi});
      REQUIRE_THROWS_AS(op(args), kiln::ArgumentError);
      const std::string m = message_of<kiln::ArgumentError>(op, args);
      CHECK(contains(m, "lo"));
      CHECK(contains(m, "hi"));
    }
    // A range that collapses in float (1 + 1e-12 == 1 in float) is refused too.
    REQUIRE_THROWS_AS(op(kiln::Args({data, bins}, {1.0, 1.0 + 1e-12})), kiln::ArgumentError);
  }
  SECTION("lo and hi are checked as doubles, before the conversion to float") {
    // A double outside float's range converted to float is undefined behaviour: 1e300 was cast
    // first and checked after.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const struct {
      double lo, hi;
      const char* expected;
    } cases[] = {
        {1e300, 2e300,
         "histogram_range: scalar 'lo' must be a finite number within float's range (|lo| <= 3.40282e+38), got lo = "
         "1e+300, hi = 2e+300, bins = 10"},
        {-1e39, 0.0, "scalar 'lo' must be a finite number within float's range (|lo| <= 3.40282e+38), got lo = -1e+39"},
        {0.0, 1e300, "scalar 'hi' must be a finite number within float's range (|hi| <= 3.40282e+38), got lo = 0, hi = 1e+300"},
        {0.0, nan, "scalar 'hi' must be a finite number within float's range (|hi| <= 3.40282e+38), got lo = 0, hi = nan"},
        {nan, nan, "scalar 'lo' must be a finite number within float's range (|lo| <= 3.40282e+38), got lo = nan, hi = nan"},
        {0.0, 3.4028235e38, "scalar 'hi' must be a finite number within float's range"},
        {2.0, 1.0, "scalars 'lo' and 'hi' must satisfy lo < hi once converted to float, got lo = 2, hi = 1, bins = 10"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.lo, c.hi);
      const kiln::Args args({data, bins}, {c.lo, c.hi});
      REQUIRE_THROWS_AS(op(args), kiln::ArgumentError);
      CHECK(contains(message_of<kiln::ArgumentError>(op, args), c.expected));
    }
    // Bounds near float's limits still work, and FLT_MAX itself passes the range check.
    data.fill_bytes(0);
    op(kiln::Args({data, bins}, {-1e38, 1e38}));
    op(kiln::Args({data, bins}, {0.0, 3.4028234663852886e38}));
  }
}

TEST_CASE("histogram_host counts every byte value", "[histogram]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op op = rt.op("histogram");

  SECTION("hand case") {
    kiln::Buffer data = host_buffer<std::uint8_t>(kiln::u8, {0, 255, 7, 7, 7, 128});
    kiln::Buffer bins = poisoned_bins(256);
    op({data, bins});
    std::vector<std::uint32_t> expected(256, 0);
    expected[0] = 1;
    expected[255] = 1;
    expected[7] = 3;
    expected[128] = 1;
    CHECK(bins.to_host<std::uint32_t>() == expected);
  }
  SECTION("every value, and one value many times") {
    std::vector<std::uint8_t> v;
    for (int rep = 0; rep < 3; ++rep)
      for (int b = 0; b < 256; ++b) v.push_back(std::uint8_t(b));
    v.insert(v.end(), 1000, std::uint8_t(42));
    kiln::Buffer data = host_buffer(kiln::u8, v);
    kiln::Buffer bins = poisoned_bins(256);
    op({data, bins});
    std::vector<std::uint32_t> expected(256, 3);
    expected[42] += 1000;
    CHECK(bins.to_host<std::uint32_t>() == expected);
  }
  SECTION("one element") {
    kiln::Buffer data = host_buffer<std::uint8_t>(kiln::u8, {200});
    kiln::Buffer bins = poisoned_bins(256);
    op({data, bins});
    const auto got = bins.to_host<std::uint32_t>();
    for (int b = 0; b < 256; ++b) CHECK(got[b] == (b == 200 ? 1u : 0u));
  }
}

TEST_CASE("histogram_range_host follows the float bin formula of the contract", "[histogram_range]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op op = rt.op("histogram_range");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();

  SECTION("defaults lo = 0, hi = 1: edges, hi excluded, NaN and infinities ignored, -0.0 counted") {
    const float below_one = std::nextafter(1.0f, 0.0f);
    kiln::Buffer data = host_buffer<float>(
        kiln::f32, {0.0f, 0.24999f, 0.25f, 0.5f, below_one, 1.0f, -0.0f, -1e-7f, nan, -nan, inf, -inf, 0.75f, 2.0f});
    kiln::Buffer bins = poisoned_bins(4);
    op({data, bins});
    CHECK(bins.to_host<std::uint32_t>() == std::vector<std::uint32_t>{3, 1, 1, 2});
  }
  SECTION("scalars lo and hi") {
    kiln::Buffer data = host_buffer<float>(kiln::f32, {-2.0f, -1.5f, 0.0f, 2.999f, 3.0f, -2.0001f, 1.0f});
    kiln::Buffer bins = poisoned_bins(5);
    op(kiln::Args({data, bins}, {-2.0, 3.0}));
    CHECK(bins.to_host<std::uint32_t>() == std::vector<std::uint32_t>{2, 0, 1, 1, 1});
  }
  SECTION("the value just below hi lands in the last bin, whatever the rounding") {
    for (float hi : {0.3f, 0.7f, 1.1f, 3.3f, 1000.1f}) {
      for (int nb : {1, 3, 7, 10, 4096}) {
        CAPTURE(hi, nb);
        kiln::Buffer data = host_buffer<float>(kiln::f32, {std::nextafter(hi, 0.0f)});
        kiln::Buffer bins = poisoned_bins(nb);
        op(kiln::Args({data, bins}, {0.0, double(hi)}));
        const auto got = bins.to_host<std::uint32_t>();
        CHECK(got[nb - 1] == 1u);
      }
    }
  }
  SECTION("random data against the formula written out here") {
    const int nb = 37;
    const double lo = -0.3, hi = 0.9;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<float> u(-0.5f, 1.1f);
    std::vector<float> v(100003);
    for (float& x : v) x = u(rng);
    v[5] = nan;
    v[6] = float(lo);
    v[7] = float(hi);
    kiln::Buffer data = host_buffer(kiln::f32, v);
    kiln::Buffer bins = poisoned_bins(nb);
    op(kiln::Args({data, bins}, {lo, hi}));
    const float lo_f = float(lo), hi_f = float(hi);
    const float scale = float(nb) / (hi_f - lo_f);
    std::vector<std::uint32_t> expected(nb, 0);
    for (float x : v) {
      if (!(x >= lo_f && x < hi_f)) continue;
      int b = int(std::floor((x - lo_f) * scale));
      if (b > nb - 1) b = nb - 1;
      ++expected[b];
    }
    CHECK(bins.to_host<std::uint32_t>() == expected);
  }
}

TEST_CASE("histogram schemas describe their problems", "[histogram]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& h = reg.op("histogram");
  const kiln::OpSchema& r = reg.op("histogram_range");
  const kiln::Problem p = h.problem_from_dims(kiln::u8, {1000}, host);
  CHECK(p.dim("n") == 1000);
  CHECK(h.work(p) == 1000.0);
  CHECK(h.tolerance_for(p) == 0.0);
  std::vector<kiln::TensorSpec> specs;
  REQUIRE(h.tensor_specs(p, specs).ok());
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].dtype == kiln::u8);
  CHECK(specs[1].shape == kiln::Shape::vector(256));
  CHECK(specs[1].dtype == kiln::u32);

  const kiln::Problem q = r.problem_from_dims(kiln::f32, {1000, 64}, host);
  CHECK(q.dim("bins") == 64);
  CHECK(r.work(q) == 4000.0);
  REQUIRE(r.tensor_specs(q, specs).ok());
  CHECK(specs[1].shape == kiln::Shape::vector(64));

  // The fill puts some values outside [0, 1).
  kiln::Buffer x = kiln::Buffer::alloc(host, kiln::f32, {10000});
  REQUIRE(r.fill_input);
  r.fill_input(q, 0, x.ref(), 3);
  int below = 0, above = 0;
  for (float v : x.to_host<float>()) {
    CHECK(v >= -0.1f);
    CHECK(v < 1.1f);
    below += v < 0.0f;
    above += v >= 1.0f;
  }
  CHECK(below > 0);
  CHECK(above > 0);
}

TEST_CASE("register_histogram adds both ops and their variants", "[histogram]") {
  kiln::Registry reg = make_registry();
  CHECK(reg.find_op("histogram") != nullptr);
  CHECK(reg.find_op("histogram_range") != nullptr);
  for (const char* name : {"histogram_host", "histogram_range_host"}) {
    const kiln::Variant* v = reg.find_variant(name);
    REQUIRE(v != nullptr);
    CHECK(v->desc().reference);
    CHECK(v->device_kind() == kiln::DeviceKind::host);
    CHECK(v->priority() == 0);
    CHECK(v->space().empty());
  }
#if KILN_HAS_CUDA
  for (const char* name : {"histogram_global_atomic", "histogram_smem", "histogram_warp_private", "histogram_thread_private",
                           "histogram_spill", "histogram_range_global_atomic", "histogram_range_smem",
                           "histogram_range_warp_private", "histogram_range_thread_private", "histogram_range_spill"}) {
    CAPTURE(name);
    const kiln::Variant* v = reg.find_variant(name);
    REQUIRE(v != nullptr);
    CHECK(v->device_kind() == kiln::DeviceKind::cuda);
    // Every default lies in the space.
    kiln::DeviceInfo d;
    CHECK(v->space().contains(v->default_config(d)));
  }
  // The fastest measured (1.09x CUB on 1 GiB of uniform bytes, H100) ranks first, above the
  // vendor plugin's 35; spill next (faster only on long runs and small float inputs).
  CHECK(reg.variants("histogram").front()->name() == "histogram_thread_private");
  CHECK(reg.variants("histogram_range").front()->name() == "histogram_range_thread_private");
  CHECK(reg.variants("histogram")[1]->name() == "histogram_spill");
#endif
  // A second registration is refused, not thrown.
  CHECK(!register_histogram(reg).ok());
}

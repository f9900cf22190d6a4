// The `add` schema and host variant, through kiln::Runtime::op with host buffers; the variant
// list and parameter spaces.  No GPU needed.
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "add_params.hpp"
#include "catch.hpp"
#include "test_util.hpp"
#include "register_elementwise.hpp"

using kiln_test::error_message;
using kiln_test::contains;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_elementwise(reg);
  REQUIRE(s.ok());
  return reg;
}

template <class T>
void fill_random(const kiln::TensorRef& t, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (std::int64_t r = 0; r < t.rows(); ++r) {
    T* row = t.as<T>() + r * t.row_stride;
    for (std::int64_t j = 0; j < t.cols(); ++j) {
      if constexpr (std::is_integral_v<T>)
        row[j] = static_cast<T>(std::uniform_int_distribution<int>(-1000000, 1000000)(rng));
      else
        row[j] = static_cast<T>(std::uniform_real_distribution<double>(-1.0, 1.0)(rng));
    }
  }
}

// Counts elements of c that differ from a + b (bitwise for floats: the sum is exact).
template <class T>
std::int64_t count_wrong(const kiln::TensorRef& a, const kiln::TensorRef& b, const kiln::TensorRef& c) {
  std::int64_t wrong = 0;
  for (std::int64_t r = 0; r < c.rows(); ++r)
    for (std::int64_t j = 0; j < c.cols(); ++j) {
      const T want = static_cast<T>(a.as<T>()[r * a.row_stride + j] + b.as<T>()[r * b.row_stride + j]);
      const T got = c.as<T>()[r * c.row_stride + j];
      if (std::memcmp(&want, &got, sizeof(T)) != 0) ++wrong;
    }
  return wrong;
}

// Bytes of a rank-2 view's row padding (between cols and row_stride) that are not `byte`.
std::int64_t padding_changed(const kiln::TensorRef& t, unsigned char byte) {
  const std::size_t es = kiln::dtype_size(t.dtype);
  std::int64_t changed = 0;
  for (std::int64_t r = 0; r < t.rows(); ++r) {
    const auto* row = static_cast<const unsigned char*>(t.data) + r * t.row_stride * es;
    for (std::size_t k = t.cols() * es; k < static_cast<std::size_t>(t.row_stride) * es; ++k)
      if (row[k] != byte) ++changed;
  }
  return changed;
}

template <class T>
void check_host_add(kiln::Runtime& rt, kiln::DType dtype, std::int64_t m, std::int64_t n, bool pitched) {
  INFO(std::string(kiln::dtype_name(dtype)) << " " << m << "x" << n << (pitched ? " pitched" : " dense"));
  const kiln::Device host = kiln::Device::host();
  auto make = [&](bool p) { return p ? kiln::Buffer::alloc_pitched(host, dtype, m, n) : kiln::Buffer::alloc(host, dtype, {m, n}); };
  kiln::Buffer a = make(false), b = make(pitched), c = make(pitched);
  fill_random<T>(a.ref(), 1 + m * 7 + n);
  fill_random<T>(b.ref(), 2 + m * 7 + n);
  c.fill_bytes(0xFF);  // poison: NaN for floats, -1 for i32
  rt.op("add")({a, b, c});
  CHECK(count_wrong<T>(a.ref(), b.ref(), c.ref()) == 0);
  if (pitched) {
    CHECK(c.row_stride() > n);
    CHECK(padding_changed(c.ref(), 0xFF) == 0);  // nothing written past the columns
  }
}

}  // namespace

TEST_CASE("add rejects bad arguments with the matching error", "[add][schema]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op add = rt.op("add");
  const kiln::Device host = kiln::Device::host();
  kiln::Buffer a = kiln::Buffer::alloc(host, kiln::f32, {3, 5});
  kiln::Buffer b = kiln::Buffer::alloc(host, kiln::f32, {3, 5});
  kiln::Buffer c = kiln::Buffer::alloc(host, kiln::f32, {3, 5});

  SECTION("shape mismatch") {
    kiln::Buffer narrow = kiln::Buffer::alloc(host, kiln::f32, {3, 4});
    kiln::Buffer flat = kiln::Buffer::alloc(host, kiln::f32, {15});
    REQUIRE_THROWS_AS(add({a, narrow, c}), kiln::ShapeError);
    REQUIRE_THROWS_AS(add({a, b, narrow}), kiln::ShapeError);
    REQUIRE_THROWS_AS(add({a, b, flat}), kiln::ShapeError);  // same numel, other rank
    const std::string msg = error_message([&] { add({a, narrow, c}); });
    CHECK(contains(msg, "b has shape [3x4]"));
    CHECK(contains(msg, "expected [3x5]"));
  }
  SECTION("dtype mismatch") {
    kiln::Buffer wide = kiln::Buffer::alloc(host, kiln::f64, {3, 5});
    REQUIRE_THROWS_AS(add({a, b, wide}), kiln::DTypeError);
    REQUIRE_THROWS_AS(add({wide, b, c}), kiln::DTypeError);
    const std::string msg = error_message([&] { add({a, b, wide}); });
    CHECK(contains(msg, "c has dtype f64"));
    CHECK(contains(msg, "expected f32"));
    kiln::Buffer bytes = kiln::Buffer::alloc(host, kiln::u8, {3, 5});
    REQUIRE_THROWS_AS(add({bytes, bytes, bytes}), kiln::DTypeError);  // not an add dtype at all
    CHECK(contains(error_message([&] { add({bytes, bytes, bytes}); }), "a has dtype u8"));
    // Mixed half types: named, with the dtype expected.
    kiln::Buffer half = kiln::Buffer::alloc(host, kiln::f16, {3, 5});
    kiln::Buffer brain = kiln::Buffer::alloc(host, kiln::bf16, {3, 5});
    REQUIRE_THROWS_AS(add({half, brain, half}), kiln::DTypeError);
    const std::string mixed = error_message([&] { add({half, brain, half}); });
    CHECK(contains(mixed, "b has dtype bf16"));
    CHECK(contains(mixed, "expected f16"));
  }
  SECTION("null pointer") {
    kiln::TensorRef null_b = b.ref();
    null_b.data = nullptr;
    REQUIRE_THROWS_AS(add({a, null_b, c}), kiln::ArgumentError);
  }
  SECTION("a pointer off its element size") {
    // An f32 view one byte into a buffer: undefined on the host, a misaligned-address fault on a
    // GPU; the core refuses it for every op, naming the argument.
    kiln::Buffer bytes = kiln::Buffer::alloc(host, kiln::u8, {64});
    for (int offset : {1, 2, 3}) {
      const auto odd = kiln::TensorRef::vector(static_cast<std::uint8_t*>(bytes.data()) + offset, kiln::f32, 4, host);
      kiln::Buffer v = kiln::Buffer::alloc(host, kiln::f32, {4});
      kiln::Buffer w = kiln::Buffer::alloc(host, kiln::f32, {4});
      REQUIRE_THROWS_AS(add({v, odd, w}), kiln::ArgumentError);
      CHECK(contains(error_message([&] { add({v, odd, w}); }), "add: argument 'b' has data pointer"));
      CHECK(contains(error_message([&] { add({v, w, odd}); }), "not a multiple of 4 bytes"));
    }
    const auto empty = kiln::TensorRef::vector(static_cast<std::uint8_t*>(bytes.data()) + 1, kiln::f32, 0, host);
    add({empty, empty, empty});  // nothing to read: any pointer will do
  }
  SECTION("tensors on different devices") {
    // Never dereferenced: validation refuses the call first.
    kiln::TensorRef elsewhere = c.ref();
    elsewhere.device = kiln::Device::cuda(0);
    REQUIRE_THROWS_AS(add({a, b, elsewhere}), kiln::DeviceError);
  }
  SECTION("wrong tensor count") {
    REQUIRE_THROWS_AS(add({a, b}), kiln::ArgumentError);
    REQUIRE_THROWS_AS(add({a, b, c, c}), kiln::ArgumentError);
  }
  SECTION("good arguments give the problem") {
    const kiln::Problem p = add.problem({a, b, c});
    CHECK(p.key() == "f32|m=3|n=5");
    kiln::Buffer v = kiln::Buffer::alloc(host, kiln::f32, {7});
    CHECK(add.problem({v, v, v}).key() == "f32|m=1|n=7");  // rank 1 is one row
  }
}

TEST_CASE("add_host computes c = a + b exactly on host tensors", "[add][host]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  SECTION("f32, f64 and i32, dense and pitched") {
    const std::int64_t shapes[][2] = {{1, 1}, {1, 7}, {3, 5}, {37, 129}, {257, 1023}};
    for (const auto& s : shapes) {
      for (bool pitched : {false, true}) {
        check_host_add<float>(rt, kiln::f32, s[0], s[1], pitched);
        check_host_add<double>(rt, kiln::f64, s[0], s[1], pitched);
        check_host_add<std::int32_t>(rt, kiln::i32, s[0], s[1], pitched);
      }
    }
  }

  SECTION("rank 1") {
    const std::int64_t n = 1000003;
    const kiln::Device host = kiln::Device::host();
    kiln::Buffer a = kiln::Buffer::alloc(host, kiln::f32, {n});
    kiln::Buffer b = kiln::Buffer::alloc(host, kiln::f32, {n});
    kiln::Buffer c = kiln::Buffer::alloc(host, kiln::f32, {n});
    fill_random<float>(a.ref(), 11);
    fill_random<float>(b.ref(), 12);
    c.fill_bytes(0xFF);
    rt.op("add")({a, b, c});
    CHECK(count_wrong<float>(a.ref(), b.ref(), c.ref()) == 0);
  }
  SECTION("a strided view of memory the caller owns") {
    // A 37x129 window with row stride 131 inside a larger array; the gaps must stay untouched.
    const std::int64_t m = 37, n = 129, ld = 131;
    std::vector<float> a_mem(m * ld), b_mem(m * ld), c_mem(m * ld);
    const kiln::Device host = kiln::Device::host();
    auto a = kiln::TensorRef::matrix(a_mem.data(), kiln::f32, m, n, ld, host);
    auto b = kiln::TensorRef::matrix(b_mem.data(), kiln::f32, m, n, ld, host);
    auto c = kiln::TensorRef::matrix(c_mem.data(), kiln::f32, m, n, ld, host);
    fill_random<float>(a, 21);
    fill_random<float>(b, 22);
    std::memset(c_mem.data(), 0xFF, c_mem.size() * sizeof(float));
    rt.op("add")({a, b, c});
    CHECK(count_wrong<float>(a, b, c) == 0);
    CHECK(padding_changed(c, 0xFF) == 0);
  }
  SECTION("in place: c is a") {
    const kiln::Device host = kiln::Device::host();
    kiln::Buffer a = kiln::Buffer::alloc(host, kiln::f32, {5, 9});
    kiln::Buffer b = kiln::Buffer::alloc(host, kiln::f32, {5, 9});
    fill_random<float>(a.ref(), 31);
    fill_random<float>(b.ref(), 32);
    const std::vector<float> a0 = a.to_host<float>(), b0 = b.to_host<float>();
    rt.op("add")({a, b, a});
    const std::vector<float> got = a.to_host<float>();
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) wrong += got[i] != a0[i] + b0[i];
    CHECK(wrong == 0);
  }
  SECTION("c may be a exactly, but no shifted view of it (that read elements already written)") {
    const kiln::Device host = kiln::Device::host();
    std::vector<float> mem(6 * 8, 1.0f), b(5 * 8, 1.0f);
    const auto a = kiln::TensorRef::matrix(mem.data(), kiln::f32, 5, 8, 8, host);
    const auto shifted = kiln::TensorRef::matrix(mem.data() + 8, kiln::f32, 5, 8, 8, host);  // a's rows 1..5
    const auto bv = kiln::TensorRef::matrix(b.data(), kiln::f32, 5, 8, 8, host);
    CHECK(contains(error_message([&] { rt.op("add")({a, bv, shifted}); }), "add: argument 'c' overlaps argument 'a' in memory"));
    CHECK_THROWS_AS(rt.op("add")({bv, a, shifted}), kiln::ArgumentError);
    for (float v : mem) REQUIRE(v == 1.0f);  // refused before anything ran
    // The same layout with apart buffers first: the Op binds it, and the bound (hot) path must
    // still look at the pointers of the next call.
    kiln::Op add = rt.op("add");
    std::vector<float> apart(5 * 8, 0.0f);
    add({a, bv, kiln::TensorRef::matrix(apart.data(), kiln::f32, 5, 8, 8, host)});
    add({a, bv, kiln::TensorRef::matrix(apart.data(), kiln::f32, 5, 8, 8, host)});
    CHECK(apart[0] == 2.0f);
    CHECK(contains(error_message([&] { add({a, bv, shifted}); }), "add: argument 'c' overlaps argument 'a' in memory"));
    for (float v : mem) REQUIRE(v == 1.0f);
    add({a, bv, a});  // the very same view: in place, allowed
    CHECK(mem[0] == 2.0f);
  }
  SECTION("f16 and bf16: added in fp32, rounded once to nearest even") {
    const kiln::Device host = kiln::Device::host();
    // Ties: 1 + half an ulp stays 1 (even); (1 + 1 ulp) + half an ulp goes up to 1 + 2 ulps.
    struct Case {
      kiln::DType dtype;
      std::uint16_t a[3], b[3], want[3];
    };
    const Case cases[] = {
        {kiln::f16, {0x3C00, 0x3C01, 0xC000}, {0x1000, 0x1000, 0x3C00}, {0x3C00, 0x3C02, 0xBC00}},
        {kiln::bf16, {0x3F80, 0x3F81, 0xC000}, {0x3B80, 0x3B80, 0x3F80}, {0x3F80, 0x3F82, 0xBF80}}};
    for (const Case& t : cases) {
      INFO(kiln::dtype_name(t.dtype));
      kiln::Buffer a = kiln::Buffer::alloc(host, t.dtype, {3});
      kiln::Buffer b = kiln::Buffer::alloc(host, t.dtype, {3});
      kiln::Buffer c = kiln::Buffer::alloc(host, t.dtype, {3});
      a.copy_from_host(t.a, sizeof t.a);
      b.copy_from_host(t.b, sizeof t.b);
      c.fill_bytes(0xFF);
      rt.op("add")({a, b, c});
      const std::vector<std::uint16_t> got = c.to_host<std::uint16_t>();
      CHECK(got == std::vector<std::uint16_t>(t.want, t.want + 3));
    }
    // A pitched 37 x 129 bf16 view against float sums rounded with kiln/half.hpp.
    const std::int64_t m = 37, n = 129, ld = 136;
    std::vector<std::uint16_t> am(m * ld), bm(m * ld), cm(m * ld, 0xFFFF);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    for (std::size_t i = 0; i < am.size(); ++i) {
      am[i] = kiln::float_to_bf16(u(rng));
      bm[i] = kiln::float_to_bf16(u(rng));
    }
    auto av = kiln::TensorRef::matrix(am.data(), kiln::bf16, m, n, ld, host);
    auto bv = kiln::TensorRef::matrix(bm.data(), kiln::bf16, m, n, ld, host);
    auto cv = kiln::TensorRef::matrix(cm.data(), kiln::bf16, m, n, ld, host);
    rt.op("add")({av, bv, cv});
    std::int64_t wrong = 0, gaps = 0;
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t j = 0; j < ld; ++j) {
        const std::size_t i = static_cast<std::size_t>(r * ld + j);
        if (j < n)
          wrong += cm[i] != kiln::float_to_bf16(kiln::bf16_to_float(am[i]) + kiln::bf16_to_float(bm[i]));
        else
          gaps += cm[i] != 0xFFFF;
      }
    CHECK(wrong == 0);
    CHECK(gaps == 0);
  }
  SECTION("empty tensors are a no-op") {
    const kiln::Device host = kiln::Device::host();
    kiln::Buffer e = kiln::Buffer::alloc(host, kiln::f32, {0, 4});
    rt.op("add")({e, e, e});
  }
}

TEST_CASE("elementwise registers the add schema and its variants", "[add][registry]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& s = reg.op("add");
  REQUIRE(s.tensors.size() == 3);
  CHECK(s.tensors[0].name == "a");
  CHECK(s.tensors[1].name == "b");
  CHECK(s.tensors[2].name == "c");
  CHECK(s.tensors[2].role == kiln::Role::output);
  CHECK(s.dim_names == std::vector<std::string>{"m", "n"});
  CHECK(s.work_unit == kiln::WorkUnit::byte);

  const kiln::Problem p = s.problem_from_dims(kiln::f32, {3, 5}, kiln::Device::host());
  CHECK(s.work(p) == 3.0 * 3 * 5 * 4);
  CHECK(s.tolerance_for(p) == 1e-7);
  CHECK(s.tolerance_for(s.problem_from_dims(kiln::i32, {3, 5}, kiln::Device::host())) == 0.0);
  CHECK(s.tolerance_for(s.problem_from_dims(kiln::bf16, {3, 5}, kiln::Device::host())) == 1.0 / 256);
  CHECK(s.work(s.problem_from_dims(kiln::f16, {3, 5}, kiln::Device::host())) == 3.0 * 3 * 5 * 2);
  std::vector<kiln::TensorSpec> specs;
  REQUIRE(s.tensor_specs(p, specs).ok());
  REQUIRE(specs.size() == 3);
  for (const kiln::TensorSpec& t : specs) {
    CHECK(t.dtype == kiln::f32);
    CHECK(t.shape == kiln::Shape::matrix(3, 5));
  }

  std::vector<std::string> names;
  for (const kiln::Variant* v : reg.variants("add")) names.push_back(v->name());
#if KILN_HAS_CUDA
  CHECK(names == std::vector<std::string>{"add_streaming", "add_vectorized", "add_grid_stride", "add_2d", "add_host"});
#else
  CHECK(names == std::vector<std::string>{"add_host"});
#endif
  const kiln::Variant* host = reg.find_variant("add_host");
  REQUIRE(host != nullptr);
  CHECK(host->desc().reference);
  CHECK(host->device_kind() == kiln::DeviceKind::host);
  CHECK(host->priority() == 0);
  CHECK(host->space().empty());

  // A second registration clashes; it reports a Status instead of throwing.
  CHECK(!register_elementwise(reg).ok());
}

TEST_CASE("add parameter spaces enumerate the expected configs", "[add][params]") {
  namespace ew = kiln::elementwise;
  kiln::DeviceInfo dev;  // hand-made: no GPU needed
  dev.device = kiln::Device::cuda(0);
  dev.name = "Test GPU";
  dev.cc_major = 9;
  dev.sm_count = 132;
  dev.max_threads_per_block = 1024;
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& s = reg.op("add");
  kiln::Problem p = s.problem_from_dims(kiln::f32, {4096, 4096}, kiln::Device::cuda(0));
  p.align_bytes = 16;

  int by_hand_2d = 0;
  for (int bx : {16, 32, 64, 128})
    for (int by : {1, 2, 4, 8, 16}) by_hand_2d += (bx * by >= 64 && bx * by <= 1024);
  CHECK(by_hand_2d == 16);
  CHECK(ew::add_2d_space().count_valid(dev, p) == static_cast<std::uint64_t>(by_hand_2d));
  CHECK(ew::add_2d_space().count() == 20);
  CHECK(ew::add_grid_stride_space().count_valid(dev, p) == 4 * 6);
  CHECK(ew::add_vectorized_space().count_valid(dev, p) == 3 * 4 * 5);
  CHECK(ew::add_2d_space().violated(kiln::Config{{"block_x", 16}, {"block_y", 2}}, dev, p).has_value());

  // Defaults lie in their spaces.
  CHECK(!ew::add_grid_stride_space().violated(ew::add_grid_stride_default(dev), dev, p).has_value());
  CHECK(!ew::add_2d_space().violated(ew::add_2d_default(dev), dev, p).has_value());
  CHECK(!ew::add_vectorized_space().violated(ew::add_vectorized_default(dev), dev, p).has_value());

  // The vectorised variant needs f32 and 16-byte alignment.
  CHECK(ew::add_vectorized_supports(p).ok);
  kiln::Problem misaligned = p;
  misaligned.align_bytes = 4;
  const kiln::Support no = ew::add_vectorized_supports(misaligned);
  CHECK(!no.ok);
  CHECK(contains(no.reason, "16-byte"));
  CHECK(!ew::add_vectorized_supports(s.problem_from_dims(kiln::f64, {4096, 4096}, kiln::Device::cuda(0))).ok);

  // add_streaming: 3 blocks x 4 items x 3 hints x 5 blocks_per_sm; f32 at any 4-byte alignment,
  // f16 and bf16 at any 2-byte one.
  CHECK(ew::add_streaming_space().count_valid(dev, p) == 3 * 4 * 3 * 5);
  CHECK(!ew::add_streaming_space().violated(ew::add_streaming_default(dev), dev, p).has_value());
  CHECK(ew::add_streaming_supports(misaligned).ok);
  CHECK(!ew::add_streaming_supports(s.problem_from_dims(kiln::i32, {4096, 4096}, kiln::Device::cuda(0))).ok);
  kiln::Problem bf16_2 = s.problem_from_dims(kiln::bf16, {4095, 4097}, kiln::Device::cuda(0));
  bf16_2.align_bytes = 2;
  CHECK(ew::add_streaming_supports(bf16_2).ok);
  kiln::Problem f32_2 = p;
  f32_2.align_bytes = 2;
  CHECK(!ew::add_streaming_supports(f32_2).ok);
  for (const kiln::Config& c : ew::add_streaming_space().enumerate(dev, p)) {
    ew::StreamingConfig sc;
    CHECK(ew::add_streaming_config_from(c, sc).ok());  // every config of the space is instantiated
  }
  ew::StreamingConfig bad;
  const kiln::Status not_instantiated =
      ew::add_streaming_config_from(kiln::Config{{"block", 256}, {"items", 3}, {"streaming", 0}, {"blocks_per_sm", 8}}, bad);
  CHECK(!not_instantiated.ok());
  CHECK(contains(not_instantiated.message(), "items=3"));

#if KILN_HAS_CUDA
  // The registered variants carry these spaces and checks.
  const kiln::Variant* v2d = reg.find_variant("add_2d");
  const kiln::Variant* vec = reg.find_variant("add_vectorized");
  const kiln::Variant* gs = reg.find_variant("add_grid_stride");
  REQUIRE(v2d != nullptr);
  REQUIRE(vec != nullptr);
  REQUIRE(gs != nullptr);
  CHECK(v2d->space().enumerate(dev, p).size() == 16);
  CHECK(gs->space().count_valid(dev, p) == 24);
  CHECK(vec->space().count_valid(dev, p) == 60);
  CHECK(vec->priority() > gs->priority());
  const kiln::Variant* st = reg.find_variant("add_streaming");
  REQUIRE(st != nullptr);
  CHECK(st->priority() > vec->priority());
  CHECK(st->supports(misaligned, dev, st->default_config(dev)).ok);
  CHECK(gs->priority() > v2d->priority());
  CHECK(vec->supports(p, dev, vec->default_config(dev)).ok);
  CHECK(!vec->supports(misaligned, dev, vec->default_config(dev)).ok);
  CHECK(vec->dtypes() == std::vector<kiln::DType>{kiln::f32});
#endif
}

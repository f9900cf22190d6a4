// Every CUDA `add` variant and every config of its space against the host reference
// (kiln::ProblemData: fresh random inputs, poisoned outputs), dense and pitched, in f32, f64,
// i32, f16 and bf16; the vectorised variant's refusal of misaligned views; add_streaming on
// misaligned f32 and half views; op("add") on device buffers end to end.
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "quick.hpp"
#include "test_util.hpp"
#include "register_elementwise.hpp"

using kiln_test::contains;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_elementwise(reg);
  REQUIRE(s.ok());
  return reg;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Elements of got that differ from a + b (all dense, row-major).
template <class T>
std::int64_t count_wrong(const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>& got) {
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) wrong += !(got[i] == static_cast<T>(a[i] + b[i]));
  return wrong;
}

const std::int64_t kShapes[][2] = {{1, 1}, {1, 7}, {3, 5}, {37, 129}, {257, 1023}, {1000, 1000}, {1, 1000003}};

}  // namespace

TEST_CASE("every CUDA add variant and config matches the host reference", "[add][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("add");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Stream stream;  // the legacy stream: ordered after ProblemData's copies and memsets

  std::vector<const kiln::Variant*> cuda_variants;
  for (const kiln::Variant* v : rt.registry().variants("add"))
    if (v->device_kind() == kiln::DeviceKind::cuda) cuda_variants.push_back(v);
  REQUIRE(cuda_variants.size() == 4);

  std::int64_t vectorized_runs = 0;
  std::uint64_t seed = 1;
  for (kiln::DType dtype : {kiln::f32, kiln::f64, kiln::i32, kiln::f16, kiln::bf16}) {
    for (const auto& shape : kShapes) {
      for (bool pitched : {false, true}) {
        const kiln::Problem wanted = schema.problem_from_dims(dtype, {shape[0], shape[1]}, gpu);
        kiln::ProblemData data(schema, wanted, gpu, seed++, {pitched, true});
        const kiln::Problem& p = data.problem();
        for (const kiln::Variant* v : cuda_variants) {
          bool has_dtype = false;
          for (kiln::DType t : v->dtypes()) has_dtype = has_dtype || t == dtype;
          if (!has_dtype) continue;
          const std::vector<kiln::Config> configs = v->space().enumerate(dev, p);
          REQUIRE(configs.size() == v->space().count_valid(dev, p));
          REQUIRE(!configs.empty());
          for (const kiln::Config& config : configs) {
            INFO(v->name() << " " << config.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense")
                           << " align " << p.align_bytes);
            const kiln::Support s = v->supports(p, dev, config);
            if (!s.ok) {
              // Only the vectorised variant refuses anything, and only for alignment.
              CHECK(v->name() == "add_vectorized");
              CHECK(p.align_bytes < 16);
              continue;
            }
            if (v->name() == "add_vectorized") ++vectorized_runs;
            data.poison_outputs();
            const kiln::Status st = v->launch(data.device_args(), p, config, nullptr, stream);
            REQUIRE(st.ok());
            stream.synchronize();
            const double err = data.error();
            CHECK(err <= data.tolerance());
            // Halves are added in fp32 and rounded once, exactly as the reference does.
            if (dtype == kiln::f16 || dtype == kiln::bf16) CHECK(err == 0.0);
          }
        }
      }
    }
  }
  // Pitched rows (cudaMallocPitch) are always 16-byte aligned, so the vectorised variant ran.
  CHECK(vectorized_runs >= 60 * 7);
}

TEST_CASE("add_vectorized refuses views that are not 16-byte aligned", "[add][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* vec = rt.registry().find_variant("add_vectorized");
  REQUIRE(vec != nullptr);
  kiln::Op add = rt.op("add");

  const std::int64_t n = 1000;  // a multiple of 4: only the offset misaligns
  kiln::Buffer a = kiln::Buffer::alloc(gpu, kiln::f32, {n + 4});
  kiln::Buffer b = kiln::Buffer::alloc(gpu, kiln::f32, {n + 4});
  kiln::Buffer c = kiln::Buffer::alloc(gpu, kiln::f32, {n + 4});

  auto view = [&](const kiln::Buffer& buf, std::int64_t offset) {
    return kiln::TensorRef::vector(static_cast<float*>(buf.data()) + offset, kiln::f32, n, gpu);
  };

  SECTION("one element in: refused with a reason, op() falls back and is still right") {
    const kiln::Args args{view(a, 1), view(b, 1), view(c, 1)};
    const kiln::Problem p = add.problem(args);
    CHECK(p.align_bytes == 4);
    const kiln::Support s = vec->supports(p, dev, vec->default_config(dev));
    CHECK(!s.ok);
    CHECK(contains(s.reason, "16-byte"));
    const kiln::Decision d = rt.explain(p);
    REQUIRE(d.variant != nullptr);
    CHECK(d.variant->name() == "add_streaming");  // any 4-byte alignment

    const std::vector<float> ha = random_floats(n + 4, 5), hb = random_floats(n + 4, 6);
    a.copy_from_host(ha.data(), ha.size() * sizeof(float));
    b.copy_from_host(hb.data(), hb.size() * sizeof(float));
    c.fill_bytes(0xFF);
    add(args);
    kiln::Stream().synchronize();
    const std::vector<float> hc = c.to_host<float>();
    std::int64_t wrong = 0;
    for (std::int64_t i = 1; i <= n; ++i) wrong += !(hc[i] == ha[i] + hb[i]);
    CHECK(wrong == 0);
    CHECK(std::isnan(hc[0]));      // untouched around the view
    CHECK(std::isnan(hc[n + 1]));
  }
  SECTION("a 2-D view one element in") {
    kiln::Buffer big = kiln::Buffer::alloc(gpu, kiln::f32, {37 * 128 + 4});
    auto mat = kiln::TensorRef::matrix(static_cast<float*>(big.data()) + 1, kiln::f32, 37, 128, 128, gpu);
    const kiln::Problem p = add.problem({mat, mat, mat});
    CHECK(p.align_bytes == 4);
    CHECK(!vec->supports(p, dev, vec->default_config(dev)).ok);
  }
  SECTION("four elements in (16 bytes): accepted") {
    const kiln::Problem p = add.problem({view(a, 4), view(b, 4), view(c, 4)});
    CHECK(p.align_bytes == 16);
    CHECK(vec->supports(p, dev, vec->default_config(dev)).ok);
  }
}

// add_streaming on views whose three operands sit at different offsets within 16 bytes (so the
// head before c's boundary, vector or single-float loads, and the tail all run), every config.
TEST_CASE("add_streaming on misaligned and odd-sized views, every config", "[add][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* st = rt.registry().find_variant("add_streaming");
  REQUIRE(st != nullptr);
  const kiln::OpSchema& schema = rt.registry().op("add");
  const kiln::Stream stream;

  const std::int64_t offsets[][3] = {{0, 0, 0}, {1, 1, 1}, {3, 3, 3}, {0, 1, 2}, {2, 0, 3}, {1, 3, 0}};
  const std::int64_t lengths[] = {1, 2, 3, 5, 13, 4099, 1000003, (1 << 20) + 7};
  const std::int64_t m = 5, n = 1029;  // 2-D: pitch n + 1 (4120 bytes), so rows start at offsets 0, 2, 0, ... mod 4
  std::uint64_t seed = 77;
  for (const auto& off : offsets) {
    for (std::int64_t len : lengths) {
      if (kiln_test::skip_when_quick(double(len))) continue;
      const std::int64_t cap = std::max(len, m * (n + 1)) + 4;
      kiln::Buffer bufs[3] = {kiln::Buffer::alloc(gpu, kiln::f32, {cap}), kiln::Buffer::alloc(gpu, kiln::f32, {cap}),
                              kiln::Buffer::alloc(gpu, kiln::f32, {cap})};
      const std::vector<float> ha = random_floats(std::size_t(cap), seed++), hb = random_floats(std::size_t(cap), seed++);
      bufs[0].copy_from_host(ha.data(), ha.size() * sizeof(float));
      bufs[1].copy_from_host(hb.data(), hb.size() * sizeof(float));
      auto ptr = [&](int i) { return static_cast<float*>(bufs[i].data()) + off[i]; };
      for (bool two_d : {false, true}) {
        if (two_d && len != lengths[0]) continue;  // one 2-D case per offset triple
        kiln::Args args = two_d ? kiln::Args{kiln::TensorRef::matrix(ptr(0), kiln::f32, m, n, n + 1, gpu),
                                             kiln::TensorRef::matrix(ptr(1), kiln::f32, m, n, n + 1, gpu),
                                             kiln::TensorRef::matrix(ptr(2), kiln::f32, m, n, n + 1, gpu)}
                                : kiln::Args{kiln::TensorRef::vector(ptr(0), kiln::f32, len, gpu),
                                             kiln::TensorRef::vector(ptr(1), kiln::f32, len, gpu),
                                             kiln::TensorRef::vector(ptr(2), kiln::f32, len, gpu)};
        const kiln::Problem p = rt.make_problem(schema, args);
        for (const kiln::Config& config : st->space().enumerate(dev, p)) {
          INFO("offsets " << off[0] << "," << off[1] << "," << off[2] << (two_d ? " 5x1029 pitch 1030" : " length ")
                          << len << " " << config.to_string());
          REQUIRE(st->supports(p, dev, config).ok);
          bufs[2].fill_bytes(0xFF);  // poison, around the view too
          REQUIRE(st->launch(args, p, config, nullptr, stream).ok());
          stream.synchronize();
          const std::vector<float> hc = bufs[2].to_host<float>();
          std::int64_t wrong = 0, touched_outside = 0;
          for (std::int64_t i = 0; i < cap; ++i) {
            bool inside = false;
            if (two_d) {
              const std::int64_t rel = i - off[2];
              inside = rel >= 0 && rel < m * (n + 1) && rel % (n + 1) < n;
            } else {
              inside = i >= off[2] && i < off[2] + len;
            }
            if (!inside) {
              touched_outside += !std::isnan(hc[std::size_t(i)]);
              continue;
            }
            const std::int64_t k = i - off[2];  // same relative position in a and b
            wrong += !(hc[std::size_t(i)] == ha[std::size_t(off[0] + k)] + hb[std::size_t(off[1] + k)]);
          }
          CHECK(wrong == 0);
          CHECK(touched_outside == 0);
          if (wrong != 0 || touched_outside != 0) break;  // one failure per case is enough
        }
      }
    }
  }
}

// add_streaming in f16 and bf16 on views at different offsets within 16 bytes (8 halves), odd
// lengths: head, vector or element-wise loads and tail all run; every config, output poisoned.
TEST_CASE("add_streaming on misaligned half views, every config", "[add][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* st = rt.registry().find_variant("add_streaming");
  REQUIRE(st != nullptr);
  const kiln::OpSchema& schema = rt.registry().op("add");
  const kiln::Stream stream;
  const std::int64_t offsets[][3] = {{0, 0, 0}, {5, 5, 5}, {0, 3, 7}, {6, 1, 2}};
  const std::int64_t lengths[] = {1, 7, 9, 4099, 1000003};
  std::uint64_t seed = 300;
  for (const kiln::DType dtype : {kiln::f16, kiln::bf16}) {
    const bool f16 = dtype == kiln::f16;
    auto to_bits = [&](float x) { return f16 ? kiln::float_to_f16(x) : kiln::float_to_bf16(x); };
    auto from_bits = [&](std::uint16_t b) { return f16 ? kiln::f16_to_float(b) : kiln::bf16_to_float(b); };
    for (const auto& off : offsets)
      for (const std::int64_t len : lengths) {
        if (kiln_test::skip_when_quick(double(len))) continue;
        const std::int64_t cap = len + 8;
        std::vector<std::uint16_t> ha(static_cast<std::size_t>(cap)), hb(ha.size());
        const std::vector<float> ra = random_floats(ha.size(), seed++), rb = random_floats(ha.size(), seed++);
        for (std::size_t i = 0; i < ha.size(); ++i) {
          ha[i] = to_bits(4.0f * ra[i]);
          hb[i] = to_bits(4.0f * rb[i]);
        }
        kiln::Buffer bufs[3] = {kiln::Buffer::alloc(gpu, dtype, {cap}), kiln::Buffer::alloc(gpu, dtype, {cap}),
                                kiln::Buffer::alloc(gpu, dtype, {cap})};
        bufs[0].copy_from_host(ha.data(), ha.size() * 2);
        bufs[1].copy_from_host(hb.data(), hb.size() * 2);
        auto view = [&](int i) {
          return kiln::TensorRef::vector(static_cast<std::uint16_t*>(bufs[i].data()) + off[i], dtype, len, gpu);
        };
        const kiln::Args args{view(0), view(1), view(2)};
        const kiln::Problem p = rt.make_problem(schema, args);
        for (const kiln::Config& config : st->space().enumerate(dev, p)) {
          INFO(kiln::dtype_name(dtype) << " offsets " << off[0] << "," << off[1] << "," << off[2] << " length " << len
                                       << " " << config.to_string());
          REQUIRE(st->supports(p, dev, config).ok);
          bufs[2].fill_bytes(0xFF);
          REQUIRE(st->launch(args, p, config, nullptr, stream).ok());
          stream.synchronize();
          const std::vector<std::uint16_t> hc = bufs[2].to_host<std::uint16_t>();
          std::int64_t wrong = 0, touched_outside = 0;
          for (std::int64_t i = 0; i < cap; ++i) {
            if (i < off[2] || i >= off[2] + len) {
              touched_outside += hc[std::size_t(i)] != 0xFFFF;
              continue;
            }
            const std::int64_t k = i - off[2];
            wrong += hc[std::size_t(i)] !=
                     to_bits(from_bits(ha[std::size_t(off[0] + k)]) + from_bits(hb[std::size_t(off[1] + k)]));
          }
          CHECK(wrong == 0);
          CHECK(touched_outside == 0);
          if (wrong != 0 || touched_outside != 0) break;
        }
      }
  }
}

TEST_CASE("op(\"add\") on device buffers end to end", "[add][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  kiln::Op add = rt.op("add");
  kiln::OwnedStream stream(gpu);

  SECTION("f32 matrices, dense, pitched and mixed, on a stream of our own") {
    for (const auto& shape : kShapes) {
      const std::int64_t m = shape[0], n = shape[1];
      for (int layout = 0; layout < 3; ++layout) {  // dense, pitched, mixed (a dense, b and c pitched)
        INFO(m << "x" << n << " layout " << layout);
        auto make = [&](bool pitched) {
          return pitched ? kiln::Buffer::alloc_pitched(gpu, kiln::f32, m, n)
                         : kiln::Buffer::alloc(gpu, kiln::f32, {m, n});
        };
        kiln::Buffer a = make(layout == 1), b = make(layout >= 1), c = make(layout >= 1);
        const std::vector<float> ha = random_floats(static_cast<std::size_t>(m * n), 100 + layout);
        const std::vector<float> hb = random_floats(static_cast<std::size_t>(m * n), 200 + layout);
        a.copy_from_host(ha.data(), ha.size() * sizeof(float));
        b.copy_from_host(hb.data(), hb.size() * sizeof(float));
        c.fill_bytes(0xFF);
        kiln::Stream().synchronize();  // the copies ran on the legacy stream; ours does not wait for it
        add({a, b, c}, stream);
        stream.synchronize();
        CHECK(count_wrong(ha, hb, c.to_host<float>()) == 0);
      }
    }
    // A dense f32 problem dispatches to add_streaming by default (the highest priority).
    kiln::Buffer a = kiln::Buffer::alloc(gpu, kiln::f32, {1000, 1000});
    const kiln::Decision d = rt.explain(add.problem({a, a, a}));
    REQUIRE(d.variant != nullptr);
    CHECK(d.variant->name() == "add_streaming");
  }

  SECTION("rank 1 f32, pitched f64, mixed i32") {
    const std::int64_t n = 1000003;
    kiln::Buffer a = kiln::Buffer::alloc(gpu, kiln::f32, {n});
    kiln::Buffer b = kiln::Buffer::alloc(gpu, kiln::f32, {n});
    kiln::Buffer c = kiln::Buffer::alloc(gpu, kiln::f32, {n});
    const std::vector<float> ha = random_floats(n, 7), hb = random_floats(n, 8);
    a.copy_from_host(ha.data(), ha.size() * sizeof(float));
    b.copy_from_host(hb.data(), hb.size() * sizeof(float));
    c.fill_bytes(0xFF);
    add({a, b, c});
    kiln::Stream().synchronize();
    CHECK(count_wrong(ha, hb, c.to_host<float>()) == 0);

    std::vector<double> da(4099), db(4099);         // 1 x 4099
    std::vector<std::int32_t> ia(17 * 241), ib(17 * 241);
    std::mt19937_64 rng(9);
    for (std::size_t i = 0; i < da.size(); ++i) {
      da[i] = std::uniform_real_distribution<double>(-1, 1)(rng);
      db[i] = std::uniform_real_distribution<double>(-1, 1)(rng);
    }
    for (std::size_t i = 0; i < ia.size(); ++i) {
      ia[i] = std::uniform_int_distribution<std::int32_t>(-1000000, 1000000)(rng);
      ib[i] = std::uniform_int_distribution<std::int32_t>(-1000000, 1000000)(rng);
    }
    kiln::Buffer xa = kiln::Buffer::alloc_pitched(gpu, kiln::f64, 1, 4099);
    kiln::Buffer xb = kiln::Buffer::alloc_pitched(gpu, kiln::f64, 1, 4099);
    kiln::Buffer xc = kiln::Buffer::alloc_pitched(gpu, kiln::f64, 1, 4099);
    xa.copy_from_host(da.data(), da.size() * sizeof(double));
    xb.copy_from_host(db.data(), db.size() * sizeof(double));
    xc.fill_bytes(0xFF);
    add({xa, xb, xc});
    kiln::Stream().synchronize();
    CHECK(count_wrong(da, db, xc.to_host<double>()) == 0);

    kiln::Buffer ja = kiln::Buffer::alloc(gpu, kiln::i32, {17, 241});
    kiln::Buffer jb = kiln::Buffer::alloc(gpu, kiln::i32, {17, 241});
    kiln::Buffer jc = kiln::Buffer::alloc_pitched(gpu, kiln::i32, 17, 241);
    ja.copy_from_host(ia.data(), ia.size() * sizeof(std::int32_t));
    jb.copy_from_host(ib.data(), ib.size() * sizeof(std::int32_t));
    jc.fill_bytes(0xFF);
    add({ja, jb, jc});
    kiln::Stream().synchronize();
    CHECK(count_wrong(ia, ib, jc.to_host<std::int32_t>()) == 0);
  }
}

// The dot and reduce_sum schemas and host variants, through kiln::Runtime::op with host buffers
// (validation errors, hand-computed results); the variant list; the parameter spaces, grids and
// workspace sizes.  No GPU needed.
#include <kiln/half.hpp>
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>
#include <kiln/tuner/tuner.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"
#include "reduction_params.hpp"
#include "reduction_reference.hpp"
#include "register_reduction.hpp"

using kiln_test::error_message;
using kiln_test::contains;

namespace red = kiln::reduction;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_reduction(reg);
  REQUIRE(s.ok());
  return reg;
}

template <class T>
kiln::TensorRef host_vector(std::vector<T>& v, kiln::DType dtype) {
  return kiln::TensorRef::vector(v.data(), dtype, static_cast<std::int64_t>(v.size()), kiln::Device::host());
}

// A CUDA-like device description, so spaces and defaults can be checked without a GPU.
kiln::DeviceInfo fake_h200() {
  kiln::DeviceInfo d;
  d.device = kiln::Device::cuda(0);
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.smem_per_block = 48 * 1024;
  d.smem_per_block_optin = 227 * 1024;
  d.max_threads_per_block = 1024;
  return d;
}

kiln::Problem cuda_problem(const kiln::OpSchema& schema, kiln::DType dtype, std::int64_t n, int align_bytes,
                           int out16 = 0) {
  kiln::Problem p;
  p.schema = &schema;
  p.dtype = dtype;
  p.n_dims = 2;
  p.dims[0] = n;
  p.dims[1] = out16;
  p.device = kiln::Device::cuda(0);
  p.align_bytes = align_bytes;
  return p;
}

}  // namespace

TEST_CASE("dot rejects bad arguments with the role named", "[reduction]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op dot = rt.op("dot");
  std::vector<float> x(5, 1.0f), y(5, 1.0f), y6(6, 1.0f), out(1), out2(2);
  std::vector<double> xd(5, 1.0);
  std::vector<std::int32_t> out_i(1);

  SECTION("length mismatch") {
    const std::string msg = error_message([&] { dot({host_vector(x, kiln::f32), host_vector(y6, kiln::f32), host_vector(out, kiln::f32)}); });
    CHECK(contains(msg, "y"));
    CHECK(contains(msg, "[5]"));
    REQUIRE_THROWS_AS(dot({host_vector(x, kiln::f32), host_vector(y6, kiln::f32), host_vector(out, kiln::f32)}),
                      kiln::ShapeError);
  }
  SECTION("out is not [1]") {
    const std::string msg = error_message([&] { dot({host_vector(x, kiln::f32), host_vector(y, kiln::f32), host_vector(out2, kiln::f32)}); });
    CHECK(contains(msg, "out"));
    CHECK(contains(msg, "[1]"));
    REQUIRE_THROWS_AS(dot({host_vector(x, kiln::f32), host_vector(y, kiln::f32), host_vector(out2, kiln::f32)}),
                      kiln::ShapeError);
  }
  SECTION("x is a matrix") {
    std::vector<float> m(6, 1.0f);
    const auto xm = kiln::TensorRef::matrix(m.data(), kiln::f32, 2, 3, 3, kiln::Device::host());
    REQUIRE_THROWS_AS(dot({xm, xm, host_vector(out, kiln::f32)}), kiln::ShapeError);
  }
  SECTION("wrong dtypes") {
    const std::string msg = error_message([&] { dot({host_vector(xd, kiln::f64), host_vector(y, kiln::f32), host_vector(out, kiln::f32)}); });
    CHECK(contains(msg, "x"));
    CHECK(contains(msg, "f64"));
    CHECK(contains(msg, "f32"));
    REQUIRE_THROWS_AS(dot({host_vector(xd, kiln::f64), host_vector(y, kiln::f32), host_vector(out, kiln::f32)}),
                      kiln::DTypeError);
    REQUIRE_THROWS_AS(dot({host_vector(x, kiln::f32), host_vector(y, kiln::f32), host_vector(out_i, kiln::i32)}),
                      kiln::DTypeError);
  }
  SECTION("wrong tensor count") {
    REQUIRE_THROWS_AS(dot({host_vector(x, kiln::f32), host_vector(out, kiln::f32)}), kiln::ArgumentError);
  }
  SECTION("out inside x or y") {  // out is zeroed and added to while x and y are read
    const auto x5 = host_vector(x, kiln::f32);
    const auto in_y = kiln::TensorRef::vector(y.data() + 4, kiln::f32, 1, kiln::Device::host());
    CHECK(contains(error_message([&] { dot({x5, host_vector(y, kiln::f32), in_y}); }), "dot: argument 'out' overlaps"));
    REQUIRE_THROWS_AS(dot({x5, host_vector(y, kiln::f32), in_y}), kiln::ArgumentError);
  }
}

TEST_CASE("reduce_sum rejects bad arguments with the role named", "[reduction]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op sum = rt.op("reduce_sum");
  std::vector<float> x(5, 1.0f), out(1), out2(2);
  std::vector<std::int32_t> xi(5, 1), out_i(1);
  std::vector<double> xd(5, 1.0), out_d(1);

  SECTION("x of an unsupported dtype") {
    const std::string msg = error_message([&] { sum({host_vector(xd, kiln::f64), host_vector(out_d, kiln::f64)}); });
    CHECK(contains(msg, "x"));
    CHECK(contains(msg, "f64"));
    REQUIRE_THROWS_AS(sum({host_vector(xd, kiln::f64), host_vector(out_d, kiln::f64)}), kiln::DTypeError);
  }
  SECTION("out's dtype differs from x's") {
    const std::string msg = error_message([&] { sum({host_vector(xi, kiln::i32), host_vector(out, kiln::f32)}); });
    CHECK(contains(msg, "out"));
    CHECK(contains(msg, "i32"));
    REQUIRE_THROWS_AS(sum({host_vector(xi, kiln::i32), host_vector(out, kiln::f32)}), kiln::DTypeError);
  }
  SECTION("out is not [1]") {
    REQUIRE_THROWS_AS(sum({host_vector(x, kiln::f32), host_vector(out2, kiln::f32)}), kiln::ShapeError);
    const auto out11 = kiln::TensorRef::matrix(out.data(), kiln::f32, 1, 1, 1, kiln::Device::host());
    const std::string msg = error_message([&] { sum({host_vector(x, kiln::f32), out11}); });
    CHECK(contains(msg, "out"));
    REQUIRE_THROWS_AS(sum({host_vector(x, kiln::f32), out11}), kiln::ShapeError);
  }
  SECTION("out inside x") {
    const auto in_x = kiln::TensorRef::vector(x.data(), kiln::f32, 1, kiln::Device::host());
    CHECK(contains(error_message([&] { sum({host_vector(x, kiln::f32), in_x}); }), "reduce_sum: argument 'out' overlaps argument 'x'"));
    CHECK(x[0] == 1.0f);
  }
  SECTION("x is a matrix") {
    std::vector<float> m(6, 1.0f);
    const auto xm = kiln::TensorRef::matrix(m.data(), kiln::f32, 2, 3, 3, kiln::Device::host());
    const std::string msg = error_message([&] { sum({xm, host_vector(out, kiln::f32)}); });
    CHECK(contains(msg, "x"));
    REQUIRE_THROWS_AS(sum({xm, host_vector(out, kiln::f32)}), kiln::ShapeError);
  }
}

TEST_CASE("host references on hand-computed cases", "[reduction]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op dot = rt.op("dot");
  kiln::Op sum = rt.op("reduce_sum");
  std::vector<float> out(1, -1.0f);
  std::vector<std::int32_t> out_i(1, -1);

  SECTION("dot") {
    std::vector<float> x = {1, 2, 3}, y = {4, 5, 6};
    dot({host_vector(x, kiln::f32), host_vector(y, kiln::f32), host_vector(out, kiln::f32)});
    CHECK(out[0] == 32.0f);
    std::vector<float> one_x = {3.5f}, one_y = {-2.0f};
    dot({host_vector(one_x, kiln::f32), host_vector(one_y, kiln::f32), host_vector(out, kiln::f32)});
    CHECK(out[0] == -7.0f);
  }
  SECTION("f32 accumulates in double") {
    // In float, 1e8 + 1 rounds back to 1e8 and the sum would be 0.
    std::vector<float> x = {1e8f, 1.0f, -1e8f}, ones = {1.0f, 1.0f, 1.0f};
    sum({host_vector(x, kiln::f32), host_vector(out, kiln::f32)});
    CHECK(out[0] == 1.0f);
    out[0] = -1.0f;
    dot({host_vector(x, kiln::f32), host_vector(ones, kiln::f32), host_vector(out, kiln::f32)});
    CHECK(out[0] == 1.0f);
  }
  SECTION("a sum past float's range rounds to +-inf, as the f32 accumulators give (no undefined cast)") {
    // The double sums (1e76, 3e38 * 2) are finite; static_cast<float> of them was undefined.
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> big = {1e38f, 1e38f}, neg = {-1e38f, -1e38f};
    dot({host_vector(big, kiln::f32), host_vector(big, kiln::f32), host_vector(out, kiln::f32)});
    CHECK(out[0] == inf);
    dot({host_vector(neg, kiln::f32), host_vector(big, kiln::f32), host_vector(out, kiln::f32)});
    CHECK(out[0] == -inf);
    std::vector<float> near_max = {3e38f, 3e38f};
    sum({host_vector(near_max, kiln::f32), host_vector(out, kiln::f32)});
    CHECK(out[0] == inf);
    using kiln::reduction::saturate_to_float;
    const float flt_max = std::numeric_limits<float>::max();
    CHECK(saturate_to_float(0x1.fffffep127) == flt_max);
    CHECK(saturate_to_float(0x1.fffffefffffffp127) == flt_max);  // below the halfway point
    CHECK(saturate_to_float(0x1.ffffffp127) == inf);             // halfway: to even, 2^128
    CHECK(saturate_to_float(-1e300) == -inf);
    CHECK(saturate_to_float(1e300) == inf);
    CHECK(saturate_to_float(-0x1.fffffep127) == -flt_max);
    CHECK(std::isnan(saturate_to_float(std::numeric_limits<double>::quiet_NaN())));
    CHECK(saturate_to_float(1.5) == 1.5f);
  }
  SECTION("reduce_sum f32") {
    std::vector<float> x = {0.5f, 0.25f, 0.125f, -2.0f};
    sum({host_vector(x, kiln::f32), host_vector(out, kiln::f32)});
    CHECK(out[0] == -1.125f);
  }
  SECTION("reduce_sum i32, wrapping modulo 2^32") {
    std::vector<std::int32_t> x = {5, -7, 1000};
    sum({host_vector(x, kiln::i32), host_vector(out_i, kiln::i32)});
    CHECK(out_i[0] == 998);
    std::vector<std::int32_t> big = {std::numeric_limits<std::int32_t>::max(), 1};
    sum({host_vector(big, kiln::i32), host_vector(out_i, kiln::i32)});
    CHECK(out_i[0] == std::numeric_limits<std::int32_t>::min());
    std::vector<std::int32_t> low = {std::numeric_limits<std::int32_t>::min(), -1, 3};
    sum({host_vector(low, kiln::i32), host_vector(out_i, kiln::i32)});
    CHECK(out_i[0] == std::numeric_limits<std::int32_t>::min() + 2);  // INT_MIN - 1 wraps to INT_MAX, + 3
  }
  SECTION("the empty sum is 0") {
    float dummy[4] = {1, 2, 3, 4};
    const auto empty = kiln::TensorRef::vector(dummy, kiln::f32, 0, kiln::Device::host());
    sum({empty, host_vector(out, kiln::f32)});
    CHECK(out[0] == 0.0f);
    out[0] = -1.0f;
    dot({empty, empty, host_vector(out, kiln::f32)});
    CHECK(out[0] == 0.0f);
  }
  SECTION("host tensors dispatch to the host variants") {
    std::vector<float> x = {1, 2, 3};
    const kiln::Decision d = rt.explain(sum.problem({host_vector(x, kiln::f32), host_vector(out, kiln::f32)}));
    REQUIRE(d.variant != nullptr);
    CHECK(d.variant->name() == "reduce_sum_host");
  }
}

TEST_CASE("the schemas' contracts", "[reduction]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& dot = reg.op("dot");
  const kiln::OpSchema& sum = reg.op("reduce_sum");
  CHECK(dot.dim_names == std::vector<std::string>{"n", "out16"});
  CHECK(sum.dim_names == std::vector<std::string>{"n", "out16"});
  CHECK(dot.mode_dims == std::vector<std::string>{"out16"});
  CHECK(sum.mode_dims == std::vector<std::string>{"out16"});
  REQUIRE(dot.tensors.size() == 3);
  CHECK(dot.tensors[0].name == "x");
  CHECK(dot.tensors[1].name == "y");
  CHECK(dot.tensors[2].name == "out");
  CHECK(dot.tensors[2].role == kiln::Role::output);
  REQUIRE(sum.tensors.size() == 2);
  CHECK(sum.tensors[1].role == kiln::Role::output);

  const kiln::Problem pd = cuda_problem(dot, kiln::f32, 10, 16);
  const kiln::Problem pf = cuda_problem(sum, kiln::f32, 10, 16);
  const kiln::Problem pi = cuda_problem(sum, kiln::i32, 10, 16);
  CHECK(dot.work(pd) == 80.0);
  CHECK(sum.work(pf) == 40.0);
  CHECK(sum.work(pi) == 40.0);
  CHECK(dot.tolerance_for(pd) == 1e-4);
  CHECK(sum.tolerance_for(pf) == 1e-4);
  CHECK(sum.tolerance_for(pi) == 0.0);

  std::vector<kiln::TensorSpec> specs;
  REQUIRE(dot.tensor_specs(pd, specs).ok());
  REQUIRE(specs.size() == 3);
  CHECK(specs[1].shape == kiln::Shape::vector(10));
  CHECK(specs[2].shape == kiln::Shape::vector(1));
  REQUIRE(sum.tensor_specs(pi, specs).ok());
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].dtype == kiln::i32);
  CHECK(specs[1].dtype == kiln::i32);

  SECTION("fills: f32 in [0, 1), different per tensor; i32 in [-1000, 1000]") {
    std::vector<float> a(4096), b(4096);
    dot.fill_input(pd, 0, host_vector(a, kiln::f32), 42);
    dot.fill_input(pd, 1, host_vector(b, kiln::f32), 42);
    bool in_range = true;
    for (std::size_t i = 0; i < a.size(); ++i) in_range = in_range && a[i] >= 0.0f && a[i] < 1.0f && b[i] >= 0.0f && b[i] < 1.0f;
    CHECK(in_range);
    CHECK(a != b);
    std::vector<std::int32_t> xi(4096);
    sum.fill_input(pi, 0, host_vector(xi, kiln::i32), 42);
    bool int_range = true, any_negative = false;
    for (std::int32_t v : xi) {
      int_range = int_range && v >= -1000 && v <= 1000;
      any_negative = any_negative || v < 0;
    }
    CHECK(int_range);
    CHECK(any_negative);
  }
}

TEST_CASE("ProblemData drives the host variants to zero error", "[reduction]") {
  kiln::Registry reg = make_registry();
  for (const char* op : {"dot", "reduce_sum"}) {
    const kiln::OpSchema& schema = reg.op(op);
    const kiln::Variant* host = reg.find_variant(std::string(op) + "_host");
    REQUIRE(host != nullptr);
    CHECK(host->desc().reference);
    CHECK(host->priority() == 0);
    CHECK(host->space().empty());
    for (kiln::DType dtype : schema.dtypes)
      for (std::int64_t out16 : {0, 1}) {
        if (out16 == 1 && dtype != kiln::f16 && dtype != kiln::bf16) continue;
        for (std::int64_t n : {1, 2, 33, 4097, 65537}) {
          INFO(op << " " << kiln::dtype_name(dtype) << " n=" << n << " out16=" << out16);
          const kiln::Problem p = schema.problem_from_dims(dtype, {n, out16}, kiln::Device::host());
          kiln::ProblemData data(schema, p, kiln::Device::host(), 7 + n);
          data.poison_outputs();
          REQUIRE(host->launch(data.device_args(), data.problem(), {}, nullptr, kiln::Stream()).ok());
          CHECK(data.error() == 0.0);
        }
      }
  }
}

TEST_CASE("the variant list", "[reduction]") {
  kiln::Registry reg = make_registry();
  const kiln::DeviceInfo dev = fake_h200();
  for (const char* op : {"dot", "reduce_sum"}) {
    std::vector<std::string> names;
    for (const kiln::Variant* v : reg.variants(op)) names.push_back(v->name());
    const std::string o = op;
#if KILN_HAS_CUDA
    // Equal priorities (the two warp_shuffle variants, 100) list in name order.
    CHECK(names == std::vector<std::string>{o + "_half_warp_shuffle", o + "_warp_shuffle", o + "_last_block",
                                            o + "_atomic", o + "_sequential", o + "_two_pass", o + "_kahan",
                                            o + "_interleaved", o + "_host"});
#else
    CHECK(names == std::vector<std::string>{o + "_host"});
#endif
    const kiln::OpSchema& schema = reg.op(op);
    for (const kiln::Variant* v : reg.variants(op)) {
      INFO(v->name());
      if (v->device_kind() != kiln::DeviceKind::cuda) continue;
      // Every default lies in its space and is valid for an aligned problem of each of its dtypes.
      const kiln::Config c = v->default_config(dev);
      CHECK(v->space().contains(c));
      for (kiln::DType t : v->dtypes()) {
        CHECK(!(v->space().violated(c, dev, cuda_problem(schema, t, 1000, 16)).has_value()));
        CHECK(v->supports(cuda_problem(schema, t, 1000, 16), dev, c).ok);
      }
    }
  }
#if KILN_HAS_CUDA
  CHECK(reg.find_variant("reduce_sum_kahan")->dtypes() == std::vector<kiln::DType>{kiln::f32});
  CHECK(reg.find_variant("reduce_sum_last_block")->dtypes() == std::vector<kiln::DType>{kiln::f32, kiln::i32});
  CHECK(reg.find_variant("dot_half_warp_shuffle")->dtypes() == std::vector<kiln::DType>{kiln::f16, kiln::bf16});
  CHECK(reg.find_variant("reduce_sum_half_warp_shuffle")->dtypes() == std::vector<kiln::DType>{kiln::f16, kiln::bf16});
#endif
}

TEST_CASE("parameter spaces, grids and workspaces", "[reduction]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& dot = reg.op("dot");
  const kiln::OpSchema& sum = reg.op("reduce_sum");
  const kiln::DeviceInfo dev = fake_h200();

  SECTION("ladder") {
    const kiln::ParamSpace s = red::ladder_space();
    CHECK(s.count() == 16);
    CHECK(s.count_valid(dev, cuda_problem(sum, kiln::i32, 5, 4)) == 16);
    const kiln::Config c = red::ladder_default(dev);
    CHECK(s.contains(c));
    red::LadderConfig lc;
    REQUIRE(red::ladder_config_from(c, lc).ok());
    CHECK(lc.block == 256);
    CHECK(lc.blocks_per_sm == 4);
    red::LadderConfig bad;
    CHECK(!(red::ladder_config_from({{"block", 96}, {"blocks_per_sm", 4}}, bad).ok()));

    CHECK(red::ladder_grid(0, lc, 132) == 1);
    CHECK(red::ladder_grid(1, lc, 132) == 1);
    CHECK(red::ladder_grid(257, lc, 132) == 2);
    CHECK(red::ladder_grid(std::int64_t{1} << 33, lc, 132) == 528);
    CHECK(red::ladder_workspace_bytes(red::Ladder::atomic, lc, 132) == 0);
    CHECK(red::ladder_workspace_bytes(red::Ladder::last_block, lc, 132) == red::kWorkspaceHeaderBytes + 528 * 4);
    CHECK(red::ladder_workspace_bytes(red::Ladder::kahan, lc, 132) == red::kWorkspaceHeaderBytes + 528 * 8);
  }
  SECTION("warp_shuffle") {
    const kiln::ParamSpace sd = red::warp_shuffle_space(red::ReduceOp::dot);
    const kiln::ParamSpace ss = red::warp_shuffle_space(red::ReduceOp::sum);
    REQUIRE(ss.params().size() == 5);
    CHECK(ss.params()[0].name == "block");
    CHECK(ss.params()[1].name == "blocks_per_sm");
    CHECK(ss.params()[2].name == "items_per_thread");
    CHECK(ss.params()[3].name == "vector_width");
    CHECK(ss.params()[4].name == "acc_double");
    CHECK(ss.count() == 4 * 4 * 4 * 2 * 2);
    // Only the instantiated kernels count; i32 has no acc_double.
    CHECK(sd.count_valid(dev, cuda_problem(dot, kiln::f32, 1000, 16)) == 16 * red::kDotWarpShuffleInstances.size());
    CHECK(ss.count_valid(dev, cuda_problem(sum, kiln::f32, 1000, 16)) == 16 * red::kSumWarpShuffleInstances.size());
    CHECK(ss.count_valid(dev, cuda_problem(sum, kiln::i32, 1000, 16)) == 16 * 6);

    const kiln::Config def = red::warp_shuffle_default(dev);
    CHECK(def.get("vector_width") == 4);
    for (const kiln::ParamSpace* s : {&sd, &ss}) {
      CHECK(s->contains(def));
      CHECK(!(s->violated(def, dev, cuda_problem(sum, kiln::f32, 1000, 16)).has_value()));
    }
    kiln::Config acc = def;
    acc.set("acc_double", 1);
    const auto why = ss.violated(acc, dev, cuda_problem(sum, kiln::i32, 1000, 16));
    REQUIRE(why.has_value());
    CHECK(contains(*why, "acc_double"));
    kiln::Config heavy = def;
    heavy.set("items_per_thread", 8);  // 8 x float4 of two inputs: not instantiated for dot
    CHECK(sd.violated(heavy, dev, cuda_problem(dot, kiln::f32, 1000, 16)).has_value());
    CHECK(!(ss.violated(heavy, dev, cuda_problem(sum, kiln::f32, 1000, 16)).has_value()));

    // Misaligned views: vector_width 4 is refused with a reason, 1 is fine.
    const kiln::Support no = red::warp_shuffle_supports(cuda_problem(sum, kiln::f32, 1000, 4), def);
    CHECK(!(no.ok));
    CHECK(contains(no.reason, "16-byte"));
    kiln::Config scalar = def;
    scalar.set("vector_width", 1);
    CHECK(red::warp_shuffle_supports(cuda_problem(sum, kiln::f32, 1000, 4), scalar).ok);
    CHECK(red::warp_shuffle_supports(cuda_problem(sum, kiln::f32, 1000, 16), def).ok);

    red::WarpShuffleConfig wc;
    REQUIRE(red::warp_shuffle_config_from(def, wc).ok());
    CHECK(red::warp_shuffle_grid(3, wc, 132) == 1);   // no whole vector: one block for the tail
    CHECK(red::warp_shuffle_grid(4096, wc, 132) == 1);
    CHECK(red::warp_shuffle_grid(4097, wc, 132) == 1);
    CHECK(red::warp_shuffle_grid(4100, wc, 132) == 2);
    CHECK(red::warp_shuffle_grid(std::int64_t{1} << 28, wc, 132) == 528);
    CHECK(red::warp_shuffle_workspace_bytes(wc, 132) == red::kWorkspaceHeaderBytes + 528 * 4);
    wc.acc_double = true;
    CHECK(red::warp_shuffle_workspace_bytes(wc, 132) == red::kWorkspaceHeaderBytes + 528 * 8);
  }
}

namespace {

std::vector<std::uint16_t> to_bits(const std::vector<float>& v, kiln::DType t) {
  std::vector<std::uint16_t> out;
  for (float f : v) out.push_back(t == kiln::bf16 ? kiln::float_to_bf16(f) : kiln::float_to_f16(f));
  return out;
}

float from_bits(std::uint16_t b, kiln::DType t) { return t == kiln::bf16 ? kiln::bf16_to_float(b) : kiln::f16_to_float(b); }

}  // namespace

TEST_CASE("f16 and bf16: mixed or unsupported dtypes are refused with the argument named", "[reduction][half]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op dot = rt.op("dot");
  kiln::Op sum = rt.op("reduce_sum");
  std::vector<std::uint16_t> xh(5, 0x3f80), yh(5, 0x3f80), out_h(1);
  std::vector<float> xf(5, 1.0f), out_f(1);
  std::vector<double> out_d(1);
  std::vector<std::int32_t> out_i(1);

  SECTION("dot: x bf16, y f16") {
    const auto call = [&] { dot({host_vector(xh, kiln::bf16), host_vector(yh, kiln::f16), host_vector(out_f, kiln::f32)}); };
    const std::string msg = error_message(call);
    CHECK(contains(msg, "y"));
    CHECK(contains(msg, "f16"));
    CHECK(contains(msg, "bf16"));
    REQUIRE_THROWS_AS(call(), kiln::DTypeError);
  }
  SECTION("dot: x f32, y bf16") {
    REQUIRE_THROWS_AS(dot({host_vector(xf, kiln::f32), host_vector(yh, kiln::bf16), host_vector(out_f, kiln::f32)}),
                      kiln::DTypeError);
  }
  SECTION("dot: bf16 inputs, out f16 (neither f32 nor the input type)") {
    const auto call = [&] { dot({host_vector(xh, kiln::bf16), host_vector(yh, kiln::bf16), host_vector(out_h, kiln::f16)}); };
    const std::string msg = error_message(call);
    CHECK(contains(msg, "out"));
    CHECK(contains(msg, "f32 or bf16"));
    REQUIRE_THROWS_AS(call(), kiln::DTypeError);
  }
  SECTION("reduce_sum: f16 x, out f64 or i32") {
    const auto call = [&] { sum({host_vector(xh, kiln::f16), host_vector(out_d, kiln::f64)}); };
    const std::string msg = error_message(call);
    CHECK(contains(msg, "out"));
    CHECK(contains(msg, "f32 or f16"));
    REQUIRE_THROWS_AS(call(), kiln::DTypeError);
    REQUIRE_THROWS_AS(sum({host_vector(xh, kiln::f16), host_vector(out_i, kiln::i32)}), kiln::DTypeError);
  }
  SECTION("reduce_sum: f32 x with a bf16 out (out16 needs half inputs)") {
    const auto call = [&] { sum({host_vector(xf, kiln::f32), host_vector(out_h, kiln::bf16)}); };
    CHECK(contains(error_message(call), "out"));
    REQUIRE_THROWS_AS(call(), kiln::DTypeError);
  }
  SECTION("out16 = 1 with f32 inputs is not a problem") {
    const kiln::OpSchema& schema = rt.registry().op("reduce_sum");
    REQUIRE_THROWS_AS(schema.problem_from_shape(kiln::f32, "100,out16=1", kiln::Device::host()), kiln::ArgumentError);
    REQUIRE_THROWS_AS(schema.problem_from_shape(kiln::bf16, "100,out16=2", kiln::Device::host()), kiln::ArgumentError);
  }
}

TEST_CASE("f16 and bf16: problems, specs, tolerances and hand-computed references", "[reduction][half]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op dot = rt.op("dot");
  kiln::Op sum = rt.op("reduce_sum");
  const kiln::OpSchema& dschema = rt.registry().op("dot");
  const kiln::OpSchema& sschema = rt.registry().op("reduce_sum");

  for (kiln::DType t : {kiln::bf16, kiln::f16}) {
    INFO(kiln::dtype_name(t));
    // Exactly representable in both types; the double sum 1.5 * 2 + 0.25 * 4 - 3 * 0.5 = 2.5.
    std::vector<std::uint16_t> x = to_bits({1.5f, 0.25f, -3.0f}, t), y = to_bits({2.0f, 4.0f, 0.5f}, t);
    std::vector<float> out_f(1, -1.0f);
    std::vector<std::uint16_t> out_h(1, 0xffff);
    dot({host_vector(x, t), host_vector(y, t), host_vector(out_f, kiln::f32)});
    CHECK(out_f[0] == 2.5f);
    dot({host_vector(x, t), host_vector(y, t), host_vector(out_h, t)});
    CHECK(from_bits(out_h[0], t) == 2.5f);
    sum({host_vector(x, t), host_vector(out_f, kiln::f32)});
    CHECK(out_f[0] == -1.25f);

    // The sum rounds once to float, then to the 16-bit out (nearest even): 1 + 2^-9 is a bf16 tie
    // (rounds to 1) and exact in f16.
    std::vector<std::uint16_t> tie = to_bits({1.0f, 0.001953125f}, t);
    sum({host_vector(tie, t), host_vector(out_h, t)});
    CHECK(from_bits(out_h[0], t) == (t == kiln::bf16 ? 1.0f : 1.001953125f));
    sum({host_vector(tie, t), host_vector(out_f, kiln::f32)});
    CHECK(out_f[0] == 1.001953125f);

    const kiln::Problem pd = dot.problem({host_vector(x, t), host_vector(y, t), host_vector(out_h, t)});
    CHECK(pd.key() == std::string(kiln::dtype_name(t)) + "|n=3|out16=1");
    const kiln::Problem ps = sum.problem({host_vector(x, t), host_vector(out_f, kiln::f32)});
    CHECK(ps.key() == std::string(kiln::dtype_name(t)) + "|n=3|out16=0");
    CHECK(sschema.mode_key(ps) == std::string(kiln::dtype_name(t)) + "|out16=0");

    // Specs follow out16; work counts 2-byte elements; tolerances by out dtype and length.
    std::vector<kiln::TensorSpec> specs;
    REQUIRE(dschema.tensor_specs(cuda_problem(dschema, t, 10, 16, 1), specs).ok());
    CHECK(specs[0].dtype == t);
    CHECK(specs[1].dtype == t);
    CHECK(specs[2].dtype == t);
    REQUIRE(sschema.tensor_specs(cuda_problem(sschema, t, 10, 16, 0), specs).ok());
    CHECK(specs[0].dtype == t);
    CHECK(specs[1].dtype == kiln::f32);
    CHECK(dschema.work(cuda_problem(dschema, t, 10, 16)) == 40.0);
    CHECK(sschema.work(cuda_problem(sschema, t, 10, 16)) == 20.0);
    const std::int64_t big = std::int64_t{1} << 28;
    CHECK(sschema.tolerance_for(cuda_problem(sschema, t, big, 16, 1)) ==
          Approx(kiln::accumulation_tolerance(t, big)));
    CHECK(sschema.tolerance_for(cuda_problem(sschema, t, 4099, 16, 0)) == Approx(1e-4));
    CHECK(dschema.tolerance_for(cuda_problem(dschema, t, big, 16, 0)) == Approx(8.0 * 16384.0 / 16777216.0).epsilon(1e-3));
  }
  // The f32 and i32 contracts are unchanged.
  CHECK(dschema.tolerance_for(cuda_problem(dschema, kiln::f32, std::int64_t{1} << 28, 16)) == 1e-4);
  CHECK(sschema.tolerance_for(cuda_problem(sschema, kiln::i32, 10, 16)) == 0.0);
}

TEST_CASE("f16 and bf16: fills are signed and in range", "[reduction][half]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& dot = reg.op("dot");
  for (kiln::DType t : {kiln::bf16, kiln::f16}) {
    const kiln::Problem p = cuda_problem(dot, t, 4096, 16);
    std::vector<std::uint16_t> a(4096), b(4096);
    dot.fill_input(p, 0, host_vector(a, t), 42);
    dot.fill_input(p, 1, host_vector(b, t), 42);
    bool in_range = true, any_negative = false;
    for (std::uint16_t v : a) {
      const float f = from_bits(v, t);
      in_range = in_range && f >= -1.0f && f <= 1.0f;
      any_negative = any_negative || f < 0.0f;
    }
    CHECK(in_range);
    CHECK(any_negative);
    CHECK(a != b);
    const kiln::InputDistribution d = dot.input_distribution(p, 0);
    CHECK(d.lo == -1.0);
    CHECK(d.hi == 1.0);
  }
}

TEST_CASE("half_warp_shuffle: space, default, supports", "[reduction][half]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& dot = reg.op("dot");
  const kiln::OpSchema& sum = reg.op("reduce_sum");
  const kiln::DeviceInfo dev = fake_h200();
  const kiln::ParamSpace sd = red::half_warp_shuffle_space(red::ReduceOp::dot);
  const kiln::ParamSpace ss = red::half_warp_shuffle_space(red::ReduceOp::sum);
  CHECK(sd.count_valid(dev, cuda_problem(dot, kiln::bf16, 1000, 16)) == 16 * red::kDotHalfInstances.size());
  CHECK(ss.count_valid(dev, cuda_problem(sum, kiln::f16, 1000, 2)) == 16 * red::kSumHalfInstances.size());
  // The scalar fallback of dot is instantiated for both ops.
  auto listed = [](const auto& list) {
    for (const red::HalfWarpShuffleInstance& k : list)
      if (k.items_per_thread == red::kHalfScalarFallback.items_per_thread &&
          k.vector_width == red::kHalfScalarFallback.vector_width)
        return true;
    return false;
  };
  CHECK(listed(red::kDotHalfInstances));
  CHECK(listed(red::kSumHalfInstances));

  const kiln::Config def = red::half_warp_shuffle_default(dev);
  CHECK(def.get("vector_width") == 8);
  CHECK(sd.contains(def));
  CHECK(ss.contains(def));
  red::WarpShuffleConfig wc;
  REQUIRE(red::half_warp_shuffle_config_from(def, wc).ok());
  CHECK(wc.vector_width == 8);
  CHECK(!wc.acc_double);
  CHECK(red::warp_shuffle_workspace_bytes(wc, 132) == red::kWorkspaceHeaderBytes + 528 * 4);
  kiln::Config four = def;
  four.set("vector_width", 4);
  CHECK(!(red::half_warp_shuffle_config_from(four, wc).ok()));

  // Misaligned starts are peeled, so any 2-byte alignment runs; f32 problems are refused.
  CHECK(red::half_warp_shuffle_supports(cuda_problem(sum, kiln::bf16, 1001, 2), def).ok);
  const kiln::Support f32 = red::half_warp_shuffle_supports(cuda_problem(sum, kiln::f32, 1000, 16), def);
  CHECK(!(f32.ok));
  CHECK(contains(f32.reason, "f16 or bf16"));
  CHECK(!(red::half_warp_shuffle_supports(cuda_problem(sum, kiln::bf16, 1000, 1), def).ok));
}

TEST_CASE("reduce_sum and dot refuse out as the very same view as an input (n == 1)", "[reduction]") {
  // Accepted before: the host reference happened to get it right, but the CUDA variants zero
  // `out` before they accumulate into it, so x was read as 0.
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  std::vector<float> x = {3.0f}, y = {2.0f};
  const kiln::TensorRef xv = host_vector(x, kiln::f32), yv = host_vector(y, kiln::f32);
  REQUIRE_THROWS_AS(rt.op("reduce_sum")({xv, xv}), kiln::ArgumentError);
  CHECK(contains(error_message([&] { rt.op("reduce_sum")({xv, xv}); }),
                 "reduce_sum: argument 'out' is the very same view as argument 'x': reduce_sum cannot run in place"));
  REQUIRE_THROWS_AS(rt.op("dot")({xv, yv, xv}), kiln::ArgumentError);
  CHECK(contains(error_message([&] { rt.op("dot")({xv, yv, yv}); }), "argument 'out' is the very same view as argument 'y'"));
  CHECK(x[0] == 3.0f);
  CHECK(y[0] == 2.0f);
  std::vector<float> out(1);
  rt.op("dot")({xv, xv, host_vector(out, kiln::f32)});  // inputs may share memory
  CHECK(out[0] == 9.0f);
}

TEST_CASE("the tuner refuses a problem whose size dims are all 0, and stores nothing", "[reduction]") {
  // reduce_sum n=0 passes problem_from_shape (its out still has one element) and was tuned and
  // stored as "f32|n=0|out16=0": a timing of launch overhead, the nearest entry of small problems.
  const std::string db = (std::filesystem::temp_directory_path() /
                          ("kiln-zero-extents-" + std::to_string(::getpid()) + ".yaml")).string();
  std::filesystem::remove(db);
  kiln::Runtime rt(make_registry(), kiln_test::offline_options(db));
  kiln::Tuner tuner(rt);
  for (const char* op : {"reduce_sum", "dot"}) {
    const kiln::Problem p = rt.registry().op(op).problem_from_shape(kiln::f32, "0", kiln::Device::host());
    CHECK_THROWS_AS(tuner.tune(p), kiln::ArgumentError);
    CHECK(kiln_test::error_message([&] { tuner.tune(p); }) ==
          "Tuner::tune: argument 'problem' " + std::string(op) + " " + p.key() +
              " has every size dim (n) 0: there is nothing to compute, so nothing to tune (expected at least one size > 0)");
  }
  CHECK(!std::filesystem::exists(db));
  // n = 1 is still tuned.
  kiln::TuneOptions options;
  options.store = false;
  const kiln::TuneReport r = tuner.tune(rt.registry().op("reduce_sum").problem_from_shape(kiln::f32, "1", kiln::Device::host()), options);
  CHECK(r.search.winner.has_value());
}

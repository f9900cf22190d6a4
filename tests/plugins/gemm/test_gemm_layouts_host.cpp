// gemm beyond row-major f32: f16 and bf16 inputs, C in f32 or the input type, column-major
// (transposed) operands, offset and padded views, batches with broadcast.  The schema's problem
// keys and errors, gemm_host against an independent long-double triple loop, the tuner's
// ProblemData building transposed and batched tensors, and the f32 row-major CUDA variants
// declining what they cannot compute.  No GPU needed.
#include <kiln/kiln.hpp>
#include <kiln/half.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gemm_schema.hpp"
#include "register_gemm.hpp"
#include "test_util.hpp"

using kiln_test::contains;
using kiln_test::error_message;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  REQUIRE(register_gemm(reg).ok());
  return reg;
}

const kiln::Device kHost = kiln::Device::host();

// Host storage for one operand: `rows x cols` logical, stored row-major with padding `pad` and
// `offset` leading elements, or column-major (as the transpose of such a row-major array).
struct Operand {
  std::vector<std::uint8_t> bytes;
  kiln::TensorRef view;
};

Operand make_operand(kiln::DType t, std::int64_t batch, std::int64_t rows, std::int64_t cols, bool col_major,
                     std::int64_t pad, std::int64_t offset, std::uint64_t seed) {
  const std::int64_t srows = col_major ? cols : rows, scols = col_major ? rows : cols;
  const std::int64_t ld = scols + pad, per = srows * ld;
  Operand o;
  o.bytes.assign(static_cast<std::size_t>((offset + per * std::max<std::int64_t>(batch, 1) + 1) * kiln::dtype_size(t)), 0);
  void* base = o.bytes.data() + offset * kiln::dtype_size(t);
  kiln::TensorRef m = kiln::TensorRef::matrix(base, t, srows, scols, ld, kHost);
  if (col_major) m = m.transposed();
  o.view = batch > 0 ? m.batched(batch, per) : m;
  kiln::default_fill(o.view, seed);
  return o;
}

// Poison: every byte 0xFF (NaN in every float type).
void poison(Operand& o) { std::memset(o.bytes.data(), 0xFF, o.bytes.size()); }

long double exact(const kiln::TensorRef& a, const kiln::TensorRef& b, std::int64_t bi, std::int64_t i, std::int64_t j) {
  long double s = 0.0L;
  const std::int64_t ab = a.shape.rank == 3 ? bi : 0, bb = b.shape.rank == 3 ? bi : 0;
  for (std::int64_t kk = 0; kk < a.cols(); ++kk)
    s += static_cast<long double>(kiln::load_element(a, ab, i, kk)) * kiln::load_element(b, bb, kk, j);
  return s;
}

// Largest element error of c against alpha * A * B + beta * c0, relative to the largest |expected|.
double max_relative_error(const kiln::TensorRef& a, const kiln::TensorRef& b, const kiln::TensorRef& c0,
                          const kiln::TensorRef& c, double alpha, double beta) {
  double worst = 0.0, scale = 0.0;
  for (std::int64_t bi = 0; bi < c.batch(); ++bi)
    for (std::int64_t i = 0; i < c.rows(); ++i)
      for (std::int64_t j = 0; j < c.cols(); ++j) {
        long double e = alpha * exact(a, b, bi, i, j);
        if (beta != 0.0) e += beta * kiln::load_element(c0, bi, i, j);
        const double got = kiln::load_element(c, bi, i, j);
        if (std::isnan(got)) return INFINITY;
        worst = std::max(worst, static_cast<double>(std::fabs(static_cast<long double>(got) - e)));
        scale = std::max(scale, static_cast<double>(std::fabs(e)));
      }
  return scale > 0 ? worst / scale : worst;
}

}  // namespace

TEST_CASE("gemm keys carry dtype, layouts, batch and the output type", "[gemm][layouts]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemm = rt.op("gemm");
  auto a = make_operand(kiln::bf16, 0, 7, 5, false, 0, 0, 1);
  auto at = make_operand(kiln::bf16, 0, 7, 5, true, 3, 0, 2);
  auto b = make_operand(kiln::bf16, 0, 5, 9, false, 0, 0, 3);
  auto bt = make_operand(kiln::bf16, 0, 5, 9, true, 0, 0, 4);
  auto c32 = make_operand(kiln::f32, 0, 7, 9, false, 0, 0, 5);
  auto c16 = make_operand(kiln::bf16, 0, 7, 9, false, 0, 0, 6);
  CHECK(gemm.problem({a.view, b.view, c32.view}).key() == "bf16|m=7|n=9|k=5|tf32=0|batch=1|ta=0|tb=0|c16=0");
  CHECK(gemm.problem({at.view, bt.view, c16.view}).key() == "bf16|m=7|n=9|k=5|tf32=0|batch=1|ta=1|tb=1|c16=1");
  auto ab = make_operand(kiln::bf16, 4, 7, 5, false, 0, 0, 7);
  auto cb = make_operand(kiln::f32, 4, 7, 9, false, 0, 0, 8);
  CHECK(gemm.problem({ab.view, b.view, cb.view}).key() == "bf16|m=7|n=9|k=5|tf32=0|batch=4|ta=0|tb=0|c16=0");

  const kiln::OpSchema& s = rt.registry().op("gemm");
  CHECK(s.strided_views);
  const kiln::Problem p = s.problem_from_shape(kiln::bf16, "m=64,n=64,k=8192,c16=1", kHost);
  CHECK(s.tolerance_for(p) == kiln::accumulation_tolerance(kiln::bf16, 8192));
  CHECK(s.tolerance_for(p) < 8e-3);
  CHECK(s.work(s.problem_from_shape(kiln::f16, "2x3x4,batch=5", kHost)) == 2.0 * 2 * 3 * 4 * 5);
  // Modes are matched exactly in the bucket, sizes by power of two.
  CHECK(s.bucket_of(s.problem_from_shape(kiln::bf16, "1000x1000x1000,ta=1", kHost)) ==
        "bf16|m~1024|n~1024|k~1024|tf32=0|batch~1|ta=1|tb=0|c16=0");
  CHECK(s.bucket_of(s.problem_from_shape(kiln::bf16, "1000x1000x1000,ta=0", kHost)) !=
        s.bucket_of(s.problem_from_shape(kiln::bf16, "1000x1000x1000,ta=1", kHost)));

  std::vector<kiln::TensorSpec> specs;
  REQUIRE(s.tensor_specs(s.problem_from_shape(kiln::f16, "3x4x5,batch=2,ta=1,c16=1", kHost), specs).ok());
  CHECK(specs[0].shape == kiln::Shape::batched(2, 3, 5));
  CHECK(specs[0].transposed);
  CHECK_FALSE(specs[1].transposed);
  CHECK(specs[2].dtype == kiln::f16);
  // A problem its own tensors cannot make is refused when it is built (OpSchema::check_round_trip).
  CHECK(contains(error_message([&] { s.problem_from_shape(kiln::f32, "3x4x5,c16=1", kHost); }), "c16 = 1 needs f16 or bf16"));
  CHECK(contains(error_message([&] { s.problem_from_shape(kiln::bf16, "3x4x5,tf32=1", kHost); }), "TF32 applies to f32 only"));
  CHECK(s.problem_from_shape(kiln::bf16, "7x3x1,ta=1", kHost).dims[5] == 1);  // a single column keeps its layout
}

TEST_CASE("gemm names the argument for bad dtypes, layouts and batches", "[gemm][layouts]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemm = rt.op("gemm");
  auto a = make_operand(kiln::bf16, 0, 7, 5, false, 0, 0, 1);
  auto b = make_operand(kiln::bf16, 0, 5, 9, false, 0, 0, 2);
  auto c = make_operand(kiln::f32, 0, 7, 9, false, 0, 0, 3);

  auto b16 = make_operand(kiln::f16, 0, 5, 9, false, 0, 0, 4);
  std::string msg = error_message([&] { gemm({a.view, b16.view, c.view}); });
  CHECK(contains(msg, "argument 'b' has dtype f16, expected bf16"));
  REQUIRE_THROWS_AS(gemm({a.view, b16.view, c.view}), kiln::DTypeError);

  auto cf16 = make_operand(kiln::f16, 0, 7, 9, false, 0, 0, 5);
  msg = error_message([&] { gemm({a.view, b.view, cf16.view}); });
  CHECK(contains(msg, "argument 'c' has dtype f16, expected f32 or bf16"));

  auto a64 = make_operand(kiln::f64, 0, 7, 5, false, 0, 0, 6);
  CHECK(contains(error_message([&] { gemm({a64.view, b.view, c.view}); }), "expected f32, f16 or bf16"));

  // Neither row- nor column-major: columns 2 apart inside rows 16 apart.
  std::vector<std::uint16_t> raw(7 * 16);
  const auto odd = kiln::TensorRef::strided(raw.data(), kiln::bf16, 7, 5, 16, 2, kHost);
  msg = error_message([&] { gemm({odd, b.view, c.view}); });
  CHECK(contains(msg, "argument 'a' has strides 16 (rows) and 2 (columns)"));
  CHECK(contains(msg, "row-major (column stride 1) or column-major (row stride 1)"));

  auto ct = make_operand(kiln::f32, 0, 7, 9, true, 0, 0, 7);
  CHECK(contains(error_message([&] { gemm({a.view, b.view, ct.view}); }), "argument 'c' has column stride 7"));

  auto ab = make_operand(kiln::bf16, 3, 7, 5, false, 0, 0, 8);
  CHECK(contains(error_message([&] { gemm({ab.view, b.view, c.view}); }), "argument 'a' is batched"));
  auto cb2 = make_operand(kiln::f32, 2, 7, 9, false, 0, 0, 9);
  msg = error_message([&] { gemm({ab.view, b.view, cb2.view}); });
  CHECK(contains(msg, "argument 'a' has shape [3x7x5], expected [2x7x5]"));
  const auto c_bcast = c.view.batched(3, 0);
  CHECK(contains(error_message([&] { gemm({ab.view, b.view, c_bcast}); }), "argument 'c' has batch stride 0"));

  // c overlapping a: the same bytes read and written.
  auto shared = make_operand(kiln::f32, 0, 7, 9, false, 0, 0, 10);
  const auto a_over = kiln::TensorRef::matrix(shared.view.data, kiln::f32, 7, 5, 9, kHost);
  auto b32 = make_operand(kiln::f32, 0, 5, 9, false, 0, 0, 11);
  CHECK(contains(error_message([&] { gemm({a_over, b32.view, shared.view}); }), "argument 'c' overlaps argument 'a'"));

  CHECK(contains(error_message([&] { gemm(kiln::Args({a.view, b.view, c.view}, {1.0, 0.0, 1.0})); }),
                 "TF32 applies to f32 only"));
}

TEST_CASE("gemm_host computes every dtype, layout and batch form", "[gemm][layouts][host]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op gemm = rt.op("gemm");
  std::uint64_t seed = 100;
  for (kiln::DType t : {kiln::f32, kiln::f16, kiln::bf16})
    for (bool c_in : {false, true}) {
      if (t == kiln::f32 && c_in) continue;
      const kiln::DType out = c_in ? t : kiln::f32;
      for (int layout = 0; layout < 4; ++layout)
        for (int batch_form = 0; batch_form < 3; ++batch_form) {  // 0: none, 1: batched, 2: B broadcast
          const bool ta = layout & 1, tb = layout & 2;
          const std::int64_t m = 37, n = 29, k = 45, batch = batch_form ? 3 : 0;
          auto a = make_operand(t, batch, m, k, ta, 3, 1, ++seed);
          auto b = make_operand(t, batch_form == 1 ? batch : 0, k, n, tb, 5, 3, ++seed);
          auto c0 = make_operand(out, batch, m, n, false, 2, 1, ++seed);
          auto c = make_operand(out, batch, m, n, false, 2, 1, seed);  // same seed: c == c0
          for (double beta : {0.0, 0.5}) {
            INFO(kiln::dtype_name(t) << " out " << kiln::dtype_name(out) << " ta " << ta << " tb " << tb
                                     << " batch form " << batch_form << " beta " << beta);
            if (beta == 0.0) poison(c);
            else std::memcpy(c.bytes.data(), c0.bytes.data(), c.bytes.size());
            gemm(kiln::Args({a.view, b.view, c.view}, {1.5, beta}));
            const double err = max_relative_error(a.view, b.view, c0.view, c.view, 1.5, beta);
            // f32 accumulation-free (double) reference: only the output rounding remains.
            CHECK(err <= (out == kiln::f32 ? 1e-6 : 2 * kiln::unit_roundoff(out)));
            // Padding and leading offset stay untouched (poison or the original bytes).
            if (beta == 0.0) CHECK(c.bytes.front() == 0xFF);
          }
        }
    }
}

TEST_CASE("ProblemData builds transposed and batched tensors the schema re-derives", "[gemm][layouts][tuner]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& s = rt.registry().op("gemm");
  for (const char* shape : {"33x17x41,ta=1,tb=1,c16=1", "33x17x41,batch=3,tb=1", "9x10x11,batch=2,ta=1"}) {
    for (kiln::DType t : {kiln::bf16, kiln::f16}) {
      INFO(shape << " " << kiln::dtype_name(t));
      const kiln::Problem p = s.problem_from_shape(t, shape, kHost);
      kiln::ProblemData data(s, p, kHost, 7);
      CHECK(rt.op("gemm").problem(data.device_args()).same_key(p));
      data.poison_outputs();  // c is inout: its random inputs come back, which are not the answer
      CHECK(data.error() > data.tolerance());
      rt.op("gemm")(data.device_args());
      CHECK(data.error() == 0.0);  // gemm_host is the reference
    }
  }
}

TEST_CASE("the f32 row-major CUDA variants decline half, transposed and batched problems", "[gemm][layouts]") {
  // gemm_half_mma is the one CUDA variant of the gemm plugin built for half inputs (tested below
  // and on the GPU); every other one is an f32 row-major kernel.
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& s = reg.op("gemm");
  kiln::DeviceInfo h200;
  h200.device = kiln::Device::cuda(0);
  h200.cc_major = 9;
  h200.sm_count = 132;
  int checked = 0;
  for (const kiln::Variant* v : reg.variants("gemm")) {
    // gemm_wgmma (architectures including 90) computes half inputs and every layout too: its
    // declines are checked in test_gemm_wgmma_gpu.
    if (v->device_kind() != kiln::DeviceKind::cuda || v->name() == "gemm_half_mma" || v->name() == "gemm_wgmma") continue;
    INFO(v->name());
    const kiln::Config c = v->default_config(h200);
    kiln::Problem half = s.problem_from_shape(kiln::bf16, "256x256x256", kiln::Device::cuda(0));
    const kiln::Support sh = v->supports(half, h200, c);
    CHECK_FALSE(sh.ok);
    CHECK(contains(sh.reason, "f32 inputs only"));
    const kiln::Support st = v->supports(s.problem_from_shape(kiln::f32, "256x256x256,ta=1", kiln::Device::cuda(0)), h200, c);
    CHECK_FALSE(st.ok);
    CHECK(contains(st.reason, "row-major A and B only"));
    const kiln::Support sb = v->supports(s.problem_from_shape(kiln::f32, "256x256x256,batch=2", kiln::Device::cuda(0)), h200, c);
    CHECK_FALSE(sb.ok);
    CHECK(contains(sb.reason, "batch = 2"));
    ++checked;
  }
#if KILN_HAS_CUDA
  CHECK(checked > 0);
#else
  CHECK(checked == 0);  // host-only build: gemm_host is the only variant
#endif
}

#if KILN_HAS_CUDA
TEST_CASE("gemm_half_mma declines what its kernels cannot read, with the reason", "[gemm][layouts]") {
  kiln::Registry reg = make_registry();
  const kiln::OpSchema& s = reg.op("gemm");
  const kiln::Variant* v = reg.find_variant("gemm_half_mma");
  REQUIRE(v != nullptr);
  kiln::DeviceInfo h200;
  h200.device = kiln::Device::cuda(0);
  h200.cc_major = 9;
  h200.sm_count = 132;
  h200.smem_per_block_optin = 227 * 1024;
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::Config c = v->default_config(h200);
  CHECK(v->supports(s.problem_from_shape(kiln::bf16, "4096x4096x4096", gpu), h200, c).ok);
  CHECK(v->supports(s.problem_from_shape(kiln::f16, "100x37x45,tb=1,c16=1,batch=3", gpu), h200, c).ok);
  CHECK(contains(v->supports(s.problem_from_shape(kiln::bf16, "64x64x64,ta=1", gpu), h200, c).reason, "row-major A only"));
  CHECK(contains(v->supports(s.problem_from_shape(kiln::f32, "64x64x64", gpu), h200, c).reason, "f16 and bf16 inputs only"));
  kiln::Problem unaligned = s.problem_from_shape(kiln::bf16, "64x64x63", gpu);
  unaligned.align_bytes = 2;
  CHECK(contains(v->supports(unaligned, h200, c).reason, "16-byte aligned"));
  kiln::DeviceInfo old = h200;
  old.cc_major = 7;
  CHECK(contains(v->supports(s.problem_from_shape(kiln::bf16, "64x64x64", gpu), old, c).reason, "compute capability 8.0"));
  // Every instantiated config enumerates on an H200 for both B layouts.
  CHECK(v->space().enumerate(h200, s.problem_from_shape(kiln::bf16, "64x64x64", gpu)).size() == 3);
  CHECK(v->space().enumerate(h200, s.problem_from_shape(kiln::bf16, "64x64x64,tb=1", gpu)).size() == 3);
}
#endif

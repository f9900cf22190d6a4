// Cheap tuning on a GPU (issue 14; run on the GPU machine, skipped without one): the device fill
// gives the host fill's bits, the device relative error equals the host one, and with the real
// plugins a large gemm takes its expected outputs from the cuBLAS oracle (checked on a sample),
// while a gemm kernel that is wrong in one element still fails and a wrong oracle is refused.
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include <kiln/kiln.hpp>
#include <kiln/tuner/evaluator.hpp>
#include <kiln/tuner/oracle.hpp>
#include <kiln/tuner/tuner.hpp>

#include "catch.hpp"

namespace {

const kiln::Device kGpu = kiln::Device::cuda(0);

kiln::Runtime& runtime() {
  static kiln::Runtime rt = [] {
    kiln::RuntimeOptions o;
    o.plugin_dirs = {KILN_PLUGIN_DIR};
    o.use_default_db_paths = false;
    o.tune_mode = "off";
    return kiln::Runtime(o);
  }();
  return rt;
}

// A real variant whose launch then overwrites the last element of its last output: an edge bug.
class LastElementWrong final : public kiln::Variant {
 public:
  explicit LastElementWrong(const kiln::Variant& inner)
      : Variant({inner.name() + "_last_wrong", inner.op(), kiln::DeviceKind::cuda, inner.dtypes(), 0, "edge bug"},
                inner.space()),
        inner_(&inner) {}
  kiln::Config default_config(const kiln::DeviceInfo& d) const override { return inner_->default_config(d); }
  kiln::Support supports(const kiln::Problem& p, const kiln::DeviceInfo& d, const kiln::Config& c) const override {
    return inner_->supports(p, d, c);
  }
  std::size_t workspace_bytes(const kiln::Problem& p, const kiln::Config& c) const override {
    return inner_->workspace_bytes(p, c);
  }
  kiln::Status launch(const kiln::Args& a, const kiln::Problem& p, const kiln::Config& c, void* ws,
                      kiln::Stream s) const override {
    kiln::Status st = inner_->launch(a, p, c, ws, s);
    if (!st.ok()) return st;
    const kiln::TensorRef& out = a.tensor(a.tensor_count() - 1);
    char* last = static_cast<char*>(out.data) +
                 ((out.rows() - 1) * out.row_stride + out.cols() - 1) * static_cast<std::int64_t>(kiln::dtype_size(out.dtype));
    const float wrong = 12345.0f;
    cudaMemcpyAsync(last, &wrong, sizeof wrong, cudaMemcpyHostToDevice, static_cast<cudaStream_t>(s.handle()));
    cudaStreamSynchronize(static_cast<cudaStream_t>(s.handle()));
    return kiln::Status();
  }

 private:
  const kiln::Variant* inner_;
};

}  // namespace

TEST_CASE("device fill_random gives the host fill's bits, dense and pitched", "[gpu]") {
  struct Case {
    kiln::DType dtype;
    kiln::InputDistribution dist;
  };
  const Case cases[] = {{kiln::f32, kiln::InputDistribution::default_for(kiln::f32)},
                        {kiln::f32, kiln::InputDistribution::real(-0.1, 1.1)},
                        {kiln::f64, kiln::InputDistribution::default_for(kiln::f64)},
                        {kiln::f16, kiln::InputDistribution::default_for(kiln::f16)},
                        {kiln::bf16, kiln::InputDistribution::default_for(kiln::bf16)},
                        {kiln::i32, kiln::InputDistribution::default_for(kiln::i32)},
                        {kiln::u32, kiln::InputDistribution::default_for(kiln::u32)},
                        {kiln::u8, kiln::InputDistribution::default_for(kiln::u8)},
                        {kiln::i64, kiln::InputDistribution::default_for(kiln::i64)}};
  for (const Case& c : cases) {
    for (const bool pitched : {false, true}) {
      INFO(kiln::dtype_name(c.dtype) << (pitched ? " pitched" : " dense"));
      const std::int64_t rows = 67, cols = 1001;
      auto host = kiln::Buffer::alloc(kiln::Device::host(), c.dtype, {rows, cols});
      auto dev = pitched ? kiln::Buffer::alloc_pitched(kGpu, c.dtype, rows, cols) : kiln::Buffer::alloc(kGpu, c.dtype, {rows, cols});
      kiln::fill_random(host.ref(), c.dist, 77);
      kiln::fill_random(dev.ref(), c.dist, 77);
      auto back = kiln::Buffer::alloc(kiln::Device::host(), c.dtype, {rows, cols});
      back.copy_from(dev);
      REQUIRE(std::memcmp(back.data(), host.data(), static_cast<std::size_t>(rows * cols) * kiln::dtype_size(c.dtype)) == 0);
    }
  }
}

TEST_CASE("device relative_error equals the host measure, NaN and poison included", "[gpu]") {
  const std::int64_t rows = 513, cols = 1029;
  auto e = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {rows, cols});
  auto g = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {rows, cols});
  kiln::fill_random(e.ref(), kiln::InputDistribution::default_for(kiln::f32), 1);
  g.copy_from(e);
  for (std::int64_t i = 0; i < rows * cols; i += 97) g.ref().as<float>()[i] += 1e-3f;
  auto de = kiln::Buffer::alloc_pitched(kGpu, kiln::f32, rows, cols);
  auto dg = kiln::Buffer::alloc(kGpu, kiln::f32, {rows, cols});
  de.copy_from(e);
  dg.copy_from(g);
  const double host = kiln::relative_error(g.ref(), e.ref());
  const double device = kiln::relative_error(dg.ref(), de.ref());
  CHECK(host > 0.0);
  CHECK(device == Approx(host).epsilon(1e-9));
  dg.fill_bytes(0xFF);  // poisoned: NaN everywhere
  CHECK(std::isinf(kiln::relative_error(dg.ref(), de.ref())));
  CHECK_THROWS_AS(kiln::relative_error(dg.ref(), e.ref()), kiln::ArgumentError);  // two devices
}

TEST_CASE("gemm on the GPU: the cuBLAS oracle, checked on a sample; wrong kernels still fail", "[gpu]") {
  kiln::Runtime& rt = runtime();
  REQUIRE(rt.registry().find_variant("gemm_cublas"));
  const kiln::OpSchema& schema = rt.registry().op("gemm");
  const kiln::Problem p = schema.problem_from_shape(kiln::f32, "2047x1999x3001", kGpu);
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  kiln::EvaluatorOptions o;
  const auto oracle = kiln::choose_oracle(rt.registry(), p, dev, o);
  REQUIRE(oracle);
  CHECK(oracle->variant->name() == "gemm_cublas");
  o.oracle = oracle;
  const auto t0 = std::chrono::steady_clock::now();
  kiln::ProblemEvaluator ev(p, o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(ev.expected_source());
  CHECK(ev.expected_source().rfind("oracle gemm_cublas", 0) == 0);
  CHECK(seconds < 2.0);  // the host reference of 2.5e10 flop would take far longer
  WARN("gemm 2047x1999x3001: inputs and oracle expected outputs in " << seconds << " s");

  int checked = 0;
  for (const kiln::Variant* v : rt.registry().variants("gemm")) {
    if (v->device_kind() != kiln::DeviceKind::cuda) continue;
    // The evaluator's problem carries the alignment of the buffers it allocated (a 1999-column
    // f32 matrix has 4-byte rows), so candidates are chosen for that problem, not for p.
    const kiln::Config c = v->default_config_for(dev, ev.problem());
    if (!kiln::candidate_usable(*v, c, ev.problem(), dev, nullptr)) continue;
    INFO(v->name());
    const kiln::CandidateResult good = ev.check({v, c, true});
    INFO(good.reason);
    CHECK(good.ok());
    LastElementWrong broken(*v);
    const kiln::CandidateResult r = ev.check({&broken, c, true});
    CHECK(r.outcome == kiln::Outcome::failed);
    ++checked;
  }
  CHECK(checked >= 2);

  // A wrong oracle is refused by its sample check (the corner is sampled); the evaluator falls
  // back to the host reference, and the correct kernels still pass.
  const kiln::Problem small = schema.problem_from_shape(kiln::f32, "300x200x100", kGpu);
  LastElementWrong bad_oracle(*oracle->variant);
  kiln::EvaluatorOptions ob;
  ob.oracle = kiln::Candidate{&bad_oracle, oracle->variant->default_config_for(dev, small), true};
  kiln::ProblemEvaluator fallback(small, ob);
  INFO(fallback.expected_source());
  CHECK(fallback.expected_source().rfind("host reference (oracle gemm_cublas_last_wrong", 0) == 0);
  CHECK(fallback.check({oracle->variant, oracle->variant->default_config_for(dev, small), true}).ok());
}

TEST_CASE("Tuner::tune of a large add takes seconds, not tens of seconds", "[gpu]") {
  kiln::Runtime& rt = runtime();
  kiln::Tuner tuner(rt);
  const kiln::Problem p = rt.registry().op("add").problem_from_shape(kiln::f32, "16384x16384", kGpu);
  kiln::TuneOptions o;
  o.store = false;
  o.search.strategy = "anneal";
  o.search.budget.evals = 12;
  const auto t0 = std::chrono::steady_clock::now();
  const kiln::TuneReport r = tuner.tune(p, o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.error << " / " << r.expected_source);
  REQUIRE(r.ok());
  CHECK(r.expected_source.rfind("oracle ", 0) == 0);
  WARN("add 16384x16384: tuned in " << seconds << " s (inputs and expected outputs " << r.prepare_seconds
                                     << " s, search " << r.search.seconds << " s)");
  CHECK(r.prepare_seconds < 3.0);
  CHECK(seconds < 15.0);
}

// The tuner on a CUDA device (run on the GPU machine; skipped without one): validation before
// timing, a non-sticky launch error recorded as a fault while the search goes on, CUDA-event
// timing with and without the L2 flush, the background host reference, storing, and a fresh
// runtime's op() dispatching the tuned choice; lazy mode and the first-use race on CUDA.
#include <filesystem>
#include <random>

#include <kiln/tuner/evaluator.hpp>
#include <kiln/tuner/tuner.hpp>

#include "catch.hpp"
#include "gpu/cuda_scale_variants.hpp"
#include "scale_op.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("kiln_tuner_gpu_" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

kiln::Registry cuda_registry() {
  kiln::Registry reg;
  reg.add_op(kiln_test::scale_schema());
  reg.add_variant(kiln_test::make_scale_cuda());
  reg.add_variant(kiln_test::make_scale_cuda_badcfg());
  return reg;
}

// y = 2 x on the device through op(); checks every element.
void run_scale(kiln::Runtime& rt, std::int64_t n) {
  const kiln::Device dev = kiln::Device::cuda(0);
  std::vector<float> hx(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) hx[static_cast<std::size_t>(i)] = static_cast<float>(i % 1000) - 500.0f;
  auto x = kiln::Buffer::alloc(dev, kiln::f32, {n});
  auto y = kiln::Buffer::alloc(dev, kiln::f32, {n});
  x.copy_from_host(hx.data(), hx.size() * sizeof(float));
  y.fill_bytes(0xFF);
  kiln::OwnedStream s(dev);
  rt.op("scale")({x, y}, s);
  s.synchronize();
  const auto hy = y.to_host<float>();
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(hy[static_cast<std::size_t>(i)] == 2.0f * hx[static_cast<std::size_t>(i)]);
}

}  // namespace

TEST_CASE("tune on CUDA: faults recorded, events timing, background reference, stored and dispatched") {
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  kiln::TuningEntry entry;
  {
    kiln::Runtime rt(cuda_registry(), kiln_test::offline_options(user));
    const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "n=1048577", kiln::Device::cuda(0));
    kiln::TuneOptions o;
    o.evaluator.background_reference = true;
    o.search.timing.runs = 10;
    const kiln::TuneReport r = kiln::Tuner(rt).tune(p, o);
    REQUIRE(r.ok());
    CHECK(r.stored);
    CHECK(r.entry->variant == "scale_cuda");
    CHECK(r.reference_seconds > 0.0);
    bool saw_fault = false;
    for (const auto& x : r.search.results) {
      CHECK_FALSE(x.provisional);  // every provisional check was confirmed
      if (x.candidate.variant->name() == "scale_cuda_badcfg") {
        saw_fault = true;
        CHECK(x.outcome == kiln::Outcome::fault);
        CHECK_FALSE(x.device_lost);
        INFO("fault reason: " << x.reason);
        CHECK_FALSE(x.reason.empty());
      } else {
        CHECK(x.ok());
        CHECK(x.error == 0.0);
        CHECK(x.timing.samples > 0);
        CHECK(x.timing.median_us > 0.0);
      }
    }
    CHECK(saw_fault);
    CHECK(r.search.evaluations() == 5);
    CHECK_FALSE(r.search.device_lost);
    entry = *r.entry;
  }
  kiln::Runtime fresh(cuda_registry(), kiln_test::offline_options(user));
  run_scale(fresh, 1048577);
  const kiln::Decision d =
      fresh.explain(fresh.registry().op("scale").problem_from_shape(kiln::f32, "1048577", kiln::Device::cuda(0)));
  CHECK(d.from == kiln::Decision::From::database);
  CHECK(d.variant->name() == entry.variant);
  CHECK(d.config == entry.config);
}

TEST_CASE("ProblemEvaluator on CUDA: check then time, cold and warm") {
  kiln::Registry reg = cuda_registry();
  const kiln::Variant* v = reg.find_variant("scale_cuda");
  const kiln::Problem p = reg.op("scale").problem_from_shape(kiln::f32, "n=4194304", kiln::Device::cuda(0));
  for (bool warm : {false, true}) {
    kiln::EvaluatorOptions eo;
    eo.warm = warm;
    eo.pitched = true;  // rank 1: no effect, but must be accepted
    kiln::ProblemEvaluator ev(p, eo);
    const kiln::Candidate c{v, kiln::Config{{"block", 256}}, false};
    const kiln::CandidateResult checked = ev.check(c);
    REQUIRE(checked.ok());
    CHECK_FALSE(checked.provisional);
    kiln::TimingOptions t;
    t.runs = 8;
    const kiln::CandidateResult timed = ev.time(c, t);
    REQUIRE(timed.ok());
    CHECK(timed.timing.samples == 8);
    CHECK(timed.timing.median_us > 0.0);
    CHECK_FALSE(ev.device_lost());
  }
}

TEST_CASE("lazy mode on CUDA: the first call tunes, the result is stored") {
  TempDir dir;
  kiln::RuntimeOptions o = kiln_test::offline_options(dir.file("tuning.yaml"));
  o.tune_mode = "lazy";
  kiln::Runtime rt(cuda_registry(), o);
  run_scale(rt, 4099);
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "4099", kiln::Device::cuda(0));
  const kiln::Decision& d = rt.dispatcher().decide(p, kiln::device_info(kiln::Device::cuda(0)));
  CHECK(d.from == kiln::Decision::From::tuned_now);
  CHECK(d.variant->name() == "scale_cuda");
  const auto table = kiln::TuningDb::read_file(dir.file("tuning.yaml"));
  CHECK(table.at(kiln::device_info(kiln::Device::cuda(0)).fingerprint()).at("scale").count("f32|n=4099") == 1);
}

TEST_CASE("race mode on CUDA: the first call times the prediction against the others and keeps the faster") {
  // No database: the prediction is the highest priority, scale_cuda_slow; scale_cuda is far
  // faster and scale_cuda_badcfg cannot launch (block 2048): the race must keep scale_cuda and
  // the result must be right.
  kiln::Registry reg = cuda_registry();
  reg.add_variant(kiln_test::make_scale_cuda_slow());
  kiln::RuntimeOptions o = kiln_test::offline_options();
  o.tune_mode = "race";
  kiln::Runtime rt(std::move(reg), o);
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "100003", kiln::Device::cuda(0));
  CHECK(rt.explain(p).variant->name() == "scale_cuda_slow");  // the prediction
  run_scale(rt, 100003);
  const kiln::Decision& d = rt.dispatcher().decide(p, kiln::device_info(kiln::Device::cuda(0)));
  CHECK(d.raced);
  CHECK(d.variant->name() == "scale_cuda");
  INFO(d.race_note);
  CHECK_THAT(d.race_note, KILN_CONTAINS("against the prediction scale_cuda_slow"));
  run_scale(rt, 100003);  // the memoised decision runs again
}


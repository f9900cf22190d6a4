// The first-use race (KILN_TUNE=race): the prediction against the dispatcher's runner-up, timed on
// the problem.  Host variants of the test op `scale` that differ only in speed, so the race's
// choice is known; RaceOptions::allow_host lets it run on the host (op() races CUDA problems only).
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>

#include <kiln/tuner/first_use_race.hpp>

#include "catch.hpp"
#include "scale_op.hpp"

namespace {

// scale with a fixed extra cost per launch (a busy wait, so a preempted sleep cannot shorten it).
class PacedScale final : public kiln::Variant {
 public:
  PacedScale(std::string name, int priority, int extra_us)
      : Variant({std::move(name), "scale", kiln::DeviceKind::host, {kiln::f32}, priority, "paced test variant"},
                kiln::ParamSpace().param("unroll", {1})),
        extra_us_(extra_us) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return {{"unroll", 1}}; }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override {
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args& a, const kiln::Problem& p, const kiln::Config&, void*,
                      kiln::Stream) const override {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(extra_us_);
    const float f = static_cast<float>(a.scalar(0));
    for (std::int64_t i = 0; i < p.dims[0]; ++i) a.tensor(1).as<float>()[i] = f * a.tensor(0).as<float>()[i];
    while (std::chrono::steady_clock::now() < until) {
    }
    return kiln::Status();
  }

 private:
  int extra_us_;
};

// The highest priority wins with no evidence; `slow_us` and `fast_us` are their extra costs.
kiln::Registry paced_registry(int first_us, int second_us) {
  kiln::Registry r;
  r.add_op(kiln_test::scale_schema());
  r.add_variant(std::make_shared<PacedScale>("scale_first", 10, first_us));
  r.add_variant(std::make_shared<PacedScale>("scale_second", 5, second_us));
  return r;
}

kiln::Problem scale_problem(const kiln::Runtime& rt, const char* n) {
  return rt.registry().op("scale").problem_from_shape(kiln::f32, n, kiln::Device::host());
}

kiln::RaceOptions on_host() {
  kiln::RaceOptions o;
  o.allow_host = true;
  o.max_seconds = 2.0;  // host timings: room for the busy waits
  return o;
}

}  // namespace

TEST_CASE("decide_uncached with an excluded variant gives the runner-up") {
  kiln::Runtime rt(paced_registry(0, 0), kiln_test::offline_options());
  const kiln::Problem p = scale_problem(rt, "64");
  const kiln::DeviceInfo& dev = kiln::device_info(kiln::Device::host());
  const kiln::Decision first = rt.dispatcher().decide_uncached(p, dev);
  REQUIRE(first.variant);
  CHECK(first.variant->name() == "scale_first");
  kiln::Dispatcher::LeaveOneOut without;
  without.excluded_variants = {"scale_first"};
  const kiln::Decision second = rt.dispatcher().decide_uncached(p, dev, without);
  REQUIRE(second.variant);
  CHECK(second.variant->name() == "scale_second");
  without.excluded_variants = {"scale_second"};
  CHECK(rt.dispatcher().decide_uncached(p, dev, without).variant->name() == "scale_first");
}

TEST_CASE("the race replaces a slow prediction by a faster runner-up") {
  kiln::Runtime rt(paced_registry(/*first_us=*/400, /*second_us=*/0), kiln_test::offline_options());
  const kiln::Problem p = scale_problem(rt, "256");
  const auto d = kiln::race_first_use(rt, p, kiln::device_info(kiln::Device::host()), on_host());
  REQUIRE(d.has_value());
  CHECK(d->raced);
  REQUIRE(d->variant);
  CHECK(d->variant->name() == "scale_second");
  CHECK_THAT(d->race_note, KILN_CONTAINS("the runner-up scale_second"));
  CHECK_THAT(d->race_note, KILN_CONTAINS("against the prediction scale_first"));
}

TEST_CASE("the race keeps a prediction that is as fast or faster") {
  kiln::Runtime rt(paced_registry(/*first_us=*/0, /*second_us=*/400), kiln_test::offline_options());
  const auto d = kiln::race_first_use(rt, scale_problem(rt, "256"), kiln::device_info(kiln::Device::host()), on_host());
  REQUIRE(d.has_value());
  CHECK(d->raced);
  CHECK(d->variant->name() == "scale_first");
  CHECK_THAT(d->race_note, KILN_CONTAINS("the prediction scale_first"));
}

TEST_CASE("the race leaves exact entries, single candidates and host problems alone") {
  const kiln::DeviceInfo& dev = kiln::device_info(kiln::Device::host());
  SECTION("host problems are not raced unless asked") {
    kiln::Runtime rt(paced_registry(400, 0), kiln_test::offline_options());
    CHECK_FALSE(kiln::race_first_use(rt, scale_problem(rt, "256"), dev).has_value());
  }
  SECTION("one variant: no runner-up") {
    kiln::Registry r;
    r.add_op(kiln_test::scale_schema());
    r.add_variant(std::make_shared<PacedScale>("scale_only", 10, 0));
    kiln::Runtime rt(std::move(r), kiln_test::offline_options());
    CHECK_FALSE(kiln::race_first_use(rt, scale_problem(rt, "256"), dev, on_host()).has_value());
  }
  SECTION("an exact entry is not raced") {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("kiln_race_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir);
    struct Cleanup {
      std::filesystem::path dir;
      ~Cleanup() { std::filesystem::remove_all(dir); }
    } cleanup{dir};
    kiln::Runtime rt(paced_registry(400, 0), kiln_test::offline_options((dir / "tuning.yaml").string()));
    const kiln::Problem p = scale_problem(rt, "256");
    kiln::TuningEntry e;
    e.variant = "scale_first";
    e.config = {{"unroll", 1}};
    e.median_us = 500;
    rt.dispatcher().update_database([&] { rt.db().put(dev.fingerprint(), "scale", p.key(), e); });
    const kiln::Decision exact = rt.dispatcher().decide_uncached(p, dev);
    REQUIRE(exact.evidence == kiln::Decision::Evidence::exact_entry);
    CHECK_FALSE(kiln::race_first_use(rt, p, dev, on_host()).has_value());
  }
}

TEST_CASE("KILN_TUNE unset means race") {
  const char* saved = std::getenv("KILN_TUNE");
  const std::string keep = saved ? saved : "";
  unsetenv("KILN_TUNE");
  kiln::RuntimeOptions o = kiln_test::offline_options();
  o.tune_mode = "";  // read the environment
  const std::string mode = kiln::Runtime(paced_registry(0, 0), o).tune_mode();
  if (saved) setenv("KILN_TUNE", keep.c_str(), 1);
  CHECK(mode == "race");
}

TEST_CASE("KILN_TUNE=race is a mode of its own") {
  kiln::RuntimeOptions o = kiln_test::offline_options();
  o.tune_mode = "race";
  kiln::Runtime rt(paced_registry(400, 0), o);
  CHECK(rt.tune_mode() == "race");
  // op() on the host keeps the prediction (the race is for CUDA problems): the decision is the
  // dispatcher's, not raced.
  const kiln::Problem p = scale_problem(rt, "64");
  const kiln::Decision& d = rt.dispatcher().decide(p, kiln::device_info(kiln::Device::host()));
  CHECK_FALSE(d.raced);
  CHECK(d.variant->name() == "scale_first");
}

TEST_CASE("a tiny problem races every variant at its default") {
  kiln::Registry r;
  r.add_op(kiln_test::scale_schema());
  r.add_variant(std::make_shared<PacedScale>("scale_first", 10, 100));
  r.add_variant(std::make_shared<PacedScale>("scale_second", 5, 100));
  r.add_variant(std::make_shared<PacedScale>("scale_third", 1, 0));
  kiln::Runtime rt(std::move(r), kiln_test::offline_options());
  const kiln::Problem p = scale_problem(rt, "256");
  kiln::RaceOptions o = on_host();
  SECTION("below tiny_us: the third variant joins and wins") {
    o.tiny_us = 1000;  // host timings: the prediction (100 us) counts as tiny here
    const auto d = kiln::race_first_use(rt, p, kiln::device_info(kiln::Device::host()), o);
    REQUIRE(d.has_value());
    CHECK(d->variant->name() == "scale_third");
    CHECK_THAT(d->config_note, KILN_CONTAINS("every variant raced at its default"));
  }
  SECTION("above it: only the runner-up races, and the prediction stays") {
    o.tiny_us = 10;
    const auto d = kiln::race_first_use(rt, p, kiln::device_info(kiln::Device::host()), o);
    REQUIRE(d.has_value());
    CHECK(d->variant->name() != "scale_third");
  }
}

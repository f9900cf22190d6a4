// End-to-end tuning on the host with the test op `scale`: validation of every candidate (wrong,
// unwritten and throwing variants are recorded and never chosen), storing the winner with its
// metadata, resume, and op() in a fresh runtime dispatching the tuned choice.
#include <filesystem>
#include <random>
#include <stdexcept>

#include <kiln/tuner/tuner.hpp>

#include "catch.hpp"
#include "scale_op.hpp"

namespace fs = std::filesystem;
using kiln_test::last_run;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("kiln_tuner_" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// A misbehaving scale variant: how it misbehaves is its name.
class BadScale final : public kiln::Variant {
 public:
  enum class How { wrong, unwritten, throws, error };
  BadScale(std::string name, How how)
      : Variant({std::move(name), "scale", kiln::DeviceKind::host, {kiln::f32}, 100, "misbehaves"}, kiln::ParamSpace()),
        how_(how) {}
  kiln::Config default_config(const kiln::DeviceInfo&) const override { return {}; }
  kiln::Support supports(const kiln::Problem&, const kiln::DeviceInfo&, const kiln::Config&) const override {
    return kiln::Support::yes();
  }
  kiln::Status launch(const kiln::Args& a, const kiln::Problem& p, const kiln::Config&, void*, kiln::Stream) const override {
    const float* x = a.tensor(0).as<const float>();
    float* y = a.tensor(1).as<float>();
    switch (how_) {
      case How::wrong:
        for (std::int64_t i = 0; i < p.dims[0]; ++i) y[i] = 3.0f * x[i];
        break;
      case How::unwritten:
        for (std::int64_t i = 0; i + 1 < p.dims[0]; ++i) y[i] = 2.0f * x[i];
        break;
      case How::throws:
        throw std::runtime_error("boom");
      case How::error:
        return kiln::Status::fail(kiln::ErrorKind::internal, "refuses to run");
    }
    return kiln::Status();
  }

 private:
  How how_;
};

kiln::TuneOptions quick() {
  kiln::TuneOptions o;
  o.search.timing.runs = 5;
  o.search.timing.warmup = 1;
  o.search.retime_rounds = 2;
  return o;
}

void run_scale(kiln::Runtime& rt, std::int64_t n) {
  auto x = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {n});
  auto y = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {n});
  for (std::int64_t i = 0; i < n; ++i) x.ref().as<float>()[i] = static_cast<float>(i);
  rt.op("scale")({x, y});
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(y.ref().as<float>()[i] == 2.0f * static_cast<float>(i));
}

}  // namespace

TEST_CASE("tune, store, and a fresh runtime's op() dispatches the tuned choice") {
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  std::string variant;
  kiln::Config config;
  {
    kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options(user));
    const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "n=64", kiln::Device::host());
    kiln::Tuner tuner(rt);
    CHECK_FALSE(tuner.current_entry(p));
    const kiln::TuneReport r = tuner.tune(p, quick());
    REQUIRE(r.ok());
    CHECK(r.stored);
    CHECK(r.db_path == user);
    CHECK(r.space.candidates.size() == 6);  // 2 variants x unroll {1, 2, 4}
    CHECK(r.search.evaluations() == 6);
    // The 4 fastest, plus each of the 2 variants' default config the search timed within reach of
    // the fastest but lower down (retime.hpp); host timings decide which.
    CHECK(r.search.finalists.size() >= 4);
    CHECK(r.search.finalists.size() <= 6);
    variant = r.entry->variant;
    config = r.entry->config;
    REQUIRE(tuner.current_entry(p));
    CHECK(tuner.current_entry(p)->variant == variant);

    const kiln::TuningTable table = kiln::TuningDb::read_file(user);
    const std::string fp = kiln::device_info(kiln::Device::host()).fingerprint();
    const kiln::TuningEntry& e = table.at(fp).at("scale").at("f32|n=64");
    CHECK(e.variant == variant);
    CHECK(e.config == config);
    CHECK(e.samples > 0);
    CHECK(e.median_us > 0.0);
    CHECK(e.throughput > 0.0);
    CHECK(e.throughput_unit == "GB/s");
    CHECK(e.plugin_name == "direct");
    CHECK(e.tuned_at.size() == 20);
    // The other variant's fastest config is kept beside the winner, with its time.
    REQUIRE(e.alternatives.size() == 1);
    CHECK(e.alternatives[0].variant != variant);
    CHECK(e.alternatives[0].median_us > 0.0);
    CHECK(e.alternatives == r.entry->alternatives);

    // The tuning runtime's own op() sees the entry at once.
    run_scale(rt, 64);
    CHECK(last_run().variant == variant);
    CHECK(last_run().config == config);
  }
  kiln::Runtime fresh(kiln_test::scale_registry(), kiln_test::offline_options(user));
  run_scale(fresh, 64);
  CHECK(last_run().variant == variant);
  CHECK(last_run().config == config);
  const kiln::Decision d =
      fresh.explain(fresh.registry().op("scale").problem_from_shape(kiln::f32, "64", kiln::Device::host()));
  CHECK(d.from == kiln::Decision::From::database);
  REQUIRE(d.hit);
  CHECK(d.hit->level == kiln::FallbackLevel::exact);
  CHECK(d.hit->exact_problem);
}

TEST_CASE("wrong, unwritten, throwing and erroring candidates are recorded and never chosen") {
  kiln::Registry reg;
  reg.add_op(kiln_test::scale_schema());
  reg.add_variant(std::make_shared<kiln_test::ScaleVariant>("scale_any", 5, false));
  reg.add_variant(std::make_shared<BadScale>("scale_wrong", BadScale::How::wrong));
  reg.add_variant(std::make_shared<BadScale>("scale_unwritten", BadScale::How::unwritten));
  reg.add_variant(std::make_shared<BadScale>("scale_throws", BadScale::How::throws));
  reg.add_variant(std::make_shared<BadScale>("scale_error", BadScale::How::error));
  kiln::Runtime rt(std::move(reg), kiln_test::offline_options());
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "n=1000", kiln::Device::host());
  kiln::TuneOptions o = quick();
  o.store = false;
  const kiln::TuneReport r = kiln::Tuner(rt).tune(p, o);
  REQUIRE(r.ok());
  CHECK_FALSE(r.stored);
  CHECK(r.entry->variant == "scale_any");
  int failed = 0;
  for (const auto& x : r.search.results) {
    const std::string name = x.candidate.variant->name();
    if (name == "scale_any") {
      CHECK(x.ok());
      continue;
    }
    ++failed;
    CAPTURE(name, x.reason);
    CHECK(x.outcome == kiln::Outcome::failed);
    if (name == "scale_wrong") CHECK(x.reason.find("relative error") != std::string::npos);
    if (name == "scale_unwritten") CHECK(x.reason.find("unwritten") != std::string::npos);
    if (name == "scale_throws") CHECK(x.reason.find("boom") != std::string::npos);
    if (name == "scale_error") CHECK(x.reason.find("refuses to run") != std::string::npos);
  }
  CHECK(failed == 4);
  for (const auto& f : r.search.finalists) CHECK(f.candidate.variant->name() == "scale_any");
}

TEST_CASE("a problem no variant supports reports why, and nothing is stored") {
  TempDir dir;
  kiln::Registry reg;
  reg.add_op(kiln_test::scale_schema());
  reg.add_variant(std::make_shared<kiln_test::ScaleVariant>("scale_even", 10, true));
  kiln::Runtime rt(std::move(reg), kiln_test::offline_options(dir.file("t.yaml")));
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "7", kiln::Device::host());
  const kiln::TuneReport r = kiln::Tuner(rt).tune(p, quick());
  CHECK_FALSE(r.ok());
  CHECK(r.error.find("no variant of 'scale' can run f32|n=7") != std::string::npos);
  REQUIRE_FALSE(r.space.rejected.empty());
  CHECK(r.space.rejected[0].reason == "n must be even");
  CHECK_FALSE(fs::exists(dir.file("t.yaml")));
}

TEST_CASE("resume: a stored entry is current until its config stops being valid") {
  TempDir dir;
  const std::string user = dir.file("tuning.yaml");
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options(user));
  kiln::Tuner tuner(rt);
  const auto& schema = rt.registry().op("scale");
  const kiln::Problem p = schema.problem_from_shape(kiln::f32, "n=40", kiln::Device::host());
  REQUIRE(tuner.tune(p, quick()).stored);
  CHECK(tuner.current_entry(p));
  // An entry whose config is no longer in the variant's space is not current.
  kiln::TuningEntry bad = *tuner.current_entry(p);
  bad.config = kiln::Config{{"unroll", 3}};
  rt.db().put(kiln::device_info(kiln::Device::host()).fingerprint(), "scale", p.key(), bad);
  CHECK_FALSE(tuner.current_entry(p));
  // Another problem is not tuned.
  CHECK_FALSE(tuner.current_entry(schema.problem_from_shape(kiln::f32, "n=48", kiln::Device::host())));
}

TEST_CASE("resume: an entry whose alternative was timed with another plugin build is tuned again") {
  TempDir dir;
  kiln::Registry r;
  r.add_op(kiln_test::scale_schema());
  const kiln::Source src{"scale", "0.1.0", "build-2", ""};
  r.add_variant(std::make_shared<kiln_test::ScaleVariant>("scale_even", 10, true), src);
  r.add_variant(std::make_shared<kiln_test::ScaleVariant>("scale_any", 5, false), src);
  kiln::Runtime rt(std::move(r), kiln_test::offline_options(dir.file("tuning.yaml")));
  kiln::Tuner tuner(rt);
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "n=40", kiln::Device::host());
  const kiln::TuneReport report = tuner.tune(p, quick());
  REQUIRE(report.stored);
  for (const kiln::TunedAlternative& a : report.entry->alternatives)
    CHECK(a.plugin_build == "build-2");  // recorded with each alternative
  REQUIRE(tuner.current_entry(p));
  // The plugin of the variant that lost changed since: its time is no evidence, tune again.
  kiln::TuningEntry old = *tuner.current_entry(p);
  const std::string loser = old.variant == "scale_even" ? "scale_any" : "scale_even";
  old.alternatives = {{loser, kiln::Config{{"unroll", 1}}, old.median_us * 1.5, "build-1"}};
  rt.db().put(kiln::device_info(kiln::Device::host()).fingerprint(), "scale", p.key(), old);
  CHECK_FALSE(tuner.current_entry(p));
  CHECK_FALSE(rt.dispatcher().alternative_current(old.alternatives[0]));
  // An alternative with no recorded build (a database from before builds were recorded) is current.
  old.alternatives[0].plugin_build.clear();
  rt.db().put(kiln::device_info(kiln::Device::host()).fingerprint(), "scale", p.key(), old);
  CHECK(tuner.current_entry(p));
}

TEST_CASE("alternatives: each other variant's fastest ok candidate, finalists' times first") {
  kiln_test::ScaleVariant even("scale_even", 10, true), any("scale_any", 5, false), third("scale_third", 1, false);
  auto result = [](const kiln::Variant& v, int unroll, double us, kiln::Outcome outcome = kiln::Outcome::ok) {
    kiln::CandidateResult r;
    r.candidate.variant = &v;
    r.candidate.config = kiln::Config{{"unroll", unroll}};
    r.outcome = outcome;
    r.timing.median_us = us;
    return r;
  };
  kiln::SearchResult s;
  s.results = {result(even, 1, 10.0), result(any, 1, 12.0), result(any, 2, 11.0), result(any, 4, 5.0, kiln::Outcome::failed),
               result(third, 1, 25.0), result(even, 2, 9.0)};
  s.winner = result(even, 2, 9.5);  // re-timed
  s.finalists = {*s.winner, result(any, 2, 11.5)};
  const auto alts = kiln::alternatives_of(s);
  // scale_any: its finalist time (11.5, re-timed beside the winner) over its search time (11.0);
  // its failed config never counts; the winner's variant is not an alternative; fastest first.
  // scale_third was timed in the search only: its time is scaled by the winner's re-timed over its
  // search-time median (9.5 / 9.0), so that it compares with the winner's.
  REQUIRE(alts.size() == 2);
  CHECK(alts[0].variant == "scale_any");
  CHECK(alts[0].config == kiln::Config{{"unroll", 2}});
  CHECK(alts[0].median_us == 11.5);
  CHECK(alts[1].variant == "scale_third");
  CHECK(alts[1].median_us == Approx(25.0 * 9.5 / 9.0));
  // A faster search-time result of a variant that is not a finalist replaces its slower one.
  s.results.push_back(result(third, 2, 18.0));
  const auto more = kiln::alternatives_of(s);
  REQUIRE(more.size() == 2);
  CHECK(more[1].variant == "scale_third");
  CHECK(more[1].config == kiln::Config{{"unroll", 2}});
  CHECK(more[1].median_us == Approx(18.0 * 9.5 / 9.0));
  // Without the winner's search-time result (it was not timed in the search) nothing is scaled.
  s.results.erase(s.results.begin() + 5);
  CHECK(kiln::alternatives_of(s)[1].median_us == 18.0);
}

TEST_CASE("throughput and timestamps") {
  auto s = kiln_test::scale_schema();
  const kiln::Problem p = s->problem_from_dims(kiln::f32, {1000000}, kiln::Device::host());
  CHECK(kiln::throughput(*s, p, 1000.0) == Approx(8.0));  // 8 MB in 1 ms = 8 GB/s
  CHECK(std::string(kiln::throughput_unit(*s)) == "GB/s");
  const std::string t = kiln::utc_timestamp();
  CHECK(t.size() == 20);
  CHECK(t[10] == 'T');
  CHECK(t.back() == 'Z');
}

TEST_CASE("tuner: a variant whose supports() throws is a rejected candidate, not an escaping exception") {
  kiln::Registry r = kiln_test::scale_registry();
  r.add_variant(std::make_shared<kiln_test::ThrowingSupportsScale>());
  kiln::Runtime rt(std::move(r), kiln_test::offline_options());
  const kiln::Problem p = rt.registry().op("scale").problem_from_dims(kiln::f32, {64}, kiln::Device::host());
  const kiln::SearchSpace s = kiln::build_search_space(rt.registry(), p, kiln::device_info(p.device));
  bool rejected = false;
  for (const kiln::Rejection& j : s.rejected)
    rejected |= j.example.variant->name() == "scale_throws" && j.reason == "supports() threw: supports exploded";
  CHECK(rejected);
  for (const kiln::Candidate& c : s.candidates) CHECK(c.variant->name() != "scale_throws");
  CHECK_FALSE(s.candidates.empty());
}

// The tuner's limits on hostile numbers: a time cap that holds with --runs 100000 (the host
// timing loop used to re-sort every sample after every run: minutes), and a report that says
// "nothing was evaluated" when nothing was, instead of "no candidate passed validation".
#include <kiln/kiln.hpp>
#include <kiln/tuner/timer.hpp>
#include <kiln/tuner/tuner.hpp>

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <thread>

#include "catch.hpp"
#include "scale_op.hpp"
#include "test_util.hpp"

using kiln_test::contains;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("the host timing loop is not quadratic and honours its time cap", "[hardening][timing]") {
  volatile int sink = 0;
  kiln::TimingOptions o;
  o.warmup = 3;
  o.runs = 100000;
  o.min_runs = 5;
  o.give_up_above_us = 1e9;  // finite: the early give-up test is on, as when a best exists
  auto t0 = std::chrono::steady_clock::now();
  kiln::Timing t = kiln::time_runs(kiln::Device::host(), kiln::Stream{}, [&] { sink = sink + 1; }, o);
  const double uncapped = seconds_since(t0);
  CHECK(t.samples == 100000);
  CHECK_FALSE(t.gave_up);
  CHECK(uncapped < 10.0);  // about 0.1 s; the per-run re-sort took minutes

  // A slow run under a cap: the cap stops it after min_runs once time is up.
  o.runs = 1000;
  o.max_seconds = 0.2;
  t0 = std::chrono::steady_clock::now();
  t = kiln::time_runs(kiln::Device::host(), kiln::Stream{},
                      [&] { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }, o);
  const double capped = seconds_since(t0);
  CHECK(t.samples >= 5);
  CHECK(t.samples < 1000);
  CHECK(capped < 2.0);

  // Give-up still works: a limit below every sample stops after min_runs.
  o.max_seconds = 0.0;
  o.runs = 100000;
  o.give_up_above_us = 0.0;
  t = kiln::time_runs(kiln::Device::host(), kiln::Stream{}, [&] { sink = sink + 1; }, o);
  CHECK(t.gave_up);
  CHECK(t.samples == 5);
}

TEST_CASE("racing: a first run over 3x the give-up limit and 20 us past it is hopeless", "[timing]") {
  CHECK(kiln::hopeless_first_run(2000.0, 100.0));   // 20x the limit
  CHECK(kiln::hopeless_first_run(301.0, 100.0));
  CHECK_FALSE(kiln::hopeless_first_run(299.0, 100.0));  // over the limit, not 3x: min_runs decide
  CHECK_FALSE(kiln::hopeless_first_run(2000.0, 1000.0));
  // Microsecond kernels: 5x the limit but only 8 us past it is noise, not a verdict.
  CHECK_FALSE(kiln::hopeless_first_run(10.0, 2.0));
  CHECK(kiln::hopeless_first_run(30.0, 2.0));
  // No best yet (an infinite limit): nothing is hopeless.
  CHECK_FALSE(kiln::hopeless_first_run(1e12, std::numeric_limits<double>::infinity()));
  // Host timings (which a preempted thread inflates) still wait for min_runs.
  kiln::TimingOptions o;
  o.warmup = 1;
  o.runs = 50;
  o.min_runs = 5;
  o.give_up_above_us = 100.0;
  const kiln::Timing t = kiln::time_runs(kiln::Device::host(), kiln::Stream{},
                                         [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }, o);
  CHECK(t.gave_up);
  CHECK(t.samples == 5);
}

TEST_CASE("tuning with --runs 100000 stays within --max-seconds-per-candidate", "[hardening][timing]") {
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "n=64", kiln::Device::host());
  kiln::Tuner tuner(rt);
  kiln::TuneOptions o;
  o.store = false;
  o.search.timing.runs = 100000;
  o.evaluator.max_seconds_per_candidate = 0.1;
  const auto t0 = std::chrono::steady_clock::now();
  const kiln::TuneReport r = tuner.tune(p, o);
  const double seconds = seconds_since(t0);
  REQUIRE(r.ok());
  CHECK(r.search.evaluations() == 6);
  CHECK(seconds < 30.0);  // 6 candidates x 0.1 s, generously; it took minutes before
}

TEST_CASE("a search that evaluated nothing says so", "[hardening][messages]") {
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "n=64", kiln::Device::host());
  kiln::Tuner tuner(rt);
  kiln::TuneOptions o;
  o.store = false;
  o.search.budget.seconds = 1e-12;  // spent before the first candidate
  const kiln::TuneReport r = tuner.tune(p, o);
  REQUIRE_FALSE(r.ok());
  CAPTURE(r.error);
  CHECK(r.search.evaluations() == 0);
  CHECK(contains(r.error, "no candidate was evaluated"));
  CHECK(contains(r.error, "budget"));
  CHECK_FALSE(contains(r.error, "passed validation"));
}

TEST_CASE("search counts past the CLI's bounds are refused, not run for ever", "[hardening][timing]") {
  // Re-timing has no time cap: retime_rounds = 2^31 - 1 ran for ever (and overflowed when
  // rounded up to even).  A C++ caller gets the CLI's bounds, with the field named.
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "n=64", kiln::Device::host());
  kiln::TuneOptions o;
  o.store = false;
  o.search.retime_rounds = std::numeric_limits<int>::max();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    kiln::Tuner(rt).tune(p, o);
    FAIL("accepted");
  } catch (const kiln::ArgumentError& e) {
    CHECK(std::string(e.what()) == "SearchOptions::retime_rounds = 2147483647, expected at most 1000");
  }
  CHECK(seconds_since(t0) < 10.0);
  o.search.retime_rounds = 5;
  o.search.retime_runs = 2000000000;
  CHECK_THROWS_AS(kiln::Tuner(rt).tune(p, o), kiln::ArgumentError);
  o.search.retime_runs = 3;
  o.search.timing.runs = 1000001;
  CHECK_THROWS_AS(kiln::Tuner(rt).tune(p, o), kiln::ArgumentError);
}

TEST_CASE("search counts below 1 and a NaN or negative tie fraction are refused by name", "[hardening][timing]") {
  // finalists 0 or -1, retime_rounds and retime_runs 0, min_runs -3 were clamped to 1 (or 2) without
  // a word, and a NaN or negative tie_fraction dropped out of the tie rule's max: it meant 0.
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "n=64", kiln::Device::host());
  auto refusal = [&](const std::function<void(kiln::SearchOptions&)>& set) -> std::string {
    kiln::TuneOptions o;
    o.store = false;
    set(o.search);
    try {
      kiln::Tuner(rt).tune(p, o);
    } catch (const kiln::ArgumentError& e) {
      return e.what();
    }
    return "accepted";
  };
  CHECK(refusal([](kiln::SearchOptions& s) { s.finalists = 0; }) ==
        "SearchOptions::finalists = 0, expected at least 1");
  CHECK(refusal([](kiln::SearchOptions& s) { s.finalists = -1; }) ==
        "SearchOptions::finalists = -1, expected at least 1");
  CHECK(refusal([](kiln::SearchOptions& s) { s.retime_rounds = 0; }) ==
        "SearchOptions::retime_rounds = 0, expected at least 1");
  CHECK(refusal([](kiln::SearchOptions& s) { s.retime_runs = 0; }) ==
        "SearchOptions::retime_runs = 0, expected at least 1");
  CHECK(refusal([](kiln::SearchOptions& s) { s.timing.min_runs = -3; }) ==
        "SearchOptions::timing.min_runs = -3, expected at least 1");
  for (double bad : {std::nan(""), -0.5, std::numeric_limits<double>::infinity()}) {
    const std::string why = refusal([bad](kiln::SearchOptions& s) { s.tie_fraction = bad; });
    CHECK(contains(why, "SearchOptions::tie_fraction = "));
    CHECK(contains(why, "expected a fraction >= 0"));
  }
  // The smallest values that mean something still run.
  CHECK(refusal([](kiln::SearchOptions& s) {
          s.finalists = 1;
          s.retime_rounds = 1;
          s.retime_runs = 1;
          s.timing.min_runs = 1;
          s.tie_fraction = 0.0;
        }) == "accepted");
}

TEST_CASE("a search with no timed runs or a NaN budget is refused", "[hardening][timing]") {
  // timing.runs = 0 (or negative) timed nothing: the winner had median 0 us from 0 samples, and
  // with store = true that entry would win every conflict of a later merge.
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "n=64", kiln::Device::host());
  kiln::TuneOptions o;
  o.store = false;
  for (int runs : {0, -3}) {
    o.search.timing.runs = runs;
    try {
      kiln::Tuner(rt).tune(p, o);
      FAIL("timing.runs = " << runs << " accepted");
    } catch (const kiln::ArgumentError& e) {
      CHECK(std::string(e.what()) == "SearchOptions::timing.runs = " + std::to_string(runs) + ", expected at least 1");
    }
  }
  o.search.timing.runs = 3;
  o.search.timing.warmup = -1;
  CHECK_THROWS_AS(kiln::Tuner(rt).tune(p, o), kiln::ArgumentError);
  o.search.timing.warmup = 0;
  // A NaN budget compared false with every elapsed time: no limit at all.
  o.search.budget.seconds = std::nan("");
  CHECK_THROWS_AS(kiln::Tuner(rt).tune(p, o), kiln::ArgumentError);
  o.search.budget.seconds.reset();
  o.total_seconds = std::nan("");
  CHECK_THROWS_AS(kiln::Tuner(rt).tune(p, o), kiln::ArgumentError);
  // A negative budget was accepted and reported as "budget spent".
  o.total_seconds = -1.0;
  CHECK_THROWS_AS(kiln::Tuner(rt).tune(p, o), kiln::ArgumentError);
  o.total_seconds.reset();
  o.search.budget.seconds = -0.5;
  CHECK_THROWS_AS(kiln::Tuner(rt).tune(p, o), kiln::ArgumentError);
  o.search.budget.seconds.reset();
  const kiln::TuneReport r = kiln::Tuner(rt).tune(p, o);
  REQUIRE(r.ok());
  CHECK(r.search.winner->timing.samples > 0);
}

TEST_CASE("NaN or negative time caps and give-up factors are refused, not read as no limit", "[hardening][timing]") {
  // Each compared false with every time (`> 0.0`, `median > factor * best`): a NaN or negative
  // max_seconds_per_candidate timed every one of timing.runs (up to 10^6) with no cap, and a NaN
  // give-up factor never let a hopeless candidate go.
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "n=64", kiln::Device::host());
  const double nan = std::nan("");
  const auto refused = [&](const std::function<void(kiln::TuneOptions&)>& set, const std::string& says) {
    kiln::TuneOptions o;
    o.store = false;
    o.search.timing.runs = 3;
    set(o);
    try {
      kiln::Tuner(rt).tune(p, o);
      FAIL(says << ": accepted");
    } catch (const kiln::ArgumentError& e) {
      CAPTURE(e.what());
      CHECK(kiln_test::contains(e.what(), says));
    }
  };
  refused([&](kiln::TuneOptions& o) { o.evaluator.max_seconds_per_candidate = nan; }, "EvaluatorOptions::max_seconds_per_candidate = nan");
  refused([&](kiln::TuneOptions& o) { o.evaluator.max_seconds_per_candidate = -1; }, "EvaluatorOptions::max_seconds_per_candidate = -1");
  refused([&](kiln::TuneOptions& o) { o.search.give_up_factor = nan; }, "SearchOptions::give_up_factor = nan");
  refused([&](kiln::TuneOptions& o) { o.search.give_up_factor = 0.5; }, "SearchOptions::give_up_factor = 0.5");
  // The value as given (kiln::scalar_text), not std::to_string's six decimals ("1.000000", "-0.000000").
  refused([&](kiln::TuneOptions& o) { o.search.give_up_factor = 0.9999999; }, "SearchOptions::give_up_factor = 0.9999999,");
  refused([&](kiln::TuneOptions& o) { o.evaluator.max_seconds_per_candidate = -1e-9; },
          "EvaluatorOptions::max_seconds_per_candidate = -1e-09,");
  refused([&](kiln::TuneOptions& o) { o.search.timing.max_seconds = nan; }, "SearchOptions::timing.max_seconds = nan");
  refused([&](kiln::TuneOptions& o) { o.search.timing.give_up_above_us = nan; }, "SearchOptions::timing.give_up_above_us = nan");
  // 0 is "no cap" where the header says so, and still runs.
  kiln::TuneOptions o;
  o.store = false;
  o.search.timing.runs = 3;
  o.evaluator.max_seconds_per_candidate = 0.0;
  CHECK(kiln::Tuner(rt).tune(p, o).ok());
}

TEST_CASE("a tune naming a variant the op does not have says which name", "[hardening]") {
  // It used to end with "no variants are registered for it", as if the op had none.
  kiln::Runtime rt(kiln_test::scale_registry(), kiln_test::offline_options());
  const kiln::Problem p = rt.registry().op("scale").problem_from_shape(kiln::f32, "n=64", kiln::Device::host());
  kiln::TuneOptions o;
  o.store = false;
  o.space.variants = {"nope"};
  try {
    kiln::Tuner(rt).tune(p, o);
    FAIL("an unknown variant name was accepted");
  } catch (const kiln::ArgumentError& e) {
    CHECK(std::string(e.what()).find("names 'nope', which is not a variant of 'scale'") != std::string::npos);
  }
}

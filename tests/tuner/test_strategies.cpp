// Strategies, budgets, failure handling and the tie rule on a synthetic space with a known cost
// (SyntheticEvaluator: no GPU, no real timing).
#include <algorithm>
#include <atomic>
#include <limits>

#include <kiln/tuner/search.hpp>
#include <kiln/tuner/search_space.hpp>

#include "catch.hpp"
#include "synthetic.hpp"

using kiln_test::FakeVariant;
using kiln_test::SyntheticEvaluator;

namespace {

kiln::ParamSpace range_space(std::initializer_list<std::pair<const char*, int>> params) {
  kiln::ParamSpace s;
  for (const auto& [name, n] : params) {
    std::vector<int> v;
    for (int i = 1; i <= n; ++i) v.push_back(i);
    s.param(name, v);
  }
  return s;
}

// synth_a (256 configs, the optimum), synth_b (128, at best 12% slower), synth_c (7 x 2 values:
// one rejected by a constraint, odd `bad` by supports(), 6 left, flat cost).
struct Fixture {
  kiln::Registry registry;
  kiln::Problem problem;
  kiln::SearchSpace space;

  Fixture() {
    registry.add_op(kiln_test::synth_schema());
    registry.add_variant(std::make_shared<FakeVariant>("synth_a", 10, range_space({{"x", 8}, {"y", 8}, {"z", 4}}),
                                                       kiln::Config{{"x", 1}, {"y", 1}, {"z", 1}}));
    registry.add_variant(std::make_shared<FakeVariant>("synth_b", 5, range_space({{"p", 8}, {"q", 16}}),
                                                       kiln::Config{{"p", 1}, {"q", 1}}));
    kiln::ParamSpace c;
    c.param("block", {32, 64, 128, 256, 512, 1024, 2048}).param("bad", {0, 1});
    c.constraint("block <= 1024", [](const kiln::Config& k, const kiln::DeviceInfo&, const kiln::Problem&) {
      return k.get("block") <= 1024;
    });
    registry.add_variant(std::make_shared<FakeVariant>("synth_c", 1, c, kiln::Config{{"block", 256}, {"bad", 0}}));
    problem = registry.op("synth").problem_from_dims(kiln::f32, {1000}, kiln::Device::host());
    space = kiln::build_search_space(registry, problem, kiln::device_info(kiln::Device::host()));
  }
};

double cost_of(const kiln::Candidate& c) {
  const std::string& v = c.variant->name();
  if (v == "synth_a") {
    const int x = c.config.get("x"), y = c.config.get("y"), z = c.config.get("z");
    // A bowl with deterministic bumps of +-1.5%: local structure, one global optimum.
    const double bump = 1.0 + 0.015 * (((x * 7 + y * 13 + z * 5) % 5) - 2) / 2.0;
    return 100.0 * (1.0 + 0.04 * (x - 6) * (x - 6) + 0.03 * (y - 3) * (y - 3) + 0.08 * (z - 2) * (z - 2)) * bump;
  }
  if (v == "synth_b") {
    const int p = c.config.get("p"), q = c.config.get("q");
    return 112.0 * (1.0 + 0.02 * (p - 2) * (p - 2) + 0.01 * (q - 11) * (q - 11));
  }
  return 150.0;
}

double optimum(const std::vector<kiln::Candidate>& cs) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& c : cs) best = std::min(best, cost_of(c));
  return best;
}

kiln::SearchOptions exact_options(const std::string& strategy) {
  kiln::SearchOptions o;
  o.strategy = strategy;
  o.tie_fraction = 0.0;  // no noise here: only exactly equal costs tie
  return o;
}

}  // namespace

TEST_CASE("search space: union of variants, defaults first, rejections with reasons") {
  Fixture f;
  REQUIRE(f.space.candidates.size() == 256 + 128 + 6);
  CHECK(f.space.candidates[0].to_string() == "synth_a [x=1 y=1 z=1]");
  CHECK(f.space.candidates[0].is_default);
  CHECK(f.space.candidates[1].variant->name() == "synth_b");
  CHECK(f.space.candidates[2].variant->name() == "synth_c");
  std::size_t constraint = 0, unsupported = 0;
  for (const auto& r : f.space.rejected) {
    if (r.kind == kiln::Rejection::Kind::constraint) {
      constraint += r.configs;
      CHECK(r.reason.find("block <= 1024") != std::string::npos);
    }
    if (r.kind == kiln::Rejection::Kind::unsupported) {
      unsupported += r.configs;
      CHECK(r.reason == "odd 'bad' values are not supported");
    }
  }
  CHECK(constraint == 2);
  CHECK(unsupported == 6);
  for (const auto& c : f.space.candidates) CHECK(c.config.get_or("bad", 0) == 0);

  kiln::SpaceOptions only_b;
  only_b.variants = {"synth_b"};
  only_b.max_configs_per_variant = 10;
  auto s = kiln::build_search_space(f.registry, f.problem, kiln::device_info(kiln::Device::host()), only_b);
  REQUIRE(s.candidates.size() == 10);
  CHECK(s.candidates[0].is_default);  // the sample always holds the default
  for (const auto& c : s.candidates) CHECK(c.variant->name() == "synth_b");
}

TEST_CASE("exhaustive finds the optimum") {
  Fixture f;
  SyntheticEvaluator ev(cost_of);
  const auto r = kiln::run_search(ev, f.space.candidates, exact_options("exhaustive"));
  REQUIRE(r.winner);
  CHECK(r.evaluations() == f.space.candidates.size());
  CHECK(cost_of(r.winner->candidate) == optimum(f.space.candidates));
  CHECK(r.finalists.size() == 4);
  CHECK(r.stop_reason.find("all 390 candidates") != std::string::npos);
}

TEST_CASE("random finds the optimum when its budget covers the space, and respects a budget") {
  Fixture f;
  {
    SyntheticEvaluator ev(cost_of);
    auto o = exact_options("random");
    o.budget.evals = f.space.candidates.size();
    const auto r = kiln::run_search(ev, f.space.candidates, o);
    REQUIRE(r.winner);
    CHECK(cost_of(r.winner->candidate) == optimum(f.space.candidates));
  }
  {
    SyntheticEvaluator ev(cost_of);
    auto o = exact_options("random");
    o.budget.evals = 50;
    const auto r = kiln::run_search(ev, f.space.candidates, o);
    CHECK(r.evaluations() == 50);
    CHECK(ev.checks == 50);
    CHECK(r.results[0].candidate.is_default);  // defaults first
    CHECK(r.stop_reason.find("budget of 50 evaluations") != std::string::npos);
  }
}

TEST_CASE("anneal reaches within 3% of the exhaustive optimum with at most 25% of the evaluations") {
  Fixture f;
  const double best = optimum(f.space.candidates);
  const std::size_t budget = f.space.candidates.size() / 4;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SyntheticEvaluator ev(cost_of);
    auto o = exact_options("anneal");
    o.seed = seed;
    o.budget.evals = budget;
    const auto r = kiln::run_search(ev, f.space.candidates, o);
    CAPTURE(seed);
    REQUIRE(r.winner);
    CHECK(r.evaluations() <= budget);
    CHECK(static_cast<std::size_t>(ev.checks) <= budget);
    CHECK(cost_of(r.winner->candidate) <= 1.03 * best);
  }
  // The default budget is a quarter of the space too (at least 16).
  SyntheticEvaluator ev(cost_of);
  const auto r = kiln::run_search(ev, f.space.candidates, exact_options("anneal"));
  CHECK(r.evaluations() == *kiln::default_eval_budget("anneal", f.space.candidates.size()));
  CHECK(r.evaluations() <= (f.space.candidates.size() + 3) / 4);
}

TEST_CASE("anneal on a small space evaluates everything and stops") {
  Fixture f;
  kiln::SpaceOptions only_c;
  only_c.variants = {"synth_c"};
  auto s = kiln::build_search_space(f.registry, f.problem, kiln::device_info(kiln::Device::host()), only_c);
  SyntheticEvaluator ev(cost_of);
  const auto r = kiln::run_search(ev, s.candidates, exact_options("anneal"));
  CHECK(r.evaluations() == s.candidates.size());
  CHECK(r.winner);
}

TEST_CASE("failing, faulting and rejected candidates are never chosen") {
  Fixture f;
  // The three fastest candidates: the best fails validation, the second faults.
  std::vector<kiln::Candidate> sorted = f.space.candidates;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return cost_of(a) < cost_of(b); });
  SyntheticEvaluator ev(cost_of);
  ev.fail.insert(sorted[0].to_string());
  ev.fault.insert(sorted[1].to_string());
  for (const std::string& strategy : {"exhaustive", "random", "anneal"}) {
    auto o = exact_options(strategy);
    o.budget.evals = f.space.candidates.size();
    const auto r = kiln::run_search(ev, f.space.candidates, o);
    REQUIRE(r.winner);
    CAPTURE(strategy);
    CHECK(r.winner->candidate.to_string() == sorted[2].to_string());
    bool saw_fail = false, saw_fault = false;
    for (const auto& x : r.results) {
      if (x.candidate.to_string() == sorted[0].to_string()) {
        saw_fail = true;
        CHECK(x.outcome == kiln::Outcome::failed);
        CHECK(x.reason == "wrong result (synthetic)");
      }
      if (x.candidate.to_string() == sorted[1].to_string()) {
        saw_fault = true;
        CHECK(x.outcome == kiln::Outcome::fault);
      }
    }
    CHECK(saw_fail);
    CHECK(saw_fault);
    for (const auto& x : r.finalists) CHECK(x.ok());
  }
  // Nothing passes: no winner.
  kiln::SpaceOptions only_c;
  only_c.variants = {"synth_c"};
  auto s = kiln::build_search_space(f.registry, f.problem, kiln::device_info(kiln::Device::host()), only_c);
  SyntheticEvaluator all_fail(cost_of);
  for (const auto& c : s.candidates) all_fail.fail.insert(c.to_string());
  const auto r = kiln::run_search(all_fail, s.candidates, exact_options("exhaustive"));
  CHECK_FALSE(r.winner);
  CHECK(r.choice_note == "no candidate passed validation");
}

TEST_CASE("a lost device stops the search cleanly and chooses nothing") {
  Fixture f;
  SyntheticEvaluator ev(cost_of);
  ev.lose_device = f.space.candidates[5].to_string();
  const auto r = kiln::run_search(ev, f.space.candidates, exact_options("exhaustive"));
  CHECK(r.device_lost);
  CHECK_FALSE(r.winner);
  CHECK(r.evaluations() == 6);
  CHECK(r.stop_reason.find("384 candidate(s) could not be evaluated") != std::string::npos);
}

TEST_CASE("budgets: seconds, cancellation, and a slow candidate stops early") {
  Fixture f;
  {
    SyntheticEvaluator ev(cost_of);
    ev.seconds_per_eval = 1.0;
    auto o = exact_options("exhaustive");
    o.budget.seconds = 10.0;
    o.clock = [&ev] { return ev.clock; };
    const auto r = kiln::run_search(ev, f.space.candidates, o);
    CHECK(r.evaluations() == 10);
    CHECK(r.stop_reason.find("budget of 10 s") != std::string::npos);
    CHECK(r.winner);
  }
  {
    SyntheticEvaluator ev(cost_of);
    std::atomic<bool> cancel{false};
    auto o = exact_options("exhaustive");
    o.cancel = &cancel;
    o.on_result = [&](std::size_t done, std::size_t, const kiln::CandidateResult&) {
      if (done == 7) cancel = true;
    };
    const auto r = kiln::run_search(ev, f.space.candidates, o);
    CHECK(r.cancelled);
    CHECK(r.evaluations() == 7);
    CHECK_FALSE(r.winner);  // an unfinished search stores nothing
  }
  {
    // After the defaults (synth_c's 150 is then the best), configs of synth_a far from its optimum
    // cost more than 1.25 x 150 and stop being timed after min_runs.
    SyntheticEvaluator ev(cost_of);
    auto o = exact_options("exhaustive");
    o.budget.evals = 40;
    const auto r = kiln::run_search(ev, f.space.candidates, o);
    bool gave_up = false;
    for (const auto& x : r.results)
      if (x.timing.gave_up) {
        gave_up = true;
        CHECK(x.timing.samples == o.timing.min_runs);
        CHECK(x.ok());
        CHECK(x.reason.empty());  // the synthetic evaluator gives no note; the real one does
      }
    CHECK(gave_up);
  }
}

TEST_CASE("tie rule: within the noise, higher priority then smaller config wins; clear winners stay") {
  kiln::Registry reg;
  reg.add_op(kiln_test::synth_schema());
  kiln::ParamSpace s;
  s.param("k", {1, 2, 3});
  auto lo = std::make_shared<FakeVariant>("tie_low", 5, s, kiln::Config{{"k", 1}});
  auto hi = std::make_shared<FakeVariant>("tie_high", 20, s, kiln::Config{{"k", 1}});
  const std::vector<kiln::Candidate> cands = {{lo.get(), {{"k", 1}}, true},
                                              {hi.get(), {{"k", 1}}, true},
                                              {lo.get(), {{"k", 2}}, false},
                                              {lo.get(), {{"k", 3}}, false}};
  // tie_low k=1 is 0.2% faster than tie_high k=1: within the noise, so priority decides.
  auto near_tie = [](const kiln::Candidate& c) {
    if (c.variant->name() == "tie_high") return 100.2;
    return c.config.get("k") == 1 ? 100.0 : 100.0 + 10.0 * c.config.get("k");
  };
  for (std::uint64_t noise_seed = 1; noise_seed <= 30; ++noise_seed) {
    SyntheticEvaluator ev(near_tie, 0.02, noise_seed);
    kiln::SearchOptions o;
    o.seed = noise_seed;
    const auto r = kiln::run_search(ev, cands, o);
    CAPTURE(noise_seed);
    REQUIRE(r.winner);
    CHECK(r.winner->candidate.variant->name() == "tie_high");
    CHECK(r.choice_note.find("tie rule") != std::string::npos);
  }
  // 6% apart with 1% noise: the faster one wins every time, whatever its priority.
  auto clear = [](const kiln::Candidate& c) {
    if (c.variant->name() == "tie_high") return 106.0;
    return c.config.get("k") == 1 ? 100.0 : 130.0;
  };
  for (std::uint64_t noise_seed = 1; noise_seed <= 30; ++noise_seed) {
    SyntheticEvaluator ev(clear, 0.01, noise_seed);
    const auto r = kiln::run_search(ev, cands, kiln::SearchOptions{});
    CAPTURE(noise_seed);
    REQUIRE(r.winner);
    CHECK(r.winner->candidate.to_string() == "tie_low [k=1]");
  }
  // Same priority and equal times: the smaller config string.
  const std::vector<kiln::Candidate> same = {{lo.get(), {{"k", 3}}, false}, {lo.get(), {{"k", 2}}, false}};
  SyntheticEvaluator flat([](const kiln::Candidate&) { return 50.0; });
  const auto r = kiln::run_search(flat, same, kiln::SearchOptions{});
  REQUIRE(r.winner);
  CHECK(r.winner->candidate.to_string() == "tie_low [k=2]");
}

TEST_CASE("finalists are re-timed interleaved") {
  Fixture f;
  SyntheticEvaluator ev(cost_of);
  auto o = exact_options("exhaustive");
  o.finalists = 3;
  o.retime_rounds = 4;
  o.retime_runs = 2;
  const auto r = kiln::run_search(ev, f.space.candidates, o);
  REQUIRE(r.finalists.size() == 3);
  for (const auto& x : r.finalists) CHECK(x.timing.samples == 8);
  // One timing call per candidate during the search plus rounds x finalists.
  CHECK(ev.timings == static_cast<int>(f.space.candidates.size()) + 4 * 3);
}

TEST_CASE("unknown strategy names are refused") {
  CHECK_THROWS_AS(kiln::make_strategy("genetic"), kiln::ArgumentError);
  CHECK(kiln::strategy_names().size() == 3);
}

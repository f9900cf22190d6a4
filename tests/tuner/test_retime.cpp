// Re-timing the finalists under clock drift (retime.hpp): the order of the rounds, the finalists'
// default configs, and the choice made within pairs of rounds.  A synthetic evaluator whose
// every sample is slower than the one before stands for a GPU whose clock falls during a
// sustained run: the candidate timed first would look faster.
#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <kiln/tuner/retime.hpp>
#include <kiln/tuner/search.hpp>

#include "bench_rounds.hpp"
#include "catch.hpp"
#include "synthetic.hpp"

using kiln_test::FakeVariant;
using kiln_test::SyntheticEvaluator;

namespace {

// One variant with an `algo` parameter, default algo 0, like gemm_cublaslt.
struct Algos {
  std::shared_ptr<FakeVariant> variant;
  std::vector<kiln::Candidate> candidates;
  explicit Algos(int n) {
    kiln::ParamSpace s;
    std::vector<int> values(static_cast<std::size_t>(n));
    std::iota(values.begin(), values.end(), 0);
    s.param("algo", values);
    variant = std::make_shared<FakeVariant>("lt", 10, s, kiln::Config{{"algo", 0}});
    for (int a = 0; a < n; ++a) candidates.push_back({variant.get(), {{"algo", a}}, a == 0});
  }
};

// cost(algo) times a clock that slows by `per_sample` (a fraction) with every sample taken.
SyntheticEvaluator::CostFn drifting(std::vector<double> cost, double per_sample, std::shared_ptr<long> taken) {
  return [cost = std::move(cost), per_sample, taken](const kiln::Candidate& c) {
    const double slow = 1.0 + per_sample * static_cast<double>((*taken)++);
    return cost[static_cast<std::size_t>(c.config.get("algo"))] * slow;
  };
}

}  // namespace

TEST_CASE("re-timing rounds come in pairs, forward then backward") {
  CHECK(kiln::balanced_retime_rounds(0) == 2);
  CHECK(kiln::balanced_retime_rounds(1) == 2);
  CHECK(kiln::balanced_retime_rounds(2) == 2);
  CHECK(kiln::balanced_retime_rounds(3) == 4);
  CHECK(kiln::balanced_retime_rounds(5) == 6);
  CHECK(kiln::retime_order(3, 0) == std::vector<std::size_t>{0, 1, 2});
  CHECK(kiln::retime_order(3, 1) == std::vector<std::size_t>{2, 1, 0});
  CHECK(kiln::retime_order(3, 2) == std::vector<std::size_t>{1, 2, 0});
  CHECK(kiln::retime_order(3, 3) == std::vector<std::size_t>{0, 2, 1});
  CHECK(kiln::retime_order(0, 0).empty());
  for (std::size_t k = 1; k <= 7; ++k)
    for (int pair = 0; pair < 2 * static_cast<int>(k); ++pair) {
      const auto fwd = kiln::retime_order(k, 2 * pair), bwd = kiln::retime_order(k, 2 * pair + 1);
      CAPTURE(k, pair);
      std::vector<std::size_t> sorted = fwd;
      std::sort(sorted.begin(), sorted.end());
      std::vector<std::size_t> all(k);
      std::iota(all.begin(), all.end(), std::size_t{0});
      CHECK(sorted == all);  // a permutation
      CHECK(fwd.front() == static_cast<std::size_t>(pair) % k);  // each finalist leads a pair in turn
      // Over the pair, every finalist's two positions sum to k - 1.
      for (std::size_t f = 0; f < k; ++f) {
        const auto pf = std::find(fwd.begin(), fwd.end(), f) - fwd.begin();
        const auto pb = std::find(bwd.begin(), bwd.end(), f) - bwd.begin();
        CHECK(static_cast<std::size_t>(pf + pb) == k - 1);
      }
    }
}

TEST_CASE("the tie rule among finalists prefers the variant's default config") {
  Algos a(3);
  CHECK(kiln::preferred_finalist(a.candidates[0], a.candidates[1]));
  CHECK(!kiln::preferred_finalist(a.candidates[1], a.candidates[0]));
  // Not the default: the smaller config string, as preferred_on_tie.
  CHECK(kiln::preferred_finalist(a.candidates[1], a.candidates[2]));
  // A default whose config string sorts last still wins within its variant.
  kiln::Candidate late = a.candidates[2];
  late.is_default = true;
  kiln::Candidate early = a.candidates[0];
  early.is_default = false;
  CHECK(kiln::preferred_finalist(late, early));
  // Priority still comes first.
  auto high = std::make_shared<FakeVariant>("hi", 20, kiln::ParamSpace{}, kiln::Config{});
  CHECK(kiln::preferred_finalist({high.get(), {}, false}, a.candidates[0]));
}

TEST_CASE("a finalist variant's default config is re-timed when the search left it out within reach") {
  Algos a(5);
  auto result = [&](int algo, double us) {
    kiln::CandidateResult r;
    r.candidate = a.candidates[static_cast<std::size_t>(algo)];
    r.timing.median_us = us;
    return r;
  };
  // Ranked fastest first: algo 2, 1, 3, then the default 0 at 1.10x, 4.
  const std::vector<kiln::CandidateResult> ranked = {result(2, 100), result(1, 101), result(3, 104), result(0, 110),
                                                     result(4, 140)};
  CHECK(kiln::default_finalists(ranked, 2, 1.25) == std::vector<std::size_t>{0, 1, 3});
  CHECK(kiln::default_finalists(ranked, 2, 1.05) == std::vector<std::size_t>{0, 1});  // out of reach
  CHECK(kiln::default_finalists(ranked, 4, 1.25) == std::vector<std::size_t>{0, 1, 2, 3});  // already in
  CHECK(kiln::default_finalists(ranked, 9, 1.25).size() == 5);

  // End to end: the search times algo 0 slow (its first timing ran on a cold card), the re-timing
  // finds it as fast as algo 1 (1.0 vs 1.004): the default stays.
  auto first = std::make_shared<bool>(true);
  SyntheticEvaluator ev([first](const kiln::Candidate& c) {
    const int algo = c.config.get("algo");
    if (algo == 0) return *first ? 120.0 : 100.0;
    return 100.0 + 0.4 * algo;
  });
  kiln::SearchOptions o;
  o.finalists = 2;
  o.on_status = [first](const std::string& s) {
    if (s.rfind("re-timing", 0) == 0) *first = false;
  };
  const auto r = kiln::run_search(ev, a.candidates, o);
  REQUIRE(r.winner);
  CHECK(r.finalists.size() == 3);
  CHECK(r.winner->candidate.to_string() == "lt [algo=0]");
  CHECK(r.choice_note.find("default") != std::string::npos);
}

TEST_CASE("under a falling clock the finalists are compared within pairs of rounds") {
  for (const double per_sample : {0.0005, 0.002, 0.005})
    for (const int rounds : {3, 4, 5, 6})
      for (const int runs : {1, 3}) {
        CAPTURE(per_sample, rounds, runs);
        kiln::SearchOptions o;
        o.finalists = 3;
        o.retime_rounds = rounds;
        o.retime_runs = runs;
        {  // equal costs: a tie, and the default wins
          Algos a(4);
          auto taken = std::make_shared<long>(0);
          SyntheticEvaluator ev(drifting({100.0, 100.0, 100.0, 130.0}, per_sample, taken));
          const auto r = kiln::run_search(ev, a.candidates, o);
          REQUIRE(r.winner);
          CHECK(r.winner->candidate.to_string() == "lt [algo=0]");
          for (const auto& f : r.finalists) CHECK(f.timing.samples == kiln::balanced_retime_rounds(rounds) * runs);
        }
        {  // a real 4% gain is found though the drift over the re-timing is larger
          Algos a(4);
          auto taken = std::make_shared<long>(0);
          SyntheticEvaluator ev(drifting({100.0, 101.0, 96.0, 130.0}, per_sample, taken));
          const auto r = kiln::run_search(ev, a.candidates, o);
          REQUIRE(r.winner);
          const std::string w = r.winner->candidate.to_string();
          if (runs == 1 && per_sample >= 0.005)
            // One sample per round gives no noise estimate free of drift: the pooled one, drift
            // included (9% here), may call it a tie, and then the default stays; never algo 1.
            CHECK((w == "lt [algo=2]" || w == "lt [algo=0]"));
          else
            CHECK(w == "lt [algo=2]");
        }
      }
}

TEST_CASE("paired choice: sample noise keeps near ties tied; too few rounds fall back to pooled medians") {
  Algos a(2);
  auto timed_of = [&](const kiln::RoundSamples& rs) {
    std::vector<kiln::CandidateResult> timed;
    for (std::size_t f = 0; f < rs.size(); ++f) {
      kiln::CandidateResult r;
      r.candidate = a.candidates[f];
      std::vector<double> all;
      for (const auto& round : rs[f]) all.insert(all.end(), round.begin(), round.end());
      r.timing = kiln::summarise(all);
      timed.push_back(r);
    }
    return timed;
  };
  // algo 1 is 0.5% faster in every pair, but each round's samples scatter by +-3%: a tie.
  const kiln::RoundSamples noisy = {{{97, 100, 103}, {97, 100, 103}, {97, 100, 103}, {97, 100, 103}},
                                    {{96.5, 99.5, 102.5}, {96.5, 99.5, 102.5}, {96.5, 99.5, 102.5}, {96.5, 99.5, 102.5}}};
  std::string note;
  CHECK(kiln::choose_winner_paired(timed_of(noisy), noisy, 0.01, &note) == 0);
  CHECK(note.find("tie rule") != std::string::npos);
  // The same 0.5% with tight samples and tie_fraction 0.1%: algo 1 is clear.
  const kiln::RoundSamples tight = {{{100, 100, 100}, {101, 101, 101}, {102, 102, 102}, {103, 103, 103}},
                                    {{99.5, 99.5, 99.5}, {100.5, 100.5, 100.5}, {101.5, 101.5, 101.5}, {102.5, 102.5, 102.5}}};
  CHECK(kiln::choose_winner_paired(timed_of(tight), tight, 0.001, &note) == 1);
  CHECK(note.find("clear") != std::string::npos);
  CHECK(note.find("pairs of rounds") != std::string::npos);
  // One pair of rounds: the pooled medians decide (choose_winner's note, no pairs).
  const kiln::RoundSamples one = {{tight[0][0], tight[0][1]}, {tight[1][0], tight[1][1]}};
  kiln::choose_winner_paired(timed_of(one), one, 0.001, &note);
  CHECK(note.find("pairs of rounds") == std::string::npos);
}

TEST_CASE("kiln bench times its rows in rounds, forward then backward") {
  using kiln::cli::bench_visits;
  const auto v = bench_visits(3, 20, 3);
  REQUIRE(v.size() == 12);
  std::vector<std::size_t> order;
  for (const auto& x : v) order.push_back(x.row);
  CHECK(order == std::vector<std::size_t>{0, 1, 2, 2, 1, 0, 1, 2, 0, 0, 2, 1});
  for (std::size_t row = 0; row < 3; ++row) {
    int runs = 0, warmups = 0, visits = 0;
    for (const auto& x : v)
      if (x.row == row) {
        runs += x.runs;
        warmups += x.warmup;
        ++visits;
      }
    CHECK(runs == 20);  // --runs honoured exactly
    CHECK(visits == 4);
    CHECK(warmups == 3 + 1 + 1 + 1);
  }
  // 22 runs: the first two rounds take 6, the last two 5.
  int total = 0;
  for (const auto& x : bench_visits(2, 22, 0)) {
    total += x.runs;
    CHECK(x.warmup == 0);
  }
  CHECK(total == 44);
  CHECK(bench_visits(2, 22, 0).front().runs == 6);
  CHECK(bench_visits(2, 22, 0).back().runs == 5);
  // One row, or fewer than 4 runs: one visit each, as before.
  CHECK(bench_visits(1, 20, 3).size() == 1);
  CHECK(bench_visits(1, 20, 3).front().runs == 20);
  CHECK(bench_visits(3, 3, 2).size() == 3);
  CHECK(bench_visits(0, 20, 3).empty());
}

#include "kiln/tuner/search.hpp"

#include "kiln/errors.hpp"
#include "kiln/tuner/retime.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace kiln {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Standard error of a sample median from its MAD: sigma ~ 1.4826 MAD (normal), and the median's
// standard error ~ 1.2533 sigma / sqrt(n).
double median_standard_error(const Timing& t) {
  if (t.samples <= 0) return 0.0;
  return 1.4826 * 1.2533 * t.mad_us / std::sqrt(static_cast<double>(t.samples));
}

std::string fmt_us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f us", us);
  return buf;
}

bool by_time_then_rule(const CandidateResult& a, const CandidateResult& b) {
  if (a.timing.median_us != b.timing.median_us) return a.timing.median_us < b.timing.median_us;
  return preferred_on_tie(a.candidate, b.candidate);
}

}  // namespace

std::size_t choose_winner(const std::vector<CandidateResult>& timed, double tie_fraction, std::string* note) {
  if (timed.empty()) return 0;
  std::size_t fastest = 0;
  for (std::size_t i = 1; i < timed.size(); ++i)
    if (by_time_then_rule(timed[i], timed[fastest])) fastest = i;
  const Timing& best = timed[fastest].timing;
  const double se_best = median_standard_error(best);
  std::vector<std::size_t> tied;
  for (std::size_t i = 0; i < timed.size(); ++i) {
    const Timing& t = timed[i].timing;
    const double se = median_standard_error(t);
    // Three standard errors of the difference of the medians, at least tie_fraction of the best:
    // a difference the measurement cannot resolve must not flip the choice from run to run.
    const double noise = std::max(3.0 * std::sqrt(se * se + se_best * se_best), tie_fraction * best.median_us);
    if (t.median_us - best.median_us <= noise) tied.push_back(i);
  }
  std::size_t winner = tied.front();
  for (std::size_t i : tied)
    if (preferred_finalist(timed[i].candidate, timed[winner].candidate)) winner = i;
  if (note) {
    if (timed.size() == 1) {
      *note = "the only finalist";
    } else if (tied.size() == 1) {
      *note = "fastest finalist, clear of the others' noise";
    } else {
      std::string names;
      for (std::size_t i : tied)
        if (i != winner) names += (names.empty() ? "" : ", ") + timed[i].candidate.to_string();
      if (winner == fastest)
        *note = "fastest; within the measured noise of " + names + ", and the tie rule (higher priority, then the variant's default, then smaller config) agrees";
      else
        *note = "within the measured noise of the fastest (" + fmt_us(best.median_us) + " vs " +
                fmt_us(timed[winner].timing.median_us) + "); chosen over " + names +
                " by the tie rule (higher priority, then the variant's default, then smaller config)";
    }
  }
  return winner;
}

namespace {

// The counts a C++ caller may set past what `kiln tune` allows: re-timing has no time cap, so
// retime_rounds = 2^31 - 1 ran for ever (and overflowed when rounded up to even).  The bounds
// are the CLI's (--runs, --warmup, --finalists).  timing.runs <= 0 timed nothing and made a
// winner of 0 us from no samples, which the database then kept as the fastest ever measured.
void check_counts(const SearchOptions& o) {
  const auto check = [](const char* name, int value, int most) {
    if (value > most)
      throw ArgumentError(std::string("SearchOptions::") + name + " = " + std::to_string(value) + ", expected at most " +
                          std::to_string(most));
  };
  const auto check_least = [](const char* name, int value, int least) {
    if (value < least)
      throw ArgumentError(std::string("SearchOptions::") + name + " = " + std::to_string(value) + ", expected at least " +
                          std::to_string(least));
  };
  check_least("timing.runs", o.timing.runs, 1);
  check_least("timing.warmup", o.timing.warmup, 0);
  check("timing.runs", o.timing.runs, 1000000);
  check("timing.warmup", o.timing.warmup, 1000000);
  check("finalists", o.finalists, 1000);
  check("retime_rounds", o.retime_rounds, 1000);
  check("retime_runs", o.retime_runs, 1000000);
  // Below 1 these were clamped without a word (finalists 0 or -1 meant 1, retime_runs 0 meant 1,
  // min_runs -3 meant 1): the CLI's --finalists starts at 1 as well.
  check_least("finalists", o.finalists, 1);
  check_least("retime_rounds", o.retime_rounds, 1);
  check_least("retime_runs", o.retime_runs, 1);
  check_least("timing.min_runs", o.timing.min_runs, 1);
  // The tie rule takes max(3 standard errors, tie_fraction x the best median): a NaN or negative
  // fraction dropped out of that max and silently meant 0.
  if (!(o.tie_fraction >= 0.0) || !std::isfinite(o.tie_fraction))
    throw ArgumentError("SearchOptions::tie_fraction = " + scalar_text(o.tie_fraction) +
                        ", expected a fraction >= 0 of the best median (0: only the noise ties)");
  // A NaN compares false with every time: a NaN cap capped nothing and a NaN give-up factor never
  // let a hopeless candidate go.  A factor below 1 gave up on candidates faster than the best.
  if (!(o.give_up_factor >= 1.0))
    throw ArgumentError("SearchOptions::give_up_factor = " + scalar_text(o.give_up_factor) +
                        ", expected a factor >= 1 of the best median so far");
  if (!(o.timing.max_seconds >= 0.0))
    throw ArgumentError("SearchOptions::timing.max_seconds = " + scalar_text(o.timing.max_seconds) +
                        ", expected a number of seconds >= 0 (0: no cap)");
  if (std::isnan(o.timing.give_up_above_us))
    throw ArgumentError("SearchOptions::timing.give_up_above_us = nan, expected a time in us (infinity: never give up)");
  // A NaN budget compared false with every elapsed time: the search ran without a limit.
  if (o.budget.seconds && !(*o.budget.seconds >= 0))  // NaN, or below zero: no budget meant
    throw ArgumentError("SearchOptions::budget.seconds = " + scalar_text(*o.budget.seconds) +
                        ", expected a number of seconds >= 0");
}

}  // namespace

SearchResult run_search(Evaluator& evaluator, const std::vector<Candidate>& candidates, const SearchOptions& options) {
  check_counts(options);
  SearchResult res;
  res.strategy = options.strategy;
  res.space_size = candidates.size();
  auto strategy = make_strategy(options.strategy);
  auto clock = [&] { return options.clock ? options.clock() : steady_seconds(); };
  const double t0 = clock();

  SearchContext ctx(evaluator, candidates, options);
  strategy->run(ctx);
  res.results = ctx.results();
  res.device_lost = ctx.device_lost();
  res.cancelled = ctx.cancelled();

  const std::size_t n = candidates.size();
  if (res.device_lost) {
    std::string who;
    for (const CandidateResult& r : res.results)
      if (r.device_lost) {
        who = r.candidate.to_string();
        break;
      }
    res.stop_reason = "stopped: " + who + " left the device unusable; " + std::to_string(n - res.results.size()) +
                      " candidate(s) could not be evaluated (run again in a new process; the failing candidate is "
                      "listed above)";
  } else if (res.cancelled) {
    res.stop_reason = "cancelled after " + std::to_string(res.results.size()) + " evaluations";
  } else if (res.results.size() >= n) {
    res.stop_reason = "all " + std::to_string(n) + " candidates evaluated";
  } else if (ctx.eval_budget() && res.results.size() >= *ctx.eval_budget()) {
    res.stop_reason = "budget of " + std::to_string(*ctx.eval_budget()) + " evaluations spent (" +
                      std::to_string(n) + " candidates)";
  } else if (options.budget.seconds && ctx.seconds() >= *options.budget.seconds) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "budget of %.3g s spent", *options.budget.seconds);
    res.stop_reason = buf;
  } else {
    res.stop_reason = "strategy finished";
  }
  if (res.device_lost || res.cancelled) {
    res.seconds = clock() - t0;
    return res;  // nothing is chosen from a search that did not finish
  }

  // Results checked while the host reference was still being computed are compared now, before
  // anything can be chosen.
  std::size_t provisional = 0;
  for (const CandidateResult& r : res.results) provisional += r.ok() && r.provisional ? 1 : 0;
  if (provisional > 0 && options.on_status)
    options.on_status("waiting for the host reference to confirm " + std::to_string(provisional) + " candidate(s)");
  for (CandidateResult& r : res.results) {
    if (!r.ok() || !r.provisional) continue;
    CandidateResult v = evaluator.confirm(r.candidate);
    r.provisional = false;
    r.error = v.error;
    r.tolerance = v.tolerance;
    if (!v.ok()) {
      r.outcome = v.outcome;
      r.reason = v.reason;
      r.device_lost = v.device_lost;
    }
    if (v.device_lost) {
      res.device_lost = true;
      res.stop_reason = "stopped while validating: " + r.candidate.to_string() + " left the device unusable";
      res.seconds = clock() - t0;
      return res;
    }
  }

  std::vector<CandidateResult> ok;
  for (const CandidateResult& r : res.results)
    if (r.ok()) ok.push_back(r);
  std::sort(ok.begin(), ok.end(), by_time_then_rule);
  if (ok.empty()) {
    res.choice_note = res.results.empty() ? "no candidate was evaluated" : "no candidate passed validation";
    res.seconds = clock() - t0;
    return res;
  }
  // The fastest `finalists`, and the default config of each of their variants that the search
  // timed within reach (retime.hpp: the drift of a long search may have pushed it out).
  const std::size_t top = std::min<std::size_t>(std::max(1, options.finalists), ok.size());
  {
    const std::vector<std::size_t> picked =
        top > 1 ? default_finalists(ok, top, options.give_up_factor) : std::vector<std::size_t>{0};
    std::vector<CandidateResult> finalists;
    for (std::size_t i : picked) finalists.push_back(ok[i]);
    ok = std::move(finalists);
  }
  const std::size_t k = ok.size();
  if (k == 1) {
    res.finalists = ok;
    res.winner = ok.front();
    res.choice_note = "the only candidate that passed validation";
    if (res.results.size() > 1 && options.finalists <= 1) res.choice_note = "fastest (no re-timing asked for)";
    res.seconds = clock() - t0;
    return res;
  }

  if (options.on_status) options.on_status("re-timing " + std::to_string(k) + " finalists interleaved");
  // Re-time the finalists interleaved, in pairs of rounds forward then backward (retime_order),
  // so that clock and thermal drift fall on every finalist alike; each round's samples are kept
  // for the comparison within pairs of rounds (choose_winner_paired).
  const int rounds = balanced_retime_rounds(options.retime_rounds);
  std::vector<std::vector<double>> samples(k);
  RoundSamples round_samples(k);
  std::vector<bool> dropped(k, false);
  TimingOptions t;
  t.warmup = 1;
  t.runs = std::max(1, options.retime_runs);
  t.min_runs = t.runs;
  t.warm = options.timing.warm;
  for (int round = 0; round < rounds; ++round) {
    for (const std::size_t f : retime_order(k, round)) {
      if (dropped[f]) continue;
      CandidateResult r = evaluator.time(ok[f].candidate, t);
      if (!r.ok()) {
        dropped[f] = true;
        for (CandidateResult& orig : res.results)
          if (orig.candidate.variant == ok[f].candidate.variant && orig.candidate.config == ok[f].candidate.config) {
            orig.outcome = r.outcome;
            orig.reason = "while re-timing: " + r.reason;
            orig.device_lost = r.device_lost;
          }
        if (r.device_lost) {
          res.device_lost = true;
          res.stop_reason = "stopped while re-timing finalists: " + ok[f].candidate.to_string() + " left the device unusable";
          res.seconds = clock() - t0;
          return res;
        }
        continue;
      }
      samples[f].insert(samples[f].end(), r.timing.samples_us.begin(), r.timing.samples_us.end());
      round_samples[f].push_back(r.timing.samples_us);
    }
  }
  std::vector<CandidateResult> timed;
  RoundSamples timed_rounds;
  for (std::size_t f = 0; f < k; ++f) {
    if (dropped[f]) continue;
    CandidateResult r = ok[f];
    r.timing = summarise(samples[f]);
    r.reason.clear();
    timed.push_back(std::move(r));
    timed_rounds.push_back(std::move(round_samples[f]));
  }
  if (timed.empty()) {
    res.choice_note = "every finalist failed while re-timing";
    res.seconds = clock() - t0;
    return res;
  }
  const std::size_t w = choose_winner_paired(timed, timed_rounds, options.tie_fraction, &res.choice_note);
  res.winner = timed[w];
  res.finalists.push_back(timed[w]);
  std::vector<CandidateResult> others;
  for (std::size_t i = 0; i < timed.size(); ++i)
    if (i != w) others.push_back(timed[i]);
  std::sort(others.begin(), others.end(), by_time_then_rule);
  res.finalists.insert(res.finalists.end(), others.begin(), others.end());
  res.seconds = clock() - t0;
  return res;
}

}  // namespace kiln

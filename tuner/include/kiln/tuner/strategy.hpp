// Search strategies over a SearchSpace: exhaustive, random (a budget of evaluations or seconds)
// and anneal (simulated annealing, one chain per variant, moves to nearby configs, then a greedy
// polish around the best; a budget as well — see strategy_anneal.cpp and docs/tuning.md).  A
// strategy only decides which candidate to evaluate next; the SearchContext evaluates (validate,
// then time), remembers every result, and enforces the budget.
//
//   kiln::SearchOptions options;
//   options.budget.evals = 40;
//   auto s = kiln::make_strategy("anneal");             // ArgumentError for an unknown name
//   kiln::SearchContext ctx(evaluator, space.candidates, options);
//   s->run(ctx);                                         // stops when ctx.done()
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kiln/tuner/candidate.hpp"
#include "kiln/tuner/evaluator.hpp"

namespace kiln {

struct SearchBudget {
  std::optional<std::size_t> evals;  // evaluations (a revisit costs nothing)
  std::optional<double> seconds;     // wall clock of the search itself
};

struct SearchOptions {
  std::string strategy = "exhaustive";  // exhaustive | random | anneal
  // Unset evals: exhaustive has none; random and anneal take max(16, 25% of the space).
  SearchBudget budget;
  std::uint64_t seed = 1;
  TimingOptions timing;               // per candidate during the search
  // A candidate stops being timed once its median (after timing.min_runs) exceeds this factor
  // times the best median so far: it cannot win.  run_search refuses a factor below 1 or NaN.
  double give_up_factor = 1.25;
  // Re-timing: the fastest `finalists` (and their variants' defaults within reach, retime.hpp)
  // are timed again, round-robin, `retime_rounds` rounds (rounded up to even: pairs forward then
  // backward) of (1 warm-up + `retime_runs` runs) each, and only those samples decide.
  // run_search throws ArgumentError past the CLI's bounds: timing.runs 1 to 10^6, timing.warmup
  // 0 to 10^6, retime_runs 1 to 10^6; finalists and retime_rounds 1 to 1000; timing.min_runs at
  // least 1; tie_fraction finite and >= 0.
  int finalists = 4;
  int retime_rounds = 5;
  int retime_runs = 3;
  // Medians closer than max(3 standard errors of their difference, this fraction of the best)
  // are a tie; a median's standard error is estimated from the MAD of its samples.
  double tie_fraction = 0.01;
  const std::atomic<bool>* cancel = nullptr;  // checked between evaluations
  // Called after each evaluation: (evaluations so far, planned total, the result).
  std::function<void(std::size_t, std::size_t, const CandidateResult&)> on_result;
  // Called when the search enters a phase that may take a while ("confirming ...", "re-timing").
  std::function<void(const std::string&)> on_status;
  // Seconds from an arbitrary origin; default: the steady clock (tests inject one).
  std::function<double()> clock;
};

class SearchContext {
 public:
  SearchContext(Evaluator& evaluator, const std::vector<Candidate>& candidates, const SearchOptions& options);

  std::size_t size() const { return candidates_->size(); }
  const Candidate& candidate(std::size_t i) const { return (*candidates_)[i]; }
  // Evaluates candidate i (check, then time) unless it was already; nullptr when the search is
  // over (see done()) and i was not evaluated before.
  const CandidateResult* evaluate(std::size_t i);
  const CandidateResult* result(std::size_t i) const;  // nullptr when not evaluated
  bool evaluated(std::size_t i) const { return slot_[i] >= 0; }
  // Budget spent, cancelled, device lost, or every candidate evaluated.
  bool done() const;
  std::size_t evaluations() const { return results_.size(); }
  // How much of the budget is used, 0..1 (the larger of the evals and seconds fractions).
  double progress() const;
  // Planned number of evaluations (for progress bars).
  std::size_t planned() const;
  // Median time of candidate i; infinity when not evaluated or not ok.
  double cost(std::size_t i) const;
  std::optional<std::size_t> best() const;
  std::optional<std::size_t> find(const Variant* v, const Config& c) const;
  std::mt19937_64& rng() { return rng_; }
  double seconds() const;

  const std::vector<CandidateResult>& results() const { return results_; }
  bool cancelled() const;
  bool device_lost() const { return device_lost_; }
  bool budget_spent() const;
  std::optional<std::size_t> eval_budget() const { return eval_budget_; }

 private:
  Evaluator* evaluator_;
  const std::vector<Candidate>* candidates_;
  const SearchOptions* options_;
  std::vector<long> slot_;  // index into results_, -1 when not evaluated
  std::vector<CandidateResult> results_;
  std::optional<std::size_t> eval_budget_;
  std::optional<std::size_t> best_;
  std::mt19937_64 rng_;
  double start_ = 0.0;
  bool device_lost_ = false;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual const char* name() const = 0;
  // Evaluates candidates through ctx until ctx.done() or nothing is left to try.
  virtual void run(SearchContext& ctx) = 0;
};

// "exhaustive", "random" or "anneal"; throws ArgumentError naming the choices.
std::unique_ptr<Strategy> make_strategy(const std::string& name);
const std::vector<std::string>& strategy_names();

// The default evaluation budget of a strategy for a space of n candidates (nullopt: none).
std::optional<std::size_t> default_eval_budget(const std::string& strategy, std::size_t n);

}  // namespace kiln

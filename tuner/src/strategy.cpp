// SearchContext (evaluation, memo, budget) and the strategy factory.
#include "kiln/tuner/strategy.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "kiln/errors.hpp"
#include "strategies.hpp"

namespace kiln {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::optional<std::size_t> default_eval_budget(const std::string& strategy, std::size_t n) {
  if (strategy == "exhaustive") return std::nullopt;
  const std::size_t quarter = (n + 3) / 4;
  return std::min(n, std::max<std::size_t>(16, quarter));
}

SearchContext::SearchContext(Evaluator& evaluator, const std::vector<Candidate>& candidates,
                             const SearchOptions& options)
    : evaluator_(&evaluator),
      candidates_(&candidates),
      options_(&options),
      slot_(candidates.size(), -1),
      rng_(options.seed) {
  eval_budget_ = options.budget.evals;
  if (!eval_budget_ && !options.budget.seconds) eval_budget_ = default_eval_budget(options.strategy, candidates.size());
  start_ = options.clock ? options.clock() : steady_seconds();
}

double SearchContext::seconds() const { return (options_->clock ? options_->clock() : steady_seconds()) - start_; }

bool SearchContext::cancelled() const { return options_->cancel && options_->cancel->load(); }

bool SearchContext::budget_spent() const {
  if (eval_budget_ && results_.size() >= *eval_budget_) return true;
  if (options_->budget.seconds && seconds() >= *options_->budget.seconds) return true;
  return false;
}

bool SearchContext::done() const {
  return device_lost_ || results_.size() >= candidates_->size() || budget_spent() || cancelled();
}

double SearchContext::progress() const {
  double f = 0.0;
  if (eval_budget_ && *eval_budget_ > 0) f = std::max(f, static_cast<double>(results_.size()) / *eval_budget_);
  if (options_->budget.seconds && *options_->budget.seconds > 0) f = std::max(f, seconds() / *options_->budget.seconds);
  if (!eval_budget_ && !options_->budget.seconds && !candidates_->empty())
    f = static_cast<double>(results_.size()) / candidates_->size();
  return std::min(1.0, f);
}

std::size_t SearchContext::planned() const {
  return eval_budget_ ? std::min(*eval_budget_, candidates_->size()) : candidates_->size();
}

const CandidateResult* SearchContext::result(std::size_t i) const {
  return slot_[i] < 0 ? nullptr : &results_[static_cast<std::size_t>(slot_[i])];
}

double SearchContext::cost(std::size_t i) const {
  const CandidateResult* r = result(i);
  return r && r->ok() ? r->timing.median_us : std::numeric_limits<double>::infinity();
}

std::optional<std::size_t> SearchContext::best() const { return best_; }

std::optional<std::size_t> SearchContext::find(const Variant* v, const Config& c) const {
  for (std::size_t i = 0; i < candidates_->size(); ++i)
    if ((*candidates_)[i].variant == v && (*candidates_)[i].config == c) return i;
  return std::nullopt;
}

const CandidateResult* SearchContext::evaluate(std::size_t i) {
  if (const CandidateResult* r = result(i)) return r;
  if (done()) return nullptr;
  const Candidate& c = (*candidates_)[i];
  CandidateResult r = evaluator_->check(c);
  if (r.ok()) {
    TimingOptions t = options_->timing;
    if (best_) t.give_up_above_us = options_->give_up_factor * cost(*best_);
    CandidateResult timed = evaluator_->time(c, t);
    timed.error = r.error;
    timed.tolerance = r.tolerance;
    r = std::move(timed);
  }
  if (r.device_lost) device_lost_ = true;
  slot_[i] = static_cast<long>(results_.size());
  results_.push_back(std::move(r));
  const CandidateResult& stored = results_.back();
  // The best so far: lowest median; equal medians keep the tie rule's order.
  if (stored.ok()) {
    const double m = stored.timing.median_us;
    if (!best_ || m < cost(*best_) || (m == cost(*best_) && preferred_on_tie(c, (*candidates_)[*best_]))) best_ = i;
  }
  if (options_->on_result) options_->on_result(results_.size(), planned(), stored);
  return &stored;
}

const std::vector<std::string>& strategy_names() {
  static const std::vector<std::string> names = {"exhaustive", "random", "anneal"};
  return names;
}

std::unique_ptr<Strategy> make_strategy(const std::string& name) {
  if (name == "exhaustive") return detail::make_exhaustive_strategy();
  if (name == "random") return detail::make_random_strategy();
  if (name == "anneal") return detail::make_anneal_strategy();
  throw ArgumentError("unknown strategy '" + name + "': expected exhaustive, random or anneal");
}

}  // namespace kiln

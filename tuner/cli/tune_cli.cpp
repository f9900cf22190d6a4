#include "tune_cli.hpp"

#include <algorithm>

#include <CLI/CLI.hpp>
#include <kiln/tuner/strategy.hpp>

#include <iostream>

#include "common.hpp"
#include "table.hpp"
#include "tune_report.hpp"
#include "tuning_db_files.hpp"  // detail::printable

namespace kiln::cli {

TuneOptions options_for(const TuneCli& cli, const Plan* plan, const PlanItem* item, const std::atomic<bool>* cancel) {
  TuneOptions o;
  o.search.strategy = cli.strategy;
  if (plan && plan->strategy && !cli.strategy_opt->count()) o.search.strategy = *plan->strategy;
  if (item && item->strategy) o.search.strategy = *item->strategy;
  if (cli.evals_opt->count()) o.search.budget.evals = cli.budget_evals;
  else if (plan && plan->budget_evals) o.search.budget.evals = plan->budget_evals;
  if (item && item->budget_evals) o.search.budget.evals = item->budget_evals;
  if (cli.seconds_opt->count()) o.search.budget.seconds = cli.budget_seconds;
  else if (plan && plan->budget_seconds) o.search.budget.seconds = plan->budget_seconds;
  if (item && item->budget_seconds) o.search.budget.seconds = item->budget_seconds;
  o.search.seed = cli.seed;
  o.search.timing.runs = cli.runs;
  o.search.timing.warmup = cli.warmup;
  o.search.timing.warm = cli.warm;
  o.search.timing.min_runs = std::min(5, cli.runs);
  o.search.finalists = cli.finalists;
  o.search.cancel = cancel;
  o.evaluator.seed = cli.input_seed;
  o.evaluator.warm = cli.warm;
  o.evaluator.max_seconds_per_candidate = cli.max_seconds_per_candidate;
  o.evaluator.background_reference = !cli.no_background;
  o.evaluator.use_oracle = !cli.no_oracle;
  o.space.variants = cli.variants;
  o.store = !cli.no_store;
  return o;
}

Plan load_tune_plan(const TuneCli& cli) {
  Plan plan = !cli.plan.empty() ? load_plan(find_plan(cli.plan)) : load_problem_list(cli.from);
  // As bench --regret says: an empty file tuned nothing and reported success ("0 tuned, 0 failed").
  if (plan.problems.empty())
    throw UsageError((!cli.plan.empty() ? "--plan " : "--from ") + detail::printable(plan.source) +
                     ": no problems in the file (expected " +
                     (!cli.plan.empty() ? "`problems:` with at least one {op, shape}" : "lines '<op> <dtype> <shape> [device]'") + ")");
  for (const PlanItem& item : plan.problems)
    if (item.strategy) make_strategy(*item.strategy);
  return plan;
}

Json outcome_json(const std::string& op, const std::string& problem, const std::string& device,
                  const std::string& status, const std::string& detail, const TuneReport* report) {
  Json j = report ? tune_report_json(*report) : Json::object().set("op", op).set("problem", problem);
  if (!report && !device.empty()) j.set("device", device);
  j.set("status", status).set("detail", detail);
  return j;
}

std::string outcome_status(const TuneReport& report) {
  return report.ok() ? "tuned" : (report.search.cancelled ? "interrupted" : "failed");
}

std::string outcome_detail(const TuneReport& report) {
  if (!report.ok()) return report.error;
  return report.entry->variant + " [" + report.entry->config.to_string() + "] " + fmt_us(report.entry->median_us);
}

OutcomeCounts count_outcomes(const std::vector<ProblemOutcome>& outcomes, std::size_t expected) {
  OutcomeCounts c;
  for (const ProblemOutcome& x : outcomes) {
    if (x.status == "tuned") ++c.tuned;
    else if (x.status == "skipped") ++c.skipped;
    else ++c.failed;
  }
  c.not_reached = expected > outcomes.size() ? expected - outcomes.size() : 0;
  return c;
}

void print_outcomes(const std::string& plan_source, const std::vector<ProblemOutcome>& outcomes,
                    const OutcomeCounts& counts) {
  Table t({"op", "problem", "device", "status", "detail"});
  for (const ProblemOutcome& x : outcomes) {
    t.add({x.op, x.problem, x.device, x.status, x.detail});
    if (!x.has_report && x.status == "failed") std::cerr << "kiln tune: " << x.op << " " << x.problem << ": " << x.detail << "\n";
  }
  std::cout << "\nplan " << plan_source << ": " << counts.tuned << " tuned, " << counts.skipped << " skipped, "
            << counts.failed << " failed"
            << (counts.not_reached ? ", " + std::to_string(counts.not_reached) + " not reached" : std::string()) << "\n";
  t.print(std::cout);
}

Json outcomes_json(const std::vector<ProblemOutcome>& outcomes) {
  Json problems = Json::array();
  for (const ProblemOutcome& x : outcomes) problems.push(x.json);
  return problems;
}

}  // namespace kiln::cli

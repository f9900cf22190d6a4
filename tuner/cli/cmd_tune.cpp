// kiln tune: tune one problem (`kiln tune gemm --shape 4096x4096x4096`), every problem of a plan
// (`--plan default`), or every problem a KILN_TUNE=record run wrote (`--from FILE`), and store
// each winner in the user tuning database as soon as it is chosen.  Plans and problem lists
// resume: a problem whose entry in the user file is current is skipped unless --force.
#include <iostream>
#include <memory>
#include <optional>

#include <kiln/tuner/plan.hpp>
#include <kiln/tuner/tuner.hpp>

#include <CLI/CLI.hpp>
#include <kiln/kiln.hpp>

#include "common.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "table.hpp"
#include "tune_report.hpp"

namespace kiln::cli {
namespace {

struct TuneCli {
  std::string op, shape, dtype, device, strategy = "exhaustive", plan, from;
  std::size_t budget_evals = 0;
  double budget_seconds = 0.0;
  std::uint64_t seed = 1, input_seed = 42;
  int runs = 20, warmup = 3, finalists = 4;
  double max_seconds_per_candidate = 1.0;
  std::vector<std::string> variants;
  bool warm = false, force = false, no_store = false, json = false, verbose = false, no_background = false;
  CLI::Option* strategy_opt = nullptr;
  CLI::Option* evals_opt = nullptr;
  CLI::Option* seconds_opt = nullptr;
};

const char* kUsage =
    "usage: kiln tune <op> --shape SHAPE [--dtype T] [--device D] [--strategy exhaustive|random|anneal]\n"
    "                 [--budget-evals N] [--budget-seconds S] [--variants NAME...] [--json]\n"
    "       kiln tune --plan NAME|FILE [--force] ...    kiln tune --from FILE [--force] ...";

struct ProblemOutcome {
  std::string op, problem, device, status, detail;
  std::optional<TuneReport> report;
};

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
  o.space.variants = cli.variants;
  o.store = !cli.no_store;
  return o;
}

void check_variants(const Runtime& rt, const std::string& op, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    const Variant* v = rt.registry().find_variant(n);
    if (v && v->op() == op) continue;
    std::string known;
    for (const Variant* x : rt.registry().variants(op)) known += (known.empty() ? "" : ", ") + x->name();
    throw UsageError("no variant '" + n + "' of op '" + op + "' (its variants: " + (known.empty() ? "none" : known) + ")");
  }
}

}  // namespace

Command make_tune_command(CLI::App& parent) {
  auto o = std::make_shared<TuneCli>();
  Command c;
  c.app = parent.add_subcommand("tune", "Tune problems and store the winners in the user tuning database");
  auto* app = c.app;
  app->add_option("op", o->op, "Op to tune");
  app->add_option("--shape", o->shape, "Problem extents: 4096x4096x4096 or m=4096,n=4096,k=4096");
  app->add_option("--dtype", o->dtype, "Element type (default: the op's first)");
  app->add_option("--device", o->device, "host, cuda or cuda:N (default: CUDA 0 if present, else host)");
  o->strategy_opt = app->add_option("--strategy", o->strategy, "exhaustive (default), random or anneal");
  o->evals_opt = app->add_option("--budget-evals", o->budget_evals, "At most this many candidates evaluated")
                     ->check(CLI::PositiveNumber);
  o->seconds_opt = app->add_option("--budget-seconds", o->budget_seconds, "Search time limit per problem")
                       ->check(CLI::PositiveNumber);
  app->add_option("--variants", o->variants, "Only these variants")->delimiter(',');
  app->add_option("--plan", o->plan, "A plan file, or the name of a shipped plan (e.g. default)");
  app->add_option("--from", o->from, "A problem list written by KILN_TUNE=record");
  app->add_flag("--force", o->force, "Retune problems that already have a current entry");
  app->add_option("--seed", o->seed, "Search seed (random, anneal)");
  app->add_option("--input-seed", o->input_seed, "Seed of the generated inputs");
  app->add_option("--runs", o->runs, "Timed runs per candidate (default 20)")->check(CLI::PositiveNumber);
  app->add_option("--warmup", o->warmup, "Warm-up runs per candidate (default 3)")->check(CLI::NonNegativeNumber);
  app->add_option("--finalists", o->finalists, "Candidates re-timed interleaved (default 4)")->check(CLI::PositiveNumber);
  app->add_option("--max-seconds-per-candidate", o->max_seconds_per_candidate,
                  "Time spent timing one candidate is kept under this (default 1)")
      ->check(CLI::PositiveNumber);
  app->add_flag("--warm", o->warm, "Do not flush the L2 cache between timed runs");
  app->add_flag("--reference-first", o->no_background,
                "Compute the host reference before the search (default on CUDA: alongside it)");
  app->add_flag("--no-store", o->no_store, "Do not write the result to the database");
  app->add_flag("-v,--verbose", o->verbose, "List rejections, failures and every timing");
  app->add_flag("--json", o->json, "Print JSON");
  c.usage = kUsage;
  c.run = [o] {
    const int sources = (!o->op.empty() ? 1 : 0) + (!o->plan.empty() ? 1 : 0) + (!o->from.empty() ? 1 : 0);
    if (sources != 1) throw UsageError("give exactly one of: an op (with --shape), --plan, --from");
    if (o->op.empty() && !o->shape.empty()) throw UsageError("--shape goes with an op, not with --plan or --from");
    make_strategy(o->strategy);  // an unknown strategy is a usage error before anything loads
    auto rt = open_runtime("off", false);
    const std::atomic<bool>* cancel = install_interrupt_flag();
    Tuner tuner(*rt);
    const Device default_device = parse_device(o->device);

    // The problems to tune.
    std::optional<Plan> plan;
    if (!o->plan.empty()) plan = load_plan(find_plan(o->plan));
    if (!o->from.empty()) plan = load_problem_list(o->from);
    if (plan)
      for (const PlanItem& item : plan->problems)
        if (item.strategy) make_strategy(*item.strategy);
    if (!plan) {
      const Problem p = make_problem(*rt, o->op, o->dtype, o->shape, default_device);
      check_variants(*rt, o->op, o->variants);
      plan = Plan{};
      PlanItem item;
      item.op = o->op;
      item.dtype = p.dtype;
      item.shape = o->shape;
      plan->problems.push_back(item);
    }
    const bool single = !o->op.empty();
    // An unwritable database is found now, not after the tuning (throws TuningDbError, exit 1).
    if (!o->no_store) rt->db().check_writable();

    std::vector<ProblemOutcome> outcomes;
    ProgressBar bar("tune");
    const std::size_t total = plan->problems.size();
    for (std::size_t i = 0; i < total && !interrupted(); ++i) {
      const PlanItem& item = plan->problems[i];
      ProblemOutcome out;
      out.op = item.op;
      out.problem = item.shape;
      try {
        const Device dev = item.device && o->device.empty() ? parse_device(*item.device) : default_device;
        out.device = dev.to_string();
        const Problem p = make_problem(*rt, item.op, std::string(dtype_name(item.dtype)), item.shape, dev);
        out.problem = p.key();
        if (!single && !o->force) {
          if (auto e = tuner.current_entry(p)) {
            out.status = "skipped";
            out.detail = "already tuned: " + e->variant + " [" + e->config.to_string() + "] (--force retunes)";
            outcomes.push_back(std::move(out));
            continue;
          }
        }
        TuneOptions to = options_for(*o, single ? nullptr : &*plan, single ? nullptr : &item, cancel);
        // On the host the reference thread would compete with the host variants being timed.
        if (dev.is_host()) to.evaluator.background_reference = false;
        const std::string label = "tune " + item.op + " " + p.key() + (total > 1 ? " [" + std::to_string(i + 1) + "/" +
                                                                                       std::to_string(total) + "]"
                                                                                 : "");
        bar.set_label(label);
        std::size_t last_done = 0, last_planned = 0;
        to.search.on_result = [&](std::size_t done, std::size_t planned, const CandidateResult& r) {
          last_done = done;
          last_planned = planned;
          bar.update(done, planned, r.candidate.to_string());
        };
        to.search.on_status = [&](const std::string& what) { bar.update(last_done, last_planned, what); };
        TuneReport report = tuner.tune(p, to);
        bar.finish();
        if (!o->json) {
          print_tune_report(std::cout, report, o->verbose);
          std::cout << std::flush;
        }
        out.status = report.ok() ? "tuned" : (report.search.cancelled ? "interrupted" : "failed");
        if (report.ok())
          out.detail = report.entry->variant + " [" + report.entry->config.to_string() + "] " + fmt_us(report.entry->median_us);
        else
          out.detail = report.error;
        const bool lost = report.search.device_lost;
        out.report = std::move(report);
        outcomes.push_back(std::move(out));
        if (lost) {
          std::cerr << "kiln tune: the device is unusable after a fault; the remaining problems were not tuned\n";
          break;
        }
      } catch (const UnknownOpError& e) {
        if (single) throw;
        out.status = "failed";
        out.detail = e.what();
        outcomes.push_back(std::move(out));
      } catch (const ArgumentError& e) {  // a bad shape or dtype in a plan line
        if (single) throw;
        out.status = "failed";
        out.detail = std::string(e.what()) + (item.line ? " (" + plan->source + " line " + std::to_string(item.line) + ")" : "");
        outcomes.push_back(std::move(out));
      } catch (const UsageError& e) {  // a device this machine does not have
        if (single) throw;
        out.status = "failed";
        out.detail = std::string(e.what()) + (item.line ? " (" + plan->source + " line " + std::to_string(item.line) + ")" : "");
        outcomes.push_back(std::move(out));
      }
    }
    bar.finish();

    std::size_t tuned = 0, skipped = 0, failed = 0;
    for (const ProblemOutcome& x : outcomes) {
      if (x.status == "tuned") ++tuned;
      else if (x.status == "skipped") ++skipped;
      else ++failed;
    }
    const std::size_t not_reached = total - outcomes.size();
    if (o->json) {
      Json problems = Json::array();
      for (const ProblemOutcome& x : outcomes) {
        Json j = x.report ? tune_report_json(*x.report) : Json::object().set("op", x.op).set("problem", x.problem);
        j.set("status", x.status).set("detail", x.detail);
        problems.push(std::move(j));
      }
      std::cout << Json::object()
                       .set("problems", std::move(problems))
                       .set("tuned", tuned)
                       .set("skipped", skipped)
                       .set("failed", failed)
                       .set("not_reached", not_reached)
                       .set("interrupted", interrupted())
                       .set("db_path", rt->db().user_path())
                       .dump()
                << "\n";
    } else if (!single) {
      Table t({"op", "problem", "device", "status", "detail"});
      for (const ProblemOutcome& x : outcomes) {
        if (x.status == "tuned" || x.status == "skipped" || x.status == "failed" || x.status == "interrupted")
          t.add({x.op, x.problem, x.device, x.status, x.detail});
        if (!x.report && x.status == "failed") std::cerr << "kiln tune: " << x.op << " " << x.problem << ": " << x.detail << "\n";
      }
      std::cout << "\nplan " << plan->source << ": " << tuned << " tuned, " << skipped << " skipped, " << failed
                << " failed" << (not_reached ? ", " + std::to_string(not_reached) + " not reached" : std::string()) << "\n";
      t.print(std::cout);
    }
    if (interrupted()) {
      std::cerr << "kiln tune: interrupted; finished problems are stored, run the same command to resume\n";
      return kExitInterrupted;
    }
    return failed || not_reached ? kExitFailed : kExitOk;
  };
  return c;
}

}  // namespace kiln::cli

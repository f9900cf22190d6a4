// kiln tune: tune one problem (`kiln tune gemm --shape 4096x4096x4096`), every problem of a plan
// (`--plan default`), or every problem a KILN_TUNE=record run wrote (`--from FILE`), and store
// each winner in the user tuning database as soon as it is chosen.  Plans and problem lists
// resume: a problem whose entry in the user file is current is skipped unless --force.
// A plan runs on several devices at once with --devices (tune_pool.hpp) and is split across
// hosts with --shard i/N or the launcher's rank and size (kiln/tuner/shard.hpp).
#include <chrono>
#include <iostream>
#include <memory>
#include <new>
#include <optional>

#include <kiln/tuner/plan.hpp>
#include <kiln/tuner/shard.hpp>
#include <kiln/tuner/tuner.hpp>

#include <CLI/CLI.hpp>
#include <kiln/kiln.hpp>

#include "common.hpp"
#include "problem_flags.hpp"
#include "json.hpp"
#include "json_document.hpp"
#include "progress.hpp"
#include "range_check.hpp"
#include "table.hpp"
#include "tune_cli.hpp"
#include "tune_pool.hpp"
#include "tune_report.hpp"
#include "tune_worker.hpp"

namespace kiln::cli {
namespace {

const char* kUsage =
    "usage: kiln tune <op> --shape SHAPE [--dtype T] [--device D] [--strategy exhaustive|random|anneal]\n"
    "                 [--budget-evals N] [--budget-seconds S] [--variants NAME...] [--json]\n"
    "       kiln tune --plan NAME|FILE [--force] [--devices all|cuda:0,cuda:2] [--shard i/N] ...\n"
    "       kiln tune --from FILE [--force] [--devices ...] [--shard i/N] ...";

void check_variants(const Runtime& rt, const std::string& op, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    const Variant* v = rt.registry().find_variant(n);
    if (v && v->op() == op) continue;
    throw UsageError(unknown_variant_message(rt, op, n));
  }
}

}  // namespace

Command make_tune_command(CLI::App& parent) {
  auto o = std::make_shared<TuneCli>();
  Command c;
  c.app = parent.add_subcommand("tune", "Tune problems and store the winners in the user tuning database");
  auto* app = c.app;
  add_problem_flags(app, "Op to tune", o->op, o->shape, o->dtype, o->device);
  o->strategy_opt = app->add_option("--strategy", o->strategy, "exhaustive (default), random or anneal")
                       ->check(not_empty("exhaustive, random or anneal"));
  o->evals_opt = app->add_option("--budget-evals", o->budget_evals, "At most this many candidates evaluated")
                     ->transform(count_in_range(1, 1e9));
  o->seconds_opt = app->add_option("--budget-seconds", o->budget_seconds, "Search time limit per problem")
                       ->check(in_range(0.001, 1e7));
  app->add_option("--variants", o->variants, "Only these variants")
      ->delimiter(',')
      ->check(not_empty("variant names (kiln list OP lists them)"));
  app->add_option("--plan", o->plan, "A plan file, or the name of a shipped plan (e.g. default)")
      ->check(not_empty("a plan file or a shipped plan's name", false));
  app->add_option("--from", o->from, "A problem list written by KILN_TUNE=record")
      ->check(not_empty("a problem list file", false));
  app->add_flag("--force", o->force,
                "Retune problems that already have a current entry; try problems larger than the memory");
  app->add_option("--seed", o->seed, "Search seed (random, anneal)")->check(seed_value());
  app->add_option("--input-seed", o->input_seed, "Seed of the generated inputs")->check(seed_value());
  app->add_option("--runs", o->runs, "Timed runs per candidate (default 20)")->transform(count_in_range(1, 1e6));
  app->add_option("--warmup", o->warmup, "Warm-up runs per candidate (default 3)")->transform(count_in_range(0, 1e6));
  app->add_option("--finalists", o->finalists, "Candidates re-timed interleaved (default 4)")->transform(count_in_range(1, 1000));
  app->add_option("--max-seconds-per-candidate", o->max_seconds_per_candidate,
                  "Time spent timing one candidate is kept under this (default 1)")
      ->check(in_range(0.001, 1e5));
  app->add_flag("--warm", o->warm, "Do not flush the L2 cache between timed runs");
  app->add_flag("--reference-first", o->no_background,
                "Compute the host reference before the search (default on CUDA: alongside it)");
  app->add_flag("--no-oracle", o->no_oracle,
                "Always compute the expected outputs with the host reference (default: large GPU problems use a checked vendor oracle)");
  app->add_flag("--no-store", o->no_store, "Do not write the result to the database");
  app->add_flag("-v,--verbose", o->verbose, "List rejections, failures and every timing");
  app->add_flag("--json", o->json, "Print JSON");
  app->add_flag("--csv", o->csv, "Print CSV: one row per evaluated candidate (times in microseconds)");
  app->add_option("--devices", o->devices,
                  "Tune a plan on these devices at once, one worker process each: all, or a list such as cuda:0,cuda:2");
  app->add_option("--shard", o->shard,
                  "Tune share i of N of a plan (0 <= i < N); default: the rank and size mpirun or srun set")
      ->check(not_empty("i/N with 0 <= i < N"));
  // Test-only: N host workers, so the worker pool can be tested without GPUs.
  // (Checked in run: CLI11 names a hidden option as "" in its errors.)
  app->add_option("--simulate-devices", o->simulate_devices)->group("");
  // Internal: this process is a worker of a --devices run on DEVICE (tune_worker.hpp).
  app->add_option("--worker", o->worker_device)->group("");
  c.usage = kUsage;
  c.run = [o, app] {
    if (!o->worker_device.empty()) return run_tune_worker(*o);
    // --devices '' (an unset variable in a script) would otherwise quietly tune on one device.
    if (app->count("--simulate-devices") > 0 && o->simulate_devices < 1)
      throw UsageError("--simulate-devices " + std::to_string(o->simulate_devices) + ": expected 1 to 64");
    if (app->count("--devices") > 0 && o->devices.empty())
      throw UsageError("bad --devices '': expected all or a list such as cuda:0,cuda:2");
    const int sources = (!o->op.empty() ? 1 : 0) + (!o->plan.empty() ? 1 : 0) + (!o->from.empty() ? 1 : 0);
    if (sources != 1) throw UsageError("give exactly one of: an op (with --shape), --plan, --from");
    if (o->op.empty() && !o->shape.empty()) throw UsageError("--shape goes with an op, not with --plan or --from");
    // Each plan line has its own dtype (f32 when it names none): `--plan P --dtype bf16` tuned f32.
    if (o->op.empty() && app->count("--dtype") > 0)
      throw UsageError("--dtype goes with an op, not with --plan or --from (each problem names its dtype, default f32)");
    const bool pool = !o->devices.empty() || o->simulate_devices > 0;
    if (pool && !o->op.empty()) throw UsageError("--devices goes with --plan or --from (one problem runs on --device)");
    if (pool && !o->device.empty()) throw UsageError("give --device or --devices, not both");
    if (!o->devices.empty() && o->simulate_devices > 0) throw UsageError("give --devices or --simulate-devices, not both");
    if (!o->shard.empty() && !o->op.empty()) throw UsageError("--shard goes with --plan or --from");
    std::optional<Shard> shard;
    if (!o->shard.empty()) shard = parse_shard(o->shard);
    make_strategy(o->strategy);  // an unknown strategy is a usage error before anything loads
    auto rt = open_runtime("off", false);
    const std::atomic<bool>* cancel = install_interrupt_flag();
    Tuner tuner(*rt);
    const Device default_device = parse_device(o->device);

    // The problems to tune.
    std::optional<Plan> plan;
    if (!o->plan.empty() || !o->from.empty()) plan = load_tune_plan(*o);
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
    // This host's share of a plan: --shard, else the launcher's rank and size, else all of it.
    if (!shard && o->op.empty()) shard = shard_from_environment();
    if (!shard) shard = Shard{};
    const std::vector<std::size_t> selected = shard_indices(*plan, *shard);
    if (!shard->whole() && !o->json)
      std::cerr << "kiln tune: shard " << shard->to_string() << " (from " << shard->source << "): " << selected.size()
                << " of the plan's " << plan->problems.size() << " problems\n";
    // An unwritable database is found now, not after the tuning (throws TuningDbError, exit 1).
    if (!o->no_store) rt->db().check_writable();
    if (o->csv && o->json) throw UsageError("give --json or --csv, not both");
    if (pool && o->csv) throw UsageError("--csv is not available with --devices (use --json)");
    if (pool) return run_tune_pool(*o, *rt, *plan, selected, *shard);
    if (o->csv) print_tune_csv_header(std::cout);
    const bool single = !o->op.empty();

    std::vector<ProblemOutcome> outcomes;
    ProgressBar bar("tune");
    const std::size_t total = selected.size();
    const auto plan_start = std::chrono::steady_clock::now();
    double tuning_seconds = 0.0;  // spent on problems actually tuned (skips are instant)
    std::size_t tuned_so_far = 0;
    // A plan under --json streams one line per finished problem (JSON Lines), then a summary line.
    const bool stream = o->json && !single;
    std::size_t streamed = 0;
    auto stream_finished = [&] {
      for (; stream && streamed < outcomes.size(); ++streamed)
        std::cout << json_document().set("type", "problem").set("result", outcomes[streamed].json).dump(0) << "\n"
                  << std::flush;
    };
    for (std::size_t n = 0; n < total && !interrupted(); ++n) {
      stream_finished();
      const PlanItem& item = plan->problems[selected[n]];
      if (total > 1) {  // the plan's own line above the problem's bar
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - plan_start).count();
        std::string overall = "plan: problem " + std::to_string(n + 1) + "/" + std::to_string(total) + ", " +
                              clock_text(elapsed) + " elapsed";
        if (tuned_so_far > 0)
          overall += ", ETA " + clock_text(tuning_seconds / static_cast<double>(tuned_so_far) *
                                           static_cast<double>(total - n));
        bar.set_overall(overall);
      }
      bar.restart();
      ProblemOutcome out;
      out.op = item.op;
      out.problem = item.shape;
      try {
        const Device dev = item.device && o->device.empty() ? parse_device(*item.device) : default_device;
        out.device = dev.to_string();
        const Problem p = make_problem(*rt, item.op, std::string(dtype_name(item.dtype)), item.shape, dev);
        out.problem = p.key();
        check_problem_fits(p, o->force);
        if (!single && !o->force) {
          if (auto e = tuner.current_entry(p)) {
            out.status = "skipped";
            out.detail = "already tuned: " + e->variant + " [" + e->config.to_string() + "] (--force retunes)";
            out.json = outcome_json(out.op, out.problem, out.device, out.status, out.detail, nullptr);
            outcomes.push_back(std::move(out));
            continue;
          }
        }
        TuneOptions to = options_for(*o, single ? nullptr : &*plan, single ? nullptr : &item, cancel);
        // On the host the reference thread would compete with the host variants being timed.
        if (dev.is_host()) to.evaluator.background_reference = false;
        const std::string label = "tune " + item.op + " " + p.key() + (total > 1 ? " [" + std::to_string(n + 1) + "/" +
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
        bar.update(0, 0, "preparing inputs and the host reference");  // can take minutes for large problems
        const auto problem_start = std::chrono::steady_clock::now();
        TuneReport report = tuner.tune(p, to);
        tuning_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - problem_start).count();
        ++tuned_so_far;
        bar.finish();
        if (o->csv) {
          print_tune_csv_rows(std::cout, report);
          std::cout << std::flush;
        } else if (!o->json) {
          print_tune_report(std::cout, report, o->verbose);
          std::cout << std::flush;
        }
        out.status = outcome_status(report);
        out.detail = outcome_detail(report);
        out.json = outcome_json(out.op, out.problem, out.device, out.status, out.detail, &report);
        out.has_report = true;
        outcomes.push_back(std::move(out));
        if (report.search.device_lost) {
          std::cerr << "kiln tune: the device is unusable after a fault; the remaining problems were not tuned\n";
          break;
        }
      } catch (const UnknownOpError& e) {
        if (single) throw;
        out.status = "failed";
        out.detail = e.what();
        out.json = outcome_json(out.op, out.problem, out.device, out.status, out.detail, nullptr);
        outcomes.push_back(std::move(out));
      } catch (const ArgumentError& e) {  // a bad shape or dtype in a plan line
        if (single) throw;
        out.status = "failed";
        out.detail = std::string(e.what()) + (item.line ? " (" + plan->source + " line " + std::to_string(item.line) + ")" : "");
        out.json = outcome_json(out.op, out.problem, out.device, out.status, out.detail, nullptr);
        outcomes.push_back(std::move(out));
      } catch (const UsageError& e) {  // a device this machine does not have, a problem too large
        if (single) throw;
        out.status = "failed";
        out.detail = std::string(e.what()) + (item.line ? " (" + plan->source + " line " + std::to_string(item.line) + ")" : "");
        out.json = outcome_json(out.op, out.problem, out.device, out.status, out.detail, nullptr);
        outcomes.push_back(std::move(out));
      } catch (const std::bad_alloc&) {  // not an interruption: say what happened, go on
        bar.finish();
        if (single) throw Error("out of memory while preparing the inputs of " + out.problem);
        out.status = "failed";
        out.detail = "out of memory while preparing the inputs";
        // Without its own JSON the problem's --json line read {"result": null}.
        out.json = outcome_json(out.op, out.problem, out.device, out.status, out.detail, nullptr);
        outcomes.push_back(std::move(out));
      } catch (const TuningDbError&) {  // the database cannot take results: stop the whole run
        throw;
      } catch (const Error& e) {  // an allocation that failed, a CUDA error: this problem only
        bar.finish();
        if (single) throw;
        out.status = "failed";
        out.detail = e.what();
        out.json = outcome_json(out.op, out.problem, out.device, out.status, out.detail, nullptr);
        outcomes.push_back(std::move(out));
      }
    }
    bar.finish();
    stream_finished();

    const OutcomeCounts counts = count_outcomes(outcomes, total);
    if (stream) {
      std::cout << json_document()
                       .set("type", "summary")
                       .set("tuned", counts.tuned)
                       .set("skipped", counts.skipped)
                       .set("failed", counts.failed)
                       .set("not_reached", counts.not_reached)
                       .set("interrupted", interrupted())
                       .set("shard", shard->to_string())
                       .set("db_path", rt->db().user_path())
                       .dump(0)
                << "\n";
    } else if (o->json) {
      Json result = json_document()
                        .set("problems", outcomes_json(outcomes))
                        .set("tuned", counts.tuned)
                        .set("skipped", counts.skipped)
                        .set("failed", counts.failed)
                        .set("not_reached", counts.not_reached)
                        .set("interrupted", interrupted());
      if (!single) result.set("shard", shard->to_string());
      std::cout << result.set("db_path", rt->db().user_path()).dump() << "\n";
    } else if (!single && !o->csv) {
      print_outcomes(plan->source, outcomes, counts);
    }
    if (interrupted()) {
      std::cerr << "kiln tune: interrupted; finished problems are stored, run the same command to resume\n";
      return kExitInterrupted;
    }
    return counts.failed || counts.not_reached ? kExitFailed : kExitOk;
  };
  return c;
}

}  // namespace kiln::cli

// kiln bench: every variant (or the named ones) of an op on one problem, each validated and then
// timed in the same run, with throughput and the ratio to a baseline measured alongside:
// op()'s own choice by default, the fastest vendor variant with --vs vendor, or a named variant.
// ratio = baseline time / variant time, so > 1 means faster than the baseline.
//
// Two more modes (bench_modes.hpp): --overhead (host cost of a memo-hit op() over the bound
// launch of the same kernel) and --regret --problems FILE (op()'s choice against every candidate
// over a list of problems: regret per problem and the geomean).
#include <algorithm>
#include <iostream>
#include <memory>

#include <kiln/tuner/evaluator.hpp>
#include <kiln/tuner/oracle.hpp>
#include <kiln/tuner/problem_data.hpp>
#include <kiln/tuner/search_space.hpp>
#include <kiln/tuner/tuner.hpp>

#include <CLI/CLI.hpp>
#include <kiln/kiln.hpp>

#include "bench_modes.hpp"
#include "bench_rounds.hpp"
#include "common.hpp"
#include "problem_flags.hpp"
#include "csv.hpp"
#include "json.hpp"
#include "json_document.hpp"
#include "progress.hpp"
#include "range_check.hpp"
#include "table.hpp"

namespace kiln::cli {
namespace {

struct BenchCli {
  std::string op, shape, dtype, device, vs;
  std::vector<std::string> variants;
  int runs = 20, warmup = 3;
  bool warm = false, json = false, csv = false, force = false, no_oracle = false;
  std::uint64_t input_seed = 42;
  bool overhead = false, regret = false;
  std::string problems;
  double time_limit = 0;
  int iters = 20000, batch = 200;
  double max_seconds_per_row = 20.0;
};

// Below this many timed runs per round a row's time cap does not stop it (a median needs a few).
constexpr int kBenchMinRunsPerRound = 5;

struct Row {
  Candidate candidate;
  bool dispatched = false;  // what op() runs for this problem
  std::string label;        // "default", "tuned", ...
  bool usable = true;
  CandidateResult result;
};

const char* kUsage =
    "usage: kiln bench <op> --shape SHAPE [--dtype T] [--device D] [--variants all|NAME...] [--vs vendor|NAME]\n"
    "                  [--runs N] [--max-seconds-per-row S] [--warm] [--force] [--json | --csv]\n"
    "       kiln bench --overhead [<op> --shape SHAPE] [--device D] [--iters N] [--batch N] [--json]\n"
    "       kiln bench --regret --problems FILE [--device D] [--runs N] [--warm] [--time-limit S] [--json]";

}  // namespace

Command make_bench_command(CLI::App& parent) {
  auto o = std::make_shared<BenchCli>();
  Command c;
  c.app = parent.add_subcommand("bench", "Time every variant of an op on one problem against a baseline");
  auto* app = c.app;
  add_problem_flags(app, "Op to benchmark", o->op, o->shape, o->dtype, o->device);
  app->add_option("--variants", o->variants, "all (default) or variant names")
      ->delimiter(',')
      ->check(not_empty("all or variant names (kiln list OP lists them)"));
  app->add_option("--vs", o->vs, "Baseline: vendor (fastest vendor variant) or a variant name; default op()'s choice")
      ->check(not_empty("vendor or a variant name"));
  app->add_option("--runs", o->runs, "Timed runs per variant (default 20; fewer when --max-seconds-per-row stops it)")
      ->transform(count_in_range(1, 1e6));
  app->add_option("--max-seconds-per-row", o->max_seconds_per_row,
                  "Wall-clock cap on each row's timed runs and warm-ups, split over its rounds; at least 5 runs a "
                  "round are taken (default 20)")
      ->check(in_range(0.001, 1e5));
  app->add_option("--warmup", o->warmup, "Warm-up runs (default 3)")->transform(count_in_range(0, 1e6));
  app->add_flag("--force", o->force, "Try a problem larger than the device or host memory");
  app->add_option("--input-seed", o->input_seed, "Seed of the generated inputs")->check(seed_value());
  app->add_flag("--warm", o->warm, "Do not flush the L2 cache between timed runs");
  app->add_flag("--no-oracle", o->no_oracle,
                "Check every output element against the f64 host reference, also for large problems "
                "(default: those are checked against the vendor variant, itself checked on samples)");
  app->add_flag("--json", o->json, "Print JSON");
  CLI::Option* csv_flag = app->add_flag("--csv", o->csv, "Print CSV: one row per variant (times in microseconds)");
  app->add_flag("--overhead", o->overhead,
                "Host time of a memo-hit op() call over the bound launch of the same kernel (default: add 1x1024)");
  // Readable bounds (CLI::PositiveNumber prints a 309-digit one and lets nan through); 2 * --batch
  // must not overflow an int.
  CLI::Option* iters_flag = app->add_option("--iters", o->iters, "--overhead: calls of each kind (default 20000)")->transform(count_in_range(2, 1e9));
  CLI::Option* batch_flag = app->add_option("--batch", o->batch, "--overhead: calls per timed batch (default 200)")->transform(count_in_range(1, 1e6));
  app->add_flag("--regret", o->regret, "op()'s regret (its time / the fastest candidate's) over --problems");
  CLI::Option* problems_flag = app->add_option("--problems", o->problems, "--regret: a plan (.yaml) or a problem list (kiln tune --from format)")
      ->check(not_empty("a plan or problem list file", false));
  CLI::Option* time_limit_flag = app->add_option("--time-limit", o->time_limit,
                  "--regret: start no problem (and no candidate of the one under way) after this many seconds; the rest are reported as not measured (default: none)")
      ->check(in_range(1e-6, 1e7));
  c.usage = kUsage;
  c.run = [o, app, csv_flag, iters_flag, batch_flag, problems_flag, time_limit_flag] {
    if (o->overhead && o->regret) throw UsageError("--overhead and --regret are separate runs: pick one");
    // A flag of another mode was ignored without a word: `kiln bench --regret --problems P --csv`
    // printed the table, `kiln bench gemm --shape S --time-limit 60` ran without a limit.
    if (!o->overhead)
      for (const CLI::Option* flag : {iters_flag, batch_flag})
        if (flag->count() > 0) throw UsageError(flag->get_name() + " goes with --overhead");
    if (!o->regret)
      for (const CLI::Option* flag : {problems_flag, time_limit_flag})
        if (flag->count() > 0) throw UsageError(flag->get_name() + " goes with --regret");
    if ((o->overhead || o->regret) && csv_flag->count() > 0)
      throw UsageError(std::string("--csv goes with a bench of one op (") + (o->overhead ? "--overhead" : "--regret") +
                       " prints a table or, with --json, JSON)");
    // Flags of the one-op table that these modes never read: `--regret --no-oracle` still took
    // large problems' expected outputs from the oracle, `--overhead --runs 5` timed 20000 calls.
    if (o->overhead || o->regret) {
      std::vector<const char*> unread = {"--variants", "--vs", "--force", "--no-oracle", "--max-seconds-per-row"};
      if (o->overhead) unread.insert(unread.end(), {"--runs", "--warmup", "--warm", "--input-seed"});
      if (o->regret) unread.push_back("--dtype");  // each problem of the file names its own
      for (const char* flag : unread)
        if (app->count(flag) > 0)
          throw UsageError(std::string(flag) + " goes with a bench of one op (" + (o->overhead ? "--overhead" : "--regret") +
                           " does not read it)");
    }
    if (o->overhead)
      return run_overhead_bench({o->op, o->shape, o->dtype, o->device, o->iters, o->batch, o->json});
    if (o->regret) {
      if (!o->op.empty() || !o->shape.empty()) throw UsageError("--regret takes its problems from --problems, not <op> --shape");
      return run_regret_bench(
          {o->problems, o->device, o->runs, o->warmup, o->warm, o->json, o->input_seed, o->time_limit});
    }
    if (o->op.empty()) throw UsageError("bench: the op is required (or --overhead / --regret)");
    auto rt = open_runtime("", false);  // KILN_TUNE as op() sees it: op()'s row is what op() would run
    const Device dev = parse_device(o->device);
    Problem p = make_problem(*rt, o->op, o->dtype, o->shape, dev);
    check_problem_fits(p, o->force);
    p.align_bytes = layout_alignment(*p.schema, p, /*pitched=*/false);  // the dense buffers benched
    const DeviceInfo& info = device_info(dev);
    const OpSchema& schema = *p.schema;

    // Which variants.
    std::vector<const Variant*> chosen;
    const bool all = o->variants.empty() || (o->variants.size() == 1 && o->variants[0] == "all");
    for (const Variant* v : rt->registry().variants(o->op)) {
      if (all) {
        if (v->device_kind() == dev.kind && !(v->desc().reference && dev.is_cuda())) chosen.push_back(v);
        continue;
      }
      if (std::find(o->variants.begin(), o->variants.end(), v->name()) != o->variants.end()) chosen.push_back(v);
    }
    if (!all)
      for (const std::string& n : o->variants) {
        const Variant* v = rt->registry().find_variant(n);
        if (!v || v->op() != o->op) throw UsageError(unknown_variant_message(*rt, o->op, n));
      }
    bool vs_vendor = o->vs == "vendor";
    const Variant* vs_variant = nullptr;
    if (!o->vs.empty() && !vs_vendor) {
      vs_variant = rt->registry().find_variant(o->vs);
      if (!vs_variant || vs_variant->op() != o->op)
        throw UsageError("--vs " + o->vs + ": expected 'vendor' or a variant of '" + o->op + "'");
      if (std::find(chosen.begin(), chosen.end(), vs_variant) == chosen.end()) chosen.push_back(vs_variant);
    }
    if (vs_vendor)  // the vendor baseline is measured even when --variants leaves it out
      for (const Variant* v : rt->registry().variants(o->op))
        if (v->desc().vendor && v->device_kind() == dev.kind && std::find(chosen.begin(), chosen.end(), v) == chosen.end())
          chosen.push_back(v);

    // Rows: each variant's default config, plus op()'s choice when that is another config.
    // What op() runs: the memoised decision (by default raced at first use, KILN_TUNE=race); with
    // nothing that supports p, explain() says so in the rows below.
    Decision decision;
    try {
      decision = rt->dispatcher().decide(p, info);
    } catch (const NoVariantError&) {
      decision = rt->explain(p);
    }
    std::vector<Row> rows;
    for (const Variant* v : chosen) {
      Row r;
      r.candidate = {v, v->default_config_for(info, p), true};
      r.label = "default";
      std::string why;
      r.usable = candidate_usable(*v, r.candidate.config, p, info, &why);
      if (!r.usable) {
        r.result.candidate = r.candidate;
        r.result.outcome = Outcome::rejected;
        r.result.reason = why;
      }
      rows.push_back(std::move(r));
    }
    if (decision.variant) {
      auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) {
        return r.candidate.variant == decision.variant && r.candidate.config == decision.config;
      });
      if (it != rows.end()) {
        it->dispatched = true;
      } else if (all || std::find(chosen.begin(), chosen.end(), decision.variant) != chosen.end()) {
        Row r;
        r.candidate = {decision.variant, decision.config, false};
        r.label = decision.raced ? "op(), raced" : decision.from == Decision::From::database ? "tuned" : "op()";
        r.dispatched = true;
        rows.push_back(std::move(r));
      }
    }
    if (rows.empty()) throw Error("no variant of '" + o->op + "' runs on " + dev.to_string());

    // Measure.
    ProgressBar bar("bench " + o->op + " " + p.key());
    EvaluatorOptions eo;
    eo.seed = o->input_seed;
    eo.warm = o->warm;
    // No per-call cap in the evaluator: each visit below gets its share of --max-seconds-per-row
    // (the evaluator's cap replaced the visit's own, and min_runs = runs made it a no-op, so
    // --runs 1000000 ran for hours).
    eo.max_seconds_per_candidate = 0.0;
    // As the tuner does (oracle.hpp): a large problem is checked against the vendor variant, itself
    // checked on sampled elements against the f64 host reference; --no-oracle checks every
    // element against the host reference instead (minutes at gemm 8192^3).
    eo.use_oracle = !o->no_oracle;
    eo.oracle = choose_oracle(rt->registry(), p, info, eo);
    std::unique_ptr<ProblemEvaluator> ev;
    TimingOptions t;
    t.runs = o->runs;
    t.warmup = o->warmup;
    t.warm = o->warm;
    t.min_runs = o->runs;
    // Check every row first, then time the rows that passed interleaved (bench_rounds.hpp): a GPU
    // whose clock falls during a sustained run would otherwise favour whichever row ran first.
    std::size_t done = 0, failed = 0;
    std::vector<Row*> to_time;
    bool lost = false;
    for (Row& r : rows) {
      bar.update(done, rows.size() * 2, "checking " + r.candidate.to_string());
      if (r.usable) {
        if (!ev) ev = std::make_unique<ProblemEvaluator>(p, eo);
        r.result = ev->check(r.candidate);
        if (r.result.ok())
          to_time.push_back(&r);
        else
          ++failed;
        if (r.result.device_lost) {
          lost = true;
          break;
        }
      }
      ++done;
    }
    const std::vector<BenchVisit> visits = lost ? std::vector<BenchVisit>{} : bench_visits(to_time.size(), o->runs, o->warmup);
    std::vector<std::vector<double>> samples(to_time.size());
    std::vector<bool> dropped(to_time.size(), false);
    std::vector<int> visits_of_row(to_time.size(), 0);
    for (const BenchVisit& v : visits) ++visits_of_row[v.row];
    for (std::size_t i = 0; i < visits.size(); ++i) {
      const BenchVisit& v = visits[i];
      Row& r = *to_time[v.row];
      if (dropped[v.row]) continue;
      bar.update(rows.size() + (i * rows.size()) / visits.size(), rows.size() * 2, r.candidate.to_string());
      TimingOptions tv = t;
      tv.runs = v.runs;
      tv.min_runs = std::min(v.runs, kBenchMinRunsPerRound);
      tv.warmup = v.warmup;
      tv.max_seconds = o->max_seconds_per_row / visits_of_row[v.row];
      CandidateResult timed = ev->time(r.candidate, tv);
      if (!timed.ok()) {
        timed.error = r.result.error;
        timed.tolerance = r.result.tolerance;
        r.result = timed;
        dropped[v.row] = true;
        ++failed;
        if (timed.device_lost) break;
        continue;
      }
      samples[v.row].insert(samples[v.row].end(), timed.timing.samples_us.begin(), timed.timing.samples_us.end());
    }
    for (std::size_t j = 0; j < to_time.size(); ++j) {
      if (dropped[j] || lost) continue;
      to_time[j]->result.timing = summarise(samples[j]);
    }
    bar.update(rows.size() * 2, rows.size() * 2, "");
    bar.finish();

    // Baseline.
    const Row* base = nullptr;
    std::string base_note;
    for (const Row& r : rows) {
      if (!r.result.ok() || !r.usable) continue;
      if (vs_vendor) {
        if (r.candidate.variant->desc().vendor && (!base || r.result.timing.median_us < base->result.timing.median_us)) base = &r;
      } else if (vs_variant) {
        if (r.candidate.variant == vs_variant && r.label == "default") base = &r;
      } else if (r.dispatched) {
        base = &r;
      }
    }
    if (vs_vendor && !base)
      base_note = "no vendor variant of '" + o->op + "' ran on this problem (none registered for " + dev.to_string() +
                  ", or none supports it): no baseline";
    else if (!base)
      base_note = "the baseline did not run successfully: no ratios";
    else
      base_note = "baseline: " + base->candidate.to_string() +
                  (vs_vendor ? " (fastest vendor variant)" : vs_variant ? "" : " (op()'s choice)");

    const std::string unit = throughput_unit(schema);
    if (o->csv && o->json) throw UsageError("give --json or --csv, not both");
    if (o->csv) {
      std::cout << csv_row({"op", "problem", "device", "variant", "config", "dispatched", "vendor", "outcome", "median_us",
                            "mad_us", "samples", "throughput", "throughput_unit", "ratio"});
      for (const Row& r : rows) {
        const bool timed = r.result.ok() && r.usable;
        const double median = r.result.timing.median_us;
        std::cout << csv_row(
            {o->op, p.key(), dev.to_string(), r.candidate.variant->name(), r.candidate.config.to_string(),
             r.dispatched ? "1" : "0", r.candidate.variant->desc().vendor ? "1" : "0",
             r.usable ? outcome_name(r.result.outcome) : "unsupported", timed ? csv_number(median) : "",
             timed ? csv_number(r.result.timing.mad_us) : "", timed ? std::to_string(r.result.timing.samples) : "",
             timed ? csv_number(throughput(schema, p, median)) : "", timed ? unit : "",
             timed && base ? csv_number(base->result.timing.median_us / median) : ""});
      }
    } else if (o->json) {
      Json arr = Json::array();
      for (const Row& r : rows) {
        Json j = Json::object();
        j.set("variant", r.candidate.variant->name())
            .set("config", config_json(r.candidate.config))
            .set("label", r.label)
            .set("dispatched", r.dispatched)
            .set("vendor", r.candidate.variant->desc().vendor)
            .set("outcome", outcome_name(r.result.outcome));
        if (!r.result.reason.empty()) j.set("reason", r.result.reason);
        if (r.result.ok() && r.usable) {
          const double tp = throughput(schema, p, r.result.timing.median_us);
          j.set("median_us", r.result.timing.median_us)
              .set("mad_us", r.result.timing.mad_us)
              .set("samples", r.result.timing.samples)
              .set("throughput", tp)
              .set("throughput_unit", unit)
              .set("error", r.result.error);
          if (base) j.set("ratio", base->result.timing.median_us / r.result.timing.median_us);
        }
        arr.push(std::move(j));
      }
      Json out = json_document();
      out.set("op", o->op).set("problem", p.key()).set("device", dev.to_string()).set("device_key", info.fingerprint());
      out.set("rows", std::move(arr)).set("baseline_note", base_note);
      out.set("runs", o->runs).set("max_seconds_per_row", o->max_seconds_per_row);
      if (ev) out.set("expected", ev->expected_source());
      if (base) out.set("baseline", base->candidate.to_string());
      std::cout << out.dump() << "\n";
    } else {
      std::cout << o->op << " " << p.key() << " on " << dev.to_string() << " (" << info.fingerprint() << ")\n";
      Table tab({"variant", "config", "", "median", "MAD", "throughput", "vs baseline", "note"},
                {Align::left, Align::left, Align::left, Align::right, Align::right, Align::right, Align::right, Align::left});
      for (const Row& r : rows) {
        std::string mark = r.dispatched ? "*" : "";
        if (r.label == "tuned") mark += " tuned";
        if (r.result.ok() && r.usable) {
          const double tp = throughput(schema, p, r.result.timing.median_us);
          const std::string ratio = base ? fmt_fixed(base->result.timing.median_us / r.result.timing.median_us, 2) + "x" : "-";
          tab.add({r.candidate.variant->name(), r.candidate.config.to_string(), mark, fmt_us(r.result.timing.median_us),
                   fmt_us(r.result.timing.mad_us), fmt_throughput(tp, unit), ratio,
                   r.candidate.variant->desc().vendor ? "vendor" : ""});
        } else {
          const std::string status = r.usable ? std::string(outcome_name(r.result.outcome)) : "unsupported";
          tab.add({r.candidate.variant->name(), r.candidate.config.to_string(), mark, "-", "-", "-", "-",
                   status + (r.result.reason.empty() ? std::string() : ": " + r.result.reason)});
        }
      }
      tab.print(std::cout);
      std::cout << "* = what op() runs for this problem (" << decision_source_name(decision.from) << "); " << base_note
                << "; ratio = baseline time / variant time\n";
      if (ev) std::cout << "outputs checked against: " << ev->expected_source() << "\n";
      int capped = 0;
      for (const Row& r : rows) capped += r.result.ok() && r.usable && r.result.timing.samples < o->runs;
      if (capped > 0)
        std::cout << "note: " << capped << " row(s) took fewer than --runs " << o->runs
                  << " runs: --max-seconds-per-row " << fmt(o->max_seconds_per_row, 6) << " stopped them\n";
    }
    return failed ? kExitFailed : kExitOk;
  };
  return c;
}

}  // namespace kiln::cli

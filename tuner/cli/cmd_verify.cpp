// kiln verify [op]: every variant, and every valid config (a sample of large spaces, always with
// the default), against the host reference on random inputs, at odd and edge shapes, with dense
// and pitched tensors, on the host and on each CUDA device.  Exit 1 if anything fails.
#include <iostream>
#include <map>
#include <memory>

#include <kiln/tuner/evaluator.hpp>
#include <kiln/tuner/problem_data.hpp>
#include <kiln/tuner/search_space.hpp>

#include <CLI/CLI.hpp>
#include <kiln/kiln.hpp>

#include "common.hpp"
#include "json.hpp"
#include "json_document.hpp"
#include "op_shapes.hpp"
#include "progress.hpp"
#include "range_check.hpp"
#include "table.hpp"

namespace kiln::cli {
namespace {

struct VerifyCli {
  std::string op, device;
  std::vector<std::string> shapes;
  std::size_t max_configs = 64;
  std::uint64_t seed = 7;
  bool json = false, verbose = false, force = false;
};

struct Job {  // one problem on one device, dense or pitched
  Problem problem;
  bool pitched = false;
  SearchSpace space;
};

struct Tally {
  std::string variant, device;
  std::size_t checks = 0, passed = 0, failed = 0, unsupported = 0;
};

struct Failure {
  std::string what, reason;
};

const char* kUsage =
    "usage: kiln verify [op] [--device D] [--shape SHAPE]... [--max-configs N] [--seed N] [--force] [--json]";

bool has_rank2(const OpSchema& s, const Problem& p) {
  std::vector<TensorSpec> specs;
  if (!s.tensor_specs || !s.tensor_specs(p, specs).ok()) return false;
  for (const auto& t : specs)
    if (t.shape.rank == 2 && t.shape.rows() > 1) return true;
  return false;
}

}  // namespace

Command make_verify_command(CLI::App& parent) {
  auto o = std::make_shared<VerifyCli>();
  Command c;
  c.app = parent.add_subcommand("verify", "Check every variant and config against the host reference");
  auto* app = c.app;
  app->add_option("op", o->op, "Only this op")->check(not_empty("an op name (kiln list lists them)", false));
  app->add_option("--device", o->device, "Only this device: host, cuda or cuda:N (default: all)")
      ->check(not_empty("host, cuda or cuda:N"));
  app->add_option("--shape", o->shapes, "Shapes to check (default: a per-op list of odd and edge sizes)")
      ->check(not_empty("a shape such as 4096x4096", false));
  app->add_option("--max-configs", o->max_configs, "Configs per variant and shape, sampled (default 64)")
      ->transform(count_in_range(1, 1e9));
  app->add_flag("--force", o->force, "Try a shape larger than the device or host memory");
  app->add_option("--seed", o->seed, "Seed of the inputs and of the config sample")->check(seed_value());
  app->add_flag("-v,--verbose", o->verbose, "Print every check");
  app->add_flag("--json", o->json, "Print JSON");
  c.usage = kUsage;
  c.run = [o] {
    // Shapes are per op (gemm mxnxk, topk rowsxnxk): without an op, `--shape 64x64` was tried on
    // every op and failed on the first that reads it otherwise ("dot: dim out16 is 0 or 1, got 64").
    if (o->op.empty() && !o->shapes.empty())
      throw UsageError("--shape goes with an op: each op reads shapes its own way (kiln verify OP --shape SHAPE)");
    auto rt = open_runtime("off", false);
    std::vector<std::string> ops = rt->registry().op_names();
    if (!o->op.empty()) {
      rt->registry().op(o->op);
      ops = {o->op};
    }
    std::vector<Device> devices;
    if (!o->device.empty()) {
      devices.push_back(parse_device(o->device));
    } else {
      for (const DeviceInfo& d : enumerate_devices()) devices.push_back(d.device);
    }
    const std::atomic<bool>* cancel = install_interrupt_flag();
    (void)cancel;

    // Plan every check first, so the progress bar knows the total.
    std::vector<Job> jobs;
    std::vector<std::string> notes;
    std::map<std::string, Tally> tallies;  // key: variant + device
    std::size_t total = 0;
    // A variant for a kind of device that is not here (a CUDA variant on a CPU-only machine) is
    // not checked: say so, rather than pass over it in silence.
    for (const std::string& name : ops)
      for (const Variant* v : rt->registry().variants(name)) {
        bool here = false;
        for (const Device& d : devices) here |= d.kind == v->device_kind();
        if (!here)
          notes.push_back(v->name() + ": skipped, not checked (no " + device_kind_name(v->device_kind()) + " device " +
                          (o->device.empty() ? "on this machine" : "selected with --device") + ")");
      }
    for (const std::string& name : ops) {
      const OpSchema& s = rt->registry().op(name);
      const auto shapes = o->shapes.empty() ? verify_shapes(s) : o->shapes;
      const std::vector<DType> dtypes = s.dtypes.empty() ? std::vector<DType>{DType::f32} : s.dtypes;
      for (const Device& dev : devices) {
        const DeviceInfo& info = device_info(dev);
        bool any_variant = false;
        for (const Variant* v : rt->registry().variants(name)) any_variant |= v->device_kind() == dev.kind;
        if (!any_variant) continue;
        for (DType t : dtypes)
          for (const std::string& shape : shapes) {
            Problem p;
            try {
              p = s.problem_from_shape(t, shape, dev);
              check_problem_fits(p, o->force);
            } catch (const UsageError& e) {
              if (!o->shapes.empty()) throw;
              notes.push_back(name + " " + std::string(dtype_name(t)) + " '" + shape + "': skipped (" + e.what() + ")");
              continue;
            } catch (const ArgumentError& e) {
              if (!o->shapes.empty()) throw;
              notes.push_back(name + " " + std::string(dtype_name(t)) + " '" + shape + "': skipped (" + e.what() + ")");
              continue;
            }
            for (bool pitched : {false, true}) {
              if (pitched && !has_rank2(s, p)) continue;
              SpaceOptions so;
              so.max_configs_per_variant = o->max_configs;
              so.seed = o->seed;
              Problem laid_out = p;  // the alignment of the buffers this job will allocate
              laid_out.align_bytes = layout_alignment(s, p, pitched);
              Job job{laid_out, pitched, build_search_space(rt->registry(), laid_out, info, so)};
              for (const Rejection& r : job.space.rejected) {
                if (r.kind != Rejection::Kind::unsupported) continue;  // wrong device or outside the space
                auto& tally = tallies[r.example.variant->name() + "|" + dev.to_string()];
                tally.variant = r.example.variant->name();
                tally.device = dev.to_string();
                tally.unsupported += r.configs;
              }
              total += job.space.candidates.size();
              jobs.push_back(std::move(job));
            }
          }
      }
    }

    ProgressBar bar("verify");
    std::vector<Failure> failures;
    std::size_t done = 0, checks = 0, unprepared = 0;  // unprepared: inputs or reference failed
    bool lost = false;
    Json checks_json = Json::array();
    for (Job& job : jobs) {
      if (lost || interrupted()) break;
      if (job.space.candidates.empty()) continue;
      const std::string where = job.problem.schema->name + " " + job.problem.key() + (job.pitched ? " pitched" : "") +
                                " on " + job.problem.device.to_string();
      std::unique_ptr<ProblemEvaluator> ev;
      try {
        EvaluatorOptions eo;
        eo.seed = o->seed;
        eo.pitched = job.pitched;
        ev = std::make_unique<ProblemEvaluator>(job.problem, eo);
      } catch (const std::exception& e) {
        notes.push_back(where + ": could not prepare inputs and reference: " + e.what());
        for (const Candidate& cand : job.space.candidates) {
          failures.push_back({cand.to_string() + " " + where, std::string("not checked: ") + e.what()});
          ++tallies[cand.variant->name() + "|" + job.problem.device.to_string()].failed;
        }
        done += job.space.candidates.size();
        unprepared += job.space.candidates.size();
        continue;
      }
      for (const Candidate& cand : job.space.candidates) {
        if (interrupted()) break;
        bar.update(done, total, cand.to_string() + " " + job.problem.key());
        const CandidateResult r = ev->check(cand);
        ++done;
        ++checks;
        auto& tally = tallies[cand.variant->name() + "|" + job.problem.device.to_string()];
        tally.variant = cand.variant->name();
        tally.device = job.problem.device.to_string();
        ++tally.checks;
        if (r.ok()) {
          ++tally.passed;
        } else {
          ++tally.failed;
          failures.push_back({cand.to_string() + " " + where, std::string(outcome_name(r.outcome)) + ": " + r.reason});
          bar.message("FAIL " + failures.back().what + ": " + failures.back().reason);
        }
        if (o->verbose && !o->json)
          bar.message(std::string(r.ok() ? "ok   " : "FAIL ") + cand.to_string() + " " + where + " (error " + fmt(r.error) + ")");
        if (o->json)
          checks_json.push(Json::object()
                               .set("variant", cand.variant->name())
                               .set("config", config_json(cand.config))
                               .set("op", job.problem.schema->name)
                               .set("problem", job.problem.key())
                               .set("device", job.problem.device.to_string())
                               .set("pitched", job.pitched)
                               .set("outcome", outcome_name(r.outcome))
                               .set("error", r.error)
                               .set("tolerance", r.tolerance)
                               .set("reason", r.reason));
        if (r.device_lost) {
          lost = true;
          break;
        }
      }
    }
    bar.finish();
    // Checks that never ran because the run stopped early (a lost device, Ctrl-C); those whose
    // inputs could not be prepared are failures already, with the reason.
    const std::size_t not_run = total - checks - unprepared;

    if (o->json) {
      Json summary = Json::array();
      for (const auto& [key, t] : tallies)
        summary.push(Json::object()
                         .set("variant", t.variant)
                         .set("device", t.device)
                         .set("checks", t.checks)
                         .set("passed", t.passed)
                         .set("failed", t.failed)
                         .set("unsupported", t.unsupported));
      Json n = Json::array();
      for (const auto& s : notes) n.push(s);
      std::cout << json_document()
                       .set("checks", checks)
                       .set("failed", failures.size())
                       .set("not_run", not_run)
                       .set("device_lost", lost)
                       .set("variants", std::move(summary))
                       .set("notes", std::move(n))
                       .set("results", std::move(checks_json))
                       .dump()
                << "\n";
    } else {
      Table t({"variant", "device", "checks", "passed", "failed", "unsupported"},
              {Align::left, Align::left, Align::right, Align::right, Align::right, Align::right});
      for (const auto& [key, x] : tallies)
        t.add({x.variant, x.device, std::to_string(x.checks), std::to_string(x.passed), std::to_string(x.failed),
               std::to_string(x.unsupported)});
      if (t.empty())
        std::cout << "nothing to verify (no variants registered" << (o->op.empty() ? "" : " for " + o->op) << ")\n";
      else
        t.print(std::cout);
      for (const auto& n : notes) std::cout << "note: " << n << "\n";
      if (!failures.empty()) {
        std::cout << "failures:\n";
        for (const Failure& f : failures) std::cout << "  " << f.what << ": " << f.reason << "\n";
      }
      std::cout << checks << " checks, " << failures.size() << " failed";
      if (not_run) std::cout << ", " << not_run << " not run" << (lost ? " (a fault left the device unusable)" : " (interrupted)");
      std::cout << "  (unsupported = config/shape combinations the variant declines, with a reason)\n";
    }
    if (interrupted()) return kExitInterrupted;
    if (checks == 0) {
      std::cerr << "kiln verify: nothing was checked (no variants loaded" << (o->op.empty() ? "" : " for " + o->op)
                << "?): failing rather than reporting success\n";
      return kExitFailed;
    }
    return failures.empty() && !lost && not_run == 0 ? kExitOk : kExitFailed;
  };
  return c;
}

}  // namespace kiln::cli

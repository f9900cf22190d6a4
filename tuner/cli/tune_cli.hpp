// What `kiln tune` was asked, shared by the command (cmd_tune.cpp), its worker pool
// (tune_pool.cpp) and the worker processes (tune_worker.cpp), which parse the same command line.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <kiln/tuner/plan.hpp>
#include <kiln/tuner/tuner.hpp>

#include "json.hpp"

namespace CLI {
class Option;
}

namespace kiln::cli {

struct TuneCli {
  std::string op, shape, dtype, device, strategy = "exhaustive", plan, from;
  std::size_t budget_evals = 0;
  double budget_seconds = 0.0;
  std::uint64_t seed = 1, input_seed = 42;
  int runs = 20, warmup = 3, finalists = 4;
  double max_seconds_per_candidate = 1.0;
  std::vector<std::string> variants;
  bool warm = false, force = false, no_store = false, json = false, csv = false, verbose = false,
       no_background = false;
  bool no_oracle = false;  // --no-oracle: always the host reference
  // Many devices and hosts (tune_pool.cpp).
  std::string devices;          // --devices all | cuda:0,cuda:2 | host
  std::string shard;            // --shard i/N
  int simulate_devices = 0;     // --simulate-devices N (test-only): N host workers
  std::string worker_device;    // --worker DEVICE (internal): this process is a pool worker
  CLI::Option* strategy_opt = nullptr;
  CLI::Option* evals_opt = nullptr;
  CLI::Option* seconds_opt = nullptr;
};

// What happened to one problem of a run: tuned, skipped, failed or interrupted.
struct ProblemOutcome {
  std::string op, problem, device, status, detail;
  Json json;                 // its element of the --json output's "problems"
  bool has_report = false;   // a tune report was printed for it (else a failure goes to stderr)
};

struct OutcomeCounts {
  std::size_t tuned = 0, skipped = 0, failed = 0, not_reached = 0;
};
OutcomeCounts count_outcomes(const std::vector<ProblemOutcome>& outcomes, std::size_t expected);
// "plan P: 3 tuned, 1 skipped, 0 failed" and the table of every problem (failures without a
// report also on stderr).
void print_outcomes(const std::string& plan_source, const std::vector<ProblemOutcome>& outcomes,
                    const OutcomeCounts& counts);
Json outcomes_json(const std::vector<ProblemOutcome>& outcomes);

// The options one problem is tuned with: its own fields win over the command line, which wins
// over the plan's defaults.
TuneOptions options_for(const TuneCli& cli, const Plan* plan, const PlanItem* item, const std::atomic<bool>* cancel);

// The plan of --plan or --from (validating each problem's strategy name).
Plan load_tune_plan(const TuneCli& cli);

// One problem's line in the JSON output: the report's JSON (when there is one) with its status.
Json outcome_json(const std::string& op, const std::string& problem, const std::string& device,
                  const std::string& status, const std::string& detail, const TuneReport* report);

// The one-line summary of a finished report: "gemm_tiled [BM=64] 12.3 us", or the error.
std::string outcome_detail(const TuneReport& report);
// tuned, failed or interrupted.
std::string outcome_status(const TuneReport& report);

}  // namespace kiln::cli

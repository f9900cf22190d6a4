// The worker processes of `kiln tune --devices`: one per device, each the kiln binary itself
// (fork + exec of /proc/self/exe with the parent's command line and `--worker DEVICE`), so a
// candidate that crashes or poisons its CUDA context takes down one worker, not the run.
//
// The parent hands out tasks from a TuneQueue one at a time to whichever worker of the task's
// fingerprint is free.  A worker that dies (or reports that its device is unusable) while tuning
// is reported; its task goes back to the queue for one more attempt on a fresh worker, then is
// marked failed.  A device whose worker dies three times in a row without finishing anything is
// given up.  Ctrl-C or SIGTERM: the parent sends each worker one SIGINT (workers run in their own
// process group, so a terminal's Ctrl-C reaches only the parent), waits for their reports and
// exits; a second Ctrl-C ends the parent, and the kernel ends the workers with it
// (PR_SET_PDEATHSIG).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <kiln/device.hpp>
#include <kiln/tuner/tune_queue.hpp>

namespace kiln::cli {

struct PoolDevice {
  Device device;
  std::string name;         // shown in the display and the results: "cuda:1", "host#2"
  std::string fingerprint;  // the database key its results are stored under
};

// What a worker reported for one task (or what the parent concluded when it died).
struct PoolResult {
  std::size_t task = 0;
  std::string device;       // the PoolDevice name
  std::string status;       // tuned, failed, interrupted
  std::string detail;
  std::string report_text;  // print_tune_report's block, from the worker
  std::string report_json;  // its JSON line (empty when the worker died)
};

struct PoolWorkerStats {
  std::string device;
  std::size_t tuned = 0, failed = 0, deaths = 0, started = 0;
  double busy_seconds = 0.0;
  bool given_up = false;
};

struct PoolRun {
  std::vector<PoolResult> results;  // in the order they finished
  std::vector<PoolWorkerStats> workers;
  bool interrupted = false;
  double wall_seconds = 0.0;
};

struct PoolOptions {
  std::vector<std::string> worker_args;  // the command line each worker runs, without --worker
  bool print_reports = true;             // each finished report on stdout as it arrives
  bool verbose = false;                  // worker process ids on stderr
  // Names a task in messages and the display ("gemm f32|m=4096|n=4096|k=4096").
  std::vector<std::string> task_labels;
};

// Runs every task of `queue` on `devices`; returns when each task is finished or failed, or the
// run was interrupted.
PoolRun run_worker_pool(const std::vector<PoolDevice>& devices, TuneQueue& queue, const PoolOptions& options);

// This process's command line (from /proc/self/cmdline), argv[0] first.
std::vector<std::string> own_command_line();

}  // namespace kiln::cli

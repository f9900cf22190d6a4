// `kiln tune --plan P --devices all|cuda:0,cuda:2|host` (and the test-only
// `--simulate-devices N`): the plan's problems (this host's shard of them) tuned on several
// devices at once by worker processes (worker_pool.hpp), once per device fingerprint, with the
// results in the one user database.  Problems already tuned for a fingerprint are skipped, so
// running the same command again resumes.
#pragma once
#include <cstddef>
#include <vector>

#include <kiln/runtime.hpp>
#include <kiln/tuner/shard.hpp>

#include "tune_cli.hpp"
#include "worker_pool.hpp"

namespace kiln::cli {

// The devices of --devices (or --simulate-devices); UsageError for a bad or repeated device.
std::vector<PoolDevice> pool_devices(const TuneCli& cli);

// Tunes plan.problems[i] for every i of `selected`; prints the results and returns the exit code.
int run_tune_pool(const TuneCli& cli, Runtime& rt, const Plan& plan, const std::vector<std::size_t>& selected,
                  const Shard& shard);

}  // namespace kiln::cli

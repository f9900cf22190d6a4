// The worker side of `kiln tune --devices` (see worker_pool.hpp): a `kiln tune` process started
// with the parent's command line plus `--worker DEVICE`.  It opens its own runtime, loads the same
// plan, and tunes the plan problems the parent sends on fd 3 on DEVICE, one at a time, storing
// each winner in the user database itself (TuningDb::put: locked and merged, so the workers'
// writes never lose each other's) and reporting on fd 4.
#pragma once
#include "tune_cli.hpp"

namespace kiln::cli {

// Exit codes: 0 when the parent had no more work, 130 when interrupted, 3 after a sticky CUDA
// fault (the context is unusable; the parent starts a fresh worker).
inline constexpr int kExitDeviceLost = 3;

int run_tune_worker(const TuneCli& cli);

}  // namespace kiln::cli

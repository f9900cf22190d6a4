// The `kiln bench` modes beyond one problem's variant table: --overhead (host cost of a memo-hit
// op() over the bound launch) and --regret (op()'s choice against every candidate over a list
// of problems).  Implemented in bench_overhead.cpp and bench_regret.cpp.
#pragma once
#include <cstdint>
#include <string>

namespace kiln::cli {

struct OverheadOptions {
  std::string op, shape, dtype, device;  // default: add 1x1024 on the default device
  int iterations = 20000;                // calls of each kind
  int batch = 200;                       // calls per timed batch (below the launch-queue depth)
  bool json = false;
};
int run_overhead_bench(const OverheadOptions& options);

struct RegretOptions {
  std::string problems;  // a plan (YAML) or a problem list (`kiln tune --from` format)
  std::string device;    // for items that name none; default: CUDA 0 if present, else host
  int runs = 20, warmup = 3;
  bool warm = false, json = false;
  std::uint64_t input_seed = 42;
  double time_limit_s = 0;  // > 0: start no problem (after the first) past this many seconds; the rest are reported unmeasured
};
int run_regret_bench(const RegretOptions& options);

}  // namespace kiln::cli
